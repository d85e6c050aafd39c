//! RDB files in and out of the data file: `relis-server --import dump.rdb` loads one written by
//! redis-server (any RDB version Redis 7.0 reads), `relis-server --export out.rdb` writes one
//! redis-server 7.0 loads. Both run before (instead of) serving, on the configured data file.
//!
//! **Import** never changes the data file unless it succeeds: it works on a staging copy
//! (`<dbfilename>.import`, next to it: a consistent copy of the current file through SQLite's
//! backup, or a new file), streams the RDB into it in batches ([`BATCH_BYTES`] of RDB or
//! [`BATCH_KEYS`] keys, each sorted by key) and only when the whole file has loaded and its
//! checksum matched renames the staging file over the data file. The staging file is thrown
//! away on any failure, so it needs no journal: it is written without one (`Options::bulk`),
//! every batch in one transaction, so each page reaches the file once instead of once per
//! batch to the WAL and again at each checkpoint; then it is opened as the server opens it,
//! back in WAL mode, before the rename. On a bad or truncated file, or any failure,
//! the staging file is deleted and the error names the byte offset. A key in the file replaces
//! a key of the same name in the data file; other keys stay. Keys already expired are dropped,
//! as a Redis master does when it loads, and remove a key of that name from the data file (the
//! file says the key is gone, as RESTORE REPLACE with a past ABSTTL deletes it in Redis). Functions are loaded (checked as FUNCTION LOAD checks
//! them) and replace libraries of the same name. The data file must not be in use by a
//! running server meanwhile.
//!
//! **Export** reads the whole keyspace in one snapshot (all databases, expiries, function
//! libraries) and writes version 10 with Redis 7.0's encodings to `<out>.tmp`, renamed to
//! `<out>` when complete.
//!
//! [`load`] is the loader itself, taking any byte stream, into a live engine: there a
//! transaction per batch (the group commit may join two), so the WAL stays about one batch long
//! however large the file. [`load_replacing`] is a replica's full sync: the whole dataset
//! replaced in one transaction.

pub mod progress;

use crate::cmd::keys::dump::{object_kind, to_object, to_value};
use crate::config::Config;
use progress::{LoadStats, Progress};
use rdb::file::{FileReader, FileWriter, Record};
use relis::{Db, RestoreOptions, Restored, Value};
use std::collections::VecDeque;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

/// RDB bytes per import transaction (decoded, a batch can be several times larger in memory,
/// and up to three batches exist at once).
pub const BATCH_BYTES: u64 = 16 << 20;
/// Keys per import transaction. Each batch's inserts, in key order, touch most leaf pages of a
/// key table already large, and write them to the WAL and back to the file once per batch: so
/// fewer, larger batches (bench/rdb.sh-style file of 1M keys of 100 bytes: 20,000 keys 14-17 s,
/// 200,000 keys 5.2-6.6 s, 400,000 5.2-5.6 s but a peak RSS of 310 MB against 225 MB).
/// [`BATCH_BYTES`] still bounds a batch of large values.
pub const BATCH_KEYS: usize = 200_000;
/// The least page cache the writer gets for an import (more if `writer-cache-size` says so).
pub const IMPORT_WRITER_CACHE: u64 = 1 << 30;
/// Batches handed to the writer and not yet committed: the reader decodes the next batch while
/// the writer inserts the last one.
const IN_FLIGHT: usize = 2;
/// Keys per transaction of an import into PostgreSQL ([`import_postgres`]): each key of a
/// batch takes an advisory lock, and PostgreSQL's lock table, shared by every session, holds
/// 64 per allowed connection by default (`max_locks_per_transaction`), so [`IN_FLIGHT`]
/// batches, which may share a group, stay far below it.
pub const PG_BATCH_KEYS: usize = 500;

/// How a load's batches reach the engine.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// A write job, so a transaction, per batch.
    Batches,
    /// One write job for every batch, committed once (the staging file of [`import`], a
    /// replica's full sync).
    OneTransaction,
    /// A write job per batch declaring the batch's keys, as the PostgreSQL backend needs
    /// (a group locks, loads and writes back only the keys its jobs declare).
    Declared,
}

/// What an import did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportSummary {
    /// Keys written.
    pub keys: u64,
    /// Keys dropped because they had expired.
    pub expired: u64,
    /// Function libraries loaded.
    pub functions: u64,
    /// Module auxiliary records skipped.
    pub module_aux: u64,
    /// Bytes of RDB read.
    pub bytes: u64,
}

/// What an export wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExportSummary {
    /// Keys written.
    pub keys: u64,
    /// Function libraries written.
    pub functions: u64,
    /// Bytes of RDB written.
    pub bytes: u64,
}

