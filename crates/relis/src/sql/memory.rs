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
//!
//! The memory itself comes from Rust's global allocator (mimalloc in relis-server), each block
//! with its size in a 16-byte header, not from the C library's `malloc`: SQLite's page caches
//! grow by thousands of blocks in a bulk load, and glibc grew a thread's heap a page or two at
//! a time, an `mprotect` each (about 8% of the writer's time in a replica's full sync of 1M
//! keys; the sync 7-10% faster with the global allocator, BENCHMARKS.md).

use rusqlite::ffi::{sqlite3_config, sqlite3_mem_methods, SQLITE_CONFIG_MALLOC, SQLITE_OK};
use std::cell::Cell;
use std::ffi::{c_int, c_void};

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
    let Some(b) = counting() else {
        return base_malloc(n);
    };
    if !allows(b, i64::from(n)) {
        return std::ptr::null_mut();
    }
    let p = base_malloc(n);
    if !p.is_null() {
        add(i64::from(base_size(p)));
    }
    p
}

unsafe extern "C" fn free(p: *mut c_void) {
    if !p.is_null() && counting().is_some() {
        add(-i64::from(base_size(p)));
    }
    base_free(p)
}

unsafe extern "C" fn realloc(p: *mut c_void, n: c_int) -> *mut c_void {
    let Some(b) = counting() else {
        return base_realloc(p, n);
    };
    let old = if p.is_null() {
        0
    } else {
        i64::from(base_size(p))
    };
    // A refused growth leaves `p` as it was, as a failed realloc does.
    if !allows(b, i64::from(n) - old) {
        return std::ptr::null_mut();
    }
    let q = base_realloc(p, n);
    if !q.is_null() {
        add(i64::from(base_size(q)) - old);
    }
    q
}

unsafe extern "C" fn size(p: *mut c_void) -> c_int {
    base_size(p)
}

unsafe extern "C" fn roundup(n: c_int) -> c_int {
    // (SQLite asks no more than its allocation limit, far below this.)
    if n > c_int::MAX - 7 {
        n
    } else {
        (n + 7) & !7
    }
}

unsafe extern "C" fn init(_: *mut c_void) -> c_int {
    SQLITE_OK
}

unsafe extern "C" fn shutdown(_: *mut c_void) {}

/// Bytes before each block: its size (SQLite asks for it back, and freeing needs it).
const HEAD: usize = 16;

fn rust_layout(n: usize) -> Option<std::alloc::Layout> {
    std::alloc::Layout::from_size_align(n.checked_add(HEAD)?, HEAD).ok()
}

unsafe fn base_malloc(n: c_int) -> *mut c_void {
    let n = usize::try_from(n).unwrap_or(0);
    let Some(layout) = rust_layout(n) else {
        return std::ptr::null_mut();
    };
    // SAFETY: a layout of at least HEAD bytes; the size is written where `base_size` reads it.
    unsafe {
        let p = std::alloc::alloc(layout);
        if p.is_null() {
            return std::ptr::null_mut();
        }
        p.cast::<usize>().write(n);
        p.add(HEAD).cast()
    }
}

unsafe fn base_free(p: *mut c_void) {
    if p.is_null() {
        return;
    }
    // SAFETY: `p` came from `base_malloc`/`base_realloc`: its block starts HEAD bytes before,
    // with its size, and was allocated with that layout.
    unsafe {
        let block = p.cast::<u8>().sub(HEAD);
        let n = block.cast::<usize>().read();
        std::alloc::dealloc(block, rust_layout(n).expect("a layout it was made with"));
    }
}

unsafe fn base_realloc(p: *mut c_void, n: c_int) -> *mut c_void {
    if p.is_null() {
        // SAFETY: as base_malloc.
        return unsafe { base_malloc(n) };
    }
    let n = usize::try_from(n).unwrap_or(0);
    if rust_layout(n).is_none() {
        return std::ptr::null_mut();
    }
    // SAFETY: as base_free; the new size is written where `base_size` reads it.
    unsafe {
        let block = p.cast::<u8>().sub(HEAD);
        let old = block.cast::<usize>().read();
        let q = std::alloc::realloc(block, rust_layout(old).expect("its layout"), n + HEAD);
        if q.is_null() {
            return std::ptr::null_mut();
        }
        q.cast::<usize>().write(n);
        q.add(HEAD).cast()
    }
}

unsafe fn base_size(p: *mut c_void) -> c_int {
    if p.is_null() {
        return 0;
    }
    // SAFETY: as base_free.
    unsafe { c_int::try_from(p.cast::<u8>().sub(HEAD).cast::<usize>().read()).unwrap_or(0) }
}

/// Installs the counting allocator; call before SQLite is initialised. Does nothing if SQLite
/// refuses (it is initialised already).
pub(crate) fn install() {
    let ours = sqlite3_mem_methods {
        xMalloc: Some(malloc),
        xFree: Some(free),
        xRealloc: Some(realloc),
        xSize: Some(size),
        xRoundup: Some(roundup),
        xInit: Some(init),
        xShutdown: Some(shutdown),
        pAppData: std::ptr::null_mut(),
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
