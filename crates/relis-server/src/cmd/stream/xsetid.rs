//! XSETID key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id] — sets the
//! stream's last id (and its count of entries ever added, and its largest deleted id).
//! <https://redis.io/commands/xsetid/>

use super::parse_strict_id;
use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::StreamId;
use resp::Frame;

/// XSETID's declaration.
pub const SPEC: Spec = Spec {
    name: "xsetid",
    arity: -3,
    flags: Spec::flags(&["write", "denyoom", "fast"]),
    acl: Spec::acl(&["write", "stream", "fast"]),
    keys: (1, 1, 1),
    group: "stream",
    since: "5.0.0",
    summary: "An internal command for replicating stream values",
    complexity: "O(1)",
    parse: XSetId::parse,
    key_flags: Spec::key_flags(&["RW", "update"]),
    ..Spec::BASE
};

/// XSETID.
#[derive(Debug, PartialEq, Eq)]
pub struct XSetId {
    key: Bytes,
    id: StreamId,
    entries_added: Option<u64>,
    max_deleted: StreamId,
}

impl XSetId {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::write(XSetId::from_args(args)?)
    }

    fn from_args(args: &mut Args) -> Result<XSetId, CmdError> {
        let key = args.next()?;
        let id = parse_strict_id(&args.next()?)?;
        let (mut entries_added, mut max_deleted) = (None, StreamId::MIN);
        while !args.is_empty() {
            if args.remaining() >= 2 && args.eat("entriesadded") {
                let n = args.next_i64()?;
                if n < 0 {
                    return Err(CmdError::XSETID_ENTRIES_ADDED);
                }
                entries_added = Some(n as u64);
            } else if args.remaining() >= 2 && args.eat("maxdeletedid") {
                max_deleted = parse_strict_id(&args.next()?)?;
                if id < max_deleted {
                    return Err(CmdError::XSETID_BELOW_MAX_DELETED);
                }
            } else {
                return Err(CmdError::Syntax);
            }
        }
        Ok(XSetId {
            key,
            id,
            entries_added,
            max_deleted,
        })
    }
}

impl WriteCmd for XSetId {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        w.xsetid(
            cx.db,
            &self.key,
            self.id,
            self.entries_added,
            self.max_deleted,
        )?;
        w.notify(relis::events::class::STREAM, "xsetid", cx.db, &self.key);
        Ok(Frame::Simple(Bytes::from_static(b"OK")))
    }
}
