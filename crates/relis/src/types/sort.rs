//! SORT and SORT_RO: the elements of a list, set or sorted set, sorted numerically or
//! byte-wise, optionally by the values of other keys (`BY`), sliced (`LIMIT`), mapped through
//! other keys (`GET`), and optionally stored as a list (`STORE`).
//!
//! Everything follows Redis 7.0's `sortCommandGeneric` step for step, because its quirks show in
//! replies:
//! - A missing key sorts as an empty list; a string or hash is WRONGTYPE.
//! - `BY` with a pattern that has no `*` (`BY nosort`) skips sorting (once given, even if a later
//!   `BY` has a `*`): a list or sorted set keeps its own order (reversed by `DESC`, with `LIMIT`
//!   applied as a range), a set its member order; but a set with `STORE` is sorted byte-wise
//!   anyway, so that what is stored does not depend on hash order.
//! - Numeric sorting reads each value as C's `strtod` does (leading spaces, hex floats, `inf`,
//!   an empty string is 0, parsing stops at a NUL byte); a value with trailing garbage, NaN, or
//!   out of `double`'s range (overflow or underflow, as glibc's `ERANGE`) fails the whole command.
//!   Equal scores are ordered by the elements' bytes, so the order is total.
//! - `ALPHA` compares with `strcoll`, which in the C and C.UTF-8 locales (Debian's defaults) is
//!   `strcmp`: byte-wise up to the first NUL byte. With `STORE`, Redis compares whole byte
//!   strings instead (so what is stored does not depend on the locale). Ties keep the load order
//!   (glibc's `qsort` is a stable merge sort): list order, set member order, sorted-set rank
//!   order (Redis's own order for those two follows its hash tables, which Relis does not have).
//! - `BY` values that are missing (or of the wrong type) score 0, or sort first with `ALPHA`.
//! - With `BY` and a `LIMIT` that does not cover everything, Redis sorts only the part the limit
//!   needs with its partial quicksort (`pqsort`), which is not stable: [`pqsort`] is a port of it,
//!   so ties come out in Redis's order.
//! - A pattern is `prefix*suffix` (`*` is the element) naming a string key, or
//!   `prefix*suffix->field` naming a hash field; `#` is the element itself. A key of another type,
//!   a missing key or field, or a pattern without `*` gives nothing (nil in replies, an empty
//!   string when stored). Like Redis's C string functions, the `*` and `->` searches stop at a
//!   NUL byte in the pattern.
//!
//! Every key the command looks up is reported to a `seen` callback (found or not), as Redis
//! counts them in its keyspace hits and misses: the sorted key, each `BY` lookup and each `GET`
//! lookup.

use crate::backend::sqlite::db::Db;
use crate::backend::sqlite::store::{KeyType, Reader, Writer};
use crate::error::{Error, Result};
use crate::types::strings::StringLookup;
use crate::types::zset::{ZRange, ZRangeBy};
use bytes::Bytes;
use std::cmp::Ordering;

/// The options of one SORT.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SortOptions {
    /// The last `BY` pattern given, if any.
    pub by: Option<Bytes>,
    /// Whether some `BY` pattern had no `*` (`BY nosort`): nothing is sorted.
    pub nosort: bool,
    /// `LIMIT offset count`: a negative offset counts as 0, a negative count means all.
    pub limit: Option<(i64, i64)>,
    /// The `GET` patterns, in order; empty returns the elements themselves.
    pub get: Vec<Bytes>,
    /// `DESC`.
    pub desc: bool,
    /// `ALPHA`: compare as byte strings rather than as numbers.
    pub alpha: bool,
}

impl SortOptions {
    /// Records a `BY pattern` as Redis does: it replaces any earlier one, and a pattern without
    /// `*` turns sorting off for good.
    pub fn by(&mut self, pattern: Bytes) {
        if star(&pattern).is_none() {
            self.nosort = true;
        }
        self.by = Some(pattern);
    }
}

/// What a SORT produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sorted {
    /// The output: the sorted elements, or with `GET` patterns one value per pattern per element
    /// (`None` where the pattern names nothing). With STORE, what was stored.
    Values(Vec<Option<Bytes>>),
    /// A numeric sort met a value that is not a number (Redis: "One or more scores can't be
    /// converted into double"); nothing was stored.
    NotANumber,
}

