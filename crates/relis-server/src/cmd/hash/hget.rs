//! HGET key field — the value of `field` in the hash at `key`, or nil.
//! <https://redis.io/commands/hget/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// HGET's declaration.
pub const SPEC: Spec = Spec {
    name: "hget",
    arity: 3,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["read", "hash", "fast"]),
    keys: (1, 1, 1),
    group: "hash",
    since: "2.0.0",
    summary: "Get the value of a hash field",
    complexity: "O(1)",
    parse: HGet::parse,
    ..Spec::BASE
};

/// HGET key field.
#[derive(Debug, PartialEq, Eq)]
pub struct HGet {
    key: Bytes,
    field: Bytes,
}

impl HGet {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let (key, field) = (args.next()?, args.next()?);
        args.finish()?;
        Parsed::read(HGet { key, field })
    }
}

impl ReadCmd for HGet {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let v = crate::cmd::counted(cx, &self.key, r.hget(cx.db, &self.key, &self.field))?;
        Ok(v.flatten().map_or(Frame::Null, Frame::Bulk))
    }
}
