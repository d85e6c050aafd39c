//! A command's arguments, consumed in order by its pure `parse` (STYLE.md: parsing consumes every
//! argument and ends with [`Args::finish`]).

use crate::error::CmdError;
use bytes::Bytes;

/// The arguments after the command name.
#[derive(Debug)]
pub struct Args {
    args: std::vec::IntoIter<Bytes>,
    name: &'static str,
    /// The command's own name as the client spelled it: `argv[0]`, or `argv[1]` for a
    /// subcommand (some Redis errors quote it).
    sent: Option<Bytes>,
}

impl Args {
    /// Arguments of the command named `name` (lower case, as in error texts).
    pub fn new(name: &'static str, args: Vec<Bytes>) -> Self {
        Args {
            args: args.into_iter(),
            name,
            sent: None,
        }
    }

    /// The arguments of the command line `argv` after its first `skip` words (the name, or the
    /// name and subcommand), the last of which is kept as the name the client sent.
    pub fn of_line(name: &'static str, argv: Vec<Bytes>, skip: usize) -> Self {
        let mut args = argv.into_iter();
        let mut sent = None;
        for _ in 0..skip {
            sent = args.next();
        }
        Args { args, name, sent }
    }

    /// Records the command's own name as the client sent it (`argv[0]`, or `argv[1]` for a
    /// subcommand).
    pub fn set_sent_name(&mut self, sent: Bytes) {
        self.sent = Some(sent);
    }

    /// The command name as the client sent it (its case kept), or [`Args::name`] when unknown.
    pub fn sent_name(&self) -> String {
        match &self.sent {
            Some(b) => String::from_utf8_lossy(b).into_owned(),
            None => self.name.to_string(),
        }
    }

    /// Redis's error for a subcommand's wrong arguments, naming the subcommand as the client
    /// spelled it (`argv[1]`): "unknown subcommand or wrong number of arguments for 'get'. Try
    /// SLOWLOG HELP."
    pub fn subcommand_syntax(&self) -> CmdError {
        let (parent, own) = self.name.split_once('|').unwrap_or((self.name, self.name));
        let sent = match &self.sent {
            Some(s) => String::from_utf8_lossy(s).into_owned(),
            None => own.to_ascii_uppercase(),
        };
        crate::error::subcommand_syntax(&sent, parent)
    }

    /// The command's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// How many arguments are left.
    pub fn remaining(&self) -> usize {
        self.args.len()
    }

    /// Whether every argument has been consumed.
    pub fn is_empty(&self) -> bool {
        self.args.len() == 0
    }

    /// The next argument, without consuming it.
    pub fn peek(&self) -> Option<&Bytes> {
        self.args.as_slice().first()
    }

    /// The next argument.
    ///
    /// # Errors
    /// `ERR syntax error` when there is none.
    // Not Iterator::next: a missing argument is an error reply, not the end of a sequence.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Bytes, CmdError> {
        self.args.next().ok_or(CmdError::Syntax)
    }

    /// The next argument as an integer (Redis's `string2ll`).
    ///
    /// # Errors
    /// `ERR value is not an integer or out of range`; `ERR syntax error` when missing.
    pub fn next_i64(&mut self) -> Result<i64, CmdError> {
        parse_i64(&self.next()?)
    }

    /// The next argument as a float (Redis's `strtod` rules).
    ///
    /// # Errors
    /// `ERR value is not a valid float`; `ERR syntax error` when missing.
    pub fn next_f64(&mut self) -> Result<f64, CmdError> {
        parse_f64(&self.next()?).ok_or(CmdError::NotFloat)
    }

    /// Consumes the next argument if it equals `word` (ASCII case-insensitive).
    pub fn eat(&mut self, word: &str) -> bool {
        if self
            .peek()
            .is_some_and(|a| a.eq_ignore_ascii_case(word.as_bytes()))
        {
            self.args.next();
            true
        } else {
            false
        }
    }

    /// All remaining arguments.
    pub fn rest(&mut self) -> Vec<Bytes> {
        self.args.by_ref().collect()
    }

    /// Checks nothing is left over.
    ///
    /// # Errors
    /// `ERR syntax error` when arguments remain.
    pub fn finish(&self) -> Result<(), CmdError> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(CmdError::Syntax)
        }
    }
}

