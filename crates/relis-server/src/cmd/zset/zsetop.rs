//! ZUNION / ZINTER numkeys key [key ...] [WEIGHTS weight ...] [AGGREGATE SUM|MIN|MAX]
//! [WITHSCORES], ZDIFF numkeys key [key ...] [WITHSCORES], their STORE forms (destination
//! first, no WITHSCORES; reply the stored size), and ZINTERCARD numkeys key [key ...]
//! [LIMIT limit]. <https://redis.io/commands/zunion/>, <https://redis.io/commands/zinter/>,
//! <https://redis.io/commands/zdiff/>, <https://redis.io/commands/zunionstore/>,
//! <https://redis.io/commands/zinterstore/>, <https://redis.io/commands/zdiffstore/>,
//! <https://redis.io/commands/zintercard/>
//!
//! Inputs may be sorted sets or plain sets (whose members score 1); a missing key is empty.
//! Weights multiply scores (a NaN product, `0 * inf`, counts as 0); SUM makes `inf + -inf` 0.
//! The result comes in Redis's order. As in Redis's `zunionInterDiffGenericCommand`, numkeys
//! is checked first, then every key is looked up (counted in keyspace hits/misses) and the
//! first of another type is WRONGTYPE, and only then are the options read. A STORE replaces
//! whatever was at the destination; an empty result deletes it.

use super::scored_reply;
use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::{Aggregate, Combine, SetOp};
use resp::Frame;

const UNION: &str = "O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.";
const INTER: &str = "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.";
const DIFF: &str = "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.";

/// ZUNIONSTORE's declaration.
pub const SPEC_ZUNIONSTORE: Spec = Spec {
    name: "zunionstore",
    arity: -4,
    flags: Spec::flags(&["write", "denyoom", "movablekeys"]),
    acl: Spec::acl(&["write", "sortedset", "slow"]),
    keys: (1, 1, 1),
    group: "sorted-set",
    since: "2.0.0",
    summary: "Add multiple sorted sets and store the resulting sorted set in a new key",
    complexity: "O(N)+O(M log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.",
    parse: |a| ZSetOpCmd::parse(a, Kind::Union, true),
    key_flags: Spec::key_flags(&["OW", "update"]),
    unblocks: true,
    find_keys: Some(super::store_keys),
    key_specs: super::STORE_KEY_SPECS,
    ..Spec::BASE
};

/// ZINTERSTORE's declaration.
pub const SPEC_ZINTERSTORE: Spec = Spec {
    name: "zinterstore",
    summary: "Intersect multiple sorted sets and store the resulting sorted set in a new key",
    complexity: INTER,
    parse: |a| ZSetOpCmd::parse(a, Kind::Inter, true),
    ..SPEC_ZUNIONSTORE
};

/// ZDIFFSTORE's declaration.
pub const SPEC_ZDIFFSTORE: Spec = Spec {
    name: "zdiffstore",
    since: "6.2.0",
    summary: "Subtract multiple sorted sets and store the resulting sorted set in a new key",
    complexity: DIFF,
    parse: |a| ZSetOpCmd::parse(a, Kind::Diff, true),
    ..SPEC_ZUNIONSTORE
};

/// ZUNION's declaration (keys found through numkeys, so no legacy key range).
pub const SPEC_ZUNION: Spec = Spec {
    name: "zunion",
    arity: -3,
    flags: Spec::flags(&["readonly", "movablekeys"]),
    acl: Spec::acl(&["read", "sortedset", "slow"]),
    keys: (0, 0, 0),
    group: "sorted-set",
    since: "6.2.0",
    summary: "Add multiple sorted sets",
    complexity: UNION,
    parse: |a| ZSetOpCmd::parse(a, Kind::Union, false),
    key_flags: Spec::key_flags(&["RO", "access"]),
    find_keys: Some(super::keys_after_numkeys),
    key_specs: super::READ_KEY_SPECS,
    ..Spec::BASE
};

/// ZINTER's declaration.
pub const SPEC_ZINTER: Spec = Spec {
    name: "zinter",
    summary: "Intersect multiple sorted sets",
    complexity: INTER,
    parse: |a| ZSetOpCmd::parse(a, Kind::Inter, false),
    ..SPEC_ZUNION
};

/// ZINTERCARD's declaration.
pub const SPEC_ZINTERCARD: Spec = Spec {
    name: "zintercard",
    since: "7.0.0",
    summary: "Intersect multiple sorted sets and return the cardinality of the result",
    complexity: "O(N*K) worst case with N being the smallest input sorted set, K being the number of input sorted sets.",
    parse: |a| ZSetOpCmd::parse(a, Kind::Card, false),
    ..SPEC_ZUNION
};

