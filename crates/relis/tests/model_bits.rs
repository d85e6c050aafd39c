//! Model test: random SETBIT, SETRANGE, APPEND, BITFIELD, GETRANGE, GETBIT, BITCOUNT, SET, COPY and DEL on
//! strings that grow across the chunking threshold (32 KiB, see the engine's chunks.rs) give
//! the same bytes as a plain `Vec<u8>`.

use proptest::prelude::*;
use relis::{BitUnit, Db, FieldAction, FieldOp, Overflow};

#[derive(Clone, Debug)]
enum Op {
    SetBit(u32, bool),
    SetRange(u32, Vec<u8>),
    Append(Vec<u8>),
    Field(u32, u8, i64),
    GetRange(i32, i32),
    GetBit(u32),
    BitCount(Option<(i32, i32, bool)>),
    Set(u16),
    CopyBack,
    Del,
}

/// Offsets cluster near the start, around the threshold and far beyond it.
fn offset() -> impl Strategy<Value = u32> {
    prop_oneof![0..4000u32, 30_000..70_000u32, 0..300_000u32]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (offset(), any::<bool>()).prop_map(|(o, b)| Op::SetBit(o * 8 + o % 8, b)),
        (offset(), proptest::collection::vec(any::<u8>(), 0..5000))
            .prop_map(|(o, v)| Op::SetRange(o, v)),
        proptest::collection::vec(any::<u8>(), 0..3000).prop_map(Op::Append),
        (offset(), 1..64u8, any::<i64>()).prop_map(|(o, b, v)| Op::Field(o * 8 + o % 5, b, v)),
        (-100_000..300_000i32, -100_000..300_000i32).prop_map(|(a, b)| Op::GetRange(a, b)),
        offset().prop_map(|o| Op::GetBit(o * 8 + 3)),
        proptest::option::of((
            -3_000_000..3_000_000i32,
            -3_000_000..3_000_000i32,
            any::<bool>()
        ))
        .prop_map(Op::BitCount),
        (0..50_000u16).prop_map(Op::Set),
        Just(Op::CopyBack),
        Just(Op::Del),
    ]
}

fn setbit(m: &mut Vec<u8>, offset: u64, on: bool) -> u8 {
    let byte = (offset >> 3) as usize;
    if m.len() <= byte {
        m.resize(byte + 1, 0);
    }
    let mask = 1u8 << (7 - (offset & 7));
    let old = u8::from(m[byte] & mask != 0);
    if on {
        m[byte] |= mask;
    } else {
        m[byte] &= !mask;
    }
    old
}

fn run(ops: Vec<Op>) {
    let db = Db::open_in_memory().unwrap();
    let mut model: Option<Vec<u8>> = None;
    for op in ops {
        match op {
            Op::SetBit(o, b) => {
                let got = db
                    .write(move |w| w.setbit(0, b"k", u64::from(o), b))
                    .unwrap()
                    .0;
                let m = model.get_or_insert_with(Vec::new);
                assert_eq!(got, setbit(m, u64::from(o), b), "setbit {o}");
            }
            Op::SetRange(o, v) => {
                let got = db.setrange("k", o as usize, &v).unwrap();
                if !v.is_empty() || model.is_some() {
                    let m = model.get_or_insert_with(Vec::new);
                    let end = o as usize + v.len();
                    if !v.is_empty() && m.len() < end {
                        m.resize(end, 0);
                    }
                    m[o as usize..o as usize + v.len()].copy_from_slice(&v);
                }
                assert_eq!(got as usize, model.as_ref().map_or(0, Vec::len));
            }
            Op::Append(v) => {
                let got = db.append("k", &v).unwrap();
                let m = model.get_or_insert_with(Vec::new);
                m.extend_from_slice(&v);
                assert_eq!(got as usize, m.len());
            }
            Op::Field(o, bits, v) => {
                // An unsigned field written and read back: its low bits land in the model.
                let f = FieldOp {
                    action: FieldAction::Set(v),
                    signed: false,
                    bits: u32::from(bits),
                    offset: u64::from(o),
                    overflow: Overflow::Wrap,
                };
                db.write(move |w| w.bitfield(0, b"k", &[f])).unwrap();
                let m = model.get_or_insert_with(Vec::new);
                for i in 0..u64::from(bits) {
                    let bit = (v as u64 >> (u64::from(bits) - 1 - i)) & 1 == 1;
                    setbit(m, u64::from(o) + i, bit);
                }
                let get = FieldOp {
                    action: FieldAction::Get,
                    ..f
                };
                let got = db.read(move |r| r.bitfield_get(0, b"k", &[get])).unwrap();
                let mask = (1u64 << bits) - 1;
                assert_eq!(got, vec![Some((v as u64 & mask) as i64)]);
            }
            Op::GetRange(a, b) => {
                let got = db.getrange("k", i64::from(a), i64::from(b)).unwrap();
                let want = match &model {
                    Some(m) => match relis::clamp_range(m.len(), i64::from(a), i64::from(b)) {
                        Some((s, e)) => m[s..e].to_vec(),
                        None => Vec::new(),
                    },
                    None => Vec::new(),
                };
                assert_eq!(got.to_vec(), want, "getrange {a} {b}");
            }
            Op::GetBit(o) => {
                let got = db.read(move |r| r.getbit(0, b"k", u64::from(o))).unwrap();
                let want = model.as_ref().map(|m| {
                    m.get((o >> 3) as usize)
                        .map_or(0, |b| (b >> (7 - (o & 7))) & 1)
                });
                assert_eq!(got, want);
            }
            Op::BitCount(range) => {
                let range = range.map(|(a, b, bit)| {
                    let unit = if bit { BitUnit::Bit } else { BitUnit::Byte };
                    (i64::from(a), i64::from(b), unit)
                });
                let got = db.read(move |r| r.bitcount(0, b"k", range)).unwrap();
                let want = model.as_ref().map_or(0, |m| relis::bitcount(m, range));
                assert_eq!(got, want, "bitcount {range:?}");
            }
            Op::Set(n) => {
                let v: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
                db.set("k", &v).unwrap();
                model = Some(v);
            }
            Op::CopyBack => {
                // COPY to another key and back over the original: chunks are copied.
                if model.is_some() {
                    db.write(|w| {
                        w.copy(0, b"k", 0, b"k2", true)?;
                        w.copy(0, b"k2", 0, b"k", true)
                    })
                    .unwrap();
                }
            }
            Op::Del => {
                db.write(|w| w.del(0, &[bytes::Bytes::from_static(b"k")]))
                    .unwrap();
                model = None;
            }
        }
        let whole = db.get("k").unwrap().map(|b| b.to_vec());
        assert_eq!(whole.as_ref().map(Vec::len), model.as_ref().map(Vec::len));
        assert!(whole == model, "whole value differs");
        assert_eq!(
            db.strlen("k").unwrap() as usize,
            model.as_ref().map_or(0, Vec::len)
        );
    }
    // The SQL view shows the same bytes.
    let out = db
        .sql_query(
            "SELECT CAST(value AS BLOB) FROM redis_strings WHERE key = 'k'",
            (),
        )
        .unwrap();
    let view = out.rows.first().map(|r| match &r[0] {
        relis::SqlValue::Blob(b) => b.to_vec(),
        other => panic!("{other:?}"),
    });
    assert!(view == model, "the view differs");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn strings_across_the_chunk_threshold_match_a_vec(ops in proptest::collection::vec(op(), 1..40)) {
        run(ops);
    }
}
