//! QUIT — reply OK and close the connection. <https://redis.io/commands/quit/>

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use resp::Frame;

/// QUIT's declaration.
pub const SPEC: Spec = Spec {
    name: "quit",
    arity: -1,
    flags: Spec::flags(&[
        "allow_busy",
        "noscript",
        "loading",
        "stale",
        "fast",
        "no_auth",
    ]),
    acl: Spec::acl(&["fast", "connection"]),
    group: "connection",
    since: "1.0.0",
    summary: "Close the connection",
    parse: Quit::parse,
    ..Spec::BASE
};

/// QUIT (extra arguments are ignored, as in Redis).
pub struct Quit;

impl Quit {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        args.rest();
        Parsed::conn(Quit)
    }
}

impl ConnCmd for Quit {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            c.quit = true;
            Ok(Frame::ok())
        })
    }
}
