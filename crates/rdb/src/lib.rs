//! Redis's RDB serialization of single values, as DUMP, RESTORE and MIGRATE carry them, and
//! the pieces an RDB file is built from (lengths, strings, LZF, CRC-64, the compact encodings):
//! written so that loading and writing whole RDB files, and following a live Redis as a
//! replica, can reuse it. [`file`] reads and writes whole RDB files as streams.
//!
//! Every decoder here takes hostile input: lengths are checked against the bytes that remain
//! before anything is allocated, the compact encodings (listpack, ziplist, intset, zipmap) are
//! validated as Redis's deep sanitization (`sanitize-dump-payload yes`) does, duplicates in
//! sets, hashes and sorted sets are refused, and every failure is an [`Error`], never a panic.
#![warn(missing_docs)]

pub mod crc64;
pub mod file;
pub mod intset;
pub mod listpack;
pub mod lzf;
mod object;
pub mod payload;
pub mod stream;
pub mod ziplist;
pub mod zipmap;

pub use object::{d2string, decode_object, encode_object, Object, ObjectKind};
pub use stream::Stream;

/// The RDB version Redis 7.0 writes (and the newest it reads).
pub const RDB_VERSION: u16 = 10;

/// The longest string a decoder builds (Redis's `proto-max-bulk-len` default, 512 MB): an LZF
/// string claiming more is refused before it is inflated.
pub const MAX_STRING: usize = 512 * 1024 * 1024;

/// RDB object type bytes (Redis 7.0's `RDB_TYPE_*`).
pub mod types {
    /// A string.
    pub const STRING: u8 = 0;
    /// A list, element by element (Redis < 3.2).
    pub const LIST: u8 = 1;
    /// A set, member by member.
    pub const SET: u8 = 2;
    /// A sorted set with scores as strings (Redis < 3.0).
    pub const ZSET: u8 = 3;
    /// A hash, field by field.
    pub const HASH: u8 = 4;
    /// A sorted set with binary double scores.
    pub const ZSET_2: u8 = 5;
    /// A module value (not supported).
    pub const MODULE_2: u8 = 7;
    /// A hash as a zipmap (Redis < 2.6).
    pub const HASH_ZIPMAP: u8 = 9;
    /// A list as one ziplist (Redis < 3.2).
    pub const LIST_ZIPLIST: u8 = 10;
    /// A set of integers as an intset.
    pub const SET_INTSET: u8 = 11;
    /// A sorted set as a ziplist (Redis < 7).
    pub const ZSET_ZIPLIST: u8 = 12;
    /// A hash as a ziplist (Redis < 7).
    pub const HASH_ZIPLIST: u8 = 13;
    /// A list as a quicklist of ziplists (Redis 3.2 to 6.2).
    pub const LIST_QUICKLIST: u8 = 14;
    /// A stream (Redis 5 and 6).
    pub const STREAM_LISTPACKS: u8 = 15;
    /// A hash as a listpack.
    pub const HASH_LISTPACK: u8 = 16;
    /// A sorted set as a listpack.
    pub const ZSET_LISTPACK: u8 = 17;
    /// A list as a quicklist of listpack (or plain) nodes.
    pub const LIST_QUICKLIST_2: u8 = 18;
    /// A stream with the Redis 7.0 metadata.
    pub const STREAM_LISTPACKS_2: u8 = 19;
    /// A function library (FUNCTION DUMP).
    pub const OPCODE_FUNCTION2: u8 = 245;
    /// A function in the pre-GA 7.0 format.
    pub const OPCODE_FUNCTION: u8 = 246;
}

/// A malformed input: what was wrong with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Error(pub &'static str);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for Error {}

/// This crate's result.
pub type Result<T> = std::result::Result<T, Error>;

/// Parses `s` as Redis's `string2ll` does: a canonical decimal `i64` (no sign `+`, no leading
/// zeros, no `-0`, no spaces).
pub fn string2ll(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (neg, digits) = match s[0] {
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    if !matches!(digits.first(), Some(b'1'..=b'9')) {
        return None;
    }
    let mut v: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    if neg {
        if v > 1 << 63 {
            None
        } else {
            Some((v as i64).wrapping_neg())
        }
    } else {
        i64::try_from(v).ok()
    }
}

/// A cursor over RDB bytes: every read is checked against what remains.
#[derive(Clone, Debug)]
pub struct Input<'a> {
    buf: &'a [u8],
    pos: usize,
}

/// What a length field holds: a length, or (for strings) a special encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Len {
    /// A plain length.
    Len(u64),
    /// `RDB_ENCVAL` with its type (0 int8, 1 int16, 2 int32, 3 LZF).
    Encoded(u8),
}

