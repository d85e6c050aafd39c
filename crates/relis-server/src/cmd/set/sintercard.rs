//! SINTERCARD numkeys key [key ...] [LIMIT limit] — the size of the intersection of the sets,
//! counting no further than `limit` (0, the default, means no limit).
//! <https://redis.io/commands/sintercard/>

use crate::args::Args;
use crate::cmd::{Cx, FindKeys, KeySpec, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// SINTERCARD's declaration.
pub const SPEC: Spec = Spec {
    name: "sintercard",
    key_specs: &[
        KeySpec {
            flags: Spec::key_flags(&["RO", "access"]),
            index: 1,
            notes: "",
            find: FindKeys::Keynum(0, 1, 1),
        },
    ],
    find_keys: Some(crate::cmd::zset::keys_after_numkeys),
    arity: -3,
    flags: Spec::flags(&["readonly", "movablekeys"]),
    acl: Spec::acl(&["read", "set", "slow"]),
    keys: (0, 0, 0),
    group: "set",
    since: "7.0.0",
    summary: "Intersect multiple sets and return the cardinality of the result",
    complexity: "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.",
    parse: SInterCard::parse,
    ..Spec::BASE
};

/// SINTERCARD numkeys key [key ...] [LIMIT limit].
#[derive(Debug, PartialEq, Eq)]
pub struct SInterCard {
    keys: Vec<Bytes>,
    limit: u64,
}

impl SInterCard {
    fn from_args(args: &mut Args) -> Result<SInterCard, CmdError> {
        let numkeys = relis::parse_i64(&args.next()?)
            .filter(|n| *n > 0)
            .ok_or(CmdError::NUMKEYS_NOT_POSITIVE)?;
        if numkeys as u64 > args.remaining() as u64 {
            return Err(CmdError::NUMKEYS_OVER_ARGS);
        }
        let keys = (0..numkeys)
            .map(|_| args.next())
            .collect::<Result<_, _>>()?;
        let mut limit = 0;
        while !args.is_empty() {
            if args.remaining() >= 2 && args.eat("limit") {
                limit = relis::parse_i64(&args.next()?)
                    .and_then(|n| u64::try_from(n).ok())
                    .ok_or(CmdError::LIMIT_NEGATIVE)?;
            } else {
                return Err(CmdError::Syntax);
            }
        }
        args.finish()?;
        Ok(SInterCard { keys, limit })
    }

    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::read(SInterCard::from_args(args)?)
    }
}

impl ReadCmd for SInterCard {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let n = r.sintercard(cx.db, &self.keys, self.limit, &mut |k, found| {
            cx.hit(k, found)
        })?;
        Ok(Frame::Integer(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options() {
        let parse = |line| SInterCard::from_args(&mut super::super::args_of("sintercard", line));
        let s = parse("2 a b").unwrap();
        assert_eq!((s.keys.len(), s.limit), (2, 0));
        let s = parse("1 a LIMIT 5 limit 3").unwrap();
        assert_eq!((s.keys.len(), s.limit), (1, 3));
        let numkeys = Err(CmdError::err("numkeys should be greater than 0"));
        for bad in ["0 a", "-1 a", "x a", "99999999999999999999 a"] {
            assert_eq!(parse(bad), numkeys, "{bad}");
        }
        assert_eq!(
            parse("3 a b"),
            Err(CmdError::err(
                "Number of keys can't be greater than number of args"
            ))
        );
        let negative = Err(CmdError::err("LIMIT can't be negative"));
        assert_eq!(parse("1 a limit -1"), negative);
        assert_eq!(parse("1 a limit x"), negative);
        assert_eq!(parse("1 a limit"), Err(CmdError::Syntax));
        assert_eq!(parse("1 a foo 2"), Err(CmdError::Syntax));
        // The keys are taken by count: "limit" there is a key.
        assert_eq!(parse("2 a limit").unwrap().keys.len(), 2);
    }
}
