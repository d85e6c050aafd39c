//! HELLO [protover [AUTH username password] [SETNAME clientname]] — switch protocol,
//! authenticate, name the connection, and describe the server.
//! <https://redis.io/commands/hello/>

use super::auth::authenticate;
use super::client::validate_name;
use crate::args::{parse_i64, Args};
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::{Frame, Protocol};
use std::sync::atomic::Ordering;

/// HELLO's declaration.
pub const SPEC: Spec = Spec {
    name: "hello",
    arity: -1,
    flags: Spec::flags(&[
        "noscript",
        "loading",
        "stale",
        "fast",
        "no_auth",
        "allow_busy",
    ]),
    acl: Spec::acl(&["fast", "connection"]),
    group: "connection",
    since: "6.0.0",
    summary: "Handshake with Redis",
    parse: Hello::parse,
    ..Spec::BASE
};

/// HELLO's options; later AUTH / SETNAME options override earlier ones, as in Redis.
#[derive(Debug, Default, PartialEq)]
pub struct Hello {
    proto: Option<Protocol>,
    auth: Option<(Bytes, Bytes)>,
    name: Option<Bytes>,
}

impl Hello {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::conn(Self::parse_args(args)?)
    }

    fn parse_args(args: &mut Args) -> Result<Hello, CmdError> {
        let mut h = Hello::default();
        let Some(ver) = args.peek().cloned() else {
            return Ok(h);
        };
        args.next()?;
        let ver = parse_i64(&ver).map_err(|_| CmdError::HELLO_VERSION)?;
        h.proto = Some(match ver {
            2 => Protocol::Resp2,
            3 => Protocol::Resp3,
            _ => return Err(CmdError::NOPROTO),
        });
        while let Some(opt) = args.peek().cloned() {
            args.next()?;
            let more = args.remaining();
            if opt.eq_ignore_ascii_case(b"auth") && more >= 2 {
                h.auth = Some((args.next()?, args.next()?));
            } else if opt.eq_ignore_ascii_case(b"setname") && more >= 1 {
                let name = args.next()?;
                validate_name(&name)?;
                h.name = Some(name);
            } else {
                return Err(CmdError::hello_option(&opt));
            }
        }
        args.finish()?;
        Ok(h)
    }
}

impl ConnCmd for Hello {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            if let Some((user, pass)) = &self.auth {
                authenticate(c, user, pass, "HELLO")?;
            }
            if !c.authed {
                return Err(CmdError::HELLO_NOAUTH);
            }
            if let Some(name) = self.name {
                *c.info.name.lock() = (!name.is_empty()).then_some(name);
            }
            if let Some(p) = self.proto {
                c.proto = p;
                // A RESP3 connection takes pushes from others (invalidations redirected to it):
                // its connection loop watches the mailbox from now on.
                c.mailbox_used |= p == Protocol::Resp3;
                c.info
                    .resp
                    .store(if p == Protocol::Resp3 { 3 } else { 2 }, Ordering::Relaxed);
            }
            let proto = if c.proto == Protocol::Resp3 { 3 } else { 2 };
            let b = |s: &'static str| Frame::Bulk(Bytes::from_static(s.as_bytes()));
            Ok(Frame::Map(vec![
                (b("server"), b("redis")),
                (b("version"), b(crate::REDIS_VERSION)),
                (b("proto"), Frame::Integer(proto)),
                (b("id"), Frame::Integer(c.info.id as i64)),
                (b("mode"), b("standalone")),
                (b("role"), b("master")),
                (b("modules"), Frame::Array(Vec::new())),
            ]))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &[&str]) -> Result<Hello, CmdError> {
        let v = line.iter().map(|s| Bytes::from(s.to_string())).collect();
        Hello::parse_args(&mut Args::new("hello", v))
    }

    fn msg(line: &[&str]) -> String {
        parse(line).unwrap_err().message()
    }

    #[test]
    fn options() {
        assert_eq!(parse(&[]).unwrap(), Hello::default());
        let h = parse(&["3", "auth", "u", "p", "SETNAME", "n"]).unwrap();
        assert_eq!(h.proto, Some(Protocol::Resp3));
        assert_eq!(h.auth, Some(("u".into(), "p".into())));
        assert_eq!(h.name, Some("n".into()));
        assert_eq!(parse(&["2"]).unwrap().proto, Some(Protocol::Resp2));
    }

    #[test]
    fn errors() {
        assert_eq!(msg(&["1"]), "NOPROTO unsupported protocol version");
        assert_eq!(msg(&["4"]), "NOPROTO unsupported protocol version");
        assert_eq!(
            msg(&["x"]),
            "ERR Protocol version is not an integer or out of range"
        );
        assert_eq!(
            msg(&["3", "auth", "a"]),
            "ERR Syntax error in HELLO option 'auth'"
        );
        assert_eq!(
            msg(&["3", "foo", "setname", "a b"]),
            "ERR Syntax error in HELLO option 'foo'"
        );
        assert_eq!(
            msg(&["3", "setname", "a b"]),
            "ERR Client names cannot contain spaces, newlines or special characters."
        );
        assert_eq!(
            msg(&["3", "setname"]),
            "ERR Syntax error in HELLO option 'setname'"
        );
    }
}
