//! ZRANGE key start stop [BYSCORE | BYLEX] [REV] [LIMIT offset count] [WITHSCORES] — members
//! by rank, score or lex range; ZRANGESTORE dst src ... stores them instead; and the older
//! forms ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX, which are
//! ZRANGE with some options fixed. <https://redis.io/commands/zrange/>,
//! <https://redis.io/commands/zrangestore/>, <https://redis.io/commands/zrevrange/>,
//! <https://redis.io/commands/zrangebyscore/>, <https://redis.io/commands/zrevrangebyscore/>,
//! <https://redis.io/commands/zrangebylex/>, <https://redis.io/commands/zrevrangebylex/>
//!
//! One parser, Redis's `zrangeGenericCommand`: options in any order (a fixed option of the
//! older forms is a syntax error there), LIMIT read at once, then LIMIT with a rank range (only
//! `LIMIT x -1` passes, and means nothing) and WITHSCORES with BYLEX refused, then with REV the
//! score and lex ranges are given `max min`, then the range is read. By rank, REV counts from
//! the highest score. A negative LIMIT offset selects nothing, a negative count everything.

use super::{parse_lex_range, parse_score_range, scored_reply};
use crate::args::Args;
use crate::cmd::{Cx, FindKeys, KeySpec, Parsed, ReadCmd, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::{ZRange, ZRangeBy};
use resp::Frame;

const COMPLEXITY_RANGE: &str = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.";
const COMPLEXITY_BY: &str = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).";

/// ZRANGE's declaration.
pub const SPEC_ZRANGE: Spec = Spec {
    name: "zrange",
    arity: -4,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "sortedset", "slow"]),
    keys: (1, 1, 1),
    group: "sorted-set",
    since: "1.2.0",
    summary: "Return a range of members in a sorted set",
    complexity: COMPLEXITY_RANGE,
    parse: |a| ZRangeCmd::parse(a, Form::ZRANGE),
    ..Spec::BASE
};

/// ZRANGESTORE's declaration.
pub const SPEC_ZRANGESTORE: Spec = Spec {
    name: "zrangestore",
    arity: -5,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["write", "sortedset", "slow"]),
    keys: (1, 2, 1),
    since: "6.2.0",
    summary: "Store a range of members from sorted set into another key",
    complexity: "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements stored into the destination key.",
    parse: |a| ZRangeCmd::parse(a, Form::ZRANGESTORE),
    key_flags: Spec::key_flags(&["OW", "update"]),
    key_specs: &[
        KeySpec {
            flags: Spec::key_flags(&["OW", "update"]),
            index: 1,
            notes: "",
            find: FindKeys::Range(0, 1, 0),
        },
        KeySpec {
            flags: Spec::key_flags(&["RO", "access"]),
            index: 2,
            notes: "",
            find: FindKeys::Range(0, 1, 0),
        },
    ],
    unblocks: true,
    ..SPEC_ZRANGE
};

/// ZREVRANGE's declaration.
pub const SPEC_ZREVRANGE: Spec = Spec {
    name: "zrevrange",
    summary:
        "Return a range of members in a sorted set, by index, with scores ordered from high to low",
    parse: |a| ZRangeCmd::parse(a, Form::ZREVRANGE),
    ..SPEC_ZRANGE
};

/// ZRANGEBYSCORE's declaration.
pub const SPEC_ZRANGEBYSCORE: Spec = Spec {
    name: "zrangebyscore",
    since: "1.0.5",
    summary: "Return a range of members in a sorted set, by score",
    complexity: COMPLEXITY_BY,
    parse: |a| ZRangeCmd::parse(a, Form::ZRANGEBYSCORE),
    ..SPEC_ZRANGE
};

/// ZREVRANGEBYSCORE's declaration.
pub const SPEC_ZREVRANGEBYSCORE: Spec = Spec {
    name: "zrevrangebyscore",
    since: "2.2.0",
    summary:
        "Return a range of members in a sorted set, by score, with scores ordered from high to low",
    parse: |a| ZRangeCmd::parse(a, Form::ZREVRANGEBYSCORE),
    ..SPEC_ZRANGEBYSCORE
};

/// ZRANGEBYLEX's declaration.
pub const SPEC_ZRANGEBYLEX: Spec = Spec {
    name: "zrangebylex",
    since: "2.8.9",
    summary: "Return a range of members in a sorted set, by lexicographical range",
    parse: |a| ZRangeCmd::parse(a, Form::ZRANGEBYLEX),
    ..SPEC_ZRANGEBYSCORE
};

