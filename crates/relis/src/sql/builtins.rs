//! Built-in SQL functions whose one call can run for long, replaced on every connection that
//! runs user SQL by versions that compute exactly the same thing and stop at the sandbox's
//! limits.
//!
//! SQLite checks its progress handler (and so the time limit) between virtual-machine steps,
//! and a function call is one step: `'aaa…' GLOB '*aaa…b'` compares every position of the
//! string with the pattern, which took 30 s in one step. These versions count their work
//! ([`sandbox::charge`]) and stop the statement when its deadline has passed (or an inline
//! read's budget is spent): `glob`, `like` (two and three arguments; the `LIKE`, `GLOB` and
//! `ESCAPE` operators call them), `instr`, `replace`, and `trim`, `ltrim`, `rtrim` with a
//! character set, each O(n·m) in the worst case. Each is a transcription of SQLite 3.50's C
//! (`func.c`), so results, NULL handling, type conversions and error messages are SQLite's
//! (`tests.rs` compares them with the built-ins on random input).
//!
//! `json_patch` and `jsonb_patch` compare every label of a patch object with every label of
//! the target object at the same place (quadratic: two 400 KB objects took 7 s). SQLite's own
//! does the work, on a private connection of the thread's, for arguments whose sizes
//! multiplied stay under [`PATCH_WORK`] (a quarter of a second at worst); larger ones are
//! refused (and an inline read's under [`INLINE_PATCH_WORK`] run on a reader).
//!
//! Outside user SQL (the engine's own statements) nothing is counted or refused.
//!
//! Overriding `like` and `glob` turns off SQLite's LIKE/GLOB optimisation (a constant prefix
//! pattern on an indexed column becoming an index range) for user SQL, which only applies to
//! built-in functions: `name GLOB 'abc*'` on an indexed column scans the table instead of a
//! range of its index. A query that needs the range can say so: `name >= 'abc' AND name <
//! 'abd'`.

use super::sandbox;
use rusqlite::ffi;
use rusqlite::Connection;
use std::ffi::{c_char, c_int, c_void, CStr};

/// The statement must stop (see [`sandbox::charge`]).
struct Stop;

/// Counts work locally and charges it to the sandbox in batches (a thread-local access per
/// character would cost more than the comparison).
struct Meter {
    pending: u64,
}

impl Meter {
    const BATCH: u64 = 4096;

    fn new() -> Self {
        Meter { pending: 0 }
    }

    #[inline]
    fn tick(&mut self, n: u64) -> Result<(), Stop> {
        self.pending += n;
        if self.pending >= Self::BATCH {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Stop> {
        let n = std::mem::take(&mut self.pending);
        if sandbox::charge(n) {
            Ok(())
        } else {
            Err(Stop)
        }
    }
}

/// How GLOB and LIKE compare (SQLite's `struct compareInfo`).
#[derive(Clone, Copy)]
struct CompareInfo {
    /// `*` or `%` (0: none, when it is LIKE's escape character).
    match_all: u32,
    /// `?` or `_` (0: none).
    match_one: u32,
    /// `[` or 0.
    match_set: u32,
    /// ASCII case folding.
    no_case: bool,
}

static GLOB_INFO: CompareInfo = CompareInfo {
    match_all: b'*' as u32,
    match_one: b'?' as u32,
    match_set: b'[' as u32,
    no_case: false,
};

static LIKE_INFO: CompareInfo = CompareInfo {
    match_all: b'%' as u32,
    match_one: b'_' as u32,
    match_set: 0,
    no_case: true,
};

const MATCH: i32 = 0;
const NOMATCH: i32 = 1;
const NOWILDCARDMATCH: i32 = 2;

/// A NUL-terminated string as SQLite reads it: past the end, every byte is 0.
#[derive(Clone, Copy)]
struct Z<'a> {
    s: &'a [u8],
    i: usize,
}

/// SQLite's `sqlite3Utf8Trans1`: the payload bits of a UTF-8 lead byte 0xc0..0xff.
const UTF8_TRANS1: [u8; 64] = [
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x00, 0x01, 0x02, 0x03, 0x00, 0x01, 0x00, 0x00,
];

impl<'a> Z<'a> {
    fn new(s: &'a [u8]) -> Self {
        Z { s, i: 0 }
    }

    #[inline]
    fn peek(&self) -> u8 {
        self.s.get(self.i).copied().unwrap_or(0)
    }

    /// `sqlite3Utf8Read`: the next character (malformed sequences read as U+FFFD).
    fn utf8_read(&mut self) -> u32 {
        let mut c = u32::from(self.peek());
        self.i += 1;
        if c >= 0xc0 {
            c = u32::from(UTF8_TRANS1[(c - 0xc0) as usize]);
            while self.peek() & 0xc0 == 0x80 {
                c = (c << 6).wrapping_add(u32::from(0x3f & self.peek()));
                self.i += 1;
            }
            if c < 0x80 || (c & 0xFFFF_F800) == 0xD800 || (c & 0xFFFF_FFFE) == 0xFFFE {
                c = 0xFFFD;
            }
        }
        c
    }

    /// The `Utf8Read` macro: ASCII without a call.
    #[inline]
    fn read(&mut self) -> u32 {
        let b = self.peek();
        if b < 0x80 {
            self.i += 1;
            u32::from(b)
        } else {
            self.utf8_read()
        }
    }

