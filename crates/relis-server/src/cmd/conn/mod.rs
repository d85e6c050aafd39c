//! The connection family.

pub mod ping;
pub mod quit;
pub mod select;

use crate::cmd::Spec;

/// The connection commands.
pub static SPECS: &[Spec] = &[ping::SPEC_PING, ping::SPEC_ECHO, quit::SPEC, select::SPEC];
