//! The sorted-set family's SQL (SQLite): every statement `types/zset/read.rs` and
//! `types/zset/write.rs` run, named by what it does; the type code calls
//! `prepare(conn, q::ZSCORE)`. `?1` is the set's id (`kid`) unless the statement reads or
//! writes the key row (`?1`, `?2`: database and key); a position is a `(score, member)` pair
//! in Redis's order. The rank rows' upkeep (`types/zset/rank.rs`) keeps its SQL for now.
//!
//! Texts are byte for byte what the type code ran before they moved here (a multi-line text
//! keeps the indentation it had there), so plans and cached statements are unchanged.

// The key row

/// The key row of `?1`/`?2`, its `head` the encoding flag, and a NULL in the score's place.
pub(crate) const KEY_ROW: &str =
    "SELECT id, type, expire_at, version, count, mtime, head, NULL FROM main.relis_keys
                     WHERE db = ?1 AND key = ?2";

/// The same key row and the score of member `?3` (NULL when absent), in one lookup.
pub(crate) const KEY_ROW_WITH_SCORE: &str =
    "SELECT k.id, k.type, k.expire_at, k.version, k.count, k.mtime, k.head, z.score
                     FROM main.relis_keys AS k
                     LEFT JOIN main.relis_zset AS z ON z.kid = k.id AND z.member = ?3
                     WHERE k.db = ?1 AND k.key = ?2";

/// The `head` column of key `?1`/`?2`: nonzero when the set is skiplist-encoded in Redis's terms.
pub(crate) const KEY_HEAD: &str = "SELECT head FROM main.relis_keys WHERE db = ?1 AND key = ?2";

/// Creates the key row of a new sorted set.
pub(crate) const KEY_INSERT: &str =
    "INSERT INTO main.relis_keys (db, key, id, type, expire_at, version, count, mtime, head)
                     VALUES (?1, ?2, ?3, ?4, NULL, ?5, ?6, ?7, ?8)";

// Members

/// The score of member `?2`.
pub(crate) const ZSCORE: &str = "SELECT score FROM main.relis_zset WHERE kid = ?1 AND member = ?2";

/// The number of members.
pub(crate) const MEMBER_COUNT: &str = "SELECT count(*) FROM main.relis_zset WHERE kid = ?1";

/// The lowest member in Redis's order (score, then member bytes), with its score.
pub(crate) const FIRST_MEMBER: &str =
    "SELECT score, member FROM main.relis_zset WHERE kid = ?1 ORDER BY score, member LIMIT 1";

/// The highest member in Redis's order, with its score.
pub(crate) const LAST_MEMBER: &str = "SELECT score, member FROM main.relis_zset WHERE kid = ?1
             ORDER BY score DESC, member DESC LIMIT 1";

/// The number of members scored below `?2`.
pub(crate) const COUNT_SCORE_LT: &str =
    "SELECT count(*) FROM main.relis_zset WHERE kid = ?1 AND score < ?2";

/// The number of members scored above `?2`.
pub(crate) const COUNT_SCORE_GT: &str =
    "SELECT count(*) FROM main.relis_zset WHERE kid = ?1 AND score > ?2";

/// The number of members scored strictly between `?2` and `?3`.
pub(crate) const COUNT_SCORE_BETWEEN: &str =
    "SELECT count(*) FROM main.relis_zset WHERE kid = ?1 AND score > ?2 AND score < ?3";

/// The number of members scored `?2` whose bytes sort below `?3`.
pub(crate) const COUNT_AT_SCORE_MEMBER_LT: &str =
    "SELECT count(*) FROM main.relis_zset WHERE kid = ?1 AND score = ?2 AND member < ?3";

/// The number of members scored `?2` whose bytes sort at or above `?3`.
pub(crate) const COUNT_AT_SCORE_MEMBER_GE: &str =
    "SELECT count(*) FROM main.relis_zset WHERE kid = ?1 AND score = ?2 AND member >= ?3";

/// The number of members scored `?2` whose bytes are in `[?3, ?4)`.
pub(crate) const COUNT_AT_SCORE_MEMBER_IN: &str =
    "SELECT count(*) FROM main.relis_zset WHERE kid = ?1 AND score = ?2
                 AND member >= ?3 AND member < ?4";

/// The member `?4` places after position `(?2, ?3)` (a rank inside a block), with its score.
pub(crate) const MEMBER_AT_OFFSET: &str =
    "SELECT score, member FROM main.relis_zset WHERE kid = ?1 AND (score, member) >= (?2, ?3)
                 ORDER BY score, member LIMIT 1 OFFSET ?4";

/// The first member scored `?2` whose bytes are at or above `?3`.
pub(crate) const LEX_FIRST_GE: &str =
    "SELECT member FROM main.relis_zset WHERE kid = ?1 AND score = ?2 AND member >= ?3
                         ORDER BY member LIMIT 1";

/// The first member scored `?2` whose bytes are above `?3`.
pub(crate) const LEX_FIRST_GT: &str =
    "SELECT member FROM main.relis_zset WHERE kid = ?1 AND score = ?2 AND member > ?3
                         ORDER BY member LIMIT 1";