/// Test helper: a command line's arguments, split at white space.
#[cfg(test)]
pub(crate) fn args_of(name: &'static str, line: &str) -> Args {
    let args = line
        .split_whitespace()
        .map(|s| Bytes::copy_from_slice(s.as_bytes()))
        .collect();
    Args::new(name, args)
}

/// A blocking command's timeout (seconds, fractional, 0 = forever) as Redis 7.0 reads it
/// (BLPOP and the other list and sorted-set blocking pops).
///
/// # Errors
/// `ERR timeout is not a float or out of range`, `ERR timeout is negative`.
pub fn parse_timeout(arg: &[u8]) -> Result<Option<std::time::Duration>, CmdError> {
    match relis::parse_timeout_ms(arg) {
        None => Err(CmdError::TIMEOUT_NOT_FLOAT),
        Some(ms) if ms < 0 => Err(CmdError::TIMEOUT_NEGATIVE),
        Some(0) => Ok(None),
        Some(ms) => Ok(Some(std::time::Duration::from_millis(ms as u64))),
    }
}

/// Parses an integer argument as Redis does.
///
/// # Errors
/// `ERR value is not an integer or out of range`.
pub fn parse_i64(b: &[u8]) -> Result<i64, CmdError> {
    relis::parse_i64(b).ok_or(CmdError::NotInteger)
}

/// Parses a float argument as Redis's `string2d` does: `strtod` syntax (including `inf`,
/// exponents, hex floats are not accepted by Rust, nor are they by Redis in practice), no leading
/// space, no NaN.
pub fn parse_f64(b: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(b).ok()?;
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_whitespace()) {
        return None;
    }
    let lower = s.to_ascii_lowercase();
    let v = match lower.trim_start_matches(['+', '-']) {
        "inf" | "infinity" => {
            if lower.starts_with('-') {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }
        }
        t if t.starts_with("nan") || t.starts_with("inf") => return None,
        _ => s.parse::<f64>().ok()?,
    };
    if v.is_nan() {
        None
    } else {
        Some(v)
    }
}

/// The lower-cased text of an argument (for keywords).
pub fn lower(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_ascii_lowercase()
}

/// Splits a config (or ACL file) line into words, honouring "double" and 'single' quotes
/// (Redis's `sdssplitargs`).
pub fn split_config_line(s: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(&c) = chars.peek() else { break };
        let mut word = String::new();
        if c == '"' || c == '\'' {
            chars.next();
            let mut closed = false;
            while let Some(ch) = chars.next() {
                if ch == c {
                    closed = true;
                    break;
                }
                if ch == '\\' && c == '"' {
                    match chars.next()? {
                        'n' => word.push('\n'),
                        't' => word.push('\t'),
                        'r' => word.push('\r'),
                        o => word.push(o),
                    }
                } else {
                    word.push(ch);
                }
            }
            if !closed {
                return None;
            }
        } else {
            while let Some(&ch) = chars.peek() {
                if ch.is_whitespace() {
                    break;
                }
                word.push(ch);
                chars.next();
            }
        }
        out.push(word);
    }
    Some(out)
}

