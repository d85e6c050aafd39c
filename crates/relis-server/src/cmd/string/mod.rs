//! The string family.

pub mod append;
pub mod get;
pub mod getdel;
pub mod getex;
pub mod getrange;
pub mod incr;
pub mod incrbyfloat;
pub mod lcs;
pub mod mget;
pub mod mset;
pub mod set;
pub mod setrange;
pub mod strlen;

use crate::cmd::{Cx, Spec};

/// The string commands.
pub static SPECS: &[Spec] = &[
    get::SPEC,
    set::SPEC,
    set::SPEC_SETNX,
    set::SPEC_SETEX,
    set::SPEC_PSETEX,
    set::SPEC_GETSET,
    getdel::SPEC,
    getex::SPEC,
    mget::SPEC,
    mset::SPEC,
    mset::SPEC_MSETNX,
    incr::SPEC_INCR,
    incr::SPEC_DECR,
    incr::SPEC_INCRBY,
    incr::SPEC_DECRBY,
    incrbyfloat::SPEC,
    append::SPEC,
    strlen::SPEC,
    getrange::SPEC,
    getrange::SPEC_SUBSTR,
    setrange::SPEC,
    lcs::SPEC,
];

/// The server's proto-max-bulk-len: the longest string APPEND and SETRANGE may build, and the
/// largest transient table LCS may allocate.
fn max_bulk_len(cx: &Cx) -> usize {
    cx.server.config.read().proto_max_bulk_len
}

#[cfg(test)]
pub(crate) use crate::args::args_of;
