//! Whole RDB files, streamed: [`FileReader`] reads records one at a time from any byte stream
//! (a file, or a replica's full-resync payload) and [`FileWriter`] writes a file Redis 7.0
//! loads. Neither holds more than one value in memory.
//!
//! A file is `REDIS` and a four-digit version, then records: aux fields, functions, and per
//! database `SELECTDB`, `RESIZEDB` and keys (each optionally preceded by its expiry and its
//! LRU/LFU hints), then `EOF` and, from version 5, a CRC-64 of everything before it (0 when the
//! writer had `rdbchecksum no`).
//!
//! The reader does not decode a value while reading it: it walks the value's structure
//! (lengths, strings, per type) copying its bytes, then hands the copy to
//! [`decode_object`](crate::decode_object), so values are checked exactly as RESTORE checks
//! them, and a bad length can never make it allocate more than the stream really holds.

use crate::crc64::crc64;
use crate::object::{decode_object, encode_object, Object, ObjectKind};
use crate::{put_len, put_string, types, Input, Len, RDB_VERSION};
use bytes::Bytes;
use std::io::{self, BufRead, BufReader, Read, Write};

/// RDB opcodes (Redis 7.0's `RDB_OPCODE_*`).
pub mod opcodes {
    /// Module auxiliary data (skipped).
    pub const MODULE_AUX: u8 = 247;
    /// The next key's LRU idle time in seconds.
    pub const IDLE: u8 = 248;
    /// The next key's LFU counter.
    pub const FREQ: u8 = 249;
    /// An auxiliary field (name, value).
    pub const AUX: u8 = 250;
    /// Hash table sizes of the current database.
    pub const RESIZEDB: u8 = 251;
    /// The next key's expiry in unix milliseconds.
    pub const EXPIRETIME_MS: u8 = 252;
    /// The next key's expiry in unix seconds.
    pub const EXPIRETIME: u8 = 253;
    /// The database the keys that follow belong to.
    pub const SELECTDB: u8 = 254;
    /// End of the file (the checksum follows).
    pub const EOF: u8 = 255;
}

/// Why reading a file stopped: what was wrong and at which byte of the stream.
#[derive(Debug)]
pub struct FileError {
    /// Offset in the stream (from its first byte, the `R` of `REDIS`) where the fault is.
    pub offset: u64,
    /// What was wrong.
    pub message: String,
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (at byte {})", self.message, self.offset)
    }
}

impl std::error::Error for FileError {}

/// One key with its value, read from a file.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// Its database (the last `SELECTDB`; 0 before any).
    pub db: u64,
    /// The key.
    pub key: Bytes,
    /// The value.
    pub value: Object,
    /// Expiry in unix milliseconds. The reader does not drop expired keys: a Redis master
    /// does when it loads, a replica does not, so the caller decides.
    pub expire_at: Option<i64>,
    /// LRU idle time in seconds, if the file has it.
    pub idle_secs: Option<u64>,
    /// LFU counter, if the file has it.
    pub freq: Option<u8>,
    /// Offset of the record's first byte.
    pub offset: u64,
}

/// A record of a file.
#[derive(Clone, Debug, PartialEq)]
pub enum Record {
    /// An auxiliary field (`redis-ver`, `ctime`, `repl-id`, ...).
    Aux(Bytes, Bytes),
    /// The keys that follow are in this database.
    SelectDb(u64),
    /// Size hints of the current database: keys, and keys with an expiry.
    ResizeDb(u64, u64),
    /// Module auxiliary data of the named module, skipped (Relis has no modules).
    ModuleAux(String),
    /// A FUNCTION library's source code.
    Function(Bytes),
    /// A key.
    Entry(Entry),
}

/// The name of a module from its 64-bit type id (`moduleTypeNameByID`): nine characters of
/// six bits each above a ten-bit encoding version.
pub fn module_name(id: u64) -> String {
    const CHARSET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let id = id >> 10;
    (0..9)
        .map(|j| char::from(CHARSET[((id >> (6 * (8 - j))) & 63) as usize]))
        .collect()
}

/// Module value opcodes (`RDB_MODULE_OPCODE_*`), which make module data self-describing.
mod module_op {
    pub const EOF: u64 = 0;
    pub const SINT: u64 = 1;
    pub const UINT: u64 = 2;
    pub const FLOAT: u64 = 3;
    pub const DOUBLE: u64 = 4;
    pub const STRING: u64 = 5;
}

