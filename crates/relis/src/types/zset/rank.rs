//! Rank rows: the writer's in-memory copy of each large set's rows, its pending counts, and
//! the maintenance of blocks and runs (adjust, split, merge, build) as members change.

use super::*;
use crate::backend::sqlite::sql::zset_rank as q;
use crate::backend::sqlite::stmt::Conn;

// The writer's copy of the rank rows. Every rank row a write adjusts is first found by a
// "last row at or before p" lookup; as an SQL SELECT that is a B-tree seek plus a statement,
// a fifth of a score update's cost. Only the writer writes the rows, so it keeps a copy of each
// large set's rows in memory, with their rowids, and answers those lookups from it. Rows are
// added and deleted in SQL first, then in the copy; count changes go to the copy and stay
// pending there until something reads the rows ("Pending counts", below). SQL is the truth
// for everyone else: readers, and the writer's own splits and merges, read it once the pending
// counts are written. For a set between half the threshold and the threshold a copy may also
// record that the set has no rows (which would otherwise take a probe of `relis_zrank` per
// write).
//
// A copy is only trusted while the set's key row still has the version the writer gave it when
// it last finished a write to the set. A write that changes rank rows ends by giving the key
// row a fresh version (the counter never goes back, not even when a transaction is rolled
// back); a copy is marked unverified before its set's rows change and stamped only once its
// write has rewritten the key row. So whatever undid a write (a savepoint rolled back, a failed
// group commit, SQLite rolling back by itself) left the key row at a version the copy does not
// have: the copy is dropped when the next write opens the set (its pending counts, which are
// the rolled-back work's, were discarded with the rollback), and read again from SQL when next
// needed. User SQL cannot write `relis_zrank` (the sandbox's authorizer); the other writers of
// rank rows delete them with the key (kids are never reused) or copy them to a new kid.
//
// The copies live in the state of the writer's connection (`Conn::state`), which the writer
// thread keeps for its whole life; no other connection has any.

/// A rank row's start as a sort key, in Redis's order: the score (`-0` as `0`) as bits that
/// sort like the number, then the member's bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct RankKey(u64, Bytes);

/// `score`'s bits, flipped so that they sort like the numbers (`-0` as `0`; never NaN).
pub(super) fn score_bits(score: f64) -> u64 {
    let bits = if score == 0.0 { 0 } else { score.to_bits() };
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

impl RankKey {
    pub(super) fn of(p: &Pos) -> RankKey {
        RankKey(score_bits(p.score), p.member.clone())
    }

    pub(super) fn pos(&self) -> Pos {
        let bits = if self.0 >> 63 == 1 {
            self.0 & !(1 << 63)
        } else {
            !self.0
        };
        Pos::new(f64::from_bits(bits), self.1.clone())
    }

    pub(super) fn cmp_to(&self, bits: u64, member: &[u8]) -> std::cmp::Ordering {
        self.0.cmp(&bits).then_with(|| self.1[..].cmp(member))
    }
}

/// A rank row in the writer's copy: its start, its count and its rowid (count changes are
/// written by rowid).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct RankRow {
    start: RankKey,
    n: i64,
    id: i64,
}

/// One level of a set's rank rows, sorted by start (a few hundred rows for a million members:
/// binary searches, and a rare insertion or removal moves the rest).
#[derive(Clone, Debug, Default)]
pub(super) struct RankLevel(Vec<RankRow>);

impl RankLevel {
    /// Where a row starting at `p` is, or would go.
    pub(super) fn find(&self, p: &Pos) -> std::result::Result<usize, usize> {
        let bits = score_bits(p.score);
        self.0.binary_search_by(|r| r.start.cmp_to(bits, &p.member))
    }

    /// The number of rows starting before `p`, or at it too if `inclusive` (`None`: all rows).
    pub(super) fn upto(&self, p: Option<&Pos>, inclusive: bool) -> usize {
        match p {
            None => self.0.len(),
            Some(p) => match self.find(p) {
                Ok(i) if inclusive => i + 1,
                Ok(i) | Err(i) => i,
            },
        }
    }

    /// The row holding `p`: the last starting at or before it.
    pub(super) fn holding(&self, p: &Pos) -> Option<(Pos, i64)> {
        let i = self.upto(Some(p), true).checked_sub(1)?;
        let r = &self.0[i];
        Some((r.start.pos(), r.n))
    }

