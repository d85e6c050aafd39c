//! DUMP key — the value at `key` serialized as Redis 7.0 does, for RESTORE (here or on a
//! redis-server). <https://redis.io/commands/dump/>
//!
//! The payload is Redis's: the RDB object (type byte and value), RDB version 10 (u16 LE) and a
//! CRC-64 (u64 LE). Each value is written in the RDB type Redis 7.0 writes for the encoding
//! OBJECT ENCODING reports: strings with the integer and LZF encodings (`rdbcompression yes`),
//! lists as QUICKLIST_2 of listpack nodes up to 8 KB, listpack hashes and sorted sets as
//! HASH_LISTPACK / ZSET_LISTPACK, intsets as SET_INTSET, and the large encodings as HASH, SET
//! and ZSET_2 (binary scores, written from the highest rank as a skiplist is), streams as
//! STREAM_LISTPACKS_2 with their consumer groups.

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use rdb::stream::{Consumer, Group, Id, Pending};
use rdb::{Object, ObjectKind};
use relis::{StreamEntry, StreamGroupValue, StreamId, StreamMeta, StreamValue, Value};
use resp::Frame;

/// DUMP's declaration.
pub const SPEC: Spec = Spec {
    name: "dump",
    arity: 2,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["keyspace", "read", "slow"]),
    keys: (1, 1, 1),
    group: "generic",
    since: "2.6.0",
    summary: "Return a serialized version of the value stored at the specified key.",
    complexity: "O(1) to access the key and additional O(N*M) to serialize it, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1).",
    tips: &["nondeterministic_output"],
    key_flags: Spec::key_flags(&["RO", "access"]),
    parse: Dump::parse,
    ..Spec::BASE
};

/// DUMP key.
#[derive(Debug, PartialEq, Eq)]
pub struct Dump {
    key: Bytes,
}

impl Dump {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        args.finish()?;
        Parsed::read(Dump { key })
    }
}

/// The RDB object of an engine value.
pub fn to_object(v: Value) -> Object {
    match v {
        Value::String(s) => Object::String(s),
        Value::List(l) => Object::List(l),
        Value::Set(s) => Object::Set(s),
        Value::Hash(h) => Object::Hash(h),
        Value::ZSet(z) => Object::ZSet(z),
        Value::Stream(s) => Object::Stream(Box::new(stream_object(*s))),
    }
}

fn id(i: StreamId) -> Id {
    Id {
        ms: i.ms,
        seq: i.seq,
    }
}

fn sid(i: Id) -> StreamId {
    StreamId::new(i.ms, i.seq)
}

fn stream_object(s: StreamValue) -> rdb::Stream {
    rdb::Stream {
        first_id: s.entries.first().map(|e| id(e.id)).unwrap_or_default(),
        last_id: id(s.meta.last_id),
        max_deleted_id: id(s.meta.max_deleted_id),
        entries_added: s.meta.entries_added,
        entries: s
            .entries
            .into_iter()
            .map(|e| (id(e.id), e.fields))
            .collect(),
        groups: s
            .groups
            .into_iter()
            .map(|g| Group {
                name: g.name,
                last_id: id(g.last_id),
                entries_read: g.entries_read,
                pending: g
                    .pending
                    .into_iter()
                    .map(|(i, consumer, delivered, count)| Pending {
                        id: id(i),
                        delivery_time: delivered as u64,
                        delivery_count: count as u64,
                        consumer,
                    })
                    .collect(),
                consumers: g
                    .consumers
                    .into_iter()
                    .map(|(name, seen)| Consumer {
                        name,
                        seen_time: seen as u64,
                    })
                    .collect(),
            })
            .collect(),
    }
}

fn stream_value(s: rdb::Stream) -> StreamValue {
    StreamValue {
        meta: StreamMeta {
            length: s.entries.len() as u64,
            last_id: sid(s.last_id),
            max_deleted_id: sid(s.max_deleted_id),
            entries_added: s.entries_added,
        },
        entries: s
            .entries
            .into_iter()
            .map(|(i, fields)| StreamEntry { id: sid(i), fields })
            .collect(),
        groups: s
            .groups
            .into_iter()
            .map(|g| StreamGroupValue {
                name: g.name,
                last_id: sid(g.last_id),
                entries_read: g.entries_read,
                consumers: g
                    .consumers
                    .into_iter()
                    .map(|c| (c.name, c.seen_time as i64))
                    .collect(),
                pending: g
                    .pending
                    .into_iter()
                    .map(|p| {
                        (
                            sid(p.id),
                            p.consumer,
                            p.delivery_time as i64,
                            p.delivery_count as i64,
                        )
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// The engine value of an RDB object.
pub fn to_value(o: Object) -> Value {
    match o {
        Object::String(s) => Value::String(s),
        Object::List(l) => Value::List(l),
        Object::Set(s) => Value::Set(s),
        Object::Hash(h) => Value::Hash(h),
        Object::ZSet(z) => Value::ZSet(z),
        Object::Stream(s) => Value::Stream(Box::new(stream_value(*s))),
    }
}

/// The RDB encoding Redis would write a value of OBJECT ENCODING `encoding` in.
pub fn object_kind(encoding: &str) -> ObjectKind {
    match encoding {
        "listpack" | "intset" => ObjectKind::Compact,
        _ => ObjectKind::General,
    }
}

/// The type of the value a DUMP payload holds, from its first byte (the RDB object type, as
/// `rdb::payload::restore` reads it): over PostgreSQL, SCAN ... TYPE reads only that byte.
pub fn payload_type(first: u8) -> Option<relis::KeyType> {
    use rdb::types as t;
    Some(match first {
        t::STRING => relis::KeyType::String,
        t::LIST | t::LIST_ZIPLIST | t::LIST_QUICKLIST | t::LIST_QUICKLIST_2 => relis::KeyType::List,
        t::SET | t::SET_INTSET => relis::KeyType::Set,
        t::ZSET | t::ZSET_2 | t::ZSET_ZIPLIST | t::ZSET_LISTPACK => relis::KeyType::ZSet,
        t::HASH | t::HASH_ZIPMAP | t::HASH_ZIPLIST | t::HASH_LISTPACK => relis::KeyType::Hash,
        t::STREAM_LISTPACKS | t::STREAM_LISTPACKS_2 => relis::KeyType::Stream,
        _ => return None,
    })
}

/// A DUMP payload and the key's expiry (unix ms).
pub type Payload = (Vec<u8>, Option<i64>);

/// The DUMP payload of `key` and its expiry, or `None` for a missing key.
///
/// # Errors
/// Storage errors.
pub fn payload(r: &relis::Reader<'_>, db: u32, key: &[u8]) -> Result<Option<Payload>, CmdError> {
    let Some(d) = r.dump_value(db, key)? else {
        return Ok(None);
    };
    let kind = object_kind(d.encoding);
    Ok(Some((
        rdb::payload::dump(&to_object(d.value), kind),
        d.expire_at,
    )))
}

impl ReadCmd for Dump {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let p = payload(r, cx.db, &self.key)?;
        cx.hit(&self.key, p.is_some());
        Ok(p.map_or(Frame::Null, |(p, _)| Frame::Bulk(Bytes::from(p))))
    }
}
