//! The sorted-set family: ZADD and friends, ranges by rank, score and lex, pops, set operations.
//!
//! Storage (`schema/0002_collections.sql`): one row per member in `relis_zset (kid, member,
//! score)`, keyed by member (ZSCORE, ZADD's lookup), and the index `relis_zset_score (kid, score,
//! member)`, which is Redis's order: by score, then member bytes. Ranges by score and by lex walk
//! that index.
//!
//! Ranks. SQLite has no order-statistic B-tree, so a rank would be a count of every member
//! before it. Large sets keep *rank rows* in `relis_zrank (kid, lvl, score, member, n)`, on two
//! levels. Level 0 cuts the set, in index order, into blocks of about [`block_size`] members
//! (256): a row counts the members from its own `(score, member)` (inclusive; the first row
//! always starts at `(-inf, "")`, below every member) up to the next row's start. Level 1 cuts
//! the blocks into runs of about 64 blocks (16K members), each starting where a block starts.
//! A rank is then a sum over the runs before the member's run (tens of rows for a million
//! members), a sum over the blocks before its block inside that run (at most 128 rows) and a
//! count inside its block (at most 512 index entries); the member at a rank is found by walking
//! run counts, then block counts, then stepping inside the block. Every insert or removal
//! adjusts one block and one run (a score change does it twice: out, then in); a block or run
//! that grows past twice its size is cut at member / block boundaries, one that falls under
//! half is merged into its neighbour (the earlier row survives, so both levels keep starting at
//! the bottom). Range removals delete the rows inside the range and recount the block (from its
//! members) and run (from its blocks) that straddle its start. The writer finds the rows to
//! adjust in its own in-memory copy of them (see "The writer's copy of the rank rows" below).
//!
//! Sets at or below [`rank_threshold`] members (1024) keep no rank rows: a count over at most
//! that many index entries is as fast as the arithmetic, and small sets, the common case, then
//! touch no extra B-tree. Crossing the threshold upward cuts the set into blocks (one walk over
//! its members); the rows stay until the set shrinks to half the threshold, so a set hovering
//! around the threshold does not rebuild them again and again.
//! Below the threshold a set has rows only if it had them on the way down (one index probe).
//!
//! Encoding. Redis 7.0 keeps a small set as a listpack and converts it for good to a skiplist
//! once it holds more than 128 members or a member longer than 64 bytes; ZSCAN, OBJECT
//! ENCODING and ZRANDMEMBER behave differently for the two. The key row's `head` column (lists
//! use it for their head position) records that conversion for sorted sets: 1 once converted.

use crate::backend::sqlite::db::Db;
use crate::backend::sqlite::store::{KeyMeta, KeyType, Reader, Writer};
use crate::error::{Error, Result};
use crate::glob::glob_match;
use bytes::Bytes;
use rand::Rng;
use rusqlite::{OptionalExtension, Row};
use rustc_hash::FxHashMap;
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};

/// Redis's `zset-max-listpack-entries` default: more members convert a set to a skiplist.
pub const LISTPACK_ENTRIES: i64 = 128;
/// Redis's `zset-max-listpack-value` default: a longer member converts a set to a skiplist.
pub const LISTPACK_VALUE: usize = 64;

static RANK_THRESHOLD: AtomicI64 = AtomicI64::new(1024);
static BLOCK_SIZE: AtomicI64 = AtomicI64::new(256);
static FANOUT: AtomicI64 = AtomicI64::new(64);

/// Sets with more members than this get rank blocks; they keep them until they shrink to half
/// of it (so a set going back and forth across the threshold does not rebuild them each time).
pub fn rank_threshold() -> i64 {
    RANK_THRESHOLD.load(Ordering::Relaxed)
}

/// The target number of members per level-0 rank block (blocks hold between half and twice as
/// many).
pub fn block_size() -> i64 {
    BLOCK_SIZE.load(Ordering::Relaxed)
}

/// The target number of members per level-1 run: `fanout` blocks.
fn super_size() -> i64 {
    block_size() * FANOUT.load(Ordering::Relaxed)
}

/// Changes the rank-block parameters (threshold, block size, blocks per level-1 run), for
/// tests that want every regime with small sets. Only call it before any sorted set exists:
/// existing sets were cut with the old parameters.
#[doc(hidden)]
pub fn set_rank_blocks(threshold: i64, block: i64, fanout: i64) {
    RANK_THRESHOLD.store(threshold.max(2), Ordering::Relaxed);
    BLOCK_SIZE.store(block.max(2), Ordering::Relaxed);
    FANOUT.store(fanout.max(2), Ordering::Relaxed);
}

/// ZADD's NX / XX.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ZAddCond {
    /// Add new members and update existing ones.
    #[default]
    Always,
    /// NX: only add new members.
    Nx,
    /// XX: only update existing members.
    Xx,
}

/// ZADD's GT / LT.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ZAddCmp {
    /// Any new score.
    #[default]
    Any,
    /// GT: only update when the new score is greater.
    Gt,
    /// LT: only update when the new score is less.
    Lt,
}

/// Options of ZADD (ZINCRBY is ZADD with `incr`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ZAddOptions {
    /// NX / XX.
    pub cond: ZAddCond,
    /// GT / LT.
    pub cmp: ZAddCmp,
    /// CH: count updated members as well as added ones.
    pub ch: bool,
    /// INCR: add the score to the current one (a single pair).
    pub incr: bool,
}

/// What ZADD did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ZAddOutcome {
    /// Without INCR: members added (plus updated, with CH).
    Count(i64),
    /// With INCR: the new score, or `None` when NX/XX/GT/LT prevented the change.
    Score(Option<f64>),
    /// With INCR: the sum is not a number (`inf + -inf`); nothing changed.
    Nan,
}

/// A score interval (ZRANGEBYSCORE's `min max`, `(` marking an exclusive end).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreRange {
    /// Lower end.
    pub min: f64,
    /// Whether the lower end is excluded.
    pub min_ex: bool,
    /// Upper end.
    pub max: f64,
    /// Whether the upper end is excluded.
    pub max_ex: bool,
}

impl ScoreRange {
    /// Every score.
    pub const ALL: ScoreRange = ScoreRange {
        min: f64::NEG_INFINITY,
        min_ex: false,
        max: f64::INFINITY,
        max_ex: false,
    };
}

/// One end of a lex interval (ZRANGEBYLEX's `-`, `+`, `[member`, `(member`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LexBound {
    /// `-`: below every member.
    Min,
    /// `+`: above every member.
    Max,
    /// `[member`: inclusive.
    Incl(Bytes),
    /// `(member`: exclusive.
    Excl(Bytes),
}

/// A lex interval. Meaningful when all members have the same score, as Redis documents; with
/// mixed scores Relis gives the answers of Redis's listpack encoding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexRange {
    /// Lower end.
    pub min: LexBound,
    /// Upper end.
    pub max: LexBound,
}

/// What a range selects.
#[derive(Clone, Debug, PartialEq)]
pub enum ZRangeBy {
    /// By rank, `start` and `stop` inclusive, negative counting from the end.
    Rank(i64, i64),
    /// By score.
    Score(ScoreRange),
    /// By member, lexicographically.
    Lex(LexRange),
}

/// A ZRANGE: what it selects, in which direction, and LIMIT.
#[derive(Clone, Debug, PartialEq)]
pub struct ZRange {
    /// The selection.
    pub by: ZRangeBy,
    /// REV: from the highest score down (ranks count from the top).
    pub rev: bool,
    /// LIMIT offset count (score and lex only): a negative offset selects nothing, a negative
    /// count means all.
    pub limit: Option<(i64, i64)>,
}

/// How ZUNION/ZINTER combine the scores of a member found in several inputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Aggregate {
    /// Add them (`inf + -inf` is 0).
    #[default]
    Sum,
    /// Keep the least.
    Min,
    /// Keep the greatest.
    Max,
}

/// How ZUNION/ZINTER weigh and combine scores.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Combine {
    /// One weight per input (empty: all 1); a NaN product counts as 0.
    pub weights: Vec<f64>,
    /// AGGREGATE.
    pub agg: Aggregate,
}

/// A set operation over sorted sets (and plain sets, whose members score 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetOp {
    /// ZUNION.
    Union,
    /// ZINTER.
    Inter,
    /// ZDIFF: the first input minus the others.
    Diff,
}

/// One page of ZSCAN.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ZScanPage {
    /// Members and scores, after MATCH.
    pub items: Vec<(Bytes, f64)>,
    /// Where the next page starts (the last member examined), or `None` when done.
    pub next: Option<Bytes>,
    /// Whether the set is listpack-encoded in Redis's terms (Redis then shows the scores as
    /// the listpack stores them: integral ones as integers).
    pub listpack: bool,
}

/// A member with its score.
pub type Scored = (Bytes, f64);

/// A position in Redis's order: `(score, member)`.
#[derive(Clone, Debug, PartialEq)]
struct Pos {
    score: f64,
    member: Bytes,
}

impl Pos {
    fn new(score: f64, member: impl Into<Bytes>) -> Pos {
        Pos {
            score,
            member: member.into(),
        }
    }

    /// Below every member: where the first rank block starts.
    fn bottom() -> Pos {
        Pos::new(f64::NEG_INFINITY, Bytes::new())
    }

    /// The first position after this one: the same score and the member followed by a zero
    /// byte, the least byte string greater than the member.
    fn successor(&self) -> Pos {
        let mut m = Vec::with_capacity(self.member.len() + 1);
        m.extend_from_slice(&self.member);
        m.push(0);
        Pos::new(self.score, m)
    }
}

/// A half-open interval of positions, `[lo, hi)`; `hi = None` runs to the end.
#[derive(Clone, Debug)]
struct Interval {
    lo: Pos,
    hi: Option<Pos>,
}

fn blob(r: &Row<'_>, i: usize) -> rusqlite::Result<Bytes> {
    Ok(Bytes::copy_from_slice(r.get_ref(i)?.as_blob()?))
}