/// What C's `strtod` (glibc's) makes of the start of `s`: leading white space, an optional
/// sign, then `inf`, `infinity` or `nan` (any case; `nan(n)` with its payload), a hexadecimal
/// number (`0x1.8p3`) or a decimal one. Returns the value, the bytes it used (0: no number)
/// and whether it is out of range (`ERANGE`: a finite text overflowing to ±inf, or one with a
/// nonzero digit underflowing to 0). ZADD's scores, cjson's numbers.
pub fn strtod(s: &[u8]) -> (f64, usize, bool) {
    let mut i = 0;
    while matches!(s.get(i), Some(b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')) {
        i += 1;
    }
    // An optional sign at `at`: whether it is a minus, and where what follows it starts.
    let signed = |at: usize| match s.get(at) {
        Some(b'-') => (true, at + 1),
        Some(b'+') => (false, at + 1),
        _ => (false, at),
    };
    let (neg, i) = signed(i);
    let sign = |x: f64| if neg { -x } else { x };
    let rest = &s[i..];
    let starts = |w: &[u8]| rest.len() >= w.len() && rest[..w.len()].eq_ignore_ascii_case(w);
    if starts(b"infinity") {
        return (sign(f64::INFINITY), i + 8, false);
    }
    if starts(b"inf") {
        return (sign(f64::INFINITY), i + 3, false);
    }
    if starts(b"nan") {
        let mut n = i + 3;
        let mut x = f64::NAN;
        if s.get(n) == Some(&b'(') {
            let close = s[n + 1..]
                .iter()
                .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'));
            if let Some(k) = close.filter(|k| s[n + 1 + k] == b')') {
                // glibc: a sequence that is one whole number (strtoull, base 0) is the NaN's
                // payload, its low 51 bits under the quiet bit.
                let seq = std::str::from_utf8(&s[n + 1..n + 1 + k]).unwrap_or("");
                let (digits, radix) = match seq.as_bytes() {
                    [b'0', b'x' | b'X', ..] => (&seq[2..], 16),
                    [b'0', _, ..] => (&seq[1..], 8),
                    _ => (seq, 10),
                };
                let whole = !digits.is_empty() && digits.chars().all(|c| c.is_digit(radix));
                if whole {
                    let mant = u64::from_str_radix(digits, radix).unwrap_or(u64::MAX);
                    let payload = mant & ((1 << 51) - 1);
                    if payload != 0 {
                        x = f64::from_bits(f64::NAN.to_bits() | payload);
                    }
                }
                n += k + 2;
            }
        }
        return (sign(x), n, false);
    }
    let digits = |from: usize, hex: bool| {
        s[from..]
            .iter()
            .take_while(|c| {
                if hex {
                    c.is_ascii_hexdigit()
                } else {
                    c.is_ascii_digit()
                }
            })
            .count()
    };
    // Digits, then a `.` and more: how many before and after the point, and where they end.
    let mantissa = |from: usize, hex: bool| {
        let int = digits(from, hex);
        let end = from + int;
        if s.get(end) == Some(&b'.') {
            let frac = digits(end + 1, hex);
            (int, frac, end + 1 + frac)
        } else {
            (int, 0, end)
        }
    };
    if rest.len() > 2 && rest[0] == b'0' && rest[1] | 0x20 == b'x' {
        let start = i + 2;
        let (int, frac, mut end) = mantissa(start, true);
        if int + frac > 0 {
            // The digits as an integer (the first 31 significant ones) times a power of two.
            let (mut m, mut exp, mut kept) = (0u128, 0i64, 0);
            for (k, &c) in s[start..end].iter().filter(|c| **c != b'.').enumerate() {
                let d = (c as char).to_digit(16).unwrap_or(0);
                if kept < 31 {
                    if m > 0 || d > 0 {
                        kept += 1;
                    }
                    m = m * 16 + u128::from(d);
                    if k >= int {
                        exp -= 4;
                    }
                } else if k < int {
                    exp += 4;
                }
            }
            if matches!(s.get(end), Some(b'p' | b'P')) {
                let (eneg, e) = signed(end + 1);
                let n = digits(e, false);
                if n > 0 {
                    let v: i64 = std::str::from_utf8(&s[e..e + n])
                        .ok()
                        .and_then(|t| t.parse().ok())
                        .unwrap_or(i64::MAX / 2);
                    exp = exp.saturating_add(if eneg { -v } else { v });
                    end = e + n;
                }
            }
            // Scaled in steps, each exact until the last (2^-1074 is no power powi reaches).
            let (mut x, mut e) = (m as f64, exp.clamp(-1300, 1300) as i32);
            while e.abs() > 1000 {
                let step = 1000 * e.signum();
                x *= 2f64.powi(step);
                e -= step;
            }
            let x = x * 2f64.powi(e);
            return (sign(x), end, x.is_infinite() || (x == 0.0 && m > 0));
        }
        // "0x" and no digit: the 0 alone.
        return (sign(0.0), i + 1, false);
    }
    let (int, frac, mut end) = mantissa(i, false);
    if int + frac == 0 {
        return (0.0, 0, false);
    }
    let nonzero = s[i..end].iter().any(|c| (b'1'..=b'9').contains(c));
    if matches!(s.get(end), Some(b'e' | b'E')) {
        let (_, e) = signed(end + 1);
        let n = digits(e, false);
        if n > 0 {
            end = e + n;
        }
    }
    // Rust reads every decimal form C does (the sign is applied here).
    let x: f64 = std::str::from_utf8(&s[i..end])
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(0.0);
    (sign(x), end, x.is_infinite() || (x == 0.0 && nonzero))
}

#[cfg(test)]
mod tests {
    use super::strtod;

    /// `strtod` reads what glibc's reads: the same value (bit for bit, NaN's sign too) and
    /// the same length, on hand-picked texts and random ones made of number characters.
    #[test]
    fn strtod_reads_as_glibc() {
        use rand::{Rng, SeedableRng};
        let c_strtod = |t: &[u8]| -> Option<(u64, usize)> {
            let c = std::ffi::CString::new(t).unwrap();
            let mut end: *mut libc::c_char = std::ptr::null_mut();
            // SAFETY: a NUL-terminated string and a valid out pointer.
            let x = unsafe { libc::strtod(c.as_ptr(), &mut end) };
            let n = end as usize - c.as_ptr() as usize;
            (n > 0).then_some((x.to_bits(), n))
        };
        let mut texts: Vec<Vec<u8>> = [
            "0",
            "-0",
            "+1",
            "01",
            "1.",
            ".5",
            "1e",
            "1e+",
            "1e-5",
            "1E400",
            "-1e-400",
            "inf",
            "-Infinity",
            "INFx",
            "nan",
            "-nan",
            "NaN(123)",
            "nan(x y)",
            "nan(",
            "0x",
            "0x.",
            "0x10",
            "0X1p4",
            "0x1.8p1",
            "0x.8",
            "0x1p-1074",
            "0x1P+1024",
            "0x1p",
            "0xg",
            "0x1.fffffffffffffp1023",
            "12345678901234567890",
            "1.7976931348623157e308",
            "4.9e-324",
            "-",
            "+",
            ".",
            "e5",
            "1.5.5",
            "2.5e-310x",
            " 1",
            "\t-2e3",
            " +",
            "\x0b0x1p3",
            "\n\x0cnan",
        ]
        .iter()
        .map(|t| t.as_bytes().to_vec())
        .collect();
        let mut r = rand::rngs::StdRng::seed_from_u64(7);
        let alphabet = b"0123456789abcdefxXpPeE+-.in";
        for _ in 0..20_000 {
            let n = r.random_range(1..12);
            texts.push(
                (0..n)
                    .map(|_| alphabet[r.random_range(0..alphabet.len())])
                    .collect(),
            );
        }
        for t in texts {
            let ours = {
                let (x, n, _) = strtod(&t);
                (n > 0).then_some((x.to_bits(), n))
            };
            let c = c_strtod(&t);
            // glibc's NaN from text is the positive quiet NaN, negated by a sign.
            assert_eq!(ours, c, "{:?}", String::from_utf8_lossy(&t));
        }
    }
}
