//! HLEN key — the number of fields in the hash at `key` (0 when there is none), O(1): the key
//! row keeps the count. <https://redis.io/commands/hlen/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// HLEN's declaration.
pub const SPEC: Spec = Spec {
    name: "hlen",
    arity: 2,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["read", "hash", "fast"]),
    keys: (1, 1, 1),
    group: "hash",
    since: "2.0.0",
    summary: "Get the number of fields in a hash",
    complexity: "O(1)",
    parse: HLen::parse,
    key_flags: Spec::key_flags(&["RO"]),
    ..Spec::BASE
};

/// HLEN key.
#[derive(Debug, PartialEq, Eq)]
pub struct HLen {
    key: Bytes,
}

impl HLen {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        args.finish()?;
        Parsed::read(HLen { key })
    }
}

impl ReadCmd for HLen {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let n = crate::cmd::counted(cx, &self.key, r.hlen(cx.db, &self.key))?;
        Ok(Frame::Integer(n.unwrap_or(0)))
    }
}
