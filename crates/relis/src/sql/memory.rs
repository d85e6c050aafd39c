//! SQLite's allocator with a budget for user SQL: while a user statement runs on a thread
//! (see `Sandbox::enter`), what SQLite allocates on that thread, less what it frees, is
//! counted, and an allocation past the statement's `max_memory` fails. SQLite answers a failed
//! allocation with SQLITE_NOMEM and undoes the statement (on the writer it may roll back the
//! whole transaction, which the transaction's owner is told of, as for an interrupt); the
//! sandbox reports it as [`crate::SqlError::TooMuchMemory`].
//!
//! Why: the length limit bounds each value and `max_bytes` the result, but a statement's own
//! working memory (a sort, DISTINCT, GROUP BY, a temporary b-tree, kept in memory on the
//! writer) was bounded by nothing: 40 rows of 60 MB sorted took the server to 2.6 GB.
//!
//! The page cache is not counted (`pcache.rs` marks its calls exempt): it is bounded by each
//! connection's `cache_size`, and a user's scan only moves pages through it. Outside user SQL
//! the wrappers cost a thread-local read per call.
//!
//! Installed process-wide before SQLite initialises (`db.rs` `configure_sqlite`), as the page
//! cache is; if the host program initialised SQLite first, nothing is counted and nothing is
//! refused.

use rusqlite::ffi::{
    sqlite3_config, sqlite3_mem_methods, SQLITE_CONFIG_GETMALLOC, SQLITE_CONFIG_MALLOC, SQLITE_OK,
};
use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::sync::OnceLock;

/// SQLite's default allocator.
struct Inner(sqlite3_mem_methods);

// SAFETY: function pointers and SQLite's own `pAppData`, only passed back to SQLite.
unsafe impl Send for Inner {}
unsafe impl Sync for Inner {}

static INNER: OnceLock<Inner> = OnceLock::new();

/// The running statement's budget on this thread.
#[derive(Clone, Copy)]
struct Budget {
    /// Bytes allocated less bytes freed since the statement began (frees of older memory
    /// may take it below zero).
    used: i64,
    limit: i64,
}

thread_local! {
    static BUDGET: Cell<Option<Budget>> = const { Cell::new(None) };
    /// Set while the page cache allocates or frees (not counted).
    static EXEMPT: Cell<bool> = const { Cell::new(false) };
    /// Set when an allocation was refused for the budget.
    static EXCEEDED: Cell<bool> = const { Cell::new(false) };
}

fn inner() -> &'static sqlite3_mem_methods {
    &INNER.get().expect("installed before use").0
}

/// The budget to count against now, if any.
fn counting() -> Option<Budget> {
    BUDGET.get().filter(|_| !EXEMPT.get())
}

fn add(delta: i64) {
    if let Some(mut b) = BUDGET.get() {
        b.used = b.used.saturating_add(delta);
        BUDGET.set(Some(b));
    }
}

/// Whether growing by `n` bytes stays within the budget (and, if not, records the refusal).
fn allows(b: Budget, n: i64) -> bool {
    if b.used.saturating_add(n) > b.limit {
        EXCEEDED.set(true);
        false
    } else {
        true
    }
}

unsafe extern "C" fn malloc(n: c_int) -> *mut c_void {
    let m = inner();
    let Some(b) = counting() else {
        return (m.xMalloc.expect("default malloc"))(n);
    };
    if !allows(b, i64::from(n)) {
        return std::ptr::null_mut();
    }
    let p = (m.xMalloc.expect("default malloc"))(n);
    if !p.is_null() {
        add(i64::from((m.xSize.expect("default size"))(p)));
    }
    p
}

unsafe extern "C" fn free(p: *mut c_void) {
    let m = inner();
    if !p.is_null() && counting().is_some() {
        add(-i64::from((m.xSize.expect("default size"))(p)));
    }
    (m.xFree.expect("default free"))(p)
}

unsafe extern "C" fn realloc(p: *mut c_void, n: c_int) -> *mut c_void {
    let m = inner();
    let Some(b) = counting() else {
        return (m.xRealloc.expect("default realloc"))(p, n);
    };
    let old = if p.is_null() {
        0
    } else {
        i64::from((m.xSize.expect("default size"))(p))
    };
    // A refused growth leaves `p` as it was, as a failed realloc does.
    if !allows(b, i64::from(n) - old) {
        return std::ptr::null_mut();
    }
    let q = (m.xRealloc.expect("default realloc"))(p, n);
    if !q.is_null() {
        add(i64::from((m.xSize.expect("default size"))(q)) - old);
    }
    q
}

unsafe extern "C" fn size(p: *mut c_void) -> c_int {
    (inner().xSize.expect("default size"))(p)
}

unsafe extern "C" fn roundup(n: c_int) -> c_int {
    (inner().xRoundup.expect("default roundup"))(n)
}

unsafe extern "C" fn init(arg: *mut c_void) -> c_int {
    (inner().xInit.expect("default init"))(arg)
}

unsafe extern "C" fn shutdown(arg: *mut c_void) {
    (inner().xShutdown.expect("default shutdown"))(arg)
}

/// Installs the counting allocator; call before SQLite is initialised. Does nothing if SQLite
/// refuses (it is initialised already).
pub(crate) fn install() {
    let mut default: sqlite3_mem_methods = unsafe { std::mem::zeroed() };
    // SAFETY: SQLITE_CONFIG_GETMALLOC fills in the struct it is given (before initialisation:
    // the default allocator's methods).
    let rc = unsafe {
        sqlite3_config(
            SQLITE_CONFIG_GETMALLOC,
            &mut default as *mut sqlite3_mem_methods,
        )
    };
    if rc != SQLITE_OK || default.xMalloc.is_none() || INNER.set(Inner(default)).is_err() {
        return;
    }
    let ours = sqlite3_mem_methods {
        xMalloc: Some(malloc),
        xFree: Some(free),
        xRealloc: Some(realloc),
        xSize: Some(size),
        xRoundup: Some(roundup),
        xInit: Some(init),
        xShutdown: Some(shutdown),
        pAppData: default.pAppData,
    };
    // SAFETY: SQLite copies the methods; they stay valid for the process's life.
    let rc = unsafe { sqlite3_config(SQLITE_CONFIG_MALLOC, &ours as *const sqlite3_mem_methods) };
    if rc != SQLITE_OK {
        tracing::debug!(
            "SQLite refused Relis's allocator ({rc}); user SQL's memory is not bounded"
        );
    }
}

/// Counts this thread's SQLite allocations against `limit` until the guard drops (the
/// previous budget, if calls nest, comes back then).
pub(crate) fn budget(limit: Option<usize>) -> Scope {
    let prev = BUDGET.replace(limit.map(|l| Budget {
        used: 0,
        limit: i64::try_from(l).unwrap_or(i64::MAX),
    }));
    EXCEEDED.set(false);
    Scope(prev)
}

/// Restores the previous budget when dropped.
pub(crate) struct Scope(Option<Budget>);

impl Drop for Scope {
    fn drop(&mut self) {
        BUDGET.set(self.0.take());
    }
}

/// Whether an allocation was refused for the budget since it began.
pub(crate) fn exceeded() -> bool {
    EXCEEDED.get()
}

/// Runs `f` (a page-cache call) without counting what it allocates or frees.
pub(crate) fn exempt<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            EXEMPT.set(self.0);
        }
    }
    let _reset = Reset(EXEMPT.replace(true));
    f()
}
