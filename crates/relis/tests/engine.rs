//! The engine through its embedded API: group commit, savepoint isolation, expiry on an injected
//! clock, persistence across reopen, refusal of foreign files.

use relis::{Clock, Db, Error, Expiry, ManualClock, Options, SetCond, SetOptions, Ttl};
use std::sync::Arc;

fn with_clock(path: Option<std::path::PathBuf>) -> (Db, ManualClock) {
    let clock = ManualClock::new(1_700_000_000_000);
    let db = Db::open_with(Options {
        path,
        clock: Arc::new(clock.clone()),
        ..Options::default()
    })
    .expect("open");
    (db, clock)
}

#[test]
fn concurrent_writers_are_all_committed() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("t.db")).unwrap();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                for i in 0..200 {
                    db.set(format!("k{t}:{i}"), format!("{i}")).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(db.dbsize().unwrap(), 1600);
    let s = db.stats();
    let commits = s.commits.load(std::sync::atomic::Ordering::Relaxed);
    assert!(commits <= 1600, "writes were grouped: {commits} commits");
    drop(db);
    let db = Db::open(dir.path().join("t.db")).unwrap();
    assert_eq!(db.get("k7:199").unwrap().as_deref(), Some(&b"199"[..]));
    assert_eq!(db.dbsize().unwrap(), 1600);
}

#[test]
fn a_failing_job_rolls_back_alone() {
    let db = Db::open_in_memory().unwrap();
    db.set("keep", "1").unwrap();
    let r: Result<(), Error> = db.write(|w| {
        w.set(0, b"half", b"written", SetOptions::default())?;
        Err(Error::WrongType)
    });
    assert_eq!(r, Err(Error::WrongType));
    assert_eq!(db.get("half").unwrap(), None, "its write was rolled back");
    db.set("after", "2").unwrap();
    assert_eq!(db.get("keep").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get("after").unwrap().as_deref(), Some(&b"2"[..]));
}

#[test]
fn expiry_follows_the_injected_clock() {
    let dir = tempfile::tempdir().unwrap();
    let (db, clock) = with_clock(Some(dir.path().join("e.db")));
    db.set_with(
        "temp",
        "v",
        SetOptions {
            expiry: Expiry::In(1_000),
            ..SetOptions::default()
        },
    )
    .unwrap();
    assert_eq!(db.ttl("temp").unwrap(), Ttl::At(clock.now_ms() + 1_000));
    clock.advance(999);
    assert!(
        db.get("temp").unwrap().is_some(),
        "alive 1 ms before expiry"
    );
    clock.advance(1);
    assert_eq!(db.get("temp").unwrap(), None, "gone at its expiry");
    assert_eq!(db.exists(&["temp"]).unwrap(), 0);
    assert_eq!(
        db.dbsize().unwrap(),
        1,
        "DBSIZE counts it until the sweep, as Redis"
    );
    assert_eq!(db.sweep_expired(100).unwrap(), 1);
    assert_eq!(db.dbsize().unwrap(), 0);

    // A write to an expired key starts from empty: INCR sees 0, not the old value.
    db.set_with(
        "n",
        "41",
        SetOptions {
            expiry: Expiry::In(10),
            ..SetOptions::default()
        },
    )
    .unwrap();
    clock.advance(10);
    assert_eq!(db.incr_by("n", 1).unwrap(), 1);
    assert_eq!(db.ttl("n").unwrap(), Ttl::Persistent);
    // NX sees an expired key as absent.
    db.set_with(
        "nx",
        "old",
        SetOptions {
            expiry: Expiry::In(5),
            ..SetOptions::default()
        },
    )
    .unwrap();
    clock.advance(5);
    let out = db
        .set_with(
            "nx",
            "new",
            SetOptions {
                cond: SetCond::IfAbsent,
                get: true,
                ..SetOptions::default()
            },
        )
        .unwrap();
    assert!(out.written);
    assert_eq!(out.old, None);
}

