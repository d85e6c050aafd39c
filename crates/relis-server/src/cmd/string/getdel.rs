//! GETDEL key — the string value of `key`, and the key is deleted; nil when there is none.
//! <https://redis.io/commands/getdel/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// GETDEL's declaration.
pub const SPEC: Spec = Spec {
    name: "getdel",
    arity: 2,
    flags: Spec::flags(&["write", "fast"]),
    acl: Spec::acl(&["write", "string", "fast"]),
    keys: (1, 1, 1),
    group: "string",
    since: "6.2.0",
    summary: "Get the value of a key and delete the key",
    complexity: "O(1)",
    parse: GetDel::parse,
    key_flags: Spec::key_flags(&["RW", "access", "delete"]),
    ..Spec::BASE
};

/// GETDEL key.
#[derive(Debug, PartialEq, Eq)]
pub struct GetDel {
    key: Bytes,
}

impl GetDel {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        args.finish()?;
        Parsed::write(GetDel { key })
    }
}

impl WriteCmd for GetDel {
    // Every error of this command comes before its first write (see WriteCmd::on_error).
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }

    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        // Redis reads the value with its GET code, so the lookup counts as a read.
        let v = crate::cmd::counted(cx, &self.key, w.getdel(cx.db, &self.key))?;
        if v.is_some() {
            w.notify(relis::events::class::GENERIC, "del", cx.db, &self.key);
        }
        Ok(v.map_or(Frame::Null, Frame::Bulk))
    }
}