/// One element being sorted, with what it is compared by.
struct Item {
    elem: Bytes,
    /// Numeric sort: the score (0 when the `BY` key is missing).
    score: f64,
    /// `ALPHA BY`: the `BY` value, if found.
    by: Option<Bytes>,
}

/// The part of a C string before its first NUL byte.
fn c_str(s: &[u8]) -> &[u8] {
    match s.iter().position(|&b| b == 0) {
        Some(i) => &s[..i],
        None => s,
    }
}

/// Where `strchr(pattern, '*')` finds the star.
fn star(pattern: &[u8]) -> Option<usize> {
    c_str(pattern).iter().position(|&b| b == b'*')
}

/// Redis's `compareStringObjects`: bytes, then length.
fn binary_cmp(a: &[u8], b: &[u8]) -> Ordering {
    a.cmp(b)
}

/// `strcoll` in the C / C.UTF-8 locale: `strcmp`, unsigned bytes up to the first NUL.
fn strcoll_cmp(a: &[u8], b: &[u8]) -> Ordering {
    c_str(a).cmp(c_str(b))
}

#[cfg(any(target_os = "linux", target_os = "android"))]
extern "C" {
    #[cfg_attr(target_os = "android", link_name = "__errno")]
    fn __errno_location() -> *mut std::ffi::c_int;
}

#[cfg(any(
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd",
    target_os = "dragonfly"
))]
extern "C" {
    #[link_name = "__error"]
    fn __errno_location() -> *mut std::ffi::c_int;
}

extern "C" {
    fn strtod(s: *const std::ffi::c_char, end: *mut *mut std::ffi::c_char) -> f64;
}

/// `ERANGE` on the platforms above (Linux, the BSDs and macOS agree).
const ERANGE: std::ffi::c_int = 34;

/// A value as SORT's numeric comparison reads it: `strtod` over the whole C string, refusing
/// trailing characters, NaN, and `ERANGE` (overflow, or an inexact result in the subnormal
/// range). The C library's own `strtod` (in the "C" numeric locale, as Redis runs it) keeps
/// every corner identical: hex floats, `infinity`, the empty string reading as 0.
fn sort_score(value: &[u8]) -> Option<f64> {
    let s = c_str(value);
    if s.is_empty() {
        return Some(0.0);
    }
    let mut buf = Vec::with_capacity(s.len() + 1);
    buf.extend_from_slice(s);
    buf.push(0);
    let mut end: *mut std::ffi::c_char = std::ptr::null_mut();
    // SAFETY: `buf` is NUL-terminated and outlives the call; `end` points into it afterwards.
    // errno is thread-local.
    let (v, consumed, range_error) = unsafe {
        #[cfg(any(
            target_os = "linux",
            target_os = "android",
            target_os = "macos",
            target_os = "ios",
            target_os = "freebsd",
            target_os = "dragonfly"
        ))]
        {
            *__errno_location() = 0;
        }
        let v = strtod(buf.as_ptr().cast(), &mut end);
        let consumed = end.offset_from(buf.as_ptr().cast::<std::ffi::c_char>()) as usize;
        #[cfg(any(
            target_os = "linux",
            target_os = "android",
            target_os = "macos",
            target_os = "ios",
            target_os = "freebsd",
            target_os = "dragonfly"
        ))]
        let range_error = *__errno_location() == ERANGE;
        #[cfg(not(any(
            target_os = "linux",
            target_os = "android",
            target_os = "macos",
            target_os = "ios",
            target_os = "freebsd",
            target_os = "dragonfly"
        )))]
        let range_error = (v.is_infinite() && !c_str(value).to_ascii_lowercase().contains(&b'i'))
            || (v != 0.0 && !v.is_normal() && !v.is_infinite());
        (v, consumed, range_error)
    };
    (consumed == s.len() && !range_error && !v.is_nan()).then_some(v)
}

