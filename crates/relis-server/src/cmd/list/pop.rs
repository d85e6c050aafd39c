//! LPOP / RPOP key [count] — remove and return the first (last) element, or up to `count`
//! elements as an array. <https://redis.io/commands/lpop/>, <https://redis.io/commands/rpop/>
//!
//! Replies as Redis 7.0: without a count, the element or a null bulk; with one, an array (empty
//! for a count of 0 on an existing list) or a null array when there is no list. The count is
//! checked before the key.

use super::{bulks, parse_positive};
use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::End;
use resp::Frame;

/// LPOP's declaration.
pub const SPEC_LPOP: Spec = Spec {
    name: "lpop",
    arity: -2,
    flags: Spec::flags(&["write", "fast"]),
    acl: Spec::acl(&["write", "list", "fast"]),
    keys: (1, 1, 1),
    group: "list",
    since: "1.0.0",
    summary: "Remove and get the first elements in a list",
    complexity: "O(N) where N is the number of elements returned",
    parse: |a| Pop::parse(a, End::Left),
    key_flags: Spec::key_flags(&["RW", "access", "delete"]),
    ..Spec::BASE
};

/// RPOP's declaration.
pub const SPEC_RPOP: Spec = Spec {
    name: "rpop",
    summary: "Remove and get the last elements in a list",
    parse: |a| Pop::parse(a, End::Right),
    ..SPEC_LPOP
};

/// LPOP / RPOP.
#[derive(Debug, PartialEq, Eq)]
pub struct Pop {
    key: Bytes,
    end: End,
    count: Option<usize>,
}

impl Pop {
    fn parse(args: &mut Args, end: End) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let count = match args.remaining() {
            0 => None,
            1 => Some(parse_positive(&args.next()?)?),
            // Redis checks this inside the command, with the arity error's text.
            _ => return Err(CmdError::WrongArity(args.name().into())),
        };
        args.finish()?;
        Parsed::write(Pop { key, end, count })
    }
}

impl WriteCmd for Pop {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let popped = w.pop(cx.db, &self.key, self.end, self.count.unwrap_or(1))?;
        if popped.as_ref().is_some_and(|v| !v.is_empty()) {
            super::notify_pop(w, cx.db, &self.key, self.end)?;
        }
        Ok(match (popped, self.count) {
            (None, None) => Frame::Null,
            (None, Some(_)) => Frame::NullArray,
            (Some(mut v), None) => v.pop().map_or(Frame::Null, Frame::Bulk),
            (Some(v), Some(_)) => bulks(v),
        })
    }

    // Every error of this command comes before its first write (see WriteCmd::on_error).
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
        let p = |l| parse_err(|a| Pop::parse(a, End::Left), "lpop", l);
        assert_eq!(p("k"), None);
        assert_eq!(p("k 0"), None);
        for bad in [
            "k -1",
            "k x",
            "k 01",
            "k +1",
            "k 1.0",
            "k 9223372036854775808",
        ] {
            assert_eq!(
                p(bad).as_deref(),
                Some("ERR value is out of range, must be positive"),
                "{bad}"
            );
        }
        assert_eq!(
            p("k 1 2").as_deref(),
            Some("ERR wrong number of arguments for 'lpop' command")
        );
    }
}
