use super::*;
use crate::clock::ManualClock;
use crate::db::Options;
use std::sync::Arc;

fn t(s: &str) -> SqlValue {
    SqlValue::text(s)
}

fn denied(r: Result<SqlOutput, SqlError>) -> String {
    match r {
        Err(SqlError::Denied(m)) => m,
        other => panic!("expected a denial, got {other:?}"),
    }
}

#[test]
fn kinds_values_and_changes() {
    let db = Db::open_in_memory().unwrap();
    let out = db
        .sql_exec("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB)", ())
        .unwrap();
    assert_eq!(out.kind, StatementKind::Ddl);
    let out = db
        .sql_exec(
            "INSERT INTO t VALUES (?, ?, ?, ?), (NULL, NULL, NULL, NULL)",
            [
                SqlValue::Integer(1),
                SqlValue::Real(1.5),
                t("x"),
                SqlValue::Blob(Bytes::from_static(b"\xff\x00")),
            ],
        )
        .unwrap();
    assert_eq!((out.kind, out.changes), (StatementKind::Changes, 2));
    let out = db.sql_query("SELECT * FROM t ORDER BY i DESC", ()).unwrap();
    assert_eq!(out.kind, StatementKind::Rows);
    assert_eq!(out.columns, ["i", "r", "s", "b"]);
    assert_eq!(
        out.rows,
        vec![
            vec![
                SqlValue::Integer(1),
                SqlValue::Real(1.5),
                t("x"),
                SqlValue::Blob(Bytes::from_static(b"\xff\x00"))
            ],
            vec![SqlValue::Null; 4],
        ]
    );
    let out = db.sql_exec("UPDATE t SET i = 7", ()).unwrap();
    assert_eq!(out.changes, 2);
    let out = db.sql_exec("SELECT 1 WHERE 0", ()).unwrap();
    assert_eq!((out.kind, out.rows.len()), (StatementKind::Rows, 0));
    let out = db
        .sql_exec("INSERT INTO t (i) VALUES (3) RETURNING i", ())
        .unwrap();
    assert_eq!(out.rows, vec![vec![SqlValue::Integer(3)]]);
}

#[test]
fn parameters_bind_and_affinity_applies() {
    let db = Db::open_in_memory().unwrap();
    db.sql_exec("CREATE TABLE a (n INTEGER, s TEXT)", ())
        .unwrap();
    // Text from the network: '42' in an INTEGER column becomes 42; a blob stays a blob.
    db.sql_exec(
        "INSERT INTO a VALUES (?1, ?2)",
        vec![
            SqlValue::from_bytes(Bytes::from_static(b"42")),
            SqlValue::from_bytes(Bytes::from_static(b"\xfe")),
        ],
    )
    .unwrap();
    let out = db
        .sql_query("SELECT typeof(n), n, typeof(s) FROM a", ())
        .unwrap();
    assert_eq!(
        out.rows,
        vec![vec![t("integer"), SqlValue::Integer(42), t("blob")]]
    );
    // Named parameters, by name or in order of first appearance.
    let out = db
        .sql_query("SELECT :b, :a, :b", [(":a", 1), (":b", 2)])
        .unwrap();
    assert_eq!(
        out.rows,
        vec![vec![
            SqlValue::Integer(2),
            SqlValue::Integer(1),
            SqlValue::Integer(2)
        ]]
    );
    let out = db.sql_query("SELECT :b, :a, :b", [10, 20]).unwrap();
    assert_eq!(
        out.rows,
        vec![vec![
            SqlValue::Integer(10),
            SqlValue::Integer(20),
            SqlValue::Integer(10)
        ]]
    );
    let out = db.sql_query("SELECT ?2, ?1", ["x", "y"]).unwrap();
    assert_eq!(out.rows, vec![vec![t("y"), t("x")]]);
    assert_eq!(
        db.sql_query("SELECT ?, ?", [1]),
        Err(SqlError::Params {
            expected: 2,
            got: 1
        })
    );
    assert_eq!(
        db.sql_query("SELECT 1", [1]),
        Err(SqlError::Params {
            expected: 0,
            got: 1
        })
    );
    assert_eq!(
        db.sql_query("SELECT :a", [(":zz", 1)]),
        Err(SqlError::NoSuchParam(":zz".into()))
    );
}

