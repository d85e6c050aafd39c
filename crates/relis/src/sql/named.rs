//! Named SQL databases: plain SQLite files (or in-memory databases) with no Redis keyspace,
//! each with its own writer thread (group commit, a savepoint per job) and, for files, its own
//! pool of reader threads, so databases write in parallel with each other and with the main
//! database. Any existing SQLite file can be opened; Relis adds one table to it,
//! `relis_statements`, for its prepared statements.

use super::{
    sandbox, Params, PrepareMode, SqlConn, SqlError, SqlLimits, SqlOutput, StatementInfo, TableInfo,
};
use crate::backend::sqlite::db::Durability;
use crate::clock::{Clock, SystemClock};
use crate::error::Error;
use crossbeam_channel::{bounded, unbounded, Receiver, Sender};
use parking_lot::Mutex;
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How to open a [`SqlDb`].
#[derive(Clone)]
pub struct SqlDbOptions {
    /// Commit durability.
    pub durability: Durability,
    /// Reader threads (files only).
    pub readers: usize,
    /// Most jobs committed in one transaction.
    pub max_batch: usize,
    /// The clock `relis_now()` reads.
    pub clock: Arc<dyn Clock>,
}

impl Default for SqlDbOptions {
    fn default() -> Self {
        SqlDbOptions {
            durability: Durability::Normal,
            readers: 2,
            max_batch: 1024,
            clock: Arc::new(SystemClock),
        }
    }
}

type Deliver = Box<dyn FnOnce(Result<(), SqlError>) + Send>;
type WriteJob = Box<dyn FnOnce(&mut SqlConn<'_>) -> Deliver + Send>;
type ReadJob = Box<dyn FnOnce(&mut SqlConn<'_>) + Send>;
type ConnJob = Box<dyn FnOnce(&Connection) + Send>;

enum Msg {
    Write(WriteJob),
    /// A read, in memory (no reader pool): it runs on the writer after the batch commits.
    Read(ReadJob),
    /// Runs with the writer's connection outside any transaction.
    Conn(ConnJob),
    Shutdown,
}

struct Shared {
    writer: Sender<Msg>,
    readers: Option<Sender<ReadJob>>,
    path: Option<PathBuf>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        let _ = self.writer.send(Msg::Shutdown);
        self.readers = None;
        for t in self.threads.lock().drain(..) {
            let _ = t.join();
        }
    }
}

/// A named SQL database: one SQLite file (or memory) with its own writer thread and readers.
/// Cloning shares it; it closes when the last clone drops.
///
/// ```
/// use relis::{SqlDb, SqlDbOptions, SqlValue};
/// let db = SqlDb::open(None, SqlDbOptions::default())?;
/// db.exec("CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER)", ())?;
/// db.exec("INSERT INTO kv VALUES (?, ?)", [SqlValue::text("a"), SqlValue::Integer(1)])?;
/// let out = db.query("SELECT v FROM kv WHERE k = 'a'", ())?;
/// assert_eq!(out.rows, vec![vec![SqlValue::Integer(1)]]);
/// # Ok::<(), relis::SqlError>(())
/// ```
#[derive(Clone)]
pub struct SqlDb {
    shared: Arc<Shared>,
}

const STATEMENTS_TABLE: &str = "CREATE TABLE IF NOT EXISTS main.relis_statements (
    name     TEXT PRIMARY KEY,
    sql      TEXT NOT NULL,
    params   INTEGER NOT NULL,
    readonly INTEGER NOT NULL
)";

fn configure(conn: &Connection, durability: Durability, file: bool) -> rusqlite::Result<()> {
    if file {
        let _: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
    }
    conn.pragma_update(
        None,
        "synchronous",
        match durability {
            Durability::Off => "OFF",
            Durability::Normal => "NORMAL",
            Durability::Full => "FULL",
        },
    )?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.pragma_update(None, "cache_size", -65536)?;
    conn.busy_timeout(Duration::from_secs(10))?;
    crate::backend::sqlite::db::plan_once(conn)
}

fn open_reader(path: &Path) -> Result<Connection, SqlError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI,
    )
    .map_err(|e| SqlError::Sql(format!("{}: {e}", path.display())))?;
    conn.busy_timeout(Duration::from_secs(10))
        .map_err(super::internal)?;
    crate::backend::sqlite::db::plan_once(&conn).map_err(super::internal)?;
    super::connection::install(&conn).map_err(super::internal)?;
    Ok(conn)
}

