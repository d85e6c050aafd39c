//! The memory an engine's SQLite connections hold: the writer's page cache, each reader's page
//! cache and memory map, sized by [`CacheSizes`] (changeable while the engine runs, see
//! [`crate::Db::set_cache_sizes`]), and what each holds now ([`CacheUse`], for INFO memory).
//!
//! A connection's figures are SQLite's (`sqlite3_db_status(SQLITE_DBSTATUS_CACHE_USED)`), read
//! by the thread that owns the connection after its work and published in an atomic: SQLite's
//! connections are opened without their mutex, so no other thread may ask them.

use parking_lot::Mutex;
use rusqlite::Connection;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

/// The writer's page cache by default ([`CacheSizes::writer`]). It held 128 MiB, each reader
/// 32 MiB and a 1 GiB map before these were settings: with 5M keys of 100-byte strings (a
/// 790 MB file) the server's resident set was then 921 MB against redis-server's 1040 MB for
/// the same keys, 765 MB of it the file's pages read through the maps; with these defaults it
/// was 77 MB against 976 MB (`bench/memory.sh`, BENCHMARKS.md). Loading 2M keys took the same
/// time and server CPU with both (interleaved runs), and `bench/compare.sh` SET/GET on 100K
/// keys moved within its noise: those pages fit in either. A cache holds the hot pages (the
/// B-trees' interior ones); a miss copies the page from the OS's file cache (a `pread`).
pub const WRITER_CACHE: u64 = 32 << 20;

/// Each reader's page cache by default ([`CacheSizes::reader`]); see [`WRITER_CACHE`].
pub const READER_CACHE: u64 = 16 << 20;

/// Each reader's memory map of the file by default ([`CacheSizes::mmap`]): none. Mapped pages a
/// reader has touched stay in the process's resident set (they are the OS's file cache, shared
/// and reclaimable, but counted in RSS, once per reader that mapped them), so a map as large as
/// the file makes the resident set grow to the file's size under reads. Without it a read
/// copies each page its cache misses from the OS's cache. That costs a store larger than the
/// caches: on 1M keys read at random, GET took 15-30% more server CPU per request than with a
/// 1 GiB map (SET the same); where memory is plentiful and reads dominate, a map as large as
/// the file is the faster choice.
pub const MMAP_SIZE: u64 = 0;

/// The largest memory map SQLite takes (`SQLITE_MAX_MMAP_SIZE`, as built here): a larger
/// [`CacheSizes::mmap`] is taken as this.
pub const MAX_MMAP_SIZE: u64 = 0x7fff_0000;

/// How much memory an engine's SQLite connections may hold, in bytes. Each connection's page
/// cache is its own (see [`CacheUse`]) and holds at most its size: together at most the
/// writer's size and each reader's, added up, and the checkpointer's 256 KiB (with SQLite's
/// page headers, about a tenth more).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheSizes {
    /// The writer connection's page cache (SQLite's `cache_size`), [`WRITER_CACHE`] by default.
    /// A write transaction that changes more pages than this spills some to the WAL early.
    pub writer: u64,
    /// Each reader connection's page cache, [`READER_CACHE`] by default. Readers are the
    /// reader threads ([`crate::Options::readers`]) and each thread that reads with
    /// [`crate::Db::read_here`].
    pub reader: u64,
    /// How much of the file each reader maps into memory (SQLite's `mmap_size`; 0: none, read
    /// with `pread`), [`MMAP_SIZE`] by default. The maps share the OS's cache of the file; the
    /// pages read through them count in the resident set.
    pub mmap: u64,
}

impl Default for CacheSizes {
    fn default() -> Self {
        CacheSizes {
            writer: WRITER_CACHE,
            reader: READER_CACHE,
            mmap: MMAP_SIZE,
        }
    }
}

/// What an engine's caches hold now ([`crate::Db::cache_use`]). SQLite as Relis builds it
/// (without `SQLITE_ENABLE_MEMORY_MANAGEMENT`: the workspace's `.cargo/config.toml`) gives each
/// connection a cache of its own; a build of this crate outside the workspace gets SQLite's
/// default, one process-wide pool, where a full cache takes the least recently used page of
/// any other, so one may hold more than its size while another holds less (the sum is bounded
/// the same way). A reader's cache keeps its pages across commits, less those the commits
/// changed ([`crate::backend::sqlite::pagelog`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheUse {
    /// The sizes they are held to.
    pub sizes: CacheSizes,
    /// Bytes in the writer's page cache (as of its last commit).
    pub writer: u64,
    /// Bytes in the readers' page caches, all of them (as of each one's last read).
    pub readers: u64,
    /// Reader connections open: the reader threads' and those of threads that read in place.
    pub reader_connections: usize,
    /// Bytes of the database file mapped by readers and resident now (Linux; 0 elsewhere, or
    /// without a file).
    pub mapped: u64,
}

