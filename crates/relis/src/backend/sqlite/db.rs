//! The engine handle and its threads: one writer thread that owns the read-write connection and
//! commits queued writes in groups, a pool of reader threads with read-only connections, and a
//! checkpointer that keeps WAL checkpoints off the writer's path.

use crate::backend::sqlite::caches::{self, CacheSizes, CacheState, CacheUse, ReaderSlot};
use crate::backend::sqlite::schema;
use crate::backend::sqlite::stmt::{Conn, Finish, OwnedConn};
use crate::backend::sqlite::store::{
    Keyspace, RankBlocks, Reader, Writer, WriterHooks, WriterState,
};
use crate::clock::{Clock, SystemClock};
use crate::error::{Error, Result};
use crossbeam_channel::{bounded, unbounded, Receiver, Select, Sender, TryRecvError};
use parking_lot::Mutex;
use rusqlite::{Connection, OpenFlags};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How hard a commit tries to reach the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Durability {
    /// `synchronous=OFF`: the OS decides when data reaches the disk.
    Off,
    /// WAL with `synchronous=NORMAL`: survives a process crash; a power cut may lose the last
    /// commits.
    #[default]
    Normal,
    /// `synchronous=FULL`: every group commit is fsynced before its replies are released.
    Full,
}

impl Durability {
    /// Parses `off`, `normal` or `full` (case-insensitive).
    pub fn parse(s: &str) -> Option<Durability> {
        match s.to_ascii_lowercase().as_str() {
            "off" => Some(Durability::Off),
            "normal" => Some(Durability::Normal),
            "full" => Some(Durability::Full),
            _ => None,
        }
    }

    /// The setting's name.
    pub fn name(self) -> &'static str {
        match self {
            Durability::Off => "off",
            Durability::Normal => "normal",
            Durability::Full => "full",
        }
    }

    fn pragma(self) -> &'static str {
        match self {
            Durability::Off => "OFF",
            Durability::Normal => "NORMAL",
            Durability::Full => "FULL",
        }
    }
}

/// How to open a [`Db`].
#[derive(Clone)]
pub struct Options {
    /// The database file; `None` keeps everything in memory.
    pub path: Option<PathBuf>,
    /// Commit durability.
    pub durability: Durability,
    /// Number of logical databases (Redis's `databases`).
    pub databases: u32,
    /// Reader threads (each with its own read-only connection). Ignored in memory.
    pub readers: usize,
    /// Most write jobs committed in one transaction.
    pub max_batch: usize,
    /// The clock expiry is evaluated against.
    pub clock: Arc<dyn Clock>,
    /// WAL length in frames (pages) past which the writer checkpoints after its commits until
    /// the WAL restarts from its beginning (see [`WAL_RESTART_FRAMES`], the default).
    pub wal_restart_frames: i32,
    /// How long the writer keeps looking for more work after a commit before it sleeps
    /// ([`WRITER_SPIN`] by default; zero sleeps at once).
    pub writer_spin: Duration,
    /// The page size of a new file, in bytes (a power of two from 512 to 65536; [`PAGE_SIZE`]
    /// by default). A file keeps the page size it was created with.
    pub page_size: u32,
    /// The sorted sets' rank-block sizes (see [`RankBlocks`]; the default suits every size).
    /// A file's sets were cut with the sizes it was written with; open it with those.
    pub rank_blocks: RankBlocks,
    /// The SQLite connections' page caches and memory maps (see [`CacheSizes`]; changeable
    /// while the engine runs with [`Db::set_cache_sizes`]).
    pub caches: CacheSizes,
    /// Loading a file that is thrown away if the load fails (an RDB import's staging copy):
    /// no WAL and no rollback journal (`journal_mode=OFF`), so every page is written once,
    /// straight into the file, instead of to the WAL and again at the checkpoint; the file is
    /// locked for the writer alone (`locking_mode=EXCLUSIVE`), with no reader threads and no
    /// checkpointer (reads queue on the writer, as in memory). A transaction that fails, or a
    /// process that dies, leaves the file corrupt: the caller deletes it then. The next
    /// ordinary open switches the file back to WAL. Ignored in memory.
    pub bulk: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            path: None,
            durability: Durability::Normal,
            databases: 16,
            readers: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2)
                .clamp(2, 8),
            max_batch: 1024,
            clock: Arc::new(SystemClock),
            wal_restart_frames: WAL_RESTART_FRAMES,
            writer_spin: WRITER_SPIN,
            page_size: PAGE_SIZE,
            rank_blocks: RankBlocks::default(),
            caches: CacheSizes::default(),
            bulk: false,
        }
    }
}

impl Options {
    /// Options for the file at `path`, otherwise defaults.
    pub fn file(path: impl AsRef<Path>) -> Self {
        Options {
            path: Some(path.as_ref().to_path_buf()),
            ..Options::default()
        }
    }
}