/// Reads an RDB file record by record from a byte stream, checking its CRC-64 at the end.
pub struct FileReader<R: Read> {
    inner: BufReader<R>,
    offset: u64,
    crc: u64,
    version: u16,
    db: u64,
    done: bool,
    /// The bytes of the record being read (key and value), reused between records.
    buf: Vec<u8>,
}

type FResult<T> = Result<T, FileError>;

impl<R: Read> FileReader<R> {
    /// Reads the header: `REDIS` and a version Redis 7.0 reads (1 to 10).
    ///
    /// # Errors
    /// A wrong signature, an unsupported version, a read error.
    pub fn new(inner: R) -> FResult<FileReader<R>> {
        let mut r = FileReader {
            inner: BufReader::with_capacity(1 << 20, inner),
            offset: 0,
            crc: 0,
            version: 0,
            db: 0,
            done: false,
            buf: Vec::new(),
        };
        r.capture(9)?;
        if &r.buf[..5] != b"REDIS" {
            return Err(r.fail_at(0, "Wrong signature trying to load DB from file"));
        }
        let version = std::str::from_utf8(&r.buf[5..9])
            .ok()
            .filter(|v| v.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|v| v.parse::<u16>().ok());
        match version {
            Some(v) if (1..=RDB_VERSION).contains(&v) => r.version = v,
            _ => {
                let shown = String::from_utf8_lossy(&r.buf[5..9]).into_owned();
                return Err(r.fail_at(5, format!("Can't handle RDB format version {shown}")));
            }
        }
        r.buf.clear();
        Ok(r)
    }

    /// The file's RDB version.
    pub fn version(&self) -> u16 {
        self.version
    }

