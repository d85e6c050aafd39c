//! Embedded writes run on the caller's thread when the writer is free (`Db::write`): one
//! writer at a time, exact results under concurrency (with the server's queued writes too),
//! events in commit order and out before a write returns, nothing returned before it is in the
//! file, the writer thread's tick duties still done, and a panicking write leaving nothing.

use relis::events::{class, EventSink, KeyEvent};
use relis::{Bytes, Db, Error, Expiry, ManualClock, Options, RankBlocks, SetOptions, ZAddOptions};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

fn open(dir: &std::path::Path) -> Db {
    Db::open(dir.join("t.db")).expect("open")
}

/// An INCR of `key` that also records an event on the value it returns (as its key), so that
/// the events' order is the order the increments committed in.
fn incr_noting(w: &mut relis::Writer<'_>, key: &[u8]) -> Result<i64, Error> {
    let v = w.incr_by(0, key, 1)?;
    w.notify(class::GENERIC, "seq", 0, v.to_string().as_bytes());
    Ok(v)
}

/// Keeps every event published, in publication order.
#[derive(Default)]
struct Recorder(Mutex<Vec<KeyEvent>>);

impl EventSink for Recorder {
    fn wants(&self, class: u32) -> bool {
        class == class::GENERIC
    }
    fn publish(&self, events: Vec<KeyEvent>) {
        self.0.lock().unwrap().extend(events);
    }
}

impl Recorder {
    fn seqs(&self) -> Vec<i64> {
        let events = self.0.lock().unwrap();
        events
            .iter()
            .filter(|e| e.event == "seq")
            .map(|e| std::str::from_utf8(&e.key).unwrap().parse().unwrap())
            .collect()
    }
}

#[test]
fn a_write_runs_on_the_callers_thread_when_the_writer_is_free() {
    let dir = tempfile::tempdir().unwrap();
    for db in [open(dir.path()), Db::open_in_memory().unwrap()] {
        let here = std::thread::current().id();
        // The writer thread holds the core for its tick's sweep every 100 ms, and a write
        // that comes then is queued: most, not all, run here.
        let ran_here = (0..50)
            .filter(|_| db.write(|_| Ok(std::thread::current().id())).unwrap() == here)
            .count();
        assert!(
            ran_here >= 25,
            "{ran_here} of 50 writes ran on the caller's thread"
        );
        // While the writer thread holds a group open, a write joins its queue instead.
        let (hold_tx, hold_rx) = mpsc::channel::<()>();
        let (running_tx, running_rx) = mpsc::channel::<std::thread::ThreadId>();
        db.write_async(
            move |_| {
                running_tx.send(std::thread::current().id()).unwrap();
                hold_rx.recv().unwrap();
            },
            |r| r.unwrap(),
        );
        let writer = running_rx.recv().unwrap();
        assert_ne!(writer, here);
        let waiting = {
            let db = db.clone();
            std::thread::spawn(move || db.write(|_| Ok(std::thread::current().id())).unwrap())
        };
        std::thread::sleep(Duration::from_millis(50));
        hold_tx.send(()).unwrap();
        assert_eq!(waiting.join().unwrap(), writer);
    }
}

#[test]
fn many_threads_writing_embedded_get_exact_results() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let (threads, each) = (8, 300);
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut got = Vec::new();
                for i in 0..each {
                    got.push(db.incr_by("shared", 1).unwrap());
                    db.set(format!("k{t}:{i}"), i.to_string()).unwrap();
                    // Read-modify-write of one key per thread inside one write: no other
                    // writer may come between the read and the write.
                    db.write(move |w| {
                        let n = w.get(0, b"sum")?.map_or(0, |v| {
                            String::from_utf8(v.to_vec()).unwrap().parse().unwrap()
                        });
                        w.set(
                            0,
                            b"sum",
                            (n + i).to_string().as_bytes(),
                            SetOptions::default(),
                        )?;
                        Ok(())
                    })
                    .unwrap();
                }
                got
            })
        })
        .collect();
    let mut seen = BTreeSet::new();
    for w in workers {
        for v in w.join().unwrap() {
            assert!(seen.insert(v), "INCR returned {v} twice");
        }
    }
    let total = (threads * each) as i64;
    assert_eq!(seen, (1..=total).collect::<BTreeSet<_>>());
    let sum: i64 = (0..each as i64).sum::<i64>() * threads as i64;
    drop(db);
    let db = open(dir.path());
    assert_eq!(
        db.get("shared").unwrap().as_deref(),
        Some(total.to_string().as_bytes())
    );
    assert_eq!(
        db.get("sum").unwrap().as_deref(),
        Some(sum.to_string().as_bytes())
    );
    assert_eq!(db.dbsize().unwrap(), total + 2);
    assert_eq!(db.get("k7:299").unwrap().as_deref(), Some(&b"299"[..]));
}

