//! Values: decoding every object type Redis 7.0 loads, encoding in the types Redis 7.0 writes.

use crate::listpack::{self, Item};
use crate::{intset, put_len, put_string, types, ziplist, zipmap, Error, Input, Result};
use bytes::Bytes;
use std::collections::HashSet;

/// A whole value.
#[derive(Clone, Debug, PartialEq)]
pub enum Object {
    /// A string.
    String(Bytes),
    /// A list, head first.
    List(Vec<Bytes>),
    /// A set's members.
    Set(Vec<Bytes>),
    /// A hash's (field, value) pairs.
    Hash(Vec<(Bytes, Bytes)>),
    /// A sorted set's (member, score) pairs, in rank order (score, then member).
    ZSet(Vec<(Bytes, f64)>),
    /// A stream with its consumer groups.
    Stream(Box<crate::Stream>),
}

/// Which of Redis 7.0's encodings to write a collection in: the compact one (listpack for
/// hashes and sorted sets, intset for sets of integers) or the general one (`hashtable`,
/// `skiplist`). Redis writes whichever its in-memory value has; lists are always quicklists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectKind {
    /// listpack / intset.
    Compact,
    /// hashtable / skiplist.
    General,
}

fn items_to_bytes(items: &[Item<'_>]) -> Vec<Bytes> {
    items.iter().map(Item::to_bytes).collect()
}

fn no_dups<'a>(keys: impl Iterator<Item = &'a [u8]>, what: &'static str) -> Result<()> {
    let mut seen = HashSet::new();
    for k in keys {
        if !seen.insert(k) {
            return Err(Error(what));
        }
    }
    Ok(())
}

fn pairs(items: Vec<Bytes>) -> Result<Vec<(Bytes, Bytes)>> {
    if !items.len().is_multiple_of(2) {
        return Err(Error("odd number of hash elements"));
    }
    let mut out = Vec::with_capacity(items.len() / 2);
    let mut it = items.into_iter();
    while let (Some(f), Some(v)) = (it.next(), it.next()) {
        out.push((f, v));
    }
    Ok(out)
}

fn score_of(item: &Item<'_>) -> Result<f64> {
    let d = match item {
        Item::Int(i) => *i as f64,
        Item::Str(s) => std::str::from_utf8(s)
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .ok_or(Error("bad sorted set score"))?,
    };
    if d.is_nan() {
        return Err(Error("Zset with NAN score detected"));
    }
    Ok(d)
}

