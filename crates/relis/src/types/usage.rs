//! MEMORY USAGE: how many bytes of the database file a key takes.
//!
//! A key is its row in `relis_keys` (with its expiry index entry, if it expires) and, for a
//! collection, one row per element in its type's table (plus the score index entry and rank rows
//! of a sorted set; a stream's consumer groups, consumers and pending entries with their index
//! entries). Each row costs its record as SQLite encodes it (a header of serial types,
//! then the values: integers in 0 to 8 bytes by magnitude, blobs as they are), the cell's
//! length prefix and its 2-byte pointer in the page, and, past what a page keeps inline, whole
//! overflow pages. Free space inside pages is not counted: a page is rarely full, so the file
//! grows by somewhat more than the sum. Like Redis, a collection's element rows are sampled (the
//! first `samples`, in key order) and their average size stands for every element.

use crate::backend::sqlite::sql::usage as q;
use crate::backend::sqlite::stmt::prepare;
use crate::backend::sqlite::store::{KeyMeta, KeyType, Reader};
use crate::Result;
use rusqlite::types::ValueRef;

/// Bytes SQLite needs for the varint `v`.
fn varint_len(v: u64) -> u64 {
    match v {
        0..=0x7f => 1,
        0x80..=0x3fff => 2,
        0x4000..=0x1f_ffff => 3,
        0x20_0000..=0x0fff_ffff => 4,
        0x1000_0000..=0x07_ffff_ffff => 5,
        0x08_0000_0000..=0x03ff_ffff_ffff => 6,
        0x0400_0000_0000..=0x01_ffff_ffff_ffff => 7,
        0x02_0000_0000_0000..=0x00ff_ffff_ffff_ffff => 8,
        _ => 9,
    }
}

/// A value's serial type and body length in a record (SQLite's file format, section 2.1).
fn serial(v: ValueRef<'_>) -> (u64, u64) {
    match v {
        ValueRef::Null => (0, 0),
        ValueRef::Integer(0 | 1) => (8, 0),
        ValueRef::Integer(n) => match n {
            -0x80..=0x7f => (1, 1),
            -0x8000..=0x7fff => (2, 2),
            -0x80_0000..=0x7f_ffff => (3, 3),
            -0x8000_0000..=0x7fff_ffff => (4, 4),
            -0x8000_0000_0000..=0x7fff_ffff_ffff => (5, 6),
            _ => (6, 8),
        },
        ValueRef::Real(_) => (7, 8),
        ValueRef::Blob(b) => (b.len() as u64 * 2 + 12, b.len() as u64),
        ValueRef::Text(t) => (t.len() as u64 * 2 + 13, t.len() as u64),
    }
}

