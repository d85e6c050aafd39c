//! The Lua state and how a script runs.
//!
//! One Lua state per writer thread (a thread-local: every script runs there, inside a write
//! job), built on first use and rebuilt after SCRIPT FLUSH. The sandbox follows Redis 7.0:
//! the base, table, string and math libraries plus `cjson`, `cmsgpack`, `struct` and `bit`; no
//! `os`, `io`, `debug`, `print`, `getfenv`/`setfenv`, `loadfile`, `dofile`, `require`.
//!
//! Nothing a script does may outlive it, because the state is shared by every user (as in
//! Redis): the globals table, every table reachable from it (the libraries, `redis`) and the
//! string metatable are read-only in the VM itself (a flag patched into Lua, see
//! vendor/lua-src/PATCHES.md: assignment, `rawset`, `table.insert`, `setmetatable` all raise
//! Redis's "Attempt to modify a readonly table"); reading an undefined global is an error; the
//! collector's settings are put back after each run. Only source text loads (the VM refuses
//! bytecode). A kill (SCRIPT KILL, FUNCTION KILL, the FUNCTION LOAD time limit, SHUTDOWN
//! NOSAVE) comes from an instruction-count hook and makes errors uncatchable for the rest of
//! the run, so `pcall`, `xpcall` handlers and coroutines cannot hold on to it.
//!
//! `redis.call` / `redis.pcall` are Rust functions created once with the state; they reach the
//! run in progress (its writer, database, RESP version) through a thread-local the run binds
//! for its duration. Lua helpers (the error handler) live in a chunk named `=redis`, which the
//! error handler skips when it looks for the script's line.

use super::convert;
use crate::cmd::{Cx, Parsed, Table as CmdTable};
use crate::dispatch::{record, run_write_feeding};
use crate::error::{sanitize, CmdError};
use crate::script::RunState;
use crate::spec::Flags;
use bytes::Bytes;
use mlua::{ffi, Function, Lua, LuaOptions, MultiValue, StdLib, Table, Value};
use resp::{Frame, Protocol};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

/// What to run.
pub enum Target {
    /// EVAL: the body (cached by its SHA1 as it runs).
    Body(Bytes),
    /// EVALSHA: a cached script's SHA1 (any case).
    Sha(Bytes),
    /// FCALL: a function by name.
    Function(Bytes),
}

/// One script run.
pub struct Call {
    /// The script.
    pub target: Target,
    /// KEYS.
    pub keys: Vec<Bytes>,
    /// ARGV.
    pub args: Vec<Bytes>,
    /// EVAL_RO / EVALSHA_RO / FCALL_RO: write commands are refused.
    pub readonly: bool,
    /// The whole command line, for FUNCTION STATS (FCALL only; empty for EVAL).
    pub command: Vec<Bytes>,
}

// The patched VM's own API (vendor/lua-src: lapi.c), linked from the same library as mlua's.
extern "C-unwind" {
    fn lua_enablereadonlytable(
        l: *mut ffi::lua_State,
        idx: std::os::raw::c_int,
        on: std::os::raw::c_int,
    );
    fn lua_setuncatchable(l: *mut ffi::lua_State, on: std::os::raw::c_int) -> std::os::raw::c_int;
}

/// The registry key of the running state's [`RunState`] (a light userdata), for the hook.
const RUN_KEY: &std::ffi::CStr = c"relis.run";

/// Instructions between two looks at the kill flag and the clock (Redis's count too).
const HOOK_EVERY: std::os::raw::c_int = 100_000;

/// The per-thread Lua state.
pub(super) struct Engine {
    pub lua: Lua,
    /// The globals (read-only; toggled only to set KEYS, ARGV and the load-time `redis`).
    globals: Table,
    /// `redis`, the full API (put back after a library has loaded).
    redis: Table,
    /// The error handler for `xpcall`.
    pub handler: Function,
    /// Builds the load-time `redis` of a library from its API table.
    loading_api: Function,
    /// `bind(f, k, a)`: a closure calling `f(k, a)` (Lua 5.1's xpcall passes no arguments).
    bind: Function,
    /// `xpcall(f, handler)` returning only `ok` and the first value.
    pub xpcall: Function,
    /// Compiled EVAL scripts (SHA1 -> function) and FCALL functions (name -> function) live
    /// in Lua tables, not as Rust handles: mlua keeps each handle in one auxiliary stack, and a
    /// handle per cached script would grow it without bound.
    cache: Table,
    /// The shebang's `no-writes` of each compiled script (None: no shebang).
    shebangs: HashMap<String, Option<bool>>,
    /// FCALL functions (name -> function).
    fns: Table,
    /// Which [`crate::script::Scripting::generation`] this state belongs to.
    generation: u64,
    /// Which server (the address of its scripting state) this state belongs to.
    owner: usize,
    /// The run state the hook reads (its address is in the registry under [`RUN_KEY`]).
    pub(super) run: Arc<RunState>,
    /// The registry version whose libraries this state has loaded.
    pub functions_version: u64,
    /// FCALL functions' flags, by name.
    pub functions: HashMap<Vec<u8>, crate::script::functions::Flags>,
    /// Lua's memory after the last full collection.
    settled: usize,
    /// The memory limit set on the state (`lua-memory-limit`).
    limit: usize,
    /// `cjson`'s settings, put back after each run.
    cjson: super::cjson::Settings,
}

thread_local! {
    static ENGINE: RefCell<Option<Engine>> = const { RefCell::new(None) };
}

