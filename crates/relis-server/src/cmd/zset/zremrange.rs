//! ZREMRANGEBYRANK key start stop / ZREMRANGEBYSCORE key min max / ZREMRANGEBYLEX key min max —
//! remove the members in a range; replies how many. <https://redis.io/commands/zremrangebyrank/>,
//! <https://redis.io/commands/zremrangebyscore/>, <https://redis.io/commands/zremrangebylex/>
//!
//! One range delete over the score index; a large set's rank blocks inside the range are
//! dropped and the one straddling its start recounted, so the cost follows the members removed.

use super::{parse_lex_range, parse_score_range};
use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::ZRangeBy;
use resp::Frame;

/// ZREMRANGEBYSCORE's declaration.
pub const SPEC_ZREMRANGEBYSCORE: Spec = Spec {
    name: "zremrangebyscore",
    arity: 4,
    flags: Spec::flags(&["write"]),
    acl: Spec::acl(&["write", "sortedset", "slow"]),
    keys: (1, 1, 1),
    group: "sorted-set",
    since: "1.2.0",
    summary: "Remove all members in a sorted set within the given scores",
    complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.",
    parse: |a| ZRemRange::parse(a, Kind::Score),
    key_flags: Spec::key_flags(&["RW", "delete"]),
    ..Spec::BASE
};

/// ZREMRANGEBYRANK's declaration.
pub const SPEC_ZREMRANGEBYRANK: Spec = Spec {
    name: "zremrangebyrank",
    since: "2.0.0",
    summary: "Remove all members in a sorted set within the given indexes",
    parse: |a| ZRemRange::parse(a, Kind::Rank),
    ..SPEC_ZREMRANGEBYSCORE
};

/// ZREMRANGEBYLEX's declaration.
pub const SPEC_ZREMRANGEBYLEX: Spec = Spec {
    name: "zremrangebylex",
    since: "2.8.9",
    summary: "Remove all members in a sorted set between the given lexicographical range",
    parse: |a| ZRemRange::parse(a, Kind::Lex),
    ..SPEC_ZREMRANGEBYSCORE
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Rank,
    Score,
    Lex,
}

/// ZREMRANGEBY*.
#[derive(Debug, PartialEq)]
pub struct ZRemRange {
    key: Bytes,
    by: ZRangeBy,
}

impl ZRemRange {
    fn from_args(args: &mut Args, kind: Kind) -> Result<ZRemRange, CmdError> {
        let key = args.next()?;
        let (min, max) = (args.next()?, args.next()?);
        args.finish()?;
        let by = match kind {
            Kind::Rank => {
                ZRangeBy::Rank(crate::args::parse_i64(&min)?, crate::args::parse_i64(&max)?)
            }
            Kind::Score => ZRangeBy::Score(parse_score_range(&min, &max)?),
            Kind::Lex => ZRangeBy::Lex(parse_lex_range(&min, &max)?),
        };
        Ok(ZRemRange { key, by })
    }

    fn parse(args: &mut Args, kind: Kind) -> Result<Parsed, CmdError> {
        Parsed::write(ZRemRange::from_args(args, kind)?)
    }
}

impl WriteCmd for ZRemRange {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let n = w.zremrange(cx.db, &self.key, &self.by)?;
        if n > 0 {
            let event = match self.by {
                relis::ZRangeBy::Rank(..) => "zremrangebyrank",
                relis::ZRangeBy::Score(_) => "zremrangebyscore",
                relis::ZRangeBy::Lex(_) => "zremrangebylex",
            };
            w.notify(relis::events::class::ZSET, event, cx.db, &self.key);
            crate::pubsub::notify_if_emptied(w, cx.db, &self.key)?;
        }
        Ok(Frame::Integer(n))
    }

    // The type check comes before the first write.
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        let parse = |kind, line| ZRemRange::from_args(&mut super::super::args_of("z", line), kind);
        assert_eq!(
            parse(Kind::Rank, "k 0 -1").unwrap().by,
            ZRangeBy::Rank(0, -1)
        );
        assert_eq!(parse(Kind::Rank, "k x 0"), Err(CmdError::NotInteger));
        assert_eq!(
            parse(Kind::Score, "k x 0"),
            Err(CmdError::err("min or max is not a float"))
        );
        assert_eq!(
            parse(Kind::Lex, "k x 0"),
            Err(CmdError::err("min or max not valid string range item"))
        );
    }
}
