//! SQL.* over the PostgreSQL backend (issue 19; ARCHITECTURE.md 10.1): the user's SQL runs on
//! PostgreSQL itself, in PostgreSQL's dialect, next to the `redis_*` views of the key table
//! (`views.sql`, which decode the stored DUMP payloads).
//!
//! **The sandbox is a role.** At first use a node provisions, once for the database, a login
//! role of its own (`relis_sql_<random>`, a random password, both kept in `relis_sql_role`,
//! which only the backend's user reads) and a schema `relis_sql` that the role owns: user tables
//! are created there (the session's `search_path` is `relis_sql, public`). The role may read
//! the views and nothing else of Relis's (`relis_keys`, `relis_bus`, ... are not granted to it),
//! so no statement can change a key behind the engine's locks or read a row the views hide.
//! The user's SQL reaches PostgreSQL only through connections logged in as that role, never the
//! backend's own user (a `SET ROLE` sandbox could be left with `RESET ROLE`). Provisioning
//! needs `CREATEROLE` for the backend's user; without it SQL.* answers why.
//!
//! **One command, one transaction.** Each call takes a pooled session, opens a transaction
//! (`READ ONLY` for SQL.QUERY and read-only runs) with `statement_timeout` set to
//! `sql-time-limit` (a statement cannot lift its own: the timer is armed as it starts), runs one
//! statement with the extended protocol (parameters `$1`, `$2`, ... bound as text and parsed by
//! PostgreSQL for the type it infers, raw bytes for `bytea`), reads its rows under the row and
//! byte limits, commits (or rolls back on error), and ends with `DISCARD ALL` so nothing a
//! statement set (settings, prepared statements, advisory locks, LISTENs) outlives it. Several
//! statements in one text run only without parameters, with the simple protocol, and answer OK.
//!
//! Values come back as the SQLite backend's do: integers (`smallint`, `integer`, `bigint`,
//! `oid`, `boolean` as 0/1, a whole `numeric` that fits) as integers, floats and other
//! `numeric`s as doubles, text-like types and `json`/`jsonb`/`uuid` as text, `bytea` as a blob;
//! a row of other types (dates, arrays, ...) is read again with those columns cast to text.
//!
//! Prepared statements (SQL.PREPARE) live in `relis_sql_statements`, shared by every node.

use crate::sql::morph::{entry_rows, quote, Hashes, KeyedRows};
use crate::sql::{
    ColumnInfo, FromHashReport, PrepareMode, SqlError, SqlLimits, SqlOutput, SqlValue,
    StatementInfo, StatementKind, TableInfo,
};
use bytes::{Bytes, BytesMut};
use parking_lot::Mutex;
use postgres::error::SqlState;
use postgres::types::{FromSql, IsNull, ToSql, Type};
use postgres::{Client, Config, NoTls, Statement};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

/// The advisory lock under which the sandbox role is provisioned (nodes starting together).
const ROLE_LOCK: i64 = 0x7265_6c69_735f_726f; // "relis_ro"

/// The views the sandbox role may read.
const VIEWS: &[&str] = &[
    "redis_keys",
    "redis_strings",
    "redis_hashes",
    "redis_lists",
    "redis_sets",
    "redis_zsets",
    "redis_geo",
    "redis_streams",
];

/// Idle sessions kept per node.
const POOL: usize = 8;

/// SQL.* on one node: the backend's URL, a connection of the backend's user (prepared
/// statements, provisioning) and a pool of sandboxed sessions, all opened at first use.
pub struct PgSql {
    url: String,
    admin: Mutex<Option<Client>>,
    /// The sandbox role's (name, password), once provisioned.
    role: Mutex<Option<(String, String)>>,
    idle: Mutex<Vec<Client>>,
}

/// One sandboxed session, taken from the pool for one command (returned when dropped, unless
/// its connection broke).
pub struct PgSqlSession {
    sql: Arc<PgSql>,
    client: Option<Client>,
    /// Whether its connection was left as it was taken (no transaction, nothing set): only
    /// then does it go back to the pool.
    clean: bool,
}

impl PgSql {
    /// SQL.* over the PostgreSQL database at `url` (the backend's); nothing is opened yet.
    pub fn new(url: &str) -> Arc<PgSql> {
        Arc::new(PgSql {
            url: url.to_string(),
            admin: Mutex::new(None),
            role: Mutex::new(None),
            idle: Mutex::new(Vec::new()),
        })
    }

