//! The string family.

pub mod get;
pub mod set;

use crate::cmd::Spec;

/// The string commands.
pub static SPECS: &[Spec] = &[
    get::SPEC,
    set::SPEC,
    set::SPEC_SETNX,
    set::SPEC_SETEX,
    set::SPEC_PSETEX,
];