/// What one key record of the file does to the data file.
enum Put {
    /// Writes the value, replacing a key of that name.
    Restore(Value, RestoreOptions),
    /// Writes the value of a key in a database that was empty when the load began: there is
    /// no key of that name to look up (an RDB file has each key once, or redis-server refuses
    /// to load it too).
    New(Value, RestoreOptions),
    /// The record had expired: no key of that name stays (RESTORE REPLACE with a past ABSTTL
    /// deletes the key in Redis too).
    Drop,
}

/// One transaction's worth of records.
#[derive(Default)]
struct Batch {
    keys: Vec<(u32, bytes::Bytes, Put)>,
    functions: Vec<(String, bytes::Bytes)>,
    first_offset: u64,
}

impl Batch {
    fn is_empty(&self) -> bool {
        self.keys.is_empty() && self.functions.is_empty()
    }
}

/// What the writer answers for a batch: the keys it wrote, and the batch itself, handed back
/// to be freed on the thread that decoded it (freed on the writer, its values cost the writer
/// mimalloc's cross-thread frees: 4% of an import's writer time).
type Answer = (relis::Result<u64>, Batch);

/// The writer's side of a load: where batches go and where their answers come back.
struct Pipe<'a> {
    db: &'a Db,
    /// Batches sent and not yet settled: the byte offset each began at, and its answer.
    inflight: VecDeque<(u64, Receiver<Answer>)>,
    /// In one transaction ([`load_with`]): the feed of the one write job
    /// that writes every batch, once started, and the answer of its commit.
    one: Option<OneTransaction>,
    mode: Mode,
}

