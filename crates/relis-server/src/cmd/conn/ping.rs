//! PING [message] — PONG, or the message. ECHO message — the message.
//! <https://redis.io/commands/ping/>, <https://redis.io/commands/echo/>

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// PING's declaration.
pub const SPEC_PING: Spec = Spec {
    name: "ping",
    arity: -1,
    flags: Spec::flags(&["fast", "sentinel"]),
    acl: Spec::acl(&["fast", "connection"]),
    group: "connection",
    since: "1.0.0",
    summary: "Ping the server",
    parse: Ping::parse,
    tips: &["request_policy:all_shards", "response_policy:all_succeeded"],
    ..Spec::BASE
};

/// ECHO's declaration.
pub const SPEC_ECHO: Spec = Spec {
    name: "echo",
    arity: 2,
    flags: Spec::flags(&["loading", "stale", "fast"]),
    acl: Spec::acl(&["fast", "connection"]),
    group: "connection",
    since: "1.0.0",
    summary: "Echo the given string",
    parse: Ping::parse_echo,
    ..Spec::BASE
};

/// PING or ECHO.
pub struct Ping {
    message: Option<Bytes>,
}

impl Ping {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        if args.remaining() > 1 {
            return Err(CmdError::WrongArity("ping".into()));
        }
        let message = args.rest().pop();
        Parsed::conn(Ping { message })
    }

    fn parse_echo(args: &mut Args) -> Result<Parsed, CmdError> {
        let message = Some(args.next()?);
        args.finish()?;
        Parsed::conn(Ping { message })
    }
}

impl ConnCmd for Ping {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            // A subscribed RESP2 connection can only tell replies from messages by their
            // shape: Redis answers PING with an array there (ECHO cannot run in that mode).
            if c.proto == resp::Protocol::Resp2 && c.subs.any() {
                return Ok(Frame::Array(vec![
                    Frame::Bulk(Bytes::from_static(b"pong")),
                    Frame::Bulk(self.message.unwrap_or_default()),
                ]));
            }
            Ok(match self.message {
                None => Frame::Simple(Bytes::from_static(b"PONG")),
                Some(m) => Frame::Bulk(m),
            })
        })
    }
}
