//! AUTH [username] password — authenticate the connection.
//! <https://redis.io/commands/auth/>
//!
//! The one-argument form authenticates the `default` user, whose password `requirepass` sets
//! (see [`crate::acl`]). A failure is recorded in ACL LOG (reason `auth`).

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// AUTH's declaration.
pub const SPEC: Spec = Spec {
    name: "auth",
    arity: -2,
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
    since: "1.0.0",
    summary: "Authenticate to the server",
    complexity: "O(N) where N is the number of passwords defined for the user",
    parse: Auth::parse,
    ..Spec::BASE
};

/// AUTH, with the user (`None` in the one-argument form).
#[derive(Debug, PartialEq)]
pub struct Auth {
    user: Option<Bytes>,
    pass: Bytes,
}

impl Auth {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::conn(Self::parse_args(args)?)
    }

    fn parse_args(args: &mut Args) -> Result<Auth, CmdError> {
        if args.remaining() > 2 {
            return Err(CmdError::Syntax);
        }
        let first = args.next()?;
        let auth = match args.peek() {
            Some(_) => Auth {
                user: Some(first),
                pass: args.next()?,
            },
            None => Auth {
                user: None,
                pass: first,
            },
        };
        args.finish()?;
        Ok(auth)
    }
}

/// The WRONGPASS error of a failed authentication.
pub fn wrongpass() -> CmdError {
    CmdError::WRONGPASS
}

/// Checks `user`/`pass` against the ACL users and, if they match an enabled user, makes it the
/// connection's user. `cmd` (`AUTH` or `HELLO`) names the attempt in ACL LOG.
///
/// # Errors
/// WRONGPASS when they do not match (the client keeps its previous state, as in Redis).
pub fn authenticate(c: &mut Client, user: &[u8], pass: &[u8], cmd: &str) -> Result<(), CmdError> {
    let found = c.server.acl.user(user).filter(|u| u.password_ok(pass));
    let Some(u) = found else {
        let context = if c.multi.is_some() {
            "multi"
        } else {
            "toplevel"
        };
        crate::dispatch::acl_log(
            &c.server,
            &c.info,
            "auth",
            context,
            cmd.to_string(),
            &String::from_utf8_lossy(user),
        );
        return Err(wrongpass());
    };
    *c.info.user.lock() = u.name.clone();
    c.user = u;
    c.authed = true;
    Ok(())
}

impl ConnCmd for Auth {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let user = match &self.user {
                Some(u) => u.clone(),
                None => {
                    if c.server.acl.default_user().state().nopass {
                        return Err(CmdError::AUTH_NO_PASSWORD);
                    }
                    Bytes::from_static(b"default")
                }
            };
            authenticate(c, &user, &self.pass, "AUTH")?;
            Ok(Frame::ok())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &[&str]) -> Result<Auth, CmdError> {
        let v = line.iter().map(|s| Bytes::from(s.to_string())).collect();
        Auth::parse_args(&mut Args::new("auth", v))
    }

    #[test]
    fn forms() {
        assert_eq!(
            parse(&["pw"]).unwrap(),
            Auth {
                user: None,
                pass: "pw".into()
            }
        );
        assert_eq!(
            parse(&["u", "pw"]).unwrap(),
            Auth {
                user: Some("u".into()),
                pass: "pw".into()
            }
        );
        assert_eq!(parse(&["a", "b", "c"]), Err(CmdError::Syntax));
    }
}
