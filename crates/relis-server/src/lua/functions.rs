//! Function libraries, as Redis 7.0's FUNCTION LOAD does them: a library is Lua code that
//! starts with `#!lua name=<library>` and calls `redis.register_function` (positional
//! `(name, callback)` or a table `{function_name=, callback=, flags=, description=}`) while it
//! loads. Loading runs the code once to learn its functions and Redis's load-time errors; the
//! writer's Lua state loads every library again (lazily, when the registry changed) to call
//! them. The code is stored in the database (`relis_functions`) so libraries survive restarts.

use super::engine::{lua_message, Engine};
use crate::error::CmdError;
use crate::script::functions::{Flags, FunctionInfo, Library, FLAG_NAMES};
use crate::script::Scripting;
use bytes::Bytes;
use mlua::{Function, Lua, MultiValue, Value};
use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

/// Parses the `#!lua name=<lib>` line: (library name, code with the shebang line blanked so
/// line numbers stay those of the text).
///
/// # Errors
/// Redis's metadata errors.
pub fn parse_shebang(code: &[u8]) -> Result<(String, Vec<u8>), CmdError> {
    if !code.starts_with(b"#!") {
        return Err(CmdError::LIBRARY_NO_METADATA);
    }
    let end = code.iter().position(|&c| c == b'\n').unwrap_or(code.len());
    let line = String::from_utf8_lossy(&code[2..end]).into_owned();
    let mut parts = line.split(' ').filter(|p| !p.is_empty());
    let engine = parts.next().unwrap_or("");
    if !engine.eq_ignore_ascii_case("lua") {
        return Err(CmdError::function_engine(engine));
    }
    let mut name = None;
    for p in parts {
        match p.strip_prefix("name=") {
            Some(n) => name = Some(n.to_string()),
            None => return Err(CmdError::function_metadata(p)),
        }
    }
    let Some(name) = name else {
        return Err(CmdError::LIBRARY_NO_NAME);
    };
    if !valid_name(&name) {
        return Err(CmdError::LIBRARY_NAME);
    }
    let mut body = code[end..].to_vec();
    if body.is_empty() {
        body.push(b'\n');
    }
    Ok((name, body))
}

