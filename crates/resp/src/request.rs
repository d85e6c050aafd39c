//! Server side: decoding client requests into command arguments, as Redis 7.0's
//! `processMultibulkBuffer` and `processInlineBuffer` do (src/networking.c).
//!
//! Quirks reproduced on purpose, because a client can observe them:
//!
//! * Line ends are found with `strchr` on a NUL-terminated buffer: a multibulk header line ends
//!   at the first `\r` (the byte after it is skipped without being checked), an inline line at
//!   the first `\n`, and a NUL byte before either hides the line end, so Redis keeps waiting for
//!   data until the "too big" limit trips.
//! * The two bytes after a bulk payload are skipped without checking that they are CRLF.
//! * The "too big" limits compare the *whole unread buffer*, not the line, with 64 KiB.
//! * Counts and lengths are parsed with `string2ll`: no `+`, no spaces, no leading zeros.
//! * A count of zero or less is an empty command, which the caller skips.

use bytes::{Bytes, BytesMut};

use crate::scan::find_or_nul;
use crate::ProtocolError;

/// Limits for decoding requests, named after the Redis settings.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Largest bulk argument accepted (`proto-max-bulk-len`), default 512 MiB.
    pub proto_max_bulk_len: usize,
    /// Largest argument count accepted in a multibulk request. Redis 7.0 caps it at `INT_MAX`
    /// (the old 1024*1024 limit was removed in 7.0, redis/redis#9528), which is the default.
    pub max_multibulk_len: usize,
    /// Largest unread buffer allowed without a line end (`PROTO_INLINE_MAX_SIZE`), default
    /// 64 KiB. It bounds inline requests and the count lines of multibulk requests.
    pub max_inline_len: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            proto_max_bulk_len: 512 * 1024 * 1024,
            max_multibulk_len: i32::MAX as usize,
            max_inline_len: 64 * 1024,
        }
    }
}

/// Redis lets a client that still has to authenticate send at most this many arguments...
const UNAUTH_MAX_MULTIBULK_LEN: i64 = 10;
/// ...each of at most this many bytes (`processMultibulkBuffer`, `authRequired`).
const UNAUTH_MAX_BULK_LEN: i64 = 16384;

/// Server side: decode ONE request (a command line as arguments) from the front of `buf`.
///
/// Returns `Ok(Some(args))` and removes the request's bytes from `buf`, or `Ok(None)` when the
/// request is not complete yet (`buf` is left as it was). The arguments are zero-copy slices of
/// the received bytes (inline arguments that needed unescaping are the exception).
///
/// Requests starting with `*` are multibulk (`*<n>\r\n` then n times `$<len>\r\n<bytes>\r\n`);
/// anything else is an inline, telnet-style command line split like Redis's `sdssplitargs`. An
/// empty line, an all-blank line, `*0\r\n` and `*-1\r\n` yield an empty vector, which the caller
/// skips as Redis does.
///
/// Each call re-parses the pending request from the start, which costs O(headers) for a
/// multibulk request. A connection that receives one huge request in many reads should use a
/// [`RequestDecoder`], which resumes where it stopped.
///
/// # Errors
///
/// A [`ProtocolError`] carrying Redis's exact text (`invalid multibulk length`,
/// `expected '$', got 'x'`, `invalid bulk length`, `too big mbulk count string`,
/// `too big bulk count string`, `too big inline request`, `unbalanced quotes in request`). The
/// server should reply with it and close the connection; `buf` is left untouched.
pub fn decode_request(
    buf: &mut BytesMut,
    limits: &Limits,
) -> Result<Option<Vec<Bytes>>, ProtocolError> {
    match buf.first() {
        None => Ok(None),
        Some(b'*') => {
            // Pass one finds the end (or the error) without allocating; pass two, over the
            // frozen request, slices out the arguments. Header lines are short, so scanning
            // them twice is cheaper than collecting their positions in a temporary vector.
            let mut progress = Progress::default();
            if !scan_multibulk(buf, &mut progress, limits, false, &mut ())? {
                return Ok(None);
            }
            let frame = buf.split_to(progress.pos).freeze();
            let mut sink = Collect {
                frame: &frame,
                args: Vec::new(),
            };
            let mut again = Progress::default();
            // Same bytes, same answer: this cannot fail or stop short.
            scan_multibulk(&frame, &mut again, limits, false, &mut sink)?;
            Ok(Some(sink.args))
        }
        Some(_) => decode_inline(buf, limits),
    }
}

