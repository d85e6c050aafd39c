//! COMMAND [COUNT | LIST [FILTERBY MODULE m|ACLCAT c|PATTERN p] | INFO [name ...] |
//! DOCS [name ...] | GETKEYS cmd [arg ...] | GETKEYSANDFLAGS cmd [arg ...] | HELP] — describe
//! the commands this server has, from the one command table (`cmd::all()`).
//! <https://redis.io/commands/command/>
//!
//! Replies have Redis 7.0's shapes. Key specs are derived from a spec's legacy key range
//! (first, last, step) and its key flags; commands without a key range (numkeys commands)
//! report none, and GETKEYS cannot find their keys.

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{self, BoxFuture, ConnCmd, Parsed, Spec, Table};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

const FLAGS: &[&str] = &["loading", "stale"];
const ACL: &[&str] = &["slow", "connection"];

/// COMMAND's subcommands.
pub const SUBCOMMANDS: &[Spec] = &[
    Spec {
        name: "command|count",
        arity: 2,
        flags: FLAGS,
        acl: ACL,
        group: "server",
        since: "2.8.13",
        summary: "Get total number of Redis commands",
        parse: |a| CommandCmd::parse_plain(a, CommandCmd::Count),
        ..Spec::BASE
    },
    Spec {
        name: "command|docs",
        arity: -2,
        flags: FLAGS,
        acl: ACL,
        group: "server",
        since: "7.0.0",
        summary: "Get array of specific Redis command documentation",
        complexity: "O(N) where N is the number of commands to look up",
        parse: |a| CommandCmd::parse_names(a, CommandCmd::Docs),
        tips: &["nondeterministic_output_order"],
        ..Spec::BASE
    },
    Spec {
        name: "command|getkeys",
        arity: -4,
        flags: FLAGS,
        acl: ACL,
        group: "server",
        since: "2.8.13",
        summary: "Extract keys given a full Redis command",
        complexity: "O(N) where N is the number of arguments to the command",
        parse: |a| CommandCmd::parse_getkeys(a, false),
        ..Spec::BASE
    },
    Spec {
        name: "command|getkeysandflags",
        arity: -4,
        flags: FLAGS,
        acl: ACL,
        group: "server",
        since: "7.0.0",
        summary: "Extract keys and access flags given a full Redis command",
        complexity: "O(N) where N is the number of arguments to the command",
        parse: |a| CommandCmd::parse_getkeys(a, true),
        ..Spec::BASE
    },
    Spec {
        name: "command|help",
        arity: 2,
        flags: FLAGS,
        acl: ACL,
        group: "server",
        since: "5.0.0",
        summary: "Show helpful text about the different subcommands",
        parse: |a| CommandCmd::parse_plain(a, CommandCmd::Help),
        ..Spec::BASE
    },
    Spec {
        name: "command|info",
        arity: -2,
        flags: FLAGS,
        acl: ACL,
        group: "server",
        since: "2.8.13",
        summary: "Get array of specific Redis command details, or all when no argument is given.",
        complexity: "O(N) where N is the number of commands to look up",
        parse: |a| CommandCmd::parse_names(a, CommandCmd::Info),
        tips: &["nondeterministic_output_order"],
        ..Spec::BASE
    },
    Spec {
        name: "command|list",
        arity: -2,
        flags: FLAGS,
        acl: ACL,
        group: "server",
        since: "7.0.0",
        summary: "Get an array of Redis command names",
        complexity: "O(N) where N is the total number of Redis commands",
        parse: CommandCmd::parse_list,
        tips: &["nondeterministic_output_order"],
        ..Spec::BASE
    },
];

/// COMMAND's declaration: with no subcommand it describes every command.
pub const SPEC: Spec = Spec {
    name: "command",
    arity: -1,
    flags: FLAGS,
    acl: ACL,
    group: "server",
    since: "2.8.13",
    summary: "Get array of Redis command details",
    complexity: "O(N) where N is the total number of Redis commands",
    parse: |a| CommandCmd::parse_plain(a, CommandCmd::Info(Vec::new())),
    subcommands: SUBCOMMANDS,
    tips: &["nondeterministic_output_order"],
    ..Spec::BASE
};

