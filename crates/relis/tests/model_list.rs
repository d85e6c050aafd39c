//! Model test of the list family: random sequences of list operations (and a few string and
//! expiry ones, for WRONGTYPE and "a write to an expired list starts from empty"), with the
//! clock moving, give the same results through the engine as through a `VecDeque` model of
//! Redis's semantics. Also the cost check: pushes and pops do not slow down as a list grows
//! (`cargo test --release -p relis --test model_list -- --ignored --nocapture`).

use proptest::prelude::*;
use relis::{Bytes, Clock, Db, End, Error, ExpireCond, LposOptions, ManualClock, Options, Side};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;

#[derive(Clone, Debug)]
enum Op {
    Push(u8, bool, Vec<u8>),
    PushX(u8, bool, u8),
    Pop(u8, bool, u8),
    Len(u8),
    Index(u8, i8),
    Range(u8, i8, i8),
    Set(u8, i8, u8),
    Insert(u8, bool, u8, u8),
    Rem(u8, i8, u8),
    Trim(u8, i8, i8),
    Pos(u8, u8, i8, Option<u8>, u8),
    Move(u8, u8, bool, bool),
    MPop(u8, u8, bool, u8),
    SetString(u8),
    Del(u8),
    PExpire(u8, u16),
    Advance(u16),
}

fn key(k: u8) -> Vec<u8> {
    format!("k{}", k % 4).into_bytes()
}

fn val(v: u8) -> Bytes {
    // Few distinct values, so LREM/LINSERT/LPOS find matches.
    Bytes::from(format!("v{}", v % 5))
}

fn end(left: bool) -> End {
    if left {
        End::Left
    } else {
        End::Right
    }
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<u8>(), any::<bool>(), proptest::collection::vec(any::<u8>(), 1..5))
            .prop_map(|(k, l, v)| Op::Push(k, l, v)),
        1 => (any::<u8>(), any::<bool>(), any::<u8>()).prop_map(|(k, l, v)| Op::PushX(k, l, v)),
        2 => (any::<u8>(), any::<bool>(), 0..4u8).prop_map(|(k, l, n)| Op::Pop(k, l, n)),
        1 => any::<u8>().prop_map(Op::Len),
        1 => (any::<u8>(), any::<i8>()).prop_map(|(k, i)| Op::Index(k, i % 8)),
        1 => (any::<u8>(), any::<i8>(), any::<i8>()).prop_map(|(k, a, b)| Op::Range(k, a % 8, b % 8)),
        1 => (any::<u8>(), any::<i8>(), any::<u8>()).prop_map(|(k, i, v)| Op::Set(k, i % 8, v)),
        2 => (any::<u8>(), any::<bool>(), any::<u8>(), any::<u8>())
            .prop_map(|(k, b, p, v)| Op::Insert(k, b, p, v)),
        1 => (any::<u8>(), any::<i8>(), any::<u8>()).prop_map(|(k, c, v)| Op::Rem(k, c % 4, v)),
        1 => (any::<u8>(), any::<i8>(), any::<i8>()).prop_map(|(k, a, b)| Op::Trim(k, a % 8, b % 8)),
        1 => (any::<u8>(), any::<u8>(), any::<i8>(), proptest::option::of(0..3u8), 0..4u8)
            .prop_map(|(k, v, r, c, m)| Op::Pos(k, v, if r % 4 == 0 { 1 } else { r % 4 }, c, m)),
        1 => (any::<u8>(), any::<u8>(), any::<bool>(), any::<bool>())
            .prop_map(|(a, b, f, t)| Op::Move(a, b, f, t)),
        1 => (any::<u8>(), any::<u8>(), any::<bool>(), 1..4u8)
            .prop_map(|(a, b, l, n)| Op::MPop(a, b, l, n)),
        1 => any::<u8>().prop_map(Op::SetString),
        1 => any::<u8>().prop_map(Op::Del),
        1 => (any::<u8>(), 1..40u16).prop_map(|(k, t)| Op::PExpire(k, t)),
        1 => (0..30u16).prop_map(Op::Advance),
    ]
}