    /// `SQLITE_SKIP_UTF8`.
    fn skip(&mut self) {
        let b = self.peek();
        self.i += 1;
        if b >= 0xc0 {
            while self.peek() & 0xc0 == 0x80 {
                self.i += 1;
            }
        }
    }
}

/// `sqlite3Tolower` for an ASCII character (callers check `< 0x80`).
fn to_lower(c: u32) -> u32 {
    let b = c as u8;
    u32::from(b.to_ascii_lowercase())
}

/// Where a `*` (or `%`) left off: the candidates it tries for the rest of the pattern.
enum Star<'a> {
    /// `*[...]`: every position of the string, each against the pattern from the `[`.
    Set { pattern: Z<'a>, string: Z<'a> },
    /// `*c` with `c` ASCII: each position after an occurrence of `stop`'s bytes.
    Ascii {
        pattern: Z<'a>,
        string: Z<'a>,
        stop: [u8; 2],
    },
    /// `*c` with `c` not ASCII: each position after an occurrence of `c`.
    Wide {
        pattern: Z<'a>,
        string: Z<'a>,
        c: u32,
    },
}

impl<'a> Star<'a> {
    /// The next (pattern, string) to try, or `None` when there is none left.
    fn next(&mut self, m: &mut Meter) -> Result<Option<(Z<'a>, Z<'a>)>, Stop> {
        match self {
            Star::Set { pattern, string } => {
                if string.peek() == 0 {
                    return Ok(None);
                }
                let here = *string;
                string.skip();
                m.tick(1)?;
                Ok(Some((*pattern, here)))
            }
            Star::Ascii {
                pattern,
                string,
                stop,
            } => {
                // strcspn(zString, zStop), then one past the byte found.
                loop {
                    let b = string.peek();
                    if b == 0 {
                        m.tick(1)?;
                        return Ok(None);
                    }
                    string.i += 1;
                    m.tick(1)?;
                    if b == stop[0] || b == stop[1] {
                        return Ok(Some((*pattern, *string)));
                    }
                }
            }
            Star::Wide { pattern, string, c } => loop {
                let c2 = string.read();
                m.tick(1)?;
                if c2 == 0 {
                    return Ok(None);
                }
                if c2 == *c {
                    return Ok(Some((*pattern, *string)));
                }
            },
        }
    }
}

/// What one pass of `patternCompare`'s main loop ends with.
enum Pass<'a> {
    Done(i32),
    Star(Star<'a>),
}

/// `patternCompare`'s main loop from `pattern` and `string` up to its end or its next `*`.
fn pass<'a>(
    mut p: Z<'a>,
    mut s: Z<'a>,
    info: &CompareInfo,
    match_other: u32,
    m: &mut Meter,
) -> Result<Pass<'a>, Stop> {
    let (match_one, match_all) = (info.match_one, info.match_all);
    // One past the last escaped pattern character.
    let mut escaped: Option<usize> = None;
    loop {
        m.tick(1)?;
        let mut c = p.read();
        if c == 0 {
            break;
        }
        if c == match_all {
            // Skip further `*`s, and `?`s, each taking one character of the string.
            loop {
                c = p.read();
                if !(c == match_all || (c == match_one && match_one != 0)) {
                    break;
                }
                if c == match_one && s.utf8_read() == 0 {
                    return Ok(Pass::Done(NOWILDCARDMATCH));
                }
            }
            if c == 0 {
                return Ok(Pass::Done(MATCH));
            } else if c == match_other {
                if info.match_set == 0 {
                    c = p.utf8_read();
                    if c == 0 {
                        return Ok(Pass::Done(NOWILDCARDMATCH));
                    }
                } else {
                    // "[...]" right after the "*": try the set at every position.
                    let mut pattern = p;
                    pattern.i -= 1;
                    return Ok(Pass::Star(Star::Set { pattern, string: s }));
                }
            }
            if c < 0x80 {
                let stop = if info.no_case {
                    [
                        (c as u8).to_ascii_uppercase(),
                        (c as u8).to_ascii_lowercase(),
                    ]
                } else {
                    [c as u8, c as u8]
                };
                return Ok(Pass::Star(Star::Ascii {
                    pattern: p,
                    string: s,
                    stop,
                }));
            }
            return Ok(Pass::Star(Star::Wide {
                pattern: p,
                string: s,
                c,
            }));
        }
        if c == match_other {
            if info.match_set == 0 {
                c = p.utf8_read();
                if c == 0 {
                    return Ok(Pass::Done(NOMATCH));
                }
                escaped = Some(p.i);
            } else {
                let mut prior_c = 0u32;
                let mut seen = false;
                let mut invert = false;
                c = s.utf8_read();
                if c == 0 {
                    return Ok(Pass::Done(NOMATCH));
                }
                let mut c2 = p.utf8_read();
                if c2 == u32::from(b'^') {
                    invert = true;
                    c2 = p.utf8_read();
                }
                if c2 == u32::from(b']') {
                    if c == u32::from(b']') {
                        seen = true;
                    }
                    c2 = p.utf8_read();
                }
                while c2 != 0 && c2 != u32::from(b']') {
                    m.tick(1)?;
                    if c2 == u32::from(b'-') && p.peek() != b']' && p.peek() != 0 && prior_c > 0 {
                        c2 = p.utf8_read();
                        if c >= prior_c && c <= c2 {
                            seen = true;
                        }
                        prior_c = 0;
                    } else {
                        if c == c2 {
                            seen = true;
                        }
                        prior_c = c2;
                    }
                    c2 = p.utf8_read();
                }
                if c2 == 0 || !(seen ^ invert) {
                    return Ok(Pass::Done(NOMATCH));
                }
                continue;
            }
        }
        let c2 = s.read();
        if c == c2 {
            continue;
        }
        if info.no_case && to_lower(c) == to_lower(c2) && c < 0x80 && c2 < 0x80 {
            continue;
        }
        if c == match_one && escaped != Some(p.i) && c2 != 0 {
            continue;
        }
        return Ok(Pass::Done(NOMATCH));
    }
    Ok(Pass::Done(if s.peek() == 0 { MATCH } else { NOMATCH }))
}

