//! The stream family's SQL (SQLite): every statement `types/stream.rs` and
//! `types/stream_group.rs` run, named by what it does. `?1` is the stream's id (`kid`)
//! unless the statement reads or writes the key row (`?1`, `?2`: database and key); in the
//! group, consumer and PEL statements `?2` is the group's name. Entry ids are two columns,
//! `ms` and `seq`, each as `stream_codec::enc` stores it.
//!
//! Texts are byte for byte what the type code ran before they moved here (a multi-line text
//! keeps the indentation it had there), so plans and cached statements are unchanged.

// The key row (its `value` holds the stream's numbers, `stream_codec.rs`)

/// The key row of `?1`/`?2` and, when it holds a stream (type 5), its numbers blob.
pub(crate) const KEY_ROW: &str = "SELECT id, type, expire_at, version, count, mtime,
                    CASE WHEN type = 5 THEN value END
             FROM main.relis_keys WHERE db = ?1 AND key = ?2";

/// The numbers blob of the stream at `?1`/`?2`.
pub(crate) const KEY_NUMBERS: &str = "SELECT value FROM main.relis_keys WHERE db = ?1 AND key = ?2";

/// Creates the key row of a new, empty stream (type 5) with numbers `?5`.
pub(crate) const KEY_INSERT: &str =
    "INSERT INTO main.relis_keys (db, key, id, type, version, count, mtime, value)
             VALUES (?1, ?2, ?3, 5, ?3, 0, ?4, ?5)";

/// Moves the mtime of `?1`/`?2` to `?3`, not its version (a write to the stream's groups).
pub(crate) const KEY_TOUCH: &str =
    "UPDATE main.relis_keys SET mtime = ?3 WHERE db = ?1 AND key = ?2";

/// Writes the numbers, entry count, version and mtime of `?1`/`?2`.
pub(crate) const KEY_SAVE: &str =
    "UPDATE main.relis_keys SET value = ?3, count = ?4, version = ?5, mtime = ?6
             WHERE db = ?1 AND key = ?2";

// Entries (ids as encoded `ms`, `seq` columns)

/// Entries with ids in `[(?2, ?3), (?4, ?5)]`, oldest first, at most `?6`.
pub(crate) const ENTRIES: &str = "SELECT ms, seq, fields FROM main.relis_stream
             WHERE kid = ?1 AND (ms, seq) >= (?2, ?3) AND (ms, seq) <= (?4, ?5)
             ORDER BY ms, seq LIMIT ?6";

/// Entries with ids in `[(?2, ?3), (?4, ?5)]`, newest first, at most `?6`.
pub(crate) const ENTRIES_DESC: &str = "SELECT ms, seq, fields FROM main.relis_stream
             WHERE kid = ?1 AND (ms, seq) >= (?2, ?3) AND (ms, seq) <= (?4, ?5)
             ORDER BY ms DESC, seq DESC LIMIT ?6";

/// The oldest entry's id.
pub(crate) const FIRST_ID: &str =
    "SELECT ms, seq FROM main.relis_stream WHERE kid = ?1 ORDER BY ms, seq LIMIT 1";

/// The newest entry's id.
pub(crate) const LAST_ID: &str =
    "SELECT ms, seq FROM main.relis_stream WHERE kid = ?1 ORDER BY ms DESC, seq DESC LIMIT 1";

/// The fields of entry `(?2, ?3)`.
pub(crate) const ENTRY_FIELDS: &str =
    "SELECT fields FROM main.relis_stream WHERE kid = ?1 AND ms = ?2 AND seq = ?3";

/// Adds entry `(?2, ?3)` with its encoded fields `?4`.
pub(crate) const INSERT_ENTRY: &str =
    "INSERT INTO main.relis_stream (kid, ms, seq, fields) VALUES (?1, ?2, ?3, ?4)";

/// The number of entries with ids below `(?2, ?3)` (MINID trimming).
pub(crate) const COUNT_BEFORE: &str =
    "SELECT count(*) FROM main.relis_stream WHERE kid = ?1 AND (ms, seq) < (?2, ?3)";

/// Deletes the `?2` oldest entries.
pub(crate) const DELETE_OLDEST: &str =
    "DELETE FROM main.relis_stream WHERE kid = ?1 AND (ms, seq) IN
             (SELECT ms, seq FROM main.relis_stream WHERE kid = ?1 ORDER BY ms, seq LIMIT ?2)";

/// Deletes entry `(?2, ?3)`.
pub(crate) const DELETE_ENTRY: &str =
    "DELETE FROM main.relis_stream WHERE kid = ?1 AND ms = ?2 AND seq = ?3";

// Consumer groups

/// Group `?2`'s last delivered id and entries-read counter.
pub(crate) const GROUP_ROW: &str =
    "SELECT last_ms, last_seq, entries_read FROM main.relis_stream_group
             WHERE kid = ?1 AND name = ?2";