#[test]
fn several_statements_run_in_one_transaction() {
    let db = Db::open_in_memory().unwrap();
    let out = db
        .sql_exec(
            "CREATE TABLE m (x); INSERT INTO m VALUES (1); INSERT INTO m VALUES (2), (3);",
            (),
        )
        .unwrap();
    assert_eq!((out.kind, out.changes), (StatementKind::Changes, 3));
    let out = db
        .sql_exec("INSERT INTO m VALUES (4); SELECT count(*) FROM m", ())
        .unwrap();
    assert_eq!(out.rows, vec![vec![SqlValue::Integer(4)]]);
    // A failure part-way keeps nothing.
    assert!(db
        .sql_exec("INSERT INTO m VALUES (5); INSERT INTO nope VALUES (1)", ())
        .is_err());
    let out = db.sql_query("SELECT count(*) FROM m", ()).unwrap();
    assert_eq!(out.rows, vec![vec![SqlValue::Integer(4)]]);
    assert_eq!(
        db.sql_exec("SELECT ?; SELECT 2", [1]),
        Err(SqlError::MultipleStatements)
    );
    assert_eq!(
        db.sql_exec(" ;-- nothing\n /* here */", ()),
        Err(SqlError::Empty)
    );
    assert!(
        matches!(db.sql_exec("SELEKT 1", ()), Err(SqlError::Sql(m)) if m.contains("syntax error"))
    );
}

#[test]
fn queries_refuse_writes() {
    let db = Db::open_in_memory().unwrap();
    db.sql_exec("CREATE TABLE q (x)", ()).unwrap();
    assert_eq!(
        db.sql_query("INSERT INTO q VALUES (1)", ()),
        Err(SqlError::NotReadOnly)
    );
    assert_eq!(
        db.sql_query("SELECT 1; DELETE FROM q", ()),
        Err(SqlError::NotReadOnly)
    );
}

