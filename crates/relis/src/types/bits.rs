//! Bitmaps and bitfields: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP and BITFIELD, on ordinary
//! string values, with Redis 7.0's arithmetic (bitops.c). A bitmap is a string: bit 0 is the
//! most significant bit of byte 0. The commands read and write only the bytes they touch
//! through the string family's byte-range primitives (see `strings.rs`), so on a large
//! (chunked) value a SETBIT rewrites one chunk, not the value.

use crate::backend::sqlite::sql::strings as q;
use crate::backend::sqlite::stmt::prepare;
use crate::backend::sqlite::store::{KeyType, Reader, Writer, CHUNK};
use crate::error::{Error, Result};

/// Whether BITCOUNT/BITPOS ranges count bytes (the default) or bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BitUnit {
    /// Offsets are byte indexes.
    #[default]
    Byte,
    /// Offsets are bit indexes.
    Bit,
}

/// BITOP's operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitOp {
    /// AND of every source.
    And,
    /// OR of every source.
    Or,
    /// XOR of every source.
    Xor,
    /// NOT of the single source.
    Not,
}

/// What BITOP did to its destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitopOutcome {
    /// The result (this many bytes) was stored.
    Stored(usize),
    /// Every source was empty or missing and the destination existed: it was deleted.
    Deleted,
    /// Every source was empty or missing and there was no destination.
    Nothing,
}

/// BITFIELD's overflow policy for SET and INCRBY.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Overflow {
    /// Wrap around (two's complement for signed fields).
    #[default]
    Wrap,
    /// Saturate at the type's minimum or maximum.
    Sat,
    /// Do nothing and reply nil.
    Fail,
}

/// What one BITFIELD operation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldAction {
    /// Read the field.
    Get,
    /// Write a value; the reply is the old value.
    Set(i64),
    /// Add to the field; the reply is the new value.
    IncrBy(i64),
}

/// One BITFIELD operation on a field of `bits` bits at bit `offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldOp {
    /// GET / SET / INCRBY.
    pub action: FieldAction,
    /// `i` types are signed (1..=64 bits), `u` types unsigned (1..=63 bits).
    pub signed: bool,
    /// The width in bits.
    pub bits: u32,
    /// The first bit.
    pub offset: u64,
    /// The overflow policy in force for this operation.
    pub overflow: Overflow,
}

/// The number of set bits in `b`.
pub fn popcount(b: &[u8]) -> u64 {
    let mut n = 0u64;
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        n += u64::from(u64::from_ne_bytes(c.try_into().unwrap_or_default()).count_ones());
    }
    n + chunks
        .remainder()
        .iter()
        .map(|x| u64::from(x.count_ones()))
        .sum::<u64>()
}

/// Redis's `redisBitpos`: the index of the first bit equal to `bit` in `b`; when looking for a
/// clear bit and there is none, the first bit past the end; when looking for a set bit and
/// there is none, -1.
fn first_bit(b: &[u8], bit: bool) -> i64 {
    let skip = if bit { 0u8 } else { 0xff };
    match b.iter().position(|&x| x != skip) {
        Some(i) => {
            let x = if bit { b[i] } else { !b[i] };
            (i as i64) * 8 + i64::from(x.leading_zeros())
        }
        None if bit => -1,
        None => b.len() as i64 * 8,
    }
}

/// Resolves a BITCOUNT/BITPOS range over a string of `len` bytes as Redis does: `None` for an
/// empty range, otherwise the first and last byte and the masks of the bits outside the range
/// in those edge bytes (zero for a byte range).
fn resolve_range(
    len: usize,
    start: i64,
    end: i64,
    unit: BitUnit,
) -> Option<(usize, usize, u8, u8)> {
    let mut total = len as i64;
    if unit == BitUnit::Bit {
        total <<= 3;
    }
    let mut start = if start < 0 {
        total.saturating_add(start)
    } else {
        start
    };
    let mut end = if end < 0 {
        total.saturating_add(end)
    } else {
        end
    };
    start = start.max(0);
    end = end.max(0);
    if end >= total {
        end = total - 1;
    }
    if start > end {
        return None;
    }
    let (mut first_mask, mut last_mask) = (0u8, 0u8);
    if unit == BitUnit::Bit {
        first_mask = !((1u16 << (8 - (start & 7))) - 1) as u8;
        last_mask = ((1u16 << (7 - (end & 7))) - 1) as u8;
        start >>= 3;
        end >>= 3;
    }
    Some((start as usize, end as usize, first_mask, last_mask))
}

