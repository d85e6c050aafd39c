//! The stream family, with Redis 7.0's replies under RESP2 and RESP3: an entry is
//! `[id, [field, value, ...]]`; XREAD replies an array of `[key, entries]` pairs (a map in
//! RESP3) or, when there is nothing, a null array (`_` in RESP3).
//!
//! Ids are parsed as Redis's `streamGenericParseIDOrReply` parses them: `ms-seq` or `ms` (the
//! missing sequence filled in by the caller: 0 for a start, the largest for an end), `-` and `+`
//! where a range allows them, `ms-*` only for XADD.
//!
//! XADD declares `unblocks`: right after it, in the same transaction, clients blocked in
//! XREAD on its key are served (see `blocking.rs`).

pub mod xack;
pub mod xadd;
pub mod xautoclaim;
pub mod xclaim;
pub mod xdel;
pub mod xgroup;
pub mod xinfo;
pub mod xlen;
pub mod xpending;
pub mod xrange;
pub mod xread;
pub mod xreadgroup;
pub mod xsetid;
pub mod xtrim;

use crate::args::Args;
use crate::cmd::Spec;
use crate::error::CmdError;
use bytes::Bytes;
use relis::{StreamEntry, StreamId, Trim, TrimTo};
use resp::Frame;

/// The stream commands, in Redis's COMMAND order.
pub static SPECS: &[Spec] = &[
    xadd::SPEC,
    xrange::SPEC,
    xrange::SPEC_XREVRANGE,
    xlen::SPEC,
    xread::SPEC,
    xdel::SPEC,
    xtrim::SPEC,
    xsetid::SPEC,
    xgroup::SPEC,
    xreadgroup::SPEC,
    xack::SPEC,
    xpending::SPEC,
    xclaim::SPEC,
    xautoclaim::SPEC,
    xinfo::SPEC,
];

/// `ERR Invalid stream ID specified as stream command argument`
pub(crate) fn invalid_id() -> CmdError {
    CmdError::INVALID_STREAM_ID
}

/// Redis's `string2ull`: `string2ll` when it fits (a negative value fails), else `strtoull`'s
/// syntax (leading white space, a sign, digits to the end, no overflow).
fn parse_u64(b: &[u8]) -> Option<u64> {
    if let Some(n) = relis::parse_i64(b) {
        return u64::try_from(n).ok();
    }
    let s = b
        .iter()
        .position(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c))
        .map_or(&b[b.len()..], |i| &b[i..]);
    let (neg, digits) = match s.first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut n: u64 = 0;
    for d in digits {
        n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    // strtoull negates a negative number; -0 is all string2ll let through.
    Some(if neg { n.wrapping_neg() } else { n })
}

/// What an id argument may be besides `ms-seq` / `ms`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum IdForm {
    /// `-` and `+` allowed (range bounds).
    Range,
    /// Neither (Redis's strict parse).
    Strict,
}

/// Parses one id; a bare `ms` gets `missing_seq`.
fn parse_id_form(arg: &[u8], missing_seq: u64, form: IdForm) -> Result<StreamId, CmdError> {
    // Redis copies the argument to a 128-byte buffer and reads it as a C string.
    if arg.len() > 127 {
        return Err(invalid_id());
    }
    let arg = match arg.iter().position(|&c| c == 0) {
        Some(i) => &arg[..i],
        None => arg,
    };
    match arg {
        b"-" if form == IdForm::Range => return Ok(StreamId::MIN),
        b"+" if form == IdForm::Range => return Ok(StreamId::MAX),
        b"-" | b"+" => return Err(invalid_id()),
        _ => {}
    }
    let (ms, seq) = match arg.iter().position(|&c| c == b'-') {
        Some(i) => (&arg[..i], Some(&arg[i + 1..])),
        None => (arg, None),
    };
    let ms = parse_u64(ms).ok_or_else(invalid_id)?;
    let seq = match seq {
        None => missing_seq,
        Some(s) => parse_u64(s).ok_or_else(invalid_id)?,
    };
    Ok(StreamId::new(ms, seq))
}