#[test]
fn keepttl_on_an_expired_key_does_not_resurrect_its_ttl() {
    let (db, clock) = with_clock(None);
    db.set_with(
        "k",
        "v",
        SetOptions {
            expiry: Expiry::In(5),
            ..SetOptions::default()
        },
    )
    .unwrap();
    clock.advance(6);
    db.set_with(
        "k",
        "v2",
        SetOptions {
            expiry: Expiry::Keep,
            ..SetOptions::default()
        },
    )
    .unwrap();
    assert_eq!(db.ttl("k").unwrap(), Ttl::Persistent);
    assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"v2"[..]));
}

#[test]
fn refuses_a_file_that_is_not_relis() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
            .unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    match Db::open(&path) {
        Err(Error::NotRelis(m)) => assert!(m.contains("other.db"), "{m}"),
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("opened a foreign file"),
    }
    assert_eq!(std::fs::read(&path).unwrap(), before, "file untouched");
}

#[test]
fn incrbyfloat_matches_redis_formatting() {
    let db = Db::open_in_memory().unwrap();
    db.set("f", "10.50").unwrap();
    let w = |key: &'static str, by: &'static str| {
        db.write(move |w| w.incr_by_float(0, key.as_bytes(), by.as_bytes()))
            .unwrap()
    };
    assert_eq!(&w("f", "0.1")[..], b"10.6");
    assert_eq!(&w("f", "-5")[..], b"5.6");
    db.set("g", "5.0e3").unwrap();
    assert_eq!(&w("g", "2.0e2")[..], b"5200");
    assert_eq!(&w("new", "3")[..], b"3");
    assert_eq!(
        db.write(|w| w.incr_by_float(0, b"f", b"abc")),
        Err(Error::NotFloat)
    );
    assert_eq!(
        db.write(|w| w.incr_by_float(0, b"f", b"inf")),
        Err(Error::NanOrInfinity)
    );
    db.set("s", "not a number").unwrap();
    assert_eq!(
        db.write(|w| w.incr_by_float(0, b"s", b"1")),
        Err(Error::NotFloat)
    );
}

#[test]
fn lcs_matches_redis_example() {
    let l = relis::lcs(b"ohmytext", b"mynewtext");
    assert_eq!(&l.common[..], b"mytext");
    assert_eq!(l.matches, vec![((4, 7), (5, 8)), ((2, 3), (0, 1))]);
    assert_eq!(relis::lcs(b"", b"abc").common.len(), 0);
}

#[test]
fn integers_parse_like_string2ll() {
    for ok in [
        "0",
        "-1",
        "9223372036854775807",
        "-9223372036854775808",
        "42",
    ] {
        assert!(relis::parse_i64(ok.as_bytes()).is_some(), "{ok}");
    }
    for bad in [
        "",
        "+1",
        "01",
        "-0",
        " 1",
        "1 ",
        "9223372036854775808",
        "1.0",
        "abc",
        "-",
    ] {
        assert!(relis::parse_i64(bad.as_bytes()).is_none(), "{bad}");
    }
}

