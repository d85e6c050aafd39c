//! SQL.* over TCP: reply shapes in RESP2 and RESP3, parameters, the sandbox and limits,
//! prepared statements, named databases, DESC, the views of Redis data, MULTI atomicity, and
//! what survives a restart and a SIGKILL.

mod common;
use common::*;
use resp::Frame;
use std::time::{Duration, Instant};

fn row(items: Vec<Frame>) -> Frame {
    arr(items)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_and_query_reply_typed_values() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&[
            "SQL.EXEC",
            "CREATE TABLE t (id INTEGER PRIMARY KEY, r REAL, s TEXT, n)"
        ])
        .await,
        ok()
    );
    assert_eq!(
        c.cmd(&[
            "SQL.EXEC",
            "INSERT INTO t (r, s) VALUES (?, ?), (?, ?)",
            "1.5",
            "x",
            "2",
            "y"
        ])
        .await,
        int(2)
    );
    let rows = c
        .cmd(&["SQL.QUERY", "SELECT id, r, s, n FROM t ORDER BY id"])
        .await;
    // RESP2: a REAL is a bulk string in %.17g.
    assert_eq!(
        rows,
        arr(vec![
            row(vec![int(1), bulk("1.5"), bulk("x"), nil()]),
            row(vec![int(2), bulk("2"), bulk("y"), nil()]),
        ])
    );
    assert_eq!(
        c.cmd(&[
            "SQL.QUERY",
            "HEADER",
            "SELECT id, s AS label FROM t WHERE id = ?",
            "2"
        ])
        .await,
        arr(vec![bulks(&["id", "label"]), row(vec![int(2), bulk("y")])])
    );
    assert_eq!(
        c.cmd(&["SQL.QUERY", "HEADER", "SELECT id FROM t WHERE 0"])
            .await,
        arr(vec![bulks(&["id"])])
    );
    assert_eq!(
        c.cmd(&["SQL.QUERY", "SELECT id FROM t WHERE 0"]).await,
        arr(vec![])
    );
    assert_eq!(
        c.cmd(&["SQL.EXEC", "UPDATE t SET n = :v", "7"]).await,
        int(2)
    );
    assert_eq!(c.cmd(&["SQL.EXEC", "DELETE FROM t WHERE 0"]).await, int(0));
    assert_eq!(c.cmd(&["SQL.EXEC", "DROP TABLE t"]).await, ok());

    // RESP3: a REAL is a double, NULL is `_`.
    c.cmd(&["HELLO", "3"]).await;
    c.send(&encode_command(&[
        b"SQL.QUERY",
        b"SELECT 0.5, NULL, 3, 'a'",
    ]))
    .await;
    assert_eq!(
        show(&c.read_raw().await.unwrap()),
        show(b"*1\r\n*4\r\n,0.5\r\n_\r\n:3\r\n$1\r\na\r\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parameters_are_text_or_blob_and_several_statements_run_together() {
    let s = start().await;
    let mut c = s.raw().await;
    c.cmd(&["SQL.EXEC", "CREATE TABLE p (n INTEGER, b)"]).await;
    assert_eq!(
        c.cmd_bytes(&[
            b"SQL.EXEC",
            b"INSERT INTO p VALUES (?1, ?2)",
            b"42",
            b"\xff\x00"
        ])
        .await,
        int(1)
    );
    assert_eq!(
        c.cmd(&["SQL.QUERY", "SELECT typeof(n), n, typeof(b), hex(b) FROM p"])
            .await,
        arr(vec![row(vec![
            bulk("integer"),
            int(42),
            bulk("blob"),
            bulk("FF00")
        ])])
    );
    assert_eq!(
        c.cmd(&["SQL.EXEC", "SELECT ?, ?", "1"]).await,
        err("ERR wrong number of parameters: the statement takes 2, got 1")
    );
    // Several statements: one transaction, the last one's reply.
    assert_eq!(
        c.cmd(&[
            "SQL.EXEC",
            "INSERT INTO p VALUES (1, 1); INSERT INTO p VALUES (2, 2); SELECT count(*) FROM p;"
        ])
        .await,
        arr(vec![row(vec![int(3)])])
    );
    assert_eq!(
        c.cmd(&[
            "SQL.EXEC",
            "INSERT INTO p VALUES (3, 3); INSERT INTO p VALUES (4, 4)"
        ])
        .await,
        int(2)
    );
    let e = c
        .cmd(&[
            "SQL.EXEC",
            "INSERT INTO p VALUES (5, 5); INSERT INTO nope VALUES (1)",
        ])
        .await;
    assert_eq!(e, err("ERR no such table: nope"));
    assert_eq!(
        c.cmd(&["SQL.QUERY", "SELECT count(*) FROM p"]).await,
        arr(vec![row(vec![int(5)])]),
        "the failed batch left nothing"
    );
    // A statement that fails half way (OR FAIL keeps earlier rows in SQLite) leaves nothing.
    c.cmd(&["SQL.EXEC", "CREATE TABLE uq (x UNIQUE)"]).await;
    assert_eq!(
        c.cmd(&["SQL.EXEC", "INSERT OR FAIL INTO uq VALUES (1), (2), (1)"])
            .await,
        err("ERR UNIQUE constraint failed: uq.x")
    );
    assert_eq!(
        c.cmd(&["SQL.EXEC", "INSERT INTO uq VALUES (3), (4), (3)"])
            .await,
        err("ERR UNIQUE constraint failed: uq.x")
    );
    assert_eq!(
        c.cmd(&["SQL.QUERY", "SELECT count(*) FROM uq"]).await,
        arr(vec![row(vec![int(0)])])
    );
    assert_eq!(
        c.cmd(&["SQL.EXEC", "SELECT ?; SELECT 1", "1"]).await,
        err("ERR only one statement is allowed here (parameters bind to one statement)")
    );
    assert_eq!(
        c.cmd(&["SQL.QUERY", "INSERT INTO p VALUES (9, 9)"]).await,
        err("ERR statement would write: only reads are allowed here")
    );
    let e = c.cmd(&["SQL.EXEC", "SELEC 1"]).await;
    assert!(
        matches!(&e, Frame::Error(m) if m.starts_with(b"ERR near \"SELEC\": syntax error")),
        "{e:?}"
    );
    assert_eq!(
        c.cmd(&["SQL.EXEC", "  "]).await,
        err("ERR no SQL statement given")
    );
    assert_eq!(
        c.cmd(&["SQL.EXEC"]).await,
        err("ERR wrong number of arguments for 'sql.exec' command")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_refuses_with_clear_errors() {
    let s = start().await;
    let mut c = s.raw().await;
    c.cmd(&["SET", "k", "v"]).await;
    for (sql, text) in [
        (
            "ATTACH 'x.db' AS x",
            "ERR not authorized: ATTACH is not allowed: each SQL database is its own file under dir (see SQL.DB)",
        ),
        ("DETACH x", "ERR not authorized: DETACH is not allowed"),
        (
            "SELECT load_extension('/tmp/x')",
            "ERR not authorized: load_extension is not allowed",
        ),
        (
            "BEGIN",
            "ERR not authorized: transaction control (BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE) is not allowed: every command runs in its own transaction",
        ),
        (
            "DELETE FROM relis_keys",
            "ERR not authorized: relis_keys is internal to Relis: SQL may not write it (use the Redis commands)",
        ),
        (
            "SELECT * FROM relis_keys",
            "ERR not authorized: relis_keys is internal to Relis: read Redis data through the redis_* views",
        ),
        (
            "PRAGMA journal_mode = DELETE",
            "ERR not authorized: PRAGMA journal_mode is not allowed: only PRAGMAs that report (table_info, index_list, integrity_check, ...) or read a setting",
        ),
        (
            "VACUUM INTO '/tmp/relis-escape.db'",
            "ERR not authorized: VACUUM INTO may only write a file inside the data directory",
        ),
        (
            "DROP VIEW redis_keys",
            "ERR not authorized: view 'redis_keys' is not allowed: names starting with relis_ or redis_ are reserved for Relis",
        ),
    ] {
        assert_eq!(c.cmd(&["SQL.EXEC", sql]).await, err(text), "{sql}");
    }
    assert!(!std::path::Path::new("/tmp/relis-escape.db").exists());
    assert_eq!(c.cmd(&["GET", "k"]).await, bulk("v"), "nothing changed");
    // Reporting PRAGMAs are fine.
    assert!(matches!(
        c.cmd(&["SQL.QUERY", "PRAGMA table_info(relis_keys)"]).await,
        Frame::Array(cols) if cols.len() >= 9
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runaway_query_is_interrupted_while_others_are_served() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "sql-time-limit"]).await,
        bulks(&["sql-time-limit", "5000"])
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "sql-time-limit", "1500"]).await,
        ok()
    );
    let runaway =
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n";
    for cmd in ["SQL.EXEC", "SQL.QUERY"] {
        let addr = s.addr;
        let started = Instant::now();
        let task = tokio::spawn(async move {
            let mut r = Raw::connect(addr).await;
            r.cmd(&[cmd, runaway]).await
        });
        // Meanwhile other clients are served at once.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let mut other = s.raw().await;
        let t = Instant::now();
        assert_eq!(other.cmd(&["PING"]).await, simple("PONG"));
        // (SET waits for the writer, which a runaway SQL.EXEC holds until it is interrupted.)
        assert_eq!(other.cmd(&["SET", "x", "1"]).await, ok());
        assert_eq!(
            other.cmd(&["SQL.QUERY", "SELECT 1"]).await,
            arr(vec![row(vec![int(1)])])
        );
        if cmd == "SQL.QUERY" {
            assert!(
                t.elapsed() < Duration::from_millis(700),
                "{:?}",
                t.elapsed()
            );
        }
        let reply = task.await.unwrap();
        assert_eq!(
            reply,
            err("ERR statement interrupted after 1500 ms (sql-time-limit): its changes were rolled back"),
            "{cmd}"
        );
        let took = started.elapsed();
        assert!(
            took >= Duration::from_millis(1400) && took < Duration::from_secs(5),
            "{took:?}"
        );
    }
    // A runaway write is interrupted too, and nothing of it stays.
    c.cmd(&["SQL.EXEC", "CREATE TABLE big (i)"]).await;
    let r = c
        .cmd(&[
            "SQL.EXEC",
            "INSERT INTO big WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n",
        ])
        .await;
    assert_eq!(
        r,
        err("ERR transaction rolled back: statement interrupted after 1500 ms (sql-time-limit): its changes were rolled back")
    );
    assert_eq!(
        c.cmd(&["SQL.QUERY", "SELECT count(*) FROM big"]).await,
        arr(vec![row(vec![int(0)])])
    );
    assert_eq!(c.cmd(&["SET", "after", "1"]).await, ok());
    assert_eq!(c.cmd(&["GET", "after"]).await, bulk("1"));
}

