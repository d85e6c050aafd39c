//! EXISTS key [key ...] — how many of the keys exist; a key named twice counts twice.
//! <https://redis.io/commands/exists/>

use crate::args::Args;
use crate::cmd::keys::count_lookups;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// EXISTS's declaration.
pub const SPEC: Spec = Spec {
    name: "exists",
    tips: &["request_policy:multi_shard", "response_policy:agg_sum"],
    key_flags: Spec::key_flags(&["RO"]),
    arity: -2,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["keyspace", "read", "fast"]),
    keys: (1, -1, 1),
    group: "generic",
    since: "1.0.0",
    summary: "Determine if a key exists",
    complexity: "O(N) where N is the number of keys to check.",
    parse: Exists::parse,
    ..Spec::BASE
};

/// EXISTS key [key ...].
#[derive(Debug, PartialEq, Eq)]
pub struct Exists {
    keys: Vec<Bytes>,
}

impl Exists {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let keys = args.rest();
        args.finish()?;
        Parsed::read(Exists { keys })
    }
}

impl ReadCmd for Exists {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let n = r.exists(cx.db, &self.keys)?;
        count_lookups(cx, r, n, &self.keys)?;
        Ok(Frame::Integer(n))
    }
}
