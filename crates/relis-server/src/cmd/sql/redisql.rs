//! REDISQL.* — RediSQL's API over Relis's named SQL databases, so a RediSQL user can switch
//! without changing code. <https://redisql.redbeardlab.com/references/>
//!
//! A RediSQL database is a Relis named database (SQL.DB): `REDISQL.CREATE_DB db [path]` creates
//! it, in memory without a path (as RediSQL does), else in the file `path`, which must lie under
//! `dir`. Every `.NOW` variant is a synonym (Relis never blocks the client's connection thread).
//!
//! v1 commands and their replies:
//! - CREATE_DB db [path] -> `+OK`
//! - EXEC db sql -> rows as an array of rows; a statement that changes rows `["DONE", n]` (`DONE`
//!   a simple string); a query without rows `["DONE", 0]`; a schema statement `+DONE`
//! - QUERY db sql -> as EXEC, refusing a statement that writes
//! - CREATE_STATEMENT db stmt sql -> `+OK` (an error if `stmt` exists: use UPDATE_STATEMENT)
//! - EXEC_STATEMENT db stmt [arg ...] -> as EXEC
//! - QUERY_STATEMENT db stmt [arg ...] -> as QUERY
//! - UPDATE_STATEMENT db stmt sql -> `+OK` (an error if `stmt` does not exist)
//! - DELETE_STATEMENT db stmt -> `+OK` (an error if it does not exist)
//! - COPY src dst -> `+OK`: dst's content replaced by a copy of src's
//! - STATISTICS -> `[[name, count], ...]`: calls, successes ("X OK") and failures ("X ERR") of
//!   each command, from INFO commandstats
//! - VERSION -> the Relis version (bulk string)
//!
//! v2 keyword forms, when the argument after the database is `COMMAND` or `STATEMENT`:
//! `REDISQL.EXEC db COMMAND sql | STATEMENT stmt [READ_ONLY] [NO_HEADER] [ARGS arg ...]`
//! (and the same after REDISQL.QUERY, which implies READ_ONLY), with v2's tagged replies:
//! `[["RESULT"], [column names], [column types], row, ...]` (no names and types with
//! NO_HEADER), `[["DONE"], [n]]`, `[["OK"]]`. v2's `INTO stream` is not supported.

use super::db::{check_name, create, Place};
use super::{params, text, OnNamed, Op, Shape};
use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec, Table};
use crate::error::CmdError;
use bytes::Bytes;
use relis::PrepareMode;
use resp::Frame;
use std::sync::atomic::Ordering;

macro_rules! spec {
    ($name:expr, $arity:expr, $flags:expr, $acl:expr, $summary:expr, $parse:expr) => {
        Spec {
            name: $name,
            arity: $arity,
            flags: $flags,
            acl: $acl,
            group: "sql",
            since: "0.1.0",
            summary: $summary,
            complexity: "Depends on the SQL",
            parse: $parse,
            ..Spec::BASE
        }
    };
}

/// An alias does what a `SQL.*` command does: it has that command's flags and ACL categories,
/// so a rule that denies the one denies the other (`-@admin` denies CREATE_DB as it denies
/// SQL.DB CREATE).
macro_rules! alias {
    ($name:expr, $arity:expr, $of:expr, $summary:expr, $parse:expr) => {
        spec!($name, $arity, $of.flags, $of.acl, $summary, $parse)
    };
}

/// SQL.DB CREATE: what CREATE_DB does.
const DB_CREATE: Spec = super::db::SPEC_CREATE;
/// A statement that only reads, as SQL.QUERY runs (QUERY, QUERY_STATEMENT).
const QUERY: Spec = super::query::SPEC;

