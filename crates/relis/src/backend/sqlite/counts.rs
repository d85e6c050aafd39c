//! How many keys each logical database holds (`relis_key_counts`, schema 0011), so that DBSIZE
//! and INFO keyspace read a row per database instead of counting `relis_keys`, which scans the
//! whole keyspace (string values included) and kept a reader busy for every INFO a monitoring
//! tool polls.
//!
//! The writer keeps the rows. Each statement that adds or deletes a key row, moves one to
//! another database, or gives it an expiry or takes it away reports what it did through the
//! `Writer` methods that run it (`count_keys`, `delete_key_row`, ...); the changes are added
//! up in memory on the writer's connection ([`PendingCounts`], in its `ConnState`) and written,
//! one row per database they touch, just before the transaction commits ([`flush`]). So a
//! reader's snapshot sees counts that agree with the keys it sees, and a group commit of
//! thousands of new keys writes a row or two. A savepoint rolled back puts back what was
//! pending when it opened ([`mark`], [`restore`]); a transaction rolled back forgets it all
//! ([`discard`], from `WriterHooks::discard`). Reads on the writer's own connection (DBSIZE in a
//! script or a MULTI) add what is pending to what is stored ([`current`], [`all`]).
//!
//! Not SQLite triggers on `relis_keys`: they cost a statement per new or deleted key row, and a
//! FLUSHALL of millions of keys (an unqualified DELETE, which SQLite otherwise truncates
//! without visiting a row) would run millions of them. FLUSHDB, FLUSHALL and SWAPDB set or swap
//! whole counts here instead.

use crate::backend::sqlite::stmt::{prepare, Conn};
use crate::error::Result;
use rusqlite::OptionalExtension;

/// The changes to the stored counts made by the open transaction and not written yet:
/// (database, keys, keys with an expiry), one entry per database touched. A handful at most, so
/// a linear search, and a copy per savepoint ([`mark`]) costs nothing worth measuring.
#[derive(Clone, Default, Debug, PartialEq, Eq)]
pub(crate) struct PendingCounts(Vec<(u32, i64, i64)>);

impl PendingCounts {
    fn add(&mut self, db: u32, keys: i64, expires: i64) {
        match self.0.iter_mut().find(|p| p.0 == db) {
            Some(p) => {
                p.1 += keys;
                p.2 += expires;
            }
            None => self.0.push((db, keys, expires)),
        }
    }

    fn of(&self, db: u32) -> (i64, i64) {
        self.0
            .iter()
            .find(|p| p.0 == db)
            .map_or((0, 0), |p| (p.1, p.2))
    }
}

/// Counts `keys` more key rows in `db` (fewer when negative), `expires` more with an expiry.
pub(crate) fn add(conn: &Conn<'_>, db: u32, keys: i64, expires: i64) {
    if keys != 0 || expires != 0 {
        conn.state()
            .with(|p: &mut PendingCounts| p.add(db, keys, expires));
    }
}

/// What is pending now, for [`restore`] if the savepoint about to open is rolled back.
pub(crate) fn mark(conn: &Conn<'_>) -> PendingCounts {
    conn.state()
        .existing(|p: &mut PendingCounts| p.clone())
        .unwrap_or_default()
}

/// Puts back what was pending at `mark`: what came after it was rolled back.
pub(crate) fn restore(conn: &Conn<'_>, mark: PendingCounts) {
    conn.state().with(|p: &mut PendingCounts| *p = mark);
}

/// Forgets what is pending: the transaction that made it was rolled back.
pub(crate) fn discard(conn: &Conn<'_>) {
    conn.state().existing(|p: &mut PendingCounts| p.0.clear());
}

/// Writes what is pending into `relis_key_counts`, in the open transaction (just before it
/// commits).
///
/// # Errors
/// Storage errors; the transaction must then fail.
pub(crate) fn flush(conn: &Conn<'_>) -> Result<()> {
    let Some(pending) = conn
        .state()
        .existing(|p: &mut PendingCounts| std::mem::take(&mut p.0))
    else {
        return Ok(());
    };
    for (db, keys, expires) in pending {
        if keys != 0 || expires != 0 {
            prepare(
                conn,
                "INSERT INTO main.relis_key_counts (db, keys, expires) VALUES (?1, ?2, ?3)
                 ON CONFLICT (db) DO UPDATE SET keys = keys + excluded.keys,
                   expires = expires + excluded.expires",
            )?
            .execute((db, keys, expires))?;
        }
    }
    Ok(())
}

/// The stored counts of `db`, without what is pending: (keys, keys with an expiry).
fn stored(conn: &Conn<'_>, db: u32) -> Result<(i64, i64)> {
    Ok(prepare(
        conn,
        "SELECT keys, expires FROM main.relis_key_counts WHERE db = ?1",
    )?
    .query_row([db], |r| Ok((r.get(0)?, r.get(1)?)))
    .optional()?
    .unwrap_or((0, 0)))
}

fn pending(conn: &Conn<'_>, db: u32) -> (i64, i64) {
    conn.state()
        .existing(|p: &mut PendingCounts| p.of(db))
        .unwrap_or((0, 0))
}

/// The counts of `db` as this connection sees them: (keys, keys with an expiry).
///
/// # Errors
/// Storage errors only.
pub(crate) fn current(conn: &Conn<'_>, db: u32) -> Result<(i64, i64)> {
    let (k, e) = stored(conn, db)?;
    let (pk, pe) = pending(conn, db);
    Ok((k + pk, e + pe))
}

/// The counts of every database this connection sees a count for (zero ones included), in
/// database order: (database, keys, keys with an expiry).
///
/// # Errors
/// Storage errors only.
pub(crate) fn all(conn: &Conn<'_>) -> Result<Vec<(u32, i64, i64)>> {
    let mut out: Vec<(u32, i64, i64)> = {
        let mut st = prepare(
            conn,
            "SELECT db, keys, expires FROM main.relis_key_counts ORDER BY db",
        )?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    if let Some(pending) = conn.state().existing(|p: &mut PendingCounts| p.0.clone()) {
        for (db, keys, expires) in pending {
            match out.iter_mut().find(|c| c.0 == db) {
                Some(c) => {
                    c.1 += keys;
                    c.2 += expires;
                }
                None => out.push((db, keys, expires)),
            }
        }
        out.sort_unstable_by_key(|c| c.0);
    }
    Ok(out)
}

/// Makes the counts of `db` read `keys` and `expires` (FLUSHDB: none; SWAPDB: the other's).
///
/// # Errors
/// Storage errors only.
pub(crate) fn set(conn: &Conn<'_>, db: u32, (keys, expires): (i64, i64)) -> Result<()> {
    let (k, e) = current(conn, db)?;
    add(conn, db, keys - k, expires - e);
    Ok(())
}

/// Makes every database's counts read zero (FLUSHALL).
///
/// # Errors
/// Storage errors only.
pub(crate) fn clear_all(conn: &Conn<'_>) -> Result<()> {
    for (db, keys, expires) in all(conn)? {
        add(conn, db, -keys, -expires);
    }
    Ok(())
}
