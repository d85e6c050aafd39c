//! ZADD key [NX | XX] [GT | LT] [CH] [INCR] score member [score member ...] — add members or
//! update their scores; ZINCRBY key increment member — add to a member's score.
//! <https://redis.io/commands/zadd/>, <https://redis.io/commands/zincrby/>
//!
//! Options come before the first pair, in any order and any number of times (Redis stops at
//! the first argument that is not one). The checks run in Redis's order: the pairs' count, the
//! option conflicts, INCR with several pairs, then every score, all before the key is looked up.
//! ZINCRBY is ZADD INCR with one pair.

use super::parse_score;
use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::{ZAddCmp, ZAddCond, ZAddOptions, ZAddOutcome};
use resp::Frame;

/// ZADD's declaration.
pub const SPEC: Spec = Spec {
    name: "zadd",
    arity: -4,
    flags: Spec::flags(&["write", "denyoom", "fast"]),
    acl: Spec::acl(&["write", "sortedset", "fast"]),
    keys: (1, 1, 1),
    group: "sorted-set",
    since: "1.2.0",
    summary: "Add one or more members to a sorted set, or update its score if it already exists",
    complexity:
        "O(log(N)) for each item added, where N is the number of elements in the sorted set.",
    parse: ZAdd::parse,
    key_flags: Spec::key_flags(&["RW", "update"]),
    unblocks: true,
    ..Spec::BASE
};

/// ZINCRBY's declaration.
pub const SPEC_ZINCRBY: Spec = Spec {
    name: "zincrby",
    arity: 4,
    flags: Spec::flags(&["write", "denyoom", "fast"]),
    acl: Spec::acl(&["write", "sortedset", "fast"]),
    keys: (1, 1, 1),
    group: "sorted-set",
    since: "1.2.0",
    summary: "Increment the score of a member in a sorted set",
    complexity: "O(log(N)) where N is the number of elements in the sorted set.",
    parse: ZAdd::parse_zincrby,
    key_flags: Spec::key_flags(&["RW", "access", "update"]),
    unblocks: true,
    ..Spec::BASE
};

/// ZADD / ZINCRBY.
#[derive(Debug, PartialEq)]
pub struct ZAdd {
    key: Bytes,
    opts: ZAddOptions,
    pairs: Vec<(f64, Bytes)>,
}

impl ZAdd {
    /// Redis's `zaddGenericCommand`; ZINCRBY runs it with INCR preset (so `ZINCRBY k nx m` is
    /// read as the NX option, leaving an odd number of arguments: a syntax error, as in Redis).
    fn from_args(args: &mut Args, incr: bool) -> Result<ZAdd, CmdError> {
        let key = args.next()?;
        let mut opts = ZAddOptions {
            incr,
            ..ZAddOptions::default()
        };
        let (mut nx, mut xx, mut gt, mut lt) = (false, false, false, false);
        loop {
            if args.eat("nx") {
                nx = true;
            } else if args.eat("xx") {
                xx = true;
            } else if args.eat("ch") {
                opts.ch = true;
            } else if args.eat("incr") {
                opts.incr = true;
            } else if args.eat("gt") {
                gt = true;
            } else if args.eat("lt") {
                lt = true;
            } else {
                break;
            }
        }
        let rest = args.rest();
        if rest.is_empty() || !rest.len().is_multiple_of(2) {
            return Err(CmdError::Syntax);
        }
        if nx && xx {
            return Err(CmdError::ZADD_XX_AND_NX);
        }
        if (gt || lt) && nx || (gt && lt) {
            return Err(CmdError::ZADD_GT_LT_NX);
        }
        if opts.incr && rest.len() > 2 {
            return Err(CmdError::ZADD_INCR_PAIRS);
        }
        opts.cond = if nx {
            ZAddCond::Nx
        } else if xx {
            ZAddCond::Xx
        } else {
            ZAddCond::Always
        };
        opts.cmp = if gt {
            ZAddCmp::Gt
        } else if lt {
            ZAddCmp::Lt
        } else {
            ZAddCmp::Any
        };
        let mut pairs = Vec::with_capacity(rest.len() / 2);
        let mut it = rest.into_iter();
        while let (Some(score), Some(member)) = (it.next(), it.next()) {
            pairs.push((parse_score(&score)?, member));
        }
        args.finish()?;
        Ok(ZAdd { key, opts, pairs })
    }

    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::write(ZAdd::from_args(args, false)?)
    }

    fn parse_zincrby(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::write(ZAdd::from_args(args, true)?)
    }
}

