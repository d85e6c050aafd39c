//! LMOVE source destination LEFT|RIGHT LEFT|RIGHT — pop an element from one end of `source`,
//! push it onto an end of `destination`, and return it (nil when `source` holds no list).
//! RPOPLPUSH source destination is LMOVE ... RIGHT LEFT. <https://redis.io/commands/lmove/>,
//! <https://redis.io/commands/rpoplpush/>
//!
//! Both keys are checked before anything moves (a WRONGTYPE destination leaves the source
//! alone); `source` and `destination` may be the same list (a rotation). The destination's
//! blocked clients are served right after (the spec `unblocks`; both keys are reported).

use super::parse_end;
use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::End;
use resp::Frame;

/// LMOVE's declaration.
pub const SPEC: Spec = Spec {
    name: "lmove",
    arity: 5,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["write", "list", "slow"]),
    keys: (1, 2, 1),
    group: "list",
    since: "6.2.0",
    summary: "Pop an element from a list, push it to another list and return it",
    complexity: "O(1)",
    parse: LMove::parse,
    key_flags: Spec::key_flags(&["RW", "access", "delete"]),
    key_specs: super::MOVE_KEY_SPECS,
    unblocks: true,
    ..Spec::BASE
};

/// RPOPLPUSH's declaration (deprecated in favour of LMOVE RIGHT LEFT).
pub const SPEC_RPOPLPUSH: Spec = Spec {
    name: "rpoplpush",
    arity: 3,
    since: "1.2.0",
    summary: "Remove the last element in a list, prepend it to another list and return it",
    parse: LMove::parse_rpoplpush,
    ..SPEC
};

/// LMOVE source destination from to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LMove {
    /// The source list.
    pub src: Bytes,
    /// The destination list.
    pub dst: Bytes,
    /// The end popped from.
    pub from: End,
    /// The end pushed to.
    pub to: End,
}

impl LMove {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let src = args.next()?;
        let dst = args.next()?;
        let from = parse_end(&args.next()?)?;
        let to = parse_end(&args.next()?)?;
        args.finish()?;
        Parsed::write(LMove { src, dst, from, to })
    }

    fn parse_rpoplpush(args: &mut Args) -> Result<Parsed, CmdError> {
        let src = args.next()?;
        let dst = args.next()?;
        args.finish()?;
        Parsed::write(LMove {
            src,
            dst,
            from: End::Right,
            to: End::Left,
        })
    }
}

impl WriteCmd for LMove {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let v = w.lmove(cx.db, &self.src, &self.dst, self.from, self.to)?;
        if v.is_some() {
            super::notify_move(w, cx.db, (&self.src, self.from), (&self.dst, self.to))?;
        }
        Ok(v.map_or(Frame::Null, Frame::Bulk))
    }

    // Every error of this command comes before its first write (see WriteCmd::on_error).
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}
