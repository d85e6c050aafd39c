//! MEMORY: the same replies and errors as redis-server 7.0.15 where they do not depend on how
//! the data is kept, and numbers that mean what the README says where they do.

mod common;
use common::*;
use resp::Frame;

/// The replies that must be byte for byte Redis's, RESP2 and RESP3.
const SAME: &[&[&str]] = &[
    &["MEMORY", "HELP"],
    &["MEMORY", "USAGE", "nokey"],
    &["MEMORY", "USAGE", "k", "samples"],
    &["MEMORY", "USAGE", "k", "samples", "x"],
    &["MEMORY", "USAGE", "k", "samples", "-1"],
    &["MEMORY", "USAGE", "k", "bla", "1"],
    &["MEMORY", "USAGE"],
    &["MEMORY", "PURGE"],
    &["MEMORY", "PURGE", "x"],
    &["MEMORY", "STATS", "x"],
    &["MEMORY", "NOSUCH"],
    &["MEMORY"],
];

async fn replies(addr: std::net::SocketAddr, proto: &str) -> Vec<String> {
    let mut c = Raw::connect(addr).await;
    c.cmd(&["HELLO", proto]).await;
    let mut out = Vec::new();
    for line in SAME {
        let args: Vec<&[u8]> = line.iter().map(|a| a.as_bytes()).collect();
        c.send(&encode_command(&args)).await;
        out.push(show(&c.read_raw().await.unwrap()));
    }
    out
}

/// The names MEMORY STATS gives, in order (the `db.N` entries as `db.N`).
async fn stats_names(addr: std::net::SocketAddr) -> Vec<String> {
    let mut c = Raw::connect(addr).await;
    let Frame::Array(items) = c.cmd(&["MEMORY", "STATS"]).await else {
        panic!("MEMORY STATS is a flat array in RESP2")
    };
    items
        .iter()
        .step_by(2)
        .map(|f| match f {
            Frame::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
            other => panic!("a name: {other:?}"),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_replies_match_redis() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(redis) = spawn_redis(tmp.path()) else {
        eprintln!("skipped: redis-server is not installed");
        return;
    };
    let s = start().await;
    for addr in [s.addr, redis.addr()] {
        Raw::connect(addr).await.cmd(&["SET", "k", "v"]).await;
    }
    for proto in ["2", "3"] {
        assert_eq!(
            replies(s.addr, proto).await,
            replies(redis.addr(), proto).await,
            "RESP{proto}"
        );
    }
    let (ours, theirs) = (stats_names(s.addr).await, stats_names(redis.addr()).await);
    let ours: Vec<String> = ours
        .into_iter()
        .filter(|n| !n.starts_with("relis."))
        .collect();
    assert_eq!(ours, theirs);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_usage_measures_the_key_in_the_file() {
    let s = start().await;
    let mut c = s.raw().await;
    let usage = |f: Frame| match f {
        Frame::Integer(n) => n,
        other => panic!("an integer: {other:?}"),
    };
    c.cmd(&["SET", "small", "v"]).await;
    let big = "x".repeat(100_000);
    c.cmd(&["SET", "big", &big]).await;
    let small = usage(c.cmd(&["MEMORY", "USAGE", "small"]).await);
    let large = usage(c.cmd(&["MEMORY", "USAGE", "big"]).await);
    assert!((10..200).contains(&small), "{small}");
    assert!((100_000..110_000).contains(&large), "{large}");
    // An expiry adds its index entry.
    c.cmd(&["EXPIRE", "small", "100"]).await;
    assert!(usage(c.cmd(&["MEMORY", "USAGE", "small"]).await) > small);
    for i in 0..2000 {
        c.cmd(&["HSET", "h", &format!("field:{i}"), "value"]).await;
    }
    let all = usage(c.cmd(&["MEMORY", "USAGE", "h", "SAMPLES", "0"]).await);
    let sampled = usage(c.cmd(&["MEMORY", "USAGE", "h"]).await);
    assert!((2000 * 15..2000 * 60).contains(&all), "{all}");
    assert!((all - sampled).abs() * 10 < all, "{all} vs {sampled}");
    // Another database's key is not this one's.
    c.cmd(&["SELECT", "1"]).await;
    assert_eq!(c.cmd(&["MEMORY", "USAGE", "big"]).await, Frame::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_stats_doctor_and_malloc_stats() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["MEMORY", "DOCTOR"]).await,
        bulk("Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n")
    );
    c.cmd(&["SET", "k", "v"]).await;
    c.cmd(&["SELECT", "3"]).await;
    c.cmd(&["SET", "k", "v"]).await;
    let Frame::Bulk(report) = c.cmd(&["MEMORY", "DOCTOR"]).await else {
        panic!("a bulk")
    };
    assert!(!report.starts_with(b"Hi Sam, this instance is empty"));
    assert_eq!(
        c.cmd(&["MEMORY", "MALLOC-STATS"]).await,
        bulk("Stats not supported for the current allocator")
    );
    c.cmd(&["HELLO", "3"]).await;
    let Frame::Map(stats) = c.cmd(&["MEMORY", "STATS"]).await else {
        panic!("a map in RESP3")
    };
    let get = |name: &str| {
        stats
            .iter()
            .find(|(k, _)| *k == bulk(name))
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("{name} is reported"))
    };
    assert_eq!(get("keys.count"), int(2));
    let Frame::Integer(total) = get("total.allocated") else {
        panic!()
    };
    assert!(total > 1 << 20, "{total}");
    assert!(matches!(get("dataset.percentage"), Frame::Double(_)));
    assert!(matches!(get("db.0"), Frame::Map(_)));
    assert!(matches!(get("db.3"), Frame::Map(_)));
    assert!(
        stats.iter().all(|(k, _)| *k != bulk("db.1")),
        "empty databases are left out"
    );
}
