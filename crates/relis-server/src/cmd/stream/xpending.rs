//! XPENDING key group [[IDLE min-idle-time] start end count [consumer]] — the group's pending
//! entries: a summary (how many, the smallest and largest ids, how many per consumer), or the
//! entries in an id range, with their consumer, ms since their last delivery and delivery
//! count. <https://redis.io/commands/xpending/>
//!
//! Arguments are checked before the key, as Redis checks them. The range is an index range
//! over the group's list.

use super::parse_bound;
use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use relis::StreamId;
use resp::Frame;

/// XPENDING's declaration.
pub const SPEC: Spec = Spec {
    name: "xpending",
    arity: -3,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "stream", "slow"]),
    keys: (1, 1, 1),
    group: "stream",
    since: "5.0.0",
    summary: "Return information and entries from a stream consumer group pending entries list, that are messages fetched but never acknowledged.",
    complexity: "O(N) with N being the number of elements returned, so asking for a small fixed number of entries per call is O(1). O(M), where M is the total number of entries scanned when used with the IDLE filter. When the command returns just the summary and the list of consumers is small, it runs in O(1) time; otherwise, an additional O(N) time for iterating every consumer.",
    parse: XPending::parse,
    tips: &["nondeterministic_output"],
    key_flags: Spec::key_flags(&["RO", "access"]),
    ..Spec::BASE
};

/// The extended form's arguments.
#[derive(Debug, PartialEq, Eq)]
struct Range {
    min_idle: i64,
    start: StreamId,
    end: StreamId,
    count: u64,
    consumer: Option<Bytes>,
}

/// XPENDING.
#[derive(Debug, PartialEq, Eq)]
pub struct XPending {
    key: Bytes,
    group: Bytes,
    range: Option<Range>,
}

impl XPending {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::read(XPending::from_args(args)?)
    }

    fn from_args(args: &mut Args) -> Result<XPending, CmdError> {
        let key = args.next()?;
        let group = args.next()?;
        let rest = args.rest();
        let argc = rest.len() + 3;
        if argc != 3 && !(6..=9).contains(&argc) {
            return Err(CmdError::Syntax);
        }
        let range = if rest.is_empty() {
            None
        } else {
            let mut at = 0;
            let mut min_idle = 0;
            if rest[0].eq_ignore_ascii_case(b"idle") {
                min_idle = crate::args::parse_i64(&rest[1])?;
                if argc < 8 {
                    return Err(CmdError::Syntax);
                }
                at = 2;
            }
            let count = crate::args::parse_i64(&rest[at + 2])?.max(0) as u64;
            let (mut start, start_ex) = parse_bound(&rest[at], 0)?;
            if start_ex {
                start = start.next().ok_or(CmdError::INVALID_START_ID)?;
            }
            let (mut end, end_ex) = parse_bound(&rest[at + 1], u64::MAX)?;
            if end_ex {
                end = end.prev().ok_or(CmdError::INVALID_END_ID)?;
            }
            let consumer = rest.get(at + 3).cloned();
            Some(Range {
                min_idle,
                start,
                end,
                count,
                consumer,
            })
        };
        Ok(XPending { key, group, range })
    }

    fn nogroup(&self) -> CmdError {
        CmdError::no_key_or_group(&self.key, &self.group)
    }
}

fn id_frame(id: StreamId) -> Frame {
    Frame::Bulk(Bytes::from(id.to_string()))
}

impl ReadCmd for XPending {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let wrong = |e: relis::Error| match e {
            relis::Error::WrongType => CmdError::WrongType,
            e => e.into(),
        };
        let Some(range) = &self.range else {
            let (n, edges, per) = r
                .xpending_summary(cx.db, &self.key, &self.group)
                .map_err(wrong)?
                .ok_or_else(|| self.nogroup())?;
            let Some((first, last)) = edges else {
                return Ok(Frame::Array(vec![
                    Frame::Integer(0),
                    Frame::Null,
                    Frame::Null,
                    Frame::NullArray,
                ]));
            };
            return Ok(Frame::Array(vec![
                Frame::Integer(n as i64),
                id_frame(first),
                id_frame(last),
                Frame::Array(
                    per.into_iter()
                        .map(|(c, n)| {
                            Frame::Array(vec![
                                Frame::Bulk(c),
                                Frame::Bulk(Bytes::from(n.to_string())),
                            ])
                        })
                        .collect(),
                ),
            ]));
        };
        let rows = r
            .xpending_range(
                cx.db,
                &self.key,
                &self.group,
                range.min_idle,
                range.start,
                range.end,
                range.count,
                range.consumer.as_deref(),
            )
            .map_err(wrong)?
            .ok_or_else(|| self.nogroup())?;
        Ok(Frame::Array(
            rows.into_iter()
                .map(|(id, consumer, idle, count)| {
                    Frame::Array(vec![
                        id_frame(id),
                        Frame::Bulk(consumer),
                        Frame::Integer(idle),
                        Frame::Integer(count as i64),
                    ])
                })
                .collect(),
        ))
    }
}
