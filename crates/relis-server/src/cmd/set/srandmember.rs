//! SRANDMEMBER key [count] — a random member of the set at `key` (nil when there is none), or
//! `count` distinct random members (the whole set when it has no more), or, for a negative
//! count, `-count` members picked independently, which may repeat. Replies with a count are
//! arrays, in RESP3 too. <https://redis.io/commands/srandmember/>
//!
//! Relis returns at most `relis::MAX_RANDOM_REPEATS` members for a negative count (a larger one
//! is `ERR value is not an integer or out of range`), where Redis would try to build any reply
//! and run out of memory.

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// SRANDMEMBER's declaration.
pub const SPEC: Spec = Spec {
    name: "srandmember",
    arity: -2,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "set", "slow"]),
    keys: (1, 1, 1),
    group: "set",
    since: "1.0.0",
    summary: "Get one or multiple random members from a set",
    complexity: "Without the count argument O(1), otherwise O(N) where N is the absolute value of the passed count.",
    parse: SRandMember::parse,
    tips: &["nondeterministic_output"],
    ..Spec::BASE
};

/// SRANDMEMBER key [count].
#[derive(Debug, PartialEq, Eq)]
pub struct SRandMember {
    key: Bytes,
    count: Option<i64>,
}

impl SRandMember {
    fn from_args(args: &mut Args) -> Result<SRandMember, CmdError> {
        let key = args.next()?;
        let count = match args.remaining() {
            0 => None,
            1 => {
                let n = args.next_i64()?;
                // Redis takes -LONG_MAX..=LONG_MAX, so that -count is a long too.
                if n == i64::MIN {
                    return Err(CmdError::OUT_OF_LONG_RANGE);
                }
                Some(n)
            }
            _ => return Err(CmdError::Syntax),
        };
        args.finish()?;
        Ok(SRandMember { key, count })
    }

    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::read(SRandMember::from_args(args)?)
    }
}

impl ReadCmd for SRandMember {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        Ok(match self.count {
            None => crate::cmd::counted(cx, &self.key, r.srandmember(cx.db, &self.key))?
                .map_or(Frame::Null, Frame::Bulk),
            Some(n) => {
                let found = r.srandmember_count(cx.db, &self.key, n);
                if found == Err(relis::Error::NotInteger) {
                    // Too many repeats asked of an existing set: the lookup was a hit.
                    cx.hit(&self.key, true);
                }
                super::array_reply(crate::cmd::counted(cx, &self.key, found)?.unwrap_or_default())
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        let parse = |line| SRandMember::from_args(&mut super::super::args_of("srandmember", line));
        assert_eq!(parse("s").unwrap().count, None);
        assert_eq!(parse("s -5").unwrap().count, Some(-5));
        assert_eq!(
            parse("s -9223372036854775807").unwrap().count,
            Some(-i64::MAX)
        );
        assert_eq!(
            parse("s -9223372036854775808"),
            Err(CmdError::err(
                "value is out of range, value must between -9223372036854775807 and 9223372036854775807"
            ))
        );
        assert_eq!(parse("s x"), Err(CmdError::NotInteger));
        assert_eq!(parse("s 99999999999999999999"), Err(CmdError::NotInteger));
        assert_eq!(parse("s 1 2"), Err(CmdError::Syntax));
    }
}
