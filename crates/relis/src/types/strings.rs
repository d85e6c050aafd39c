//! The string family: GET/SET and their variants, counters, APPEND, ranges, LCS.
//! A string's value lives inline in its key row (see `schema/0001_keyspace.sql`), or, past
//! 32 KiB, in fixed-size chunks (see `chunks.rs`): the commands that touch a few bytes go through
//! [`Reader::read_string`] and [`Writer::write_string`], which read and write only the chunks
//! concerned.

use crate::backend::sqlite::db::Db;
use crate::backend::sqlite::sql::strings as q;
use crate::backend::sqlite::stmt::prepare;
use crate::backend::sqlite::store::{KeyMeta, KeyType, MetaColumns, Reader, Writer};
use crate::error::{Error, Result};
use bytes::Bytes;
use rusqlite::OptionalExtension;

/// A string's `head` column: 1 when Redis would hold it as a raw string whatever its contents
/// (an in-place write unshared it: APPEND, SETRANGE, SETBIT, BITFIELD, or BITOP or an HLL
/// command built it), so OBJECT ENCODING says `raw`; [`STRING_EMBSTR`] for an embstr whatever
/// its contents; 0 when the encoding follows from the value (int, embstr, raw).
pub(crate) const STRING_RAW: i64 = 1;

/// A string's `head` when Redis would hold it as an embstr even if it reads as an integer:
/// INCRBYFLOAT's result, which Redis makes as a string and never encodes as an integer.
pub(crate) const STRING_EMBSTR: i64 = 2;

/// The shape of a string value, for the commands that touch a few of its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StrInfo {
    /// The key's value id.
    pub id: i64,
    /// Its length in bytes.
    pub len: usize,
    /// Whether its bytes are in chunks (see `chunks.rs`).
    pub chunked: bool,
}

impl StrInfo {
    /// A chunked string's shape from its key row, when `meta` is one (an inline string's
    /// length is not in its metadata).
    pub(crate) fn chunked(meta: &KeyMeta) -> Option<StrInfo> {
        (meta.kind == KeyType::String && meta.count > 0).then_some(StrInfo {
            id: meta.id,
            len: meta.count as usize,
            chunked: true,
        })
    }
}

/// Redis's proto-max-bulk-len: no string may grow past it.
pub const MAX_STRING: usize = 512 * 1024 * 1024;

/// When SET writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SetCond {
    /// Always (plain SET).
    #[default]
    Always,
    /// Only if the key does not exist (NX).
    IfAbsent,
    /// Only if the key exists (XX).
    IfPresent,
}

/// What a write does to the key's expiry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Expiry {
    /// Remove any expiry (plain SET).
    #[default]
    Clear,
    /// Keep the current expiry (KEEPTTL).
    Keep,
    /// Expire at this unix time in milliseconds.
    At(i64),
    /// Expire this many milliseconds from now.
    In(i64),
}

impl Expiry {
    /// The absolute expiry for a write at `now`, or `None` to keep what is there.
    fn resolve(self, now: i64) -> Result<Option<Option<i64>>> {
        Ok(match self {
            Expiry::Clear => Some(None),
            Expiry::Keep => None,
            Expiry::At(at) => Some(Some(at)),
            Expiry::In(ms) => Some(Some(now.checked_add(ms).ok_or(Error::InvalidExpire)?)),
        })
    }
}

/// Options of SET.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SetOptions {
    /// NX / XX.
    pub cond: SetCond,
    /// EX / PX / EXAT / PXAT / KEEPTTL.
    pub expiry: Expiry,
    /// GET: return the old value.
    pub get: bool,
}

/// What SET did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SetOutcome {
    /// Whether the value was written (false when NX/XX said no).
    pub written: bool,
    /// The old value, when `get` was asked for and the key held one.
    pub old: Option<Bytes>,
}

/// What a read finds at a key, for commands that treat a key of another type as something other
/// than WRONGTYPE (MGET replies nil for it, LCS has its own error text) and still count it as a
/// keyspace hit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StringLookup {
    /// No live key.
    Missing,
    /// A string.
    Value(Bytes),
    /// A key of another type.
    OtherType,
}

impl StringLookup {
    /// Whether a key was found (of any type): Redis counts that as a keyspace hit.
    pub fn found(&self) -> bool {
        !matches!(self, StringLookup::Missing)
    }

    /// The string, if the key holds one.
    pub fn value(self) -> Option<Bytes> {
        match self {
            StringLookup::Value(v) => Some(v),
            _ => None,
        }
    }
}

pub use super::counter::parse_i64;
use super::counter::{sql_incr_began, sql_incr_sum, sql_overwrite_began, sql_overwritten};

extern "C" {
    fn relis_ld_incr(
        cur: *const u8,
        curlen: usize,
        incr: *const u8,
        incrlen: usize,
        out: *mut u8,
        outlen: usize,
    ) -> i32;
}

/// Adds `incr` to `current` (absent = 0) in `long double` precision, as Redis's INCRBYFLOAT does,
/// and formats the sum as Redis does.
///
/// # Errors
/// [`Error::NotFloat`] if either is not a valid float, [`Error::NanOrInfinity`] for a NaN or
/// infinite sum.
pub fn add_float(current: Option<&[u8]>, incr: &[u8]) -> Result<Bytes> {
    let mut out = vec![0u8; 5 * 1024 + 64];
    let (cp, cl) = current.map_or((std::ptr::null(), 0), |c| (c.as_ptr(), c.len()));
    // SAFETY: the pointers and lengths describe live slices; `out` is writable for its length.
    let n = unsafe {
        relis_ld_incr(
            cp,
            cl,
            incr.as_ptr(),
            incr.len(),
            out.as_mut_ptr(),
            out.len(),
        )
    };
    match n {
        -1 | -2 => Err(Error::NotFloat),
        -3 => Err(Error::NanOrInfinity),
        n if n < 0 => Err(Error::NotFloat),
        n => {
            out.truncate(n as usize);
            Ok(Bytes::from(out))
        }
    }
}

/// Redis's GETRANGE index arithmetic for a string of `len` bytes.
pub fn clamp_range(len: usize, start: i64, end: i64) -> Option<(usize, usize)> {
    let len = len as i64;
    if (start < 0 && end < 0 && start > end) || len == 0 {
        return None;
    }
    let mut start = if start < 0 { len + start } else { start };
    let mut end = if end < 0 { len + end } else { end };
    start = start.max(0);
    end = end.max(0);
    if end >= len {
        end = len - 1;
    }
    if start > end {
        return None;
    }
    Some((start as usize, end as usize + 1))
}

