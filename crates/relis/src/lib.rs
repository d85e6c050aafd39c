//! Relis: Redis's data structures, durably in SQLite, as an embeddable Rust library.
//!
//! ```
//! let db = relis::Db::open_in_memory()?;
//! db.set("counter", "41")?;
//! assert_eq!(db.incr_by("counter", 1)?, 42);
//! assert_eq!(db.get("counter")?.as_deref(), Some(&b"42"[..]));
//! # Ok::<(), relis::Error>(())
//! ```
//!
//! A [`Db`] owns one writer thread (all writes, committed in groups: a write returns only once
//! it is committed) and a pool of reader threads. The typed methods on [`Db`] block the caller;
//! servers use [`Db::read_async`] and [`Db::write_async`] with [`Reader`] and [`Writer`].
#![warn(missing_docs)]

mod bits;
mod chunks;
mod clock;
mod db;
mod error;
pub mod events;
#[cfg(feature = "test-shims")]
pub mod faults;
mod functions;
pub mod geo;
pub mod glob;
mod hash;
pub mod hll;
mod hll_db;
mod keys;
mod list;
mod pcache;
#[cfg(feature = "test-shims")]
mod powercut;
mod replication;
mod schema;
mod set;
mod shim;
mod sort;
pub mod sql;
mod stmt;
mod store;
mod stream;
mod stream_group;
mod strings;
pub mod timing;
mod usage;
mod value;
mod walwrite;
mod zset;

pub use bits::{bitcount, bitpos, BitOp, BitUnit, BitopOutcome, FieldAction, FieldOp, Overflow};
pub use bytes::Bytes;
pub use clock::{Clock, ManualClock, SystemClock};
pub use db::{
    hold_thread_snapshots, release_thread_snapshots, Db, Durability, Options, Stats, PAGE_SIZE,
    WAL_RESTART_FRAMES,
};
pub use error::{Error, Result};
pub use hash::{
    HashScanPage, RandomField, HASH_MAX_LISTPACK_ENTRIES, HASH_MAX_LISTPACK_VALUE,
    HRANDFIELD_MAX_REPEATS,
};
pub use hll::HllError;
pub use hll_db::{PfDebug, PfDebugOut};
pub use keys::{ExpireCond, KeyspaceInfo, ObjectInfo, ScanPage, Ttl};
pub use list::{parse_timeout_ms, End, LposOptions, Side};
#[doc(hidden)]
pub use pcache::truncations as page_cache_truncations;
/// The schema version this build writes (`PRAGMA user_version` of its files).
pub use schema::VERSION as SCHEMA_VERSION;
pub use set::{MAX_RANDOM_REPEATS, SET_MAX_INTSET_ENTRIES};
pub use sort::{SortOptions, Sorted};
pub use sql::{
    ColumnInfo, FromHashReport, KeyTemplate, MorphOptions, Params, PrepareMode, SqlConn, SqlDb,
    SqlDbOptions, SqlError, SqlLimits, SqlOutput, SqlValue, StatementInfo, StatementKind,
    TableInfo, DEFAULT_MAX_MEMORY, DEFAULT_MAX_RESULT_BYTES,
};
pub use store::{KeyMeta, KeyType, Reader, Writer};
pub use stream::{
    StreamEntry, StreamError, StreamId, StreamMeta, Trim, TrimTo, XAddId, XAdded, TRIM_RUN,
};
pub use stream_group::{
    AutoClaimed, ClaimOptions, ConsumerInfo, Delivered, GroupInfo, GroupRead, GroupStart,
    PendingEntry, PendingSummary, StreamInfo,
};
pub use strings::{
    add_float, clamp_range, lcs, parse_i64, Expiry, Lcs, SetCond, SetOptions, SetOutcome,
    StringLookup, MAX_STORED_VALUE, MAX_STRING,
};
pub use value::{Dumped, RestoreOptions, Restored, StreamGroupValue, StreamValue, Value};
pub use zset::{
    block_size, rank_threshold, set_rank_blocks, Aggregate, Combine, LexBound, LexRange,
    ScoreRange, Scored, SetOp, ZAddCmp, ZAddCond, ZAddOptions, ZAddOutcome, ZRange, ZRangeBy,
    ZScanPage, LISTPACK_ENTRIES, LISTPACK_VALUE,
};
