//! SUBSCRIBE channel [channel ...], PSUBSCRIBE pattern [pattern ...], SSUBSCRIBE shardchannel
//! [shardchannel ...], and UNSUBSCRIBE / PUNSUBSCRIBE / SUNSUBSCRIBE [name ...] — start or stop
//! receiving messages. Each name gets its own confirmation (`subscribe`, name, count); an
//! unsubscribe without names leaves every subscription of its kind.
//! <https://redis.io/commands/subscribe/>, <https://redis.io/commands/psubscribe/>,
//! <https://redis.io/commands/ssubscribe/>, <https://redis.io/commands/unsubscribe/>,
//! <https://redis.io/commands/punsubscribe/>, <https://redis.io/commands/sunsubscribe/>
//!
//! The confirmations are push frames (`>` under RESP3, arrays under RESP2). While a RESP2
//! connection has subscriptions it may only run these commands, PING, QUIT and RESET (checked
//! by the dispatcher).

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use crate::pubsub::Kind;
use bytes::Bytes;
use resp::Frame;

const FLAGS: crate::cmd::Flags = Spec::flags(&["pubsub", "noscript", "loading", "stale"]);
const ACL: crate::cmd::Cats = Spec::acl(&["pubsub", "slow"]);

/// SUBSCRIBE's declaration.
pub const SPEC_SUBSCRIBE: Spec = Spec {
    name: "subscribe",
    arity: -2,
    flags: FLAGS,
    acl: ACL,
    group: "pubsub",
    since: "2.0.0",
    summary: "Listen for messages published to the given channels",
    complexity: "O(N) where N is the number of channels to subscribe to.",
    parse: |a| Sub::parse(a, Kind::Channel, false),
    ..Spec::BASE
};

/// UNSUBSCRIBE's declaration.
pub const SPEC_UNSUBSCRIBE: Spec = Spec {
    name: "unsubscribe",
    arity: -1,
    flags: FLAGS,
    acl: ACL,
    group: "pubsub",
    since: "2.0.0",
    summary: "Stop listening for messages posted to the given channels",
    complexity: "O(N) where N is the number of clients already subscribed to a channel.",
    parse: |a| Sub::parse(a, Kind::Channel, true),
    ..Spec::BASE
};

/// PSUBSCRIBE's declaration.
pub const SPEC_PSUBSCRIBE: Spec = Spec {
    name: "psubscribe",
    arity: -2,
    flags: FLAGS,
    acl: ACL,
    group: "pubsub",
    since: "2.0.0",
    summary: "Listen for messages published to channels matching the given patterns",
    complexity: "O(N) where N is the number of patterns the client is already subscribed to.",
    parse: |a| Sub::parse(a, Kind::Pattern, false),
    ..Spec::BASE
};

/// PUNSUBSCRIBE's declaration.
pub const SPEC_PUNSUBSCRIBE: Spec = Spec {
    name: "punsubscribe",
    arity: -1,
    flags: FLAGS,
    acl: ACL,
    group: "pubsub",
    since: "2.0.0",
    summary: "Stop listening for messages posted to channels matching the given patterns",
    complexity: "O(N+M) where N is the number of patterns the client is already subscribed and M is the number of total patterns subscribed in the system (by any client).",
    parse: |a| Sub::parse(a, Kind::Pattern, true),
    ..Spec::BASE
};

/// SSUBSCRIBE's declaration.
pub const SPEC_SSUBSCRIBE: Spec = Spec {
    name: "ssubscribe",
    arity: -2,
    flags: FLAGS,
    acl: ACL,
    keys: (1, -1, 1),
    key_flags: Spec::key_flags(&["not_key"]),
    group: "pubsub",
    since: "7.0.0",
    summary: "Listen for messages published to the given shard channels",
    complexity: "O(N) where N is the number of shard channels to subscribe to.",
    parse: |a| Sub::parse(a, Kind::Shard, false),
    ..Spec::BASE
};

/// SUNSUBSCRIBE's declaration.
pub const SPEC_SUNSUBSCRIBE: Spec = Spec {
    name: "sunsubscribe",
    arity: -1,
    flags: FLAGS,
    acl: ACL,
    keys: (1, -1, 1),
    key_flags: Spec::key_flags(&["not_key"]),
    group: "pubsub",
    since: "7.0.0",
    summary: "Stop listening for messages posted to the given shard channels",
    complexity: "O(N) where N is the number of clients already subscribed to a shard channel.",
    parse: |a| Sub::parse(a, Kind::Shard, true),
    ..Spec::BASE
};

/// A (P|S)(UN)SUBSCRIBE.
#[derive(Debug, PartialEq)]
pub struct Sub {
    kind: Kind,
    unsubscribe: bool,
    names: Vec<Bytes>,
}

impl Sub {
    fn parse_args(args: &mut Args, kind: Kind, unsubscribe: bool) -> Result<Sub, CmdError> {
        let names = args.rest();
        args.finish()?;
        Ok(Sub {
            kind,
            unsubscribe,
            names,
        })
    }

    fn parse(args: &mut Args, kind: Kind, unsubscribe: bool) -> Result<Parsed, CmdError> {
        Parsed::conn(Self::parse_args(args, kind, unsubscribe)?)
    }
}

impl ConnCmd for Sub {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let Sub {
                kind,
                unsubscribe,
                names,
            } = *self;
            let mut frames = if unsubscribe {
                crate::pubsub::unsubscribe(c, kind, names)
            } else {
                crate::pubsub::subscribe(c, kind, names)
            };
            // One confirmation per name: all but the last go out ahead of the "reply".
            let last = frames.pop().unwrap_or(Frame::Null);
            c.pushed.extend(frames);
            Ok(last)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_takes_every_name() {
        let v = |s: &[&str]| s.iter().map(|x| Bytes::from(x.to_string())).collect();
        let mut a = Args::new("unsubscribe", v(&[]));
        assert_eq!(
            Sub::parse_args(&mut a, Kind::Channel, true).unwrap(),
            Sub {
                kind: Kind::Channel,
                unsubscribe: true,
                names: vec![]
            }
        );
        let mut a = Args::new("psubscribe", v(&["a*", "b?"]));
        assert_eq!(
            Sub::parse_args(&mut a, Kind::Pattern, false).unwrap().names,
            vec![Bytes::from("a*"), Bytes::from("b?")]
        );
    }
}
