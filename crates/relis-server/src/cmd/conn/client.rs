//! CLIENT subcommand — inspect and control connections: ID, GETNAME, SETNAME, SETINFO, INFO,
//! LIST, KILL, PAUSE, UNPAUSE, REPLY, NO-EVICT, NO-TOUCH, TRACKING, CACHING, GETREDIR,
//! TRACKINGINFO, HELP. <https://redis.io/commands/client/>
//!
//! LIST and INFO are in `client_list.rs`, KILL in `client_kill.rs`, the client-side caching
//! subcommands in `client_tracking.rs`. SETINFO and NO-TOUCH
//! arrived in Redis 7.2; Relis accepts them as 7.2 does (CLIENT LIST keeps the 7.0 fields).

use super::{client_kill, client_list, client_tracking};
use crate::args::Args;
use crate::client::{Client, ReplyMode};
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;
use std::sync::atomic::Ordering;

const FLAGS: crate::cmd::Flags = Spec::flags(&["noscript", "loading", "stale"]);
const ADMIN_FLAGS: crate::cmd::Flags = Spec::flags(&["admin", "noscript", "loading", "stale"]);
const ACL: crate::cmd::Cats = Spec::acl(&["slow", "connection"]);
const ADMIN_ACL: crate::cmd::Cats = Spec::acl(&["admin", "slow", "dangerous", "connection"]);

/// CLIENT's subcommands.
pub const SUBCOMMANDS: &[Spec] = &[
    Spec {
        name: "client|id",
        arity: 2,
        flags: FLAGS,
        acl: ACL,
        group: "connection",
        since: "5.0.0",
        summary: "Returns the client ID for the current connection",
        parse: |a| ClientCmd::parse(a, ClientCmd::Id),
        ..Spec::BASE
    },
    Spec {
        name: "client|getname",
        arity: 2,
        flags: FLAGS,
        acl: ACL,
        group: "connection",
        since: "2.6.9",
        summary: "Get the current connection name",
        parse: |a| ClientCmd::parse(a, ClientCmd::GetName),
        ..Spec::BASE
    },
    Spec {
        name: "client|setname",
        arity: 3,
        flags: FLAGS,
        acl: ACL,
        group: "connection",
        since: "2.6.9",
        summary: "Set the current connection name",
        parse: ClientCmd::parse_setname,
        ..Spec::BASE
    },
    Spec {
        name: "client|setinfo",
        arity: 4,
        flags: Spec::flags(&["noscript", "loading", "stale", "allow_busy"]),
        acl: ACL,
        group: "connection",
        since: "7.2.0",
        summary: "Sets information specific to the client or connection.",
        parse: ClientCmd::parse_setinfo,
        tips: &["request_policy:all_nodes", "response_policy:all_succeeded"],
        ..Spec::BASE
    },
    client_list::SPEC_INFO,
    client_list::SPEC_LIST,
    client_kill::SPEC,
    client_tracking::SPEC_TRACKING,
    client_tracking::SPEC_CACHING,
    client_tracking::SPEC_GETREDIR,
    client_tracking::SPEC_TRACKINGINFO,
    Spec {
        name: "client|pause",
        arity: -3,
        flags: ADMIN_FLAGS,
        acl: ADMIN_ACL,
        group: "connection",
        since: "2.9.50",
        summary: "Stop processing commands from clients for some time",
        parse: ClientCmd::parse_pause,
        ..Spec::BASE
    },
    Spec {
        name: "client|unpause",
        arity: 2,
        flags: ADMIN_FLAGS,
        acl: ADMIN_ACL,
        group: "connection",
        since: "6.2.0",
        summary: "Resume processing of clients that were paused",
        complexity: "O(N) Where N is the number of paused clients",
        parse: |a| ClientCmd::parse(a, ClientCmd::Unpause),
        ..Spec::BASE
    },
    Spec {
        name: "client|reply",
        arity: 3,
        flags: FLAGS,
        acl: ACL,
        group: "connection",
        since: "3.2.0",
        summary: "Instruct the server whether to reply to commands",
        parse: ClientCmd::parse_reply,
        ..Spec::BASE
    },
    Spec {
        name: "client|no-evict",
        arity: 3,
        flags: ADMIN_FLAGS,
        acl: ADMIN_ACL,
        group: "connection",
        since: "7.0.0",
        summary: "Set client eviction mode for the current connection",
        parse: |a| ClientCmd::parse_on_off(a, ClientCmd::NoEvict),
        ..Spec::BASE
    },
    Spec {
        name: "client|no-touch",
        arity: 3,
        flags: FLAGS,
        acl: ACL,
        group: "connection",
        since: "7.2.0",
        summary: "Controls whether commands sent by the client affect the LRU/LFU of accessed keys",
        parse: |a| ClientCmd::parse_on_off(a, ClientCmd::NoTouch),
        ..Spec::BASE
    },
    Spec {
        name: "client|unblock",
        arity: -3,
        flags: ADMIN_FLAGS,
        acl: ADMIN_ACL,
        group: "connection",
        since: "5.0.0",
        summary: "Unblock a client blocked in a blocking command from a different connection",
        complexity: "O(log N) where N is the number of client connections",
        parse: ClientCmd::parse_unblock,
        ..Spec::BASE
    },
    Spec {
        name: "client|help",
        arity: 2,
        flags: Spec::flags(&["loading", "stale"]),
        acl: ACL,
        group: "connection",
        since: "5.0.0",
        summary: "Show helpful text about the different subcommands",
        parse: |a| ClientCmd::parse(a, ClientCmd::Help),
        ..Spec::BASE
    },
];

