//! The hash family: HSET (and HMSET), HSETNX, HGET, HMGET, HDEL, HEXISTS, HLEN, HSTRLEN, HKEYS,
//! HVALS, HGETALL, HINCRBY, HINCRBYFLOAT, HRANDFIELD and HSCAN.
//!
//! Fields live in `relis_hash (kid, field, value, seq)`, one B-tree entry each, keyed by the key's
//! id; the key row keeps the exact field count (HLEN is O(1)). A write touches the field's entry
//! and the key row, nothing else.
//!
//! **Encoding and order.** Redis 7.0 holds a hash as a listpack while it has at most
//! [`HASH_MAX_LISTPACK_ENTRIES`] fields and no field or value longer than
//! [`HASH_MAX_LISTPACK_VALUE`] bytes, and converts it to a hashtable for good as soon as either
//! stops being true. A listpack keeps its fields in insertion order (an update keeps a field's
//! place), and HGETALL, HKEYS, HVALS, HSCAN and HRANDFIELD list them in that order; HSCAN returns
//! a listpack whole in one call. Relis reproduces both: each field row carries `seq`, the version
//! counter's value when the field was added, and a hash Redis would hold as a listpack is read
//! `ORDER BY seq` (a sort of at most [`HASH_MAX_LISTPACK_ENTRIES`] rows, where Redis's own walk is
//! O(N) too). The key row's `head` column (only lists use it otherwise) records the conversion,
//! as sets and sorted sets do: 0 listpack, 1 hashtable. A hashtable's order is unspecified in
//! Redis; Relis lists it in field (byte) order, straight from the primary key, and pages HSCAN in
//! that order.
//!
//! **Random fields.** HRANDFIELD picks by position. A listpack is read whole (it is small). In a
//! hashtable one pick is `LIMIT 1 OFFSET r` from whichever end is nearer, O(min(r, N-r)) row steps
//! (SQLite B-trees do not count rows per page), so up to O(N/2); k picks walk the hash once in
//! ascending position, hopping from one picked field to the next, O(k log N + N) at worst.

use crate::backend::sqlite::db::Db;
use crate::backend::sqlite::sql::hash as q;
use crate::backend::sqlite::stmt::prepare;
use crate::backend::sqlite::store::{KeyMeta, KeyType, Reader, Writer};
use crate::error::{Error, Result};
use crate::glob::{glob_match, literal_prefix};
use crate::types::strings::{add_float, parse_i64};
use bytes::Bytes;
use rusqlite::OptionalExtension;

/// Redis 7.0's built-in `hash-max-listpack-entries` (redis-server without a config file; the
/// example redis.conf sets 128): the most fields a listpack-encoded hash holds.
pub const HASH_MAX_LISTPACK_ENTRIES: i64 = 512;

/// Redis 7.0's `hash-max-listpack-value`: the longest field or value a listpack-encoded hash
/// holds, in bytes.
pub const HASH_MAX_LISTPACK_VALUE: usize = 64;

/// The most fields HRANDFIELD with a negative count returns. Redis builds any reply it is asked
/// for (and runs out of memory for `-9223372036854775807`); Relis bounds it, as SRANDMEMBER does.
pub const HRANDFIELD_MAX_REPEATS: u64 = 4 * 1024 * 1024;

/// `head` of a hash's key row: Redis would hold it as a listpack.
const LISTPACK: i64 = 0;
/// `head` of a hash's key row: Redis holds it as a hashtable, for good.
const HASHTABLE: i64 = 1;

/// A page of HSCAN.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HashScanPage {
    /// The fields of this page that pass the filter, with their values.
    pub entries: Vec<(Bytes, Bytes)>,
    /// Where the next page starts (after this field), or `None` when the scan is complete.
    pub next: Option<Bytes>,
}

/// A field with its value, when it was asked for (HRANDFIELD ... WITHVALUES).
pub type RandomField = (Bytes, Option<Bytes>);

/// A live hash's key row.
#[derive(Clone, Copy, Debug)]
struct HashRow {
    id: i64,
    count: i64,
    hashtable: bool,
    /// The whole row, when it was read for a write.
    meta: Option<KeyMeta>,
}

/// Whether a field or value is too long for a listpack.
fn too_long(field: &[u8], value: &[u8]) -> bool {
    field.len() > HASH_MAX_LISTPACK_VALUE || value.len() > HASH_MAX_LISTPACK_VALUE
}

