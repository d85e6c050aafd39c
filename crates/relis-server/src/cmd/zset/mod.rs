//! The sorted-set family. Scores are parsed as Redis parses them (C `strtod`: `inf`, exponents
//! and hex floats accepted, NaN refused) and replied with `addReplyDouble`'s shape: a bulk string
//! `%.17g` under RESP2, a double under RESP3. Member-and-score replies are flat arrays under
//! RESP2 and arrays of `[member, score]` pairs under RESP3, as Redis 7.0 sends them.
//!
//! Commands that can make a sorted set non-empty (ZADD, ZINCRBY, the STORE commands) declare
//! `unblocks`: the clients blocked on their destination by BZPOPMIN/BZPOPMAX/BZMPOP are served
//! right after them, in the same transaction (see `blocking.rs`).

pub mod bzpop;
pub mod zadd;
pub mod zcard;
pub mod zcount;
pub mod zpop;
pub mod zrandmember;
pub mod zrange;
pub mod zrank;
pub mod zrem;
pub mod zremrange;
pub mod zscan;
pub mod zscore;
pub mod zsetop;

use crate::cmd::{FindKeys, KeySpec, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use relis::{LexBound, Scored};
use resp::{Frame, Protocol};

/// The sorted-set commands, in Redis's COMMAND order.
pub static SPECS: &[Spec] = &[
    zadd::SPEC,
    zadd::SPEC_ZINCRBY,
    zrem::SPEC,
    zremrange::SPEC_ZREMRANGEBYSCORE,
    zremrange::SPEC_ZREMRANGEBYRANK,
    zremrange::SPEC_ZREMRANGEBYLEX,
    zsetop::SPEC_ZUNIONSTORE,
    zsetop::SPEC_ZINTERSTORE,
    zsetop::SPEC_ZDIFFSTORE,
    zsetop::SPEC_ZUNION,
    zsetop::SPEC_ZINTER,
    zsetop::SPEC_ZINTERCARD,
    zsetop::SPEC_ZDIFF,
    zrange::SPEC_ZRANGESTORE,
    zrange::SPEC_ZRANGE,
    zrange::SPEC_ZRANGEBYSCORE,
    zrange::SPEC_ZREVRANGEBYSCORE,
    zrange::SPEC_ZRANGEBYLEX,
    zrange::SPEC_ZREVRANGEBYLEX,
    zcount::SPEC_ZCOUNT,
    zcount::SPEC_ZLEXCOUNT,
    zrange::SPEC_ZREVRANGE,
    zcard::SPEC,
    zscore::SPEC,
    zscore::SPEC_ZMSCORE,
    zrank::SPEC_ZRANK,
    zrank::SPEC_ZREVRANK,
    zscan::SPEC,
    zpop::SPEC_ZPOPMIN,
    zpop::SPEC_ZPOPMAX,
    zpop::SPEC_ZMPOP,
    bzpop::SPEC_BZPOPMIN,
    bzpop::SPEC_BZPOPMAX,
    bzpop::SPEC_BZMPOP,
    zrandmember::SPEC,
];

/// Records a pop's keyspace events: `zpopmin` / `zpopmax` on `key`, then `del` if it emptied
/// the set.
fn notify_pop(w: &mut relis::Writer<'_>, db: u32, key: &[u8], max: bool) -> relis::Result<()> {
    let event = if max { "zpopmax" } else { "zpopmin" };
    w.notify(relis::events::class::ZSET, event, db, key);
    crate::pubsub::notify_if_emptied(w, db, key)
}

/// A score or increment as Redis's `getDoubleFromObject` reads it: the whole argument is a
/// `strtod` number, without leading space, neither out of range nor NaN.
///
/// # Errors
/// `ERR value is not a valid float`.
pub fn parse_score(arg: &[u8]) -> Result<f64, CmdError> {
    parse_double(arg).ok_or(CmdError::NotFloat)
}

/// [`parse_score`] without the error text (WEIGHTS has its own).
pub fn parse_double(arg: &[u8]) -> Option<f64> {
    if arg.is_empty() || matches!(arg[0], b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        return None;
    }
    let (v, used, erange) = crate::args::strtod(arg);
    if used != arg.len() || erange || v.is_nan() {
        return None;
    }
    Some(v)
}

/// One end of a score range as Redis's `zslParseRange` reads it: an optional `(` for an
/// exclusive end, then a `strtod` number that must run to the end of the C string (so leading
/// space and an empty number, which is 0, pass; out of range is ±inf or 0; NaN is refused).
pub fn parse_score_bound(arg: &[u8]) -> Option<(f64, bool)> {
    let (ex, body) = match arg.first() {
        Some(b'(') => (true, &arg[1..]),
        _ => (false, arg),
    };
    let (v, used, _) = crate::args::strtod(body);
    // C stops at the first NUL byte.
    if used < body.len() && body[used] != 0 {
        return None;
    }
    if v.is_nan() {
        return None;
    }
    Some((v, ex))
}

/// A score range `min max`.
///
/// # Errors
/// `ERR min or max is not a float`.
pub fn parse_score_range(min: &[u8], max: &[u8]) -> Result<relis::ScoreRange, CmdError> {
    let err = || CmdError::MIN_MAX_NOT_FLOAT;
    let (min, min_ex) = parse_score_bound(min).ok_or_else(err)?;
    let (max, max_ex) = parse_score_bound(max).ok_or_else(err)?;
    Ok(relis::ScoreRange {
        min,
        min_ex,
        max,
        max_ex,
    })
}

/// One end of a lex range: `-`, `+`, `[member` or `(member` (Redis's `zslParseLexRangeItem`).
pub fn parse_lex_bound(arg: &[u8]) -> Option<LexBound> {
    match arg.first()? {
        b'+' if arg.len() == 1 => Some(LexBound::Max),
        b'-' if arg.len() == 1 => Some(LexBound::Min),
        b'[' => Some(LexBound::Incl(Bytes::copy_from_slice(&arg[1..]))),
        b'(' => Some(LexBound::Excl(Bytes::copy_from_slice(&arg[1..]))),
        _ => None,
    }
}

/// A lex range `min max`.
///
/// # Errors
/// `ERR min or max not valid string range item`.
pub fn parse_lex_range(min: &[u8], max: &[u8]) -> Result<relis::LexRange, CmdError> {
    let err = || CmdError::MIN_MAX_NOT_LEX;
    Ok(relis::LexRange {
        min: parse_lex_bound(min).ok_or_else(err)?,
        max: parse_lex_bound(max).ok_or_else(err)?,
    })
}

/// A destination (`OW update`) at 1, then `numkeys` sources (`RO access`) from 2: the STORE
/// commands' key specs.
const STORE_KEY_SPECS: &[KeySpec] = &[
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
        find: FindKeys::Keynum(0, 1, 1),
    },
];