#[test]
fn embedded_key_api() {
    let db = Db::open_in_memory().unwrap();
    for i in 0..25 {
        db.set(format!("user:{i:02}"), format!("{i}")).unwrap();
    }
    db.set("other", "x").unwrap();
    // SCAN pages through every key exactly once.
    let mut seen = Vec::new();
    let mut after: Option<relis::Bytes> = None;
    loop {
        let page = db.scan(after.as_deref(), 7, Some(b"user:*"), None).unwrap();
        seen.extend(page.keys);
        match page.next {
            Some(n) => after = Some(n),
            None => break,
        }
    }
    assert_eq!(seen.len(), 25);
    assert!(db.randomkey().unwrap().is_some());

    assert_eq!(db.getset("other", "y").unwrap().as_deref(), Some(&b"x"[..]));
    assert!(db.renamenx("other", "fresh").unwrap());
    assert!(
        !db.renamenx("fresh", "user:01").unwrap(),
        "destination exists"
    );
    assert!(db.copy("fresh", 1, "copied", false).unwrap());
    assert!(db.move_to("fresh", 2).unwrap());
    assert_eq!(
        db.select(1).unwrap().get("copied").unwrap().as_deref(),
        Some(&b"y"[..])
    );
    assert_eq!(
        db.select(2).unwrap().get("fresh").unwrap().as_deref(),
        Some(&b"y"[..])
    );
    assert_eq!(
        db.copy("user:01", 0, "user:01", false),
        Err(Error::SameObject)
    );
    db.swapdb(0, 2).unwrap();
    assert_eq!(db.get("fresh").unwrap().as_deref(), Some(&b"y"[..]));
    assert_eq!(db.object("fresh").unwrap().unwrap().encoding, "embstr");

    db.set("a", "ohmytext").unwrap();
    db.set("b", "mynewtext").unwrap();
    assert_eq!(&db.lcs("a", "b").unwrap().common[..], b"mytext");
    db.flushall().unwrap();
    assert_eq!(db.dbsize().unwrap(), 0);
    assert_eq!(db.select(1).unwrap().dbsize().unwrap(), 0);
}

#[test]
fn a_storage_failure_fails_the_whole_group_commit() {
    let db = Db::open_in_memory().unwrap();
    // A job that skipped its savepoint and hit a storage error poisons the transaction: nothing
    // of it is committed and it is answered with the error.
    let r: Result<(), Error> = db.write(|w| {
        w.set(0, b"half", b"done", relis::SetOptions::default())?;
        w.poison(Error::Storage("simulated I/O error".into()));
        Ok(())
    });
    assert_eq!(r, Err(Error::Storage("simulated I/O error".into())));
    assert_eq!(db.get("half").unwrap(), None);
    // The writer goes on.
    db.set("after", "ok").unwrap();
    assert_eq!(db.get("after").unwrap().as_deref(), Some(&b"ok"[..]));
}

/// A thread keeps its read transaction from one read to the next while nothing commits; a
/// commit makes its next read start a new one.
#[test]
fn held_read_snapshots_see_every_commit() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("t.db")).unwrap();
    let get = |key: &[u8]| db.read_here(|r| r.get(0, key)).unwrap().unwrap().unwrap();
    assert_eq!(get(b"k"), None);
    for i in 0..20 {
        // Written and committed on the writer thread; this thread's held transaction must not
        // hide it from the next read.
        db.set("k", i.to_string()).unwrap();
        assert_eq!(get(b"k").as_deref(), Some(i.to_string().as_bytes()));
        assert_eq!(
            db.get("k").unwrap().as_deref(),
            Some(i.to_string().as_bytes())
        );
    }
    relis::release_thread_snapshots();
    db.set("k", "last").unwrap();
    assert_eq!(get(b"k").as_deref(), Some(&b"last"[..]));
    relis::release_thread_snapshots();
}

/// Another thread's write, committed before a read begins, is seen by that read, whatever
/// snapshot the reading thread held before (and while the writer ends idle threads' snapshots
/// under it).
#[test]
fn a_held_snapshot_never_hides_a_write_committed_before_a_read_began() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("t.db")).unwrap();
    db.set("k", "0").unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<u64>();
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || {
            for i in 1..=400u64 {
                db.set("k", i.to_string()).unwrap();
                tx.send(i).unwrap();
                if i % 100 == 0 {
                    // Past a tick of the writer's: it ends the reader's idle snapshot.
                    std::thread::sleep(std::time::Duration::from_millis(120));
                }
            }
        })
    };
    let read = |db: &Db| -> u64 {
        let v = db.read_here(|r| r.get(0, b"k")).unwrap().unwrap().unwrap();
        std::str::from_utf8(&v.unwrap()).unwrap().parse().unwrap()
    };
    let mut last = 0;
    for committed in rx {
        // Reads while the writer goes on: each holds the snapshot of the one before, or begins
        // a new one, and none goes back in time.
        for _ in 0..3 {
            let seen = read(&db);
            assert!(seen >= last, "read {seen} after {last}");
            last = seen;
        }
        let seen = read(&db);
        assert!(seen >= committed, "committed {committed}, read {seen}");
        let via_get: u64 = std::str::from_utf8(&db.get("k").unwrap().unwrap())
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            via_get >= committed,
            "committed {committed}, Db::get read {via_get}"
        );
    }
    writer.join().unwrap();
}