#[test]
fn the_sandbox_refuses_what_could_escape_or_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("s.db")).unwrap();
    let m = denied(db.sql_exec("ATTACH 'x.db' AS x", ()));
    assert!(m.contains("ATTACH"), "{m}");
    assert!(denied(db.sql_exec("DETACH main", ())).contains("DETACH"));
    assert!(denied(db.sql_exec("SELECT load_extension('x')", ())).contains("load_extension"));
    for tx in ["BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT a", "RELEASE a"] {
        assert!(
            denied(db.sql_exec(tx, ())).contains("transaction control"),
            "{tx}"
        );
    }
    assert!(denied(db.sql_exec("PRAGMA journal_mode = DELETE", ())).contains("PRAGMA"));
    assert!(denied(db.sql_exec("PRAGMA writable_schema = 1", ())).contains("PRAGMA"));
    assert!(denied(db.sql_exec("PRAGMA user_version = 9", ())).contains("PRAGMA"));
    // Reporting PRAGMAs work.
    assert!(db.sql_query("PRAGMA table_info(relis_keys)", ()).is_ok());
    assert!(db.sql_query("PRAGMA user_version", ()).is_ok());
    assert!(db.sql_query("SELECT * FROM pragma_table_list", ()).is_ok());
    // The engine's tables: no direct reads or writes, no schema changes on them.
    let m = denied(db.sql_query("SELECT * FROM relis_keys", ()));
    assert!(m.contains("redis_* views"), "{m}");
    assert!(denied(db.sql_exec("DELETE FROM relis_keys", ())).contains("internal"));
    assert!(denied(db.sql_exec("UPDATE relis_meta SET value = 0", ())).contains("internal"));
    assert!(
        denied(db.sql_exec("INSERT INTO relis_statements VALUES ('a','b',0,0)", ()))
            .contains("internal")
    );
    assert!(denied(db.sql_exec("DROP TABLE relis_keys", ())).contains("reserved"));
    assert!(denied(db.sql_exec("DROP VIEW redis_keys", ())).contains("reserved"));
    assert!(denied(db.sql_exec("CREATE TABLE redis_x (a)", ())).contains("reserved"));
    assert!(denied(db.sql_exec("CREATE INDEX i ON relis_keys (mtime)", ())).contains("reserved"));
    assert!(denied(db.sql_exec("ALTER TABLE relis_keys ADD COLUMN z", ())).contains("reserved"));
    assert!(denied(db.sql_exec(
        "CREATE TRIGGER tr AFTER DELETE ON relis_keys BEGIN SELECT 1; END",
        ()
    ))
    .contains("reserved"));
    assert!(
        denied(db.sql_exec("CREATE VIEW v AS SELECT 1; SELECT * FROM relis_hash", ()))
            .contains("internal")
    );
    // A user view over an internal table is no way around it.
    db.sql_exec("CREATE VIEW sneaky AS SELECT * FROM relis_meta", ())
        .ok();
    assert!(db.sql_query("SELECT * FROM sneaky", ()).is_err());
    // Nor can a foreign key point into it (SQLite would then refuse the engine's deletes).
    let m = denied(db.sql_exec(
        "CREATE TABLE fk (kid INTEGER REFERENCES relis_keys (id))",
        (),
    ));
    assert!(m.contains("foreign key"), "{m}");
    assert!(
        db.sql_query("SELECT * FROM fk", ()).is_err(),
        "the table was not kept"
    );
    db.sql_exec("CREATE TABLE parent (id INTEGER PRIMARY KEY)", ())
        .unwrap();
    db.sql_exec("CREATE TABLE child (p INTEGER REFERENCES parent (id))", ())
        .unwrap();
    assert!(matches!(
        db.sql_exec("INSERT INTO child VALUES (42)", ()),
        Err(SqlError::Sql(m)) if m.contains("FOREIGN KEY")
    ));
    // A trigger on a user table cannot write the keyspace either.
    db.sql_exec("CREATE TABLE u (x)", ()).unwrap();
    db.sql_exec(
        "CREATE TRIGGER w AFTER INSERT ON u BEGIN DELETE FROM relis_keys; END",
        (),
    )
    .unwrap();
    assert!(denied(db.sql_exec("INSERT INTO u VALUES (1)", ())).contains("internal"));
    // The text of one of the engine's own cached statements gets no pass.
    db.set("k", "v").unwrap();
    assert!(db.get("k").unwrap().is_some());
    assert!(denied(db.sql_exec(
        "DELETE FROM relis_keys WHERE db = ?1 AND key = ?2",
        [SqlValue::Integer(0), t("k")]
    ))
    .contains("internal"));
    assert!(db.get("k").unwrap().is_some());
    // VACUUM INTO outside the directory.
    let m = denied(db.sql_exec("VACUUM INTO '/tmp/escape.db'", ()));
    assert!(m.contains("VACUUM INTO"), "{m}");
    assert!(denied(db.sql_exec("VACUUM INTO '../escape.db'", ())).contains("VACUUM INTO"));
    assert!(denied(db.sql_exec("VACUUM", ())).contains("VACUUM is not allowed"));
    assert!(denied(db.sql_exec("SELECT 1; VACUUM INTO 'x.db'", ())).contains("VACUUM"));
    // Inside the directory it makes a compacted copy of the last committed state.
    let out = db.sql_exec("VACUUM INTO 'copy.db'", ()).unwrap();
    assert_eq!(out.kind, StatementKind::Ddl);
    let copy = rusqlite::Connection::open(dir.path().join("copy.db")).unwrap();
    let n: i64 = copy
        .query_row("SELECT count(*) FROM relis_keys", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1);
    assert!(
        matches!(db.sql_exec("VACUUM INTO 'copy.db'", ()), Err(SqlError::Sql(m)) if m.contains("exists"))
    );
    assert_eq!(
        db.sql_query("VACUUM INTO 'copy2.db'", ()),
        Err(SqlError::NotReadOnly)
    );
    // Nothing changed.
    assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"v"[..]));
}

