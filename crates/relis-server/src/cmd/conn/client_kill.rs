//! CLIENT KILL ip:port — close the connection from that address;
//! CLIENT KILL <filter> <value> ... — close every connection matching all filters (ID, TYPE,
//! ADDR, LADDR, USER, SKIPME) and reply how many. <https://redis.io/commands/client-kill/>

use super::client_list::ClientType;
use crate::args::{parse_i64, Args};
use crate::client::{Client, ClientInfo};
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// CLIENT KILL's declaration.
pub const SPEC: Spec = Spec {
    name: "client|kill",
    arity: -3,
    flags: Spec::flags(&["admin", "noscript", "loading", "stale"]),
    acl: Spec::acl(&["admin", "slow", "dangerous", "connection"]),
    group: "connection",
    since: "2.4.0",
    summary: "Kill the connection of a client",
    complexity: "O(N) where N is the number of client connections",
    parse: ClientKill::parse,
    ..Spec::BASE
};

/// CLIENT KILL's filters.
#[derive(Debug, Default, PartialEq)]
pub struct ClientKill {
    /// The old form (`CLIENT KILL addr`): replies OK / "No such client", may kill itself.
    old_form: bool,
    id: Option<u64>,
    kind: Option<ClientType>,
    addr: Option<String>,
    laddr: Option<String>,
    /// USER filter: the clients authenticated as this user (checked to exist when it runs).
    user: Option<String>,
    /// Whether to spare the calling connection (default for the filter form).
    skipme: bool,
}

impl ClientKill {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::conn(Self::parse_args(args)?)
    }

    fn parse_args(args: &mut Args) -> Result<ClientKill, CmdError> {
        let text = |b: Bytes| String::from_utf8_lossy(&b).into_owned();
        if args.remaining() == 1 {
            let kill = ClientKill {
                old_form: true,
                addr: Some(text(args.next()?)),
                ..ClientKill::default()
            };
            return Ok(kill);
        }
        let mut k = ClientKill {
            skipme: true,
            ..ClientKill::default()
        };
        while let Some(opt) = args.peek().cloned() {
            args.next()?;
            if args.is_empty() {
                return Err(CmdError::Syntax);
            }
            let val = args.next()?;
            match opt.to_ascii_lowercase().as_slice() {
                b"id" => {
                    let id = parse_i64(&val)
                        .ok()
                        .filter(|i| *i > 0)
                        .ok_or(CmdError::CLIENT_ID_NOT_POSITIVE)?;
                    k.id = Some(id as u64);
                }
                b"type" => k.kind = Some(ClientType::parse(&val)?),
                b"addr" => k.addr = Some(text(val)),
                b"laddr" => k.laddr = Some(text(val)),
                b"user" => k.user = Some(text(val)),
                b"skipme" => {
                    k.skipme = if val.eq_ignore_ascii_case(b"yes") {
                        true
                    } else if val.eq_ignore_ascii_case(b"no") {
                        false
                    } else {
                        return Err(CmdError::Syntax);
                    }
                }
                _ => return Err(CmdError::Syntax),
            }
        }
        args.finish()?;
        Ok(k)
    }

    fn matches(&self, info: &ClientInfo, me: u64) -> bool {
        self.id.is_none_or(|id| id == info.id)
            && self.kind.is_none_or(|t| t.matches(info))
            && self
                .addr
                .as_ref()
                .is_none_or(|a| *a == info.addr.to_string())
            && self
                .laddr
                .as_ref()
                .is_none_or(|a| *a == info.laddr.to_string())
            && self.user.as_ref().is_none_or(|u| *u == *info.user.lock())
            && !(self.skipme && info.id == me)
    }
}

impl ConnCmd for ClientKill {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            if let Some(user) = &self.user {
                if c.server.acl.user(user.as_bytes()).is_none() {
                    return Err(CmdError::no_such_user(user));
                }
            }
            let me = c.info.id;
            let victims: Vec<_> = c
                .server
                .clients
                .lock()
                .values()
                .filter(|i| self.matches(i, me))
                .cloned()
                .collect();
            for v in &victims {
                if v.id == me {
                    // Killing ourselves: this reply goes out, then the connection closes and
                    // the rest of the pipeline is dropped, as in Redis.
                    c.quit = true;
                }
                v.kill();
            }
            if self.old_form {
                if victims.is_empty() {
                    return Err(CmdError::NO_SUCH_CLIENT);
                }
                return Ok(Frame::ok());
            }
            Ok(Frame::Integer(victims.len() as i64))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &[&str]) -> Result<ClientKill, String> {
        let v = line.iter().map(|s| Bytes::from(s.to_string())).collect();
        ClientKill::parse_args(&mut Args::new("client|kill", v)).map_err(|e| e.message())
    }

    #[test]
    fn forms() {
        let k = parse(&["1.2.3.4:5"]).unwrap();
        assert!(k.old_form && !k.skipme);
        assert_eq!(k.addr.as_deref(), Some("1.2.3.4:5"));
        let k = parse(&["ID", "7", "skipme", "NO", "laddr", "x:1"]).unwrap();
        assert_eq!(k.id, Some(7));
        assert!(!k.skipme && !k.old_form);
        assert_eq!(k.laddr.as_deref(), Some("x:1"));
    }

    #[test]
    fn errors() {
        let e = |l: &[&str]| parse(l).unwrap_err();
        assert_eq!(e(&["id", "x"]), "ERR client-id should be greater than 0");
        assert_eq!(e(&["id", "0"]), "ERR client-id should be greater than 0");
        assert_eq!(e(&["foo", "bar"]), "ERR syntax error");
        assert_eq!(e(&["id", "1", "skipme"]), "ERR syntax error");
        assert_eq!(e(&["skipme", "x"]), "ERR syntax error");
        assert_eq!(e(&["type", "x"]), "ERR Unknown client type 'x'");
        assert_eq!(e(&["maxage", "1"]), "ERR syntax error");
    }
}
