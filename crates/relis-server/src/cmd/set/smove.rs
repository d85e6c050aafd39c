//! SMOVE source destination member — moves `member` from the set at `source` to the set at
//! `destination` (created if need be); 1 if it was in `source`, else 0.
//! <https://redis.io/commands/smove/>
//!
//! As in Redis: a missing source replies 0 whatever the destination holds; otherwise either key
//! of another type is WRONGTYPE; the same key for both only checks membership.

use crate::args::Args;
use crate::cmd::{Cx, FindKeys, KeySpec, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// SMOVE's declaration.
pub const SPEC: Spec = Spec {
    name: "smove",
    key_specs: &[
        KeySpec {
            flags: Spec::key_flags(&["RW", "access", "delete"]),
            index: 1,
            notes: "",
            find: FindKeys::Range(0, 1, 0),
        },
        KeySpec {
            flags: Spec::key_flags(&["RW", "insert"]),
            index: 2,
            notes: "",
            find: FindKeys::Range(0, 1, 0),
        },
    ],
    arity: 4,
    flags: Spec::flags(&["write", "fast"]),
    acl: Spec::acl(&["write", "set", "fast"]),
    keys: (1, 2, 1),
    group: "set",
    since: "1.0.0",
    summary: "Move a member from one set to another",
    complexity: "O(1)",
    parse: SMove::parse,
    // Redis has two key specs: the source `RW access delete`, the destination `RW insert`.
    ..Spec::BASE
};

/// SMOVE source destination member.
#[derive(Debug, PartialEq, Eq)]
pub struct SMove {
    src: Bytes,
    dst: Bytes,
    member: Bytes,
}

impl SMove {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let (src, dst, member) = (args.next()?, args.next()?, args.next()?);
        args.finish()?;
        Parsed::write(SMove { src, dst, member })
    }
}

impl WriteCmd for SMove {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let wanted = w.wants_events(relis::events::class::SET);
        // Whether the destination had the member already (then Redis does not report `sadd`);
        // a lookup error is left for SMOVE itself to report, in its own order.
        let had = wanted
            && self.src != self.dst
            && w.sismember(cx.db, &self.dst, &self.member)
                .ok()
                .flatten()
                .unwrap_or(false);
        let mark = w.events_mark();
        let moved = w.smove(cx.db, &self.src, &self.dst, &self.member)?;
        if moved && self.src != self.dst {
            // Redis: `srem` (and `del`) on the source, then `new` and `sadd` on the destination;
            // the engine has recorded `new` already, so these go ahead of it.
            w.notify_at(mark, relis::events::class::SET, "srem", cx.db, &self.src);
            if w.wants_events(relis::events::class::GENERIC) && w.meta(cx.db, &self.src)?.is_none()
            {
                w.notify_at(
                    mark + 1,
                    relis::events::class::GENERIC,
                    "del",
                    cx.db,
                    &self.src,
                );
            }
            if !had {
                w.notify(relis::events::class::SET, "sadd", cx.db, &self.dst);
            }
        }
        Ok(Frame::Integer(i64::from(moved)))
    }

    // Every check comes before the first write (the engine clears an expired destination only
    // once the move is certain).
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}