    /// Sets the count of the row starting at `start`; its rowid, if there is one.
    pub(super) fn set(&mut self, start: &Pos, n: i64) -> Option<i64> {
        let i = self.find(start).ok()?;
        self.0[i].n = n;
        Some(self.0[i].id)
    }

    pub(super) fn insert(&mut self, start: &Pos, n: i64, id: i64) {
        let row = RankRow {
            start: RankKey::of(start),
            n,
            id,
        };
        match self.find(start) {
            Ok(i) => self.0[i] = row,
            Err(i) => self.0.insert(i, row),
        }
    }

    pub(super) fn remove(&mut self, start: &Pos) {
        if let Ok(i) = self.find(start) {
            self.0.remove(i);
        }
    }

    /// Removes the rows after `start` and before `hi` (all after it: `None`).
    pub(super) fn remove_after(&mut self, start: &Pos, hi: Option<&Pos>) {
        let from = self.upto(Some(start), true);
        let to = self.upto(hi, false).max(from);
        self.0.drain(from..to);
    }

    pub(super) fn total(&self) -> i64 {
        self.0.iter().map(|r| r.n).sum()
    }

    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    pub(super) fn rows(&self) -> Vec<(Pos, i64, i64)> {
        self.0.iter().map(|r| (r.start.pos(), r.n, r.id)).collect()
    }
}

/// The rank rows of one sorted set, both levels.
#[derive(Debug, Default)]
pub(super) struct RankCopy {
    /// The key row's version this copy is known to match; `None` while a write changes it.
    version: Option<i64>,
    levels: [RankLevel; 2],
}

impl RankCopy {
    pub(super) fn rows(&self) -> usize {
        self.levels[0].len() + self.levels[1].len()
    }
}

/// The copies the writer keeps in its connection's state (see [`Conn::state`]).
#[derive(Default)]
pub(super) struct RankCopies {
    sets: FxHashMap<i64, RankCopy>,
    /// Counts changed in copies and not yet written to their rows: rowid -> (set, count). See
    /// "Pending counts" below.
    pending: FxHashMap<i64, (i64, i64)>,
}

/// At most this many rank rows are kept in copies (about 10 MB: the rows of a 16M-member set);
/// loading a set past it drops the others.
pub(super) const COPY_ROWS: usize = 1 << 16;

/// At most about this many copies are kept; past it, those recording that a set has no rank
/// rows are dropped.
pub(super) const COPY_SETS: usize = 4096;

/// Runs `f` on the writer's copies, kept in `conn`'s state (made empty on first use).
pub(super) fn with_copies<R>(conn: &Conn<'_>, f: impl FnOnce(&mut RankCopies) -> R) -> R {
    conn.state().with(f)
}

// Pending counts. Most writes to a large set change the counts of a block and a run, and do
// nothing else to its rank rows; the writer changes them in its copy and writes them to their
// rows (by rowid) when something is about to read them: before its group transaction commits,
// before a savepoint opens, and before SQL on its connection reads rank rows (splits, merges,
// ranks asked inside a transaction or script, COPY, user SQL). A count changed several times in
// one group is written once, and blocks or runs that many writes touch (scores that grow with
// time, a small set) cost one row write per group. Pending counts always belong to work that
// has not been rolled back: a savepoint opens with none, so a rollback to it or of the whole
// transaction discards them with the copies they were made in ([`discard_pending`]). Rowids
// are never reused (AUTOINCREMENT), so a pending count of a row deleted since changes nothing.

/// Writes the pending rank counts of `conn` (the writer's connection; on any other nothing is
/// pending) to their rows.
///
/// # Errors
/// A storage error; the counts stay pending, and the caller's transaction must fail.
pub(crate) fn flush_pending(conn: &Conn<'_>) -> Result<()> {
    let mut rows: Vec<(i64, i64)> = conn
        .state()
        .existing(|c: &mut RankCopies| c.pending.iter().map(|(&id, &(_, n))| (id, n)).collect())
        .unwrap_or_default();
    if rows.is_empty() {
        return Ok(());
    }
    // In rowid order: neighbouring rows share pages.
    rows.sort_unstable();
    let mut st = crate::backend::sqlite::stmt::prepare(conn, q::COUNT_SET_BY_ID)?;
    for (id, n) in rows {
        st.execute((id, n))?;
    }
    with_copies(conn, |c| c.pending.clear());
    Ok(())
}

