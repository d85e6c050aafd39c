//! Configuration as Redis 7.0 has it: every setting redis-server 7.0.15 knows, under its old
//! names too, checked as Redis checks it, with Redis's error texts. The differential tests ask
//! a redis-server started by the test (skipped when none is installed, except under CI).

mod common;
use common::*;
use resp::Frame;
use std::collections::{BTreeMap, BTreeSet};

/// Relis's own settings: CONFIG GET * lists them beside Redis's.
const RELIS_OWN: &[&str] = &[
    "durability",
    "backend",
    "readers",
    "max-batch",
    "page-size",
    "writer-cache-size",
    "reader-cache-size",
    "mmap-size",
    "sql-time-limit",
    "sql-max-result-rows",
    "sql-max-result-bytes",
    "sql-max-memory",
    "sql-max-databases",
    "lua-memory-limit",
];

/// Settings whose value differs from redis-server's on purpose (README, Configuration): where
/// the server listens and keeps its data, and what the test started redis-server with.
const DIFFERENT_VALUE: &[&str] = &["port", "bind", "dir", "dbfilename"];

/// Redis's hidden settings: CONFIG GET * leaves them out, their exact name finds them.
const HIDDEN: &[&str] = &[
    "key-load-delay",
    "loading-process-events-interval-bytes",
    "lua-enable-deprecated-api",
    "rdb-key-save-delay",
    "use-exit-on-panic",
    "watchdog-period",
];

fn pairs(f: Frame) -> BTreeMap<String, String> {
    let items = match f {
        Frame::Array(v) => v,
        Frame::Map(m) => m.into_iter().flat_map(|(k, v)| [k, v]).collect(),
        other => panic!("not a CONFIG GET reply: {other:?}"),
    };
    let text = |f: &Frame| match f {
        Frame::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
        other => panic!("not a bulk string: {other:?}"),
    };
    items
        .chunks(2)
        .map(|p| (text(&p[0]), text(&p[1])))
        .collect()
}