/// How two items compare: Redis's `sortCompare` (the sign is what matters).
#[derive(Clone, Copy)]
struct Compare {
    alpha: bool,
    by: bool,
    store: bool,
    desc: bool,
}

impl Compare {
    fn cmp(&self, a: &Item, b: &Item) -> Ordering {
        let c = if !self.alpha {
            if a.score > b.score {
                Ordering::Greater
            } else if a.score < b.score {
                Ordering::Less
            } else {
                binary_cmp(&a.elem, &b.elem)
            }
        } else if self.by {
            match (&a.by, &b.by) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Less,
                (Some(_), None) => Ordering::Greater,
                (Some(x), Some(y)) if self.store => binary_cmp(x, y),
                (Some(x), Some(y)) => strcoll_cmp(x, y),
            }
        } else if self.store {
            binary_cmp(&a.elem, &b.elem)
        } else {
            strcoll_cmp(&a.elem, &b.elem)
        };
        if self.desc {
            c.reverse()
        } else {
            c
        }
    }
}

/// Redis's `pqsort` (its `pqsort.c`, the BSD quicksort of Bentley and McIlroy that only
/// recurses into parts overlapping positions `lrange..=rrange`), on a slice. Not stable: SORT
/// uses it when `BY` and a partial `LIMIT` are given, and ties then come out in this order.
pub(crate) fn pqsort<T>(
    v: &mut [T],
    lrange: usize,
    rrange: usize,
    cmp: &mut impl FnMut(&T, &T) -> Ordering,
) {
    pqsort_part(v, 0, v.len(), lrange as isize, rrange as isize, cmp);
}

fn med3<T>(
    v: &[T],
    a: usize,
    b: usize,
    c: usize,
    cmp: &mut impl FnMut(&T, &T) -> Ordering,
) -> usize {
    if cmp(&v[a], &v[b]).is_lt() {
        if cmp(&v[b], &v[c]).is_lt() {
            b
        } else if cmp(&v[a], &v[c]).is_lt() {
            c
        } else {
            a
        }
    } else if cmp(&v[b], &v[c]).is_gt() {
        b
    } else if cmp(&v[a], &v[c]).is_lt() {
        a
    } else {
        c
    }
}

/// Swaps `n` elements at `a` with `n` elements at `b`, pairwise (`vecswap`).
fn vecswap<T>(v: &mut [T], a: usize, b: usize, n: usize) {
    for i in 0..n {
        v.swap(a + i, b + i);
    }
}

fn pqsort_part<T>(
    v: &mut [T],
    mut a: usize,
    mut n: usize,
    lrange: isize,
    rrange: isize,
    cmp: &mut impl FnMut(&T, &T) -> Ordering,
) {
    // Whether the part [l, l + len) overlaps the positions the caller wants sorted.
    let wanted = |l: usize, len: usize| {
        let (l, r) = (l as isize, (l + len) as isize - 1);
        !((lrange < l && rrange < l) || (lrange > r && rrange > r))
    };
    loop {
        if n < 7 {
            for pm in a + 1..a + n {
                let mut pl = pm;
                while pl > a && cmp(&v[pl - 1], &v[pl]).is_gt() {
                    v.swap(pl, pl - 1);
                    pl -= 1;
                }
            }
            return;
        }
        let mut pm = a + n / 2;
        if n > 7 {
            let mut pl = a;
            let mut pn = a + n - 1;
            if n > 40 {
                let d = n / 8;
                pl = med3(v, pl, pl + d, pl + 2 * d, cmp);
                pm = med3(v, pm - d, pm, pm + d, cmp);
                pn = med3(v, pn - 2 * d, pn - d, pn, cmp);
            }
            pm = med3(v, pl, pm, pn, cmp);
        }
        v.swap(a, pm);
        // Signed: `pc` may step to just below `pb`.
        let (mut pa, mut pb) = (a as isize + 1, a as isize + 1);
        let (mut pc, mut pd) = ((a + n - 1) as isize, (a + n - 1) as isize);
        loop {
            while pb <= pc {
                let c = cmp(&v[pb as usize], &v[a]);
                if c.is_gt() {
                    break;
                }
                if c.is_eq() {
                    v.swap(pa as usize, pb as usize);
                    pa += 1;
                }
                pb += 1;
            }
            while pb <= pc {
                let c = cmp(&v[pc as usize], &v[a]);
                if c.is_lt() {
                    break;
                }
                if c.is_eq() {
                    v.swap(pc as usize, pd as usize);
                    pd -= 1;
                }
                pc -= 1;
            }
            if pb > pc {
                break;
            }
            v.swap(pb as usize, pc as usize);
            pb += 1;
            pc -= 1;
        }
        let (pa, pb, pc, pd) = (pa as usize, pb as usize, pc as usize, pd as usize);
        let pn = a + n;
        let r = (pa - a).min(pb - pa);
        vecswap(v, a, pb - r, r);
        let r = (pd - pc).min(pn - pd - 1);
        vecswap(v, pb, pn - r, r);
        let r = pb - pa;
        if r > 1 && wanted(a, r) {
            pqsort_part(v, a, r, lrange, rrange, cmp);
        }
        let r = pd - pc;
        if r > 1 {
            // Iterate rather than recurse, as the C does.
            a = pn - r;
            n = r;
            if wanted(a, n) {
                continue;
            }
        }
        return;
    }
}

