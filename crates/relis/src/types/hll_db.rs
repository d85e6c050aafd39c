//! The HyperLogLog commands on keys: each reads a string value through the string family's
//! own read and write functions (`get`, `put_string`, so however strings are stored, an HLL is
//! stored the same way), changes it with the pure functions of [`crate::types::hll`] and writes it
//! back, all in the caller's one write transaction.
//!
//! Lookups report each key they look for to a `seen(key, found)` callback, in Redis's order,
//! because PFCOUNT and PFMERGE look their keys up as reads (`lookupKeyRead`: counted in
//! keyspace_hits / keyspace_misses, a `keymiss` event) even though they run on the writer.

use crate::backend::sqlite::db::Db;
use crate::backend::sqlite::sql::strings as sq;
use crate::backend::sqlite::stmt::prepare;
use crate::backend::sqlite::store::{KeyMeta, KeyType, Reader, Writer};
use crate::error::{Error, Result};
use crate::types::chunks::CHUNK;
use crate::types::hll::{self, HLL_REGISTERS};
use crate::types::strings::STRING_RAW;
use bytes::Bytes;

/// Hears of each read lookup: the key, and whether it was found.
type Seen<'a> = &'a mut dyn FnMut(&[u8], bool);

/// What PFDEBUG does to its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PfDebug {
    /// GETREG: the registers (converting a sparse value to dense, as Redis does).
    GetReg,
    /// DECODE: the sparse opcodes as text.
    Decode,
    /// ENCODING: `dense` or `sparse`.
    Encoding,
    /// TODENSE: converts a sparse value to dense.
    ToDense,
    /// Only checks the key (Redis looks the key up before it reads the subcommand name).
    Check,
}

/// What PFDEBUG found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PfDebugOut {
    /// GETREG's 16384 register values.
    Registers(Vec<u8>),
    /// DECODE's text, `None` for a dense value.
    Decoded(Option<String>),
    /// ENCODING's word.
    Encoding(&'static str),
    /// TODENSE: whether it converted.
    Converted(bool),
    /// The key holds an HLL.
    Checked,
}

impl Reader<'_> {
    /// A read lookup of an HLL (Redis's `lookupKeyRead` and `isHLLObjectOrReply`).
    fn hll_read(
        &self,
        db: u32,
        key: &[u8],
        seen: &mut dyn FnMut(&[u8], bool),
    ) -> Result<Option<Bytes>> {
        let l = self.lookup_string(db, key)?;
        seen(key, l.found());
        match l {
            crate::StringLookup::Missing => Ok(None),
            crate::StringLookup::OtherType => Err(Error::WrongType),
            crate::StringLookup::Value(v) => {
                hll::check(&v).map_err(Error::Hll)?;
                Ok(Some(v))
            }
        }
    }

    /// PFCOUNT of several keys: the estimate of their union (missing keys are empty), computed
    /// from merged registers, caching nothing.
    ///
    /// # Errors
    /// [`Error::WrongType`], [`Error::Hll`].
    pub fn pfcount_union(
        &self,
        db: u32,
        keys: &[Bytes],
        seen: &mut dyn FnMut(&[u8], bool),
    ) -> Result<u64> {
        let mut max = [0u8; HLL_REGISTERS];
        for k in keys {
            if let Some(v) = self.hll_read(db, k, seen)? {
                hll::merge_into(&mut max, &v).map_err(Error::Hll)?;
            }
        }
        Ok(hll::count_registers(&max))
    }
}

thread_local! {
    /// How often PFADD's recent keys on this writer were new: a saturating count, up for each
    /// key created, down for each found.
    static PFADD_CREATED: std::cell::Cell<u8> = const { std::cell::Cell::new(0) };
}

/// Records whether PFADD created its key.
fn pfadd_created(created: bool) {
    let n = PFADD_CREATED.get();
    PFADD_CREATED.set(if created {
        (n + 1).min(3)
    } else {
        n.saturating_sub(1)
    });
}

