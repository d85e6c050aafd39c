//! The `struct` library (Roberto Ierusalimschy's struct, which Redis vendors):
//! `struct.pack(fmt, ...)`, `struct.unpack(fmt, s [, pos])`, `struct.size(fmt)`.
//!
//! Format: `<` little endian, `>` big endian, `=` native (little), `![n]` maximum alignment
//! (a power of 2, default 8 with `!` alone, none without), `x` a padding byte, `b`/`B`
//! signed/unsigned char, `h`/`H` short, `l`/`L` long (8 bytes), `T` size_t (8), `i[n]`/`I[n]`
//! int of n bytes (4 by default, at most 32), `f` float, `d` double, `s` zero-terminated
//! string, `c[n]` n characters (`c0`: the whole string when packing; when unpacking, the
//! length is the previous value, which it replaces).
//!
//! Sizes and offsets are checked as lua_struct.c checks them (`integral size overflow` past
//! 2^31, `data string too short`, `too many results` past Lua's stack), so a hostile format
//! or offset is an error, never a huge allocation or an overflow.

use super::convert::{c_i64, TWO_63};
use super::engine::lua_error;
use mlua::{Lua, MultiValue, Table, Value};

/// lua_struct.c's `MAXINTSIZE`.
const MAX_INT_SIZE: usize = 32;
/// `MAXALIGN` (`!` without a number).
const MAX_ALIGN: usize = 8;
/// Lua's stack limit for a C function (`LUAI_MAXCSTACK`).
const LUA_STACK: usize = 8000;

/// A failure: a positioned `luaL_error`, or a `luaL_argerror` for argument `n` (which names
/// the function).
enum Fail {
    Error(String),
    Arg(usize, String),
}

impl Fail {
    fn raise(self, lua: &Lua, fname: &str) -> mlua::Error {
        match self {
            Fail::Error(m) => lua_error(lua, &m),
            Fail::Arg(n, m) => lua_error(lua, &format!("bad argument #{n} to '{fname}' ({m})")),
        }
    }
}

struct Fmt<'a> {
    f: &'a [u8],
    i: usize,
    little: bool,
    align: usize,
}

impl Fmt<'_> {
    /// `getnum`: a decimal number at the cursor, or `df` when there is none.
    fn getnum(&mut self, df: usize) -> Result<usize, Fail> {
        if !self.f.get(self.i).is_some_and(u8::is_ascii_digit) {
            return Ok(df);
        }
        let mut a: usize = 0;
        while let Some(&c) = self.f.get(self.i).filter(|c| c.is_ascii_digit()) {
            let d = usize::from(c - b'0');
            if a > i32::MAX as usize / 10 || a * 10 > i32::MAX as usize - d {
                return Err(Fail::Error("integral size overflow".into()));
            }
            a = a * 10 + d;
            self.i += 1;
        }
        Ok(a)
    }

    /// `optsize`: the size of option `opt` (0 for the others).
    fn optsize(&mut self, opt: u8) -> Result<usize, Fail> {
        Ok(match opt {
            b'B' | b'b' | b'x' => 1,
            b'H' | b'h' => 2,
            b'L' | b'l' | b'T' | b'd' => 8,
            b'f' => 4,
            b'c' => self.getnum(1)?,
            b'i' | b'I' => {
                let sz = self.getnum(4)?;
                if sz > MAX_INT_SIZE {
                    return Err(Fail::Error(format!(
                        "integral size {sz} is larger than limit of {MAX_INT_SIZE}"
                    )));
                }
                sz
            }
            _ => 0,
        })
    }

    /// `gettoalign`: padding before an item of `size` at `len` (C's formula, sizes that are
    /// not powers of two included).
    fn toalign(&self, len: usize, opt: u8, size: usize) -> usize {
        if size == 0 || opt == b'c' {
            return 0;
        }
        let size = size.min(self.align);
        (size.wrapping_sub(len & (size - 1))) & (size - 1)
    }

    /// `controloptions`: endianness, alignment, spaces; anything else is an invalid option.
    fn control(&mut self, opt: u8) -> Result<(), Fail> {
        match opt {
            b' ' => {}
            b'>' => self.little = false,
            b'<' | b'=' => self.little = true,
            b'!' => {
                let a = self.getnum(MAX_ALIGN)?;
                if !a.is_power_of_two() {
                    return Err(Fail::Error(format!("alignment {a} is not a power of 2")));
                }
                self.align = a;
            }
            other => {
                return Err(Fail::Arg(
                    1,
                    format!("invalid format option '{}'", other as char),
                ))
            }
        }
        Ok(())
    }

    fn next_opt(&mut self) -> Option<u8> {
        let c = *self.f.get(self.i)?;
        self.i += 1;
        Some(c)
    }
}

