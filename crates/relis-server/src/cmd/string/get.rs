//! GET key — the string value of `key`, or nil. <https://redis.io/commands/get/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// GET's declaration.
pub const SPEC: Spec = Spec {
    name: "get",
    arity: 2,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["read", "string", "fast"]),
    keys: (1, 1, 1),
    group: "string",
    since: "1.0.0",
    summary: "Get the value of a key",
    complexity: "O(1)",
    parse: Get::parse,
    ..Spec::BASE
};

/// GET key.
#[derive(Debug, PartialEq, Eq)]
pub struct Get {
    key: Bytes,
}

impl Get {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        args.finish()?;
        Parsed::read(Get { key })
    }
}

impl ReadCmd for Get {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let v = crate::cmd::counted(cx, &self.key, r.get(cx.db, &self.key))?;
        Ok(v.map_or(Frame::Null, Frame::Bulk))
    }
}
