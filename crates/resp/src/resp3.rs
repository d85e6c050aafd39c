//! Client side: decoding any RESP2/RESP3 value.
//!
//! Unlike the request decoder this one is strict (CRLF is checked everywhere) and its error texts
//! are our own: Redis never parses replies, so there is nothing to match.

use bytes::{Bytes, BytesMut};

use crate::scan::find_byte;
use crate::{Frame, ProtocolError};

/// Aggregates nested deeper than this are refused: decoding, dropping and comparing frames all
/// recurse, and hostile input must not overflow the stack. Redis replies nest a handful of
/// levels at most.
const MAX_DEPTH: usize = 128;

/// Client side / general: decode one complete [`Frame`] of any RESP2/RESP3 type from the front
/// of `buf`.
///
/// Returns `Ok(Some(frame))` and removes its bytes from `buf`, or `Ok(None)` when the frame is
/// not complete yet (`buf` untouched). Payloads are zero-copy slices of the received bytes. Never
/// panics, whatever the bytes.
///
/// Mapping: `$-1` is [`Frame::Null`], `*-1` is [`Frame::NullArray`], and RESP3 `_` is
/// [`Frame::Null`]. An attribute (`|`) at the top level is returned as a
/// [`Frame::Attribute`] of its own (the value it decorates is the next frame); an attribute
/// inside an aggregate is skipped and does not count as an element, as RESP3 specifies. RESP3
/// streamed strings and aggregates (`$?`, `*?`), which Redis never sends, are not supported.
///
/// # Errors
///
/// A [`ProtocolError`] describing the first malformed element: unknown type byte, bad length or
/// number, missing CRLF, or nesting deeper than 128 levels.
pub fn decode_frame(buf: &mut BytesMut) -> Result<Option<Frame>, ProtocolError> {
    // Pass one validates and finds the end without building anything; pass two builds the frame
    // from the frozen bytes so every payload can be a slice of them.
    let mut probe = Reader {
        buf,
        pos: 0,
        src: None,
    };
    if probe.frame(0)?.is_none() {
        return Ok(None);
    }
    let end = probe.pos;
    let frozen = buf.split_to(end).freeze();
    let mut reader = Reader {
        buf: &frozen,
        pos: 0,
        src: Some(&frozen),
    };
    match reader.frame(0) {
        Ok(Some(frame)) => Ok(Some(frame)),
        // Same bytes as pass one, so this is unreachable; report rather than panic.
        _ => Err(ProtocolError::new("internal decoder inconsistency")),
    }
}

/// Unwraps `Ok(Some(v))`, passing `Ok(None)` (incomplete) and errors up.
macro_rules! need {
    ($e:expr) => {
        match $e? {
            Some(v) => v,
            None => return Ok(None),
        }
    };
}

type Step<T> = Result<Option<T>, ProtocolError>;

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// The frozen buffer in the building pass; `None` while only measuring, when payloads are
    /// left empty and aggregates are not collected.
    src: Option<&'a Bytes>,
}

fn invalid(what: &str) -> ProtocolError {
    ProtocolError(what.to_owned())
}

impl<'a> Reader<'a> {
    fn building(&self) -> bool {
        self.src.is_some()
    }

    fn bytes(&self, start: usize, end: usize) -> Bytes {
        self.src.map_or_else(Bytes::new, |b| b.slice(start..end))
    }

    /// The rest of the current line (up to CRLF), as a range; moves past the CRLF.
    fn line(&mut self) -> Step<(usize, usize)> {
        let rest = self.buf.get(self.pos..).unwrap_or_default();
        let Some(cr) = find_byte(rest, b'\r') else {
            return Ok(None);
        };
        match rest.get(cr + 1) {
            None => Ok(None),
            Some(b'\n') => {
                let range = (self.pos, self.pos + cr);
                self.pos += cr + 2;
                Ok(Some(range))
            }
            Some(_) => Err(invalid("expected CRLF after line")),
        }
    }

