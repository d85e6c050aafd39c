//! Prepared statements found by the address of their SQL text, kept by the connection's owner.
//!
//! rusqlite's `prepare_cached` finds a statement by hashing its SQL text, trims and copies the
//! text into a new `Arc<str>` each time, and hashes it again to hand the statement back: about
//! 1,100 instructions per use, a tenth of a small write's work on the writer, which runs
//! several statements per command. Relis's SQL is string literals, so a thread that keeps one
//! connection for its life (the writer, each pool reader, each thread's own reader of
//! `Db::read_here`) wraps it in a [`Conn`] that keeps its statements in a table keyed by the
//! literal's address and length: a binary search over a few hundred entries. Other connections
//! (named databases, tests' own) use an unkept [`Conn`] or [`cached`], which go on using
//! rusqlite's cache.
//!
//! The table holds `Statement<'c>`, borrowing the connection the `Conn` borrows. The table
//! sits in a `ManuallyDrop` so that a `Conn` has no drop glue and can be lent out as
//! `&'c Conn<'c>` (what `Reader` holds) for as long as it lives; its owner empties it with
//! [`Conn::finish`] (or a [`Finish`] guard) while the connection is still open. The
//! connections not kept by one thread for their whole life, the writer's (which the writer thread
//! and embedded callers of `Db::write` take turns on, behind a mutex) and the threads' own
//! readers (which the writer may end a snapshot on, behind a mutex too), are [`OwnedConn`]s: the
//! connection and its `Conn` in one value that can move between threads, the only `unsafe`
//! here.
//!
//! A `Conn` also carries the connection's own state for the layers above ([`ConnState`]): a
//! value per type, made on first use and kept for as long as the owner keeps the `Conn` (the
//! writer's copies of rank rows live there). The backend stores it without naming its types.
//!
//! The state also holds a [`KeysHook`]: while the writer keeps a key row pending in memory
//! (`store.rs`, `PendingRow`), [`prepare`] runs it before any statement whose SQL names
//! `relis_keys` (the table keeps that fact beside each statement), [`dynamic`] before such SQL
//! built at run time, and [`before_keys`] runs it for SQL the engine does not write (user SQL).

use rusqlite::{CachedStatement, Connection, PrepFlags, Statement};
use std::any::{Any, TypeId};
use std::cell::{Cell, RefCell};
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::rc::Rc;

/// A literal's address and length.
type Key = (usize, usize);

/// Kept statements, sorted by key, each with whether its SQL names `relis_keys` (see
/// [`KeysHook`]). A slot is empty while its statement is in use.
type Table<'c> = Vec<(Key, bool, Option<Statement<'c>>)>;

