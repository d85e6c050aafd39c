//! ACL key patterns on every SQL path: the `redis_*` views show a user only the keys it may
//! read (SQL.QUERY inline and on readers, SQL.EXEC on the writer, MULTI, prepared statements,
//! SQL.DESC, scripts), the morph commands write only keys the user may write (NOPERM, nothing
//! written, an ACL LOG entry), SQL.FROMHASH reads only hashes the user may read. Also the
//! REDISQL.* categories and `sql-max-databases`.

mod common;
use common::*;
use resp::Frame;

const NOPERM_KEYS: &str =
    "NOPERM this user has no permissions to access one of the keys used as arguments";

/// The issue's user: reads and writes under app:* (and MULTI).
const APP: [&str; 4] = ["~app:*", "+@read", "+@write", "+@transaction"];

/// A connection authenticated as a new user `name` with `rules`.
async fn as_user(s: &TestServer, admin: &mut Raw, name: &str, rules: &[&str]) -> Raw {
    let mut args = vec!["ACL", "SETUSER", name, "on", ">pw"];
    args.extend_from_slice(rules);
    assert_eq!(admin.cmd(&args).await, ok(), "ACL SETUSER {name}");
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["AUTH", name, "pw"]).await, ok());
    c
}

/// The first column of a rows reply, as text.
fn first_column(f: Frame) -> Vec<String> {
    let Frame::Array(rows) = f else {
        panic!("not rows: {f:?}")
    };
    rows.into_iter()
        .map(|r| match r {
            Frame::Array(mut v) => match v.remove(0) {
                Frame::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
                Frame::Integer(i) => i.to_string(),
                other => panic!("not a value: {other:?}"),
            },
            other => panic!("not a row: {other:?}"),
        })
        .collect()
}

/// One value reply (`[[v]]`) as an integer.
fn single_int(f: Frame) -> i64 {
    match f {
        Frame::Array(rows) => match &rows[..] {
            [Frame::Array(v)] => match &v[..] {
                [Frame::Integer(i)] => *i,
                other => panic!("not one integer: {other:?}"),
            },
            other => panic!("not one row: {other:?}"),
        },
        other => panic!("not rows: {other:?}"),
    }
}

/// Keys of every type, half of them under `app:`.
async fn fill(admin: &mut Raw) {
    for args in [
        &["SET", "app:s", "mine"][..],
        &["SET", "secret", "hunter2"],
        &["HSET", "app:h", "f", "v"],
        &["HSET", "user:admin", "password", "hunter2"],
        &["RPUSH", "app:l", "a"],
        &["RPUSH", "other:l", "b"],
        &["SADD", "app:set", "m"],
        &["SADD", "other:set", "n"],
        &["ZADD", "app:z", "1", "m"],
        &["ZADD", "other:z", "2", "n"],
    ] {
        assert!(
            !matches!(admin.cmd(args).await, Frame::Error(_)),
            "{args:?}"
        );
    }
}

const VIEWS: &[(&str, &[&str], &[&str])] = &[
    (
        "redis_keys",
        &["app:h", "app:l", "app:s", "app:set", "app:z"],
        &[
            "app:h",
            "app:l",
            "app:s",
            "app:set",
            "app:z",
            "other:l",
            "other:set",
            "other:z",
            "secret",
            "user:admin",
        ],
    ),
    ("redis_strings", &["app:s"], &["app:s", "secret"]),
    ("redis_hashes", &["app:h"], &["app:h", "user:admin"]),
    ("redis_lists", &["app:l"], &["app:l", "other:l"]),
    ("redis_sets", &["app:set"], &["app:set", "other:set"]),
    ("redis_zsets", &["app:z"], &["app:z", "other:z"]),
];

async fn keys_in(c: &mut Raw, cmd: &str, view: &str) -> Vec<String> {
    let sql = format!("SELECT DISTINCT key FROM {view} ORDER BY key");
    first_column(c.cmd(&[cmd, &sql]).await)
}

