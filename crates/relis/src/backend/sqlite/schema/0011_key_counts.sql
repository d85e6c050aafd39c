-- Schema 11: how many keys each logical database holds, so DBSIZE and INFO keyspace read one row
-- each instead of counting `relis_keys` (a scan of the whole keyspace, string values included).
--
-- One row per database that has held a key: its key rows (expired ones the sweep has not deleted
-- yet included, as Redis's DBSIZE counts them) and how many of those have an expiry. No trigger
-- keeps it: the writer adds up what its statements do to `relis_keys` in memory and writes these
-- rows once, in the transaction of the writes they count (backend/sqlite/counts.rs). A file from
-- before this version is counted once, here.
CREATE TABLE relis_key_counts (
    db      INTEGER PRIMARY KEY,
    keys    INTEGER NOT NULL,
    expires INTEGER NOT NULL
) STRICT;

INSERT INTO relis_key_counts (db, keys, expires)
    SELECT db, count(*), count(expire_at) FROM relis_keys GROUP BY db;