/// One reader connection's published figures.
#[derive(Default)]
pub(crate) struct ReaderSlot {
    /// Bytes in its page cache after its last read.
    used: AtomicU64,
    /// The [`CacheState::generation`] of the sizes it was last set to (only its thread writes).
    applied: AtomicU64,
}

/// An engine's cache sizes and the figures its connections publish.
pub(crate) struct CacheState {
    sizes: Mutex<CacheSizes>,
    /// Bumped by every change of `sizes`: a reader whose `applied` differs sets itself again.
    generation: AtomicU64,
    /// Bytes in the writer's page cache after its last commit.
    pub(crate) writer_used: AtomicU64,
    readers: Mutex<Vec<Weak<ReaderSlot>>>,
}

impl Default for CacheState {
    fn default() -> Self {
        CacheState {
            sizes: Mutex::new(CacheSizes::default()),
            generation: AtomicU64::new(0),
            writer_used: AtomicU64::new(0),
            readers: Mutex::new(Vec::new()),
        }
    }
}

impl CacheState {
    pub(crate) fn sizes(&self) -> CacheSizes {
        *self.sizes.lock()
    }

    /// Records new sizes; readers take them at their next read, the writer when its job (sent
    /// by the caller) runs.
    pub(crate) fn set(&self, sizes: CacheSizes) {
        *self.sizes.lock() = sizes;
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// A new reader connection's slot, counted until it is dropped. The caller has sized the
    /// connection with [`CacheState::sizes`] taken before this call.
    pub(crate) fn register(&self, generation: u64) -> Arc<ReaderSlot> {
        let slot = Arc::new(ReaderSlot::default());
        slot.applied.store(generation, Ordering::Relaxed);
        let mut all = self.readers.lock();
        all.retain(|r| r.strong_count() > 0);
        all.push(Arc::downgrade(&slot));
        slot
    }

    /// The generation and sizes now, to size a new connection with before registering it.
    pub(crate) fn current(&self) -> (u64, CacheSizes) {
        let sizes = self.sizes.lock();
        (self.generation.load(Ordering::Acquire), *sizes)
    }

    /// Sets reader `conn` to the current sizes if they changed since it was last set. Called
    /// by its own thread outside any transaction (a memory map is not replaced under pages in
    /// use).
    pub(crate) fn refresh_reader(&self, conn: &Connection, slot: &ReaderSlot) {
        let now = self.generation.load(Ordering::Acquire);
        if slot.applied.load(Ordering::Relaxed) == now {
            return;
        }
        let (generation, sizes) = self.current();
        if let Err(e) = size_reader(conn, sizes) {
            tracing::warn!("cannot resize a reader's cache: {e}");
        }
        slot.applied.store(generation, Ordering::Relaxed);
    }

    /// Publishes what reader `conn`'s page cache holds (by its own thread).
    pub(crate) fn note_reader(conn: &Connection, slot: &ReaderSlot) {
        slot.used.store(cache_used(conn), Ordering::Relaxed);
    }

    /// The figures now; `path` is the database file (for the resident part of its maps).
    pub(crate) fn usage(&self, path: Option<&Path>) -> CacheUse {
        let slots: Vec<_> = self
            .readers
            .lock()
            .iter()
            .filter_map(|r| r.upgrade())
            .collect();
        CacheUse {
            sizes: self.sizes(),
            writer: self.writer_used.load(Ordering::Relaxed),
            readers: slots.iter().map(|s| s.used.load(Ordering::Relaxed)).sum(),
            reader_connections: slots.len(),
            mapped: path.map_or(0, mapped_resident),
        }
    }
}

impl std::fmt::Debug for CacheState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheState")
            .field("sizes", &self.sizes())
            .finish_non_exhaustive()
    }
}

