//! HyperLogLog over TCP: PFADD, PFCOUNT, PFMERGE, PFDEBUG and PFSELFTEST, under RESP2 and
//! RESP3, and against redis-server 7.0.15 (the reference the differential tests start): the
//! same replies byte for byte, the same value bytes (GET) after the same commands, sparse and
//! dense and around the promotion, values copied from one server working in the other, and the
//! same errors for corrupted values.

mod common;
use common::*;
use resp::Frame;

/// Both servers and a raw connection to each (Relis first), both under `proto`.
async fn both(proto: u8) -> (TestServer, Child, Raw, Raw) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let redis = spawn_redis(tmp.path()).expect("redis-server");
    std::mem::forget(tmp);
    let relis = start().await;
    let mut a = relis.raw().await;
    let mut b = Raw::connect(redis.addr()).await;
    if proto == 3 {
        for c in [&mut a, &mut b] {
            let _ = c.cmd(&["HELLO", "3"]).await;
        }
    }
    (relis, redis, a, b)
}

/// Sends `args` to both and asserts the same reply bytes; returns them.
async fn same(relis: &mut Raw, redis: &mut Raw, args: &[&[u8]]) -> Vec<u8> {
    let line = encode_command(args);
    relis.send(&line).await;
    redis.send(&line).await;
    let got = relis.read_raw().await.expect("relis replies");
    let want = redis.read_raw().await.expect("redis replies");
    assert_eq!(
        show(&got),
        show(&want),
        "{:?}",
        args.iter()
            .map(|a| String::from_utf8_lossy(&a[..a.len().min(40)]).into_owned())
            .collect::<Vec<_>>()
    );
    got
}

/// Sends a text command line (split at spaces) to both, comparing replies.
async fn same_line(relis: &mut Raw, redis: &mut Raw, line: &str) -> Vec<u8> {
    let args: Vec<&[u8]> = line.split(' ').map(str::as_bytes).collect();
    same(relis, redis, &args).await
}

/// The elements `from..to` as decimal strings.
fn numbers(from: u64, to: u64) -> Vec<Vec<u8>> {
    (from..to).map(|i| i.to_string().into_bytes()).collect()
}