#[derive(Clone, Debug)]
enum Value {
    Str,
    List(VecDeque<Bytes>),
}

/// The model: key -> (value, expiry ms).
#[derive(Default)]
struct Model {
    map: HashMap<Vec<u8>, (Value, Option<i64>)>,
}

impl Model {
    fn live(&mut self, k: &[u8], now: i64) -> Option<&mut Value> {
        if self
            .map
            .get(k)
            .is_some_and(|(_, e)| e.is_some_and(|e| e <= now))
        {
            self.map.remove(k);
        }
        self.map.get_mut(k).map(|(v, _)| v)
    }

    /// The list at `k`: Ok(None) when absent, Err for a string.
    fn list(&mut self, k: &[u8], now: i64) -> Result<Option<&mut VecDeque<Bytes>>, Error> {
        match self.live(k, now) {
            None => Ok(None),
            Some(Value::Str) => Err(Error::WrongType),
            Some(Value::List(l)) => Ok(Some(l)),
        }
    }

    fn drop_if_empty(&mut self, k: &[u8]) {
        if matches!(self.map.get(k), Some((Value::List(l), _)) if l.is_empty()) {
            self.map.remove(k);
        }
    }
}

fn norm(i: i64, len: i64) -> Option<usize> {
    let i = if i < 0 { len + i } else { i };
    (0..len).contains(&i).then_some(i as usize)
}

fn range(len: i64, start: i64, end: i64) -> Option<(usize, usize)> {
    let start = (if start < 0 { len + start } else { start }).max(0);
    let end = if end < 0 { len + end } else { end };
    if start > end || start >= len {
        return None;
    }
    Some((start as usize, end.min(len - 1) as usize))
}