    /// A session for one command.
    ///
    /// # Errors
    /// PostgreSQL cannot be reached, or the sandbox role cannot be provisioned.
    pub fn session(self: &Arc<Self>) -> Result<PgSqlSession, SqlError> {
        let pooled = self.idle.lock().pop();
        let client = match pooled {
            Some(c) if !c.is_closed() => c,
            _ => self.connect_sandbox()?,
        };
        Ok(PgSqlSession {
            sql: self.clone(),
            client: Some(client),
            clean: true,
        })
    }

    fn with_admin<T>(
        &self,
        f: impl FnOnce(&mut Client) -> Result<T, postgres::Error>,
    ) -> Result<T, SqlError> {
        let mut admin = self.admin.lock();
        if admin.as_ref().is_none_or(|c| c.is_closed()) {
            let mut c = Client::connect(&self.url, NoTls).map_err(pg_error)?;
            super::read_committed(&mut c).map_err(pg_error)?;
            *admin = Some(c);
        }
        f(admin.as_mut().expect("connected")).map_err(pg_error)
    }

    fn connect_sandbox(&self) -> Result<Client, SqlError> {
        let (name, password) = self.role()?;
        let mut config: Config = self.url.parse().map_err(pg_error)?;
        config
            .user(&name)
            .password(&password)
            .options("-c search_path=relis_sql,public")
            .application_name("relis-sql");
        config.connect(NoTls).map_err(pg_error)
    }

    /// The sandbox role, provisioned if no node has yet; its grants are renewed at every
    /// provisioning check (a migration may have recreated the views).
    fn role(&self) -> Result<(String, String), SqlError> {
        if let Some(r) = self.role.lock().clone() {
            return Ok(r);
        }
        let role = self
            .with_admin(|c| {
                let mut tx = c.transaction()?;
                tx.execute("SELECT pg_advisory_xact_lock($1)", &[&ROLE_LOCK])?;
                let row = tx.query_opt("SELECT name, password FROM relis_sql_role", &[])?;
                let (name, password): (String, String) = match row {
                    Some(r) => (r.get(0), r.get(1)),
                    None => {
                        let r = tx.query_one(
                            "SELECT 'relis_sql_' || substr(md5(random()::text), 1, 12),
                                    md5(random()::text) || md5(random()::text)",
                            &[],
                        )?;
                        let (name, password): (String, String) = (r.get(0), r.get(1));
                        tx.batch_execute(&format!(
                            "CREATE ROLE {name} LOGIN PASSWORD '{password}' NOSUPERUSER \
                             NOCREATEDB NOCREATEROLE NOREPLICATION;
                             GRANT {name} TO CURRENT_USER;
                             CREATE SCHEMA IF NOT EXISTS relis_sql AUTHORIZATION {name};"
                        ))?;
                        tx.execute(
                            "INSERT INTO relis_sql_role (name, password) VALUES ($1, $2)",
                            &[&name, &password],
                        )?;
                        (name, password)
                    }
                };
                let mut grants = String::new();
                for v in VIEWS {
                    let _ = writeln!(grants, "GRANT SELECT ON {v} TO {name};");
                }
                tx.batch_execute(&grants)?;
                tx.commit()?;
                Ok((name, password))
            })
            .map_err(|e| match e {
                SqlError::Sql(m) if m.contains("permission denied") => SqlError::Sql(format!(
                    "SQL on the PostgreSQL backend needs a sandbox role, which the backend's \
                     user may not create ({m}): grant it CREATEROLE"
                )),
                e => e,
            })?;
        *self.role.lock() = Some(role.clone());
        Ok(role)
    }
}

impl Drop for PgSqlSession {
    fn drop(&mut self) {
        if let Some(c) = self.client.take() {
            let mut idle = self.sql.idle.lock();
            if self.clean && !c.is_closed() && idle.len() < POOL {
                idle.push(c);
            }
        }
    }
}

impl PgSqlSession {
    fn client(&mut self) -> &mut Client {
        self.client
            .as_mut()
            .expect("a session has its client until dropped")
    }

    /// Runs `sql` (writes allowed).
    ///
    /// # Errors
    /// PostgreSQL's error, or a limit's.
    pub fn exec(
        &mut self,
        sql: &str,
        params: Vec<SqlValue>,
        limits: &SqlLimits,
    ) -> Result<SqlOutput, SqlError> {
        self.transaction(false, limits, |c, begin| {
            statement(c, sql, &params, limits, Some(begin))
        })
    }

    /// Runs `sql` in a read-only transaction.
    ///
    /// # Errors
    /// PostgreSQL's error ([`SqlError::NotReadOnly`] for a write), or a limit's.
    pub fn query(
        &mut self,
        sql: &str,
        params: Vec<SqlValue>,
        limits: &SqlLimits,
    ) -> Result<SqlOutput, SqlError> {
        self.transaction(true, limits, |c, _| {
            statement(c, sql, &params, limits, None)
        })
    }