/// A server's writes (`write_async`, many queued at once, grouped by the writer thread) and an
/// embedded caller's writes on the same keys: every increment counted once, every queued write
/// answered, and events published in the order the increments committed.
#[test]
fn embedded_writes_beside_a_server_style_queued_load() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let events = Arc::new(Recorder::default());
    db.set_event_sink(events.clone());
    let queued_n = 4000;
    let (tx, rx) = mpsc::channel();
    let server = {
        let db = db.clone();
        std::thread::spawn(move || {
            for i in 0..queued_n {
                let tx = tx.clone();
                db.write_async(
                    |w| w.atomic(|w| incr_noting(w, b"n")),
                    move |r| tx.send(r.and_then(|r| r)).unwrap(),
                );
                if i % 64 == 0 {
                    // In bursts, as many clients' requests arrive.
                    std::thread::sleep(Duration::from_micros(200));
                }
            }
        })
    };
    let embedded_n = 2000;
    let mut mine = Vec::new();
    for _ in 0..embedded_n {
        let v = db.write(|w| incr_noting(w, b"n")).unwrap();
        // Its event is out before the write returns.
        assert!(events.seqs().contains(&v), "event of {v} not yet published");
        mine.push(v);
    }
    server.join().unwrap();
    let mut all: BTreeSet<i64> = mine.into_iter().collect();
    for _ in 0..queued_n {
        let v = rx.recv_timeout(Duration::from_secs(30)).unwrap().unwrap();
        assert!(all.insert(v), "INCR returned {v} twice");
    }
    let total = queued_n + embedded_n;
    assert_eq!(all, (1..=total).collect::<BTreeSet<_>>());
    assert_eq!(
        db.get("n").unwrap().as_deref(),
        Some(total.to_string().as_bytes())
    );
    // Commit order is the counter's order.
    assert_eq!(events.seqs(), (1..=total).collect::<Vec<_>>());
}

/// Threads writing embedded at once publish their events in commit order, each before its
/// write returns.
#[test]
fn events_of_concurrent_embedded_writes_come_in_commit_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let events = Arc::new(Recorder::default());
    db.set_event_sink(events.clone());
    let workers: Vec<_> = (0..6)
        .map(|_| {
            let (db, events) = (db.clone(), events.clone());
            std::thread::spawn(move || {
                for _ in 0..300 {
                    let v = db.write(|w| incr_noting(w, b"n")).unwrap();
                    assert!(events.seqs().contains(&v), "event of {v} not yet published");
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(events.seqs(), (1..=1800).collect::<Vec<_>>());
}

/// A write straight after opening (the writer thread may not have started) and straight before
/// closing is kept, on a file and in memory.
#[test]
fn a_write_right_after_open_and_before_close_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..40 {
        let db = open(dir.path());
        db.set(format!("first{i}"), "1").unwrap();
        db.set("last", i.to_string()).unwrap();
        drop(db);
    }
    let db = open(dir.path());
    assert_eq!(db.get("last").unwrap().as_deref(), Some(&b"39"[..]));
    assert_eq!(db.dbsize().unwrap(), 41);
    for _ in 0..40 {
        let db = Db::open_in_memory().unwrap();
        assert_eq!(db.incr_by("n", 1).unwrap(), 1);
        assert_eq!(db.get("n").unwrap().as_deref(), Some(&b"1"[..]));
    }
}

/// A write that has returned is in the file: another connection sees it at once, and a process
/// that aborts right after it returns (no clean close, no checkpoint) loses nothing.
#[test]
fn a_returned_write_is_in_the_file() {
    const CHILD: &str = "RELIS_EMBEDDED_WRITES_CHILD";
    if let Ok(path) = std::env::var(CHILD) {
        let db = Db::open(&path).unwrap();
        for i in 0..200 {
            db.set(format!("k{i}"), i.to_string()).unwrap();
        }
        std::process::abort();
    }
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let other = rusqlite::Connection::open(dir.path().join("t.db")).unwrap();
    for i in 0..50 {
        db.set(format!("seen{i}"), "v").unwrap();
        let n: i64 = other
            .query_row(
                "SELECT count(*) FROM relis_keys WHERE key = ?1",
                [format!("seen{i}").into_bytes()],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 1, "write {i} returned before it was committed");
    }
    drop((db, other));
    let path = dir.path().join("aborted.db");
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "a_returned_write_is_in_the_file", "--nocapture"])
        .env(CHILD, &path)
        .stderr(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(!status.success(), "the child aborts");
    let db = Db::open(&path).unwrap();
    assert_eq!(db.dbsize().unwrap(), 200);
    assert_eq!(db.get("k199").unwrap().as_deref(), Some(&b"199"[..]));
}

/// A write whose closure panics on the caller's thread: the panic reaches the caller, nothing
/// it wrote or recorded is kept, and the engine goes on writing (on both paths).
#[test]
fn a_panicking_write_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    for db in [open(dir.path()), Db::open_in_memory().unwrap()] {
        let events = Arc::new(Recorder::default());
        db.set_event_sink(events.clone());
        let here = std::thread::current().id();
        // Until the write runs on this thread (it is queued while the writer thread sweeps: the
        // next test is that case).
        let caught = (0..50).find_map(|_| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                db.write(move |w| {
                    incr_noting(w, b"n")?;
                    w.set(0, b"half", b"written", SetOptions::default())?;
                    if std::thread::current().id() == here {
                        panic!("a bug in the caller's closure");
                    }
                    Err::<(), _>(Error::WrongType)
                })
            }))
            .err()
        });
        assert!(caught.is_some(), "the panic reaches the caller");
        assert_eq!(db.get("half").unwrap(), None);
        assert_eq!(db.incr_by("n", 1).unwrap(), 1);
        assert_eq!(events.seqs(), Vec::<i64>::new());
        let v = db.write(|w| incr_noting(w, b"n")).unwrap();
        assert_eq!(v, 2);
        assert_eq!(events.seqs(), vec![2]);
        // The writer thread's queue works too.
        let (tx, rx) = mpsc::channel();
        db.write_async(
            |w| w.atomic(|w| incr_noting(w, b"n")),
            move |r| tx.send(r.and_then(|r| r)).unwrap(),
        );
        assert_eq!(rx.recv().unwrap(), Ok(3));
    }
}

