//! BITCOUNT key [start end [BYTE|BIT]] — the number of set bits in the string at `key`, or in
//! a range of it (bytes by default; negative offsets count from the end).
//! <https://redis.io/commands/bitcount/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// BITCOUNT's declaration.
pub const SPEC: Spec = Spec {
    name: "bitcount",
    arity: -2,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "bitmap", "slow"]),
    keys: (1, 1, 1),
    group: "bitmap",
    since: "2.6.0",
    summary: "Count set bits in a string",
    complexity: "O(N)",
    parse: BitCount::parse,
    ..Spec::BASE
};

/// BITCOUNT key [start end [BYTE|BIT]].
#[derive(Debug, PartialEq, Eq)]
pub struct BitCount {
    key: Bytes,
    /// The range arguments, checked after the key lookup as Redis does.
    rest: Vec<Bytes>,
}

impl BitCount {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let rest = args.rest();
        Parsed::read(BitCount { key, rest })
    }

    /// The range, in Redis's order of checks: `None` for the whole string.
    fn range(&self) -> Result<Option<(i64, i64, relis::BitUnit)>, CmdError> {
        match self.rest.len() {
            0 => Ok(None),
            2 | 3 => {
                let start = crate::args::parse_i64(&self.rest[0])?;
                let end = crate::args::parse_i64(&self.rest[1])?;
                // Two negative offsets the wrong way round: 0, whatever the unit says.
                if start < 0 && end < 0 && start > end {
                    return Ok(Some((start, end, relis::BitUnit::Byte)));
                }
                let unit = match self.rest.get(2) {
                    Some(u) => super::unit(u)?,
                    None => relis::BitUnit::Byte,
                };
                Ok(Some((start, end, unit)))
            }
            _ => Err(CmdError::Syntax),
        }
    }
}

impl ReadCmd for BitCount {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let len = crate::cmd::counted(cx, &self.key, r.bit_len(cx.db, &self.key))?;
        if len.is_none() {
            return Ok(Frame::Integer(0));
        }
        Ok(Frame::Integer(r.bitcount(
            cx.db,
            &self.key,
            self.range()?,
        )?))
    }
}