/// What a load in one transaction does first, in that transaction (a replica's full sync
/// empties the keyspace there).
pub type Replace = Box<dyn FnOnce(&mut relis::Writer<'_>) -> relis::Result<()> + Send>;

/// What the one write job of a load in one transaction is given.
enum Feed {
    /// A batch to write, and where to answer.
    Batch(Batch, SyncSender<Answer>),
    /// Reading the input failed: the transaction rolls back rather than commit part of it.
    Abort(String),
}

/// The one write job of a load in one transaction.
struct OneTransaction {
    feed: SyncSender<Feed>,
    committed: Receiver<relis::Result<()>>,
}

/// How many records ahead of the one being written [`write_batch`] asks the CPU to fetch.
const PREFETCH_AHEAD: usize = 8;

/// Asks the CPU to bring the first bytes of `b` into its cache. A batch is written in key
/// order, not in the order its values were decoded (and allocated) in, so each record's key
/// and value were a cache miss (from memory) when SQLite copied them: 18% of the writer's
/// time in an import.
fn prefetch(b: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = b.as_ptr().cast::<i8>();
        // SAFETY: a prefetch is a hint that reads nothing (any address may be given), and SSE
        // is part of x86_64.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(p);
            if b.len() > 64 {
                _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(64));
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = b;
}

/// Writes `batch`'s records; returns the keys written.
fn write_batch(w: &mut relis::Writer<'_>, batch: &Batch) -> relis::Result<u64> {
    // No savepoint around the batch: inside one, every statement's own statement journal
    // is released by truncating the batch's sub-journal, a walk of its chunk list, so a
    // batch cost grew with the square of its size (58% of an import's time in
    // `sqlite3BtreeSavepoint`). A failure poisons the whole transaction instead.
    let r = w.command(relis::OnError::NothingToUndo, |w| {
        for (name, code) in &batch.functions {
            w.function_put(name, code)?;
        }
        let mut written = 0;
        for (i, (db, key, put)) in batch.keys.iter().enumerate() {
            if let Some((_, key, put)) = batch.keys.get(i + PREFETCH_AHEAD) {
                prefetch(key);
                if let Put::New(Value::String(v), _) | Put::Restore(Value::String(v), _) = put {
                    prefetch(v);
                }
            }
            match put {
                Put::Restore(value, opts) => {
                    if w.restore_value(*db, key, value, *opts)? == Restored::Written {
                        written += 1;
                    }
                }
                Put::New(value, opts) => {
                    let r = w.restore_new_value(*db, key, value, *opts).map_err(|e| {
                        relis::Error::Storage(format!(
                            "key '{}' of database {db}: {e} (is it in the file twice?)",
                            String::from_utf8_lossy(key)
                        ))
                    })?;
                    if r == Restored::Written {
                        written += 1;
                    }
                }
                Put::Drop => {
                    w.del(*db, std::slice::from_ref(key))?;
                }
            }
        }
        Ok::<u64, relis::Error>(written)
    });
    // Any failure fails the whole transaction: the load stops anyway.
    if let Err(e) = &r {
        w.poison(e.clone());
    }
    r
}

impl<'a> Pipe<'a> {
    fn new(db: &'a Db, mode: Mode) -> Pipe<'a> {
        Pipe {
            db,
            inflight: VecDeque::new(),
            one: None,
            mode,
        }
    }

    /// Most keys in a batch.
    fn batch_keys(&self) -> usize {
        match self.mode {
            Mode::Declared => PG_BATCH_KEYS,
            Mode::Batches | Mode::OneTransaction => BATCH_KEYS,
        }
    }

    /// Hands `batch` to the writer and remembers where to hear how many keys it wrote.
    fn send(&mut self, mut batch: Batch) {
        // In key order, as the key rows' B-tree is: an RDB file lists keys in hash order, so
        // each insert went to a random leaf; in order the next insert finds its path in the
        // cache (bench/rdb.sh, 500K keys: import 6.6-8.0 s unsorted, 4.8-5.5 s sorted).
        // Stable, so a name's records keep their order. Sorted on this thread, while the
        // writer inserts the batch before.
        batch
            .keys
            .sort_by(|(da, ka, _), (db_, kb, _)| (da, ka).cmp(&(db_, kb)));
        let (tx, rx) = sync_channel(1);
        let at = batch.first_offset;
        self.inflight.push_back((at, rx));
        if self.mode != Mode::OneTransaction {
            // A write job per batch, so a transaction per batch (the group commit may join
            // two); over PostgreSQL each declares its keys (and the function libraries).
            let mut keys: relis::DeclaredKeys = Vec::new();
            if self.mode == Mode::Declared {
                keys = batch
                    .keys
                    .iter()
                    .map(|(db, key, _)| (*db, key.to_vec()))
                    .collect();
                keys.dedup();
                if !batch.functions.is_empty() {
                    keys.push(relis::functions_declaration(true));
                }
            }
            self.db.write_async_keys(
                keys,
                move |w| {
                    let r = write_batch(w, &batch);
                    (r, batch)
                },
                move |r| {
                    let answer = match r {
                        Ok((r, batch)) => (r, batch),
                        Err(e) => (Err(e), Batch::default()),
                    };
                    let _ = tx.send(answer);
                },
            );
            return;
        }
        self.start_one(None);
        if let Some(one) = &self.one {
            // The job has ended only if a batch failed: that batch's answer tells why.
            let _ = one.feed.send(Feed::Batch(batch, tx));
        }
    }

    /// Starts the one write job of a load in one transaction, unless it runs; it does
    /// `first` before any batch.
    fn start_one(&mut self, first: Option<Replace>) {
        if self.one.is_some() {
            return;
        }
        let (feed, batches) = sync_channel::<Feed>(IN_FLIGHT);
        let (done, committed) = sync_channel(1);
        // One job takes every batch as it comes and commits once, when the feed closes:
        // no page is written to the file until the cache has to make room for another,
        // where a commit per batch wrote every page the batch had touched.
        self.db.write_async(
            move |w| {
                if let Some(Err(e)) = first.map(|f| f(w)) {
                    // The transaction rolls back; every batch hears why.
                    w.poison(e.clone());
                    for feed in batches {
                        if let Feed::Batch(batch, answer) = feed {
                            let _ = answer.send((Err(e.clone()), batch));
                        }
                    }
                    return;
                }
                for feed in batches {
                    let (batch, answer) = match feed {
                        Feed::Batch(batch, answer) => (batch, answer),
                        Feed::Abort(why) => {
                            w.poison(relis::Error::Storage(why));
                            break;
                        }
                    };
                    let r = write_batch(w, &batch);
                    let failed = r.is_err();
                    let _ = answer.send((r, batch));
                    if failed {
                        break;
                    }
                }
            },
            move |r| {
                let _ = done.send(r);
            },
        );
        self.one = Some(OneTransaction { feed, committed });
    }

    /// Waits for the oldest batch in flight; returns the keys it wrote.
    fn settle(&mut self) -> Result<u64, String> {
        let Some((at, rx)) = self.inflight.pop_front() else {
            return Ok(0);
        };
        match rx.recv() {
            // Dropped here, on the thread that made it.
            Ok((Ok(n), _batch)) => Ok(n),
            Ok((Err(e), _)) => Err(format!(
                "writing the keys read from byte {at} on failed: {e}"
            )),
            Err(_) => Err("the engine stopped".into()),
        }
    }

    /// Settles every batch in flight and, in one transaction, commits it; `out` is what
    /// reading the file gave, whose key count this completes. After a failure (`out`, or a
    /// batch's) the writer is let finish what it has before the error is returned.
    fn end(&mut self, out: Result<ImportSummary, String>) -> Result<ImportSummary, String> {
        let mut out = out;
        while !self.inflight.is_empty() {
            match (self.settle(), &mut out) {
                (Ok(n), Ok(sum)) => sum.keys += n,
                (Err(e), Ok(_)) => out = Err(e),
                (_, Err(_)) => {}
            }
        }
        if let Some(OneTransaction { feed, committed }) = self.one.take() {
            if let Err(e) = &out {
                let _ = feed.send(Feed::Abort(e.clone()));
            }
            drop(feed);
            let r = committed.recv();
            if out.is_ok() {
                match r {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => out = Err(format!("committing the keys failed: {e}")),
                    Err(_) => out = Err("the engine stopped".into()),
                }
            }
        }
        out
    }
}

/// Reads the RDB stream `input` (`total` bytes long, 0 if unknown) into `db` in large
/// transactions, dropping keys that expired by `now_ms`, and showing progress. Stops at the
/// first fault with an error naming its offset; what was committed before it stays in `db`
/// (the caller decides what to do with a half-loaded engine: [`import`] throws it away).
///
/// # Errors
/// A malformed, truncated or unsupported stream, a database index past `databases`, a
/// function library that does not load, a storage error.
pub fn load(
    db: &Db,
    input: impl Read,
    total: u64,
    databases: u32,
    now_ms: i64,
    stats: Option<&LoadStats>,
) -> Result<ImportSummary, String> {
    load_with(
        db,
        input,
        (total, databases, now_ms),
        stats,
        None,
        Mode::Batches,
    )
}

/// [`load`] in one transaction that first does `replace` (a replica's full sync: empty the
/// keyspace, its function libraries and its stored position), so the engine has either its
/// old dataset or the whole new one, never part of it: a failure anywhere, or a process killed
/// meanwhile, leaves the old one. Every database is taken to be empty once `replace` has run
/// (keys are inserted without a lookup: see [`Put::New`]). With a WAL, the WAL grows as large as
/// everything loaded (spilled pages of the open transaction) and is checkpointed after the
/// commit.
///
/// # Errors
/// As [`load`]; also what `replace` returns.
pub fn load_replacing(
    db: &Db,
    input: impl Read,
    (total, databases, now_ms): (u64, u32, i64),
    stats: Option<&LoadStats>,
    replace: Replace,
) -> Result<ImportSummary, String> {
    load_with(
        db,
        input,
        (total, databases, now_ms),
        stats,
        Some(replace),
        Mode::OneTransaction,
    )
}

/// [`load`], in one transaction with [`Mode::OneTransaction`] (for an engine opened with
/// `Options::bulk`, whose pages need not reach the file at every commit: with a WAL, the WAL
/// would grow as large as everything loaded), which begins with `replace` if given, or
/// declaring each batch's keys with [`Mode::Declared`] (the PostgreSQL backend).
fn load_with(
    db: &Db,
    input: impl Read,
    (total, databases, now_ms): (u64, u32, i64),
    stats: Option<&LoadStats>,
    replace: Option<Replace>,
    mode: Mode,
) -> Result<ImportSummary, String> {
    let mut progress = Progress::new("importing", total);
    if let Some(st) = stats {
        st.begin(total, now_ms);
    }
    let mut pipe = Pipe::new(db, mode);
    // After `replace`, every database is empty; over PostgreSQL another node may create a key
    // meanwhile, so every key is written as RESTORE REPLACE writes it; otherwise the writer
    // says which are.
    let empty = match replace {
        Some(first) => {
            pipe.start_one(Some(first));
            Ok(vec![true; databases as usize])
        }
        None if mode == Mode::Declared => Ok(vec![false; databases as usize]),
        None => empty_databases(db, databases),
    };
    let out =
        empty.and_then(|empty| load_into(&mut pipe, input, &empty, now_ms, &mut progress, stats));
    let out = pipe.end(out);
    if let Ok(sum) = &out {
        progress.update(sum.bytes, sum.keys);
        progress.finish();
    }
    if let (Some(st), Ok(sum)) = (stats, &out) {
        st.end(sum.keys, sum.expired);
    }
    out
}

/// The databases of `db` that have no key (by index, `databases` of them): their keys need no
/// lookup. Asked of the writer, which the load's batches queue behind: a reader's snapshot,
/// held while it idles, could keep the final checkpoint of `import`'s staging file from
/// completing.
fn empty_databases(db: &Db, databases: u32) -> Result<Vec<bool>, String> {
    let mut empty = vec![true; databases as usize];
    for space in db.write(|w| w.keyspace_info()).map_err(|e| e.to_string())? {
        if let Some(e) = empty.get_mut(space.db as usize) {
            *e = space.keys == 0;
        }
    }
    Ok(empty)
}

/// Reads `input` into `pipe` (see [`load`]); `empty[i]`: database `i` had no key when the
/// load began. The keys of the batches not yet settled are not counted in the summary's yet:
/// [`Pipe::end`] adds them.
fn load_into(
    pipe: &mut Pipe<'_>,
    input: impl Read,
    empty: &[bool],
    now_ms: i64,
    progress: &mut Progress,
    stats: Option<&LoadStats>,
) -> Result<ImportSummary, String> {
    let databases = u32::try_from(empty.len()).unwrap_or(u32::MAX);
    let mut reader = FileReader::new(input).map_err(|e| e.to_string())?;
    tracing::info!("Loading RDB produced by version {}", reader.version());
    let mut sum = ImportSummary::default();
    let mut batch = Batch::default();
    let scripting = crate::script::Scripting::default();
    loop {
        let at = reader.offset();
        let rec = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => return Err(e.to_string()),
        };
        if batch.is_empty() {
            batch.first_offset = at;
        }
        match rec {
            Record::Aux(name, value) => {
                if let (Some(st), b"used-mem") = (stats, &name[..]) {
                    let mem = std::str::from_utf8(&value)
                        .ok()
                        .and_then(|v| v.parse().ok());
                    st.rdb_used_mem.store(mem.unwrap_or(0), Ordering::Relaxed);
                }
                if matches!(
                    &name[..],
                    b"redis-ver" | b"ctime" | b"used-mem" | b"aof-base"
                ) {
                    tracing::info!(
                        "RDB '{}': {}",
                        String::from_utf8_lossy(&name),
                        String::from_utf8_lossy(&value)
                    );
                }
            }
            Record::SelectDb(n) => {
                if n >= u64::from(databases) {
                    return Err(format!(
                        "the file selects database {n}, but `databases` is {databases} (at byte {at})"
                    ));
                }
            }
            Record::ResizeDb(..) => {}
            Record::ModuleAux(name) => {
                sum.module_aux += 1;
                tracing::warn!("skipped auxiliary data of module '{name}' (at byte {at}): Relis has no modules");
            }
            Record::Function(code) => {
                let lib = crate::lua::functions::evaluate(&scripting, &code).map_err(|e| {
                    format!(
                        "function library does not load: {} (at byte {at})",
                        e.message()
                    )
                })?;
                batch.functions.push((lib.name, code));
                sum.functions += 1;
            }
            Record::Entry(e) => {
                // `SelectDb` checked the index.
                let dbi = u32::try_from(e.db).unwrap_or(u32::MAX);
                let fresh = empty.get(dbi as usize).copied().unwrap_or(false);
                let put = if e.expire_at.is_some_and(|t| t <= now_ms) {
                    sum.expired += 1;
                    // Nothing to remove from a database that was empty.
                    (!fresh).then_some(Put::Drop)
                } else {
                    let opts = RestoreOptions {
                        replace: true,
                        expire_at: e.expire_at,
                        idle_secs: e.idle_secs.and_then(|s| i64::try_from(s).ok()),
                    };
                    let value = to_value(e.value);
                    Some(if fresh {
                        Put::New(value, opts)
                    } else {
                        Put::Restore(value, opts)
                    })
                };
                if let Some(put) = put {
                    batch.keys.push((dbi, e.key, put));
                }
            }
        }
        let pos = reader.offset();
        if batch.keys.len() >= pipe.batch_keys() || pos - batch.first_offset >= BATCH_BYTES {
            pipe.send(std::mem::take(&mut batch));
            if pipe.inflight.len() >= IN_FLIGHT {
                sum.keys += pipe.settle()?;
            }
        }
        progress.update(pos, sum.keys + batch.keys.len() as u64);
        if let Some(st) = stats {
            st.loaded.store(pos, Ordering::Relaxed);
        }
    }
    if !batch.is_empty() {
        pipe.send(batch);
    }
    sum.bytes = reader.offset();
    Ok(sum)
}

/// `path` with `suffix` added to its file name.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Removes a SQLite file and its WAL and shared-memory files, if there.
fn remove_db_files(path: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let _ = std::fs::remove_file(with_suffix(path, suffix));
    }
}

