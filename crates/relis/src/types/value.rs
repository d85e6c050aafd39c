//! Whole values of any type: read at once (DUMP, MIGRATE) and written at once (RESTORE), in one
//! write transaction with a bulk insert of the elements. The engine knows nothing of the
//! serialization; the server converts to and from Redis's RDB payloads.

use crate::backend::sqlite::sql::value as q;
use crate::backend::sqlite::stmt::prepare;
use crate::backend::sqlite::store::{KeyType, Reader, Writer};
use crate::error::Result;
use crate::types::stream::{dec, enc, StreamEntry, StreamId, StreamMeta};
use crate::types::zset::{ZRange, ZRangeBy};
use bytes::Bytes;

/// A whole value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A string.
    String(Bytes),
    /// A list, head first.
    List(Vec<Bytes>),
    /// A set's members.
    Set(Vec<Bytes>),
    /// A hash's (field, value) pairs.
    Hash(Vec<(Bytes, Bytes)>),
    /// A sorted set's (member, score) pairs in rank order.
    ZSet(Vec<(Bytes, f64)>),
    /// A stream with its consumer groups.
    Stream(Box<StreamValue>),
}

/// A whole stream: entries, numbers and consumer groups.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamValue {
    /// Entries in id order.
    pub entries: Vec<StreamEntry>,
    /// Last id, largest deleted id, entries added (`length` is the number of entries).
    pub meta: StreamMeta,
    /// Consumer groups by name.
    pub groups: Vec<StreamGroupValue>,
}

/// A consumer group, whole.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamGroupValue {
    /// Its name.
    pub name: Bytes,
    /// Last delivered id.
    pub last_id: StreamId,
    /// Entries read (`None`: unknown).
    pub entries_read: Option<u64>,
    /// Consumers: name and last-seen unix ms.
    pub consumers: Vec<(Bytes, i64)>,
    /// Pending entries: id, consumer, last delivery (unix ms), delivery count.
    pub pending: Vec<(StreamId, Bytes, i64, i64)>,
}

/// A value as [`Reader::dump_value`] reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct Dumped {
    /// The value.
    pub value: Value,
    /// Redis's name for its encoding (as OBJECT ENCODING says), which decides how Redis would
    /// serialize it.
    pub encoding: &'static str,
    /// Expiry as unix milliseconds, if any.
    pub expire_at: Option<i64>,
}

/// RESTORE's options, resolved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RestoreOptions {
    /// Replace an existing key (deleted in the same transaction).
    pub replace: bool,
    /// Absolute expiry in unix milliseconds (`None`: none).
    pub expire_at: Option<i64>,
    /// IDLETIME in seconds: the key looks written that long ago.
    pub idle_secs: Option<i64>,
}

/// What [`Writer::restore_value`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Restored {
    /// The key exists and REPLACE was not given: nothing written.
    Busy,
    /// The value was written.
    Written,
    /// The expiry is already past: nothing written; `true` if an existing key was deleted.
    Expired(bool),
}

/// The type a value is stored as.
pub(crate) fn kind_of(v: &Value) -> KeyType {
    match v {
        Value::String(_) => KeyType::String,
        Value::List(_) => KeyType::List,
        Value::Set(_) => KeyType::Set,
        Value::Hash(_) => KeyType::Hash,
        Value::ZSet(_) => KeyType::ZSet,
        Value::Stream(_) => KeyType::Stream,
    }
}

impl Reader<'_> {
    /// The whole value at `key` with its encoding and expiry; `None` for a missing key.
    ///
    /// # Errors
    /// Storage errors.
    pub fn dump_value(&self, db: u32, key: &[u8]) -> Result<Option<Dumped>> {
        let Some((info, string)) = self.object_and_string(db, key)? else {
            return Ok(None);
        };
        let value = match info.meta.kind {
            KeyType::String => Value::String(match string {
                Some(v) => v,
                None => self.get(db, key)?.unwrap_or_default(),
            }),
            KeyType::List => Value::List(self.lrange(db, key, 0, -1)?.unwrap_or_default()),
            KeyType::Set => Value::Set(self.smembers(db, key)?.unwrap_or_default()),
            KeyType::Hash => Value::Hash(self.hgetall(db, key)?.unwrap_or_default()),
            KeyType::ZSet => {
                let spec = ZRange {
                    by: ZRangeBy::Rank(0, -1),
                    rev: false,
                    limit: None,
                };
                Value::ZSet(self.zrange(db, key, &spec)?.unwrap_or_default())
            }
            KeyType::Stream => Value::Stream(Box::new(self.stream_value(db, key, &info.meta)?)),
        };
        Ok(Some(Dumped {
            value,
            encoding: info.encoding,
            expire_at: info.meta.expire_at,
        }))
    }
}