    fn line_bytes(&mut self) -> Step<&'a [u8]> {
        let (start, end) = need!(self.line());
        Ok(Some(&self.buf[start..end]))
    }

    fn integer_line(&mut self, what: &str) -> Step<i64> {
        let text = need!(self.line_bytes());
        parse_i64(text).map(Some).ok_or_else(|| invalid(what))
    }

    /// A length or count: non-negative, and -1 (null) only if `allow_null`.
    fn length(&mut self, allow_null: bool, what: &str) -> Step<Option<usize>> {
        let n = need!(self.integer_line(what));
        if n == -1 && allow_null {
            return Ok(Some(None));
        }
        usize::try_from(n)
            .map(|n| Some(Some(n)))
            .map_err(|_| invalid(what))
    }

    /// `len` payload bytes followed by CRLF, as a range.
    fn blob(&mut self, len: usize) -> Step<(usize, usize)> {
        let start = self.pos;
        let available = self.buf.len() - start;
        if available < len.saturating_add(2) {
            return Ok(None);
        }
        let end = start + len;
        if &self.buf[end..end + 2] != b"\r\n" {
            return Err(invalid("expected CRLF after bulk payload"));
        }
        self.pos = end + 2;
        Ok(Some((start, end)))
    }

    fn frame(&mut self, depth: usize) -> Step<Frame> {
        let Some(&kind) = self.buf.get(self.pos) else {
            return Ok(None);
        };
        self.pos += 1;
        let frame = match kind {
            b'+' => {
                let (s, e) = need!(self.line());
                Frame::Simple(self.bytes(s, e))
            }
            b'-' => {
                let (s, e) = need!(self.line());
                Frame::Error(self.bytes(s, e))
            }
            b':' => Frame::Integer(need!(self.integer_line("invalid integer"))),
            b'$' => match need!(self.length(true, "invalid bulk length")) {
                None => Frame::Null,
                Some(len) => {
                    let (s, e) = need!(self.blob(len));
                    Frame::Bulk(self.bytes(s, e))
                }
            },
            b'!' => {
                let len = need!(self.length(false, "invalid bulk error length")).unwrap_or(0);
                let (s, e) = need!(self.blob(len));
                Frame::BulkError(self.bytes(s, e))
            }
            b'=' => {
                let len = need!(self.length(false, "invalid verbatim length")).unwrap_or(0);
                let (s, e) = need!(self.blob(len));
                if e - s < 4 || self.buf[s + 3] != b':' {
                    return Err(invalid("invalid verbatim string"));
                }
                let mut format = [0u8; 3];
                format.copy_from_slice(&self.buf[s..s + 3]);
                Frame::Verbatim {
                    format,
                    data: self.bytes(s + 4, e),
                }
            }
            b'_' => {
                if !need!(self.line_bytes()).is_empty() {
                    return Err(invalid("invalid null"));
                }
                Frame::Null
            }
            b'#' => match need!(self.line_bytes()) {
                b"t" => Frame::Boolean(true),
                b"f" => Frame::Boolean(false),
                _ => return Err(invalid("invalid boolean")),
            },
            b',' => {
                let text = need!(self.line_bytes());
                let d = std::str::from_utf8(text)
                    .ok()
                    .and_then(|t| t.parse::<f64>().ok())
                    .ok_or_else(|| invalid("invalid double"))?;
                Frame::Double(d)
            }
            b'(' => {
                let (s, e) = need!(self.line());
                if !is_big_number(&self.buf[s..e]) {
                    return Err(invalid("invalid big number"));
                }
                Frame::BigNumber(self.bytes(s, e))
            }
            b'*' => match need!(self.length(true, "invalid multibulk length")) {
                None => Frame::NullArray,
                Some(n) => Frame::Array(need!(self.elements(n, depth))),
            },
            b'~' => {
                let n = need!(self.length(false, "invalid set length")).unwrap_or(0);
                Frame::Set(need!(self.elements(n, depth)))
            }
            b'>' => {
                let n = need!(self.length(false, "invalid push length")).unwrap_or(0);
                Frame::Push(need!(self.elements(n, depth)))
            }
            b'%' => {
                let n = need!(self.length(false, "invalid map length")).unwrap_or(0);
                Frame::Map(need!(self.pairs(n, depth)))
            }
            b'|' => {
                let n = need!(self.length(false, "invalid attribute length")).unwrap_or(0);
                Frame::Attribute(need!(self.pairs(n, depth)))
            }
            other => {
                return Err(ProtocolError(format!(
                    "invalid frame type byte '{}'",
                    char::from(other).escape_default()
                )))
            }
        };
        Ok(Some(frame))
    }

    /// Capacity to reserve for `n` announced elements: never more than the bytes present could
    /// hold (3 bytes each at least), so a huge count cannot allocate before data arrives.
    fn capacity(&self, n: usize) -> usize {
        if self.building() {
            n.min((self.buf.len() - self.pos) / 3)
        } else {
            0
        }
    }

    fn nested(&self, depth: usize) -> Result<usize, ProtocolError> {
        if depth >= MAX_DEPTH {
            return Err(invalid("too many nested aggregates"));
        }
        Ok(depth + 1)
    }

    fn elements(&mut self, n: usize, depth: usize) -> Step<Vec<Frame>> {
        let depth = self.nested(depth)?;
        let mut items = Vec::with_capacity(self.capacity(n));
        for _ in 0..n {
            let item = need!(self.element(depth));
            if self.building() {
                items.push(item);
            }
        }
        Ok(Some(items))
    }

    fn pairs(&mut self, n: usize, depth: usize) -> Step<Vec<(Frame, Frame)>> {
        let depth = self.nested(depth)?;
        let mut pairs = Vec::with_capacity(self.capacity(n) / 2);
        for _ in 0..n {
            let key = need!(self.element(depth));
            let value = need!(self.element(depth));
            if self.building() {
                pairs.push((key, value));
            }
        }
        Ok(Some(pairs))
    }

    /// One element of an aggregate. Attributes in front of it decorate it and are not elements
    /// themselves; `Frame` has nowhere to attach them, so they are dropped.
    fn element(&mut self, depth: usize) -> Step<Frame> {
        while self.buf.get(self.pos) == Some(&b'|') {
            need!(self.frame(depth));
        }
        self.frame(depth)
    }
}

