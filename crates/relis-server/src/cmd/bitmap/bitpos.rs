//! BITPOS key bit [start [end [BYTE|BIT]]] — the position of the first bit set to `bit` in the
//! string at `key` (or in a range of it); -1 when there is none, and a missing key is all
//! zeros. <https://redis.io/commands/bitpos/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// BITPOS's declaration.
pub const SPEC: Spec = Spec {
    name: "bitpos",
    arity: -3,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "bitmap", "slow"]),
    keys: (1, 1, 1),
    group: "bitmap",
    since: "2.8.7",
    summary: "Find first bit set or clear in a string",
    complexity: "O(N)",
    parse: BitPos::parse,
    ..Spec::BASE
};

/// BITPOS key bit [start [end [BYTE|BIT]]].
#[derive(Debug, PartialEq, Eq)]
pub struct BitPos {
    key: Bytes,
    bit: Bytes,
    /// The range arguments, checked after the key lookup as Redis does.
    rest: Vec<Bytes>,
}

impl BitPos {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let (key, bit) = (args.next()?, args.next()?);
        let rest = args.rest();
        Parsed::read(BitPos { key, bit, rest })
    }

    /// The range: start, end if given, unit; `None` for the whole string.
    fn range(&self) -> Result<Option<(i64, Option<i64>, relis::BitUnit)>, CmdError> {
        if self.rest.is_empty() {
            return Ok(None);
        }
        if self.rest.len() > 3 {
            return Err(CmdError::Syntax);
        }
        let start = crate::args::parse_i64(&self.rest[0])?;
        // Redis reads the unit before the end.
        let unit = match self.rest.get(2) {
            Some(u) => super::unit(u)?,
            None => relis::BitUnit::Byte,
        };
        let end = match self.rest.get(1) {
            Some(e) => Some(crate::args::parse_i64(e)?),
            None => None,
        };
        Ok(Some((start, end, unit)))
    }
}

impl ReadCmd for BitPos {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let bit = match crate::args::parse_i64(&self.bit)? {
            0 => false,
            1 => true,
            _ => return Err(CmdError::BIT_ARGUMENT),
        };
        let v = crate::cmd::counted(cx, &self.key, r.bit_string(cx.db, &self.key))?;
        let Some(v) = v else {
            return Ok(Frame::Integer(if bit { -1 } else { 0 }));
        };
        Ok(Frame::Integer(relis::bitpos(&v, bit, self.range()?)))
    }
}
