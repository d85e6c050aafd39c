//! Model test: random sequences of hash operations (mixed with strings, deletes, renames, copies
//! and expiry, the clock moving) give the same results through the engine as through a plain
//! in-memory model of Redis 7.0's hashes, including the order fields are listed in (insertion
//! order while Redis would hold the hash as a listpack, field order once it is a hashtable) and
//! the one-way listpack -> hashtable conversion.

use proptest::prelude::*;
use relis::{Bytes, Clock, Db, Error, ExpireCond, ManualClock, Options};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

#[derive(Clone, Debug)]
enum Op {
    HSet(u8, Vec<(u8, u8)>),
    HSetNx(u8, u8, u8),
    HGet(u8, u8),
    HMGet(u8, Vec<u8>),
    HDel(u8, Vec<u8>),
    HExists(u8, u8),
    HLen(u8),
    HStrLen(u8, u8),
    HGetAll(u8),
    HKeys(u8),
    HVals(u8),
    HIncrBy(u8, u8, i8),
    HIncrByFloat(u8, u8, u8),
    HRandField(u8, i8, bool),
    HScan(u8, u8),
    Encoding(u8),
    SetString(u8),
    Del(u8),
    Rename(u8, u8),
    Copy(u8, u8),
    PExpire(u8, u16),
    Advance(u16),
}

fn key(k: u8) -> Vec<u8> {
    format!("k{}", k % 4).into_bytes()
}

/// Fields: a small pool so writes collide, and now and then one too long for a listpack.
fn field(f: u8) -> Vec<u8> {
    if f % 29 == 28 {
        format!("long-field-{}", "x".repeat(60)).into_bytes()
    } else {
        format!("f{}", f % 8).into_bytes()
    }
}

/// Values: some integers (for HINCRBY), some floats, now and then one too long for a listpack.
fn val(v: u8) -> Vec<u8> {
    match v % 13 {
        0..=4 => format!("{}", v as i64 - 100).into_bytes(),
        5 => format!("{}.5", v).into_bytes(),
        6 if v > 200 => "y".repeat(65).into_bytes(),
        _ => format!("v{v}").into_bytes(),
    }
}

fn op() -> impl Strategy<Value = Op> {
    let k = any::<u8>;
    prop_oneof![
        4 => (k(), proptest::collection::vec((any::<u8>(), any::<u8>()), 1..4))
            .prop_map(|(k, p)| Op::HSet(k, p)),
        1 => (k(), any::<u8>(), any::<u8>()).prop_map(|(k, f, v)| Op::HSetNx(k, f, v)),
        2 => (k(), any::<u8>()).prop_map(|(k, f)| Op::HGet(k, f)),
        1 => (k(), proptest::collection::vec(any::<u8>(), 1..4)).prop_map(|(k, f)| Op::HMGet(k, f)),
        2 => (k(), proptest::collection::vec(any::<u8>(), 1..4)).prop_map(|(k, f)| Op::HDel(k, f)),
        1 => (k(), any::<u8>()).prop_map(|(k, f)| Op::HExists(k, f)),
        1 => k().prop_map(Op::HLen),
        1 => (k(), any::<u8>()).prop_map(|(k, f)| Op::HStrLen(k, f)),
        2 => k().prop_map(Op::HGetAll),
        1 => k().prop_map(Op::HKeys),
        1 => k().prop_map(Op::HVals),
        2 => (k(), any::<u8>(), any::<i8>()).prop_map(|(k, f, d)| Op::HIncrBy(k, f, d)),
        1 => (k(), any::<u8>(), any::<u8>()).prop_map(|(k, f, v)| Op::HIncrByFloat(k, f, v)),
        1 => (k(), -12..12i8, any::<bool>()).prop_map(|(k, c, w)| Op::HRandField(k, c, w)),
        1 => (k(), 1..5u8).prop_map(|(k, c)| Op::HScan(k, c)),
        1 => k().prop_map(Op::Encoding),
        1 => k().prop_map(Op::SetString),
        1 => k().prop_map(Op::Del),
        1 => (k(), k()).prop_map(|(a, b)| Op::Rename(a, b)),
        1 => (k(), k()).prop_map(|(a, b)| Op::Copy(a, b)),
        1 => (k(), 0..50u16).prop_map(|(k, t)| Op::PExpire(k, t)),
        1 => (0..30u16).prop_map(Op::Advance),
    ]
}

