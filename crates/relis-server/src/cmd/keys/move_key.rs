//! MOVE key db — move a key (with its expiry) to another database of the same server.
//! <https://redis.io/commands/move/>
//!
//! Replies 1 when moved, 0 when the key is missing or the target database already has it.

use crate::args::Args;
use crate::cmd::keys::{db_index, parse_int};
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// MOVE's declaration.
pub const SPEC: Spec = Spec {
    name: "move",
    arity: 3,
    flags: Spec::flags(&["write", "fast"]),
    acl: Spec::acl(&["keyspace", "write", "fast"]),
    keys: (1, 1, 1),
    group: "generic",
    since: "1.0.0",
    summary: "Move a key to another database",
    complexity: "O(1)",
    parse: Move::parse,
    ..Spec::BASE
};

/// MOVE key db.
#[derive(Debug, PartialEq, Eq)]
pub struct Move {
    key: Bytes,
    db: i32,
}

impl Move {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let db = parse_int(&args.next()?, None)?;
        args.finish()?;
        Parsed::write(Move { key, db })
    }
}

impl WriteCmd for Move {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let dst = db_index(self.db, w.databases())?;
        let moved = w.move_key(cx.db, &self.key, dst)?;
        if moved {
            w.notify(relis::events::class::GENERIC, "move_from", cx.db, &self.key);
            w.notify(relis::events::class::GENERIC, "move_to", dst, &self.key);
        }
        Ok(Frame::Integer(moved as i64))
    }
}
