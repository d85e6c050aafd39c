//! The versioned schema: `schema/NNNN_*.sql`, embedded, applied in order and recorded in
//! `PRAGMA user_version`.

use crate::error::{Error, Result};
use rusqlite::Connection;

/// Every migration, in order; migration `i` brings the file to `user_version = i + 1`.
const MIGRATIONS: &[&str] = &[
    include_str!("schema/0001_keyspace.sql"),
    include_str!("schema/0002_collections.sql"),
    include_str!("schema/0003_views.sql"),
];

/// The schema version this build writes.
pub const VERSION: i64 = MIGRATIONS.len() as i64;

/// Refuses, without writing anything, files that are not Relis databases or that a newer Relis
/// wrote. Returns the file's schema version.
pub(crate) fn check(conn: &Connection, path: &str) -> Result<i64> {
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| Error::NotRelis(format!("{path}: not a readable SQLite database: {e}")))?;
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
    Ok(version)
}

/// Brings `conn`'s file up to [`VERSION`]; [`check`] has accepted it.
pub(crate) fn migrate(conn: &mut Connection, version: i64) -> Result<()> {
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        tx.commit()?;
    }
    Ok(())
}