/// The size of the record holding `values`.
fn record_len(values: &[ValueRef<'_>]) -> u64 {
    let (types, body) = values.iter().fold((0, 0), |(t, b), v| {
        let (st, len) = serial(*v);
        (t + varint_len(st), b + len)
    });
    // The header starts with its own length, which counts itself.
    let mut header = types + 1;
    while varint_len(header) + types > header {
        header = varint_len(header) + types;
    }
    header + body
}

/// What a record of `payload` bytes costs in an index B-tree's leaf page (WITHOUT ROWID tables
/// and indexes are index B-trees): the cell (its length prefix, what stays inline, the pointer
/// to its overflow chain) and its pointer in the page, plus its whole overflow pages.
fn cell_bytes(payload: u64, page_size: u64) -> u64 {
    let usable = page_size;
    let max_local = (usable - 12) * 64 / 255 - 23;
    let min_local = (usable - 12) * 32 / 255 - 23;
    let prefix = varint_len(payload) + 2;
    if payload <= max_local {
        return prefix + payload;
    }
    let k = min_local + (payload - min_local) % (usable - 4);
    let local = if k <= max_local { k } else { min_local };
    let overflow_pages = (payload - local).div_ceil(usable - 4);
    prefix + local + 4 + overflow_pages * page_size
}

impl Reader<'_> {
    /// MEMORY USAGE: the bytes of the database file `key` takes (see the module docs), with
    /// at most `samples` element rows read for a collection (`None`: all of them); `None` when
    /// the key does not exist.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn memory_usage(&self, db: u32, key: &[u8], samples: Option<u64>) -> Result<Option<u64>> {
        let Some(meta) = self.meta(db, key)? else {
            return Ok(None);
        };
        let page: u64 = self
            .conn
            .query_row(q::PAGE_SIZE, [], |r| r.get::<_, i64>(0))?
            .max(512) as u64;
        let mut st = prepare(self.conn, q::KEY_ROW)?;
        let (row, expiry) = st.query_row((db, key), |r| {
            let values: Vec<ValueRef<'_>> = (0..10)
                .map(|i| r.get_ref(i))
                .collect::<rusqlite::Result<_>>()?;
            let row = cell_bytes(record_len(&values), page);
            // The expiry index entry: (expire_at, db, key).
            let expiry = match values[4] {
                ValueRef::Null => 0,
                at => cell_bytes(record_len(&[at, values[0], values[1]]), page),
            };
            Ok((row, expiry))
        })?;
        Ok(Some(
            row + expiry + self.elements_usage(&meta, page, samples)?,
        ))
    }

    /// The element rows of a collection, estimated from a sample.
    fn elements_usage(&self, meta: &KeyMeta, page: u64, samples: Option<u64>) -> Result<u64> {
        let sql = match meta.kind {
            KeyType::String if meta.count == 0 => return Ok(0),
            KeyType::String => {
                // Chunk rows are rowid rows of about a page each (no overflow pages), plus an
                // entry in the (kid, n) index: counted exactly, as their bytes and a few per row.
                let (rows, bytes): (i64, f64) = prepare(self.conn, q::CHUNKS_SIZE)?
                    .query_row([meta.id], |r| Ok((r.get(0)?, r.get(1)?)))?;
                return Ok(bytes as u64 + rows as u64 * 32);
            }
            KeyType::Hash => q::SAMPLE_HASH,
            KeyType::List => q::SAMPLE_LIST,
            KeyType::Set => q::SAMPLE_SET,
            KeyType::ZSet => q::SAMPLE_ZSET,
            KeyType::Stream => q::SAMPLE_STREAM,
        };
        let limit = samples.map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX));
        let mut st = prepare(self.conn, sql)?;
        let mut rows = st.query((meta.id, limit))?;
        let (mut sampled, mut bytes) = (0u64, 0u64);
        while let Some(r) = rows.next()? {
            let values: Vec<ValueRef<'_>> = (0..r.as_ref().column_count())
                .map(|i| r.get_ref(i))
                .collect::<rusqlite::Result<_>>()?;
            bytes += cell_bytes(record_len(&values), page);
            if meta.kind == KeyType::ZSet {
                // The score index entry: (kid, score, member).
                bytes += cell_bytes(record_len(&[values[0], values[2], values[1]]), page);
            }
            sampled += 1;
        }
        let count = u64::try_from(meta.count).unwrap_or(0);
        let mut total = match sampled {
            0 => 0,
            n if n >= count => bytes,
            n => (bytes as f64 / n as f64 * count as f64) as u64,
        };
        if meta.kind == KeyType::Stream {
            total += self.groups_usage(meta.id, page, samples)?;
        }
        if meta.kind == KeyType::ZSet {
            // Rank rows (large sets only): few, so counted exactly.
            let mut st = prepare(self.conn, q::ZRANK_ROWS)?;
            let mut rows = st.query([meta.id])?;
            while let Some(r) = rows.next()? {
                let values: Vec<ValueRef<'_>> = (0..6)
                    .map(|i| r.get_ref(i))
                    .collect::<rusqlite::Result<_>>()?;
                // The row in the table (rowid key) and its entry in the unique index.
                total += record_len(&values[1..]) + 4 + 9;
                total += cell_bytes(
                    record_len(&[values[1], values[2], values[3], values[4], values[0]]),
                    page,
                );
            }
        }
        Ok(total)
    }

    /// A stream's consumer groups: group and consumer rows (few) exactly, the pending entries
    /// (a row and its two index entries each) estimated from a sample, as Redis samples a
    /// group's PEL.
    fn groups_usage(&self, kid: i64, page: u64, samples: Option<u64>) -> Result<u64> {
        let mut total = 0;
        for sql in [q::STREAM_GROUP_ROWS, q::STREAM_CONSUMER_ROWS] {
            let mut st = prepare(self.conn, sql)?;
            let mut rows = st.query([kid])?;
            while let Some(r) = rows.next()? {
                let values: Vec<ValueRef<'_>> = (0..r.as_ref().column_count())
                    .map(|i| r.get_ref(i))
                    .collect::<rusqlite::Result<_>>()?;
                total += cell_bytes(record_len(&values), page);
            }
        }
        let pending: u64 = prepare(self.conn, q::PENDING_COUNT)?
            .query_row([kid], |r| r.get::<_, i64>(0))?
            .try_into()
            .unwrap_or(0);
        if pending == 0 {
            return Ok(total);
        }
        let limit = samples.map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX));
        let mut st = prepare(self.conn, q::SAMPLE_PENDING)?;
        let mut rows = st.query((kid, limit))?;
        let (mut sampled, mut bytes) = (0u64, 0u64);
        while let Some(r) = rows.next()? {
            let v: Vec<ValueRef<'_>> = (0..7)
                .map(|i| r.get_ref(i))
                .collect::<rusqlite::Result<_>>()?;
            bytes += cell_bytes(record_len(&v), page);
            // The by-consumer and by-delivery index entries (each ends with the primary key).
            bytes += cell_bytes(record_len(&[v[0], v[1], v[4], v[2], v[3]]), page);
            bytes += cell_bytes(record_len(&[v[0], v[1], v[5], v[2], v[3]]), page);
            sampled += 1;
        }
        Ok(total + (bytes as f64 / sampled.max(1) as f64 * pending as f64) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_measured_as_sqlite_encodes_them() {
        // A header of 1 (its length) + 1 (the serial type), then the body.
        assert_eq!(record_len(&[ValueRef::Integer(1)]), 2);
        assert_eq!(record_len(&[ValueRef::Integer(300)]), 4);
        assert_eq!(record_len(&[ValueRef::Blob(b"abc")]), 5);
        assert_eq!(record_len(&[ValueRef::Null, ValueRef::Real(1.5)]), 11);
        // A 100-byte blob's serial type (212) takes two bytes.
        assert_eq!(record_len(&[ValueRef::Blob(&[0; 100])]), 103);
        assert_eq!(varint_len(127), 1);
        assert_eq!(varint_len(128), 2);
        assert_eq!(varint_len(u64::MAX), 9);
    }

    #[test]
    fn large_records_count_their_overflow_pages() {
        assert_eq!(cell_bytes(100, 4096), 103);
        // 1 MB at 4 KiB pages: about 257 overflow pages of 4 KiB each.
        let big = cell_bytes(1 << 20, 4096);
        assert!((1 << 20) < big && big < (1 << 20) + 2 * 4096 * 4, "{big}");
    }

    #[test]
    fn usage_grows_with_the_value_and_samples_collections() {
        let db = crate::Db::open_in_memory().unwrap();
        db.write(|w| {
            w.set(0, b"small", b"v", crate::SetOptions::default())?;
            w.set(0, b"big", &[b'x'; 100_000], crate::SetOptions::default())?;
            for i in 0..1000 {
                w.sadd(0, b"s", &[format!("member:{i}").into()])?;
            }
            for i in 0..500 {
                let f = [
                    bytes::Bytes::from_static(b"field"),
                    format!("value:{i}").into(),
                ];
                w.xadd(0, b"x", crate::XAddId::Auto, &f, false, None)?;
            }
            Ok(())
        })
        .unwrap();
        db.read(|r| {
            let small = r.memory_usage(0, b"small", Some(5))?.unwrap();
            let big = r.memory_usage(0, b"big", Some(5))?.unwrap();
            assert!((20..100).contains(&small), "{small}");
            assert!((100_000..110_000).contains(&big), "{big}");
            assert_eq!(r.memory_usage(0, b"nokey", Some(5))?, None);
            let stream = r.memory_usage(0, b"x", None)?.unwrap();
            // 500 entries of about 30 bytes, each one row (key, id and the fields' BLOB).
            assert!((500 * 25..500 * 80).contains(&stream), "{stream}");
            let all = r.memory_usage(0, b"s", None)?.unwrap();
            let sampled = r.memory_usage(0, b"s", Some(5))?.unwrap();
            assert!((1000 * 15..1000 * 40).contains(&all), "{all}");
            // Five members of about the same size stand for the thousand.
            let off = (all as f64 - sampled as f64).abs() / all as f64;
            assert!(off < 0.1, "{all} vs {sampled}");
            Ok(())
        })
        .unwrap();
    }

    #[test]
    fn a_stream_counts_its_groups_consumers_and_pending_entries() {
        let db = crate::Db::open_in_memory().unwrap();
        db.write(|w| {
            let f = [
                bytes::Bytes::from_static(b"f"),
                bytes::Bytes::from_static(b"v"),
            ];
            for _ in 0..1000 {
                w.xadd(0, b"x", crate::XAddId::Auto, &f, false, None)?;
            }
            Ok(())
        })
        .unwrap();
        let before = db
            .read(|r| r.memory_usage(0, b"x", Some(5)))
            .unwrap()
            .unwrap();
        db.write(|w| {
            let start = crate::GroupStart::Id(crate::StreamId::new(0, 0));
            w.xgroup_create(0, b"x", b"group", start, false, None)?;
            let read = crate::GroupRead::New;
            w.xreadgroup(0, b"x", b"group", b"consumer", read, 1000, false)?;
            Ok(())
        })
        .unwrap();
        let after = db
            .read(|r| r.memory_usage(0, b"x", Some(5)))
            .unwrap()
            .unwrap();
        // A thousand pending entries, each a row and two index entries of ~25 bytes.
        assert!(after >= before + 1000 * 50, "{before} -> {after}");
        assert!(after <= before + 1000 * 200, "{before} -> {after}");
    }
}
