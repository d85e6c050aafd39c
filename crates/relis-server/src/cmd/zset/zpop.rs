//! ZPOPMIN / ZPOPMAX key [count] — remove and return the members with the lowest / highest
//! scores; ZMPOP numkeys key [key ...] MIN|MAX [COUNT count] — the same from the first
//! non-empty sorted set among the keys. <https://redis.io/commands/zpopmin/>,
//! <https://redis.io/commands/zpopmax/>, <https://redis.io/commands/zmpop/>
//!
//! Reply shapes, as Redis 7.0: ZPOPMIN/ZPOPMAX reply a flat `member score ...` array, except
//! under RESP3 with a count, where they reply `[member, score]` pairs; ZMPOP replies `[key,
//! [[member, score], ...]]`, or a null array when every key is missing. The count is checked
//! before the key is looked up; the key's type before a count of 0 replies an empty array.

use super::{pairs_reply, parse_positive};
use crate::args::Args;
use crate::cmd::{Cx, FindKeys, KeySpec, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::Scored;
use resp::{Frame, Protocol};

/// ZPOPMIN's declaration.
pub const SPEC_ZPOPMIN: Spec = Spec {
    name: "zpopmin",
    arity: -2,
    flags: Spec::flags(&["write", "fast"]),
    acl: Spec::acl(&["write", "sortedset", "fast"]),
    keys: (1, 1, 1),
    group: "sorted-set",
    since: "5.0.0",
    summary: "Remove and return members with the lowest scores in a sorted set",
    complexity: "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.",
    parse: |a| ZPop::parse(a, false),
    key_flags: Spec::key_flags(&["RW", "access", "delete"]),
    ..Spec::BASE
};

/// ZPOPMAX's declaration.
pub const SPEC_ZPOPMAX: Spec = Spec {
    name: "zpopmax",
    summary: "Remove and return members with the highest scores in a sorted set",
    parse: |a| ZPop::parse(a, true),
    ..SPEC_ZPOPMIN
};

/// ZMPOP's declaration (keys found through numkeys, so no legacy key range).
pub const SPEC_ZMPOP: Spec = Spec {
    name: "zmpop",
    arity: -4,
    flags: Spec::flags(&["write", "movablekeys"]),
    acl: Spec::acl(&["write", "sortedset", "slow"]),
    keys: (0, 0, 0),
    group: "sorted-set",
    since: "7.0.0",
    summary: "Remove and return members with scores in a sorted set",
    complexity: "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.",
    parse: ZMPop::parse,
    key_flags: Spec::key_flags(&["RW", "access", "delete"]),
    find_keys: Some(super::keys_after_numkeys),
    key_specs: &[KeySpec {
        flags: Spec::key_flags(&["RW", "access", "delete"]),
        index: 1,
        notes: "",
        find: FindKeys::Keynum(0, 1, 1),
    }],
    ..Spec::BASE
};

/// ZPOPMIN / ZPOPMAX.
#[derive(Debug, PartialEq, Eq)]
pub struct ZPop {
    key: Bytes,
    max: bool,
    /// The count, if given.
    count: Option<i64>,
}

impl ZPop {
    fn from_args(args: &mut Args, max: bool) -> Result<ZPop, CmdError> {
        let key = args.next()?;
        if args.remaining() > 1 {
            return Err(CmdError::Syntax);
        }
        let count = match args.next() {
            Ok(c) => Some(
                relis::parse_i64(&c)
                    .filter(|n| *n >= 0)
                    .ok_or(CmdError::NOT_POSITIVE)?,
            ),
            Err(_) => None,
        };
        args.finish()?;
        Ok(ZPop { key, max, count })
    }

    fn parse(args: &mut Args, max: bool) -> Result<Parsed, CmdError> {
        Parsed::write(ZPop::from_args(args, max)?)
    }
}

/// Popped members: flat, or as pairs under RESP3 when a count was given.
fn pop_reply(items: Vec<Scored>, nested: bool) -> Frame {
    if nested {
        return pairs_reply(items);
    }
    let mut out = Vec::with_capacity(items.len() * 2);
    for (m, s) in items {
        out.push(Frame::Bulk(m));
        out.push(Frame::Double(s));
    }
    Frame::Array(out)
}

impl WriteCmd for ZPop {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let items = w.zpop(cx.db, &self.key, self.max, self.count.unwrap_or(1))?;
        if !items.is_empty() {
            super::notify_pop(w, cx.db, &self.key, self.max)?;
        }
        let nested = cx.proto != Protocol::Resp2 && self.count.is_some();
        Ok(pop_reply(items, nested))
    }

    // The type check comes before the first write.
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}