/// A strict id (no `-`/`+`): XDEL, XSETID, XREAD, MINID.
pub(crate) fn parse_strict_id(arg: &[u8]) -> Result<StreamId, CmdError> {
    parse_id_form(arg, 0, IdForm::Strict)
}

/// XADD's id: `*`, `ms-*`, `ms-seq` or `ms`.
pub(crate) fn parse_xadd_id(arg: &[u8]) -> Result<relis::XAddId, CmdError> {
    if arg == b"*" {
        return Ok(relis::XAddId::Auto);
    }
    if let Some(ms) = arg.strip_suffix(b"-*") {
        if arg.len() <= 127 && !ms.contains(&0) {
            return Ok(relis::XAddId::AutoSeq(
                parse_u64(strip_to_dash(ms)?).ok_or_else(invalid_id)?,
            ));
        }
    }
    Ok(relis::XAddId::Explicit(parse_strict_id(arg)?))
}

/// `ms` of an `ms-*` id must itself hold no dash (Redis splits at the first one).
fn strip_to_dash(ms: &[u8]) -> Result<&[u8], CmdError> {
    if ms.contains(&b'-') {
        Err(invalid_id())
    } else {
        Ok(ms)
    }
}

/// A range bound: `-`, `+`, `ms-seq`, `ms` (completed with `missing_seq`), or `(id` for an
/// exclusive one (strict). Returns the id and whether it is exclusive.
pub(crate) fn parse_bound(arg: &[u8], missing_seq: u64) -> Result<(StreamId, bool), CmdError> {
    if arg.len() > 1 && arg[0] == b'(' {
        return Ok((parse_id_form(&arg[1..], missing_seq, IdForm::Strict)?, true));
    }
    let id = parse_id_form(arg, missing_seq, IdForm::Range)?;
    Ok((id, false))
}

/// An entry as Redis replies it: `[id, [field, value, ...]]`.
pub(crate) fn entry_frame(e: StreamEntry) -> Frame {
    Frame::Array(vec![
        Frame::Bulk(Bytes::from(e.id.to_string())),
        Frame::Array(e.fields.into_iter().map(Frame::Bulk).collect()),
    ])
}

/// Entries as an array.
pub(crate) fn entries_frame(entries: Vec<StreamEntry>) -> Frame {
    Frame::Array(entries.into_iter().map(entry_frame).collect())
}

/// The trim clause of XADD and XTRIM, parsed as Redis's `streamParseAddOrTrimArgsOrReply`.
pub(crate) struct TrimArgs {
    /// The trim, if a strategy was given.
    pub trim: Option<Trim>,
    /// XADD's NOMKSTREAM.
    pub nomkstream: bool,
    /// XADD's id argument (where the options stopped), if any.
    pub id: Option<Bytes>,
}

