//! TYPE key — the type of the value at `key` as a status reply, `none` when absent.
//! <https://redis.io/commands/type/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// TYPE's declaration.
pub const SPEC: Spec = Spec {
    name: "type",
    key_flags: Spec::key_flags(&["RO"]),
    arity: 2,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["keyspace", "read", "fast"]),
    keys: (1, 1, 1),
    group: "generic",
    since: "1.0.0",
    summary: "Determine the type stored at key",
    complexity: "O(1)",
    parse: Type::parse,
    ..Spec::BASE
};

/// TYPE key.
#[derive(Debug, PartialEq, Eq)]
pub struct Type {
    key: Bytes,
}

impl Type {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        args.finish()?;
        Parsed::read(Type { key })
    }
}

impl ReadCmd for Type {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let t = r.key_type(cx.db, &self.key)?;
        cx.hit(&self.key, t.is_some());
        let name = t.map_or("none", |t| t.name());
        Ok(Frame::Simple(Bytes::from_static(name.as_bytes())))
    }
}
