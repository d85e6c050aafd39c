//! RESP2/RESP3 codec for Relis, byte-compatible with Redis 7.0.
//!
//! The crate has three jobs, each in its own module:
//!
//! * [`decode_request`] (and its resumable twin [`RequestDecoder`]) turns the bytes a client sent
//!   into command arguments, reproducing Redis's `processMultibulkBuffer` /
//!   `processInlineBuffer` behaviour down to the error texts and quirks.
//! * [`encode`] writes a [`Frame`] for a connection speaking RESP2 or RESP3, downgrading RESP3-only
//!   types the way Redis 7.0 does.
//! * [`decode_frame`] parses any RESP2/RESP3 value; it is what a client (or a test) uses to read
//!   replies.
//!
//! Decoded payloads are zero-copy [`Bytes`] slices of the receive buffer. The crate depends on
//! nothing but `bytes`: no I/O, no runtime.
#![warn(missing_docs)]

pub use bytes::{Bytes, BytesMut};

mod double;
mod encode;
mod error;
mod frame;
mod request;
mod resp3;
mod scan;

pub use double::{format_double, format_double_into, DOUBLE_BUF_LEN};
pub use encode::{encode, put_bulk};
pub use error::ProtocolError;
pub use frame::{Frame, Protocol};
pub use request::{decode_request, Limits, RequestDecoder};
pub use resp3::decode_frame;
