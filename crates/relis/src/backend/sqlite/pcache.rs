//! SQLite's page cache, with one cost taken out of commits.
//!
//! At the end of every write transaction SQLite's pager asks its page cache to drop the pages
//! past the end of the database (`xTruncate`). The default cache (pcache1) keeps the highest
//! page number it has ever held since its last truncation and, when a truncation is asked
//! below it, scans its whole hash table: one bucket per cached page. A B-tree page split
//! (`balance_nonroot`) briefly moves a page to a spare number past the end of the file, the
//! lock-byte page's for instance, and moves it back; the page is gone, but the high-water mark
//! stays, so the next commit scans everything. Under redis-benchmark's ZADD, with the
//! writer's cache holding a 13 MB file, that scan was a tenth of the writer's time (perf), and
//! it grows with the cache.
//!
//! This module installs, process-wide, a cache that is the default one plus that knowledge:
//! it remembers the highest page number fetched since the last truncation and the pages moved
//! to numbers past it, and skips a truncation that has nothing to drop. Everything else is the
//! default cache's own code. What the cache allocates and frees is not counted against user
//! SQL's working-memory budget (`sql/memory.rs`).
//!
//! A read-only connection's cache also follows its database's page log
//! ([`crate::backend::sqlite::pagelog`]): when SQLite empties it at the start of a read after a
//! commit, it drops only the pages the commits since its last read changed.

use crate::backend::sqlite::pagelog::{self, Follow, PageLog};
use rusqlite::ffi::{
    sqlite3_config, sqlite3_pcache, sqlite3_pcache_methods2, sqlite3_pcache_page,
    SQLITE_CONFIG_GETPCACHE2, SQLITE_CONFIG_PCACHE2, SQLITE_OK,
};
use std::ffi::{c_int, c_uint, c_void};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// The page cache's memory is bounded by each connection's cache size: not user SQL's working
/// memory (see `sql/memory.rs`).
use crate::sql::memory::exempt;

/// The default cache's methods.
struct Inner(sqlite3_pcache_methods2);

// SAFETY: function pointers and SQLite's own `pArg`, only passed back to SQLite.
unsafe impl Send for Inner {}
unsafe impl Sync for Inner {}

static INNER: OnceLock<Inner> = OnceLock::new();

/// Truncations skipped and passed on, and caches that stopped tracking moves, for tests.
static SKIPPED: AtomicU64 = AtomicU64::new(0);
static PASSED: AtomicU64 = AtomicU64::new(0);
static OVERFLOWS: AtomicU64 = AtomicU64::new(0);

/// Truncations skipped (nothing to drop) and passed to the default cache so far.
#[doc(hidden)]
pub fn truncations() -> (u64, u64) {
    (
        SKIPPED.load(Ordering::Relaxed),
        PASSED.load(Ordering::Relaxed),
    )
}

/// Times a cache moved more than [`MOVED_MAX`] pages past its limit between truncations.
#[doc(hidden)]
pub fn overflows() -> u64 {
    OVERFLOWS.load(Ordering::Relaxed)
}

fn inner() -> &'static sqlite3_pcache_methods2 {
    &INNER
        .get()
        .expect("the page cache is installed before use")
        .0
}

/// One connection's cache: the default one's, and what can be past a truncation limit.
struct Cache {
    inner: *mut sqlite3_pcache,
    /// The limit of the last truncation (`u32::MAX` before the first): every page numbered at
    /// or above it is at most `max_fetched`, or in `moved`.
    limit: c_uint,
    /// The highest page number fetched (and found or created) since the last truncation.
    max_fetched: c_uint,
    /// Pages moved to a number at or above `limit`, with that number. A map: a transaction that
    /// grows the file moves every page its splits allocate past the old end, thousands in one
    /// RDB import batch, and each move looks its page up (a list made that quadratic: 18% of
    /// an import's instructions). At most [`MOVED_MAX`] entries: past that, `overflowed`.
    moved: rustc_hash::FxHashMap<*mut sqlite3_pcache_page, c_uint>,
    /// More pages were moved past `limit` than `moved` keeps: the next truncation is passed on
    /// (nothing is known about what it may drop), and tracking starts again after it.
    overflowed: bool,
    /// A read-only connection's cache: the log of the pages commits change in its database,
    /// and where this cache is in it (see [`crate::backend::sqlite::pagelog`]).
    follows: Option<(Arc<PageLog>, Follow)>,
}