impl Reader<'_> {
    fn stream_value(&self, db: u32, key: &[u8], meta: &crate::KeyMeta) -> Result<StreamValue> {
        let numbers = self.stream_numbers(meta, db, key)?;
        let max = StreamId::new(u64::MAX, u64::MAX);
        let entries = self.stream_entries(meta.id, StreamId::new(0, 0), max, 0, false)?;
        let blob = |r: &rusqlite::Row<'_>, i| -> rusqlite::Result<Bytes> {
            Ok(Bytes::copy_from_slice(r.get_ref(i)?.as_blob()?))
        };
        let mut groups: Vec<StreamGroupValue> = prepare(self.conn, q::STREAM_GROUPS)?
            .query_map([meta.id], |r| {
                Ok(StreamGroupValue {
                    name: blob(r, 0)?,
                    last_id: StreamId::new(dec(r.get(1)?), dec(r.get(2)?)),
                    entries_read: r
                        .get::<_, Option<i64>>(3)?
                        .and_then(|n| u64::try_from(n).ok()),
                    ..StreamGroupValue::default()
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        let mut st = prepare(self.conn, q::STREAM_CONSUMERS)?;
        let mut rows = st.query([meta.id])?;
        while let Some(r) = rows.next()? {
            let grp = blob(r, 0)?;
            if let Some(g) = groups.iter_mut().find(|g| g.name == grp) {
                g.consumers.push((blob(r, 1)?, r.get(2)?));
            }
        }
        let mut st = prepare(self.conn, q::STREAM_PENDING)?;
        let mut rows = st.query([meta.id])?;
        while let Some(r) = rows.next()? {
            let grp = blob(r, 0)?;
            if let Some(g) = groups.iter_mut().find(|g| g.name == grp) {
                let id = StreamId::new(dec(r.get(1)?), dec(r.get(2)?));
                g.pending.push((id, blob(r, 3)?, r.get(4)?, r.get(5)?));
            }
        }
        Ok(StreamValue {
            entries,
            meta: numbers,
            groups,
        })
    }
}

impl Reader<'_> {
    /// Every live key of database `db` with its whole value, in key order, handed to `f` one
    /// at a time (RDB export: the keyspace never has to fit in memory). All of it is read in
    /// this reader's one snapshot. An error from `f` stops the walk and is returned.
    ///
    /// # Errors
    /// Storage errors, or `f`'s.
    pub fn each_dumped<E: From<crate::Error>>(
        &self,
        db: u32,
        mut f: impl FnMut(&[u8], Dumped) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        // Not from the statement table: the values are read with its statements meanwhile.
        let mut st = self
            .conn
            .prepare(&q::live_keys())
            .map_err(crate::Error::from)?;
        let mut rows = st
            .query(rusqlite::named_params! {":db": db, ":now": self.now})
            .map_err(crate::Error::from)?;
        while let Some(row) = rows.next().map_err(crate::Error::from)? {
            let key: Vec<u8> = row.get(0).map_err(crate::Error::from)?;
            if let Some(d) = self.dump_value(db, &key)? {
                f(&key, d)?;
            }
        }
        Ok(())
    }
}

impl Writer<'_> {
    /// Creates the stream `s` at `key` (which does not exist), all its rows at once.
    fn put_stream(&mut self, db: u32, key: &[u8], s: &StreamValue) -> Result<()> {
        let kid = self.next_version();
        let meta = StreamMeta {
            length: s.entries.len() as u64,
            ..s.meta
        };
        prepare(self.conn, q::INSERT_STREAM_KEY)?.execute((
            db,
            key,
            kid,
            s.entries.len() as i64,
            self.now,
            &crate::types::stream::encode_meta(&meta)[..],
        ))?;
        self.count_new_key(db, None);
        self.note_new(db, key);
        let mut st = prepare(self.conn, q::INSERT_STREAM_ENTRY)?;
        for e in &s.entries {
            st.execute((
                kid,
                enc(e.id.ms),
                enc(e.id.seq),
                crate::types::stream::encode_fields(&e.fields),
            ))?;
        }
        for g in &s.groups {
            let read = g.entries_read.and_then(|n| i64::try_from(n).ok());
            prepare(self.conn, q::INSERT_STREAM_GROUP)?.execute((
                kid,
                &g.name[..],
                enc(g.last_id.ms),
                enc(g.last_id.seq),
                read,
            ))?;
            for (name, seen) in &g.consumers {
                prepare(self.conn, q::INSERT_STREAM_CONSUMER)?.execute((
                    kid,
                    &g.name[..],
                    &name[..],
                    seen,
                ))?;
            }
            for (id, consumer, delivered, count) in &g.pending {
                prepare(self.conn, q::INSERT_STREAM_PENDING)?.execute((
                    kid,
                    &g.name[..],
                    enc(id.ms),
                    enc(id.seq),
                    &consumer[..],
                    delivered,
                    count,
                ))?;
            }
        }
        Ok(())
    }

    /// RESTORE: writes `value` at `key` whole. An existing key is [`Restored::Busy`] unless
    /// `replace`, when it is deleted first in the same transaction; an expiry not in the future
    /// writes nothing (and deletes what REPLACE would have replaced), as Redis does. The
    /// collection is created by one bulk insert of its elements, so the encoding follows the
    /// same thresholds as if it had been built by commands. A collection must not be empty.
    ///
    /// # Errors
    /// Storage errors.
    pub fn restore_value(
        &mut self,
        db: u32,
        key: &[u8],
        value: &Value,
        opts: RestoreOptions,
    ) -> Result<Restored> {
        let old = self.meta_for_write(db, key)?;
        if old.is_some() && !opts.replace {
            return Ok(Restored::Busy);
        }
        if let Some(m) = &old {
            self.delete_key(db, key, m)?;
        }
        if opts.expire_at.is_some_and(|at| at <= self.expiry_now) {
            return Ok(Restored::Expired(old.is_some()));
        }
        self.write_restored(db, key, value, opts)
    }

    /// [`Writer::restore_value`] of a key the caller knows is not there (an RDB import into a
    /// database that was empty when it began): no lookup of the key first.
    ///
    /// # Errors
    /// Storage errors; one (a unique constraint) if the key exists after all.
    pub fn restore_new_value(
        &mut self,
        db: u32,
        key: &[u8],
        value: &Value,
        opts: RestoreOptions,
    ) -> Result<Restored> {
        if opts.expire_at.is_some_and(|at| at <= self.expiry_now) {
            return Ok(Restored::Expired(false));
        }
        self.write_restored(db, key, value, opts)
    }

    /// Writes the value of a key that is not there, with its expiry and idle time.
    fn write_restored(
        &mut self,
        db: u32,
        key: &[u8],
        value: &Value,
        opts: RestoreOptions,
    ) -> Result<Restored> {
        match value {
            // The key row takes its expiry as it is inserted (its mtime is now, its version
            // new): no second statement for the metadata, on the commonest value.
            Value::String(s) if opts.idle_secs.is_none() => {
                self.put_string(db, key, None, s, Some(opts.expire_at))?;
                return Ok(Restored::Written);
            }
            Value::String(s) => self.put_string(db, key, None, s, None)?,
            Value::List(items) => {
                self.push(db, key, items, crate::types::list::End::Right, false)?;
            }
            Value::Set(members) => {
                self.sadd(db, key, members)?;
            }
            Value::Hash(pairs) => {
                self.hset(db, key, pairs)?;
            }
            Value::ZSet(pairs) => {
                self.z_store(db, key, pairs)?;
            }
            Value::Stream(s) => self.put_stream(db, key, s)?,
        }
        let version = self.next_version();
        let mtime = self.now - opts.idle_secs.unwrap_or(0).saturating_mul(1000);
        // The row was just made without an expiry: the first statement finds it so. (The
        // second, for a row that had one, is there only so the key counts stay right whatever
        // the caller knew.)
        for (sql, had_expiry) in [
            (q::SET_RESTORED_META, None),
            (q::SET_RESTORED_META_EXPIRING, Some(0)),
        ] {
            let n = prepare(self.conn, sql)?.execute((db, key, opts.expire_at, version, mtime))?;
            if n > 0 {
                self.count_expiry_change(db, had_expiry, opts.expire_at);
                break;
            }
        }
        debug_assert_eq!(self.meta(db, key)?.map(|m| m.kind), Some(kind_of(value)));
        Ok(Restored::Written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::sqlite::db::{Db, Options};
    use crate::clock::ManualClock;
    use std::sync::Arc;

    const T0: i64 = 1_700_000_000_000;

    fn open() -> Db {
        Db::open_with(Options {
            clock: Arc::new(ManualClock::new(T0)),
            ..Options::default()
        })
        .unwrap()
    }

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    #[test]
    fn every_type_round_trips_with_expiry_and_idle_time() {
        let db = open();
        let values = [
            Value::String(b("v")),
            Value::List(vec![b("a"), b("b"), b("a")]),
            Value::Set(vec![b("1"), b("2")]),
            Value::Hash(vec![(b("f"), b("1")), (b("g"), b("2"))]),
            Value::ZSet(vec![(b("z"), -1.0), (b("a"), 2.5)]),
            Value::Stream(Box::new(StreamValue {
                entries: vec![StreamEntry {
                    id: StreamId::new(5, 1),
                    fields: vec![b("f"), b("v")],
                }],
                meta: StreamMeta {
                    length: 1,
                    last_id: StreamId::new(9, 0),
                    max_deleted_id: StreamId::new(2, 0),
                    entries_added: 7,
                },
                groups: vec![StreamGroupValue {
                    name: b("g"),
                    last_id: StreamId::new(5, 1),
                    entries_read: Some(6),
                    consumers: vec![(b("a"), 11), (b("b"), 12)],
                    pending: vec![(StreamId::new(5, 1), b("b"), 13, 2)],
                }],
            })),
        ];
        for (i, v) in values.iter().enumerate() {
            let key = format!("k{i}");
            let opts = RestoreOptions {
                expire_at: Some(T0 + 5000),
                idle_secs: Some(7),
                ..RestoreOptions::default()
            };
            let (k, val) = (key.clone(), v.clone());
            let r = db
                .write(move |w| w.restore_value(0, k.as_bytes(), &val, opts))
                .unwrap();
            assert_eq!(r, Restored::Written);
            let k = key.clone();
            let d = db
                .read(move |r| r.dump_value(0, k.as_bytes()))
                .unwrap()
                .unwrap();
            let mut got = d.value.clone();
            if let Value::Set(m) = &mut got {
                m.sort();
            }
            assert_eq!(&got, v);
            assert_eq!(d.expire_at, Some(T0 + 5000));
            let info = db
                .read(move |r| r.object(0, key.as_bytes()))
                .unwrap()
                .unwrap();
            assert_eq!(info.meta.mtime, T0 - 7000);
        }
        assert_eq!(db.read(|r| r.set_encoding(0, b"k2")).unwrap(), "intset");
    }

    #[test]
    fn each_dumped_walks_live_keys_in_order() {
        let clock = Arc::new(ManualClock::new(T0));
        let db = Db::open_with(Options {
            clock: clock.clone(),
            ..Options::default()
        })
        .unwrap();
        db.set("b", "2").unwrap();
        db.set("a", "1").unwrap();
        db.write(|w| {
            w.restore_value(
                0,
                b"gone",
                &Value::String(b("x")),
                RestoreOptions {
                    expire_at: Some(T0 + 10),
                    ..RestoreOptions::default()
                },
            )
        })
        .unwrap();
        db.write(|w| {
            w.restore_value(
                1,
                b"other",
                &Value::String(b("y")),
                RestoreOptions::default(),
            )
        })
        .unwrap();
        db.set_active_expire(false);
        clock.advance(10);
        let seen = db
            .read(|r| {
                let mut seen = Vec::new();
                r.each_dumped::<crate::Error>(0, |k, d| {
                    seen.push((k.to_vec(), d.value));
                    Ok(())
                })?;
                Ok(seen)
            })
            .unwrap();
        let keys: Vec<&[u8]> = seen.iter().map(|(k, _)| &k[..]).collect();
        assert_eq!(keys, vec![&b"a"[..], b"b"]);
        assert_eq!(seen[0].1, Value::String(b("1")));
    }

    #[test]
    fn busy_replace_and_past_expiry() {
        let db = open();
        db.set("k", "old").unwrap();
        let v = Value::List(vec![b("x")]);
        let restore = |o: RestoreOptions| {
            let v = v.clone();
            db.write(move |w| w.restore_value(0, b"k", &v, o)).unwrap()
        };
        let plain = RestoreOptions::default();
        assert_eq!(restore(plain), Restored::Busy);
        assert_eq!(db.get("k").unwrap(), Some(b("old")));
        let replace = RestoreOptions {
            replace: true,
            ..plain
        };
        assert_eq!(restore(replace), Restored::Written);
        assert_eq!(db.lrange("k", 0, -1).unwrap(), vec![b("x")]);
        let past = RestoreOptions {
            replace: true,
            expire_at: Some(T0),
            ..plain
        };
        assert_eq!(restore(past), Restored::Expired(true));
        assert!(db.read(|r| r.meta(0, b"k")).unwrap().is_none());
        assert_eq!(restore(past), Restored::Expired(false));
    }
}
