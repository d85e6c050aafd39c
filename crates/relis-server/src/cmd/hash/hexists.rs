//! HEXISTS key field — 1 if the hash at `key` has `field`, else 0.
//! <https://redis.io/commands/hexists/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// HEXISTS's declaration.
pub const SPEC: Spec = Spec {
    name: "hexists",
    arity: 3,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["read", "hash", "fast"]),
    keys: (1, 1, 1),
    group: "hash",
    since: "2.0.0",
    summary: "Determine if a hash field exists",
    complexity: "O(1)",
    parse: HExists::parse,
    key_flags: Spec::key_flags(&["RO"]),
    ..Spec::BASE
};

/// HEXISTS key field.
#[derive(Debug, PartialEq, Eq)]
pub struct HExists {
    key: Bytes,
    field: Bytes,
}

impl HExists {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let (key, field) = (args.next()?, args.next()?);
        args.finish()?;
        Parsed::read(HExists { key, field })
    }
}

impl ReadCmd for HExists {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let found = crate::cmd::counted(cx, &self.key, r.hexists(cx.db, &self.key, &self.field))?;
        Ok(Frame::Integer(i64::from(found.unwrap_or(false))))
    }
}
