//! Sorted-set writes: ZADD and friends, removals, pops, STORE destinations; each keeps the
//! set's rank rows up to date through `rank.rs`.

use super::*;
use crate::backend::sqlite::sql::zset as q;
use crate::backend::sqlite::stmt::prepare;

thread_local! {
    /// How often ZADD's recent members on this writer were already in their set: a saturating
    /// count, up for each found, down for each added.
    static ZADD_FOUND: std::cell::Cell<u8> = const { std::cell::Cell::new(0) };
}

/// Whether ZADD should look a member up before adding it: yes when recent members were mostly
/// there already (score updates: a failed INSERT would be a wasted seek), no when they were
/// mostly new (an INSERT that succeeds spares the lookup).
pub(super) fn zadd_finds_members() -> bool {
    ZADD_FOUND.get() >= 2
}

/// Records whether ZADD found a member already in its set.
pub(super) fn zadd_found(found: bool) {
    let n = ZADD_FOUND.get();
    ZADD_FOUND.set(if found {
        (n + 1).min(3)
    } else {
        n.saturating_sub(1)
    });
}

/// A sorted set being written: its key row's state, kept up to date as members change.
pub(super) struct ZW<'k> {
    db: u32,
    key: &'k [u8],
    kid: i64,
    /// The key row as the write read it; `None` for a new set (its row is written when it is
    /// done).
    row: Option<KeyMeta>,
    count: i64,
    /// Whether rank blocks are being maintained member by member (the set had them when the
    /// write began).
    blocks: bool,
    /// Redis's skiplist encoding (the key row's `head`).
    skiplist: bool,
    changed: bool,
}

impl ZW<'_> {
    pub(super) fn meta(&self) -> ZMeta {
        ZMeta {
            kid: self.kid,
            count: self.count,
            blocks: self.blocks,
        }
    }
}