/// Forgets the pending rank counts of `conn` and the copies they were made in: what made them
/// was rolled back.
pub(crate) fn discard_pending(conn: &Conn<'_>) {
    conn.state().existing(|c: &mut RankCopies| {
        let RankCopies { sets, pending } = c;
        for (_, (kid, _)) in pending.drain() {
            sets.remove(&kid);
        }
    });
}

/// Forgets the writer's copy of set `kid` and its pending counts: its rank rows are being
/// deleted.
pub(crate) fn forget_copy(conn: &Conn<'_>, kid: i64) {
    conn.state().existing(|c: &mut RankCopies| {
        c.sets.remove(&kid);
        c.pending.retain(|_, (k, _)| *k != kid);
    });
}

impl Reader<'_> {
    /// Checks the writer's copy of the set `kid`'s rank rows, if this connection has one that
    /// claims to be current at `version`, against the rows themselves. For [`Reader::zcheck`].
    pub(super) fn z_copy_check(&self, kid: i64, version: i64) -> Result<()> {
        flush_pending(self.conn)?; // it reads rank counts
        let copy = with_copies(self.conn, |c| {
            c.sets
                .get(&kid)
                .filter(|s| s.version == Some(version))
                .map(|s| s.levels.clone())
        });
        let Some(levels) = copy else {
            return Ok(());
        };
        let mut st = crate::backend::sqlite::stmt::prepare(self.conn, q::ROWS_IN_ORDER)?;
        let rows = st.query_map([kid], |r| {
            Ok((r.get::<_, i64>(0)?, pos_row_at(r, 1)?, r.get(3)?, r.get(4)?))
        })?;
        let mut sql: [Vec<(Pos, i64, i64)>; 2] = Default::default();
        for row in rows {
            let (lvl, p, n, id) = row?;
            if let Some(level) = sql.get_mut(lvl as usize) {
                level.push((p, n, id));
            }
        }
        for lvl in 0..2 {
            let copy = levels[lvl].rows();
            if copy != sql[lvl] {
                return Err(Error::Storage(format!(
                    "the writer's copy of level {lvl} of sorted set {kid} is {copy:?}, the rows are {:?}",
                    sql[lvl]
                )));
            }
        }
        Ok(())
    }
}

