//! MULTI — start queueing; DISCARD — drop the queue. <https://redis.io/commands/multi/>,
//! <https://redis.io/commands/discard/>

use crate::args::Args;
use crate::client::{Client, Multi};
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use resp::Frame;
use std::sync::atomic::Ordering;

/// MULTI's declaration.
pub const SPEC_MULTI: Spec = Spec {
    name: "multi",
    arity: 1,
    flags: Spec::flags(&["noscript", "loading", "stale", "fast", "allow_busy"]),
    acl: Spec::acl(&["fast", "transaction"]),
    group: "transactions",
    since: "1.2.0",
    summary: "Starts a transaction.",
    parse: MultiCmd::parse,
    ..Spec::BASE
};

/// DISCARD's declaration.
pub const SPEC_DISCARD: Spec = Spec {
    name: "discard",
    arity: 1,
    flags: Spec::flags(&["noscript", "loading", "stale", "fast", "allow_busy"]),
    acl: Spec::acl(&["fast", "transaction"]),
    group: "transactions",
    since: "2.0.0",
    summary: "Discards a transaction.",
    parse: MultiCmd::parse_discard,
    ..Spec::BASE
};

/// MULTI or DISCARD.
pub struct MultiCmd {
    discard: bool,
}

impl MultiCmd {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(MultiCmd { discard: false })
    }

    fn parse_discard(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(MultiCmd { discard: true })
    }
}

impl ConnCmd for MultiCmd {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            if self.discard {
                if c.multi.take().is_none() {
                    return Err(CmdError::DISCARD_WITHOUT_MULTI);
                }
                c.info.multi.store(-1, Ordering::Relaxed);
                c.watched.clear();
                return Ok(Frame::ok());
            }
            if c.multi.is_some() {
                return Err(CmdError::MULTI_NESTED);
            }
            c.multi = Some(Multi::default());
            c.info.multi.store(0, Ordering::Relaxed);
            Ok(Frame::ok())
        })
    }
}
