//! SQL.UNPREPARE [DB name] stmt — forget the prepared statement `stmt`. Replies 1 if it
//! existed, 0 if not (as DEL counts). Relis command.

use super::{dispatch, parse_options, text, Op, Shape};
use crate::args::Args;
use crate::cmd::{Parsed, Spec};
use crate::error::CmdError;

/// SQL.UNPREPARE's declaration.
pub const SPEC: Spec = Spec {
    name: "sql.unprepare",
    arity: -2,
    flags: Spec::flags(&["write"]),
    acl: Spec::acl(&["write", "slow", "sql"]),
    group: "sql",
    since: "0.1.0",
    summary: "Forget a prepared SQL statement",
    parse: SqlUnprepare::parse,
    ..Spec::BASE
};

/// SQL.UNPREPARE.
pub struct SqlUnprepare;

impl SqlUnprepare {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let (target, _) = parse_options(args, 1, false)?;
        let name = text(args.next()?, "a statement name")?;
        args.finish()?;
        dispatch(
            args.name(),
            target,
            Op::Unprepare { name },
            Shape::Sql { header: false },
        )
    }
}
