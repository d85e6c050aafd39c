//! ACL <subcommand> — users and permissions: SETUSER, GETUSER, DELUSER, LIST, USERS, WHOAMI,
//! CAT, LOG, DRYRUN, GENPASS, SAVE, LOAD, HELP. <https://redis.io/commands/acl/>
//!
//! The subcommands share the server's [`crate::acl::Acl`] and are one tight family, so they
//! share this file; the rules themselves live in `crate::acl`.

use crate::acl::{self, Acl};
use crate::args::{parse_i64, Args};
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec, Table};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;
use std::sync::Arc;

const FLAGS: crate::cmd::Flags = Spec::flags(&["noscript", "loading", "stale"]);
const ADMIN_FLAGS: crate::cmd::Flags = Spec::flags(&["admin", "noscript", "loading", "stale"]);
const ACL_SLOW: crate::cmd::Cats = Spec::acl(&["slow"]);
const ACL_ADMIN: crate::cmd::Cats = Spec::acl(&["admin", "slow", "dangerous"]);

macro_rules! sub {
    ($name:expr, $arity:expr, $admin:expr, $summary:expr, $parse:expr) => {
        Spec {
            name: $name,
            arity: $arity,
            flags: if $admin { ADMIN_FLAGS } else { FLAGS },
            acl: if $admin { ACL_ADMIN } else { ACL_SLOW },
            group: "server",
            since: "6.0.0",
            summary: $summary,
            complexity: "O(N)",
            parse: $parse,
            ..Spec::BASE
        }
    };
}

/// ACL's subcommands.
pub const SUBCOMMANDS: &[Spec] = &[
    sub!(
        "acl|cat",
        -2,
        false,
        "List the ACL categories or the commands inside a category",
        AclCmd::parse_cat
    ),
    sub!(
        "acl|deluser",
        -3,
        true,
        "Remove the specified ACL users and the associated rules",
        |a| Parsed::conn(AclCmd::DelUser(a.rest()))
    ),
    Spec {
        since: "7.0.0",
        ..sub!(
            "acl|dryrun",
            -4,
            true,
            "Returns whether the user can execute the given command without executing the command.",
            |a| Parsed::conn(AclCmd::DryRun(a.rest()))
        )
    },
    sub!(
        "acl|genpass",
        -2,
        false,
        "Generate a pseudorandom secure password to use for ACL users",
        AclCmd::parse_genpass
    ),
    sub!(
        "acl|getuser",
        3,
        true,
        "Get the rules for a specific ACL user",
        |a| Parsed::conn(AclCmd::GetUser(a.next()?))
    ),
    sub!(
        "acl|list",
        2,
        true,
        "List the current ACL rules in ACL config file format",
        |_| Parsed::conn(AclCmd::List)
    ),
    sub!(
        "acl|load",
        2,
        true,
        "Reload the ACLs from the configured ACL file",
        |_| Parsed::conn(AclCmd::Load)
    ),
    sub!(
        "acl|log",
        -2,
        true,
        "List latest events denied because of ACLs in place",
        AclCmd::parse_log
    ),
    sub!(
        "acl|save",
        2,
        true,
        "Save the current ACL rules in the configured ACL file",
        |_| Parsed::conn(AclCmd::Save)
    ),
    sub!(
        "acl|setuser",
        -3,
        true,
        "Modify or create the rules for a specific ACL user",
        |a| {
            let name = a.next()?;
            Parsed::conn(AclCmd::SetUser(name, a.rest()))
        }
    ),
    sub!(
        "acl|users",
        2,
        true,
        "List the username of all the configured ACL rules",
        |_| Parsed::conn(AclCmd::Users)
    ),
    sub!(
        "acl|whoami",
        2,
        false,
        "Return the name of the user associated to the current connection",
        |_| Parsed::conn(AclCmd::WhoAmI)
    ),
    Spec {
        flags: Spec::flags(&["loading", "stale"]),
        ..sub!(
            "acl|help",
            2,
            false,
            "Show helpful text about the different subcommands",
            |_| Parsed::conn(AclCmd::Help)
        )
    },
];

/// ACL's declaration (a container).
pub const SPEC: Spec = Spec {
    name: "acl",
    arity: -2,
    acl: ACL_SLOW,
    group: "server",
    since: "6.0.0",
    summary: "A container for Access List Control commands",
    complexity: "Depends on subcommand.",
    subcommands: SUBCOMMANDS,
    ..Spec::BASE
};

/// The ACL commands.
pub static SPECS: &[Spec] = &[SPEC];

