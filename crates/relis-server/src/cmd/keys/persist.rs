//! PERSIST key — remove the key's expiry; 1 if it had one, 0 otherwise.
//! <https://redis.io/commands/persist/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// PERSIST's declaration.
pub const SPEC: Spec = Spec {
    name: "persist",
    key_flags: Spec::key_flags(&["RW", "update"]),
    arity: 2,
    flags: Spec::flags(&["write", "fast"]),
    acl: Spec::acl(&["keyspace", "write", "fast"]),
    keys: (1, 1, 1),
    group: "generic",
    since: "2.2.0",
    summary: "Remove the expiration from a key",
    complexity: "O(1)",
    parse: Persist::parse,
    ..Spec::BASE
};

/// PERSIST key.
#[derive(Debug, PartialEq, Eq)]
pub struct Persist {
    key: Bytes,
}

impl Persist {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        args.finish()?;
        Parsed::write(Persist { key })
    }
}

impl WriteCmd for Persist {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let done = w.persist(cx.db, &self.key)?;
        if done {
            w.notify(relis::events::class::GENERIC, "persist", cx.db, &self.key);
        }
        Ok(Frame::Integer(done as i64))
    }
}
