//! MODULE LIST | HELP | LOAD path [arg ...] | LOADEX path [CONFIG name value ...] [ARGS ...] |
//! UNLOAD name — Redis modules. <https://redis.io/commands/module-list/>
//!
//! Relis has no module support: LIST answers an empty list, LOAD and LOADEX are refused with
//! Redis's failed-load text followed by the reason, and UNLOAD with Redis's own text for a name
//! that no loaded module has (none is).

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use resp::Frame;

/// MODULE's declaration.
pub const SPEC: Spec = Spec {
    name: "module",
    arity: -2,
    acl: Spec::acl(&["slow"]),
    group: "server",
    since: "4.0.0",
    summary: "A container for module commands",
    complexity: "Depends on subcommand.",
    subcommands: &[SPEC_HELP, SPEC_LIST, SPEC_LOAD, SPEC_LOADEX, SPEC_UNLOAD],
    ..Spec::BASE
};

const SUB: Spec = Spec {
    flags: Spec::flags(&["admin", "noscript", "no_async_loading"]),
    acl: Spec::acl(&["admin", "slow", "dangerous"]),
    group: "server",
    since: "4.0.0",
    ..Spec::BASE
};

/// MODULE HELP's declaration.
pub const SPEC_HELP: Spec = Spec {
    name: "module|help",
    arity: 2,
    flags: Spec::flags(&["loading", "stale"]),
    acl: Spec::acl(&["slow"]),
    since: "5.0.0",
    summary: "Show helpful text about the different subcommands",
    parse: |a| Module::parse_plain(a, Module::Help),
    ..SUB
};

/// MODULE LIST's declaration.
pub const SPEC_LIST: Spec = Spec {
    name: "module|list",
    arity: 2,
    flags: Spec::flags(&["admin", "noscript"]),
    summary: "List all modules loaded by the server",
    complexity: "O(N) where N is the number of loaded modules.",
    parse: |a| Module::parse_plain(a, Module::List),
    tips: &["nondeterministic_output_order"],
    ..SUB
};

/// MODULE LOAD's declaration.
pub const SPEC_LOAD: Spec = Spec {
    name: "module|load",
    arity: -3,
    summary: "Load a module",
    parse: |a| Module::parse_rest(a, Module::Load),
    ..SUB
};

/// MODULE LOADEX's declaration.
pub const SPEC_LOADEX: Spec = Spec {
    name: "module|loadex",
    arity: -3,
    since: "7.0.0",
    summary: "Load a module with extended parameters",
    parse: |a| Module::parse_rest(a, Module::Load),
    ..SUB
};

/// MODULE UNLOAD's declaration.
pub const SPEC_UNLOAD: Spec = Spec {
    name: "module|unload",
    arity: 3,
    summary: "Unload a module",
    parse: |a| Module::parse_rest(a, Module::Unload),
    ..SUB
};

const HELP: &[&str] = &[
    "LIST",
    "    Return a list of loaded modules.",
    "LOAD <path> [<arg> ...]",
    "    Load a module library from <path>, passing to it any optional arguments.",
    "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
    "    Load a module library from <path>, while passing it module configurations and optional arguments.",
    "UNLOAD <name>",
    "    Unload a module.",
];

/// A MODULE subcommand.
#[derive(Debug, PartialEq)]
pub enum Module {
    /// MODULE HELP.
    Help,
    /// MODULE LIST.
    List,
    /// MODULE LOAD or LOADEX.
    Load,
    /// MODULE UNLOAD.
    Unload,
}

impl Module {
    fn parse_plain(args: &mut Args, m: Module) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(m)
    }

    fn parse_rest(args: &mut Args, m: Module) -> Result<Parsed, CmdError> {
        // Redis's module loader would read them; Relis refuses whatever they are.
        args.rest();
        Parsed::conn(m)
    }
}

impl ConnCmd for Module {
    fn exec<'a>(self: Box<Self>, _c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            match *self {
                Module::Help => Ok(super::help("MODULE", HELP)),
                Module::List => Ok(Frame::Array(Vec::new())),
                Module::Load => Err(CmdError::NO_MODULES),
                Module::Unload => Err(CmdError::NO_SUCH_MODULE),
            }
        })
    }
}
