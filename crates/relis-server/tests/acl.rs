//! ACL over TCP: users and AUTH, requirepass as the default user's password, NOPERM texts,
//! read/write key patterns, channels, @sql, ACL LOG, disconnection on DELUSER, the ACL file
//! (SAVE, LOAD, start-up), with Redis 7.0's exact texts.

mod common;
use common::*;
use resp::Frame;

const NOPERM_KEYS: &str =
    "NOPERM this user has no permissions to access one of the keys used as arguments";
const NOPERM_CHANNELS: &str =
    "NOPERM this user has no permissions to access one of the channels used as arguments";
const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";

fn noperm_cmd(name: &str) -> Frame {
    err(&format!(
        "NOPERM this user has no permissions to run the '{name}' command"
    ))
}

/// A map reply (RESP2: a flat array) as (name, value) pairs.
fn pairs(f: Frame) -> Vec<(String, Frame)> {
    let Frame::Array(v) = f else {
        panic!("not an array: {f:?}")
    };
    v.chunks(2)
        .map(|c| match &c[0] {
            Frame::Bulk(b) => (String::from_utf8_lossy(b).into_owned(), c[1].clone()),
            other => panic!("not a name: {other:?}"),
        })
        .collect()
}

#[tokio::test]
async fn users_authenticate_with_their_passwords() {
    let s = start().await;
    let mut admin = s.raw().await;
    assert_eq!(
        admin
            .cmd(&["ACL", "SETUSER", "alice", "on", ">secret", "+@all", "~*"])
            .await,
        ok()
    );
    // The password is kept as its SHA-256, which GETUSER shows.
    let user = pairs(admin.cmd(&["ACL", "GETUSER", "alice"]).await);
    assert_eq!(
        user[1].1,
        bulks(&["2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b"])
    );
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["AUTH", "alice", "nope"]).await, err(WRONGPASS));
    assert_eq!(c.cmd(&["ACL", "WHOAMI"]).await, bulk("default"));
    assert_eq!(c.cmd(&["AUTH", "alice", "secret"]).await, ok());
    assert_eq!(c.cmd(&["ACL", "WHOAMI"]).await, bulk("alice"));
    let Frame::Bulk(line) = c.cmd(&["CLIENT", "INFO"]).await else {
        panic!("CLIENT INFO")
    };
    assert!(String::from_utf8_lossy(&line).contains(" user=alice "));
    // HELLO 3 AUTH switches protocol and user at once.
    let mut h = s.raw().await;
    let reply = h.cmd(&["HELLO", "3", "AUTH", "alice", "secret"]).await;
    assert!(matches!(reply, Frame::Map(_)), "{reply:?}");
    assert_eq!(h.cmd(&["ACL", "WHOAMI"]).await, bulk("alice"));
    assert_eq!(
        h.cmd(&["HELLO", "3", "AUTH", "alice", "bad"]).await,
        err(WRONGPASS)
    );
    // A disabled user cannot authenticate.
    admin.cmd(&["ACL", "SETUSER", "alice", "off"]).await;
    assert_eq!(c.cmd(&["AUTH", "alice", "secret"]).await, err(WRONGPASS));
    // The redis crate authenticates with a user in the URL.
    admin.cmd(&["ACL", "SETUSER", "alice", "on"]).await;
    let client = redis::Client::open(format!("redis://alice:secret@{}/", s.addr)).unwrap();
    let mut con = client.get_multiplexed_async_connection().await.unwrap();
    let who: String = redis::cmd("ACL")
        .arg("WHOAMI")
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(who, "alice");
}

#[tokio::test]
async fn requirepass_is_the_default_users_password() {
    let s = start_with(|c| c.requirepass = "pw".into()).await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["GET", "x"]).await,
        err("NOAUTH Authentication required.")
    );
    assert_eq!(c.cmd(&["AUTH", "bad"]).await, err(WRONGPASS));
    assert_eq!(c.cmd(&["AUTH", "default", "pw"]).await, ok());
    let list = c.cmd(&["ACL", "LIST"]).await;
    assert_eq!(
        list,
        bulks(&["user default on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ~* &* +@all"])
    );
    // CONFIG SET requirepass "" makes the default user nopass again: new clients need no AUTH.
    assert_eq!(c.cmd(&["CONFIG", "SET", "requirepass", ""]).await, ok());
    let mut d = s.raw().await;
    assert_eq!(d.cmd(&["GET", "x"]).await, Frame::Null);
    assert_eq!(
        d.cmd(&["AUTH", "x"]).await,
        err("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
    );
    assert_eq!(c.cmd(&["CONFIG", "SET", "requirepass", "new"]).await, ok());
    let mut e = s.raw().await;
    assert_eq!(e.cmd(&["AUTH", "pw"]).await, err(WRONGPASS));
    assert_eq!(e.cmd(&["AUTH", "new"]).await, ok());
}