/// The result of an LCS computation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lcs {
    /// The longest common subsequence.
    pub common: Bytes,
    /// Matching ranges, last match first (as Redis lists them): ((a_start, a_end), (b_start, b_end)), inclusive.
    pub matches: Vec<((usize, usize), (usize, usize))>,
}

/// The longest common subsequence of `a` and `b`, with its matching ranges, computed as Redis
/// 7.0's LCS command does (the same table and the same walk back, so ties resolve the same way).
pub fn lcs(a: &[u8], b: &[u8]) -> Lcs {
    let (alen, blen) = (a.len(), b.len());
    let w = blen + 1;
    let mut dp = vec![0u32; (alen + 1) * w];
    for i in 1..=alen {
        for j in 1..=blen {
            dp[i * w + j] = if a[i - 1] == b[j - 1] {
                dp[(i - 1) * w + j - 1] + 1
            } else {
                dp[(i - 1) * w + j].max(dp[i * w + j - 1])
            };
        }
    }
    let mut idx = dp[alen * w + blen] as usize;
    let mut common = vec![0u8; idx];
    let mut matches = Vec::new();
    let (mut i, mut j) = (alen, blen);
    // `None` = no range open; otherwise (a_start, a_end, b_start, b_end).
    let mut open: Option<(usize, usize, usize, usize)> = None;
    while i > 0 && j > 0 {
        let mut emit = false;
        if a[i - 1] == b[j - 1] {
            common[idx - 1] = a[i - 1];
            match &mut open {
                None => open = Some((i - 1, i - 1, j - 1, j - 1)),
                Some((as_, _, bs, _)) if *as_ == i && *bs == j => {
                    *as_ -= 1;
                    *bs -= 1;
                }
                Some(_) => emit = true,
            }
            if let Some((as_, _, bs, _)) = open {
                if as_ == 0 || bs == 0 {
                    emit = true;
                }
            }
            idx -= 1;
            i -= 1;
            j -= 1;
        } else {
            if dp[(i - 1) * w + j] > dp[i * w + j - 1] {
                i -= 1;
            } else {
                j -= 1;
            }
            emit = open.is_some();
        }
        if emit {
            if let Some((as_, ae, bs, be)) = open.take() {
                matches.push(((as_, ae), (bs, be)));
            }
        }
    }
    Lcs {
        common: Bytes::from(common),
        matches,
    }
}

impl Reader<'_> {
    /// GET: the string at `key`.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn get(&self, db: u32, key: &[u8]) -> Result<Option<Bytes>> {
        match self.lookup_string(db, key)? {
            StringLookup::Missing => Ok(None),
            StringLookup::Value(v) => Ok(Some(v)),
            StringLookup::OtherType => Err(Error::WrongType),
        }
    }

    /// The string at `key`, or what else is there.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn lookup_string(&self, db: u32, key: &[u8]) -> Result<StringLookup> {
        // A literal, not format!: this is the hottest statement and the cache is keyed by text.
        let mut st = prepare(self.conn, q::STRING_LOOKUP)?;
        // A chunked string (count > 0) is read after the row: (id, length).
        let row = st
            .query_row((db, key, self.expiry_now), |r| {
                let t: i64 = r.get(0)?;
                if t != 0 {
                    return Ok(None);
                }
                let count: i64 = r.get(2)?;
                if count > 0 {
                    return Ok(Some(Err((r.get::<_, i64>(3)?, count as usize))));
                }
                let v = r.get_ref(1)?;
                Ok(Some(Ok(Bytes::copy_from_slice(
                    v.as_blob_or_null()?.unwrap_or(&[]),
                ))))
            })
            .optional()?;
        Ok(match row {
            None => StringLookup::Missing,
            Some(None) => StringLookup::OtherType,
            Some(Some(Ok(v))) => StringLookup::Value(v),
            Some(Some(Err((id, len)))) => StringLookup::Value(self.read_chunks(id, 0, len)?.into()),
        })
    }

    /// MGET: what each key holds (the command replies nil for missing keys and keys of other
    /// types, and counts both found cases as hits).
    ///
    /// # Errors
    /// Storage errors only.
    pub fn mget(&self, db: u32, keys: &[Bytes]) -> Result<Vec<StringLookup>> {
        keys.iter().map(|k| self.lookup_string(db, k)).collect()
    }

    /// STRLEN: the length of the string at `key`, `None` when there is no key (SQLite measures
    /// the blob without handing it over).
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn strlen(&self, db: u32, key: &[u8]) -> Result<Option<i64>> {
        let mut st = prepare(self.conn, q::STRLEN)?;
        let row = st
            .query_row((db, key, self.expiry_now), |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, Option<i64>>(1)?))
            })
            .optional()?;
        match row {
            None => Ok(None),
            Some((0, len)) => Ok(Some(len.unwrap_or(0))),
            Some(_) => Err(Error::WrongType),
        }
    }

    /// GETRANGE / SUBSTR: the bytes from `start` to `end` inclusive (negative counts from the
    /// end, clamped as Redis does); `None` when there is no key.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn getrange(&self, db: u32, key: &[u8], start: i64, end: i64) -> Result<Option<Bytes>> {
        let Some(info) = self.string_info(db, key)? else {
            return Ok(None);
        };
        // Only the bytes asked for are read (only the chunks they are in, when chunked).
        Ok(Some(match clamp_range(info.len, start, end) {
            Some((s, e)) => self.read_string(db, key, &info, s as u64, e - s)?.into(),
            None => Bytes::new(),
        }))
    }

    /// The shape of the string at `key` (its id and length), for the commands that read or
    /// write a few bytes of it; `None` when there is no key.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub(crate) fn string_info(&self, db: u32, key: &[u8]) -> Result<Option<StrInfo>> {
        let mut st = prepare(self.conn, q::STRING_INFO)?;
        let row = st
            .query_row((db, key, self.expiry_now), |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, Option<i64>>(2)?,
                    r.get::<_, i64>(3)?,
                ))
            })
            .optional()?;
        match row {
            None => Ok(None),
            Some((0, id, _, count)) if count > 0 => Ok(Some(StrInfo {
                id,
                len: count as usize,
                chunked: true,
            })),
            Some((0, id, len, _)) => Ok(Some(StrInfo {
                id,
                len: len.unwrap_or(0) as usize,
                chunked: false,
            })),
            Some(_) => Err(Error::WrongType),
        }
    }

    /// Up to `len` bytes of the string at `key` from byte `start` (fewer at its end, none
    /// past it).
    ///
    /// # Errors
    /// Storage errors only.
    pub(crate) fn read_string(
        &self,
        db: u32,
        key: &[u8],
        info: &StrInfo,
        start: u64,
        len: usize,
    ) -> Result<Vec<u8>> {
        if start >= info.len as u64 || len == 0 {
            return Ok(Vec::new());
        }
        let len = len.min(info.len - start as usize);
        if info.chunked {
            return self.read_chunks(info.id, start as usize, len);
        }
        let mut st = prepare(self.conn, q::SUBSTR)?;
        let v = st
            .query_row((db, key, start as i64 + 1, len as i64), |r| {
                Ok(r.get_ref(0)?.as_blob_or_null()?.unwrap_or(&[]).to_vec())
            })
            .optional()?;
        Ok(v.unwrap_or_default())
    }

    /// What two keys hold, for LCS (which checks types itself, and counts both lookups).
    ///
    /// # Errors
    /// Storage errors only.
    pub fn lcs_values(&self, db: u32, a: &[u8], b: &[u8]) -> Result<(StringLookup, StringLookup)> {
        Ok((self.lookup_string(db, a)?, self.lookup_string(db, b)?))
    }
}