fn valid_name(n: &str) -> bool {
    !n.is_empty() && n.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// What one load of a library's code registered.
struct Registered {
    info: FunctionInfo,
    callback: Function,
}

/// Runs a library's body in the engine's state (chunk `@user_function`, with the load-time
/// `redis` installed) and returns what it registered.
fn run_library(engine: &Engine, body: &[u8]) -> Result<Vec<Registered>, CmdError> {
    let lua = &engine.lua;
    let func = lua
        .load(body)
        .set_name("@user_function")
        .into_function()
        .map_err(|e| CmdError::function_compile(&lua_message(&e)))?;
    let out = std::cell::RefCell::new(Vec::<Registered>::new());
    let res = lua.scope(|scope| {
        let register = scope.create_function(|lua, args: MultiValue| {
            let r = register(lua, args)?;
            let mut out = out.borrow_mut();
            if out.iter().any(|x| x.info.name == r.info.name) {
                return Err(super::engine::rust_error(
                    "Function already exists in the library",
                ));
            }
            out.push(r);
            Ok(())
        })?;
        let api = lua.create_table()?;
        api.raw_set("register_function", register)?;
        engine.set_loading(Some(api))?;
        let r: mlua::Result<MultiValue> = engine.xpcall.call((func, engine.handler.clone()));
        engine.catchable();
        engine.set_loading(None)?;
        Ok(r)
    });
    let res = res.map_err(|e| CmdError::Internal(format!("lua: {e}")))?;
    if engine.run.stopped_at.lock().take().is_some() {
        // The time limit: an uncatchable error, which no handler turned into a table.
        return Err(CmdError::FUNCTION_LOAD_TIMEOUT);
    }
    let res =
        res.map_err(|e| CmdError::function_register(&CmdError::err(lua_message(&e)).message()))?;
    let mut it = res.into_iter();
    if !matches!(it.next(), Some(Value::Boolean(true))) {
        let msg = match it.next() {
            Some(Value::Table(t)) => t
                .raw_get::<mlua::String>("err")
                .map(|s| s.to_string_lossy())
                .unwrap_or_default(),
            Some(Value::String(s)) => CmdError::err(s.to_string_lossy()).message(),
            _ => CmdError::LUA_EXECUTION_FAILURE.message(),
        };
        return Err(CmdError::function_register(&msg));
    }
    let out = out.into_inner();
    if out.is_empty() {
        return Err(CmdError::NO_FUNCTIONS);
    }
    Ok(out)
}

/// `redis.register_function(name, callback)` or `redis.register_function{...}`.
fn register(lua: &Lua, mut args: MultiValue) -> mlua::Result<Registered> {
    use super::engine::rust_error as e;
    let (name, callback, flags, description) = match args.make_contiguous() {
        [Value::Table(t)] => {
            let (mut name, mut cb, mut flags, mut desc) = (None, None, None, None);
            for pair in super::convert::pairs(lua, t)? {
                let (k, v) = pair?;
                let key = match &k {
                    Value::String(s) => s.to_string_lossy(),
                    _ => return Err(e("named argument key given to redis.register_function is not a string")),
                };
                match key.as_str() {
                    "function_name" => name = Some(v),
                    "callback" => cb = Some(v),
                    "flags" => flags = Some(v),
                    "description" => desc = Some(v),
                    _ => return Err(e("unknown argument given to redis.register_function")),
                }
            }
            let Some(name) = name else {
                return Err(e("redis.register_function must get a function name argument"));
            };
            let Some(cb) = cb else {
                return Err(e("redis.register_function must get a callback argument"));
            };
            (name, cb, flags, desc)
        }
        [_] => return Err(e("calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).")),
        [name, cb] => {
            if !matches!(cb, Value::Function(_)) {
                return Err(e(
                    "second argument to redis.register_function must be a function",
                ));
            }
            (name.clone(), cb.clone(), None, None)
        }
        _ => return Err(e("wrong number of arguments to redis.register_function")),
    };
    let name = match name {
        Value::String(s) => s.to_string_lossy(),
        _ => {
            return Err(e(
                "function_name argument given to redis.register_function must be a string",
            ))
        }
    };
    if !valid_name(&name) {
        return Err(e("Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"));
    }
    let Value::Function(callback) = callback else {
        return Err(e(
            "callback argument given to redis.register_function must be a function",
        ));
    };
    let mut f = Flags::default();
    if let Some(flags) = flags {
        let Value::Table(flags) = flags else {
            return Err(e("flags argument to redis.register_function must be a table representing function flags"));
        };
        for v in flags.sequence_values::<Value>() {
            let Value::String(s) = v? else {
                return Err(e("unknown flag given"));
            };
            let s = s.to_string_lossy();
            let Some(i) = FLAG_NAMES.iter().position(|n| *n == s) else {
                return Err(e("unknown flag given"));
            };
            f.bits |= 1 << i;
        }
        f.no_writes = f.bits & 1 != 0;
    }
    let description = match description {
        None => None,
        Some(Value::String(s)) => Some(Bytes::copy_from_slice(&s.as_bytes())),
        Some(_) => {
            return Err(e(
                "description argument given to redis.register_function must be a string",
            ))
        }
    };
    Ok(Registered {
        info: FunctionInfo {
            name,
            description,
            flags: f,
        },
        callback,
    })
}

/// Evaluates a library's code in a throwaway Lua state: its name and functions, or Redis's
/// load-time error.
///
/// # Errors
/// Metadata, compile and registration errors.
pub fn evaluate(scripting: &Scripting, code: &Bytes) -> Result<Library, CmdError> {
    let (name, body) = parse_shebang(code)?;
    let tmp = Scripting::default();
    tmp.lua_memory_limit.store(
        scripting.lua_memory_limit.load(Ordering::Relaxed),
        Ordering::Relaxed,
    );
    let engine = Engine::new(&tmp).map_err(|e| CmdError::Internal(format!("lua: {e}")))?;
    *tmp.run.started.lock() = Some(std::time::Instant::now());
    tmp.run.loading.store(true, Ordering::SeqCst);
    let registered = engine.load_library(&body)?;
    Ok(Library {
        name,
        code: code.clone(),
        functions: registered
            .into_iter()
            .map(|r| (r.info.name.clone(), r.info))
            .collect(),
    })
}

/// Over PostgreSQL: takes the shared set of libraries when the job's group found it changed
/// since this node last took it (`relis::Reader::take_function_libraries`; the job declared
/// `relis::functions_declaration`), and makes it the running set. A library whose code is
/// unchanged keeps its loaded form; one that does not load here is left out, with a warning in
/// the log (as at start-up). Nothing on SQLite, where this node's set is the only one.
pub fn refresh(s: &Scripting, r: &relis::Reader<'_>) {
    let Some(stored) = r.take_function_libraries() else {
        return;
    };
    let current = s.functions.libraries.lock().clone();
    let same = stored.len() == current.len()
        && stored
            .iter()
            .all(|(n, c)| current.get(n).is_some_and(|l| l.code == *c));
    if same {
        return;
    }
    let mut libs = BTreeMap::new();
    for (name, code) in stored {
        if let Some(l) = current.get(&name).filter(|l| l.code == code) {
            libs.insert(name, l.clone());
            continue;
        }
        match evaluate(s, &code) {
            Ok(lib) => {
                libs.insert(lib.name.clone(), lib);
            }
            Err(e) => tracing::warn!("function library {name} does not load: {}", e.message()),
        }
    }
    s.functions.replace_all(libs);
}

impl Engine {
    fn load_library(&self, body: &[u8]) -> Result<Vec<Registered>, CmdError> {
        run_library(self, body)
    }
}

/// Brings the engine's functions up to date with the registry.
///
/// # Errors
/// A library that no longer loads (it loaded when it was registered).
pub(super) fn sync(engine: &mut Engine, s: &Scripting) -> Result<(), CmdError> {
    let version = s.functions.version.load(Ordering::SeqCst);
    if engine.functions_version == version {
        return Ok(());
    }
    let libs: Vec<Bytes> = s
        .functions
        .libraries
        .lock()
        .values()
        .map(|l| l.code.clone())
        .collect();
    engine.clear_functions().map_err(internal)?;
    for code in libs {
        let (_, body) = parse_shebang(&code)?;
        for r in engine.load_library(&body)? {
            engine
                .add_function(&r.info.name, &r.callback, r.info.flags)
                .map_err(internal)?;
        }
    }
    engine.functions_version = version;
    Ok(())
}

/// FUNCTION DUMP's payload, Redis's: one `RDB_OPCODE_FUNCTION2` record (the library's code
/// as an RDB string) per library, then RDB version 10 and a CRC-64, so it restores into
/// redis-server and back.
pub fn dump(libs: &BTreeMap<String, Library>) -> Vec<u8> {
    rdb::payload::dump_functions(libs.values().map(|l| &l.code[..]))
}

/// The library codes in a FUNCTION DUMP payload (Relis's or redis-server's).
///
/// # Errors
/// Redis's FUNCTION RESTORE texts: `ERR DUMP payload version or checksum are wrong`, `ERR given
/// type is not a function`, ...
pub fn undump(p: &[u8]) -> Result<Vec<Bytes>, CmdError> {
    rdb::payload::restore_functions(p)
        .map(|codes| codes.into_iter().map(Bytes::from).collect())
        .map_err(CmdError::err)
}

fn internal(e: mlua::Error) -> CmdError {
    CmdError::Internal(format!("lua: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shebang() {
        assert_eq!(
            parse_shebang(b"#!lua name=l1\nx").unwrap(),
            ("l1".into(), b"\nx".to_vec())
        );
        assert_eq!(
            parse_shebang(b"#!lua  name=l9  \nx").unwrap().0,
            "l9".to_string()
        );
        let e = |c: &[u8]| parse_shebang(c).unwrap_err().message();
        assert_eq!(e(b"return 1"), "ERR Missing library metadata");
        assert_eq!(e(b"#!lua\nx"), "ERR Library name was not given");
        assert_eq!(e(b"#!js name=x\nx"), "ERR Engine 'js' not found");
        assert_eq!(
            e(b"#!lua name=a foo=bar\nx"),
            "ERR Invalid metadata value given: foo=bar"
        );
    }

    #[test]
    fn dump_round_trips() {
        let mut libs = BTreeMap::new();
        libs.insert(
            "a".to_string(),
            Library {
                name: "a".into(),
                code: Bytes::from_static(b"#!lua name=a\n"),
                functions: BTreeMap::new(),
            },
        );
        let p = dump(&libs);
        assert_eq!(
            undump(&p).unwrap(),
            vec![Bytes::from_static(b"#!lua name=a\n")]
        );
        let mut bad = p.clone();
        bad[9] ^= 1;
        let e = |p: &[u8]| undump(p).unwrap_err().message();
        assert_eq!(e(&bad), "ERR DUMP payload version or checksum are wrong");
        assert_eq!(e(b"xx"), "ERR DUMP payload version or checksum are wrong");
        // One library in the layout redis-server 7.0.15 writes (record 245, the code, footer).
        let redis = b"\xf5\x15#!lua name=x\nreturn 1\n\x00";
        let mut redis = redis.to_vec();
        let crc = rdb::crc64::crc64(0, &redis);
        redis.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(
            undump(&redis).unwrap(),
            vec![Bytes::from_static(b"#!lua name=x\nreturn 1")]
        );
    }
}
