//! Redis's CRC-64 (Jones polynomial `0xad93d23594c935a9`, reflected, initial value 0, no final
//! xor), which checks DUMP payloads and RDB files.

/// The reflected Jones polynomial.
const POLY: u64 = 0x95ac_9329_ac4b_c9b5;

const TABLE: [u64; 256] = {
    let mut t = [0u64; 256];
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
        t[i] = crc;
        i += 1;
    }
    t
};

/// Continues the CRC `crc` over `data` (start with 0).
pub fn crc64(mut crc: u64, data: &[u8]) -> u64 {
    for &b in data {
        crc = TABLE[((crc ^ u64::from(b)) & 0xff) as usize] ^ (crc >> 8);
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
}
