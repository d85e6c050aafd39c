//! The `bit` library (LuaBitOp 1.0, which Redis vendors): 32-bit operations on Lua numbers.
//! Arguments are normalised as LuaBitOp does (rounded, taken modulo 2^32, as signed 32-bit);
//! results are signed 32-bit numbers.

use mlua::{Lua, MultiValue, Table, Value};

/// LuaBitOp's `barg`: a number to its 32-bit pattern.
fn bits(lua: &Lua, v: &Value, pos: usize, fname: &str) -> mlua::Result<u32> {
    let n = match v {
        Value::Integer(n) => *n as f64,
        Value::Number(n) => *n,
        Value::String(s) => match s.to_str().ok().and_then(|s| s.trim().parse::<f64>().ok()) {
            Some(n) => n,
            None => return Err(bad(lua, pos, fname, v)),
        },
        _ => return Err(bad(lua, pos, fname, v)),
    };
    // The C code adds 2^52+2^51 and keeps the low word: round half to even, modulo 2^32.
    let r = n.round_ties_even();
    if !r.is_finite() {
        return Ok(0);
    }
    Ok(r.rem_euclid(4294967296.0) as u64 as u32)
}

fn bad(lua: &Lua, pos: usize, fname: &str, v: &Value) -> mlua::Error {
    let got = if matches!(v, Value::Nil) {
        "no value".to_string()
    } else {
        v.type_name().to_string()
    };
    super::engine::lua_error(
        lua,
        &format!("bad argument #{pos} to '{fname}' (number expected, got {got})"),
    )
}

fn arg(lua: &Lua, args: &MultiValue, i: usize, fname: &str) -> mlua::Result<u32> {
    bits(lua, args.get(i).unwrap_or(&Value::Nil), i + 1, fname)
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
                None | Some(Value::Nil) => 8i32,
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
