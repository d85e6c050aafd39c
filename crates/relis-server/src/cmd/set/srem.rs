//! SREM key member [member ...] — removes the members from the set at `key`, replying how many
//! were there; the key goes with its last member. <https://redis.io/commands/srem/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// SREM's declaration.
pub const SPEC: Spec = Spec {
    name: "srem",
    arity: -3,
    flags: Spec::flags(&["write", "fast"]),
    acl: Spec::acl(&["write", "set", "fast"]),
    keys: (1, 1, 1),
    group: "set",
    since: "1.0.0",
    summary: "Remove one or more members from a set",
    complexity: "O(N) where N is the number of members to be removed.",
    parse: SRem::parse,
    key_flags: Spec::key_flags(&["RW", "delete"]),
    ..Spec::BASE
};

/// SREM key member [member ...].
#[derive(Debug, PartialEq, Eq)]
pub struct SRem {
    key: Bytes,
    members: Vec<Bytes>,
}

impl SRem {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let members = args.rest();
        args.finish()?;
        Parsed::write(SRem { key, members })
    }
}

impl WriteCmd for SRem {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let n = w.srem(cx.db, &self.key, &self.members)?;
        if n > 0 {
            w.notify(relis::events::class::SET, "srem", cx.db, &self.key);
            crate::pubsub::notify_if_emptied(w, cx.db, &self.key)?;
        }
        Ok(Frame::Integer(n))
    }

    // The type check comes before the first write.
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}