/// A redis-server to compare with, or `None` (skip) when none is installed outside CI.
fn reference(dir: &std::path::Path) -> Option<Child> {
    if redis_server().is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "redis-server is needed under CI"
        );
        eprintln!("redis-server is not installed: skipping");
        return None;
    }
    Some(spawn_redis(dir).expect("redis-server"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn old_names_are_the_same_setting() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "zset-max-ziplist-entries", "100"])
            .await,
        ok()
    );
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "zset-max-listpack-entries"]).await,
        bulks(&["zset-max-listpack-entries", "100"])
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "replica-read-only", "no"]).await,
        ok()
    );
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "SLAVE-READ-ONLY"]).await,
        bulks(&["SLAVE-READ-ONLY", "no"])
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "lua-time-limit", "250"]).await,
        ok()
    );
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "busy-reply-threshold"]).await,
        bulks(&["busy-reply-threshold", "250"])
    );
    // A value error names the setting as registered: the old name when that was given.
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "HASH-MAX-ZIPLIST-VALUE", "x"]).await,
        err("ERR CONFIG SET failed (possibly related to argument 'hash-max-ziplist-value') - argument must be a memory value")
    );
    // A name and its alias in one CONFIG SET are two settings to Redis: the last one wins.
    assert_eq!(
        c.cmd(&[
            "CONFIG",
            "SET",
            "zset-max-listpack-entries",
            "5",
            "zset-max-ziplist-entries",
            "7"
        ])
        .await,
        ok()
    );
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "zset-max-listpack-entries"]).await,
        bulks(&["zset-max-listpack-entries", "7"])
    );
    // Patterns match the old names too; hidden settings only by their exact name.
    let got = pairs(c.cmd(&["CONFIG", "GET", "*ziplist*"]).await);
    assert_eq!(
        got.keys().map(String::as_str).collect::<Vec<_>>(),
        [
            "hash-max-ziplist-entries",
            "hash-max-ziplist-value",
            "list-max-ziplist-size",
            "zset-max-ziplist-entries",
            "zset-max-ziplist-value"
        ]
    );
    assert_eq!(c.cmd(&["CONFIG", "GET", "watchdog*"]).await, arr(vec![]));
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "watchdog-period"]).await,
        bulks(&["watchdog-period", "0"])
    );
    // An exact name given twice, in any case, is listed once, as first spelled.
    let port = pairs(c.cmd(&["CONFIG", "GET", "port"]).await)["port"].clone();
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "PORT", "port", "po*"]).await,
        bulks(&["PORT", &port])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_debug_module_and_protected_switches_exist() {
    let s = start().await;
    let mut c = s.raw().await;
    for name in [
        "enable-debug-command",
        "enable-module-command",
        "enable-protected-configs",
    ] {
        assert_eq!(c.cmd(&["CONFIG", "GET", name]).await, bulks(&[name, "no"]));
        assert_eq!(
            c.cmd(&["CONFIG", "SET", name, "yes"]).await,
            err(&format!(
                "ERR CONFIG SET failed (possibly related to argument '{name}') - can't set immutable config"
            ))
        );
    }
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "dir", "/tmp"]).await,
        err("ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config")
    );
    let s = start_with(|c| c.set("enable-debug-command", "local").unwrap()).await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "enable-debug-command"]).await,
        bulks(&["enable-debug-command", "local"])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_set_checks_everything_before_it_changes_anything() {
    let s = start().await;
    let mut c = s.raw().await;
    // The first problem found wins: an immutable setting before a later duplicate or unknown.
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "daemonize", "yes", "maxclients", "5", "maxclients", "6"])
            .await,
        err("ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable config")
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "daemonize", "yes", "foo", "1"]).await,
        err("ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable config")
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "foo", "1", "daemonize", "yes"])
            .await,
        err("ERR Unknown option or number of arguments for CONFIG SET - 'foo'")
    );
    // A failure part way leaves every earlier value as it was.
    assert_eq!(
        c.cmd(&[
            "CONFIG",
            "SET",
            "hz",
            "50",
            "slowlog-max-len",
            "9",
            "lfu-log-factor",
            "-1"
        ])
        .await,
        err("ERR CONFIG SET failed (possibly related to argument 'lfu-log-factor') - argument must be between 0 and 2147483647 inclusive")
    );
    assert_eq!(
        pairs(c.cmd(&["CONFIG", "GET", "hz", "slowlog-max-len"]).await),
        BTreeMap::from([
            ("hz".to_string(), "10".to_string()),
            ("slowlog-max-len".to_string(), "128".to_string())
        ])
    );
    // Setting the port the server listens on changes nothing; another port is refused with
    // Redis's text for a port it cannot listen on (Relis binds at start-up only).
    let port = pairs(c.cmd(&["CONFIG", "GET", "port"]).await)["port"].clone();
    assert_eq!(c.cmd(&["CONFIG", "SET", "port", &port]).await, ok());
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "port", "1"]).await,
        err("ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check server logs.")
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "bind", "127.0.0.1 ::1"]).await,
        err("ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to specified addresses.")
    );
    assert_eq!(c.cmd(&["CONFIG", "SET", "bind", "127.0.0.1"]).await, ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_get_star_lists_what_redis_lists() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(redis) = reference(tmp.path()) else {
        return;
    };
    let mut want = Raw::connect(redis.addr()).await;
    let s = start().await;
    let mut got = s.raw().await;
    let w = pairs(want.cmd(&["CONFIG", "GET", "*"]).await);
    let g = pairs(got.cmd(&["CONFIG", "GET", "*"]).await);
    let wn: BTreeSet<&str> = w.keys().map(String::as_str).collect();
    let gn: BTreeSet<&str> = g.keys().map(String::as_str).collect();
    let missing: Vec<_> = wn.difference(&gn).collect();
    assert!(missing.is_empty(), "Relis lacks {missing:?}");
    let extra: BTreeSet<&str> = gn.difference(&wn).copied().collect();
    assert_eq!(extra, RELIS_OWN.iter().copied().collect());
    // The same defaults, but for where the server listens and keeps its data.
    let differ: Vec<String> = w
        .iter()
        .filter(|(n, v)| !DIFFERENT_VALUE.contains(&n.as_str()) && g.get(*n) != Some(*v))
        .map(|(n, v)| format!("{n}: redis {v:?}, relis {:?}", g.get(n)))
        .collect();
    assert!(differ.is_empty(), "{differ:#?}");
    // Hidden settings: not in the list, found by name, with Redis's values.
    for name in HIDDEN {
        assert!(!gn.contains(name), "{name}");
        assert_eq!(
            got.cmd(&["CONFIG", "GET", name]).await,
            want.cmd(&["CONFIG", "GET", name]).await,
            "{name}"
        );
    }
}