impl<'a> Input<'a> {
    /// A cursor at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Input<'a> {
        Input { buf, pos: 0 }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Bytes read so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The next byte.
    ///
    /// # Errors
    /// At the end of the input.
    pub fn byte(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    /// The next `n` bytes.
    ///
    /// # Errors
    /// When fewer remain.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(Error("unexpected end of payload"));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    /// A length field (`rdbLoadLenByRef`), which may announce a string's special encoding.
    ///
    /// # Errors
    /// Truncated input or an unknown length type.
    pub fn len_or_encoding(&mut self) -> Result<Len> {
        let b = self.byte()?;
        Ok(match b >> 6 {
            0 => Len::Len(u64::from(b & 0x3f)),
            1 => Len::Len((u64::from(b & 0x3f) << 8) | u64::from(self.byte()?)),
            2 => match b {
                0x80 => Len::Len(u64::from(u32::from_be_bytes(self.array()?))),
                0x81 => Len::Len(u64::from_be_bytes(self.array()?)),
                _ => return Err(Error("unknown length encoding")),
            },
            _ => Len::Encoded(b & 0x3f),
        })
    }

    /// A plain length.
    ///
    /// # Errors
    /// Truncated input, or a string encoding where a length belongs.
    pub fn length(&mut self) -> Result<u64> {
        match self.len_or_encoding()? {
            Len::Len(n) => Ok(n),
            Len::Encoded(_) => Err(Error("unexpected string encoding")),
        }
    }

    /// A count of elements, each taking at least `min_bytes` bytes: more than the input can
    /// hold is refused, so a claimed count never drives an allocation.
    ///
    /// # Errors
    /// As [`Input::len`], or an impossible count.
    pub fn count(&mut self, min_bytes: usize) -> Result<usize> {
        let n = self.length()?;
        match usize::try_from(n) {
            Ok(n) if n.saturating_mul(min_bytes.max(1)) <= self.remaining() => Ok(n),
            _ => Err(Error("count larger than the payload")),
        }
    }

    /// A string (`rdbGenericLoadStringObject`): raw, an encoded integer, or LZF-compressed.
    ///
    /// # Errors
    /// Truncated input, a bad encoding, a bad LZF stream.
    pub fn string(&mut self) -> Result<std::borrow::Cow<'a, [u8]>> {
        use std::borrow::Cow;
        match self.len_or_encoding()? {
            Len::Len(n) => {
                let n = usize::try_from(n).map_err(|_| Error("string too long"))?;
                Ok(Cow::Borrowed(self.take(n)?))
            }
            Len::Encoded(0) => Ok(Cow::Owned((self.byte()? as i8).to_string().into_bytes())),
            Len::Encoded(1) => Ok(Cow::Owned(
                i16::from_le_bytes(self.array()?).to_string().into_bytes(),
            )),
            Len::Encoded(2) => Ok(Cow::Owned(
                i32::from_le_bytes(self.array()?).to_string().into_bytes(),
            )),
            Len::Encoded(3) => {
                let clen = usize::try_from(self.length()?).map_err(|_| Error("bad LZF length"))?;
                let len = usize::try_from(self.length()?).map_err(|_| Error("bad LZF length"))?;
                if len > MAX_STRING {
                    return Err(Error("string too long"));
                }
                let c = self.take(clen)?;
                Ok(Cow::Owned(lzf::decompress(c, len)?))
            }
            Len::Encoded(_) => Err(Error("unknown string encoding")),
        }
    }

    /// A string as [`bytes::Bytes`].
    ///
    /// # Errors
    /// As [`Input::string`].
    pub fn bytes(&mut self) -> Result<bytes::Bytes> {
        Ok(match self.string()? {
            std::borrow::Cow::Borrowed(s) => bytes::Bytes::copy_from_slice(s),
            std::borrow::Cow::Owned(v) => bytes::Bytes::from(v),
        })
    }

    /// A double in the old string form (`rdbLoadDoubleValue`): a length byte (253 NaN, 254
    /// +inf, 255 -inf) and the decimal text.
    ///
    /// # Errors
    /// Truncated input or text that is not a number.
    pub fn string_double(&mut self) -> Result<f64> {
        match self.byte()? {
            253 => Ok(f64::NAN),
            254 => Ok(f64::INFINITY),
            255 => Ok(f64::NEG_INFINITY),
            n => {
                let s = self.take(usize::from(n))?;
                std::str::from_utf8(s)
                    .ok()
                    .and_then(|s| s.trim().parse::<f64>().ok())
                    .ok_or(Error("bad double value"))
            }
        }
    }