fn run_sql(conn: &Connection, sql: &'static str) -> Result<(), SqlError> {
    crate::backend::sqlite::stmt::cached(conn, sql)
        .and_then(|mut s| s.execute([]))
        .map(|_| ())
        .map_err(super::internal)
}

impl SqlDb {
    /// Opens (creating if needed) the SQLite file at `path`, or an in-memory database for
    /// `None`.
    ///
    /// # Errors
    /// The file cannot be opened or is not a SQLite database.
    pub fn open(path: Option<&Path>, opts: SqlDbOptions) -> Result<SqlDb, SqlError> {
        let name = path.map_or_else(|| ":memory:".to_string(), |p| p.display().to_string());
        let conn = match path {
            Some(p) => Connection::open(p),
            None => Connection::open_in_memory(),
        }
        .map_err(|e| SqlError::Sql(format!("{name}: cannot open: {e}")))?;
        configure(&conn, opts.durability, path.is_some())
            .map_err(|e| SqlError::Sql(format!("{name}: {e}")))?;
        super::connection::install(&conn).map_err(super::internal)?;
        conn.execute_batch(STATEMENTS_TABLE)
            .map_err(|e| SqlError::Sql(format!("{name}: {e}")))?;

        let mut threads = Vec::new();
        let (wtx, wrx) = unbounded();
        {
            let clock = opts.clock.clone();
            let max_batch = opts.max_batch.max(1);
            threads.push(
                std::thread::Builder::new()
                    .name("relis-sql-writer".into())
                    .spawn(move || {
                        crate::backend::sqlite::db::prefer_prompt_wakeups();
                        writer_loop(conn, wrx, clock, max_batch)
                    })
                    .map_err(|e| SqlError::Engine(Error::Storage(e.to_string())))?,
            );
        }
        let readers = match path {
            None => None,
            Some(path) => {
                let (rtx, rrx) = unbounded::<ReadJob>();
                for i in 0..opts.readers.max(1) {
                    let conn = open_reader(path)?;
                    let (rrx, clock) = (rrx.clone(), opts.clock.clone());
                    threads.push(
                        std::thread::Builder::new()
                            .name(format!("relis-sql-reader-{i}"))
                            .spawn(move || reader_loop(conn, rrx, clock))
                            .map_err(|e| SqlError::Engine(Error::Storage(e.to_string())))?,
                    );
                }
                Some(rtx)
            }
        };
        Ok(SqlDb {
            shared: Arc::new(Shared {
                writer: wtx,
                readers,
                path: path.map(Path::to_path_buf),
                threads: Mutex::new(threads),
            }),
        })
    }

    /// The file, or `None` in memory.
    pub fn path(&self) -> Option<&Path> {
        self.shared.path.as_deref()
    }