#[test]
fn a_runaway_statement_is_interrupted_and_rolled_back() {
    let db = Db::open_in_memory().unwrap();
    db.sql_exec("CREATE TABLE r (x)", ()).unwrap();
    let limits = SqlLimits {
        time_limit: Some(Duration::from_millis(100)),
        max_rows: None,
    };
    let started = std::time::Instant::now();
    let r = db.sql_write(move |c| {
        c.exec(
            "INSERT INTO r WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n",
            (),
            &limits,
        )
    });
    // SQLite cannot undo only an interrupted write: the whole transaction goes.
    assert_eq!(
        r,
        Err(SqlError::Engine(Error::RolledBack(
            SqlError::TimedOut(100).to_string()
        )))
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    // An interrupted read is just an error.
    let r = db.sql_read(move |c| {
        c.query(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n",
            (),
            &limits,
        )
    });
    assert_eq!(r, Err(SqlError::TimedOut(100)));
    let r = db.sql_write(move |c| {
        c.exec(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n",
            (),
            &limits,
        )
    });
    assert_eq!(r, Err(SqlError::TimedOut(100)));
    let out = db.sql_query("SELECT count(*) FROM r", ()).unwrap();
    assert_eq!(out.rows, vec![vec![SqlValue::Integer(0)]]);
    // The connection keeps working, and untimed engine work is unaffected.
    db.set("after", "1").unwrap();
    assert!(db.sql_exec("INSERT INTO r VALUES (1)", ()).is_ok());
}

#[test]
fn oversized_results_are_refused() {
    let db = Db::open_in_memory().unwrap();
    let limits = SqlLimits {
        time_limit: None,
        max_rows: Some(10),
    };
    let r = db.sql_read(move |c| {
        c.query(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 11) SELECT i FROM n",
            (),
            &limits,
        )
    });
    assert_eq!(r, Err(SqlError::TooManyRows(10)));
    let r = db.sql_read(move |c| {
        c.query(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 10) SELECT i FROM n",
            (),
            &limits,
        )
    });
    assert_eq!(r.unwrap().rows.len(), 10);
}

#[test]
fn prepared_statements_persist() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.db");
    {
        let db = Db::open(&path).unwrap();
        db.sql_exec("CREATE TABLE p (a INTEGER, b INTEGER, c INTEGER)", ())
            .unwrap();
        let info = db
            .sql_prepare("ins", "INSERT INTO p VALUES (?1, ?2, ?3)")
            .unwrap();
        assert_eq!((info.params, info.readonly), (3, false));
        db.sql_prepare("sum", "SELECT sum(a + b + c) FROM p")
            .unwrap();
        assert_eq!(db.sql_run("ins", [1, 2, 3]).unwrap().changes, 1);
        assert!(matches!(
            db.sql_prepare("bad", "SELECT * FROM relis_keys"),
            Err(SqlError::Denied(_))
        ));
        assert_eq!(
            db.sql_prepare("two", "SELECT 1; SELECT 2"),
            Err(SqlError::MultipleStatements)
        );
        assert!(db.sql_prepare("gone", "SELECT 1").is_ok());
        assert!(db.sql_unprepare("gone").unwrap());
        assert!(!db.sql_unprepare("gone").unwrap());
    }
    let db = Db::open(&path).unwrap();
    let names: Vec<String> = db
        .sql_statements()
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["ins", "sum"]);
    db.sql_run("ins", [4, 5, 6]).unwrap();
    assert_eq!(
        db.sql_run("sum", ()).unwrap().rows,
        vec![vec![SqlValue::Integer(21)]]
    );
    assert_eq!(
        db.sql_run("nope", ()),
        Err(SqlError::NoSuchStatement("nope".into()))
    );
    let r = db.sql_read(|c| c.run_query("ins", [1, 1, 1], &SqlLimits::default()));
    assert_eq!(r, Err(SqlError::NotReadOnly));
}

