//! The loaded FUNCTION libraries, as the connections and the writer share them (loading and
//! running them is `lua::functions`'s job).

use bytes::Bytes;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// The flags `redis.register_function` accepts, in the order FUNCTION LIST shows them.
pub const FLAG_NAMES: &[&str] = &[
    "no-writes",
    "allow-oom",
    "allow-stale",
    "no-cluster",
    "allow-cross-slot-keys",
];

/// A function's flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    /// `no-writes`: write commands are refused; FCALL_RO may call it.
    pub no_writes: bool,
    /// Bit `i` set when flag [`FLAG_NAMES`]`[i]` was given.
    pub bits: u8,
}

impl Flags {
    /// The flag names, in FUNCTION LIST's order.
    pub fn names(&self) -> Vec<&'static str> {
        FLAG_NAMES
            .iter()
            .enumerate()
            .filter(|(i, _)| self.bits & (1 << i) != 0)
            .map(|(_, n)| *n)
            .collect()
    }
}

/// One function of a library.
#[derive(Clone, Debug)]
pub struct FunctionInfo {
    /// Its name.
    pub name: String,
    /// Its description, if it has one.
    pub description: Option<Bytes>,
    /// Its flags.
    pub flags: Flags,
}

/// A loaded library.
#[derive(Clone, Debug)]
pub struct Library {
    /// Its name.
    pub name: String,
    /// Its whole code.
    pub code: Bytes,
    /// Its functions, by name.
    pub functions: BTreeMap<String, FunctionInfo>,
}

/// The loaded libraries.
#[derive(Default)]
pub struct Registry {
    /// Libraries by name.
    pub libraries: Mutex<BTreeMap<String, Library>>,
    /// Bumped on every change (the writer's Lua state reloads when it moved).
    pub version: AtomicU64,
    /// The libraries as the writer's uncommitted FUNCTION changes leave them (None when
    /// nothing is pending): later changes in the same group commit build on them.
    pub pending: Mutex<Option<BTreeMap<String, Library>>>,
}

impl Registry {
    /// The library holding function `name`, with the function.
    pub fn function(&self, name: &str) -> Option<FunctionInfo> {
        self.libraries
            .lock()
            .values()
            .find_map(|l| l.functions.get(name).cloned())
    }

    /// Replaces the whole set of libraries.
    pub fn replace_all(&self, libs: BTreeMap<String, Library>) {
        *self.libraries.lock() = libs;
        self.version.fetch_add(1, Ordering::SeqCst);
    }
}
