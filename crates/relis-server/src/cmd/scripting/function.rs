//! FUNCTION LOAD [REPLACE] code | DELETE library | FLUSH [ASYNC|SYNC] |
//! LIST [LIBRARYNAME pattern] [WITHCODE] | DUMP | RESTORE payload [FLUSH|APPEND|REPLACE] |
//! STATS | KILL | HELP — manage function libraries.
//! <https://redis.io/commands/function-load/> and the other FUNCTION pages.
//!
//! LOAD, DELETE, FLUSH and RESTORE run as write jobs: the libraries' code is stored in the
//! database (they survive restarts), and the running set changes once that has committed. DUMP's
//! payload is Redis's (an RDB fragment: see `rdb::payload`), so libraries move between
//! redis-server and Relis both ways. STATS and
//! KILL run on the connection's task, so they are served while a function holds the writer.

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use crate::lua::functions;
use crate::script::functions::Library;
use bytes::Bytes;
use resp::Frame;
use std::collections::BTreeMap;
use tokio::sync::oneshot;

/// FUNCTION's declaration.
pub const SPEC: Spec = Spec {
    name: "function",
    arity: -2,
    acl: Spec::acl(&["slow"]),
    group: "scripting",
    since: "7.0.0",
    summary: "A container for function commands",
    complexity: "Depends on subcommand.",
    // In the order redis-server lists them (COMMAND INFO).
    subcommands: &[
        SPEC_LOAD,
        SPEC_DELETE,
        SPEC_HELP,
        SPEC_DUMP,
        SPEC_RESTORE,
        SPEC_KILL,
        SPEC_STATS,
        SPEC_FLUSH,
        SPEC_LIST,
    ],
    ..Spec::BASE
};

const SUB: Spec = Spec {
    flags: Spec::flags(&["noscript"]),
    acl: Spec::acl(&["slow", "scripting"]),
    group: "scripting",
    since: "7.0.0",
    ..Spec::BASE
};
const WRITE_ACL: crate::cmd::Cats = Spec::acl(&["write", "slow", "scripting"]);

/// FUNCTION KILL's declaration.
pub const SPEC_KILL: Spec = Spec {
    name: "function|kill",
    arity: 2,
    flags: Spec::flags(&["noscript", "allow_busy"]),
    summary: "Kill the function currently in execution.",
    complexity: "O(1)",
    parse: Function::parse_kill,
    tips: &["request_policy:all_shards", "response_policy:one_succeeded"],
    ..SUB
};
/// FUNCTION DELETE's declaration.
pub const SPEC_DELETE: Spec = Spec {
    name: "function|delete",
    arity: 3,
    flags: Spec::flags(&["write", "noscript"]),
    acl: WRITE_ACL,
    summary: "Delete a function by name",
    complexity: "O(1)",
    parse: Function::parse_delete,
    tips: &["request_policy:all_shards", "response_policy:all_succeeded"],
    ..SUB
};
/// FUNCTION LIST's declaration.
pub const SPEC_LIST: Spec = Spec {
    name: "function|list",
    arity: -2,
    summary: "List information about all the functions",
    complexity: "O(N) where N is the number of functions",
    parse: Function::parse_list,
    tips: &["nondeterministic_output_order"],
    ..SUB
};
/// FUNCTION DUMP's declaration.
pub const SPEC_DUMP: Spec = Spec {
    name: "function|dump",
    arity: 2,
    summary: "Dump all functions into a serialized binary payload",
    complexity: "O(N) where N is the number of functions",
    parse: Function::parse_dump,
    ..SUB
};
/// FUNCTION FLUSH's declaration.
pub const SPEC_FLUSH: Spec = Spec {
    name: "function|flush",
    arity: -2,
    flags: Spec::flags(&["write", "noscript"]),
    acl: WRITE_ACL,
    summary: "Deleting all functions",
    complexity: "O(N) where N is the number of functions deleted",
    parse: Function::parse_flush,
    tips: &["request_policy:all_shards", "response_policy:all_succeeded"],
    ..SUB
};
/// FUNCTION HELP's declaration.
pub const SPEC_HELP: Spec = Spec {
    name: "function|help",
    arity: 2,
    flags: Spec::flags(&["loading", "stale"]),
    summary: "Show helpful text about the different subcommands",
    complexity: "O(1)",
    parse: Function::parse_help,
    ..SUB
};
/// FUNCTION RESTORE's declaration.
pub const SPEC_RESTORE: Spec = Spec {
    name: "function|restore",
    arity: -3,
    flags: Spec::flags(&["write", "denyoom", "noscript"]),
    acl: WRITE_ACL,
    summary: "Restore all the functions on the given payload",
    complexity: "O(N) where N is the number of functions on the payload",
    parse: Function::parse_restore,
    tips: &["request_policy:all_shards", "response_policy:all_succeeded"],
    ..SUB
};
/// FUNCTION LOAD's declaration.
pub const SPEC_LOAD: Spec = Spec {
    name: "function|load",
    arity: -3,
    flags: Spec::flags(&["write", "denyoom", "noscript"]),
    acl: WRITE_ACL,
    summary: "Create a function with the given arguments (name, code, description)",
    complexity: "O(1) (considering compilation time is redundant)",
    parse: Function::parse_load,
    tips: &["request_policy:all_shards", "response_policy:all_succeeded"],
    ..SUB
};
/// FUNCTION STATS's declaration.
pub const SPEC_STATS: Spec = Spec {
    name: "function|stats",
    arity: 2,
    flags: Spec::flags(&["noscript", "allow_busy"]),
    summary:
        "Return information about the function currently running (name, description, duration)",
    complexity: "O(1)",
    parse: Function::parse_stats,
    tips: &[
        "nondeterministic_output",
        "request_policy:all_shards",
        "response_policy:special",
    ],
    ..SUB
};