#[tokio::test]
async fn read_and_write_key_patterns() {
    let s = start().await;
    let mut admin = s.raw().await;
    admin
        .cmd(&[
            "ACL", "SETUSER", "rw", "on", "nopass", "+@all", "%R~r*", "%W~w*", "~both*",
        ])
        .await;
    let mut c = s.raw().await;
    c.cmd(&["AUTH", "rw", "x"]).await;
    assert_eq!(c.cmd(&["GET", "r1"]).await, Frame::Null);
    assert_eq!(c.cmd(&["SET", "r1", "v"]).await, err(NOPERM_KEYS));
    assert_eq!(c.cmd(&["GET", "w1"]).await, err(NOPERM_KEYS));
    // DEL only deletes (a write without read access): a write pattern is enough.
    assert_eq!(c.cmd(&["DEL", "w1"]).await, int(0));
    // SET reads too in Redis 7.0's key spec (RW access update).
    assert_eq!(c.cmd(&["SET", "w1", "v"]).await, err(NOPERM_KEYS));
    assert_eq!(c.cmd(&["SET", "both1", "v"]).await, ok());
    assert_eq!(c.cmd(&["LPUSH", "w2", "a"]).await, int(1));
    // A command reading one key and writing another needs both permissions.
    assert_eq!(
        c.cmd(&["LMOVE", "r1", "w2", "LEFT", "LEFT"]).await,
        err(NOPERM_KEYS)
    );
    assert_eq!(c.cmd(&["COPY", "both1", "w3"]).await, int(1));
    assert_eq!(c.cmd(&["COPY", "w3", "w4"]).await, err(NOPERM_KEYS));
}

#[tokio::test]
async fn channels_are_checked_for_publish_and_subscribe() {
    let s = start().await;
    let mut admin = s.raw().await;
    admin
        .cmd(&[
            "ACL", "SETUSER", "p", "on", "nopass", "+@all", "~*", "&news.*",
        ])
        .await;
    let mut c = s.raw().await;
    c.cmd(&["AUTH", "p", "x"]).await;
    assert_eq!(c.cmd(&["PUBLISH", "news.1", "m"]).await, int(0));
    assert_eq!(
        c.cmd(&["PUBLISH", "other", "m"]).await,
        err(NOPERM_CHANNELS)
    );
    assert_eq!(
        c.cmd(&["SPUBLISH", "other", "m"]).await,
        err(NOPERM_CHANNELS)
    );
    assert_eq!(c.cmd(&["SUBSCRIBE", "other"]).await, err(NOPERM_CHANNELS));
    // A pattern subscription must name an allowed pattern literally.
    assert_eq!(
        c.cmd(&["PSUBSCRIBE", "news.x*"]).await,
        err(NOPERM_CHANNELS)
    );
    assert_eq!(
        c.cmd(&["PSUBSCRIBE", "news.*"]).await,
        arr(vec![bulk("psubscribe"), bulk("news.*"), int(1)])
    );
}