/// Lua helpers run by the engine, in a chunk named `=redis`.
const PRELUDE: &str = r#"
local real = ...
local error, type, tostring, rawget = error, type, tostring, rawget
local dbg = debug
-- Errors raised from Rust reach Lua as mlua's wrapped values: TMARK carries a Redis error
-- table's text (redis.call), SMARK a plain message (cjson, bit), as Redis raises them.
local TMARK, SMARK = "\1redis-table:", "\1redis-string:"
local function unwrap(err)
  if type(err) == 'userdata' then
    local s = tostring(err)
    local i = s:find(TMARK, 1, true)
    if i then return {err = s:sub(i + #TMARK):match('[^\n]*')} end
    i = s:find(SMARK, 1, true)
    if i then return s:sub(i + #SMARK):match('[^\n]*') end
    return s
  end
  return err
end
-- Redis's __redis__err__handler: the error as a table with the script's source and line.
local function handler(err)
  err = unwrap(err)
  local l = 2
  local i = dbg.getinfo(l, 'nSl')
  while i and (i.what == 'C' or i.source == '=redis') do
    l = l + 1
    i = dbg.getinfo(l, 'nSl')
  end
  if type(err) ~= 'table' then
    err = {err = 'ERR ' .. tostring(err)}
  end
  if i then
    err['source'] = i.source
    err['line'] = i.currentline
  end
  return err
end
-- Redis's pcall: an error table comes back as its `err` string. The results pass through as
-- arguments (no table and `unpack`, which would cap them below what pcall itself returns).
local lua_pcall = pcall
local function pcall_result(ok, ...)
  if ok then return true, ... end
  local e = unwrap((...))
  if type(e) == 'table' and type(rawget(e, 'err')) == 'string' then e = rawget(e, 'err') end
  return false, e
end
real.pcall = function(...)
  return pcall_result(lua_pcall(...))
end
local function missing(_, k)
  error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
end
-- Reading a global that does not exist is an error, as in Redis (whose globals' metatable
-- scripts can see too; the VM keeps it read-only).
setmetatable(real, {__index = missing})
local function bind(f, k, a)
  return function() return f(k, a) end
end
-- xpcall keeping the first result only (Redis reads no other): the host never receives a
-- script's `return unpack(t)` of thousands of values (mlua reads them past the stack's end).
local lua_xpcall = xpcall
local function protected(f, h)
  local ok, v = lua_xpcall(f, h)
  return ok, v
end
-- While a library loads, `redis` is the load-time API (register_function, log, constants);
-- a missing field is an error, as a missing global is.
local function loading_api(api)
  for _, k in ipairs({'log', 'setresp', 'LOG_DEBUG', 'LOG_VERBOSE', 'LOG_NOTICE', 'LOG_WARNING',
                      'REDIS_VERSION', 'REDIS_VERSION_NUM'}) do
    api[k] = rawget(real, 'redis')[k]
  end
  setmetatable(api, {__index = missing, __metatable = false})
  return api
end
return handler, bind, loading_api, protected
"#;

impl Engine {
    pub(super) fn new(scripting: &crate::script::Scripting) -> mlua::Result<Engine> {
        let libs = StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::DEBUG;
        // SAFETY: the debug library is what Redis loads too; scripts cannot reach C memory
        // through it in Lua 5.1 beyond what Redis allows.
        let lua = unsafe { Lua::unsafe_new_with(libs, LuaOptions::default()) };
        let globals = lua.globals();
        for name in [
            "loadfile", "dofile", "require", "module", "os", "io", "package",
        ] {
            globals.raw_set(name, Value::Nil)?;
        }
        // Redis 7.0's allow list leaves these out too (the error handler keeps its own
        // reference to `debug`, taken by the prelude).
        let hidden = ["print", "getfenv", "setfenv", "newproxy", "debug"];
        let redis = lua.create_table()?;
        install_redis(&lua, &redis)?;
        install_run_functions(&lua, &redis)?;
        globals.raw_set("redis", &redis)?;
        let (cjson, cjson_settings) = super::cjson::library(&lua)?;
        globals.raw_set("cjson", cjson)?;
        globals.raw_set("bit", super::bit::library(&lua)?)?;
        globals.raw_set("cmsgpack", super::cmsgpack::library(&lua)?)?;
        globals.raw_set("struct", super::lstruct::library(&lua)?)?;
        super::random::install(&lua, &globals.raw_get::<Table>("math")?)?;
        convert::install_pairs(&lua)?;
        let (handler, bind, loading_api, xpcall): (Function, Function, Function, Function) =
            lua.load(PRELUDE).set_name("=redis").call(globals.clone())?;
        for name in hidden {
            globals.raw_set(name, Value::Nil)?;
        }
        // Everything a script can reach by name, and the strings' metatable (its `__index` is
        // the `string` table; CVE-2025-46818 replaced it to run code in later scripts).
        let strings: Table = lua
            .load("return getmetatable('')")
            .set_name("=redis")
            .call(())?;
        let mut seen = std::collections::HashSet::new();
        protect(&lua, &globals, &mut seen)?;
        protect(&lua, &strings, &mut seen)?;
        let run = scripting.run.clone();
        // SAFETY: the registry keeps the address of `run`, which the engine holds (an Arc) for
        // as long as the state lives; the hook is a plain C function (see `count_hook`).
        unsafe {
            let p = Arc::as_ptr(&run) as *mut std::os::raw::c_void;
            lua.exec_raw::<()>((), |l| {
                ffi::lua_pushlightuserdata(l, p);
                ffi::lua_setfield(l, ffi::LUA_REGISTRYINDEX, RUN_KEY.as_ptr());
                ffi::lua_sethook(l, Some(count_hook), ffi::LUA_MASKCOUNT, HOOK_EVERY);
            })?;
        }
        let limit = scripting.lua_memory_limit.load(Ordering::Relaxed) as usize;
        limit_memory(&lua, limit)?;
        let settled = lua.used_memory();
        Ok(Engine {
            cache: lua.create_table()?,
            fns: lua.create_table()?,
            lua,
            globals,
            redis,
            handler,
            loading_api,
            bind,
            xpcall,
            shebangs: HashMap::new(),
            generation: scripting.generation.load(Ordering::SeqCst),
            owner: scripting as *const _ as usize,
            run,
            functions_version: u64::MAX,
            functions: HashMap::new(),
            settled,
            limit,
            cjson: cjson_settings,
        })
    }

    /// Compiles a script body as Redis does (chunk `@user_script`, run in the sandbox).
    ///
    /// # Errors
    /// `ERR Error compiling script (new function): ...`.
    pub fn compile(&self, body: &[u8]) -> Result<(Function, Option<bool>), CmdError> {
        let (shebang, src) = eval_shebang(body)?;
        let f = self
            .lua
            .load(&*src)
            .set_name("@user_script")
            .into_function()
            .map_err(|e| CmdError::script_compile(&lua_message(&e)))?;
        Ok((f, shebang))
    }

    /// The compiled script with this SHA1 (and its shebang's `no-writes`), if cached.
    fn cached(&self, sha: &str) -> Option<(Function, Option<bool>)> {
        let shebang = *self.shebangs.get(sha)?;
        let f = self.cache.raw_get::<Function>(sha).ok()?;
        Some((f, shebang))
    }

    /// Compiles `body` and caches it under `sha`.
    fn compile_cached(
        &mut self,
        sha: &str,
        body: &[u8],
    ) -> Result<(Function, Option<bool>), CmdError> {
        let (f, shebang) = self.compile(body)?;
        self.cache.raw_set(sha, &f).map_err(internal)?;
        self.shebangs.insert(sha.to_string(), shebang);
        Ok((f, shebang))
    }

    /// The FCALL function `name`.
    pub(super) fn function(
        &self,
        name: &[u8],
    ) -> Option<(Function, crate::script::functions::Flags)> {
        let flags = *self.functions.get(name)?;
        let f = self
            .fns
            .raw_get::<Function>(self.lua.create_string(name).ok()?)
            .ok()?;
        Some((f, flags))
    }

    /// Forgets every FCALL function (before the libraries load again).
    pub(super) fn clear_functions(&mut self) -> mlua::Result<()> {
        self.functions.clear();
        self.fns = self.lua.create_table()?;
        Ok(())
    }

    /// Adds an FCALL function.
    pub(super) fn add_function(
        &mut self,
        name: &str,
        f: &Function,
        flags: crate::script::functions::Flags,
    ) -> mlua::Result<()> {
        self.fns.raw_set(name, f)?;
        self.functions.insert(name.as_bytes().to_vec(), flags);
        Ok(())
    }

    /// Sets a global while the globals stay read-only for scripts.
    fn set_global(&self, name: &str, v: impl mlua::IntoLua) -> mlua::Result<()> {
        set_readonly(&self.lua, &self.globals, false)?;
        let r = self.globals.raw_set(name, v);
        set_readonly(&self.lua, &self.globals, true)?;
        r
    }

    /// Installs the load-time `redis` of a library (`api` holds `register_function`), or
    /// (None) puts the full API back.
    pub(super) fn set_loading(&self, api: Option<Table>) -> mlua::Result<()> {
        match api {
            Some(api) => {
                let api: Table = self.loading_api.call(api)?;
                let mut seen = std::collections::HashSet::new();
                protect(&self.lua, &api, &mut seen)?;
                self.set_global("redis", api)
            }
            None => self.set_global("redis", &self.redis),
        }
    }

    /// Lets errors be caught again (after a kill).
    pub(super) fn catchable(&self) {
        // SAFETY: only writes a flag of the global state.
        unsafe {
            let _ = self.lua.exec_raw::<()>((), |l| {
                lua_setuncatchable(l, 0);
            });
        }
    }

    /// After a run: `cjson`'s settings and the collector's back to their defaults (a script
    /// may have changed them, or stopped the collector), and a full collection when the run
    /// left a lot of memory behind (Redis steps the collector after scripts too): a big
    /// script's memory goes back to the system at once instead of at the next cycle.
    pub(super) fn settle(&mut self) {
        self.cjson.reset();
        self.lua.gc_restart();
        self.lua.gc_set_pause(200);
        self.lua.gc_set_step_multiplier(200);
        let used = self.lua.used_memory();
        if used > self.settled.saturating_mul(2).max(self.settled + (8 << 20)) {
            let _ = self.lua.gc_collect();
            self.settled = self.lua.used_memory();
        } else if used < self.settled {
            self.settled = used;
        }
    }
}

/// The memory limit set on a state (`lua-memory-limit`, 0: none), in its app data for the
/// libraries.
struct MemoryLimit(usize);

/// Sets a state's memory limit (0: none).
pub(super) fn limit_memory(lua: &Lua, limit: usize) -> mlua::Result<()> {
    lua.set_memory_limit(limit)?;
    lua.set_app_data(MemoryLimit(limit));
    Ok(())
}

/// Bytes the Lua state may still allocate under `lua-memory-limit` (unbounded without one).
/// The libraries that build a result in a Rust buffer before it becomes a Lua string
/// (`cjson.encode`, `cmsgpack.pack`, `struct.pack`) stop there, so a script cannot use Rust
/// memory past the limit either.
pub(super) fn room(lua: &Lua) -> usize {
    match lua.app_data_ref::<MemoryLimit>() {
        Some(l) if l.0 > 0 => l.0.saturating_sub(lua.used_memory()),
        _ => usize::MAX,
    }
}

/// Marks `t`, every table reachable from it (keys, values, metatables) and their metatables
/// read-only.
fn protect(lua: &Lua, t: &Table, seen: &mut std::collections::HashSet<usize>) -> mlua::Result<()> {
    if !seen.insert(t.to_pointer() as usize) {
        return Ok(());
    }
    let mut inner = Vec::new();
    for pair in convert::pairs(lua, t)? {
        let (k, v) = pair?;
        for x in [k, v] {
            if let Value::Table(x) = x {
                inner.push(x);
            }
        }
    }
    inner.extend(t.metatable());
    for x in inner {
        protect(lua, &x, seen)?;
    }
    set_readonly(lua, t, true)
}

/// Sets or clears a table's read-only flag.
fn set_readonly(lua: &Lua, t: &Table, on: bool) -> mlua::Result<()> {
    // SAFETY: the table is the only argument, at the top of the stack.
    unsafe {
        lua.exec_raw::<()>(t, |l| {
            lua_enablereadonlytable(l, -1, std::os::raw::c_int::from(on));
        })
    }
}

/// The instruction-count hook: marks the script busy past the threshold and stops it when
/// asked. A plain C function (not mlua's hook, which serves the main thread only: a script
/// looping in a coroutine would never be seen), inherited by every coroutine a script creates.
///
/// The stop is an error raised after the state is made uncatchable, so no `pcall`,
/// `xpcall` handler or `coroutine.resume` of the script can keep it from reaching the host.
unsafe extern "C-unwind" fn count_hook(l: *mut ffi::lua_State, ar: *mut ffi::lua_Debug) {
    ffi::lua_getfield(l, ffi::LUA_REGISTRYINDEX, RUN_KEY.as_ptr());
    let p = ffi::lua_touserdata(l, -1) as *const RunState;
    ffi::lua_pop(l, 1);
    if p.is_null() {
        return;
    }
    // SAFETY: the engine that set the key holds the RunState for the state's whole life.
    let run = &*p;
    let msg: &'static std::ffi::CStr = match run.tick() {
        crate::script::Tick::Go => return,
        crate::script::Tick::Kill => c"Script killed by user with SCRIPT KILL...",
        crate::script::Tick::LoadTimeout => c"FUNCTION LOAD timeout",
    };
    // Where it stopped, for the reply (the error handler no longer runs): the innermost
    // frame of the script's own code, past C functions and the `=redis` helpers (`pcall`'s
    // wrapper), as the handler looks for it.
    let _ = ar;
    let mut level = 0;
    let mut frame: ffi::lua_Debug = std::mem::zeroed();
    while ffi::lua_getstack(l, level, &mut frame) != 0 {
        if ffi::lua_getinfo(l, c"Sl".as_ptr(), &mut frame) == 0 || frame.source.is_null() {
            break;
        }
        let source = std::ffi::CStr::from_ptr(frame.source);
        let what = std::ffi::CStr::from_ptr(frame.what);
        // `tail` marks a frame a tail call replaced (`return string.find(...)`): no line.
        if !matches!(what.to_bytes(), b"C" | b"tail") && source.to_bytes() != b"=redis" {
            *run.stopped_at.lock() = Some((
                source.to_string_lossy().into_owned(),
                i64::from(frame.currentline),
            ));
            break;
        }
        level += 1;
    }
    lua_setuncatchable(l, 1);
    // No Rust value with a destructor is alive past this point: lua_error does not return.
    ffi::lua_pushstring(l, msg.as_ptr());
    ffi::lua_error(l);
}

/// An EVAL script's `#!lua [flags=f1,f2]` line, as Redis 7.0 reads it: the `no-writes` flag
/// (None without a shebang) and the code with the line blanked (line numbers stay the text's).
///
/// # Errors
/// Redis's texts for another engine, an unknown option or an unknown flag.
fn eval_shebang(body: &[u8]) -> Result<(Option<bool>, std::borrow::Cow<'_, [u8]>), CmdError> {
    if !body.starts_with(b"#!") {
        return Ok((None, std::borrow::Cow::Borrowed(body)));
    }
    let end = body.iter().position(|&c| c == b'\n').unwrap_or(body.len());
    let line = String::from_utf8_lossy(&body[..end]).into_owned();
    let mut parts = line[2..].split(' ').filter(|p| !p.is_empty());
    if parts.next() != Some("lua") {
        return Err(CmdError::shebang_engine(&line));
    }
    let mut no_writes = false;
    for p in parts {
        let Some(flags) = p.strip_prefix("flags=") else {
            return Err(CmdError::shebang_option(p));
        };
        for f in flags.split(',').filter(|f| !f.is_empty()) {
            if !crate::script::functions::FLAG_NAMES.contains(&f) {
                return Err(CmdError::shebang_flag(f));
            }
            no_writes |= f == "no-writes";
        }
    }
    Ok((
        Some(no_writes),
        std::borrow::Cow::Owned(body[end..].to_vec()),
    ))
}

/// The message of a Lua error, without mlua's decorations.
pub(super) fn lua_message(e: &mlua::Error) -> String {
    match e {
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::RuntimeError(m) => m.clone(),
        mlua::Error::CallbackError { cause, .. } => lua_message(cause),
        other => other.to_string(),
    }
}

/// Runs `f` with this thread's Lua state for `scripting`'s server, building it first if
/// needed (or again after SCRIPT FLUSH).
pub(super) fn with_engine<R>(
    scripting: &crate::script::Scripting,
    f: impl FnOnce(&mut Engine) -> Result<R, CmdError>,
) -> Result<R, CmdError> {
    ENGINE.with(|cell| {
        let mut slot = cell.borrow_mut();
        let generation = scripting.generation.load(Ordering::SeqCst);
        let owner = scripting as *const _ as usize;
        let stale = slot
            .as_ref()
            .is_none_or(|e| e.generation != generation || e.owner != owner);
        if stale {
            *slot = None;
            *slot = Some(
                Engine::new(scripting)
                    .map_err(|e| CmdError::Internal(format!("lua state: {e}")))?,
            );
        }
        let engine = slot.as_mut().expect("built above");
        f(engine)
    })
}

/// The `redis` table's functions that need no writer.
fn install_redis(lua: &Lua, redis: &Table) -> mlua::Result<()> {
    redis.raw_set(
        "sha1hex",
        lua.create_function(|lua, args: MultiValue| {
            // Exactly one argument, of any type, as Redis's `lua_tolstring` reads it: a number
            // as Lua prints it, anything but a string or number (nil: an ARGV past the end) as
            // the empty string.
            let [arg] = <[Value; 1]>::try_from(args.into_vec())
                .map_err(|_| raise(lua, "wrong number of arguments"))?;
            let text = match arg {
                Value::String(s) => s.as_bytes().to_vec(),
                v @ (Value::Integer(_) | Value::Number(_)) => lua
                    .coerce_string(v)?
                    .map(|s| s.as_bytes().to_vec())
                    .unwrap_or_default(),
                _ => Vec::new(),
            };
            lua.create_string(crate::script::sha1hex(&text))
        })?,
    )?;
    redis.raw_set(
        "error_reply",
        lua.create_function(|lua, mut args: MultiValue| {
            let [Value::String(s)] = &*args.make_contiguous() else {
                return Err(raise(lua, "wrong number or type of arguments"));
            };
            let s = s.as_bytes();
            let mut text = Vec::with_capacity(s.len() + 1);
            if s.first() != Some(&b'-') {
                text.push(b'-');
            }
            text.extend_from_slice(&s);
            convert::error_table(lua, &text)
        })?,
    )?;
    redis.raw_set(
        "status_reply",
        lua.create_function(|lua, mut args: MultiValue| {
            let [Value::String(s)] = &*args.make_contiguous() else {
                return Err(raise(lua, "wrong number or type of arguments"));
            };
            let t = lua.create_table()?;
            t.raw_set("ok", s.clone())?;
            Ok(t)
        })?,
    )?;
    redis.raw_set(
        "log",
        lua.create_function(|lua, args: MultiValue| {
            if args.len() < 2 {
                return Err(raise(lua, "redis.log() requires two arguments or more."));
            }
            let level = match &args[0] {
                Value::Integer(n) => *n,
                Value::Number(n) => *n as i64,
                _ => return Err(raise(lua, "First argument must be a number (log level).")),
            };
            if !(0..=3).contains(&level) {
                return Err(raise(lua, "Invalid debug level."));
            }
            let msg: Vec<String> = args
                .iter()
                .skip(1)
                .map(|v| match v {
                    Value::String(s) => s.to_string_lossy(),
                    Value::Integer(n) => n.to_string(),
                    Value::Number(n) => resp::format_double(*n),
                    _ => String::new(),
                })
                .collect();
            let msg = msg.join(" ");
            match level {
                0 => tracing::debug!("script: {msg}"),
                1 | 2 => tracing::info!("script: {msg}"),
                _ => tracing::warn!("script: {msg}"),
            }
            Ok(())
        })?,
    )?;
    redis.raw_set(
        "set_repl",
        lua.create_function(|lua, mut args: MultiValue| {
            let [v] = &*args.make_contiguous() else {
                return Err(raise(lua, "redis.set_repl() requires one argument."));
            };
            let ok = match v {
                Value::Integer(n) => (0..=3).contains(n),
                Value::Number(n) => (0.0..=3.0).contains(n),
                _ => false,
            };
            if !ok {
                return Err(raise(
                    lua,
                    "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.",
                ));
            }
            // Relis has no replication or AOF: nothing to choose.
            Ok(())
        })?,
    )?;
    redis.raw_set(
        "acl_check_cmd",
        lua.create_function(|lua, args: MultiValue| {
            let Some(Value::String(_)) = args.front() else {
                return Err(raise(
                    lua,
                    "Please specify at least one argument for this redis lib call",
                ));
            };
            let mut argv = Vec::with_capacity(args.len());
            for v in args.iter() {
                match v {
                    Value::String(s) => argv.push(Bytes::copy_from_slice(&s.as_bytes())),
                    Value::Integer(n) => argv.push(Bytes::from(n.to_string())),
                    Value::Number(n) => argv.push(Bytes::from(resp::format_double(*n))),
                    _ => {
                        return Err(raise(
                            lua,
                            "Lua redis lib command arguments must be strings or integers",
                        ))
                    }
                }
            }
            let table = CmdTable::get();
            let invalid = || raise(lua, "Invalid command passed to redis.acl_check_cmd()");
            let (mut idx, mut spec) = table.lookup(&argv[0]).ok_or_else(invalid)?;
            if !spec.subcommands.is_empty() && argv.len() > 1 {
                if let Some((i, s)) = table.lookup_sub(spec, &argv[1]) {
                    (idx, spec) = (i, s);
                }
            }
            if !spec.arity_ok(argv.len()) {
                return Err(invalid());
            }
            // The script's user, as Redis's luaRedisAclCheckCmdPermissionsCommand checks it.
            let allowed = Current::with(|st| st.cx.user.check(idx, spec, &argv).is_ok());
            Ok(allowed.unwrap_or(true))
        })?,
    )?;
    redis.raw_set(
        "replicate_commands",
        lua.create_function(|_, _: MultiValue| Ok(true))?,
    )?;
    redis.raw_set(
        "breakpoint",
        lua.create_function(|_, _: MultiValue| Ok(false))?,
    )?;
    redis.raw_set("debug", lua.create_function(|_, _: MultiValue| Ok(()))?)?;
    for (name, v) in [
        ("LOG_DEBUG", 0),
        ("LOG_VERBOSE", 1),
        ("LOG_NOTICE", 2),
        ("LOG_WARNING", 3),
        ("REPL_NONE", 0),
        ("REPL_AOF", 1),
        ("REPL_SLAVE", 2),
        ("REPL_REPLICA", 2),
        ("REPL_ALL", 3),
    ] {
        redis.raw_set(name, v)?;
    }
    redis.raw_set("REDIS_VERSION", crate::REDIS_VERSION)?;
    redis.raw_set("REDIS_VERSION_NUM", 0x0007000f)?;
    Ok(())
}

/// A Lua error raised from Rust with Redis's text `ERR msg`.
fn raise(_lua: &Lua, msg: &str) -> mlua::Error {
    rust_error(msg)
}

/// A Lua error raised from a Rust function, carrying the complete Redis error text `ERR msg`
/// (mlua raises errors from Rust as wrapped values; the handler turns them into strings and
/// the error handler and `pcall` unwrap it).
pub(super) fn rust_error(msg: &str) -> mlua::Error {
    raw_error(&CmdError::err(msg).message())
}

/// [`rust_error`] with a complete error text (code word included).
fn raw_error(text: &str) -> mlua::Error {
    mlua::Error::runtime(format!("\u{1}redis-table:{text}"))
}

/// A plain error message raised from Rust, positioned as `luaL_error` does it: prefixed with
/// the calling Lua function's `source:line: ` (nothing when called from C, as by `pcall`).
pub(super) fn lua_error(lua: &Lua, msg: &str) -> mlua::Error {
    let at = lua
        .inspect_stack(1, |d| {
            let line = d.current_line().unwrap_or(0);
            let src = d.source().short_src.map(|s| s.into_owned());
            (line > 0).then(|| format!("{}:{line}: ", src.unwrap_or_default()))
        })
        .flatten()
        .unwrap_or_default();
    mlua::Error::runtime(format!("\u{1}redis-string:{at}{msg}"))
}

/// An error raised from Rust with a plain message and no position, as Lua's own errors
/// raised inside a C function read (`table index is nil`).
pub(super) fn plain_error(msg: &str) -> mlua::Error {
    mlua::Error::runtime(format!("\u{1}redis-string:{msg}"))
}

thread_local! {
    /// The run in progress on this thread (the writer's), for `redis.call` and friends, which
    /// are created once with the Lua state. Null outside a run.
    static CURRENT: std::cell::Cell<*mut ()> = const { std::cell::Cell::new(std::ptr::null_mut()) };
}

/// Binds a run to [`CURRENT`] for as long as it lives.
struct Current;

impl Current {
    fn bind(st: &mut RunCx<'_, '_>) -> Current {
        CURRENT.with(|c| c.set(st as *mut RunCx<'_, '_> as *mut ()));
        Current
    }

    /// Runs `f` on the current run, if there is one.
    fn with<R>(f: impl FnOnce(&mut RunCx<'_, '_>) -> R) -> Option<R> {
        let p = CURRENT.with(|c| c.replace(std::ptr::null_mut()));
        if p.is_null() {
            return None;
        }
        // SAFETY: `p` was set by `Current::bind` from a `RunCx` that outlives the binding (the
        // guard is dropped before it), on this thread; taking it out of the cell while `f` runs
        // makes a nested use see no run instead of a second `&mut`.
        let st = unsafe { &mut *(p as *mut RunCx<'_, '_>) };
        let r = f(st);
        CURRENT.with(|c| c.set(p));
        Some(r)
    }
}

impl Drop for Current {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(std::ptr::null_mut()));
    }
}