fn fmt(f: &[u8]) -> Fmt<'_> {
    Fmt {
        f,
        i: 0,
        little: true,
        align: 1,
    }
}

fn num(lua: &Lua, v: Option<&Value>, pos: usize) -> mlua::Result<f64> {
    match v {
        Some(Value::Integer(n)) => Ok(*n as f64),
        Some(Value::Number(n)) => Ok(*n),
        Some(Value::String(s)) => {
            super::bit::str2number(&s.as_bytes()).ok_or_else(|| bad(lua, pos, "number", v))
        }
        _ => Err(bad(lua, pos, "number", v)),
    }
}

fn bad(lua: &Lua, pos: usize, want: &str, v: Option<&Value>) -> mlua::Error {
    let got = v.map_or("no value", |v| v.type_name());
    lua_error(
        lua,
        &format!(
            "bad argument #{pos} to '{}' ({want} expected, got {got})",
            fname(lua)
        ),
    )
}

/// String argument `i` (0-based), as `luaL_checklstring` takes it (a number becomes its
/// `%.14g` text).
fn string_arg(lua: &Lua, args: &MultiValue, i: usize) -> mlua::Result<Vec<u8>> {
    match args.get(i) {
        Some(Value::String(s)) => Ok(s.as_bytes().to_vec()),
        Some(Value::Integer(n)) => Ok(super::cjson::fmt_g(*n as f64, 14).into_bytes()),
        Some(Value::Number(n)) => Ok(super::cjson::fmt_g(*n, 14).into_bytes()),
        v => Err(bad(lua, i + 1, "string", v)),
    }
}

/// Argument `i` (0-based) of `struct.pack`: b_pack pushes a nil after its arguments (a mark
/// before its buffer), so the first missing one is a nil, not "no value".
fn pack_arg(args: &MultiValue, i: usize) -> Option<&Value> {
    if i == args.len() {
        Some(&Value::Nil)
    } else {
        args.get(i)
    }
}

/// The name `luaL_argerror` gives the running function: its name in the calling Lua code
/// (`struct.unpack(...)` -> `unpack`), `?` when a C function called it (`pcall`).
fn fname(lua: &Lua) -> String {
    lua.inspect_stack(0, |d| d.names().name.map(|n| n.into_owned()))
        .flatten()
        .unwrap_or_else(|| "?".into())
}

/// C's `(Uinttype)(Inttype)n` for a negative `n`, `(Uinttype)n` otherwise, as x86-64 code
/// computes them (an unsigned conversion of 2^63 and more subtracts 2^63 first).
fn to_bits(n: f64) -> u64 {
    if n < 0.0 || n.is_nan() {
        c_i64(n) as u64
    } else if n < TWO_63 {
        n as u64
    } else {
        (c_i64(n - TWO_63) as u64) ^ (1 << 63)
    }
}