/// One ACL subcommand.
#[derive(Debug, PartialEq)]
pub enum AclCmd {
    /// CAT [category].
    Cat(Option<Bytes>),
    /// DELUSER name [name ...].
    DelUser(Vec<Bytes>),
    /// DRYRUN user command [arg ...].
    DryRun(Vec<Bytes>),
    /// GENPASS [bits].
    GenPass(i64),
    /// GETUSER name.
    GetUser(Bytes),
    /// LIST.
    List,
    /// LOAD.
    Load,
    /// LOG [count]; None = RESET.
    Log(Option<i64>),
    /// SAVE.
    Save,
    /// SETUSER name rule ...
    SetUser(Bytes, Vec<Bytes>),
    /// USERS.
    Users,
    /// WHOAMI.
    WhoAmI,
    /// HELP.
    Help,
}

impl AclCmd {
    fn parse_cat(args: &mut Args) -> Result<Parsed, CmdError> {
        let cat = if args.is_empty() {
            None
        } else {
            Some(args.next()?)
        };
        args.finish()?;
        Parsed::conn(AclCmd::Cat(cat))
    }

    fn parse_genpass(args: &mut Args) -> Result<Parsed, CmdError> {
        let bits = if args.is_empty() {
            256
        } else {
            args.next_i64()?
        };
        args.finish()?;
        if bits <= 0 || bits > 4096 {
            return Err(CmdError::ACL_GENPASS);
        }
        Parsed::conn(AclCmd::GenPass(bits))
    }

    fn parse_log(args: &mut Args) -> Result<Parsed, CmdError> {
        if args.remaining() > 1 {
            return Err(args.subcommand_syntax());
        }
        let n = match args.peek() {
            None => Some(10),
            Some(a) if a.eq_ignore_ascii_case(b"reset") => None,
            Some(a) => Some(parse_i64(a)?),
        };
        args.rest();
        Parsed::conn(AclCmd::Log(n))
    }
}

fn bulk(s: impl Into<String>) -> Frame {
    Frame::Bulk(Bytes::from(s.into()))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Disconnects every client authenticated as one of `users` (deleted, or dropped by ACL
/// LOAD), as Redis does; the caller's own connection closes after its reply.
fn disconnect(c: &mut Client, users: &[Arc<acl::User>]) {
    if users.is_empty() {
        return;
    }
    let names: Vec<&str> = users.iter().map(|u| u.name.as_str()).collect();
    if names.contains(&c.user.name.as_str()) {
        c.quit = true;
    }
    let clients: Vec<_> = c.server.clients.lock().values().cloned().collect();
    for info in clients {
        if info.id != c.info.id && names.contains(&info.user.lock().as_str()) {
            info.kill();
        }
    }
}

/// Disconnects the clients of `user` subscribed to a channel or pattern its rules no longer
/// allow, as Redis's `ACLKillPubsubClientsIfNeeded` does after ACL SETUSER.
fn disconnect_lost_subscribers(c: &mut Client, user: &acl::User) {
    let clients: Vec<_> = c.server.clients.lock().values().cloned().collect();
    for info in clients {
        if !info.pubsub.subscribed() || *info.user.lock() != user.name {
            continue;
        }
        let (channels, patterns) = c.server.pubsub.subscriptions_of(info.id);
        let lost = channels.iter().any(|ch| !user.channel_ok(ch, false))
            || patterns.iter().any(|p| !user.channel_ok(p, true));
        if lost {
            if info.id == c.info.id {
                c.quit = true;
            } else {
                info.kill();
            }
        }
    }
}

/// Reads and parses the ACL file, then replaces the users.
///
/// # Errors
/// Redis's ACL LOAD texts (without `ERR `).
pub fn load_file(acl: &Acl, path: &str) -> Result<Vec<Arc<acl::User>>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "Error loading ACLs, opening file '{path}': {}",
            crate::acl::io_error_text(&e)
        )
    })?;
    let users = crate::acl::parse_file(&text, path)?;
    Ok(acl.replace(users))
}

/// Loads the `user` directives and the ACL file at start-up.
///
/// # Errors
/// What stops the server from starting, naming the file.
pub fn load_at_startup(acl: &Acl, config: &crate::config::Config) -> Result<(), String> {
    if !config.aclfile.is_empty() && !config.users.is_empty() {
        return Err("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.".into());
    }
    for words in &config.users {
        acl.setuser(&words[0], &words[1..])
            .map_err(|e| format!("Error in user declaration '{}': {e}", words[0]))?;
    }
    if !config.aclfile.is_empty() {
        load_file(acl, &config.aclfile)
            .map_err(|e| format!("Aborting Redis startup because of ACL errors: {e}"))?;
    }
    Ok(())
}

