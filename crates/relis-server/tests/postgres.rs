//! The PostgreSQL backend through the server (issue 19): two relis-server processes started
//! with `--backend postgres://...` on one throwaway PostgreSQL (started by the test, as the
//! engine's tests do: the harness is shared), clients on both, no update lost.

mod common;
// The engine's throwaway-cluster harness, shared rather than copied.
#[allow(dead_code)]
#[path = "../../relis/tests/common/pg.rs"]
mod pg;

use common::{spawn_binary, Child};
use pg::Pg;
use redis::aio::MultiplexedConnection;

/// Two servers on one PostgreSQL (each with its own empty directory).
struct Cluster {
    nodes: Vec<Child>,
    _dirs: Vec<tempfile::TempDir>,
    // Dropped last: the servers go first.
    _pg: Pg,
}

fn cluster() -> Option<Cluster> {
    let pg = Pg::start()?;
    // With a password (the cluster trusts every local connection, so any works): CONFIG GET
    // must not show it.
    let uri = pg.uri().replace("postgres@", "postgres:s3cret@");
    assert!(uri.contains(":s3cret@"), "{uri}");
    let dirs: Vec<_> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let nodes = dirs
        .iter()
        .map(|d| {
            spawn_binary(
                d.path(),
                &["--backend", &uri, "--enable-debug-command", "local"],
            )
        })
        .collect();
    Some(Cluster {
        nodes,
        _dirs: dirs,
        _pg: pg,
    })
}

async fn connect(node: &Child) -> MultiplexedConnection {
    redis::Client::open(format!("redis://{}/", node.addr()))
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap()
}

/// `clients` connections on each node, each running `each` times the command `cmd` (one at a
/// time, waiting for each reply).
async fn hammer(c: &Cluster, clients: usize, each: usize, cmd: &'static [&'static str]) {
    let mut tasks = Vec::new();
    for node in &c.nodes {
        for _ in 0..clients {
            let mut con = connect(node).await;
            tasks.push(tokio::spawn(async move {
                for _ in 0..each {
                    let mut q = redis::cmd(cmd[0]);
                    for a in &cmd[1..] {
                        q.arg(*a);
                    }
                    let _: redis::Value = q.query_async(&mut con).await.unwrap();
                }
            }));
        }
    }
    for t in tasks {
        t.await.unwrap();
    }
}

