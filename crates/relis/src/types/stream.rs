//! Streams: append-only logs of entries, each a list of field/value pairs under an id
//! `ms-seq` (two unsigned 64-bit numbers), as Redis 7.0 has them.
//!
//! Storage (schema version 7, `schema/0007_streams.sql`): one row per entry in `relis_stream`,
//! keyed `(kid, ms, seq)`, so a range read is an index range and XADD appends at the end of the
//! index. Ids are unsigned in Redis and signed in SQLite: each half is stored with its top bit
//! flipped ([`enc`]), which keeps the numeric order for the whole `u64` range. The entry's
//! fields and values are one BLOB ([`encode_fields`]). The stream's own numbers (last id,
//! largest deleted id, entries added) sit in the key row's `value` column, its length in
//! `count`; so COPY, RENAME and MOVE carry them with the key row. The first id is not kept: it
//! is the first row of the index.
//!
//! A stream may be empty and still exist (XDEL or XTRIM of every entry, XADD with MAXLEN 0),
//! as in Redis.

use crate::backend::sqlite::sql::stream as q;
use crate::backend::sqlite::stmt::prepare;
use crate::backend::sqlite::store::{KeyMeta, KeyType, MetaColumns, Reader, Writer};
use crate::error::{Error, Result};
use bytes::Bytes;
use rusqlite::OptionalExtension;
use std::fmt;

/// A stream entry id, `ms-seq`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId {
    /// Milliseconds part.
    pub ms: u64,
    /// Sequence part.
    pub seq: u64,
}

impl StreamId {
    /// `0-0`, the smallest id.
    pub const MIN: StreamId = StreamId { ms: 0, seq: 0 };
    /// The largest id.
    pub const MAX: StreamId = StreamId {
        ms: u64::MAX,
        seq: u64::MAX,
    };

    /// An id.
    pub fn new(ms: u64, seq: u64) -> StreamId {
        StreamId { ms, seq }
    }

    /// The next id (Redis's `streamIncrID`), `None` after the largest.
    pub fn next(self) -> Option<StreamId> {
        if self.seq < u64::MAX {
            Some(StreamId::new(self.ms, self.seq + 1))
        } else if self.ms < u64::MAX {
            Some(StreamId::new(self.ms + 1, 0))
        } else {
            None
        }
    }

    /// The previous id (Redis's `streamDecrID`), `None` before `0-0`.
    pub fn prev(self) -> Option<StreamId> {
        if self.seq > 0 {
            Some(StreamId::new(self.ms, self.seq - 1))
        } else if self.ms > 0 {
            Some(StreamId::new(self.ms - 1, u64::MAX))
        } else {
            None
        }
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

/// An entry: its id and its fields and values, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamEntry {
    /// The entry's id.
    pub id: StreamId,
    /// Field, value, field, value, ...
    pub fields: Vec<Bytes>,
}

/// What a stream knows about itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamMeta {
    /// Number of entries.
    pub length: u64,
    /// The last id handed out (or set by XSETID); `0-0` for a new stream.
    pub last_id: StreamId,
    /// The largest id XDEL removed (or set by XSETID).
    pub max_deleted_id: StreamId,
    /// How many entries were ever added.
    pub entries_added: u64,
}

/// How XADD picks the new entry's id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XAddId {
    /// `*`: from the clock, after the last id.
    Auto,
    /// `ms-*`: this ms, the next sequence number.
    AutoSeq(u64),
    /// `ms-seq`.
    Explicit(StreamId),
}

/// What a trim keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrimTo {
    /// At most this many entries.
    MaxLen(u64),
    /// No entry below this id.
    MinId(StreamId),
}

/// A trim (XTRIM, or XADD's MAXLEN/MINID).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trim {
    /// What to keep.
    pub to: TrimTo,
    /// `~`: trim only whole runs of [`TRIM_RUN`] entries from the head (see [`Writer::xtrim`]).
    pub approx: bool,
    /// With `~`, at most this many entries go (0 = no limit).
    pub limit: u64,
}

/// Entries `~` trims at a time, as many as a full Redis stream node holds
/// (`stream-node-max-entries` 100): a stream that only grew by XADD trims with `~` as Redis
/// trims it, whole nodes from the head.
pub const TRIM_RUN: u64 = 100;

