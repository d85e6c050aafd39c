//! TIME — the server's clock as [seconds, microseconds]; LASTSAVE — Unix time of the last
//! successful SAVE/BGSAVE (the start time until then).
//! <https://redis.io/commands/time/>, <https://redis.io/commands/lastsave/>

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;
use std::sync::atomic::Ordering;

/// TIME's declaration.
pub const SPEC_TIME: Spec = Spec {
    name: "time",
    arity: 1,
    flags: Spec::flags(&["loading", "stale", "fast"]),
    acl: Spec::acl(&["fast"]),
    group: "server",
    since: "2.6.0",
    summary: "Return the current server time",
    parse: Clock::parse_time,
    tips: &["nondeterministic_output"],
    ..Spec::BASE
};

/// LASTSAVE's declaration.
pub const SPEC_LASTSAVE: Spec = Spec {
    name: "lastsave",
    arity: 1,
    flags: Spec::flags(&["loading", "stale", "fast"]),
    acl: Spec::acl(&["admin", "fast", "dangerous"]),
    group: "server",
    since: "1.0.0",
    summary: "Get the UNIX time stamp of the last successful save to disk",
    parse: Clock::parse_lastsave,
    tips: &["nondeterministic_output"],
    ..Spec::BASE
};

/// TIME or LASTSAVE.
pub enum Clock {
    /// TIME.
    Time,
    /// LASTSAVE.
    LastSave,
}

impl Clock {
    fn parse_time(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(Clock::Time)
    }

    fn parse_lastsave(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(Clock::LastSave)
    }
}

impl ConnCmd for Clock {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            Ok(match *self {
                Clock::Time => {
                    let now = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .unwrap_or_default();
                    Frame::Array(vec![
                        Frame::Bulk(Bytes::from(now.as_secs().to_string())),
                        Frame::Bulk(Bytes::from(now.subsec_micros().to_string())),
                    ])
                }
                Clock::LastSave => Frame::Integer(c.server.lastsave.load(Ordering::Relaxed)),
            })
        })
    }
}
