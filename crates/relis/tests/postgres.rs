//! The shared key table of the PostgreSQL backend (`relis::postgres`) against a real
//! PostgreSQL the test starts: groups on separate connections (as on separate nodes) that
//! touch the same keys never lose an update.

mod common;

use common::pg::Pg;
use relis::postgres::{is_conflict, Change, Group, PgKeys, Stored};

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
    }
}

#[test]
fn the_schema_is_created_once_and_shared() {
    let Some(pg) = Pg::start() else { return };
    let mut a = PgKeys::connect(&pg.url()).unwrap();
    let mut b = PgKeys::connect(&pg.url()).unwrap();
    assert_eq!(a.schema_version().unwrap(), 1);
    assert_eq!(b.schema_version().unwrap(), 1);

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
