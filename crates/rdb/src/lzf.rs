//! LZF, the compression of RDB strings (Marc Lehmann's format, as Redis's `lzf_c.c` /
//! `lzf_d.c` write and read it). The compressor is a small greedy one of our own: its output
//! differs from liblzf's but any LZF decoder reads it.
//!
//! Format: a control byte `c`. `c < 32`: a literal run of `c + 1` bytes follows. Otherwise a
//! back reference: length `c >> 5` (7 means "7 plus the next byte"), then the low byte of the
//! offset; it copies `length + 2` bytes starting `((c & 31) << 8 | low) + 1` bytes back.

use crate::{Error, Result};

/// Longest back reference: 7 + 255 + 2 bytes.
const MAX_REF: usize = 264;
/// Farthest back a reference reaches.
const MAX_OFF: usize = 1 << 13;
/// The most output one input byte can produce (a 3-byte reference copying [`MAX_REF`]).
pub const MAX_RATIO: usize = MAX_REF / 3 + 1;

/// Decompresses `input`, which must expand to exactly `len` bytes.
///
/// # Errors
/// A truncated or malformed stream, a reference before the start, or another length.
pub fn decompress(input: &[u8], len: usize) -> Result<Vec<u8>> {
    // A claimed length the input cannot produce is refused before anything is allocated.
    if len > input.len().saturating_mul(MAX_RATIO) {
        return Err(Error("Invalid LZF compressed string"));
    }
    let bad = || Error("Invalid LZF compressed string");
    let mut out = Vec::with_capacity(len);
    let mut ip = 0;
    while ip < input.len() {
        let ctrl = usize::from(input[ip]);
        ip += 1;
        if ctrl < 32 {
            let run = ctrl + 1;
            let lit = input.get(ip..ip + run).ok_or_else(bad)?;
            if out.len() + run > len {
                return Err(bad());
            }
            out.extend_from_slice(lit);
            ip += run;
        } else {
            let mut n = ctrl >> 5;
            if n == 7 {
                n += usize::from(*input.get(ip).ok_or_else(bad)?);
                ip += 1;
            }
            let low = usize::from(*input.get(ip).ok_or_else(bad)?);
            ip += 1;
            let back = ((ctrl & 0x1f) << 8) + low + 1;
            n += 2;
            if back > out.len() || out.len() + n > len {
                return Err(bad());
            }
            let start = out.len() - back;
            // Byte by byte: a reference may overlap what it writes.
            for i in 0..n {
                let b = out[start + i];
                out.push(b);
            }
        }
    }
    if out.len() != len {
        return Err(bad());
    }
    Ok(out)
}

fn hash3(a: u8, b: u8, c: u8) -> usize {
    let v = (u32::from(a) << 16) | (u32::from(b) << 8) | u32::from(c);
    (v.wrapping_mul(2_654_435_761) >> 18) as usize & 0x3fff
}

fn literals(out: &mut Vec<u8>, mut lit: &[u8]) {
    while !lit.is_empty() {
        let n = lit.len().min(32);
        out.push((n - 1) as u8);
        out.extend_from_slice(&lit[..n]);
        lit = &lit[n..];
    }
}

/// The last position of each 3-byte hash, kept per thread across calls: a table filled afresh
/// for every value (128 KB) was 20% of an export of 1M short strings (perf), most of them 100
/// bytes. An entry holds `base + position` of the call that wrote it; a call's `base` is
/// past every position an earlier call stored, so an older entry reads as empty and the table
/// is never cleared (the output is the same as with a fresh table).
struct HashTable {
    slots: Vec<u64>,
    base: u64,
}

thread_local! {
    static TABLE: std::cell::RefCell<HashTable> = const {
        std::cell::RefCell::new(HashTable { slots: Vec::new(), base: 1 })
    };
}

