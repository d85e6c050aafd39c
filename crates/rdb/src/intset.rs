//! Intsets (small sets of integers): encoding width (u32 LE: 2, 4 or 8), count (u32 LE), then the
//! members in ascending order, little endian.

use crate::{Error, Result};

fn bad() -> Error {
    Error("intset integrity check failed")
}

/// The members of intset `is`, checked as Redis's deep `intsetValidateIntegrity` does: a valid
/// width, a size matching the count, not empty, strictly ascending (no duplicates).
///
/// # Errors
/// Any inconsistency.
pub fn decode(is: &[u8]) -> Result<Vec<i64>> {
    if is.len() < 8 {
        return Err(bad());
    }
    let width = u32::from_le_bytes([is[0], is[1], is[2], is[3]]) as usize;
    let count = u32::from_le_bytes([is[4], is[5], is[6], is[7]]) as usize;
    if !matches!(width, 2 | 4 | 8)
        || count == 0
        || (is.len() - 8) / width != count
        || !(is.len() - 8).is_multiple_of(width)
    {
        return Err(bad());
    }
    let mut out: Vec<i64> = Vec::with_capacity(count);
    for c in is[8..].chunks_exact(width) {
        let v = match width {
            2 => i64::from(i16::from_le_bytes([c[0], c[1]])),
            4 => i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            _ => i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]),
        };
        if out.last().is_some_and(|&l| l >= v) {
            return Err(bad());
        }
        out.push(v);
    }
    Ok(out)
}

/// An intset of `members` (sorted here), in the narrowest width that holds them all.
pub fn encode(members: &[i64]) -> Vec<u8> {
    let mut m = members.to_vec();
    m.sort_unstable();
    m.dedup();
    let width: usize = if m.iter().all(|&v| i16::try_from(v).is_ok()) {
        2
    } else if m.iter().all(|&v| i32::try_from(v).is_ok()) {
        4
    } else {
        8
    };
    let mut out = Vec::with_capacity(8 + width * m.len());
    out.extend_from_slice(&(width as u32).to_le_bytes());
    out.extend_from_slice(&(m.len() as u32).to_le_bytes());
    for v in m {
        out.extend_from_slice(&v.to_le_bytes()[..width]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn widths_round_trip() {
        for set in [
            vec![1i64, -5, 300],
            vec![70000, -1],
            vec![i64::MIN, 0, i64::MAX],
        ] {
            let is = encode(&set);
            let mut want = set.clone();
            want.sort();
            assert_eq!(decode(&is).unwrap(), want);
        }
        assert_eq!(encode(&[1, 2])[..4], [2, 0, 0, 0]);
    }

    #[test]
    fn hostile_fails() {
        let mut is = encode(&[1, 2, 3]);
        assert!(decode(&is[..is.len() - 1]).is_err());
        is[8] = 9; // out of order
        assert!(decode(&is).is_err());
        assert!(decode(&[2, 0, 0, 0, 0, 0, 0, 0]).is_err()); // empty
        assert!(decode(&[3, 0, 0, 0, 1, 0, 0, 0, 1, 2, 3]).is_err()); // bad width
        assert!(decode(&[2, 0, 0, 0, 1, 0, 0, 0x40, 1, 2]).is_err()); // count/size mismatch
        assert!(decode(&[2, 0, 0, 0, 2, 0, 0, 0, 1, 0, 1, 0]).is_err()); // duplicate
    }

    proptest! {
        #[test]
        fn never_panics(is in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = decode(&is);
        }
    }
}
