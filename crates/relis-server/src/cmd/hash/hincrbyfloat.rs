//! HINCRBYFLOAT key field increment — adds a float to the number in `field` of the hash at
//! `key` (a missing field or key counts as 0), in C `long double` precision as Redis does, and
//! replies with the result as Redis prints it (no exponent, trailing zeros dropped), as a bulk
//! string in RESP3 too. <https://redis.io/commands/hincrbyfloat/>
//!
//! Redis checks the increment first (`ERR value is not a valid float`, and `ERR value is NaN or
//! Infinity` for an infinite one: `strtold` accepts hex and `inf` forms), then the key's type,
//! then the stored value (`ERR hash value is not a float`), then the sum
//! (`ERR increment would produce NaN or Infinity`).

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// HINCRBYFLOAT's declaration.
pub const SPEC: Spec = Spec {
    name: "hincrbyfloat",
    arity: 4,
    flags: Spec::flags(&["write", "denyoom", "fast"]),
    acl: Spec::acl(&["write", "hash", "fast"]),
    keys: (1, 1, 1),
    group: "hash",
    since: "2.6.0",
    summary: "Increment the float value of a hash field by the given amount",
    complexity: "O(1)",
    parse: HIncrByFloat::parse,
    key_flags: Spec::key_flags(&["RW", "access", "update"]),
    ..Spec::BASE
};

/// HINCRBYFLOAT key field increment.
#[derive(Debug, PartialEq, Eq)]
pub struct HIncrByFloat {
    key: Bytes,
    field: Bytes,
    incr: Bytes,
}

impl HIncrByFloat {
    fn from_args(args: &mut Args) -> Result<HIncrByFloat, CmdError> {
        let (key, field, incr) = (args.next()?, args.next()?, args.next()?);
        // Adding the increment to nothing checks it as Redis does (pure arithmetic, no I/O).
        match relis::add_float(None, &incr) {
            Ok(_) => {}
            Err(relis::Error::NanOrInfinity) => return Err(CmdError::VALUE_NAN_OR_INFINITY),
            Err(_) => return Err(CmdError::NotFloat),
        }
        args.finish()?;
        Ok(HIncrByFloat { key, field, incr })
    }

    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::write(HIncrByFloat::from_args(args)?)
    }
}

impl WriteCmd for HIncrByFloat {
    // Every error comes before the first write.
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }

    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        match w.hincrbyfloat(cx.db, &self.key, &self.field, &self.incr) {
            Ok(v) => {
                w.notify(relis::events::class::HASH, "hincrbyfloat", cx.db, &self.key);
                Ok(Frame::Bulk(v))
            }
            // The increment was checked already: this is the stored value.
            Err(relis::Error::NotFloat) => Err(CmdError::HASH_NOT_FLOAT),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::hash::args_of;

    #[test]
    fn the_increment_is_checked_at_parse_time() {
        let p = |line| HIncrByFloat::from_args(&mut args_of("hincrbyfloat", line));
        for ok in ["h f 1.5", "h f -1e10", "h f 0x10", "h f 1e400", "h f 5"] {
            assert!(p(ok).is_ok(), "{ok}");
        }
        for bad in ["h f x", "h f nan", "h f 1e5000", "h f 1.5x"] {
            assert_eq!(p(bad), Err(CmdError::NotFloat), "{bad}");
        }
        for inf in ["h f inf", "h f -inf", "h f +Infinity"] {
            assert_eq!(
                p(inf),
                Err(CmdError::err("value is NaN or Infinity")),
                "{inf}"
            );
        }
    }
}
