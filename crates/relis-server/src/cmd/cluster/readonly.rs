//! READONLY, READWRITE, ASKING — cluster connection modes; a standalone Redis refuses them with
//! "ERR This instance has cluster support disabled", and so does Relis.
//! <https://redis.io/commands/readonly/>, <https://redis.io/commands/readwrite/>,
//! <https://redis.io/commands/asking/>

use crate::args::Args;
use crate::cmd::{Parsed, Spec};
use crate::error::CmdError;

use super::Disabled;

fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
    args.finish()?;
    Parsed::conn(Disabled)
}

/// READONLY's declaration.
pub const SPEC_READONLY: Spec = Spec {
    name: "readonly",
    arity: 1,
    flags: Spec::flags(&["loading", "stale", "fast"]),
    acl: Spec::acl(&["fast", "connection"]),
    group: "cluster",
    since: "3.0.0",
    summary: "Enables read queries for a connection to a cluster replica node",
    parse,
    ..Spec::BASE
};

/// READWRITE's declaration.
pub const SPEC_READWRITE: Spec = Spec {
    name: "readwrite",
    summary: "Disables read queries for a connection to a cluster replica node",
    ..SPEC_READONLY
};

/// ASKING's declaration.
pub const SPEC_ASKING: Spec = Spec {
    name: "asking",
    flags: Spec::flags(&["fast"]),
    summary: "Sent by cluster clients after an -ASK redirect",
    ..SPEC_READONLY
};
