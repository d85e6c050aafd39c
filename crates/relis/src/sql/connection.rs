//! What every connection that may run user SQL gets when it opens (the engine's writer and
//! readers, named databases): the sandbox (`sandbox.rs`) and the bounded built-ins
//! (`builtins.rs`, which read the sandbox's per-statement budget).

use rusqlite::Connection;

/// Installs the sandbox and the bounded built-ins on `conn`.
///
/// # Errors
/// SQLite refuses to register a function.
pub(crate) fn install(conn: &Connection) -> rusqlite::Result<()> {
    super::sandbox::install(conn)?;
    super::builtins::install(conn)
}