type ReadJob = Box<dyn FnOnce(&mut Reader<'_>) + Send>;
/// A read queued to the writer (in memory, or over PostgreSQL): given `None` it does not run
/// and answers with an error (its keys could not be loaded).
pub(crate) type WriterRead = Box<dyn FnOnce(Option<&mut Reader<'_>>) + Send>;

/// The keys a job declares, as (logical database, key): the PostgreSQL backend locks and
/// loads them before the job runs (ARCHITECTURE.md 10.1); the SQLite backend ignores them.
pub type DeclaredKeys = Vec<(u32, Vec<u8>)>;

/// The database index of [`flush_declaration`]s and [`functions_declaration`]s: no key lives
/// there.
const FLUSH_DB: u32 = u32::MAX;

/// The key of a [`functions_declaration`] that reads the libraries, and of one that changes them
/// (a flush's is empty or 4 bytes, a swap's 8: neither length).
const FUNCTIONS_READ: &[u8] = b"functions";
const FUNCTIONS_CHANGE: &[u8] = b"functions!";

/// What a job that runs FLUSHDB on database `db` (`None`: FLUSHALL) adds to its
/// [`DeclaredKeys`]: not a key (its database index is `u32::MAX`, which no key has) but the
/// flush, which the PostgreSQL backend serializes against every other group on every node by
/// taking the database's lock exclusively before any other (ARCHITECTURE.md 10.1). A flush not
/// declared (a script's) still takes it, late, when it runs.
pub fn flush_declaration(db: Option<u32>) -> (u32, Vec<u8>) {
    match db {
        Some(db) => (FLUSH_DB, db.to_le_bytes().to_vec()),
        None => (FLUSH_DB, Vec::new()),
    }
}

/// What a job that runs SWAPDB on databases `a` and `b` adds to its [`DeclaredKeys`] (not a
/// key, as [`flush_declaration`]): over PostgreSQL its group takes both databases' locks
/// exclusively, as a FLUSHDB of each would, and every key of either database the group declares
/// is declared in the other too (the swap moves it there), so the whole swap commits at once
/// against every group on every node.
pub fn swap_declaration(a: u32, b: u32) -> (u32, Vec<u8>) {
    let mut key = a.to_le_bytes().to_vec();
    key.extend_from_slice(&b.to_le_bytes());
    (FLUSH_DB, key)
}

/// What a job that uses the stored function libraries adds to its [`DeclaredKeys`] (not a
/// key, as [`flush_declaration`]): over PostgreSQL its group fetches the shared set of libraries
/// when it changed since this node last took it ([`Reader::take_function_libraries`]), in the
/// same round trip as its keys; a job that `change`s them (FUNCTION LOAD, DELETE, FLUSH,
/// RESTORE) also takes the functions lock exclusively, so such changes run one at a time
/// across nodes, each on the set the previous one committed, and its group writes the set back
/// at its commit.
pub fn functions_declaration(change: bool) -> (u32, Vec<u8>) {
    let key = if change {
        FUNCTIONS_CHANGE
    } else {
        FUNCTIONS_READ
    };
    (FLUSH_DB, key.to_vec())
}

/// What a declared key stands for (see [`flush_declaration`], [`functions_declaration`]).
#[cfg(feature = "postgres")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Declared {
    /// A key.
    Key,
    /// A flush: FLUSHDB of the database, or FLUSHALL (`None`).
    Flush(Option<u32>),
    /// The function libraries, read or (`true`) changed.
    Functions(bool),
    /// A swap of the two databases.
    Swap(u32, u32),
}

/// What the declared `key` stands for.
#[cfg(feature = "postgres")]
pub(crate) fn declared(key: &(u32, Vec<u8>)) -> Declared {
    if key.0 != FLUSH_DB {
        return Declared::Key;
    }
    match key.1.as_slice() {
        FUNCTIONS_READ => Declared::Functions(false),
        FUNCTIONS_CHANGE => Declared::Functions(true),
        [a0, a1, a2, a3, b0, b1, b2, b3] => Declared::Swap(
            u32::from_le_bytes([*a0, *a1, *a2, *a3]),
            u32::from_le_bytes([*b0, *b1, *b2, *b3]),
        ),
        k => Declared::Flush(<[u8; 4]>::try_from(k).ok().map(u32::from_le_bytes)),
    }
}

/// A thread's own read-only connection to one engine (see [`Db::read_here`]), with the read
/// transaction it holds between reads. Behind a mutex that its thread takes for each read
/// (uncontended) and the writer only tries (see [`LocalReaders::end_held`]): the connection is
/// opened with `SQLITE_OPEN_NO_MUTEX`, which allows its use from another thread as long as
/// never from two at once. Its statements are kept (`OwnedConn`): rusqlite's cache costs
/// about 1,200 instructions per statement, a tenth of a pipelined GET's whole cost.
struct LocalReader {
    conn: OwnedConn,
    /// Its cache figures (see `caches.rs`).
    slot: Arc<ReaderSlot>,
    /// The engine's commit count when the open read transaction began, while one is held.
    held: Option<u64>,
}

impl LocalReader {
    /// Ends the read transaction this connection holds, if any.
    fn end(&mut self) {
        if self.held.take().is_some() {
            end_read(self.conn.get());
        }
    }
}

/// The [`LocalReader`]s of one engine, whichever threads keep them (weakly: a thread's
/// thread-local owns its reader, and closes it when the thread ends).
#[derive(Default)]
struct LocalReaders(Mutex<Vec<std::sync::Weak<Mutex<LocalReader>>>>);

impl LocalReaders {
    fn register(&self, reader: &Arc<Mutex<LocalReader>>) {
        let mut all = self.0.lock();
        all.retain(|r| r.strong_count() > 0);
        all.push(Arc::downgrade(reader));
    }

    /// Ends the read transactions held by readers that are not reading right now: those that
    /// began before commit `commits` (`None`: all of them). A thread keeps its snapshot
    /// between reads only while nothing commits (its next read would start a new one anyway),
    /// but an idle thread keeps it until that next read, and a checkpoint cannot pass a read
    /// transaction: the writer calls this on its tick, so the WAL is never pinned for longer
    /// than that, and before the checkpoints that must reach the WAL's end.
    fn end_held(&self, commits: Option<u64>) {
        let all: Vec<_> = self.0.lock().iter().filter_map(|r| r.upgrade()).collect();
        for reader in all {
            // A reader that is reading ends its transaction itself when it sees a commit.
            if let Some(mut r) = reader.try_lock() {
                if r.held.is_some_and(|at| commits.is_none_or(|c| at < c)) {
                    r.end();
                }
            }
        }
    }
}

/// A thread's reader for one engine, with what tells when that engine is gone.
type ThreadReader = (std::sync::Weak<LocalReaders>, Arc<Mutex<LocalReader>>);

thread_local! {
    /// Read-only connections of [`Db::read_here`], per engine (by [`Shared::id`]).
    static LOCAL_READERS: RefCell<rustc_hash::FxHashMap<u64, ThreadReader>> =
        RefCell::new(rustc_hash::FxHashMap::default());
}

/// Ids of engines ([`Shared::id`]), never reused in a process: a thread's read connection is
/// found by it.
static NEXT_ENGINE_ID: AtomicU64 = AtomicU64::new(1);

/// Ends the read transactions [`Db::read_here`] and [`Db::read`] hold on the calling thread.
///
/// A thread keeps its read transaction from one read to the next for as long as the engine
/// commits nothing, so a run of reads between two commits pays for one transaction (two
/// file-lock system calls and the WAL header check) instead of one each. Every read still
/// sees every write this engine committed before it began: a commit makes the next read start
/// a new transaction. (A write to the file by another process, which this engine does not
/// see, shows once this engine commits.) A thread that goes idle keeps it until the engine's writer ends it (within
/// about 100 ms of the next commit, see `LocalReaders::end_held`); calling this ends it at
/// once, for a thread about to sleep long while a checkpoint should reach the WAL's end.
pub fn release_thread_snapshots() {
    let _ = LOCAL_READERS.try_with(|cell| {
        let Ok(map) = cell.try_borrow() else {
            return;
        };
        for (_, reader) in map.values() {
            reader.lock().end();
        }
    });
}

fn end_read(conn: &Conn<'_>) {
    let _ = crate::backend::sqlite::stmt::prepare(conn, "COMMIT").and_then(|mut s| s.execute([]));
    if !conn.is_autocommit() {
        // Never left open: the next read's BEGIN would fail and it would read the old snapshot.
        let _ = conn.execute_batch("ROLLBACK");
    }
}
pub(crate) type Deliver = Box<dyn FnOnce(Result<()>) + Send>;
/// A write: run on the writer (`Some`), it returns what answers it once its group commits;
/// given `None` it does not run and only answers (the group's transaction could not begin).
pub(crate) type WriteJob = Box<dyn FnOnce(Option<&mut Writer<'_>>) -> Deliver + Send>;
pub(crate) type ConnJob = Box<dyn FnOnce(&Connection) + Send>;

// The declared keys are read by the PostgreSQL backend's loop only.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(crate) enum WriterMsg {
    /// A write and the keys it declares.
    Write(WriteJob, DeclaredKeys),
    /// A read, in memory mode (where there is no reader pool) or over PostgreSQL, and the keys
    /// it declares.
    Read(WriterRead, DeclaredKeys),
    /// Runs outside any transaction with the writer's connection (backups of in-memory data,
    /// cache sizes), after every write queued before it and before every write queued after.
    Conn(ConnJob),
    Shutdown,
}

/// Counters the engine keeps for INFO.
#[derive(Debug, Default)]
pub struct Stats {
    /// Transactions committed by the writer.
    pub commits: AtomicU64,
    /// Write jobs committed.
    pub writes: AtomicU64,
    /// Keys deleted because they expired: by the sweep, or by a write (or a read, through
    /// [`Db::expire_if_needed`]) that found them expired (INFO expired_keys).
    pub expired_keys: AtomicU64,
    /// Commits that failed (their writes were reported as errors).
    pub failed_commits: AtomicU64,
    /// Whether the background expiry sweep is stopped ([`Db::set_active_expire`]).
    pub(crate) sweep_off: AtomicBool,
    /// Whether the WAL has outgrown [`WAL_RESTART_FRAMES`] and the writer is bringing it back to
    /// its start; [`Db::read_here`] holds no snapshot meanwhile (a held one would prevent it).
    pub(crate) wal_over_limit: AtomicBool,
    /// What the last checkpoint that ran found: the WAL's length and how much of it had been
    /// copied into the file, in frames (see [`catch_up_checkpoint`]).
    pub(crate) checkpointed: std::sync::Mutex<(i32, i32)>,
    /// Asks the checkpointer to run now, not at its next turn: the writer left it a backlog.
    pub(crate) checkpoint_now: AtomicBool,
    /// Where the timings of commits, fsyncs and checkpoints go ([`Db::on_timing`]).
    pub(crate) timings: crate::timing::Timings,
    /// The connections' cache sizes and what they hold ([`Db::cache_use`]).
    pub(crate) caches: CacheState,
}

/// WAL frames (pages) past which the writer checkpoints by itself after each commit until the
/// WAL restarts from its beginning. Under a steady write load the checkpointer, running beside
/// the writer, never catches up with it, and SQLite only restarts a WAL that is fully
/// checkpointed when a write transaction begins: without this the WAL would grow for as long as
/// the load lasts.
pub const WAL_RESTART_FRAMES: i32 = 16384;

/// Bytes a WAL file is cut back to when it restarts (`journal_size_limit`).
const WAL_KEEP_BYTES: i64 = 64 << 20;

thread_local! {
    /// The WAL's length in frames after this thread's last commit on a writer's connection
    /// (set by SQLite's WAL hook: the writer thread's, or an embedded caller's).
    static WAL_FRAMES: std::cell::Cell<i32> = const { std::cell::Cell::new(0) };
}

fn note_wal_frames(_: &rusqlite::hooks::Wal, frames: std::ffi::c_int) -> rusqlite::Result<()> {
    WAL_FRAMES.with(|f| f.set(frames));
    Ok(())
}

/// What holds the keyspace, and so which loop the writer thread runs.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(crate) enum Store {
    /// The SQLite file (or memory): [`writer_loop`].
    Sqlite,
    /// Another store, named, whose loop the writer thread runs over its connection (the
    /// PostgreSQL backend's, `scratch.rs`: the connection is an in-memory scratch holding only
    /// the keys of the group it runs, ARCHITECTURE.md 10.1).
    Loop(&'static str, WriterLoop),
}

/// A writer thread's loop other than [`writer_loop`]: it owns the writer's connection and
/// state, and serves the queue until it closes or says [`WriterMsg::Shutdown`].
pub(crate) type WriterLoop = Box<
    dyn for<'c> FnOnce(
            &'c Conn<'c>,
            Receiver<WriterMsg>,
            Arc<dyn Clock>,
            Keyspace,
            usize,
            &'c RefCell<WriterState>,
            Arc<Stats>,
        ) + Send,
>;

impl Store {
    fn name(&self) -> &'static str {
        match self {
            Store::Sqlite => "sqlite",
            Store::Loop(name, _) => name,
        }
    }
}

struct Shared {
    /// This engine's id in the process (from [`NEXT_ENGINE_ID`]).
    id: u64,
    /// What holds the keyspace ([`Db::backend`]).
    backend: &'static str,
    /// The threads' read connections to it ([`Db::read_here`]).
    locals: Arc<LocalReaders>,
    /// The writer's connection and state, taken by the writer thread for each group and by
    /// embedded callers of [`Db::write`] for their own writes.
    core: Arc<Mutex<WriterCore>>,
    /// The writer thread's queue.
    writer: Sender<WriterMsg>,
    /// Writes waiting for [`Db::flush_gathered`] ([`Db::write_gathered`]), in arrival order.
    gathered: Mutex<Vec<(WriteJob, DeclaredKeys)>>,
    /// The WAL length past which a commit is followed by a checkpoint
    /// ([`Options::wal_restart_frames`]).
    wal_limit: i32,
    readers: Option<Sender<ReadJob>>,
    clock: Arc<dyn Clock>,
    databases: u32,
    /// What every `Reader` of this engine is made with.
    keyspace: Keyspace,
    path: Option<PathBuf>,
    /// Opened with [`Options::bulk`]: no connection but the writer's can open the file.
    bulk: bool,
    durability: Durability,
    stats: Arc<Stats>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    stop: Arc<AtomicBool>,
    sink: crate::events::SinkSlot,
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.writer.send(WriterMsg::Shutdown);
        self.readers = None;
        for t in self.threads.lock().drain(..) {
            let _ = t.join();
        }
    }
}

/// A Relis database: the Redis keyspace in one SQLite file (or in memory).
///
/// Cloning is cheap and shares the engine. Each handle has a selected logical database
/// ([`Db::select`]) that its typed methods act on. The engine shuts down (committing everything
/// acknowledged) when the last clone is dropped.
///
/// ```
/// let db = relis::Db::open_in_memory()?;
/// db.set("greeting", "hello")?;
/// assert_eq!(db.get("greeting")?.as_deref(), Some(&b"hello"[..]));
/// # Ok::<(), relis::Error>(())
/// ```
#[derive(Clone)]
pub struct Db {
    shared: Arc<Shared>,
    index: u32,
}

impl Db {
    /// Opens the engine: this backend's threads over `opts`, with the data types' `hooks` on
    /// the writer's transaction. The public constructors (`Db::open_with` and friends, in
    /// `engine.rs`) pass the types layer's hooks.
    ///
    /// # Errors
    /// The file cannot be opened, is not a Relis database, or its schema cannot be migrated.
    pub(crate) fn open_engine(
        opts: Options,
        hooks: &'static [WriterHooks],
        store: Store,
    ) -> Result<Db> {
        let backend = store.name();
        configure_sqlite();
        let name = opts
            .path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| ":memory:".into());
        if let Some(p) = &opts.path {
            schema::preflight(p)?;
        }
        let mut conn = match &opts.path {
            Some(p) => Connection::open(p),
            None => Connection::open_in_memory(),
        }
        .map_err(|e| Error::NotRelis(format!("{name}: cannot open: {e}")))?;
        let version = schema::check(&conn, &name)?;
        let journal = match (&opts.path, opts.bulk) {
            (None, _) => Journal::Memory,
            (Some(_), false) => Journal::Wal,
            (Some(_), true) => Journal::Off,
        };
        configure_writer(&conn, opts.durability, opts.page_size, journal)
            .and_then(|()| caches::size_writer(&conn, opts.caches))
            .map_err(|e| Error::NotRelis(format!("{name}: {e}")))?;
        // User SQL (SQL.*) runs on this connection: its sandbox and `relis_now()`.
        crate::sql::connection::install(&conn)
            .map_err(|e| Error::NotRelis(format!("{name}: {e}")))?;
        schema::migrate(&mut conn, version).map_err(|e| Error::NotRelis(format!("{name}: {e}")))?;
        let next_version: i64 = conn
            .query_row(
                "SELECT value FROM main.relis_meta WHERE name = 'next_version'",
                [],
                |r| r.get(0),
            )
            .map_err(|e| Error::NotRelis(format!("{name}: {e}")))?;