impl<'c> Writer<'c> {
    /// Opens the sorted set at `key` for writing: `None` when missing (an expired key is
    /// deleted first); [`Error::WrongType`] for another type.
    pub(super) fn zopen<'k>(&mut self, db: u32, key: &'k [u8]) -> Result<Option<ZW<'k>>> {
        Ok(self.zopen_probing(db, key, None)?.map(|(z, _)| z))
    }

    /// [`Writer::zopen`], and with `member` that member's score, read in the same statement.
    pub(super) fn zopen_probing<'k>(
        &mut self,
        db: u32,
        key: &'k [u8],
        member: Option<&[u8]>,
    ) -> Result<Option<(ZW<'k>, Option<f64>)>> {
        // `meta_for_write_of` with the encoding flag read in the same lookup (writes are the
        // hot path).
        let row = |r: &Row<'_>| {
            Ok((
                KeyMeta {
                    id: r.get(0)?,
                    kind: KeyType::ZSet,
                    expire_at: r.get(2)?,
                    version: r.get(3)?,
                    count: r.get(4)?,
                    mtime: r.get(5)?,
                },
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(6)?,
                r.get::<_, Option<f64>>(7)?,
            ))
        };
        let row = if let Some((m, head)) = self.pending_row(db, key) {
            // A key row kept pending (a run of writes to this set): no lookup of it.
            let score = match member {
                Some(member) if m.kind == KeyType::ZSet => prepare(self.conn, q::ZSCORE)?
                    .query_row((m.id, member), |r| r.get::<_, f64>(0))
                    .optional()?,
                _ => None,
            };
            Some((m, m.kind.code(), head, score))
        } else {
            match member {
                None => prepare(self.conn, q::KEY_ROW)?
                    .query_row((db, key), row)
                    .optional()?,
                Some(member) => prepare(self.conn, q::KEY_ROW_WITH_SCORE)?
                    .query_row((db, key, member), row)
                    .optional()?,
            }
        };
        let Some((mut m, code, head, score)) = row else {
            return Ok(None);
        };
        m.kind = KeyType::from_code(code)?;
        if !self.is_live(&m) {
            self.delete_expired(db, key, &m)?;
            return Ok(None);
        }
        if m.kind != KeyType::ZSet {
            return Err(Error::WrongType);
        }
        let skiplist = head != 0;
        // Up to half the threshold a set has no rank rows, and no copy is trusted.
        let copy = if m.count > self.rank.threshold / 2 {
            self.z_copy_open(m.id, m.version, m.count)?
        } else {
            None
        };
        let blocks = match copy {
            Some(blocks) => blocks,
            None => self.z_has_blocks(m.id, m.count)?,
        };
        let z = ZW {
            db,
            key,
            kid: m.id,
            row: Some(m),
            count: m.count,
            blocks,
            skiplist,
            changed: false,
        };
        Ok(Some((z, score)))
    }

    /// A new, empty sorted set at `key` (whose key row does not exist).
    pub(super) fn zcreate<'k>(&mut self, db: u32, key: &'k [u8]) -> ZW<'k> {
        let kid = self.next_version();
        ZW {
            db,
            key,
            kid,
            row: None,
            count: 0,
            blocks: false,
            skiplist: false,
            changed: false,
        }
    }

    /// Writes the key row after changes: count, version, mtime and encoding; deletes the key
    /// when the set is empty; creates or drops rank blocks when the count crossed the threshold.
    pub(super) fn zfinish(&mut self, z: &ZW<'_>) -> Result<()> {
        if !z.changed {
            return Ok(());
        }
        let t = self.rank.threshold;
        if z.count == 0 {
            self.z_copy_drop(z.kid);
            prepare(self.conn, q::DELETE_RANK_ROWS)?.execute([z.kid])?;
            if let Some(m) = &z.row {
                self.delete_key_row(z.db, z.key, m.expire_at.is_some())?;
            }
            return Ok(());
        }
        let mut blocks = z.blocks;
        if z.blocks && z.count <= t / 2 {
            self.z_copy_drop(z.kid);
            prepare(self.conn, q::DELETE_RANK_ROWS)?.execute([z.kid])?;
            blocks = false;
        } else if !z.blocks && z.count > t {
            self.z_build_blocks(z.kid, z.count)?;
            blocks = true;
        }
        let version = if let Some(m) = &z.row {
            // Kept pending: a run of writes to one set rewrites its key row once.
            self.save_row_later(z.db, z.key, m, z.count, i64::from(z.skiplist))?
        } else {
            let version = self.next_version();
            prepare(self.conn, q::KEY_INSERT)?.execute((
                z.db,
                z.key,
                z.kid,
                KeyType::ZSet.code(),
                version,
                z.count,
                self.now,
                i64::from(z.skiplist),
            ))?;
            self.count_new_key(z.db, None);
            self.note_new(z.db, z.key);
            version
        };
        if blocks {
            self.z_copy_stamp(z.kid, version);
        } else if z.count > t / 2 {
            self.z_copy_none(z.kid, version);
        }
        Ok(())
    }

    /// Adds a member that is not in the set.
    pub(super) fn z_insert(&mut self, z: &mut ZW<'_>, member: &[u8], score: f64) -> Result<()> {
        prepare(self.conn, q::INSERT_MEMBER)?.execute((z.kid, member, score))?;
        self.z_inserted(z, member, score)
    }

    /// Adds the member if it is not in the set; whether it was added. (Most ZADDs add: one
    /// statement instead of a lookup and an insert.)
    pub(super) fn z_try_insert(
        &mut self,
        z: &mut ZW<'_>,
        member: &[u8],
        score: f64,
    ) -> Result<bool> {
        let n = prepare(self.conn, q::INSERT_MEMBER_IF_NEW)?.execute((z.kid, member, score))?;
        if n == 0 {
            return Ok(false);
        }
        self.z_inserted(z, member, score)?;
        Ok(true)
    }

    /// The bookkeeping of a member just added.
    pub(super) fn z_inserted(&mut self, z: &mut ZW<'_>, member: &[u8], score: f64) -> Result<()> {
        z.count += 1;
        z.changed = true;
        if z.count > LISTPACK_ENTRIES || member.len() > LISTPACK_VALUE {
            z.skiplist = true;
        }
        if z.blocks {
            self.z_adjust(
                z.kid,
                &Pos::new(score, Bytes::copy_from_slice(member)),
                1,
                z.count,
            )?;
        }
        Ok(())
    }

    /// Sets the score of `member`, if the set has it, in one statement; the score it had
    /// (`None`: no such member, nothing written). The rank rows are the caller's
    /// ([`Writer::z_rescored`]), and so is a score that did not change (the row was rewritten
    /// with the same value: nothing else is).
    pub(super) fn z_set_score(
        &mut self,
        z: &ZW<'_>,
        member: &[u8],
        new: f64,
    ) -> Result<Option<f64>> {
        crate::types::counter::sql_rescore_began();
        let n = prepare(self.conn, q::SET_SCORE_SEEN)?.execute((z.kid, member, new))?;
        Ok(crate::types::counter::sql_rescored().filter(|_| n == 1))
    }

    /// Changes a member's score.
    pub(super) fn z_rescore(
        &mut self,
        z: &mut ZW<'_>,
        member: &[u8],
        old: f64,
        new: f64,
    ) -> Result<()> {
        // One UPDATE: the score index's entry moves with the row.
        prepare(self.conn, q::SET_SCORE)?.execute((z.kid, member, new))?;
        self.z_rescored(z, member, old, new)
    }

    /// The bookkeeping of a member whose score changed from `old` to `new` in SQL: the key row
    /// and the rank rows.
    pub(super) fn z_rescored(
        &mut self,
        z: &mut ZW<'_>,
        member: &[u8],
        old: f64,
        new: f64,
    ) -> Result<()> {
        z.changed = true;
        if !z.blocks {
            return Ok(());
        }
        // The member left the block and the run holding `from` and joined those holding `to`;
        // inside one block (or run) the two changes cancel. Every count is right before any
        // block or run is split or merged: a split reads the members.
        let m = Bytes::copy_from_slice(member);
        let (from, to) = (Pos::new(old, m.clone()), Pos::new(new, m));
        let [(a0, an0), (b0, bn0), (a1, an1), (b1, bn1)] =
            self.z_blks_at(z.kid, [(0, &from), (0, &to), (1, &from), (1, &to)])?;
        let (moved0, moved1) = (a0 != b0, a1 != b1);
        let (an0, bn0) = if moved0 {
            (an0 - 1, bn0 + 1)
        } else {
            (an0, bn0)
        };
        let (an1, bn1) = if moved1 {
            (an1 - 1, bn1 + 1)
        } else {
            (an1, bn1)
        };
        let mut rows = Vec::with_capacity(4);
        if moved0 {
            rows.extend([(0, &a0, an0), (0, &b0, bn0)]);
        }
        if moved1 {
            rows.extend([(1, &a1, an1), (1, &b1, bn1)]);
        }
        self.z_blk_set_all(z.kid, &rows)?;
        self.z_rebalance_at(z.kid, &from, an0, an1, z.count)?;
        self.z_rebalance_at(z.kid, &to, bn0, bn1, z.count)
    }

    /// Removes a member; its score if it was there.
    pub(super) fn z_remove(&mut self, z: &mut ZW<'_>, member: &[u8]) -> Result<Option<f64>> {
        let score = self.z_score_of(z.kid, member)?;
        if let Some(s) = score {
            prepare(self.conn, q::DELETE_MEMBER)?.execute((z.kid, member))?;
            z.count -= 1;
            z.changed = true;
            if z.blocks {
                self.z_adjust(
                    z.kid,
                    &Pos::new(s, Bytes::copy_from_slice(member)),
                    -1,
                    z.count,
                )?;
            }
        }
        Ok(score)
    }

    /// Removes every member in `iv`; how many.
    pub(super) fn z_remove_interval(&mut self, z: &mut ZW<'_>, iv: &Interval) -> Result<i64> {
        let lo = &iv.lo;
        let removed = match &iv.hi {
            None => {
                prepare(self.conn, q::DELETE_FROM)?.execute((z.kid, lo.score, &lo.member[..]))?
            }
            Some(hi) => prepare(self.conn, q::DELETE_BETWEEN)?.execute((
                z.kid,
                lo.score,
                &lo.member[..],
                hi.score,
                &hi.member[..],
            ))?,
        } as i64;
        if removed == 0 {
            return Ok(0);
        }
        z.count -= removed;
        z.changed = true;
        if z.blocks {
            // Blocks (and level-1 runs) starting inside the interval lost their first members;
            // what is left of them now follows the block (and run) holding `lo`, which are
            // recounted: the block from its members, the run from its blocks.
            let (block, _) = self.z_blk_at(z.kid, 0, lo)?;
            let (run, _) = self.z_blk_at(z.kid, 1, lo)?;
            self.z_blk_delete_after(z.kid, 0, &block, iv.hi.as_ref())?;
            self.z_blk_delete_after(z.kid, 1, &run, iv.hi.as_ref())?;
            let n = self.z_block_recount(z.kid, &block)?;
            self.z_blk_set(z.kid, 0, &block, n)?;
            let rn = self.z_run_recount(z.kid, &run)?;
            self.z_blk_set(z.kid, 1, &run, rn)?;
            self.z_rebalance_block(z.kid, block, n)?;
            self.z_rebalance_run_at(z.kid, lo)?;
        }
        Ok(removed)
    }
}