impl Reader<'_> {
    /// What a SORT/GET pattern names for `elem`: Redis's `lookupKeyByPattern`. Counts the key
    /// lookup (if any) in `seen`.
    fn sort_lookup(
        &self,
        db: u32,
        pattern: &[u8],
        elem: &Bytes,
        seen: &mut dyn FnMut(&[u8], bool),
    ) -> Result<Option<Bytes>> {
        if pattern.first() == Some(&b'#') && pattern.get(1).is_none_or(|&b| b == 0) {
            return Ok(Some(elem.clone()));
        }
        let Some(p) = star(pattern) else {
            return Ok(None);
        };
        // `strstr(p + 1, "->")` with a non-empty field after it (up to a NUL, like the search).
        let after = c_str(&pattern[p + 1..]);
        let field = after
            .windows(2)
            .position(|w| w == b"->")
            .map(|i| p + 1 + i)
            .filter(|&f| f + 2 < after.len() + p + 1)
            .map(|f| &pattern[f + 2..]);
        let suffix_end = pattern.len() - field.map_or(0, |f| f.len() + 2);
        let mut key = Vec::with_capacity(pattern.len() + elem.len());
        key.extend_from_slice(&pattern[..p]);
        key.extend_from_slice(elem);
        key.extend_from_slice(&pattern[p + 1..suffix_end]);
        match field {
            None => Ok(match self.lookup_string(db, &key)? {
                StringLookup::Missing => {
                    seen(&key, false);
                    None
                }
                StringLookup::OtherType => {
                    seen(&key, true);
                    None
                }
                StringLookup::Value(v) => {
                    seen(&key, true);
                    Some(v)
                }
            }),
            Some(field) => {
                let meta = self.meta(db, &key)?;
                seen(&key, meta.is_some());
                match meta {
                    Some(m) if m.kind == KeyType::Hash => Ok(self.hget(db, &key, field)?.flatten()),
                    _ => Ok(None),
                }
            }
        }
    }

    /// The sorted output of SORT `key` (the elements, or what the GET patterns name), or
    /// [`Sorted::NotANumber`]; `store` selects STORE's comparisons (whole byte strings) and its
    /// nosort rule for sets. Every key looked up is reported to `seen`.
    fn sort_values(
        &self,
        db: u32,
        key: &[u8],
        opts: &SortOptions,
        store: bool,
        seen: &mut dyn FnMut(&[u8], bool),
    ) -> Result<Option<Vec<Bytes>>> {
        let meta = self.meta(db, key)?;
        seen(key, meta.is_some());
        let (kind, len) = match meta {
            None => (KeyType::List, 0),
            Some(m) if matches!(m.kind, KeyType::List | KeyType::Set | KeyType::ZSet) => {
                (m.kind, m.count)
            }
            Some(_) => return Err(Error::WrongType),
        };
        let (mut nosort, mut alpha, mut by) = (opts.nosort, opts.alpha, opts.by.as_ref());
        if nosort && kind == KeyType::Set && store {
            // What is stored must not depend on the order of a set: sort it byte-wise.
            (nosort, alpha, by) = (false, true, None);
        }
        // Redis's LIMIT arithmetic (in `long`; the sum is done without overflow, as the
        // compiled Redis behaves).
        let (offset, count) = opts.limit.unwrap_or((0, -1));
        let len = i128::from(len);
        let mut start = i128::from(offset.max(0));
        let mut end = if count < 0 {
            len - 1
        } else {
            start + i128::from(count) - 1
        };
        if start >= len {
            start = len - 1;
            end = len - 2;
        }
        if end >= len {
            end = len - 1;
        }
        let partial = start != 0 || end != len - 1;

        let elems: Vec<Bytes> = match kind {
            KeyType::List if nosort => {
                if end >= start {
                    let (a, b) = (start as i64, end as i64);
                    let v = if opts.desc {
                        let l = len as i64;
                        let mut v = self.lrange(db, key, l - 1 - b, l - 1 - a)?;
                        if let Some(v) = &mut v {
                            v.reverse();
                        }
                        v
                    } else {
                        self.lrange(db, key, a, b)?
                    };
                    end -= start;
                    start = 0;
                    v.unwrap_or_default()
                } else {
                    Vec::new()
                }
            }
            KeyType::List => self.lrange(db, key, 0, -1)?.unwrap_or_default(),
            KeyType::Set => self.smembers(db, key)?.unwrap_or_default(),
            KeyType::ZSet if nosort => {
                let v = if partial {
                    if end >= start {
                        let spec = ZRange {
                            by: ZRangeBy::Rank(start as i64, end as i64),
                            rev: opts.desc,
                            limit: None,
                        };
                        self.zrange(db, key, &spec)?.unwrap_or_default()
                    } else {
                        Vec::new()
                    }
                } else {
                    let spec = ZRange {
                        by: ZRangeBy::Rank(0, -1),
                        rev: opts.desc,
                        limit: None,
                    };
                    self.zrange(db, key, &spec)?.unwrap_or_default()
                };
                end -= start;
                start = 0;
                v.into_iter().map(|(m, _)| m).collect()
            }
            KeyType::ZSet => {
                let spec = ZRange {
                    by: ZRangeBy::Rank(0, -1),
                    rev: false,
                    limit: None,
                };
                let v = self.zrange(db, key, &spec)?.unwrap_or_default();
                v.into_iter().map(|(m, _)| m).collect()
            }
            _ => unreachable!("checked above"),
        };
        let mut items: Vec<Item> = elems
            .into_iter()
            .map(|elem| Item {
                elem,
                score: 0.0,
                by: None,
            })
            .collect();

        if !nosort {
            let mut not_a_number = false;
            for it in &mut items {
                let byval = match by {
                    Some(pattern) => match self.sort_lookup(db, pattern, &it.elem, seen)? {
                        Some(v) => v,
                        None => continue,
                    },
                    None => it.elem.clone(),
                };
                if alpha {
                    if by.is_some() {
                        it.by = Some(byval);
                    }
                } else {
                    match sort_score(&byval) {
                        Some(s) => it.score = s,
                        None => not_a_number = true,
                    }
                }
            }
            if not_a_number {
                return Ok(None);
            }
            let c = Compare {
                alpha,
                by: by.is_some(),
                store,
                desc: opts.desc,
            };
            let n = items.len() as i128;
            if by.is_some() && (start != 0 || end != n - 1) {
                if n > 0 {
                    pqsort(&mut items, start as usize, end as usize, &mut |a, b| {
                        c.cmp(a, b)
                    });
                }
            } else {
                items.sort_by(|a, b| c.cmp(a, b));
            }
        }

        let range = if end >= start && start >= 0 {
            start as usize..end as usize + 1
        } else {
            0..0
        };
        Ok(Some(items.drain(range).map(|it| it.elem).collect()))
    }

    /// The GET lookups of SORT's output for the selected elements, in order.
    fn sort_output(
        &self,
        db: u32,
        selected: Vec<Bytes>,
        get: &[Bytes],
        seen: &mut dyn FnMut(&[u8], bool),
    ) -> Result<Vec<Option<Bytes>>> {
        if get.is_empty() {
            return Ok(selected.into_iter().map(Some).collect());
        }
        let mut out = Vec::with_capacity(selected.len() * get.len());
        for elem in &selected {
            for pattern in get {
                out.push(self.sort_lookup(db, pattern, elem, seen)?);
            }
        }
        Ok(out)
    }

    /// SORT / SORT_RO without STORE: the elements of the list, set or sorted set at `key`
    /// (none when it is missing), sorted and selected as `opts` say; every key looked up (the
    /// sorted key, `BY` and `GET` lookups) is reported to `seen`, found or not.
    ///
    /// # Errors
    /// [`Error::WrongType`] when `key` holds a string or a hash.
    pub fn sort(
        &self,
        db: u32,
        key: &[u8],
        opts: &SortOptions,
        seen: &mut dyn FnMut(&[u8], bool),
    ) -> Result<Sorted> {
        match self.sort_values(db, key, opts, false, seen)? {
            None => Ok(Sorted::NotANumber),
            Some(sel) => Ok(Sorted::Values(self.sort_output(db, sel, &opts.get, seen)?)),
        }
    }
}

