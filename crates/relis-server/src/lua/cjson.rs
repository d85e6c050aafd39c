//! The `cjson` library (lua-cjson 2.1, which Redis vendors) with its default settings:
//! `cjson.encode`, `cjson.decode`, `cjson.null`. Numbers are written `%.14g`; `/` is escaped;
//! an empty table encodes as `{}`; a table whose keys are all positive integers is an array
//! (holes become `null`), unless it is excessively sparse (more than twice as many slots as
//! elements and over 10), which is an error as in lua-cjson; nesting stops at 1000. The
//! settings functions (`encode_max_depth`, `encode_number_precision`, `encode_sparse_array`,
//! ...) change these for the rest of the script (in Redis they stay set for every later
//! script of every user: Relis puts the defaults back after each run, see [`Settings`]).
//! `cjson.decode` reads tokens as lua-cjson does, errors and their positions included: with
//! `decode_invalid_numbers` on (the default) a number is whatever C's `strtod` reads (`NaN`,
//! `Infinity`, `0x10`, `+1`, `01`), and the text ends at its first NUL byte.

use super::engine::lua_error;
use mlua::{Lua, Table, Value};

/// lua-cjson's settings.
#[derive(Clone, Copy)]
struct Cfg {
    encode_max_depth: usize,
    decode_max_depth: usize,
    precision: usize,
    sparse_convert: bool,
    sparse_ratio: usize,
    sparse_safe: usize,
    /// 0 off, 1 on, 2 "null".
    encode_invalid: u8,
    decode_invalid: bool,
    keep_buffer: bool,
}

const DEFAULT: Cfg = Cfg {
    encode_max_depth: 1000,
    decode_max_depth: 1000,
    precision: 14,
    sparse_convert: false,
    sparse_ratio: 2,
    sparse_safe: 10,
    encode_invalid: 0,
    decode_invalid: true,
    keep_buffer: true,
};

type Shared = std::rc::Rc<std::cell::Cell<Cfg>>;

/// The library's settings, which the engine puts back to the defaults after each run: one
/// user's `cjson.encode_max_depth(1)` must not break the next user's scripts.
pub struct Settings(Shared);

impl Settings {
    /// Back to lua-cjson's defaults.
    pub fn reset(&self) {
        self.0.set(DEFAULT);
    }
}

/// An optional integer argument in `lo..=hi` (lua-cjson's `json_integer_option`).
fn int_opt(
    lua: &Lua,
    v: Option<&Value>,
    pos: usize,
    name: &str,
    lo: i64,
    hi: i64,
) -> mlua::Result<Option<usize>> {
    let n = match v {
        None | Some(Value::Nil) => return Ok(None),
        Some(Value::Integer(n)) => *n,
        Some(Value::Number(n)) => *n as i64,
        _ => i64::MIN,
    };
    if n < lo || n > hi {
        return Err(lua_error(
            lua,
            &format!("bad argument #{pos} to '{name}' (expected integer between {lo} and {hi})"),
        ));
    }
    Ok(Some(n as usize))
}

/// An optional on/off argument (booleans, "on"/"off", and "null" where allowed).
fn enum_opt(lua: &Lua, v: Option<&Value>, name: &str, null_ok: bool) -> mlua::Result<Option<u8>> {
    match v {
        None | Some(Value::Nil) => Ok(None),
        Some(Value::Boolean(b)) => Ok(Some(u8::from(*b))),
        Some(Value::String(s)) => match s
            .to_str()
            .map(|s| s.to_string())
            .unwrap_or_default()
            .as_str()
        {
            "off" => Ok(Some(0)),
            "on" => Ok(Some(1)),
            "null" if null_ok => Ok(Some(2)),
            _ => Err(lua_error(
                lua,
                &format!("bad argument #1 to '{name}' (invalid option)"),
            )),
        },
        _ => Err(lua_error(
            lua,
            &format!("bad argument #1 to '{name}' (invalid option)"),
        )),
    }
}