/// SQLite's `patternCompare`, without its recursion. There, a `*` tries the rest of the
/// pattern at each candidate position and returns the first result that is not NOMATCH, or
/// NOWILDCARDMATCH when the candidates run out: it never returns NOMATCH, so once a later `*`
/// is reached no earlier one is ever resumed, and only the latest `*`'s candidates need to be
/// kept.
fn pattern_compare(
    pattern: &[u8],
    string: &[u8],
    info: &CompareInfo,
    match_other: u32,
    m: &mut Meter,
) -> Result<i32, Stop> {
    let mut star: Option<Star<'_>> = None;
    let mut cur = pass(Z::new(pattern), Z::new(string), info, match_other, m)?;
    loop {
        match cur {
            Pass::Done(NOMATCH) => match star.as_mut() {
                None => return Ok(NOMATCH),
                Some(st) => match st.next(m)? {
                    Some((p, s)) => cur = pass(p, s, info, match_other, m)?,
                    None => return Ok(NOWILDCARDMATCH),
                },
            },
            Pass::Done(r) => return Ok(r),
            Pass::Star(mut st) => {
                let next = st.next(m)?;
                star = Some(st);
                match next {
                    Some((p, s)) => cur = pass(p, s, info, match_other, m)?,
                    None => return Ok(NOWILDCARDMATCH),
                }
            }
        }
    }
}

/// The arguments of a function call.
struct Args {
    ctx: *mut ffi::sqlite3_context,
    argv: *mut *mut ffi::sqlite3_value,
    argc: usize,
}

impl Args {
    fn value(&self, i: usize) -> *mut ffi::sqlite3_value {
        debug_assert!(i < self.argc);
        // SAFETY: SQLite passes `argc` valid values.
        unsafe { *self.argv.add(i) }
    }

    fn value_type(&self, i: usize) -> c_int {
        // SAFETY: a valid value of this call.
        unsafe { ffi::sqlite3_value_type(self.value(i)) }
    }

    fn bytes(&self, i: usize) -> usize {
        // SAFETY: a valid value of this call.
        unsafe { ffi::sqlite3_value_bytes(self.value(i)) as usize }
    }

    /// `sqlite3_value_text` and then `sqlite3_value_bytes`, as SQLite's functions call them:
    /// the whole text (with any NUL bytes in it), `None` for NULL.
    fn text(&self, i: usize) -> Option<&[u8]> {
        // SAFETY: a valid value of this call; the text stays valid until the value changes,
        // which nothing does before the call returns.
        unsafe {
            let p = ffi::sqlite3_value_text(self.value(i));
            if p.is_null() {
                return None;
            }
            let n = ffi::sqlite3_value_bytes(self.value(i)) as usize;
            Some(std::slice::from_raw_parts(p, n))
        }
    }

    /// The text as a C string: up to its first NUL byte.
    fn c_text(&self, i: usize) -> Option<&[u8]> {
        // SAFETY: as in `text`; SQLite's text is NUL-terminated.
        unsafe {
            let p = ffi::sqlite3_value_text(self.value(i));
            if p.is_null() {
                return None;
            }
            Some(CStr::from_ptr(p.cast::<c_char>()).to_bytes())
        }
    }

    fn limit(&self, id: c_int) -> i64 {
        // SAFETY: the call's connection is open while the call runs.
        i64::from(unsafe { ffi::sqlite3_limit(ffi::sqlite3_context_db_handle(self.ctx), id, -1) })
    }

    fn user_data<T>(&self) -> &'static T {
        // SAFETY: registered below with a pointer to a `static T`.
        unsafe { &*ffi::sqlite3_user_data(self.ctx).cast::<T>() }
    }

    fn int(&self, v: i64) {
        // SAFETY: a valid context of this call.
        unsafe { ffi::sqlite3_result_int64(self.ctx, v) }
    }

    fn text_result(&self, t: &[u8]) {
        // SAFETY: SQLite copies the bytes (SQLITE_TRANSIENT) before this returns.
        unsafe {
            ffi::sqlite3_result_text64(
                self.ctx,
                t.as_ptr().cast::<c_char>(),
                t.len() as u64,
                ffi::SQLITE_TRANSIENT(),
                ffi::SQLITE_UTF8 as u8,
            )
        }
    }

    fn error(&self, msg: &str) {
        // SAFETY: SQLite copies the message.
        unsafe {
            ffi::sqlite3_result_error(self.ctx, msg.as_ptr().cast::<c_char>(), msg.len() as c_int)
        }
    }

    fn too_big(&self) {
        // SAFETY: a valid context of this call.
        unsafe { ffi::sqlite3_result_error_toobig(self.ctx) }
    }

    /// The statement stops: the sandbox knows why (deadline or inline budget), and maps the
    /// error.
    fn stop(&self) {
        self.error("interrupted");
    }
}

type Body = fn(&Args) -> Result<(), Stop>;

/// Runs `body` for a call; a panic (a bug) fails the statement instead of unwinding into C.
fn call(
    ctx: *mut ffi::sqlite3_context,
    argc: c_int,
    argv: *mut *mut ffi::sqlite3_value,
    body: Body,
) {
    let args = Args {
        ctx,
        argv,
        argc: argc.max(0) as usize,
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(&args))) {
        Ok(Ok(())) => {}
        Ok(Err(Stop)) => args.stop(),
        Err(_) => args.error("internal error in a built-in function"),
    }
}

macro_rules! entry {
    ($name:ident, $body:expr) => {
        unsafe extern "C" fn $name(
            ctx: *mut ffi::sqlite3_context,
            argc: c_int,
            argv: *mut *mut ffi::sqlite3_value,
        ) {
            call(ctx, argc, argv, $body)
        }
    };
}