/// The bytes BITCOUNT counts in a string of `len` bytes: first and last byte and the masks of
/// the edge bits outside the range; `None` when it counts nothing.
fn count_bounds(len: usize, range: Option<(i64, i64, BitUnit)>) -> Option<(usize, usize, u8, u8)> {
    match range {
        None if len == 0 => None,
        None => Some((0, len - 1, 0, 0)),
        Some((s, e, _)) if s < 0 && e < 0 && s > e => None,
        Some((s, e, u)) => resolve_range(len, s, e, u),
    }
}

/// BITCOUNT over `value` with an optional (start, end, unit) range.
pub fn bitcount(value: &[u8], range: Option<(i64, i64, BitUnit)>) -> i64 {
    let Some((start, end, fm, lm)) = count_bounds(value.len(), range) else {
        return 0;
    };
    let mut n = popcount(&value[start..=end]) as i64;
    n -= i64::from((value[start] & fm).count_ones());
    n -= i64::from((value[end] & lm).count_ones());
    n
}

/// BITPOS over `value`: `range` is (start, end if given, unit).
pub fn bitpos(value: &[u8], bit: bool, range: Option<(i64, Option<i64>, BitUnit)>) -> i64 {
    let len = value.len();
    let (start, end, fm, lm, end_given) = match range {
        None if len == 0 => return -1,
        None => (0, len - 1, 0, 0, false),
        Some((s, e, u)) => {
            let end = e.unwrap_or(len as i64 - 1);
            match resolve_range(len, s, end, u) {
                Some((a, b, f, l)) => (a, b, f, l, e.is_some()),
                None => return -1,
            }
        }
    };
    let (mut start, mut bytes) = (start, end - start + 1);
    let pos = 'found: {
        if fm != 0 {
            let mut c = if bit {
                value[start] & !fm
            } else {
                value[start] | fm
            };
            if lm != 0 && bytes == 1 {
                c = if bit { c & !lm } else { c | lm };
            }
            let pos = first_bit(&[c], bit);
            if bytes == 1 || (pos != -1 && pos != 8) {
                break 'found pos;
            }
            start += 1;
            bytes -= 1;
        }
        // A last byte with bits outside the range is looked at on its own.
        let whole = bytes - usize::from(lm != 0);
        if whole > 0 {
            let pos = first_bit(&value[start..start + whole], bit);
            if bytes == whole || (pos != -1 && pos != (whole as i64) << 3) {
                break 'found pos;
            }
            start += whole;
            bytes -= whole;
        }
        let c = if bit {
            value[end] & !lm
        } else {
            value[end] | lm
        };
        first_bit(&[c], bit)
    };
    // Looking for a clear bit in an explicit range that has none: the bit just past the range
    // does not count (without an end, the string is taken as padded with zeros).
    if end_given && !bit && pos == (bytes as i64) << 3 {
        return -1;
    }
    if pos == -1 {
        -1
    } else {
        pos + ((start as i64) << 3)
    }
}

/// BITOP over the sources (`None` for a missing key); the result is as long as the longest.
pub fn bitop(op: BitOp, sources: &[Option<Vec<u8>>]) -> Vec<u8> {
    let max = sources
        .iter()
        .map(|s| s.as_ref().map_or(0, Vec::len))
        .max()
        .unwrap_or(0);
    let byte =
        |s: &Option<Vec<u8>>, j: usize| s.as_ref().and_then(|v| v.get(j)).copied().unwrap_or(0);
    let mut out = vec![0u8; max];
    for (j, o) in out.iter_mut().enumerate() {
        let mut x = sources.first().map_or(0, |s| byte(s, j));
        match op {
            BitOp::Not => x = !x,
            BitOp::And => sources[1..].iter().for_each(|s| x &= byte(s, j)),
            BitOp::Or => sources[1..].iter().for_each(|s| x |= byte(s, j)),
            BitOp::Xor => sources[1..].iter().for_each(|s| x ^= byte(s, j)),
        }
        *o = x;
    }
    out
}

