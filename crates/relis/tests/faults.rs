//! Disk full and I/O errors during a commit, injected by `relis::faults` (a VFS shim): the
//! affected writes fail with the storage error and nothing else, every write of a failed group
//! commit fails (none is half applied), reads keep working, writes work again once the fault is
//! cleared, and after a reopen everything acknowledged is there and the file is sound.

use relis::faults::{self, Fault};
use relis::{Db, Durability, Error, Options, SetOptions};
use std::path::Path;
use std::sync::mpsc;

fn open(dir: &Path, durability: Durability) -> Db {
    faults::install();
    Db::open_with(Options {
        durability,
        readers: 2,
        ..Options::file(dir.join("relis.db"))
    })
    .expect("open")
}

/// Queues `n` SETs `<prefix><i>` so that they land in one group commit: a first job holds the
/// writer (its own group already drained from the queue) until all of them are queued. `arm_at` arms `fault` from inside the group, on the
/// writer, just before write number `arm_at` runs (so the earlier writes of the group ran
/// fine and only the commit can fail). Returns each write's result, in order.
fn group_of_sets(
    db: &Db,
    dir: &Path,
    prefix: &str,
    n: usize,
    arm_at: Option<(usize, Fault)>,
) -> Vec<Result<(), Error>> {
    let (hold_tx, hold_rx) = mpsc::channel::<()>();
    let (first_tx, first_rx) = mpsc::channel();
    let (running_tx, running_rx) = mpsc::channel::<()>();
    db.write_async(
        move |_| {
            let _ = running_tx.send(());
            let _ = hold_rx.recv();
        },
        move |r| {
            let _ = first_tx.send(r);
        },
    );
    running_rx.recv().unwrap();
    let (tx, rx) = mpsc::channel();
    for i in 0..n {
        let tx = tx.clone();
        let key = format!("{prefix}{i}");
        let dir = dir.to_path_buf();
        let arm = arm_at.filter(|(at, _)| *at == i).map(|(_, f)| f);
        db.write_async(
            move |w| {
                if let Some(f) = arm {
                    faults::set(&dir, Some(f));
                }
                w.atomic(|w| w.set(0, key.as_bytes(), b"v", SetOptions::default()))
            },
            move |r| {
                let _ = tx.send((i, r.and_then(|r| r.map(|_| ()))));
            },
        );
    }
    drop(tx);
    hold_tx.send(()).unwrap();
    first_rx.recv().unwrap().expect("the holding job commits");
    let mut out: Vec<_> = rx.iter().collect();
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, r)| r).collect()
}

fn integrity_ok(path: &Path) {
    let conn = rusqlite::Connection::open(path).unwrap();
    let v: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, "ok");
}

/// Runs the whole scenario for one fault; `expect` tells the error the writes must get.
fn scenario(fault: Fault, durability: Durability, expect: fn(&Error) -> bool) {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), durability);
    db.set("before", "1").unwrap();
    let injected = faults::injected();

    // The fault strikes in the middle of a group: the ten writes that ran before it and the
    // ten after all fail with the storage error, and none of them is applied.
    let results = group_of_sets(&db, dir.path(), "g", 20, Some((10, fault)));
    assert_eq!(results.len(), 20);
    for (i, r) in results.iter().enumerate() {
        match r {
            Err(e) if expect(e) => {}
            other => panic!("write {i} of the failed group: {other:?}"),
        }
    }
    assert!(faults::injected() > injected, "the fault was hit");
    // Single writes keep failing while the fault lasts; the engine keeps running.
    for _ in 0..3 {
        let e = db.set("during", "x").unwrap_err();
        assert!(expect(&e), "{e:?}");
    }
    // Reads keep working, and see only what was committed.
    assert_eq!(db.get("before").unwrap().as_deref(), Some(&b"1"[..]));
    for i in 0..20 {
        assert_eq!(
            db.get(format!("g{i}")).unwrap(),
            None,
            "g{i} was not applied"
        );
    }
    assert_eq!(db.get("during").unwrap(), None);
    assert_eq!(db.dbsize().unwrap(), 1);

    // Space comes back: writes work again, in groups too.
    faults::set(dir.path(), None);
    db.set("after", "2").unwrap();
    let results = group_of_sets(&db, dir.path(), "h", 20, None);
    assert!(results.iter().all(|r| r.is_ok()), "{results:?}");
    assert_eq!(db.dbsize().unwrap(), 22);
    drop(db);

    // Reopened: every acknowledged write is there, nothing that failed is, the file is sound.
    integrity_ok(&dir.path().join("relis.db"));
    let db = open(dir.path(), durability);
    assert_eq!(db.get("before").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get("after").unwrap().as_deref(), Some(&b"2"[..]));
    for i in 0..20 {
        assert_eq!(db.get(format!("h{i}")).unwrap().as_deref(), Some(&b"v"[..]));
        assert_eq!(db.get(format!("g{i}")).unwrap(), None);
    }
    assert_eq!(db.get("during").unwrap(), None);
    assert_eq!(db.dbsize().unwrap(), 22);
}