/// SQL.QUERY is tried on the network thread; a query past the inline step budget stops there
/// and runs again on a reader. Either way the replies are whole, right, and in order, and the
/// commands after a deferred one in a pipeline are answered after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_and_long_queries_pipelined_answer_in_order() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["SET", "k", "v"]).await, ok());
    let long = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000) SELECT count(*), sum(i) FROM n";
    let mut pipeline = Vec::new();
    for args in [
        &["SQL.QUERY", "SELECT ?1 + 1", "41"][..],
        &["SQL.QUERY", long],
        &["GET", "k"],
        &["SQL.QUERY", "SELECT key FROM redis_keys WHERE key = ?", "k"],
        &["SQL.QUERY", long],
        &["SQL.QUERY", "SELECT nosuchcolumn"],
    ] {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        pipeline.extend(encode_command(&args));
    }
    c.send(&pipeline).await;
    let long_reply = arr(vec![row(vec![int(100000), int(5000050000)])]);
    assert_eq!(c.read().await, Some(arr(vec![row(vec![int(42)])])));
    assert_eq!(c.read().await, Some(long_reply.clone()));
    assert_eq!(c.read().await, Some(bulk("v")));
    assert_eq!(c.read().await, Some(arr(vec![row(vec![bulk("k")])])));
    assert_eq!(c.read().await, Some(long_reply));
    assert_eq!(
        c.read().await,
        Some(err("ERR no such column: nosuchcolumn (at offset 7)"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_results_are_refused() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "sql-max-result-rows", "100"])
            .await,
        ok()
    );
    let q = |n: u32| {
        format!("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT {n}) SELECT i FROM n")
    };
    assert_eq!(
        c.cmd(&["SQL.QUERY", &q(101)]).await,
        err("ERR result has more than 100 rows (sql-max-result-rows)")
    );
    match c.cmd(&["SQL.QUERY", &q(100)]).await {
        Frame::Array(rows) => assert_eq!(rows.len(), 100),
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_statements_run_list_and_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let mut s = start_with(|c| c.dir = path.clone()).await;
    let mut c = s.raw().await;
    c.cmd(&[
        "SQL.EXEC",
        "CREATE TABLE m (a INTEGER, b INTEGER, c INTEGER)",
    ])
    .await;
    assert_eq!(
        c.cmd(&["SQL.PREPARE", "ins", "INSERT INTO m VALUES (?1, ?2, ?3)"])
            .await,
        ok()
    );
    assert_eq!(
        c.cmd(&[
            "SQL.PREPARE",
            "sum",
            "SELECT sum(a + b + c) AS total FROM m"
        ])
        .await,
        ok()
    );
    assert_eq!(c.cmd(&["SQL.RUN", "ins", "1", "2", "3"]).await, int(1));
    assert_eq!(
        c.cmd(&["SQL.RUN", "HEADER", "sum"]).await,
        arr(vec![bulks(&["total"]), row(vec![int(6)])])
    );
    assert_eq!(
        c.cmd(&["SQL.RUN", "ins", "1"]).await,
        err("ERR wrong number of parameters: the statement takes 3, got 1")
    );
    assert_eq!(
        c.cmd(&["SQL.RUN", "nope"]).await,
        err("ERR no prepared statement named 'nope'")
    );
    assert_eq!(
        c.cmd(&["SQL.PREPARE", "bad", "SELECT * FROM relis_meta"]).await,
        err("ERR not authorized: relis_meta is internal to Relis: read Redis data through the redis_* views")
    );
    assert_eq!(
        c.cmd(&["SQL.STATEMENTS"]).await,
        arr(vec![
            arr(vec![
                bulk("ins"),
                bulk("INSERT INTO m VALUES (?1, ?2, ?3)"),
                int(3),
                int(0)
            ]),
            arr(vec![
                bulk("sum"),
                bulk("SELECT sum(a + b + c) AS total FROM m"),
                int(0),
                int(1)
            ]),
        ])
    );
    assert_eq!(c.cmd(&["SQL.PREPARE", "tmp", "SELECT 1"]).await, ok());
    assert_eq!(c.cmd(&["SQL.UNPREPARE", "tmp"]).await, int(1));
    assert_eq!(c.cmd(&["SQL.UNPREPARE", "tmp"]).await, int(0));
    drop(c);
    s.stop().await;

    let s = start_with(|c| c.dir = path.clone()).await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["SQL.RUN", "ins", "4", "5", "6"]).await, int(1));
    assert_eq!(
        c.cmd(&["SQL.RUN", "sum"]).await,
        arr(vec![row(vec![int(21)])])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn named_databases_are_files_under_dir_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let mut s = start_with(|c| c.dir = path.clone()).await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["SQL.DB", "CREATE", "users"]).await, ok());
    assert_eq!(c.cmd(&["SQL.DB", "CREATE", "cache", "MEMORY"]).await, ok());
    assert_eq!(
        c.cmd(&["SQL.DB", "CREATE", "logs", "PATH", "sub/logs.db"])
            .await,
        ok()
    );
    assert_eq!(
        c.cmd(&["SQL.DB", "CREATE", "users"]).await,
        err("ERR SQL database 'users' exists already")
    );
    assert_eq!(
        c.cmd(&["SQL.DB", "CREATE", "evil", "PATH", "../evil.db"])
            .await,
        err("ERR path '../evil.db' is outside the data directory")
    );
    assert_eq!(
        c.cmd(&["SQL.DB", "CREATE", "evil", "PATH", "/tmp/evil.db"])
            .await,
        err("ERR path '/tmp/evil.db' is outside the data directory")
    );
    assert!(path.join("users.sqlite").exists());
    assert!(path.join("sub/logs.db").exists());
    assert_eq!(
        c.cmd(&["SQL.DB", "LIST"]).await,
        arr(vec![
            bulks(&["cache", ":memory:"]),
            bulks(&["logs", "sub/logs.db"]),
            bulks(&["users", "users.sqlite"]),
        ])
    );
    assert_eq!(
        c.cmd(&["SQL.EXEC", "DB", "users", "CREATE TABLE u (name TEXT)"])
            .await,
        ok()
    );
    assert_eq!(
        c.cmd(&["SQL.EXEC", "DB", "users", "INSERT INTO u VALUES (?)", "ann"])
            .await,
        int(1)
    );
    assert_eq!(
        c.cmd(&["SQL.PREPARE", "DB", "users", "names", "SELECT name FROM u"])
            .await,
        ok()
    );
    assert_eq!(
        c.cmd(&["SQL.QUERY", "DB", "users", "SELECT name FROM u"])
            .await,
        arr(vec![bulks(&["ann"])])
    );
    assert_eq!(
        c.cmd(&["SQL.EXEC", "DB", "cache", "CREATE TABLE t (x)"])
            .await,
        ok()
    );
    // Each database is its own: the main database has no table u.
    assert_eq!(
        c.cmd(&["SQL.QUERY", "SELECT * FROM u"]).await,
        err("ERR no such table: u")
    );
    assert_eq!(
        c.cmd(&["SQL.QUERY", "DB", "nope", "SELECT 1"]).await,
        err("ERR no such SQL database 'nope'")
    );
    assert_eq!(
        c.cmd(&["SQL.STATEMENTS", "DB", "users"]).await,
        arr(vec![arr(vec![
            bulk("names"),
            bulk("SELECT name FROM u"),
            int(0),
            int(1)
        ])])
    );
    // SAVE copies them too.
    assert_eq!(c.cmd(&["SAVE"]).await, ok());
    assert!(path.join("users.sqlite.save").exists());
    assert!(path.join("sub/logs.db.save").exists());
    assert!(path.join("cache.memory.save").exists());
    assert_eq!(c.cmd(&["SQL.DB", "DROP", "logs"]).await, ok());
    assert_eq!(
        c.cmd(&["SQL.DB", "DROP", "logs"]).await,
        err("ERR no such SQL database 'logs'")
    );
    drop(c);
    s.stop().await;

    let s = start_with(|c| c.dir = path.clone()).await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["SQL.DB", "LIST"]).await,
        arr(vec![
            bulks(&["cache", ":memory:"]),
            bulks(&["users", "users.sqlite"])
        ])
    );
    assert_eq!(
        c.cmd(&["SQL.RUN", "DB", "users", "names"]).await,
        arr(vec![bulks(&["ann"])])
    );
    // An in-memory database comes back empty.
    assert_eq!(
        c.cmd(&["SQL.QUERY", "DB", "cache", "SELECT * FROM t"])
            .await,
        err("ERR no such table: t")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn named_databases_write_in_parallel_with_the_keyspace() {
    let s = start().await;
    let mut c = s.raw().await;
    c.cmd(&["CONFIG", "SET", "sql-time-limit", "1500"]).await;
    c.cmd(&["SQL.DB", "CREATE", "slow"]).await;
    c.cmd(&["SQL.EXEC", "DB", "slow", "CREATE TABLE t (x)"])
        .await;
    let addr = s.addr;
    let task = tokio::spawn(async move {
        let mut r = Raw::connect(addr).await;
        r.cmd(&[
            "SQL.EXEC",
            "DB",
            "slow",
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n",
        ])
        .await
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    // The named database's writer is busy; the keyspace's is not.
    let t = Instant::now();
    assert_eq!(c.cmd(&["SET", "a", "1"]).await, ok());
    assert_eq!(c.cmd(&["SQL.EXEC", "CREATE TABLE main_t (x)"]).await, ok());
    assert!(
        t.elapsed() < Duration::from_millis(700),
        "{:?}",
        t.elapsed()
    );
    assert!(matches!(task.await.unwrap(), Frame::Error(_)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn desc_reports_columns_rows_and_bytes() {
    let s = start().await;
    let mut c = s.raw().await;
    c.cmd(&[
        "SQL.EXEC",
        "CREATE TABLE d (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT 'x'); CREATE INDEX d_name ON d (name); INSERT INTO d (name) VALUES ('a'), ('b');",
    ])
    .await;
    let Frame::Array(items) = c.cmd(&["SQL.DESC", "d"]).await else {
        panic!("RESP2 map is a flat array")
    };
    assert_eq!(items.len(), 8);
    assert_eq!(items[0], bulk("columns"));
    assert_eq!(
        items[1],
        arr(vec![
            arr(vec![bulk("id"), bulk("INTEGER"), int(0), nil(), int(1)]),
            arr(vec![
                bulk("name"),
                bulk("TEXT"),
                int(1),
                bulk("'x'"),
                int(0)
            ]),
        ])
    );
    assert_eq!((items[2].clone(), items[3].clone()), (bulk("rows"), int(2)));
    assert_eq!(items[4], bulk("bytes"));
    // At least one page (2 KiB in files Relis creates).
    assert!(matches!(items[5], Frame::Integer(n) if n >= 2048));
    assert_eq!(items[6], bulk("indexes"));
    let Frame::Array(idx) = &items[7] else {
        panic!()
    };
    assert_eq!(idx.len(), 1);
    assert!(
        matches!(&idx[0], Frame::Array(p) if p[0] == bulk("d_name") && matches!(p[1], Frame::Integer(n) if n > 0))
    );
    assert_eq!(
        c.cmd(&["SQL.DESC", "nope"]).await,
        err("ERR no such table: nope")
    );
    assert_eq!(
        c.cmd(&["SQL.DESC", "relis_keys"]).await,
        err("ERR no such table: relis_keys")
    );
    c.cmd(&["HELLO", "3"]).await;
    assert!(matches!(c.cmd(&["SQL.DESC", "d"]).await, Frame::Map(m) if m.len() == 4));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_show_what_the_redis_commands_show() {
    let s = start().await;
    let mut c = s.raw().await;
    c.cmd(&["SET", "user:1", "ann"]).await;
    c.cmd(&["SET", "user:2", "bob"]).await;
    c.cmd(&["SELECT", "2"]).await;
    c.cmd(&["SET", "other", "x"]).await;
    c.cmd(&["SELECT", "0"]).await;
    c.cmd(&["SET", "gone", "x", "PX", "1"]).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(c.cmd(&["GET", "gone"]).await, nil());
    assert_eq!(
        c.cmd(&[
            "SQL.QUERY",
            "SELECT db, key, value FROM redis_strings ORDER BY db, key"
        ])
        .await,
        arr(vec![
            row(vec![int(0), bulk("user:1"), bulk("ann")]),
            row(vec![int(0), bulk("user:2"), bulk("bob")]),
            row(vec![int(2), bulk("other"), bulk("x")]),
        ])
    );
    assert_eq!(
        c.cmd(&[
            "SQL.QUERY",
            "SELECT key, type, count FROM redis_keys WHERE db = 0 AND key = ?",
            "user:1"
        ])
        .await,
        arr(vec![row(vec![bulk("user:1"), bulk("string"), int(1)])])
    );
    let Frame::Array(keys) = c.cmd(&["KEYS", "*"]).await else {
        panic!()
    };
    assert_eq!(keys.len(), 2);
    assert_eq!(
        c.cmd(&["SQL.QUERY", "SELECT count(*) FROM redis_keys WHERE db = 0"])
            .await,
        arr(vec![row(vec![int(2)])])
    );
    // Joined with a user table.
    c.cmd(&["SQL.EXEC", "CREATE TABLE people (id INTEGER, age INTEGER)"])
        .await;
    c.cmd(&["SQL.EXEC", "INSERT INTO people VALUES (1, 30), (2, 40)"])
        .await;
    assert_eq!(
        c.cmd(&["SQL.QUERY", "SELECT s.value, p.age FROM people p JOIN redis_strings s ON s.key = 'user:' || p.id ORDER BY p.age"]).await,
        arr(vec![row(vec![bulk("ann"), int(30)]), row(vec![bulk("bob"), int(40)])])
    );
    // The views are read-only.
    let e = c.cmd(&["SQL.EXEC", "DELETE FROM redis_strings"]).await;
    assert!(matches!(e, Frame::Error(_)), "{e:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql_in_multi_joins_the_redis_transaction() {
    let s = start().await;
    let mut c = s.raw().await;
    c.cmd(&["SQL.EXEC", "CREATE TABLE audit (what TEXT)"]).await;
    assert_eq!(c.cmd(&["MULTI"]).await, ok());
    assert_eq!(c.cmd(&["SET", "k", "v1"]).await, simple("QUEUED"));
    // The SQL sees the SET queued before it: same transaction.
    assert_eq!(
        c.cmd(&[
            "SQL.EXEC",
            "INSERT INTO audit SELECT value FROM redis_strings WHERE key = 'k'"
        ])
        .await,
        simple("QUEUED")
    );
    assert_eq!(c.cmd(&["EXEC"]).await, arr(vec![ok(), int(1)]));
    assert_eq!(
        c.cmd(&["SQL.QUERY", "SELECT what FROM audit"]).await,
        arr(vec![bulks(&["v1"])])
    );

    // Another client never sees one write without the other.
    c.cmd(&[
        "SQL.EXEC",
        "CREATE TABLE counter (n INTEGER); INSERT INTO counter VALUES (0)",
    ])
    .await;
    c.cmd(&["SET", "n", "0"]).await;
    let addr = s.addr;
    let writer = tokio::spawn(async move {
        let mut w = Raw::connect(addr).await;
        for i in 1..=200 {
            let i = i.to_string();
            let mut req = encode_command(&[b"MULTI"]);
            req.extend(encode_command(&[b"SET", b"n", i.as_bytes()]));
            req.extend(encode_command(&[
                b"SQL.EXEC",
                b"UPDATE counter SET n = ?",
                i.as_bytes(),
            ]));
            req.extend(encode_command(&[b"EXEC"]));
            w.send(&req).await;
            for _ in 0..3 {
                w.read().await;
            }
            assert_eq!(w.read().await, Some(arr(vec![ok(), int(1)])));
        }
    });
    let mut seen = 0;
    while !writer.is_finished() {
        let r = c
            .cmd(&["SQL.QUERY", "SELECT (SELECT CAST(value AS INTEGER) FROM redis_strings WHERE key = 'n') = (SELECT n FROM counter)"])
            .await;
        assert_eq!(r, arr(vec![row(vec![int(1)])]));
        seen += 1;
    }
    writer.await.unwrap();
    assert!(seen > 0);

    // A failing SQL.EXEC in MULTI fails alone, as a Redis command does.
    assert_eq!(c.cmd(&["MULTI"]).await, ok());
    c.cmd(&["SET", "k", "v2"]).await;
    c.cmd(&["SQL.EXEC", "INSERT INTO nope VALUES (1)"]).await;
    assert_eq!(
        c.cmd(&["EXEC"]).await,
        arr(vec![ok(), err("ERR no such table: nope")])
    );
    assert_eq!(c.cmd(&["GET", "k"]).await, bulk("v2"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_databases_and_statements_survive_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = spawn_binary(dir.path(), &[]);
    {
        let mut c = Raw::connect(child.addr()).await;
        assert_eq!(c.cmd(&["SQL.EXEC", "CREATE TABLE kept (x)"]).await, ok());
        assert_eq!(
            c.cmd(&["SQL.EXEC", "INSERT INTO kept VALUES (1), (2)"])
                .await,
            int(2)
        );
        assert_eq!(
            c.cmd(&["SQL.PREPARE", "count", "SELECT count(*) FROM kept"])
                .await,
            ok()
        );
        assert_eq!(c.cmd(&["SQL.DB", "CREATE", "side"]).await, ok());
        assert_eq!(
            c.cmd(&["SQL.EXEC", "DB", "side", "CREATE TABLE s (y)"])
                .await,
            ok()
        );
        assert_eq!(
            c.cmd(&["SQL.EXEC", "DB", "side", "INSERT INTO s VALUES (3)"])
                .await,
            int(1)
        );
        assert_eq!(
            c.cmd(&["SQL.PREPARE", "DB", "side", "ys", "SELECT y FROM s"])
                .await,
            ok()
        );
    }
    child.kill9();
    let child = spawn_binary(dir.path(), &[]);
    let mut c = Raw::connect(child.addr()).await;
    assert_eq!(
        c.cmd(&["SQL.RUN", "count"]).await,
        arr(vec![row(vec![int(2)])])
    );
    assert_eq!(
        c.cmd(&["SQL.RUN", "DB", "side", "ys"]).await,
        arr(vec![row(vec![int(3)])])
    );
}

/// Every element of a collection view for `key`, ordered, as a flat array of bulk strings.
async fn view(c: &mut Raw, sql: &str, key: &str) -> Frame {
    let Frame::Array(rows) = c.cmd(&["SQL.QUERY", sql, key]).await else {
        panic!("rows expected")
    };
    arr(rows
        .into_iter()
        .flat_map(|r| match r {
            Frame::Array(v) => v,
            other => vec![other],
        })
        .collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collection_views_agree_with_the_commands() {
    let s = start().await;
    let mut c = s.raw().await;
    // Hashes: HGETALL's pairs (ordered by field for comparison).
    c.cmd(&["HSET", "h", "b", "2", "a", "1", "c", "3"]).await;
    c.cmd(&["HDEL", "h", "c"]).await;
    assert_eq!(
        view(
            &mut c,
            "SELECT field, value FROM redis_hashes WHERE key = ? ORDER BY field",
            "h"
        )
        .await,
        bulks(&["a", "1", "b", "2"])
    );
    assert_eq!(c.cmd(&["HLEN", "h"]).await, int(2));
    assert_eq!(
        c.cmd(&[
            "SQL.QUERY",
            "SELECT type, count FROM redis_keys WHERE key = 'h'"
        ])
        .await,
        arr(vec![row(vec![bulk("hash"), int(2)])])
    );
    // Lists: idx is LINDEX's index after pushes and pops at both ends.
    c.cmd(&["RPUSH", "l", "x", "y", "z"]).await;
    c.cmd(&["LPUSH", "l", "w", "v"]).await;
    c.cmd(&["LPOP", "l"]).await;
    c.cmd(&["RPOP", "l"]).await;
    let lrange = c.cmd(&["LRANGE", "l", "0", "-1"]).await;
    assert_eq!(lrange, bulks(&["w", "x", "y"]));
    assert_eq!(
        view(
            &mut c,
            "SELECT value FROM redis_lists WHERE key = ? ORDER BY idx",
            "l"
        )
        .await,
        lrange
    );
    assert_eq!(
        c.cmd(&[
            "SQL.QUERY",
            "SELECT idx FROM redis_lists WHERE key = 'l' AND value = 'y'"
        ])
        .await,
        arr(vec![row(vec![int(2)])])
    );
    assert_eq!(c.cmd(&["LINDEX", "l", "2"]).await, bulk("y"));
    // Sets.
    c.cmd(&["SADD", "s", "m1", "m2", "m3"]).await;
    c.cmd(&["SREM", "s", "m2"]).await;
    assert_eq!(
        view(
            &mut c,
            "SELECT member FROM redis_sets WHERE key = ? ORDER BY member",
            "s"
        )
        .await,
        bulks(&["m1", "m3"])
    );
    // Sorted sets: ZRANGE's order and scores.
    c.cmd(&["ZADD", "z", "2", "b", "1", "a", "3.5", "c"]).await;
    c.cmd(&["ZINCRBY", "z", "10", "a"]).await;
    assert_eq!(
        c.cmd(&["ZRANGE", "z", "0", "-1"]).await,
        bulks(&["b", "c", "a"])
    );
    assert_eq!(
        c.cmd(&[
            "SQL.QUERY",
            "SELECT member, score FROM redis_zsets WHERE key = 'z' ORDER BY score, member"
        ])
        .await,
        arr(vec![
            row(vec![bulk("b"), bulk("2")]),
            row(vec![bulk("c"), bulk("3.5")]),
            row(vec![bulk("a"), bulk("11")]),
        ])
    );
    // A collection with an expiry that has passed is hidden, elements and all.
    c.cmd(&["SADD", "gone", "x"]).await;
    c.cmd(&["PEXPIRE", "gone", "1"]).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(c.cmd(&["EXISTS", "gone"]).await, int(0));
    assert_eq!(
        c.cmd(&[
            "SQL.QUERY",
            "SELECT count(*) FROM redis_sets WHERE key = 'gone'"
        ])
        .await,
        arr(vec![row(vec![int(0)])])
    );
    // Joins across types: hash fields of the members of a set.
    c.cmd(&["HSET", "user:m1", "name", "ann"]).await;
    c.cmd(&["HSET", "user:m3", "name", "cid"]).await;
    assert_eq!(
        c.cmd(&["SQL.QUERY", "SELECT h.value FROM redis_sets s JOIN redis_hashes h ON h.key = 'user:' || s.member AND h.field = 'name' WHERE s.key = 's' ORDER BY 1"]).await,
        arr(vec![bulks(&["ann"]), bulks(&["cid"])])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn morph_commands_round_trip_and_fan_out() {
    let s = start().await;
    let mut c = s.raw().await;
    c.cmd(&[
        "SQL.EXEC",
        "CREATE TABLE users (key TEXT PRIMARY KEY, name TEXT, age INTEGER, score REAL); INSERT INTO users VALUES ('user:1', 'ann', 30, 1.5), ('user:2', 'bob', 40, 2.25);",
    ])
    .await;
    // Table -> hashes -> table: the same rows and types.
    assert_eq!(
        c.cmd(&["SQL.TOHASH", "{key}", "SELECT * FROM users"]).await,
        int(2)
    );
    assert_eq!(
        c.cmd(&["HGETALL", "user:2"]).await,
        bulks(&["name", "bob", "age", "40", "score", "2.25"])
    );
    assert_eq!(c.cmd(&["SQL.FROMHASH", "copy", "user:*"]).await, int(2));
    assert_eq!(
        c.cmd(&["SQL.QUERY", "SELECT count(*) FROM (SELECT * FROM users EXCEPT SELECT key, name, age, score FROM copy)"]).await,
        arr(vec![row(vec![int(0)])])
    );
    assert_eq!(
        c.cmd(&[
            "SQL.QUERY",
            "SELECT group_concat(type, ',') FROM pragma_table_info('copy')"
        ])
        .await,
        arr(vec![row(vec![bulk("TEXT,TEXT,INTEGER,REAL")])])
    );
    // Templates with several placeholders, parameters, TTL, REPLACE.
    assert_eq!(
        c.cmd(&[
            "SQL.TOHASH",
            "EX",
            "100",
            "p:{name}:{age}",
            "SELECT name, age, score FROM users WHERE age > ?",
            "35"
        ])
        .await,
        int(1)
    );
    assert_eq!(
        c.cmd(&["HGETALL", "p:bob:40"]).await,
        bulks(&["score", "2.25"])
    );
    assert!(matches!(c.cmd(&["TTL", "p:bob:40"]).await, Frame::Integer(t) if t > 90 && t <= 100));
    c.cmd(&["HSET", "p:bob:40", "extra", "1"]).await;
    assert_eq!(
        c.cmd(&[
            "SQL.TOHASH",
            "REPLACE",
            "p:{name}:{age}",
            "SELECT name, age, score FROM users WHERE age > 35"
        ])
        .await,
        int(1)
    );
    assert_eq!(
        c.cmd(&["HGETALL", "p:bob:40"]).await,
        bulks(&["score", "2.25"])
    );
    assert_eq!(c.cmd(&["TTL", "p:bob:40"]).await, int(-1));
    // Strings, lists, sets, sorted sets; one key per group.
    assert_eq!(
        c.cmd(&["SQL.TOSTRING", "name:{key}", "SELECT key, name FROM users"])
            .await,
        int(2)
    );
    assert_eq!(c.cmd(&["GET", "name:user:1"]).await, bulk("ann"));
    assert_eq!(
        c.cmd(&[
            "SQL.TOLIST",
            "names",
            "SELECT name FROM users ORDER BY age DESC"
        ])
        .await,
        int(2)
    );
    assert_eq!(
        c.cmd(&["LRANGE", "names", "0", "-1"]).await,
        bulks(&["bob", "ann"])
    );
    assert_eq!(
        c.cmd(&["SQL.TOSET", "age:{age}", "SELECT age, name FROM users"])
            .await,
        int(2)
    );
    assert_eq!(c.cmd(&["SMEMBERS", "age:30"]).await, bulks(&["ann"]));
    assert_eq!(
        c.cmd(&["SQL.TOZSET", "board", "SELECT name, score FROM users"])
            .await,
        int(2)
    );
    assert_eq!(
        c.cmd(&["ZRANGE", "board", "0", "-1", "WITHSCORES"]).await,
        bulks(&["ann", "1.5", "bob", "2.25"])
    );
    // Errors: nothing is written.
    assert_eq!(
        c.cmd(&["SQL.TOLIST", "names", "SELECT name, age FROM users"])
            .await,
        err("ERR SQL.TOLIST takes 1 column besides those in the key template, the result has 2")
    );
    assert_eq!(
        c.cmd(&["SQL.TOSET", "name:{key}", "SELECT key, name FROM users"])
            .await,
        err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
    assert_eq!(
        c.cmd(&["SQL.TOHASH", "x:{nope}", "SELECT 1 AS a"]).await,
        err("ERR the key template names {nope}, which is not a column of the result")
    );
    assert_eq!(
        c.cmd(&["SQL.TOHASH", "x:{a}", "DELETE FROM users"]).await,
        err("ERR statement would write: only reads are allowed here")
    );
    assert_eq!(
        c.cmd(&["SQL.TOHASH", "EX", "0", "x", "SELECT 1"]).await,
        err("ERR invalid expire time in 'sql.tohash' command")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn morph_commands_with_named_databases() {
    let s = start().await;
    let mut c = s.raw().await;
    c.cmd(&["SQL.DB", "CREATE", "shop"]).await;
    c.cmd(&[
        "SQL.EXEC",
        "DB",
        "shop",
        "CREATE TABLE items (sku TEXT, price REAL, qty INTEGER)",
    ])
    .await;
    c.cmd(&[
        "SQL.EXEC",
        "DB",
        "shop",
        "INSERT INTO items VALUES ('a', 1.5, 3), ('b', 2, 5)",
    ])
    .await;
    c.cmd(&["SELECT", "4"]).await;
    assert_eq!(
        c.cmd(&[
            "SQL.TOHASH",
            "DB",
            "shop",
            "item:{sku}",
            "SELECT * FROM items"
        ])
        .await,
        int(2)
    );
    assert_eq!(
        c.cmd(&["HGETALL", "item:a"]).await,
        bulks(&["price", "1.5", "qty", "3"])
    );
    c.cmd(&["HSET", "item:c", "price", "3.25", "qty", "1", "note", "new"])
        .await;
    // The hashes of db 4 go into the named database.
    assert_eq!(
        c.cmd(&["SQL.FROMHASH", "DB", "shop", "stock", "item:*"])
            .await,
        int(3)
    );
    assert_eq!(
        c.cmd(&[
            "SQL.QUERY",
            "DB",
            "shop",
            "SELECT key, price, qty, note FROM stock ORDER BY key"
        ])
        .await,
        arr(vec![
            row(vec![bulk("item:a"), bulk("1.5"), int(3), nil()]),
            row(vec![bulk("item:b"), bulk("2"), int(5), nil()]),
            row(vec![bulk("item:c"), bulk("3.25"), int(1), bulk("new")]),
        ])
    );
    c.cmd(&["SELECT", "0"]).await;
    assert_eq!(c.cmd(&["EXISTS", "item:a"]).await, int(0));
}

/// relis_keys's columns, for a table that would pass for it.
const KEYS_LOOKALIKE: &str = "(db INTEGER NOT NULL, key BLOB NOT NULL, id INTEGER NOT NULL,
    type INTEGER NOT NULL, expire_at INTEGER, version INTEGER NOT NULL,
    count INTEGER NOT NULL DEFAULT 0, mtime INTEGER NOT NULL, value BLOB,
    head INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (db, key)) WITHOUT ROWID";

const NO_TEMP: &str = "ERR not authorized: temporary objects (TEMP tables, views, triggers and indexes) are not allowed: create them in the database itself";

/// Issue 14: a temp table renamed to relis_keys took the engine's writes (OK, then gone after a
/// restart).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_temp_shadow_of_the_keyspace_is_refused_and_writes_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let mut s = start_with(|c| c.dir = path.clone()).await;
    let mut c = s.raw().await;
    let create = format!("CREATE TEMP TABLE k {KEYS_LOOKALIKE}");
    assert_eq!(c.cmd(&["SQL.EXEC", &create]).await, err(NO_TEMP));
    assert_eq!(
        c.cmd(&["SQL.EXEC", "ALTER TABLE temp.k RENAME TO relis_keys"])
            .await,
        err("ERR no such table: temp.k")
    );
    assert_eq!(c.cmd(&["SET", "order:1", "paid"]).await, ok());
    drop(c);
    s.stop().await;
    let s = start_with(|c| c.dir = path.clone()).await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["GET", "order:1"]).await, bulk("paid"));
}

/// Issue 14: a shadow relis_statements made another client's SQL.RUN run the attacker's SQL,
/// and a temp trigger on a shadow relis_set ran inside SADD with the sandbox off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_client_can_hijack_the_engines_statements() {
    let s = start().await;
    let mut victim = s.raw().await;
    let mut attacker = s.raw().await;
    assert_eq!(victim.cmd(&["SQL.PREPARE", "get", "SELECT 1"]).await, ok());
    assert_eq!(victim.cmd(&["SET", "victim", "safe"]).await, ok());
    assert_eq!(
        attacker.cmd(&["SQL.EXEC", "CREATE TABLE u (a)"]).await,
        ok()
    );
    for sql in [
        "CREATE TEMP TABLE s (name TEXT PRIMARY KEY, sql TEXT NOT NULL, params INTEGER NOT NULL, readonly INTEGER NOT NULL)",
        "CREATE TEMP TABLE m (kid INTEGER NOT NULL, member BLOB NOT NULL, PRIMARY KEY (kid, member)) WITHOUT ROWID",
        "CREATE TEMP TRIGGER t AFTER INSERT ON main.u BEGIN SELECT 1; END",
    ] {
        assert_eq!(attacker.cmd(&["SQL.EXEC", sql]).await, err(NO_TEMP), "{sql}");
    }
    assert_eq!(
        attacker
            .cmd(&["SQL.EXEC", "ALTER TABLE temp.s RENAME TO relis_statements"])
            .await,
        err("ERR no such table: temp.s")
    );
    assert_eq!(
        victim.cmd(&["SQL.RUN", "get"]).await,
        arr(vec![row(vec![int(1)])])
    );
    assert_eq!(victim.cmd(&["SADD", "set", "m"]).await, int(1));
    assert_eq!(victim.cmd(&["GET", "victim"]).await, bulk("safe"));
    assert_eq!(
        attacker
            .cmd(&["SQL.QUERY", "SELECT count(*) FROM sqlite_temp_schema"])
            .await,
        arr(vec![row(vec![int(0)])])
    );
}

/// SQL.EXEC, on the named database `db` (`["DB", name]`) or the main one (`[]`).
async fn exec_on(c: &mut Raw, db: &[&str], sql: &str) -> Frame {
    let mut args = vec!["SQL.EXEC"];
    args.extend_from_slice(db);
    args.push(sql);
    c.cmd(&args).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn temp_objects_and_reserved_names_are_refused_everywhere() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["SQL.DB", "CREATE", "n", "MEMORY"]).await, ok());
    assert_eq!(c.cmd(&["REDISQL.CREATE_DB", "R"]).await, ok());
    for temp in [
        "CREATE TEMP TABLE x (a)",
        "CREATE TABLE temp.x (a)",
        "CREATE TEMP VIEW v AS SELECT 1",
        "SELECT 1; CREATE TEMP TABLE x (a)",
    ] {
        assert_eq!(c.cmd(&["SQL.EXEC", temp]).await, err(NO_TEMP), "{temp}");
        assert_eq!(c.cmd(&["SQL.QUERY", temp]).await, err(NO_TEMP), "{temp}");
        assert_eq!(
            c.cmd(&["SQL.EXEC", "DB", "n", temp]).await,
            err(NO_TEMP),
            "{temp}"
        );
        assert_eq!(
            c.cmd(&["REDISQL.EXEC", "R", temp]).await,
            err(NO_TEMP),
            "{temp}"
        );
    }
    let reserved = |name: &str| {
        format!("ERR not authorized: table '{name}' is not allowed: names starting with relis_ or redis_ are reserved for Relis")
    };
    for db in [&[][..], &["DB", "n"][..]] {
        assert_eq!(exec_on(&mut c, db, "CREATE TABLE a (x)").await, ok());
        for new in ["relis_x", "RELIS_KEYS2", "redis_strings2", "Redis_X"] {
            assert_eq!(
                exec_on(&mut c, db, &format!("ALTER TABLE a RENAME TO {new}")).await,
                err(&reserved(new)),
                "{db:?} {new}"
            );
            assert_eq!(
                exec_on(
                    &mut c,
                    db,
                    &format!("SELECT 1; ALTER TABLE a RENAME TO {new}")
                )
                .await,
                err(&reserved(new)),
                "{db:?} {new}"
            );
        }
        assert_eq!(
            exec_on(&mut c, db, "ALTER TABLE a RENAME TO sqlite_x").await,
            err("ERR object name reserved for internal use: sqlite_x")
        );
        assert_eq!(
            exec_on(&mut c, db, "INSERT INTO a VALUES (1)").await,
            int(1)
        );
    }
    // A prepared rename, and RediSQL's EXEC.
    assert_eq!(
        c.cmd(&["SQL.PREPARE", "ren", "ALTER TABLE a RENAME TO relis_p"])
            .await,
        ok()
    );
    assert_eq!(c.cmd(&["SQL.RUN", "ren"]).await, err(&reserved("relis_p")));
    assert_eq!(
        c.cmd(&["REDISQL.EXEC", "R", "CREATE TABLE b (x)"]).await,
        simple("DONE")
    );
    assert_eq!(
        c.cmd(&["REDISQL.EXEC", "R", "ALTER TABLE b RENAME TO redis_b"])
            .await,
        err(&reserved("redis_b"))
    );
    assert_eq!(
        c.cmd(&["SQL.QUERY", "SELECT x FROM a"]).await,
        arr(vec![row(vec![int(1)])])
    );
    // From a script.
    let script = "return redis.pcall('SQL.EXEC', ARGV[1])";
    assert_eq!(
        c.cmd(&["EVAL", script, "0", "CREATE TABLE temp.x (a)"])
            .await,
        err(NO_TEMP)
    );
    assert_eq!(
        c.cmd(&["EVAL", script, "0", "ALTER TABLE a RENAME TO redis_s"])
            .await,
        err(&reserved("redis_s"))
    );
    assert_eq!(c.cmd(&["PING"]).await, simple("PONG"));
}

/// Issue 14: a GLOB ran 30 s under a 5 s limit (one virtual-machine step never reached the
/// progress handler), on the network thread, where a PING from another client waited 29 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_glob_times_out_and_never_holds_up_other_clients() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "sql-time-limit", "1000"]).await,
        ok()
    );
    let timed_out = err(
        "ERR statement interrupted after 1000 ms (sql-time-limit): its changes were rolled back",
    );
    for (cmd, sql) in [
        // The query: a 2 MB string against an 8,000-character pattern.
        (
            "SQL.QUERY",
            "select printf('%.*c',2000000,'a') glob ('*'||printf('%.*c',8000,'a')||'b')",
        ),
        // Short enough to start on the network thread (64,000 characters), as slow.
        (
            "SQL.QUERY",
            "select hex(zeroblob(32000)) glob ('*'||hex(zeroblob(16000))||'X')",
        ),
        (
            "SQL.QUERY",
            "select hex(zeroblob(32000)) like ('%'||hex(zeroblob(16000))||'X')",
        ),
        (
            "SQL.EXEC",
            "select hex(zeroblob(32000)) glob ('*'||hex(zeroblob(16000))||'X')",
        ),
    ] {
        let addr = s.addr;
        let started = Instant::now();
        let task = tokio::spawn(async move {
            let mut r = Raw::connect(addr).await;
            let reply = r.cmd(&[cmd, sql]).await;
            (reply, started.elapsed())
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut other = s.raw().await;
        let mut slowest = Duration::ZERO;
        for _ in 0..10 {
            let t = Instant::now();
            assert_eq!(other.cmd(&["PING"]).await, simple("PONG"));
            slowest = slowest.max(t.elapsed());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(slowest < Duration::from_millis(100), "{sql}: {slowest:?}");
        let (reply, took) = task.await.unwrap();
        assert_eq!(reply, timed_out, "{sql}");
        assert!(
            took >= Duration::from_millis(900) && took < Duration::from_millis(2500),
            "{sql}: {took:?}"
        );
    }
    assert_eq!(c.cmd(&["SET", "after", "1"]).await, ok());
}

/// The process's peak resident memory (VmHWM), in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Issue 14: `select zeroblob(999999999), zeroblob(999999999)` took the server to 4.9 GB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_query_cannot_take_all_memory() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "sql-max-result-bytes"]).await,
        bulks(&["sql-max-result-bytes", "67108864"])
    );
    let before = peak_rss();
    let too_long = err("ERR string or blob longer than 67108864 bytes (sql-max-result-bytes)");
    let too_many = err("ERR result has more than 67108864 bytes (sql-max-result-bytes)");
    for cmd in ["SQL.QUERY", "SQL.EXEC"] {
        assert_eq!(
            c.cmd(&[cmd, "select zeroblob(999999999), zeroblob(999999999)"])
                .await,
            too_long
        );
        assert_eq!(
            c.cmd(&[cmd, "select zeroblob(40000000), zeroblob(40000000)"])
                .await,
            too_many
        );
    }
    assert_eq!(
        c.cmd(&[
            "SQL.QUERY",
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100) SELECT randomblob(1000000) FROM n",
        ])
        .await,
        too_many
    );
    let grew = peak_rss().saturating_sub(before);
    assert!(grew < 600 << 20, "peak RSS grew by {} MB", grew >> 20);
    assert_eq!(c.cmd(&["PING"]).await, simple("PONG"));
    // The setting: smaller, and off.
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "sql-max-result-bytes", "1kb"])
            .await,
        ok()
    );
    assert_eq!(
        c.cmd(&["SQL.QUERY", "select zeroblob(600), zeroblob(600)"])
            .await,
        err("ERR result has more than 1024 bytes (sql-max-result-bytes)")
    );
    assert_eq!(
        c.cmd(&["SQL.QUERY", "select length(zeroblob(600))"]).await,
        arr(vec![row(vec![int(600)])])
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "sql-max-result-bytes", "0"]).await,
        ok()
    );
    assert_eq!(
        c.cmd(&["SQL.QUERY", "select length(zeroblob(100000000))"])
            .await,
        arr(vec![row(vec![int(100000000)])])
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "sql-max-result-bytes", "lots"]).await,
        err("ERR CONFIG SET failed (possibly related to argument 'sql-max-result-bytes') - argument must be a memory value")
    );
}

/// SQL.TOSTREAM: each row becomes an entry (auto id, in row order) of the stream its key
/// template names; the other columns are its fields, NULLs left out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tostream_appends_rows_as_entries() {
    let s = start().await;
    let mut c = s.raw().await;
    c.cmd(&[
        "SQL.EXEC",
        "CREATE TABLE ev (user TEXT, action TEXT, n INTEGER)",
    ])
    .await;
    c.cmd(&[
        "SQL.EXEC",
        "INSERT INTO ev VALUES ('ann', 'login', 1), ('bob', 'buy', NULL), ('ann', 'logout', 3)",
    ])
    .await;
    assert_eq!(
        c.cmd(&[
            "SQL.TOSTREAM",
            "events:{user}",
            "SELECT user, action, n FROM ev ORDER BY rowid"
        ])
        .await,
        int(3)
    );
    assert_eq!(c.cmd(&["TYPE", "events:ann"]).await, simple("stream"));
    assert_eq!(c.cmd(&["XLEN", "events:ann"]).await, int(2));
    let Frame::Array(entries) = c.cmd(&["XRANGE", "events:bob", "-", "+"]).await else {
        panic!("XRANGE replies an array")
    };
    let Frame::Array(entry) = &entries[0] else {
        panic!()
    };
    assert_eq!(
        entry[1],
        bulks(&["action", "buy"]),
        "the NULL column is left out"
    );
    let Frame::Array(entries) = c.cmd(&["XRANGE", "events:ann", "-", "+"]).await else {
        panic!()
    };
    let fields: Vec<Frame> = entries
        .iter()
        .map(|e| match e {
            Frame::Array(e) => e[1].clone(),
            _ => panic!(),
        })
        .collect();
    assert_eq!(
        fields,
        [
            bulks(&["action", "login", "n", "1"]),
            bulks(&["action", "logout", "n", "3"])
        ],
        "in row order"
    );
    // Appends; REPLACE starts over; EX gives a TTL.
    assert_eq!(
        c.cmd(&[
            "SQL.TOSTREAM",
            "events:{user}",
            "SELECT user, action FROM ev WHERE user = 'bob'"
        ])
        .await,
        int(1)
    );
    assert_eq!(c.cmd(&["XLEN", "events:bob"]).await, int(2));
    assert_eq!(
        c.cmd(&[
            "SQL.TOSTREAM",
            "REPLACE",
            "EX",
            "100",
            "events:{user}",
            "SELECT user, action FROM ev WHERE user = 'bob'"
        ])
        .await,
        int(1)
    );
    assert_eq!(c.cmd(&["XLEN", "events:bob"]).await, int(1));
    assert!(matches!(c.cmd(&["TTL", "events:bob"]).await, Frame::Integer(t) if t > 90 && t <= 100));
    // A key of another type: WRONGTYPE, nothing written.
    c.cmd(&["SET", "events:ann", "x"]).await;
    assert_eq!(
        c.cmd(&[
            "SQL.TOSTREAM",
            "events:{user}",
            "SELECT user, action FROM ev"
        ])
        .await,
        err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
    assert_eq!(c.cmd(&["XLEN", "events:bob"]).await, int(1));
    // A row with no field besides the key's columns adds nothing.
    assert_eq!(
        c.cmd(&["SQL.TOSTREAM", "only:{user}", "SELECT user FROM ev"])
            .await,
        int(0)
    );
    assert_eq!(c.cmd(&["EXISTS", "only:ann"]).await, int(0));
}

/// A client blocked in XREAD is served by the entries SQL.TOSTREAM adds, as by XADD.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tostream_serves_a_blocked_xread() {
    let s = start().await;
    let mut c = s.raw().await;
    let addr = s.addr;
    let reader = tokio::spawn(async move {
        let mut r = Raw::connect(addr).await;
        r.cmd(&["XREAD", "BLOCK", "5000", "STREAMS", "feed", "$"])
            .await
    });
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(
        c.cmd(&["SQL.TOSTREAM", "feed", "SELECT 'hello' AS msg"])
            .await,
        int(1)
    );
    let got = tokio::time::timeout(std::time::Duration::from_secs(3), reader)
        .await
        .expect("served before its timeout")
        .unwrap();
    let Frame::Array(streams) = got else {
        panic!("served with entries: {got:?}")
    };
    assert_eq!(streams.len(), 1);
}

