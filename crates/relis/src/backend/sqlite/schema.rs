//! The versioned schema: `schema/NNNN_*.sql`, embedded, applied in order and recorded in
//! `PRAGMA user_version`.

use crate::error::{Error, Result};
use rusqlite::{Connection, OpenFlags};
use std::io::Read;
use std::path::Path;

/// Every migration, in order; migration `i` brings the file to `user_version = i + 1`.
const MIGRATIONS: &[&str] = &[
    include_str!("schema/0001_keyspace.sql"),
    include_str!("schema/0002_collections.sql"),
    include_str!("schema/0003_views.sql"),
    include_str!("schema/0004_functions.sql"),
    include_str!("schema/0005_zrank_rowid.sql"),
    include_str!("schema/0006_view_keys.sql"),
    include_str!("schema/0007_streams.sql"),
    include_str!("schema/0008_string_chunks.sql"),
    include_str!("schema/0009_geo.sql"),
    include_str!("schema/0010_replication.sql"),
    include_str!("schema/0011_key_counts.sql"),
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
        let tables: i64 = conn
            .query_row(
                "SELECT count(*) FROM main.sqlite_schema WHERE name NOT LIKE 'sqlite_%'",
                [],
                |r| r.get(0),
            )
            .map_err(|e| unreadable(path, e))?;
        if tables > 0 {
            return Err(Error::NotRelis(format!(
                "{path}: not a Relis database (it has tables but no Relis schema version)"
            )));
        }
    }
    // A file that claims a Relis schema version has every table and view of those versions.
    for sql in &MIGRATIONS[..version.max(0) as usize] {
        for table in created(sql) {
            let found: i64 = conn
                .query_row(
                    "SELECT count(*) FROM main.sqlite_schema WHERE name = ?1",
                    [table],
                    |r| r.get(0),
                )
                .map_err(|e| unreadable(path, e))?;
            if found == 0 {
                return Err(Error::NotRelis(format!(
                    "{path}: not a Relis database (schema version {version}, but no `{table}`)"
                )));
            }
        }
    }
    Ok(version)
}

/// Checks an existing database file before anything opens it for writing, so that a file
/// Relis must refuse is refused with a message that names it and says what is wrong, and is
/// left byte for byte as it was: a directory in its place, a file this process may not read or
/// write, a file that is not SQLite, one cut short, one from some other program or from a newer
/// Relis. A missing or empty file is a new database and passes.
///
/// # Errors
/// [`Error::NotRelis`] naming the file and the problem.
pub(crate) fn preflight(path: &Path) -> Result<()> {
    let name = path.display();
    let refuse = |what: String| Err(Error::NotRelis(format!("{name}: {what}")));
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return refuse(format!("cannot access the database file: {e}")),
    };
    if meta.is_dir() {
        return refuse("is a directory, not a database file".into());
    }
    if !meta.is_file() {
        return refuse("is not a regular file".into());
    }
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return refuse(format!("cannot read the database file: {e}")),
    };
    // Opening for writing writes nothing; it only asks whether the writer will be able to.
    if let Err(e) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
    {
        return refuse(format!("cannot open the database file for writing: {e}"));
    }
    if meta.len() == 0 {
        return Ok(());
    }
    let mut header = Vec::with_capacity(100);
    if let Err(e) = file.by_ref().take(100).read_to_end(&mut header) {
        return refuse(format!("cannot read the database file: {e}"));
    }
    if !header.starts_with(b"SQLite format 3\0") {
        return refuse(
            "not a Relis database: not an SQLite database file (no SQLite header)".into(),
        );
    }
    if header.len() < 100 {
        return refuse(format!(
            "truncated: {} bytes, shorter than an SQLite header",
            header.len()
        ));
    }
    let be32 = |at: usize| {
        u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65536,
        n => u64::from(n),
    };
    if !(512..=65536).contains(&page_size) || !page_size.is_power_of_two() {
        return refuse(format!("damaged SQLite header (page size {page_size})"));
    }
    // SQLite trusts the header's page count only while the "version valid for" number matches
    // the change counter. With a WAL beside it the file may legitimately lag (the WAL holds
    // newer pages, and a checkpoint cut short by a crash is redone from it): check only without.
    let wal = path.with_file_name(format!(
        "{}-wal",
        path.file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default()
    ));
    let wal_len = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
    let pages = u64::from(be32(28));
    if wal_len == 0 && be32(92) == be32(24) && pages > 0 && meta.len() < pages * page_size {
        return refuse(format!(
            "truncated: its header counts {pages} pages of {page_size} bytes ({} bytes), the file has {} bytes",
            pages * page_size,
            meta.len()
        ));
    }
    // A read-only look at the schema. Without a WAL, as an immutable file: SQLite then takes no
    // lock and creates no -wal or -shm file beside it. With one, read-only (which never
    // checkpoints): the WAL may hold the newest schema version.
    let conn = if wal_len == 0 {
        let uri = format!("file:{}?immutable=1", uri_path(path));
        Connection::open_with_flags(
            uri,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI,
        )
    } else {
        Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
    }
    .map_err(|e| Error::NotRelis(format!("{name}: cannot open: {e}")))?;
    check(&conn, &name.to_string())?;
    Ok(())
}

/// `path` escaped for an SQLite `file:` URI.
fn uri_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/._-~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn unreadable(path: &str, e: rusqlite::Error) -> Error {
    Error::NotRelis(format!("{path}: cannot read the schema: {e}"))
}

/// Names of the tables and views migration `sql` creates.
fn created(sql: &str) -> impl Iterator<Item = &str> {
    sql.split("CREATE ").skip(1).filter_map(|rest| {
        let rest = rest
            .strip_prefix("TABLE ")
            .or_else(|| rest.strip_prefix("VIEW "))?;
        let rest = rest.strip_prefix("IF NOT EXISTS ").unwrap_or(rest);
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        Some(&rest[..end])
    })
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
