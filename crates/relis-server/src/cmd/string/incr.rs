//! INCR key, DECR key, INCRBY key increment, DECRBY key decrement — add to the integer stored
//! at `key` (a missing key counts as 0) and reply with the result; the key's TTL is kept.
//! <https://redis.io/commands/incr/>, <https://redis.io/commands/decr/>,
//! <https://redis.io/commands/incrby/>, <https://redis.io/commands/decrby/>
//!
//! One engine call, `incr_by`, checks the stored value and the overflow (STYLE.md: one
//! generic core). The amount is parsed before the key is looked at, as in Redis.

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

const fn spec(
    name: &'static str,
    arity: i32,
    summary: &'static str,
    parse: crate::cmd::ParseFn,
) -> Spec {
    Spec {
        name,
        arity,
        flags: Spec::flags(&["write", "denyoom", "fast"]),
        acl: Spec::acl(&["write", "string", "fast"]),
        keys: (1, 1, 1),
        group: "string",
        since: "1.0.0",
        summary,
        complexity: "O(1)",
        parse,
        ..Spec::BASE
    }
}

/// INCR's declaration.
pub const SPEC_INCR: Spec = spec(
    "incr",
    2,
    "Increment the integer value of a key by one",
    Incr::parse_incr,
);
/// DECR's declaration.
pub const SPEC_DECR: Spec = spec(
    "decr",
    2,
    "Decrement the integer value of a key by one",
    Incr::parse_decr,
);
/// INCRBY's declaration.
pub const SPEC_INCRBY: Spec = spec(
    "incrby",
    3,
    "Increment the integer value of a key by the given amount",
    Incr::parse_incrby,
);
/// DECRBY's declaration.
pub const SPEC_DECRBY: Spec = spec(
    "decrby",
    3,
    "Decrement the integer value of a key by the given number",
    Incr::parse_decrby,
);

/// Adds `delta` to the integer at `key`.
#[derive(Debug, PartialEq, Eq)]
pub struct Incr {
    key: Bytes,
    delta: i64,
}

impl Incr {
    fn with_delta(
        args: &mut Args,
        delta: impl FnOnce(&mut Args) -> Result<i64, CmdError>,
    ) -> Result<Incr, CmdError> {
        let key = args.next()?;
        let delta = delta(args)?;
        args.finish()?;
        Ok(Incr { key, delta })
    }

    fn parse_incr(args: &mut Args) -> Result<Parsed, CmdError> {
        Incr::with_delta(args, |_| Ok(1)).and_then(Parsed::write)
    }

    fn parse_decr(args: &mut Args) -> Result<Parsed, CmdError> {
        Incr::with_delta(args, |_| Ok(-1)).and_then(Parsed::write)
    }

    fn parse_incrby(args: &mut Args) -> Result<Parsed, CmdError> {
        Incr::with_delta(args, Args::next_i64).and_then(Parsed::write)
    }

    fn parse_decrby(args: &mut Args) -> Result<Parsed, CmdError> {
        Incr::with_delta(args, decrement).and_then(Parsed::write)
    }
}

/// DECRBY's amount, negated. -i64::MIN does not exist; Redis has its own text for it.
fn decrement(args: &mut Args) -> Result<i64, CmdError> {
    args.next_i64()?
        .checked_neg()
        .ok_or(CmdError::DECR_OVERFLOW)
}

impl WriteCmd for Incr {
    // Every error of this command comes before its first write (see WriteCmd::on_error).
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }

    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let n = w.incr_by(cx.db, &self.key, self.delta)?;
        // INCR, DECR, INCRBY and DECRBY are all `incrby` to Redis.
        w.notify(relis::events::class::STRING, "incrby", cx.db, &self.key);
        Ok(Frame::Integer(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(
        f: impl FnOnce(&mut Args) -> Result<Incr, CmdError>,
        line: &str,
    ) -> Result<i64, CmdError> {
        f(&mut super::super::args_of("x", line)).map(|i| i.delta)
    }

    #[test]
    fn deltas() {
        assert_eq!(parse(|a| Incr::with_delta(a, |_| Ok(1)), "k"), Ok(1));
        assert_eq!(
            parse(|a| Incr::with_delta(a, Args::next_i64), "k -5"),
            Ok(-5)
        );
        for bad in ["k abc", "k 1.5", "k +1", "k 01", "k 9223372036854775808"] {
            assert_eq!(
                parse(|a| Incr::with_delta(a, Args::next_i64), bad),
                Err(CmdError::NotInteger),
                "{bad}"
            );
        }
        let decrby = |a: &mut Args| Incr::with_delta(a, decrement);
        assert_eq!(parse(decrby, "k 5"), Ok(-5));
        assert_eq!(
            parse(decrby, "k -9223372036854775808"),
            Err(CmdError::err("decrement would overflow"))
        );
        assert_eq!(parse(decrby, "k -9223372036854775807"), Ok(i64::MAX));
    }
}
