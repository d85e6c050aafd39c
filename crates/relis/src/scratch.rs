//! The engine over PostgreSQL, assembled from the PostgreSQL key table (`backend::postgres`),
//! the SQLite backend's writer plumbing and the types' whole-value DUMP/RESTORE: the writer
//! loop over PostgreSQL (ARCHITECTURE.md 10.1). Each group of queued jobs runs on
//! the existing engine over a scratch in-memory SQLite database that holds only the keys the
//! group's jobs declare. In order, per group:
//!
//! 1. one PostgreSQL round trip: `BEGIN`, advisory locks on every declared key in hash order,
//!    the keys' rows (a group of reads only: the rows, without transaction or locks), and, for a
//!    group with a job that declared them, the function libraries when they changed since this
//!    node last took them (`Reader::take_function_libraries`; a change locks and loads them);
//! 2. the live rows are restored into the scratch (inside its own transaction) with the
//!    versions PostgreSQL gave them, so WATCH compares versions every node agrees on; expired
//!    rows are skipped and deleted by lazy expiry ([`PgKeys::expire_rows`]: a group of reads
//!    at once, a writing group in its commit for the keys it locked and after it for the
//!    others), each `expired` event sent by the one node whose deletion PostgreSQL returned;
//! 3. the write jobs run as on the SQLite backend;
//! 4. the group's flushes and swaps of whole databases are made in PostgreSQL, in order; every
//!    declared key whose scratch version moved is dumped and written back, every one that
//!    vanished deleted (and the function libraries, when a change declared them and they
//!    differ), and PostgreSQL commits, in one round trip; a key written that was not declared
//!    fails the whole group instead (it was never locked);
//! 5. the reads run on the scratch (which then holds what PostgreSQL committed, or what it had
//!    before if the commit failed), events go out, the writes are answered, and the scratch
//!    transaction is rolled back, leaving it empty for the next group.
//!
//! Between groups, every 100 ms, the node runs its share of the active expiry
//! ([`PgKeys::sweep_expired`]: nodes take disjoint rows) and publishes the `expired` events.
//!
//! Conflicts: the connection runs READ COMMITTED whatever the database's default, and a group
//! takes all its locks in one statement in ascending order, so no serialization failure or
//! deadlock can arise between nodes. One reported while locking (possible only against
//! clients that take the same advisory locks otherwise) is retried before any job runs; once
//! jobs have run, they cannot run again (they are `FnOnce`), so a failure after that answers
//! the group with the error: nothing of it was written.

use crate::backend::postgres::{
    is_conflict, Change, Codec, FunctionSet, Functions, Key, Libraries, PgKeys, PgKeyspace, Stored,
};
use crate::backend::sqlite::db::{
    declared, Declared, Deliver, Stats, WriteJob, WriterMsg, WriterRead,
};
use crate::backend::sqlite::stmt::{prepare, Conn};
use crate::backend::sqlite::store::{
    Keyspace, LoadedFunctions, Reader, SharedKeyspace, TypedKeys, WideChange, Writer, WriterHooks,
    WriterState,
};
use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::types::value::RestoreOptions;
use crossbeam_channel::{Receiver, RecvTimeoutError};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The PostgreSQL side of an engine: its connection, the codec of stored values, and where to
/// connect again when the connection breaks.
pub(crate) struct Remote {
    keys: PgKeys,
    codec: Codec,
    url: String,
}

impl Remote {
    /// Connects and migrates the schema.
    ///
    /// # Errors
    /// [`Error::NotRelis`] with PostgreSQL's message.
    pub(crate) fn connect(url: &str, codec: Codec) -> Result<Remote> {
        // On a thread of its own: the synchronous client runs a runtime of its own, which
        // cannot start on a thread that drives one (a server opens the engine inside tokio).
        let keys = std::thread::scope(|s| s.spawn(|| PgKeys::connect(url)).join())
            .map_err(|_| Error::NotRelis("postgres: the connection attempt panicked".into()))?
            .map_err(|e| Error::NotRelis(format!("postgres: {e}")))?;
        Ok(Remote {
            keys,
            codec,
            url: url.to_string(),
        })
    }
}