/// What must run before the next statement that reads or writes the key rows: writes the key
/// row kept pending in memory on this connection (`store.rs`, `PendingRow`). Set while one is
/// pending, taken (and so cleared) by the statement that runs it.
pub(crate) type KeysHook = fn(&Conn<'_>) -> rusqlite::Result<()>;

/// A connection's state for the layers above the backend: one value per type, made with
/// `Default` on first use. The backend keeps it without knowing what it holds, so it names no
/// data type (`types/` depends on `backend/`, never the reverse).
#[derive(Default)]
pub(crate) struct ConnState {
    values: RefCell<Vec<(TypeId, Rc<dyn Any>)>>,
    /// Run before the next statement that names `relis_keys` (see [`KeysHook`]).
    keys_hook: Cell<Option<KeysHook>>,
}

impl ConnState {
    /// Sets (or clears) what runs before the next statement naming `relis_keys`.
    pub(crate) fn set_keys_hook(&self, hook: Option<KeysHook>) {
        self.keys_hook.set(hook);
    }

    /// Whether a [`KeysHook`] is set: a key row is pending on this connection. One load, where
    /// finding the pending row itself takes a scan of the state.
    pub(crate) fn keys_pending(&self) -> bool {
        self.keys_hook.get().is_some()
    }

    /// Runs `f` on this connection's `T` (made on first use). `f` may use the state of other
    /// types, not `T`'s again (that panics, as a second `RefCell` borrow does).
    pub(crate) fn with<T: Default + 'static, R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let slot = self.slot::<T>().unwrap_or_else(|| {
            let slot: Rc<dyn Any> = Rc::new(RefCell::new(T::default()));
            self.values
                .borrow_mut()
                .push((TypeId::of::<T>(), slot.clone()));
            slot
        });
        Self::run(&slot, f)
    }

    /// Runs `f` on this connection's `T` if it has one (`None` otherwise, making nothing).
    pub(crate) fn existing<T: 'static, R>(&self, f: impl FnOnce(&mut T) -> R) -> Option<R> {
        self.slot::<T>().map(|slot| Self::run(&slot, f))
    }

    /// `T`'s slot, if made: a handle, so that the list is not borrowed while `f` runs.
    fn slot<T: 'static>(&self) -> Option<Rc<dyn Any>> {
        let id = TypeId::of::<T>();
        // A handful of types at most: a scan beats hashing.
        let slots = self.values.borrow();
        slots.iter().find(|e| e.0 == id).map(|e| e.1.clone())
    }

    fn run<T: 'static, R>(slot: &Rc<dyn Any>, f: impl FnOnce(&mut T) -> R) -> R {
        let cell = slot
            .downcast_ref::<RefCell<T>>()
            .expect("a state slot holds the type it is keyed by");
        f(&mut cell.borrow_mut())
    }
}

/// Where a [`Conn`]'s state is: its own, or lent by the `Conn` its owner keeps (a `Conn` made
/// again for the same connection by code that only has the rusqlite connection).
enum StateRef<'c> {
    Own(ConnState),
    Lent(&'c ConnState),
}

/// A connection as the engine uses it: the rusqlite connection, its state for the layers
/// above ([`ConnState`]) and, for a connection its thread keeps for life, the table of
/// statements prepared on it.
pub(crate) struct Conn<'c> {
    conn: &'c Connection,
    /// Whether statements are kept (else rusqlite's cache serves them).
    keeps: bool,
    table: ManuallyDrop<RefCell<Table<'c>>>,
    state: StateRef<'c>,
}

impl<'c> Conn<'c> {
    /// `conn` with a statement table: call [`Conn::finish`] (or hold a [`Finish`]) before the
    /// connection closes, or closing it fails with its statements still open.
    pub(crate) fn kept(conn: &'c Connection) -> Self {
        Conn {
            conn,
            keeps: true,
            table: ManuallyDrop::new(RefCell::new(Vec::new())),
            state: StateRef::Own(ConnState::default()),
        }
    }

    /// `conn` without a table: its statements come from rusqlite's cache. Its state starts
    /// empty and goes with it.
    pub(crate) fn unkept(conn: &'c Connection) -> Self {
        Conn::lent(conn, None)
    }

    /// `conn` without a table, with the state of the `Conn` its owner keeps for it (`state`,
    /// from [`Conn::state`]), or its own as [`Conn::unkept`] if none is lent.
    pub(crate) fn lent(conn: &'c Connection, state: Option<&'c ConnState>) -> Self {
        Conn {
            conn,
            keeps: false,
            table: ManuallyDrop::new(RefCell::new(Vec::new())),
            state: match state {
                Some(s) => StateRef::Lent(s),
                None => StateRef::Own(ConnState::default()),
            },
        }
    }

    /// This connection's state for the layers above (see [`ConnState`]).
    pub(crate) fn state(&self) -> &ConnState {
        match &self.state {
            StateRef::Own(s) => s,
            StateRef::Lent(s) => s,
        }
    }

    /// Finalizes the kept statements (the table stays usable and starts again empty).
    pub(crate) fn finish(&self) {
        let kept = std::mem::take(&mut *self.table.borrow_mut());
        // Finalized here, outside the table's borrow, while the connection is open.
        drop(kept);
    }
}

