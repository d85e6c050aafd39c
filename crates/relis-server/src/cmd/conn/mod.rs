//! The connection family: PING, ECHO, QUIT, SELECT, AUTH, HELLO, RESET, CLIENT.

pub mod auth;
pub mod client;
pub mod client_kill;
pub mod client_list;
pub mod client_tracking;
pub mod hello;
pub mod ping;
pub mod quit;
pub mod reset;
pub mod select;

use crate::cmd::Spec;

/// The connection commands.
pub static SPECS: &[Spec] = &[
    ping::SPEC_PING,
    ping::SPEC_ECHO,
    quit::SPEC,
    select::SPEC,
    auth::SPEC,
    hello::SPEC,
    reset::SPEC,
    client::SPEC,
];
