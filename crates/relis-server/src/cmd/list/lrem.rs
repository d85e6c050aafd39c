//! LREM key count element — remove the first `count` elements equal to `element` (from the
//! tail when negative, all when 0); reply with how many were removed.
//! <https://redis.io/commands/lrem/>
//!
//! O(N+M) as in Redis: one scan finds the matches, then the gaps are closed from whichever side
//! moves fewer elements (see the engine's `list.rs`).

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// LREM's declaration.
pub const SPEC: Spec = Spec {
    name: "lrem",
    arity: 4,
    flags: Spec::flags(&["write"]),
    acl: Spec::acl(&["write", "list", "slow"]),
    keys: (1, 1, 1),
    group: "list",
    since: "1.0.0",
    summary: "Remove elements from a list",
    complexity: "O(N+M) where N is the length of the list and M is the number of elements removed.",
    parse: LRem::parse,
    key_flags: Spec::key_flags(&["RW", "delete"]),
    ..Spec::BASE
};

/// LREM key count element.
#[derive(Debug, PartialEq, Eq)]
pub struct LRem {
    key: Bytes,
    count: i64,
    value: Bytes,
}

impl LRem {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let count = args.next_i64()?;
        let value = args.next()?;
        args.finish()?;
        Parsed::write(LRem { key, count, value })
    }
}

impl WriteCmd for LRem {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let n = w.lrem(cx.db, &self.key, self.count, &self.value)?;
        if n > 0 {
            w.notify(relis::events::class::LIST, "lrem", cx.db, &self.key);
            crate::pubsub::notify_if_emptied(w, cx.db, &self.key)?;
        }
        Ok(Frame::Integer(n))
    }

    // Every error of this command comes before its first write (see WriteCmd::on_error).
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}