/// The last member scored `?2` whose bytes are at or below `?3`.
pub(crate) const LEX_LAST_LE: &str =
    "SELECT member FROM main.relis_zset WHERE kid = ?1 AND score = ?2 AND member <= ?3
                         ORDER BY member DESC LIMIT 1";

/// The last member scored `?2` whose bytes are below `?3`.
pub(crate) const LEX_LAST_LT: &str =
    "SELECT member FROM main.relis_zset WHERE kid = ?1 AND score = ?2 AND member < ?3
                         ORDER BY member DESC LIMIT 1";

/// The next score above `?2` that some member has.
pub(crate) const NEXT_SCORE_UP: &str =
    "SELECT score FROM main.relis_zset WHERE kid = ?1 AND score > ?2
                     ORDER BY score LIMIT 1";

/// The next score below `?2` that some member has.
pub(crate) const NEXT_SCORE_DOWN: &str =
    "SELECT score FROM main.relis_zset WHERE kid = ?1 AND score < ?2
                     ORDER BY score DESC LIMIT 1";

/// Scores and members from position `(?2, ?3)` upwards, in Redis's order.
pub(crate) const WALK_UP: &str =
    "SELECT score, member FROM main.relis_zset WHERE kid = ?1 AND (score, member) >= (?2, ?3)
             ORDER BY score, member";

/// Scores and members from position `(?2, ?3)` downwards.
pub(crate) const WALK_DOWN: &str =
    "SELECT score, member FROM main.relis_zset WHERE kid = ?1 AND (score, member) <= (?2, ?3)
             ORDER BY score DESC, member DESC";

/// Members and scores from position `(?2, ?3)` up, lowest first, skipping `?5`, at most `?4`.
pub(crate) const FETCH_FROM: &str =
    "SELECT member, score FROM main.relis_zset WHERE kid = ?1 AND (score, member) >= (?2, ?3)
                 ORDER BY score, member LIMIT ?4 OFFSET ?5";

/// Members and scores from position `(?2, ?3)` up, highest first, skipping `?5`, at most `?4`.
pub(crate) const FETCH_FROM_DESC: &str =
    "SELECT member, score FROM main.relis_zset WHERE kid = ?1 AND (score, member) >= (?2, ?3)
                 ORDER BY score DESC, member DESC LIMIT ?4 OFFSET ?5";

/// Members and scores in `[(?2, ?3), (?4, ?5))`, lowest first, skipping `?7`, at most `?6`.
pub(crate) const FETCH_BETWEEN: &str =
    "SELECT member, score FROM main.relis_zset WHERE kid = ?1 AND (score, member) >= (?2, ?3)
                 AND (score, member) < (?4, ?5) ORDER BY score, member LIMIT ?6 OFFSET ?7";

/// Members and scores in `[(?2, ?3), (?4, ?5))`, highest first, skipping `?7`, at most `?6`.
pub(crate) const FETCH_BETWEEN_DESC: &str =
    "SELECT member, score FROM main.relis_zset WHERE kid = ?1 AND (score, member) >= (?2, ?3)
                 AND (score, member) < (?4, ?5) ORDER BY score DESC, member DESC
                 LIMIT ?6 OFFSET ?7";

/// Members and scores with a score in `[?2, ?3)` (one geohash cell), in Redis's order.
pub(crate) const SCORE_CELL: &str =
    "SELECT member, score FROM main.relis_zset WHERE kid = ?1 AND score >= ?2
             AND score < ?3 ORDER BY score, member";

/// A ZSCAN page: up to `?3` members and scores whose bytes follow `?2`, in byte order.
pub(crate) const SCAN_PAGE: &str =
    "SELECT member, score FROM main.relis_zset WHERE kid = ?1 AND member > ?2
             ORDER BY member LIMIT ?3";

/// Every member and score, highest first (a set operation's input, as Redis iterates it).
pub(crate) const ALL_DESC: &str = "SELECT member, score FROM main.relis_zset WHERE kid = ?1
                 ORDER BY score DESC, member DESC";

/// Every member of the plain set `?1` (a set operation's input).
pub(crate) const SET_MEMBERS: &str = "SELECT member FROM main.relis_set WHERE kid = ?1";

/// Whether the plain set `?1` has member `?2`.
pub(crate) const SET_HAS_MEMBER: &str =
    "SELECT 1 FROM main.relis_set WHERE kid = ?1 AND member = ?2";

/// Adds member `?2` with score `?3` (not in the set).
pub(crate) const INSERT_MEMBER: &str =
    "INSERT INTO main.relis_zset (kid, member, score) VALUES (?1, ?2, ?3)";

/// Adds member `?2` with score `?3` unless it is there (the changed-row count says which).
pub(crate) const INSERT_MEMBER_IF_NEW: &str =
    "INSERT INTO main.relis_zset (kid, member, score) VALUES (?1, ?2, ?3)
                 ON CONFLICT DO NOTHING";

/// Moves member `?2` to score `?3`.
pub(crate) const SET_SCORE: &str =
    "UPDATE main.relis_zset SET score = ?3 WHERE kid = ?1 AND member = ?2";

