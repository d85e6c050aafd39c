//! SQL over the same engine: user statements with bound parameters and typed values, prepared
//! statements that persist in the database, table descriptions, and named SQL databases
//! ([`SqlDb`]) with their own files and writer threads.
//!
//! One type does the work on any connection: [`SqlConn`], which a [`Writer`] (the main
//! database's write transaction), a [`Reader`] (a read snapshot) or a [`SqlDb`] job hands out.
//! Every user statement runs in the sandbox (see `sql/sandbox.rs`): no ATTACH, no extension
//! loading, no transaction control, no writes to (or direct reads of) the engine's `relis_*`
//! tables, no temporary objects, no object named `relis_*`, `redis_*` or `sqlite_*`, only
//! reporting PRAGMAs, and a time limit. The engine's own statements name their schema
//! (`main.relis_keys`), so nothing a user creates can stand in for its tables.
//!
//! ```
//! use relis::{Db, SqlValue, StatementKind};
//! let db = Db::open_in_memory()?;
//! db.sql_exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)", ())?;
//! let out = db.sql_exec("INSERT INTO t (name) VALUES (?), (?)", ["ann", "bob"])?;
//! assert_eq!(out.kind, StatementKind::Changes);
//! assert_eq!(out.changes, 2);
//! let out = db.sql_query("SELECT id, name FROM t WHERE name = :name", [(":name", "bob")])?;
//! assert_eq!(out.columns, ["id", "name"]);
//! assert_eq!(out.rows, vec![vec![SqlValue::Integer(2), SqlValue::text("bob")]]);
//! # Ok::<(), relis::SqlError>(())
//! ```
//!
//! Parameters bind positionally (`?`, `?NNN`, and `:name`/`@name`/`$name` in order of first
//! appearance, as SQLite numbers them) or by name. Text that comes from the network binds as
//! TEXT when it is valid UTF-8 and as BLOB otherwise ([`SqlValue::from_bytes`]); SQLite's column
//! affinity then applies as usual: `'42'` stored in an INTEGER column becomes the integer 42,
//! while a BLOB is stored as it is.

mod access;
mod builtins;
pub(crate) mod connection;
pub(crate) mod memory;
pub mod morph;
mod named;
pub(crate) mod sandbox;

pub use access::{KeyAccess, KeyFilter};
pub use morph::{infer_type, value_bytes, FromHashReport, KeyTemplate, Morph, MorphOptions};
pub use named::{SqlDb, SqlDbOptions};

use crate::backend::sqlite::db::Db;
use crate::backend::sqlite::stmt::{Conn, ConnState};
use crate::backend::sqlite::store::{Reader, Writer};
use crate::error::Error;
use bytes::Bytes;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OptionalExtension};
use sandbox::Sandbox;
use std::fmt;
use std::time::Duration;

/// A SQL value: one of SQLite's five storage classes. Text and blobs are bytes (SQLite does not
/// check that text is valid UTF-8, and neither does Relis).
#[derive(Clone, Debug, PartialEq)]
pub enum SqlValue {
    /// NULL.
    Null,
    /// A 64-bit integer.
    Integer(i64),
    /// A 64-bit float.
    Real(f64),
    /// Text (normally UTF-8).
    Text(Bytes),
    /// A blob.
    Blob(Bytes),
}

impl SqlValue {
    /// Text from a string.
    pub fn text(s: impl Into<String>) -> SqlValue {
        SqlValue::Text(Bytes::from(s.into()))
    }

    /// A network argument as a parameter: TEXT when it is valid UTF-8, BLOB otherwise.
    pub fn from_bytes(b: Bytes) -> SqlValue {
        if std::str::from_utf8(&b).is_ok() {
            SqlValue::Text(b)
        } else {
            SqlValue::Blob(b)
        }
    }

    /// The storage class's name as `typeof()` spells it.
    pub fn type_name(&self) -> &'static str {
        match self {
            SqlValue::Null => "null",
            SqlValue::Integer(_) => "integer",
            SqlValue::Real(_) => "real",
            SqlValue::Text(_) => "text",
            SqlValue::Blob(_) => "blob",
        }
    }

    fn from_ref(v: ValueRef<'_>) -> SqlValue {
        match v {
            ValueRef::Null => SqlValue::Null,
            ValueRef::Integer(i) => SqlValue::Integer(i),
            ValueRef::Real(f) => SqlValue::Real(f),
            ValueRef::Text(t) => SqlValue::Text(Bytes::copy_from_slice(t)),
            ValueRef::Blob(b) => SqlValue::Blob(Bytes::copy_from_slice(b)),
        }
    }
}

impl rusqlite::ToSql for SqlValue {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            SqlValue::Null => ValueRef::Null,
            SqlValue::Integer(i) => ValueRef::Integer(*i),
            SqlValue::Real(f) => ValueRef::Real(*f),
            SqlValue::Text(t) => ValueRef::Text(t),
            SqlValue::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

impl From<i64> for SqlValue {
    fn from(v: i64) -> Self {
        SqlValue::Integer(v)
    }
}
impl From<f64> for SqlValue {
    fn from(v: f64) -> Self {
        SqlValue::Real(v)
    }
}
impl From<&str> for SqlValue {
    fn from(v: &str) -> Self {
        SqlValue::text(v)
    }
}
impl From<String> for SqlValue {
    fn from(v: String) -> Self {
        SqlValue::text(v)
    }
}
impl From<Bytes> for SqlValue {
    /// Bytes as [`SqlValue::from_bytes`] binds them.
    fn from(v: Bytes) -> Self {
        SqlValue::from_bytes(v)
    }
}
impl From<Vec<u8>> for SqlValue {
    fn from(v: Vec<u8>) -> Self {
        SqlValue::Blob(Bytes::from(v))
    }
}
impl<T: Into<SqlValue>> From<Option<T>> for SqlValue {
    fn from(v: Option<T>) -> Self {
        v.map_or(SqlValue::Null, Into::into)
    }
}

/// Parameters of a statement.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Params {
    /// Bound to indexes 1, 2, ... (`?`, `?NNN`, and named parameters in the order SQLite numbers
    /// them); there must be exactly as many as the statement's highest index.
    #[default]
    None,
    /// Positional values.
    Positional(Vec<SqlValue>),
    /// Values by name, the name with its prefix (`:id`, `@id`, `$id`).
    Named(Vec<(String, SqlValue)>),
}

impl Params {
    /// Whether there are no values at all.
    pub fn is_empty(&self) -> bool {
        match self {
            Params::None => true,
            Params::Positional(v) => v.is_empty(),
            Params::Named(v) => v.is_empty(),
        }
    }
}