#[test]
fn describe_reports_columns_rows_and_bytes() {
    let db = Db::open_in_memory().unwrap();
    db.sql_exec(
        "CREATE TABLE d (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT 'x', n REAL);
         CREATE INDEX d_name ON d (name);
         INSERT INTO d (name, n) VALUES ('a', 1), ('b', 2);",
        (),
    )
    .unwrap();
    let info = db.sql_describe("d").unwrap();
    assert_eq!(info.rows, 2);
    assert_eq!(info.columns.len(), 3);
    assert_eq!(
        info.columns[1],
        ColumnInfo {
            name: "name".into(),
            decl_type: "TEXT".into(),
            not_null: true,
            default: Some("'x'".into()),
            pk: 0
        }
    );
    assert_eq!(info.columns[0].pk, 1);
    assert!(info.bytes > 0);
    assert_eq!(info.indexes.len(), 1);
    assert_eq!(info.indexes[0].0, "d_name");
    assert!(info.indexes[0].1 > 0);
    assert_eq!(
        db.sql_describe("relis_keys"),
        Err(SqlError::NoSuchTable("relis_keys".into()))
    );
    assert_eq!(
        db.sql_describe("missing"),
        Err(SqlError::NoSuchTable("missing".into()))
    );
}

#[test]
fn views_show_live_strings_and_hide_expired_keys() {
    let clock = ManualClock::new(1_000_000);
    let db = Db::open_with(Options {
        clock: Arc::new(clock.clone()),
        ..Options::default()
    })
    .unwrap();
    db.set("a", "1").unwrap();
    db.set("b", "2").unwrap();
    db.write(|w| {
        w.set(
            0,
            b"soon",
            b"x",
            crate::SetOptions {
                expiry: crate::Expiry::At(1_000_500),
                ..Default::default()
            },
        )
        .map(|_| ())
    })
    .unwrap();
    let q = "SELECT key, value FROM redis_strings ORDER BY key";
    assert_eq!(
        db.sql_query(q, ()).unwrap().rows,
        vec![
            vec![t("a"), t("1")],
            vec![t("b"), t("2")],
            vec![t("soon"), t("x")]
        ]
    );
    let out = db
        .sql_query(
            "SELECT db, key, type, expire_at, count FROM redis_keys WHERE key = ?",
            ["soon"],
        )
        .unwrap();
    assert_eq!(
        out.rows,
        vec![vec![
            SqlValue::Integer(0),
            t("soon"),
            t("string"),
            SqlValue::Integer(1_000_500),
            SqlValue::Integer(1)
        ]]
    );
    clock.advance(500);
    assert_eq!(
        db.sql_query(q, ()).unwrap().rows,
        vec![vec![t("a"), t("1")], vec![t("b"), t("2")]]
    );
    assert_eq!(
        db.sql_query("SELECT count(*) FROM redis_keys", ())
            .unwrap()
            .rows,
        vec![vec![SqlValue::Integer(2)]]
    );
    // Joins with user tables.
    db.sql_exec(
        "CREATE TABLE names (k TEXT, label TEXT); INSERT INTO names VALUES ('a', 'first')",
        (),
    )
    .unwrap();
    assert_eq!(
        db.sql_query(
            "SELECT label, value FROM names JOIN redis_strings ON key = k",
            ()
        )
        .unwrap()
        .rows,
        vec![vec![t("first"), t("1")]]
    );
}