/// Reads `bits` bits (at most 64) from bit `offset` of `p`, most significant first.
fn get_unsigned(p: &[u8], offset: u64, bits: u32) -> u64 {
    let mut v = 0u64;
    for i in 0..u64::from(bits) {
        let pos = offset + i;
        let b = p[(pos >> 3) as usize];
        v = (v << 1) | u64::from((b >> (7 - (pos & 7))) & 1);
    }
    v
}

fn get_signed(p: &[u8], offset: u64, bits: u32) -> i64 {
    let v = get_unsigned(p, offset, bits);
    if bits < 64 && v & (1 << (bits - 1)) != 0 {
        (v | (u64::MAX << bits)) as i64
    } else {
        v as i64
    }
}

/// Writes the low `bits` bits of `v` at bit `offset` of `p`, most significant first.
fn set_field(p: &mut [u8], offset: u64, bits: u32, v: u64) {
    for i in 0..u64::from(bits) {
        let bit = (v >> (u64::from(bits) - 1 - i)) & 1;
        let pos = offset + i;
        let b = &mut p[(pos >> 3) as usize];
        let mask = 1u8 << (7 - (pos & 7));
        if bit == 1 {
            *b |= mask;
        } else {
            *b &= !mask;
        }
    }
}

/// Redis's `checkSignedBitfieldOverflow`: whether `value + incr` overflows a signed field of
/// `bits` bits, and the value to store instead (wrapped or saturated) when it does.
fn signed_overflow(value: i64, incr: i64, bits: u32, ow: Overflow) -> Option<i64> {
    let max: i64 = if bits == 64 {
        i64::MAX
    } else {
        (1i64 << (bits - 1)) - 1
    };
    let min = -max - 1;
    // As in Redis, these may wrap; they are only used once `value` is known to be in range.
    let maxincr = (max as u64).wrapping_sub(value as u64) as i64;
    let minincr = min.wrapping_sub(value);
    let wrap = || {
        let mut c = (value as u64).wrapping_add(incr as u64);
        if bits < 64 {
            let mask = u64::MAX << bits;
            if c & (1 << (bits - 1)) != 0 {
                c |= mask;
            } else {
                c &= !mask;
            }
        }
        c as i64
    };
    if value > max || (bits != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr) {
        Some(if ow == Overflow::Sat { max } else { wrap() })
    } else if value < min
        || (bits != 64 && incr < minincr)
        || (value < 0 && incr < 0 && incr < minincr)
    {
        Some(if ow == Overflow::Sat { min } else { wrap() })
    } else {
        None
    }
}

/// Redis's `checkUnsignedBitfieldOverflow`, as [`signed_overflow`] for unsigned fields.
fn unsigned_overflow(value: u64, incr: i64, bits: u32, ow: Overflow) -> Option<u64> {
    let max: u64 = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let maxincr = max.wrapping_sub(value) as i64;
    let minincr = value.wrapping_neg() as i64;
    let wrap = || value.wrapping_add(incr as u64) & !(u64::MAX.checked_shl(bits).unwrap_or(0));
    if value > max || (incr > 0 && incr > maxincr) {
        Some(if ow == Overflow::Sat { max } else { wrap() })
    } else if incr < 0 && incr < minincr {
        Some(if ow == Overflow::Sat { 0 } else { wrap() })
    } else {
        None
    }
}

/// Runs one SET/INCRBY on the window `w` (the field's bytes, the field starting at bit
/// `offset` of it): the reply (`None` when OVERFLOW FAIL refused) and whether `w` changed.
fn apply_write(w: &mut [u8], offset: u64, op: &FieldOp) -> Option<i64> {
    let bits = op.bits;
    if op.signed {
        let old = get_signed(w, offset, bits);
        let (new, ret, over) = match op.action {
            FieldAction::IncrBy(d) => {
                let o = signed_overflow(old, d, bits, op.overflow);
                let new = o.unwrap_or(old.wrapping_add(d));
                (new, new, o.is_some())
            }
            FieldAction::Set(v) => {
                let o = signed_overflow(v, 0, bits, op.overflow);
                (o.unwrap_or(v), old, o.is_some())
            }
            FieldAction::Get => return Some(old),
        };
        if over && op.overflow == Overflow::Fail {
            return None;
        }
        set_field(w, offset, bits, new as u64);
        Some(ret)
    } else {
        let old = get_unsigned(w, offset, bits);
        let (new, ret, over) = match op.action {
            FieldAction::IncrBy(d) => {
                let o = unsigned_overflow(old, d, bits, op.overflow);
                let new = o.unwrap_or(old.wrapping_add(d as u64));
                (new, new, o.is_some())
            }
            FieldAction::Set(v) => {
                let o = unsigned_overflow(v as u64, 0, bits, op.overflow);
                (o.unwrap_or(v as u64), old, o.is_some())
            }
            FieldAction::Get => return Some(old as i64),
        };
        if over && op.overflow == Overflow::Fail {
            return None;
        }
        set_field(w, offset, bits, new);
        Some(ret as i64)
    }
}

