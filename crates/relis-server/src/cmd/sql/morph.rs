//! SQL.TOHASH / SQL.TOSTRING / SQL.TOLIST / SQL.TOSET / SQL.TOZSET / SQL.TOSTREAM — query results
//! become Redis structures (AlchemyDB's DENORM and `STORE ... $`, generalised). One shared core,
//! six thin variants.
//!
//! `SQL.TO<TYPE> [DB name] [REPLACE] [EX seconds | PX milliseconds] key-template select [param ...]`
//!
//! The select runs (read-only) on the main database or the named one; its rows are written to
//! the keyspace of the connection's selected database, atomically. `{column}` placeholders in
//! the key template take each row's values, so one command can fan out to many keys; the
//! columns the template uses are not values.
//! - TOHASH: each row becomes a hash; the other columns become its fields (NULLs skipped).
//!   Replies the number of hashes written.
//! - TOSTRING: the one other column becomes the string's value (as SET: old value and TTL go;
//!   NULL rows skipped). Replies the number of strings written.
//! - TOLIST: the one other column is pushed at the list's tail, in row order. Replies the number
//!   of elements pushed.
//! - TOSET: the one other column is added to the set. Replies the number of new members.
//! - TOZSET: the two other columns, member then score, are added to the sorted set. Replies the
//!   number of new members.
//! - TOSTREAM: each row becomes an entry (id from the clock, as XADD's `*`, in row order); the
//!   other columns become its fields, NULLs skipped. Replies the number of entries added.
//!
//! REPLACE deletes each key (of any type) before its first write; otherwise hashes merge, lists
//! append, sets and sorted sets add, and a key of another type is a WRONGTYPE error (nothing is
//! written then). EX/PX give every written key that TTL. Relis commands. Clients blocked on a key
//! (BLPOP ...) are not woken by these commands.
//!
//! ACL: the query sees only the keys the user may read (the `redis_*` views filter them), and
//! every key a row names must be one the user may write (`~p`, `%W~p`, `allkeys`): the first
//! that is not fails the command with `-NOPERM this user has no permissions to access one of
//! the keys used as arguments`, nothing of it is written, and ACL LOG records the key.

use super::{params, parse_options, refused, text, Target};
use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::sql::Morph;
use relis::{KeyTemplate, MorphOptions, SqlValue};
use resp::Frame;

macro_rules! spec {
    ($name:expr, $summary:expr, $parse:expr) => {
        Spec {
            name: $name,
            arity: -3,
            flags: Spec::flags(&["write", "denyoom"]),
            acl: Spec::acl(&["write", "slow", "sql"]),
            group: "sql",
            since: "0.1.0",
            summary: $summary,
            complexity: "O(N) where N is the number of rows",
            parse: $parse,
            ..Spec::BASE
        }
    };
}

/// SQL.TOHASH's declaration.
pub const SPEC_TOHASH: Spec = spec!("sql.tohash", "Write each row of a query as a hash", |a| {
    ToRedis::parse(a, Morph::Hash, "sql.tohash")
});
/// SQL.TOSTRING's declaration.
pub const SPEC_TOSTRING: Spec = spec!(
    "sql.tostring",
    "Write each row of a query as a string",
    |a| ToRedis::parse(a, Morph::String, "sql.tostring")
);
/// SQL.TOLIST's declaration.
pub const SPEC_TOLIST: Spec = spec!("sql.tolist", "Push the rows of a query onto lists", |a| {
    ToRedis::parse(a, Morph::List, "sql.tolist")
});
/// SQL.TOSET's declaration.
pub const SPEC_TOSET: Spec = spec!("sql.toset", "Add the rows of a query to sets", |a| {
    ToRedis::parse(a, Morph::Set, "sql.toset")
});
/// SQL.TOSTREAM's declaration.
pub const SPEC_TOSTREAM: Spec = spec!(
    "sql.tostream",
    "Append the rows of a query to streams as entries",
    |a| ToRedis::parse(a, Morph::Stream, "sql.tostream")
);
/// SQL.TOZSET's declaration.
pub const SPEC_TOZSET: Spec = spec!(
    "sql.tozset",
    "Add the (member, score) rows of a query to sorted sets",
    |a| ToRedis::parse(a, Morph::ZSet, "sql.tozset")
);

/// A SQL.TO* command.
pub struct ToRedis {
    /// The command's name (its user's key access depends on it).
    cmd: &'static str,
    kind: Morph,
    template: Bytes,
    sql: String,
    params: Vec<SqlValue>,
    opts: MorphOptions,
}

/// An EX/PX amount in milliseconds, checked as SET checks it.
fn ttl(amount: &[u8], seconds: bool, cmd: &'static str) -> Result<i64, CmdError> {
    crate::cmd::string::set::expire_ms(amount, seconds, cmd)
}

impl ToRedis {
    fn parse(args: &mut Args, kind: Morph, name: &'static str) -> Result<Parsed, CmdError> {
        let (mut target, _) = parse_options(args, 2, false)?;
        let mut opts = MorphOptions::default();
        loop {
            if args.remaining() > 2 && args.eat("replace") {
                opts.replace = true;
            } else if opts.ttl_ms.is_none()
                && args.remaining() > 3
                && args
                    .peek()
                    .is_some_and(|w| w.eq_ignore_ascii_case(b"ex") || w.eq_ignore_ascii_case(b"px"))
            {
                let seconds = args.next()?.eq_ignore_ascii_case(b"ex");
                opts.ttl_ms = Some(ttl(&args.next()?, seconds, name)?);
            } else if target == Target::Main && args.remaining() > 3 && args.eat("db") {
                target = Target::Named(text(args.next()?, "a database name")?);
            } else {
                break;
            }
        }
        let template = args.next()?;
        let sql = text(args.next()?, "SQL")?;
        let params = params(args.rest());
        args.finish()?;
        let cmd = ToRedis {
            cmd: name,
            kind,
            template,
            sql,
            params,
            opts,
        };
        match target {
            Target::Main => Parsed::write(cmd),
            Target::Named(db) => Parsed::conn(FromNamed { db, cmd }),
        }
    }
}

