//! Zipmaps (the hash encoding of Redis < 2.6): read only. Layout: a count byte (254 = "count
//! them"), then entries `len key len free value <free bytes>`, then 0xFF. A length is one byte
//! below 254, or 254 and a u32 LE.

use crate::{Error, Result};

fn bad() -> Error {
    Error("zipmap integrity check failed")
}

/// The (field, value) pairs of zipmap `zm`, checked as Redis's deep `zipmapValidateIntegrity`
/// does (every entry inside the buffer, terminator, a non-empty map, the count).
///
/// # Errors
/// Any inconsistency.
pub fn decode(zm: &[u8]) -> Result<Vec<(&[u8], &[u8])>> {
    if zm.len() < 2 || zm[zm.len() - 1] != 0xff {
        return Err(bad());
    }
    let end = zm.len() - 1;
    let body = &zm[..end];
    let len_at = |p: usize| -> Result<(usize, usize)> {
        match body.get(p).copied().ok_or_else(bad)? {
            b if b < 254 => Ok((usize::from(b), 1)),
            254 => {
                let b = body.get(p + 1..p + 5).ok_or_else(bad)?;
                Ok((u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize, 5))
            }
            _ => Err(bad()),
        }
    };
    let mut out = Vec::new();
    let mut p = 1;
    while p < end {
        let (kl, s) = len_at(p)?;
        p += s;
        let k = body.get(p..p + kl).ok_or_else(bad)?;
        p += kl;
        let (vl, s) = len_at(p)?;
        p += s;
        let free = usize::from(*body.get(p).ok_or_else(bad)?);
        p += 1;
        let v = body.get(p..p + vl).ok_or_else(bad)?;
        p += vl;
        if p + free > end {
            return Err(bad());
        }
        p += free;
        out.push((k, v));
    }
    if out.is_empty() || (zm[0] != 254 && usize::from(zm[0]) != out.len()) {
        return Err(bad());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_entries() {
        let zm = [
            2, 1, b'a', 1, 0, b'x', 2, b'b', b'c', 3, 1, b'y', b'z', b'w', 0, 0xff,
        ];
        assert_eq!(
            decode(&zm).unwrap(),
            vec![(&b"a"[..], &b"x"[..]), (&b"bc"[..], &b"yzw"[..])]
        );
        assert!(decode(&zm[..zm.len() - 2]).is_err());
        let mut wrong = zm;
        wrong[0] = 3;
        assert!(decode(&wrong).is_err());
        assert!(decode(&[0, 0xff]).is_err());
    }

    proptest! {
        #[test]
        fn never_panics(zm in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = decode(&zm);
        }
    }
}