impl Writer<'_> {
    /// Keeps the writer's copy of set `kid`'s rank rows only if it is current: made for the key
    /// row's `version`, and (unless it records that there are none) its level-1 runs add up to
    /// the set's `count`. Whether the set has rank rows, when a current copy knows.
    pub(super) fn z_copy_open(&self, kid: i64, version: i64, count: i64) -> Result<Option<bool>> {
        let current = with_copies(self.conn, |c| {
            let s = c.sets.get(&kid)?;
            let rows = s.levels[0].len() > 0;
            Some(
                (s.version == Some(version) && (!rows || s.levels[1].total() == count))
                    .then_some(rows),
            )
        });
        match current {
            None => Ok(None),
            Some(Some(rows)) => Ok(Some(rows)),
            Some(None) => {
                // Changed by something else since (an expiry set, a rename): the counts it has
                // pending are still right and go to the rows before it goes.
                flush_pending(self.conn)?;
                self.z_copy_drop(kid);
                Ok(None)
            }
        }
    }

    /// Records that set `kid`, whose key row now has `version`, has no rank rows: for a set
    /// between half the threshold and the threshold, where only a probe of the rows would tell.
    pub(super) fn z_copy_none(&self, kid: i64, version: i64) {
        with_copies(self.conn, |c| {
            if c.sets.len() >= COPY_SETS {
                c.sets.retain(|_, s| s.rows() > 0);
            }
            c.sets.insert(
                kid,
                RankCopy {
                    version: Some(version),
                    ..RankCopy::default()
                },
            );
        });
    }

    /// Reads set `kid`'s rank rows into a copy (there is none).
    pub(super) fn z_copy_load(&self, kid: i64) -> Result<()> {
        let mut copy = RankCopy::default();
        {
            let mut st = crate::backend::sqlite::stmt::prepare(self.conn, q::ROWS)?;
            let mut rows = st.query([kid])?;
            while let Some(r) = rows.next()? {
                let lvl: i64 = r.get(0)?;
                let level = copy.levels.get_mut(lvl as usize).ok_or_else(|| {
                    Error::Storage(format!("sorted set {kid} has a rank row of level {lvl}"))
                })?;
                level.0.push(RankRow {
                    start: RankKey::of(&pos_row_at(r, 1)?),
                    n: r.get(3)?,
                    id: r.get(4)?,
                });
            }
        }
        for level in &mut copy.levels {
            level
                .0
                .sort_by(|a, b| a.start.cmp_to(b.start.0, &b.start.1));
        }
        let full = with_copies(self.conn, |c| {
            let held: usize = c.sets.values().map(RankCopy::rows).sum();
            held + copy.rows() > COPY_ROWS
        });
        if full {
            // The other copies go, and their pending counts to the rows first.
            flush_pending(self.conn)?;
        }
        with_copies(self.conn, |c| {
            if full {
                c.sets.clear();
            }
            c.sets.insert(kid, copy);
        });
        Ok(())
    }

    /// The level-`lvl` row holding `p` (the last starting at or before it), with its count: a
    /// [`Reader::z_blk_containing`] answered from the writer's copy. Only for a set opened for
    /// writing with rank blocks (whose copy [`Writer::z_copy_open`] checked).
    pub(super) fn z_blk_at(&self, kid: i64, lvl: i64, p: &Pos) -> Result<(Pos, i64)> {
        let [found] = self.z_blks_at(kid, [(lvl, p)])?;
        Ok(found)
    }

    /// [`Writer::z_blk_at`] for several (level, position) pairs at once.
    pub(super) fn z_blks_at<const N: usize>(
        &self,
        kid: i64,
        at: [(i64, &Pos); N],
    ) -> Result<[(Pos, i64); N]> {
        let find = |c: &mut RankCopies| {
            c.sets
                .get(&kid)
                .map(|s| at.map(|(lvl, p)| s.levels[lvl as usize].holding(p).ok_or(lvl)))
        };
        let found = match with_copies(self.conn, find) {
            Some(found) => found,
            None => {
                self.z_copy_load(kid)?;
                with_copies(self.conn, find).ok_or_else(|| {
                    Error::Storage(format!("sorted set {kid}: no copy of its rank rows"))
                })?
            }
        };
        let mut out = Vec::with_capacity(N);
        for f in found {
            out.push(f.map_err(|lvl| {
                Error::Storage(format!("sorted set {kid} has no level-{lvl} rank row"))
            })?);
        }
        out.try_into()
            .map_err(|_| Error::Storage("rank row lookups lost".into()))
    }

    /// Applies a change just made to set `kid`'s level-`lvl` rows to the writer's copy, if it
    /// has one, which stays unverified until the write is done ([`Writer::z_copy_stamp`]).
    pub(super) fn z_copy_edit<R>(
        &self,
        kid: i64,
        lvl: i64,
        f: impl FnOnce(&mut RankLevel) -> R,
    ) -> Option<R> {
        with_copies(self.conn, |c| {
            let s = c.sets.get_mut(&kid)?;
            s.version = None;
            Some(f(&mut s.levels[lvl as usize]))
        })
    }

    /// Forgets the writer's copy of set `kid`'s rank rows (they are gone or rebuilt).
    pub(super) fn z_copy_drop(&self, kid: i64) {
        forget_copy(self.conn, kid);
    }

    /// A write to set `kid` is done and its key row now has `version`: the copy matches it.
    pub(super) fn z_copy_stamp(&self, kid: i64, version: i64) {
        with_copies(self.conn, |c| {
            if let Some(s) = c.sets.get_mut(&kid) {
                s.version = Some(version);
            }
        });
    }
}

impl<'c> Writer<'c> {
    // --- rank blocks ---------------------------------------------------------------------

    pub(super) fn z_blk_set(&self, kid: i64, lvl: i64, start: &Pos, n: i64) -> Result<()> {
        self.z_blk_set_all(kid, &[(lvl, start, n)])
    }