/// Sets member `?2`'s score to `?3`, handing the score it replaces to `relis_rescore`
/// (`types/zset/write.rs`, `sql_rescore`): a lookup and an update in one seek.
pub(crate) const SET_SCORE_SEEN: &str =
    "UPDATE main.relis_zset SET score = relis_rescore(score, ?3) WHERE kid = ?1 AND member = ?2";

/// Removes member `?2`. (Its score is read first with [`ZSCORE`]: `RETURNING` would make
/// SQLite build a temporary B-tree for the returned row on every call.)
pub(crate) const DELETE_MEMBER: &str = "DELETE FROM main.relis_zset WHERE kid = ?1 AND member = ?2";

/// Removes every member at or above position `(?2, ?3)`.
pub(crate) const DELETE_FROM: &str =
    "DELETE FROM main.relis_zset WHERE kid = ?1 AND (score, member) >= (?2, ?3)";

/// Removes every member in `[(?2, ?3), (?4, ?5))`.
pub(crate) const DELETE_BETWEEN: &str =
    "DELETE FROM main.relis_zset WHERE kid = ?1 AND (score, member) >= (?2, ?3)
                     AND (score, member) < (?4, ?5)";

// Rank rows (level 0: blocks, level 1: runs of blocks; see `types/zset/rank.rs`)

/// Whether set `?1` has rank blocks (any level-0 rank row).
pub(crate) const HAS_RANK_BLOCKS: &str =
    "SELECT 1 FROM main.relis_zrank WHERE kid = ?1 AND lvl = 0 LIMIT 1";

/// The total count of the level-`?2` rank rows.
pub(crate) const RANK_SUM: &str =
    "SELECT coalesce(sum(n), 0) FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2";

/// The total count of the level-`?2` rank rows starting below score `?3`.
pub(crate) const RANK_SUM_SCORE_LT: &str =
    "SELECT coalesce(sum(n), 0) FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
                     AND score < ?3";

/// The total count of the level-`?2` rank rows starting above score `?3`.
pub(crate) const RANK_SUM_SCORE_GT: &str =
    "SELECT coalesce(sum(n), 0) FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
                     AND score > ?3";

/// The total count of the level-`?2` rank rows starting strictly between scores `?3` and `?4`.
pub(crate) const RANK_SUM_SCORE_BETWEEN: &str =
    "SELECT coalesce(sum(n), 0) FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
                     AND score > ?3 AND score < ?4";

/// The total count of the level-`?2` rank rows starting at score `?3` below member `?4`.
pub(crate) const RANK_SUM_AT_SCORE_MEMBER_LT: &str =
    "SELECT coalesce(sum(n), 0) FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
                     AND score = ?3 AND member < ?4";

/// The total count of the level-`?2` rank rows starting at score `?3` at or above member `?4`.
pub(crate) const RANK_SUM_AT_SCORE_MEMBER_GE: &str =
    "SELECT coalesce(sum(n), 0) FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
                     AND score = ?3 AND member >= ?4";

/// The total count of the level-`?2` rank rows starting at score `?3` with a member in `[?4, ?5)`.
pub(crate) const RANK_SUM_AT_SCORE_MEMBER_IN: &str =
    "SELECT coalesce(sum(n), 0) FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
                 AND score = ?3 AND member >= ?4 AND member < ?5";

/// The level-`?2` rank row (the last starting at or before `(?3, ?4)`) with its count.
pub(crate) const RANK_ROW_CONTAINING: &str =
    "SELECT score, member, n FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
                 AND (score, member) <= (?3, ?4) ORDER BY score DESC, member DESC LIMIT 1";

/// The level-1 rank rows (runs) with their counts, lowest first.
pub(crate) const RUNS: &str =
    "SELECT score, member, n FROM main.relis_zrank WHERE kid = ?1 AND lvl = 1
             ORDER BY score, member";

/// The level-1 rank rows (runs) with their counts, highest first.
pub(crate) const RUNS_DESC: &str =
    "SELECT score, member, n FROM main.relis_zrank WHERE kid = ?1 AND lvl = 1
             ORDER BY score DESC, member DESC";

/// The level-0 rank rows (blocks) with their counts from position `(?2, ?3)` up.
pub(crate) const BLOCKS_FROM: &str =
    "SELECT score, member, n FROM main.relis_zrank WHERE kid = ?1 AND lvl = 0
             AND (score, member) >= (?2, ?3) ORDER BY score, member";

/// Deletes every rank row of set `?1`.
pub(crate) const DELETE_RANK_ROWS: &str = "DELETE FROM main.relis_zrank WHERE kid = ?1";

/// Every rank row of set `?1`, by level then position (for tests).
pub(crate) const RANK_ROWS: &str =
    "SELECT lvl, score, member, n FROM main.relis_zrank WHERE kid = ?1
             ORDER BY lvl, score, member";

/// The level-`?2` rank rows of set `?1` with their counts, in order (the consistency check).
pub(crate) const RANK_LEVEL: &str =
    "SELECT score, member, n FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
                 ORDER BY score, member";
