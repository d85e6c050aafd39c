//! DEBUG: refused unless `enable-debug-command` allows it, as in Redis 7.0; when allowed, the
//! subcommands that make sense for Relis answer as redis-server 7.0.15 does (DIGEST included:
//! the same data gives Redis's digest).

mod common;
use common::*;
use resp::Frame;
use std::time::{Duration, Instant};

const REFUSED: &str = "-ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.\r\n";

async fn reply(addr: std::net::SocketAddr, lines: &[&[&str]]) -> Vec<String> {
    let mut c = Raw::connect(addr).await;
    let mut out = Vec::new();
    for line in lines {
        let args: Vec<&[u8]> = line.iter().map(|a| a.as_bytes()).collect();
        c.send(&encode_command(&args)).await;
        out.push(show(&c.read_raw().await.unwrap()));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debug_is_refused_by_default_even_before_auth() {
    let s = start_with(|c| c.requirepass = "secret".into()).await;
    let mut c = s.raw().await;
    c.send(&encode_command(&[b"DEBUG", b"SLEEP", b"0"])).await;
    assert_eq!(show(&c.read_raw().await.unwrap()), show(REFUSED.as_bytes()));
    // Arity comes first.
    c.send(&encode_command(&[b"DEBUG"])).await;
    assert_eq!(
        show(&c.read_raw().await.unwrap()),
        show(b"-ERR wrong number of arguments for 'debug' command\r\n")
    );
    let s = start_with(|c| c.set("enable-debug-command", "local").unwrap()).await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["DEBUG", "SLEEP", "0"]).await,
        ok(),
        "loopback is local"
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "enable-debug-command", "yes"]).await,
        err("ERR CONFIG SET failed (possibly related to argument 'enable-debug-command') - can't set immutable config")
    );
}