#[tokio::test]
async fn views_show_a_restricted_user_only_its_keys() {
    let s = start().await;
    let mut admin = s.raw().await;
    fill(&mut admin).await;
    let mut app = as_user(&s, &mut admin, "app", &APP).await;
    for (view, mine, all) in VIEWS {
        // Inline or on a reader (SQL.QUERY), on the writer (SQL.EXEC).
        for cmd in ["SQL.QUERY", "SQL.EXEC"] {
            assert_eq!(keys_in(&mut app, cmd, view).await, *mine, "{cmd} {view}");
            assert_eq!(keys_in(&mut admin, cmd, view).await, *all, "{cmd} {view}");
        }
        let count = format!("SELECT count(DISTINCT key) FROM {view}");
        assert_eq!(
            single_int(app.cmd(&["SQL.QUERY", &count]).await),
            mine.len() as i64
        );
        // SQL.DESC counts the rows the user may see.
        let Frame::Array(desc) = app.cmd(&["SQL.DESC", view]).await else {
            panic!("SQL.DESC {view}")
        };
        let rows = desc
            .chunks(2)
            .find(|p| p[0] == bulk("rows"))
            .map(|p| p[1].clone());
        let visible_rows = single_int(
            app.cmd(&["SQL.QUERY", &format!("SELECT count(*) FROM {view}")])
                .await,
        );
        assert_eq!(rows, Some(int(visible_rows)), "SQL.DESC {view}");
    }
    // Point lookups, joins, aggregates and subqueries see the same.
    for sql in [
        "SELECT value FROM redis_strings WHERE key = 'secret'",
        "SELECT value FROM redis_hashes WHERE key = 'user:admin'",
        "SELECT k.key FROM redis_keys k JOIN redis_strings s ON s.key = k.key WHERE s.value = 'hunter2'",
        "SELECT key FROM redis_keys WHERE key IN (SELECT key FROM redis_hashes WHERE field = 'password')",
        "WITH x AS (SELECT key FROM redis_keys) SELECT key FROM x WHERE key NOT LIKE 'app:%'",
    ] {
        assert_eq!(app.cmd(&["SQL.QUERY", sql]).await, arr(vec![]), "{sql}");
        assert_ne!(admin.cmd(&["SQL.QUERY", sql]).await, arr(vec![]), "{sql}");
    }
    assert_eq!(
        single_int(
            app.cmd(&["SQL.QUERY", "SELECT count(*) FROM redis_keys"])
                .await
        ),
        5
    );
    assert_eq!(
        single_int(
            admin
                .cmd(&["SQL.QUERY", "SELECT count(*) FROM redis_keys"])
                .await
        ),
        10
    );
    // A view of the user's own over a redis_* view is filtered for whoever reads it.
    assert_eq!(
        admin
            .cmd(&[
                "SQL.EXEC",
                "CREATE VIEW everything AS SELECT key FROM redis_keys"
            ])
            .await,
        ok()
    );
    assert_eq!(
        single_int(
            app.cmd(&["SQL.QUERY", "SELECT count(*) FROM everything"])
                .await
        ),
        5
    );
    // A query too long for the network thread runs again on a reader, with the same user.
    let long = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000) \
                SELECT key FROM redis_keys WHERE (SELECT count(*) FROM c) = 20000 ORDER BY key";
    assert_eq!(
        first_column(app.cmd(&["SQL.QUERY", long]).await),
        ["app:h", "app:l", "app:s", "app:set", "app:z"]
    );
    assert_eq!(
        first_column(admin.cmd(&["SQL.QUERY", long]).await).len(),
        10
    );
    // Inside MULTI, queued SQL runs on the writer with the same user.
    assert_eq!(app.cmd(&["MULTI"]).await, ok());
    app.cmd(&["SQL.QUERY", "SELECT key FROM redis_strings ORDER BY key"])
        .await;
    app.cmd(&["SQL.EXEC", "SELECT key FROM redis_hashes ORDER BY key"])
        .await;
    assert_eq!(
        app.cmd(&["EXEC"]).await,
        arr(vec![
            arr(vec![arr(vec![bulk("app:s")])]),
            arr(vec![arr(vec![bulk("app:h")])]),
        ])
    );
}

