//! Generic key commands: existence, deletion, expiry, renaming, copying, scanning, and the
//! database-wide ones (DBSIZE, FLUSHDB, SWAPDB).

use crate::backend::sqlite::counts;
use crate::backend::sqlite::db::Db;
use crate::backend::sqlite::sql::keys as q;
use crate::backend::sqlite::stmt::prepare;
use crate::backend::sqlite::store::{KeyMeta, KeyType, Reader, WideChange, Writer};
use crate::error::{Error, Result};
use crate::glob::{glob_match, literal_prefix};
use bytes::Bytes;
use rusqlite::OptionalExtension;

/// Condition of EXPIRE and friends (Redis 7's NX / XX / GT / LT).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExpireCond {
    /// Always set.
    #[default]
    Always,
    /// Only if the key has no expiry.
    Nx,
    /// Only if the key has an expiry.
    Xx,
    /// Only if the new expiry is later (a key without expiry counts as infinite).
    Gt,
    /// Only if the new expiry is earlier (a key without expiry counts as infinite, so it passes).
    Lt,
    /// XX and LT together: only if the key has an expiry and the new one is earlier. (XX with GT
    /// is just [`ExpireCond::Gt`], which never passes for a key without expiry.)
    XxLt,
}

/// A key's time to live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ttl {
    /// The key does not exist.
    Missing,
    /// The key exists and does not expire.
    Persistent,
    /// The key expires at this unix time in milliseconds.
    At(i64),
}

/// Facts OBJECT reports about a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectInfo {
    /// The key's metadata.
    pub meta: KeyMeta,
    /// Redis's name for the value's internal encoding.
    pub encoding: &'static str,
    /// Whether the value is one of Redis's shared integers (OBJECT REFCOUNT says 2147483647).
    pub shared_integer: bool,
}

/// One database's entry in INFO keyspace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyspaceInfo {
    /// Logical database index.
    pub db: u32,
    /// Keys in it.
    pub keys: i64,
    /// Keys with an expiry.
    pub expires: i64,
}

/// A page of SCAN.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScanPage {
    /// Keys of this page that pass the filters.
    pub keys: Vec<Bytes>,
    /// Where the next page starts (after this key), or `None` when the scan is complete.
    pub next: Option<Bytes>,
}

/// The smallest byte string greater than every string starting with `prefix`, if any.
pub(crate) fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

const SHARED_INTEGERS: i64 = 10_000;

