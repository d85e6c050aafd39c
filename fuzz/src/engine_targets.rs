//! Fuzz bodies for two engine pieces every client reaches (only `relis`, so the engine crate's
//! tests can include this file):
//!
//! - [`glob`]: the glob matcher behind KEYS, SCAN MATCH, PSUBSCRIBE, CONFIG GET and ACL key
//!   patterns (CVE-2022-36021 made it exponential). Checks: no panic, an answer within a time
//!   budget per input, and that every match starts with the pattern's literal prefix (KEYS and
//!   SCAN range-scan the keys by that prefix, so a match outside it would be a key they miss).
//! - [`sql_params`]: the SQL parameter binder (`?`, `?NNN`, `:name`, `@name`, `$name`), with
//!   positional and named values of every storage class against statements with every kind of
//!   parameter. Checks: no panic, a clean error or a result, a value bound to `SELECT ?` comes
//!   back as it went in, and the engine still works afterwards.

use relis::{Db, Params, SqlValue};
use std::time::{Duration, Instant};

/// Longest a single match may take, even in a debug build replaying the corpus: the matcher is
/// polynomial since the CVE-2022-36021 fix; the fuzzer's own `-timeout` is the tighter bound.
const GLOB_BUDGET: Duration = Duration::from_secs(5);

/// Input: a flags byte (bit 0: nocase), then the pattern and the string separated by the first
/// NUL (the string may hold more NULs).
pub fn glob(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let nocase = flags & 1 == 1;
    let split = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    let pattern = &rest[..split];
    let s = rest.get(split + 1..).unwrap_or(&[]);
    let start = Instant::now();
    let matched = relis::glob::glob_match(pattern, s, nocase);
    assert!(
        start.elapsed() < GLOB_BUDGET,
        "matching took {:?}",
        start.elapsed()
    );
    if matched && !nocase {
        let prefix = relis::glob::literal_prefix(pattern);
        assert!(
            s.starts_with(&prefix),
            "a match outside the literal prefix {prefix:?}"
        );
    }
}

/// Statements with every way SQLite numbers parameters, and some it refuses.
const STATEMENTS: &[&str] = &[
    "SELECT ?",
    "SELECT ?1, ?2",
    "SELECT ?2",
    "SELECT ?3, ?1",
    "SELECT :a, @b, $c",
    "SELECT :a, ?, :a",
    "SELECT ?999",
    "SELECT ?32766",
    "SELECT ?32767",
    "SELECT ?0",
    "SELECT $a::b",
    "SELECT $a(x)",
    "SELECT @",
    "SELECT :",
    "SELECT length(?), typeof(?)",
    "SELECT ? || ?",
    "INSERT INTO t VALUES (?, ?, ?)",
    "INSERT INTO t VALUES (:a, :b, :c) RETURNING *",
    "SELECT * FROM t WHERE a = ? LIMIT ?",
    "UPDATE t SET b = ? WHERE a = ?",
    "SELECT ?; SELECT ?",
    "SELECT 1",
    "",
];

/// Names for named values: valid ones, ones with the wrong prefix, none, and odd bytes.
const NAMES: &[&str] = &[
    ":a", "@b", "$c", "a", ":zz", "", "?1", ":a\u{0}", "$a::b", "@", ":", "?",
];

/// Reads a value of any storage class from the input.
fn value(input: &mut &[u8]) -> SqlValue {
    let Some((&tag, rest)) = input.split_first() else {
        return SqlValue::Null;
    };
    *input = rest;
    let mut eight = || {
        let mut b = [0u8; 8];
        let n = input.len().min(8);
        b[..n].copy_from_slice(&input[..n]);
        *input = &input[n..];
        b
    };
    match tag % 5 {
        0 => SqlValue::Null,
        1 => SqlValue::Integer(i64::from_le_bytes(eight())),
        2 => SqlValue::Real(f64::from_le_bytes(eight())),
        kind => {
            let len = input.first().map_or(0, |&n| n as usize);
            let body = input
                .get(1..1 + len)
                .unwrap_or(input.get(1..).unwrap_or(&[]));
            let bytes = relis::Bytes::copy_from_slice(body);
            *input = input.get(1 + len..).unwrap_or(&[]);
            if kind == 3 {
                SqlValue::Text(bytes)
            } else {
                SqlValue::Blob(bytes)
            }
        }
    }
}

thread_local! {
    static DB: Db = {
        let db = Db::open_in_memory().expect("engine");
        db.sql_exec("CREATE TABLE t (a, b, c)", ()).expect("table");
        db
    };
}

/// Input: a statement choice (or, after `#`, the statement's own text up to a NUL), a mode
/// byte (none, positional, named), then up to 8 values (named ones with a name choice each).
pub fn sql_params(data: &[u8]) {
    let mut input = data;
    let sql: String = match input.split_first() {
        Some((b'#', rest)) => {
            let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
            let text = String::from_utf8_lossy(&rest[..end]).into_owned();
            input = rest.get(end + 1..).unwrap_or(&[]);
            text
        }
        Some((&i, rest)) => {
            input = rest;
            STATEMENTS[i as usize % STATEMENTS.len()].to_string()
        }
        None => return,
    };
    let mode = input.first().copied().unwrap_or(0);
    input = input.get(1..).unwrap_or(&[]);
    let count = (mode >> 2) as usize % 9;
    let params = match mode % 3 {
        0 => Params::None,
        1 => Params::Positional((0..count).map(|_| value(&mut input)).collect()),
        _ => Params::Named(
            (0..count)
                .map(|_| {
                    let name = input.first().map_or(0, |&n| n as usize);
                    input = input.get(1..).unwrap_or(&[]);
                    (NAMES[name % NAMES.len()].to_string(), value(&mut input))
                })
                .collect(),
        ),
    };
    DB.with(|db| {
        let query = db.sql_query(&sql, params.clone());
        if let (Ok(out), "SELECT ?", Params::Positional(v)) = (&query, sql.as_str(), &params) {
            let back = &out.rows[0][0];
            match &v[0] {
                // SQLite stores a NaN as NULL.
                SqlValue::Real(f) if f.is_nan() => assert_eq!(back, &SqlValue::Null),
                sent => assert_eq!(back, sent, "SELECT ? gave back another value"),
            }
        }
        let _ = db.sql_exec(&sql, params);
        // The engine is unharmed.
        db.set("fuzz:k", "v").expect("SET after user SQL");
        assert_eq!(
            db.get("fuzz:k").expect("GET after user SQL"),
            Some(relis::Bytes::from_static(b"v"))
        );
    });
}
