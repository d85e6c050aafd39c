//! CLIENT TRACKING / CACHING / GETREDIR / TRACKINGINFO — client-side caching (see
//! [`crate::tracking`]). <https://redis.io/commands/client-tracking/>
//!
//! `CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX prefix ...] [BCAST] [OPTIN] [OPTOUT] [NOLOOP]`,
//! `CLIENT CACHING YES|NO`, `CLIENT GETREDIR`, `CLIENT TRACKINGINFO`. The checks run in Redis
//! 7.0's order, with its texts.

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use crate::tracking::Options;
use bytes::Bytes;
use resp::Frame;

const FLAGS: crate::cmd::Flags = Spec::flags(&["noscript", "loading", "stale"]);
const ACL: crate::cmd::Cats = Spec::acl(&["slow", "connection"]);

/// CLIENT TRACKING's declaration.
pub const SPEC_TRACKING: Spec = Spec {
    name: "client|tracking",
    arity: -3,
    flags: FLAGS,
    acl: ACL,
    group: "connection",
    since: "6.0.0",
    summary: "Enable or disable server assisted client side caching support",
    complexity: "O(1). Some options may introduce additional complexity.",
    parse: Tracking::parse,
    ..Spec::BASE
};

/// CLIENT CACHING's declaration.
pub const SPEC_CACHING: Spec = Spec {
    name: "client|caching",
    arity: 3,
    flags: FLAGS,
    acl: ACL,
    group: "connection",
    since: "6.0.0",
    summary: "Instruct the server about tracking or not keys in the next request",
    parse: Caching::parse,
    ..Spec::BASE
};

/// CLIENT GETREDIR's declaration.
pub const SPEC_GETREDIR: Spec = Spec {
    name: "client|getredir",
    arity: 2,
    flags: FLAGS,
    acl: ACL,
    group: "connection",
    since: "6.0.0",
    summary: "Get tracking notifications redirection client ID if any",
    parse: |a| {
        a.finish()?;
        Parsed::conn(Info { full: false })
    },
    ..Spec::BASE
};

/// CLIENT TRACKINGINFO's declaration.
pub const SPEC_TRACKINGINFO: Spec = Spec {
    name: "client|trackinginfo",
    arity: 2,
    flags: FLAGS,
    acl: ACL,
    group: "connection",
    since: "6.2.0",
    summary:
        "Return information about server assisted client side caching for the current connection",
    parse: |a| {
        a.finish()?;
        Parsed::conn(Info { full: true })
    },
    ..Spec::BASE
};

/// CLIENT TRACKING.
#[derive(Debug, PartialEq)]
pub struct Tracking {
    /// ON or OFF, as sent (checked after the options, as Redis does).
    mode: Bytes,
    opts: Options,
    prefixes: Vec<Bytes>,
    /// A REDIRECT was given (its client must exist).
    redirect: Option<u64>,
    /// A syntax error after a REDIRECT: Redis checks that client first.
    late_error: Option<CmdError>,
}

impl Tracking {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let mode = args.next()?;
        let mut t = Tracking {
            mode,
            opts: Options::default(),
            prefixes: Vec::new(),
            redirect: None,
            late_error: None,
        };
        while !args.is_empty() {
            let more = args.remaining() > 1;
            if more && args.eat("redirect") {
                if t.redirect.is_some() {
                    return Err(CmdError::TRACKING_ONE_REDIRECT);
                }
                let id = crate::args::parse_i64(&args.next()?)?;
                // Ids are positive: one that is not names no client.
                t.redirect = Some(u64::try_from(id).unwrap_or(u64::MAX));
            } else if args.eat("bcast") {
                t.opts.bcast = true;
            } else if args.eat("optin") {
                t.opts.optin = true;
            } else if args.eat("optout") {
                t.opts.optout = true;
            } else if args.eat("noloop") {
                t.opts.noloop = true;
            } else if more && args.eat("prefix") {
                t.prefixes.push(args.next()?);
            } else {
                if t.redirect.is_none() {
                    return Err(CmdError::Syntax);
                }
                t.late_error = Some(CmdError::Syntax);
                args.rest();
                break;
            }
        }
        args.finish()?;
        Parsed::conn(t)
    }
}

