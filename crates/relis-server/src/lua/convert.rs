//! Conversions between command replies and Lua values, exactly as Redis 7.0's `script_lua.c`
//! does them.
//!
//! Reply -> Lua (what `redis.call` returns): integer -> number, bulk -> string, array -> table,
//! status -> `{ok=...}`, error -> `{err=...}`, null -> `false` (RESP2) or `nil` (RESP3); under
//! `redis.setresp(3)` also map -> `{map={...}}`, set -> `{set={member=true}}`, double ->
//! `{double=n}`, boolean -> boolean, big number -> `{big_number=s}`.
//!
//! Lua -> reply (what a script returns): number -> integer (truncated), string -> bulk, `true`
//! -> 1 (RESP2) or `#t`, `false` / `nil` -> null (RESP2) or `#f`, a table with a string `err`
//! -> error, `ok` -> status, `double`, `big_number`, `map`, `set` -> those types, any other table
//! -> array of its elements up to the first nil.

use crate::error::{sanitize, CmdError};
use bytes::Bytes;
use mlua::{Function, Lua, Table, Value};
use resp::Frame;

/// A command reply as the Lua value `redis.call` returns. An error reply is `{err=...}` here;
/// the caller decides whether to raise it.
///
/// # Errors
/// Lua memory errors.
pub fn to_lua(lua: &Lua, f: Frame, resp3: bool) -> mlua::Result<Value> {
    if !resp3 {
        // Commands build RESP3 shapes and leave the downgrade to the encoder: a RESP2 script
        // sees what a RESP2 client would.
        match f {
            Frame::Map(pairs) => {
                let t = lua.create_table_with_capacity(pairs.len() * 2, 0)?;
                for (i, (k, v)) in pairs.into_iter().enumerate() {
                    t.raw_set(2 * i + 1, to_lua(lua, k, false)?)?;
                    t.raw_set(2 * i + 2, to_lua(lua, v, false)?)?;
                }
                return Ok(Value::Table(t));
            }
            Frame::Set(v) => return to_lua(lua, Frame::Array(v), false),
            Frame::Double(d) => {
                return Ok(Value::String(lua.create_string(resp::format_double(d))?))
            }
            Frame::Boolean(b) => return Ok(Value::Number(if b { 1.0 } else { 0.0 })),
            Frame::BigNumber(s) | Frame::DoubleText(s) => {
                return Ok(Value::String(lua.create_string(&s)?))
            }
            Frame::Verbatim { data, .. } => return Ok(Value::String(lua.create_string(&data)?)),
            other => return to_lua3(lua, other, false),
        }
    }
    to_lua3(lua, f, resp3)
}

fn to_lua3(lua: &Lua, f: Frame, resp3: bool) -> mlua::Result<Value> {
    Ok(match f {
        f @ Frame::Bulks { .. } => return to_lua3(lua, f.into_plain(), resp3),
        Frame::Simple(s) => {
            let t = lua.create_table()?;
            t.raw_set("ok", lua.create_string(&s)?)?;
            Value::Table(t)
        }
        Frame::Error(e) | Frame::BulkError(e) => Value::Table(error_table(lua, &e)?),
        Frame::Integer(n) => Value::Number(n as f64),
        Frame::Bulk(b) => Value::String(lua.create_string(&b)?),
        Frame::Null | Frame::NullArray => {
            if resp3 {
                Value::Nil
            } else {
                Value::Boolean(false)
            }
        }
        Frame::Array(v) | Frame::Push(v) => {
            let t = lua.create_table_with_capacity(v.len(), 0)?;
            for (i, f) in v.into_iter().enumerate() {
                t.raw_set(i + 1, to_lua(lua, f, resp3)?)?;
            }
            Value::Table(t)
        }
        Frame::Map(pairs) => {
            let inner = lua.create_table()?;
            for (k, v) in pairs {
                inner.raw_set(to_lua(lua, k, resp3)?, to_lua(lua, v, resp3)?)?;
            }
            let t = lua.create_table()?;
            t.raw_set("map", inner)?;
            Value::Table(t)
        }
        Frame::Set(members) => {
            let inner = lua.create_table()?;
            for m in members {
                inner.raw_set(to_lua(lua, m, resp3)?, true)?;
            }
            let t = lua.create_table()?;
            t.raw_set("set", inner)?;
            Value::Table(t)
        }
        Frame::Double(d) => {
            let t = lua.create_table()?;
            t.raw_set("double", d)?;
            Value::Table(t)
        }
        Frame::DoubleText(s) => {
            // Redis's Lua reads the reply's text back with strtod.
            let d = std::str::from_utf8(&s)
                .ok()
                .and_then(|s| s.parse::<f64>().ok())
                .unwrap_or(0.0);
            let t = lua.create_table()?;
            t.raw_set("double", d)?;
            Value::Table(t)
        }
        Frame::Boolean(b) => Value::Boolean(b),
        Frame::BigNumber(s) => {
            let t = lua.create_table()?;
            t.raw_set("big_number", lua.create_string(&s)?)?;
            Value::Table(t)
        }
        Frame::Verbatim { format, data } => {
            let inner = lua.create_table()?;
            inner.raw_set("format", lua.create_string(format)?)?;
            inner.raw_set("string", lua.create_string(&data)?)?;
            let t = lua.create_table()?;
            t.raw_set("verbatim_string", inner)?;
            Value::Table(t)
        }
        Frame::Attribute(_) => Value::Nil,
    })
}