impl Deref for Conn<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn
    }
}

/// A connection that owns itself and its [`Conn`] (kept statements and state), which can move
/// from one thread to another between uses: the writer's connection, taken in turns by the
/// writer thread and by embedded callers writing on their own threads (`WriterCore` in
/// `db.rs`, behind a mutex). Its statements are finalized, then the connection closed, when it
/// is dropped.
pub(crate) struct OwnedConn {
    /// Borrows `*raw` (hence `'static`, which no user of it sees: see [`OwnedConn::get`]);
    /// finished and dropped before the connection is freed.
    conn: ManuallyDrop<Conn<'static>>,
    /// The connection, from `Box::into_raw`, freed in `drop`.
    raw: NonNull<Connection>,
}

// SAFETY: what keeps a `Conn` from being `Send` is what it holds of its own connection (its
// statements, which borrow it; `Rc`s in its state, whose clones never outlive a call to
// `ConnState::with`), all reachable only through this value, so they move together; and a
// SQLite connection and its statements may be used from any thread so long as never from two
// at once (SQLite's multi-thread mode), which `&mut`/`&` exclusivity plus the owner's mutex
// guarantee (`OwnedConn` is not `Sync`).
unsafe impl Send for OwnedConn {}

impl OwnedConn {
    /// Takes `conn` over, with an empty statement table and state.
    pub(crate) fn new(conn: Connection) -> Self {
        let raw = NonNull::from(Box::leak(Box::new(conn)));
        // SAFETY: `raw` stays allocated and unmoved until `drop`, which drops this `Conn`
        // (and with it every statement borrowing the connection) first.
        let conn: &'static Connection = unsafe { raw.as_ref() };
        OwnedConn {
            conn: ManuallyDrop::new(Conn::kept(conn)),
            raw,
        }
    }

    /// The connection, for as long as `self` is borrowed.
    pub(crate) fn get(&self) -> &Conn<'_> {
        let conn: &Conn<'static> = &self.conn;
        // SAFETY: shortening `'static` to the borrow of `self`. `Conn<'c>` is invariant in
        // `'c` only through its statement table (a `RefCell`): through the shorter view, code
        // could put a `Statement<'_>` of the shorter lifetime in it. The only code that puts
        // statements there, `prepare`'s `Stmt`, puts statements prepared on this `Conn`'s own
        // connection, which lives until `drop` finishes the table: every statement in it stays
        // valid as long as the table does, whatever lifetime the view gave it. Its state holds
        // `'static` values only.
        unsafe { std::mem::transmute::<&Conn<'static>, &Conn<'_>>(conn) }
    }
}

impl Drop for OwnedConn {
    fn drop(&mut self) {
        self.conn.finish();
        // SAFETY: not used again; after it nothing borrows the connection.
        unsafe { ManuallyDrop::drop(&mut self.conn) };
        // SAFETY: from `Box::leak` in `new`, freed only here.
        drop(unsafe { Box::from_raw(self.raw.as_ptr()) });
    }
}

/// Finishes a [`Conn`] when dropped, on unwinding too.
pub(crate) struct Finish<'a, 'c>(pub &'a Conn<'c>);

impl Drop for Finish<'_, '_> {
    fn drop(&mut self) {
        self.0.finish();
    }
}

/// Whether `sql` reads or writes the key rows: what must see a key row kept pending on the
/// connection written first (see [`KeysHook`]).
fn names_keys(sql: &str) -> bool {
    sql.contains("relis_keys")
}

/// Runs the connection's [`KeysHook`], if one is set: before SQL that may read or write the
/// key rows and that [`prepare`] does not see (user SQL, statements built at run time).
///
/// # Errors
/// The hook's storage error; the caller's transaction must fail.
pub(crate) fn before_keys(conn: &Conn<'_>) -> rusqlite::Result<()> {
    match conn.state().keys_hook.take() {
        Some(hook) => hook(conn),
        None => Ok(()),
    }
}