fn zset_items(items: &[Item<'_>]) -> Result<Vec<(Bytes, f64)>> {
    if !items.len().is_multiple_of(2) || items.is_empty() {
        return Err(Error("bad sorted set listpack"));
    }
    let mut out = Vec::with_capacity(items.len() / 2);
    for p in items.chunks_exact(2) {
        out.push((p[0].to_bytes(), score_of(&p[1])?));
    }
    no_dups(
        out.iter().map(|(m, _)| &m[..]),
        "Duplicate zset members detected",
    )?;
    Ok(out)
}

fn hash_items(items: &[Item<'_>]) -> Result<Vec<(Bytes, Bytes)>> {
    if items.is_empty() {
        return Err(Error("empty hash"));
    }
    let h = pairs(items_to_bytes(items))?;
    no_dups(
        h.iter().map(|(f, _)| &f[..]),
        "Duplicate hash fields detected",
    )?;
    Ok(h)
}

fn sort_zset(z: &mut [(Bytes, f64)]) {
    z.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
}

/// Decodes a value of RDB type `ty` from `input` (`rdbLoadObject`), with Redis's checks: an
/// empty collection, a duplicate member or field, a NaN score, and any structural fault of a
/// compact encoding are errors. A sorted set comes back in rank order.
///
/// # Errors
/// Malformed or unsupported input.
pub fn decode_object(ty: u8, input: &mut Input<'_>) -> Result<Object> {
    let obj = match ty {
        types::STRING => Object::String(input.bytes()?),
        types::LIST => {
            let n = input.count(1)?;
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                v.push(input.bytes()?);
            }
            Object::List(v)
        }
        types::SET => {
            let n = input.count(1)?;
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                v.push(input.bytes()?);
            }
            no_dups(v.iter().map(|m| &m[..]), "Duplicate set members detected")?;
            Object::Set(v)
        }
        types::ZSET | types::ZSET_2 => {
            let n = input.count(2)?;
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                let m = input.bytes()?;
                let s = if ty == types::ZSET {
                    input.string_double()?
                } else {
                    input.binary_double()?
                };
                if s.is_nan() {
                    return Err(Error("Zset with NAN score detected"));
                }
                v.push((m, s));
            }
            no_dups(
                v.iter().map(|(m, _)| &m[..]),
                "Duplicate zset members detected",
            )?;
            sort_zset(&mut v);
            Object::ZSet(v)
        }
        types::HASH => {
            let n = input.count(2)?;
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                v.push((input.bytes()?, input.bytes()?));
            }
            no_dups(
                v.iter().map(|(f, _)| &f[..]),
                "Duplicate hash fields detected",
            )?;
            Object::Hash(v)
        }
        types::HASH_ZIPMAP => {
            let blob = input.string()?;
            let h: Vec<(Bytes, Bytes)> = zipmap::decode(&blob)?
                .into_iter()
                .map(|(f, v)| (Bytes::copy_from_slice(f), Bytes::copy_from_slice(v)))
                .collect();
            no_dups(
                h.iter().map(|(f, _)| &f[..]),
                "Duplicate hash fields detected",
            )?;
            Object::Hash(h)
        }
        types::LIST_ZIPLIST => Object::List(items_to_bytes(&ziplist::decode(&input.string()?)?)),
        types::SET_INTSET => Object::Set(
            intset::decode(&input.string()?)?
                .into_iter()
                .map(|v| Bytes::from(v.to_string()))
                .collect(),
        ),
        types::ZSET_ZIPLIST => {
            let mut z = zset_items(&ziplist::decode(&input.string()?)?)?;
            sort_zset(&mut z);
            Object::ZSet(z)
        }
        types::ZSET_LISTPACK => {
            let mut z = zset_items(&listpack::decode(&input.string()?)?)?;
            sort_zset(&mut z);
            Object::ZSet(z)
        }
        types::HASH_ZIPLIST => Object::Hash(hash_items(&ziplist::decode(&input.string()?)?)?),
        types::HASH_LISTPACK => Object::Hash(hash_items(&listpack::decode(&input.string()?)?)?),
        types::LIST_QUICKLIST | types::LIST_QUICKLIST_2 => {
            let nodes = input.count(2)?;
            let mut v = Vec::new();
            for _ in 0..nodes {
                let container = if ty == types::LIST_QUICKLIST_2 {
                    input.length()?
                } else {
                    2
                };
                let blob = input.string()?;
                match container {
                    // A plain node holds one (large) element as it is.
                    1 => v.push(Bytes::from(blob.into_owned())),
                    2 => {
                        let items = if ty == types::LIST_QUICKLIST {
                            ziplist::decode(&blob)?
                        } else {
                            listpack::decode(&blob)?
                        };
                        // Redis skips empty nodes silently; an empty list fails below.
                        v.extend(items.iter().map(Item::to_bytes));
                    }
                    _ => return Err(Error("Quicklist integrity check failed")),
                }
            }
            Object::List(v)
        }
        types::STREAM_LISTPACKS | types::STREAM_LISTPACKS_2 => {
            Object::Stream(Box::new(crate::stream::decode(ty, input)?))
        }
        _ => return Err(Error("unknown object type")),
    };
    // Redis refuses empty collections (`RDB_LOAD_ERR_EMPTY_KEY`).
    let empty = match &obj {
        Object::String(_) | Object::Stream(_) => false,
        Object::List(v) | Object::Set(v) => v.is_empty(),
        Object::Hash(v) => v.is_empty(),
        Object::ZSet(v) => v.is_empty(),
    };
    if empty {
        return Err(Error("empty keys are not allowed"));
    }
    Ok(obj)
}

/// Formats a score as Redis 7.0's `d2string` does for a listpack: `nan`, `inf`, `-0`; an
/// integral score within ±2^62 (`double2ll`: `LLONG_MAX / 2`) as an integer; any other as
/// `%.17g` (0.1 as `0.10000000000000001`). redis-server keeps the text a payload holds, and
/// ZSCAN shows it: another form would show through there after a move.
pub fn d2string(d: f64) -> String {
    const LIMIT: f64 = (i64::MAX / 2) as f64;
    if d.is_nan() {
        return "nan".into();
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0" } else { "0" }.into();
    }
    if (-LIMIT..=LIMIT).contains(&d) && d == d.trunc() {
        return (d as i64).to_string();
    }
    resp::format_double(d)
}

/// Largest quicklist node Redis 7.0 builds by default (`list-max-listpack-size -2`: 8 KB).
const QUICKLIST_NODE_BYTES: usize = 8192;

