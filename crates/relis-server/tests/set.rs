//! The set family over TCP, with replies and error texts pinned from redis-server 7.0.15 (RESP2
//! and RESP3), keyspace statistics, WATCH, MULTI and the `redis` crate's view.

mod common;
use bytes::Bytes;
use common::*;
use resp::Frame;
use std::collections::BTreeSet;

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
const NOT_INT: &str = "ERR value is not an integer or out of range";
const POSITIVE: &str = "ERR value is out of range, must be positive";

fn set(items: &[&str]) -> Frame {
    Frame::Set(items.iter().map(|s| bulk(s)).collect())
}

fn scan(cursor: &str, items: &[&str]) -> Frame {
    arr(vec![bulk(cursor), bulks(items)])
}

/// The members of a multi-bulk reply, as a sorted set of strings.
fn members(f: Frame) -> BTreeSet<String> {
    let items = match f {
        Frame::Array(v) | Frame::Set(v) => v,
        other => panic!("not a list of members: {other:?}"),
    };
    items
        .into_iter()
        .map(|m| match m {
            Frame::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
            other => panic!("not a member: {other:?}"),
        })
        .collect()
}

fn list(f: Frame) -> Vec<String> {
    match f {
        Frame::Array(v) | Frame::Set(v) => v
            .into_iter()
            .map(|m| match m {
                Frame::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
                other => panic!("not a member: {other:?}"),
            })
            .collect(),
        other => panic!("not a list of members: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_remove_and_membership() {
    let s = start().await;
    let mut c = s.raw().await;
    check(
        &mut c,
        &[
            (&["SADD", "s", "a", "b", "a"], int(2)),
            (&["SADD", "s", "b", "c"], int(1)),
            (&["SCARD", "s"], int(3)),
            (&["SCARD", "missing"], int(0)),
            (&["SISMEMBER", "s", "a"], int(1)),
            (&["SISMEMBER", "s", "z"], int(0)),
            (&["SISMEMBER", "missing", "a"], int(0)),
            (&["SMISMEMBER", "s", "a", "z", "c"], ints(&[1, 0, 1])),
            (&["SMISMEMBER", "missing", "a", "b"], ints(&[0, 0])),
            (&["SMEMBERS", "s"], bulks(&["a", "b", "c"])),
            (&["SMEMBERS", "missing"], arr(vec![])),
            (&["TYPE", "s"], simple("set")),
            (&["SREM", "s", "a", "a", "z"], int(1)),
            (&["SREM", "missing", "a"], int(0)),
            (&["SREM", "s", "b", "c", "d"], int(2)),
            (&["EXISTS", "s"], int(0)),
            (&["SADD", "e", ""], int(1)),
            (&["SISMEMBER", "e", ""], int(1)),
        ],
    )
    .await;
    // Binary-safe members.
    assert_eq!(
        c.cmd_bytes(&[b"SADD", b"bin", b"\x00\xff\r\n"]).await,
        int(1)
    );
    assert_eq!(
        c.cmd_bytes(&[b"SMEMBERS", b"bin"]).await,
        arr(vec![Frame::Bulk(Bytes::from_static(b"\x00\xff\r\n"))])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_as_redis_words_them() {
    let s = start().await;
    let mut c = s.raw().await;
    let arity = |cmd: &str| {
        err(&format!(
            "ERR wrong number of arguments for '{cmd}' command"
        ))
    };
    check(
        &mut c,
        &[
            (&["SET", "str", "x"], ok()),
            (&["SADD", "s", "1", "2", "3", "4"], int(4)),
            (&["SADD", "s"], arity("sadd")),
            (&["SREM", "s"], arity("srem")),
            (&["SISMEMBER", "s"], arity("sismember")),
            (&["SMISMEMBER", "s"], arity("smismember")),
            (&["SMEMBERS"], arity("smembers")),
            (&["SCARD", "a", "b"], arity("scard")),
            (&["SPOP"], arity("spop")),
            (&["SMOVE", "a", "b"], arity("smove")),
            (&["SINTER"], arity("sinter")),
            (&["SINTERSTORE", "d"], arity("sinterstore")),
            (&["SINTERCARD", "1"], arity("sintercard")),
            (&["SSCAN", "s"], arity("sscan")),
            (&["SADD", "str", "a"], err(WRONGTYPE)),
            (&["SREM", "str", "a"], err(WRONGTYPE)),
            (&["SCARD", "str"], err(WRONGTYPE)),
            (&["SISMEMBER", "str", "x"], err(WRONGTYPE)),
            (&["SMISMEMBER", "str", "x"], err(WRONGTYPE)),
            (&["SMEMBERS", "str"], err(WRONGTYPE)),
            (&["SRANDMEMBER", "str"], err(WRONGTYPE)),
            (&["SRANDMEMBER", "str", "2"], err(WRONGTYPE)),
            (&["SPOP", "str"], err(WRONGTYPE)),
            (&["SPOP", "str", "1"], err(WRONGTYPE)),
            (&["SSCAN", "str", "0"], err(WRONGTYPE)),
            // Every key of the algebra is checked, even after a missing one.
            (&["SINTER", "missing", "str"], err(WRONGTYPE)),
            (&["SINTER", "str", "missing"], err(WRONGTYPE)),
            (&["SUNION", "s", "str"], err(WRONGTYPE)),
            (&["SDIFF", "missing", "str"], err(WRONGTYPE)),
            (&["SINTERCARD", "2", "missing", "str"], err(WRONGTYPE)),
            (&["SINTERSTORE", "d", "missing", "str"], err(WRONGTYPE)),
            (&["SUNIONSTORE", "d", "s", "str"], err(WRONGTYPE)),
            (&["SDIFFSTORE", "d", "s", "str"], err(WRONGTYPE)),
            (&["EXISTS", "d"], int(0)),
            // SMOVE: a missing source is 0 before the destination's type is looked at.
            (&["SMOVE", "missing", "str", "a"], int(0)),
            (&["SMOVE", "s", "str", "1"], err(WRONGTYPE)),
            (&["SMOVE", "str", "s", "1"], err(WRONGTYPE)),
            // Counts.
            (&["SPOP", "missing", "-1"], err(POSITIVE)),
            (&["SPOP", "s", "-1"], err(POSITIVE)),
            (&["SPOP", "str", "-1"], err(POSITIVE)),
            (&["SPOP", "s", "x"], err(POSITIVE)),
            (&["SPOP", "s", "01"], err(POSITIVE)),
            (&["SPOP", "s", "99999999999999999999"], err(POSITIVE)),
            (&["SPOP", "s", "1", "2"], err("ERR syntax error")),
            (&["SRANDMEMBER", "s", "1", "2"], err("ERR syntax error")),
            (&["SRANDMEMBER", "s", "x"], err(NOT_INT)),
            (&["SRANDMEMBER", "missing", "x"], err(NOT_INT)),
            (
                &["SRANDMEMBER", "s", "-9223372036854775808"],
                err("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"),
            ),
            (&["SRANDMEMBER", "s", "99999999999999999999"], err(NOT_INT)),
            // SINTERCARD's own texts.
            (&["SINTERCARD", "0", "s"], err("ERR numkeys should be greater than 0")),
            (&["SINTERCARD", "-1", "s"], err("ERR numkeys should be greater than 0")),
            (&["SINTERCARD", "x", "s"], err("ERR numkeys should be greater than 0")),
            (
                &["SINTERCARD", "3", "s", "s"],
                err("ERR Number of keys can't be greater than number of args"),
            ),
            (
                &["SINTERCARD", "2147483648", "s"],
                err("ERR Number of keys can't be greater than number of args"),
            ),
            (&["SINTERCARD", "1", "s", "LIMIT"], err("ERR syntax error")),
            (&["SINTERCARD", "1", "s", "LIMIT", "-1"], err("ERR LIMIT can't be negative")),
            (&["SINTERCARD", "1", "s", "limit", "x"], err("ERR LIMIT can't be negative")),
            (&["SINTERCARD", "1", "s", "foo", "2"], err("ERR syntax error")),
            // SSCAN: the cursor first, then the key, then the options.
            (&["SSCAN", "s", "x"], err("ERR invalid cursor")),
            (&["SSCAN", "str", "x"], err("ERR invalid cursor")),
            (&["SSCAN", "missing", "0", "badopt"], scan("0", &[])),
            (&["SSCAN", "missing", "0", "count", "0"], scan("0", &[])),
            (&["SSCAN", "str", "0", "badopt"], err(WRONGTYPE)),
            (&["SSCAN", "s", "0", "count", "0"], err("ERR syntax error")),
            (&["SSCAN", "s", "0", "count", "-1"], err("ERR syntax error")),
            (&["SSCAN", "s", "0", "count", "x"], err(NOT_INT)),
            (&["SSCAN", "s", "0", "match"], err("ERR syntax error")),
            (&["SSCAN", "s", "0", "type", "string"], err("ERR syntax error")),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn algebra_and_store() {
    let s = start().await;
    let mut c = s.raw().await;
    check(
        &mut c,
        &[
            (&["SADD", "a", "1", "2", "3", "4"], int(4)),
            (&["SADD", "b", "3", "4", "5", "-1", "10"], int(5)),
            (&["SADD", "h", "x", "y"], int(2)),
            // Integer results come in numeric order, as from Redis's intsets.
            (&["SINTER", "a", "b"], bulks(&["3", "4"])),
            (&["SINTER", "a", "missing"], arr(vec![])),
            (&["SINTER", "a", "a"], bulks(&["1", "2", "3", "4"])),
            (
                &["SUNION", "a", "b", "missing"],
                bulks(&["-1", "1", "2", "3", "4", "5", "10"]),
            ),
            (&["SDIFF", "b", "a"], bulks(&["-1", "5", "10"])),
            (&["SDIFF", "a", "a"], arr(vec![])),
            (&["SDIFF", "missing", "a"], arr(vec![])),
            (&["SINTERCARD", "2", "a", "b"], int(2)),
            (&["SINTERCARD", "2", "a", "b", "LIMIT", "1"], int(1)),
            (&["SINTERCARD", "1", "a", "LIMIT", "0"], int(4)),
            (&["SINTERCARD", "2", "a", "missing"], int(0)),
            (&["SINTERSTORE", "d", "a", "b"], int(2)),
            (&["SMEMBERS", "d"], bulks(&["3", "4"])),
            (&["OBJECT", "ENCODING", "d"], bulk("intset")),
            (&["SUNIONSTORE", "d", "a", "h"], int(6)),
            (&["OBJECT", "ENCODING", "d"], bulk("hashtable")),
            (&["SDIFFSTORE", "d", "b", "a"], int(3)),
            (&["SMEMBERS", "d"], bulks(&["-1", "5", "10"])),
            // The destination may be a source.
            (&["SUNIONSTORE", "a", "a", "b"], int(7)),
            (&["SCARD", "a"], int(7)),
            (&["SDIFFSTORE", "a", "a", "b"], int(2)),
            (&["SMEMBERS", "a"], bulks(&["1", "2"])),
            // Any destination type is replaced, expiry and all.
            (&["SET", "str", "v", "EX", "100"], ok()),
            (&["SUNIONSTORE", "str", "a"], int(2)),
            (&["TYPE", "str"], simple("set")),
            (&["TTL", "str"], int(-1)),
            // An empty result deletes the destination and replies 0.
            (&["SINTERSTORE", "str", "a", "missing"], int(0)),
            (&["EXISTS", "str"], int(0)),
            (&["SET", "str", "v"], ok()),
            (&["SDIFFSTORE", "str", "a", "a"], int(0)),
            (&["EXISTS", "str"], int(0)),
            (&["SUNIONSTORE", "nothing", "missing"], int(0)),
            (&["EXISTS", "nothing"], int(0)),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn smove() {
    let s = start().await;
    let mut c = s.raw().await;
    check(
        &mut c,
        &[
            (&["SADD", "s", "1", "2", "x"], int(3)),
            (&["SADD", "t", "2"], int(1)),
            (&["SMOVE", "s", "s", "1"], int(1)),
            (&["SMOVE", "s", "s", "9"], int(0)),
            (&["SMOVE", "s", "t", "9"], int(0)),
            (&["SMOVE", "s", "t", "2"], int(1)),
            (&["SMEMBERS", "s"], bulks(&["1", "x"])),
            (&["SMEMBERS", "t"], bulks(&["2"])),
            (&["SMOVE", "s", "new", "1"], int(1)),
            (&["OBJECT", "ENCODING", "new"], bulk("intset")),
            (&["SMOVE", "s", "new2", "x"], int(1)),
            (&["OBJECT", "ENCODING", "new2"], bulk("hashtable")),
            (&["EXISTS", "s"], int(0)),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_members() {
    let s = start().await;
    let mut c = s.raw().await;
    let all: Vec<String> = (0..20).map(|i| format!("m{i:02}")).collect();
    let mut cmd = vec!["SADD", "s"];
    cmd.extend(all.iter().map(String::as_str));
    assert_eq!(c.cmd(&cmd).await, int(20));
    let everything: BTreeSet<String> = all.iter().cloned().collect();
    check(
        &mut c,
        &[
            (&["SRANDMEMBER", "missing"], Frame::Null),
            (&["SRANDMEMBER", "missing", "3"], arr(vec![])),
            (&["SRANDMEMBER", "missing", "-3"], arr(vec![])),
            (&["SRANDMEMBER", "s", "0"], arr(vec![])),
            (&["SPOP", "missing"], Frame::Null),
            (&["SPOP", "missing", "3"], arr(vec![])),
            (&["SPOP", "s", "0"], arr(vec![])),
            // Relis bounds repeats (relis::MAX_RANDOM_REPEATS) where Redis would build any reply.
            (&["SRANDMEMBER", "s", "-4194305"], err(NOT_INT)),
            (&["SRANDMEMBER", "missing", "-4194305"], arr(vec![])),
        ],
    )
    .await;
    assert!(matches!(
        c.cmd(&["SRANDMEMBER", "s", "-100000"]).await,
        Frame::Array(v) if v.len() == 100_000
    ));
    let Frame::Bulk(one) = c.cmd(&["SRANDMEMBER", "s"]).await else {
        panic!("a member")
    };
    assert!(everything.contains(&*String::from_utf8_lossy(&one)));
    let five = list(c.cmd(&["SRANDMEMBER", "s", "5"]).await);
    assert_eq!(five.len(), 5);
    assert_eq!(five.iter().collect::<BTreeSet<_>>().len(), 5, "distinct");
    assert_eq!(
        members(c.cmd(&["SRANDMEMBER", "s", "100"]).await),
        everything
    );
    let rep = list(c.cmd(&["SRANDMEMBER", "s", "-50"]).await);
    assert_eq!(rep.len(), 50);
    assert!(rep.iter().all(|m| everything.contains(m)));
    assert!(rep.iter().collect::<BTreeSet<_>>().len() < 50, "repeats");

    let popped = list(c.cmd(&["SPOP", "s", "5"]).await);
    assert_eq!(popped.iter().collect::<BTreeSet<_>>().len(), 5);
    assert_eq!(c.cmd(&["SCARD", "s"]).await, int(15));
    let Frame::Bulk(p) = c.cmd(&["SPOP", "s"]).await else {
        panic!("a member")
    };
    let p = String::from_utf8_lossy(&p).into_owned();
    assert_eq!(c.cmd(&["SISMEMBER", "s", &p]).await, int(0));
    let rest = members(c.cmd(&["SPOP", "s", "100"]).await);
    assert_eq!(rest.len(), 14);
    let mut seen: BTreeSet<String> = popped.into_iter().collect();
    seen.insert(p);
    seen.extend(rest);
    assert_eq!(seen, everything, "every member popped exactly once");
    assert_eq!(c.cmd(&["EXISTS", "s"]).await, int(0));

    // A whole intset comes in numeric order.
    c.cmd(&["SADD", "i", "10", "-1", "2"]).await;
    assert_eq!(
        c.cmd(&["SRANDMEMBER", "i", "3"]).await,
        bulks(&["-1", "2", "10"])
    );
    assert_eq!(c.cmd(&["SPOP", "i", "3"]).await, bulks(&["-1", "2", "10"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resp3_shapes() {
    let s = start().await;
    let mut c = s.raw().await;
    assert!(matches!(c.cmd(&["HELLO", "3"]).await, Frame::Map(_)));
    check(
        &mut c,
        &[
            (&["SADD", "s", "1", "2", "3", "4"], int(4)),
            (&["SMEMBERS", "s"], set(&["1", "2", "3", "4"])),
            (&["SMEMBERS", "missing"], set(&[])),
            (&["SINTER", "s", "s"], set(&["1", "2", "3", "4"])),
            (&["SINTER", "s", "missing"], set(&[])),
            (&["SUNION", "s"], set(&["1", "2", "3", "4"])),
            (&["SUNION", "missing"], set(&[])),
            (&["SDIFF", "s"], set(&["1", "2", "3", "4"])),
            (&["SDIFF", "missing"], set(&[])),
            (&["SMISMEMBER", "s", "1", "5"], ints(&[1, 0])),
            (&["SPOP", "missing", "1"], set(&[])),
            (&["SPOP", "s", "0"], set(&[])),
            (&["SRANDMEMBER", "s", "0"], arr(vec![])),
            (&["SRANDMEMBER", "missing", "-2"], arr(vec![])),
            (&["SRANDMEMBER", "s", "10"], bulks(&["1", "2", "3", "4"])),
            (&["SRANDMEMBER", "missing"], Frame::Null),
            (&["SPOP", "missing"], Frame::Null),
            (&["SSCAN", "s", "0"], scan("0", &["1", "2", "3", "4"])),
            (&["SINTERCARD", "1", "s"], int(4)),
            (&["SPOP", "s", "10"], set(&["1", "2", "3", "4"])),
        ],
    )
    .await;
    assert!(matches!(
        c.cmd(&["SRANDMEMBER", "missing", "2"]).await,
        Frame::Array(_)
    ));
    c.cmd(&["SADD", "s", "a", "b", "c"]).await;
    assert!(matches!(c.cmd(&["SRANDMEMBER", "s", "2"]).await, Frame::Array(v) if v.len() == 2));
    assert!(matches!(c.cmd(&["SRANDMEMBER", "s", "-5"]).await, Frame::Array(v) if v.len() == 5));
    assert!(matches!(c.cmd(&["SPOP", "s", "2"]).await, Frame::Set(v) if v.len() == 2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn encodings() {
    let s = start().await;
    let mut c = s.raw().await;
    check(
        &mut c,
        &[
            (
                &[
                    "SADD",
                    "i",
                    "10",
                    "-5",
                    "0",
                    "9223372036854775807",
                    "-9223372036854775808",
                ],
                int(5),
            ),
            (&["OBJECT", "ENCODING", "i"], bulk("intset")),
            (
                &["SMEMBERS", "i"],
                bulks(&[
                    "-9223372036854775808",
                    "-5",
                    "0",
                    "10",
                    "9223372036854775807",
                ]),
            ),
            (&["SADD", "j", "01"], int(1)),
            (&["OBJECT", "ENCODING", "j"], bulk("hashtable")),
            (&["SADD", "k", "-0"], int(1)),
            (&["OBJECT", "ENCODING", "k"], bulk("hashtable")),
            (&["SADD", "m", "1", "a"], int(2)),
            (&["SREM", "m", "a"], int(1)),
            (&["OBJECT", "ENCODING", "m"], bulk("hashtable")),
        ],
    )
    .await;
    let ints: Vec<String> = (1..=512).map(|i| i.to_string()).collect();
    let mut cmd = vec!["SADD", "big"];
    cmd.extend(ints.iter().map(String::as_str));
    assert_eq!(c.cmd(&cmd).await, int(512));
    check(
        &mut c,
        &[
            (&["OBJECT", "ENCODING", "big"], bulk("intset")),
            (&["SADD", "big", "513"], int(1)),
            (&["OBJECT", "ENCODING", "big"], bulk("hashtable")),
            (&["SREM", "big", "513"], int(1)),
            (&["OBJECT", "ENCODING", "big"], bulk("hashtable")),
            (&["COPY", "big", "big2"], int(1)),
            (&["OBJECT", "ENCODING", "big2"], bulk("hashtable")),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sscan_walks_every_member_once() {
    let s = start().await;
    let mut c = s.raw().await;
    let all: Vec<String> = (0..1000).map(|i| format!("member:{i}")).collect();
    for chunk in all.chunks(100) {
        let mut cmd = vec!["SADD", "s"];
        cmd.extend(chunk.iter().map(String::as_str));
        c.cmd(&cmd).await;
    }
    c.cmd(&["SADD", "s", "other"]).await;
    for (pattern, want) in [(None, 1001), (Some("member:1*"), 111), (Some("nope*"), 0)] {
        let mut cursor = "0".to_string();
        let mut seen = Vec::new();
        let mut calls = 0;
        loop {
            let mut cmd = vec!["SSCAN", "s", cursor.as_str(), "COUNT", "37"];
            if let Some(p) = pattern {
                cmd.extend(["MATCH", p]);
            }
            let Frame::Array(reply) = c.cmd(&cmd).await else {
                panic!("SSCAN reply")
            };
            let [Frame::Bulk(next), page] = &reply[..] else {
                panic!("SSCAN reply: {reply:?}")
            };
            let page = list(page.clone());
            assert!(page.len() <= 37);
            seen.extend(page);
            calls += 1;
            cursor = String::from_utf8_lossy(next).into_owned();
            if cursor == "0" {
                break;
            }
        }
        let distinct: BTreeSet<_> = seen.iter().collect();
        assert_eq!((seen.len(), distinct.len()), (want, want), "{pattern:?}");
        if pattern.is_none() {
            assert!(calls >= 1001 / 37, "paged: {calls} calls");
        }
    }
    // A cursor of another key, or an unknown one, starts over.
    let Frame::Array(reply) = c.cmd(&["SSCAN", "s", "0", "COUNT", "5"]).await else {
        panic!()
    };
    let Frame::Bulk(cursor) = &reply[0] else {
        panic!()
    };
    let cursor = String::from_utf8_lossy(cursor).into_owned();
    c.cmd(&["SADD", "t", "a", "b"]).await;
    c.cmd(&["SADD", "t", "c"]).await;
    assert_eq!(
        c.cmd(&["SSCAN", "t", &cursor]).await,
        scan("0", &["a", "b", "c"])
    );
    assert_eq!(
        c.cmd(&["SSCAN", "t", "12345"]).await,
        scan("0", &["a", "b", "c"])
    );
    // An intset comes whole whatever COUNT says.
    c.cmd(&["SADD", "i", "3", "1", "2"]).await;
    assert_eq!(
        c.cmd(&["SSCAN", "i", "0", "COUNT", "1"]).await,
        scan("0", &["1", "2", "3"])
    );
    assert_eq!(
        c.cmd(&["SSCAN", "i", "0", "MATCH", "1*", "COUNT", "100"])
            .await,
        scan("0", &["1"])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyspace_hits_and_misses_count_like_redis() {
    let s = start().await;
    let mut c = s.raw().await;
    c.cmd(&["SADD", "s", "1", "2", "3"]).await;
    c.cmd(&["SADD", "t", "2", "3", "4"]).await;
    c.cmd(&["SET", "str", "x"]).await;
    // (command, hits, misses) measured on redis-server 7.0.15.
    let cases: &[(&[&str], i64, i64)] = &[
        (&["SISMEMBER", "s", "1"], 1, 0),
        (&["SISMEMBER", "missing", "1"], 0, 1),
        (&["SISMEMBER", "str", "1"], 1, 0),
        (&["SMISMEMBER", "s", "1", "2"], 1, 0),
        (&["SMEMBERS", "missing"], 0, 1),
        (&["SCARD", "s"], 1, 0),
        (&["SRANDMEMBER", "s", "10"], 1, 0),
        (&["SRANDMEMBER", "missing"], 0, 1),
        (&["SSCAN", "s", "0"], 1, 0),
        (&["SSCAN", "missing", "0"], 0, 1),
        (&["SINTER", "s", "t"], 2, 0),
        (&["SINTER", "missing", "s"], 1, 1),
        (&["SINTER", "s", "str"], 2, 0),
        (&["SINTER", "str", "s"], 1, 0),
        (&["SINTERCARD", "2", "s", "missing"], 1, 1),
        (&["SUNION", "s", "t", "missing"], 2, 1),
        (&["SDIFF", "missing", "s"], 1, 1),
        (&["SINTERSTORE", "d", "s", "missing"], 1, 1),
        (&["SUNIONSTORE", "d", "s", "missing"], 1, 1),
        (&["SDIFFSTORE", "d", "s", "t"], 2, 0),
        (&["SADD", "s", "9"], 0, 0),
        (&["SREM", "s", "9"], 0, 0),
        (&["SMOVE", "s", "t", "1"], 0, 0),
        (&["SPOP", "d"], 0, 0),
        (&["SPOP", "missing"], 0, 0),
    ];
    for (cmd, hits, misses) in cases {
        let (h0, m0) = keyspace_stats(&mut c).await;
        c.cmd(cmd).await;
        let (h1, m1) = keyspace_stats(&mut c).await;
        assert_eq!((h1 - h0, m1 - m0), (*hits, *misses), "{cmd:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_sees_only_real_changes() {
    let s = start().await;
    let mut a = s.raw().await;
    let mut b = s.raw().await;
    // (watched key, another client's command, whether EXEC aborts), from redis-server 7.0.15.
    let cases: &[(&str, &[&str], bool)] = &[
        ("s", &["SADD", "s", "1"], false),
        ("s", &["SADD", "s", "3"], true),
        ("s", &["SREM", "s", "9"], false),
        ("s", &["SREM", "s", "1"], true),
        ("s", &["SMOVE", "s", "t", "9"], false),
        ("t", &["SMOVE", "s", "t", "9"], false),
        ("s", &["SMOVE", "s", "s", "1"], false),
        ("t", &["SMOVE", "s", "t", "1"], true),
        ("d", &["SINTERSTORE", "d", "missing", "s"], false),
        ("d", &["SUNIONSTORE", "d", "missing"], false),
        ("d", &["SUNIONSTORE", "d", "s"], true),
        ("s", &["SPOP", "s", "0"], false),
        ("s", &["SPOP", "s"], true),
    ];
    for (key, cmd, aborts) in cases {
        a.cmd(&["FLUSHALL"]).await;
        a.cmd(&["SADD", "s", "1", "2"]).await;
        a.cmd(&["WATCH", key]).await;
        b.cmd(cmd).await;
        a.cmd(&["MULTI"]).await;
        a.cmd(&["PING"]).await;
        let want = if *aborts {
            Frame::NullArray
        } else {
            arr(vec![simple("PONG")])
        };
        assert_eq!(a.cmd(&["EXEC"]).await, want, "WATCH {key}; {cmd:?}");
    }
    // SMOVE leaves a destination that had the member already alone.
    a.cmd(&["SADD", "t", "1"]).await;
    a.cmd(&["WATCH", "t"]).await;
    b.cmd(&["SMOVE", "s", "t", "1"]).await;
    a.cmd(&["MULTI"]).await;
    assert_eq!(a.cmd(&["EXEC"]).await, arr(vec![]));
    // SINTERSTORE over an existing destination replaces it even with the same members.
    a.cmd(&["SADD", "d", "1", "2"]).await;
    a.cmd(&["WATCH", "d"]).await;
    b.cmd(&["SINTERSTORE", "d", "s", "s"]).await;
    a.cmd(&["MULTI"]).await;
    assert_eq!(a.cmd(&["EXEC"]).await, Frame::NullArray);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transactions_and_generic_commands() {
    let s = start().await;
    let mut c = s.raw().await;
    check(
        &mut c,
        &[
            (&["SADD", "s", "c"], int(1)),
            (&["MULTI"], ok()),
            (&["SADD", "s", "d"], simple("QUEUED")),
            (&["SPOP", "s", "x"], simple("QUEUED")),
            (&["SMEMBERS", "s"], simple("QUEUED")),
            (&["SINTERSTORE", "d", "s"], simple("QUEUED")),
            (
                &["EXEC"],
                arr(vec![int(1), err(POSITIVE), bulks(&["c", "d"]), int(2)]),
            ),
            (&["RENAME", "d", "e"], ok()),
            (&["SMEMBERS", "e"], bulks(&["c", "d"])),
            (&["EXPIRE", "e", "100"], int(1)),
            (&["SADD", "e", "x"], int(1)),
            (&["TTL", "e"], int(100)),
            (&["SUNIONSTORE", "e", "e"], int(3)),
            (&["TTL", "e"], int(-1)),
            (&["MOVE", "e", "1"], int(1)),
            (&["SELECT", "1"], ok()),
            (&["SMEMBERS", "e"], bulks(&["c", "d", "x"])),
            (&["DEL", "e"], int(1)),
            (&["SCARD", "e"], int(0)),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_crate_view() {
    let s = start().await;
    let mut con = s.client().await;
    let added: i64 = redis::cmd("SADD")
        .arg("k")
        .arg(&["x", "y", "z"])
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(added, 3);
    let all: BTreeSet<String> = redis::cmd("SMEMBERS")
        .arg("k")
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(all, ["x", "y", "z"].iter().map(|s| s.to_string()).collect());
    let is: bool = redis::cmd("SISMEMBER")
        .arg("k")
        .arg("y")
        .query_async(&mut con)
        .await
        .unwrap();
    assert!(is);
    let e = redis::cmd("SADD")
        .arg("k")
        .query_async::<i64>(&mut con)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("wrong number of arguments"), "{e}");
}