impl ConnCmd for Tracking {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let Tracking {
                mode,
                mut opts,
                prefixes,
                redirect,
                late_error,
            } = *self;
            let target = match redirect {
                Some(id) => match c.server.clients.lock().get(&id) {
                    Some(info) => Some(info.clone()),
                    None => return Err(CmdError::TRACKING_NO_REDIRECT_TARGET),
                },
                None => None,
            };
            if let Some(e) = late_error {
                return Err(e);
            }
            opts.redirect = redirect.unwrap_or(0);
            if mode.eq_ignore_ascii_case(b"off") {
                c.tracking_off();
                return Ok(Frame::ok());
            }
            if !mode.eq_ignore_ascii_case(b"on") {
                return Err(CmdError::Syntax);
            }
            if !opts.bcast && !prefixes.is_empty() {
                return Err(CmdError::TRACKING_PREFIX_NEEDS_BCAST);
            }
            if let Some(old) = &c.tracking {
                if old.bcast != opts.bcast {
                    return Err(CmdError::TRACKING_SWITCH_BCAST);
                }
            }
            if opts.bcast && (opts.optin || opts.optout) {
                return Err(CmdError::TRACKING_OPT_AND_BCAST);
            }
            if opts.optin && opts.optout {
                return Err(CmdError::TRACKING_OPTIN_AND_OPTOUT);
            }
            if let Some(old) = &c.tracking {
                if opts.optin && old.optout || opts.optout && old.optin {
                    return Err(CmdError::TRACKING_SWITCH_OPT);
                }
            }
            let ps = c.server.pubsub.clone();
            let prefixes = if opts.bcast {
                let own = ps.tracking.prefixes_of(c.info.id);
                let long = prefixes.len() > 64;
                // Redis's check is quadratic: a long list runs off the network threads.
                let check = move || {
                    crate::tracking::Tracking::check_prefixes(&own, &prefixes).map(|()| prefixes)
                };
                if long {
                    tokio::task::spawn_blocking(check)
                        .await
                        .map_err(|_| CmdError::TRACKING_PREFIX_OVERLAP)?
                } else {
                    check()
                }
                .map_err(CmdError::err)?
            } else {
                prefixes
            };
            ps.tracking.enable(&c.info, opts.clone(), prefixes, target);
            ps.set_tracking_active(true);
            c.tracking = Some(opts);
            // The connection loop watches the mailbox, where invalidations arrive.
            c.mailbox_used = true;
            Ok(Frame::ok())
        })
    }
}

/// CLIENT CACHING YES|NO.
#[derive(Debug, PartialEq)]
pub struct Caching {
    /// As sent (checked after the tracking mode, as Redis does).
    value: Bytes,
}

impl Caching {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let value = args.next()?;
        args.finish()?;
        Parsed::conn(Caching { value })
    }
}

impl ConnCmd for Caching {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let Some(t) = &c.tracking else {
                return Err(CmdError::CACHING_NOT_OPT);
            };
            if self.value.eq_ignore_ascii_case(b"yes") {
                if !t.optin {
                    return Err(CmdError::CACHING_YES);
                }
            } else if self.value.eq_ignore_ascii_case(b"no") {
                if !t.optout {
                    return Err(CmdError::CACHING_NO);
                }
            } else {
                return Err(CmdError::Syntax);
            }
            c.caching = true;
            Ok(Frame::ok())
        })
    }
}

/// CLIENT GETREDIR (`full` false) or CLIENT TRACKINGINFO.
#[derive(Debug, PartialEq)]
pub struct Info {
    full: bool,
}

impl ConnCmd for Info {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let (mut flags, redirect, prefixes) = c.server.pubsub.tracking.info(c.info.id);
            if !self.full {
                return Ok(Frame::Integer(redirect));
            }
            // CACHING's state shows after the mode it belongs to.
            if c.caching {
                if let Some(t) = &c.tracking {
                    let at = flags
                        .iter()
                        .position(|f| *f == "noloop")
                        .unwrap_or(flags.len());
                    if t.optin {
                        flags.insert(at, "caching-yes");
                    } else if t.optout {
                        flags.insert(at, "caching-no");
                    }
                }
            }
            let bulk = |s: &'static str| Frame::Bulk(Bytes::from_static(s.as_bytes()));
            Ok(Frame::Map(vec![
                (
                    bulk("flags"),
                    Frame::Set(flags.into_iter().map(bulk).collect()),
                ),
                (bulk("redirect"), Frame::Integer(redirect)),
                (
                    bulk("prefixes"),
                    Frame::Array(prefixes.into_iter().map(Frame::Bulk).collect()),
                ),
            ]))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &[&str]) -> Result<(), String> {
        let v = line.iter().map(|s| Bytes::from(s.to_string())).collect();
        let mut a = Args::new("client|tracking", v);
        Tracking::parse(&mut a).map(|_| ()).map_err(|e| e.message())
    }

    #[test]
    fn tracking_parse_errors_as_redis() {
        assert!(parse(&["on", "bcast", "prefix", "a", "noloop"]).is_ok());
        assert!(parse(&["maybe"]).is_ok(), "the mode is checked later");
        assert_eq!(parse(&["on", "foo"]).unwrap_err(), "ERR syntax error");
        assert_eq!(parse(&["on", "prefix"]).unwrap_err(), "ERR syntax error");
        assert_eq!(parse(&["on", "redirect"]).unwrap_err(), "ERR syntax error");
        assert_eq!(
            parse(&["on", "redirect", "x"]).unwrap_err(),
            "ERR value is not an integer or out of range"
        );
        assert_eq!(
            parse(&["on", "redirect", "1", "redirect", "2"]).unwrap_err(),
            "ERR A client can only redirect to a single other client"
        );
        // After a REDIRECT the bad option waits for the client check.
        assert!(parse(&["on", "redirect", "1", "foo"]).is_ok());
    }
}
