//! Every type side by side, over TCP, with replies pinned from redis-server 7.0.15: TYPE and
//! OBJECT ENCODING, WRONGTYPE wherever a command of one family meets a key of another (and the
//! commands that accept several types), COPY/RENAME/RENAMENX/MOVE/DEL, expiry of collections (a
//! write to an expired collection starts from an empty one), SWAPDB/FLUSHDB/FLUSHALL and WATCH.

mod common;
use common::*;
use relis::{Db, ManualClock, Options};
use resp::Frame;
use std::sync::Arc;
use std::time::Duration;

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

/// How to make a key `k` of each type.
const TYPES: &[(&str, &[&str])] = &[
    ("string", &["SET", "k", "1"]),
    ("hash", &["HSET", "k", "f", "v"]),
    ("list", &["RPUSH", "k", "a"]),
    ("set", &["SADD", "k", "a"]),
    ("zset", &["ZADD", "k", "1", "a"]),
];

/// Every family's commands on a key `k` (other keys: `other`, `d`).
const FAMILIES: &[(&str, &[&str])] = &[
    (
        "string",
        &[
            "GET k",
            "STRLEN k",
            "APPEND k x",
            "INCR k",
            "INCRBYFLOAT k 1",
            "DECRBY k 1",
            "GETRANGE k 0 1",
            "SETRANGE k 0 x",
            "GETDEL k",
            "GETEX k",
            "GETSET k x",
        ],
    ),
    (
        "hash",
        &[
            "HGET k f",
            "HSET k f v",
            "HMSET k f v",
            "HSETNX k f v",
            "HMGET k f",
            "HEXISTS k f",
            "HSTRLEN k f",
            "HGETALL k",
            "HKEYS k",
            "HVALS k",
            "HINCRBY k f 1",
            "HINCRBYFLOAT k f 1",
            "HLEN k",
            "HDEL k f",
            "HSCAN k 0",
            "HRANDFIELD k",
        ],
    ),
    (
        "list",
        &[
            "LPUSH k a",
            "RPUSH k a",
            "LPUSHX k a",
            "RPUSHX k a",
            "LRANGE k 0 -1",
            "LLEN k",
            "LINDEX k 0",
            "LPOP k",
            "RPOP k",
            "LPOS k a",
            "LINSERT k BEFORE a b",
            "LSET k 0 x",
            "LTRIM k 0 1",
            "LREM k 0 a",
            "BLPOP k 0",
            "BRPOP k 0",
            "LMOVE k other LEFT RIGHT",
            "RPOPLPUSH k other",
            "BLMOVE k other LEFT RIGHT 0",
            "LMPOP 1 k LEFT",
            "BLMPOP 0 1 k LEFT",
        ],
    ),
    (
        "set",
        &[
            "SADD k a",
            "SREM k a",
            "SMEMBERS k",
            "SISMEMBER k a",
            "SMISMEMBER k a",
            "SCARD k",
            "SPOP k",
            "SRANDMEMBER k",
            "SMOVE k other a",
            "SINTER k",
            "SUNION k",
            "SDIFF k",
            "SINTERCARD 1 k",
            "SSCAN k 0",
            "SINTERSTORE d k",
            "SUNIONSTORE d k",
            "SDIFFSTORE d k",
        ],
    ),
    (
        "zset",
        &[
            "ZADD k 1 a",
            "ZINCRBY k 1 a",
            "ZREM k a",
            "ZCARD k",
            "ZSCORE k a",
            "ZMSCORE k a",
            "ZRANK k a",
            "ZREVRANK k a",
            "ZCOUNT k 0 1",
            "ZLEXCOUNT k - +",
            "ZRANGE k 0 -1",
            "ZRANGEBYSCORE k 0 1",
            "ZREVRANGEBYSCORE k 1 0",
            "ZRANGEBYLEX k - +",
            "ZREVRANGE k 0 -1",
            "ZREMRANGEBYRANK k 0 1",
            "ZREMRANGEBYSCORE k 0 1",
            "ZREMRANGEBYLEX k - +",
            "ZPOPMIN k",
            "ZPOPMAX k",
            "BZPOPMIN k 0",
            "BZPOPMAX k 0",
            "ZMPOP 1 k MIN",
            "BZMPOP 0 1 k MIN",
            "ZRANDMEMBER k",
            "ZSCAN k 0",
            "ZRANGESTORE d k 0 -1",
            "ZUNION 1 k",
            "ZINTER 1 k",
            "ZDIFF 1 k",
            "ZINTERCARD 1 k",
            "ZUNIONSTORE d 1 k",
            "ZINTERSTORE d 1 k",
            "ZDIFFSTORE d 1 k",
        ],
    ),
    ("generic", &["SORT k", "SORT_RO k"]),
];