const CLIENTS: usize = 2;
const EACH: usize = 1000;
const TOTAL: i64 = (2 * CLIENTS * EACH) as i64;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn increments_pushes_and_hincrbys_on_two_nodes_are_exact() {
    let Some(c) = cluster() else { return };
    hammer(&c, CLIENTS, EACH, &["INCR", "n"]).await;
    hammer(&c, CLIENTS, EACH, &["LPUSH", "l", "x"]).await;
    hammer(&c, CLIENTS, EACH, &["HINCRBY", "h", "f", "1"]).await;
    for node in &c.nodes {
        let mut con = connect(node).await;
        let n: i64 = redis::cmd("GET")
            .arg("n")
            .query_async(&mut con)
            .await
            .unwrap();
        let len: i64 = redis::cmd("LLEN")
            .arg("l")
            .query_async(&mut con)
            .await
            .unwrap();
        let h: i64 = redis::cmd("HGET")
            .arg("h")
            .arg("f")
            .query_async(&mut con)
            .await
            .unwrap();
        assert_eq!((n, len, h), (TOTAL, TOTAL, TOTAL), "INCR, LPUSH, HINCRBY");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn transactions_on_two_nodes_are_atomic_together() {
    let Some(c) = cluster() else { return };
    const ROUNDS: usize = 300;
    let mut tasks = Vec::new();
    for node in &c.nodes {
        for _ in 0..CLIENTS {
            let mut con = connect(node).await;
            tasks.push(tokio::spawn(async move {
                for _ in 0..ROUNDS {
                    // A transfer: the sum of a and b stays 0 after every transaction.
                    let (a, b): (i64, i64) = redis::pipe()
                        .atomic()
                        .cmd("INCR")
                        .arg("a")
                        .cmd("DECR")
                        .arg("b")
                        .query_async(&mut con)
                        .await
                        .unwrap();
                    assert!(a > 0 && b < 0);
                }
            }));
        }
    }
    for t in tasks {
        t.await.unwrap();
    }
    let mut con = connect(&c.nodes[1]).await;
    let (a, b): (i64, i64) = redis::cmd("MGET")
        .arg("a")
        .arg("b")
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(a, (2 * CLIENTS * ROUNDS) as i64);
    assert_eq!(a + b, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn watch_sees_a_change_made_through_the_other_node() {
    let Some(c) = cluster() else { return };
    let mut a = common::Raw::connect(c.nodes[0].addr()).await;
    let mut b = common::Raw::connect(c.nodes[1].addr()).await;
    common::check(&mut a, &[(&["SET", "w", "1"], common::ok())]).await;

    // Nothing changes it: EXEC runs.
    common::check(
        &mut a,
        &[
            (&["WATCH", "w"], common::ok()),
            (&["MULTI"], common::ok()),
            (&["SET", "w", "2"], common::simple("QUEUED")),
            (&["EXEC"], common::arr(vec![common::ok()])),
        ],
    )
    .await;
    // The other node writes it (the same value, even): EXEC answers null.
    common::check(&mut a, &[(&["WATCH", "w"], common::ok())]).await;
    common::check(&mut b, &[(&["SET", "w", "2"], common::ok())]).await;
    common::check(
        &mut a,
        &[
            (&["MULTI"], common::ok()),
            (&["SET", "w", "3"], common::simple("QUEUED")),
            (&["EXEC"], resp::Frame::NullArray),
            (&["GET", "w"], common::bulk("2")),
        ],
    )
    .await;
    // A key that does not exist yet, created through the other node.
    common::check(&mut a, &[(&["WATCH", "fresh"], common::ok())]).await;
    common::check(&mut b, &[(&["SET", "fresh", "x"], common::ok())]).await;
    common::check(
        &mut a,
        &[
            (&["MULTI"], common::ok()),
            (&["SET", "fresh", "y"], common::simple("QUEUED")),
            (&["EXEC"], resp::Frame::NullArray),
        ],
    )
    .await;
}

/// A stream's groups changed through one node are written back for every node, keeping the
/// key's version: a WATCH of the stream on the other node survives them, as in Redis 7.0.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_streams_groups_change_through_the_other_node_without_failing_a_watch() {
    let Some(c) = cluster() else { return };
    let mut a = common::Raw::connect(c.nodes[0].addr()).await;
    let mut b = common::Raw::connect(c.nodes[1].addr()).await;
    common::check(
        &mut a,
        &[(&["XADD", "s", "1-0", "f", "v"], common::bulk("1-0"))],
    )
    .await;
    let group_writes: &[(&[&str], resp::Frame)] = &[
        (&["XGROUP", "CREATE", "s", "g", "0"], common::ok()),
        (&["XGROUP", "CREATECONSUMER", "s", "g", "c"], common::int(1)),
        (&["XACK", "s", "g", "1-0"], common::int(0)),
    ];
    for (line, reply) in group_writes {
        common::check(&mut a, &[(&["WATCH", "s"], common::ok())]).await;
        common::check(&mut b, &[(line, reply.clone())]).await;
        common::check(
            &mut a,
            &[
                (&["MULTI"], common::ok()),
                (&["XLEN", "s"], common::simple("QUEUED")),
                (&["EXEC"], common::arr(vec![common::int(1)])),
            ],
        )
        .await;
    }
    // Node a sees what node b wrote: the group and its consumer.
    common::check(
        &mut a,
        &[
            (&["XGROUP", "CREATECONSUMER", "s", "g", "c"], common::int(0)),
            (
                &["XGROUP", "CREATE", "s", "g", "0"],
                common::err("BUSYGROUP Consumer Group name already exists"),
            ),
        ],
    )
    .await;
    // An entry added through node b still fails node a's WATCH.
    common::check(&mut a, &[(&["WATCH", "s"], common::ok())]).await;
    common::check(
        &mut b,
        &[(&["XADD", "s", "2-0", "f", "v"], common::bulk("2-0"))],
    )
    .await;
    common::check(
        &mut a,
        &[
            (&["MULTI"], common::ok()),
            (&["XLEN", "s"], common::simple("QUEUED")),
            (&["EXEC"], resp::Frame::NullArray),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn what_cannot_run_is_refused_and_values_survive_a_round_trip() {
    let Some(c) = cluster() else { return };
    let mut a = common::Raw::connect(c.nodes[0].addr()).await;
    let mut b = common::Raw::connect(c.nodes[1].addr()).await;
    let refused = |cmd: &str| {
        common::err(&format!(
            "ERR '{cmd}' is not supported with the postgres backend yet"
        ))
    };
    common::check(
        &mut a,
        &[
            (&["REDISQL.CREATE_DB", "x"], refused("redisql.create_db")),
            (
                &["CONFIG", "GET", "backend"],
                common::bulks(&[
                    "backend",
                    &c._pg.uri().replace("postgres@", "postgres:(redacted)@"),
                ]),
            ),
            (
                &["CONFIG", "SET", "backend", "sqlite"],
                common::err("ERR CONFIG SET failed (possibly related to argument 'backend') - can't set immutable config"),
            ),
            (&["MULTI"], common::ok()),
            (&["SORT", "k", "GET", "#"], refused("sort")),
            (
                &["EXEC"],
                common::err("EXECABORT Transaction discarded because of previous errors."),
            ),
        ],
    )
    .await;
    // A script that writes a key it did not declare writes nothing, and says why.
    common::check(
        &mut a,
        &[
            (
                &["EVAL", "redis.call('set', KEYS[1], 1); return redis.call('incr', 'undeclared')", "1", "declared"],
                common::err("ERR transaction rolled back: a command wrote key 'undeclared' of database 0 without declaring it (the postgres backend needs every key a command touches declared, a script's in KEYS)"),
            ),
            (&["EXISTS", "declared", "undeclared"], common::int(0)),
            (&["EVAL", "return redis.call('incr', KEYS[1])", "1", "declared"], common::int(1)),
        ],
    )
    .await;
    // Every type written on one node reads the same on the other (the stored DUMP payload),
    // expiry included; an expired key is gone everywhere.
    for line in [
        &["RPUSH", "list", "a", "b", "c"][..],
        &["SADD", "set", "m1", "m2"],
        &["ZADD", "zset", "1", "one", "2", "two"],
        &["HSET", "hash", "f", "v"],
        &["XADD", "stream", "1-1", "k", "v"],
        &["SET", "expiring", "v", "PX", "100000"],
        &["SET", "gone", "v", "PX", "1"],
    ] {
        let reply = common::raw(&mut a, line).await;
        assert!(!reply.starts_with('-'), "{line:?}: {reply}");
    }
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    common::check(
        &mut b,
        &[
            (
                &["LRANGE", "list", "0", "-1"],
                common::bulks(&["a", "b", "c"]),
            ),
            (&["SISMEMBER", "set", "m2"], common::int(1)),
            (&["ZSCORE", "zset", "two"], common::bulk("2")),
            (&["HGET", "hash", "f"], common::bulk("v")),
            (&["XLEN", "stream"], common::int(1)),
            (&["EXISTS", "gone"], common::int(0)),
            (&["GET", "gone"], common::nil()),
        ],
    )
    .await;
    assert_ttl(&mut b, "PTTL", "expiring", 90_001..=100_000).await;

    // A row that is not a DUMP payload (written behind Relis's back): commands naming that key
    // fail, without a reply made from it; other keys are unaffected.
    let url = c._pg.url();
    std::thread::spawn(move || {
        let mut keys = relis::postgres::PgKeys::connect(&url).unwrap();
        let mut g = keys.group().unwrap();
        g.apply(&[relis::postgres::Change::Put {
            key: (0, b"garbage".to_vec()),
            value: b"not a payload".to_vec(),
            expire_at: None,
            quiet: false,
        }])
        .unwrap();
        g.commit().unwrap();
    })
    .join()
    .unwrap();
    common::check(
        &mut b,
        &[
            (&["GET", "garbage"], common::err("ERR internal error")),
            (&["SET", "garbage", "v"], common::err("ERR internal error")),
            (
                &["GET", "hash"],
                common::err("WRONGTYPE Operation against a key holding the wrong kind of value"),
            ),
            (&["HGET", "hash", "f"], common::bulk("v")),
        ],
    )
    .await;
}

/// Publishes on `publisher` to `channel` until `subscriber` receives one of them (the other
/// node's listener starts with it, a moment after the port opens), and drains what arrived.
async fn until_linked(publisher: &mut common::Raw, subscriber: &mut common::Raw, channel: &str) {
    for _ in 0..100 {
        common::send(publisher, &["PUBLISH", channel, "ping"]).await;
        let _ = publisher.read().await;
        let got =
            tokio::time::timeout(std::time::Duration::from_millis(100), subscriber.read()).await;
        if got.is_ok() {
            // Later pings may still be on their way.
            while tokio::time::timeout(std::time::Duration::from_millis(300), subscriber.read())
                .await
                .is_ok()
            {}
            return;
        }
    }
    panic!("the nodes never linked");
}

/// Reads a pushed message, failing after a few seconds.
async fn pushed(c: &mut common::Raw) -> resp::Frame {
    tokio::time::timeout(std::time::Duration::from_secs(5), c.read())
        .await
        .expect("a message within 5s")
        .expect("open")
}

/// Nothing more arrives for a while.
async fn quiet(c: &mut common::Raw) {
    let more = tokio::time::timeout(std::time::Duration::from_millis(500), c.read()).await;
    assert!(more.is_err(), "unexpected: {more:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn publish_and_keyspace_events_reach_the_other_node_once() {
    let Some(c) = cluster() else { return };
    let mut a = common::Raw::connect(c.nodes[0].addr()).await;
    let mut b = common::Raw::connect(c.nodes[1].addr()).await;
    let mut sub_a = common::Raw::connect(c.nodes[0].addr()).await;
    let mut sub_b = common::Raw::connect(c.nodes[1].addr()).await;
    let mut psub_b = common::Raw::connect(c.nodes[1].addr()).await;
    let sub = |ch: &str, n: i64| {
        common::arr(vec![
            common::bulk("subscribe"),
            common::bulk(ch),
            common::int(n),
        ])
    };
    common::check(
        &mut sub_b,
        &[(&["SUBSCRIBE", "link", "ch"], sub("link", 1))],
    )
    .await;
    assert_eq!(pushed(&mut sub_b).await, sub("ch", 2));
    common::check(&mut sub_a, &[(&["SUBSCRIBE", "ch"], sub("ch", 1))]).await;
    common::check(
        &mut psub_b,
        &[(
            &["PSUBSCRIBE", "c*"],
            common::arr(vec![
                common::bulk("psubscribe"),
                common::bulk("c*"),
                common::int(1),
            ]),
        )],
    )
    .await;
    until_linked(&mut a, &mut sub_b, "link").await;

    // PUBLISH counts this node's receivers (as in a Redis cluster); each subscriber anywhere
    // gets the message once, a large one (past NOTIFY's 8,000 bytes) too.
    let large = "x".repeat(20_000);
    for msg in ["hello", large.as_str()] {
        common::check(&mut a, &[(&["PUBLISH", "ch", msg], common::int(1))]).await;
        let m = common::arr(vec![
            common::bulk("message"),
            common::bulk("ch"),
            common::bulk(msg),
        ]);
        assert_eq!(pushed(&mut sub_a).await, m);
        assert_eq!(pushed(&mut sub_b).await, m);
        assert_eq!(
            pushed(&mut psub_b).await,
            common::arr(vec![
                common::bulk("pmessage"),
                common::bulk("c*"),
                common::bulk("ch"),
                common::bulk(msg)
            ])
        );
    }
    // A script's PUBLISH travels too; B's publish reaches A (B counts its own two).
    common::check(
        &mut b,
        &[(
            &["EVAL", "return redis.call('publish', 'ch', 'lua')", "0"],
            common::int(2),
        )],
    )
    .await;
    let m = common::arr(vec![
        common::bulk("message"),
        common::bulk("ch"),
        common::bulk("lua"),
    ]);
    assert_eq!(pushed(&mut sub_a).await, m);
    assert_eq!(pushed(&mut sub_b).await, m);
    let _ = pushed(&mut psub_b).await;

    // Keyspace events of a write on A reach B's subscribers (each node's own
    // notify-keyspace-events decides what it publishes).
    for node in [&mut a, &mut b] {
        common::check(
            node,
            &[(
                &["CONFIG", "SET", "notify-keyspace-events", "KE$l"],
                common::ok(),
            )],
        )
        .await;
    }
    let mut ev_b = common::Raw::connect(c.nodes[1].addr()).await;
    common::check(
        &mut ev_b,
        &[(
            &["PSUBSCRIBE", "__key*@0__:*"],
            common::arr(vec![
                common::bulk("psubscribe"),
                common::bulk("__key*@0__:*"),
                common::int(1),
            ]),
        )],
    )
    .await;
    common::check(
        &mut a,
        &[
            (&["SET", "k", "v"], common::ok()),
            (&["RPUSH", "l", "e"], common::int(1)),
        ],
    )
    .await;
    let ev = |ch: &str, msg: &str| {
        common::arr(vec![
            common::bulk("pmessage"),
            common::bulk("__key*@0__:*"),
            common::bulk(ch),
            common::bulk(msg),
        ])
    };
    assert_eq!(pushed(&mut ev_b).await, ev("__keyspace@0__:k", "set"));
    assert_eq!(pushed(&mut ev_b).await, ev("__keyevent@0__:set", "k"));
    assert_eq!(pushed(&mut ev_b).await, ev("__keyspace@0__:l", "rpush"));
    assert_eq!(pushed(&mut ev_b).await, ev("__keyevent@0__:rpush", "l"));
    for s in [&mut sub_a, &mut sub_b, &mut psub_b, &mut ev_b] {
        quiet(s).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_write_on_one_node_wakes_clients_blocked_on_the_other() {
    let Some(c) = cluster() else { return };
    let mut a = common::Raw::connect(c.nodes[0].addr()).await;
    let mut b = common::Raw::connect(c.nodes[1].addr()).await;
    let mut link = common::Raw::connect(c.nodes[1].addr()).await;
    common::send(&mut link, &["SUBSCRIBE", "link"]).await;
    let _ = link.read().await;
    until_linked(&mut a, &mut link, "link").await;
    let mut wa = common::Raw::connect(c.nodes[0].addr()).await;
    let mut wb = common::Raw::connect(c.nodes[1].addr()).await;

    // BLPOP on B, LPUSH on A.
    common::send(&mut wb, &["BLPOP", "q", "0"]).await;
    common::wait_blocked(&mut b, 1).await;
    common::check(&mut a, &[(&["LPUSH", "q", "x"], common::int(1))]).await;
    assert_eq!(pushed(&mut wb).await, common::bulks(&["q", "x"]));
    common::wait_blocked(&mut b, 0).await;

    // BZPOPMIN and XREAD BLOCK likewise.
    common::send(&mut wb, &["BZPOPMIN", "z", "0"]).await;
    common::wait_blocked(&mut b, 1).await;
    common::check(&mut a, &[(&["ZADD", "z", "1", "m"], common::int(1))]).await;
    assert_eq!(pushed(&mut wb).await, common::bulks(&["z", "m", "1"]));
    common::send(&mut wb, &["XREAD", "BLOCK", "0", "STREAMS", "s", "$"]).await;
    common::wait_blocked(&mut b, 1).await;
    let id = common::raw(&mut a, &["XADD", "s", "*", "f", "v"]).await;
    assert!(!id.starts_with('-'), "{id}");
    let resp::Frame::Array(streams) = pushed(&mut wb).await else {
        panic!("XREAD answers an array")
    };
    assert_eq!(streams.len(), 1);

    // A chain across nodes: B's BLMOVE takes what A pushed, and its push to the destination
    // wakes a BLPOP on A.
    common::send(&mut wb, &["BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"]).await;
    common::send(&mut wa, &["BLPOP", "dst", "0"]).await;
    common::wait_blocked(&mut b, 1).await;
    common::wait_blocked(&mut a, 1).await;
    common::check(&mut a, &[(&["LPUSH", "src", "e"], common::int(1))]).await;
    assert_eq!(pushed(&mut wb).await, common::bulk("e"));
    assert_eq!(pushed(&mut wa).await, common::bulks(&["dst", "e"]));
    common::check(&mut b, &[(&["EXISTS", "src", "dst"], common::int(0))]).await;

    // One element, a waiter on each node: exactly one gets it, the other stays blocked until
    // the next push (made on the node of neither's choosing: B).
    common::send(&mut wa, &["BLPOP", "both", "0"]).await;
    common::wait_blocked(&mut a, 1).await;
    common::send(&mut wb, &["BLPOP", "both", "0"]).await;
    common::wait_blocked(&mut b, 1).await;
    common::check(&mut b, &[(&["RPUSH", "both", "1"], common::int(1))]).await;
    let first = tokio::select! {
        r = wa.read() => ("a", r.unwrap()),
        r = wb.read() => ("b", r.unwrap()),
    };
    assert_eq!(first.1, common::bulks(&["both", "1"]));
    let (other, mut rest) = if first.0 == "a" { ("b", wb) } else { ("a", wa) };
    common::still_blocked(&mut rest).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    common::still_blocked(&mut rest).await;
    common::check(&mut a, &[(&["RPUSH", "both", "2"], common::int(1))]).await;
    assert_eq!(
        pushed(&mut rest).await,
        common::bulks(&["both", "2"]),
        "{other}"
    );
    common::check(&mut a, &[(&["EXISTS", "both"], common::int(0))]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_nodes_share_the_expiry_sweep_each_key_expiring_once() {
    let Some(c) = cluster() else { return };
    let mut a = common::Raw::connect(c.nodes[0].addr()).await;
    let mut b = common::Raw::connect(c.nodes[1].addr()).await;
    for node in [&mut a, &mut b] {
        common::check(
            node,
            &[(
                &["CONFIG", "SET", "notify-keyspace-events", "Ex"],
                common::ok(),
            )],
        )
        .await;
    }
    let mut ev = common::Raw::connect(c.nodes[1].addr()).await;
    common::send(&mut ev, &["SUBSCRIBE", "link", "__keyevent@0__:expired"]).await;
    let _ = ev.read().await;
    let _ = ev.read().await;
    until_linked(&mut a, &mut ev, "link").await;

    // Keys nobody touches again: the sweep (of whichever node) deletes each, and B's
    // subscriber hears of each exactly once, whichever node deleted it.
    const KEYS: usize = 300;
    for i in 0..KEYS {
        let k = format!("e{i}");
        common::check(&mut a, &[(&["SET", &k, "v", "PX", "100"], common::ok())]).await;
    }
    let mut seen = std::collections::BTreeSet::new();
    while seen.len() < KEYS {
        let m = pushed(&mut ev).await;
        let resp::Frame::Array(parts) = m else {
            panic!("{m:?}")
        };
        assert_eq!(parts[1], common::bulk("__keyevent@0__:expired"));
        let resp::Frame::Bulk(key) = &parts[2] else {
            panic!("{parts:?}")
        };
        assert!(seen.insert(key.clone()), "expired twice: {key:?}");
    }
    quiet(&mut ev).await;
    let expired = common::info_int(&mut a, "stats", "expired_keys").await
        + common::info_int(&mut b, "stats", "expired_keys").await;
    assert_eq!(expired, KEYS as i64);
    // DEBUG SET-ACTIVE-EXPIRE 0 on both nodes stops it: the key stays until touched.
    for node in [&mut a, &mut b] {
        common::check(
            node,
            &[(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"], common::ok())],
        )
        .await;
    }
    common::check(
        &mut a,
        &[(&["SET", "kept", "v", "PX", "100"], common::ok())],
    )
    .await;
    quiet(&mut ev).await;
    common::check(&mut b, &[(&["SET", "kept", "w"], common::ok())]).await;
}

/// A reply's keys (an array of bulk strings), sorted.
fn sorted_keys(f: &resp::Frame) -> Vec<String> {
    let resp::Frame::Array(items) = f else {
        panic!("an array: {f:?}")
    };
    let mut keys: Vec<String> = items
        .iter()
        .map(|i| match i {
            resp::Frame::Bulk(b) => String::from_utf8(b.to_vec()).unwrap(),
            i => panic!("a key: {i:?}"),
        })
        .collect();
    keys.sort();
    keys
}

/// A whole SCAN with `args` after the cursor, each call on the next of `nodes` in turn (as a
/// load balancer may send them): every key returned, in the order returned, and the calls.
async fn scan_all(nodes: &mut [common::Raw], args: &[&str]) -> (Vec<String>, usize) {
    let mut cursor = "0".to_string();
    let mut out = Vec::new();
    for call in 0.. {
        let mut line = vec!["SCAN", cursor.as_str()];
        line.extend_from_slice(args);
        let n = nodes.len();
        let reply = nodes[call % n].cmd(&line).await;
        let resp::Frame::Array(parts) = &reply else {
            panic!("SCAN: {reply:?}")
        };
        let resp::Frame::Bulk(next) = &parts[0] else {
            panic!("SCAN's cursor: {reply:?}")
        };
        out.extend(sorted_keys(&parts[1]));
        cursor = String::from_utf8(next.to_vec()).unwrap();
        if cursor == "0" {
            return (out, call + 1);
        }
        assert!(call < 100_000, "the scan never ends");
    }
    unreachable!()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn keys_scan_dbsize_and_randomkey_agree_across_nodes() {
    let Some(c) = cluster() else { return };
    let mut a = common::Raw::connect(c.nodes[0].addr()).await;
    let mut b = common::Raw::connect(c.nodes[1].addr()).await;
    // The expired key must stay a row: no node sweeps.
    for node in [&mut a, &mut b] {
        common::check(
            node,
            &[(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"], common::ok())],
        )
        .await;
    }
    let mut all = Vec::new();
    for i in 0..15 {
        let (k, node) = if i % 2 == 0 {
            (format!("a:{i}"), &mut a)
        } else {
            (format!("b:{i}"), &mut b)
        };
        common::check(node, &[(&["SET", &k, "v"], common::ok())]).await;
        all.push(k);
    }
    for line in [
        &["HSET", "h:1", "f", "v"][..],
        &["HSET", "h:2", "f", "v"],
        &["RPUSH", "l", "x"],
        &["SADD", "s", "m"],
        &["ZADD", "z", "1", "m"],
        &["XADD", "x", "1-1", "f", "v"],
        &["SET", "ttl", "v", "EX", "1000"],
        &["SET", "gone", "v", "PX", "1"],
    ] {
        assert!(
            !common::raw(&mut b, line).await.starts_with('-'),
            "{line:?}"
        );
        if line[1] != "gone" {
            all.push(line[1].to_string());
        }
    }
    all.sort();
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    for node in [&mut a, &mut b] {
        common::check(
            node,
            &[
                (&["DBSIZE"], common::int(all.len() as i64)),
                (&["SELECT", "1"], common::ok()),
                (&["DBSIZE"], common::int(0)),
                (&["KEYS", "*"], common::arr(vec![])),
                (&["RANDOMKEY"], common::nil()),
                (
                    &["SCAN", "0"],
                    common::arr(vec![common::bulk("0"), common::arr(vec![])]),
                ),
                (&["SELECT", "0"], common::ok()),
                // A literal prefix (pushed into the range read), then globs with none.
                (&["KEYS", "h:*"], common::bulks(&["h:1", "h:2"])),
                (&["KEYS", "h\\:[12]"], common::bulks(&["h:1", "h:2"])),
                (
                    &["KEYS", "*:1?"],
                    common::bulks(&["a:10", "a:12", "a:14", "b:11", "b:13"]),
                ),
                (&["KEYS", "gone"], common::arr(vec![])),
                (&["KEYS", "nothing*"], common::arr(vec![])),
            ],
        )
        .await;
        assert_eq!(sorted_keys(&node.cmd(&["KEYS", "*"]).await), all);
        let line = common::info_field(node, "keyspace", "db0").await;
        assert_eq!(
            line.trim(),
            format!("keys={},expires=1,avg_ttl=0", all.len())
        );
    }
    // SCAN, its calls spread over both nodes: every key once, however small COUNT is.
    let mut nodes = [a, b];
    for count in ["1", "2", "7", "1000"] {
        let (mut keys, calls) = scan_all(&mut nodes, &["COUNT", count]).await;
        keys.sort();
        assert_eq!(keys, all, "COUNT {count}");
        if count == "1" {
            assert!(calls >= all.len(), "{calls} calls");
        }
    }
    let (mut keys, _) = scan_all(&mut nodes, &["COUNT", "3", "MATCH", "*:1*"]).await;
    keys.sort();
    assert_eq!(keys, ["a:10", "a:12", "a:14", "b:1", "b:11", "b:13", "h:1"]);
    for (kind, want) in [
        ("hash", &["h:1", "h:2"][..]),
        (
            "STRING",
            &[
                "a:0", "a:10", "a:12", "a:14", "a:2", "a:4", "a:6", "a:8", "b:1", "b:11", "b:13",
                "b:3", "b:5", "b:7", "b:9", "ttl",
            ],
        ),
        ("list", &["l"]),
        ("set", &["s"]),
        ("zset", &["z"]),
        ("stream", &["x"]),
        ("nosuchtype", &[]),
    ] {
        let (mut keys, _) = scan_all(&mut nodes, &["TYPE", kind, "COUNT", "4"]).await;
        keys.sort();
        assert_eq!(keys, want, "TYPE {kind}");
    }
    let (mut keys, _) = scan_all(&mut nodes, &["MATCH", "h*", "TYPE", "string"]).await;
    keys.sort();
    assert!(keys.is_empty(), "{keys:?}");
    // A cursor no row reaches ends the scan; a bad one is refused as Redis does.
    common::check(
        &mut nodes[0],
        &[
            (
                &["SCAN", "18446744073709551615"],
                common::arr(vec![common::bulk("0"), common::arr(vec![])]),
            ),
            (&["SCAN", "x"], common::err("ERR invalid cursor")),
        ],
    )
    .await;
    // RANDOMKEY: a live key, and over enough calls more than one.
    let mut seen = std::collections::BTreeSet::new();
    for i in 0..60 {
        let reply = nodes[i % 2].cmd(&["RANDOMKEY"]).await;
        let resp::Frame::Bulk(k) = reply else {
            panic!("RANDOMKEY: {reply:?}")
        };
        let k = String::from_utf8(k.to_vec()).unwrap();
        assert!(all.contains(&k), "{k}");
        seen.insert(k);
    }
    assert!(seen.len() > 3, "{seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_scan_returns_every_key_while_the_other_node_writes() {
    let Some(c) = cluster() else { return };
    let mut a = common::Raw::connect(c.nodes[0].addr()).await;
    const KEYS: usize = 400;
    let mut all = Vec::new();
    for i in 0..KEYS {
        let k = format!("k{i}");
        common::check(&mut a, &[(&["SET", &k, "v"], common::ok())]).await;
        all.push(k);
    }
    all.sort();
    // Meanwhile on B: the keys present from the start rewritten (their place in the scan
    // must not move), others created and deleted.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        let mut b = common::Raw::connect(c.nodes[1].addr()).await;
        tokio::spawn(async move {
            let mut i = 0usize;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let old = format!("k{}", i % KEYS);
                let new = format!("new{i}");
                let gone = format!("new{}", i.saturating_sub(5));
                common::check(
                    &mut b,
                    &[
                        (&["SET", &old, &i.to_string()], common::ok()),
                        (
                            &["APPEND", &old, "x"],
                            common::int((i.to_string().len() + 1) as i64),
                        ),
                        (&["SET", &new, "v"], common::ok()),
                    ],
                )
                .await;
                let _ = b.cmd(&["DEL", &gone]).await;
                i += 1;
            }
            i
        })
    };
    let mut nodes = [
        common::Raw::connect(c.nodes[0].addr()).await,
        common::Raw::connect(c.nodes[1].addr()).await,
    ];
    for _ in 0..3 {
        let (keys, _) = scan_all(&mut nodes, &["COUNT", "7"]).await;
        let got: std::collections::BTreeSet<&str> = keys.iter().map(String::as_str).collect();
        let missing: Vec<&String> = all.iter().filter(|k| !got.contains(k.as_str())).collect();
        assert!(missing.is_empty(), "never returned: {missing:?}");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let writes = writer.await.unwrap();
    assert!(
        writes > 10,
        "the other node wrote meanwhile ({writes} rounds)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn flushall_on_one_node_empties_the_others_view_and_fails_its_watch() {
    let Some(c) = cluster() else { return };
    let mut a = common::Raw::connect(c.nodes[0].addr()).await;
    let mut b = common::Raw::connect(c.nodes[1].addr()).await;
    common::check(
        &mut a,
        &[
            (&["SET", "w", "1"], common::ok()),
            (&["SET", "k", "1"], common::ok()),
            (&["SELECT", "1"], common::ok()),
            (&["SET", "other", "1"], common::ok()),
            (&["SELECT", "0"], common::ok()),
        ],
    )
    .await;
    // FLUSHDB empties the selected database only, and a key of it that B watches.
    common::check(
        &mut b,
        &[
            (&["SELECT", "1"], common::ok()),
            (&["WATCH", "other"], common::ok()),
        ],
    )
    .await;
    common::check(
        &mut a,
        &[
            (&["SELECT", "1"], common::ok()),
            (&["FLUSHDB", "SYNC"], common::ok()),
            (&["DBSIZE"], common::int(0)),
            (&["SELECT", "0"], common::ok()),
        ],
    )
    .await;
    common::check(
        &mut b,
        &[
            (&["MULTI"], common::ok()),
            (&["SET", "other", "2"], common::simple("QUEUED")),
            (&["EXEC"], resp::Frame::NullArray),
            (&["DBSIZE"], common::int(0)),
            (&["SELECT", "0"], common::ok()),
            (&["DBSIZE"], common::int(2)),
        ],
    )
    .await;
    // Keyspace events: a flush emits none per key (as Redis).
    for node in [&mut a, &mut b] {
        common::check(
            node,
            &[(
                &["CONFIG", "SET", "notify-keyspace-events", "KEA"],
                common::ok(),
            )],
        )
        .await;
    }
    let mut ev = common::Raw::connect(c.nodes[1].addr()).await;
    common::send(&mut ev, &["PSUBSCRIBE", "__key*__:*"]).await;
    let _ = ev.read().await;
    common::send(&mut ev, &["SUBSCRIBE", "link"]).await;
    let _ = ev.read().await;
    until_linked(&mut a, &mut ev, "link").await;
    // B watches an existing key and one that does not exist; A flushes everything.
    common::check(&mut b, &[(&["WATCH", "w"], common::ok())]).await;
    common::check(&mut a, &[(&["FLUSHALL", "ASYNC"], common::ok())]).await;
    common::check(
        &mut b,
        &[
            (&["DBSIZE"], common::int(0)),
            (&["KEYS", "*"], common::arr(vec![])),
            (&["GET", "k"], common::nil()),
            (&["MULTI"], common::ok()),
            (&["SET", "w", "2"], common::simple("QUEUED")),
            (&["EXEC"], resp::Frame::NullArray),
            // A WATCHed key that did not exist is not touched by a flush (Redis 7.0).
            (&["WATCH", "fresh"], common::ok()),
        ],
    )
    .await;
    common::check(&mut a, &[(&["FLUSHALL"], common::ok())]).await;
    common::check(
        &mut b,
        &[
            (&["MULTI"], common::ok()),
            (&["SET", "fresh", "2"], common::simple("QUEUED")),
            (&["EXEC"], common::arr(vec![common::ok()])),
        ],
    )
    .await;
    // What B's subscriber hears: the events of the two SETs, nothing of the flushes.
    common::check(&mut a, &[(&["SET", "marker", "v"], common::ok())]).await;
    let mut heard = Vec::new();
    while !heard
        .iter()
        .any(|c: &String| c == "__keyevent@0__:set marker")
    {
        let m = pushed(&mut ev).await;
        let resp::Frame::Array(parts) = &m else {
            panic!("{m:?}")
        };
        let (resp::Frame::Bulk(ch), resp::Frame::Bulk(msg)) = (&parts[2], &parts[3]) else {
            panic!("{m:?}")
        };
        heard.push(format!(
            "{} {}",
            String::from_utf8_lossy(ch),
            String::from_utf8_lossy(msg)
        ));
    }
    assert_eq!(
        heard,
        [
            "__keyspace@0__:fresh set",
            "__keyevent@0__:set fresh",
            "__keyspace@0__:marker set",
            "__keyevent@0__:set marker"
        ]
    );

    // In one transaction: what follows the flush stays, what preceded it goes.
    common::check(
        &mut a,
        &[
            (&["MULTI"], common::ok()),
            (&["SET", "before", "1"], common::simple("QUEUED")),
            (&["FLUSHALL"], common::simple("QUEUED")),
            (&["SET", "after", "1"], common::simple("QUEUED")),
            (
                &["EXEC"],
                common::arr(vec![common::ok(), common::ok(), common::ok()]),
            ),
        ],
    )
    .await;
    common::check(
        &mut b,
        &[
            (&["KEYS", "*"], common::bulks(&["after"])),
            (&["SELECT", "1"], common::ok()),
            (&["DBSIZE"], common::int(0)),
        ],
    )
    .await;
    let line = common::info_field(&mut b, "keyspace", "db0").await;
    assert_eq!(line.trim(), "keys=1,expires=0,avg_ttl=0");
}

/// A FLUSHALL on one node is atomic against every group on the other. The invariant, for each
/// writer (a connection of B INCRing a key no one else writes, one command at a time) and each
/// FLUSHALL F (sent on A): let `i` be the writer's last INCR answered before F was sent and
/// `j` its first INCR sent after F was answered. In any serial order F falls between INCR `i`
/// and INCR `j`, so one of the INCRs after `i` up to `j` found the key absent and answered 1.
/// A flush that deleted the key between another group's load and its write-back breaks it:
/// that INCR answers the old value plus one, and so does the next (the key survived the flush).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn flushall_is_atomic_against_groups_on_the_other_node() {
    use std::time::{Duration, Instant};
    let Some(c) = cluster() else { return };
    const WRITERS: usize = 4;
    const FLUSHES: usize = 200;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let mut con = connect(&c.nodes[1]).await;
        let stop = stop.clone();
        writers.push(tokio::spawn(async move {
            // (sent, answered, reply) of each INCR.
            let mut log: Vec<(Instant, Instant, i64)> = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let sent = Instant::now();
                let n: i64 = redis::cmd("INCR")
                    .arg(format!("k{w}"))
                    .query_async(&mut con)
                    .await
                    .unwrap();
                log.push((sent, Instant::now(), n));
            }
            log
        }));
    }
    let mut a = connect(&c.nodes[0]).await;
    let mut flushes = Vec::new();
    for _ in 0..FLUSHES {
        tokio::time::sleep(Duration::from_millis(2)).await;
        let sent = Instant::now();
        let () = redis::cmd("FLUSHALL").query_async(&mut a).await.unwrap();
        flushes.push((sent, Instant::now()));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut broken = 0;
    for (w, t) in writers.into_iter().enumerate() {
        let log = t.await.unwrap();
        for (f_sent, f_done) in &flushes {
            let Some(i) = log.iter().rposition(|(_, answered, _)| answered < f_sent) else {
                continue;
            };
            let Some(j) = log.iter().position(|(sent, _, _)| sent > f_done) else {
                continue;
            };
            if !log[i + 1..=j].iter().any(|(_, _, n)| *n == 1) {
                broken += 1;
                eprintln!("writer {w}: a key survived a flush: {:?}", &log[i..=j]);
            }
        }
    }
    assert_eq!(broken, 0, "keys survived a FLUSHALL on the other node");
}

/// HSCAN, SSCAN and ZSCAN with each page asked of the other node (a client behind a load
/// balancer): the cursor one node hands out means the same on the other, so the scan ends, and
/// every element present for the whole scan comes back (exactly once here), while the other
/// node adds elements between pages. Small collections (Redis's listpack and intset sizes) and
/// large ones (hashtable, skiplist) alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn collection_scans_continue_on_the_other_node() {
    let Some(c) = cluster() else { return };
    let mut cons = [connect(&c.nodes[0]).await, connect(&c.nodes[1]).await];
    for (size, tag) in [(600, "big"), (10, "small")] {
        let mut fields = Vec::new();
        let mut members = Vec::new();
        let mut ints = Vec::new();
        for i in 0..size {
            fields.push(format!("f{i}"));
            members.push(format!("m{i}"));
            ints.push(i.to_string());
        }
        for (cmd, key, elems) in [
            ("HSCAN", format!("h{tag}"), &fields),
            ("SSCAN", format!("s{tag}"), &members),
            ("SSCAN", format!("i{tag}"), &ints),
            ("ZSCAN", format!("z{tag}"), &members),
        ] {
            let mut fill = match cmd {
                "HSCAN" => redis::cmd("HSET"),
                "SSCAN" => redis::cmd("SADD"),
                _ => redis::cmd("ZADD"),
            };
            fill.arg(&key);
            for (i, e) in elems.iter().enumerate() {
                match cmd {
                    "HSCAN" => fill.arg(e).arg(i),
                    "SSCAN" => fill.arg(e),
                    _ => fill.arg(i).arg(e),
                };
            }
            let _: i64 = fill.query_async(&mut cons[0]).await.unwrap();
            let mut seen: Vec<String> = Vec::new();
            let mut cursor: u64 = 0;
            let mut pages = 0;
            loop {
                let node = pages % 2;
                let (next, flat): (u64, Vec<String>) = redis::cmd(cmd)
                    .arg(&key)
                    .arg(cursor)
                    .arg("COUNT")
                    .arg(3)
                    .query_async(&mut cons[node])
                    .await
                    .unwrap();
                // Pairs (field, value) and (member, score): the names only.
                let step = if cmd == "SSCAN" { 1 } else { 2 };
                seen.extend(flat.into_iter().step_by(step));
                pages += 1;
                if next == 0 {
                    break;
                }
                assert!(pages < elems.len() + 50, "{cmd} {key} never ends");
                cursor = next;
                // The other node adds an element between pages.
                let mut add = match cmd {
                    "HSCAN" => redis::cmd("HSET"),
                    "SSCAN" => redis::cmd("SADD"),
                    _ => redis::cmd("ZADD"),
                };
                add.arg(&key);
                match cmd {
                    "HSCAN" => add.arg(format!("new{pages}")).arg(1),
                    "SSCAN" if key.starts_with('i') => add.arg(1000 + pages),
                    "SSCAN" => add.arg(format!("new{pages}")),
                    _ => add.arg(1).arg(format!("new{pages}")),
                };
                let _: i64 = add.query_async(&mut cons[1 - node]).await.unwrap();
            }
            let originals: Vec<&String> = seen.iter().filter(|e| elems.contains(e)).collect();
            assert_eq!(
                originals.len(),
                elems.len(),
                "{cmd} {key}: every element once, in {pages} pages"
            );
            let mut distinct = seen.clone();
            distinct.sort();
            distinct.dedup();
            assert_eq!(distinct.len(), seen.len(), "{cmd} {key}: no element twice");
            if size > 100 {
                assert!(pages > 10, "{cmd} {key}: paged ({pages} pages)");
            }
        }
    }
}

/// A library whose function `f` (and `f_<name>`) returns `n`.
fn library(name: &str, f: &str, n: i64) -> String {
    format!("#!lua name={name}\nredis.register_function('{f}', function() return {n} end)")
}

/// The libraries' names FUNCTION LIST answers, sorted.
async fn listed(c: &mut common::Raw) -> Vec<String> {
    let resp::Frame::Array(libs) = c.cmd(&["FUNCTION", "LIST"]).await else {
        panic!("FUNCTION LIST answers an array")
    };
    let mut names: Vec<String> = libs
        .iter()
        .map(|l| {
            let pairs = match l {
                resp::Frame::Map(m) => m.clone(),
                resp::Frame::Array(a) => {
                    a.chunks(2).map(|p| (p[0].clone(), p[1].clone())).collect()
                }
                other => panic!("a library is a map: {other:?}"),
            };
            let (_, name) = pairs
                .iter()
                .find(|(k, _)| *k == common::bulk("library_name"))
                .expect("library_name");
            let resp::Frame::Bulk(name) = name else {
                panic!("a name is a bulk string")
            };
            String::from_utf8_lossy(name).into_owned()
        })
        .collect();
    names.sort();
    names
}

/// FUNCTION STATS's libraries_count.
async fn libraries_count(c: &mut common::Raw) -> i64 {
    let reply = format!("{:?}", c.cmd(&["FUNCTION", "STATS"]).await);
    let at = reply.find("libraries_count").expect(&reply);
    let rest = &reply[at..];
    let start = rest.find("Integer(").expect(&reply) + "Integer(".len();
    rest[start..rest[start..].find(')').unwrap() + start]
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn function_libraries_are_shared_by_every_node() {
    let Some(c) = cluster() else { return };
    let mut a = common::Raw::connect(c.nodes[0].addr()).await;
    let mut b = common::Raw::connect(c.nodes[1].addr()).await;
    async fn run(c: &mut common::Raw, args: Vec<Vec<u8>>) -> resp::Frame {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_slice()).collect();
        c.cmd_bytes(&args).await
    }
    // B runs nothing before A's LOAD: its first FCALL, right after LOAD's reply, finds it.
    let lib1 = library("lib1", "f1", 1);
    common::check(
        &mut a,
        &[(&["FUNCTION", "LOAD", &lib1], common::bulk("lib1"))],
    )
    .await;
    common::check(
        &mut b,
        &[
            (&["FCALL", "f1", "0"], common::int(1)),
            (
                &["FCALL_RO", "f1", "0"],
                common::err("ERR Can not execute a script with write flag using *_ro command."),
            ),
            (
                &["FUNCTION", "LOAD", &lib1],
                common::err("ERR Library 'lib1' already exists"),
            ),
            (
                &["FUNCTION", "LOAD", &library("lib2", "f1", 1)],
                common::err("ERR Function f1 already exists"),
            ),
            // B now runs f1 in its Lua state; A replaces it, and B's next call runs the new one.
            (&["FCALL", "f1", "0"], common::int(1)),
        ],
    )
    .await;
    common::check(
        &mut a,
        &[(
            &["FUNCTION", "LOAD", "REPLACE", &library("lib1", "f1", 2)],
            common::bulk("lib1"),
        )],
    )
    .await;
    common::check(&mut b, &[(&["FCALL", "f1", "0"], common::int(2))]).await;
    assert_eq!(listed(&mut b).await, vec!["lib1"]);
    assert_eq!(libraries_count(&mut b).await, 1);

    // DUMP on one node, FLUSH on the other: gone everywhere; RESTORE brings it back.
    let resp::Frame::Bulk(payload) = b.cmd(&["FUNCTION", "DUMP"]).await else {
        panic!("FUNCTION DUMP answers a bulk string")
    };
    common::check(&mut a, &[(&["FUNCTION", "FLUSH", "SYNC"], common::ok())]).await;
    common::check(
        &mut b,
        &[
            (&["FCALL", "f1", "0"], common::err("ERR Function not found")),
            (&["FUNCTION", "LIST"], common::arr(vec![])),
        ],
    )
    .await;
    assert_eq!(libraries_count(&mut b).await, 0);
    let restore = |policy: Option<&'static str>| {
        let mut args: Vec<Vec<u8>> =
            vec![b"FUNCTION".to_vec(), b"RESTORE".to_vec(), payload.to_vec()];
        if let Some(p) = policy {
            args.push(p.as_bytes().to_vec());
        }
        args
    };
    assert_eq!(run(&mut a, restore(None)).await, common::ok());
    common::check(&mut b, &[(&["FCALL", "f1", "0"], common::int(2))]).await;
    assert_eq!(
        run(&mut b, restore(Some("APPEND"))).await,
        common::err("ERR Library lib1 already exists")
    );
    assert_eq!(run(&mut b, restore(Some("REPLACE"))).await, common::ok());
    common::check(
        &mut a,
        &[(
            &["FUNCTION", "LOAD", &library("lib3", "f3", 3)],
            common::bulk("lib3"),
        )],
    )
    .await;
    assert_eq!(listed(&mut b).await, vec!["lib1", "lib3"]);
    assert_eq!(run(&mut b, restore(Some("FLUSH"))).await, common::ok());
    assert_eq!(listed(&mut a).await, vec!["lib1"]);
    common::check(
        &mut a,
        &[(&["FCALL", "f3", "0"], common::err("ERR Function not found"))],
    )
    .await;

    // DELETE on one node; the other's DELETE finds nothing.
    common::check(
        &mut b,
        &[
            (
                &["FUNCTION", "LOAD", &library("lib4", "f4", 4)],
                common::bulk("lib4"),
            ),
            (&["FUNCTION", "DELETE", "lib1"], common::ok()),
        ],
    )
    .await;
    common::check(
        &mut a,
        &[
            (
                &["FUNCTION", "DELETE", "lib1"],
                common::err("ERR Library not found"),
            ),
            (&["FCALL", "f1", "0"], common::err("ERR Function not found")),
            (&["FCALL", "f4", "0"], common::int(4)),
        ],
    )
    .await;

    // A node started now has the shared libraries from the start.
    let dir = tempfile::tempdir().unwrap();
    let third = spawn_binary(dir.path(), &["--backend", &c._pg.uri()]);
    let mut t = common::Raw::connect(third.addr()).await;
    assert_eq!(libraries_count(&mut t).await, 1);
    common::check(&mut t, &[(&["FCALL", "f4", "0"], common::int(4))]).await;
}

/// Nodes loading one library name at once: one LOAD wins, every other gets Redis's error, and
/// every node ends with the winner's code.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_function_loads_on_two_nodes_have_one_winner() {
    let Some(c) = cluster() else { return };
    const ROUNDS: usize = 20;
    let mut tasks = Vec::new();
    for (i, node) in c.nodes.iter().enumerate() {
        for j in 0..CLIENTS {
            let mut con = connect(node).await;
            let n = (i * CLIENTS + j) as i64;
            tasks.push(tokio::spawn(async move {
                let mut won = Vec::new();
                for r in 0..ROUNDS {
                    let name = format!("race{r}");
                    let code = library(&name, &format!("f{r}"), n);
                    let res: redis::RedisResult<String> = redis::cmd("FUNCTION")
                        .arg("LOAD")
                        .arg(code)
                        .query_async(&mut con)
                        .await;
                    match res {
                        Ok(got) => {
                            assert_eq!(got, name);
                            won.push((r, n));
                        }
                        Err(e) => assert!(
                            e.to_string()
                                .ends_with(&format!("Library '{name}' already exists")),
                            "{e}"
                        ),
                    }
                }
                won
            }));
        }
    }
    let mut winners = vec![None; ROUNDS];
    for t in tasks {
        for (r, n) in t.await.unwrap() {
            assert!(winners[r].is_none(), "round {r} won twice");
            winners[r] = Some(n);
        }
    }
    for node in &c.nodes {
        let mut con = connect(node).await;
        for (r, w) in winners.iter().enumerate() {
            let w = w.unwrap_or_else(|| panic!("round {r} has no winner"));
            let got: i64 = redis::cmd("FCALL")
                .arg(format!("f{r}"))
                .arg(0)
                .query_async(&mut con)
                .await
                .unwrap();
            assert_eq!(got, w, "round {r}");
        }
    }
}

/// MOVE and COPY ... DB write a key of another database: declared there, it is locked, loaded
/// and written back with the group, so the other node sees it, and its WATCH of it fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn move_and_copy_to_another_database_across_nodes() {
    let Some(c) = cluster() else { return };
    let mut a = common::Raw::connect(c.nodes[0].addr()).await;
    let mut b = common::Raw::connect(c.nodes[1].addr()).await;
    let mut b1 = common::Raw::connect(c.nodes[1].addr()).await;
    common::check(&mut b1, &[(&["SELECT", "1"], common::ok())]).await;
    // B watches key k of database 1, which A's MOVE creates.
    common::check(
        &mut b1,
        &[
            (&["WATCH", "k"], common::ok()),
            (&["GET", "k"], common::nil()),
        ],
    )
    .await;
    common::check(
        &mut a,
        &[
            (&["SET", "k", "v"], common::ok()),
            (&["MOVE", "k", "1"], common::int(1)),
            (&["EXISTS", "k"], common::int(0)),
        ],
    )
    .await;
    common::check(
        &mut b1,
        &[
            (&["MULTI"], common::ok()),
            (&["SET", "k", "mine"], common::simple("QUEUED")),
            (&["EXEC"], resp::Frame::NullArray),
            (&["GET", "k"], common::bulk("v")),
        ],
    )
    .await;
    common::check(
        &mut b,
        &[
            (&["EXISTS", "k"], common::int(0)),
            // Onto an existing key: nothing moves.
            (&["SET", "k2", "zero"], common::ok()),
            (&["SET", "k", "zero"], common::ok()),
            (&["MOVE", "k", "1"], common::int(0)),
            (&["GET", "k"], common::bulk("zero")),
        ],
    )
    .await;
    common::check(&mut b1, &[(&["GET", "k"], common::bulk("v"))]).await;
    // In a transaction, and back again.
    common::check(
        &mut b1,
        &[
            (&["MULTI"], common::ok()),
            (&["MOVE", "k", "2"], common::simple("QUEUED")),
            (&["EXEC"], common::arr(vec![common::int(1)])),
        ],
    )
    .await;
    common::check(
        &mut a,
        &[
            (&["SELECT", "2"], common::ok()),
            (&["GET", "k"], common::bulk("v")),
            (&["SELECT", "0"], common::ok()),
        ],
    )
    .await;

    // COPY ... DB, without and with REPLACE.
    common::check(
        &mut a,
        &[
            (&["RPUSH", "src", "x", "y"], common::int(2)),
            (&["COPY", "src", "dst", "DB", "1"], common::int(1)),
            (&["COPY", "src", "dst", "DB", "1"], common::int(0)),
            (&["EXISTS", "dst"], common::int(0)),
        ],
    )
    .await;
    common::check(
        &mut b1,
        &[(&["LRANGE", "dst", "0", "-1"], common::bulks(&["x", "y"]))],
    )
    .await;
    common::check(
        &mut b,
        &[
            (&["RPUSH", "src", "z"], common::int(3)),
            (
                &["COPY", "src", "dst", "DB", "1", "REPLACE"],
                common::int(1),
            ),
            (
                &["LRANGE", "src", "0", "-1"],
                common::bulks(&["x", "y", "z"]),
            ),
        ],
    )
    .await;
    common::check(
        &mut b1,
        &[(
            &["LRANGE", "dst", "0", "-1"],
            common::bulks(&["x", "y", "z"]),
        )],
    )
    .await;
}

/// A client blocked in one database on one node is served when SWAPDB on the other node
/// brings a list there, as Redis serves it after a swap (`scanDatabaseForReadyKeys`).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn swapdb_on_one_node_serves_clients_blocked_on_the_other() {
    let Some(c) = cluster() else { return };
    let mut a = common::Raw::connect(c.nodes[0].addr()).await;
    let mut b = common::Raw::connect(c.nodes[1].addr()).await;
    let mut link = common::Raw::connect(c.nodes[1].addr()).await;
    common::send(&mut link, &["SUBSCRIBE", "link"]).await;
    let _ = link.read().await;
    until_linked(&mut a, &mut link, "link").await;
    let mut wb = common::Raw::connect(c.nodes[1].addr()).await;
    common::check(&mut wb, &[(&["SELECT", "1"], common::ok())]).await;
    common::send(&mut wb, &["BLPOP", "q", "0"]).await;
    common::wait_blocked(&mut b, 1).await;
    common::check(
        &mut a,
        &[
            (&["RPUSH", "q", "x", "y"], common::int(2)),
            (&["SWAPDB", "0", "1"], common::ok()),
        ],
    )
    .await;
    assert_eq!(pushed(&mut wb).await, common::bulks(&["q", "x"]));
    common::wait_blocked(&mut b, 0).await;
    common::check(
        &mut b,
        &[
            (&["SELECT", "1"], common::ok()),
            (&["LRANGE", "q", "0", "-1"], common::bulks(&["y"])),
        ],
    )
    .await;
}

/// SWAPDB on one node swaps the databases for every node, fails the WATCH of a key that
/// existed in either database (Redis's `touchAllWatchedKeysInDb`), and is atomic against the
/// other node's writes.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn swapdb_swaps_for_every_node_atomically() {
    let Some(c) = cluster() else { return };
    let mut a = common::Raw::connect(c.nodes[0].addr()).await;
    let mut b0 = common::Raw::connect(c.nodes[1].addr()).await;
    let mut b1 = common::Raw::connect(c.nodes[1].addr()).await;
    let mut watch_both = common::Raw::connect(c.nodes[1].addr()).await;
    let mut watch_other = common::Raw::connect(c.nodes[1].addr()).await;
    let mut watch_none = common::Raw::connect(c.nodes[1].addr()).await;
    common::check(&mut b1, &[(&["SELECT", "1"], common::ok())]).await;
    common::check(
        &mut a,
        &[
            (&["MSET", "k0", "zero", "both", "b0"], common::ok()),
            (&["SELECT", "1"], common::ok()),
            (&["MSET", "k1", "one", "both", "b1"], common::ok()),
            (&["SELECT", "0"], common::ok()),
        ],
    )
    .await;
    for (con, key) in [
        (&mut watch_both, "both"),
        // In database 1 only: still touched.
        (&mut watch_other, "k1"),
        (&mut watch_none, "none"),
    ] {
        common::check(con, &[(&["WATCH", key], common::ok())]).await;
    }
    common::check(&mut a, &[(&["SWAPDB", "0", "1"], common::ok())]).await;
    common::check(
        &mut b0,
        &[
            (&["GET", "k1"], common::bulk("one")),
            (&["GET", "k0"], common::nil()),
            (&["GET", "both"], common::bulk("b1")),
            (&["DBSIZE"], common::int(2)),
        ],
    )
    .await;
    common::check(
        &mut b1,
        &[
            (&["GET", "k0"], common::bulk("zero")),
            (&["GET", "k1"], common::nil()),
            (&["GET", "both"], common::bulk("b0")),
        ],
    )
    .await;
    for (con, exec) in [
        (&mut watch_both, resp::Frame::NullArray),
        (&mut watch_other, resp::Frame::NullArray),
        (&mut watch_none, common::arr(vec![common::ok()])),
    ] {
        common::check(
            con,
            &[
                (&["MULTI"], common::ok()),
                (&["SET", "w", "1"], common::simple("QUEUED")),
                (&["EXEC"], exec),
            ],
        )
        .await;
    }
    // In a transaction: the writes before the swap move with it.
    common::check(
        &mut a,
        &[
            (&["MULTI"], common::ok()),
            (&["SET", "x", "1"], common::simple("QUEUED")),
            (&["SWAPDB", "0", "1"], common::simple("QUEUED")),
            (&["GET", "x"], common::simple("QUEUED")),
            (&["SET", "y", "2"], common::simple("QUEUED")),
            (
                &["EXEC"],
                common::arr(vec![
                    common::ok(),
                    common::ok(),
                    common::nil(),
                    common::ok(),
                ]),
            ),
        ],
    )
    .await;
    common::check(
        &mut b1,
        &[
            (&["GET", "x"], common::bulk("1")),
            (&["GET", "y"], common::nil()),
            (&["GET", "both"], common::bulk("b1")),
        ],
    )
    .await;
    common::check(
        &mut b0,
        &[
            (&["GET", "y"], common::bulk("2")),
            (&["GET", "both"], common::bulk("b0")),
        ],
    )
    .await;

    // Swaps on one node while the other increments: no increment is lost or counted twice
    // (one loaded before a swap and written back after it would land in the wrong database).
    const INCRS: usize = 200;
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let mut con = connect(&c.nodes[1]).await;
        tasks.push(tokio::spawn(async move {
            for _ in 0..INCRS {
                let _: i64 = redis::cmd("INCR")
                    .arg("n")
                    .query_async(&mut con)
                    .await
                    .unwrap();
            }
        }));
    }
    let mut con = connect(&c.nodes[0]).await;
    for _ in 0..50 {
        let () = redis::cmd("SWAPDB")
            .arg(0)
            .arg(1)
            .query_async(&mut con)
            .await
            .unwrap();
    }
    for t in tasks {
        t.await.unwrap();
    }
    let mut total = 0;
    for db in ["0", "1"] {
        common::check(&mut a, &[(&["SELECT", db], common::ok())]).await;
        if let resp::Frame::Bulk(n) = a.cmd(&["GET", "n"]).await {
            total += String::from_utf8_lossy(&n).parse::<usize>().unwrap();
        }
    }
    assert_eq!(total, CLIENTS * INCRS);
}

async fn query(c: &mut common::Raw, sql: &str) -> resp::Frame {
    c.cmd(&["SQL.QUERY", sql]).await
}

/// A reply's rows as text (bulk strings, integers, nil as "nil").
fn table(f: &resp::Frame) -> Vec<Vec<String>> {
    let cell = |v: &resp::Frame| match v {
        resp::Frame::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
        resp::Frame::Integer(i) => i.to_string(),
        resp::Frame::Null => "nil".to_string(),
        other => panic!("a value: {other:?}"),
    };
    match f {
        resp::Frame::Array(rows) => rows
            .iter()
            .map(|r| match r {
                resp::Frame::Array(vs) => vs.iter().map(cell).collect(),
                other => panic!("a row: {other:?}"),
            })
            .collect(),
        other => panic!("rows: {other:?}"),
    }
}

/// The rows of a one-column reply.
fn column(f: &resp::Frame) -> Vec<String> {
    table(f).into_iter().map(|mut r| r.remove(0)).collect()
}

fn strings(f: &resp::Frame) -> Vec<String> {
    match f {
        resp::Frame::Array(items) => items
            .iter()
            .map(|i| match i {
                resp::Frame::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
                other => panic!("a bulk string: {other:?}"),
            })
            .collect(),
        other => panic!("an array: {other:?}"),
    }
}

/// SQL.* over PostgreSQL (ARCHITECTURE.md 10.1): the redis_* views show, on either node, what
/// the Redis commands answer for every type and encoding Relis stores (the payloads' decoders
/// in PL/pgSQL), user tables and prepared statements are shared by the nodes, and the user's
/// SQL runs as a sandbox role that cannot touch Relis's tables, lift its time limit, or leave
/// anything behind in its pooled session.
#[tokio::test]
async fn sql_runs_on_postgres_with_views_of_the_keys_both_nodes_share() {
    let Some(c) = cluster() else { return };
    let mut a = common::Raw::connect(c.nodes[0].addr()).await;
    let mut b = common::Raw::connect(c.nodes[1].addr()).await;
    let long = "abc".repeat(400);
    let mut big_hash = vec!["HSET", "bighash"];
    let fields: Vec<String> = (0..300).map(|i| format!("f{i}")).collect();
    for f in &fields {
        big_hash.extend([f.as_str(), f.as_str()]);
    }
    let items: Vec<String> = (0..3000)
        .map(|i| format!("item-{i}-{}", "x".repeat(i % 7)))
        .collect();
    let mut big_list = vec!["RPUSH", "biglist"];
    big_list.extend(items.iter().map(String::as_str));
    let members: Vec<String> = (0..200).map(|i| format!("m{i}")).collect();
    let mut big_zset = vec!["ZADD", "bigzset"];
    let scores: Vec<String> = (0..200)
        .map(|i| format!("{}", i as f64 / 4.0 - 7.0))
        .collect();
    for (m, s) in members.iter().zip(&scores) {
        big_zset.extend([s.as_str(), m.as_str()]);
    }
    let mut big_set = vec!["SADD", "bigset"];
    big_set.extend(members.iter().map(String::as_str));
    for line in [
        &["SET", "s:text", "héllo"][..],
        &["SET", "s:int", "-12345"],
        &["SET", "s:long", &long],
        &["SET", "s:gone", "v", "PX", "1"],
        &["HSET", "hash", "f1", "v1", "f2", "22"],
        &big_hash,
        &["RPUSH", "list", "a", "-400", "70000", "5000000000"],
        &big_list,
        &["SADD", "intset", "3", "1", "2"],
        &big_set,
        &["ZADD", "zset", "1.5", "a", "-2", "b", "inf", "c"],
        &big_zset,
        &[
            "GEOADD",
            "geo",
            "13.361389",
            "38.115556",
            "Palermo",
            "15.087269",
            "37.502669",
            "Catania",
        ],
        &["SELECT", "3"],
        &["SET", "in3", "x"],
    ] {
        let reply = common::raw(&mut a, line).await;
        assert!(!reply.starts_with('-'), "{line:?}: {reply}");
    }
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    // Keys, their types and sizes; expired keys hidden; other databases shown.
    assert_eq!(
        table(
            &query(
                &mut b,
                "SELECT db, key, type, count FROM redis_keys ORDER BY db, key"
            )
            .await
        ),
        [
            ["0", "bighash", "hash", "300"],
            ["0", "biglist", "list", "3000"],
            ["0", "bigset", "set", "200"],
            ["0", "bigzset", "zset", "200"],
            ["0", "geo", "zset", "2"],
            ["0", "hash", "hash", "2"],
            ["0", "intset", "set", "3"],
            ["0", "list", "list", "4"],
            ["0", "s:int", "string", "1"],
            ["0", "s:long", "string", "1"],
            ["0", "s:text", "string", "1"],
            ["0", "zset", "zset", "3"],
            ["3", "in3", "string", "1"],
        ]
        .map(|r| r.map(String::from).to_vec())
        .to_vec()
    );
    // Strings: raw, integer-encoded and LZF-compressed payloads.
    assert_eq!(
        table(
            &query(
                &mut b,
                "SELECT key, value FROM redis_strings WHERE db = 0 ORDER BY key"
            )
            .await
        ),
        vec![
            vec!["s:int".to_string(), "-12345".to_string()],
            vec!["s:long".to_string(), long.clone()],
            vec!["s:text".to_string(), "héllo".to_string()],
        ]
    );
    // Hashes (listpack and hashtable), lists (listpack nodes, several of them), sets (intset
    // and plain), sorted sets (listpack and skiplist), each as the commands answer.
    let hgetall = strings(&b.cmd(&["HGETALL", "bighash"]).await);
    let mut want: Vec<String> = hgetall
        .chunks(2)
        .map(|p| format!("{}={}", p[0], p[1]))
        .collect();
    want.sort();
    let mut got = column(
        &query(
            &mut b,
            "SELECT field || '=' || value FROM redis_hashes WHERE key = 'bighash'",
        )
        .await,
    );
    got.sort();
    assert_eq!(got, want);
    assert_eq!(
        table(
            &query(
                &mut b,
                "SELECT field, value FROM redis_hashes WHERE key = 'hash' ORDER BY field"
            )
            .await
        ),
        [["f1", "v1"], ["f2", "22"]]
            .map(|r| r.map(String::from).to_vec())
            .to_vec()
    );
    for key in ["list", "biglist"] {
        let sql = format!("SELECT value FROM redis_lists WHERE key = '{key}' ORDER BY idx");
        assert_eq!(
            column(&query(&mut b, &sql).await),
            strings(&b.cmd(&["LRANGE", key, "0", "-1"]).await),
            "{key}"
        );
    }
    for key in ["intset", "bigset"] {
        let sql = format!("SELECT member FROM redis_sets WHERE key = '{key}' ORDER BY member");
        let mut want = strings(&b.cmd(&["SMEMBERS", key]).await);
        want.sort();
        assert_eq!(column(&query(&mut b, &sql).await), want, "{key}");
    }
    for key in ["zset", "bigzset"] {
        let sql = format!("SELECT member, score::text FROM redis_zsets z WHERE key = '{key}' ORDER BY z.score, member");
        let want: Vec<Vec<String>> =
            strings(&b.cmd(&["ZRANGE", key, "0", "-1", "WITHSCORES"]).await)
                .chunks(2)
                .map(|p| {
                    let score: f64 = p[1].parse().unwrap();
                    vec![
                        p[0].clone(),
                        if score.is_infinite() {
                            "Infinity".into()
                        } else {
                            score.to_string()
                        },
                    ]
                })
                .collect();
        assert_eq!(table(&query(&mut b, &sql).await), want, "{key}");
    }
    // Geo positions as GEOPOS decodes them.
    let geo = table(
        &query(
            &mut b,
            "SELECT member, longitude, latitude FROM redis_geo WHERE key = 'geo' ORDER BY member",
        )
        .await,
    );
    let pos = strings(
        &match b.cmd(&["GEOPOS", "geo", "Catania", "Palermo"]).await {
            resp::Frame::Array(p) => resp::Frame::Array(
                p.into_iter()
                    .flat_map(|x| match x {
                        resp::Frame::Array(v) => v,
                        other => panic!("{other:?}"),
                    })
                    .collect(),
            ),
            other => panic!("{other:?}"),
        },
    );
    assert_eq!(geo.len(), 2);
    for (i, row) in geo.iter().enumerate() {
        for (j, v) in row[1..].iter().enumerate() {
            let (x, y): (f64, f64) = (v.parse().unwrap(), pos[2 * i + j].parse().unwrap());
            assert!((x - y).abs() < 1e-9, "{row:?} {pos:?}");
        }
    }

    // User tables, parameters (bound as text, parsed for the inferred type), prepared
    // statements: shared by the nodes.
    common::check(
        &mut a,
        &[
            (&["SQL.EXEC", "CREATE TABLE people (id int PRIMARY KEY, name text, born date, tags text[], score numeric)"], common::ok()),
            (&["SQL.EXEC", "INSERT INTO people VALUES ($1, $2, $3, $4, $5)", "1", "ada", "1815-12-10", "{math,poet}", "2.5"], common::int(1)),
            (&["SQL.PREPARE", "by_id", "SELECT name, born, tags, score FROM people WHERE id = $1"], common::ok()),
        ],
    )
    .await;
    common::check(
        &mut b,
        &[
            (&["SQL.EXEC", "INSERT INTO people (id, name) VALUES ($1, $2), ($3, $4)", "2", "bob", "3", "cy"], common::int(2)),
            (&["SQL.RUN", "by_id", "1"], common::arr(vec![common::arr(vec![common::bulk("ada"), common::bulk("1815-12-10"), common::bulk("{math,poet}"), common::bulk("2.5")])])),
            (&["SQL.QUERY", "SELECT count(*), sum(id), max(name) FROM people"], common::arr(vec![common::arr(vec![common::int(3), common::int(6), common::bulk("cy")])])),
            (&["SQL.EXEC", "UPDATE people SET name = upper(name) WHERE id > $1", "1"], common::int(2)),
            (&["SQL.QUERY", "SELECT p.name, k.type FROM people p JOIN redis_keys k ON k.key = 's:' || p.name WHERE p.id = 1"], common::arr(vec![])),
            (&["SQL.STATEMENTS"], common::arr(vec![common::arr(vec![common::bulk("by_id"), common::bulk("SELECT name, born, tags, score FROM people WHERE id = $1"), common::int(1), common::int(1)])])),
            (&["SQL.UNPREPARE", "by_id"], common::int(1)),
            (&["SQL.RUN", "by_id", "1"], common::err("ERR no prepared statement named 'by_id'")),
            (&["SQL.QUERY", "INSERT INTO people (id) VALUES (9)"], common::err("ERR statement would write: only reads are allowed here")),
            (&["SQL.QUERY", "SELECT $1"], common::err("ERR wrong number of parameters: the statement takes 1, got 0")),
            (&["SQL.QUERY", "SELECT 1; SELECT 2"], common::err("ERR only one statement is allowed here (parameters bind to one statement)")),
            (&["SQL.EXEC", "CREATE TABLE t1 (a int); CREATE TABLE t2 (b int)"], common::ok()),
            (&["SQL.QUERY", "SELECT count(*) FROM t1, t2"], common::arr(vec![common::arr(vec![common::int(0)])])),
        ],
    )
    .await;
    // Morphs: the query runs on PostgreSQL, its rows become keys (locked and written back as
    // any write), seen by the other node.
    common::check(
        &mut a,
        &[
            (&["SELECT", "0"], common::ok()),
            (
                &[
                    "SQL.TOHASH",
                    "person:{id}",
                    "SELECT id, name, score FROM people ORDER BY id",
                ],
                common::int(3),
            ),
            (
                &[
                    "SQL.TOZSET",
                    "REPLACE",
                    "EX",
                    "100",
                    "board",
                    "SELECT name, id FROM people",
                ],
                common::int(3),
            ),
        ],
    )
    .await;
    common::check(
        &mut a,
        &[(
            &["SQL.TOHASH", "s:text", "SELECT 1 AS f"],
            common::err("WRONGTYPE Operation against a key holding the wrong kind of value"),
        )],
    )
    .await;
    common::check(
        &mut b,
        &[
            (
                &["HGETALL", "person:1"],
                common::bulks(&["name", "ada", "score", "2.5"]),
            ),
            (&["HGETALL", "person:3"], common::bulks(&["name", "CY"])),
            (
                &["ZRANGE", "board", "0", "-1", "WITHSCORES"],
                common::bulks(&["ada", "1", "BOB", "2", "CY", "3"]),
            ),
            (&["GET", "s:text"], common::bulk("héllo")),
        ],
    )
    .await;
    // Redis to rows: SQL.FROMHASH lists the keys in the shared table, loads them, upserts a
    // row per hash (columns typed from the values); SQL.FROMSTREAM an entry per row.
    common::check(
        &mut b,
        &[
            (
                &["XADD", "events", "5-1", "kind", "click", "n", "3"],
                common::bulk("5-1"),
            ),
            (
                &["XADD", "events", "5-2", "kind", "view"],
                common::bulk("5-2"),
            ),
            (&["SQL.FROMHASH", "person_rows", "person:*"], common::int(3)),
            (&["SQL.FROMSTREAM", "event_rows", "events"], common::int(2)),
        ],
    )
    .await;
    common::check(
        &mut a,
        &[
            (
                &[
                    "SQL.QUERY",
                    "SELECT key, name, score FROM person_rows ORDER BY key",
                ],
                common::arr(vec![
                    common::arr(vec![
                        common::bulk("person:1"),
                        common::bulk("ada"),
                        common::bulk("2.5"),
                    ]),
                    common::arr(vec![
                        common::bulk("person:2"),
                        common::bulk("BOB"),
                        common::nil(),
                    ]),
                    common::arr(vec![
                        common::bulk("person:3"),
                        common::bulk("CY"),
                        common::nil(),
                    ]),
                ]),
            ),
            (
                &[
                    "SQL.QUERY",
                    "SELECT id, kind, n FROM event_rows ORDER BY id",
                ],
                common::arr(vec![
                    common::arr(vec![
                        common::bulk("5-1"),
                        common::bulk("click"),
                        common::int(3),
                    ]),
                    common::arr(vec![
                        common::bulk("5-2"),
                        common::bulk("view"),
                        common::nil(),
                    ]),
                ]),
            ),
            // The stream's entries through its view: deleted ones hidden, entries with the
            // master entry's fields and others alike.
            (&["XADD", "events", "7-0", "kind", "click", "n", "4"], common::bulk("7-0")),
            (&["XDEL", "events", "5-2"], common::int(1)),
            (
                &[
                    "SQL.QUERY",
                    "SELECT id, ms, seq, fields::text FROM redis_streams WHERE key = 'events' ORDER BY ms, seq",
                ],
                common::arr(vec![
                    common::arr(vec![common::bulk("5-1"), common::int(5), common::int(1), common::bulk(r#"["kind","click","n","3"]"#)]),
                    common::arr(vec![common::bulk("7-0"), common::int(7), common::int(0), common::bulk(r#"["kind","click","n","4"]"#)]),
                ]),
            ),
            (
                &["SQL.QUERY", "SELECT type, count FROM redis_keys WHERE key = 'events'"],
                common::arr(vec![common::arr(vec![common::bulk("stream"), common::int(2)])]),
            ),
            (&["HSET", "person:1", "age", "36"], common::int(1)),
            (&["SQL.FROMHASH", "person_rows", "person:1"], common::int(1)),
            (
                &[
                    "SQL.QUERY",
                    "SELECT age + 1 FROM person_rows WHERE key = 'person:1'",
                ],
                common::arr(vec![common::arr(vec![common::int(37)])]),
            ),
        ],
    )
    .await;
    assert_ttl(&mut b, "TTL", "board", 91..=100).await;
    // The sandbox: no access to Relis's tables, no way back to the backend's user, no
    // setting that outlives its command, no named databases, nothing inside MULTI.
    let denied = common::err;
    common::check(
        &mut a,
        &[
            (&["SQL.QUERY", "SELECT count(*) FROM relis_keys"], denied("ERR permission denied for table relis_keys")),
            (&["SQL.EXEC", "DELETE FROM relis_keys"], denied("ERR permission denied for table relis_keys")),
            // The bus's channel is a secret: the sandbox can neither listen to the nodes nor
            // forge their messages.
            (
                &["SQL.QUERY", "SELECT name FROM relis_bus_channel"],
                denied("ERR permission denied for table relis_bus_channel"),
            ),
            (&["SQL.EXEC", "DROP VIEW redis_keys"], denied("ERR must be owner of view redis_keys")),
            (&["SQL.EXEC", "RESET ROLE"], common::ok()),
            (&["SQL.EXEC", "SET search_path = pg_catalog"], common::ok()),
            (&["SQL.QUERY", "SELECT current_user = session_user, current_user LIKE 'relis_sql_%', count(*) FROM people"], common::arr(vec![common::arr(vec![common::int(1), common::int(1), common::int(3)])])),
            (&["SQL.EXEC", "DB", "x", "SELECT 1"], common::err("ERR named SQL databases are not available on the PostgreSQL backend")),
            (&["MULTI"], common::ok()),
            (&["SQL.QUERY", "SELECT 1"], common::simple("QUEUED")),
            (&["EXEC"], common::arr(vec![common::err("ERR SQL.QUERY cannot run inside MULTI or a script on the PostgreSQL backend")])),
            (&["CONFIG", "SET", "sql-time-limit", "300"], common::ok()),
        ],
    )
    .await;
    // The time limit holds, even for a batch that commits and lifts the session's own.
    for sql in [
        "SELECT pg_sleep(5)",
        "SELECT set_config('statement_timeout', '0', false), pg_sleep(5)",
    ] {
        let started = std::time::Instant::now();
        assert_eq!(
            a.cmd(&["SQL.QUERY", sql]).await,
            common::err("ERR statement interrupted after 300 ms (sql-time-limit): its changes were rolled back"),
            "{sql}"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(3),
            "{sql}"
        );
    }
    let started = std::time::Instant::now();
    let reply = a
        .cmd(&[
            "SQL.EXEC",
            "COMMIT; SET statement_timeout = 0; SELECT pg_sleep(5)",
        ])
        .await;
    assert!(matches!(reply, resp::Frame::Error(_)), "{reply:?}");
    assert!(started.elapsed() < std::time::Duration::from_secs(3));
    // A user who may not read every key may not run SQL here (the views show every key).
    common::check(
        &mut a,
        &[
            (&["ACL", "SETUSER", "some", "on", "nopass", "~s:*", "+@all"], common::ok()),
            (&["AUTH", "some", "x"], common::ok()),
            (&["SQL.QUERY", "SELECT 1"], common::err("ERR SQL on the PostgreSQL backend needs a user that may read every key (its views show them all)")),
        ],
    )
    .await;
}

/// The next push on `c` within `ms`, if any.
async fn push_within(c: &mut common::Raw, ms: u64) -> Option<resp::Frame> {
    tokio::time::timeout(std::time::Duration::from_millis(ms), c.read())
        .await
        .ok()
        .flatten()
}

/// Client-side caching across nodes: a node with tracking clients says so on the bus, and
/// then the other nodes' writes tell it what they change, so its clients get their
/// invalidation messages (key by key, and the null one for a flush) whichever node wrote.
#[tokio::test]
async fn tracking_clients_hear_of_writes_made_through_the_other_node() {
    let Some(c) = cluster() else { return };
    let mut a = common::Raw::connect(c.nodes[0].addr()).await;
    let mut b = common::Raw::connect(c.nodes[1].addr()).await;
    assert!(matches!(b.cmd(&["HELLO", "3"]).await, resp::Frame::Map(_)));
    common::check(
        &mut b,
        &[
            (&["CLIENT", "TRACKING", "on"], common::ok()),
            (&["GET", "k"], common::nil()),
        ],
    )
    .await;
    let invalidate_k = resp::Frame::Push(vec![
        common::bulk("invalidate"),
        common::arr(vec![common::bulk("k")]),
    ]);
    // B told A of its tracking client when it turned tracking on: the first write through A
    // normally suffices; the bus may take a moment.
    let mut heard = None;
    for _ in 0..50 {
        assert_eq!(a.cmd(&["SET", "k", "v"]).await, common::ok());
        heard = push_within(&mut b, 100).await;
        if heard.is_some() {
            break;
        }
    }
    assert_eq!(heard, Some(invalidate_k.clone()));
    // Read again (tracked again), written again through A: invalidated again, once.
    assert_eq!(b.cmd(&["GET", "k"]).await, common::bulk("v"));
    assert_eq!(a.cmd(&["INCR", "n"]).await, common::int(1));
    assert_eq!(a.cmd(&["APPEND", "k", "w"]).await, common::int(2));
    assert_eq!(push_within(&mut b, 2000).await, Some(invalidate_k));
    // A flush through A: the null invalidation.
    assert_eq!(a.cmd(&["FLUSHALL"]).await, common::ok());
    assert_eq!(
        push_within(&mut b, 2000).await,
        Some(resp::Frame::Push(vec![
            common::bulk("invalidate"),
            resp::Frame::Null
        ]))
    );
    assert_eq!(push_within(&mut b, 300).await, None);
}

/// The bus is at most once: what other nodes send while a node's listening connection to
/// PostgreSQL is down is lost to it. So a node whose listener connects again gives its
/// tracking clients the null invalidation (and tries its blocked clients again): a cached
/// value is never kept past a change the node may not have heard of.
#[tokio::test]
async fn a_node_whose_bus_listener_reconnects_flushes_its_tracking_clients() {
    let Some(c) = cluster() else { return };
    let mut b = common::Raw::connect(c.nodes[1].addr()).await;
    assert!(matches!(b.cmd(&["HELLO", "3"]).await, resp::Frame::Map(_)));
    common::check(
        &mut b,
        &[
            (&["CLIENT", "TRACKING", "on"], common::ok()),
            (&["GET", "k"], common::nil()),
        ],
    )
    .await;
    // Nothing is written anywhere: only the reconnect can invalidate.
    assert_eq!(push_within(&mut b, 300).await, None);
    // The nodes' listeners are the connections whose last statement was LISTEN.
    let cut = c._pg.psql(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
         WHERE query LIKE 'LISTEN %' AND pid <> pg_backend_pid()",
    );
    assert_eq!(cut.trim(), "2", "two listening connections");
    assert_eq!(
        push_within(&mut b, 5000).await,
        Some(resp::Frame::Push(vec![
            common::bulk("invalidate"),
            resp::Frame::Null
        ]))
    );
    // The node works on: a write through it answers.
    assert_eq!(b.cmd(&["SET", "k", "v"]).await, common::ok());
}

/// SORT with BY and GET patterns over PostgreSQL: a first read finds the keys the patterns name,
/// then the sort runs declaring them, so it reads what another node wrote there (and STORE
/// writes for every node); inside MULTI, where that cannot be done, it is refused.
#[tokio::test]
async fn sort_by_and_get_read_the_keys_their_patterns_name() {
    let Some(c) = cluster() else { return };
    let mut a = common::Raw::connect(c.nodes[0].addr()).await;
    let mut b = common::Raw::connect(c.nodes[1].addr()).await;
    for line in [
        &["RPUSH", "ids", "3", "1", "2"][..],
        &["MSET", "w_1", "30", "w_2", "10", "w_3", "20"],
        &["HSET", "obj_1", "name", "one"],
        &["HSET", "obj_2", "name", "two"],
        &["HSET", "obj_3", "name", "three"],
    ] {
        let reply = common::raw(&mut a, line).await;
        assert!(!reply.starts_with('-'), "{line:?}: {reply}");
    }
    common::check(
        &mut b,
        &[
            (
                &["SORT", "ids", "BY", "w_*"],
                common::bulks(&["2", "3", "1"]),
            ),
            (
                &["SORT_RO", "ids", "BY", "w_*", "DESC"],
                common::bulks(&["1", "3", "2"]),
            ),
            (
                &[
                    "SORT",
                    "ids",
                    "BY",
                    "w_*",
                    "GET",
                    "#",
                    "GET",
                    "obj_*->name",
                    "LIMIT",
                    "1",
                    "2",
                ],
                common::bulks(&["3", "three", "1", "one"]),
            ),
            (
                &[
                    "SORT",
                    "ids",
                    "BY",
                    "nosort",
                    "GET",
                    "w_*",
                    "GET",
                    "missing_*",
                ],
                common::arr(vec![
                    common::bulk("20"),
                    common::nil(),
                    common::bulk("30"),
                    common::nil(),
                    common::bulk("10"),
                    common::nil(),
                ]),
            ),
            (
                &["SORT", "ids", "BY", "obj_*->name", "ALPHA", "STORE", "out"],
                common::int(3),
            ),
            (
                &["SORT", "obj_1", "BY", "w_*"],
                common::err("WRONGTYPE Operation against a key holding the wrong kind of value"),
            ),
            (&["MULTI"], common::ok()),
            (
                &["SORT", "ids", "BY", "w_*"],
                common::err("ERR 'sort' is not supported with the postgres backend yet"),
            ),
            (
                &["EXEC"],
                common::err("EXECABORT Transaction discarded because of previous errors."),
            ),
        ],
    )
    .await;
    common::check(
        &mut a,
        &[(
            &["LRANGE", "out", "0", "-1"],
            common::bulks(&["1", "3", "2"]),
        )],
    )
    .await;
}

/// MIGRATE over PostgreSQL: the keys it names are declared (loaded to be dumped, locked to be
/// deleted), so a key moves from the shared keyspace to another server, gone for every node.
#[tokio::test]
async fn migrate_moves_keys_out_of_the_shared_keyspace() {
    let Some(c) = cluster() else { return };
    let dir = tempfile::tempdir().unwrap();
    let target = spawn_binary(dir.path(), &[]);
    let mut a = common::Raw::connect(c.nodes[0].addr()).await;
    let mut b = common::Raw::connect(c.nodes[1].addr()).await;
    let mut t = common::Raw::connect(target.addr()).await;
    let port = target.addr().port().to_string();
    common::check(
        &mut a,
        &[
            (&["RPUSH", "l", "x", "y"], common::int(2)),
            (&["SET", "s", "v", "EX", "100"], common::ok()),
            (&["SET", "kept", "v"], common::ok()),
        ],
    )
    .await;
    common::check(
        &mut b,
        &[
            (
                &[
                    "MIGRATE",
                    "127.0.0.1",
                    &port,
                    "",
                    "0",
                    "5000",
                    "KEYS",
                    "l",
                    "s",
                    "none",
                ],
                common::ok(),
            ),
            (
                &["MIGRATE", "127.0.0.1", &port, "kept", "0", "5000", "COPY"],
                common::ok(),
            ),
            (
                &["MIGRATE", "127.0.0.1", &port, "none", "0", "5000"],
                common::simple("NOKEY"),
            ),
        ],
    )
    .await;
    common::check(&mut a, &[(&["EXISTS", "l", "s", "kept"], common::int(1))]).await;
    common::check(
        &mut t,
        &[
            (&["LRANGE", "l", "0", "-1"], common::bulks(&["x", "y"])),
            (&["GET", "s"], common::bulk("v")),
            (&["GET", "kept"], common::bulk("v")),
        ],
    )
    .await;
    assert_ttl(&mut t, "TTL", "s", 91..=100).await;
}

/// `relis-server --backend postgres://... --export out.rdb`: the shared keyspace (every type,
/// expiries, several databases, function libraries) as an RDB file redis-server loads, written
/// from the stored DUMP payloads as they are, while the nodes keep running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_writes_the_shared_keyspace_as_an_rdb_file_redis_loads() {
    let Some(c) = cluster() else { return };
    if common::redis_server().is_none() {
        return;
    }
    let mut a = common::Raw::connect(c.nodes[0].addr()).await;
    let big: Vec<String> = (0..300).map(|i| format!("m{i}")).collect();
    let mut big_set = vec!["SADD", "bigset"];
    big_set.extend(big.iter().map(String::as_str));
    let long = "xyz".repeat(100);
    for line in [
        &["SET", "s", &long][..],
        &["SET", "n", "42", "EX", "1000"],
        &["RPUSH", "l", "a", "b", "3"],
        &["HSET", "h", "f", "v"],
        &["ZADD", "z", "1.5", "a"],
        &["SADD", "is", "1", "2"],
        &big_set,
        &["XADD", "x", "1-1", "k", "v"],
        &["SET", "gone", "v", "PX", "1"],
        &["SELECT", "5"],
        &["SET", "in5", "five"],
        &["SELECT", "0"],
        &[
            "FUNCTION",
            "LOAD",
            "#!lua name=lib\nredis.register_function('hello', function() return 'hi' end)",
        ],
    ] {
        let reply = common::raw(&mut a, line).await;
        assert!(!reply.starts_with('-'), "{line:?}: {reply}");
    }
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.rdb");
    let uri = c._pg.uri();
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_relis-server"))
        .args(["--backend", &uri, "--export"])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    assert!(!dir.path().join("out.rdb.tmp").exists());
    let redis = common::spawn_redis_with(dir.path(), &["--dbfilename", "out.rdb"]).unwrap();
    let mut r = common::Raw::connect(redis.addr()).await;
    // The same values (not the same DUMP bytes: the two LZF encoders pick other matches).
    for cmd in [
        &["GET", "s"][..],
        &["GET", "n"],
        &["LRANGE", "l", "0", "-1"],
        &["HGETALL", "h"],
        &["ZRANGE", "z", "0", "-1", "WITHSCORES"],
        &["SMISMEMBER", "is", "1", "2", "3"],
        &["SCARD", "bigset"],
        &["SMISMEMBER", "bigset", "m0", "m299", "m300"],
        &["XRANGE", "x", "-", "+"],
    ] {
        assert_eq!(r.cmd(cmd).await, a.cmd(cmd).await, "{cmd:?}");
    }
    common::check(
        &mut r,
        &[
            (&["DBSIZE"], common::int(8)),
            (&["EXISTS", "gone"], common::int(0)),
            (&["FCALL", "hello", "0"], common::bulk("hi")),
            (&["SELECT", "5"], common::ok()),
            (&["GET", "in5"], common::bulk("five")),
        ],
    )
    .await;
    assert_eq!(r.cmd(&["SELECT", "0"]).await, common::ok());
    assert_ttl(&mut r, "TTL", "n", 991..=1000).await;
}

/// DEBUG DIGEST on a node digests the whole shared keyspace: the same on both nodes and the
/// same as a SQLite server's after the same writes (every type, an expiry, another database,
/// DEBUG POPULATE);
/// DEBUG DIGEST-VALUE reads the keys it names; DEBUG RELOAD checks that every stored value
/// loads. SAVE and BGSAVE write the shared keyspace as an RDB file into the node's own `dir`
/// (recorded by LASTSAVE and INFO persistence), which `--import` loads into a SQLite server
/// with the same digest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn save_and_debug_digest_cover_the_shared_keyspace() {
    let Some(c) = cluster() else { return };
    let lone_dir = tempfile::tempdir().unwrap();
    let lone = spawn_binary(lone_dir.path(), &["--enable-debug-command", "local"]);
    let mut a = common::Raw::connect(c.nodes[0].addr()).await;
    let mut b = common::Raw::connect(c.nodes[1].addr()).await;
    let mut s = common::Raw::connect(lone.addr()).await;
    let zero = common::simple(&"0".repeat(40));
    for con in [&mut a, &mut b, &mut s] {
        common::check(con, &[(&["DEBUG", "DIGEST"], zero.clone())]).await;
    }
    let big: Vec<String> = (0..200).map(|i| format!("m{i}")).collect();
    let mut big_set = vec!["SADD", "bigset"];
    big_set.extend(big.iter().map(String::as_str));
    let lines: &[&[&str]] = &[
        &["SET", "s", "text"],
        &["SET", "n", "42", "EX", "1000"],
        &["RPUSH", "l", "a", "b", "3"],
        &["HSET", "h", "f", "v", "g", "w"],
        &["ZADD", "z", "1.5", "a", "2", "b"],
        &["SADD", "is", "1", "2"],
        &big_set,
        &["XADD", "x", "1-1", "k", "v"],
        &["SET", "gone", "v", "PX", "1"],
        // More keys than one of its batches over PostgreSQL.
        &["DEBUG", "POPULATE", "1200", "p", "5"],
        &["SELECT", "3"],
        &["SET", "in3", "three"],
        &["SELECT", "0"],
    ];
    for (i, line) in lines.iter().enumerate() {
        // Half through each node (the SELECTs on both).
        let node = if i % 2 == 0 { &mut a } else { &mut b };
        for con in [node, &mut s] {
            let reply = common::raw(con, line).await;
            assert!(!reply.starts_with('-'), "{line:?}: {reply}");
        }
        if line[0] == "SELECT" {
            let other = if i % 2 == 0 { &mut b } else { &mut a };
            assert_eq!(other.cmd(line).await, common::ok());
        }
    }
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let digest = s.cmd(&["DEBUG", "DIGEST"]).await;
    assert_ne!(digest, zero);
    for con in [&mut a, &mut b] {
        assert_eq!(con.cmd(&["DEBUG", "DIGEST"]).await, digest);
        let values = &["DEBUG", "DIGEST-VALUE", "s", "n", "bigset", "x", "none"][..];
        assert_eq!(con.cmd(values).await, s.cmd(values).await);
    }
    // Nothing to reload: every value loads back; inside MULTI both are refused.
    common::check(
        &mut a,
        &[
            (&["DEBUG", "RELOAD"], common::ok()),
            (&["DBSIZE"], common::int(1208)),
            (&["GET", "p:1199"], common::bulk("value")),
            (&["MULTI"], common::ok()),
            (
                &["DEBUG", "DIGEST"],
                common::err("ERR 'debug' is not supported with the postgres backend yet"),
            ),
            (
                &["DEBUG", "POPULATE", "10"],
                common::err("ERR 'debug' is not supported with the postgres backend yet"),
            ),
            (
                &["EXEC"],
                common::err("EXECABORT Transaction discarded because of previous errors."),
            ),
        ],
    )
    .await;
    assert_eq!(a.cmd(&["DEBUG", "DIGEST"]).await, digest);

    // SAVE on one node, BGSAVE on the other: each writes its own directory's file.
    let resp::Frame::Integer(before) = b.cmd(&["LASTSAVE"]).await else {
        panic!("LASTSAVE answers an integer")
    };
    common::check(&mut b, &[(&["SAVE"], common::ok())]).await;
    let saved = c._dirs[1].path().join("relis.db.rdb");
    assert!(saved.exists());
    assert!(!c._dirs[1].path().join("relis.db.rdb.tmp").exists());
    assert_eq!(
        common::info_field(&mut b, "persistence", "rdb_saves").await,
        "1"
    );
    assert_eq!(
        common::info_field(&mut b, "persistence", "rdb_last_bgsave_status").await,
        "ok"
    );
    let resp::Frame::Integer(after) = b.cmd(&["LASTSAVE"]).await else {
        panic!("LASTSAVE answers an integer")
    };
    assert!(after >= before, "{after} {before}");
    common::check(
        &mut a,
        &[(&["BGSAVE"], common::simple("Background saving started"))],
    )
    .await;
    for _ in 0..200 {
        if common::info_field(&mut a, "persistence", "rdb_saves").await == "1" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        common::info_field(&mut a, "persistence", "rdb_saves").await,
        "1"
    );
    assert!(c._dirs[0].path().join("relis.db.rdb").exists());

    // The file holds the shared keyspace: imported into a SQLite server, the same digest.
    let imported = tempfile::tempdir().unwrap();
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_relis-server"))
        .arg("--dir")
        .arg(imported.path())
        .arg("--import")
        .arg(&saved)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let loaded = spawn_binary(imported.path(), &["--enable-debug-command", "local"]);
    let mut l = common::Raw::connect(loaded.addr()).await;
    assert_eq!(l.cmd(&["DEBUG", "DIGEST"]).await, digest);
}

/// Runs `relis-server --backend <uri> --import <file>`; whether it succeeded.
fn import_into(uri: &str, file: &std::path::Path) -> bool {
    let dir = tempfile::tempdir().unwrap();
    std::process::Command::new(env!("CARGO_BIN_EXE_relis-server"))
        .arg("--dir")
        .arg(dir.path())
        .args(["--backend", uri, "--import"])
        .arg(file)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap()
        .success()
}

/// `relis-server --backend postgres://... --import dump.rdb` loads a file redis-server saved
/// (every type, expiries, two databases, a function library, more keys than one batch) into
/// the shared keyspace while the nodes run: both read it, with redis-server's DEBUG DIGEST;
/// a key of the same name is replaced, other keys stay; a truncated file writes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn import_loads_an_rdb_file_into_the_shared_keyspace() {
    let Some(c) = cluster() else { return };
    let rdir = tempfile::tempdir().unwrap();
    let Some(redis) = common::spawn_redis_with(rdir.path(), &["--enable-debug-command", "yes"])
    else {
        return;
    };
    let mut r = common::Raw::connect(redis.addr()).await;
    let mut a = common::Raw::connect(c.nodes[0].addr()).await;
    let mut b = common::Raw::connect(c.nodes[1].addr()).await;
    let big: Vec<String> = (0..300).map(|i| format!("m{i}")).collect();
    let mut big_set = vec!["SADD", "bigset"];
    big_set.extend(big.iter().map(String::as_str));
    for line in [
        &["DEBUG", "POPULATE", "1200", "p"][..],
        &["SET", "s", "from the file"],
        &["SET", "n", "42", "EX", "1000"],
        &["RPUSH", "l", "a", "b", "3"],
        &["HSET", "h", "f", "v"],
        &["ZADD", "z", "1.5", "a", "2", "b"],
        &["SADD", "is", "1", "2"],
        &big_set,
        &["XADD", "x", "1-1", "k", "v"],
        &["SELECT", "2"],
        &["SET", "in2", "two"],
        &["SELECT", "0"],
        &[
            "FUNCTION",
            "LOAD",
            "#!lua name=lib\nredis.register_function('hello', function() return 'hi' end)",
        ],
        &["SAVE"],
    ] {
        let reply = common::raw(&mut r, line).await;
        assert!(!reply.starts_with('-'), "{line:?}: {reply}");
    }
    let file = rdir.path().join("dump.rdb");
    common::check(
        &mut a,
        &[
            (&["SET", "s", "before"], common::ok()),
            (&["SET", "kept", "v"], common::ok()),
        ],
    )
    .await;
    // A truncated file: nothing written.
    let bytes = std::fs::read(&file).unwrap();
    let cut = rdir.path().join("cut.rdb");
    std::fs::write(&cut, &bytes[..bytes.len() - 100]).unwrap();
    let uri = c._pg.uri();
    assert!(!import_into(&uri, &cut));
    common::check(
        &mut b,
        &[
            (&["DBSIZE"], common::int(2)),
            (&["GET", "s"], common::bulk("before")),
        ],
    )
    .await;

    assert!(import_into(&uri, &file));
    common::check(&mut r, &[(&["SET", "kept", "v"], common::ok())]).await;
    let digest = r.cmd(&["DEBUG", "DIGEST"]).await;
    for con in [&mut a, &mut b] {
        assert_eq!(con.cmd(&["DEBUG", "DIGEST"]).await, digest);
        common::check(
            con,
            &[
                (&["GET", "s"], common::bulk("from the file")),
                (&["GET", "kept"], common::bulk("v")),
                (&["GET", "p:1199"], common::bulk("value:1199")),
                (&["FCALL", "hello", "0"], common::bulk("hi")),
                (&["SELECT", "2"], common::ok()),
                (&["GET", "in2"], common::bulk("two")),
                (&["SELECT", "0"], common::ok()),
            ],
        )
        .await;
        assert_ttl(con, "TTL", "n", 991..=1000).await;
    }
}

/// Lazy expiry over PostgreSQL, the sweep off on both nodes: a key that expired is deleted by
/// the first read (GET, EXISTS) or write (SET) that finds it, on whichever node, with one
/// `expired` event, heard once by a subscriber on each node, however many clients of both
/// nodes find it at once; INFO expired_keys counts it once across the nodes.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn lazy_expiry_sends_one_expired_event_across_nodes() {
    let Some(c) = cluster() else { return };
    let mut a = common::Raw::connect(c.nodes[0].addr()).await;
    let mut b = common::Raw::connect(c.nodes[1].addr()).await;
    for node in [&mut a, &mut b] {
        common::check(
            node,
            &[
                (&["DEBUG", "SET-ACTIVE-EXPIRE", "0"], common::ok()),
                (
                    &["CONFIG", "SET", "notify-keyspace-events", "Ex"],
                    common::ok(),
                ),
            ],
        )
        .await;
    }
    let mut ev_a = common::Raw::connect(c.nodes[0].addr()).await;
    let mut ev_b = common::Raw::connect(c.nodes[1].addr()).await;
    for ev in [&mut ev_a, &mut ev_b] {
        common::send(ev, &["SUBSCRIBE", "link", "__keyevent@0__:expired"]).await;
        let _ = ev.read().await;
        let _ = ev.read().await;
    }
    until_linked(&mut a, &mut ev_b, "link").await;
    until_linked(&mut b, &mut ev_a, "link").await;
    // Drains the pings (each subscriber hears both nodes' publishes).
    for ev in [&mut ev_a, &mut ev_b] {
        while tokio::time::timeout(std::time::Duration::from_millis(300), ev.read())
            .await
            .is_ok()
        {}
    }

    const KEYS: usize = 100;
    for i in 0..KEYS {
        for k in [format!("r{i}"), format!("w{i}")] {
            common::check(&mut a, &[(&["SET", &k, "v", "PX", "50"], common::ok())]).await;
        }
    }
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    // Nobody sweeps.
    quiet(&mut ev_b).await;

    // Two clients on each node read every r key and write every w key at once.
    let mut tasks = Vec::new();
    for node in &c.nodes {
        for _ in 0..2 {
            let mut con = common::Raw::connect(node.addr()).await;
            tasks.push(tokio::spawn(async move {
                for i in 0..KEYS {
                    let (r, w) = (format!("r{i}"), format!("w{i}"));
                    assert_eq!(con.cmd(&["GET", &r]).await, common::nil());
                    assert_eq!(con.cmd(&["EXISTS", &r]).await, common::int(0));
                    assert_eq!(con.cmd(&["SET", &w, "new"]).await, common::ok());
                }
            }));
        }
    }
    for t in tasks {
        t.await.unwrap();
    }
    for ev in [&mut ev_a, &mut ev_b] {
        let mut seen = std::collections::BTreeSet::new();
        while seen.len() < 2 * KEYS {
            let m = pushed(ev).await;
            let resp::Frame::Array(parts) = m else {
                panic!("{m:?}")
            };
            assert_eq!(parts[1], common::bulk("__keyevent@0__:expired"));
            let resp::Frame::Bulk(key) = &parts[2] else {
                panic!("{parts:?}")
            };
            assert!(seen.insert(key.clone()), "expired twice: {key:?}");
        }
        quiet(ev).await;
    }
    let expired = common::info_int(&mut a, "stats", "expired_keys").await
        + common::info_int(&mut b, "stats", "expired_keys").await;
    assert_eq!(expired, 2 * KEYS as i64);
    common::check(
        &mut b,
        &[
            (&["GET", "w0"], common::bulk("new")),
            (&["TTL", "w0"], common::int(-1)),
            (&["DBSIZE"], common::int(KEYS as i64)),
        ],
    )
    .await;
}

/// Asserts that `cmd` (TTL or PTTL) of `key` on `con` answers an integer within `range`.
async fn assert_ttl(
    con: &mut common::Raw,
    cmd: &str,
    key: &str,
    range: std::ops::RangeInclusive<i64>,
) {
    let resp::Frame::Integer(ttl) = con.cmd(&[cmd, key]).await else {
        panic!("{cmd} answers an integer")
    };
    assert!(range.contains(&ttl), "{cmd} {key}: {ttl}");
}