        let stop = Arc::new(AtomicBool::new(false));
        let stats = Arc::new(Stats::default());
        stats.caches.set(opts.caches);
        let mut threads = Vec::new();
        let (wtx, wrx) = unbounded();
        let sink = crate::events::SinkSlot::default();
        let locals = Arc::new(LocalReaders::default());
        // Made here, not on the writer thread: an embedded caller may write on its own thread
        // before that thread has started.
        let core = Arc::new(Mutex::new(WriterCore {
            conn: OwnedConn::new(conn),
            st: RefCell::new(WriterState {
                hooks,
                next_version,
                persisted_version: next_version,
                poisoned: None,
                events: Vec::new(),
                sink: sink.clone(),
                mute_new: false,
                new_keys: None,
                lazily_expired: 0,
                following: false,
                wide: Vec::new(),
                quiet: Vec::new(),
            }),
            stopped: false,
        }));
        {
            let (core, locals) = (core.clone(), locals.clone());
            let clock = opts.clock.clone();
            let stats = stats.clone();
            let (keyspace, max_batch) = (Keyspace::of(&opts), opts.max_batch.max(1));
            let wal_limit = opts.wal_restart_frames;
            let spin = opts.writer_spin;
            threads.push(
                std::thread::Builder::new()
                    .name("relis-writer".into())
                    // Lua scripts run on the writer (relis-server): deep but bounded recursion
                    // (cjson nesting up to 1000) needs more than the default 2 MiB. Only the
                    // pages used are committed.
                    .stack_size(64 << 20)
                    .spawn(move || {
                        prefer_prompt_wakeups();
                        match store {
                            Store::Sqlite => {
                                let limits = (max_batch, wal_limit, spin);
                                writer_loop(core, wrx, clock, keyspace, limits, (stats, locals))
                            }
                            Store::Loop(_, run) => {
                                // The loop keeps the core for its life: an embedded caller's
                                // `Db::write` then always queues (its keys go through the loop).
                                let _stopped = Stopped(&core);
                                let held = core.lock();
                                let (conn, st) = (held.conn.get(), &held.st);
                                run(conn, wrx, clock, keyspace, max_batch, st, stats);
                            }
                        }
                    })
                    .map_err(|e| Error::Storage(e.to_string()))?,
            );
        }
        let readers = match &opts.path {
            None => None,
            // The writer's exclusive lock would keep readers and the checkpointer out.
            Some(_) if opts.bulk => None,
            Some(path) => {
                let (rtx, rrx) = unbounded::<ReadJob>();
                for i in 0..opts.readers.max(1) {
                    let (conn, slot) = open_reader(path, &stats.caches)?;
                    let (rrx, clock, keyspace) =
                        (rrx.clone(), opts.clock.clone(), Keyspace::of(&opts));
                    let stats = stats.clone();
                    threads.push(
                        std::thread::Builder::new()
                            .name(format!("relis-reader-{i}"))
                            .spawn(move || {
                                reader_loop(conn, rrx, clock, keyspace, (&stats.caches, &slot))
                            })
                            .map_err(|e| Error::Storage(e.to_string()))?,
                    );
                }
                // Checkpointing writes the database file, so it needs its own read-write
                // connection; it takes the checkpoint lock, never the writer's lock.
                let conn = Connection::open(path)?;
                conn.busy_timeout(Duration::from_secs(1))?;
                // A checkpoint copies WAL frames without the page cache; SQLite's default size
                // (2 MB) would only add to the pool the other caches share (see caches.rs).
                caches::size_checkpointer(&conn)?;
                let (stop, stats) = (stop.clone(), stats.clone());
                let mut wal = path.as_os_str().to_owned();
                wal.push("-wal");
                threads.push(
                    std::thread::Builder::new()
                        .name("relis-checkpoint".into())
                        .spawn(move || checkpoint_loop(conn, stop, &stats, Path::new(&wal)))
                        .map_err(|e| Error::Storage(e.to_string()))?,
                );
                Some(rtx)
            }
        };
        let keyspace = Keyspace::of(&opts);
        Ok(Db {
            shared: Arc::new(Shared {
                id: NEXT_ENGINE_ID.fetch_add(1, Ordering::Relaxed),
                backend,
                locals,
                core,
                writer: wtx,
                gathered: Mutex::new(Vec::new()),
                wal_limit: opts.wal_restart_frames,
                readers,
                clock: opts.clock,
                databases: opts.databases,
                keyspace,
                path: opts.path,
                bulk: opts.bulk,
                durability: opts.durability,
                stats,
                threads: Mutex::new(threads),
                stop,
                sink,
            }),
            index: 0,
        })
    }

    /// A handle on the same engine whose typed methods act on logical database `index`.
    ///
    /// # Errors
    /// [`Error::DbIndexOutOfRange`] past the configured number of databases.
    pub fn select(&self, index: u32) -> Result<Db> {
        if index >= self.shared.databases {
            return Err(Error::DbIndexOutOfRange);
        }
        Ok(Db {
            shared: self.shared.clone(),
            index,
        })
    }

    /// The logical database this handle's typed methods act on.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// What holds the keyspace: `"sqlite"` (the file, or memory) or `"postgres"` (a shared
    /// PostgreSQL, [`Db::open_postgres`]). Over PostgreSQL a job sees only the keys it declares
    /// ([`Db::write_async_keys`], [`Db::read_async_keys`]): keyspace-wide work (SCAN, DBSIZE,
    /// FLUSHALL, user SQL, the expiry sweep, backups) has nothing to run on yet.
    pub fn backend(&self) -> &'static str {
        self.shared.backend
    }

    /// The number of logical databases.
    pub fn databases(&self) -> u32 {
        self.shared.databases
    }

    /// The database file, or `None` in memory.
    pub fn path(&self) -> Option<&Path> {
        self.shared.path.as_deref()
    }

    /// The durability this database was opened with.
    pub fn durability(&self) -> Durability {
        self.shared.durability
    }

    /// The engine's clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.shared.clock
    }

    /// Installs the receiver of keyspace events (see [`crate::events`]); only the first call
    /// takes effect. Until one is installed, no event is recorded.
    pub fn set_event_sink(&self, sink: Arc<dyn crate::events::EventSink>) {
        let _ = self.shared.sink.set(sink);
    }

    /// Installs the receiver of the engine's timings (group commits, fsyncs, checkpoints; see
    /// [`crate::timing`]); only the first call takes effect.
    pub fn on_timing(&self, hook: crate::timing::TimingHook) {
        self.shared.stats.timings.set(hook);
    }

    /// The engine's counters.
    pub fn stats(&self) -> &Stats {
        &self.shared.stats
    }

    /// What the SQLite connections' caches hold now, and the sizes they are held to.
    pub fn cache_use(&self) -> CacheUse {
        self.shared.stats.caches.usage(self.shared.path.as_deref())
    }

    /// Sizes the SQLite connections' caches anew: each reader takes the new sizes at its next
    /// read (in a new transaction), the writer before any write queued after this call. A
    /// smaller cache gives its pages back as they are next used.
    pub fn set_cache_sizes(&self, sizes: CacheSizes) {
        self.shared.stats.caches.set(sizes);
        let job: ConnJob = Box::new(move |c| {
            if let Err(e) = caches::size_writer(c, sizes) {
                tracing::warn!("cannot resize the writer's cache: {e}");
            }
        });
        let _ = self.shared.writer.send(WriterMsg::Conn(job));
    }

    /// Runs `f` on a reader connection (a consistent snapshot) and calls `done` with its result,
    /// on the reader's thread. Never blocks the caller.
    pub fn read_async<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Reader<'_>) -> R + Send + 'static,
        done: impl FnOnce(Result<R>) + Send + 'static,
    ) {
        self.read_async_keys(Vec::new(), f, done);
    }

    /// [`Db::read_async`] for a read of `keys` (see [`DeclaredKeys`]): over PostgreSQL only the
    /// declared keys are there to read; every other key reads as missing.
    pub fn read_async_keys<R: Send + 'static>(
        &self,
        keys: DeclaredKeys,
        f: impl FnOnce(&mut Reader<'_>) -> R + Send + 'static,
        done: impl FnOnce(Result<R>) + Send + 'static,
    ) {
        match &self.shared.readers {
            Some(readers) => {
                let job: ReadJob = Box::new(move |r| done(Ok(f(r))));
                if let Err(e) = readers.send(job) {
                    let job = e.into_inner();
                    drop(job); // `done` is dropped unanswered: the engine is gone.
                }
            }
            None => {
                // In memory there is one connection: reads queue behind writes on the writer.
                let job: WriterRead = Box::new(move |r| match r {
                    Some(r) => done(Ok(f(r))),
                    None => done(Err(Error::Storage(
                        "the read's keys could not be loaded".into(),
                    ))),
                });
                let _ = self.shared.writer.send(WriterMsg::Read(job, keys));
            }
        }
    }

    /// Runs `f` right here, on a read-only connection owned by the calling thread (opened on
    /// first use and kept in a thread-local), for short bounded reads where handing the work to
    /// a reader thread would cost more than the read itself. Its read transaction is kept from
    /// one call to the next while nothing commits (see [`release_thread_snapshots`]): a read
    /// sees every write this engine committed before it began. `None` in memory (there is only
    /// the writer's connection): use [`Db::read_async`] then. User SQL run here may take a few
    /// thousand virtual-machine steps; a statement that takes more stops with
    /// [`crate::SqlError::Deferred`], having done nothing, for the caller to run on a reader.
    ///
    /// # Errors
    /// The connection cannot be opened.
    pub fn read_here<R>(&self, f: impl FnOnce(&mut Reader<'_>) -> R) -> Option<Result<R>> {
        self.read_local(true, f)
    }

    /// [`Db::read_here`], with user SQL under the inline step budget (`inline`) or not.
    fn read_local<R>(
        &self,
        inline: bool,
        f: impl FnOnce(&mut Reader<'_>) -> R,
    ) -> Option<Result<R>> {
        let path = self.shared.path.as_ref().filter(|_| !self.shared.bulk)?;
        let id = self.shared.id;
        LOCAL_READERS.with(|cell| {
            let mut map = cell.borrow_mut();
            if !map.contains_key(&id) {
                // Forget connections of engines that have shut down.
                map.retain(|_, (alive, _)| alive.strong_count() > 0);
                match open_reader(path, &self.shared.stats.caches) {
                    Ok((conn, slot)) => {
                        let reader = Arc::new(Mutex::new(LocalReader {
                            conn: OwnedConn::new(conn),
                            slot,
                            held: None,
                        }));
                        self.shared.locals.register(&reader);
                        map.insert(id, (Arc::downgrade(&self.shared.locals), reader));
                    }
                    Err(e) => return Some(Err(e)),
                }
            }
            let (_, reader) = map.get(&id)?;
            // Uncontended: the writer only tries it, and only between reads.
            let mut local = reader.lock();
            let stats = &self.shared.stats;
            // Read before the transaction begins: its snapshot then holds at least these commits.
            let commits = stats.commits.load(Ordering::Acquire);
            // Past the WAL's limit the writer is bringing the WAL back to its start, which a
            // held snapshot would prevent.
            let hold = !stats.wal_over_limit.load(Ordering::Relaxed);
            match local.held {
                Some(at) if at == commits && hold => {}
                _ => {
                    local.end();
                    // Outside any transaction now: new cache sizes can be taken.
                    stats.caches.refresh_reader(local.conn.get(), &local.slot);
                    let began = crate::backend::sqlite::stmt::prepare(local.conn.get(), "BEGIN")
                        .and_then(|mut s| s.execute([]));
                    if began.is_ok() {
                        local.held = Some(commits);
                    }
                }
            }
            let out = {
                let conn = local.conn.get();
                let mut r = Reader::new(conn, self.shared.clock.now_ms(), self.shared.keyspace);
                if inline {
                    crate::sql::sandbox::inline_reads(|| f(&mut r))
                } else {
                    f(&mut r)
                }
            };
            CacheState::note_reader(local.conn.get(), &local.slot);
            if local.conn.get().is_autocommit() {
                local.held = None; // an error ended the transaction
            } else if !hold {
                local.end();
            }
            Some(Ok(out))
        })
    }

    /// Runs `f` on the writer thread inside the current group transaction, and calls `done` with
    /// its result once that transaction has committed (or with the commit's error). Never blocks
    /// the caller. `f` should wrap each command in [`Writer::atomic`].
    pub fn write_async<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Writer<'_>) -> R + Send + 'static,
        done: impl FnOnce(Result<R>) + Send + 'static,
    ) {
        self.write_async_keys(Vec::new(), f, done);
    }

    /// [`Db::write_async`] for a write of `keys` (see [`DeclaredKeys`]): over PostgreSQL the
    /// group locks and loads the union of its jobs' keys before any runs, and a job that
    /// writes a key it did not declare fails its whole group (nothing is written).
    pub fn write_async_keys<R: Send + 'static>(
        &self,
        keys: DeclaredKeys,
        f: impl FnOnce(&mut Writer<'_>) -> R + Send + 'static,
        done: impl FnOnce(Result<R>) + Send + 'static,
    ) {
        let _ = self
            .shared
            .writer
            .send(WriterMsg::Write(write_job(f, done), keys));
    }

    /// [`Db::write_async_keys`] for a caller that calls [`Db::flush_gathered`] soon after (the
    /// server's network thread, once it has served what its clients sent so far): the write
    /// waits with the others gathered since the last flush, and the flush runs them all as one
    /// group. Returns whether this is the first write since the last flush (the caller then
    /// arranges the next one).
    pub fn write_gathered<R: Send + 'static>(
        &self,
        keys: DeclaredKeys,
        f: impl FnOnce(&mut Writer<'_>) -> R + Send + 'static,
        done: impl FnOnce(Result<R>) + Send + 'static,
    ) -> bool {
        let mut gathered = self.shared.gathered.lock();
        gathered.push((write_job(f, done), keys));
        gathered.len() == 1
    }

    /// How many writes [`Db::write_gathered`] holds now, and whether the next
    /// [`Db::flush_gathered`] would hand them all to the writer thread anyway (more than it
    /// runs on the calling thread): the caller, waiting for more, stops there.
    pub fn gathered(&self) -> (usize, bool) {
        let n = self.shared.gathered.lock().len();
        (n, n >= GATHERED_HERE)
    }

    /// Runs the writes gathered by [`Db::write_gathered`] as one group: on the calling thread
    /// when the writer is free (nothing queued, no group being committed), as [`Db::write`]
    /// runs an embedded caller's write, or else handed to the writer thread, in order, to join
    /// its next group. Either way each is answered once its group has committed.
    ///
    /// Why: at `-P 1` with many clients the network thread and the writer took turns on one
    /// CPU, each waking the other for every group (BENCHMARKS.md, "Writes gathered on the network
    /// thread"). A checkpoint the group's commit calls for is left to the writer thread.
    ///
    /// `here`: whether the calling thread may run the group at all (the caller's judgement of
    /// how busy it is); if not, the writes go to the writer thread.
    pub fn flush_gathered(&self, here: bool) {
        let jobs = std::mem::take(&mut *self.shared.gathered.lock());
        if jobs.is_empty() {
            return;
        }
        let shared = &*self.shared;
        // A large group is the writer thread's: it runs it while this thread reads on. So is a
        // write alone (one client writing): the writer thread, looking for work between its
        // commits, answers it sooner (one client at -P 1: 10.5-11.4k SET/s here against
        // 13.4-15.7k there).
        let here = here && (2..=GATHERED_HERE).contains(&jobs.len());
        if let Some(core) = here.then(|| shared.core.try_lock()).flatten() {
            // Only with nothing queued: what was queued before these must commit first (the
            // writer thread takes work from the queue only while it holds the core).
            if shared.writer.is_empty() && !core.stopped {
                self.run_group_here(&core, jobs);
                return;
            }
        }
        for (job, keys) in jobs {
            let _ = shared.writer.send(WriterMsg::Write(job, keys));
        }
    }

    /// Opens the writer's transaction on the calling thread (holding the core); a failure is
    /// counted as a failed commit.
    fn begin_here(&self, conn: &Conn<'_>) -> Result<()> {
        let began = crate::backend::sqlite::stmt::prepare(conn, "BEGIN IMMEDIATE")
            .and_then(|mut s| s.execute([]));
        began.map(|_| ()).map_err(|e| {
            let err = Error::from(e);
            tracing::error!("writer: cannot begin a transaction: {err}");
            self.shared
                .stats
                .failed_commits
                .fetch_add(1, Ordering::Relaxed);
            err
        })
    }

    /// Commits the transaction of `writes` writes open on the writer's connection, on the
    /// calling thread, as the writer thread commits a group ([`CommitCx::commit`]): whether it
    /// committed, and whether the WAL now calls for a catch-up checkpoint.
    fn commit_here<'c>(
        &self,
        conn: &'c Conn<'c>,
        st: &'c RefCell<WriterState>,
        writes: u64,
    ) -> (Result<()>, bool) {
        let shared = &*self.shared;
        crate::timing::take_sync();
        let started = Instant::now();
        let persisted_before = st.borrow().persisted_version;
        let cx = CommitCx {
            clock: &*shared.clock,
            keyspace: shared.keyspace,
            stats: &shared.stats,
            wal_limit: shared.wal_limit,
        };
        cx.commit(conn, st, (writes, started, persisted_before))
    }

    /// [`Db::flush_gathered`]'s group on the calling thread, holding the writer's `core`: one
    /// transaction, run and committed as [`writer_loop`] runs and commits a group.
    fn run_group_here(&self, core: &WriterCore, jobs: Vec<(WriteJob, DeclaredKeys)>) {
        let shared = &*self.shared;
        let (conn, st) = (core.conn.get(), &core.st);
        if let Err(err) = self.begin_here(conn) {
            for (job, _) in jobs {
                job(None)(Err(err.clone()));
            }
            return;
        }
        let mut delivers = Vec::with_capacity(jobs.len());
        for (job, _) in jobs {
            let mut w = Writer::new(conn, shared.clock.now_ms(), shared.keyspace, st);
            delivers.push(job(Some(&mut w)));
            rolled_back(conn, st, true);
        }
        let (committed, catch_up) = self.commit_here(conn, st, delivers.len() as u64);
        for d in delivers {
            d(committed.clone());
        }
        if catch_up {
            // The checkpoint (tens of ms at worst) runs on the writer thread, between its
            // groups, not on a thread that serves clients.
            let (stats, locals, limit) = (
                shared.stats.clone(),
                shared.locals.clone(),
                shared.wal_limit,
            );
            let job: ConnJob =
                Box::new(move |conn| catch_up_checkpoint(conn, &stats, &locals, limit));
            let _ = shared.writer.send(WriterMsg::Conn(job));
        }
    }

    /// Runs `f` on a consistent snapshot and waits for its result: on the calling thread's own
    /// read connection (as [`Db::read_here`] does, without its step budget) for a file database, where handing the read to a
    /// reader thread and waiting for its answer would cost more than most reads themselves;
    /// on the writer's connection in memory.
    ///
    /// # Errors
    /// [`Error::Closed`] if the engine has shut down; otherwise whatever `f` returns.
    pub fn read<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Reader<'_>) -> Result<R> + Send + 'static,
    ) -> Result<R> {
        if self.shared.path.is_none() || self.shared.bulk {
            return self.read_via_reader(f);
        }
        let mut f = Some(f);
        match self.read_local(false, |r| f.take().map(|f| f(r))) {
            Some(Ok(Some(out))) => return out,
            // The read connection could not be opened: a reader thread may still read.
            Some(Err(e)) => tracing::debug!("reading on a reader thread: {e}"),
            Some(Ok(None)) | None => {}
        }
        match f {
            Some(f) => self.read_via_reader(f),
            None => unreachable!("read_here ran the read"),
        }
    }

    fn read_via_reader<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Reader<'_>) -> Result<R> + Send + 'static,
    ) -> Result<R> {
        let (tx, rx) = bounded(1);
        self.read_async(f, move |r| {
            let _ = tx.send(r);
        });
        answer(&rx).map_err(|_| Error::Closed)?.and_then(|r| r)
    }

    /// Runs `f` atomically on the writer and waits until it has committed.
    ///
    /// When the writer is free (no write queued, no group being committed), `f` runs right
    /// here, on the calling thread, as a transaction of its own: handing it to the writer
    /// thread and waiting for its answer would cost two thread wake-ups, more than a small
    /// write itself. Otherwise it joins the writer thread's next group commit. Either way there
    /// is one writer at a time, and `f` returns only once its write has committed.
    ///
    /// # Errors
    /// [`Error::Closed`] if the engine has shut down, a commit error, or `f`'s error (in which
    /// case nothing `f` wrote is kept).
    pub fn write<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Writer<'_>) -> Result<R> + Send + 'static,
    ) -> Result<R> {
        let f = match self.shared.core.try_lock() {
            // Only with nothing queued: a write this thread queued before (`write_async`) must
            // commit first. The writer thread takes work from the queue only while it holds
            // the core, so an empty queue seen while holding it means that everything queued
            // before has committed and been answered.
            Some(core) if self.shared.writer.is_empty() => return self.write_here(&core, f),
            _ => f,
        };
        let (tx, rx) = bounded(1);
        // A panic in `f` on the writer thread goes on in this thread, as it would have had `f`
        // run here; its group is rolled back (see `write_async_keys`).
        let panicked = Arc::new(Mutex::new(None));
        let caught = panicked.clone();
        self.write_async(
            move |w| {
                let r = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| w.atomic(f)))
                {
                    Ok(r) => r,
                    Err(p) => {
                        let e = Error::Storage(format!("a write panicked: {}", panic_text(&*p)));
                        *caught.lock() = Some(p);
                        Err(e)
                    }
                };
                if let Err(e @ (Error::Storage(_) | Error::DiskFull | Error::Io(_))) = &r {
                    w.poison(e.clone());
                }
                r
            },
            move |r| {
                let _ = tx.send(r);
            },
        );
        let r = answer(&rx);
        if let Some(p) = panicked.lock().take() {
            std::panic::resume_unwind(p);
        }
        r.map_err(|_| Error::Closed)?.and_then(|r| r)
    }

    /// [`Db::write`] on the calling thread, holding the writer's `core`: `f` in a transaction
    /// of its own, committed as the writer thread commits a group (its events published before
    /// it returns; a checkpoint after it when the WAL is over its limit). The tick's duties
    /// (expiry sweep, trash, ending idle snapshots) stay with the writer thread, which wakes
    /// for them on its own.
    fn write_here<R>(
        &self,
        core: &WriterCore,
        f: impl FnOnce(&mut Writer<'_>) -> Result<R>,
    ) -> Result<R> {
        if core.stopped {
            return Err(Error::Closed);
        }
        let shared = &*self.shared;
        let (conn, st) = (core.conn.get(), &core.st);
        let stats = &*shared.stats;
        self.begin_here(conn)?;
        // The transaction is `f`'s alone, so it needs no savepoint of its own (which would
        // copy every page `f` touches to the statement journal): if `f` fails, or panics, the
        // whole transaction is rolled back, before its error (or the panic) goes on to the
        // caller, leaving the core as the next holder expects it, with nothing of `f` in it.
        let abandon = Abandon(conn, st);
        let out = f(&mut Writer::new(
            conn,
            shared.clock.now_ms(),
            shared.keyspace,
            st,
        ));
        let out = match out {
            Ok(v) => {
                std::mem::forget(abandon);
                v
            }
            Err(e) => {
                drop(abandon);
                return Err(e);
            }
        };
        rolled_back(conn, st, false);
        let (committed, catch_up) = self.commit_here(conn, st, 1);
        if catch_up {
            catch_up_checkpoint(conn, stats, &shared.locals, shared.wal_limit);
        }
        committed.map(|()| out)
    }

    /// Stops (`false`) or restarts (`true`) the background expiry sweep (DEBUG
    /// SET-ACTIVE-EXPIRE): expired keys then stay in the file until something touches them,
    /// while every read still treats them as gone.
    pub fn set_active_expire(&self, on: bool) {
        self.stats().sweep_off.store(!on, Ordering::Relaxed);
    }

    /// Deletes up to `limit` expired keys now (the background sweep does this on its own every
    /// 100 ms; tests and tools call it to be deterministic). Returns how many it deleted.
    ///
    /// # Errors
    /// Storage errors, or [`Error::Closed`].
    pub fn sweep_expired(&self, limit: usize) -> Result<usize> {
        let stats = self.shared.stats.clone();
        let n = self.write(move |w| w.sweep(limit))?;
        stats.expired_keys.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }

    /// Deletes `key` of logical database `db` if it has expired, recording its `expired` event,
    /// as Redis's lazy expiry does when a read finds an expired key. Reads here run on
    /// read-only snapshots and only hide expired keys; a caller that wants the deletion (and
    /// the event) to happen as soon as a read saw the key missing hands it here. Does not wait:
    /// the deletion commits with the writer's next group transaction.
    pub fn expire_if_needed(&self, db: u32, key: Vec<u8>) {
        self.expire_if_needed_then(db, key, || {});
    }

    /// [`Db::expire_if_needed`], then `then` (on the writer thread), once the deletion and its
    /// `expired` event are out (or the attempt failed): for what Redis does after its lazy
    /// expiry, such as a read's `keymiss` event. Over PostgreSQL the group whose read found the
    /// key expired has deleted it already (`scratch::expire_lazily`): `then` runs at once.
    pub fn expire_if_needed_then(
        &self,
        db: u32,
        key: Vec<u8>,
        then: impl FnOnce() + Send + 'static,
    ) {
        if self.shared.backend == "postgres" {
            then();
            return;
        }
        self.write_async(
            move |w| {
                let r = w.atomic(|w| w.meta_for_write(db, &key).map(drop));
                if let Err(e) = r {
                    tracing::debug!("lazy expiry of a key found by a read: {e}");
                }
            },
            move |_| then(),
        );
    }

    /// DEBUG RELOAD's check: with the writer held, moves every committed write from the WAL
    /// into the database file (a full checkpoint), then runs `f` twice at the same instant:
    /// on the writer's connection (the live keyspace) and on a new connection that reads the
    /// file alone, ignoring the WAL, as a restart would find it. Returns both results.
    ///
    /// # Errors
    /// [`Error::Storage`] for an in-memory database (there is no file) or when the checkpoint
    /// cannot complete (readers kept it from finishing for a second); `f`'s errors.
    pub fn verify_file<R: Send + 'static>(
        &self,
        f: impl Fn(&mut Reader<'_>) -> Result<R> + Send + 'static,
    ) -> Result<(R, R)> {
        let Some(path) = self.shared.path.clone() else {
            return Err(Error::Storage("an in-memory database has no file".into()));
        };
        let (clock, keyspace) = (self.shared.clock.clone(), self.shared.keyspace);
        let locals = self.shared.locals.clone();
        let (tx, rx) = bounded(1);
        let job: ConnJob = Box::new(move |conn| {
            let run = || -> Result<(R, R)> {
                let deadline = Instant::now() + Duration::from_secs(1);
                loop {
                    // Threads' snapshots not in use would keep it from finishing.
                    locals.end_held(None);
                    // (busy, WAL frames, frames checkpointed): busy while a reader's snapshot
                    // still needs the WAL.
                    let busy: i64 =
                        conn.query_row("PRAGMA main.wal_checkpoint(TRUNCATE)", [], |r| r.get(0))?;
                    if busy == 0 {
                        break;
                    }
                    if Instant::now() > deadline {
                        return Err(Error::Storage(
                            "the checkpoint could not complete: readers hold the WAL".into(),
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                let file = Connection::open_with_flags(
                    format!("file:{}?immutable=1", path.display()),
                    OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI,
                )?;
                let now = clock.now_ms();
                let (conn, file) = (Conn::unkept(conn), Conn::unkept(&file));
                let live = f(&mut Reader::new(&conn, now, keyspace))?;
                let stored = f(&mut Reader::new(&file, now, keyspace))?;
                Ok((live, stored))
            };
            let _ = tx.send(run());
        });
        self.shared
            .writer
            .send(WriterMsg::Conn(job))
            .map_err(|_| Error::Closed)?;
        rx.recv().map_err(|_| Error::Closed)?
    }

    /// Writes a consistent copy of the whole database to `dest` through SQLite's online backup
    /// API, without stopping writes (the copy is the state at one committed instant).
    ///
    /// # Errors
    /// The destination cannot be written, or the engine has shut down.
    pub fn backup_to(&self, dest: impl AsRef<Path>) -> Result<()> {
        let dest = dest.as_ref().to_path_buf();
        let tmp = dest.with_extension("tmp-backup");
        let _ = std::fs::remove_file(&tmp);
        let copy = move |src: &Connection| -> Result<()> {
            let mut out = Connection::open(&tmp)?;
            {
                let b = rusqlite::backup::Backup::new(src, &mut out)?;
                // One step copies every page under one read transaction: a consistent copy
                // (rusqlite refuses SQLite's -1 for "all pages").
                b.run_to_completion(i32::MAX, Duration::ZERO, None)?;
            }
            out.pragma_update(None, "journal_mode", "DELETE")?;
            drop(out);
            std::fs::rename(&tmp, &dest).map_err(|e| Error::Storage(e.to_string()))?;
            Ok(())
        };
        match &self.shared.path {
            Some(path) => {
                let (src, _) = open_reader(path, &self.shared.stats.caches)?;
                copy(&src)
            }
            None => {
                let (tx, rx) = bounded(1);
                let job: ConnJob = Box::new(move |c| {
                    let _ = tx.send(copy(c));
                });
                self.shared
                    .writer
                    .send(WriterMsg::Conn(job))
                    .map_err(|_| Error::Closed)?;
                rx.recv().map_err(|_| Error::Closed)?
            }
        }
    }
}

/// Applies Relis's process-wide SQLite settings; [`Db::open_with`] calls it before it opens
/// anything, and an embedding program may call it first itself (before it opens SQLite
/// connections of its own, to choose when this happens). SQLite has one configuration per
/// process, so these hold for every SQLite connection in the process, Relis's or not:
///
/// - memory statistics are turned off (they make every allocation take a global mutex);
/// - the page cache is SQLite's default one without its full scans at commits (`pcache.rs`);
/// - the allocator is SQLite's default one wrapped to count user SQL's working memory per
///   thread (`sql/memory.rs`, for `sql-max-memory`);
/// - the default VFS becomes `relis-walwrite`, the platform's VFS that writes a commit's WAL
///   frames in one call (`walwrite.rs`); files are the same as with the platform's VFS;
/// - on unix, the WAL index's locks are kept between transactions while no other process has
///   the database open (`shmlocks.rs`), for every unix VFS of the process.
///
/// The first three need SQLite not yet initialised: if the program already used SQLite,
/// SQLite refuses them and its defaults stay (Relis works the same, only slower, and without
/// the per-statement memory limit). Idempotent.
pub fn configure_sqlite() {
    configure_sqlite_once();
    // Only in builds with the test shims (the crash harness's binary): a production build
    // cannot be made to hold writes in memory by its environment.
    #[cfg(feature = "test-shims")]
    crate::backend::sqlite::powercut::install_if_requested();
    crate::backend::sqlite::walwrite::install();
}

fn configure_sqlite_once() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        crate::backend::sqlite::pcache::install();
        crate::sql::memory::install();
        #[cfg(unix)]
        crate::backend::sqlite::shmlocks::install();
        // SAFETY: sqlite3_config is called before any connection is opened by Relis; SQLite
        // itself rejects the call (SQLITE_MISUSE) if the library is already initialised.
        unsafe {
            rusqlite::ffi::sqlite3_config(
                rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS,
                0 as std::ffi::c_int,
            );
        }
    });
}

/// The page size of new files by default ([`Options::page_size`]; existing files keep theirs).
/// Redis data is many small records updated at random places: each changed record costs its
/// whole page in the WAL (bytes written, and checksummed) at every commit, and 2 KiB pages
/// halve that against SQLite's default 4 KiB. Measured under redis-benchmark: ZADD on a
/// 100K-member set +12%, SET +8%, reads and list/set/hash writes unchanged; values of 100 KB
/// span twice as many overflow pages, and SET/HSET of them are 20-25% slower (BENCHMARKS.md).
pub const PAGE_SIZE: u32 = 2048;

/// Turns on SQLite's query planner stability guarantee (QPSG) for `conn`: a statement keeps the
/// plan it was prepared with, whatever values are bound. Without it, SQLite (3.47 and later)
/// plans `LIMIT ?` with the bound value and marks the statement expired at every rebinding, so
/// each cached statement with a bound LIMIT (range reads: XRANGE, XREADGROUP, ZRANGE, SCAN,
/// ...) was compiled again at every execution: 10-15% of the writer's time in an XREADGROUP +
/// XACK loop went to SQLite's parser (BENCHMARKS.md).
pub(crate) fn plan_once(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    Ok(())
}

/// How the writer's connection journals its transactions.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Journal {
    /// In memory: SQLite's in-memory journal.
    Memory,
    /// A file: WAL.
    Wal,
    /// A file opened with [`Options::bulk`]: none, and the file locked exclusively.
    Off,
}

