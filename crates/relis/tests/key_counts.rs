//! The per-database key counts that DBSIZE and INFO keyspace read (`relis_key_counts`, kept by
//! the writer: backend/sqlite/counts.rs) always equal a count of the key rows themselves.
//!
//! Random mixes of every kind of write that adds, deletes, moves or re-expires keys, over three
//! databases with the clock moving, some rolled back (a savepoint, a whole job, a whole group);
//! after each, inside the job (the writer's pending counts) and after its commit (a reader's
//! snapshot), the counts are compared with `count(*)` over `relis_keys`
//! (`Reader::keyspace_info_counted`). And a file from before the counts is counted when it
//! is migrated.

use proptest::prelude::*;
use relis::{
    Bytes, Db, End, Error, ExpireCond, Expiry, KeyspaceInfo, ManualClock, Options, RestoreOptions,
    SetOptions, Value, Writer,
};
use std::sync::{mpsc, Arc};

const DBS: u32 = 3;

#[derive(Clone, Debug)]
enum Op {
    Set(u32, u8),
    SetPx(u32, u8, u16),
    SetKeepTtl(u32, u8),
    SetNx(u32, u8),
    SetBig(u32, u8),
    Append(u32, u8),
    Incr(u32, u8),
    PExpire(u32, u8, u16),
    Persist(u32, u8),
    GetExPersist(u32, u8),
    GetDel(u32, u8),
    Del(u32, u8, u8),
    Rename(u32, u8, u8, bool),
    Move(u32, u8, u32),
    Copy(u32, u8, u32, u8, bool),
    SwapDb(u32, u32),
    FlushDb(u32),
    FlushAll,
    Push(u32, u8, u8),
    Pop(u32, u8, u8),
    LMove(u32, u8, u8),
    SAdd(u32, u8, u8),
    SPop(u32, u8, u8),
    SUnionStore(u32, u8, u8),
    HSet(u32, u8, u8),
    HDel(u32, u8, u8),
    ZAdd(u32, u8, u8),
    ZPop(u32, u8, u8),
    XAdd(u32, u8),
    Restore(u32, u8, u8, Option<u16>, bool, bool),
    RestoreNew(u32, u8, u8, Option<u16>),
    Advance(u16),
    LazyExpire(u32, u8),
    Sweep(u8),
    /// The op inside a savepoint that is rolled back (an erring command in a MULTI).
    RolledBack(Box<Op>),
    /// The op in a job that fails: the job's transaction (or savepoint) is rolled back.
    FailedJob(Box<Op>),
    /// The op in a group whose commit fails (a storage error poisoned it).
    FailedGroup(Box<Op>),
    /// Two ops in one job on the writer thread, so the second sees the first's pending counts.
    Both(Box<Op>, Box<Op>),
}

fn k(i: u8) -> Vec<u8> {
    format!("k{}", i % 5).into_bytes()
}

fn b(s: &[u8]) -> Bytes {
    Bytes::copy_from_slice(s)
}

