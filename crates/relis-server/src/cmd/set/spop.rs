//! SPOP key [count] — removes and returns a random member of the set at `key` (nil when there is
//! none), or up to `count` distinct random members (a RESP3 set; the whole set, deleting the key,
//! when it has no more). <https://redis.io/commands/spop/>
//!
//! A random member is found by position in member order, O(N) at worst (see the engine's
//! `set.rs`); with a count the set is walked once.

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// SPOP's declaration.
pub const SPEC: Spec = Spec {
    name: "spop",
    arity: -2,
    flags: Spec::flags(&["write", "fast"]),
    acl: Spec::acl(&["write", "set", "fast"]),
    keys: (1, 1, 1),
    group: "set",
    since: "1.0.0",
    summary: "Remove and return one or multiple random members from a set",
    complexity:
        "Without the count argument O(1), otherwise O(N) where N is the value of the passed count.",
    parse: SPop::parse,
    tips: &["nondeterministic_output"],
    key_flags: Spec::key_flags(&["RW", "access", "delete"]),
    ..Spec::BASE
};

/// SPOP key [count].
#[derive(Debug, PartialEq, Eq)]
pub struct SPop {
    key: Bytes,
    count: Option<u64>,
}

impl SPop {
    fn from_args(args: &mut Args) -> Result<SPop, CmdError> {
        let key = args.next()?;
        let count = match args.remaining() {
            0 => None,
            // Redis reads the count as a long in 0..=LONG_MAX, with one text for every failure.
            1 => Some(
                relis::parse_i64(&args.next()?)
                    .and_then(|n| u64::try_from(n).ok())
                    .ok_or(CmdError::NOT_POSITIVE)?,
            ),
            _ => return Err(CmdError::Syntax),
        };
        args.finish()?;
        Ok(SPop { key, count })
    }

    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::write(SPop::from_args(args)?)
    }
}

impl WriteCmd for SPop {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let (popped, reply) = match self.count {
            None => {
                let v = w.spop(cx.db, &self.key)?;
                (v.is_some(), v.map_or(Frame::Null, Frame::Bulk))
            }
            Some(n) => {
                let v = w.spop_count(cx.db, &self.key, n)?;
                (!v.is_empty(), super::set_reply(v))
            }
        };
        if popped {
            w.notify(relis::events::class::SET, "spop", cx.db, &self.key);
            crate::pubsub::notify_if_emptied(w, cx.db, &self.key)?;
        }
        Ok(reply)
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
    fn counts() {
        let parse = |line| SPop::from_args(&mut super::super::args_of("spop", line));
        let positive = Err(CmdError::err("value is out of range, must be positive"));
        assert_eq!(parse("s").unwrap().count, None);
        assert_eq!(parse("s 0").unwrap().count, Some(0));
        assert_eq!(
            parse("s 9223372036854775807").unwrap().count,
            Some(i64::MAX as u64)
        );
        for bad in ["s -1", "s x", "s 01", "s -0", "s 99999999999999999999"] {
            assert_eq!(parse(bad), positive, "{bad}");
        }
        assert_eq!(parse("s 1 2"), Err(CmdError::Syntax));
        assert_eq!(parse("s x y"), Err(CmdError::Syntax), "before the count");
    }
}