impl<'c> Writer<'c> {
    // --- commands ------------------------------------------------------------------------

    /// ZADD (and ZINCRBY, which is ZADD with `incr`).
    ///
    /// # Errors
    /// [`Error::WrongType`] for a key of another type.
    pub fn zadd(
        &mut self,
        db: u32,
        key: &[u8],
        opts: ZAddOptions,
        pairs: &[(f64, Bytes)],
    ) -> Result<ZAddOutcome> {
        // Without NX, XX, GT, LT or INCR the new score does not depend on the old one.
        let plain = opts.cond == ZAddCond::Always && opts.cmp == ZAddCmp::Any && !opts.incr;
        // When members are mostly found (score updates), the first one's score is read with the
        // key row, unless a plain ZADD reads it as it writes the new one.
        let probe = pairs
            .first()
            .filter(|_| zadd_finds_members() && !plain)
            .map(|(_, m)| &m[..]);
        let (mut z, mut first) = match self.zopen_probing(db, key, probe)? {
            Some((z, score)) => (z, probe.map(|_| score)),
            None if opts.cond == ZAddCond::Xx => {
                return Ok(if opts.incr {
                    ZAddOutcome::Score(None)
                } else {
                    ZAddOutcome::Count(0)
                });
            }
            None => {
                let mut z = self.zcreate(db, key);
                // Redis sizes a new set by the command's pairs.
                z.skiplist = pairs.len() as i64 > LISTPACK_ENTRIES
                    || pairs.iter().any(|(_, m)| m.len() > LISTPACK_VALUE);
                (z, None)
            }
        };
        let (mut added, mut updated) = (0i64, 0i64);
        let mut last_score = None;
        for (score, member) in pairs {
            let mut score = *score;
            // The first member's score if it was read already.
            let known = first.take();
            // Plain ZADD to a set whose members are mostly there already: one statement finds
            // the member and sets its score, reading the old one (a new member then costs a
            // failed seek, as a lookup first would).
            if plain && known.is_none() && z.row.is_some() && zadd_finds_members() {
                match self.z_set_score(&z, member, score)? {
                    Some(cur) => {
                        zadd_found(true);
                        last_score = Some(score);
                        if score != cur {
                            self.z_rescored(&mut z, member, cur, score)?;
                            updated += 1;
                        }
                    }
                    None => {
                        zadd_found(false);
                        self.z_insert(&mut z, member, score)?;
                        last_score = Some(score);
                        added += 1;
                    }
                }
                continue;
            }
            // A new member is added whatever the options but XX (with INCR its score is the
            // increment): when members have mostly been new, by trying to insert first.
            if opts.cond != ZAddCond::Xx
                && known.is_none()
                && !(z.row.is_some() && zadd_finds_members())
                && self.z_try_insert(&mut z, member, score)?
            {
                zadd_found(false);
                last_score = Some(score);
                added += 1;
                continue;
            }
            let cur = match known {
                Some(cur) => cur,
                None => self.z_score_of(z.kid, member)?,
            };
            zadd_found(cur.is_some());
            match cur {
                Some(cur) => {
                    if opts.cond == ZAddCond::Nx {
                        continue;
                    }
                    if opts.incr {
                        score += cur;
                        if score.is_nan() {
                            return Ok(ZAddOutcome::Nan);
                        }
                    }
                    if (opts.cmp == ZAddCmp::Lt && score >= cur)
                        || (opts.cmp == ZAddCmp::Gt && score <= cur)
                    {
                        continue;
                    }
                    last_score = Some(score);
                    if score != cur {
                        self.z_rescore(&mut z, member, cur, score)?;
                        updated += 1;
                    }
                }
                None => {
                    if opts.cond == ZAddCond::Xx {
                        continue;
                    }
                    self.z_insert(&mut z, member, score)?;
                    last_score = Some(score);
                    added += 1;
                }
            }
        }
        self.zfinish(&z)?;
        Ok(if opts.incr {
            ZAddOutcome::Score(last_score)
        } else if opts.ch {
            ZAddOutcome::Count(added + updated)
        } else {
            ZAddOutcome::Count(added)
        })
    }

