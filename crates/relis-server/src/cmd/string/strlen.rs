//! STRLEN key — the length of the string at `key`, 0 when there is none.
//! <https://redis.io/commands/strlen/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// STRLEN's declaration.
pub const SPEC: Spec = Spec {
    name: "strlen",
    arity: 2,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["read", "string", "fast"]),
    keys: (1, 1, 1),
    group: "string",
    since: "2.2.0",
    summary: "Get the length of the value stored in a key",
    complexity: "O(1)",
    parse: StrLen::parse,
    key_flags: Spec::key_flags(&["RO"]),
    ..Spec::BASE
};

/// STRLEN key.
#[derive(Debug, PartialEq, Eq)]
pub struct StrLen {
    key: Bytes,
}

impl StrLen {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        args.finish()?;
        Parsed::read(StrLen { key })
    }
}

impl ReadCmd for StrLen {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let n = crate::cmd::counted(cx, &self.key, r.strlen(cx.db, &self.key))?;
        Ok(Frame::Integer(n.unwrap_or(0)))
    }
}
