//! The server family.

use crate::cmd::Spec;

/// The server commands.
pub static SPECS: &[Spec] = &[];
