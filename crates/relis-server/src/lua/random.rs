//! `math.random` and `math.randomseed` as Redis 7.0 replaces them: Lua 5.1's functions over
//! Redis's `redisLrand48` (drand48's generator: x = (0x5DEECE66D x + 11) mod 2^48, 31 bits
//! out), seeded as drand48 is by default and never reset between scripts. A script therefore
//! sees the numbers redis-server would give it after the same calls, and `math.randomseed(n)`
//! starts the same sequence as there.

use mlua::{Lua, MultiValue, Table, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

const MULTIPLIER: u64 = 0x5_DEEC_E66D;
const ADDEND: u64 = 0xB;
const MASK: u64 = (1 << 48) - 1;
/// drand48's state before any seeding.
const DEFAULT_STATE: u64 = 0x1234_ABCD_330E;
/// `REDIS_LRAND48_MAX`.
const LRAND48_MAX: u64 = i32::MAX as u64;

/// The generator's next 31-bit value.
fn next(state: &AtomicU64) -> u64 {
    let x = (state.load(Ordering::Relaxed).wrapping_mul(MULTIPLIER) + ADDEND) & MASK;
    state.store(x, Ordering::Relaxed);
    x >> 17
}

/// `luaL_checkint`: a number (or a string that is one), truncated to a C int.
fn check_int(lua: &Lua, args: &MultiValue, i: usize, fname: &str) -> mlua::Result<i32> {
    let v = args.get(i).unwrap_or(&Value::Nil);
    let n = match v {
        Value::Integer(n) => Some(*n as f64),
        Value::Number(n) => Some(*n),
        Value::String(s) => s.to_str().ok().and_then(|s| s.trim().parse::<f64>().ok()),
        _ => None,
    }
    .map(Ok)
    .unwrap_or_else(|| {
        let got = match v {
            Value::Nil => "no value".to_string(),
            v => v.type_name().to_string(),
        };
        Err(super::engine::lua_error(
            lua,
            &format!(
                "bad argument #{} to '{fname}' (number expected, got {got})",
                i + 1
            ),
        ))
    })?;
    Ok(n as i64 as i32)
}

/// Replaces `random` and `randomseed` in the `math` table with Redis's.
///
/// # Errors
/// Lua cannot create the functions.
pub fn install(lua: &Lua, math: &Table) -> mlua::Result<()> {
    let state = Arc::new(AtomicU64::new(DEFAULT_STATE));
    let s = state.clone();
    math.raw_set(
        "random",
        lua.create_function(move |lua, args: MultiValue| {
            let r = (next(&s) % LRAND48_MAX) as f64 / LRAND48_MAX as f64;
            let empty = |pos| {
                super::engine::lua_error(
                    lua,
                    &format!("bad argument #{pos} to 'random' (interval is empty)"),
                )
            };
            match args.len() {
                0 => Ok(r),
                1 => {
                    let u = check_int(lua, &args, 0, "random")?;
                    if u < 1 {
                        return Err(empty(1));
                    }
                    Ok((r * f64::from(u)).floor() + 1.0)
                }
                2 => {
                    let l = check_int(lua, &args, 0, "random")?;
                    let u = check_int(lua, &args, 1, "random")?;
                    if l > u {
                        return Err(empty(2));
                    }
                    Ok((r * (f64::from(u) - f64::from(l) + 1.0)).floor() + f64::from(l))
                }
                _ => Err(super::engine::lua_error(lua, "wrong number of arguments")),
            }
        })?,
    )?;
    math.raw_set(
        "randomseed",
        lua.create_function(move |lua, args: MultiValue| {
            let seed = check_int(lua, &args, 0, "randomseed")?;
            // redisSrand48: the seed's 32 bits above drand48's fixed low word.
            state.store(
                ((u64::from(seed as u32)) << 16 | 0x330E) & MASK,
                Ordering::Relaxed,
            );
            Ok(())
        })?,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_is_redis_lrand48s() {
        // Values redis-server 7.0.15 returns for math.random(1000000) after start-up, and after
        // math.randomseed(42).
        let lua = Lua::new();
        let math = lua.create_table().unwrap();
        install(&lua, &math).unwrap();
        let random: mlua::Function = math.get("random").unwrap();
        let seed: mlua::Function = math.get("randomseed").unwrap();
        assert_eq!(random.call::<f64>(1000000).unwrap(), 396465.0);
        assert_eq!(random.call::<f64>(1000000).unwrap(), 840486.0);
        assert_eq!(random.call::<f64>(()).unwrap(), 0.3533360973714553);
        seed.call::<()>(42).unwrap();
        assert_eq!(random.call::<f64>(1000000).unwrap(), 744526.0);
        assert_eq!(random.call::<f64>(1000000).unwrap(), 342702.0);
    }
}