fn basic_op() -> impl Strategy<Value = Op> {
    let db = 0..DBS;
    prop_oneof![
        (db.clone(), any::<u8>()).prop_map(|(d, k)| Op::Set(d, k)),
        (db.clone(), any::<u8>(), 1..60u16).prop_map(|(d, k, t)| Op::SetPx(d, k, t)),
        (db.clone(), any::<u8>()).prop_map(|(d, k)| Op::SetKeepTtl(d, k)),
        (db.clone(), any::<u8>()).prop_map(|(d, k)| Op::SetNx(d, k)),
        (db.clone(), any::<u8>()).prop_map(|(d, k)| Op::SetBig(d, k)),
        (db.clone(), any::<u8>()).prop_map(|(d, k)| Op::Append(d, k)),
        (db.clone(), any::<u8>()).prop_map(|(d, k)| Op::Incr(d, k)),
        (db.clone(), any::<u8>(), 0..60u16).prop_map(|(d, k, t)| Op::PExpire(d, k, t)),
        (db.clone(), any::<u8>()).prop_map(|(d, k)| Op::Persist(d, k)),
        (db.clone(), any::<u8>()).prop_map(|(d, k)| Op::GetExPersist(d, k)),
        (db.clone(), any::<u8>()).prop_map(|(d, k)| Op::GetDel(d, k)),
        (db.clone(), any::<u8>(), any::<u8>()).prop_map(|(d, a, b)| Op::Del(d, a, b)),
        (db.clone(), any::<u8>(), any::<u8>(), any::<bool>())
            .prop_map(|(d, a, b, nx)| Op::Rename(d, a, b, nx)),
        (db.clone(), any::<u8>(), db.clone()).prop_map(|(d, k, to)| Op::Move(d, k, to)),
        (
            db.clone(),
            any::<u8>(),
            db.clone(),
            any::<u8>(),
            any::<bool>()
        )
            .prop_map(|(d, a, to, b, r)| Op::Copy(d, a, to, b, r)),
        (db.clone(), db.clone()).prop_map(|(a, b)| Op::SwapDb(a, b)),
        db.clone().prop_map(Op::FlushDb),
        Just(Op::FlushAll),
        (db.clone(), any::<u8>(), 1..4u8).prop_map(|(d, k, n)| Op::Push(d, k, n)),
        (db.clone(), any::<u8>(), 1..4u8).prop_map(|(d, k, n)| Op::Pop(d, k, n)),
        (db.clone(), any::<u8>(), any::<u8>()).prop_map(|(d, a, b)| Op::LMove(d, a, b)),
        (db.clone(), any::<u8>(), 1..4u8).prop_map(|(d, k, n)| Op::SAdd(d, k, n)),
        (db.clone(), any::<u8>(), 1..4u8).prop_map(|(d, k, n)| Op::SPop(d, k, n)),
        (db.clone(), any::<u8>(), any::<u8>()).prop_map(|(d, a, b)| Op::SUnionStore(d, a, b)),
        (db.clone(), any::<u8>(), 1..4u8).prop_map(|(d, k, n)| Op::HSet(d, k, n)),
        (db.clone(), any::<u8>(), 1..4u8).prop_map(|(d, k, n)| Op::HDel(d, k, n)),
        (db.clone(), any::<u8>(), 1..4u8).prop_map(|(d, k, n)| Op::ZAdd(d, k, n)),
        (db.clone(), any::<u8>(), 1..4u8).prop_map(|(d, k, n)| Op::ZPop(d, k, n)),
        (db.clone(), any::<u8>()).prop_map(|(d, k)| Op::XAdd(d, k)),
        (
            db.clone(),
            any::<u8>(),
            0..4u8,
            proptest::option::of(0..60u16),
            any::<bool>(),
            any::<bool>()
        )
            .prop_map(|(d, k, t, e, r, i)| Op::Restore(d, k, t, e, r, i)),
        (
            db.clone(),
            any::<u8>(),
            0..4u8,
            proptest::option::of(0..60u16)
        )
            .prop_map(|(d, k, t, e)| Op::RestoreNew(d, k, t, e)),
        (0..40u16).prop_map(Op::Advance),
        (db.clone(), any::<u8>()).prop_map(|(d, k)| Op::LazyExpire(d, k)),
        (1..10u8).prop_map(Op::Sweep),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => basic_op(),
        1 => basic_op().prop_map(|o| Op::RolledBack(Box::new(o))),
        1 => basic_op().prop_map(|o| Op::FailedJob(Box::new(o))),
        1 => basic_op().prop_map(|o| Op::FailedGroup(Box::new(o))),
        1 => (basic_op(), basic_op()).prop_map(|(a, b)| Op::Both(Box::new(a), Box::new(b))),
    ]
}

