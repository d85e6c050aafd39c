//! The state connections share ([`Shared`]) and the server-wide parts it is made of that no
//! other module owns: statistics, SCAN cursors, TOUCH times, snapshot bookkeeping, the INFO
//! sampler, the named SQL databases. Commands read and change it; it knows no command.

use crate::client::ClientInfo;
use crate::config::Config;
use crate::spec::Index;
use parking_lot::{Mutex, RwLock};
use relis::SqlDb;
use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::watch;

/// Per-command statistics for INFO commandstats.
#[derive(Debug, Default)]
pub struct CmdStat {
    /// Successful and failed executions.
    pub calls: AtomicU64,
    /// Total microseconds spent executing.
    pub usec: AtomicU64,
    /// Rejected before execution (arity, auth, parse errors).
    pub rejected_calls: AtomicU64,
    /// Executed and replied with an error.
    pub failed_calls: AtomicU64,
}

/// Server-wide counters for INFO stats.
#[derive(Debug, Default)]
pub struct Stats {
    /// Connections accepted.
    pub total_connections_received: AtomicU64,
    /// Commands processed.
    pub total_commands_processed: AtomicU64,
    /// Connections refused (maxclients).
    pub rejected_connections: AtomicU64,
    /// Bytes read from clients.
    pub net_input_bytes: AtomicU64,
    /// Bytes written to clients.
    pub net_output_bytes: AtomicU64,
    /// Error replies sent.
    pub total_error_replies: AtomicU64,
    /// Read lookups that found a key.
    pub keyspace_hits: AtomicU64,
    /// Read lookups that found nothing.
    pub keyspace_misses: AtomicU64,
    /// Reads from client sockets that returned data or end of file.
    pub total_reads_processed: AtomicU64,
    /// Writes of replies to client sockets.
    pub total_writes_processed: AtomicU64,
}

/// SCAN cursors: Redis cursors are integers, Relis scans in key order, so a cursor number names
/// the key a scan stopped at. Bounded: the oldest cursors are forgotten first (a forgotten
/// cursor restarts its scan, which SCAN's guarantees allow: keys may be returned twice).
///
/// Numbers count up from a base drawn at start-up between 2^40 and 2^48: every cursor stays
/// exact as a double (below 2^53, so JavaScript clients send back what they got), and a cursor
/// kept across a restart names nothing (it restarts its scan) instead of another scan's key,
/// which could skip keys.
#[derive(Debug)]
pub struct Cursors {
    base: u64,
    next: u64,
    map: BTreeMap<u64, (u32, bytes::Bytes)>,
    order: VecDeque<u64>,
    /// Cursors of scans inside one key (SSCAN, ...): (db, key, where the page stopped).
    keyed: BTreeMap<u64, (u32, bytes::Bytes, bytes::Bytes)>,
}

const MAX_CURSORS: usize = 100_000;

/// The largest cursor a double holds exactly.
const MAX_CURSOR: u64 = (1 << 53) - 1;

impl Default for Cursors {
    fn default() -> Cursors {
        Cursors {
            base: rand::random_range(1u64 << 40..1 << 48),
            next: 0,
            map: BTreeMap::new(),
            order: VecDeque::new(),
            keyed: BTreeMap::new(),
        }
    }
}

impl Cursors {
    /// Remembers where a scan of `db` stopped; returns the cursor number to give the client.
    pub fn save(&mut self, db: u32, after: bytes::Bytes) -> u64 {
        self.next += 1;
        if self.base + self.next > MAX_CURSOR {
            // Never reached in practice (2^52 pages); numbers start over, still never 0.
            self.next = 1;
        }
        let id = self.base + self.next;
        self.map.insert(id, (db, after));
        self.order.push_back(id);
        while self.order.len() > MAX_CURSORS {
            if let Some(old) = self.order.pop_front() {
                self.map.remove(&old);
                self.keyed.remove(&old);
            }
        }
        id
    }

    /// Where the scan named `id` continues, if it is known and for the same database.
    pub fn resume(&self, db: u32, id: u64) -> Option<bytes::Bytes> {
        self.map
            .get(&id)
            .filter(|(d, _)| *d == db)
            .map(|(_, k)| k.clone())
    }

