//! SETBIT key offset value — sets or clears the bit at `offset` of the string at `key`,
//! growing it with zero bytes (or creating it) as needed, and replies with the bit's old value.
//! <https://redis.io/commands/setbit/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// SETBIT's declaration.
pub const SPEC: Spec = Spec {
    name: "setbit",
    arity: 4,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["write", "bitmap", "slow"]),
    keys: (1, 1, 1),
    group: "bitmap",
    since: "2.2.0",
    summary: "Sets or clears the bit at offset in the string value stored at key",
    complexity: "O(1)",
    parse: SetBit::parse,
    key_flags: Spec::key_flags(&["RW", "access", "update"]),
    ..Spec::BASE
};

/// SETBIT key offset value.
#[derive(Debug, PartialEq, Eq)]
pub struct SetBit {
    key: Bytes,
    offset: Bytes,
    value: Bytes,
}

impl SetBit {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let (key, offset, value) = (args.next()?, args.next()?, args.next()?);
        args.finish()?;
        Parsed::write(SetBit { key, offset, value })
    }
}

impl WriteCmd for SetBit {
    // Every error of this command comes before its first write (see WriteCmd::on_error).
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }

    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let offset = super::bit_offset(&self.offset, None, cx)?;
        let on = match relis::parse_i64(&self.value) {
            Some(0) => false,
            Some(1) => true,
            _ => return Err(CmdError::BIT_VALUE),
        };
        let (old, changed) = w.setbit(cx.db, &self.key, offset, on)?;
        // Redis 7.0 signals nothing when an existing string already had that bit.
        if changed {
            w.notify(relis::events::class::STRING, "setbit", cx.db, &self.key);
        }
        Ok(Frame::Integer(i64::from(old)))
    }
}
