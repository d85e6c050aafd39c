//! SQL.STATEMENTS [DB name] — the prepared statements of a database, by name: an array of
//! `[name, sql, parameter count, read-only (1/0)]`. Relis command.

use super::{dispatch, parse_options, Op, Shape};
use crate::args::Args;
use crate::cmd::{Parsed, Spec};
use crate::error::CmdError;

/// SQL.STATEMENTS's declaration.
pub const SPEC: Spec = Spec {
    name: "sql.statements",
    arity: -1,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "slow", "sql"]),
    group: "sql",
    since: "0.1.0",
    summary: "List the prepared SQL statements",
    complexity: "O(N) where N is the number of prepared statements",
    parse: SqlStatements::parse,
    ..Spec::BASE
};

/// SQL.STATEMENTS.
pub struct SqlStatements;

impl SqlStatements {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let (target, _) = parse_options(args, 0, false)?;
        args.finish()?;
        dispatch(
            args.name(),
            target,
            Op::Statements,
            Shape::Sql { header: false },
        )
    }
}