/// The bytes a field covers: its first byte and how many (at most 9).
fn window(op: &FieldOp) -> (u64, usize) {
    let first = op.offset >> 3;
    let last = (op.offset + u64::from(op.bits) - 1) >> 3;
    (first, (last - first + 1) as usize)
}

impl Reader<'_> {
    /// GETBIT: the bit at `offset` (0 past the end); `None` when there is no key.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn getbit(&self, db: u32, key: &[u8], offset: u64) -> Result<Option<u8>> {
        let Some(info) = self.string_info(db, key)? else {
            return Ok(None);
        };
        let b = self.read_string(db, key, &info, offset >> 3, 1)?;
        Ok(Some(b.first().map_or(0, |b| (b >> (7 - (offset & 7))) & 1)))
    }

    /// The length of the string at `key` (BITCOUNT's lookup, before it checks its range);
    /// `None` when there is no key.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn bit_len(&self, db: u32, key: &[u8]) -> Result<Option<usize>> {
        Ok(self.string_info(db, key)?.map(|i| i.len))
    }

    /// BITCOUNT of the string at `key` (a missing key counts 0). A chunked string is counted
    /// chunk by chunk, never held whole.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn bitcount(&self, db: u32, key: &[u8], range: Option<(i64, i64, BitUnit)>) -> Result<i64> {
        let Some(info) = self.string_info(db, key)? else {
            return Ok(0);
        };
        if !info.chunked {
            let v = self.read_string(db, key, &info, 0, info.len)?;
            return Ok(bitcount(&v, range));
        }
        let Some((start, end, fm, lm)) = count_bounds(info.len, range) else {
            return Ok(0);
        };
        let mut n = self.popcount_chunks(info.id, start, end + 1)? as i64;
        let edge = |at: usize| self.read_string(db, key, &info, at as u64, 1);
        n -= i64::from((edge(start)?.first().copied().unwrap_or(0) & fm).count_ones());
        n -= i64::from((edge(end)?.first().copied().unwrap_or(0) & lm).count_ones());
        Ok(n)
    }

    /// The string BITCOUNT/BITPOS work on, after their key lookup: `None` when there is no key.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn bit_string(&self, db: u32, key: &[u8]) -> Result<Option<bytes::Bytes>> {
        self.get(db, key)
    }

    /// BITFIELD_RO (and a BITFIELD of GETs only): the fields' values; a missing key reads as
    /// zeros. Only [`FieldAction::Get`] operations are allowed.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn bitfield_get(&self, db: u32, key: &[u8], ops: &[FieldOp]) -> Result<Vec<Option<i64>>> {
        let info = self.string_info(db, key)?;
        let mut out = Vec::with_capacity(ops.len());
        for op in ops {
            let (first, n) = window(op);
            let mut w = vec![0u8; 9];
            if let Some(info) = &info {
                let got = self.read_string(db, key, info, first, n)?;
                w[..got.len()].copy_from_slice(&got);
            }
            let off = op.offset - first * 8;
            out.push(Some(if op.signed {
                get_signed(&w, off, op.bits)
            } else {
                get_unsigned(&w, off, op.bits) as i64
            }));
        }
        Ok(out)
    }
}

