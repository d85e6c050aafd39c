//! Set algebra: SINTER / SUNION / SDIFF key [key ...] reply the intersection, union or
//! difference (first set minus the others) of the sets as a RESP3 set; SINTERSTORE /
//! SUNIONSTORE / SDIFFSTORE destination key [key ...] store it at `destination` instead,
//! replacing whatever was there (of any type, expiry included), and reply its size; an empty
//! result deletes `destination`.
//! <https://redis.io/commands/sinter/>, <https://redis.io/commands/sunion/>,
//! <https://redis.io/commands/sdiff/>, <https://redis.io/commands/sinterstore/>,
//! <https://redis.io/commands/sunionstore/>, <https://redis.io/commands/sdiffstore/>
//!
//! A missing key is an empty set. As in Redis 7.0, every key is looked up first, in order, and
//! counted in keyspace hits/misses (the STORE variants too), and the first key of another type
//! is WRONGTYPE even after a missing one.

use crate::args::Args;
use crate::cmd::{Cx, FindKeys, KeySpec, Parsed, ReadCmd, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

const INTER: &str =
    "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.";
const TOTAL: &str = "O(N) where N is the total number of elements in all given sets.";

/// SINTER's declaration.
pub const SPEC_SINTER: Spec = Spec {
    name: "sinter",
    arity: -2,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "set", "slow"]),
    keys: (1, -1, 1),
    group: "set",
    since: "1.0.0",
    summary: "Intersect multiple sets",
    complexity: INTER,
    parse: |a| SetOp::parse(a, Op::Inter, false),
    tips: &["nondeterministic_output_order"],
    ..Spec::BASE
};

/// SINTERSTORE's declaration.
pub const SPEC_SINTERSTORE: Spec = Spec {
    name: "sinterstore",
    key_specs: &[
        KeySpec {
            flags: Spec::key_flags(&["RW", "update"]),
            index: 1,
            notes: "",
            find: FindKeys::Range(0, 1, 0),
        },
        KeySpec {
            flags: Spec::key_flags(&["RO", "access"]),
            index: 2,
            notes: "",
            find: FindKeys::Range(-1, 1, 0),
        },
    ],
    arity: -3,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["write", "set", "slow"]),
    keys: (1, -1, 1),
    group: "set",
    since: "1.0.0",
    summary: "Intersect multiple sets and store the resulting set in a key",
    complexity: INTER,
    parse: |a| SetOp::parse(a, Op::Inter, true),
    // Redis has two key specs: the destination `RW update`, the sources `RO access`.
    ..Spec::BASE
};

/// SUNION's declaration.
pub const SPEC_SUNION: Spec = Spec {
    name: "sunion",
    arity: -2,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "set", "slow"]),
    keys: (1, -1, 1),
    group: "set",
    since: "1.0.0",
    summary: "Add multiple sets",
    complexity: TOTAL,
    parse: |a| SetOp::parse(a, Op::Union, false),
    tips: &["nondeterministic_output_order"],
    ..Spec::BASE
};

/// SUNIONSTORE's declaration.
pub const SPEC_SUNIONSTORE: Spec = Spec {
    name: "sunionstore",
    key_specs: &[
        KeySpec {
            flags: Spec::key_flags(&["OW", "update"]),
            index: 1,
            notes: "",
            find: FindKeys::Range(0, 1, 0),
        },
        KeySpec {
            flags: Spec::key_flags(&["RO", "access"]),
            index: 2,
            notes: "",
            find: FindKeys::Range(-1, 1, 0),
        },
    ],
    arity: -3,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["write", "set", "slow"]),
    keys: (1, -1, 1),
    group: "set",
    since: "1.0.0",
    summary: "Add multiple sets and store the resulting set in a key",
    complexity: TOTAL,
    parse: |a| SetOp::parse(a, Op::Union, true),
    // Redis has two key specs: the destination `OW update`, the sources `RO access`.
    ..Spec::BASE
};

/// SDIFF's declaration.
pub const SPEC_SDIFF: Spec = Spec {
    name: "sdiff",
    arity: -2,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "set", "slow"]),
    keys: (1, -1, 1),
    group: "set",
    since: "1.0.0",
    summary: "Subtract multiple sets",
    complexity: TOTAL,
    parse: |a| SetOp::parse(a, Op::Diff, false),
    tips: &["nondeterministic_output_order"],
    ..Spec::BASE
};

