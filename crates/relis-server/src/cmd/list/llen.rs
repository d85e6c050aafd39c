//! LLEN key — the length of the list at `key` (0 when there is none). O(1): the count is kept in
//! the key row. <https://redis.io/commands/llen/>

use crate::args::Args;
use crate::cmd::counted;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// LLEN's declaration.
pub const SPEC: Spec = Spec {
    name: "llen",
    arity: 2,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["read", "list", "fast"]),
    keys: (1, 1, 1),
    group: "list",
    since: "1.0.0",
    summary: "Get the length of a list",
    complexity: "O(1)",
    parse: LLen::parse,
    key_flags: Spec::key_flags(&["RO"]),
    ..Spec::BASE
};

/// LLEN key.
#[derive(Debug, PartialEq, Eq)]
pub struct LLen {
    key: Bytes,
}

impl LLen {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        args.finish()?;
        Parsed::read(LLen { key })
    }
}

impl ReadCmd for LLen {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let n = counted(cx, &self.key, r.llen(cx.db, &self.key))?;
        Ok(Frame::Integer(n.unwrap_or(0)))
    }
}
