//! ROLE — the instance's replication role: `master`, its replication offset (0: Relis has no
//! replication stream) and its replicas (none); on a replica, `slave`, its master's address,
//! the link's state and the offset applied. <https://redis.io/commands/role/>

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// ROLE's declaration.
pub const SPEC: Spec = Spec {
    name: "role",
    arity: 1,
    flags: Spec::flags(&["noscript", "loading", "stale", "fast"]),
    acl: Spec::acl(&["admin", "fast", "dangerous"]),
    group: "server",
    since: "2.8.12",
    summary: "Return the role of the instance in the context of replication",
    parse: Role::parse,
    ..Spec::BASE
};

/// ROLE.
pub struct Role;

impl Role {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(Role)
    }

    /// The reply: `["master", offset, []]` in both protocols, as Redis sends it.
    pub fn reply() -> Frame {
        Frame::Array(vec![
            Frame::Bulk(Bytes::from_static(b"master")),
            Frame::Integer(super::OFFSET),
            Frame::Array(Vec::new()),
        ])
    }
}

impl ConnCmd for Role {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move { Ok(c.server.replication.role().unwrap_or_else(Role::reply)) })
    }
}