/// A resumable request decoder for one connection.
///
/// It decodes exactly what [`decode_request`] does, but remembers how far it got into a
/// multibulk request, so receiving a request with many arguments in many reads costs O(n)
/// overall instead of re-parsing every header on each read. It also knows whether the
/// connection still has to authenticate, in which case Redis 7.0 refuses requests of more than
/// 10 arguments (`unauthenticated multibulk length`) or with arguments over 16384 bytes
/// (`unauthenticated bulk length`).
///
/// Between a call that returned `Ok(None)` and the next one, the caller may only append to the
/// buffer.
#[derive(Debug)]
pub struct RequestDecoder {
    limits: Limits,
    auth_required: bool,
    /// Where we are in a partly received multibulk request, if any.
    pending: Option<Progress>,
    /// Argument positions found so far in the pending request.
    ranges: Vec<(usize, usize)>,
}

impl RequestDecoder {
    /// A decoder enforcing `limits`, for a connection that needs no authentication.
    pub fn new(limits: Limits) -> Self {
        RequestDecoder {
            limits,
            auth_required: false,
            pending: None,
            ranges: Vec::new(),
        }
    }

    /// Tell the decoder whether the client still has to authenticate (Redis's `authRequired`).
    pub fn set_auth_required(&mut self, required: bool) {
        self.auth_required = required;
    }

    /// Replace the limits (after `CONFIG SET proto-max-bulk-len`, for instance). Applies from the
    /// next header parsed.
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// Decode one request from the front of `buf`, like [`decode_request`].
    ///
    /// # Errors
    ///
    /// The same [`ProtocolError`]s as [`decode_request`], plus `unauthenticated multibulk length`
    /// and `unauthenticated bulk length` while authentication is required. After an error the
    /// decoder starts afresh, but the connection is meant to be closed.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Vec<Bytes>>, ProtocolError> {
        let mut progress = match self.pending.take() {
            // A shrunken buffer means the caller broke the append-only contract; start over
            // rather than index out of bounds.
            Some(p) if p.pos <= buf.len() => p,
            _ => {
                self.ranges.clear();
                match buf.first() {
                    None => return Ok(None),
                    Some(b'*') => Progress::default(),
                    Some(_) => return decode_inline(buf, &self.limits),
                }
            }
        };
        let complete = match scan_multibulk(
            buf,
            &mut progress,
            &self.limits,
            self.auth_required,
            &mut self.ranges,
        ) {
            Ok(complete) => complete,
            Err(e) => {
                self.ranges.clear();
                return Err(e);
            }
        };
        if !complete {
            self.pending = Some(progress);
            return Ok(None);
        }
        let frame = buf.split_to(progress.pos).freeze();
        let args = self
            .ranges
            .drain(..)
            .map(|(start, end)| frame.slice(start..end))
            .collect();
        // Don't keep a huge vector around after one huge request (Redis frees argv too).
        if self.ranges.capacity() > 1024 {
            self.ranges = Vec::new();
        }
        Ok(Some(args))
    }
}

/// How far a multibulk request has been parsed: everything before `pos` is done.
#[derive(Clone, Copy, Debug, Default)]
struct Progress {
    /// Offset of the next line to parse: the count line, or the next `$<len>` header.
    pos: usize,
    /// Arguments still to come; `None` until the count line has been parsed.
    remaining: Option<usize>,
}

/// Receives what [`scan_multibulk`] finds.
trait ArgSink {
    /// The request announced `n` (>= 1) arguments.
    fn count(&mut self, n: usize);
    /// One complete argument occupies `start..end` of the buffer.
    fn arg(&mut self, start: usize, end: usize);
}

/// Discards everything: the first pass only wants the end of the request.
impl ArgSink for () {
    fn count(&mut self, _: usize) {}
    fn arg(&mut self, _: usize, _: usize) {}
}

/// Positions, for the resumable decoder.
impl ArgSink for Vec<(usize, usize)> {
    fn count(&mut self, n: usize) {
        // The count is the client's claim, not data we hold: grow as arguments arrive, like
        // Redis, which preallocates at most 1024 argv slots.
        self.reserve(n.min(1024));
    }
    fn arg(&mut self, start: usize, end: usize) {
        self.push((start, end));
    }
}

/// Slices of the frozen request, for the second pass of [`decode_request`].
struct Collect<'a> {
    frame: &'a Bytes,
    args: Vec<Bytes>,
}