#[tokio::test]
async fn sql_needs_the_sql_category_and_query_cannot_write() {
    let s = start().await;
    let mut admin = s.raw().await;
    let created = admin.cmd(&["SQL.EXEC", "CREATE TABLE t(a INTEGER)"]).await;
    assert!(!matches!(created, Frame::Error(_)), "{created:?}");
    admin
        .cmd(&[
            "ACL", "SETUSER", "nosql", "on", "nopass", "+@all", "-@sql", "~*",
        ])
        .await;
    admin
        .cmd(&["ACL", "SETUSER", "q", "on", "nopass", "+sql.query", "~*"])
        .await;
    admin
        .cmd(&["ACL", "SETUSER", "reader", "on", "nopass", "+@read", "~*"])
        .await;
    let mut n = s.raw().await;
    n.cmd(&["AUTH", "nosql", "x"]).await;
    assert_eq!(
        n.cmd(&["SQL.QUERY", "SELECT 1"]).await,
        noperm_cmd("sql.query")
    );
    assert_eq!(
        n.cmd(&["REDISQL.EXEC", "db", "SELECT 1"]).await,
        noperm_cmd("redisql.exec")
    );
    assert_eq!(n.cmd(&["SET", "k", "v"]).await, ok());
    let mut q = s.raw().await;
    q.cmd(&["AUTH", "q", "x"]).await;
    assert_eq!(
        q.cmd(&["SQL.QUERY", "SELECT 41 + 1"]).await,
        arr(vec![arr(vec![int(42)])])
    );
    // SQL.QUERY itself refuses a writing statement; SQL.EXEC is not allowed at all.
    let Frame::Error(e) = q.cmd(&["SQL.QUERY", "INSERT INTO t VALUES (1)"]).await else {
        panic!("SQL.QUERY wrote")
    };
    assert!(e.starts_with(b"ERR"), "{}", String::from_utf8_lossy(&e));
    assert_eq!(
        q.cmd(&["SQL.EXEC", "INSERT INTO t VALUES (1)"]).await,
        noperm_cmd("sql.exec")
    );
    let mut r = s.raw().await;
    r.cmd(&["AUTH", "reader", "x"]).await;
    assert_eq!(
        r.cmd(&["SQL.EXEC", "INSERT INTO t VALUES (1)"]).await,
        noperm_cmd("sql.exec")
    );
    assert_eq!(
        r.cmd(&["REDISQL.EXEC", "db", "SELECT 1"]).await,
        noperm_cmd("redisql.exec")
    );
    assert_eq!(
        admin.cmd(&["SQL.QUERY", "SELECT count(*) FROM t"]).await,
        arr(vec![arr(vec![int(0)])])
    );
    let Frame::Array(cat) = admin.cmd(&["ACL", "CAT", "sql"]).await else {
        panic!("ACL CAT sql")
    };
    assert!(cat.contains(&bulk("sql.exec")) && cat.contains(&bulk("redisql.query")));
    let Frame::Array(cats) = admin.cmd(&["ACL", "CAT"]).await else {
        panic!("ACL CAT")
    };
    assert_eq!(cats.len(), 22);
    assert_eq!(cats.last(), Some(&bulk("sql")));
}

#[tokio::test]
async fn denials_are_logged() {
    let s = start().await;
    let mut admin = s.raw().await;
    admin
        .cmd(&["ACL", "SETUSER", "lim", "on", ">pw", "+get", "~k*"])
        .await;
    let mut c = s.raw().await;
    c.cmd(&["AUTH", "lim", "pw"]).await;
    c.cmd(&["GET", "x"]).await;
    c.cmd(&["GET", "x"]).await;
    c.cmd(&["SET", "k", "v"]).await;
    c.cmd(&["AUTH", "lim", "bad"]).await;
    let Frame::Array(entries) = admin.cmd(&["ACL", "LOG"]).await else {
        panic!("ACL LOG")
    };
    assert_eq!(entries.len(), 3);
    let names = |e: &Frame| -> Vec<String> { pairs(e.clone()).into_iter().map(|p| p.0).collect() };
    assert_eq!(
        names(&entries[0]),
        [
            "count",
            "reason",
            "context",
            "object",
            "username",
            "age-seconds",
            "client-info"
        ]
    );
    let newest = pairs(entries[0].clone());
    assert_eq!(newest[1].1, bulk("auth"));
    assert_eq!(newest[3].1, bulk("AUTH"));
    let cmd = pairs(entries[1].clone());
    assert_eq!(cmd[1].1, bulk("command"));
    assert_eq!(cmd[3].1, bulk("set"));
    let key = pairs(entries[2].clone());
    assert_eq!((key[0].1.clone(), key[1].1.clone()), (int(2), bulk("key")));
    assert_eq!(
        (key[2].1.clone(), key[3].1.clone()),
        (bulk("toplevel"), bulk("x"))
    );
    assert_eq!(key[4].1, bulk("lim"));
    let Frame::Bulk(info) = &key[6].1 else {
        panic!("client-info")
    };
    assert!(String::from_utf8_lossy(info).contains("user=lim"));
    let Frame::Array(one) = admin.cmd(&["ACL", "LOG", "1"]).await else {
        panic!("ACL LOG 1")
    };
    assert_eq!(one.len(), 1);
    assert_eq!(admin.cmd(&["ACL", "LOG", "RESET"]).await, ok());
    assert_eq!(admin.cmd(&["ACL", "LOG"]).await, arr(vec![]));
}

