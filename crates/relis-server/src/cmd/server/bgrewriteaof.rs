//! BGREWRITEAOF — rewrite the append-only file in the background.
//! <https://redis.io/commands/bgrewriteaof/>
//!
//! Relis has no append-only file: every write is committed to its SQLite file, whose journal
//! plays the AOF's part and needs no rewriting. BGREWRITEAOF answers what a redis-server with
//! `appendonly no` answers, and has nothing to do.

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// BGREWRITEAOF's declaration.
pub const SPEC: Spec = Spec {
    name: "bgrewriteaof",
    arity: 1,
    flags: Spec::flags(&["admin", "noscript", "no_async_loading"]),
    acl: Spec::acl(&["admin", "slow", "dangerous"]),
    group: "server",
    since: "1.0.0",
    summary: "Asynchronously rewrite the append-only file",
    parse: BgRewriteAof::parse,
    ..Spec::BASE
};

/// BGREWRITEAOF.
pub struct BgRewriteAof;

impl BgRewriteAof {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(BgRewriteAof)
    }
}

impl ConnCmd for BgRewriteAof {
    fn exec<'a>(self: Box<Self>, _c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            Ok(Frame::Simple(Bytes::from_static(
                b"Background append only file rewriting started",
            )))
        })
    }
}
