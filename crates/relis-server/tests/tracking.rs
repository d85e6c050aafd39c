//! Client-side caching (CLIENT TRACKING and friends) over TCP: the exact bytes of every reply
//! and push, compared with redis-server 7.0.15 where it is installed (the same steps run
//! against both), RESP2 and RESP3, default mode, BCAST with prefixes, OPTIN/OPTOUT, NOLOOP,
//! REDIRECT and its breaking, flushes, scripts, transactions, expiry and the SQL morph
//! commands.

mod common;
use common::transcript::*;
use common::*;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_mode_resp3_as_redis() {
    let t = differential(
        2,
        &[
            (0, &["#hello3"]),
            (0, &["CLIENT", "TRACKING", "on"]),
            (0, &["CLIENT", "GETREDIR"]),
            (0, &["CLIENT", "TRACKINGINFO"]),
            (0, &["GET", "k"]),
            (0, &["MGET", "k", "k2"]),
            (1, &["SET", "k", "1"]),
            (0, &["GET", "k"]),
            // Its own change: the reply, then the invalidation.
            (0, &["SET", "k", "2"]),
            (0, &["GET", "k"]),
            (1, &["MSET", "k", "x", "k2", "y"]),
            (0, &["GET", "t"]),
            (1, &["DEL", "nokey"]),
            (1, &["SET", "t", "1"]),
            (0, &["GET", "t"]),
            (1, &["SET", "t", "2", "NX"]),
            (1, &["EXPIRE", "t", "100"]),
            (0, &["GET", "t"]),
            (1, &["PERSIST", "t"]),
            (0, &["GET", "t"]),
            (1, &["LPUSH", "t", "x"]),
            (1, &["TOUCH", "t"]),
            (1, &["RENAME", "t", "t9"]),
            (0, &["GET", "t9"]),
            (1, &["MOVE", "t9", "1"]),
            // The table knows key names, not databases.
            (0, &["EXISTS", "y"]),
            (1, &["SELECT", "1"]),
            (1, &["SET", "y", "1"]),
            (0, &["TYPE", "h"]),
            (1, &["HSET", "h", "f", "1"]),
            (0, &["STRLEN", "h2"]),
            (1, &["HSET", "h2", "f", "1"]),
            (1, &["HSET", "h2", "f", "1"]),
            (0, &["SORT_RO", "l"]),
            (1, &["RPUSH", "l", "1"]),
            (0, &["KEYS", "k2*"]),
            (1, &["SET", "e1", "1"]),
            (0, &["GET", "f"]),
            (1, &["SELECT", "0"]),
            (1, &["FLUSHDB"]),
            (0, &["FLUSHALL"]),
            // A pipeline of its own writes: each reply, then the invalidation it caused.
            (0, &["MGET", "p1", "p2", "p3"]),
            (
                0,
                &[
                    "#pipe", "SET", "p1", "1", "|", "SET", "p2", "1", "|", "GET", "p3", "|", "SET",
                    "p3", "1",
                ],
            ),
            (0, &["GET", "s"]),
            (
                1,
                &[
                    "EVAL",
                    "redis.call('set','s','1') redis.call('set','s2','1')",
                    "0",
                ],
            ),
            (0, &["GET", "s"]),
            (0, &["GET", "s2"]),
            (1, &["MULTI"]),
            (1, &["SET", "s", "2"]),
            (1, &["SET", "s2", "2"]),
            (1, &["EXEC"]),
            (0, &["GET", "s"]),
            (0, &["GET", "s2"]),
            (0, &["MULTI"]),
            (0, &["SET", "s", "2"]),
            (0, &["SET", "s2", "2"]),
            (0, &["EXEC"]),
            (0, &["GET", "s"]),
            (
                0,
                &[
                    "EVAL",
                    "redis.call('set','s','1') return redis.call('get','s3')",
                    "0",
                ],
            ),
            (1, &["SET", "s3", "x"]),
            (0, &["EVAL", "return redis.call('get',KEYS[1])", "1", "s4"]),
            (1, &["SET", "s4", "x"]),
            (
                0,
                &["EVAL_RO", "return redis.call('get',KEYS[1])", "1", "s5"],
            ),
            (1, &["SET", "s5", "x"]),
            (0, &["MULTI"]),
            (0, &["GET", "m1"]),
            (0, &["EXEC"]),
            (1, &["SET", "m1", "x"]),
            (0, &["CLIENT", "TRACKING", "off"]),
            (0, &["CLIENT", "TRACKINGINFO"]),
            (0, &["CLIENT", "GETREDIR"]),
            (0, &["GET", "z"]),
            (1, &["SET", "z", "1"]),
        ],
        as_is,
    )
    .await;
    // What the differential pins, checked on Relis's own too (redis-server may be absent).
    assert!(
        t.contains(
            "0> SET k 2\n  0< +OK\\r\\n>2\\r\\n$10\\r\\ninvalidate\\r\\n*1\\r\\n$1\\r\\nk\\r\\n"
        ),
        "{t}"
    );
    assert!(
        t.contains("1> FLUSHDB\n  0< >2\\r\\n$10\\r\\ninvalidate\\r\\n_\\r\\n\n  1< +OK"),
        "{t}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirect_resp2_resp3_and_broken_as_redis() {
    differential(
        6,
        &[
            // 0: a RESP2 tracking client; 1: the writer; 2: its RESP2 redirect target.
            (0, &["CLIENT", "TRACKING", "on", "REDIRECT", "$ID2"]),
            (0, &["GET", "k"]),
            // Not subscribed: RESP2 has no way to tell it.
            (1, &["SET", "k", "1"]),
            (2, &["SUBSCRIBE", "__redis__:invalidate"]),
            (0, &["GET", "k"]),
            (0, &["GET", "k2"]),
            (1, &["MSET", "k", "1", "k2", "2"]),
            (1, &["FLUSHALL"]),
            (0, &["CLIENT", "TRACKINGINFO"]),
            (0, &["CLIENT", "GETREDIR"]),
            // A RESP3 target: pushes, and the RESP2 null of the tracking client on a flush.
            (3, &["#hello3"]),
            (0, &["CLIENT", "TRACKING", "on", "REDIRECT", "$ID3"]),
            (0, &["GET", "k"]),
            (1, &["SET", "k", "1"]),
            (1, &["FLUSHDB"]),
            (3, &["#close"]),
            (0, &["GET", "k"]),
            (1, &["SET", "k", "1"]),
            (0, &["CLIENT", "TRACKINGINFO"]),
            // A RESP3 tracking client hears that its redirection broke.
            (4, &["#hello3"]),
            (5, &["#hello3"]),
            (4, &["CLIENT", "TRACKING", "on", "REDIRECT", "$ID5"]),
            (5, &["#close"]),
            (4, &["GET", "k"]),
            (1, &["SET", "k", "1"]),
            (4, &["GET", "k"]),
            (1, &["SET", "k", "1"]),
            (1, &["FLUSHDB"]),
            (4, &["CLIENT", "TRACKINGINFO"]),
        ],
        as_is,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bcast_prefixes_and_noloop_as_redis() {
    differential(
        4,
        &[
            (0, &["#hello3"]),
            (
                0,
                &[
                    "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "b", "PREFIX", "a",
                ],
            ),
            (1, &["MSET", "b2", "1", "a1", "1", "zz", "1", "a0", "2"]),
            (0, &["MSET", "b2", "1", "a1", "1"]),
            (
                0,
                &["CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "c", "NOLOOP"],
            ),
            (0, &["CLIENT", "TRACKINGINFO"]),
            (0, &["SET", "c1", "1"]),
            (1, &["SET", "c1", "2"]),
            (1, &["FLUSHDB"]),
            (2, &["#hello3"]),
            (2, &["CLIENT", "TRACKING", "on", "BCAST", "NOLOOP"]),
            (2, &["MSET", "x", "1"]),
            (1, &["SET", "y", "1"]),
            (2, &["CLIENT", "TRACKINGINFO"]),
            (2, &["CLIENT", "TRACKING", "off"]),
            (1, &["SET", "y", "1"]),
            // RESP2 BCAST with a redirect target.
            (3, &["SUBSCRIBE", "__redis__:invalidate"]),
            (
                1,
                &[
                    "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "p:", "REDIRECT", "$ID3",
                ],
            ),
            (1, &["MSET", "p:2", "x", "q", "y", "p:1", "z"]),
            (1, &["CLIENT", "TRACKINGINFO"]),
        ],
        as_is,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn optin_optout_and_caching_as_redis() {
    differential(
        3,
        &[
            (0, &["#hello3"]),
            (0, &["CLIENT", "TRACKING", "on", "OPTIN"]),
            (0, &["GET", "o1"]),
            (0, &["CLIENT", "CACHING", "yes"]),
            (0, &["CLIENT", "TRACKINGINFO"]),
            (0, &["GET", "o2"]),
            (0, &["GET", "o3"]),
            (1, &["MSET", "o1", "1", "o2", "1", "o3", "1"]),
            (0, &["CLIENT", "CACHING", "YES"]),
            (0, &["MULTI"]),
            (0, &["GET", "o4"]),
            (0, &["GET", "o5"]),
            (0, &["EXEC"]),
            (1, &["MSET", "o4", "1", "o5", "1"]),
            (0, &["CLIENT", "CACHING", "yes"]),
            (0, &["CLIENT", "GETREDIR"]),
            (0, &["GET", "o6"]),
            (0, &["GET", "o7"]),
            (1, &["MSET", "o6", "1", "o7", "1"]),
            (0, &["CLIENT", "CACHING", "no"]),
            (0, &["CLIENT", "TRACKING", "on", "OPTOUT"]),
            (2, &["#hello3"]),
            (2, &["CLIENT", "TRACKING", "on", "OPTOUT"]),
            (2, &["GET", "p1"]),
            (2, &["CLIENT", "CACHING", "no"]),
            (2, &["CLIENT", "TRACKINGINFO"]),
            (2, &["GET", "p2"]),
            (2, &["GET", "p3"]),
            (1, &["MSET", "p1", "1", "p2", "1", "p3", "1"]),
            (2, &["CLIENT", "CACHING", "yes"]),
        ],
        as_is,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tracking_errors_as_redis() {
    differential(
        2,
        &[
            (0, &["CLIENT", "TRACKING", "on", "REDIRECT", "99999"]),
            (0, &["CLIENT", "TRACKING", "on", "REDIRECT", "abc"]),
            (
                0,
                &[
                    "CLIENT", "TRACKING", "on", "REDIRECT", "$ID1", "REDIRECT", "$ID1",
                ],
            ),
            (0, &["CLIENT", "TRACKING", "on", "REDIRECT", "99", "foo"]),
            (0, &["CLIENT", "TRACKING", "on", "foo", "REDIRECT", "99"]),
            (0, &["CLIENT", "TRACKING", "off", "REDIRECT", "99"]),
            (0, &["CLIENT", "TRACKING", "maybe", "REDIRECT", "99"]),
            (0, &["CLIENT", "TRACKING", "maybe"]),
            (0, &["CLIENT", "TRACKING", "on", "REDIRECT"]),
            (0, &["CLIENT", "TRACKING", "on", "PREFIX", "a"]),
            (0, &["CLIENT", "TRACKING", "on", "BCAST", "PREFIX"]),
            (0, &["CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"]),
            (0, &["CLIENT", "TRACKING", "on", "BCAST", "OPTIN"]),
            (
                0,
                &[
                    "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "ab", "PREFIX", "a",
                ],
            ),
            (
                0,
                &[
                    "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "x", "PREFIX", "x",
                ],
            ),
            (0, &["CLIENT", "CACHING", "yes"]),
            (0, &["CLIENT", "CACHING", "maybe"]),
            (0, &["CLIENT", "TRACKING", "on"]),
            (0, &["CLIENT", "CACHING", "yes"]),
            (0, &["CLIENT", "CACHING", "no"]),
            (0, &["CLIENT", "CACHING", "maybe"]),
            (0, &["CLIENT", "TRACKING", "on", "BCAST"]),
            (0, &["CLIENT", "TRACKING", "on", "OPTIN"]),
            (0, &["CLIENT", "TRACKING", "on", "OPTOUT"]),
            (0, &["CLIENT", "TRACKING", "off"]),
            (
                0,
                &[
                    "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "b", "PREFIX", "a",
                ],
            ),
            (0, &["CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "a"]),
            (0, &["CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "bc"]),
            (
                0,
                &[
                    "CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "c", "PREFIX", "",
                ],
            ),
            (0, &["CLIENT", "TRACKING", "on", "BCAST"]),
            (0, &["CLIENT", "TRACKINGINFO"]),
            (0, &["CLIENT", "TRACKING", "on"]),
            (0, &["CLIENT", "TRACKING"]),
            (0, &["CLIENT", "CACHING"]),
            (0, &["CLIENT", "CACHING", "yes", "x"]),
            (0, &["CLIENT", "GETREDIR", "x"]),
            (0, &["CLIENT", "TRACKINGINFO", "x"]),
            (0, &["RESET"]),
            (0, &["CLIENT", "TRACKINGINFO"]),
        ],
        as_is,
    )
    .await;
}

/// Reads one push (or reply) frame's bytes with a deadline.
async fn next_bytes(c: &mut Raw) -> String {
    show(&c.read_raw().await.expect("a frame"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expiry_invalidates_lazily_and_actively() {
    let s = start().await;
    let mut a = s.raw().await;
    let mut w = s.raw().await;
    a.cmd(&["HELLO", "3"]).await;
    assert_eq!(a.cmd(&["CLIENT", "TRACKING", "on"]).await, ok());
    // Lazy: the tracking client reads a key that has expired: the reply, then its
    // invalidation (the deletion a read does in Redis).
    w.cmd(&["SET", "f", "1", "PX", "100"]).await;
    assert_eq!(a.cmd(&["GET", "f"]).await, bulk("1"));
    tokio::time::sleep(Duration::from_millis(150)).await;
    let mut got = Vec::new();
    a.send(&encode_command(&[b"GET", b"f"])).await;
    got.push(next_bytes(&mut a).await);
    got.push(next_bytes(&mut a).await);
    got.sort();
    assert_eq!(
        got,
        vec![
            r">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nf\r\n".to_string(),
            r"_\r\n".to_string()
        ]
    );
    // Active: nobody reads; the sweep deletes it and the client hears of it.
    w.cmd(&["SET", "g", "1", "PX", "100"]).await;
    assert_eq!(a.cmd(&["GET", "g"]).await, bulk("1"));
    assert_eq!(
        next_bytes(&mut a).await,
        r">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\ng\r\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql_morph_and_swapdb_invalidate() {
    let s = start().await;
    let mut a = s.raw().await;
    let mut w = s.raw().await;
    a.cmd(&["HELLO", "3"]).await;
    assert_eq!(a.cmd(&["CLIENT", "TRACKING", "on"]).await, ok());
    w.cmd(&["SET", "user:1", "old"]).await;
    assert_eq!(a.cmd(&["GET", "user:1"]).await, bulk("old"));
    assert_eq!(a.cmd(&["HGET", "h:1", "name"]).await, resp::Frame::Null);
    // SQL.TOSTRING overwrites the string, SQL.TOHASH creates the hash.
    let r = w
        .cmd(&["SQL.TOSTRING", "user:{id}", "SELECT 1 AS id, 'new' AS v"])
        .await;
    assert_eq!(r, int(1));
    assert_eq!(
        next_bytes(&mut a).await,
        r">2\r\n$10\r\ninvalidate\r\n*1\r\n$6\r\nuser:1\r\n"
    );
    let r = w
        .cmd(&["SQL.TOHASH", "h:{id}", "SELECT 1 AS id, 'x' AS name"])
        .await;
    assert_eq!(r, int(1));
    assert_eq!(
        next_bytes(&mut a).await,
        r">2\r\n$10\r\ninvalidate\r\n*1\r\n$3\r\nh:1\r\n"
    );
    // SWAPDB changes every key of two databases: the null invalidation (Redis 7.0 sends
    // nothing, and its clients keep serving the other database's values).
    assert_eq!(a.cmd(&["GET", "user:1"]).await, bulk("new"));
    assert_eq!(w.cmd(&["SWAPDB", "0", "1"]).await, ok());
    assert_eq!(
        next_bytes(&mut a).await,
        r">2\r\n$10\r\ninvalidate\r\n_\r\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tracking_table_max_keys_evicts_and_invalidates() {
    let s = start().await;
    let mut w = s.raw().await;
    assert_eq!(
        w.cmd(&["CONFIG", "GET", "tracking-table-max-keys"]).await,
        bulks(&["tracking-table-max-keys", "1000000"])
    );
    assert_eq!(
        w.cmd(&["CONFIG", "SET", "tracking-table-max-keys", "-1"]).await,
        err("ERR CONFIG SET failed (possibly related to argument 'tracking-table-max-keys') - argument must be between 0 and 9223372036854775807 inclusive")
    );
    assert_eq!(
        w.cmd(&["CONFIG", "SET", "tracking-table-max-keys", "2"])
            .await,
        ok()
    );
    let mut a = s.raw().await;
    a.cmd(&["HELLO", "3"]).await;
    assert_eq!(a.cmd(&["CLIENT", "TRACKING", "on"]).await, ok());
    assert_eq!(a.cmd(&["GET", "ka"]).await, resp::Frame::Null);
    assert_eq!(a.cmd(&["GET", "kb"]).await, resp::Frame::Null);
    // A third key: one of the three is forgotten, and invalidated after the reply.
    a.send(&encode_command(&[b"MGET", b"kc"])).await;
    assert_eq!(next_bytes(&mut a).await, r"*1\r\n_\r\n");
    let push = next_bytes(&mut a).await;
    let evicted = ["ka", "kb", "kc"]
        .into_iter()
        .find(|k| push == format!(r">2\r\n$10\r\ninvalidate\r\n*1\r\n$2\r\n{k}\r\n"))
        .unwrap_or_else(|| panic!("{push}"));
    // The two kept are still tracked; the evicted one is not.
    let info = w.cmd(&["INFO", "stats"]).await;
    let resp::Frame::Bulk(info) = info else {
        panic!()
    };
    let info = String::from_utf8_lossy(&info).into_owned();
    assert!(info.contains("tracking_total_keys:2\r\n"), "{info}");
    for k in ["ka", "kb", "kc"] {
        w.cmd(&["SET", k, "1"]).await;
        if k != evicted {
            assert_eq!(
                next_bytes(&mut a).await,
                format!(r">2\r\n$10\r\ninvalidate\r\n*1\r\n$2\r\n{k}\r\n")
            );
        }
    }
    assert_eq!(a.cmd(&["PING"]).await, simple("PONG"));
}

/// Every way a write command changes a key invalidates it, and a command that changes nothing
/// invalidates nothing: a BCAST client on every key hears exactly what redis-server's does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_write_command_invalidates_as_redis() {
    let cmds: &[&[&str]] = &[
        &["SET", "s", "1"],
        &["SET", "nx", "1", "XX"],
        &["SETNX", "s", "2"],
        &["SETNX", "s2", "2"],
        &["SETEX", "s3", "100", "x"],
        &["PSETEX", "s4", "100000", "x"],
        &["GETSET", "s", "3"],
        &["GETDEL", "s4"],
        &["GETDEL", "s4"],
        &["GETEX", "s3"],
        &["GETEX", "s3", "PERSIST"],
        &["APPEND", "s", "x"],
        &["SETRANGE", "s", "1", "yy"],
        &["INCR", "n"],
        &["INCRBY", "n", "2"],
        &["INCRBYFLOAT", "n", "1.5"],
        &["DECR", "m"],
        &["DECRBY", "m", "3"],
        &["MSET", "a", "1", "b", "2"],
        &["MSETNX", "a", "1", "c", "2"],
        &["MSETNX", "d", "1", "e", "2"],
        &["DEL", "a", "zz"],
        &["UNLINK", "b"],
        &["EXPIRE", "c", "100"],
        &["EXPIRE", "c", "100", "NX"],
        &["PEXPIRE", "c", "100000"],
        &["EXPIREAT", "c", "99999999999"],
        &["PERSIST", "c"],
        &["PERSIST", "c"],
        &["RENAME", "c", "c2"],
        &["RENAMENX", "c2", "d"],
        &["RENAMENX", "c2", "c3"],
        &["MOVE", "c3", "1"],
        &["COPY", "d", "d2"],
        &["COPY", "d", "d2", "REPLACE"],
        &["HSET", "h", "f", "1", "g", "2"],
        &["HSETNX", "h", "f", "1"],
        &["HSETNX", "h", "k", "1"],
        &["HMSET", "h", "f", "2"],
        &["HDEL", "h", "nope"],
        &["HDEL", "h", "f"],
        &["HINCRBY", "h", "g", "1"],
        &["HINCRBYFLOAT", "h", "g", "1.5"],
        &["LPUSH", "l", "a", "b", "c", "d"],
        &["RPUSH", "l", "e"],
        &["LPUSHX", "nol", "a"],
        &["RPUSHX", "l", "f"],
        &["LPOP", "l"],
        &["RPOP", "l"],
        &["LSET", "l", "0", "z"],
        &["LINSERT", "l", "BEFORE", "z", "y"],
        &["LREM", "l", "0", "nope"],
        &["LREM", "l", "0", "y"],
        &["LTRIM", "l", "0", "-1"],
        &["LTRIM", "l", "0", "1"],
        &["RPOPLPUSH", "l", "l2"],
        &["LMOVE", "l2", "l3", "LEFT", "RIGHT"],
        &["LMPOP", "1", "l", "LEFT"],
        &["BLPOP", "l3", "0"],
        &["SADD", "st", "a", "b", "c"],
        &["SADD", "st", "a"],
        &["SREM", "st", "zz"],
        &["SREM", "st", "a"],
        &["SMOVE", "st", "st2", "b"],
        &["SINTERSTORE", "st3", "st", "st2"],
        &["SUNIONSTORE", "st3", "st", "st2"],
        &["SDIFFSTORE", "st4", "st", "st2"],
        &["SPOP", "st"],
        &["ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d"],
        &["ZADD", "z", "1", "a"],
        &["ZINCRBY", "z", "1", "a"],
        &["ZREM", "z", "nope"],
        &["ZREM", "z", "d"],
        &["ZUNIONSTORE", "z2", "1", "z"],
        &["ZINTERSTORE", "z3", "2", "z", "z2"],
        &["ZDIFFSTORE", "z4", "2", "z", "z2"],
        &["ZRANGESTORE", "z5", "z", "0", "-1"],
        &["ZREMRANGEBYSCORE", "z2", "100", "200"],
        &["ZREMRANGEBYSCORE", "z2", "0", "1.5"],
        &["ZREMRANGEBYRANK", "z3", "0", "0"],
        &["ZREMRANGEBYLEX", "z5", "[a", "[b"],
        &["ZPOPMIN", "z"],
        &["ZPOPMAX", "z"],
        &["ZMPOP", "1", "z5", "MIN"],
        &["BZPOPMIN", "z3", "0"],
        &["SORT", "l3", "ALPHA", "STORE", "so"],
        &["RPUSH", "nums", "3", "1", "2"],
        &["SORT", "nums", "STORE", "so2"],
        &[
            "EVAL",
            "redis.call('set','ev','1') redis.call('del','ev2')",
            "0",
        ],
        &[
            "FUNCTION",
            "LOAD",
            "#!lua name=lib\nredis.register_function('f', function(k, a) return redis.call('incr', k[1]) end)",
        ],
        &["FCALL", "f", "1", "fc"],
        &["FLUSHALL"],
    ];
    let mut steps: Vec<Step<'_>> = vec![
        (0, &["#hello3"]),
        (0, &["CLIENT", "TRACKING", "on", "BCAST"]),
    ];
    steps.extend(cmds.iter().map(|c| (1usize, *c)));
    differential(2, &steps, as_is).await;
}

/// CLIENT LIST / INFO show tracking as Redis 7.0 does: `t`, then `R` for a broken redirect
/// and `B` for BCAST, and `redir=` the redirect id (0 without one, -1 when not tracking).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_list_shows_tracking() {
    let s = start().await;
    let mut a = s.raw().await;
    let info = |f: resp::Frame| match f {
        resp::Frame::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
        other => panic!("{other:?}"),
    };
    let line = info(a.cmd(&["CLIENT", "INFO"]).await);
    assert!(
        line.contains(" flags=N ") && line.contains(" redir=-1 "),
        "{line}"
    );
    a.cmd(&["CLIENT", "TRACKING", "on"]).await;
    let line = info(a.cmd(&["CLIENT", "INFO"]).await);
    assert!(
        line.contains(" flags=t ") && line.contains(" redir=0 "),
        "{line}"
    );
    let mut r = s.raw().await;
    let resp::Frame::Integer(rid) = r.cmd(&["CLIENT", "ID"]).await else {
        panic!()
    };
    a.cmd(&["CLIENT", "TRACKING", "off"]).await;
    let rid = rid.to_string();
    a.cmd(&["CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", &rid])
        .await;
    let line = info(a.cmd(&["CLIENT", "INFO"]).await);
    assert!(
        line.contains(" flags=tB ") && line.contains(&format!(" redir={rid} ")),
        "{line}"
    );
    drop(r);
    // Broken once an invalidation finds the redirect client gone, as Redis marks it.
    let mut w = s.raw().await;
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        w.cmd(&["SET", "k", "1"]).await;
        let line = info(a.cmd(&["CLIENT", "INFO"]).await);
        if line.contains(" flags=tRB ") {
            break;
        }
        assert!(line.contains(" flags=tB "), "{line}");
        assert!(Instant::now() < deadline, "{line}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    a.cmd(&["CLIENT", "TRACKING", "off"]).await;
    let line = info(a.cmd(&["CLIENT", "INFO"]).await);
    assert!(
        line.contains(" flags=N ") && line.contains(" redir=-1 "),
        "{line}"
    );
}

/// Invalidations are pushes, not replies: CLIENT REPLY OFF does not silence them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalidations_go_out_under_client_reply_off_as_redis() {
    let t = differential(
        2,
        &[
            (0, &["#hello3"]),
            (0, &["CLIENT", "TRACKING", "on"]),
            (0, &["GET", "k"]),
            (0, &["CLIENT", "REPLY", "SKIP"]),
            (0, &["CLIENT", "TRACKINGINFO"]),
            (1, &["SET", "k", "1"]),
            (0, &["GET", "k"]),
        ],
        as_is,
    )
    .await;
    assert!(
        t.contains("1> SET k 1\n  0< >2\\r\\n$10\\r\\ninvalidate"),
        "{t}"
    );
}

/// Redis checks BCAST prefixes against each other in quadratic time: a client sending many
/// keeps its own connection busy, not the server (the check runs off the network threads,
/// without the tracking lock).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_prefixes_hold_up_only_their_client() {
    let s = start().await;
    let mut a = s.raw().await;
    let mut b = s.raw().await;
    a.cmd(&["HELLO", "3"]).await;
    let names: Vec<String> = (0..5_000).map(|i| format!("p{i:06}")).collect();
    let mut line: Vec<&[u8]> = vec![b"CLIENT", b"TRACKING", b"on", b"BCAST"];
    for n in &names {
        line.push(b"PREFIX");
        line.push(n.as_bytes());
    }
    a.send(&encode_command(&line)).await;
    let t = Instant::now();
    for _ in 0..10 {
        assert_eq!(b.cmd(&["SET", "x", "1"]).await, ok());
    }
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    assert_eq!(a.read().await, Some(ok()));
    // Every write is checked against each prefix (as Redis walks its prefix table).
    assert_eq!(b.cmd(&["SET", "p000042", "1"]).await, ok());
    assert_eq!(
        show(&a.read_raw().await.unwrap()),
        r">2\r\n$10\r\ninvalidate\r\n*1\r\n$7\r\np000042\r\n"
    );
}

/// WATCH and invalidation see the same changes: a key an SQL morph command rewrites fails the
/// transaction that watched it, and a key created by one too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_sees_sql_morph_writes() {
    let s = start().await;
    let mut c = s.raw().await;
    let mut w = s.raw().await;
    for (setup, morph) in [
        (
            Some(["SET", "user:1", "old"]),
            ["SQL.TOSTRING", "user:{id}", "SELECT 1 AS id, 'new' AS v"],
        ),
        (
            None,
            ["SQL.TOHASH", "h:{id}", "SELECT 1 AS id, 'x' AS name"],
        ),
    ] {
        if let Some(setup) = setup {
            w.cmd(&setup).await;
        }
        let key = if morph[0] == "SQL.TOSTRING" {
            "user:1"
        } else {
            "h:1"
        };
        assert_eq!(c.cmd(&["WATCH", key]).await, ok());
        assert_eq!(c.cmd(&["MULTI"]).await, ok());
        assert_eq!(c.cmd(&["PING"]).await, simple("QUEUED"));
        assert_eq!(w.cmd(&morph).await, int(1));
        assert_eq!(c.cmd(&["EXEC"]).await, resp::Frame::NullArray);
    }
}

/// A tracking client that never reads its invalidations is disconnected at
/// `client-output-buffer-limit normal`, as Redis disconnects a client whose replies pile up
/// (with Redis's default, no limit, they pile up in memory, as there).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tracking_client_that_does_not_read_hits_the_output_limit() {
    let s = start().await;
    let mut w = s.raw().await;
    assert_eq!(
        w.cmd(&[
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "normal 1mb 0 0"
        ])
        .await,
        ok()
    );
    let mut a = s.raw().await;
    a.cmd(&["HELLO", "3"]).await;
    assert_eq!(a.cmd(&["CLIENT", "TRACKING", "on", "BCAST"]).await, ok());
    let clients = |f: resp::Frame| match f {
        resp::Frame::Bulk(b) => String::from_utf8_lossy(&b).lines().count(),
        other => panic!("{other:?}"),
    };
    assert_eq!(clients(w.cmd(&["CLIENT", "LIST"]).await), 2);
    // 10 KB key names: each write sends the silent client 10 KB it never reads.
    let keys: Vec<String> = (0..10)
        .map(|i| format!("{i}{}", "k".repeat(10_000)))
        .collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut line: Vec<&[u8]> = vec![b"MSET"];
        for k in &keys {
            line.push(k.as_bytes());
            line.push(b"v");
        }
        assert_eq!(w.cmd_bytes(&line).await, ok());
        if clients(w.cmd(&["CLIENT", "LIST"]).await) == 1 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the silent client is still there"
        );
    }
}