fn pack(lua: &Lua, args: &MultiValue) -> mlua::Result<Vec<u8>> {
    let name = || fname(lua);
    let f = string_arg(lua, args, 0)?;
    let mut fm = fmt(&f);
    let room = super::engine::room(lua);
    let mut out: Vec<u8> = Vec::new();
    let mut arg = 2;
    while let Some(opt) = fm.next_opt() {
        let mut size = fm.optsize(opt).map_err(|e| e.raise(lua, &name()))?;
        let pad = fm.toalign(out.len(), opt, size);
        out.resize(out.len() + pad, 0);
        match opt {
            b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                let mut v = to_bits(num(lua, pack_arg(args, arg - 1), arg)?);
                arg += 1;
                let mut b = vec![0u8; size];
                for byte in b.iter_mut() {
                    *byte = (v & 0xff) as u8;
                    v >>= 8;
                }
                if !fm.little {
                    b.reverse();
                }
                out.extend_from_slice(&b);
            }
            b'x' => out.push(0),
            b'f' | b'd' => {
                let n = num(lua, pack_arg(args, arg - 1), arg)?;
                arg += 1;
                let mut b = if opt == b'f' {
                    (n as f32).to_le_bytes().to_vec()
                } else {
                    n.to_le_bytes().to_vec()
                };
                if !fm.little {
                    b.reverse();
                }
                out.extend_from_slice(&b);
            }
            b'c' | b's' => {
                let s = match pack_arg(args, arg - 1) {
                    Some(Value::String(s)) => s.as_bytes().to_vec(),
                    // As `luaL_checklstring` makes a number a string: `%.14g`.
                    Some(Value::Integer(n)) => super::cjson::fmt_g(*n as f64, 14).into_bytes(),
                    Some(Value::Number(n)) => super::cjson::fmt_g(*n, 14).into_bytes(),
                    v => return Err(bad(lua, arg, "string", v)),
                };
                arg += 1;
                if size == 0 {
                    size = s.len();
                }
                if s.len() < size {
                    // luaL_argcheck after `arg++`: the number of the next argument.
                    return Err(Fail::Arg(arg, "string too short".into()).raise(lua, &name()));
                }
                out.extend_from_slice(&s[..size]);
                if opt == b's' {
                    out.push(0);
                }
            }
            other => fm.control(other).map_err(|e| e.raise(lua, &name()))?,
        }
        if out.len() > room {
            return Err(lua_error(lua, "not enough memory"));
        }
    }
    Ok(out)
}

/// lua_struct.c's `getinteger`: the last 8 bytes read count (a 64-bit accumulator), and the
/// sign mask is `~0 << (size*8 - 1)` with x86-64's shift (count modulo 64), as Redis runs it.
fn getinteger(b: &[u8], little: bool, signed: bool) -> f64 {
    let mut l: u64 = 0;
    let mut push = |byte: u8| l = (l << 8) | u64::from(byte);
    if little {
        b.iter().rev().copied().for_each(&mut push);
    } else {
        b.iter().copied().for_each(&mut push);
    }
    if !signed {
        return l as f64;
    }
    let shift = ((b.len() * 8).wrapping_sub(1) % 64) as u32;
    let mask = !0u64 << shift;
    if l & mask != 0 {
        l |= mask;
    }
    l as i64 as f64
}

