//! Does a list or a sorted set slow down as it grows? Times push, pop and rank on a list and a
//! sorted set of 1,000 elements, grows each to 1,000,000, times the same operations again and
//! prints the two rates side by side.
//!
//! Each timed operation is one command inside a write job of [`GROUP`] commands, as the server's
//! group commit runs them under load (50 clients, one command each), so the rate is the
//! data structure's cost plus a share of one commit, not the cost of a commit per command.
//!
//! `cargo bench -p relis --bench scale` (`SCALE_BENCH_N` for another large size).

use relis::{Bytes, Db, End, ZAddOptions};
use std::time::Instant;

/// Commands per write job (one group commit).
const GROUP: usize = 50;
/// Commands timed per measurement.
const OPS: usize = 20_000;

fn main() {
    let large: u64 = std::env::var("SCALE_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path().join("scale.db")).expect("open");
    let mut rows: Vec<(String, f64, f64)> = Vec::new();

    // Lists: LPUSH then RPOP keep the length where it is.
    let mut len = 0;
    for size in [1_000, large] {
        grow_list(&db, &mut len, size);
        settle();
        let lpush = best(|| {
            rate(&db, move |w, i| {
                let v = [Bytes::from(format!("v{i}"))];
                w.push(0, b"list", &v, End::Left, false).map(drop)
            })
        });
        let rpop = best(|| rate(&db, |w, _| w.pop(0, b"list", End::Right, 1).map(drop)));
        let lindex = best(|| {
            read_rate(&db, move |r, i| {
                r.lindex(0, b"list", (i as u64 * 7919 % size) as i64)
                    .map(drop)
            })
        });
        record(&mut rows, size, "LPUSH", lpush);
        record(&mut rows, size, "RPOP", rpop);
        record(&mut rows, size, "LINDEX (random index)", lindex);
    }

    // Sorted sets: ZADD of a new member, ZPOPMIN of the lowest, ZRANK of a random member.
    let mut card = 0;
    for size in [1_000, large] {
        grow_zset(&db, &mut card, size);
        settle();
        let mut round = 0;
        let zadd = best(|| {
            round += 1;
            let tag = round;
            rate(&db, move |w, i| {
                let m = Bytes::from(format!("new:{size}:{tag}:{i}"));
                let pairs = [(score(size + i as u64), m)];
                w.zadd(0, b"zset", ZAddOptions::default(), &pairs).map(drop)
            })
        });
        let zpop = best(|| rate(&db, |w, _| w.zpop(0, b"zset", false, 1).map(drop)));
        let zrank = best(|| {
            read_rate(&db, move |r, i| {
                let m = member(i as u64 * 7919 % size + 3 * OPS as u64);
                r.zrank(0, b"zset", &m, false).map(drop)
            })
        });
        record(&mut rows, size, "ZADD (new member)", zadd);
        record(&mut rows, size, "ZPOPMIN", zpop);
        record(&mut rows, size, "ZRANK (random member)", zrank);
    }

    println!();
    println!("| operation | ops/s at 1,000 | ops/s at {large} | large/small |");
    println!("|---|---|---|---|");
    for (label, small, big) in rows {
        println!("| {label} | {small:.0} | {big:.0} | {:.2} |", big / small);
    }
}

fn member(i: u64) -> Bytes {
    Bytes::from(format!("m:{i:09}"))
}

fn score(i: u64) -> f64 {
    (i * 2_654_435_761 % 1_000_003) as f64
}

/// Grows the list to `size` elements in large pushes (not timed).
fn grow_list(db: &Db, len: &mut u64, size: u64) {
    let t = Instant::now();
    while *len < size {
        let n = (size - *len).min(10_000);
        let values: Vec<Bytes> = (0..n)
            .map(|i| Bytes::from(format!("e{}", *len + i)))
            .collect();
        db.write(move |w| w.push(0, b"list", &values, End::Right, false))
            .expect("push");
        *len += n;
    }
    eprintln!(
        "list at {size} elements ({:.1} s)",
        t.elapsed().as_secs_f64()
    );
}

/// Grows the sorted set to `size` members in large ZADDs (not timed). Member `i` has score
/// `score(i)`; ZPOPMIN may take any of them, so ZRANK asks for members above `3 * OPS`, which
/// three rounds of ZPOPMIN cannot all reach.
fn grow_zset(db: &Db, card: &mut u64, size: u64) {
    let t = Instant::now();
    let have = db.zcard("zset").expect("zcard") as u64;
    let mut i = (*card).max(have);
    while i < size + 3 * OPS as u64 {
        let end = (i + 10_000).min(size + 3 * OPS as u64);
        let pairs: Vec<(f64, Bytes)> = (i..end).map(|j| (score(j), member(j))).collect();
        db.write(move |w| w.zadd(0, b"zset", ZAddOptions::default(), &pairs))
            .expect("zadd");
        i = end;
    }
    *card = i;
    eprintln!(
        "zset at {size} members ({:.1} s)",
        t.elapsed().as_secs_f64()
    );
}

/// Runs `op` [`OPS`] times, [`GROUP`] to a write job, and returns operations per second.
fn rate(
    db: &Db,
    op: impl Fn(&mut relis::Writer<'_>, usize) -> relis::Result<()> + Send + Sync + Copy + 'static,
) -> f64 {
    let t = Instant::now();
    for g in 0..OPS / GROUP {
        db.write(move |w| {
            for k in 0..GROUP {
                op(w, g * GROUP + k)?;
            }
            Ok(())
        })
        .expect("write");
    }
    OPS as f64 / t.elapsed().as_secs_f64()
}

/// Runs the read `op` [`OPS`] times on this thread's read connection; operations per second.
fn read_rate(db: &Db, op: impl Fn(&relis::Reader<'_>, usize) -> relis::Result<()>) -> f64 {
    let t = Instant::now();
    for i in 0..OPS {
        db.read_here(|r| op(r, i))
            .expect("file database")
            .expect("read connection")
            .expect("read");
    }
    OPS as f64 / t.elapsed().as_secs_f64()
}

/// Lets the checkpointer fold the build's WAL into the database before timing starts.
fn settle() {
    std::thread::sleep(std::time::Duration::from_secs(2));
}

/// The best of three runs of `f` (the machine may be busy with other work).
fn best(mut f: impl FnMut() -> f64) -> f64 {
    (0..3).map(|_| f()).fold(0.0, f64::max)
}

fn record(rows: &mut Vec<(String, f64, f64)>, size: u64, label: &str, rate: f64) {
    eprintln!("{label} at {size}: {rate:.0} ops/s");
    match rows.iter_mut().find(|r| r.0 == label) {
        Some(row) => row.2 = rate,
        None => rows.push((label.to_string(), rate, 0.0)),
    }
}