#[tokio::test]
async fn selectors_that_allow_the_command_decide_what_is_visible() {
    let s = start().await;
    let mut admin = s.raw().await;
    fill(&mut admin).await;
    // The root selector allows SQL.QUERY on app:*, a second selector allows it on other:*, a
    // third allows GET (not SQL.QUERY) on secret: SQL.QUERY sees app:* and other:*.
    let mut u = as_user(
        &s,
        &mut admin,
        "sel",
        &[
            "~app:*",
            "+@read",
            "(+sql.query ~other:*)",
            "(+get ~secret)",
        ],
    )
    .await;
    assert_eq!(
        keys_in(&mut u, "SQL.QUERY", "redis_keys").await,
        [
            "app:h",
            "app:l",
            "app:s",
            "app:set",
            "app:z",
            "other:l",
            "other:set",
            "other:z"
        ]
    );
    assert_eq!(u.cmd(&["GET", "secret"]).await, bulk("hunter2"));
    // %W~ alone does not make a key visible; %R~ does; allkeys shows everything.
    let mut w = as_user(&s, &mut admin, "wonly", &["%W~secret", "+@all"]).await;
    assert_eq!(
        keys_in(&mut w, "SQL.QUERY", "redis_strings").await,
        [] as [&str; 0]
    );
    let mut r = as_user(&s, &mut admin, "ronly", &["%R~sec*", "+@all"]).await;
    assert_eq!(
        keys_in(&mut r, "SQL.QUERY", "redis_strings").await,
        ["secret"]
    );
    let mut all = as_user(&s, &mut admin, "all", &["allkeys", "+@read", "-get"]).await;
    assert_eq!(keys_in(&mut all, "SQL.QUERY", "redis_keys").await.len(), 10);
    // Rules changed on a connected user apply to its next statement.
    assert_eq!(
        admin
            .cmd(&["ACL", "SETUSER", "ronly", "resetkeys", "%R~app:s"])
            .await,
        ok()
    );
    assert_eq!(
        keys_in(&mut r, "SQL.QUERY", "redis_strings").await,
        ["app:s"]
    );
}

#[tokio::test]
async fn prepared_statements_run_with_the_runners_keys() {
    let s = start().await;
    let mut admin = s.raw().await;
    fill(&mut admin).await;
    let mut app = as_user(&s, &mut admin, "app", &APP).await;
    assert_eq!(
        admin
            .cmd(&[
                "SQL.PREPARE",
                "strings",
                "SELECT key FROM redis_strings ORDER BY key"
            ])
            .await,
        ok()
    );
    assert_eq!(
        app.cmd(&[
            "SQL.PREPARE",
            "hashes",
            "SELECT key FROM redis_hashes ORDER BY key"
        ])
        .await,
        ok()
    );
    assert_eq!(
        first_column(app.cmd(&["SQL.RUN", "strings"]).await),
        ["app:s"]
    );
    assert_eq!(
        first_column(admin.cmd(&["SQL.RUN", "strings"]).await),
        ["app:s", "secret"]
    );
    assert_eq!(
        first_column(admin.cmd(&["SQL.RUN", "hashes"]).await),
        ["app:h", "user:admin"]
    );
    assert_eq!(
        first_column(app.cmd(&["SQL.RUN", "hashes"]).await),
        ["app:h"]
    );
}

