//! The RESP value type.

use bytes::Bytes;

/// Protocol version of a connection.
///
/// Every connection starts in RESP2; `HELLO 3` switches it to RESP3. The version only changes how
/// replies are encoded (see [`encode`](crate::encode)); requests look the same in both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// RESP2, the default protocol.
    Resp2,
    /// RESP3, negotiated with `HELLO 3`.
    Resp3,
}

/// A RESP value (reply or request).
///
/// The variants follow RESP3. Encoding for a RESP2 connection downgrades the RESP3-only ones as
/// Redis 7.0 does; each variant says how.
#[derive(Clone, Debug, PartialEq)]
pub enum Frame {
    /// Simple string, `+OK`. Must not contain CR or LF; [`encode`](crate::encode) turns them
    /// into spaces rather than emit a broken reply.
    Simple(Bytes),
    /// Simple error, `-ERR ...`: the text without the `-` and the CRLF, starting with the error
    /// code (`ERR`, `WRONGTYPE`, ...). CR and LF become spaces when encoded, as in Redis's
    /// `addReplyErrorFormat`.
    Error(Bytes),
    /// Integer, `:1`.
    Integer(i64),
    /// Bulk string, `$3\r\nfoo`.
    Bulk(Bytes),
    /// Null bulk string: RESP2 `$-1\r\n`, RESP3 `_\r\n`.
    Null,
    /// Null array: RESP2 `*-1\r\n`, RESP3 `_\r\n`.
    NullArray,
    /// Array, `*<n>` followed by n values.
    Array(Vec<Frame>),
    /// RESP3 double, `,1.5`; RESP2 sends it as a bulk string. Formatted with
    /// [`format_double`](crate::format_double).
    Double(f64),
    /// A double already formatted, for replies whose text is not `%.17g` (Redis's
    /// `addReplyHumanLongDouble`, as GEOPOS sends coordinates): RESP3 `,<text>`, RESP2 a bulk
    /// string of the text.
    DoubleText(Bytes),
    /// RESP3 boolean, `#t` / `#f`; RESP2 sends integer 1 / 0.
    Boolean(bool),
    /// RESP3 big number, `(123`; RESP2 sends it as a bulk string.
    BigNumber(Bytes),
    /// RESP3 verbatim string, `=15\r\ntxt:Some string`; RESP2 sends a bulk string of `data` only.
    Verbatim {
        /// The three-byte format, such as `txt` or `mkd`.
        format: [u8; 3],
        /// The text, without the format prefix.
        data: Bytes,
    },
    /// RESP3 bulk error, `!<len>`; RESP2 sends it as a simple error `-...`.
    BulkError(Bytes),
    /// RESP3 map, `%<n>` followed by n key/value pairs; RESP2 sends a flat array
    /// `k1 v1 k2 v2 ...` of 2n values.
    Map(Vec<(Frame, Frame)>),
    /// RESP3 set, `~<n>`; RESP2 sends an array.
    Set(Vec<Frame>),
    /// RESP3 push (out-of-band data such as pub/sub messages), `><n>`; RESP2 sends an array.
    Push(Vec<Frame>),
    /// RESP3 attribute, `|<n>` followed by n key/value pairs, which decorates the value after it
    /// (at the top level, the next frame; in an aggregate, the next element, and it does not
    /// count as an element). RESP2 has no equivalent, so nothing at all is encoded.
    Attribute(Vec<(Frame, Frame)>),
    /// An array of `len` bulk strings already encoded one after the other in `items` (with
    /// [`put_bulk`](crate::put_bulk)): a bulk string is the same in RESP2 and RESP3, so the
    /// encoder writes `*<len>` and copies `items`. Made by commands whose replies are long
    /// arrays read straight from storage (LRANGE), which skips a frame and a reference count
    /// per element. [`Frame::into_plain`] turns it back into an [`Array`](Frame::Array).
    Bulks {
        /// How many bulk strings `items` holds.
        len: usize,
        /// The bulk strings, encoded.
        items: Bytes,
    },
}

impl Frame {
    /// A simple string reply, such as `Frame::simple("PONG")`.
    pub fn simple(s: &str) -> Frame {
        Frame::Simple(Bytes::copy_from_slice(s.as_bytes()))
    }

    /// A simple error reply. `s` is the whole text including the error code, for example
    /// `Frame::error("ERR syntax error")`; the `-` and CRLF are added by the encoder.
    pub fn error(s: impl Into<String>) -> Frame {
        // String -> Bytes reuses the allocation.
        Frame::Error(Bytes::from(s.into()))
    }

    /// A bulk string reply from anything convertible to [`Bytes`] (`Vec<u8>`, `String`,
    /// `&'static [u8]`, `&'static str`, `Bytes`, ...).
    pub fn bulk(b: impl Into<Bytes>) -> Frame {
        Frame::Bulk(b.into())
    }

    /// The `+OK` reply.
    pub fn ok() -> Frame {
        Frame::Simple(Bytes::from_static(b"OK"))
    }

    /// The frame with a [`Bulks`](Frame::Bulks) array turned into an [`Array`](Frame::Array) of
    /// [`Bulk`](Frame::Bulk) frames, for code that walks replies (scripts); any other frame as
    /// it is.
    pub fn into_plain(self) -> Frame {
        let Frame::Bulks { len, items } = self else {
            return self;
        };
        let mut out = Vec::with_capacity(len);
        let mut rest = &items[..];
        while let Some(body) = rest.strip_prefix(b"$") {
            let digits = body.iter().position(|&c| c == b'\r').unwrap_or(body.len());
            let n: usize = std::str::from_utf8(&body[..digits])
                .ok()
                .and_then(|d| d.parse().ok())
                .unwrap_or(0);
            let start = items.len() - body.len() + digits + 2;
            out.push(Frame::Bulk(items.slice(start..start + n)));
            rest = &items[start + n + 2..];
        }
        Frame::Array(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors() {
        assert_eq!(
            Frame::simple("PONG"),
            Frame::Simple(Bytes::from_static(b"PONG"))
        );
        assert_eq!(
            Frame::error("ERR syntax error"),
            Frame::Error(Bytes::from_static(b"ERR syntax error"))
        );
        assert_eq!(
            Frame::error(String::from("WRONGTYPE x")),
            Frame::Error(Bytes::from_static(b"WRONGTYPE x"))
        );
        assert_eq!(Frame::bulk("v"), Frame::Bulk(Bytes::from_static(b"v")));
        assert_eq!(
            Frame::bulk(vec![1u8, 2]),
            Frame::Bulk(Bytes::from_static(&[1, 2]))
        );
        assert_eq!(Frame::ok(), Frame::Simple(Bytes::from_static(b"OK")));
    }
}