/// Builds the `cjson` table, and the handle on its settings.
///
/// # Errors
/// Lua memory errors.
pub fn library(lua: &Lua) -> mlua::Result<(Table, Settings)> {
    let t = lua.create_table()?;
    let cfg: Shared = std::rc::Rc::new(std::cell::Cell::new(DEFAULT));
    let c = cfg.clone();
    t.raw_set(
        "encode",
        lua.create_function(move |lua, v: mlua::MultiValue| {
            if v.len() != 1 {
                return Err(lua_error(
                    lua,
                    "bad argument #1 to 'encode' (expected 1 argument)",
                ));
            }
            let mut buf = Vec::new();
            let mut out = Out {
                buf: &mut buf,
                room: super::engine::room(lua),
            };
            // The argument is on lua-cjson's stack: one slot.
            encode(lua, &v[0], 0, 1, &c.get(), &mut out).map_err(|e| lua_error(lua, &e))?;
            Ok(mlua::BString::from(buf))
        })?,
    )?;
    let c = cfg.clone();
    t.raw_set(
        "decode",
        lua.create_function(move |lua, s: mlua::String| {
            let bytes = s.as_bytes();
            if bytes.len() >= 2 && (bytes[0] == 0 || bytes[1] == 0) {
                return Err(lua_error(
                    lua,
                    "JSON parser does not support UTF-16 or UTF-32",
                ));
            }
            let text = &bytes[..bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len())];
            let cfg = c.get();
            let mut p = Parser {
                s: text,
                i: 0,
                depth: 0,
                slots: 1,
                max_depth: cfg.decode_max_depth,
                invalid_numbers: cfg.decode_invalid,
            };
            p.document(lua).map_err(|e| lua_error(lua, &e))
        })?,
    )?;
    let c = cfg.clone();
    t.raw_set(
        "encode_max_depth",
        lua.create_function(move |lua, a: mlua::MultiValue| {
            let mut v = c.get();
            if let Some(n) = int_opt(lua, a.front(), 1, "encode_max_depth", 1, i32::MAX.into())? {
                v.encode_max_depth = n;
                c.set(v);
            }
            Ok(v.encode_max_depth as f64)
        })?,
    )?;
    let c = cfg.clone();
    t.raw_set(
        "decode_max_depth",
        lua.create_function(move |lua, a: mlua::MultiValue| {
            let mut v = c.get();
            if let Some(n) = int_opt(lua, a.front(), 1, "decode_max_depth", 1, i32::MAX.into())? {
                v.decode_max_depth = n;
                c.set(v);
            }
            Ok(v.decode_max_depth as f64)
        })?,
    )?;
    let c = cfg.clone();
    t.raw_set(
        "encode_number_precision",
        lua.create_function(move |lua, a: mlua::MultiValue| {
            let mut v = c.get();
            if let Some(n) = int_opt(lua, a.front(), 1, "encode_number_precision", 1, 14)? {
                v.precision = n;
                c.set(v);
            }
            Ok(v.precision as f64)
        })?,
    )?;
    let c = cfg.clone();
    t.raw_set(
        "encode_sparse_array",
        lua.create_function(move |lua, a: mlua::MultiValue| {
            let mut v = c.get();
            if let Some(b) = enum_opt(lua, a.front(), "encode_sparse_array", false)? {
                v.sparse_convert = b == 1;
            }
            if let Some(n) = int_opt(lua, a.get(1), 2, "encode_sparse_array", 0, i32::MAX.into())? {
                v.sparse_ratio = n;
            }
            if let Some(n) = int_opt(lua, a.get(2), 3, "encode_sparse_array", 0, i32::MAX.into())? {
                v.sparse_safe = n;
            }
            c.set(v);
            Ok((
                v.sparse_convert,
                v.sparse_ratio as f64,
                v.sparse_safe as f64,
            ))
        })?,
    )?;
    let c = cfg.clone();
    t.raw_set(
        "encode_invalid_numbers",
        lua.create_function(move |lua, a: mlua::MultiValue| {
            let mut v = c.get();
            if let Some(b) = enum_opt(lua, a.front(), "encode_invalid_numbers", true)? {
                v.encode_invalid = b;
                c.set(v);
            }
            Ok(match v.encode_invalid {
                0 => Value::Boolean(false),
                1 => Value::Boolean(true),
                _ => Value::String(lua.create_string("null")?),
            })
        })?,
    )?;
    let c = cfg.clone();
    t.raw_set(
        "decode_invalid_numbers",
        lua.create_function(move |lua, a: mlua::MultiValue| {
            let mut v = c.get();
            if let Some(b) = enum_opt(lua, a.front(), "decode_invalid_numbers", false)? {
                v.decode_invalid = b == 1;
                c.set(v);
            }
            Ok(v.decode_invalid)
        })?,
    )?;
    let c = cfg.clone();
    t.raw_set(
        "encode_keep_buffer",
        lua.create_function(move |lua, a: mlua::MultiValue| {
            // Only about reusing a buffer between calls in lua-cjson: nothing to observe.
            let mut v = c.get();
            if let Some(b) = enum_opt(lua, a.front(), "encode_keep_buffer", false)? {
                v.keep_buffer = b == 1;
                c.set(v);
            }
            Ok(v.keep_buffer)
        })?,
    )?;
    t.raw_set("null", Value::NULL)?;
    t.raw_set("_NAME", "cjson")?;
    t.raw_set("_VERSION", "2.1.0")?;
    Ok((t, Settings(cfg)))
}

