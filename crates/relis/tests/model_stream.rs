//! Model test of streams: random sequences of XADD (`*`, `ms-*`, explicit ids, with exact and
//! approximate trims), XDEL, XTRIM (`=` and `~`), XSETID, XRANGE/XREVRANGE, XREAD and DEL,
//! with the clock moving, give the same results through the engine as through a `BTreeMap`
//! model of Redis's semantics.

use proptest::prelude::*;
use relis::{
    Bytes, Clock, Db, Error, ManualClock, Options, StreamError, StreamId, Trim, TrimTo, XAddId,
};
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Clone, Debug)]
enum Op {
    Add(u8, u8, Option<(bool, u16, bool)>, u8),
    Del(u8, Vec<(u8, u8)>),
    XTrim(u8, bool, u16, bool, u16),
    SetId(u8, u8, u8),
    Range(u8, (u8, u8), (u8, u8), u8, bool),
    Read(u8, (u8, u8), u8),
    DelKey(u8),
    Advance(u8),
}

fn key(k: u8) -> Vec<u8> {
    format!("s{}", k % 2).into_bytes()
}

fn id(p: (u8, u8)) -> StreamId {
    StreamId::new(u64::from(p.0 % 40), u64::from(p.1 % 4))
}

fn op() -> impl Strategy<Value = Op> {
    let trim = proptest::option::of((any::<bool>(), 0..150u16, any::<bool>()));
    prop_oneof![
        8 => (any::<u8>(), any::<u8>(), trim, any::<u8>()).prop_map(|(k, i, t, v)| Op::Add(k, i, t, v)),
        2 => (any::<u8>(), proptest::collection::vec((any::<u8>(), any::<u8>()), 1..4))
            .prop_map(|(k, ids)| Op::Del(k, ids)),
        1 => (any::<u8>(), any::<bool>(), 0..150u16, any::<bool>(), 0..300u16)
            .prop_map(|(k, by_len, n, approx, limit)| Op::XTrim(k, by_len, n, approx, limit)),
        1 => (any::<u8>(), any::<u8>(), any::<u8>()).prop_map(|(k, a, b)| Op::SetId(k, a, b)),
        2 => (any::<u8>(), (any::<u8>(), any::<u8>()), (any::<u8>(), any::<u8>()), 0..5u8, any::<bool>())
            .prop_map(|(k, a, b, c, r)| Op::Range(k, a, b, c, r)),
        1 => (any::<u8>(), (any::<u8>(), any::<u8>()), 0..4u8).prop_map(|(k, a, c)| Op::Read(k, a, c)),
        1 => any::<u8>().prop_map(Op::DelKey),
        1 => (0..3u8).prop_map(Op::Advance),
    ]
}

#[derive(Clone, Debug, Default)]
struct Stream {
    entries: BTreeMap<StreamId, Vec<Bytes>>,
    last: StreamId,
    max_deleted: StreamId,
    added: u64,
}

impl Stream {
    /// Redis's approximate trim for a stream whose nodes are runs of 100 from the head.
    fn trim(&mut self, to: TrimTo, approx: bool, limit: u64) -> u64 {
        let len = self.entries.len() as u64;
        let allowed = match to {
            TrimTo::MaxLen(max) => len.saturating_sub(max),
            TrimTo::MinId(min) => self.entries.range(..min).count() as u64,
        };
        let goes = if approx {
            // Node by node, as streamTrim walks them.
            let mut deleted = 0;
            let mut left = len;
            while left > 0 {
                if limit > 0 && deleted + 100 > limit {
                    break;
                }
                let node = left.min(100);
                if deleted + node > allowed {
                    break;
                }
                deleted += node;
                left -= node;
            }
            deleted
        } else {
            allowed
        };
        for _ in 0..goes {
            let first = *self.entries.keys().next().unwrap();
            self.entries.remove(&first);
        }
        goes
    }
}

