//! SQL.EXEC [DB name] [HEADER] sql [param ...] — run SQL: one statement with bound
//! parameters, or several `;`-separated statements without parameters, in one transaction.
//!
//! Replies: rows as an array of rows (with `HEADER`, a first row of column names); a statement
//! that changes rows, the number changed; a schema statement, `+OK`. With several statements,
//! the last one's reply (a change count counts the changes of all of them). On the main
//! database it runs on the writer inside the group commit, all or nothing by itself: inside
//! MULTI it joins the same transaction as the Redis commands. Relis command (no Redis
//! equivalent); see `cmd/sql/mod.rs` for the value mapping.

use super::{dispatch, params, parse_options, text, Op, Shape};
use crate::args::Args;
use crate::cmd::{Parsed, Spec};
use crate::error::CmdError;

/// SQL.EXEC's declaration.
pub const SPEC: Spec = Spec {
    name: "sql.exec",
    arity: -2,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["write", "slow", "sql"]),
    group: "sql",
    since: "0.1.0",
    summary: "Run SQL statements with bound parameters",
    complexity: "Depends on the SQL",
    parse: SqlExec::parse,
    ..Spec::BASE
};

/// SQL.EXEC.
pub struct SqlExec;

impl SqlExec {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let (target, header) = parse_options(args, 1, true)?;
        let sql = text(args.next()?, "SQL")?;
        let params = params(args.rest());
        args.finish()?;
        dispatch(
            args.name(),
            target,
            Op::Exec { sql, params },
            Shape::Sql { header },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::sql::args_of;

    #[test]
    fn parse() {
        let p = |w: &[&str]| SqlExec::parse(&mut args_of("sql.exec", w)).err();
        assert_eq!(p(&["select 1"]), None);
        assert_eq!(p(&["select ?", "1"]), None);
        assert_eq!(p(&["DB", "d", "HEADER", "select ?", "1"]), None);
        let e = SqlExec::parse(&mut crate::args::Args::new(
            "sql.exec",
            vec![bytes::Bytes::from_static(b"\xff")],
        ))
        .err();
        assert_eq!(e, Some(CmdError::err("SQL must be valid UTF-8")));
    }
}
