//! REDISQL.* — RediSQL's API and reply shapes on Relis's named databases, including the
//! transcript from RediSQL's own introduction.

mod common;
use common::*;
use resp::Frame;

fn done(n: i64) -> Frame {
    arr(vec![simple("DONE"), int(n)])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redisql_transcript_works_as_shown() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["REDISQL.CREATE_DB", "DB"]).await, ok());
    assert_eq!(
        c.cmd(&[
            "REDISQL.EXEC",
            "DB",
            "create table user(username text, password text, counter int);"
        ])
        .await,
        simple("DONE")
    );
    assert_eq!(
        c.cmd(&[
            "REDISQL.EXEC",
            "DB",
            "insert into user values('foo', 'secret', 3);"
        ])
        .await,
        done(1)
    );
    assert_eq!(
        c.cmd(&[
            "REDISQL.EXEC",
            "DB",
            "insert into user values('bar', 'verysecret', 5);"
        ])
        .await,
        done(1)
    );
    assert_eq!(
        c.cmd(&[
            "REDISQL.EXEC",
            "DB",
            "select * from user where counter > 4;"
        ])
        .await,
        arr(vec![arr(vec![bulk("bar"), bulk("verysecret"), int(5)])])
    );
    assert_eq!(
        c.cmd(&[
            "REDISQL.EXEC",
            "DB",
            "UPDATE user SET counter = counter + 1 WHERE username = 'foo'; "
        ])
        .await,
        done(1)
    );
    assert_eq!(
        c.cmd(&["REDISQL.EXEC", "DB", "SELECT * from user;"]).await,
        arr(vec![
            arr(vec![bulk("foo"), bulk("secret"), int(4)]),
            arr(vec![bulk("bar"), bulk("verysecret"), int(5)]),
        ])
    );
    // The exact bytes redis-cli would render as in RediSQL's documentation.
    c.send(&encode_command(&[
        b"REDISQL.EXEC",
        b"DB",
        b"SELECT 1 WHERE 0",
    ]))
    .await;
    assert_eq!(
        show(&c.read_raw().await.unwrap()),
        show(b"*2\r\n+DONE\r\n:0\r\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v1_statements_query_copy_statistics() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["REDISQL.CREATE_DB.NOW", "A"]).await, ok());
    assert_eq!(c.cmd(&["REDISQL.CREATE_DB", "F", "f.sqlite"]).await, ok());
    assert!(s.dir.path().join("f.sqlite").exists());
    assert_eq!(
        c.cmd(&["REDISQL.CREATE_DB", "E", "/tmp/escape.sqlite"])
            .await,
        err("ERR path '/tmp/escape.sqlite' is outside the data directory")
    );
    assert_eq!(
        c.cmd(&["REDISQL.EXEC", "A", "CREATE TABLE foo(a int, b int);"])
            .await,
        simple("DONE")
    );
    assert_eq!(
        c.cmd(&[
            "REDISQL.CREATE_STATEMENT",
            "A",
            "ins",
            "INSERT INTO foo VALUES(?1, ?2);"
        ])
        .await,
        ok()
    );
    assert_eq!(
        c.cmd(&[
            "REDISQL.CREATE_STATEMENT",
            "A",
            "ins",
            "INSERT INTO foo VALUES(?1, ?2);"
        ])
        .await,
        err("ERR a prepared statement named 'ins' exists already")
    );
    assert_eq!(
        c.cmd(&["REDISQL.EXEC_STATEMENT", "A", "ins", "3", "4"])
            .await,
        done(1)
    );
    assert_eq!(
        c.cmd(&["REDISQL.EXEC_STATEMENT.NOW", "A", "ins", "5", "6"])
            .await,
        done(1)
    );
    assert_eq!(
        c.cmd(&[
            "REDISQL.CREATE_STATEMENT",
            "A",
            "get",
            "SELECT b FROM foo WHERE a = ?1"
        ])
        .await,
        ok()
    );
    assert_eq!(
        c.cmd(&["REDISQL.QUERY_STATEMENT", "A", "get", "3"]).await,
        arr(vec![arr(vec![int(4)])])
    );
    assert_eq!(
        c.cmd(&["REDISQL.QUERY_STATEMENT", "A", "ins", "1", "1"])
            .await,
        err("ERR statement would write: only reads are allowed here")
    );
    assert_eq!(
        c.cmd(&[
            "REDISQL.UPDATE_STATEMENT",
            "A",
            "get",
            "SELECT a FROM foo WHERE b = ?1"
        ])
        .await,
        ok()
    );
    assert_eq!(
        c.cmd(&["REDISQL.UPDATE_STATEMENT", "A", "nope", "SELECT 1"])
            .await,
        err("ERR no prepared statement named 'nope'")
    );
    assert_eq!(
        c.cmd(&["REDISQL.QUERY_STATEMENT", "A", "get", "6"]).await,
        arr(vec![arr(vec![int(5)])])
    );
    assert_eq!(c.cmd(&["REDISQL.DELETE_STATEMENT", "A", "get"]).await, ok());
    assert_eq!(
        c.cmd(&["REDISQL.DELETE_STATEMENT", "A", "get"]).await,
        err("ERR no prepared statement named 'get'")
    );
    assert_eq!(
        c.cmd(&["REDISQL.QUERY", "A", "SELECT count(*) FROM foo"])
            .await,
        arr(vec![arr(vec![int(2)])])
    );
    assert_eq!(
        c.cmd(&["REDISQL.QUERY.NOW", "A", "DELETE FROM foo"]).await,
        err("ERR statement would write: only reads are allowed here")
    );
    assert_eq!(
        c.cmd(&["REDISQL.EXEC", "NOPE", "SELECT 1"]).await,
        err("ERR no such SQL database 'NOPE'")
    );
    // COPY replaces the destination's content.
    assert_eq!(c.cmd(&["REDISQL.COPY", "A", "F"]).await, ok());
    assert_eq!(
        c.cmd(&["REDISQL.QUERY", "F", "SELECT a, b FROM foo ORDER BY a"])
            .await,
        arr(vec![arr(vec![int(3), int(4)]), arr(vec![int(5), int(6)])])
    );
    assert_eq!(
        c.cmd(&["REDISQL.EXEC_STATEMENT", "F", "ins", "7", "8"])
            .await,
        done(1)
    );
    // STATISTICS counts calls, successes and failures of each command.
    let Frame::Array(stats) = c.cmd(&["REDISQL.STATISTICS"]).await else {
        panic!()
    };
    let get = |name: &str| {
        stats
            .iter()
            .find_map(|p| match p {
                Frame::Array(v) if v[0] == bulk(name) => Some(v[1].clone()),
                _ => None,
            })
            .unwrap()
    };
    assert_eq!(stats.len(), 27);
    assert_eq!(get("CREATE_DB"), int(3));
    assert_eq!(get("CREATE_DB OK"), int(2));
    assert_eq!(get("CREATE_DB ERR"), int(1));
    assert_eq!(get("EXEC_STATEMENT"), int(3));
    assert_eq!(get("QUERY_STATEMENT ERR"), int(1));
    assert!(matches!(c.cmd(&["REDISQL.VERSION"]).await, Frame::Bulk(_)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v2_keyword_forms_reply_tagged_arrays() {
    let s = start().await;
    let mut c = s.raw().await;
    c.cmd(&["REDISQL.CREATE_DB", "DB"]).await;
    assert_eq!(
        c.cmd(&[
            "REDISQL.EXEC",
            "DB",
            "COMMAND",
            "CREATE TABLE users(username TEXT, score INT, email TEXT);"
        ])
        .await,
        arr(vec![bulks(&["DONE"]), arr(vec![int(0)])])
    );
    assert_eq!(
        c.cmd(&[
            "REDISQL.EXEC",
            "DB",
            "COMMAND",
            "INSERT INTO users VALUES(?1, ?2, ?3);",
            "ARGS",
            "jsmith",
            "3",
            "jon.smith@gmail.com"
        ])
        .await,
        arr(vec![bulks(&["DONE"]), arr(vec![int(1)])])
    );
    assert_eq!(
        c.cmd(&["REDISQL.EXEC", "DB", "COMMAND", "select 1;", "NO_HEADER"])
            .await,
        arr(vec![bulks(&["RESULT"]), arr(vec![int(1)])])
    );
    assert_eq!(
        c.cmd(&[
            "REDISQL.EXEC",
            "DB",
            "COMMAND",
            "SELECT username, score FROM users"
        ])
        .await,
        arr(vec![
            bulks(&["RESULT"]),
            bulks(&["username", "score"]),
            bulks(&["TEXT", "INT"]),
            arr(vec![bulk("jsmith"), int(3)]),
        ])
    );
    assert_eq!(
        c.cmd(&[
            "REDISQL.EXEC",
            "DB",
            "COMMAND",
            "DELETE FROM users",
            "READ_ONLY"
        ])
        .await,
        err("ERR statement would write: only reads are allowed here")
    );
    c.cmd(&[
        "REDISQL.CREATE_STATEMENT",
        "DB",
        "score",
        "SELECT score FROM users WHERE username = ?1",
    ])
    .await;
    assert_eq!(
        c.cmd(&[
            "REDISQL.EXEC",
            "DB",
            "STATEMENT",
            "score",
            "NO_HEADER",
            "ARGS",
            "jsmith"
        ])
        .await,
        arr(vec![bulks(&["RESULT"]), arr(vec![int(3)])])
    );
    assert_eq!(
        c.cmd(&[
            "REDISQL.QUERY",
            "DB",
            "STATEMENT",
            "score",
            "ARGS",
            "nobody"
        ])
        .await,
        arr(vec![bulks(&["DONE"]), arr(vec![int(0)])])
    );
}
