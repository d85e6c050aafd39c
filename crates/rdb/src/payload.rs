//! DUMP payloads: an object (type byte and value), then the RDB version (u16 LE) and a CRC-64
//! (u64 LE) of everything before it. FUNCTION DUMP payloads have the same footer after one
//! `RDB_OPCODE_FUNCTION2` record per library.

use crate::crc64::crc64;
use crate::object::{decode_object, encode_object, Object, ObjectKind};
use crate::{put_string, types, Error, Input, RDB_VERSION};

/// Why a payload was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PayloadError {
    /// Too short, a newer RDB version, or a CRC mismatch (Redis: "DUMP payload version or
    /// checksum are wrong").
    VersionOrChecksum,
    /// The content is malformed (Redis: "Bad data format").
    BadData(Error),
}

fn footer(out: &mut Vec<u8>) {
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64(0, out);
    out.extend_from_slice(&crc.to_le_bytes());
}

/// Checks a payload's footer as Redis's `verifyDumpPayload` does; returns the bytes before it.
///
/// # Errors
/// [`PayloadError::VersionOrChecksum`].
pub fn verify(p: &[u8]) -> Result<&[u8], PayloadError> {
    if p.len() < 10 {
        return Err(PayloadError::VersionOrChecksum);
    }
    let n = p.len();
    let version = u16::from_le_bytes([p[n - 10], p[n - 9]]);
    if version > RDB_VERSION {
        return Err(PayloadError::VersionOrChecksum);
    }
    let crc = u64::from_le_bytes(
        p[n - 8..]
            .try_into()
            .map_err(|_| PayloadError::VersionOrChecksum)?,
    );
    if crc64(0, &p[..n - 8]) != crc {
        return Err(PayloadError::VersionOrChecksum);
    }
    Ok(&p[..n - 10])
}

/// DUMP: the payload of `obj` written in `kind`'s encoding.
pub fn dump(obj: &Object, kind: ObjectKind) -> Vec<u8> {
    let mut out = Vec::new();
    encode_object(obj, kind, &mut out);
    footer(&mut out);
    out
}

/// RESTORE: the object in payload `p`. As in Redis, the object is read from the whole payload:
/// it may run into the footer, and bytes left after it are ignored.
///
/// # Errors
/// As [`PayloadError`] says.
pub fn restore(p: &[u8]) -> Result<Object, PayloadError> {
    verify(p)?;
    let mut input = Input::new(p);
    let ty = input.byte().map_err(PayloadError::BadData)?;
    decode_object(ty, &mut input).map_err(PayloadError::BadData)
}

/// FUNCTION DUMP: the payload of the libraries with source `codes`.
pub fn dump_functions<'a>(codes: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    for c in codes {
        out.push(types::OPCODE_FUNCTION2);
        put_string(&mut out, c);
    }
    footer(&mut out);
    out
}

/// FUNCTION RESTORE: the libraries' source code in payload `p`, or Redis's error text
/// (without the `ERR ` prefix).
///
/// # Errors
/// As described.
pub fn restore_functions(p: &[u8]) -> Result<Vec<Vec<u8>>, &'static str> {
    let body = verify(p).map_err(|_| "DUMP payload version or checksum are wrong")?;
    let mut input = Input::new(body);
    let mut out = Vec::new();
    while input.remaining() > 0 {
        match input.byte() {
            Ok(types::OPCODE_FUNCTION2) => {}
            Ok(types::OPCODE_FUNCTION) => {
                // The pre-GA record (name, engine, optional description, body), read far
                // enough for Redis 7.0.15's error texts; a whole one is not supported.
                input.string().map_err(|_| "Failed loading library name")?;
                input.string().map_err(|_| "Failed loading engine name")?;
                let desc = input.length().map_err(|_| "Failed loading library blob")?;
                if desc != 0 {
                    input
                        .string()
                        .map_err(|_| "Failed loading library description")?;
                }
                input.string().map_err(|_| "Failed loading library blob")?;
                return Err("Pre-GA function format not supported");
            }
            Ok(_) => return Err("given type is not a function"),
            Err(_) => return Err("can not read data type"),
        }
        let code = input
            .string()
            .map_err(|_| "Failed loading library payload")?;
        out.push(code.into_owned());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    #[test]
    fn redis_payload_restores() {
        // `redis-cli DUMP` of `SET k hello` on redis-server 7.0.15.
        let p = b"\x00\x05hello\x0a\x00cr\xdfve4 \x0a";
        assert_eq!(restore(p), Ok(Object::String(Bytes::from_static(b"hello"))));
        assert_eq!(
            dump(
                &Object::String(Bytes::from_static(b"hello")),
                ObjectKind::General
            ),
            p
        );
        // `SET a <30 times a>`: liblzf's compression.
        let p = b"\x00\xc3\x09\x1e\x01aa\xe0\x11\x00\x01aa\x0a\x00Es|\xbb+d{\xbb";
        assert_eq!(restore(p), Ok(Object::String(Bytes::from(vec![b'a'; 30]))));
    }

    #[test]
    fn footer_faults() {
        let p = dump(
            &Object::String(Bytes::from_static(b"x")),
            ObjectKind::General,
        );
        let mut bad_crc = p.clone();
        let n = bad_crc.len();
        bad_crc[n - 1] ^= 1;
        assert_eq!(restore(&bad_crc), Err(PayloadError::VersionOrChecksum));
        assert_eq!(restore(&p[..9]), Err(PayloadError::VersionOrChecksum));
        let mut newer = p[..p.len() - 10].to_vec();
        newer.extend_from_slice(&11u16.to_le_bytes());
        let crc = crc64(0, &newer);
        newer.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(restore(&newer), Err(PayloadError::VersionOrChecksum));
        // Redis reads the object from the whole payload, footer included.
        let mut into_footer = b"\x00\x05v".to_vec();
        footer(&mut into_footer);
        let Ok(Object::String(s)) = restore(&into_footer) else {
            panic!()
        };
        assert_eq!(s, into_footer[2..7]);
        let mut truncated = b"\x00\x0cv".to_vec();
        footer(&mut truncated);
        assert!(matches!(restore(&truncated), Err(PayloadError::BadData(_))));
    }

    #[test]
    fn functions_round_trip() {
        let code = b"#!lua name=mylib\nredis.register_function('f', function() return 1 end)";
        let p = dump_functions([&code[..]]);
        assert_eq!(restore_functions(&p).unwrap(), vec![code.to_vec()]);
        assert_eq!(
            restore_functions(&dump_functions([])).unwrap(),
            Vec::<Vec<u8>>::new()
        );
        let mut other = vec![0u8, 1, b'x'];
        footer(&mut other);
        assert_eq!(
            restore_functions(&other),
            Err("given type is not a function")
        );
    }
}