fn run(ops: Vec<Op>) {
    let clock = ManualClock::new(1_000_000);
    let db = Db::open_with(Options {
        clock: Arc::new(clock.clone()),
        ..Options::default()
    })
    .unwrap();
    let mut m = Model::default();
    for op in ops {
        let now = clock.now_ms();
        match op.clone() {
            Op::Push(k, left, vs) => {
                let vs: Vec<Bytes> = vs.into_iter().map(val).collect();
                let want = match m.list(&key(k), now) {
                    Err(e) => Err(e),
                    Ok(l) => {
                        if l.is_none() {
                            m.map.insert(key(k), (Value::List(VecDeque::new()), None));
                        }
                        let Some((Value::List(l), _)) = m.map.get_mut(&key(k)) else {
                            unreachable!()
                        };
                        for v in &vs {
                            if left {
                                l.push_front(v.clone());
                            } else {
                                l.push_back(v.clone());
                            }
                        }
                        Ok(l.len() as i64)
                    }
                };
                let got = if left {
                    db.lpush(key(k), &vs)
                } else {
                    db.rpush(key(k), &vs)
                };
                assert_eq!(got, want, "{op:?}");
            }
            Op::PushX(k, left, v) => {
                let want = m.list(&key(k), now).map(|l| match l {
                    None => 0,
                    Some(l) => {
                        if left {
                            l.push_front(val(v));
                        } else {
                            l.push_back(val(v));
                        }
                        l.len() as i64
                    }
                });
                assert_eq!(db.pushx(key(k), end(left), &[val(v)]), want, "{op:?}");
            }
            Op::Pop(k, left, n) => {
                let want = m.list(&key(k), now).map(|l| match l {
                    None => Vec::new(),
                    Some(l) => (0..n)
                        .filter_map(|_| if left { l.pop_front() } else { l.pop_back() })
                        .collect(),
                });
                m.drop_if_empty(&key(k));
                assert_eq!(db.pop(key(k), end(left), n as usize), want, "{op:?}");
            }
            Op::Len(k) => {
                let want = m
                    .list(&key(k), now)
                    .map(|l| l.map_or(0, |l| l.len() as i64));
                assert_eq!(db.llen(key(k)), want, "{op:?}");
            }
            Op::Index(k, i) => {
                let want = m
                    .list(&key(k), now)
                    .map(|l| l.and_then(|l| norm(i as i64, l.len() as i64).map(|i| l[i].clone())));
                assert_eq!(db.lindex(key(k), i as i64), want, "{op:?}");
            }
            Op::Range(k, a, b) => {
                let want = m.list(&key(k), now).map(|l| {
                    l.and_then(|l| {
                        range(l.len() as i64, a as i64, b as i64)
                            .map(|(a, b)| l.range(a..=b).cloned().collect())
                    })
                    .unwrap_or_default()
                });
                assert_eq!(db.lrange(key(k), a as i64, b as i64), want, "{op:?}");
            }
            Op::Set(k, i, v) => {
                let want = match m.list(&key(k), now) {
                    Err(e) => Err(e),
                    Ok(None) => Err(Error::NoSuchKey),
                    Ok(Some(l)) => Ok(match norm(i as i64, l.len() as i64) {
                        Some(i) => {
                            l[i] = val(v);
                            true
                        }
                        None => false,
                    }),
                };
                assert_eq!(db.lset(key(k), i as i64, val(v)), want, "{op:?}");
            }
            Op::Insert(k, before, p, v) => {
                let want = m.list(&key(k), now).map(|l| match l {
                    None => 0,
                    Some(l) => match l.iter().position(|x| *x == val(p)) {
                        None => -1,
                        Some(i) => {
                            l.insert(if before { i } else { i + 1 }, val(v));
                            l.len() as i64
                        }
                    },
                });
                let side = if before { Side::Before } else { Side::After };
                assert_eq!(db.linsert(key(k), side, val(p), val(v)), want, "{op:?}");
            }
            Op::Rem(k, c, v) => {
                let want = m.list(&key(k), now).map(|l| match l {
                    None => 0,
                    Some(l) => {
                        let target = val(v);
                        let limit = if c == 0 {
                            usize::MAX
                        } else {
                            c.unsigned_abs() as usize
                        };
                        let mut removed = 0;
                        if c >= 0 {
                            let mut i = 0;
                            while i < l.len() && removed < limit {
                                if l[i] == target {
                                    l.remove(i);
                                    removed += 1;
                                } else {
                                    i += 1;
                                }
                            }
                        } else {
                            let mut i = l.len();
                            while i > 0 && removed < limit {
                                i -= 1;
                                if l[i] == target {
                                    l.remove(i);
                                    removed += 1;
                                }
                            }
                        }
                        removed as i64
                    }
                });
                m.drop_if_empty(&key(k));
                assert_eq!(db.lrem(key(k), c as i64, val(v)), want, "{op:?}");
            }
            Op::Trim(k, a, b) => {
                let want = m.list(&key(k), now).map(|l| {
                    if let Some(l) = l {
                        match range(l.len() as i64, a as i64, b as i64) {
                            Some((a, b)) => {
                                l.truncate(b + 1);
                                l.drain(..a);
                            }
                            None => l.clear(),
                        }
                    }
                });
                m.drop_if_empty(&key(k));
                assert_eq!(db.ltrim(key(k), a as i64, b as i64), want, "{op:?}");
            }
            Op::Pos(k, v, rank, count, maxlen) => {
                let opts = LposOptions {
                    rank: rank as i64,
                    count: count.map(i64::from),
                    maxlen: maxlen as i64,
                };
                let want = m.list(&key(k), now).map(|l| {
                    let Some(l) = l else { return Vec::new() };
                    let n = l.len();
                    let scan = if maxlen > 0 {
                        (maxlen as usize).min(n)
                    } else {
                        n
                    };
                    let idx: Vec<usize> = if rank > 0 {
                        (0..scan).collect()
                    } else {
                        (n - scan..n).rev().collect()
                    };
                    let hits = idx
                        .into_iter()
                        .filter(|&i| l[i] == val(v))
                        .skip(rank.unsigned_abs() as usize - 1)
                        .map(|i| i as i64);
                    match count {
                        None => hits.take(1).collect(),
                        Some(0) => hits.collect(),
                        Some(c) => hits.take(c as usize).collect(),
                    }
                });
                assert_eq!(db.lpos(key(k), val(v), opts), want, "{op:?}");
            }
            Op::Move(a, b, from_left, to_left) => {
                let (src, dst) = (key(a), key(b));
                let want = (|| {
                    let Some(s) = m.list(&src, now)? else {
                        return Ok(None);
                    };
                    let _ = s;
                    m.list(&dst, now)?;
                    let Some((Value::List(s), _)) = m.map.get_mut(&src) else {
                        unreachable!()
                    };
                    let v = if from_left {
                        s.pop_front()
                    } else {
                        s.pop_back()
                    }
                    .unwrap();
                    let entry = m
                        .map
                        .entry(dst.clone())
                        .or_insert((Value::List(VecDeque::new()), None));
                    let Value::List(d) = &mut entry.0 else {
                        unreachable!()
                    };
                    if to_left {
                        d.push_front(v.clone());
                    } else {
                        d.push_back(v.clone());
                    }
                    m.drop_if_empty(&src);
                    Ok(Some(v))
                })();
                assert_eq!(
                    db.lmove(&src, &dst, end(from_left), end(to_left)),
                    want,
                    "{op:?}"
                );
            }
            Op::MPop(a, b, left, n) => {
                let keys = [key(a), key(b)];
                let want = (|| {
                    for k in &keys {
                        if let Some(l) = m.list(k, now)? {
                            let popped: Vec<Bytes> = (0..n)
                                .filter_map(|_| if left { l.pop_front() } else { l.pop_back() })
                                .collect();
                            m.drop_if_empty(k);
                            return Ok(Some((Bytes::from(k.clone()), popped)));
                        }
                    }
                    Ok(None)
                })();
                assert_eq!(db.lmpop(&keys, end(left), n as usize), want, "{op:?}");
            }
            Op::SetString(k) => {
                db.set(key(k), "s").unwrap();
                m.map.insert(key(k), (Value::Str, None));
            }
            Op::Del(k) => {
                let want = m.live(&key(k), now).is_some() as i64;
                m.map.remove(&key(k));
                assert_eq!(db.del(&[key(k)]).unwrap(), want, "{op:?}");
            }
            Op::PExpire(k, t) => {
                let want = m.live(&key(k), now).is_some();
                if let Some(e) = m.map.get_mut(&key(k)) {
                    e.1 = Some(now + t as i64);
                }
                assert_eq!(
                    db.pexpire(key(k), t as i64, ExpireCond::Always).unwrap(),
                    want,
                    "{op:?}"
                );
            }
            Op::Advance(ms) => clock.advance(ms as i64),
        }
    }
    // Finally every list reads back whole.
    let now = clock.now_ms();
    for k in 0..4u8 {
        let want: Vec<Bytes> = match m.list(&key(k), now) {
            Ok(Some(l)) => l.iter().cloned().collect(),
            _ => continue,
        };
        assert_eq!(db.lrange(key(k), 0, -1).unwrap(), want);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn engine_agrees_with_model(ops in proptest::collection::vec(op(), 1..150)) {
        run(ops);
    }
}

/// Repeated LINSERTs at one spot cost the same each time (dense renumbering never degrades).
#[test]
fn linsert_at_one_spot_stays_correct() {
    let db = Db::open_in_memory().unwrap();
    let vals: Vec<String> = (0..300).map(|i| format!("e{i}")).collect();
    db.rpush("l", &vals).unwrap();
    let mut model: Vec<String> = vals.clone();
    for i in 0..200 {
        let v = format!("n{i}");
        // After "e10": the new element always lands at index 11.
        assert_eq!(
            db.linsert("l", Side::After, "e10", &v).unwrap(),
            model.len() as i64 + 1
        );
        model.insert(11, v);
    }
    let got: Vec<String> = db
        .lrange("l", 0, -1)
        .unwrap()
        .into_iter()
        .map(|b| String::from_utf8(b.to_vec()).unwrap())
        .collect();
    assert_eq!(got, model);
}

fn per_op_us(n: usize, mut f: impl FnMut(usize)) -> f64 {
    let t = Instant::now();
    for i in 0..n {
        f(i);
    }
    t.elapsed().as_secs_f64() * 1e6 / n as f64
}

/// Push/pop cost at the ends does not grow with the list, and neither does LINSERT at one spot.
/// Each operation is its own transaction here, as through the server without pipelining.
#[test]
#[ignore = "timing: run in release with --ignored"]
fn push_pop_cost_is_flat() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("bench.db")).unwrap();
    let n = 10_000;
    let big = 200_000usize;
    let measure = |db: &Db, key: &str| {
        let lpush = per_op_us(n, |i| {
            db.lpush(key, &[format!("v{i}")]).unwrap();
        });
        let rpop = per_op_us(n, |_| {
            db.rpop(key).unwrap();
        });
        let lindex = per_op_us(n, |i| {
            db.lindex(key, (i * 7) as i64 % 1000).unwrap();
        });
        (lpush, rpop, lindex)
    };
    db.rpush("small", &["x"]).unwrap();
    let small = measure(&db, "small");
    // Build the big list in batches (one transaction each).
    for chunk in 0..big / 10_000 {
        let vals: Vec<String> = (0..10_000).map(|i| format!("b{chunk}-{i}")).collect();
        db.rpush("big", &vals).unwrap();
    }
    let large = measure(&db, "big");
    db.rpush(
        "small",
        &(0..20).map(|i| format!("s{i}")).collect::<Vec<_>>(),
    )
    .unwrap();
    let ins = |key: &str| {
        let pivot = String::from_utf8(db.lindex(key, 10).unwrap().unwrap().to_vec()).unwrap();
        per_op_us(1000, |i| {
            db.linsert(key, Side::After, &pivot, format!("n{i}"))
                .unwrap();
        })
    };
    let ins_small = ins("small");
    let ins_large = ins("big");
    println!("per operation (µs)   at ~1 element   at {big} elements");
    println!("LPUSH                {:>13.2}   {:>13.2}", small.0, large.0);
    println!("RPOP                 {:>13.2}   {:>13.2}", small.1, large.1);
    println!("LINDEX               {:>13.2}   {:>13.2}", small.2, large.2);
    println!(
        "LINSERT at index 11  {:>13.2}   {:>13.2}",
        ins_small, ins_large
    );
    // Generous bounds: the point is "does not grow with N", not a precise ratio.
    assert!(
        large.0 < small.0 * 2.0 + 20.0,
        "LPUSH grew: {small:?} vs {large:?}"
    );
    assert!(
        large.1 < small.1 * 2.0 + 20.0,
        "RPOP grew: {small:?} vs {large:?}"
    );
    assert!(ins_large < ins_small * 2.0 + 20.0, "LINSERT grew");
}

/// What one LRANGE of 100 elements costs in the engine alone (no server, no thread hop).
#[test]
#[ignore = "timing: run in release with --ignored"]
fn lrange_100_engine_cost() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("bench.db")).unwrap();
    let vals: Vec<String> = (0..1000).map(|i| format!("element-{i}")).collect();
    db.rpush("l", &vals).unwrap();
    let n: usize = std::env::var("LRANGE_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let us = db
        .read(move |r| {
            let mut best = f64::MAX;
            for _ in 0..5 {
                let t = Instant::now();
                for _ in 0..n {
                    let v = r.lrange(0, b"l", 0, 99)?.unwrap();
                    assert_eq!(v.len(), 100);
                }
                best = best.min(t.elapsed().as_secs_f64() * 1e6 / n as f64);
            }
            Ok(best)
        })
        .unwrap();
    println!("LRANGE 0 99 in the engine: {us:.2} µs (best of 5 rounds)");
}