/// PFADD `key` with `elements` on both, comparing replies.
async fn pfadd_both(relis: &mut Raw, redis: &mut Raw, key: &str, elements: &[Vec<u8>]) {
    let mut args: Vec<&[u8]> = vec![b"PFADD", key.as_bytes()];
    args.extend(elements.iter().map(Vec::as_slice));
    same(relis, redis, &args).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pfadd_pfcount_pfmerge_basics() {
    let s = start().await;
    for proto in ["2", "3"] {
        let mut c = s.raw().await;
        let _ = c.cmd(&["HELLO", proto]).await;
        let _ = c.cmd(&["FLUSHALL"]).await;
        assert_eq!(c.cmd(&["PFADD", "h"]).await, int(1), "creates the key");
        assert_eq!(c.cmd(&["PFADD", "h"]).await, int(0));
        assert_eq!(c.cmd(&["PFADD", "h", "a", "b", "c"]).await, int(1));
        assert_eq!(c.cmd(&["PFADD", "h", "a", "b"]).await, int(0));
        assert_eq!(c.cmd(&["PFCOUNT", "h"]).await, int(3));
        assert_eq!(c.cmd(&["PFCOUNT", "nokey"]).await, int(0));
        assert_eq!(c.cmd(&["TYPE", "h"]).await, simple("string"));
        assert_eq!(c.cmd(&["PFADD", "g", "c", "d"]).await, int(1));
        assert_eq!(c.cmd(&["PFCOUNT", "h", "g", "nokey"]).await, int(4));
        assert_eq!(c.cmd(&["PFMERGE", "m", "h", "g"]).await, ok());
        assert_eq!(c.cmd(&["PFCOUNT", "m"]).await, int(4));
        assert_eq!(c.cmd(&["PFMERGE", "empty"]).await, ok());
        assert_eq!(c.cmd(&["PFCOUNT", "empty"]).await, int(0));
        assert_eq!(c.cmd(&["PFDEBUG", "ENCODING", "m"]).await, simple("sparse"));
        assert_eq!(c.cmd(&["PFDEBUG", "TODENSE", "m"]).await, int(1));
        assert_eq!(c.cmd(&["PFDEBUG", "TODENSE", "m"]).await, int(0));
        assert_eq!(c.cmd(&["PFDEBUG", "ENCODING", "m"]).await, simple("dense"));
        assert_eq!(c.cmd(&["STRLEN", "m"]).await, int(12304));
        assert_eq!(c.cmd(&["PFCOUNT", "m"]).await, int(4));
        let Frame::Array(regs) = c.cmd(&["PFDEBUG", "GETREG", "h"]).await else {
            panic!("GETREG replies an array")
        };
        assert_eq!(regs.len(), 16384);
        assert_eq!(regs.iter().filter(|r| **r != int(0)).count(), 3);
        let _ = c.cmd(&["SET", "s", "x"]).await;
        let not_hll = err("WRONGTYPE Key is not a valid HyperLogLog string value.");
        assert_eq!(c.cmd(&["PFADD", "s", "a"]).await, not_hll);
        assert_eq!(c.cmd(&["PFCOUNT", "s"]).await, not_hll);
        assert_eq!(c.cmd(&["PFCOUNT", "h", "s"]).await, not_hll);
        assert_eq!(c.cmd(&["PFMERGE", "h", "s"]).await, not_hll);
        let _ = c.cmd(&["RPUSH", "l", "x"]).await;
        let wrongtype = err("WRONGTYPE Operation against a key holding the wrong kind of value");
        assert_eq!(c.cmd(&["PFADD", "l", "a"]).await, wrongtype);
        assert_eq!(c.cmd(&["PFCOUNT", "l"]).await, wrongtype);
        assert_eq!(
            c.cmd(&["PFDEBUG", "GETREG", "nokey"]).await,
            err("ERR The specified key does not exist")
        );
        assert_eq!(
            c.cmd(&["PFDEBUG", "nope", "h"]).await,
            err("ERR Unknown PFDEBUG subcommand 'nope'")
        );
        assert_eq!(
            c.cmd(&["PFADD"]).await,
            err("ERR wrong number of arguments for 'pfadd' command")
        );
    }
}

/// PFCOUNT of one key caches the estimate in the value: that changes the key (a WATCH on it
/// fails) and publishes no keyspace event; a valid cache is only read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pfcount_caches_as_a_change_of_the_key() {
    let s = start().await;
    let mut c = s.raw().await;
    let mut other = s.raw().await;
    let _ = c.cmd(&["PFADD", "h", "a", "b"]).await;
    let Frame::Bulk(before) = c.cmd(&["GET", "h"]).await else {
        panic!()
    };
    assert_eq!(before[15] & 0x80, 0x80, "PFADD marks the cache stale");
    assert_eq!(c.cmd(&["WATCH", "h"]).await, ok());
    assert_eq!(other.cmd(&["PFCOUNT", "h"]).await, int(2));
    let _ = c.cmd(&["MULTI"]).await;
    let _ = c.cmd(&["PING"]).await;
    assert_eq!(
        c.cmd(&["EXEC"]).await,
        Frame::NullArray,
        "the cache write touched the key"
    );
    let Frame::Bulk(after) = c.cmd(&["GET", "h"]).await else {
        panic!()
    };
    assert_eq!(&after[8..16], &[2, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(&after[16..], &before[16..]);
    // A valid cache: nothing is written.
    assert_eq!(c.cmd(&["WATCH", "h"]).await, ok());
    assert_eq!(other.cmd(&["PFCOUNT", "h"]).await, int(2));
    let _ = c.cmd(&["MULTI"]).await;
    let _ = c.cmd(&["PING"]).await;
    assert_eq!(c.cmd(&["EXEC"]).await, arr(vec![simple("PONG")]));
    // Keyspace events: `pfadd` for PFADD and PFMERGE, nothing for PFCOUNT's cache write.
    let _ = c
        .cmd(&["CONFIG", "SET", "notify-keyspace-events", "E$"])
        .await;
    let mut sub = s.raw().await;
    let _ = sub.cmd(&["SUBSCRIBE", "__keyevent@0__:pfadd"]).await;
    let _ = c.cmd(&["PFADD", "h", "new"]).await;
    let _ = c.cmd(&["PFADD", "h", "new"]).await;
    let _ = c.cmd(&["PFCOUNT", "h"]).await;
    let _ = c.cmd(&["PFMERGE", "m", "h"]).await;
    let _ = c.cmd(&["PFDEBUG", "TODENSE", "m"]).await;
    let _ = c.cmd(&["PUBLISH", "__keyevent@0__:pfadd", "end"]).await;
    let mut got = Vec::new();
    loop {
        let Some(Frame::Array(m)) = sub.read().await else {
            panic!("a message")
        };
        let payload = m[2].clone();
        if payload == bulk("end") {
            break;
        }
        got.push(payload);
    }
    assert_eq!(got, vec![bulk("h"), bulk("m")]);
}

/// The same command lines, replies and value bytes as redis-server, under both protocols:
/// every command, option and error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn differential_commands() {
    if redis_server().is_none() {
        return;
    }
    for proto in [2, 3] {
        let (_s, _r, mut a, mut b) = both(proto).await;
        for line in [
            "PFADD h",
            "GET h",
            "PFADD h",
            "PFADD h a b c d e f g",
            "GET h",
            "PFCOUNT h",
            "GET h",
            "PFCOUNT h",
            "PFADD h a",
            "PFADD h z",
            "GET h",
            "PFCOUNT h nokey",
            "PFCOUNT nokey",
            "PFCOUNT nokey other",
            "PFADD g 1 2 3 4 5 6 7 8 9 10 11 12",
            "PFMERGE m h g",
            "GET m",
            "PFCOUNT m",
            "PFMERGE m",
            "GET m",
            "PFMERGE new",
            "GET new",
            "PFMERGE g2 nokey",
            "GET g2",
            "PFDEBUG DECODE h",
            "PFDEBUG decode m",
            "PFDEBUG ENCODING h",
            "PFDEBUG GETREG h",
            "PFDEBUG ENCODING h",
            "GET h",
            "PFDEBUG DECODE h",
            "PFDEBUG TODENSE h",
            "PFDEBUG TODENSE g",
            "PFDEBUG TODENSE g",
            "GET g",
            "PFADD g x y",
            "GET g",
            "PFCOUNT g",
            "GET g",
            "PFMERGE m2 m g",
            "PFDEBUG ENCODING m2",
            "GET m2",
            "PFMERGE m h",
            "GET m",
            "PFDEBUG nope h",
            "PFDEBUG nope nokey",
            "PFDEBUG GETREG nokey",
            "SET s hello",
            "PFADD s a",
            "PFCOUNT s",
            "PFCOUNT h s",
            "PFMERGE s h",
            "PFMERGE h s",
            "PFDEBUG GETREG s",
            "PFDEBUG nope s",
            "SET i 12345",
            "PFCOUNT i",
            "RPUSH l x",
            "PFADD l a",
            "PFCOUNT l",
            "PFCOUNT h l",
            "PFMERGE l h",
            "PFMERGE h l",
            "PFDEBUG ENCODING l",
            "PFADD",
            "PFCOUNT",
            "PFMERGE",
            "PFDEBUG",
            "PFDEBUG GETREG",
            "PFDEBUG GETREG h extra",
            "PFSELFTEST extra",
            "EXPIRE h 100",
            "PFADD h more",
            "TTL h",
            "OBJECT ENCODING h",
            "TYPE h",
            "COMMAND GETKEYS PFMERGE a b c",
            "COMMAND GETKEYS PFCOUNT a b",
            "COMMAND GETKEYS PFDEBUG GETREG a",
            "MULTI",
            "PFADD t a",
            "PFCOUNT t",
            "PFMERGE t2 t",
            "EXEC",
            "GET t",
            "GET t2",
            "EVAL \"return redis.call('pfadd', KEYS[1], 'x')\" 1 lua",
            "EVAL_RO \"return redis.call('pfcount', KEYS[1])\" 1 lua",
            "GET lua",
            "EVAL_RO \"return redis.call('pfadd', KEYS[1], 'y')\" 1 lua",
            "EVAL \"return redis.call('pfcount', KEYS[1])\" 1 lua",
            "EVAL_RO \"return redis.call('publish', KEYS[1], 'y')\" 1 lua",
        ] {
            // Lines with a quoted script go as three arguments after the script.
            if let Some(rest) = line.strip_prefix("EVAL") {
                let (cmd, rest) = rest.split_once(' ').unwrap();
                let name = format!("EVAL{cmd}");
                let (script, tail) = rest[1..].split_once("\" ").unwrap();
                let mut args: Vec<&[u8]> = vec![name.as_bytes(), script.as_bytes()];
                args.extend(tail.split(' ').map(str::as_bytes));
                same(&mut a, &mut b, &args).await;
                continue;
            }
            same_line(&mut a, &mut b, line).await;
        }
    }
}

/// The value bytes after each PFADD match redis-server's, sparse and through the promotion to
/// dense, with hll-sparse-max-bytes at its default and set lower and higher.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn differential_bytes_around_promotion() {
    if redis_server().is_none() {
        return;
    }
    let (_s, _r, mut a, mut b) = both(2).await;
    for max in ["0", "100", "3000", "6000"] {
        same_line(
            &mut a,
            &mut b,
            &format!("CONFIG SET hll-sparse-max-bytes {max}"),
        )
        .await;
        same_line(&mut a, &mut b, "CONFIG GET hll-sparse-max-bytes").await;
        let key = format!("h{max}");
        let mut promoted_at = None;
        // One element per command until well past the promotion, then in batches.
        for i in 0..2500u64 {
            let e = format!("e{i}:{max}").into_bytes();
            same(&mut a, &mut b, &[b"PFADD", key.as_bytes(), &e]).await;
            let v = same(&mut a, &mut b, &[b"GET", key.as_bytes()]).await;
            if i % 97 == 0 {
                same(&mut a, &mut b, &[b"PFCOUNT", key.as_bytes()]).await;
            }
            let enc = same(&mut a, &mut b, &[b"PFDEBUG", b"ENCODING", key.as_bytes()]).await;
            if enc == b"+dense\r\n" && promoted_at.is_none() {
                promoted_at = Some(i);
                assert!(v.len() > 12304, "the whole dense value");
            }
            if promoted_at.is_some_and(|p| i > p + 50) {
                break;
            }
        }
        // 2500 elements fill 3000 bytes of sparse opcodes, not 6000.
        if max != "6000" {
            assert!(
                promoted_at.is_some(),
                "promoted with hll-sparse-max-bytes {max}"
            );
        }
        // Large batches, dense and sparse: the same values, the same counts.
        for j in 0..5u64 {
            pfadd_both(&mut a, &mut b, &key, &numbers(j * 1000, j * 1000 + 1000)).await;
            same(&mut a, &mut b, &[b"GET", key.as_bytes()]).await;
            same(&mut a, &mut b, &[b"PFCOUNT", key.as_bytes()]).await;
        }
    }
    // Merging sparse into sparse stays sparse (and grows past the threshold into dense).
    same_line(&mut a, &mut b, "CONFIG SET hll-sparse-max-bytes 3000").await;
    for i in 0..30u64 {
        pfadd_both(
            &mut a,
            &mut b,
            &format!("s{i}"),
            &numbers(i * 20, i * 20 + 20),
        )
        .await;
        let mut args: Vec<String> = vec!["PFMERGE".into(), "sm".into()];
        args.extend((0..=i).map(|k| format!("s{k}")));
        let args: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
        same(&mut a, &mut b, &args).await;
        same_line(&mut a, &mut b, "GET sm").await;
        same_line(&mut a, &mut b, "PFDEBUG ENCODING sm").await;
    }
}

