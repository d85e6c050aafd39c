//! The `cmsgpack` library (lua-cmsgpack 0.4, which Redis vendors): `cmsgpack.pack(...)`,
//! `cmsgpack.unpack(s)`, `cmsgpack.unpack_one(s [, offset])`, `cmsgpack.unpack_limit(s, limit
//! [, offset])`, with lua-cmsgpack's encoding choices: integral numbers as the smallest
//! integer format, other numbers as float 32 when exact else float 64, strings as str8/16/32,
//! a table whose keys are exactly 1..n as an array (the empty table too), any other table as a
//! map, nesting deeper than 16 and unsupported types as nil.
//!
//! Decoding stops where lua-cmsgpack's Lua stack would overflow (`luaL_checkstack`), with its
//! errors: about 4000 nested arrays or maps, 7999 values returned at once.

use super::engine::lua_error;
use mlua::{Lua, MultiValue, Table, Value};

const MAX_NESTING: usize = 16;

/// Lua's stack limit for a C function (`LUAI_MAXCSTACK`).
const LUA_STACK: usize = 8000;

/// Builds the `cmsgpack` table.
///
/// # Errors
/// Lua memory errors.
pub fn library(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set(
        "pack",
        lua.create_function(|lua, args: MultiValue| {
            if args.is_empty() {
                return Err(lua_error(
                    lua,
                    "bad argument #0 to 'pack' (MessagePack pack needs input.)",
                ));
            }
            // mp_pack's lua_checkstack(L, nargs), on a stack holding the nargs arguments.
            if 2 * args.len() > LUA_STACK {
                return Err(lua_error(
                    lua,
                    "bad argument #0 to 'pack' (Too many arguments for MessagePack pack.)",
                ));
            }
            let mut out = Vec::new();
            let room = super::engine::room(lua);
            for v in args.iter() {
                encode(lua, v, 0, &mut out, room).map_err(|e| lua_error(lua, e))?;
            }
            Ok(mlua::BString::from(out))
        })?,
    )?;
    t.raw_set(
        "unpack",
        lua.create_function(|lua, s: mlua::String| {
            let b = s.as_bytes();
            let mut d = Decoder {
                s: &b,
                i: 0,
                slots: 1,
            };
            let mut out = MultiValue::new();
            while d.i < d.s.len() {
                d.room_for_result().map_err(|e| fail(lua, e))?;
                let v = d.value(lua).map_err(|e| fail(lua, e))?;
                d.slots += 1;
                out.push_back(v);
            }
            Ok(out)
        })?,
    )?;
    t.raw_set(
        "unpack_one",
        lua.create_function(|lua, (s, offset): (mlua::String, Option<i64>)| {
            let args = 1 + usize::from(offset.is_some());
            unpack_limited(lua, &s.as_bytes(), 1, offset.unwrap_or(0), args)
        })?,
    )?;
    t.raw_set(
        "unpack_limit",
        lua.create_function(
            |lua, (s, limit, offset): (mlua::String, i64, Option<i64>)| {
                let args = 2 + usize::from(offset.is_some());
                unpack_limited(lua, &s.as_bytes(), limit, offset.unwrap_or(0), args)
            },
        )?,
    )?;
    t.raw_set("_NAME", "cmsgpack")?;
    t.raw_set("_VERSION", "lua-cmsgpack 0.4.0")?;
    Ok(t)
}

/// `unpack_one` / `unpack_limit`: the offset after the values (-1 at the end), then the values.
/// `args`: how many arguments the call had (they are on lua-cmsgpack's stack).
fn unpack_limited(
    lua: &Lua,
    s: &[u8],
    limit: i64,
    offset: i64,
    args: usize,
) -> mlua::Result<MultiValue> {
    if offset < 0 || limit < 0 {
        return Err(lua_error(
            lua,
            &format!("Invalid request to unpack with offset of {offset} and limit of {limit}."),
        ));
    }
    let offset = offset as usize;
    if offset > s.len() {
        return Err(lua_error(
            lua,
            &format!(
                "Start offset {offset} greater than input length {}.",
                s.len()
            ),
        ));
    }
    let mut d = Decoder {
        s,
        i: offset,
        slots: args,
    };
    let mut vals = Vec::new();
    while d.i < s.len() && (limit == 0 || (vals.len() as i64) < limit) {
        d.room_for_result().map_err(|e| fail(lua, e))?;
        vals.push(d.value(lua).map_err(|e| fail(lua, e))?);
        d.slots += 1;
    }
    let next = if d.i >= s.len() { -1 } else { d.i as i64 };
    let mut out = MultiValue::new();
    out.push_back(Value::Number(next as f64));
    out.extend(vals);
    Ok(out)
}