    /// Stores a prepared statement, checked by PostgreSQL first.
    ///
    /// # Errors
    /// The SQL does not prepare, or `mode` refuses the name's state.
    pub fn prepare(&mut self, name: &str, sql: &str, mode: PrepareMode) -> Result<(), SqlError> {
        let limits = SqlLimits::default();
        let params = self.transaction(true, &limits, |c, _| {
            let st = c.prepare(sql).map_err(|e| user_error(e, &limits))?;
            Ok(st.params().len())
        })?;
        let readonly = reads_only(sql);
        let name = name.to_string();
        let sql = sql.to_string();
        self.sql.with_admin(move |c| {
            let params = params as i32;
            match mode {
                PrepareMode::Upsert => c
                    .execute(
                        "INSERT INTO relis_sql_statements (name, sql, params, readonly)
                         VALUES ($1, $2, $3, $4) ON CONFLICT (name) DO UPDATE
                         SET sql = excluded.sql, params = excluded.params,
                             readonly = excluded.readonly",
                        &[&name, &sql, &params, &readonly],
                    )
                    .map(|_| Ok(())),
                PrepareMode::Create => c
                    .execute(
                        "INSERT INTO relis_sql_statements (name, sql, params, readonly)
                         VALUES ($1, $2, $3, $4) ON CONFLICT (name) DO NOTHING",
                        &[&name, &sql, &params, &readonly],
                    )
                    .map(|n| {
                        if n == 0 {
                            Err(SqlError::StatementExists(name.clone()))
                        } else {
                            Ok(())
                        }
                    }),
                PrepareMode::Update => c
                    .execute(
                        "UPDATE relis_sql_statements SET sql = $2, params = $3, readonly = $4
                         WHERE name = $1",
                        &[&name, &sql, &params, &readonly],
                    )
                    .map(|n| {
                        if n == 0 {
                            Err(SqlError::NoSuchStatement(name.clone()))
                        } else {
                            Ok(())
                        }
                    }),
            }
        })?
    }

    /// Runs the prepared statement `name` (writes allowed).
    ///
    /// # Errors
    /// No such statement, or running it fails.
    pub fn run(
        &mut self,
        name: &str,
        params: Vec<SqlValue>,
        limits: &SqlLimits,
    ) -> Result<SqlOutput, SqlError> {
        let sql = self.stored(name)?;
        self.exec(&sql, params, limits)
    }

    /// Runs the prepared statement `name` read-only.
    ///
    /// # Errors
    /// No such statement, it writes, or running it fails.
    pub fn run_query(
        &mut self,
        name: &str,
        params: Vec<SqlValue>,
        limits: &SqlLimits,
    ) -> Result<SqlOutput, SqlError> {
        let sql = self.stored(name)?;
        self.query(&sql, params, limits)
    }

    fn stored(&mut self, name: &str) -> Result<String, SqlError> {
        let name = name.to_string();
        self.sql
            .with_admin(|c| {
                c.query_opt(
                    "SELECT sql FROM relis_sql_statements WHERE name = $1",
                    &[&name],
                )
            })?
            .map(|r| r.get(0))
            .ok_or(SqlError::NoSuchStatement(name))
    }

    /// Forgets a prepared statement; whether it existed.
    ///
    /// # Errors
    /// PostgreSQL fails.
    pub fn unprepare(&mut self, name: &str) -> Result<bool, SqlError> {
        let n = self.sql.with_admin(|c| {
            c.execute("DELETE FROM relis_sql_statements WHERE name = $1", &[&name])
        })?;
        Ok(n > 0)
    }

    /// The prepared statements, by name.
    ///
    /// # Errors
    /// PostgreSQL fails.
    pub fn statements(&mut self) -> Result<Vec<StatementInfo>, SqlError> {
        let rows = self.sql.with_admin(|c| {
            c.query(
                "SELECT name, sql, params, readonly FROM relis_sql_statements ORDER BY name",
                &[],
            )
        })?;
        Ok(rows
            .iter()
            .map(|r| StatementInfo {
                name: r.get(0),
                sql: r.get(1),
                params: r.get::<_, i32>(2) as usize,
                readonly: r.get(3),
            })
            .collect())
    }