/// Writes the type byte and the value as Redis 7.0 would (`rdbSaveObjectType` +
/// `rdbSaveObject`): strings with integer/LZF encodings, lists as `QUICKLIST_2` of listpack
/// nodes up to 8 KB, and collections in `kind`'s encoding (a set is an intset only if every
/// member is an integer). A sorted set's pairs must be in rank order.
pub fn encode_object(obj: &Object, kind: ObjectKind, out: &mut Vec<u8>) {
    match obj {
        Object::String(s) => {
            out.push(types::STRING);
            put_string(out, s);
        }
        Object::List(items) => {
            out.push(types::LIST_QUICKLIST_2);
            let mut nodes: Vec<Vec<u8>> = Vec::new();
            let mut b = listpack::Builder::new();
            for it in items {
                // Redis's `_quicklistNodeAllowInsert` estimate: the entry plus 11 bytes.
                if !b.is_empty() && b.len() + it.len() + 11 > QUICKLIST_NODE_BYTES {
                    nodes.push(std::mem::take(&mut b).finish());
                }
                b.push(it);
            }
            if !b.is_empty() {
                nodes.push(b.finish());
            }
            put_len(out, nodes.len() as u64);
            for n in nodes {
                put_len(out, 2); // QUICKLIST_NODE_CONTAINER_PACKED
                put_string(out, &n);
            }
        }
        Object::Set(members) => {
            let ints: Option<Vec<i64>> = match kind {
                ObjectKind::Compact => members.iter().map(|m| crate::string2ll(m)).collect(),
                ObjectKind::General => None,
            };
            match ints {
                Some(ints) => {
                    out.push(types::SET_INTSET);
                    put_string(out, &intset::encode(&ints));
                }
                None => {
                    out.push(types::SET);
                    put_len(out, members.len() as u64);
                    for m in members {
                        put_string(out, m);
                    }
                }
            }
        }
        Object::Hash(fields) => match kind {
            ObjectKind::Compact => {
                out.push(types::HASH_LISTPACK);
                let mut b = listpack::Builder::new();
                for (f, v) in fields {
                    b.push(f);
                    b.push(v);
                }
                put_string(out, &b.finish());
            }
            ObjectKind::General => {
                out.push(types::HASH);
                put_len(out, fields.len() as u64);
                for (f, v) in fields {
                    put_string(out, f);
                    put_string(out, v);
                }
            }
        },
        Object::ZSet(pairs) => match kind {
            ObjectKind::Compact => {
                out.push(types::ZSET_LISTPACK);
                let mut b = listpack::Builder::new();
                for (m, s) in pairs {
                    b.push(m);
                    b.push(d2string(*s).as_bytes());
                }
                put_string(out, &b.finish());
            }
            ObjectKind::General => {
                out.push(types::ZSET_2);
                put_len(out, pairs.len() as u64);
                // Redis writes a skiplist from its tail, so a load inserts at the head.
                for (m, s) in pairs.iter().rev() {
                    put_string(out, m);
                    out.extend_from_slice(&s.to_le_bytes());
                }
            }
        },
        Object::Stream(s) => crate::stream::encode(s, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Listpack scores as redis-server 7.0.15 writes them (its DUMP of `ZADD z 0.1 a 1.5e300 b
    /// 9007199254740992 c 4611686018427387904 d 1e19 e`, and ZSCAN's replies).
    #[test]
    fn listpack_scores_as_d2string_writes_them() {
        for (d, want) in [
            (0.1, "0.10000000000000001"),
            (1.5e300, "1.5000000000000001e+300"),
            (9_007_199_254_740_992.0, "9007199254740992"),
            (4_611_686_018_427_387_904.0, "4611686018427387904"),
            (1e19, "1e+19"),
            (-2.5, "-2.5"),
            (3.0, "3"),
            (1e-5, "1.0000000000000001e-05"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (-0.0, "-0"),
        ] {
            assert_eq!(d2string(d), want, "{d}");
        }
    }

    proptest! {
        #[test]
        fn never_panics(ty in 0u8..22, body in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = decode_object(ty, &mut Input::new(&body));
        }

        #[test]
        fn mutated_valid_objects_never_panic(seed in any::<u64>(), flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..4)) {
            let objs = [
                Object::List((0..50).map(|i| Bytes::from(format!("e{i}"))).collect()),
                Object::Hash((0..20).map(|i| (Bytes::from(format!("f{i}")), Bytes::from(i.to_string()))).collect()),
                Object::ZSet((0..20).map(|i| (Bytes::from(format!("m{i}")), i as f64 / 3.0)).collect()),
                Object::Set((0..20).map(|i| Bytes::from(i.to_string())).collect()),
            ];
            let o = &objs[(seed % 4) as usize];
            let kind = if seed & 4 == 0 { ObjectKind::Compact } else { ObjectKind::General };
            let mut out = Vec::new();
            encode_object(o, kind, &mut out);
            for (at, x) in flips {
                let i = at % out.len();
                out[i] ^= x;
            }
            let _ = decode_object(out[0], &mut Input::new(&out[1..]));
        }
    }

    fn round(obj: &Object, kind: ObjectKind) -> (u8, Object) {
        let mut out = Vec::new();
        encode_object(obj, kind, &mut out);
        let mut i = Input::new(&out[1..]);
        let got = decode_object(out[0], &mut i).unwrap();
        assert_eq!(i.remaining(), 0);
        (out[0], got)
    }

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    #[test]
    fn every_type_round_trips() {
        let list = Object::List(
            (0..3000)
                .map(|i| b(&format!("item-{i}-{}", "x".repeat(i % 50))))
                .collect(),
        );
        assert_eq!(
            round(&list, ObjectKind::General),
            (types::LIST_QUICKLIST_2, list.clone())
        );
        let ints = Object::Set(vec![b("3"), b("-1"), b("100000")]);
        let (t, got) = round(&ints, ObjectKind::Compact);
        assert_eq!(t, types::SET_INTSET);
        assert_eq!(got, Object::Set(vec![b("-1"), b("3"), b("100000")]));
        let set = Object::Set(vec![b("a"), b("1")]);
        assert_eq!(round(&set, ObjectKind::Compact), (types::SET, set.clone()));
        let hash = Object::Hash(vec![(b("f"), b("1")), (b("g"), b(&"v".repeat(100)))]);
        assert_eq!(
            round(&hash, ObjectKind::Compact),
            (types::HASH_LISTPACK, hash.clone())
        );
        assert_eq!(
            round(&hash, ObjectKind::General),
            (types::HASH, hash.clone())
        );
        let z = Object::ZSet(vec![
            (b("n"), f64::NEG_INFINITY),
            (b("a"), -0.5),
            (b("z"), -0.0),
            (b("d"), 0.1 + 0.2),
            (b("b"), 3.0),
            (b("c"), 1e300),
            (b("e"), f64::INFINITY),
        ]);
        assert_eq!(
            round(&z, ObjectKind::Compact),
            (types::ZSET_LISTPACK, z.clone())
        );
        assert_eq!(round(&z, ObjectKind::General), (types::ZSET_2, z.clone()));
    }

    #[test]
    fn old_types_decode() {
        let zl = ziplist::encode(&[b"a", b"1", b"b", b"2"]);
        let mut p = Vec::new();
        put_string(&mut p, &zl);
        let dec = |ty| decode_object(ty, &mut Input::new(&p)).unwrap();
        assert_eq!(
            dec(types::LIST_ZIPLIST),
            Object::List(vec![b("a"), b("1"), b("b"), b("2")])
        );
        assert_eq!(
            dec(types::HASH_ZIPLIST),
            Object::Hash(vec![(b("a"), b("1")), (b("b"), b("2"))])
        );
        assert_eq!(
            dec(types::ZSET_ZIPLIST),
            Object::ZSet(vec![(b("a"), 1.0), (b("b"), 2.0)])
        );
        let mut q = Vec::new();
        put_len(&mut q, 2);
        put_string(&mut q, &zl);
        put_string(&mut q, &ziplist::encode(&[]));
        assert_eq!(
            decode_object(types::LIST_QUICKLIST, &mut Input::new(&q)).unwrap(),
            Object::List(vec![b("a"), b("1"), b("b"), b("2")])
        );
        let mut old = Vec::new();
        put_len(&mut old, 2);
        for (m, s) in [("x", &b"\x031.5"[..]), ("y", &[254][..])] {
            put_string(&mut old, m.as_bytes());
            old.extend_from_slice(s);
        }
        assert_eq!(
            decode_object(types::ZSET, &mut Input::new(&old)).unwrap(),
            Object::ZSet(vec![(b("x"), 1.5), (b("y"), f64::INFINITY)])
        );
    }

    #[test]
    fn duplicates_and_empties_fail() {
        let mut p = Vec::new();
        put_len(&mut p, 2);
        put_string(&mut p, b"a");
        put_string(&mut p, b"a");
        assert!(decode_object(types::SET, &mut Input::new(&p)).is_err());
        assert!(decode_object(types::LIST, &mut Input::new(&p)).is_ok());
        assert!(decode_object(types::LIST, &mut Input::new(&[0])).is_err());
        let mut lp = listpack::Builder::new();
        for s in ["f", "1", "f", "2"] {
            lp.push(s.as_bytes());
        }
        let mut h = Vec::new();
        put_string(&mut h, &lp.finish());
        assert!(decode_object(types::HASH_LISTPACK, &mut Input::new(&h)).is_err());
        assert!(decode_object(types::ZSET_LISTPACK, &mut Input::new(&h)).is_err());
        // A huge claimed count fails before allocating.
        assert!(
            decode_object(types::SET, &mut Input::new(&[0x80, 0xff, 0xff, 0xff, 0xff])).is_err()
        );
        let mut nan = Vec::new();
        put_len(&mut nan, 1);
        put_string(&mut nan, b"m");
        nan.extend_from_slice(&f64::NAN.to_le_bytes());
        assert!(decode_object(types::ZSET_2, &mut Input::new(&nan)).is_err());
    }
}
