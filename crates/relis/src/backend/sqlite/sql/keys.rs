//! The keyspace commands' SQL (`types/keys.rs`): SCAN, RANDOMKEY, EXPIRE, RENAME, COPY,
//! MOVE, FLUSHDB, FLUSHALL and SWAPDB over `relis_keys`, and COPY's copies of element rows.

use crate::backend::sqlite::store::LIVE;

/// Per database: its key rows and how many have an expiry, counted from the rows (a scan of the
/// whole keyspace; DBSIZE and INFO keyspace read the kept counts, `relis_key_counts`, instead:
/// see backend/sqlite/counts.rs).
pub(crate) const KEYSPACE_COUNTED: &str =
    "SELECT db, count(*), count(expire_at) FROM main.relis_keys GROUP BY db ORDER BY db";

/// Sets the expiry (`?3`, NULL for none), version and mtime of the key at (`?1`, `?2`).
pub(crate) const SET_EXPIRE_AT: &str =
    "UPDATE main.relis_keys SET expire_at = ?3, version = ?4, mtime = ?5
                 WHERE db = ?1 AND key = ?2";

/// Renames the key at (`?1`, `?2`) to `?3`, with version `?4` and mtime `?5`.
pub(crate) const RENAME: &str =
    "UPDATE main.relis_keys SET key = ?3, version = ?4, mtime = ?5 WHERE db = ?1 AND key = ?2";

/// Copies the key row at (`?1`, `?2`) to (`?3`, `?4`) with id and version `?5`.
pub(crate) const COPY_KEY_ROW: &str =
    "INSERT INTO main.relis_keys (db, key, id, type, expire_at, version, count, mtime, value, head)
                 SELECT ?3, ?4, ?5, type, expire_at, ?5, count, ?6, value, head FROM main.relis_keys
                 WHERE db = ?1 AND key = ?2";

/// Copies a chunked string's chunks from key id `?1` to `?2`.
pub(crate) const COPY_CHUNKS: &str = "INSERT INTO main.relis_chunks (kid, n, data) SELECT ?2, n, data FROM main.relis_chunks WHERE kid = ?1";

/// Copies a hash's fields from key id `?1` to `?2`.
pub(crate) const COPY_HASH: &str = "INSERT INTO main.relis_hash (kid, field, value, seq) SELECT ?2, field, value, seq FROM main.relis_hash WHERE kid = ?1";

/// Copies a set's members from key id `?1` to `?2`.
pub(crate) const COPY_SET: &str =
    "INSERT INTO main.relis_set (kid, member) SELECT ?2, member FROM main.relis_set WHERE kid = ?1";

/// Copies a list's elements from key id `?1` to `?2`.
pub(crate) const COPY_LIST: &str = "INSERT INTO main.relis_list (kid, pos, value) SELECT ?2, pos, value FROM main.relis_list WHERE kid = ?1";

/// Copies a sorted set's rank rows from key id `?1` to `?2`.
pub(crate) const COPY_ZRANK: &str = "INSERT INTO main.relis_zrank (kid, lvl, score, member, n)
                         SELECT ?2, lvl, score, member, n FROM main.relis_zrank WHERE kid = ?1";

/// Copies a sorted set's members from key id `?1` to `?2`.
pub(crate) const COPY_ZSET: &str = "INSERT INTO main.relis_zset (kid, member, score) SELECT ?2, member, score FROM main.relis_zset WHERE kid = ?1";

/// Copies a stream's consumer groups from key id `?1` to `?2`.
pub(crate) const COPY_STREAM_GROUPS: &str = "INSERT INTO main.relis_stream_group (kid, name, last_ms, last_seq, entries_read)
                     SELECT ?2, name, last_ms, last_seq, entries_read FROM main.relis_stream_group WHERE kid = ?1";

/// Copies a stream's consumers from key id `?1` to `?2`.
pub(crate) const COPY_STREAM_CONSUMERS: &str =
    "INSERT INTO main.relis_stream_consumer (kid, grp, name, seen)
                     SELECT ?2, grp, name, seen FROM main.relis_stream_consumer WHERE kid = ?1";

/// Copies a stream's pending entries from key id `?1` to `?2`.
pub(crate) const COPY_STREAM_PEL: &str = "INSERT INTO main.relis_stream_pel (kid, grp, ms, seq, consumer, delivered, count)
                     SELECT ?2, grp, ms, seq, consumer, delivered, count FROM main.relis_stream_pel WHERE kid = ?1";

/// Copies a stream's entries from key id `?1` to `?2`.
pub(crate) const COPY_STREAM: &str = "INSERT INTO main.relis_stream (kid, ms, seq, fields) SELECT ?2, ms, seq, fields FROM main.relis_stream WHERE kid = ?1";

/// Moves the key at (`?1`, `?2`) to database `?3`, with version `?4` and mtime `?5`.
pub(crate) const MOVE_KEY: &str =
    "UPDATE main.relis_keys SET db = ?3, version = ?4, mtime = ?5 WHERE db = ?1 AND key = ?2";

/// Sends the element rows of database `?1`'s collections and chunked strings to the trash.
pub(crate) const FLUSHDB_TRASH: &str = "INSERT OR IGNORE INTO main.relis_trash (kid, type)
                 SELECT id, type FROM main.relis_keys WHERE db = ?1 AND (type <> 0 OR count > 0)";

/// Deletes every key row of database `?1`.
pub(crate) const FLUSHDB_KEYS: &str = "DELETE FROM main.relis_keys WHERE db = ?1";

/// Moves every key of database `?1` to `?2` with version `?3` (one of SWAPDB's steps).
pub(crate) const SWAPDB_STEP: &str =
    "UPDATE main.relis_keys SET db = ?2, version = ?3 WHERE db = ?1";

/// FLUSHALL, one table at a time: unqualified DELETEs, which SQLite runs as a truncation
/// rather than visiting each row.
pub(crate) const FLUSHALL: [&str; 12] = [
    "DELETE FROM main.relis_keys",
    "DELETE FROM main.relis_hash",
    "DELETE FROM main.relis_set",
    "DELETE FROM main.relis_list",
    "DELETE FROM main.relis_zset",
    "DELETE FROM main.relis_zrank",
    "DELETE FROM main.relis_stream",
    "DELETE FROM main.relis_stream_group",
    "DELETE FROM main.relis_stream_consumer",
    "DELETE FROM main.relis_stream_pel",
    "DELETE FROM main.relis_trash",
    "DELETE FROM main.relis_chunks",
];

/// A SCAN page: live keys of `:db` from `:lower` (past it when `strict`) and, with `upper`,
/// below `:upper`, in key order, at most `:limit`.
pub(crate) fn scan(strict: bool, upper: bool) -> String {
    format!(
        "SELECT key, type FROM main.relis_keys WHERE db = :db AND key {} :lower {} AND {LIVE}
             ORDER BY key LIMIT :limit",
        if strict { ">" } else { ">=" },
        if upper { "AND key < :upper" } else { "" }
    )
}

/// RANDOMKEY's probe: the first live key of `:db` at or after `:probe` (or, without
/// `at_or_after`, the last one before it).
pub(crate) fn random_key(at_or_after: bool) -> String {
    let (op, order) = if at_or_after {
        (">=", "ASC")
    } else {
        ("<", "DESC")
    };
    format!(
        "SELECT key FROM main.relis_keys WHERE db = :db AND key {op} :probe AND {LIVE}
                 ORDER BY key {order} LIMIT 1"
    )
}
