//! SLOWLOG GET [count] | LEN | RESET | HELP — the commands that ran at least
//! `slowlog-log-slower-than` microseconds, newest first. <https://redis.io/commands/slowlog-get/>
//!
//! An entry is Redis 7.0's: id, unix time, microseconds, the arguments (at most 32, each at most
//! 128 bytes, passwords redacted), the client's address and name. What is logged and how the
//! time is measured is in [`crate::observe`].

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

const ADMIN: crate::cmd::Flags = Spec::flags(&["admin", "loading", "stale"]);
const ADMIN_ACL: crate::cmd::Cats = Spec::acl(&["admin", "slow", "dangerous"]);

/// SLOWLOG's subcommands.
pub const SUBCOMMANDS: &[Spec] = &[
    Spec {
        name: "slowlog|get",
        arity: -2,
        flags: ADMIN,
        acl: ADMIN_ACL,
        group: "server",
        since: "2.2.12",
        summary: "Get the slow log's entries",
        complexity: "O(N) where N is the number of entries returned",
        parse: Slowlog::parse_get,
        tips: &["request_policy:all_nodes", "nondeterministic_output"],
        ..Spec::BASE
    },
    Spec {
        name: "slowlog|len",
        arity: 2,
        flags: ADMIN,
        acl: ADMIN_ACL,
        group: "server",
        since: "2.2.12",
        summary: "Get the slow log's length",
        parse: |a| Slowlog::plain(a, Slowlog::Len),
        tips: &[
            "request_policy:all_nodes",
            "response_policy:agg_sum",
            "nondeterministic_output",
        ],
        ..Spec::BASE
    },
    Spec {
        name: "slowlog|reset",
        arity: 2,
        flags: ADMIN,
        acl: ADMIN_ACL,
        group: "server",
        since: "2.2.12",
        summary: "Clear all entries from the slow log",
        complexity: "O(N) where N is the number of entries in the slowlog",
        parse: |a| Slowlog::plain(a, Slowlog::Reset),
        tips: &["request_policy:all_nodes", "response_policy:all_succeeded"],
        ..Spec::BASE
    },
    Spec {
        name: "slowlog|help",
        arity: 2,
        flags: Spec::flags(&["loading", "stale"]),
        acl: Spec::acl(&["slow"]),
        group: "server",
        since: "6.2.0",
        summary: "Show helpful text about the different subcommands",
        parse: |a| Slowlog::plain(a, Slowlog::Help),
        ..Spec::BASE
    },
];

/// SLOWLOG's declaration (a container).
pub const SPEC: Spec = Spec {
    name: "slowlog",
    arity: -2,
    group: "server",
    since: "2.2.12",
    summary: "A container for slow log commands",
    complexity: "Depends on subcommand.",
    subcommands: SUBCOMMANDS,
    ..Spec::BASE
};

/// A SLOWLOG subcommand.
#[derive(Debug, PartialEq)]
pub enum Slowlog {
    /// SLOWLOG GET: at most this many entries (`None`: all).
    Get(Option<usize>),
    /// SLOWLOG LEN.
    Len,
    /// SLOWLOG RESET.
    Reset,
    /// SLOWLOG HELP.
    Help,
}

impl Slowlog {
    fn plain(args: &mut Args, cmd: Slowlog) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(cmd)
    }

    fn parse_get(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::conn(Self::get_args(args)?)
    }

    fn get_args(args: &mut Args) -> Result<Slowlog, CmdError> {
        if args.remaining() > 1 {
            return Err(args.subcommand_syntax());
        }
        let count = match args.rest().first() {
            None => Some(10),
            Some(a) => match relis::parse_i64(a) {
                Some(-1) => None,
                Some(n) if n >= 0 => Some(usize::try_from(n).unwrap_or(usize::MAX)),
                _ => return Err(CmdError::SLOWLOG_COUNT),
            },
        };
        Ok(Slowlog::Get(count))
    }
}

const HELP: &[&str] = &[
    "GET [<count>]",
    "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
    "    Entries are made of:",
    "    id, timestamp, time in microseconds, arguments array, client IP and port,",
    "    client name",
    "LEN",
    "    Return the length of the slowlog.",
    "RESET",
    "    Reset the slowlog.",
];

impl ConnCmd for Slowlog {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let log = &c.server.observe.slowlog;
            Ok(match *self {
                Slowlog::Get(n) => Frame::Array(
                    log.get(n)
                        .into_iter()
                        .map(|e| {
                            Frame::Array(vec![
                                Frame::Integer(e.id as i64),
                                Frame::Integer(e.time),
                                Frame::Integer(e.micros as i64),
                                Frame::Array(e.args.into_iter().map(Frame::Bulk).collect()),
                                Frame::Bulk(Bytes::from(e.addr)),
                                Frame::Bulk(e.name),
                            ])
                        })
                        .collect(),
                ),
                Slowlog::Len => Frame::Integer(log.len() as i64),
                Slowlog::Reset => {
                    log.reset();
                    Frame::ok()
                }
                Slowlog::Help => super::help("SLOWLOG", HELP),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(v: &[&str]) -> Result<Slowlog, String> {
        let v = v.iter().map(|s| Bytes::from(s.to_string())).collect();
        Slowlog::get_args(&mut Args::new("slowlog|get", v)).map_err(|e| e.message())
    }

    #[test]
    fn get_count() {
        assert_eq!(get(&[]), Ok(Slowlog::Get(Some(10))));
        assert_eq!(get(&["0"]), Ok(Slowlog::Get(Some(0))));
        assert_eq!(get(&["-1"]), Ok(Slowlog::Get(None)));
        assert_eq!(get(&["3"]), Ok(Slowlog::Get(Some(3))));
        let e = "ERR count should be greater than or equal to -1";
        assert_eq!(get(&["-2"]).unwrap_err(), e);
        assert_eq!(get(&["abc"]).unwrap_err(), e);
        assert_eq!(get(&["99999999999999999999"]).unwrap_err(), e);
        assert!(get(&["1", "2"])
            .unwrap_err()
            .contains("wrong number of arguments for '"));
    }
}
