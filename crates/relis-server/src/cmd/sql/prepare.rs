//! SQL.PREPARE [DB name] stmt sql — compile `sql` (one statement, in the sandbox) and store it
//! as the prepared statement `stmt` of that database, replacing one of the same name. It lives in
//! the database itself (`relis_statements`), so it survives restarts. Replies `+OK`. Relis
//! command.

use super::{dispatch, parse_options, text, Op, Shape};
use crate::args::Args;
use crate::cmd::{Parsed, Spec};
use crate::error::CmdError;
use relis::PrepareMode;

/// SQL.PREPARE's declaration.
pub const SPEC: Spec = Spec {
    name: "sql.prepare",
    arity: -3,
    flags: Spec::flags(&["write"]),
    acl: Spec::acl(&["write", "slow", "sql"]),
    group: "sql",
    since: "0.1.0",
    summary: "Store a prepared SQL statement",
    parse: SqlPrepare::parse,
    ..Spec::BASE
};

/// SQL.PREPARE.
pub struct SqlPrepare;

impl SqlPrepare {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let (target, _) = parse_options(args, 2, false)?;
        let name = text(args.next()?, "a statement name")?;
        let sql = text(args.next()?, "SQL")?;
        args.finish()?;
        let op = Op::Prepare {
            name,
            sql,
            mode: PrepareMode::Upsert,
        };
        dispatch(args.name(), target, op, Shape::Sql { header: false })
    }
}
