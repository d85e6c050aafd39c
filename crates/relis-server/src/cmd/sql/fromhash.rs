//! SQL.FROMHASH [DB name] table pattern — the hashes of the selected database whose keys match
//! the glob `pattern` become rows of `table` (AlchemyDB's NORM): a `key` column, the primary
//! key, holding the hash's key, plus one column per field. A missing table is created with each
//! column's type inferred from the values (INTEGER if all are integers, REAL if all are numbers,
//! TEXT otherwise); an existing one gains the columns it lacks, and rows are upserted by key (a
//! field a hash lacks is NULL in its row). One transaction. Replies the number of rows written.
//! Relis command.
//!
//! ACL: only the hashes the user may read are copied; the others are left out, as the
//! `redis_*` views leave them out (SQL.FROMHASH is a query over `redis_hashes` by key pattern,
//! and answers what that query would; an error would tell the user that a key it may not read
//! exists).

use super::{parse_options, text, Target};
use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// SQL.FROMHASH's declaration.
pub const SPEC: Spec = Spec {
    name: "sql.fromhash",
    arity: -3,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["write", "slow", "sql"]),
    group: "sql",
    since: "0.1.0",
    summary: "Write the hashes matching a pattern as rows of a table",
    complexity: "O(N) where N is the number of keys in the database",
    parse: FromHash::parse,
    ..Spec::BASE
};

/// SQL.FROMHASH.
pub struct FromHash {
    /// The command's name (its user's key access depends on it).
    cmd: &'static str,
    table: String,
    pattern: Bytes,
}

impl FromHash {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let (target, _) = parse_options(args, 2, false)?;
        let table = text(args.next()?, "a table name")?;
        let pattern = args.next()?;
        args.finish()?;
        let cmd = FromHash {
            cmd: args.name(),
            table,
            pattern,
        };
        match target {
            Target::Main => Parsed::write(cmd),
            Target::Named(db) => Parsed::conn(IntoNamed { db, cmd }),
        }
    }
}

impl WriteCmd for FromHash {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        super::not_in_a_group(cx, self.cmd)?;
        let limits = cx.server.config.read().sql_limits();
        let access = cx.key_access(self.cmd);
        let hashes = w.hashes_matching(cx.db, &self.pattern, &access)?;
        let mut c = w.sql();
        c.set_access(access);
        let report = c.upsert_hashes(&self.table, &hashes, &limits)?;
        Ok(Frame::Integer(report.rows as i64))
    }

    fn on_postgres(&self) -> Option<Box<dyn ConnCmd>> {
        Some(Box::new(FromHashOnPostgres {
            cmd: self.cmd,
            table: self.table.clone(),
            pattern: self.pattern.clone(),
        }))
    }
}

/// SQL.FROMHASH over the PostgreSQL backend: the matching keys are listed (from the shared
/// key table), a read declaring them loads the hashes, and the rows are upserted into
/// PostgreSQL. A hash created between the listing and the read is left out.
pub struct FromHashOnPostgres {
    cmd: &'static str,
    table: String,
    pattern: Bytes,
}

impl ConnCmd for FromHashOnPostgres {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            super::postgres_sql(c, self.cmd)?;
            let db = c.db;
            let pattern = self.pattern.clone();
            let keys = crate::cmd::read_declared(c, Vec::new(), move |r| Ok(r.keys(db, &pattern)?))
                .await?;
            let access = c.cx().key_access(self.cmd);
            let FromHashOnPostgres {
                cmd,
                table,
                pattern,
            } = *self;
            let declared = keys.into_iter().map(|k| (db, k.to_vec())).collect();
            let hashes = crate::cmd::read_declared(c, declared, move |r| {
                Ok(r.hashes_matching(db, &pattern, &access)?)
            })
            .await?;
            super::copy_into_postgres(c, cmd, hashes, move |s, hashes, limits| {
                s.upsert_hashes(&table, &hashes, limits)
            })
            .await
        })
    }
}

/// SQL.FROMHASH into a named database: the hashes are read from a snapshot of the keyspace,
/// then written there in one transaction.
pub struct IntoNamed {
    db: String,
    cmd: FromHash,
}

impl ConnCmd for IntoNamed {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let limits = c.server.config.read().sql_limits();
            let access = c.cx().key_access(self.cmd.cmd);
            let FromHash { table, pattern, .. } = self.cmd;
            let db = c.db;
            let read_access = access.clone();
            super::copy_into_named(
                c,
                &self.db,
                access,
                move |r| Ok(r.hashes_matching(db, &pattern, &read_access)?),
                move |conn, hashes| conn.upsert_hashes(&table, &hashes, &limits),
            )
            .await
        })
    }
}
