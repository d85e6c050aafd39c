//! The HyperLogLog family: PFADD, PFCOUNT, PFMERGE, PFDEBUG and PFSELFTEST, on string values in
//! Redis's own representation (see `relis::hll`), so GET shows the bytes redis-server would
//! hold and a value copied from one server works in the other.

pub mod pfadd;
pub mod pfcount;
pub mod pfdebug;
pub mod pfmerge;
pub mod pfselftest;

use crate::cmd::{Cx, Spec};

/// The HyperLogLog commands.
pub static SPECS: &[Spec] = &[
    pfadd::SPEC,
    pfcount::SPEC,
    pfmerge::SPEC,
    pfdebug::SPEC,
    pfselftest::SPEC,
];

/// `hll-sparse-max-bytes`: how long a sparse value may grow before it turns dense.
fn sparse_max(cx: &Cx) -> usize {
    cx.server.config.read().hll_sparse_max_bytes
}

#[cfg(test)]
pub(crate) use crate::args::args_of;