/// `redis.call`, `redis.pcall` and `redis.setresp`: they act on the run in progress.
fn install_run_functions(lua: &Lua, redis: &Table) -> mlua::Result<()> {
    // Rust functions, not Lua wrappers: `return redis.call(...)` must not be a Lua tail call,
    // or the error handler would lose the script's line.
    redis.raw_set(
        "call",
        lua.create_function(|lua, args: MultiValue| {
            match Current::with(|st| redis_call(lua, st, args)) {
                Some(r) => match r? {
                    Ok(v) => Ok(v),
                    Err(text) => Err(raw_error(&String::from_utf8_lossy(&text))),
                },
                None => Err(raise(lua, "redis.call can only be used inside a script")),
            }
        })?,
    )?;
    redis.raw_set(
        "pcall",
        lua.create_function(|lua, args: MultiValue| {
            match Current::with(|st| redis_call(lua, st, args)) {
                Some(r) => match r? {
                    Ok(v) => Ok(v),
                    Err(text) => Ok(Value::Table(convert::error_table(lua, &text)?)),
                },
                None => Err(raise(lua, "redis.pcall can only be used inside a script")),
            }
        })?,
    )?;
    redis.raw_set(
        "setresp",
        lua.create_function(|lua, mut args: MultiValue| {
            let v = match &*args.make_contiguous() {
                [Value::Integer(n)] => *n as f64,
                [Value::Number(n)] => *n,
                [_] => -1.0,
                _ => return Err(raise(lua, "redis.setresp() requires one argument.")),
            };
            if v != 2.0 && v != 3.0 {
                return Err(raise(lua, "RESP version must be 2 or 3."));
            }
            Current::with(|st| st.resp3 = v == 3.0);
            Ok(())
        })?,
    )?;
    Ok(())
}

