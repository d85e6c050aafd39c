//! DBSIZE — the number of keys in the selected database. <https://redis.io/commands/dbsize/>
//!
//! Like Redis, the count includes keys that have expired but have not been removed yet (the
//! background sweep removes them in small batches); KEYS, SCAN and EXISTS never show them. Over
//! PostgreSQL the count leaves them out (the rows carry their expiry).

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use resp::Frame;

/// DBSIZE's declaration.
pub const SPEC: Spec = Spec {
    name: "dbsize",
    tips: &["request_policy:all_shards", "response_policy:agg_sum"],
    arity: 1,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["keyspace", "read", "fast"]),
    keys: (0, 0, 0),
    group: "server",
    since: "1.0.0",
    summary: "Return the number of keys in the selected database",
    complexity: "O(1)",
    parse: DbSize::parse,
    ..Spec::BASE
};

/// DBSIZE.
#[derive(Debug, PartialEq, Eq)]
pub struct DbSize;

impl DbSize {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::read(DbSize)
    }
}

impl ReadCmd for DbSize {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        Ok(Frame::Integer(r.dbsize(cx.db)?))
    }
}
