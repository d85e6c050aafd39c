//! RESET — return the connection to its initial state: leave MULTI, forget WATCHed keys,
//! select database 0, speak RESP2, send replies again (CLIENT REPLY ON), drop the name and the
//! NO-EVICT / NO-TOUCH modes, and log out when a password is required.
//! <https://redis.io/commands/reset/>

use crate::args::Args;
use crate::client::{Client, ReplyMode};
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use resp::{Frame, Protocol};
use std::sync::atomic::Ordering;

/// RESET's declaration.
pub const SPEC: Spec = Spec {
    name: "reset",
    arity: 1,
    flags: Spec::flags(&[
        "noscript",
        "loading",
        "stale",
        "fast",
        "no_auth",
        "allow_busy",
    ]),
    acl: Spec::acl(&["fast", "connection"]),
    group: "connection",
    since: "6.2.0",
    summary: "Reset the connection",
    parse: Reset::parse,
    ..Spec::BASE
};

/// RESET.
pub struct Reset;

impl Reset {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(Reset)
    }
}

impl ConnCmd for Reset {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            c.multi = None;
            c.info.multi.store(-1, Ordering::Relaxed);
            // Subscriptions end silently (no unsubscribe confirmations), as in Redis.
            crate::pubsub::unsubscribe_all(c);
            c.watched.clear();
            // Tracking ends, as Redis's RESET disables it.
            c.tracking_off();
            if c.monitor {
                c.monitor = false;
                c.info.monitor.store(false, Ordering::Relaxed);
                c.server.monitors.remove(c.info.id);
            }
            c.db = 0;
            c.info.db.store(0, Ordering::Relaxed);
            c.proto = Protocol::Resp2;
            c.info.resp.store(2, Ordering::Relaxed);
            c.reply_mode = ReplyMode::On;
            // Like Redis's clientSetDefaultAuth: authenticated only if the default user needs
            // no password.
            c.user = c.server.acl.default_user();
            c.authed = c.user.needs_no_auth();
            *c.info.user.lock() = "default".into();
            *c.info.name.lock() = None;
            c.info.no_evict.store(false, Ordering::Relaxed);
            c.info.no_touch.store(false, Ordering::Relaxed);
            Ok(Frame::Simple(bytes::Bytes::from_static(b"RESET")))
        })
    }
}
