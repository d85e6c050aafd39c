//! LTRIM key start stop — keep only the elements in an index range (Redis's LRANGE rules); an
//! empty range deletes the key. <https://redis.io/commands/ltrim/>
//!
//! Deletes a range at each end and moves the head: nothing is renumbered.

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// LTRIM's declaration.
pub const SPEC: Spec = Spec {
    name: "ltrim",
    arity: 4,
    flags: Spec::flags(&["write"]),
    acl: Spec::acl(&["write", "list", "slow"]),
    keys: (1, 1, 1),
    group: "list",
    since: "1.0.0",
    summary: "Trim a list to the specified range",
    complexity: "O(N) where N is the number of elements to be removed by the operation.",
    parse: LTrim::parse,
    key_flags: Spec::key_flags(&["RW", "delete"]),
    ..Spec::BASE
};

/// LTRIM key start stop.
#[derive(Debug, PartialEq, Eq)]
pub struct LTrim {
    key: Bytes,
    start: i64,
    stop: i64,
}

impl LTrim {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let start = args.next_i64()?;
        let stop = args.next_i64()?;
        args.finish()?;
        Parsed::write(LTrim { key, start, stop })
    }
}

impl WriteCmd for LTrim {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        // Redis reports a trim of an existing list even when it removes nothing.
        let existed =
            w.wants_events(relis::events::class::LIST) && w.meta(cx.db, &self.key)?.is_some();
        w.ltrim(cx.db, &self.key, self.start, self.stop)?;
        if existed {
            w.notify(relis::events::class::LIST, "ltrim", cx.db, &self.key);
            crate::pubsub::notify_if_emptied(w, cx.db, &self.key)?;
        }
        Ok(Frame::ok())
    }

    // Every error of this command comes before its first write (see WriteCmd::on_error).
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}