impl ArgSink for Collect<'_> {
    fn count(&mut self, n: usize) {
        // The first pass saw all n arguments in the buffer, so n is real.
        self.args.reserve_exact(n);
    }
    fn arg(&mut self, start: usize, end: usize) {
        self.args.push(self.frame.slice(start..end));
    }
}

/// Parses a multibulk request in `buf` (which starts with `*`) from `p` on, reporting arguments
/// to `sink`. Returns `Ok(true)` when the request is complete, ending at `p.pos`, and `Ok(false)`
/// when more bytes are needed; `p` then records where to resume.
fn scan_multibulk(
    buf: &[u8],
    p: &mut Progress,
    limits: &Limits,
    auth_required: bool,
    sink: &mut impl ArgSink,
) -> Result<bool, ProtocolError> {
    let mut remaining = match p.remaining {
        Some(r) => r,
        None => {
            let line = buf.get(p.pos..).unwrap_or_default();
            let Some(cr) = header_end(line) else {
                if line.len() > limits.max_inline_len {
                    return Err(ProtocolError::too_big_mbulk_count());
                }
                return Ok(false);
            };
            let count = string2ll(line.get(1..cr).unwrap_or_default());
            let count = match count {
                Some(n) if n <= 0 || n as u64 <= limits.max_multibulk_len as u64 => n,
                _ => return Err(ProtocolError::invalid_multibulk_length()),
            };
            if count > UNAUTH_MAX_MULTIBULK_LEN && auth_required {
                return Err(ProtocolError::unauthenticated_multibulk_length());
            }
            p.pos += cr + 2;
            if count <= 0 {
                p.remaining = Some(0);
                return Ok(true);
            }
            // count <= max_multibulk_len, a usize.
            let count = count as usize;
            sink.count(count);
            count
        }
    };

    while remaining > 0 {
        let line = buf.get(p.pos..).unwrap_or_default();
        let Some(cr) = header_end(line) else {
            if line.len() > limits.max_inline_len {
                return Err(ProtocolError::too_big_bulk_count());
            }
            p.remaining = Some(remaining);
            return Ok(false);
        };
        if line[0] != b'$' {
            return Err(ProtocolError::expected_dollar(line[0]));
        }
        let len = match string2ll(&line[1..cr]) {
            Some(n) if n >= 0 && n as u64 <= limits.proto_max_bulk_len as u64 => n,
            _ => return Err(ProtocolError::invalid_bulk_length()),
        };
        if len > UNAUTH_MAX_BULK_LEN && auth_required {
            return Err(ProtocolError::unauthenticated_bulk_length());
        }
        // len <= proto_max_bulk_len, a usize.
        let len = len as usize;
        let start = p.pos + cr + 2;
        // Payload plus two bytes that Redis skips without looking at them.
        if buf.len() - start < len.saturating_add(2) {
            // The header is re-read next time; it is one short line.
            p.remaining = Some(remaining);
            return Ok(false);
        }
        sink.arg(start, start + len);
        p.pos = start + len + 2;
        remaining -= 1;
    }
    p.remaining = Some(0);
    Ok(true)
}

/// Position of the `\r` ending the header line at the front of `line`, if the whole line is
/// there. Like Redis, the byte after `\r` only has to exist (it is assumed to be `\n`), and a
/// NUL before the `\r` means no line end yet. The result is at most `line.len() - 2`.
#[inline]
fn header_end(line: &[u8]) -> Option<usize> {
    let cr = find_or_nul(line, b'\r')?;
    (line[cr] == b'\r' && cr + 2 <= line.len()).then_some(cr)
}

