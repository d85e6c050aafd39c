-- Relis schema version 8: large strings in chunks.
--
-- A string longer than 32 KiB (see chunks.rs) keeps its bytes here, in fixed-size chunks of
-- 1984 bytes (one chunk row fills one 2 KiB page without overflow pages), keyed by the key's
-- value id and the chunk number: chunk n holds bytes n*1984 .. n*1984+1983. Its key row has
-- `value` NULL and `count` = the string's length in bytes (a string's `count` is 0 otherwise).
-- Every chunk up to the string's length has a row, but a row may be shorter than 1984 bytes:
-- what it lacks, up to the string's length, is zero bytes, and a chunk of zeros is an empty
-- row (SETBIT far out writes one chunk and a few bytes per chunk before it). So SETBIT,
-- SETRANGE, BITFIELD and APPEND rewrite only the chunks they touch and GETRANGE reads only the
-- chunks it needs. Values written by an older Relis stay inline until their next write.
-- A deleted or overwritten chunked string's chunks go at once or, when there are many, to the
-- background sweep (`relis_trash` with type 0), as a large collection's elements do.
CREATE TABLE relis_chunks (
    kid  INTEGER NOT NULL,
    n    INTEGER NOT NULL,
    data BLOB    NOT NULL,
    PRIMARY KEY (kid, n)
) STRICT;

-- The view shows a chunked string whole: its chunks in order, each padded with zeros to its
-- full size (the last to the string's end). A subquery rather than a join, so that the view
-- still reads one key through the primary key.
DROP VIEW redis_strings;

CREATE VIEW redis_strings AS
SELECT db, CAST(key AS TEXT) AS key,
       CAST(CASE WHEN count > 0 THEN (
           SELECT group_concat(data || zeroblob(min(1984, count - n * 1984) - length(data)), ''
                               ORDER BY n)
           FROM relis_chunks WHERE kid = id)
       ELSE value END AS TEXT) AS value,
       expire_at
FROM relis_keys
WHERE type = 0 AND (expire_at IS NULL OR expire_at > relis_now())
  AND ((SELECT relis_sees_all()) OR relis_visible(key));