/// A value of one of four types for RESTORE.
fn value(t: u8) -> Value {
    match t % 4 {
        0 => Value::String(b(b"restored")),
        1 => Value::List(vec![b(b"a"), b(b"b")]),
        2 => Value::Hash(vec![(b(b"f"), b(b"v"))]),
        _ => Value::ZSet(vec![(b(b"m"), 1.0)]),
    }
}

/// Runs `op` as a command would: in a savepoint, its error (a wrong type, say) rolling back
/// what it wrote. Ops that are no writes (the clock, the sweep, ...) are the caller's.
fn apply(w: &mut Writer<'_>, op: &Op) -> relis::Result<()> {
    let now = w.now_ms();
    let ignore = |r: relis::Result<()>| match r {
        Err(Error::WrongType | Error::NotInteger | Error::SameObject | Error::NoSuchKey) => Ok(()),
        r => r,
    };
    let set = |w: &mut Writer<'_>, d: u32, key: &[u8], v: &[u8], o: SetOptions| {
        w.set(d, key, v, o).map(drop)
    };
    ignore(w.atomic(|w| {
        match op {
            Op::Set(d, i) => set(w, *d, &k(*i), b"v", SetOptions::default()),
            Op::SetPx(d, i, t) => set(
                w,
                *d,
                &k(*i),
                b"v",
                SetOptions {
                    expiry: Expiry::In(i64::from(*t)),
                    ..Default::default()
                },
            ),
            Op::SetKeepTtl(d, i) => set(
                w,
                *d,
                &k(*i),
                b"kept",
                SetOptions {
                    expiry: Expiry::Keep,
                    ..Default::default()
                },
            ),
            Op::SetNx(d, i) => set(
                w,
                *d,
                &k(*i),
                b"nx",
                SetOptions {
                    cond: relis::SetCond::IfAbsent,
                    ..Default::default()
                },
            ),
            Op::SetBig(d, i) => set(w, *d, &k(*i), &[b'x'; 1000], SetOptions::default()),
            Op::Append(d, i) => w.append(*d, &k(*i), &[b'a'; 300], usize::MAX).map(drop),
            Op::Incr(d, i) => w.incr_by(*d, &k(*i), 1).map(drop),
            Op::PExpire(d, i, t) => w
                .expire_at(*d, &k(*i), now + i64::from(*t), ExpireCond::Always)
                .map(drop),
            Op::Persist(d, i) => w.persist(*d, &k(*i)).map(drop),
            Op::GetExPersist(d, i) => w.getex(*d, &k(*i), Some(Expiry::Clear)).map(drop),
            Op::GetDel(d, i) => w.getdel(*d, &k(*i)).map(drop),
            Op::Del(d, a, c) => w.del(*d, &[b(&k(*a)), b(&k(*c))]).map(drop),
            Op::Rename(d, a, c, nx) => w.rename(*d, &k(*a), &k(*c), *nx).map(drop),
            Op::Move(d, i, to) => w.move_key(*d, &k(*i), *to).map(drop),
            Op::Copy(d, a, to, c, r) => w.copy(*d, &k(*a), *to, &k(*c), *r).map(drop),
            Op::SwapDb(a, c) => w.swapdb(*a, *c),
            Op::FlushDb(d) => w.flushdb(*d),
            Op::FlushAll => w.flushall(),
            Op::Push(d, i, n) => {
                let vals: Vec<Bytes> = (0..*n).map(|j| b(format!("e{j}").as_bytes())).collect();
                w.push(*d, &k(*i), &vals, End::Left, false).map(drop)
            }
            Op::Pop(d, i, n) => w.pop(*d, &k(*i), End::Right, usize::from(*n)).map(drop),
            Op::LMove(d, a, c) => w.lmove(*d, &k(*a), &k(*c), End::Left, End::Right).map(drop),
            Op::SAdd(d, i, n) => {
                let m: Vec<Bytes> = (0..*n).map(|j| b(format!("m{j}").as_bytes())).collect();
                w.sadd(*d, &k(*i), &m).map(drop)
            }
            Op::SPop(d, i, n) => w.spop_count(*d, &k(*i), u64::from(*n)).map(drop),
            Op::SUnionStore(d, a, c) => w
                .sunionstore(*d, &k(*a), &[b(&k(*c))], &mut |_, _| {})
                .map(drop),
            Op::HSet(d, i, n) => {
                let p: Vec<(Bytes, Bytes)> = (0..*n)
                    .map(|j| (b(format!("f{j}").as_bytes()), b(b"v")))
                    .collect();
                w.hset(*d, &k(*i), &p).map(drop)
            }
            Op::HDel(d, i, n) => {
                let f: Vec<Bytes> = (0..*n).map(|j| b(format!("f{j}").as_bytes())).collect();
                w.hdel(*d, &k(*i), &f).map(drop)
            }
            Op::ZAdd(d, i, n) => {
                let p: Vec<(f64, Bytes)> = (0..*n)
                    .map(|j| (f64::from(j), b(format!("z{j}").as_bytes())))
                    .collect();
                w.zadd(*d, &k(*i), relis::ZAddOptions::default(), &p)
                    .map(drop)
            }
            Op::ZPop(d, i, n) => w.zpop(*d, &k(*i), false, i64::from(*n)).map(drop),
            Op::XAdd(d, i) => w
                .xadd(
                    *d,
                    &k(*i),
                    relis::XAddId::Auto,
                    &[b(b"f"), b(b"v")],
                    false,
                    None,
                )
                .map(drop)
                .or_else(|e| match e {
                    // An id not above the stream's top (the clock went nowhere): no write.
                    Error::Stream(_) => Ok(()),
                    e => Err(e),
                }),
            Op::Restore(d, i, t, e, replace, idle) => {
                let opts = RestoreOptions {
                    replace: *replace,
                    expire_at: e.map(|t| now + i64::from(t)),
                    idle_secs: idle.then_some(5),
                };
                w.restore_value(*d, &k(*i), &value(*t), opts).map(drop)
            }
            Op::RestoreNew(d, i, t, e) => {
                // Only where no live key is (the caller's promise; an expired one may be there).
                if w.ttl(*d, &k(*i))? != relis::Ttl::Missing {
                    return Ok(());
                }
                let opts = RestoreOptions {
                    expire_at: e.map(|t| now + i64::from(t)),
                    ..Default::default()
                };
                // A unique-constraint error if an expired row is there: rolled back, ignored.
                match w.restore_new_value(*d, &k(*i), &value(*t), opts) {
                    Ok(_) | Err(Error::Storage(_)) => Ok(()),
                    Err(e) => Err(e),
                }
            }
            Op::Both(a, c) => {
                apply(w, a)?;
                apply(w, c)
            }
            Op::Advance(_)
            | Op::LazyExpire(..)
            | Op::Sweep(_)
            | Op::RolledBack(_)
            | Op::FailedJob(_)
            | Op::FailedGroup(_) => Ok(()),
        }
    }))
}