    /// Runs `f` on the writer inside its own savepoint of the current group transaction (an
    /// error rolls back what it wrote), and calls `done` once the transaction has committed.
    /// Never blocks the caller.
    pub fn write_async<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut SqlConn<'_>) -> Result<R, SqlError> + Send + 'static,
        done: impl FnOnce(Result<R, SqlError>) + Send + 'static,
    ) {
        let job: WriteJob = Box::new(move |c| {
            let r = c.atomic(f);
            Box::new(move |committed: Result<(), SqlError>| done(committed.and(r)))
        });
        if let Err(e) = self.shared.writer.send(Msg::Write(job)) {
            if let Msg::Write(job) = e.into_inner() {
                drop(job);
            }
        }
    }

    /// Runs `f` on a read snapshot (a reader thread; the writer in memory) and calls `done`.
    pub fn read_async<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut SqlConn<'_>) -> Result<R, SqlError> + Send + 'static,
        done: impl FnOnce(Result<R, SqlError>) + Send + 'static,
    ) {
        let job: ReadJob = Box::new(move |c| done(f(c)));
        match &self.shared.readers {
            Some(r) => {
                let _ = r.send(job);
            }
            None => {
                let _ = self.shared.writer.send(Msg::Read(job));
            }
        }
    }

    fn write<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut SqlConn<'_>) -> Result<R, SqlError> + Send + 'static,
    ) -> Result<R, SqlError> {
        let (tx, rx) = bounded(1);
        self.write_async(f, move |r| {
            let _ = tx.send(r);
        });
        rx.recv().map_err(|_| SqlError::Engine(Error::Closed))?
    }

    fn read<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut SqlConn<'_>) -> Result<R, SqlError> + Send + 'static,
    ) -> Result<R, SqlError> {
        let (tx, rx) = bounded(1);
        self.read_async(f, move |r| {
            let _ = tx.send(r);
        });
        rx.recv().map_err(|_| SqlError::Engine(Error::Closed))?
    }

    /// Runs SQL on the writer (see [`SqlConn::exec`]) with the default limits.
    ///
    /// # Errors
    /// The statement's [`SqlError`]; nothing it wrote is kept.
    pub fn exec(&self, sql: &str, params: impl Into<Params>) -> Result<SqlOutput, SqlError> {
        let (sql, params) = (sql.to_string(), params.into());
        self.write(move |c| c.exec(&sql, params, &SqlLimits::default()))
    }

    /// Runs a read-only statement on a reader.
    ///
    /// # Errors
    /// [`SqlError::NotReadOnly`], or the statement's error.
    pub fn query(&self, sql: &str, params: impl Into<Params>) -> Result<SqlOutput, SqlError> {
        let (sql, params) = (sql.to_string(), params.into());
        self.read(move |c| c.query(&sql, params, &SqlLimits::default()))
    }

    /// Stores a prepared statement (see [`SqlConn::prepare`]).
    ///
    /// # Errors
    /// The statement does not compile or is refused.
    pub fn prepare(&self, name: &str, sql: &str) -> Result<StatementInfo, SqlError> {
        let (name, sql) = (name.to_string(), sql.to_string());
        self.write(move |c| c.prepare(&name, &sql, PrepareMode::Upsert))
    }

    /// Runs a prepared statement on the writer.
    ///
    /// # Errors
    /// No such statement, or the statement's error.
    pub fn run(&self, name: &str, params: impl Into<Params>) -> Result<SqlOutput, SqlError> {
        let (name, params) = (name.to_string(), params.into());
        self.write(move |c| c.run(&name, params, &SqlLimits::default()))
    }

    /// Every prepared statement.
    ///
    /// # Errors
    /// Storage errors.
    pub fn statements(&self) -> Result<Vec<StatementInfo>, SqlError> {
        self.read(|c| c.statements())
    }

    /// Describes a table.
    ///
    /// # Errors
    /// [`SqlError::NoSuchTable`], or storage errors.
    pub fn describe(&self, table: &str) -> Result<TableInfo, SqlError> {
        let table = table.to_string();
        self.read(move |c| c.describe(&table, &SqlLimits::default()))
    }

    fn with_writer_conn<R: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> Result<R, SqlError> + Send + 'static,
    ) -> Result<R, SqlError> {
        let (tx, rx) = bounded(1);
        let job: ConnJob = Box::new(move |c| {
            let _ = tx.send(f(c));
        });
        self.shared
            .writer
            .send(Msg::Conn(job))
            .map_err(|_| SqlError::Engine(Error::Closed))?;
        rx.recv().map_err(|_| SqlError::Engine(Error::Closed))?
    }

    /// Writes a consistent copy of the database to `dest` (SQLite's online backup), without
    /// stopping writes.
    ///
    /// # Errors
    /// The destination cannot be written, or the database is closed.
    pub fn backup_to(&self, dest: impl AsRef<Path>) -> Result<(), SqlError> {
        let dest = dest.as_ref().to_path_buf();
        let tmp = dest.with_extension("tmp-backup");
        let _ = std::fs::remove_file(&tmp);
        let copy = move |src: &Connection| -> Result<(), SqlError> {
            let storage = |e: rusqlite::Error| SqlError::Engine(Error::from(e));
            let mut out = Connection::open(&tmp).map_err(storage)?;
            {
                let b = rusqlite::backup::Backup::new(src, &mut out).map_err(storage)?;
                b.run_to_completion(i32::MAX, Duration::ZERO, None)
                    .map_err(storage)?;
            }
            out.pragma_update(None, "journal_mode", "DELETE")
                .map_err(storage)?;
            drop(out);
            std::fs::rename(&tmp, &dest)
                .map_err(|e| SqlError::Engine(Error::Storage(e.to_string())))
        };
        match &self.shared.path {
            Some(path) => {
                let src = open_reader(path)?;
                copy(&src)
            }
            None => self.with_writer_conn(copy),
        }
    }

    /// Replaces this database's content with a copy of `src`'s (REDISQL.COPY): every table,
    /// index and prepared statement of `src`, nothing of what was here.
    ///
    /// # Errors
    /// Either database is closed, or the copy fails.
    pub fn copy_from(&self, src: &SqlDb) -> Result<(), SqlError> {
        let tmp = std::env::temp_dir().join(format!(
            "relis-copy-{}-{}.db",
            std::process::id(),
            rand::random::<u64>()
        ));
        src.backup_to(&tmp)?;
        let from = tmp.clone();
        let res = self.with_writer_conn(move |dst| {
            let storage = |e: rusqlite::Error| SqlError::Engine(Error::from(e));
            let src = Connection::open_with_flags(&from, OpenFlags::SQLITE_OPEN_READ_ONLY)
                .map_err(storage)?;
            // The writer's connection is only borrowed here, and rusqlite's Backup wants it
            // mutably: use SQLite's backup API on the raw handles.
            backup_into(&src, dst).map_err(storage)
        });
        let _ = std::fs::remove_file(&tmp);
        res
    }
}