fn unpack(
    lua: &Lua,
    f: &[u8],
    data: &[u8],
    init: Option<f64>,
    nargs: usize,
) -> mlua::Result<MultiValue> {
    let name = || fname(lua);
    // luaL_optinteger (truncation) then `(size_t)`: a negative offset wraps around to a huge
    // one, which no data string is long enough for.
    let init = init.map_or(1, c_i64);
    if init == 0 {
        return Err(Fail::Arg(3, "offset must be 1 or greater".into()).raise(lua, &name()));
    }
    let mut pos = (init as usize).wrapping_sub(1);
    let ld = data.len();
    let mut fm = fmt(f);
    let mut out: Vec<Value> = Vec::new();
    let short = |lua: &Lua| Fail::Arg(2, "data string too short".into()).raise(lua, &name());
    while let Some(opt) = fm.next_opt() {
        let mut size = fm.optsize(opt).map_err(|e| e.raise(lua, &name()))?;
        pos = pos.wrapping_add(fm.toalign(pos, opt, size));
        if !(size <= ld && pos <= ld - size) {
            return Err(short(lua));
        }
        // luaL_checkstack(L, 2, "too many results"): the item and the next position, on a
        // stack holding the arguments and the results so far; mlua needs four slots more
        // to return them (Redis returns up to 7997 values with two arguments, Relis 7994).
        if nargs + out.len() + 2 + 4 > LUA_STACK {
            return Err(lua_error(lua, "stack overflow (too many results)"));
        }
        match opt {
            b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                let n = getinteger(&data[pos..pos + size], fm.little, opt.is_ascii_lowercase());
                out.push(Value::Number(n));
            }
            b'x' => {}
            b'f' | b'd' => {
                let mut le = data[pos..pos + size].to_vec();
                if !fm.little {
                    le.reverse();
                }
                let n = if size == 4 {
                    f64::from(f32::from_le_bytes([le[0], le[1], le[2], le[3]]))
                } else {
                    let mut a = [0u8; 8];
                    a.copy_from_slice(&le);
                    f64::from_le_bytes(a)
                };
                out.push(Value::Number(n));
            }
            b'c' => {
                if size == 0 {
                    // The previous value is the size, and this string replaces it.
                    let Some(Value::Number(n)) = out.pop() else {
                        return Err(lua_error(lua, "format 'c0' needs a previous size"));
                    };
                    size = to_bits(n) as usize;
                    if !(size <= ld && pos <= ld - size) {
                        return Err(short(lua));
                    }
                }
                out.push(Value::String(lua.create_string(&data[pos..pos + size])?));
            }
            b's' => {
                let Some(end) = data[pos..].iter().position(|&c| c == 0) else {
                    return Err(lua_error(lua, "unfinished string in data"));
                };
                out.push(Value::String(lua.create_string(&data[pos..pos + end])?));
                size = end + 1;
            }
            other => fm.control(other).map_err(|e| e.raise(lua, &name()))?,
        }
        pos = pos.wrapping_add(size);
    }
    out.push(Value::Number(pos.wrapping_add(1) as f64));
    Ok(out.into_iter().collect())
}

fn size(lua: &Lua, f: &[u8]) -> mlua::Result<f64> {
    let name = || fname(lua);
    let mut fm = fmt(f);
    let mut pos = 0usize;
    while let Some(opt) = fm.next_opt() {
        let size = fm.optsize(opt).map_err(|e| e.raise(lua, &name()))?;
        pos = pos.wrapping_add(fm.toalign(pos, opt, size));
        if opt == b's' {
            return Err(Fail::Arg(1, "option 's' has no fixed size".into()).raise(lua, &name()));
        }
        if opt == b'c' && size == 0 {
            return Err(Fail::Arg(1, "option 'c0' has no fixed size".into()).raise(lua, &name()));
        }
        // Letters without a size (an unknown one) count for nothing, as in lua_struct.c.
        if !opt.is_ascii_alphanumeric() {
            fm.control(opt).map_err(|e| e.raise(lua, &name()))?;
        }
        pos = pos.wrapping_add(size);
    }
    Ok(pos as f64)
}

/// Builds the `struct` table.
///
/// # Errors
/// Lua memory errors.
pub fn library(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set(
        "pack",
        lua.create_function(|lua, args: MultiValue| Ok(mlua::BString::from(pack(lua, &args)?)))?,
    )?;
    t.raw_set(
        "unpack",
        lua.create_function(|lua, args: MultiValue| {
            let f = string_arg(lua, &args, 0)?;
            let data = string_arg(lua, &args, 1)?;
            let init = match args.get(2) {
                None | Some(Value::Nil) => None,
                v => Some(num(lua, v, 3)?),
            };
            unpack(lua, &f, &data, init, args.len())
        })?,
    )?;
    t.raw_set(
        "size",
        lua.create_function(|lua, args: MultiValue| size(lua, &string_arg(lua, &args, 0)?))?,
    )?;
    Ok(t)
}

/// The library's hostile-input paths, for the fuzz target: `struct.unpack(fmt, data)` and
/// `struct.size(fmt)` on arbitrary bytes (errors are fine, panics are not).
#[doc(hidden)]
pub fn fuzz(lua: &Lua, f: &[u8], data: &[u8]) {
    let _ = unpack(lua, f, data, None, 2);
    let _ = size(lua, f);
}
