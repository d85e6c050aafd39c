//! Raw SQLite's insert rate, the baseline `bench/sql.sh` measures SQL.RUN against: the same
//! bundled SQLite, the same file settings as Relis's writer (WAL, `synchronous=NORMAL`) with a
//! 128 MiB page cache (the writer's before `writer-cache-size`, 32 MiB by default, kept here so
//! the baseline stays comparable), no server, no protocol.
//!
//! ```text
//! cargo run --release -p relis --example raw_sqlite_inserts -- <file> <int3|blob> <rows> <bytes> <batch>
//! ```
//!
//! `int3` inserts three random integers per row into `t(a, b, c)`; `blob` inserts one value of
//! `<bytes>` bytes per row into `b(v BLOB)`. Rows are committed `<batch>` to a transaction (a
//! group commit of that size); prints `rows/s MB/s`.

use rusqlite::Connection;
use std::time::Instant;

fn main() -> rusqlite::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: raw_sqlite_inserts <file> <int3|blob> <rows> <bytes> <batch>";
    let [_, path, kind, rows, bytes, batch] = &args[..] else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let (rows, bytes, batch): (usize, usize, usize) =
        match (rows.parse(), bytes.parse(), batch.parse()) {
            (Ok(r), Ok(b), Ok(n)) if n > 0 => (r, b, n),
            _ => {
                eprintln!("{usage}");
                std::process::exit(2);
            }
        };
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{path}{suffix}"));
    }
    let conn = Connection::open(path)?;
    conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "cache_size", -131072)?;
    conn.execute_batch(
        "CREATE TABLE t(a INTEGER, b INTEGER, c INTEGER);
         CREATE TABLE b(v BLOB);",
    )?;
    let value = vec![b'x'; bytes];
    let blob = kind == "blob";
    let sql = if blob {
        "INSERT INTO b(v) VALUES (?1)"
    } else {
        "INSERT INTO t(a, b, c) VALUES (?1, ?2, ?3)"
    };
    let started = Instant::now();
    let mut done = 0;
    while done < rows {
        let tx = conn.unchecked_transaction()?;
        {
            let mut st = tx.prepare_cached(sql)?;
            for i in done..(done + batch).min(rows) {
                if blob {
                    st.execute([&value[..]])?;
                } else {
                    let n = i as i64;
                    st.execute([n, n.wrapping_mul(31), n ^ 0x5555])?;
                }
            }
        }
        tx.commit()?;
        done = (done + batch).min(rows);
    }
    let secs = started.elapsed().as_secs_f64();
    let per_row = if blob { bytes } else { 24 };
    println!(
        "{:.0} {:.1}",
        rows as f64 / secs,
        (rows * per_row) as f64 / secs / 1e6
    );
    Ok(())
}