    /// A table's or view's columns, rows and sizes, as the sandbox role sees it (the name
    /// resolved by the session's `search_path`).
    ///
    /// # Errors
    /// No such table the role may read, or counting its rows fails.
    pub fn describe(&mut self, table: &str, limits: &SqlLimits) -> Result<TableInfo, SqlError> {
        if table.to_ascii_lowercase().starts_with("relis_") {
            return Err(SqlError::NoSuchTable(table.into()));
        }
        let table = table.to_string();
        self.transaction(true, limits, move |c, _| {
            let found = c
                .query_opt(
                    "SELECT c.oid, c.oid::regclass::text FROM pg_class c
                     WHERE c.oid = to_regclass($1) AND c.relkind IN ('r', 'v', 'm', 'p', 'f')
                       AND has_table_privilege(c.oid, 'SELECT')",
                    &[&table],
                )
                .map_err(|e| user_error(e, limits))?;
            let Some(found) = found else {
                return Err(SqlError::NoSuchTable(table.clone()));
            };
            let oid: u32 = found.get(0);
            let name: String = found.get(1);
            let columns = c
                .query(
                    "SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), a.attnotnull,
                            pg_get_expr(d.adbin, d.adrelid),
                            coalesce(array_position(i.indkey::int2[], a.attnum), 0)::bigint
                     FROM pg_attribute a
                     LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                     LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
                     WHERE a.attrelid = $1::oid AND a.attnum > 0 AND NOT a.attisdropped
                     ORDER BY a.attnum",
                    &[&oid],
                )
                .map_err(|e| user_error(e, limits))?
                .iter()
                .map(|r| ColumnInfo {
                    name: r.get(0),
                    decl_type: r.get(1),
                    not_null: r.get(2),
                    default: r.get(3),
                    pk: r.get(4),
                })
                .collect();
            let rows: i64 = c
                .query_one(&format!("SELECT count(*) FROM {name}"), &[])
                .map_err(|e| user_error(e, limits))?
                .get(0);
            let bytes: i64 = c
                .query_one("SELECT pg_relation_size($1::oid)", &[&oid])
                .map_err(|e| user_error(e, limits))?
                .get(0);
            let indexes = c
                .query(
                    "SELECT x.relname::text, pg_relation_size(x.oid) FROM pg_index i
                     JOIN pg_class x ON x.oid = i.indexrelid WHERE i.indrelid = $1::oid
                     ORDER BY x.relname",
                    &[&oid],
                )
                .map_err(|e| user_error(e, limits))?
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect();
            Ok(TableInfo {
                columns,
                rows,
                bytes,
                indexes,
            })
        })
    }

    /// SQL.FROMHASH: each hash a row of `table`, keyed by `key`, as on SQLite
    /// ([`crate::SqlConn::upsert_hashes`]): a missing table is created (`bigint`, `double
    /// precision` or `text` columns, as the values fit), an existing one gains missing columns,
    /// rows are upserted by key.
    ///
    /// # Errors
    /// As on SQLite, or PostgreSQL's error (a value its column's type does not parse).
    pub fn upsert_hashes(
        &mut self,
        table: &str,
        hashes: &Hashes,
        limits: &SqlLimits,
    ) -> Result<FromHashReport, SqlError> {
        self.upsert_keyed(table, KeyedRows::plan("key", "a hash", hashes)?, limits)
    }

    /// SQL.FROMSTREAM: each entry a row of `table` keyed by `id`, as [`Self::upsert_hashes`].
    ///
    /// # Errors
    /// As [`Self::upsert_hashes`].
    pub fn upsert_stream(
        &mut self,
        table: &str,
        entries: &[crate::StreamEntry],
        limits: &SqlLimits,
    ) -> Result<FromHashReport, SqlError> {
        let rows = entry_rows(entries);
        self.upsert_keyed(table, KeyedRows::plan("id", "an entry", &rows)?, limits)
    }