impl From<()> for Params {
    fn from(_: ()) -> Self {
        Params::None
    }
}
impl From<Vec<SqlValue>> for Params {
    fn from(v: Vec<SqlValue>) -> Self {
        Params::Positional(v)
    }
}
impl<T: Into<SqlValue> + Clone> From<&[T]> for Params {
    fn from(v: &[T]) -> Self {
        Params::Positional(v.iter().cloned().map(Into::into).collect())
    }
}
impl<T: Into<SqlValue>, const N: usize> From<[T; N]> for Params {
    fn from(v: [T; N]) -> Self {
        Params::Positional(v.into_iter().map(Into::into).collect())
    }
}
impl<K: Into<String>, T: Into<SqlValue>, const N: usize> From<[(K, T); N]> for Params {
    fn from(v: [(K, T); N]) -> Self {
        Params::Named(v.into_iter().map(|(k, v)| (k.into(), v.into())).collect())
    }
}

/// What a statement was: it decides the shape of the reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatementKind {
    /// It returns rows (SELECT, PRAGMA table_info, INSERT ... RETURNING, ...).
    Rows,
    /// It changes rows and returns none (INSERT, UPDATE, DELETE, REPLACE): see `changes`.
    Changes,
    /// It changes the schema or the file (CREATE, DROP, ALTER, ...).
    Ddl,
}

/// The result of running SQL.
#[derive(Clone, Debug, PartialEq)]
pub struct SqlOutput {
    /// What the (last) statement was.
    pub kind: StatementKind,
    /// Column names ([`StatementKind::Rows`] only).
    pub columns: Vec<String>,
    /// The rows ([`StatementKind::Rows`] only).
    pub rows: Vec<Vec<SqlValue>>,
    /// Rows changed by the last statement ([`StatementKind::Changes`]); in a batch, by all of
    /// them.
    pub changes: u64,
}

/// Bounds on one SQL call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SqlLimits {
    /// A statement running longer is interrupted (and its transaction rolled back).
    pub time_limit: Option<Duration>,
    /// A result with more rows is refused (without being buffered whole).
    pub max_rows: Option<usize>,
    /// A result holding more bytes (the sizes of its strings and blobs, 8 for any other
    /// value) is refused as it is read, before it is built whole; no single string or blob
    /// user SQL makes or reads may be longer either (SQLite's SQLITE_LIMIT_LENGTH, lowered
    /// while user SQL runs).
    pub max_bytes: Option<usize>,
    /// A statement whose own working memory (SQLite's allocations while it runs: sorts,
    /// temporary b-trees, values being built; not the page cache) would grow past this many
    /// bytes fails with [`SqlError::TooMuchMemory`].
    pub max_memory: Option<usize>,
}

/// The default of [`SqlLimits::max_bytes`]: 64 MiB.
pub const DEFAULT_MAX_RESULT_BYTES: usize = 64 << 20;

/// The default of [`SqlLimits::max_memory`]: 256 MiB.
pub const DEFAULT_MAX_MEMORY: usize = 256 << 20;

impl Default for SqlLimits {
    /// 5 seconds, any number of rows, 64 MiB of result, 256 MiB of working memory.
    fn default() -> Self {
        SqlLimits {
            time_limit: Some(Duration::from_millis(5000)),
            max_rows: None,
            max_bytes: Some(DEFAULT_MAX_RESULT_BYTES),
            max_memory: Some(DEFAULT_MAX_MEMORY),
        }
    }
}

/// A prepared statement, as stored in its database.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatementInfo {
    /// Its name.
    pub name: String,
    /// Its SQL.
    pub sql: String,
    /// How many parameters it takes (its highest parameter index).
    pub params: usize,
    /// Whether it only reads.
    pub readonly: bool,
}

/// How [`SqlConn::prepare`] treats an existing statement of the same name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrepareMode {
    /// Create or replace.
    Upsert,
    /// Only create: an existing name is an error.
    Create,
    /// Only replace: a missing name is an error.
    Update,
}

/// A column of a table, as SQL.DESC reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnInfo {
    /// Name.
    pub name: String,
    /// Declared type (may be empty).
    pub decl_type: String,
    /// NOT NULL.
    pub not_null: bool,
    /// The default value's SQL text.
    pub default: Option<String>,
    /// Position in the primary key (1-based), 0 when not part of it.
    pub pk: i64,
}

/// A table's description: columns, size in rows and in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableInfo {
    /// The columns, in order.
    pub columns: Vec<ColumnInfo>,
    /// Rows in the table.
    pub rows: i64,
    /// Bytes of the pages holding the table (0 for a view).
    pub bytes: i64,
    /// Each index with the bytes of its pages.
    pub indexes: Vec<(String, i64)>,
}

/// Why SQL failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SqlError {
    /// SQLite rejected or failed the statement; its message.
    Sql(String),
    /// The sandbox refused the statement; why.
    Denied(String),
    /// The statement ran past the time limit (milliseconds) and was interrupted.
    TimedOut(u64),
    /// The result has more rows than the limit.
    TooManyRows(usize),
    /// The result holds more bytes than the limit.
    TooManyBytes(usize),
    /// A string or blob would be longer than the limit (bytes).
    TooLong(usize),
    /// The statement needed more working memory than the limit (bytes).
    TooMuchMemory(usize),
    /// The statement would write where only reads are allowed.
    NotReadOnly,
    /// The number of parameters does not match the statement.
    Params {
        /// What the statement takes.
        expected: usize,
        /// What was given.
        got: usize,
    },
    /// A named parameter the statement does not have.
    NoSuchParam(String),
    /// Several statements where only one is allowed (with parameters, or prepared).
    MultipleStatements,
    /// No SQL at all (only blanks, comments or semicolons).
    Empty,
    /// No prepared statement of that name.
    NoSuchStatement(String),
    /// A prepared statement of that name exists already.
    StatementExists(String),
    /// No table or view of that name.
    NoSuchTable(String),
    /// The engine failed (storage, shutdown).
    Engine(Error),
    /// A read running inline ([`crate::Db::read_here`]) took more steps than an inline read
    /// may: nothing happened; run it again on a reader ([`crate::Db::read_async`]).
    Deferred,
    /// A morph command would write this key, which its [`KeyAccess`] does not allow.
    KeyDenied(Bytes),
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SqlError::Sql(m) => f.write_str(m),
            SqlError::Denied(m) => write!(f, "not authorized: {m}"),
            SqlError::TimedOut(ms) => write!(
                f,
                "statement interrupted after {ms} ms (sql-time-limit): its changes were rolled back"
            ),
            SqlError::TooManyRows(n) => {
                write!(f, "result has more than {n} rows (sql-max-result-rows)")
            }
            SqlError::TooManyBytes(n) => {
                write!(f, "result has more than {n} bytes (sql-max-result-bytes)")
            }
            SqlError::TooLong(n) => write!(
                f,
                "string or blob longer than {n} bytes (sql-max-result-bytes)"
            ),
            SqlError::TooMuchMemory(n) => write!(
                f,
                "statement needs more than {n} bytes of memory (sql-max-memory): its changes were rolled back"
            ),
            SqlError::NotReadOnly => {
                f.write_str("statement would write: only reads are allowed here")
            }
            SqlError::Params { expected, got } => write!(
                f,
                "wrong number of parameters: the statement takes {expected}, got {got}"
            ),
            SqlError::NoSuchParam(p) => write!(f, "the statement has no parameter named {p}"),
            SqlError::MultipleStatements => {
                f.write_str("only one statement is allowed here (parameters bind to one statement)")
            }
            SqlError::Empty => f.write_str("no SQL statement given"),
            SqlError::NoSuchStatement(n) => write!(f, "no prepared statement named '{n}'"),
            SqlError::StatementExists(n) => {
                write!(f, "a prepared statement named '{n}' exists already")
            }
            SqlError::NoSuchTable(t) => write!(f, "no such table: {t}"),
            SqlError::Engine(e) => write!(f, "{e}"),
            SqlError::Deferred => f.write_str("statement too long for an inline read"),
            SqlError::KeyDenied(k) => write!(
                f,
                "no permission to write the key '{}'",
                String::from_utf8_lossy(k)
            ),
        }
    }
}