#[tokio::test]
async fn deleting_a_user_disconnects_its_clients() {
    let s = start().await;
    let mut admin = s.raw().await;
    admin
        .cmd(&["ACL", "SETUSER", "gone", "on", "nopass", "+@all", "~*"])
        .await;
    let mut c = s.raw().await;
    c.cmd(&["AUTH", "gone", "x"]).await;
    let mut other = s.raw().await;
    // As in Redis 7.0, disabling a user keeps its connections (only new AUTHs fail).
    admin.cmd(&["ACL", "SETUSER", "gone", "off"]).await;
    assert_eq!(c.cmd(&["PING"]).await, simple("PONG"));
    // Rules change under a connected client at once.
    admin.cmd(&["ACL", "SETUSER", "gone", "-ping"]).await;
    assert_eq!(c.cmd(&["PING"]).await, noperm_cmd("ping"));
    assert_eq!(
        admin.cmd(&["ACL", "DELUSER", "gone", "nosuch"]).await,
        int(1)
    );
    assert!(
        c.closed().await,
        "the deleted user's client is disconnected"
    );
    assert_eq!(other.cmd(&["PING"]).await, simple("PONG"));
    assert_eq!(
        admin.cmd(&["ACL", "DELUSER", "default"]).await,
        err("ERR The 'default' user cannot be removed")
    );
}

#[tokio::test]
async fn acl_file_save_load_and_start_up() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("users.acl");
    let path = file.to_str().unwrap().to_string();
    std::fs::write(
        &file,
        "user bob on >pw ~k* +get\n\nuser default on nopass ~* &* +@all\n",
    )
    .unwrap();
    let p2 = path.clone();
    let s = start_with(move |c| c.aclfile = p2).await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["ACL", "LIST"]).await,
        bulks(&[
            "user bob on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ~k* resetchannels -@all +get",
            "user default on nopass ~* &* +@all",
        ])
    );
    c.cmd(&["ACL", "SETUSER", "carol", "on", "nopass", "+@read"])
        .await;
    assert_eq!(c.cmd(&["ACL", "SAVE"]).await, ok());
    let saved = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        saved,
        "user bob on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ~k* resetchannels -@all +get\n\
         user carol on nopass resetchannels -@all +@read\n\
         user default on nopass ~* &* +@all\n"
    );
    // A client of a user the reload drops is disconnected; the others stay.
    let mut carol = s.raw().await;
    carol.cmd(&["AUTH", "carol", "x"]).await;
    std::fs::write(&file, "user bob on >pw2 +@all ~*\n").unwrap();
    assert_eq!(c.cmd(&["ACL", "LOAD"]).await, ok());
    assert!(carol.closed().await);
    assert_eq!(c.cmd(&["ACL", "USERS"]).await, bulks(&["bob", "default"]));
    // A bad file changes nothing and says why, as Redis words it.
    std::fs::write(&file, "user a on +nosuch\nfoo bar\nuser b on\nuser b on\n").unwrap();
    assert_eq!(
        c.cmd(&["ACL", "LOAD"]).await,
        err(&format!(
            "ERR {path}:1: Error in applying operation '+nosuch': Unknown command or category name in ACL. \
             {path}:2 should start with user keyword followed by the username. \
             WARNING: Duplicate user 'b' found on line 4. \
             WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
        ))
    );
    assert_eq!(c.cmd(&["ACL", "USERS"]).await, bulks(&["bob", "default"]));
    std::fs::remove_file(&file).unwrap();
    assert_eq!(
        c.cmd(&["ACL", "LOAD"]).await,
        err(&format!(
            "ERR Error loading ACLs, opening file '{path}': No such file or directory"
        ))
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "aclfile", "x"]).await,
        err("ERR CONFIG SET failed (possibly related to argument 'aclfile') - can't set immutable config")
    );
    // Without an aclfile.
    let plain = start().await;
    let mut p = plain.raw().await;
    let no_file = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.";
    assert_eq!(p.cmd(&["ACL", "SAVE"]).await, err(no_file));
    assert_eq!(p.cmd(&["ACL", "LOAD"]).await, err(no_file));
    // A bad file stops the start, naming it.
    std::fs::write(&file, "user a on +nosuch\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_relis-server"))
        .args([
            "--port",
            "0",
            "--dbfilename",
            ":memory:",
            "--aclfile",
            &path,
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "Aborting Redis startup because of ACL errors: {path}:1: Error in applying operation '+nosuch'"
        )),
        "{stderr}"
    );
}