fn nonempty(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.len() > 0)
}

/// The RDB input at `rdb_path` and its length: `-` is standard input (`redis-cli --rdb - |
/// ...`), length unknown (0).
fn open_rdb(rdb_path: &Path) -> Result<(Box<dyn Read>, u64), String> {
    if rdb_path == Path::new("-") {
        return Ok((Box::new(std::io::stdin().lock()), 0));
    }
    let f = std::fs::File::open(rdb_path)
        .map_err(|e| format!("cannot open {}: {e}", rdb_path.display()))?;
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    Ok((Box::new(f), len))
}

/// Reads the whole RDB stream `input` without writing anything: its records decode, its
/// databases are below `databases`, its function libraries load, its checksum matches.
fn check_rdb(input: impl Read, databases: u32) -> Result<(), String> {
    let mut reader = FileReader::new(input).map_err(|e| e.to_string())?;
    let scripting = crate::script::Scripting::default();
    loop {
        let at = reader.offset();
        match reader.next_record().map_err(|e| e.to_string())? {
            None => return Ok(()),
            Some(Record::SelectDb(n)) if n >= u64::from(databases) => {
                return Err(format!(
                    "the file selects database {n}, but `databases` is {databases} (at byte {at})"
                ));
            }
            Some(Record::Function(code)) => {
                crate::lua::functions::evaluate(&scripting, &code).map_err(|e| {
                    format!(
                        "function library does not load: {} (at byte {at})",
                        e.message()
                    )
                })?;
            }
            Some(_) => {}
        }
    }
}

