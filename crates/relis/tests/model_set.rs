//! Model test: random sequences of set operations (with strings in the way, expiry and the clock
//! moving) give the same results through the engine as through a plain in-memory model of Redis
//! 7.0's semantics, including its intset/hashtable encoding and the reply order Relis promises
//! (numeric for what Redis would hold as an intset, member order otherwise).

use proptest::prelude::*;
use relis::{Bytes, Clock, Db, Error, ExpireCond, ManualClock, Options};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

const MAX_INTSET: usize = 512;

#[derive(Clone, Debug)]
enum Op {
    SAdd(u8, Vec<u8>),
    SRem(u8, Vec<u8>),
    SIsMember(u8, u8),
    SMIsMember(u8, Vec<u8>),
    SCard(u8),
    SMembers(u8),
    SMove(u8, u8, u8),
    Algebra(u8, Vec<u8>),
    Store(u8, u8, Vec<u8>),
    InterCard(Vec<u8>, u8),
    SPop(u8),
    SPopCount(u8, u8),
    SRandMember(u8, i8),
    SScan(u8, u8),
    Encoding(u8),
    SetString(u8),
    Del(u8),
    PExpire(u8, u16),
    Advance(u16),
}

fn key(k: u8) -> Vec<u8> {
    format!("k{}", k % 5).into_bytes()
}

fn member(m: u8) -> Vec<u8> {
    const POOL: &[&str] = &["0", "1", "2", "3", "7", "10", "-3", "a", "b", "01", ""];
    POOL[m as usize % POOL.len()].as_bytes().to_vec()
}

fn keys(v: &[u8]) -> Vec<Vec<u8>> {
    v.iter().map(|k| key(*k)).collect()
}

fn members(v: &[u8]) -> Vec<Vec<u8>> {
    v.iter().map(|m| member(*m)).collect()
}

fn op() -> impl Strategy<Value = Op> {
    let some = || proptest::collection::vec(any::<u8>(), 1..7);
    prop_oneof![
        4 => (any::<u8>(), some()).prop_map(|(k, m)| Op::SAdd(k, m)),
        2 => (any::<u8>(), some()).prop_map(|(k, m)| Op::SRem(k, m)),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(k, m)| Op::SIsMember(k, m)),
        1 => (any::<u8>(), some()).prop_map(|(k, m)| Op::SMIsMember(k, m)),
        1 => any::<u8>().prop_map(Op::SCard),
        1 => any::<u8>().prop_map(Op::SMembers),
        1 => (any::<u8>(), any::<u8>(), any::<u8>()).prop_map(|(a, b, m)| Op::SMove(a, b, m)),
        1 => (0..3u8, some()).prop_map(|(o, k)| Op::Algebra(o, k)),
        2 => (0..3u8, any::<u8>(), some()).prop_map(|(o, d, k)| Op::Store(o, d, k)),
        1 => (some(), 0..4u8).prop_map(|(k, l)| Op::InterCard(k, l)),
        1 => any::<u8>().prop_map(Op::SPop),
        1 => (any::<u8>(), 0..12u8).prop_map(|(k, n)| Op::SPopCount(k, n)),
        1 => (any::<u8>(), -8..8i8).prop_map(|(k, n)| Op::SRandMember(k, n)),
        1 => (any::<u8>(), 1..5u8).prop_map(|(k, n)| Op::SScan(k, n)),
        3 => any::<u8>().prop_map(Op::Encoding),
        1 => any::<u8>().prop_map(Op::SetString),
        1 => any::<u8>().prop_map(Op::Del),
        1 => (any::<u8>(), 0..40u16).prop_map(|(k, t)| Op::PExpire(k, t)),
        1 => (0..30u16).prop_map(Op::Advance),
    ]
}

#[derive(Clone, Debug)]
enum Value {
    Str,
    Set {
        members: BTreeSet<Vec<u8>>,
        hashtable: bool,
    },
}

/// A set's members and whether Redis would hold it as a hashtable.
type ModelSet = (BTreeSet<Vec<u8>>, bool);

/// The model: key -> (value, expiry ms).
#[derive(Default)]
struct Model {
    map: HashMap<Vec<u8>, (Value, Option<i64>)>,
}

fn is_int(m: &[u8]) -> bool {
    relis::parse_i64(m).is_some()
}

