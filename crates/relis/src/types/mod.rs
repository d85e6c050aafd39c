//! Redis's data types over the backend: one module per type (reads as `impl Reader`, writes as
//! `impl Writer`, blocking conveniences as `impl Db`), plus the keyspace commands (`keys.rs`),
//! SORT, MEMORY USAGE, DUMP/RESTORE values and FUNCTION library storage.

pub(crate) mod bits;
pub(crate) mod chunks;
pub(crate) mod counter;
pub(crate) mod functions;
pub mod geo;
pub(crate) mod hash;
pub mod hll;
pub(crate) mod hll_db;
pub(crate) mod keys;
pub(crate) mod list;
pub(crate) mod replication;
pub(crate) mod set;
pub(crate) mod sort;
pub(crate) mod stream;
pub(crate) mod stream_codec;
pub(crate) mod stream_group;
pub(crate) mod strings;
pub(crate) mod usage;
pub(crate) mod value;
pub(crate) mod zset;

use crate::backend::sqlite::store::WriterHooks;

/// The data types' hooks on the writer's transaction, in the order they run: what a type keeps
/// on the writer's connection outside SQL is written before a savepoint or commit and forgotten
/// on rollback. Today only the sorted sets' rank copies (`zset/rank.rs`).
pub(crate) static WRITER_HOOKS: &[WriterHooks] = &[WriterHooks {
    before_savepoint: zset::flush_pending,
    rollback: zset::discard_pending,
    elements_deleted: zset::forget_copy,
}];

/// Writes everything the writer's connection keeps pending outside SQL (the key row of
/// `store.rs`'s `PendingRow`, the sorted sets' rank counts): before user SQL, which may read
/// any table, runs inside the writer's transaction.
///
/// # Errors
/// A storage error; the caller's transaction must fail.
pub(crate) fn flush_pending(conn: &crate::backend::sqlite::stmt::Conn<'_>) -> crate::Result<()> {
    crate::backend::sqlite::stmt::before_keys(conn)?;
    zset::flush_pending(conn)
}