/// `likeFunc`: `like(pattern, string [, escape])` and `glob(pattern, string)`.
fn like(a: &Args) -> Result<(), Stop> {
    let mut info: CompareInfo = *a.user_data::<CompareInfo>();
    // The pattern's length is limited first, as SQLite does, to bound the work.
    if a.bytes(0) as i64 > a.limit(ffi::SQLITE_LIMIT_LIKE_PATTERN_LENGTH) {
        a.error("LIKE or GLOB pattern too complex");
        return Ok(());
    }
    let escape = if a.argc == 3 {
        let Some(esc) = a.c_text(2) else {
            return Ok(());
        };
        let mut z = Z::new(esc);
        let mut chars = 0;
        while z.peek() != 0 {
            z.skip();
            chars += 1;
        }
        if chars != 1 {
            a.error("ESCAPE expression must be a single character");
            return Ok(());
        }
        let escape = Z::new(esc).utf8_read();
        if escape == info.match_all {
            info.match_all = 0;
        }
        if escape == info.match_one {
            info.match_one = 0;
        }
        escape
    } else {
        info.match_set
    };
    let (Some(pattern), Some(string)) = (a.c_text(0), a.c_text(1)) else {
        return Ok(());
    };
    let mut m = Meter::new();
    let r = pattern_compare(pattern, string, &info, escape, &mut m)?;
    m.flush()?;
    a.int(i64::from(r == MATCH));
    Ok(())
}

/// `instrFunc`: the 1-based position of the first `needle` in `haystack` (characters for text,
/// bytes for two blobs), 0 if none, NULL if either is NULL.
fn instr(a: &Args) -> Result<(), Stop> {
    let (th, tn) = (a.value_type(0), a.value_type(1));
    if th == ffi::SQLITE_NULL || tn == ffi::SQLITE_NULL {
        return Ok(());
    }
    if a.bytes(1) == 0 {
        a.int(1);
        return Ok(());
    }
    let blobs = th == ffi::SQLITE_BLOB && tn == ffi::SQLITE_BLOB;
    let (hay, needle): (Vec<u8>, Vec<u8>);
    let (h, n): (&[u8], &[u8]) = if blobs {
        // SAFETY: valid values of this call; their blobs stay valid until they change.
        unsafe {
            let n0 = a.bytes(0);
            let p0 = ffi::sqlite3_value_blob(a.value(0)).cast::<u8>();
            let n1 = a.bytes(1);
            let p1 = ffi::sqlite3_value_blob(a.value(1)).cast::<u8>();
            (
                if n0 == 0 {
                    &[][..]
                } else {
                    std::slice::from_raw_parts(p0, n0)
                },
                std::slice::from_raw_parts(p1, n1),
            )
        }
    } else if th != ffi::SQLITE_BLOB && tn != ffi::SQLITE_BLOB {
        (a.text(0).unwrap_or_default(), a.text(1).unwrap_or_default())
    } else {
        // A blob and a text: SQLite compares copies of both as text.
        hay = a.text(0).unwrap_or_default().to_vec();
        needle = a.text(1).unwrap_or_default().to_vec();
        (&hay, &needle)
    };
    let text = !blobs;
    let mut m = Meter::new();
    let mut pos = 1i64;
    let mut i = 0usize;
    let first = n[0];
    // The bytes past the haystack's end read as SQLite's NUL terminator.
    let byte = |i: usize| h.get(i).copied().unwrap_or(0);
    let found = loop {
        if n.len() > h.len() - i {
            break false;
        }
        if h[i] == first {
            m.tick(n.len() as u64)?;
            if &h[i..i + n.len()] == n {
                break true;
            }
        }
        m.tick(1)?;
        pos += 1;
        loop {
            i += 1;
            if !(text && byte(i) & 0xc0 == 0x80) {
                break;
            }
        }
    };
    m.flush()?;
    a.int(if found { pos } else { 0 });
    Ok(())
}

/// `replaceFunc`: `replace(string, pattern, replacement)`.
fn replace(a: &Args) -> Result<(), Stop> {
    let Some(s) = a.text(0) else {
        return Ok(());
    };
    let Some(pattern) = a.text(1) else {
        return Ok(());
    };
    if pattern.first().copied().unwrap_or(0) == 0 {
        a.text_result(s);
        return Ok(());
    }
    let Some(rep) = a.text(2) else {
        return Ok(());
    };
    let max = a.limit(ffi::SQLITE_LIMIT_LENGTH);
    let mut out: Vec<u8> = Vec::with_capacity(s.len());
    let mut m = Meter::new();
    let mut i = 0usize;
    while i + pattern.len() <= s.len() {
        m.tick(1)?;
        if s[i] == pattern[0] {
            m.tick(pattern.len() as u64)?;
            if &s[i..i + pattern.len()] == pattern {
                if (out.len() + rep.len() + (s.len() - i - pattern.len())) as i64 > max {
                    a.too_big();
                    return Ok(());
                }
                out.extend_from_slice(rep);
                i += pattern.len();
                continue;
            }
        }
        out.push(s[i]);
        i += 1;
    }
    out.extend_from_slice(&s[i..]);
    m.flush()?;
    a.text_result(&out);
    Ok(())
}