/// The order Relis replies in: numeric when Redis would hold the members as an intset.
fn ordered(set: &BTreeSet<Vec<u8>>) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = set.iter().cloned().collect();
    if v.len() <= MAX_INTSET && v.iter().all(|m| is_int(m)) {
        v.sort_by_key(|m| relis::parse_i64(m));
    }
    v
}

fn plain(v: Vec<Bytes>) -> Vec<Vec<u8>> {
    v.into_iter().map(|b| b.to_vec()).collect()
}

impl Model {
    fn live(&mut self, k: &[u8], now: i64) -> Option<&mut (Value, Option<i64>)> {
        if self
            .map
            .get(k)
            .is_some_and(|(_, e)| e.is_some_and(|e| e <= now))
        {
            self.map.remove(k);
        }
        self.map.get_mut(k)
    }

    /// The set at `k`: `Ok(None)` when missing, `Err` for a string.
    fn set(&mut self, k: &[u8], now: i64) -> Result<Option<ModelSet>, Error> {
        match self.live(k, now) {
            None => Ok(None),
            Some((Value::Str, _)) => Err(Error::WrongType),
            Some((Value::Set { members, hashtable }, _)) => Ok(Some((members.clone(), *hashtable))),
        }
    }

    fn put(&mut self, k: &[u8], members: BTreeSet<Vec<u8>>, hashtable: bool, keep_expiry: bool) {
        let expiry = if keep_expiry {
            self.map.get(k).and_then(|(_, e)| *e)
        } else {
            None
        };
        if members.is_empty() {
            self.map.remove(k);
        } else {
            self.map
                .insert(k.to_vec(), (Value::Set { members, hashtable }, expiry));
        }
    }

    fn sets(&mut self, ks: &[Vec<u8>], now: i64) -> Result<Vec<Option<BTreeSet<Vec<u8>>>>, Error> {
        ks.iter()
            .map(|k| self.set(k, now).map(|s| s.map(|(m, _)| m)))
            .collect()
    }
}