    /// Sets the counts of several rank rows, (level, start, count), with one prepared
    /// statement.
    pub(super) fn z_blk_set_all(&self, kid: i64, rows: &[(i64, &Pos, i64)]) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        for &(lvl, start, n) in rows {
            // In the copy, pending until something reads the rows (see "Pending counts").
            let pending = with_copies(self.conn, |c| {
                let s = c.sets.get_mut(&kid)?;
                s.version = None;
                let id = s.levels[lvl as usize].set(start, n)?;
                c.pending.insert(id, (kid, n));
                Some(())
            });
            match pending {
                Some(()) => 0,
                None => crate::backend::sqlite::stmt::prepare(self.conn, q::COUNT_SET)?
                    .execute((kid, lvl, start.score, &start.member[..], n))?,
            };
        }
        Ok(())
    }

    pub(super) fn z_blk_insert(&self, kid: i64, lvl: i64, start: &Pos, n: i64) -> Result<()> {
        crate::backend::sqlite::stmt::prepare(self.conn, q::ROW_INSERT)?.execute((
            kid,
            lvl,
            start.score,
            &start.member[..],
            n,
        ))?;
        let id = self.conn.last_insert_rowid();
        self.z_copy_edit(kid, lvl, |rows| rows.insert(start, n, id));
        Ok(())
    }

    /// Deletes a level-`lvl` row; its count, if it was there.
    pub(super) fn z_blk_delete(&self, kid: i64, lvl: i64, start: &Pos) -> Result<Option<i64>> {
        flush_pending(self.conn)?; // it reads rank counts
        let n = crate::backend::sqlite::stmt::prepare(self.conn, q::ROW_DELETE)?
            .query_row((kid, lvl, start.score, &start.member[..]), |r| r.get(0))
            .optional()?;
        self.z_copy_edit(kid, lvl, |rows| rows.remove(start));
        Ok(n)
    }

    /// Deletes the level-`lvl` rows after `start` and before `hi` (all after it: `None`).
    pub(super) fn z_blk_delete_after(
        &self,
        kid: i64,
        lvl: i64,
        start: &Pos,
        hi: Option<&Pos>,
    ) -> Result<()> {
        match hi {
            None => crate::backend::sqlite::stmt::prepare(self.conn, q::ROWS_DELETE_AFTER)?
                .execute((kid, lvl, start.score, &start.member[..]))?,
            Some(hi) => crate::backend::sqlite::stmt::prepare(self.conn, q::ROWS_DELETE_BETWEEN)?
                .execute((
                kid,
                lvl,
                start.score,
                &start.member[..],
                hi.score,
                &hi.member[..],
            ))?,
        };
        self.z_copy_edit(kid, lvl, |rows| rows.remove_after(start, hi));
        Ok(())
    }

    pub(super) fn z_blk_next(&self, kid: i64, lvl: i64, start: &Pos) -> Result<Option<(Pos, i64)>> {
        flush_pending(self.conn)?; // it reads rank counts
        Ok(
            crate::backend::sqlite::stmt::prepare(self.conn, q::ROW_NEXT)?
                .query_row((kid, lvl, start.score, &start.member[..]), |r| {
                    Ok((pos_row(r)?, r.get(2)?))
                })
                .optional()?,
        )
    }

    pub(super) fn z_blk_prev(&self, kid: i64, lvl: i64, start: &Pos) -> Result<Option<(Pos, i64)>> {
        flush_pending(self.conn)?; // it reads rank counts
        Ok(
            crate::backend::sqlite::stmt::prepare(self.conn, q::ROW_PREV)?
                .query_row((kid, lvl, start.score, &start.member[..]), |r| {
                    Ok((pos_row(r)?, r.get(2)?))
                })
                .optional()?,
        )
    }

    /// The number of members from block `start` up to the next block.
    pub(super) fn z_block_recount(&self, kid: i64, start: &Pos) -> Result<i64> {
        let next = self.z_blk_next(kid, 0, start)?.map(|(p, _)| p);
        self.z_members_between(kid, Some(start), next.as_ref())
    }

    /// The number of members in the level-1 run `start`: the sum of its blocks.
    pub(super) fn z_run_recount(&self, kid: i64, start: &Pos) -> Result<i64> {
        let next = self.z_blk_next(kid, 1, start)?.map(|(p, _)| p);
        self.z_rows_between(kid, 0, Some(start), next.as_ref())
    }

    /// A member at `p` came (`delta = 1`) or went (`-1`): its block and its run count it, and
    /// both are kept within bounds. `count` is the set's size after the change.
    pub(super) fn z_adjust(&mut self, kid: i64, p: &Pos, delta: i64, count: i64) -> Result<()> {
        let [(block, n), (run, rn)] = self.z_blks_at(kid, [(0, p), (1, p)])?;
        self.z_blk_set_all(kid, &[(0, &block, n + delta), (1, &run, rn + delta)])?;
        self.z_rebalance_at(kid, p, n + delta, rn + delta, count)
    }

    /// Keeps the block and the run holding `p` within bounds now that they count `n` and `rn`
    /// (counts read before an earlier rebalancing may be stale, but one that moved them left
    /// them within bounds). A block or run holding every member (`count`) has nothing to merge
    /// with.
    pub(super) fn z_rebalance_at(
        &mut self,
        kid: i64,
        p: &Pos,
        n: i64,
        rn: i64,
        count: i64,
    ) -> Result<()> {
        let (b, s) = (self.rank.block, self.rank.run());
        if n > 2 * b || (n < b / 2 && n != count) {
            let (block, n) = self.z_blk_at(kid, 0, p)?;
            self.z_rebalance_block(kid, block, n)?;
        }
        if rn > 2 * s || (rn < s / 2 && rn != count) {
            self.z_rebalance_run_at(kid, p)?;
        }
        Ok(())
    }

    /// Deletes block `start`, whose members now belong to the block before it. If a level-1
    /// run started there, that run joins the run before it too; that run is returned, to be
    /// split if too large once every block count is right again.
    pub(super) fn z_block_unstart(&mut self, kid: i64, start: &Pos) -> Result<Option<(Pos, i64)>> {
        self.z_blk_delete(kid, 0, start)?;
        let Some(rn) = self.z_blk_delete(kid, 1, start)? else {
            return Ok(None);
        };
        let (prev, pn) = self
            .z_blk_prev(kid, 1, start)?
            .ok_or_else(|| Error::Storage(format!("sorted set {kid}: a run without a first")))?;
        self.z_blk_set(kid, 1, &prev, pn + rn)?;
        Ok(Some((prev, pn + rn)))
    }

    /// Splits a block grown past twice the block size; merges one fallen under half of it into
    /// the block before it (or the block after it into the first block, which always starts at
    /// the bottom).
    pub(super) fn z_rebalance_block(&mut self, kid: i64, start: Pos, n: i64) -> Result<()> {
        let b = self.rank.block;
        if n > 2 * b {
            return self.z_block_split(kid, &start, n);
        }
        if n >= b / 2 {
            return Ok(());
        }
        let (kept, total, run) = if let Some((prev, pn)) = self.z_blk_prev(kid, 0, &start)? {
            let run = self.z_block_unstart(kid, &start)?;
            (prev, pn + n, run)
        } else if let Some((next, nn)) = self.z_blk_next(kid, 0, &start)? {
            let run = self.z_block_unstart(kid, &next)?;
            (start, n + nn, run)
        } else {
            return Ok(());
        };
        self.z_blk_set(kid, 0, &kept, total)?;
        if total > 2 * b {
            self.z_block_split(kid, &kept, total)?;
        }
        if let Some((run, rn)) = run {
            if rn > 2 * self.rank.run() {
                self.z_run_split(kid, &run)?;
            }
        }
        Ok(())
    }

    /// Cuts the `n` members of block `start` into blocks of about the block size (they stay in
    /// the same level-1 run).
    pub(super) fn z_block_split(&mut self, kid: i64, start: &Pos, n: i64) -> Result<()> {
        let pieces = (n / self.rank.block).max(1);
        if pieces < 2 {
            return Ok(());
        }
        let cut = |i: i64| i * n / pieces;
        let mut starts = Vec::with_capacity(pieces as usize - 1);
        {
            let mut st = crate::backend::sqlite::stmt::prepare(self.conn, q::MEMBERS_FROM)?;
            let mut rows = st.query((kid, start.score, &start.member[..], cut(pieces - 1) + 1))?;
            let mut i = 0i64;
            let mut next_cut = 1;
            while let Some(row) = rows.next()? {
                if next_cut < pieces && i == cut(next_cut) {
                    starts.push(pos_row(row)?);
                    next_cut += 1;
                }
                i += 1;
            }
        }
        self.z_blk_set(kid, 0, start, cut(1))?;
        for (k, s) in starts.iter().enumerate() {
            let i = k as i64 + 1;
            self.z_blk_insert(kid, 0, s, cut(i + 1) - cut(i))?;
        }
        Ok(())
    }

    /// Keeps the level-1 run holding `p` within bounds: split at block starts when past twice
    /// the run size, merged into the run before it (or the next
    /// into it, for the first run) when under half of it.
    pub(super) fn z_rebalance_run_at(&mut self, kid: i64, p: &Pos) -> Result<()> {
        let s = self.rank.run();
        let (start, n) = self.z_blk_at(kid, 1, p)?;
        if n > 2 * s {
            return self.z_run_split(kid, &start);
        }
        if n >= s / 2 {
            return Ok(());
        }
        if let Some((prev, pn)) = self.z_blk_prev(kid, 1, &start)? {
            self.z_blk_delete(kid, 1, &start)?;
            self.z_blk_set(kid, 1, &prev, pn + n)?;
            if pn + n > 2 * s {
                self.z_run_split(kid, &prev)?;
            }
        } else if let Some((next, nn)) = self.z_blk_next(kid, 1, &start)? {
            self.z_blk_delete(kid, 1, &next)?;
            self.z_blk_set(kid, 1, &start, n + nn)?;
            if n + nn > 2 * s {
                self.z_run_split(kid, &start)?;
            }
        }
        Ok(())
    }

    /// Cuts the level-1 run `start`, at block starts, into runs of about the run size.
    pub(super) fn z_run_split(&mut self, kid: i64, start: &Pos) -> Result<()> {
        flush_pending(self.conn)?; // it reads rank counts
        let blocks: Vec<(Pos, i64)> = {
            let end = self.z_blk_next(kid, 1, start)?.map(|(p, _)| p);
            let mut st = crate::backend::sqlite::stmt::prepare(self.conn, q::BLOCKS_FROM)?;
            let mut rows = st.query((kid, start.score, &start.member[..]))?;
            let mut out = Vec::new();
            while let Some(row) = rows.next()? {
                let p = pos_row(row)?;
                if end.as_ref().is_some_and(|e| p == *e) {
                    break;
                }
                out.push((p, row.get(2)?));
            }
            out
        };
        // Cut at block starts: a run closes once it holds the run size `s`, so each holds
        // from `s` to `s + 2b - 1` (a block holds at most `2b <= s`). A last run under `s / 2`
        // joins the one before; if that makes more than `2s` (under `1.5s + 2b`), the two are
        // cut again at the block start nearest their middle, which leaves each side over
        // `s - b >= s / 2` and under `0.75s + 2b <= 2s`. Any fanout of 2 or more stays within
        // bounds.
        let s = self.rank.run();
        let mut cuts = vec![0];
        let mut last = 0;
        for (i, (_, bn)) in blocks.iter().enumerate() {
            if last >= s {
                cuts.push(i);
                last = 0;
            }
            last += bn;
        }
        if cuts.len() > 1 && last < s / 2 {
            cuts.pop();
            let from = cuts[cuts.len() - 1];
            let total: i64 = blocks[from..].iter().map(|(_, bn)| bn).sum();
            if total > 2 * s {
                let (mut before, mut best) = (0, (i64::MAX, from + 1));
                for i in from + 1..blocks.len() {
                    before += blocks[i - 1].1;
                    let off = (2 * before - total).abs();
                    if off < best.0 {
                        best = (off, i);
                    }
                }
                cuts.push(best.1);
            }
        }
        cuts.push(blocks.len());
        for w in cuts.windows(2) {
            let (i, j) = (w[0], w[1]);
            let count = blocks[i..j].iter().map(|(_, bn)| bn).sum();
            if i == 0 {
                self.z_blk_set(kid, 1, start, count)?;
            } else {
                self.z_blk_insert(kid, 1, &blocks[i].0, count)?;
            }
        }
        Ok(())
    }

    /// Cuts a whole set into rank blocks and level-1 runs (it had none).
    pub(super) fn z_build_blocks(&mut self, kid: i64, count: i64) -> Result<()> {
        self.z_copy_drop(kid);
        crate::backend::sqlite::stmt::prepare(self.conn, q::ROWS_DELETE)?.execute([kid])?;
        let bottom = Pos::bottom();
        self.z_blk_insert(kid, 0, &bottom, count)?;
        self.z_blk_insert(kid, 1, &bottom, count)?;
        if count > 2 * self.rank.block {
            self.z_block_split(kid, &bottom, count)?;
        }
        if count > 2 * self.rank.run() {
            self.z_run_split(kid, &bottom)?;
        }
        Ok(())
    }
}
