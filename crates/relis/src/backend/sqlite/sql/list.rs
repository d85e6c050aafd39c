//! The list family's SQL (SQLite): every statement `types/list.rs` runs, named by what it
//! does. A list's elements sit at consecutive positions from the key row's `head`; `?1` is
//! the list's id (`kid`) unless the statement reads or writes the key row (`?1`, `?2`:
//! database and key).
//!
//! Texts are byte for byte what the type code ran before they moved here (a multi-line text
//! keeps the indentation it had there), so plans and cached statements are unchanged.

// The key row (`head` is the position of the first element, `count` the length)

/// Creates the key row of a new list (type 2) whose id `?3` is also its first version.
pub(crate) const KEY_INSERT: &str =
    "INSERT INTO main.relis_keys (db, key, id, type, version, count, mtime, head)
                 VALUES (?1, ?2, ?3, 2, ?3, ?4, ?5, ?6)";

// Elements, by position

/// The element at position `?2`.
pub(crate) const ELEMENT_AT: &str = "SELECT value FROM main.relis_list WHERE kid = ?1 AND pos = ?2";

/// The `?3` elements from position `?2` on, head first. (Positions are dense, so a count
/// selects the same rows as an upper bound would; SQLite stops on it without comparing each
/// row's key with the bound.)
pub(crate) const ELEMENTS_FROM: &str =
    "SELECT value FROM main.relis_list WHERE kid = ?1 AND pos >= ?2 ORDER BY pos LIMIT ?3";

/// The positions in `?2..=?3` holding `?4`, head first (LPOS).
pub(crate) const MATCHES_BETWEEN: &str =
    "SELECT pos FROM main.relis_list WHERE kid = ?1 AND pos BETWEEN ?2 AND ?3 AND value = ?4
             ORDER BY pos";

/// The positions in `?2..=?3` holding `?4`, tail first (LPOS with a negative RANK).
pub(crate) const MATCHES_BETWEEN_DESC: &str =
    "SELECT pos FROM main.relis_list WHERE kid = ?1 AND pos BETWEEN ?2 AND ?3 AND value = ?4
             ORDER BY pos DESC";

/// The first position holding `?2` (LINSERT's pivot).
pub(crate) const FIRST_MATCH: &str =
    "SELECT pos FROM main.relis_list WHERE kid = ?1 AND value = ?2 ORDER BY pos LIMIT 1";

/// The first `?3` positions holding `?2`, head first (LREM; -1: all).
pub(crate) const MATCHES: &str =
    "SELECT pos FROM main.relis_list WHERE kid = ?1 AND value = ?2 ORDER BY pos LIMIT ?3";

/// The last `?3` positions holding `?2`, tail first (LREM with a negative count).
pub(crate) const MATCHES_DESC: &str =
    "SELECT pos FROM main.relis_list WHERE kid = ?1 AND value = ?2 ORDER BY pos DESC LIMIT ?3";

/// Writes element `?3` at the free position `?2`.
pub(crate) const INSERT_ELEMENT: &str =
    "INSERT INTO main.relis_list (kid, pos, value) VALUES (?1, ?2, ?3)";

/// Replaces the element at position `?2` (LSET).
pub(crate) const SET_ELEMENT: &str =
    "UPDATE main.relis_list SET value = ?3 WHERE kid = ?1 AND pos = ?2";

/// Deletes the elements at `?2..=?3` (LTRIM).
pub(crate) const DELETE_BETWEEN: &str =
    "DELETE FROM main.relis_list WHERE kid = ?1 AND pos BETWEEN ?2 AND ?3";
