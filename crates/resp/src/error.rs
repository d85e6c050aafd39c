//! The protocol error type.

use std::fmt;

use bytes::Bytes;

use crate::Frame;

/// A protocol error: the server replies `-ERR Protocol error: <msg>` and closes the connection.
///
/// The field holds the part after `Protocol error: `, exactly as Redis words it for request
/// errors (for example `invalid bulk length`). [`Display`](fmt::Display) prints
/// `Protocol error: <msg>`.
///
/// Redis echoes one raw byte in `expected '$', got '<c>'`. A `String` cannot hold a lone byte
/// above 0x7f, so such a byte is stored as the char with the same value (Latin-1);
/// [`to_frame`](ProtocolError::to_frame) turns it back into the raw byte.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtocolError(pub String);

impl ProtocolError {
    pub(crate) fn new(msg: &str) -> ProtocolError {
        ProtocolError(msg.to_owned())
    }

    // The request errors, in Redis's words (`processMultibulkBuffer`, `processInlineBuffer`).

    /// A multibulk count line longer than 64 KiB.
    pub(crate) fn too_big_mbulk_count() -> ProtocolError {
        ProtocolError::new("too big mbulk count string")
    }

    /// A multibulk count that is not a number or is past the limit.
    pub(crate) fn invalid_multibulk_length() -> ProtocolError {
        ProtocolError::new("invalid multibulk length")
    }

    /// A large multibulk count before authentication.
    pub(crate) fn unauthenticated_multibulk_length() -> ProtocolError {
        ProtocolError::new("unauthenticated multibulk length")
    }

    /// A bulk length line longer than 64 KiB.
    pub(crate) fn too_big_bulk_count() -> ProtocolError {
        ProtocolError::new("too big bulk count string")
    }

    /// A bulk length that is not a number or is past `proto-max-bulk-len`.
    pub(crate) fn invalid_bulk_length() -> ProtocolError {
        ProtocolError::new("invalid bulk length")
    }

    /// A large bulk length before authentication.
    pub(crate) fn unauthenticated_bulk_length() -> ProtocolError {
        ProtocolError::new("unauthenticated bulk length")
    }

    /// A multibulk element that does not start with `$`: Redis formats the raw byte with `%c`
    /// and then turns CR and LF into spaces (`addReplyErrorFormat`); NUL cannot occur because
    /// the line search stops at it. A byte above 0x7f is kept as the Latin-1 char of the same
    /// value.
    pub(crate) fn expected_dollar(byte: u8) -> ProtocolError {
        let shown = match byte {
            b'\r' | b'\n' => ' ',
            b => char::from(b),
        };
        ProtocolError(format!("expected '$', got '{shown}'"))
    }

    /// An inline request line longer than 64 KiB.
    pub(crate) fn too_big_inline_request() -> ProtocolError {
        ProtocolError::new("too big inline request")
    }

    /// An inline request with an unclosed quote.
    pub(crate) fn unbalanced_quotes() -> ProtocolError {
        ProtocolError::new("unbalanced quotes in request")
    }

    /// The error reply Redis sends before closing: `ERR Protocol error: <msg>`, with the message
    /// bytes exactly as Redis would write them.
    pub fn to_frame(&self) -> Frame {
        let mut out = Vec::with_capacity(20 + self.0.len());
        out.extend_from_slice(b"ERR Protocol error: ");
        for c in self.0.chars() {
            match u8::try_from(u32::from(c)) {
                // Only our own messages land here: ASCII text plus at most one echoed byte, kept
                // as a Latin-1 char (see the type docs).
                Ok(b) => out.push(b),
                Err(_) => {
                    let mut tmp = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
                }
            }
        }
        Frame::Error(Bytes::from(out))
    }
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Protocol error: {}", self.0)
    }
}

impl std::error::Error for ProtocolError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_and_frame() {
        let e = ProtocolError::new("invalid bulk length");
        assert_eq!(e.to_string(), "Protocol error: invalid bulk length");
        assert_eq!(
            e.to_frame(),
            Frame::Error(Bytes::from_static(
                b"ERR Protocol error: invalid bulk length"
            ))
        );
    }

    #[test]
    fn echoed_high_byte_is_raw_in_the_frame() {
        let e = ProtocolError(format!("expected '$', got '{}'", char::from(0xe9u8)));
        assert_eq!(
            e.to_frame(),
            Frame::Error(Bytes::from_static(
                b"ERR Protocol error: expected '$', got '\xe9'"
            ))
        );
    }
}
