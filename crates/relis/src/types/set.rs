//! The set family: SADD, SREM, SISMEMBER, SMISMEMBER, SMEMBERS, SCARD, SPOP, SRANDMEMBER, SMOVE,
//! SINTER, SINTERCARD, SINTERSTORE, SUNION, SUNIONSTORE, SDIFF, SDIFFSTORE and SSCAN.
//!
//! Members live in `relis_set (kid, member)`, one B-tree entry each, keyed by the key's id; the
//! key row keeps the exact member count (SCARD is O(1)). Set algebra runs in SQL: an
//! intersection or a difference walks the smallest (or the first) set in member order and probes
//! the others by primary key (Redis's own algorithm, O(N*M) with N the walked set's size), in one
//! statement for up to 32 sets; the STORE variants write their result straight into a fresh key
//! id with `INSERT ... SELECT` (a union copies each set with `INSERT OR IGNORE`), then replace the
//! destination, so the sources may include the destination itself.
//!
//! Redis 7.0 keeps a set as an `intset` while every member is an integer and there are at most
//! [`SET_MAX_INTSET_ENTRIES`] of them, and converts it to a `hashtable` for good once either stops
//! being true. For sets the key row's `head` column (which only lists use otherwise) records
//! that encoding: 0 intset, 1 hashtable. It drives OBJECT ENCODING, and SSCAN, which, like Redis,
//! returns an intset whole in one call. Replies list members in member (byte) order, except that a
//! reply Redis would build from an intset (at most 512 members, all integers) is in numeric order,
//! as Redis's is.
//!
//! Random members (SPOP, SRANDMEMBER) are picked uniformly by position: `LIMIT 1 OFFSET r` over
//! the member index from whichever end is nearer, so one pick costs O(min(r, N-r)) row steps
//! (SQLite B-trees do not count rows per page), N/4 on average; k picks walk once up from the
//! first member and once down from the last, skipping the gaps with OFFSET, so at most N/2 row
//! steps whatever k (or one read of the set when k is a large share of it). A row step costs
//! about 80 ns in a release build: one SPOP on a 200,000-member set takes about 4 ms, where Redis
//! is O(1). Everything else is O(1) or O(log N) per member, as in Redis.

use crate::backend::sqlite::db::Db;
use crate::backend::sqlite::sql::set as q;
use crate::backend::sqlite::stmt::prepare;
use crate::backend::sqlite::store::{KeyMeta, KeyType, Reader, Writer};
use crate::error::{Error, Result};
use crate::glob::{glob_match, literal_prefix};
use crate::types::keys::ScanPage;
use crate::types::strings::parse_i64;
use bytes::Bytes;
use rand::seq::SliceRandom;
use rusqlite::OptionalExtension;
use std::collections::{BTreeSet, HashSet};

/// Redis 7.0's default `set-max-intset-entries`: the most members an intset-encoded set holds.
pub const SET_MAX_INTSET_ENTRIES: i64 = 512;

/// The most members SRANDMEMBER with a negative count returns. Redis builds any reply it is asked
/// for (and runs out of memory for `-9223372036854775807`); Relis bounds it.
pub const MAX_RANDOM_REPEATS: u64 = 4 * 1024 * 1024;

/// Intersections and differences of up to this many sets run as one SQL statement; more go
/// through probes from Rust (SQLite bounds the depth of an expression).
const SQL_PROBES: usize = 32;

/// `head` of a set's key row: the set is (or would be, in Redis) an intset.
const INTSET: i64 = 0;
/// `head` of a set's key row: the set is a hashtable for good.
const HASHTABLE: i64 = 1;

/// A set's key row: its metadata and whether Redis would hold it as a hashtable.
#[derive(Clone, Copy, Debug)]
struct SetRow {
    meta: KeyMeta,
    hashtable: bool,
}

/// What a key row holds, of any type, with the set encoding flag.
type AnyRow = (KeyMeta, i64);

/// The set operation of SINTER/SUNION/SDIFF and their STORE variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Inter,
    Union,
    Diff,
}

/// Whether Redis would store a member in an intset (`string2ll` accepts it).
fn is_int(member: &[u8]) -> bool {
    parse_i64(member).is_some()
}

/// Orders members as Redis replies them when it would hold them in an intset: numerically, if
/// there are at most [`SET_MAX_INTSET_ENTRIES`] and all are integers. Other replies keep member
/// order (Redis's hashtable order is unspecified).
fn redis_order(members: &mut Vec<Bytes>) {
    if members.len() as i64 > SET_MAX_INTSET_ENTRIES {
        return;
    }
    let mut nums = Vec::with_capacity(members.len());
    for m in members.iter() {
        match parse_i64(m) {
            Some(n) => nums.push((n, m.clone())),
            None => return,
        }
    }
    nums.sort_unstable_by_key(|(n, _)| *n);
    *members = nums.into_iter().map(|(_, m)| m).collect();
}

/// `k` distinct positions out of `0..n`, ascending (Floyd's sampling, or its complement when `k`
/// is more than half of `n`).
fn distinct_positions(n: u64, k: u64) -> Vec<u64> {
    let pick = |k: u64| {
        let mut chosen = HashSet::with_capacity(k as usize);
        for j in n - k..n {
            let t = rand::random_range(0..=j);
            if !chosen.insert(t) {
                chosen.insert(j);
            }
        }
        chosen
    };
    let mut out: Vec<u64> = if k * 2 <= n {
        pick(k).into_iter().collect()
    } else {
        let skip = pick(n - k);
        (0..n).filter(|i| !skip.contains(i)).collect()
    };
    out.sort_unstable();
    out
}

/// The error a multi-key command reports for a key of another type, after counting its lookup.
fn lookup_error(e: Error, key: &[u8], seen: &mut dyn FnMut(&[u8], bool)) -> Error {
    if e == Error::WrongType {
        seen(key, true);
    }
    e
}

