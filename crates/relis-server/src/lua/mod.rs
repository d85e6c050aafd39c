//! The Lua engine, as Redis 7.0 runs scripts: EVAL/EVALSHA scripts and FUNCTION libraries run
//! in one Lua 5.1 state on the writer thread, as one write job (so one SQLite transaction, and
//! nothing else writes meanwhile: Redis's atomicity). `redis.call` runs commands through the
//! same command table and dispatch as the network does. The state the connections share is
//! `crate::script::Scripting`.
//!
//! - `engine`: the Lua state (a thread-local of the writer thread), the sandbox, `redis.*`.
//! - `functions`: loading FUNCTION libraries (`#!lua name=`, `redis.register_function`).
//! - `convert`: Redis reply <-> Lua value conversions, exactly Redis's.
//! - `cjson`, `cmsgpack`, `lstruct` (`struct`), `bit`: the libraries Redis scripts rely on.

mod bit;
mod cjson;
mod cmsgpack;
mod convert;
mod engine;
pub mod functions;
#[doc(hidden)]
pub mod fuzz;
mod lstruct;
mod random;

pub use engine::{load, run, Call, Target};

use crate::script::Scripting;

/// Loads the function libraries stored in the database (at start-up; over PostgreSQL the
/// shared set, which this node then has: see `functions::refresh`). A library that no longer
/// loads is left out, with a warning in the log.
pub fn load_stored(scripting: &Scripting, db: &relis::Db) {
    let stored = if db.backend() == "postgres" {
        let (tx, rx) = std::sync::mpsc::channel();
        db.read_async_keys(
            vec![relis::functions_declaration(false)],
            |r| r.take_function_libraries().unwrap_or_default(),
            move |res| {
                let _ = tx.send(res);
            },
        );
        rx.recv().unwrap_or(Err(relis::Error::Closed))
    } else {
        db.read(|r| r.function_libraries())
    };
    let stored = match stored {
        Ok(l) => l,
        Err(e) => {
            tracing::error!("cannot read the function libraries: {e}");
            return;
        }
    };
    // The libraries run on a thread with the writer's stack (64 MiB; the libraries'
    // decoders recurse as deep as Lua's stack allows), not on the caller's.
    let libs = std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("relis-functions".into())
            .stack_size(64 << 20)
            .spawn_scoped(s, || {
                let mut libs = std::collections::BTreeMap::new();
                for (name, code) in stored {
                    match functions::evaluate(scripting, &code) {
                        Ok(lib) => {
                            libs.insert(lib.name.clone(), lib);
                        }
                        Err(e) => {
                            tracing::warn!("function library {name} does not load: {}", e.message())
                        }
                    }
                }
                libs
            })
            .map_err(|e| e.to_string())
            .and_then(|t| t.join().map_err(|_| "it panicked".to_string()))
            .unwrap_or_else(|e| {
                tracing::error!("cannot load the function libraries: {e}");
                Default::default()
            })
    });
    scripting.functions.replace_all(libs);
}