/// CLIENT's declaration (a container: the dispatcher picks a subcommand).
pub const SPEC: Spec = Spec {
    name: "client",
    arity: -2,
    group: "connection",
    since: "2.4.0",
    summary: "A container for client connection commands",
    complexity: "Depends on subcommand.",
    subcommands: SUBCOMMANDS,
    ..Spec::BASE
};

/// The simple CLIENT subcommands.
#[derive(Debug, PartialEq)]
pub enum ClientCmd {
    /// CLIENT ID.
    Id,
    /// CLIENT GETNAME.
    GetName,
    /// CLIENT SETNAME (None clears the name).
    SetName(Option<Bytes>),
    /// CLIENT SETINFO LIB-NAME|LIB-VER value.
    SetInfo {
        /// true for LIB-NAME, false for LIB-VER.
        lib_name: bool,
        /// The value (empty clears it).
        value: String,
    },
    /// CLIENT REPLY ON|OFF|SKIP.
    Reply(ReplyMode),
    /// CLIENT NO-EVICT ON|OFF.
    NoEvict(bool),
    /// CLIENT NO-TOUCH ON|OFF.
    NoTouch(bool),
    /// CLIENT UNBLOCK id [TIMEOUT|ERROR]: `error` answers the blocked client with an error
    /// rather than its timeout reply.
    Unblock {
        /// The blocked client's id.
        id: i64,
        /// ERROR (true) or TIMEOUT (false, the default).
        error: bool,
    },
    /// CLIENT PAUSE timeout [WRITE|ALL]: holds clients' commands for `ms` milliseconds.
    Pause {
        /// How long.
        ms: u64,
        /// What it holds.
        mode: crate::pause::PauseMode,
    },
    /// CLIENT UNPAUSE.
    Unpause,
    /// CLIENT HELP.
    Help,
}

/// Checks a client name as Redis does: printable ASCII without spaces.
///
/// # Errors
/// Redis's error text for a bad name.
pub fn validate_name(name: &[u8]) -> Result<(), CmdError> {
    if name.iter().all(|b| (b'!'..=b'~').contains(b)) {
        Ok(())
    } else {
        Err(CmdError::CLIENT_NAME)
    }
}

