//! Differential test of the key row kept pending on the writer's connection (`store.rs`,
//! `PendingRow`): random writes and reads over a few keys of every collection type run twice,
//! on one database all in one transaction per batch (so a hash's, set's, list's or sorted
//! set's key row stays pending from one command to the next, as in a group commit), and on
//! another with each command in a transaction of its own (so every row is written at once).
//! Every reply must be the same, and after each batch both files must hold the same key rows,
//! column for column (version, count, mtime, head), and the same values.
//!
//! The reads in a batch include the ones that go around the writes' own lookups: the type
//! commands' own key-row statements (HLEN, SCARD, LLEN, ZCARD), TYPE, TTL, OBJECT, DBSIZE,
//! SCAN, and user SQL reading `relis_keys`.

use proptest::prelude::*;
use relis::{
    Bytes, Clock, Db, End, ExpireCond, ManualClock, Options, RankBlocks, SetOptions, SqlLimits,
    SqlValue, Writer, ZAddOptions, ZRange, ZRangeBy,
};
use std::sync::Arc;

#[derive(Clone, Debug)]
enum Op {
    HSet(u8, u8, u8),
    HDel(u8, u8),
    HIncrBy(u8, u8, i8),
    HLen(u8),
    SAdd(u8, u8),
    SRem(u8, u8),
    SMove(u8, u8, u8),
    SCard(u8),
    Push(u8, u8, bool),
    Pop(u8, bool, u8),
    LMove(u8, u8),
    LLen(u8),
    ZAdd(u8, i8, u8),
    ZRem(u8, u8),
    ZPopMin(u8),
    ZCard(u8),
    ZRank(u8),
    SetString(u8),
    Del(u8),
    PExpire(u8, u8),
    Rename(u8, u8),
    Move(u8),
    Type(u8),
    Ttl(u8),
    Object(u8),
    DbSize,
    Scan,
    SqlRow(u8),
}

fn key(k: u8) -> Vec<u8> {
    vec![b'a' + k % 3]
}

fn member(m: u8) -> Bytes {
    // Mostly integers (a set stays an intset), now and then a word (it converts).
    if m % 7 == 6 {
        Bytes::from(format!("w{}", m % 5))
    } else {
        Bytes::from(format!("{}", m % 20))
    }
}

fn op() -> impl Strategy<Value = Op> {
    let k = any::<u8>;
    prop_oneof![
        4 => (k(), any::<u8>(), any::<u8>()).prop_map(|(k, f, v)| Op::HSet(k, f, v)),
        2 => (k(), any::<u8>()).prop_map(|(k, f)| Op::HDel(k, f)),
        1 => (k(), any::<u8>(), any::<i8>()).prop_map(|(k, f, d)| Op::HIncrBy(k, f, d)),
        1 => k().prop_map(Op::HLen),
        4 => (k(), any::<u8>()).prop_map(|(k, m)| Op::SAdd(k, m)),
        2 => (k(), any::<u8>()).prop_map(|(k, m)| Op::SRem(k, m)),
        1 => (k(), k(), any::<u8>()).prop_map(|(a, b, m)| Op::SMove(a, b, m)),
        1 => k().prop_map(Op::SCard),
        4 => (k(), any::<u8>(), any::<bool>()).prop_map(|(k, v, l)| Op::Push(k, v, l)),
        2 => (k(), any::<bool>(), 1..3u8).prop_map(|(k, l, n)| Op::Pop(k, l, n)),
        1 => (k(), k()).prop_map(|(a, b)| Op::LMove(a, b)),
        1 => k().prop_map(Op::LLen),
        5 => (k(), any::<i8>(), any::<u8>()).prop_map(|(k, s, m)| Op::ZAdd(k, s, m)),
        2 => (k(), any::<u8>()).prop_map(|(k, m)| Op::ZRem(k, m)),
        1 => k().prop_map(Op::ZPopMin),
        1 => k().prop_map(Op::ZCard),
        1 => k().prop_map(Op::ZRank),
        1 => k().prop_map(Op::SetString),
        1 => k().prop_map(Op::Del),
        1 => (k(), 1..4u8).prop_map(|(k, ms)| Op::PExpire(k, ms)),
        1 => (k(), k()).prop_map(|(a, b)| Op::Rename(a, b)),
        1 => k().prop_map(Op::Move),
        1 => k().prop_map(Op::Type),
        1 => k().prop_map(Op::Ttl),
        1 => k().prop_map(Op::Object),
        1 => Just(Op::DbSize),
        1 => Just(Op::Scan),
        2 => k().prop_map(Op::SqlRow),
    ]
}