impl ConnCmd for AclCmd {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let acl = &c.server.acl;
            match *self {
                AclCmd::WhoAmI => Ok(bulk(c.user.name.clone())),
                AclCmd::Users => Ok(Frame::Array(acl.names().into_iter().map(bulk).collect())),
                AclCmd::List => Ok(Frame::Array(
                    acl.list()
                        .into_iter()
                        .map(|(n, s)| bulk(format!("user {n} {}", s.describe())))
                        .collect(),
                )),
                AclCmd::SetUser(name, rules) => {
                    let rules: Vec<String> = rules.iter().map(|r| text(r)).collect();
                    acl.setuser(&text(&name), &rules).map_err(CmdError::err)?;
                    if let Some(user) = acl.user(&name) {
                        disconnect_lost_subscribers(c, &user);
                    }
                    Ok(Frame::ok())
                }
                AclCmd::GetUser(name) => {
                    let Some(u) = acl.user(&name) else {
                        return Ok(Frame::Null);
                    };
                    let s = u.state();
                    let root = s.selectors[0].view();
                    let sels = s.selectors[1..]
                        .iter()
                        .map(|sel| {
                            let v = sel.view();
                            Frame::Map(vec![
                                (bulk("commands"), bulk(v.commands)),
                                (bulk("keys"), bulk(v.keys)),
                                (bulk("channels"), bulk(v.channels)),
                            ])
                        })
                        .collect();
                    Ok(Frame::Map(vec![
                        (
                            bulk("flags"),
                            Frame::Set(s.flags().into_iter().map(bulk).collect()),
                        ),
                        (
                            bulk("passwords"),
                            Frame::Array(s.passwords.iter().cloned().map(bulk).collect()),
                        ),
                        (bulk("commands"), bulk(root.commands)),
                        (bulk("keys"), bulk(root.keys)),
                        (bulk("channels"), bulk(root.channels)),
                        (bulk("selectors"), Frame::Array(sels)),
                    ]))
                }
                AclCmd::DelUser(names) => {
                    if names.iter().any(|n| n.as_ref() == b"default") {
                        return Err(CmdError::ACL_DEFAULT_USER);
                    }
                    let removed: Vec<_> = names.iter().filter_map(|n| acl.remove(n)).collect();
                    let n = removed.len() as i64;
                    disconnect(c, &removed);
                    Ok(Frame::Integer(n))
                }
                AclCmd::Cat(None) => Ok(Frame::Array(
                    acl::CATEGORIES.iter().map(|c| bulk(*c)).collect(),
                )),
                AclCmd::Cat(Some(cat)) => {
                    let name = text(&cat).to_ascii_lowercase();
                    if !acl::CATEGORIES.contains(&name.as_str()) {
                        return Err(CmdError::acl_category(&text(&cat)));
                    }
                    Ok(Frame::Array(
                        Table::get()
                            .specs
                            .iter()
                            .filter(|s| {
                                crate::spec::Cats::named(&name).is_some_and(|c| s.acl.has(c))
                            })
                            .map(|s| bulk(s.name))
                            .collect(),
                    ))
                }
                AclCmd::GenPass(bits) => {
                    let chars = (bits as usize).div_ceil(4);
                    let mut out = String::with_capacity(chars);
                    while out.len() < chars {
                        let b: u8 = rand::random();
                        out.push_str(&format!("{b:02x}"));
                    }
                    out.truncate(chars);
                    Ok(bulk(out))
                }
                AclCmd::Log(None) => {
                    acl.log_reset();
                    Ok(Frame::ok())
                }
                AclCmd::Log(Some(n)) => {
                    let now = crate::state::unix_ms();
                    let entries = acl.log_entries(n.max(0) as usize);
                    Ok(Frame::Array(
                        entries
                            .into_iter()
                            .map(|e| {
                                Frame::Map(vec![
                                    (bulk("count"), Frame::Integer(e.count as i64)),
                                    (bulk("reason"), bulk(e.reason)),
                                    (bulk("context"), bulk(e.context)),
                                    (bulk("object"), bulk(e.object)),
                                    (bulk("username"), bulk(e.username)),
                                    (
                                        bulk("age-seconds"),
                                        Frame::Double((now - e.ctime_ms) as f64 / 1000.0),
                                    ),
                                    (bulk("client-info"), bulk(e.client_info)),
                                ])
                            })
                            .collect(),
                    ))
                }
                AclCmd::DryRun(args) => dry_run(acl, args),
                AclCmd::Save => {
                    let path = c.server.config.read().aclfile.clone();
                    if path.is_empty() {
                        return Err(CmdError::ACL_NO_FILE);
                    }
                    let text = acl::render_file(acl);
                    let res = tokio::task::spawn_blocking(move || {
                        crate::cmd::server::config::write_atomically(
                            std::path::Path::new(&path),
                            &text,
                        )
                    })
                    .await
                    .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())));
                    res.map_err(|e| {
                        tracing::warn!("ACL SAVE: {e}");
                        CmdError::ACL_SAVE
                    })?;
                    Ok(Frame::ok())
                }
                AclCmd::Load => {
                    let path = c.server.config.read().aclfile.clone();
                    if path.is_empty() {
                        return Err(CmdError::ACL_NO_FILE);
                    }
                    let dropped = load_file(acl, &path).map_err(CmdError::err)?;
                    disconnect(c, &dropped);
                    Ok(Frame::ok())
                }
                AclCmd::Help => Ok(crate::cmd::server::help("ACL", HELP)),
            }
        })
    }
}