    fn upsert_keyed(
        &mut self,
        table: &str,
        plan: KeyedRows,
        limits: &SqlLimits,
    ) -> Result<FromHashReport, SqlError> {
        if table.to_ascii_lowercase().starts_with("relis_")
            || table.to_ascii_lowercase().starts_with("redis_")
        {
            return Err(SqlError::Denied(format!("{table} is a reserved name")));
        }
        let table = table.to_string();
        self.transaction(false, limits, move |c, _| {
            let fail = |e| user_error(e, limits);
            let existing: Vec<String> = c
                .query(
                    "SELECT a.attname::text FROM pg_attribute a
                     WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped",
                    &[&quote(&table)],
                )
                .map_err(fail)?
                .iter()
                .map(|r| r.get(0))
                .collect();
            let pg_type = |t: &str| match t {
                "INTEGER" => "bigint",
                "REAL" => "double precision",
                _ => "text",
            };
            let mut report = FromHashReport::default();
            if existing.is_empty() {
                let mut cols = vec![format!("{} text PRIMARY KEY", quote(&plan.key_col))];
                for (f, t) in plan.fields.iter().zip(&plan.types) {
                    cols.push(format!("{} {}", quote(f), pg_type(t)));
                }
                c.batch_execute(&format!(
                    "CREATE TABLE {} ({})",
                    quote(&table),
                    cols.join(", ")
                ))
                .map_err(fail)?;
                report.created = true;
            } else {
                if !existing.iter().any(|c| c == &plan.key_col) {
                    return Err(SqlError::Sql(format!(
                        "table {table} has no '{}' column to upsert by",
                        plan.key_col
                    )));
                }
                for (f, t) in plan.fields.iter().zip(&plan.types) {
                    if !existing.iter().any(|c| c.eq_ignore_ascii_case(f)) {
                        c.batch_execute(&format!(
                            "ALTER TABLE {} ADD COLUMN {} {}",
                            quote(&table),
                            quote(f),
                            pg_type(t)
                        ))
                        .map_err(fail)?;
                        report.added_columns.push(f.clone());
                    }
                }
            }
            let st = c
                .prepare(&plan.upsert(&table, |i| format!("${i}")))
                .map_err(fail)?;
            for values in &plan.rows {
                let args: Vec<Param<'_>> = values.iter().map(Param).collect();
                let refs: Vec<&(dyn ToSql + Sync)> = args.iter().map(|a| a as _).collect();
                c.execute(&st, &refs).map_err(fail)?;
                report.rows += 1;
            }
            Ok(report)
        })
    }

    /// Runs `f` in a transaction of its own (read-only or not) under `limits`' time limit,
    /// committed when it succeeds, then clears the session.
    fn transaction<T>(
        &mut self,
        read_only: bool,
        limits: &SqlLimits,
        f: impl FnOnce(&mut Client, &str) -> Result<T, SqlError>,
    ) -> Result<T, SqlError> {
        let ms = limits
            .time_limit
            .map_or(0, |d| d.as_millis().clamp(1, i32::MAX as u128));
        let begin = format!(
            "BEGIN{}; SET LOCAL statement_timeout = {ms}",
            if read_only { " READ ONLY" } else { "" }
        );
        let c = self.client();
        c.batch_execute(&begin).map_err(pg_error)?;
        let out = f(c, &begin);
        let end = c.batch_execute(if out.is_ok() { "COMMIT" } else { "ROLLBACK" });
        let clear = c.batch_execute("DISCARD ALL");
        // A connection whose transaction or cleanup failed may still hold either: closed, not
        // pooled for the next command.
        self.clean = end.is_ok() && clear.is_ok();
        let out = out?;
        end.map_err(|e| user_error(e, limits))?;
        clear.map_err(pg_error)?;
        Ok(out)
    }
}

/// Runs one statement of user SQL on `c` (inside [`PgSqlSession::transaction`]); several
/// statements without parameters run as one batch when `batch` is the transaction's opening
/// (`None`: not allowed).
fn statement(
    c: &mut Client,
    sql: &str,
    params: &[SqlValue],
    limits: &SqlLimits,
    batch: Option<&str>,
) -> Result<SqlOutput, SqlError> {
    if is_blank(sql) {
        return Err(SqlError::Empty);
    }
    let st = match c.prepare(sql) {
        Ok(st) => st,
        Err(e) if is_multiple(&e) => {
            let Some(begin) = batch.filter(|_| params.is_empty()) else {
                return Err(SqlError::MultipleStatements);
            };
            // The failed parse ended the transaction: open it again, and run the batch in it
            // under a watchdog, since a batch may COMMIT and lift its own time limit.
            c.batch_execute(&format!("ROLLBACK; {begin}"))
                .map_err(pg_error)?;
            watched(c, limits, |c| c.batch_execute(sql)).map_err(|e| user_error(e, limits))?;
            return Ok(SqlOutput {
                kind: StatementKind::Ddl,
                columns: Vec::new(),
                rows: Vec::new(),
                changes: 0,
            });
        }
        Err(e) => return Err(user_error(e, limits)),
    };
    if st.params().len() != params.len() {
        return Err(SqlError::Params {
            expected: st.params().len(),
            got: params.len(),
        });
    }
    let args: Vec<Param<'_>> = params.iter().map(Param).collect();
    if st.columns().is_empty() {
        let refs: Vec<&(dyn ToSql + Sync)> = args.iter().map(|a| a as _).collect();
        let n = c.execute(&st, &refs).map_err(|e| user_error(e, limits))?;
        let kind = if changes_rows(sql) {
            StatementKind::Changes
        } else {
            StatementKind::Ddl
        };
        return Ok(SqlOutput {
            kind,
            columns: Vec::new(),
            rows: Vec::new(),
            changes: if kind == StatementKind::Changes { n } else { 0 },
        });
    }
    let columns: Vec<String> = st.columns().iter().map(|c| c.name().to_string()).collect();
    let st = readable(c, sql, &st, limits)?;
    let mut rows = Vec::new();
    let mut bytes = 0usize;
    let mut it = c
        .query_raw(&st, args.iter())
        .map_err(|e| user_error(e, limits))?;
    while let Some(row) = postgres::fallible_iterator::FallibleIterator::next(&mut it)
        .map_err(|e| user_error(e, limits))?
    {
        if limits.max_rows.is_some_and(|m| rows.len() >= m) {
            return Err(SqlError::TooManyRows(limits.max_rows.unwrap_or(0)));
        }
        let mut values = Vec::with_capacity(row.len());
        for i in 0..row.len() {
            let v: Val = row.try_get(i).map_err(pg_error)?;
            bytes += match &v.0 {
                SqlValue::Text(b) | SqlValue::Blob(b) => b.len(),
                _ => 8,
            };
            values.push(v.0);
        }
        if let Some(max) = limits.max_bytes.filter(|m| bytes > *m) {
            return Err(SqlError::TooManyBytes(max));
        }
        rows.push(values);
    }
    Ok(SqlOutput {
        kind: StatementKind::Rows,
        columns,
        rows,
        changes: 0,
    })
}

