//! Large strings in chunks (schema version 8, `schema/0008_string_chunks.sql`).
//!
//! A string longer than [`CHUNKED_ABOVE`] bytes keeps its bytes in `relis_chunks`, in chunks of
//! [`CHUNK`] bytes keyed by (value id, chunk number); its key row has `value` NULL and `count`
//! = its length. Every chunk up to the length has a row, but a row may be short: the bytes it
//! lacks (up to the string's length) are zeros, and a chunk of zeros is an empty row, so
//! growing a string (SETBIT far out, SETRANGE past the end) writes a few bytes per chunk, not
//! the zeros (the `redis_strings` view pads the rows back). Writes that touch a few bytes (SETBIT, SETRANGE, BITFIELD,
//! APPEND) rewrite only the chunks they touch, and range reads (GETRANGE, GETBIT) read only the
//! chunks they need: `SETRANGE big 0 x` on a 512 MB value writes one chunk and the key row.
//!
//! Why chunks rather than SQLite's incremental blob I/O: a blob handle still rewrites every
//! overflow page it writes through and cannot grow a blob, while the writer's WAL holds each
//! touched page; a chunk row is one page, found through the primary key. (Inside one chunk
//! row a blob handle is what SETBIT uses: it changes the byte in place, see `set_chunk_bit`.)

use crate::backend::sqlite::sql::strings as q;
use crate::backend::sqlite::stmt::prepare;
use crate::backend::sqlite::store::{Reader, Writer};
use crate::error::Result;
use rusqlite::OptionalExtension;

/// Bytes per chunk (a storage-layout constant of the backend's).
pub(crate) use crate::backend::sqlite::store::CHUNK;

/// Strings longer than this are written in chunks; shorter ones stay inline in their key row.
///
/// Why so low: a `relis_keys` row must fit in its B-tree page. With 2 KiB pages SQLite keeps at
/// most 489 bytes of a WITHOUT ROWID cell in the page and the rest in overflow pages, which it
/// reads straight from the file at each access (`SQLITE_DIRECT_OVERFLOW_READ`), and a search
/// that compares against an overflowing cell assembles its whole payload first; so one row of
/// a few KB slows every lookup that passes it. 400 bytes of value plus the row's other columns
/// and a key of a few dozen bytes stay in the page; a value above moves to one chunk row or
/// more (measured: a 1 KB SETBIT 4x faster, GET of 1 KB values 10-15% faster, SET of them a
/// little slower: a second row).
pub(crate) const CHUNKED_ABOVE: usize = 400;

/// A chunked string of up to this many chunks is overwritten in place (its rows replaced, the
/// ones past the new end deleted inline); a longer one's chunks go as a deleted value's do.
pub(crate) const REUSE_UP_TO: usize = 64;

impl Reader<'_> {
    /// `len` bytes of the chunked string `kid` from byte `start` (the caller keeps the range
    /// inside the string): the chunks it covers, zeros where they lack bytes.
    pub(crate) fn read_chunks(&self, kid: i64, start: usize, len: usize) -> Result<Vec<u8>> {
        let mut out = vec![0u8; len];
        if len == 0 {
            return Ok(out);
        }
        let (first, last) = (start / CHUNK, (start + len - 1) / CHUNK);
        let mut st = prepare(self.conn, q::READ_CHUNKS)?;
        let mut rows = st.query((kid, first as i64, last as i64))?;
        while let Some(r) = rows.next()? {
            let n = r.get::<_, i64>(0)? as usize;
            let data = r.get_ref(1)?.as_blob()?;
            let base = n * CHUNK;
            let lo = start.max(base);
            let hi = (start + len).min(base + data.len());
            if lo < hi {
                out[lo - start..hi - start].copy_from_slice(&data[lo - base..hi - base]);
            }
        }
        Ok(out)
    }
}

