//! XACK key group id [id ...] — removes entries from the group's pending entries list;
//! replies how many were there. <https://redis.io/commands/xack/>
//!
//! As in Redis, a missing key or group replies 0 before the ids are parsed, and an invalid id
//! acknowledges nothing. Each id is one primary-key delete.

use super::parse_strict_id;
use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// XACK's declaration.
pub const SPEC: Spec = Spec {
    name: "xack",
    arity: -4,
    flags: Spec::flags(&["write", "fast"]),
    acl: Spec::acl(&["write", "stream", "fast"]),
    keys: (1, 1, 1),
    group: "stream",
    since: "5.0.0",
    summary: "Marks a pending message as correctly processed, effectively removing it from the pending entries list of the consumer group. Return value of the command is the number of messages successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL.",
    complexity: "O(1) for each message ID processed.",
    parse: XAck::parse,
    key_flags: Spec::key_flags(&["RW", "update"]),
    ..Spec::BASE
};

/// XACK.
#[derive(Debug, PartialEq, Eq)]
pub struct XAck {
    key: Bytes,
    group: Bytes,
    ids: Vec<Bytes>,
}

impl XAck {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let group = args.next()?;
        let ids = args.rest();
        args.finish()?;
        Parsed::write(XAck { key, group, ids })
    }
}

impl WriteCmd for XAck {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let exists = match w.stream_group_exists(cx.db, &self.key, &self.group) {
            Err(relis::Error::WrongType) => return Err(CmdError::WrongType),
            e => e?,
        };
        if !exists {
            return Ok(Frame::Integer(0));
        }
        let ids = self
            .ids
            .iter()
            .map(|a| parse_strict_id(a))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Frame::Integer(
            w.xack(cx.db, &self.key, &self.group, &ids)? as i64
        ))
    }
}
