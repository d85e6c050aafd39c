//! XRANGE key start end [COUNT count] / XREVRANGE key end start [COUNT count] — the entries
//! between two ids (inclusive; `(` makes a bound exclusive; `-` and `+` are the ends; a bare
//! `ms` is `ms-0` as a start and `ms-<largest>` as an end), in order or from the end.
//! <https://redis.io/commands/xrange/>, <https://redis.io/commands/xrevrange/>
//!
//! An index range over the stream's rows: only the entries replied are read.

use super::{entries_frame, parse_bound};
use crate::args::Args;
use crate::cmd::{counted, Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use relis::StreamId;
use resp::Frame;

/// XRANGE's declaration.
pub const SPEC: Spec = Spec {
    name: "xrange",
    arity: -4,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "stream", "slow"]),
    keys: (1, 1, 1),
    group: "stream",
    since: "5.0.0",
    summary: "Return a range of elements in a stream, with IDs matching the specified IDs interval",
    complexity: "O(N) with N being the number of elements being returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).",
    parse: |a| XRange::parse(a, false),
    key_flags: Spec::key_flags(&["RO", "access"]),
    ..Spec::BASE
};

/// XREVRANGE's declaration.
pub const SPEC_XREVRANGE: Spec = Spec {
    name: "xrevrange",
    summary: "Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE",
    complexity: "O(N) with N being the number of elements returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).",
    parse: |a| XRange::parse(a, true),
    ..SPEC
};

/// XRANGE / XREVRANGE.
#[derive(Debug, PartialEq, Eq)]
pub struct XRange {
    key: Bytes,
    start: StreamId,
    end: StreamId,
    /// `None`: no COUNT; `Some(0)`: COUNT 0 or negative, a null array.
    count: Option<u64>,
    rev: bool,
}

impl XRange {
    fn parse(args: &mut Args, rev: bool) -> Result<Parsed, CmdError> {
        Parsed::read(XRange::from_args(args, rev)?)
    }

    fn from_args(args: &mut Args, rev: bool) -> Result<XRange, CmdError> {
        let key = args.next()?;
        let (a, b) = (args.next()?, args.next()?);
        let (start_arg, end_arg) = if rev { (b, a) } else { (a, b) };
        let (mut start, start_ex) = parse_bound(&start_arg, 0)?;
        if start_ex {
            start = start.next().ok_or(CmdError::INVALID_START_ID)?;
        }
        let (mut end, end_ex) = parse_bound(&end_arg, u64::MAX)?;
        if end_ex {
            end = end.prev().ok_or(CmdError::INVALID_END_ID)?;
        }
        let mut count = None;
        while !args.is_empty() {
            if args.remaining() >= 2 && args.eat("count") {
                let n = args.next_i64()?;
                count = Some(n.max(0) as u64);
            } else {
                return Err(CmdError::Syntax);
            }
        }
        Ok(XRange {
            key,
            start,
            end,
            count,
            rev,
        })
    }
}

impl ReadCmd for XRange {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let (lo, hi) = (self.start, self.end);
        let found = counted(
            cx,
            &self.key,
            r.xrange(cx.db, &self.key, lo, hi, self.count.unwrap_or(0), self.rev),
        )?;
        Ok(match (found, self.count) {
            (None, _) => Frame::Array(Vec::new()),
            (Some(_), Some(0)) => Frame::NullArray,
            (Some(entries), _) => entries_frame(entries),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds() {
        let p = |line, rev| XRange::from_args(&mut super::super::args_of("xrange", line), rev);
        // A bare `ms` end is `ms-<largest>` before the exclusion takes one off, as in Redis.
        let x = p("s (1-1 (3", false).unwrap();
        assert_eq!(
            (x.start, x.end),
            (StreamId::new(1, 2), StreamId::new(3, u64::MAX - 1))
        );
        let x = p("s + - count -3", true).unwrap();
        assert_eq!(
            (x.start, x.end, x.count),
            (StreamId::MIN, StreamId::MAX, Some(0))
        );
        assert_eq!(
            p("s - (0-0", false),
            Err(CmdError::err("invalid end ID for the interval"))
        );
        assert_eq!(
            p("s (18446744073709551615-18446744073709551615 +", false),
            Err(CmdError::err("invalid start ID for the interval"))
        );
        assert_eq!(p("s - + count", false), Err(CmdError::Syntax));
        assert_eq!(p("s - + count x", false), Err(CmdError::NotInteger));
    }
}