/// Reads options until XADD's id (`xadd`) or the end (XTRIM, which stops at the first word it
/// does not know and leaves it for the caller's syntax error).
pub(crate) fn parse_trim_args(args: &mut Args, xadd: bool) -> Result<TrimArgs, CmdError> {
    let mut rest: std::collections::VecDeque<Bytes> = args.rest().into();
    let mut trim: Option<(TrimTo, bool)> = None;
    let (mut limit, mut limit_given, mut nomkstream) = (0i64, false, false);
    let mut id = None;
    while let Some(opt) = rest.front().cloned() {
        let more = rest.len() - 1;
        if xadd && opt.as_ref() == b"*" {
            id = rest.pop_front();
            break;
        }
        let maxlen = opt.eq_ignore_ascii_case(b"maxlen");
        if (maxlen || opt.eq_ignore_ascii_case(b"minid")) && more > 0 {
            if trim.is_some() {
                return Err(CmdError::TRIM_MAXLEN_AND_MINID);
            }
            rest.pop_front();
            let mut approx = false;
            if more >= 2 && rest[0].as_ref() == b"~" {
                approx = true;
                rest.pop_front();
            } else if more >= 2 && rest[0].as_ref() == b"=" {
                rest.pop_front();
            }
            let arg = rest.pop_front().ok_or(CmdError::Syntax)?;
            let to = if maxlen {
                let n = crate::args::parse_i64(&arg)?;
                if n < 0 {
                    return Err(CmdError::TRIM_MAXLEN_NEGATIVE);
                }
                TrimTo::MaxLen(n as u64)
            } else {
                TrimTo::MinId(parse_strict_id(&arg)?)
            };
            trim = Some((to, approx));
        } else if opt.eq_ignore_ascii_case(b"limit") && more > 0 {
            rest.pop_front();
            limit = crate::args::parse_i64(&rest.pop_front().ok_or(CmdError::Syntax)?)?;
            if limit < 0 {
                return Err(CmdError::TRIM_LIMIT_NEGATIVE);
            }
            limit_given = true;
        } else if xadd && opt.eq_ignore_ascii_case(b"nomkstream") {
            rest.pop_front();
            nomkstream = true;
        } else if xadd {
            // The id; an invalid one is the error here, before the arity of the fields.
            parse_xadd_id(&opt)?;
            id = rest.pop_front();
            break;
        } else {
            break;
        }
    }
    if limit != 0 && trim.is_none() {
        return Err(CmdError::TRIM_LIMIT_WITHOUT_STRATEGY);
    }
    if !xadd && trim.is_none() {
        return Err(CmdError::TRIM_NO_STRATEGY);
    }
    // Also without a strategy (LIMIT 0 passes the check above).
    if limit_given && !trim.is_some_and(|(_, approx)| approx) {
        return Err(CmdError::TRIM_LIMIT_WITHOUT_TILDE);
    }
    let trim = match trim {
        None => None,
        Some((to, approx)) => {
            // Redis's default for `~`: 100 * stream-node-max-entries (100).
            let limit = if limit_given {
                limit as u64
            } else if approx {
                100 * relis::TRIM_RUN
            } else {
                0
            };
            Some(Trim { to, approx, limit })
        }
    };
    // Put back what follows (XADD's fields, XTRIM's leftovers).
    *args = Args::new(args.name(), rest.into_iter().collect());
    Ok(TrimArgs {
        trim,
        nomkstream,
        id,
    })
}

#[cfg(test)]
pub(crate) use crate::args::args_of;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_as_redis_parses_them() {
        let id = |ms, seq| StreamId::new(ms, seq);
        assert_eq!(parse_strict_id(b"5"), Ok(id(5, 0)));
        assert_eq!(parse_strict_id(b"5-7"), Ok(id(5, 7)));
        assert_eq!(
            parse_strict_id(b"18446744073709551615-18446744073709551615"),
            Ok(StreamId::MAX)
        );
        for bad in [
            &b"-"[..],
            b"+",
            b"",
            b"abc",
            b"-5",
            b"5-",
            b"5-x",
            b"18446744073709551616",
            b"5-*",
            b"1-2-3",
        ] {
            assert_eq!(parse_strict_id(bad), Err(invalid_id()), "{bad:?}");
        }
        assert_eq!(parse_bound(b"-", 0), Ok((StreamId::MIN, false)));
        assert_eq!(parse_bound(b"+", u64::MAX), Ok((StreamId::MAX, false)));
        assert_eq!(parse_bound(b"7", u64::MAX), Ok((id(7, u64::MAX), false)));
        assert_eq!(parse_bound(b"(7-1", 0), Ok((id(7, 1), true)));
        assert_eq!(parse_bound(b"(-", 0), Err(invalid_id()));
        assert_eq!(parse_bound(b"(", 0), Err(invalid_id()));
        assert_eq!(parse_xadd_id(b"*"), Ok(relis::XAddId::Auto));
        assert_eq!(parse_xadd_id(b"9-*"), Ok(relis::XAddId::AutoSeq(9)));
        assert_eq!(parse_xadd_id(b"9-1"), Ok(relis::XAddId::Explicit(id(9, 1))));
        assert_eq!(parse_xadd_id(b"-*"), Err(invalid_id()));
        // Redis reads an id through a 128-byte buffer: a longer argument is invalid, however
        // it is padded.
        let long = format!("{}1-1", "0".repeat(125));
        assert_eq!(parse_strict_id(long.as_bytes()), Err(invalid_id()));
        assert_eq!(parse_strict_id(&long.as_bytes()[1..]), Ok(id(1, 1)));
        assert_eq!(parse_u64(b" +12"), Some(12));
        assert_eq!(parse_u64(b"012"), Some(12));
    }

    #[test]
    fn trim_clauses() {
        let t = |line| parse_trim_args(&mut args_of("xtrim", line), false).map(|a| a.trim);
        assert_eq!(
            t("maxlen ~ 5"),
            Ok(Some(Trim {
                to: TrimTo::MaxLen(5),
                approx: true,
                limit: 10_000
            }))
        );
        assert_eq!(
            t("maxlen = 5 limit 3"),
            Err(CmdError::err(
                "syntax error, LIMIT cannot be used without the special ~ option"
            ))
        );
        assert_eq!(
            t("limit 3"),
            Err(CmdError::err(
                "syntax error, LIMIT cannot be used without specifying a trimming strategy"
            ))
        );
        assert_eq!(
            t("maxlen -1"),
            Err(CmdError::err("The MAXLEN argument must be >= 0."))
        );
        assert_eq!(
            t("minid 1 maxlen 1"),
            Err(CmdError::err(
                "syntax error, MAXLEN and MINID options at the same time are not compatible"
            ))
        );
    }
}