/// C's `%.<prec>g`.
pub fn fmt_g(x: f64, prec: usize) -> String {
    if x.is_nan() {
        return if x.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf" } else { "inf" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let p = prec.max(1);
    let e = format!("{:.*e}", p - 1, x);
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let strip = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if exp < -4 || exp >= p as i32 {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", strip(mant), exp.abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        strip(&format!("{x:.decimals$}"))
    }
}

fn encode_string(s: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for &c in s {
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'/' => out.extend_from_slice(b"\\/"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            // Written in place: a `format!` per character made escaping a string of
            // control characters cost an allocation per byte.
            c if c < 0x20 || c == 0x7f => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(c >> 4)],
                    HEX[usize::from(c & 0xf)],
                ]);
            }
            c => out.push(c),
        }
    }
    out.push(b'"');
}

fn encode_number(n: f64, cfg: &Cfg, out: &mut Vec<u8>) -> Result<(), String> {
    if !n.is_finite() {
        match cfg.encode_invalid {
            0 => return Err("Cannot serialise number: must not be NaN or Inf".into()),
            1 => {
                out.extend_from_slice(fmt_g(n, 14).as_bytes());
                return Ok(());
            }
            _ => {
                out.extend_from_slice(b"null");
                return Ok(());
            }
        }
    }
    out.extend_from_slice(fmt_g(n, cfg.precision).as_bytes());
    Ok(())
}

/// Lua's stack limit for a C function (`LUAI_MAXCSTACK`). lua-cjson checks for stack room
/// (`lua_checkstack`) at every level, so besides `*_max_depth` Redis stops at the depth where
/// the stack would overflow: about 8000 nested arrays or 4000 objects. Relis counts the
/// slots lua-cjson would use and stops at the same depth, whatever a script sets the
/// maximum to, so its recursion stays bounded.
const LUA_STACK: usize = 8000;

/// What encoding may write: at most `room` bytes (the Lua state's free memory under
/// `lua-memory-limit`: the result must become a Lua string anyway, and the buffer must not
/// grow past it first).
struct Out<'a> {
    buf: &'a mut Vec<u8>,
    room: usize,
}

impl Out<'_> {
    fn check(&self) -> Result<(), String> {
        if self.buf.len() > self.room {
            return Err("not enough memory".into());
        }
        Ok(())
    }
}

