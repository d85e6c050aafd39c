-- Relis schema version 3: the SQL surface.
--
-- Prepared statements (SQL.PREPARE) persist here, by name, with what SQL.STATEMENTS reports.
CREATE TABLE relis_statements (
    name     TEXT    PRIMARY KEY,
    sql      TEXT    NOT NULL,
    params   INTEGER NOT NULL,
    readonly INTEGER NOT NULL
) STRICT;

-- Named SQL databases (SQL.DB CREATE), reopened at start-up. path NULL = in memory.
CREATE TABLE relis_sql_databases (
    name TEXT PRIMARY KEY,
    path TEXT
) STRICT;

-- Live, read-only views of the Redis data. Each hides expired keys: `relis_now()` is the instant
-- the running command evaluates expiry at (the engine's clock), so a query sees exactly what the
-- Redis commands see at that instant. Keys, fields, members and values are shown as TEXT (the
-- same bytes) so that they compare equal to text literals and parameters: `key = 'user:1'`.
-- User SQL may read the relis_* tables only through these views.
CREATE VIEW redis_keys AS
SELECT db,
       CAST(key AS TEXT) AS key,
       CASE type WHEN 0 THEN 'string' WHEN 1 THEN 'hash' WHEN 2 THEN 'list'
                 WHEN 3 THEN 'set' WHEN 4 THEN 'zset' END AS type,
       expire_at,
       CASE type WHEN 0 THEN 1 ELSE count END AS count
FROM relis_keys
WHERE expire_at IS NULL OR expire_at > relis_now();

CREATE VIEW redis_strings AS
SELECT db, CAST(key AS TEXT) AS key, CAST(value AS TEXT) AS value, expire_at
FROM relis_keys
WHERE type = 0 AND (expire_at IS NULL OR expire_at > relis_now());

CREATE VIEW redis_hashes AS
SELECT k.db AS db, CAST(k.key AS TEXT) AS key, CAST(h.field AS TEXT) AS field,
       CAST(h.value AS TEXT) AS value
FROM relis_keys AS k JOIN relis_hash AS h ON h.kid = k.id
WHERE k.type = 1 AND (k.expire_at IS NULL OR k.expire_at > relis_now());

-- Lists keep dense positions head .. head+count-1: idx is the LINDEX index (0 = head).
CREATE VIEW redis_lists AS
SELECT k.db AS db, CAST(k.key AS TEXT) AS key, l.pos - k.head AS idx,
       CAST(l.value AS TEXT) AS value
FROM relis_keys AS k JOIN relis_list AS l ON l.kid = k.id
WHERE k.type = 2 AND (k.expire_at IS NULL OR k.expire_at > relis_now());

CREATE VIEW redis_sets AS
SELECT k.db AS db, CAST(k.key AS TEXT) AS key, CAST(s.member AS TEXT) AS member
FROM relis_keys AS k JOIN relis_set AS s ON s.kid = k.id
WHERE k.type = 3 AND (k.expire_at IS NULL OR k.expire_at > relis_now());

CREATE VIEW redis_zsets AS
SELECT k.db AS db, CAST(k.key AS TEXT) AS key, CAST(z.member AS TEXT) AS member,
       z.score AS score
FROM relis_keys AS k JOIN relis_zset AS z ON z.kid = k.id
WHERE k.type = 4 AND (k.expire_at IS NULL OR k.expire_at > relis_now());
