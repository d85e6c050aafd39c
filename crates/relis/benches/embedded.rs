//! Embedded GET and SET latency: the typed blocking methods of a file database
//! (`durability normal`, the default) called from one thread, as an application (or the Python
//! package) calls them. Prints mean, median and p99 per call.
//!
//! `cargo bench -p relis --bench embedded` (set `EMBEDDED_BENCH_N` for the number of calls,
//! 100000 by default, and `EMBEDDED_BENCH_ONLY=read_here` to run only the matching lines), then
//! the floor: SQLite itself doing the same point read and upsert. The bar: GET <= 2 us and SET <= 10 us median.

use relis::Db;
use std::time::{Duration, Instant};

fn time(label: &str, iters: u32, mut f: impl FnMut(u32)) {
    // `EMBEDDED_BENCH_ONLY=<part of a label>` runs the matching measurements only (for a profile).
    if let Ok(only) = std::env::var("EMBEDDED_BENCH_ONLY") {
        if !label.contains(only.as_str()) {
            return;
        }
    }
    for i in 0..iters.min(1000) {
        f(i); // warm the caches and the statement cache
    }
    let mut samples = Vec::with_capacity(iters as usize);
    for i in 0..iters {
        let t = Instant::now();
        f(i);
        samples.push(t.elapsed());
    }
    samples.sort();
    let mean: Duration = samples.iter().sum::<Duration>() / iters;
    let p50 = samples[samples.len() / 2];
    let p99 = samples[samples.len() * 99 / 100];
    println!(
        "{label:<36} mean {:>8.2} us   p50 {:>8.2} us   p99 {:>8.2} us",
        mean.as_secs_f64() * 1e6,
        p50.as_secs_f64() * 1e6,
        p99.as_secs_f64() * 1e6
    );
}

fn main() {
    let n: u32 = std::env::var("EMBEDDED_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000)
        .max(100);
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path().join("embedded.db")).expect("open");
    let value = vec![b'x'; 16];
    db.set("key", &value).expect("set");
    for i in 0..10_000 {
        db.set(format!("other:{i}"), &value).expect("set");
    }
    time("GET (Db::get, hit)", n, |_| {
        std::hint::black_box(db.get("key").expect("get"));
    });
    time("GET (Db::read_here, hit)", n, |_| {
        let v = db.read_here(|r| r.get(0, b"key")).expect("file db");
        std::hint::black_box(v.expect("read").expect("get"));
    });
    // A new read transaction for every read, as when a commit comes between any two.
    time("GET (Db::get, hit, snapshot released)", n, |_| {
        std::hint::black_box(db.get("key").expect("get"));
        relis::release_thread_snapshots();
    });
    time("SET (Db::set, same key)", n, |_| {
        db.set("key", &value).expect("set");
    });
    time("SET (Db::set, 10k keys in turn)", n, |i| {
        db.set(format!("other:{}", i % 10_000), &value)
            .expect("set");
    });
    queued(&db, n, &value);
    drop(db);
    floor(dir.path(), n, &value);
}

