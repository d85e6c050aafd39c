//! LRANGE key start stop — the elements in an index range (negative indexes count from the
//! tail; out-of-range ends are clamped). LINDEX key index — one element, or nil.
//! <https://redis.io/commands/lrange/>, <https://redis.io/commands/lindex/>
//!
//! Both go through the primary key at `head + index`: no walk from an end. LRANGE checks its
//! integers before the key; LINDEX, as Redis, looks the key up first (a missing key is nil
//! even with a bad index).

use crate::args::{parse_i64, Args};
use crate::cmd::counted;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec, INLINE_READ_LIMIT};
use crate::error::CmdError;
use bytes::{Bytes, BytesMut};
use resp::Frame;

/// LRANGE's declaration.
pub const SPEC: Spec = Spec {
    name: "lrange",
    arity: 4,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "list", "slow"]),
    keys: (1, 1, 1),
    group: "list",
    since: "1.0.0",
    summary: "Get a range of elements from a list",
    complexity: "O(S+N) where S is the distance of start offset from HEAD for small lists, from nearest end (HEAD or TAIL) for large lists; and N is the number of elements in the specified range.",
    parse: LRange::parse,
    key_flags: Spec::key_flags(&["RO", "access"]),
    ..Spec::BASE
};

/// LINDEX's declaration.
pub const SPEC_LINDEX: Spec = Spec {
    name: "lindex",
    arity: 3,
    summary: "Get an element from a list by its index",
    complexity: "O(N) where N is the number of elements to traverse to get to the element at index. This makes asking for the first or the last element of the list O(1).",
    parse: LIndex::parse,
    ..SPEC
};

/// LRANGE key start stop.
#[derive(Debug, PartialEq, Eq)]
pub struct LRange {
    key: Bytes,
    start: i64,
    stop: i64,
}

impl LRange {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let start = args.next_i64()?;
        let stop = args.next_i64()?;
        args.finish()?;
        Parsed::read(LRange { key, start, stop })
    }
}

impl ReadCmd for LRange {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        // Encoded as the rows come: no frame or reference count per element.
        let mut items = BytesMut::with_capacity(512);
        let len = counted(
            cx,
            &self.key,
            r.lrange_each(cx.db, &self.key, self.start, self.stop, |v| {
                resp::put_bulk(&mut items, v)
            }),
        )?;
        Ok(Frame::Bulks {
            len: len.unwrap_or(0),
            items: items.freeze(),
        })
    }

    fn inline(&self) -> bool {
        // Indexes of one sign bound the reply by their distance, whatever the list's length.
        let (a, b) = (self.start, self.stop);
        (a >= 0) == (b >= 0) && b.saturating_sub(a) < INLINE_READ_LIMIT as i64
    }
}

/// LINDEX key index. The index stays unparsed until the key is found, as in Redis.
#[derive(Debug, PartialEq, Eq)]
pub struct LIndex {
    key: Bytes,
    index: Result<i64, CmdError>,
}

impl LIndex {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let index = parse_i64(&args.next()?);
        args.finish()?;
        Parsed::read(LIndex { key, index })
    }
}

impl ReadCmd for LIndex {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let index = match &self.index {
            Ok(i) => *i,
            Err(e) => {
                // Missing key: nil; another type: WRONGTYPE; a list: the index error.
                return match counted(cx, &self.key, r.llen(cx.db, &self.key))? {
                    None => Ok(Frame::Null),
                    Some(_) => Err(e.clone()),
                };
            }
        };
        let v = counted(cx, &self.key, r.lindex(cx.db, &self.key, index))?;
        Ok(v.flatten().map_or(Frame::Null, Frame::Bulk))
    }
}
