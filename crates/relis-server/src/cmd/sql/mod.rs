//! The SQL family: SQL over the same server, on the main database (the file that holds the Redis
//! keyspace, so user tables can be joined with the `redis_*` views of Redis data) or on a named
//! SQL database (`DB name`, created with SQL.DB CREATE: its own file and writer thread).
//!
//! Every command here is one operation ([`Op`]) run on a [`relis::SqlConn`]: on the main
//! database it is a write command (on the writer, inside the group commit, all or nothing by
//! itself, so inside MULTI it joins the transaction) or a read command (on the reader pool); on a named
//! database it is a connection command that hands the operation to that database's threads.
//!
//! Replies (the `SQL.*` shapes; the `REDISQL.*` aliases have RediSQL's, see `redisql.rs`):
//! - a statement that returns rows: an array of rows, each an array of values; with the `HEADER`
//!   option, a first row of column names;
//! - a statement that changes rows: the number of rows changed (integer);
//! - a schema statement (CREATE, DROP, ALTER, ...): `+OK`.
//!
//! Values: INTEGER -> integer, REAL -> double (RESP3) or bulk string (RESP2, `%.17g`), TEXT and
//! BLOB -> bulk string, NULL -> nil. Parameters bind as TEXT when valid UTF-8, else as BLOB;
//! SQLite's column affinity applies from there (`'42'` into an INTEGER column stores 42).
//!
//! ACL key patterns: the SQL commands name no keys, so the dispatcher checks only the command;
//! the keys are found as the command runs. Each command passes its user's [`KeyAccess`] (see
//! [`crate::acl::User::key_access`]) to the engine: the `redis_*` views show only the keys the
//! user may read, the morph commands refuse a key it may not write (`-NOPERM`, nothing
//! written, an ACL LOG entry), SQL.FROMHASH leaves out hashes it may not read. The user is the
//! connection's, or the script's for `redis.call`; a prepared statement runs with the user
//! that runs it.

pub mod db;
pub mod desc;
pub mod exec;
pub mod fromhash;
pub mod fromstream;
pub mod morph;
pub mod prepare;
pub mod query;
pub mod redisql;
pub mod run;
pub mod statements;
pub mod unprepare;

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Cx, Parsed, ReadCmd, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::{PrepareMode, SqlConn, SqlError, SqlLimits, SqlOutput, SqlValue, StatementKind};
use resp::Frame;

/// The SQL commands.
pub static SPECS: &[Spec] = &[
    exec::SPEC,
    query::SPEC,
    prepare::SPEC,
    run::SPEC,
    unprepare::SPEC,
    statements::SPEC,
    db::SPEC,
    desc::SPEC,
    morph::SPEC_TOHASH,
    morph::SPEC_TOSTRING,
    morph::SPEC_TOLIST,
    morph::SPEC_TOSET,
    morph::SPEC_TOZSET,
    morph::SPEC_TOSTREAM,
    fromhash::SPEC,
    fromstream::SPEC,
    redisql::SPEC_CREATE_DB,
    redisql::SPEC_CREATE_DB_NOW,
    redisql::SPEC_EXEC,
    redisql::SPEC_EXEC_NOW,
    redisql::SPEC_QUERY,
    redisql::SPEC_QUERY_NOW,
    redisql::SPEC_CREATE_STATEMENT,
    redisql::SPEC_CREATE_STATEMENT_NOW,
    redisql::SPEC_EXEC_STATEMENT,
    redisql::SPEC_EXEC_STATEMENT_NOW,
    redisql::SPEC_QUERY_STATEMENT,
    redisql::SPEC_QUERY_STATEMENT_NOW,
    redisql::SPEC_UPDATE_STATEMENT,
    redisql::SPEC_UPDATE_STATEMENT_NOW,
    redisql::SPEC_DELETE_STATEMENT,
    redisql::SPEC_DELETE_STATEMENT_NOW,
    redisql::SPEC_COPY,
    redisql::SPEC_COPY_NOW,
    redisql::SPEC_STATISTICS,
    redisql::SPEC_VERSION,
];

impl From<SqlError> for CmdError {
    fn from(e: SqlError) -> Self {
        match e {
            SqlError::Engine(e) => CmdError::from(e),
            SqlError::Deferred => CmdError::Deferred,
            SqlError::KeyDenied(_) => CmdError::NOPERM_KEYS,
            other => CmdError::err(other.to_string()),
        }
    }
}