/// The server's path, for comparison: SETs queued to the writer thread (`Db::write_async`) with
/// 64 in flight, as many clients' commands arrive, so that the writer commits them in groups.
/// Prints the mean time per write and the writes per commit.
fn queued(db: &Db, n: u32, value: &[u8]) {
    const LABEL: &str = "SET (write_async, 64 in flight)";
    if std::env::var("EMBEDDED_BENCH_ONLY").is_ok_and(|only| !LABEL.contains(only.as_str())) {
        return;
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let commits = || {
        db.stats()
            .commits
            .load(std::sync::atomic::Ordering::Relaxed)
    };
    let (started, before) = (Instant::now(), commits());
    let mut in_flight = 0;
    for i in 0..n {
        if in_flight == 64 {
            rx.recv().expect("answer");
            in_flight -= 1;
        }
        let (tx, key, value) = (tx.clone(), format!("other:{}", i % 10_000), value.to_vec());
        db.write_async(
            move |w| w.set(0, key.as_bytes(), &value, relis::SetOptions::default()),
            move |r| {
                r.expect("committed").expect("set");
                tx.send(()).expect("send");
            },
        );
        in_flight += 1;
    }
    for _ in 0..in_flight {
        rx.recv().expect("answer");
    }
    let took = started.elapsed();
    let groups = (commits() - before).max(1);
    println!(
        "{LABEL:<36} mean {:>8.2} us per write, {:.1} writes per commit",
        took.as_secs_f64() * 1e6 / f64::from(n),
        f64::from(n) / groups as f64
    );
}

/// The floor under those figures: SQLite by itself on this machine, one table of 10,001
/// 16-byte values keyed by blobs, WAL and `synchronous = NORMAL` as a Relis file, every
/// statement in its own (autocommit) transaction, as `Db::get` and `Db::set` each are. It runs
/// after a `Db` was opened in this process, so with Relis's process-wide SQLite settings: its
/// VFS shim, and the WAL index's locks kept between transactions while no other process has
/// the file open (`backend/sqlite/shmlocks.rs`; plain SQLite takes six of them from the OS per
/// commit: the changing upsert's median was 7.6-7.7 us here without the module, 3.5-4.4 us
/// with it).
fn floor(dir: &std::path::Path, n: u32, value: &[u8]) {
    let conn = rusqlite::Connection::open(dir.join("floor.db")).expect("open");
    conn.execute_batch(
        "PRAGMA page_size = 2048; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
         CREATE TABLE kv (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID;",
    )
    .expect("schema");
    for i in 0..10_000 {
        conn.execute(
            "INSERT INTO kv (k, v) VALUES (?1, ?2)",
            (format!("other:{i}").into_bytes(), value),
        )
        .expect("insert");
    }
    let set = "INSERT INTO kv (k, v) VALUES (?1, ?2) ON CONFLICT (k) DO UPDATE SET v = excluded.v";
    conn.execute(set, (b"key".as_slice(), value))
        .expect("insert");
    time("floor: SQLite point SELECT, autocommit", n, |_| {
        let mut st = conn
            .prepare_cached("SELECT v FROM kv WHERE k = ?1")
            .expect("prepare");
        let v: Vec<u8> = st
            .query_row([b"key".as_slice()], |r| r.get(0))
            .expect("select");
        std::hint::black_box(v);
    });
    time("floor: SQLite upsert, autocommit", n, |_| {
        let mut st = conn.prepare_cached(set).expect("prepare");
        st.execute((b"key".as_slice(), value)).expect("upsert");
    });
    // The line above rewrites the same bytes, which SQLite notices: the page is not written,
    // and the commit writes no WAL frame. A Relis SET always changes its row (version, mtime),
    // so its floor is an upsert whose value changes each time.
    let mut changing = value.to_vec();
    time("floor: SQLite upsert, value changes, autocommit", n, |i| {
        changing[..4].copy_from_slice(&i.to_le_bytes());
        let mut st = conn.prepare_cached(set).expect("prepare");
        st.execute((b"key".as_slice(), &changing)).expect("upsert");
    });
    // The same upsert on a file no other connection may open (`locking_mode = EXCLUSIVE`
    // before WAL, so the WAL index is in this process's memory): each commit takes no lock on
    // the -shm file at all, what the lines above come down to while the process keeps them.
    let alone = rusqlite::Connection::open(dir.join("floor-alone.db")).expect("open");
    alone
        .execute_batch(
            "PRAGMA page_size = 2048; PRAGMA locking_mode = EXCLUSIVE;
             PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
             CREATE TABLE kv (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID;",
        )
        .expect("schema");
    alone
        .execute(set, (b"key".as_slice(), value))
        .expect("insert");
    time("floor: the same, no shm locks (excl.)", n, |i| {
        changing[..4].copy_from_slice(&i.to_le_bytes());
        let mut st = alone.prepare_cached(set).expect("prepare");
        st.execute((b"key".as_slice(), &changing)).expect("upsert");
    });
}
