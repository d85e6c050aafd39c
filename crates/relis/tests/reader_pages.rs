//! Readers keep the pages no commit has changed (`pagelog.rs`): their reads stay exact, in one
//! snapshot and up to date, while a writer commits beside them, the WAL restarts, and another
//! process (here a connection under SQLite's own VFS, which the log does not see) writes too.

use relis::{Db, Options, SetOptions};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

const KEYS: u64 = 400;

fn value(n: u64) -> Vec<u8> {
    // 200 bytes: a few hundred keys over dozens of pages.
    format!("{n:020}").repeat(10).into_bytes()
}

fn number(v: &[u8]) -> u64 {
    std::str::from_utf8(&v[..20]).unwrap().parse().unwrap()
}

/// Commit `n` sets `counter` to n and `k<n % KEYS>` to n, so in any snapshot where the counter
/// is c, key i holds the largest m <= c with m % KEYS == i (0 if none).
fn expected(c: u64, i: u64) -> u64 {
    if c < i || (i == 0 && c < KEYS) {
        return 0;
    }
    c - (c - i) % KEYS
}

fn check(r: &mut relis::Reader<'_>) -> u64 {
    let c = number(&r.get(0, b"counter").unwrap().unwrap());
    for i in 0..KEYS {
        let v = number(&r.get(0, format!("k{i}").as_bytes()).unwrap().unwrap());
        assert_eq!(v, expected(c, i), "key k{i} at counter {c}");
    }
    c
}

fn commit(db: &Db, n: u64) {
    db.write(move |w| {
        w.set(0, b"counter", &value(n), SetOptions::default())?;
        w.set(
            0,
            format!("k{}", n % KEYS).as_bytes(),
            &value(n),
            SetOptions::default(),
        )?;
        Ok(())
    })
    .unwrap();
}

#[test]
fn readers_see_every_commit_while_keeping_their_pages() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open_with(Options {
        readers: 2,
        // Restarts of the WAL along the way.
        wal_restart_frames: 64,
        ..Options::file(dir.path().join("t.db"))
    })
    .unwrap();
    db.write(|w| {
        w.set(0, b"counter", &value(0), SetOptions::default())?;
        for i in 0..KEYS {
            w.set(
                0,
                format!("k{i}").as_bytes(),
                &value(0),
                SetOptions::default(),
            )?;
        }
        Ok(())
    })
    .unwrap();
    let kept_before = relis::page_cache_kept();
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    // Reads on the reader threads, and on threads of their own, all the time.
    let readers: Vec<_> = (0..3)
        .map(|t| {
            let (db, stop, done) = (db.clone(), stop.clone(), done.clone());
            std::thread::spawn(move || {
                let mut reads = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let floor = done.load(Ordering::Acquire);
                    let seen = if t == 0 {
                        let (tx, rx) = std::sync::mpsc::channel();
                        db.read_async(check, move |c| tx.send(c.unwrap()).unwrap());
                        rx.recv().unwrap()
                    } else {
                        db.read_here(check).unwrap().unwrap()
                    };
                    // Up to date: every commit answered before the read began is in it.
                    assert!(
                        seen >= floor,
                        "read {seen} after commit {floor} was answered"
                    );
                    reads += 1;
                }
                relis::release_thread_snapshots();
                reads
            })
        })
        .collect();
    for n in 1..=1500 {
        commit(&db, n);
        done.store(n, Ordering::Release);
        if n % 100 == 0 {
            assert_eq!(db.read_here(check).unwrap().unwrap(), n);
        }
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        assert!(r.join().unwrap() > 0);
    }
    assert!(
        relis::page_cache_kept() > kept_before,
        "no reader kept its pages"
    );
}

#[test]
fn a_write_the_log_does_not_see_empties_the_readers_caches() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let db = Db::open_with(Options {
        readers: 1,
        ..Options::file(&path)
    })
    .unwrap();
    // What this thread's reader and a reader thread read. (This thread's keeps its snapshot
    // until the engine's own writer commits: `Db::read_here`.)
    let get = |db: &Db| {
        let here = db.read_here(|r| r.get(0, b"a").unwrap()).unwrap().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        db.read_async(
            |r| r.get(0, b"a").unwrap(),
            move |v| tx.send(v.unwrap()).unwrap(),
        );
        let there = rx.recv().unwrap();
        (here.unwrap().to_vec(), there.unwrap().to_vec())
    };
    let both = |v: &[u8]| (v.to_vec(), v.to_vec());
    db.set("a", "1").unwrap();
    for i in 0..50 {
        db.set(format!("pad{i}"), "x".repeat(300)).unwrap();
    }
    assert_eq!(get(&db), both(b"1"));
    db.set("b", "1").unwrap();
    assert_eq!(get(&db), both(b"1"));
    // Another writer, through SQLite's own VFS: no frame of it reaches the log.
    let other = rusqlite::Connection::open_with_flags_and_vfs(
        &path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE,
        c"unix",
    )
    .unwrap();
    other
        .busy_timeout(std::time::Duration::from_secs(10))
        .unwrap();
    let changed = other
        .execute(
            "UPDATE relis_keys SET value = X'32' WHERE db = 0 AND key = CAST('a' AS BLOB)",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
    assert_eq!(get(&db).1, b"2");
    // Then the process's own writer commits, and the other writes again.
    // (A key on another page than `a`'s: nothing of its own drops that page.)
    db.set("zzz1", "1").unwrap();
    assert_eq!(get(&db), both(b"2"));
    other
        .execute(
            "UPDATE relis_keys SET value = X'33' WHERE db = 0 AND key = CAST('a' AS BLOB)",
            [],
        )
        .unwrap();
    assert_eq!(get(&db).1, b"3");
    db.set("zzz2", "1").unwrap();
    assert_eq!(get(&db), both(b"3"));
    drop(other);
}
