//! SQL.FROMSTREAM [DB name] table key — the entries of the stream at `key` become rows of
//! `table`: an `id` column, the primary key, holding the entry's id (`ms-seq`), plus one column
//! per field, as SQL.FROMHASH writes hashes (types inferred from the values, missing columns
//! added, rows upserted by id, a field an entry lacks NULL; a field an entry repeats gives the
//! first value). The reverse of SQL.TOSTREAM. One transaction. Replies the number of rows
//! written; a missing key writes none (the table is still created). Relis command.
//!
//! ACL: the user must be allowed to read `key` (`-NOPERM` otherwise, nothing written).

use super::{parse_options, text, Target};
use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::{StreamEntry, StreamId};
use resp::Frame;

/// SQL.FROMSTREAM's declaration.
pub const SPEC: Spec = Spec {
    name: "sql.fromstream",
    arity: -3,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["write", "slow", "sql"]),
    group: "sql",
    since: "0.1.0",
    summary: "Write the entries of a stream as rows of a table",
    complexity: "O(N) where N is the number of entries in the stream",
    parse: FromStream::parse,
    ..Spec::BASE
};

/// SQL.FROMSTREAM.
pub struct FromStream {
    /// The command's name (its user's key access depends on it).
    cmd: &'static str,
    table: String,
    key: Bytes,
}

impl FromStream {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let (target, _) = parse_options(args, 2, false)?;
        let table = text(args.next()?, "a table name")?;
        let key = args.next()?;
        args.finish()?;
        let cmd = FromStream {
            cmd: args.name(),
            table,
            key,
        };
        match target {
            Target::Main => Parsed::write(cmd),
            Target::Named(db) => Parsed::conn(IntoNamed { db, cmd }),
        }
    }

    /// The stream's entries, all of them; none for a missing key.
    fn entries(&self, r: &relis::Reader<'_>, db: u32) -> Result<Vec<StreamEntry>, CmdError> {
        match r.xrange(db, &self.key, StreamId::MIN, StreamId::MAX, 0, false) {
            Err(relis::Error::WrongType) => Err(CmdError::WrongType),
            found => Ok(found?.unwrap_or_default()),
        }
    }
}

impl WriteCmd for FromStream {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        super::not_in_a_group(cx, self.cmd)?;
        let limits = cx.server.config.read().sql_limits();
        let access = cx.key_access(self.cmd);
        if !access.may_read(&self.key) {
            return Err(CmdError::NOPERM_KEYS);
        }
        let entries = self.entries(w, cx.db)?;
        let mut c = w.sql();
        c.set_access(access);
        let report = c.upsert_stream(&self.table, &entries, &limits)?;
        Ok(Frame::Integer(report.rows as i64))
    }

    fn on_postgres(&self) -> Option<Box<dyn ConnCmd>> {
        Some(Box::new(FromStreamOnPostgres {
            cmd: FromStream {
                cmd: self.cmd,
                table: self.table.clone(),
                key: self.key.clone(),
            },
        }))
    }
}

/// SQL.FROMSTREAM over the PostgreSQL backend: a read declaring the stream's key loads its
/// entries, then the rows are upserted into PostgreSQL.
pub struct FromStreamOnPostgres {
    cmd: FromStream,
}

impl ConnCmd for FromStreamOnPostgres {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            super::postgres_sql(c, self.cmd.cmd)?;
            let db = c.db;
            let name = self.cmd.cmd;
            let table = self.cmd.table.clone();
            let declared = vec![(db, self.cmd.key.to_vec())];
            let cmd = self.cmd;
            let entries =
                crate::cmd::read_declared(c, declared, move |r| cmd.entries(r, db)).await?;
            super::copy_into_postgres(c, name, entries, move |s, entries, limits| {
                s.upsert_stream(&table, &entries, limits)
            })
            .await
        })
    }
}

/// SQL.FROMSTREAM into a named database: the entries are read from a snapshot of the keyspace,
/// then written there in one transaction.
pub struct IntoNamed {
    db: String,
    cmd: FromStream,
}

impl ConnCmd for IntoNamed {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let limits = c.server.config.read().sql_limits();
            let access = c.cx().key_access(self.cmd.cmd);
            if !access.may_read(&self.cmd.key) {
                return Err(CmdError::NOPERM_KEYS);
            }
            let db = c.db;
            let IntoNamed { db: named, cmd } = *self;
            let table = cmd.table.clone();
            super::copy_into_named(
                c,
                &named,
                access,
                move |r| cmd.entries(r, db),
                move |conn, entries| conn.upsert_stream(&table, &entries, &limits),
            )
            .await
        })
    }
}