/// The mutable part of a run that `redis.call` needs.
struct RunCx<'a, 'w> {
    w: &'a mut relis::Writer<'w>,
    cx: Cx,
    resp3: bool,
    readonly: bool,
    run: Arc<RunState>,
}

/// Runs a script or function on the writer, as one unit of the current group commit.
///
/// Writes made before a runtime error are kept, as in Redis (no rollback); a storage failure
/// under any command fails the whole group commit (see `run_write_feeding`).
///
/// # Errors
/// The script's error reply (compile errors, NOSCRIPT, runtime errors).
pub fn run(w: &mut relis::Writer<'_>, cx: &Cx, call: Call) -> Result<Frame, CmdError> {
    let scripting = &cx.server.scripting;
    let threshold = busy_threshold(cx);
    if matches!(call.target, Target::Function(_)) {
        // Over PostgreSQL, the libraries another node changed (FCALL declares them).
        super::functions::refresh(scripting, w);
    }
    with_engine(scripting, |engine| {
        let (func, name, function, flags_ro): (_, std::borrow::Cow<'_, str>, _, _) =
            match &call.target {
                Target::Body(body) => {
                    let sha = crate::script::sha1hex(body);
                    let (f, shebang) = match engine.cached(&sha) {
                        Some(c) => c,
                        None => {
                            let c = engine.compile_cached(&sha, body)?;
                            scripting.remember(body.clone());
                            c
                        }
                    };
                    check_ro(call.readonly, shebang)?;
                    (f, sha.into(), false, shebang == Some(true))
                }
                Target::Sha(sha) => {
                    // Clients send SHA1s in lower case: only another case costs a copy.
                    let sha: std::borrow::Cow<'_, str> = match std::str::from_utf8(sha) {
                        Ok(s) if !s.bytes().any(|b| b.is_ascii_uppercase()) => s.into(),
                        _ => String::from_utf8_lossy(sha).to_ascii_lowercase().into(),
                    };
                    let (f, shebang) = match engine.cached(&sha) {
                        Some(c) => c,
                        None => {
                            let body: Option<Bytes> =
                                scripting.scripts.lock().get(sha.as_ref()).cloned();
                            let Some(body) = body else {
                                return Err(CmdError::NOSCRIPT);
                            };
                            engine.compile_cached(&sha, &body)?
                        }
                    };
                    check_ro(call.readonly, shebang)?;
                    (f, sha, false, shebang == Some(true))
                }
                Target::Function(name) => {
                    super::functions::sync(engine, scripting)?;
                    let Some((f, flags)) = engine.function(name) else {
                        return Err(CmdError::FUNCTION_NOT_FOUND);
                    };
                    if call.readonly && !flags.no_writes {
                        return Err(CmdError::SCRIPT_RO_WRITE);
                    }
                    (
                        f,
                        String::from_utf8_lossy(name).into_owned().into(),
                        true,
                        flags.no_writes,
                    )
                }
            };
        let limit = scripting.lua_memory_limit.load(Ordering::Relaxed) as usize;
        if engine.limit != limit {
            limit_memory(&engine.lua, limit).map_err(internal)?;
            engine.limit = limit;
        }
        // KEYS and ARGV are built element by element: no Rust handle per argument.
        let keys = sequence(&engine.lua, &call.keys).map_err(internal)?;
        let args = sequence(&engine.lua, &call.args).map_err(internal)?;
        if !function {
            // A function gets KEYS and ARGV as its two arguments.
            engine.set_global("KEYS", &keys).map_err(internal)?;
            engine.set_global("ARGV", &args).map_err(internal)?;
        }
        let run = scripting.run.clone();
        let mut state = RunCx {
            w,
            cx: cx.clone(),
            resp3: false,
            readonly: call.readonly || flags_ro,
            run: run.clone(),
        };
        run.begin(function, threshold);
        if function {
            *run.current.lock() = Some((name.to_string(), call.command.clone()));
        }
        let result = {
            let _bound = Current::bind(&mut state);
            let out: mlua::Result<MultiValue> = if function {
                engine
                    .bind
                    .call::<Function>((func, keys, args))
                    .and_then(|bound| engine.xpcall.call((bound, engine.handler.clone())))
            } else {
                engine.xpcall.call((func, engine.handler.clone()))
            };
            engine.catchable();
            let killed = run.kill.load(Ordering::SeqCst);
            match out {
                _ if killed => Err(killed_reply(&run, &name)),
                Ok(out) => {
                    let resp3 = Current::with(|st| st.resp3).unwrap_or(false);
                    let mut it = out.into_iter();
                    let ok = matches!(it.next(), Some(Value::Boolean(true)));
                    let v = it.next().unwrap_or(Value::Nil);
                    if ok {
                        Ok(convert::to_frame(&engine.lua, &v, resp3))
                    } else {
                        Err(error_reply(&v, &name))
                    }
                }
                Err(e) => Err(CmdError::script_run(&name, clip(&lua_message(&e)))),
            }
        };
        let aborted = run.aborted.load(Ordering::SeqCst);
        run.end();
        engine.settle();
        scripting
            .lua_memory
            .store(engine.lua.used_memory() as u64, Ordering::Relaxed);
        if aborted {
            // A storage-class error: the writer abandons the whole group commit.
            return Err(CmdError::Storage(relis::Error::Closed));
        }
        result
    })
}

