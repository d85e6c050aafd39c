//! SCAN cursor [MATCH pattern] [COUNT count] [TYPE type] — iterate the selected database's keys
//! a page at a time. <https://redis.io/commands/scan/>
//!
//! Relis walks keys in key (byte) order, so a scan returns every key that exists for its whole
//! duration exactly once. Cursors stay Redis-shaped (unsigned integers, `0` to start and `0`
//! when done, all below 2^53 so JavaScript clients keep them exact): the server maps each cursor it hands out to the key the page stopped after
//! (`Shared::cursors`). A cursor it does not know (never issued, forgotten, or from another
//! database) restarts the scan, which SCAN's guarantees allow. COUNT bounds the keys examined,
//! before MATCH and TYPE filter them, as in Redis; a page may therefore be empty while the scan
//! goes on.
//!
//! Over PostgreSQL (`--backend`) a cursor is a row's `scan_id` instead (`relis::Reader::
//! scan_shared`): it comes from the data, so any node continues a scan another began.

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use relis::KeyType;
use resp::Frame;

/// SCAN's declaration.
pub const SPEC: Spec = Spec {
    name: "scan",
    tips: &["nondeterministic_output", "request_policy:special"],
    arity: -2,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["keyspace", "read", "slow"]),
    keys: (0, 0, 0),
    group: "generic",
    since: "2.8.0",
    summary: "Incrementally iterate the keys space",
    complexity: "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.",
    parse: Scan::parse,
    ..Spec::BASE
};

/// Redis's default COUNT.
const DEFAULT_COUNT: usize = 10;

/// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type].
#[derive(Debug, PartialEq, Eq)]
pub struct Scan {
    cursor: u64,
    pattern: Option<Bytes>,
    count: usize,
    /// The TYPE filter as given (compared case-insensitively with type names).
    kind: Option<Bytes>,
}

/// MATCH and COUNT of every SCAN form (SCAN also has TYPE).
#[derive(Debug, PartialEq, Eq)]
pub struct ScanOptions {
    /// MATCH pattern.
    pub pattern: Option<Bytes>,
    /// COUNT (Redis's default is 10).
    pub count: usize,
}

impl ScanOptions {
    /// Parses `[MATCH pattern] [COUNT count]` in any order, as Redis does.
    ///
    /// # Errors
    /// `ERR syntax error`, or the integer error for a bad COUNT.
    pub fn from_args(args: &mut Args) -> Result<ScanOptions, CmdError> {
        Ok(ScanOptions::parse(args, false)?.0)
    }

    /// [`ScanOptions::from_args`], with `TYPE type` too when `with_type` (SCAN).
    fn parse(args: &mut Args, with_type: bool) -> Result<(Self, Option<Bytes>), CmdError> {
        let mut o = ScanOptions {
            pattern: None,
            count: DEFAULT_COUNT,
        };
        let mut kind = None;
        while !args.is_empty() {
            if args.remaining() >= 2 && args.eat("count") {
                let n = args.next_i64()?;
                if n < 1 {
                    return Err(CmdError::Syntax);
                }
                o.count = usize::try_from(n).unwrap_or(usize::MAX);
            } else if args.remaining() >= 2 && args.eat("match") {
                o.pattern = Some(args.next()?);
            } else if with_type && args.remaining() >= 2 && args.eat("type") {
                kind = Some(args.next()?);
            } else {
                return Err(CmdError::Syntax);
            }
        }
        Ok((o, kind))
    }
}

/// HSCAN, SSCAN and ZSCAN: `key cursor [MATCH pattern] [COUNT count]`, and the flow they
/// share. Redis checks the cursor first, then looks the key up, and only then reads the
/// options: a missing key replies an empty scan whatever options follow.
#[derive(Debug, PartialEq, Eq)]
pub struct KeyScan {
    /// The collection's key.
    pub key: Bytes,
    /// The cursor as given.
    pub cursor: u64,
    /// The options, or the error they give once the key turns out to be of the command's type.
    pub options: Result<ScanOptions, CmdError>,
}

impl KeyScan {
    /// Parses the arguments; only a bad cursor fails here.
    ///
    /// # Errors
    /// `ERR invalid cursor`; `ERR syntax error` when the key or cursor is missing.
    pub fn from_args(args: &mut Args) -> Result<KeyScan, CmdError> {
        let key = args.next()?;
        let cursor = parse_cursor(&args.next()?)?;
        let options = ScanOptions::from_args(args);
        // Whatever the options said, every argument is accounted for.
        args.rest();
        args.finish()?;
        Ok(KeyScan {
            key,
            cursor,
            options,
        })
    }