const HELP: &[&str] = &[
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance of failure",
    "      in case of functions name collision with another library).",
];

/// How RESTORE treats existing libraries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Delete them all first.
    Flush,
    /// Keep them; a name collision fails.
    Append,
    /// Keep them; a restored library replaces one of the same name.
    Replace,
}

/// The FUNCTION subcommands.
pub enum Function {
    /// FUNCTION LOAD.
    Load {
        /// REPLACE given.
        replace: bool,
        /// The code.
        code: Bytes,
    },
    /// FUNCTION DELETE.
    Delete(Bytes),
    /// FUNCTION FLUSH.
    Flush,
    /// FUNCTION LIST.
    List {
        /// LIBRARYNAME pattern.
        pattern: Option<Bytes>,
        /// WITHCODE.
        code: bool,
    },
    /// FUNCTION DUMP.
    Dump,
    /// FUNCTION RESTORE.
    Restore(Bytes, Policy),
    /// FUNCTION STATS.
    Stats,
    /// FUNCTION KILL.
    Kill,
    /// FUNCTION HELP.
    Help,
}

fn ok() -> Frame {
    Frame::Simple(Bytes::from_static(b"OK"))
}

impl Function {
    fn parse_load(args: &mut Args) -> Result<Parsed, CmdError> {
        let mut replace = false;
        while args.remaining() > 1 {
            let w = args.next()?;
            if w.eq_ignore_ascii_case(b"replace") {
                replace = true;
            } else {
                return Err(CmdError::function_list_option(&w));
            }
        }
        let code = args.next()?;
        args.finish()?;
        Parsed::conn(Function::Load { replace, code })
    }
    fn parse_delete(args: &mut Args) -> Result<Parsed, CmdError> {
        let name = args.next()?;
        args.finish()?;
        Parsed::conn(Function::Delete(name))
    }
    fn parse_flush(args: &mut Args) -> Result<Parsed, CmdError> {
        let mode = args.rest();
        args.finish()?;
        match mode.as_slice() {
            [] => {}
            [m] if m.eq_ignore_ascii_case(b"sync") || m.eq_ignore_ascii_case(b"async") => {}
            _ => return Err(CmdError::FUNCTION_FLUSH_OPTION),
        }
        Parsed::conn(Function::Flush)
    }
    fn parse_list(args: &mut Args) -> Result<Parsed, CmdError> {
        let (mut pattern, mut code) = (None, false);
        while args.remaining() > 0 {
            let w = args.next()?;
            if w.eq_ignore_ascii_case(b"withcode") && !code {
                code = true;
            } else if w.eq_ignore_ascii_case(b"libraryname") && pattern.is_none() {
                if args.remaining() == 0 {
                    return Err(CmdError::FUNCTION_NO_LIBRARY_NAME);
                }
                pattern = Some(args.next()?);
            } else {
                return Err(CmdError::function_argument(&w));
            }
        }
        args.finish()?;
        Parsed::read(Function::List { pattern, code })
    }
    fn parse_dump(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::read(Function::Dump)
    }
    fn parse_restore(args: &mut Args) -> Result<Parsed, CmdError> {
        let payload = args.next()?;
        let policy = match args.rest().as_slice() {
            [] => Policy::Append,
            [p] if p.eq_ignore_ascii_case(b"flush") => Policy::Flush,
            [p] if p.eq_ignore_ascii_case(b"append") => Policy::Append,
            [p] if p.eq_ignore_ascii_case(b"replace") => Policy::Replace,
            [_] => return Err(CmdError::FUNCTION_RESTORE_POLICY),
            _ => return Err(CmdError::Syntax),
        };
        args.finish()?;
        Parsed::conn(Function::Restore(payload, policy))
    }
    fn parse_stats(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(Function::Stats)
    }
    fn parse_kill(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(Function::Kill)
    }
    fn parse_help(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(Function::Help)
    }
}