/// A Lua table holding `items` in order, built without a Rust handle per element.
fn sequence(lua: &Lua, items: &[Bytes]) -> mlua::Result<Table> {
    let t = lua.create_table_with_capacity(items.len(), 0)?;
    for (i, b) in items.iter().enumerate() {
        t.raw_set(i + 1, lua.create_string(b)?)?;
    }
    Ok(t)
}

/// SCRIPT LOAD: compiles `body` (so a syntax error is reported now) and caches it.
///
/// # Errors
/// `ERR Error compiling script ...`.
pub fn load(cx: &Cx, body: Bytes) -> Result<String, CmdError> {
    let scripting = &cx.server.scripting;
    with_engine(scripting, |engine| {
        let sha = crate::script::sha1hex(&body);
        if engine.cached(&sha).is_none() {
            engine.compile_cached(&sha, &body)?;
        }
        Ok(scripting.remember(body))
    })
}

/// EVAL_RO of a script whose shebang does not say `no-writes`.
fn check_ro(readonly: bool, shebang: Option<bool>) -> Result<(), CmdError> {
    if readonly && shebang == Some(false) {
        return Err(CmdError::SCRIPT_RO_WRITE);
    }
    Ok(())
}

fn internal(e: mlua::Error) -> CmdError {
    CmdError::Internal(format!("lua: {e}"))
}