/// COMMAND LIST's filter.
#[derive(Debug, PartialEq)]
pub enum Filter {
    /// Every command.
    None,
    /// FILTERBY MODULE (Relis has no modules: nothing matches).
    Module,
    /// FILTERBY ACLCAT category.
    AclCat(String),
    /// FILTERBY PATTERN glob.
    Pattern(Bytes),
}

/// A COMMAND subcommand.
#[derive(Debug, PartialEq)]
pub enum CommandCmd {
    /// COMMAND COUNT.
    Count,
    /// COMMAND LIST.
    List(Filter),
    /// COMMAND INFO names (none: all) and COMMAND with no subcommand.
    Info(Vec<Bytes>),
    /// COMMAND DOCS names (none: all).
    Docs(Vec<Bytes>),
    /// COMMAND GETKEYS / GETKEYSANDFLAGS (with flags) on a command line.
    GetKeys {
        /// The command line.
        argv: Vec<Bytes>,
        /// GETKEYSANDFLAGS.
        flags: bool,
    },
    /// COMMAND HELP.
    Help,
}

impl CommandCmd {
    fn parse_plain(args: &mut Args, cmd: CommandCmd) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(cmd)
    }

    fn parse_names(
        args: &mut Args,
        make: fn(Vec<Bytes>) -> CommandCmd,
    ) -> Result<Parsed, CmdError> {
        Parsed::conn(make(args.rest()))
    }

    fn parse_getkeys(args: &mut Args, flags: bool) -> Result<Parsed, CmdError> {
        Parsed::conn(CommandCmd::GetKeys {
            argv: args.rest(),
            flags,
        })
    }

    fn parse_list(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::conn(CommandCmd::List(Self::parse_filter(args)?))
    }

    fn parse_filter(args: &mut Args) -> Result<Filter, CmdError> {
        if args.is_empty() {
            return Ok(Filter::None);
        }
        if args.remaining() != 3 || !args.eat("filterby") {
            return Err(CmdError::Syntax);
        }
        let filter = if args.eat("module") {
            args.next()?;
            Filter::Module
        } else if args.eat("aclcat") {
            Filter::AclCat(crate::args::lower(&args.next()?))
        } else if args.eat("pattern") {
            Filter::Pattern(args.next()?)
        } else {
            return Err(CmdError::Syntax);
        };
        args.finish()?;
        Ok(filter)
    }
}

/// Command flags in the order Redis reports them (hidden flags such as `sentinel` are left
/// out, as Redis leaves them out).
const FLAG_ORDER: &[&str] = &[
    "write",
    "readonly",
    "denyoom",
    "module",
    "admin",
    "pubsub",
    "noscript",
    "blocking",
    "loading",
    "stale",
    "skip_monitor",
    "skip_slowlog",
    "asking",
    "fast",
    "no_auth",
    "no_mandatory_keys",
    "no_async_loading",
    "no_multi",
    "movablekeys",
    "allow_busy",
];

/// The flags COMMAND INFO shows for `spec`, in Redis's order.
pub fn flags(spec: &Spec) -> Vec<&'static str> {
    FLAG_ORDER.iter().copied().filter(|f| spec.has(f)).collect()
}

/// A spec's ACL categories: its own plus those its flags imply (write, read, admin and
/// dangerous, pubsub, fast or slow, blocking), in Redis's order.
pub fn acl_categories(spec: &Spec) -> Vec<&'static str> {
    let has = |cat: &str| {
        spec.acl.contains(&cat)
            || match cat {
                "write" => spec.has("write"),
                "read" => spec.has("readonly") && !spec.acl.contains(&"scripting"),
                "admin" | "dangerous" => spec.has("admin"),
                "pubsub" => spec.has("pubsub"),
                "fast" => spec.has("fast"),
                "slow" => !spec.has("fast") && !spec.acl.contains(&"fast"),
                "blocking" => spec.has("blocking"),
                _ => false,
            }
    };
    crate::acl::CATEGORIES
        .iter()
        .copied()
        .filter(|c| has(c))
        .collect()
}

/// The key-spec flags of a spec's keys.
pub fn key_flags(spec: &Spec) -> Vec<&'static str> {
    if !spec.key_flags.is_empty() {
        spec.key_flags.to_vec()
    } else if spec.has("write") {
        vec!["RW", "access", "update"]
    } else {
        vec!["RO", "access"]
    }
}