/// SQLite's `cache_size` in KiB (negative: a size in KiB rather than in pages), at least one.
fn cache_kib(bytes: u64) -> i64 {
    -((bytes / 1024).clamp(1, i32::MAX as u64) as i64)
}

/// Sizes the writer's page cache.
pub(crate) fn size_writer(conn: &Connection, sizes: CacheSizes) -> rusqlite::Result<()> {
    conn.pragma_update(None, "cache_size", cache_kib(sizes.writer))
}

/// The checkpointer connection's page cache: it reads little through it (see
/// [`size_checkpointer`]).
pub(crate) const CHECKPOINTER_CACHE: u64 = 256 << 10;

/// Sizes the checkpointer's page cache ([`CHECKPOINTER_CACHE`]).
pub(crate) fn size_checkpointer(conn: &Connection) -> rusqlite::Result<()> {
    conn.pragma_update(None, "cache_size", cache_kib(CHECKPOINTER_CACHE))
}

/// Sizes a reader's page cache and memory map.
pub(crate) fn size_reader(conn: &Connection, sizes: CacheSizes) -> rusqlite::Result<()> {
    conn.pragma_update(None, "cache_size", cache_kib(sizes.reader))?;
    // The pragma answers with the size it took; pragma_update ignores a returned row.
    conn.pragma_update(None, "mmap_size", sizes.mmap.min(MAX_MMAP_SIZE) as i64)
}

/// Bytes `conn`'s page cache holds now (SQLite's own count: pages and their headers).
/// (At most its `cache_size`, with headers: see [`CacheUse`].)
pub(crate) fn cache_used(conn: &Connection) -> u64 {
    let (mut cur, mut hi) = (0, 0);
    // SAFETY: `conn` is open and used by this thread only; SQLite writes the two ints.
    let rc = unsafe {
        rusqlite::ffi::sqlite3_db_status(
            conn.handle(),
            rusqlite::ffi::SQLITE_DBSTATUS_CACHE_USED,
            &mut cur,
            &mut hi,
            0,
        )
    };
    if rc == rusqlite::ffi::SQLITE_OK {
        cur.max(0) as u64
    } else {
        0
    }
}

/// Resident bytes of the mappings of `path` in this process (`/proc/self/smaps`).
#[cfg(target_os = "linux")]
fn mapped_resident(path: &Path) -> u64 {
    let Ok(path) = std::fs::canonicalize(path) else {
        return 0;
    };
    let Ok(text) = std::fs::read_to_string("/proc/self/smaps") else {
        return 0;
    };
    let path = path.to_string_lossy();
    let mut total = 0;
    let mut inside = false;
    for line in text.lines() {
        // A mapping's header: "start-end perms offset dev inode [path]"; its fields follow.
        let mut words = line.split_whitespace();
        let first = words.next().unwrap_or("");
        if first.contains('-') && !first.ends_with(':') {
            inside = line.ends_with(&*path)
                && line[..line.len() - path.len()].ends_with(char::is_whitespace);
        } else if inside && first == "Rss:" {
            let kb: u64 = words.next().and_then(|n| n.parse().ok()).unwrap_or(0);
            total += kb * 1024;
        }
    }
    total
}