/// A hash as Redis 7.0 holds it: fields in insertion order, and whether it is a hashtable.
#[derive(Clone, Debug, Default)]
struct Hash {
    fields: Vec<(Vec<u8>, Vec<u8>)>,
    hashtable: bool,
}

impl Hash {
    fn get(&self, f: &[u8]) -> Option<&Vec<u8>> {
        self.fields.iter().find(|(x, _)| x == f).map(|(_, v)| v)
    }

    /// Sets a field; whether it is new. Converts as Redis does.
    fn set(&mut self, f: &[u8], v: &[u8]) -> bool {
        if f.len() > 64 || v.len() > 64 {
            self.hashtable = true;
        }
        let new = match self.fields.iter_mut().find(|(x, _)| x == f) {
            Some((_, old)) => {
                *old = v.to_vec();
                false
            }
            None => {
                self.fields.push((f.to_vec(), v.to_vec()));
                true
            }
        };
        if self.fields.len() > 512 {
            self.hashtable = true;
        }
        new
    }

    /// The fields in the order Redis lists them.
    fn listed(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = self.fields.clone();
        if self.hashtable {
            out.sort();
        }
        out
    }
}

#[derive(Clone, Debug)]
enum Value {
    Str,
    Hash(Hash),
}

#[derive(Default)]
struct Model {
    map: HashMap<Vec<u8>, (Value, Option<i64>)>,
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

    /// The live hash at `k` for a read: `Ok(None)` when missing, `Err` for another type.
    fn hash(&mut self, k: &[u8], now: i64) -> Result<Option<Hash>, Error> {
        match self.live(k, now) {
            None => Ok(None),
            Some((Value::Hash(h), _)) => Ok(Some(h.clone())),
            Some((Value::Str, _)) => Err(Error::WrongType),
        }
    }

    /// Writes the hash back (or deletes the key when it is empty), keeping the expiry.
    fn put(&mut self, k: &[u8], h: Hash, now: i64) {
        let exp = self.live(k, now).and_then(|(_, e)| *e);
        if h.fields.is_empty() {
            self.map.remove(k);
        } else {
            self.map.insert(k.to_vec(), (Value::Hash(h), exp));
        }
    }
}

fn b(v: &[u8]) -> Bytes {
    Bytes::copy_from_slice(v)
}