/// `numkeys` sources (`RO access`) from 1: ZUNION, ZINTER, ZDIFF, ZINTERCARD.
const READ_KEY_SPECS: &[KeySpec] = &[KeySpec {
    flags: Spec::key_flags(&["RO", "access"]),
    index: 1,
    notes: "",
    find: FindKeys::Keynum(0, 1, 1),
}];

/// The key positions of a command line whose keys follow a `numkeys` argument at `at` (Redis's
/// `keynum` key spec), after the keys before it (`fixed`); none when numkeys is not a positive
/// integer or runs past the line (COMMAND GETKEYS then says the arguments are invalid).
fn numkeys_keys(argv: &[Bytes], at: usize, fixed: &[usize]) -> Vec<usize> {
    let Some(n) = argv.get(at).and_then(|a| relis::parse_i64(a)) else {
        return Vec::new();
    };
    if n < 1 || n as u64 >= (argv.len() - at) as u64 {
        return Vec::new();
    }
    fixed
        .iter()
        .copied()
        .chain(at + 1..=at + n as usize)
        .collect()
}

/// Keys after `numkeys` at position 1 (ZUNION, ZINTER, ZDIFF, ZINTERCARD, ZMPOP).
pub(crate) fn keys_after_numkeys(argv: &[Bytes]) -> Vec<usize> {
    numkeys_keys(argv, 1, &[])
}

/// The destination, then keys after `numkeys` at position 2 (the STORE commands).
fn store_keys(argv: &[Bytes]) -> Vec<usize> {
    numkeys_keys(argv, 2, &[1])
}

/// Keys after `numkeys` at position 2, after the timeout (BZMPOP).
fn bzmpop_keys(argv: &[Bytes]) -> Vec<usize> {
    numkeys_keys(argv, 2, &[])
}

/// An integer that Redis reads with `getRangeLongFromObjectOrReply(.., 1, LONG_MAX, msg)`: any
/// failure replies `err`.
fn parse_positive(arg: &[u8], err: CmdError) -> Result<i64, CmdError> {
    match relis::parse_i64(arg) {
        Some(n) if n >= 1 => Ok(n),
        _ => Err(err),
    }
}

/// A member and score pair for RESP3 (`[member, score]`).
fn pair(m: Bytes, s: f64) -> Frame {
    Frame::Array(vec![Frame::Bulk(m), Frame::Double(s)])
}