/// The most moved pages a cache tracks until its next truncation. A transaction that grows
/// the file by more, a replica's full sync of millions of keys, would keep a map entry for
/// every new page (hundreds of thousands, each move a cache miss: 3% of the sync's time, perf)
/// to spare one scan of the cache at its single commit, which costs less than that.
const MOVED_MAX: usize = 4096;

unsafe fn cache<'a>(p: *mut sqlite3_pcache) -> &'a mut Cache {
    // SAFETY (callers): `p` is a `Cache` made by `create` and not yet destroyed; SQLite calls
    // one cache's methods one at a time.
    unsafe { &mut *(p as *mut Cache) }
}

unsafe extern "C" fn init(_: *mut c_void) -> c_int {
    let i = inner();
    match i.xInit {
        // SAFETY: the default cache's own method and argument.
        Some(f) => unsafe { f(i.pArg) },
        None => SQLITE_OK,
    }
}

unsafe extern "C" fn shutdown(_: *mut c_void) {
    let i = inner();
    if let Some(f) = i.xShutdown {
        // SAFETY: as in `init`.
        unsafe { f(i.pArg) }
    }
}

unsafe extern "C" fn create(
    sz_page: c_int,
    sz_extra: c_int,
    purgeable: c_int,
) -> *mut sqlite3_pcache {
    // SAFETY: the default cache's method, with SQLite's arguments.
    let inner =
        exempt(|| unsafe { inner().xCreate.expect("xCreate")(sz_page, sz_extra, purgeable) });
    if inner.is_null() {
        return std::ptr::null_mut();
    }
    Box::into_raw(Box::new(Cache {
        inner,
        limit: c_uint::MAX,
        max_fetched: 0,
        moved: Default::default(),
        overflowed: false,
        follows: pagelog::log_for_new_cache().map(|log| (log, Follow::default())),
    })) as *mut sqlite3_pcache
}

unsafe extern "C" fn cachesize(p: *mut sqlite3_pcache, n: c_int) {
    // SAFETY: see `cache`; the default cache's method on its own cache.
    exempt(|| unsafe { inner().xCachesize.expect("xCachesize")(cache(p).inner, n) })
}

unsafe extern "C" fn pagecount(p: *mut sqlite3_pcache) -> c_int {
    // SAFETY: as in `cachesize`.
    unsafe { inner().xPagecount.expect("xPagecount")(cache(p).inner) }
}

unsafe extern "C" fn fetch(
    p: *mut sqlite3_pcache,
    key: c_uint,
    create: c_int,
) -> *mut sqlite3_pcache_page {
    // SAFETY: as in `cachesize`.
    let c = unsafe { cache(p) };
    let page = exempt(|| unsafe { inner().xFetch.expect("xFetch")(c.inner, key, create) });
    if !page.is_null() && key > c.max_fetched {
        c.max_fetched = key;
    }
    page
}

unsafe extern "C" fn unpin(p: *mut sqlite3_pcache, page: *mut sqlite3_pcache_page, discard: c_int) {
    // SAFETY: as in `cachesize`.
    let c = unsafe { cache(p) };
    if discard != 0 && !c.moved.is_empty() {
        c.moved.remove(&page);
    }
    exempt(|| unsafe { inner().xUnpin.expect("xUnpin")(c.inner, page, discard) })
}

