//! The hash family. Replies have Redis 7.0's shapes: HGETALL is a RESP3 map (a flat array under
//! RESP2), HRANDFIELD ... WITHVALUES gives `[field, value]` pairs under RESP3, every other list is
//! an array. Fields come in the order Redis lists them: insertion order for a hash Redis would
//! hold as a listpack, field order for a hashtable (see the engine's `hash.rs`).

pub mod hdel;
pub mod hexists;
pub mod hget;
pub mod hgetall;
pub mod hincrby;
pub mod hincrbyfloat;
pub mod hlen;
pub mod hmget;
pub mod hrandfield;
pub mod hscan;
pub mod hset;
pub mod hsetnx;
pub mod hstrlen;

use crate::cmd::Spec;
use bytes::Bytes;
use resp::Frame;

/// The hash commands.
pub static SPECS: &[Spec] = &[
    hset::SPEC,
    hset::SPEC_HMSET,
    hsetnx::SPEC,
    hget::SPEC,
    hmget::SPEC,
    hdel::SPEC,
    hexists::SPEC,
    hlen::SPEC,
    hstrlen::SPEC,
    hgetall::SPEC_HKEYS,
    hgetall::SPEC_HVALS,
    hgetall::SPEC_HGETALL,
    hincrby::SPEC,
    hincrbyfloat::SPEC,
    hrandfield::SPEC,
    hscan::SPEC,
];

/// Bulk strings as an array.
fn array(items: Vec<Bytes>) -> Frame {
    Frame::Array(items.into_iter().map(Frame::Bulk).collect())
}

#[cfg(test)]
pub(crate) use crate::args::args_of;