#[tokio::test]
async fn morph_commands_write_only_keys_the_user_may_write() {
    let s = start().await;
    let mut admin = s.raw().await;
    fill(&mut admin).await;
    assert_eq!(
        admin.cmd(&["SQL.DB", "CREATE", "side", "MEMORY"]).await,
        ok()
    );
    let mut app = as_user(&s, &mut admin, "app", &APP).await;
    // Each morph command, with and without REPLACE, with the query on the main database and
    // on a named one: a key outside app:* is refused, and nothing of the command is written
    // (app:new comes first in the rows and would have been written).
    let rows = "SELECT 'app:new' AS k, 'x' AS v, 1 AS score UNION ALL SELECT 'secret', 'pwned', 2";
    for cmd in [
        "SQL.TOHASH",
        "SQL.TOSTRING",
        "SQL.TOLIST",
        "SQL.TOSET",
        "SQL.TOZSET",
    ] {
        let sql = if cmd == "SQL.TOZSET" {
            rows.to_string()
        } else {
            format!("SELECT k, v FROM ({rows})")
        };
        for replace in [false, true] {
            for db in [None, Some("side")] {
                let mut args = vec![cmd];
                if let Some(d) = db {
                    args.extend(["DB", d]);
                }
                if replace {
                    args.push("REPLACE");
                }
                args.extend(["{k}", sql.as_str()]);
                assert_eq!(app.cmd(&args).await, err(NOPERM_KEYS), "{args:?}");
                assert_eq!(admin.cmd(&["EXISTS", "app:new"]).await, int(0), "{args:?}");
                assert_eq!(
                    admin.cmd(&["GET", "secret"]).await,
                    bulk("hunter2"),
                    "{args:?}"
                );
            }
        }
    }
    // A single fixed key outside the patterns, and a hash over an existing one.
    assert_eq!(
        app.cmd(&["SQL.TOSTRING", "secret", "SELECT 'pwned'"]).await,
        err(NOPERM_KEYS)
    );
    assert_eq!(
        app.cmd(&["SQL.TOHASH", "user:admin", "SELECT 'pwned' AS password"])
            .await,
        err(NOPERM_KEYS)
    );
    assert_eq!(
        admin.cmd(&["HGET", "user:admin", "password"]).await,
        bulk("hunter2")
    );
    // Keys inside the patterns are written.
    assert_eq!(
        app.cmd(&["SQL.TOSTRING", "app:{k}", "SELECT 'one' AS k, 'x'"])
            .await,
        int(1)
    );
    assert_eq!(admin.cmd(&["GET", "app:one"]).await, bulk("x"));
    // The denial is in ACL LOG as a key denial.
    let Frame::Array(log) = admin.cmd(&["ACL", "LOG", "1"]).await else {
        panic!("ACL LOG")
    };
    let Frame::Array(entry) = &log[0] else {
        panic!("ACL LOG entry")
    };
    let field = |name: &str| {
        entry
            .chunks(2)
            .find(|p| p[0] == bulk(name))
            .map(|p| p[1].clone())
    };
    assert_eq!(field("reason"), Some(bulk("key")));
    assert_eq!(field("context"), Some(bulk("toplevel")));
    assert_eq!(field("object"), Some(bulk("user:admin")));
    assert_eq!(field("username"), Some(bulk("app")));
    // Inside MULTI: the command fails alone, logged with context multi.
    assert_eq!(app.cmd(&["MULTI"]).await, ok());
    app.cmd(&["SQL.TOSTRING", "secret", "SELECT 'pwned'"]).await;
    app.cmd(&["SET", "app:after", "1"]).await;
    assert_eq!(app.cmd(&["EXEC"]).await, arr(vec![err(NOPERM_KEYS), ok()]));
    assert_eq!(admin.cmd(&["GET", "secret"]).await, bulk("hunter2"));
    let Frame::Array(log) = admin.cmd(&["ACL", "LOG", "1"]).await else {
        panic!("ACL LOG")
    };
    let Frame::Array(entry) = &log[0] else {
        panic!("ACL LOG entry")
    };
    assert!(entry.contains(&bulk("multi")), "{entry:?}");
}

#[tokio::test]
async fn a_read_only_pattern_can_query_but_not_morph() {
    let s = start().await;
    let mut admin = s.raw().await;
    fill(&mut admin).await;
    let mut ro = as_user(&s, &mut admin, "ro", &["%R~app:*", "+@all"]).await;
    assert_eq!(
        keys_in(&mut ro, "SQL.QUERY", "redis_strings").await,
        ["app:s"]
    );
    assert_eq!(
        ro.cmd(&["SQL.TOSTRING", "app:s", "SELECT 'changed'"]).await,
        err(NOPERM_KEYS)
    );
    assert_eq!(admin.cmd(&["GET", "app:s"]).await, bulk("mine"));
}

