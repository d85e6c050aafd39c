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