/// A checkpoint that must reach the WAL's end (`PRAGMA wal_checkpoint(TRUNCATE)`, from any
/// connection) is not kept waiting for long by a thread that read and went idle holding its
/// snapshot: the writer ends it within about one of its 100 ms ticks.
#[test]
fn an_idle_threads_snapshot_does_not_pin_the_wal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let db = Db::open(&path).unwrap();
    db.set("k", "before").unwrap();
    let (read_tx, read_rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let idle = {
        let db = db.clone();
        std::thread::spawn(move || {
            let v = db.read_here(|r| r.get(0, b"k")).unwrap().unwrap().unwrap();
            read_tx.send(v).unwrap();
            // Idle, its snapshot held, until the test is over.
            let _ = done_rx.recv();
        })
    };
    assert_eq!(read_rx.recv().unwrap().as_deref(), Some(&b"before"[..]));
    // A commit after the idle thread's snapshot began: the WAL has frames it may still need.
    db.set("k", "after").unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.busy_timeout(std::time::Duration::from_millis(100))
        .unwrap();
    let started = std::time::Instant::now();
    let mut truncated = false;
    // About a tick; more for a loaded machine (without the writer's help it never ends).
    while started.elapsed() < std::time::Duration::from_secs(5) {
        // (busy, WAL frames, frames checkpointed): busy while a reader still needs the WAL.
        let busy: i64 = conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))
            .unwrap();
        if busy == 0 {
            truncated = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let took = started.elapsed();
    done_tx.send(()).unwrap();
    idle.join().unwrap();
    assert!(truncated, "the WAL was still pinned after {took:?}");
    assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"after"[..]));
}

/// Closing the engine folds the WAL back into the file even while another thread, idle, holds
/// the snapshot of its last read.
#[test]
fn closing_folds_the_wal_back_despite_an_idle_readers_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    // Closed right after the read: before the writer's next tick would end the snapshot.
    let db = Db::open(&path).unwrap();
    let (read_tx, read_rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let idle = {
        let db = db.clone();
        std::thread::spawn(move || {
            db.set("k", "v").unwrap();
            db.read_here(|r| r.get(0, b"k")).unwrap().unwrap().unwrap();
            drop(db);
            read_tx.send(()).unwrap();
            let _ = done_rx.recv();
        })
    };
    read_rx.recv().unwrap();
    let started = std::time::Instant::now();
    drop(db);
    let took = started.elapsed();
    let wal = std::fs::metadata(dir.path().join("t.db-wal")).map_or(0, |m| m.len());
    done_tx.send(()).unwrap();
    idle.join().unwrap();
    assert_eq!(wal, 0, "the WAL kept {wal} bytes");
    assert!(
        took < std::time::Duration::from_secs(5),
        "closing took {took:?}"
    );
}