/// `trimFunc` with a character set: `trim(x, chars)`, `ltrim`, `rtrim`.
fn trim(a: &Args) -> Result<(), Stop> {
    if a.value_type(0) == ffi::SQLITE_NULL {
        return Ok(());
    }
    let Some(input) = a.text(0) else {
        return Ok(());
    };
    let Some(set) = a.c_text(1) else {
        return Ok(());
    };
    // The set's characters as SQLITE_SKIP_UTF8 cuts them, in order.
    let mut chars: Vec<&[u8]> = Vec::new();
    let mut z = Z::new(set);
    while z.peek() != 0 {
        let start = z.i;
        z.skip();
        chars.push(&set[start..z.i.min(set.len())]);
    }
    let flags = *a.user_data::<u8>();
    let (mut lo, mut hi) = (0usize, input.len());
    let mut m = Meter::new();
    if !chars.is_empty() {
        if flags & 1 != 0 {
            while lo < hi {
                let rest = &input[lo..hi];
                let mut found = None;
                for c in &chars {
                    m.tick(1)?;
                    if c.len() <= rest.len() && rest.starts_with(c) {
                        found = Some(c.len());
                        break;
                    }
                }
                match found {
                    Some(n) => lo += n,
                    None => break,
                }
            }
        }
        if flags & 2 != 0 {
            while lo < hi {
                let rest = &input[lo..hi];
                let mut found = None;
                for c in &chars {
                    m.tick(1)?;
                    if c.len() <= rest.len() && rest.ends_with(c) {
                        found = Some(c.len());
                        break;
                    }
                }
                match found {
                    Some(n) => hi -= n,
                    None => break,
                }
            }
        }
    }
    m.flush()?;
    a.text_result(&input[lo..hi]);
    Ok(())
}

/// The largest product of `json_patch`'s argument sizes (bytes) user SQL may merge: a 64 KB
/// patch on a 64 KB document, or 1 KB on 4 MB.
pub(crate) const PATCH_WORK: u64 = 1 << 32;

/// The same in an inline read (a few hundred microseconds at worst).
const INLINE_PATCH_WORK: u64 = 1 << 22;

/// The JSON subtype SQLite's JSON functions give their text results (`'J'`).
const JSON_SUBTYPE: std::ffi::c_uint = 74;

/// What the side connection runs, in [`SIDE_SQL`]'s order.
#[derive(Clone, Copy)]
enum SideSql {
    JsonPatch,
    JsonbPatch,
    Json,
    JsonPretty,
    JsonPrettyIndent,
}

const SIDE_SQL: [&CStr; 5] = [
    c"SELECT json_patch(?1, ?2)",
    c"SELECT jsonb_patch(?1, ?2)",
    c"SELECT json(?1)",
    c"SELECT json_pretty(?1)",
    c"SELECT json_pretty(?1, ?2)",
];

/// A private connection with SQLite's own JSON functions that Relis bounds (`json_patch`,
/// `jsonb_patch`, `json_pretty`), one per thread.
struct Side {
    conn: Connection,
    /// [`SIDE_SQL`], prepared.
    stmts: [*mut ffi::sqlite3_stmt; 5],
}

impl Side {
    fn open() -> Option<Side> {
        let conn = Connection::open_in_memory().ok()?;
        let mut stmts = [std::ptr::null_mut(); 5];
        for (st, sql) in stmts.iter_mut().zip(SIDE_SQL) {
            // SAFETY: an open connection and a C string; the statement is finalized on drop.
            let rc = unsafe {
                ffi::sqlite3_prepare_v2(conn.handle(), sql.as_ptr(), -1, st, std::ptr::null_mut())
            };
            if rc != ffi::SQLITE_OK {
                return None;
            }
        }
        Some(Side { conn, stmts })
    }
}

impl Drop for Side {
    fn drop(&mut self) {
        for st in self.stmts {
            // SAFETY: prepared on `self.conn`, which is still open (fields drop after this).
            unsafe { ffi::sqlite3_finalize(st) };
        }
    }
}

thread_local! {
    static SIDE: std::cell::RefCell<Option<Side>> = const { std::cell::RefCell::new(None) };
}

/// `json_patch(target, patch)` (user data 0) and `jsonb_patch` (1): SQLite's, within bounds.
fn json_patch(a: &Args) -> Result<(), Stop> {
    let jsonb = *a.user_data::<u8>() == 1;
    let work = (a.bytes(0) as u64).saturating_mul(a.bytes(1) as u64);
    if sandbox::active() {
        if sandbox::inline() && work > INLINE_PATCH_WORK {
            sandbox::stop_inline();
            return Err(Stop);
        }
        if work > PATCH_WORK {
            a.error(&format!(
                "json_patch: arguments too large to merge here (their sizes multiplied exceed {PATCH_WORK})"
            ));
            return Ok(());
        }
    }
    let which = if jsonb {
        SideSql::JsonbPatch
    } else {
        SideSql::JsonPatch
    };
    on_side(
        a,
        which,
        &[Bind::Value(a.value(0)), Bind::Value(a.value(1))],
    );
    Ok(())
}

/// A parameter of a statement on the side connection.
enum Bind<'a> {
    /// An argument of the call, as it is.
    Value(*mut ffi::sqlite3_value),
    /// Text.
    Text(&'a [u8]),
}

