//! The set family. Commands reply with Redis 7.0's shapes: member lists are RESP3 sets (`~`)
//! where Redis uses them (SMEMBERS, SINTER, SUNION, SDIFF, SPOP with a count) and arrays where it
//! does not (SRANDMEMBER with a count may repeat members).

pub mod algebra;
pub mod sadd;
pub mod scard;
pub mod sintercard;
pub mod sismember;
pub mod smembers;
pub mod smove;
pub mod spop;
pub mod srandmember;
pub mod srem;
pub mod sscan;

use crate::cmd::Spec;
use bytes::Bytes;
use resp::Frame;

/// The set commands.
pub static SPECS: &[Spec] = &[
    sadd::SPEC,
    srem::SPEC,
    sismember::SPEC,
    sismember::SPEC_SMISMEMBER,
    smembers::SPEC,
    scard::SPEC,
    spop::SPEC,
    srandmember::SPEC,
    smove::SPEC,
    algebra::SPEC_SINTER,
    sintercard::SPEC,
    algebra::SPEC_SINTERSTORE,
    algebra::SPEC_SUNION,
    algebra::SPEC_SUNIONSTORE,
    algebra::SPEC_SDIFF,
    algebra::SPEC_SDIFFSTORE,
    sscan::SPEC,
];

/// Members as a RESP3 set (an array under RESP2).
fn set_reply(members: Vec<Bytes>) -> Frame {
    Frame::Set(members.into_iter().map(Frame::Bulk).collect())
}

/// Members as an array.
fn array_reply(members: Vec<Bytes>) -> Frame {
    Frame::Array(members.into_iter().map(Frame::Bulk).collect())
}

#[cfg(test)]
pub(crate) use crate::args::args_of;