/// The reply to a SQL error; a key a morph command may not write is also recorded in ACL LOG,
/// as Redis records a refused key argument (reason `key`, the key as object).
pub fn refused(cx: &Cx, e: SqlError) -> CmdError {
    if let SqlError::KeyDenied(key) = &e {
        let object = String::from_utf8_lossy(key).into_owned();
        let server = &cx.server;
        let info = server.clients.lock().get(&cx.client_id).cloned();
        match info {
            Some(info) => {
                crate::dispatch::acl_log(server, &info, "key", cx.context, object, &cx.user.name)
            }
            None => server.acl.log(crate::acl::LogEntry {
                count: 1,
                reason: "key",
                context: cx.context,
                object,
                username: cx.user.name.clone(),
                ctime_ms: crate::state::unix_ms(),
                client_info: String::new(),
            }),
        }
    }
    CmdError::from(e)
}

/// Which database a command acts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// The main database (the Redis keyspace's file).
    Main,
    /// A named SQL database.
    Named(String),
}

/// An argument that must be UTF-8 text (SQL, names).
pub fn text(b: Bytes, what: &str) -> Result<String, CmdError> {
    String::from_utf8(b.to_vec()).map_err(|_| CmdError::sql_utf8(what))
}

/// Options before a command's own arguments: `DB name` and (when `header` is allowed)
/// `HEADER`, in any order. An option word is only taken as one while `min_after` arguments
/// remain after it, so `SQL.EXEC HEADER` runs the SQL text "HEADER" (and fails as SQL).
pub fn parse_options(
    args: &mut Args,
    min_after: usize,
    header_allowed: bool,
) -> Result<(Target, bool), CmdError> {
    let mut target = Target::Main;
    let mut header = false;
    while let Some(word) = args.peek() {
        if word.eq_ignore_ascii_case(b"db")
            && target == Target::Main
            && args.remaining() >= min_after + 2
        {
            args.next()?;
            target = Target::Named(text(args.next()?, "a database name")?);
        } else if header_allowed
            && !header
            && word.eq_ignore_ascii_case(b"header")
            && args.remaining() > min_after
        {
            args.next()?;
            header = true;
        } else {
            break;
        }
    }
    Ok((target, header))
}

/// SQL.FROMHASH / SQL.FROMSTREAM into a named database: `read` runs on a snapshot of the
/// keyspace, then `write` puts what it read into the named database `db` in one transaction,
/// as the user (`access`); replies the number of rows written.
pub async fn copy_into_named<T: Send + 'static>(
    c: &mut Client,
    db: &str,
    access: relis::sql::KeyAccess,
    read: impl FnOnce(&relis::Reader<'_>) -> Result<T, CmdError> + Send + 'static,
    write: impl FnOnce(&mut SqlConn<'_>, T) -> Result<relis::FromHashReport, SqlError> + Send + 'static,
) -> Result<Frame, CmdError> {
    let named = c.server.sql.get(db)?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    c.server.db.read_async(
        move |r| read(r),
        move |r| {
            let _ = tx.send(r);
        },
    );
    let found = rx
        .await
        .map_err(|_| CmdError::from(relis::Error::Closed))?
        .map_err(CmdError::from)??;
    let (tx, rx) = tokio::sync::oneshot::channel();
    named.write_async(
        move |conn| {
            conn.set_access(access);
            write(conn, found)
        },
        move |r| {
            let _ = tx.send(r);
        },
    );
    let report = rx
        .await
        .map_err(|_| CmdError::from(relis::Error::Closed))??;
    Ok(Frame::Integer(report.rows as i64))
}

/// SQL.FROMHASH / SQL.FROMSTREAM over the PostgreSQL backend: `found` (read from the keyspace)
/// written into PostgreSQL by `write` on a sandboxed session; replies the rows written.
pub async fn copy_into_postgres<T: Send + 'static>(
    c: &mut Client,
    cmd: &'static str,
    found: T,
    write: impl FnOnce(
            &mut relis::postgres::PgSqlSession,
            T,
            &SqlLimits,
        ) -> Result<relis::FromHashReport, SqlError>
        + Send
        + 'static,
) -> Result<Frame, CmdError> {
    let pg = postgres_sql(c, cmd)?;
    let limits = c.server.config.read().sql_limits();
    let report = tokio::task::spawn_blocking(move || write(&mut pg.session()?, found, &limits))
        .await
        .map_err(|_| CmdError::from(relis::Error::Closed))??;
    Ok(Frame::Integer(report.rows as i64))
}