impl Writer<'_> {
    /// PFADD to a key that is not there, in one statement: the new HLL's key row inserted
    /// unless a row of that name exists (of any type, expired or not). `Some(true)` when it was
    /// created; `None` when the general path must run (a row was there, or the value would
    /// not be an inline string).
    fn pfadd_new_key(
        &mut self,
        db: u32,
        key: &[u8],
        elements: &[Bytes],
        sparse_max: usize,
    ) -> Result<Option<bool>> {
        let mut v = hll::new_hll();
        for e in elements {
            if hll::add(&mut v, e, sparse_max).is_err() {
                return Ok(None);
            }
        }
        if v.len() > crate::types::chunks::CHUNKED_ABOVE {
            return Ok(None);
        }
        hll::invalidate(&mut v);
        let version = self.next_version();
        let n = prepare(self.conn, sq::INSERT_INLINE_IF_NEW)?.execute((
            db,
            key,
            version,
            self.now,
            &v[..],
        ))?;
        if n == 0 {
            return Ok(None);
        }
        self.count_new_key(db, None);
        self.note_new(db, key);
        Ok(Some(true))
    }

    /// The HLL at `key` for a write (an expired key is deleted first), with its metadata.
    /// `seen` hears of the lookup when it counts as a read.
    fn hll_write(
        &mut self,
        db: u32,
        key: &[u8],
        seen: Option<Seen<'_>>,
    ) -> Result<Option<(KeyMeta, Vec<u8>)>> {
        let Some(m) = self.hll_meta_for_write(db, key, seen)? else {
            return Ok(None);
        };
        let v = self.string_of(db, key, &m)?;
        hll::check(&v).map_err(Error::Hll)?;
        Ok(Some((m, v)))
    }

    /// The key row of the string at `key` for a write, as [`Writer::hll_write`] looks it up,
    /// without its value.
    fn hll_meta_for_write(
        &mut self,
        db: u32,
        key: &[u8],
        seen: Option<Seen<'_>>,
    ) -> Result<Option<KeyMeta>> {
        let m = self.meta_for_write(db, key)?;
        if let Some(seen) = seen {
            seen(key, m.is_some());
        }
        match m {
            Some(m) if m.kind != KeyType::String => Err(Error::WrongType),
            m => Ok(m),
        }
    }

    /// PFADD: adds `elements` to the HLL at `key` (creating it); returns whether the HLL
    /// changed (a new key always has). `sparse_max` is `hll-sparse-max-bytes`.
    ///
    /// A corrupted sparse value fails at the first element it cannot take; as in Redis, the
    /// elements added before it are kept (they are written, and the error returned).
    ///
    /// # Errors
    /// [`Error::WrongType`], [`Error::Hll`].
    pub fn pfadd(
        &mut self,
        db: u32,
        key: &[u8],
        elements: &[Bytes],
        sparse_max: usize,
    ) -> Result<bool> {
        // When recent keys were mostly new (many small HLLs, one per user or per day), an
        // insert that succeeds spares the lookup.
        if PFADD_CREATED.get() >= 2 {
            if let Some(created) = self.pfadd_new_key(db, key, elements, sparse_max)? {
                pfadd_created(true);
                return Ok(created);
            }
        }
        let old = match self.string_for_write(db, key)? {
            Some((m, _)) if m.kind != KeyType::String => return Err(Error::WrongType),
            Some((m, inline)) => {
                // A dense HLL is 12 KB in seven chunks; a few elements need two of them.
                let v = match inline {
                    Some(v) => v,
                    None => match self.dense_hll_part(&m, elements)? {
                        Some(v) => v,
                        None => self.string_of(db, key, &m)?,
                    },
                };
                hll::check(&v).map_err(Error::Hll)?;
                Some((m, v))
            }
            None => None,
        };
        pfadd_created(old.is_none());
        let (meta, mut v, mut updated) = match old {
            Some((m, v)) => (Some(m), v, false),
            None => (None, hll::new_hll(), true),
        };
        let before = meta.is_some().then(|| v.clone());
        let mut changed = false;
        for e in elements {
            match hll::add(&mut v, e, sparse_max) {
                Ok(c) => changed |= c,
                Err(e) => {
                    if changed {
                        self.put_hll(db, key, meta.as_ref(), before.as_deref(), &v)?;
                    }
                    return Err(Error::Hll(e));
                }
            }
        }
        updated |= changed;
        if updated {
            hll::invalidate(&mut v);
            self.put_hll(db, key, meta.as_ref(), before.as_deref(), &v)?;
        }
        Ok(updated)
    }

    /// The chunked dense HLL of `meta` as far as PFADD of `elements` needs it: its full length,
    /// with the bytes of the header's chunk and of the chunks holding the elements' registers,
    /// zeros elsewhere. `None` when the value is not a chunked string of a dense HLL's length or
    /// the elements need most of its chunks (then it is read whole).
    ///
    /// The zeros are never written back: [`Writer::rewrite_string`] writes the chunks in which
    /// the value changed, and PFADD changes registers only in the chunks read.
    fn dense_hll_part(&self, meta: &KeyMeta, elements: &[Bytes]) -> Result<Option<Vec<u8>>> {
        let Some(info) = crate::types::strings::StrInfo::chunked(meta) else {
            return Ok(None);
        };
        if info.len != hll::HLL_DENSE_SIZE {
            return Ok(None);
        }
        let mut chunks = vec![0];
        for e in elements {
            let (first, last) = hll::dense_register_bytes(hll::pattern(e).0);
            chunks.extend([first / CHUNK, last / CHUNK]);
            if chunks.len() > 8 {
                return Ok(None);
            }
        }
        chunks.sort_unstable();
        chunks.dedup();
        let mut v = vec![0; info.len];
        for n in chunks {
            let start = n * CHUNK;
            let len = CHUNK.min(info.len - start);
            v[start..start + len].copy_from_slice(&self.read_chunks(info.id, start, len)?);
        }
        if !hll::is_dense(&v) {
            // A sparse value of this exact length (a large hll-sparse-max-bytes): read whole.
            return Ok(None);
        }
        Ok(Some(v))
    }

    /// PFCOUNT of one key: the cached cardinality, or the estimate, which is then cached in
    /// the value (a change of the key, as Redis makes it: a WATCH on it fails). Returns the
    /// count and whether the value was written.
    ///
    /// # Errors
    /// [`Error::WrongType`], [`Error::Hll`].
    pub fn pfcount(
        &mut self,
        db: u32,
        key: &[u8],
        seen: &mut dyn FnMut(&[u8], bool),
    ) -> Result<(u64, bool)> {
        let Some(meta) = self.hll_meta_for_write(db, key, Some(seen))? else {
            return Ok((0, false));
        };
        // A chunked value (a dense HLL is 12 KB, seven chunks): its header's chunk says whether
        // the cached estimate is valid, and Redis's check of the value reads only the header.
        if let Some(info) = crate::types::strings::StrInfo::chunked(&meta) {
            let head = self.read_chunks(info.id, 0, hll::HLL_HDR_SIZE.min(info.len))?;
            hll::check_header(&head, info.len).map_err(Error::Hll)?;
            if let Some(card) = hll::cached(&head) {
                return Ok((card, false));
            }
        }
        let mut v = self.string_of(db, key, &meta)?;
        hll::check(&v).map_err(Error::Hll)?;
        if let Some(card) = hll::cached(&v) {
            return Ok((card, false));
        }
        let card = hll::count(&v).map_err(Error::Hll)?;
        let before = v.clone();
        hll::set_cached(&mut v, card);
        self.rewrite_string(db, key, &meta, &before, &v)?;
        Ok((card, true))
    }

    /// PFMERGE: merges the HLLs at `sources` (Redis passes the destination first among them)
    /// into the HLL at `dest`, creating it. The destination becomes dense when any source is.
    ///
    /// # Errors
    /// [`Error::WrongType`], [`Error::Hll`]; nothing is written then.
    pub fn pfmerge(
        &mut self,
        db: u32,
        dest: &[u8],
        sources: &[Bytes],
        sparse_max: usize,
        seen: &mut dyn FnMut(&[u8], bool),
    ) -> Result<()> {
        let mut max = [0u8; HLL_REGISTERS];
        let mut dense = false;
        for k in sources {
            if let Some((_, v)) = self.hll_write(db, k, Some(&mut *seen))? {
                dense |= hll::is_dense(&v);
                hll::merge_into(&mut max, &v).map_err(Error::Hll)?;
            }
        }
        let (meta, mut v) = match self.hll_write(db, dest, None)? {
            Some((m, v)) => (Some(m), v),
            None => (None, hll::new_hll()),
        };
        let before = meta.is_some().then(|| v.clone());
        if dense {
            hll::to_dense(&mut v).map_err(Error::Hll)?;
        }
        for (i, &r) in max.iter().enumerate() {
            if r != 0 {
                hll::set_register(&mut v, i, r, sparse_max).map_err(Error::Hll)?;
            }
        }
        hll::invalidate(&mut v);
        self.put_hll(db, dest, meta.as_ref(), before.as_deref(), &v)
    }

    /// Writes the HLL `v` at `key` (`meta` its key row, `before` the bytes it held), only the
    /// chunks that changed when it keeps its length.
    fn put_hll(
        &mut self,
        db: u32,
        key: &[u8],
        meta: Option<&KeyMeta>,
        before: Option<&[u8]>,
        v: &[u8],
    ) -> Result<()> {
        match (meta, before) {
            (Some(m), Some(b)) => self.rewrite_string(db, key, m, b, v),
            _ => self.put_string_as(db, key, meta, v, None, STRING_RAW),
        }
    }

    /// PFDEBUG: `None` when there is no key. GETREG and TODENSE write a converted value back.
    ///
    /// # Errors
    /// [`Error::WrongType`], [`Error::Hll`].
    pub fn pfdebug(&mut self, db: u32, key: &[u8], op: PfDebug) -> Result<Option<PfDebugOut>> {
        let Some((meta, mut v)) = self.hll_write(db, key, None)? else {
            return Ok(None);
        };
        let out = match op {
            PfDebug::GetReg | PfDebug::ToDense => {
                let converted = hll::to_dense(&mut v).map_err(Error::Hll)?;
                if converted {
                    self.put_string_as(db, key, Some(&meta), &v, None, STRING_RAW)?;
                }
                match op {
                    PfDebug::GetReg => PfDebugOut::Registers(hll::dense_registers(&v)),
                    _ => PfDebugOut::Converted(converted),
                }
            }
            PfDebug::Decode => PfDebugOut::Decoded(hll::decode(&v)),
            PfDebug::Encoding => {
                PfDebugOut::Encoding(if hll::is_dense(&v) { "dense" } else { "sparse" })
            }
            PfDebug::Check => PfDebugOut::Checked,
        };
        Ok(Some(out))
    }
}

