//! The SQL of the sorted sets' rank rows (`relis_zrank`, see `types/zset/rank.rs`): the
//! writer's reads and writes of blocks (level 0) and runs (level 1). Parameters are numbered
//! as each statement's doc line says; positions are (score, member) pairs.

/// Sets rank row `?1`'s count to `?2` (by rowid): pending counts written back.
pub(crate) const COUNT_SET_BY_ID: &str = "UPDATE main.relis_zrank SET n = ?2 WHERE id = ?1";

/// Set `?1`'s rank rows, level by level in order: (lvl, score, member, n, id).
pub(crate) const ROWS_IN_ORDER: &str =
    "SELECT lvl, score, member, n, id FROM main.relis_zrank WHERE kid = ?1
     ORDER BY lvl, score, member";

/// Set `?1`'s rank rows, in no order: (lvl, score, member, n, id).
pub(crate) const ROWS: &str =
    "SELECT lvl, score, member, n, id FROM main.relis_zrank WHERE kid = ?1";

/// Sets the count of set `?1`'s level-`?2` row starting at (`?3`, `?4`) to `?5`.
pub(crate) const COUNT_SET: &str = "UPDATE main.relis_zrank SET n = ?5
     WHERE kid = ?1 AND lvl = ?2 AND score = ?3 AND member = ?4";

/// Adds a level-`?2` row of set `?1` starting at (`?3`, `?4`) with count `?5`.
pub(crate) const ROW_INSERT: &str =
    "INSERT INTO main.relis_zrank (kid, lvl, score, member, n) VALUES (?1, ?2, ?3, ?4, ?5)";

/// Deletes set `?1`'s level-`?2` row starting at (`?3`, `?4`); its count.
pub(crate) const ROW_DELETE: &str =
    "DELETE FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2 AND score = ?3 AND member = ?4
     RETURNING n";

/// Deletes set `?1`'s level-`?2` rows starting after (`?3`, `?4`).
pub(crate) const ROWS_DELETE_AFTER: &str =
    "DELETE FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
     AND (score, member) > (?3, ?4)";

/// Deletes set `?1`'s level-`?2` rows starting after (`?3`, `?4`) and before (`?5`, `?6`).
pub(crate) const ROWS_DELETE_BETWEEN: &str =
    "DELETE FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
     AND (score, member) > (?3, ?4) AND (score, member) < (?5, ?6)";

/// Set `?1`'s first level-`?2` row starting after (`?3`, `?4`): (score, member, n).
pub(crate) const ROW_NEXT: &str =
    "SELECT score, member, n FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
     AND (score, member) > (?3, ?4) ORDER BY score, member LIMIT 1";

/// Set `?1`'s last level-`?2` row starting before (`?3`, `?4`): (score, member, n).
pub(crate) const ROW_PREV: &str =
    "SELECT score, member, n FROM main.relis_zrank WHERE kid = ?1 AND lvl = ?2
     AND (score, member) < (?3, ?4) ORDER BY score DESC, member DESC LIMIT 1";

/// The first `?4` members of set `?1` from (`?2`, `?3`) on, in order: where a block is cut.
pub(crate) const MEMBERS_FROM: &str =
    "SELECT score, member FROM main.relis_zset WHERE kid = ?1 AND (score, member) >= (?2, ?3)
     ORDER BY score, member LIMIT ?4";

/// Set `?1`'s blocks (level 0) from (`?2`, `?3`) on, in order: (score, member, n); where a run is cut.
pub(crate) const BLOCKS_FROM: &str =
    "SELECT score, member, n FROM main.relis_zrank WHERE kid = ?1 AND lvl = 0
     AND (score, member) >= (?2, ?3) ORDER BY score, member";

/// Deletes all of set `?1`'s rank rows.
pub(crate) const ROWS_DELETE: &str = "DELETE FROM main.relis_zrank WHERE kid = ?1";
