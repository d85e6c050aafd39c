//! LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len] — the index of the first match
//! of `element` (nil when none), or with COUNT an array of up to `num-matches` indexes (0 = all).
//! RANK picks which match to start from (negative: walk from the tail); MAXLEN bounds how many
//! elements are compared. <https://redis.io/commands/lpos/>
//!
//! Options are checked before the key, each error with Redis's own text; a repeated option
//! keeps its last value.

use crate::args::Args;
use crate::cmd::counted;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use relis::LposOptions;
use resp::Frame;

/// LPOS's declaration.
pub const SPEC: Spec = Spec {
    name: "lpos",
    arity: -3,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "list", "slow"]),
    keys: (1, 1, 1),
    group: "list",
    since: "6.0.6",
    summary: "Return the index of matching elements on a list",
    complexity: "O(N) where N is the number of elements in the list, for the average case. When searching for elements near the head or the tail of the list, or when the MAXLEN option is provided, the command may run in constant time.",
    parse: LPos::parse,
    key_flags: Spec::key_flags(&["RO", "access"]),
    ..Spec::BASE
};

/// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len].
#[derive(Debug, PartialEq, Eq)]
pub struct LPos {
    key: Bytes,
    element: Bytes,
    opts: LposOptions,
}

/// A non-negative long, with `err` for every failure (Redis's `getPositiveLongFromObjectOrReply`).
fn non_negative(arg: &[u8], err: CmdError) -> Result<i64, CmdError> {
    relis::parse_i64(arg).filter(|n| *n >= 0).ok_or(err)
}

impl LPos {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let element = args.next()?;
        let mut opts = LposOptions::default();
        while let Some(opt) = args.peek().cloned() {
            args.next()?;
            // An option needs its value; alone it is a syntax error.
            if args.is_empty() {
                return Err(CmdError::Syntax);
            }
            if opt.eq_ignore_ascii_case(b"rank") {
                opts.rank = args.next_i64()?;
                if opts.rank == 0 {
                    return Err(CmdError::LPOS_RANK_ZERO);
                }
            } else if opt.eq_ignore_ascii_case(b"count") {
                opts.count = Some(non_negative(&args.next()?, CmdError::LPOS_COUNT_NEGATIVE)?);
            } else if opt.eq_ignore_ascii_case(b"maxlen") {
                opts.maxlen = non_negative(&args.next()?, CmdError::LPOS_MAXLEN_NEGATIVE)?;
            } else {
                return Err(CmdError::Syntax);
            }
        }
        args.finish()?;
        Parsed::read(LPos { key, element, opts })
    }
}

impl ReadCmd for LPos {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let found = counted(
            cx,
            &self.key,
            r.lpos(cx.db, &self.key, &self.element, self.opts),
        )?;
        let found = found.unwrap_or_default();
        Ok(match self.opts.count {
            Some(_) => Frame::Array(found.into_iter().map(Frame::Integer).collect()),
            None => found.first().map_or(Frame::Null, |i| Frame::Integer(*i)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_err;
    use super::*;

    #[test]
    fn parse_errors() {
        let p = |l| parse_err(LPos::parse, "lpos", l);
        assert_eq!(p("k e"), None);
        assert_eq!(p("k e RANK -1 count 0 maxlen 2 rank 2"), None);
        assert!(p("k e rank 0")
            .unwrap()
            .starts_with("ERR RANK can't be zero"));
        assert_eq!(
            p("k e rank x").as_deref(),
            Some("ERR value is not an integer or out of range")
        );
        assert_eq!(
            p("k e count -1").as_deref(),
            Some("ERR COUNT can't be negative")
        );
        assert_eq!(
            p("k e count x").as_deref(),
            Some("ERR COUNT can't be negative")
        );
        assert_eq!(
            p("k e maxlen x").as_deref(),
            Some("ERR MAXLEN can't be negative")
        );
        assert_eq!(p("k e rank").as_deref(), Some("ERR syntax error"));
        assert_eq!(p("k e bogus 1").as_deref(), Some("ERR syntax error"));
    }
}