    /// Bytes read so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    fn fail_at(&self, offset: u64, message: impl Into<String>) -> FileError {
        FileError {
            offset,
            message: message.into(),
        }
    }

    fn io(&self, e: &io::Error) -> FileError {
        self.fail_at(self.offset, format!("read error: {e}"))
    }

    fn eof(&self) -> FileError {
        self.fail_at(self.offset, "unexpected end of file")
    }

    /// Consumes `n` bytes, appending them to `buf` if `keep`. Reads piece by piece, so a
    /// length claimed by a hostile file costs no more memory than the bytes really there.
    fn consume(&mut self, mut n: u64, keep: bool) -> FResult<()> {
        while n > 0 {
            let avail = match self.inner.fill_buf() {
                Ok(a) => a,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.io(&e)),
            };
            if avail.is_empty() {
                return Err(self.eof());
            }
            let k = avail.len().min(usize::try_from(n).unwrap_or(usize::MAX));
            self.crc = crc64(self.crc, &avail[..k]);
            if keep {
                self.buf.extend_from_slice(&avail[..k]);
            }
            self.inner.consume(k);
            self.offset += k as u64;
            n -= k as u64;
        }
        Ok(())
    }

    fn capture(&mut self, n: u64) -> FResult<()> {
        self.consume(n, true)
    }

    fn byte(&mut self) -> FResult<u8> {
        self.capture(1)?;
        Ok(self.buf.pop().unwrap_or_default())
    }

    /// Fixed-size little-endian bytes, not kept.
    fn array<const N: usize>(&mut self) -> FResult<[u8; N]> {
        let at = self.buf.len();
        self.capture(N as u64)?;
        let mut a = [0u8; N];
        a.copy_from_slice(&self.buf[at..]);
        self.buf.truncate(at);
        Ok(a)
    }

    /// A length field, kept in `buf`.
    fn len_or_encoding(&mut self) -> FResult<Len> {
        let at = self.offset;
        let b = self.byte()?;
        self.buf.push(b);
        Ok(match b >> 6 {
            0 => Len::Len(u64::from(b & 0x3f)),
            1 => {
                let lo = self.byte()?;
                self.buf.push(lo);
                Len::Len((u64::from(b & 0x3f) << 8) | u64::from(lo))
            }
            2 => match b {
                0x80 => {
                    let a = self.array::<4>()?;
                    self.buf.extend_from_slice(&a);
                    Len::Len(u64::from(u32::from_be_bytes(a)))
                }
                0x81 => {
                    let a = self.array::<8>()?;
                    self.buf.extend_from_slice(&a);
                    Len::Len(u64::from_be_bytes(a))
                }
                _ => return Err(self.fail_at(at, "unknown length encoding")),
            },
            _ => Len::Encoded(b & 0x3f),
        })
    }

    fn length(&mut self) -> FResult<u64> {
        let at = self.offset;
        match self.len_or_encoding()? {
            Len::Len(n) => Ok(n),
            Len::Encoded(_) => Err(self.fail_at(at, "unexpected string encoding")),
        }
    }

    /// A string (raw, integer or LZF), kept in `buf` as written.
    fn string(&mut self) -> FResult<()> {
        let at = self.offset;
        match self.len_or_encoding()? {
            Len::Len(n) => self.capture(n),
            Len::Encoded(0) => self.capture(1),
            Len::Encoded(1) => self.capture(2),
            Len::Encoded(2) => self.capture(4),
            Len::Encoded(3) => {
                let clen = self.length()?;
                self.length()?;
                self.capture(clen)
            }
            Len::Encoded(_) => Err(self.fail_at(at, "unknown string encoding")),
        }
    }

    /// Walks a value of type `ty`, keeping its bytes in `buf`.
    fn value(&mut self, ty: u8, at: u64) -> FResult<()> {
        match ty {
            types::STRING
            | types::HASH_ZIPMAP
            | types::LIST_ZIPLIST
            | types::SET_INTSET
            | types::ZSET_ZIPLIST
            | types::HASH_ZIPLIST
            | types::HASH_LISTPACK
            | types::ZSET_LISTPACK => self.string(),
            types::LIST | types::SET | types::LIST_QUICKLIST => {
                for _ in 0..self.length()? {
                    self.string()?;
                }
                Ok(())
            }
            types::HASH => {
                for _ in 0..self.length()? {
                    self.string()?;
                    self.string()?;
                }
                Ok(())
            }
            types::ZSET => {
                for _ in 0..self.length()? {
                    self.string()?;
                    let n = self.byte()?;
                    self.buf.push(n);
                    if n < 253 {
                        self.capture(u64::from(n))?;
                    }
                }
                Ok(())
            }
            types::ZSET_2 => {
                for _ in 0..self.length()? {
                    self.string()?;
                    self.capture(8)?;
                }
                Ok(())
            }
            types::LIST_QUICKLIST_2 => {
                for _ in 0..self.length()? {
                    self.length()?;
                    self.string()?;
                }
                Ok(())
            }
            types::STREAM_LISTPACKS | types::STREAM_LISTPACKS_2 => {
                let v2 = ty == types::STREAM_LISTPACKS_2;
                for _ in 0..self.length()? {
                    self.string()?;
                    self.string()?;
                }
                // length, last id; v2: first id, max deleted id, entries added.
                for _ in 0..if v2 { 8 } else { 3 } {
                    self.length()?;
                }
                for _ in 0..self.length()? {
                    self.string()?;
                    self.length()?;
                    self.length()?;
                    if v2 {
                        self.length()?;
                    }
                    for _ in 0..self.length()? {
                        self.capture(16 + 8)?;
                        self.length()?;
                    }
                    for _ in 0..self.length()? {
                        self.string()?;
                        self.capture(8)?;
                        let n = self.length()?;
                        self.capture(n.saturating_mul(16))?;
                    }
                }
                Ok(())
            }
            6 | types::MODULE_2 => {
                let id = self.length()?;
                Err(self.fail_at(
                    at,
                    format!(
                        "a value of module type '{}' cannot be loaded: Relis has no modules",
                        module_name(id)
                    ),
                ))
            }
            _ => Err(self.fail_at(at, format!("Unknown RDB encoding type {ty}"))),
        }
    }

    /// Skips self-describing module data up to its EOF opcode (`rdbLoadCheckModuleValue`).
    fn skip_module_value(&mut self) -> FResult<()> {
        loop {
            let at = self.offset;
            let op = self.length()?;
            match op {
                module_op::EOF => break,
                module_op::SINT | module_op::UINT => {
                    self.length()?;
                }
                module_op::FLOAT => self.capture(4)?,
                module_op::DOUBLE => self.capture(8)?,
                module_op::STRING => self.string()?,
                _ => return Err(self.fail_at(at, format!("Unknown module opcode {op}"))),
            }
            self.buf.clear();
        }
        self.buf.clear();
        Ok(())
    }

    /// Decodes the string at the start of `buf[from..]`.
    fn decode_string(&self, from: usize, at: u64) -> FResult<Bytes> {
        Input::new(&self.buf[from..])
            .bytes()
            .map_err(|e| self.fail_at(at, e.0))
    }

    /// The next record, or `None` after the `EOF` opcode and a good checksum.
    ///
    /// # Errors
    /// A malformed, truncated or unsupported file, a checksum mismatch, a read error; the
    /// error names the offset. After an error or the end, `None`.
    pub fn next_record(&mut self) -> FResult<Option<Record>> {
        if self.done {
            return Ok(None);
        }
        let r = self.read_record();
        if !matches!(r, Ok(Some(_))) {
            self.done = true;
        }
        r
    }

    fn read_record(&mut self) -> FResult<Option<Record>> {
        let (mut expire_at, mut idle_secs, mut freq) = (None, None, None);
        let start = self.offset;
        loop {
            self.buf.clear();
            let at = self.offset;
            let op = self.byte()?;
            match op {
                opcodes::EXPIRETIME_MS => {
                    expire_at = Some(i64::from_le_bytes(self.array()?));
                }
                opcodes::EXPIRETIME => {
                    expire_at = Some(i64::from(i32::from_le_bytes(self.array()?)) * 1000);
                }
                opcodes::IDLE => idle_secs = Some(self.length()?),
                opcodes::FREQ => freq = Some(self.byte()?),
                opcodes::SELECTDB => {
                    let db = self.length()?;
                    self.db = db;
                    return Ok(Some(Record::SelectDb(db)));
                }
                opcodes::RESIZEDB => {
                    let keys = self.length()?;
                    let expires = self.length()?;
                    return Ok(Some(Record::ResizeDb(keys, expires)));
                }
                opcodes::AUX => {
                    self.string()?;
                    let split = self.buf.len();
                    let vat = self.offset;
                    self.string()?;
                    let name = self.decode_string(0, at + 1)?;
                    let value = self.decode_string(split, vat)?;
                    return Ok(Some(Record::Aux(name, value)));
                }
                opcodes::MODULE_AUX => {
                    let id = self.length()?;
                    let wat = self.offset;
                    if self.length()? != module_op::UINT {
                        return Err(self.fail_at(wat, "bad when_opcode"));
                    }
                    self.length()?;
                    self.buf.clear();
                    self.skip_module_value()?;
                    return Ok(Some(Record::ModuleAux(module_name(id))));
                }
                types::OPCODE_FUNCTION => {
                    return Err(self.fail_at(at, "Pre-release function format not supported."));
                }
                types::OPCODE_FUNCTION2 => {
                    self.buf.clear();
                    self.string()?;
                    let code = self.decode_string(0, at + 1)?;
                    return Ok(Some(Record::Function(code)));
                }
                opcodes::EOF => {
                    let computed = self.crc;
                    if self.version >= 5 {
                        let sum_at = self.offset;
                        let expected = u64::from_le_bytes(self.array()?);
                        // 0: written with `rdbchecksum no`.
                        if expected != 0 && expected != computed {
                            return Err(self.fail_at(
                                sum_at,
                                format!(
                                    "Wrong RDB checksum expected: ({expected:x}) got: ({computed:x})"
                                ),
                            ));
                        }
                    }
                    return Ok(None);
                }
                ty => {
                    self.buf.clear();
                    let key_at = self.offset;
                    self.string()?;
                    let split = self.buf.len();
                    let value_at = self.offset;
                    self.value(ty, at)?;
                    let key = self.decode_string(0, key_at)?;
                    let mut input = Input::new(&self.buf[split..]);
                    let fault = match decode_object(ty, &mut input) {
                        Ok(v) if input.remaining() == 0 => Ok(v),
                        Ok(_) => Err("value longer than its structure"),
                        Err(e) => Err(e.0),
                    };
                    // Where the decoder stopped, and which key, to find it in the file.
                    let value = fault.map_err(|e| {
                        let mut name = String::from_utf8_lossy(&key[..key.len().min(64)]);
                        if key.len() > 64 {
                            name.to_mut().push_str("...");
                        }
                        self.fail_at(
                            value_at + input.position() as u64,
                            format!("key '{name}': {e}"),
                        )
                    })?;
                    return Ok(Some(Record::Entry(Entry {
                        db: self.db,
                        key,
                        value,
                        expire_at,
                        idle_secs,
                        freq,
                        offset: start,
                    })));
                }
            }
        }
    }
}

