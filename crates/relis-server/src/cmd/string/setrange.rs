//! SETRANGE key offset value — overwrites the string at `key` from `offset` on, padding with
//! zero bytes as needed, and replies with the new length. Writing an empty value changes
//! nothing (and creates nothing). <https://redis.io/commands/setrange/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// SETRANGE's declaration.
pub const SPEC: Spec = Spec {
    name: "setrange",
    arity: 4,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["write", "string", "slow"]),
    keys: (1, 1, 1),
    group: "string",
    since: "2.2.0",
    summary: "Overwrite part of a string at key starting at the specified offset",
    complexity: "O(1), not counting the time taken to copy the new string in place. Usually, this string is very small so the amortized complexity is O(1). Otherwise, complexity is O(M) with M being the length of the value argument.",
    parse: SetRange::parse,
    key_flags: Spec::key_flags(&["RW", "update"]),
    ..Spec::BASE
};

/// SETRANGE key offset value.
#[derive(Debug, PartialEq, Eq)]
pub struct SetRange {
    key: Bytes,
    offset: usize,
    value: Bytes,
}

impl SetRange {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        SetRange::parse_args(args).and_then(Parsed::write)
    }

    fn parse_args(args: &mut Args) -> Result<SetRange, CmdError> {
        let key = args.next()?;
        // Redis rejects a negative offset before it looks at the key (even one of another type).
        let offset = args.next_i64()?;
        let offset = usize::try_from(offset).map_err(|_| CmdError::OFFSET_OUT_OF_RANGE)?;
        let value = args.next()?;
        args.finish()?;
        Ok(SetRange { key, offset, value })
    }
}

impl WriteCmd for SetRange {
    // Every error of this command comes before its first write (see WriteCmd::on_error).
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }

    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let max = super::max_bulk_len(cx);
        let n = w.setrange(cx.db, &self.key, self.offset, &self.value, max)?;
        // An empty value changes nothing, and Redis says nothing.
        if !self.value.is_empty() {
            w.notify(relis::events::class::STRING, "setrange", cx.db, &self.key);
        }
        Ok(Frame::Integer(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset() {
        let p = |l: &str| SetRange::parse_args(&mut super::super::args_of("setrange", l));
        assert_eq!(p("k 5 v").map(|s| s.offset), Ok(5));
        assert_eq!(p("k -1 v"), Err(CmdError::err("offset is out of range")));
        assert_eq!(p("k x v"), Err(CmdError::NotInteger));
    }
}