/// REDISQL.CREATE_DB.
pub const SPEC_CREATE_DB: Spec = alias!(
    "redisql.create_db",
    -2,
    DB_CREATE,
    "Create a RediSQL database",
    RediSql::parse_create_db
);
/// REDISQL.CREATE_DB.NOW.
pub const SPEC_CREATE_DB_NOW: Spec = alias!(
    "redisql.create_db.now",
    -2,
    DB_CREATE,
    "Create a RediSQL database",
    RediSql::parse_create_db
);
/// REDISQL.EXEC.
pub const SPEC_EXEC: Spec = alias!(
    "redisql.exec",
    -3,
    super::exec::SPEC,
    "Run a SQL statement",
    RediSql::parse_exec
);
/// REDISQL.EXEC.NOW.
pub const SPEC_EXEC_NOW: Spec = alias!(
    "redisql.exec.now",
    -3,
    super::exec::SPEC,
    "Run a SQL statement",
    RediSql::parse_exec
);
/// REDISQL.QUERY.
pub const SPEC_QUERY: Spec = alias!(
    "redisql.query",
    -3,
    QUERY,
    "Run a read-only SQL statement",
    RediSql::parse_query
);
/// REDISQL.QUERY.NOW.
pub const SPEC_QUERY_NOW: Spec = alias!(
    "redisql.query.now",
    -3,
    QUERY,
    "Run a read-only SQL statement",
    RediSql::parse_query
);
/// REDISQL.CREATE_STATEMENT.
pub const SPEC_CREATE_STATEMENT: Spec = alias!(
    "redisql.create_statement",
    4,
    super::prepare::SPEC,
    "Create a prepared statement",
    RediSql::parse_create_statement
);
/// REDISQL.CREATE_STATEMENT.NOW.
pub const SPEC_CREATE_STATEMENT_NOW: Spec = alias!(
    "redisql.create_statement.now",
    4,
    super::prepare::SPEC,
    "Create a prepared statement",
    RediSql::parse_create_statement
);
/// REDISQL.EXEC_STATEMENT.
pub const SPEC_EXEC_STATEMENT: Spec = alias!(
    "redisql.exec_statement",
    -3,
    super::run::SPEC,
    "Run a prepared statement",
    RediSql::parse_exec_statement
);
/// REDISQL.EXEC_STATEMENT.NOW.
pub const SPEC_EXEC_STATEMENT_NOW: Spec = alias!(
    "redisql.exec_statement.now",
    -3,
    super::run::SPEC,
    "Run a prepared statement",
    RediSql::parse_exec_statement
);
/// REDISQL.QUERY_STATEMENT.
pub const SPEC_QUERY_STATEMENT: Spec = alias!(
    "redisql.query_statement",
    -3,
    QUERY,
    "Run a read-only prepared statement",
    RediSql::parse_query_statement
);
/// REDISQL.QUERY_STATEMENT.NOW.
pub const SPEC_QUERY_STATEMENT_NOW: Spec = alias!(
    "redisql.query_statement.now",
    -3,
    QUERY,
    "Run a read-only prepared statement",
    RediSql::parse_query_statement
);
/// REDISQL.UPDATE_STATEMENT.
pub const SPEC_UPDATE_STATEMENT: Spec = alias!(
    "redisql.update_statement",
    4,
    super::prepare::SPEC,
    "Change an existing prepared statement",
    RediSql::parse_update_statement
);
/// REDISQL.UPDATE_STATEMENT.NOW.
pub const SPEC_UPDATE_STATEMENT_NOW: Spec = alias!(
    "redisql.update_statement.now",
    4,
    super::prepare::SPEC,
    "Change an existing prepared statement",
    RediSql::parse_update_statement
);
/// REDISQL.DELETE_STATEMENT.
pub const SPEC_DELETE_STATEMENT: Spec = alias!(
    "redisql.delete_statement",
    3,
    super::unprepare::SPEC,
    "Delete a prepared statement",
    RediSql::parse_delete_statement
);
/// REDISQL.DELETE_STATEMENT.NOW.
pub const SPEC_DELETE_STATEMENT_NOW: Spec = alias!(
    "redisql.delete_statement.now",
    3,
    super::unprepare::SPEC,
    "Delete a prepared statement",
    RediSql::parse_delete_statement
);

/// COPY replaces the whole content of a database, as FLUSHDB empties one: it is `@dangerous`
/// too (and writes, as SQL.EXEC does).
const COPY_FLAGS: crate::cmd::Flags = Spec::flags(&["write", "denyoom"]);
const COPY_ACL: crate::cmd::Cats = Spec::acl(&["write", "slow", "dangerous", "sql"]);