fn bulk(s: &str) -> Frame {
    Frame::Bulk(Bytes::copy_from_slice(s.as_bytes()))
}

fn simple(s: &str) -> Frame {
    Frame::Simple(Bytes::copy_from_slice(s.as_bytes()))
}

/// The key-spec flags of the key at `pos` of the command line `argv` (COMMAND
/// GETKEYSANDFLAGS): those of the first explicit key spec naming it, else the spec's own.
pub fn key_flags_at(spec: &Spec, argv: &[Bytes], pos: usize) -> Vec<&'static str> {
    spec.key_specs
        .iter()
        .find(|k| k.covers(argv, pos))
        .map(|k| k.flags.to_vec())
        .unwrap_or_else(|| key_flags(spec))
}

/// An explicit key spec as COMMAND INFO shows it.
fn explicit_key_spec(k: &crate::cmd::KeySpec) -> Frame {
    use crate::cmd::FindKeys;
    let int = |n: i32| Frame::Integer(n.into());
    let begin = match k.find {
        FindKeys::AfterKeyword(word, ..) => Frame::Map(vec![
            (bulk("type"), bulk("keyword")),
            (
                bulk("spec"),
                Frame::Map(vec![
                    (bulk("keyword"), bulk(word)),
                    (bulk("startfrom"), int(k.index)),
                ]),
            ),
        ]),
        _ => Frame::Map(vec![
            (bulk("type"), bulk("index")),
            (
                bulk("spec"),
                Frame::Map(vec![(bulk("index"), int(k.index))]),
            ),
        ]),
    };
    let (kind, spec) = match k.find {
        FindKeys::Range(last, step, limit) | FindKeys::AfterKeyword(_, last, step, limit) => (
            "range",
            vec![
                (bulk("lastkey"), int(last)),
                (bulk("keystep"), int(step)),
                (bulk("limit"), int(limit)),
            ],
        ),
        FindKeys::Keynum(numidx, first, step) => (
            "keynum",
            vec![
                (bulk("keynumidx"), int(numidx)),
                (bulk("firstkey"), int(first)),
                (bulk("keystep"), int(step)),
            ],
        ),
    };
    Frame::Map(vec![
        (
            bulk("flags"),
            Frame::Set(k.flags.iter().map(|f| simple(f)).collect()),
        ),
        (bulk("begin_search"), begin),
        (
            bulk("find_keys"),
            Frame::Map(vec![
                (bulk("type"), bulk(kind)),
                (bulk("spec"), Frame::Map(spec)),
            ]),
        ),
    ])
}

fn key_specs(spec: &Spec) -> Vec<Frame> {
    if !spec.key_specs.is_empty() {
        return spec
            .key_specs
            .iter()
            .map(|k| match explicit_key_spec(k) {
                // The notes (EVAL's "We cannot tell how the keys will be used ...") come first.
                Frame::Map(mut m) if !spec.key_notes.is_empty() => {
                    m.insert(0, (bulk("notes"), bulk(spec.key_notes)));
                    Frame::Map(m)
                }
                f => f,
            })
            .collect();
    }
    let (first, last, step) = spec.keys;
    if first <= 0 {
        return Vec::new();
    }
    let lastkey = if last < 0 { last } else { last - first };
    let mut m = Vec::with_capacity(4);
    if !spec.key_notes.is_empty() {
        m.push((bulk("notes"), bulk(spec.key_notes)));
    }
    m.extend([
        (
            bulk("flags"),
            Frame::Set(key_flags(spec).into_iter().map(simple).collect()),
        ),
        (
            bulk("begin_search"),
            Frame::Map(vec![
                (bulk("type"), bulk("index")),
                (
                    bulk("spec"),
                    Frame::Map(vec![(bulk("index"), Frame::Integer(first.into()))]),
                ),
            ]),
        ),
        (
            bulk("find_keys"),
            Frame::Map(vec![
                (bulk("type"), bulk("range")),
                (
                    bulk("spec"),
                    Frame::Map(vec![
                        (bulk("lastkey"), Frame::Integer(lastkey.into())),
                        (bulk("keystep"), Frame::Integer(step.into())),
                        (bulk("limit"), Frame::Integer(0)),
                    ]),
                ),
            ]),
        ),
    ]);
    vec![Frame::Map(m)]
}