/// `{err="CODE message"}` as Redis's `luaPushErrorBuff` builds it from an error reply: a
/// leading `-` is dropped, a text without a code gets `ERR`, trailing CR/LF are trimmed.
pub fn error_table(lua: &Lua, text: &[u8]) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("err", lua.create_string(error_text(text))?)?;
    Ok(t)
}

/// The `err` text of [`error_table`].
pub fn error_text(text: &[u8]) -> Vec<u8> {
    let (code, msg): (&[u8], &[u8]) = match text.strip_prefix(b"-") {
        Some(rest) => match rest.iter().position(|&c| c == b' ') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (b"ERR", rest),
        },
        None => (b"", text),
    };
    fn trim(mut m: &[u8]) -> &[u8] {
        while let [first, rest @ ..] = m {
            if *first == b'\r' || *first == b'\n' {
                m = rest;
            } else {
                break;
            }
        }
        while let [rest @ .., last] = m {
            if *last == b'\r' || *last == b'\n' {
                m = rest;
            } else {
                break;
            }
        }
        m
    }
    let mut out = Vec::with_capacity(text.len() + 4);
    if code.is_empty() {
        // An error reply from a command already carries its code word.
        out.extend_from_slice(trim(msg));
    } else {
        out.extend_from_slice(code);
        out.push(b' ');
        out.extend_from_slice(trim(msg));
    }
    out
}

/// How deep a script's reply may nest. Redis runs out of Lua stack (`lua_checkstack`) at 7995
/// levels and ends the reply there with `-ERR reached lua stack limit`; Relis stops at 1000
/// with the same error (a table that contains itself would otherwise never end).
const MAX_REPLY_DEPTH: usize = 1000;

/// The Lua function behind [`pairs`], in a state's app data.
struct PairsFactory(Function);

/// Prepares a state for [`pairs`].
///
/// # Errors
/// Lua memory errors.
pub fn install_pairs(lua: &Lua) -> mlua::Result<()> {
    let f: Function = lua
        .load(
            "local next = next
             return function(t)
               local k = nil
               return function()
                 local v
                 k, v = next(t, k)
                 return k, v
               end
             end",
        )
        .set_name("=redis")
        .call(())?;
    lua.set_app_data(PairsFactory(f));
    Ok(())
}

/// A table's pairs, as Lua's `next` gives them. Not mlua's `Table::pairs`: that one hands
/// each key back to `lua_next` as mlua converted it, and mlua (for Lua 5.1) turns a number
/// within `f64::EPSILON` of an integer into that integer, so a key like `1e-300` came back as
/// `0`, which `lua_next` refuses with an error raised across Rust frames. Here the key stays
/// in Lua (the iterator's upvalue).
///
/// # Errors
/// Lua memory errors; [`install_pairs`] was not called.
pub fn pairs(lua: &Lua, t: &Table) -> mlua::Result<Pairs> {
    let factory = lua
        .app_data_ref::<PairsFactory>()
        .map(|f| f.0.clone())
        .ok_or_else(|| mlua::Error::runtime("pairs: not installed"))?;
    Ok(Pairs(Some(factory.call::<Function>(t)?)))
}

/// The iterator of [`pairs`].
pub struct Pairs(Option<Function>);

impl Iterator for Pairs {
    type Item = mlua::Result<(Value, Value)>;

    fn next(&mut self) -> Option<Self::Item> {
        let step = self.0.as_ref()?;
        match step.call::<(Value, Value)>(()) {
            Ok((Value::Nil, _)) => {
                self.0 = None;
                None
            }
            Ok(pair) => Some(Ok(pair)),
            Err(e) => {
                self.0 = None;
                Some(Err(e))
            }
        }
    }
}

