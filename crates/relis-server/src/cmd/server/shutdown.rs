//! SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT] — stop the server. The connection closes
//! without a reply, as in Redis. <https://redis.io/commands/shutdown/>
//!
//! Every write is already committed to SQLite, so NOSAVE loses nothing; SAVE also takes a
//! snapshot (see SAVE) first, and if that fails the server keeps running unless FORCE is
//! given. Relis has no replicas to wait for, so NOW changes nothing and ABORT never finds a
//! shutdown in progress.

use super::save::snapshot;
use crate::args::Args;
use crate::client::{Client, ReplyMode};
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use resp::Frame;

/// SHUTDOWN's declaration.
pub const SPEC: Spec = Spec {
    name: "shutdown",
    arity: -1,
    flags: Spec::flags(&[
        "admin",
        "noscript",
        "loading",
        "stale",
        "no_multi",
        "allow_busy",
    ]),
    acl: Spec::acl(&["admin", "slow", "dangerous"]),
    group: "server",
    since: "1.0.0",
    summary: "Synchronously save the dataset to disk and then shut down the server",
    complexity: "O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)",
    parse: Shutdown::parse,
    ..Spec::BASE
};

/// SHUTDOWN's options.
#[derive(Debug, Default, PartialEq)]
pub struct Shutdown {
    save: bool,
    force: bool,
    abort: bool,
}

impl Shutdown {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::conn(Self::parse_args(args)?)
    }

    fn parse_args(args: &mut Args) -> Result<Shutdown, CmdError> {
        let mut s = Shutdown::default();
        let (mut nosave, mut now) = (false, false);
        while !args.is_empty() {
            if args.eat("nosave") {
                nosave = true;
            } else if args.eat("save") {
                s.save = true;
            } else if args.eat("now") {
                now = true;
            } else if args.eat("force") {
                s.force = true;
            } else if args.eat("abort") {
                s.abort = true;
            } else {
                return Err(CmdError::Syntax);
            }
        }
        let flags = nosave || s.save || now || s.force;
        if (s.abort && flags) || (nosave && s.save) {
            return Err(CmdError::Syntax);
        }
        args.finish()?;
        Ok(s)
    }
}

impl ConnCmd for Shutdown {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            if self.abort {
                return Err(CmdError::NO_SHUTDOWN);
            }
            if self.save && snapshot(&c.server).await.is_err() && !self.force {
                return Err(CmdError::SHUTDOWN_FAILED);
            }
            tracing::info!("User requested shutdown...");
            c.server.request_shutdown();
            // No reply: the connection just closes.
            c.reply_mode = ReplyMode::Off;
            c.quit = true;
            Ok(Frame::ok())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn parse(line: &[&str]) -> Result<Shutdown, CmdError> {
        let v = line.iter().map(|s| Bytes::from(s.to_string())).collect();
        Shutdown::parse_args(&mut Args::new("shutdown", v))
    }

    #[test]
    fn options() {
        assert_eq!(parse(&[]).unwrap(), Shutdown::default());
        assert!(parse(&["SAVE", "now", "force"]).unwrap().save);
        assert!(parse(&["abort"]).unwrap().abort);
        for bad in [
            &["foo"][..],
            &["nosave", "save"],
            &["abort", "now"],
            &["save", "abort"],
        ] {
            assert_eq!(parse(bad), Err(CmdError::Syntax), "{bad:?}");
        }
    }
}
