//! The sorted-set family: ZADD and friends, ranges by rank, score and lex, pops, set operations.
//!
//! Storage (`schema/0002_collections.sql`): one row per member in `relis_zset (kid, member,
//! score)`, keyed by member (ZSCORE, ZADD's lookup), and the index `relis_zset_score (kid, score,
//! member)`, which is Redis's order: by score, then member bytes. Ranges by score and by lex walk
//! that index.
//!
//! Ranks. SQLite has no order-statistic B-tree, so a rank would be a count of every member
//! before it. Large sets keep *rank rows* in `relis_zrank (kid, lvl, score, member, n)`, on two
//! levels. Level 0 cuts the set, in index order, into blocks of about [`crate::RankBlocks::block`]
//! members
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
//! Sets at or below [`crate::RankBlocks::threshold`] members (1024) keep no rank rows: a count over at most
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

/// Redis's `zset-max-listpack-entries` default: more members convert a set to a skiplist.
pub const LISTPACK_ENTRIES: i64 = 128;
/// Redis's `zset-max-listpack-value` default: a longer member converts a set to a skiplist.
pub const LISTPACK_VALUE: usize = 64;

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

mod rank;
mod read;
mod write;

pub(crate) use rank::{discard_pending, flush_pending, forget_copy};

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
    use super::write::zadd_finds_members;
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

    /// Rank-block sizes are an option of each engine, not of the process: two engines opened
    /// side by side with different sizes cut the same set differently.
    #[test]
    fn rank_block_sizes_are_per_engine() {
        let small = Db::open_with(crate::Options {
            rank_blocks: crate::RankBlocks {
                threshold: 12,
                block: 4,
                fanout: 3,
            },
            ..crate::Options::default()
        })
        .unwrap();
        let default = Db::open_in_memory().unwrap();
        let members: Vec<Vec<u8>> = (0..40).map(|i| format!("m{i:02}").into_bytes()).collect();
        let pairs: Vec<(f64, &[u8])> = members
            .iter()
            .enumerate()
            .map(|(i, m)| (i as f64, &m[..]))
            .collect();
        let rows = |db: &Db| {
            db.zadd("z", &pairs).unwrap();
            db.write(|w| w.zrank_rows(0, b"z")).unwrap()
        };
        let small_rows = rows(&small);
        assert!(small_rows.iter().filter(|r| r.0 == 0).count() >= 40 / 8);
        assert_eq!(
            small_rows
                .iter()
                .filter(|r| r.0 == 0)
                .map(|r| r.3)
                .sum::<i64>(),
            40
        );
        assert!(rows(&default).is_empty());
        assert_eq!(small.zrank("z", "m39", false).unwrap(), Some(39));
    }
}