/// Parameters from the network: TEXT when valid UTF-8, else BLOB.
pub fn params(args: Vec<Bytes>) -> Vec<SqlValue> {
    args.into_iter().map(SqlValue::from_bytes).collect()
}

/// How a result is replied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// The `SQL.*` shapes (see the module docs), with or without a header row.
    Sql {
        /// A first row of column names.
        header: bool,
    },
    /// RediSQL v1: rows, `["DONE", n]` for changes (and for no rows), `DONE` for schema
    /// statements, `OK` for statement management.
    V1,
    /// RediSQL v2: tagged arrays `[["RESULT"], [names], [types], rows...]`, `[["DONE"], [n]]`,
    /// `[["OK"]]`.
    V2 {
        /// The names and types rows (v2's default; `NO_HEADER` turns them off).
        header: bool,
    },
}

/// One SQL operation, on whichever database the command names.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// Run SQL (writes allowed).
    Exec {
        /// The SQL text.
        sql: String,
        /// Its parameters.
        params: Vec<SqlValue>,
    },
    /// Run SQL that only reads.
    Query {
        /// The SQL text.
        sql: String,
        /// Its parameters.
        params: Vec<SqlValue>,
    },
    /// Store a prepared statement.
    Prepare {
        /// Its name.
        name: String,
        /// Its SQL.
        sql: String,
        /// Create, replace, or either.
        mode: PrepareMode,
    },
    /// Run a prepared statement.
    Run {
        /// Its name.
        name: String,
        /// Its parameters.
        params: Vec<SqlValue>,
        /// Refuse a statement that writes (and run on a reader).
        read_only: bool,
    },
    /// Forget a prepared statement.
    Unprepare {
        /// Its name.
        name: String,
    },
    /// List the prepared statements.
    Statements,
    /// Describe a table.
    Describe {
        /// The table.
        table: String,
    },
}

impl Op {
    /// Whether the operation may write (so it runs on the writer).
    pub fn writes(&self) -> bool {
        match self {
            Op::Exec { .. } | Op::Prepare { .. } | Op::Unprepare { .. } => true,
            Op::Run { read_only, .. } => !read_only,
            Op::Query { .. } | Op::Statements | Op::Describe { .. } => false,
        }
    }

    /// Runs the operation and shapes its reply.
    ///
    /// # Errors
    /// The operation's error.
    pub fn apply(
        &self,
        c: &mut impl Runner,
        limits: &SqlLimits,
        shape: Shape,
    ) -> Result<Frame, CmdError> {
        match self {
            Op::Exec { sql, params } => {
                let out = c.exec(sql, params.clone(), limits)?;
                Ok(output(out, shape))
            }
            Op::Query { sql, params } => {
                let out = c.query(sql, params.clone(), limits)?;
                Ok(output(out, shape))
            }
            Op::Prepare { name, sql, mode } => {
                c.prepare(name, sql, *mode)?;
                Ok(ok(shape))
            }
            Op::Run {
                name,
                params,
                read_only,
            } => {
                let out = if *read_only {
                    c.run_query(name, params.clone(), limits)?
                } else {
                    c.run(name, params.clone(), limits)?
                };
                Ok(output(out, shape))
            }
            Op::Unprepare { name } => {
                let existed = c.unprepare(name)?;
                match shape {
                    Shape::Sql { .. } => Ok(Frame::Integer(existed as i64)),
                    _ if !existed => Err(SqlError::NoSuchStatement(name.clone()).into()),
                    _ => Ok(ok(shape)),
                }
            }
            Op::Statements => {
                let list = c.statements()?;
                Ok(Frame::Array(
                    list.into_iter()
                        .map(|s| {
                            Frame::Array(vec![
                                Frame::Bulk(Bytes::from(s.name)),
                                Frame::Bulk(Bytes::from(s.sql)),
                                Frame::Integer(s.params as i64),
                                Frame::Integer(s.readonly as i64),
                            ])
                        })
                        .collect(),
                ))
            }
            Op::Describe { table } => Ok(desc::reply(c.describe(table, limits)?)),
        }
    }
}

