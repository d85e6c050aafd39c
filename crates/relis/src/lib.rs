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
//!
//! Process-wide effects: SQLite has one configuration per process, and the first `Db` to open
//! sets it (page cache, allocator, memory statistics, default VFS) for every SQLite connection
//! in the process; [`configure_sqlite`] says what it does and can be called first to choose
//! when. Everything else (rank-block sizes included, [`Options::rank_blocks`]) is per `Db`.
#![warn(missing_docs)]

mod backend;
mod clock;
mod engine;
mod error;
pub mod events;
pub mod glob;
#[cfg(feature = "postgres")]
mod scratch;
pub mod sql;
pub mod timing;
mod types;

#[cfg(feature = "postgres")]
pub use backend::postgres;
#[cfg(feature = "test-shims")]
pub use backend::sqlite::faults;
pub use types::{geo, hll};

pub use backend::sqlite::caches::{
    CacheSizes, CacheUse, MAX_MMAP_SIZE, MMAP_SIZE, READER_CACHE, WRITER_CACHE,
};
pub use backend::sqlite::db::{
    configure_sqlite, flush_declaration, functions_declaration, release_thread_snapshots,
    swap_declaration, Db, DeclaredKeys, Durability, Options, Stats, PAGE_SIZE, WAL_RESTART_FRAMES,
};
#[doc(hidden)]
pub use backend::sqlite::pagelog::kept as page_cache_kept;
#[doc(hidden)]
pub use backend::sqlite::pcache::overflows as page_cache_overflows;
pub use backend::sqlite::pcache::truncations as page_cache_truncations;
/// The schema version this build writes (`PRAGMA user_version` of its files).
pub use backend::sqlite::schema::VERSION as SCHEMA_VERSION;
#[cfg(unix)]
pub use backend::sqlite::shmlocks::counts as shm_lock_counts;
pub use backend::sqlite::store::{KeyMeta, KeyType, OnError, RankBlocks, Reader, Writer};
pub use bytes::Bytes;
pub use clock::{Clock, ManualClock, SystemClock};
pub use error::{Error, Result};
pub use sql::{
    ColumnInfo, FromHashReport, KeyTemplate, MorphOptions, Params, PrepareMode, SqlConn, SqlDb,
    SqlDbOptions, SqlError, SqlLimits, SqlOutput, SqlValue, StatementInfo, StatementKind,
    TableInfo, DEFAULT_MAX_MEMORY, DEFAULT_MAX_RESULT_BYTES,
};
pub use types::bits::{
    bitcount, bitpos, BitOp, BitUnit, BitopOutcome, FieldAction, FieldOp, Overflow,
};
pub use types::hash::{
    HashScanPage, RandomField, HASH_MAX_LISTPACK_ENTRIES, HASH_MAX_LISTPACK_VALUE,
    HRANDFIELD_MAX_REPEATS,
};
pub use types::hll::HllError;
pub use types::hll_db::{PfDebug, PfDebugOut};
pub use types::keys::{ExpireCond, KeyspaceInfo, ObjectInfo, ScanPage, Ttl};
pub use types::list::{parse_timeout_ms, End, LposOptions, Side};
pub use types::replication::ReplPosition;
pub use types::set::{MAX_RANDOM_REPEATS, SET_MAX_INTSET_ENTRIES};
pub use types::sort::{SortOptions, Sorted};
pub use types::stream::{
    StreamEntry, StreamError, StreamId, StreamMeta, Trim, TrimTo, XAddId, XAdded, TRIM_RUN,
};
pub use types::stream_group::{
    AutoClaimed, ClaimOptions, ConsumerInfo, Delivered, GroupInfo, GroupRead, GroupStart,
    PendingEntry, PendingSummary, StreamInfo,
};
pub use types::strings::{
    add_float, clamp_range, lcs, parse_i64, Expiry, Lcs, SetCond, SetOptions, SetOutcome,
    StringLookup, MAX_STORED_VALUE, MAX_STRING,
};
pub use types::value::{Dumped, RestoreOptions, Restored, StreamGroupValue, StreamValue, Value};
pub use types::zset::{
    Aggregate, Combine, LexBound, LexRange, ScoreRange, Scored, SetOp, ZAddCmp, ZAddCond,
    ZAddOptions, ZAddOutcome, ZRange, ZRangeBy, ZScanPage, LISTPACK_ENTRIES, LISTPACK_VALUE,
};