/// Runs `op` on `w`; the reply as text (errors included).
fn apply(w: &mut Writer<'_>, now: i64, op: &Op) -> String {
    match op {
        Op::HSet(k, f, v) => {
            let pair = (member(*f), Bytes::from(format!("{}", v % 9)));
            format!("{:?}", w.hset(0, &key(*k), &[pair]))
        }
        Op::HDel(k, f) => format!("{:?}", w.hdel(0, &key(*k), &[member(*f)])),
        Op::HIncrBy(k, f, d) => {
            format!("{:?}", w.hincrby(0, &key(*k), &member(*f), i64::from(*d)))
        }
        Op::HLen(k) => format!("{:?}", w.hlen(0, &key(*k))),
        Op::SAdd(k, m) => format!("{:?}", w.sadd(0, &key(*k), &[member(*m)])),
        Op::SRem(k, m) => format!("{:?}", w.srem(0, &key(*k), &[member(*m)])),
        Op::SMove(a, b, m) => format!("{:?}", w.smove(0, &key(*a), &key(*b), &member(*m))),
        Op::SCard(k) => format!("{:?}", w.scard(0, &key(*k))),
        Op::Push(k, v, left) => {
            let end = if *left { End::Left } else { End::Right };
            format!("{:?}", w.push(0, &key(*k), &[member(*v)], end, false))
        }
        Op::Pop(k, left, n) => {
            let end = if *left { End::Left } else { End::Right };
            format!("{:?}", w.pop(0, &key(*k), end, usize::from(*n)))
        }
        Op::LMove(a, b) => format!(
            "{:?}",
            w.lmove(0, &key(*a), &key(*b), End::Right, End::Left)
        ),
        Op::LLen(k) => format!("{:?}", w.llen(0, &key(*k))),
        Op::ZAdd(k, s, m) => format!(
            "{:?}",
            w.zadd(
                0,
                &key(*k),
                ZAddOptions::default(),
                &[(f64::from(*s % 10), member(*m))]
            )
        ),
        Op::ZRem(k, m) => format!("{:?}", w.zrem(0, &key(*k), &[member(*m)])),
        Op::ZPopMin(k) => format!("{:?}", w.zpop(0, &key(*k), false, 1)),
        Op::ZCard(k) => format!("{:?}", w.zcard(0, &key(*k))),
        Op::ZRank(k) => format!("{:?}", w.zrange(0, &key(*k), &all())),
        Op::SetString(k) => format!("{:?}", w.set(0, &key(*k), b"s", SetOptions::default())),
        Op::Del(k) => format!("{:?}", w.del(0, &[Bytes::from(key(*k))])),
        Op::PExpire(k, ms) => format!(
            "{:?}",
            w.expire_at(0, &key(*k), now + i64::from(*ms), ExpireCond::Always)
        ),
        Op::Rename(a, b) => format!("{:?}", w.rename(0, &key(*a), &key(*b), false)),
        Op::Move(k) => format!("{:?}", w.move_key(0, &key(*k), 1)),
        Op::Type(k) => format!("{:?}", w.key_type(0, &key(*k))),
        Op::Ttl(k) => format!("{:?}", w.ttl(0, &key(*k))),
        Op::Object(k) => format!("{:?}", w.object(0, &key(*k))),
        Op::DbSize => format!("{:?} {:?}", w.dbsize(0), w.dbsize(1)),
        Op::Scan => format!("{:?}", w.scan(0, None, 100, None, None)),
        Op::SqlRow(k) => format!(
            "{:?}",
            w.sql_query(
                "SELECT type, count, expire_at FROM redis_keys WHERE db = 0 AND key = ?1",
                vec![SqlValue::Text(Bytes::from(key(*k)))],
                &SqlLimits::default(),
            )
            .map(|o| o.rows)
        ),
    }
}

