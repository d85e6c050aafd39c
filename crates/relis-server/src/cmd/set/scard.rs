//! SCARD key — the number of members of the set at `key` (0 for a missing key), O(1) from the
//! key row. <https://redis.io/commands/scard/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// SCARD's declaration.
pub const SPEC: Spec = Spec {
    name: "scard",
    arity: 2,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["read", "set", "fast"]),
    keys: (1, 1, 1),
    group: "set",
    since: "1.0.0",
    summary: "Get the number of members in a set",
    complexity: "O(1)",
    parse: SCard::parse,
    key_flags: Spec::key_flags(&["RO"]),
    ..Spec::BASE
};

/// SCARD key.
#[derive(Debug, PartialEq, Eq)]
pub struct SCard {
    key: Bytes,
}

impl SCard {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        args.finish()?;
        Parsed::read(SCard { key })
    }
}

impl ReadCmd for SCard {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let n = crate::cmd::counted(cx, &self.key, r.scard(cx.db, &self.key))?;
        Ok(Frame::Integer(n.unwrap_or(0)))
    }
}
