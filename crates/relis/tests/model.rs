//! Model test: random sequences of string and key operations, with the clock moving, give the
//! same results through the engine as through a plain in-memory model of Redis's semantics.

use proptest::prelude::*;
use relis::{Clock, Db, Error, ExpireCond, ManualClock, Options, Ttl};
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Clone, Debug)]
enum Op {
    Set(u8, u8),
    SetPx(u8, u8, u16),
    Get(u8),
    Del(u8),
    Incr(u8, i8),
    Append(u8, u8),
    Exists(u8),
    Rename(u8, u8),
    PExpire(u8, u16),
    Persist(u8),
    GetDel(u8),
    SetRange(u8, u8, u8),
    Ttl(u8),
    Advance(u16),
}

fn key(k: u8) -> Vec<u8> {
    format!("k{}", k % 6).into_bytes()
}

fn val(v: u8) -> Vec<u8> {
    // Some values are integers so INCR has something to add to.
    if v.is_multiple_of(3) {
        format!("{}", v as i64 - 100).into_bytes()
    } else {
        format!("v{v}").into_bytes()
    }
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (any::<u8>(), any::<u8>()).prop_map(|(k, v)| Op::Set(k, v)),
        (any::<u8>(), any::<u8>(), 1..50u16).prop_map(|(k, v, t)| Op::SetPx(k, v, t)),
        any::<u8>().prop_map(Op::Get),
        any::<u8>().prop_map(Op::Del),
        (any::<u8>(), any::<i8>()).prop_map(|(k, d)| Op::Incr(k, d)),
        (any::<u8>(), any::<u8>()).prop_map(|(k, v)| Op::Append(k, v)),
        any::<u8>().prop_map(Op::Exists),
        (any::<u8>(), any::<u8>()).prop_map(|(a, b)| Op::Rename(a, b)),
        (any::<u8>(), 0..50u16).prop_map(|(k, t)| Op::PExpire(k, t)),
        any::<u8>().prop_map(Op::Persist),
        any::<u8>().prop_map(Op::GetDel),
        (any::<u8>(), 0..8u8, any::<u8>()).prop_map(|(k, o, v)| Op::SetRange(k, o, v)),
        any::<u8>().prop_map(Op::Ttl),
        (0..30u16).prop_map(Op::Advance),
    ]
}

/// The model: key -> (value, expiry ms).
#[derive(Default)]
struct Model {
    map: HashMap<Vec<u8>, (Vec<u8>, Option<i64>)>,
}