/// Runs `f` on `c`, cancelling its query if it runs past the time limit.
fn watched<T>(
    c: &mut Client,
    limits: &SqlLimits,
    f: impl FnOnce(&mut Client) -> Result<T, postgres::Error>,
) -> Result<T, postgres::Error> {
    let Some(limit) = limits.time_limit else {
        return f(c);
    };
    let token = c.cancel_token();
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if finished.recv_timeout(limit) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
            let _ = token.cancel_query(NoTls);
        }
    });
    let out = f(c);
    drop(done);
    let _ = watchdog.join();
    out
}

/// `st` itself when every column is of a type [`Val`] reads; else the same query with those
/// columns cast to text (a query that cannot be wrapped so fails, naming the column).
fn readable(
    c: &mut Client,
    sql: &str,
    st: &Statement,
    limits: &SqlLimits,
) -> Result<Statement, SqlError> {
    let odd: Vec<usize> = st
        .columns()
        .iter()
        .enumerate()
        .filter(|(_, col)| !Val::reads(col.type_()))
        .map(|(i, _)| i)
        .collect();
    if odd.is_empty() {
        return Ok(st.clone());
    }
    let n = st.columns().len();
    let names: Vec<String> = (1..=n).map(|i| format!("relis_c{i}")).collect();
    let select: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, c)| {
            if odd.contains(&i) {
                format!("{c}::text")
            } else {
                c.clone()
            }
        })
        .collect();
    let wrapped = format!(
        "SELECT {} FROM ({}\n) AS relis_q({})",
        select.join(", "),
        sql.trim_end().trim_end_matches(';'),
        names.join(", ")
    );
    c.prepare(&wrapped).map_err(|e| {
        let col = &st.columns()[odd[0]];
        match e.as_db_error() {
            Some(_) => SqlError::Sql(format!(
                "column {} has type {}, which SQL.* returns only as text: cast it (::text)",
                col.name(),
                col.type_()
            )),
            None => user_error(e, limits),
        }
    })
}

/// A parameter from the network, bound as text (PostgreSQL parses it for the type it inferred
/// for the parameter) or, for a `bytea` parameter, as its raw bytes.
#[derive(Debug)]
struct Param<'a>(&'a SqlValue);

impl ToSql for Param<'_> {
    fn to_sql(
        &self,
        _ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self.0 {
            SqlValue::Null => return Ok(IsNull::Yes),
            SqlValue::Integer(i) => out.extend_from_slice(i.to_string().as_bytes()),
            SqlValue::Real(f) => out.extend_from_slice(f.to_string().as_bytes()),
            SqlValue::Text(b) | SqlValue::Blob(b) => out.extend_from_slice(b),
        }
        Ok(IsNull::No)
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    fn encode_format(&self, ty: &Type) -> postgres::types::Format {
        if *ty == Type::BYTEA {
            postgres::types::Format::Binary
        } else {
            postgres::types::Format::Text
        }
    }

    postgres::types::to_sql_checked!();
}