/// A COMMAND INFO entry: name, arity, flags, first key, last key, step, ACL categories,
/// tips, key specs, subcommands.
pub fn info_entry(spec: &Spec) -> Frame {
    let (first, last, step) = spec.keys;
    let subcommands = if spec.subcommands.is_empty() {
        Frame::Set(Vec::new())
    } else {
        Frame::Array(spec.subcommands.iter().map(info_entry).collect())
    };
    Frame::Array(vec![
        bulk(spec.name),
        Frame::Integer(spec.arity.into()),
        Frame::Set(flags(spec).into_iter().map(simple).collect()),
        Frame::Integer(first.into()),
        Frame::Integer(last.into()),
        Frame::Integer(step.into()),
        Frame::Set(
            acl_categories(spec)
                .into_iter()
                .map(|c| Frame::Simple(Bytes::from(format!("@{c}"))))
                .collect(),
        ),
        Frame::Set(spec.tips.iter().map(|t| bulk(t)).collect()),
        Frame::Set(key_specs(spec)),
        subcommands,
    ])
}

/// A COMMAND DOCS entry: summary, since, group, complexity, subcommands.
pub fn docs_entry(spec: &Spec) -> Frame {
    let mut m = Vec::new();
    if !spec.summary.is_empty() {
        m.push((bulk("summary"), bulk(spec.summary)));
    }
    m.push((bulk("since"), bulk(spec.since)));
    m.push((bulk("group"), bulk(spec.group)));
    if !spec.complexity.is_empty() {
        m.push((bulk("complexity"), bulk(spec.complexity)));
    }
    if !spec.subcommands.is_empty() {
        m.push((
            bulk("subcommands"),
            Frame::Map(
                spec.subcommands
                    .iter()
                    .map(|s| (bulk(s.name), docs_entry(s)))
                    .collect(),
            ),
        ));
    }
    Frame::Map(m)
}

/// The spec named `name`, a command or `parent|sub`.
fn lookup(name: &[u8]) -> Option<&'static Spec> {
    Table::get().lookup(name).map(|(_, s)| s)
}

/// COMMAND GETKEYS: the spec the command line runs, then its key positions.
fn get_keys(argv: &[Bytes]) -> Result<(&'static Spec, Vec<usize>), CmdError> {
    let table = Table::get();
    let invalid = || CmdError::err("Invalid command specified");
    let (_, mut spec) = table.lookup(&argv[0]).ok_or_else(invalid)?;
    if !spec.subcommands.is_empty() && argv.len() > 1 {
        spec = table.lookup_sub(spec, &argv[1]).ok_or_else(invalid)?.1;
    }
    // Arguments declared `not_key` (shard channels) are not keys here, as in Redis's
    // `doesCommandHaveKeys`.
    if (spec.keys.0 <= 0 && !spec.has("movablekeys")) || spec.key_flags.contains(&"not_key") {
        return Err(CmdError::err("The command has no key arguments"));
    }
    if !spec.arity_ok(argv.len()) {
        return Err(CmdError::err(
            "Invalid number of arguments specified for command",
        ));
    }
    let keys = spec.keys_of(argv);
    // A command that may have no keys at all (EVAL with numkeys 0) answers an empty list.
    if keys.is_empty() && !spec.has("no_mandatory_keys") {
        return Err(CmdError::err("Invalid arguments specified for command"));
    }
    Ok((spec, keys))
}

const HELP: &[&str] = &[
    "(no subcommand)",
    "    Return details about all Redis commands.",
    "COUNT",
    "    Return the total number of commands in this Redis server.",
    "LIST",
    "    Return a list of all commands in this Redis server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "GETKEYS <full-command>",
    "    Return the keys from a full Redis command.",
    "GETKEYSANDFLAGS <full-command>",
    "    Return the keys and the access flags from a full Redis command.",
];