impl Db {
    /// PFADD with Redis's default `hll-sparse-max-bytes` (3000).
    ///
    /// # Errors
    /// As [`Writer::pfadd`].
    pub fn pfadd<E: AsRef<[u8]>>(&self, key: impl AsRef<[u8]>, elements: &[E]) -> Result<bool> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        let elements: Vec<Bytes> = elements
            .iter()
            .map(|e| Bytes::copy_from_slice(e.as_ref()))
            .collect();
        self.write(move |w| w.pfadd(db, &key, &elements, 3000))
    }

    /// PFCOUNT: one key (caching the estimate in its value) or the union of several.
    ///
    /// # Errors
    /// As [`Writer::pfcount`] and [`Reader::pfcount_union`].
    pub fn pfcount<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<u64> {
        let db = self.index();
        let keys: Vec<Bytes> = keys
            .iter()
            .map(|k| Bytes::copy_from_slice(k.as_ref()))
            .collect();
        match keys.len() {
            1 => self.write(move |w| Ok(w.pfcount(db, &keys[0], &mut |_, _| {})?.0)),
            _ => self.read(move |r| r.pfcount_union(db, &keys, &mut |_, _| {})),
        }
    }

    /// PFMERGE with Redis's default `hll-sparse-max-bytes`.
    ///
    /// # Errors
    /// As [`Writer::pfmerge`].
    pub fn pfmerge<K: AsRef<[u8]>>(&self, dest: impl AsRef<[u8]>, sources: &[K]) -> Result<()> {
        let (db, dest) = (self.index(), Bytes::copy_from_slice(dest.as_ref()));
        let mut all = vec![dest.clone()];
        all.extend(sources.iter().map(|k| Bytes::copy_from_slice(k.as_ref())));
        self.write(move |w| w.pfmerge(db, &dest, &all, 3000, &mut |_, _| {}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_count_merge() {
        let db = Db::open_in_memory().unwrap();
        assert_eq!(db.pfadd("h", &["a", "b", "c"]), Ok(true));
        assert_eq!(db.pfadd("h", &["a"]), Ok(false));
        assert_eq!(db.pfcount(&["h"]), Ok(3));
        // The estimate is cached in the value, valid.
        let v = db.get("h").unwrap().unwrap();
        assert_eq!(hll::cached(&v), Some(3));
        assert_eq!(db.pfadd("g", &["c", "d"]), Ok(true));
        assert_eq!(db.pfcount(&["h", "g", "missing"]), Ok(4));
        db.pfmerge("m", &["h", "g"]).unwrap();
        assert_eq!(db.pfcount(&["m"]), Ok(4));
        db.set("s", "not an hll").unwrap();
        assert_eq!(
            db.pfadd("s", &["x"]),
            Err(Error::Hll(hll::HllError::NotHll))
        );
        assert_eq!(db.pfcount(&["s"]), Err(Error::Hll(hll::HllError::NotHll)));
        db.write(|w| {
            w.conn.execute(
                "UPDATE main.relis_keys SET type = 1 WHERE key = ?1",
                [&b"h"[..]],
            )?;
            Ok(())
        })
        .unwrap();
        assert_eq!(db.pfcount(&["h"]), Err(Error::WrongType));
    }

    /// Once PFADD has mostly created keys it inserts first: the values it makes are the
    /// general path's, and a key that is there (an HLL, another type, an expired one) takes the
    /// general path.
    #[test]
    fn pfadd_of_new_keys_inserts_first_with_the_same_values() {
        let clock = std::sync::Arc::new(crate::ManualClock::new(1_000));
        let db = Db::open_with(crate::Options {
            clock: clock.clone(),
            ..crate::Options::default()
        })
        .unwrap();
        // Made the general way: on this writer, PFADD has created nothing yet.
        PFADD_CREATED.set(0);
        db.write(|w| {
            assert!(w.pfadd(0, b"general", &[Bytes::from("x"), Bytes::from("y")], 3000)?);
            Ok(())
        })
        .unwrap();
        db.hset("hash", &[("f", "v")]).unwrap();
        db.pfadd("old", &["a"]).unwrap();
        db.pexpire("old", 1, crate::ExpireCond::Always).unwrap();
        clock.advance(10);
        let got = db
            .write(|w| {
                let el = |v: &[&str]| {
                    v.iter()
                        .map(|e| Bytes::from(e.to_string()))
                        .collect::<Vec<_>>()
                };
                // Three new keys: the count reaches the insert-first side.
                for k in ["n1", "n2", "n3"] {
                    assert!(w.pfadd(0, k.as_bytes(), &el(&["x"]), 3000)?);
                }
                assert!(PFADD_CREATED.get() >= 2);
                let fast = w.pfadd(0, b"fast", &el(&["x", "y"]), 3000)?;
                let wrong = w.pfadd(0, b"hash", &el(&["x"]), 3000);
                let expired = w.pfadd(0, b"old", &el(&["b"]), 3000)?;
                let again = w.pfadd(0, b"fast", &el(&["x"]), 3000)?;
                Ok((fast, wrong, expired, again))
            })
            .unwrap();
        assert_eq!(got, (true, Err(Error::WrongType), true, false));
        assert_eq!(db.get("fast").unwrap(), db.get("general").unwrap());
        assert_eq!(db.pfcount(&["old"]), Ok(1));
        assert_eq!(db.dbsize(), Ok(7));
        assert_eq!(db.ttl("fast"), Ok(crate::Ttl::Persistent));
    }

    #[test]
    fn corrupted_sparse_keeps_what_was_added_before() {
        let db = Db::open_in_memory().unwrap();
        // A sparse HLL whose opcodes cover only the first 16 registers: an element whose
        // register is among them is added, the next one fails.
        let mut v = hll::new_hll();
        v.truncate(hll::HLL_HDR_SIZE);
        v.push(0x0f);
        db.set("c", &v).unwrap();
        let (low, high) = find_elements();
        // Through the writer: `Db::write` would roll back a closure that fails.
        let elements = vec![Bytes::from(low), Bytes::from(high)];
        let r = db
            .write(move |w| Ok(w.pfadd(0, b"c", &elements, 3000)))
            .unwrap();
        assert_eq!(r, Err(Error::Hll(hll::HllError::Corrupted)));
        let after = db.get("c").unwrap().unwrap();
        assert_ne!(after.as_ref(), v.as_slice(), "the first element was added");
        assert_eq!(hll::cached(&after), None);
    }

    /// Pages the writer's connection fetched (cache hits and misses) while `f` ran.
    fn pages_fetched<T>(w: &mut Writer<'_>, f: impl FnOnce(&mut Writer<'_>) -> T) -> (T, i32) {
        use rusqlite::ffi;
        let handle = unsafe { w.conn.handle() };
        let status = |op: i32, reset: bool| {
            let (mut cur, mut hi) = (0, 0);
            // SAFETY: the handle is the writer's open connection, used on this thread.
            unsafe { ffi::sqlite3_db_status(handle, op, &mut cur, &mut hi, i32::from(reset)) };
            cur
        };
        status(ffi::SQLITE_DBSTATUS_CACHE_HIT, true);
        status(ffi::SQLITE_DBSTATUS_CACHE_MISS, true);
        let out = f(w);
        let pages = status(ffi::SQLITE_DBSTATUS_CACHE_HIT, false)
            + status(ffi::SQLITE_DBSTATUS_CACHE_MISS, false);
        (out, pages)
    }

    /// PFCOUNT of a dense HLL (12 KB, seven chunks) whose cached cardinality is valid reads the
    /// header's chunk only, as Redis reads only the header then; with a stale cache it reads
    /// the registers (all chunks) and caches the estimate.
    #[test]
    fn pfcount_with_a_valid_cache_reads_the_header_only() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open_with(crate::Options {
            path: Some(dir.path().join("h.db")),
            ..crate::Options::default()
        })
        .unwrap();
        let many: Vec<String> = (0..5000).map(|i| format!("e{i}")).collect();
        db.pfadd("h", &many).unwrap();
        let (stale, cached) = db
            .write(|w| {
                let stale = pages_fetched(w, |w| w.pfcount(0, b"h", &mut |_, _| {}));
                let cached = pages_fetched(w, |w| w.pfcount(0, b"h", &mut |_, _| {}));
                Ok((stale, cached))
            })
            .unwrap();
        let ((n, wrote), stale_pages) = (stale.0.unwrap(), stale.1);
        let ((m, again), cached_pages) = (cached.0.unwrap(), cached.1);
        assert!(wrote && !again);
        assert_eq!(n, m);
        // Reading the value whole fetches the seven chunks' pages (and the key row's, and the
        // chunk index's); the header alone, its one chunk.
        assert!(
            stale_pages >= 9,
            "{stale_pages} pages read for a stale cache"
        );
        assert!(
            cached_pages < 7,
            "{cached_pages} pages read with a valid cache ({stale_pages} when stale)"
        );
    }

    /// PFCOUNT's header-only read of a chunked value checks what Redis's check does: a header
    /// with a valid cache is not taken on trust when the magic, the encoding or a dense value's
    /// length is wrong.
    #[test]
    fn pfcount_checks_a_chunked_header_before_its_cache() {
        let db = Db::open_in_memory().unwrap();
        let mut dense = vec![0u8; hll::HLL_DENSE_SIZE];
        dense[..4].copy_from_slice(b"HYLL");
        dense[4] = 0; // dense, cache 7 and valid
        dense[8] = 7;
        db.set("ok", &dense).unwrap();
        assert_eq!(db.pfcount(&["ok"]), Ok(7));
        let mut long = dense.clone();
        long.push(0);
        let mut encoding = dense.clone();
        encoding[4] = 2;
        let mut magic = dense.clone();
        magic[0] = b'h';
        for (k, v) in [("long", long), ("encoding", encoding), ("magic", magic)] {
            db.set(k, &v).unwrap();
            assert_eq!(
                db.pfcount(&[k]),
                Err(Error::Hll(hll::HllError::NotHll)),
                "{k}"
            );
        }
    }

    /// An element hashed to one of the first 16 registers, and one hashed past them.
    fn find_elements() -> (Vec<u8>, Vec<u8>) {
        let (mut low, mut high) = (None, None);
        for i in 0u32.. {
            let e = i.to_string().into_bytes();
            let (idx, _) = hll::pattern(&e);
            if idx < 16 && low.is_none() {
                low = Some(e);
            } else if idx >= 16 && high.is_none() {
                high = Some(e);
            }
            if let (Some(l), Some(h)) = (&low, &high) {
                return (l.clone(), h.clone());
            }
        }
        unreachable!()
    }
}