/// PFCOUNT on the same 1M inputs, sent as PFADDs of 1000 elements to both servers: the same
/// estimate at every power of ten and at the end, and the same value bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn differential_million_inputs() {
    if redis_server().is_none() {
        return;
    }
    let (_s, _r, mut a, mut b) = both(2).await;
    let mut checkpoint = 1000;
    for batch in 0..1000u64 {
        let elements: Vec<Vec<u8>> = (batch * 1000..batch * 1000 + 1000)
            .map(|i| format!("element:{i}").into_bytes())
            .collect();
        pfadd_both(&mut a, &mut b, "big", &elements).await;
        if (batch + 1) * 1000 == checkpoint {
            same_line(&mut a, &mut b, "PFCOUNT big").await;
            same_line(&mut a, &mut b, "GET big").await;
            checkpoint *= 10;
        }
        if batch % 100 == 99 {
            same_line(&mut a, &mut b, "PFCOUNT big other").await;
        }
    }
    let n = same_line(&mut a, &mut b, "PFCOUNT big").await;
    let n: i64 = std::str::from_utf8(&n[1..n.len() - 2])
        .unwrap()
        .parse()
        .unwrap();
    // The standard error is 1.04 / sqrt(16384), 0.81%.
    assert!((n - 1_000_000).abs() < 30_000, "within 3%: {n}");
    same_line(&mut a, &mut b, "GET big").await;
}