fn blob(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Bytes> {
    Ok(Bytes::copy_from_slice(r.get_ref(i)?.as_blob()?))
}

fn shorter(kid: i64) -> Error {
    Error::Storage(format!("hash {kid} has fewer fields than its count"))
}

impl Reader<'_> {
    /// The live hash at `key`.
    fn hash_row(&self, db: u32, key: &[u8]) -> Result<Option<HashRow>> {
        let row = prepare(self.conn, q::KEY_LOOKUP)?
            .query_row((db, key, self.expiry_now), |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)?,
                ))
            })
            .optional()?;
        match row {
            None => Ok(None),
            Some((id, t, count, head)) if t == KeyType::Hash.code() => Ok(Some(HashRow {
                id,
                count,
                hashtable: head == HASHTABLE,
                meta: None,
            })),
            Some(_) => Err(Error::WrongType),
        }
    }

    /// OBJECT ENCODING of the hash at `key` (which the caller knows is a live hash).
    pub(crate) fn hash_encoding(&self, db: u32, key: &[u8]) -> Result<&'static str> {
        Ok(match self.hash_row(db, key)? {
            Some(r) if !r.hashtable => "listpack",
            _ => "hashtable",
        })
    }

    fn field_value(&self, kid: i64, field: &[u8]) -> Result<Option<Bytes>> {
        Ok(prepare(self.conn, q::HGET)?
            .query_row((kid, field), |r| blob(r, 0))
            .optional()?)
    }

    /// Every field and value, in the order Redis lists them (see the module docs).
    fn entries(&self, row: &HashRow) -> Result<Vec<(Bytes, Bytes)>> {
        let mut st = if row.hashtable {
            prepare(self.conn, q::ENTRIES_BY_FIELD)?
        } else {
            prepare(self.conn, q::ENTRIES_BY_SEQ)?
        };
        let rows = st.query_map([row.id], |r| Ok((blob(r, 0)?, blob(r, 1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every field, in the order Redis lists them.
    fn fields(&self, row: &HashRow) -> Result<Vec<Bytes>> {
        let mut st = if row.hashtable {
            prepare(self.conn, q::FIELDS_BY_FIELD)?
        } else {
            prepare(self.conn, q::FIELDS_BY_SEQ)?
        };
        let rows = st.query_map([row.id], |r| blob(r, 0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Every value, in the order Redis lists them.
    fn values(&self, row: &HashRow) -> Result<Vec<Bytes>> {
        let mut st = if row.hashtable {
            prepare(self.conn, q::VALUES_BY_FIELD)?
        } else {
            prepare(self.conn, q::VALUES_BY_SEQ)?
        };
        let rows = st.query_map([row.id], |r| blob(r, 0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The fields (and values) at `positions` (distinct, ascending) of the hash's order.
    fn entries_at(
        &self,
        row: &HashRow,
        positions: &[u64],
        with_values: bool,
    ) -> Result<Vec<RandomField>> {
        let n = row.count as u64;
        if !row.hashtable || positions.len() as u64 * 8 >= n {
            // A listpack is small, and many picks touch most of the hash anyway: read it whole.
            let all = self.entries(row)?;
            return positions
                .iter()
                .map(|&p| {
                    let (f, v) = all.get(p as usize).ok_or_else(|| shorter(row.id))?;
                    Ok((f.clone(), with_values.then(|| v.clone())))
                })
                .collect();
        }
        let mut first = prepare(self.conn, q::ENTRY_AT)?;
        let mut after = prepare(self.conn, q::ENTRY_AFTER)?;
        let mut out: Vec<RandomField> = Vec::with_capacity(positions.len());
        // The position just after the last field fetched.
        let mut next = 0u64;
        for &p in positions {
            let gap = (p - next) as i64;
            let pick = |r: &rusqlite::Row<'_>| {
                Ok((
                    blob(r, 0)?,
                    if with_values { Some(blob(r, 1)?) } else { None },
                ))
            };
            let found = match out.last() {
                None => first.query_row((row.id, gap), pick).optional()?,
                Some((prev, _)) => after.query_row((row.id, &prev[..], gap), pick).optional()?,
            };
            out.push(found.ok_or_else(|| shorter(row.id))?);
            next = p + 1;
        }
        Ok(out)
    }

    /// HGET: the value of `field`; `None` when there is no key, `Some(None)` when the hash has no
    /// such field.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hget(&self, db: u32, key: &[u8], field: &[u8]) -> Result<Option<Option<Bytes>>> {
        match self.hash_row(db, key)? {
            Some(r) => Ok(Some(self.field_value(r.id, field)?)),
            None => Ok(None),
        }
    }

    /// HMGET: the value of each of `fields` (`None` for a missing one); `None` when there is no
    /// key.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hmget(
        &self,
        db: u32,
        key: &[u8],
        fields: &[Bytes],
    ) -> Result<Option<Vec<Option<Bytes>>>> {
        let Some(r) = self.hash_row(db, key)? else {
            return Ok(None);
        };
        fields
            .iter()
            .map(|f| self.field_value(r.id, f))
            .collect::<Result<_>>()
            .map(Some)
    }

    /// HEXISTS: whether the hash has `field`; `None` when there is no key.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hexists(&self, db: u32, key: &[u8], field: &[u8]) -> Result<Option<bool>> {
        let Some(r) = self.hash_row(db, key)? else {
            return Ok(None);
        };
        Ok(Some(prepare(self.conn, q::HEXISTS)?.exists((r.id, field))?))
    }

    /// HLEN: the number of fields; `None` when there is no key.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hlen(&self, db: u32, key: &[u8]) -> Result<Option<i64>> {
        Ok(self.hash_row(db, key)?.map(|r| r.count))
    }

    /// HSTRLEN: the length of `field`'s value, 0 when the hash has no such field (SQLite measures
    /// the blob without handing it over); `None` when there is no key.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hstrlen(&self, db: u32, key: &[u8], field: &[u8]) -> Result<Option<i64>> {
        let Some(r) = self.hash_row(db, key)? else {
            return Ok(None);
        };
        let len: Option<i64> = prepare(self.conn, q::HSTRLEN)?
            .query_row((r.id, field), |r| r.get(0))
            .optional()?;
        Ok(Some(len.unwrap_or(0)))
    }

    /// HGETALL: every field with its value, in Redis's order; `None` when there is no key.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hgetall(&self, db: u32, key: &[u8]) -> Result<Option<Vec<(Bytes, Bytes)>>> {
        match self.hash_row(db, key)? {
            Some(r) => Ok(Some(self.entries(&r)?)),
            None => Ok(None),
        }
    }

    /// HKEYS: every field, in Redis's order; `None` when there is no key.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hkeys(&self, db: u32, key: &[u8]) -> Result<Option<Vec<Bytes>>> {
        match self.hash_row(db, key)? {
            Some(r) => Ok(Some(self.fields(&r)?)),
            None => Ok(None),
        }
    }

    /// HVALS: every value, in Redis's order; `None` when there is no key.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hvals(&self, db: u32, key: &[u8]) -> Result<Option<Vec<Bytes>>> {
        match self.hash_row(db, key)? {
            Some(r) => Ok(Some(self.values(&r)?)),
            None => Ok(None),
        }
    }

    /// HRANDFIELD without a count: a field picked uniformly at random; `None` when there is no
    /// key.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hrandfield(&self, db: u32, key: &[u8]) -> Result<Option<Bytes>> {
        let Some(r) = self.hash_row(db, key)? else {
            return Ok(None);
        };
        let n = r.count;
        let i = rand::random_range(0..n.max(1));
        // Any order serves one uniform pick: the primary key's, from the nearer end.
        let mut st = if i < n / 2 {
            prepare(self.conn, q::FIELD_AT)?
        } else {
            prepare(self.conn, q::FIELD_AT_DESC)?
        };
        let offset = if i < n / 2 { i } else { n - 1 - i };
        let f = st.query_row((r.id, offset), |r| blob(r, 0)).optional()?;
        f.ok_or_else(|| shorter(r.id)).map(Some)
    }

    /// HRANDFIELD with a count: for `count > 0`, that many distinct fields (the whole hash when it
    /// has no more), in the hash's order; for `count < 0`, `-count` fields picked independently
    /// (they may repeat), in random order. Values come along when `with_values` says so. `None`
    /// when there is no key.
    ///
    /// # Errors
    /// [`Error::WrongType`]; [`Error::NotInteger`] when `-count` exceeds
    /// [`HRANDFIELD_MAX_REPEATS`].
    pub fn hrandfield_count(
        &self,
        db: u32,
        key: &[u8],
        count: i64,
        with_values: bool,
    ) -> Result<Option<Vec<RandomField>>> {
        let Some(r) = self.hash_row(db, key)? else {
            return Ok(None);
        };
        let n = r.count as u64;
        if count == 0 || n == 0 {
            return Ok(Some(Vec::new()));
        }
        let mut rng = rand::rng();
        if count > 0 {
            let k = count as u64;
            if k >= n {
                let all = self.entries(&r)?;
                return Ok(Some(
                    all.into_iter()
                        .map(|(f, v)| (f, with_values.then_some(v)))
                        .collect(),
                ));
            }
            let mut positions: Vec<u64> =
                rand::seq::index::sample(&mut rng, n as usize, k as usize)
                    .into_iter()
                    .map(|i| i as u64)
                    .collect();
            positions.sort_unstable();
            return self.entries_at(&r, &positions, with_values).map(Some);
        }
        let k = count.unsigned_abs();
        if k > HRANDFIELD_MAX_REPEATS {
            return Err(Error::NotInteger);
        }
        let picks: Vec<u64> = (0..k).map(|_| rand::random_range(0..n)).collect();
        let mut distinct = picks.clone();
        distinct.sort_unstable();
        distinct.dedup();
        let found = self.entries_at(&r, &distinct, with_values)?;
        // Back to the order they were picked in.
        Ok(Some(
            picks
                .iter()
                .map(|p| {
                    let i = distinct.binary_search(p).map_err(|_| shorter(r.id))?;
                    Ok(found[i].clone())
                })
                .collect::<Result<_>>()?,
        ))
    }

    /// HSCAN: a page of the hash's fields after `after` (field order), up to `count` examined,
    /// filtered by the glob `pattern` on the field; `None` when there is no key. A hash Redis
    /// would hold as a listpack comes whole in one page, in its order, as Redis returns it.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hscan(
        &self,
        db: u32,
        key: &[u8],
        after: Option<&[u8]>,
        count: usize,
        pattern: Option<&[u8]>,
    ) -> Result<Option<HashScanPage>> {
        let Some(r) = self.hash_row(db, key)? else {
            return Ok(None);
        };
        let pattern = pattern.filter(|p| *p != b"*");
        let keep = |f: &[u8]| pattern.is_none_or(|p| glob_match(p, f, false));
        if !r.hashtable {
            let mut all = self.entries(&r)?;
            all.retain(|(f, _)| keep(f));
            return Ok(Some(HashScanPage {
                entries: all,
                next: None,
            }));
        }
        // Resume strictly after `after`: the smallest field greater than it is `after` + 0x00.
        let prefix = pattern.map(literal_prefix).unwrap_or_default();
        let resume = after.map(|a| {
            let mut v = a.to_vec();
            v.push(0);
            v
        });
        let lower = match resume {
            Some(v) if v > prefix => v,
            _ => prefix.clone(),
        };
        let upper = if prefix.is_empty() {
            None
        } else {
            crate::types::keys::prefix_end(&prefix)
        };
        // A COUNT as large as Redis allows (i64::MAX) walks the rest of the hash.
        let limit = count.clamp(1, i64::MAX as usize - 1) as i64;
        let mut st = match &upper {
            Some(_) => prepare(self.conn, q::SCAN_RANGE)?,
            None => prepare(self.conn, q::SCAN_FROM)?,
        };
        // One row more than the page, to know whether the scan goes on.
        let mut rows = match &upper {
            Some(u) => st.query((r.id, &lower, limit + 1, u))?,
            None => st.query((r.id, &lower, limit + 1))?,
        };
        let mut page = HashScanPage::default();
        let mut examined = 0;
        let mut last: Option<Bytes> = None;
        while let Some(row) = rows.next()? {
            if examined == limit {
                page.next = last;
                break;
            }
            examined += 1;
            let field = blob(row, 0)?;
            if keep(&field) {
                page.entries.push((field.clone(), blob(row, 1)?));
            }
            last = Some(field);
        }
        Ok(Some(page))
    }
}

