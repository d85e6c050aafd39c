//! The bitmap family: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD and BITFIELD_RO, on
//! string values (a bitmap is an ordinary string; see the engine's `bits.rs`).
//!
//! Redis checks most of these commands' arguments only after it has looked the key up (a
//! missing key or a key of another type answers before a bad range is noticed), and checks bit
//! offsets against proto-max-bulk-len: their `parse` keeps the arguments and `exec` checks them
//! in Redis's order.

pub mod bitcount;
pub mod bitfield;
pub mod bitop;
pub mod bitpos;
pub mod getbit;
pub mod setbit;

use crate::cmd::{Cx, Spec};
use crate::error::CmdError;

/// The bitmap commands.
pub static SPECS: &[Spec] = &[
    setbit::SPEC,
    getbit::SPEC,
    bitcount::SPEC,
    bitpos::SPEC,
    bitop::SPEC,
    bitfield::SPEC,
    bitfield::SPEC_RO,
];

/// Redis's `getBitOffsetFromArgument`: a bit offset, or with `hash_bits` a `#n` offset counted
/// in fields of that many bits; negative offsets and offsets whose byte is at or past
/// proto-max-bulk-len are refused.
fn bit_offset(arg: &[u8], hash_bits: Option<u32>, cx: &Cx) -> Result<u64, CmdError> {
    let max = cx.server.config.read().proto_max_bulk_len;
    bit_offset_within(arg, hash_bits, max)
}

fn bit_offset_within(arg: &[u8], hash_bits: Option<u32>, max: usize) -> Result<u64, CmdError> {
    let (digits, bits) = match (arg.first(), hash_bits) {
        (Some(b'#'), Some(bits)) => (&arg[1..], Some(bits)),
        _ => (arg, None),
    };
    let n = relis::parse_i64(digits).ok_or(CmdError::BIT_OFFSET)?;
    // Redis multiplies in C's long long; a product past its range wraps (and is then refused).
    let n = bits.map_or(n, |b| n.wrapping_mul(i64::from(b)));
    if n < 0 || (n >> 3) as u64 >= max as u64 {
        return Err(CmdError::BIT_OFFSET);
    }
    Ok(n as u64)
}

/// Parses BITCOUNT/BITPOS's `BYTE|BIT` word (any case); anything else is a syntax error.
fn unit(arg: &[u8]) -> Result<relis::BitUnit, CmdError> {
    if arg.eq_ignore_ascii_case(b"bit") {
        Ok(relis::BitUnit::Bit)
    } else if arg.eq_ignore_ascii_case(b"byte") {
        Ok(relis::BitUnit::Byte)
    } else {
        Err(CmdError::Syntax)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets() {
        let max = 512 * 1024 * 1024;
        let bad = Err(CmdError::BIT_OFFSET);
        assert_eq!(bit_offset_within(b"0", None, max), Ok(0));
        assert_eq!(bit_offset_within(b"4294967295", None, max), Ok(4294967295));
        assert_eq!(bit_offset_within(b"4294967296", None, max), bad);
        assert_eq!(bit_offset_within(b"-1", None, max), bad);
        assert_eq!(bit_offset_within(b"#2", None, max), bad);
        assert_eq!(bit_offset_within(b"#2", Some(8), max), Ok(16));
        assert_eq!(bit_offset_within(b"#-1", Some(8), max), bad);
        assert_eq!(
            bit_offset_within(b"#9223372036854775807", Some(8), max),
            bad
        );
        assert_eq!(bit_offset_within(b"8", None, 1), bad);
        assert_eq!(bit_offset_within(b"7", None, 1), Ok(7));
    }
}
