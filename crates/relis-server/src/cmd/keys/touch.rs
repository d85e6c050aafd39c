//! TOUCH key [key ...] — how many of the keys exist. <https://redis.io/commands/touch/>
//!
//! Redis also refreshes each key's access time. The file records only a key's last write, so
//! the server remembers when TOUCH touched each key (`Shared::touched`), and OBJECT IDLETIME
//! counts from the later of the two. Other reads do not refresh it.

use crate::args::Args;
use crate::cmd::keys::count_lookups;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// TOUCH's declaration.
pub const SPEC: Spec = Spec {
    name: "touch",
    tips: &["request_policy:multi_shard", "response_policy:agg_sum"],
    key_flags: Spec::key_flags(&["RO"]),
    arity: -2,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["keyspace", "read", "fast"]),
    keys: (1, -1, 1),
    group: "generic",
    since: "3.2.1",
    summary:
        "Alters the last access time of a key(s). Returns the number of existing keys specified.",
    complexity: "O(N) where N is the number of keys that will be touched.",
    parse: Touch::parse,
    ..Spec::BASE
};

/// TOUCH key [key ...].
#[derive(Debug, PartialEq, Eq)]
pub struct Touch {
    keys: Vec<Bytes>,
}

impl Touch {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let keys = args.rest();
        args.finish()?;
        Parsed::read(Touch { keys })
    }
}

impl ReadCmd for Touch {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let n = r.exists(cx.db, &self.keys)?;
        count_lookups(cx, r, n, &self.keys)?;
        for k in &self.keys {
            cx.server.touched.touch(cx.db, k, r.now_ms());
        }
        Ok(Frame::Integer(n))
    }
}
