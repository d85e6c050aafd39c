//! The pages each commit changed, so that a reader keeps the rest of its page cache.
//!
//! In WAL mode SQLite cannot tell which pages another connection's commit changed: a
//! connection that begins a read after any commit empties its whole page cache
//! (`pagerBeginReadTransaction` -> `pager_reset`), and under a mix of reads and writes the
//! readers copy nearly every page they need from the OS's cache again (GET at `-P 16` took
//! 50-100% more CPU with one client writing 5,000 keys a second beside it; BENCHMARKS.md).
//!
//! Every connection of the process goes through the WAL shim ([`crate::backend::sqlite::walwrite`]),
//! which sees each frame SQLite appends to a WAL before the commit is published, and each
//! lock on the WAL index. This log, one per database file, keeps the page numbers of the last
//! [`RING`] frames written, numbered in the order they were written (`registered`), and how
//! many of them belong to transactions that are over (`published`: committed and visible, or
//! rolled back), counted when the writer lets the WAL's write lock go.
//!
//! A reader's page cache ([`crate::backend::sqlite::pcache`]) follows the log when it was made
//! while its connection opened ([`opening_reader`]); the connection is read-only, so its cache
//! only ever holds committed pages. When SQLite empties such a cache at the start of a read,
//! the cache drops only the pages registered since the floor of its previous read, and keeps
//! the rest: a page no frame has rewritten since holds what the new snapshot holds. The floor
//! is `published` as read when the read lock is taken ([`read_locked`]), before SQLite checks
//! that its snapshot is still the newest: every frame counted by then is in the snapshot or
//! was abandoned, and every frame the snapshot has was registered before the cache is asked.
//!
//! Writes from outside the process (or through another VFS) are not in the log. They show in
//! the WAL index header: the shim compares it with the state the process's own last commit
//! left (its salts and last frame) when a read lock is taken, and when the process's writer
//! takes the write lock. A reader that finds another state empties its whole cache, as SQLite
//! would; a writer that finds one moves the log's `epoch` on, which every following cache
//! obeys by emptying itself at its next read. Anything unusual (the ring wrapped past a cache's
//! floor, the WAL restarted by a checkpoint) takes the same safe path: everything is dropped;
//! so does a cache that more pages changed in than it holds, for which that is cheaper.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// Frames remembered: a cache whose floor is further back empties itself.
pub(crate) const RING: u64 = 1 << 16;

/// The WAL's header, before the first frame.
pub(crate) const WAL_HEADER: i64 = 32;
/// A frame's header; its bytes 4..8 are the database's size in pages after a commit frame, 0 in
/// any other frame.
pub(crate) const FRAME_HEADER: i64 = 24;

/// Where a commit left the WAL: its salts (as SQLite copies them into every frame header and
/// the WAL index header) and the offset of its last frame's header (0: no frame, a WAL
/// restarted and empty).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct WalState {
    salt: [u8; 8],
    last_frame: i64,
}

/// What the WAL index header says (its first copy).
#[derive(Clone, Copy, Debug)]
pub(crate) struct IndexHeader {
    salt: [u8; 8],
    max_frame: u32,
    page_size: u32,
}

impl IndexHeader {
    /// Reads the first copy of the header at `shm` (region 0 of the WAL index).
    ///
    /// # Safety
    /// `shm` points to a mapped WAL index region of at least 48 bytes.
    pub(crate) unsafe fn read(shm: *const u8) -> IndexHeader {
        // Volatile: another thread or process writes it.
        let u32_at = |off: usize| unsafe { std::ptr::read_volatile(shm.add(off).cast::<u32>()) };
        let u16_at = |off: usize| unsafe { std::ptr::read_volatile(shm.add(off).cast::<u16>()) };
        let mut salt = [0u8; 8];
        for (i, b) in salt.iter_mut().enumerate() {
            *b = unsafe { std::ptr::read_volatile(shm.add(32 + i)) };
        }
        let size = u32::from(u16_at(14));
        IndexHeader {
            salt,
            max_frame: u32_at(16),
            // Stored as in the WAL header: 1 stands for 65,536.
            page_size: if size == 1 { 65_536 } else { size },
        }
    }

