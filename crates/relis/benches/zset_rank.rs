//! Rank queries on a large sorted set: builds a 1M-member set in a file database, then times
//! ZRANK and ZRANGE by rank at the start, the middle and the end, directly on a read connection
//! (`Db::read_here`, no thread hand-off) and through the reader pool (`Db::read`).
//!
//! `cargo bench -p relis --bench zset_rank` (set `ZSET_BENCH_N` for another size).

use relis::{Bytes, Db, ZAddOptions, ZRange, ZRangeBy};
use std::time::{Duration, Instant};

fn member(i: u64) -> Bytes {
    // Scores repeat every 1000 members so ties are ordered by member, as in a leaderboard.
    Bytes::from(format!("player:{i:08}"))
}

fn score(i: u64) -> f64 {
    ((i * 7919) % 1_000_000 / 1000) as f64
}

fn time<T>(label: &str, iters: u32, mut f: impl FnMut(u32) -> T) {
    // Warm the cache first.
    for i in 0..iters.min(50) {
        std::hint::black_box(f(i));
    }
    let mut samples = Vec::with_capacity(iters as usize);
    for i in 0..iters {
        let t = Instant::now();
        std::hint::black_box(f(i));
        samples.push(t.elapsed());
    }
    samples.sort();
    let mean: Duration = samples.iter().sum::<Duration>() / iters;
    let p50 = samples[samples.len() / 2];
    let p99 = samples[samples.len() * 99 / 100];
    println!(
        "{label:<44} mean {:>8.1} us   p50 {:>8.1} us   p99 {:>8.1} us",
        mean.as_secs_f64() * 1e6,
        p50.as_secs_f64() * 1e6,
        p99.as_secs_f64() * 1e6
    );
}

fn main() {
    let n: u64 = std::env::var("ZSET_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    // ZSET_BENCH_DB keeps the database file between runs (the build is the slow part).
    let dir = tempfile::tempdir().expect("tempdir");
    let path = std::env::var("ZSET_BENCH_DB")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| dir.path().join("bench.db"));
    let db = Db::open(&path).expect("open");
    let t = Instant::now();
    let chunk = 10_000;
    let mut i = if db.zcard("lb").unwrap() == n as i64 {
        n
    } else {
        0
    };
    if i == 0 {
        db.del(&["lb"]).unwrap();
    }
    while i < n {
        let end = (i + chunk).min(n);
        let pairs: Vec<(f64, Bytes)> = (i..end).map(|j| (score(j), member(j))).collect();
        db.zadd_with("lb", ZAddOptions::default(), pairs)
            .expect("zadd");
        i = end;
    }
    println!(
        "built a {n}-member sorted set in {:.1} s ({} ZADD pairs per command)",
        t.elapsed().as_secs_f64(),
        chunk
    );
    assert_eq!(db.zcard("lb").unwrap(), n as i64);

    // Members whose ranks are spread over the set.
    let mut by_rank: Vec<(f64, Bytes)> = (0..n).map(|j| (score(j), member(j))).collect();
    by_rank.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap().then(a.1.cmp(&b.1)));
    let at = |r: u64| by_rank[r as usize].1.clone();
    let mid = n / 2;
    for (label, r) in [("first", 0), ("middle", mid), ("last", n - 1)] {
        let m = at(r);
        let got = db
            .read_here(|rd| rd.zrank(0, b"lb", &m, false))
            .expect("file db")
            .unwrap()
            .unwrap();
        assert_eq!(got, Some(Some(r as i64)));
        time(&format!("ZRANK ({label}, read_here)"), 2000, |_| {
            db.read_here(|rd| rd.zrank(0, b"lb", &m, false))
                .unwrap()
                .unwrap()
        });
    }
    let m = at(mid);
    time("ZRANK (middle, through the reader pool)", 2000, |_| {
        db.zrank("lb", &m, false).unwrap()
    });
    let spread: Vec<Bytes> = (0..1000).map(|k| at(k * (n / 1000))).collect();
    time("ZRANK (1000 ranks spread over the set)", 1000, |i| {
        let m = &spread[i as usize % spread.len()];
        db.read_here(|rd| rd.zrank(0, b"lb", m, false))
            .unwrap()
            .unwrap()
    });
    for (label, start) in [("0 10", 0), ("500000 500010", mid), ("-11 -1", n - 11)] {
        let spec = ZRange {
            by: ZRangeBy::Rank(start as i64, start as i64 + 10),
            rev: false,
            limit: None,
        };
        let got = db
            .read_here(|rd| rd.zrange(0, b"lb", &spec))
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(got.unwrap()[0].0, at(start));
        time(&format!("ZRANGE lb {label} (read_here)"), 2000, |_| {
            db.read_here(|rd| rd.zrange(0, b"lb", &spec))
                .unwrap()
                .unwrap()
        });
    }
    let spec = ZRange {
        by: ZRangeBy::Rank(mid as i64, mid as i64 + 10),
        rev: false,
        limit: None,
    };
    time("ZRANGE lb 500000 500010 (reader pool)", 2000, |_| {
        db.zrange("lb", spec.clone()).unwrap()
    });
    // Writes to the big set: each adjusts one rank block (two for a score change).
    let mut k = 0u64;
    time("ZADD new member (1M set, committed)", 500, |_| {
        k += 1;
        db.zadd("lb", &[(score(k) + 0.5, format!("new:{k}").as_bytes())])
            .unwrap()
    });
    let mut k = 0u64;
    time("ZINCRBY existing member (1M set, committed)", 500, |_| {
        k += 1;
        db.zincrby("lb", 1.0, member(k * 1999 % n)).unwrap()
    });
    db.write(|w| w.zcheck(0, b"lb"))
        .expect("rank blocks consistent");
    println!("rank blocks consistent after the writes");
    if std::env::var("ZSET_BENCH_DB").is_ok() {
        // Put the kept set back as it was built, for the next run (each timed loop also ran
        // 50 warm-up calls).
        let news: Vec<Vec<u8>> = (1..=550).map(|k| format!("new:{k}").into_bytes()).collect();
        let refs: Vec<&[u8]> = news.iter().map(|v| &v[..]).collect();
        db.zrem("lb", &refs).unwrap();
        let fix: Vec<(f64, Bytes)> = (1..=550u64)
            .map(|k| {
                let j = k * 1999 % n;
                (score(j), member(j))
            })
            .collect();
        db.zadd_with("lb", ZAddOptions::default(), fix).unwrap();
    }
}
