-- Schema 10: where a replica stands in its master's history (REPLICAOF).
--
-- One row while the server follows a master: the master's replication id and the stream offset
-- applied. It is written in the same transaction as the master's writes it covers, so after a
-- crash the file says exactly how far it got, and the replica continues from there with
-- `PSYNC replid offset+1` (a partial resync when the master still has its backlog).
CREATE TABLE relis_replication (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    replid      TEXT NOT NULL,
    repl_offset INTEGER NOT NULL
) STRICT;
