//! MEMORY USAGE's SQL (`types/usage.rs`): the rows a key takes, read as stored so that their
//! record sizes can be computed.

/// The database file's page size.
pub(crate) const PAGE_SIZE: &str = "PRAGMA main.page_size";

/// The whole key row at (`?1`, `?2`), every column as stored.
pub(crate) const KEY_ROW: &str =
    "SELECT db, key, id, type, expire_at, version, count, mtime, value, head
             FROM main.relis_keys WHERE db = ?1 AND key = ?2";

/// How many chunks a chunked string `?1` has, and their bytes.
pub(crate) const CHUNKS_SIZE: &str =
    "SELECT count(*), total(length(data)) FROM main.relis_chunks WHERE kid = ?1";

/// The first `?2` field rows of the hash `?1` (all for -1).
pub(crate) const SAMPLE_HASH: &str =
    "SELECT kid, field, value, seq FROM main.relis_hash WHERE kid = ?1 LIMIT ?2";

/// The first `?2` element rows of the list `?1` (all for -1).
pub(crate) const SAMPLE_LIST: &str =
    "SELECT kid, pos, value FROM main.relis_list WHERE kid = ?1 LIMIT ?2";

/// The first `?2` member rows of the set `?1` (all for -1).
pub(crate) const SAMPLE_SET: &str =
    "SELECT kid, member FROM main.relis_set WHERE kid = ?1 LIMIT ?2";

/// The first `?2` member rows of the sorted set `?1` (all for -1).
pub(crate) const SAMPLE_ZSET: &str =
    "SELECT kid, member, score FROM main.relis_zset WHERE kid = ?1 LIMIT ?2";

/// The first `?2` entry rows of the stream `?1` (all for -1).
pub(crate) const SAMPLE_STREAM: &str =
    "SELECT kid, ms, seq, fields FROM main.relis_stream WHERE kid = ?1 LIMIT ?2";

/// Every rank row of the sorted set `?1`.
pub(crate) const ZRANK_ROWS: &str =
    "SELECT id, kid, lvl, score, member, n FROM main.relis_zrank WHERE kid = ?1";

/// Every consumer group row of the stream `?1`.
pub(crate) const STREAM_GROUP_ROWS: &str = "SELECT kid, name, last_ms, last_seq, entries_read
             FROM main.relis_stream_group WHERE kid = ?1";

/// Every consumer row of the stream `?1`.
pub(crate) const STREAM_CONSUMER_ROWS: &str =
    "SELECT kid, grp, name, seen FROM main.relis_stream_consumer WHERE kid = ?1";

/// How many pending entries the stream `?1` has.
pub(crate) const PENDING_COUNT: &str = "SELECT count(*) FROM main.relis_stream_pel WHERE kid = ?1";

/// The first `?2` pending entry rows of the stream `?1` (all for -1).
pub(crate) const SAMPLE_PENDING: &str = "SELECT kid, grp, ms, seq, consumer, delivered, count
             FROM main.relis_stream_pel WHERE kid = ?1 LIMIT ?2";