#[test]
fn named_databases_work_alone_and_persist() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("named.sqlite");
    {
        let db = SqlDb::open(Some(&path), SqlDbOptions::default()).unwrap();
        db.exec("CREATE TABLE kv (k TEXT PRIMARY KEY, v)", ())
            .unwrap();
        db.exec("INSERT INTO kv VALUES ('a', 1)", ()).unwrap();
        db.prepare("get", "SELECT v FROM kv WHERE k = ?").unwrap();
        assert!(matches!(
            db.query("INSERT INTO kv VALUES ('b', 2)", ()),
            Err(SqlError::NotReadOnly)
        ));
        db.backup_to(dir.path().join("copy.sqlite")).unwrap();
    }
    let db = SqlDb::open(Some(&path), SqlDbOptions::default()).unwrap();
    assert_eq!(
        db.run("get", ["a"]).unwrap().rows,
        vec![vec![SqlValue::Integer(1)]]
    );
    let copy = SqlDb::open(
        Some(&dir.path().join("copy.sqlite")),
        SqlDbOptions::default(),
    )
    .unwrap();
    assert_eq!(
        copy.query("SELECT count(*) FROM kv", ()).unwrap().rows,
        vec![vec![SqlValue::Integer(1)]]
    );
    // COPY into a fresh in-memory database.
    let mem = SqlDb::open(None, SqlDbOptions::default()).unwrap();
    mem.exec("CREATE TABLE other (x)", ()).unwrap();
    mem.copy_from(&db).unwrap();
    assert_eq!(
        mem.query("SELECT k, v FROM kv", ()).unwrap().rows,
        vec![vec![t("a"), SqlValue::Integer(1)]]
    );
    assert!(mem.query("SELECT * FROM other", ()).is_err());
    assert_eq!(mem.statements().unwrap().len(), 1);
    // An existing plain SQLite file opens as it is.
    let plain = dir.path().join("plain.sqlite");
    {
        let c = rusqlite::Connection::open(&plain).unwrap();
        c.execute_batch("CREATE TABLE legacy (x); INSERT INTO legacy VALUES (9);")
            .unwrap();
    }
    let p = SqlDb::open(Some(&plain), SqlDbOptions::default()).unwrap();
    assert_eq!(
        p.query("SELECT x FROM legacy", ()).unwrap().rows,
        vec![vec![SqlValue::Integer(9)]]
    );
    // The sandbox applies here too.
    assert!(matches!(
        p.exec("ATTACH 'x' AS y", ()),
        Err(SqlError::Denied(_))
    ));
    assert!(matches!(
        p.exec("SELECT * FROM relis_statements", ()),
        Err(SqlError::Denied(_))
    ));
}

#[test]
fn inside_keeps_paths_in_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(
        inside(dir.path(), std::path::Path::new("a.db")),
        Some(base.join("a.db"))
    );
    assert_eq!(
        inside(dir.path(), std::path::Path::new("sub/../b.db")),
        Some(base.join("b.db"))
    );
    assert_eq!(inside(dir.path(), std::path::Path::new("../c.db")), None);
    assert_eq!(
        inside(dir.path(), std::path::Path::new("/etc/passwd")),
        None
    );
    assert_eq!(inside(dir.path(), std::path::Path::new(".")), None);
    assert_eq!(
        inside(dir.path(), &base.join("d.db")),
        Some(base.join("d.db"))
    );
}

#[test]
fn first_keywords() {
    assert_eq!(first_keyword("  select 1").as_deref(), Some("SELECT"));
    assert_eq!(
        first_keyword("-- c\n/* x */ ;create table").as_deref(),
        Some("CREATE")
    );
    assert_eq!(first_keyword(" ; ; "), None);
    assert_eq!(first_keyword("(select 1)").as_deref(), Some(""));
}

