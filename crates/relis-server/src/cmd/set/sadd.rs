//! SADD key member [member ...] — adds the members to the set at `key` (creating it), replying
//! how many were not there already. <https://redis.io/commands/sadd/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// SADD's declaration.
pub const SPEC: Spec = Spec {
    name: "sadd",
    arity: -3,
    flags: Spec::flags(&["write", "denyoom", "fast"]),
    acl: Spec::acl(&["write", "set", "fast"]),
    keys: (1, 1, 1),
    group: "set",
    since: "1.0.0",
    summary: "Add one or more members to a set",
    complexity: "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.",
    parse: SAdd::parse,
    key_flags: Spec::key_flags(&["RW", "insert"]),
    ..Spec::BASE
};

/// SADD key member [member ...].
#[derive(Debug, PartialEq, Eq)]
pub struct SAdd {
    key: Bytes,
    members: Vec<Bytes>,
}

impl SAdd {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let members = args.rest();
        args.finish()?;
        Parsed::write(SAdd { key, members })
    }
}

impl WriteCmd for SAdd {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let n = w.sadd(cx.db, &self.key, &self.members)?;
        if n > 0 {
            w.notify(relis::events::class::SET, "sadd", cx.db, &self.key);
        }
        Ok(Frame::Integer(n))
    }

    // The type check comes before the first write.
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}
