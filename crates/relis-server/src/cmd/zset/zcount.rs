//! ZCOUNT key min max — how many members score within `min max` (`(` excludes an end, `-inf`
//! and `+inf` are open); ZLEXCOUNT key min max — how many members lie within a lex range
//! (`-`, `+`, `[member`, `(member`). <https://redis.io/commands/zcount/>,
//! <https://redis.io/commands/zlexcount/>
//!
//! The range is checked before the key is looked up. Large sets count by rank arithmetic (two
//! ranks from the rank blocks), not by walking the range.

use super::{parse_lex_range, parse_score_range};
use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use relis::{LexRange, ScoreRange};
use resp::Frame;

/// ZCOUNT's declaration.
pub const SPEC_ZCOUNT: Spec = Spec {
    name: "zcount",
    arity: 4,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["read", "sortedset", "fast"]),
    keys: (1, 1, 1),
    group: "sorted-set",
    since: "2.0.0",
    summary: "Count the members in a sorted set with scores within the given values",
    complexity: "O(log(N)) with N being the number of elements in the sorted set.",
    parse: ZCount::parse_zcount,
    ..Spec::BASE
};

/// ZLEXCOUNT's declaration.
pub const SPEC_ZLEXCOUNT: Spec = Spec {
    name: "zlexcount",
    since: "2.8.9",
    summary: "Count the number of members in a sorted set between a given lexicographical range",
    parse: ZCount::parse_zlexcount,
    ..SPEC_ZCOUNT
};

/// What ZCOUNT / ZLEXCOUNT count.
#[derive(Debug, PartialEq)]
enum Range {
    Score(ScoreRange),
    Lex(LexRange),
}

/// ZCOUNT / ZLEXCOUNT.
#[derive(Debug, PartialEq)]
pub struct ZCount {
    key: Bytes,
    range: Range,
}

impl ZCount {
    fn parse_zcount(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let range = parse_score_range(&args.next()?, &args.next()?)?;
        args.finish()?;
        Parsed::read(ZCount {
            key,
            range: Range::Score(range),
        })
    }

    fn parse_zlexcount(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let range = parse_lex_range(&args.next()?, &args.next()?)?;
        args.finish()?;
        Parsed::read(ZCount {
            key,
            range: Range::Lex(range),
        })
    }
}

impl ReadCmd for ZCount {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let n = match &self.range {
            Range::Score(range) => r.zcount(cx.db, &self.key, range),
            Range::Lex(range) => r.zlexcount(cx.db, &self.key, range),
        };
        Ok(Frame::Integer(
            crate::cmd::counted(cx, &self.key, n)?.unwrap_or(0),
        ))
    }
}