/// 300 commits of eight 3,000-byte values over 400 keys, `pause` apart; returns the largest
/// the WAL file at `wal` was after one, and how many times it restarted meanwhile (its header's
/// first salt, bytes 16-20, changes at each restart; a checkpoint alone leaves it).
fn steady_writes(db: &Db, wal: &std::path::Path, pause: std::time::Duration) -> (u64, u32) {
    let salt = || {
        std::fs::read(wal)
            .ok()
            .and_then(|h| h.get(16..20).map(<[u8]>::to_vec))
    };
    let value = vec![b'v'; 3000];
    let (mut largest, mut restarts, mut last) = (0, 0, salt());
    for round in 0..300 {
        let value = value.clone();
        db.write(move |w| {
            for i in 0..8 {
                let key = format!("w{i}:{}", round % 50);
                w.set(0, key.as_bytes(), &value, SetOptions::default())?;
            }
            Ok(())
        })
        .unwrap();
        largest = largest.max(std::fs::metadata(wal).map_or(0, |m| m.len()));
        let now = salt();
        restarts += u32::from(now != last);
        last = now;
        std::thread::sleep(pause);
    }
    (largest, restarts)
}

#[test]
fn the_wal_stays_bounded_under_a_steady_write_load() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let db = Db::open_with(Options {
        wal_restart_frames: 64,
        ..Options::file(&path)
    })
    .unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // A reader that holds its snapshots and never goes idle, beside a writer that never pauses.
    let reader = {
        let (db, stop) = (db.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut reads = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                db.read_here(|r| r.get(0, b"w0:1"))
                    .unwrap()
                    .unwrap()
                    .unwrap();
                reads += 1;
                // A busy client's reads, not a spin: the WAL restarts in the gaps between them.
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            relis::release_thread_snapshots();
            reads
        })
    };
    let (largest, restarts) =
        steady_writes(&db, &dir.path().join("t.db-wal"), std::time::Duration::ZERO);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0);
    // ~300 commits of 8 pages or more (~12 MB of frames): without restarts the WAL would hold
    // them all; it restarts once past 64 frames (256 KiB): ~40 times on a quiet machine, each
    // a few commits late (the WAL's largest 0.2-0.5 MB). How late depends on when the
    // checkpointer gets a CPU (4.5 MB seen with other tests busy on both cores), so the bounds
    // leave room for a loaded machine.
    assert!(restarts >= 10, "the WAL restarted {restarts} times");
    assert!(largest < 8 << 20, "the WAL grew to {largest} bytes");
}

/// A transaction far larger than the WAL's restart limit (a replica's full sync) leaves its
/// frames to the checkpointer, not to the writer's next commits, and the WAL still restarts
/// under the writes that follow.
#[test]
fn the_wal_restarts_after_a_transaction_far_past_its_limit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let wal_path = dir.path().join("t.db-wal");
    let db = Db::open_with(Options {
        wal_restart_frames: 64,
        ..Options::file(&path)
    })
    .unwrap();
    let value = vec![b'v'; 3000];
    {
        let value = value.clone();
        db.write(move |w| {
            for i in 0..4000 {
                w.set(
                    0,
                    format!("big:{i}").as_bytes(),
                    &value,
                    SetOptions::default(),
                )?;
            }
            Ok(())
        })
        .unwrap();
    }
    let big = std::fs::metadata(&wal_path).unwrap().len();
    assert!(
        big > 8 << 20,
        "the large transaction wrote {big} bytes of WAL"
    );
    let (largest, restarts) = steady_writes(&db, &wal_path, std::time::Duration::from_millis(2));
    // ~300 commits of 8 pages or more (~12 MB of frames) after the large one: they went to the
    // WAL's start once the checkpointer had copied the backlog and the writer the rest, and
    // the WAL restarted again and again under them (bounds as in the test above).
    assert!(restarts >= 10, "the WAL restarted {restarts} times");
    assert!(
        largest < big + (8 << 20),
        "the WAL grew from {big} to {largest} bytes"
    );
    assert_eq!(db.get("big:3999").unwrap().as_deref(), Some(&value[..]));
}