#[tokio::test]
async fn user_directives_in_the_config() {
    let mut cfg = relis_server::config::Config::default();
    cfg.apply_file("user ann on >pw ~* +@all\n").unwrap();
    let users = cfg.users.clone();
    let s = start_with(move |c| c.users = users).await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["AUTH", "ann", "pw"]).await, ok());
    assert_eq!(c.cmd(&["ACL", "WHOAMI"]).await, bulk("ann"));
    assert_eq!(
        c.cmd(&["PUBLISH", "ch", "m"]).await,
        err(NOPERM_CHANNELS),
        "resetchannels is the default for a new user"
    );
}

#[tokio::test]
async fn selectors_grant_alternatives() {
    let s = start().await;
    let mut admin = s.raw().await;
    admin
        .cmd(&[
            "ACL",
            "SETUSER",
            "sel",
            "on",
            "nopass",
            "+get",
            "~a*",
            "(+set ~b*)",
        ])
        .await;
    let mut c = s.raw().await;
    c.cmd(&["AUTH", "sel", "x"]).await;
    assert_eq!(c.cmd(&["GET", "a1"]).await, Frame::Null);
    assert_eq!(c.cmd(&["SET", "b1", "v"]).await, ok());
    // Neither selector allows SET on a*: the root selector's denial (the command) is reported
    // after the other's (a key), as Redis ranks them.
    assert_eq!(c.cmd(&["SET", "a1", "v"]).await, err(NOPERM_KEYS));
    assert_eq!(c.cmd(&["GET", "b1"]).await, err(NOPERM_KEYS));
    assert_eq!(c.cmd(&["INCR", "a1"]).await, noperm_cmd("incr"));
    admin
        .cmd(&["ACL", "SETUSER", "sel", "clearselectors"])
        .await;
    assert_eq!(c.cmd(&["SET", "b1", "v"]).await, noperm_cmd("set"));
}

/// Rules that change between MULTI and EXEC: each queued command is checked again when EXEC
/// runs it, and one no longer allowed replies redis-server 7.0.15's NOPERM (the others run).
#[tokio::test]
async fn exec_checks_queued_commands_again() {
    let s = start().await;
    let mut admin = s.raw().await;
    let mut u = s.raw().await;
    assert_eq!(
        admin
            .cmd(&["ACL", "SETUSER", "u1", "on", ">p", "+@all", "~*", "&*"])
            .await,
        ok()
    );
    assert_eq!(u.cmd(&["AUTH", "u1", "p"]).await, ok());
    let changed = "NOPERM ACLs rules changed between the moment the transaction was accumulated \
                   and the EXEC call. This command is no longer allowed for the following reason: ";
    assert_eq!(u.cmd(&["MULTI"]).await, ok());
    for line in [
        &["SET", "k", "v"][..],
        &["GET", "k"],
        &["PUBLISH", "ch", "x"],
    ] {
        assert_eq!(u.cmd(line).await, simple("QUEUED"));
    }
    assert_eq!(
        admin
            .cmd(&["ACL", "SETUSER", "u1", "-set", "resetchannels"])
            .await,
        ok()
    );
    assert_eq!(
        u.cmd(&["EXEC"]).await,
        arr(vec![
            err(&format!(
                "{changed}no permission to execute the command or subcommand"
            )),
            Frame::Null,
            err(&format!(
                "{changed}no permission to access one of the channels used as arguments"
            )),
        ])
    );
    assert_eq!(
        admin
            .cmd(&["ACL", "SETUSER", "u1", "+set", "resetkeys", "~k*"])
            .await,
        ok()
    );
    assert_eq!(u.cmd(&["MULTI"]).await, ok());
    assert_eq!(u.cmd(&["SET", "k", "v"]).await, simple("QUEUED"));
    assert_eq!(u.cmd(&["GET", "k"]).await, simple("QUEUED"));
    assert_eq!(
        admin
            .cmd(&["ACL", "SETUSER", "u1", "resetkeys", "~y*"])
            .await,
        ok()
    );
    let keys = err(&format!(
        "{changed}no permission to touch the specified keys"
    ));
    assert_eq!(u.cmd(&["EXEC"]).await, arr(vec![keys.clone(), keys]));
    let log = pairs(match admin.cmd(&["ACL", "LOG", "1"]).await {
        Frame::Array(mut v) => v.remove(0),
        other => panic!("{other:?}"),
    });
    assert_eq!(log[1], ("reason".to_string(), bulk("key")));
    assert_eq!(log[2], ("context".to_string(), bulk("multi")));
    assert_eq!(log[3], ("object".to_string(), bulk("k")));
    assert_eq!(admin.cmd(&["EXISTS", "k"]).await, int(0));
}

