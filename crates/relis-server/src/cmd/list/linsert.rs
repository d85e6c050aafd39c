//! LINSERT key BEFORE|AFTER pivot element — insert `element` next to the first element equal
//! to `pivot`; reply with the new length, 0 when there is no list, -1 when the pivot is not
//! found. <https://redis.io/commands/linsert/>
//!
//! O(N) as in Redis: the pivot is found by a walk from the head, and the shorter side of the
//! list is renumbered (see the engine's `list.rs`), so repeated inserts at one spot cost the
//! same each time.

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::Side;
use resp::Frame;

/// LINSERT's declaration.
pub const SPEC: Spec = Spec {
    name: "linsert",
    arity: 5,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["write", "list", "slow"]),
    keys: (1, 1, 1),
    group: "list",
    since: "2.2.0",
    summary: "Insert an element before or after another element in a list",
    complexity: "O(N) where N is the number of elements to traverse before seeing the value pivot. This means that inserting somewhere on the left end on the list (head) can be considered O(1) and inserting somewhere on the right end (tail) is O(N).",
    parse: LInsert::parse,
    key_flags: Spec::key_flags(&["RW", "insert"]),
    unblocks: true,
    ..Spec::BASE
};

/// LINSERT key BEFORE|AFTER pivot element.
#[derive(Debug, PartialEq, Eq)]
pub struct LInsert {
    key: Bytes,
    side: Side,
    pivot: Bytes,
    value: Bytes,
}

impl LInsert {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let side = if args.eat("after") {
            Side::After
        } else if args.eat("before") {
            Side::Before
        } else {
            return Err(CmdError::Syntax);
        };
        let pivot = args.next()?;
        let value = args.next()?;
        args.finish()?;
        Parsed::write(LInsert {
            key,
            side,
            pivot,
            value,
        })
    }
}

impl WriteCmd for LInsert {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let n = w.linsert(cx.db, &self.key, self.side, &self.pivot, &self.value)?;
        if n > 0 {
            w.notify(relis::events::class::LIST, "linsert", cx.db, &self.key);
        }
        Ok(Frame::Integer(n))
    }

    // Every error of this command comes before its first write (see WriteCmd::on_error).
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}