impl Reader<'_> {
    /// EXISTS: how many of `keys` exist (a key named twice counts twice).
    ///
    /// # Errors
    /// Storage errors only.
    pub fn exists(&self, db: u32, keys: &[Bytes]) -> Result<i64> {
        let mut n = 0;
        for k in keys {
            if self.meta(db, k)?.is_some() {
                n += 1;
            }
        }
        Ok(n)
    }

    /// TYPE.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn key_type(&self, db: u32, key: &[u8]) -> Result<Option<KeyType>> {
        Ok(self.meta(db, key)?.map(|m| m.kind))
    }

    /// TTL / PTTL / EXPIRETIME / PEXPIRETIME.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn ttl(&self, db: u32, key: &[u8]) -> Result<Ttl> {
        Ok(match self.meta(db, key)? {
            None => Ttl::Missing,
            Some(KeyMeta {
                expire_at: None, ..
            }) => Ttl::Persistent,
            Some(KeyMeta {
                expire_at: Some(at),
                ..
            }) => Ttl::At(at),
        })
    }

    /// KEYS: every live key of `db` matching `pattern`, in key order.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn keys(&self, db: u32, pattern: &[u8]) -> Result<Vec<Bytes>> {
        if let Some(shared) = &self.shared {
            // The pattern's literal prefix bounds the range PostgreSQL reads.
            let prefix = literal_prefix(pattern);
            let upper = prefix_end(&prefix);
            let keys = shared.keys(db, &prefix, upper.as_deref(), self.now)?;
            return Ok(keys
                .into_iter()
                .filter(|k| glob_match(pattern, k, false))
                .map(Bytes::from)
                .collect());
        }
        let mut out = Vec::new();
        let mut after: Option<Bytes> = None;
        loop {
            let page = self.scan(db, after.as_deref(), 1000, Some(pattern), None)?;
            out.extend(page.keys);
            match page.next {
                Some(n) => after = Some(n),
                None => return Ok(out),
            }
        }
    }

    /// SCAN: up to `count` keys after `after` (in key order), filtered by glob and type.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn scan(
        &self,
        db: u32,
        after: Option<&[u8]>,
        count: usize,
        pattern: Option<&[u8]>,
        kind: Option<KeyType>,
    ) -> Result<ScanPage> {
        let pattern = pattern.filter(|p| *p != b"*");
        let prefix = pattern.map(literal_prefix).unwrap_or_default();
        let lower: &[u8] = match after {
            Some(a) if a >= prefix.as_slice() => a,
            _ => &prefix,
        };
        let strict = after.is_some_and(|a| a >= prefix.as_slice());
        let upper = if prefix.is_empty() {
            None
        } else {
            prefix_end(&prefix)
        };
        let sql = q::scan(strict, upper.is_some());
        let mut st = crate::backend::sqlite::stmt::dynamic(self.conn, &sql)?;
        let limit = count.max(1) as i64;
        let mut params: Vec<(&str, &dyn rusqlite::ToSql)> = vec![
            (":db", &db),
            (":lower", &lower),
            (":now", &self.now),
            (":limit", &limit),
        ];
        if let Some(u) = &upper {
            params.push((":upper", u));
        }
        let mut rows = st.query(params.as_slice())?;
        let mut page = ScanPage::default();
        let mut seen = 0;
        let mut last: Option<Bytes> = None;
        while let Some(r) = rows.next()? {
            seen += 1;
            let key = Bytes::copy_from_slice(r.get_ref(0)?.as_blob()?);
            let t = KeyType::from_code(r.get(1)?)?;
            let keep =
                pattern.is_none_or(|p| glob_match(p, &key, false)) && kind.is_none_or(|k| k == t);
            last = Some(key.clone());
            if keep {
                page.keys.push(key);
            }
        }
        if seen as i64 == limit {
            page.next = last;
        }
        Ok(page)
    }

    /// SCAN over a keyspace other processes share (the PostgreSQL backend): up to `count` keys
    /// after `cursor` (`0`: from the start), filtered by glob and type, and the cursor of the
    /// next page (`0`: the scan is complete). The cursor comes from the data (every key keeps
    /// one position for its life), so it is valid on any node; every key present for the whole
    /// scan is returned exactly once. `None` over this process's own keyspace, whose cursors
    /// are the caller's to keep ([`Reader::scan`]).
    ///
    /// # Errors
    /// Storage errors only.
    pub fn scan_shared(
        &self,
        db: u32,
        cursor: u64,
        count: usize,
        pattern: Option<&[u8]>,
        kind: Option<KeyType>,
    ) -> Result<Option<(u64, Vec<Bytes>)>> {
        let Some(shared) = &self.shared else {
            return Ok(None);
        };
        let pattern = pattern.filter(|p| *p != b"*");
        let (rows, next) = shared.scan(db, cursor, count.max(1), kind.is_some(), self.now)?;
        let keys = rows
            .into_iter()
            .filter(|(k, t)| {
                pattern.is_none_or(|p| glob_match(p, k, false))
                    && kind.is_none_or(|k| *t == Some(k))
            })
            .map(|(k, _)| Bytes::from(k))
            .collect();
        Ok(Some((next, keys)))
    }

    /// RANDOMKEY.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn randomkey(&self, db: u32) -> Result<Option<Bytes>> {
        if let Some(shared) = &self.shared {
            return Ok(shared.random_key(db, self.now)?.map(Bytes::from));
        }
        let probe: [u8; 8] = rand::random();
        for at_or_after in [true, false] {
            let found: Option<Vec<u8>> =
                crate::backend::sqlite::stmt::dynamic(self.conn, &q::random_key(at_or_after))?
                    .query_row(
                        rusqlite::named_params! {":db": db, ":probe": &probe[..], ":now": self.now},
                        |r| r.get(0),
                    )
                    .optional()?;
            if let Some(k) = found {
                return Ok(Some(Bytes::from(k)));
            }
        }
        Ok(None)
    }

    /// DBSIZE: keys in `db`, counting expired keys the sweep has not removed yet, as Redis does
    /// (over a shared keyspace, live keys only: its rows carry their expiry, so excluding them
    /// costs nothing).
    ///
    /// # Errors
    /// Storage errors only.
    pub fn dbsize(&self, db: u32) -> Result<i64> {
        if let Some(shared) = &self.shared {
            return shared.dbsize(db, self.now);
        }
        // The writer keeps a count per database (see backend/sqlite/counts.rs): one row read.
        Ok(counts::current(self.conn, db)?.0)
    }

    /// Per-database key and expiry counts, for INFO keyspace (only non-empty databases).
    ///
    /// # Errors
    /// Storage errors only.
    pub fn keyspace_info(&self) -> Result<Vec<KeyspaceInfo>> {
        if let Some(shared) = &self.shared {
            let dbs = shared.keyspace_info(self.now)?;
            return Ok(dbs
                .into_iter()
                .map(|(db, keys, expires)| KeyspaceInfo { db, keys, expires })
                .collect());
        }
        Ok(counts::all(self.conn)?
            .into_iter()
            .filter(|&(_, keys, _)| keys != 0)
            .map(|(db, keys, expires)| KeyspaceInfo { db, keys, expires })
            .collect())
    }

    /// [`Reader::keyspace_info`] counted from the key rows themselves, a scan of the whole
    /// keyspace: what the kept counts must always equal (tests compare them).
    ///
    /// # Errors
    /// Storage errors only.
    #[doc(hidden)]
    pub fn keyspace_info_counted(&self) -> Result<Vec<KeyspaceInfo>> {
        let mut st = prepare(self.conn, q::KEYSPACE_COUNTED)?;
        let rows = st.query_map([], |r| {
            Ok(KeyspaceInfo {
                db: r.get(0)?,
                keys: r.get(1)?,
                expires: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// OBJECT: the key's metadata and encoding.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn object(&self, db: u32, key: &[u8]) -> Result<Option<ObjectInfo>> {
        Ok(self.object_and_string(db, key)?.map(|(info, _)| info))
    }

    /// [`Reader::object`], and the string's value when telling its encoding read it (an
    /// inline string that an in-place write did not make raw), so that DUMP and the RDB
    /// export do not look it up a second time.
    pub(crate) fn object_and_string(
        &self,
        db: u32,
        key: &[u8],
    ) -> Result<Option<(ObjectInfo, Option<bytes::Bytes>)>> {
        let Some(meta) = self.meta(db, key)? else {
            return Ok(None);
        };
        let mut string = None;
        let (encoding, shared_integer) = match meta.kind {
            // A string an in-place write unshared is raw whatever it holds (as in Redis).
            // So is a chunked one (longer than any embstr or integer).
            KeyType::String if meta.count > 0 => ("raw", false),
            KeyType::String => {
                use crate::types::strings::{STRING_EMBSTR, STRING_RAW};
                let head = self.raw_meta_head(db, key)?.map_or(0, |(_, h)| h);
                if head & STRING_RAW != 0 {
                    ("raw", false)
                } else {
                    let v = self.get(db, key)?.unwrap_or_default();
                    let encoding = match crate::types::strings::parse_i64(&v) {
                        // INCRBYFLOAT's "3" is an embstr in Redis, not an integer.
                        Some(n) if head & STRING_EMBSTR == 0 => {
                            ("int", (0..SHARED_INTEGERS).contains(&n))
                        }
                        _ if v.len() <= 44 => ("embstr", false),
                        _ => ("raw", false),
                    };
                    string = Some(v);
                    encoding
                }
            }
            // Hashes: listpack or hashtable, as recorded by the hash family (see hash.rs).
            KeyType::Hash => (self.hash_encoding(db, key)?, false),
            // Lists are always quicklists in Redis 7.0 (listpack lists arrived in 7.2).
            KeyType::List => ("quicklist", false),
            // Sets: intset or hashtable, as recorded by the set family (see set.rs).
            KeyType::Set => (self.set_encoding(db, key)?, false),
            // Sorted sets record Redis's one-way conversion in their key row (see zset.rs).
            KeyType::ZSet => (self.zset_encoding(db, key)?, false),
            KeyType::Stream => ("stream", false),
        };
        Ok(Some((
            ObjectInfo {
                meta,
                encoding,
                shared_integer,
            },
            string,
        )))
    }
}

impl Writer<'_> {
    /// DEL / UNLINK: deletes the keys that exist, returning how many it deleted.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn del(&mut self, db: u32, keys: &[Bytes]) -> Result<i64> {
        let mut n = 0;
        for k in keys {
            if let Some(m) = self.meta_for_write(db, k)? {
                self.delete_key(db, k, &m)?;
                n += 1;
            }
        }
        Ok(n)
    }

    /// Sets or clears the expiry of an existing key row (whose expiry is `before`) and bumps
    /// its version.
    pub(crate) fn set_expire_at(
        &mut self,
        db: u32,
        key: &[u8],
        before: Option<i64>,
        at: Option<i64>,
    ) -> Result<()> {
        let version = self.next_version();
        if prepare(self.conn, q::SET_EXPIRE_AT)?.execute((db, key, at, version, self.now))? > 0 {
            self.count_expiry_change(db, before, at);
        }
        Ok(())
    }

    /// EXPIRE and friends with an absolute time in ms: returns whether the expiry was set (a
    /// time not in the future deletes the key, which also counts as set).
    ///
    /// # Errors
    /// Storage errors only.
    pub fn expire_at(&mut self, db: u32, key: &[u8], at: i64, cond: ExpireCond) -> Result<bool> {
        let Some(m) = self.meta_for_write(db, key)? else {
            return Ok(false);
        };
        let ok = match (cond, m.expire_at) {
            (ExpireCond::Always, _) => true,
            (ExpireCond::Nx, cur) => cur.is_none(),
            (ExpireCond::Xx, cur) => cur.is_some(),
            (ExpireCond::Gt, None) => false,
            (ExpireCond::Gt, Some(cur)) => at > cur,
            (ExpireCond::Lt, None) => true,
            (ExpireCond::Lt, Some(cur)) => at < cur,
            (ExpireCond::XxLt, None) => false,
            (ExpireCond::XxLt, Some(cur)) => at < cur,
        };
        if !ok {
            return Ok(false);
        }
        if at <= self.expiry_now {
            self.delete_key(db, key, &m)?;
        } else {
            self.set_expire_at(db, key, m.expire_at, Some(at))?;
        }
        Ok(true)
    }

    /// PERSIST: removes the expiry; whether there was one.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn persist(&mut self, db: u32, key: &[u8]) -> Result<bool> {
        match self.meta_for_write(db, key)? {
            Some(m) if m.expire_at.is_some() => {
                self.set_expire_at(db, key, m.expire_at, None)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// RENAME (`nx = false`) and RENAMENX: returns whether it renamed.
    ///
    /// # Errors
    /// [`Error::NoSuchKey`] when `src` does not exist.
    pub fn rename(&mut self, db: u32, src: &[u8], dst: &[u8], nx: bool) -> Result<bool> {
        let Some(_) = self.meta_for_write(db, src)? else {
            return Err(Error::NoSuchKey);
        };
        if src == dst {
            return Ok(!nx);
        }
        if let Some(d) = self.meta_for_write(db, dst)? {
            if nx {
                return Ok(false);
            }
            self.delete_key(db, dst, &d)?;
        }
        let version = self.next_version();
        prepare(self.conn, q::RENAME)?.execute((db, src, dst, version, self.now))?;
        // Redis adds the value under its new name (`new`) before deleting the old one.
        self.note_new(db, dst);
        Ok(true)
    }

    /// COPY: returns whether it copied.
    ///
    /// # Errors
    /// [`Error::DbIndexOutOfRange`] for a bad `dst_db`; [`Error::SameObject`] for the same key in
    /// the same database (whether or not it exists), as Redis checks in that order.
    pub fn copy(
        &mut self,
        db: u32,
        src: &[u8],
        dst_db: u32,
        dst: &[u8],
        replace: bool,
    ) -> Result<bool> {
        self.check_db(dst_db)?;
        if db == dst_db && src == dst {
            return Err(Error::SameObject);
        }
        let Some(m) = self.meta_for_write(db, src)? else {
            return Ok(false);
        };
        if let Some(d) = self.meta_for_write(dst_db, dst)? {
            if !replace {
                return Ok(false);
            }
            self.delete_key(dst_db, dst, &d)?;
        }
        let id = self.next_version();
        prepare(self.conn, q::COPY_KEY_ROW)?.execute((db, src, dst_db, dst, id, self.now))?;
        // The copy keeps the source's expiry.
        self.count_new_key(dst_db, m.expire_at);
        self.note_new(dst_db, dst);
        self.copy_elements(&m, id)?;
        Ok(true)
    }

    /// Copies a collection's elements to the key with id `to`.
    fn copy_elements(&mut self, meta: &KeyMeta, to: i64) -> Result<()> {
        // An inline string is in the key row, which the INSERT above copied.
        let sql = match meta.kind {
            KeyType::String if meta.count == 0 => return Ok(()),
            KeyType::String => q::COPY_CHUNKS,
            KeyType::Hash => q::COPY_HASH,
            KeyType::Set => q::COPY_SET,
            KeyType::List => q::COPY_LIST,
            KeyType::ZSet => {
                crate::types::zset::flush_pending(self.conn)?;
                prepare(self.conn, q::COPY_ZRANK)?.execute((meta.id, to))?;
                q::COPY_ZSET
            }
            KeyType::Stream => {
                // Redis's COPY takes the consumer groups along.
                for sql in [
                    q::COPY_STREAM_GROUPS,
                    q::COPY_STREAM_CONSUMERS,
                    q::COPY_STREAM_PEL,
                ] {
                    prepare(self.conn, sql)?.execute((meta.id, to))?;
                }
                q::COPY_STREAM
            }
        };
        prepare(self.conn, sql)?.execute((meta.id, to))?;
        Ok(())
    }

    /// MOVE: returns whether it moved.
    ///
    /// # Errors
    /// [`Error::DbIndexOutOfRange`] for a bad `dst_db`; [`Error::SameObject`] when
    /// `dst_db == db`.
    pub fn move_key(&mut self, db: u32, key: &[u8], dst_db: u32) -> Result<bool> {
        self.check_db(dst_db)?;
        if db == dst_db {
            return Err(Error::SameObject);
        }
        let Some(m) = self.meta_for_write(db, key)? else {
            return Ok(false);
        };
        if self.meta_for_write(dst_db, key)?.is_some() {
            return Ok(false);
        }
        let version = self.next_version();
        prepare(self.conn, q::MOVE_KEY)?.execute((db, key, dst_db, version, self.now))?;
        let expiring = i64::from(m.expire_at.is_some());
        self.count_keys(db, -1, -expiring);
        self.count_keys(dst_db, 1, expiring);
        self.note_new(dst_db, key);
        Ok(true)
    }

    /// FLUSHDB.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn flushdb(&mut self, db: u32) -> Result<()> {
        if self.shared.is_some() {
            // The rows go when the group commits, in its transaction.
            self.st().wide.push(WideChange::Flush(Some(db)));
        }
        // Collections' elements (and chunked strings' chunks) go to the trash: the background
        // sweep deletes them in batches.
        prepare(self.conn, q::FLUSHDB_TRASH)?.execute([db])?;
        prepare(self.conn, q::FLUSHDB_KEYS)?.execute([db])?;
        if self.shared.is_none() {
            counts::set(self.conn, db, (0, 0))?;
        }
        Ok(())
    }

    /// FLUSHALL.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn flushall(&mut self) -> Result<()> {
        if self.shared.is_some() {
            self.st().wide.push(WideChange::Flush(None));
        }
        // Unqualified DELETEs: SQLite truncates these tables rather than visiting each row.
        for sql in q::FLUSHALL {
            crate::backend::sqlite::stmt::dynamic(self.conn, sql)?.execute([])?;
        }
        if self.shared.is_none() {
            counts::clear_all(self.conn)?;
        }
        Ok(())
    }

    /// SWAPDB.
    ///
    /// # Errors
    /// [`Error::DbIndexOutOfRange`].
    pub fn swapdb(&mut self, a: u32, b: u32) -> Result<()> {
        self.check_db(a)?;
        self.check_db(b)?;
        if a == b {
            return Ok(());
        }
        if self.shared.is_some() {
            // The scratch swaps the keys it holds; the databases swap when the group commits.
            self.st().wide.push(WideChange::Swap(a, b));
        }
        // Every key of both databases changes `db`, so bump versions too: a WATCH on either side
        // sees its key change, as in Redis.
        let version = self.next_version();
        // In three steps through database -1: SQLite checks the (db, key) primary key row by
        // row, so swapping in one UPDATE fails when both databases hold the same key.
        for (from, to) in [
            (i64::from(a), -1),
            (i64::from(b), i64::from(a)),
            (-1, i64::from(b)),
        ] {
            prepare(self.conn, q::SWAPDB_STEP)?.execute((from, to, version))?;
        }
        if self.shared.is_none() {
            let (ca, cb) = (
                counts::current(self.conn, a)?,
                counts::current(self.conn, b)?,
            );
            counts::set(self.conn, a, cb)?;
            counts::set(self.conn, b, ca)?;
        }
        Ok(())
    }
}

impl Db {
    /// DEL.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn del<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<i64> {
        let db = self.index();
        let keys: Vec<Bytes> = keys
            .iter()
            .map(|k| Bytes::copy_from_slice(k.as_ref()))
            .collect();
        self.write(move |w| w.del(db, &keys))
    }

    /// EXISTS.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn exists<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<i64> {
        let db = self.index();
        let keys: Vec<Bytes> = keys
            .iter()
            .map(|k| Bytes::copy_from_slice(k.as_ref()))
            .collect();
        self.read(move |r| r.exists(db, &keys))
    }

    /// TYPE.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn key_type(&self, key: impl AsRef<[u8]>) -> Result<Option<KeyType>> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.read(move |r| r.key_type(db, &key))
    }

    /// EXPIRE: expire `key` after `ms` milliseconds.
    ///
    /// # Errors
    /// [`Error::InvalidExpire`] if the time overflows.
    pub fn pexpire(&self, key: impl AsRef<[u8]>, ms: i64, cond: ExpireCond) -> Result<bool> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.write(move |w| {
            let at = w.now_ms().checked_add(ms).ok_or(Error::InvalidExpire)?;
            w.expire_at(db, &key, at, cond)
        })
    }

    /// PEXPIREAT.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn pexpire_at(&self, key: impl AsRef<[u8]>, at: i64, cond: ExpireCond) -> Result<bool> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.write(move |w| w.expire_at(db, &key, at, cond))
    }

    /// TTL state of a key.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn ttl(&self, key: impl AsRef<[u8]>) -> Result<Ttl> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.read(move |r| r.ttl(db, &key))
    }

    /// PERSIST.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn persist(&self, key: impl AsRef<[u8]>) -> Result<bool> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.write(move |w| w.persist(db, &key))
    }

    /// RENAME.
    ///
    /// # Errors
    /// [`Error::NoSuchKey`].
    pub fn rename(&self, src: impl AsRef<[u8]>, dst: impl AsRef<[u8]>) -> Result<()> {
        let (db, src, dst) = (self.index(), src.as_ref().to_vec(), dst.as_ref().to_vec());
        self.write(move |w| w.rename(db, &src, &dst, false).map(|_| ()))
    }

    /// KEYS.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn keys(&self, pattern: impl AsRef<[u8]>) -> Result<Vec<Bytes>> {
        let (db, pattern) = (self.index(), pattern.as_ref().to_vec());
        self.read(move |r| r.keys(db, &pattern))
    }

    /// DBSIZE.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn dbsize(&self) -> Result<i64> {
        let db = self.index();
        self.read(move |r| r.dbsize(db))
    }

    /// FLUSHDB.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn flushdb(&self) -> Result<()> {
        let db = self.index();
        self.write(move |w| w.flushdb(db))
    }

    /// FLUSHALL: every logical database.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn flushall(&self) -> Result<()> {
        self.write(|w| w.flushall())
    }

    /// RENAMENX: renames only if `dst` does not exist; whether it renamed.
    ///
    /// # Errors
    /// [`Error::NoSuchKey`].
    pub fn renamenx(&self, src: impl AsRef<[u8]>, dst: impl AsRef<[u8]>) -> Result<bool> {
        let (db, src, dst) = (self.index(), src.as_ref().to_vec(), dst.as_ref().to_vec());
        self.write(move |w| w.rename(db, &src, &dst, true))
    }

    /// COPY `src` to `dst` in logical database `dst_db`; whether it copied.
    ///
    /// # Errors
    /// [`Error::SameObject`], [`Error::DbIndexOutOfRange`].
    pub fn copy(
        &self,
        src: impl AsRef<[u8]>,
        dst_db: u32,
        dst: impl AsRef<[u8]>,
        replace: bool,
    ) -> Result<bool> {
        let (db, src, dst) = (self.index(), src.as_ref().to_vec(), dst.as_ref().to_vec());
        self.write(move |w| w.copy(db, &src, dst_db, &dst, replace))
    }

    /// MOVE `key` to logical database `dst_db`; whether it moved.
    ///
    /// # Errors
    /// [`Error::SameObject`], [`Error::DbIndexOutOfRange`].
    pub fn move_to(&self, key: impl AsRef<[u8]>, dst_db: u32) -> Result<bool> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.write(move |w| w.move_key(db, &key, dst_db))
    }

    /// SWAPDB.
    ///
    /// # Errors
    /// [`Error::DbIndexOutOfRange`].
    pub fn swapdb(&self, a: u32, b: u32) -> Result<()> {
        self.write(move |w| w.swapdb(a, b))
    }

    /// One SCAN page: up to `count` keys after `after` (None starts), with optional glob and
    /// type filters. Continue with the page's `next` until it is `None`.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn scan(
        &self,
        after: Option<&[u8]>,
        count: usize,
        pattern: Option<&[u8]>,
        kind: Option<KeyType>,
    ) -> Result<ScanPage> {
        let db = self.index();
        let after = after.map(<[u8]>::to_vec);
        let pattern = pattern.map(<[u8]>::to_vec);
        self.read(move |r| r.scan(db, after.as_deref(), count, pattern.as_deref(), kind))
    }

    /// RANDOMKEY.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn randomkey(&self) -> Result<Option<Bytes>> {
        let db = self.index();
        self.read(move |r| r.randomkey(db))
    }

    /// OBJECT: the key's metadata and encoding.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn object(&self, key: impl AsRef<[u8]>) -> Result<Option<ObjectInfo>> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.read(move |r| r.object(db, &key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::sqlite::db::Options;
    use crate::clock::ManualClock;
    use std::sync::Arc;

    const T0: i64 = 1_700_000_000_000;

    fn open() -> (Db, ManualClock) {
        let clock = ManualClock::new(T0);
        let db = Db::open_with(Options {
            clock: Arc::new(clock.clone()),
            ..Options::default()
        })
        .unwrap();
        (db, clock)
    }

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    #[test]
    fn expiry_follows_the_clock() {
        let (db, clock) = open();
        db.set("k", "v").unwrap();
        assert_eq!(db.ttl("k").unwrap(), Ttl::Persistent);
        assert_eq!(db.ttl("missing").unwrap(), Ttl::Missing);
        assert!(db.pexpire("k", 1000, ExpireCond::Always).unwrap());
        assert_eq!(db.ttl("k").unwrap(), Ttl::At(T0 + 1000));
        clock.advance(999);
        assert_eq!(db.exists(&["k"]).unwrap(), 1);
        clock.advance(1);
        assert_eq!(db.exists(&["k"]).unwrap(), 0, "expired at its time");
        assert_eq!(db.ttl("k").unwrap(), Ttl::Missing);
        assert_eq!(db.key_type("k").unwrap(), None);
        assert!(db.keys("*").unwrap().is_empty());
        assert!(
            !db.persist("k").unwrap(),
            "an expired key is gone for writes too"
        );
        assert!(!db.pexpire("k", 1000, ExpireCond::Always).unwrap());
    }

    #[test]
    fn expire_in_the_past_deletes_and_counts_as_set() {
        let (db, _clock) = open();
        db.set("k", "v").unwrap();
        assert!(db.pexpire_at("k", T0, ExpireCond::Always).unwrap());
        assert_eq!(db.exists(&["k"]).unwrap(), 0);
        assert_eq!(db.dbsize().unwrap(), 0, "deleted, not left for the sweep");
        assert!(!db.pexpire_at("k", T0 - 1, ExpireCond::Always).unwrap());
        assert_eq!(
            db.pexpire("k", i64::MAX, ExpireCond::Always),
            Err(Error::InvalidExpire)
        );
    }

    #[test]
    fn expire_conditions() {
        use ExpireCond::*;
        let (db, _clock) = open();
        db.set("k", "v").unwrap();
        let at = |ms: i64, c: ExpireCond| db.pexpire_at("k", T0 + ms, c).unwrap();
        // No expiry yet: XX, GT and XX+LT refuse; LT counts "none" as infinite and passes.
        assert!(!at(5000, Xx));
        assert!(!at(5000, Gt));
        assert!(!at(5000, XxLt));
        assert!(at(5000, Nx));
        assert!(!at(9000, Nx));
        assert!(!at(5000, Gt), "equal is not greater");
        assert!(at(6000, Gt));
        assert!(!at(6000, Lt), "equal is not less");
        assert!(at(4000, XxLt));
        assert!(at(3000, Lt));
        assert!(at(7000, Xx));
        assert_eq!(db.ttl("k").unwrap(), Ttl::At(T0 + 7000));
        assert!(db.persist("k").unwrap());
        assert!(!db.persist("k").unwrap());
        assert!(at(2000, Lt));
        assert_eq!(db.ttl("k").unwrap(), Ttl::At(T0 + 2000));
    }

    #[test]
    fn rename_keeps_value_and_expiry() {
        let (db, _clock) = open();
        assert_eq!(db.rename("a", "b"), Err(Error::NoSuchKey));
        assert_eq!(db.rename("a", "a"), Err(Error::NoSuchKey));
        db.set("a", "1").unwrap();
        db.pexpire("a", 5000, ExpireCond::Always).unwrap();
        db.set("b", "2").unwrap();
        let nx = |src: &'static str, dst: &'static str| {
            db.write(move |w| w.rename(0, src.as_bytes(), dst.as_bytes(), true))
                .unwrap()
        };
        assert!(!nx("a", "b"));
        assert!(!nx("a", "a"));
        db.rename("a", "a").unwrap();
        db.rename("a", "b").unwrap();
        assert_eq!(db.get("b").unwrap(), Some(b("1")));
        assert_eq!(db.ttl("b").unwrap(), Ttl::At(T0 + 5000));
        assert_eq!(db.exists(&["a"]).unwrap(), 0);
        assert!(nx("b", "c"));
        assert_eq!(db.keys("*").unwrap(), vec![b("c")]);
    }

    #[test]
    fn copy_and_move_across_databases() {
        let (db, clock) = open();
        db.set("k", "v").unwrap();
        db.pexpire("k", 5000, ExpireCond::Always).unwrap();
        let copy = |src: &'static str, to: u32, dst: &'static str, replace: bool| {
            db.write(move |w| w.copy(0, src.as_bytes(), to, dst.as_bytes(), replace))
        };
        assert_eq!(copy("k", 0, "k", false), Err(Error::SameObject));
        assert_eq!(copy("nope", 0, "nope", false), Err(Error::SameObject));
        assert_eq!(copy("k", 16, "k", false), Err(Error::DbIndexOutOfRange));
        assert_eq!(copy("nope", 0, "x", false), Ok(false));
        assert_eq!(copy("k", 0, "k2", false), Ok(true));
        assert_eq!(copy("k", 0, "k2", false), Ok(false));
        assert_eq!(copy("k", 0, "k2", true), Ok(true));
        assert_eq!(copy("k", 1, "k", false), Ok(true));
        let db1 = db.select(1).unwrap();
        assert_eq!(db1.get("k").unwrap(), Some(b("v")));
        assert_eq!(
            db1.ttl("k").unwrap(),
            Ttl::At(T0 + 5000),
            "the expiry is copied"
        );
        assert_eq!(db.ttl("k2").unwrap(), Ttl::At(T0 + 5000));

        let mv = |key: &'static str, to: u32| db.write(move |w| w.move_key(0, key.as_bytes(), to));
        assert_eq!(mv("k", 0), Err(Error::SameObject));
        assert_eq!(mv("k", 16), Err(Error::DbIndexOutOfRange));
        assert_eq!(mv("k", 1), Ok(false), "db 1 has it already");
        assert_eq!(mv("nope", 1), Ok(false));
        assert_eq!(mv("k2", 2), Ok(true));
        let db2 = db.select(2).unwrap();
        assert_eq!(
            db2.ttl("k2").unwrap(),
            Ttl::At(T0 + 5000),
            "the expiry moves along"
        );
        assert_eq!(db.exists(&["k2"]).unwrap(), 0);

        // An expired destination does not block: it is gone.
        clock.advance(5000);
        db.set("k", "new").unwrap();
        assert_eq!(mv("k", 1), Ok(true));
        assert_eq!(db1.get("k").unwrap(), Some(b("new")));
    }

    #[test]
    fn flush_and_swap() {
        let (db, _clock) = open();
        let db1 = db.select(1).unwrap();
        db.set("a", "0").unwrap();
        db1.set("b", "1").unwrap();
        db.set("both", "in 0").unwrap();
        db1.set("both", "in 1").unwrap();
        db.write(|w| w.swapdb(0, 1)).unwrap();
        assert_eq!(db.keys("*").unwrap(), vec![b("b"), b("both")]);
        assert_eq!(db1.keys("*").unwrap(), vec![b("a"), b("both")]);
        assert_eq!(db.get("both").unwrap(), Some(b("in 1")));
        assert_eq!(db1.get("both").unwrap(), Some(b("in 0")));
        db.del(&["both"]).unwrap();
        db1.del(&["both"]).unwrap();
        assert_eq!(db.write(|w| w.swapdb(0, 16)), Err(Error::DbIndexOutOfRange));
        db.write(|w| w.swapdb(3, 3)).unwrap();
        db.flushdb().unwrap();
        assert_eq!((db.dbsize().unwrap(), db1.dbsize().unwrap()), (0, 1));
        db.set("c", "2").unwrap();
        db.write(|w| w.flushall()).unwrap();
        assert_eq!((db.dbsize().unwrap(), db1.dbsize().unwrap()), (0, 0));
    }

    #[test]
    fn scan_pages_cover_every_key_once() {
        let (db, _clock) = open();
        let mut want: Vec<Bytes> = (0..57).map(|i| b(&format!("key:{i}"))).collect();
        for k in &want {
            db.set(k, "v").unwrap();
        }
        db.set("other", "v").unwrap();
        want.sort();
        for pattern in [None, Some("key:*"), Some("*")] {
            let mut got = Vec::new();
            let mut after: Option<Bytes> = None;
            loop {
                let (a, p) = (after.clone(), pattern.map(|p| p.as_bytes().to_vec()));
                let page = db
                    .read(move |r| r.scan(0, a.as_deref(), 7, p.as_deref(), None))
                    .unwrap();
                assert!(page.keys.len() <= 7);
                got.extend(page.keys);
                match page.next {
                    Some(n) => after = Some(n),
                    None => break,
                }
            }
            if pattern == Some("key:*") {
                assert_eq!(got, want, "{pattern:?}");
            } else {
                assert_eq!(got.len(), 58, "{pattern:?}");
            }
        }
        let only = |kind| {
            db.read(move |r| r.scan(0, None, 1000, None, Some(kind)))
                .unwrap()
                .keys
                .len()
        };
        assert_eq!(only(KeyType::String), 58);
        assert_eq!(only(KeyType::Hash), 0);
        assert_eq!(db.keys("key:1?").unwrap().len(), 10);
        assert_eq!(db.keys("nomatch*").unwrap().len(), 0);
    }

    #[test]
    fn randomkey_skips_expired_keys() {
        let (db, clock) = open();
        assert_eq!(db.read(|r| r.randomkey(0)).unwrap(), None);
        db.set("gone", "v").unwrap();
        db.pexpire("gone", 10, ExpireCond::Always).unwrap();
        db.set("live", "v").unwrap();
        clock.advance(10);
        for _ in 0..20 {
            assert_eq!(db.read(|r| r.randomkey(0)).unwrap(), Some(b("live")));
        }
    }

    #[test]
    fn object_encodings() {
        let (db, clock) = open();
        let obj = |k: &'static str| db.read(move |r| r.object(0, k.as_bytes())).unwrap();
        for (v, enc, shared) in [
            ("0", "int", true),
            ("9999", "int", true),
            ("10000", "int", false),
            ("-1", "int", false),
            ("9223372036854775807", "int", false),
            ("12345678901234567890", "embstr", false),
            ("01", "embstr", false),
            ("+1", "embstr", false),
            (&"a".repeat(44), "embstr", false),
            (&"a".repeat(45), "raw", false),
        ] {
            db.set("k", v).unwrap();
            let info = obj("k").unwrap();
            assert_eq!((info.encoding, info.shared_integer), (enc, shared), "{v}");
        }
        assert_eq!(obj("missing"), None);
        clock.advance(3000);
        assert_eq!(obj("k").unwrap().meta.mtime, T0, "reads do not move mtime");
        db.pexpire("k", 100_000, ExpireCond::Always).unwrap();
        assert_eq!(obj("k").unwrap().meta.mtime, T0 + 3000, "writes do");
        assert_eq!(db.exists(&["k", "k", "missing"]).unwrap(), 2);
        assert_eq!(db.del(&["k", "k", "missing"]).unwrap(), 1);
    }
}