impl Writer<'_> {
    /// SETBIT: sets the bit at `offset` to `on`, growing (or creating) the string with zeros as
    /// needed. Returns the old bit and whether the key changed (Redis signals nothing when an
    /// existing string already had that bit).
    ///
    /// # Errors
    /// [`Error::WrongType`], [`Error::StringTooLong`] past the engine's limit.
    pub fn setbit(&mut self, db: u32, key: &[u8], offset: u64, on: bool) -> Result<(u8, bool)> {
        let old = self.meta_for_write_of(db, key, KeyType::String)?;
        let byte = offset >> 3;
        let mask = 1u8 << (7 - (offset & 7));
        let chunked = old
            .as_ref()
            .and_then(crate::types::strings::StrInfo::chunked);
        if let (Some(m), Some(i)) = (&old, chunked) {
            if (i.len as u64) > byte {
                // Inside a chunked string: one chunk read and written, the key row updated.
                let b = self.set_chunk_bit(i.id, i.len, byte as usize, mask, on)?;
                let was = u8::from(b & mask != 0);
                if (was == 1) == on {
                    // Nothing to write: a chunked string is raw whatever its head says.
                    return Ok((was, false));
                }
                self.touch_string(db, key, m, true)?;
                return Ok((was, true));
            }
        }
        let info = match (&old, chunked) {
            (_, Some(i)) => Some(i),
            (Some(_), None) => self.string_info(db, key)?,
            (None, _) => None,
        };
        let cur = match &info {
            Some(i) => self.read_string(db, key, i, byte, 1)?,
            None => Vec::new(),
        };
        let grows = info.is_none_or(|i| (i.len as u64) <= byte);
        let b = cur.first().copied().unwrap_or(0);
        let was = u8::from(b & mask != 0);
        if old.is_some() && !grows && (was == 1) == on {
            self.mark_raw(db, key)?;
            return Ok((was, false));
        }
        let nb = if on { b | mask } else { b & !mask };
        self.write_string_at(db, key, old.as_ref(), info, byte, &[nb], 0)?;
        Ok((was, true))
    }

    /// BITFIELD with at least one SET or INCRBY: grows (or creates) the string to the furthest
    /// bit written, then runs the operations in order. Returns the replies (`None` where
    /// OVERFLOW FAIL refused) and whether Redis would count the key as changed (an operation
    /// that was not refused changed a field, or the string was created or grown).
    ///
    /// # Errors
    /// [`Error::WrongType`], [`Error::StringTooLong`] past the engine's limit.
    pub fn bitfield(
        &mut self,
        db: u32,
        key: &[u8],
        ops: &[FieldOp],
    ) -> Result<(Vec<Option<i64>>, bool)> {
        let old = self.meta_for_write_of(db, key, KeyType::String)?;
        let highest = ops
            .iter()
            .filter(|o| o.action != FieldAction::Get)
            .map(|o| o.offset + u64::from(o.bits) - 1)
            .max()
            .unwrap_or(0);
        let need = usize::try_from((highest >> 3) + 1).map_err(|_| Error::StringTooLong)?;
        let before = match &old {
            Some(_) => self.string_info(db, key)?,
            None => None,
        };
        let grown = before.is_none_or(|i| i.len < need);
        // Redis grows the string first: the GETs after a write see its zero padding.
        match &old {
            Some(_) if !grown => self.mark_raw(db, key)?,
            _ => {
                self.write_string(db, key, old.as_ref(), 0, &[], need)?;
            }
        }
        let info = self
            .string_info(db, key)?
            .ok_or_else(|| Error::Storage("bitfield: the string vanished".into()))?;
        let mut out = Vec::with_capacity(ops.len());
        let mut changed = false;
        for op in ops {
            let (first, n) = window(op);
            let mut w = vec![0u8; 9];
            let got = self.read_string(db, key, &info, first, n)?;
            w[..got.len()].copy_from_slice(&got);
            let off = op.offset - first * 8;
            let prev = w.clone();
            let r = apply_write(&mut w, off, op);
            if op.action != FieldAction::Get && r.is_some() {
                changed |= grown || w != prev;
            }
            if w != prev {
                let meta = self.meta_for_write(db, key)?;
                self.write_string(db, key, meta.as_ref(), first, &w[..n], 0)?;
            }
            out.push(r);
        }
        Ok((out, changed))
    }

    /// BITOP: computes `op` over the sources (missing keys are empty strings) into `dest`,
    /// overwriting whatever it held and dropping its expiry; an empty result deletes `dest`.
    ///
    /// # Errors
    /// [`Error::WrongType`] if a source holds another type (nothing is written then).
    pub fn bitop(
        &mut self,
        db: u32,
        op: BitOp,
        dest: &[u8],
        sources: &[Vec<u8>],
    ) -> Result<BitopOutcome> {
        let mut vals = Vec::with_capacity(sources.len());
        for s in sources {
            vals.push(self.get(db, s)?.map(|v| v.to_vec()));
        }
        let res = bitop(op, &vals);
        let old = self.meta_for_write(db, dest)?;
        if res.is_empty() {
            return Ok(match old {
                Some(m) => {
                    self.delete_key(db, dest, &m)?;
                    BitopOutcome::Deleted
                }
                None => BitopOutcome::Nothing,
            });
        }
        self.put_raw_string(db, dest, old.as_ref(), &res)?;
        Ok(BitopOutcome::Stored(res.len()))
    }
}