/// A value copied with GET and SET from one server to the other gives the same PFCOUNT, and
/// takes more elements the same way, both ways and in both encodings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_copied_between_servers() {
    if redis_server().is_none() {
        return;
    }
    let (_s, _r, mut relis, mut redis) = both(2).await;
    for (n, key) in [(50u64, "small"), (20_000, "large")] {
        for (from, to) in [(0, 1), (1, 0)] {
            let servers = [&mut relis, &mut redis];
            let elements = numbers(0, n);
            let mut args: Vec<&[u8]> = vec![b"PFADD", key.as_bytes()];
            args.extend(elements.iter().map(Vec::as_slice));
            let _ = servers[from].cmd_bytes(&args).await;
            let Frame::Bulk(v) = servers[from].cmd(&["GET", key]).await else {
                panic!("a value")
            };
            let copy = format!("{key}-copy");
            let _ = servers[to].cmd_bytes(&[b"SET", copy.as_bytes(), &v]).await;
            let want = servers[from].cmd(&["PFCOUNT", key]).await;
            assert_eq!(servers[to].cmd(&["PFCOUNT", &copy]).await, want);
            // Both take the same further elements to the same bytes.
            let more = numbers(n, n + 300);
            for (s, k) in [(from, key), (to, copy.as_str())] {
                let mut args: Vec<&[u8]> = vec![b"PFADD", k.as_bytes()];
                args.extend(more.iter().map(Vec::as_slice));
                let _ = servers[s].cmd_bytes(&args).await;
            }
            let x = servers[from].cmd(&["GET", key]).await;
            let y = servers[to].cmd(&["GET", &copy]).await;
            assert_eq!(x, y, "{key} from {from}");
            let _ = servers[0].cmd(&["FLUSHALL"]).await;
            let _ = servers[1].cmd(&["FLUSHALL"]).await;
        }
    }
}