fn pos_row(r: &Row<'_>) -> rusqlite::Result<Pos> {
    pos_row_at(r, 0)
}

/// The position in columns `i` (score) and `i + 1` (member).
fn pos_row_at(r: &Row<'_>, i: usize) -> rusqlite::Result<Pos> {
    Ok(Pos::new(r.get(i)?, blob(r, i + 1)?))
}

fn scored_row(r: &Row<'_>) -> rusqlite::Result<Scored> {
    Ok((blob(r, 0)?, r.get(1)?))
}

/// Redis's order on scored members (no NaN ever reaches it; `-0` equals `0`).
fn order(a: &Scored, b: &Scored) -> std::cmp::Ordering {
    a.1.partial_cmp(&b.1)
        .unwrap_or(std::cmp::Ordering::Equal)
        .then_with(|| a.0.cmp(&b.0))
}

impl LexBound {
    /// Whether `m` is at or above this bound used as a minimum.
    fn below(&self, m: &[u8]) -> bool {
        match self {
            LexBound::Min => true,
            LexBound::Max => false,
            LexBound::Incl(b) => m >= &b[..],
            LexBound::Excl(b) => m > &b[..],
        }
    }

    /// Whether `m` is at or below this bound used as a maximum.
    fn above(&self, m: &[u8]) -> bool {
        match self {
            LexBound::Min => false,
            LexBound::Max => true,
            LexBound::Incl(b) => m <= &b[..],
            LexBound::Excl(b) => m < &b[..],
        }
    }
}

impl LexRange {
    /// Whether the bounds themselves leave nothing between them (Redis's `sdscmplex` test, in
    /// which `-` and `+` count as exclusive ends).
    fn is_empty(&self) -> bool {
        use std::cmp::Ordering::*;
        use LexBound::*;
        let cmp = match (&self.min, &self.max) {
            (Min, Min) | (Max, Max) => Equal,
            (Min, _) | (_, Max) => Less,
            (Max, _) | (_, Min) => Greater,
            (Incl(a) | Excl(a), Incl(b) | Excl(b)) => a.cmp(b),
        };
        let ex = !matches!(self.min, Incl(_)) || !matches!(self.max, Incl(_));
        cmp == Greater || (cmp == Equal && ex)
    }
}

impl ScoreRange {
    /// The positions this range covers, or `None` when it is empty whatever the set holds.
    fn interval(&self) -> Option<Interval> {
        if self.min > self.max || (self.min == self.max && (self.min_ex || self.max_ex)) {
            return None;
        }
        let lo = if self.min_ex {
            if self.min == f64::INFINITY {
                return None;
            }
            Pos::new(self.min.next_up(), Bytes::new())
        } else {
            Pos::new(self.min, Bytes::new())
        };
        let hi = if self.max_ex {
            Some(Pos::new(self.max, Bytes::new()))
        } else if self.max == f64::INFINITY {
            None
        } else {
            Some(Pos::new(self.max.next_up(), Bytes::new()))
        };
        Some(Interval { lo, hi })
    }
}

/// A sorted set's identity and size, as the reads need them.
#[derive(Clone, Copy, Debug)]
struct ZMeta {
    kid: i64,
    count: i64,
    /// Whether it has rank blocks.
    blocks: bool,
}

impl ZMeta {
    fn blocks(&self) -> bool {
        self.blocks
    }
}

// ---------------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------------

