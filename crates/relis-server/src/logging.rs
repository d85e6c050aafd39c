//! The log level at run time: `loglevel` (Redis's names) mapped onto tracing's levels, and a
//! hook through which `CONFIG SET loglevel` changes the running logger. The binary installs the
//! hook when it sets up logging; a server embedded without it (the tests) has none.

use std::sync::OnceLock;

/// Changes the running logger's level (takes a tracing filter directive).
type Reloader = Box<dyn Fn(&str) + Send + Sync>;

static RELOADER: OnceLock<Reloader> = OnceLock::new();

/// The tracing level for Redis's `loglevel` name: `debug`, `verbose` and `notice` (both info:
/// tracing has no level between), `warning`, and anything else (`nothing`) errors only.
pub fn tracing_level(loglevel: &str) -> &'static str {
    match loglevel {
        "debug" => "debug",
        "verbose" | "notice" => "info",
        "warning" => "warn",
        _ => "error",
    }
}

/// Installs the hook [`apply`] calls (once; later calls are ignored).
pub fn set_reloader(f: impl Fn(&str) + Send + Sync + 'static) {
    let _ = RELOADER.set(Box::new(f));
}

/// Applies `loglevel` (Redis's name) to the running logger, if a hook is installed.
pub fn apply(loglevel: &str) {
    if let Some(f) = RELOADER.get() {
        f(tracing_level(loglevel));
    }
}