fn all() -> ZRange {
    ZRange {
        by: ZRangeBy::Rank(0, -1),
        rev: false,
        limit: None,
    }
}

/// Everything both files hold: every key row (its id, version, count, mtime and encoding, as
/// OBJECT reads them), and every value.
fn snapshot(db: &Db) -> Vec<String> {
    let rows = db
        .sql_query(
            "SELECT db, key, type, expire_at, count FROM redis_keys ORDER BY db, key",
            (),
        )
        .unwrap()
        .rows;
    let mut out: Vec<String> = rows.iter().map(|r| format!("{r:?}")).collect();
    let values = db
        .read(|r| {
            let mut v = Vec::new();
            for d in 0..2 {
                for k in 0..3 {
                    let k = key(k);
                    v.push(format!(
                        "{d} {:?} {:?} {:?} {:?} {:?}",
                        r.object(d, &k),
                        r.hgetall(d, &k),
                        r.smembers(d, &k).map(|m| m.map(|mut m| {
                            m.sort();
                            m
                        })),
                        r.lrange(d, &k, 0, -1),
                        r.zrange(d, &k, &all()),
                    ));
                }
            }
            Ok(v)
        })
        .unwrap();
    out.extend(values);
    // The rank rows agree with the members.
    let checks = db
        .write(|w| {
            let mut v = Vec::new();
            for d in 0..2 {
                for k in 0..3 {
                    v.push(format!("{:?}", w.zcheck(d, &key(k))));
                }
            }
            Ok(v)
        })
        .unwrap();
    out.extend(checks);
    out
}

fn open(clock: &Arc<ManualClock>) -> Db {
    Db::open_with(Options {
        clock: clock.clone() as Arc<dyn Clock>,
        // Rank blocks from a dozen members, so sorted sets cross the threshold both ways.
        rank_blocks: RankBlocks {
            threshold: 12,
            block: 4,
            fanout: 3,
        },
        ..Options::default()
    })
    .unwrap()
}

fn run(batches: Vec<Vec<Op>>) {
    let clock = Arc::new(ManualClock::new(1_000_000));
    let (grouped, single) = (open(&clock), open(&clock));
    for batch in batches {
        let (ops, now) = (batch.clone(), clock.now_ms());
        let got = grouped
            .write(move |w| Ok(ops.iter().map(|op| apply(w, now, op)).collect::<Vec<_>>()))
            .unwrap();
        let want: Vec<String> = batch
            .iter()
            .map(|op| {
                let op = op.clone();
                single.write(move |w| Ok(apply(w, now, &op))).unwrap()
            })
            .collect();
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "reply to {:?} (op {i} of {batch:?})", batch[i]);
        }
        assert_eq!(snapshot(&grouped), snapshot(&single), "after {batch:?}");
        clock.advance(2);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_pending_key_row_reads_and_writes_as_one_written_at_once(
        batches in proptest::collection::vec(proptest::collection::vec(op(), 1..40), 1..8)
    ) {
        run(batches);
    }
}

/// A run of writes to one hash, then reads of its row by every other route, in one
/// transaction: the pattern a group commit of HSETs to a hot key makes.
#[test]
fn a_run_of_writes_to_one_key_then_every_read() {
    let mut ops = Vec::new();
    for i in 0..30 {
        ops.push(Op::HSet(0, i, i));
    }
    ops.extend([
        Op::HLen(0),
        Op::SqlRow(0),
        Op::HSet(0, 99, 1),
        Op::Object(0),
    ]);
    for i in 0..30 {
        ops.push(Op::ZAdd(1, i as i8, i));
    }
    ops.extend([Op::ZCard(1), Op::SqlRow(1), Op::ZAdd(1, 3, 3), Op::ZRank(1)]);
    for i in 0..30 {
        ops.push(Op::Push(2, i, i % 2 == 0));
    }
    ops.extend([Op::LLen(2), Op::SqlRow(2), Op::Pop(2, true, 1)]);
    ops.extend([
        Op::DbSize,
        Op::Scan,
        Op::Rename(0, 1),
        Op::HLen(1),
        Op::Del(2),
        Op::ZCard(1),
    ]);
    run(vec![ops]);
}
