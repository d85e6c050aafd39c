//! The fuzz target's entry point for the converters between Lua and the outside world
//! (`fuzz/fuzz_targets/lua.rs`, and the corpus replay in `tests/fuzz_corpus.rs`): `cjson`,
//! `cmsgpack`, `struct` and the reply <-> Lua conversions of `convert`, run on arbitrary bytes
//! in a Lua state that has those libraries (called through Lua, as scripts call them).
//! Errors are expected; a panic, a crash or a broken property is a finding. Not an API.

use super::convert;
use bytes::BytesMut;
use mlua::{Function, Lua, LuaOptions, MultiValue, StdLib, Table, Value};

/// Lua memory for one input: a hostile size fails here as under `lua-memory-limit`.
const MEMORY: usize = 64 << 20;

thread_local! {
    static LUA: Lua = state().expect("a Lua state for fuzzing");
}

fn state() -> mlua::Result<Lua> {
    let lua = Lua::new_with(
        StdLib::TABLE | StdLib::STRING | StdLib::MATH,
        LuaOptions::default(),
    )?;
    let g = lua.globals();
    g.raw_set("cjson", super::cjson::library(&lua)?.0)?;
    g.raw_set("cmsgpack", super::cmsgpack::library(&lua)?)?;
    g.raw_set("struct", super::lstruct::library(&lua)?)?;
    super::engine::limit_memory(&lua, MEMORY)?;
    convert::install_pairs(&lua)?;
    let call: Function = lua
        .load(
            "local select = select
             local function packn(...) return {n = select('#', ...), ...} end
             return function(f, ...) return packn(f(...)) end",
        )
        .call(())?;
    lua.set_named_registry_value("relis.fuzz.call", call)?;
    Ok(lua)
}

/// Calls `f(args...)` through Lua and returns all its results. The results come back packed
/// in a table: mlua reads a long list of results straight off the stack, one slot past its
/// end (an API-check failure in debug builds).
fn call_all(lua: &Lua, f: &Function, args: MultiValue) -> mlua::Result<Vec<Value>> {
    let helper: Function = lua.named_registry_value("relis.fuzz.call")?;
    let mut all = MultiValue::new();
    all.push_back(Value::Function(f.clone()));
    all.extend(args);
    let t: Table = helper.call(all)?;
    let n: usize = t.raw_get("n")?;
    (1..=n).map(|i| t.raw_get::<Value>(i)).collect()
}

fn lib_fn(lua: &Lua, lib: &str, name: &str) -> Function {
    lua.globals()
        .raw_get::<Table>(lib)
        .and_then(|t| t.raw_get::<Function>(name))
        .expect("the library function")
}

/// One input: its first byte picks the converter (and RESP2/RESP3), the rest is the data.
///
/// Checks besides "no panic": what `cjson.encode` writes, `cjson.decode` reads back; what
/// `cmsgpack.pack` writes, `cmsgpack.unpack` reads back (but for a nil key where pack cut a
/// table nested past 16 levels).
#[doc(hidden)]
pub fn converters(data: &[u8]) {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let resp3 = sel & 0x10 != 0;
    LUA.with(|lua| {
        match sel % 4 {
            0 => json(lua, rest, resp3),
            1 => msgpack(lua, rest, resp3),
            2 => structs(lua, rest),
            _ => replies(lua, rest, resp3),
        }
        // Each input starts from the same heap (and the memory limit means the same).
        let _ = lua.gc_collect();
    });
}

fn json(lua: &Lua, data: &[u8], resp3: bool) {
    let (decode, encode) = (
        lib_fn(lua, "cjson", "decode"),
        lib_fn(lua, "cjson", "encode"),
    );
    let Ok(s) = lua.create_string(data) else {
        return;
    };
    let Ok(v) = decode.call::<Value>(s) else {
        return;
    };
    let _ = convert::to_frame(lua, &v, resp3);
    // Numbers past f64 (1e999) decode to infinity, which encode refuses: that is fine.
    if let Ok(text) = encode.call::<mlua::String>(v) {
        if let Err(e) = decode.call::<Value>(&text) {
            panic!(
                "cjson.encode wrote {:?}, which cjson.decode refuses: {e}",
                String::from_utf8_lossy(&text.as_bytes())
            );
        }
    }
}

fn msgpack(lua: &Lua, data: &[u8], resp3: bool) {
    let (unpack, pack) = (
        lib_fn(lua, "cmsgpack", "unpack"),
        lib_fn(lua, "cmsgpack", "pack"),
    );
    let Ok(s) = lua.create_string(data) else {
        return;
    };
    let Ok(values) = call_all(lua, &unpack, MultiValue::from_iter([Value::String(s)])) else {
        return;
    };
    for v in values.iter() {
        let _ = convert::to_frame(lua, v, resp3);
    }
    if values.is_empty() {
        return;
    }
    if let Ok(bytes) = pack.call::<mlua::String>(MultiValue::from_iter(values)) {
        let arg = MultiValue::from_iter([Value::String(bytes.clone())]);
        // Past 16 levels pack writes nil for a table, a key included, which unpack refuses
        // (as lua-cmsgpack does in Redis).
        if let Err(e) = call_all(lua, &unpack, arg)
            .map_err(|e| e.to_string())
            .or_else(|e| {
                if e.contains("table index is nil") {
                    Ok(Vec::new())
                } else {
                    Err(e)
                }
            })
        {
            panic!(
                "cmsgpack.pack wrote {:?}, which cmsgpack.unpack refuses: {e}",
                bytes.as_bytes()
            );
        }
    }
    let one = lib_fn(lua, "cmsgpack", "unpack_one");
    if let Ok(s) = lua.create_string(data) {
        let args = [Value::String(s), Value::Number((data.len() / 2) as f64)];
        let _ = call_all(lua, &one, MultiValue::from_iter(args));
    }
}

/// The format is the bytes up to the first NUL, the data what follows.
fn structs(lua: &Lua, data: &[u8]) {
    let (fmt, payload) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b""[..]),
    };
    super::lstruct::fuzz(lua, fmt, payload);
    let pack = lib_fn(lua, "struct", "pack");
    if let Ok(f) = lua.create_string(fmt) {
        let _ = pack.call::<Value>((f, 1, "xyz", -2.5, 7.0e300, "abcdefgh", 300));
    }
}

/// RESP frames, as command replies reaching a script (`redis.call`), and back as the script's
/// reply.
fn replies(lua: &Lua, data: &[u8], resp3: bool) {
    let mut buf = BytesMut::from(data);
    while let Ok(Some(frame)) = resp::decode_frame(&mut buf) {
        if let Ok(v) = convert::to_lua(lua, frame, resp3) {
            let _ = convert::to_frame(lua, &v, resp3);
        }
    }
}