fn pairs(v: &[(Vec<u8>, Vec<u8>)]) -> Vec<(Bytes, Bytes)> {
    v.iter().map(|(f, x)| (b(f), b(x))).collect()
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
            Op::HSet(k, ps) => {
                let ps: Vec<(Vec<u8>, Vec<u8>)> =
                    ps.iter().map(|&(f, v)| (field(f), val(v))).collect();
                let want = m.hash(&key(k), now).map(|h| {
                    let mut h = h.unwrap_or_default();
                    // Redis converts before it sets when an argument is too long.
                    if ps.iter().any(|(f, v)| f.len() > 64 || v.len() > 64) {
                        h.hashtable = true;
                    }
                    let n = ps.iter().filter(|(f, v)| h.set(f, v)).count() as i64;
                    m.put(&key(k), h, now);
                    n
                });
                assert_eq!(db.hset(key(k), &ps), want, "HSET");
            }
            Op::HSetNx(k, f, v) => {
                let (f, v) = (field(f), val(v));
                let want = m.hash(&key(k), now).map(|h| {
                    let mut h = h.unwrap_or_default();
                    if h.get(&f).is_some() {
                        return false;
                    }
                    h.set(&f, &v);
                    m.put(&key(k), h, now);
                    true
                });
                assert_eq!(db.hsetnx(key(k), &f, &v), want, "HSETNX");
            }
            Op::HGet(k, f) => {
                let want = m
                    .hash(&key(k), now)
                    .map(|h| h.and_then(|h| h.get(&field(f)).map(|v| b(v))));
                assert_eq!(db.hget(key(k), field(f)), want, "HGET");
            }
            Op::HMGet(k, fs) => {
                let fs: Vec<Vec<u8>> = fs.into_iter().map(field).collect();
                let want = m.hash(&key(k), now).map(|h| {
                    fs.iter()
                        .map(|f| h.as_ref().and_then(|h| h.get(f)).map(|v| b(v)))
                        .collect::<Vec<_>>()
                });
                assert_eq!(db.hmget(key(k), &fs), want, "HMGET");
            }
            Op::HDel(k, fs) => {
                let fs: Vec<Vec<u8>> = fs.into_iter().map(field).collect();
                let want = m.hash(&key(k), now).map(|h| match h {
                    None => 0,
                    Some(mut h) => {
                        let before = h.fields.len();
                        h.fields.retain(|(f, _)| !fs.contains(f));
                        let n = (before - h.fields.len()) as i64;
                        if n > 0 {
                            m.put(&key(k), h, now);
                        }
                        n
                    }
                });
                assert_eq!(db.hdel(key(k), &fs), want, "HDEL");
            }
            Op::HExists(k, f) => {
                let want = m
                    .hash(&key(k), now)
                    .map(|h| h.is_some_and(|h| h.get(&field(f)).is_some()));
                assert_eq!(db.hexists(key(k), field(f)), want, "HEXISTS");
            }
            Op::HLen(k) => {
                let want = m
                    .hash(&key(k), now)
                    .map(|h| h.map_or(0, |h| h.fields.len() as i64));
                assert_eq!(db.hlen(key(k)), want, "HLEN");
            }
            Op::HStrLen(k, f) => {
                let want = m.hash(&key(k), now).map(|h| {
                    h.and_then(|h| h.get(&field(f)).map(|v| v.len() as i64))
                        .unwrap_or(0)
                });
                assert_eq!(db.hstrlen(key(k), field(f)), want, "HSTRLEN");
            }
            Op::HGetAll(k) => {
                let want = m
                    .hash(&key(k), now)
                    .map(|h| h.map_or(Vec::new(), |h| pairs(&h.listed())));
                assert_eq!(db.hgetall(key(k)), want, "HGETALL");
            }
            Op::HKeys(k) => {
                let want = m.hash(&key(k), now).map(|h| {
                    h.map_or(Vec::new(), |h| {
                        h.listed().iter().map(|(f, _)| b(f)).collect()
                    })
                });
                assert_eq!(db.hkeys(key(k)), want, "HKEYS");
            }
            Op::HVals(k) => {
                let want = m.hash(&key(k), now).map(|h| {
                    h.map_or(Vec::new(), |h| {
                        h.listed().iter().map(|(_, v)| b(v)).collect()
                    })
                });
                assert_eq!(db.hvals(key(k)), want, "HVALS");
            }
            Op::HIncrBy(k, f, d) => {
                let f = field(f);
                let want = m.hash(&key(k), now).and_then(|h| {
                    let mut h = h.unwrap_or_default();
                    let old = match h.get(&f) {
                        Some(v) => relis::parse_i64(v).ok_or(Error::NotInteger)?,
                        None => 0,
                    };
                    let new = old.checked_add(d as i64).ok_or(Error::Overflow)?;
                    h.set(&f, new.to_string().as_bytes());
                    m.put(&key(k), h, now);
                    Ok(new)
                });
                assert_eq!(db.hincrby(key(k), &f, d as i64), want, "HINCRBY");
            }
            Op::HIncrByFloat(k, f, v) => {
                let (f, incr) = (field(f), val(v));
                let incr_ok = relis::add_float(None, &incr);
                let want = incr_ok.and_then(|_| {
                    let h = m.hash(&key(k), now)?;
                    let mut h = h.unwrap_or_default();
                    let new = relis::add_float(h.get(&f).map(|v| &v[..]), &incr)?;
                    h.set(&f, &new);
                    m.put(&key(k), h, now);
                    Ok(new)
                });
                assert_eq!(db.hincrbyfloat(key(k), &f, &incr), want, "HINCRBYFLOAT");
            }
            Op::HRandField(k, count, with_values) => {
                let h = m.hash(&key(k), now);
                // A count of 0 WITHVALUES stands for HRANDFIELD without a count.
                if count == 0 && with_values {
                    let got = db.hrandfield(key(k));
                    match h {
                        Err(e) => assert_eq!(got, Err(e)),
                        Ok(None) => assert_eq!(got, Ok(None)),
                        Ok(Some(h)) => {
                            let f = got.unwrap().unwrap();
                            assert!(h.get(&f).is_some(), "HRANDFIELD {f:?}");
                        }
                    }
                    continue;
                }
                let got = db.hrandfield_count(key(k), count as i64, with_values);
                let h = match h {
                    Err(e) => {
                        assert_eq!(got, Err(e));
                        continue;
                    }
                    Ok(h) => h.unwrap_or_default(),
                };
                let got = got.unwrap();
                let n = h.fields.len();
                let want_len = if count >= 0 {
                    (count as usize).min(n)
                } else if n == 0 {
                    0
                } else {
                    count.unsigned_abs() as usize
                };
                assert_eq!(got.len(), want_len, "HRANDFIELD count {count}");
                for (f, v) in &got {
                    let real = h.get(f).expect("a field of the hash");
                    assert_eq!(v.as_ref().map(|v| &v[..]), with_values.then_some(&real[..]));
                }
                if count > 0 {
                    let distinct: BTreeSet<&Bytes> = got.iter().map(|(f, _)| f).collect();
                    assert_eq!(distinct.len(), got.len(), "distinct");
                    if count as usize >= n {
                        let order: Vec<Bytes> = h.listed().iter().map(|(f, _)| b(f)).collect();
                        let got: Vec<Bytes> = got.into_iter().map(|(f, _)| f).collect();
                        assert_eq!(got, order, "the whole hash, in its order");
                    }
                }
            }
            Op::HScan(k, count) => {
                let want = m.hash(&key(k), now);
                let mut got = Vec::new();
                let mut after: Option<Bytes> = None;
                let mut pages = 0;
                let outcome = loop {
                    match db.hscan(key(k), after.as_deref(), count as usize, None) {
                        Err(e) => break Err(e),
                        Ok(page) => {
                            pages += 1;
                            assert!(page.entries.len() <= count as usize || pages == 1);
                            got.extend(page.entries);
                            match page.next {
                                Some(n) => after = Some(n),
                                None => break Ok(()),
                            }
                        }
                    }
                };
                match want {
                    Err(e) => assert_eq!(outcome, Err(e), "HSCAN"),
                    Ok(h) => {
                        let h = h.unwrap_or_default();
                        assert_eq!(got, pairs(&h.listed()), "HSCAN walks everything once");
                        if !h.hashtable {
                            assert_eq!(pages, 1, "a listpack comes whole");
                        }
                    }
                }
            }
            Op::Encoding(k) => {
                let want = match m.live(&key(k), now) {
                    None => None,
                    Some((Value::Str, _)) => Some(None),
                    Some((Value::Hash(h), _)) => {
                        Some(Some(if h.hashtable { "hashtable" } else { "listpack" }))
                    }
                };
                let kk = key(k);
                let got = db
                    .read(move |r| r.object(0, &kk))
                    .unwrap()
                    .map(|o| (o.meta.kind == relis::KeyType::Hash).then_some(o.encoding));
                assert_eq!(got, want, "OBJECT ENCODING");
            }
            Op::SetString(k) => {
                db.set(key(k), "s").unwrap();
                m.map.insert(key(k), (Value::Str, None));
            }
            Op::Del(k) => {
                let want = m.live(&key(k), now).is_some() as i64;
                m.map.remove(&key(k));
                assert_eq!(db.del(&[key(k)]).unwrap(), want, "DEL");
            }
            Op::Rename(a, bk) => {
                let src = m.live(&key(a), now).cloned();
                let got = db.rename(key(a), key(bk));
                match src {
                    None => assert_eq!(got, Err(Error::NoSuchKey)),
                    Some(v) => {
                        got.unwrap();
                        m.map.remove(&key(a));
                        m.map.insert(key(bk), v);
                    }
                }
            }
            Op::Copy(a, bk) => {
                let (ka, kb) = (key(a), key(bk));
                let same = ka == kb;
                let src = m.live(&ka, now).cloned();
                let dst_exists = m.live(&kb, now).is_some();
                let got = db.write(move |w| w.copy(0, &ka, 0, &kb, false));
                if same {
                    assert_eq!(got, Err(Error::SameObject));
                } else {
                    let want = src.is_some() && !dst_exists;
                    assert_eq!(got, Ok(want), "COPY");
                    if want {
                        m.map.insert(key(bk), src.unwrap());
                    }
                }
            }
            Op::PExpire(k, t) => {
                let want = m.live(&key(k), now).is_some();
                assert_eq!(
                    db.pexpire(key(k), t as i64, ExpireCond::Always).unwrap(),
                    want,
                    "PEXPIRE"
                );
                if want {
                    if t == 0 {
                        m.map.remove(&key(k));
                    } else if let Some((_, e)) = m.live(&key(k), now) {
                        *e = Some(now + t as i64);
                    }
                }
            }
            Op::Advance(ms) => clock.advance(ms as i64),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]
    #[test]
    fn engine_agrees_with_model(ops in proptest::collection::vec(op(), 1..150)) {
        run(ops);
    }
}
