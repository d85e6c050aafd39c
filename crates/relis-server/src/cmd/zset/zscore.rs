//! ZSCORE key member — a member's score, or nil; ZMSCORE key member [member ...] — the scores
//! of several members (nil for each one missing, all nil for a missing key).
//! <https://redis.io/commands/zscore/>, <https://redis.io/commands/zmscore/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// ZSCORE's declaration.
pub const SPEC: Spec = Spec {
    name: "zscore",
    arity: 3,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["read", "sortedset", "fast"]),
    keys: (1, 1, 1),
    group: "sorted-set",
    since: "1.2.0",
    summary: "Get the score associated with the given member in a sorted set",
    complexity: "O(1)",
    parse: ZScore::parse,
    ..Spec::BASE
};

/// ZMSCORE's declaration.
pub const SPEC_ZMSCORE: Spec = Spec {
    name: "zmscore",
    arity: -3,
    since: "6.2.0",
    summary: "Get the score associated with the given members in a sorted set",
    complexity: "O(N) where N is the number of members being requested.",
    parse: ZMScore::parse,
    ..SPEC
};

/// ZSCORE key member.
#[derive(Debug, PartialEq, Eq)]
pub struct ZScore {
    key: Bytes,
    member: Bytes,
}

impl ZScore {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let member = args.next()?;
        args.finish()?;
        Parsed::read(ZScore { key, member })
    }
}

impl ReadCmd for ZScore {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let s = crate::cmd::counted(cx, &self.key, r.zscore(cx.db, &self.key, &self.member))?;
        Ok(s.flatten().map_or(Frame::Null, Frame::Double))
    }
}

/// ZMSCORE key member [member ...].
#[derive(Debug, PartialEq, Eq)]
pub struct ZMScore {
    key: Bytes,
    members: Vec<Bytes>,
}

impl ZMScore {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let members = args.rest();
        args.finish()?;
        Parsed::read(ZMScore { key, members })
    }
}

impl ReadCmd for ZMScore {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let scores =
            crate::cmd::counted(cx, &self.key, r.zmscore(cx.db, &self.key, &self.members))?
                .unwrap_or_else(|| vec![None; self.members.len()]);
        Ok(Frame::Array(
            scores
                .into_iter()
                .map(|s| s.map_or(Frame::Null, Frame::Double))
                .collect(),
        ))
    }
}