impl Reader<'_> {
    /// The set bits in bytes `start..end` of the chunked string `kid`, a chunk at a time.
    pub(crate) fn popcount_chunks(&self, kid: i64, start: usize, end: usize) -> Result<u64> {
        if start >= end {
            return Ok(0);
        }
        let (first, last) = (start / CHUNK, (end - 1) / CHUNK);
        let mut st = prepare(self.conn, q::NONEMPTY_CHUNKS)?;
        let mut rows = st.query((kid, first as i64, last as i64))?;
        let mut total = 0;
        while let Some(r) = rows.next()? {
            let base = r.get::<_, i64>(0)? as usize * CHUNK;
            let data = r.get_ref(1)?.as_blob()?;
            let (lo, hi) = (start.max(base), end.min(base + data.len()));
            if lo < hi {
                total += popcount(&data[lo - base..hi - base]);
            }
        }
        Ok(total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_positions() {
        assert_eq!(bitcount(b"foobar", None), 26);
        assert_eq!(bitcount(b"foobar", Some((0, 0, BitUnit::Byte))), 4);
        assert_eq!(bitcount(b"foobar", Some((1, 1, BitUnit::Byte))), 6);
        assert_eq!(bitcount(b"foobar", Some((5, 30, BitUnit::Bit))), 17);
        assert_eq!(bitpos(b"\xff\xf0\x00", false, None), 12);
        assert_eq!(
            bitpos(b"\x00\xff\xf0", true, Some((0, None, BitUnit::Byte))),
            8
        );
        assert_eq!(
            bitpos(b"\x00\xff\xf0", true, Some((2, None, BitUnit::Byte))),
            16
        );
        assert_eq!(
            bitpos(b"\x00\xff\xf0", true, Some((2, Some(-1), BitUnit::Byte))),
            16
        );
        assert_eq!(
            bitpos(b"\x00\xff\xf0", true, Some((7, Some(15), BitUnit::Bit))),
            8
        );
        assert_eq!(bitpos(b"\xff\xff\xff", false, None), 24);
        assert_eq!(
            bitpos(b"\xff\xff\xff", false, Some((0, Some(-1), BitUnit::Byte))),
            -1
        );
        assert_eq!(bitpos(b"", true, None), -1);
    }

    #[test]
    fn fields() {
        let op = |action, signed, bits, offset, overflow| FieldOp {
            action,
            signed,
            bits,
            offset,
            overflow,
        };
        let mut w = vec![0u8; 9];
        assert_eq!(
            apply_write(
                &mut w,
                0,
                &op(FieldAction::Set(-1), true, 8, 0, Overflow::Wrap)
            ),
            Some(0)
        );
        assert_eq!(w[0], 0xff);
        assert_eq!(
            apply_write(
                &mut w,
                0,
                &op(FieldAction::IncrBy(1), false, 8, 0, Overflow::Wrap)
            ),
            Some(0)
        );
        assert_eq!(
            apply_write(
                &mut w,
                0,
                &op(FieldAction::IncrBy(300), false, 8, 0, Overflow::Sat)
            ),
            Some(255)
        );
        assert_eq!(
            apply_write(
                &mut w,
                0,
                &op(FieldAction::IncrBy(1), false, 8, 0, Overflow::Fail)
            ),
            None
        );
        assert_eq!(
            apply_write(
                &mut w,
                0,
                &op(FieldAction::IncrBy(1), true, 64, 0, Overflow::Sat)
            ),
            Some(0xff00_0000_0000_0000u64 as i64 + 1)
        );
        assert_eq!(
            signed_overflow(i64::MAX, 1, 64, Overflow::Wrap),
            Some(i64::MIN)
        );
        assert_eq!(unsigned_overflow(3, -4, 2, Overflow::Wrap), Some(3));
    }
}