/// Where an [`Op`] runs: SQLite (the main file's connection or a named database's) or, over the
/// PostgreSQL backend, a sandboxed PostgreSQL session (`relis::postgres::PgSqlSession`).
pub trait Runner {
    /// Runs SQL that may write.
    fn exec(
        &mut self,
        sql: &str,
        params: Vec<SqlValue>,
        limits: &SqlLimits,
    ) -> Result<SqlOutput, SqlError>;
    /// Runs SQL that only reads.
    fn query(
        &mut self,
        sql: &str,
        params: Vec<SqlValue>,
        limits: &SqlLimits,
    ) -> Result<SqlOutput, SqlError>;
    /// Stores a prepared statement.
    fn prepare(&mut self, name: &str, sql: &str, mode: PrepareMode) -> Result<(), SqlError>;
    /// Runs a prepared statement.
    fn run(
        &mut self,
        name: &str,
        params: Vec<SqlValue>,
        limits: &SqlLimits,
    ) -> Result<SqlOutput, SqlError>;
    /// Runs a prepared statement that must only read.
    fn run_query(
        &mut self,
        name: &str,
        params: Vec<SqlValue>,
        limits: &SqlLimits,
    ) -> Result<SqlOutput, SqlError>;
    /// Forgets a prepared statement: whether it existed.
    fn unprepare(&mut self, name: &str) -> Result<bool, SqlError>;
    /// The prepared statements.
    fn statements(&mut self) -> Result<Vec<relis::StatementInfo>, SqlError>;
    /// A table's description.
    fn describe(&mut self, table: &str, limits: &SqlLimits) -> Result<relis::TableInfo, SqlError>;
}

impl Runner for SqlConn<'_> {
    fn exec(
        &mut self,
        sql: &str,
        params: Vec<SqlValue>,
        limits: &SqlLimits,
    ) -> Result<SqlOutput, SqlError> {
        SqlConn::exec(self, sql, params, limits)
    }
    fn query(
        &mut self,
        sql: &str,
        params: Vec<SqlValue>,
        limits: &SqlLimits,
    ) -> Result<SqlOutput, SqlError> {
        SqlConn::query(self, sql, params, limits)
    }
    fn prepare(&mut self, name: &str, sql: &str, mode: PrepareMode) -> Result<(), SqlError> {
        SqlConn::prepare(self, name, sql, mode).map(|_| ())
    }
    fn run(
        &mut self,
        name: &str,
        params: Vec<SqlValue>,
        limits: &SqlLimits,
    ) -> Result<SqlOutput, SqlError> {
        SqlConn::run(self, name, params, limits)
    }
    fn run_query(
        &mut self,
        name: &str,
        params: Vec<SqlValue>,
        limits: &SqlLimits,
    ) -> Result<SqlOutput, SqlError> {
        SqlConn::run_query(self, name, params, limits)
    }
    fn unprepare(&mut self, name: &str) -> Result<bool, SqlError> {
        SqlConn::unprepare(self, name)
    }
    fn statements(&mut self) -> Result<Vec<relis::StatementInfo>, SqlError> {
        SqlConn::statements(self)
    }
    fn describe(&mut self, table: &str, limits: &SqlLimits) -> Result<relis::TableInfo, SqlError> {
        SqlConn::describe(self, table, limits)
    }
}

impl Runner for relis::postgres::PgSqlSession {
    fn exec(
        &mut self,
        sql: &str,
        params: Vec<SqlValue>,
        limits: &SqlLimits,
    ) -> Result<SqlOutput, SqlError> {
        relis::postgres::PgSqlSession::exec(self, sql, params, limits)
    }
    fn query(
        &mut self,
        sql: &str,
        params: Vec<SqlValue>,
        limits: &SqlLimits,
    ) -> Result<SqlOutput, SqlError> {
        relis::postgres::PgSqlSession::query(self, sql, params, limits)
    }
    fn prepare(&mut self, name: &str, sql: &str, mode: PrepareMode) -> Result<(), SqlError> {
        relis::postgres::PgSqlSession::prepare(self, name, sql, mode)
    }
    fn run(
        &mut self,
        name: &str,
        params: Vec<SqlValue>,
        limits: &SqlLimits,
    ) -> Result<SqlOutput, SqlError> {
        relis::postgres::PgSqlSession::run(self, name, params, limits)
    }
    fn run_query(
        &mut self,
        name: &str,
        params: Vec<SqlValue>,
        limits: &SqlLimits,
    ) -> Result<SqlOutput, SqlError> {
        relis::postgres::PgSqlSession::run_query(self, name, params, limits)
    }
    fn unprepare(&mut self, name: &str) -> Result<bool, SqlError> {
        relis::postgres::PgSqlSession::unprepare(self, name)
    }
    fn statements(&mut self) -> Result<Vec<relis::StatementInfo>, SqlError> {
        relis::postgres::PgSqlSession::statements(self)
    }
    fn describe(&mut self, table: &str, limits: &SqlLimits) -> Result<relis::TableInfo, SqlError> {
        relis::postgres::PgSqlSession::describe(self, table, limits)
    }
}

