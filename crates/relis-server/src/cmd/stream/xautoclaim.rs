//! XAUTOCLAIM key group consumer min-idle-time start [COUNT count] [JUSTID] — claims the
//! group's pending entries idle for at least min-idle-time, from `start`; replies the id to
//! continue from (`0-0` at the end), the claimed entries (ids with JUSTID) and, as Redis 7.0
//! does, the pending ids whose entries were deleted (they leave the PEL).
//! <https://redis.io/commands/xautoclaim/>
//!
//! COUNT is bounded as Redis bounds it (1 to LONG_MAX/16, "COUNT must be > 0" otherwise) and
//! nothing is allocated from it: the PEL is walked a batch at a time (CVE-2022-35951 made
//! Redis allocate COUNT ids up front).

use super::parse_bound;
use super::xclaim::{claimed_frame, nogroup};
use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::StreamId;
use resp::Frame;

/// XAUTOCLAIM's declaration.
pub const SPEC: Spec = Spec {
    name: "xautoclaim",
    arity: -6,
    flags: Spec::flags(&["write", "fast"]),
    acl: Spec::acl(&["write", "stream", "fast"]),
    keys: (1, 1, 1),
    group: "stream",
    since: "6.2.0",
    summary: "Changes (or acquires) ownership of messages in a consumer group, as if the messages were delivered to the specified consumer.",
    complexity: "O(1) if COUNT is small.",
    parse: XAutoClaim::parse,
    tips: &["nondeterministic_output"],
    key_flags: Spec::key_flags(&["RW", "delete"]),
    ..Spec::BASE
};

/// XAUTOCLAIM.
#[derive(Debug, PartialEq, Eq)]
pub struct XAutoClaim {
    key: Bytes,
    group: Bytes,
    consumer: Bytes,
    min_idle: i64,
    start: StreamId,
    count: u64,
    justid: bool,
}

impl XAutoClaim {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::write(XAutoClaim::from_args(args)?)
    }

    fn from_args(args: &mut Args) -> Result<XAutoClaim, CmdError> {
        let key = args.next()?;
        let group = args.next()?;
        let consumer = args.next()?;
        let min_idle = relis::parse_i64(&args.next()?)
            .ok_or(CmdError::XAUTOCLAIM_MIN_IDLE)?
            .max(0);
        let (mut start, ex) = parse_bound(&args.next()?, 0)?;
        if ex {
            start = start.next().ok_or(CmdError::INVALID_START_ID)?;
        }
        let (mut count, mut justid) = (100u64, false);
        while !args.is_empty() {
            if args.remaining() >= 2 && args.eat("count") {
                // Redis: getRangeLongFromObjectOrReply(1, LONG_MAX / 16).
                let max = i64::MAX / 16;
                count = relis::parse_i64(&args.next()?)
                    .filter(|n| (1..=max).contains(n))
                    .ok_or(CmdError::COUNT_NOT_ABOVE_ZERO)? as u64;
            } else if args.eat("justid") {
                justid = true;
            } else {
                return Err(CmdError::Syntax);
            }
        }
        Ok(XAutoClaim {
            key,
            group,
            consumer,
            min_idle,
            start,
            count,
            justid,
        })
    }
}

/// COUNTs above this get the error Redis 7.0.15 gives when it cannot allocate COUNT ids
/// (16 bytes each) up front: past 2^36 (1 TiB of ids) no machine could. Relis allocates
/// nothing from COUNT; it refuses such counts only to answer as Redis does.
const MAX_COUNT: u64 = 1 << 36;

impl WriteCmd for XAutoClaim {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let exists = match w.stream_group_exists(cx.db, &self.key, &self.group) {
            Err(relis::Error::WrongType) => return Err(CmdError::WrongType),
            e => e?,
        };
        if !exists {
            return Err(nogroup(&self.key, &self.group));
        }
        if self.count > MAX_COUNT {
            return Err(CmdError::XAUTOCLAIM_COUNT);
        }
        let done = match w.xautoclaim(
            cx.db,
            &self.key,
            &self.group,
            &self.consumer,
            self.min_idle,
            self.start,
            self.count,
            self.justid,
        ) {
            Err(relis::Error::WrongType) => return Err(CmdError::WrongType),
            d => d?,
        }
        .ok_or_else(|| nogroup(&self.key, &self.group))?;
        Ok(Frame::Array(vec![
            Frame::Bulk(Bytes::from(done.next.to_string())),
            claimed_frame(done.claimed),
            Frame::Array(
                done.deleted
                    .into_iter()
                    .map(|id| Frame::Bulk(Bytes::from(id.to_string())))
                    .collect(),
            ),
        ]))
    }
}