impl Writer<'_> {
    /// The live hash at `key` for a write: an expired key (of any type) is deleted first, so the
    /// write starts from an empty hash.
    fn hash_row_for_write(&mut self, db: u32, key: &[u8]) -> Result<Option<HashRow>> {
        let Some((meta, head)) = self.raw_meta_head(db, key)? else {
            return Ok(None);
        };
        if !self.is_live(&meta) {
            self.delete_expired(db, key, &meta)?;
            return Ok(None);
        }
        if meta.kind != KeyType::Hash {
            return Err(Error::WrongType);
        }
        Ok(Some(HashRow {
            id: meta.id,
            count: meta.count,
            hashtable: head == HASHTABLE,
            meta: Some(meta),
        }))
    }

    /// Sets one field; whether it is new. A new field takes a fresh `seq` (the end of the
    /// listpack order); an update keeps its place. An update is one statement (one B-tree
    /// seek); a new field a second one.
    fn put_field(&mut self, kid: i64, field: &[u8], value: &[u8]) -> Result<bool> {
        if prepare(self.conn, q::HSET_FIELD_UPDATE)?.execute((kid, field, value))? > 0 {
            return Ok(false);
        }
        let seq = self.next_version();
        prepare(self.conn, q::HSET_FIELD_INSERT)?.execute((kid, field, value, seq))?;
        Ok(true)
    }

    /// Sets `pairs` in the hash `row` (or a new one), then writes the key row: the new count, a
    /// new version, and the encoding Redis would have converted to. Returns how many fields are
    /// new.
    fn put_fields<'a>(
        &mut self,
        db: u32,
        key: &[u8],
        row: Option<HashRow>,
        pairs: impl Iterator<Item = (&'a [u8], &'a [u8])> + Clone,
    ) -> Result<i64> {
        let id = match row {
            Some(r) => r.id,
            None => self.next_version(),
        };
        // Redis converts before it sets when an argument is too long for a listpack.
        let mut hashtable =
            row.is_some_and(|r| r.hashtable) || pairs.clone().any(|(f, v)| too_long(f, v));
        let mut added = 0;
        for (f, v) in pairs {
            if self.put_field(id, f, v)? {
                added += 1;
            }
        }
        let count = row.map_or(0, |r| r.count) + added;
        hashtable |= count > HASH_MAX_LISTPACK_ENTRIES;
        self.save_hash_row(
            db,
            key,
            row.and_then(|r| r.meta).as_ref(),
            id,
            count,
            hashtable,
        )?;
        Ok(added)
    }

    /// Writes a hash's key row after a change: creates it, updates it (kept pending, so a run
    /// of writes to one hash rewrites its row once: `Writer::save_row_later`), or deletes it
    /// when the hash is empty (Redis deletes a key whose last field goes). `existing`: the row
    /// as the write read it, if there was one.
    fn save_hash_row(
        &mut self,
        db: u32,
        key: &[u8],
        existing: Option<&KeyMeta>,
        id: i64,
        count: i64,
        hashtable: bool,
    ) -> Result<()> {
        let head = if hashtable { HASHTABLE } else { LISTPACK };
        let Some(meta) = existing else {
            prepare(self.conn, q::KEY_INSERT)?.execute((
                db,
                key,
                id,
                KeyType::Hash.code(),
                count,
                self.now,
                head,
            ))?;
            self.count_new_key(db, None);
            self.note_new(db, key);
            return Ok(());
        };
        if count == 0 {
            // Every field is gone already: only the row is left.
            self.delete_key_row(db, key, meta.expire_at.is_some())?;
        } else {
            self.save_row_later(db, key, meta, count, head)?;
        }
        Ok(())
    }

    /// HSET / HMSET: sets each field to its value (a field named twice takes the last value);
    /// returns how many fields are new.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hset(&mut self, db: u32, key: &[u8], pairs: &[(Bytes, Bytes)]) -> Result<i64> {
        let row = self.hash_row_for_write(db, key)?;
        self.put_fields(
            db,
            key,
            row,
            pairs.iter().map(|(f, v)| (f.as_ref(), v.as_ref())),
        )
    }

    /// HSETNX: sets `field` only if the hash does not have it; whether it did.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hsetnx(&mut self, db: u32, key: &[u8], field: &[u8], value: &[u8]) -> Result<bool> {
        let row = self.hash_row_for_write(db, key)?;
        if let Some(r) = row {
            if self.field_value(r.id, field)?.is_some() {
                return Ok(false);
            }
        }
        self.put_fields(db, key, row, std::iter::once((field, value)))?;
        Ok(true)
    }

    /// HDEL: removes the fields the hash has (and the key with its last field); returns how many
    /// it removed.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hdel(&mut self, db: u32, key: &[u8], fields: &[Bytes]) -> Result<i64> {
        let Some(row) = self.hash_row_for_write(db, key)? else {
            return Ok(0);
        };
        let mut removed = 0;
        for f in fields {
            removed += prepare(self.conn, q::HDEL_FIELD)?.execute((row.id, &f[..]))? as i64;
            if removed == row.count {
                break;
            }
        }
        if removed > 0 {
            let meta = row.meta.as_ref();
            self.save_hash_row(db, key, meta, row.id, row.count - removed, row.hashtable)?;
        }
        Ok(removed)
    }

    /// HINCRBY: adds `delta` to the integer in `field` (a missing field counts as 0); returns the
    /// new value.
    ///
    /// # Errors
    /// [`Error::WrongType`]; [`Error::NotInteger`] when the field holds no integer (Redis says
    /// "hash value is not an integer"); [`Error::Overflow`].
    pub fn hincrby(&mut self, db: u32, key: &[u8], field: &[u8], delta: i64) -> Result<i64> {
        let row = self.hash_row_for_write(db, key)?;
        let old = match row {
            Some(r) => self.field_value(r.id, field)?,
            None => None,
        };
        let old = match old {
            Some(v) => parse_i64(&v).ok_or(Error::NotInteger)?,
            None => 0,
        };
        let new = old.checked_add(delta).ok_or(Error::Overflow)?;
        let text = new.to_string();
        self.put_fields(db, key, row, std::iter::once((field, text.as_bytes())))?;
        Ok(new)
    }

    /// HINCRBYFLOAT: adds the float `incr` to the number in `field` (a missing field counts as
    /// 0) in `long double` precision, as Redis does; returns the new value as Redis prints it
    /// (and stores it).
    ///
    /// # Errors
    /// Checked in Redis's order: [`Error::NotFloat`] for an increment that is not a float,
    /// [`Error::NanOrInfinity`] for an infinite one, [`Error::WrongType`], [`Error::NotFloat`]
    /// when the field holds no float (Redis says "hash value is not a float"),
    /// [`Error::NanOrInfinity`] when the sum is not finite.
    pub fn hincrbyfloat(
        &mut self,
        db: u32,
        key: &[u8],
        field: &[u8],
        incr: &[u8],
    ) -> Result<Bytes> {
        add_float(None, incr)?;
        let row = self.hash_row_for_write(db, key)?;
        let old = match row {
            Some(r) => self.field_value(r.id, field)?,
            None => None,
        };
        let new = add_float(old.as_deref(), incr)?;
        self.put_fields(db, key, row, std::iter::once((field, &new[..])))?;
        Ok(new)
    }
}