/// The keyspace-wide reads over PostgreSQL (KEYS, SCAN, DBSIZE, RANDOMKEY, INFO keyspace:
/// [`SharedKeyspace`], `backend/postgres/keyspace.rs`), which every `Reader` and `Writer` of a
/// group is given. On a connection of their own, made at first use (and again once broken):
/// they run outside the group's transaction, so a group of writes that lists keys sees the
/// keyspace as committed, without its own writes yet (a MULTI's DBSIZE after its SET).
struct Wide {
    url: String,
    codec: Codec,
    conn: RefCell<Option<PgKeyspace>>,
}

impl Wide {
    fn with<T>(
        &self,
        f: impl FnOnce(&mut PgKeyspace) -> std::result::Result<T, crate::backend::postgres::Error>,
    ) -> Result<T> {
        let mut slot = self.conn.borrow_mut();
        if slot.as_ref().is_none_or(PgKeyspace::is_closed) {
            *slot = Some(PgKeyspace::connect(&self.url).map_err(storage)?);
        }
        let Some(conn) = slot.as_mut() else {
            unreachable!("connected above")
        };
        f(conn).map_err(storage)
    }
}

impl SharedKeyspace for Wide {
    fn keys(&self, db: u32, lower: &[u8], upper: Option<&[u8]>, now: i64) -> Result<Vec<Vec<u8>>> {
        self.with(|c| c.keys(db, lower, upper, now))
    }

    fn scan(
        &self,
        db: u32,
        cursor: u64,
        count: usize,
        kinds: bool,
        now: i64,
    ) -> Result<(TypedKeys, u64)> {
        let (rows, next) = self.with(|c| c.scan(db, cursor, count, kinds, now))?;
        let kind = self.codec.kind;
        let rows = rows
            .into_iter()
            .map(|(k, first)| (k, first.and_then(kind)))
            .collect();
        Ok((rows, next))
    }

    fn dbsize(&self, db: u32, now: i64) -> Result<i64> {
        self.with(|c| c.dbsize(db, now))
    }

    fn random_key(&self, db: u32, now: i64) -> Result<Option<Vec<u8>>> {
        self.with(|c| c.random_key(db, now))
    }

    fn keyspace_info(&self, now: i64) -> Result<Vec<(u32, i64, i64)>> {
        self.with(|c| c.keyspace_info(now))
    }
}

/// Versions the scratch hands out start here, far above any PostgreSQL's sequence reaches: a
/// key a job wrote never shows the version it was loaded with.
const SCRATCH_VERSIONS: i64 = 1 << 62;

/// Times a group's locking is tried when PostgreSQL reports a deadlock.
const ATTEMPTS: usize = 5;

/// Sets a restored key's version to the one PostgreSQL gave it.
const SET_VERSION: &str = "UPDATE main.relis_keys SET version = ?1 WHERE db = ?2 AND key = ?3";

/// Every key row of the scratch (to find keys written without being declared).
const ALL_KEYS: &str = "SELECT db, key FROM main.relis_keys";

/// A PostgreSQL error for the log: the server's message and SQLSTATE (the client's `Display`
/// says only "db error").
fn storage(e: crate::backend::postgres::Error) -> Error {
    match e.as_db_error() {
        Some(db) => Error::Storage(format!(
            "postgres: {} (SQLSTATE {})",
            db.message(),
            db.code().code()
        )),
        None => Error::Storage(format!("postgres: {e}")),
    }
}