    /// Remembers where a scan inside `key` of `db` stopped (SSCAN and the like); returns the
    /// cursor number to give the client. Shares numbering and bounds with [`Cursors::save`].
    pub fn save_keyed(&mut self, db: u32, key: bytes::Bytes, after: bytes::Bytes) -> u64 {
        let id = self.save(db, bytes::Bytes::new());
        self.map.remove(&id);
        self.keyed.insert(id, (db, key, after));
        id
    }

    /// Where the scan inside `key` of `db` named `id` continues, if it is known and for the same
    /// database and key.
    pub fn resume_keyed(&self, db: u32, key: &[u8], id: u64) -> Option<bytes::Bytes> {
        self.keyed
            .get(&id)
            .filter(|(d, k, _)| *d == db && k == key)
            .map(|(_, _, after)| after.clone())
    }
}

/// When TOUCH last touched keys (unix ms), for OBJECT IDLETIME: the file records only a key's
/// last write, and writing a row for a read-only command would cost a commit. Kept in memory,
/// bounded (when full it starts over: idle times fall back to the last write).
#[derive(Debug, Default)]
pub struct Touched {
    map: Mutex<rustc_hash::FxHashMap<(u32, bytes::Bytes), i64>>,
}

/// Most keys [`Touched`] remembers.
const MAX_TOUCHED: usize = 100_000;

impl Touched {
    /// Records that `key` of `db` was touched at `now_ms`.
    pub fn touch(&self, db: u32, key: &bytes::Bytes, now_ms: i64) {
        let mut map = self.map.lock();
        if map.len() >= MAX_TOUCHED && !map.contains_key(&(db, key.clone())) {
            map.clear();
        }
        map.insert((db, key.clone()), now_ms);
    }

    /// When `key` of `db` was last touched, if it was.
    pub fn last(&self, db: u32, key: &bytes::Bytes) -> Option<i64> {
        self.map.lock().get(&(db, key.clone())).copied()
    }
}

/// Everything connections share.
pub struct Shared {
    /// The engine.
    pub db: relis::Db,
    /// Current configuration.
    pub config: RwLock<Config>,
    /// The config file the server was started with, for CONFIG REWRITE.
    pub config_file: Option<std::path::PathBuf>,
    /// Connected clients by id.
    pub clients: Mutex<BTreeMap<u64, Arc<ClientInfo>>>,
    /// How many clients `clients` holds (read without its lock on the connection path).
    pub connected: std::sync::atomic::AtomicUsize,
    next_client_id: AtomicU64,
    /// Counters.
    pub stats: Stats,
    /// Per-command counters, by command table index.
    pub cmd_stats: Vec<CmdStat>,
    /// When the server started.
    pub started: Instant,
    /// Unix seconds of the last successful SAVE (start time until then).
    pub lastsave: AtomicI64,
    /// Unix seconds of the last BGSAVE's end and whether it succeeded, for INFO persistence.
    pub last_bgsave_ok: std::sync::atomic::AtomicBool,
    /// SCAN cursors.
    pub cursors: Mutex<Cursors>,
    /// TOUCH's access times (OBJECT IDLETIME).
    pub touched: Touched,
    /// The address the server listens on.
    pub addr: SocketAddr,
    /// A random 40-hex-digit id of this run (INFO run_id).
    pub run_id: String,
    /// Error replies by their first word (INFO errorstats).
    pub errors: Mutex<BTreeMap<String, u64>>,
    /// SAVE / BGSAVE bookkeeping (INFO persistence).
    pub save: SaveState,
    /// The resident set when the server had started (MEMORY STATS `startup.allocated`).
    pub startup_memory: u64,
    /// Instantaneous rates and peak memory (INFO stats, memory).
    pub sampler: Sampler,
    /// Clients blocked on keys.
    pub blocking: crate::blocking::Blocking,
    /// Named SQL databases (SQL.DB), by name.
    pub sql: Databases,
    /// Pub/sub subscriptions, and the keyspace notifications the engine hands over.
    pub pubsub: Arc<crate::pubsub::PubSub>,
    /// CLIENT PAUSE.
    pub pause: crate::pause::Pause,
    /// Lua scripts and function libraries.
    pub scripting: crate::script::Scripting,
    /// The TLS configuration new TLS connections get (None without a TLS listener); CONFIG
    /// SET of a `tls-*` setting replaces it.
    pub tls: RwLock<Option<crate::tls::TlsAcceptor>>,
    /// ACL users and the ACL log.
    pub acl: crate::acl::Acl,
    /// SLOWLOG, LATENCY and the per-command latency histograms.
    pub observe: Arc<crate::observe::Observe>,
    /// MONITOR clients.
    pub monitors: crate::monitor::Monitors,
    /// The replication role: a replica's link to its master (REPLICAOF).
    pub replication: crate::replica::Replication,
    shutdown: watch::Sender<bool>,
}