/// A sparse HLL's bytes: the header (sparse, cache valid and 0) and `ops`.
fn sparse(ops: &[u8]) -> Vec<u8> {
    let mut v = b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\0".to_vec();
    v.extend_from_slice(ops);
    v
}

/// `sparse` with the cached cardinality marked stale.
fn stale(mut v: Vec<u8>) -> Vec<u8> {
    v[15] |= 0x80;
    v
}

/// Corrupted and hostile values get the same error as from redis-server (never a crash), and
/// the value is left as redis-server leaves it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn differential_corrupted_values() {
    if redis_server().is_none() {
        return;
    }
    let (_s, _r, mut a, mut b) = both(2).await;
    let _ = same_line(&mut a, &mut b, "PFADD good a b c").await;
    let _ = same_line(&mut a, &mut b, "PFADD dense a").await;
    let _ = same_line(&mut a, &mut b, "PFDEBUG TODENSE dense").await;
    let Frame::Bulk(dense) = a.cmd(&["GET", "dense"]).await else {
        panic!()
    };
    let mut bad_encoding = dense.to_vec();
    bad_encoding[4] = 2;
    let mut bad_magic = dense.to_vec();
    bad_magic[0] = b'h';
    let mut sparse_tagged_dense = dense.to_vec();
    sparse_tagged_dense[4] = 1;
    let mut dense_marked_sparse_short = sparse(&[0x7f, 0xff]);
    dense_marked_sparse_short[4] = 0;
    let values: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("short", b"HYLL".to_vec()),
        ("header only", sparse(&[])),
        ("stale header only", stale(sparse(&[]))),
        ("truncated dense", dense[..dense.len() - 1].to_vec()),
        ("longer dense", [&dense[..], b"x"].concat()),
        ("bad magic", bad_magic),
        ("bad encoding byte", bad_encoding),
        ("dense bytes read as sparse", stale(sparse_tagged_dense)),
        ("dense tag on a short value", dense_marked_sparse_short),
        // Runs that stop short of 16384 registers.
        ("short runs", stale(sparse(&[0x7f, 0xfe]))),
        ("one zero", stale(sparse(&[0x00]))),
        // Runs past the 16384 registers: two full XZEROs, and a VAL past the end.
        ("two xzeros", stale(sparse(&[0x7f, 0xff, 0x7f, 0xff]))),
        ("val overflow", stale(sparse(&[0x7f, 0xff, 0x83]))),
        ("val overflow inside", stale(sparse(&[0x7f, 0xfd, 0x83]))),
        // An XZERO cut off by the end of the value.
        ("cut xzero", stale(sparse(&[0x7f, 0xfe, 0x40]))),
        ("cut xzero only", stale(sparse(&[0x7f]))),
        // A valid cache is returned without looking at the registers.
        ("valid cache, bad runs", sparse(&[0x7f, 0xfe])),
        ("valid cache, big", {
            let mut v = sparse(&[0x7f, 0xff]);
            v[8..16].copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 0x7f]);
            v
        }),
        // Registers above what sparse VAL can hold cannot be written; values are 1..=32.
        ("max vals", stale(sparse(&[0xff, 0xff, 0x7f, 0xf7]))),
    ];
    for (name, v) in &values {
        for line in [
            &["PFCOUNT", "k"][..],
            &["PFCOUNT", "k", "good"],
            &["PFADD", "k", "a", "b", "c", "d", "e", "f"],
            &["PFADD", "k"],
            &["PFMERGE", "good2", "k", "good"],
            &["PFMERGE", "k", "good"],
            &["PFDEBUG", "DECODE", "k"],
            &["PFDEBUG", "ENCODING", "k"],
            &["PFDEBUG", "GETREG", "k"],
            &["PFDEBUG", "TODENSE", "k"],
            &["PFCOUNT", "k"],
        ] {
            let set: Vec<&[u8]> = vec![b"SET", b"k", v];
            same(&mut a, &mut b, &set).await;
            let args: Vec<&[u8]> = line.iter().map(|s| s.as_bytes()).collect();
            let r = same(&mut a, &mut b, &args).await;
            let after = same(&mut a, &mut b, &[b"GET", b"k"]).await;
            let _ = (name, r, after);
        }
    }
}