impl Writer<'_> {
    /// SORT ... STORE `dst`: replaces whatever is at `dst` with a list of the output (a `GET`
    /// that names nothing stores an empty string), or deletes `dst` when the output is empty.
    /// Returns what was stored.
    ///
    /// # Errors
    /// [`Error::WrongType`] when `key` holds a string or a hash.
    pub fn sort_store(
        &mut self,
        db: u32,
        key: &[u8],
        opts: &SortOptions,
        dst: &[u8],
        seen: &mut dyn FnMut(&[u8], bool),
    ) -> Result<Sorted> {
        let Some(sel) = self.sort_values(db, key, opts, true, seen)? else {
            return Ok(Sorted::NotANumber);
        };
        let values: Vec<Bytes> = self
            .sort_output(db, sel, &opts.get, seen)?
            .into_iter()
            .map(Option::unwrap_or_default)
            .collect();
        let existed = match self.meta_for_write(db, dst)? {
            Some(m) => {
                self.delete_key(db, dst, &m)?;
                true
            }
            None => false,
        };
        if !values.is_empty() {
            self.replacing(existed, |w| {
                w.push(db, dst, &values, crate::types::list::End::Right, false)
            })?;
        }
        Ok(Sorted::Values(values.into_iter().map(Some).collect()))
    }
}