impl Shared {
    /// Removes client `id` from `clients` (it has gone).
    pub fn forget_client(&self, id: u64) {
        let mut clients = self.clients.lock();
        clients.remove(&id);
        self.connected
            .store(clients.len(), std::sync::atomic::Ordering::Relaxed);
    }

    /// The shared state of a server on `db`, with its named SQL databases `sql` and its
    /// `scripting` state (both reloaded from the database by `server`'s `Shared::new`).
    pub fn assemble(
        db: relis::Db,
        config: Config,
        config_file: Option<std::path::PathBuf>,
        addr: SocketAddr,
        sql: Databases,
        scripting: crate::script::Scripting,
    ) -> Shared {
        let n = Index::get().len();
        let (shutdown, _) = watch::channel(false);
        let now = unix_ms() / 1000;
        let pubsub = Arc::new(crate::pubsub::PubSub::default());
        pubsub.configure(&config);
        db.set_event_sink(pubsub.clone());
        let acl = crate::acl::Acl::new(&config.requirepass);
        acl.log_max
            .store(config.acllog_max_len, std::sync::atomic::Ordering::Relaxed);
        let observe = Arc::new(crate::observe::Observe::default());
        observe.configure(&config);
        // The engine's own timings (group commits, fsyncs, checkpoints) are latency events.
        let monitor = Arc::downgrade(&observe);
        db.on_timing(Box::new(move |event, took| {
            if let Some(m) = monitor.upgrade() {
                m.latency
                    .add_if_needed(event.name(), took.as_millis() as u64);
            }
        }));
        Shared {
            db,
            config: RwLock::new(config),
            config_file,
            clients: Mutex::new(BTreeMap::new()),
            connected: std::sync::atomic::AtomicUsize::new(0),
            next_client_id: AtomicU64::new(1),
            stats: Stats::default(),
            cmd_stats: (0..n).map(|_| CmdStat::default()).collect(),
            started: Instant::now(),
            lastsave: AtomicI64::new(now),
            last_bgsave_ok: std::sync::atomic::AtomicBool::new(true),
            cursors: Mutex::new(Cursors::default()),
            touched: Touched::default(),
            addr,
            run_id: (0..40)
                .map(|_| char::from_digit(rand::random_range(0..16u32), 16).unwrap_or('0'))
                .collect(),
            errors: Mutex::new(BTreeMap::new()),
            save: Default::default(),
            startup_memory: rss_bytes(),
            sampler: Default::default(),
            blocking: Default::default(),
            sql,
            pubsub,
            pause: crate::pause::Pause::default(),
            scripting,
            tls: RwLock::new(None),
            acl,
            observe,
            monitors: Default::default(),
            replication: Default::default(),
            shutdown,
        }
    }

    /// Counts an error reply under its first word (`ERR`, `WRONGTYPE`, ...) for INFO
    /// errorstats. Like Redis, it tracks at most 128 different words.
    pub fn count_error(&self, text: &[u8]) {
        let code = text.split(|b| *b == b' ').next().unwrap_or_default();
        let code = String::from_utf8_lossy(code);
        let mut errors = self.errors.lock();
        if let Some(n) = errors.get_mut(code.as_ref()) {
            *n += 1;
        } else if errors.len() < 128 {
            errors.insert(code.into_owned(), 1);
        }
    }