/// Compresses `input`; `None` when the result would be longer than `max` bytes (Redis then
/// stores the string as it is).
pub fn compress(input: &[u8], max: usize) -> Option<Vec<u8>> {
    TABLE.with(|t| {
        let mut t = t.borrow_mut();
        if t.slots.is_empty() {
            t.slots = vec![0; 1 << 14];
        }
        let base = t.base;
        t.base += input.len() as u64 + 1;
        compress_with(input, max, &mut t.slots, base)
    })
}

fn compress_with(input: &[u8], max: usize, table: &mut [u64], base: u64) -> Option<Vec<u8>> {
    let n = input.len();
    let mut out = Vec::with_capacity(max.min(n));
    let (mut ip, mut lit) = (0, 0);
    while ip + 2 < n {
        let h = hash3(input[ip], input[ip + 1], input[ip + 2]);
        let stored = table[h];
        table[h] = base + ip as u64;
        let r = if stored >= base {
            (stored - base) as usize
        } else {
            usize::MAX
        };
        if r != usize::MAX && ip - r <= MAX_OFF && input[r..r + 3] == input[ip..ip + 3] {
            let most = (n - ip).min(MAX_REF);
            let mut m = 3;
            while m < most && input[r + m] == input[ip + m] {
                m += 1;
            }
            literals(&mut out, &input[lit..ip]);
            let off = ip - r - 1;
            let l = m - 2;
            if l < 7 {
                out.push(((l << 5) | (off >> 8)) as u8);
            } else {
                out.push(((7 << 5) | (off >> 8)) as u8);
                out.push((l - 7) as u8);
            }
            out.push((off & 0xff) as u8);
            ip += m;
            lit = ip;
            if out.len() > max {
                return None;
            }
        } else {
            ip += 1;
        }
    }
    literals(&mut out, &input[lit..]);
    (out.len() <= max && !out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn round_trip_compressible() {
        let s = b"abcabcabcabcabcabcabcabcabcabcabcabcabcabc hello hello hello".repeat(50);
        let c = compress(&s, s.len() - 4).unwrap();
        assert!(c.len() < s.len() / 4, "{} of {}", c.len(), s.len());
        assert_eq!(decompress(&c, s.len()).unwrap(), s);
        let z = vec![b'x'; 100_000];
        let c = compress(&z, z.len()).unwrap();
        assert_eq!(decompress(&c, z.len()).unwrap(), z);
    }

    #[test]
    fn liblzf_output_decodes() {
        // `lzf_compress("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")` as Redis writes it (DUMP of that value).
        let c = [0x01, b'a', b'a', 0xe0, 0x11, 0x00, 0x01, b'a', b'a'];
        assert_eq!(decompress(&c, 30).unwrap(), vec![b'a'; 30]);
    }

    #[test]
    fn hostile_streams_fail() {
        assert!(decompress(&[0x20, 0x00], 3).is_err()); // reference before the start
        assert!(decompress(&[0x05, b'a'], 6).is_err()); // truncated literal
        assert!(decompress(&[0x00, b'a'], 2).is_err()); // too short
        assert!(decompress(&[0x00, b'a'], usize::MAX).is_err()); // absurd length
        assert!(decompress(&[0x00, b'a', 0xe0], 30).is_err());
    }

    proptest! {
        #[test]
        fn round_trips(s in proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), any::<u8>()], 0..3000)) {
            if let Some(c) = compress(&s, s.len()) {
                prop_assert_eq!(decompress(&c, s.len()).unwrap(), s);
            }
        }

        /// The table kept across calls gives what a fresh one gives: an earlier value's
        /// positions never become references into this one.
        #[test]
        fn output_does_not_depend_on_earlier_calls(
            a in proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), any::<u8>()], 0..3000),
            b in proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), any::<u8>()], 0..3000),
        ) {
            let _ = compress(&a, a.len());
            let fresh = compress_with(&b, b.len(), &mut vec![0; 1 << 14], 1);
            prop_assert_eq!(compress(&b, b.len()), fresh);
        }

        #[test]
        fn never_panics(c in proptest::collection::vec(any::<u8>(), 0..200), len in 0usize..5000) {
            let _ = decompress(&c, len);
        }
    }
}