impl WriteCmd for ToRedis {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        super::not_in_a_group(cx, self.cmd)?;
        let limits = cx.server.config.read().sql_limits();
        let opts = MorphOptions {
            access: cx.key_access(self.cmd),
            ..self.opts.clone()
        };
        let n = w
            .sql_morph(
                self.kind,
                cx.db,
                &KeyTemplate::parse(&self.template),
                &self.sql,
                self.params.clone(),
                &opts,
                &limits,
            )
            .map_err(|e| refused(cx, e))?;
        Ok(Frame::Integer(n))
    }

    fn on_postgres(&self) -> Option<Box<dyn ConnCmd>> {
        Some(Box::new(FromPostgres {
            cmd: ToRedis {
                cmd: self.cmd,
                kind: self.kind,
                template: self.template.clone(),
                sql: self.sql.clone(),
                params: self.params.clone(),
                opts: self.opts.clone(),
            },
        }))
    }
}

/// Writes a query's rows as `cmd` says, in one write job of the keyspace that declares the
/// keys the rows name (the PostgreSQL backend locks and loads them; SQLite ignores them).
async fn write_rows(
    c: &mut Client,
    cmd: ToRedis,
    out: relis::SqlOutput,
) -> Result<Frame, CmdError> {
    let cx = c.cx();
    let ToRedis {
        cmd: name,
        kind,
        template,
        opts,
        ..
    } = cmd;
    let opts = MorphOptions {
        access: cx.key_access(name),
        ..opts
    };
    let template = KeyTemplate::parse(&template);
    let db = c.db;
    let keys = template
        .keys(&out)
        .map_err(|e| refused(&cx, e))?
        .into_iter()
        .map(|k| (db, k))
        .collect();
    let (tx, rx) = tokio::sync::oneshot::channel();
    c.server.db.write_async_keys(
        keys,
        move |w| {
            w.set_origin(cx.client_id);
            w.atomic(|w| {
                w.rows_to(kind, db, &template, &out, &opts)
                    .map_err(|e| refused(&cx, e))
            })
        },
        move |r| {
            let _ = tx.send(r);
        },
    );
    let n = rx
        .await
        .map_err(|_| CmdError::from(relis::Error::Closed))?
        .map_err(CmdError::from)??;
    Ok(Frame::Integer(n))
}

/// A SQL.TO* command over the PostgreSQL backend: the query runs on PostgreSQL (read-only, as
/// SQL.QUERY), then its rows are written as from a named database. Two transactions, not one:
/// a row the query read may change before the keys are written.
pub struct FromPostgres {
    cmd: ToRedis,
}

impl ConnCmd for FromPostgres {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let pg = super::postgres_sql(c, self.cmd.cmd)?;
            let limits = c.server.config.read().sql_limits();
            let (sql, params) = (self.cmd.sql.clone(), self.cmd.params.clone());
            let out =
                tokio::task::spawn_blocking(move || pg.session()?.query(&sql, params, &limits))
                    .await
                    .map_err(|_| CmdError::from(relis::Error::Closed))??;
            write_rows(c, self.cmd, out).await
        })
    }
}

/// A SQL.TO* command whose query runs on a named database: the rows are read there, then
/// written to the keyspace in one write job.
pub struct FromNamed {
    db: String,
    cmd: ToRedis,
}

impl ConnCmd for FromNamed {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let named = c.server.sql.get(&self.db)?;
            let limits = c.server.config.read().sql_limits();
            let query_access = c.cx().key_access(self.cmd.cmd);
            let (sql, params) = (self.cmd.sql.clone(), self.cmd.params.clone());
            let (tx, rx) = tokio::sync::oneshot::channel();
            named.read_async(
                move |conn| {
                    conn.set_access(query_access);
                    conn.query(&sql, params, &limits)
                },
                move |r| {
                    let _ = tx.send(r);
                },
            );
            let out = rx
                .await
                .map_err(|_| CmdError::from(relis::Error::Closed))??;
            write_rows(c, self.cmd, out).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::sql::args_of;

    #[test]
    fn parse() {
        let p = |w: &[&str]| {
            ToRedis::parse(&mut args_of("sql.tohash", w), Morph::Hash, "sql.tohash").err()
        };
        assert_eq!(p(&["u:{id}", "select 1 as id"]), None);
        assert_eq!(p(&["REPLACE", "EX", "10", "u:{id}", "select ?", "1"]), None);
        assert_eq!(
            p(&["DB", "d", "PX", "5", "REPLACE", "u:{id}", "select 1"]),
            None
        );
        assert_eq!(
            p(&["EX", "0", "u", "select 1"]),
            Some(CmdError::InvalidExpire("sql.tohash"))
        );
        assert_eq!(p(&["EX", "x", "u", "select 1"]), Some(CmdError::NotInteger));
        // Option words with nothing after them are the template and the SQL.
        assert_eq!(p(&["REPLACE", "select 1"]), None);
    }
}