impl Db {
    /// HSET: returns how many fields are new.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hset<F: AsRef<[u8]>, V: AsRef<[u8]>>(
        &self,
        key: impl AsRef<[u8]>,
        pairs: &[(F, V)],
    ) -> Result<i64> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        let pairs: Vec<(Bytes, Bytes)> = pairs
            .iter()
            .map(|(f, v)| {
                (
                    Bytes::copy_from_slice(f.as_ref()),
                    Bytes::copy_from_slice(v.as_ref()),
                )
            })
            .collect();
        self.write(move |w| w.hset(db, &key, &pairs))
    }

    /// HSETNX: whether the field was set.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hsetnx(
        &self,
        key: impl AsRef<[u8]>,
        field: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> Result<bool> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        let (field, value) = (field.as_ref().to_vec(), value.as_ref().to_vec());
        self.write(move |w| w.hsetnx(db, &key, &field, &value))
    }

    /// HGET.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hget(&self, key: impl AsRef<[u8]>, field: impl AsRef<[u8]>) -> Result<Option<Bytes>> {
        let (db, key, field) = (self.index(), key.as_ref().to_vec(), field.as_ref().to_vec());
        self.read(move |r| Ok(r.hget(db, &key, &field)?.flatten()))
    }

    /// HMGET.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hmget<F: AsRef<[u8]>>(
        &self,
        key: impl AsRef<[u8]>,
        fields: &[F],
    ) -> Result<Vec<Option<Bytes>>> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        let fields: Vec<Bytes> = fields
            .iter()
            .map(|f| Bytes::copy_from_slice(f.as_ref()))
            .collect();
        self.read(move |r| {
            Ok(r.hmget(db, &key, &fields)?
                .unwrap_or_else(|| vec![None; fields.len()]))
        })
    }

    /// HDEL: how many fields it removed.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hdel<F: AsRef<[u8]>>(&self, key: impl AsRef<[u8]>, fields: &[F]) -> Result<i64> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        let fields: Vec<Bytes> = fields
            .iter()
            .map(|f| Bytes::copy_from_slice(f.as_ref()))
            .collect();
        self.write(move |w| w.hdel(db, &key, &fields))
    }

    /// HEXISTS.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hexists(&self, key: impl AsRef<[u8]>, field: impl AsRef<[u8]>) -> Result<bool> {
        let (db, key, field) = (self.index(), key.as_ref().to_vec(), field.as_ref().to_vec());
        self.read(move |r| Ok(r.hexists(db, &key, &field)?.unwrap_or(false)))
    }

    /// HLEN.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hlen(&self, key: impl AsRef<[u8]>) -> Result<i64> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.read(move |r| Ok(r.hlen(db, &key)?.unwrap_or(0)))
    }

    /// HSTRLEN.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hstrlen(&self, key: impl AsRef<[u8]>, field: impl AsRef<[u8]>) -> Result<i64> {
        let (db, key, field) = (self.index(), key.as_ref().to_vec(), field.as_ref().to_vec());
        self.read(move |r| Ok(r.hstrlen(db, &key, &field)?.unwrap_or(0)))
    }

    /// HGETALL.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hgetall(&self, key: impl AsRef<[u8]>) -> Result<Vec<(Bytes, Bytes)>> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.read(move |r| Ok(r.hgetall(db, &key)?.unwrap_or_default()))
    }

    /// HKEYS.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hkeys(&self, key: impl AsRef<[u8]>) -> Result<Vec<Bytes>> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.read(move |r| Ok(r.hkeys(db, &key)?.unwrap_or_default()))
    }

    /// HVALS.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hvals(&self, key: impl AsRef<[u8]>) -> Result<Vec<Bytes>> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.read(move |r| Ok(r.hvals(db, &key)?.unwrap_or_default()))
    }

    /// HINCRBY.
    ///
    /// # Errors
    /// As [`Writer::hincrby`].
    pub fn hincrby(
        &self,
        key: impl AsRef<[u8]>,
        field: impl AsRef<[u8]>,
        delta: i64,
    ) -> Result<i64> {
        let (db, key, field) = (self.index(), key.as_ref().to_vec(), field.as_ref().to_vec());
        self.write(move |w| w.hincrby(db, &key, &field, delta))
    }

    /// HINCRBYFLOAT.
    ///
    /// # Errors
    /// As [`Writer::hincrbyfloat`].
    pub fn hincrbyfloat(
        &self,
        key: impl AsRef<[u8]>,
        field: impl AsRef<[u8]>,
        incr: impl AsRef<[u8]>,
    ) -> Result<Bytes> {
        let (db, key, field) = (self.index(), key.as_ref().to_vec(), field.as_ref().to_vec());
        let incr = incr.as_ref().to_vec();
        self.write(move |w| w.hincrbyfloat(db, &key, &field, &incr))
    }

    /// HRANDFIELD without a count.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hrandfield(&self, key: impl AsRef<[u8]>) -> Result<Option<Bytes>> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.read(move |r| r.hrandfield(db, &key))
    }

    /// HRANDFIELD with a count (empty for a missing key).
    ///
    /// # Errors
    /// As [`Reader::hrandfield_count`].
    pub fn hrandfield_count(
        &self,
        key: impl AsRef<[u8]>,
        count: i64,
        with_values: bool,
    ) -> Result<Vec<RandomField>> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.read(move |r| {
            Ok(r.hrandfield_count(db, &key, count, with_values)?
                .unwrap_or_default())
        })
    }

    /// HSCAN: one page (an empty, final page for a missing key).
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn hscan(
        &self,
        key: impl AsRef<[u8]>,
        after: Option<&[u8]>,
        count: usize,
        pattern: Option<&[u8]>,
    ) -> Result<HashScanPage> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        let after = after.map(<[u8]>::to_vec);
        let pattern = pattern.map(<[u8]>::to_vec);
        self.read(move |r| {
            Ok(
                r.hscan(db, &key, after.as_deref(), count, pattern.as_deref())?
                    .unwrap_or_default(),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::sqlite::db::Options;
    use crate::clock::ManualClock;
    use crate::types::keys::ExpireCond;
    use std::sync::Arc;

    fn open() -> (Db, ManualClock) {
        let clock = ManualClock::new(1_700_000_000_000);
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

    fn enc(db: &Db, key: &'static str) -> &'static str {
        db.read(move |r| r.object(0, key.as_bytes()))
            .unwrap()
            .unwrap()
            .encoding
    }

    #[test]
    fn set_get_delete() {
        let (db, _) = open();
        assert_eq!(
            db.hset("h", &[("a", "1"), ("b", "2"), ("a", "3")]).unwrap(),
            2
        );
        assert_eq!(db.hset("h", &[("a", "4"), ("c", "5")]).unwrap(), 1);
        assert_eq!(db.hget("h", "a").unwrap(), Some(b("4")));
        assert_eq!(db.hget("h", "z").unwrap(), None);
        assert_eq!(db.hget("nokey", "a").unwrap(), None);
        assert_eq!(db.hlen("h").unwrap(), 3);
        assert_eq!(
            db.hmget("h", &["c", "z", "b"]).unwrap(),
            vec![Some(b("5")), None, Some(b("2"))]
        );
        assert_eq!(db.hmget("nokey", &["a", "b"]).unwrap(), vec![None, None]);
        assert!(db.hexists("h", "a").unwrap());
        assert!(!db.hexists("h", "z").unwrap());
        assert_eq!(db.hstrlen("h", "a").unwrap(), 1);
        assert_eq!(db.hstrlen("h", "z").unwrap(), 0);
        assert!(!db.hsetnx("h", "a", "x").unwrap());
        assert!(db.hsetnx("h", "d", "6").unwrap());
        assert!(db.hsetnx("new", "f", "v").unwrap());
        assert_eq!(db.hdel("h", &["a", "a", "z"]).unwrap(), 1);
        assert_eq!(db.hlen("h").unwrap(), 3);
        assert_eq!(db.hdel("h", &["b", "c", "d"]).unwrap(), 3);
        assert_eq!(
            db.exists(&["h"]).unwrap(),
            0,
            "the last field takes the key"
        );
        assert_eq!(db.hdel("h", &["b"]).unwrap(), 0);
    }

    #[test]
    fn listpack_order_is_insertion_order() {
        let (db, _) = open();
        db.hset("h", &[("z", "1"), ("a", "2"), ("m", "3")]).unwrap();
        db.hset("h", &[("a", "9")]).unwrap();
        db.hdel("h", &["z"]).unwrap();
        db.hset("h", &[("z", "0")]).unwrap();
        assert_eq!(db.hkeys("h").unwrap(), vec![b("a"), b("m"), b("z")]);
        db.hset("h", &[("b", "1")]).unwrap();
        assert_eq!(db.hkeys("h").unwrap(), vec![b("a"), b("m"), b("z"), b("b")]);
        assert_eq!(db.hvals("h").unwrap(), vec![b("9"), b("3"), b("0"), b("1")]);
        assert_eq!(
            db.hgetall("h").unwrap(),
            vec![
                (b("a"), b("9")),
                (b("m"), b("3")),
                (b("z"), b("0")),
                (b("b"), b("1"))
            ]
        );
        assert_eq!(enc(&db, "h"), "listpack");
        // COPY keeps the order.
        db.write(|w| w.copy(0, b"h", 0, b"h2", false)).unwrap();
        assert_eq!(db.hkeys("h2").unwrap(), db.hkeys("h").unwrap());
        let page = db.hscan("h", None, 1, None).unwrap();
        assert_eq!(page.entries.len(), 4, "a listpack comes whole");
        assert_eq!(page.next, None);
    }

    #[test]
    fn conversion_to_hashtable_is_for_good() {
        let (db, _) = open();
        let long = "x".repeat(HASH_MAX_LISTPACK_VALUE + 1);
        let exact = "x".repeat(HASH_MAX_LISTPACK_VALUE);
        db.hset("h", &[("a", exact.as_str())]).unwrap();
        assert_eq!(enc(&db, "h"), "listpack");
        db.hset("h", &[("b", long.as_str())]).unwrap();
        assert_eq!(enc(&db, "h"), "hashtable");
        db.hdel("h", &["b"]).unwrap();
        assert_eq!(enc(&db, "h"), "hashtable", "no way back");
        db.hdel("h", &["a"]).unwrap();
        db.hset("h", &[("a", "1")]).unwrap();
        assert_eq!(enc(&db, "h"), "listpack", "a new key starts over");
        // A long field converts too, through any write that sets it.
        db.hincrby("h", &long, 1).unwrap();
        assert_eq!(enc(&db, "h"), "hashtable");
        // HSETNX on a field the hash has writes nothing and converts nothing.
        db.hset("n", &[("a", "1")]).unwrap();
        assert!(!db.hsetnx("n", "a", &long).unwrap());
        assert_eq!(enc(&db, "n"), "listpack");
        // More than HASH_MAX_LISTPACK_ENTRIES fields.
        let pairs: Vec<(String, String)> = (0..HASH_MAX_LISTPACK_ENTRIES)
            .map(|i| (format!("f{i}"), i.to_string()))
            .collect();
        db.hset("big", &pairs).unwrap();
        assert_eq!(enc(&db, "big"), "listpack");
        db.hset("big", &[("one", "more")]).unwrap();
        assert_eq!(enc(&db, "big"), "hashtable");
        // A hashtable lists fields in field order.
        let keys = db.hkeys("big").unwrap();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        // A big HINCRBYFLOAT result is a long value.
        db.hset("f", &[("a", "1")]).unwrap();
        db.hincrbyfloat("f", "a", "1e200").unwrap();
        assert_eq!(enc(&db, "f"), "hashtable");
    }

    #[test]
    fn increments() {
        let (db, _) = open();
        assert_eq!(db.hincrby("h", "n", 5).unwrap(), 5);
        assert_eq!(db.hincrby("h", "n", -7).unwrap(), -2);
        db.hset(
            "h",
            &[("s", "abc"), ("sp", " 1"), ("max", "9223372036854775807")],
        )
        .unwrap();
        assert_eq!(db.hincrby("h", "s", 1), Err(Error::NotInteger));
        assert_eq!(db.hincrby("h", "sp", 1), Err(Error::NotInteger));
        assert_eq!(db.hincrby("h", "max", 1), Err(Error::Overflow));
        assert_eq!(db.hget("h", "max").unwrap(), Some(b("9223372036854775807")));
        assert_eq!(db.hincrbyfloat("h", "f", "1.5").unwrap(), b("1.5"));
        assert_eq!(db.hincrbyfloat("h", "f", "0x10").unwrap(), b("17.5"));
        assert_eq!(db.hincrbyfloat("h", "n", "0.5").unwrap(), b("-1.5"));
        assert_eq!(db.hincrbyfloat("h", "s", "1"), Err(Error::NotFloat));
        assert_eq!(db.hincrbyfloat("h", "f", "x"), Err(Error::NotFloat));
        assert_eq!(db.hincrbyfloat("h", "f", "inf"), Err(Error::NanOrInfinity));
        db.set("str", "1").unwrap();
        assert_eq!(
            db.hincrbyfloat("str", "f", "x"),
            Err(Error::NotFloat),
            "increment first"
        );
        assert_eq!(db.hincrbyfloat("str", "f", "1"), Err(Error::WrongType));
        assert_eq!(db.hincrby("str", "f", 1), Err(Error::WrongType));
        assert_eq!(db.hget("h", "f").unwrap(), Some(b("17.5")));
    }

    #[test]
    fn wrong_type_everywhere() {
        let (db, _) = open();
        db.set("s", "v").unwrap();
        assert_eq!(db.hset("s", &[("a", "1")]), Err(Error::WrongType));
        assert_eq!(db.hsetnx("s", "a", "1"), Err(Error::WrongType));
        assert_eq!(db.hget("s", "a"), Err(Error::WrongType));
        assert_eq!(db.hmget("s", &["a"]), Err(Error::WrongType));
        assert_eq!(db.hdel("s", &["a"]), Err(Error::WrongType));
        assert_eq!(db.hlen("s"), Err(Error::WrongType));
        assert_eq!(db.hgetall("s"), Err(Error::WrongType));
        assert_eq!(db.hrandfield("s"), Err(Error::WrongType));
        assert_eq!(db.hrandfield_count("s", 1, false), Err(Error::WrongType));
        assert_eq!(db.hscan("s", None, 10, None), Err(Error::WrongType));
        assert_eq!(db.get("s").unwrap(), Some(b("v")));
    }

    #[test]
    fn expired_hash_starts_from_empty() {
        let (db, clock) = open();
        db.hset("h", &[("a", "1"), ("b", "2")]).unwrap();
        db.pexpire("h", 100, ExpireCond::Always).unwrap();
        clock.advance(100);
        assert_eq!(db.hlen("h").unwrap(), 0);
        assert_eq!(db.hget("h", "a").unwrap(), None);
        assert_eq!(db.hset("h", &[("a", "3")]).unwrap(), 1, "a is new again");
        assert_eq!(db.hgetall("h").unwrap(), vec![(b("a"), b("3"))]);
        assert_eq!(db.ttl("h").unwrap(), crate::Ttl::Persistent);
        // An expired string is no obstacle either.
        db.set("s", "v").unwrap();
        db.pexpire("s", 10, ExpireCond::Always).unwrap();
        clock.advance(10);
        assert_eq!(db.hincrby("s", "n", 2).unwrap(), 2);
    }

    #[test]
    fn writes_bump_the_version_only_when_they_change_something() {
        let (db, _) = open();
        let version = || db.read(|r| r.meta(0, b"h")).unwrap().map(|m| m.version);
        db.hset("h", &[("a", "1")]).unwrap();
        let v1 = version();
        db.hset("h", &[("a", "1")]).unwrap();
        let v2 = version();
        assert_ne!(v1, v2, "HSET of the same value still writes");
        db.hsetnx("h", "a", "2").unwrap();
        db.hdel("h", &["zz"]).unwrap();
        assert_eq!(version(), v2);
    }

    #[test]
    fn random_fields() {
        let (db, _) = open();
        assert_eq!(db.hrandfield("h").unwrap(), None);
        assert!(db.hrandfield_count("h", 5, true).unwrap().is_empty());
        for (name, n) in [("small", 5usize), ("big", 700)] {
            let pairs: Vec<(String, String)> = (0..n)
                .map(|i| (format!("f{i:04}"), format!("v{i}")))
                .collect();
            db.hset(name, &pairs).unwrap();
            let value_of = |f: &Bytes| {
                let i: usize = std::str::from_utf8(&f[1..]).unwrap().parse().unwrap();
                b(&format!("v{i}"))
            };
            for _ in 0..20 {
                let f = db.hrandfield(name).unwrap().unwrap();
                assert!(f.starts_with(b"f"));
            }
            for count in [1i64, 3, 4, 5, 6, 100, 699, 700, 1000] {
                let got = db.hrandfield_count(name, count, true).unwrap();
                assert_eq!(got.len(), (count as usize).min(n), "{name} {count}");
                let mut fields: Vec<&Bytes> = got.iter().map(|(f, _)| f).collect();
                fields.sort();
                fields.dedup();
                assert_eq!(fields.len(), got.len(), "distinct");
                for (f, v) in &got {
                    assert_eq!(v.as_ref(), Some(&value_of(f)));
                }
            }
            for count in [-1i64, -3, -50, -2000] {
                let got = db.hrandfield_count(name, count, false).unwrap();
                assert_eq!(got.len() as i64, -count);
                assert!(got.iter().all(|(f, v)| f.starts_with(b"f") && v.is_none()));
            }
            let got = db.hrandfield_count(name, -3000, true).unwrap();
            assert!(got.iter().all(|(f, v)| v.as_ref() == Some(&value_of(f))));
            if n == 5 {
                let mut seen: Vec<Bytes> = got.into_iter().map(|(f, _)| f).collect();
                seen.sort();
                seen.dedup();
                assert_eq!(seen.len(), 5, "3000 picks of 5 fields see them all");
            }
        }
        assert_eq!(
            db.hrandfield_count("small", -(HRANDFIELD_MAX_REPEATS as i64) - 1, false),
            Err(Error::NotInteger)
        );
        // The whole (listpack) hash comes in its order.
        let all = db.hrandfield_count("small", 5, false).unwrap();
        let keys: Vec<Bytes> = all.into_iter().map(|(f, _)| f).collect();
        assert_eq!(keys, db.hkeys("small").unwrap());
    }

    #[test]
    fn scan_pages_a_hashtable() {
        let (db, _) = open();
        let pairs: Vec<(String, String)> = (0..600)
            .map(|i| (format!("f{i}"), format!("v{i}")))
            .collect();
        db.hset("h", &pairs).unwrap();
        for pattern in [None, Some("f1*"), Some("*9")] {
            let mut got = Vec::new();
            let mut after: Option<Bytes> = None;
            loop {
                let page = db
                    .hscan("h", after.as_deref(), 7, pattern.map(str::as_bytes))
                    .unwrap();
                assert!(page.entries.len() <= 7);
                got.extend(page.entries);
                match page.next {
                    Some(n) => after = Some(n),
                    None => break,
                }
            }
            let mut want: Vec<(Bytes, Bytes)> = pairs
                .iter()
                .filter(|(f, _)| {
                    pattern.is_none_or(|p| glob_match(p.as_bytes(), f.as_bytes(), false))
                })
                .map(|(f, v)| (b(f), b(v)))
                .collect();
            want.sort();
            assert_eq!(got, want, "{pattern:?}");
        }
        assert_eq!(
            db.hscan("nokey", None, 10, None).unwrap(),
            HashScanPage::default()
        );
    }
}