/// The options of XREAD and XREADGROUP, parsed by one loop as Redis's `xreadCommand` parses
/// both (GROUP and NOACK are XREADGROUP's, and XREAD says so).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadArgs {
    /// COUNT (0: no limit).
    pub count: u64,
    /// `None`: no BLOCK; `Some(None)`: BLOCK 0 (forever).
    pub block: Option<Option<std::time::Duration>>,
    /// NOACK.
    pub noack: bool,
    /// GROUP group consumer.
    pub group: Option<(Bytes, Bytes)>,
    /// The keys after STREAMS.
    pub keys: Vec<Bytes>,
    /// Their ids.
    pub ids: Vec<Bytes>,
}

impl ReadArgs {
    /// Parses `[COUNT n] [BLOCK ms] [GROUP g c] [NOACK] STREAMS key ... id ...`; `group` says
    /// whether this is XREADGROUP.
    ///
    /// # Errors
    /// Redis's texts for each option, in the order the options come.
    pub fn parse(args: &mut Args, group: bool) -> Result<ReadArgs, CmdError> {
        let mut r = ReadArgs {
            count: 0,
            block: None,
            noack: false,
            group: None,
            keys: Vec::new(),
            ids: Vec::new(),
        };
        let only_group = |what: &str| {
            CmdError::err(format!(
                "The {what} option is only supported by XREADGROUP. You called XREAD instead."
            ))
        };
        let mut streams = None;
        while let Some(a) = args.peek().cloned() {
            let more = args.remaining() - 1;
            if a.eq_ignore_ascii_case(b"block") && more > 0 {
                args.next()?;
                let ms = args
                    .next_i64()
                    .map_err(|_| CmdError::err("timeout is not an integer or out of range"))?;
                if ms < 0 {
                    return Err(CmdError::err("timeout is negative"));
                }
                r.block = Some((ms > 0).then(|| std::time::Duration::from_millis(ms as u64)));
            } else if a.eq_ignore_ascii_case(b"count") && more > 0 {
                args.next()?;
                r.count = args.next_i64()?.max(0) as u64;
            } else if a.eq_ignore_ascii_case(b"streams") && more > 0 {
                args.next()?;
                let rest = args.rest();
                // Redis 7.0's text, which names XREAD and `$` for XREADGROUP too.
                if !rest.len().is_multiple_of(2) {
                    return Err(CmdError::err(
                        "Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.",
                    ));
                }
                streams = Some(rest);
                break;
            } else if a.eq_ignore_ascii_case(b"group") && more >= 2 {
                if !group {
                    return Err(only_group("GROUP"));
                }
                args.next()?;
                r.group = Some((args.next()?, args.next()?));
            } else if a.eq_ignore_ascii_case(b"noack") {
                if !group {
                    return Err(only_group("NOACK"));
                }
                args.next()?;
                r.noack = true;
            } else {
                return Err(CmdError::Syntax);
            }
        }
        r.keys = streams.ok_or(CmdError::Syntax)?;
        r.ids = r.keys.split_off(r.keys.len() / 2);
        Ok(r)
    }
}