/// What the kept counts say, what the key rows say, and DBSIZE of each database by both.
type Seen = (Vec<KeyspaceInfo>, Vec<KeyspaceInfo>, Vec<(i64, i64)>);

fn seen(r: &relis::Reader<'_>) -> relis::Result<Seen> {
    let kept = r.keyspace_info()?;
    let counted = r.keyspace_info_counted()?;
    let sizes = (0..DBS)
        .map(|d| {
            let want = counted.iter().find(|s| s.db == d).map_or(0, |s| s.keys);
            Ok((r.dbsize(d)?, want))
        })
        .collect::<relis::Result<_>>()?;
    Ok((kept, counted, sizes))
}

fn check(what: &str, (kept, counted, sizes): Seen) {
    assert_eq!(kept, counted, "{what}: INFO keyspace against count(*)");
    for (d, (got, want)) in sizes.into_iter().enumerate() {
        assert_eq!(got, want, "{what}: DBSIZE of db {d}");
    }
}

fn open(path: &std::path::Path, clock: &ManualClock) -> Db {
    let db = Db::open_with(Options {
        path: Some(path.to_path_buf()),
        databases: DBS,
        readers: 1,
        clock: Arc::new(clock.clone()),
        ..Options::default()
    })
    .unwrap();
    // The sweep runs when an op says so.
    db.set_active_expire(false);
    db
}