impl Reader<'_> {
    /// The live set at `key`.
    fn set_row(&self, db: u32, key: &[u8]) -> Result<Option<SetRow>> {
        match self.raw_meta_head(db, key)? {
            Some((m, _)) if !self.is_live(&m) => Ok(None),
            Some((m, _)) if m.kind != KeyType::Set => Err(Error::WrongType),
            Some((meta, head)) => Ok(Some(SetRow {
                meta,
                hashtable: head == HASHTABLE,
            })),
            None => Ok(None),
        }
    }

    /// Looks up every key in order as Redis does (each lookup reported to `seen`: found or not),
    /// stopping at the first key of another type.
    fn set_rows(
        &self,
        db: u32,
        keys: &[Bytes],
        seen: &mut dyn FnMut(&[u8], bool),
    ) -> Result<Vec<Option<SetRow>>> {
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            let row = self.set_row(db, k).map_err(|e| lookup_error(e, k, seen))?;
            seen(k, row.is_some());
            out.push(row);
        }
        Ok(out)
    }

    /// OBJECT ENCODING of the set at `key` (which the caller knows is a live set).
    pub(crate) fn set_encoding(&self, db: u32, key: &[u8]) -> Result<&'static str> {
        Ok(match self.set_row(db, key)? {
            Some(r) if !r.hashtable => "intset",
            _ => "hashtable",
        })
    }

    fn is_member(&self, kid: i64, member: &[u8]) -> Result<bool> {
        Ok(prepare(self.conn, q::SISMEMBER)?.exists((kid, member))?)
    }

    /// Every member of the set with id `kid`, in member order.
    fn all_members(&self, kid: i64) -> Result<Vec<Bytes>> {
        let mut st = prepare(self.conn, q::MEMBERS)?;
        let mut rows = st.query([kid])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            out.push(Bytes::copy_from_slice(r.get_ref(0)?.as_blob()?));
        }
        Ok(out)
    }

    /// Whether every member of the set with id `kid` is an integer (callers keep it to small sets).
    fn all_ints(&self, kid: i64) -> Result<bool> {
        let mut st = prepare(self.conn, q::MEMBERS_ANY_ORDER)?;
        let mut rows = st.query([kid])?;
        while let Some(r) = rows.next()? {
            if !is_int(r.get_ref(0)?.as_blob()?) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The member at position `pos` (0-based, member order) of a set of `n` members, walking from
    /// the nearer end.
    fn member_at(&self, kid: i64, n: i64, pos: i64) -> Result<Bytes> {
        let (sql, offset) = if pos <= n / 2 {
            (q::MEMBER_AT, pos)
        } else {
            (q::MEMBER_AT_DESC, n - 1 - pos)
        };
        let m: Option<Vec<u8>> = prepare(self.conn, sql)?
            .query_row((kid, offset), |r| r.get(0))
            .optional()?;
        m.map(Bytes::from)
            .ok_or_else(|| Error::Storage(format!("set {kid} has no member at {pos} of {n}")))
    }

    /// The members at the ascending, distinct positions `positions` of a set of `n` members, in
    /// one walk: gaps are skipped with OFFSET, or, when the positions are dense, the whole set is
    /// read.
    fn members_at(&self, kid: i64, n: u64, positions: &[u64]) -> Result<Vec<Bytes>> {
        if positions.len() as u64 * 8 >= n {
            let all = self.all_members(kid)?;
            return positions
                .iter()
                .map(|&p| {
                    all.get(p as usize)
                        .cloned()
                        .ok_or_else(|| Error::Storage(format!("set {kid} is shorter than {n}")))
                })
                .collect();
        }
        // The lower half walks up from the first member, the upper half down from the last.
        let split = positions.partition_point(|&p| p < n / 2);
        let mut out = self.walk(kid, n, &positions[..split], false)?;
        let down: Vec<u64> = positions[split..]
            .iter()
            .rev()
            .map(|&p| n - 1 - p)
            .collect();
        let mut upper = self.walk(kid, n, &down, true)?;
        upper.reverse();
        out.extend(upper);
        Ok(out)
    }

    /// The members at the ascending positions `positions` counted from the first member (or,
    /// with `desc`, from the last), skipping each gap with OFFSET from the previous one.
    fn walk(&self, kid: i64, n: u64, positions: &[u64], desc: bool) -> Result<Vec<Bytes>> {
        let (first, next_sql) = if desc {
            (q::MEMBER_AT_DESC, q::MEMBER_BEFORE)
        } else {
            (q::MEMBER_AT, q::MEMBER_AFTER)
        };
        let mut first = prepare(self.conn, first)?;
        let mut after = prepare(self.conn, next_sql)?;
        let mut out: Vec<Bytes> = Vec::with_capacity(positions.len());
        let mut next = 0u64;
        for &p in positions {
            let gap = (p - next) as i64;
            let m: Option<Vec<u8>> = match out.last() {
                None => first.query_row((kid, gap), |r| r.get(0)).optional()?,
                Some(prev) => after
                    .query_row((kid, &prev[..], gap), |r| r.get(0))
                    .optional()?,
            };
            let m = m.ok_or_else(|| Error::Storage(format!("set {kid} is shorter than {n}")))?;
            out.push(Bytes::from(m));
            next = p + 1;
        }
        Ok(out)
    }

    /// SISMEMBER: whether `member` is in the set, `None` when there is no key.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn sismember(&self, db: u32, key: &[u8], member: &[u8]) -> Result<Option<bool>> {
        match self.set_row(db, key)? {
            Some(r) => Ok(Some(self.is_member(r.meta.id, member)?)),
            None => Ok(None),
        }
    }

    /// SMISMEMBER: whether each of `members` is in the set, `None` when there is no key.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn smismember(&self, db: u32, key: &[u8], members: &[Bytes]) -> Result<Option<Vec<bool>>> {
        let Some(r) = self.set_row(db, key)? else {
            return Ok(None);
        };
        members
            .iter()
            .map(|m| self.is_member(r.meta.id, m))
            .collect::<Result<_>>()
            .map(Some)
    }

    /// SCARD: the number of members, `None` when there is no key. O(1): the key row keeps it.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn scard(&self, db: u32, key: &[u8]) -> Result<Option<i64>> {
        Ok(self.set_row(db, key)?.map(|r| r.meta.count))
    }

    /// SMEMBERS: every member, `None` when there is no key.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn smembers(&self, db: u32, key: &[u8]) -> Result<Option<Vec<Bytes>>> {
        let Some(r) = self.set_row(db, key)? else {
            return Ok(None);
        };
        let mut all = self.all_members(r.meta.id)?;
        redis_order(&mut all);
        Ok(Some(all))
    }

    /// SRANDMEMBER without a count: one random member, `None` when there is no key.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn srandmember(&self, db: u32, key: &[u8]) -> Result<Option<Bytes>> {
        let Some(r) = self.set_row(db, key)? else {
            return Ok(None);
        };
        let n = r.meta.count;
        Ok(Some(self.member_at(
            r.meta.id,
            n,
            rand::random_range(0..n),
        )?))
    }

    /// SRANDMEMBER with a count: `count` distinct random members (the whole set when it has no
    /// more), or, for a negative count, `-count` members picked independently (so they may
    /// repeat), in random order. `None` when there is no key.
    ///
    /// # Errors
    /// [`Error::WrongType`]; [`Error::NotInteger`] when `-count` exceeds [`MAX_RANDOM_REPEATS`].
    pub fn srandmember_count(&self, db: u32, key: &[u8], count: i64) -> Result<Option<Vec<Bytes>>> {
        let Some(r) = self.set_row(db, key)? else {
            return Ok(None);
        };
        let (kid, n) = (r.meta.id, r.meta.count as u64);
        if count == 0 {
            return Ok(Some(Vec::new()));
        }
        let mut rng = rand::rng();
        if count > 0 {
            let k = count as u64;
            if k >= n {
                let mut all = self.all_members(kid)?;
                redis_order(&mut all);
                return Ok(Some(all));
            }
            let mut out = self.members_at(kid, n, &distinct_positions(n, k))?;
            out.shuffle(&mut rng);
            return Ok(Some(out));
        }
        let k = count.unsigned_abs();
        if k > MAX_RANDOM_REPEATS {
            return Err(Error::NotInteger);
        }
        let mut picks: Vec<u64> = (0..k).map(|_| rand::random_range(0..n)).collect();
        picks.sort_unstable();
        let mut distinct = picks.clone();
        distinct.dedup();
        let found = self.members_at(kid, n, &distinct)?;
        let mut out = Vec::with_capacity(k as usize);
        let mut i = 0;
        for p in picks {
            while distinct[i] != p {
                i += 1;
            }
            out.push(found[i].clone());
        }
        out.shuffle(&mut rng);
        Ok(Some(out))
    }

    /// SSCAN: a page of the set's members after `after` (member order), up to `count` examined,
    /// filtered by the glob `pattern`; `None` when there is no key. A set Redis would hold as an
    /// intset comes whole in one page, as Redis returns it.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn sscan(
        &self,
        db: u32,
        key: &[u8],
        after: Option<&[u8]>,
        count: usize,
        pattern: Option<&[u8]>,
    ) -> Result<Option<ScanPage>> {
        let Some(r) = self.set_row(db, key)? else {
            return Ok(None);
        };
        let pattern = pattern.filter(|p| *p != b"*");
        let keep = |m: &[u8]| pattern.is_none_or(|p| glob_match(p, m, false));
        if !r.hashtable {
            let mut all = self.all_members(r.meta.id)?;
            redis_order(&mut all);
            all.retain(|m| keep(m));
            return Ok(Some(ScanPage {
                keys: all,
                next: None,
            }));
        }
        // Resume strictly after `after`: the smallest member greater than it is `after` + 0x00.
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
        // COUNT may be as large as i64::MAX: keep room for the one extra row asked for below.
        let limit = count.clamp(1, i64::MAX as usize - 1) as i64;
        let mut st = match &upper {
            Some(_) => prepare(self.conn, q::SCAN_RANGE)?,
            None => prepare(self.conn, q::SCAN_FROM)?,
        };
        // One row more than the page, to know whether the scan goes on.
        let mut rows = match &upper {
            Some(u) => st.query((r.meta.id, &lower, limit + 1, u))?,
            None => st.query((r.meta.id, &lower, limit + 1))?,
        };
        let mut page = ScanPage::default();
        let mut examined = 0;
        let mut last: Option<Bytes> = None;
        while let Some(row) = rows.next()? {
            if examined == limit {
                // There is more: the next page starts after this page's last member.
                page.next = last;
                break;
            }
            examined += 1;
            let m = Bytes::copy_from_slice(row.get_ref(0)?.as_blob()?);
            if keep(&m) {
                page.keys.push(m.clone());
            }
            last = Some(m);
        }
        Ok(Some(page))
    }

    /// The distinct sets, in order of first appearance.
    fn distinct_sets(rows: impl Iterator<Item = SetRow>) -> Vec<SetRow> {
        let mut out: Vec<SetRow> = Vec::new();
        for r in rows {
            if !out.iter().any(|o| o.meta.id == r.meta.id) {
                out.push(r);
            }
        }
        out
    }

    /// The sets an intersection or a difference probes, the walked one first; `None` when the
    /// result is empty whatever the members (a missing key in an intersection, a missing first
    /// key or the first set subtracted from itself in a difference).
    fn probe_plan(op: Op, rows: &[Option<SetRow>]) -> Option<Vec<i64>> {
        let sets = match op {
            Op::Inter => {
                if rows.iter().any(Option::is_none) {
                    return None;
                }
                let mut sets = Self::distinct_sets(rows.iter().flatten().copied());
                // Walk the smallest set and probe the others, as Redis does.
                sets.sort_by_key(|r| r.meta.count);
                sets
            }
            // (Unions are not probed.)
            Op::Diff | Op::Union => {
                let first = (*rows.first()?)?;
                if rows[1..]
                    .iter()
                    .flatten()
                    .any(|r| r.meta.id == first.meta.id)
                {
                    return None;
                }
                Self::distinct_sets(rows.iter().flatten().copied())
            }
        };
        Some(sets.iter().map(|r| r.meta.id).collect())
    }

    /// Walks the members of the set `ids[0]` that are in all (`Inter`) or none (`Diff`) of the
    /// sets `ids[1..]`, in member order, handing each to `f` until it returns false. Up to
    /// [`SQL_PROBES`] sets this is one SQL statement; beyond that (SQLite bounds the depth of an
    /// expression) each member is probed from here.
    fn probe(&self, op: Op, ids: &[i64], f: &mut dyn FnMut(&[u8]) -> bool) -> Result<()> {
        if ids.len() <= SQL_PROBES {
            let sql = q::probe(op == Op::Diff, ids.len());
            let mut st = crate::backend::sqlite::stmt::dynamic(self.conn, &sql)?;
            let mut rows = st.query(rusqlite::params_from_iter(ids))?;
            while let Some(r) = rows.next()? {
                if !f(r.get_ref(0)?.as_blob()?) {
                    break;
                }
            }
            return Ok(());
        }
        let mut st = prepare(self.conn, q::MEMBERS)?;
        let mut rows = st.query([ids[0]])?;
        while let Some(r) = rows.next()? {
            let m = r.get_ref(0)?.as_blob()?;
            let mut keep = true;
            for &other in &ids[1..] {
                if self.is_member(other, m)? != (op == Op::Inter) {
                    keep = false;
                    break;
                }
            }
            if keep && !f(m) {
                break;
            }
        }
        Ok(())
    }

    /// The members of the operation over the looked-up sets, in member order.
    fn combine(&self, op: Op, rows: &[Option<SetRow>]) -> Result<Vec<Bytes>> {
        if op == Op::Union {
            let sets = Self::distinct_sets(rows.iter().flatten().copied());
            if sets.len() == 1 {
                return self.all_members(sets[0].meta.id);
            }
            let mut all = BTreeSet::new();
            for s in sets {
                all.extend(self.all_members(s.meta.id)?);
            }
            return Ok(all.into_iter().collect());
        }
        let Some(ids) = Self::probe_plan(op, rows) else {
            return Ok(Vec::new());
        };
        if ids.len() == 1 {
            return self.all_members(ids[0]);
        }
        let mut out = Vec::new();
        self.probe(op, &ids, &mut |m| {
            out.push(Bytes::copy_from_slice(m));
            true
        })?;
        Ok(out)
    }

    fn set_op(
        &self,
        op: Op,
        db: u32,
        keys: &[Bytes],
        seen: &mut dyn FnMut(&[u8], bool),
    ) -> Result<Vec<Bytes>> {
        let rows = self.set_rows(db, keys, seen)?;
        let mut out = self.combine(op, &rows)?;
        redis_order(&mut out);
        Ok(out)
    }

    /// SINTER: the members in every set (a missing key is an empty set). Every key is looked up,
    /// in order, and reported to `seen` (found or not) for keyspace statistics.
    ///
    /// # Errors
    /// [`Error::WrongType`] for the first key of another type.
    pub fn sinter(
        &self,
        db: u32,
        keys: &[Bytes],
        seen: &mut dyn FnMut(&[u8], bool),
    ) -> Result<Vec<Bytes>> {
        self.set_op(Op::Inter, db, keys, seen)
    }

    /// SUNION: the members in any of the sets. Lookups are reported as for [`Reader::sinter`].
    ///
    /// # Errors
    /// [`Error::WrongType`] for the first key of another type.
    pub fn sunion(
        &self,
        db: u32,
        keys: &[Bytes],
        seen: &mut dyn FnMut(&[u8], bool),
    ) -> Result<Vec<Bytes>> {
        self.set_op(Op::Union, db, keys, seen)
    }

    /// SDIFF: the members of the first set in none of the others. Lookups are reported as for
    /// [`Reader::sinter`].
    ///
    /// # Errors
    /// [`Error::WrongType`] for the first key of another type.
    pub fn sdiff(
        &self,
        db: u32,
        keys: &[Bytes],
        seen: &mut dyn FnMut(&[u8], bool),
    ) -> Result<Vec<Bytes>> {
        self.set_op(Op::Diff, db, keys, seen)
    }

    /// SINTERCARD: the size of the intersection, counting no further than `limit` (0 = no limit).
    /// Lookups are reported as for [`Reader::sinter`].
    ///
    /// # Errors
    /// [`Error::WrongType`] for the first key of another type.
    pub fn sintercard(
        &self,
        db: u32,
        keys: &[Bytes],
        limit: u64,
        seen: &mut dyn FnMut(&[u8], bool),
    ) -> Result<i64> {
        let rows = self.set_rows(db, keys, seen)?;
        let Some(ids) = Self::probe_plan(Op::Inter, &rows) else {
            return Ok(0);
        };
        let limit = if limit == 0 { u64::MAX } else { limit };
        if ids.len() == 1 {
            let n = rows.iter().flatten().next().map_or(0, |r| r.meta.count) as u64;
            return Ok(n.min(limit) as i64);
        }
        let mut n = 0u64;
        self.probe(Op::Inter, &ids, &mut |_| {
            n += 1;
            n < limit
        })?;
        Ok(n as i64)
    }
}

