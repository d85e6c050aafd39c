//! APPEND key value — appends to the string at `key` (creating it, even with an empty value)
//! and replies with the new length. <https://redis.io/commands/append/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// APPEND's declaration.
pub const SPEC: Spec = Spec {
    name: "append",
    arity: 3,
    flags: Spec::flags(&["write", "denyoom", "fast"]),
    acl: Spec::acl(&["write", "string", "fast"]),
    keys: (1, 1, 1),
    group: "string",
    since: "2.0.0",
    summary: "Append a value to a key",
    complexity: "O(1). The amortized time complexity is O(1) assuming the appended value is small and the already present value is of any size, since the dynamic string library used by Redis will double the free space available on every reallocation.",
    parse: Append::parse,
    key_flags: Spec::key_flags(&["RW", "insert"]),
    ..Spec::BASE
};

/// APPEND key value.
#[derive(Debug, PartialEq, Eq)]
pub struct Append {
    key: Bytes,
    value: Bytes,
}

impl Append {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let (key, value) = (args.next()?, args.next()?);
        args.finish()?;
        Parsed::write(Append { key, value })
    }
}

impl WriteCmd for Append {
    // Every error of this command comes before its first write (see WriteCmd::on_error).
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }

    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let max = super::max_bulk_len(cx);
        let n = w.append(cx.db, &self.key, &self.value, max)?;
        w.notify(relis::events::class::STRING, "append", cx.db, &self.key);
        Ok(Frame::Integer(n))
    }
}
