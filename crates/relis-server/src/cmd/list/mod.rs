//! The list family. Replies have Redis 7.0's shapes under RESP2 and RESP3: a missing key is a
//! null bulk for single-element replies and a null array where Redis replies with an array
//! (LPOP with a count, LMPOP, and every blocking command's timeout), which RESP3 sends as `_`.
//!
//! Push commands (and LINSERT, LMOVE, RPOPLPUSH, and the blocking BLMOVE/BRPOPLPUSH, whose
//! non-blocking twins run inside MULTI) declare `unblocks`: right after one of them succeeds, in
//! the same transaction, the clients blocked on its keys are served (see `blocking.rs`).

pub mod blocking;
pub mod linsert;
pub mod llen;
pub mod lmove;
pub mod lmpop;
pub mod lpos;
pub mod lrange;
pub mod lrem;
pub mod lset;
pub mod ltrim;
pub mod pop;
pub mod push;

use crate::cmd::{FindKeys, KeySpec, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use relis::End;
use resp::Frame;

/// The list commands, in Redis's COMMAND order.
pub static SPECS: &[Spec] = &[
    push::SPEC_LPUSH,
    push::SPEC_RPUSH,
    push::SPEC_LPUSHX,
    push::SPEC_RPUSHX,
    pop::SPEC_LPOP,
    pop::SPEC_RPOP,
    llen::SPEC,
    lrange::SPEC_LINDEX,
    lrange::SPEC,
    lset::SPEC,
    linsert::SPEC,
    lrem::SPEC,
    ltrim::SPEC,
    lpos::SPEC,
    lmove::SPEC,
    lmove::SPEC_RPOPLPUSH,
    lmpop::SPEC,
    blocking::SPEC_BLPOP,
    blocking::SPEC_BRPOP,
    blocking::SPEC_BLMOVE,
    blocking::SPEC_BRPOPLPUSH,
    blocking::SPEC_BLMPOP,
];

/// LMOVE-style key specs: the source (`RW access delete`), then the destination (`RW insert`).
const MOVE_KEY_SPECS: &[KeySpec] = &[
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
];

/// The keys of a command line whose `numkeys` is at `at` (LMPOP: 1, BLMPOP: 2); none when it is
/// not a positive integer or runs past the line.
fn numkeys_keys(argv: &[Bytes], at: usize) -> Vec<usize> {
    let Some(n) = argv
        .get(at)
        .and_then(|a| relis::parse_i64(a))
        .and_then(|n| usize::try_from(n).ok())
        .filter(|n| *n > 0)
    else {
        return Vec::new();
    };
    if at + n >= argv.len() {
        return Vec::new();
    }
    (at + 1..=at + n).collect()
}

/// Elements as an array of bulks.
/// Records a pop's keyspace events: `lpop` / `rpop` on `key`, then `del` if it emptied the list.
fn notify_pop(w: &mut relis::Writer<'_>, db: u32, key: &[u8], end: End) -> relis::Result<()> {
    let event = match end {
        End::Left => "lpop",
        End::Right => "rpop",
    };
    w.notify(relis::events::class::LIST, event, db, key);
    crate::pubsub::notify_if_emptied(w, db, key)
}

/// Records a move's keyspace events as Redis orders them: the push on `dst`, then the pop on
/// `src` (and `del` if it emptied `src`).
fn notify_move(
    w: &mut relis::Writer<'_>,
    db: u32,
    (src, from): (&[u8], End),
    (dst, to): (&[u8], End),
) -> relis::Result<()> {
    let push = match to {
        End::Left => "lpush",
        End::Right => "rpush",
    };
    w.notify(relis::events::class::LIST, push, db, dst);
    notify_pop(w, db, src, from)
}

fn bulks(items: Vec<Bytes>) -> Frame {
    Frame::Array(items.into_iter().map(Frame::Bulk).collect())
}

/// LEFT or RIGHT (any case), else a syntax error, as Redis's `getListPositionFromObjectOrReply`.
fn parse_end(arg: &[u8]) -> Result<End, CmdError> {
    if arg.eq_ignore_ascii_case(b"left") {
        Ok(End::Left)
    } else if arg.eq_ignore_ascii_case(b"right") {
        Ok(End::Right)
    } else {
        Err(CmdError::Syntax)
    }
}

/// A count that must be a non-negative integer (LPOP/RPOP), with Redis's one text for every
/// failure.
fn parse_positive(arg: &[u8]) -> Result<usize, CmdError> {
    relis::parse_i64(arg)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or(CmdError::NOT_POSITIVE)
}

#[cfg(test)]
pub(crate) use crate::args::args_of;

/// Test helper: the error text a parse gives for `line`, or `None` when it parses.
#[cfg(test)]
pub(crate) fn parse_err(
    f: fn(&mut crate::args::Args) -> Result<crate::cmd::Parsed, CmdError>,
    name: &'static str,
    line: &str,
) -> Option<String> {
    f(&mut args_of(name, line)).err().map(|e| e.message())
}
