//! Whole values' SQL (`types/value.rs`: DUMP, MIGRATE and RESTORE): a stream's groups,
//! consumers and pending entries read at once, and a restored stream's rows written at once.

/// A stream's consumer groups, by name.
pub(crate) const STREAM_GROUPS: &str =
    "SELECT name, last_ms, last_seq, entries_read FROM main.relis_stream_group
                 WHERE kid = ?1 ORDER BY name";

/// A stream's consumers, by group and name.
pub(crate) const STREAM_CONSUMERS: &str =
    "SELECT grp, name, seen FROM main.relis_stream_consumer WHERE kid = ?1 ORDER BY grp, name";

/// A stream's pending entries, by group and id.
pub(crate) const STREAM_PENDING: &str =
    "SELECT grp, ms, seq, consumer, delivered, count FROM main.relis_stream_pel
                 WHERE kid = ?1 ORDER BY grp, ms, seq";

/// A restored stream's key row (type 5), its metadata in `value`.
pub(crate) const INSERT_STREAM_KEY: &str =
    "INSERT INTO main.relis_keys (db, key, id, type, version, count, mtime, value)
             VALUES (?1, ?2, ?3, 5, ?3, ?4, ?5, ?6)";

/// One entry of a restored stream.
pub(crate) const INSERT_STREAM_ENTRY: &str =
    "INSERT INTO main.relis_stream (kid, ms, seq, fields) VALUES (?1, ?2, ?3, ?4)";

/// One consumer group of a restored stream.
pub(crate) const INSERT_STREAM_GROUP: &str =
    "INSERT INTO main.relis_stream_group (kid, name, last_ms, last_seq, entries_read)
                 VALUES (?1, ?2, ?3, ?4, ?5)";

/// One consumer of a restored stream.
pub(crate) const INSERT_STREAM_CONSUMER: &str =
    "INSERT INTO main.relis_stream_consumer (kid, grp, name, seen)
                     VALUES (?1, ?2, ?3, ?4)";

/// One pending entry of a restored stream.
pub(crate) const INSERT_STREAM_PENDING: &str =
    "INSERT INTO main.relis_stream_pel (kid, grp, ms, seq, consumer, delivered, count)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";

/// A restored key's expiry, version and mtime (IDLETIME sets mtime back), where its row has
/// no expiry (as a row just made has).
pub(crate) const SET_RESTORED_META: &str =
    "UPDATE main.relis_keys SET expire_at = ?3, version = ?4, mtime = ?5
                 WHERE db = ?1 AND key = ?2 AND expire_at IS NULL";

/// [`SET_RESTORED_META`] where the row has an expiry.
pub(crate) const SET_RESTORED_META_EXPIRING: &str =
    "UPDATE main.relis_keys SET expire_at = ?3, version = ?4, mtime = ?5
                 WHERE db = ?1 AND key = ?2 AND expire_at IS NOT NULL";

/// Every live key of `:db` at `:now`, in key order.
pub(crate) fn live_keys() -> String {
    format!(
        "SELECT key FROM main.relis_keys WHERE db = :db AND {} ORDER BY key",
        crate::backend::sqlite::store::LIVE
    )
}