/// Members, with their scores when asked: flat under RESP2, pairs under RESP3.
fn scored_reply(items: Vec<Scored>, withscores: bool, proto: Protocol) -> Frame {
    if !withscores {
        return Frame::Array(items.into_iter().map(|(m, _)| Frame::Bulk(m)).collect());
    }
    if proto == Protocol::Resp2 {
        let mut out = Vec::with_capacity(items.len() * 2);
        for (m, s) in items {
            out.push(Frame::Bulk(m));
            out.push(Frame::Double(s));
        }
        Frame::Array(out)
    } else {
        Frame::Array(items.into_iter().map(|(m, s)| pair(m, s)).collect())
    }
}

/// Members and scores always as `[member, score]` pairs (ZMPOP and friends, both protocols).
fn pairs_reply(items: Vec<Scored>) -> Frame {
    Frame::Array(items.into_iter().map(|(m, s)| pair(m, s)).collect())
}

#[cfg(test)]
pub(crate) use crate::args::args_of;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_parse_like_strtod() {
        let ok: &[(&[u8], f64)] = &[
            (b"1", 1.0),
            (b"-1.5", -1.5),
            (b"+2", 2.0),
            (b"1e3", 1000.0),
            (b"1E-2", 0.01),
            // Denormals are no underflow for Redis (redis-server 7.0.15 takes both).
            (b"4e-320", 4e-320),
            (b"0x1p-1074", f64::from_bits(1)),
            (b".5", 0.5),
            (b"5.", 5.0),
            (b"inf", f64::INFINITY),
            (b"+inf", f64::INFINITY),
            (b"-inf", f64::NEG_INFINITY),
            (b"Infinity", f64::INFINITY),
            (b"0x10", 16.0),
            (b"0x1p4", 16.0),
            (b"0x.8", 0.5),
            (b"-0", 0.0),
            (b"4.9e-324", 4.9e-324),
        ];
        for (s, want) in ok {
            assert_eq!(
                parse_double(s),
                Some(*want),
                "{}",
                String::from_utf8_lossy(s)
            );
        }
        for s in [
            &b""[..],
            b" 1",
            b"1 ",
            b"nan",
            b"-nan",
            b"1e400",
            b"1e-400",
            b"abc",
            b"1x",
            b"0x",
            b"1\x00",
            b"infx",
            b"--1",
        ] {
            assert_eq!(parse_double(s), None, "{}", String::from_utf8_lossy(s));
        }
    }

    #[test]
    fn score_bounds_parse_like_zsl_parse_range() {
        assert_eq!(parse_score_bound(b"(1.5"), Some((1.5, true)));
        assert_eq!(parse_score_bound(b"1.5"), Some((1.5, false)));
        assert_eq!(parse_score_bound(b""), Some((0.0, false)));
        assert_eq!(parse_score_bound(b"("), Some((0.0, true)));
        assert_eq!(parse_score_bound(b" 1"), Some((1.0, false)));
        assert_eq!(parse_score_bound(b"1e500"), Some((f64::INFINITY, false)));
        assert_eq!(parse_score_bound(b"-inf"), Some((f64::NEG_INFINITY, false)));
        assert_eq!(parse_score_bound(b"1\x00junk"), Some((1.0, false)));
        assert_eq!(parse_score_bound(b"1 "), None);
        assert_eq!(parse_score_bound(b"nan"), None);
        assert_eq!(parse_score_bound(b"((1"), None);
        assert_eq!(parse_score_bound(b"x"), None);
    }

    #[test]
    fn keys_found_through_numkeys() {
        let argv = |line: &str| -> Vec<Bytes> {
            line.split_whitespace()
                .map(|a| Bytes::copy_from_slice(a.as_bytes()))
                .collect()
        };
        assert_eq!(store_keys(&argv("zunionstore d 2 a b")), vec![1, 3, 4]);
        assert_eq!(
            keys_after_numkeys(&argv("zunion 2 a b withscores")),
            vec![2, 3]
        );
        assert_eq!(bzmpop_keys(&argv("bzmpop 0 2 a b min")), vec![3, 4]);
        for line in [
            "zunion 5 a b",
            "zunion x a b",
            "zunion 0 a",
            "zunionstore d 3 a b",
        ] {
            let keys = if line.starts_with("zunionstore") {
                store_keys(&argv(line))
            } else {
                keys_after_numkeys(&argv(line))
            };
            assert!(keys.is_empty(), "{line}");
        }
    }

    #[test]
    fn lex_bounds() {
        assert_eq!(parse_lex_bound(b"-"), Some(LexBound::Min));
        assert_eq!(parse_lex_bound(b"+"), Some(LexBound::Max));
        assert_eq!(parse_lex_bound(b"["), Some(LexBound::Incl(Bytes::new())));
        assert_eq!(
            parse_lex_bound(b"(a"),
            Some(LexBound::Excl(Bytes::from_static(b"a")))
        );
        for s in [&b""[..], b"a", b"-a", b"+a"] {
            assert_eq!(parse_lex_bound(s), None);
        }
    }
}