/// A prepared statement for `sql` on `conn`: kept for the next use when `conn` keeps
/// statements ([`Conn::kept`]), rusqlite's cached statement otherwise. If `sql` names
/// `relis_keys`, the connection's [`KeysHook`] runs first.
pub(crate) fn prepare<'a, 'c>(
    conn: &'a Conn<'c>,
    sql: &'static str,
) -> rusqlite::Result<Stmt<'a, 'c>> {
    if !conn.keeps {
        if conn.state().keys_pending() && names_keys(sql) {
            before_keys(conn)?;
        }
        return cached(conn.conn, sql);
    }
    let key = (sql.as_ptr() as usize, sql.len());
    let found = {
        let mut t = conn.table.borrow_mut();
        match t.binary_search_by_key(&key, |e| e.0) {
            Ok(i) => Some((t[i].1, t[i].2.take())),
            Err(_) => None,
        }
    };
    let keys = match found {
        Some((keys, _)) => keys,
        None => names_keys(sql),
    };
    if keys && conn.state().keys_pending() {
        if let Err(e) = before_keys(conn) {
            // Back in its slot, for the next use.
            drop(Stmt::Kept {
                stmt: found.and_then(|f| f.1),
                key,
                keys,
                table: &conn.table,
            });
            return Err(e);
        }
    }
    let stmt = match found.and_then(|f| f.1) {
        Some(stmt) => stmt,
        None => conn
            .conn
            .prepare_with_flags(sql, PrepFlags::SQLITE_PREPARE_PERSISTENT)?,
    };
    Ok(Stmt::Kept {
        stmt: Some(stmt),
        key,
        keys,
        table: &conn.table,
    })
}

/// A statement for `sql`, made at run time (a table's name, a list of placeholders), from
/// rusqlite's cache; the connection's [`KeysHook`] runs first if `sql` names `relis_keys`.
pub(crate) fn dynamic<'c>(conn: &'c Conn<'_>, sql: &str) -> rusqlite::Result<CachedStatement<'c>> {
    if conn.state().keys_pending() && names_keys(sql) {
        before_keys(conn)?;
    }
    conn.conn.prepare_cached(sql)
}

/// rusqlite's cached statement for `sql` on `conn` (a connection without a [`Conn`]).
pub(crate) fn cached<'a, 'c>(
    conn: &'c Connection,
    sql: &'static str,
) -> rusqlite::Result<Stmt<'a, 'c>> {
    conn.prepare_cached(sql).map(Stmt::Cached)
}

/// A statement from [`prepare`], handed back for the next use when dropped.
pub(crate) enum Stmt<'a, 'c> {
    /// From a keeping connection's table.
    Kept {
        stmt: Option<Statement<'c>>,
        key: Key,
        /// Whether its SQL names `relis_keys`.
        keys: bool,
        table: &'a RefCell<Table<'c>>,
    },
    /// From rusqlite's cache.
    Cached(CachedStatement<'c>),
}

impl<'c> Deref for Stmt<'_, 'c> {
    type Target = Statement<'c>;

    fn deref(&self) -> &Statement<'c> {
        match self {
            Stmt::Kept { stmt, .. } => stmt.as_ref().expect("a kept statement is there until drop"),
            Stmt::Cached(s) => s,
        }
    }
}

impl<'c> DerefMut for Stmt<'_, 'c> {
    fn deref_mut(&mut self) -> &mut Statement<'c> {
        match self {
            Stmt::Kept { stmt, .. } => stmt.as_mut().expect("a kept statement is there until drop"),
            Stmt::Cached(s) => s,
        }
    }
}

