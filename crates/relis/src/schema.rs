//! The versioned schema: `schema/NNNN_*.sql`, embedded, applied in order and recorded in
//! `PRAGMA user_version`.

use crate::error::{Error, Result};
use rusqlite::Connection;

/// Every migration, in order; migration `i` brings the file to `user_version = i + 1`.
const MIGRATIONS: &[&str] = &[include_str!("schema/0001_keyspace.sql")];

/// The schema version this build writes.
pub const VERSION: i64 = MIGRATIONS.len() as i64;

/// Brings `conn`'s file up to [`VERSION`], refusing files that are not Relis databases or that a
/// newer Relis wrote.
pub(crate) fn migrate(conn: &mut Connection, path: &str) -> Result<()> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version > VERSION {
        return Err(Error::NotRelis(format!(
            "{path}: schema version {version} is newer than this Relis understands ({VERSION})"
        )));
    }
    if version == 0 {
        // A fresh file has no tables; anything else was written by some other program.
        let tables: i64 = conn.query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'",
            [],
            |r| r.get(0),
        )?;
        if tables > 0 {
            return Err(Error::NotRelis(format!(
                "{path}: not a Relis database (it has tables but no Relis schema version)"
            )));
        }
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        tx.commit()?;
    }
    Ok(())
}