fn run(ops: Vec<Op>) {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(1_000_000);
    let db = open(&dir.path().join("t.db"), &clock);
    for (i, op) in ops.iter().enumerate() {
        let what = format!("step {i} {op:?}");
        match op {
            Op::Advance(ms) => clock.advance(i64::from(*ms)),
            Op::LazyExpire(d, key) => {
                let (tx, rx) = mpsc::channel();
                db.expire_if_needed_then(*d, k(*key), move || {
                    let _ = tx.send(());
                });
                rx.recv().unwrap();
            }
            Op::Sweep(n) => {
                db.sweep_expired(usize::from(*n)).unwrap();
            }
            Op::RolledBack(inner) => {
                // Something committed before it in the same job, and after it.
                let inner = (**inner).clone();
                let got = db
                    .write(move |w| {
                        apply(w, &Op::Set(0, 9))?;
                        let _ = w.atomic(|w| {
                            apply(w, &inner)?;
                            Err::<(), _>(Error::NoSuchKey)
                        });
                        apply(w, &Op::SetPx(1, 8, 30))?;
                        seen(w)
                    })
                    .unwrap();
                check(&format!("{what} (in its job)"), got);
            }
            Op::FailedJob(inner) => {
                let inner = (**inner).clone();
                let r = db.write(move |w| {
                    apply(w, &inner)?;
                    Err::<(), _>(Error::NoSuchKey)
                });
                assert_eq!(r, Err(Error::NoSuchKey));
            }
            Op::FailedGroup(inner) => {
                let inner = (**inner).clone();
                let (tx, rx) = mpsc::channel();
                db.write_async(
                    move |w| {
                        let _ = apply(w, &inner);
                        w.poison(Error::Storage("injected".into()));
                    },
                    move |r| {
                        let _ = tx.send(r);
                    },
                );
                assert!(rx.recv().unwrap().is_err(), "{what}: the group failed");
            }
            Op::Both(..) => {
                // On the writer thread, in a group of its own.
                let op = op.clone();
                let (tx, rx) = mpsc::channel();
                db.write_async(
                    move |w| apply(w, &op).and_then(|()| seen(w)),
                    move |r| {
                        let _ = tx.send(r);
                    },
                );
                check(
                    &format!("{what} (in its job)"),
                    rx.recv().unwrap().unwrap().unwrap(),
                );
            }
            op => {
                let op = op.clone();
                let got = db
                    .write(move |w| {
                        apply(w, &op)?;
                        seen(w)
                    })
                    .unwrap();
                check(&format!("{what} (in its job)"), got);
            }
        }
        check(&what, db.read(|r| seen(r)).unwrap());
    }
    // And the file holds them: reopened, the counts are what they were.
    let before = db.read(|r| r.keyspace_info()).unwrap();
    drop(db);
    let db = open(&dir.path().join("t.db"), &clock);
    assert_eq!(db.read(|r| r.keyspace_info()).unwrap(), before);
    check("reopened", db.read(|r| seen(r)).unwrap());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn kept_counts_equal_the_key_rows(ops in proptest::collection::vec(op(), 1..80)) {
        run(ops);
    }
}