/// A decimal integer with an optional sign; RESP3 allows `+`, and replies are not parsed as
/// strictly as requests.
fn parse_i64(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text.split_first()? {
        (b'-', rest) => (true, rest),
        (b'+', rest) => (false, rest),
        _ => (false, text),
    };
    if digits.is_empty() {
        return None;
    }
    let mut v: i64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        let d = i64::from(c - b'0');
        // Accumulate negatively so i64::MIN fits.
        v = v.checked_mul(10)?;
        v = if negative {
            v.checked_sub(d)?
        } else {
            v.checked_add(d)?
        };
    }
    Some(v)
}

fn is_big_number(text: &[u8]) -> bool {
    let digits = match text.split_first() {
        Some((b'-' | b'+', rest)) => rest,
        _ => text,
    };
    !digits.is_empty() && digits.iter().all(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &'static str) -> Bytes {
        Bytes::from_static(s.as_bytes())
    }

    fn decode(input: &[u8]) -> Result<Option<Frame>, ProtocolError> {
        let mut buf = BytesMut::from(input);
        let got = decode_frame(&mut buf);
        if let Ok(Some(_)) = got {
            assert!(buf.is_empty(), "{input:?} left {buf:?}");
        } else {
            assert_eq!(&buf[..], input, "buffer changed");
        }
        got
    }

    #[test]
    fn every_type() {
        let cases: Vec<(&[u8], Frame)> = vec![
            (b"+OK\r\n", Frame::ok()),
            (b"+\r\n", Frame::Simple(Bytes::new())),
            (b"-ERR x y\r\n", Frame::error("ERR x y")),
            (b":0\r\n", Frame::Integer(0)),
            (b":-12\r\n", Frame::Integer(-12)),
            (b":+12\r\n", Frame::Integer(12)),
            (b":9223372036854775807\r\n", Frame::Integer(i64::MAX)),
            (b":-9223372036854775808\r\n", Frame::Integer(i64::MIN)),
            (b"$3\r\nfoo\r\n", Frame::bulk("foo")),
            (b"$0\r\n\r\n", Frame::bulk("")),
            (b"$4\r\na\r\nb\r\n", Frame::bulk("a\r\nb")),
            (b"$-1\r\n", Frame::Null),
            (b"*-1\r\n", Frame::NullArray),
            (b"_\r\n", Frame::Null),
            (b"*0\r\n", Frame::Array(vec![])),
            (
                b"*2\r\n:1\r\n$1\r\nx\r\n",
                Frame::Array(vec![Frame::Integer(1), Frame::bulk("x")]),
            ),
            (b",1.5\r\n", Frame::Double(1.5)),
            (b",0.10000000000000001\r\n", Frame::Double(0.1)),
            (b",1e+20\r\n", Frame::Double(1e20)),
            (b",inf\r\n", Frame::Double(f64::INFINITY)),
            (b",-inf\r\n", Frame::Double(f64::NEG_INFINITY)),
            (b"#t\r\n", Frame::Boolean(true)),
            (b"#f\r\n", Frame::Boolean(false)),
            (
                b"(-123456789012345678901234567890\r\n",
                Frame::BigNumber(b("-123456789012345678901234567890")),
            ),
            (
                b"=15\r\ntxt:Some string\r\n",
                Frame::Verbatim {
                    format: *b"txt",
                    data: b("Some string"),
                },
            ),
            (
                b"=4\r\nmkd:\r\n",
                Frame::Verbatim {
                    format: *b"mkd",
                    data: Bytes::new(),
                },
            ),
            (b"!5\r\nERR x\r\n", Frame::BulkError(b("ERR x"))),
            (
                b"%1\r\n+k\r\n:1\r\n",
                Frame::Map(vec![(Frame::simple("k"), Frame::Integer(1))]),
            ),
            (b"~1\r\n#t\r\n", Frame::Set(vec![Frame::Boolean(true)])),
            (b">1\r\n+m\r\n", Frame::Push(vec![Frame::simple("m")])),
            (
                b"|1\r\n+ttl\r\n:3\r\n",
                Frame::Attribute(vec![(Frame::simple("ttl"), Frame::Integer(3))]),
            ),
            // Inside an aggregate an attribute decorates the next element and is not counted.
            (
                b"*2\r\n|1\r\n+a\r\n,0.5\r\n:1\r\n|1\r\n+b\r\n_\r\n:2\r\n",
                Frame::Array(vec![Frame::Integer(1), Frame::Integer(2)]),
            ),
        ];
        for (input, want) in cases {
            assert_eq!(
                decode(input),
                Ok(Some(want)),
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
        let Ok(Some(Frame::Double(nan))) = decode(b",nan\r\n") else {
            panic!("nan did not decode");
        };
        assert!(nan.is_nan());
    }

    #[test]
    fn errors() {
        let cases: &[&[u8]] = &[
            b"?\r\n",
            b"\r\n",
            b"+OK\rX",
            b":\r\n",
            b":-\r\n",
            b":1x\r\n",
            b":9223372036854775808\r\n",
            b"$-2\r\n",
            b"$x\r\n",
            b"$3\r\nfooXY",
            b"*-2\r\n",
            b"%-1\r\n",
            b"~-1\r\n",
            b"_x\r\n",
            b"#x\r\n",
            b"#\r\n",
            b",\r\n",
            b",1.5x\r\n",
            b"(\r\n",
            b"(12a\r\n",
            b"=3\r\ntxt\r\n",
            b"=5\r\ntxt-x\r\n",
            b"!-1\r\n",
            b"*2\r\n:1\r\n?\r\n",
        ];
        for &input in cases {
            assert!(
                decode(input).is_err(),
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn every_cut_is_incomplete() {
        let input = b"*3\r\n%1\r\n+k\r\n=6\r\ntxt:ab\r\n|1\r\n+a\r\n#t\r\n,2.5\r\n$3\r\nabc\r\n";
        let full = decode(input).unwrap().unwrap();
        for cut in 0..input.len() {
            assert_eq!(decode(&input[..cut]), Ok(None), "cut {cut}");
        }
        let mut buf = BytesMut::from(&input[..]);
        buf.extend_from_slice(b":1\r\n");
        assert_eq!(decode_frame(&mut buf), Ok(Some(full)));
        assert_eq!(decode_frame(&mut buf), Ok(Some(Frame::Integer(1))));
        assert_eq!(decode_frame(&mut buf), Ok(None));
    }

    #[test]
    fn payloads_are_zero_copy() {
        let mut buf = BytesMut::from(&b"*2\r\n$5\r\nhello\r\n+world\r\n"[..]);
        let range = buf.as_ptr_range();
        let Ok(Some(Frame::Array(items))) = decode_frame(&mut buf) else {
            panic!("not an array");
        };
        for item in items {
            let (Frame::Bulk(p) | Frame::Simple(p)) = item else {
                panic!("unexpected {item:?}");
            };
            assert!(range.contains(&p.as_ptr()));
        }
    }

    #[test]
    fn huge_counts_do_not_allocate_up_front() {
        assert_eq!(decode(b"*9223372036854775807\r\n:1\r\n"), Ok(None));
        assert_eq!(decode(b"%9223372036854775807\r\n:1\r\n"), Ok(None));
        assert_eq!(decode(b"$9223372036854775807\r\nabc"), Ok(None));
    }

    #[test]
    fn nesting_is_bounded() {
        let mut deep = Vec::new();
        for _ in 0..MAX_DEPTH {
            deep.extend_from_slice(b"*1\r\n");
        }
        deep.extend_from_slice(b":1\r\n");
        assert!(matches!(decode(&deep), Ok(Some(Frame::Array(_)))));
        let mut deeper = b"*1\r\n".to_vec();
        deeper.extend_from_slice(&deep);
        assert_eq!(decode(&deeper), Err(invalid("too many nested aggregates")));
        // Attributes nest too.
        let attrs = b"|1\r\n".repeat(100_000);
        assert!(decode(&attrs).is_err());
    }
}