/// INFO's expired_keys counts the keys a write finds expired (lazy expiry), as Redis counts
/// them, besides those the sweep deletes. (A plain SET over an expired string does not look
/// first, unless someone listens for keyspace events, so it replaces the key uncounted.)
#[test]
fn lazily_expired_keys_are_counted() {
    let (db, _clock) = with_clock(None);
    let before = db
        .stats()
        .expired_keys
        .load(std::sync::atomic::Ordering::Relaxed);
    db.write(|w| {
        // A key whose time is already past, then a write that finds it: one job, so the
        // background sweep cannot take the key in between.
        let past = SetOptions {
            expiry: Expiry::At(1),
            ..SetOptions::default()
        };
        w.set(0, b"k", b"5", past)?;
        w.incr_by(0, b"k", 1)?;
        Ok(())
    })
    .unwrap();
    let after = db
        .stats()
        .expired_keys
        .load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(after - before, 1);
    // INCR started from an empty key, not from the expired value.
    assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"1"[..]));
}

/// The version counter is stored a lease ahead of what it hands out: across restarts, values
/// stay unique (a key created after a restart gets an id of its own) and increasing (a hash's
/// fields keep their insertion order, which the counter gives them).
#[test]
fn versions_stay_unique_and_increasing_across_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let mut fields = Vec::new();
    for round in 0..4 {
        let db = Db::open(&path).unwrap();
        let f = format!("f{round}");
        db.hset("h", &[(f.as_str(), "v")]).unwrap();
        db.hset(format!("k{round}"), &[("only", "x")]).unwrap();
        fields.push(f);
        let got: Vec<String> = db
            .hkeys("h")
            .unwrap()
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect();
        assert_eq!(got, fields, "round {round}");
        for k in 0..=round {
            assert_eq!(db.hgetall(format!("k{k}")).unwrap().len(), 1, "k{k}");
        }
    }
}

#[test]
fn a_schema_4_file_with_rank_rows_is_migrated() {
    // A sorted set past the rank threshold (1024 members: about 12 blocks of 256), written by
    // this build, then its rank rows put back in schema 4's WITHOUT ROWID table.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let db = Db::open(&path).unwrap();
    let members: Vec<String> = (0..3000).map(|i| format!("m{i:05}")).collect();
    let pairs: Vec<(f64, &[u8])> = members
        .iter()
        .enumerate()
        .map(|(i, m)| (((i * 7919) % 3000) as f64, m.as_bytes()))
        .collect();
    db.zadd("z", &pairs).unwrap();
    let ranks = |db: &Db| -> Vec<Option<i64>> {
        ["m00000", "m01234", "m02999", "nope"]
            .iter()
            .map(|m| db.zrank("z", m, false).unwrap())
            .collect()
    };
    let before = ranks(&db);
    drop(db);
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        let rows: i64 = conn
            .query_row("SELECT count(*) FROM relis_zrank", [], |r| r.get(0))
            .unwrap();
        assert!(rows > 10, "the set has rank rows ({rows})");
        conn.execute_batch(
            "BEGIN;
             DROP VIEW redis_strings; CREATE VIEW redis_strings AS SELECT 1 AS value;
             DROP TABLE relis_chunks;
             CREATE TABLE old (
                 kid INTEGER NOT NULL, lvl INTEGER NOT NULL, score REAL NOT NULL,
                 member BLOB NOT NULL, n INTEGER NOT NULL,
                 PRIMARY KEY (kid, lvl, score, member)
             ) STRICT, WITHOUT ROWID;
             INSERT INTO old SELECT kid, lvl, score, member, n FROM relis_zrank;
             DROP TABLE relis_zrank;
             ALTER TABLE old RENAME TO relis_zrank;
             DROP VIEW redis_streams; DROP TABLE relis_stream; DROP TABLE relis_stream_group;
             DROP TABLE relis_stream_consumer; DROP TABLE relis_stream_pel;
             DROP TABLE relis_replication;
             DROP TABLE relis_key_counts;
             PRAGMA user_version = 4;
             COMMIT;",
        )
        .unwrap();
    }
    let db = Db::open(&path).unwrap();
    assert_eq!(ranks(&db), before);
    // The migrated rows are the writer's to update: a write to the set, then the check of its
    // rank rows against its members (and against the writer's copy, by rowid).
    db.zadd("z", &[(-1.0, b"m02999"), (5000.0, b"new")])
        .unwrap();
    db.write(|w| w.zcheck(0, b"z")).unwrap();
    assert_eq!(db.zrank("z", "m02999", false).unwrap(), Some(0));
    assert_eq!(db.zrank("z", "new", false).unwrap(), Some(3000));
    drop(db);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, relis::SCHEMA_VERSION);
}