/// ACL DRYRUN: whether `user` could run the command line, without running it.
fn dry_run(acl: &Acl, args: Vec<Bytes>) -> Result<Frame, CmdError> {
    let user = acl
        .user(&args[0])
        .ok_or_else(|| CmdError::acl_no_user(&text(&args[0])))?;
    let argv = &args[1..];
    let table = Table::get();
    let not_found = || CmdError::acl_no_command(&text(&argv[0]));
    let (mut idx, mut spec) = table.lookup(&argv[0]).ok_or_else(not_found)?;
    if !spec.subcommands.is_empty() && argv.len() > 1 {
        if let Some((i, s)) = table.lookup_sub(spec, &argv[1]) {
            (idx, spec) = (i, s);
        }
    }
    if !spec.arity_ok(argv.len()) {
        return Err(CmdError::WrongArity(spec.name.into()));
    }
    Ok(match user.state().check(idx, spec, argv) {
        Ok(()) => Frame::ok(),
        Err(acl::Denied::Cmd) => bulk(format!(
            "This user has no permissions to run the '{}' command",
            spec.name
        )),
        Err(acl::Denied::Key(p)) => bulk(format!(
            "This user has no permissions to access the '{}' key",
            text(&argv[p])
        )),
        Err(acl::Denied::Channel(p)) => bulk(format!(
            "This user has no permissions to access the '{}' channel",
            text(&argv[p])
        )),
    })
}

/// ACL HELP's lines (Redis 7.0's wording).
const HELP: &[&str] = &[
    "CAT [<category>]",
    "    List all commands that belong to <category>, or all command categories",
    "    when no category is specified.",
    "DELUSER <username> [<username> ...]",
    "    Delete a list of users.",
    "DRYRUN <username> <command> [<arg> ...]",
    "    Returns whether the user can execute the given command without executing the command.",
    "GETUSER <username>",
    "    Get the user's details.",
    "GENPASS [<bits>]",
    "    Generate a secure 256-bit user password. The optional `bits` argument can",
    "    be used to specify a different size.",
    "LIST",
    "    Show users details in config file format.",
    "LOAD",
    "    Reload users from the ACL file.",
    "LOG [<count> | RESET]",
    "    Show the ACL log entries.",
    "SAVE",
    "    Save the current config to the ACL file.",
    "SETUSER <username> <attribute> [<attribute> ...]",
    "    Create or modify a user with the specified attributes.",
    "USERS",
    "    List all the registered usernames.",
    "WHOAMI",
    "    Return the current connection username.",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(sub: &'static Spec, line: &[&str]) -> Result<Parsed, CmdError> {
        let v = line.iter().map(|s| Bytes::from(s.to_string())).collect();
        (sub.parse)(&mut Args::new(sub.name, v))
    }

    fn spec(name: &str) -> &'static Spec {
        SUBCOMMANDS.iter().find(|s| s.name == name).unwrap()
    }

    #[test]
    fn genpass_bounds() {
        let g = spec("acl|genpass");
        assert!(parse(g, &["4096"]).is_ok());
        for bad in ["0", "-1", "4097"] {
            assert_eq!(
                parse(g, &[bad]).err().unwrap().message(),
                "ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096"
            );
        }
        assert_eq!(parse(g, &["x"]).err(), Some(CmdError::NotInteger));
    }

    #[test]
    fn log_forms() {
        let l = spec("acl|log");
        assert!(parse(l, &["reset"]).is_ok());
        assert!(parse(l, &["3"]).is_ok());
        assert_eq!(parse(l, &["x"]).err(), Some(CmdError::NotInteger));
        assert_eq!(
            parse(l, &["a", "b"]).err().unwrap().message(),
            "ERR unknown subcommand or wrong number of arguments for 'LOG'. Try ACL HELP."
        );
    }
}
