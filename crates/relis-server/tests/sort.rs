//! SORT and SORT_RO over TCP, with replies and error texts pinned from redis-server 7.0.15
//! (RESP2 and RESP3): numeric and ALPHA sorting with Redis's parsing and comparison quirks, BY
//! and GET patterns, BY nosort, LIMIT, STORE (replacing any type, deleting on an empty result,
//! serving blocked clients, aborting WATCH), keyspace statistics, COMMAND GETKEYS and the
//! `redis` crate's view.

mod common;
use bytes::Bytes;
use common::*;
use resp::Frame;
use std::time::Duration;

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
const NOT_INT: &str = "ERR value is not an integer or out of range";
const NOT_DOUBLE: &str = "ERR One or more scores can't be converted into double";
const SYNTAX: &str = "ERR syntax error";

/// An array of bulk strings and nils (`None`).
fn opt(items: &[Option<&str>]) -> Frame {
    Frame::Array(items.iter().map(|i| i.map_or(Frame::Null, bulk)).collect())
}

fn bin(b: &[u8]) -> Frame {
    Frame::Bulk(Bytes::copy_from_slice(b))
}

async fn setup_weights(c: &mut Raw) {
    for cmd in [
        &["RPUSH", "l", "3", "1", "2", "10"][..],
        &["SET", "w_3", "30"],
        &["SET", "w_1", "10"],
        &["SET", "w_2", "20"],
        &["HSET", "h_1", "f", "5"],
        &["HSET", "h_3", "f", "1"],
        &["SET", "s", "str"],
        &["HSET", "hh", "a", "1"],
    ] {
        c.cmd(cmd).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_by_get_limit_and_order() {
    let s = start().await;
    let mut c = s.raw().await;
    setup_weights(&mut c).await;
    check(
        &mut c,
        &[
            (&["SORT", "l"], bulks(&["1", "2", "3", "10"])),
            (&["SORT", "l", "DESC"], bulks(&["10", "3", "2", "1"])),
            (&["SORT", "l", "ALPHA"], bulks(&["1", "10", "2", "3"])),
            (
                &["sort", "l", "asc", "desc", "asc"],
                bulks(&["1", "2", "3", "10"]),
            ),
            // A missing BY key scores 0; ties go by the element's bytes.
            (&["SORT", "l", "BY", "w_*"], bulks(&["10", "1", "2", "3"])),
            (
                &[
                    "SORT", "l", "BY", "w_*", "GET", "#", "GET", "w_*", "GET", "h_*->f",
                ],
                opt(&[
                    Some("10"),
                    None,
                    None,
                    Some("1"),
                    Some("10"),
                    Some("5"),
                    Some("2"),
                    Some("20"),
                    None,
                    Some("3"),
                    Some("30"),
                    Some("1"),
                ]),
            ),
            (
                &["SORT", "l", "BY", "h_*->f", "GET", "h_*->f"],
                opt(&[None, None, Some("1"), Some("5")]),
            ),
            // BY without a star: the list's own order, DESC reverses it, LIMIT is a range.
            (
                &["SORT", "l", "BY", "nosort", "DESC"],
                bulks(&["10", "2", "1", "3"]),
            ),
            (
                &["SORT", "l", "BY", "nosort", "LIMIT", "1", "2"],
                bulks(&["1", "2"]),
            ),
            (
                &["SORT", "l", "BY", "nosort", "LIMIT", "1", "2", "DESC"],
                bulks(&["2", "1"]),
            ),
            (
                &["SORT", "l", "LIMIT", "1", "2", "DESC"],
                bulks(&["3", "2"]),
            ),
            (&["SORT", "l", "LIMIT", "-1", "2"], bulks(&["1", "2"])),
            (&["SORT", "l", "LIMIT", "1", "-1"], bulks(&["2", "3", "10"])),
            (&["SORT", "l", "LIMIT", "0", "0"], arr(vec![])),
            (&["SORT", "l", "LIMIT", "4", "1"], arr(vec![])),
            // Huge limits: no overflow (Redis's compiled arithmetic clamps).
            (
                &["SORT", "l", "LIMIT", "2", "9223372036854775807"],
                bulks(&["3", "10"]),
            ),
            (
                &[
                    "SORT",
                    "l",
                    "BY",
                    "nosort",
                    "LIMIT",
                    "2",
                    "9223372036854775807",
                    "DESC",
                ],
                bulks(&["1", "3"]),
            ),
            (
                &[
                    "SORT",
                    "l",
                    "LIMIT",
                    "9223372036854775807",
                    "9223372036854775807",
                ],
                arr(vec![]),
            ),
            // Patterns naming nothing: no star, `->` with no field, a key of another type.
            (
                &["SORT", "l", "BY", "nosort", "GET", "nokey"],
                opt(&[None, None, None, None]),
            ),
            (
                &["SORT", "l", "GET", "w_*->"],
                opt(&[None, None, None, None]),
            ),
            (
                &["SORT", "l", "GET", "w_*->f"],
                opt(&[None, None, None, None]),
            ),
            (&["SORT", "l", "GET", "h_*"], opt(&[None, None, None, None])),
            (&["SORT", "missing"], arr(vec![])),
            (
                &["SORT_RO", "l", "BY", "w_*", "GET", "#"],
                bulks(&["10", "1", "2", "3"]),
            ),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_in_redis_order() {
    let s = start().await;
    let mut c = s.raw().await;
    setup_weights(&mut c).await;
    check(
        &mut c,
        &[
            (&["SORT", "l", "LIMIT", "x", "1"], err(NOT_INT)),
            (&["SORT", "l", "LIMIT", "1", "x"], err(NOT_INT)),
            (&["SORT", "l", "LIMIT", "1"], err(SYNTAX)),
            (&["SORT", "l", "STORE"], err(SYNTAX)),
            (&["SORT", "l", "BY"], err(SYNTAX)),
            (&["SORT", "l", "GET"], err(SYNTAX)),
            (&["SORT", "l", "foo"], err(SYNTAX)),
            (&["SORT_RO", "l", "STORE", "dst"], err(SYNTAX)),
            // Options are checked before the key's type.
            (&["SORT", "s", "foo"], err(SYNTAX)),
            (&["SORT", "s"], err(WRONGTYPE)),
            (&["SORT", "hh"], err(WRONGTYPE)),
            (&["SORT_RO", "s"], err(WRONGTYPE)),
            (&["SORT", "s", "STORE", "dst"], err(WRONGTYPE)),
            (
                &["SORT"],
                err("ERR wrong number of arguments for 'sort' command"),
            ),
            (
                &["SORT_RO"],
                err("ERR wrong number of arguments for 'sort_ro' command"),
            ),
            (&["EXISTS", "dst"], int(0)),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn numbers_read_like_strtod() {
    let s = start().await;
    let mut c = s.raw().await;
    c.cmd_bytes(&[
        b"RPUSH",
        b"a",
        b"",
        b" 5",
        b"0x10",
        b"1e3",
        b"-inf",
        b"+inf",
        b"infinity",
        b"3\0zz",
        b".5",
        b"5.",
    ])
    .await;
    // The empty string is 0, a NUL ends the number, equal scores go by bytes.
    let want = Frame::Array(
        [
            &b"-inf"[..],
            b"",
            b".5",
            b"3\0zz",
            b" 5",
            b"5.",
            b"0x10",
            b"1e3",
            b"+inf",
            b"infinity",
        ]
        .iter()
        .map(|b| bin(b))
        .collect(),
    );
    assert_eq!(c.cmd(&["SORT", "a"]).await, want);
    for (i, bad) in ["1e400", "1e-310", "nan", "   ", "1 ", "0x", "abc"]
        .into_iter()
        .enumerate()
    {
        let key = format!("bad{i}");
        c.cmd(&["RPUSH", &key, "1", bad]).await;
        assert_eq!(c.cmd(&["SORT", &key]).await, err(NOT_DOUBLE), "{bad:?}");
        assert_eq!(
            c.cmd(&["SORT", &key, "ALPHA"]).await,
            if bad < "1" {
                bulks(&[bad, "1"])
            } else {
                bulks(&["1", bad])
            },
            "{bad:?} sorts with ALPHA"
        );
    }
    // A BY value that is not a number fails the sort too; STORE then stores nothing.
    c.cmd(&["RPUSH", "nums", "1", "2"]).await;
    c.cmd(&["SET", "w_1", "x"]).await;
    c.cmd(&["RPUSH", "dst", "kept"]).await;
    check(
        &mut c,
        &[
            (
                &["SORT", "nums", "BY", "w_*", "STORE", "dst"],
                err(NOT_DOUBLE),
            ),
            (&["LRANGE", "dst", "0", "-1"], bulks(&["kept"])),
            (
                &["SORT", "nums", "BY", "w_*", "ALPHA", "STORE", "dst"],
                int(2),
            ),
            (&["LRANGE", "dst", "0", "-1"], bulks(&["2", "1"])),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alpha_compares_like_strcoll_and_store_like_memcmp() {
    let s = start().await;
    let mut c = s.raw().await;
    c.cmd_bytes(&[
        b"RPUSH",
        b"g",
        b"b",
        b"a",
        b"B",
        b"A",
        b"a\0c",
        b"a\0b",
        b"\xc3\xa9",
        b"f",
        b"_",
        b"a",
    ])
    .await;
    let list = |items: &[&[u8]]| Frame::Array(items.iter().map(|b| bin(b)).collect());
    // strcoll in the C locale stops at a NUL: "a", "a\0c", "a\0b" tie and keep list order.
    assert_eq!(
        c.cmd(&["SORT", "g", "ALPHA"]).await,
        list(&[
            b"A",
            b"B",
            b"_",
            b"a",
            b"a\0c",
            b"a\0b",
            b"a",
            b"b",
            b"f",
            b"\xc3\xa9"
        ])
    );
    assert_eq!(
        c.cmd(&["SORT", "g", "ALPHA", "DESC"]).await,
        list(&[
            b"\xc3\xa9",
            b"f",
            b"b",
            b"a",
            b"a\0c",
            b"a\0b",
            b"a",
            b"_",
            b"B",
            b"A"
        ])
    );
    // With STORE the comparison is binary.
    assert_eq!(c.cmd(&["SORT", "g", "ALPHA", "STORE", "gs"]).await, int(10));
    assert_eq!(
        c.cmd(&["LRANGE", "gs", "0", "-1"]).await,
        list(&[
            b"A",
            b"B",
            b"_",
            b"a",
            b"a",
            b"a\0b",
            b"a\0c",
            b"b",
            b"f",
            b"\xc3\xa9"
        ])
    );
    // BY ... ALPHA: missing values first, ties keep their order.
    c.cmd(&["RPUSH", "h", "2", "1", "3"]).await;
    c.cmd_bytes(&[b"SET", b"k_1", b"b\0z"]).await;
    c.cmd_bytes(&[b"SET", b"k_2", b"b\0a"]).await;
    c.cmd(&["SET", "k_3", "a"]).await;
    check(
        &mut c,
        &[
            (
                &["SORT", "h", "BY", "k_*", "ALPHA"],
                bulks(&["3", "2", "1"]),
            ),
            (
                &["SORT", "h", "BY", "k_*", "ALPHA", "DESC"],
                bulks(&["2", "1", "3"]),
            ),
            (&["SORT", "h", "BY", "k_*"], err(NOT_DOUBLE)),
            (&["SORT", "h", "BY", "nokey_*"], bulks(&["1", "2", "3"])),
            (
                &["SORT", "h", "BY", "nokey_*", "DESC"],
                bulks(&["3", "2", "1"]),
            ),
            (
                &["SORT", "h", "BY", "nokey_*", "ALPHA"],
                bulks(&["2", "1", "3"]),
            ),
            (
                &["SORT", "h", "BY", "nokey_*", "ALPHA", "DESC"],
                bulks(&["2", "1", "3"]),
            ),
        ],
    )
    .await;
    // Redis's partial quicksort (BY with a partial LIMIT) is not stable: ties come out in
    // its order, not the list's.
    let elems: Vec<String> = (0..50).map(|i| format!("e{i}")).collect();
    let mut cmd = vec!["RPUSH", "big"];
    cmd.extend(elems.iter().map(String::as_str));
    c.cmd(&cmd).await;
    for (i, e) in elems.iter().enumerate() {
        c.cmd(&["SET", &format!("w_{e}"), ["x", "y"][i % 2]]).await;
    }
    assert_eq!(
        c.cmd(&["SORT", "big", "BY", "w_*", "ALPHA", "LIMIT", "20", "5"])
            .await,
        bulks(&["e12", "e46", "e24", "e48", "e4"])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sets_and_sorted_sets() {
    let s = start().await;
    let mut c = s.raw().await;
    c.cmd(&["SADD", "s", "5", "3", "9", "1"]).await;
    c.cmd(&["SADD", "s2", "b", "a", "c"]).await;
    c.cmd(&["ZADD", "z", "3", "a", "1", "b", "2", "c", "0", "d"])
        .await;
    check(
        &mut c,
        &[
            (&["SORT", "s"], bulks(&["1", "3", "5", "9"])),
            (
                &["SORT", "s", "DESC", "LIMIT", "1", "2"],
                bulks(&["5", "3"]),
            ),
            // BY nosort on a set: its own order, DESC ignored; with STORE it is sorted anyway.
            (&["SORT", "s", "BY", "nosort"], bulks(&["1", "3", "5", "9"])),
            (
                &["SORT", "s", "BY", "nosort", "DESC"],
                bulks(&["1", "3", "5", "9"]),
            ),
            (
                &["SORT", "s", "BY", "nosort", "LIMIT", "1", "2"],
                bulks(&["3", "5"]),
            ),
            (
                &["SORT", "s2", "BY", "nosort", "DESC", "STORE", "ss"],
                int(3),
            ),
            (&["LRANGE", "ss", "0", "-1"], bulks(&["c", "b", "a"])),
            (&["SORT", "s2"], err(NOT_DOUBLE)),
            (&["SORT", "s2", "ALPHA", "DESC"], bulks(&["c", "b", "a"])),
            (&["SORT", "z"], err(NOT_DOUBLE)),
            (&["SORT", "z", "ALPHA"], bulks(&["a", "b", "c", "d"])),
            // BY nosort on a sorted set: score order, DESC and LIMIT as ranks.
            (&["SORT", "z", "BY", "nosort"], bulks(&["d", "b", "c", "a"])),
            (
                &["SORT", "z", "BY", "nosort", "DESC"],
                bulks(&["a", "c", "b", "d"]),
            ),
            (
                &["SORT", "z", "BY", "nosort", "LIMIT", "1", "2"],
                bulks(&["b", "c"]),
            ),
            (
                &["SORT", "z", "BY", "nosort", "LIMIT", "1", "2", "DESC"],
                bulks(&["c", "b"]),
            ),
            (
                &["SORT", "z", "BY", "nosort", "LIMIT", "5", "2"],
                arr(vec![]),
            ),
            (
                &["SORT", "z", "ALPHA", "DESC", "LIMIT", "1", "2"],
                bulks(&["c", "b"]),
            ),
            (&["SORT", "z", "BY", "nosort", "STORE", "zs"], int(4)),
            (&["LRANGE", "zs", "0", "-1"], bulks(&["d", "b", "c", "a"])),
            (
                &["SORT_RO", "z", "BY", "nosort", "GET", "#"],
                bulks(&["d", "b", "c", "a"]),
            ),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_replaces_the_destination() {
    let s = start().await;
    let mut c = s.raw().await;
    setup_weights(&mut c).await;
    check(
        &mut c,
        &[
            // Over a string with a TTL: a plain list now.
            (&["SET", "dst", "v", "EX", "100"], ok()),
            (&["SORT", "l", "STORE", "dst"], int(4)),
            (&["TYPE", "dst"], simple("list")),
            (&["TTL", "dst"], int(-1)),
            (&["LRANGE", "dst", "0", "-1"], bulks(&["1", "2", "3", "10"])),
            (&["OBJECT", "ENCODING", "dst"], bulk("quicklist")),
            // The last STORE wins; a GET naming nothing stores an empty string.
            (
                &[
                    "SORT", "l", "STORE", "x", "BY", "w_*", "GET", "w_*", "STORE", "dst",
                ],
                int(4),
            ),
            (&["EXISTS", "x"], int(0)),
            (
                &["LRANGE", "dst", "0", "-1"],
                bulks(&["", "10", "20", "30"]),
            ),
            (&["SORT", "l", "LIMIT", "0", "1", "STORE", "hh"], int(1)),
            (&["TYPE", "hh"], simple("list")),
            // An empty result deletes the destination.
            (&["SORT", "l", "LIMIT", "0", "0", "STORE", "dst"], int(0)),
            (&["EXISTS", "dst"], int(0)),
            (&["SORT", "missing", "STORE", "hh"], int(0)),
            (&["EXISTS", "hh"], int(0)),
            // The source may be the destination.
            (&["SORT", "l", "DESC", "STORE", "l"], int(4)),
            (&["LRANGE", "l", "0", "-1"], bulks(&["10", "3", "2", "1"])),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resp3_shapes() {
    let s = start().await;
    let mut c = s.raw().await;
    setup_weights(&mut c).await;
    assert!(matches!(c.cmd(&["HELLO", "3"]).await, Frame::Map(_)));
    assert_eq!(
        c.cmd(&["SORT", "l", "GET", "w_*"]).await,
        opt(&[Some("10"), Some("20"), Some("30"), None])
    );
    c.send(&encode_command(&[
        b"SORT", b"l", b"GET", b"w_*", b"LIMIT", b"3", b"1",
    ]))
    .await;
    c.expect_bytes(b"*1\r\n_\r\n").await;
    c.send(&encode_command(&[b"SORT", b"l", b"STORE", b"d"]))
        .await;
    c.expect_bytes(b":4\r\n").await;
    c.send(&encode_command(&[b"HELLO", b"2"])).await;
    c.read().await;
    c.send(&encode_command(&[
        b"SORT", b"l", b"GET", b"w_*", b"LIMIT", b"3", b"1",
    ]))
    .await;
    c.expect_bytes(b"*1\r\n$-1\r\n").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyspace_hits_and_misses_count_every_lookup() {
    let s = start().await;
    let mut c = s.raw().await;
    for cmd in [
        &["RPUSH", "l", "3", "1", "2"][..],
        &["SET", "w_1", "1"],
        &["HSET", "h_2", "f", "1"],
        &["SET", "w_3", "x"],
    ] {
        c.cmd(cmd).await;
    }
    // (hits, misses) as redis-server 7.0.15 counts them.
    for (cmd, want) in [
        (&["SORT", "l"][..], (1, 0)),
        (&["SORT", "missing"], (0, 1)),
        (&["SORT", "l", "BY", "w_*"], (3, 1)),
        (&["SORT", "l", "BY", "nosort", "GET", "w_*"], (3, 1)),
        (
            &["SORT", "l", "BY", "w_*", "GET", "#", "GET", "h_*->f"],
            (3, 1),
        ),
        (&["SORT", "l", "BY", "w_*", "ALPHA", "STORE", "dst"], (3, 1)),
        (
            &["SORT", "l", "BY", "h_*->f", "GET", "w_*", "STORE", "dst"],
            (4, 3),
        ),
        (&["SORT", "w_1"], (1, 0)),
        (
            &["SORT", "l", "BY", "w_*", "GET", "w_*", "LIMIT", "0", "1"],
            (3, 1),
        ),
    ] {
        let before = keyspace_stats(&mut c).await;
        c.cmd(cmd).await;
        let after = keyspace_stats(&mut c).await;
        assert_eq!((after.0 - before.0, after.1 - before.1), want, "{cmd:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_serves_blocked_clients_and_aborts_watch() {
    let s = start().await;
    let mut c = s.raw().await;
    let mut blocked = s.raw().await;
    c.cmd(&["RPUSH", "src", "2", "1", "3"]).await;
    blocked
        .send(&encode_command(&[b"BLPOP", b"dst", b"0"]))
        .await;
    // Wait until it is blocked.
    for _ in 0..500 {
        let Frame::Bulk(info) = c.cmd(&["INFO", "clients"]).await else {
            panic!("INFO");
        };
        if String::from_utf8_lossy(&info).contains("blocked_clients:1") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(c.cmd(&["SORT", "src", "STORE", "dst"]).await, int(3));
    assert_eq!(blocked.read().await, Some(bulks(&["dst", "1"])));
    assert_eq!(
        c.cmd(&["LRANGE", "dst", "0", "-1"]).await,
        bulks(&["2", "3"])
    );

    // Inside MULTI too.
    blocked
        .send(&encode_command(&[b"BLPOP", b"dst2", b"0"]))
        .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    check(
        &mut c,
        &[
            (&["MULTI"], ok()),
            (&["SORT", "src", "DESC", "STORE", "dst2"], simple("QUEUED")),
            (&["SORT_RO", "src"], simple("QUEUED")),
            (&["EXEC"], arr(vec![int(3), bulks(&["1", "2", "3"])])),
        ],
    )
    .await;
    assert_eq!(blocked.read().await, Some(bulks(&["dst2", "3"])));

    // A STORE changes a watched destination; a SORT without STORE changes nothing.
    let mut other = s.raw().await;
    check(
        &mut c,
        &[
            (&["WATCH", "dst", "src"], ok()),
            (&["MULTI"], ok()),
            (&["PING"], simple("QUEUED")),
        ],
    )
    .await;
    assert_eq!(
        other.cmd(&["SORT", "src", "LIMIT", "0", "1"]).await,
        bulks(&["1"])
    );
    assert_eq!(c.cmd(&["EXEC"]).await, arr(vec![simple("PONG")]));
    check(
        &mut c,
        &[
            (&["WATCH", "dst"], ok()),
            (&["MULTI"], ok()),
            (&["PING"], simple("QUEUED")),
        ],
    )
    .await;
    assert_eq!(other.cmd(&["SORT", "src", "STORE", "dst"]).await, int(3));
    assert_eq!(c.cmd(&["EXEC"]).await, Frame::NullArray);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_getkeys_and_info() {
    let s = start().await;
    let mut c = s.raw().await;
    check(
        &mut c,
        &[
            (
                &["COMMAND", "GETKEYS", "SORT", "k", "STORE", "d"],
                bulks(&["k", "d"]),
            ),
            (
                &[
                    "COMMAND", "GETKEYS", "SORT", "k", "STORE", "d", "BY", "x", "GET", "y",
                ],
                bulks(&["k", "d"]),
            ),
            (
                &[
                    "COMMAND", "GETKEYS", "SORT", "k", "GET", "store", "LIMIT", "store", "x",
                ],
                bulks(&["k"]),
            ),
            (
                &["COMMAND", "GETKEYS", "SORT_RO", "k", "STORE", "d"],
                bulks(&["k"]),
            ),
        ],
    )
    .await;
    let Frame::Array(info) = c.cmd(&["COMMAND", "INFO", "sort", "sort_ro"]).await else {
        panic!("COMMAND INFO");
    };
    let head = |f: &Frame| match f {
        Frame::Array(v) => v[..6].to_vec(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        head(&info[0]),
        vec![
            bulk("sort"),
            int(-2),
            arr(vec![
                simple("write"),
                simple("denyoom"),
                simple("movablekeys")
            ]),
            int(1),
            int(1),
            int(1)
        ]
    );
    assert_eq!(
        head(&info[1]),
        vec![
            bulk("sort_ro"),
            int(-2),
            arr(vec![simple("readonly"), simple("movablekeys")]),
            int(1),
            int(1),
            int(1)
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_crate_view() {
    let s = start().await;
    let mut con = s.client().await;
    let _: i64 = redis::cmd("RPUSH")
        .arg("jobs")
        .arg(&["3", "1", "2"])
        .query_async(&mut con)
        .await
        .unwrap();
    let _: () = redis::cmd("MSET")
        .arg(&["pri_1", "9", "pri_2", "5", "pri_3", "7", "name_1", "one"])
        .query_async(&mut con)
        .await
        .unwrap();
    let got: Vec<Option<String>> = redis::cmd("SORT")
        .arg("jobs")
        .arg("BY")
        .arg("pri_*")
        .arg("DESC")
        .arg("GET")
        .arg("name_*")
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(got, vec![Some("one".to_string()), None, None]);
    let n: i64 = redis::cmd("SORT")
        .arg("jobs")
        .arg("STORE")
        .arg("sorted")
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(n, 3);
    let sorted: Vec<String> = redis::cmd("LRANGE")
        .arg("sorted")
        .arg(0)
        .arg(-1)
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(sorted, ["1", "2", "3"]);
}

/// SORT's BY and GET patterns name keys the command line does not: without read access to every
/// key they are refused, as redis-server 7.0.15 refuses them (`sortCommandGeneric`), in the order
/// the options come (a syntax error before the pattern wins; one after it does not). BY without
/// a star reads no other key and is allowed; so is a user with `%R~*`.
#[tokio::test]
async fn by_and_get_patterns_need_read_access_to_every_key() {
    const GET_DENIED: &str = "ERR GET option of SORT denied due to insufficient ACL permissions.";
    const BY_DENIED: &str = "ERR BY option of SORT denied due to insufficient ACL permissions.";
    let s = start().await;
    let mut admin = s.raw().await;
    for args in [
        &["RPUSH", "app:l", "1", "2"][..],
        &["SET", "secret", "hunter2"],
        &["HSET", "user:1", "password", "pw1"],
        &["ACL", "SETUSER", "app", "on", ">pw", "~app:*", "+@all"],
        &[
            "ACL", "SETUSER", "ro", "on", ">pw", "%R~*", "~app:*", "+@all",
        ],
        &[
            "ACL", "SETUSER", "wo", "on", ">pw", "%W~*", "~app:*", "+@all",
        ],
    ] {
        assert!(
            !matches!(admin.cmd(args).await, Frame::Error(_)),
            "{args:?}"
        );
    }
    let mut app = s.raw().await;
    assert_eq!(app.cmd(&["AUTH", "app", "pw"]).await, ok());
    check(
        &mut app,
        &[
            (
                &["SORT", "app:l", "BY", "nosort", "GET", "se*"],
                err(GET_DENIED),
            ),
            (
                &["SORT", "app:l", "GET", "user:*->password"],
                err(GET_DENIED),
            ),
            (&["SORT", "app:l", "GET", "#"], err(GET_DENIED)),
            (&["SORT", "app:l", "BY", "app:w_*"], err(BY_DENIED)),
            (&["SORT", "app:l", "BY", "w_*", "GET", "#"], err(BY_DENIED)),
            (&["SORT", "app:l", "GET", "#", "BY", "w_*"], err(GET_DENIED)),
            (
                &[
                    "SORT", "app:l", "BY", "nosort", "GET", "se*", "STORE", "app:out",
                ],
                err(GET_DENIED),
            ),
            (&["SORT_RO", "app:l", "GET", "#"], err(GET_DENIED)),
            (&["SORT_RO", "app:l", "BY", "w_*"], err(BY_DENIED)),
            (&["SORT", "app:l", "GET", "#", "foo"], err(GET_DENIED)),
            (&["SORT", "app:l", "foo", "GET", "#"], err(SYNTAX)),
            (
                &["SORT", "app:l", "LIMIT", "x", "1", "GET", "#"],
                err(NOT_INT),
            ),
            (&["SORT", "app:l", "BY", "nosort"], bulks(&["1", "2"])),
            (&["SORT", "app:l", "BY", "app:w"], bulks(&["1", "2"])),
            (&["SORT", "app:l", "DESC", "LIMIT", "0", "1"], bulks(&["2"])),
        ],
    )
    .await;
    // Nothing was stored where the refused SORT ... STORE pointed.
    assert_eq!(admin.cmd(&["EXISTS", "app:out"]).await, int(0));
    // The same from a script, which runs as its caller.
    assert_eq!(
        app.cmd(&[
            "EVAL",
            "return redis.pcall('sort', KEYS[1], 'get', 'se*')",
            "1",
            "app:l"
        ])
        .await,
        err(GET_DENIED)
    );
    let mut ro = s.raw().await;
    assert_eq!(ro.cmd(&["AUTH", "ro", "pw"]).await, ok());
    assert_eq!(
        ro.cmd(&["SORT", "app:l", "BY", "nosort", "GET", "user:*->password"])
            .await,
        opt(&[Some("pw1"), None])
    );
    let mut wo = s.raw().await;
    assert_eq!(wo.cmd(&["AUTH", "wo", "pw"]).await, ok());
    assert_eq!(
        wo.cmd(&["SORT", "app:l", "GET", "#"]).await,
        err(GET_DENIED)
    );
}
