//! ZRANK key member / ZREVRANK key member — a member's 0-based rank from the lowest (ZRANK) or
//! highest (ZREVRANK) score, or nil. (WITHSCORE arrived in Redis 7.2.)
//! <https://redis.io/commands/zrank/>, <https://redis.io/commands/zrevrank/>
//!
//! Large sets answer from their rank blocks (see `relis/src/types/zset/`): a sum over block counts
//! and one short count, not a walk over every member before this one.

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// ZRANK's declaration.
pub const SPEC_ZRANK: Spec = Spec {
    name: "zrank",
    arity: 3,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["read", "sortedset", "fast"]),
    keys: (1, 1, 1),
    group: "sorted-set",
    since: "2.0.0",
    summary: "Determine the index of a member in a sorted set",
    complexity: "O(log(N))",
    parse: |a| ZRank::parse(a, false),
    ..Spec::BASE
};

/// ZREVRANK's declaration.
pub const SPEC_ZREVRANK: Spec = Spec {
    name: "zrevrank",
    summary:
        "Determine the index of a member in a sorted set, with scores ordered from high to low",
    parse: |a| ZRank::parse(a, true),
    ..SPEC_ZRANK
};

/// ZRANK / ZREVRANK.
#[derive(Debug, PartialEq, Eq)]
pub struct ZRank {
    key: Bytes,
    member: Bytes,
    rev: bool,
}

impl ZRank {
    fn parse(args: &mut Args, rev: bool) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let member = args.next()?;
        args.finish()?;
        Parsed::read(ZRank { key, member, rev })
    }
}

impl ReadCmd for ZRank {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let rank = crate::cmd::counted(
            cx,
            &self.key,
            r.zrank(cx.db, &self.key, &self.member, self.rev),
        )?;
        Ok(rank.flatten().map_or(Frame::Null, Frame::Integer))
    }
}