/// REDISQL.COPY.
pub const SPEC_COPY: Spec = spec!(
    "redisql.copy",
    3,
    COPY_FLAGS,
    COPY_ACL,
    "Copy a database into another",
    RediSql::parse_copy
);
/// REDISQL.COPY.NOW.
pub const SPEC_COPY_NOW: Spec = spec!(
    "redisql.copy.now",
    3,
    COPY_FLAGS,
    COPY_ACL,
    "Copy a database into another",
    RediSql::parse_copy
);
/// REDISQL.STATISTICS: INFO's command statistics, so INFO's flags and categories (with `@sql`).
pub const SPEC_STATISTICS: Spec = spec!(
    "redisql.statistics",
    1,
    Spec::flags(&["loading", "stale"]),
    Spec::acl(&["slow", "dangerous", "sql"]),
    "Counters of the RediSQL commands",
    RediSql::parse_statistics
);
/// REDISQL.VERSION: a constant, as cheap as TIME (TIME's flags and categories, with `@sql`).
pub const SPEC_VERSION: Spec = spec!(
    "redisql.version",
    1,
    Spec::flags(&["loading", "stale", "fast"]),
    Spec::acl(&["fast", "sql"]),
    "The server's version",
    RediSql::parse_version
);

/// The RediSQL commands that are not a plain operation on a database.
#[derive(Debug, PartialEq, Eq)]
pub enum RediSql {
    /// CREATE_DB.
    CreateDb(String, Place),
    /// COPY src dst.
    Copy(String, String),
    /// STATISTICS.
    Statistics,
    /// VERSION.
    Version,
}

fn on(cmd: &'static str, db: String, op: Op, shape: Shape) -> Result<Parsed, CmdError> {
    Parsed::conn(OnNamed { cmd, db, op, shape })
}

impl RediSql {
    fn parse_create_db(args: &mut Args) -> Result<Parsed, CmdError> {
        let db = check_name(args.next()?)?;
        let place = match args.peek() {
            // RediSQL opens ":memory:" for an explicit in-memory path, like no path at all.
            Some(p) if p.as_ref() != b":memory:" => Place::Path(text(args.next()?, "a path")?),
            Some(_) => {
                args.next()?;
                Place::Memory
            }
            None => Place::Memory,
        };
        args.finish()?;
        Parsed::conn(RediSql::CreateDb(db, place))
    }

    /// EXEC db sql, or the v2 form; QUERY is the same, read-only.
    fn parse_statement(args: &mut Args, read_only: bool) -> Result<Parsed, CmdError> {
        let db = check_name(args.next()?)?;
        let v2 = args.remaining() >= 2
            && args.peek().is_some_and(|w| {
                w.eq_ignore_ascii_case(b"command") || w.eq_ignore_ascii_case(b"statement")
            });
        if !v2 {
            let sql = text(args.next()?, "SQL")?;
            args.finish()?;
            let op = if read_only {
                Op::Query {
                    sql,
                    params: Vec::new(),
                }
            } else {
                Op::Exec {
                    sql,
                    params: Vec::new(),
                }
            };
            return on(args.name(), db, op, Shape::V1);
        }
        let statement = args.eat("statement");
        if !statement {
            args.eat("command");
        }
        let what = text(
            args.next()?,
            if statement { "a statement name" } else { "SQL" },
        )?;
        let (mut read_only, mut header, mut rest) = (read_only, true, Vec::new());
        while let Some(w) = args.peek().cloned() {
            args.next()?;
            if w.eq_ignore_ascii_case(b"read_only") {
                read_only = true;
            } else if w.eq_ignore_ascii_case(b"no_header") {
                header = false;
            } else if w.eq_ignore_ascii_case(b"args") {
                rest = args.rest();
            } else if w.eq_ignore_ascii_case(b"into") {
                return Err(CmdError::REDISQL_INTO_STREAM);
            } else {
                return Err(CmdError::Syntax);
            }
        }
        args.finish()?;
        let params = params(rest);
        let op = match (statement, read_only) {
            (true, read_only) => Op::Run {
                name: what,
                params,
                read_only,
            },
            (false, true) => Op::Query { sql: what, params },
            (false, false) => Op::Exec { sql: what, params },
        };
        on(args.name(), db, op, Shape::V2 { header })
    }