/// A script's return value as a reply; `resp3` is the script's `redis.setresp` version.
///
/// Recursive, at most [`MAX_REPLY_DEPTH`] deep (the writer's stack is 64 MiB), and it walks
/// each table in place: a table of a million strings must not become a million Rust handles
/// on mlua's auxiliary stack at once, only the path to the current element does.
pub fn to_frame(lua: &Lua, v: &Value, resp3: bool) -> Frame {
    frame(lua, v, resp3, 0)
}

fn frame(lua: &Lua, v: &Value, resp3: bool, depth: usize) -> Frame {
    let Value::Table(t) = v else {
        return scalar_to_frame(v, resp3);
    };
    if depth >= MAX_REPLY_DEPTH {
        return Frame::Error(Bytes::from_static(CmdError::LUA_STACK_LIMIT.as_bytes()));
    }
    if let Ok(Value::String(e)) = t.raw_get::<Value>("err") {
        let msg = String::from_utf8_lossy(&e.as_bytes()).into_owned();
        return Frame::Error(Bytes::from(sanitize(&msg)));
    }
    if let Ok(Value::String(s)) = t.raw_get::<Value>("ok") {
        return Frame::Simple(no_newlines(&s.as_bytes()));
    }
    match t.raw_get::<Value>("double") {
        Ok(Value::Number(d)) => return Frame::Double(d),
        Ok(Value::Integer(d)) => return Frame::Double(d as f64),
        _ => {}
    }
    if let Ok(Value::String(s)) = t.raw_get::<Value>("big_number") {
        return Frame::BigNumber(no_newlines(&s.as_bytes()));
    }
    if let Ok(Value::Table(m)) = t.raw_get::<Value>("map") {
        let pairs = pairs(lua, &m)
            .into_iter()
            .flatten()
            .map_while(Result::ok)
            .map(|(k, v)| {
                (
                    frame(lua, &k, resp3, depth + 1),
                    frame(lua, &v, resp3, depth + 1),
                )
            })
            .collect();
        return Frame::Map(pairs);
    }
    if let Ok(Value::Table(s)) = t.raw_get::<Value>("set") {
        let members = pairs(lua, &s)
            .into_iter()
            .flatten()
            .map_while(Result::ok)
            .map(|(k, _)| frame(lua, &k, resp3, depth + 1))
            .collect();
        return Frame::Set(members);
    }
    let mut items = Vec::new();
    for i in 1.. {
        match t.raw_get::<Value>(i) {
            Ok(Value::Nil) | Err(_) => break,
            Ok(v) => items.push(frame(lua, &v, resp3, depth + 1)),
        }
    }
    Frame::Array(items)
}

fn scalar_to_frame(v: &Value, resp3: bool) -> Frame {
    match v {
        Value::Nil => Frame::Null,
        Value::Boolean(b) => {
            if resp3 {
                Frame::Boolean(*b)
            } else if *b {
                Frame::Integer(1)
            } else {
                Frame::Null
            }
        }
        Value::Integer(n) => Frame::Integer(*n),
        // C's (long long) cast: truncation toward zero.
        Value::Number(n) => Frame::Integer(c_i64(*n)),
        Value::String(s) => Frame::Bulk(Bytes::copy_from_slice(&s.as_bytes())),
        _ => Frame::Null,
    }
}

/// 2^63, the first double past i64.
pub const TWO_63: f64 = (1u64 << 63) as f64;

/// C's `(long long)n`, which Redis applies to a Lua number: truncation toward zero, and where
/// C leaves it undefined (NaN, out of range) what x86-64 computes (`cvttsd2si`'s "integer
/// indefinite", i64::MIN).
pub fn c_i64(n: f64) -> i64 {
    if n.is_nan() || !(-TWO_63..TWO_63).contains(&n) {
        i64::MIN
    } else {
        n as i64
    }
}

fn no_newlines(b: &[u8]) -> Bytes {
    Bytes::from(
        b.iter()
            .map(|&c| if c == b'\r' || c == b'\n' { b' ' } else { c })
            .collect::<Vec<u8>>(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_texts_as_redis_builds_them() {
        assert_eq!(error_text(b"boo"), b"boo");
        assert_eq!(error_text(b"-boo"), b"ERR boo");
        assert_eq!(error_text(b"-MY boo\r\n"), b"MY boo");
        assert_eq!(error_text(b"ERR x y"), b"ERR x y");
    }
}