/// A SQL value as a reply.
pub fn value(v: SqlValue) -> Frame {
    match v {
        SqlValue::Null => Frame::Null,
        SqlValue::Integer(i) => Frame::Integer(i),
        SqlValue::Real(f) => Frame::Double(f),
        SqlValue::Text(b) | SqlValue::Blob(b) => Frame::Bulk(b),
    }
}

fn bulk(s: &str) -> Frame {
    Frame::Bulk(Bytes::copy_from_slice(s.as_bytes()))
}

fn ok(shape: Shape) -> Frame {
    match shape {
        Shape::V2 { .. } => Frame::Array(vec![Frame::Array(vec![bulk("OK")])]),
        _ => Frame::ok(),
    }
}

fn rows(out: SqlOutput) -> Vec<Frame> {
    out.rows
        .into_iter()
        .map(|r| Frame::Array(r.into_iter().map(value).collect()))
        .collect()
}

fn names(columns: &[String]) -> Frame {
    Frame::Array(columns.iter().map(|c| bulk(c)).collect())
}

/// RediSQL's type names, as its v2 header reports them (from the first row).
fn type_name(v: &SqlValue) -> &'static str {
    match v {
        SqlValue::Integer(_) => "INT",
        SqlValue::Real(_) => "FLOAT",
        SqlValue::Text(_) => "TEXT",
        SqlValue::Blob(_) => "BLOB",
        SqlValue::Null => "NULL",
    }
}

/// The reply to a SQL result in `shape`.
pub fn output(out: SqlOutput, shape: Shape) -> Frame {
    let done_v1 = |n: u64| Frame::Array(vec![Frame::simple("DONE"), Frame::Integer(n as i64)]);
    let done_v2 = |n: u64| {
        Frame::Array(vec![
            Frame::Array(vec![bulk("DONE")]),
            Frame::Array(vec![Frame::Integer(n as i64)]),
        ])
    };
    match (shape, out.kind) {
        (Shape::Sql { header }, StatementKind::Rows) => {
            let mut v = Vec::with_capacity(out.rows.len() + 1);
            if header {
                v.push(names(&out.columns));
            }
            v.extend(rows(out));
            Frame::Array(v)
        }
        (Shape::Sql { .. }, StatementKind::Changes) => Frame::Integer(out.changes as i64),
        (Shape::Sql { .. }, StatementKind::Ddl) => Frame::ok(),
        // RediSQL answers a query without rows as a statement without rows.
        (Shape::V1, StatementKind::Rows) if out.rows.is_empty() => done_v1(0),
        (Shape::V1, StatementKind::Rows) => Frame::Array(rows(out)),
        (Shape::V1, StatementKind::Changes) => done_v1(out.changes),
        (Shape::V1, StatementKind::Ddl) => Frame::simple("DONE"),
        (Shape::V2 { .. }, StatementKind::Rows) if out.rows.is_empty() => done_v2(0),
        (Shape::V2 { header }, StatementKind::Rows) => {
            let mut v = vec![Frame::Array(vec![bulk("RESULT")])];
            if header {
                v.push(names(&out.columns));
                v.push(Frame::Array(
                    out.rows[0].iter().map(|x| bulk(type_name(x))).collect(),
                ));
            }
            v.extend(rows(out));
            Frame::Array(v)
        }
        (Shape::V2 { .. }, _) => done_v2(out.changes),
    }
}

/// An operation on the main database (a write or a read command, by what the operation does).
pub struct OnMain {
    /// The command's name (its user's key access depends on it).
    cmd: &'static str,
    op: Op,
    shape: Shape,
}

