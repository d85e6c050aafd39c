//! HSETNX key field value — sets `field` only if the hash at `key` does not have it (creating
//! the hash), replying 1 if it did, 0 if not. <https://redis.io/commands/hsetnx/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// HSETNX's declaration.
pub const SPEC: Spec = Spec {
    name: "hsetnx",
    arity: 4,
    flags: Spec::flags(&["write", "denyoom", "fast"]),
    acl: Spec::acl(&["write", "hash", "fast"]),
    keys: (1, 1, 1),
    group: "hash",
    since: "2.0.0",
    summary: "Set the value of a hash field, only if the field does not exist",
    complexity: "O(1)",
    parse: HSetNx::parse,
    key_flags: Spec::key_flags(&["RW", "insert"]),
    ..Spec::BASE
};

/// HSETNX key field value.
#[derive(Debug, PartialEq, Eq)]
pub struct HSetNx {
    key: Bytes,
    field: Bytes,
    value: Bytes,
}

impl HSetNx {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let (key, field, value) = (args.next()?, args.next()?, args.next()?);
        args.finish()?;
        Parsed::write(HSetNx { key, field, value })
    }
}

impl WriteCmd for HSetNx {
    // The type check comes before the first write.
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }

    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let set = w.hsetnx(cx.db, &self.key, &self.field, &self.value)?;
        if set {
            w.notify(relis::events::class::HASH, "hset", cx.db, &self.key);
        }
        Ok(Frame::Integer(i64::from(set)))
    }
}