unsafe extern "C" fn rekey(
    p: *mut sqlite3_pcache,
    page: *mut sqlite3_pcache_page,
    old: c_uint,
    new: c_uint,
) {
    // SAFETY: as in `cachesize`.
    let c = unsafe { cache(p) };
    if !c.overflowed {
        c.moved.remove(&page);
        if new >= c.limit {
            if c.moved.len() < MOVED_MAX {
                c.moved.insert(page, new);
            } else {
                c.overflowed = true;
                c.moved = Default::default();
                OVERFLOWS.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    unsafe { inner().xRekey.expect("xRekey")(c.inner, page, old, new) }
}

unsafe extern "C" fn truncate(p: *mut sqlite3_pcache, limit: c_uint) {
    // SAFETY: as in `cachesize`.
    let c = unsafe { cache(p) };
    // Emptied whole (page 1 not held): by a read-only connection beginning a read after a
    // commit, the pages no commit has changed since its last read may stay.
    if limit == 1 {
        if let Some((log, follow)) = &mut c.follows {
            let inner_cache = c.inner;
            // SAFETY: the default cache's own method on its own cache.
            let pages = unsafe { inner().xPagecount.expect("xPagecount")(inner_cache) };
            let kept = pagelog::on_reset(log, follow, pages.max(0) as u64, |page| {
                if page == 0 {
                    return;
                }
                // SAFETY: the default cache's own methods on its own cache: look the page up
                // without creating it, and discard it.
                unsafe {
                    let i = inner();
                    let found = i.xFetch.expect("xFetch")(inner_cache, page, 0);
                    if !found.is_null() {
                        exempt(|| i.xUnpin.expect("xUnpin")(inner_cache, found, 1));
                    }
                }
            });
            if kept {
                // Every page still cached was fetched: numbered at most `max_fetched`.
                c.limit = limit;
                c.moved.clear();
                c.overflowed = false;
                return;
            }
        }
    }
    // Nothing numbered `limit` or above can be there: every such page was fetched (so is at
    // most `max_fetched`) or moved there (so is in `moved`). A limit below the last one is
    // always passed on: pages between the two were never tracked.
    let empty = !c.overflowed
        && limit >= c.limit
        && c.max_fetched < limit
        && c.moved.values().all(|&k| k < limit);
    if empty {
        SKIPPED.fetch_add(1, Ordering::Relaxed);
    } else {
        PASSED.fetch_add(1, Ordering::Relaxed);
        exempt(|| unsafe { inner().xTruncate.expect("xTruncate")(c.inner, limit) });
        c.max_fetched = c.max_fetched.min(limit.saturating_sub(1));
    }
    c.limit = limit;
    c.moved.clear();
    c.overflowed = false;
}

unsafe extern "C" fn destroy(p: *mut sqlite3_pcache) {
    // SAFETY: made by `create`; SQLite destroys a cache once, and uses it no more.
    let c = unsafe { Box::from_raw(p as *mut Cache) };
    exempt(|| unsafe { inner().xDestroy.expect("xDestroy")(c.inner) })
}

unsafe extern "C" fn shrink(p: *mut sqlite3_pcache) {
    // SAFETY: as in `cachesize`.
    exempt(|| unsafe { inner().xShrink.expect("xShrink")(cache(p).inner) })
}

/// Installs the cache; call before SQLite is initialised (the first connection opens). Does
/// nothing if SQLite refuses (it is initialised already: the host program used it first).
pub(crate) fn install() {
    let mut default: sqlite3_pcache_methods2 = unsafe { std::mem::zeroed() };
    // SAFETY: SQLITE_CONFIG_GETPCACHE2 fills in the struct it is given; before initialisation
    // it first sets up the default cache's methods.
    let rc = unsafe {
        sqlite3_config(
            SQLITE_CONFIG_GETPCACHE2,
            &mut default as *mut sqlite3_pcache_methods2,
        )
    };
    if rc != SQLITE_OK || default.xCreate.is_none() || INNER.set(Inner(default)).is_err() {
        return;
    }
    let ours = sqlite3_pcache_methods2 {
        iVersion: INNER.get().map_or(1, |i| i.0.iVersion),
        pArg: std::ptr::null_mut(),
        xInit: Some(init),
        xShutdown: Some(shutdown),
        xCreate: Some(create),
        xCachesize: Some(cachesize),
        xPagecount: Some(pagecount),
        xFetch: Some(fetch),
        xUnpin: Some(unpin),
        xRekey: Some(rekey),
        xTruncate: Some(truncate),
        xDestroy: Some(destroy),
        xShrink: Some(shrink),
    };
    // SAFETY: SQLite copies the methods; they stay valid for the process's life.
    let rc = unsafe {
        sqlite3_config(
            SQLITE_CONFIG_PCACHE2,
            &ours as *const sqlite3_pcache_methods2,
        )
    };
    if rc != SQLITE_OK {
        tracing::debug!("SQLite refused Relis's page cache ({rc}); using its default");
    }
}
