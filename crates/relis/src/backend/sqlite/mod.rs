//! The SQLite backend: the engine handle and its threads (`db.rs`: writer loop, readers,
//! checkpointer; `caches.rs`: the connections' page caches and memory maps, their sizes and
//! use), the keyspace core every type builds on (`store.rs`: `Reader`, `Writer`,
//! savepoints, expiry, trash; `counts.rs`: the per-database key counts DBSIZE and INFO keyspace
//! read), connection plumbing (`stmt.rs` statement table, `pcache.rs`
//! page cache, `walwrite.rs` WAL-gathering VFS over `shim.rs`), the schema and its migrations
//! (`schema.rs`, `schema/*.sql`), the data types' SQL text, one file per family (`sql/`), and the
//! test-only storage shims (`faults.rs`, `powercut.rs`, `test-shims` feature).

pub(crate) mod caches;
pub(crate) mod counts;
pub(crate) mod db;
#[cfg(feature = "test-shims")]
pub mod faults;
pub(crate) mod pagelog;
pub(crate) mod pcache;
#[cfg(feature = "test-shims")]
mod powercut;
pub(crate) mod schema;
pub(crate) mod shim;
#[cfg(unix)]
pub(crate) mod shmlocks;
pub(crate) mod sql;
pub(crate) mod stmt;
pub(crate) mod store;
pub(crate) mod walwrite;
