//! REPLICAOF host port | NO ONE, and its old name SLAVEOF — make the server a replica of
//! another, or a master again. <https://redis.io/commands/replicaof/>
//!
//! `host port` makes Relis a replica of that redis-server master (see `replica.rs`): it answers
//! OK at once and connects in the background, as Redis does; the same master again answers
//! "OK Already connected to specified master". NO ONE makes it a master again, keeping its
//! data. The port is checked as Redis checks it ("Invalid master port" for a port that is not
//! an integer in 0..=65535).

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// REPLICAOF's declaration.
pub const SPEC_REPLICAOF: Spec = Spec {
    name: "replicaof",
    arity: 3,
    flags: Spec::flags(&["admin", "noscript", "stale", "no_async_loading"]),
    acl: Spec::acl(&["admin", "slow", "dangerous"]),
    group: "server",
    since: "5.0.0",
    summary: "Make the server a replica of another instance, or promote it as master.",
    parse: ReplicaOf::parse,
    ..Spec::BASE
};

/// SLAVEOF's declaration.
pub const SPEC_SLAVEOF: Spec = Spec {
    name: "slaveof",
    since: "1.0.0",
    ..SPEC_REPLICAOF
};

/// REPLICAOF's two forms.
#[derive(Debug, PartialEq)]
pub enum ReplicaOf {
    /// NO ONE.
    NoOne,
    /// host port (a valid port).
    Master(String, u16),
}

impl ReplicaOf {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::conn(Self::parse_args(args)?)
    }

    fn parse_args(args: &mut Args) -> Result<ReplicaOf, CmdError> {
        let host = args.next()?;
        let port = args.next()?;
        args.finish()?;
        if host.eq_ignore_ascii_case(b"no") && port.eq_ignore_ascii_case(b"one") {
            return Ok(ReplicaOf::NoOne);
        }
        match relis::parse_i64(&port) {
            Some(p @ 0..=65535) => Ok(ReplicaOf::Master(
                String::from_utf8_lossy(&host).into_owned(),
                p as u16,
            )),
            _ => Err(CmdError::MASTER_PORT),
        }
    }
}

impl ConnCmd for ReplicaOf {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let server = c.server.clone();
            match *self {
                ReplicaOf::NoOne => {
                    server.replication.promote(&server);
                    Ok(Frame::Simple(Bytes::from_static(b"OK")))
                }
                ReplicaOf::Master(host, port) => {
                    let reply = crate::replica::link::start(&server, &host, port);
                    Ok(Frame::Simple(Bytes::from_static(reply.as_bytes())))
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(host: &str, port: &str) -> Result<ReplicaOf, String> {
        let argv = vec![Bytes::from(host.to_string()), Bytes::from(port.to_string())];
        ReplicaOf::parse_args(&mut Args::new("replicaof", argv)).map_err(|e| e.message())
    }

    #[test]
    fn forms_and_port_errors() {
        assert_eq!(parse("No", "oNe"), Ok(ReplicaOf::NoOne));
        assert_eq!(
            parse("127.0.0.1", "6379"),
            Ok(ReplicaOf::Master("127.0.0.1".into(), 6379))
        );
        assert_eq!(parse("h", "0"), Ok(ReplicaOf::Master("h".into(), 0)));
        for port in ["two", "-1", "65536", "99999", "1.5"] {
            assert_eq!(parse("no", port).unwrap_err(), "ERR Invalid master port");
        }
    }
}