/// Encodes `v`; `depth` tables enclose it, which use `slots` of lua-cjson's Lua stack.
fn encode(
    lua: &Lua,
    v: &Value,
    depth: usize,
    slots: usize,
    cfg: &Cfg,
    out: &mut Out<'_>,
) -> Result<(), String> {
    match v {
        Value::Nil => out.buf.extend_from_slice(b"null"),
        Value::LightUserData(p) if p.0.is_null() => out.buf.extend_from_slice(b"null"),
        Value::Boolean(b) => out
            .buf
            .extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Integer(n) => encode_number(*n as f64, cfg, out.buf)?,
        Value::Number(n) => encode_number(*n, cfg, out.buf)?,
        Value::String(s) => {
            encode_string(&s.as_bytes(), out.buf);
            out.check()?;
        }
        Value::Table(t) => {
            let depth = depth + 1;
            // json_check_encode_depth: the depth setting, and lua_checkstack(l, 3).
            if depth > cfg.encode_max_depth || slots + 3 > LUA_STACK {
                return Err(format!("Cannot serialise, excessive nesting ({depth})"));
            }
            // lua-cjson's lua_array_length: all keys positive integers -> an array. One
            // pass to decide and one to write, each holding only the current pair (a table
            // of a million entries is not copied out first).
            let mut max = 0usize;
            let mut items = 0usize;
            let mut array = true;
            for pair in super::convert::pairs(lua, t).map_err(|e| e.to_string())? {
                let (k, _) = pair.map_err(|e| e.to_string())?;
                match k {
                    Value::Integer(n) if n >= 1 => max = max.max(n as usize),
                    Value::Number(n) if n >= 1.0 && n.fract() == 0.0 => max = max.max(n as usize),
                    _ => {
                        array = false;
                        break;
                    }
                }
                items += 1;
            }
            if array
                && cfg.sparse_ratio > 0
                && max > items * cfg.sparse_ratio
                && max > cfg.sparse_safe
            {
                if !cfg.sparse_convert {
                    return Err("Cannot serialise table: excessively sparse array".into());
                }
                array = false;
            }
            if array && max > 0 {
                // Each hole is written as `null,`: a sparse array allowed by the settings
                // (`encode_sparse_array(false, 0)`) must still fit in memory, and no hook
                // interrupts this loop.
                if (max - items).saturating_mul(5) > out.room.saturating_sub(out.buf.len()) {
                    return Err("not enough memory".into());
                }
                out.buf.push(b'[');
                for i in 1..=max {
                    if i > 1 {
                        out.buf.push(b',');
                    }
                    let v: Value = t.raw_get(i).map_err(|e| e.to_string())?;
                    encode(lua, &v, depth, slots + 1, cfg, out)?;
                    out.check()?;
                }
                out.buf.push(b']');
            } else {
                out.buf.push(b'{');
                let pairs = super::convert::pairs(lua, t).map_err(|e| e.to_string())?;
                for (n, pair) in pairs.enumerate() {
                    let (k, val) = pair.map_err(|e| e.to_string())?;
                    if n > 0 {
                        out.buf.push(b',');
                    }
                    match k {
                        Value::String(s) => encode_string(&s.as_bytes(), out.buf),
                        Value::Integer(i) => {
                            encode_string(fmt_g(i as f64, cfg.precision).as_bytes(), out.buf)
                        }
                        Value::Number(f) => {
                            encode_string(fmt_g(f, cfg.precision).as_bytes(), out.buf)
                        }
                        _ => {
                            return Err(
                                "Cannot serialise table: table key must be a number or string"
                                    .into(),
                            )
                        }
                    }
                    out.buf.push(b':');
                    encode(lua, &val, depth, slots + 2, cfg, out)?;
                    out.check()?;
                }
                out.buf.push(b'}');
            }
        }
        other => {
            return Err(format!(
                "Cannot serialise {}: type not supported",
                other.type_name()
            ))
        }
    }
    Ok(())
}

struct Parser<'a> {
    /// The text up to its first NUL byte: lua-cjson reads a C string, where a NUL is the end.
    s: &'a [u8],
    i: usize,
    depth: usize,
    /// Lua stack slots lua-cjson would hold here (see [`LUA_STACK`]).
    slots: usize,
    max_depth: usize,
    /// `decode_invalid_numbers`: `Infinity`, `NaN`, hex, `+1` and leading zeros are numbers.
    invalid_numbers: bool,
}

/// A token, as lua-cjson's `json_next_token` reads one.
enum Token {
    ObjBegin,
    ObjEnd,
    ArrBegin,
    ArrEnd,
    Colon,
    Comma,
    End,
    Str(Vec<u8>),
    Num(f64),
    Bool(bool),
    Null,
    /// A token that is none of these: lua-cjson's reason for it.
    Error(&'static str),
}

impl Token {
    /// The token as lua-cjson's errors name it.
    fn name(&self) -> &'static str {
        match self {
            Token::ObjBegin => "T_OBJ_BEGIN",
            Token::ObjEnd => "T_OBJ_END",
            Token::ArrBegin => "T_ARR_BEGIN",
            Token::ArrEnd => "T_ARR_END",
            Token::Colon => "T_COLON",
            Token::Comma => "T_COMMA",
            Token::End => "T_END",
            Token::Str(_) => "T_STRING",
            Token::Num(_) => "T_NUMBER",
            Token::Bool(_) => "T_BOOLEAN",
            Token::Null => "T_NULL",
            Token::Error(why) => why,
        }
    }
}