impl Reader<'_> {
    /// The live sorted set at `key`: `None` when missing, [`Error::WrongType`] for another type.
    fn zmeta(&self, db: u32, key: &[u8]) -> Result<Option<ZMeta>> {
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
    fn z_has_blocks(&self, kid: i64, count: i64) -> Result<bool> {
        let t = rank_threshold();
        if count > t {
            return Ok(true);
        }
        if count <= t / 2 {
            return Ok(false);
        }
        Ok(crate::backend::sqlite::stmt::prepare(
            self.conn,
            "SELECT 1 FROM main.relis_zrank WHERE kid = ?1 AND lvl = 0 LIMIT 1",
        )?
        .query_row([kid], |_| Ok(()))
        .optional()?
        .is_some())
    }

    /// Whether the set at `kid` is skiplist-encoded in Redis's terms (see the module doc).
    fn z_skiplist(&self, db: u32, key: &[u8]) -> Result<bool> {
        Ok(crate::backend::sqlite::stmt::prepare(
            self.conn,
            "SELECT head FROM main.relis_keys WHERE db = ?1 AND key = ?2",
        )?
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

    fn z_score_of(&self, kid: i64, member: &[u8]) -> Result<Option<f64>> {
        Ok(crate::backend::sqlite::stmt::prepare(
            self.conn,
            "SELECT score FROM main.relis_zset WHERE kid = ?1 AND member = ?2",
        )?
        .query_row((kid, member), |r| r.get(0))
        .optional()?)
    }

    fn z_first(&self, kid: i64, desc: bool) -> Result<Option<Pos>> {
        let sql = if desc {
            "SELECT score, member FROM main.relis_zset WHERE kid = ?1
             ORDER BY score DESC, member DESC LIMIT 1"
        } else {
            "SELECT score, member FROM main.relis_zset WHERE kid = ?1 ORDER BY score, member LIMIT 1"
        };
        Ok(crate::backend::sqlite::stmt::prepare(self.conn, sql)?
            .query_row([kid], pos_row)
            .optional()?)
    }

    /// The number of members before `p` in Redis's order: with rank blocks, the level-1 runs
    /// before `p`'s run, the blocks before `p`'s block inside that run, and the members before
    /// `p` inside its block.
    fn z_count_lt(&self, z: ZMeta, p: &Pos) -> Result<i64> {
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
    fn z_members_between(&self, kid: i64, lo: Option<&Pos>, hi: Option<&Pos>) -> Result<i64> {
        let q =
            |sql: &'static str, p: &[&dyn rusqlite::ToSql]| -> Result<i64> {
                Ok(crate::backend::sqlite::stmt::prepare(self.conn, sql)?
                    .query_row(p, |r| r.get(0))?)
            };
        let lo = lo.filter(|l| **l != Pos::bottom());
        Ok(match (lo, hi) {
            (None, None) => q("SELECT count(*) FROM main.relis_zset WHERE kid = ?1", &[&kid])?,
            (None, Some(h)) => {
                q(
                    "SELECT count(*) FROM main.relis_zset WHERE kid = ?1 AND score < ?2",
                    &[&kid, &h.score],
                )? + q(
                    "SELECT count(*) FROM main.relis_zset WHERE kid = ?1 AND score = ?2 AND member < ?3",
                    &[&kid, &h.score, &&h.member[..]],
                )?
            }
            (Some(l), None) => q(
                "SELECT count(*) FROM main.relis_zset WHERE kid = ?1 AND score = ?2 AND member >= ?3",
                &[&kid, &l.score, &&l.member[..]],
            )? + q(
                "SELECT count(*) FROM main.relis_zset WHERE kid = ?1 AND score > ?2",
                &[&kid, &l.score],
            )?,
            (Some(l), Some(h)) if l.score == h.score => q(
                "SELECT count(*) FROM main.relis_zset WHERE kid = ?1 AND score = ?2
                 AND member >= ?3 AND member < ?4",
                &[&kid, &l.score, &&l.member[..], &&h.member[..]],
            )?,
            (Some(l), Some(h)) => {
                if h.score < l.score {
                    return Ok(0);
                }
                q(
                    "SELECT count(*) FROM main.relis_zset WHERE kid = ?1 AND score = ?2 AND member >= ?3",
                    &[&kid, &l.score, &&l.member[..]],
                )? + q(
                    "SELECT count(*) FROM main.relis_zset WHERE kid = ?1 AND score > ?2 AND score < ?3",
                    &[&kid, &l.score, &h.score],
                )? + q(
                    "SELECT count(*) FROM main.relis_zset WHERE kid = ?1 AND score = ?2 AND member < ?3",
                    &[&kid, &h.score, &&h.member[..]],
                )?
            }
        })
    }

    /// The total of the level-`lvl` rank rows starting in `[lo, hi)`, summed as
    /// [`Reader::z_members_between`] counts.
    fn z_rows_between(
        &self,
        kid: i64,
        lvl: i64,
        lo: Option<&Pos>,
        hi: Option<&Pos>,
    ) -> Result<i64> {
        flush_pending(self.conn)?; // it reads rank counts
        let q =
            |sql: &'static str, p: &[&dyn rusqlite::ToSql]| -> Result<i64> {
                Ok(crate::backend::sqlite::stmt::prepare(self.conn, sql)?
                    .query_row(p, |r| r.get(0))?)
            };
        let lo = lo.filter(|l| **l != Pos::bottom());
        Ok(match (lo, hi) {
            (None, None) => q(
                "SELECT coalesce(sum(n), 0) FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2",
                &[&kid, &lvl],
            )?,
            (None, Some(h)) => {
                q(
                    "SELECT coalesce(sum(n), 0) FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
                     AND score < ?3",
                    &[&kid, &lvl, &h.score],
                )? + q(
                    "SELECT coalesce(sum(n), 0) FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
                     AND score = ?3 AND member < ?4",
                    &[&kid, &lvl, &h.score, &&h.member[..]],
                )?
            }
            (Some(l), None) => {
                q(
                    "SELECT coalesce(sum(n), 0) FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
                     AND score = ?3 AND member >= ?4",
                    &[&kid, &lvl, &l.score, &&l.member[..]],
                )? + q(
                    "SELECT coalesce(sum(n), 0) FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
                     AND score > ?3",
                    &[&kid, &lvl, &l.score],
                )?
            }
            (Some(l), Some(h)) if l.score == h.score => q(
                "SELECT coalesce(sum(n), 0) FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
                 AND score = ?3 AND member >= ?4 AND member < ?5",
                &[&kid, &lvl, &l.score, &&l.member[..], &&h.member[..]],
            )?,
            (Some(l), Some(h)) => {
                if h.score < l.score {
                    return Ok(0);
                }
                q(
                    "SELECT coalesce(sum(n), 0) FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
                     AND score = ?3 AND member >= ?4",
                    &[&kid, &lvl, &l.score, &&l.member[..]],
                )? + q(
                    "SELECT coalesce(sum(n), 0) FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
                     AND score > ?3 AND score < ?4",
                    &[&kid, &lvl, &l.score, &h.score],
                )? + q(
                    "SELECT coalesce(sum(n), 0) FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
                     AND score = ?3 AND member < ?4",
                    &[&kid, &lvl, &h.score, &&h.member[..]],
                )?
            }
        })
    }

    /// The level-`lvl` row whose run holds position `p` (the last starting at or before it),
    /// with its count.
    fn z_blk_containing(&self, kid: i64, lvl: i64, p: &Pos) -> Result<(Pos, i64)> {
        flush_pending(self.conn)?; // it reads rank counts
        crate::backend::sqlite::stmt::prepare(
            self.conn,
            "SELECT score, member, n FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
                 AND (score, member) <= (?3, ?4) ORDER BY score DESC, member DESC LIMIT 1",
        )?
        .query_row((kid, lvl, p.score, &p.member[..]), |r| {
            Ok((pos_row(r)?, r.get(2)?))
        })
        .optional()?
        .ok_or_else(|| Error::Storage(format!("sorted set {kid} has no level-{lvl} rank row")))
    }

    /// The member at rank `r` (0-based, ascending).
    fn z_at_rank(&self, z: ZMeta, r: i64) -> Result<Option<Pos>> {
        if r < 0 || r >= z.count {
            return Ok(None);
        }
        let (start, offset) = if z.blocks() {
            self.z_block_of_rank(z, r)?
        } else {
            (Pos::bottom(), r)
        };
        Ok(crate::backend::sqlite::stmt::prepare(
            self.conn,
            "SELECT score, member FROM main.relis_zset WHERE kid = ?1 AND (score, member) >= (?2, ?3)
                 ORDER BY score, member LIMIT 1 OFFSET ?4",
        )?
        .query_row((z.kid, start.score, &start.member[..], offset), pos_row)
        .optional()?)
    }

    /// The block holding rank `r` and `r`'s offset inside it: walks the level-1 counts from
    /// the nearer end to `r`'s run, then the block counts inside that run.
    fn z_block_of_rank(&self, z: ZMeta, r: i64) -> Result<(Pos, i64)> {
        flush_pending(self.conn)?; // it reads rank counts
        let from_top = r >= z.count / 2;
        let sql = if from_top {
            "SELECT score, member, n FROM main.relis_zrank WHERE kid = ?1 AND lvl = 1
             ORDER BY score DESC, member DESC"
        } else {
            "SELECT score, member, n FROM main.relis_zrank WHERE kid = ?1 AND lvl = 1
             ORDER BY score, member"
        };
        let mut run = None;
        {
            let mut st = crate::backend::sqlite::stmt::prepare(self.conn, sql)?;
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
        let mut st = crate::backend::sqlite::stmt::prepare(
            self.conn,
            "SELECT score, member, n FROM main.relis_zrank WHERE kid = ?1 AND lvl = 0
             AND (score, member) >= (?2, ?3) ORDER BY score, member",
        )?;
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
    fn z_lex_first(&self, kid: i64, min: &LexBound) -> Result<Option<Pos>> {
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
                        "SELECT member FROM main.relis_zset WHERE kid = ?1 AND score = ?2 AND member >= ?3
                         ORDER BY member LIMIT 1"
                    } else {
                        "SELECT member FROM main.relis_zset WHERE kid = ?1 AND score = ?2 AND member > ?3
                         ORDER BY member LIMIT 1"
                    };
                    crate::backend::sqlite::stmt::prepare(self.conn, sql)?
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
            let next: Option<f64> = crate::backend::sqlite::stmt::prepare(
                self.conn,
                "SELECT score FROM main.relis_zset WHERE kid = ?1 AND score > ?2
                     ORDER BY score LIMIT 1",
            )?
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
    fn z_lex_last(&self, kid: i64, max: &LexBound) -> Result<Option<Pos>> {
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
                        "SELECT member FROM main.relis_zset WHERE kid = ?1 AND score = ?2 AND member <= ?3
                         ORDER BY member DESC LIMIT 1"
                    } else {
                        "SELECT member FROM main.relis_zset WHERE kid = ?1 AND score = ?2 AND member < ?3
                         ORDER BY member DESC LIMIT 1"
                    };
                    crate::backend::sqlite::stmt::prepare(self.conn, sql)?
                        .query_row((kid, score, &b[..]), |r| blob(r, 0))
                        .optional()?
                }
            };
            if let Some(m) = found {
                return Ok(Some(Pos::new(score, m)));
            }
            let next: Option<f64> = crate::backend::sqlite::stmt::prepare(
                self.conn,
                "SELECT score FROM main.relis_zset WHERE kid = ?1 AND score < ?2
                     ORDER BY score DESC LIMIT 1",
            )?
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
    fn z_walk_while(
        &self,
        kid: i64,
        from: &Pos,
        desc: bool,
        keep: impl Fn(&[u8]) -> bool,
    ) -> Result<Option<Pos>> {
        let sql = if desc {
            "SELECT score, member FROM main.relis_zset WHERE kid = ?1 AND (score, member) <= (?2, ?3)
             ORDER BY score DESC, member DESC"
        } else {
            "SELECT score, member FROM main.relis_zset WHERE kid = ?1 AND (score, member) >= (?2, ?3)
             ORDER BY score, member"
        };
        let mut st = crate::backend::sqlite::stmt::prepare(self.conn, sql)?;
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
    fn z_lex_span(&self, kid: i64, range: &LexRange, rev: bool) -> Result<Option<(Pos, Pos)>> {
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
    fn z_rank_span(count: i64, start: i64, stop: i64, rev: bool) -> Option<(i64, i64)> {
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
    fn z_fetch(
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
                let mut st = crate::backend::sqlite::stmt::prepare(self.conn, $sql)?;
                let rows = st.query_map($params, scored_row)?;
                for r in rows {
                    out.push(r?);
                }
            }};
        }
        match (&iv.hi, desc) {
            (None, false) => run!(
                "SELECT member, score FROM main.relis_zset WHERE kid = ?1 AND (score, member) >= (?2, ?3)
                 ORDER BY score, member LIMIT ?4 OFFSET ?5",
                (kid, lo.score, &lo.member[..], limit, offset)
            ),
            (None, true) => run!(
                "SELECT member, score FROM main.relis_zset WHERE kid = ?1 AND (score, member) >= (?2, ?3)
                 ORDER BY score DESC, member DESC LIMIT ?4 OFFSET ?5",
                (kid, lo.score, &lo.member[..], limit, offset)
            ),
            (Some(hi), false) => run!(
                "SELECT member, score FROM main.relis_zset WHERE kid = ?1 AND (score, member) >= (?2, ?3)
                 AND (score, member) < (?4, ?5) ORDER BY score, member LIMIT ?6 OFFSET ?7",
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
                "SELECT member, score FROM main.relis_zset WHERE kid = ?1 AND (score, member) >= (?2, ?3)
                 AND (score, member) < (?4, ?5) ORDER BY score DESC, member DESC
                 LIMIT ?6 OFFSET ?7",
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
    fn z_count_in(&self, z: ZMeta, iv: &Interval) -> Result<i64> {
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
    fn z_rank_interval(&self, z: ZMeta, a: i64, b: i64) -> Result<Option<Interval>> {
        let Some(lo) = self.z_at_rank(z, a)? else {
            return Ok(None);
        };
        let hi = self.z_at_rank(z, b + 1)?;
        Ok(Some(Interval { lo, hi }))
    }

    /// The members a range selects, in reply order.
    fn z_select(&self, z: ZMeta, spec: &ZRange) -> Result<Vec<Scored>> {
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
    fn z_interval_of(&self, z: ZMeta, by: &ZRangeBy) -> Result<Option<Interval>> {
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
        let mut st = crate::backend::sqlite::stmt::prepare(
            self.conn,
            "SELECT member, score FROM main.relis_zset WHERE kid = ?1 AND score >= ?2
             AND score < ?3 ORDER BY score, member",
        )?;
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
    fn z_ranks(&self, z: ZMeta, ranks: &[i64]) -> Result<Vec<Scored>> {
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
        let mut st = crate::backend::sqlite::stmt::prepare(
            self.conn,
            "SELECT member, score FROM main.relis_zset WHERE kid = ?1 AND member > ?2
             ORDER BY member LIMIT ?3",
        )?;
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
    fn z_input(&self, db: u32, key: &[u8]) -> Result<Option<(KeyMeta, i64)>> {
        match self.meta(db, key)? {
            None => Ok(None),
            Some(m) if m.kind == KeyType::ZSet || m.kind == KeyType::Set => Ok(Some((m, m.count))),
            Some(_) => Err(Error::WrongType),
        }
    }

    fn z_members_of(&self, m: &KeyMeta) -> Result<Vec<Scored>> {
        let mut out = Vec::with_capacity(m.count.max(0) as usize);
        if m.kind == KeyType::Set {
            let mut st = crate::backend::sqlite::stmt::prepare(
                self.conn,
                "SELECT member FROM main.relis_set WHERE kid = ?1",
            )?;
            let rows = st.query_map([m.id], |r| blob(r, 0))?;
            for r in rows {
                out.push((r?, 1.0));
            }
        } else {
            let mut st = crate::backend::sqlite::stmt::prepare(
                self.conn,
                "SELECT member, score FROM main.relis_zset WHERE kid = ?1
                 ORDER BY score DESC, member DESC",
            )?;
            let rows = st.query_map([m.id], scored_row)?;
            for r in rows {
                out.push(r?);
            }
        }
        Ok(out)
    }

    fn z_find_in(&self, m: &KeyMeta, member: &[u8]) -> Result<Option<f64>> {
        if m.kind == KeyType::Set {
            let found = crate::backend::sqlite::stmt::prepare(
                self.conn,
                "SELECT 1 FROM main.relis_set WHERE kid = ?1 AND member = ?2",
            )?
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

    fn z_setop(
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

// ---------------------------------------------------------------------------------------------
// Writes
// ---------------------------------------------------------------------------------------------

thread_local! {
    /// How often ZADD's recent members on this writer were already in their set: a saturating
    /// count, up for each found, down for each added.
    static ZADD_FOUND: std::cell::Cell<u8> = const { std::cell::Cell::new(0) };
}

/// Whether ZADD should look a member up before adding it: yes when recent members were mostly
/// there already (score updates: a failed INSERT would be a wasted seek), no when they were
/// mostly new (an INSERT that succeeds spares the lookup).
fn zadd_finds_members() -> bool {
    ZADD_FOUND.get() >= 2
}

/// Records whether ZADD found a member already in its set.
fn zadd_found(found: bool) {
    let n = ZADD_FOUND.get();
    ZADD_FOUND.set(if found {
        (n + 1).min(3)
    } else {
        n.saturating_sub(1)
    });
}

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
// The copies live in a thread-local: the writer thread keeps its one connection for its whole
// life, and each copy is tagged with that connection all the same.

/// A rank row's start as a sort key, in Redis's order: the score (`-0` as `0`) as bits that
/// sort like the number, then the member's bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
struct RankKey(u64, Bytes);

/// `score`'s bits, flipped so that they sort like the numbers (`-0` as `0`; never NaN).
fn score_bits(score: f64) -> u64 {
    let bits = if score == 0.0 { 0 } else { score.to_bits() };
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

impl RankKey {
    fn of(p: &Pos) -> RankKey {
        RankKey(score_bits(p.score), p.member.clone())
    }

    fn pos(&self) -> Pos {
        let bits = if self.0 >> 63 == 1 {
            self.0 & !(1 << 63)
        } else {
            !self.0
        };
        Pos::new(f64::from_bits(bits), self.1.clone())
    }

    fn cmp_to(&self, bits: u64, member: &[u8]) -> std::cmp::Ordering {
        self.0.cmp(&bits).then_with(|| self.1[..].cmp(member))
    }
}

/// A rank row in the writer's copy: its start, its count and its rowid (count changes are
/// written by rowid).
#[derive(Clone, Debug, PartialEq, Eq)]
struct RankRow {
    start: RankKey,
    n: i64,
    id: i64,
}

/// One level of a set's rank rows, sorted by start (a few hundred rows for a million members:
/// binary searches, and a rare insertion or removal moves the rest).
#[derive(Clone, Debug, Default)]
struct RankLevel(Vec<RankRow>);

impl RankLevel {
    /// Where a row starting at `p` is, or would go.
    fn find(&self, p: &Pos) -> std::result::Result<usize, usize> {
        let bits = score_bits(p.score);
        self.0.binary_search_by(|r| r.start.cmp_to(bits, &p.member))
    }

    /// The number of rows starting before `p`, or at it too if `inclusive` (`None`: all rows).
    fn upto(&self, p: Option<&Pos>, inclusive: bool) -> usize {
        match p {
            None => self.0.len(),
            Some(p) => match self.find(p) {
                Ok(i) if inclusive => i + 1,
                Ok(i) | Err(i) => i,
            },
        }
    }

    /// The row holding `p`: the last starting at or before it.
    fn holding(&self, p: &Pos) -> Option<(Pos, i64)> {
        let i = self.upto(Some(p), true).checked_sub(1)?;
        let r = &self.0[i];
        Some((r.start.pos(), r.n))
    }

    /// Sets the count of the row starting at `start`; its rowid, if there is one.
    fn set(&mut self, start: &Pos, n: i64) -> Option<i64> {
        let i = self.find(start).ok()?;
        self.0[i].n = n;
        Some(self.0[i].id)
    }

    fn insert(&mut self, start: &Pos, n: i64, id: i64) {
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

    fn remove(&mut self, start: &Pos) {
        if let Ok(i) = self.find(start) {
            self.0.remove(i);
        }
    }

    /// Removes the rows after `start` and before `hi` (all after it: `None`).
    fn remove_after(&mut self, start: &Pos, hi: Option<&Pos>) {
        let from = self.upto(Some(start), true);
        let to = self.upto(hi, false).max(from);
        self.0.drain(from..to);
    }

    fn total(&self) -> i64 {
        self.0.iter().map(|r| r.n).sum()
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn rows(&self) -> Vec<(Pos, i64, i64)> {
        self.0.iter().map(|r| (r.start.pos(), r.n, r.id)).collect()
    }
}

/// The rank rows of one sorted set, both levels.
#[derive(Debug, Default)]
struct RankCopy {
    /// The key row's version this copy is known to match; `None` while a write changes it.
    version: Option<i64>,
    levels: [RankLevel; 2],
}

impl RankCopy {
    fn rows(&self) -> usize {
        self.levels[0].len() + self.levels[1].len()
    }
}

/// The copies the writer thread keeps, for the one connection it writes with.
#[derive(Default)]
struct RankCopies {
    /// The connection the copies describe (its address).
    conn: usize,
    sets: FxHashMap<i64, RankCopy>,
    /// Counts changed in copies and not yet written to their rows: rowid -> (set, count). See
    /// "Pending counts" below.
    pending: FxHashMap<i64, (i64, i64)>,
}

/// At most this many rank rows are kept in copies (about 10 MB: the rows of a 16M-member set);
/// loading a set past it drops the others.
const COPY_ROWS: usize = 1 << 16;

/// At most about this many copies are kept; past it, those recording that a set has no rank
/// rows are dropped.
const COPY_SETS: usize = 4096;

thread_local! {
    static RANK_COPIES: std::cell::RefCell<RankCopies> = Default::default();
}

/// Runs `f` on the writer's copies for `conn` (forgetting copies made for another connection).
fn with_copies<R>(conn: &rusqlite::Connection, f: impl FnOnce(&mut RankCopies) -> R) -> R {
    RANK_COPIES.with(|c| {
        let mut c = c.borrow_mut();
        let addr = conn as *const rusqlite::Connection as usize;
        if c.conn != addr {
            debug_assert!(
                c.pending.is_empty(),
                "pending rank counts of another connection"
            );
            c.sets.clear();
            c.pending.clear();
            c.conn = addr;
        }
        f(&mut c)
    })
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
pub(crate) fn flush_pending(conn: &rusqlite::Connection) -> Result<()> {
    let addr = conn as *const rusqlite::Connection as usize;
    let mut rows: Vec<(i64, i64)> = RANK_COPIES.with(|c| {
        let c = c.borrow();
        if c.conn != addr {
            return Vec::new();
        }
        c.pending.iter().map(|(&id, &(_, n))| (id, n)).collect()
    });
    if rows.is_empty() {
        return Ok(());
    }
    // In rowid order: neighbouring rows share pages.
    rows.sort_unstable();
    let mut st = crate::backend::sqlite::stmt::prepare(
        conn,
        "UPDATE main.relis_zrank SET n = ?2 WHERE id = ?1",
    )?;
    for (id, n) in rows {
        st.execute((id, n))?;
    }
    RANK_COPIES.with(|c| c.borrow_mut().pending.clear());
    Ok(())
}

/// Forgets the pending rank counts of `conn` and the copies they were made in: what made them
/// was rolled back.
pub(crate) fn discard_pending(conn: &rusqlite::Connection) {
    let addr = conn as *const rusqlite::Connection as usize;
    RANK_COPIES.with(|c| {
        let mut c = c.borrow_mut();
        if c.conn != addr || c.pending.is_empty() {
            return;
        }
        let RankCopies { sets, pending, .. } = &mut *c;
        for (_, (kid, _)) in pending.drain() {
            sets.remove(&kid);
        }
    });
}

/// Forgets the writer's copy of set `kid` and its pending counts: its rank rows are being
/// deleted.
pub(crate) fn forget_copy(conn: &rusqlite::Connection, kid: i64) {
    let addr = conn as *const rusqlite::Connection as usize;
    RANK_COPIES.with(|c| {
        let mut c = c.borrow_mut();
        if c.conn == addr {
            c.sets.remove(&kid);
            c.pending.retain(|_, (k, _)| *k != kid);
        }
    });
}

impl Reader<'_> {
    /// Checks the writer's copy of the set `kid`'s rank rows, if this connection has one that
    /// claims to be current at `version`, against the rows themselves. For [`Reader::zcheck`].
    fn z_copy_check(&self, kid: i64, version: i64) -> Result<()> {
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
        let mut st = crate::backend::sqlite::stmt::prepare(
            self.conn,
            "SELECT lvl, score, member, n, id FROM main.relis_zrank WHERE kid = ?1
             ORDER BY lvl, score, member",
        )?;
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

/// A sorted set being written: its key row's state, kept up to date as members change.
struct ZW<'k> {
    db: u32,
    key: &'k [u8],
    kid: i64,
    /// Whether the key row exists yet (a new set's row is written when it is done).
    exists: bool,
    count: i64,
    /// Whether rank blocks are being maintained member by member (the set had them when the
    /// write began).
    blocks: bool,
    /// Redis's skiplist encoding (the key row's `head`).
    skiplist: bool,
    changed: bool,
}

impl ZW<'_> {
    fn meta(&self) -> ZMeta {
        ZMeta {
            kid: self.kid,
            count: self.count,
            blocks: self.blocks,
        }
    }
}

impl Writer<'_> {
    /// Keeps the writer's copy of set `kid`'s rank rows only if it is current: made for the key
    /// row's `version`, and (unless it records that there are none) its level-1 runs add up to
    /// the set's `count`. Whether the set has rank rows, when a current copy knows.
    fn z_copy_open(&self, kid: i64, version: i64, count: i64) -> Result<Option<bool>> {
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
    fn z_copy_none(&self, kid: i64, version: i64) {
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
    fn z_copy_load(&self, kid: i64) -> Result<()> {
        let mut copy = RankCopy::default();
        {
            let mut st = crate::backend::sqlite::stmt::prepare(
                self.conn,
                "SELECT lvl, score, member, n, id FROM main.relis_zrank WHERE kid = ?1",
            )?;
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
    fn z_blk_at(&self, kid: i64, lvl: i64, p: &Pos) -> Result<(Pos, i64)> {
        let [found] = self.z_blks_at(kid, [(lvl, p)])?;
        Ok(found)
    }

    /// [`Writer::z_blk_at`] for several (level, position) pairs at once.
    fn z_blks_at<const N: usize>(&self, kid: i64, at: [(i64, &Pos); N]) -> Result<[(Pos, i64); N]> {
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
    fn z_copy_edit<R>(&self, kid: i64, lvl: i64, f: impl FnOnce(&mut RankLevel) -> R) -> Option<R> {
        with_copies(self.conn, |c| {
            let s = c.sets.get_mut(&kid)?;
            s.version = None;
            Some(f(&mut s.levels[lvl as usize]))
        })
    }

    /// Forgets the writer's copy of set `kid`'s rank rows (they are gone or rebuilt).
    fn z_copy_drop(&self, kid: i64) {
        forget_copy(self.conn, kid);
    }

    /// A write to set `kid` is done and its key row now has `version`: the copy matches it.
    fn z_copy_stamp(&self, kid: i64, version: i64) {
        with_copies(self.conn, |c| {
            if let Some(s) = c.sets.get_mut(&kid) {
                s.version = Some(version);
            }
        });
    }
}

impl<'c> Writer<'c> {
    /// Opens the sorted set at `key` for writing: `None` when missing (an expired key is
    /// deleted first); [`Error::WrongType`] for another type.
    fn zopen<'k>(&mut self, db: u32, key: &'k [u8]) -> Result<Option<ZW<'k>>> {
        Ok(self.zopen_probing(db, key, None)?.map(|(z, _)| z))
    }

    /// [`Writer::zopen`], and with `member` that member's score, read in the same statement.
    fn zopen_probing<'k>(
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
        let row = match member {
            None => crate::backend::sqlite::stmt::prepare(
                self.conn,
                "SELECT id, type, expire_at, version, count, mtime, head, NULL FROM main.relis_keys
                     WHERE db = ?1 AND key = ?2",
            )?
            .query_row((db, key), row)
            .optional()?,
            Some(member) => crate::backend::sqlite::stmt::prepare(
                self.conn,
                "SELECT k.id, k.type, k.expire_at, k.version, k.count, k.mtime, k.head, z.score
                     FROM main.relis_keys AS k
                     LEFT JOIN main.relis_zset AS z ON z.kid = k.id AND z.member = ?3
                     WHERE k.db = ?1 AND k.key = ?2",
            )?
            .query_row((db, key, member), row)
            .optional()?,
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
        let copy = if m.count > rank_threshold() / 2 {
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
            exists: true,
            count: m.count,
            blocks,
            skiplist,
            changed: false,
        };
        Ok(Some((z, score)))
    }

    /// A new, empty sorted set at `key` (whose key row does not exist).
    fn zcreate<'k>(&mut self, db: u32, key: &'k [u8]) -> ZW<'k> {
        let kid = self.next_version();
        ZW {
            db,
            key,
            kid,
            exists: false,
            count: 0,
            blocks: false,
            skiplist: false,
            changed: false,
        }
    }

    /// Writes the key row after changes: count, version, mtime and encoding; deletes the key
    /// when the set is empty; creates or drops rank blocks when the count crossed the threshold.
    fn zfinish(&mut self, z: &ZW<'_>) -> Result<()> {
        if !z.changed {
            return Ok(());
        }
        let t = rank_threshold();
        if z.count == 0 {
            self.z_copy_drop(z.kid);
            crate::backend::sqlite::stmt::prepare(
                self.conn,
                "DELETE FROM main.relis_zrank WHERE kid = ?1",
            )?
            .execute([z.kid])?;
            if z.exists {
                crate::backend::sqlite::stmt::prepare(
                    self.conn,
                    "DELETE FROM main.relis_keys WHERE db = ?1 AND key = ?2",
                )?
                .execute((z.db, z.key))?;
            }
            return Ok(());
        }
        let mut blocks = z.blocks;
        if z.blocks && z.count <= t / 2 {
            self.z_copy_drop(z.kid);
            crate::backend::sqlite::stmt::prepare(
                self.conn,
                "DELETE FROM main.relis_zrank WHERE kid = ?1",
            )?
            .execute([z.kid])?;
            blocks = false;
        } else if !z.blocks && z.count > t {
            self.z_build_blocks(z.kid, z.count)?;
            blocks = true;
        }
        let version = self.next_version();
        if z.exists {
            crate::backend::sqlite::stmt::prepare(
                self.conn,
                "UPDATE main.relis_keys SET count = ?3, version = ?4, mtime = ?5, head = ?6
                     WHERE db = ?1 AND key = ?2",
            )?
            .execute((
                z.db,
                z.key,
                z.count,
                version,
                self.now,
                i64::from(z.skiplist),
            ))?;
        } else {
            crate::backend::sqlite::stmt::prepare(
                self.conn,
                "INSERT INTO main.relis_keys (db, key, id, type, expire_at, version, count, mtime, head)
                     VALUES (?1, ?2, ?3, ?4, NULL, ?5, ?6, ?7, ?8)",
            )?
            .execute((
                z.db,
                z.key,
                z.kid,
                KeyType::ZSet.code(),
                version,
                z.count,
                self.now,
                i64::from(z.skiplist),
            ))?;
            self.note_new(z.db, z.key);
        }
        if blocks {
            self.z_copy_stamp(z.kid, version);
        } else if z.count > t / 2 {
            self.z_copy_none(z.kid, version);
        }
        Ok(())
    }

    /// Adds a member that is not in the set.
    fn z_insert(&mut self, z: &mut ZW<'_>, member: &[u8], score: f64) -> Result<()> {
        crate::backend::sqlite::stmt::prepare(
            self.conn,
            "INSERT INTO main.relis_zset (kid, member, score) VALUES (?1, ?2, ?3)",
        )?
        .execute((z.kid, member, score))?;
        self.z_inserted(z, member, score)
    }

    /// Adds the member if it is not in the set; whether it was added. (Most ZADDs add: one
    /// statement instead of a lookup and an insert.)
    fn z_try_insert(&mut self, z: &mut ZW<'_>, member: &[u8], score: f64) -> Result<bool> {
        let n = crate::backend::sqlite::stmt::prepare(
            self.conn,
            "INSERT INTO main.relis_zset (kid, member, score) VALUES (?1, ?2, ?3)
                 ON CONFLICT DO NOTHING",
        )?
        .execute((z.kid, member, score))?;
        if n == 0 {
            return Ok(false);
        }
        self.z_inserted(z, member, score)?;
        Ok(true)
    }

    /// The bookkeeping of a member just added.
    fn z_inserted(&mut self, z: &mut ZW<'_>, member: &[u8], score: f64) -> Result<()> {
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

    /// Changes a member's score.
    fn z_rescore(&mut self, z: &mut ZW<'_>, member: &[u8], old: f64, new: f64) -> Result<()> {
        z.changed = true;
        // One UPDATE: the score index's entry moves with the row.
        crate::backend::sqlite::stmt::prepare(
            self.conn,
            "UPDATE main.relis_zset SET score = ?3 WHERE kid = ?1 AND member = ?2",
        )?
        .execute((z.kid, member, new))?;
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
    fn z_remove(&mut self, z: &mut ZW<'_>, member: &[u8]) -> Result<Option<f64>> {
        let score: Option<f64> = crate::backend::sqlite::stmt::prepare(
            self.conn,
            "DELETE FROM main.relis_zset WHERE kid = ?1 AND member = ?2 RETURNING score",
        )?
        .query_row((z.kid, member), |r| r.get(0))
        .optional()?;
        if let Some(s) = score {
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
    fn z_remove_interval(&mut self, z: &mut ZW<'_>, iv: &Interval) -> Result<i64> {
        let lo = &iv.lo;
        let removed = match &iv.hi {
            None => crate::backend::sqlite::stmt::prepare(
                self.conn,
                "DELETE FROM main.relis_zset WHERE kid = ?1 AND (score, member) >= (?2, ?3)",
            )?
            .execute((z.kid, lo.score, &lo.member[..]))?,
            Some(hi) => crate::backend::sqlite::stmt::prepare(
                self.conn,
                "DELETE FROM main.relis_zset WHERE kid = ?1 AND (score, member) >= (?2, ?3)
                     AND (score, member) < (?4, ?5)",
            )?
            .execute((z.kid, lo.score, &lo.member[..], hi.score, &hi.member[..]))?,
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

    // --- rank blocks ---------------------------------------------------------------------

    fn z_blk_set(&self, kid: i64, lvl: i64, start: &Pos, n: i64) -> Result<()> {
        self.z_blk_set_all(kid, &[(lvl, start, n)])
    }

    /// Sets the counts of several rank rows, (level, start, count), with one prepared
    /// statement.
    fn z_blk_set_all(&self, kid: i64, rows: &[(i64, &Pos, i64)]) -> Result<()> {
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
                None => crate::backend::sqlite::stmt::prepare(
                    self.conn,
                    "UPDATE main.relis_zrank SET n = ?5
                         WHERE kid = ?1 AND lvl = ?2 AND score = ?3 AND member = ?4",
                )?
                .execute((kid, lvl, start.score, &start.member[..], n))?,
            };
        }
        Ok(())
    }

    fn z_blk_insert(&self, kid: i64, lvl: i64, start: &Pos, n: i64) -> Result<()> {
        crate::backend::sqlite::stmt::prepare(
            self.conn,
            "INSERT INTO main.relis_zrank (kid, lvl, score, member, n) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute((kid, lvl, start.score, &start.member[..], n))?;
        let id = self.conn.last_insert_rowid();
        self.z_copy_edit(kid, lvl, |rows| rows.insert(start, n, id));
        Ok(())
    }

    /// Deletes a level-`lvl` row; its count, if it was there.
    fn z_blk_delete(&self, kid: i64, lvl: i64, start: &Pos) -> Result<Option<i64>> {
        flush_pending(self.conn)?; // it reads rank counts
        let n = crate::backend::sqlite::stmt::prepare(
            self.conn,
            "DELETE FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2 AND score = ?3 AND member = ?4
                 RETURNING n",
        )?
        .query_row((kid, lvl, start.score, &start.member[..]), |r| r.get(0))
        .optional()?;
        self.z_copy_edit(kid, lvl, |rows| rows.remove(start));
        Ok(n)
    }

    /// Deletes the level-`lvl` rows after `start` and before `hi` (all after it: `None`).
    fn z_blk_delete_after(&self, kid: i64, lvl: i64, start: &Pos, hi: Option<&Pos>) -> Result<()> {
        match hi {
            None => crate::backend::sqlite::stmt::prepare(
                self.conn,
                "DELETE FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
                     AND (score, member) > (?3, ?4)",
            )?
            .execute((kid, lvl, start.score, &start.member[..]))?,
            Some(hi) => crate::backend::sqlite::stmt::prepare(
                self.conn,
                "DELETE FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
                     AND (score, member) > (?3, ?4) AND (score, member) < (?5, ?6)",
            )?
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

    fn z_blk_next(&self, kid: i64, lvl: i64, start: &Pos) -> Result<Option<(Pos, i64)>> {
        flush_pending(self.conn)?; // it reads rank counts
        Ok(crate::backend::sqlite::stmt::prepare(
            self.conn,
            "SELECT score, member, n FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
                 AND (score, member) > (?3, ?4) ORDER BY score, member LIMIT 1",
        )?
        .query_row((kid, lvl, start.score, &start.member[..]), |r| {
            Ok((pos_row(r)?, r.get(2)?))
        })
        .optional()?)
    }

    fn z_blk_prev(&self, kid: i64, lvl: i64, start: &Pos) -> Result<Option<(Pos, i64)>> {
        flush_pending(self.conn)?; // it reads rank counts
        Ok(crate::backend::sqlite::stmt::prepare(
            self.conn,
            "SELECT score, member, n FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
                 AND (score, member) < (?3, ?4) ORDER BY score DESC, member DESC LIMIT 1",
        )?
        .query_row((kid, lvl, start.score, &start.member[..]), |r| {
            Ok((pos_row(r)?, r.get(2)?))
        })
        .optional()?)
    }

    /// The number of members from block `start` up to the next block.
    fn z_block_recount(&self, kid: i64, start: &Pos) -> Result<i64> {
        let next = self.z_blk_next(kid, 0, start)?.map(|(p, _)| p);
        self.z_members_between(kid, Some(start), next.as_ref())
    }

    /// The number of members in the level-1 run `start`: the sum of its blocks.
    fn z_run_recount(&self, kid: i64, start: &Pos) -> Result<i64> {
        let next = self.z_blk_next(kid, 1, start)?.map(|(p, _)| p);
        self.z_rows_between(kid, 0, Some(start), next.as_ref())
    }

    /// A member at `p` came (`delta = 1`) or went (`-1`): its block and its run count it, and
    /// both are kept within bounds. `count` is the set's size after the change.
    fn z_adjust(&mut self, kid: i64, p: &Pos, delta: i64, count: i64) -> Result<()> {
        let [(block, n), (run, rn)] = self.z_blks_at(kid, [(0, p), (1, p)])?;
        self.z_blk_set_all(kid, &[(0, &block, n + delta), (1, &run, rn + delta)])?;
        self.z_rebalance_at(kid, p, n + delta, rn + delta, count)
    }

    /// Keeps the block and the run holding `p` within bounds now that they count `n` and `rn`
    /// (counts read before an earlier rebalancing may be stale, but one that moved them left
    /// them within bounds). A block or run holding every member (`count`) has nothing to merge
    /// with.
    fn z_rebalance_at(&mut self, kid: i64, p: &Pos, n: i64, rn: i64, count: i64) -> Result<()> {
        let (b, s) = (block_size(), super_size());
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
    fn z_block_unstart(&mut self, kid: i64, start: &Pos) -> Result<Option<(Pos, i64)>> {
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
    fn z_rebalance_block(&mut self, kid: i64, start: Pos, n: i64) -> Result<()> {
        let b = block_size();
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
            if rn > 2 * super_size() {
                self.z_run_split(kid, &run, rn)?;
            }
        }
        Ok(())
    }

    /// Cuts the `n` members of block `start` into blocks of about the block size (they stay in
    /// the same level-1 run).
    fn z_block_split(&mut self, kid: i64, start: &Pos, n: i64) -> Result<()> {
        let pieces = (n / block_size()).max(1);
        if pieces < 2 {
            return Ok(());
        }
        let cut = |i: i64| i * n / pieces;
        let mut starts = Vec::with_capacity(pieces as usize - 1);
        {
            let mut st = crate::backend::sqlite::stmt::prepare(self.conn,
                "SELECT score, member FROM main.relis_zset WHERE kid = ?1 AND (score, member) >= (?2, ?3)
                 ORDER BY score, member LIMIT ?4",
            )?;
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
    fn z_rebalance_run_at(&mut self, kid: i64, p: &Pos) -> Result<()> {
        let s = super_size();
        let (start, n) = self.z_blk_at(kid, 1, p)?;
        if n > 2 * s {
            return self.z_run_split(kid, &start, n);
        }
        if n >= s / 2 {
            return Ok(());
        }
        if let Some((prev, pn)) = self.z_blk_prev(kid, 1, &start)? {
            self.z_blk_delete(kid, 1, &start)?;
            self.z_blk_set(kid, 1, &prev, pn + n)?;
            if pn + n > 2 * s {
                self.z_run_split(kid, &prev, pn + n)?;
            }
        } else if let Some((next, nn)) = self.z_blk_next(kid, 1, &start)? {
            self.z_blk_delete(kid, 1, &next)?;
            self.z_blk_set(kid, 1, &start, n + nn)?;
            if n + nn > 2 * s {
                self.z_run_split(kid, &start, n + nn)?;
            }
        }
        Ok(())
    }

    /// Cuts the level-1 run `start` of `n` members, at block starts, into runs of about the
    /// run size.
    fn z_run_split(&mut self, kid: i64, start: &Pos, n: i64) -> Result<()> {
        flush_pending(self.conn)?; // it reads rank counts
        let blocks: Vec<(Pos, i64)> = {
            let end = self.z_blk_next(kid, 1, start)?.map(|(p, _)| p);
            let mut st = crate::backend::sqlite::stmt::prepare(
                self.conn,
                "SELECT score, member, n FROM main.relis_zrank WHERE kid = ?1 AND lvl = 0
                 AND (score, member) >= (?2, ?3) ORDER BY score, member",
            )?;
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
        // Cut at block starts, into runs of about the run size.
        let pieces = (n / super_size()).max(1);
        let mut cuts: Vec<(usize, i64)> = vec![(0, 0)];
        let mut before = 0;
        for (i, (_, bn)) in blocks.iter().enumerate() {
            let next = cuts.len() as i64;
            if i > 0 && next < pieces && before >= next * n / pieces {
                cuts.push((i, before));
            }
            before += bn;
        }
        cuts.push((blocks.len(), before));
        for w in cuts.windows(2) {
            let ((i, from), (_, to)) = (w[0], w[1]);
            if i == 0 {
                self.z_blk_set(kid, 1, start, to - from)?;
            } else {
                self.z_blk_insert(kid, 1, &blocks[i].0, to - from)?;
            }
        }
        Ok(())
    }

    /// Cuts a whole set into rank blocks and level-1 runs (it had none).
    fn z_build_blocks(&mut self, kid: i64, count: i64) -> Result<()> {
        self.z_copy_drop(kid);
        crate::backend::sqlite::stmt::prepare(
            self.conn,
            "DELETE FROM main.relis_zrank WHERE kid = ?1",
        )?
        .execute([kid])?;
        let bottom = Pos::bottom();
        self.z_blk_insert(kid, 0, &bottom, count)?;
        self.z_blk_insert(kid, 1, &bottom, count)?;
        if count > 2 * block_size() {
            self.z_block_split(kid, &bottom, count)?;
        }
        if count > 2 * super_size() {
            self.z_run_split(kid, &bottom, count)?;
        }
        Ok(())
    }

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
        // When members are mostly found (score updates), the first one's score is read with the
        // key row.
        let probe = pairs
            .first()
            .filter(|_| zadd_finds_members())
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
            // A new member is added whatever the options but XX (with INCR its score is the
            // increment): when members have mostly been new, by trying to insert first.
            if opts.cond != ZAddCond::Xx
                && known.is_none()
                && !(z.exists && zadd_finds_members())
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

    fn z_pop_from(&mut self, z: &mut ZW<'_>, max: bool, count: i64) -> Result<Vec<Scored>> {
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
            let mut st = crate::backend::sqlite::stmt::prepare(
                self.conn,
                "INSERT INTO main.relis_zset (kid, member, score) VALUES (?1, ?2, ?3)",
            )?;
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
        let mut st = crate::backend::sqlite::stmt::prepare(
            self.conn,
            "SELECT lvl, score, member, n FROM main.relis_zrank WHERE kid = ?1
             ORDER BY lvl, score, member",
        )?;
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
        let actual: i64 = crate::backend::sqlite::stmt::prepare(
            self.conn,
            "SELECT count(*) FROM main.relis_zset WHERE kid = ?1",
        )?
        .query_row([z.kid], |r| r.get(0))?;
        if actual != z.count {
            return bad(format!("count {} but {actual} members", z.count));
        }
        let level = |lvl: i64| -> Result<Vec<(Pos, i64)>> {
            let mut st = crate::backend::sqlite::stmt::prepare(
                self.conn,
                "SELECT score, member, n FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
                 ORDER BY score, member",
            )?;
            let rows = st.query_map((z.kid, lvl), |r| Ok((pos_row(r)?, r.get(2)?)))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        };
        let (blocks, runs) = (level(0)?, level(1)?);
        let t = rank_threshold();
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
        let (b, sz) = (block_size(), super_size());
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

// ---------------------------------------------------------------------------------------------
// Embedded API
// ---------------------------------------------------------------------------------------------

impl Db {
    /// ZADD: adds or updates members with their scores; returns how many were added.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn zadd(&self, key: impl AsRef<[u8]>, pairs: &[(f64, &[u8])]) -> Result<i64> {
        let pairs: Vec<(f64, Bytes)> = pairs
            .iter()
            .map(|(s, m)| (*s, Bytes::copy_from_slice(m)))
            .collect();
        match self.zadd_with(key, ZAddOptions::default(), pairs)? {
            ZAddOutcome::Count(n) => Ok(n),
            _ => Ok(0),
        }
    }

    /// ZADD with options.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn zadd_with(
        &self,
        key: impl AsRef<[u8]>,
        opts: ZAddOptions,
        pairs: Vec<(f64, Bytes)>,
    ) -> Result<ZAddOutcome> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.write(move |w| w.zadd(db, &key, opts, &pairs))
    }

    /// ZINCRBY: the new score, or `None` when the sum is not a number.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn zincrby(
        &self,
        key: impl AsRef<[u8]>,
        by: f64,
        member: impl AsRef<[u8]>,
    ) -> Result<Option<f64>> {
        let opts = ZAddOptions {
            incr: true,
            ..ZAddOptions::default()
        };
        let pairs = vec![(by, Bytes::copy_from_slice(member.as_ref()))];
        Ok(match self.zadd_with(key, opts, pairs)? {
            ZAddOutcome::Score(s) => s,
            _ => None,
        })
    }

    /// ZREM.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn zrem(&self, key: impl AsRef<[u8]>, members: &[&[u8]]) -> Result<i64> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        let members: Vec<Bytes> = members.iter().map(|m| Bytes::copy_from_slice(m)).collect();
        self.write(move |w| w.zrem(db, &key, &members))
    }

    /// ZCARD (0 for a missing key).
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn zcard(&self, key: impl AsRef<[u8]>) -> Result<i64> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.read(move |r| r.zcard(db, &key).map(Option::unwrap_or_default))
    }

    /// ZSCORE.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn zscore(&self, key: impl AsRef<[u8]>, member: impl AsRef<[u8]>) -> Result<Option<f64>> {
        let (db, key, member) = (
            self.index(),
            key.as_ref().to_vec(),
            member.as_ref().to_vec(),
        );
        self.read(move |r| r.zscore(db, &key, &member).map(Option::flatten))
    }

    /// ZRANK (`rev = false`) / ZREVRANK.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn zrank(
        &self,
        key: impl AsRef<[u8]>,
        member: impl AsRef<[u8]>,
        rev: bool,
    ) -> Result<Option<i64>> {
        let (db, key, member) = (
            self.index(),
            key.as_ref().to_vec(),
            member.as_ref().to_vec(),
        );
        self.read(move |r| r.zrank(db, &key, &member, rev).map(Option::flatten))
    }

    /// ZRANGE with any selection (empty for a missing key).
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn zrange(&self, key: impl AsRef<[u8]>, spec: ZRange) -> Result<Vec<Scored>> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.read(move |r| r.zrange(db, &key, &spec).map(Option::unwrap_or_default))
    }

    /// ZCOUNT (0 for a missing key).
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn zcount(&self, key: impl AsRef<[u8]>, range: ScoreRange) -> Result<i64> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.read(move |r| r.zcount(db, &key, &range).map(Option::unwrap_or_default))
    }

    /// ZPOPMIN (`max = false`) / ZPOPMAX.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn zpop(&self, key: impl AsRef<[u8]>, max: bool, count: i64) -> Result<Vec<Scored>> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.write(move |w| w.zpop(db, &key, max, count))
    }

    /// ZREMRANGEBYRANK / ZREMRANGEBYSCORE / ZREMRANGEBYLEX.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn zremrange(&self, key: impl AsRef<[u8]>, by: ZRangeBy) -> Result<i64> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.write(move |w| w.zremrange(db, &key, &by))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    fn names(v: &[Scored]) -> Vec<String> {
        v.iter()
            .map(|(m, _)| String::from_utf8_lossy(m).into_owned())
            .collect()
    }

    fn check(db: &Db, key: &'static str) {
        db.write(move |w| w.zcheck(0, key.as_bytes())).unwrap();
    }

    fn rank(by: ZRangeBy) -> ZRange {
        ZRange {
            by,
            rev: false,
            limit: None,
        }
    }

    #[test]
    fn basics() {
        let db = Db::open_in_memory().unwrap();
        assert_eq!(
            db.zadd("z", &[(1.0, b"a"), (2.0, b"b"), (3.0, b"c")])
                .unwrap(),
            3
        );
        assert_eq!(db.zadd("z", &[(1.0, b"a"), (5.0, b"b")]).unwrap(), 0);
        assert_eq!(db.zscore("z", "b").unwrap(), Some(5.0));
        assert_eq!(db.zrank("z", "b", false).unwrap(), Some(2));
        assert_eq!(db.zrank("z", "b", true).unwrap(), Some(0));
        assert_eq!(db.zincrby("z", 1.5, "a").unwrap(), Some(2.5));
        let all = db.zrange("z", rank(ZRangeBy::Rank(0, -1))).unwrap();
        assert_eq!(names(&all), ["a", "c", "b"]);
        assert_eq!(db.zcard("z").unwrap(), 3);
        assert_eq!(db.zrem("z", &[b"a", b"x"]).unwrap(), 1);
        assert_eq!(db.zpop("z", true, 10).unwrap().len(), 2);
        assert_eq!(db.zcard("z").unwrap(), 0);
        assert!(db.object("z").unwrap().is_none(), "an empty set is deleted");
    }

    #[test]
    fn lex_ranges_follow_the_listpack_walk() {
        let db = Db::open_in_memory().unwrap();
        let pairs: Vec<(f64, &[u8])> = vec![
            (1.0, b"d"),
            (2.0, b"a"),
            (3.0, b"c"),
            (4.0, b"b"),
            (5.0, b"e"),
        ];
        db.zadd("m", &pairs).unwrap();
        let lex = |min: LexBound, max: LexBound, rev: bool| {
            let spec = ZRange {
                by: ZRangeBy::Lex(LexRange { min, max }),
                rev,
                limit: None,
            };
            names(&db.zrange("m", spec).unwrap())
        };
        use LexBound::*;
        assert_eq!(lex(Incl(b("b")), Incl(b("d")), false), ["d", "a", "c", "b"]);
        assert_eq!(lex(Min, Incl(b("c")), false), Vec::<String>::new());
        assert_eq!(lex(Incl(b("b")), Incl(b("d")), true), ["b", "c"]);
        assert_eq!(lex(Excl(b("d")), Max, false), ["e"]);
        let db2 = Db::open_in_memory().unwrap();
        db2.zadd("y", &[(1.0, b"z"), (2.0, b"a")]).unwrap();
        let spec = ZRange {
            by: ZRangeBy::Lex(LexRange {
                min: Incl(b("b")),
                max: Max,
            }),
            rev: false,
            limit: None,
        };
        assert!(
            db2.zrange("y", spec).unwrap().is_empty(),
            "the last member is below min"
        );
    }

    #[test]
    fn large_sets_keep_rank_blocks() {
        let db = Db::open_in_memory().unwrap();
        let n = 5000usize;
        // In several commands, so blocks are built, then split member by member.
        for chunk in (0..n).collect::<Vec<_>>().chunks(700) {
            let pairs: Vec<(f64, Bytes)> = chunk
                .iter()
                .map(|i| ((i % 97) as f64, Bytes::from(format!("m{i:05}"))))
                .collect();
            db.zadd_with("big", ZAddOptions::default(), pairs).unwrap();
            check(&db, "big");
        }
        let mut model: Vec<(f64, String)> = (0..n)
            .map(|i| ((i % 97) as f64, format!("m{i:05}")))
            .collect();
        model.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap().then(a.1.cmp(&b.1)));
        for r in [0, 1, 1023, 1024, 2500, 4998, 4999] {
            let (_, m) = &model[r];
            assert_eq!(db.zrank("big", m, false).unwrap(), Some(r as i64), "{m}");
            let got = db
                .zrange("big", rank(ZRangeBy::Rank(r as i64, r as i64 + 2)))
                .unwrap();
            let want: Vec<String> = model[r..(r + 3).min(n)]
                .iter()
                .map(|x| x.1.clone())
                .collect();
            assert_eq!(names(&got), want);
        }
        // Score changes move members between blocks.
        for i in (0..n).step_by(7) {
            db.zincrby("big", 1000.0, format!("m{i:05}")).unwrap();
        }
        check(&db, "big");
        // Range removals in the middle and at both ends.
        let removed = db.zremrange("big", ZRangeBy::Rank(1000, 2999)).unwrap();
        assert_eq!(removed, 2000);
        check(&db, "big");
        assert_eq!(db.zpop("big", false, 100).unwrap().len(), 100);
        check(&db, "big");
        assert_eq!(db.zpop("big", true, 3).unwrap().len(), 3);
        check(&db, "big");
        let rm = db
            .zremrange(
                "big",
                ZRangeBy::Score(ScoreRange {
                    min: 10.0,
                    min_ex: false,
                    max: 50.0,
                    max_ex: true,
                }),
            )
            .unwrap();
        assert!(rm > 0);
        check(&db, "big");
        // Shrinking below the threshold drops the blocks.
        let card = db.zcard("big").unwrap();
        db.zremrange("big", ZRangeBy::Rank(0, card - 11)).unwrap();
        assert_eq!(db.zcard("big").unwrap(), 10);
        check(&db, "big");
    }

    /// The writer answers rank-row lookups from its copy of the rows: a write that is rolled
    /// back (a command's savepoint, a whole group commit) must not leave the copy stale.
    #[test]
    fn rolled_back_writes_do_not_fool_the_writers_copy() {
        let db = Db::open_in_memory().unwrap();
        fn m(i: usize) -> Bytes {
            Bytes::from(format!("m{i:05}"))
        }
        let n = 3000;
        let all: Vec<(f64, Bytes)> = (0..n).map(|i| (i as f64, m(i))).collect();
        db.zadd_with("big", ZAddOptions::default(), all).unwrap();
        // One write that loads the copy and moves members, committed.
        db.zincrby("big", 0.5, m(10)).unwrap();
        check(&db, "big");
        // Members moved to the top by a command that then fails: its savepoint is undone.
        let up: Vec<(f64, Bytes)> = (0..600).map(|i| (1e6 + i as f64, m(i))).collect();
        let failed = db.write(move |w| {
            w.zadd(0, b"big", ZAddOptions::default(), &up)?;
            Err::<(), _>(Error::WrongType)
        });
        assert_eq!(failed, Err(Error::WrongType));
        check(&db, "big");
        // Members moved to the bottom in a group commit that fails as a whole.
        let down: Vec<(f64, Bytes)> = (2000..2600).map(|i| (-1e6 - i as f64, m(i))).collect();
        let (tx, rx) = std::sync::mpsc::channel();
        db.write_async(
            move |w| {
                w.zadd(0, b"big", ZAddOptions::default(), &down).unwrap();
                w.poison(Error::Storage("injected".into()));
            },
            move |r| tx.send(r.is_err()).unwrap(),
        );
        assert!(rx.recv().unwrap(), "the group commit failed");
        check(&db, "big");
        // Later writes start from the rows as they are: ranks stay right.
        for i in (0..n).step_by(3) {
            db.zincrby("big", 5000.0, m(i)).unwrap();
        }
        check(&db, "big");
        let mut model: Vec<Scored> = (0..n)
            .map(|i| {
                let s = i as f64 + if i == 10 { 0.5 } else { 0.0 };
                (m(i), if i % 3 == 0 { s + 5000.0 } else { s })
            })
            .collect();
        model.sort_by(order);
        for r in [0, 1, 599, 1000, 2000, 2599, 2999] {
            assert_eq!(db.zrank("big", &model[r].0, false).unwrap(), Some(r as i64));
        }

        // Between half the threshold and the threshold the copy also records that a set has no
        // rank rows; writes that build or drop the rows and are then undone must not fool it.
        let pairs = |from: usize, to: usize| -> Vec<(f64, Bytes)> {
            (from..to).map(|i| (i as f64, m(i))).collect()
        };
        let fail = |key: &'static str, f: fn(&mut Writer<'_>, &[u8]) -> Result<()>| {
            let r = db.write(move |w| {
                f(w, key.as_bytes())?;
                Err::<(), _>(Error::WrongType)
            });
            assert_eq!(r, Err(Error::WrongType));
        };
        db.zadd_with("mid", ZAddOptions::default(), pairs(0, 700))
            .unwrap();
        db.zincrby("mid", 0.5, m(1)).unwrap();
        check(&db, "mid");
        fail("mid", |w, k| {
            let more: Vec<(f64, Bytes)> = (700..1100).map(|i| (i as f64, m(i))).collect();
            w.zadd(0, k, ZAddOptions::default(), &more).map(drop)
        });
        check(&db, "mid");
        db.zincrby("mid", 0.5, m(2)).unwrap();
        check(&db, "mid");
        // A set that keeps its rows below the threshold (it came down from above it).
        db.zadd_with("top", ZAddOptions::default(), pairs(0, 1100))
            .unwrap();
        let first: Vec<Bytes> = (1000..1100).map(m).collect();
        db.write(move |w| w.zrem(0, b"top", &first)).unwrap();
        fail("top", |w, k| {
            let gone: Vec<Bytes> = (0..600).map(m).collect();
            w.zrem(0, k, &gone).map(drop)
        });
        check(&db, "top");
        // Its rows dropped (600 members removed), then the set back above half the threshold
        // without them, in a group commit that fails.
        let (tx, rx) = std::sync::mpsc::channel();
        db.write_async(
            move |w| {
                let gone: Vec<Bytes> = (0..600).map(m).collect();
                w.zrem(0, b"top", &gone).unwrap();
                let back: Vec<(f64, Bytes)> = (2000..2300).map(|i| (i as f64, m(i))).collect();
                w.zadd(0, b"top", ZAddOptions::default(), &back).unwrap();
                w.poison(Error::Storage("injected".into()));
            },
            move |r| tx.send(r.is_err()).unwrap(),
        );
        assert!(rx.recv().unwrap(), "the group commit failed");
        check(&db, "top");
        db.zrem("top", &[b"m00005"]).unwrap();
        db.zincrby("top", 5000.0, m(7)).unwrap();
        check(&db, "top");
        assert_eq!(db.zcard("top").unwrap(), 999);
        assert_eq!(db.zrank("top", m(999), false).unwrap(), Some(997));
    }

    fn zadd_finds_members_on_writer(db: &Db) -> bool {
        db.write(|_| Ok(zadd_finds_members())).unwrap()
    }

    /// ZADD looks members up first (reading the first one's score with the key row) when
    /// recent members were mostly there already, and tries to insert first otherwise: both give
    /// the same answers.
    #[test]
    fn zadd_answers_whichever_comes_first() {
        let opts = |cond, cmp, ch, incr| ZAddOptions {
            cond,
            cmp,
            ch,
            incr,
        };
        use ZAddCmp::{Any, Gt, Lt};
        use ZAddCond::{Always, Nx, Xx};
        // (options, pairs, outcome, then the scores of a, b, c)
        #[allow(clippy::type_complexity)]
        let cases: Vec<(ZAddOptions, Vec<(f64, &str)>, ZAddOutcome, [Option<f64>; 3])> = vec![
            (
                ZAddOptions::default(),
                vec![(5.0, "a"), (1.0, "c")],
                ZAddOutcome::Count(1),
                [Some(5.0), Some(2.0), Some(1.0)],
            ),
            (
                opts(Always, Any, true, false),
                vec![(1.0, "a"), (3.0, "b")],
                ZAddOutcome::Count(1),
                [Some(1.0), Some(3.0), None],
            ),
            (
                opts(Nx, Any, false, false),
                vec![(9.0, "a"), (9.0, "c")],
                ZAddOutcome::Count(1),
                [Some(1.0), Some(2.0), Some(9.0)],
            ),
            (
                opts(Xx, Any, true, false),
                vec![(9.0, "a"), (9.0, "c")],
                ZAddOutcome::Count(1),
                [Some(9.0), Some(2.0), None],
            ),
            (
                opts(Always, Gt, true, false),
                vec![(0.0, "a"), (7.0, "b")],
                ZAddOutcome::Count(1),
                [Some(1.0), Some(7.0), None],
            ),
            (
                opts(Always, Lt, true, false),
                vec![(0.0, "a"), (7.0, "b")],
                ZAddOutcome::Count(1),
                [Some(0.0), Some(2.0), None],
            ),
            (
                opts(Always, Any, false, true),
                vec![(2.5, "a")],
                ZAddOutcome::Score(Some(3.5)),
                [Some(3.5), Some(2.0), None],
            ),
            (
                opts(Xx, Any, false, true),
                vec![(2.5, "c")],
                ZAddOutcome::Score(None),
                [Some(1.0), Some(2.0), None],
            ),
            (
                opts(Nx, Any, false, true),
                vec![(2.5, "a")],
                ZAddOutcome::Score(None),
                [Some(1.0), Some(2.0), None],
            ),
            (
                opts(Always, Any, false, false),
                vec![(4.0, "a"), (6.0, "a")],
                ZAddOutcome::Count(0),
                [Some(6.0), Some(2.0), None],
            ),
        ];
        let db = Db::open_in_memory().unwrap();
        for (i, (o, pairs, outcome, scores)) in cases.into_iter().enumerate() {
            for warm in ["updates", "adds"] {
                let key = format!("k{i}{warm}");
                db.zadd(&key, &[(1.0, b"a"), (2.0, b"b")]).unwrap();
                // Teach the writer which kind of member to expect.
                for j in 0..4 {
                    let m = if warm == "updates" {
                        "w".to_string()
                    } else {
                        format!("w{i}{j}")
                    };
                    db.zadd("warm", &[(j as f64, m.as_bytes())]).unwrap();
                }
                assert_eq!(zadd_finds_members_on_writer(&db), warm == "updates");
                let pairs = pairs.iter().map(|(s, m)| (*s, b(m))).collect();
                assert_eq!(
                    db.zadd_with(&key, o, pairs).unwrap(),
                    outcome,
                    "case {i} after {warm}"
                );
                let got = ["a", "b", "c"].map(|m| db.zscore(&key, m).unwrap());
                assert_eq!(got, scores, "case {i} after {warm}");
            }
        }
    }

    #[test]
    fn encoding_converts_once() {
        let db = Db::open_in_memory().unwrap();
        let enc = |k: &'static str| db.object(k).unwrap().unwrap().encoding;
        db.zadd("s", &[(1.0, b"a")]).unwrap();
        assert_eq!(enc("s"), "listpack");
        db.zadd("s", &[(2.0, &[b'x'; 65][..])]).unwrap();
        assert_eq!(enc("s"), "skiplist");
        db.zrem("s", &[&[b'x'; 65][..]]).unwrap();
        assert_eq!(enc("s"), "skiplist", "Redis never converts back");
    }
}
