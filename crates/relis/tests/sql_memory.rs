//! User SQL's working memory (`sql/memory.rs`): SQLite's allocations while a user statement
//! runs are counted against `SqlLimits::max_memory`. In its own test binary: the counting
//! allocator is installed by the first `Db` of the process, before SQLite initialises (a test
//! opening a plain SQLite connection first would keep SQLite's own).

use relis::{Db, SqlError, SqlLimits, SqlValue};

/// A statement's own working memory (a sort, DISTINCT, a temporary b-tree of big rows) was
/// bounded by nothing: 40 rows of 60 MB sorted took the server to 2.6 GB. SQLite's allocations
/// while user SQL runs are counted against `max_memory` (the page cache excepted), and the
/// statement fails cleanly past it; everything works afterwards.
#[test]
fn a_statement_cannot_take_more_working_memory_than_its_limit() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("m.db")).unwrap();
    db.set("k", "v").unwrap();
    let limits = SqlLimits {
        max_memory: Some(32 << 20),
        ..SqlLimits::default()
    };
    let sorted = |rows: u32, size: u32| {
        format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {rows}) \
             SELECT length(b) FROM (SELECT zeroblob({size}) AS b, i FROM n ORDER BY random()) LIMIT 1"
        )
    };
    let big = sorted(20, 10_000_000);
    // On a reader, and on the writer (where temporary data is kept in memory).
    let q = big.clone();
    let read = db.read(move |r| Ok(r.sql_query(&q, (), &limits))).unwrap();
    assert_eq!(read, Err(SqlError::TooMuchMemory(32 << 20)));
    let q = big.clone();
    let write = db
        .write(move |w| Ok(w.sql().exec(&q, (), &limits)))
        .unwrap();
    assert_eq!(write, Err(SqlError::TooMuchMemory(32 << 20)));
    // Within the limit, the same shape works; so does the engine.
    let small = sorted(20, 100_000);
    let q = small.clone();
    let out = db
        .read(move |r| Ok(r.sql_query(&q, (), &limits)))
        .unwrap()
        .unwrap();
    assert_eq!(out.rows, vec![vec![SqlValue::Integer(100_000)]]);
    let out = db
        .write(move |w| Ok(w.sql().exec(&small, (), &limits)))
        .unwrap()
        .unwrap();
    assert_eq!(out.rows, vec![vec![SqlValue::Integer(100_000)]]);
    db.set("k2", "v2").unwrap();
    assert_eq!(db.get("k").unwrap(), Some(relis::Bytes::from_static(b"v")));
}