/// Redis's `string2ll`: a strict decimal i64. Rejects the empty string, 21 bytes or more, a `+`
/// sign, leading zeros (other than "0" itself), "-0", spaces, and overflow.
pub(crate) fn string2ll(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() >= 21 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (negative, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    let (&first, rest) = digits.split_first()?;
    if !(b'1'..=b'9').contains(&first) {
        return None;
    }
    let mut v = u64::from(first - b'0');
    for &c in rest {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    if negative {
        // -(2^63) is the one magnitude that only fits negated.
        (v <= i64::MIN.unsigned_abs()).then(|| 0i64.wrapping_sub_unsigned(v))
    } else {
        i64::try_from(v).ok()
    }
}

/// An inline (telnet-style) request: one line, split like `sdssplitargs`.
fn decode_inline(buf: &mut BytesMut, limits: &Limits) -> Result<Option<Vec<Bytes>>, ProtocolError> {
    let newline = match find_or_nul(buf, b'\n') {
        Some(i) if buf[i] == b'\n' => i,
        _ => {
            if buf.len() > limits.max_inline_len {
                return Err(ProtocolError::too_big_inline_request());
            }
            return Ok(None);
        }
    };
    let line_len = if newline > 0 && buf[newline - 1] == b'\r' {
        newline - 1
    } else {
        newline
    };
    let tokens = split_args(&buf[..line_len]).ok_or_else(ProtocolError::unbalanced_quotes)?;
    let line = buf.split_to(newline + 1).freeze();
    Ok(Some(
        tokens
            .into_iter()
            .map(|t| match t {
                Token::Slice(start, end) => line.slice(start..end),
                Token::Owned(v) => Bytes::from(v),
            })
            .collect(),
    ))
}

/// One inline argument: a plain run of the line, or bytes rebuilt because of quotes or escapes.
enum Token {
    Slice(usize, usize),
    Owned(Vec<u8>),
}

/// Accumulates one argument, staying a slice of the line for as long as possible.
struct TokenBuilder<'a> {
    line: &'a [u8],
    start: usize,
    end: usize,
    owned: Option<Vec<u8>>,
}

impl<'a> TokenBuilder<'a> {
    fn new(line: &'a [u8]) -> Self {
        TokenBuilder {
            line,
            start: 0,
            end: 0,
            owned: None,
        }
    }

    /// Appends `line[at]` as is.
    fn push_from_line(&mut self, at: usize) {
        match &mut self.owned {
            Some(v) => v.push(self.line[at]),
            None if self.start == self.end => {
                self.start = at;
                self.end = at + 1;
            }
            None if self.end == at => self.end += 1,
            None => {
                let mut v = self.line[self.start..self.end].to_vec();
                v.push(self.line[at]);
                self.owned = Some(v);
            }
        }
    }

    /// Appends a byte that is not in the line (an unescaped character).
    fn push_byte(&mut self, byte: u8) {
        let (line, start, end) = (self.line, self.start, self.end);
        self.owned
            .get_or_insert_with(|| line[start..end].to_vec())
            .push(byte);
    }

    fn finish(self) -> Token {
        match self.owned {
            Some(v) => Token::Owned(v),
            None => Token::Slice(self.start, self.end),
        }
    }
}

/// C `isspace` in the "C" locale.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Redis's `sdssplitargs`; `None` for unbalanced quotes (or a closing quote followed by
/// something other than a space). The rules, which differ in small ways worth keeping:
///
/// * blanks between arguments are any C `isspace` byte, but an unquoted argument ends only at
///   space, tab, CR or LF (so a vertical tab or form feed inside it is kept);
/// * quotes may start in the middle of an argument (`a"b c"` is `ab c`);
/// * in double quotes: `\xHH`, `\n \r \t \b \a`, and `\<c>` for any other c gives c;
/// * in single quotes only `\'` is an escape;
/// * a closing quote must be followed by a blank or the end of the line.
///
/// `line` contains no NUL (the line search stops at one), so "past the end" plays the part of
/// the C string's terminator.
fn split_args(line: &[u8]) -> Option<Vec<Token>> {
    let at = |i: usize| line.get(i).copied().unwrap_or(0);
    let mut tokens = Vec::new();
    let mut p = 0;
    loop {
        while p < line.len() && is_space(line[p]) {
            p += 1;
        }
        if p >= line.len() {
            return Some(tokens);
        }
        let mut token = TokenBuilder::new(line);
        let mut in_double = false;
        let mut in_single = false;
        loop {
            let c = at(p);
            if in_double {
                if c == b'\\' && at(p + 1) == b'x' {
                    if let (Some(hi), Some(lo)) = (hex_value(at(p + 2)), hex_value(at(p + 3))) {
                        token.push_byte(hi * 16 + lo);
                        p += 4;
                        continue;
                    }
                }
                if c == b'\\' && at(p + 1) != 0 {
                    p += 1;
                    token.push_byte(match line[p] {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 0x08,
                        b'a' => 0x07,
                        other => other,
                    });
                } else if c == b'"' {
                    if at(p + 1) != 0 && !is_space(at(p + 1)) {
                        return None;
                    }
                    p += 1;
                    break;
                } else if c == 0 {
                    return None;
                } else {
                    token.push_from_line(p);
                }
            } else if in_single {
                if c == b'\\' && at(p + 1) == b'\'' {
                    p += 1;
                    token.push_byte(b'\'');
                } else if c == b'\'' {
                    if at(p + 1) != 0 && !is_space(at(p + 1)) {
                        return None;
                    }
                    p += 1;
                    break;
                } else if c == 0 {
                    return None;
                } else {
                    token.push_from_line(p);
                }
            } else {
                match c {
                    b' ' | b'\n' | b'\r' | b'\t' | 0 => {
                        p += 1;
                        break;
                    }
                    b'"' => in_double = true,
                    b'\'' => in_single = true,
                    _ => token.push_from_line(p),
                }
            }
            p += 1;
        }
        tokens.push(token.finish());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits::default()
    }

    fn decode(input: &[u8]) -> Result<Option<Vec<Bytes>>, ProtocolError> {
        let mut buf = BytesMut::from(input);
        decode_request(&mut buf, &limits())
    }

    fn args(list: &[&[u8]]) -> Vec<Bytes> {
        list.iter().map(|a| Bytes::copy_from_slice(a)).collect()
    }

    fn err(msg: &str) -> Result<Option<Vec<Bytes>>, ProtocolError> {
        Err(ProtocolError(msg.to_owned()))
    }

    #[test]
    fn string2ll_matches_redis() {
        let cases: &[(&str, Option<i64>)] = &[
            ("0", Some(0)),
            ("1", Some(1)),
            ("-1", Some(-1)),
            ("123", Some(123)),
            ("9223372036854775807", Some(i64::MAX)),
            ("-9223372036854775808", Some(i64::MIN)),
            ("9223372036854775808", None),
            ("-9223372036854775809", None),
            ("18446744073709551616", None),
            ("00000000000000000001", None),
            ("", None),
            ("-", None),
            ("-0", None),
            ("00", None),
            ("05", None),
            ("+5", None),
            (" 5", None),
            ("5 ", None),
            ("1a", None),
            ("1.0", None),
            ("--1", None),
        ];
        for &(s, want) in cases {
            assert_eq!(string2ll(s.as_bytes()), want, "{s:?}");
        }
    }

    #[test]
    fn multibulk_basic() {
        let mut buf = BytesMut::from(&b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"[..]);
        let got = decode_request(&mut buf, &limits()).unwrap();
        assert_eq!(got, Some(args(&[b"GET", b"k"])));
        assert!(buf.is_empty());
        assert_eq!(decode(b"*1\r\n$0\r\n\r\n"), Ok(Some(args(&[b""]))));
        let binary = b"*1\r\n$4\r\n\x00\r\n\xff\r\n";
        assert_eq!(decode(binary), Ok(Some(args(&[b"\x00\r\n\xff"]))));
    }

    #[test]
    fn empty_commands() {
        for input in [
            &b"\r\n"[..],
            b"\n",
            b"   \r\n",
            b" \t \x0b\x0c\n",
            b"*0\r\n",
            b"*-1\r\n",
            b"*-100\r\n",
        ] {
            let mut buf = BytesMut::from(input);
            assert_eq!(
                decode_request(&mut buf, &limits()),
                Ok(Some(vec![])),
                "{input:?}"
            );
            assert!(buf.is_empty(), "{input:?} left {buf:?}");
        }
        assert_eq!(decode(b""), Ok(None));
    }

    #[test]
    fn multibulk_errors() {
        let cases: &[(&[u8], &str)] = &[
            (b"*abc\r\n", "invalid multibulk length"),
            (b"*\r\n", "invalid multibulk length"),
            (b"*+1\r\n", "invalid multibulk length"),
            (b"*01\r\n", "invalid multibulk length"),
            (b"* 1\r\n", "invalid multibulk length"),
            (b"*1 \r\n", "invalid multibulk length"),
            (b"*2147483648\r\n", "invalid multibulk length"),
            (b"*3000000000\r\n", "invalid multibulk length"),
            (b"*99999999999999999999\r\n", "invalid multibulk length"),
            // The count line runs to the first '\r', wherever it is.
            (b"*1\n$3\r\nfoo\r\n", "invalid multibulk length"),
            (b"*1\r\n+foo\r\n", "expected '$', got '+'"),
            (
                b"*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfooz\r\n",
                "expected '$', got 'f'",
            ),
            (b"*1\r\n\r\n", "expected '$', got ' '"),
            (b"*1\r\n\n\r\n", "expected '$', got ' '"),
            (b"*1\r\n*1\r\n", "expected '$', got '*'"),
            (b"*1\r\n$-1\r\n", "invalid bulk length"),
            (b"*1\r\n$+3\r\n", "invalid bulk length"),
            (b"*1\r\n$03\r\n", "invalid bulk length"),
            (b"*1\r\n$\r\n", "invalid bulk length"),
            (b"*1\r\n$ 3\r\n", "invalid bulk length"),
            (b"*1\r\n$3 \r\n", "invalid bulk length"),
            (b"*1\r\n$x\r\n", "invalid bulk length"),
            (b"*1\r\n$-0\r\n", "invalid bulk length"),
            (b"*1\r\n$536870913\r\n", "invalid bulk length"),
            (b"*1\r\n$9223372036854775808\r\n", "invalid bulk length"),
            (b"*2\r\n$1\r\na\r\n$1x\r\n", "invalid bulk length"),
        ];
        for &(input, msg) in cases {
            assert_eq!(
                decode(input),
                err(msg),
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn high_byte_after_count_is_echoed_raw() {
        let e = decode(b"*1\r\n\xe9\r\n").unwrap_err();
        assert_eq!(e.0, "expected '$', got '\u{e9}'");
        assert_eq!(
            e.to_frame(),
            crate::Frame::Error(Bytes::from_static(
                b"ERR Protocol error: expected '$', got '\xe9'"
            ))
        );
    }

    #[test]
    fn largest_bulk_is_accepted() {
        // Exactly proto_max_bulk_len is fine; the payload just hasn't arrived.
        assert_eq!(decode(b"*1\r\n$536870912\r\n"), Ok(None));
        let small = Limits {
            proto_max_bulk_len: 3,
            ..Limits::default()
        };
        let mut buf = BytesMut::from(&b"*1\r\n$3\r\nfoo\r\n"[..]);
        assert_eq!(decode_request(&mut buf, &small), Ok(Some(args(&[b"foo"]))));
        let mut buf = BytesMut::from(&b"*1\r\n$4\r\nfood\r\n"[..]);
        assert_eq!(decode_request(&mut buf, &small), err("invalid bulk length"));
    }

    #[test]
    fn multibulk_count_limit() {
        // Redis 7.0 allows up to INT_MAX arguments.
        assert_eq!(decode(b"*2147483647\r\n"), Ok(None));
        assert_eq!(decode(b"*1048577\r\n"), Ok(None));
        let old = Limits {
            max_multibulk_len: 1024 * 1024,
            ..Limits::default()
        };
        let mut buf = BytesMut::from(&b"*1048577\r\n"[..]);
        assert_eq!(
            decode_request(&mut buf, &old),
            err("invalid multibulk length")
        );
        let mut buf = BytesMut::from(&b"*1048576\r\n"[..]);
        assert_eq!(decode_request(&mut buf, &old), Ok(None));
    }

    #[test]
    fn too_big_lines() {
        let max = limits().max_inline_len;
        let mut count = b"*".to_vec();
        count.resize(max, b'1');
        assert_eq!(decode(&count), Ok(None));
        count.push(b'1');
        assert_eq!(decode(&count), err("too big mbulk count string"));

        let mut header = b"*1\r\n$".to_vec();
        header.resize(4 + max, b'1');
        assert_eq!(decode(&header), Ok(None));
        header.push(b'1');
        assert_eq!(decode(&header), err("too big bulk count string"));

        let mut inline = vec![b'a'; max];
        assert_eq!(decode(&inline), Ok(None));
        inline.push(b'a');
        assert_eq!(decode(&inline), err("too big inline request"));

        // Redis compares the whole unread buffer, so a line end past 64 KiB still counts.
        let mut long = vec![b'a'; max + 10];
        long.extend_from_slice(b"\r\n");
        let got = decode(&long).unwrap().unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].len(), max + 10);
    }

    #[test]
    fn nul_hides_line_end() {
        // strchr stops at NUL: Redis keeps waiting, until the buffer is too big.
        assert_eq!(decode(b"*1\x00\r\n$1\r\na\r\n"), Ok(None));
        assert_eq!(decode(b"*1\r\n$1\x00\r\na\r\n"), Ok(None));
        assert_eq!(decode(b"PI\x00NG\r\n"), Ok(None));
        let mut big = b"PING\x00".to_vec();
        big.resize(70_000, b'\n');
        assert_eq!(decode(&big), err("too big inline request"));
        let mut big = b"*1\r\n$1\x00\r\n".to_vec();
        big.resize(70_000, b'\r');
        assert_eq!(decode(&big), err("too big bulk count string"));
        // A NUL inside a payload is just data.
        assert_eq!(decode(b"*1\r\n$1\r\n\x00\r\n"), Ok(Some(args(&[b"\x00"]))));
    }

    #[test]
    fn bytes_after_cr_and_payload_are_not_checked() {
        let mut buf = BytesMut::from(&b"*1\rX$3\r\nfooXY+"[..]);
        assert_eq!(
            decode_request(&mut buf, &limits()),
            Ok(Some(args(&[b"foo"])))
        );
        assert_eq!(&buf[..], b"+");
        assert_eq!(decode(b"*1\r\n$3\rYfoo\r\n"), Ok(Some(args(&[b"foo"]))));
        // The byte after '\r' must exist, though.
        assert_eq!(decode(b"*1\r"), Ok(None));
        assert_eq!(decode(b"*1\r\n$3\r"), Ok(None));
        // And '$' is only checked once the header line is complete.
        assert_eq!(decode(b"*1\r\nfoo"), Ok(None));
    }

    #[test]
    fn inline_splitting() {
        let cases: &[(&[u8], &[&[u8]])] = &[
            (b"PING\r\n", &[b"PING"]),
            (b"PING\n", &[b"PING"]),
            (b"  set  k   v  \r\n", &[b"set", b"k", b"v"]),
            (
                b"set \"a b\" 'c\\'d' \"\\x41\"\r\n",
                &[b"set", b"a b", b"c'd", b"A"],
            ),
            (
                b"\"\\n\\r\\t\\b\\a\\\\\\\"\\q\"\n",
                &[b"\n\r\t\x08\x07\\\"q"],
            ),
            (b"\"\\x4g\" \"\\xZZ\" \"\\x\"\n", &[b"x4g", b"xZZ", b"x"]),
            (b"\"\\xff\\x00\\xAb\"\n", &[b"\xff\x00\xab"]),
            (b"'a\\nb' 'x\\\\y'\n", &[b"a\\nb", b"x\\\\y"]),
            (b"a\"b c\" d\n", &[b"ab c", b"d"]),
            (b"a'b c'\n", &[b"ab c"]),
            (b"\"\" ''\n", &[b"", b""]),
            (b"a\tb\rc\n", &[b"a", b"b", b"c"]),
            (b"a\x0bb \x0cc\n", &[b"a\x0bb", b"c"]),
            (b"\"a\"\x0b'b'\x0c\n", &[b"a", b"b"]),
            (b"\xff\xfe x\n", &[b"\xff\xfe", b"x"]),
            (b"\"a\"\r\r\n", &[b"a"]),
        ];
        for &(input, want) in cases {
            assert_eq!(
                decode(input),
                Ok(Some(args(want))),
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn inline_errors() {
        let cases: &[&[u8]] = &[
            b"set \"a\r\n",
            b"set 'a\r\n",
            b"\"a\"b\r\n",
            b"'a'b\r\n",
            b"\"a\"\"\n",
            b"\"\\\"\n",
            b"'\\'\n",
            b"\"abc\\\n",
        ];
        for &input in cases {
            assert_eq!(
                decode(input),
                err("unbalanced quotes in request"),
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn pipelined_requests() {
        let input = b"PING\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n\r\nSET a \"b c\"\n*0\r\n*1\r\n$4\r\nECHO\r\n*2\r\n$1";
        let mut buf = BytesMut::from(&input[..]);
        let mut got = Vec::new();
        while let Some(req) = decode_request(&mut buf, &limits()).unwrap() {
            got.push(req);
        }
        assert_eq!(
            got,
            vec![
                args(&[b"PING"]),
                args(&[b"GET", b"k"]),
                vec![],
                args(&[b"SET", b"a", b"b c"]),
                vec![],
                args(&[b"ECHO"]),
            ]
        );
        assert_eq!(&buf[..], b"*2\r\n$1");
    }

    #[test]
    fn every_cut_of_a_valid_request_is_incomplete() {
        let requests: &[&[u8]] = &[
            b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n",
            b"*1\r\n$0\r\n\r\n",
            b"*0\r\n",
            b"*-1\r\n",
            b"PING\r\n",
            b"set \"a b\" 'c'\n",
            b"\r\n",
        ];
        for &req in requests {
            let full = decode(req).unwrap().unwrap();
            for cut in 0..req.len() {
                let mut buf = BytesMut::from(&req[..cut]);
                assert_eq!(
                    decode_request(&mut buf, &limits()),
                    Ok(None),
                    "{req:?} cut {cut}"
                );
                assert_eq!(&buf[..], &req[..cut]);
            }
            let mut dec = RequestDecoder::new(limits());
            let mut buf = BytesMut::new();
            for (i, &b) in req.iter().enumerate() {
                buf.extend_from_slice(&[b]);
                let got = dec.decode(&mut buf).unwrap();
                if i + 1 < req.len() {
                    assert_eq!(got, None);
                } else {
                    assert_eq!(got, Some(full.clone()));
                }
            }
        }
    }

    #[test]
    fn arguments_are_zero_copy() {
        let mut buf = BytesMut::from(&b"*2\r\n$3\r\nGET\r\n$5\r\nhello\r\nset k v\r\n"[..]);
        let range = buf.as_ptr_range();
        let inside = |b: &Bytes| range.contains(&b.as_ptr());
        let got = decode_request(&mut buf, &limits()).unwrap().unwrap();
        assert!(got.iter().all(inside));
        let got = decode_request(&mut buf, &limits()).unwrap().unwrap();
        assert_eq!(got, args(&[b"set", b"k", b"v"]));
        assert!(got.iter().all(inside));

        let mut dec = RequestDecoder::new(limits());
        let mut buf = BytesMut::from(&b"*1\r\n$3\r\nabc\r\n"[..]);
        let range = buf.as_ptr_range();
        let got = dec.decode(&mut buf).unwrap().unwrap();
        assert!(range.contains(&got[0].as_ptr()));
    }

    #[test]
    fn unauthenticated_limits() {
        let mut dec = RequestDecoder::new(limits());
        dec.set_auth_required(true);
        let mut buf = BytesMut::from(&b"*11\r\n"[..]);
        assert_eq!(
            dec.decode(&mut buf),
            err("unauthenticated multibulk length")
        );
        let mut buf = BytesMut::from(&b"*2\r\n$4\r\nAUTH\r\n$16385\r\n"[..]);
        assert_eq!(dec.decode(&mut buf), err("unauthenticated bulk length"));
        let mut buf = BytesMut::from(&b"*10\r\n$16384\r\n"[..]);
        assert_eq!(dec.decode(&mut buf), Ok(None));
        dec.set_auth_required(false);
        let mut buf = BytesMut::from(&b"*11\r\n"[..]);
        assert_eq!(dec.decode(&mut buf), Ok(None));
    }

    #[test]
    fn decoder_resumes_and_resets() {
        let mut dec = RequestDecoder::new(limits());
        let mut buf = BytesMut::from(&b"*3\r\n$3\r\nSET\r\n$1\r\n"[..]);
        assert_eq!(dec.decode(&mut buf), Ok(None));
        buf.extend_from_slice(b"k\r\n$2\r\nv");
        assert_eq!(dec.decode(&mut buf), Ok(None));
        buf.extend_from_slice(b"v\r\nPING\r\n");
        assert_eq!(dec.decode(&mut buf), Ok(Some(args(&[b"SET", b"k", b"vv"]))));
        assert_eq!(dec.decode(&mut buf), Ok(Some(args(&[b"PING"]))));
        assert_eq!(dec.decode(&mut buf), Ok(None));
        // Contract broken (buffer replaced by a shorter one): no panic, starts over.
        let mut buf = BytesMut::from(&b"*2\r\n$1\r\na\r\n$1\r\n"[..]);
        assert_eq!(dec.decode(&mut buf), Ok(None));
        let mut buf = BytesMut::from(&b"*1\r\n"[..]);
        assert_eq!(dec.decode(&mut buf), Ok(None));
        buf.extend_from_slice(b"$1\r\nz\r\n");
        assert_eq!(dec.decode(&mut buf), Ok(Some(args(&[b"z"]))));
        // After an error, the next request parses from scratch.
        let mut buf = BytesMut::from(&b"*1\r\n$x\r\n"[..]);
        assert!(dec.decode(&mut buf).is_err());
        let mut buf = BytesMut::from(&b"*1\r\n$1\r\ny\r\n"[..]);
        assert_eq!(dec.decode(&mut buf), Ok(Some(args(&[b"y"]))));
    }
}
