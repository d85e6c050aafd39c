//! The set family's SQL (`types/set.rs`): members in `relis_set (kid, member)`, the count and
//! encoding (intset or hashtable) in the key row.

/// Whether `?2` is a member of the set `?1`.
pub(crate) const SISMEMBER: &str = "SELECT 1 FROM main.relis_set WHERE kid = ?1 AND member = ?2";

/// Every member of the set `?1`, in member order.
pub(crate) const MEMBERS: &str = "SELECT member FROM main.relis_set WHERE kid = ?1 ORDER BY member";

/// Every member of the set `?1`, in no particular order.
pub(crate) const MEMBERS_ANY_ORDER: &str = "SELECT member FROM main.relis_set WHERE kid = ?1";

/// The member `?2` places after the first, in member order.
pub(crate) const MEMBER_AT: &str =
    "SELECT member FROM main.relis_set WHERE kid = ?1 ORDER BY member LIMIT 1 OFFSET ?2";

/// The member `?2` places before the last, in member order.
pub(crate) const MEMBER_AT_DESC: &str =
    "SELECT member FROM main.relis_set WHERE kid = ?1 ORDER BY member DESC LIMIT 1 OFFSET ?2";

/// The member `?3` places before member `?2` (walking down).
pub(crate) const MEMBER_BEFORE: &str =
    "SELECT member FROM main.relis_set WHERE kid = ?1 AND member < ?2
                 ORDER BY member DESC LIMIT 1 OFFSET ?3";

/// The member `?3` places after member `?2` (walking up).
pub(crate) const MEMBER_AFTER: &str =
    "SELECT member FROM main.relis_set WHERE kid = ?1 AND member > ?2
                 ORDER BY member LIMIT 1 OFFSET ?3";

/// An SSCAN page: at most `?3` members in [`?2`, `?4`), in member order.
pub(crate) const SCAN_RANGE: &str =
    "SELECT member FROM main.relis_set WHERE kid = ?1 AND member >= ?2 AND member < ?4
                 ORDER BY member LIMIT ?3";

/// An SSCAN page: at most `?3` members from `?2` on, in member order.
pub(crate) const SCAN_FROM: &str =
    "SELECT member FROM main.relis_set WHERE kid = ?1 AND member >= ?2
                 ORDER BY member LIMIT ?3";

/// A new set's key row (type 3).
pub(crate) const KEY_INSERT: &str =
    "INSERT INTO main.relis_keys (db, key, id, type, expire_at, version, count, mtime, head)
                 VALUES (?1, ?2, ?3, 3, NULL, ?3, ?4, ?5, ?6)";

/// Deletes member `?2` of the set `?1`.
pub(crate) const SREM_MEMBER: &str = "DELETE FROM main.relis_set WHERE kid = ?1 AND member = ?2";

/// Adds member `?2` to the set `?1` (no-op if there).
pub(crate) const SADD_MEMBER: &str =
    "INSERT OR IGNORE INTO main.relis_set (kid, member) VALUES (?1, ?2)";

/// Adds every member of the set `?1` to the set `?2`.
pub(crate) const COPY_MEMBERS: &str = "INSERT OR IGNORE INTO main.relis_set (kid, member)
                    SELECT ?2, member FROM main.relis_set WHERE kid = ?1";

/// The members of the set `?1` that are in all (or, with `diff`, none) of the sets
/// `?2`..`?sets`, in member order.
pub(crate) fn probe(diff: bool, sets: usize) -> String {
    format!(
        "SELECT a.member {} ORDER BY a.member",
        probe_from(diff, sets)
    )
}

/// Adds what [`probe`] finds to the set `?{sets + 1}`.
pub(crate) fn store_probe(diff: bool, sets: usize) -> String {
    format!(
        "INSERT INTO main.relis_set (kid, member) SELECT ?{}, a.member {}",
        sets + 1,
        probe_from(diff, sets)
    )
}

/// `FROM ... WHERE ...` over the sets `?1`..`?sets`: the members of `?1` (as `a.member`) that
/// are in all (or, with `diff`, none) of the others. Built per number of sets (multi-key
/// commands are not the hot path; the text keys the statement cache).
fn probe_from(diff: bool, sets: usize) -> String {
    let mut sql = String::from("FROM main.relis_set AS a WHERE a.kid = ?1");
    let not = if diff { "NOT " } else { "" };
    for i in 2..=sets {
        sql.push_str(&format!(
            " AND {not}EXISTS (SELECT 1 FROM main.relis_set WHERE kid = ?{i} AND member = a.member)"
        ));
    }
    sql
}