impl Parser<'_> {
    fn error(&self, what: &str, token: &Token, at: usize) -> String {
        format!(
            "Expected {what} but found {} at character {}",
            token.name(),
            at + 1
        )
    }

    /// lua-cjson's `json_is_invalid_number`: a number JSON does not allow (`+`, hex, a
    /// leading zero, `inf`, `nan`) starts at `i`.
    fn invalid_number(&self, i: usize) -> bool {
        let mut p = i;
        match self.s.get(p) {
            Some(b'+') => return true,
            Some(b'-') => p += 1,
            _ => {}
        }
        match self.s.get(p) {
            Some(b'0') => {
                let c2 = self.s.get(p + 1).copied().unwrap_or(0);
                c2 | 0x20 == b'x' || c2.is_ascii_digit()
            }
            None => false,
            Some(c) if *c <= b'9' => false,
            _ => {
                let rest = &self.s[p..];
                rest.len() >= 3
                    && (rest[..3].eq_ignore_ascii_case(b"inf")
                        || rest[..3].eq_ignore_ascii_case(b"nan"))
            }
        }
    }

    /// The next token and where it starts (for an error inside a string: where the error is).
    fn next(&mut self) -> (Token, usize) {
        while matches!(self.s.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
        let at = self.i;
        let Some(&c) = self.s.get(self.i) else {
            return (Token::End, at);
        };
        let single = match c {
            b'{' => Some(Token::ObjBegin),
            b'}' => Some(Token::ObjEnd),
            b'[' => Some(Token::ArrBegin),
            b']' => Some(Token::ArrEnd),
            b':' => Some(Token::Colon),
            b',' => Some(Token::Comma),
            _ => None,
        };
        if let Some(t) = single {
            self.i += 1;
            return (t, at);
        }
        let rest = &self.s[self.i..];
        match c {
            b'"' => self.string(),
            b'-' | b'0'..=b'9' => {
                if !self.invalid_numbers && self.invalid_number(at) {
                    return (Token::Error("invalid number"), at);
                }
                self.number()
            }
            b't' if rest.starts_with(b"true") => {
                self.i += 4;
                (Token::Bool(true), at)
            }
            b'f' if rest.starts_with(b"false") => {
                self.i += 5;
                (Token::Bool(false), at)
            }
            b'n' if rest.starts_with(b"null") => {
                self.i += 4;
                (Token::Null, at)
            }
            b'+' | b'i' | b'I' | b'n' | b'N' if self.invalid_numbers && self.invalid_number(at) => {
                self.number()
            }
            _ => (Token::Error("invalid token"), at),
        }
    }

    fn number(&mut self) -> (Token, usize) {
        let at = self.i;
        match crate::args::strtod(&self.s[at..]) {
            (_, 0, _) => (Token::Error("invalid number"), at),
            (x, n, _) => {
                self.i += n;
                (Token::Num(x), at)
            }
        }
    }

    fn document(&mut self, lua: &Lua) -> Result<Value, String> {
        let (t, at) = self.next();
        let v = self.value(lua, t, at)?;
        match self.next() {
            (Token::End, _) => Ok(v),
            (t, at) => Err(self.error("the end", &t, at)),
        }
    }

    /// lua-cjson's `json_process_value` of `token`.
    fn value(&mut self, lua: &Lua, token: Token, at: usize) -> Result<Value, String> {
        let lerr = |e: mlua::Error| e.to_string();
        match token {
            Token::ObjBegin => {
                // json_decode_descend(l, json, 3): the table and a key stay on the stack.
                self.nest(3, 2)?;
                let t = lua.create_table().map_err(lerr)?;
                let (mut tok, mut at) = self.next();
                if !matches!(tok, Token::ObjEnd) {
                    loop {
                        let Token::Str(k) = tok else {
                            return Err(self.error("object key string", &tok, at));
                        };
                        let (colon, cat) = self.next();
                        if !matches!(colon, Token::Colon) {
                            return Err(self.error("colon", &colon, cat));
                        }
                        let (vt, vat) = self.next();
                        let v = self.value(lua, vt, vat)?;
                        t.raw_set(lua.create_string(&k).map_err(lerr)?, v)
                            .map_err(lerr)?;
                        let (sep, sat) = self.next();
                        match sep {
                            Token::ObjEnd => break,
                            Token::Comma => (tok, at) = self.next(),
                            sep => return Err(self.error("comma or object end", &sep, sat)),
                        }
                    }
                }
                self.leave(2);
                Ok(Value::Table(t))
            }
            Token::ArrBegin => {
                // json_decode_descend(l, json, 2): the table stays on the stack.
                self.nest(2, 1)?;
                let t = lua.create_table().map_err(lerr)?;
                let (mut tok, mut at) = self.next();
                if !matches!(tok, Token::ArrEnd) {
                    let mut n = 1;
                    loop {
                        let v = self.value(lua, tok, at)?;
                        t.raw_set(n, v).map_err(lerr)?;
                        n += 1;
                        let (sep, sat) = self.next();
                        match sep {
                            Token::ArrEnd => break,
                            Token::Comma => (tok, at) = self.next(),
                            sep => return Err(self.error("comma or array end", &sep, sat)),
                        }
                    }
                }
                self.leave(1);
                Ok(Value::Table(t))
            }
            Token::Str(s) => Ok(Value::String(lua.create_string(&s).map_err(lerr)?)),
            Token::Num(x) => Ok(Value::Number(x)),
            Token::Bool(b) => Ok(Value::Boolean(b)),
            Token::Null => Ok(Value::NULL),
            t => Err(self.error("value", &t, at)),
        }
    }

    /// Enters an array or object (its opening token read): lua-cjson checks for `need` free
    /// stack slots, then holds `hold` more while the level lasts.
    fn nest(&mut self, need: usize, hold: usize) -> Result<(), String> {
        self.depth += 1;
        if self.depth > self.max_depth || self.slots + need > LUA_STACK {
            return Err(format!(
                "Found too many nested data structures ({}) at character {}",
                self.depth, self.i
            ));
        }
        self.slots += hold;
        Ok(())
    }

    fn leave(&mut self, hold: usize) {
        self.depth -= 1;
        self.slots -= hold;
    }

    /// lua-cjson's `json_next_string_token`: an error is placed where it is found (the
    /// backslash of a bad escape, the end of the text).
    fn string(&mut self) -> (Token, usize) {
        let at = self.i;
        self.i += 1;
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.s.get(self.i) else {
                return (Token::Error("unexpected end of string"), self.i);
            };
            match c {
                b'"' => {
                    self.i += 1;
                    return (Token::Str(out), at);
                }
                b'\\' => {
                    let e = self.s.get(self.i + 1).copied().unwrap_or(0);
                    let plain = match e {
                        b'"' | b'\\' | b'/' => e,
                        b'b' => 0x08,
                        b'f' => 0x0c,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'u' => {
                            match self.unicode_escape() {
                                Some((cp, len)) => {
                                    let mut buf = [0u8; 4];
                                    let ch = char::from_u32(cp).unwrap_or('\0');
                                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                                    self.i += len;
                                }
                                None => {
                                    return (Token::Error("invalid unicode escape code"), self.i)
                                }
                            }
                            continue;
                        }
                        _ => return (Token::Error("invalid escape code"), self.i),
                    };
                    out.push(plain);
                    self.i += 2;
                }
                c => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
    }

    /// The code point of the `\uXXXX` (or surrogate pair) at the cursor and its length, as
    /// lua-cjson's `json_append_unicode_escape` accepts it.
    fn unicode_escape(&self) -> Option<(u32, usize)> {
        let hex4 = |at: usize| -> Option<u32> {
            let h = self.s.get(at..at + 4)?;
            if !h.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
        };
        let cp = hex4(self.i + 2)?;
        if cp & 0xf800 != 0xd800 {
            return Some((cp, 6));
        }
        if cp & 0x400 != 0 || self.s.get(self.i + 6..self.i + 8) != Some(b"\\u") {
            return None;
        }
        let lo = hex4(self.i + 8)?;
        if lo & 0xfc00 != 0xdc00 {
            return None;
        }
        Some((((cp & 0x3ff) << 10 | (lo & 0x3ff)) + 0x10000, 12))
    }
}

#[cfg(test)]
mod tests {
    use super::{encode_string, fmt_g};

    /// Every escape, as redis-server 7.0.15's `cjson.encode` writes it (bytes 0x80 and up
    /// go out raw).
    #[test]
    fn escapes_as_lua_cjson() {
        let mut out = Vec::new();
        encode_string(
            &[
                0, 1, 8, 9, 10, 11, 12, 13, 14, 26, 31, 32, b'"', b'\\', 47, 126, 127, 128, 255,
            ],
            &mut out,
        );
        assert_eq!(
            out,
            b"\"\\u0000\\u0001\\b\\t\\n\\u000b\\f\\r\\u000e\\u001a\\u001f \\\"\\\\\\/~\\u007f\x80\xff\""
        );
    }

    #[test]
    fn percent_g() {
        assert_eq!(fmt_g(1.0, 14), "1");
        assert_eq!(fmt_g(0.1, 14), "0.1");
        assert_eq!(fmt_g(1e20, 14), "1e+20");
        assert_eq!(fmt_g(123456789012345.0, 14), "1.2345678901234e+14");
        assert_eq!(fmt_g(0.00001, 14), "1e-05");
        assert_eq!(fmt_g(1.25, 14), "1.25");
        assert_eq!(fmt_g(-2.5, 14), "-2.5");
    }
}