impl Writer<'_> {
    /// Writes a string over whatever `key` holds, with an absolute expiry or none
    /// (`None` in `expire` means keep the current one).
    pub(crate) fn put_string(
        &mut self,
        db: u32,
        key: &[u8],
        old: Option<&KeyMeta>,
        value: &[u8],
        expire: Option<Option<i64>>,
    ) -> Result<()> {
        self.put_string_as(db, key, old, value, expire, 0)
    }

    /// [`Writer::put_string`] with the string's `head`: how Redis would hold the result
    /// whatever its contents ([`STRING_RAW`], [`STRING_EMBSTR`]), or 0.
    pub(crate) fn put_string_as(
        &mut self,
        db: u32,
        key: &[u8],
        old: Option<&KeyMeta>,
        value: &[u8],
        expire: Option<Option<i64>>,
        head: i64,
    ) -> Result<()> {
        if value.len() > crate::types::chunks::CHUNKED_ABOVE {
            let raw = head & STRING_RAW != 0;
            return self.put_chunked(db, key, old, value, value.len(), expire, raw);
        }
        let version = self.next_version();
        let now = self.now;
        match old {
            Some(m) => {
                // The old value's elements (or chunks) go; chunks of an old chunked string may
                // go to the trash, so the new value takes a new id.
                self.delete_elements(m)?;
                let id = if m.kind == KeyType::String && m.count == 0 {
                    m.id
                } else {
                    version
                };
                let expire_at = expire.unwrap_or(m.expire_at);
                prepare(self.conn, q::OVERWRITE_INLINE)?
                    .execute((db, key, expire_at, version, now, value, head, id))?;
                self.count_expiry_change(db, m.expire_at, expire_at);
            }
            None => {
                prepare(self.conn, q::INSERT_INLINE)?.execute((
                    db,
                    key,
                    version,
                    expire.flatten(),
                    now,
                    value,
                    head,
                ))?;
                self.count_new_key(db, expire.flatten());
                self.note_new(db, key);
            }
        }
        Ok(())
    }

    /// Writes `value`, zero-padded to `len` bytes, over whatever `key` holds as a chunked
    /// string (see `chunks.rs`), under a new value id; all-zero chunks are left out.
    #[allow(clippy::too_many_arguments)]
    fn put_chunked(
        &mut self,
        db: u32,
        key: &[u8],
        old: Option<&KeyMeta>,
        value: &[u8],
        len: usize,
        expire: Option<Option<i64>>,
        raw: bool,
    ) -> Result<()> {
        let version = self.next_version();
        let head = i64::from(raw) * STRING_RAW;
        let reuse = old.and_then(StrInfo::chunked).filter(|i| {
            i.len.div_ceil(crate::types::chunks::CHUNK) <= crate::types::chunks::REUSE_UP_TO
        });
        if let (Some(m), Some(i)) = (old, reuse) {
            // A chunked string of a few chunks is overwritten in place: its chunk rows are
            // replaced (fewer row changes than deleting them and inserting new ones).
            let expire_at = expire.unwrap_or(m.expire_at);
            prepare(self.conn, q::REWRITE_CHUNKED)?
                .execute((db, key, expire_at, version, len as i64, self.now, head))?;
            self.count_expiry_change(db, m.expire_at, expire_at);
            self.replace_chunks(i.id, i.len.div_ceil(crate::types::chunks::CHUNK), value)?;
            return self.grow_chunks(i.id, value.len(), len);
        }
        match old {
            Some(m) => {
                self.delete_elements(m)?;
                let expire_at = expire.unwrap_or(m.expire_at);
                prepare(self.conn, q::OVERWRITE_CHUNKED)?
                    .execute((db, key, expire_at, version, len as i64, self.now, head))?;
                self.count_expiry_change(db, m.expire_at, expire_at);
            }
            None => {
                prepare(self.conn, q::INSERT_CHUNKED)?.execute((
                    db,
                    key,
                    version,
                    expire.flatten(),
                    len as i64,
                    self.now,
                    head,
                ))?;
                self.count_new_key(db, expire.flatten());
                self.note_new(db, key);
            }
        }
        self.insert_chunks(version, value)?;
        self.grow_chunks(version, value.len(), len)
    }

    /// Writes `data` at byte `offset` of the string at `key` (`old` is its key row, `None` to
    /// create it), first growing it with zero bytes to at least `min_len` and to the end of
    /// `data`; keeps its expiry. The value becomes a raw string, as Redis's in-place writes
    /// (APPEND, SETRANGE, SETBIT, BITFIELD) leave it. Returns the new length. Callers check
    /// lengths against proto-max-bulk-len; this refuses only what SQLite cannot store.
    ///
    /// # Errors
    /// [`Error::StringTooLong`] past [`MAX_STORED_VALUE`].
    pub(crate) fn write_string(
        &mut self,
        db: u32,
        key: &[u8],
        old: Option<&KeyMeta>,
        offset: u64,
        data: &[u8],
        min_len: usize,
    ) -> Result<usize> {
        let info = match old {
            Some(_) => self.string_info(db, key)?,
            None => None,
        };
        self.write_string_at(db, key, old, info, offset, data, min_len)
    }

    /// [`Writer::write_string`] for a caller that has just read the string's shape (`info`,
    /// `None` for a new key), saving the lookup.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn write_string_at(
        &mut self,
        db: u32,
        key: &[u8],
        old: Option<&KeyMeta>,
        info: Option<StrInfo>,
        offset: u64,
        data: &[u8],
        min_len: usize,
    ) -> Result<usize> {
        let end = usize::try_from(offset)
            .ok()
            .and_then(|o| o.checked_add(data.len()))
            .ok_or(Error::StringTooLong)?
            .max(min_len);
        if end > value_limit(key, usize::MAX) {
            return Err(Error::StringTooLong);
        }
        let len = info.map_or(0, |i| i.len);
        let new_len = len.max(end);
        let o = offset as usize;
        match info {
            Some(i) if i.chunked => {}
            // Small enough to stay inline: rewrite the row.
            _ if new_len <= crate::types::chunks::CHUNKED_ABOVE => {
                let mut v = match info {
                    Some(i) => self.read_string(db, key, &i, 0, i.len)?,
                    None => Vec::new(),
                };
                v.resize(new_len, 0);
                v[o..o + data.len()].copy_from_slice(data);
                self.put_string_as(db, key, old, &v, None, STRING_RAW)?;
                return Ok(new_len);
            }
            // Growing past the threshold (or an inline value from an older Relis): the value
            // moves to chunks once.
            _ => {
                let v = match info {
                    Some(i) => self.read_string(db, key, &i, 0, i.len)?,
                    None => Vec::new(),
                };
                self.put_chunked(db, key, old, &v, new_len, None, true)?;
                let info = self.string_info(db, key)?.ok_or(Error::NoSuchKey)?;
                self.write_chunks(info.id, o, data)?;
                return Ok(new_len);
            }
        }
        let id = info.map_or(0, |i| i.id);
        self.grow_chunks(id, len, new_len)?;
        self.write_chunks(id, o, data)?;
        let version = self.next_version();
        prepare(self.conn, q::TOUCH_CHUNKED)?.execute((
            db,
            key,
            new_len as i64,
            version,
            self.now,
            STRING_RAW,
        ))?;
        Ok(new_len)
    }

    /// Records a change made to the chunks of the string at `key` (`meta` its key row): a new
    /// version and mtime, and whether the value is now raw (see [`STRING_RAW`]).
    ///
    /// # Errors
    /// Storage errors only.
    pub(crate) fn touch_string(
        &mut self,
        db: u32,
        key: &[u8],
        meta: &KeyMeta,
        raw: bool,
    ) -> Result<()> {
        // The length stays: only version, mtime and head change, written once for a run of
        // such writes to the key (SETBIT after SETBIT on a large bitmap).
        self.touch_later(db, key, meta, i64::from(raw) * STRING_RAW)
    }

    /// Writes `new` over the string at `key` that held `old` (`meta` its key row), keeping its
    /// expiry, as [`Writer::put_string`], raw as Redis holds an HLL it wrote; a chunked value
    /// that keeps its length has only the chunks that differ written (an HLL register or two in
    /// 12 KB).
    ///
    /// # Errors
    /// Storage errors only.
    pub(crate) fn rewrite_string(
        &mut self,
        db: u32,
        key: &[u8],
        meta: &KeyMeta,
        old: &[u8],
        new: &[u8],
    ) -> Result<()> {
        match StrInfo::chunked(meta) {
            Some(i) if i.len == new.len() && old.len() == new.len() => {
                self.patch_chunks(i.id, old, new)?;
                self.touch_string(db, key, meta, true)
            }
            _ => self.put_string_as(db, key, Some(meta), new, None, STRING_RAW),
        }
    }

    /// The key row at `key` for a write, as [`Writer::meta_for_write`] finds it (an expired
    /// key is deleted first), with the bytes of an inline string: one lookup where
    /// `meta_for_write` and a read of the value make two. The bytes are `None` for a chunked
    /// string and for other types.
    ///
    /// # Errors
    /// Storage errors only.
    pub(crate) fn string_for_write(
        &mut self,
        db: u32,
        key: &[u8],
    ) -> Result<Option<(KeyMeta, Option<Vec<u8>>)>> {
        // A row kept pending is a chunked string's (only in-place writes keep one): no bytes.
        if let Some((meta, _)) = self.pending_row(db, key) {
            if meta.kind != KeyType::String || meta.count > 0 {
                if !self.is_live(&meta) {
                    self.delete_expired(db, key, &meta)?;
                    return Ok(None);
                }
                return Ok(Some((meta, None)));
            }
        }
        let row = prepare(self.conn, q::KEY_ROW_WITH_VALUE)?
            .query_row((db, key), |r| {
                Ok((MetaColumns::of(r)?, r.get::<_, Option<Vec<u8>>>(6)?))
            })
            .optional()?;
        let Some((columns, value)) = row else {
            return Ok(None);
        };
        let meta = columns.meta()?;
        if !self.is_live(&meta) {
            self.delete_expired(db, key, &meta)?;
            return Ok(None);
        }
        let inline =
            (meta.kind == KeyType::String && meta.count == 0).then(|| value.unwrap_or_default());
        Ok(Some((meta, inline)))
    }

    /// The bytes of the string whose key row is `meta` (a live string at `key`).
    ///
    /// # Errors
    /// Storage errors only.
    pub(crate) fn string_of(&self, db: u32, key: &[u8], meta: &KeyMeta) -> Result<Vec<u8>> {
        match StrInfo::chunked(meta) {
            Some(i) => self.read_chunks(i.id, 0, i.len),
            None => Ok(self.get(db, key)?.map(Vec::from).unwrap_or_default()),
        }
    }

    /// Marks the string at `key` raw without writing it (Redis unshares a value for SETBIT or
    /// BITFIELD even when the bits written were already there). Not a write: no new version.
    ///
    /// # Errors
    /// Storage errors only.
    pub(crate) fn mark_raw(&mut self, db: u32, key: &[u8]) -> Result<()> {
        if !self.or_pending_head(db, key, STRING_RAW) {
            prepare(self.conn, q::MARK_RAW)?.execute((db, key, STRING_RAW))?;
        }
        Ok(())
    }

    /// Writes `value` over whatever `key` holds, as a raw string without an expiry (BITOP's
    /// destination).
    ///
    /// # Errors
    /// Storage errors only.
    pub(crate) fn put_raw_string(
        &mut self,
        db: u32,
        key: &[u8],
        old: Option<&KeyMeta>,
        value: &[u8],
    ) -> Result<()> {
        self.put_string_as(db, key, old, value, Some(None), STRING_RAW)
    }

    /// SET with its options.
    ///
    /// # Errors
    /// [`Error::WrongType`] with `get` on a key of another type; [`Error::InvalidExpire`].
    pub fn set(
        &mut self,
        db: u32,
        key: &[u8],
        value: &[u8],
        opts: SetOptions,
    ) -> Result<SetOutcome> {
        let expire = opts.expiry.resolve(self.now)?;
        if opts == SetOptions::default() {
            return self.set_plain(db, key, value);
        }
        let old = self.meta_for_write(db, key)?;
        let mut out = SetOutcome::default();
        if opts.get {
            if let Some(m) = &old {
                if m.kind != KeyType::String {
                    return Err(Error::WrongType);
                }
                out.old = self.get(db, key)?;
            }
        }
        let go = match opts.cond {
            SetCond::Always => true,
            SetCond::IfAbsent => old.is_none(),
            SetCond::IfPresent => old.is_some(),
        };
        if go {
            self.put_string(db, key, old.as_ref(), value, expire)?;
            out.written = true;
        }
        Ok(out)
    }

    /// Plain SET: one upsert into the keys table when the key is absent or a string.
    fn set_plain(&mut self, db: u32, key: &[u8], value: &[u8]) -> Result<SetOutcome> {
        if value.len() > crate::types::chunks::CHUNKED_ABOVE {
            // A large value goes to chunks (see chunks.rs), through the general path.
            let old = self.meta_for_write(db, key)?;
            self.put_string(db, key, old.as_ref(), value, Some(None))?;
            return Ok(SetOutcome {
                written: true,
                old: None,
            });
        }
        // The upsert cannot tell a new key from an overwrite: look first, only when someone
        // listens for `new` (an expired key found here is deleted, with its `expired` event).
        if self.wants_events(crate::events::class::NEW | crate::events::class::EXPIRED)
            && self.meta_for_write(db, key)?.is_none()
        {
            self.note_new(db, key);
        }
        let version = self.next_version();
        sql_overwrite_began();
        let n = prepare(self.conn, q::SET_INLINE)?.execute((db, key, version, self.now, value))?;
        if n == 1 {
            // The upsert's update calls `relis_overwrite` with the expiry it clears; an insert
            // calls nothing.
            match sql_overwritten() {
                None => self.count_new_key(db, None),
                Some(had_expiry) => self.count_keys(db, 0, -i64::from(had_expiry)),
            }
        }
        if n == 0 {
            // The key holds a collection: drop its elements and overwrite.
            let old = self.meta_for_write(db, key)?;
            self.put_string(db, key, old.as_ref(), value, Some(None))?;
        }
        Ok(SetOutcome {
            written: true,
            old: None,
        })
    }

    /// MSET.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn mset(&mut self, db: u32, pairs: &[(Bytes, Bytes)]) -> Result<()> {
        // One upsert per pair. A multi-row upsert costs more: a statement that writes several
        // rows and may fail halfway keeps a statement journal, a copy of every page it changes
        // (measured: 14,800 instructions a key on the writer against 14,700). Sharing one
        // statement across the pairs, the database and time bound once, saved about 1% (110
        // instructions a key): not kept.
        for (k, v) in pairs {
            self.set_plain(db, k, v)?;
        }
        Ok(())
    }

    /// MSETNX: sets every pair only if none of the keys exists.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn msetnx(&mut self, db: u32, pairs: &[(Bytes, Bytes)]) -> Result<bool> {
        for (k, _) in pairs {
            if self.meta(db, k)?.is_some() {
                return Ok(false);
            }
        }
        self.mset(db, pairs)?;
        Ok(true)
    }

    /// GETDEL.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn getdel(&mut self, db: u32, key: &[u8]) -> Result<Option<Bytes>> {
        let Some(m) = self.meta_for_write_of(db, key, KeyType::String)? else {
            return Ok(None);
        };
        let v = self.get(db, key)?;
        self.delete_key(db, key, &m)?;
        Ok(v)
    }

    /// GETEX: the value, with its expiry changed as `expiry` says (`None` leaves it alone).
    ///
    /// # Errors
    /// [`Error::WrongType`], [`Error::InvalidExpire`].
    pub fn getex(&mut self, db: u32, key: &[u8], expiry: Option<Expiry>) -> Result<Option<Bytes>> {
        let Some(m) = self.meta_for_write_of(db, key, KeyType::String)? else {
            return Ok(None);
        };
        let v = self.get(db, key)?;
        if let Some(e) = expiry {
            match e.resolve(self.now)? {
                Some(Some(at)) if at <= self.expiry_now => self.delete_key(db, key, &m)?,
                Some(Some(at)) => self.set_expire_at(db, key, m.expire_at, Some(at))?,
                // PERSIST on a key without a TTL changes nothing (Redis does not even signal
                // the key as modified, so a WATCH on it survives).
                Some(None) if m.expire_at.is_some() => {
                    self.set_expire_at(db, key, m.expire_at, None)?
                }
                Some(None) | None => {}
            }
        }
        Ok(v)
    }

    /// INCRBY and friends: adds `delta` to the integer at `key` (absent = 0).
    ///
    /// # Errors
    /// [`Error::WrongType`], [`Error::NotInteger`], [`Error::Overflow`].
    pub fn incr_by(&mut self, db: u32, key: &[u8], delta: i64) -> Result<i64> {
        // A live counter or a new key, the usual cases: one statement (but where a `new`
        // event needs the lookup that tells a new key).
        if !self.wants_events(crate::events::class::NEW | crate::events::class::EXPIRED) {
            let version = self.next_version();
            let mut first = itoa_buf(delta);
            sql_incr_began();
            let changed = prepare(self.conn, q::INCR_INLINE)?.execute((
                db,
                key,
                delta,
                version,
                self.now,
                self.expiry_now,
                first.as_bytes_mut(),
            ))?;
            if changed == 1 {
                // Updated, the function made the sum; inserted, it did not run. (An update
                // leaves the expiry as it was.)
                return Ok(match sql_incr_sum() {
                    Some(sum) => sum,
                    None => {
                        self.count_new_key(db, None);
                        delta
                    }
                });
            }
        }
        // Otherwise (no key, an expired one, another type, no integer, an overflow, a chunked
        // string) one lookup finds the row and an inline value.
        let (old, cur) = match self.string_for_write(db, key)? {
            None => (None, 0),
            Some((m, _)) if m.kind != KeyType::String => return Err(Error::WrongType),
            Some((m, inline)) => {
                let v = match inline {
                    Some(v) => v,
                    None => self.string_of(db, key, &m)?,
                };
                (Some(m), parse_i64(&v).ok_or(Error::NotInteger)?)
            }
        };
        let new = cur.checked_add(delta).ok_or(Error::Overflow)?;
        let mut buf = itoa_buf(new);
        self.put_string(db, key, old.as_ref(), buf.as_bytes_mut(), None)?;
        Ok(new)
    }

    /// INCRBYFLOAT: adds the float `incr` (as given) to the value at `key`; returns the new value
    /// as Redis formats it.
    ///
    /// # Errors
    /// [`Error::WrongType`], [`Error::NotFloat`], [`Error::NanOrInfinity`].
    pub fn incr_by_float(&mut self, db: u32, key: &[u8], incr: &[u8]) -> Result<Bytes> {
        let old = self.meta_for_write_of(db, key, KeyType::String)?;
        let cur = match &old {
            Some(_) => Some(self.get(db, key)?.unwrap_or_default()),
            None => None,
        };
        let new = add_float(cur.as_deref(), incr)?;
        self.put_string_as(db, key, old.as_ref(), &new, None, STRING_EMBSTR)?;
        Ok(new)
    }

    /// APPEND: returns the new length. `max` is the longest string allowed (the server's
    /// proto-max-bulk-len).
    ///
    /// # Errors
    /// [`Error::WrongType`], [`Error::StringTooLong`].
    pub fn append(&mut self, db: u32, key: &[u8], value: &[u8], max: usize) -> Result<i64> {
        let old = self.meta_for_write_of(db, key, KeyType::String)?;
        let Some(m) = old else {
            // A new key holds the value as SET would (Redis encodes it: int, embstr or raw).
            if value.len() > value_limit(key, max) {
                return Err(Error::StringTooLong);
            }
            self.put_string(db, key, None, value, None)?;
            return Ok(value.len() as i64);
        };
        let len = self.string_info(db, key)?.map_or(0, |i| i.len);
        if len + value.len() > value_limit(key, max) {
            return Err(Error::StringTooLong);
        }
        // Redis unshares the value even to append nothing: it is raw from now on.
        Ok(self.write_string(db, key, Some(&m), len as u64, value, len)? as i64)
    }

    /// SETRANGE: returns the new length. The caller has checked `offset >= 0`; `max` is the
    /// longest string allowed (the server's proto-max-bulk-len). Writing nothing creates nothing.
    ///
    /// # Errors
    /// [`Error::WrongType`], [`Error::StringTooLong`].
    pub fn setrange(
        &mut self,
        db: u32,
        key: &[u8],
        offset: usize,
        value: &[u8],
        max: usize,
    ) -> Result<i64> {
        let old = self.meta_for_write_of(db, key, KeyType::String)?;
        let len = match &old {
            Some(_) => self.string_info(db, key)?.map_or(0, |i| i.len),
            None => 0,
        };
        if value.is_empty() {
            return Ok(len as i64);
        }
        if offset.saturating_add(value.len()) > value_limit(key, max) {
            return Err(Error::StringTooLong);
        }
        Ok(self.write_string(db, key, old.as_ref(), offset as u64, value, 0)? as i64)
    }
}

