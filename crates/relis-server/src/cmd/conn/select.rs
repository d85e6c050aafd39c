//! SELECT index — change the connection's logical database. <https://redis.io/commands/select/>

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use resp::Frame;
use std::sync::atomic::Ordering;

/// SELECT's declaration.
pub const SPEC: Spec = Spec {
    name: "select",
    arity: 2,
    flags: Spec::flags(&["loading", "stale", "fast"]),
    acl: Spec::acl(&["fast", "connection"]),
    group: "connection",
    since: "1.0.0",
    summary: "Change the selected database for the current connection",
    parse: Select::parse,
    ..Spec::BASE
};

/// SELECT index.
pub struct Select {
    index: i64,
}

impl Select {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let index = args.next_i64()?;
        args.finish()?;
        // Redis reads the index as a C int.
        if i32::try_from(index).is_err() {
            return Err(CmdError::NotInteger);
        }
        Parsed::conn(Select { index })
    }
}

impl ConnCmd for Select {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            if self.index < 0 || self.index >= c.server.db.databases() as i64 {
                return Err(CmdError::DbIndexOutOfRange);
            }
            c.db = self.index as u32;
            c.info.db.store(c.db, Ordering::Relaxed);
            Ok(Frame::ok())
        })
    }

    fn selects(&self) -> Option<u32> {
        u32::try_from(self.index).ok()
    }
}
