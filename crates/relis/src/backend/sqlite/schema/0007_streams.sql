-- Relis schema version 7: streams (relis_keys.type 5).
--
-- One row per entry, keyed (kid, ms, seq): XRANGE and XREAD are index ranges and XADD appends
-- at the end of the index. Redis's ids are two unsigned 64-bit numbers; each is stored with its
-- top bit flipped (`v XOR 2^63` as a signed integer), which keeps their order over the whole
-- unsigned range. `fields` holds the entry's fields and values in order, each as its length
-- (unsigned LEB128) then its bytes: one B-tree entry per XADD, and 48 bytes an entry for two
-- short fields where a row per field took 71 (measured over 100,000 entries, after VACUUM).
--
-- The stream's own numbers live in its key row: `count` is its length, `value` its last id,
-- largest deleted id and entries added (five big-endian unsigned 64-bit numbers: last ms, last
-- seq, deleted ms, deleted seq, entries added), so COPY, RENAME and MOVE carry them. The first
-- id is the first row of the index. A stream may be empty and still exist, as in Redis.
CREATE TABLE relis_stream (
    kid    INTEGER NOT NULL,
    ms     INTEGER NOT NULL,
    seq    INTEGER NOT NULL,
    fields BLOB    NOT NULL,
    PRIMARY KEY (kid, ms, seq)
) STRICT, WITHOUT ROWID;

-- Stream entries for SQL, in the manner of the other views (live keys the call may read, keys
-- as TEXT): one row per entry, its id as Redis writes it (`ms-seq`), `ms` and `seq` as
-- numbers (NULL past 2^63 - 1, which SQLite's integers cannot hold), and its fields and values
-- as a JSON array `[field, value, ...]` (an entry may repeat a field), for json_each().
CREATE VIEW redis_streams AS
SELECT k.db AS db, CAST(k.key AS TEXT) AS key, relis_stream_id(s.ms, s.seq) AS id,
       CASE WHEN s.ms < 0 THEN s.ms + 9223372036854775807 + 1 END AS ms,
       CASE WHEN s.seq < 0 THEN s.seq + 9223372036854775807 + 1 END AS seq,
       relis_stream_fields(s.fields) AS fields
FROM relis_keys AS k JOIN relis_stream AS s ON s.kid = k.id
WHERE k.type = 5 AND (k.expire_at IS NULL OR k.expire_at > relis_now())
  AND ((SELECT relis_sees_all()) OR relis_visible(k.key));

DROP VIEW redis_keys;

CREATE VIEW redis_keys AS
SELECT db,
       CAST(key AS TEXT) AS key,
       CASE type WHEN 0 THEN 'string' WHEN 1 THEN 'hash' WHEN 2 THEN 'list'
                 WHEN 3 THEN 'set' WHEN 4 THEN 'zset' WHEN 5 THEN 'stream' END AS type,
       expire_at,
       CASE type WHEN 0 THEN 1 ELSE count END AS count
FROM relis_keys
WHERE (expire_at IS NULL OR expire_at > relis_now())
  AND ((SELECT relis_sees_all()) OR relis_visible(key));

-- Consumer groups. Ids are stored as in relis_stream. `entries_read` is NULL when unknown
-- (Redis's SCG_INVALID_ENTRIES_READ).
CREATE TABLE relis_stream_group (
    kid          INTEGER NOT NULL,
    name         BLOB    NOT NULL,
    last_ms      INTEGER NOT NULL,
    last_seq     INTEGER NOT NULL,
    entries_read INTEGER,
    PRIMARY KEY (kid, name)
) STRICT, WITHOUT ROWID;

-- A group's consumers; `seen` is the unix ms of the consumer's last read or claim.
CREATE TABLE relis_stream_consumer (
    kid   INTEGER NOT NULL,
    grp   BLOB    NOT NULL,
    name  BLOB    NOT NULL,
    seen  INTEGER NOT NULL,
    PRIMARY KEY (kid, grp, name)
) STRICT, WITHOUT ROWID;

-- The pending entries lists: one row per entry delivered to a group and not acknowledged,
-- with its consumer, last delivery (unix ms) and delivery count. XPENDING and XACK go by
-- (group, id); a consumer's own list (XPENDING ... consumer, XREADGROUP history, DELCONSUMER)
-- by the consumer index; XAUTOCLAIM's idle scan by the delivery-time index.
CREATE TABLE relis_stream_pel (
    kid       INTEGER NOT NULL,
    grp       BLOB    NOT NULL,
    ms        INTEGER NOT NULL,
    seq       INTEGER NOT NULL,
    consumer  BLOB    NOT NULL,
    delivered INTEGER NOT NULL,
    count     INTEGER NOT NULL,
    PRIMARY KEY (kid, grp, ms, seq)
) STRICT, WITHOUT ROWID;

CREATE INDEX relis_stream_pel_consumer ON relis_stream_pel (kid, grp, consumer, ms, seq);
CREATE INDEX relis_stream_pel_delivered ON relis_stream_pel (kid, grp, delivered);
