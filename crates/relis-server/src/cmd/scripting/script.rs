//! SCRIPT LOAD | EXISTS | FLUSH [ASYNC|SYNC] | KILL | HELP — manage the Lua script cache.
//! <https://redis.io/commands/script-load/>, <https://redis.io/commands/script-exists/>,
//! <https://redis.io/commands/script-flush/>, <https://redis.io/commands/script-kill/>
//!
//! LOAD compiles the script (on the writer, where the Lua state lives) and caches it; KILL runs
//! on the connection's task, so it is served while a script holds the writer.
//!
//! SCRIPT DEBUG YES|SYNC|NO: Relis has no Lua debugger, so NO (scripts run without one, as
//! they always do) answers OK and YES and SYNC are refused with a clear error; the argument
//! and MULTI errors are Redis's.

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Cx, Parsed, ReadCmd, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// SCRIPT's declaration.
pub const SPEC: Spec = Spec {
    name: "script",
    arity: -2,
    acl: Spec::acl(&["slow"]),
    group: "scripting",
    since: "2.6.0",
    summary: "A container for Lua scripts management commands",
    complexity: "Depends on subcommand.",
    subcommands: &[
        SPEC_DEBUG,
        SPEC_EXISTS,
        SPEC_LOAD,
        SPEC_KILL,
        SPEC_FLUSH,
        SPEC_HELP,
    ],
    ..Spec::BASE
};

const SUB: Spec = Spec {
    flags: Spec::flags(&["noscript"]),
    acl: Spec::acl(&["slow", "scripting"]),
    group: "scripting",
    since: "2.6.0",
    ..Spec::BASE
};

/// SCRIPT DEBUG's declaration.
pub const SPEC_DEBUG: Spec = Spec {
    name: "script|debug",
    arity: 3,
    since: "3.2.0",
    summary: "Set the debug mode for executed scripts.",
    parse: Script::parse_debug,
    ..SUB
};

/// SCRIPT EXISTS's declaration.
pub const SPEC_EXISTS: Spec = Spec {
    name: "script|exists",
    arity: -3,
    summary: "Check existence of scripts in the script cache.",
    complexity: "O(N) with N being the number of scripts to check (so checking a single script is an O(1) operation).",
    parse: Script::parse_exists,
    tips: &["request_policy:all_shards", "response_policy:agg_logical_and"],
    ..SUB
};

/// SCRIPT LOAD's declaration.
pub const SPEC_LOAD: Spec = Spec {
    name: "script|load",
    arity: 3,
    flags: Spec::flags(&["noscript", "stale"]),
    summary: "Load the specified Lua script into the script cache.",
    complexity: "O(N) with N being the length in bytes of the script body.",
    parse: Script::parse_load,
    tips: &["request_policy:all_nodes", "response_policy:all_succeeded"],
    ..SUB
};

/// SCRIPT KILL's declaration.
pub const SPEC_KILL: Spec = Spec {
    name: "script|kill",
    arity: 2,
    flags: Spec::flags(&["noscript", "allow_busy"]),
    summary: "Kill the script currently in execution.",
    complexity: "O(1)",
    parse: Script::parse_kill,
    tips: &["request_policy:all_shards", "response_policy:one_succeeded"],
    ..SUB
};

/// SCRIPT FLUSH's declaration.
pub const SPEC_FLUSH: Spec = Spec {
    name: "script|flush",
    arity: -2,
    summary: "Remove all the scripts from the script cache.",
    complexity: "O(N) with N being the number of scripts in cache",
    parse: Script::parse_flush,
    tips: &["request_policy:all_nodes", "response_policy:all_succeeded"],
    ..SUB
};

/// SCRIPT HELP's declaration.
pub const SPEC_HELP: Spec = Spec {
    name: "script|help",
    arity: 2,
    flags: Spec::flags(&["loading", "stale"]),
    since: "5.0.0",
    summary: "Show helpful text about the different subcommands",
    complexity: "O(1)",
    parse: Script::parse_help,
    ..SUB
};

const HELP: &[&str] = &[
    "DEBUG (YES|SYNC|NO)",
    "    Set the debug mode for subsequent scripts executed.",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
];

