//! ZREM key member [member ...] — remove members; replies how many were there.
//! <https://redis.io/commands/zrem/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// ZREM's declaration.
pub const SPEC: Spec = Spec {
    name: "zrem",
    arity: -3,
    flags: Spec::flags(&["write", "fast"]),
    acl: Spec::acl(&["write", "sortedset", "fast"]),
    keys: (1, 1, 1),
    group: "sorted-set",
    since: "1.2.0",
    summary: "Remove one or more members from a sorted set",
    complexity: "O(M*log(N)) with N being the number of elements in the sorted set and M the number of elements to be removed.",
    parse: ZRem::parse,
    key_flags: Spec::key_flags(&["RW", "delete"]),
    ..Spec::BASE
};

/// ZREM key member [member ...].
#[derive(Debug, PartialEq, Eq)]
pub struct ZRem {
    key: Bytes,
    members: Vec<Bytes>,
}

impl ZRem {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let members = args.rest();
        args.finish()?;
        Parsed::write(ZRem { key, members })
    }
}

impl WriteCmd for ZRem {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let n = w.zrem(cx.db, &self.key, &self.members)?;
        if n > 0 {
            w.notify(relis::events::class::ZSET, "zrem", cx.db, &self.key);
            crate::pubsub::notify_if_emptied(w, cx.db, &self.key)?;
        }
        Ok(Frame::Integer(n))
    }

    // The type check comes before the first write.
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}