impl std::error::Error for SqlError {}

impl From<Error> for SqlError {
    fn from(e: Error) -> Self {
        SqlError::Engine(e)
    }
}

/// The engine's own SQL failed (not the user's).
fn internal(e: rusqlite::Error) -> SqlError {
    SqlError::Engine(Error::from(e))
}

/// The user's SQL failed: SQLite's message, or the sandbox's reason, or the deadline.
fn user_error(e: rusqlite::Error, limits: &SqlLimits) -> SqlError {
    use rusqlite::ErrorCode as C;
    // The authorizer says why it refused (SQLite's own text is only "not authorized").
    if let Some(reason) = sandbox::take_denial() {
        return SqlError::Denied(reason);
    }
    // Stopped by the progress handler (an interrupt) or by a bounded built-in (an error).
    if sandbox::over_budget_stopped() {
        return SqlError::Deferred;
    }
    if sandbox::timed_out() {
        return SqlError::TimedOut(limits.time_limit.map_or(0, |d| d.as_millis() as u64));
    }
    match e.sqlite_error_code() {
        Some(C::OutOfMemory) if memory::exceeded() => {
            return SqlError::TooMuchMemory(limits.max_memory.unwrap_or_default())
        }
        // An inline read's values are kept short (sandbox::INLINE_LENGTH): a reader has room.
        Some(C::TooBig) if sandbox::inline() => return SqlError::Deferred,
        Some(C::TooBig) if limits.max_bytes.is_some() => {
            return SqlError::TooLong(limits.max_bytes.unwrap_or_default())
        }
        Some(C::DiskFull) => return SqlError::Engine(Error::DiskFull),
        Some(C::SystemIoFailure) => return SqlError::Engine(Error::Io(e.to_string())),
        _ => {}
    }
    match e {
        rusqlite::Error::SqlInputError { msg, offset, .. } => {
            // The offset counts the cache marker in front of the user's text.
            let offset = offset - USER_PREFIX.len() as i32;
            if offset >= 0 {
                SqlError::Sql(format!("{msg} (at offset {offset})"))
            } else {
                SqlError::Sql(msg)
            }
        }
        rusqlite::Error::SqliteFailure(_, Some(m)) => SqlError::Sql(m),
        rusqlite::Error::SqliteFailure(err, None) => SqlError::Sql(err.to_string()),
        rusqlite::Error::MultipleStatement => SqlError::MultipleStatements,
        rusqlite::Error::InvalidParameterName(p) => SqlError::NoSuchParam(p),
        other => SqlError::Sql(other.to_string()),
    }
}

/// The first keyword of `sql`, upper-cased, after blanks, comments and semicolons; `None` when
/// there is no statement at all.
pub(crate) fn first_keyword(sql: &str) -> Option<String> {
    let b = sql.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            c if c.is_ascii_whitespace() || c == b';' => i += 1,
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i += 2;
            }
            _ => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                if i == start {
                    // Not a keyword (a parenthesis, a quote, ...): SQLite will say what is wrong.
                    return Some(String::new());
                }
                return Some(sql[start..i].to_ascii_uppercase());
            }
        }
    }
    None
}

fn kind_of_rowless(keyword: &str) -> StatementKind {
    match keyword {
        "CREATE" | "DROP" | "ALTER" | "VACUUM" | "REINDEX" | "ANALYZE" | "PRAGMA" => {
            StatementKind::Ddl
        }
        _ => StatementKind::Changes,
    }
}

/// User statements are cached under their text behind this marker, so a user statement can
/// never be served one of the engine's own cached statements (compiled outside the sandbox).
const USER_PREFIX: &str = "/* relis:user */ ";

fn bind(st: &mut rusqlite::Statement<'_>, params: &Params) -> Result<(), SqlError> {
    let expected = st.parameter_count();
    match params {
        p if p.is_empty() && expected == 0 => Ok(()),
        Params::None => Err(SqlError::Params { expected, got: 0 }),
        Params::Positional(v) => {
            if v.len() != expected {
                return Err(SqlError::Params {
                    expected,
                    got: v.len(),
                });
            }
            for (i, v) in v.iter().enumerate() {
                st.raw_bind_parameter(i + 1, v)
                    .map_err(|e| SqlError::Sql(e.to_string()))?;
            }
            Ok(())
        }
        Params::Named(pairs) => {
            for (name, v) in pairs {
                let idx = st
                    .parameter_index(name)
                    .map_err(|e| SqlError::Sql(e.to_string()))?
                    .ok_or_else(|| SqlError::NoSuchParam(name.clone()))?;
                st.raw_bind_parameter(idx, v)
                    .map_err(|e| SqlError::Sql(e.to_string()))?;
            }
            Ok(())
        }
    }
}

/// Runs one compiled user statement.
fn step(
    conn: &Connection,
    st: &mut rusqlite::Statement<'_>,
    keyword: &str,
    params: &Params,
    limits: &SqlLimits,
    read_only: bool,
) -> Result<SqlOutput, SqlError> {
    if read_only && !st.readonly() {
        return Err(SqlError::NotReadOnly);
    }
    bind(st, params)?;
    let ncols = st.column_count();
    if ncols > 0 {
        let columns: Vec<String> = st.column_names().into_iter().map(String::from).collect();
        let mut out = Vec::new();
        let mut bytes = 0usize;
        let mut rows = st.raw_query();
        while let Some(row) = rows.next().map_err(|e| user_error(e, limits))? {
            if limits.max_rows.is_some_and(|max| out.len() >= max) {
                return Err(SqlError::TooManyRows(out.len()));
            }
            let mut vals = Vec::with_capacity(ncols);
            for i in 0..ncols {
                // A value is at most SQLITE_LIMIT_LENGTH long (the sandbox lowers it to the
                // same limit), so at most one value past the limit is ever read.
                let v = row.get_ref(i).map_err(|e| user_error(e, limits))?;
                bytes = bytes.saturating_add(match v {
                    ValueRef::Text(b) | ValueRef::Blob(b) => b.len(),
                    _ => 8,
                });
                if let Some(max) = limits.max_bytes.filter(|&max| bytes > max) {
                    return Err(SqlError::TooManyBytes(max));
                }
                vals.push(SqlValue::from_ref(v));
            }
            out.push(vals);
        }
        Ok(SqlOutput {
            kind: StatementKind::Rows,
            columns,
            rows: out,
            changes: 0,
        })
    } else {
        st.raw_execute().map_err(|e| user_error(e, limits))?;
        let kind = kind_of_rowless(keyword);
        Ok(SqlOutput {
            kind,
            columns: Vec::new(),
            rows: Vec::new(),
            changes: if kind == StatementKind::Changes {
                conn.changes()
            } else {
                0
            },
        })
    }
}

