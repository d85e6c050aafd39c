//! PSYNC replicationid offset, SYNC — the replication handshake a replica sends its master.
//! <https://redis.io/commands/psync/>, <https://redis.io/commands/sync/>
//!
//! Relis has no replication stream and no RDB to send, so after Redis's argument checks (PSYNC's
//! offset must be an integer) both are refused with a clear error rather than a full resync.

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use resp::Frame;

/// PSYNC's declaration.
pub const SPEC_PSYNC: Spec = Spec {
    name: "psync",
    arity: -3,
    flags: Spec::flags(&["admin", "noscript", "no_async_loading", "no_multi"]),
    acl: Spec::acl(&["admin", "slow", "dangerous"]),
    group: "server",
    since: "2.8.0",
    summary: "Internal command used for replication",
    complexity: "",
    parse: Sync::parse_psync,
    ..Spec::BASE
};

/// SYNC's declaration.
pub const SPEC_SYNC: Spec = Spec {
    name: "sync",
    arity: 1,
    since: "1.0.0",
    parse: Sync::parse_sync,
    ..SPEC_PSYNC
};

/// PSYNC or SYNC, checked.
pub struct Sync;

impl Sync {
    fn parse_psync(args: &mut Args) -> Result<Parsed, CmdError> {
        args.next()?;
        let offset = args.next()?;
        // Redis reads the rest (PSYNC ... FAILOVER) only from a replica it failed over to.
        args.rest();
        relis::parse_i64(&offset).ok_or(CmdError::NotInteger)?;
        Parsed::conn(Sync)
    }

    fn parse_sync(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(Sync)
    }
}

impl ConnCmd for Sync {
    fn exec<'a>(self: Box<Self>, _c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move { Err(CmdError::NO_REPLICATION) })
    }
}