    /// ZREM: how many of `members` were removed.
    ///
    /// # Errors
    /// [`Error::WrongType`] for a key of another type.
    pub fn zrem(&mut self, db: u32, key: &[u8], members: &[Bytes]) -> Result<i64> {
        let Some(mut z) = self.zopen(db, key)? else {
            return Ok(0);
        };
        let mut n = 0;
        for m in members {
            if self.z_remove(&mut z, m)?.is_some() {
                n += 1;
            }
            if z.count == 0 {
                break;
            }
        }
        self.zfinish(&z)?;
        Ok(n)
    }

    /// ZREMRANGEBYRANK / ZREMRANGEBYSCORE / ZREMRANGEBYLEX: how many members were removed.
    ///
    /// # Errors
    /// [`Error::WrongType`] for a key of another type.
    pub fn zremrange(&mut self, db: u32, key: &[u8], by: &ZRangeBy) -> Result<i64> {
        let Some(mut z) = self.zopen(db, key)? else {
            return Ok(0);
        };
        let Some(iv) = self.z_interval_of(z.meta(), by)? else {
            return Ok(0);
        };
        let n = self.z_remove_interval(&mut z, &iv)?;
        self.zfinish(&z)?;
        Ok(n)
    }

    /// ZPOPMIN / ZPOPMAX (`max`): removes and returns up to `count` members from one end.
    ///
    /// # Errors
    /// [`Error::WrongType`] for a key of another type.
    pub fn zpop(&mut self, db: u32, key: &[u8], max: bool, count: i64) -> Result<Vec<Scored>> {
        let Some(mut z) = self.zopen(db, key)? else {
            return Ok(Vec::new());
        };
        let out = self.z_pop_from(&mut z, max, count)?;
        self.zfinish(&z)?;
        Ok(out)
    }