/// Runs user SQL on `conn` in the sandbox: one statement (cached by its text) with parameters,
/// or several `;`-separated statements without parameters (the result is the last one's, with
/// the change count of all of them).
fn execute(
    conn: &Conn<'_>,
    now: i64,
    sql: &str,
    params: &Params,
    limits: &SqlLimits,
    read_only: bool,
) -> Result<SqlOutput, SqlError> {
    let in_transaction = !conn.is_autocommit();
    // One SQLite statement is atomic on its own (a failing statement undoes itself), so the
    // common case needs no savepoint, which would cost a statement-journal copy of every page
    // it touches. Several statements need one, and so does a statement that may fail after
    // writing part of its work (`OR FAIL`, `RAISE(FAIL, ...)` in a trigger).
    // Schema changes are checked after they run (see `check_schema`), and undone if the check
    // fails: only CREATE and ALTER make or rename objects, and a batch may hold either.
    let schema_change = !read_only
        && (matches!(
            first_keyword(sql).as_deref(),
            Some("CREATE") | Some("ALTER")
        ) || has_several_statements(sql));
    let savepoint = !read_only && (schema_change || (in_transaction && needs_savepoint(sql)));
    if in_transaction {
        // User SQL may read the rank rows (and a savepoint must open with nothing pending).
        crate::types::flush_pending(conn)?;
    }
    if savepoint {
        run_internal(conn, "SAVEPOINT user_sql")?;
    }
    let before = if schema_change {
        reserved_objects(conn)
    } else {
        Ok(Vec::new())
    };
    let mut out = before.and_then(|before| {
        let out = execute_in_sandbox(conn, now, sql, params, limits, read_only)?;
        if schema_change {
            check_schema(conn, &before)?;
        }
        Ok(out)
    });
    if savepoint {
        if out.is_ok() {
            if let Err(e) = run_internal(conn, "RELEASE user_sql") {
                out = Err(e);
            }
        }
        if out.is_err() {
            let _ = run_internal(conn, "ROLLBACK TO user_sql");
            crate::types::zset::discard_pending(conn);
            let _ = run_internal(conn, "RELEASE user_sql");
        }
    }
    if let Err(e) = &out {
        if in_transaction && conn.is_autocommit() {
            // SQLite rolled back the whole transaction (it does for a write interrupted at its
            // deadline, and for I/O errors): the transaction's owner must fail everything it
            // held. A new transaction keeps the rest of this job from committing on its own.
            sandbox::mark_transaction_lost(e.to_string());
            let _ = conn.execute_batch(if read_only {
                "BEGIN"
            } else {
                "BEGIN IMMEDIATE"
            });
        }
    }
    out
}

/// An object of the database's schema: (schema, type, name, table it belongs to).
type SchemaObject = (String, String, String, String);

/// The objects whose name (or whose table's name) is reserved (`relis_*`, `redis_*`,
/// `sqlite_*`), and every temporary object: what a schema change may not add to.
fn reserved_objects(conn: &Connection) -> Result<Vec<SchemaObject>, SqlError> {
    let mut st = crate::backend::sqlite::stmt::cached(
        conn,
        "SELECT 'main', type, name, tbl_name FROM main.sqlite_schema
         WHERE lower(substr(name, 1, 6)) IN ('relis_', 'redis_')
            OR lower(substr(tbl_name, 1, 6)) IN ('relis_', 'redis_')
            OR lower(substr(name, 1, 7)) = 'sqlite_'
         UNION ALL
         SELECT 'temp', type, name, tbl_name FROM temp.sqlite_schema",
    )
    .map_err(internal)?;
    let rows = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .map_err(internal)?;
    let mut out = rows
        .collect::<rusqlite::Result<Vec<SchemaObject>>>()
        .map_err(internal)?;
    out.sort();
    Ok(out)
}

/// Names SQLite gives the objects it makes itself (user SQL may not use `sqlite_` names).
fn made_by_sqlite(kind: &str, name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    (kind == "index" && lower.starts_with("sqlite_autoindex_"))
        || (kind == "table"
            && matches!(
                lower.as_str(),
                "sqlite_sequence" | "sqlite_stat1" | "sqlite_stat4"
            ))
}

/// Checks the schema after user SQL changed it, against the reserved objects there were before
/// (`before`, from [`reserved_objects`]): no temporary object, no new object with a reserved
/// name or on a table with one (the authorizer sees the names a statement creates, but not the
/// new name of ALTER TABLE ... RENAME TO, nor the tables a virtual table makes for itself), and
/// no foreign key into the engine's tables.
fn check_schema(conn: &Connection, before: &[SchemaObject]) -> Result<(), SqlError> {
    let after = reserved_objects(conn)?;
    let added: Vec<&SchemaObject> = after
        .iter()
        .filter(|o| before.binary_search(o).is_err())
        .collect();
    if added.iter().any(|(schema, ..)| schema == "temp") {
        return Err(SqlError::Denied(sandbox::NO_TEMP_OBJECTS.into()));
    }
    // The object itself before what SQLite made for it (a table before its automatic index).
    let named = added
        .iter()
        .find(|(_, _, name, _)| sandbox::is_reserved(name));
    if let Some((_, kind, name, _)) = named {
        return Err(SqlError::Denied(sandbox::reserved_name(kind, name)));
    }
    for (_, kind, name, table) in &added {
        if sandbox::is_reserved(table) {
            return Err(SqlError::Denied(sandbox::reserved_name("table", table)));
        }
        if !made_by_sqlite(kind, name) {
            return Err(SqlError::Denied(format!(
                "{kind} '{name}' is not allowed: names starting with sqlite_ are SQLite's own"
            )));
        }
    }
    if let Some(table) = references_internal(conn)? {
        return Err(SqlError::Denied(format!(
            "table {table} has a foreign key to a table internal to Relis"
        )));
    }
    Ok(())
}

/// A table with a foreign key into the engine's tables, if any. SQLite (as bundled) enforces
/// foreign keys, so such a key would make the engine's own deletes fail; the authorizer cannot
/// see a REFERENCES clause, so it is checked after each schema change.
fn references_internal(conn: &Connection) -> Result<Option<String>, SqlError> {
    crate::backend::sqlite::stmt::cached(
        conn,
        "SELECT s.name FROM main.sqlite_schema AS s, pragma_foreign_key_list(s.name, 'main') AS f
         WHERE s.type = 'table' AND f.\"table\" LIKE 'relis\\_%' ESCAPE '\\' LIMIT 1",
    )
    .and_then(|mut st| st.query_row([], |r| r.get(0)).optional())
    .map_err(internal)
}