/// `busy-reply-threshold` (alias `lua-time-limit`) in milliseconds.
fn busy_threshold(cx: &Cx) -> u64 {
    cx.server.scripting.busy_ms.load(Ordering::Relaxed)
}

/// At most 100 bytes of a message, as Redis's `%.100s`.
fn clip(s: &str) -> &str {
    let mut end = s.len().min(100);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The reply to a killed script: Redis's text, with where the hook stopped it.
fn killed_reply(run: &RunState, name: &str) -> CmdError {
    let at = run.stopped_at.lock().take();
    CmdError::script_killed(
        name,
        at.as_ref().map(|(source, line)| (source.as_str(), *line)),
    )
}

/// The reply to a script that raised `v` (the handler's table): `-<err> script: <name>, on
/// <source>:<line>.` as Redis's `luaCallFunction` writes it; an error that is not a table (a
/// memory error calls no handler) is `Error running script <name>, <message>`.
fn error_reply(v: &Value, name: &str) -> CmdError {
    let Value::Table(t) = v else {
        let msg = match v {
            Value::String(s) => s.to_string_lossy(),
            _ => "execution failure".to_string(),
        };
        return CmdError::script_run(name, clip(&msg));
    };
    let mut msg = t
        .raw_get::<mlua::String>("err")
        .map(|s| s.to_string_lossy())
        .unwrap_or_default();
    let source = t.raw_get::<Option<mlua::String>>("source").ok().flatten();
    let line = t.raw_get::<Option<i64>>("line").ok().flatten();
    if let (Some(source), Some(line)) = (source, line) {
        msg = format!(
            "{msg} script: {name}, on {}:{line}.",
            source.to_string_lossy()
        );
    }
    CmdError::text(sanitize(&msg))
}

/// `redis.call` / `redis.pcall`: the command's reply as a Lua value, or its error text.
fn redis_call(
    lua: &Lua,
    st: &mut RunCx<'_, '_>,
    args: MultiValue,
) -> mlua::Result<Result<Value, Vec<u8>>> {
    // Every argument is copied into one buffer and sliced from it: one allocation per call,
    // not one per argument.
    let size = args
        .iter()
        .map(|v| match v {
            Value::String(s) => s.as_bytes().len(),
            _ => resp::DOUBLE_BUF_LEN,
        })
        .sum();
    let mut buf = bytes::BytesMut::with_capacity(size);
    let mut ends = Vec::with_capacity(args.len());
    for v in &args {
        match v {
            Value::String(s) => buf.extend_from_slice(&s.as_bytes()),
            Value::Integer(n) => buf.extend_from_slice(resp::format_double(*n as f64).as_bytes()),
            Value::Number(n) => buf.extend_from_slice(resp::format_double(*n).as_bytes()),
            _ => return Ok(Err(CmdError::SCRIPT_ARGUMENT_TYPE.as_bytes().to_vec())),
        }
        ends.push(buf.len());
    }
    let all = buf.freeze();
    let mut start = 0;
    let argv: Vec<Bytes> = ends
        .into_iter()
        .map(|end| {
            let a = all.slice(start..end);
            start = end;
            a
        })
        .collect();
    if argv.is_empty() {
        return Ok(Err(CmdError::SCRIPT_NO_ARGUMENTS.as_bytes().to_vec()));
    }
    let reply = match dispatch(st, argv) {
        Ok(f) => f,
        Err(e) => return Ok(Err(e.message().into_bytes())),
    };
    if let Frame::Error(e) = &reply {
        return Ok(Err(convert::error_text(e)));
    }
    Ok(Ok(convert::to_lua(lua, reply, st.resp3)?))
}

/// Records a script's denied command in ACL LOG (context `lua`).
fn log_denial(st: &RunCx<'_, '_>, d: crate::acl::Denied, spec: &crate::cmd::Spec, argv: &[Bytes]) {
    let server = &st.cx.server;
    let user = &st.cx.user;
    let info = server.clients.lock().get(&st.cx.client_id).cloned();
    match info {
        Some(info) => crate::dispatch::acl_log(
            server,
            &info,
            d.reason(),
            "lua",
            d.object(spec, argv),
            &user.name,
        ),
        None => server.acl.log(crate::acl::LogEntry {
            count: 1,
            reason: d.reason(),
            context: "lua",
            object: d.object(spec, argv),
            username: user.name.clone(),
            ctime_ms: crate::state::unix_ms(),
            client_info: String::new(),
        }),
    }
}

/// Runs one command line for a script, as Redis's `scriptCall` checks it.
fn dispatch(st: &mut RunCx<'_, '_>, argv: Vec<Bytes>) -> Result<Frame, CmdError> {
    let table = CmdTable::get();
    let (mut idx, mut spec) = table
        .lookup(&argv[0])
        .ok_or(CmdError::SCRIPT_UNKNOWN_COMMAND)?;
    let mut skip = 1;
    if !(spec.subcommands.is_empty() || argv.len() < 2 && spec.arity_ok(argv.len())) {
        if argv.len() < 2 {
            return Err(CmdError::SCRIPT_ARITY);
        }
        (idx, spec) = table
            .lookup_sub(spec, &argv[1])
            .ok_or(CmdError::SCRIPT_UNKNOWN_COMMAND)?;
        skip = 2;
    }
    if !spec.arity_ok(argv.len()) {
        return Err(CmdError::SCRIPT_ARITY);
    }
    if spec.has(Flags::NOSCRIPT) {
        return Err(CmdError::SCRIPT_NOSCRIPT_COMMAND);
    }
    // As Redis's scriptVerifyACL: the script's user must be allowed the command, its keys and
    // channels; a denial is logged with context `lua`.
    if !st.cx.user.unrestricted() {
        if let Err(d) = st.cx.user.check(idx, spec, &argv) {
            log_denial(st, d, spec, &argv);
            return Err(d.script_error());
        }
    }
    let write = spec.has(Flags::WRITE);
    // Redis refuses what may replicate (PUBLISH, PFCOUNT's cache write) as it refuses writes.
    if (write || crate::spec::MAY_REPLICATE.contains(&spec.name)) && st.readonly {
        return Err(CmdError::SCRIPT_READONLY);
    }
    // A read-only replica's scripts may read, not write (Redis's scriptCall checks writes
    // against `replica-read-only`).
    if write {
        if let Some(e) = st.cx.server.replication.refuse_write(&st.cx.server) {
            return Err(e);
        }
    }
    if st.cx.server.monitors.active() && crate::monitor::shown(spec) {
        let limit = st.cx.server.pubsub.replica_limit.load();
        st.cx
            .server
            .monitors
            .feed(st.cx.db, crate::monitor::Source::Lua, &argv, 0, limit);
    }
    let cx = Cx {
        db: st.cx.db,
        proto: if st.resp3 {
            Protocol::Resp3
        } else {
            Protocol::Resp2
        },
        server: st.cx.server.clone(),
        user: st.cx.user.clone(),
        client_id: st.cx.client_id,
        context: "lua",
    };
    // A script's commands are slow-logged too, as Redis logs them (client `?:0`).
    let line = cx
        .server
        .observe
        .slowlog
        .enabled()
        .then(|| crate::observe::Line::new(&argv, None));
    let line = line.as_ref();
    let t = Instant::now();
    let first = argv.get(1).cloned();
    let typed = argv.first().cloned().unwrap_or_default();
    let rest: Vec<Bytes> = match spec.name {
        "publish" | "spublish" | "info" => argv[1..].to_vec(),
        _ => Vec::new(),
    };
    match crate::dispatch::parse(spec, argv, skip) {
        Err(e) => {
            record(&cx.server, idx, t, true, line);
            Err(e)
        }
        Ok(Parsed::Read(c)) => {
            let r = c.exec(&*st.w, &cx);
            record(&cx.server, idx, t, r.is_err(), line);
            r
        }
        Ok(Parsed::Write(c)) => {
            if write {
                st.run.wrote.store(true, Ordering::SeqCst);
            }
            // Blocked clients are served after the script, from the keys it created (the
            // EVAL or FCALL around it watches them; see client::run_write).
            Ok(run_write_feeding(st.w, &cx, &*c, idx, line, None))
        }
        Ok(Parsed::Conn(c)) => {
            let r = match spec.name {
                "select" => match c.selects() {
                    Some(d) if d < st.w.databases() => {
                        st.cx.db = d;
                        Ok(Frame::Simple(Bytes::from_static(b"OK")))
                    }
                    _ => Err(CmdError::DbIndexOutOfRange),
                },
                "time" => {
                    let now = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .unwrap_or_default();
                    Ok(Frame::Array(vec![
                        Frame::Bulk(Bytes::from(now.as_secs().to_string())),
                        Frame::Bulk(Bytes::from(now.subsec_micros().to_string())),
                    ]))
                }
                "echo" => Ok(Frame::Bulk(first.unwrap_or_default())),
                // Only XREAD with BLOCK is a connection command; Redis refuses it here.
                // (Named as the script typed it, as Redis names it.)
                "xread" | "xreadgroup" => Err(CmdError::script_block(&typed)),
                "lastsave" => Ok(Frame::Integer(cx.server.lastsave.load(Ordering::Relaxed))),
                // Messages go out at once, as Redis publishes them from a script.
                "publish" | "spublish" => {
                    let n = cx.server.pubsub.publish_everywhere(
                        &rest[0],
                        &rest[1],
                        spec.name == "spublish",
                    );
                    Ok(Frame::Integer(n as i64))
                }
                "info" => crate::cmd::server::info::text_for(&cx.server, st.w, rest)
                    .map(|text| Frame::Verbatim {
                        format: *b"txt",
                        data: Bytes::from(text),
                    })
                    .map_err(CmdError::from),
                "ping" => Ok(match first {
                    Some(m) => Frame::Bulk(m),
                    None => Frame::Simple(Bytes::from_static(b"PONG")),
                }),
                "pfselftest" => crate::cmd::hyperloglog::pfselftest::run(&cx.server),
                // Connection and server commands run on the connection's task, which a
                // script on the writer cannot reach.
                _ => Err(CmdError::SCRIPT_NOSCRIPT_COMMAND),
            };
            record(&cx.server, idx, t, r.is_err(), line);
            r
        }
    }
}