/// ZDIFF's declaration.
pub const SPEC_ZDIFF: Spec = Spec {
    name: "zdiff",
    summary: "Subtract multiple sorted sets",
    complexity: DIFF,
    parse: |a| ZSetOpCmd::parse(a, Kind::Diff, false),
    ..SPEC_ZUNION
};

/// Which operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Union,
    Inter,
    Diff,
    /// ZINTERCARD.
    Card,
}

/// The options after the keys.
#[derive(Debug, PartialEq)]
struct Options {
    combine: Combine,
    withscores: bool,
    limit: u64,
}

/// A parsed ZUNION-family command.
#[derive(Debug, PartialEq)]
pub struct ZSetOpCmd {
    kind: Kind,
    dst: Option<Bytes>,
    keys: Vec<Bytes>,
    /// The options, or the error they give once every key has passed its type check.
    options: Result<Options, CmdError>,
}

impl Options {
    fn from_args(args: &mut Args, kind: Kind, store: bool, nkeys: usize) -> Result<Self, CmdError> {
        let mut o = Options {
            combine: Combine::default(),
            withscores: false,
            limit: 0,
        };
        let setop = kind == Kind::Union || kind == Kind::Inter;
        while !args.is_empty() {
            if setop && args.remaining() > nkeys && args.eat("weights") {
                o.combine.weights = (0..nkeys)
                    .map(|_| {
                        let w = args.next()?;
                        super::parse_double(&w).ok_or(CmdError::WEIGHT_NOT_FLOAT)
                    })
                    .collect::<Result<_, _>>()?;
            } else if setop && args.remaining() >= 2 && args.eat("aggregate") {
                let a = args.next()?;
                o.combine.agg = if a.eq_ignore_ascii_case(b"sum") {
                    Aggregate::Sum
                } else if a.eq_ignore_ascii_case(b"min") {
                    Aggregate::Min
                } else if a.eq_ignore_ascii_case(b"max") {
                    Aggregate::Max
                } else {
                    return Err(CmdError::Syntax);
                };
            } else if !store && kind != Kind::Card && args.eat("withscores") {
                o.withscores = true;
            } else if kind == Kind::Card && args.remaining() >= 2 && args.eat("limit") {
                let l = args.next()?;
                o.limit = relis::parse_i64(&l)
                    .and_then(|n| u64::try_from(n).ok())
                    .ok_or(CmdError::LIMIT_NEGATIVE)?;
            } else {
                return Err(CmdError::Syntax);
            }
        }
        Ok(o)
    }
}

impl ZSetOpCmd {
    fn from_args(args: &mut Args, kind: Kind, store: bool) -> Result<ZSetOpCmd, CmdError> {
        let dst = if store { Some(args.next()?) } else { None };
        let numkeys = args.next_i64()?;
        if numkeys < 1 {
            return Err(CmdError::no_input_keys(args.name()));
        }
        if numkeys as u64 > args.remaining() as u64 {
            return Err(CmdError::Syntax);
        }
        let keys: Vec<Bytes> = (0..numkeys)
            .map(|_| args.next())
            .collect::<Result<_, _>>()?;
        let options = Options::from_args(args, kind, store, keys.len());
        // Whatever the options said, every argument is accounted for.
        args.rest();
        args.finish()?;
        Ok(ZSetOpCmd {
            kind,
            dst,
            keys,
            options,
        })
    }

    fn parse(args: &mut Args, kind: Kind, store: bool) -> Result<Parsed, CmdError> {
        let cmd = ZSetOpCmd::from_args(args, kind, store)?;
        if store {
            Parsed::write(cmd)
        } else {
            Parsed::read(cmd)
        }
    }

    fn op(&self) -> SetOp {
        match self.kind {
            Kind::Union => SetOp::Union,
            Kind::Inter | Kind::Card => SetOp::Inter,
            Kind::Diff => SetOp::Diff,
        }
    }

    /// With bad options: the keys' lookups and type checks Redis makes before reading them,
    /// then the options' error.
    fn options_error(&self, r: &relis::Reader<'_>, cx: &Cx, e: &CmdError) -> CmdError {
        for k in &self.keys {
            match r.meta(cx.db, k) {
                Ok(m) => {
                    cx.hit(k, m.is_some());
                    if m.is_some_and(|m| {
                        m.kind != relis::KeyType::ZSet && m.kind != relis::KeyType::Set
                    }) {
                        return CmdError::WrongType;
                    }
                }
                Err(e) => return e.into(),
            }
        }
        e.clone()
    }
}

impl ReadCmd for ZSetOpCmd {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let o = match &self.options {
            Ok(o) => o,
            Err(e) => return Err(self.options_error(r, cx, e)),
        };
        let seen = &mut |k: &[u8], found| cx.hit(k, found);
        if self.kind == Kind::Card {
            return Ok(Frame::Integer(
                r.zintercard(cx.db, &self.keys, o.limit, seen)?,
            ));
        }
        let items = r.zsetop(cx.db, self.op(), &self.keys, &o.combine, seen)?;
        Ok(scored_reply(items, o.withscores, cx.proto))
    }
}