/// Redis 7.0.15 is open to CVE-2025-32023: XZERO runs whose sum overflows an `int` let a VAL
/// after them write outside the registers. Relis sums in `usize` and checks every run against
/// the 16384 registers first: the value is refused as corrupted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn register_sum_overflow_is_refused() {
    let s = start().await;
    let mut c = s.raw().await;
    // 2^31 / 16384 = 131072 full XZEROs, then more, then a VAL.
    let mut ops = Vec::new();
    for _ in 0..131_073 {
        ops.extend_from_slice(&[0x7f, 0xff]);
    }
    ops.push(0x80);
    let v = stale(sparse(&ops));
    let corrupted = err("INVALIDOBJ Corrupted HLL object detected");
    let _ = c.cmd_bytes(&[b"SET", b"k", &v]).await;
    assert_eq!(c.cmd(&["PFCOUNT", "k"]).await, corrupted);
    assert_eq!(c.cmd(&["PFCOUNT", "k", "other"]).await, corrupted);
    assert_eq!(c.cmd(&["PFMERGE", "d", "k"]).await, corrupted);
    assert_eq!(c.cmd(&["PFDEBUG", "GETREG", "k"]).await, corrupted);
    assert_eq!(c.cmd(&["PFDEBUG", "TODENSE", "k"]).await, corrupted);
    // PFADD splits the first XZERO, which makes the value longer than hll-sparse-max-bytes:
    // the promotion to dense walks the runs and finds them corrupted.
    assert_eq!(c.cmd(&["PFADD", "k", "a"]).await, corrupted);
    assert_eq!(c.cmd(&["GET", "k"]).await, Frame::Bulk(v.into()));
    assert_eq!(c.cmd(&["EXISTS", "d"]).await, int(0));
    assert_eq!(c.cmd(&["PING"]).await, simple("PONG"));
}

