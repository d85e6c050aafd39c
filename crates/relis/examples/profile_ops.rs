//! A driver for instruction-count profiles of one command's engine work, without the network:
//! it opens a file database, prepares the key the command works on, then runs `groups` write
//! groups of `batch` commands each (one transaction per group, as the writer's group commit
//! does under `redis-benchmark -c 50`).
//!
//! ```text
//! cargo build --release -p relis --example profile_ops
//! valgrind --tool=callgrind target/release/examples/profile_ops <op> <groups> <batch>
//! callgrind_annotate --inclusive=yes callgrind.out.<pid> | head -60
//! ```
//!
//! Ops: `setbit-small` (random bits of a 1 KB bitmap), `setbit-big` (of a 16 MB one),
//! `pfadd-dense` (random elements into one dense HLL), `pfadd-sparse` (one element into each of
//! many HLLs, random keys), `pfcount-dense` (PFCOUNT of the dense HLL, its estimate cached),
//! `set` (random keys, 3-byte values, for comparison). Differences of
//! two runs' totals with different `groups` give the cost per command; the inclusive figures
//! of `Writer::setbit`, `Writer::pfadd` and SQLite's commit split it.

use bytes::Bytes;
use relis::{Db, Durability, Options};
use std::time::Duration;

/// A deterministic pseudo-random sequence (xorshift64*), so two runs do the same work.
struct Rand(u64);

impl Rand {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, op, groups, batch] = &args[..] else {
        eprintln!("usage: profile_ops <setbit-small|setbit-big|pfadd-dense|pfcount-dense|pfadd-sparse|set> <groups> <batch>");
        std::process::exit(2);
    };
    let (groups, batch): (u64, u64) = match (groups.parse(), batch.parse()) {
        (Ok(g), Ok(b)) => (g, b),
        _ => {
            eprintln!("groups and batch are numbers");
            std::process::exit(2);
        }
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open_with(Options {
        path: Some(dir.path().join("profile.db")),
        durability: Durability::Normal,
        writer_spin: Duration::ZERO,
        ..Options::default()
    })
    .expect("open");
    let bits: u64 = match op.as_str() {
        "setbit-small" => 8 * 1024,
        _ => 8 * 16 * 1024 * 1024,
    };
    match op.as_str() {
        "setbit-small" | "setbit-big" => {
            db.write(move |w| w.setbit(0, b"bits", bits - 1, true).map(|_| ()))
                .expect("setbit");
            // Touch every chunk a few times first, as the benchmark's first round does: the
            // profile is of the steady state, not of the chunks' first growth.
            // On the writer thread, as the measured groups: `Db::write` may run a job on the
            // calling thread instead, which would move work between the two threads' profiles
            // from run to run.
            let mut warm = Rand(7);
            for _ in 0..(bits / 8 / 1984 * 6).div_ceil(1000) {
                let draws: Vec<u64> = (0..1000).map(|_| warm.next() % bits).collect();
                let (tx, rx) = std::sync::mpsc::channel();
                db.write_async(
                    move |w| -> relis::Result<()> {
                        for r in draws {
                            w.setbit(0, b"bits", r, true)?;
                        }
                        Ok(())
                    },
                    move |r| tx.send(r.and_then(|r| r)).expect("answer"),
                );
                rx.recv().expect("answer").expect("warm");
            }
        }
        "pfadd-dense" | "pfcount-dense" => {
            // Enough distinct elements to pass the sparse limit: the HLL is dense from here on.
            let elements: Vec<Bytes> = (0..20_000).map(|i| Bytes::from(format!("e{i}"))).collect();
            db.write(move |w| w.pfadd(0, b"hll", &elements, 3000).map(|_| ()))
                .expect("pfadd");
            // PFCOUNT finds the estimate cached from here on.
            db.pfcount(&["hll"]).expect("pfcount");
        }
        "pfadd-sparse" | "set" => {}
        other => {
            eprintln!("unknown op {other}");
            std::process::exit(2);
        }
    }
    let mut rng = Rand(0x9e37_79b9_7f4a_7c15);
    for _ in 0..groups {
        let draws: Vec<u64> = (0..batch).map(|_| rng.next()).collect();
        let op = op.clone();
        // As the server runs these commands: no savepoint (SETBIT's errors all come before its
        // first write; PFADD keeps what it wrote), one transaction for the group.
        let (tx, rx) = std::sync::mpsc::channel();
        db.write_async(
            move |w| -> relis::Result<()> {
                for r in draws {
                    match op.as_str() {
                        "setbit-small" | "setbit-big" => {
                            w.setbit(0, b"bits", r % bits, true)?;
                        }
                        "pfadd-dense" => {
                            let e = [Bytes::from(format!("ele:{}", r % 1_000_000))];
                            w.pfadd(0, b"hll", &e, 3000)?;
                        }
                        "pfcount-dense" => {
                            w.pfcount(0, b"hll", &mut |_, _| {})?;
                        }
                        "pfadd-sparse" => {
                            let key = format!("hll:{}", r % 100_000);
                            let e = [Bytes::from(format!("ele:{}", (r >> 20) % 1_000_000))];
                            w.pfadd(0, key.as_bytes(), &e, 3000)?;
                        }
                        _ => {
                            let key = format!("key:{}", r % 100_000);
                            w.set(0, key.as_bytes(), b"xxx", relis::SetOptions::default())?;
                        }
                    }
                }
                Ok(())
            },
            move |r| tx.send(r.and_then(|r| r)).expect("answer"),
        );
        rx.recv().expect("answer").expect("group");
    }
}