/// `--import` over the PostgreSQL backend (`config.backend` a URL): loads the RDB file at
/// `rdb_path` into the shared keyspace, through the engine as the nodes write (each batch of
/// [`PG_BATCH_KEYS`] keys one group: its keys locked, each written as RESTORE REPLACE writes
/// it, committed), while nodes may keep serving. A file (not `-`) is read through once first
/// ([`check_rdb`]): a bad or truncated one writes nothing. After that, a failure (PostgreSQL
/// gone) leaves the batches committed before it written; running the import again completes
/// it (each key is replaced). Keys already expired are dropped and delete a key of that name.
///
/// # Errors
/// The RDB file cannot be read or is bad (the message names the offset), PostgreSQL cannot be
/// reached, or a batch cannot be written.
pub fn import_postgres(config: &Config, rdb_path: &Path) -> Result<ImportSummary, String> {
    let (file, total) = open_rdb(rdb_path)?;
    if rdb_path != Path::new("-") {
        let (again, _) = open_rdb(rdb_path)?;
        check_rdb(std::io::BufReader::new(again), config.databases)
            .map_err(|e| format!("{}: {e}", rdb_path.display()))?;
    }
    // Brings the schema up to date, as a node's start does.
    let db = crate::open_engine(config).map_err(|e| format!("PostgreSQL: {e}"))?;
    // The nodes sweep; this process only writes.
    db.set_active_expire(false);
    let sum = load_with(
        &db,
        file,
        (total, config.databases, crate::state::unix_ms()),
        None,
        None,
        Mode::Declared,
    )
    .map_err(|e| format!("{}: {e}", rdb_path.display()))?;
    // The last handle: the engine stops.
    drop(db);
    Ok(sum)
}

