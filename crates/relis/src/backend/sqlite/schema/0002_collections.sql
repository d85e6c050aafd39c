-- Relis keyspace, version 2: the collection types. Every element table is keyed by the key's
-- `id` (stable for the key's life, never reused: ids come from the persisted version counter),
-- WITHOUT ROWID so an element is one B-tree entry, and STRICT.

-- Lists keep their elements at dense positions head .. head+count-1, so LINDEX/LSET/LRANGE
-- address elements through the primary key and pushes/pops at either end touch one row.
ALTER TABLE relis_keys ADD COLUMN head INTEGER NOT NULL DEFAULT 0;

-- `seq` orders a hash's fields as Redis's listpack encoding does (insertion order; an update
-- keeps a field's place): it takes the version counter's value when the field is added. The key
-- row's `head` says whether Redis would hold the hash as a listpack (0) or, for good, a
-- hashtable (1); see hash.rs.
CREATE TABLE relis_hash (
    kid   INTEGER NOT NULL,
    field BLOB    NOT NULL,
    value BLOB    NOT NULL,
    seq   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (kid, field)
) STRICT, WITHOUT ROWID;

CREATE TABLE relis_set (
    kid    INTEGER NOT NULL,
    member BLOB    NOT NULL,
    PRIMARY KEY (kid, member)
) STRICT, WITHOUT ROWID;

CREATE TABLE relis_list (
    kid   INTEGER NOT NULL,
    pos   INTEGER NOT NULL,
    value BLOB    NOT NULL,
    PRIMARY KEY (kid, pos)
) STRICT, WITHOUT ROWID;

CREATE TABLE relis_zset (
    kid    INTEGER NOT NULL,
    member BLOB    NOT NULL,
    score  REAL    NOT NULL,
    PRIMARY KEY (kid, member)
) STRICT, WITHOUT ROWID;

-- Range and rank by score: (score, member) is Redis's order.
CREATE INDEX relis_zset_score ON relis_zset (kid, score, member);

-- Rank blocks of large sorted sets, on two levels: a level-0 row counts the members from its
-- (score, member) (inclusive) up to the next level-0 row's start (a few hundred); a level-1 row
-- does the same over a run of level-0 blocks (tens of thousands of members) and starts where
-- one of them starts. A rank is a sum over the level-1 rows before it, a sum over the blocks
-- before it inside its level-1 run, and a short count inside its block (see zset.rs).
-- (Schema version 5 makes this a rowid table: 0005_zrank_rowid.sql.)
CREATE TABLE relis_zrank (
    kid    INTEGER NOT NULL,
    lvl    INTEGER NOT NULL,
    score  REAL    NOT NULL,
    member BLOB    NOT NULL,
    n      INTEGER NOT NULL,
    PRIMARY KEY (kid, lvl, score, member)
) STRICT, WITHOUT ROWID;

-- Collections whose key is gone but whose elements are still being deleted in the background
-- (deleting a million elements at once would stall every other write).
CREATE TABLE relis_trash (
    kid  INTEGER PRIMARY KEY,
    type INTEGER NOT NULL
) STRICT;