/// SDIFFSTORE's declaration.
pub const SPEC_SDIFFSTORE: Spec = Spec {
    name: "sdiffstore",
    key_specs: &[
        KeySpec {
            flags: Spec::key_flags(&["OW", "update"]),
            index: 1,
            notes: "",
            find: FindKeys::Range(0, 1, 0),
        },
        KeySpec {
            flags: Spec::key_flags(&["RO", "access"]),
            index: 2,
            notes: "",
            find: FindKeys::Range(-1, 1, 0),
        },
    ],
    arity: -3,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["write", "set", "slow"]),
    keys: (1, -1, 1),
    group: "set",
    since: "1.0.0",
    summary: "Subtract multiple sets and store the resulting set in a key",
    complexity: TOTAL,
    parse: |a| SetOp::parse(a, Op::Diff, true),
    // Redis has two key specs: the destination `OW update`, the sources `RO access`.
    ..Spec::BASE
};

/// Which operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// SINTER, SINTERSTORE.
    Inter,
    /// SUNION, SUNIONSTORE.
    Union,
    /// SDIFF, SDIFFSTORE.
    Diff,
}

/// SINTER / SUNION / SDIFF key [key ...], or their STORE variants with a destination first.
#[derive(Debug, PartialEq, Eq)]
pub struct SetOp {
    op: Op,
    dst: Option<Bytes>,
    keys: Vec<Bytes>,
}

impl SetOp {
    fn from_args(args: &mut Args, op: Op, store: bool) -> Result<SetOp, CmdError> {
        let dst = if store { Some(args.next()?) } else { None };
        let keys = args.rest();
        if keys.is_empty() {
            return Err(CmdError::WrongArity(args.name().to_string()));
        }
        args.finish()?;
        Ok(SetOp { op, dst, keys })
    }

    fn parse(args: &mut Args, op: Op, store: bool) -> Result<Parsed, CmdError> {
        let cmd = SetOp::from_args(args, op, store)?;
        if store {
            Parsed::write(cmd)
        } else {
            Parsed::read(cmd)
        }
    }
}

impl ReadCmd for SetOp {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let seen = &mut |k: &[u8], found| cx.hit(k, found);
        let members = match self.op {
            Op::Inter => r.sinter(cx.db, &self.keys, seen),
            Op::Union => r.sunion(cx.db, &self.keys, seen),
            Op::Diff => r.sdiff(cx.db, &self.keys, seen),
        }?;
        Ok(super::set_reply(members))
    }
}

impl WriteCmd for SetOp {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let dst = self.dst.as_deref().unwrap_or_default();
        let existed =
            w.wants_events(relis::events::class::GENERIC) && w.meta(cx.db, dst)?.is_some();
        let seen = &mut |k: &[u8], found| cx.hit(k, found);
        let (n, event) = match self.op {
            Op::Inter => (w.sinterstore(cx.db, dst, &self.keys, seen)?, "sinterstore"),
            Op::Union => (w.sunionstore(cx.db, dst, &self.keys, seen)?, "sunionstore"),
            Op::Diff => (w.sdiffstore(cx.db, dst, &self.keys, seen)?, "sdiffstore"),
        };
        if n > 0 {
            w.notify(relis::events::class::SET, event, cx.db, dst);
        } else if existed {
            // An empty result deletes the destination.
            w.notify(relis::events::class::GENERIC, "del", cx.db, dst);
        }
        Ok(Frame::Integer(n))
    }

    // Every source is looked up (and type-checked) before the first write.
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        let parse = |name, line, store| {
            SetOp::from_args(&mut super::super::args_of(name, line), Op::Inter, store)
        };
        let s = parse("sinterstore", "d a b", true).unwrap();
        assert_eq!(s.dst.as_deref(), Some(&b"d"[..]));
        assert_eq!(s.keys.len(), 2);
        assert_eq!(parse("sinter", "a", false).unwrap().keys.len(), 1);
        assert_eq!(
            parse("sinterstore", "d", true),
            Err(CmdError::WrongArity("sinterstore".into()))
        );
    }
}