    pub(super) fn z_pop_from(
        &mut self,
        z: &mut ZW<'_>,
        max: bool,
        count: i64,
    ) -> Result<Vec<Scored>> {
        if count <= 0 {
            return Ok(Vec::new());
        }
        let all = Interval {
            lo: Pos::bottom(),
            hi: None,
        };
        let out = self.z_fetch(z.kid, &all, max, 0, count)?;
        if out.len() <= 16 {
            for (m, _) in &out {
                self.z_remove(z, m)?;
            }
        } else {
            let last = &out[out.len() - 1];
            let iv = if max {
                Interval {
                    lo: Pos::new(last.1, last.0.clone()),
                    hi: None,
                }
            } else {
                Interval {
                    lo: Pos::bottom(),
                    hi: Some(Pos::new(last.1, last.0.clone()).successor()),
                }
            };
            self.z_remove_interval(z, &iv)?;
        }
        Ok(out)
    }

    /// ZMPOP (and the blocking pops): pops up to `count` members from the first non-empty
    /// sorted set among `keys`; returns its key and the members. With `skip_wrong_type` a key of
    /// another type is passed over (a blocked client being served) instead of failing.
    ///
    /// # Errors
    /// [`Error::WrongType`] for a key of another type met before a non-empty set.
    pub fn zmpop(
        &mut self,
        db: u32,
        keys: &[Bytes],
        max: bool,
        count: i64,
        skip_wrong_type: bool,
    ) -> Result<Option<(Bytes, Vec<Scored>)>> {
        for k in keys {
            let z = match self.zopen(db, k) {
                Ok(z) => z,
                Err(Error::WrongType) if skip_wrong_type => continue,
                Err(e) => return Err(e),
            };
            if let Some(mut z) = z {
                let out = self.z_pop_from(&mut z, max, count)?;
                self.zfinish(&z)?;
                return Ok(Some((k.clone(), out)));
            }
        }
        Ok(None)
    }

