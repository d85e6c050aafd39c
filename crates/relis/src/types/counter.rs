//! Integers as Redis reads them, and the SQL functions of the engine's one-statement writes
//! (INCRBY's sum, SET's overwrite, ZADD's rescore): pure, so that the SQL sandbox, which
//! registers `relis_incr`, `relis_overwrite` and `relis_rescore` on every connection, needs
//! nothing of the types' storage.

/// Parses an integer as Redis's `string2ll` does: no spaces, no `+`, no leading zeros, no `-0`.
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (neg, digits) = match s[0] {
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !(b'1'..=b'9').contains(&digits[0]) {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    if neg {
        if v > i64::MAX as u64 + 1 {
            None
        } else {
            Some((v as i64).wrapping_neg())
        }
    } else {
        i64::try_from(v).ok()
    }
}

thread_local! {
    /// The last sum [`sql_incr`] made on this thread: INCRBY's answer once its one statement
    /// has changed its row (a `RETURNING` clause would cost more than the whole update: SQLite
    /// buffers the rows it returns in a temporary B-tree it opens and closes each time).
    static INCR_SUM: std::cell::Cell<Option<i64>> = const { std::cell::Cell::new(None) };
}

/// The SQL function `relis_incr(value, delta)`: the integer in `value` (a string as Redis
/// parses integers) plus `delta`, as a string, or NULL when `value` holds no integer or the sum
/// overflows. INCRBY's one-statement path uses it (`INCR_INLINE`, on the writer's connection):
/// [`sql_incr_began`] before the statement, [`sql_incr_sum`] after it.
pub(crate) fn sql_incr(value: rusqlite::types::ValueRef<'_>, delta: i64) -> Option<Vec<u8>> {
    let (rusqlite::types::ValueRef::Blob(b) | rusqlite::types::ValueRef::Text(b)) = value else {
        return None;
    };
    let n = parse_i64(b)?.checked_add(delta)?;
    INCR_SUM.set(Some(n));
    Some(n.to_string().into_bytes())
}

/// Forgets this thread's last [`sql_incr`] sum: a statement that uses the function follows.
pub(crate) fn sql_incr_began() {
    INCR_SUM.set(None);
}

/// The sum [`sql_incr`] made on this thread since [`sql_incr_began`], if it ran.
pub(crate) fn sql_incr_sum() -> Option<i64> {
    INCR_SUM.get()
}

thread_local! {
    /// Whether [`sql_overwrite`] ran on this thread since [`sql_overwrite_began`], and if so
    /// whether the row it overwrote had an expiry.
    static OVERWROTE: std::cell::Cell<Option<bool>> = const { std::cell::Cell::new(None) };
}

/// The SQL function `relis_overwrite(expire_at)`, called by plain SET's upsert (`SET_INLINE`) in
/// its update branch only: records that the key row existed and whether it had an expiry (SET
/// tells a new key, and an expiry it clears, from what the key counts must learn, without a
/// lookup first or a `RETURNING`), and returns NULL, the row's new expiry.
pub(crate) fn sql_overwrite(expire_at: rusqlite::types::ValueRef<'_>) -> Option<i64> {
    OVERWROTE.set(Some(!matches!(expire_at, rusqlite::types::ValueRef::Null)));
    None
}

/// Forgets this thread's last [`sql_overwrite`]: a statement that uses the function follows.
pub(crate) fn sql_overwrite_began() {
    OVERWROTE.set(None);
}

/// Whether [`sql_overwrite`] ran on this thread since [`sql_overwrite_began`] (`None`: it did
/// not), and whether the row it overwrote had an expiry.
pub(crate) fn sql_overwritten() -> Option<bool> {
    OVERWROTE.get()
}

thread_local! {
    /// The score [`sql_rescore`] replaced last on this thread, if it ran since
    /// [`sql_rescore_began`].
    static REPLACED: std::cell::Cell<Option<f64>> = const { std::cell::Cell::new(None) };
}

/// The SQL function `relis_rescore(old, new)`, called by ZADD's score update (`SET_SCORE_SEEN`,
/// types/zset/write.rs) for the row it changes: records the score it replaces (what the rank
/// rows and the reply need) and returns the new one, so one statement finds the member, reads
/// its score and writes the new one, where a lookup and an `UPDATE` made two seeks.
pub(crate) fn sql_rescore(old: f64, new: f64) -> f64 {
    REPLACED.set(Some(old));
    new
}

/// Forgets this thread's last [`sql_rescore`]: a statement that uses the function follows.
pub(crate) fn sql_rescore_began() {
    REPLACED.set(None);
}

/// The score [`sql_rescore`] replaced on this thread since [`sql_rescore_began`], if it ran.
pub(crate) fn sql_rescored() -> Option<f64> {
    REPLACED.get()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `relis_incr`, INCRBY's one-statement path: a sum where Redis would give one, NULL (the
    /// general path, which tells the errors apart) everywhere else.
    #[test]
    fn sql_incr_adds_only_what_redis_would() {
        use rusqlite::types::ValueRef;
        let add =
            |v: &[u8], d| sql_incr(ValueRef::Blob(v), d).map(|s| String::from_utf8(s).unwrap());
        assert_eq!(add(b"41", 1).as_deref(), Some("42"));
        assert_eq!(add(b"-5", -7).as_deref(), Some("-12"));
        assert_eq!(add(b"0", 0).as_deref(), Some("0"));
        for bad in [&b""[..], b"01", b"+1", b" 1", b"1.0", b"-0", b"abc"] {
            assert_eq!(add(bad, 1), None, "{bad:?}");
        }
        assert_eq!(add(i64::MAX.to_string().as_bytes(), 1), None);
        assert_eq!(add(i64::MIN.to_string().as_bytes(), -1), None);
        assert_eq!(sql_incr(ValueRef::Null, 1), None);
        assert_eq!(sql_incr(ValueRef::Integer(1), 1), None);
    }
}