impl WriteCmd for OnMain {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        not_in_a_group(cx, self.cmd)?;
        let limits = cx.server.config.read().sql_limits();
        let mut c = w.sql();
        c.set_access(cx.key_access(self.cmd));
        self.op.apply(&mut c, &limits, self.shape)
    }

    /// Every operation is all or nothing by itself: one SQLite statement undoes itself when it
    /// fails, and the engine puts a savepoint around SQL that needs one (several statements,
    /// `OR FAIL`); preparing and unpreparing are one write each.
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }

    fn on_postgres(&self) -> Option<Box<dyn ConnCmd>> {
        Some(self.postgres_form())
    }
}

impl ReadCmd for OnMain {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        not_in_a_group(cx, self.cmd)?;
        let limits = cx.server.config.read().sql_limits();
        let mut c = r.sql();
        c.set_access(cx.key_access(self.cmd));
        self.op.apply(&mut c, &limits, self.shape)
    }

    /// A query is tried on the network thread: most are point lookups, cheaper than the hop
    /// to a reader. One that runs past the engine's step budget for inline reads stops there
    /// ([`CmdError::Deferred`]) and runs again on a reader.
    fn inline(&self) -> bool {
        true
    }

    fn on_postgres(&self) -> Option<Box<dyn ConnCmd>> {
        Some(self.postgres_form())
    }
}

/// Over PostgreSQL an operation on the main database runs on PostgreSQL, from the connection
/// ([`OnPostgres`], which the dispatcher puts in its place); one that reaches a group of the
/// engine anyway (a script's `redis.call`, a command queued in MULTI) is refused: it would run
/// on the group's scratch database.
pub(crate) fn not_in_a_group(cx: &Cx, cmd: &'static str) -> Result<(), CmdError> {
    if cx.server.db.backend() == "postgres" {
        return Err(CmdError::sql_pg_in_group(cmd));
    }
    Ok(())
}

impl OnMain {
    /// The same operation as a connection command, over the PostgreSQL backend.
    fn postgres_form(&self) -> Box<dyn ConnCmd> {
        Box::new(OnPostgres {
            cmd: self.cmd,
            op: self.op.clone(),
            shape: self.shape,
        })
    }
}

/// Where the SQL command `cmd` of `c` runs over the PostgreSQL backend: refused when the
/// backend is SQLite, and for a user who may not read every key (the views show them all).
pub fn postgres_sql(
    c: &mut Client,
    cmd: &'static str,
) -> Result<std::sync::Arc<relis::postgres::PgSql>, CmdError> {
    let Some(pg) = c.server.sql.postgres() else {
        return Err(CmdError::not_on_postgres(cmd));
    };
    if !c.cx().key_access(cmd).reads_all() {
        return Err(CmdError::SQL_PG_ALL_KEYS);
    }
    Ok(pg)
}

/// An operation on the main database over the PostgreSQL backend: run on a sandboxed
/// PostgreSQL session (`relis::postgres::PgSql`) in a blocking task, awaited on the
/// connection. The views show every key, so only a user who may read every key runs it.
pub struct OnPostgres {
    cmd: &'static str,
    op: Op,
    shape: Shape,
}

impl ConnCmd for OnPostgres {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let pg = postgres_sql(c, self.cmd)?;
            let limits = c.server.config.read().sql_limits();
            let OnPostgres { op, shape, .. } = *self;
            tokio::task::spawn_blocking(move || {
                let mut session = pg.session()?;
                op.apply(&mut session, &limits, shape)
            })
            .await
            .map_err(|_| CmdError::from(relis::Error::Closed))?
        })
    }
}

/// An operation on a named database: handed to its threads, awaited on the connection.
pub struct OnNamed {
    /// The command's name.
    cmd: &'static str,
    db: String,
    op: Op,
    shape: Shape,
}

impl ConnCmd for OnNamed {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            if c.server.sql.postgres().is_some() {
                return Err(CmdError::SQL_PG_NAMED);
            }
            let named = c.server.sql.get(&self.db)?;
            let limits = c.server.config.read().sql_limits();
            // A named database has no Redis data, unless it is a copy of a main database
            // file: its views then show what they would show on the main one.
            let access = c.cx().key_access(self.cmd);
            let (tx, rx) = tokio::sync::oneshot::channel();
            let OnNamed { op, shape, .. } = *self;
            let done = move |r: Result<Result<Frame, CmdError>, SqlError>| {
                let _ = tx.send(r.map_err(CmdError::from).and_then(|r| r));
            };
            if op.writes() {
                named.write_async(
                    move |conn| {
                        conn.set_access(access);
                        Ok(op.apply(conn, &limits, shape))
                    },
                    done,
                );
            } else {
                named.read_async(
                    move |conn| {
                        conn.set_access(access);
                        Ok(op.apply(conn, &limits, shape))
                    },
                    done,
                );
            }
            rx.await.map_err(|_| CmdError::from(relis::Error::Closed))?
        })
    }
}