/// The SCRIPT subcommands.
pub enum Script {
    /// SCRIPT EXISTS.
    Exists(Vec<Bytes>),
    /// SCRIPT LOAD.
    Load(Bytes),
    /// SCRIPT KILL.
    Kill,
    /// SCRIPT FLUSH.
    Flush,
    /// SCRIPT HELP.
    Help,
    /// SCRIPT DEBUG mode (checked when it runs: inside MULTI, Redis refuses it first).
    Debug(Bytes),
}

impl Script {
    fn parse_exists(args: &mut Args) -> Result<Parsed, CmdError> {
        let shas = args.rest();
        args.finish()?;
        Parsed::read(Script::Exists(shas))
    }
    fn parse_load(args: &mut Args) -> Result<Parsed, CmdError> {
        let body = args.next()?;
        args.finish()?;
        Parsed::write(Script::Load(body))
    }
    fn parse_kill(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(Script::Kill)
    }
    fn parse_flush(args: &mut Args) -> Result<Parsed, CmdError> {
        let mode = args.rest();
        args.finish()?;
        match mode.as_slice() {
            [] => {}
            [m] if m.eq_ignore_ascii_case(b"sync") || m.eq_ignore_ascii_case(b"async") => {}
            _ => return Err(CmdError::SCRIPT_FLUSH_OPTION),
        }
        Parsed::conn(Script::Flush)
    }
    fn parse_debug(args: &mut Args) -> Result<Parsed, CmdError> {
        let mode = args.next()?;
        args.finish()?;
        Parsed::conn(Script::Debug(mode))
    }
    fn parse_help(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(Script::Help)
    }
}

impl ReadCmd for Script {
    fn exec(&self, _r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let Script::Exists(shas) = self else {
            return Err(CmdError::Internal("SCRIPT: not a read".into()));
        };
        let cache = cx.server.scripting.scripts.lock();
        Ok(Frame::Array(
            shas.iter()
                .map(|s| {
                    let sha = String::from_utf8_lossy(s).to_ascii_lowercase();
                    Frame::Integer(i64::from(cache.contains_key(&sha)))
                })
                .collect(),
        ))
    }
}

impl WriteCmd for Script {
    fn exec(&self, _w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let Script::Load(body) = self else {
            return Err(CmdError::Internal("SCRIPT: not a write".into()));
        };
        crate::lua::load(cx, body.clone()).map(|sha| Frame::Bulk(Bytes::from(sha)))
    }

    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}

/// SCRIPT DEBUG inside MULTI/EXEC, refused as Redis 7.0.15 refuses it there (whatever the
/// mode).
struct DebugInMulti;

impl WriteCmd for DebugInMulti {
    fn exec(&self, _w: &mut relis::Writer<'_>, _cx: &Cx) -> Result<Frame, CmdError> {
        Err(CmdError::SCRIPT_DEBUG_PIPELINE)
    }

    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}

impl ConnCmd for Script {
    fn in_transaction(&mut self) -> Option<Box<dyn WriteCmd>> {
        matches!(self, Script::Debug(_)).then(|| Box::new(DebugInMulti) as Box<dyn WriteCmd>)
    }

    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            match *self {
                Script::Kill => {
                    c.server.scripting.run.kill(true)?;
                    Ok(Frame::Simple(Bytes::from_static(b"OK")))
                }
                Script::Flush => {
                    c.server.scripting.flush();
                    Ok(Frame::Simple(Bytes::from_static(b"OK")))
                }
                Script::Help => Ok(crate::cmd::server::help("SCRIPT", HELP)),
                Script::Debug(mode) if mode.eq_ignore_ascii_case(b"no") => {
                    Ok(Frame::Simple(Bytes::from_static(b"OK")))
                }
                Script::Debug(mode)
                    if mode.eq_ignore_ascii_case(b"yes") || mode.eq_ignore_ascii_case(b"sync") =>
                {
                    Err(CmdError::NO_DEBUGGER)
                }
                Script::Debug(_) => Err(CmdError::SCRIPT_DEBUG_MODE),
                _ => Err(CmdError::Internal(
                    "SCRIPT: not a connection command".into(),
                )),
            }
        })
    }
}