impl WriteCmd for ZSetOpCmd {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let o = match &self.options {
            Ok(o) => o,
            Err(e) => return Err(self.options_error(w, cx, e)),
        };
        let dst = self.dst.as_deref().unwrap_or_default();
        let existed =
            w.wants_events(relis::events::class::GENERIC) && w.meta(cx.db, dst)?.is_some();
        let seen = &mut |k: &[u8], found| cx.hit(k, found);
        let n = w.zsetop_store(cx.db, dst, self.op(), &self.keys, &o.combine, seen)?;
        if n > 0 {
            let event = match self.op() {
                SetOp::Union => "zunionstore",
                SetOp::Inter => "zinterstore",
                SetOp::Diff => "zdiffstore",
            };
            w.notify(relis::events::class::ZSET, event, cx.db, dst);
        } else if existed {
            w.notify(relis::events::class::GENERIC, "del", cx.db, dst);
        }
        Ok(Frame::Integer(n))
    }

    // Every source is looked up (and type-checked) before the destination is written.
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(
        name: &'static str,
        kind: Kind,
        store: bool,
        line: &str,
    ) -> Result<ZSetOpCmd, CmdError> {
        ZSetOpCmd::from_args(&mut super::super::args_of(name, line), kind, store)
    }

    #[test]
    fn numkeys_then_keys_then_options() {
        let z = parse(
            "zunion",
            Kind::Union,
            false,
            "2 a b weights 1 2 aggregate max withscores",
        )
        .unwrap();
        assert_eq!(z.keys.len(), 2);
        let o = z.options.unwrap();
        assert_eq!(
            (o.combine.weights, o.combine.agg, o.withscores),
            (vec![1.0, 2.0], Aggregate::Max, true)
        );
        let z = parse("zunionstore", Kind::Union, true, "d 1 a").unwrap();
        assert_eq!(z.dst.as_deref(), Some(&b"d"[..]));
        for (name, kind, store, line, want) in [
            (
                "zunion",
                Kind::Union,
                false,
                "0 a",
                "ERR at least 1 input key is needed for 'zunion' command",
            ),
            (
                "zunionstore",
                Kind::Union,
                true,
                "d -1 a",
                "ERR at least 1 input key is needed for 'zunionstore' command",
            ),
            (
                "zintercard",
                Kind::Card,
                false,
                "0 a",
                "ERR at least 1 input key is needed for 'zintercard' command",
            ),
            (
                "zunion",
                Kind::Union,
                false,
                "x a",
                "ERR value is not an integer or out of range",
            ),
            ("zunion", Kind::Union, false, "3 a b", "ERR syntax error"),
        ] {
            assert_eq!(
                parse(name, kind, store, line)
                    .map(|_| ())
                    .unwrap_err()
                    .message(),
                want,
                "{line}"
            );
        }
        // Option errors wait for the keys' type checks.
        for (name, kind, store, line, want) in [
            (
                "zunion",
                Kind::Union,
                false,
                "2 a b weights x y",
                CmdError::err("weight value is not a float"),
            ),
            (
                "zunion",
                Kind::Union,
                false,
                "2 a b weights 1",
                CmdError::Syntax,
            ),
            (
                "zunion",
                Kind::Union,
                false,
                "2 a b weights 1 2 3",
                CmdError::Syntax,
            ),
            (
                "zunion",
                Kind::Union,
                false,
                "1 a aggregate foo",
                CmdError::Syntax,
            ),
            (
                "zunion",
                Kind::Union,
                false,
                "1 a aggregate",
                CmdError::Syntax,
            ),
            (
                "zdiff",
                Kind::Diff,
                false,
                "2 a b weights 1 2",
                CmdError::Syntax,
            ),
            (
                "zdiff",
                Kind::Diff,
                false,
                "1 a aggregate sum",
                CmdError::Syntax,
            ),
            (
                "zunionstore",
                Kind::Union,
                true,
                "d 1 a withscores",
                CmdError::Syntax,
            ),
            (
                "zintercard",
                Kind::Card,
                false,
                "1 a limit -1",
                CmdError::err("LIMIT can't be negative"),
            ),
            (
                "zintercard",
                Kind::Card,
                false,
                "1 a limit x",
                CmdError::err("LIMIT can't be negative"),
            ),
            (
                "zintercard",
                Kind::Card,
                false,
                "1 a withscores",
                CmdError::Syntax,
            ),
        ] {
            assert_eq!(
                parse(name, kind, store, line).unwrap().options,
                Err(want),
                "{line}"
            );
        }
    }
}
