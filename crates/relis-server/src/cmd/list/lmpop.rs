//! LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count] — pop up to `count` elements (default 1)
//! from the first non-empty list among the keys; reply `[key, [elements]]`, or a null array
//! when every key is empty. <https://redis.io/commands/lmpop/>
//!
//! Parsed as Redis's `lmpopGenericCommand`: numkeys (1..), then the end, then COUNT (once); a
//! key of another type met before a list is WRONGTYPE.

use super::{bulks, parse_end};
use crate::args::Args;
use crate::cmd::{Cx, FindKeys, KeySpec, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::End;
use resp::Frame;

/// LMPOP's declaration. Its keys are found through numkeys (`movablekeys`), so the legacy
/// key range is empty, as in Redis.
pub const SPEC: Spec = Spec {
    name: "lmpop",
    arity: -4,
    flags: Spec::flags(&["write", "movablekeys"]),
    acl: Spec::acl(&["write", "list", "slow"]),
    keys: (0, 0, 0),
    group: "list",
    since: "7.0.0",
    summary: "Pop elements from a list",
    complexity:
        "O(N+M) where N is the number of provided keys and M is the number of elements returned.",
    parse: LMPop::parse,
    key_flags: Spec::key_flags(&["RW", "access", "delete"]),
    find_keys: Some(|argv| super::numkeys_keys(argv, 1)),
    key_specs: &[KeySpec {
        flags: Spec::key_flags(&["RW", "access", "delete"]),
        index: 1,
        notes: "",
        find: FindKeys::Keynum(0, 1, 1),
    }],
    ..Spec::BASE
};

/// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LMPop {
    /// The keys, in order.
    pub keys: Vec<Bytes>,
    /// The end to pop from.
    pub end: End,
    /// How many to pop at most.
    pub count: usize,
}

impl LMPop {
    /// Parses `numkeys key... LEFT|RIGHT [COUNT n]` (BLMPOP's arguments after its timeout).
    ///
    /// # Errors
    /// Redis's texts for a bad numkeys, end or count.
    pub fn from_args(args: &mut Args) -> Result<LMPop, CmdError> {
        let numkeys = relis::parse_i64(&args.next()?)
            .filter(|n| *n > 0)
            .ok_or(CmdError::NUMKEYS_NOT_POSITIVE)?;
        // The end must follow the keys.
        if numkeys as u64 >= args.remaining() as u64 {
            return Err(CmdError::Syntax);
        }
        let keys: Vec<Bytes> = (0..numkeys)
            .map(|_| args.next())
            .collect::<Result<_, _>>()?;
        let end = parse_end(&args.next()?)?;
        let mut count = None;
        while let Some(opt) = args.peek().cloned() {
            args.next()?;
            if count.is_none() && opt.eq_ignore_ascii_case(b"count") && !args.is_empty() {
                count = Some(
                    relis::parse_i64(&args.next()?)
                        .filter(|n| *n > 0)
                        .ok_or(CmdError::COUNT_NOT_POSITIVE)? as usize,
                );
            } else {
                return Err(CmdError::Syntax);
            }
        }
        args.finish()?;
        Ok(LMPop {
            keys,
            end,
            count: count.unwrap_or(1),
        })
    }

    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::write(LMPop::from_args(args)?)
    }

    /// The reply for what was popped: `[key, [elements]]`, or a null array.
    pub fn reply(popped: Option<(Bytes, Vec<Bytes>)>) -> Frame {
        match popped {
            Some((key, items)) => Frame::Array(vec![Frame::Bulk(key), bulks(items)]),
            None => Frame::NullArray,
        }
    }
}

impl WriteCmd for LMPop {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let popped = w.lmpop(cx.db, &self.keys, self.end, self.count)?;
        if let Some((key, _)) = &popped {
            super::notify_pop(w, cx.db, key, self.end)?;
        }
        Ok(LMPop::reply(popped))
    }

    // Every error of this command comes before its first write (see WriteCmd::on_error;
    // an expired key it deletes on the way is gone either way).
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_err;
    use super::*;

    #[test]
    fn parse_errors() {
        let p = |l| parse_err(LMPop::parse, "lmpop", l);
        assert_eq!(p("1 k left"), None);
        assert_eq!(p("2 a b RIGHT count 3"), None);
        for bad in ["0 k left", "-1 k left", "x k left"] {
            assert_eq!(
                p(bad).as_deref(),
                Some("ERR numkeys should be greater than 0")
            );
        }
        for bad in [
            "2 k left",
            "9999999999 a left",
            "9223372036854775807 a left",
            "1 k middle",
            "1 k left count 1 count 2",
            "1 k left bogus",
            "1 k left count",
        ] {
            assert_eq!(p(bad).as_deref(), Some("ERR syntax error"), "{bad}");
        }
        for bad in ["1 k left count 0", "1 k left count -1", "1 k left count x"] {
            assert_eq!(
                p(bad).as_deref(),
                Some("ERR count should be greater than 0")
            );
        }
    }
}
