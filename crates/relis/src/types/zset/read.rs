//! Sorted-set reads: lookups, ranges by rank, score and lex (ranks from the rank rows, see
//! `rank.rs`), scans, random members, set operations and geo searches.

use super::*;
use crate::backend::sqlite::sql::zset as q;
use crate::backend::sqlite::stmt::prepare;

impl Reader<'_> {
    /// The live sorted set at `key`: `None` when missing, [`Error::WrongType`] for another type.
    pub(super) fn zmeta(&self, db: u32, key: &[u8]) -> Result<Option<ZMeta>> {
        match self.meta(db, key)? {
            None => Ok(None),
            Some(m) if m.kind != KeyType::ZSet => Err(Error::WrongType),
            Some(m) => Ok(Some(ZMeta {
                kid: m.id,
                count: m.count,
                blocks: self.z_has_blocks(m.id, m.count)?,
            })),
        }
    }

    /// Whether the set `kid` of `count` members has rank blocks: always above the threshold,
    /// never at half of it or below, and in between if it had them when it came down.
    pub(super) fn z_has_blocks(&self, kid: i64, count: i64) -> Result<bool> {
        let t = self.rank.threshold;
        if count > t {
            return Ok(true);
        }
        if count <= t / 2 {
            return Ok(false);
        }
        Ok(prepare(self.conn, q::HAS_RANK_BLOCKS)?
            .query_row([kid], |_| Ok(()))
            .optional()?
            .is_some())
    }

    /// Whether the set at `kid` is skiplist-encoded in Redis's terms (see the module doc).
    pub(super) fn z_skiplist(&self, db: u32, key: &[u8]) -> Result<bool> {
        Ok(prepare(self.conn, q::KEY_HEAD)?
            .query_row((db, key), |r| r.get::<_, i64>(0))
            .optional()?
            .unwrap_or(0)
            != 0)
    }

    /// Redis's name for a sorted set's encoding (OBJECT ENCODING).
    pub(crate) fn zset_encoding(&self, db: u32, key: &[u8]) -> Result<&'static str> {
        Ok(if self.z_skiplist(db, key)? {
            "skiplist"
        } else {
            "listpack"
        })
    }

    pub(super) fn z_score_of(&self, kid: i64, member: &[u8]) -> Result<Option<f64>> {
        Ok(prepare(self.conn, q::ZSCORE)?
            .query_row((kid, member), |r| r.get(0))
            .optional()?)
    }

    pub(super) fn z_first(&self, kid: i64, desc: bool) -> Result<Option<Pos>> {
        let sql = if desc {
            q::LAST_MEMBER
        } else {
            q::FIRST_MEMBER
        };
        Ok(prepare(self.conn, sql)?
            .query_row([kid], pos_row)
            .optional()?)
    }

    /// The number of members before `p` in Redis's order: with rank blocks, the level-1 runs
    /// before `p`'s run, the blocks before `p`'s block inside that run, and the members before
    /// `p` inside its block.
    pub(super) fn z_count_lt(&self, z: ZMeta, p: &Pos) -> Result<i64> {
        if !z.blocks() {
            return self.z_members_between(z.kid, None, Some(p));
        }
        let (run, _) = self.z_blk_containing(z.kid, 1, p)?;
        let (block, _) = self.z_blk_containing(z.kid, 0, p)?;
        Ok(self.z_rows_between(z.kid, 1, None, Some(&run))?
            + self.z_rows_between(z.kid, 0, Some(&run), Some(&block))?
            + self.z_members_between(z.kid, Some(&block), Some(p))?)
    }

    /// The members in `[lo, hi)` (`None`: from the bottom / to the top), counted with plain
    /// column conditions, a piece per score: SQLite re-checks a row-value bound on every entry,
    /// which costs it more than twice as much per member as an index range on one column.
    pub(super) fn z_members_between(
        &self,
        kid: i64,
        lo: Option<&Pos>,
        hi: Option<&Pos>,
    ) -> Result<i64> {
        let count = |sql: &'static str, p: &[&dyn rusqlite::ToSql]| -> Result<i64> {
            Ok(prepare(self.conn, sql)?.query_row(p, |r| r.get(0))?)
        };
        let lo = lo.filter(|l| **l != Pos::bottom());
        Ok(match (lo, hi) {
            (None, None) => count(q::MEMBER_COUNT, &[&kid])?,
            (None, Some(h)) => {
                count(q::COUNT_SCORE_LT, &[&kid, &h.score])?
                    + count(
                        q::COUNT_AT_SCORE_MEMBER_LT,
                        &[&kid, &h.score, &&h.member[..]],
                    )?
            }
            (Some(l), None) => {
                count(
                    q::COUNT_AT_SCORE_MEMBER_GE,
                    &[&kid, &l.score, &&l.member[..]],
                )? + count(q::COUNT_SCORE_GT, &[&kid, &l.score])?
            }
            (Some(l), Some(h)) if l.score == h.score => count(
                q::COUNT_AT_SCORE_MEMBER_IN,
                &[&kid, &l.score, &&l.member[..], &&h.member[..]],
            )?,
            (Some(l), Some(h)) => {
                if h.score < l.score {
                    return Ok(0);
                }
                count(
                    q::COUNT_AT_SCORE_MEMBER_GE,
                    &[&kid, &l.score, &&l.member[..]],
                )? + count(q::COUNT_SCORE_BETWEEN, &[&kid, &l.score, &h.score])?
                    + count(
                        q::COUNT_AT_SCORE_MEMBER_LT,
                        &[&kid, &h.score, &&h.member[..]],
                    )?
            }
        })
    }

    /// The total of the level-`lvl` rank rows starting in `[lo, hi)`, summed as
    /// [`Reader::z_members_between`] counts.
    pub(super) fn z_rows_between(
        &self,
        kid: i64,
        lvl: i64,
        lo: Option<&Pos>,
        hi: Option<&Pos>,
    ) -> Result<i64> {
        flush_pending(self.conn)?; // it reads rank counts
        let sum = |sql: &'static str, p: &[&dyn rusqlite::ToSql]| -> Result<i64> {
            Ok(prepare(self.conn, sql)?.query_row(p, |r| r.get(0))?)
        };
        let lo = lo.filter(|l| **l != Pos::bottom());
        Ok(match (lo, hi) {
            (None, None) => sum(q::RANK_SUM, &[&kid, &lvl])?,
            (None, Some(h)) => {
                sum(q::RANK_SUM_SCORE_LT, &[&kid, &lvl, &h.score])?
                    + sum(
                        q::RANK_SUM_AT_SCORE_MEMBER_LT,
                        &[&kid, &lvl, &h.score, &&h.member[..]],
                    )?
            }
            (Some(l), None) => {
                sum(
                    q::RANK_SUM_AT_SCORE_MEMBER_GE,
                    &[&kid, &lvl, &l.score, &&l.member[..]],
                )? + sum(q::RANK_SUM_SCORE_GT, &[&kid, &lvl, &l.score])?
            }
            (Some(l), Some(h)) if l.score == h.score => sum(
                q::RANK_SUM_AT_SCORE_MEMBER_IN,
                &[&kid, &lvl, &l.score, &&l.member[..], &&h.member[..]],
            )?,
            (Some(l), Some(h)) => {
                if h.score < l.score {
                    return Ok(0);
                }
                sum(
                    q::RANK_SUM_AT_SCORE_MEMBER_GE,
                    &[&kid, &lvl, &l.score, &&l.member[..]],
                )? + sum(q::RANK_SUM_SCORE_BETWEEN, &[&kid, &lvl, &l.score, &h.score])?
                    + sum(
                        q::RANK_SUM_AT_SCORE_MEMBER_LT,
                        &[&kid, &lvl, &h.score, &&h.member[..]],
                    )?
            }
        })
    }

    /// The level-`lvl` row whose run holds position `p` (the last starting at or before it),
    /// with its count.
    pub(super) fn z_blk_containing(&self, kid: i64, lvl: i64, p: &Pos) -> Result<(Pos, i64)> {
        flush_pending(self.conn)?; // it reads rank counts
        prepare(self.conn, q::RANK_ROW_CONTAINING)?
            .query_row((kid, lvl, p.score, &p.member[..]), |r| {
                Ok((pos_row(r)?, r.get(2)?))
            })
            .optional()?
            .ok_or_else(|| Error::Storage(format!("sorted set {kid} has no level-{lvl} rank row")))
    }

    /// The member at rank `r` (0-based, ascending).
    pub(super) fn z_at_rank(&self, z: ZMeta, r: i64) -> Result<Option<Pos>> {
        if r < 0 || r >= z.count {
            return Ok(None);
        }
        let (start, offset) = if z.blocks() {
            self.z_block_of_rank(z, r)?
        } else {
            (Pos::bottom(), r)
        };
        Ok(prepare(self.conn, q::MEMBER_AT_OFFSET)?
            .query_row((z.kid, start.score, &start.member[..], offset), pos_row)
            .optional()?)
    }

    /// The block holding rank `r` and `r`'s offset inside it: walks the level-1 counts from
    /// the nearer end to `r`'s run, then the block counts inside that run.
    pub(super) fn z_block_of_rank(&self, z: ZMeta, r: i64) -> Result<(Pos, i64)> {
        flush_pending(self.conn)?; // it reads rank counts
        let from_top = r >= z.count / 2;
        let sql = if from_top { q::RUNS_DESC } else { q::RUNS };
        let mut run = None;
        {
            let mut st = prepare(self.conn, sql)?;
            let mut rows = st.query([z.kid])?;
            // Walking up, `base` members lie in the runs passed; walking down, the members from
            // `end` up do.
            let mut base = 0i64;
            let mut end = z.count;
            while let Some(row) = rows.next()? {
                let n: i64 = row.get(2)?;
                if from_top {
                    let start = end - n;
                    if r >= start {
                        run = Some((pos_row(row)?, r - start));
                        break;
                    }
                    end = start;
                } else {
                    if r < base + n {
                        run = Some((pos_row(row)?, r - base));
                        break;
                    }
                    base += n;
                }
            }
        }
        let Some((run, mut r)) = run else {
            return Err(Error::Storage(format!(
                "rank runs of sorted set {} do not cover rank {r}",
                z.kid
            )));
        };
        let mut st = prepare(self.conn, q::BLOCKS_FROM)?;
        let mut rows = st.query((z.kid, run.score, &run.member[..]))?;
        while let Some(row) = rows.next()? {
            let n: i64 = row.get(2)?;
            if r < n {
                return Ok((pos_row(row)?, r));
            }
            r -= n;
        }
        Err(Error::Storage(format!(
            "rank blocks of sorted set {} do not cover its runs",
            z.kid
        )))
    }

    /// The first member (in Redis's order) whose bytes are at or above `min`: Redis's
    /// `zzlFirstInLexRange` walk, done per score group with index seeks.
    pub(super) fn z_lex_first(&self, kid: i64, min: &LexBound) -> Result<Option<Pos>> {
        let Some(first) = self.z_first(kid, false)? else {
            return Ok(None);
        };
        let mut score = first.score;
        loop {
            let found: Option<Bytes> = match min {
                LexBound::Max => None,
                LexBound::Min => Some(Bytes::new()),
                LexBound::Incl(b) | LexBound::Excl(b) => {
                    let sql = if matches!(min, LexBound::Incl(_)) {
                        q::LEX_FIRST_GE
                    } else {
                        q::LEX_FIRST_GT
                    };
                    prepare(self.conn, sql)?
                        .query_row((kid, score, &b[..]), |r| blob(r, 0))
                        .optional()?
                }
            };
            if let Some(m) = found {
                if matches!(min, LexBound::Min) {
                    return Ok(Some(first));
                }
                return Ok(Some(Pos::new(score, m)));
            }
            let next: Option<f64> = prepare(self.conn, q::NEXT_SCORE_UP)?
                .query_row((kid, score), |r| r.get(0))
                .optional()?;
            match next {
                Some(s) => score = s,
                None => return Ok(None),
            }
        }
    }

    /// The last member (in Redis's order) whose bytes are at or below `max`
    /// (`zzlLastInLexRange`).
    pub(super) fn z_lex_last(&self, kid: i64, max: &LexBound) -> Result<Option<Pos>> {
        let Some(last) = self.z_first(kid, true)? else {
            return Ok(None);
        };
        let mut score = last.score;
        loop {
            let found: Option<Bytes> = match max {
                LexBound::Min => None,
                LexBound::Max => return Ok(Some(last)),
                LexBound::Incl(b) | LexBound::Excl(b) => {
                    let sql = if matches!(max, LexBound::Incl(_)) {
                        q::LEX_LAST_LE
                    } else {
                        q::LEX_LAST_LT
                    };
                    prepare(self.conn, sql)?
                        .query_row((kid, score, &b[..]), |r| blob(r, 0))
                        .optional()?
                }
            };
            if let Some(m) = found {
                return Ok(Some(Pos::new(score, m)));
            }
            let next: Option<f64> = prepare(self.conn, q::NEXT_SCORE_DOWN)?
                .query_row((kid, score), |r| r.get(0))
                .optional()?;
            match next {
                Some(s) => score = s,
                None => return Ok(None),
            }
        }
    }

    /// Walks members from `from` (inclusive) in Redis's order, or downwards from it, while
    /// `keep` says so; returns the last member kept.
    pub(super) fn z_walk_while(
        &self,
        kid: i64,
        from: &Pos,
        desc: bool,
        keep: impl Fn(&[u8]) -> bool,
    ) -> Result<Option<Pos>> {
        let sql = if desc { q::WALK_DOWN } else { q::WALK_UP };
        let mut st = prepare(self.conn, sql)?;
        let mut rows = st.query((kid, from.score, &from.member[..]))?;
        let mut last = None;
        while let Some(row) = rows.next()? {
            let p = pos_row(row)?;
            if !keep(&p.member) {
                break;
            }
            last = Some(p);
        }
        Ok(last)
    }

    /// The members a lex range selects, as Redis's listpack walk selects them: from the first
    /// member at or above `min` onwards while at or below `max` (`rev = false`), or from the
    /// last member at or below `max` downwards while at or above `min` (`rev = true`). Both
    /// first check Redis's `zslIsInLexRange` (the last member is not below `min`, the first not
    /// above `max`). Returns the selection's first and last position in Redis's order.
    pub(super) fn z_lex_span(
        &self,
        kid: i64,
        range: &LexRange,
        rev: bool,
    ) -> Result<Option<(Pos, Pos)>> {
        if range.is_empty() {
            return Ok(None);
        }
        let (Some(first), Some(last)) = (self.z_first(kid, false)?, self.z_first(kid, true)?)
        else {
            return Ok(None);
        };
        if !range.min.below(&last.member) || !range.max.above(&first.member) {
            return Ok(None);
        }
        let lo = self.z_lex_first(kid, &range.min)?;
        let hi = self.z_lex_last(kid, &range.max)?;
        if !rev {
            let Some(lo) = lo else { return Ok(None) };
            if !range.max.above(&lo.member) {
                return Ok(None);
            }
            // With one score between them, everything from `lo` to `hi` is in range and the
            // member after `hi` is not: no need to walk.
            let end = match hi {
                Some(hi) if hi.score == lo.score => hi,
                _ => self
                    .z_walk_while(kid, &lo, false, |m| range.max.above(m))?
                    .unwrap_or_else(|| lo.clone()),
            };
            Ok(Some((lo, end)))
        } else {
            let Some(hi) = hi else { return Ok(None) };
            if !range.min.below(&hi.member) {
                return Ok(None);
            }
            let start = match lo {
                Some(lo) if lo.score == hi.score => lo,
                _ => self
                    .z_walk_while(kid, &hi, true, |m| range.min.below(m))?
                    .unwrap_or_else(|| hi.clone()),
            };
            Ok(Some((start, hi)))
        }
    }

    /// The ascending rank interval `[a, b]` a rank range selects (ZRANGE's index rules), or
    /// `None` when empty.
    pub(super) fn z_rank_span(count: i64, start: i64, stop: i64, rev: bool) -> Option<(i64, i64)> {
        let mut s = if start < 0 { count + start } else { start };
        let mut e = if stop < 0 { count + stop } else { stop };
        if s < 0 {
            s = 0;
        }
        if s > e || s >= count {
            return None;
        }
        if e >= count {
            e = count - 1;
        }
        Some(if rev {
            (count - 1 - e, count - 1 - s)
        } else {
            (s, e)
        })
    }

    /// Members in `iv`, ascending or descending, skipping `offset`, at most `limit` (negative:
    /// all).
    pub(super) fn z_fetch(
        &self,
        kid: i64,
        iv: &Interval,
        desc: bool,
        offset: i64,
        limit: i64,
    ) -> Result<Vec<Scored>> {
        let lo = &iv.lo;
        let mut out = Vec::new();
        macro_rules! run {
            ($sql:expr, $params:expr) => {{
                let mut st = prepare(self.conn, $sql)?;
                let rows = st.query_map($params, scored_row)?;
                for r in rows {
                    out.push(r?);
                }
            }};
        }
        match (&iv.hi, desc) {
            (None, false) => run!(
                q::FETCH_FROM,
                (kid, lo.score, &lo.member[..], limit, offset)
            ),
            (None, true) => run!(
                q::FETCH_FROM_DESC,
                (kid, lo.score, &lo.member[..], limit, offset)
            ),
            (Some(hi), false) => run!(
                q::FETCH_BETWEEN,
                (
                    kid,
                    lo.score,
                    &lo.member[..],
                    hi.score,
                    &hi.member[..],
                    limit,
                    offset
                )
            ),
            (Some(hi), true) => run!(
                q::FETCH_BETWEEN_DESC,
                (
                    kid,
                    lo.score,
                    &lo.member[..],
                    hi.score,
                    &hi.member[..],
                    limit,
                    offset
                )
            ),
        }
        Ok(out)
    }

    /// The number of members in `iv`.
    pub(super) fn z_count_in(&self, z: ZMeta, iv: &Interval) -> Result<i64> {
        if z.blocks() {
            let below_hi = match &iv.hi {
                Some(hi) => self.z_count_lt(z, hi)?,
                None => z.count,
            };
            return Ok((below_hi - self.z_count_lt(z, &iv.lo)?).max(0));
        }
        self.z_members_between(z.kid, Some(&iv.lo), iv.hi.as_ref())
    }

    /// The interval of positions a rank range covers.
    pub(super) fn z_rank_interval(&self, z: ZMeta, a: i64, b: i64) -> Result<Option<Interval>> {
        let Some(lo) = self.z_at_rank(z, a)? else {
            return Ok(None);
        };
        let hi = self.z_at_rank(z, b + 1)?;
        Ok(Some(Interval { lo, hi }))
    }

    /// The members a range selects, in reply order.
    pub(super) fn z_select(&self, z: ZMeta, spec: &ZRange) -> Result<Vec<Scored>> {
        let (offset, limit) = spec.limit.unwrap_or((0, -1));
        match &spec.by {
            ZRangeBy::Rank(start, stop) => {
                let Some((a, b)) = Self::z_rank_span(z.count, *start, *stop, spec.rev) else {
                    return Ok(Vec::new());
                };
                let lo = if z.blocks() {
                    match self.z_at_rank(z, a)? {
                        Some(p) => p,
                        None => return Ok(Vec::new()),
                    }
                } else {
                    Pos::bottom()
                };
                let skip = if z.blocks() { 0 } else { a };
                let iv = Interval { lo, hi: None };
                let mut out = self.z_fetch(z.kid, &iv, false, skip, b - a + 1)?;
                if spec.rev {
                    out.reverse();
                }
                Ok(out)
            }
            ZRangeBy::Score(range) => {
                if offset < 0 {
                    return Ok(Vec::new());
                }
                let Some(iv) = range.interval() else {
                    return Ok(Vec::new());
                };
                self.z_fetch(z.kid, &iv, spec.rev, offset, limit)
            }
            ZRangeBy::Lex(range) => {
                if offset < 0 {
                    return Ok(Vec::new());
                }
                let Some((lo, hi)) = self.z_lex_span(z.kid, range, spec.rev)? else {
                    return Ok(Vec::new());
                };
                let iv = Interval {
                    lo,
                    hi: Some(hi.successor()),
                };
                self.z_fetch(z.kid, &iv, spec.rev, offset, limit)
            }
        }
    }

    /// The interval a removal by range covers (forward semantics for lex, as ZREMRANGEBYLEX).
    pub(super) fn z_interval_of(&self, z: ZMeta, by: &ZRangeBy) -> Result<Option<Interval>> {
        match by {
            ZRangeBy::Rank(start, stop) => match Self::z_rank_span(z.count, *start, *stop, false) {
                Some((a, b)) => self.z_rank_interval(z, a, b),
                None => Ok(None),
            },
            ZRangeBy::Score(range) => Ok(range.interval()),
            ZRangeBy::Lex(range) => {
                Ok(self
                    .z_lex_span(z.kid, range, false)?
                    .map(|(lo, hi)| Interval {
                        lo,
                        hi: Some(hi.successor()),
                    }))
            }
        }
    }

    /// ZCARD: `None` when the key does not exist.
    ///
    /// # Errors
    /// [`Error::WrongType`] for a key of another type.
    pub fn zcard(&self, db: u32, key: &[u8]) -> Result<Option<i64>> {
        Ok(self.zmeta(db, key)?.map(|z| z.count))
    }

    /// ZSCORE: the outer `None` when the key does not exist, the inner when the member does not.
    ///
    /// # Errors
    /// [`Error::WrongType`] for a key of another type.
    pub fn zscore(&self, db: u32, key: &[u8], member: &[u8]) -> Result<Option<Option<f64>>> {
        let Some(z) = self.zmeta(db, key)? else {
            return Ok(None);
        };
        Ok(Some(self.z_score_of(z.kid, member)?))
    }

    /// ZMSCORE: `None` when the key does not exist.
    ///
    /// # Errors
    /// [`Error::WrongType`] for a key of another type.
    pub fn zmscore(
        &self,
        db: u32,
        key: &[u8],
        members: &[Bytes],
    ) -> Result<Option<Vec<Option<f64>>>> {
        let Some(z) = self.zmeta(db, key)? else {
            return Ok(None);
        };
        members
            .iter()
            .map(|m| self.z_score_of(z.kid, m))
            .collect::<Result<Vec<_>>>()
            .map(Some)
    }

    /// ZRANK / ZREVRANK (`rev`): the outer `None` when the key does not exist, the inner when
    /// the member does not.
    ///
    /// # Errors
    /// [`Error::WrongType`] for a key of another type.
    pub fn zrank(
        &self,
        db: u32,
        key: &[u8],
        member: &[u8],
        rev: bool,
    ) -> Result<Option<Option<i64>>> {
        let Some(z) = self.zmeta(db, key)? else {
            return Ok(None);
        };
        let Some(score) = self.z_score_of(z.kid, member)? else {
            return Ok(Some(None));
        };
        let rank = self.z_count_lt(z, &Pos::new(score, Bytes::copy_from_slice(member)))?;
        Ok(Some(Some(if rev { z.count - 1 - rank } else { rank })))
    }

    /// ZCOUNT: `None` when the key does not exist.
    ///
    /// # Errors
    /// [`Error::WrongType`] for a key of another type.
    pub fn zcount(&self, db: u32, key: &[u8], range: &ScoreRange) -> Result<Option<i64>> {
        let Some(z) = self.zmeta(db, key)? else {
            return Ok(None);
        };
        Ok(Some(match range.interval() {
            Some(iv) => self.z_count_in(z, &iv)?,
            None => 0,
        }))
    }

    /// ZLEXCOUNT: `None` when the key does not exist.
    ///
    /// # Errors
    /// [`Error::WrongType`] for a key of another type.
    pub fn zlexcount(&self, db: u32, key: &[u8], range: &LexRange) -> Result<Option<i64>> {
        let Some(z) = self.zmeta(db, key)? else {
            return Ok(None);
        };
        Ok(Some(match self.z_lex_span(z.kid, range, false)? {
            Some((lo, hi)) => self.z_count_in(
                z,
                &Interval {
                    lo,
                    hi: Some(hi.successor()),
                },
            )?,
            None => 0,
        }))
    }

    /// ZRANGE and its variants: the selected members in reply order; `None` when the key does
    /// not exist.
    ///
    /// # Errors
    /// [`Error::WrongType`] for a key of another type.
    pub fn zrange(&self, db: u32, key: &[u8], spec: &ZRange) -> Result<Option<Vec<Scored>>> {
        let Some(z) = self.zmeta(db, key)? else {
            return Ok(None);
        };
        self.z_select(z, spec).map(Some)
    }

    /// A geo search (GEOSEARCH, GEORADIUS and their variants): the members of the set at `key`
    /// inside `area`, found by scanning the score ranges of the cells [`crate::types::geo::Area::cells`]
    /// names through the score index, in that order (and by score, then member, inside a cell),
    /// never the whole set. With `any > 0` it stops once that many members are found. Run
    /// inline ([`crate::Db::read_here`]), it gives up ([`crate::types::geo::Found::Deferred`]) past
    /// [`crate::types::geo::INLINE_ROWS`] members scanned, for the caller to run it on a reader.
    ///
    /// # Errors
    /// [`Error::WrongType`] for a key of another type.
    pub fn geo_search(
        &self,
        db: u32,
        key: &[u8],
        area: &crate::types::geo::Area,
        any: usize,
    ) -> Result<crate::types::geo::Found> {
        let Some(z) = self.zmeta(db, key)? else {
            return Ok(crate::types::geo::Found::NoKey);
        };
        let budget = if crate::sql::sandbox::inline() {
            crate::types::geo::INLINE_ROWS
        } else {
            usize::MAX
        };
        let mut scanned = 0usize;
        let mut out = Vec::new();
        let mut st = prepare(self.conn, q::SCORE_CELL)?;
        for (min, max) in area.cells() {
            if any > 0 && out.len() >= any {
                break;
            }
            let mut rows = st.query((z.kid, min, max))?;
            while let Some(r) = rows.next()? {
                scanned += 1;
                if scanned > budget {
                    return Ok(crate::types::geo::Found::Deferred);
                }
                let score: f64 = r.get(1)?;
                if let Some((lon, lat, dist)) = area.test(score) {
                    out.push(crate::types::geo::GeoPoint {
                        member: blob(r, 0)?,
                        score,
                        lon,
                        lat,
                        dist,
                    });
                    if any > 0 && out.len() >= any {
                        break;
                    }
                }
            }
        }
        Ok(crate::types::geo::Found::Points(out))
    }

    /// ZRANDMEMBER: `count = None` picks one member; a positive count picks that many distinct
    /// members (the whole set, highest first, when it has no more); a negative count picks
    /// `-count` members, possibly repeated. `None` when the key does not exist.
    ///
    /// # Errors
    /// [`Error::WrongType`] for a key of another type.
    pub fn zrandmember(
        &self,
        db: u32,
        key: &[u8],
        count: Option<i64>,
    ) -> Result<Option<Vec<Scored>>> {
        let Some(z) = self.zmeta(db, key)? else {
            return Ok(None);
        };
        let size = z.count;
        let mut rng = rand::rng();
        let Some(count) = count else {
            let r = rng.random_range(0..size);
            return Ok(Some(self.z_ranks(z, &[r])?));
        };
        if count == 0 {
            return Ok(Some(Vec::new()));
        }
        if count >= size {
            // Redis returns the whole set, iterated from its end.
            let iv = Interval {
                lo: Pos::bottom(),
                hi: None,
            };
            return Ok(Some(self.z_fetch(z.kid, &iv, true, 0, -1)?));
        }
        let ranks: Vec<i64> = if count < 0 {
            let n = count.unsigned_abs().min(u64::from(u32::MAX)) as usize;
            (0..n).map(|_| rng.random_range(0..size)).collect()
        } else {
            // Floyd's sampling: `count` distinct ranks, then a shuffle.
            let mut chosen = std::collections::HashSet::with_capacity(count as usize);
            let mut out = Vec::with_capacity(count as usize);
            for j in size - count..size {
                let t = rng.random_range(0..=j);
                let pick = if chosen.insert(t) { t } else { j };
                if pick == j {
                    chosen.insert(j);
                }
                out.push(pick);
            }
            rand::seq::SliceRandom::shuffle(&mut out[..], &mut rng);
            out
        };
        Ok(Some(self.z_ranks(z, &ranks)?))
    }

    /// The members at the given ranks, in the order asked (ranks may repeat).
    pub(super) fn z_ranks(&self, z: ZMeta, ranks: &[i64]) -> Result<Vec<Scored>> {
        // Few picks: look each up. Many: read the set once.
        if (ranks.len() as i64).saturating_mul(64) < z.count {
            let mut out = Vec::with_capacity(ranks.len());
            for &r in ranks {
                if let Some(p) = self.z_at_rank(z, r)? {
                    out.push((p.member, p.score));
                }
            }
            return Ok(out);
        }
        let all = self.z_fetch(
            z.kid,
            &Interval {
                lo: Pos::bottom(),
                hi: None,
            },
            false,
            0,
            -1,
        )?;
        Ok(ranks
            .iter()
            .filter_map(|&r| all.get(r as usize).cloned())
            .collect())
    }

    /// ZSCAN: a listpack-encoded set comes whole in one page (in Redis's order), as Redis
    /// sends it; a larger one a page of `count` members at a time, in member byte order after
    /// `after`. `None` when the key does not exist.
    ///
    /// # Errors
    /// [`Error::WrongType`] for a key of another type.
    pub fn zscan(
        &self,
        db: u32,
        key: &[u8],
        after: Option<&[u8]>,
        count: usize,
        pattern: Option<&[u8]>,
    ) -> Result<Option<ZScanPage>> {
        let Some(z) = self.zmeta(db, key)? else {
            return Ok(None);
        };
        let pattern = pattern.filter(|p| *p != b"*");
        let keep = |m: &[u8]| pattern.is_none_or(|p| glob_match(p, m, false));
        let mut page = ZScanPage::default();
        if !self.z_skiplist(db, key)? {
            page.listpack = true;
            let all = self.z_fetch(
                z.kid,
                &Interval {
                    lo: Pos::bottom(),
                    hi: None,
                },
                false,
                0,
                -1,
            )?;
            page.items = all.into_iter().filter(|(m, _)| keep(m)).collect();
            return Ok(Some(page));
        }
        let limit = count.max(1) as i64;
        let mut st = prepare(self.conn, q::SCAN_PAGE)?;
        let rows = st.query_map((z.kid, after.unwrap_or(&[]), limit), scored_row)?;
        let mut seen = 0;
        let mut last = None;
        for r in rows {
            let (m, s) = r?;
            seen += 1;
            last = Some(m.clone());
            if keep(&m) {
                page.items.push((m, s));
            }
        }
        if seen == limit {
            page.next = last;
        }
        // An empty member sorts first and `member > ''` skips it: the first page includes it.
        if after.is_none() {
            if let Some(s) = self.z_score_of(z.kid, b"")? {
                if keep(b"") {
                    page.items.insert(0, (Bytes::new(), s));
                }
            }
        }
        Ok(Some(page))
    }

    /// One input of a set operation: its members and scores (already weighted), highest first
    /// as Redis iterates them; `None` for a missing key.
    pub(super) fn z_input(&self, db: u32, key: &[u8]) -> Result<Option<(KeyMeta, i64)>> {
        match self.meta(db, key)? {
            None => Ok(None),
            Some(m) if m.kind == KeyType::ZSet || m.kind == KeyType::Set => Ok(Some((m, m.count))),
            Some(_) => Err(Error::WrongType),
        }
    }

    pub(super) fn z_members_of(&self, m: &KeyMeta) -> Result<Vec<Scored>> {
        let mut out = Vec::with_capacity(m.count.max(0) as usize);
        if m.kind == KeyType::Set {
            let mut st = prepare(self.conn, q::SET_MEMBERS)?;
            let rows = st.query_map([m.id], |r| blob(r, 0))?;
            for r in rows {
                out.push((r?, 1.0));
            }
        } else {
            let mut st = prepare(self.conn, q::ALL_DESC)?;
            let rows = st.query_map([m.id], scored_row)?;
            for r in rows {
                out.push(r?);
            }
        }
        Ok(out)
    }

    pub(super) fn z_find_in(&self, m: &KeyMeta, member: &[u8]) -> Result<Option<f64>> {
        if m.kind == KeyType::Set {
            let found = prepare(self.conn, q::SET_HAS_MEMBER)?
                .query_row((m.id, member), |_| Ok(()))
                .optional()?;
            Ok(found.map(|()| 1.0))
        } else {
            self.z_score_of(m.id, member)
        }
    }

    /// ZUNION / ZINTER / ZDIFF: the result in Redis's order. Missing keys are empty inputs;
    /// plain sets count with score 1; `weights` (one per key, or empty for all 1) multiply
    /// the scores (a NaN product counts as 0). Also reports the longest member (for the
    /// encoding of a stored result). Every key is looked up first, in order, and `seen` told
    /// whether it was found (Redis counts these lookups as keyspace hits and misses; a key of
    /// another type is a hit, then WRONGTYPE).
    ///
    /// # Errors
    /// [`Error::WrongType`] when a key holds neither a sorted set nor a set.
    pub fn zsetop(
        &self,
        db: u32,
        op: SetOp,
        keys: &[Bytes],
        combine: &Combine,
        seen: &mut dyn FnMut(&[u8], bool),
    ) -> Result<Vec<Scored>> {
        Ok(self.z_setop(db, op, keys, combine, None, seen)?.0)
    }

    /// ZINTERCARD: the size of the intersection, counting stops at `limit` (0: no limit).
    ///
    /// # Errors
    /// [`Error::WrongType`] when a key holds neither a sorted set nor a set.
    pub fn zintercard(
        &self,
        db: u32,
        keys: &[Bytes],
        limit: u64,
        seen: &mut dyn FnMut(&[u8], bool),
    ) -> Result<i64> {
        Ok(self
            .z_setop(
                db,
                SetOp::Inter,
                keys,
                &Combine::default(),
                Some(limit),
                seen,
            )?
            .1)
    }

    pub(super) fn z_setop(
        &self,
        db: u32,
        op: SetOp,
        keys: &[Bytes],
        combine: &Combine,
        card_limit: Option<u64>,
        seen: &mut dyn FnMut(&[u8], bool),
    ) -> Result<(Vec<Scored>, i64)> {
        // Every key is looked up (and type-checked) first, as Redis does.
        let mut srcs: Vec<(Option<KeyMeta>, i64, f64)> = Vec::with_capacity(keys.len());
        for (i, k) in keys.iter().enumerate() {
            let found = match self.z_input(db, k) {
                Err(Error::WrongType) => {
                    seen(k, true);
                    return Err(Error::WrongType);
                }
                r => r?,
            };
            seen(k, found.is_some());
            let w = combine.weights.get(i).copied().unwrap_or(1.0);
            srcs.push(match found {
                Some((m, n)) => (Some(m), n, w),
                None => (None, 0, w),
            });
        }
        let aggregate = |target: &mut f64, val: f64| match combine.agg {
            Aggregate::Sum => {
                *target += val;
                if target.is_nan() {
                    *target = 0.0;
                }
            }
            Aggregate::Min => {
                if val < *target {
                    *target = val;
                }
            }
            Aggregate::Max => {
                if val > *target {
                    *target = val;
                }
            }
        };
        let weighted = |w: f64, s: f64| {
            let v = w * s;
            if v.is_nan() {
                0.0
            } else {
                v
            }
        };
        let mut out: Vec<Scored> = Vec::new();
        let mut card = 0i64;
        match op {
            SetOp::Union => {
                srcs.sort_by_key(|s| s.1);
                let mut acc: HashMap<Bytes, f64> = HashMap::new();
                let mut order: Vec<Bytes> = Vec::new();
                for (m, _, w) in &srcs {
                    let Some(m) = m else { continue };
                    for (member, score) in self.z_members_of(m)? {
                        let v = weighted(*w, score);
                        match acc.get_mut(&member) {
                            Some(t) => aggregate(t, v),
                            None => {
                                order.push(member.clone());
                                acc.insert(member, v);
                            }
                        }
                    }
                }
                out = order
                    .into_iter()
                    .map(|m| {
                        let s = acc[&m];
                        (m, s)
                    })
                    .collect();
            }
            SetOp::Inter => {
                srcs.sort_by_key(|s| s.1);
                if let Some((Some(first), _, w0)) = srcs.first() {
                    'members: for (member, score) in self.z_members_of(first)? {
                        let mut total = weighted(*w0, score);
                        for (m, _, w) in &srcs[1..] {
                            let Some(m) = m else { break 'members };
                            let Some(s) = self.z_find_in(m, &member)? else {
                                continue 'members;
                            };
                            aggregate(&mut total, s * w);
                        }
                        if let Some(limit) = card_limit {
                            card += 1;
                            if limit > 0 && card as u64 >= limit {
                                break;
                            }
                        } else {
                            out.push((member, total));
                        }
                    }
                }
            }
            SetOp::Diff => {
                if let Some((Some(first), _, _)) = srcs.first() {
                    'diff: for (member, score) in self.z_members_of(first)? {
                        for (m, _, _) in &srcs[1..] {
                            if let Some(m) = m {
                                if self.z_find_in(m, &member)?.is_some() {
                                    continue 'diff;
                                }
                            }
                        }
                        out.push((member, score));
                    }
                }
            }
        }
        out.sort_by(order);
        Ok((out, card))
    }
}