/// Sends `args` through the `redis` crate, waiting as long as the self test takes (ten million
/// additions: seconds in a debug build on a loaded machine, longer than `Raw` waits).
async fn slow_cmd(s: &TestServer, args: &[&str]) -> redis::RedisResult<String> {
    let client = redis::Client::open(format!("redis://{}/", s.addr)).expect("client");
    let cfg = redis::AsyncConnectionConfig::new()
        .set_response_timeout(std::time::Duration::from_secs(600));
    let mut con = client
        .get_multiplexed_async_connection_with_config(&cfg)
        .await
        .expect("connection");
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    cmd.query_async(&mut con).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pfselftest_replies_ok() {
    let s = start().await;
    assert_eq!(slow_cmd(&s, &["PFSELFTEST"]).await, Ok("OK".into()));
}

/// Redis lets a script run PFSELFTEST (it is not `noscript`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pfselftest_from_a_script() {
    let s = start().await;
    let r = slow_cmd(&s, &["EVAL", "return redis.call('pfselftest')", "0"]).await;
    assert_eq!(r, Ok("OK".into()));
}

/// PFCOUNT and PFMERGE look their keys up as reads: hits and misses are counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lookups_are_counted() {
    let s = start().await;
    let mut c = s.raw().await;
    let stats = |f: Frame| -> (u64, u64) {
        let Frame::Bulk(b) = f else { panic!() };
        let text = String::from_utf8_lossy(&b).into_owned();
        let get = |name: &str| -> u64 {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("{name}:")))
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        };
        (get("keyspace_hits"), get("keyspace_misses"))
    };
    let _ = c.cmd(&["PFADD", "h", "a"]).await;
    let (h0, m0) = stats(c.cmd(&["INFO", "stats"]).await);
    let _ = c.cmd(&["PFCOUNT", "h"]).await;
    let _ = c.cmd(&["PFCOUNT", "h", "nokey"]).await;
    let _ = c.cmd(&["PFMERGE", "dest", "h"]).await;
    let _ = c.cmd(&["PFADD", "h", "b"]).await;
    let (h1, m1) = stats(c.cmd(&["INFO", "stats"]).await);
    // PFCOUNT h: hit; PFCOUNT h nokey: hit, miss; PFMERGE dest h: miss (dest), hit; PFADD: none.
    assert_eq!((h1 - h0, m1 - m0), (3, 2));
}

