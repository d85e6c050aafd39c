//! BITFIELD key [GET type offset | SET type offset value | INCRBY type offset increment |
//! OVERFLOW WRAP|SAT|FAIL] ... — reads and writes integer fields of any width (`i1`..`i64`,
//! `u1`..`u63`) at any bit offset of the string at `key` (`#n` offsets count fields), and
//! BITFIELD_RO, its read-only twin that takes only GET. Replies with one value per operation
//! (nil where OVERFLOW FAIL refused a write). <https://redis.io/commands/bitfield/>,
//! <https://redis.io/commands/bitfield_ro/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::{FieldAction, FieldOp, Overflow};
use resp::Frame;

const COMPLEXITY: &str = "O(1) for each subcommand specified";

/// BITFIELD's declaration.
pub const SPEC: Spec = Spec {
    name: "bitfield",
    arity: -2,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["write", "bitmap", "slow"]),
    keys: (1, 1, 1),
    group: "bitmap",
    since: "3.2.0",
    summary: "Perform arbitrary bitfield integer operations on strings",
    complexity: COMPLEXITY,
    parse: BitField::parse,
    key_flags: Spec::key_flags(&["RW", "access", "update", "variable_flags"]),
    key_notes: "This command allows both access and modification of the key",
    ..Spec::BASE
};

/// BITFIELD_RO's declaration.
pub const SPEC_RO: Spec = Spec {
    name: "bitfield_ro",
    arity: -2,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["read", "bitmap", "fast"]),
    keys: (1, 1, 1),
    group: "bitmap",
    since: "6.0.0",
    summary:
        "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD",
    complexity: COMPLEXITY,
    parse: BitField::parse_ro,
    ..Spec::BASE
};

/// BITFIELD or BITFIELD_RO key and its operations (checked when it runs: offsets are limited
/// by proto-max-bulk-len, and Redis checks them all before it looks at the key).
#[derive(Debug, PartialEq, Eq)]
pub struct BitField {
    key: Bytes,
    ops: Vec<Bytes>,
    read_only: bool,
}

impl BitField {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let ops = args.rest();
        Parsed::write(BitField {
            key,
            ops,
            read_only: false,
        })
    }

    fn parse_ro(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let ops = args.rest();
        Parsed::read(BitField {
            key,
            ops,
            read_only: true,
        })
    }

    /// The operations, checked in Redis's order.
    fn operations(&self, max: usize) -> Result<Vec<FieldOp>, CmdError> {
        let mut out = Vec::new();
        let mut overflow = Overflow::Wrap;
        let a = &self.ops;
        let mut j = 0;
        while j < a.len() {
            let left = a.len() - j - 1;
            let sub = a[j].to_ascii_lowercase();
            let action = match sub.as_slice() {
                b"get" if left >= 2 => FieldAction::Get,
                b"set" if left >= 3 => FieldAction::Set(0),
                b"incrby" if left >= 3 => FieldAction::IncrBy(0),
                b"overflow" if left >= 1 => {
                    overflow = match a[j + 1].to_ascii_lowercase().as_slice() {
                        b"wrap" => Overflow::Wrap,
                        b"sat" => Overflow::Sat,
                        b"fail" => Overflow::Fail,
                        _ => return Err(CmdError::BITFIELD_OVERFLOW),
                    };
                    j += 2;
                    continue;
                }
                _ => return Err(CmdError::Syntax),
            };
            let (signed, bits) = field_type(&a[j + 1])?;
            let offset = super::bit_offset_within(&a[j + 2], Some(bits), max)?;
            let action = match action {
                FieldAction::Get => FieldAction::Get,
                FieldAction::Set(_) => FieldAction::Set(crate::args::parse_i64(&a[j + 3])?),
                FieldAction::IncrBy(_) => FieldAction::IncrBy(crate::args::parse_i64(&a[j + 3])?),
            };
            out.push(FieldOp {
                action,
                signed,
                bits,
                offset,
                overflow,
            });
            j += if action == FieldAction::Get { 3 } else { 4 };
        }
        Ok(out)
    }
}