#[test]
fn disk_full_during_a_group_commit() {
    scenario(Fault::DiskFull, Durability::Normal, |e| {
        *e == Error::DiskFull
    });
}

#[test]
fn disk_full_with_durability_full() {
    scenario(Fault::DiskFull, Durability::Full, |e| *e == Error::DiskFull);
}

#[test]
fn write_error_during_a_group_commit() {
    scenario(Fault::WriteError, Durability::Normal, |e| {
        matches!(e, Error::Io(_))
    });
}

/// A failed fsync (`durability full` syncs at every commit): the writes are answered with the
/// error, never acknowledged.
#[test]
fn sync_error_with_durability_full() {
    scenario(Fault::SyncError, Durability::Full, |e| {
        matches!(e, Error::Io(_))
    });
}

/// A group whose transaction cannot begin (taking the WAL's write lock fails): every write in it
/// is answered with the storage error and none runs; reads keep working; once the fault is gone
/// writes work again; and the engine still shuts down while it lasts.
#[test]
fn writes_whose_transaction_cannot_begin_get_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), Durability::Normal);
    db.set("before", "1").unwrap();
    let injected = faults::injected();
    faults::set(dir.path(), Some(Fault::LockError));

    let (tx, rx) = mpsc::channel();
    for i in 0..10 {
        let tx = tx.clone();
        let key = format!("g{i}");
        db.write_async(
            move |w| w.atomic(|w| w.set(0, key.as_bytes(), b"v", SetOptions::default())),
            move |r| {
                let _ = tx.send(r.and_then(|r| r.map(|_| ())));
            },
        );
    }
    drop(tx);
    let results: Vec<_> = rx.iter().collect();
    assert_eq!(results.len(), 10);
    for r in &results {
        assert!(matches!(r, Err(Error::Io(_))), "{r:?}");
    }
    assert!(faults::injected() > injected, "the fault was hit");
    let e = db.set("during", "x").unwrap_err();
    assert!(matches!(e, Error::Io(_)), "{e:?}");
    assert_eq!(db.get("before").unwrap().as_deref(), Some(&b"1"[..]));

    faults::set(dir.path(), None);
    db.set("after", "2").unwrap();
    for i in 0..10 {
        assert_eq!(db.get(format!("g{i}")).unwrap(), None, "g{i} did not run");
    }
    assert_eq!(db.get("during").unwrap(), None);
    assert_eq!(db.dbsize().unwrap(), 2);

    // Shutting down while no transaction can begin.
    faults::set(dir.path(), Some(Fault::LockError));
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        drop(db);
        let _ = done_tx.send(());
    });
    done_rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .expect("the engine shuts down");
    faults::set(dir.path(), None);
    let db = open(dir.path(), Durability::Normal);
    assert_eq!(db.get("after").unwrap().as_deref(), Some(&b"2"[..]));
}

#[test]
fn a_failed_commit_leaves_no_rank_counts_behind() {
    // A sorted set past the rank threshold (1024): score changes in a group whose commit
    // fails leave counts pending in the writer's copy (zset.rs, "Pending counts"); they must go
    // with the group, and the next group's counts must land on the rows as they were.
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path(), Durability::Normal);
    let members: Vec<String> = (0..3000).map(|i| format!("m{i:04}")).collect();
    let pairs: Vec<(f64, &[u8])> = members
        .iter()
        .enumerate()
        .map(|(i, m)| (i as f64, m.as_bytes()))
        .collect();
    db.zadd("z", &pairs).unwrap();
    let path = dir.path().to_path_buf();
    let failed = db.write(move |w| {
        for i in 0..200u32 {
            let m = relis::Bytes::from(format!("m{:04}", i * 7 % 3000));
            w.zadd(0, b"z", Default::default(), &[(-f64::from(i), m)])?;
        }
        faults::set(&path, Some(Fault::DiskFull));
        Ok(())
    });
    assert!(failed.is_err(), "the commit failed: {failed:?}");
    faults::set(dir.path(), None);
    // A group failed by a write's storage error (no savepoint of its own): its counts never
    // reached the rows.
    let failed = db.write(|w| {
        for i in 0..200u32 {
            let m = relis::Bytes::from(format!("m{:04}", i * 13 % 3000));
            w.zadd(0, b"z", Default::default(), &[(-f64::from(i), m)])?;
        }
        w.poison(Error::Storage("injected".into()));
        Ok(())
    });
    assert!(failed.is_err(), "the group failed: {failed:?}");
    db.write(|w| {
        for i in 0..200u32 {
            let m = relis::Bytes::from(format!("m{:04}", i * 11 % 3000));
            w.zadd(0, b"z", Default::default(), &[(10_000.0 + f64::from(i), m)])?;
        }
        Ok(())
    })
    .unwrap();
    db.write(|w| w.zcheck(0, b"z")).unwrap();
    // m0000 kept score 0 (the failed group's -0 change is gone) and was moved by the second
    // group (i = 0): it is last now; m0001 is first.
    assert_eq!(db.zrank("z", "m0001", false).unwrap(), Some(0));
    assert_eq!(db.zrank("z", "m0000", false).unwrap(), Some(2800));
    drop(db);
    integrity_ok(&dir.path().join("relis.db"));
}