/// ZMPOP numkeys key [key ...] MIN|MAX [COUNT count] (also the body of BZMPOP).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZMPop {
    /// The keys, in order.
    pub keys: Vec<Bytes>,
    /// MAX (else MIN).
    pub max: bool,
    /// COUNT (1 by default).
    pub count: i64,
}

impl ZMPop {
    /// Parses `numkeys key [key ...] MIN|MAX [COUNT count]` as Redis's `zmpopGenericCommand`.
    ///
    /// # Errors
    /// Redis's texts for a bad numkeys or count, else a syntax error.
    pub fn from_args(args: &mut Args) -> Result<ZMPop, CmdError> {
        let numkeys = parse_positive(&args.next()?, CmdError::NUMKEYS_NOT_POSITIVE)?;
        // The MIN|MAX word must come after the keys.
        if numkeys as u64 >= args.remaining() as u64 {
            return Err(CmdError::Syntax);
        }
        let keys: Vec<Bytes> = (0..numkeys)
            .map(|_| args.next())
            .collect::<Result<_, _>>()?;
        let max = match args.next()? {
            w if w.eq_ignore_ascii_case(b"min") => false,
            w if w.eq_ignore_ascii_case(b"max") => true,
            _ => return Err(CmdError::Syntax),
        };
        let mut count = None;
        while !args.is_empty() {
            if count.is_none() && args.remaining() >= 2 && args.eat("count") {
                count = Some(parse_positive(&args.next()?, CmdError::COUNT_NOT_POSITIVE)?);
            } else {
                return Err(CmdError::Syntax);
            }
        }
        args.finish()?;
        Ok(ZMPop {
            keys,
            max,
            count: count.unwrap_or(1),
        })
    }

    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::write(ZMPop::from_args(args)?)
    }

    /// The reply for what was popped (`None`: nothing anywhere).
    pub fn reply(popped: Option<(Bytes, Vec<Scored>)>) -> Frame {
        match popped {
            Some((key, items)) => Frame::Array(vec![Frame::Bulk(key), pairs_reply(items)]),
            None => Frame::NullArray,
        }
    }
}

impl WriteCmd for ZMPop {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let popped = w.zmpop(cx.db, &self.keys, self.max, self.count, false)?;
        if let Some((key, _)) = &popped {
            super::notify_pop(w, cx.db, key, self.max)?;
        }
        Ok(ZMPop::reply(popped))
    }

    // Type checks come before the one key that is written.
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zpop_counts() {
        let parse = |line| ZPop::from_args(&mut super::super::args_of("zpopmin", line), false);
        assert_eq!(parse("k").unwrap().count, None);
        assert_eq!(parse("k 0").unwrap().count, Some(0));
        let e = Err(CmdError::err("value is out of range, must be positive"));
        assert_eq!(parse("k -1"), e);
        assert_eq!(parse("k x"), e);
        assert_eq!(parse("k 1 2"), Err(CmdError::Syntax));
    }

    #[test]
    fn zmpop_arguments() {
        let parse = |line| ZMPop::from_args(&mut super::super::args_of("zmpop", line));
        let z = parse("2 a b MAX count 3").unwrap();
        assert_eq!((z.keys.len(), z.max, z.count), (2, true, 3));
        assert_eq!(parse("1 a min").unwrap().count, 1);
        let numkeys = Err(CmdError::err("numkeys should be greater than 0"));
        let count = Err(CmdError::err("count should be greater than 0"));
        for (line, want) in [
            ("0 a min", numkeys.clone()),
            ("-1 a min", numkeys.clone()),
            ("x a min", numkeys),
            ("2 a min", Err(CmdError::Syntax)),
            ("1 a foo", Err(CmdError::Syntax)),
            ("1 a min count 0", count.clone()),
            ("1 a min count x", count),
            ("1 a min count 1 count 1", Err(CmdError::Syntax)),
            ("1 a min foo", Err(CmdError::Syntax)),
            ("1 a min count", Err(CmdError::Syntax)),
        ] {
            assert_eq!(parse(line), want, "{line}");
        }
    }
}
