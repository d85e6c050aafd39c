//! SQL.QUERY [DB name] [HEADER] sql [param ...] — run SQL that only reads, on a reader: a
//! statement that would write is refused (`ERR statement would write ...`). Runs in parallel with
//! writes, never on the writer. Replies as SQL.EXEC does. Relis command.

use super::{dispatch, params, parse_options, text, Op, Shape};
use crate::args::Args;
use crate::cmd::{Parsed, Spec};
use crate::error::CmdError;

/// SQL.QUERY's declaration.
pub const SPEC: Spec = Spec {
    name: "sql.query",
    arity: -2,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "slow", "sql"]),
    group: "sql",
    since: "0.1.0",
    summary: "Run a read-only SQL statement on a reader",
    complexity: "Depends on the SQL",
    parse: SqlQuery::parse,
    ..Spec::BASE
};

/// SQL.QUERY.
pub struct SqlQuery;

impl SqlQuery {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let (target, header) = parse_options(args, 1, true)?;
        let sql = text(args.next()?, "SQL")?;
        let params = params(args.rest());
        args.finish()?;
        dispatch(
            args.name(),
            target,
            Op::Query { sql, params },
            Shape::Sql { header },
        )
    }
}