/// CLIENT KILL USER ends the clients authenticated as that user (and names a missing user).
#[tokio::test]
async fn client_kill_user() {
    let s = start().await;
    let mut admin = s.raw().await;
    assert_eq!(
        admin
            .cmd(&["ACL", "SETUSER", "u2", "on", ">p", "+@all", "~*"])
            .await,
        ok()
    );
    let mut a = s.raw().await;
    let mut b = s.raw().await;
    assert_eq!(a.cmd(&["AUTH", "u2", "p"]).await, ok());
    assert_eq!(b.cmd(&["AUTH", "u2", "p"]).await, ok());
    assert_eq!(
        admin.cmd(&["CLIENT", "KILL", "USER", "nosuch"]).await,
        err("ERR No such user 'nosuch'")
    );
    assert_eq!(admin.cmd(&["CLIENT", "KILL", "USER", "u2"]).await, int(2));
    a.expect_closed().await;
    b.expect_closed().await;
    assert_eq!(admin.cmd(&["PING"]).await, simple("PONG"));
}

/// `acllog-max-len` bounds ACL LOG (CONFIG SET at run time, Redis's default 128).
#[tokio::test]
async fn acllog_max_len_bounds_the_log() {
    let s = start().await;
    let mut admin = s.raw().await;
    assert_eq!(
        admin.cmd(&["CONFIG", "GET", "acllog-max-len"]).await,
        bulks(&["acllog-max-len", "128"])
    );
    assert_eq!(
        admin.cmd(&["CONFIG", "SET", "acllog-max-len", "2"]).await,
        ok()
    );
    assert_eq!(
        admin
            .cmd(&["ACL", "SETUSER", "u3", "on", ">p", "+get", "~a"])
            .await,
        ok()
    );
    let mut u = s.raw().await;
    assert_eq!(u.cmd(&["AUTH", "u3", "p"]).await, ok());
    for key in ["b", "c", "d"] {
        assert_eq!(u.cmd(&["GET", key]).await, err(NOPERM_KEYS));
    }
    let Frame::Array(log) = admin.cmd(&["ACL", "LOG"]).await else {
        panic!("ACL LOG is an array")
    };
    let objects: Vec<Frame> = log.into_iter().map(|e| pairs(e)[3].1.clone()).collect();
    assert_eq!(objects, vec![bulk("d"), bulk("c")]);
}

/// ACL SETUSER that takes a channel or pattern away from a subscribed client disconnects it
/// (one still allowed everything it listens to stays), as redis-server 7.0.15 does.
#[tokio::test]
async fn losing_a_channel_disconnects_its_subscriber() {
    let s = start().await;
    let mut admin = s.raw().await;
    assert_eq!(
        admin
            .cmd(&["ACL", "SETUSER", "u4", "on", ">p", "+@all", "~*", "&*"])
            .await,
        ok()
    );
    let mut a = s.raw().await;
    let mut b = s.raw().await;
    assert_eq!(a.cmd(&["AUTH", "u4", "p"]).await, ok());
    assert_eq!(b.cmd(&["AUTH", "u4", "p"]).await, ok());
    a.cmd(&["SUBSCRIBE", "news.1"]).await;
    b.cmd(&["PSUBSCRIBE", "news.*"]).await;
    assert_eq!(
        admin
            .cmd(&["ACL", "SETUSER", "u4", "resetchannels", "&news.1"])
            .await,
        ok()
    );
    b.expect_closed().await;
    assert_eq!(admin.cmd(&["PUBLISH", "news.1", "hi"]).await, int(1));
    assert_eq!(a.read().await, Some(bulks(&["message", "news.1", "hi"])));
}