/// A result value, read from PostgreSQL's binary format (see the module's documentation).
struct Val(SqlValue);

impl Val {
    /// Whether `ty`'s values are read as they are (others are cast to text first).
    fn reads(ty: &Type) -> bool {
        matches!(
            *ty,
            Type::BOOL
                | Type::INT2
                | Type::INT4
                | Type::INT8
                | Type::OID
                | Type::FLOAT4
                | Type::FLOAT8
                | Type::NUMERIC
                | Type::TEXT
                | Type::VARCHAR
                | Type::BPCHAR
                | Type::NAME
                | Type::UNKNOWN
                | Type::JSON
                | Type::JSONB
                | Type::UUID
                | Type::CHAR
                | Type::BYTEA
        )
    }
}

impl<'a> FromSql<'a> for Val {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Val, Box<dyn std::error::Error + Sync + Send>> {
        let v = match *ty {
            Type::BOOL => SqlValue::Integer(bool::from_sql(ty, raw)? as i64),
            Type::INT2 => SqlValue::Integer(i16::from_sql(ty, raw)? as i64),
            Type::INT4 => SqlValue::Integer(i32::from_sql(ty, raw)? as i64),
            Type::INT8 => SqlValue::Integer(i64::from_sql(ty, raw)?),
            Type::OID => SqlValue::Integer(u32::from_sql(ty, raw)? as i64),
            Type::FLOAT4 => SqlValue::Real(f32::from_sql(ty, raw)? as f64),
            Type::FLOAT8 => SqlValue::Real(f64::from_sql(ty, raw)?),
            Type::CHAR => SqlValue::Integer(i8::from_sql(ty, raw)? as i64),
            Type::NUMERIC => numeric(raw)?,
            Type::BYTEA => SqlValue::Blob(Bytes::copy_from_slice(raw)),
            Type::JSONB => SqlValue::Text(Bytes::copy_from_slice(raw.get(1..).unwrap_or(&[]))),
            Type::UUID => {
                let mut s = String::with_capacity(36);
                for (i, b) in raw.iter().enumerate() {
                    if matches!(i, 4 | 6 | 8 | 10) {
                        s.push('-');
                    }
                    let _ = write!(s, "{b:02x}");
                }
                SqlValue::Text(Bytes::from(s))
            }
            _ => SqlValue::Text(Bytes::copy_from_slice(raw)),
        };
        Ok(Val(v))
    }