    fn is(&self, state: Option<WalState>) -> bool {
        state == Some(self.state())
    }

    fn state(&self) -> WalState {
        WalState {
            salt: self.salt,
            last_frame: if self.max_frame == 0 {
                0
            } else {
                WAL_HEADER
                    + (i64::from(self.max_frame) - 1) * (FRAME_HEADER + i64::from(self.page_size))
            },
        }
    }
}

/// One database file's log.
pub(crate) struct PageLog {
    ring: Box<[AtomicU32]>,
    /// Frames registered so far (the next one's number).
    registered: AtomicU64,
    /// Frames of transactions that are over.
    published: AtomicU64,
    /// Moved on when a write from outside the log is found: caches of an older epoch empty.
    epoch: AtomicU64,
    states: Mutex<States>,
}

#[derive(Default)]
struct States {
    /// The state the last transaction that ended left.
    known: Option<WalState>,
    /// The state the transaction in progress leaves once it commits.
    pending: Option<WalState>,
}

/// The logs of the files open in the process, by device and inode.
type Logs = Mutex<HashMap<(u64, u64), Weak<PageLog>>>;

fn logs() -> &'static Logs {
    static LOGS: OnceLock<Logs> = OnceLock::new();
    LOGS.get_or_init(Default::default)
}

/// The log of the database file at `path` (the same for every name of the file), made if no
/// connection of the process has it; `None` if the file cannot be looked at.
pub(crate) fn for_file(path: &std::path::Path) -> Option<Arc<PageLog>> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    let id = (meta.dev(), meta.ino());
    let mut logs = logs().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(log) = logs.get(&id).and_then(Weak::upgrade) {
        return Some(log);
    }
    logs.retain(|_, w| w.strong_count() > 0);
    let log = Arc::new(PageLog {
        ring: (0..RING).map(|_| AtomicU32::new(0)).collect(),
        registered: AtomicU64::new(0),
        published: AtomicU64::new(0),
        epoch: AtomicU64::new(0),
        states: Mutex::new(States::default()),
    });
    logs.insert(id, Arc::downgrade(&log));
    Some(log)
}

impl PageLog {
    fn states(&self) -> std::sync::MutexGuard<'_, States> {
        self.states.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A frame header SQLite writes at `off` in the WAL: registers its page, before the
    /// commit it belongs to can be published.
    pub(crate) fn frame(&self, header: &[u8], off: i64) {
        let page = u32::from_be_bytes([header[0], header[1], header[2], header[3]]);
        let commit = header[4..8] != [0, 0, 0, 0];
        let n = self.registered.load(Ordering::Relaxed);
        self.ring[(n % RING) as usize].store(page, Ordering::Relaxed);
        self.registered.store(n + 1, Ordering::Release);
        if commit {
            let mut salt = [0u8; 8];
            salt.copy_from_slice(&header[8..16]);
            let mut s = self.states();
            // SQLite may pad a commit with copies of its last frame: the last one counts.
            if !matches!(s.pending, Some(p) if p.salt == salt && p.last_frame >= off) {
                s.pending = Some(WalState {
                    salt,
                    last_frame: off,
                });
            }
        }
    }

    /// A connection of the process took the WAL's write lock; `header` is the index header
    /// then (the newest commit). Another state than the one the process's last commit left
    /// means a write from outside the log: every following cache must empty.
    pub(crate) fn write_locked(&self, header: IndexHeader) {
        let mut s = self.states();
        s.pending = None;
        if !header.is(s.known) {
            self.epoch.fetch_add(1, Ordering::AcqRel);
            s.known = Some(header.state());
        }
    }

    /// The write lock is let go: the transaction is over (committed and published in the WAL
    /// index, or rolled back), and so are all the frames registered so far.
    pub(crate) fn write_unlocked(&self) {
        let mut s = self.states();
        if let Some(p) = s.pending.take() {
            s.known = Some(p);
        }
        self.published
            .store(self.registered.load(Ordering::Acquire), Ordering::Release);
    }

