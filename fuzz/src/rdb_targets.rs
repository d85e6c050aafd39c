//! The RDB object decoder (what RESTORE runs on a payload from the network) and the RDB file
//! reader.
//!
//! - [`rdb_object`]: the first byte is the RDB object type, the rest the object. Checks: no
//!   panic and a clean error or a value; a decoded value re-encoded (in both of Redis 7.0's
//!   encodings) decodes to the same value; the same bytes wrapped in a valid DUMP footer give
//!   the same answer through `rdb::payload::restore`.
//! - [`rdb_file`]: a whole RDB file (see its documentation).

use rdb::{decode_object, encode_object, Input, Object, ObjectKind};

/// A value with its set members sorted (an intset stores them in numeric order).
fn canonical(o: Object) -> Object {
    match o {
        Object::Set(mut m) => {
            m.sort();
            Object::Set(m)
        }
        other => other,
    }
}

/// See the module documentation.
pub fn rdb_object(data: &[u8]) {
    let Some((&ty, body)) = data.split_first() else {
        return;
    };
    let decoded = decode_object(ty, &mut Input::new(body));
    let mut payload = data.to_vec();
    payload.extend_from_slice(&rdb::RDB_VERSION.to_le_bytes());
    let crc = rdb::crc64::crc64(0, &payload);
    payload.extend_from_slice(&crc.to_le_bytes());
    let restored = rdb::payload::restore(&payload);
    let Ok(obj) = decoded else {
        // The payload route may read into the footer, which the bare decoder cannot.
        return;
    };
    assert!(restored.is_ok(), "decodes bare but not as a payload");
    for kind in [ObjectKind::Compact, ObjectKind::General] {
        let mut out = Vec::new();
        encode_object(&obj, kind, &mut out);
        let again =
            decode_object(out[0], &mut Input::new(&out[1..])).expect("re-encoded value decodes");
        assert_eq!(canonical(again), canonical(obj.clone()), "{kind:?}");
    }
}

/// The RDB file reader (what `--import` and, later, a replica's full sync run on a file or a
/// socket): the input is a file, with `REDIS0010` put in front when it has no signature (and a
/// checksum of zero, which means "not computed", lets the fuzzer reach the end). Checks: no
/// panic; an error's offset is within the input; the records read, written again with
/// `FileWriter`, read back the same.
pub fn rdb_file(data: &[u8]) {
    use rdb::file::{FileReader, FileWriter, Record};
    let mut file = Vec::new();
    if !data.starts_with(b"REDIS") {
        file.extend_from_slice(b"REDIS0010");
    }
    file.extend_from_slice(data);
    let mut records = Vec::new();
    let reader = match FileReader::new(&file[..]) {
        Ok(r) => r,
        Err(e) => {
            assert!(e.offset <= file.len() as u64, "{e}");
            return;
        }
    };
    for r in reader {
        match r {
            Ok(rec) => records.push(rec),
            Err(e) => {
                assert!(e.offset <= file.len() as u64, "{e}");
                return;
            }
        }
    }
    let mut w = FileWriter::new(Vec::new()).expect("in memory");
    let mut db = None;
    let mut want = Vec::new();
    for rec in &records {
        match rec {
            Record::Aux(k, v) => w.aux(k, v).expect("in memory"),
            Record::Function(c) => w.function(c).expect("in memory"),
            Record::Entry(e) => {
                if db != Some(e.db) {
                    w.select_db(e.db, 0, 0).expect("in memory");
                    db = Some(e.db);
                }
                w.entry(&e.key, &e.value, ObjectKind::Compact, e.expire_at)
                    .expect("in memory");
                want.push((e.db, e.key.clone(), canonical(e.value.clone()), e.expire_at));
            }
            _ => {}
        }
    }
    let out = w.finish().expect("in memory");
    let mut got = Vec::new();
    for r in FileReader::new(&out[..]).expect("own header") {
        if let Record::Entry(e) = r.expect("own file reads") {
            got.push((e.db, e.key, canonical(e.value), e.expire_at));
        }
    }
    assert_eq!(got, want);
}