#[test]
fn morph_round_trip_table_to_hashes_to_table() {
    use crate::sql::Morph;
    let db = Db::open_in_memory().unwrap();
    db.sql_exec(
        "CREATE TABLE users (key TEXT PRIMARY KEY, name TEXT, age INTEGER, score REAL);
         INSERT INTO users VALUES ('user:1', 'ann', 30, 1.5), ('user:2', 'bob', 40, 2.25),
                                  ('user:3', NULL, 50, 3.0);",
        (),
    )
    .unwrap();
    let n = db
        .sql_to(
            Morph::Hash,
            "{key}",
            "SELECT * FROM users",
            (),
            MorphOptions::default(),
        )
        .unwrap();
    assert_eq!(n, 3);
    assert_eq!(
        db.hget("user:1", "name").unwrap().as_deref(),
        Some(&b"ann"[..])
    );
    assert_eq!(
        db.hget("user:2", "score").unwrap().as_deref(),
        Some(&b"2.25"[..])
    );
    // NULLs are skipped.
    assert_eq!(db.hlen("user:3").unwrap(), 2);
    db.set("user:x", "a string, not a hash").unwrap();
    let report = db.sql_from_hashes("users2", "user:*").unwrap();
    assert_eq!(report.rows, 3);
    assert!(report.created);
    let q = "SELECT key, name, age, score FROM {} ORDER BY key";
    let a = db.sql_query(&q.replace("{}", "users"), ()).unwrap().rows;
    let b = db.sql_query(&q.replace("{}", "users2"), ()).unwrap().rows;
    assert_eq!(a, b);
    let types = db
        .sql_query(
            "SELECT name, type FROM pragma_table_info('users2') ORDER BY cid",
            (),
        )
        .unwrap()
        .rows;
    assert_eq!(
        types,
        vec![
            vec![t("key"), t("TEXT")],
            vec![t("name"), t("TEXT")],
            vec![t("age"), t("INTEGER")],
            vec![t("score"), t("REAL")],
        ]
    );
    // Upsert: a changed hash updates its row; a new field adds a column.
    db.write(|w| {
        w.hset(
            0,
            b"user:1",
            &[
                (Bytes::from_static(b"age"), Bytes::from_static(b"31")),
                (Bytes::from_static(b"city"), Bytes::from_static(b"rome")),
            ],
        )
    })
    .unwrap();
    let report = db.sql_from_hashes("users2", "user:*").unwrap();
    assert_eq!((report.rows, report.created), (3, false));
    assert_eq!(report.added_columns, ["city"]);
    assert_eq!(
        db.sql_query("SELECT age, city FROM users2 WHERE key = 'user:1'", ())
            .unwrap()
            .rows,
        vec![vec![SqlValue::Integer(31), t("rome")]]
    );
    // The sandbox still guards the table name.
    assert!(matches!(
        db.sql_from_hashes("relis_keys", "user:*"),
        Err(SqlError::Denied(_)) | Err(SqlError::Sql(_))
    ));
    assert!(matches!(
        db.sql_from_hashes("redis_new", "user:*"),
        Err(SqlError::Denied(_))
    ));
}