/// A schema 7 file (no chunks table) is migrated; a value longer than the chunking threshold
/// that it holds inline still reads whole, through GET and the view, and moves to chunks at
/// its next partial write.
#[test]
fn a_schema_7_file_is_migrated_to_string_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let big: Vec<u8> = (0..200_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let db = Db::open(&path).unwrap();
    db.set("s", "x").unwrap();
    drop(db);
    {
        // Schema version 7: no chunks table, and the redis_strings view of version 6.
        let old = include_str!("../src/backend/sqlite/schema/0006_view_keys.sql");
        let start = old.find("CREATE VIEW redis_strings").unwrap();
        let end = old[start..].find("CREATE VIEW redis_hashes").unwrap();
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(&format!(
            "BEGIN;
             DROP TABLE relis_chunks;
             DROP VIEW redis_strings;
             {}
             DROP TABLE relis_replication;
             DROP TABLE relis_key_counts;
             PRAGMA user_version = 7;
             COMMIT;",
            &old[start..start + end]
        ))
        .unwrap();
        conn.execute(
            "UPDATE relis_keys SET value = ?1 WHERE key = CAST('s' AS BLOB)",
            [&big],
        )
        .unwrap();
    }
    let db = Db::open(&path).unwrap();
    assert_eq!(db.get("s").unwrap().unwrap().to_vec(), big);
    assert_eq!(db.strlen("s").unwrap(), 200_000);
    let view = |db: &Db| {
        db.sql_query("SELECT value FROM redis_strings WHERE key = 's'", ())
            .unwrap()
            .rows
    };
    let text = |v: &[u8]| vec![vec![relis::SqlValue::Text(v.to_vec().into())]];
    assert_eq!(view(&db), text(&big));
    assert_eq!(db.setrange("s", 199_999, "!").unwrap(), 200_000);
    let mut want = big.clone();
    want[199_999] = b'!';
    assert_eq!(db.get("s").unwrap().unwrap().to_vec(), want);
    assert_eq!(view(&db), text(&want));
    assert_eq!(
        db.getrange("s", 199_990, -1).unwrap().to_vec(),
        want[199_990..]
    );
}

#[test]
fn a_schema_5_file_gets_views_that_show_only_readable_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let db = Db::open(&path).unwrap();
    db.set("app:s", "mine").unwrap();
    db.set("secret", "hunter2").unwrap();
    drop(db);
    {
        // Schema version 5's views (those of version 3), unfiltered.
        let old = include_str!("../src/backend/sqlite/schema/0003_views.sql");
        let old = &old[old.find("CREATE VIEW").unwrap()..];
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(&format!(
            "BEGIN;
             DROP VIEW redis_keys; DROP VIEW redis_strings; DROP VIEW redis_hashes;
             DROP VIEW redis_lists; DROP VIEW redis_sets; DROP VIEW redis_zsets;
             {old}
             DROP VIEW redis_streams; DROP TABLE relis_stream; DROP TABLE relis_stream_group;
             DROP TABLE relis_stream_consumer; DROP TABLE relis_stream_pel;
             DROP TABLE relis_chunks;
             DROP TABLE relis_replication;
             DROP TABLE relis_key_counts;
             PRAGMA user_version = 5;
             COMMIT;"
        ))
        .unwrap();
    }
    let db = Db::open(&path).unwrap();
    let only_app: relis::sql::KeyFilter = Arc::new(|k: &[u8]| k.starts_with(b"app:"));
    let access = relis::sql::KeyAccess::new(Some(only_app), None);
    let out = db
        .read(move |r| {
            let mut c = r.sql();
            c.set_access(access);
            Ok(c.query(
                "SELECT key, value FROM redis_strings",
                (),
                &relis::SqlLimits::default(),
            ))
        })
        .unwrap()
        .unwrap();
    assert_eq!(
        out.rows,
        vec![vec![
            relis::SqlValue::text("app:s"),
            relis::SqlValue::text("mine")
        ]]
    );
    assert_eq!(
        db.sql_query("SELECT count(*) FROM redis_strings", ())
            .unwrap()
            .rows,
        vec![vec![relis::SqlValue::Integer(2)]]
    );
    drop(db);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, relis::SCHEMA_VERSION);
}

