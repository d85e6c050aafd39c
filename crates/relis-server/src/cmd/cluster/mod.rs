//! The cluster family: CLUSTER and its subcommands, READONLY, READWRITE, ASKING. Relis is a
//! standalone server, so each answers as redis-server started with `cluster-enabled no` does.

pub mod cluster_cmd;
pub mod readonly;

use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Spec};
use crate::error::CmdError;
use resp::Frame;

/// The cluster commands.
pub static SPECS: &[Spec] = &[
    cluster_cmd::SPEC,
    readonly::SPEC_READONLY,
    readonly::SPEC_READWRITE,
    readonly::SPEC_ASKING,
];

/// A cluster command, refused when it runs (so it counts as a failed call, as in Redis).
pub struct Disabled;

impl ConnCmd for Disabled {
    fn exec<'a>(self: Box<Self>, _c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move { Err(CmdError::CLUSTER_DISABLED) })
    }
}
