//! Byte scanning helpers shared by the decoders.

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// High bit set in every byte of `w` that is zero. Bits above the lowest zero byte may be set
/// spuriously (borrow propagation), but the lowest set bit is always exact, which is all a
/// "find first" needs.
#[inline(always)]
fn zero_bytes(w: u64) -> u64 {
    w.wrapping_sub(LO) & !w & HI
}

/// Index of the first byte of `hay` that is `needle` or NUL.
///
/// Redis finds line ends with `strchr` on its NUL-terminated query buffer, so a NUL byte ends the
/// search as if no line end had arrived yet. Callers check which of the two bytes was found.
/// Eight bytes are tested per step (SWAR), since lines can be up to 64 KiB long.
#[inline]
pub(crate) fn find_or_nul(hay: &[u8], needle: u8) -> Option<usize> {
    let pattern = LO.wrapping_mul(u64::from(needle));
    let mut chunks = hay.chunks_exact(8);
    let mut base = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        let hits = zero_bytes(w ^ pattern) | zero_bytes(w);
        if hits != 0 {
            return Some(base + (hits.trailing_zeros() / 8) as usize);
        }
        base += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == needle || b == 0)
        .map(|i| base + i)
}

/// Index of the first `needle` in `hay`, eight bytes per step.
#[inline]
pub(crate) fn find_byte(hay: &[u8], needle: u8) -> Option<usize> {
    let pattern = LO.wrapping_mul(u64::from(needle));
    let mut chunks = hay.chunks_exact(8);
    let mut base = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let hits = zero_bytes(u64::from_le_bytes(word) ^ pattern);
        if hits != 0 {
            return Some(base + (hits.trailing_zeros() / 8) as usize);
        }
        base += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == needle)
        .map(|i| base + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_or_nul(hay: &[u8], needle: u8) -> Option<usize> {
        hay.iter().position(|&b| b == needle || b == 0)
    }

    #[test]
    fn matches_naive_search() {
        // Every position and every neighbouring byte value, including the 0x80/0x81/0xff bytes
        // that would trip a sloppy zero-byte test.
        let fillers = [1u8, b'a', 0x7f, 0x80, 0x81, 0xfe, 0xff, b'\n', b'\r'];
        for len in 0..40 {
            for &fill in &fillers {
                for hit in 0..=len {
                    for &needle in b"\r\n" {
                        let mut hay = vec![fill; len];
                        if hit < len {
                            hay[hit] = needle;
                        }
                        assert_eq!(find_or_nul(&hay, needle), naive_or_nul(&hay, needle));
                        assert_eq!(
                            find_byte(&hay, needle),
                            hay.iter().position(|&b| b == needle)
                        );
                        if hit < len {
                            hay[hit] = 0;
                            assert_eq!(find_or_nul(&hay, needle), naive_or_nul(&hay, needle));
                        }
                    }
                }
            }
        }
    }
}