    /// A binary double (8 bytes, little endian).
    ///
    /// # Errors
    /// Truncated input.
    pub fn binary_double(&mut self) -> Result<f64> {
        Ok(f64::from_le_bytes(self.array()?))
    }

    /// A little-endian `u64` (RDB millisecond times, stream ids in some places).
    ///
    /// # Errors
    /// Truncated input.
    pub fn u64_le(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// A big-endian `u64` (stream ids in listpack master keys and PELs).
    ///
    /// # Errors
    /// Truncated input.
    pub fn u64_be(&mut self) -> Result<u64> {
        Ok(u64::from_be_bytes(self.array()?))
    }
}

/// Appends a length field (`rdbSaveLen`).
pub fn put_len(out: &mut Vec<u8>, n: u64) {
    if n < 1 << 6 {
        out.push(n as u8);
    } else if n < 1 << 14 {
        out.push(0x40 | (n >> 8) as u8);
        out.push(n as u8);
    } else if n <= u64::from(u32::MAX) {
        out.push(0x80);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

/// Appends a string as `rdbSaveRawString` does with `rdbcompression yes`: an integer encoding
/// when it is a canonical integer that fits 32 bits, LZF when it is longer than 20 bytes and
/// compresses by at least 4 bytes, otherwise raw.
pub fn put_string(out: &mut Vec<u8>, s: &[u8]) {
    if s.len() <= 11 {
        if let Some(v) = string2ll(s) {
            if let Ok(v) = i8::try_from(v) {
                out.extend_from_slice(&[0xc0, v as u8]);
                return;
            }
            if let Ok(v) = i16::try_from(v) {
                out.push(0xc1);
                out.extend_from_slice(&v.to_le_bytes());
                return;
            }
            if let Ok(v) = i32::try_from(v) {
                out.push(0xc2);
                out.extend_from_slice(&v.to_le_bytes());
                return;
            }
        }
    }
    if s.len() > 20 {
        if let Some(c) = lzf::compress(s, s.len() - 4) {
            out.push(0xc3);
            put_len(out, c.len() as u64);
            put_len(out, s.len() as u64);
            out.extend_from_slice(&c);
            return;
        }
    }
    put_len(out, s.len() as u64);
    out.extend_from_slice(s);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string2ll_is_strict() {
        assert_eq!(string2ll(b"0"), Some(0));
        assert_eq!(string2ll(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(string2ll(b"9223372036854775807"), Some(i64::MAX));
        for s in [
            &b""[..],
            b"-0",
            b"01",
            b"+1",
            b" 1",
            b"1 ",
            b"9223372036854775808",
            b"-",
        ] {
            assert_eq!(string2ll(s), None, "{s:?}");
        }
    }

    #[test]
    fn lengths_round_trip() {
        for n in [
            0u64,
            63,
            64,
            16383,
            16384,
            u64::from(u32::MAX),
            u64::from(u32::MAX) + 1,
        ] {
            let mut out = Vec::new();
            put_len(&mut out, n);
            let mut i = Input::new(&out);
            assert_eq!(i.length().unwrap(), n);
            assert_eq!(i.remaining(), 0);
        }
    }

    #[test]
    fn strings_round_trip_in_every_encoding() {
        let long = b"hello world, hello world, hello world".repeat(3);
        let cases: [(&[u8], u8); 7] = [
            (b"12", 0xc0),
            (b"-300", 0xc1),
            (b"100000", 0xc2),
            (b"4294967296", 10),
            (b"012", 3),
            (&long, 0xc3),
            (b"abcdefghijklmnopqrstuvwxyz", 26),
        ];
        for (s, first) in cases {
            let mut out = Vec::new();
            put_string(&mut out, s);
            assert_eq!(out[0], first, "{:?}", String::from_utf8_lossy(s));
            let mut i = Input::new(&out);
            assert_eq!(&*i.string().unwrap(), s);
            assert_eq!(i.remaining(), 0);
        }
    }

    #[test]
    fn hostile_strings_fail() {
        assert!(Input::new(&[0x80, 0xff, 0xff, 0xff, 0xff, b'a'])
            .string()
            .is_err());
        assert!(Input::new(&[0xc3, 2, 0x84, 0x7f, 0xff, 0xff, 0xff, 0, 1])
            .string()
            .is_err());
        assert!(Input::new(&[0xc5]).string().is_err());
        assert!(Input::new(&[0xc2, 1]).string().is_err());
        assert!(
            Input::new(&[0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])
                .string()
                .is_err()
        );
    }
}