fn configure_writer(
    conn: &Connection,
    durability: Durability,
    page_size: u32,
    journal: Journal,
) -> rusqlite::Result<()> {
    // Takes effect only on a file with no pages yet, so before the switch to WAL writes one.
    conn.pragma_update(None, "page_size", page_size)?;
    if journal == Journal::Off {
        // Taken at the first write and kept: no other connection can change the file under
        // the writer's page cache, so SQLite keeps the cache between transactions without
        // checking the file.
        conn.query_row("PRAGMA locking_mode=EXCLUSIVE", [], |_| Ok(()))?;
        let mode: String = conn.query_row("PRAGMA journal_mode=OFF", [], |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("off") {
            return Err(rusqlite::Error::InvalidParameterName(format!(
                "cannot turn the journal off (journal_mode is {mode})"
            )));
        }
        // Pages are read through the VFS (which flushes gathered writes first), never mapped.
        conn.pragma_update(None, "mmap_size", 0)?;
        // Each commit's (and each cache spill's) pages in long writes rather than one each
        // (the end of a 1M-key import: 84,000 writes of 2 KiB). Only an optimisation: under
        // another VFS the pages are written as SQLite writes them.
        if let Err(e) = crate::backend::sqlite::walwrite::gather_database_writes(conn) {
            tracing::debug!("bulk load without gathered writes: {e}");
        }
    }
    if journal == Journal::Wal {
        let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(rusqlite::Error::InvalidParameterName(format!(
                "cannot switch to WAL (journal_mode is {mode})"
            )));
        }
        // Checkpoints run on their own thread (checkpoint_loop), not inside the writer's commits.
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        conn.pragma_update(None, "journal_size_limit", WAL_KEEP_BYTES)?;
        // After wal_autocheckpoint, which replaces the WAL hook.
        conn.wal_hook(Some(note_wal_frames));
    }
    conn.pragma_update(None, "synchronous", durability.pragma())?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    conn.busy_timeout(Duration::from_secs(10))?;
    conn.set_prepared_statement_cache_capacity(256);
    plan_once(conn)
}