/// A field type: `i` (signed, 1..=64 bits) or `u` (unsigned, 1..=63 bits), lower case only.
/// Redis reads the width as a C string: anything after a zero byte is ignored.
fn field_type(arg: &[u8]) -> Result<(bool, u32), CmdError> {
    let bad = || CmdError::BITFIELD_TYPE;
    let signed = match arg.first() {
        Some(b'i') => true,
        Some(b'u') => false,
        _ => return Err(bad()),
    };
    let digits = &arg[1..];
    let digits = &digits[..digits.iter().position(|&b| b == 0).unwrap_or(digits.len())];
    let bits = relis::parse_i64(digits).ok_or_else(bad)?;
    if bits < 1 || bits > if signed { 64 } else { 63 } {
        return Err(bad());
    }
    Ok((signed, bits as u32))
}

fn replies(values: Vec<Option<i64>>) -> Frame {
    Frame::Array(
        values
            .into_iter()
            .map(|v| v.map_or(Frame::Null, Frame::Integer))
            .collect(),
    )
}

impl WriteCmd for BitField {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let ops = self.operations(cx.server.config.read().proto_max_bulk_len)?;
        if ops.iter().all(|o| o.action == FieldAction::Get) {
            // Only reads: a lookup for reading, which counts as a hit or a miss.
            return self.read(w, cx, &ops);
        }
        let (values, changed) = w.bitfield(cx.db, &self.key, &ops)?;
        if changed {
            w.notify(relis::events::class::STRING, "setbit", cx.db, &self.key);
        }
        Ok(replies(values))
    }
}

impl BitField {
    fn read(&self, r: &relis::Reader<'_>, cx: &Cx, ops: &[FieldOp]) -> Result<Frame, CmdError> {
        let found = match r.meta(cx.db, &self.key)? {
            Some(m) if m.kind != relis::KeyType::String => {
                cx.hit(&self.key, true);
                return Err(CmdError::WrongType);
            }
            m => m.is_some(),
        };
        cx.hit(&self.key, found);
        Ok(replies(r.bitfield_get(cx.db, &self.key, ops)?))
    }
}

impl ReadCmd for BitField {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let ops = self.operations(cx.server.config.read().proto_max_bulk_len)?;
        if ops.iter().any(|o| o.action != FieldAction::Get) {
            return Err(CmdError::BITFIELD_RO_GET_ONLY);
        }
        self.read(r, cx, &ops)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types() {
        assert_eq!(field_type(b"i64"), Ok((true, 64)));
        assert_eq!(field_type(b"u63"), Ok((false, 63)));
        assert_eq!(field_type(b"u8\0junk"), Ok((false, 8)));
        for bad in ["u64", "i65", "i0", "U8", "i", "", "i08", "u-1"] {
            assert_eq!(
                field_type(bad.as_bytes()),
                Err(CmdError::BITFIELD_TYPE),
                "{bad}"
            );
        }
    }

    #[test]
    fn operations_in_order() {
        let f = |l: &str| BitField {
            key: Bytes::from_static(b"k"),
            ops: l
                .split_whitespace()
                .map(|s| Bytes::copy_from_slice(s.as_bytes()))
                .collect(),
            read_only: false,
        };
        let ops = f("get u8 0 overflow sat incrby i5 #2 -3 set u1 7 1")
            .operations(1 << 29)
            .unwrap();
        assert_eq!(ops.len(), 3);
        assert_eq!(ops[1].offset, 10);
        assert_eq!(ops[1].overflow, Overflow::Sat);
        assert_eq!(ops[2].action, FieldAction::Set(1));
        assert_eq!(f("get u8").operations(1 << 29), Err(CmdError::Syntax));
        assert_eq!(
            f("overflow nope get u8 0").operations(1 << 29),
            Err(CmdError::err("Invalid OVERFLOW type specified"))
        );
        assert_eq!(
            f("set u8 0 x").operations(1 << 29),
            Err(CmdError::NotInteger)
        );
    }
}