/// A fixed sequence through every kind of change, so the paths are taken whatever proptest
/// draws: expiries set, cleared by SET and overwritten by an upsert of an expired key, moved,
/// swapped, copied, restored, lazily expired, swept, flushed.
#[test]
fn every_path_keeps_the_counts() {
    use Op::*;
    run(vec![
        SetPx(0, 0, 10),
        Set(0, 1),
        SetBig(0, 2),
        PExpire(0, 2, 20),
        SetBig(0, 2),
        Append(0, 3),
        Append(0, 3),
        Incr(1, 0),
        Incr(1, 0),
        SetPx(1, 1, 5),
        Advance(6),
        // SET over the expired key, no lookup first: the upsert clears its expiry.
        Set(1, 1),
        SetPx(1, 2, 5),
        Advance(6),
        Incr(1, 2),
        SetPx(2, 3, 5),
        Advance(6),
        LazyExpire(2, 3),
        SetPx(2, 3, 5),
        SetPx(2, 4, 50),
        Advance(6),
        Sweep(10),
        Push(0, 4, 2),
        PExpire(0, 4, 30),
        Pop(0, 4, 3),
        SAdd(1, 3, 2),
        PExpire(1, 3, 30),
        SPop(1, 3, 3),
        HSet(2, 0, 2),
        PExpire(2, 0, 30),
        HDel(2, 0, 3),
        ZAdd(0, 0, 2),
        PExpire(0, 0, 30),
        ZPop(0, 0, 3),
        XAdd(1, 4),
        SetPx(0, 1, 40),
        Move(0, 1, 2),
        Copy(2, 1, 0, 1, false),
        Copy(2, 1, 1, 1, true),
        Rename(1, 1, 0, false),
        Persist(1, 0),
        SetKeepTtl(0, 1),
        GetExPersist(0, 1),
        SwapDb(0, 2),
        Restore(0, 3, 1, Some(20), true, true),
        Restore(0, 3, 0, Some(20), true, false),
        Restore(0, 3, 2, None, true, false),
        RestoreNew(1, 3, 3, Some(20)),
        SUnionStore(1, 2, 3),
        RolledBack(Box::new(FlushAll)),
        FailedJob(Box::new(FlushDb(0))),
        FailedGroup(Box::new(SetPx(1, 4, 10))),
        Both(Box::new(FlushDb(1)), Box::new(SetPx(1, 4, 10))),
        FlushDb(0),
        FlushAll,
        Set(2, 2),
    ]);
}

/// A file from before the counts (schema 10) gets them from its key rows when it is migrated:
/// expired keys the sweep has not deleted yet included, as DBSIZE counts them.
#[test]
fn an_old_file_is_counted_when_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let clock = ManualClock::new(1_000_000);
    let db = open(&path, &clock);
    db.write(|w| {
        for i in 0..50u8 {
            let d = u32::from(i) % DBS;
            let key = format!("key{i}").into_bytes();
            let expiry = if i % 4 == 0 {
                Expiry::In(10)
            } else {
                Expiry::Clear
            };
            w.set(
                d,
                &key,
                b"v",
                SetOptions {
                    expiry,
                    ..Default::default()
                },
            )?;
        }
        w.push(2, b"list", &[b(b"a")], End::Left, false)?;
        Ok(())
    })
    .unwrap();
    clock.advance(20);
    let want = db.read(|r| r.keyspace_info_counted()).unwrap();
    assert_eq!(
        want.iter()
            .map(|s| (s.db, s.keys, s.expires))
            .collect::<Vec<_>>(),
        vec![(0, 17, 5), (1, 17, 4), (2, 17, 4)]
    );
    drop(db);
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("BEGIN; DROP TABLE relis_key_counts; PRAGMA user_version = 10; COMMIT;")
            .unwrap();
    }
    let db = open(&path, &clock);
    check("migrated", db.read(|r| seen(r)).unwrap());
    assert_eq!(db.read(|r| r.keyspace_info()).unwrap(), want);
    assert_eq!(db.read(|r| r.dbsize(0)).unwrap(), 17);
    // Kept from there on.
    db.sweep_expired(100).unwrap();
    check("swept", db.read(|r| seen(r)).unwrap());
    assert_eq!(db.read(|r| r.dbsize(0)).unwrap(), 12);
    drop(db);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, relis::SCHEMA_VERSION);
}