/// Rules naming Redis 7.0 commands: CLUSTER (which Relis answers as a standalone Redis) and the
/// families that came last (streams, bitmaps, HyperLogLog, geo, DUMP/RESTORE) are accepted and
/// shown back as redis-server 7.0.15 shows them (its ACL LIST, pinned).
#[tokio::test]
async fn rules_name_redis_commands_as_redis_shows_them() {
    let s = start().await;
    let mut admin = s.raw().await;
    let cases: &[(&[&str], &str)] = &[
        (&["+@all", "-cluster"], "+@all -cluster"),
        (&["+cluster"], "-@all +cluster"),
        (&["+@all", "-xadd"], "+@all -xadd"),
        (&["+xadd"], "-@all +xadd"),
        (&["+@all", "-@stream"], "+@all -@stream"),
        (&["+@read", "-bitcount"], "-@all +@read -bitcount"),
        (&["+xgroup|create"], "-@all +xgroup|create"),
        (&["+@stream", "-xinfo|help"], "-@all +@stream -xinfo|help"),
        (
            &["+@all", "-@geo", "-@hyperloglog"],
            "+@all -@geo -@hyperloglog",
        ),
        (&["+@write", "-setbit"], "-@all +@write -setbit"),
        (&["+@bitmap"], "-@all +@bitmap"),
        (&["+getbit|x"], "-@all +getbit|x"),
        (&["+@all", "-dump"], "+@all -dump"),
        (&["+@all", "-restore-asking"], "+@all -restore-asking"),
        // In the command table's order (redis-server 7.0.15 shows its hash order, here the
        // other way round: README, "Access control").
        (&["+@all", "-migrate", "-pfadd"], "+@all -migrate -pfadd"),
    ];
    for (rules, shown) in cases {
        let mut line = vec!["ACL", "SETUSER", "u", "reset", "on", ">p"];
        line.extend_from_slice(rules);
        assert_eq!(admin.cmd(&line).await, ok(), "{rules:?}");
        let Frame::Array(users) = admin.cmd(&["ACL", "LIST"]).await else {
            panic!("ACL LIST")
        };
        let want = format!(
            "user u on sanitize-payload \
             #148de9c5a7a44d19e56cd9ae1a554bf67847afb0c58f6e12fa29ac7ddfca9940 resetchannels {shown}"
        );
        assert!(users.contains(&bulk(&want)), "{rules:?}: {users:?}");
    }
    // Still refused: names Redis 7.0 does not have.
    assert_eq!(
        admin.cmd(&["ACL", "SETUSER", "u", "+nosuch"]).await,
        err("ERR Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL")
    );
    // CLUSTER's subcommands are checked like any other.
    let cmd = [
        "ACL", "SETUSER", "u", "reset", "on", ">p", "+@all", "-cluster", "~*",
    ];
    assert_eq!(admin.cmd(&cmd).await, ok());
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["AUTH", "u", "p"]).await, ok());
    assert_eq!(
        c.cmd(&["CLUSTER", "INFO"]).await,
        noperm_cmd("cluster|info")
    );
    assert_eq!(
        c.cmd(&["READONLY"]).await,
        err("ERR This instance has cluster support disabled")
    );
}