    /// Runs one page: `lookup` reads the key's size (only to judge bad options after the
    /// lookup), `page` reads the elements after the cursor's element with the options and
    /// returns them with the element a next page would start after; `elem` is an element's
    /// name (what MATCH matches). `None` for a missing key; else the cursor to hand out (0
    /// when done) and the elements.
    ///
    /// # Errors
    /// The options' error for an existing key, WRONGTYPE, storage errors.
    pub fn run<L, T>(
        &self,
        cx: &Cx,
        lookup: impl FnOnce() -> Result<Option<L>, relis::Error>,
        page: impl Fn(
            Option<&[u8]>,
            &ScanOptions,
        ) -> Result<Option<(Option<Bytes>, Vec<T>)>, relis::Error>,
        elem: fn(&T) -> &[u8],
    ) -> Result<Option<(u64, Vec<T>)>, CmdError> {
        let o = match &self.options {
            Ok(o) => o,
            Err(e) => {
                return match crate::cmd::counted(cx, &self.key, lookup())? {
                    None => Ok(None),
                    Some(_) => Err(e.clone()),
                }
            }
        };
        if cx.server.db.backend() == "postgres" {
            return self.run_hashed(cx, o, page, elem);
        }
        let after = match self.cursor {
            0 => None,
            c => cx.server.cursors.lock().resume_keyed(cx.db, &self.key, c),
        };
        let Some((next, items)) = crate::cmd::counted(cx, &self.key, page(after.as_deref(), o))?
        else {
            return Ok(None);
        };
        let cursor = match next {
            Some(e) => cx
                .server
                .cursors
                .lock()
                .save_keyed(cx.db, self.key.clone(), e),
            None => 0,
        };
        Ok(Some((cursor, items)))
    }
}

impl KeyScan {
    /// [`KeyScan::run`] over PostgreSQL, where a page may reach any node: the cursor comes
    /// from the data, not from a node's memory. A collection one page holds (one Redis would
    /// keep as a listpack comes whole, as on SQLite) is answered as on SQLite, with cursor 0.
    /// Else the elements are walked in the order of [`element_hash`] (then of their bytes): a
    /// page is the elements whose hash is at least the cursor's, COUNT of them examined and then
    /// every one more of the last one's hash (a hash's elements come in one page, as a Redis
    /// bucket does), and the cursor handed out is the next element's hash plus one. Any node
    /// computes the same order from the same elements, so a scan continues wherever its next
    /// page runs, and an element present for the whole scan keeps its hash and comes exactly
    /// once. Each page reads the whole collection, which the node has already loaded whole from
    /// PostgreSQL to answer it.
    fn run_hashed<T>(
        &self,
        cx: &Cx,
        o: &ScanOptions,
        page: impl Fn(
            Option<&[u8]>,
            &ScanOptions,
        ) -> Result<Option<(Option<Bytes>, Vec<T>)>, relis::Error>,
        elem: fn(&T) -> &[u8],
    ) -> Result<Option<(u64, Vec<T>)>, CmdError> {
        if self.cursor == 0 {
            let Some((next, items)) = crate::cmd::counted(cx, &self.key, page(None, o))? else {
                return Ok(None);
            };
            if next.is_none() {
                return Ok(Some((0, items)));
            }
        }
        let all = ScanOptions {
            pattern: None,
            // As large as the types' pages take (they ask for one more).
            count: i64::MAX as usize - 1,
        };
        let Some((_, items)) = page(None, &all)? else {
            return Ok(None);
        };
        let from = self.cursor.saturating_sub(1);
        let mut items: Vec<(u64, T)> = items
            .into_iter()
            .map(|t| (element_hash(elem(&t)), t))
            .filter(|(h, _)| *h >= from)
            .collect();
        items.sort_unstable_by(|(ha, a), (hb, b)| ha.cmp(hb).then_with(|| elem(a).cmp(elem(b))));
        let mut take = o.count.max(1).min(items.len());
        while take > 0 && take < items.len() && items[take].0 == items[take - 1].0 {
            take += 1;
        }
        let cursor = items.get(take).map_or(0, |(h, _)| h + 1);
        items.truncate(take);
        let pattern = o.pattern.as_deref().filter(|p| *p != b"*");
        let page = items
            .into_iter()
            .map(|(_, t)| t)
            .filter(|t| pattern.is_none_or(|p| relis::glob::glob_match(p, elem(t), false)))
            .collect();
        Ok(Some((cursor, page)))
    }
}

/// The hash that orders a collection's elements for HSCAN/SSCAN/ZSCAN over PostgreSQL
/// ([`KeyScan::run`]): FNV-1a 64 of the element, its top 52 bits, so a cursor (the hash plus
/// one) stays below 2^53 (JavaScript clients keep it exact). Every node must compute the same:
/// never change it while nodes of two versions share a database.
pub fn element_hash(e: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in e {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h >> 12
}

/// Parses a cursor as Redis's `parseScanCursorOrReply`: C `strtoul` in base 10 (an optional
/// sign, a negative value wraps, an empty string is 0), no leading space, nothing after the
/// digits, no overflow. The argument ends at a NUL byte, as a C string does.
pub fn parse_cursor(b: &[u8]) -> Result<u64, CmdError> {
    let invalid = || CmdError::INVALID_CURSOR;
    let b = &b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())];
    let Some(&first) = b.first() else {
        return Ok(0);
    };
    if matches!(first, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        return Err(invalid());
    }
    let (neg, digits) = match first {
        b'-' => (true, &b[1..]),
        b'+' => (false, &b[1..]),
        _ => (false, b),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(invalid());
    }
    let mut v: u64 = 0;
    for &d in digits {
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(d - b'0')))
            .ok_or_else(invalid)?;
    }
    Ok(if neg { v.wrapping_neg() } else { v })
}