/// A write that panics on the writer thread (queued behind a busy writer) fails its group,
/// which is rolled back with its events; the panic goes on in the caller of `Db::write`; and
/// the writer thread goes on writing (it ended before, failing every later write with
/// `Closed`). A panicking `write_async` job is answered with an error.
#[test]
fn a_write_panicking_on_the_writer_thread_fails_its_group_and_the_writer_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    for db in [open(dir.path()), Db::open_in_memory().unwrap()] {
        let events = Arc::new(Recorder::default());
        db.set_event_sink(events.clone());
        let here = std::thread::current().id();
        let caught = (0..50).find_map(|_| {
            // Keeps the writer thread busy, so the next write queues behind it.
            let (held, release) = mpsc::channel::<()>();
            db.write_async(
                move |_| {
                    let _ = release.recv_timeout(Duration::from_secs(5));
                },
                |_| {},
            );
            let db2 = db.clone();
            let t = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                held.send(()).unwrap();
                drop(db2);
            });
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                db.write(move |w| {
                    incr_noting(w, b"n")?;
                    w.set(0, b"half", b"written", SetOptions::default())?;
                    if std::thread::current().id() != here {
                        panic!("a bug on the writer thread");
                    }
                    Err::<(), _>(Error::WrongType)
                })
            }));
            t.join().unwrap();
            r.err()
        });
        let p = caught.expect("the write ran on the writer thread once");
        assert_eq!(
            p.downcast_ref::<&str>(),
            Some(&"a bug on the writer thread")
        );
        assert_eq!(db.get("half").unwrap(), None);
        assert_eq!(events.seqs(), Vec::<i64>::new());
        // The writer thread's queue still works.
        let (tx, rx) = mpsc::channel();
        db.write_async(
            |w| w.atomic(|w| incr_noting(w, b"n")),
            move |r| tx.send(r.and_then(|r| r)).unwrap(),
        );
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)).unwrap(), Ok(1));
        // A panicking queued job is answered with an error, and rolled back.
        let (tx, rx) = mpsc::channel();
        db.write_async(
            |w| {
                w.set(0, b"lost", b"x", SetOptions::default()).unwrap();
                panic!("a bug in a queued job")
            },
            move |r: Result<(), Error>| tx.send(r).unwrap(),
        );
        match rx.recv_timeout(Duration::from_secs(5)).unwrap() {
            Err(Error::Storage(m)) => assert!(m.contains("a bug in a queued job"), "{m}"),
            other => panic!("answered {other:?}"),
        }
        assert_eq!(db.get("lost").unwrap(), None);
        assert_eq!(db.write(|w| incr_noting(w, b"n")).unwrap(), 2);
        assert_eq!(events.seqs(), vec![1, 2]);
    }
}

