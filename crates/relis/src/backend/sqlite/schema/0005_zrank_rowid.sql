-- Relis schema version 5: rank rows (see 0002) move to a rowid table. Writes change a row's
-- count far more often than they add or remove rows, and the writer knows each row's rowid
-- (zset.rs keeps a copy of the rows): an UPDATE by rowid is an integer seek and an overwrite
-- in place, where the WITHOUT ROWID table needed a seek comparing (kid, lvl, score, member)
-- records at every step. Readers find rows through the index, as before, and read each count
-- from its row. Rowids are never reused (AUTOINCREMENT): the writer may hold a count for a row
-- that was deleted since, and must not write it into a new row.
ALTER TABLE relis_zrank RENAME TO relis_zrank_old;

CREATE TABLE relis_zrank (
    id     INTEGER PRIMARY KEY AUTOINCREMENT,
    kid    INTEGER NOT NULL,
    lvl    INTEGER NOT NULL,
    score  REAL    NOT NULL,
    member BLOB    NOT NULL,
    n      INTEGER NOT NULL
) STRICT;

CREATE UNIQUE INDEX relis_zrank_start ON relis_zrank (kid, lvl, score, member);

INSERT INTO relis_zrank (kid, lvl, score, member, n)
SELECT kid, lvl, score, member, n FROM relis_zrank_old ORDER BY kid, lvl, score, member;

DROP TABLE relis_zrank_old;
