//! PUBSUB CHANNELS [pattern] | NUMSUB [channel ...] | NUMPAT | SHARDCHANNELS [pattern] |
//! SHARDNUMSUB [shardchannel ...] | HELP — inspect the pub/sub state.
//! <https://redis.io/commands/pubsub/>

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

const FLAGS: crate::cmd::Flags = Spec::flags(&["pubsub", "loading", "stale"]);
const ACL: crate::cmd::Cats = Spec::acl(&["pubsub", "slow"]);

/// PUBSUB's declaration (a container: the dispatcher runs its subcommands).
pub const SPEC: Spec = Spec {
    name: "pubsub",
    arity: -2,
    acl: Spec::acl(&["slow"]),
    group: "pubsub",
    since: "2.8.0",
    summary: "A container for Pub/Sub commands",
    complexity: "Depends on subcommand.",
    // In the order redis-server 7.0.15 lists them in COMMAND INFO.
    subcommands: &[
        SPEC_CHANNELS,
        SPEC_NUMSUB,
        SPEC_NUMPAT,
        SPEC_HELP,
        SPEC_SHARDCHANNELS,
        SPEC_SHARDNUMSUB,
    ],
    ..Spec::BASE
};

/// PUBSUB CHANNELS's declaration.
pub const SPEC_CHANNELS: Spec = Spec {
    name: "pubsub|channels",
    arity: -2,
    flags: FLAGS,
    acl: ACL,
    group: "pubsub",
    since: "2.8.0",
    summary: "List active channels",
    complexity: "O(N) where N is the number of active channels, and assuming constant time pattern matching (relatively short channels and patterns)",
    parse: |a| PubSubCmd::parse_channels(a, false),
    ..Spec::BASE
};

/// PUBSUB NUMSUB's declaration.
pub const SPEC_NUMSUB: Spec = Spec {
    name: "pubsub|numsub",
    arity: -2,
    flags: FLAGS,
    acl: ACL,
    group: "pubsub",
    since: "2.8.0",
    summary: "Get the count of subscribers for channels",
    complexity: "O(N) for the NUMSUB subcommand, where N is the number of requested channels",
    parse: |a| PubSubCmd::parse_numsub(a, false),
    ..Spec::BASE
};

/// PUBSUB NUMPAT's declaration.
pub const SPEC_NUMPAT: Spec = Spec {
    name: "pubsub|numpat",
    arity: 2,
    flags: FLAGS,
    acl: ACL,
    group: "pubsub",
    since: "2.8.0",
    summary: "Get the count of unique patterns pattern subscriptions",
    complexity: "O(1)",
    parse: |a| {
        a.finish()?;
        Parsed::conn(PubSubCmd::NumPat)
    },
    ..Spec::BASE
};

/// PUBSUB HELP's declaration.
pub const SPEC_HELP: Spec = Spec {
    name: "pubsub|help",
    arity: 2,
    flags: Spec::flags(&["loading", "stale"]),
    acl: Spec::acl(&["slow"]),
    group: "pubsub",
    since: "6.2.0",
    summary: "Show helpful text about the different subcommands",
    complexity: "O(1)",
    parse: |a| {
        a.finish()?;
        Parsed::conn(PubSubCmd::Help)
    },
    ..Spec::BASE
};

/// PUBSUB SHARDCHANNELS's declaration.
pub const SPEC_SHARDCHANNELS: Spec = Spec {
    name: "pubsub|shardchannels",
    arity: -2,
    flags: FLAGS,
    acl: ACL,
    group: "pubsub",
    since: "7.0.0",
    summary: "List active shard channels",
    complexity: "O(N) where N is the number of active shard channels, and assuming constant time pattern matching (relatively short shard channels).",
    parse: |a| PubSubCmd::parse_channels(a, true),
    ..Spec::BASE
};

/// PUBSUB SHARDNUMSUB's declaration.
pub const SPEC_SHARDNUMSUB: Spec = Spec {
    name: "pubsub|shardnumsub",
    arity: -2,
    flags: FLAGS,
    acl: ACL,
    group: "pubsub",
    since: "7.0.0",
    summary: "Get the count of subscribers for shard channels",
    complexity:
        "O(N) for the SHARDNUMSUB subcommand, where N is the number of requested shard channels",
    parse: |a| PubSubCmd::parse_numsub(a, true),
    ..Spec::BASE
};

/// A PUBSUB subcommand.
#[derive(Debug, PartialEq)]
pub enum PubSubCmd {
    /// CHANNELS / SHARDCHANNELS, with an optional pattern.
    Channels(Option<Bytes>, bool),
    /// NUMSUB / SHARDNUMSUB.
    NumSub(Vec<Bytes>, bool),
    /// NUMPAT.
    NumPat,
    /// HELP.
    Help,
}

impl PubSubCmd {
    fn parse_channels(args: &mut Args, shard: bool) -> Result<Parsed, CmdError> {
        // Redis checks this count itself, with its subcommand-syntax error (which names the
        // subcommand as it was sent).
        if args.remaining() > 1 {
            args.rest();
            return Err(args.subcommand_syntax());
        }
        let pattern = args.rest().pop();
        Parsed::conn(PubSubCmd::Channels(pattern, shard))
    }

    fn parse_numsub(args: &mut Args, shard: bool) -> Result<Parsed, CmdError> {
        Parsed::conn(PubSubCmd::NumSub(args.rest(), shard))
    }
}

const HELP: &[&str] = &[
    "CHANNELS [<pattern>]",
    "    Return the currently active channels matching a <pattern> (default: '*').",
    "NUMPAT",
    "    Return number of subscriptions to patterns.",
    "NUMSUB [<channel> ...]",
    "    Return the number of subscribers for the specified channels, excluding",
    "    pattern subscriptions(default: no channels).",
    "SHARDCHANNELS [<pattern>]",
    "    Return the currently active shard level channels matching a <pattern> (default: '*').",
    "SHARDNUMSUB [<shardchannel> ...]",
    "    Return the number of subscribers for the specified shard level channel(s)",
];

impl ConnCmd for PubSubCmd {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let ps = &c.server.pubsub;
            Ok(match *self {
                PubSubCmd::Channels(pattern, shard) => Frame::Array(
                    ps.channels(pattern.as_deref(), shard)
                        .into_iter()
                        .map(Frame::Bulk)
                        .collect(),
                ),
                PubSubCmd::NumSub(channels, shard) => {
                    let counts = ps.numsub(&channels, shard);
                    let mut out = Vec::with_capacity(channels.len() * 2);
                    for (ch, n) in channels.into_iter().zip(counts) {
                        out.push(Frame::Bulk(ch));
                        out.push(Frame::Integer(n as i64));
                    }
                    Frame::Array(out)
                }
                PubSubCmd::NumPat => Frame::Integer(ps.numpat() as i64),
                PubSubCmd::Help => crate::cmd::server::help("PUBSUB", HELP),
            })
        })
    }
}