    fn from_sql_null(_: &Type) -> Result<Val, Box<dyn std::error::Error + Sync + Send>> {
        Ok(Val(SqlValue::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// A `numeric` in PostgreSQL's binary format (digits in base 10,000): an integer when it is
/// whole and fits 64 bits, else a double (NaN and the infinities included).
fn numeric(raw: &[u8]) -> Result<SqlValue, Box<dyn std::error::Error + Sync + Send>> {
    let word = |i: usize| -> Result<i16, Box<dyn std::error::Error + Sync + Send>> {
        raw.get(i..i + 2)
            .map(|b| i16::from_be_bytes([b[0], b[1]]))
            .ok_or_else(|| "short numeric".into())
    };
    let ndigits = word(0)? as usize;
    let weight = word(2)? as i32;
    let sign = word(4)? as u16;
    match sign {
        0xC000 => return Ok(SqlValue::Real(f64::NAN)),
        0xD000 => return Ok(SqlValue::Real(f64::INFINITY)),
        0xF000 => return Ok(SqlValue::Real(f64::NEG_INFINITY)),
        _ => {}
    }
    let digits = (0..ndigits)
        .map(|i| word(8 + 2 * i).map(|d| d as i64))
        .collect::<Result<Vec<_>, _>>()?;
    let negative = sign == 0x4000;
    // Whole: no digit group after the decimal point.
    if (ndigits as i32) <= weight + 1 {
        let mut v: i128 = 0;
        for i in 0..=weight.max(-1) {
            v = v * 10_000 + digits.get(i as usize).copied().unwrap_or(0) as i128;
            if v > i64::MAX as i128 + 1 {
                break;
            }
        }
        let v = if negative { -v } else { v };
        if let Ok(v) = i64::try_from(v) {
            return Ok(SqlValue::Integer(v));
        }
    }
    let mut text = String::new();
    if negative {
        text.push('-');
    }
    text.push_str("0.");
    for d in &digits {
        let _ = write!(text, "{d:04}");
    }
    let _ = write!(text, "e{}", 4 * (weight + 1));
    Ok(SqlValue::Real(text.parse().unwrap_or(f64::NAN)))
}

/// Whether the SQL text holds no statement (blanks and semicolons only).
fn is_blank(sql: &str) -> bool {
    sql.chars().all(|c| c.is_whitespace() || c == ';')
}

/// The first keyword of the SQL text, lowercased (comments and parentheses skipped).
fn first_word(sql: &str) -> String {
    let mut s = sql.trim_start();
    loop {
        if let Some(rest) = s.strip_prefix("--") {
            s = rest.split_once('\n').map_or("", |(_, r)| r).trim_start();
        } else if let Some(rest) = s.strip_prefix("/*") {
            s = rest.split_once("*/").map_or("", |(_, r)| r).trim_start();
        } else if let Some(rest) = s.strip_prefix('(') {
            s = rest.trim_start();
        } else {
            break;
        }
    }
    s.chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_lowercase()
}

/// Whether a statement that returns no rows counts changed rows (INSERT, UPDATE, DELETE,
/// MERGE, or a WITH ending in one); others (CREATE, ...) answer OK.
fn changes_rows(sql: &str) -> bool {
    matches!(
        first_word(sql).as_str(),
        "insert" | "update" | "delete" | "merge" | "with"
    )
}

/// Whether a prepared statement only reads, as SQL.STATEMENTS reports it (by its first
/// keyword; a read-only run is enforced by its read-only transaction whatever this says).
fn reads_only(sql: &str) -> bool {
    matches!(
        first_word(sql).as_str(),
        "select" | "values" | "table" | "show" | "explain"
    )
}

fn is_multiple(e: &postgres::Error) -> bool {
    e.as_db_error().is_some_and(|d| {
        *d.code() == SqlState::SYNTAX_ERROR && d.message().contains("multiple commands")
    })
}

/// A failure that is not the user's SQL's (connection, provisioning).
fn pg_error(e: postgres::Error) -> SqlError {
    match e.as_db_error() {
        Some(d) => SqlError::Sql(d.message().to_string()),
        None => SqlError::Sql(format!("PostgreSQL: {e}")),
    }
}

/// The user's SQL failed: PostgreSQL's message, or the time limit, or a write where only
/// reads are allowed.
fn user_error(e: postgres::Error, limits: &SqlLimits) -> SqlError {
    match e.code() {
        Some(c) if *c == SqlState::QUERY_CANCELED => SqlError::TimedOut(
            limits
                .time_limit
                .unwrap_or(Duration::ZERO)
                .as_millis()
                .try_into()
                .unwrap_or(u64::MAX),
        ),
        Some(c) if *c == SqlState::READ_ONLY_SQL_TRANSACTION => SqlError::NotReadOnly,
        _ => pg_error(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_words() {
        assert_eq!(first_word("  -- hi\n /* x */ (SELECT 1)"), "select");
        assert!(changes_rows(
            "WITH a AS (SELECT 1) INSERT INTO t SELECT * FROM a"
        ));
        assert!(!changes_rows("create table t (a int)"));
        assert!(reads_only("values (1)"));
        assert!(!reads_only("update t set a = 1"));
        assert!(is_blank(" ;\n;"));
    }

    fn num(ndigits: i16, weight: i16, sign: u16, digits: &[i16]) -> SqlValue {
        let mut raw = Vec::new();
        for w in [ndigits, weight, sign as i16, 0] {
            raw.extend_from_slice(&w.to_be_bytes());
        }
        for d in digits {
            raw.extend_from_slice(&d.to_be_bytes());
        }
        numeric(&raw).unwrap()
    }

    #[test]
    fn numerics() {
        assert_eq!(num(0, 0, 0, &[]), SqlValue::Integer(0));
        // 1234 5678 = 12,345,678 with weight 1.
        assert_eq!(num(2, 1, 0, &[1234, 5678]), SqlValue::Integer(12_345_678));
        // 20000 = [2] with weight 1.
        assert_eq!(num(1, 1, 0, &[2]), SqlValue::Integer(20_000));
        assert_eq!(num(1, 0, 0x4000, &[7]), SqlValue::Integer(-7));
        // 2.5 = [2, 5000] weight 0.
        assert_eq!(num(2, 0, 0, &[2, 5000]), SqlValue::Real(2.5));
        // 0.0001 = [1] weight -1.
        assert_eq!(num(1, -1, 0, &[1]), SqlValue::Real(0.0001));
        // 2^64 is not an i64: a double.
        assert_eq!(
            num(5, 4, 0, &[1844, 6744, 737, 955, 1616]),
            SqlValue::Real(18446744073709551616.0)
        );
        assert!(matches!(num(0, 0, 0xC000, &[]), SqlValue::Real(f) if f.is_nan()));
    }
}