/// Whether running `sql` needs a savepoint to be all or nothing (see [`execute`]).
fn needs_savepoint(sql: &str) -> bool {
    has_several_statements(sql)
        || sql
            .as_bytes()
            .windows(4)
            .any(|w| w.eq_ignore_ascii_case(b"fail"))
}

fn run_internal(conn: &Connection, sql: &'static str) -> Result<(), SqlError> {
    crate::backend::sqlite::stmt::cached(conn, sql)
        .and_then(|mut s| s.execute([]))
        .map(|_| ())
        .map_err(internal)
}

fn execute_in_sandbox(
    conn: &Connection,
    now: i64,
    sql: &str,
    params: &Params,
    limits: &SqlLimits,
    read_only: bool,
) -> Result<SqlOutput, SqlError> {
    let keyword = first_keyword(sql).ok_or(SqlError::Empty)?;
    if sandbox::inline() && (sql.len() > sandbox::INLINE_SQL_BYTES || long_params(params)) {
        // Compiling and binding are not covered by the inline step budget: long text or
        // parameters run on a reader.
        return Err(SqlError::Deferred);
    }
    let several = has_several_statements(sql);
    if keyword == "VACUUM" && !several {
        return vacuum(conn, sql, read_only);
    }
    let _sandbox = Sandbox::enter(conn, now, limits);
    if several {
        if !params.is_empty() {
            return Err(SqlError::MultipleStatements);
        }
        return batch(conn, sql, limits, read_only);
    }
    let key = format!("{USER_PREFIX}{sql}");
    let mut st = conn
        .prepare_cached(&key)
        .map_err(|e| user_error(e, limits))?;
    step(conn, &mut st, &keyword, params, limits, read_only)
}

/// Whether a parameter is longer than an inline read may make or read a value.
fn long_params(params: &Params) -> bool {
    let long = |v: &SqlValue| match v {
        SqlValue::Text(b) | SqlValue::Blob(b) => b.len() > sandbox::INLINE_LENGTH as usize,
        _ => false,
    };
    match params {
        Params::None => false,
        Params::Positional(v) => v.iter().any(long),
        Params::Named(v) => v.iter().any(|(_, v)| long(v)),
    }
}

/// Whether `sql` holds more than one statement. Cheap for the usual single statement (no `;`
/// but a trailing one); otherwise SQLite's own `sqlite3_complete` finds where the first
/// statement ends (it knows about quotes, comments and trigger bodies).
fn has_several_statements(sql: &str) -> bool {
    let b = sql.as_bytes();
    let Some(first) = b.iter().position(|&c| c == b';') else {
        return false;
    };
    if first_keyword(&sql[first + 1..]).is_none() {
        return false;
    }
    for (i, &c) in b.iter().enumerate().skip(first) {
        if c != b';' {
            continue;
        }
        let Ok(head) = std::ffi::CString::new(&b[..=i]) else {
            return false;
        };
        // SAFETY: `head` is a valid NUL-terminated string for the duration of the call.
        if unsafe { rusqlite::ffi::sqlite3_complete(head.as_ptr()) } != 0 {
            return first_keyword(&sql[i + 1..]).is_some();
        }
    }
    false
}

fn batch(
    conn: &Connection,
    sql: &str,
    limits: &SqlLimits,
    read_only: bool,
) -> Result<SqlOutput, SqlError> {
    use rusqlite::fallible_iterator::FallibleIterator;
    let mut stmts = rusqlite::Batch::new(conn, sql);
    let mut last = None;
    let mut changes = 0;
    while let Some(mut st) = stmts.next().map_err(|e| user_error(e, limits))? {
        let text = st.expanded_sql().unwrap_or_default();
        let keyword = first_keyword(&text).unwrap_or_default();
        if keyword == "VACUUM" {
            return Err(SqlError::Denied(
                "VACUUM must be a statement of its own".into(),
            ));
        }
        let out = step(conn, &mut st, &keyword, &Params::None, limits, read_only)?;
        changes += out.changes;
        last = Some(out);
    }
    let mut out = last.ok_or(SqlError::Empty)?;
    if out.kind == StatementKind::Changes {
        out.changes = changes;
    }
    Ok(out)
}

/// VACUUM writes a whole database: plain VACUUM is refused (it needs the file to itself, and the
/// writer always holds a transaction); VACUUM INTO a file literal inside the database's own
/// directory runs on a fresh read-only connection (outside the writer's transaction, so it
/// copies the last committed state), with the path made absolute so SQLite cannot resolve it
/// against another directory.
fn vacuum(conn: &Connection, sql: &str, read_only: bool) -> Result<SqlOutput, SqlError> {
    if read_only {
        return Err(SqlError::NotReadOnly);
    }
    let denied =
        || SqlError::Denied("VACUUM INTO may only write a file inside the data directory".into());
    let upper = sql.to_ascii_uppercase();
    let Some(at) = upper.find(" INTO ") else {
        return Err(SqlError::Denied(
            "VACUUM is not allowed (it needs the file to itself): VACUUM INTO a file under the data directory makes a compacted copy".into(),
        ));
    };
    let target = sql[at + 6..].trim().trim_end_matches(';').trim();
    let name = target
        .strip_prefix('\'')
        .and_then(|t| t.strip_suffix('\''))
        .filter(|t| !t.contains('\''))
        .ok_or_else(denied)?;
    let db_path = conn.path().filter(|p| !p.is_empty()).ok_or_else(denied)?;
    let dir = std::path::Path::new(db_path).parent().ok_or_else(denied)?;
    let dest = crate::sql::inside(dir, std::path::Path::new(name)).ok_or_else(denied)?;
    let src = Connection::open_with_flags(
        db_path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(internal)?;
    src.busy_timeout(std::time::Duration::from_secs(10))
        .map_err(internal)?;
    src.execute("VACUUM INTO ?1", [dest.to_string_lossy()])
        .map_err(|e| user_error(e, &SqlLimits::default()))?;
    Ok(SqlOutput {
        kind: StatementKind::Ddl,
        columns: Vec::new(),
        rows: Vec::new(),
        changes: 0,
    })
}

/// `path` (relative paths are taken relative to `dir`) if it stays inside `dir`, normalised.
/// Symbolic links in existing parent directories are resolved before the check.
pub fn inside(dir: &std::path::Path, path: &std::path::Path) -> Option<std::path::PathBuf> {
    use std::path::Component;
    let base = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    let mut out = std::path::PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    // Resolve symbolic links in the part that exists.
    let resolved = match (out.parent(), out.file_name()) {
        (Some(parent), Some(name)) => match std::fs::canonicalize(parent) {
            Ok(p) => p.join(name),
            Err(_) => out.clone(),
        },
        _ => out.clone(),
    };
    (resolved.starts_with(&base) && resolved != base).then_some(resolved)
}

/// SQL on one connection: the main database's writer or a reader, or a named database's.
/// Statements run in the sandbox; writes happen inside the caller's transaction.
pub struct SqlConn<'c> {
    conn: &'c Connection,
    /// The connection's state (the writer's pending rank counts, written before user SQL
    /// reads), lent by the [`Conn`] its owner keeps; `None` for a named database's.
    state: Option<&'c ConnState>,
    now: i64,
    writable: bool,
    /// The Redis keys its statements may see through the views.
    access: KeyAccess,
    /// Who owns the transaction, told when SQLite rolls it back under user SQL.
    owner: Option<&'c mut (dyn TxOwner + 'c)>,
}