/// SINTERCARD's keys (after numkeys) are checked against the user's key patterns, as Redis
/// checks them (its key spec is a keynum one); COMMAND GETKEYS finds them too.
#[tokio::test]
async fn sintercard_keys_are_checked() {
    let s = start().await;
    let mut admin = s.raw().await;
    let cmd = ["ACL", "SETUSER", "u", "on", ">p", "+@all", "~a*"];
    assert_eq!(admin.cmd(&cmd).await, ok());
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["AUTH", "u", "p"]).await, ok());
    assert_eq!(c.cmd(&["SINTERCARD", "2", "a1", "a2"]).await, int(0));
    assert_eq!(
        c.cmd(&["SINTERCARD", "2", "a1", "b"]).await,
        err(NOPERM_KEYS)
    );
    // LIMIT's value is not a key.
    assert_eq!(
        c.cmd(&["SINTERCARD", "1", "a1", "LIMIT", "b"]).await,
        err("ERR LIMIT can't be negative")
    );
    assert_eq!(
        admin
            .cmd(&[
                "COMMAND",
                "GETKEYS",
                "SINTERCARD",
                "2",
                "x",
                "y",
                "LIMIT",
                "1"
            ])
            .await,
        bulks(&["x", "y"])
    );
}

/// SORT's STORE destination needs write permission (its key spec is OW update), its source
/// read permission, as in Redis; COMMAND GETKEYSANDFLAGS says so.
#[tokio::test]
async fn sort_store_needs_write_permission() {
    let s = start().await;
    let mut admin = s.raw().await;
    assert_eq!(admin.cmd(&["RPUSH", "src", "3", "1", "2"]).await, int(3));
    for (user, rule) in [("ro", "%R~*"), ("wo", "%W~*")] {
        let cmd = ["ACL", "SETUSER", user, "on", ">p", "+@all", rule];
        assert_eq!(admin.cmd(&cmd).await, ok());
    }
    let mut ro = s.raw().await;
    assert_eq!(ro.cmd(&["AUTH", "ro", "p"]).await, ok());
    assert_eq!(ro.cmd(&["SORT", "src"]).await, bulks(&["1", "2", "3"]));
    assert_eq!(
        ro.cmd(&["SORT", "src", "STORE", "dst"]).await,
        err(NOPERM_KEYS)
    );
    let mut wo = s.raw().await;
    assert_eq!(wo.cmd(&["AUTH", "wo", "p"]).await, ok());
    assert_eq!(
        wo.cmd(&["SORT", "src", "STORE", "dst"]).await,
        err(NOPERM_KEYS)
    );
    let flags = |f: &[&str]| Frame::Array(f.iter().map(|x| simple(x)).collect());
    assert_eq!(
        admin
            .cmd(&[
                "COMMAND",
                "GETKEYSANDFLAGS",
                "SORT",
                "src",
                "BY",
                "w_*",
                "GET",
                "store",
                "STORE",
                "dst"
            ])
            .await,
        arr(vec![
            arr(vec![bulk("src"), flags(&["RO", "access"])]),
            arr(vec![bulk("dst"), flags(&["OW", "update"])]),
        ])
    );
}

/// A write command without a key spec of its own (INCR, INCRBYFLOAT, GETEX, MOVE) is
/// `RW access update` in COMMAND INFO, so, as in Redis 7.0, its key needs read permission as
/// well as write: a write-only (or read-only) pattern is not enough.
#[tokio::test]
async fn derived_write_key_spec_needs_read_and_write() {
    let s = start().await;
    let mut admin = s.raw().await;
    for (user, rule) in [("ro", "%R~*"), ("wo", "%W~*"), ("rw", "%RW~*")] {
        let cmd = ["ACL", "SETUSER", user, "on", ">p", "+@all", rule];
        assert_eq!(admin.cmd(&cmd).await, ok());
    }
    let cmds: [&[&str]; 4] = [
        &["INCR", "k"],
        &["INCRBYFLOAT", "k", "1"],
        &["GETEX", "k"],
        &["MOVE", "k", "1"],
    ];
    for user in ["ro", "wo"] {
        let mut c = s.raw().await;
        assert_eq!(c.cmd(&["AUTH", user, "p"]).await, ok());
        for cmd in cmds {
            assert_eq!(c.cmd(cmd).await, err(NOPERM_KEYS), "{user}: {cmd:?}");
        }
    }
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["AUTH", "rw", "p"]).await, ok());
    assert_eq!(c.cmd(&["INCR", "k"]).await, int(1));
    assert_eq!(c.cmd(&["INCRBYFLOAT", "k", "1"]).await, bulk("2"));
    assert_eq!(c.cmd(&["GETEX", "k"]).await, bulk("2"));
    assert_eq!(c.cmd(&["MOVE", "k", "1"]).await, int(1));
}