fn combine(o: u8, sets: &[Option<BTreeSet<Vec<u8>>>]) -> BTreeSet<Vec<u8>> {
    match o {
        0 => {
            if sets.iter().any(Option::is_none) {
                return BTreeSet::new();
            }
            let mut it = sets.iter().flatten();
            let first = it.next().cloned().unwrap_or_default();
            it.fold(first, |acc, s| acc.intersection(s).cloned().collect())
        }
        1 => sets.iter().flatten().flatten().cloned().collect(),
        _ => match sets.first() {
            Some(Some(first)) => sets[1..]
                .iter()
                .flatten()
                .fold(first.clone(), |acc, s| acc.difference(s).cloned().collect()),
            _ => BTreeSet::new(),
        },
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
            Op::SAdd(k, ms) => {
                let (k, ms) = (key(k), members(&ms));
                let want = m.set(&k, now).map(|cur| {
                    let existed = cur.is_some();
                    let (mut set, mut ht) = cur.unwrap_or_default();
                    let before = set.len();
                    for x in &ms {
                        set.insert(x.clone());
                        ht |= !is_int(x);
                    }
                    ht |= set.len() > MAX_INTSET;
                    let added = (set.len() - before) as i64;
                    m.put(&k, set, ht, existed);
                    added
                });
                assert_eq!(db.sadd(&k, &ms), want, "SADD");
            }
            Op::SRem(k, ms) => {
                let (k, ms) = (key(k), members(&ms));
                let want = m.set(&k, now).map(|cur| match cur {
                    None => 0,
                    Some((mut set, ht)) => {
                        let before = set.len();
                        for x in &ms {
                            set.remove(x);
                        }
                        let removed = (before - set.len()) as i64;
                        m.put(&k, set, ht, true);
                        removed
                    }
                });
                assert_eq!(db.srem(&k, &ms), want, "SREM");
            }
            Op::SIsMember(k, x) => {
                let (k, x) = (key(k), member(x));
                let want = m
                    .set(&k, now)
                    .map(|s| s.is_some_and(|(s, _)| s.contains(&x)));
                assert_eq!(db.sismember(&k, &x), want, "SISMEMBER");
            }
            Op::SMIsMember(k, xs) => {
                let (k, xs) = (key(k), members(&xs));
                let want = m.set(&k, now).map(|s| {
                    let s = s.map(|(s, _)| s).unwrap_or_default();
                    xs.iter().map(|x| s.contains(x)).collect::<Vec<_>>()
                });
                assert_eq!(db.smismember(&k, &xs), want, "SMISMEMBER");
            }
            Op::SCard(k) => {
                let k = key(k);
                let want = m.set(&k, now).map(|s| s.map_or(0, |(s, _)| s.len() as i64));
                assert_eq!(db.scard(&k), want, "SCARD");
            }
            Op::SMembers(k) => {
                let k = key(k);
                let want = m
                    .set(&k, now)
                    .map(|s| s.map(|(s, _)| ordered(&s)).unwrap_or_default());
                assert_eq!(db.smembers(&k).map(plain), want, "SMEMBERS");
            }
            Op::SMove(a, b, x) => {
                let (a, b, x) = (key(a), key(b), member(x));
                let src = m.set(&a, now);
                let dst = m.set(&b, now);
                let want = match (src, dst) {
                    (Ok(None), _) => Ok(false),
                    (Err(e), _) | (_, Err(e)) => Err(e),
                    (Ok(Some((s, _))), _) if a == b => Ok(s.contains(&x)),
                    (Ok(Some((mut s, sh))), Ok(d)) => {
                        if s.remove(&x) {
                            m.put(&a, s, sh, true);
                            let existed = d.is_some();
                            let (mut d, mut dh) = d.unwrap_or_default();
                            if !existed {
                                dh = !is_int(&x);
                            }
                            if d.insert(x.clone()) {
                                dh |= !is_int(&x) || d.len() > MAX_INTSET;
                                m.put(&b, d, dh, existed);
                            }
                            Ok(true)
                        } else {
                            Ok(false)
                        }
                    }
                };
                assert_eq!(db.smove(&a, &b, &x), want, "SMOVE");
            }
            Op::Algebra(o, ks) => {
                let ks = keys(&ks);
                let want = m.sets(&ks, now).map(|sets| ordered(&combine(o, &sets)));
                let got = match o {
                    0 => db.sinter(&ks),
                    1 => db.sunion(&ks),
                    _ => db.sdiff(&ks),
                };
                assert_eq!(got.map(plain), want, "SINTER/SUNION/SDIFF {o}");
            }
            Op::Store(o, d, ks) => {
                let (d, ks) = (key(d), keys(&ks));
                let want = m.sets(&ks, now).map(|sets| {
                    let result = combine(o, &sets);
                    let mut ht = result.len() > MAX_INTSET || result.iter().any(|x| !is_int(x));
                    if o == 2 {
                        // SDIFFSTORE's second algorithm copies the first set whole.
                        if let Some(Some(first)) = sets.first() {
                            let n0 = first.len();
                            let one: usize = sets.iter().flatten().map(|_| n0).sum();
                            let two: usize = sets.iter().flatten().map(|s| s.len()).sum();
                            if one / 2 > two {
                                ht |= n0 > MAX_INTSET || first.iter().any(|x| !is_int(x));
                            }
                        }
                    }
                    let n = result.len() as i64;
                    m.map.remove(&d);
                    m.put(&d, result, ht, false);
                    n
                });
                let got = match o {
                    0 => db.sinterstore(&d, &ks),
                    1 => db.sunionstore(&d, &ks),
                    _ => db.sdiffstore(&d, &ks),
                };
                assert_eq!(got, want, "STORE {o}");
            }
            Op::InterCard(ks, limit) => {
                let ks = keys(&ks);
                let want = m.sets(&ks, now).map(|sets| {
                    let n = combine(0, &sets).len() as i64;
                    if limit > 0 {
                        n.min(limit as i64)
                    } else {
                        n
                    }
                });
                assert_eq!(db.sintercard(&ks, limit as u64), want, "SINTERCARD");
            }
            Op::SPop(k) => {
                let k = key(k);
                let cur = m.set(&k, now);
                let got = db.spop(&k);
                match cur {
                    Err(e) => assert_eq!(got, Err(e), "SPOP"),
                    Ok(None) => assert_eq!(got, Ok(None), "SPOP"),
                    Ok(Some((mut s, ht))) => {
                        let x = got.unwrap().expect("a member").to_vec();
                        assert!(s.remove(&x), "SPOP gave a member");
                        m.put(&k, s, ht, true);
                    }
                }
            }
            Op::SPopCount(k, n) => {
                let k = key(k);
                let cur = m.set(&k, now);
                let got = db.spop_count(&k, n as u64);
                match cur {
                    Err(e) => assert_eq!(got, Err(e), "SPOP count"),
                    Ok(None) => assert_eq!(got, Ok(vec![]), "SPOP count"),
                    Ok(Some((mut s, ht))) => {
                        let got = plain(got.unwrap());
                        let n = n as usize;
                        if n >= s.len() {
                            assert_eq!(got, ordered(&s), "SPOP count, the whole set");
                            m.map.remove(&k);
                        } else {
                            assert_eq!(got.len(), n, "SPOP count");
                            for x in &got {
                                assert!(s.remove(x), "SPOP count gave distinct members");
                            }
                            let ht = if s.len() * 5 <= n {
                                s.len() > MAX_INTSET || s.iter().any(|x| !is_int(x))
                            } else {
                                ht
                            };
                            m.put(&k, s, ht, true);
                        }
                    }
                }
            }
            Op::SRandMember(k, n) => {
                let k = key(k);
                let cur = m.set(&k, now);
                let got = db.srandmember_count(&k, n as i64);
                match cur {
                    Err(e) => assert_eq!(got, Err(e), "SRANDMEMBER"),
                    Ok(None) => assert_eq!(got, Ok(vec![]), "SRANDMEMBER"),
                    Ok(Some((s, _))) => {
                        let got = plain(got.unwrap());
                        assert!(got.iter().all(|x| s.contains(x)), "SRANDMEMBER members");
                        if n >= 0 {
                            let n = n as usize;
                            if n >= s.len() {
                                assert_eq!(got, ordered(&s), "SRANDMEMBER whole");
                            } else {
                                let distinct: BTreeSet<_> = got.iter().collect();
                                assert_eq!((got.len(), distinct.len()), (n, n), "SRANDMEMBER");
                            }
                        } else {
                            assert_eq!(got.len(), n.unsigned_abs() as usize, "SRANDMEMBER -n");
                        }
                    }
                }
            }
            Op::SScan(k, count) => {
                let k = key(k);
                let want = m
                    .set(&k, now)
                    .map(|s| s.map(|(s, _)| s).unwrap_or_default());
                let mut got = Vec::new();
                let mut after: Option<Bytes> = None;
                let res = loop {
                    match db.sscan(&k, after.as_deref(), count as usize, None) {
                        Err(e) => break Err(e),
                        Ok(page) => {
                            got.extend(plain(page.keys));
                            match page.next {
                                Some(n) => after = Some(n),
                                None => break Ok(()),
                            }
                        }
                    }
                };
                let got = res.map(|()| {
                    let n = got.len();
                    let set: BTreeSet<Vec<u8>> = got.into_iter().collect();
                    assert_eq!(set.len(), n, "SSCAN returns each member once");
                    set
                });
                assert_eq!(got, want, "SSCAN");
            }
            Op::Encoding(k) => {
                let k = key(k);
                let want = match m.live(&k, now) {
                    Some((Value::Set { hashtable, .. }, _)) => {
                        Some(if *hashtable { "hashtable" } else { "intset" })
                    }
                    _ => None,
                };
                let kk = k.clone();
                let got = db
                    .read(move |r| r.object(0, &kk))
                    .unwrap()
                    .filter(|o| o.meta.kind == relis::KeyType::Set)
                    .map(|o| o.encoding);
                assert_eq!(got, want, "OBJECT ENCODING");
            }
            Op::SetString(k) => {
                let k = key(k);
                db.set(&k, "v").unwrap();
                m.map.insert(k, (Value::Str, None));
            }
            Op::Del(k) => {
                let k = key(k);
                let want = m.live(&k, now).is_some() as i64;
                m.map.remove(&k);
                assert_eq!(db.del(&[k]).unwrap(), want, "DEL");
            }
            Op::PExpire(k, t) => {
                let k = key(k);
                let want = match m.live(&k, now) {
                    None => false,
                    Some(entry) => {
                        entry.1 = Some(now + t as i64);
                        true
                    }
                };
                if want && t == 0 {
                    m.map.remove(&k);
                }
                assert_eq!(
                    db.pexpire(&k, t as i64, ExpireCond::Always).unwrap(),
                    want,
                    "PEXPIRE"
                );
            }
            Op::Advance(ms) => clock.advance(ms as i64),
        }
    }
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
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]
    #[test]
    fn engine_agrees_with_model(ops in proptest::collection::vec(op(), 1..150)) {
        run(ops);
    }
}