/// The writer thread's loop (see the module's documentation).
#[allow(clippy::too_many_arguments)]
pub(crate) fn run<'c>(
    conn: &'c Conn<'c>,
    rx: Receiver<WriterMsg>,
    clock: Arc<dyn Clock>,
    keyspace: Keyspace,
    max_batch: usize,
    st: &'c RefCell<WriterState>,
    stats: Arc<Stats>,
    mut remote: Remote,
) {
    {
        let mut st = st.borrow_mut();
        st.next_version = SCRATCH_VERSIONS;
        // Nothing of the scratch is kept, so the counter is never written to it.
        st.persisted_version = i64::MAX;
    }
    let shared: Rc<dyn SharedKeyspace> = Rc::new(Wide {
        url: remote.url.clone(),
        codec: remote.codec,
        conn: RefCell::new(None),
    });
    let mut batch: Vec<WriterMsg> = Vec::with_capacity(max_batch);
    let mut shutdown = false;
    // The version of the shared function libraries this node's server has taken (-1: none yet;
    // stored versions are never negative).
    let mut functions_known: i64 = -1;
    let mut last_sweep = Instant::now();
    while !shutdown {
        let wait = SWEEP_EVERY.saturating_sub(last_sweep.elapsed());
        match rx.recv_timeout(wait) {
            Ok(m) => batch.push(m),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if last_sweep.elapsed() >= SWEEP_EVERY {
            last_sweep = Instant::now();
            if !stats.sweep_off.load(Ordering::Relaxed) {
                sweep(&mut remote, &*clock, st, &stats);
            }
        }
        if batch.is_empty() {
            continue;
        }
        while batch.len() < max_batch {
            match rx.try_recv() {
                Ok(m) => batch.push(m),
                Err(_) => break,
            }
        }
        let mut group = Group::default();
        let mut conns = Vec::new();
        for m in batch.drain(..) {
            match m {
                WriterMsg::Write(job, k) => {
                    for key in k {
                        match declared(&key) {
                            Declared::Flush(db) => group.flushes.push(db),
                            Declared::Swap(a, b) => {
                                group.flushes.extend([Some(a), Some(b)]);
                                group.swaps.push((a, b));
                            }
                            Declared::Functions(change) => {
                                group.functions = true;
                                group.functions_change |= change;
                            }
                            Declared::Key => {
                                group.locked.push(key.clone());
                                group.keys.push(key);
                            }
                        }
                    }
                    group.writes.push(job);
                }
                WriterMsg::Read(job, k) => {
                    for key in k {
                        match declared(&key) {
                            Declared::Key => group.keys.push(key),
                            Declared::Functions(_) => group.functions = true,
                            Declared::Flush(_) | Declared::Swap(..) => {}
                        }
                    }
                    group.reads.push(job);
                }
                WriterMsg::Conn(job) => conns.push(job),
                WriterMsg::Shutdown => shutdown = true,
            }
        }
        group.keys.sort_unstable();
        group.keys.dedup();
        group.locked.sort_unstable();
        group.locked.dedup();
        if !group.swaps.is_empty() {
            mirror_swapped(&mut group);
        }
        if !group.writes.is_empty() || !group.reads.is_empty() {
            let ctx = Ctx {
                conn,
                st,
                clock: &*clock,
                keyspace,
                stats: &stats,
                shared: &shared,
            };
            if let Some(v) = run_group(&ctx, &mut remote, group, functions_known) {
                functions_known = v;
            }
        }
        // Outside any transaction, on the (empty) scratch.
        for job in conns {
            job(conn);
        }
    }
}

/// How often a node sweeps expired keys (as the SQLite backend's writer does).
const SWEEP_EVERY: Duration = Duration::from_millis(100);

/// Keys deleted per sweep statement, and statements per sweep at most (the next runs only
/// while each deletes a full batch).
const SWEEP_BATCH: usize = 64;
const SWEEP_ROUNDS: usize = 4;

/// The shared active expiry (`PgKeys::sweep_expired`: nodes take disjoint rows): deletes
/// expired keys, counts them (INFO expired_keys) and publishes their `expired` events, which
/// the server relays to the other nodes.
fn sweep(remote: &mut Remote, clock: &dyn Clock, st: &RefCell<WriterState>, stats: &Stats) {
    if remote.keys.is_closed() {
        match PgKeys::connect(&remote.url) {
            Ok(k) => remote.keys = k,
            Err(_) => return,
        }
    }
    for _ in 0..SWEEP_ROUNDS {
        let gone = match remote.keys.sweep_expired(clock.now_ms(), SWEEP_BATCH) {
            Ok(gone) => gone,
            Err(e) => {
                tracing::warn!("the expiry sweep failed: {}", storage(e));
                return;
            }
        };
        stats
            .expired_keys
            .fetch_add(gone.len() as u64, Ordering::Relaxed);
        let full = gone.len() == SWEEP_BATCH;
        if !gone.is_empty() {
            publish_expired(&st.borrow(), gone);
        }
        if !full {
            return;
        }
    }
}

/// What a group runs with.
struct Ctx<'a, 'c> {
    conn: &'c Conn<'c>,
    st: &'c RefCell<WriterState>,
    clock: &'a dyn Clock,
    keyspace: Keyspace,
    stats: &'a Stats,
    shared: &'a Rc<dyn SharedKeyspace>,
}

/// One group: its jobs, the union of the keys they declare and of those its writes declare
/// (sorted, once each), the flushes and swaps its writes declare, whether a job declared the
/// function libraries, and whether a write declared changing them.
#[derive(Default)]
struct Group {
    keys: Vec<Key>,
    locked: Vec<Key>,
    flushes: Vec<Option<u32>>,
    swaps: Vec<(u32, u32)>,
    functions: bool,
    functions_change: bool,
    writes: Vec<WriteJob>,
    reads: Vec<WriterRead>,
}

/// Completes a group that swaps databases: a key of a swapped database is declared in the
/// other one too (the swap in the scratch moves it there, and what it holds after the group
/// must be written back under both names), until no swap adds one; and every key of a swapped
/// database is locked (a read's too: the swap writes it), under the database locks the swap
/// holds exclusively anyway.
fn mirror_swapped(group: &mut Group) {
    loop {
        let before = group.keys.len();
        let mut more = Vec::new();
        for (a, b) in &group.swaps {
            for (db, key) in &group.keys {
                if db == a {
                    more.push((*b, key.clone()));
                } else if db == b {
                    more.push((*a, key.clone()));
                }
            }
        }
        group.keys.extend(more);
        group.keys.sort_unstable();
        group.keys.dedup();
        if group.keys.len() == before {
            break;
        }
    }
    let swapped = |db: u32| group.swaps.iter().any(|(a, b)| db == *a || db == *b);
    let moved: Vec<Key> = group
        .keys
        .iter()
        .filter(|(db, _)| swapped(*db))
        .cloned()
        .collect();
    group.locked.extend(moved);
    group.locked.sort_unstable();
    group.locked.dedup();
}

/// Begins a writing group (locks the keys its writes declare, loads all of `keys`), or loads a
/// reading group's keys; with the function libraries `functions` asks for.
fn begin(
    remote: &mut Remote,
    keys: &[Key],
    locked: &[Key],
    flushes: &[Option<u32>],
    functions: Functions,
    writing: bool,
) -> Result<(Vec<Option<Stored>>, Option<FunctionSet>)> {
    if remote.keys.is_closed() {
        remote.keys = PgKeys::connect(&remote.url).map_err(storage)?;
    }
    if !writing {
        return remote.keys.load_with(keys, functions).map_err(storage);
    }
    let mut attempt = 0;
    loop {
        attempt += 1;
        match remote.keys.begin_group(keys, locked, flushes, functions) {
            Ok(rows) => return Ok(rows),
            // Nothing has run yet: trying again is invisible.
            Err(e) if is_conflict(&e) && attempt < ATTEMPTS => {
                tracing::debug!("postgres: retrying a group's locks: {e}");
            }
            Err(e) => return Err(storage(e)),
        }
    }
}

/// Runs one group; the version of the function libraries the node took in it, if a job took
/// them ([`Reader::take_function_libraries`]).
fn run_group(
    cx: &Ctx<'_, '_>,
    remote: &mut Remote,
    group: Group,
    functions_known: i64,
) -> Option<i64> {
    let Group {
        keys,
        locked,
        flushes,
        swaps: _,
        functions,
        functions_change,
        writes,
        reads,
    } = group;
    let writing = !writes.is_empty();
    let asked = if !functions {
        Functions::Skip
    } else if functions_change && writing {
        Functions::Lock
    } else {
        Functions::Unless(functions_known)
    };
    let (rows, function_set) = match begin(remote, &keys, &locked, &flushes, asked, writing) {
        Ok(rows) => rows,
        Err(e) => {
            tracing::error!("writer: {e}");
            if writing {
                cx.stats.failed_commits.fetch_add(1, Ordering::Relaxed);
            }
            for job in writes {
                job(None)(Err(e.clone()));
            }
            for job in reads {
                job(None);
            }
            return None;
        }
    };
    let conn = cx.conn;
    let hooks = cx.st.borrow().hooks;
    if let Err(e) = conn.execute_batch("BEGIN") {
        tracing::error!("writer: the scratch cannot begin: {e}");
    }
    let loaded = restore(cx, remote.codec, &keys, rows);
    // The function libraries, when the group fetched them: in the scratch's `relis_functions`
    // (a change job edits them there), and as committed for the jobs to take.
    let functions_loaded = match function_set {
        Some(set) => match restore_functions(cx, &set) {
            Ok(()) => Some(Rc::new(LoadedFunctions {
                version: set.version,
                libraries: set
                    .libraries
                    .into_iter()
                    .map(|(n, c)| (n, bytes::Bytes::from(c)))
                    .collect(),
                taken: std::cell::Cell::new(false),
            })),
            Err(e) => {
                tracing::error!("writer: the function libraries cannot be loaded: {e}");
                None
            }
        },
        None => None,
    };
    let loaded = match (loaded, asked, &functions_loaded) {
        // A change writes back the whole set: without it loaded, it must not run.
        (Ok(_), Functions::Lock, None) => Err(Error::Storage(
            "postgres: the function libraries could not be loaded".into(),
        )),
        (l, _, _) => l,
    };
    let _ = conn.execute_batch("SAVEPOINT loaded");
    let mut delivers: Vec<Deliver> = Vec::with_capacity(writes.len());
    let n_writes = writes.len() as u64;
    let mut lost = false;
    let outcome = match loaded {
        Err(e) => {
            // The scratch holds part of the keys: reads must not answer from it either.
            lost = true;
            for job in writes {
                delivers.push(job(None));
            }
            Err(e)
        }
        Ok((versions, expired)) => {
            // A reading group's expired rows go now, before its reads answer (their events
            // before the reads' `keymiss`, as in Redis); a writing group deletes those of keys
            // it locked in its own transaction, before writing them (a key written again after
            // expiring is a new row), and the others after it commits.
            let (locked_expired, unlocked_expired): (Vec<_>, Vec<_>) = expired
                .into_iter()
                .partition(|(k, _)| writing && locked.binary_search(k).is_ok());
            if !writing {
                expire_lazily(cx, remote, &unlocked_expired);
            }
            for job in writes {
                let mut w = Writer::new(conn, cx.clock.now_ms(), cx.keyspace, cx.st);
                w.shared = Some(cx.shared.clone());
                w.functions = functions_loaded.clone();
                delivers.push(job(Some(&mut w)));
                if conn.is_autocommit() {
                    // SQLite rolled the scratch back: the loaded keys are gone with it.
                    lost = true;
                    cx.st.borrow_mut().poisoned.get_or_insert(Error::Storage(
                        "the transaction was rolled back by SQLite".into(),
                    ));
                    WriterHooks::discard(hooks, conn);
                    let _ = conn.execute_batch("BEGIN");
                }
            }
            let poisoned = cx.st.borrow_mut().poisoned.take();
            match poisoned {
                Some(e) => Err(e),
                None if !writing => Ok(()),
                None => {
                    changes(cx, remote.codec, &keys, &locked, &versions).and_then(|c| {
                        let libs = match (&functions_loaded, asked) {
                            (Some(f), Functions::Lock) => changed_functions(cx, f)?,
                            (f, _) => {
                                // Changed without the functions lock: never written back.
                                if functions_moved(cx, f.as_deref())? {
                                    return Err(Error::RolledBack(
                                        "a command changed the function libraries without \
                                         declaring it (relis::functions_declaration)"
                                            .into(),
                                    ));
                                }
                                None
                            }
                        };
                        // FLUSHDB/FLUSHALL/SWAPDB first, in order: the changes are what the keys
                        // hold after them.
                        let wide = std::mem::take(&mut cx.st.borrow_mut().wide);
                        for change in wide {
                            match change {
                                WideChange::Flush(db) => remote.keys.flush(&[db]),
                                WideChange::Swap(a, b) => remote.keys.swap(a, b),
                            }
                            .map_err(storage)?;
                        }
                        let gone = remote
                            .keys
                            .commit_expiring(
                                &c,
                                libs.as_deref(),
                                &locked_expired,
                                cx.clock.now_ms(),
                            )
                            .map_err(storage)?;
                        expired_events(cx, gone);
                        if !unlocked_expired.is_empty() {
                            expire_lazily(cx, remote, &unlocked_expired);
                        }
                        Ok(())
                    })
                }
            }
        }
    };
    if writing && outcome.is_err() {
        remote.keys.rollback();
        let _ = conn.execute_batch("ROLLBACK TO loaded");
        WriterHooks::discard(hooks, conn);
    }
    // Reads see what PostgreSQL now holds: the group's writes if they committed.
    for job in reads {
        if lost {
            job(None);
        } else {
            let mut r = Reader::new(conn, cx.clock.now_ms(), cx.keyspace);
            r.shared = Some(cx.shared.clone());
            r.functions = functions_loaded.clone();
            job(Some(&mut r));
        }
    }
    let _ = conn.execute_batch("ROLLBACK");
    WriterHooks::discard(hooks, conn);
    let mut st = cx.st.borrow_mut();
    match &outcome {
        Ok(()) if writing => {
            cx.stats.commits.fetch_add(1, Ordering::Release);
            cx.stats.writes.fetch_add(n_writes, Ordering::Relaxed);
            let lazily = std::mem::take(&mut st.lazily_expired);
            cx.stats.expired_keys.fetch_add(lazily, Ordering::Relaxed);
            if !st.events.is_empty() {
                let events = std::mem::take(&mut st.events);
                if let Some(sink) = st.sink.get() {
                    sink.publish(events);
                }
            }
        }
        Ok(()) => {}
        Err(e) => {
            tracing::error!("writer: group failed, {n_writes} writes not applied: {e}");
            cx.stats.failed_commits.fetch_add(1, Ordering::Relaxed);
        }
    }
    st.events.clear();
    st.wide.clear();
    st.quiet.clear();
    st.lazily_expired = 0;
    drop(st);
    for d in delivers {
        d(outcome.clone());
    }
    functions_loaded
        .filter(|f| f.taken.get() && !lost)
        .map(|f| f.version)
}

/// Every function library of the scratch (name, code), by name.
const FUNCTIONS: &str = "SELECT name, code FROM main.relis_functions ORDER BY name";

/// Puts the shared function libraries into the scratch's `relis_functions` (inside the group's
/// scratch transaction, so they go with it).
fn restore_functions(cx: &Ctx<'_, '_>, set: &FunctionSet) -> Result<()> {
    let mut w = Writer::new(cx.conn, cx.clock.now_ms(), cx.keyspace, cx.st);
    for (name, code) in &set.libraries {
        w.function_put(name, code)?;
    }
    Ok(())
}

/// Whether the scratch's function libraries differ from what the group loaded (`None`: none,
/// so the table began empty).
fn functions_moved(cx: &Ctx<'_, '_>, loaded: Option<&LoadedFunctions>) -> Result<bool> {
    match loaded {
        Some(f) => Ok(changed_functions(cx, f)?.is_some()),
        None => Ok(prepare(cx.conn, ANY_FUNCTION)?.exists([])?),
    }
}

/// Whether the scratch holds a function library.
const ANY_FUNCTION: &str = "SELECT 1 FROM main.relis_functions LIMIT 1";

/// The scratch's function libraries after the group's jobs, when they differ from the set the
/// group loaded (`None`: unchanged, nothing to write back).
fn changed_functions(cx: &Ctx<'_, '_>, loaded: &LoadedFunctions) -> Result<Option<Libraries>> {
    let mut stmt = prepare(cx.conn, FUNCTIONS)?;
    let now: Libraries = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let same = now.len() == loaded.libraries.len()
        && now
            .iter()
            .zip(&loaded.libraries)
            .all(|((n, c), (ln, lc))| n == ln && c[..] == lc[..]);
    Ok((!same).then_some(now))
}

/// Restores the live `rows` of `keys` into the scratch with their versions. Returns the
/// version each restored key was loaded with, and the expired rows found (each key with its
/// row's version, to delete lazily: [`expire_lazily`]).
#[allow(clippy::type_complexity)]
fn restore(
    cx: &Ctx<'_, '_>,
    codec: Codec,
    keys: &[Key],
    rows: Vec<Option<Stored>>,
) -> Result<(HashMap<Key, i64>, Vec<(Key, i64)>)> {
    let now = cx.clock.now_ms();
    let mut w = Writer::new(cx.conn, now, cx.keyspace, cx.st);
    let mut versions = HashMap::new();
    let mut expired = Vec::new();
    for (key, row) in keys.iter().zip(rows) {
        let Some(row) = row else {
            continue;
        };
        if row.expire_at.is_some_and(|at| at <= now) {
            expired.push((key.clone(), row.version));
            continue;
        }
        let value = (codec.restore)(&row.value)
            .ok_or_else(|| Error::Storage("postgres: a stored value cannot be decoded".into()))?;
        let opts = RestoreOptions {
            replace: true,
            expire_at: row.expire_at,
            idle_secs: None,
        };
        w.restore_value(key.0, &key.1, &value, opts)?;
        prepare(cx.conn, SET_VERSION)?.execute((row.version, key.0, &key.1))?;
        versions.insert(key.clone(), row.version);
    }
    // Restoring is not a command: nothing of it is an event.
    cx.st.borrow_mut().events.clear();
    Ok((versions, expired))
}

/// What the group changed among `keys`: puts of the keys whose version moved, quiet puts of
/// those written without a new version ([`WriterState::quiet`]: a stream's groups), deletes of
/// those that vanished (the expired rows found at load go separately:
/// [`PgKeys::commit_expiring`]).
///
/// # Errors
/// A key was written that no write job declared (it was never locked), or a storage error.
fn changes(
    cx: &Ctx<'_, '_>,
    codec: Codec,
    keys: &[Key],
    locked: &[Key],
    loaded: &HashMap<Key, i64>,
) -> Result<Vec<Change>> {
    WriterHooks::flush(cx.st.borrow().hooks, cx.conn)?;
    {
        let mut stmt = prepare(cx.conn, ALL_KEYS)?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let key: Key = (row.get(0)?, row.get(1)?);
            if keys.binary_search(&key).is_err() {
                return Err(undeclared(&key));
            }
        }
    }
    let mut quiet = std::mem::take(&mut cx.st.borrow_mut().quiet);
    quiet.sort_unstable();
    let r = Reader::new(cx.conn, cx.clock.now_ms(), cx.keyspace);
    let mut out: Vec<Change> = Vec::new();
    for key in keys {
        let meta = r.meta(key.0, &key.1)?;
        let before = loaded.get(key);
        let is_locked = locked.binary_search(key).is_ok();
        let quietly = meta.is_some() && quiet.binary_search(key).is_ok();
        let moved = match meta {
            None => before.is_some(),
            Some(m) => before != Some(&m.version) || quietly,
        };
        if moved && !is_locked {
            // Loaded for a read of the group, written by one of its writes without declaring it.
            return Err(undeclared(key));
        }
        match meta {
            None if before.is_some() => out.push(Change::Delete(key.clone())),
            Some(m) if moved => {
                let Some(d) = r.dump_value(key.0, &key.1)? else {
                    continue;
                };
                out.push(Change::Put {
                    key: key.clone(),
                    value: (codec.dump)(d),
                    expire_at: m.expire_at,
                    quiet: before == Some(&m.version),
                });
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Sends the `expired` events of the rows this node deleted by lazy expiry (`gone`), ahead of
/// any other event of the group (Redis deletes an expired key before the command that found
/// it runs), and counts them (INFO expired_keys).
fn expired_events(cx: &Ctx<'_, '_>, gone: Vec<Key>) {
    if gone.is_empty() {
        return;
    }
    cx.stats
        .expired_keys
        .fetch_add(gone.len() as u64, Ordering::Relaxed);
    publish_expired(&cx.st.borrow(), gone);
}

/// Sends `expired` events for the keys `gone` (deleted because they expired, by this node's
/// statement), if the sink wants them.
fn publish_expired(st: &WriterState, gone: Vec<(u32, Vec<u8>)>) {
    if let Some(sink) = st.sink.get() {
        if sink.wants(crate::events::class::EXPIRED) {
            sink.publish(
                gone.into_iter()
                    .map(|(db, key)| crate::events::KeyEvent {
                        class: crate::events::class::EXPIRED,
                        event: "expired",
                        db,
                        key,
                        origin: 0,
                    })
                    .collect(),
            );
        }
    }
}

/// Lazy expiry of expired rows a group found and did not delete in its own transaction (a
/// group of reads; the keys a writing group loaded without locking them): deleted by
/// [`PgKeys::expire_rows`], outside any transaction, with their events. A failure only logs:
/// the sweep deletes them anyway.
fn expire_lazily(cx: &Ctx<'_, '_>, remote: &mut Remote, expired: &[(Key, i64)]) {
    if expired.is_empty() {
        return;
    }
    match remote.keys.expire_rows(expired, cx.clock.now_ms()) {
        Ok(gone) => expired_events(cx, gone),
        Err(e) => tracing::debug!("postgres: lazy expiry failed: {e}"),
    }
}

/// The error of a group whose write touched a key no write job declared (it was never locked).
fn undeclared(key: &Key) -> Error {
    // For the client: its command (a script, most likely) must declare the key.
    Error::RolledBack(format!(
        "a command wrote key '{}' of database {} without declaring it (the postgres backend \
         needs every key a command touches declared, a script's in KEYS)",
        String::from_utf8_lossy(&key.1),
        key.0
    ))
}
