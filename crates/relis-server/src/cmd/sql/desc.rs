//! SQL.DESC [DB name] table — describe a table (AlchemyDB's DESC): its columns, its row count,
//! and the bytes used by the table and by each of its indexes (SQLite's `dbstat`). Replies a map
//! (a flat array in RESP2):
//! `columns` -> `[[name, type, notnull (1/0), default (nil if none), pk position], ...]`,
//! `rows` -> integer, `bytes` -> integer, `indexes` -> `[[name, bytes], ...]`. Relis command.

use super::{dispatch, parse_options, text, Op, Shape};
use crate::args::Args;
use crate::cmd::{Parsed, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use relis::TableInfo;
use resp::Frame;

/// SQL.DESC's declaration.
pub const SPEC: Spec = Spec {
    name: "sql.desc",
    arity: -2,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "slow", "sql"]),
    group: "sql",
    since: "0.1.0",
    summary: "Describe a SQL table: columns, rows, bytes of the table and its indexes",
    complexity: "O(N) where N is the number of rows",
    parse: SqlDesc::parse,
    ..Spec::BASE
};

/// SQL.DESC.
pub struct SqlDesc;

impl SqlDesc {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let (target, _) = parse_options(args, 1, false)?;
        let table = text(args.next()?, "a table name")?;
        args.finish()?;
        dispatch(
            args.name(),
            target,
            Op::Describe { table },
            Shape::Sql { header: false },
        )
    }
}

fn bulk(s: impl Into<String>) -> Frame {
    Frame::Bulk(Bytes::from(s.into()))
}

/// The reply for a description.
pub fn reply(info: TableInfo) -> Frame {
    let columns = info
        .columns
        .into_iter()
        .map(|c| {
            Frame::Array(vec![
                bulk(c.name),
                bulk(c.decl_type),
                Frame::Integer(c.not_null as i64),
                c.default.map_or(Frame::Null, bulk),
                Frame::Integer(c.pk),
            ])
        })
        .collect();
    let indexes = info
        .indexes
        .into_iter()
        .map(|(name, bytes)| Frame::Array(vec![bulk(name), Frame::Integer(bytes)]))
        .collect();
    Frame::Map(vec![
        (bulk("columns"), Frame::Array(columns)),
        (bulk("rows"), Frame::Integer(info.rows)),
        (bulk("bytes"), Frame::Integer(info.bytes)),
        (bulk("indexes"), Frame::Array(indexes)),
    ])
}