    /// A fresh client id.
    pub fn next_client_id(&self) -> u64 {
        self.next_client_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Asks the server to stop: the accept loop ends and every connection closes.
    pub fn request_shutdown(&self) {
        let _ = self.shutdown.send(true);
    }

    /// A receiver that changes when shutdown is requested.
    pub fn shutdown_signal(&self) -> watch::Receiver<bool> {
        self.shutdown.subscribe()
    }

    /// Whether shutdown has been requested.
    pub fn is_shutting_down(&self) -> bool {
        *self.shutdown.borrow()
    }
}

/// Unix time in microseconds (MONITOR's timestamps).
pub fn unix_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// Unix time in milliseconds from the engine's clock source of truth for wall time.
pub fn unix_ms() -> i64 {
    use relis::Clock;
    relis::SystemClock.now_ms()
}

/// Snapshot bookkeeping for LASTSAVE and INFO persistence.
#[derive(Debug)]
pub struct SaveState {
    /// A SAVE or BGSAVE is running.
    pub in_progress: AtomicBool,
    /// Unix ms when the running snapshot started.
    pub started_ms: AtomicI64,
    /// Seconds the last background snapshot took (-1 before the first).
    pub last_bgsave_secs: AtomicI64,
    /// Successful snapshots.
    pub saves: AtomicU64,
    /// Engine write count when the last successful snapshot started.
    pub writes_at_save: AtomicU64,
}

impl Default for SaveState {
    fn default() -> Self {
        SaveState {
            in_progress: AtomicBool::new(false),
            started_ms: AtomicI64::new(0),
            last_bgsave_secs: AtomicI64::new(-1),
            saves: AtomicU64::new(0),
            writes_at_save: AtomicU64::new(0),
        }
    }
}

/// How many samples the instantaneous rates average (Redis: 16, one every 100 ms).
const SAMPLES: usize = 16;

#[derive(Default)]
struct Samples {
    last: Option<(Instant, u64, u64, u64)>,
    ops: [f64; SAMPLES],
    input: [f64; SAMPLES],
    output: [f64; SAMPLES],
    next: usize,
}

/// Samples the command and network counters every 100 ms for INFO's instantaneous rates, as
/// Redis's `trackInstantaneousMetric` does, and tracks the peak memory.
#[derive(Default)]
pub struct Sampler {
    samples: Mutex<Samples>,
    peak_memory: AtomicU64,
}

impl Sampler {
    /// Takes one sample of `s` (every 100 ms: see `server::spawn_sampler`).
    pub fn sample(&self, s: &Stats) {
        let now = Instant::now();
        let cmds = s.total_commands_processed.load(Ordering::Relaxed);
        let input = s.net_input_bytes.load(Ordering::Relaxed);
        let output = s.net_output_bytes.load(Ordering::Relaxed);
        let mut g = self.samples.lock();
        if let Some((t, c, i, o)) = g.last {
            let secs = now.duration_since(t).as_secs_f64().max(1e-3);
            let k = g.next;
            g.ops[k] = cmds.saturating_sub(c) as f64 / secs;
            g.input[k] = input.saturating_sub(i) as f64 / secs / 1024.0;
            g.output[k] = output.saturating_sub(o) as f64 / secs / 1024.0;
            g.next = (k + 1) % SAMPLES;
        }
        g.last = Some((now, cmds, input, output));
        drop(g);
        self.note_memory(rss_bytes());
    }

    /// Instantaneous commands per second and input / output KiB per second.
    pub fn rates(&self) -> (u64, f64, f64) {
        let g = self.samples.lock();
        let avg = |a: &[f64; SAMPLES]| a.iter().sum::<f64>() / SAMPLES as f64;
        (avg(&g.ops).round() as u64, avg(&g.input), avg(&g.output))
    }