impl CommandCmd {
    fn reply(self) -> Result<Frame, CmdError> {
        Ok(match self {
            CommandCmd::Count => Frame::Integer(cmd::all().count() as i64),
            CommandCmd::List(filter) => Frame::Array(
                Table::get()
                    .specs
                    .iter()
                    .filter(|s| match &filter {
                        Filter::None => true,
                        Filter::Module => false,
                        Filter::AclCat(c) => acl_categories(s).contains(&c.as_str()),
                        Filter::Pattern(p) => relis::glob::glob_match(p, s.name.as_bytes(), true),
                    })
                    .map(|s| bulk(s.name))
                    .collect(),
            ),
            CommandCmd::Info(names) if names.is_empty() => {
                Frame::Array(cmd::all().map(info_entry).collect())
            }
            CommandCmd::Info(names) => Frame::Array(
                names
                    .iter()
                    .map(|n| lookup(n).map(info_entry).unwrap_or(Frame::Null))
                    .collect(),
            ),
            CommandCmd::Docs(names) if names.is_empty() => {
                Frame::Map(cmd::all().map(|s| (bulk(s.name), docs_entry(s))).collect())
            }
            CommandCmd::Docs(names) => Frame::Map(
                names
                    .iter()
                    .filter_map(|n| lookup(n))
                    .map(|s| (bulk(s.name), docs_entry(s)))
                    .collect(),
            ),
            CommandCmd::GetKeys { argv, flags } => {
                let (spec, keys) = get_keys(&argv)?;
                Frame::Array(
                    keys.into_iter()
                        .map(|i| {
                            let key = Frame::Bulk(argv[i].clone());
                            if flags {
                                let f = key_flags_at(spec, &argv, i)
                                    .into_iter()
                                    .map(simple)
                                    .collect();
                                Frame::Array(vec![key, Frame::Set(f)])
                            } else {
                                key
                            }
                        })
                        .collect(),
                )
            }
            CommandCmd::Help => super::help("COMMAND", HELP),
        })
    }
}

impl ConnCmd for CommandCmd {
    fn exec<'a>(self: Box<Self>, _c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move { self.reply() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(v: &[&str]) -> Vec<Bytes> {
        v.iter().map(|s| Bytes::from(s.to_string())).collect()
    }

    #[test]
    fn filter_parse() {
        let p = |v: &[&str]| CommandCmd::parse_filter(&mut Args::new("command|list", line(v)));
        assert_eq!(p(&[]), Ok(Filter::None));
        assert_eq!(
            p(&["FILTERBY", "aclcat", "Connection"]),
            Ok(Filter::AclCat("connection".into()))
        );
        assert_eq!(p(&["filterby", "module", "x"]), Ok(Filter::Module));
        assert_eq!(p(&["filterby"]), Err(CmdError::Syntax));
        assert_eq!(p(&["filterby", "foo", "x"]), Err(CmdError::Syntax));
        assert_eq!(p(&["filterby", "pattern", "a", "b"]), Err(CmdError::Syntax));
    }

    #[test]
    fn categories_follow_redis_order() {
        let client_list = Table::get().lookup(b"client|list").unwrap().1;
        assert_eq!(
            acl_categories(client_list),
            ["admin", "slow", "dangerous", "connection"]
        );
        let get = Table::get().lookup(b"get").unwrap().1;
        assert_eq!(acl_categories(get), ["read", "string", "fast"]);
        let ping = Table::get().lookup(b"ping").unwrap().1;
        assert_eq!(flags(ping), ["fast"]);
    }

    #[test]
    fn getkeys() {
        let e = |v: &[&str]| {
            get_keys(&line(v))
                .err()
                .map(|e| e.message())
                .unwrap_or_default()
        };
        assert_eq!(e(&["nosuch", "a"]), "ERR Invalid command specified");
        assert_eq!(e(&["ping", "a"]), "ERR The command has no key arguments");
        assert_eq!(
            e(&["ssubscribe", "a", "b"]),
            "ERR The command has no key arguments"
        );
        assert_eq!(
            e(&["spublish", "a", "b"]),
            "ERR The command has no key arguments"
        );
        assert_eq!(
            e(&["client", "list"]),
            "ERR The command has no key arguments"
        );
        assert_eq!(e(&["client", "nosuch"]), "ERR Invalid command specified");
        assert_eq!(
            e(&["get", "a", "b"]),
            "ERR Invalid number of arguments specified for command"
        );
        assert_eq!(get_keys(&line(&["GET", "k"])).unwrap().1, vec![1]);
    }
}
