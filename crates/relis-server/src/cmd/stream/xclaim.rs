//! XCLAIM key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-time-ms]
//! [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID id] — gives pending entries to another
//! consumer. <https://redis.io/commands/xclaim/>
//!
//! Checked in Redis's order: the key and group (`NOGROUP`), min-idle-time, then the ids (the
//! first argument that is not an id starts the options), then the options. A bogus IDLE/TIME
//! (negative or in the future) records now, as Redis does.

use super::parse_strict_id;
use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::{ClaimOptions, Delivered, StreamEntry};
use resp::Frame;

/// XCLAIM's declaration.
pub const SPEC: Spec = Spec {
    name: "xclaim",
    arity: -6,
    flags: Spec::flags(&["write", "fast"]),
    acl: Spec::acl(&["write", "stream", "fast"]),
    keys: (1, 1, 1),
    group: "stream",
    since: "5.0.0",
    summary: "Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered to the specified consumer.",
    complexity: "O(log N) with N being the number of messages in the PEL of the consumer group.",
    parse: XClaim::parse,
    tips: &["nondeterministic_output"],
    key_flags: Spec::key_flags(&["RW", "update"]),
    ..Spec::BASE
};

/// XCLAIM, its arguments kept as given: Redis checks the key before it reads them.
#[derive(Debug, PartialEq, Eq)]
pub struct XClaim {
    key: Bytes,
    group: Bytes,
    consumer: Bytes,
    rest: Vec<Bytes>,
}

impl XClaim {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let group = args.next()?;
        let consumer = args.next()?;
        let rest = args.rest();
        Parsed::write(XClaim {
            key,
            group,
            consumer,
            rest,
        })
    }
}

/// Parses min-idle-time, the ids and the options, against `now` (IDLE is relative to it).
fn parse_claim(
    rest: &[Bytes],
    now: i64,
) -> Result<(i64, Vec<relis::StreamId>, ClaimOptions), CmdError> {
    let int = |a: &[u8], err: CmdError| relis::parse_i64(a).ok_or(err);
    let min_idle = int(&rest[0], CmdError::XCLAIM_MIN_IDLE)?.max(0);
    let mut ids = Vec::new();
    let mut j = 1;
    while j < rest.len() {
        // The first argument that is not an id (`-` and `+` are not) starts the options.
        match parse_strict_id(&rest[j]) {
            Ok(id) => ids.push(id),
            Err(_) => break,
        }
        j += 1;
    }
    let mut o = ClaimOptions::default();
    while j < rest.len() {
        let opt = &rest[j];
        let more = j + 1 < rest.len();
        if opt.eq_ignore_ascii_case(b"force") {
            o.force = true;
        } else if opt.eq_ignore_ascii_case(b"justid") {
            o.justid = true;
        } else if opt.eq_ignore_ascii_case(b"idle") && more {
            j += 1;
            let idle = int(&rest[j], CmdError::XCLAIM_IDLE)?;
            o.delivered = Some(now.saturating_sub(idle));
        } else if opt.eq_ignore_ascii_case(b"time") && more {
            j += 1;
            o.delivered = Some(int(&rest[j], CmdError::XCLAIM_TIME)?);
        } else if opt.eq_ignore_ascii_case(b"retrycount") && more {
            j += 1;
            o.retrycount = Some(int(&rest[j], CmdError::XCLAIM_RETRYCOUNT)?);
        } else if opt.eq_ignore_ascii_case(b"lastid") && more {
            j += 1;
            o.lastid = Some(parse_strict_id(&rest[j])?);
        } else {
            return Err(CmdError::xclaim_option(opt));
        }
        j += 1;
    }
    Ok((min_idle, ids, o))
}

/// Claimed entries as Redis replies them: entries, or ids with JUSTID.
pub(crate) fn claimed_frame(claimed: Vec<Delivered>) -> Frame {
    Frame::Array(
        claimed
            .into_iter()
            .map(|(id, fields)| match fields {
                Some(fields) => super::entry_frame(StreamEntry { id, fields }),
                None => Frame::Bulk(Bytes::from(id.to_string())),
            })
            .collect(),
    )
}

/// `NOGROUP No such key '<key>' or consumer group '<group>'`
pub(crate) fn nogroup(key: &[u8], group: &[u8]) -> CmdError {
    CmdError::no_key_or_group(key, group)
}

impl WriteCmd for XClaim {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let exists = match w.stream_group_exists(cx.db, &self.key, &self.group) {
            Err(relis::Error::WrongType) => return Err(CmdError::WrongType),
            e => e?,
        };
        if !exists {
            return Err(nogroup(&self.key, &self.group));
        }
        let (min_idle, ids, opts) = parse_claim(&self.rest, w.now_ms())?;
        let claimed = w
            .xclaim(
                cx.db,
                &self.key,
                &self.group,
                &self.consumer,
                min_idle,
                &ids,
                opts,
            )?
            .ok_or_else(|| nogroup(&self.key, &self.group))?;
        Ok(claimed_frame(claimed))
    }
}