/// The longest string value the engine stores: SQLite's limit on a string or blob, and on a
/// whole row (the key is in the same row). proto-max-bulk-len may be set higher (Redis allows
/// up to LONG_MAX), but a longer value could never be written: commands that grow a value
/// (SETRANGE, APPEND) are refused before they allocate it.
pub const MAX_STORED_VALUE: usize = 1_000_000_000;

/// The longest value `key` may hold under the server's `max`: see [`MAX_STORED_VALUE`] (the
/// key and the row's other columns take their part of SQLite's limit).
fn value_limit(key: &[u8], max: usize) -> usize {
    max.min(MAX_STORED_VALUE.saturating_sub(key.len() + 64))
}

struct ItoaBuf {
    buf: [u8; 20],
    start: usize,
}

impl ItoaBuf {
    fn as_bytes_mut(&mut self) -> &[u8] {
        &self.buf[self.start..]
    }
}

fn itoa_buf(v: i64) -> ItoaBuf {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let neg = v < 0;
    let mut n = v.unsigned_abs();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if neg {
        i -= 1;
        buf[i] = b'-';
    }
    ItoaBuf { buf, start: i }
}

impl Db {
    /// GET.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Bytes>> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.read(move |r| r.get(db, &key))
    }

    /// SET without options.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn set(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        self.set_with(key, value, SetOptions::default()).map(|_| ())
    }

    /// SET with options.
    ///
    /// # Errors
    /// As [`Writer::set`].
    pub fn set_with(
        &self,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        opts: SetOptions,
    ) -> Result<SetOutcome> {
        let (db, key, value) = (self.index(), key.as_ref().to_vec(), value.as_ref().to_vec());
        self.write(move |w| w.set(db, &key, &value, opts))
    }

    /// MGET.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn mget<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<Vec<Option<Bytes>>> {
        let db = self.index();
        let keys: Vec<Bytes> = keys
            .iter()
            .map(|k| Bytes::copy_from_slice(k.as_ref()))
            .collect();
        self.read(move |r| {
            Ok(r.mget(db, &keys)?
                .into_iter()
                .map(StringLookup::value)
                .collect())
        })
    }

    /// MSET.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn mset<K: AsRef<[u8]>, V: AsRef<[u8]>>(&self, pairs: &[(K, V)]) -> Result<()> {
        let db = self.index();
        let pairs = owned_pairs(pairs);
        self.write(move |w| w.mset(db, &pairs))
    }

    /// MSETNX.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn msetnx<K: AsRef<[u8]>, V: AsRef<[u8]>>(&self, pairs: &[(K, V)]) -> Result<bool> {
        let db = self.index();
        let pairs = owned_pairs(pairs);
        self.write(move |w| w.msetnx(db, &pairs))
    }

    /// GETSET: sets `value` and returns the old value.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type (nothing is written then).
    pub fn getset(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<Option<Bytes>> {
        let opts = SetOptions {
            get: true,
            ..SetOptions::default()
        };
        Ok(self.set_with(key, value, opts)?.old)
    }

    /// LCS of the strings at two keys (missing keys are empty).
    ///
    /// # Errors
    /// [`Error::WrongType`] if either key holds another type.
    pub fn lcs(&self, a: impl AsRef<[u8]>, b: impl AsRef<[u8]>) -> Result<Lcs> {
        let (db, a, b) = (self.index(), a.as_ref().to_vec(), b.as_ref().to_vec());
        self.read(move |r| {
            let value = |l: StringLookup| match l {
                StringLookup::Missing => Ok(Bytes::new()),
                StringLookup::Value(v) => Ok(v),
                StringLookup::OtherType => Err(Error::WrongType),
            };
            let (x, y) = r.lcs_values(db, &a, &b)?;
            Ok(lcs(&value(x)?, &value(y)?))
        })
    }

    /// GETDEL.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn getdel(&self, key: impl AsRef<[u8]>) -> Result<Option<Bytes>> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.write(move |w| w.getdel(db, &key))
    }

    /// GETEX.
    ///
    /// # Errors
    /// As [`Writer::getex`].
    pub fn getex(&self, key: impl AsRef<[u8]>, expiry: Option<Expiry>) -> Result<Option<Bytes>> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.write(move |w| w.getex(db, &key, expiry))
    }

    /// INCRBY (INCR is `incr_by(key, 1)`, DECRBY a negative delta).
    ///
    /// # Errors
    /// As [`Writer::incr_by`].
    pub fn incr_by(&self, key: impl AsRef<[u8]>, delta: i64) -> Result<i64> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.write(move |w| w.incr_by(db, &key, delta))
    }

    /// INCRBYFLOAT.
    ///
    /// # Errors
    /// As [`Writer::incr_by_float`].
    pub fn incr_by_float(&self, key: impl AsRef<[u8]>, incr: f64) -> Result<Bytes> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        let incr = format!("{incr:e}");
        self.write(move |w| w.incr_by_float(db, &key, incr.as_bytes()))
    }

    /// APPEND.
    ///
    /// # Errors
    /// As [`Writer::append`].
    pub fn append(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<i64> {
        let (db, key, value) = (self.index(), key.as_ref().to_vec(), value.as_ref().to_vec());
        self.write(move |w| w.append(db, &key, &value, MAX_STRING))
    }

    /// STRLEN.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn strlen(&self, key: impl AsRef<[u8]>) -> Result<i64> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.read(move |r| Ok(r.strlen(db, &key)?.unwrap_or(0)))
    }

    /// GETRANGE.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn getrange(&self, key: impl AsRef<[u8]>, start: i64, end: i64) -> Result<Bytes> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.read(move |r| Ok(r.getrange(db, &key, start, end)?.unwrap_or_default()))
    }

    /// SETRANGE.
    ///
    /// # Errors
    /// As [`Writer::setrange`].
    pub fn setrange(
        &self,
        key: impl AsRef<[u8]>,
        offset: usize,
        value: impl AsRef<[u8]>,
    ) -> Result<i64> {
        let (db, key, value) = (self.index(), key.as_ref().to_vec(), value.as_ref().to_vec());
        self.write(move |w| w.setrange(db, &key, offset, &value, MAX_STRING))
    }
}

