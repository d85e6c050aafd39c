//! SMEMBERS key — every member of the set at `key` (a RESP3 set; empty for a missing key).
//! <https://redis.io/commands/smembers/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// SMEMBERS's declaration.
pub const SPEC: Spec = Spec {
    name: "smembers",
    arity: 2,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "set", "slow"]),
    keys: (1, 1, 1),
    group: "set",
    since: "1.0.0",
    summary: "Get all the members in a set",
    complexity: "O(N) where N is the set cardinality.",
    parse: SMembers::parse,
    tips: &["nondeterministic_output_order"],
    ..Spec::BASE
};

/// SMEMBERS key.
#[derive(Debug, PartialEq, Eq)]
pub struct SMembers {
    key: Bytes,
}

impl SMembers {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        args.finish()?;
        Parsed::read(SMembers { key })
    }
}

impl ReadCmd for SMembers {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let members =
            crate::cmd::counted(cx, &self.key, r.smembers(cx.db, &self.key))?.unwrap_or_default();
        Ok(super::set_reply(members))
    }
}
