//! Prepared statements found by the address of their SQL text.
//!
//! rusqlite's `prepare_cached` finds a statement by hashing its SQL text, trims and copies the
//! text into a new `Arc<str>` each time, and hashes it again to hand the statement back: about
//! 1,100 instructions per use, a tenth of a small write's work on the writer, which runs
//! several statements per command. Relis's SQL is string literals, so a thread that keeps one
//! connection for its life (the writer, each pool reader) registers it and keeps its
//! statements in a table keyed by the literal's address and length: a binary search over a few
//! hundred entries. Other connections (the network threads' readers, named databases, tests'
//! own) go on using rusqlite's cache through the same call.

use rusqlite::{CachedStatement, Connection, PrepFlags, Statement};
use std::cell::RefCell;
use std::ops::{Deref, DerefMut};

/// A literal's address and length.
type Key = (usize, usize);

#[derive(Default)]
struct Table {
    /// The registered connection's address (0: none).
    conn: usize,
    /// Sorted by key. A slot is empty while its statement is in use.
    stmts: Vec<(Key, Option<Statement<'static>>)>,
}

thread_local! {
    static TABLE: RefCell<Table> = RefCell::default();
}

fn addr(conn: &Connection) -> usize {
    conn as *const Connection as usize
}

/// While this lives, statements that [`prepare`] makes for `conn` on this thread are kept.
pub(crate) struct Registration<'c> {
    conn: &'c Connection,
}

impl<'c> Registration<'c> {
    /// Keeps [`prepare`]'s statements for `conn` on this thread, unless another connection is
    /// registered on it already (a thread registers the one connection it keeps for its life).
    ///
    /// # Safety
    /// The registration must be dropped, not leaked (`mem::forget`), while `conn` is open:
    /// dropping it finalizes the statements kept for `conn`, which must happen before the
    /// connection closes (and before another connection can take its address).
    pub(crate) unsafe fn new(conn: &'c Connection) -> Self {
        TABLE.with(|t| {
            let mut t = t.borrow_mut();
            if t.conn == 0 {
                t.conn = addr(conn);
            }
        });
        Registration { conn }
    }
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        let kept = TABLE.with(|t| {
            let mut t = t.borrow_mut();
            if t.conn != addr(self.conn) {
                return Vec::new();
            }
            t.conn = 0;
            std::mem::take(&mut t.stmts)
        });
        // Finalized here, outside the table's borrow, while the connection is open.
        drop(kept);
    }
}

/// A prepared statement for `sql` on `conn`: kept for the next use when `conn` is registered
/// on this thread ([`Registration`]), rusqlite's cached statement otherwise.
pub(crate) fn prepare<'c>(conn: &'c Connection, sql: &'static str) -> rusqlite::Result<Stmt<'c>> {
    let key = (sql.as_ptr() as usize, sql.len());
    let c = addr(conn);
    let found = TABLE.with(|t| {
        let mut t = t.borrow_mut();
        if t.conn != c {
            return None;
        }
        Some(match t.stmts.binary_search_by_key(&key, |e| e.0) {
            Ok(i) => t.stmts[i].1.take(),
            Err(_) => None,
        })
    });
    let stmt = match found {
        None => return conn.prepare_cached(sql).map(Stmt::Cached),
        // SAFETY: kept only for this connection (`t.conn == c`); the lifetime is the borrow of
        // `conn` it came from.
        Some(Some(stmt)) => unsafe {
            std::mem::transmute::<Statement<'static>, Statement<'c>>(stmt)
        },
        Some(None) => conn.prepare_with_flags(sql, PrepFlags::SQLITE_PREPARE_PERSISTENT)?,
    };
    Ok(Stmt::Kept {
        stmt: Some(stmt),
        key,
        conn: c,
    })
}