impl Writer<'_> {
    /// The row of `key` for a write, of any type: an expired key is deleted first.
    fn any_row_for_write(&mut self, db: u32, key: &[u8]) -> Result<Option<AnyRow>> {
        match self.raw_meta_head(db, key)? {
            Some((m, _)) if !self.is_live(&m) => {
                self.delete_expired(db, key, &m)?;
                Ok(None)
            }
            row => Ok(row),
        }
    }

    /// The set at `key` for a write (an expired key is deleted first).
    fn set_row_for_write(&mut self, db: u32, key: &[u8]) -> Result<Option<SetRow>> {
        match self.any_row_for_write(db, key)? {
            Some((m, _)) if m.kind != KeyType::Set => Err(Error::WrongType),
            Some((meta, head)) => Ok(Some(SetRow {
                meta,
                hashtable: head == HASHTABLE,
            })),
            None => Ok(None),
        }
    }

    /// Creates the key row of a new set whose members are already in `relis_set` under `id`.
    fn insert_set_row(
        &mut self,
        db: u32,
        key: &[u8],
        id: i64,
        count: i64,
        hashtable: bool,
    ) -> Result<()> {
        let head = if hashtable { HASHTABLE } else { INTSET };
        prepare(self.conn, q::KEY_INSERT)?.execute((db, key, id, count, self.now, head))?;
        self.count_new_key(db, None);
        self.note_new(db, key);
        Ok(())
    }

    /// Records a change to an existing set (`meta`, its row as the write read it): its new
    /// count and encoding, a new version, kept pending (`Writer::save_row_later`); the key goes
    /// when its last member has.
    fn update_set_row(
        &mut self,
        db: u32,
        key: &[u8],
        meta: &KeyMeta,
        count: i64,
        hashtable: bool,
    ) -> Result<()> {
        if count == 0 {
            self.delete_key_row(db, key, meta.expire_at.is_some())?;
            return Ok(());
        }
        let head = if hashtable { HASHTABLE } else { INTSET };
        self.save_row_later(db, key, meta, count, head)?;
        Ok(())
    }

    fn remove_member(&mut self, kid: i64, member: &[u8]) -> Result<bool> {
        Ok(prepare(self.conn, q::SREM_MEMBER)?.execute((kid, member))? > 0)
    }

    fn add_member(&mut self, kid: i64, member: &[u8]) -> Result<bool> {
        Ok(prepare(self.conn, q::SADD_MEMBER)?.execute((kid, member))? > 0)
    }

    /// SADD: adds the members, returning how many were not there already.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn sadd(&mut self, db: u32, key: &[u8], members: &[Bytes]) -> Result<i64> {
        let row = self.set_row_for_write(db, key)?;
        let (kid, count, mut hashtable) = match &row {
            Some(r) => (r.meta.id, r.meta.count, r.hashtable),
            None => (self.next_version(), 0, false),
        };
        let mut added = 0;
        for m in members {
            if self.add_member(kid, m)? {
                added += 1;
            }
            // An intset converts for good on any non-integer member.
            hashtable |= !is_int(m);
        }
        let count = count + added;
        hashtable |= count > SET_MAX_INTSET_ENTRIES;
        match row {
            None => self.insert_set_row(db, key, kid, count, hashtable)?,
            // Nothing added, nothing changed: Redis does not even signal the key (WATCH holds).
            Some(_) if added == 0 => {}
            Some(r) => self.update_set_row(db, key, &r.meta, count, hashtable)?,
        }
        Ok(added)
    }

    /// SREM: removes the members, returning how many were there; the key goes with its last
    /// member.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn srem(&mut self, db: u32, key: &[u8], members: &[Bytes]) -> Result<i64> {
        let Some(r) = self.set_row_for_write(db, key)? else {
            return Ok(0);
        };
        let mut removed = 0;
        for m in members {
            if self.remove_member(r.meta.id, m)? {
                removed += 1;
            }
        }
        if removed > 0 {
            self.update_set_row(db, key, &r.meta, r.meta.count - removed, r.hashtable)?;
        }
        Ok(removed)
    }

    /// SMOVE: moves `member` from `src` to `dst`; whether it was in `src`. A missing `src` is 0
    /// whatever `dst` holds; the same key for both only checks membership.
    ///
    /// # Errors
    /// [`Error::WrongType`] when `src`, or else `dst`, holds another type.
    pub fn smove(&mut self, db: u32, src: &[u8], dst: &[u8], member: &[u8]) -> Result<bool> {
        // Every check comes before the first write (no savepoint needed): expired keys count
        // as missing, and an expired destination is only cleared once the move is certain.
        let d_raw = self.raw_meta_head(db, dst)?;
        let d = d_raw.filter(|(m, _)| self.is_live(m));
        let Some((s, s_head)) = self
            .raw_meta_head(db, src)?
            .filter(|(m, _)| self.is_live(m))
        else {
            return Ok(false);
        };
        if s.kind != KeyType::Set || d.is_some_and(|(d, _)| d.kind != KeyType::Set) {
            return Err(Error::WrongType);
        }
        if src == dst {
            return self.is_member(s.id, member);
        }
        if !self.remove_member(s.id, member)? {
            return Ok(false);
        }
        self.update_set_row(db, src, &s, s.count - 1, s_head == HASHTABLE)?;
        match d {
            None => {
                if let Some((expired, _)) = d_raw {
                    self.delete_expired(db, dst, &expired)?;
                }
                let id = self.next_version();
                self.add_member(id, member)?;
                self.insert_set_row(db, dst, id, 1, !is_int(member))?;
            }
            Some((d, d_head)) => {
                // A destination that had the member already is left alone (Redis does not
                // signal it: a WATCH on it holds).
                if self.add_member(d.id, member)? {
                    let count = d.count + 1;
                    let hashtable =
                        d_head == HASHTABLE || !is_int(member) || count > SET_MAX_INTSET_ENTRIES;
                    self.update_set_row(db, dst, &d, count, hashtable)?;
                }
            }
        }
        Ok(true)
    }

    /// SPOP without a count: removes and returns a random member; `None` when there is no key.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn spop(&mut self, db: u32, key: &[u8]) -> Result<Option<Bytes>> {
        let Some(r) = self.set_row_for_write(db, key)? else {
            return Ok(None);
        };
        let n = r.meta.count;
        let m = self.member_at(r.meta.id, n, rand::random_range(0..n))?;
        self.remove_member(r.meta.id, &m)?;
        self.update_set_row(db, key, &r.meta, n - 1, r.hashtable)?;
        Ok(Some(m))
    }

    /// SPOP with a count: removes and returns up to `count` distinct random members (the whole set,
    /// deleting the key, when it has no more), in random order.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn spop_count(&mut self, db: u32, key: &[u8], count: u64) -> Result<Vec<Bytes>> {
        let Some(r) = self.set_row_for_write(db, key)? else {
            return Ok(Vec::new());
        };
        if count == 0 {
            return Ok(Vec::new());
        }
        let (kid, n) = (r.meta.id, r.meta.count as u64);
        if count >= n {
            let mut all = self.all_members(kid)?;
            redis_order(&mut all);
            self.delete_key(db, key, &r.meta)?;
            return Ok(all);
        }
        let mut out = self.members_at(kid, n, &distinct_positions(n, count))?;
        for m in &out {
            self.remove_member(kid, m)?;
        }
        let remaining = n - count;
        // When few members stay, Redis builds a new set from them (SPOP_MOVE_STRATEGY_MUL = 5),
        // whose encoding then depends on them alone.
        let hashtable = if remaining * 5 <= count {
            remaining as i64 > SET_MAX_INTSET_ENTRIES || !self.all_ints(kid)?
        } else {
            r.hashtable
        };
        self.update_set_row(db, key, &r.meta, remaining as i64, hashtable)?;
        out.shuffle(&mut rand::rng());
        Ok(out)
    }

    /// Replaces `dst` (of any type) with the result of `op` over the sets at `keys`; returns its
    /// size. An empty result deletes `dst`. Lookups are reported as for [`Reader::sinter`].
    fn set_op_store(
        &mut self,
        op: Op,
        db: u32,
        dst: &[u8],
        keys: &[Bytes],
        seen: &mut dyn FnMut(&[u8], bool),
    ) -> Result<i64> {
        let rows = self.set_rows(db, keys, seen)?;
        let id = self.next_version();
        // The result goes under a fresh id first, so `dst` may be one of the sources.
        let n = self.store_result(op, &rows, id)?;
        let existed = match self.meta_for_write(db, dst)? {
            Some(old) => {
                self.delete_key(db, dst, &old)?;
                true
            }
            None => false,
        };
        if n == 0 {
            return Ok(0);
        }
        let mut hashtable = n > SET_MAX_INTSET_ENTRIES || !self.all_ints(id)?;
        if op == Op::Diff && !hashtable {
            hashtable = self.diff_went_through_hashtable(&rows)?;
        }
        self.replacing(existed, |w| w.insert_set_row(db, dst, id, n, hashtable))?;
        Ok(n)
    }

    /// Writes the result of `op` over the looked-up sets as the members of the set `id`, in SQL
    /// where it can (`INSERT ... SELECT`); returns how many.
    fn store_result(&mut self, op: Op, rows: &[Option<SetRow>], id: i64) -> Result<i64> {
        if op == Op::Union {
            let mut n = 0;
            for s in Reader::distinct_sets(rows.iter().flatten().copied()) {
                n += prepare(self.conn, q::COPY_MEMBERS)?.execute((s.meta.id, id))?;
            }
            return Ok(n as i64);
        }
        let Some(ids) = Reader::probe_plan(op, rows) else {
            return Ok(0);
        };
        if ids.len() == 1 {
            return Ok(prepare(self.conn, q::COPY_MEMBERS)?.execute((ids[0], id))? as i64);
        }
        if ids.len() <= SQL_PROBES {
            let sql = q::store_probe(op == Op::Diff, ids.len());
            let params = ids.iter().copied().chain(std::iter::once(id));
            let n = crate::backend::sqlite::stmt::dynamic(self.conn, &sql)?
                .execute(rusqlite::params_from_iter(params))?;
            return Ok(n as i64);
        }
        let mut members = Vec::new();
        self.probe(op, &ids, &mut |m| {
            members.push(Bytes::copy_from_slice(m));
            true
        })?;
        for m in &members {
            self.add_member(id, m)?;
        }
        Ok(members.len() as i64)
    }

    /// Whether Redis's SDIFFSTORE ends with a hashtable although its result would fit an intset:
    /// when it picks its second algorithm (copy the first set, then remove the others' members)
    /// and the copy of the first set already had to become a hashtable.
    fn diff_went_through_hashtable(&self, rows: &[Option<SetRow>]) -> Result<bool> {
        let Some(Some(first)) = rows.first() else {
            return Ok(false);
        };
        let n0 = first.meta.count;
        let (mut one, mut two) = (0i64, 0i64);
        for r in rows.iter().flatten() {
            one += n0;
            two += r.meta.count;
        }
        if one / 2 <= two {
            return Ok(false);
        }
        Ok(n0 > SET_MAX_INTSET_ENTRIES || !self.all_ints(first.meta.id)?)
    }

    /// SINTERSTORE: stores the intersection at `dst` (replacing whatever it held); its size.
    ///
    /// # Errors
    /// [`Error::WrongType`] for the first source of another type.
    pub fn sinterstore(
        &mut self,
        db: u32,
        dst: &[u8],
        keys: &[Bytes],
        seen: &mut dyn FnMut(&[u8], bool),
    ) -> Result<i64> {
        self.set_op_store(Op::Inter, db, dst, keys, seen)
    }

    /// SUNIONSTORE: stores the union at `dst`; its size.
    ///
    /// # Errors
    /// [`Error::WrongType`] for the first source of another type.
    pub fn sunionstore(
        &mut self,
        db: u32,
        dst: &[u8],
        keys: &[Bytes],
        seen: &mut dyn FnMut(&[u8], bool),
    ) -> Result<i64> {
        self.set_op_store(Op::Union, db, dst, keys, seen)
    }

    /// SDIFFSTORE: stores the difference at `dst`; its size.
    ///
    /// # Errors
    /// [`Error::WrongType`] for the first source of another type.
    pub fn sdiffstore(
        &mut self,
        db: u32,
        dst: &[u8],
        keys: &[Bytes],
        seen: &mut dyn FnMut(&[u8], bool),
    ) -> Result<i64> {
        self.set_op_store(Op::Diff, db, dst, keys, seen)
    }
}

