//! Server-wide rows: the function library (`types/functions.rs`, `relis_functions`) and the
//! replication position (`types/replication.rs`, `relis_replication`).

/// Every function library's name and code, by name.
pub(crate) const FUNCTION_LIST: &str = "SELECT name, code FROM main.relis_functions ORDER BY name";

/// Stores (or replaces) the library `?1` with code `?2`.
pub(crate) const FUNCTION_PUT: &str =
    "INSERT OR REPLACE INTO main.relis_functions (name, code) VALUES (?1, ?2)";

/// Deletes the library `?1`.
pub(crate) const FUNCTION_DELETE: &str = "DELETE FROM main.relis_functions WHERE name = ?1";

/// Deletes every library.
pub(crate) const FUNCTION_FLUSH: &str = "DELETE FROM main.relis_functions";

/// The stored replication id, offset and selected database.
pub(crate) const REPLICATION_GET: &str = "SELECT replid, repl_offset,
             coalesce((SELECT value FROM main.relis_meta WHERE name = 'repl_db'), 0)
             FROM main.relis_replication WHERE id = 1";

/// Stores the replication id `?1` and offset `?2`.
pub(crate) const REPLICATION_SET: &str =
    "INSERT INTO main.relis_replication (id, replid, repl_offset) VALUES (1, ?1, ?2)
             ON CONFLICT (id) DO UPDATE SET replid = excluded.replid,
                 repl_offset = excluded.repl_offset";

/// Forgets the stored replication position.
pub(crate) const REPLICATION_CLEAR: &str = "DELETE FROM main.relis_replication";

/// Stores the database `?1` the master's stream has selected at the stored offset.
pub(crate) const REPLICATION_SET_DB: &str = "INSERT INTO main.relis_meta (name, value)
             VALUES ('repl_db', ?1) ON CONFLICT (name) DO UPDATE SET value = excluded.value";

/// Forgets the stored selected database.
pub(crate) const REPLICATION_CLEAR_DB: &str = "DELETE FROM main.relis_meta WHERE name = 'repl_db'";