    fn parse_exec(args: &mut Args) -> Result<Parsed, CmdError> {
        RediSql::parse_statement(args, false)
    }

    fn parse_query(args: &mut Args) -> Result<Parsed, CmdError> {
        RediSql::parse_statement(args, true)
    }

    fn parse_create_statement(args: &mut Args) -> Result<Parsed, CmdError> {
        RediSql::parse_prepare(args, PrepareMode::Create)
    }

    fn parse_update_statement(args: &mut Args) -> Result<Parsed, CmdError> {
        RediSql::parse_prepare(args, PrepareMode::Update)
    }

    fn parse_prepare(args: &mut Args, mode: PrepareMode) -> Result<Parsed, CmdError> {
        let db = check_name(args.next()?)?;
        let name = text(args.next()?, "a statement name")?;
        let sql = text(args.next()?, "SQL")?;
        args.finish()?;
        on(args.name(), db, Op::Prepare { name, sql, mode }, Shape::V1)
    }

    fn parse_run(args: &mut Args, read_only: bool) -> Result<Parsed, CmdError> {
        let db = check_name(args.next()?)?;
        let name = text(args.next()?, "a statement name")?;
        let params = params(args.rest());
        args.finish()?;
        let op = Op::Run {
            name,
            params,
            read_only,
        };
        on(args.name(), db, op, Shape::V1)
    }

    fn parse_exec_statement(args: &mut Args) -> Result<Parsed, CmdError> {
        RediSql::parse_run(args, false)
    }

    fn parse_query_statement(args: &mut Args) -> Result<Parsed, CmdError> {
        RediSql::parse_run(args, true)
    }

    fn parse_delete_statement(args: &mut Args) -> Result<Parsed, CmdError> {
        let db = check_name(args.next()?)?;
        let name = text(args.next()?, "a statement name")?;
        args.finish()?;
        on(args.name(), db, Op::Unprepare { name }, Shape::V1)
    }

    fn parse_copy(args: &mut Args) -> Result<Parsed, CmdError> {
        let src = check_name(args.next()?)?;
        let dst = check_name(args.next()?)?;
        args.finish()?;
        Parsed::conn(RediSql::Copy(src, dst))
    }

    fn parse_statistics(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(RediSql::Statistics)
    }

    fn parse_version(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(RediSql::Version)
    }
}

/// The commands STATISTICS counts, in RediSQL's order.
const COUNTED: &[&str] = &[
    "create_db",
    "exec",
    "query",
    "create_statement",
    "exec_statement",
    "update_statement",
    "delete_statement",
    "query_statement",
    "copy",
];

fn statistics(server: &crate::state::Shared) -> Frame {
    let table = Table::get();
    let mut out = Vec::new();
    for name in COUNTED {
        let (mut calls, mut failed) = (0, 0);
        for full in [format!("redisql.{name}"), format!("redisql.{name}.now")] {
            if let Some((idx, _)) = table.lookup(full.as_bytes()) {
                let s = &server.cmd_stats[idx];
                calls += s.calls.load(Ordering::Relaxed);
                failed += s.failed_calls.load(Ordering::Relaxed);
            }
        }
        let upper = name.to_ascii_uppercase();
        for (label, n) in [
            (upper.clone(), calls),
            (format!("{upper} OK"), calls - failed),
            (format!("{upper} ERR"), failed),
        ] {
            out.push(Frame::Array(vec![
                Frame::Bulk(Bytes::from(label)),
                Frame::Integer(n as i64),
            ]));
        }
    }
    Frame::Array(out)
}

