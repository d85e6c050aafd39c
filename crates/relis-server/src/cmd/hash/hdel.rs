//! HDEL key field [field ...] — removes the fields from the hash at `key` (the key goes with its
//! last field), replying how many it removed. <https://redis.io/commands/hdel/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// HDEL's declaration.
pub const SPEC: Spec = Spec {
    name: "hdel",
    arity: -3,
    flags: Spec::flags(&["write", "fast"]),
    acl: Spec::acl(&["write", "hash", "fast"]),
    keys: (1, 1, 1),
    group: "hash",
    since: "2.0.0",
    summary: "Delete one or more hash fields",
    complexity: "O(N) where N is the number of fields to be removed.",
    parse: HDel::parse,
    key_flags: Spec::key_flags(&["RW", "delete"]),
    ..Spec::BASE
};

/// HDEL key field [field ...].
#[derive(Debug, PartialEq, Eq)]
pub struct HDel {
    key: Bytes,
    fields: Vec<Bytes>,
}

impl HDel {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let fields = args.rest();
        args.finish()?;
        Parsed::write(HDel { key, fields })
    }
}

impl WriteCmd for HDel {
    // The type check comes before the first write.
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }

    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let n = w.hdel(cx.db, &self.key, &self.fields)?;
        if n > 0 {
            w.notify(relis::events::class::HASH, "hdel", cx.db, &self.key);
            crate::pubsub::notify_if_emptied(w, cx.db, &self.key)?;
        }
        Ok(Frame::Integer(n))
    }
}
