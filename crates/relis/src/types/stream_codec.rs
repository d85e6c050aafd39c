//! How a stream entry is stored: ids as integers that sort as the ids do, fields as one
//! length-prefixed blob. Pure functions, shared by the stream commands and by the functions
//! the `redis_streams` view calls (`sql/sandbox.rs`).

use crate::error::{Error, Result};
use bytes::Bytes;

/// Stores `v` as an SQLite integer that sorts as `v` does: the top bit flipped.
pub(crate) fn enc(v: u64) -> i64 {
    (v ^ (1 << 63)) as i64
}

/// The inverse of [`enc`].
pub(crate) fn dec(v: i64) -> u64 {
    (v as u64) ^ (1 << 63)
}

/// An entry's fields and values as one BLOB: each string as its length (unsigned LEB128) then
/// its bytes, field, value, field, value. Two short fields take 48 bytes an entry in the file
/// where a row per field took 71 (100,000 entries, measured), and an XADD writes one B-tree
/// entry.
pub(crate) fn encode_fields(fields: &[Bytes]) -> Vec<u8> {
    let mut out = Vec::with_capacity(fields.iter().map(|f| f.len() + 2).sum());
    for f in fields {
        let mut n = f.len() as u64;
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(b);
                break;
            }
            out.push(b | 0x80);
        }
        out.extend_from_slice(f);
    }
    out
}

/// The inverse of [`encode_fields`].
pub(crate) fn decode_fields(blob: &[u8]) -> Result<Vec<Bytes>> {
    let bad = || Error::Storage("a damaged stream entry".into());
    let mut out = Vec::new();
    let mut i = 0;
    while i < blob.len() {
        let (mut n, mut shift) = (0u64, 0);
        loop {
            let b = *blob.get(i).ok_or_else(bad)?;
            i += 1;
            n |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
            if shift > 63 {
                return Err(bad());
            }
        }
        let end = i.checked_add(n as usize).filter(|&e| e <= blob.len());
        let end = end.ok_or_else(bad)?;
        out.push(Bytes::copy_from_slice(&blob[i..end]));
        i = end;
    }
    Ok(out)
}

/// An entry's fields and values as a JSON array of strings, `[field, value, ...]`, for the
/// `redis_streams` view (bytes that are not UTF-8 show as U+FFFD, as the other views' TEXT
/// would not show them either). An array, not an object: an entry may repeat a field.
pub(crate) fn fields_json(fields: &[Bytes]) -> String {
    let mut out = String::from("[");
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('"');
        for ch in String::from_utf8_lossy(f).chars() {
            match ch {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
    }
    out.push(']');
    out
}