impl Db {
    /// SORT `key` with `opts` (see [`SortOptions`]), in this handle's database.
    ///
    /// # Errors
    /// [`Error::WrongType`] when `key` holds a string or a hash.
    pub fn sort(&self, key: impl AsRef<[u8]>, opts: SortOptions) -> Result<Sorted> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.read(move |r| r.sort(db, &key, &opts, &mut |_, _| {}))
    }

    /// SORT `key` with `opts` ... STORE `dst`: `dst` becomes a list of the output (or is deleted
    /// when it is empty). Returns how many elements were stored, or `None` when a value could not
    /// be read as a number.
    ///
    /// # Errors
    /// [`Error::WrongType`] when `key` holds a string or a hash.
    pub fn sort_store(
        &self,
        key: impl AsRef<[u8]>,
        opts: SortOptions,
        dst: impl AsRef<[u8]>,
    ) -> Result<Option<usize>> {
        let (db, key, dst) = (self.index(), key.as_ref().to_vec(), dst.as_ref().to_vec());
        let sorted = self.write(move |w| w.sort_store(db, &key, &opts, &dst, &mut |_, _| {}))?;
        Ok(match sorted {
            Sorted::Values(v) => Some(v.len()),
            Sorted::NotANumber => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    fn values(s: Sorted) -> Vec<Option<Bytes>> {
        match s {
            Sorted::Values(v) => v,
            Sorted::NotANumber => panic!("not a number"),
        }
    }

    #[test]
    fn scores_read_like_strtod() {
        for (s, want) in [
            ("", Some(0.0)),
            (" 5", Some(5.0)),
            ("\t\n5", Some(5.0)),
            ("0x10", Some(16.0)),
            ("0x1.8p1", Some(3.0)),
            ("1e3", Some(1000.0)),
            ("-inf", Some(f64::NEG_INFINITY)),
            ("+Infinity", Some(f64::INFINITY)),
            (".5", Some(0.5)),
            ("5.", Some(5.0)),
            ("3\0zz", Some(3.0)),
            ("2.2250738585072014e-308", Some(f64::MIN_POSITIVE)),
            ("0x1p-1074", Some(5e-324)),
        ] {
            assert_eq!(sort_score(s.as_bytes()), want, "{s:?}");
        }
        for s in [
            "1 ", "   ", "nan", "-nan", "1e400", "1e-400", "1e-310", "0x", "1e", "abc", "1_0",
        ] {
            assert_eq!(sort_score(s.as_bytes()), None, "{s:?}");
        }
    }

    #[test]
    fn pqsort_sorts_the_wanted_range() {
        use rand::Rng;
        let mut rng = rand::rng();
        for _ in 0..500 {
            let n = rng.random_range(0..200);
            let v: Vec<u8> = (0..n).map(|_| rng.random_range(0..20)).collect();
            if n == 0 {
                continue;
            }
            let lo = rng.random_range(0..n);
            let hi = rng.random_range(lo..n);
            let mut part = v.clone();
            pqsort(&mut part, lo, hi, &mut |a, b| a.cmp(b));
            let mut full = v.clone();
            full.sort();
            assert_eq!(part[lo..=hi], full[lo..=hi], "{v:?} {lo}..={hi}");
        }
    }

    #[test]
    fn sort_and_store() {
        let db = Db::open_in_memory().unwrap();
        db.rpush("l", &["3", "1", "2", "10"]).unwrap();
        db.set("w_1", "30").unwrap();
        db.set("w_2", "20").unwrap();
        db.hset("h_3", &[("f", "x")]).unwrap();
        let sort = |opts: SortOptions| values(db.sort("l", opts).unwrap());
        let some = |v: &[&str]| v.iter().map(|s| Some(b(s))).collect::<Vec<_>>();
        assert_eq!(sort(SortOptions::default()), some(&["1", "2", "3", "10"]));
        let alpha = SortOptions {
            alpha: true,
            desc: true,
            limit: Some((1, 2)),
            ..SortOptions::default()
        };
        assert_eq!(sort(alpha), some(&["2", "10"]));
        let mut by = SortOptions {
            get: vec![b("#"), b("h_*->f")],
            ..SortOptions::default()
        };
        by.by(b("w_*"));
        // Missing weights score 0 (ties by element), then 20, 30.
        assert_eq!(
            sort(by),
            vec![
                Some(b("10")),
                None,
                Some(b("3")),
                Some(b("x")),
                Some(b("2")),
                None,
                Some(b("1")),
                None
            ]
        );
        let mut nosort = SortOptions {
            desc: true,
            ..SortOptions::default()
        };
        nosort.by(b("nosort"));
        assert_eq!(sort(nosort.clone()), some(&["10", "2", "1", "3"]));
        assert_eq!(db.sort_store("l", nosort, "dst").unwrap(), Some(4));
        assert_eq!(db.lrange("dst", 0, -1).unwrap(), vec!["10", "2", "1", "3"]);
        db.rpush("bad", &["1", "x"]).unwrap();
        assert_eq!(
            db.sort("bad", SortOptions::default()).unwrap(),
            Sorted::NotANumber
        );
        assert_eq!(
            db.sort_store("bad", SortOptions::default(), "dst").unwrap(),
            None
        );
        assert_eq!(db.llen("dst").unwrap(), 4, "a failed sort stores nothing");
        assert_eq!(
            db.sort_store("missing", SortOptions::default(), "dst")
                .unwrap(),
            Some(0)
        );
        assert_eq!(db.exists(&["dst"]).unwrap(), 0, "an empty result deletes");
        assert_eq!(
            db.sort("w_1", SortOptions::default()),
            Err(Error::WrongType)
        );
    }
}