impl Model {
    fn live(&mut self, k: &[u8], now: i64) -> Option<&mut (Vec<u8>, Option<i64>)> {
        if self
            .map
            .get(k)
            .is_some_and(|(_, e)| e.is_some_and(|e| e <= now))
        {
            self.map.remove(k);
        }
        self.map.get_mut(k)
    }
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
        match op {
            Op::Set(k, v) => {
                db.set(key(k), val(v)).unwrap();
                m.map.insert(key(k), (val(v), None));
            }
            Op::SetPx(k, v, t) => {
                db.set_with(
                    key(k),
                    val(v),
                    relis::SetOptions {
                        expiry: relis::Expiry::In(t as i64),
                        ..Default::default()
                    },
                )
                .unwrap();
                m.map.insert(key(k), (val(v), Some(now + t as i64)));
            }
            Op::Get(k) => {
                let want = m.live(&key(k), now).map(|(v, _)| v.clone());
                assert_eq!(db.get(key(k)).unwrap().map(|b| b.to_vec()), want, "GET");
            }
            Op::Del(k) => {
                let want = m.live(&key(k), now).is_some() as i64;
                m.map.remove(&key(k));
                assert_eq!(db.del(&[key(k)]).unwrap(), want, "DEL");
            }
            Op::Incr(k, d) => {
                let cur = m.live(&key(k), now).map(|(v, e)| (v.clone(), *e));
                let want = match &cur {
                    None => Ok(d as i64),
                    Some((v, _)) => relis::parse_i64(v)
                        .ok_or(Error::NotInteger)
                        .and_then(|n| n.checked_add(d as i64).ok_or(Error::Overflow)),
                };
                let got = db.incr_by(key(k), d as i64);
                assert_eq!(got, want, "INCRBY");
                if let Ok(n) = want {
                    let exp = cur.and_then(|(_, e)| e);
                    m.map.insert(key(k), (n.to_string().into_bytes(), exp));
                }
            }
            Op::Append(k, v) => {
                let entry = m.live(&key(k), now).map(|(v, e)| (v.clone(), *e));
                let (mut cur, exp) = entry.unwrap_or_default();
                cur.extend_from_slice(&val(v));
                assert_eq!(
                    db.append(key(k), val(v)).unwrap(),
                    cur.len() as i64,
                    "APPEND"
                );
                m.map.insert(key(k), (cur, exp));
            }
            Op::Exists(k) => {
                let want = m.live(&key(k), now).is_some() as i64;
                assert_eq!(db.exists(&[key(k)]).unwrap(), want, "EXISTS");
            }
            Op::Rename(a, b) => {
                let src = m.live(&key(a), now).cloned();
                let got = db.rename(key(a), key(b));
                match src {
                    None => assert_eq!(got, Err(Error::NoSuchKey), "RENAME missing"),
                    Some(entry) => {
                        got.unwrap();
                        m.map.remove(&key(a));
                        m.map.insert(key(b), entry);
                    }
                }
            }
            Op::PExpire(k, t) => {
                let exists = m.live(&key(k), now).is_some();
                let got = db.pexpire(key(k), t as i64, ExpireCond::Always).unwrap();
                assert_eq!(got, exists, "PEXPIRE");
                if exists {
                    if t == 0 {
                        m.map.remove(&key(k));
                    } else if let Some(e) = m.map.get_mut(&key(k)) {
                        e.1 = Some(now + t as i64);
                    }
                }
            }
            Op::Persist(k) => {
                let want = m
                    .live(&key(k), now)
                    .is_some_and(|(_, e)| e.take().is_some());
                assert_eq!(db.persist(key(k)).unwrap(), want, "PERSIST");
            }
            Op::GetDel(k) => {
                let want = m.live(&key(k), now).map(|(v, _)| v.clone());
                m.map.remove(&key(k));
                assert_eq!(
                    db.getdel(key(k)).unwrap().map(|b| b.to_vec()),
                    want,
                    "GETDEL"
                );
            }
            Op::SetRange(k, off, v) => {
                let entry = m.live(&key(k), now).map(|(v, e)| (v.clone(), *e));
                let (mut cur, exp) = entry.clone().unwrap_or_default();
                let piece = val(v);
                let off = off as usize;
                if cur.len() < off + piece.len() {
                    cur.resize(off + piece.len(), 0);
                }
                cur[off..off + piece.len()].copy_from_slice(&piece);
                assert_eq!(
                    db.setrange(key(k), off, &piece).unwrap(),
                    cur.len() as i64,
                    "SETRANGE"
                );
                m.map.insert(key(k), (cur, exp));
            }
            Op::Ttl(k) => {
                let want = match m.live(&key(k), now) {
                    None => Ttl::Missing,
                    Some((_, None)) => Ttl::Persistent,
                    Some((_, Some(at))) => Ttl::At(*at),
                };
                assert_eq!(db.ttl(key(k)).unwrap(), want, "TTL");
            }
            Op::Advance(ms) => clock.advance(ms as i64),
        }
    }
    // Whatever expired is gone for good once swept, and nothing else is.
    let now = clock.now_ms();
    m.map.retain(|_, (_, e)| e.is_none_or(|e| e > now));
    db.sweep_expired(1000).unwrap();
    assert_eq!(
        db.dbsize().unwrap(),
        m.map.len() as i64,
        "DBSIZE after sweep"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn engine_agrees_with_model(ops in proptest::collection::vec(op(), 1..120)) {
        run(ops);
    }
}
