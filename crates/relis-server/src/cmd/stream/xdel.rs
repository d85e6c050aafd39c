//! XDEL key id [id ...] — deletes entries by id; replies how many existed.
//! <https://redis.io/commands/xdel/>
//!
//! As in Redis, a missing key replies 0 before the ids are looked at, and an invalid id fails
//! the command before anything is deleted. Each id is one primary-key delete.

use super::parse_strict_id;
use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// XDEL's declaration.
pub const SPEC: Spec = Spec {
    name: "xdel",
    arity: -3,
    flags: Spec::flags(&["write", "fast"]),
    acl: Spec::acl(&["write", "stream", "fast"]),
    keys: (1, 1, 1),
    group: "stream",
    since: "5.0.0",
    summary: "Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist.",
    complexity: "O(1) for each single item to delete in the stream, regardless of the stream size.",
    parse: XDel::parse,
    key_flags: Spec::key_flags(&["RW", "delete"]),
    ..Spec::BASE
};

/// XDEL key id [id ...].
#[derive(Debug, PartialEq, Eq)]
pub struct XDel {
    key: Bytes,
    ids: Vec<Bytes>,
}

impl XDel {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let ids = args.rest();
        args.finish()?;
        Parsed::write(XDel { key, ids })
    }
}

impl WriteCmd for XDel {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        // Redis looks the key up first: a missing key is 0 whatever the ids.
        match w.meta(cx.db, &self.key)? {
            None => return Ok(Frame::Integer(0)),
            Some(m) if m.kind != relis::KeyType::Stream => return Err(CmdError::WrongType),
            Some(_) => {}
        }
        let ids = self
            .ids
            .iter()
            .map(|a| parse_strict_id(a))
            .collect::<Result<Vec<_>, _>>()?;
        let n = w.xdel(cx.db, &self.key, &ids)?;
        if n > 0 {
            w.notify(relis::events::class::STREAM, "xdel", cx.db, &self.key);
        }
        Ok(Frame::Integer(n as i64))
    }
}