/// Every setting redis-server lists, and the hidden ones, set to values of every kind (bad
/// words, integers at and past the ends of every range, memory and percent values): the
/// replies, and the values read back, must be Redis's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_set_replies_as_redis_does() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(redis) = reference(tmp.path()) else {
        return;
    };
    let mut want = Raw::connect(redis.addr()).await;
    let s = start().await;
    let mut got = s.raw().await;
    let mut names: Vec<String> = pairs(want.cmd(&["CONFIG", "GET", "*"]).await)
        .into_keys()
        .collect();
    names.extend(HIDDEN.iter().map(|n| n.to_string()));
    const VALUES: &[&str] = &[
        "zz!bad",
        "",
        "-1",
        "0",
        "1",
        "010",
        "+1",
        " 1",
        "65536",
        "2147483648",
        "4294967296",
        "9223372036854775807",
        "-9223372036854775808",
        "18446744073709551615",
        "18446744073709551616",
        "1.5",
        "2kb",
        "3MB",
        "1g",
        "20000000000gb",
        "50%",
        "101%",
        "yes",
        "NO",
        "local",
        "Allkeys-LRU",
        "swapdb",
        "nosave now",
        "save nosave",
        "1 2 3",
        "-2001 0 0",
        "10 20",
        "100 5",
        "50 99.9 100",
        "100.5",
        "1e1",
        "KEA",
        "normal 1mb 2mb 3",
        "pubsub 1 2",
        "master 1 1 1",
        "{title} {port}",
        "{nosuch}",
        "a.b-c",
        "a_b",
    ];
    // Where the servers listen, their files and passwords stay out: they differ or would lock
    // the test out.
    const SKIP: &[&str] = &[
        "port",
        "tls-port",
        "bind",
        "dir",
        "dbfilename",
        "requirepass",
        "maxclients",
        "maxmemory-clients",
    ];
    let mut failures = Vec::new();
    for name in names.iter().filter(|n| !SKIP.contains(&n.as_str())) {
        for value in VALUES {
            let line = ["CONFIG", "SET", name, value];
            let w = want.cmd(&line).await;
            let g = got.cmd(&line).await;
            if w != g {
                failures.push(format!(
                    "CONFIG SET {name} {value:?}: redis {w:?}, relis {g:?}"
                ));
            }
            let w = want.cmd(&["CONFIG", "GET", name]).await;
            let g = got.cmd(&["CONFIG", "GET", name]).await;
            if w != g {
                failures.push(format!("after {name} {value:?}: redis {w:?}, relis {g:?}"));
            }
        }
    }
    // Client eviction would close the test's own connection: only values that evict nobody
    // (a percentage of no maxmemory is no limit).
    for side in [&mut want, &mut got] {
        assert_eq!(side.cmd(&["CONFIG", "SET", "maxmemory", "0"]).await, ok());
    }
    for value in [
        "zz!bad",
        "101%",
        "-1",
        "1.5",
        "+1",
        "0",
        "9223372036854775807",
        "50%",
        "",
    ] {
        let line = ["CONFIG", "SET", "maxmemory-clients", value];
        let (w, g) = (want.cmd(&line).await, got.cmd(&line).await);
        if w != g {
            failures.push(format!(
                "CONFIG SET maxmemory-clients {value:?}: redis {w:?}, relis {g:?}"
            ));
        }
        let line = ["CONFIG", "GET", "maxmemory-clients"];
        let (w, g) = (want.cmd(&line).await, got.cmd(&line).await);
        if w != g {
            failures.push(format!(
                "after maxmemory-clients {value:?}: redis {w:?}, relis {g:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
