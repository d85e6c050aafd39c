//! Bitmaps and large strings over TCP: the bitmap commands' keyspace events (as redis-server
//! 7.0.15 emits them), their ACL category, RESP3 nils from BITFIELD, chunked strings across a
//! restart, and a one-byte SETRANGE on a large value costing next to nothing. Replies and error
//! texts are pinned against redis-server in `differential.rs` (scripts `bitmap`, `bitfield`).

mod common;
use common::*;
use resp::Frame;
use std::time::Instant;

/// The `__keyevent@0__` events the command `line` publishes, as `event:key`.
async fn events(sub: &mut Raw, cmd: &mut Raw, line: &[&str]) -> Vec<String> {
    cmd.cmd(line).await;
    cmd.cmd(&["PUBLISH", "sync", "x"]).await;
    let mut out = Vec::new();
    loop {
        let Some(Frame::Array(v)) = sub.read().await else {
            panic!("subscriber closed");
        };
        let text = |f: &Frame| match f {
            Frame::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
            other => panic!("{other:?}"),
        };
        if text(&v[0]) == "message" {
            return out;
        }
        let event = text(&v[2]).replace("__keyevent@0__:", "");
        out.push(format!("{event}:{}", text(&v[3])));
    }
}

/// Recorded from redis-server 7.0.15: SETBIT signals only a change (or a new or grown string),
/// BITFIELD likewise (a refused OVERFLOW FAIL write is no change, even on the key it created),
/// BITOP stores with `set` and deletes an empty result's destination with `del`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bitmap_commands_signal_as_redis() {
    let s = start().await;
    let mut cmd = s.raw().await;
    cmd.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEA"])
        .await;
    let mut sub = s.raw().await;
    sub.cmd(&["PSUBSCRIBE", "__keyevent@0__:*"]).await;
    sub.cmd(&["SUBSCRIBE", "sync"]).await;
    let cases: &[(&[&str], &[&str])] = &[
        (&["SETBIT", "a", "0", "1"], &["setbit:a"]),
        (&["SETBIT", "a", "0", "1"], &[]),
        (&["SETBIT", "a", "0", "0"], &["setbit:a"]),
        (&["SETBIT", "n3", "0", "0"], &["setbit:n3"]),
        (&["SETBIT", "a", "100", "0"], &["setbit:a"]),
        (&["BITFIELD", "a", "SET", "u8", "0", "0"], &[]),
        (&["BITFIELD", "a", "SET", "u8", "0", "7"], &["setbit:a"]),
        (&["BITFIELD", "a", "GET", "u8", "0"], &[]),
        (
            &[
                "BITFIELD", "n1", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "100",
            ],
            &[],
        ),
        (
            &["BITFIELD", "n4", "INCRBY", "u8", "0", "0"],
            &["setbit:n4"],
        ),
        (&["BITOP", "AND", "d", "a"], &["set:d"]),
        (&["BITOP", "AND", "d", "missing"], &["del:d"]),
        (&["BITOP", "AND", "d", "missing"], &[]),
        (&["SETRANGE", "a", "0", ""], &[]),
    ];
    for (line, want) in cases {
        assert_eq!(events(&mut sub, &mut cmd, line).await, *want, "{line:?}");
    }
    assert_eq!(cmd.cmd(&["EXISTS", "n1"]).await, int(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acl_category_and_resp3_nil() {
    let s = start().await;
    let mut c = s.raw().await;
    let Frame::Array(names) = c.cmd(&["ACL", "CAT", "bitmap"]).await else {
        panic!("not a list")
    };
    let mut names: Vec<String> = names
        .iter()
        .map(|f| match f {
            Frame::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
            other => panic!("{other:?}"),
        })
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "bitcount",
            "bitfield",
            "bitfield_ro",
            "bitop",
            "bitpos",
            "getbit",
            "setbit"
        ]
    );
    c.send(&encode_command(&[
        b"BITFIELD",
        b"k",
        b"OVERFLOW",
        b"FAIL",
        b"INCRBY",
        b"u2",
        b"0",
        b"9",
    ]))
    .await;
    c.expect_bytes(b"*1\r\n$-1\r\n").await;
    c.cmd(&["HELLO", "3"]).await;
    c.send(&encode_command(&[
        b"BITFIELD",
        b"k",
        b"OVERFLOW",
        b"FAIL",
        b"INCRBY",
        b"u2",
        b"0",
        b"9",
    ]))
    .await;
    c.expect_bytes(b"*1\r\n_\r\n").await;
}

