//! Ziplists (the compact encoding before listpacks, Redis < 7): read only, since Redis 7 never
//! writes them but loads them from older payloads.
//!
//! Layout: total bytes (u32 LE), offset of the last entry (u32 LE), count (u16 LE, 65535 =
//! "count them"), entries, terminator 0xFF. An entry is the previous entry's length (1 byte, or
//! 0xFE and a u32 LE), an encoding with its data.

use crate::listpack::Item;
use crate::{Error, Result};

const HEADER: usize = 10;

fn bad() -> Error {
    Error("ziplist integrity check failed")
}

/// Every element of ziplist `zl`, after the deep checks of Redis's `ziplistValidateIntegrity`:
/// header size, tail offset and count, every entry inside the buffer, each entry's "previous
/// length" equal to the previous entry's size, the terminator last.
///
/// # Errors
/// Any inconsistency.
pub fn decode(zl: &[u8]) -> Result<Vec<Item<'_>>> {
    if zl.len() < HEADER + 1 {
        return Err(bad());
    }
    let total = u32::from_le_bytes([zl[0], zl[1], zl[2], zl[3]]) as usize;
    let tail = u32::from_le_bytes([zl[4], zl[5], zl[6], zl[7]]) as usize;
    let count = usize::from(u16::from_le_bytes([zl[8], zl[9]]));
    if total != zl.len() || zl[zl.len() - 1] != 0xff {
        return Err(bad());
    }
    let end = zl.len() - 1;
    let body = &zl[..end];
    let get = |p: usize, n: usize| body.get(p..p + n).ok_or_else(bad);
    let mut out = Vec::with_capacity(count.min(zl.len() / 2));
    let (mut p, mut prev_size, mut last) = (HEADER, 0usize, HEADER);
    while p < end {
        let start = p;
        let prevlen = if body[p] < 0xfe {
            p += 1;
            usize::from(body[p - 1])
        } else if body[p] == 0xfe {
            let b = get(p + 1, 4)?;
            p += 5;
            u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize
        } else {
            return Err(bad());
        };
        if prevlen != prev_size {
            return Err(bad());
        }
        let e = *body.get(p).ok_or_else(bad)?;
        let item = match e >> 6 {
            0 => {
                let n = usize::from(e & 0x3f);
                p += 1;
                let s = get(p, n)?;
                p += n;
                Item::Str(s)
            }
            1 => {
                let n = (usize::from(e & 0x3f) << 8) | usize::from(get(p + 1, 1)?[0]);
                p += 2;
                let s = get(p, n)?;
                p += n;
                Item::Str(s)
            }
            2 => {
                let b = get(p + 1, 4)?;
                let n = u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize;
                p += 5;
                let s = get(p, n)?;
                p += n;
                Item::Str(s)
            }
            _ => {
                p += 1;
                let (v, n) = match e {
                    0xc0 => (
                        i64::from(i16::from_le_bytes(get(p, 2)?.try_into().unwrap_or([0; 2]))),
                        2,
                    ),
                    0xd0 => (
                        i64::from(i32::from_le_bytes(get(p, 4)?.try_into().unwrap_or([0; 4]))),
                        4,
                    ),
                    0xe0 => (
                        i64::from_le_bytes(get(p, 8)?.try_into().unwrap_or([0; 8])),
                        8,
                    ),
                    0xf0 => {
                        let b = get(p, 3)?;
                        (i64::from(i32::from_le_bytes([0, b[0], b[1], b[2]]) >> 8), 3)
                    }
                    0xfe => (i64::from(get(p, 1)?[0] as i8), 1),
                    0xf1..=0xfd => (i64::from(e & 0x0f) - 1, 0),
                    _ => return Err(bad()),
                };
                p += n;
                Item::Int(v)
            }
        };
        out.push(item);
        last = start;
        prev_size = p - start;
    }
    let expect_tail = if out.is_empty() { HEADER } else { last };
    if p != end || tail != expect_tail || (count != 0xffff && count != out.len()) {
        return Err(bad());
    }
    Ok(out)
}

/// A ziplist of `items` (strings, with integers stored as ziplist integers), for tests of the
/// old encodings: Redis 7 itself never writes one.
pub fn encode(items: &[&[u8]]) -> Vec<u8> {
    let mut body = Vec::new();
    let (mut prev, mut last) = (0usize, HEADER);
    for s in items {
        let start = HEADER + body.len();
        if prev < 254 {
            body.push(prev as u8);
        } else {
            body.push(0xfe);
            body.extend_from_slice(&(prev as u32).to_le_bytes());
        }
        match crate::string2ll(s) {
            Some(v) if (0..=12).contains(&v) => body.push(0xf1 + v as u8),
            Some(v) if i8::try_from(v).is_ok() => body.extend_from_slice(&[0xfe, v as u8]),
            Some(v) if i16::try_from(v).is_ok() => {
                body.push(0xc0);
                body.extend_from_slice(&(v as i16).to_le_bytes());
            }
            Some(v) if (-(1 << 23)..(1 << 23)).contains(&v) => {
                body.push(0xf0);
                body.extend_from_slice(&(v as i32).to_le_bytes()[..3]);
            }
            Some(v) if i32::try_from(v).is_ok() => {
                body.push(0xd0);
                body.extend_from_slice(&(v as i32).to_le_bytes());
            }
            Some(v) => {
                body.push(0xe0);
                body.extend_from_slice(&v.to_le_bytes());
            }
            None if s.len() < 64 => {
                body.push(s.len() as u8);
                body.extend_from_slice(s);
            }
            None if s.len() < 16384 => {
                body.push(0x40 | (s.len() >> 8) as u8);
                body.push(s.len() as u8);
                body.extend_from_slice(s);
            }
            None => {
                body.push(0x80);
                body.extend_from_slice(&(s.len() as u32).to_be_bytes());
                body.extend_from_slice(s);
            }
        }
        last = start;
        prev = HEADER + body.len() - start;
    }
    let mut zl = Vec::with_capacity(HEADER + body.len() + 1);
    zl.extend_from_slice(&((HEADER + body.len() + 1) as u32).to_le_bytes());
    zl.extend_from_slice(&(last as u32).to_le_bytes());
    zl.extend_from_slice(&(items.len().min(0xffff) as u16).to_le_bytes());
    zl.extend_from_slice(&body);
    zl.push(0xff);
    zl
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn round_trip() {
        let big = vec![b'q'; 300];
        let items: Vec<&[u8]> = vec![
            b"a",
            b"5",
            b"-100",
            b"1000",
            b"100000",
            b"3000000000",
            b"12",
            b"13",
            &big,
            b"x",
        ];
        let zl = encode(&items);
        let got: Vec<bytes::Bytes> = decode(&zl).unwrap().iter().map(Item::to_bytes).collect();
        assert_eq!(got, items);
        assert!(decode(&encode(&[])).unwrap().is_empty());
    }

    #[test]
    fn hostile_fails() {
        let zl = encode(&[b"abc", b"def"]);
        let mut t = zl.clone();
        t[4] += 1; // tail
        assert!(decode(&t).is_err());
        let mut p = zl.clone();
        p[15] = 9; // second entry's prevlen
        assert!(decode(&p).is_err());
        let mut s = zl.clone();
        s[11] = 0x3f; // string length past the end
        assert!(decode(&s).is_err());
        assert!(decode(&zl[..zl.len() - 1]).is_err());
    }

    proptest! {
        #[test]
        fn never_panics(zl in proptest::collection::vec(any::<u8>(), 0..100)) {
            let _ = decode(&zl);
        }
    }
}
