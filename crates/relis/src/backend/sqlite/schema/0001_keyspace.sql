-- Relis keyspace, version 1.
--
-- One row per Redis key. A string's value lives inline in its key row, so SET touches one B-tree
-- (the table's primary key) and, only when the key has an expiry, the partial expiry index.
-- Collections (later schema versions) keep their elements in per-type tables keyed by `id`, which
-- never changes for the life of a key, so RENAME and MOVE never touch the elements.
CREATE TABLE relis_meta (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE relis_keys (
    db        INTEGER NOT NULL,           -- logical database, 0..databases-1
    key       BLOB    NOT NULL,
    id        INTEGER NOT NULL,           -- stable identity of the key's value
    type      INTEGER NOT NULL,           -- 0 string, 1 hash, 2 list, 3 set, 4 zset
    expire_at INTEGER,                    -- unix time in ms, NULL = no expiry
    version   INTEGER NOT NULL,           -- bumped by every write (WATCH)
    count     INTEGER NOT NULL DEFAULT 0, -- element count for collections
    mtime     INTEGER NOT NULL,           -- unix ms of the last write (OBJECT IDLETIME)
    value     BLOB,                       -- a string's value
    PRIMARY KEY (db, key)
) STRICT, WITHOUT ROWID;

-- The expiry sweep and the keyspace statistics read only keys that expire.
CREATE INDEX relis_keys_expire ON relis_keys (expire_at) WHERE expire_at IS NOT NULL;

INSERT INTO relis_meta (name, value) VALUES ('next_version', 1);
