//! MGET key [key ...] — the string values of the keys, nil for a missing key or a key of
//! another type. <https://redis.io/commands/mget/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec, INLINE_READ_LIMIT};
use crate::error::CmdError;
use bytes::Bytes;
use relis::StringLookup;
use resp::Frame;

/// MGET's declaration.
pub const SPEC: Spec = Spec {
    name: "mget",
    arity: -2,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["read", "string", "fast"]),
    keys: (1, -1, 1),
    group: "string",
    since: "1.0.0",
    summary: "Get the values of all the given keys",
    complexity: "O(N) where N is the number of keys to retrieve.",
    parse: MGet::parse,
    tips: &["request_policy:multi_shard"],
    ..Spec::BASE
};

/// MGET key [key ...].
#[derive(Debug, PartialEq, Eq)]
pub struct MGet {
    keys: Vec<Bytes>,
}

impl MGet {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let keys = args.rest();
        args.finish()?;
        Parsed::read(MGet { keys })
    }
}

impl ReadCmd for MGet {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let found = r.mget(cx.db, &self.keys)?;
        Ok(Frame::Array(
            found
                .into_iter()
                .zip(&self.keys)
                .map(|(f, k)| {
                    // Each key is a lookup of its own; one of another type is a hit.
                    cx.hit(k, f.found());
                    match f {
                        StringLookup::Value(v) => Frame::Bulk(v),
                        _ => Frame::Null,
                    }
                })
                .collect(),
        ))
    }

    fn inline(&self) -> bool {
        self.keys.len() as u64 <= INLINE_READ_LIMIT
    }
}
