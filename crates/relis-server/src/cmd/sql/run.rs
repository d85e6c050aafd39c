//! SQL.RUN [DB name] [HEADER] stmt [param ...] — run the prepared statement `stmt` with its
//! parameters, on the writer (it may write). Replies as SQL.EXEC does. Relis command.

use super::{dispatch, params, parse_options, text, Op, Shape};
use crate::args::Args;
use crate::cmd::{Parsed, Spec};
use crate::error::CmdError;

/// SQL.RUN's declaration.
pub const SPEC: Spec = Spec {
    name: "sql.run",
    arity: -2,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["write", "slow", "sql"]),
    group: "sql",
    since: "0.1.0",
    summary: "Run a prepared SQL statement",
    complexity: "Depends on the SQL",
    parse: SqlRun::parse,
    ..Spec::BASE
};

/// SQL.RUN.
pub struct SqlRun;

impl SqlRun {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let (target, header) = parse_options(args, 1, true)?;
        let name = text(args.next()?, "a statement name")?;
        let params = params(args.rest());
        args.finish()?;
        let op = Op::Run {
            name,
            params,
            read_only: false,
        };
        dispatch(args.name(), target, op, Shape::Sql { header })
    }
}