/// Redis flags PFCOUNT `may_replicate` (its cache write is propagated): CLIENT PAUSE WRITE holds
/// it, with one key or several, as redis-server 7.0.15 does. Real, short waits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_pause_write_holds_pfcount() {
    use std::time::{Duration, Instant};
    let s = start().await;
    let mut ctl = s.raw().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["PFADD", "h", "a"]).await, int(1));
    for keys in [&["h"][..], &["h", "other"]] {
        assert_eq!(ctl.cmd(&["CLIENT", "PAUSE", "400", "WRITE"]).await, ok());
        let t = Instant::now();
        let mut args = vec!["PFCOUNT"];
        args.extend_from_slice(keys);
        assert_eq!(c.cmd(&args).await, int(1));
        assert!(
            t.elapsed() >= Duration::from_millis(350),
            "{keys:?}: {:?}",
            t.elapsed()
        );
    }
}

/// PFCOUNT's cache write invalidates a client-side cache of the key, as Redis's
/// `signalModifiedKey` does; a PFCOUNT that only reads a valid cache does not. Compared with
/// redis-server: the same frames, in the same order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pfcount_cache_write_invalidates_tracking() {
    if redis_server().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let redis = spawn_redis(tmp.path()).expect("redis-server");
    let relis = start().await;
    let mut seen = Vec::new();
    for addr in [relis.addr, redis.addr()] {
        let mut a = Raw::connect(addr).await;
        let mut b = Raw::connect(addr).await;
        let _ = a.cmd(&["HELLO", "3"]).await;
        let _ = a.cmd(&["CLIENT", "TRACKING", "ON"]).await;
        let _ = b.cmd(&["PFADD", "h", "x", "y"]).await;
        let mut log = Vec::new();
        for _ in 0..2 {
            let _ = a.cmd(&["GET", "h"]).await;
            log.push(show(&encode_command(&[b"PFCOUNT", b"h"])));
            let _ = b.cmd(&["PFCOUNT", "h"]).await;
            a.send(&encode_command(&[b"PING"])).await;
            loop {
                let r = a.read_raw().await.expect("a frame");
                let pong = r == b"+PONG\r\n";
                log.push(show(&r));
                if pong {
                    break;
                }
            }
        }
        seen.push(log);
    }
    assert_eq!(seen[0], seen[1]);
    assert!(
        seen[0].iter().any(|l| l.contains("invalidate")),
        "{:?}",
        seen[0]
    );
}

/// Random sequences of PFADD (short elements from a small alphabet, so that sparse values get
/// VAL runs longer than one register and splits of them), PFMERGE of random keys and PFCOUNT,
/// with hll-sparse-max-bytes changing now and then: the value bytes match redis-server's after
/// every step.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn differential_random_sequences() {
    if redis_server().is_none() {
        return;
    }
    let (_s, _r, mut a, mut b) = both(2).await;
    let mut rng: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    for step in 0..3000 {
        let key = format!("k{}", next(6));
        match next(20) {
            0 => {
                let max = [0, 50, 300, 1000, 3000][next(5) as usize];
                same_line(
                    &mut a,
                    &mut b,
                    &format!("CONFIG SET hll-sparse-max-bytes {max}"),
                )
                .await;
            }
            1 | 2 => {
                let mut args = vec!["PFMERGE".to_string(), key.clone()];
                for _ in 0..next(3) {
                    args.push(format!("k{}", next(6)));
                }
                let args: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
                same(&mut a, &mut b, &args).await;
            }
            3 => {
                same_line(&mut a, &mut b, &format!("PFCOUNT {key}")).await;
            }
            _ => {
                let elements: Vec<Vec<u8>> = (0..1 + next(5))
                    .map(|_| {
                        format!("{}", next(if step < 1500 { 400 } else { 40_000 })).into_bytes()
                    })
                    .collect();
                pfadd_both(&mut a, &mut b, &key, &elements).await;
            }
        }
        same(&mut a, &mut b, &[b"GET", key.as_bytes()]).await;
    }
}
