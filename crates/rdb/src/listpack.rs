//! Listpacks (Redis 7's compact list encoding: small hashes, sorted sets, quicklist nodes and
//! stream nodes), read with every bound checked and written as Redis's `lpAppend` does.
//!
//! Layout: total bytes (u32 LE), element count (u16 LE, 65535 = "count them"), the entries, and
//! the terminator 0xFF. An entry is an encoding byte with its data, then "backlen": the
//! entry's own length, written backwards in 7-bit groups so the list can be walked from the end.

use crate::{string2ll, Error, Result};
use bytes::Bytes;

const HEADER: usize = 6;
const EOF: u8 = 0xff;

fn bad() -> Error {
    Error("listpack integrity check failed")
}

/// One listpack element: a string or an integer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item<'a> {
    /// A string element.
    Str(&'a [u8]),
    /// An integer element.
    Int(i64),
}

impl Item<'_> {
    /// The element as the string Redis reads it as.
    pub fn to_bytes(&self) -> Bytes {
        match self {
            Item::Str(s) => Bytes::copy_from_slice(s),
            Item::Int(i) => Bytes::from(i.to_string()),
        }
    }
}

fn backlen_size(l: usize) -> usize {
    match l {
        0..=127 => 1,
        128..=16382 => 2,
        16383..=2097150 => 3,
        2097151..=268435454 => 4,
        _ => 5,
    }
}

fn sign_extend(v: u64, bits: u32) -> i64 {
    let shift = 64 - bits;
    ((v << shift) as i64) >> shift
}

/// Decodes the entry at `p` of `lp` (already known to end before the terminator): the item and
/// the length of its encoding and data.
fn entry(lp: &[u8], p: usize) -> Result<(Item<'_>, usize)> {
    let b = *lp.get(p).ok_or_else(bad)?;
    let get = |from: usize, n: usize| lp.get(p + from..p + from + n).ok_or_else(bad);
    let le = |s: &[u8]| s.iter().rev().fold(0u64, |a, &x| (a << 8) | u64::from(x));
    Ok(if b & 0x80 == 0 {
        (Item::Int(i64::from(b & 0x7f)), 1)
    } else if b & 0xc0 == 0x80 {
        let n = usize::from(b & 0x3f);
        (Item::Str(get(1, n)?), 1 + n)
    } else if b & 0xe0 == 0xc0 {
        let v = (u64::from(b & 0x1f) << 8) | u64::from(get(1, 1)?[0]);
        (Item::Int(sign_extend(v, 13)), 2)
    } else if b & 0xf0 == 0xe0 {
        let n = (usize::from(b & 0x0f) << 8) | usize::from(get(1, 1)?[0]);
        (Item::Str(get(2, n)?), 2 + n)
    } else {
        match b {
            0xf0 => {
                let n = le(get(1, 4)?) as usize;
                (Item::Str(get(5, n)?), 5 + n)
            }
            0xf1 => (Item::Int(sign_extend(le(get(1, 2)?), 16)), 3),
            0xf2 => (Item::Int(sign_extend(le(get(1, 3)?), 24)), 4),
            0xf3 => (Item::Int(sign_extend(le(get(1, 4)?), 32)), 5),
            0xf4 => (Item::Int(le(get(1, 8)?) as i64), 9),
            _ => return Err(bad()),
        }
    })
}

/// Every element of listpack `lp`, after checking its whole structure as Redis's deep
/// `lpValidateIntegrity` does: the header's size and count, each entry inside the buffer with a
/// matching back length, the terminator last.
///
/// # Errors
/// Any inconsistency.
pub fn decode(lp: &[u8]) -> Result<Vec<Item<'_>>> {
    if lp.len() < HEADER + 1 {
        return Err(bad());
    }
    let total = u32::from_le_bytes([lp[0], lp[1], lp[2], lp[3]]) as usize;
    let count = usize::from(u16::from_le_bytes([lp[4], lp[5]]));
    if total != lp.len() || lp[lp.len() - 1] != EOF {
        return Err(bad());
    }
    // Each entry takes at least two bytes, which bounds the allocation whatever the header says.
    let mut out = Vec::with_capacity(count.min(lp.len() / 2));
    let end = lp.len() - 1;
    let mut p = HEADER;
    while p < end {
        let (item, len) = entry(&lp[..end], p)?;
        let bl = backlen_size(len);
        if p + len + bl > end {
            return Err(bad());
        }
        if decode_backlen(&lp[..p + len + bl]) != Some(len) {
            return Err(bad());
        }
        out.push(item);
        p += len + bl;
    }
    if p != end || (count != 0xffff && count != out.len()) {
        return Err(bad());
    }
    Ok(out)
}