#[cfg(not(target_os = "linux"))]
fn mapped_resident(_: &Path) -> u64 {
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Db, Options};

    const MIB: u64 = 1 << 20;

    /// `n` keys of 100-byte values, committed in groups.
    fn fill(db: &Db, n: usize) {
        for chunk in (0..n).collect::<Vec<_>>().chunks(1000) {
            let pairs: Vec<(Vec<u8>, Vec<u8>)> = chunk
                .iter()
                .map(|i| (format!("key:{i:012}").into_bytes(), vec![b'x'; 100]))
                .collect();
            db.mset(&pairs).unwrap();
        }
    }

    /// Reads every key on the calling thread's reader and once through the reader threads.
    fn read_all(db: &Db, n: usize) {
        db.read_here(|r| {
            for i in 0..n {
                assert!(r
                    .get(0, format!("key:{i:012}").as_bytes())
                    .unwrap()
                    .is_some());
            }
        })
        .unwrap()
        .unwrap();
        let (tx, rx) = crossbeam_channel::bounded(1);
        db.read_async(
            move |r| {
                for i in 0..n {
                    r.get(0, format!("key:{i:012}").as_bytes())?;
                }
                crate::Result::Ok(())
            },
            move |done| tx.send(done.and_then(|r| r)).unwrap(),
        );
        rx.recv().unwrap().unwrap();
    }

    fn pragma(db: &Db, name: &'static str) -> (i64, i64) {
        let sql = format!("PRAGMA {name}");
        let writer = {
            let sql = sql.clone();
            db.write(move |w| Ok(w.conn.query_row(&sql, [], |r| r.get(0))?))
                .unwrap()
        };
        let reader = db
            .read_here(|r| r.conn.query_row(&sql, [], |r| r.get::<_, i64>(0)))
            .unwrap()
            .unwrap()
            .unwrap();
        (writer, reader)
    }

    /// A resize reaches the writer before the writes queued after it, even those that land in
    /// the same group (a replica's full sync resizes, then loads in one long write).
    #[test]
    fn the_writer_resizes_before_the_writes_queued_after() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path().join("r.db")).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        // The writer is busy while the resize and the next write are queued: it takes both
        // into its next group.
        db.write_async(
            |_| std::thread::sleep(std::time::Duration::from_millis(100)),
            |_| {},
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
        db.set_cache_sizes(CacheSizes {
            writer: 3 * MIB,
            ..CacheSizes::default()
        });
        db.write_async(
            |w| {
                w.conn
                    .query_row("PRAGMA cache_size", [], |r| r.get::<_, i64>(0))
            },
            move |r| tx.send(r).unwrap(),
        );
        assert_eq!(rx.recv().unwrap().unwrap().unwrap(), -3 * 1024);
    }

    /// The options size the caches (a 6 MB file overflows a 2 MiB writer cache, not the default
    /// one), and the figures say what they hold.
    #[test]
    fn options_size_the_caches_and_their_use_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let sizes = CacheSizes {
            writer: 2 * MIB,
            reader: MIB,
            mmap: 0,
        };
        let db = Db::open_with(Options {
            readers: 2,
            caches: sizes,
            ..Options::file(dir.path().join("c.db"))
        })
        .unwrap();
        fill(&db, 40_000);
        read_all(&db, 40_000);
        assert_eq!(pragma(&db, "cache_size"), (-2048, -1024));
        let u = db.cache_use();
        assert_eq!(u.sizes, sizes);
        // Two reader threads (one has read) and this thread's reader.
        assert_eq!(u.reader_connections, 3, "{u:?}");
        // Only that they hold something: how much they hold is tests/caches.rs's.
        assert!(u.writer > 0 && u.readers > 0, "{u:?}");
        assert_eq!(u.mapped, 0, "{u:?}");
        assert_eq!(pragma(&db, "mmap_size").1, 0);
    }

    /// New sizes reach the writer after its group commits and each reader at its next read in
    /// a new transaction; a reader's map, once read through, is resident.
    #[test]
    fn sizes_change_while_the_engine_runs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.db");
        {
            let db = Db::open(&path).unwrap();
            fill(&db, 20_000);
        } // closed: the WAL is folded into the file, which maps then hold every page of
        let db = Db::open_with(Options {
            readers: 1,
            ..Options::file(&path)
        })
        .unwrap();
        assert_eq!(db.cache_use().sizes, CacheSizes::default());
        read_all(&db, 20_000);
        let before = db.cache_use();
        assert!(before.writer <= 2 * MIB, "{before:?}");
        assert!(before.readers > 2 * MIB, "{before:?}");
        let sizes = CacheSizes {
            writer: MIB,
            reader: MIB,
            mmap: 64 * MIB,
        };
        db.set_cache_sizes(sizes);
        // The next write (here the one reading the pragma) already runs with the new sizes.
        assert_eq!(pragma(&db, "cache_size"), (-1024, -1024));
        assert_eq!(pragma(&db, "mmap_size").1, (64 * MIB) as i64);
        read_all(&db, 20_000);
        let after = db.cache_use();
        assert_eq!(after.sizes, sizes);
        assert_eq!(after.reader_connections, 2, "{after:?}");
        assert!(after.mapped > MIB, "{after:?}");
        // A map beyond SQLite's limit is taken as the limit.
        db.set_cache_sizes(CacheSizes {
            mmap: u64::MAX,
            ..sizes
        });
        assert_eq!(pragma(&db, "mmap_size").1, MAX_MMAP_SIZE as i64);
    }
}
