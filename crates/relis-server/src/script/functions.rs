//! Function libraries (FUNCTION LOAD / FCALL).

use super::engine::Engine;
use crate::error::CmdError;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicU64;

/// A function's flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags {
    /// `no-writes`.
    pub no_writes: bool,
}

/// The loaded libraries.
#[derive(Default)]
pub struct Registry {
    /// Library name -> code.
    pub libraries: Mutex<BTreeMap<String, bytes::Bytes>>,
    /// Bumped on every change.
    pub version: AtomicU64,
}

/// Brings the engine's functions up to date with the registry.
///
/// # Errors
/// A library that no longer loads.
pub(super) fn sync(_engine: &mut Engine, _s: &super::Scripting) -> Result<(), CmdError> {
    Ok(())
}
