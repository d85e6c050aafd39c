//! The hash family's SQL (`types/hash.rs`): fields in `relis_hash (kid, field, value, seq)`, the
//! count and encoding in the key row. `*_BY_SEQ` statements read a listpack's insertion order,
//! `*_BY_FIELD` a hashtable's (field) order.

/// The live key row at (`?1` db, `?2` key) at time `?3`: id, type, count, head (the encoding).
pub(crate) const KEY_LOOKUP: &str = "SELECT id, type, count, head FROM main.relis_keys
                 WHERE db = ?1 AND key = ?2 AND (expire_at IS NULL OR expire_at > ?3)";

/// The value of field `?2` of the hash `?1`.
pub(crate) const HGET: &str = "SELECT value FROM main.relis_hash WHERE kid = ?1 AND field = ?2";

/// Every field and value of the hash `?1`, in field order.
pub(crate) const ENTRIES_BY_FIELD: &str =
    "SELECT field, value FROM main.relis_hash WHERE kid = ?1 ORDER BY field";

/// Every field and value of the hash `?1`, in insertion order.
pub(crate) const ENTRIES_BY_SEQ: &str =
    "SELECT field, value FROM main.relis_hash WHERE kid = ?1 ORDER BY seq, field";

/// Every field of the hash `?1`, in field order.
pub(crate) const FIELDS_BY_FIELD: &str =
    "SELECT field FROM main.relis_hash WHERE kid = ?1 ORDER BY field";

/// Every field of the hash `?1`, in insertion order.
pub(crate) const FIELDS_BY_SEQ: &str =
    "SELECT field FROM main.relis_hash WHERE kid = ?1 ORDER BY seq, field";

/// Every value of the hash `?1`, in field order.
pub(crate) const VALUES_BY_FIELD: &str =
    "SELECT value FROM main.relis_hash WHERE kid = ?1 ORDER BY field";

/// Every value of the hash `?1`, in insertion order.
pub(crate) const VALUES_BY_SEQ: &str =
    "SELECT value FROM main.relis_hash WHERE kid = ?1 ORDER BY seq, field";

/// The field and value `?2` places after the first, in field order.
pub(crate) const ENTRY_AT: &str =
    "SELECT field, value FROM main.relis_hash WHERE kid = ?1 ORDER BY field LIMIT 1 OFFSET ?2";

/// The field and value `?3` places after field `?2`, in field order.
pub(crate) const ENTRY_AFTER: &str =
    "SELECT field, value FROM main.relis_hash WHERE kid = ?1 AND field > ?2
             ORDER BY field LIMIT 1 OFFSET ?3";

/// Whether field `?2` is in the hash `?1`.
pub(crate) const HEXISTS: &str = "SELECT 1 FROM main.relis_hash WHERE kid = ?1 AND field = ?2";

/// The length of field `?2`'s value.
pub(crate) const HSTRLEN: &str =
    "SELECT length(value) FROM main.relis_hash WHERE kid = ?1 AND field = ?2";

/// The field `?2` places after the first, in field order.
pub(crate) const FIELD_AT: &str =
    "SELECT field FROM main.relis_hash WHERE kid = ?1 ORDER BY field LIMIT 1 OFFSET ?2";

/// The field `?2` places before the last, in field order.
pub(crate) const FIELD_AT_DESC: &str =
    "SELECT field FROM main.relis_hash WHERE kid = ?1 ORDER BY field DESC LIMIT 1 OFFSET ?2";

/// An HSCAN page: at most `?3` fields and values in [`?2`, `?4`), in field order.
pub(crate) const SCAN_RANGE: &str =
    "SELECT field, value FROM main.relis_hash WHERE kid = ?1 AND field >= ?2 AND field < ?4
                 ORDER BY field LIMIT ?3";

/// An HSCAN page: at most `?3` fields and values from `?2` on, in field order.
pub(crate) const SCAN_FROM: &str =
    "SELECT field, value FROM main.relis_hash WHERE kid = ?1 AND field >= ?2
                 ORDER BY field LIMIT ?3";

/// Sets the existing field `?2` of hash `?1` to `?3` (keeping its `seq`); changes no row when
/// the hash has no such field. (Tried first, then [`HSET_FIELD_INSERT`]: an upsert that says
/// whether it inserted needs `RETURNING`, which makes SQLite build a temporary B-tree for its
/// results on every call, more than half of an HSET's writer instructions.)
pub(crate) const HSET_FIELD_UPDATE: &str =
    "UPDATE main.relis_hash SET value = ?3 WHERE kid = ?1 AND field = ?2";

/// Adds the new field `?2` with value `?3` and `seq` `?4` to hash `?1`.
pub(crate) const HSET_FIELD_INSERT: &str =
    "INSERT INTO main.relis_hash (kid, field, value, seq) VALUES (?1, ?2, ?3, ?4)";

/// A new hash's key row (`?4` its type code).
pub(crate) const KEY_INSERT: &str =
    "INSERT INTO main.relis_keys (db, key, id, type, expire_at, version, count, mtime, head)
                     VALUES (?1, ?2, ?3, ?4, NULL, ?3, ?5, ?6, ?7)";

/// Deletes field `?2` of the hash `?1`.
pub(crate) const HDEL_FIELD: &str = "DELETE FROM main.relis_hash WHERE kid = ?1 AND field = ?2";