#[tokio::test]
async fn fromstream_writes_entries_as_rows() {
    let s = start().await;
    let mut c = s.raw().await;
    for (id, fields) in [
        ("1-1", &["job", "mail", "tries", "1"][..]),
        ("2-1", &["job", "sms", "tries", "2", "cost", "0.5"][..]),
        ("3-1", &["job", "push"][..]),
    ] {
        let mut args = vec!["XADD", "jobs", id];
        args.extend_from_slice(fields);
        c.cmd(&args).await;
    }
    assert_eq!(c.cmd(&["SQL.FROMSTREAM", "jobs_t", "jobs"]).await, int(3));
    assert_eq!(
        c.cmd(&[
            "SQL.QUERY",
            "SELECT id, job, tries, cost FROM jobs_t ORDER BY id"
        ])
        .await,
        arr(vec![
            row(vec![bulk("1-1"), bulk("mail"), int(1), nil()]),
            row(vec![bulk("2-1"), bulk("sms"), int(2), bulk("0.5")]),
            row(vec![bulk("3-1"), bulk("push"), nil(), nil()]),
        ])
    );
    assert_eq!(
        c.cmd(&[
            "SQL.QUERY",
            "SELECT group_concat(name || ' ' || type, ',') FROM pragma_table_info('jobs_t')"
        ])
        .await,
        arr(vec![row(vec![bulk(
            "id TEXT,job TEXT,tries INTEGER,cost REAL"
        )])])
    );
    // Again after more entries: upserted by id, a new field becomes a column.
    c.cmd(&["XADD", "jobs", "4-1", "job", "fax", "prio", "high"])
        .await;
    assert_eq!(c.cmd(&["SQL.FROMSTREAM", "jobs_t", "jobs"]).await, int(4));
    assert_eq!(
        c.cmd(&["SQL.QUERY", "SELECT count(*), max(prio) FROM jobs_t"])
            .await,
        arr(vec![row(vec![int(4), bulk("high")])])
    );
    // Round trip: the table back into a stream holds the same fields.
    assert_eq!(
        c.cmd(&["SQL.TOSTREAM", "copy", "SELECT job FROM jobs_t ORDER BY id"])
            .await,
        int(4)
    );
    assert_eq!(c.cmd(&["XLEN", "copy"]).await, int(4));
    // A missing key writes no row; another type is WRONGTYPE; a field named id is refused.
    assert_eq!(c.cmd(&["SQL.FROMSTREAM", "none_t", "nokey"]).await, int(0));
    c.cmd(&["SET", "str", "x"]).await;
    assert_eq!(
        c.cmd(&["SQL.FROMSTREAM", "t2", "str"]).await,
        err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
    c.cmd(&["XADD", "bad", "1-1", "id", "x"]).await;
    let refused = c.cmd(&["SQL.FROMSTREAM", "t3", "bad"]).await;
    assert!(
        matches!(&refused, Frame::Error(m) if String::from_utf8_lossy(m).contains("a field named 'id'")),
        "{refused:?}"
    );
    // Into a named database.
    c.cmd(&["SQL.DB", "CREATE", "side", "MEMORY"]).await;
    assert_eq!(
        c.cmd(&["SQL.FROMSTREAM", "DB", "side", "jobs_t", "jobs"])
            .await,
        int(4)
    );
    assert_eq!(
        c.cmd(&["SQL.QUERY", "DB", "side", "SELECT count(*) FROM jobs_t"])
            .await,
        arr(vec![row(vec![int(4)])])
    );
    assert_eq!(
        c.cmd(&["SQL.FROMSTREAM", "a"]).await,
        err("ERR wrong number of arguments for 'sql.fromstream' command")
    );
}
