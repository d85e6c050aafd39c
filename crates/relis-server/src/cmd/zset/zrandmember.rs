//! ZRANDMEMBER key [count [WITHSCORES]] — random members. <https://redis.io/commands/zrandmember/>
//!
//! Without a count: one member (a bulk string, nil for a missing key). A positive count: that
//! many distinct members, the whole set (highest score first, as Redis iterates it) when it has
//! no more; a negative count: `-count` members, repeats allowed. WITHSCORES adds the scores
//! (flat under RESP2, `[member, score]` pairs under RESP3). The count and options are checked
//! before the key is looked up.

use super::scored_reply;
use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// ZRANDMEMBER's declaration.
pub const SPEC: Spec = Spec {
    name: "zrandmember",
    arity: -2,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "sortedset", "slow"]),
    keys: (1, 1, 1),
    group: "sorted-set",
    since: "6.2.0",
    summary: "Get one or multiple random elements from a sorted set",
    complexity: "O(N) where N is the number of elements returned",
    parse: ZRandMember::parse,
    tips: &["nondeterministic_output"],
    ..Spec::BASE
};

/// ZRANDMEMBER key [count [WITHSCORES]].
#[derive(Debug, PartialEq, Eq)]
pub struct ZRandMember {
    key: Bytes,
    count: Option<i64>,
    withscores: bool,
}

impl ZRandMember {
    fn from_args(args: &mut Args) -> Result<ZRandMember, CmdError> {
        let key = args.next()?;
        let mut z = ZRandMember {
            key,
            count: None,
            withscores: false,
        };
        if args.is_empty() {
            return Ok(z);
        }
        let count = args.next_i64()?;
        if count == i64::MIN {
            return Err(CmdError::OUT_OF_LONG_RANGE);
        }
        if args.remaining() > 1 {
            return Err(CmdError::Syntax);
        }
        if !args.is_empty() {
            if !args.eat("withscores") {
                return Err(CmdError::Syntax);
            }
            if !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&count) {
                return Err(CmdError::OUT_OF_RANGE);
            }
            z.withscores = true;
        }
        args.finish()?;
        z.count = Some(count);
        Ok(z)
    }

    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::read(ZRandMember::from_args(args)?)
    }
}

impl ReadCmd for ZRandMember {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let picked =
            crate::cmd::counted(cx, &self.key, r.zrandmember(cx.db, &self.key, self.count))?;
        Ok(match (self.count, picked) {
            (None, None) => Frame::Null,
            (None, Some(mut v)) => v.pop().map_or(Frame::Null, |(m, _)| Frame::Bulk(m)),
            (Some(_), v) => scored_reply(v.unwrap_or_default(), self.withscores, cx.proto),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_options() {
        let parse = |line| ZRandMember::from_args(&mut super::super::args_of("zrandmember", line));
        assert_eq!(parse("k").unwrap().count, None);
        let z = parse("k -5 WITHSCORES").unwrap();
        assert_eq!((z.count, z.withscores), (Some(-5), true));
        for (line, want) in [
            ("k x", CmdError::NotInteger),
            (
                "k -9223372036854775808",
                CmdError::err("value is out of range, value must between -9223372036854775807 and 9223372036854775807"),
            ),
            ("k 5 withscore", CmdError::Syntax),
            ("k 5 withscores x", CmdError::Syntax),
            ("k 9223372036854775807 withscores", CmdError::err("value is out of range")),
            ("k 4611686018427387904 withscores", CmdError::err("value is out of range")),
        ] {
            assert_eq!(parse(line), Err(want), "{line}");
        }
        assert!(parse("k 4611686018427387903 withscores").is_ok());
        assert!(parse("k -4611686018427387903 withscores").is_ok());
    }
}
