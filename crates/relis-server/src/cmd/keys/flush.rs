//! FLUSHDB [ASYNC | SYNC] and FLUSHALL [ASYNC | SYNC] — delete every key of the selected
//! database, or of all databases. <https://redis.io/commands/flushdb/>,
//! <https://redis.io/commands/flushall/>
//!
//! Both modes are accepted; Relis always deletes within the command's transaction, so ASYNC
//! behaves as SYNC (the reply comes once the deletion is committed). Over PostgreSQL the rows go
//! in the transaction of the command's group of writes (`relis::postgres::PgKeys::flush`).

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use resp::Frame;

/// FLUSHDB's declaration.
pub const SPEC_FLUSHDB: Spec = Spec {
    name: "flushdb",
    tips: &["request_policy:all_shards", "response_policy:all_succeeded"],
    arity: -1,
    flags: Spec::flags(&["write"]),
    acl: Spec::acl(&["keyspace", "write", "slow", "dangerous"]),
    keys: (0, 0, 0),
    group: "server",
    since: "1.0.0",
    summary: "Remove all keys from the current database",
    complexity: "O(N) where N is the number of keys in the selected database",
    parse: Flush::parse_flushdb,
    ..Spec::BASE
};

/// FLUSHALL's declaration.
pub const SPEC_FLUSHALL: Spec = Spec {
    name: "flushall",
    tips: &["request_policy:all_shards", "response_policy:all_succeeded"],
    arity: -1,
    flags: Spec::flags(&["write"]),
    acl: Spec::acl(&["keyspace", "write", "slow", "dangerous"]),
    keys: (0, 0, 0),
    group: "server",
    since: "1.0.0",
    summary: "Remove all keys from all databases",
    complexity: "O(N) where N is the total number of keys in all databases",
    parse: Flush::parse_flushall,
    ..Spec::BASE
};

/// FLUSHDB / FLUSHALL.
#[derive(Debug, PartialEq, Eq)]
pub struct Flush {
    all: bool,
}

impl Flush {
    /// Redis's `getFlushCommandFlags`: nothing, or exactly one of ASYNC / SYNC.
    fn parse(args: &mut Args, all: bool) -> Result<Parsed, CmdError> {
        if args.remaining() == 1 && !(args.eat("async") || args.eat("sync")) {
            return Err(CmdError::Syntax);
        }
        args.finish()?;
        Parsed::write(Flush { all })
    }

    fn parse_flushdb(args: &mut Args) -> Result<Parsed, CmdError> {
        Flush::parse(args, false)
    }

    fn parse_flushall(args: &mut Args) -> Result<Parsed, CmdError> {
        Flush::parse(args, true)
    }
}

impl WriteCmd for Flush {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        if self.all {
            w.flushall()?;
        } else {
            w.flushdb(cx.db)?;
        }
        // Client-side caching answers a flush with the null invalidation, whether or not the
        // database held anything, as Redis's signalFlushedDb.
        w.notify(relis::events::class::FLUSHED, "flush", cx.db, b"");
        Ok(Frame::ok())
    }
}