impl Drop for Stmt<'_, '_> {
    fn drop(&mut self) {
        let Stmt::Kept {
            stmt,
            key,
            keys,
            table,
        } = self
        else {
            return;
        };
        let Some(mut stmt) = stmt.take() else {
            return;
        };
        // A bound value (a large string, say) is not held until the next use.
        stmt.clear_bindings();
        let rejected = {
            let mut t = table.borrow_mut();
            match t.binary_search_by_key(key, |e| e.0) {
                Ok(i) if t[i].2.is_none() => {
                    t[i].2 = Some(stmt);
                    None
                }
                // The same SQL was in use twice at once: one copy is enough.
                Ok(_) => Some(stmt),
                Err(i) => {
                    t.insert(i, (*key, *keys, Some(stmt)));
                    None
                }
            }
        };
        // Finalized outside the table's borrow; the connection is still borrowed by `self`.
        drop(rejected);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INSERT: &str = "INSERT INTO t VALUES (?1)";
    const COUNT: &str = "SELECT count(*) FROM t";

    fn kept(c: &Conn<'_>) -> usize {
        c.table.borrow().iter().filter(|e| e.2.is_some()).count()
    }

    #[test]
    fn statements_are_kept_by_a_keeping_conn_only() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (x)").unwrap();
        let other = Connection::open_in_memory().unwrap();
        other.execute_batch("CREATE TABLE t (x)").unwrap();
        {
            let c = Conn::kept(&conn);
            let _finish = Finish(&c);
            for i in 0..3 {
                prepare(&c, INSERT).unwrap().execute([i]).unwrap();
            }
            assert_eq!(kept(&c), 1);
            // The same SQL in use twice at once (a statement run while another's rows are
            // read): two statements, one kept afterwards.
            {
                let mut outer = prepare(&c, COUNT).unwrap();
                let mut rows = outer.query([]).unwrap();
                let n: i64 = rows.next().unwrap().unwrap().get(0).unwrap();
                let inner: i64 = prepare(&c, COUNT)
                    .unwrap()
                    .query_row([], |r| r.get(0))
                    .unwrap();
                assert_eq!((n, inner), (3, 3));
            }
            assert_eq!(kept(&c), 2);
            // An unkept connection is served by rusqlite's cache and keeps nothing.
            let o = Conn::unkept(&other);
            prepare(&o, INSERT).unwrap().execute([9]).unwrap();
            let n: i64 = prepare(&o, COUNT)
                .unwrap()
                .query_row([], |r| r.get(0))
                .unwrap();
            assert_eq!((n, kept(&o)), (1, 0));
        }
        // The guard finalized the kept statements: the connection closes.
        conn.close().map_err(|(_, e)| e).unwrap();
    }

    /// A connection's state is one value per type, kept by its `Conn` (and seen through a
    /// `Conn` lent it), never shared with another connection's.
    #[test]
    fn state_is_per_type_and_per_connection() {
        let conn = Connection::open_in_memory().unwrap();
        let c = Conn::kept(&conn);
        assert_eq!(c.state().existing(|n: &mut u32| *n), None);
        c.state().with(|n: &mut u32| *n += 2);
        // Another type's state, used while the first is in use.
        c.state().with(|n: &mut u32| {
            c.state().with(|s: &mut String| s.push('x'));
            *n += 1
        });
        assert_eq!(c.state().existing(|n: &mut u32| *n), Some(3));
        let lent = Conn::lent(&conn, Some(c.state()));
        lent.state().with(|s: &mut String| s.push('y'));
        assert_eq!(c.state().with(|s: &mut String| s.clone()), "xy");
        let other = Conn::unkept(&conn);
        assert_eq!(other.state().existing(|n: &mut u32| *n), None);
        assert_eq!(other.state().with(|n: &mut u32| *n), 0);
    }

    #[test]
    fn finish_finalizes_the_kept_statements() {
        let conn = Connection::open_in_memory().unwrap();
        let c = Conn::kept(&conn);
        prepare(&c, "SELECT 1")
            .unwrap()
            .query_row([], |_| Ok(()))
            .unwrap();
        assert_eq!(kept(&c), 1);
        c.finish();
        assert_eq!(kept(&c), 0);
        conn.close().map_err(|(_, e)| e).unwrap();
    }
}