impl Writer<'_> {
    /// Gives the chunked string `kid`, growing from `from` to `to` bytes, an empty row for each
    /// chunk it gains (they hold zeros).
    pub(crate) fn grow_chunks(&mut self, kid: i64, from: usize, to: usize) -> Result<()> {
        let (first, end) = (from.div_ceil(CHUNK), to.div_ceil(CHUNK));
        if first >= end {
            return Ok(());
        }
        prepare(self.conn, q::GROW_CHUNKS)?.execute((kid, first as i64, end as i64))?;
        Ok(())
    }

    /// Writes `value` as the chunks of `kid`, which has none (a new value id): no chunk is read
    /// first. An all-zero chunk gets an empty row.
    pub(crate) fn insert_chunks(&mut self, kid: i64, value: &[u8]) -> Result<()> {
        let mut st = prepare(self.conn, q::INSERT_CHUNK)?;
        for (n, part) in value.chunks(CHUNK).enumerate() {
            let data = if part.iter().all(|&b| b == 0) {
                &[][..]
            } else {
                part
            };
            st.execute((kid, n as i64, data))?;
        }
        Ok(())
    }

    /// Overwrites the chunks of `kid`, which holds `old_chunks` chunks, with `value`'s (each
    /// chunk row is replaced whole), and deletes the chunks past `value`'s end.
    pub(crate) fn replace_chunks(
        &mut self,
        kid: i64,
        old_chunks: usize,
        value: &[u8],
    ) -> Result<()> {
        let mut st = prepare(self.conn, q::UPSERT_CHUNK)?;
        let chunks = value.len().div_ceil(CHUNK);
        for (n, part) in value.chunks(CHUNK).enumerate() {
            st.execute((kid, n as i64, part))?;
        }
        if old_chunks > chunks {
            prepare(self.conn, q::TRUNCATE_CHUNKS)?.execute((kid, chunks as i64))?;
        }
        Ok(())
    }

    /// Rewrites the chunks of `kid` in which `new` differs from `old` (two values of the same
    /// length): a change of a few bytes in a large value writes a row or two, not all of them.
    pub(crate) fn patch_chunks(&mut self, kid: i64, old: &[u8], new: &[u8]) -> Result<()> {
        debug_assert_eq!(old.len(), new.len());
        let mut st = prepare(self.conn, q::UPSERT_CHUNK)?;
        for (n, (a, b)) in old.chunks(CHUNK).zip(new.chunks(CHUNK)).enumerate() {
            if a != b {
                st.execute((kid, n as i64, b))?;
            }
        }
        Ok(())
    }

    /// Sets or clears the bit `mask` of byte `byte` of the chunked string `kid` of `len` bytes
    /// (`byte` inside it), reading and writing its one chunk. Returns the byte as it was.
    pub(crate) fn set_chunk_bit(
        &mut self,
        kid: i64,
        len: usize,
        byte: usize,
        mask: u8,
        on: bool,
    ) -> Result<u8> {
        let n = byte / CHUNK;
        let at = byte % CHUNK;
        let flip = |was: u8| if on { was | mask } else { was & !mask };
        // The row is found once through the primary key's index, then read and written in
        // place through a blob handle on its rowid: one byte each way, not the row's 2 KB
        // decoded, copied and encoded again.
        let rowid: Option<i64> = prepare(self.conn, q::CHUNK_ROWID)?
            .query_row((kid, n as i64), |r| r.get(0))
            .optional()?;
        let mut buf = Vec::new();
        if let Some(rowid) = rowid {
            let mut blob = self
                .conn
                .blob_open(c"main", c"relis_chunks", c"data", rowid, false)?;
            let had = blob.len();
            if at < had {
                let mut b = [0u8];
                blob.read_at_exact(&mut b, at)?;
                let (was, now) = (b[0], flip(b[0]));
                if now != was {
                    blob.write_at(&[now], at)?;
                }
                blob.close()?;
                return Ok(was);
            }
            // A short row (its missing bytes are zeros): a blob cannot grow, so the row is
            // rewritten through SQL, whole (the chunk's full length), so that the SETBITs
            // after this one in the chunk find their byte in place. A chunk row has a page of
            // its own at that length anyway.
            let was = 0;
            if flip(was) == was {
                return Ok(was);
            }
            buf.resize(CHUNK.min(len - n * CHUNK), 0);
            blob.read_at_exact(&mut buf[..had], 0)?;
            blob.close()?;
            buf[at] = flip(was);
            prepare(self.conn, q::WRITE_CHUNK_ROW)?.execute((rowid, &buf))?;
            return Ok(was);
        }
        // No row (every chunk inside the string has one; kept for safety): written whole.
        let was = 0;
        if flip(was) != was {
            buf.resize(CHUNK.min(len - n * CHUNK), 0);
            buf[at] = flip(was);
            prepare(self.conn, q::UPSERT_CHUNK)?.execute((kid, n as i64, &buf))?;
        }
        Ok(was)
    }

    /// Writes `data` at byte `offset` of the chunked string `kid`, rewriting only the chunks it
    /// touches. A chunk that does not exist yet and would hold only zeros gets an empty row.
    pub(crate) fn write_chunks(&mut self, kid: i64, offset: usize, data: &[u8]) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let end = offset + data.len();
        for n in offset / CHUNK..=(end - 1) / CHUNK {
            let base = n * CHUNK;
            let (lo, hi) = (offset.max(base), end.min(base + CHUNK));
            let part = &data[lo - offset..hi - offset];
            let whole = lo == base && hi == base + CHUNK;
            let cur: Option<Vec<u8>> = if whole {
                None
            } else {
                prepare(self.conn, q::READ_CHUNK)?
                    .query_row((kid, n as i64), |r| r.get(0))
                    .optional()?
            };
            let mut buf = cur.unwrap_or_default();
            if buf.is_empty() && part.iter().all(|&b| b == 0) {
                // Still all zeros: an empty row says so (see grow_chunks).
                buf.clear();
            } else {
                if buf.len() < hi - base {
                    buf.resize(hi - base, 0);
                }
                buf[lo - base..hi - base].copy_from_slice(part);
            }
            prepare(self.conn, q::UPSERT_CHUNK)?.execute((kid, n as i64, &buf))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::Db;

    /// A value longer than the threshold that an older Relis left inline moves to chunks at its
    /// first partial write, and reads the same before and after.
    #[test]
    fn an_inline_large_value_moves_to_chunks_when_written() {
        let db = Db::open_in_memory().unwrap();
        let v: Vec<u8> = (0..100_000u32).map(|i| (i % 253) as u8).collect();
        db.set("k", &v[..10]).unwrap();
        let big = v.clone();
        db.write(move |w| {
            w.conn.execute(
                "UPDATE main.relis_keys SET value = ?1 WHERE key = CAST('k' AS BLOB)",
                [&big],
            )?;
            Ok(())
        })
        .unwrap();
        assert_eq!(db.get("k").unwrap().unwrap().to_vec(), v);
        assert_eq!(db.getrange("k", 99_990, -1).unwrap().to_vec(), v[99_990..]);
        assert_eq!(db.setrange("k", 5, "xy").unwrap(), 100_000);
        let mut want = v.clone();
        want[5..7].copy_from_slice(b"xy");
        assert_eq!(db.get("k").unwrap().unwrap().to_vec(), want);
        let (count, chunks) = db
            .read(|r| {
                Ok(r.conn.query_row(
                    "SELECT (SELECT count FROM main.relis_keys), (SELECT count(*) FROM main.relis_chunks)",
                    [],
                    |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
                )?)
            })
            .unwrap();
        assert_eq!(
            (count, chunks),
            (100_000, 100_000_u64.div_ceil(1984) as i64)
        );
        // Overwriting with a short value drops the chunks.
        db.set("k", "short").unwrap();
        let chunks: i64 = db
            .read(|r| {
                Ok(r.conn
                    .query_row("SELECT count(*) FROM main.relis_chunks", [], |r| r.get(0))?)
            })
            .unwrap();
        assert_eq!(chunks, 0);
        assert_eq!(db.get("k").unwrap().unwrap().to_vec(), b"short");
    }

    /// (count of key rows with an inline value, count of chunk rows) in db 0.
    fn shape(db: &Db) -> (i64, i64) {
        db.read(|r| {
            Ok(r.conn.query_row(
                "SELECT (SELECT count(*) FROM main.relis_keys WHERE value IS NOT NULL),
                        (SELECT count(*) FROM main.relis_chunks)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?)
        })
        .unwrap()
    }

    /// A value over 400 bytes leaves its key row (which must stay inside its B-tree page), and
    /// overwriting it in place replaces its chunk rows, dropping the ones past its new end.
    #[test]
    fn values_over_the_threshold_live_in_chunks_and_are_overwritten_in_place() {
        let db = Db::open_in_memory().unwrap();
        db.set("small", vec![b'a'; 400]).unwrap();
        db.set("k", vec![b'b'; 401]).unwrap();
        assert_eq!(shape(&db), (1, 1));
        let id = |db: &Db| -> i64 {
            db.read(|r| {
                Ok(r.conn.query_row(
                    "SELECT id FROM main.relis_keys WHERE key = CAST('k' AS BLOB)",
                    [],
                    |r| r.get(0),
                )?)
            })
            .unwrap()
        };
        let first = id(&db);
        let big: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
        db.set("k", &big).unwrap();
        assert_eq!(shape(&db), (1, 3));
        assert_eq!(db.get("k").unwrap().unwrap().to_vec(), big);
        db.set("k", &big[..2000]).unwrap();
        assert_eq!(shape(&db), (1, 2));
        assert_eq!(db.get("k").unwrap().unwrap().to_vec(), big[..2000]);
        assert_eq!(id(&db), first, "overwritten in place");
        assert_eq!(db.strlen("k").unwrap(), 2000);
        db.set("k", "short").unwrap();
        assert_eq!(shape(&db), (2, 0));
        assert_eq!(db.get("k").unwrap().unwrap().to_vec(), b"short");
    }

    /// SETBIT inside a chunked string writes its one chunk and the key row, and reads the bit
    /// it replaced.
    #[test]
    fn setbit_in_a_chunked_string_changes_one_chunk() {
        let db = Db::open_in_memory().unwrap();
        db.set("k", vec![0u8; 5000]).unwrap();
        let changes = db
            .write(|w| {
                let before = w.conn.total_changes();
                let first = w.setbit(0, b"k", 8 * 4500 + 3, true)?;
                let again = w.setbit(0, b"k", 8 * 4500 + 3, true)?;
                Ok((first, again, w.conn.total_changes() - before))
            })
            .unwrap();
        // The chunk row (an empty one grows through SQL); the key row's new version, mtime and
        // raw flag are written once, before the commit (`PendingRow`).
        assert_eq!(changes, ((0, true), (1, false), 1));
        let mut want = vec![0u8; 5000];
        want[4500] = 0x10;
        assert_eq!(db.get("k").unwrap().unwrap().to_vec(), want);
        // The empty row grew to its chunk's full length (the last chunk: to the string's end),
        // so the next SETBIT in it writes its byte in place, no row through SQL.
        let (len, changes) = db
            .write(|w| {
                let len: i64 = w.conn.query_row(
                    "SELECT length(data) FROM main.relis_chunks WHERE n = 2",
                    [],
                    |r| r.get(0),
                )?;
                let before = w.conn.total_changes();
                assert_eq!(w.setbit(0, b"k", 8 * 3970, true)?, (0, true));
                Ok((len, w.conn.total_changes() - before))
            })
            .unwrap();
        assert_eq!((len, changes), (5000 - 2 * 1984, 0));
        want[3970] = 0x80;
        assert_eq!(db.get("k").unwrap().unwrap().to_vec(), want);
    }

    /// A SETBIT that finds its bit already as asked, in a chunked string (raw whatever it
    /// holds), writes nothing: not the chunk, not the key row.
    #[test]
    fn setbit_to_the_same_bit_of_a_chunked_string_writes_nothing() {
        let db = Db::open_in_memory().unwrap();
        db.set("k", vec![0xffu8; 5000]).unwrap();
        let (bit, changes) = db
            .write(|w| {
                let before = w.conn.total_changes();
                let bit = w.setbit(0, b"k", 8 * 4000 + 1, true)?;
                Ok((bit, w.conn.total_changes() - before))
            })
            .unwrap();
        assert_eq!((bit, changes), ((1, false), 0));
    }

    /// SETBIT in a chunk row that holds the byte writes that byte in place (through a blob
    /// handle, not an UPDATE of the row): the other bytes stay, the old bit is returned, and a
    /// rolled-back savepoint takes the write back.
    #[test]
    fn setbit_in_a_full_chunk_writes_the_byte_in_place() {
        let db = Db::open_in_memory().unwrap();
        let v: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8 | 1).collect();
        db.set("k", &v).unwrap();
        // Byte 2500 is 0xf1: its bit 4 (mask 0x08) is clear.
        let (bit, byte) = (8 * 2500 + 4, 2500);
        let rolled_back = db
            .write(move |w| {
                let got = w.atomic(|w| -> crate::Result<()> {
                    w.setbit(0, b"k", bit, true)?;
                    Err(crate::Error::NoSuchKey)
                });
                assert_eq!(got, Err(crate::Error::NoSuchKey));
                Ok(w.get(0, b"k")?.unwrap().to_vec())
            })
            .unwrap();
        assert_eq!(rolled_back, v);
        let (old, changes) = db
            .write(move |w| {
                let before = w.conn.total_changes();
                let old = w.setbit(0, b"k", bit, true)?;
                Ok((old, w.conn.total_changes() - before))
            })
            .unwrap();
        // No row changed through SQL: the byte went through the blob handle, and the key row
        // waits for the commit (`PendingRow`).
        assert_eq!(v[byte], 0xf1);
        assert_eq!((old, changes), ((0, true), 0));
        let mut want = v.clone();
        want[byte] |= 0x08;
        assert_eq!(db.get("k").unwrap().unwrap().to_vec(), want);
        assert_eq!(db.read(move |r| r.getbit(0, b"k", bit)).unwrap(), Some(1));
        // Clearing it back, and a clear of a clear bit (no write, reported unchanged).
        let again = db
            .write(move |w| {
                Ok((
                    w.setbit(0, b"k", bit, false)?,
                    w.setbit(0, b"k", bit, false)?,
                ))
            })
            .unwrap();
        assert_eq!(again, ((1, true), (0, false)));
        assert_eq!(db.get("k").unwrap().unwrap().to_vec(), v);
    }

    /// The key's version and mtime, as the writer's connection sees them.
    fn version_mtime(w: &crate::Writer<'_>) -> (i64, i64) {
        let m = w.meta(0, b"k").unwrap().unwrap();
        (m.version, m.mtime)
    }

    /// A run of SETBITs on one large bitmap in one transaction writes its key row once, at the
    /// commit; meanwhile the writer's reads of the key (EXEC's WATCH check, OBJECT IDLETIME)
    /// see each SETBIT's new version, and other connections see the last one after the commit.
    #[test]
    fn a_run_of_setbits_writes_the_key_row_once() {
        let db = Db::open_in_memory().unwrap();
        db.set("k", vec![0x11u8; 50_000]).unwrap();
        let (v0, _) = db.write(|w| Ok(version_mtime(w))).unwrap();
        let (versions, changes, end) = db
            .write(|w| {
                let before = w.conn.total_changes();
                let mut versions = vec![];
                for i in 0..10u64 {
                    // Bit 0 of bytes 0, 4000, 8000, ...: all clear.
                    assert_eq!(w.setbit(0, b"k", i * 8 * 4000, true)?, (0, true));
                    versions.push(version_mtime(w).0);
                }
                Ok((
                    versions,
                    w.conn.total_changes() - before,
                    w.conn.total_changes(),
                ))
            })
            .unwrap();
        assert_eq!(changes, 0, "no row written through SQL inside the job");
        assert!(versions.windows(2).all(|p| p[0] < p[1]) && versions[0] > v0);
        let (at_commit, after) = db
            .write(move |w| Ok((w.conn.total_changes() - end, version_mtime(w))))
            .unwrap();
        assert_eq!(at_commit, 1, "the key row, once");
        assert_eq!(after.0, versions[9]);
        let seen = db
            .read(|r| Ok(r.meta(0, b"k")?.map(|m| m.version)))
            .unwrap();
        assert_eq!(seen, Some(versions[9]));
        let v = db.get("k").unwrap().unwrap();
        assert_eq!(v.len(), 50_000);
        assert!((0..10).all(|i| v[i * 4000] == 0x91));
    }

    /// A pending key-row write goes with a rolled-back savepoint, as the SETBIT that made it.
    #[test]
    fn a_pending_key_row_write_is_rolled_back_with_its_savepoint() {
        let db = Db::open_in_memory().unwrap();
        db.set("k", vec![0x11u8; 5000]).unwrap();
        let (before, inside, after) = db
            .write(|w| {
                let before = version_mtime(w).0;
                let inside = w.atomic(|w| -> crate::Result<i64> {
                    w.setbit(0, b"k", 0, true)?;
                    Ok(version_mtime(w).0)
                })?;
                let _ = w.atomic(|w| -> crate::Result<()> {
                    w.setbit(0, b"k", 8, true)?;
                    Err(crate::Error::NoSuchKey)
                });
                Ok((before, inside, version_mtime(w).0))
            })
            .unwrap();
        assert!(inside > before);
        assert_eq!(
            after, inside,
            "the rolled-back SETBIT's version went with it"
        );
        let committed = db.read(|r| Ok(r.meta(0, b"k")?.unwrap().version)).unwrap();
        assert_eq!(committed, inside);
        let v = db.get("k").unwrap().unwrap();
        assert_eq!((v[0], v[1]), (0x91, 0x11));
    }

    /// A write that replaces the key row after SETBITs in the same transaction (SET, APPEND,
    /// DEL and a new key of the same name) keeps its own version: the pending write of the
    /// older row is dropped, not written over the new one.
    #[test]
    fn a_later_write_of_the_row_wins_over_a_pending_one() {
        let db = Db::open_in_memory().unwrap();
        db.set("k", vec![0x11u8; 5000]).unwrap();
        let set_version = db
            .write(|w| {
                w.setbit(0, b"k", 0, true)?;
                w.set(0, b"k", b"short", crate::SetOptions::default())?;
                Ok(version_mtime(w).0)
            })
            .unwrap();
        let committed = db.read(|r| Ok(r.meta(0, b"k")?.unwrap().version)).unwrap();
        assert_eq!(committed, set_version);
        assert_eq!(db.get("k").unwrap().unwrap().to_vec(), b"short");
        db.set("k", vec![0x11u8; 5000]).unwrap();
        let (grown, last) = db
            .write(|w| {
                w.setbit(0, b"k", 0, true)?;
                // Past the end: the string grows, its row is written at once.
                w.setbit(0, b"k", 8 * 6000, true)?;
                let grown = version_mtime(w).0;
                w.del(0, &["k".into()])?;
                w.setbit(0, b"k", 8 * 3000, true)?;
                w.setbit(0, b"k", 8 * 100, true)?;
                Ok((grown, version_mtime(w).0))
            })
            .unwrap();
        assert!(last > grown);
        let m = db.read(|r| Ok(r.meta(0, b"k")?.unwrap())).unwrap();
        assert_eq!((m.version, m.count), (last, 3001));
        let v = db.get("k").unwrap().unwrap();
        assert_eq!((v[100], v[3000], v[0]), (0x80, 0x80, 0));
    }

    /// PFADD to a dense HLL (12 KB, chunked) rewrites the chunks it changed, not all seven.
    #[test]
    fn pfadd_to_a_dense_hll_writes_the_chunks_it_changed() {
        let db = Db::open_in_memory().unwrap();
        let many: Vec<String> = (0..5000).map(|i| format!("e{i}")).collect();
        db.pfadd("h", &many).unwrap();
        assert_eq!(shape(&db).1, 12304_usize.div_ceil(1984) as i64);
        let changes = db
            .write(|w| {
                let before = w.conn.total_changes();
                let added = w.pfadd(0, b"h", &[bytes::Bytes::from("new-one")], 3000)?;
                Ok((added, w.conn.total_changes() - before))
            })
            .unwrap();
        assert!(changes.0);
        assert!(changes.1 <= 3, "{} rows written", changes.1);
        assert_eq!(db.pfcount(&["h"]).unwrap(), {
            let fresh = Db::open_in_memory().unwrap();
            let mut all = many.clone();
            all.push("new-one".into());
            fresh.pfadd("h", &all).unwrap();
            fresh.pfcount(&["h"]).unwrap()
        });
    }

    /// PFADD of a few elements to a dense HLL reads only the chunks their registers are in;
    /// the value it leaves is byte for byte the one a whole read and write makes.
    #[test]
    fn pfadd_reading_part_of_a_dense_hll_leaves_the_same_bytes() {
        let many: Vec<String> = (0..5000).map(|i| format!("e{i}")).collect();
        // Some whose register spans two chunks, and others.
        let spanning = (0..).map(|i| format!("s{i}")).filter(|e| {
            // Register i's 6 bits start at bit 8 * 16 + 6 * i of the value.
            let first_bit = 8 * 16 + 6 * crate::types::hll::pattern(e.as_bytes()).0;
            (first_bit / 8) % super::CHUNK == super::CHUNK - 1 && first_bit % 8 > 2
        });
        let more: Vec<String> = spanning
            .take(5)
            .chain((0..300).map(|i| format!("more{i}")))
            .collect();
        let (one_by_one, at_once) = (Db::open_in_memory().unwrap(), Db::open_in_memory().unwrap());
        for db in [&one_by_one, &at_once] {
            db.pfadd("h", &many).unwrap();
        }
        for e in &more {
            one_by_one.pfadd("h", &[e]).unwrap();
        }
        // Hundreds of elements touch every chunk: this one reads the value whole.
        at_once.pfadd("h", &more).unwrap();
        let (a, b) = (
            one_by_one.get("h").unwrap().unwrap(),
            at_once.get("h").unwrap().unwrap(),
        );
        assert_eq!(a.len(), 12304);
        assert!(a == b, "the HLLs differ");
        assert_eq!(
            one_by_one.pfcount(&["h"]).unwrap(),
            at_once.pfcount(&["h"]).unwrap()
        );
    }

    /// A far SETBIT on a new key writes one chunk of data and empty rows before it.
    #[test]
    fn growth_writes_empty_rows() {
        let db = Db::open_in_memory().unwrap();
        let off = 8 * 10_000_000u64 + 7;
        db.write(move |w| w.setbit(0, b"k", off, true)).unwrap();
        let (rows, bytes): (i64, i64) = db
            .read(|r| {
                Ok(r.conn.query_row(
                    "SELECT count(*), total(length(data)) FROM main.relis_chunks",
                    [],
                    |r| Ok((r.get(0)?, r.get::<_, f64>(1)? as i64)),
                )?)
            })
            .unwrap();
        assert_eq!(rows, 10_000_001_u64.div_ceil(1984) as i64);
        assert!(bytes < 1984, "{bytes}");
        assert_eq!(db.strlen("k").unwrap(), 10_000_001);
        assert_eq!(db.getrange("k", -2, -1).unwrap().to_vec(), vec![0, 1]);
    }

    /// Deleting a chunked string of more than 1024 chunks hands its chunks to the background
    /// sweep (as a large collection's elements), which deletes them in batches; a short one goes
    /// at once. FLUSHDB trashes them too. (Counted inside the deleting write: the writer's own
    /// sweep may empty the trash as soon as it commits.)
    #[test]
    fn large_deletes_go_to_the_trash() {
        let db = Db::open_in_memory().unwrap();
        fn count(c: &rusqlite::Connection, sql: &str) -> i64 {
            c.query_row(sql, [], |r| r.get(0)).unwrap()
        }
        const CHUNKS: &str = "SELECT count(*) FROM main.relis_chunks";
        const TRASH: &str = "SELECT count(*) FROM main.relis_trash WHERE type = 0";
        db.set("small", vec![7u8; 100_000]).unwrap();
        db.set("big", vec![7u8; 3_000_000]).unwrap();
        let got = db
            .write(|w| {
                let before = count(w.conn, CHUNKS);
                w.del(0, &["small".into(), "big".into()])?;
                Ok((before, count(w.conn, CHUNKS), count(w.conn, TRASH)))
            })
            .unwrap();
        assert_eq!(got, (51 + 1513, 1513, 1));
        while db.read(|r| Ok(count(r.conn, CHUNKS))).unwrap() > 0 {
            db.write(|w| w.empty_trash(500)).unwrap();
        }
        assert_eq!(db.read(|r| Ok(count(r.conn, TRASH))).unwrap(), 0);
        db.set("big", vec![1u8; 3_000_000]).unwrap();
        let trashed = db
            .write(|w| {
                w.flushdb(0)?;
                Ok(count(w.conn, TRASH))
            })
            .unwrap();
        assert_eq!(trashed, 1);
        assert_eq!(db.get("big").unwrap(), None);
    }
}
