//! The string family's SQL (`types/strings.rs`, `chunks.rs`, `bits.rs`): an inline value in its
//! key row (`value`, `count` 0), or a chunked one in `relis_chunks (kid, n, data)` with its
//! length in `count`; `head` holds the raw flag.

/// The key row at (`?1` db, `?2` key), expired or not, with its inline value (NULL for a
/// chunked string): id, type, expire_at, version, count, mtime, value.
pub(crate) const KEY_ROW_WITH_VALUE: &str =
    "SELECT id, type, expire_at, version, count, mtime, value FROM main.relis_keys
             WHERE db = ?1 AND key = ?2";

/// The live key row at (`?1` db, `?2` key) at time `?3`: type, value, count, id.
pub(crate) const STRING_LOOKUP: &str = "SELECT type, value, count, id FROM main.relis_keys
             WHERE db = ?1 AND key = ?2 AND (expire_at IS NULL OR expire_at > ?3)";

/// The live key row's type and string length (a chunked one's `count`, else the value's).
pub(crate) const STRLEN: &str =
    "SELECT type, CASE WHEN count > 0 THEN count ELSE length(value) END FROM main.relis_keys
             WHERE db = ?1 AND key = ?2 AND (expire_at IS NULL OR expire_at > ?3)";

/// The live key row's type, id, inline length and chunked length (`count`).
pub(crate) const STRING_INFO: &str = "SELECT type, id, length(value), count FROM main.relis_keys
             WHERE db = ?1 AND key = ?2 AND (expire_at IS NULL OR expire_at > ?3)";

/// `?4` bytes from byte `?3` (1-based) of the inline value at (`?1`, `?2`).
pub(crate) const SUBSTR: &str =
    "SELECT substr(value, ?3, ?4) FROM main.relis_keys WHERE db = ?1 AND key = ?2";

/// Turns the key row at (`?1`, `?2`) into the inline string `?6` (id `?8`).
pub(crate) const OVERWRITE_INLINE: &str =
    "UPDATE main.relis_keys SET type = 0, expire_at = ?3, version = ?4, count = 0,
                         mtime = ?5, value = ?6, head = ?7, id = ?8 WHERE db = ?1 AND key = ?2";

/// A new inline string's key row (id and version `?3`, value `?6`).
pub(crate) const INSERT_INLINE: &str =
    "INSERT INTO main.relis_keys (db, key, id, type, expire_at, version, count, mtime, value, head)
                         VALUES (?1, ?2, ?3, 0, ?4, ?3, 0, ?5, ?6, ?7)";

/// A new inline string without expiry (id and version `?3`, value `?5`), raw (`head` 1: PFADD's
/// new HLL, which Redis holds raw), unless a key row of that name exists, whatever it holds (the
/// changed-row count says which).
pub(crate) const INSERT_INLINE_IF_NEW: &str =
    "INSERT INTO main.relis_keys (db, key, id, type, expire_at, version, count, mtime, value, head)
                         VALUES (?1, ?2, ?3, 0, NULL, ?3, 0, ?4, ?5, 1) ON CONFLICT DO NOTHING";

/// A chunked string rewritten in place: its expiry, version, length, mtime, head.
pub(crate) const REWRITE_CHUNKED: &str =
    "UPDATE main.relis_keys SET expire_at = ?3, version = ?4, count = ?5, mtime = ?6,
                     head = ?7 WHERE db = ?1 AND key = ?2";

/// Turns the key row at (`?1`, `?2`) into a chunked string of length `?5` (id `?4`).
pub(crate) const OVERWRITE_CHUNKED: &str =
    "UPDATE main.relis_keys SET type = 0, expire_at = ?3, version = ?4, count = ?5,
                         mtime = ?6, value = NULL, head = ?7, id = ?4 WHERE db = ?1 AND key = ?2";

/// A new chunked string's key row (id and version `?3`, length `?5`).
pub(crate) const INSERT_CHUNKED: &str =
    "INSERT INTO main.relis_keys (db, key, id, type, expire_at, version, count, mtime, value, head)
                         VALUES (?1, ?2, ?3, 0, ?4, ?3, ?5, ?6, NULL, ?7)";

/// A chunked string's new length `?3`, version, mtime and head.
pub(crate) const TOUCH_CHUNKED: &str =
    "UPDATE main.relis_keys SET count = ?3, version = ?4, mtime = ?5, head = ?6
             WHERE db = ?1 AND key = ?2";