/// Adds `new` to `libs` (replacing the library of the same name when `replace`), with Redis's
/// collision errors.
fn join(
    libs: &mut BTreeMap<String, Library>,
    new: Library,
    replace: bool,
    restoring: bool,
) -> Result<(), CmdError> {
    if libs.contains_key(&new.name) && !replace {
        return Err(CmdError::library_exists(&new.name, restoring));
    }
    for f in new.functions.keys() {
        if libs
            .values()
            .any(|l| l.name != new.name && l.functions.contains_key(f))
        {
            return Err(CmdError::function_exists(f));
        }
    }
    libs.insert(new.name.clone(), new);
    Ok(())
}

impl Function {
    /// Runs a changing subcommand on the writer: `libs` is the set of libraries it changes
    /// (the registry as the writer sees it, pending commits included).
    fn apply(
        &self,
        w: &mut relis::Writer<'_>,
        s: &crate::script::Scripting,
        libs: &mut BTreeMap<String, Library>,
    ) -> Result<Frame, CmdError> {
        match self {
            Function::Load { replace, code } => {
                // Redis checks the name before it compiles anything.
                let (name, _) = functions::parse_shebang(code)?;
                if !replace && libs.contains_key(&name) {
                    return Err(CmdError::library_exists(&name, false));
                }
                let lib = functions::evaluate(s, code)?;
                join(libs, lib, *replace, false)?;
                w.function_put(&name, code)?;
                Ok(Frame::Bulk(Bytes::from(name)))
            }
            Function::Delete(name) => {
                let name = String::from_utf8_lossy(name).into_owned();
                if libs.remove(&name).is_none() {
                    return Err(CmdError::LIBRARY_NOT_FOUND);
                }
                w.function_delete(&name)?;
                Ok(ok())
            }
            Function::Flush => {
                w.function_clear()?;
                libs.clear();
                Ok(ok())
            }
            Function::Restore(payload, policy) => {
                let codes = functions::undump(payload)?;
                let mut new = if *policy == Policy::Flush {
                    BTreeMap::new()
                } else {
                    libs.clone()
                };
                for code in codes {
                    let lib = functions::evaluate(s, &code)?;
                    join(&mut new, lib, *policy == Policy::Replace, true)?;
                }
                w.function_clear()?;
                for l in new.values() {
                    w.function_put(&l.name, &l.code)?;
                }
                *libs = new;
                Ok(ok())
            }
            _ => Err(CmdError::Internal("FUNCTION: not a change".into())),
        }
    }
}

/// Runs a changing subcommand as a write job; the registry takes the new libraries only once
/// the transaction has committed (a failed commit leaves it as the database has it).
async fn change(c: &mut Client, f: Function) -> Result<Frame, CmdError> {
    let (tx, rx) = oneshot::channel();
    let (server, done_server) = (c.server.clone(), c.server.clone());
    // Over PostgreSQL the group takes the functions lock and the shared set: changes run one
    // at a time across nodes, each on what the previous one committed.
    c.server.db.write_async_keys(
        vec![relis::functions_declaration(true)],
        move |w| {
            let reg = &server.scripting.functions;
            let pending = reg.pending.lock().clone();
            let mut libs = match pending {
                Some(libs) => libs,
                None => {
                    functions::refresh(&server.scripting, w);
                    reg.libraries.lock().clone()
                }
            };
            let r = w.atomic(|w| f.apply(w, &server.scripting, &mut libs));
            if let Err(CmdError::Storage(e)) = &r {
                w.poison(e.clone());
            }
            if r.is_ok() {
                // Later jobs of the same group commit build on this.
                *reg.pending.lock() = Some(libs.clone());
            }
            (r, libs)
        },
        // On the writer thread, right after the commit, before the next group.
        move |res| {
            let reg = &done_server.scripting.functions;
            *reg.pending.lock() = None;
            let out = match res {
                Ok((Ok(frame), libs)) => {
                    reg.replace_all(libs);
                    Ok(frame)
                }
                Ok((Err(e), _)) => Err(e),
                Err(e) => Err(CmdError::from(e)),
            };
            let _ = tx.send(out);
        },
    );
    rx.await.map_err(|_| CmdError::from(relis::Error::Closed))?
}

