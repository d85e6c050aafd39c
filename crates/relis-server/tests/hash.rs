//! The hash family over TCP, with replies and error texts pinned from redis-server 7.0.15 (RESP2
//! and RESP3), listpack order and encodings, HSCAN paging, keyspace statistics, WATCH, MULTI and
//! the `redis` crate's view.

mod common;
use common::*;
use resp::Frame;
use std::collections::{BTreeMap, BTreeSet};

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
const NOT_INT: &str = "ERR value is not an integer or out of range";
const NOT_FLOAT: &str = "ERR value is not a valid float";

fn map(pairs: &[(&str, &str)]) -> Frame {
    Frame::Map(pairs.iter().map(|(f, v)| (bulk(f), bulk(v))).collect())
}

fn scan(cursor: &str, items: &[&str]) -> Frame {
    arr(vec![bulk(cursor), bulks(items)])
}

fn strings(f: Frame) -> Vec<String> {
    match f {
        Frame::Array(v) => v
            .into_iter()
            .map(|m| match m {
                Frame::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
                other => panic!("not a bulk: {other:?}"),
            })
            .collect(),
        other => panic!("not an array: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_get_and_delete() {
    let s = start().await;
    let mut c = s.raw().await;
    let hset_arity = err("ERR wrong number of arguments for 'hset' command");
    check(
        &mut c,
        &[
            (&["HSET", "h", "a", "1", "b", "2"], int(2)),
            (&["HSET", "h"], hset_arity.clone()),
            (&["HSET", "h", "a"], hset_arity.clone()),
            (&["HSET", "h", "a", "1", "b"], hset_arity),
            (&["HSETNX", "h", "a", "2"], int(0)),
            (&["HSETNX", "h", "c", "3"], int(1)),
            (
                &["HSETNX", "h", "c"],
                err("ERR wrong number of arguments for 'hsetnx' command"),
            ),
            (&["HMSET", "h", "d", "4"], ok()),
            (
                &["HMSET", "h", "d"],
                err("ERR wrong number of arguments for 'hmset' command"),
            ),
            (
                &["HMSET", "h", "d", "4", "e"],
                err("ERR wrong number of arguments for 'hmset' command"),
            ),
            (&["HGET", "h", "a"], bulk("1")),
            (&["HGET", "h", "zz"], Frame::Null),
            (&["HGET", "nokey", "a"], Frame::Null),
            (
                &["HMGET", "h", "a", "zz", "b"],
                arr(vec![bulk("1"), Frame::Null, bulk("2")]),
            ),
            (
                &["HMGET", "nokey", "a", "b"],
                arr(vec![Frame::Null, Frame::Null]),
            ),
            (
                &["HMGET", "h"],
                err("ERR wrong number of arguments for 'hmget' command"),
            ),
            (&["HDEL", "h", "zz"], int(0)),
            (&["HDEL", "h", "a", "a", "b"], int(2)),
            (&["HDEL", "nokey", "a"], int(0)),
            (&["HEXISTS", "h", "c"], int(1)),
            (&["HEXISTS", "h", "a"], int(0)),
            (&["HEXISTS", "nokey", "a"], int(0)),
            (&["HLEN", "h"], int(2)),
            (&["HLEN", "nokey"], int(0)),
            (&["HSTRLEN", "h", "c"], int(1)),
            (&["HSTRLEN", "h", "zz"], int(0)),
            (&["HSTRLEN", "nokey", "zz"], int(0)),
            (&["HKEYS", "h"], bulks(&["c", "d"])),
            (&["HVALS", "h"], bulks(&["3", "4"])),
            (&["HGETALL", "h"], bulks(&["c", "3", "d", "4"])),
            (&["HGETALL", "nokey"], arr(vec![])),
            (&["HKEYS", "nokey"], arr(vec![])),
            (&["HVALS", "nokey"], arr(vec![])),
            (&["TYPE", "h"], simple("hash")),
            (&["HSET", "h", "c", "30", "new", ""], int(1)),
            (&["HGET", "h", "new"], bulk("")),
            (&["HSTRLEN", "h", "c"], int(2)),
            // The last field takes the key with it.
            (&["HDEL", "h", "c", "d", "new"], int(3)),
            (&["EXISTS", "h"], int(0)),
            (&["HLEN", "h"], int(0)),
        ],
    )
    .await;
    // Binary-safe fields and values.
    let f: &[u8] = b"\x00\r\n\xff";
    assert_eq!(c.cmd_bytes(&[b"HSET", b"bin", f, f]).await, int(1));
    assert_eq!(
        c.cmd_bytes(&[b"HGET", b"bin", f]).await,
        Frame::Bulk(bytes::Bytes::from_static(b"\x00\r\n\xff"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_type_and_arity() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["SET", "s", "v"]).await, ok());
    for cmd in [
        &["HSET", "s", "a", "1"][..],
        &["HMSET", "s", "a", "1"],
        &["HSETNX", "s", "a", "1"],
        &["HGET", "s", "a"],
        &["HMGET", "s", "a"],
        &["HDEL", "s", "a"],
        &["HEXISTS", "s", "a"],
        &["HLEN", "s"],
        &["HSTRLEN", "s", "a"],
        &["HKEYS", "s"],
        &["HVALS", "s"],
        &["HGETALL", "s"],
        &["HINCRBY", "s", "a", "1"],
        &["HINCRBYFLOAT", "s", "a", "1"],
        &["HRANDFIELD", "s"],
        &["HRANDFIELD", "s", "1"],
        &["HRANDFIELD", "s", "-1", "WITHVALUES"],
        &["HSCAN", "s", "0"],
        &["HSCAN", "s", "0", "COUNT", "0"],
    ] {
        assert_eq!(c.cmd(cmd).await, err(WRONGTYPE), "{cmd:?}");
    }
    assert_eq!(c.cmd(&["GET", "s"]).await, bulk("v"), "untouched");
    for (cmd, name) in [
        (&["HGET", "h"][..], "hget"),
        (&["HGET", "h", "a", "b"], "hget"),
        (&["HLEN"], "hlen"),
        (&["HLEN", "a", "b"], "hlen"),
        (&["HDEL", "h"], "hdel"),
        (&["HEXISTS", "h"], "hexists"),
        (&["HSTRLEN", "h"], "hstrlen"),
        (&["HKEYS"], "hkeys"),
        (&["HVALS", "a", "b"], "hvals"),
        (&["HGETALL"], "hgetall"),
        (&["HINCRBY", "h", "f"], "hincrby"),
        (&["HINCRBYFLOAT", "h", "f", "1", "2"], "hincrbyfloat"),
        (&["HRANDFIELD"], "hrandfield"),
        (&["HSCAN", "h"], "hscan"),
    ] {
        assert_eq!(
            c.cmd(cmd).await,
            err(&format!(
                "ERR wrong number of arguments for '{name}' command"
            )),
            "{cmd:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn increments() {
    let s = start().await;
    let mut c = s.raw().await;
    let huge = "99999999999999999996685879655845645660560099847415567207797047994921734868838061872100126921888539320446747225054013223152134749593960583597420814430196418767959100019603190778663109604507106667939153395788938914560543563061268364901618630217086589253444881623791300855757318142424510452728255046343928578048";
    check(
        &mut c,
        &[
            (&["SET", "s", "v"], ok()),
            // The increment is read before the key's type is checked.
            (&["HINCRBY", "s", "a", "x"], err(NOT_INT)),
            (&["HINCRBYFLOAT", "s", "a", "x"], err(NOT_FLOAT)),
            (
                &["HINCRBYFLOAT", "s", "a", "inf"],
                err("ERR value is NaN or Infinity"),
            ),
            (
                &["HINCRBYFLOAT", "nk", "a", "-inf"],
                err("ERR value is NaN or Infinity"),
            ),
            (&["HINCRBYFLOAT", "nk", "a", "nan"], err(NOT_FLOAT)),
            (&["EXISTS", "nk"], int(0)),
            (&["HSET", "h", "c", "3", "d", "4"], int(2)),
            (&["HINCRBY", "h", "c", "5"], int(8)),
            (&["HINCRBY", "h", "c", "x"], err(NOT_INT)),
            (&["HINCRBY", "h", "c", "1.5"], err(NOT_INT)),
            (&["HINCRBY", "h", "new", "-3"], int(-3)),
            (
                &["HINCRBY", "h", "d", "9223372036854775807"],
                err("ERR increment or decrement would overflow"),
            ),
            (
                &["HINCRBY", "h", "n", "-9223372036854775808"],
                int(i64::MIN),
            ),
            (
                &["HINCRBY", "h", "n", "-1"],
                err("ERR increment or decrement would overflow"),
            ),
            (
                &["HSET", "h", "str", "abc", "sp", " 1", "sp2", "1 "],
                int(3),
            ),
            (
                &["HINCRBY", "h", "str", "1"],
                err("ERR hash value is not an integer"),
            ),
            (
                &["HINCRBY", "h", "sp", "1"],
                err("ERR hash value is not an integer"),
            ),
            (
                &["HINCRBYFLOAT", "h", "str", "1"],
                err("ERR hash value is not a float"),
            ),
            (
                &["HINCRBYFLOAT", "h", "sp", "1"],
                err("ERR hash value is not a float"),
            ),
            (
                &["HINCRBYFLOAT", "h", "sp2", "1"],
                err("ERR hash value is not a float"),
            ),
            (&["HINCRBYFLOAT", "h", "f", "1.5"], bulk("1.5")),
            (&["HINCRBYFLOAT", "h", "f", "x"], err(NOT_FLOAT)),
            (&["HINCRBYFLOAT", "h", "f", " 1"], err(NOT_FLOAT)),
            (&["HINCRBYFLOAT", "h", "f", "1 "], err(NOT_FLOAT)),
            (&["HINCRBYFLOAT", "h", "c", "0.1"], bulk("8.1")),
            (&["HINCRBYFLOAT", "h", "hex", "0x10"], bulk("16")),
            (&["HINCRBYFLOAT", "h", "f2", "1e308"], bulk(huge)),
            (&["HGET", "h", "f2"], bulk(huge)),
            (&["HINCRBYFLOAT", "h", "c", "-8.1"], bulk("0")),
            (&["HGET", "h", "c"], bulk("0")),
            (&["HINCRBYFLOAT", "h", "e", "5.0e3"], bulk("5000")),
            (&["HINCRBY", "h", "e", "1"], int(5001)),
        ],
    )
    .await;
    // A sum beyond long double's range.
    assert_eq!(
        c.cmd(&["HSET", "h", "max", "1e4932"]).await,
        int(1),
        "long double's largest power of ten"
    );
    assert_eq!(
        c.cmd(&["HINCRBYFLOAT", "h", "max", "1e4932"]).await,
        err("ERR increment would produce NaN or Infinity")
    );
    assert_eq!(c.cmd(&["HGET", "h", "max"]).await, bulk("1e4932"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resp3_shapes() {
    let s = start().await;
    let mut c = s.raw().await;
    assert!(matches!(c.cmd(&["HELLO", "3"]).await, Frame::Map(_)));
    check(
        &mut c,
        &[
            (&["HSET", "h", "a", "1", "b", "2", "c", "3"], int(3)),
            (
                &["HGETALL", "h"],
                map(&[("a", "1"), ("b", "2"), ("c", "3")]),
            ),
            (&["HGETALL", "nokey"], map(&[])),
            (&["HKEYS", "nokey"], arr(vec![])),
            (&["HVALS", "h"], bulks(&["1", "2", "3"])),
            (&["HMGET", "h", "a", "x"], arr(vec![bulk("1"), Frame::Null])),
            (&["HGET", "h", "x"], Frame::Null),
            (&["HRANDFIELD", "nokey"], Frame::Null),
            (&["HRANDFIELD", "h", "0", "WITHVALUES"], arr(vec![])),
            (&["HRANDFIELD", "nokey", "2", "WITHVALUES"], arr(vec![])),
            (
                &["HRANDFIELD", "h", "5", "WITHVALUES"],
                arr(vec![
                    bulks(&["a", "1"]),
                    bulks(&["b", "2"]),
                    bulks(&["c", "3"]),
                ]),
            ),
            (&["HRANDFIELD", "h", "3"], bulks(&["a", "b", "c"])),
            (
                &["HSCAN", "h", "0"],
                scan("0", &["a", "1", "b", "2", "c", "3"]),
            ),
            (&["HINCRBYFLOAT", "h", "f", "1.5"], bulk("1.5")),
            (&["HINCRBY", "h", "c", "1"], int(4)),
        ],
    )
    .await;
    // Exact bytes of the RESP3 shapes.
    c.send(&encode_command(&[b"HGETALL", b"nokey"])).await;
    assert_eq!(c.read_raw().await.unwrap(), b"%0\r\n");
    c.send(&encode_command(&[b"HGET", b"h", b"x"])).await;
    assert_eq!(c.read_raw().await.unwrap(), b"_\r\n");
    c.send(&encode_command(&[
        b"HRANDFIELD",
        b"h",
        b"-2",
        b"WITHVALUES",
    ]))
    .await;
    let raw = c.read_raw().await.unwrap();
    assert!(raw.starts_with(b"*2\r\n*2\r\n$1\r\n"), "{}", show(&raw));
    let Frame::Array(pairs) = c.cmd(&["HRANDFIELD", "h", "-20", "WITHVALUES"]).await else {
        panic!("an array");
    };
    assert_eq!(pairs.len(), 20);
    let values: BTreeMap<&str, &str> = [("a", "1"), ("b", "2"), ("c", "4"), ("f", "1.5")].into();
    for p in pairs {
        let pair = strings(p);
        assert_eq!(values.get(pair[0].as_str()), Some(&pair[1].as_str()));
    }
    // RESP2 for comparison: flat.
    assert!(matches!(c.cmd(&["HELLO", "2"]).await, Frame::Array(_)));
    assert_eq!(
        c.cmd(&["HGETALL", "h"]).await,
        bulks(&["a", "1", "b", "2", "c", "4", "f", "1.5"])
    );
    assert_eq!(
        strings(c.cmd(&["HRANDFIELD", "h", "1", "WITHVALUES"]).await).len(),
        2
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listpack_order_and_encodings() {
    let s = start().await;
    let mut c = s.raw().await;
    let long = "v".repeat(65);
    let exact = "v".repeat(64);
    check(
        &mut c,
        &[
            // Insertion order; an update keeps the field's place; a field re-added goes last.
            (&["HSET", "h", "z", "1", "a", "2", "m", "3"], int(3)),
            (&["HSET", "h", "a", "9"], int(0)),
            (&["HDEL", "h", "z"], int(1)),
            (&["HSET", "h", "z", "0", "b", "1"], int(2)),
            (&["HKEYS", "h"], bulks(&["a", "m", "z", "b"])),
            (&["HVALS", "h"], bulks(&["9", "3", "0", "1"])),
            (
                &["HGETALL", "h"],
                bulks(&["a", "9", "m", "3", "z", "0", "b", "1"]),
            ),
            (
                &["HRANDFIELD", "h", "10", "WITHVALUES"],
                bulks(&["a", "9", "m", "3", "z", "0", "b", "1"]),
            ),
            (
                &["HSCAN", "h", "0", "COUNT", "1"],
                scan("0", &["a", "9", "m", "3", "z", "0", "b", "1"]),
            ),
            (&["OBJECT", "ENCODING", "h"], bulk("listpack")),
            // COPY and RENAME keep the order and the encoding.
            (&["COPY", "h", "h2"], int(1)),
            (&["HKEYS", "h2"], bulks(&["a", "m", "z", "b"])),
            (&["RENAME", "h2", "h3"], ok()),
            (&["HKEYS", "h3"], bulks(&["a", "m", "z", "b"])),
            // 64 bytes fit a listpack, 65 do not; the conversion is for good.
            (&["HSET", "e", "a", &exact, &exact, "b"], int(2)),
            (&["OBJECT", "ENCODING", "e"], bulk("listpack")),
            (&["HSET", "e", "a", &long], int(0)),
            (&["OBJECT", "ENCODING", "e"], bulk("hashtable")),
            (&["HSET", "e", "a", "short"], int(0)),
            (&["OBJECT", "ENCODING", "e"], bulk("hashtable")),
            (&["COPY", "e", "e2"], int(1)),
            (&["OBJECT", "ENCODING", "e2"], bulk("hashtable")),
            (&["DEL", "e"], int(1)),
            (&["HSET", "e", "a", "1"], int(1)),
            (&["OBJECT", "ENCODING", "e"], bulk("listpack")),
            // A long field converts through any write that sets it.
            (&["HSETNX", "n", &long, "1"], int(1)),
            (&["OBJECT", "ENCODING", "n"], bulk("hashtable")),
            (&["HSET", "n2", "x", "1"], int(1)),
            (&["HINCRBY", "n2", &long, "1"], int(1)),
            (&["OBJECT", "ENCODING", "n2"], bulk("hashtable")),
            (&["HSET", "n3", "x", "1"], int(1)),
            (
                &["HINCRBYFLOAT", "n3", "x", "1e100"],
                // As redis-server prints 1 + 1e100 in long double.
                bulk("9999999999999999999669353532207342619498699019828496079271391541752018669482644324418977840117055488"),
            ),
            (&["OBJECT", "ENCODING", "n3"], bulk("hashtable")),
            // HSETNX on a field the hash has converts nothing.
            (&["HSET", "n4", "a", "1"], int(1)),
            (&["HSETNX", "n4", "a", &long], int(0)),
            (&["OBJECT", "ENCODING", "n4"], bulk("listpack")),
        ],
    )
    .await;
    // redis-server 7.0.15's built-in hash-max-listpack-entries is 512.
    let mut cmd: Vec<String> = vec!["HSET".into(), "big".into()];
    for i in 0..512 {
        cmd.push(format!("f{i}"));
        cmd.push(i.to_string());
    }
    let args: Vec<&str> = cmd.iter().map(String::as_str).collect();
    assert_eq!(c.cmd(&args).await, int(512));
    assert_eq!(
        c.cmd(&["OBJECT", "ENCODING", "big"]).await,
        bulk("listpack")
    );
    let keys = strings(c.cmd(&["HKEYS", "big"]).await);
    assert_eq!(keys[..3], ["f0", "f1", "f2"], "insertion order");
    assert_eq!(c.cmd(&["HSET", "big", "one", "more"]).await, int(1));
    assert_eq!(
        c.cmd(&["OBJECT", "ENCODING", "big"]).await,
        bulk("hashtable")
    );
    assert_eq!(c.cmd(&["HDEL", "big", "one", "f0"]).await, int(2));
    assert_eq!(
        c.cmd(&["OBJECT", "ENCODING", "big"]).await,
        bulk("hashtable")
    );
    // A hashtable lists its fields in field order.
    let keys = strings(c.cmd(&["HKEYS", "big"]).await);
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    assert_eq!(c.cmd(&["HLEN", "big"]).await, int(511));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_fields() {
    let s = start().await;
    let mut c = s.raw().await;
    let range_all =
        "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807";
    let range = "ERR value is out of range";
    check(
        &mut c,
        &[
            (&["SET", "s", "v"], ok()),
            (&["HSET", "h", "a", "1", "b", "2", "c", "3"], int(3)),
            (&["HRANDFIELD", "h", "10"], bulks(&["a", "b", "c"])),
            (
                &["HRANDFIELD", "h", "10", "withvalues"],
                bulks(&["a", "1", "b", "2", "c", "3"]),
            ),
            (
                &["HRANDFIELD", "h", "3", "WITHVALUES"],
                bulks(&["a", "1", "b", "2", "c", "3"]),
            ),
            (
                &["HRANDFIELD", "h", "9223372036854775807"],
                bulks(&["a", "b", "c"]),
            ),
            (&["HRANDFIELD", "h", "0"], arr(vec![])),
            (&["HRANDFIELD", "h", "0", "withvalues"], arr(vec![])),
            (&["HRANDFIELD", "nokey"], Frame::Null),
            (&["HRANDFIELD", "nokey", "5"], arr(vec![])),
            (&["HRANDFIELD", "nokey", "-5", "withvalues"], arr(vec![])),
            // The count is read before the key is looked up.
            (&["HRANDFIELD", "nokey", "x"], err(NOT_INT)),
            (&["HRANDFIELD", "s", "x"], err(NOT_INT)),
            (&["HRANDFIELD", "h", "x"], err(NOT_INT)),
            (&["HRANDFIELD", "h", "1.5"], err(NOT_INT)),
            (&["HRANDFIELD", "h", "+1"], err(NOT_INT)),
            (&["HRANDFIELD", "h", "9223372036854775808"], err(NOT_INT)),
            (&["HRANDFIELD", "h", "1", "foo"], err("ERR syntax error")),
            (&["HRANDFIELD", "s", "1", "foo"], err("ERR syntax error")),
            (
                &["HRANDFIELD", "h", "1", "withvalues", "foo"],
                err("ERR syntax error"),
            ),
            (&["HRANDFIELD", "h", "-9223372036854775808"], err(range_all)),
            (&["HRANDFIELD", "s", "-9223372036854775808"], err(range_all)),
            (
                &["HRANDFIELD", "h", "-4611686018427387904", "withvalues"],
                err(range),
            ),
            (
                &["HRANDFIELD", "nokey", "4611686018427387904", "withvalues"],
                err(range),
            ),
            (
                &["HRANDFIELD", "h", "4611686018427387903", "withvalues"],
                bulks(&["a", "1", "b", "2", "c", "3"]),
            ),
            (
                &["HRANDFIELD", "h", "4611686018427387904"],
                bulks(&["a", "b", "c"]),
            ),
            // Relis bounds the repeats Redis would run out of memory building.
            (&["HRANDFIELD", "h", "-9223372036854775807"], err(range)),
            (
                &["HRANDFIELD", "nokey", "-9223372036854775807"],
                arr(vec![]),
            ),
        ],
    )
    .await;
    // One field: any of them, and each of them some time.
    let mut seen = BTreeSet::new();
    for _ in 0..200 {
        let Frame::Bulk(f) = c.cmd(&["HRANDFIELD", "h"]).await else {
            panic!("a field");
        };
        seen.insert(f);
    }
    assert_eq!(seen.len(), 3);
    // Negative counts repeat.
    let got = strings(c.cmd(&["HRANDFIELD", "h", "-100"]).await);
    assert_eq!(got.len(), 100);
    assert_eq!(got.iter().collect::<BTreeSet<_>>().len(), 3);
    // Positive counts are distinct, from a hashtable too.
    let mut cmd: Vec<String> = vec!["HSET".into(), "big".into()];
    for i in 0..1000 {
        cmd.push(format!("f{i}"));
        cmd.push(format!("v{i}"));
    }
    let args: Vec<&str> = cmd.iter().map(String::as_str).collect();
    assert_eq!(c.cmd(&args).await, int(1000));
    for n in [1, 10, 400, 999] {
        let got = strings(
            c.cmd(&["HRANDFIELD", "big", &n.to_string(), "WITHVALUES"])
                .await,
        );
        assert_eq!(got.len(), 2 * n);
        let fields: BTreeSet<&String> = got.iter().step_by(2).collect();
        assert_eq!(fields.len(), n, "distinct");
        for pair in got.chunks(2) {
            assert_eq!(pair[1], format!("v{}", &pair[0][1..]));
        }
    }
    let got = strings(c.cmd(&["HRANDFIELD", "big", "-3000"]).await);
    assert_eq!(got.len(), 3000);
    assert!(got.iter().collect::<BTreeSet<_>>().len() > 800);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_small_and_large_hashes() {
    let s = start().await;
    let mut c = s.raw().await;
    check(
        &mut c,
        &[
            (&["SET", "s", "v"], ok()),
            (&["HSET", "h", "a", "1", "b", "2", "c", "3"], int(3)),
            (
                &["HSCAN", "h", "0"],
                scan("0", &["a", "1", "b", "2", "c", "3"]),
            ),
            // A listpack comes whole whatever the cursor and COUNT.
            (
                &["HSCAN", "h", "12345", "COUNT", "1"],
                scan("0", &["a", "1", "b", "2", "c", "3"]),
            ),
            (
                &["HSCAN", "h", "0", "MATCH", "a*", "count", "1"],
                scan("0", &["a", "1"]),
            ),
            (&["HSCAN", "h", "0", "MATCH", ""], scan("0", &[])),
            (
                &[
                    "HSCAN", "h", "0", "MATCH", "b", "COUNT", "100", "match", "c",
                ],
                scan("0", &["c", "3"]),
            ),
            // Options are read after the lookup: a missing key ignores them.
            (&["HSCAN", "h", "0", "COUNT", "0"], err("ERR syntax error")),
            (&["HSCAN", "nokey", "0", "COUNT", "0"], scan("0", &[])),
            (&["HSCAN", "nokey", "0", "COUNT", "x"], scan("0", &[])),
            (&["HSCAN", "nokey", "0", "foo", "bar"], scan("0", &[])),
            (&["HSCAN", "s", "0", "COUNT", "0"], err(WRONGTYPE)),
            (&["HSCAN", "h", "0", "COUNT", "x"], err(NOT_INT)),
            (&["HSCAN", "h", "0", "MATCH"], err("ERR syntax error")),
            (&["HSCAN", "h", "0", "NOVALUES"], err("ERR syntax error")),
            (
                &["HSCAN", "h", "0", "TYPE", "string"],
                err("ERR syntax error"),
            ),
            (&["HSCAN", "h", "0", "COUNT", "-1"], err("ERR syntax error")),
            (
                &["HSCAN", "h", "0", "COUNT", "1", "COUNT", "0"],
                err("ERR syntax error"),
            ),
            // The cursor is checked before anything else.
            (&["HSCAN", "nokey", "x"], err("ERR invalid cursor")),
            (&["HSCAN", "s", "x"], err("ERR invalid cursor")),
        ],
    )
    .await;
    // A hashtable pages, in field order, each field once.
    let mut cmd: Vec<String> = vec!["HSET".into(), "big".into()];
    for i in 0..600 {
        cmd.push(format!("f{i}"));
        cmd.push(format!("v{i}"));
    }
    let args: Vec<&str> = cmd.iter().map(String::as_str).collect();
    assert_eq!(c.cmd(&args).await, int(600));
    for (pattern, want) in [(None, 600), (Some("f1*"), 111), (Some("*9"), 60)] {
        let mut cursor = "0".to_string();
        let mut got = BTreeMap::new();
        let mut calls = 0;
        loop {
            let mut cmd = vec!["HSCAN", "big", &cursor, "COUNT", "50"];
            if let Some(p) = pattern {
                cmd.extend(["MATCH", p]);
            }
            let Frame::Array(mut reply) = c.cmd(&cmd).await else {
                panic!("HSCAN reply");
            };
            let items = strings(reply.pop().unwrap());
            let Frame::Bulk(next) = reply.pop().unwrap() else {
                panic!("cursor");
            };
            assert!(items.len() <= 100);
            for pair in items.chunks(2) {
                assert_eq!(pair[1], format!("v{}", &pair[0][1..]));
                assert!(got.insert(pair[0].clone(), pair[1].clone()).is_none());
            }
            calls += 1;
            cursor = String::from_utf8(next.to_vec()).unwrap();
            if cursor == "0" {
                break;
            }
        }
        assert_eq!(got.len(), want, "{pattern:?}");
        if pattern.is_none() {
            assert_eq!(calls, 12);
        }
    }
    // The largest COUNT walks everything in one call.
    let Frame::Array(mut all) = c
        .cmd(&["HSCAN", "big", "0", "COUNT", "9223372036854775807"])
        .await
    else {
        panic!("HSCAN reply");
    };
    assert_eq!(strings(all.pop().unwrap()).len(), 1200);
    assert_eq!(all.pop().unwrap(), bulk("0"));
    // A cursor of another key, or never issued, restarts the scan.
    let Frame::Array(reply) = c.cmd(&["HSCAN", "big", "0", "COUNT", "5"]).await else {
        panic!("HSCAN reply");
    };
    let Frame::Bulk(cur) = &reply[0] else {
        panic!("cursor")
    };
    let cur = String::from_utf8(cur.to_vec()).unwrap();
    assert_ne!(cur, "0");
    // Field order: f0 f1 f10 f100 f101 | f102 ...
    let Frame::Array(mut next) = c.cmd(&["HSCAN", "big", &cur, "COUNT", "5"]).await else {
        panic!("HSCAN reply");
    };
    assert_eq!(strings(next.pop().unwrap())[0], "f102", "the scan goes on");
    let Frame::Array(mut unknown) = c.cmd(&["HSCAN", "big", "987654321", "COUNT", "5"]).await
    else {
        panic!("HSCAN reply");
    };
    assert_eq!(
        strings(unknown.pop().unwrap())[..2],
        ["f0", "v0"],
        "an unknown cursor starts over"
    );
    assert_eq!(
        c.cmd(&["HSCAN", "h", &cur]).await,
        scan("0", &["a", "1", "b", "2", "c", "3"])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyspace_statistics() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["HSET", "h", "a", "1"]).await, int(1));
    assert_eq!(c.cmd(&["SET", "s", "v"]).await, ok());
    let (h0, m0) = keyspace_stats(&mut c).await;
    for cmd in [
        &["HGET", "h", "a"][..],
        &["HGET", "h", "zz"],
        &["HMGET", "h", "a", "b"],
        &["HEXISTS", "h", "zz"],
        &["HLEN", "h"],
        &["HSTRLEN", "h", "a"],
        &["HKEYS", "h"],
        &["HVALS", "h"],
        &["HGETALL", "h"],
        &["HRANDFIELD", "h"],
        &["HRANDFIELD", "h", "2"],
        &["HSCAN", "h", "0"],
        &["HGET", "s", "a"],
    ] {
        c.cmd(cmd).await;
    }
    let (h1, m1) = keyspace_stats(&mut c).await;
    assert_eq!((h1 - h0, m1 - m0), (13, 0), "a hit each, WRONGTYPE too");
    for cmd in [
        &["HGET", "no", "a"][..],
        &["HGETALL", "no"],
        &["HRANDFIELD", "no", "-3"],
        &["HSCAN", "no", "0"],
    ] {
        c.cmd(cmd).await;
    }
    let (h2, m2) = keyspace_stats(&mut c).await;
    assert_eq!((h2 - h1, m2 - m1), (0, 4));
    // Writes look keys up for writing: they count nothing.
    for cmd in [
        &["HSET", "h", "b", "2"][..],
        &["HDEL", "h", "b"],
        &["HINCRBY", "h", "n", "1"],
        &["HSETNX", "h2", "a", "1"],
    ] {
        c.cmd(cmd).await;
    }
    assert_eq!(keyspace_stats(&mut c).await, (h2, m2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_and_multi() {
    let s = start().await;
    let mut a = s.raw().await;
    let mut b = s.raw().await;
    assert_eq!(a.cmd(&["HSET", "h", "a", "1"]).await, int(1));
    // A write that changes nothing (HSETNX of a field that exists, HDEL of a missing field)
    // does not touch the key: the transaction runs.
    assert_eq!(a.cmd(&["WATCH", "h"]).await, ok());
    assert_eq!(b.cmd(&["HSETNX", "h", "a", "2"]).await, int(0));
    assert_eq!(b.cmd(&["HDEL", "h", "zz"]).await, int(0));
    assert_eq!(b.cmd(&["HGETALL", "h"]).await, bulks(&["a", "1"]));
    assert_eq!(a.cmd(&["MULTI"]).await, ok());
    assert_eq!(a.cmd(&["HINCRBY", "h", "a", "1"]).await, simple("QUEUED"));
    assert_eq!(a.cmd(&["EXEC"]).await, arr(vec![int(2)]));
    // HSET of the same value is a write.
    assert_eq!(a.cmd(&["WATCH", "h"]).await, ok());
    assert_eq!(b.cmd(&["HSET", "h", "a", "2"]).await, int(0));
    assert_eq!(a.cmd(&["MULTI"]).await, ok());
    assert_eq!(a.cmd(&["HGET", "h", "a"]).await, simple("QUEUED"));
    assert_eq!(a.cmd(&["EXEC"]).await, Frame::NullArray);
    // An odd HSET is checked by the command: queued, and it fails inside EXEC alone.
    assert_eq!(a.cmd(&["MULTI"]).await, ok());
    assert_eq!(
        a.cmd(&["HSET", "h", "x"]).await,
        err("ERR wrong number of arguments for 'hset' command")
    );
    assert_eq!(a.cmd(&["DISCARD"]).await, ok());
    assert_eq!(a.cmd(&["MULTI"]).await, ok());
    assert_eq!(a.cmd(&["HSET", "h", "x", "1", "y"]).await, simple("QUEUED"));
    assert_eq!(a.cmd(&["HSET", "h", "x", "1"]).await, simple("QUEUED"));
    assert_eq!(
        a.cmd(&["EXEC"]).await,
        arr(vec![
            err("ERR wrong number of arguments for 'hset' command"),
            int(1)
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_info() {
    let s = start().await;
    let mut c = s.raw().await;
    let Frame::Array(info) = c
        .cmd(&["COMMAND", "INFO", "hset", "hexists", "hrandfield"])
        .await
    else {
        panic!("COMMAND INFO");
    };
    assert_eq!(info.len(), 3);
    let Frame::Array(hset) = &info[0] else {
        panic!("hset")
    };
    assert_eq!(hset[0], bulk("hset"));
    assert_eq!(hset[1], int(-4));
    assert_eq!(
        hset[2],
        arr(vec![simple("write"), simple("denyoom"), simple("fast")])
    );
    let Frame::Array(hrand) = &info[2] else {
        panic!("hrandfield")
    };
    assert_eq!(hrand[1], int(-2));
    assert_eq!(
        c.cmd(&["COMMAND", "GETKEYS", "HSET", "k", "f", "v"]).await,
        bulks(&["k"])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_crate_view() {
    use redis::AsyncCommands;
    let s = start().await;
    let mut con = s.client().await;
    let _: () = con
        .hset_multiple("user:1", &[("name", "Ada"), ("lang", "rust")])
        .await
        .unwrap();
    let all: std::collections::HashMap<String, String> = con.hgetall("user:1").await.unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all["name"], "Ada");
    let n: i64 = con.hincr("user:1", "visits", 3).await.unwrap();
    assert_eq!(n, 3);
    let f: f64 = con.hincr("user:1", "score", 1.5).await.unwrap();
    assert_eq!(f, 1.5);
    let v: Option<String> = con.hget("user:1", "missing").await.unwrap();
    assert_eq!(v, None);
    let exists: bool = con.hexists("user:1", "name").await.unwrap();
    assert!(exists);
    let keys: Vec<String> = con.hkeys("user:1").await.unwrap();
    assert_eq!(keys, ["name", "lang", "visits", "score"]);
    let removed: i64 = con.hdel("user:1", &["lang", "nope"]).await.unwrap();
    assert_eq!(removed, 1);
    let len: i64 = con.hlen("user:1").await.unwrap();
    assert_eq!(len, 3);
    let e: redis::RedisResult<i64> = con.hincr("user:1", "name", 1).await;
    assert_eq!(
        e.unwrap_err().detail(),
        Some("hash value is not an integer")
    );
}
