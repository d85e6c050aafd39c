//! Scripting state, what the connections and the writer share: [`Scripting`] (the script
//! cache, the running script's state for BUSY and SCRIPT KILL, the function libraries in
//! [`functions`]). The Lua engine that runs scripts is `crate::lua`; this module knows no
//! command and no Lua.

pub mod functions;

use crate::error::CmdError;
use bytes::Bytes;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Scripting state shared by the connections and the writer thread.
#[derive(Default)]
pub struct Scripting {
    /// EVAL / SCRIPT LOAD bodies by lower-case SHA1 hex.
    pub scripts: Mutex<HashMap<String, Bytes>>,
    /// Bumped by SCRIPT FLUSH: the writer's Lua state is rebuilt (Redis resets it too).
    pub generation: AtomicU64,
    /// The script running now, if any.
    pub run: Arc<RunState>,
    /// Loaded function libraries.
    pub functions: functions::Registry,
    /// Bytes the writer's Lua state used after the last script (INFO used_memory_lua).
    pub lua_memory: AtomicU64,
    /// `busy-reply-threshold` in milliseconds, kept here so a script start does not search
    /// the configuration ([`Scripting::configure`]).
    pub busy_ms: AtomicU64,
    /// `lua-memory-limit` in bytes (0: none), applied to the Lua state at each run.
    pub lua_memory_limit: AtomicU64,
}

impl Scripting {
    /// Takes `busy-reply-threshold` from the configuration (at start-up and after CONFIG SET).
    pub fn configure(&self, config: &crate::config::Config) {
        let ms = config
            .passive
            .iter()
            .find(|(n, _)| *n == "busy-reply-threshold")
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or(5000);
        self.busy_ms.store(ms, Ordering::Relaxed);
        self.lua_memory_limit
            .store(config.lua_memory_limit as u64, Ordering::Relaxed);
    }
}

/// What the other connections can see of the running script.
#[derive(Default)]
pub struct RunState {
    /// A script is running.
    pub running: AtomicBool,
    /// It is a function (FCALL), not an EVAL script.
    pub function: AtomicBool,
    /// It has run past `busy-reply-threshold`: other clients get BUSY.
    pub busy: AtomicBool,
    /// SCRIPT KILL / FUNCTION KILL asked it to stop.
    pub kill: AtomicBool,
    /// It has run a write command (it cannot be killed any more).
    pub wrote: AtomicBool,
    /// `busy-reply-threshold` in milliseconds, as it was when the script began.
    pub threshold_ms: AtomicU64,
    /// When it began.
    pub started: Mutex<Option<Instant>>,
    /// SHUTDOWN NOSAVE stopped it: its writes must not commit.
    pub aborted: AtomicBool,
    /// A library's code is loading (FUNCTION LOAD), under its own time limit.
    pub loading: AtomicBool,
    /// The running function's name and command line (FUNCTION STATS).
    pub current: Mutex<Option<(String, Vec<Bytes>)>>,
    /// Where the hook stopped the script (chunk name, line), for the reply.
    pub stopped_at: Mutex<Option<(String, i64)>>,
}

impl RunState {
    /// A script starts (the engine calls it): it may turn busy after `threshold_ms`.
    pub fn begin(&self, function: bool, threshold_ms: u64) {
        *self.started.lock() = Some(Instant::now());
        self.threshold_ms.store(threshold_ms, Ordering::Relaxed);
        self.function.store(function, Ordering::Relaxed);
        self.kill.store(false, Ordering::Relaxed);
        self.aborted.store(false, Ordering::Relaxed);
        self.wrote.store(false, Ordering::Relaxed);
        self.busy.store(false, Ordering::Relaxed);
        *self.stopped_at.lock() = None;
        self.running.store(true, Ordering::SeqCst);
    }

    /// The script has ended (the engine calls it).
    pub fn end(&self) {
        self.running.store(false, Ordering::SeqCst);
        self.busy.store(false, Ordering::SeqCst);
        self.kill.store(false, Ordering::Relaxed);
        *self.started.lock() = None;
        *self.current.lock() = None;
    }

