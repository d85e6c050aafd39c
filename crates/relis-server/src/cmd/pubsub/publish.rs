//! PUBLISH channel message — deliver a message to the channel's subscribers and to those of
//! every matching pattern; SPUBLISH shardchannel message — to the shard channel's subscribers.
//! Both reply with the number of receivers. <https://redis.io/commands/publish/>,
//! <https://redis.io/commands/spublish/>
//!
//! Publishing never waits for a subscriber: the message is queued in each receiver's mailbox
//! (see [`crate::pubsub`]).

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// PUBLISH's declaration.
pub const SPEC_PUBLISH: Spec = Spec {
    name: "publish",
    arity: 3,
    flags: Spec::flags(&["pubsub", "loading", "stale", "fast"]),
    acl: Spec::acl(&["pubsub", "fast"]),
    group: "pubsub",
    since: "2.0.0",
    summary: "Post a message to a channel",
    complexity: "O(N+M) where N is the number of clients subscribed to the receiving channel and M is the total number of subscribed patterns (by any client).",
    parse: |a| Publish::parse(a, false),
    ..Spec::BASE
};

/// SPUBLISH's declaration.
pub const SPEC_SPUBLISH: Spec = Spec {
    name: "spublish",
    arity: 3,
    flags: Spec::flags(&["pubsub", "loading", "stale", "fast"]),
    acl: Spec::acl(&["pubsub", "fast"]),
    keys: (1, 1, 1),
    key_flags: Spec::key_flags(&["not_key"]),
    group: "pubsub",
    since: "7.0.0",
    summary: "Post a message to a shard channel",
    complexity: "O(N) where N is the number of clients subscribed to the receiving shard channel.",
    parse: |a| Publish::parse(a, true),
    ..Spec::BASE
};

/// PUBLISH or SPUBLISH.
pub struct Publish {
    channel: Bytes,
    message: Bytes,
    shard: bool,
}

impl Publish {
    fn parse(args: &mut Args, shard: bool) -> Result<Parsed, CmdError> {
        let channel = args.next()?;
        let message = args.next()?;
        args.finish()?;
        Parsed::conn(Publish {
            channel,
            message,
            shard,
        })
    }
}

impl ConnCmd for Publish {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let n = c
                .server
                .pubsub
                .publish_everywhere(&self.channel, &self.message, self.shard);
            Ok(Frame::Integer(n as i64))
        })
    }
}