#[tokio::test]
async fn fromhash_copies_only_hashes_the_user_may_read() {
    let s = start().await;
    let mut admin = s.raw().await;
    fill(&mut admin).await;
    admin.cmd(&["HSET", "app:u2", "name", "bob"]).await;
    let mut app = as_user(&s, &mut admin, "app", &APP).await;
    // user:* matches only hashes the user may not read: nothing is copied.
    assert_eq!(app.cmd(&["SQL.FROMHASH", "stolen", "user:*"]).await, int(0));
    assert_eq!(
        app.cmd(&["SQL.QUERY", "SELECT count(*) FROM stolen"]).await,
        arr(vec![arr(vec![int(0)])])
    );
    // * copies the readable ones only.
    assert_eq!(app.cmd(&["SQL.FROMHASH", "mine", "*"]).await, int(2));
    assert_eq!(
        first_column(
            app.cmd(&["SQL.QUERY", "SELECT key FROM mine ORDER BY key"])
                .await
        ),
        ["app:h", "app:u2"]
    );
    // Into a named database too.
    admin.cmd(&["SQL.DB", "CREATE", "side", "MEMORY"]).await;
    assert_eq!(
        app.cmd(&["SQL.FROMHASH", "DB", "side", "t", "*"]).await,
        int(2)
    );
    // The admin copies everything.
    assert_eq!(
        admin.cmd(&["SQL.FROMHASH", "all_hashes", "*"]).await,
        int(3)
    );
}

#[tokio::test]
async fn fromstream_needs_read_access_to_its_key() {
    let s = start().await;
    let mut admin = s.raw().await;
    admin.cmd(&["XADD", "user:feed", "1-1", "f", "v"]).await;
    admin.cmd(&["XADD", "app:feed", "1-1", "f", "v"]).await;
    let mut app = as_user(&s, &mut admin, "app", &APP).await;
    assert_eq!(
        app.cmd(&["SQL.FROMSTREAM", "stolen", "user:feed"]).await,
        err(NOPERM_KEYS)
    );
    assert_eq!(
        app.cmd(&[
            "SQL.QUERY",
            "SELECT count(*) FROM sqlite_master WHERE name = 'stolen'"
        ])
        .await,
        arr(vec![arr(vec![int(0)])])
    );
    admin.cmd(&["SQL.DB", "CREATE", "side", "MEMORY"]).await;
    assert_eq!(
        app.cmd(&["SQL.FROMSTREAM", "DB", "side", "t", "user:feed"])
            .await,
        err(NOPERM_KEYS)
    );
    assert_eq!(
        app.cmd(&["SQL.FROMSTREAM", "mine", "app:feed"]).await,
        int(1)
    );
}

#[tokio::test]
async fn scripts_run_sql_as_the_scripts_user() {
    let s = start().await;
    let mut admin = s.raw().await;
    fill(&mut admin).await;
    let mut app = as_user(
        &s,
        &mut admin,
        "app",
        &["~app:*", "+@read", "+@write", "+@scripting"],
    )
    .await;
    let query = "return redis.call('sql.query', 'SELECT key FROM redis_strings ORDER BY key')";
    assert_eq!(
        first_column(app.cmd(&["EVAL", query, "0"]).await),
        ["app:s"]
    );
    assert_eq!(
        first_column(admin.cmd(&["EVAL", query, "0"]).await),
        ["app:s", "secret"]
    );
    let exec = "return redis.call('sql.exec', 'SELECT key FROM redis_hashes ORDER BY key')";
    assert_eq!(first_column(app.cmd(&["EVAL", exec, "0"]).await), ["app:h"]);
    let morph = r#"return redis.call('sql.tostring', 'secret', "SELECT 'pwned'")"#;
    let Frame::Error(e) = app.cmd(&["EVAL", morph, "0"]).await else {
        panic!("the script wrote secret")
    };
    assert!(
        String::from_utf8_lossy(&e).starts_with(NOPERM_KEYS),
        "{}",
        String::from_utf8_lossy(&e)
    );
    assert_eq!(admin.cmd(&["GET", "secret"]).await, bulk("hunter2"));
    let Frame::Array(log) = admin.cmd(&["ACL", "LOG", "1"]).await else {
        panic!("ACL LOG")
    };
    let Frame::Array(entry) = &log[0] else {
        panic!("ACL LOG entry")
    };
    assert!(entry.contains(&bulk("lua")), "{entry:?}");
    // A function loaded by the admin runs with the caller's user.
    let lib = "#!lua name=lib\nredis.register_function('strings', function() return redis.call('sql.query', 'SELECT key FROM redis_strings ORDER BY key') end)";
    assert_eq!(admin.cmd(&["FUNCTION", "LOAD", lib]).await, bulk("lib"));
    assert_eq!(
        first_column(app.cmd(&["FCALL", "strings", "0"]).await),
        ["app:s"]
    );
    assert_eq!(
        first_column(admin.cmd(&["FCALL", "strings", "0"]).await),
        ["app:s", "secret"]
    );
}

