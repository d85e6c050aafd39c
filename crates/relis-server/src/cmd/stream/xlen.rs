//! XLEN key — the number of entries in the stream (0 when there is none). O(1): the length is
//! kept in the key row. <https://redis.io/commands/xlen/>

use crate::args::Args;
use crate::cmd::{counted, Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// XLEN's declaration.
pub const SPEC: Spec = Spec {
    name: "xlen",
    arity: 2,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["read", "stream", "fast"]),
    keys: (1, 1, 1),
    group: "stream",
    since: "5.0.0",
    summary: "Return the number of entries in a stream",
    complexity: "O(1)",
    parse: XLen::parse,
    key_flags: Spec::key_flags(&["RO"]),
    ..Spec::BASE
};

/// XLEN key.
#[derive(Debug, PartialEq, Eq)]
pub struct XLen {
    key: Bytes,
}

impl XLen {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        args.finish()?;
        Parsed::read(XLen { key })
    }
}

impl ReadCmd for XLen {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let n = counted(cx, &self.key, r.xlen(cx.db, &self.key))?;
        Ok(Frame::Integer(n.unwrap_or(0) as i64))
    }

    fn inline(&self) -> bool {
        true
    }
}