    /// Records a memory reading; returns the peak so far.
    pub fn note_memory(&self, used: u64) -> u64 {
        self.peak_memory
            .fetch_max(used, Ordering::Relaxed)
            .max(used)
    }
}

/// The system's memory page size in bytes.
pub fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 {
        n as u64
    } else {
        4096
    }
}

/// The process's resident set size in bytes (Linux `/proc/self/statm`), 0 if unknown.
pub fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * page_size())
}

/// Gives the memory this thread's allocator heap holds free back to the system (MEMORY PURGE):
/// mimalloc (the server's allocator) keeps a thread's freed pages for its next allocations;
/// and glibc's heap, which the few allocations made outside Rust use.
pub fn release_free_memory() {
    // SAFETY: both only hand memory that nothing uses back to the system.
    unsafe {
        libmimalloc_sys::mi_collect(true);
        libc::malloc_trim(0);
    }
}

/// [`release_free_memory`] on the engine's writer thread (it runs there as an empty write),
/// then on this one.
pub fn release_free_memory_everywhere(db: &relis::Db) {
    db.write_async(|_| release_free_memory(), |_| {});
    release_free_memory();
}

/// One open named database.
#[derive(Clone)]
pub struct Named {
    /// The database.
    pub db: SqlDb,
    /// Its file as recorded (relative to `dir`), `None` in memory.
    pub file: Option<String>,
}

/// The open named databases (SQL.DB), by name. `cmd::sql::db` opens, records and drops them.
/// Over the PostgreSQL backend, where SQL runs on PostgreSQL instead (and there are no named
/// databases), the sessions for it.
#[derive(Default)]
pub struct Databases {
    map: RwLock<BTreeMap<String, Named>>,
    postgres: Option<Arc<relis::postgres::PgSql>>,
}

/// No named SQL database has this name (the command error is `cmd::sql::db::no_such`).
#[derive(Debug)]
pub struct NoSuchDb(pub String);

impl Databases {
    /// The databases of `map`.
    pub fn new(map: BTreeMap<String, Named>) -> Databases {
        Databases {
            map: RwLock::new(map),
            postgres: None,
        }
    }

    /// SQL over the PostgreSQL backend at `url` (connected at first use).
    pub fn on_postgres(url: &str) -> Databases {
        Databases {
            map: RwLock::default(),
            postgres: Some(relis::postgres::PgSql::new(url)),
        }
    }

    /// Where SQL runs over the PostgreSQL backend (`None` on SQLite).
    pub fn postgres(&self) -> Option<Arc<relis::postgres::PgSql>> {
        self.postgres.clone()
    }

    /// The database `name`.
    ///
    /// # Errors
    /// There is none.
    pub fn get(&self, name: &str) -> Result<SqlDb, NoSuchDb> {
        self.map
            .read()
            .get(name)
            .map(|n| n.db.clone())
            .ok_or_else(|| NoSuchDb(name.to_string()))
    }

    /// Every database, by name.
    pub fn list(&self) -> Vec<(String, Named)> {
        self.map
            .read()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// Whether `name` is open.
    pub fn contains(&self, name: &str) -> bool {
        self.map.read().contains_key(name)
    }

    /// How many are open.
    pub fn len(&self) -> usize {
        self.map.read().len()
    }

    /// Whether none is open.
    pub fn is_empty(&self) -> bool {
        self.map.read().is_empty()
    }

    /// Adds `named` as `name` unless `refuse`, asked under the lock whether the name is taken
    /// and how many are open, gives a reason not to.
    ///
    /// # Errors
    /// `refuse`'s reason, with `named` handed back.
    pub fn add_unless<E>(
        &self,
        name: String,
        named: Named,
        refuse: impl FnOnce(bool, usize) -> Option<E>,
    ) -> Result<(), (E, Named)> {
        let mut map = self.map.write();
        if let Some(e) = refuse(map.contains_key(&name), map.len()) {
            return Err((e, named));
        }
        map.insert(name, named);
        Ok(())
    }

    /// Forgets `name`, handing it back.
    pub fn remove(&self, name: &str) -> Option<Named> {
        self.map.write().remove(name)
    }
}