impl<R: Read> Iterator for FileReader<R> {
    type Item = FResult<Record>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}

/// Writes an RDB file (version 10, as Redis 7.0.15 writes it) to a byte stream, keeping the
/// CRC-64 as it goes. Call [`FileWriter::finish`] to write the end; a writer dropped without it
/// leaves a file Redis refuses.
pub struct FileWriter<W: Write> {
    out: W,
    crc: u64,
    written: u64,
    buf: Vec<u8>,
}

impl<W: Write> FileWriter<W> {
    /// Writes the header.
    ///
    /// # Errors
    /// Write errors.
    pub fn new(out: W) -> io::Result<FileWriter<W>> {
        let mut w = FileWriter {
            out,
            crc: 0,
            written: 0,
            buf: Vec::new(),
        };
        w.buf
            .extend_from_slice(format!("REDIS{RDB_VERSION:04}").as_bytes());
        w.flush_buf()?;
        Ok(w)
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    fn flush_buf(&mut self) -> io::Result<()> {
        self.crc = crc64(self.crc, &self.buf);
        self.out.write_all(&self.buf)?;
        self.written += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// An auxiliary field.
    ///
    /// # Errors
    /// Write errors.
    pub fn aux(&mut self, name: &[u8], value: &[u8]) -> io::Result<()> {
        self.buf.push(opcodes::AUX);
        put_string(&mut self.buf, name);
        put_string(&mut self.buf, value);
        self.flush_buf()
    }

    /// A FUNCTION library (`RDB_OPCODE_FUNCTION2` and its code); Redis writes them before the
    /// databases.
    ///
    /// # Errors
    /// Write errors.
    pub fn function(&mut self, code: &[u8]) -> io::Result<()> {
        self.buf.push(types::OPCODE_FUNCTION2);
        put_string(&mut self.buf, code);
        self.flush_buf()
    }

    /// Starts database `db`, with its size hints (keys, keys with an expiry).
    ///
    /// # Errors
    /// Write errors.
    pub fn select_db(&mut self, db: u64, keys: u64, expires: u64) -> io::Result<()> {
        self.buf.push(opcodes::SELECTDB);
        put_len(&mut self.buf, db);
        self.buf.push(opcodes::RESIZEDB);
        put_len(&mut self.buf, keys);
        put_len(&mut self.buf, expires);
        self.flush_buf()
    }

    /// A key with its value in `kind`'s encoding and its expiry (unix ms).
    ///
    /// # Errors
    /// Write errors.
    pub fn entry(
        &mut self,
        key: &[u8],
        value: &Object,
        kind: ObjectKind,
        expire_at: Option<i64>,
    ) -> io::Result<()> {
        if let Some(at) = expire_at {
            self.buf.push(opcodes::EXPIRETIME_MS);
            self.buf.extend_from_slice(&at.to_le_bytes());
        }
        // The type byte comes first, then the key, then the value.
        let mut obj = Vec::new();
        encode_object(value, kind, &mut obj);
        self.buf.push(obj[0]);
        put_string(&mut self.buf, key);
        self.flush_buf()?;
        self.crc = crc64(self.crc, &obj[1..]);
        self.out.write_all(&obj[1..])?;
        self.written += obj.len() as u64 - 1;
        Ok(())
    }

    /// A key whose value is already a DUMP payload (the RDB object, then the RDB version and a
    /// CRC-64, as DUMP makes and RESTORE takes), with its expiry (unix ms): its object is
    /// copied as it is.
    ///
    /// # Errors
    /// A payload too short to hold an object, or write errors.
    pub fn payload_entry(
        &mut self,
        key: &[u8],
        payload: &[u8],
        expire_at: Option<i64>,
    ) -> io::Result<()> {
        if payload.len() < 11 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "a DUMP payload too short to hold a value",
            ));
        }
        if let Some(at) = expire_at {
            self.buf.push(opcodes::EXPIRETIME_MS);
            self.buf.extend_from_slice(&at.to_le_bytes());
        }
        self.buf.push(payload[0]);
        put_string(&mut self.buf, key);
        self.flush_buf()?;
        let obj = &payload[1..payload.len() - 10];
        self.crc = crc64(self.crc, obj);
        self.out.write_all(obj)?;
        self.written += obj.len() as u64;
        Ok(())
    }

    /// Writes `EOF` and the checksum, flushes, and returns the stream.
    ///
    /// # Errors
    /// Write errors.
    pub fn finish(mut self) -> io::Result<W> {
        self.buf.push(opcodes::EOF);
        self.flush_buf()?;
        let crc = self.crc.to_le_bytes();
        self.out.write_all(&crc)?;
        self.written += 8;
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    fn sample() -> Vec<u8> {
        let mut w = FileWriter::new(Vec::new()).unwrap();
        w.aux(b"redis-ver", b"7.0.15").unwrap();
        w.aux(b"redis-bits", b"64").unwrap();
        w.function(b"#!lua name=lib\nredis.register_function('f', function() return 1 end)")
            .unwrap();
        w.select_db(0, 2, 1).unwrap();
        w.entry(b"s", &Object::String(b("v")), ObjectKind::General, None)
            .unwrap();
        w.entry(
            b"l",
            &Object::List((0..3000).map(|i| b(&format!("item{i}"))).collect()),
            ObjectKind::General,
            Some(1_900_000_000_000),
        )
        .unwrap();
        w.select_db(3, 1, 0).unwrap();
        w.entry(
            b"z",
            &Object::ZSet(vec![(b("a"), 1.0), (b("b"), 2.5)]),
            ObjectKind::General,
            None,
        )
        .unwrap();
        w.finish().unwrap()
    }

    fn read_all(bytes: &[u8]) -> FResult<Vec<Record>> {
        FileReader::new(bytes)?.collect()
    }

    #[test]
    fn written_files_read_back() {
        let f = sample();
        assert!(f.starts_with(b"REDIS0010"));
        let recs = read_all(&f).unwrap();
        assert_eq!(recs[0], Record::Aux(b("redis-ver"), b("7.0.15")));
        assert_eq!(recs[1], Record::Aux(b("redis-bits"), b("64")));
        assert!(matches!(&recs[2], Record::Function(c) if c.starts_with(b"#!lua")));
        assert_eq!(recs[3], Record::SelectDb(0));
        assert_eq!(recs[4], Record::ResizeDb(2, 1));
        let entries: Vec<&Entry> = recs
            .iter()
            .filter_map(|r| match r {
                Record::Entry(e) => Some(e),
                _ => None,
            })
            .collect();
        assert_eq!(entries.len(), 3);
        assert_eq!(entries[0].key, b("s"));
        assert_eq!(entries[1].expire_at, Some(1_900_000_000_000));
        assert!(matches!(&entries[1].value, Object::List(v) if v.len() == 3000));
        assert_eq!(entries[2].db, 3);
    }

    #[test]
    fn redis_file_reads() {
        // `redis-server 7.0.15`: `SET k v`, `SAVE` (aux fields trimmed to `redis-ver`).
        let mut f =
            b"REDIS0010\xfa\x09redis-ver\x067.0.15\xfe\x00\xfb\x01\x00\x00\x01k\x01v\xff".to_vec();
        let crc = crc64(0, &f);
        f.extend_from_slice(&crc.to_le_bytes());
        let recs = read_all(&f).unwrap();
        assert_eq!(recs.len(), 4);
        // A checksum of zero means "not computed".
        let n = f.len();
        f[n - 8..].fill(0);
        assert!(read_all(&f).is_ok());
    }

    #[test]
    fn every_truncation_fails_with_its_offset() {
        let f = sample();
        for cut in 0..f.len() {
            let err = read_all(&f[..cut]).unwrap_err();
            assert!(err.offset <= cut as u64, "{cut}: {err}");
            if cut >= 9 {
                assert_eq!(err.message, "unexpected end of file", "{cut}");
                assert_eq!(err.offset, cut as u64);
            }
        }
    }

    #[test]
    fn corruption_is_found() {
        let f = sample();
        let mut bad = f.clone();
        let n = bad.len();
        bad[n - 20] ^= 0x40;
        let err = read_all(&bad).unwrap_err();
        assert!(err.offset >= n as u64 - 20, "{err}");
        let mut sig = f.clone();
        sig[0] = b'X';
        assert_eq!(
            read_all(&sig).unwrap_err().to_string(),
            "Wrong signature trying to load DB from file (at byte 0)"
        );
        let mut ver = f.clone();
        ver[5..9].copy_from_slice(b"0011");
        assert_eq!(
            read_all(&ver).unwrap_err().to_string(),
            "Can't handle RDB format version 0011 (at byte 5)"
        );
        let mut crc = f.clone();
        crc[n - 1] ^= 1;
        let err = read_all(&crc).unwrap_err();
        assert!(err.message.starts_with("Wrong RDB checksum"), "{err}");
        assert_eq!(err.offset, n as u64 - 8);
    }

    fn with_crc(mut f: Vec<u8>) -> Vec<u8> {
        f.push(opcodes::EOF);
        let crc = crc64(0, &f);
        f.extend_from_slice(&crc.to_le_bytes());
        f
    }

    #[test]
    fn modules_and_old_functions() {
        // Module aux data of module "mymodule1" (encver 3): skipped, named.
        let id: u64 = {
            let cs = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
            let mut id = 0u64;
            for c in b"mymodule1" {
                id = (id << 6) | cs.iter().position(|x| x == c).unwrap() as u64;
            }
            (id << 10) | 3
        };
        let mut f = b"REDIS0010".to_vec();
        f.push(opcodes::MODULE_AUX);
        put_len(&mut f, id);
        put_len(&mut f, module_op::UINT);
        put_len(&mut f, 2);
        put_len(&mut f, module_op::STRING);
        put_string(&mut f, b"payload");
        put_len(&mut f, module_op::DOUBLE);
        f.extend_from_slice(&1.5f64.to_le_bytes());
        put_len(&mut f, module_op::EOF);
        let recs = read_all(&with_crc(f.clone())).unwrap();
        assert_eq!(recs, vec![Record::ModuleAux("mymodule1".into())]);
        // A module value is refused by name.
        let at = f.len() as u64;
        f.push(types::MODULE_2);
        put_string(&mut f, b"k");
        put_len(&mut f, id);
        let err = read_all(&with_crc(f)).unwrap_err();
        assert_eq!(err.offset, at);
        assert!(err.message.contains("'mymodule1'"), "{err}");
        let mut old = b"REDIS0010".to_vec();
        old.push(types::OPCODE_FUNCTION);
        let err = read_all(&with_crc(old)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Pre-release function format not supported. (at byte 9)"
        );
    }

    #[test]
    fn old_versions_and_opcodes() {
        // Version 3 (no checksum), seconds expiry, LRU and LFU hints.
        let mut f = b"REDIS0003".to_vec();
        f.push(opcodes::EXPIRETIME);
        f.extend_from_slice(&1_000i32.to_le_bytes());
        f.push(opcodes::IDLE);
        put_len(&mut f, 42);
        f.push(opcodes::FREQ);
        f.push(7);
        f.push(types::STRING);
        put_string(&mut f, b"k");
        put_string(&mut f, b"12345");
        f.push(opcodes::EOF);
        let recs = read_all(&f).unwrap();
        let Record::Entry(e) = &recs[0] else {
            panic!("{recs:?}")
        };
        assert_eq!(
            (e.expire_at, e.idle_secs, e.freq),
            (Some(1_000_000), Some(42), Some(7))
        );
        assert_eq!(e.value, Object::String(b("12345")));
    }

    #[test]
    fn hostile_lengths_allocate_nothing() {
        let mut f = b"REDIS0010".to_vec();
        f.push(types::LIST);
        put_string(&mut f, b"k");
        put_len(&mut f, u64::MAX);
        let err = read_all(&f).unwrap_err();
        assert_eq!(err.offset, f.len() as u64);
        let mut s = b"REDIS0010".to_vec();
        s.push(types::STRING);
        put_string(&mut s, b"k");
        put_len(&mut s, 1 << 40);
        assert_eq!(read_all(&s).unwrap_err().message, "unexpected end of file");
    }
}