pub use crate::error::StreamError;
pub(crate) use crate::types::stream_codec::{dec, decode_fields, enc, encode_fields};

/// The key row's `value` for a stream: last id, largest deleted id, entries added, as five
/// big-endian `u64`s.
pub(crate) fn encode_meta(m: &StreamMeta) -> [u8; 40] {
    let mut out = [0u8; 40];
    for (i, v) in [
        m.last_id.ms,
        m.last_id.seq,
        m.max_deleted_id.ms,
        m.max_deleted_id.seq,
        m.entries_added,
    ]
    .into_iter()
    .enumerate()
    {
        out[i * 8..i * 8 + 8].copy_from_slice(&v.to_be_bytes());
    }
    out
}

fn decode_meta(blob: &[u8], length: i64) -> Result<StreamMeta> {
    if blob.len() != 40 {
        return Err(Error::Storage("a damaged stream key row".into()));
    }
    let at = |i: usize| u64::from_be_bytes(blob[i * 8..i * 8 + 8].try_into().unwrap_or_default());
    Ok(StreamMeta {
        length: u64::try_from(length).unwrap_or(0),
        last_id: StreamId::new(at(0), at(1)),
        max_deleted_id: StreamId::new(at(2), at(3)),
        entries_added: at(4),
    })
}

fn entry_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<(StreamId, Vec<u8>)> {
    Ok((
        StreamId::new(dec(r.get(0)?), dec(r.get(1)?)),
        r.get::<_, Vec<u8>>(2)?,
    ))
}

impl Reader<'_> {
    /// The live stream at `key`: its key row and its numbers.
    pub(crate) fn stream_row(&self, db: u32, key: &[u8]) -> Result<Option<(KeyMeta, StreamMeta)>> {
        match self.raw_stream_row(db, key)? {
            Some((meta, _)) if !self.is_live(&meta) => Ok(None),
            Some((meta, Some(s))) => Ok(Some((meta, s))),
            Some(_) => Err(Error::WrongType),
            None => Ok(None),
        }
    }

    /// The key row, expired or not, and, if it holds a stream, the stream's numbers: one
    /// lookup (XADD and the reads run it for every call). The value of a key of another type
    /// (a string of any size) is not read.
    fn raw_stream_row(&self, db: u32, key: &[u8]) -> Result<Option<(KeyMeta, Option<StreamMeta>)>> {
        let mut st = prepare(self.conn, q::KEY_ROW)?;
        let row = st
            .query_row((db, key), |r| {
                Ok((MetaColumns::of(r)?, r.get::<_, Option<Vec<u8>>>(6)?))
            })
            .optional()?;
        let Some((columns, value)) = row else {
            return Ok(None);
        };
        let meta = columns.meta()?;
        let numbers = match (meta.kind, value) {
            (KeyType::Stream, Some(blob)) => Some(decode_meta(&blob, meta.count)?),
            _ => None,
        };
        Ok(Some((meta, numbers)))
    }

    pub(crate) fn stream_numbers(&self, meta: &KeyMeta, db: u32, key: &[u8]) -> Result<StreamMeta> {
        let blob: Vec<u8> =
            prepare(self.conn, q::KEY_NUMBERS)?.query_row((db, key), |r| r.get(0))?;
        decode_meta(&blob, meta.count)
    }

    /// The stream's numbers (XINFO, XSETID, XREAD's `$`); `None` when there is no stream.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn stream_meta(&self, db: u32, key: &[u8]) -> Result<Option<StreamMeta>> {
        Ok(self.stream_row(db, key)?.map(|(_, s)| s))
    }

    /// XLEN: `None` when there is no stream.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn xlen(&self, db: u32, key: &[u8]) -> Result<Option<u64>> {
        Ok(self.stream_row(db, key)?.map(|(_, s)| s.length))
    }

    /// XRANGE / XREVRANGE: the entries from `start` to `end` (both inclusive), at most `count`
    /// of them (0 = all), in id order or (`rev`) from the end; `None` when there is no stream.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn xrange(
        &self,
        db: u32,
        key: &[u8],
        start: StreamId,
        end: StreamId,
        count: u64,
        rev: bool,
    ) -> Result<Option<Vec<StreamEntry>>> {
        let Some((meta, _)) = self.stream_row(db, key)? else {
            return Ok(None);
        };
        Ok(Some(self.stream_entries(meta.id, start, end, count, rev)?))
    }

    pub(crate) fn stream_entries(
        &self,
        kid: i64,
        start: StreamId,
        end: StreamId,
        count: u64,
        rev: bool,
    ) -> Result<Vec<StreamEntry>> {
        if start > end {
            return Ok(Vec::new());
        }
        let sql = if rev { q::ENTRIES_DESC } else { q::ENTRIES };
        let limit = if count == 0 {
            -1
        } else {
            i64::try_from(count).unwrap_or(i64::MAX)
        };
        let mut st = prepare(self.conn, sql)?;
        let rows = st.query_map(
            (
                kid,
                enc(start.ms),
                enc(start.seq),
                enc(end.ms),
                enc(end.seq),
                limit,
            ),
            entry_of,
        )?;
        let mut out = Vec::new();
        for row in rows {
            let (id, blob) = row?;
            out.push(StreamEntry {
                id,
                fields: decode_fields(&blob)?,
            });
        }
        Ok(out)
    }

    /// The first or (`last`) last entry's id of the stream with id `kid`.
    pub(crate) fn edge_id(&self, kid: i64, last: bool) -> Result<Option<StreamId>> {
        let sql = if last { q::LAST_ID } else { q::FIRST_ID };
        Ok(prepare(self.conn, sql)?
            .query_row([kid], |r| Ok(StreamId::new(dec(r.get(0)?), dec(r.get(1)?))))
            .optional()?)
    }

    /// XREAD for one stream: the entries after `after`, at most `count` (0 = all), when the
    /// stream's last id is past `after` (Redis serves the reader then, even if trimming left
    /// nothing to send); `None` otherwise (no stream, or nothing new).
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn xread_after(
        &self,
        db: u32,
        key: &[u8],
        after: StreamId,
        count: u64,
    ) -> Result<Option<Vec<StreamEntry>>> {
        let Some((meta, s)) = self.stream_row(db, key)? else {
            return Ok(None);
        };
        if s.length == 0 {
            return Ok(None);
        }
        // Redis compares the last entry's id (streamLastValidID) on a first try.
        match self.edge_id(meta.id, true)? {
            Some(top) if top > after => {}
            _ => return Ok(None),
        }
        let Some(start) = after.next() else {
            return Ok(None);
        };
        Ok(Some(self.stream_entries(
            meta.id,
            start,
            StreamId::MAX,
            count,
            false,
        )?))
    }
}