/// A statement from [`prepare`], handed back for the next use when dropped.
pub(crate) enum Stmt<'c> {
    /// From the registered connection's table.
    Kept {
        stmt: Option<Statement<'c>>,
        key: Key,
        conn: usize,
    },
    /// From rusqlite's cache.
    Cached(CachedStatement<'c>),
}

impl<'c> Deref for Stmt<'c> {
    type Target = Statement<'c>;

    fn deref(&self) -> &Statement<'c> {
        match self {
            Stmt::Kept { stmt, .. } => stmt.as_ref().expect("a kept statement is there until drop"),
            Stmt::Cached(s) => s,
        }
    }
}

impl<'c> DerefMut for Stmt<'c> {
    fn deref_mut(&mut self) -> &mut Statement<'c> {
        match self {
            Stmt::Kept { stmt, .. } => stmt.as_mut().expect("a kept statement is there until drop"),
            Stmt::Cached(s) => s,
        }
    }
}

impl Drop for Stmt<'_> {
    fn drop(&mut self) {
        let Stmt::Kept { stmt, key, conn } = self else {
            return;
        };
        let Some(mut stmt) = stmt.take() else {
            return;
        };
        // A bound value (a large string, say) is not held until the next use.
        stmt.clear_bindings();
        // SAFETY: stored only while its connection is registered (checked below); the
        // registration finalizes it before the connection closes.
        let stmt = unsafe { std::mem::transmute::<Statement<'_>, Statement<'static>>(stmt) };
        let rejected = TABLE.with(|t| {
            let mut t = t.borrow_mut();
            if t.conn != *conn {
                return Some(stmt);
            }
            match t.stmts.binary_search_by_key(key, |e| e.0) {
                Ok(i) if t.stmts[i].1.is_none() => {
                    t.stmts[i].1 = Some(stmt);
                    None
                }
                // The same SQL was in use twice at once: one copy is enough.
                Ok(_) => Some(stmt),
                Err(i) => {
                    t.stmts.insert(i, (*key, Some(stmt)));
                    None
                }
            }
        });
        // Finalized outside the table's borrow; the connection is still borrowed by `self`.
        drop(rejected);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INSERT: &str = "INSERT INTO t VALUES (?1)";
    const COUNT: &str = "SELECT count(*) FROM t";

    fn kept() -> usize {
        TABLE.with(|t| t.borrow().stmts.iter().filter(|e| e.1.is_some()).count())
    }

    #[test]
    fn statements_are_kept_for_the_registered_connection_only() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (x)").unwrap();
        let other = Connection::open_in_memory().unwrap();
        other.execute_batch("CREATE TABLE t (x)").unwrap();
        {
            // SAFETY: dropped at the end of this block, before `conn`.
            let _reg = unsafe { Registration::new(&conn) };
            for i in 0..3 {
                prepare(&conn, INSERT).unwrap().execute([i]).unwrap();
            }
            assert_eq!(kept(), 1);
            // The same SQL in use twice at once (a statement run while another's rows are
            // read): two statements, one kept afterwards.
            {
                let mut outer = prepare(&conn, COUNT).unwrap();
                let mut rows = outer.query([]).unwrap();
                let n: i64 = rows.next().unwrap().unwrap().get(0).unwrap();
                let inner: i64 = prepare(&conn, COUNT)
                    .unwrap()
                    .query_row([], |r| r.get(0))
                    .unwrap();
                assert_eq!((n, inner), (3, 3));
            }
            assert_eq!(kept(), 2);
            // Another connection is served by rusqlite's cache and keeps nothing here.
            prepare(&other, INSERT).unwrap().execute([9]).unwrap();
            assert_eq!(kept(), 2);
            let n: i64 = prepare(&other, COUNT)
                .unwrap()
                .query_row([], |r| r.get(0))
                .unwrap();
            assert_eq!(n, 1);
        }
        // Dropping the registration finalized the kept statements: the connection closes.
        assert_eq!(kept(), 0);
        conn.close().map_err(|(_, e)| e).unwrap();
    }
}