/// Runs one of [`SIDE_SQL`] on this thread's side connection with `values` bound, and makes its
/// result (or error) the call's result.
fn on_side(a: &Args, which: SideSql, values: &[Bind<'_>]) {
    // As SQLite's own: json_patch's text is JSON (json_array embeds it as such), json_pretty's
    // a plain string.
    let subtype = matches!(which, SideSql::JsonPatch);
    side_step(a, which, values, |v| {
        // SAFETY: the side statement's current row's value, copied by SQLite.
        unsafe {
            let text = subtype && ffi::sqlite3_value_type(v) == ffi::SQLITE_TEXT;
            ffi::sqlite3_result_value(a.ctx, v);
            if text {
                ffi::sqlite3_result_subtype(a.ctx, JSON_SUBTYPE);
            }
        }
    });
}

/// Runs one of [`SIDE_SQL`] with `values` bound and hands its result to `row`; an error becomes
/// the call's result (and `row` is not called).
fn side_step(
    a: &Args,
    which: SideSql,
    values: &[Bind<'_>],
    row: impl FnOnce(*mut ffi::sqlite3_value),
) {
    SIDE.with(|cell| {
        let mut side = cell.borrow_mut();
        if side.is_none() {
            *side = Side::open();
        }
        let Some(side) = side.as_ref() else {
            a.error("cannot open the connection for JSON functions");
            return;
        };
        let st = side.stmts[which as usize];
        // SAFETY: the statement belongs to this thread's side connection and is reset before
        // this returns; the values are this call's, copied by sqlite3_bind_value; the result
        // is copied by sqlite3_result_value before the reset.
        unsafe {
            let db = side.conn.handle();
            ffi::sqlite3_limit(
                db,
                ffi::SQLITE_LIMIT_LENGTH,
                a.limit(ffi::SQLITE_LIMIT_LENGTH) as c_int,
            );
            for (i, v) in values.iter().enumerate() {
                let at = i as c_int + 1;
                match v {
                    Bind::Value(v) => ffi::sqlite3_bind_value(st, at, *v),
                    Bind::Text(t) => ffi::sqlite3_bind_text64(
                        st,
                        at,
                        t.as_ptr().cast::<c_char>(),
                        t.len() as u64,
                        ffi::SQLITE_TRANSIENT(),
                        ffi::SQLITE_UTF8 as u8,
                    ),
                };
            }
            match ffi::sqlite3_step(st) {
                ffi::SQLITE_ROW => row(ffi::sqlite3_column_value(st, 0)),
                _ => {
                    let code = ffi::sqlite3_errcode(db);
                    if code == ffi::SQLITE_TOOBIG {
                        a.too_big();
                    } else if code == ffi::SQLITE_NOMEM {
                        ffi::sqlite3_result_error_nomem(a.ctx);
                    } else {
                        let msg = CStr::from_ptr(ffi::sqlite3_errmsg(db)).to_string_lossy();
                        a.error(&msg);
                    }
                }
            }
            ffi::sqlite3_reset(st);
            ffi::sqlite3_clear_bindings(st);
        }
    });
}

/// An upper bound of the length of `json_pretty(json, indent)` for JSON text: every `[`, `{`,
/// `,`, `]` and `}` outside strings may start a line indented by its depth, every `:` gains a
/// space, and the input's own blanks only shrink it.
fn pretty_bound(json: &[u8], indent: u64) -> u64 {
    let (mut depth, mut out, mut in_string, mut escaped) = (0u64, json.len() as u64, false, false);
    for &c in json {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                out = out.saturating_add(1 + depth.saturating_mul(indent));
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                out = out.saturating_add(1 + depth.saturating_mul(indent));
            }
            b',' => out = out.saturating_add(1 + depth.saturating_mul(indent)),
            b':' => out = out.saturating_add(1),
            _ => {}
        }
    }
    out
}

/// Longest output an inline read's `json_pretty` may build before it moves to a reader.
const INLINE_PRETTY_BYTES: u64 = 1 << 20;

/// `json_pretty(json [, indent])`: SQLite's, when its output is known to fit the length limit.
/// SQLite's own indents every value by its depth and checks the length only once the text is
/// built: 1 MB of nested arrays made 2 GB. JSONB (a blob) is turned into text first to be
/// measured.
fn json_pretty(a: &Args) -> Result<(), Stop> {
    if a.value_type(0) == ffi::SQLITE_NULL {
        return Ok(());
    }
    let indent = if a.argc == 2 && a.value_type(1) != ffi::SQLITE_NULL {
        a.bytes(1) as u64
    } else {
        4
    };
    let text: Vec<u8> = if a.value_type(0) == ffi::SQLITE_BLOB {
        // JSONB: measured as the text SQLite's json() makes of it (within the length limit).
        let mut text = None;
        side_step(a, SideSql::Json, &[Bind::Value(a.value(0))], |v| {
            // SAFETY: the side statement's current row's value, copied here.
            text = Some(unsafe {
                let p = ffi::sqlite3_value_text(v);
                let n = ffi::sqlite3_value_bytes(v) as usize;
                if p.is_null() {
                    Vec::new()
                } else {
                    std::slice::from_raw_parts(p, n).to_vec()
                }
            });
        });
        match text {
            Some(t) => t,
            // json() failed: its error is the call's.
            None => return Ok(()),
        }
    } else {
        a.text(0).unwrap_or_default().to_vec()
    };
    let bound = pretty_bound(&text, indent);
    if sandbox::active() && sandbox::inline() && bound > INLINE_PRETTY_BYTES {
        sandbox::stop_inline();
        return Err(Stop);
    }
    if bound > a.limit(ffi::SQLITE_LIMIT_LENGTH) as u64 {
        a.too_big();
        return Ok(());
    }
    if a.argc == 2 {
        on_side(
            a,
            SideSql::JsonPrettyIndent,
            &[Bind::Text(&text), Bind::Value(a.value(1))],
        );
    } else {
        on_side(a, SideSql::JsonPretty, &[Bind::Text(&text)]);
    }
    Ok(())
}

entry!(x_like, like);
entry!(x_json_patch, json_patch);
entry!(x_json_pretty, json_pretty);
entry!(x_instr, instr);
entry!(x_replace, replace);
entry!(x_trim, trim);

static JSON_TEXT: u8 = 0;
static JSONB: u8 = 1;
static TRIM_BOTH: u8 = 3;
static TRIM_LEFT: u8 = 1;
static TRIM_RIGHT: u8 = 2;