fn encode_int(n: i64, out: &mut Vec<u8>) {
    if n >= 0 {
        if n <= 127 {
            out.push(n as u8);
        } else if n <= 0xff {
            out.extend_from_slice(&[0xcc, n as u8]);
        } else if n <= 0xffff {
            out.push(0xcd);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        } else if n <= 0xffff_ffff {
            out.push(0xce);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        } else {
            out.push(0xcf);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    } else if n >= -32 {
        out.push(n as i8 as u8);
    } else if n >= -128 {
        out.extend_from_slice(&[0xd0, n as i8 as u8]);
    } else if n >= -32768 {
        out.push(0xd1);
        out.extend_from_slice(&(n as i16).to_be_bytes());
    } else if n >= -2147483648 {
        out.push(0xd2);
        out.extend_from_slice(&(n as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn encode_number(n: f64, out: &mut Vec<u8>) {
    if n.is_finite() && n.fract() == 0.0 && n >= i64::MIN as f64 && n < i64::MAX as f64 {
        encode_int(n as i64, out);
    } else if f64::from(n as f32) == n {
        // (`d == (double)f`, as lua-cmsgpack tests it: false for NaN, which goes as a double.)
        out.push(0xca);
        out.extend_from_slice(&(n as f32).to_be_bytes());
    } else {
        out.push(0xcb);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn encode_len(len: usize, small: u8, small_max: usize, codes: [u8; 2], out: &mut Vec<u8>) {
    if len <= small_max {
        out.push(small | len as u8);
    } else if len <= 0xffff {
        out.push(codes[0]);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(codes[1]);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
}

/// Encodes `v` at nesting `depth`; `room` bounds the buffer (see `engine::room`).
fn encode(
    lua: &Lua,
    v: &Value,
    depth: usize,
    out: &mut Vec<u8>,
    room: usize,
) -> Result<(), &'static str> {
    match v {
        Value::Boolean(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Integer(n) => encode_int(*n, out),
        Value::Number(n) => encode_number(*n, out),
        Value::String(s) => {
            let b = s.as_bytes();
            let len = b.len();
            if len < 32 {
                out.push(0xa0 | len as u8);
            } else if len <= 0xff {
                out.extend_from_slice(&[0xd9, len as u8]);
            } else if len <= 0xffff {
                out.push(0xda);
                out.extend_from_slice(&(len as u16).to_be_bytes());
            } else {
                out.push(0xdb);
                out.extend_from_slice(&(len as u32).to_be_bytes());
            }
            if out.len() + len > room {
                return Err(NO_MEMORY);
            }
            out.extend_from_slice(&b);
        }
        Value::Table(t) if depth < MAX_NESTING => {
            // lua-cmsgpack's table_is_an_array: keys exactly 1..n. One pass to decide and
            // one to write, each holding only the current pair.
            let mut count = 0usize;
            let mut max = 0usize;
            let mut array = true;
            for pair in super::convert::pairs(lua, t).map_err(|_| NO_MEMORY)? {
                let (k, _) = pair.map_err(|_| BAD_TABLE)?;
                count += 1;
                let n = match k {
                    Value::Integer(n) if n > 0 => n as usize,
                    Value::Number(n) if n > 0.0 && n.fract() == 0.0 => n as usize,
                    _ => {
                        array = false;
                        continue;
                    }
                };
                max = max.max(n);
            }
            if array && max == count {
                encode_len(max, 0x90, 15, [0xdc, 0xdd], out);
                for i in 1..=max {
                    let v = t.raw_get::<Value>(i).map_err(|_| BAD_TABLE)?;
                    encode(lua, &v, depth + 1, out, room)?;
                }
            } else {
                encode_len(count, 0x80, 15, [0xde, 0xdf], out);
                for pair in super::convert::pairs(lua, t).map_err(|_| NO_MEMORY)? {
                    let (k, v) = pair.map_err(|_| BAD_TABLE)?;
                    encode(lua, &k, depth + 1, out, room)?;
                    encode(lua, &v, depth + 1, out, room)?;
                }
            }
            if out.len() > room {
                return Err(NO_MEMORY);
            }
        }
        _ => out.push(0xc0),
    }
    Ok(())
}

/// A decoding error as Lua raises it: Lua's own `table index is nil` from `lua_settable`
/// carries no position (a C function is running), lua-cmsgpack's `luaL_error`s do.
fn fail(lua: &Lua, e: &'static str) -> mlua::Error {
    if e.starts_with("table index is") {
        super::engine::plain_error(e)
    } else {
        lua_error(lua, e)
    }
}

/// The message of a Lua memory error.
const NO_MEMORY: &str = "not enough memory";
/// A table that changed while it was encoded (its iteration failed).
const BAD_TABLE: &str = "invalid key to 'next'";

struct Decoder<'a> {
    s: &'a [u8],
    i: usize,
    /// Lua stack slots lua-cmsgpack would hold here (the arguments, the values decoded so
    /// far, two per open array or map).
    slots: usize,
}

const MISSING: &str = "Missing bytes in input.";
const BAD: &str = "Bad data format in input.";

impl Decoder<'_> {
    /// mp_unpack_full's `luaL_checkstack(L, 1, ...)` before each returned value. mlua keeps
    /// one more slot of a Rust function's stack for itself, so Relis returns at most 7998
    /// values where Redis returns 7999.
    fn room_for_result(&self) -> Result<(), &'static str> {
        if self.slots + 2 > LUA_STACK {
            return Err(
                "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)",
            );
        }
        Ok(())
    }

    /// Enters an array or map: lua-cmsgpack checks for room for the table and an index or
    /// key (`luaL_checkstack`), which stay on the stack while the level lasts.
    fn enter(&mut self, what: &'static str) -> Result<(), &'static str> {
        if self.slots + 2 > LUA_STACK {
            return Err(what);
        }
        self.slots += 2;
        Ok(())
    }

    fn take(&mut self, n: usize) -> Result<&[u8], &'static str> {
        if self.s.len() - self.i < n {
            return Err(MISSING);
        }
        let out = &self.s[self.i..self.i + n];
        self.i += n;
        Ok(out)
    }

    fn uint(&mut self, n: usize) -> Result<u64, &'static str> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |a, &b| (a << 8) | u64::from(b)))
    }

    fn value(&mut self, lua: &Lua) -> Result<Value, &'static str> {
        let c = self.take(1)?[0];
        let str_of = |d: &mut Self, n: usize| -> Result<Value, &'static str> {
            let b = d.take(n)?;
            lua.create_string(b)
                .map(Value::String)
                .map_err(|_| NO_MEMORY)
        };
        Ok(match c {
            0x00..=0x7f => Value::Number(f64::from(c)),
            0x80..=0x8f => self.map(lua, usize::from(c & 0x0f))?,
            0x90..=0x9f => self.array(lua, usize::from(c & 0x0f))?,
            0xa0..=0xbf => str_of(self, usize::from(c & 0x1f))?,
            0xc0 => Value::Nil,
            0xc2 => Value::Boolean(false),
            0xc3 => Value::Boolean(true),
            0xd9 => {
                let n = self.uint(1)? as usize;
                str_of(self, n)?
            }
            0xda => {
                let n = self.uint(2)? as usize;
                str_of(self, n)?
            }
            0xdb => {
                let n = self.uint(4)? as usize;
                str_of(self, n)?
            }
            0xca => Value::Number(f64::from(f32::from_bits(self.uint(4)? as u32))),
            0xcb => Value::Number(f64::from_bits(self.uint(8)?)),
            0xcc => Value::Number(self.uint(1)? as f64),
            0xcd => Value::Number(self.uint(2)? as f64),
            0xce => Value::Number(self.uint(4)? as f64),
            0xcf => Value::Number(self.uint(8)? as f64),
            0xd0 => Value::Number(f64::from(self.uint(1)? as u8 as i8)),
            0xd1 => Value::Number(f64::from(self.uint(2)? as u16 as i16)),
            0xd2 => Value::Number(f64::from(self.uint(4)? as u32 as i32)),
            0xd3 => Value::Number(self.uint(8)? as i64 as f64),
            0xdc => {
                let n = self.uint(2)? as usize;
                self.array(lua, n)?
            }
            0xdd => {
                let n = self.uint(4)? as usize;
                self.array(lua, n)?
            }
            0xde => {
                let n = self.uint(2)? as usize;
                self.map(lua, n)?
            }
            0xdf => {
                let n = self.uint(4)? as usize;
                self.map(lua, n)?
            }
            0xe0..=0xff => Value::Number(f64::from(c as i8)),
            // bin 8/16/32 (0xc4-0xc6), ext and fixext too: lua-cmsgpack 0.4 knows none.
            _ => return Err(BAD),
        })
    }

    fn array(&mut self, lua: &Lua, n: usize) -> Result<Value, &'static str> {
        self.enter("stack overflow (in function mp_decode_to_lua_array)")?;
        let t = lua.create_table().map_err(|_| NO_MEMORY)?;
        for i in 1..=n {
            let v = self.value(lua)?;
            t.raw_set(i, v).map_err(|_| NO_MEMORY)?;
        }
        self.slots -= 2;
        Ok(Value::Table(t))
    }

    fn map(&mut self, lua: &Lua, n: usize) -> Result<Value, &'static str> {
        self.enter("stack overflow (in function mp_decode_to_lua_hash)")?;
        let t = lua.create_table().map_err(|_| NO_MEMORY)?;
        for _ in 0..n {
            let k = self.value(lua)?;
            let v = self.value(lua)?;
            // lua_settable refuses nil and NaN keys, and so the whole unpack fails.
            match &k {
                Value::Nil => return Err("table index is nil"),
                Value::Number(x) if x.is_nan() => return Err("table index is NaN"),
                _ => {}
            }
            t.raw_set(k, v).map_err(|_| NO_MEMORY)?;
        }
        self.slots -= 2;
        Ok(Value::Table(t))
    }
}