/// Data of every type, with the shapes Redis encodes differently (intsets, listpacks,
/// skiplists, integers), and scores whose `%.17g` is long.
const DATA: &[&[&str]] = &[
    &["SET", "s", "hello"],
    &["SET", "n", "12345"],
    &["SET", "e", ""],
    &["SET", "ttl", "v", "EX", "1000"],
    &["RPUSH", "l", "a", "b", "c", "1"],
    &["SADD", "iset", "1", "2", "3"],
    &["SADD", "set", "x", "y", "z"],
    &["ZADD", "z", "0.1", "a", "1", "b", "-2.5", "c", "1e300", "d"],
    &["HSET", "h", "f1", "v1", "f2", "2"],
    &["SELECT", "2"],
    &["SET", "s", "hello"],
    &["SELECT", "0"],
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debug_answers_as_redis() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(redis) = spawn_redis_with(tmp.path(), &["--enable-debug-command", "yes"]) else {
        eprintln!("skipped: redis-server is not installed");
        return;
    };
    let s = start_with(|c| c.set("enable-debug-command", "yes").unwrap()).await;
    let mut big = vec!["ZADD", "bigz"];
    let pairs: Vec<String> = (0..300).map(|i| format!("{}.3", i)).collect();
    let members: Vec<String> = (0..300).map(|i| format!("m{i}")).collect();
    for (p, m) in pairs.iter().zip(&members) {
        big.push(p);
        big.push(m);
    }
    let mut lines: Vec<&[&str]> = vec![&["DEBUG", "DIGEST"]];
    lines.extend_from_slice(DATA);
    lines.push(&big);
    let after: &[&[&str]] = &[
        &["DEBUG", "DIGEST"],
        &[
            "DEBUG",
            "DIGEST-VALUE",
            "s",
            "n",
            "l",
            "iset",
            "set",
            "z",
            "bigz",
            "h",
            "ttl",
            "nokey",
        ],
        &["DEBUG", "DIGEST-VALUE"],
        &["DEBUG", "POPULATE", "5"],
        &["DEBUG", "POPULATE", "3", "p", "20"],
        &["DEBUG", "POPULATE", "2", "s"],
        &["DEBUG", "DIGEST"],
        &["DEBUG", "POPULATE", "-1"],
        &["DEBUG", "POPULATE", "2", "q", "x"],
        &["DEBUG", "POPULATE"],
        &["DEBUG", "OBJECT", "nokey"],
        &["DEBUG", "OBJECT"],
        &["DEBUG", "ERROR", "foo bar"],
        &["DEBUG", "ERROR", "-FOO bar"],
        &["DEBUG", "LOG", "hello from the test"],
        &["DEBUG", "SLEEP", "0"],
        &["DEBUG", "SLEEP", "x"],
        &["DEBUG", "SLEEP"],
        &["DEBUG", "SET-ACTIVE-EXPIRE", "1"],
        &["DEBUG", "SET-ACTIVE-EXPIRE"],
        &["DEBUG", "CHANGE-REPL-ID"],
        &["DEBUG", "JMAP"],
        &["DEBUG", "nosuch", "x"],
        &["DEBUG", "PROTOCOL", "string"],
        &["DEBUG", "PROTOCOL", "integer"],
        &["DEBUG", "PROTOCOL", "double"],
        &["DEBUG", "PROTOCOL", "bignum"],
        &["DEBUG", "PROTOCOL", "null"],
        &["DEBUG", "PROTOCOL", "array"],
        &["DEBUG", "PROTOCOL", "set"],
        &["DEBUG", "PROTOCOL", "map"],
        &["DEBUG", "PROTOCOL", "attrib"],
        &["DEBUG", "PROTOCOL", "push"],
        &["DEBUG", "PROTOCOL", "verbatim"],
        &["DEBUG", "PROTOCOL", "true"],
        &["DEBUG", "PROTOCOL", "false"],
        &["DEBUG", "PROTOCOL", "nosuch"],
        &["HELLO", "3"],
        &["DEBUG", "PROTOCOL", "attrib"],
        &["DEBUG", "PROTOCOL", "push"],
        &["DEBUG", "PROTOCOL", "double"],
        &["DEBUG", "PROTOCOL", "bignum"],
        &["DEBUG", "PROTOCOL", "null"],
        &["DEBUG", "PROTOCOL", "set"],
        &["DEBUG", "PROTOCOL", "map"],
        &["DEBUG", "PROTOCOL", "verbatim"],
        &["DEBUG", "PROTOCOL", "true"],
        &["DEBUG", "PROTOCOL", "false"],
    ];
    lines.extend_from_slice(after);
    let ours = reply(s.addr, &lines).await;
    let theirs = reply(redis.addr(), &lines).await;
    for ((line, o), t) in lines.iter().zip(&ours).zip(&theirs) {
        if line[0] == "HELLO" {
            continue;
        }
        assert_eq!(o, t, "{line:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debug_sleep_holds_writes_and_set_active_expire_stops_the_sweep() {
    let s = start_with(|c| c.set("enable-debug-command", "yes").unwrap()).await;
    let mut a = s.raw().await;
    let mut b = s.raw().await;
    assert_eq!(b.cmd(&["SET", "k", "v"]).await, ok());
    let addr = s.addr;
    let sleeper = tokio::spawn(async move {
        let mut c = Raw::connect(addr).await;
        c.cmd(&["DEBUG", "SLEEP", "0.5"]).await
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let t = Instant::now();
    assert_eq!(b.cmd(&["GET", "k"]).await, bulk("v"));
    assert!(t.elapsed() < Duration::from_millis(300), "reads go on");
    assert_eq!(b.cmd(&["SET", "k", "w"]).await, ok());
    assert!(
        t.elapsed() >= Duration::from_millis(250),
        "writes wait: {:?}",
        t.elapsed()
    );
    assert_eq!(sleeper.await.unwrap(), ok());

    let expired = |info: Frame| -> i64 {
        let Frame::Bulk(text) = info else { panic!() };
        String::from_utf8_lossy(&text)
            .lines()
            .find_map(|l| l.strip_prefix("expired_keys:"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    assert_eq!(a.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]).await, ok());
    assert_eq!(a.cmd(&["SET", "gone", "v", "PX", "20"]).await, ok());
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(expired(a.cmd(&["INFO", "stats"]).await), 0, "no sweep");
    assert_eq!(
        a.cmd(&["EXISTS", "gone"]).await,
        int(0),
        "still gone to reads"
    );
    assert_eq!(a.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "1"]).await, ok());
    let t = Instant::now();
    while expired(a.cmd(&["INFO", "stats"]).await) == 0 {
        assert!(t.elapsed() < Duration::from_secs(5), "the sweep is back");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // OBJECT: Redis's line, with Relis's values.
    let Frame::Simple(line) = a.cmd(&["DEBUG", "OBJECT", "k"]).await else {
        panic!()
    };
    let line = String::from_utf8_lossy(&line).into_owned();
    assert!(line.starts_with("Value at:0x"), "{line}");
    assert!(
        line.contains(" refcount:1 encoding:embstr serializedlength:"),
        "{line}"
    );
    assert!(line.ends_with(" lru_seconds_idle:0"), "{line}");
}

/// RELOAD: after a full checkpoint, the file read alone holds exactly the live keyspace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debug_reload_checks_the_file_holds_the_live_keyspace() {
    let s = start_with(|c| c.set("enable-debug-command", "yes").unwrap()).await;
    let mut c = s.raw().await;
    for line in DATA {
        c.cmd(line).await;
    }
    for i in 0..2000 {
        c.cmd(&["ZADD", "big", &i.to_string(), &format!("m{i}")])
            .await;
    }
    let digest = c.cmd(&["DEBUG", "DIGEST"]).await;
    assert_eq!(c.cmd(&["DEBUG", "RELOAD"]).await, ok());
    assert_eq!(c.cmd(&["DEBUG", "RELOAD", "NOSAVE", "MERGE"]).await, ok());
    assert_eq!(
        c.cmd(&["DEBUG", "RELOAD", "foo"]).await,
        err("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")
    );
    assert_eq!(c.cmd(&["DEBUG", "DIGEST"]).await, digest);
    // Writes go on after it.
    assert_eq!(c.cmd(&["SET", "after", "1"]).await, ok());
    assert_eq!(c.cmd(&["DEBUG", "RELOAD"]).await, ok());

    let s = start_with(|c| {
        c.set("enable-debug-command", "yes").unwrap();
        c.dbfilename = ":memory:".into();
    })
    .await;
    let mut c = s.raw().await;
    let Frame::Error(e) = c.cmd(&["DEBUG", "RELOAD"]).await else {
        panic!("an in-memory server has no file to reload")
    };
    assert!(
        e.starts_with(b"ERR Error trying to load the RDB dump: "),
        "{e:?}"
    );
}