impl ClientCmd {
    fn parse(args: &mut Args, cmd: ClientCmd) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(cmd)
    }

    fn parse_setname(args: &mut Args) -> Result<Parsed, CmdError> {
        let name = args.next()?;
        args.finish()?;
        validate_name(&name)?;
        Parsed::conn(ClientCmd::SetName((!name.is_empty()).then_some(name)))
    }

    fn parse_setinfo(args: &mut Args) -> Result<Parsed, CmdError> {
        let attr = args.next()?;
        let value = args.next()?;
        args.finish()?;
        let attr_s = String::from_utf8_lossy(&attr).into_owned();
        let lib_name = if attr.eq_ignore_ascii_case(b"lib-name") {
            true
        } else if attr.eq_ignore_ascii_case(b"lib-ver") {
            false
        } else {
            return Err(CmdError::setinfo_option(&attr_s));
        };
        if !value.iter().all(|b| (b'!'..=b'~').contains(b)) {
            return Err(CmdError::setinfo_value(&attr_s));
        }
        Parsed::conn(ClientCmd::SetInfo {
            lib_name,
            value: String::from_utf8_lossy(&value).into_owned(),
        })
    }

    fn parse_reply(args: &mut Args) -> Result<Parsed, CmdError> {
        let mode = if args.eat("on") {
            ReplyMode::On
        } else if args.eat("off") {
            ReplyMode::Off
        } else if args.eat("skip") {
            ReplyMode::Skip
        } else {
            return Err(CmdError::Syntax);
        };
        args.finish()?;
        Parsed::conn(ClientCmd::Reply(mode))
    }

    fn parse_unblock(args: &mut Args) -> Result<Parsed, CmdError> {
        if args.remaining() > 2 {
            return Err(args.subcommand_syntax());
        }
        let id = args.next()?;
        // The reason is checked before the id, as in Redis.
        let error = if args.is_empty() || args.eat("timeout") {
            false
        } else if args.eat("error") {
            true
        } else {
            return Err(CmdError::UNBLOCK_REASON);
        };
        args.finish()?;
        let id = crate::args::parse_i64(&id)?;
        Parsed::conn(ClientCmd::Unblock { id, error })
    }

    fn parse_pause(args: &mut Args) -> Result<Parsed, CmdError> {
        use crate::pause::PauseMode;
        if args.remaining() > 2 {
            return Err(args.subcommand_syntax());
        }
        let timeout = args.next()?;
        let mode = if args.is_empty() || args.eat("all") {
            PauseMode::All
        } else if args.eat("write") {
            PauseMode::Write
        } else {
            return Err(CmdError::PAUSE_MODE);
        };
        args.finish()?;
        // The mode is checked before the timeout, as in Redis.
        let ms = crate::args::parse_i64(&timeout).map_err(|_| CmdError::TIMEOUT_NOT_INTEGER)?;
        if ms < 0 {
            return Err(CmdError::TIMEOUT_NEGATIVE);
        }
        Parsed::conn(ClientCmd::Pause {
            ms: ms as u64,
            mode,
        })
    }

    fn parse_on_off(args: &mut Args, make: fn(bool) -> ClientCmd) -> Result<Parsed, CmdError> {
        let on = if args.eat("on") {
            true
        } else if args.eat("off") {
            false
        } else {
            return Err(CmdError::Syntax);
        };
        args.finish()?;
        Parsed::conn(make(on))
    }
}

/// CLIENT HELP's lines (Redis 7.0's wording, for the subcommands Relis has, plus 7.2's
/// SETINFO and NO-TOUCH).
const HELP: &[&str] = &[
    "CACHING (YES|NO)",
    "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
    "GETREDIR",
    "    Return the client ID we are redirecting to when tracking is enabled.",
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made from the specified address",
    "    * LADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made to specified local address",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Kill connections by type.",
    "    * USER <username>",
    "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)",
    "      Skip killing current connection (default: yes).",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "UNPAUSE",
    "    Stop the current client pause, resuming traffic.",
    "PAUSE <timeout> [WRITE|ALL]",
    "    Suspend all, or just write, clients for <timeout> milliseconds.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "SETINFO <option> <value>",
    "    Set client meta attr. Options are:",
    "    * LIB-NAME: the client lib name.",
    "    * LIB-VER: the client lib version.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
    "    Unblock the specified blocked client.",
    "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
    "         [OPTIN] [OPTOUT] [NOLOOP]",
    "    Control server assisted client side caching.",
    "TRACKINGINFO",
    "    Report tracking status for the current connection.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
    "NO-TOUCH (ON|OFF)",
    "    Will not touch LRU/LFU stats when this mode is on.",
];

