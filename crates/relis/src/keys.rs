//! Generic key commands: existence, deletion, expiry, renaming, copying, scanning, and the
//! database-wide ones (DBSIZE, FLUSHDB, SWAPDB).

use crate::db::Db;
use crate::error::{Error, Result};
use crate::glob::{glob_match, literal_prefix};
use crate::store::{KeyMeta, KeyType, Reader, Writer, LIVE};
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
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
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
        let sql = format!(
            "SELECT key, type FROM relis_keys WHERE db = :db AND key {} :lower {} AND {LIVE}
             ORDER BY key LIMIT :limit",
            if strict { ">" } else { ">=" },
            if upper.is_some() {
                "AND key < :upper"
            } else {
                ""
            }
        );
        let mut st = self.conn.prepare_cached(&sql)?;
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

    /// RANDOMKEY.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn randomkey(&self, db: u32) -> Result<Option<Bytes>> {
        let probe: [u8; 8] = rand::random();
        let sql = |op: &str| {
            format!(
                "SELECT key FROM relis_keys WHERE db = :db AND key {op} :probe AND {LIVE}
                 ORDER BY key {} LIMIT 1",
                if op == ">=" { "ASC" } else { "DESC" }
            )
        };
        for op in [">=", "<"] {
            let found: Option<Vec<u8>> = self
                .conn
                .prepare_cached(&sql(op))?
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

    /// DBSIZE: keys in `db`, counting expired keys the sweep has not removed yet, as Redis does.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn dbsize(&self, db: u32) -> Result<i64> {
        Ok(self
            .conn
            .prepare_cached("SELECT count(*) FROM relis_keys WHERE db = ?1")?
            .query_row([db], |r| r.get(0))?)
    }

    /// Per-database key and expiry counts, for INFO keyspace (only non-empty databases).
    ///
    /// # Errors
    /// Storage errors only.
    pub fn keyspace_info(&self) -> Result<Vec<KeyspaceInfo>> {
        let mut st = self.conn.prepare_cached(
            "SELECT db, count(*), count(expire_at) FROM relis_keys GROUP BY db ORDER BY db",
        )?;
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
        let Some(meta) = self.meta(db, key)? else {
            return Ok(None);
        };
        let (encoding, shared_integer) = match meta.kind {
            KeyType::String => {
                let v = self.get(db, key)?.unwrap_or_default();
                match crate::strings::parse_i64(&v) {
                    Some(n) => ("int", (0..SHARED_INTEGERS).contains(&n)),
                    None if v.len() <= 44 => ("embstr", false),
                    None => ("raw", false),
                }
            }
            // Redis 7.0 keeps small hashes and sorted sets (up to 128 entries by default) as a
            // listpack and converts them for good once they grow. Relis judges by the element
            // count alone; Redis also converts when one element exceeds 64 bytes. The set family
            // refines sets (intset for small all-integer sets) once its table exists.
            KeyType::Hash if meta.count <= 128 => ("listpack", false),
            KeyType::Hash => ("hashtable", false),
            // Lists are always quicklists in Redis 7.0 (listpack lists arrived in 7.2).
            KeyType::List => ("quicklist", false),
            KeyType::Set => ("hashtable", false),
            KeyType::ZSet if meta.count <= 128 => ("listpack", false),
            KeyType::ZSet => ("skiplist", false),
        };
        Ok(Some(ObjectInfo {
            meta,
            encoding,
            shared_integer,
        }))
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

    /// Sets or clears the expiry of an existing key row and bumps its version.
    pub(crate) fn set_expire_at(&mut self, db: u32, key: &[u8], at: Option<i64>) -> Result<()> {
        let version = self.next_version();
        self.conn
            .prepare_cached(
                "UPDATE relis_keys SET expire_at = ?3, version = ?4, mtime = ?5
                 WHERE db = ?1 AND key = ?2",
            )?
            .execute((db, key, at, version, self.now))?;
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
        if at <= self.now {
            self.delete_key(db, key, &m)?;
        } else {
            self.set_expire_at(db, key, Some(at))?;
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
                self.set_expire_at(db, key, None)?;
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
        self.conn
            .prepare_cached(
                "UPDATE relis_keys SET key = ?3, version = ?4, mtime = ?5 WHERE db = ?1 AND key = ?2",
            )?
            .execute((db, src, dst, version, self.now))?;
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
        self.conn
            .prepare_cached(
                "INSERT INTO relis_keys (db, key, id, type, expire_at, version, count, mtime, value)
                 SELECT ?3, ?4, ?5, type, expire_at, ?5, count, ?6, value FROM relis_keys
                 WHERE db = ?1 AND key = ?2",
            )?
            .execute((db, src, dst_db, dst, id, self.now))?;
        self.copy_elements(&m, id)?;
        Ok(true)
    }

    /// Copies a collection's elements to the key with id `to`.
    fn copy_elements(&mut self, meta: &KeyMeta, _to: i64) -> Result<()> {
        match meta.kind {
            // Strings are inline; collections arrive with their tables.
            _ => Ok(()),
        }
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
        if self.meta_for_write(db, key)?.is_none() || self.meta_for_write(dst_db, key)?.is_some() {
            return Ok(false);
        }
        let version = self.next_version();
        self.conn
            .prepare_cached(
                "UPDATE relis_keys SET db = ?3, version = ?4, mtime = ?5 WHERE db = ?1 AND key = ?2",
            )?
            .execute((db, key, dst_db, version, self.now))?;
        Ok(true)
    }

    /// FLUSHDB.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn flushdb(&mut self, db: u32) -> Result<()> {
        self.conn
            .prepare_cached("DELETE FROM relis_keys WHERE db = ?1")?
            .execute([db])?;
        Ok(())
    }

    /// FLUSHALL.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn flushall(&mut self) -> Result<()> {
        self.conn
            .prepare_cached("DELETE FROM relis_keys")?
            .execute([])?;
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
        // Every key of both databases changes `db`, so bump versions too: a WATCH on either side
        // sees its key change, as in Redis.
        let version = self.next_version();
        self.conn
            .prepare_cached(
                "UPDATE relis_keys SET db = CASE db WHEN ?1 THEN ?2 ELSE ?1 END, version = ?3
                 WHERE db IN (?1, ?2)",
            )?
            .execute((a, b, version))?;
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
}