/// The back length that ends `lp`, read as Redis's `lpDecodeBacklen` reads it (and so as its
/// deep check accepts it): 7-bit groups from the last byte back while a byte's high bit is
/// set, at most five. Redis writes the high bit on every byte but the first, but its check
/// compares only the value: a last byte with the high bit set (`0x81` after an entry's
/// `0x00`) reads on into the entry and may still give its length.
fn decode_backlen(lp: &[u8]) -> Option<usize> {
    let mut val = 0usize;
    for (i, &b) in lp.iter().rev().take(5).enumerate() {
        val |= usize::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some(val);
        }
    }
    None
}

fn encode_backlen(l: usize, buf: &mut [u8; 5]) -> usize {
    let n = backlen_size(l);
    for (i, slot) in buf.iter_mut().take(n).enumerate() {
        let shift = 7 * (n - 1 - i);
        let v = ((l >> shift) & 0x7f) as u8;
        *slot = if i == 0 { v } else { v | 0x80 };
    }
    n
}

/// Builds a listpack, element by element, as `lpAppend` encodes them (a string that is a
/// canonical integer is stored as one).
#[derive(Debug)]
pub struct Builder {
    buf: Vec<u8>,
    count: usize,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

impl Builder {
    /// An empty listpack.
    pub fn new() -> Builder {
        Builder {
            buf: vec![0; HEADER],
            count: 0,
        }
    }

    /// Bytes the listpack would take if finished now.
    pub fn len(&self) -> usize {
        self.buf.len() + 1
    }

    /// Whether no element was added.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Elements added.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Appends a string element (an integer if it reads as one).
    pub fn push(&mut self, s: &[u8]) {
        match string2ll(s) {
            Some(v) => self.push_int(v),
            None => self.push_str(s),
        }
    }

    /// Appends an integer element.
    pub fn push_int(&mut self, v: i64) {
        let start = self.buf.len();
        if (0..=127).contains(&v) {
            self.buf.push(v as u8);
        } else if (-4096..=4095).contains(&v) {
            let u = (v as u64) & 0x1fff;
            self.buf.push(0xc0 | (u >> 8) as u8);
            self.buf.push(u as u8);
        } else if (-32768..=32767).contains(&v) {
            self.buf.push(0xf1);
            self.buf.extend_from_slice(&(v as i16).to_le_bytes());
        } else if (-8_388_608..=8_388_607).contains(&v) {
            self.buf.push(0xf2);
            self.buf.extend_from_slice(&(v as i32).to_le_bytes()[..3]);
        } else if i32::try_from(v).is_ok() {
            self.buf.push(0xf3);
            self.buf.extend_from_slice(&(v as i32).to_le_bytes());
        } else {
            self.buf.push(0xf4);
            self.buf.extend_from_slice(&v.to_le_bytes());
        }
        self.end_entry(start);
    }

    /// Appends a string element as a string.
    pub fn push_str(&mut self, s: &[u8]) {
        let start = self.buf.len();
        let n = s.len();
        if n < 64 {
            self.buf.push(0x80 | n as u8);
        } else if n < 4096 {
            self.buf.push(0xe0 | (n >> 8) as u8);
            self.buf.push(n as u8);
        } else {
            self.buf.push(0xf0);
            self.buf.extend_from_slice(&(n as u32).to_le_bytes());
        }
        self.buf.extend_from_slice(s);
        self.end_entry(start);
    }

    fn end_entry(&mut self, start: usize) {
        let mut back = [0u8; 5];
        let n = encode_backlen(self.buf.len() - start, &mut back);
        self.buf.extend_from_slice(&back[..n]);
        self.count += 1;
    }