/// Registers the bounded built-ins on `conn`, in place of SQLite's.
///
/// # Errors
/// SQLite refuses a registration.
pub(crate) fn install(conn: &Connection) -> rusqlite::Result<()> {
    type XFunc =
        unsafe extern "C" fn(*mut ffi::sqlite3_context, c_int, *mut *mut ffi::sqlite3_value);
    let defs: [(&CStr, c_int, XFunc, *const c_void); 12] = [
        (
            c"glob",
            2,
            x_like,
            (&GLOB_INFO as *const CompareInfo).cast(),
        ),
        (
            c"like",
            2,
            x_like,
            (&LIKE_INFO as *const CompareInfo).cast(),
        ),
        (
            c"like",
            3,
            x_like,
            (&LIKE_INFO as *const CompareInfo).cast(),
        ),
        (c"instr", 2, x_instr, std::ptr::null()),
        (c"replace", 3, x_replace, std::ptr::null()),
        (c"trim", 2, x_trim, (&TRIM_BOTH as *const u8).cast()),
        (c"ltrim", 2, x_trim, (&TRIM_LEFT as *const u8).cast()),
        // (trim, ltrim and rtrim of one argument trim spaces: linear, SQLite's own.)
        (c"rtrim", 2, x_trim, (&TRIM_RIGHT as *const u8).cast()),
        (
            c"json_patch",
            2,
            x_json_patch,
            (&JSON_TEXT as *const u8).cast(),
        ),
        (
            c"jsonb_patch",
            2,
            x_json_patch,
            (&JSONB as *const u8).cast(),
        ),
        (c"json_pretty", 1, x_json_pretty, std::ptr::null()),
        (c"json_pretty", 2, x_json_pretty, std::ptr::null()),
    ];
    for (name, n_arg, f, data) in defs {
        // As the built-ins: deterministic, and innocuous (usable in views, triggers, indexes);
        // json_patch's text result has the JSON subtype.
        let mut flags = ffi::SQLITE_UTF8 | ffi::SQLITE_DETERMINISTIC | ffi::SQLITE_INNOCUOUS;
        if name == c"json_patch" {
            flags |= ffi::SQLITE_RESULT_SUBTYPE;
        }
        // SAFETY: the handle is open; the name is a C string; the user data points to statics.
        let rc = unsafe {
            ffi::sqlite3_create_function_v2(
                conn.handle(),
                name.as_ptr(),
                n_arg,
                flags,
                data as *mut c_void,
                Some(f),
                None,
                None,
                None,
            )
        };
        if rc != ffi::SQLITE_OK {
            return Err(rusqlite::Error::SqliteFailure(
                ffi::Error::new(rc),
                Some(format!("cannot register {}", name.to_string_lossy())),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rusqlite::types::{ToSqlOutput, ValueRef};

    /// A value bound as it is: text may be invalid UTF-8.
    #[derive(Clone, Debug)]
    enum Arg {
        Null,
        Int(i64),
        Real(f64),
        Text(Vec<u8>),
        Blob(Vec<u8>),
    }

    impl rusqlite::ToSql for Arg {
        fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
            Ok(ToSqlOutput::Borrowed(match self {
                Arg::Null => ValueRef::Null,
                Arg::Int(i) => ValueRef::Integer(*i),
                Arg::Real(f) => ValueRef::Real(*f),
                Arg::Text(t) => ValueRef::Text(t),
                Arg::Blob(b) => ValueRef::Blob(b),
            }))
        }
    }

    /// Pieces that reach every branch: wildcards, sets, escapes, case, multi-byte characters,
    /// malformed UTF-8, NUL.
    const PIECES: &[&[u8]] = &[
        b"a",
        b"A",
        b"b",
        b"z",
        b"*",
        b"?",
        b"[",
        b"]",
        b"^",
        b"-",
        b"%",
        b"_",
        b"\\",
        b"x",
        "\u{e9}".as_bytes(),
        "\u{c9}".as_bytes(),
        "\u{20ac}".as_bytes(),
        "\u{1f600}".as_bytes(),
        b"\x00",
        b"\xff",
        b"\x80",
        b"\xc3",
        b"\xed\xa0\x80",
        b"\xef\xbf\xbe",
        b"\xc0\x80",
        b" ",
    ];

    fn bytes() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(0..PIECES.len(), 0..10).prop_map(|ix| {
            ix.into_iter()
                .flat_map(|i| PIECES[i].iter().copied())
                .collect()
        })
    }

    fn arg() -> impl Strategy<Value = Arg> {
        prop_oneof![
            1 => Just(Arg::Null),
            1 => (-20i64..20).prop_map(Arg::Int),
            1 => prop_oneof![Just(1.5), Just(-0.0), Just(1e20), Just(2.0)].prop_map(Arg::Real),
            8 => bytes().prop_map(Arg::Text),
            4 => bytes().prop_map(Arg::Blob),
        ]
    }

    /// A result value as bytes (text may be invalid UTF-8).
    #[derive(Debug, PartialEq)]
    enum Out {
        Null,
        Int(i64),
        Real(f64),
        Text(Vec<u8>),
        Blob(Vec<u8>),
    }

    fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Vec<Out>> {
        (0..r.as_ref().column_count())
            .map(|i| {
                Ok(match r.get_ref(i)? {
                    ValueRef::Null => Out::Null,
                    ValueRef::Integer(i) => Out::Int(i),
                    ValueRef::Real(f) => Out::Real(f),
                    ValueRef::Text(t) => Out::Text(t.to_vec()),
                    ValueRef::Blob(b) => Out::Blob(b.to_vec()),
                })
            })
            .collect()
    }

    fn run(c: &Connection, sql: &str, args: &[Arg]) -> Result<Vec<Out>, String> {
        c.query_row(sql, rusqlite::params_from_iter(args.iter()), row)
            .map_err(|e| e.to_string())
    }

    const CALLS: &[&str] = &[
        "SELECT glob(?1, ?2)",
        "SELECT like(?1, ?2)",
        "SELECT like(?1, ?2, ?3)",
        "SELECT ?2 GLOB ?1",
        "SELECT ?2 NOT LIKE ?1",
        "SELECT ?2 LIKE ?1 ESCAPE ?3",
        "SELECT instr(?1, ?2)",
        "SELECT replace(?1, ?2, ?3)",
        "SELECT trim(?1, ?2)",
        "SELECT ltrim(?1, ?2)",
        "SELECT rtrim(?1, ?2)",
    ];

    fn pair() -> (Connection, Connection) {
        let sqlite = Connection::open_in_memory().unwrap();
        let ours = Connection::open_in_memory().unwrap();
        install(&ours).unwrap();
        (sqlite, ours)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        #[test]
        fn the_bounded_built_ins_answer_as_sqlites_own(a in arg(), b in arg(), c in arg()) {
            thread_local! {
                static CONNS: (Connection, Connection) = pair();
            }
            CONNS.with(|(sqlite, ours)| {
                for sql in CALLS {
                    let n = sql.matches('?').count().min(3);
                    let args = [a.clone(), b.clone(), c.clone()];
                    let want = run(sqlite, sql, &args[..n]);
                    let got = run(ours, sql, &args[..n]);
                    prop_assert_eq!(got, want, "{} {:?}", sql, &args[..n]);
                }
                Ok(())
            })?;
        }
    }

    #[test]
    fn worked_examples_agree() {
        let (sqlite, ours) = pair();
        let cases: &[(&str, &[&str])] = &[
            ("SELECT 'abc' GLOB 'a*c', 'abc' GLOB 'A*', 'a]' GLOB '*[]]', 'b' GLOB '[^a-c]'", &[]),
            ("SELECT 'x' GLOB '[a-', 'ab' GLOB '*[b]', 'abc' GLOB '*?c', '' GLOB '*'", &[]),
            ("SELECT 'ABC' LIKE 'a%', 'a%c' LIKE 'a\\%c' ESCAPE '\\', 'a_c' LIKE 'a__' ESCAPE '_'", &[]),
            ("SELECT like('%', 'x', '%'), like('a', 'a', NULL)", &[]),
            ("SELECT like('a', 'a', 'xy')", &[]),
            ("SELECT 'é' LIKE 'É', 'é' LIKE '_', instr('héllo', 'l'), instr(x'00ff', x'ff'), instr(x'c3a980ff', x'ff'), instr('é€x', 'x')", &[]),
            ("SELECT replace('abcabc', 'bc', 'X'), replace('abc', '', 'X'), replace(NULL, 'a', 'b')", &[]),
            ("SELECT trim('xxaxx', 'x'), ltrim('abcba', 'ab'), rtrim('héé', 'é'), trim(12100, 1)", &[]),
        ];
        for (sql, _) in cases {
            assert_eq!(run(&ours, sql, &[]), run(&sqlite, sql, &[]), "{sql}");
        }
        // json_patch is SQLite's own, subtype included (json_array embeds it as JSON).
        for sql in [
            r#"SELECT json_patch('{"a":1,"b":{"c":2}}', '{"b":{"c":null,"d":3},"e":[1]}')"#,
            r#"SELECT json_array(json_patch('{"a":1}', '{"b":2}')), json_patch(NULL, '{}')"#,
            r#"SELECT hex(jsonb_patch('{"a":1}', jsonb('{"a":[2]}'))), json_patch('[1]', 2)"#,
            r#"SELECT json_patch('{"a":1', '{}')"#,
            r#"SELECT json_patch('{"a":{"b":1}}', '{"a":{"b":null},"c":null}') -> '$.a'"#,
            // json_pretty is SQLite's own once its output is known to fit.
            r#"SELECT json_pretty('{"a":[1,{"b":"x]\"["}],"c":{},"d":[]}'), json_pretty(' [ 1 , 2 ] ', '')"#,
            r#"SELECT json_array(json_pretty('[1]')), json_pretty(jsonb('{"k":[true,null]}'), char(9))"#,
            r#"SELECT json_pretty(NULL), json_pretty(1.5), json_pretty('"s"'), json_pretty('[1', ' ')"#,
            r#"SELECT json_pretty(x'00'), json_pretty('[1]', NULL)"#,
        ] {
            assert_eq!(run(&ours, sql, &[]), run(&sqlite, sql, &[]), "{sql}");
        }
        // The pattern's length limit and its message.
        ours.execute_batch("SELECT 1").unwrap();
        let long = format!("SELECT 'a' LIKE '{}'", "a".repeat(50001));
        assert_eq!(
            ours.query_row(&long, [], |r| r.get::<_, i64>(0))
                .unwrap_err()
                .to_string(),
            sqlite
                .query_row(&long, [], |r| r.get::<_, i64>(0))
                .unwrap_err()
                .to_string()
        );
    }

    #[test]
    fn a_deep_pattern_needs_no_deep_stack() {
        // SQLite recurses once per `*`; 25,000 of them would overflow a small thread stack.
        std::thread::Builder::new()
            .stack_size(64 << 10)
            .spawn(|| {
                let (_, ours) = pair();
                let pattern = "*a".repeat(24_000);
                let s = "a".repeat(24_001);
                let r: i64 = ours
                    .query_row("SELECT ?2 GLOB ?1", [&pattern, &s], |r| r.get(0))
                    .unwrap();
                assert_eq!(r, 1);
            })
            .unwrap()
            .join()
            .unwrap();
    }
}