/// Owns a write transaction that user SQL runs in.
pub(crate) trait TxOwner {
    /// SQLite rolled the transaction back (why): everything it held must fail.
    fn transaction_lost(&mut self, why: String);
}

impl TxOwner for Writer<'_> {
    fn transaction_lost(&mut self, why: String) {
        self.poison(Error::RolledBack(why));
    }
}

impl<'c> SqlConn<'c> {
    /// SQL on `conn` (a named database's connection, which has no [`Conn`] state).
    pub(crate) fn new(conn: &'c Connection, now: i64, writable: bool) -> Self {
        SqlConn {
            conn,
            state: None,
            now,
            writable,
            access: KeyAccess::all(),
            owner: None,
        }
    }

    /// SQL on the main database's `conn`, with its state.
    pub(crate) fn on(conn: &'c Conn<'c>, now: i64, writable: bool) -> Self {
        SqlConn {
            state: Some(conn.state()),
            ..SqlConn::new(conn, now, writable)
        }
    }

    /// The connection as the engine uses it, with its state.
    fn lent(&self) -> Conn<'c> {
        Conn::lent(self.conn, self.state)
    }

    /// Tells the transaction's owner if SQLite rolled it back during the last statement.
    fn check_transaction(&mut self) {
        if let Some(why) = sandbox::take_transaction_lost() {
            match self.owner.as_mut() {
                Some(owner) => owner.transaction_lost(why),
                // A named database's writer checks for itself after the job.
                None => sandbox::mark_transaction_lost(why),
            }
        }
    }

    /// Whether this connection may write (a writer's, not a reader's).
    pub fn writable(&self) -> bool {
        self.writable
    }

    /// Limits what its statements see of the Redis keyspace to the keys `access` may read:
    /// the `redis_*` views leave out the others (for every statement run through this
    /// connection: SQL, prepared statements, SQL.DESC's count, triggers and views on top).
    pub fn set_access(&mut self, access: KeyAccess) {
        self.access = access;
    }

    /// Runs `sql` (one statement with `params`, or several without) and returns its result.
    /// On a read connection only read-only statements run.
    ///
    /// # Errors
    /// The statement's [`SqlError`]; nothing it did is kept if the caller's savepoint rolls
    /// back (commands and [`Db::sql_exec`] always roll back on error).
    pub fn exec(
        &mut self,
        sql: &str,
        params: impl Into<Params>,
        limits: &SqlLimits,
    ) -> Result<SqlOutput, SqlError> {
        let _keys = self.access.scope();
        let out = execute(
            &self.lent(),
            self.now,
            sql,
            &params.into(),
            limits,
            !self.writable,
        );
        self.check_transaction();
        out
    }

    /// Runs `sql` only if it does not write ([`SqlError::NotReadOnly`] otherwise).
    ///
    /// # Errors
    /// The statement's [`SqlError`].
    pub fn query(
        &self,
        sql: &str,
        params: impl Into<Params>,
        limits: &SqlLimits,
    ) -> Result<SqlOutput, SqlError> {
        let _keys = self.access.scope();
        execute(&self.lent(), self.now, sql, &params.into(), limits, true)
    }

    fn require_writable(&self) -> Result<(), SqlError> {
        if self.writable {
            Ok(())
        } else {
            Err(SqlError::NotReadOnly)
        }
    }

    /// Compiles `sql` (one statement) in the sandbox and stores it under `name`, in this
    /// database, so it survives restarts.
    ///
    /// # Errors
    /// The statement does not compile or is refused, `mode` says no, or storage fails.
    pub fn prepare(
        &mut self,
        name: &str,
        sql: &str,
        mode: PrepareMode,
    ) -> Result<StatementInfo, SqlError> {
        self.require_writable()?;
        first_keyword(sql).ok_or(SqlError::Empty)?;
        let (params, readonly) = {
            let limits = SqlLimits {
                time_limit: None,
                ..SqlLimits::default()
            };
            let _sandbox = Sandbox::enter(self.conn, self.now, &limits);
            let st = self.conn.prepare(sql).map_err(|e| user_error(e, &limits))?;
            (st.parameter_count(), st.readonly())
        };
        let exists = self.statement(name)?.is_some();
        match mode {
            PrepareMode::Create if exists => return Err(SqlError::StatementExists(name.into())),
            PrepareMode::Update if !exists => return Err(SqlError::NoSuchStatement(name.into())),
            _ => {}
        }
        crate::backend::sqlite::stmt::cached(
            self.conn,
            "INSERT OR REPLACE INTO main.relis_statements (name, sql, params, readonly)
                 VALUES (?1, ?2, ?3, ?4)",
        )
        .and_then(|mut s| s.execute((name, sql, params as i64, readonly)))
        .map_err(internal)?;
        Ok(StatementInfo {
            name: name.into(),
            sql: sql.into(),
            params,
            readonly,
        })
    }

    /// Forgets the prepared statement `name`; whether it existed.
    ///
    /// # Errors
    /// Storage errors.
    pub fn unprepare(&mut self, name: &str) -> Result<bool, SqlError> {
        self.require_writable()?;
        let n = crate::backend::sqlite::stmt::cached(
            self.conn,
            "DELETE FROM main.relis_statements WHERE name = ?1",
        )
        .and_then(|mut s| s.execute([name]))
        .map_err(internal)?;
        Ok(n > 0)
    }

    /// The prepared statement `name`.
    ///
    /// # Errors
    /// Storage errors.
    pub fn statement(&self, name: &str) -> Result<Option<StatementInfo>, SqlError> {
        crate::backend::sqlite::stmt::cached(
            self.conn,
            "SELECT name, sql, params, readonly FROM main.relis_statements WHERE name = ?1",
        )
        .and_then(|mut s| s.query_row([name], statement_row).optional())
        .map_err(internal)
    }

    /// Every prepared statement, by name.
    ///
    /// # Errors
    /// Storage errors.
    pub fn statements(&self) -> Result<Vec<StatementInfo>, SqlError> {
        let mut st = crate::backend::sqlite::stmt::cached(
            self.conn,
            "SELECT name, sql, params, readonly FROM main.relis_statements ORDER BY name",
        )
        .map_err(internal)?;
        let rows = st.query_map([], statement_row).map_err(internal)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(internal)
    }

    /// Runs the prepared statement `name` with `params`.
    ///
    /// # Errors
    /// No such statement, or the statement's [`SqlError`].
    pub fn run(
        &mut self,
        name: &str,
        params: impl Into<Params>,
        limits: &SqlLimits,
    ) -> Result<SqlOutput, SqlError> {
        let info = self
            .statement(name)?
            .ok_or_else(|| SqlError::NoSuchStatement(name.into()))?;
        if !self.writable && !info.readonly {
            return Err(SqlError::NotReadOnly);
        }
        let _keys = self.access.scope();
        let out = execute(
            &self.lent(),
            self.now,
            &info.sql,
            &params.into(),
            limits,
            !self.writable,
        );
        self.check_transaction();
        out
    }

    /// Runs the prepared statement `name` only if it does not write.
    ///
    /// # Errors
    /// No such statement, [`SqlError::NotReadOnly`], or the statement's [`SqlError`].
    pub fn run_query(
        &self,
        name: &str,
        params: impl Into<Params>,
        limits: &SqlLimits,
    ) -> Result<SqlOutput, SqlError> {
        let info = self
            .statement(name)?
            .ok_or_else(|| SqlError::NoSuchStatement(name.into()))?;
        if !info.readonly {
            return Err(SqlError::NotReadOnly);
        }
        let _keys = self.access.scope();
        execute(
            &self.lent(),
            self.now,
            &info.sql,
            &params.into(),
            limits,
            true,
        )
    }

    /// Describes the table (or view) `table`: its columns, its row count, and the bytes used by
    /// it and by each of its indexes (from SQLite's `dbstat`).
    ///
    /// # Errors
    /// [`SqlError::NoSuchTable`] (the engine's own tables are not described), or storage errors.
    pub fn describe(&self, table: &str, limits: &SqlLimits) -> Result<TableInfo, SqlError> {
        if sandbox::is_internal(table) {
            return Err(SqlError::NoSuchTable(table.into()));
        }
        let kind: Option<String> = crate::backend::sqlite::stmt::cached(
            self.conn,
            "SELECT type FROM main.sqlite_schema WHERE name = ?1 COLLATE NOCASE
                   AND type IN ('table', 'view')",
        )
        .and_then(|mut s| s.query_row([table], |r| r.get(0)).optional())
        .map_err(internal)?;
        if kind.is_none() {
            return Err(SqlError::NoSuchTable(table.into()));
        }
        let columns = {
            let mut st = crate::backend::sqlite::stmt::cached(
                self.conn,
                "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?1, 'main')",
            )
            .map_err(internal)?;
            let rows = st
                .query_map([table], |r| {
                    Ok(ColumnInfo {
                        name: r.get(0)?,
                        decl_type: r.get(1)?,
                        not_null: r.get::<_, i64>(2)? != 0,
                        default: r.get(3)?,
                        pk: r.get(4)?,
                    })
                })
                .map_err(internal)?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(internal)?
        };
        // Counting may be long on a big table: it runs under the time limit.
        let rows = {
            let sql = format!("SELECT count(*) FROM \"{}\"", table.replace('"', "\"\""));
            let _keys = self.access.scope();
            let _sandbox = Sandbox::enter(self.conn, self.now, limits);
            self.conn
                .query_row(&sql, [], |r| r.get::<_, i64>(0))
                .map_err(|e| user_error(e, limits))?
        };
        let bytes_of = |name: &str| -> Result<i64, SqlError> {
            crate::backend::sqlite::stmt::cached(
                self.conn,
                "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name = ?1 AND aggregate = 1",
            )
            .and_then(|mut s| s.query_row([name], |r| r.get(0)))
            .map_err(internal)
        };
        let bytes = bytes_of(table)?;
        let index_names: Vec<String> = {
            let mut st = crate::backend::sqlite::stmt::cached(
                self.conn,
                "SELECT name FROM pragma_index_list(?1, 'main') ORDER BY seq DESC",
            )
            .map_err(internal)?;
            let rows = st.query_map([table], |r| r.get(0)).map_err(internal)?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(internal)?
        };
        let mut indexes = Vec::with_capacity(index_names.len());
        for name in index_names {
            let b = bytes_of(&name)?;
            indexes.push((name, b));
        }
        Ok(TableInfo {
            columns,
            rows,
            bytes,
            indexes,
        })
    }

    /// Runs `f` inside a savepoint: an error rolls back what it wrote.
    ///
    /// # Errors
    /// `f`'s error, or a storage error from the savepoint.
    pub fn atomic<T>(
        &mut self,
        f: impl FnOnce(&mut SqlConn<'c>) -> Result<T, SqlError>,
    ) -> Result<T, SqlError> {
        crate::types::flush_pending(&self.lent())?;
        self.exec_internal("SAVEPOINT sql")?;
        match f(self) {
            Ok(v) => {
                self.exec_internal("RELEASE sql")?;
                Ok(v)
            }
            Err(e) => {
                let _ = self.exec_internal("ROLLBACK TO sql");
                crate::types::zset::discard_pending(&self.lent());
                let _ = self.exec_internal("RELEASE sql");
                Err(e)
            }
        }
    }

    fn exec_internal(&self, sql: &'static str) -> Result<(), SqlError> {
        crate::backend::sqlite::stmt::cached(self.conn, sql)
            .and_then(|mut s| s.execute([]))
            .map(|_| ())
            .map_err(internal)
    }
}

