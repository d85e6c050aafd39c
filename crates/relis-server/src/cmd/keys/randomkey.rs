//! RANDOMKEY — a random live key of the selected database, or nil when it has none.
//! <https://redis.io/commands/randomkey/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use resp::Frame;

/// RANDOMKEY's declaration.
pub const SPEC: Spec = Spec {
    name: "randomkey",
    tips: &["request_policy:all_shards", "nondeterministic_output"],
    arity: 1,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["keyspace", "read", "slow"]),
    keys: (0, 0, 0),
    group: "generic",
    since: "1.0.0",
    summary: "Return a random key from the keyspace",
    complexity: "O(1)",
    parse: RandomKey::parse,
    ..Spec::BASE
};

/// RANDOMKEY.
#[derive(Debug, PartialEq, Eq)]
pub struct RandomKey;

impl RandomKey {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::read(RandomKey)
    }
}

impl ReadCmd for RandomKey {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        Ok(r.randomkey(cx.db)?.map_or(Frame::Null, Frame::Bulk))
    }
}