impl ConnCmd for RediSql {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            match *self {
                RediSql::CreateDb(db, place) => {
                    create(&c.server, db, place).await?;
                    Ok(Frame::ok())
                }
                RediSql::Copy(src, dst) => {
                    let from = c.server.sql.get(&src)?;
                    let to = c.server.sql.get(&dst)?;
                    tokio::task::spawn_blocking(move || to.copy_from(&from))
                        .await
                        .map_err(|e| CmdError::Internal(e.to_string()))??;
                    Ok(Frame::ok())
                }
                RediSql::Statistics => Ok(statistics(&c.server)),
                RediSql::Version => Ok(Frame::Bulk(Bytes::from_static(crate::VERSION.as_bytes()))),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::sql::args_of;

    fn err(f: fn(&mut Args) -> Result<Parsed, CmdError>, w: &[&str]) -> Option<CmdError> {
        f(&mut args_of("redisql", w)).err()
    }

    /// What each alias does: the command whose flags and ACL categories it must have.
    const COUNTERPARTS: &[(&str, &str)] = &[
        ("redisql.create_db", "sql.db|create"),
        ("redisql.exec", "sql.exec"),
        ("redisql.query", "sql.query"),
        ("redisql.create_statement", "sql.prepare"),
        ("redisql.update_statement", "sql.prepare"),
        ("redisql.exec_statement", "sql.run"),
        ("redisql.query_statement", "sql.query"),
        ("redisql.delete_statement", "sql.unprepare"),
        // Not SQL: they get their model's categories plus @sql.
        ("redisql.statistics", "info"),
        ("redisql.version", "time"),
    ];

    #[test]
    fn every_alias_has_the_flags_and_categories_of_what_it_does() {
        let table = Table::get();
        let mut n = 0;
        for s in table
            .specs
            .iter()
            .filter(|s| s.name.starts_with("redisql."))
        {
            n += 1;
            let base = s.name.trim_end_matches(".now");
            if base == "redisql.copy" {
                // Replaces a whole database, as FLUSHDB empties one.
                assert_eq!(s.acl, Spec::acl(&["write", "slow", "dangerous", "sql"]));
                assert_eq!(s.flags, Spec::flags(&["write", "denyoom"]));
                continue;
            }
            let (_, of) = COUNTERPARTS
                .iter()
                .find(|(a, _)| *a == base)
                .unwrap_or_else(|| panic!("{}: which SQL.* command does it do?", s.name));
            let (_, model) = table.lookup(of.as_bytes()).expect(of);
            let acl = model.acl.with(Spec::acl(&["sql"]));
            assert_eq!(s.acl, acl, "{} (as {of})", s.name);
            assert_eq!(s.flags, model.flags, "{} (as {of})", s.name);
        }
        assert_eq!(n, 20);
    }

    #[test]
    fn parse() {
        assert_eq!(err(RediSql::parse_create_db, &["DB"]), None);
        assert_eq!(err(RediSql::parse_create_db, &["DB", "f.sqlite"]), None);
        assert_eq!(
            err(RediSql::parse_create_db, &["DB", "f", "x"]),
            Some(CmdError::Syntax)
        );
        assert_eq!(err(RediSql::parse_exec, &["DB", "select 1"]), None);
        assert_eq!(
            err(RediSql::parse_exec, &["DB", "select 1", "x"]),
            Some(CmdError::Syntax)
        );
        assert_eq!(
            err(
                RediSql::parse_exec,
                &[
                    "DB",
                    "COMMAND",
                    "select ?1",
                    "READ_ONLY",
                    "NO_HEADER",
                    "ARGS",
                    "1"
                ]
            ),
            None
        );
        assert_eq!(
            err(RediSql::parse_exec, &["DB", "STATEMENT", "s", "ARGS"]),
            None
        );
        assert_eq!(
            err(RediSql::parse_exec, &["DB", "COMMAND", "select 1", "BOGUS"]),
            Some(CmdError::Syntax)
        );
        assert!(err(RediSql::parse_exec, &["DB", "COMMAND", "s", "INTO", "x"]).is_some());
        // A lone keyword is the SQL of the v1 form.
        assert_eq!(err(RediSql::parse_exec, &["DB", "COMMAND"]), None);
    }
}