/// A write that fails on the caller's thread (a transaction of its own, with no savepoint)
/// keeps nothing it wrote or recorded: its keys, its events, the sorted sets' pending rank
/// counts; the next writes, on both paths, see the state from before it.
#[test]
fn a_failing_embedded_write_keeps_nothing_it_wrote_or_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open_with(Options {
        rank_blocks: RankBlocks {
            threshold: 12,
            block: 4,
            fanout: 3,
        },
        ..Options::file(dir.path().join("t.db"))
    })
    .unwrap();
    let events = Arc::new(Recorder::default());
    db.set_event_sink(events.clone());
    let pairs = |from: i64, to: i64| -> Vec<(f64, Bytes)> {
        (from..to)
            .map(|i| (i as f64, Bytes::from(format!("m{i:03}"))))
            .collect()
    };
    let first = pairs(0, 40);
    db.write(move |w| w.zadd(0, b"z", ZAddOptions::default(), &first).map(drop))
        .unwrap();
    let here = std::thread::current().id();
    // Until the write runs on this thread (it is queued while the writer thread sweeps); each
    // attempt fails and leaves nothing.
    let mut ran_here = false;
    for _ in 0..50 {
        let more = pairs(40, 60);
        let on_caller = Arc::new(AtomicBool::new(false));
        let flag = on_caller.clone();
        let r: Result<(), Error> = db.write(move |w| {
            incr_noting(w, b"n")?;
            w.zadd(0, b"z", ZAddOptions::default(), &more)?;
            // A member moved to the front: rank counts change in blocks it does not end in.
            w.zadd(
                0,
                b"z",
                ZAddOptions::default(),
                &[(-1.0, Bytes::from("m039"))],
            )?;
            w.set(0, b"half", b"written", SetOptions::default())?;
            flag.store(std::thread::current().id() == here, Ordering::Relaxed);
            Err(Error::WrongType)
        });
        assert_eq!(r, Err(Error::WrongType));
        ran_here = on_caller.load(Ordering::Relaxed);
        if ran_here {
            break;
        }
    }
    assert!(ran_here, "the write never ran on the caller's thread");
    assert_eq!(db.get("half").unwrap(), None);
    assert_eq!(db.get("n").unwrap(), None);
    assert_eq!(events.seqs(), Vec::<i64>::new());
    assert_eq!(db.zcard("z").unwrap(), 40);
    let rank = db.write(|w| w.zrank(0, b"z", b"m039", false)).unwrap();
    assert_eq!(rank, Some(Some(39)));
    db.write(|w| w.zcheck(0, b"z")).unwrap();
    // The writer thread's next group sees the same.
    let (tx, rx) = mpsc::channel();
    db.write_async(
        |w| {
            w.zcheck(0, b"z")?;
            w.atomic(|w| incr_noting(w, b"n"))
        },
        move |r| tx.send(r.and_then(|r| r)).unwrap(),
    );
    assert_eq!(rx.recv().unwrap(), Ok(1));
    assert_eq!(events.seqs(), vec![1]);
    drop(db);
    let db = Db::open(dir.path().join("t.db")).unwrap();
    assert_eq!(db.zcard("z").unwrap(), 40);
    assert_eq!(db.get("n").unwrap().as_deref(), Some(&b"1"[..]));
}

/// The expiry sweep stays with the writer thread, which wakes for it on its own while every
/// write runs on the caller's thread.
#[test]
fn the_sweep_runs_while_embedded_writes_never_queue() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(1_700_000_000_000);
    let db = Db::open_with(Options {
        clock: Arc::new(clock.clone()),
        ..Options::file(dir.path().join("t.db"))
    })
    .unwrap();
    for i in 0..20 {
        let opts = SetOptions {
            expiry: Expiry::In(1000),
            ..SetOptions::default()
        };
        db.set_with(format!("temp{i}"), "v", opts).unwrap();
    }
    clock.advance(5_000);
    let until = Instant::now() + Duration::from_secs(20);
    let mut i = 0u64;
    while db.stats().expired_keys.load(Ordering::Relaxed) < 20 {
        assert!(Instant::now() < until, "the sweep did not run");
        db.set("busy", i.to_string()).unwrap();
        i += 1;
    }
    assert_eq!(db.dbsize().unwrap(), 1);
}
