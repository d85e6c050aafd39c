//! HGETALL key, HKEYS key, HVALS key — every field with its value, every field, every value of
//! the hash at `key`, in the order Redis lists them (insertion order for a hash Redis would hold
//! as a listpack, field order otherwise). HGETALL is a map under RESP3 (`%`, and `%0` for a
//! missing key), a flat array under RESP2; HKEYS and HVALS are arrays.
//! <https://redis.io/commands/hgetall/>, <https://redis.io/commands/hkeys/>,
//! <https://redis.io/commands/hvals/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// HKEYS's declaration.
pub const SPEC_HKEYS: Spec = Spec {
    name: "hkeys",
    arity: 2,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "hash", "slow"]),
    keys: (1, 1, 1),
    group: "hash",
    since: "2.0.0",
    summary: "Get all the fields in a hash",
    complexity: "O(N) where N is the size of the hash.",
    parse: |a| HGetAll::parse(a, Part::Keys),
    tips: &["nondeterministic_output_order"],
    ..Spec::BASE
};

/// HVALS's declaration.
pub const SPEC_HVALS: Spec = Spec {
    name: "hvals",
    arity: 2,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "hash", "slow"]),
    keys: (1, 1, 1),
    group: "hash",
    since: "2.0.0",
    summary: "Get all the values in a hash",
    complexity: "O(N) where N is the size of the hash.",
    parse: |a| HGetAll::parse(a, Part::Values),
    tips: &["nondeterministic_output_order"],
    ..Spec::BASE
};

/// HGETALL's declaration.
pub const SPEC_HGETALL: Spec = Spec {
    name: "hgetall",
    arity: 2,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "hash", "slow"]),
    keys: (1, 1, 1),
    group: "hash",
    since: "2.0.0",
    summary: "Get all the fields and values in a hash",
    complexity: "O(N) where N is the size of the hash.",
    parse: |a| HGetAll::parse(a, Part::Both),
    tips: &["nondeterministic_output_order"],
    ..Spec::BASE
};

/// What the command lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Keys,
    Values,
    Both,
}

/// HKEYS / HVALS / HGETALL key.
#[derive(Debug, PartialEq, Eq)]
pub struct HGetAll {
    key: Bytes,
    part: Part,
}

impl HGetAll {
    fn parse(args: &mut Args, part: Part) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        args.finish()?;
        Parsed::read(HGetAll { key, part })
    }
}

impl ReadCmd for HGetAll {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let (db, key) = (cx.db, &self.key[..]);
        Ok(match self.part {
            Part::Keys => {
                super::array(crate::cmd::counted(cx, key, r.hkeys(db, key))?.unwrap_or_default())
            }
            Part::Values => {
                super::array(crate::cmd::counted(cx, key, r.hvals(db, key))?.unwrap_or_default())
            }
            Part::Both => Frame::Map(
                crate::cmd::counted(cx, key, r.hgetall(db, key))?
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(f, v)| (Frame::Bulk(f), Frame::Bulk(v)))
                    .collect(),
            ),
        })
    }
}
