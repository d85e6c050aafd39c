//! The shared key table of the PostgreSQL backend (`relis::postgres`) against a real
//! PostgreSQL the test starts: groups on separate connections (as on separate nodes) that
//! touch the same keys never lose an update.

mod common;

use common::pg::Pg;
use relis::postgres::{is_conflict, Change, Functions, Group, PgKeys, Stored};

/// Reads a counter under the group's lock (0 when absent).
fn counter(g: &mut Group<'_>, key: &[u8]) -> i64 {
    let k = (0, key.to_vec());
    g.lock(std::slice::from_ref(&k)).unwrap();
    let v = g.load(&[k]).unwrap().pop().unwrap();
    v.map_or(0, |s| {
        std::str::from_utf8(&s.value).unwrap().parse().unwrap()
    })
}

fn put(key: &[u8], n: i64) -> Change {
    Change::Put {
        key: (0, key.to_vec()),
        value: n.to_string().into_bytes(),
        expire_at: None,
        quiet: false,
    }
}

#[test]
fn the_schema_is_created_once_and_shared() {
    let Some(pg) = Pg::start() else { return };
    let mut a = PgKeys::connect(&pg.url()).unwrap();
    // The URL form (as `--backend` takes it) reaches the same database.
    let mut b = PgKeys::connect(&pg.uri()).unwrap();
    assert_eq!(a.schema_version().unwrap(), 7);
    assert_eq!(b.schema_version().unwrap(), 7);
    // The bus's channel is a secret of this database, not the well-known name.
    let mut c = postgres::Client::connect(&pg.url(), postgres::NoTls).unwrap();
    let channel: String = c
        .query_one("SELECT name FROM relis_bus_channel", &[])
        .unwrap()
        .get(0);
    assert!(
        channel.starts_with("relis_bus_") && channel.len() == 42,
        "{channel}"
    );

    // A put is seen by the other connection once committed; versions differ per write.
    let mut g = a.group().unwrap();
    g.apply(&[put(b"k", 1)]).unwrap();
    g.commit().unwrap();
    let first = b.group().unwrap().load(&[(0, b"k".to_vec())]).unwrap();
    let Some(Stored { value, version, .. }) = first[0].clone() else {
        panic!("committed put not visible: {first:?}")
    };
    assert_eq!(value, b"1");
    let mut g = a.group().unwrap();
    g.apply(&[put(b"k", 2)]).unwrap();
    g.commit().unwrap();
    let second = b.group().unwrap().load(&[(0, b"k".to_vec())]).unwrap();
    assert!(second[0].as_ref().unwrap().version > version);
    let version = second[0].as_ref().unwrap().version;
    // A quiet put (a stream's groups) keeps the row's version, through either path; a new key
    // gets one all the same.
    let quiet = |key: &[u8], n: i64| Change::Put {
        key: (0, key.to_vec()),
        value: n.to_string().into_bytes(),
        expire_at: None,
        quiet: true,
    };
    let mut g = a.group().unwrap();
    g.apply(&[quiet(b"k", 3), quiet(b"q", 1)]).unwrap();
    g.commit().unwrap();
    a.begin_locked(&[(0, b"k".to_vec())]).unwrap();
    a.commit_changes(&[quiet(b"k", 4)]).unwrap();
    let third = b
        .group()
        .unwrap()
        .load(&[(0, b"k".to_vec()), (0, b"q".to_vec())])
        .unwrap();
    let k = third[0].as_ref().unwrap();
    assert_eq!((&k.value[..], k.version), (&b"4"[..], version));
    assert!(third[1].as_ref().unwrap().version > version);

    // A group dropped without commit leaves nothing; a delete removes the key.
    let mut g = a.group().unwrap();
    g.apply(&[put(b"gone", 1)]).unwrap();
    drop(g);
    let mut g = a.group().unwrap();
    g.apply(&[Change::Delete((0, b"k".to_vec()))]).unwrap();
    g.commit().unwrap();
    let after = b
        .group()
        .unwrap()
        .load(&[
            (0, b"k".to_vec()),
            (0, b"gone".to_vec()),
            (1, b"k".to_vec()),
        ])
        .unwrap();
    assert_eq!(after, vec![None, None, None]);
}