/// Where the operation of the command `cmd` runs: the main database's writer or readers, or a
/// named database.
pub fn dispatch(
    cmd: &'static str,
    target: Target,
    op: Op,
    shape: Shape,
) -> Result<Parsed, CmdError> {
    match target {
        Target::Main if op.writes() => Parsed::write(OnMain { cmd, op, shape }),
        Target::Main => Parsed::read(OnMain { cmd, op, shape }),
        Target::Named(db) => Parsed::conn(OnNamed { cmd, db, op, shape }),
    }
}

#[cfg(test)]
pub(crate) fn args_of(name: &'static str, words: &[&str]) -> Args {
    Args::new(
        name,
        words
            .iter()
            .map(|s| Bytes::copy_from_slice(s.as_bytes()))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options() {
        let p = |w: &[&str], min| {
            let mut a = args_of("sql.exec", w);
            let o = parse_options(&mut a, min, true).unwrap();
            (o, a.remaining())
        };
        assert_eq!(p(&["select 1"], 1), ((Target::Main, false), 1));
        assert_eq!(
            p(&["DB", "x", "HEADER", "select 1", "p"], 1),
            ((Target::Named("x".into()), true), 2)
        );
        assert_eq!(
            p(&["header", "db", "x", "select 1"], 1),
            ((Target::Named("x".into()), true), 1)
        );
        // An option word with nothing after it is the SQL itself.
        assert_eq!(p(&["HEADER"], 1), ((Target::Main, false), 1));
        assert_eq!(p(&["DB", "x"], 1), ((Target::Main, false), 2));
        assert_eq!(p(&["DB", "x"], 0), ((Target::Named("x".into()), false), 0));
    }

    #[test]
    fn shapes() {
        let out = |kind, rows: Vec<Vec<SqlValue>>, changes| SqlOutput {
            kind,
            columns: vec!["a".into(), "b".into()],
            rows,
            changes,
        };
        let r = vec![vec![SqlValue::Integer(1), SqlValue::text("x")]];
        let row = Frame::Array(vec![Frame::Integer(1), bulk("x")]);
        assert_eq!(
            output(
                out(StatementKind::Rows, r.clone(), 0),
                Shape::Sql { header: true }
            ),
            Frame::Array(vec![Frame::Array(vec![bulk("a"), bulk("b")]), row.clone()])
        );
        assert_eq!(
            output(
                out(StatementKind::Changes, vec![], 3),
                Shape::Sql { header: false }
            ),
            Frame::Integer(3)
        );
        assert_eq!(
            output(
                out(StatementKind::Ddl, vec![], 0),
                Shape::Sql { header: false }
            ),
            Frame::ok()
        );
        assert_eq!(
            output(out(StatementKind::Changes, vec![], 2), Shape::V1),
            Frame::Array(vec![Frame::simple("DONE"), Frame::Integer(2)])
        );
        assert_eq!(
            output(out(StatementKind::Rows, vec![], 0), Shape::V1),
            Frame::Array(vec![Frame::simple("DONE"), Frame::Integer(0)])
        );
        assert_eq!(
            output(out(StatementKind::Ddl, vec![], 0), Shape::V1),
            Frame::simple("DONE")
        );
        assert_eq!(
            output(out(StatementKind::Rows, r, 0), Shape::V2 { header: true }),
            Frame::Array(vec![
                Frame::Array(vec![bulk("RESULT")]),
                Frame::Array(vec![bulk("a"), bulk("b")]),
                Frame::Array(vec![bulk("INT"), bulk("TEXT")]),
                row
            ])
        );
        assert_eq!(
            output(
                out(StatementKind::Changes, vec![], 1),
                Shape::V2 { header: false }
            ),
            Frame::Array(vec![
                Frame::Array(vec![bulk("DONE")]),
                Frame::Array(vec![Frame::Integer(1)])
            ])
        );
    }
}
