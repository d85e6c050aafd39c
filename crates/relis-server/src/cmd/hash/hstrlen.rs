//! HSTRLEN key field — the length of `field`'s value in the hash at `key` (0 when there is no
//! such field or key). <https://redis.io/commands/hstrlen/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// HSTRLEN's declaration.
pub const SPEC: Spec = Spec {
    name: "hstrlen",
    arity: 3,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["read", "hash", "fast"]),
    keys: (1, 1, 1),
    group: "hash",
    since: "3.2.0",
    summary: "Get the length of the value of a hash field",
    complexity: "O(1)",
    parse: HStrLen::parse,
    key_flags: Spec::key_flags(&["RO"]),
    ..Spec::BASE
};

/// HSTRLEN key field.
#[derive(Debug, PartialEq, Eq)]
pub struct HStrLen {
    key: Bytes,
    field: Bytes,
}

impl HStrLen {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let (key, field) = (args.next()?, args.next()?);
        args.finish()?;
        Parsed::read(HStrLen { key, field })
    }
}

impl ReadCmd for HStrLen {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let n = crate::cmd::counted(cx, &self.key, r.hstrlen(cx.db, &self.key, &self.field))?;
        Ok(Frame::Integer(n.unwrap_or(0)))
    }
}