/// The cross-type lines that are not WRONGTYPE in redis-server 7.0.15: sorted-set algebra
/// takes plain sets (their members score 1), and SORT takes lists, sets and sorted sets (whose
/// member `a` is not a number).
fn not_wrongtype(key_type: &str, cmd: &str) -> Option<Frame> {
    let not_double = err("ERR One or more scores can't be converted into double");
    Some(match (key_type, cmd) {
        ("list" | "set" | "zset", "SORT k" | "SORT_RO k") => not_double,
        ("set", "ZUNION 1 k" | "ZINTER 1 k" | "ZDIFF 1 k") => bulks(&["a"]),
        (
            "set",
            "ZINTERCARD 1 k" | "ZUNIONSTORE d 1 k" | "ZINTERSTORE d 1 k" | "ZDIFFSTORE d 1 k",
        ) => int(1),
        _ => return None,
    })
}

fn words(line: &str) -> Vec<&str> {
    line.split(' ').collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrongtype_across_every_family_pair() {
    let s = start().await;
    let mut c = s.raw().await;
    let mut checked = 0;
    for (key_type, make) in TYPES {
        for (family, cmds) in FAMILIES {
            if family == key_type {
                continue;
            }
            for cmd in *cmds {
                c.cmd(&["FLUSHALL"]).await;
                c.cmd(make).await;
                let want = not_wrongtype(key_type, cmd).unwrap_or_else(|| err(WRONGTYPE));
                assert_eq!(c.cmd(&words(cmd)).await, want, "{cmd} on a {key_type}");
                // A refused write leaves the key as it was.
                assert_eq!(
                    c.cmd(&["TYPE", "k"]).await,
                    simple(key_type),
                    "{cmd} on a {key_type}"
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 406);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destinations_and_overwrites_of_another_type() {
    let s = start().await;
    let mut c = s.raw().await;
    for (key_type, make) in TYPES {
        c.cmd(&["FLUSHALL"]).await;
        c.cmd(&["RPUSH", "src", "a"]).await;
        c.cmd(&["SADD", "ssrc", "a"]).await;
        let mut make = make.to_vec();
        make[1] = "dst";
        c.cmd(&make).await;
        let moves: &[&[&str]] = &[
            &["LMOVE", "src", "dst", "LEFT", "RIGHT"],
            &["RPOPLPUSH", "src", "dst"],
            &["BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"],
        ];
        for cmd in moves {
            let want = if *key_type == "list" {
                bulk("a")
            } else {
                err(WRONGTYPE)
            };
            assert_eq!(c.cmd(cmd).await, want, "{cmd:?} into a {key_type}");
            if *key_type == "list" {
                c.cmd(&["RPUSH", "src", "a"]).await;
            }
        }
        let want = if *key_type == "set" {
            int(1)
        } else {
            err(WRONGTYPE)
        };
        assert_eq!(
            c.cmd(&["SMOVE", "ssrc", "dst", "a"]).await,
            want,
            "SMOVE into a {key_type}"
        );
        // Whatever was there, STORE variants and SET replace it, SETNX leaves it, MGET says nil.
        c.cmd(&["SADD", "ssrc", "a"]).await;
        assert_eq!(c.cmd(&["SETNX", "dst", "x"]).await, int(0));
        let mget = if *key_type == "string" {
            bulk("1")
        } else {
            Frame::Null
        };
        assert_eq!(c.cmd(&["MGET", "dst"]).await, arr(vec![mget]));
        for (store, new_type) in [
            (&["SUNIONSTORE", "dst", "ssrc"][..], "set"),
            (&["ZUNIONSTORE", "dst", "1", "ssrc"], "zset"),
            (&["SORT", "src", "ALPHA", "STORE", "dst"], "list"),
            (&["SET", "dst", "v"], "string"),
        ] {
            c.cmd(&make).await;
            c.cmd(store).await;
            assert_eq!(
                c.cmd(&["TYPE", "dst"]).await,
                simple(new_type),
                "{store:?} over a {key_type}"
            );
            c.cmd(&["DEL", "dst"]).await;
        }
    }
    c.cmd(&["HSET", "h", "f", "v"]).await;
    assert_eq!(
        c.cmd(&["LCS", "src", "h"]).await,
        err("ERR The specified keys must contain string values")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn type_and_object_encoding_of_every_type() {
    let s = start().await;
    let mut c = s.raw().await;
    let long = "a".repeat(65);
    check(
        &mut c,
        &[
            (&["SET", "s", "12"], ok()),
            (&["SET", "s2", "abc"], ok()),
            (&["SET", "s3", &"a".repeat(45)], ok()),
            (&["HSET", "h", "f", "v"], int(1)),
            (&["RPUSH", "l", "a", "b"], int(2)),
            (&["SADD", "st", "1", "2"], int(2)),
            (&["SADD", "sx", "a", "b"], int(2)),
            (&["ZADD", "z", "1", "a", "2", "b"], int(2)),
            (&["HSET", "hbig", "f", &long], int(1)),
            (&["ZADD", "zbig", "1", &long], int(1)),
            (&["TYPE", "s"], simple("string")),
            (&["TYPE", "h"], simple("hash")),
            (&["TYPE", "l"], simple("list")),
            (&["TYPE", "st"], simple("set")),
            (&["TYPE", "z"], simple("zset")),
            (&["TYPE", "missing"], simple("none")),
            (&["OBJECT", "ENCODING", "s"], bulk("int")),
            (&["OBJECT", "ENCODING", "s2"], bulk("embstr")),
            (&["OBJECT", "ENCODING", "s3"], bulk("raw")),
            (&["OBJECT", "ENCODING", "h"], bulk("listpack")),
            (&["OBJECT", "ENCODING", "hbig"], bulk("hashtable")),
            (&["OBJECT", "ENCODING", "l"], bulk("quicklist")),
            (&["OBJECT", "ENCODING", "st"], bulk("intset")),
            (&["OBJECT", "ENCODING", "sx"], bulk("hashtable")),
            (&["OBJECT", "ENCODING", "z"], bulk("listpack")),
            (&["OBJECT", "ENCODING", "zbig"], bulk("skiplist")),
            (&["OBJECT", "ENCODING", "missing"], Frame::Null),
            // Conversions are one-way, as in Redis 7.0.
            (&["SADD", "st", "x"], int(1)),
            (&["SREM", "st", "x"], int(1)),
            (&["OBJECT", "ENCODING", "st"], bulk("hashtable")),
            (
                &["SCAN", "0", "TYPE", "list", "COUNT", "100"],
                arr(vec![bulk("0"), bulks(&["l"])]),
            ),
        ],
    )
    .await;
    // TYPE and OBJECT ENCODING follow a key through COPY, RENAME and MOVE.
    for key in ["h", "hbig", "l", "st", "sx", "z", "zbig"] {
        let t = c.cmd(&["TYPE", key]).await;
        let enc = c.cmd(&["OBJECT", "ENCODING", key]).await;
        assert_eq!(c.cmd(&["COPY", key, "c"]).await, int(1));
        assert_eq!(c.cmd(&["RENAME", "c", "r"]).await, ok());
        assert_eq!(c.cmd(&["MOVE", "r", "3"]).await, int(1));
        c.cmd(&["SELECT", "3"]).await;
        assert_eq!(c.cmd(&["TYPE", "r"]).await, t, "{key}");
        assert_eq!(c.cmd(&["OBJECT", "ENCODING", "r"]).await, enc, "{key}");
        c.cmd(&["DEL", "r"]).await;
        c.cmd(&["SELECT", "0"]).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_rename_move_and_del_every_type() {
    let s = start().await;
    let mut c = s.raw().await;
    check(
        &mut c,
        &[
            (&["HSET", "h", "f", "v", "g", "w"], int(2)),
            (&["RPUSH", "l", "a", "b", "c"], int(3)),
            (&["SADD", "st", "1", "2", "3"], int(3)),
            (&["ZADD", "z", "1", "a", "2", "b"], int(2)),
            (&["SET", "s", "v"], ok()),
            // COPY in the same database, each type; the copy is independent.
            (&["COPY", "h", "h2"], int(1)),
            (&["HGETALL", "h2"], bulks(&["f", "v", "g", "w"])),
            (&["COPY", "l", "l2"], int(1)),
            (&["LRANGE", "l2", "0", "-1"], bulks(&["a", "b", "c"])),
            (&["COPY", "st", "st2"], int(1)),
            (&["SMEMBERS", "st2"], bulks(&["1", "2", "3"])),
            (&["COPY", "z", "z2"], int(1)),
            (
                &["ZRANGE", "z2", "0", "-1", "WITHSCORES"],
                bulks(&["a", "1", "b", "2"]),
            ),
            (&["RPUSH", "l2", "d"], int(4)),
            (&["LLEN", "l"], int(3)),
            // REPLACE over another type.
            (&["COPY", "h", "l"], int(0)),
            (&["COPY", "h", "l", "REPLACE"], int(1)),
            (&["TYPE", "l"], simple("hash")),
            (&["COPY", "z", "s", "REPLACE"], int(1)),
            (&["ZSCORE", "s", "b"], bulk("2")),
            // COPY to database n.
            (&["COPY", "st", "h2", "DB", "1"], int(1)),
            (&["SELECT", "1"], ok()),
            (&["SMEMBERS", "h2"], bulks(&["1", "2", "3"])),
            (&["SADD", "h2", "9"], int(1)),
            (&["SELECT", "0"], ok()),
            (&["SCARD", "st"], int(3)),
            (&["COPY", "l2", "h2", "DB", "1"], int(0)),
            (&["COPY", "l2", "h2", "DB", "1", "REPLACE"], int(1)),
            (&["SELECT", "1"], ok()),
            (&["LRANGE", "h2", "0", "-1"], bulks(&["a", "b", "c", "d"])),
            (&["SELECT", "0"], ok()),
            // RENAME / RENAMENX over and next to other types.
            (&["RENAME", "h2", "hh"], ok()),
            (&["HGET", "hh", "f"], bulk("v")),
            (&["RENAME", "hh", "l2"], ok()),
            (&["TYPE", "l2"], simple("hash")),
            (&["RENAMENX", "l2", "z"], int(0)),
            (&["RENAMENX", "l2", "zz"], int(1)),
            (&["HGETALL", "zz"], bulks(&["f", "v", "g", "w"])),
            (&["RENAME", "missing", "x"], err("ERR no such key")),
            // MOVE: refused when the destination database has the key, whatever its type.
            (&["MOVE", "z", "1"], int(1)),
            (&["SELECT", "1"], ok()),
            (&["ZADD", "st2", "5", "x"], int(1)),
            (&["SELECT", "0"], ok()),
            (&["MOVE", "st2", "1"], int(0)),
            (&["SMEMBERS", "st2"], bulks(&["1", "2", "3"])),
            (&["SELECT", "1"], ok()),
            (&["ZRANGE", "z", "0", "-1"], bulks(&["a", "b"])),
            (&["TYPE", "st2"], simple("zset")),
            (&["SELECT", "0"], ok()),
            // DEL / UNLINK of every type.
            (&["DEL", "st", "s", "l", "zz", "missing"], int(4)),
            (&["UNLINK", "st2", "h", "z2"], int(3)),
            (&["DBSIZE"], int(0)),
        ],
    )
    .await;
}

/// A collection to make, a write once it has expired, a read, and what the read gives.
type ExpiryCase = (
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
    Frame,
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_collections_start_empty_on_write() {
    let s = start().await;
    let mut c = s.raw().await;
    let cases: &[ExpiryCase] = &[
        (
            &["RPUSH", "k", "old1", "old2"],
            &["LPUSH", "k", "new"],
            &["LRANGE", "k", "0", "-1"],
            bulks(&["new"]),
        ),
        (
            &["RPUSH", "k", "old"],
            &["RPUSHX", "k", "new"],
            &["EXISTS", "k"],
            int(0),
        ),
        (
            &["HSET", "k", "old", "1", "f", "2"],
            &["HINCRBY", "k", "f", "5"],
            &["HGETALL", "k"],
            bulks(&["f", "5"]),
        ),
        (
            &["HSET", "k", "old", "1"],
            &["HSET", "k", "new", "2"],
            &["HGETALL", "k"],
            bulks(&["new", "2"]),
        ),
        (
            &["SADD", "k", "old"],
            &["SADD", "k", "new"],
            &["SMEMBERS", "k"],
            bulks(&["new"]),
        ),
        (
            &["ZADD", "k", "1", "old", "2", "new"],
            &["ZINCRBY", "k", "1", "new"],
            &["ZRANGE", "k", "0", "-1", "WITHSCORES"],
            bulks(&["new", "1"]),
        ),
        (
            &["ZADD", "k", "1", "old"],
            &["ZADD", "k", "5", "new"],
            &["ZRANGE", "k", "0", "-1", "WITHSCORES"],
            bulks(&["new", "5"]),
        ),
    ];
    for (make, write, read, want) in cases {
        c.cmd(&["DEL", "k"]).await;
        c.cmd(make).await;
        assert_eq!(c.cmd(&["PEXPIRE", "k", "20"]).await, int(1));
        tokio::time::sleep(Duration::from_millis(40)).await;
        c.cmd(write).await;
        assert_eq!(&c.cmd(read).await, want, "{write:?} after {make:?} expired");
        let ttl = if *want == int(0) { -2 } else { -1 };
        assert_eq!(
            c.cmd(&["TTL", "k"]).await,
            int(ttl),
            "{write:?}: no old expiry"
        );
    }
    // A key of another type that expired is no obstacle either.
    c.cmd(&["SET", "k", "v", "PX", "20"]).await;
    tokio::time::sleep(Duration::from_millis(40)).await;
    assert_eq!(c.cmd(&["SADD", "k", "m"]).await, int(1));
    assert_eq!(c.cmd(&["TYPE", "k"]).await, simple("set"));
}

/// The same, on the engine with a manual clock: deterministic, and exercising the write path
/// that finds the expired row still there (the background sweep has not run on it).
#[test]
fn expired_collections_start_empty_on_write_engine() {
    const T0: i64 = 1_700_000_000_000;
    let clock = ManualClock::new(T0);
    let db = Db::open_with(Options {
        clock: Arc::new(clock.clone()),
        ..Options::default()
    })
    .unwrap();
    let expire = |db: &Db| {
        db.pexpire("k", 1000, relis::ExpireCond::Always).unwrap();
    };
    db.rpush("k", &["old1", "old2"]).unwrap();
    expire(&db);
    clock.advance(1000);
    assert_eq!(db.lpush("k", &["new"]).unwrap(), 1);
    assert_eq!(db.lrange("k", 0, -1).unwrap(), vec!["new"]);
    assert_eq!(db.ttl("k").unwrap(), relis::Ttl::Persistent);

    db.del(&["k"]).unwrap();
    db.hset("k", &[("old", "1"), ("f", "2")]).unwrap();
    expire(&db);
    clock.advance(1000);
    assert_eq!(db.hincrby("k", "f", 5).unwrap(), 5);
    assert_eq!(db.hgetall("k").unwrap().len(), 1);
    assert_eq!(db.ttl("k").unwrap(), relis::Ttl::Persistent);

    db.del(&["k"]).unwrap();
    db.sadd("k", &["old"]).unwrap();
    expire(&db);
    clock.advance(1000);
    assert_eq!(db.sadd("k", &["new"]).unwrap(), 1);
    assert_eq!(db.smembers("k").unwrap(), vec!["new"]);

    db.del(&["k"]).unwrap();
    db.zadd("k", &[(1.0, &b"old"[..]), (2.0, &b"new"[..])])
        .unwrap();
    expire(&db);
    clock.advance(1000);
    assert_eq!(db.zadd("k", &[(5.0, &b"new"[..])]).unwrap(), 1);
    assert_eq!(db.zcard("k").unwrap(), 1);
    assert_eq!(db.zscore("k", "new").unwrap(), Some(5.0));
    assert_eq!(db.ttl("k").unwrap(), relis::Ttl::Persistent);

    // A large expired collection (its elements go to the trash) is no different.
    db.del(&["k"]).unwrap();
    let many: Vec<String> = (0..3000).map(|i| format!("m{i}")).collect();
    db.sadd("k", &many).unwrap();
    expire(&db);
    clock.advance(1000);
    assert_eq!(db.sadd("k", &["m1", "x"]).unwrap(), 2);
    assert_eq!(db.scard("k").unwrap(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swapdb_flushdb_flushall_with_collections() {
    let s = start().await;
    let mut c = s.raw().await;
    check(
        &mut c,
        &[
            (&["HSET", "a", "f", "0"], int(1)),
            (&["RPUSH", "b", "x"], int(1)),
            (&["SELECT", "2"], ok()),
            (&["SADD", "a", "5"], int(1)),
            (&["ZADD", "c", "1", "m"], int(1)),
            (&["SELECT", "0"], ok()),
            (&["SWAPDB", "0", "2"], ok()),
            (&["TYPE", "a"], simple("set")),
            (&["TYPE", "b"], simple("none")),
            (&["ZRANGE", "c", "0", "-1"], bulks(&["m"])),
            (&["SELECT", "2"], ok()),
            (&["HGETALL", "a"], bulks(&["f", "0"])),
            (&["LRANGE", "b", "0", "-1"], bulks(&["x"])),
            (&["FLUSHDB"], ok()),
            (&["DBSIZE"], int(0)),
            (&["LRANGE", "b", "0", "-1"], arr(vec![])),
            (&["RPUSH", "b", "fresh"], int(1)),
            (&["LRANGE", "b", "0", "-1"], bulks(&["fresh"])),
            (&["SELECT", "0"], ok()),
            (&["DBSIZE"], int(2)),
            (&["SADD", "a", "7"], int(1)),
            (&["SMEMBERS", "a"], bulks(&["5", "7"])),
            (&["FLUSHALL"], ok()),
            (&["DBSIZE"], int(0)),
            (&["ZADD", "a", "1", "x"], int(1)),
            (&["TYPE", "a"], simple("zset")),
            (&["ZCARD", "a"], int(1)),
            (&["SELECT", "2"], ok()),
            (&["DBSIZE"], int(0)),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_sees_writes_to_collections() {
    let s = start().await;
    let mut c = s.raw().await;
    let mut other = s.raw().await;
    for cmd in [
        &["HSET", "wh", "f", "v"][..],
        &["RPUSH", "wl", "a"],
        &["SADD", "ws", "1"],
        &["ZADD", "wz", "1", "a"],
    ] {
        c.cmd(cmd).await;
    }
    let transaction = async |c: &mut Raw, watch: &str, other: &mut Raw, between: &[&str]| {
        assert_eq!(c.cmd(&["WATCH", watch]).await, ok());
        other.cmd(between).await;
        assert_eq!(c.cmd(&["MULTI"]).await, ok());
        assert_eq!(c.cmd(&["PING"]).await, simple("QUEUED"));
        c.cmd(&["EXEC"]).await
    };
    let aborted = Frame::NullArray;
    let ran = arr(vec![simple("PONG")]);
    for (watch, between, want) in [
        ("wh", &["HSET", "wh", "f", "v2"][..], &aborted),
        ("wl", &["LPUSH", "wl", "b"], &aborted),
        ("ws", &["SADD", "ws", "2"], &aborted),
        ("wz", &["ZADD", "wz", "2", "b"], &aborted),
        ("nokey", &["LPUSH", "nokey", "a"], &aborted),
        ("ws", &["EXPIRE", "ws", "100"], &aborted),
        (
            "wl",
            &["SORT", "wz", "BY", "nosort", "STORE", "wl"],
            &aborted,
        ),
        ("wh", &["HINCRBY", "wh", "n", "1"], &aborted),
        ("wl", &["RPOP", "wl"], &aborted),
        ("ws", &["SREM", "ws", "2"], &aborted),
        ("wz", &["ZREM", "wz", "b"], &aborted),
        // Reads and writes that change nothing leave the watch alone.
        ("wz", &["ZSCORE", "wz", "a"], &ran),
        ("wl", &["LRANGE", "wl", "0", "-1"], &ran),
        ("ws", &["SMEMBERS", "ws"], &ran),
        ("wh", &["HGETALL", "wh"], &ran),
        ("wh", &["HDEL", "wh", "nosuchfield"], &ran),
        ("ws", &["SADD", "ws", "1"], &ran),
        ("wz", &["ZADD", "wz", "NX", "9", "a"], &ran),
        ("wl", &["SORT", "wl"], &ran),
    ] {
        assert_eq!(
            &transaction(&mut c, watch, &mut other, between).await,
            want,
            "WATCH {watch}, then {between:?}"
        );
    }
}

/// Latency samples of one client looping on one command: (when it was sent, how long it took).
type Samples = Vec<(std::time::Instant, Duration)>;

/// Loops `cmd` on its own connection until `stop`, timing every call.
fn probe(
    addr: std::net::SocketAddr,
    cmd: &'static [&'static str],
    stop: Arc<std::sync::atomic::AtomicBool>,
) -> tokio::task::JoinHandle<Samples> {
    tokio::spawn(async move {
        let mut c = Raw::connect(addr).await;
        let mut out = Vec::new();
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            let t = std::time::Instant::now();
            c.cmd(cmd).await;
            out.push((t, t.elapsed()));
        }
        out
    })
}

/// Max and 99th percentile of the samples taken in `[from, to)`, and their count.
fn window(s: &Samples, from: std::time::Instant, to: std::time::Instant) -> String {
    let mut d: Vec<Duration> = s
        .iter()
        .filter(|(t, _)| *t >= from && *t < to)
        .map(|(_, d)| *d)
        .collect();
    d.sort();
    if d.is_empty() {
        return "no samples".into();
    }
    let p99 = d[(d.len() * 99 / 100).min(d.len() - 1)];
    format!(
        "{} calls, p99 {:.2} ms, max {:.2} ms",
        d.len(),
        p99.as_secs_f64() * 1e3,
        d[d.len() - 1].as_secs_f64() * 1e3
    )
}

/// Deleting (DEL) or overwriting (SET) a collection of a million elements, while other clients
/// GET and INCR: how long the command takes, how long the background sweep takes to empty the
/// trash, and the latency other clients see meanwhile. The elements really go (rows counted in
/// the SQLite file) and a new key of the same name is unaffected. Prints a report; asserts only
/// correctness and a generous bound. `RELIS_LARGE_N` changes the size.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "a measurement: cargo test --release -p relis-server --test types -- --ignored --nocapture"]
async fn large_collections_are_deleted_in_the_background() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Instant;
    let n: usize = std::env::var("RELIS_LARGE_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let s = start().await;
    let file = s.dir.path().join("relis.db");
    let sql =
        rusqlite::Connection::open_with_flags(&file, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let count = |sql: &rusqlite::Connection, q: &str, kid: i64| -> i64 {
        sql.query_row(q, [kid], |r| r.get(0)).unwrap()
    };
    let mut c = s.raw().await;
    c.cmd(&["SET", "probe", "v"]).await;
    println!("\nlarge collections, {n} elements each");
    for (kind, fill, remove, table) in [
        ("hash", "HSET", &["DEL", "big"][..], "relis_hash"),
        (
            "set",
            "SADD",
            &["SET", "big", "now a string"][..],
            "relis_set",
        ),
    ] {
        // Build it, pipelining commands of 1000 elements.
        let t = Instant::now();
        let per = 1000;
        let mut pending = 0;
        for chunk in 0..n.div_ceil(per) {
            let mut args: Vec<Vec<u8>> = vec![fill.into(), b"big".to_vec()];
            for i in chunk * per..((chunk + 1) * per).min(n) {
                args.push(format!("field:{i}").into_bytes());
                if kind == "hash" {
                    args.push(format!("{i}").into_bytes());
                }
            }
            let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
            c.send(&encode_command(&refs)).await;
            pending += 1;
            if pending == 32 {
                for _ in 0..pending {
                    c.read().await;
                }
                pending = 0;
            }
        }
        for _ in 0..pending {
            c.read().await;
        }
        let built = t.elapsed();
        let kid: i64 = sql
            .query_row(
                "SELECT id FROM relis_keys WHERE key = ?1",
                [&b"big"[..]],
                |r| r.get(0),
            )
            .unwrap();
        let rows_q = format!("SELECT count(*) FROM {table} WHERE kid = ?1");
        assert_eq!(count(&sql, &rows_q, kid), n as i64);

        // Other clients read and write all along.
        let stop = Arc::new(AtomicBool::new(false));
        let gets = probe(s.addr, &["GET", "probe"], stop.clone());
        let incrs = probe(s.addr, &["INCR", "counter"], stop.clone());
        tokio::time::sleep(Duration::from_secs(2)).await;
        let t0 = Instant::now();
        let reply = c.cmd(remove).await;
        let took = t0.elapsed();
        assert!(
            matches!(reply, Frame::Integer(1) | Frame::Simple(_)),
            "{reply:?}"
        );
        // A new key of the same name is independent of the old elements.
        if kind == "hash" {
            assert_eq!(c.cmd(&["HSET", "big", "f", "v"]).await, int(1));
            assert_eq!(c.cmd(&["HGETALL", "big"]).await, bulks(&["f", "v"]));
        } else {
            assert_eq!(c.cmd(&["GET", "big"]).await, bulk("now a string"));
        }
        // Wait for the sweep to empty the trash.
        loop {
            let left = count(&sql, &rows_q, kid);
            let trash: i64 = sql
                .query_row("SELECT count(*) FROM relis_trash", [], |r| r.get(0))
                .unwrap();
            if left == 0 && trash == 0 {
                break;
            }
            assert!(t0.elapsed() < Duration::from_secs(600), "{left} rows left");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let emptied = t0.elapsed();
        tokio::time::sleep(Duration::from_secs(1)).await;
        stop.store(true, Ordering::Relaxed);
        let (gets, incrs) = (gets.await.unwrap(), incrs.await.unwrap());
        let before = t0 - Duration::from_secs(2);
        let after = t0 + emptied;
        println!(
            "{kind}: built in {:.1} s; {remove:?} replied in {:.2} ms; the trash was empty \
             {:.1} s later",
            built.as_secs_f64(),
            took.as_secs_f64() * 1e3,
            emptied.as_secs_f64()
        );
        println!("  GET  before: {}", window(&gets, before, t0));
        println!("  GET  during: {}", window(&gets, t0, after));
        println!("  INCR before: {}", window(&incrs, before, t0));
        println!("  INCR during: {}", window(&incrs, t0, after));
        let mut slow: Vec<_> = incrs.iter().filter(|(t, _)| *t >= before).collect();
        slow.sort_by_key(|(_, d)| std::cmp::Reverse(*d));
        let slow: Vec<String> = slow
            .iter()
            .take(5)
            .map(|(t, d)| {
                let at = t.saturating_duration_since(t0).as_secs_f64()
                    - t0.saturating_duration_since(*t).as_secs_f64();
                format!("{:.0} ms at {at:+.1} s", d.as_secs_f64() * 1e3)
            })
            .collect();
        println!("  slowest INCRs: {}", slow.join(", "));
        // The new key is still intact after the old elements went.
        if kind == "hash" {
            assert_eq!(c.cmd(&["HLEN", "big"]).await, int(1));
        }
        assert_eq!(count(&sql, &rows_q, kid), 0);
        assert!(
            took < Duration::from_millis(500),
            "{remove:?} took {took:?}"
        );
        c.cmd(&["DEL", "big"]).await;
    }
}
