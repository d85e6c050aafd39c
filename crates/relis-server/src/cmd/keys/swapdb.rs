//! SWAPDB index1 index2 — swap the contents of two databases. <https://redis.io/commands/swapdb/>
//!
//! Connections keep their selected index and see the other database's keys from then on;
//! every key of both databases counts as modified for WATCH.

use crate::args::Args;
use crate::cmd::keys::{db_index, parse_int};
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use resp::Frame;

/// SWAPDB's declaration.
pub const SPEC: Spec = Spec {
    name: "swapdb",
    arity: 3,
    flags: Spec::flags(&["write", "fast"]),
    acl: Spec::acl(&["keyspace", "write", "fast", "dangerous"]),
    keys: (0, 0, 0),
    group: "server",
    since: "4.0.0",
    summary: "Swaps two Redis databases",
    complexity:
        "O(N) where N is the count of clients watching or blocking on keys from both databases.",
    parse: SwapDb::parse,
    ..Spec::BASE
};

/// SWAPDB index1 index2.
#[derive(Debug, PartialEq, Eq)]
pub struct SwapDb {
    a: i32,
    b: i32,
}

impl SwapDb {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let a = parse_int(&args.next()?, Some(CmdError::SWAPDB_FIRST))?;
        let b = parse_int(&args.next()?, Some(CmdError::SWAPDB_SECOND))?;
        args.finish()?;
        Parsed::write(SwapDb { a, b })
    }
}

impl WriteCmd for SwapDb {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let n = w.databases();
        let (a, b) = (db_index(self.a, n)?, db_index(self.b, n)?);
        w.swapdb(a, b)?;
        // Every key of both databases changed: client-side caching gets the null invalidation
        // (Redis 7.0 sends nothing here, and its clients keep values of the other database).
        w.notify(relis::events::class::FLUSHED, "swapdb", a, b"");
        // Every key of both databases may now hold what a client blocked there waits for, as
        // Redis's scanDatabaseForReadyKeys finds after a swap.
        for (db, key) in cx.server.blocking.keys_in(&[a, b]) {
            w.note_ready(db, &key);
        }
        // Over PostgreSQL, the other nodes' clients blocked there too. Sent before the commit:
        // their serves lock the databases, so they wait for it.
        if cx.server.pubsub.relays() {
            cx.server
                .pubsub
                .relay(&crate::relay::Msg::ReadyDbs(vec![a, b]));
        }
        Ok(Frame::ok())
    }
}