/// A read-only connection to `path`, sized and counted by `caches`, with its slot there.
fn open_reader(path: &Path, caches: &CacheState) -> Result<(Connection, Arc<ReaderSlot>)> {
    // Its page cache follows the log of the pages commits change (pagelog.rs): made when the
    // connection opens, and again when its first read learns the file's page size.
    let log = crate::backend::sqlite::pagelog::for_file(path);
    let conn = crate::backend::sqlite::pagelog::opening_reader(log, || {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
                | OpenFlags::SQLITE_OPEN_URI,
        )?;
        conn.query_row("SELECT count(*) FROM main.sqlite_schema", [], |_| Ok(()))?;
        Ok::<_, rusqlite::Error>(conn)
    })?;
    let (generation, sizes) = caches.current();
    caches::size_reader(&conn, sizes)?;
    conn.busy_timeout(Duration::from_secs(10))?;
    conn.set_prepared_statement_cache_capacity(256);
    plan_once(&conn)?;
    // Readers run read-only user SQL (SQL.QUERY): its sandbox and `relis_now()`.
    crate::sql::connection::install(&conn)?;
    let slot = caches.register(generation);
    Ok((conn, slot))
}

/// At most this many gathered writes run on the thread that flushes them
/// ([`Db::flush_gathered`]); more go to the writer thread.
const GATHERED_HERE: usize = 64;

