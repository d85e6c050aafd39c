//! Redis's data types over the backend: one module per type (reads as `impl Reader`, writes as
//! `impl Writer`, blocking conveniences as `impl Db`), plus the keyspace commands (`keys.rs`),
//! SORT, MEMORY USAGE, DUMP/RESTORE values and FUNCTION library storage.

pub(crate) mod bits;
pub(crate) mod chunks;
pub(crate) mod functions;
pub mod geo;
pub(crate) mod hash;
pub mod hll;
pub(crate) mod hll_db;
pub(crate) mod keys;
pub(crate) mod list;
pub(crate) mod set;
pub(crate) mod sort;
pub(crate) mod stream;
pub(crate) mod stream_group;
pub(crate) mod strings;
pub(crate) mod usage;
pub(crate) mod value;
pub(crate) mod zset;
