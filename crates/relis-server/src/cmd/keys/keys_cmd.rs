//! KEYS pattern — every live key of the selected database matching a glob.
//! <https://redis.io/commands/keys/>
//!
//! Relis returns the keys in key (byte) order; Redis's order is its hash table's, which clients
//! must not rely on.

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// KEYS's declaration.
pub const SPEC: Spec = Spec {
    name: "keys",
    tips: &["request_policy:all_shards", "nondeterministic_output_order"],
    arity: 2,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["keyspace", "read", "slow", "dangerous"]),
    keys: (0, 0, 0),
    group: "generic",
    since: "1.0.0",
    summary: "Find all keys matching the given pattern",
    complexity: "O(N) with N being the number of keys in the database, under the assumption that the key names in the database and the given pattern have limited length.",
    parse: Keys::parse,
    ..Spec::BASE
};

/// KEYS pattern.
#[derive(Debug, PartialEq, Eq)]
pub struct Keys {
    pattern: Bytes,
}

impl Keys {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let pattern = args.next()?;
        args.finish()?;
        Parsed::read(Keys { pattern })
    }
}

impl ReadCmd for Keys {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let keys = r.keys(cx.db, &self.pattern)?;
        Ok(Frame::Array(keys.into_iter().map(Frame::Bulk).collect()))
    }
}