/// `f` and `done` as a job for the writer's group ([`Db::write_async_keys`],
/// [`Db::write_gathered`]).
fn write_job<R: Send + 'static>(
    f: impl FnOnce(&mut Writer<'_>) -> R + Send + 'static,
    done: impl FnOnce(Result<R>) + Send + 'static,
) -> WriteJob {
    Box::new(move |w| match w {
        // A panic in `f` (a bug: in a command, or in an embedded caller's closure) fails
        // its group, whose transaction is rolled back, and the writer goes on: it would
        // otherwise end, and with it every later write.
        Some(w) => match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(w))) {
            Ok(r) => Box::new(move |committed: Result<()>| done(committed.map(|()| r))),
            Err(p) => {
                let e = Error::Storage(format!("a write panicked: {}", panic_text(&*p)));
                tracing::error!("writer: {e}; its group is rolled back");
                w.poison(e.clone());
                Box::new(move |committed: Result<()>| done(committed.and(Err(e))))
            }
        },
        // Only ever answered with the error that kept it from running.
        None => Box::new(move |failed: Result<()>| {
            done(failed.and_then(|()| Err(Error::Storage("a write did not run".into()))))
        }),
    })
}

/// How long the writer looks for more work after a commit before it sleeps. Clients answered by
/// a commit send their next requests within tens of microseconds; a writer asleep by then has to
/// be woken (a futex call by the sender, a scheduler wake-up for the writer), which costs more
/// than looking when the machine has time to spare: one client writing at `-P 1` gets 0.83-0.92
/// of redis-server's rate with the look and 0.50-0.60 without (BENCHMARKS.md). It yields the CPU
/// while it looks, so other threads run first.
///
/// Under load (groups of [`SPIN_LOAD`] writes or more on average) the writer does not look: many
/// clients keep the queue from emptying for long, and the look's `sched_yield` calls were 9% of
/// both CPUs under HSET at `-c 50 -P 1`, time the network thread and the clients needed (SET
/// 0.58-0.62 of redis-server's rate with the look, 0.63-0.71 without; LPUSH 0.60-0.62 against
/// 0.68-0.89). Before the writer ran on a short scheduler slice (see `prefer_prompt_wakeups`),
/// looking three times as long under load had been the better choice.
pub const WRITER_SPIN: Duration = Duration::from_micros(100);

/// The average group size (writes per group) from which the writer stops looking for more work
/// after a commit (see [`WRITER_SPIN`]).
const SPIN_LOAD: usize = 4;

/// How often the writer sweeps expired keys when it is idle, and at most how often under load.
/// Waits for the answer of a job handed to the writer. A commit answers within tens of
/// microseconds, sooner than a thread put to sleep is woken again: the caller looks for the
/// answer for up to `WRITER_SPIN` (yielding the CPU) before it sleeps.
fn answer<T>(rx: &Receiver<T>) -> std::result::Result<T, crossbeam_channel::RecvError> {
    let until = Instant::now() + WRITER_SPIN;
    loop {
        match rx.try_recv() {
            Ok(v) => return Ok(v),
            Err(crossbeam_channel::TryRecvError::Disconnected) => {
                return Err(crossbeam_channel::RecvError)
            }
            Err(crossbeam_channel::TryRecvError::Empty) if Instant::now() < until => {
                std::thread::yield_now();
            }
            Err(crossbeam_channel::TryRecvError::Empty) => return rx.recv(),
        }
    }
}

const SWEEP_EVERY: Duration = Duration::from_millis(100);
/// Keys deleted per sweep: small, so a sweep never stalls the writer for long.
const SWEEP_BATCH: usize = 64;
/// Elements of deleted large collections removed per sweep.
const TRASH_BATCH: usize = 4096;

/// The writer's side of the engine: its read-write connection (with the statements kept on it
/// and the data types' state, such as the sorted sets' pending rank counts) and the in-memory
/// [`WriterState`] (version counter, events of the open transaction). One thread holds it at a
/// time (`Shared::core`): the writer thread for each group it commits, or an embedded caller of
/// [`Db::write`] for its own write, run as a group of one on its thread ([`Db::write_here`]).
/// Whoever holds it runs a whole transaction, from `BEGIN IMMEDIATE` to publishing its events
/// and answering its writes, before letting go: SQLite's single writer and this state's
/// single user are one and the same, and commits, their events and their answers keep one
/// order.
struct WriterCore {
    conn: OwnedConn,
    st: RefCell<WriterState>,
    /// Set when the writer thread has ended (shut down, or a panic in its own code): nothing does
    /// the tick's duties any more, and an open transaction may be left behind.
    stopped: bool,
}

/// Rolls back the transaction an embedded caller's write ([`Db::write_here`]) opened, when
/// dropped (after the write failed, or while its panic unwinds; it is forgotten otherwise),
/// and forgets what the write left in the writer's state: the transaction held nothing else.
struct Abandon<'a>(&'a Conn<'a>, &'a RefCell<WriterState>);

impl Drop for Abandon<'_> {
    fn drop(&mut self) {
        let (conn, st) = (self.0, self.1);
        let _ = conn.execute_batch("ROLLBACK");
        // A panic may have come while the state was borrowed (released by now, but make sure).
        let Ok(mut st) = st.try_borrow_mut() else {
            return;
        };
        WriterHooks::discard(st.hooks, conn);
        st.poisoned = None;
        st.events.clear();
        st.lazily_expired = 0;
        // Restored by the code that set them, unless a panic came in between.
        st.mute_new = false;
        st.new_keys = None;
    }
}

/// After a write job in the writer's transaction: if SQLite rolled that transaction back on
/// its own (disk full, I/O error), what ran before in it is gone, so its whole group fails (the
/// state is poisoned) and the hooks' pending changes are dropped; with `reopen`, a new
/// transaction keeps the group's remaining jobs from autocommitting.
fn rolled_back(conn: &Conn<'_>, st: &RefCell<WriterState>, reopen: bool) {
    if !conn.is_autocommit() {
        return;
    }
    let mut st = st.borrow_mut();
    st.poisoned.get_or_insert(Error::Storage(
        "the transaction was rolled back by SQLite".into(),
    ));
    WriterHooks::discard(st.hooks, conn);
    if reopen {
        let _ = conn.execute_batch("BEGIN IMMEDIATE");
    }
}

/// Marks the core stopped when the writer thread ends, however it ends.
struct Stopped<'a>(&'a Mutex<WriterCore>);

impl Drop for Stopped<'_> {
    fn drop(&mut self) {
        self.0.lock().stopped = true;
    }
}

/// What committing a transaction on the core needs besides it: the same for the writer thread
/// and an embedded caller.
struct CommitCx<'a> {
    clock: &'a dyn Clock,
    keyspace: Keyspace,
    stats: &'a Stats,
    wal_limit: i32,
}