fn statement_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<StatementInfo> {
    Ok(StatementInfo {
        name: r.get(0)?,
        sql: r.get(1)?,
        params: r.get::<_, i64>(2)? as usize,
        readonly: r.get::<_, i64>(3)? != 0,
    })
}

impl<'c> Reader<'c> {
    /// SQL on this read snapshot (read-only statements only).
    pub fn sql(&self) -> SqlConn<'c> {
        SqlConn::on(self.conn, self.now, false)
    }

    /// Runs a read-only statement on this snapshot (a statement that would write is refused
    /// with [`SqlError::NotReadOnly`]).
    ///
    /// # Errors
    /// The statement's [`SqlError`].
    pub fn sql_query(
        &self,
        sql: &str,
        params: impl Into<Params>,
        limits: &SqlLimits,
    ) -> Result<SqlOutput, SqlError> {
        self.sql().query(sql, params, limits)
    }

    /// The named SQL databases recorded in this (main) database: name and file (`None` = in
    /// memory).
    ///
    /// # Errors
    /// Storage errors.
    pub fn sql_databases(&self) -> Result<Vec<(String, Option<String>)>, Error> {
        let mut st = crate::backend::sqlite::stmt::prepare(
            self.conn,
            "SELECT name, path FROM main.relis_sql_databases ORDER BY name",
        )?;
        let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }
}