/// ZREVRANGEBYLEX's declaration.
pub const SPEC_ZREVRANGEBYLEX: Spec = Spec {
    name: "zrevrangebylex",
    since: "2.8.9",
    summary: "Return a range of members in a sorted set, by lexicographical range, ordered from higher to lower strings.",
    parse: |a| ZRangeCmd::parse(a, Form::ZREVRANGEBYLEX),
    ..SPEC_ZRANGEBYSCORE
};

/// The range type (`None`: ZRANGE decides with BYSCORE/BYLEX, by rank otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum By {
    Rank,
    Score,
    Lex,
}

/// Which command: what it fixes in advance, and whether it stores.
#[derive(Clone, Copy, Debug)]
struct Form {
    by: Option<By>,
    rev: Option<bool>,
    store: bool,
}

impl Form {
    const ZRANGE: Form = Form {
        by: None,
        rev: None,
        store: false,
    };
    const ZRANGESTORE: Form = Form {
        by: None,
        rev: None,
        store: true,
    };
    const ZREVRANGE: Form = Form {
        by: Some(By::Rank),
        rev: Some(true),
        store: false,
    };
    const ZRANGEBYSCORE: Form = Form {
        by: Some(By::Score),
        rev: Some(false),
        store: false,
    };
    const ZREVRANGEBYSCORE: Form = Form {
        by: Some(By::Score),
        rev: Some(true),
        store: false,
    };
    const ZRANGEBYLEX: Form = Form {
        by: Some(By::Lex),
        rev: Some(false),
        store: false,
    };
    const ZREVRANGEBYLEX: Form = Form {
        by: Some(By::Lex),
        rev: Some(true),
        store: false,
    };
}

/// A parsed ZRANGE-family command.
#[derive(Debug, PartialEq)]
pub struct ZRangeCmd {
    dst: Option<Bytes>,
    key: Bytes,
    spec: ZRange,
    withscores: bool,
}

impl ZRangeCmd {
    fn from_args(args: &mut Args, form: Form) -> Result<ZRangeCmd, CmdError> {
        let dst = if form.store { Some(args.next()?) } else { None };
        let key = args.next()?;
        let mut min = args.next()?;
        let mut max = args.next()?;
        let (mut by, mut rev) = (form.by, form.rev);
        let mut withscores = false;
        let (mut offset, mut limit) = (0i64, -1i64);
        while !args.is_empty() {
            if !form.store && args.eat("withscores") {
                withscores = true;
            } else if args.remaining() >= 3 && args.eat("limit") {
                offset = args.next_i64()?;
                limit = args.next_i64()?;
            } else if rev.is_none() && args.eat("rev") {
                rev = Some(true);
            } else if by.is_none() && args.eat("bylex") {
                by = Some(By::Lex);
            } else if by.is_none() && args.eat("byscore") {
                by = Some(By::Score);
            } else {
                return Err(CmdError::Syntax);
            }
        }
        let by = by.unwrap_or(By::Rank);
        let rev = rev.unwrap_or(false);
        if limit != -1 && by == By::Rank {
            return Err(CmdError::ZRANGE_LIMIT);
        }
        if withscores && by == By::Lex {
            return Err(CmdError::ZRANGE_BYLEX_WITHSCORES);
        }
        if rev && by != By::Rank {
            // The range is given as `max min`.
            std::mem::swap(&mut min, &mut max);
        }
        let by = match by {
            By::Rank => {
                ZRangeBy::Rank(crate::args::parse_i64(&min)?, crate::args::parse_i64(&max)?)
            }
            By::Score => ZRangeBy::Score(parse_score_range(&min, &max)?),
            By::Lex => ZRangeBy::Lex(parse_lex_range(&min, &max)?),
        };
        args.finish()?;
        Ok(ZRangeCmd {
            dst,
            key,
            spec: ZRange {
                by,
                rev,
                limit: Some((offset, limit)),
            },
            withscores,
        })
    }

    fn parse(args: &mut Args, form: Form) -> Result<Parsed, CmdError> {
        let cmd = ZRangeCmd::from_args(args, form)?;
        if cmd.dst.is_some() {
            Parsed::write(cmd)
        } else {
            Parsed::read(cmd)
        }
    }
}