#[tokio::test]
async fn redisql_aliases_are_denied_as_their_sql_commands_are() {
    let s = start().await;
    let mut admin = s.raw().await;
    let mut u = as_user(
        &s,
        &mut admin,
        "noadmin",
        &["~*", "&*", "+@all", "-@admin", "-@dangerous"],
    )
    .await;
    let noperm = |cmd: &str| {
        err(&format!(
            "NOPERM this user has no permissions to run the '{cmd}' command"
        ))
    };
    assert_eq!(
        u.cmd(&["SQL.DB", "CREATE", "x", "MEMORY"]).await,
        noperm("sql.db|create")
    );
    assert_eq!(
        u.cmd(&["REDISQL.CREATE_DB", "x"]).await,
        noperm("redisql.create_db")
    );
    assert_eq!(
        u.cmd(&["REDISQL.CREATE_DB.NOW", "x"]).await,
        noperm("redisql.create_db.now")
    );
    assert_eq!(admin.cmd(&["REDISQL.CREATE_DB", "a"]).await, ok());
    assert_eq!(admin.cmd(&["REDISQL.CREATE_DB", "b"]).await, ok());
    assert_eq!(
        u.cmd(&["REDISQL.COPY", "a", "b"]).await,
        noperm("redisql.copy")
    );
    assert_eq!(
        u.cmd(&["REDISQL.STATISTICS"]).await,
        noperm("redisql.statistics")
    );
    // What a user of SQL may do, it may do through the aliases.
    assert_eq!(
        u.cmd(&["REDISQL.EXEC", "a", "CREATE TABLE t (x)"]).await,
        simple("DONE")
    );
    assert!(matches!(u.cmd(&["REDISQL.VERSION"]).await, Frame::Bulk(_)));
    assert_eq!(
        first_column(admin.cmd(&["SQL.DB", "LIST"]).await),
        ["a", "b"]
    );
}