fn owned<M: AsRef<[u8]>>(items: &[M]) -> Vec<Bytes> {
    items
        .iter()
        .map(|m| Bytes::copy_from_slice(m.as_ref()))
        .collect()
}

impl Db {
    /// SADD.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn sadd<M: AsRef<[u8]>>(&self, key: impl AsRef<[u8]>, members: &[M]) -> Result<i64> {
        let (db, key, members) = (self.index(), key.as_ref().to_vec(), owned(members));
        self.write(move |w| w.sadd(db, &key, &members))
    }

    /// SREM.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn srem<M: AsRef<[u8]>>(&self, key: impl AsRef<[u8]>, members: &[M]) -> Result<i64> {
        let (db, key, members) = (self.index(), key.as_ref().to_vec(), owned(members));
        self.write(move |w| w.srem(db, &key, &members))
    }

    /// SISMEMBER (false for a missing key).
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn sismember(&self, key: impl AsRef<[u8]>, member: impl AsRef<[u8]>) -> Result<bool> {
        let (db, key, member) = (
            self.index(),
            key.as_ref().to_vec(),
            member.as_ref().to_vec(),
        );
        self.read(move |r| Ok(r.sismember(db, &key, &member)?.unwrap_or(false)))
    }

    /// SMISMEMBER (all false for a missing key).
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn smismember<M: AsRef<[u8]>>(
        &self,
        key: impl AsRef<[u8]>,
        members: &[M],
    ) -> Result<Vec<bool>> {
        let (db, key, members) = (self.index(), key.as_ref().to_vec(), owned(members));
        self.read(move |r| {
            Ok(r.smismember(db, &key, &members)?
                .unwrap_or_else(|| vec![false; members.len()]))
        })
    }

    /// SCARD (0 for a missing key).
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn scard(&self, key: impl AsRef<[u8]>) -> Result<i64> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.read(move |r| Ok(r.scard(db, &key)?.unwrap_or(0)))
    }

    /// SMEMBERS (empty for a missing key).
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn smembers(&self, key: impl AsRef<[u8]>) -> Result<Vec<Bytes>> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.read(move |r| Ok(r.smembers(db, &key)?.unwrap_or_default()))
    }

    /// SPOP without a count.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn spop(&self, key: impl AsRef<[u8]>) -> Result<Option<Bytes>> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.write(move |w| w.spop(db, &key))
    }

    /// SPOP with a count.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn spop_count(&self, key: impl AsRef<[u8]>, count: u64) -> Result<Vec<Bytes>> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.write(move |w| w.spop_count(db, &key, count))
    }

    /// SRANDMEMBER without a count.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn srandmember(&self, key: impl AsRef<[u8]>) -> Result<Option<Bytes>> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.read(move |r| r.srandmember(db, &key))
    }

    /// SRANDMEMBER with a count (empty for a missing key).
    ///
    /// # Errors
    /// [`Error::WrongType`]; [`Error::NotInteger`] when `-count` exceeds [`MAX_RANDOM_REPEATS`].
    pub fn srandmember_count(&self, key: impl AsRef<[u8]>, count: i64) -> Result<Vec<Bytes>> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.read(move |r| Ok(r.srandmember_count(db, &key, count)?.unwrap_or_default()))
    }

    /// SMOVE.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn smove(
        &self,
        src: impl AsRef<[u8]>,
        dst: impl AsRef<[u8]>,
        member: impl AsRef<[u8]>,
    ) -> Result<bool> {
        let db = self.index();
        let (src, dst, member) = (
            src.as_ref().to_vec(),
            dst.as_ref().to_vec(),
            member.as_ref().to_vec(),
        );
        self.write(move |w| w.smove(db, &src, &dst, &member))
    }

    /// SINTER.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn sinter<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<Vec<Bytes>> {
        let (db, keys) = (self.index(), owned(keys));
        self.read(move |r| r.sinter(db, &keys, &mut |_, _| {}))
    }

    /// SINTERCARD (`limit` 0 = no limit).
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn sintercard<K: AsRef<[u8]>>(&self, keys: &[K], limit: u64) -> Result<i64> {
        let (db, keys) = (self.index(), owned(keys));
        self.read(move |r| r.sintercard(db, &keys, limit, &mut |_, _| {}))
    }

    /// SUNION.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn sunion<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<Vec<Bytes>> {
        let (db, keys) = (self.index(), owned(keys));
        self.read(move |r| r.sunion(db, &keys, &mut |_, _| {}))
    }

    /// SDIFF.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn sdiff<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<Vec<Bytes>> {
        let (db, keys) = (self.index(), owned(keys));
        self.read(move |r| r.sdiff(db, &keys, &mut |_, _| {}))
    }

    /// SINTERSTORE.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn sinterstore<K: AsRef<[u8]>>(&self, dst: impl AsRef<[u8]>, keys: &[K]) -> Result<i64> {
        let (db, dst, keys) = (self.index(), dst.as_ref().to_vec(), owned(keys));
        self.write(move |w| w.sinterstore(db, &dst, &keys, &mut |_, _| {}))
    }

    /// SUNIONSTORE.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn sunionstore<K: AsRef<[u8]>>(&self, dst: impl AsRef<[u8]>, keys: &[K]) -> Result<i64> {
        let (db, dst, keys) = (self.index(), dst.as_ref().to_vec(), owned(keys));
        self.write(move |w| w.sunionstore(db, &dst, &keys, &mut |_, _| {}))
    }

    /// SDIFFSTORE.
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn sdiffstore<K: AsRef<[u8]>>(&self, dst: impl AsRef<[u8]>, keys: &[K]) -> Result<i64> {
        let (db, dst, keys) = (self.index(), dst.as_ref().to_vec(), owned(keys));
        self.write(move |w| w.sdiffstore(db, &dst, &keys, &mut |_, _| {}))
    }

    /// SSCAN: one page after `after`; see [`Reader::sscan`] (an empty page for a missing key).
    ///
    /// # Errors
    /// [`Error::WrongType`].
    pub fn sscan(
        &self,
        key: impl AsRef<[u8]>,
        after: Option<&[u8]>,
        count: usize,
        pattern: Option<&[u8]>,
    ) -> Result<ScanPage> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        let after = after.map(<[u8]>::to_vec);
        let pattern = pattern.map(<[u8]>::to_vec);
        self.read(move |r| {
            Ok(
                r.sscan(db, &key, after.as_deref(), count, pattern.as_deref())?
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

    fn strs(v: &[Bytes]) -> Vec<String> {
        v.iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect()
    }

    fn encoding(db: &Db, key: &'static str) -> &'static str {
        db.read(move |r| r.object(0, key.as_bytes()))
            .unwrap()
            .unwrap()
            .encoding
    }

    #[test]
    fn add_remove_count() {
        let (db, _) = open();
        assert_eq!(db.sadd("s", &["a", "b", "a"]).unwrap(), 2);
        assert_eq!(db.sadd("s", &["b", "c"]).unwrap(), 1);
        assert_eq!(db.scard("s").unwrap(), 3);
        assert_eq!(strs(&db.smembers("s").unwrap()), ["a", "b", "c"]);
        assert!(db.sismember("s", "a").unwrap());
        assert!(!db.sismember("s", "z").unwrap());
        assert!(!db.sismember("missing", "a").unwrap());
        assert_eq!(
            db.smismember("s", &["a", "z", "c"]).unwrap(),
            [true, false, true]
        );
        assert_eq!(db.srem("s", &["a", "a", "z"]).unwrap(), 1);
        assert_eq!(db.srem("missing", &["a"]).unwrap(), 0);
        assert_eq!(db.srem("s", &["b", "c"]).unwrap(), 2);
        assert_eq!(
            db.exists(&["s"]).unwrap(),
            0,
            "the last member takes the key"
        );
        assert_eq!(db.scard("s").unwrap(), 0);
    }

    #[test]
    fn wrong_type_everywhere() {
        let (db, _) = open();
        db.set("str", "x").unwrap();
        db.sadd("s", &["1"]).unwrap();
        assert_eq!(db.sadd("str", &["a"]), Err(Error::WrongType));
        assert_eq!(db.srem("str", &["a"]), Err(Error::WrongType));
        assert_eq!(db.scard("str"), Err(Error::WrongType));
        assert_eq!(db.smembers("str"), Err(Error::WrongType));
        assert_eq!(db.spop("str"), Err(Error::WrongType));
        assert_eq!(db.spop_count("str", 0), Err(Error::WrongType));
        assert_eq!(db.srandmember_count("str", 0), Err(Error::WrongType));
        // Every key is checked, whether or not an earlier one is missing.
        assert_eq!(db.sinter(&["missing", "str"]), Err(Error::WrongType));
        assert_eq!(db.sdiff(&["missing", "str"]), Err(Error::WrongType));
        assert_eq!(db.sunion(&["s", "str"]), Err(Error::WrongType));
        assert_eq!(db.sintercard(&["missing", "str"], 0), Err(Error::WrongType));
        assert_eq!(
            db.sinterstore("d", &["missing", "str"]),
            Err(Error::WrongType)
        );
        // SMOVE: a missing source wins over a wrong destination.
        assert_eq!(db.smove("missing", "str", "a"), Ok(false));
        assert_eq!(db.smove("s", "str", "1"), Err(Error::WrongType));
        assert_eq!(db.smove("str", "s", "1"), Err(Error::WrongType));
        assert_eq!(db.smembers("s").unwrap().len(), 1, "nothing moved");
    }

    #[test]
    fn lookups_are_reported_in_order_until_a_wrong_type() {
        let (db, _) = open();
        db.set("str", "x").unwrap();
        db.sadd("s", &["1"]).unwrap();
        let seen = |keys: &'static [&'static str]| {
            db.read(move |r| {
                let mut log = Vec::new();
                let keys: Vec<Bytes> = keys
                    .iter()
                    .map(|k| Bytes::from_static(k.as_bytes()))
                    .collect();
                let res = r.sinter(0, &keys, &mut |k, f| log.push((k.to_vec(), f)));
                Ok((res.is_ok(), log))
            })
            .unwrap()
        };
        let log = |l: &[(&str, bool)]| -> Vec<(Vec<u8>, bool)> {
            l.iter().map(|&(k, f)| (k.as_bytes().to_vec(), f)).collect()
        };
        assert_eq!(
            seen(&["s", "missing"]),
            (true, log(&[("s", true), ("missing", false)]))
        );
        assert_eq!(
            seen(&["missing", "s"]),
            (true, log(&[("missing", false), ("s", true)]))
        );
        assert_eq!(
            seen(&["s", "str", "missing"]),
            (false, log(&[("s", true), ("str", true)]))
        );
    }

    #[test]
    fn encodings_follow_redis() {
        let (db, _) = open();
        db.sadd("i", &["1", "-5", "9223372036854775807"]).unwrap();
        assert_eq!(encoding(&db, "i"), "intset");
        assert_eq!(
            strs(&db.smembers("i").unwrap()),
            ["-5", "1", "9223372036854775807"]
        );
        for (key, odd) in [
            ("a", "01"),
            ("b", "-0"),
            ("c", "+1"),
            ("d", " 1"),
            ("e", "x"),
        ] {
            db.sadd(key, &["1", odd]).unwrap();
            assert_eq!(encoding(&db, key), "hashtable", "{odd:?}");
        }
        // Converted for good: removing the odd member does not go back.
        db.srem("e", &["x"]).unwrap();
        assert_eq!(encoding(&db, "e"), "hashtable");
        let ints: Vec<String> = (0..512).map(|i| i.to_string()).collect();
        db.sadd("big", &ints).unwrap();
        assert_eq!(encoding(&db, "big"), "intset");
        db.sadd("big", &["512"]).unwrap();
        assert_eq!(encoding(&db, "big"), "hashtable");
        db.srem("big", &["512"]).unwrap();
        assert_eq!(encoding(&db, "big"), "hashtable");
        // SMOVE creates the destination from the member.
        db.sadd("src", &["7", "y"]).unwrap();
        db.smove("src", "n1", "7").unwrap();
        db.smove("src", "n2", "y").unwrap();
        assert_eq!(
            (encoding(&db, "n1"), encoding(&db, "n2")),
            ("intset", "hashtable")
        );
        // COPY keeps the encoding.
        db.write(|w| w.copy(0, b"e", 0, b"e2", false)).unwrap();
        assert_eq!(encoding(&db, "e2"), "hashtable");
    }

    #[test]
    fn store_encodings() {
        let (db, _) = open();
        db.sadd("a", &["1", "2", "x"]).unwrap();
        db.sadd("b", &["1", "2"]).unwrap();
        assert_eq!(db.sinterstore("d", &["a", "b"]).unwrap(), 2);
        assert_eq!(encoding(&db, "d"), "intset");
        assert_eq!(db.sunionstore("d", &["a", "b"]).unwrap(), 3);
        assert_eq!(encoding(&db, "d"), "hashtable");
        assert_eq!(db.sdiffstore("d", &["a", "b"]).unwrap(), 1);
        assert_eq!(encoding(&db, "d"), "hashtable");
        // SDIFFSTORE's second algorithm copies the first set: a non-integer in it leaves a
        // hashtable behind even when the result is all integers.
        db.sadd("big", &["x", "1", "2", "3", "4", "5", "6", "7", "8", "9"])
            .unwrap();
        db.sadd("one", &["x"]).unwrap();
        db.sadd("two", &["9"]).unwrap();
        assert_eq!(db.sdiffstore("d", &["big", "one", "two"]).unwrap(), 8);
        assert_eq!(encoding(&db, "d"), "hashtable");
        // ...but its first algorithm only adds the result.
        assert_eq!(db.sdiffstore("d", &["a", "one"]).unwrap(), 2);
        assert_eq!(encoding(&db, "d"), "intset");
    }

    #[test]
    fn algebra() {
        let (db, _) = open();
        db.sadd("a", &["1", "2", "3", "x", "y"]).unwrap();
        db.sadd("b", &["2", "3", "4", "y"]).unwrap();
        db.sadd("c", &["3", "y", "z"]).unwrap();
        assert_eq!(strs(&db.sinter(&["a", "b", "c"]).unwrap()), ["3", "y"]);
        assert_eq!(
            strs(&db.sinter(&["a", "a"]).unwrap()),
            ["1", "2", "3", "x", "y"]
        );
        assert!(db.sinter(&["a", "missing"]).unwrap().is_empty());
        assert_eq!(
            strs(&db.sunion(&["a", "b", "missing", "c"]).unwrap()),
            ["1", "2", "3", "4", "x", "y", "z"]
        );
        assert_eq!(strs(&db.sdiff(&["a", "b", "missing"]).unwrap()), ["1", "x"]);
        assert!(db.sdiff(&["a", "b", "a"]).unwrap().is_empty());
        assert!(db.sdiff(&["missing", "a"]).unwrap().is_empty());
        assert_eq!(db.sintercard(&["a", "b"], 0).unwrap(), 3);
        assert_eq!(db.sintercard(&["a", "b"], 2).unwrap(), 2);
        assert_eq!(db.sintercard(&["a"], 2).unwrap(), 2);
        assert_eq!(db.sintercard(&["a"], 0).unwrap(), 5);
        assert_eq!(db.sintercard(&["a", "missing"], 0).unwrap(), 0);
        // Integer results come in numeric order, as from Redis's intsets.
        db.sadd("n", &["10", "-1", "2"]).unwrap();
        assert_eq!(strs(&db.sunion(&["n"]).unwrap()), ["-1", "2", "10"]);
    }

    #[test]
    fn many_sets_probe_from_rust() {
        let (db, _) = open();
        let mut keys = Vec::new();
        for i in 0..40 {
            let k = format!("k{i}");
            db.sadd(&k, &["common", "x", &format!("only{i}")]).unwrap();
            keys.push(k);
        }
        db.sadd("k0", &["rare"]).unwrap();
        assert_eq!(strs(&db.sinter(&keys).unwrap()), ["common", "x"]);
        assert_eq!(db.sintercard(&keys, 1).unwrap(), 1);
        assert_eq!(strs(&db.sdiff(&keys).unwrap()), ["only0", "rare"]);
        assert_eq!(db.sunion(&keys).unwrap().len(), 43);
        assert_eq!(db.sdiffstore("d", &keys).unwrap(), 2);
        assert_eq!(strs(&db.smembers("d").unwrap()), ["only0", "rare"]);
        assert_eq!(db.sinterstore("d", &keys).unwrap(), 2);
        assert_eq!(strs(&db.smembers("d").unwrap()), ["common", "x"]);
        assert_eq!(db.sunionstore("d", &keys).unwrap(), 43);
    }

    #[test]
    fn store_replaces_any_destination_and_may_read_it() {
        let (db, clock) = open();
        db.sadd("a", &["1", "2", "3"]).unwrap();
        db.sadd("b", &["2", "3", "4"]).unwrap();
        db.set("d", "string").unwrap();
        db.pexpire("d", 10_000, crate::ExpireCond::Always).unwrap();
        assert_eq!(db.sinterstore("d", &["a", "b"]).unwrap(), 2);
        assert_eq!(db.ttl("d").unwrap(), crate::Ttl::Persistent, "a new key");
        assert_eq!(strs(&db.smembers("d").unwrap()), ["2", "3"]);
        // The destination among the sources.
        assert_eq!(db.sunionstore("a", &["a", "b"]).unwrap(), 4);
        assert_eq!(strs(&db.smembers("a").unwrap()), ["1", "2", "3", "4"]);
        assert_eq!(db.sdiffstore("a", &["a", "b"]).unwrap(), 1);
        assert_eq!(strs(&db.smembers("a").unwrap()), ["1"]);
        // An empty result deletes the destination.
        assert_eq!(db.sinterstore("a", &["a", "b"]).unwrap(), 0);
        assert_eq!(db.exists(&["a"]).unwrap(), 0);
        assert_eq!(db.sunionstore("d", &["missing"]).unwrap(), 0);
        assert_eq!(db.exists(&["d"]).unwrap(), 0);
        // An expired source is missing.
        db.sadd("e", &["4"]).unwrap();
        db.pexpire("e", 5, crate::ExpireCond::Always).unwrap();
        clock.advance(5);
        assert_eq!(db.sunionstore("d", &["b", "e"]).unwrap(), 3);
        assert_eq!(db.sinterstore("d", &["b", "e"]).unwrap(), 0);
    }

    #[test]
    fn smove_cases() {
        let (db, _) = open();
        db.sadd("s", &["a", "b"]).unwrap();
        db.sadd("t", &["b"]).unwrap();
        assert!(db.smove("s", "s", "a").unwrap());
        assert!(!db.smove("s", "s", "z").unwrap());
        assert!(!db.smove("s", "t", "z").unwrap());
        assert!(
            db.smove("s", "t", "b").unwrap(),
            "already in the destination"
        );
        assert_eq!(strs(&db.smembers("s").unwrap()), ["a"]);
        assert_eq!(db.scard("t").unwrap(), 1);
        assert!(db.smove("s", "new", "a").unwrap());
        assert_eq!(db.exists(&["s"]).unwrap(), 0, "the emptied source goes");
        assert_eq!(strs(&db.smembers("new").unwrap()), ["a"]);
    }

    #[test]
    fn expired_sets_start_empty() {
        let (db, clock) = open();
        db.sadd("s", &["a", "b"]).unwrap();
        db.pexpire("s", 10, crate::ExpireCond::Always).unwrap();
        clock.advance(10);
        assert_eq!(db.scard("s").unwrap(), 0);
        assert_eq!(db.sadd("s", &["c"]).unwrap(), 1);
        assert_eq!(strs(&db.smembers("s").unwrap()), ["c"]);
        assert_eq!(db.ttl("s").unwrap(), crate::Ttl::Persistent);
    }

    #[test]
    fn pop_and_random() {
        let (db, _) = open();
        let members: Vec<String> = (0..100).map(|i| format!("m{i:03}")).collect();
        db.sadd("s", &members).unwrap();
        let mut counts = std::collections::HashMap::new();
        for _ in 0..2000 {
            let m = db.srandmember("s").unwrap().unwrap();
            *counts.entry(m).or_insert(0) += 1;
        }
        assert!(
            counts.len() > 90,
            "picks spread over the set: {}",
            counts.len()
        );
        let five = db.srandmember_count("s", 5).unwrap();
        assert_eq!(five.iter().collect::<HashSet<_>>().len(), 5);
        let many = db.srandmember_count("s", 60).unwrap();
        assert_eq!(many.iter().collect::<HashSet<_>>().len(), 60);
        assert_eq!(db.srandmember_count("s", 1000).unwrap().len(), 100);
        // 150 draws from 100 members with repeats cover them all with probability ~e^-22 (300
        // draws did so about once in 150 runs).
        let rep = db.srandmember_count("s", -150).unwrap();
        assert_eq!(rep.len(), 150);
        assert!(rep.iter().collect::<HashSet<_>>().len() < 100, "repeats");
        assert_eq!(db.srandmember_count("s", -3).unwrap().len(), 3);
        assert_eq!(
            db.srandmember_count("s", -(MAX_RANDOM_REPEATS as i64) - 1),
            Err(Error::NotInteger)
        );
        assert!(db.srandmember_count("missing", -3).unwrap().is_empty());
        assert_eq!(db.srandmember("missing").unwrap(), None);

        let popped = db.spop_count("s", 10).unwrap();
        assert_eq!(popped.iter().collect::<HashSet<_>>().len(), 10);
        assert_eq!(db.scard("s").unwrap(), 90);
        for m in &popped {
            assert!(!db.sismember("s", m).unwrap());
        }
        let one = db.spop("s").unwrap().unwrap();
        assert!(!db.sismember("s", &one).unwrap());
        let most = db.spop_count("s", 80).unwrap();
        assert_eq!(most.iter().collect::<HashSet<_>>().len(), 80);
        assert_eq!(db.scard("s").unwrap(), 9);
        assert_eq!(db.smembers("s").unwrap().len(), 9);
        assert_eq!(db.spop_count("s", 100).unwrap().len(), 9);
        assert_eq!(db.exists(&["s"]).unwrap(), 0);
        assert_eq!(db.spop("s").unwrap(), None);
        assert!(db.spop_count("s", 3).unwrap().is_empty());
    }

    #[test]
    fn spop_rebuilds_the_encoding_when_few_stay() {
        let (db, _) = open();
        db.sadd("s", &["1", "2", "3", "4", "5", "6", "x"]).unwrap();
        // Pop until only integers are left, with the rebuild strategy (remaining*5 <= count),
        // at its boundary: 1 * 5 <= 5.
        loop {
            db.sadd("t", &["1", "2", "3", "4", "5", "x"]).unwrap();
            let popped = db.spop_count("t", 5).unwrap();
            let left = db.smembers("t").unwrap();
            let want = if strs(&left) == ["x"] {
                "hashtable"
            } else {
                "intset"
            };
            assert_eq!(encoding(&db, "t"), want, "{popped:?}");
            db.del(&["t"]).unwrap();
            if want == "intset" {
                break;
            }
        }
        // A small pop keeps the hashtable.
        db.spop_count("s", 1).unwrap();
        assert_eq!(encoding(&db, "s"), "hashtable");
    }

    #[test]
    fn members_at_walks_from_both_ends() {
        let (db, _) = open();
        let members: Vec<String> = (0..200).map(|i| format!("m{i:03}")).collect();
        db.sadd("s", &members).unwrap();
        for positions in [
            vec![0u64],
            vec![199],
            vec![0, 99, 100, 199],
            vec![3, 50, 120, 121, 180],
            vec![150, 160],
            (0..200).step_by(7).collect(),
        ] {
            let ps = positions.clone();
            let got = db
                .read(move |r| {
                    let kid = r.set_row(0, b"s")?.unwrap().meta.id;
                    r.members_at(kid, 200, &ps)
                })
                .unwrap();
            let want: Vec<String> = positions
                .iter()
                .map(|&p| members[p as usize].clone())
                .collect();
            assert_eq!(strs(&got), want, "{positions:?}");
        }
        for pos in [0, 1, 99, 100, 101, 198, 199] {
            let got = db
                .read(move |r| {
                    let kid = r.set_row(0, b"s")?.unwrap().meta.id;
                    r.member_at(kid, 200, pos)
                })
                .unwrap();
            assert_eq!(got, members[pos as usize].as_bytes());
        }
    }

    #[test]
    fn positions() {
        for (n, k) in [(10, 0), (10, 3), (10, 7), (10, 10), (1, 1), (1000, 999)] {
            let p = distinct_positions(n, k);
            assert_eq!(p.len() as u64, k);
            assert!(p.windows(2).all(|w| w[0] < w[1]));
            assert!(p.iter().all(|&x| x < n));
        }
    }

    #[test]
    fn scan_pages() {
        let (db, _) = open();
        let members: Vec<String> = (0..50).map(|i| format!("m{i:02}")).collect();
        db.sadd("s", &members).unwrap();
        db.sadd("s", &["other"]).unwrap();
        let mut got = Vec::new();
        let mut after: Option<Bytes> = None;
        loop {
            let page = db.sscan("s", after.as_deref(), 7, Some(b"m*")).unwrap();
            assert!(page.keys.len() <= 7);
            got.extend(page.keys);
            match page.next {
                Some(n) => after = Some(n),
                None => break,
            }
        }
        assert_eq!(strs(&got), members);
        // Exactly a page's worth: no empty trailing page.
        let page = db.sscan("s", None, 51, None).unwrap();
        assert_eq!((page.keys.len(), page.next), (51, None));
        // An intset comes whole, whatever the count, in numeric order.
        db.sadd("i", &["10", "9", "-3"]).unwrap();
        let page = db.sscan("i", None, 1, None).unwrap();
        assert_eq!(
            (strs(&page.keys), page.next),
            (vec!["-3".to_string(), "9".into(), "10".into()], None)
        );
        let page = db.sscan("i", None, 1, Some(b"1*")).unwrap();
        assert_eq!(strs(&page.keys), ["10"]);
        assert_eq!(
            db.sscan("missing", None, 10, None).unwrap(),
            ScanPage::default()
        );
    }
}