/// What XADD did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XAdded {
    /// The new entry's id.
    pub id: StreamId,
    /// How many entries its trim removed.
    pub trimmed: u64,
}

/// How many entries `~` trims: whole runs from the head, [`TRIM_RUN`] entries each and the
/// last one what is left over (as Redis's nodes are for a stream that only grew by XADD), a run
/// only when all of its entries are among the `allowed` first ones, and no run once `limit`
/// (0 = none) would be passed by a full one (Redis's check, before each node).
fn approx_runs(length: u64, allowed: u64, limit: u64) -> u64 {
    let full = length / TRIM_RUN;
    let mut runs = (allowed / TRIM_RUN).min(full);
    if limit > 0 {
        runs = runs.min(limit / TRIM_RUN);
    }
    let mut n = runs * TRIM_RUN;
    // The partial last run, when everything before it went and it may go too.
    let rest = length - full * TRIM_RUN;
    if runs == full && rest > 0 && allowed >= length && (limit == 0 || n + TRIM_RUN <= limit) {
        n += rest;
    }
    n
}

impl Writer<'_> {
    pub(crate) fn stream_for_write(
        &mut self,
        db: u32,
        key: &[u8],
    ) -> Result<Option<(KeyMeta, StreamMeta)>> {
        match self.raw_stream_row(db, key)? {
            Some((meta, _)) if !self.is_live(&meta) => {
                self.delete_expired(db, key, &meta)?;
                Ok(None)
            }
            Some((meta, Some(s))) => Ok(Some((meta, s))),
            Some(_) => Err(Error::WrongType),
            None => Ok(None),
        }
    }

    /// A new, empty stream at `key` (which must be free); returns its id.
    pub(crate) fn create_empty_stream(&mut self, db: u32, key: &[u8]) -> Result<i64> {
        let kid = self.next_version();
        prepare(self.conn, q::KEY_INSERT)?.execute((
            db,
            key,
            kid,
            self.now,
            &encode_meta(&StreamMeta::default())[..],
        ))?;
        self.count_new_key(db, None);
        self.note_new(db, key);
        Ok(kid)
    }

    /// Records a write to the stream's groups alone (XGROUP, XREADGROUP, XACK, XCLAIM,
    /// XAUTOCLAIM): its mtime moves, its version does not. Redis 7.0 does not signal these as
    /// changes of the key (no `signalModifiedKey`), so a WATCH of the stream does not fail for
    /// them. Over a shared keyspace the key is still written back
    /// ([`crate::backend::sqlite::store::WriterState::quiet`]).
    pub(crate) fn touch_stream(&mut self, db: u32, key: &[u8]) -> Result<()> {
        prepare(self.conn, q::KEY_TOUCH)?.execute((db, key, self.now))?;
        if self.shared.is_some() {
            self.st().quiet.push((db, key.to_vec()));
        }
        Ok(())
    }

    fn save_stream(&mut self, db: u32, key: &[u8], s: &StreamMeta) -> Result<()> {
        let version = self.next_version();
        prepare(self.conn, q::KEY_SAVE)?.execute((
            db,
            key,
            &encode_meta(s)[..],
            s.length as i64,
            version,
            self.now,
        ))?;
        Ok(())
    }

    /// XADD: appends an entry of `fields` (field, value, ...) under the id `id` picks, then
    /// trims with `trim`. `None` when there is no stream and `nomkstream`.
    ///
    /// # Errors
    /// [`Error::WrongType`]; [`StreamError::IdTooSmall`] / [`StreamError::Exhausted`] as
    /// [`Error::Stream`].
    pub fn xadd(
        &mut self,
        db: u32,
        key: &[u8],
        id: XAddId,
        fields: &[Bytes],
        nomkstream: bool,
        trim: Option<Trim>,
    ) -> Result<Option<XAdded>> {
        let (kid, mut s) = match self.stream_for_write(db, key)? {
            Some((meta, s)) => {
                // Every XADD may serve readers blocked on the stream (Redis signals the key
                // ready); a stream it creates is counted among the new keys.
                self.note_ready(db, key);
                (meta.id, s)
            }
            None if nomkstream => return Ok(None),
            None => (self.create_empty_stream(db, key)?, StreamMeta::default()),
        };
        if s.last_id == StreamId::MAX {
            return Err(Error::Stream(StreamError::Exhausted));
        }
        let new = match id {
            XAddId::Explicit(id) => id,
            XAddId::AutoSeq(ms) if ms == s.last_id.ms => {
                if s.last_id.seq == u64::MAX {
                    return Err(Error::Stream(StreamError::IdTooSmall));
                }
                StreamId::new(ms, s.last_id.seq + 1)
            }
            XAddId::AutoSeq(ms) => StreamId::new(ms, 0),
            XAddId::Auto => {
                let now = u64::try_from(self.now).unwrap_or(0);
                if now > s.last_id.ms {
                    StreamId::new(now, 0)
                } else {
                    s.last_id
                        .next()
                        .ok_or(Error::Stream(StreamError::Exhausted))?
                }
            }
        };
        if new <= s.last_id {
            return Err(Error::Stream(StreamError::IdTooSmall));
        }
        prepare(self.conn, q::INSERT_ENTRY)?.execute((
            kid,
            enc(new.ms),
            enc(new.seq),
            encode_fields(fields),
        ))?;
        s.last_id = new;
        s.length += 1;
        s.entries_added += 1;
        let trimmed = match trim {
            Some(t) => self.trim_rows(kid, &mut s, t)?,
            None => 0,
        };
        self.save_stream(db, key, &s)?;
        Ok(Some(XAdded { id: new, trimmed }))
    }

    /// XTRIM: removes entries from the head as `trim` says; returns how many.
    ///
    /// With `=`, exactly: the oldest entries beyond MAXLEN, or every entry below MINID. With
    /// `~`, whole runs of [`TRIM_RUN`] entries counted from the head (the last run is what is
    /// left over), and only runs that go entirely (MAXLEN: the stream keeps at least the
    /// threshold; MINID: the run's last entry is below it), stopping before a full run would
    /// pass `limit`: as Redis trims whole nodes, so the counts agree with Redis's for a stream
    /// that only grew by XADD. After XDEL or an exact trim Redis's nodes no longer start where
    /// these runs do, and the counts may differ (neither is promised by Redis).
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn xtrim(&mut self, db: u32, key: &[u8], trim: Trim) -> Result<u64> {
        let Some((meta, mut s)) = self.stream_for_write(db, key)? else {
            return Ok(0);
        };
        let n = self.trim_rows(meta.id, &mut s, trim)?;
        if n > 0 {
            self.save_stream(db, key, &s)?;
        }
        Ok(n)
    }

    fn trim_rows(&mut self, kid: i64, s: &mut StreamMeta, trim: Trim) -> Result<u64> {
        // Entries from the head that the trim's condition lets go (all of them for `=`).
        let allowed = match trim.to {
            TrimTo::MaxLen(max) => s.length.saturating_sub(max),
            TrimTo::MinId(min) => prepare(self.conn, q::COUNT_BEFORE)?
                .query_row((kid, enc(min.ms), enc(min.seq)), |r| r.get::<_, i64>(0))?
                as u64,
        };
        let goes = if trim.approx {
            approx_runs(s.length, allowed, trim.limit)
        } else {
            allowed
        };
        if goes == 0 {
            return Ok(0);
        }
        let n = prepare(self.conn, q::DELETE_OLDEST)?.execute((kid, goes as i64))? as u64;
        s.length -= n;
        Ok(n)
    }

    /// XDEL: deletes the entries with these ids; returns how many there were.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn xdel(&mut self, db: u32, key: &[u8], ids: &[StreamId]) -> Result<u64> {
        let Some((meta, mut s)) = self.stream_for_write(db, key)? else {
            return Ok(0);
        };
        let mut n = 0;
        for id in ids {
            let gone =
                prepare(self.conn, q::DELETE_ENTRY)?.execute((meta.id, enc(id.ms), enc(id.seq)))?;
            if gone > 0 {
                n += 1;
                s.length -= 1;
                s.max_deleted_id = s.max_deleted_id.max(*id);
            }
        }
        if n > 0 {
            self.save_stream(db, key, &s)?;
        }
        Ok(n)
    }

    /// XSETID: sets the last id, and optionally entries added and the largest deleted id
    /// (`MIN` = leave it).
    ///
    /// # Errors
    /// [`Error::NoSuchKey`], [`Error::WrongType`], [`StreamError::SetIdBelowTop`],
    /// [`StreamError::EntriesAddedBelowLength`].
    pub fn xsetid(
        &mut self,
        db: u32,
        key: &[u8],
        id: StreamId,
        entries_added: Option<u64>,
        max_deleted: StreamId,
    ) -> Result<()> {
        let Some((meta, mut s)) = self.stream_for_write(db, key)? else {
            return Err(Error::NoSuchKey);
        };
        if s.length > 0 {
            let top = self.edge_id(meta.id, true)?.unwrap_or_default();
            if id < top {
                return Err(Error::Stream(StreamError::SetIdBelowTop));
            }
            if entries_added.is_some_and(|n| n < s.length) {
                return Err(Error::Stream(StreamError::EntriesAddedBelowLength));
            }
        }
        s.last_id = id;
        if let Some(n) = entries_added {
            s.entries_added = n;
        }
        if max_deleted != StreamId::MIN {
            s.max_deleted_id = max_deleted;
        }
        self.save_stream(db, key, &s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_keep_their_order_in_sqlite() {
        let vals = [0, 1, 5, (1 << 63) - 1, 1 << 63, u64::MAX - 1, u64::MAX];
        for w in vals.windows(2) {
            assert!(enc(w[0]) < enc(w[1]), "{} {}", w[0], w[1]);
            assert_eq!(dec(enc(w[0])), w[0]);
        }
        assert_eq!(StreamId::MAX.next(), None);
        assert_eq!(StreamId::MIN.prev(), None);
        assert_eq!(StreamId::new(1, u64::MAX).next(), Some(StreamId::new(2, 0)));
        assert_eq!(StreamId::new(2, 0).prev(), Some(StreamId::new(1, u64::MAX)));
    }

    #[test]
    fn fields_round_trip() {
        let f: Vec<Bytes> = vec![
            Bytes::from_static(b""),
            Bytes::from(vec![7u8; 300]),
            Bytes::from_static(b"v"),
            Bytes::from(vec![0u8; 20_000]),
        ];
        let blob = encode_fields(&f);
        assert_eq!(decode_fields(&blob).unwrap(), f);
        assert!(decode_fields(&[0x85]).is_err());
        assert!(decode_fields(&[5, 1]).is_err());
    }

    #[test]
    fn add_range_delete_trim() {
        let db = crate::Db::open_in_memory().unwrap();
        fn fv(s: &str) -> Vec<Bytes> {
            vec![Bytes::from_static(b"f"), Bytes::from(s.to_string())]
        }
        db.write(|w| {
            for i in 1..=250u64 {
                w.xadd(
                    0,
                    b"s",
                    XAddId::Explicit(StreamId::new(i, 0)),
                    &fv("x"),
                    false,
                    None,
                )?;
            }
            let e = w.xadd(
                0,
                b"s",
                XAddId::Explicit(StreamId::new(3, 0)),
                &fv("x"),
                false,
                None,
            );
            assert_eq!(e, Err(Error::Stream(StreamError::IdTooSmall)));
            assert_eq!(
                w.xadd(0, b"s", XAddId::AutoSeq(250), &fv("y"), false, None)?
                    .unwrap()
                    .id,
                StreamId::new(250, 1)
            );
            assert_eq!(
                w.xdel(0, b"s", &[StreamId::new(2, 0), StreamId::new(9, 9)])?,
                1
            );
            // 250 left: `~` to 120 takes one run of 100, `=` the rest.
            let approx = Trim {
                to: TrimTo::MaxLen(120),
                approx: true,
                limit: 0,
            };
            assert_eq!(w.xtrim(0, b"s", approx)?, 100);
            let exact = Trim {
                approx: false,
                ..approx
            };
            assert_eq!(w.xtrim(0, b"s", exact)?, 30);
            Ok(())
        })
        .unwrap();
        db.read(|r| {
            assert_eq!(r.xlen(0, b"s")?, Some(120));
            let all = r
                .xrange(0, b"s", StreamId::MIN, StreamId::MAX, 0, false)?
                .unwrap();
            assert_eq!(all.first().unwrap().id, StreamId::new(132, 0));
            assert_eq!(all.last().unwrap().fields, fv("y"));
            let rev = r
                .xrange(0, b"s", StreamId::MIN, StreamId::MAX, 2, true)?
                .unwrap();
            assert_eq!(rev[0].id, StreamId::new(250, 1));
            let s = r.stream_meta(0, b"s")?.unwrap();
            assert_eq!(s.entries_added, 251);
            assert_eq!(s.max_deleted_id, StreamId::new(2, 0));
            Ok(())
        })
        .unwrap();
    }

    #[test]
    fn a_huge_stream_is_deleted_in_the_background() {
        let db = crate::Db::open_in_memory().unwrap();
        let rows = |w: &Writer<'_>| -> i64 {
            w.conn
                .query_row("SELECT count(*) FROM main.relis_stream", [], |r| r.get(0))
                .unwrap()
        };
        db.write(move |w| {
            for i in 1..=3000u64 {
                let f = [Bytes::from_static(b"f"), Bytes::from(i.to_string())];
                w.xadd(
                    0,
                    b"big",
                    XAddId::Explicit(StreamId::new(i, 0)),
                    &f,
                    false,
                    None,
                )?;
            }
            // COPY takes the entries along, DEL leaves them to the trash.
            w.copy(0, b"big", 0, b"copy", false)?;
            assert_eq!(rows(w), 6000);
            assert_eq!(w.del(0, &[Bytes::from_static(b"big")])?, 1);
            let trashed: i64 = w.conn.query_row(
                "SELECT count(*) FROM main.relis_trash WHERE type = 5",
                [],
                |r| r.get(0),
            )?;
            assert_eq!((trashed, rows(w)), (1, 6000));
            assert_eq!(w.empty_trash(1000)?, 1000);
            while w.empty_trash(1000)? > 0 {}
            assert_eq!(rows(w), 3000);
            assert_eq!(w.xlen(0, b"copy")?, Some(3000));
            Ok(())
        })
        .unwrap();
    }
}