impl Scan {
    fn from_args(args: &mut Args) -> Result<Scan, CmdError> {
        let cursor = parse_cursor(&args.next()?)?;
        let (o, kind) = ScanOptions::parse(args, true)?;
        args.finish()?;
        Ok(Scan {
            cursor,
            pattern: o.pattern,
            count: o.count,
            kind,
        })
    }

    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::read(Scan::from_args(args)?)
    }
}

impl ReadCmd for Scan {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        // An unknown type name matches no key, but the scan still walks the keyspace.
        let kind = self.kind.as_ref().map(|k| KeyType::from_name(k));
        // Over PostgreSQL the cursor comes from the data, valid on every node.
        if let Some((cursor, mut keys)) = r.scan_shared(
            cx.db,
            self.cursor,
            self.count,
            self.pattern.as_deref(),
            kind.flatten(),
        )? {
            if kind == Some(None) {
                keys.clear();
            }
            return Ok(page(cursor, keys));
        }
        let after = match self.cursor {
            0 => None,
            c => cx.server.cursors.lock().resume(cx.db, c),
        };
        let mut page = r.scan(
            cx.db,
            after.as_deref(),
            self.count,
            self.pattern.as_deref(),
            kind.flatten(),
        )?;
        if kind == Some(None) {
            page.keys.clear();
        }
        let cursor = match page.next {
            Some(k) => cx.server.cursors.lock().save(cx.db, k),
            None => 0,
        };
        Ok(self::page(cursor, page.keys))
    }
}

/// SCAN's reply: the next cursor and the page's keys.
fn page(cursor: u64, keys: Vec<Bytes>) -> Frame {
    Frame::Array(vec![
        Frame::Bulk(Bytes::from(cursor.to_string())),
        Frame::Array(keys.into_iter().map(Frame::Bulk).collect()),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &[&str]) -> Result<Scan, CmdError> {
        let mut args = Args::new(
            "scan",
            line.iter()
                .map(|a| Bytes::copy_from_slice(a.as_bytes()))
                .collect(),
        );
        Scan::from_args(&mut args)
    }

    #[test]
    fn element_hashes_are_fnv1a_52_bits_and_stable() {
        // FNV-1a 64 of the empty input is its offset basis; fixed forever (nodes share it).
        assert_eq!(element_hash(b""), 0xcbf2_9ce4_8422_2325 >> 12);
        assert_eq!(element_hash(b"a"), 0xaf63_dc4c_8601_ec8c >> 12);
        assert!(element_hash(&[0xff; 64]) < 1 << 52);
    }

    #[test]
    fn cursors_parse_like_strtoul() {
        let invalid = Err(CmdError::err("invalid cursor"));
        let table: &[(&[u8], Result<u64, CmdError>)] = &[
            (b"0", Ok(0)),
            (b"", Ok(0)),
            (b"+0", Ok(0)),
            (b"-0", Ok(0)),
            (b"42", Ok(42)),
            (b"-1", Ok(u64::MAX)),
            (b"18446744073709551615", Ok(u64::MAX)),
            (b"-18446744073709551615", Ok(1)),
            (b"18446744073709551616", invalid.clone()),
            (b"12\x00junk", Ok(12)),
            (b" 0", invalid.clone()),
            (b"0 ", invalid.clone()),
            (b"0x10", invalid.clone()),
            (b"abc", invalid.clone()),
            (b"+", invalid.clone()),
            (b"-", invalid),
        ];
        for (input, want) in table {
            assert_eq!(
                &parse_cursor(input),
                want,
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn options() {
        let s = parse(&["0"]).unwrap();
        assert_eq!((s.count, s.pattern, s.kind), (10, None, None));
        let s = parse(&[
            "7", "COUNT", "1", "count", "2", "match", "a*", "MATCH", "b*", "type", "String",
        ])
        .unwrap();
        assert_eq!(s.cursor, 7);
        assert_eq!(s.count, 2);
        assert_eq!(s.pattern.as_deref(), Some(&b"b*"[..]));
        assert_eq!(s.kind.as_deref(), Some(&b"String"[..]));
        assert_eq!(parse(&["0", "count", "0"]), Err(CmdError::Syntax));
        assert_eq!(parse(&["0", "count", "-1"]), Err(CmdError::Syntax));
        assert_eq!(parse(&["0", "count", "x"]), Err(CmdError::NotInteger));
        assert_eq!(parse(&["0", "match"]), Err(CmdError::Syntax));
        assert_eq!(parse(&["0", "foo", "bar"]), Err(CmdError::Syntax));
        assert_eq!(
            parse(&["x", "count", "0"]),
            Err(CmdError::err("invalid cursor")),
            "the cursor is checked first"
        );
    }
}
