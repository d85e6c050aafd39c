//! Formatting doubles exactly like Redis 7.0's `addReplyDouble` (C `printf("%.17g")`).

use std::fmt::{self, Write};

/// Size of the buffer [`format_double_into`] needs. The longest output is 24 bytes
/// (`-2.2250738585072014e-308`).
pub const DOUBLE_BUF_LEN: usize = 32;

/// Significant digits of `%.17g`: enough for every double to read back unchanged.
const PRECISION: i32 = 17;

/// Format a double the way Redis 7.0's `addReplyDouble` does: C `printf("%.17g")`, with `inf` /
/// `-inf` for infinities and `nan` for NaN (`-nan` when the sign bit is set, as glibc prints it).
///
/// Examples: 1.5 -> `1.5`, 0.1 -> `0.10000000000000001`, 1e20 -> `1e+20`, 100.0 -> `100`,
/// -0.0 -> `-0`, 1e-5 -> `1.0000000000000001e-05`.
pub fn format_double(d: f64) -> String {
    let mut buf = [0u8; DOUBLE_BUF_LEN];
    format_double_into(d, &mut buf).to_owned()
}

/// [`format_double`] without allocating: writes into `buf` and returns the text.
pub fn format_double_into(d: f64, buf: &mut [u8; DOUBLE_BUF_LEN]) -> &str {
    let len = write_g17(d, buf);
    // Only ASCII is ever written, so this cannot fail.
    std::str::from_utf8(&buf[..len]).unwrap_or("")
}

/// Fixed-capacity `fmt::Write` sink, so formatting never allocates.
struct Cursor<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl Cursor<'_> {
    fn push(&mut self, b: u8) {
        if let Some(slot) = self.buf.get_mut(self.len) {
            *slot = b;
            self.len += 1;
        }
    }

    fn extend(&mut self, s: &[u8]) {
        for &b in s {
            self.push(b);
        }
    }
}

impl Write for Cursor<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let dst = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Writes `%.17g` of `d` into `buf`, returning the length.
fn write_g17(d: f64, buf: &mut [u8; DOUBLE_BUF_LEN]) -> usize {
    let mut out = Cursor { buf, len: 0 };
    if d.is_sign_negative() {
        out.push(b'-');
    }
    if d.is_nan() {
        out.extend(b"nan");
        return out.len;
    }
    if d.is_infinite() {
        out.extend(b"inf");
        return out.len;
    }
    let a = d.abs();
    if a == 0.0 {
        out.push(b'0');
        return out.len;
    }

    // Rounding to 17 significant digits must be exact (ties to even on the exact binary value,
    // as glibc does). Rust's `{:.16e}` guarantees exactly that, giving "D.DDDDDDDDDDDDDDDDe<X>";
    // the rest is %g's choice between fixed and exponent notation, done by hand below.
    let mut sci = [0u8; DOUBLE_BUF_LEN];
    let mut sci_out = Cursor {
        buf: &mut sci,
        len: 0,
    };
    if write!(sci_out, "{a:.16e}").is_err() {
        return out.len;
    }
    let sci_len = sci_out.len;
    let sci = &sci[..sci_len];
    let mut digits = [b'0'; PRECISION as usize];
    let mut n = 0;
    let mut exp_at = sci.len();
    for (i, &c) in sci.iter().enumerate() {
        match c {
            b'0'..=b'9' if n < digits.len() => {
                digits[n] = c;
                n += 1;
            }
            b'e' => {
                exp_at = i + 1;
                break;
            }
            _ => {}
        }
    }
    let mut exp: i32 = 0;
    let mut exp_neg = false;
    for &c in sci.get(exp_at..).unwrap_or(&[]) {
        match c {
            b'-' => exp_neg = true,
            b'0'..=b'9' => exp = exp * 10 + i32::from(c - b'0'),
            _ => {}
        }
    }
    if exp_neg {
        exp = -exp;
    }

    // %g drops trailing zeros (no '#' flag), and the point with them if nothing is left.
    let mut sig = digits.len();
    while sig > 1 && digits[sig - 1] == b'0' {
        sig -= 1;
    }
    let digits = &digits[..sig];

    if (-4..PRECISION).contains(&exp) {
        if exp >= 0 {
            // exp < 17, so the integer part is within the 17 digits; pad in case sig is shorter.
            let int_len = exp as usize + 1;
            for i in 0..int_len {
                out.push(digits.get(i).copied().unwrap_or(b'0'));
            }
            if sig > int_len {
                out.push(b'.');
                out.extend(&digits[int_len..]);
            }
        } else {
            out.extend(b"0.");
            for _ in 0..(-exp - 1) {
                out.push(b'0');
            }
            out.extend(digits);
        }
    } else {
        out.push(digits[0]);
        if sig > 1 {
            out.push(b'.');
            out.extend(&digits[1..]);
        }
        out.push(b'e');
        out.push(if exp < 0 { b'-' } else { b'+' });
        // C prints at least two exponent digits.
        let e = exp.unsigned_abs();
        if e >= 100 {
            out.push(b'0' + (e / 100) as u8);
        }
        out.push(b'0' + (e / 10 % 10) as u8);
        out.push(b'0' + (e % 10) as u8);
    }
    out.len
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (input bits, C `printf("%.17g")` output). Expected strings were produced with Python's
    /// `'%.17g' % x`, which uses the same correctly rounded conversion as glibc, then pinned.
    const PINNED: &[(u64, &str)] = &include!("double_table.in");

    #[test]
    fn brief_examples() {
        assert_eq!(format_double(1.5), "1.5");
        assert_eq!(format_double(0.1), "0.10000000000000001");
        assert_eq!(format_double(1e20), "1e+20");
        assert_eq!(format_double(100.0), "100");
        assert_eq!(format_double(-0.0), "-0");
        assert_eq!(format_double(0.0), "0");
        assert_eq!(format_double(1.0 / 3.0), "0.33333333333333331");
        assert_eq!(format_double(1e-5), "1.0000000000000001e-05");
        assert_eq!(format_double(f64::INFINITY), "inf");
        assert_eq!(format_double(f64::NEG_INFINITY), "-inf");
        assert_eq!(format_double(f64::NAN), "nan");
        assert_eq!(format_double(-f64::NAN), "-nan");
    }

    #[test]
    fn pinned_table() {
        assert!(PINNED.len() > 300);
        for &(bits, want) in PINNED {
            let d = f64::from_bits(bits);
            assert_eq!(format_double(d), want, "bits {bits:#018x}");
        }
    }

    #[test]
    fn round_trips() {
        for &(bits, _) in PINNED {
            let d = f64::from_bits(bits);
            if d.is_finite() {
                let back: f64 = format_double(d).parse().unwrap_or(f64::NAN);
                assert_eq!(back.to_bits(), bits);
            }
        }
    }

    #[test]
    fn into_buffer_matches() {
        let mut buf = [0u8; DOUBLE_BUF_LEN];
        assert_eq!(
            format_double_into(-2.2250738585072014e-308, &mut buf),
            "-2.2250738585072014e-308"
        );
    }
}