impl CommitCx<'_> {
    /// Writes the types' pending state and the counter, and commits the open transaction
    /// (unless it was poisoned); then, committed, counts it and publishes its events (before
    /// any of its writes is answered), or, failed, rolls back and forgets what it recorded.
    /// `started` is when the commit's own work began (`crate::timing::Timed::Commit`);
    /// `persisted_before` the counter's stored value before it. Returns the outcome, for every
    /// write of the transaction, and whether the WAL is over its limit (see
    /// [`catch_up_checkpoint`]).
    fn commit<'c>(
        &self,
        conn: &'c Conn<'c>,
        st: &'c RefCell<WriterState>,
        (n_writes, started, persisted_before): (u64, Instant, i64),
    ) -> (Result<()>, bool) {
        let stats = self.stats;
        let hooks = st.borrow().hooks;
        let poisoned = st.borrow_mut().poisoned.take();
        let committed = match poisoned {
            Some(e) => Err(e),
            None => WriterHooks::flush(hooks, conn)
                .and_then(|()| crate::backend::sqlite::counts::flush(conn))
                .and_then(|()| {
                    Writer::new(conn, self.clock.now_ms(), self.keyspace, st).persist_counter()
                })
                .and_then(|()| {
                    // Set by the WAL hook if the commit writes frames; a thread may commit for
                    // more than one engine, so no earlier value of another's must be read.
                    WAL_FRAMES.with(|f| f.set(-1));
                    crate::backend::sqlite::stmt::prepare(conn, "COMMIT")?.execute([])?;
                    Ok(())
                }),
        };
        match committed {
            Ok(()) => {
                stats
                    .timings
                    .report_with_syncs(crate::timing::Timed::Commit, started);
                // Release: a reader that sees the new count also sees the commit (read_here).
                stats.commits.fetch_add(1, Ordering::Release);
                let used = caches::cache_used(conn);
                stats.caches.writer_used.store(used, Ordering::Relaxed);
                // (-1: the transaction wrote nothing, and the WAL is as it was.)
                let frames = WAL_FRAMES.with(|f| f.get());
                let over = frames > self.wal_limit;
                if frames >= 0 && (over || stats.wal_over_limit.load(Ordering::Relaxed)) {
                    stats.wal_over_limit.store(over, Ordering::Relaxed);
                }
                stats.writes.fetch_add(n_writes, Ordering::Relaxed);
                let mut st = st.borrow_mut();
                let lazily = std::mem::take(&mut st.lazily_expired);
                if lazily > 0 {
                    stats.expired_keys.fetch_add(lazily, Ordering::Relaxed);
                }
                if !st.events.is_empty() {
                    // Published before the writes are answered, as Redis publishes during the
                    // command: a client that got its reply can count on the event being out.
                    let events = std::mem::take(&mut st.events);
                    if let Some(sink) = st.sink.get() {
                        sink.publish(events);
                    }
                }
                (Ok(()), over)
            }
            Err(e) => {
                tracing::error!("writer: commit failed, {n_writes} writes not applied: {e}");
                stats.failed_commits.fetch_add(1, Ordering::Relaxed);
                let _ = conn.execute_batch("ROLLBACK");
                let mut st = st.borrow_mut();
                WriterHooks::discard(hooks, conn);
                st.persisted_version = persisted_before;
                st.events.clear();
                st.lazily_expired = 0;
                (Err(e), false)
            }
        }
    }
}

/// After a commit that left the WAL over its limit: ends every snapshot not in use (a read
/// holds none meanwhile: the WAL restarts only once no reader is left in it) and catches up
/// with the checkpointer's remainder now, while nothing commits, so that the next transaction
/// can restart the WAL (see [`WAL_RESTART_FRAMES`]). After the replies, which need not wait
/// for its fsyncs.
fn catch_up_checkpoint(conn: &Connection, stats: &Stats, locals: &LocalReaders, limit: i32) {
    // A backlog far past the limit (the one transaction of a replica's full sync: hundreds of
    // MB) is the checkpointer's to copy while the writer goes on: copied here it held every
    // write up for seconds (4.2 s after a 5M-key sync, the replica's lag growing all along).
    // The writer takes over for the frames written since, once the checkpointer is through.
    let frames = WAL_FRAMES.with(|f| f.get());
    let checkpointed = *stats
        .checkpointed
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if for_the_checkpointer(frames, checkpointed, limit) {
        stats.checkpoint_now.store(true, Ordering::Relaxed);
        return;
    }
    locals.end_held(None);
    passive_checkpoint(conn, stats, "writer checkpoint");
}

/// How many times [`WAL_RESTART_FRAMES`] (or the configured limit) of frames not yet copied
/// the writer leaves to the checkpointer rather than copy them itself.
const CATCH_UP_BACKLOG: i32 = 4;

/// Whether a WAL of `frames`, of which the last checkpoint found (`log` long, `done` copied),
/// holds more than [`CATCH_UP_BACKLOG`] times `limit` frames not yet copied.
fn for_the_checkpointer(frames: i32, (log, done): (i32, i32), limit: i32) -> bool {
    // A WAL shorter than the last checkpoint saw has restarted since: nothing of it is copied.
    let backlog = if frames < log { frames } else { frames - done };
    backlog > limit.saturating_mul(CATCH_UP_BACKLOG)
}

/// A PASSIVE checkpoint on `conn` (the writer's or the checkpointer's), timed, and what it
/// found kept in `stats` (see [`catch_up_checkpoint`]).
fn passive_checkpoint(conn: &Connection, stats: &Stats, who: &str) {
    crate::timing::take_sync();
    let started = Instant::now();
    // (busy, WAL frames, frames checkpointed): -1 for both when the database is not in WAL mode.
    match conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
        Ok((r.get::<_, i32>(1)?, r.get::<_, i32>(2)?))
    }) {
        Ok((log, done)) if log >= 0 => {
            *stats
                .checkpointed
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = (log, done);
        }
        Ok(_) => {}
        Err(e) => tracing::debug!("{who}: {e}"),
    }
    stats
        .timings
        .report_with_syncs(crate::timing::Timed::Checkpoint, started);
}

fn writer_loop(
    core: Arc<Mutex<WriterCore>>,
    rx: Receiver<WriterMsg>,
    clock: Arc<dyn Clock>,
    keyspace: Keyspace,
    (max_batch, wal_limit, spin): (usize, i32, Duration),
    (stats, locals): (Arc<Stats>, Arc<LocalReaders>),
) {
    let _stopped = Stopped(&core);
    let cx = CommitCx {
        clock: &*clock,
        keyspace,
        stats: &stats,
        wal_limit,
    };
    let mut ready = Select::new();
    ready.recv(&rx);
    let mut last_sweep = Instant::now();
    let mut batch: Vec<WriterMsg> = Vec::with_capacity(max_batch);
    let mut delivers: Vec<Deliver> = Vec::with_capacity(max_batch);
    let mut reads: Vec<ReadJob> = Vec::new();
    let mut shutdown = false;
    // Writes per batch, a moving average (in sixteenths).
    let mut load = 0usize;
    // A connection job taken from the queue after writes of the group being collected: it
    // waits for the next group, at whose head it runs (see below).
    let mut carried: Option<WriterMsg> = None;
    while !shutdown {
        // See WRITER_SPIN: the next requests are usually on their way, and under load the
        // queue is seldom empty for long.
        if !spin.is_zero() && carried.is_none() && load < 16 * SPIN_LOAD {
            let until = Instant::now() + spin;
            while rx.is_empty() && Instant::now() < until {
                std::thread::yield_now();
            }
        }
        // Waits for work without taking it: work leaves the queue only while the core is held,
        // so an embedded caller holding it and finding the queue empty knows that everything
        // queued before has been answered (see `Db::write`; a carried connection job has no
        // answer to wait for).
        if carried.is_none() {
            let _ = ready.ready_timeout(SWEEP_EVERY);
        }
        let core = core.lock();
        let (conn, st) = (core.conn.get(), &core.st);
        batch.extend(carried.take());
        let mut writes = false;
        while batch.len() < max_batch {
            match rx.try_recv() {
                // A connection job runs between groups, after every write queued before it and
                // before every write queued after it (a cache resized for a load is the load's
                // from its first write): one that comes after writes ends the group.
                Ok(m @ WriterMsg::Conn(_)) if writes => {
                    carried = Some(m);
                    break;
                }
                Ok(m) => {
                    writes |= matches!(m, WriterMsg::Write(..));
                    batch.push(m);
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    shutdown = true;
                    break;
                }
            }
        }
        // The connection jobs at the group's head run now, outside any transaction.
        let head = batch
            .iter()
            .position(|m| !matches!(m, WriterMsg::Conn(_)))
            .unwrap_or(batch.len());
        for m in batch.drain(..head) {
            if let WriterMsg::Conn(job) = m {
                reads.push(Box::new(move |r| job(r.conn)));
            }
        }
        run_reads(conn, &mut reads, &*clock, keyspace);
        let sweep_due = last_sweep.elapsed() >= SWEEP_EVERY;
        if batch.is_empty() && !sweep_due {
            continue;
        }
        let began = crate::backend::sqlite::stmt::prepare(conn, "BEGIN IMMEDIATE")
            .and_then(|mut s| s.execute([]));
        if let Err(e) = began {
            let err = Error::from(e);
            tracing::error!("writer: cannot begin a transaction: {err}");
            for m in batch.drain(..) {
                match m {
                    // Nothing ran: every write is answered with the error without running.
                    WriterMsg::Write(job, _) => job(None)(Err(err.clone())),
                    // Reads and the shutdown need no transaction of the writer's.
                    WriterMsg::Read(job, _) => reads.push(Box::new(move |r| job(Some(r)))),
                    WriterMsg::Conn(job) => reads.push(Box::new(move |r| job(r.conn))),
                    WriterMsg::Shutdown => shutdown = true,
                }
            }
            run_reads(conn, &mut reads, &*clock, keyspace);
            stats.failed_commits.fetch_add(1, Ordering::Relaxed);
            if !shutdown {
                drop(core);
                std::thread::sleep(Duration::from_millis(10));
            }
            continue;
        }
        let mut n_writes = 0;
        load = load - load / 8 + 2 * batch.len();
        for m in batch.drain(..) {
            match m {
                WriterMsg::Write(job, _) => {
                    let mut w = Writer::new(conn, clock.now_ms(), keyspace, st);
                    delivers.push(job(Some(&mut w)));
                    n_writes += 1;
                    rolled_back(conn, st, true);
                }
                WriterMsg::Read(job, _) => reads.push(Box::new(move |r| job(Some(r)))),
                WriterMsg::Conn(job) => {
                    // After reads only (one after writes waits for the next group): runs after
                    // this batch commits, outside any transaction.
                    let job: ReadJob = Box::new(move |r| job(r.conn));
                    reads.push(job);
                }
                WriterMsg::Shutdown => shutdown = true,
            }
        }
        // The commit's own cost starts here (see crate::timing::Timed::Commit).
        crate::timing::take_sync();
        let commit_started = Instant::now();
        let persisted_before = {
            let mut w = Writer::new(conn, clock.now_ms(), keyspace, st);
            if sweep_due {
                last_sweep = Instant::now();
                if let Err(e) = w.atomic(|w| w.empty_trash(TRASH_BATCH)) {
                    tracing::warn!("emptying the trash failed: {e}");
                }
                let sweep = if stats.sweep_off.load(Ordering::Relaxed) {
                    Ok(0)
                } else {
                    w.atomic(|w| w.sweep(SWEEP_BATCH))
                };
                match sweep {
                    Ok(n) => {
                        stats.expired_keys.fetch_add(n as u64, Ordering::Relaxed);
                    }
                    Err(e) => tracing::warn!("expiry sweep failed: {e}"),
                }
            }
            w.persisted_version()
        };
        let (committed, catch_up) =
            cx.commit(conn, st, (n_writes, commit_started, persisted_before));
        for d in delivers.drain(..) {
            // An embedded caller's `done` is its own code: a panic there ends only its answer.
            let c = committed.clone();
            if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| d(c))) {
                tracing::error!("writer: a write's answer panicked: {}", panic_text(&*p));
            }
        }
        run_reads(conn, &mut reads, &*clock, keyspace);
        if sweep_due {
            // Idle threads' snapshots from before this commit go: a checkpoint can pass them.
            locals.end_held(Some(stats.commits.load(Ordering::Relaxed)));
        }
        if catch_up {
            catch_up_checkpoint(conn, &stats, &locals, wal_limit);
        }
    }
    // A clean stop folds the WAL back into the database file, so the file alone is complete;
    // no handle is left to read with, so every thread's snapshot can go.
    let core = core.lock();
    locals.end_held(None);
    final_checkpoint(core.conn.get());
}