/// Takes the shared function libraries when another node changed them (a read job declaring
/// them: `functions::refresh`).
async fn refresh_shared(server: std::sync::Arc<crate::state::Shared>) -> Result<(), CmdError> {
    let (tx, rx) = oneshot::channel();
    let db = server.db.clone();
    db.read_async_keys(
        vec![relis::functions_declaration(false)],
        move |r| functions::refresh(&server.scripting, r),
        move |res| {
            let _ = tx.send(res);
        },
    );
    rx.await
        .map_err(|_| CmdError::from(relis::Error::Closed))?
        .map_err(CmdError::from)
}

fn bulk(s: &str) -> Frame {
    Frame::Bulk(Bytes::copy_from_slice(s.as_bytes()))
}

impl ReadCmd for Function {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        // Over PostgreSQL, the libraries another node changed (LIST and DUMP declare them).
        functions::refresh(&cx.server.scripting, r);
        let libs = cx.server.scripting.functions.libraries.lock().clone();
        match self {
            Function::List { pattern, code } => {
                let mut out = Vec::new();
                for l in libs.values() {
                    if let Some(p) = pattern {
                        if !relis::glob::glob_match(p, l.name.as_bytes(), false) {
                            continue;
                        }
                    }
                    let functions = l
                        .functions
                        .values()
                        .map(|f| {
                            Frame::Map(vec![
                                (bulk("name"), bulk(&f.name)),
                                (
                                    bulk("description"),
                                    f.description.clone().map_or(Frame::Null, Frame::Bulk),
                                ),
                                (
                                    bulk("flags"),
                                    Frame::Set(
                                        f.flags
                                            .names()
                                            .into_iter()
                                            .map(|n| {
                                                Frame::Simple(Bytes::from_static(n.as_bytes()))
                                            })
                                            .collect(),
                                    ),
                                ),
                            ])
                        })
                        .collect();
                    let mut m = vec![
                        (bulk("library_name"), bulk(&l.name)),
                        (bulk("engine"), bulk("LUA")),
                        (bulk("functions"), Frame::Array(functions)),
                    ];
                    if *code {
                        m.push((bulk("library_code"), Frame::Bulk(l.code.clone())));
                    }
                    out.push(Frame::Map(m));
                }
                Ok(Frame::Array(out))
            }
            Function::Dump => Ok(Frame::Bulk(Bytes::from(functions::dump(&libs)))),
            _ => Err(CmdError::Internal("FUNCTION: not a read".into())),
        }
    }
}

impl ConnCmd for Function {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let s = &c.server.scripting;
            match *self {
                Function::Kill => {
                    s.run.kill(false)?;
                    Ok(ok())
                }
                Function::Stats => {
                    // Over PostgreSQL the counts are the shared set's, unless a script holds
                    // the writer (then this node's, as it last took them).
                    if c.server.db.backend() == "postgres" && s.run.busy_error().is_none() {
                        refresh_shared(c.server.clone()).await?;
                    }
                    let s = &c.server.scripting;
                    let running = match s.run.current.lock().clone() {
                        Some((name, command)) => {
                            let ms = s
                                .run
                                .started
                                .lock()
                                .map_or(0, |t| t.elapsed().as_millis() as i64);
                            Frame::Map(vec![
                                (bulk("name"), bulk(&name)),
                                (
                                    bulk("command"),
                                    Frame::Array(command.into_iter().map(Frame::Bulk).collect()),
                                ),
                                (bulk("duration_ms"), Frame::Integer(ms)),
                            ])
                        }
                        None => Frame::Null,
                    };
                    let (nlibs, nfuncs) = {
                        let libs = s.functions.libraries.lock();
                        (
                            libs.len() as i64,
                            libs.values().map(|l| l.functions.len() as i64).sum(),
                        )
                    };
                    Ok(Frame::Map(vec![
                        (bulk("running_script"), running),
                        (
                            bulk("engines"),
                            Frame::Map(vec![(
                                bulk("LUA"),
                                Frame::Map(vec![
                                    (bulk("libraries_count"), Frame::Integer(nlibs)),
                                    (bulk("functions_count"), Frame::Integer(nfuncs)),
                                ]),
                            )]),
                        ),
                    ]))
                }
                Function::Help => Ok(crate::cmd::server::help("FUNCTION", HELP)),
                f @ (Function::Load { .. }
                | Function::Delete(_)
                | Function::Flush
                | Function::Restore(..)) => change(c, f).await,
                _ => Err(CmdError::Internal(
                    "FUNCTION: not a connection command".into(),
                )),
            }
        })
    }
}
