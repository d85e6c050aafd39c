//! AUTH [username] password — authenticate the connection.
//! <https://redis.io/commands/auth/>
//!
//! Relis has one user, `default`, whose password is `requirepass` (none when empty, and then
//! any password is accepted for `AUTH default <anything>`, as for Redis's `nopass` user).

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
    flags: &[
        "noscript",
        "loading",
        "stale",
        "fast",
        "no_auth",
        "allow_busy",
    ],
    acl: &["fast", "connection"],
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
    CmdError::text("WRONGPASS invalid username-password pair or user is disabled.")
}

/// Checks `user`/`pass` against the default user and marks the client authenticated.
///
/// # Errors
/// WRONGPASS when they do not match (the client keeps its previous state, as in Redis).
pub fn authenticate(c: &mut Client, user: &[u8], pass: &[u8]) -> Result<(), CmdError> {
    let required = c.server.config.read().requirepass.clone();
    let ok = user == b"default" && (required.is_empty() || same(required.as_bytes(), pass));
    if !ok {
        return Err(wrongpass());
    }
    c.authed = true;
    c.user = "default".into();
    Ok(())
}

/// Compares secrets without stopping at the first difference.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl ConnCmd for Auth {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let user = match &self.user {
                Some(u) => u.clone(),
                None => {
                    if c.server.config.read().requirepass.is_empty() {
                        return Err(CmdError::err(
                            "AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?",
                        ));
                    }
                    Bytes::from_static(b"default")
                }
            };
            authenticate(c, &user, &self.pass)?;
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

    #[test]
    fn constant_time_compare() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"ab"));
    }
}