/// `--import`: loads the RDB file at `rdb_path` (`-`: standard input) into the data file
/// `config` names, through a staging copy (see the module documentation).
///
/// # Errors
/// No data file (`dbfilename :memory:`), the RDB file cannot be read or is bad (the message
/// names the offset), or the data file cannot be copied or replaced. The data file is then as
/// it was.
pub fn import(config: &Config, rdb_path: &Path) -> Result<ImportSummary, String> {
    let data = config
        .db_path()
        .ok_or("--import needs a data file (dbfilename is :memory:)")?;
    let (file, total) = open_rdb(rdb_path)?;
    if let Some(dir) = data.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("{}: cannot create directory: {e}", dir.display()))?;
    }
    if nonempty(&with_suffix(&data, "-wal")) && std::fs::metadata(&data).is_err() {
        return Err(format!("{}: a WAL without its database", data.display()));
    }
    let staging = with_suffix(&data, ".import");
    remove_db_files(&staging);
    let result = (|| {
        if data.exists() {
            // A consistent copy of what is there (including its WAL), by SQLite's backup.
            let current = crate::open_engine(config).map_err(|e| e.to_string())?;
            current.backup_to(&staging).map_err(|e| {
                format!(
                    "cannot copy {} to {}: {e}",
                    data.display(),
                    staging.display()
                )
            })?;
        }
        let mut opts = crate::engine_options(config, Some(staging.clone()));
        // The staging file is thrown away if anything fails, and synced before it replaces
        // the data file: its commits need not be.
        opts.durability = relis::Durability::Off;
        // For the same reason, no journal: each page is written once, into the file, in one
        // transaction (see `load_with`).
        opts.bulk = true;
        // The cache holds the pages the load's random inserts come back to: 512 MB instead of
        // 32 MB made the writer 10-15% faster on 1M keys (a 172 MB file); on 5M keys (888 MB)
        // 2 GB instead of 512 MB took the import from 32.5 to 26.1 s. It grows only as the
        // file does.
        opts.caches.writer = opts.caches.writer.max(IMPORT_WRITER_CACHE);
        let db = Db::open_with(opts).map_err(|e| e.to_string())?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let sum = load_with(
            &db,
            file,
            (total, config.databases, now),
            None,
            None,
            Mode::OneTransaction,
        )
        .map_err(|e| format!("{}: {e}", rdb_path.display()))?;
        // The last handle: the engine commits and stops.
        drop(db);
        // Opened as the server opens it, the file goes back to WAL mode (as it was before the
        // import, or as a new file is made), and is checked once more before it replaces
        // anything; closed, it leaves no WAL behind.
        drop(
            Db::open_with(crate::engine_options(config, Some(staging.clone())))
                .map_err(|e| format!("{}: {e}", staging.display()))?,
        );
        if nonempty(&with_suffix(&staging, "-wal")) {
            return Err(format!(
                "{}: its WAL was not checkpointed",
                staging.display()
            ));
        }
        std::fs::File::open(&staging)
            .and_then(|f| f.sync_all())
            .map_err(|e| format!("{}: {e}", staging.display()))?;
        Ok(sum)
    })();
    let sum = match result {
        Ok(s) => s,
        Err(e) => {
            remove_db_files(&staging);
            return Err(e);
        }
    };
    if nonempty(&with_suffix(&data, "-wal")) {
        remove_db_files(&staging);
        return Err(format!(
            "{} has uncheckpointed writes: is a server running on it?",
            data.display()
        ));
    }
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(with_suffix(&data, suffix));
        let _ = std::fs::remove_file(with_suffix(&staging, suffix));
    }
    std::fs::rename(&staging, &data).map_err(|e| {
        format!(
            "cannot move {} to {}: {e}",
            staging.display(),
            data.display()
        )
    })?;
    if let Some(dir) = data.parent() {
        let _ = std::fs::File::open(dir).and_then(|d| d.sync_all());
    }
    Ok(sum)
}

