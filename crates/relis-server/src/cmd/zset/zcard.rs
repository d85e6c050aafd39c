//! ZCARD key — the number of members (0 for a missing key). <https://redis.io/commands/zcard/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// ZCARD's declaration.
pub const SPEC: Spec = Spec {
    name: "zcard",
    arity: 2,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["read", "sortedset", "fast"]),
    keys: (1, 1, 1),
    group: "sorted-set",
    since: "1.2.0",
    summary: "Get the number of members in a sorted set",
    complexity: "O(1)",
    parse: ZCard::parse,
    key_flags: Spec::key_flags(&["RO"]),
    ..Spec::BASE
};

/// ZCARD key.
#[derive(Debug, PartialEq, Eq)]
pub struct ZCard {
    key: Bytes,
}

impl ZCard {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        args.finish()?;
        Parsed::read(ZCard { key })
    }
}

impl ReadCmd for ZCard {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let n = crate::cmd::counted(cx, &self.key, r.zcard(cx.db, &self.key))?;
        Ok(Frame::Integer(n.unwrap_or(0)))
    }
}