impl ReadCmd for ZRangeCmd {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let items = crate::cmd::counted(cx, &self.key, r.zrange(cx.db, &self.key, &self.spec))?;
        Ok(scored_reply(
            items.unwrap_or_default(),
            self.withscores,
            cx.proto,
        ))
    }
}

impl WriteCmd for ZRangeCmd {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let dst = self.dst.as_deref().unwrap_or_default();
        let existed =
            w.wants_events(relis::events::class::GENERIC) && w.meta(cx.db, dst)?.is_some();
        let res = w.zrangestore(cx.db, dst, &self.key, &self.spec);
        match &res {
            Ok((_, n)) if *n > 0 => w.notify(relis::events::class::ZSET, "zrangestore", cx.db, dst),
            Ok(_) if existed => w.notify(relis::events::class::GENERIC, "del", cx.db, dst),
            _ => {}
        }
        let found = crate::cmd::counted(cx, &self.key, res.map(|(found, n)| found.then_some(n)))?;
        Ok(Frame::Integer(found.unwrap_or(0)))
    }

    // The source is read (and type-checked) before the destination is written.
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relis::{LexBound, ScoreRange};

    fn parse(form: Form, line: &str) -> Result<ZRangeCmd, CmdError> {
        ZRangeCmd::from_args(&mut super::super::args_of("zrange", line), form)
    }

    #[test]
    fn forms_and_options() {
        let z = parse(Form::ZRANGE, "k 0 -1 withscores").unwrap();
        assert_eq!(z.spec.by, ZRangeBy::Rank(0, -1));
        assert!(z.withscores && !z.spec.rev);
        let z = parse(Form::ZRANGE, "k (5 1 BYSCORE REV LIMIT 1 2").unwrap();
        assert_eq!(
            z.spec.by,
            ZRangeBy::Score(ScoreRange {
                min: 1.0,
                min_ex: false,
                max: 5.0,
                max_ex: true
            })
        );
        assert!(z.spec.rev);
        assert_eq!(z.spec.limit, Some((1, 2)));
        let z = parse(Form::ZREVRANGEBYLEX, "k + [a").unwrap();
        assert_eq!(
            z.spec.by,
            ZRangeBy::Lex(relis::LexRange {
                min: LexBound::Incl(Bytes::from_static(b"a")),
                max: LexBound::Max
            })
        );
        let z = parse(Form::ZRANGESTORE, "d k 0 1").unwrap();
        assert_eq!(z.dst.as_deref(), Some(&b"d"[..]));
        // `LIMIT x -1` is no limit at all, so it passes with a rank range.
        assert!(parse(Form::ZRANGE, "k 0 -1 limit 5 -1").is_ok());
    }

    #[test]
    fn errors_in_redis_order() {
        let limit = CmdError::err(
            "syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
        );
        let lexscores =
            CmdError::err("syntax error, WITHSCORES not supported in combination with BYLEX");
        for (form, line, want) in [
            (Form::ZRANGE, "k 0 -1 limit 0 1", limit.clone()),
            (Form::ZRANGE, "k 0 -1 rev rev", CmdError::Syntax),
            (Form::ZRANGE, "k 0 -1 byscore bylex", CmdError::Syntax),
            (Form::ZRANGE, "k - + bylex withscores", lexscores.clone()),
            (Form::ZRANGEBYLEX, "k - + withscores", lexscores),
            (Form::ZRANGEBYSCORE, "k 0 1 rev", CmdError::Syntax),
            (Form::ZREVRANGE, "k 0 1 byscore", CmdError::Syntax),
            (Form::ZRANGEBYSCORE, "k 0 1 limit 0", CmdError::Syntax),
            (Form::ZRANGEBYSCORE, "k 0 1 limit a b", CmdError::NotInteger),
            (Form::ZRANGESTORE, "d k 0 1 withscores", CmdError::Syntax),
            (Form::ZRANGESTORE, "d k 0 1 limit 0 1", limit),
            (Form::ZRANGE, "k a b", CmdError::NotInteger),
            (
                Form::ZRANGEBYSCORE,
                "k a b",
                CmdError::err("min or max is not a float"),
            ),
            (
                Form::ZRANGEBYLEX,
                "k a b",
                CmdError::err("min or max not valid string range item"),
            ),
            // Options are read before the range.
            (Form::ZRANGE, "k a b foo", CmdError::Syntax),
        ] {
            assert_eq!(parse(form, line), Err(want), "{line}");
        }
    }
}