/// `--export`: writes the whole keyspace of the data file `config` names, and its function
/// libraries, to an RDB file at `out` that redis-server 7.0 loads.
///
/// # Errors
/// No data file, or it cannot be opened; `out` cannot be written.
pub fn export(config: &Config, out: &Path) -> Result<ExportSummary, String> {
    let data = config
        .db_path()
        .ok_or("--export needs a data file (dbfilename is :memory:)")?;
    if !data.exists() {
        return Err(format!("{}: no such data file", data.display()));
    }
    let db = crate::open_engine(config).map_err(|e| e.to_string())?;
    let tmp = with_suffix(out, ".tmp");
    let file =
        std::fs::File::create(&tmp).map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
    let r = db.read(move |r| Ok(write_rdb(r, file)));
    let result = match r {
        Ok(Ok(sum)) => std::fs::rename(&tmp, out)
            .map(|()| sum)
            .map_err(|e| format!("cannot move {} to {}: {e}", tmp.display(), out.display())),
        Ok(Err(e)) => Err(e),
        Err(e) => Err(e.to_string()),
    };
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// `--export` over the PostgreSQL backend (`config.backend` a URL): writes what the shared
/// keyspace holds, as of one snapshot, and its function libraries, to an RDB file at `out` that
/// redis-server 7.0 loads. The stored values are DUMP payloads already: each goes into the
/// file as it is (no decoding). Nodes may keep serving meanwhile.
///
/// # Errors
/// PostgreSQL cannot be reached, or `out` cannot be written.
pub fn export_postgres(config: &Config, out: &Path) -> Result<ExportSummary, String> {
    let url = &config.backend;
    // Brings the schema up to date, as a node's start does.
    relis::postgres::PgKeys::connect(url).map_err(|e| format!("PostgreSQL: {e}"))?;
    snapshot_postgres(url, out, true)
}

/// Writes the shared keyspace at `url` (schema already current), as of one snapshot, to an
/// RDB file at `out` (through `<out>.tmp`), showing progress if `show`: `--export`, and
/// SAVE/BGSAVE on a node of the PostgreSQL backend.
///
/// # Errors
/// PostgreSQL cannot be reached, or `out` cannot be written.
pub fn snapshot_postgres(url: &str, out: &Path, show: bool) -> Result<ExportSummary, String> {
    let mut pg =
        relis::postgres::PgKeyspace::connect(url).map_err(|e| format!("PostgreSQL: {e}"))?;
    let tmp = with_suffix(out, ".tmp");
    let file =
        std::fs::File::create(&tmp).map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
    let result = write_rdb_postgres(&mut pg, file, show).and_then(|sum| {
        std::fs::rename(&tmp, out)
            .map(|()| sum)
            .map_err(|e| format!("cannot move {} to {}: {e}", tmp.display(), out.display()))
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn write_rdb_postgres(
    pg: &mut relis::postgres::PgKeyspace,
    file: std::fs::File,
    show: bool,
) -> Result<ExportSummary, String> {
    let io = |e: std::io::Error| format!("write error: {e}");
    let progress = if show {
        Progress::new("exporting", 0)
    } else {
        Progress::hidden()
    };
    let mut w = FileWriter::new(std::io::BufWriter::with_capacity(1 << 20, file)).map_err(io)?;
    header(&mut w).map_err(io)?;
    let mut sink = PgExport {
        w,
        sum: ExportSummary::default(),
        progress,
    };
    pg.export(crate::state::unix_ms(), &mut sink)
        .map_err(|Failed(e)| e)?;
    let PgExport {
        w,
        mut sum,
        mut progress,
    } = sink;
    let out = w.finish().map_err(io)?;
    let file = out.into_inner().map_err(|e| io(e.into_error()))?;
    file.sync_all().map_err(io)?;
    sum.bytes = file.metadata().map_or(0, |m| m.len());
    progress.finish();
    Ok(sum)
}

/// The auxiliary fields an exported file starts with, as redis-server writes them.
fn header<W: std::io::Write>(w: &mut FileWriter<W>) -> std::io::Result<()> {
    let ctime = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    w.aux(b"redis-ver", crate::REDIS_VERSION.as_bytes())?;
    w.aux(b"redis-bits", b"64")?;
    w.aux(b"ctime", ctime.to_string().as_bytes())?;
    w.aux(b"used-mem", b"0")?;
    w.aux(b"aof-base", b"0")
}

/// Where [`export_postgres`] writes the rows: the file, what it counted, the progress shown.
struct PgExport {
    w: FileWriter<std::io::BufWriter<std::fs::File>>,
    sum: ExportSummary,
    progress: Progress,
}

fn write_failed(e: std::io::Error) -> Failed {
    Failed(format!("write error: {e}"))
}

impl relis::postgres::ExportSink for PgExport {
    type Error = Failed;

    fn function(&mut self, _name: &str, code: &[u8]) -> Result<(), Failed> {
        self.w.function(code).map_err(write_failed)?;
        self.sum.functions += 1;
        Ok(())
    }

    fn database(&mut self, db: u32, keys: u64, expires: u64) -> Result<(), Failed> {
        self.w
            .select_db(u64::from(db), keys, expires)
            .map_err(write_failed)
    }

    fn row(&mut self, key: &[u8], payload: &[u8], expire_at: Option<i64>) -> Result<(), Failed> {
        self.w
            .payload_entry(key, payload, expire_at)
            .map_err(write_failed)?;
        self.sum.keys += 1;
        self.progress.update(self.w.written(), self.sum.keys);
        Ok(())
    }
}

/// An export's failure, from the engine or from writing.
struct Failed(String);

impl From<relis::Error> for Failed {
    fn from(e: relis::Error) -> Failed {
        Failed(e.to_string())
    }
}

impl From<relis::postgres::Error> for Failed {
    fn from(e: relis::postgres::Error) -> Failed {
        Failed(format!("PostgreSQL: {e}"))
    }
}

/// Writes everything `r` sees to `file` as an RDB file.
fn write_rdb(r: &relis::Reader<'_>, file: std::fs::File) -> Result<ExportSummary, String> {
    let io = |e: std::io::Error| format!("write error: {e}");
    let spaces = r.keyspace_info().map_err(|e| e.to_string())?;
    let total_keys: i64 = spaces.iter().map(|s| s.keys).sum();
    let mut progress = Progress::new("exporting", 0);
    let mut w = FileWriter::new(std::io::BufWriter::with_capacity(1 << 20, file)).map_err(io)?;
    header(&mut w).map_err(io)?;
    let mut sum = ExportSummary::default();
    for (_, code) in r.function_libraries().map_err(|e| e.to_string())? {
        w.function(&code).map_err(io)?;
        sum.functions += 1;
    }
    for space in spaces {
        let hint = |n: i64| u64::try_from(n).unwrap_or(0);
        w.select_db(u64::from(space.db), hint(space.keys), hint(space.expires))
            .map_err(io)?;
        r.each_dumped::<Failed>(space.db, |key, d| {
            let kind = object_kind(d.encoding);
            w.entry(key, &to_object(d.value), kind, d.expire_at)
                .map_err(|e| Failed(io(e)))?;
            sum.keys += 1;
            progress.update(w.written(), sum.keys);
            Ok(())
        })
        .map_err(|Failed(e)| e)?;
    }
    let out = w.finish().map_err(io)?;
    let file = out.into_inner().map_err(|e| io(e.into_error()))?;
    file.sync_all().map_err(io)?;
    sum.bytes = file.metadata().map_or(0, |m| m.len());
    progress.finish();
    tracing::info!(
        "exported {} of {total_keys} keys (the rest had expired)",
        sum.keys
    );
    Ok(sum)
}