/// SQLite's backup API from `src` into `dst` (which is only borrowed).
fn backup_into(src: &Connection, dst: &Connection) -> rusqlite::Result<()> {
    use rusqlite::ffi;
    // SAFETY: both handles are open connections used only by this thread for the duration of
    // the call; the backup object is finished before returning.
    unsafe {
        let name = c"main".as_ptr();
        let b = ffi::sqlite3_backup_init(dst.handle(), name, src.handle(), name);
        if b.is_null() {
            return Err(rusqlite::Error::SqliteFailure(
                ffi::Error::new(ffi::sqlite3_errcode(dst.handle())),
                Some("cannot start the copy".into()),
            ));
        }
        let rc = ffi::sqlite3_backup_step(b, -1);
        ffi::sqlite3_backup_finish(b);
        if rc != ffi::SQLITE_DONE {
            return Err(rusqlite::Error::SqliteFailure(ffi::Error::new(rc), None));
        }
    }
    Ok(())
}

fn writer_loop(conn: Connection, rx: Receiver<Msg>, clock: Arc<dyn Clock>, max_batch: usize) {
    let mut batch = Vec::with_capacity(max_batch);
    let mut delivers: Vec<Deliver> = Vec::with_capacity(max_batch);
    let mut after: Vec<Msg> = Vec::new();
    let mut shutdown = false;
    while !shutdown {
        match rx.recv() {
            Ok(m) => batch.push(m),
            Err(_) => break,
        }
        while batch.len() < max_batch {
            match rx.try_recv() {
                Ok(m) => batch.push(m),
                Err(_) => break,
            }
        }
        let has_writes = batch.iter().any(|m| matches!(m, Msg::Write(_)));
        let began = if has_writes {
            run_sql(&conn, "BEGIN IMMEDIATE")
        } else {
            Ok(())
        };
        for m in batch.drain(..) {
            match m {
                Msg::Write(job) => {
                    if let Err(e) = &began {
                        let mut c = SqlConn::new(&conn, clock.now_ms(), false);
                        let deliver = job(&mut c);
                        deliver(Err(e.clone()));
                        continue;
                    }
                    let mut c = SqlConn::new(&conn, clock.now_ms(), true);
                    delivers.push(job(&mut c));
                    if let Some(why) = sandbox::take_transaction_lost() {
                        // SQLite rolled the group's transaction back during that job (a write
                        // interrupted at its time limit): what the batch wrote so far is gone,
                        // so those jobs and this one fail; the rest start over.
                        let _ = conn.execute_batch("ROLLBACK; BEGIN IMMEDIATE");
                        let e = SqlError::Engine(Error::RolledBack(why));
                        for d in delivers.drain(..) {
                            d(Err(e.clone()));
                        }
                    }
                }
                Msg::Shutdown => shutdown = true,
                other => after.push(other),
            }
        }
        if has_writes && began.is_ok() {
            let committed = run_sql(&conn, "COMMIT");
            if committed.is_err() {
                let _ = conn.execute_batch("ROLLBACK");
            }
            for d in delivers.drain(..) {
                d(committed.clone());
            }
        }
        for m in after.drain(..) {
            match m {
                Msg::Read(job) => {
                    let mut c = SqlConn::new(&conn, clock.now_ms(), false);
                    job(&mut c);
                }
                Msg::Conn(job) => job(&conn),
                _ => {}
            }
        }
    }
}

fn reader_loop(conn: Connection, rx: Receiver<ReadJob>, clock: Arc<dyn Clock>) {
    while let Ok(job) = rx.recv() {
        let began = run_sql(&conn, "BEGIN");
        let mut c = SqlConn::new(&conn, clock.now_ms(), false);
        job(&mut c);
        if began.is_ok() {
            let _ = run_sql(&conn, "COMMIT");
        }
    }
}
