//! HMGET key field [field ...] — the value of each field (nil for a missing one; all nil for a
//! missing key). <https://redis.io/commands/hmget/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// HMGET's declaration.
pub const SPEC: Spec = Spec {
    name: "hmget",
    arity: -3,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["read", "hash", "fast"]),
    keys: (1, 1, 1),
    group: "hash",
    since: "2.0.0",
    summary: "Get the values of all the given hash fields",
    complexity: "O(N) where N is the number of fields being requested.",
    parse: HMGet::parse,
    ..Spec::BASE
};

/// HMGET key field [field ...].
#[derive(Debug, PartialEq, Eq)]
pub struct HMGet {
    key: Bytes,
    fields: Vec<Bytes>,
}

impl HMGet {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let fields = args.rest();
        args.finish()?;
        Parsed::read(HMGet { key, fields })
    }
}

impl ReadCmd for HMGet {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let values = crate::cmd::counted(cx, &self.key, r.hmget(cx.db, &self.key, &self.fields))?
            .unwrap_or_else(|| vec![None; self.fields.len()]);
        Ok(Frame::Array(
            values
                .into_iter()
                .map(|v| v.map_or(Frame::Null, Frame::Bulk))
                .collect(),
        ))
    }
}