#[test]
fn morph_to_strings_lists_sets_and_sorted_sets() {
    use crate::sql::Morph;
    let clock = ManualClock::new(1_000_000);
    let db = Db::open_with(Options {
        clock: Arc::new(clock.clone()),
        ..Options::default()
    })
    .unwrap();
    db.sql_exec(
        "CREATE TABLE s (id INTEGER, grp TEXT, v TEXT, score REAL);
         INSERT INTO s VALUES (1, 'a', 'x', 1), (2, 'a', 'y', 2), (3, 'b', 'z', 0.5), (4, 'b', NULL, 9);",
        (),
    )
    .unwrap();
    let ttl = MorphOptions {
        replace: false,
        ttl_ms: Some(1000),
        ..MorphOptions::default()
    };
    assert_eq!(
        db.sql_to(
            Morph::String,
            "s:{id}",
            "SELECT id, v FROM s",
            (),
            ttl.clone()
        )
        .unwrap(),
        3
    );
    assert_eq!(db.get("s:2").unwrap().as_deref(), Some(&b"y"[..]));
    assert_eq!(db.get("s:4").unwrap(), None);
    assert!(matches!(
        db.sql_to(Morph::String, "s:{id}", "SELECT id, v, grp FROM s", (), ttl),
        Err(SqlError::Sql(m)) if m.contains("takes 1 column")
    ));
    // Fan-out: one list per group, in row order.
    assert_eq!(
        db.sql_to(
            Morph::List,
            "l:{grp}",
            "SELECT grp, v FROM s ORDER BY id",
            (),
            MorphOptions::default()
        )
        .unwrap(),
        3
    );
    assert_eq!(
        db.lrange("l:a", 0, -1).unwrap(),
        vec![Bytes::from("x"), Bytes::from("y")]
    );
    assert_eq!(db.lrange("l:b", 0, -1).unwrap(), vec![Bytes::from("z")]);
    // Appends without REPLACE, starts over with it.
    db.sql_to(
        Morph::List,
        "l:{grp}",
        "SELECT grp, v FROM s WHERE id = 1",
        (),
        MorphOptions::default(),
    )
    .unwrap();
    assert_eq!(db.llen("l:a").unwrap(), 3);
    let replace = MorphOptions {
        replace: true,
        ttl_ms: None,
        ..MorphOptions::default()
    };
    db.sql_to(
        Morph::List,
        "l:{grp}",
        "SELECT grp, v FROM s WHERE id = 1",
        (),
        replace,
    )
    .unwrap();
    assert_eq!(db.lrange("l:a", 0, -1).unwrap(), vec![Bytes::from("x")]);
    assert_eq!(
        db.sql_to(
            Morph::Set,
            "all",
            "SELECT v FROM s UNION ALL SELECT v FROM s",
            (),
            MorphOptions::default()
        )
        .unwrap(),
        3
    );
    assert_eq!(db.scard("all").unwrap(), 3);
    assert_eq!(
        db.sql_to(
            Morph::ZSet,
            "z",
            "SELECT v, score FROM s",
            (),
            MorphOptions::default()
        )
        .unwrap(),
        3
    );
    assert_eq!(
        db.sql_query(
            "SELECT member, score FROM redis_zsets WHERE key = 'z' ORDER BY score",
            ()
        )
        .unwrap()
        .rows,
        vec![
            vec![t("z"), SqlValue::Real(0.5)],
            vec![t("x"), SqlValue::Real(1.0)],
            vec![t("y"), SqlValue::Real(2.0)]
        ]
    );
    assert!(matches!(
        db.sql_to(Morph::ZSet, "z", "SELECT v, 'abc' FROM s", (), MorphOptions::default()),
        Err(SqlError::Sql(m)) if m.contains("not a number")
    ));
    // A wrong type fails the whole command; nothing of it stays.
    db.set("wrong", "x").unwrap();
    assert_eq!(
        db.sql_to(
            Morph::Set,
            "{k}",
            "SELECT 'fresh' AS k, 'm' AS v UNION ALL SELECT 'wrong', 'm'",
            (),
            MorphOptions::default()
        ),
        Err(SqlError::Engine(Error::WrongType))
    );
    assert_eq!(db.exists(&["fresh"]).unwrap(), 0);
    // The TTL took.
    clock.advance(1000);
    assert_eq!(db.get("s:1").unwrap(), None);
    assert!(db.get("wrong").unwrap().is_some());
}

#[test]
fn an_inline_read_defers_a_long_statement_and_runs_a_short_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("i.db")).unwrap();
    let limits = SqlLimits::default();
    let long = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000) \
                SELECT count(*) FROM n";
    let here = |sql: &'static str| {
        db.read_here(|r| r.sql_query(sql, (), &limits))
            .unwrap()
            .unwrap()
    };
    assert_eq!(
        here("SELECT 1 + 1").unwrap().rows,
        vec![vec![SqlValue::Integer(2)]]
    );
    assert_eq!(here(long), Err(SqlError::Deferred));
    // The budget is only for inline reads: on a reader thread it runs to the end.
    let out = db
        .read(move |r| Ok(r.sql_query(long, (), &limits)))
        .unwrap();
    assert_eq!(out.unwrap().rows, vec![vec![SqlValue::Integer(100000)]]);
    // And the thread's next inline read starts with a fresh budget.
    assert_eq!(
        here("SELECT 3").unwrap().rows,
        vec![vec![SqlValue::Integer(3)]]
    );
}