#[test]
fn concurrent_increments_on_two_connections_are_never_lost() {
    let Some(pg) = Pg::start() else { return };
    const EACH: i64 = 300;
    let url = pg.url();
    PgKeys::connect(&url).unwrap();
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || {
                let mut keys = PgKeys::connect(&url).unwrap();
                for _ in 0..EACH {
                    let mut g = keys.group().unwrap();
                    let n = counter(&mut g, b"counter");
                    g.apply(&[put(b"counter", n + 1)]).unwrap();
                    g.commit().unwrap();
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let mut keys = PgKeys::connect(&url).unwrap();
    let mut g = keys.group().unwrap();
    assert_eq!(counter(&mut g, b"counter"), 2 * EACH);
}

#[test]
fn transfers_locking_two_keys_in_opposite_orders_keep_the_sum() {
    let Some(pg) = Pg::start() else { return };
    const EACH: usize = 200;
    let url = pg.url();
    let mut setup = PgKeys::connect(&url).unwrap();
    let mut g = setup.group().unwrap();
    g.apply(&[put(b"a", 1000), put(b"b", 1000)]).unwrap();
    g.commit().unwrap();
    let workers: Vec<_> = [(b"a", b"b"), (b"b", b"a")]
        .into_iter()
        .map(|(from, to)| {
            let url = url.clone();
            std::thread::spawn(move || {
                let mut keys = PgKeys::connect(&url).unwrap();
                let mut conflicts = 0;
                for _ in 0..EACH {
                    let ks = [(0, from.to_vec()), (0, to.to_vec())];
                    let mut g = keys.group().unwrap();
                    // Locks are taken in hash order whatever order the keys come in.
                    if let Err(e) = g.lock(&ks) {
                        assert!(is_conflict(&e), "{e}");
                        conflicts += 1;
                        continue;
                    }
                    let vals = g.load(&ks).unwrap();
                    let n = |i: usize| -> i64 {
                        std::str::from_utf8(&vals[i].as_ref().unwrap().value)
                            .unwrap()
                            .parse()
                            .unwrap()
                    };
                    g.apply(&[put(from, n(0) - 1), put(to, n(1) + 1)]).unwrap();
                    g.commit().unwrap();
                }
                conflicts
            })
        })
        .collect();
    let conflicts: i32 = workers.into_iter().map(|w| w.join().unwrap()).sum();
    assert_eq!(conflicts, 0, "locks in hash order cannot deadlock");
    let mut g = setup.group().unwrap();
    let a = counter(&mut g, b"a");
    let b = counter(&mut g, b"b");
    assert_eq!(a + b, 2000);
    assert_eq!(a, 1000, "as many transfers each way");
}

/// A codec for strings only (the server's is Redis's DUMP payload, over every type).
fn strings_codec() -> relis::postgres::Codec {
    relis::postgres::Codec {
        dump: |d| match d.value {
            relis::Value::String(s) => s.to_vec(),
            v => panic!("only strings in this test: {v:?}"),
        },
        restore: |b| Some(relis::Value::String(relis::Bytes::copy_from_slice(b))),
        kind: |_| Some(relis::KeyType::String),
    }
}

/// INCR through `db`, declaring its key; waits for the commit.
fn incr(db: &relis::Db, key: &[u8]) -> relis::Result<i64> {
    let (tx, rx) = std::sync::mpsc::channel();
    let k = key.to_vec();
    db.write_async_keys(
        vec![(0, key.to_vec())],
        move |w| w.atomic(|w| w.incr_by(0, &k, 1)),
        move |r| {
            let _ = tx.send(r);
        },
    );
    rx.recv().unwrap().and_then(|r| r)
}

#[test]
fn two_engines_over_one_postgres_lose_no_increment() {
    let Some(pg) = Pg::start() else { return };
    const EACH: i64 = 200;
    let engines: Vec<relis::Db> = (0..2)
        .map(|_| {
            relis::Db::open_postgres(&pg.url(), strings_codec(), relis::Options::default()).unwrap()
        })
        .collect();
    assert_eq!(engines[0].backend(), "postgres");
    let workers: Vec<_> = (0..4)
        .map(|i| {
            let db = engines[i % 2].clone();
            std::thread::spawn(move || {
                for _ in 0..EACH {
                    incr(&db, b"n").unwrap();
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(incr(&engines[1], b"n").unwrap(), 4 * EACH + 1);

    // A write to a key the job did not declare fails, and writes nothing.
    let (tx, rx) = std::sync::mpsc::channel();
    engines[0].write_async_keys(
        vec![(0, b"n".to_vec())],
        |w| {
            w.atomic(|w| w.incr_by(0, b"n", 1))?;
            w.atomic(|w| w.incr_by(0, b"other", 1))
        },
        move |r| {
            let _ = tx.send(r);
        },
    );
    let err = rx.recv().unwrap().unwrap_err();
    assert!(err.to_string().contains("without declaring"), "{err}");
    assert_eq!(incr(&engines[0], b"n").unwrap(), 4 * EACH + 2);
}

#[test]
fn the_bus_carries_small_and_large_messages_to_the_other_nodes_only() {
    use relis::postgres::Bus;
    use std::sync::{Arc, Mutex};
    let Some(pg) = Pg::start() else { return };
    // The schema (with the bus's table) exists before the buses start.
    PgKeys::connect(&pg.url()).unwrap();
    let got = |log: &Arc<Mutex<Vec<Vec<u8>>>>| {
        let log = log.clone();
        Arc::new(move |m: &[u8]| log.lock().unwrap().push(m.to_vec())) as relis::postgres::Deliver
    };
    let (seen_a, seen_b) = (Arc::default(), Arc::default());
    let a = Bus::start(&pg.url(), got(&seen_a));
    let b = Bus::start(&pg.url(), got(&seen_b));
    assert_ne!(a.node(), b.node());
    // Both listen before anything is sent (a message sent before is not seen).
    std::thread::sleep(std::time::Duration::from_millis(500));
    let large: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
    // Two identical messages stay two (PostgreSQL folds identical notifications of one
    // transaction), a message with every byte value and one too large for a payload arrive.
    let all: Vec<u8> = (0..=255).collect();
    for m in [&b"same"[..], b"same", &all, &large, b"last"] {
        a.send(m.to_vec());
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while seen_b.lock().unwrap().len() < 5 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let want: Vec<Vec<u8>> = vec![
        b"same".to_vec(),
        b"same".to_vec(),
        all.clone(),
        large.clone(),
        b"last".to_vec(),
    ];
    assert_eq!(*seen_b.lock().unwrap(), want);
    // The sender does not hear itself.
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(seen_a.lock().unwrap().is_empty());
}

/// A database whose default isolation is stricter than READ COMMITTED (a DBA's choice) must
/// change nothing: under REPEATABLE READ a group's load would take its snapshot before its
/// locks were granted and its write-back would fail with a serialization failure (SQLSTATE
/// 40001) reaching the client; under SERIALIZABLE, groups on different keys would abort each
/// other. The engine sets READ COMMITTED on its connections, so none happens.
#[test]
fn a_stricter_default_isolation_surfaces_no_conflict_and_loses_nothing() {
    let Some(pg) = Pg::start() else { return };
    for level in ["repeatable read", "serializable"] {
        {
            let url = pg.url();
            std::thread::spawn(move || {
                let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
                c.batch_execute(&format!(
                    "ALTER DATABASE postgres SET default_transaction_isolation = '{level}'"
                ))
                .unwrap();
            })
            .join()
            .unwrap();
        }
        const EACH: i64 = 150;
        let engines: Vec<relis::Db> = (0..2)
            .map(|_| {
                relis::Db::open_postgres(&pg.url(), strings_codec(), relis::Options::default())
                    .unwrap()
            })
            .collect();
        // Two workers on one key (each waits for the other's lock), two on keys of their own.
        let workers: Vec<_> = (0..4)
            .map(|i| {
                let db = engines[i % 2].clone();
                let key = format!("{level}:{}", ["shared", "shared", "a", "b"][i]).into_bytes();
                let level = level.to_string();
                std::thread::spawn(move || {
                    for _ in 0..EACH {
                        if let Err(e) = incr(&db, &key) {
                            panic!("{level}: {e}");
                        }
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        let n = |k: &str| incr(&engines[1], format!("{level}:{k}").as_bytes()).unwrap() - 1;
        assert_eq!(n("shared"), 2 * EACH, "{level}");
        assert_eq!((n("a"), n("b")), (EACH, EACH), "{level}");
    }
}

/// The prepared statements a group `EXECUTE`s take keys and values as array literals of hex:
/// any bytes (the empty key, quotes, braces, backslashes, NUL, non-UTF-8) go there and back
/// unchanged, with expiries and deletes; more than five groups, so PostgreSQL's generic plans
/// run too.
#[test]
fn the_prepared_group_statements_carry_any_bytes() {
    let Some(pg) = Pg::start() else { return };
    let mut a = PgKeys::connect(&pg.url()).unwrap();
    let keys: Vec<(u32, Vec<u8>)> = [
        &b""[..],
        b"'",
        b"\"{},\\",
        b"\0\xff\xfe",
        b"NULL",
        b"key:000000000001",
    ]
    .iter()
    .enumerate()
    .map(|(i, k)| (i as u32 % 3, k.to_vec()))
    .collect();
    for round in 0..8u8 {
        let rows = a.begin_locked(&keys).unwrap();
        for (i, row) in rows.iter().enumerate() {
            if round == 0 {
                assert_eq!(row, &None);
                continue;
            }
            let row = row.as_ref().expect("written by the previous round");
            assert_eq!(
                row.value,
                [&keys[i].1[..], &[round - 1, b'\''][..]].concat()
            );
            assert_eq!(row.expire_at, (i % 2 == 0).then_some(i64::from(round - 1)));
        }
        let changes: Vec<Change> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| Change::Put {
                key: k.clone(),
                value: [&k.1[..], &[round, b'\''][..]].concat(),
                expire_at: (i % 2 == 0).then_some(i64::from(round)),
                quiet: false,
            })
            .collect();
        a.commit_changes(&changes).unwrap();
    }
    let deletes: Vec<Change> = keys[..3].iter().cloned().map(Change::Delete).collect();
    a.begin_locked(&keys).unwrap();
    a.commit_changes(&deletes).unwrap();
    let rows = a.load(&keys).unwrap();
    assert!(rows[..3].iter().all(Option::is_none));
    assert!(rows[3..].iter().all(Option::is_some));
}

/// A flush's group waits for every group that holds keys of what it empties (their database
/// locks, shared, against its exclusive one), so a key loaded before the flush is never
/// written back after it; a flush of another database does not wait.
#[test]
fn a_flush_waits_for_the_groups_of_its_databases() {
    let Some(pg) = Pg::start() else { return };
    let mut a = PgKeys::connect(&pg.url()).unwrap();
    let mut b = PgKeys::connect(&pg.url()).unwrap();
    let k = (0u32, b"k".to_vec());
    // A group holding a key of database 0.
    a.begin_locked(std::slice::from_ref(&k)).unwrap();
    // FLUSHDB of database 1 does not wait for it.
    b.begin_flushing(&[], &[], &[Some(1)]).unwrap();
    b.flush(&[Some(1)]).unwrap();
    b.commit_changes(&[]).unwrap();
    // FLUSHALL (and FLUSHDB of database 0) waits until that group commits.
    let mut waiters = Vec::new();
    for flush in [None, Some(0)] {
        let (tx, rx) = std::sync::mpsc::channel();
        let url = pg.url();
        let t = std::thread::spawn(move || {
            let mut c = PgKeys::connect(&url).unwrap();
            c.begin_flushing(&[], &[], &[flush]).unwrap();
            c.flush(&[flush]).unwrap();
            c.commit_changes(&[]).unwrap();
            tx.send(()).unwrap();
        });
        waiters.push((t, rx));
    }
    for (_, rx) in &waiters {
        assert!(
            rx.recv_timeout(std::time::Duration::from_millis(300))
                .is_err(),
            "a flush ran while a group held a key of its database"
        );
    }
    a.commit_changes(&[Change::Put {
        key: k.clone(),
        value: b"v".to_vec(),
        expire_at: None,
        quiet: false,
    }])
    .unwrap();
    for (t, rx) in waiters {
        rx.recv_timeout(std::time::Duration::from_secs(30)).unwrap();
        t.join().unwrap();
    }
    // The flushes came after the group: its write is gone.
    assert_eq!(a.load(&[k]).unwrap(), vec![None]);
}

/// The function libraries: a node that has the stored version gets nothing back, a change
/// replaces the set (any bytes in the code) and gives it a new version; a change waits for
/// another change (the functions lock).
#[test]
fn function_libraries_come_back_only_when_changed() {
    let Some(pg) = Pg::start() else { return };
    let mut a = PgKeys::connect(&pg.url()).unwrap();
    let mut b = PgKeys::connect(&pg.url()).unwrap();
    let fresh = a.load_with(&[], Functions::Unless(-1)).unwrap().1.unwrap();
    assert_eq!((fresh.version, fresh.libraries.len()), (0, 0));
    assert_eq!(a.load_with(&[], Functions::Unless(0)).unwrap().1, None);
    let set = a
        .begin_group(&[], &[], &[], Functions::Lock)
        .unwrap()
        .1
        .unwrap();
    assert_eq!(set, fresh);
    // Another change waits for this one's commit.
    let (tx, rx) = std::sync::mpsc::channel();
    let url = pg.url();
    let t = std::thread::spawn(move || {
        let mut c = PgKeys::connect(&url).unwrap();
        let set = c.begin_group(&[], &[], &[], Functions::Lock).unwrap().1;
        c.commit_all(&[], None).unwrap();
        tx.send(set).unwrap();
    });
    assert!(rx
        .recv_timeout(std::time::Duration::from_millis(300))
        .is_err());
    let libs = vec![
        ("a".to_string(), b"\x00\xff'\"{}".to_vec()),
        ("b".to_string(), b"code b".to_vec()),
    ];
    a.commit_all(&[], Some(&libs)).unwrap();
    let seen = rx.recv().unwrap().unwrap();
    t.join().unwrap();
    assert!(seen.version > 0);
    assert_eq!(seen.libraries, libs);
    let (_, now) = b.load_with(&[], Functions::Unless(0)).unwrap();
    assert_eq!(now.as_ref(), Some(&seen));
    assert_eq!(
        b.load_with(&[], Functions::Unless(seen.version)).unwrap().1,
        None
    );
}

/// SWAPDB at commit: the rows of two databases change places (a key in both included), each
/// with a new version; other databases stay.
#[test]
fn a_swap_moves_every_row_with_a_new_version() {
    let Some(pg) = Pg::start() else { return };
    let mut a = PgKeys::connect(&pg.url()).unwrap();
    let put = |db: u32, k: &str, v: &str| Change::Put {
        key: (db, k.as_bytes().to_vec()),
        value: v.as_bytes().to_vec(),
        expire_at: None,
        quiet: false,
    };
    let keys: Vec<(u32, Vec<u8>)> = [(0, "k"), (1, "k"), (0, "only0"), (1, "only0"), (2, "k")]
        .iter()
        .map(|(db, k)| (*db, k.as_bytes().to_vec()))
        .collect();
    a.begin_locked(&keys).unwrap();
    a.commit_changes(&[
        put(0, "k", "k0"),
        put(1, "k", "k1"),
        put(0, "only0", "o"),
        put(2, "k", "k2"),
    ])
    .unwrap();
    let before = a.load(&keys).unwrap();
    let newest = before.iter().flatten().map(|s| s.version).max().unwrap();
    a.begin_flushing(&[], &[], &[Some(0), Some(1)]).unwrap();
    a.swap(1, 0).unwrap();
    a.commit_changes(&[]).unwrap();
    let after = a.load(&keys).unwrap();
    let value = |s: &Option<Stored>| {
        s.as_ref()
            .map(|s| String::from_utf8(s.value.clone()).unwrap())
    };
    let got: Vec<Option<String>> = after.iter().map(value).collect();
    assert_eq!(
        got,
        vec![
            Some("k1".into()),
            Some("k0".into()),
            None,
            Some("o".into()),
            Some("k2".into())
        ]
    );
    for s in after[..4].iter().flatten() {
        assert!(s.version > newest, "a swapped row keeps its version");
    }
    assert_eq!(after[4], before[4], "database 2 stays as it was");
}
