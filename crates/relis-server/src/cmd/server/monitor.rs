//! MONITOR — stream every command the server runs to this connection (see
//! [`crate::monitor`]). <https://redis.io/commands/monitor/>
//!
//! As in Redis 7.0: `+OK`, then one line per command; a second MONITOR gets no reply at all;
//! inside MULTI it is refused at EXEC (`MONITOR isn't allowed for DENY BLOCKING client`); the
//! monitor may still send commands that do not touch the keyspace, and RESET ends it.

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use resp::Frame;

/// MONITOR's declaration.
pub const SPEC: Spec = Spec {
    name: "monitor",
    arity: 1,
    flags: Spec::flags(&["admin", "noscript", "loading", "stale"]),
    acl: Spec::acl(&["admin", "slow", "dangerous"]),
    group: "server",
    since: "1.0.0",
    summary: "Listen for all requests received by the server in real time",
    parse: Monitor::parse,
    ..Spec::BASE
};

/// MONITOR.
#[derive(Debug, PartialEq)]
pub struct Monitor;

impl Monitor {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(Monitor)
    }
}

impl ConnCmd for Monitor {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            if c.monitor {
                // Redis answers nothing to a monitor's second MONITOR.
                c.skip_reply();
                return Ok(Frame::ok());
            }
            c.monitor = true;
            c.info
                .monitor
                .store(true, std::sync::atomic::Ordering::Relaxed);
            c.mailbox_used = true;
            c.server.monitors.add(&c.info);
            Ok(Frame::ok())
        })
    }

    fn in_transaction(&mut self) -> Option<Box<dyn WriteCmd>> {
        Some(Box::new(Denied))
    }
}

/// MONITOR inside a transaction.
struct Denied;

impl WriteCmd for Denied {
    fn exec(&self, _w: &mut relis::Writer<'_>, _cx: &Cx) -> Result<Frame, CmdError> {
        Err(CmdError::MONITOR_DENY_BLOCKING)
    }
}
