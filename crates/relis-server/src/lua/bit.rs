//! The `bit` library (LuaBitOp 1.0, which Redis vendors): 32-bit operations on Lua numbers.
//! Arguments are normalised as LuaBitOp does (the low word of `n + 2^52 + 2^51`: rounded and
//! taken modulo 2^32 for any number below 2^51, the mantissa's low bits past it); results are
//! signed 32-bit numbers.

use mlua::{Lua, MultiValue, Table, Value};

/// LuaBitOp's `barg`: a number to its 32-bit pattern.
fn bits(lua: &Lua, v: &Value, pos: usize, fname: &str) -> mlua::Result<u32> {
    let n = match v {
        Value::Integer(n) => *n as f64,
        Value::Number(n) => *n,
        Value::String(s) => match str2number(&s.as_bytes()) {
            Some(n) => n,
            None => return Err(bad(lua, pos, fname, v.type_name())),
        },
        _ => return Err(bad(lua, pos, fname, v.type_name())),
    };
    // The C code adds 2^52+2^51 and keeps the low word of the double.
    Ok((n + 6755399441055744.0).to_bits() as u32)
}

/// Lua 5.1's string-to-number conversion (`luaO_str2d`): a decimal number (C's `strtod`), or
/// a hexadecimal integer (`0x10`), with spaces around it.
pub(super) fn str2number(s: &[u8]) -> Option<f64> {
    let t = std::str::from_utf8(s).ok()?;
    let t = t.trim_matches(|c: char| c.is_ascii_whitespace());
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        if hex.is_empty() || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        let v = hex.bytes().fold(0f64, |a, c| {
            a * 16.0 + f64::from((c as char).to_digit(16).unwrap_or(0))
        });
        return Some(if neg { -v } else { v });
    }
    // strtod's words; Rust's parser takes these and the decimal forms.
    if t.is_empty() || t.bytes().any(|c| c == b'_') {
        return None;
    }
    t.parse::<f64>().ok()
}

fn bad(lua: &Lua, pos: usize, fname: &str, got: &str) -> mlua::Error {
    super::engine::lua_error(
        lua,
        &format!("bad argument #{pos} to '{fname}' (number expected, got {got})"),
    )
}

/// Argument `i` (0-based): an explicit nil is "got nil", a missing one "got no value".
fn arg(lua: &Lua, args: &MultiValue, i: usize, fname: &str) -> mlua::Result<u32> {
    match args.get(i) {
        Some(v) => bits(lua, v, i + 1, fname),
        None => Err(bad(lua, i + 1, fname, "no value")),
    }
}

fn ret(x: u32) -> f64 {
    f64::from(x as i32)
}

/// Builds the `bit` table.
///
/// # Errors
/// Lua memory errors.
pub fn library(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set(
        "tobit",
        lua.create_function(|lua, a: MultiValue| Ok(ret(arg(lua, &a, 0, "tobit")?)))?,
    )?;
    t.raw_set(
        "bnot",
        lua.create_function(|lua, a: MultiValue| Ok(ret(!arg(lua, &a, 0, "bnot")?)))?,
    )?;
    t.raw_set(
        "bswap",
        lua.create_function(|lua, a: MultiValue| Ok(ret(arg(lua, &a, 0, "bswap")?.swap_bytes())))?,
    )?;
    type Fold = fn(u32, u32) -> u32;
    let folds: [(&str, Fold); 3] = [
        ("band", |a, b| a & b),
        ("bor", |a, b| a | b),
        ("bxor", |a, b| a ^ b),
    ];
    for (name, op) in folds {
        t.raw_set(
            name,
            lua.create_function(move |lua, a: MultiValue| {
                let mut acc = arg(lua, &a, 0, name)?;
                for i in 1..a.len() {
                    acc = op(acc, arg(lua, &a, i, name)?);
                }
                Ok(ret(acc))
            })?,
        )?;
    }
    type Shift = fn(u32, u32) -> u32;
    let shifts: [(&str, Shift); 5] = [
        ("lshift", |x, n| x.wrapping_shl(n & 31)),
        ("rshift", |x, n| x.wrapping_shr(n & 31)),
        ("arshift", |x, n| ((x as i32) >> (n & 31)) as u32),
        ("rol", |x, n| x.rotate_left(n & 31)),
        ("ror", |x, n| x.rotate_right(n & 31)),
    ];
    for (name, op) in shifts {
        t.raw_set(
            name,
            lua.create_function(move |lua, a: MultiValue| {
                let x = arg(lua, &a, 0, name)?;
                let n = arg(lua, &a, 1, name)?;
                Ok(ret(op(x, n)))
            })?,
        )?;
    }
    t.raw_set(
        "tohex",
        lua.create_function(|lua, a: MultiValue| {
            let x = arg(lua, &a, 0, "tohex")?;
            let n = match a.get(1) {
                None => 8i32,
                Some(_) => arg(lua, &a, 1, "tohex")? as i32,
            };
            let upper = n < 0;
            let n = n.unsigned_abs().min(8) as usize;
            let s = if upper {
                format!("{x:08X}")
            } else {
                format!("{x:08x}")
            };
            Ok(s[8 - n..].to_string())
        })?,
    )?;
    Ok(t)
}
