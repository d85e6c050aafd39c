//! WATCH key [key ...] — make the next EXEC conditional on these keys not changing;
//! UNWATCH — forget them. <https://redis.io/commands/watch/>

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;
use tokio::sync::oneshot;

/// WATCH's declaration.
pub const SPEC_WATCH: Spec = Spec {
    name: "watch",
    key_flags: Spec::key_flags(&["RO"]),
    arity: -2,
    flags: Spec::flags(&["noscript", "loading", "stale", "fast", "allow_busy"]),
    acl: Spec::acl(&["fast", "transaction"]),
    keys: (1, -1, 1),
    group: "transactions",
    since: "2.2.0",
    summary: "Monitors changes to keys to determine the execution of a transaction.",
    complexity: "O(1) for every key.",
    parse: Watch::parse,
    ..Spec::BASE
};

/// UNWATCH's declaration.
pub const SPEC_UNWATCH: Spec = Spec {
    name: "unwatch",
    arity: 1,
    flags: Spec::flags(&["noscript", "loading", "stale", "fast", "allow_busy"]),
    acl: Spec::acl(&["fast", "transaction"]),
    group: "transactions",
    since: "2.2.0",
    summary: "Forgets about watched keys of a transaction.",
    parse: Watch::parse_unwatch,
    ..Spec::BASE
};

/// WATCH keys, or UNWATCH (no keys).
pub struct Watch {
    keys: Option<Vec<Bytes>>,
}

impl Watch {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::conn(Watch {
            keys: Some(args.rest()),
        })
    }

    fn parse_unwatch(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(Watch { keys: None })
    }
}

impl ConnCmd for Watch {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let Some(keys) = self.keys else {
                c.watched.clear();
                return Ok(Frame::ok());
            };
            if c.multi.is_some() {
                return Err(CmdError::WATCH_IN_MULTI);
            }
            let db = c.db;
            let (tx, rx) = oneshot::channel();
            let declared = keys.iter().map(|k| (db, k.to_vec())).collect();
            c.server.db.read_async_keys(
                declared,
                move |r| {
                    keys.into_iter()
                        .map(|k| Ok((db, k.clone(), r.meta(db, &k)?.map(|m| m.version))))
                        .collect::<relis::Result<Vec<_>>>()
                },
                move |res| {
                    let _ = tx.send(res);
                },
            );
            let found = rx
                .await
                .map_err(|_| CmdError::from(relis::Error::Closed))?
                .and_then(|r| r)?;
            for w in found {
                if !c.watched.iter().any(|(d, k, _)| *d == w.0 && *k == w.1) {
                    c.watched.push(w);
                }
            }
            Ok(Frame::ok())
        })
    }
}