#[tokio::test]
async fn sql_max_databases_caps_creation_and_not_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let mut s = start_with(|c| c.dir = path.clone()).await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "sql-max-databases"]).await,
        bulks(&["sql-max-databases", "16"])
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "sql-max-databases", "3"]).await,
        ok()
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "sql-max-databases", "-1"]).await,
        err("ERR CONFIG SET failed (possibly related to argument 'sql-max-databases') - argument must be between 0 and 9223372036854775807 inclusive")
    );
    assert_eq!(c.cmd(&["SQL.DB", "CREATE", "a"]).await, ok());
    assert_eq!(c.cmd(&["SQL.DB", "CREATE", "b", "MEMORY"]).await, ok());
    assert_eq!(c.cmd(&["REDISQL.CREATE_DB", "c"]).await, ok());
    let full = err("ERR too many SQL databases: sql-max-databases is 3 (drop one with SQL.DB DROP, or raise the setting)");
    assert_eq!(c.cmd(&["SQL.DB", "CREATE", "d"]).await, full);
    assert_eq!(c.cmd(&["REDISQL.CREATE_DB", "d"]).await, full);
    assert!(!path.join("d.sqlite").exists());
    assert_eq!(c.cmd(&["SQL.DB", "DROP", "b"]).await, ok());
    assert_eq!(c.cmd(&["SQL.DB", "CREATE", "d"]).await, ok());
    // 0 lifts the cap.
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "sql-max-databases", "0"]).await,
        ok()
    );
    assert_eq!(c.cmd(&["SQL.DB", "CREATE", "e"]).await, ok());
    drop(c);
    s.stop().await;

    // Started with a lower cap, every recorded database opens; new ones wait for room.
    let s = start_with(|c| {
        c.dir = path.clone();
        c.sql_max_databases = 1;
    })
    .await;
    let mut c = s.raw().await;
    assert_eq!(
        first_column(c.cmd(&["SQL.DB", "LIST"]).await),
        ["a", "c", "d", "e"]
    );
    assert_eq!(
        c.cmd(&["SQL.EXEC", "DB", "e", "SELECT 1"]).await,
        arr(vec![arr(vec![int(1)])])
    );
    let full = err("ERR too many SQL databases: sql-max-databases is 1 (drop one with SQL.DB DROP, or raise the setting)");
    assert_eq!(c.cmd(&["SQL.DB", "CREATE", "f"]).await, full);
    for name in ["a", "c", "d"] {
        assert_eq!(c.cmd(&["SQL.DB", "DROP", name]).await, ok());
    }
    assert_eq!(c.cmd(&["SQL.DB", "CREATE", "f"]).await, full);
    assert_eq!(c.cmd(&["SQL.DB", "DROP", "e"]).await, ok());
    assert_eq!(c.cmd(&["SQL.DB", "CREATE", "f"]).await, ok());
}

/// A trigger runs with the key access of whoever fires it: one made by a restricted user would
/// copy what an admin's statement can see into a table the restricted user reads. So a user
/// limited to some keys may not create triggers (on any table, through a view or not).
#[tokio::test]
async fn a_restricted_user_cannot_plant_a_trigger_that_runs_with_an_admins_keys() {
    let s = start().await;
    let mut admin = s.raw().await;
    fill(&mut admin).await;
    assert!(!matches!(
        admin
            .cmd(&[
                "SQL.EXEC",
                "CREATE TABLE shared (x); CREATE TABLE loot (k, v)"
            ])
            .await,
        Frame::Error(_)
    ));
    let mut app = as_user(&s, &mut admin, "app", &APP).await;
    assert!(!matches!(
        app.cmd(&[
            "SQL.EXEC",
            "CREATE VIEW strings_of_anyone AS SELECT key, value FROM redis_strings"
        ])
        .await,
        Frame::Error(_)
    ));
    for body in [
        "INSERT INTO loot SELECT key, value FROM redis_strings",
        "INSERT INTO loot SELECT key, value FROM strings_of_anyone",
    ] {
        let sql = format!("CREATE TRIGGER steal AFTER INSERT ON shared BEGIN {body}; END");
        match app.cmd(&["SQL.EXEC", &sql]).await {
            Frame::Error(e) => {
                let e = String::from_utf8_lossy(&e);
                assert!(e.contains("trigger") && e.contains("not authorized"), "{e}")
            }
            other => panic!("a restricted user created a trigger: {other:?}"),
        }
        assert!(!matches!(
            admin
                .cmd(&["SQL.EXEC", "INSERT INTO shared VALUES (1)"])
                .await,
            Frame::Error(_)
        ));
        let loot = first_column(app.cmd(&["SQL.QUERY", "SELECT k FROM loot"]).await);
        assert!(!loot.contains(&"secret".to_string()), "{loot:?}");
    }
    // A user who may read every key still creates triggers.
    assert!(!matches!(
        admin
            .cmd(&["SQL.EXEC", "CREATE TRIGGER audit AFTER INSERT ON shared BEGIN INSERT INTO loot VALUES ('n', new.x); END"])
            .await,
        Frame::Error(_)
    ));
}
