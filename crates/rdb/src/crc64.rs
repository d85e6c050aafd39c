//! Redis's CRC-64 (Jones polynomial `0xad93d23594c935a9`, reflected, initial value 0, no final
//! xor), which checks DUMP payloads and RDB files.

/// The reflected Jones polynomial.
const POLY: u64 = 0x95ac_9329_ac4b_c9b5;

/// Eight tables for slicing-by-8 (as Redis's `crcspeed`): `TABLES[0]` is the byte-at-a-time
/// table, `TABLES[k][b]` the CRC of byte `b` followed by `k` zero bytes.
const TABLES: [[u64; 256]; 8] = {
    let mut t = [[0u64; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u64;
        let mut k = 0;
        while k < 8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ POLY
            } else {
                crc >> 1
            };
            k += 1;
        }
        t[0][i] = crc;
        i += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = t[k - 1][i];
            t[k][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            i += 1;
        }
        k += 1;
    }
    t
};

/// Continues the CRC `crc` over `data` (start with 0), eight bytes per step: RDB files pass
/// through it whole, on import and export.
pub fn crc64(mut crc: u64, data: &[u8]) -> u64 {
    let t = &TABLES;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        let x = crc ^ u64::from_le_bytes(w);
        crc = t[7][(x & 0xff) as usize]
            ^ t[6][((x >> 8) & 0xff) as usize]
            ^ t[5][((x >> 16) & 0xff) as usize]
            ^ t[4][((x >> 24) & 0xff) as usize]
            ^ t[3][((x >> 32) & 0xff) as usize]
            ^ t[2][((x >> 40) & 0xff) as usize]
            ^ t[1][((x >> 48) & 0xff) as usize]
            ^ t[0][(x >> 56) as usize];
    }
    for &b in chunks.remainder() {
        crc = t[0][((crc ^ u64::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vector() {
        // The test vector of Redis's crc64.c.
        assert_eq!(crc64(0, b"123456789"), 0xe9c6_d914_c4b8_d9ca);
        assert_eq!(crc64(crc64(0, b"1234"), b"56789"), 0xe9c6_d914_c4b8_d9ca);
        assert_eq!(crc64(0, b""), 0);
    }

    /// The byte-at-a-time definition.
    fn slow(mut crc: u64, data: &[u8]) -> u64 {
        for &b in data {
            crc = TABLES[0][((crc ^ u64::from(b)) & 0xff) as usize] ^ (crc >> 8);
        }
        crc
    }

    #[test]
    fn eight_at_a_time_matches_byte_at_a_time() {
        let data: Vec<u8> = (0..1000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for len in [0, 1, 7, 8, 9, 15, 16, 17, 100, 1000] {
            for start in [0, 1, 3] {
                let d = &data[start..start + len.min(data.len() - start)];
                assert_eq!(crc64(12345, d), slow(12345, d), "{len} {start}");
            }
        }
    }
}
