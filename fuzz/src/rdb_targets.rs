//! The RDB object decoder (what RESTORE runs on a payload from the network).
//!
//! - [`rdb_object`]: the first byte is the RDB object type, the rest the object. Checks: no
//!   panic and a clean error or a value; a decoded value re-encoded (in both of Redis 7.0's
//!   encodings) decodes to the same value; the same bytes wrapped in a valid DUMP footer give
//!   the same answer through `rdb::payload::restore`.

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