impl<'c> Writer<'c> {
    /// SQL inside this write transaction.
    pub fn sql(&mut self) -> SqlConn<'_> {
        let (conn, now) = (self.conn, self.now);
        SqlConn {
            conn,
            state: Some(conn.state()),
            now,
            writable: true,
            access: KeyAccess::all(),
            owner: Some(self),
        }
    }

    /// Runs user SQL inside this write transaction (the caller's savepoint, see
    /// [`Writer::atomic`], rolls it back on error).
    ///
    /// # Errors
    /// The statement's [`SqlError`].
    pub fn sql_exec(
        &mut self,
        sql: &str,
        params: impl Into<Params>,
        limits: &SqlLimits,
    ) -> Result<SqlOutput, SqlError> {
        self.sql().exec(sql, params, limits)
    }

    /// Records a named SQL database (its file, `None` for memory) so the server reopens it.
    ///
    /// # Errors
    /// Storage errors.
    pub fn sql_database_record(&mut self, name: &str, path: Option<&str>) -> Result<(), Error> {
        crate::backend::sqlite::stmt::prepare(
            self.conn,
            "INSERT OR REPLACE INTO main.relis_sql_databases (name, path) VALUES (?1, ?2)",
        )?
        .execute((name, path))?;
        Ok(())
    }

    /// Forgets a named SQL database; whether it was recorded.
    ///
    /// # Errors
    /// Storage errors.
    pub fn sql_database_forget(&mut self, name: &str) -> Result<bool, Error> {
        Ok(crate::backend::sqlite::stmt::prepare(
            self.conn,
            "DELETE FROM main.relis_sql_databases WHERE name = ?1",
        )?
        .execute([name])?
            > 0)
    }
}

impl Db {
    fn sql_write<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut SqlConn<'_>) -> Result<R, SqlError> + Send + 'static,
    ) -> Result<R, SqlError> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.write_async(
            move |w| w.atomic(|w| f(&mut w.sql())),
            move |r| {
                let _ = tx.send(r);
            },
        );
        match rx.recv() {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => Err(SqlError::Engine(e)),
            Err(_) => Err(SqlError::Engine(Error::Closed)),
        }
    }

    fn sql_write_with<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Writer<'_>) -> Result<R, SqlError> + Send + 'static,
    ) -> Result<R, SqlError> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.write_async(
            move |w| w.atomic(f),
            move |r| {
                let _ = tx.send(r);
            },
        );
        match rx.recv() {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => Err(SqlError::Engine(e)),
            Err(_) => Err(SqlError::Engine(Error::Closed)),
        }
    }

    fn sql_read<R: Send + 'static>(
        &self,
        f: impl FnOnce(&SqlConn<'_>) -> Result<R, SqlError> + Send + 'static,
    ) -> Result<R, SqlError> {
        let (tx, rx) = crossbeam_channel::bounded(1);
        self.read_async(
            move |r| f(&r.sql()),
            move |r| {
                let _ = tx.send(r);
            },
        );
        match rx.recv() {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => Err(SqlError::Engine(e)),
            Err(_) => Err(SqlError::Engine(Error::Closed)),
        }
    }

    /// Runs SQL on the writer, in its own transaction, with the default limits (see
    /// [`SqlLimits`]): one statement with parameters, or several `;`-separated ones without.
    /// Tables live in the same file as the Redis keyspace; the `redis_*` views show its data.
    ///
    /// ```
    /// let db = relis::Db::open_in_memory()?;
    /// db.set("greeting", "hello")?;
    /// let out = db.sql_exec("SELECT key, value FROM redis_strings", ())?;
    /// assert_eq!(out.rows, vec![vec![relis::SqlValue::text("greeting"), relis::SqlValue::text("hello")]]);
    /// # Ok::<(), relis::SqlError>(())
    /// ```
    ///
    /// # Errors
    /// The statement's [`SqlError`]; nothing it wrote is kept.
    pub fn sql_exec(&self, sql: &str, params: impl Into<Params>) -> Result<SqlOutput, SqlError> {
        let (sql, params) = (sql.to_string(), params.into());
        self.sql_write(move |c| c.exec(&sql, params, &SqlLimits::default()))
    }

    /// Runs a read-only statement on a reader (in parallel with writes).
    ///
    /// ```
    /// let db = relis::Db::open_in_memory()?;
    /// let out = db.sql_query("SELECT 1 + ?", [41])?;
    /// assert_eq!(out.rows, vec![vec![relis::SqlValue::Integer(42)]]);
    /// assert!(db.sql_query("CREATE TABLE t (x)", ()).is_err());
    /// # Ok::<(), relis::SqlError>(())
    /// ```
    ///
    /// # Errors
    /// [`SqlError::NotReadOnly`] for a statement that would write, or the statement's error.
    pub fn sql_query(&self, sql: &str, params: impl Into<Params>) -> Result<SqlOutput, SqlError> {
        let (sql, params) = (sql.to_string(), params.into());
        self.sql_read(move |c| c.query(&sql, params, &SqlLimits::default()))
    }

    /// Compiles `sql` and stores it as the prepared statement `name` (replacing one of the same
    /// name); it persists in the database.
    ///
    /// ```
    /// let db = relis::Db::open_in_memory()?;
    /// db.sql_exec("CREATE TABLE p (a INTEGER, b INTEGER, c INTEGER)", ())?;
    /// let info = db.sql_prepare("add", "INSERT INTO p VALUES (?1, ?2, ?3)")?;
    /// assert_eq!((info.params, info.readonly), (3, false));
    /// assert_eq!(db.sql_run("add", [1, 2, 3])?.changes, 1);
    /// # Ok::<(), relis::SqlError>(())
    /// ```
    ///
    /// # Errors
    /// The statement does not compile or is refused by the sandbox.
    pub fn sql_prepare(&self, name: &str, sql: &str) -> Result<StatementInfo, SqlError> {
        let (name, sql) = (name.to_string(), sql.to_string());
        self.sql_write(move |c| c.prepare(&name, &sql, PrepareMode::Upsert))
    }

    /// Runs the prepared statement `name` on the writer.
    ///
    /// # Errors
    /// No such statement, or the statement's [`SqlError`].
    pub fn sql_run(&self, name: &str, params: impl Into<Params>) -> Result<SqlOutput, SqlError> {
        let (name, params) = (name.to_string(), params.into());
        self.sql_write(move |c| c.run(&name, params, &SqlLimits::default()))
    }

    /// Forgets the prepared statement `name`; whether it existed.
    ///
    /// # Errors
    /// Storage errors.
    pub fn sql_unprepare(&self, name: &str) -> Result<bool, SqlError> {
        let name = name.to_string();
        self.sql_write(move |c| c.unprepare(&name))
    }

    /// Every prepared statement.
    ///
    /// # Errors
    /// Storage errors.
    pub fn sql_statements(&self) -> Result<Vec<StatementInfo>, SqlError> {
        self.sql_read(|c| c.statements())
    }

    /// Describes a table: columns, rows, bytes of the table and of each index.
    ///
    /// # Errors
    /// [`SqlError::NoSuchTable`], or storage errors.
    pub fn sql_describe(&self, table: &str) -> Result<TableInfo, SqlError> {
        let table = table.to_string();
        self.sql_read(move |c| c.describe(&table, &SqlLimits::default()))
    }
}

#[cfg(test)]
mod tests;