#[test]
fn a_schema_6_file_is_migrated_to_streams() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let db = Db::open(&path).unwrap();
    db.hset("h", &[("f", "v")]).unwrap();
    drop(db);
    {
        // Schema version 6: no stream table, and its redis_keys view.
        let old = include_str!("../src/backend/sqlite/schema/0006_view_keys.sql");
        let start = old.find("CREATE VIEW redis_keys").unwrap();
        let end = old[start..].find("CREATE VIEW redis_strings").unwrap();
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(&format!(
            "BEGIN;
             DROP VIEW redis_streams; DROP TABLE relis_stream; DROP TABLE relis_stream_group;
             DROP TABLE relis_stream_consumer; DROP TABLE relis_stream_pel;
             DROP VIEW redis_keys;
             {}
             DROP TABLE relis_chunks;
             DROP TABLE relis_replication;
             DROP TABLE relis_key_counts;
             PRAGMA user_version = 6;
             COMMIT;",
            &old[start..start + end]
        ))
        .unwrap();
    }
    let db = Db::open(&path).unwrap();
    let fields = [
        relis::Bytes::from_static(b"f"),
        relis::Bytes::from_static(b"v"),
    ];
    let added = db
        .write(move |w| w.xadd(0, b"s", relis::XAddId::Auto, &fields, false, None))
        .unwrap()
        .unwrap();
    assert!(added.id.ms > 0);
    assert_eq!(db.hgetall("h").unwrap().len(), 1);
    let types = db
        .sql_query("SELECT key, type FROM redis_keys ORDER BY key", ())
        .unwrap()
        .rows;
    assert_eq!(
        types,
        vec![
            vec![relis::SqlValue::text("h"), relis::SqlValue::text("hash")],
            vec![relis::SqlValue::text("s"), relis::SqlValue::text("stream")],
        ]
    );
    drop(db);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, relis::SCHEMA_VERSION);
}

#[test]
fn new_files_get_the_page_size_asked_and_old_ones_keep_theirs() {
    let page_size = |path: &std::path::Path| -> i64 {
        rusqlite::Connection::open(path)
            .unwrap()
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let (small, large) = (dir.path().join("small.db"), dir.path().join("large.db"));
    let db = Db::open(&small).unwrap();
    db.set("k", "v").unwrap();
    drop(db);
    assert_eq!(page_size(&small), i64::from(relis::PAGE_SIZE));
    let db = Db::open_with(Options {
        page_size: 8192,
        ..Options::file(&large)
    })
    .unwrap();
    db.set("k", vec![b'x'; 100_000]).unwrap();
    drop(db);
    assert_eq!(page_size(&large), 8192);
    // Reopened with other options, each file keeps its own page size, and its data.
    let db = Db::open_with(Options {
        page_size: 8192,
        ..Options::file(&small)
    })
    .unwrap();
    assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"v"[..]));
    drop(db);
    assert_eq!(page_size(&small), i64::from(relis::PAGE_SIZE));
    let db = Db::open(&large).unwrap();
    assert_eq!(db.get("k").unwrap().map(|v| v.len()), Some(100_000));
    drop(db);
    assert_eq!(page_size(&large), 8192);
}