    /// A read lock was taken with `header` in the WAL index: notes the read's floor for the
    /// page cache SQLite may empty next on this thread.
    pub(crate) fn read_locked(self: &Arc<Self>, header: IndexHeader) {
        let floor = self.published.load(Ordering::Acquire);
        let epoch = self.epoch.load(Ordering::Acquire);
        let matches = {
            let s = self.states();
            header.is(s.known) || header.is(s.pending)
        };
        // (`try_with`: a thread's connections may close while its locals are torn down.)
        let _ = LAST_READ.try_with(|l| {
            *l.borrow_mut() = Some(LastRead {
                log: self.clone(),
                floor,
                epoch,
                matches,
            })
        });
    }

    /// The pages registered after `from`, if the ring still holds them all and they are at
    /// most `most` (more, and emptying the cache costs less than looking each one up).
    fn changed_since(&self, from: u64, most: u64, mut each: impl FnMut(u32)) -> bool {
        let to = self.registered.load(Ordering::Acquire);
        if to < from || to - from > RING.min(most) {
            return false;
        }
        for n in from..to {
            each(self.ring[(n % RING) as usize].load(Ordering::Relaxed));
        }
        // Overwritten while read (a writer far ahead): not to be trusted.
        self.registered.load(Ordering::Acquire) - from <= RING
    }
}

/// What a read lock taken on this thread said, until a following cache takes it.
struct LastRead {
    log: Arc<PageLog>,
    floor: u64,
    epoch: u64,
    /// The WAL index header was a state the log knows.
    matches: bool,
}

thread_local! {
    static LAST_READ: RefCell<Option<LastRead>> = const { RefCell::new(None) };
    /// The log of the read-only connection this thread is opening ([`opening_reader`]).
    static OPENING: RefCell<Option<Arc<PageLog>>> = const { RefCell::new(None) };
}

/// Runs `open` (which opens a read-only connection to the file of `log` and reads from it)
/// with the page caches made meanwhile on this thread following `log`.
pub(crate) fn opening_reader<T>(log: Option<Arc<PageLog>>, open: impl FnOnce() -> T) -> T {
    let before = OPENING.try_with(|o| o.replace(log)).ok().flatten();
    let out = open();
    let _ = OPENING.try_with(|o| *o.borrow_mut() = before);
    out
}

/// The log a page cache made now on this thread follows.
pub(crate) fn log_for_new_cache() -> Option<Arc<PageLog>> {
    OPENING.try_with(|o| o.borrow().clone()).ok().flatten()
}

/// A following cache's position in its log.
#[derive(Default)]
pub(crate) struct Follow {
    /// The floor of the read its pages were last checked for (None: unknown, empty it).
    floor: Option<u64>,
    epoch: u64,
}

/// SQLite empties the page cache following `log`, holding `pages` pages, at the start of a
/// read: returns whether the cache may keep its pages after dropping, through `drop_page`,
/// those changed since its last read (false: empty it all; so too when more pages changed
/// than it holds). Updates `follow` either way.
pub(crate) fn on_reset(
    log: &Arc<PageLog>,
    follow: &mut Follow,
    pages: u64,
    drop_page: impl FnMut(u32),
) -> bool {
    let Some(read) = LAST_READ.try_with(|l| l.borrow_mut().take()).ok().flatten() else {
        follow.floor = None;
        return false;
    };
    if !Arc::ptr_eq(&read.log, log) {
        follow.floor = None;
        return false;
    }
    let keep = read.matches
        && read.epoch == follow.epoch
        && follow
            .floor
            .is_some_and(|from| log.changed_since(from, pages, drop_page));
    follow.floor = Some(read.floor);
    follow.epoch = read.epoch;
    if keep {
        KEPT.fetch_add(1, Ordering::Relaxed);
    }
    keep
}

static KEPT: AtomicU64 = AtomicU64::new(0);

/// Times a reader's cache kept its pages through the start of a read, for tests.
#[doc(hidden)]
pub fn kept() -> u64 {
    KEPT.load(Ordering::Relaxed)
}