/// Sets the raw flag `?3` in the head of the string at (`?1`, `?2`), version unchanged; a row
/// that has it already is left alone (no page written).
pub(crate) const MARK_RAW: &str =
    "UPDATE main.relis_keys SET head = head | ?3 WHERE db = ?1 AND key = ?2 AND type = 0
                         AND head & ?3 = 0";

/// Upserts an inline string without expiry; changes nothing where another type is. An update
/// calls `relis_overwrite` with the old expiry (for the key counts: see types/counter.rs).
pub(crate) const SET_INLINE: &str =
    "INSERT INTO main.relis_keys (db, key, id, type, expire_at, version, count, mtime, value)
                 VALUES (?1, ?2, ?3, 0, NULL, ?3, 0, ?4, ?5)
                 ON CONFLICT (db, key) DO UPDATE SET expire_at = relis_overwrite(expire_at),
                   version = excluded.version,
                   mtime = excluded.mtime, value = excluded.value, head = 0
                 WHERE type = 0 AND count = 0";

/// INCRBY in one statement (one descent of the key B-tree where a lookup and a write make
/// two): a new key gets `?7` (the increment `?3` as a string), a live inline string holding an
/// integer gets it added with `relis_incr` (NULL for a value that is no integer, or an
/// overflow); new version `?4`, mtime `?5`, expiry checked against `?6`. Changes nothing in
/// every other case (the caller takes the general path, which tells them apart).
pub(crate) const INCR_INLINE: &str =
    "INSERT INTO main.relis_keys (db, key, id, type, expire_at, version, count, mtime, value)
                 VALUES (?1, ?2, ?4, 0, NULL, ?4, 0, ?5, ?7)
                 ON CONFLICT (db, key) DO UPDATE SET value = relis_incr(value, ?3),
                   version = excluded.version, mtime = excluded.mtime, head = 0
                 WHERE type = 0 AND count = 0 AND (expire_at IS NULL OR expire_at > ?6)
                   AND relis_incr(value, ?3) IS NOT NULL";

/// The chunks `?2..=?3` of the string with id `?1` that exist (missing ones are zeros).
pub(crate) const READ_CHUNKS: &str =
    "SELECT n, data FROM main.relis_chunks WHERE kid = ?1 AND n BETWEEN ?2 AND ?3";

/// Adds empty chunks `?2..?3` to the string `?1`, where missing.
pub(crate) const GROW_CHUNKS: &str =
    "WITH RECURSIVE s(n) AS (SELECT ?2 UNION ALL SELECT n + 1 FROM s WHERE n + 1 < ?3)
             INSERT OR IGNORE INTO main.relis_chunks (kid, n, data) SELECT ?1, n, x'' FROM s";

/// Inserts chunk `?2` of the string `?1`.
pub(crate) const INSERT_CHUNK: &str =
    "INSERT INTO main.relis_chunks (kid, n, data) VALUES (?1, ?2, ?3)";

/// Writes chunk `?2` of the string `?1`.
pub(crate) const UPSERT_CHUNK: &str =
    "INSERT INTO main.relis_chunks (kid, n, data) VALUES (?1, ?2, ?3)
             ON CONFLICT (kid, n) DO UPDATE SET data = excluded.data";

/// Deletes the chunks of the string `?1` from `?2` on.
pub(crate) const TRUNCATE_CHUNKS: &str = "DELETE FROM main.relis_chunks WHERE kid = ?1 AND n >= ?2";

/// Chunk `?2` of the string `?1`.
pub(crate) const READ_CHUNK: &str = "SELECT data FROM main.relis_chunks WHERE kid = ?1 AND n = ?2";

/// The non-empty chunks `?2..=?3` of the string `?1`.
pub(crate) const NONEMPTY_CHUNKS: &str = "SELECT n, data FROM main.relis_chunks
             WHERE kid = ?1 AND n BETWEEN ?2 AND ?3 AND length(data) > 0";

/// The rowid of chunk `?2` of the string `?1` (from the primary key's index alone).
pub(crate) const CHUNK_ROWID: &str =
    "SELECT rowid FROM main.relis_chunks WHERE kid = ?1 AND n = ?2";

/// Rewrites the chunk row with rowid `?1`.
pub(crate) const WRITE_CHUNK_ROW: &str = "UPDATE main.relis_chunks SET data = ?2 WHERE rowid = ?1";
