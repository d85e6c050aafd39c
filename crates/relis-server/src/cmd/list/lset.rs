//! LSET key index element — replace the element at `index` (negative counts from the tail).
//! <https://redis.io/commands/lset/>
//!
//! One primary-key update at `head + index`. As in Redis the key is looked up before the index
//! is read: a missing key is "no such key" even with a bad index.

use crate::args::{parse_i64, Args};
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// LSET's declaration.
pub const SPEC: Spec = Spec {
    name: "lset",
    arity: 4,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["write", "list", "slow"]),
    keys: (1, 1, 1),
    group: "list",
    since: "1.0.0",
    summary: "Set the value of an element in a list by its index",
    complexity: "O(N) where N is the length of the list. Setting either the first or the last element of the list is O(1).",
    parse: LSet::parse,
    key_flags: Spec::key_flags(&["RW", "update"]),
    ..Spec::BASE
};

/// LSET key index element.
#[derive(Debug, PartialEq, Eq)]
pub struct LSet {
    key: Bytes,
    index: Result<i64, CmdError>,
    value: Bytes,
}

impl LSet {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let index = parse_i64(&args.next()?);
        let value = args.next()?;
        args.finish()?;
        Parsed::write(LSet { key, index, value })
    }
}

impl WriteCmd for LSet {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let index = match &self.index {
            Ok(i) => *i,
            Err(e) => {
                return match w.llen(cx.db, &self.key)? {
                    None => Err(CmdError::NoSuchKey),
                    Some(_) => Err(e.clone()),
                }
            }
        };
        if w.lset(cx.db, &self.key, index, &self.value)? {
            w.notify(relis::events::class::LIST, "lset", cx.db, &self.key);
            Ok(Frame::ok())
        } else {
            Err(CmdError::INDEX_OUT_OF_RANGE)
        }
    }

    // Every error of this command comes before its first write (see WriteCmd::on_error).
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}
