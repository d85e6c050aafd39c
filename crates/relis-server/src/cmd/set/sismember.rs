//! SISMEMBER key member — 1 if `member` is in the set at `key`, else 0.
//! <https://redis.io/commands/sismember/>
//!
//! SMISMEMBER key member [member ...] — the same for each member, as an array of 0/1.
//! <https://redis.io/commands/smismember/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// SISMEMBER's declaration.
pub const SPEC: Spec = Spec {
    name: "sismember",
    arity: 3,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["read", "set", "fast"]),
    keys: (1, 1, 1),
    group: "set",
    since: "1.0.0",
    summary: "Determine if a given value is a member of a set",
    complexity: "O(1)",
    parse: SIsMember::parse_one,
    key_flags: Spec::key_flags(&["RO"]),
    ..Spec::BASE
};

/// SMISMEMBER's declaration.
pub const SPEC_SMISMEMBER: Spec = Spec {
    name: "smismember",
    arity: -3,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["read", "set", "fast"]),
    keys: (1, 1, 1),
    group: "set",
    since: "6.2.0",
    summary: "Returns the membership associated with the given elements for a set",
    complexity: "O(N) where N is the number of elements being checked for membership",
    parse: SIsMember::parse_many,
    key_flags: Spec::key_flags(&["RO", "access"]),
    ..Spec::BASE
};

/// SISMEMBER key member / SMISMEMBER key member [member ...].
#[derive(Debug, PartialEq, Eq)]
pub struct SIsMember {
    key: Bytes,
    members: Vec<Bytes>,
    /// SMISMEMBER: reply with an array.
    many: bool,
}

impl SIsMember {
    fn parse_one(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let members = vec![args.next()?];
        args.finish()?;
        Parsed::read(SIsMember {
            key,
            members,
            many: false,
        })
    }

    fn parse_many(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let members = args.rest();
        args.finish()?;
        Parsed::read(SIsMember {
            key,
            members,
            many: true,
        })
    }
}

impl ReadCmd for SIsMember {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let found =
            crate::cmd::counted(cx, &self.key, r.smismember(cx.db, &self.key, &self.members))?
                .unwrap_or_else(|| vec![false; self.members.len()]);
        let mut ints = found.into_iter().map(|f| Frame::Integer(i64::from(f)));
        Ok(if self.many {
            Frame::Array(ints.collect())
        } else {
            ints.next().unwrap_or(Frame::Integer(0))
        })
    }
}
