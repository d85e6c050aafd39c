//! The keys family.

use crate::cmd::Spec;

/// The keys commands.
pub static SPECS: &[Spec] = &[];