impl WriteCmd for ZAdd {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        // Redis reports a ZADD that added or changed anything: the key's version says so.
        let version = |w: &relis::Writer<'_>| -> Result<Option<i64>, CmdError> {
            Ok(w.meta(cx.db, &self.key)?.map(|m| m.version))
        };
        let before = if w.wants_events(relis::events::class::ZSET) {
            Some(version(w)?)
        } else {
            None
        };
        let outcome = w.zadd(cx.db, &self.key, self.opts, &self.pairs)?;
        if let Some(before) = before {
            if version(w)? != before {
                let event = if self.opts.incr { "zincr" } else { "zadd" };
                w.notify(relis::events::class::ZSET, event, cx.db, &self.key);
            }
        }
        Ok(match outcome {
            ZAddOutcome::Count(n) => Frame::Integer(n),
            ZAddOutcome::Score(Some(s)) => Frame::Double(s),
            ZAddOutcome::Score(None) => Frame::Null,
            ZAddOutcome::Nan => {
                return Err(CmdError::SCORE_NAN);
            }
        })
    }

    // Type checks and the NaN check (one pair) come before the first write.
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<ZAdd, CmdError> {
        ZAdd::from_args(&mut super::super::args_of("zadd", line), false)
    }

    #[test]
    fn options_and_errors() {
        let z = parse("k nx ch 1 a 2 b").unwrap();
        assert_eq!(z.opts.cond, ZAddCond::Nx);
        assert!(z.opts.ch);
        assert_eq!(z.pairs.len(), 2);
        let z = parse("k XX GT INCR 1.5 a").unwrap();
        assert_eq!(
            (z.opts.cond, z.opts.cmp, z.opts.incr),
            (ZAddCond::Xx, ZAddCmp::Gt, true)
        );
        // A member may be named like an option once the pairs have started.
        assert_eq!(
            parse("k 1 nx").unwrap().pairs[0].1,
            Bytes::from_static(b"nx")
        );
        let e = |s: &str| CmdError::err(s);
        for (line, want) in [
            ("k ch ch", CmdError::Syntax),
            ("k 1 a 2", CmdError::Syntax),
            (
                "k nx xx 1 a",
                e("XX and NX options at the same time are not compatible"),
            ),
            ("k nx xx 1", CmdError::Syntax),
            (
                "k nx gt 1 a",
                e("GT, LT, and/or NX options at the same time are not compatible"),
            ),
            (
                "k gt lt 1 a",
                e("GT, LT, and/or NX options at the same time are not compatible"),
            ),
            (
                "k incr 1 a 2 b",
                e("INCR option supports a single increment-element pair"),
            ),
            ("k 1 a nan b", CmdError::NotFloat),
            (
                "k incr x a 1 b",
                e("INCR option supports a single increment-element pair"),
            ),
            (
                "k nx xx x a",
                e("XX and NX options at the same time are not compatible"),
            ),
        ] {
            assert_eq!(parse(line), Err(want), "{line}");
        }
        let zincrby = |line| ZAdd::from_args(&mut super::super::args_of("zincrby", line), true);
        assert!(zincrby("k 2 m").unwrap().opts.incr);
        assert_eq!(zincrby("k nx m"), Err(CmdError::Syntax));
        assert_eq!(zincrby("k x m"), Err(CmdError::NotFloat));
    }
}
