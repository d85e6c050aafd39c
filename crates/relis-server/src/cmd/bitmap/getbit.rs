//! GETBIT key offset — the bit at `offset` of the string at `key`; 0 past its end or for a
//! missing key. <https://redis.io/commands/getbit/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// GETBIT's declaration.
pub const SPEC: Spec = Spec {
    name: "getbit",
    arity: 3,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["read", "bitmap", "fast"]),
    keys: (1, 1, 1),
    group: "bitmap",
    since: "2.2.0",
    summary: "Returns the bit value at offset in the string value stored at key",
    complexity: "O(1)",
    parse: GetBit::parse,
    ..Spec::BASE
};

/// GETBIT key offset.
#[derive(Debug, PartialEq, Eq)]
pub struct GetBit {
    key: Bytes,
    offset: Bytes,
}

impl GetBit {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let (key, offset) = (args.next()?, args.next()?);
        args.finish()?;
        Parsed::read(GetBit { key, offset })
    }
}

impl ReadCmd for GetBit {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        // The offset is checked before the key is looked up.
        let offset = super::bit_offset(&self.offset, None, cx)?;
        let bit = crate::cmd::counted(cx, &self.key, r.getbit(cx.db, &self.key, offset))?;
        Ok(Frame::Integer(i64::from(bit.unwrap_or(0))))
    }
}
