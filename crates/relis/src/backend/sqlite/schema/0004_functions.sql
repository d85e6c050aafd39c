-- Relis schema version 4: function libraries (FUNCTION LOAD), kept across restarts as Redis
-- keeps them in its RDB file. The code is the library's whole text, shebang line included.
CREATE TABLE relis_functions (
    name TEXT PRIMARY KEY,
    code BLOB NOT NULL
) STRICT;