/// The number of groups of stream `?1`.
pub(crate) const GROUP_COUNT: &str = "SELECT count(*) FROM main.relis_stream_group WHERE kid = ?1";

/// Every group with its last id, entries read, consumer and pending counts, by name (XINFO GROUPS).
pub(crate) const GROUPS_INFO: &str = "SELECT g.name, g.last_ms, g.last_seq, g.entries_read,
                    (SELECT count(*) FROM main.relis_stream_consumer AS c
                      WHERE c.kid = g.kid AND c.grp = g.name),
                    (SELECT count(*) FROM main.relis_stream_pel AS p
                      WHERE p.kid = g.kid AND p.grp = g.name)
             FROM main.relis_stream_group AS g WHERE g.kid = ?1 ORDER BY g.name";

/// Creates group `?2` with last id `(?3, ?4)` and entries-read `?5`.
pub(crate) const GROUP_INSERT: &str =
    "INSERT INTO main.relis_stream_group (kid, name, last_ms, last_seq, entries_read)
             VALUES (?1, ?2, ?3, ?4, ?5)";

/// Sets group `?2`'s last id and entries-read (XGROUP SETID).
pub(crate) const GROUP_SET_ID: &str =
    "UPDATE main.relis_stream_group SET last_ms = ?3, last_seq = ?4, entries_read = ?5
             WHERE kid = ?1 AND name = ?2";

/// Moves group `?2`'s last id and entries-read to the newest entry delivered (XREADGROUP `>`).
pub(crate) const GROUP_ADVANCE: &str =
    "UPDATE main.relis_stream_group SET last_ms = ?3, last_seq = ?4,
                         entries_read = ?5 WHERE kid = ?1 AND name = ?2";

/// Moves group `?2`'s last id (XCLAIM's LASTID).
pub(crate) const GROUP_SET_LAST_ID: &str =
    "UPDATE main.relis_stream_group SET last_ms = ?3, last_seq = ?4
                 WHERE kid = ?1 AND name = ?2";

/// Deletes group `?2` (its consumers and pending entries go separately).
pub(crate) const GROUP_DELETE: &str =
    "DELETE FROM main.relis_stream_group WHERE kid = ?1 AND name = ?2";

// Consumers

/// Group `?2`'s consumers with their pending counts and last-seen times, by name (XINFO CONSUMERS).
pub(crate) const CONSUMERS_INFO: &str =
    "SELECT c.name, (SELECT count(*) FROM main.relis_stream_pel AS p
                              WHERE p.kid = c.kid AND p.grp = c.grp AND p.consumer = c.name),
                    c.seen
             FROM main.relis_stream_consumer AS c WHERE c.kid = ?1 AND c.grp = ?2
             ORDER BY c.name";

/// Creates consumer `?3` of group `?2`, seen at `?4`, unless it exists.
pub(crate) const CONSUMER_ENSURE: &str =
    "INSERT OR IGNORE INTO main.relis_stream_consumer (kid, grp, name, seen)
             VALUES (?1, ?2, ?3, ?4)";

/// Sets consumer `?3`'s last-seen time to `?4`.
pub(crate) const CONSUMER_SEEN: &str =
    "UPDATE main.relis_stream_consumer SET seen = ?4 WHERE kid = ?1 AND grp = ?2 AND name = ?3";

/// Deletes consumer `?3` of group `?2`.
pub(crate) const CONSUMER_DELETE: &str =
    "DELETE FROM main.relis_stream_consumer WHERE kid = ?1 AND grp = ?2 AND name = ?3";

/// Deletes every consumer of group `?2`.
pub(crate) const CONSUMERS_DELETE_GROUP: &str =
    "DELETE FROM main.relis_stream_consumer WHERE kid = ?1 AND grp = ?2";

// Pending entries (the PEL)

/// Up to `?4` pending entries of group `?2` (of consumer `?3` unless NULL), by id (XINFO).
pub(crate) const PEL_PAGE: &str =
    "SELECT ms, seq, consumer, delivered, count FROM main.relis_stream_pel
             WHERE kid = ?1 AND grp = ?2 AND (?3 IS NULL OR consumer = ?3)
             ORDER BY ms, seq LIMIT ?4";

/// The lowest pending id of group `?2`.
pub(crate) const PEL_FIRST_ID: &str =
    "SELECT ms, seq FROM main.relis_stream_pel WHERE kid = ?1 AND grp = ?2
             ORDER BY ms, seq LIMIT 1";

/// The highest pending id of group `?2`.
pub(crate) const PEL_LAST_ID: &str =
    "SELECT ms, seq FROM main.relis_stream_pel WHERE kid = ?1 AND grp = ?2
             ORDER BY ms DESC, seq DESC LIMIT 1";

