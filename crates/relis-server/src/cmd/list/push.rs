//! LPUSH / RPUSH key element [element ...] and LPUSHX / RPUSHX key element [element ...] —
//! push elements at the head or tail, one after the other (the X forms only onto an existing
//! list); reply with the new length. <https://redis.io/commands/lpush/>,
//! <https://redis.io/commands/rpush/>, <https://redis.io/commands/lpushx/>,
//! <https://redis.io/commands/rpushx/>
//!
//! Each element is one row at the list's end: O(1) per element whatever the list's length.

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::End;
use resp::Frame;

const COMPLEXITY: &str = "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.";

/// LPUSH's declaration.
pub const SPEC_LPUSH: Spec = Spec {
    name: "lpush",
    arity: -3,
    flags: Spec::flags(&["write", "denyoom", "fast"]),
    acl: Spec::acl(&["write", "list", "fast"]),
    keys: (1, 1, 1),
    group: "list",
    since: "1.0.0",
    summary: "Prepend one or multiple elements to a list",
    complexity: COMPLEXITY,
    parse: |a| Push::parse(a, End::Left, false),
    key_flags: Spec::key_flags(&["RW", "insert"]),
    unblocks: true,
    ..Spec::BASE
};

/// RPUSH's declaration.
pub const SPEC_RPUSH: Spec = Spec {
    name: "rpush",
    summary: "Append one or multiple elements to a list",
    parse: |a| Push::parse(a, End::Right, false),
    ..SPEC_LPUSH
};

/// LPUSHX's declaration.
pub const SPEC_LPUSHX: Spec = Spec {
    name: "lpushx",
    since: "2.2.0",
    summary: "Prepend an element to a list, only if the list exists",
    parse: |a| Push::parse(a, End::Left, true),
    ..SPEC_LPUSH
};

/// RPUSHX's declaration.
pub const SPEC_RPUSHX: Spec = Spec {
    name: "rpushx",
    since: "2.2.0",
    summary: "Append an element to a list, only if the list exists",
    parse: |a| Push::parse(a, End::Right, true),
    ..SPEC_LPUSH
};

/// A push.
#[derive(Debug, PartialEq, Eq)]
pub struct Push {
    key: Bytes,
    values: Vec<Bytes>,
    end: End,
    only_existing: bool,
}

impl Push {
    fn parse(args: &mut Args, end: End, only_existing: bool) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let values = args.rest();
        args.finish()?;
        Parsed::write(Push {
            key,
            values,
            end,
            only_existing,
        })
    }
}

impl WriteCmd for Push {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let n = w.push(cx.db, &self.key, &self.values, self.end, self.only_existing)?;
        // LPUSHX / RPUSHX on a missing key push nothing, and say nothing.
        if n > 0 {
            let event = match self.end {
                End::Left => "lpush",
                End::Right => "rpush",
            };
            w.notify(relis::events::class::LIST, event, cx.db, &self.key);
        }
        Ok(Frame::Integer(n))
    }

    // Every error of this command comes before its first write (see WriteCmd::on_error).
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}