/// A chunked string (past 32 KiB) written by SETBIT, SETRANGE, APPEND and BITFIELD reads the
/// same after a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunked_strings_survive_a_restart() {
    let mut s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["SETBIT", "b", "8000007", "1"]).await, int(0));
    assert_eq!(
        c.cmd(&["SETRANGE", "b", "40000", "hello"]).await,
        int(1_000_001)
    );
    assert_eq!(c.cmd(&["APPEND", "b", "tail"]).await, int(1_000_005));
    c.cmd(&["BITFIELD", "b", "SET", "u16", "#300000", "65535"])
        .await;
    let before = c.cmd(&["GET", "b"]).await;
    let Frame::Bulk(v) = &before else {
        panic!("{before:?}")
    };
    assert_eq!(v.len(), 1_000_005);
    assert_eq!(&v[40000..40005], b"hello");
    assert_eq!(&v[600_000..600_002], b"\xff\xff");
    assert_eq!(v[1_000_000], 1);
    drop(c);
    s.stop().await;
    let path = s.dir.path().to_path_buf();
    let s2 = start_with(|cfg| cfg.dir = path).await;
    let mut c = s2.raw().await;
    assert_eq!(c.cmd(&["GET", "b"]).await, before);
    assert_eq!(c.cmd(&["GETRANGE", "b", "-4", "-1"]).await, bulk("tail"));
    assert_eq!(c.cmd(&["GETBIT", "b", "8000007"]).await, int(1));
    assert_eq!(c.cmd(&["BITCOUNT", "b"]).await, int(1 + 16 + 21 + 15));
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "b"]).await, bulk("raw"));
}

/// `SETRANGE big 0 x` on a 64 MB value rewrites one chunk, not the value: it takes a small
/// fraction of the time the value took to write (before chunks, it rewrote all 64 MB).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_byte_setrange_on_a_large_value_is_cheap() {
    // Without fsyncs, so that the test measures the writes rather than the disk's flushes.
    let s = start_with(|c| c.durability = relis::Durability::Off).await;
    let mut c = s.raw().await;
    let big: Vec<u8> = (0..64u32 << 20).map(|i| (i % 251) as u8).collect();
    let t = Instant::now();
    assert_eq!(c.cmd_bytes(&[b"SET", b"big", &big]).await, ok());
    let set = t.elapsed();
    // The first write after the SET may wait for the checkpoint of its 64 MB of WAL.
    c.cmd(&["SETRANGE", "big", "1", "y"]).await;
    let t = Instant::now();
    for i in 0..10 {
        let off = (i * 7_000_000).to_string();
        assert_eq!(c.cmd(&["SETRANGE", "big", &off, "x"]).await, int(64 << 20));
    }
    let ten = t.elapsed();
    assert!(ten * 10 < set, "10 SETRANGEs took {ten:?}, the SET {set:?}");
    let t = Instant::now();
    assert_eq!(
        c.cmd(&["GETRANGE", "big", "7000000", "7000001"]).await,
        Frame::Bulk(vec![b'x', big[7_000_001]].into())
    );
    assert!(t.elapsed() * 10 < set, "GETRANGE took {:?}", t.elapsed());
    assert_eq!(c.cmd(&["STRLEN", "big"]).await, int(64 << 20));
}