fn owned_pairs<K: AsRef<[u8]>, V: AsRef<[u8]>>(pairs: &[(K, V)]) -> Vec<(Bytes, Bytes)> {
    pairs
        .iter()
        .map(|(k, v)| {
            (
                Bytes::copy_from_slice(k.as_ref()),
                Bytes::copy_from_slice(v.as_ref()),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ManualClock, Options};
    use std::sync::Arc;

    const NOW: i64 = 1_700_000_000_000;

    fn db() -> Db {
        Db::open_with(Options {
            clock: Arc::new(ManualClock::new(NOW)),
            ..Options::default()
        })
        .expect("open")
    }

    /// Stands in for a collection until the collection families exist: relabels the string at
    /// `key` as a hash (strings keep no element rows, so nothing else needs to change).
    fn make_hash(db: &Db, key: &'static str) {
        db.set(key, "x").unwrap();
        db.write(move |w| {
            w.conn.execute(
                "UPDATE main.relis_keys SET type = 1 WHERE key = ?1",
                [key.as_bytes()],
            )?;
            Ok(())
        })
        .unwrap();
    }

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    #[test]
    fn lookups_tell_missing_from_other_types() {
        let db = db();
        db.set("s", "v").unwrap();
        make_hash(&db, "h");
        let (s, h, m) = db
            .read(|r| {
                Ok((
                    r.lookup_string(0, b"s")?,
                    r.lookup_string(0, b"h")?,
                    r.lookup_string(0, b"m")?,
                ))
            })
            .unwrap();
        assert_eq!(s, StringLookup::Value(b("v")));
        assert_eq!(h, StringLookup::OtherType);
        assert_eq!(m, StringLookup::Missing);
        assert!(s.found() && h.found() && !m.found());
        let keys = vec![b("s"), b("h"), b("m")];
        let got = db.read(move |r| r.mget(0, &keys)).unwrap();
        assert_eq!(
            got,
            vec![
                StringLookup::Value(b("v")),
                StringLookup::OtherType,
                StringLookup::Missing
            ]
        );
        assert_eq!(
            db.mget(&["s", "h", "m"]).unwrap(),
            vec![Some(b("v")), None, None]
        );
        let (a, bb) = db.read(|r| r.lcs_values(0, b"h", b"m")).unwrap();
        assert_eq!((a, bb), (StringLookup::OtherType, StringLookup::Missing));
    }

    #[test]
    fn strlen_and_getrange_distinguish_missing_keys() {
        let db = db();
        db.set("e", "").unwrap();
        db.set("s", "hello").unwrap();
        make_hash(&db, "h");
        let r = db
            .read(|r| Ok((r.strlen(0, b"e")?, r.strlen(0, b"s")?, r.strlen(0, b"m")?)))
            .unwrap();
        assert_eq!(r, (Some(0), Some(5), None));
        assert_eq!(db.read(|r| r.strlen(0, b"h")), Err(Error::WrongType));
        let r = db
            .read(|r| {
                Ok((
                    r.getrange(0, b"e", 0, -1)?,
                    r.getrange(0, b"s", 1, 3)?,
                    r.getrange(0, b"m", 0, -1)?,
                ))
            })
            .unwrap();
        assert_eq!(r, (Some(Bytes::new()), Some(b("ell")), None));
        assert_eq!(
            db.read(|r| r.getrange(0, b"h", 0, -1)),
            Err(Error::WrongType)
        );
        assert_eq!(db.strlen("m").unwrap(), 0);
        assert_eq!(db.getrange("m", 0, -1).unwrap(), Bytes::new());
    }

    #[test]
    fn writes_refuse_other_types_and_change_nothing() {
        let db = db();
        make_hash(&db, "h");
        assert_eq!(db.getdel("h"), Err(Error::WrongType));
        assert_eq!(db.getex("h", None), Err(Error::WrongType));
        assert_eq!(db.incr_by("h", 1), Err(Error::WrongType));
        assert_eq!(db.incr_by_float("h", 1.0), Err(Error::WrongType));
        assert_eq!(db.append("h", "x"), Err(Error::WrongType));
        assert_eq!(db.setrange("h", 0, ""), Err(Error::WrongType));
        assert_eq!(db.setrange("h", 0, "x"), Err(Error::WrongType));
        // GET with SET reads the old value first, so it refuses too; without GET, SET overwrites.
        let get = SetOptions {
            get: true,
            ..SetOptions::default()
        };
        assert_eq!(db.set_with("h", "v", get), Err(Error::WrongType));
        assert_eq!(db.msetnx(&[("h", "v"), ("n", "1")]), Ok(false));
        assert_eq!(db.get("n"), Ok(None));
        assert_eq!(
            db.read(|r| r.lookup_string(0, b"h")),
            Ok(StringLookup::OtherType)
        );
        db.mset(&[("h", "v")]).unwrap();
        assert_eq!(db.get("h"), Ok(Some(b("v"))));
    }

    #[test]
    fn getex_expiry() {
        let db = db();
        db.set("k", "v").unwrap();
        let ttl = |db: &Db| {
            db.read(|r| Ok(r.meta(0, b"k")?.map(|m| m.expire_at)))
                .unwrap()
        };
        assert_eq!(db.getex("k", Some(Expiry::In(1000))), Ok(Some(b("v"))));
        assert_eq!(ttl(&db), Some(Some(NOW + 1000)));
        assert_eq!(db.getex("k", None), Ok(Some(b("v"))));
        assert_eq!(ttl(&db), Some(Some(NOW + 1000)));
        assert_eq!(db.getex("k", Some(Expiry::Clear)), Ok(Some(b("v"))));
        assert_eq!(ttl(&db), Some(None));
        // PERSIST on a key without a TTL leaves its version alone (a WATCH survives it).
        let version = |db: &Db| db.read(|r| Ok(r.meta(0, b"k")?.unwrap().version)).unwrap();
        let before = version(&db);
        assert_eq!(db.getex("k", Some(Expiry::Clear)), Ok(Some(b("v"))));
        assert_eq!(version(&db), before);
        assert_eq!(db.getex("k", Some(Expiry::At(NOW + 5))), Ok(Some(b("v"))));
        assert_eq!(ttl(&db), Some(Some(NOW + 5)));
        assert_eq!(
            db.getex("k", Some(Expiry::In(i64::MAX))),
            Err(Error::InvalidExpire)
        );
        assert_eq!(ttl(&db), Some(Some(NOW + 5)));
        // A time not in the future deletes the key, after handing over the value.
        assert_eq!(db.getex("k", Some(Expiry::At(NOW))), Ok(Some(b("v"))));
        assert_eq!(ttl(&db), None);
        assert_eq!(db.getex("k", Some(Expiry::In(1000))), Ok(None));
    }

    #[test]
    fn counters_keep_the_ttl() {
        let db = db();
        let ex = SetOptions {
            expiry: Expiry::At(NOW + 10_000),
            ..SetOptions::default()
        };
        db.set_with("n", "5", ex).unwrap();
        assert_eq!(db.incr_by("n", -7), Ok(-2));
        assert_eq!(
            db.incr_by_float("n", 0.5).map(|v| v.to_vec()),
            Ok(b"-1.5".to_vec())
        );
        assert_eq!(db.append("n", "0"), Ok(5));
        assert_eq!(db.setrange("n", 0, "+"), Ok(5));
        assert_eq!(db.get("n"), Ok(Some(b("+1.50"))));
        let at = db
            .read(|r| Ok(r.meta(0, b"n")?.unwrap().expire_at))
            .unwrap();
        assert_eq!(at, Some(NOW + 10_000));
        assert_eq!(db.incr_by("n", 1), Err(Error::NotInteger));
        db.set("n", i64::MAX.to_string()).unwrap();
        assert_eq!(db.incr_by("n", 1), Err(Error::Overflow));
    }

    /// An expired counter starts again from nothing (and without its TTL); a live one counts on
    /// and keeps it, whichever path runs.
    #[test]
    fn counters_past_their_expiry_start_again() {
        let clock = Arc::new(ManualClock::new(NOW));
        let db = Db::open_with(Options {
            clock: clock.clone(),
            ..Options::default()
        })
        .unwrap();
        let ex = SetOptions {
            expiry: Expiry::At(NOW + 1_000),
            ..SetOptions::default()
        };
        db.set_with("n", "5", ex).unwrap();
        assert_eq!(db.incr_by("n", 2), Ok(7));
        clock.set(NOW + 1_000);
        assert_eq!(db.incr_by("n", 2), Ok(2));
        let at = db
            .read(|r| Ok(r.meta(0, b"n")?.unwrap().expire_at))
            .unwrap();
        assert_eq!(at, None);
    }

    #[test]
    fn length_limits() {
        let db = db();
        let limited = |key: &'static str, offset: usize, v: &'static str| {
            db.write(move |w| w.setrange(0, key.as_bytes(), offset, v.as_bytes(), 8))
        };
        assert_eq!(limited("a", 7, "x"), Ok(8));
        assert_eq!(limited("a", 8, "x"), Err(Error::StringTooLong));
        assert_eq!(limited("b", usize::MAX, "x"), Err(Error::StringTooLong));
        assert_eq!(limited("b", usize::MAX, ""), Ok(0));
        assert_eq!(db.get("b"), Ok(None), "writing nothing creates nothing");
        let append = |v: &'static str| db.write(move |w| w.append(0, b"a", v.as_bytes(), 8));
        assert_eq!(append("x"), Err(Error::StringTooLong));
        assert_eq!(append(""), Ok(8));
    }

    /// CVE-2021-41099: with proto-max-bulk-len raised to its maximum (Redis allows LONG_MAX), a
    /// SETRANGE far out used to allocate the whole string and abort the process. SQLite cannot
    /// hold a value that long anyway: the engine refuses it before allocating.
    #[test]
    fn no_limit_above_what_sqlite_stores() {
        let db = db();
        let far =
            |offset: usize| db.write(move |w| w.setrange(0, b"far", offset, b"x", usize::MAX));
        assert_eq!(far(i64::MAX as usize - 1), Err(Error::StringTooLong));
        assert_eq!(far(MAX_STORED_VALUE), Err(Error::StringTooLong));
        assert_eq!(far(3), Ok(4));
    }

    #[test]
    fn lcs_matches_redis() {
        // From the LCS documentation.
        let l = lcs(b"ohmytext", b"mynewtext");
        assert_eq!(&l.common[..], b"mytext");
        assert_eq!(l.matches, vec![((4, 7), (5, 8)), ((2, 3), (0, 1))]);
        let l = lcs(b"", b"abc");
        assert!(l.common.is_empty() && l.matches.is_empty());
        // Pinned from redis-server 7.0.15 (ties resolve toward the second string).
        let l = lcs(b"\0a\xffb\0", b"a\0\0b\xff");
        assert_eq!(&l.common[..], b"a\0");
        assert_eq!(l.matches, vec![((4, 4), (2, 2)), ((1, 1), (0, 0))]);
    }
}
