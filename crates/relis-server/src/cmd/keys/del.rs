//! DEL key [key ...] and UNLINK key [key ...] — delete keys, replying how many existed.
//! <https://redis.io/commands/del/>, <https://redis.io/commands/unlink/>
//!
//! UNLINK differs from DEL in Redis only in freeing memory on another thread; in Relis both are
//! the same deletion (SQLite frees pages in the same transaction either way).

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// DEL's declaration.
pub const SPEC_DEL: Spec = Spec {
    name: "del",
    tips: &["request_policy:multi_shard", "response_policy:agg_sum"],
    key_flags: Spec::key_flags(&["RM", "delete"]),
    arity: -2,
    flags: Spec::flags(&["write"]),
    acl: Spec::acl(&["keyspace", "write", "slow"]),
    keys: (1, -1, 1),
    group: "generic",
    since: "1.0.0",
    summary: "Delete a key",
    complexity: "O(N) where N is the number of keys that will be removed. When a key to remove holds a value other than a string, the individual complexity for this key is O(M) where M is the number of elements in the list, set, sorted set or hash. Removing a single key that holds a string value is O(1).",
    parse: Del::parse,
    ..Spec::BASE
};

/// UNLINK's declaration.
pub const SPEC_UNLINK: Spec = Spec {
    name: "unlink",
    tips: &["request_policy:multi_shard", "response_policy:agg_sum"],
    key_flags: Spec::key_flags(&["RM", "delete"]),
    arity: -2,
    flags: Spec::flags(&["write", "fast"]),
    acl: Spec::acl(&["keyspace", "write", "fast"]),
    keys: (1, -1, 1),
    group: "generic",
    since: "4.0.0",
    summary: "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non blocking.",
    complexity: "O(1) for each key removed regardless of its size. Then the command does O(N) work in a different thread in order to reclaim memory, where N is the number of allocations the deleted objects where composed of.",
    parse: Del::parse,
    ..Spec::BASE
};

/// DEL / UNLINK.
#[derive(Debug, PartialEq, Eq)]
pub struct Del {
    keys: Vec<Bytes>,
}

impl Del {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let keys = args.rest();
        args.finish()?;
        Parsed::write(Del { keys })
    }
}

impl WriteCmd for Del {
    // Every error of this command comes before its first write (see WriteCmd::on_error).
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }

    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        // Key by key: each deleted key has its own `del` event.
        let mut n = 0;
        for k in &self.keys {
            if w.del(cx.db, std::slice::from_ref(k))? > 0 {
                w.notify(relis::events::class::GENERIC, "del", cx.db, k);
                n += 1;
            }
        }
        Ok(Frame::Integer(n))
    }
}