    /// The finished listpack.
    pub fn finish(mut self) -> Vec<u8> {
        self.buf.push(EOF);
        let total = self.buf.len() as u32;
        self.buf[..4].copy_from_slice(&total.to_le_bytes());
        let count = self.count.min(0xffff) as u16;
        self.buf[4..6].copy_from_slice(&count.to_le_bytes());
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn encodings_round_trip() {
        let mut b = Builder::new();
        let ints = [
            0i64,
            127,
            128,
            -1,
            -4096,
            4095,
            4096,
            -32768,
            32767,
            -8_388_608,
            8_388_607,
            1 << 30,
            -(1 << 31),
            i64::MAX,
            i64::MIN,
        ];
        for i in ints {
            b.push_int(i);
        }
        let long = vec![b'x'; 5000];
        let strs: [&[u8]; 5] = [b"", b"a", &[b'y'; 63], &[b'z'; 200], &long];
        for s in strs {
            b.push_str(s);
        }
        let lp = b.finish();
        let items = decode(&lp).unwrap();
        let want: Vec<Item> = ints
            .iter()
            .map(|&i| Item::Int(i))
            .chain(strs.iter().map(|s| Item::Str(s)))
            .collect();
        assert_eq!(items, want);
    }

    #[test]
    fn redis_bytes_decode() {
        // Hand-encoded per listpack.md: "a" 6-bit string, 1 7-bit uint, -1000 13-bit int, "01"
        // (not canonical) a string.
        let mut b = Builder::new();
        for s in [&b"a"[..], b"1", b"-1000", b"01"] {
            b.push(s);
        }
        let lp = b.finish();
        assert_eq!(
            lp,
            [19, 0, 0, 0, 4, 0, 0x81, b'a', 2, 1, 1, 0xdc, 0x18, 2, 0x82, b'0', b'1', 3, 0xff]
        );
        assert_eq!(
            decode(&lp).unwrap(),
            vec![
                Item::Str(b"a"),
                Item::Int(1),
                Item::Int(-1000),
                Item::Str(b"01")
            ]
        );
    }

    #[test]
    fn hostile_headers_fail() {
        let mut lp = Builder::new();
        lp.push(b"abc");
        let lp = lp.finish();
        let mut wrong_total = lp.clone();
        wrong_total[0] += 1;
        assert!(decode(&wrong_total).is_err());
        let mut wrong_count = lp.clone();
        wrong_count[4] = 2;
        assert!(decode(&wrong_count).is_err());
        let mut huge_str = lp.clone();
        huge_str[6] = 0xf0;
        assert!(decode(&huge_str).is_err());
        let mut bad_back = lp.clone();
        let n = bad_back.len();
        bad_back[n - 2] = 9;
        assert!(decode(&bad_back).is_err());
        assert!(decode(&[]).is_err());
        assert!(decode(&[7, 0, 0, 0, 0, 0, 0xff]).unwrap().is_empty());
    }

    #[test]
    fn back_lengths_read_as_redis_reads_them() {
        // A sorted set's listpack ("m0", 0) from redis-server's DUMP, its last back length
        // 0x01 changed to 0x81: read from the end it continues into the entry's encoding byte
        // 0x00 and still gives 1, so redis-server (sanitize-dump-payload yes) loads it.
        let mut lp = Builder::new();
        lp.push(b"m0");
        lp.push(b"0");
        let mut lp = lp.finish();
        let n = lp.len();
        assert_eq!(lp[n - 2], 0x01);
        lp[n - 2] = 0x81;
        assert_eq!(decode(&lp).unwrap(), vec![Item::Str(b"m0"), Item::Int(0)]);
        // 0x82 reads as 2 there: wrong.
        lp[n - 2] = 0x82;
        assert!(decode(&lp).is_err());
    }

    proptest! {
        #[test]
        fn never_panics(lp in proptest::collection::vec(any::<u8>(), 0..100)) {
            let _ = decode(&lp);
        }

        #[test]
        fn round_trips(items in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 0..50)) {
            let mut b = Builder::new();
            for i in &items {
                b.push(i);
            }
            let lp = b.finish();
            let got: Vec<Bytes> = decode(&lp).unwrap().iter().map(Item::to_bytes).collect();
            prop_assert_eq!(got, items);
        }
    }
}