    /// Called from the Lua hook: marks the script busy once it is past the threshold, and
    /// says whether it must stop (and why).
    pub fn tick(&self) -> Tick {
        if self.loading.load(Ordering::Relaxed) {
            // FUNCTION LOAD gives a library's top level 500 ms, as Redis does.
            let late = self
                .started
                .lock()
                .is_some_and(|t| t.elapsed().as_millis() >= 500);
            return if late { Tick::LoadTimeout } else { Tick::Go };
        }
        if !self.busy.load(Ordering::Relaxed) {
            let past = self.started.lock().is_some_and(|t| {
                t.elapsed().as_millis() as u64 >= self.threshold_ms.load(Ordering::Relaxed)
            });
            if past {
                self.busy.store(true, Ordering::SeqCst);
            }
        }
        if self.kill.load(Ordering::SeqCst) {
            Tick::Kill
        } else {
            Tick::Go
        }
    }

    /// SHUTDOWN NOSAVE: stops the running script whether or not it has written; the run then
    /// fails the group commit so none of its writes stay.
    pub fn abort(&self) {
        if self.running.load(Ordering::SeqCst) {
            self.aborted.store(true, Ordering::SeqCst);
            self.kill.store(true, Ordering::SeqCst);
        }
    }

    /// The BUSY error other clients get now, if the running script is past the threshold.
    pub fn busy_error(&self) -> Option<CmdError> {
        if !self.busy.load(Ordering::Relaxed) {
            return None;
        }
        Some(if self.function.load(Ordering::Relaxed) {
            CmdError::BUSY_FUNCTION
        } else {
            CmdError::BUSY_SCRIPT
        })
    }

    /// SCRIPT KILL (`eval` true) or FUNCTION KILL: the reply, as Redis's `scriptKill`.
    ///
    /// # Errors
    /// NOTBUSY, UNKILLABLE, or BUSY when the other kind of script is running.
    pub fn kill(&self, eval: bool) -> Result<(), CmdError> {
        if !self.running.load(Ordering::SeqCst) {
            return Err(CmdError::NOTBUSY);
        }
        if self.wrote.load(Ordering::SeqCst) {
            return Err(CmdError::UNKILLABLE);
        }
        let function = self.function.load(Ordering::Relaxed);
        if eval && function {
            return Err(CmdError::BUSY_FUNCTION);
        }
        if !eval && !function {
            return Err(CmdError::BUSY_SCRIPT);
        }
        self.kill.store(true, Ordering::SeqCst);
        Ok(())
    }
}

/// What the Lua hook does next.
pub enum Tick {
    /// Go on.
    Go,
    /// Stop: SCRIPT/FUNCTION KILL or SHUTDOWN NOSAVE.
    Kill,
    /// Stop: FUNCTION LOAD's top level ran too long.
    LoadTimeout,
}

/// Commands Redis still serves while a script is busy (its `allow_busy` flag).
pub const ALLOW_BUSY: &[&str] = &[
    "watch",
    "unwatch",
    "hello",
    "shutdown",
    "quit",
    "auth",
    "multi",
    "discard",
    "function|kill",
    "function|stats",
    "script|kill",
    "reset",
];

/// The lower-case SHA1 hex of `body`.
pub fn sha1hex(body: &[u8]) -> String {
    sha1_smol::Sha1::from(body).digest().to_string()
}

impl Scripting {
    /// Caches a script body (SCRIPT LOAD, EVAL) and returns its SHA1.
    pub fn remember(&self, body: Bytes) -> String {
        let sha = sha1hex(&body);
        self.scripts.lock().entry(sha.clone()).or_insert(body);
        sha
    }

    /// INFO memory's scripting figures: (Lua state bytes, script bodies' bytes, cached
    /// scripts).
    pub fn memory(&self) -> (u64, u64, u64) {
        let scripts = self.scripts.lock();
        let bytes = scripts.values().map(|b| b.len() as u64).sum();
        (
            self.lua_memory.load(Ordering::Relaxed),
            bytes,
            scripts.len() as u64,
        )
    }

    /// The bytes of the loaded function libraries' code (MEMORY STATS `functions.caches`).
    pub fn functions_memory(&self) -> u64 {
        let libs = self.functions.libraries.lock();
        libs.values().map(|l| l.code.len() as u64).sum()
    }

    /// SCRIPT FLUSH: forgets every cached script.
    pub fn flush(&self) {
        self.scripts.lock().clear();
        self.generation.fetch_add(1, Ordering::SeqCst);
    }
}