/// Group `?2`'s pending counts per consumer, by consumer name (XPENDING's summary).
pub(crate) const PEL_COUNT_BY_CONSUMER: &str =
    "SELECT consumer, count(*) FROM main.relis_stream_pel WHERE kid = ?1 AND grp = ?2
             GROUP BY consumer ORDER BY consumer";

/// XPENDING for consumer `?7`: ids in `[(?3, ?4), (?5, ?6)]` delivered by `?8`, at most `?9`.
pub(crate) const PEL_RANGE_OF_CONSUMER: &str =
    "SELECT ms, seq, consumer, delivered, count FROM main.relis_stream_pel
             WHERE kid = ?1 AND grp = ?2 AND consumer = ?7
               AND (ms, seq) >= (?3, ?4) AND (ms, seq) <= (?5, ?6) AND delivered <= ?8
             ORDER BY ms, seq LIMIT ?9";

/// XPENDING: ids in `[(?3, ?4), (?5, ?6)]` (of `?7` unless NULL) delivered by `?8`, at most `?9`.
pub(crate) const PEL_RANGE: &str =
    "SELECT ms, seq, consumer, delivered, count FROM main.relis_stream_pel
             WHERE kid = ?1 AND grp = ?2 AND (?7 IS NULL OR consumer = ?7)
               AND (ms, seq) >= (?3, ?4) AND (ms, seq) <= (?5, ?6) AND delivered <= ?8
             ORDER BY ms, seq LIMIT ?9";

/// Up to `?6` ids pending for consumer `?3` from `(?4, ?5)` on (XREADGROUP reading its history).
pub(crate) const PEL_OF_CONSUMER_FROM: &str = "SELECT ms, seq FROM main.relis_stream_pel
                     WHERE kid = ?1 AND grp = ?2 AND consumer = ?3 AND (ms, seq) >= (?4, ?5)
                     ORDER BY ms, seq LIMIT ?6";

/// The pending entry `(?3, ?4)` of group `?2`: consumer, delivery time and count.
pub(crate) const PEL_ROW: &str = "SELECT consumer, delivered, count FROM main.relis_stream_pel
             WHERE kid = ?1 AND grp = ?2 AND ms = ?3 AND seq = ?4";

/// Up to 64 pending entries of group `?2` from id `(?3, ?4)` on (XAUTOCLAIM's scan).
pub(crate) const PEL_BATCH_FROM: &str =
    "SELECT ms, seq, consumer, delivered, count FROM main.relis_stream_pel
                 WHERE kid = ?1 AND grp = ?2 AND (ms, seq) >= (?3, ?4) ORDER BY ms, seq LIMIT 64";

/// The first pending id of group `?2` at or after `(?3, ?4)` (XAUTOCLAIM's next cursor).
pub(crate) const PEL_NEXT_FROM: &str = "SELECT ms, seq FROM main.relis_stream_pel
                     WHERE kid = ?1 AND grp = ?2 AND (ms, seq) >= (?3, ?4) ORDER BY ms, seq LIMIT 1";

/// Records entry `(?3, ?4)` as delivered once, to `?5` at `?6`, replacing an earlier owner.
pub(crate) const PEL_DELIVER: &str = "INSERT INTO main.relis_stream_pel
                                 (kid, grp, ms, seq, consumer, delivered, count)
                             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 1)
                             ON CONFLICT (kid, grp, ms, seq) DO UPDATE
                             SET consumer = ?5, delivered = ?6, count = 1";

/// Counts one more delivery of pending entry `(?3, ?4)`, at `?5`.
pub(crate) const PEL_REDELIVER: &str =
    "UPDATE main.relis_stream_pel SET delivered = ?5, count = count + 1
                             WHERE kid = ?1 AND grp = ?2 AND ms = ?3 AND seq = ?4";

/// Sets pending entry `(?3, ?4)`'s consumer, delivery time and count, creating it (XCLAIM).
pub(crate) const PEL_PUT: &str = "INSERT INTO main.relis_stream_pel (kid, grp, ms, seq, consumer, delivered, count)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT (kid, grp, ms, seq) DO UPDATE SET consumer = ?5, delivered = ?6, count = ?7";

/// Deletes pending entry `(?3, ?4)` of group `?2`.
pub(crate) const PEL_DELETE: &str =
    "DELETE FROM main.relis_stream_pel WHERE kid = ?1 AND grp = ?2 AND ms = ?3 AND seq = ?4";

/// Deletes consumer `?3`'s pending entries.
pub(crate) const PEL_DELETE_CONSUMER: &str =
    "DELETE FROM main.relis_stream_pel WHERE kid = ?1 AND grp = ?2 AND consumer = ?3";

/// Deletes every pending entry of group `?2`.
pub(crate) const PEL_DELETE_GROUP: &str =
    "DELETE FROM main.relis_stream_pel WHERE kid = ?1 AND grp = ?2";