/// The checkpoint of a clean stop: the whole WAL into the file, and the WAL emptied. While
/// another checkpoint runs (the checkpointer thread's last), SQLite answers busy at once,
/// without waiting: tried again until it is through, for a few seconds at most.
fn final_checkpoint(conn: &Connection) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
            r.get::<_, i64>(0)
        }) {
            Ok(0) => return,
            Ok(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
            Ok(_) => {
                tracing::warn!(
                    "final checkpoint: the WAL was still in use; it stays beside the file"
                );
                return;
            }
            Err(e) => {
                tracing::debug!("final checkpoint: {e}");
                return;
            }
        }
    }
}

/// Runs the reads queued to the writer (after its group, outside any transaction).
fn run_reads<'c>(
    conn: &'c Conn<'c>,
    reads: &mut Vec<ReadJob>,
    clock: &dyn Clock,
    keyspace: Keyspace,
) {
    for job in reads.drain(..) {
        let mut r = Reader::new(conn, clock.now_ms(), keyspace);
        // As for writes: a panicking read ends itself, not the writer.
        if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(&mut r))) {
            tracing::error!("writer: a read panicked: {}", panic_text(&*p));
        }
    }
}

/// A panic's message, for the log and the error a panicking job answers with.
fn panic_text(p: &(dyn std::any::Any + Send)) -> &str {
    p.downcast_ref::<&str>()
        .copied()
        .or_else(|| p.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

fn reader_loop(
    conn: Connection,
    rx: Receiver<ReadJob>,
    clock: Arc<dyn Clock>,
    keyspace: Keyspace,
    (caches, slot): (&CacheState, &ReaderSlot),
) {
    let conn = Conn::kept(&conn);
    // Finalizes the kept statements when this function ends, before the connection closes.
    let _finish = Finish(&conn);
    while let Ok(job) = rx.recv() {
        caches.refresh_reader(&conn, slot);
        // One snapshot per job, so a multi-key read sees one committed instant.
        let began =
            crate::backend::sqlite::stmt::prepare(&conn, "BEGIN").and_then(|mut s| s.execute([]));
        let mut r = Reader::new(&conn, clock.now_ms(), keyspace);
        // A panicking read (a bug) ends itself, not this reader.
        if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(&mut r))) {
            tracing::error!("reader: a read panicked: {}", panic_text(&*p));
        }
        if began.is_ok() {
            let _ = crate::backend::sqlite::stmt::prepare(&conn, "COMMIT")
                .and_then(|mut s| s.execute([]));
        }
        CacheState::note_reader(&conn, slot);
    }
}

fn checkpoint_loop(conn: Connection, stop: Arc<AtomicBool>, stats: &Stats, wal: &Path) {
    let mut last = Instant::now();
    let mut wal_file: Option<std::fs::File> = None;
    let mut commits = 0;
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(10));
        // See write_back; only when something committed since the last time.
        let now = stats.commits.load(Ordering::Relaxed);
        if now != commits {
            commits = now;
            if wal_file.is_none() {
                wal_file = std::fs::File::open(wal).ok();
            }
            if let Some(f) = &wal_file {
                write_back(f);
            }
        }
        let asked = stats.checkpoint_now.swap(false, Ordering::Relaxed);
        if !asked && last.elapsed() < Duration::from_millis(500) {
            continue;
        }
        last = Instant::now();
        // PASSIVE never waits for readers or the writer; the WAL restarts from its beginning
        // once a checkpoint has caught up.
        passive_checkpoint(&conn, stats, "checkpoint");
    }
    let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
}

/// Starts writing the WAL's dirty pages to disk, without waiting. Under `durability normal`
/// SQLite syncs the WAL only before a checkpoint, and at a few hundred MB/s of frames that fsync
/// found everything written since the last one still dirty: the writer's own catch-up
/// checkpoints (see [`WAL_RESTART_FRAMES`]) stalled it for tens of ms. Started every few ms on
/// the checkpointer's thread, the writeback leaves those fsyncs little to do. (Writing into a
/// page under writeback waits only on devices that ask for stable pages, and then no longer than
/// the fsync would have made the writer wait.)
fn write_back(wal: &std::fs::File) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: a plain system call on a descriptor we own; 0, 0 is the whole file.
        unsafe {
            libc::sync_file_range(wal.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = wal;
}

/// Asks the kernel to run the calling thread soon after it wakes, in short turns: the writer's
/// (Linux's EEVDF scheduler, 6.12 and later: a custom slice of 0.1 ms, its shortest, which gives
/// the thread earlier deadlines than threads on the default slice of a few ms).
///
/// Every write waits for the writer, so when its work arrives while the network thread and the
/// clients keep the CPUs busy, the time it waits for a CPU is added to every reply in the group.
/// Under redis-benchmark -c 50 on 2 CPUs it took SET -P 1 from 82-91k to 95-100k/s and LPUSH
/// from 89-105k to 114-126k; a long slice (20 ms) made it slower. No privilege is needed, the
/// thread's nice value and policy are kept, and older kernels ignore it.
pub(crate) fn prefer_prompt_wakeups() {
    #[cfg(target_os = "linux")]
    {
        /// `struct sched_attr`, first version (48 bytes).
        #[repr(C)]
        struct SchedAttr {
            size: u32,
            policy: u32,
            flags: u64,
            nice: i32,
            priority: u32,
            runtime: u64,
            deadline: u64,
            period: u64,
        }
        const SCHED_FLAG_KEEP_POLICY: u64 = 0x08;
        // SAFETY: plain system calls about the calling thread (0), with a valid sched_attr.
        let rc = unsafe {
            let nice = libc::getpriority(libc::PRIO_PROCESS, 0);
            let attr = SchedAttr {
                size: std::mem::size_of::<SchedAttr>() as u32,
                policy: libc::SCHED_OTHER as u32,
                flags: SCHED_FLAG_KEEP_POLICY,
                nice,
                priority: 0,
                runtime: 100_000,
                deadline: 0,
                period: 0,
            };
            libc::syscall(libc::SYS_sched_setattr, 0, &attr as *const SchedAttr, 0)
        };
        if rc != 0 {
            tracing::debug!(
                "sched_setattr (a short slice for the writer): {}",
                std::io::Error::last_os_error()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_large_backlog_is_left_to_the_checkpointer() {
        use super::for_the_checkpointer as left;
        // Nothing copied yet of a WAL far past the limit: the checkpointer's.
        assert!(left(100_000, (0, 0), 16_384));
        // Within the slack: the writer copies it (and the WAL restarts).
        assert!(!left(60_000, (0, 0), 16_384));
        // The checkpointer went through the first 100,000; the writer takes the rest.
        assert!(!left(101_000, (100_000, 100_000), 16_384));
        // It copied only part of it (a reader held it back): still the checkpointer's.
        assert!(left(101_000, (100_000, 20_000), 16_384));
        // Restarted since the last checkpoint: all of a short WAL is new, and the writer's.
        assert!(!left(500, (100_000, 100_000), 16_384));
        assert!(left(70_000, (100_000, 100_000), 16_384));
    }
    /// How often a statement with a bound LIMIT was compiled again over three executions with
    /// three different limits, on the writer's and on a reader's connection.
    fn recompiles(db: &crate::Db) -> (i32, i32) {
        fn run(conn: &rusqlite::Connection) -> i32 {
            let sql = "SELECT key FROM main.relis_keys WHERE db = ?1 ORDER BY key LIMIT ?2";
            let mut st = conn.prepare(sql).unwrap();
            for limit in 1..=3 {
                let mut rows = st.query((0, limit)).unwrap();
                while rows.next().unwrap().is_some() {}
            }
            st.get_status(rusqlite::StatementStatus::RePrepare)
        }
        let writer = db.write(|w| Ok(run(w.conn))).unwrap();
        let reader = db.read(|r| Ok(run(r.conn))).unwrap();
        (writer, reader)
    }

    /// Engines opened and closed one after another on one thread, each on its own file: the
    /// allocator hands a closed engine's address out again, and a read on the calling thread
    /// must not go through the closed engine's thread-local connection (still open on the
    /// other file) then.
    #[test]
    fn read_here_does_not_reuse_a_closed_engines_connection() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..60 {
            let db = crate::Db::open(dir.path().join(format!("{i}.db"))).unwrap();
            db.set("k", i.to_string()).unwrap();
            let got = db.read_here(|r| r.get(0, b"k")).unwrap().unwrap().unwrap();
            assert_eq!(got.as_deref(), Some(i.to_string().as_bytes()), "engine {i}");
        }
    }

    /// An engine opened with `Options::bulk` writes its file without a WAL or a journal and
    /// reads on its writer; the file then opens as any other, in WAL mode.
    #[test]
    fn a_bulk_engine_writes_without_a_journal_and_its_file_opens_normally() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bulk.db");
        let db = crate::Db::open_with(crate::Options {
            bulk: true,
            ..crate::Options::file(&path)
        })
        .unwrap();
        db.set("k", "v").unwrap();
        let mode: String = db
            .write(|w| Ok(w.conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?))
            .unwrap();
        assert_eq!(mode, "off");
        assert!(db.read_here(|r| r.get(0, b"k")).is_none());
        let got = db.read(|r| r.get(0, b"k")).unwrap();
        assert_eq!(got.as_deref(), Some(&b"v"[..]));
        for suffix in ["-wal", "-journal"] {
            let mut p = path.as_os_str().to_owned();
            p.push(suffix);
            assert!(!std::path::Path::new(&p).exists(), "{suffix}");
        }
        drop(db);
        let db = crate::Db::open(&path).unwrap();
        assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"v"[..]));
        let mode: String = db
            .write(|w| Ok(w.conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))?))
            .unwrap();
        assert_eq!(mode, "wal");
    }

    #[test]
    fn statements_keep_their_plan_whatever_is_bound() {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::Db::open(dir.path().join("plans.db")).unwrap();
        assert_eq!(recompiles(&db), (0, 0));
    }

    /// The calling thread's line `name` of /proc/thread-self/sched, where the kernel has one.
    #[cfg(target_os = "linux")]
    fn sched_line(name: &str) -> Option<String> {
        let text = std::fs::read_to_string("/proc/thread-self/sched").ok()?;
        text.lines()
            .find(|l| l.split(':').next().map(str::trim) == Some(name))
            .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
    }

    #[cfg(target_os = "linux")]
    fn kernel_at_least(major: u32, minor: u32) -> bool {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        let mut parts = release
            .split(|c: char| !c.is_ascii_digit())
            .map(|p| p.parse::<u32>().unwrap_or(0));
        (parts.next().unwrap_or(0), parts.next().unwrap_or(0)) >= (major, minor)
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn the_writer_gets_a_short_slice_and_keeps_its_nice_value() {
        std::thread::spawn(|| {
            // SAFETY: plain system calls about the calling thread.
            unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 3) };
            super::prefer_prompt_wakeups();
            assert_eq!(unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }, 3);
            // Custom slices came with Linux 6.12; the slice shows where scheduler statistics do.
            if kernel_at_least(6, 12) {
                if let Some(slice) = sched_line("se.slice") {
                    assert_eq!(slice, "100000");
                }
            }
        })
        .join()
        .unwrap();
    }
}