    /// Replaces whatever is at `dst` with a sorted set of `items` (deletes it when `items` is
    /// empty); returns the new size. The encoding follows the content, as Redis's
    /// `zsetConvertToListpackIfNeeded` decides for stored results.
    pub(crate) fn z_store(&mut self, db: u32, dst: &[u8], items: &[Scored]) -> Result<i64> {
        let existed = match self.meta_for_write(db, dst)? {
            Some(m) => {
                self.delete_key(db, dst, &m)?;
                true
            }
            None => false,
        };
        if items.is_empty() {
            return Ok(0);
        }
        let mut z = self.zcreate(db, dst);
        {
            let mut st = prepare(self.conn, q::INSERT_MEMBER)?;
            for (m, s) in items {
                st.execute((z.kid, &m[..], *s))?;
            }
        }
        z.count = items.len() as i64;
        z.changed = true;
        z.skiplist =
            z.count > LISTPACK_ENTRIES || items.iter().any(|(m, _)| m.len() > LISTPACK_VALUE);
        self.replacing(existed, |w| w.zfinish(&z))?;
        Ok(z.count)
    }

    /// Replaces whatever is at `dst` with a sorted set of `items` (GEOSEARCHSTORE, the STORE
    /// options of GEORADIUS), or deletes it when `items` is empty; returns the stored size.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn zstore(&mut self, db: u32, dst: &[u8], items: &[Scored]) -> Result<i64> {
        self.z_store(db, dst, items)
    }

    /// ZRANGESTORE: stores the range of `src` at `dst`; returns whether `src` existed and the
    /// stored size.
    ///
    /// # Errors
    /// [`Error::WrongType`] when `src` holds another type.
    pub fn zrangestore(
        &mut self,
        db: u32,
        dst: &[u8],
        src: &[u8],
        spec: &ZRange,
    ) -> Result<(bool, i64)> {
        let items = self.zrange(db, src, spec)?;
        let found = items.is_some();
        let n = self.z_store(db, dst, &items.unwrap_or_default())?;
        Ok((found, n))
    }

    /// ZUNIONSTORE / ZINTERSTORE / ZDIFFSTORE: the size of the stored result.
    ///
    /// # Errors
    /// [`Error::WrongType`] when an input holds neither a sorted set nor a set.
    pub fn zsetop_store(
        &mut self,
        db: u32,
        dst: &[u8],
        op: SetOp,
        keys: &[Bytes],
        combine: &Combine,
        seen: &mut dyn FnMut(&[u8], bool),
    ) -> Result<i64> {
        let items = self.zsetop(db, op, keys, combine, seen)?;
        self.z_store(db, dst, &items)
    }

    /// The rank rows of the set at `key`: (level, score, member, n), in order. For tests.
    ///
    /// # Errors
    /// Storage errors only.
    #[doc(hidden)]
    pub fn zrank_rows(&self, db: u32, key: &[u8]) -> Result<Vec<(i64, f64, Bytes, i64)>> {
        flush_pending(self.conn)?; // it reads rank counts
        let Some(z) = self.zmeta(db, key)? else {
            return Ok(Vec::new());
        };
        let mut st = prepare(self.conn, q::RANK_ROWS)?;
        let rows = st.query_map([z.kid], |r| {
            Ok((r.get(0)?, r.get(1)?, blob(r, 2)?, r.get(3)?))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Checks the rank blocks of the set at `key` against its members: every block's count,
    /// the first block's start, the block sizes and the key row's count; and, on the writer's
    /// connection, the writer's copy of them. For tests.
    ///
    /// # Errors
    /// [`Error::Storage`] describing the first inconsistency.
    #[doc(hidden)]
    pub fn zcheck(&self, db: u32, key: &[u8]) -> Result<()> {
        flush_pending(self.conn)?; // it reads rank counts
        let Some(z) = self.zmeta(db, key)? else {
            return Ok(());
        };
        let bad = |m: String| Err(Error::Storage(format!("zset {key:?}: {m}")));
        let actual: i64 = prepare(self.conn, q::MEMBER_COUNT)?.query_row([z.kid], |r| r.get(0))?;
        if actual != z.count {
            return bad(format!("count {} but {actual} members", z.count));
        }
        let level = |lvl: i64| -> Result<Vec<(Pos, i64)>> {
            let mut st = prepare(self.conn, q::RANK_LEVEL)?;
            let rows = st.query_map((z.kid, lvl), |r| Ok((pos_row(r)?, r.get(2)?)))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        };
        let (blocks, runs) = (level(0)?, level(1)?);
        let t = self.rank.threshold;
        if let Some(m) = self.meta(db, key)? {
            // On the writer's own connection: its copy of the rows, if it trusts one, is exact.
            self.z_copy_check(z.kid, m.version)?;
        }
        if !z.blocks() {
            if !blocks.is_empty() || !runs.is_empty() {
                return bad(format!(
                    "{} blocks, {} runs, none expected",
                    blocks.len(),
                    runs.len()
                ));
            }
            if z.count > t {
                return bad(format!("{} members and no blocks", z.count));
            }
            return Ok(());
        }
        if z.count <= t / 2 {
            return bad(format!("blocks kept at {} members", z.count));
        }
        let direct = ZMeta {
            kid: z.kid,
            count: 0,
            blocks: false,
        };
        let (b, sz) = (self.rank.block, self.rank.run());
        for (lvl, rows, target) in [(0, &blocks, b), (1, &runs, sz)] {
            if rows.first().map(|r| &r.0) != Some(&Pos::bottom()) {
                return bad(format!("level {lvl} does not start at the bottom"));
            }
            let mut sum = 0;
            for (i, (start, n)) in rows.iter().enumerate() {
                let real = self.z_count_in(
                    direct,
                    &Interval {
                        lo: start.clone(),
                        hi: rows.get(i + 1).map(|x| x.0.clone()),
                    },
                )?;
                if real != *n {
                    return bad(format!("level {lvl} row {i} says {n} but holds {real}"));
                }
                if *n > 2 * target || (rows.len() > 1 && *n < target / 2) {
                    return bad(format!("level {lvl} row {i} holds {n} (target {target})"));
                }
                sum += n;
            }
            if sum != z.count {
                return bad(format!("level {lvl} sums to {sum}, count {}", z.count));
            }
        }
        for (start, _) in &runs {
            if !blocks.iter().any(|(p, _)| p == start) {
                return bad(format!("a run starts at {start:?}, where no block does"));
            }
        }
        Ok(())
    }
}
