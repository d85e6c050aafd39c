//! REPLCONF option value [option value ...] — what a replica tells its master during the
//! handshake (listening-port, ip-address, capa, rdb-only) and later (ACK, GETACK).
//! <https://redis.io/commands/replconf/>
//!
//! Answered as Redis answers a client that is not a replica: the options are checked and
//! accepted (`OK`, with nothing to remember: no replica ever syncs with Relis), and ACK or
//! GETACK — meaningful only on a replication link — end the command with no reply at all, as
//! in Redis.

use crate::args::Args;
use crate::client::{Client, ReplyMode};
use crate::cmd::{BoxFuture, ConnCmd, Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// REPLCONF's declaration.
pub const SPEC: Spec = Spec {
    name: "replconf",
    arity: -1,
    flags: Spec::flags(&["admin", "noscript", "loading", "stale", "allow_busy"]),
    acl: Spec::acl(&["admin", "slow", "dangerous"]),
    group: "server",
    since: "3.0.0",
    summary: "An internal command for configuring the replication stream",
    parse: Replconf::parse,
    ..Spec::BASE
};

/// Redis's `NET_HOST_STR_LEN`: an ip-address must be shorter.
const HOST_MAX: usize = 256;

/// REPLCONF, checked.
#[derive(Debug, PartialEq)]
pub enum Replconf {
    /// Every option accepted: `OK`.
    Ok,
    /// ACK or GETACK reached: no reply.
    Silent,
}

impl Replconf {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::conn(Self::parse_args(args.rest())?)
    }

    /// Redis's `replconfCommand`, option by option in order: the first bad one answers.
    fn parse_args(argv: Vec<Bytes>) -> Result<Replconf, CmdError> {
        if argv.len() % 2 == 1 {
            return Err(CmdError::Syntax);
        }
        for pair in argv.chunks(2) {
            let (opt, val) = (&pair[0], &pair[1]);
            let is = |name: &str| opt.eq_ignore_ascii_case(name.as_bytes());
            if is("listening-port") {
                relis::parse_i64(val).ok_or(CmdError::NotInteger)?;
            } else if is("ip-address") {
                if val.len() >= HOST_MAX {
                    return Err(CmdError::replconf_ip_too_long(val.len()));
                }
            } else if is("capa") {
                // Capabilities this master does not know are ignored, as in Redis.
            } else if is("ack") || is("getack") {
                return Ok(Replconf::Silent);
            } else if is("rdb-only") {
                match relis::parse_i64(val) {
                    Some(0 | 1) => {}
                    Some(_) => return Err(CmdError::REPLCONF_BOOL),
                    None => return Err(CmdError::NotInteger),
                }
            } else {
                return Err(CmdError::replconf_option(opt));
            }
        }
        Ok(Replconf::Ok)
    }
}

fn ok() -> Frame {
    Frame::Simple(Bytes::from_static(b"OK"))
}

/// REPLCONF inside MULTI/EXEC: a transaction's reply has one entry per command, so a silent
/// ACK gives `OK` there (Redis would leave EXEC's array short).
struct InTransaction;

impl WriteCmd for InTransaction {
    fn exec(&self, _w: &mut relis::Writer<'_>, _cx: &Cx) -> Result<Frame, CmdError> {
        Ok(ok())
    }

    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}

impl ConnCmd for Replconf {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            if *self == Replconf::Silent && c.reply_mode == ReplyMode::On {
                // The connection loop skips this one reply, then sends replies again.
                c.reply_mode = ReplyMode::Skipping;
            }
            Ok(ok())
        })
    }

    fn in_transaction(&mut self) -> Option<Box<dyn WriteCmd>> {
        Some(Box::new(InTransaction))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Replconf, String> {
        let argv = line
            .split(' ')
            .filter(|s| !s.is_empty())
            .map(|s| Bytes::from(s.to_string()))
            .collect();
        Replconf::parse_args(argv).map_err(|e| e.message())
    }

    #[test]
    fn options_as_redis_checks_them() {
        assert_eq!(parse(""), Ok(Replconf::Ok));
        assert_eq!(
            parse("listening-port 1 capa eof capa psync2 ip-address h rdb-only 1"),
            Ok(Replconf::Ok)
        );
        assert_eq!(parse("ack 1"), Ok(Replconf::Silent));
        assert_eq!(parse("ack x"), Ok(Replconf::Silent));
        assert_eq!(parse("listening-port 1 getack 1"), Ok(Replconf::Silent));
        assert_eq!(parse("x").unwrap_err(), "ERR syntax error");
        assert_eq!(
            parse("nosuch 1").unwrap_err(),
            "ERR Unrecognized REPLCONF option: nosuch"
        );
        assert_eq!(
            parse("listening-port x").unwrap_err(),
            "ERR value is not an integer or out of range"
        );
        assert_eq!(
            parse("rdb-only 2").unwrap_err(),
            "ERR value is out of range, value must between 0 and 1"
        );
        assert_eq!(
            parse(&format!("ip-address {}", "a".repeat(266))).unwrap_err(),
            "ERR REPLCONF ip-address provided by replica instance is too long: 266 bytes"
        );
        assert_eq!(
            parse(&format!("ip-address {}", "a".repeat(255))),
            Ok(Replconf::Ok)
        );
    }
}