impl ConnCmd for ClientCmd {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            Ok(match *self {
                ClientCmd::Id => Frame::Integer(c.info.id as i64),
                ClientCmd::GetName => match c.info.name.lock().clone() {
                    Some(n) => Frame::Bulk(n),
                    None => Frame::Null,
                },
                ClientCmd::SetName(name) => {
                    *c.info.name.lock() = name;
                    Frame::ok()
                }
                ClientCmd::SetInfo { lib_name, value } => {
                    let mut lib = c.info.lib.lock();
                    if lib_name {
                        lib.0 = value;
                    } else {
                        lib.1 = value;
                    }
                    Frame::ok()
                }
                ClientCmd::Reply(mode) => {
                    // OFF and SKIP silence this very reply too, as in Redis; SKIP while OFF
                    // stays OFF.
                    if !(mode == ReplyMode::Skip && c.reply_mode == ReplyMode::Off) {
                        c.reply_mode = mode;
                    }
                    Frame::ok()
                }
                ClientCmd::NoEvict(on) => {
                    c.info.no_evict.store(on, Ordering::Relaxed);
                    Frame::ok()
                }
                ClientCmd::NoTouch(on) => {
                    c.info.no_touch.store(on, Ordering::Relaxed);
                    Frame::ok()
                }
                ClientCmd::Unblock { id, error } => {
                    // Only a client still waiting is unblocked: one being served right now is
                    // already gone from the registry, and its reply is on the way.
                    let blocking = &c.server.blocking;
                    let waiter = u64::try_from(id).ok().and_then(|id| blocking.of_client(id));
                    match waiter {
                        Some(w) if blocking.remove(w.id) => {
                            // Every keyed blocking command times out with a null array; WAIT
                            // (the one waiter without keys) with its count of replicas.
                            w.answer(if error {
                                Err(CmdError::UNBLOCKED)
                            } else if w.keys.is_empty() {
                                Ok(Frame::Integer(crate::cmd::replication::wait::ACKED))
                            } else {
                                Ok(Frame::NullArray)
                            });
                            Frame::Integer(1)
                        }
                        _ => Frame::Integer(0),
                    }
                }
                ClientCmd::Pause { ms, mode } => {
                    let now = tokio::time::Instant::now();
                    // A timeout past what the clock can count is "until UNPAUSE".
                    let until = now
                        .checked_add(std::time::Duration::from_millis(ms))
                        .unwrap_or_else(|| now + std::time::Duration::from_secs(1 << 32));
                    c.server.pause.pause(until, mode);
                    Frame::ok()
                }
                ClientCmd::Unpause => {
                    c.server.pause.unpause();
                    Frame::ok()
                }
                ClientCmd::Help => crate::cmd::server::help("CLIENT", HELP),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(f: fn(&mut Args) -> Result<Parsed, CmdError>, line: &[&str]) -> Option<String> {
        let v = line.iter().map(|s| Bytes::from(s.to_string())).collect();
        f(&mut Args::new("client", v)).err().map(|e| e.message())
    }

    #[test]
    fn parse_errors() {
        assert_eq!(parse(ClientCmd::parse_setname, &["ok-name"]), None);
        assert_eq!(parse(ClientCmd::parse_setname, &[""]), None);
        assert_eq!(
            parse(ClientCmd::parse_setname, &["a b"]).as_deref(),
            Some("ERR Client names cannot contain spaces, newlines or special characters.")
        );
        assert_eq!(
            parse(ClientCmd::parse_reply, &["x"]).as_deref(),
            Some("ERR syntax error")
        );
        assert_eq!(parse(ClientCmd::parse_reply, &["SKIP"]), None);
        assert_eq!(
            parse(ClientCmd::parse_setinfo, &["foo", "x"]).as_deref(),
            Some("ERR Unrecognized option 'foo'")
        );
        assert_eq!(
            parse(ClientCmd::parse_setinfo, &["LIB-NAME", "a b"]).as_deref(),
            Some("ERR LIB-NAME cannot contain spaces, newlines or special characters.")
        );
        assert_eq!(parse(ClientCmd::parse_setinfo, &["lib-ver", "1.0"]), None);
    }
}