fn run(ops: Vec<Op>) {
    let clock = ManualClock::new(1_000);
    let db = Db::open_with(Options {
        clock: Arc::new(clock.clone()),
        ..Options::default()
    })
    .unwrap();
    let mut m: BTreeMap<Vec<u8>, Stream> = BTreeMap::new();
    for op in ops {
        let now = clock.now_ms() as u64;
        match op.clone() {
            Op::Add(k, i, trim, v) => {
                let how = match i % 4 {
                    0 => XAddId::Auto,
                    1 => XAddId::AutoSeq(u64::from(i % 40)),
                    _ => XAddId::Explicit(id((i, v))),
                };
                let trim = trim.map(|(by_len, n, approx)| Trim {
                    to: if by_len {
                        TrimTo::MaxLen(u64::from(n))
                    } else {
                        TrimTo::MinId(StreamId::new(u64::from(n % 40), 0))
                    },
                    approx,
                    limit: if approx { 10_000 } else { 0 },
                });
                let fields = vec![
                    Bytes::from_static(b"f"),
                    Bytes::from(vec![v; usize::from(v % 3)]),
                ];
                let s = m.entry(key(k)).or_default();
                let new = match how {
                    XAddId::Auto if now > s.last.ms => Some(StreamId::new(now, 0)),
                    XAddId::Auto => s.last.next(),
                    XAddId::AutoSeq(ms) if ms == s.last.ms => s.last.next(),
                    XAddId::AutoSeq(ms) => Some(StreamId::new(ms, 0)),
                    XAddId::Explicit(id) => Some(id),
                };
                let want = match new {
                    Some(new) if new > s.last => {
                        s.entries.insert(new, fields.clone());
                        s.last = new;
                        s.added += 1;
                        let trimmed = trim.map_or(0, |t| s.trim(t.to, t.approx, t.limit));
                        Ok(Some(relis::XAdded { id: new, trimmed }))
                    }
                    _ => Err(Error::Stream(StreamError::IdTooSmall)),
                };
                let got = db.write(move |w| w.xadd(0, &key(k), how, &fields, false, trim));
                assert_eq!(got, want, "{op:?}");
            }
            Op::Del(k, ids) => {
                let ids: Vec<StreamId> = ids.into_iter().map(id).collect();
                let want = match m.get_mut(&key(k)) {
                    None => 0,
                    Some(s) => {
                        let mut n = 0;
                        for i in &ids {
                            if s.entries.remove(i).is_some() {
                                n += 1;
                                s.max_deleted = s.max_deleted.max(*i);
                            }
                        }
                        n
                    }
                };
                let got = db.write(move |w| w.xdel(0, &key(k), &ids)).unwrap();
                assert_eq!(got, want, "{op:?}");
            }
            Op::XTrim(k, by_len, n, approx, limit) => {
                let to = if by_len {
                    TrimTo::MaxLen(u64::from(n))
                } else {
                    TrimTo::MinId(StreamId::new(u64::from(n % 40), 1))
                };
                let limit = if approx { u64::from(limit) } else { 0 };
                let want = m.get_mut(&key(k)).map_or(0, |s| s.trim(to, approx, limit));
                let t = Trim { to, approx, limit };
                let got = db.write(move |w| w.xtrim(0, &key(k), t)).unwrap();
                assert_eq!(got, want, "{op:?}");
            }
            Op::SetId(k, a, b) => {
                let to = id((a, b));
                let want = match m.get_mut(&key(k)) {
                    None => Err(Error::NoSuchKey),
                    Some(s) => match s.entries.keys().next_back() {
                        Some(top) if to < *top => Err(Error::Stream(StreamError::SetIdBelowTop)),
                        _ => {
                            s.last = to;
                            Ok(())
                        }
                    },
                };
                let got = db.write(move |w| w.xsetid(0, &key(k), to, None, StreamId::MIN));
                assert_eq!(got, want, "{op:?}");
            }
            Op::Range(k, a, b, count, rev) => {
                let (lo, hi) = (id(a), id(b));
                let want = m.get(&key(k)).map(|s| {
                    let all: Vec<(StreamId, Vec<Bytes>)> = if lo > hi {
                        Vec::new()
                    } else {
                        s.entries
                            .range(lo..=hi)
                            .map(|(i, f)| (*i, f.clone()))
                            .collect()
                    };
                    let mut all = all;
                    if rev {
                        all.reverse();
                    }
                    if count > 0 {
                        all.truncate(usize::from(count));
                    }
                    all
                });
                let got = db
                    .read(move |r| r.xrange(0, &key(k), lo, hi, u64::from(count), rev))
                    .unwrap()
                    .map(|v| v.into_iter().map(|e| (e.id, e.fields)).collect::<Vec<_>>());
                assert_eq!(got, want, "{op:?}");
            }
            Op::Read(k, a, count) => {
                let after = id(a);
                let want = m.get(&key(k)).and_then(|s| {
                    let top = s.entries.keys().next_back()?;
                    (*top > after).then(|| {
                        let mut v: Vec<StreamId> = s
                            .entries
                            .range((std::ops::Bound::Excluded(after), std::ops::Bound::Unbounded))
                            .map(|(i, _)| *i)
                            .collect();
                        if count > 0 {
                            v.truncate(usize::from(count));
                        }
                        v
                    })
                });
                let got = db
                    .read(move |r| r.xread_after(0, &key(k), after, u64::from(count)))
                    .unwrap()
                    .map(|v| v.into_iter().map(|e| e.id).collect::<Vec<_>>());
                assert_eq!(got, want, "{op:?}");
            }
            Op::DelKey(k) => {
                let want = i64::from(m.remove(&key(k)).is_some());
                let got = db.del(&[key(k)]).unwrap();
                assert_eq!(got, want, "{op:?}");
            }
            Op::Advance(ms) => clock.advance(i64::from(ms)),
        }
        // The stream's own numbers agree after every step.
        for k in 0..3u8 {
            let want = m
                .get(&key(k))
                .map(|s| (s.entries.len() as u64, s.last, s.max_deleted, s.added));
            let got = db
                .read(move |r| r.stream_meta(0, &key(k)))
                .unwrap()
                .map(|s| (s.length, s.last_id, s.max_deleted_id, s.entries_added));
            assert_eq!(got, want, "after {op:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn engine_agrees_with_model(ops in proptest::collection::vec(op(), 1..400)) {
        run(ops);
    }
}
