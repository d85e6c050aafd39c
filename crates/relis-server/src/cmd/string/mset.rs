//! MSET key value [key value ...] — sets every pair; MSETNX sets them only if none of the keys
//! exists (1 if it did, 0 if not). <https://redis.io/commands/mset/>,
//! <https://redis.io/commands/msetnx/>
//!
//! Both clear any expiry the keys had; a key named twice takes its last value.

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// MSET's declaration.
pub const SPEC: Spec = Spec {
    name: "mset",
    arity: -3,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["write", "string", "slow"]),
    keys: (1, -1, 2),
    group: "string",
    since: "1.0.1",
    summary: "Set multiple keys to multiple values",
    complexity: "O(N) where N is the number of keys to set.",
    parse: MSet::parse_mset,
    tips: &[
        "request_policy:multi_shard",
        "response_policy:all_succeeded",
    ],
    key_flags: Spec::key_flags(&["OW", "update"]),
    ..Spec::BASE
};

/// MSETNX's declaration.
pub const SPEC_MSETNX: Spec = Spec {
    name: "msetnx",
    arity: -3,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["write", "string", "slow"]),
    keys: (1, -1, 2),
    group: "string",
    since: "1.0.1",
    summary: "Set multiple keys to multiple values, only if none of the keys exist",
    complexity: "O(N) where N is the number of keys to set.",
    parse: MSet::parse_msetnx,
    tips: &["request_policy:multi_shard", "response_policy:agg_min"],
    key_flags: Spec::key_flags(&["OW", "insert"]),
    ..Spec::BASE
};

/// MSET / MSETNX.
#[derive(Debug, PartialEq, Eq)]
pub struct MSet {
    pairs: Vec<(Bytes, Bytes)>,
    nx: bool,
}

impl MSet {
    fn parse_pairs(args: &mut Args, nx: bool) -> Result<MSet, CmdError> {
        // The table's arity only says "at least 3"; an odd pair count is an arity error too.
        if !args.remaining().is_multiple_of(2) {
            return Err(CmdError::WrongArity(args.name().to_string()));
        }
        let mut pairs = Vec::with_capacity(args.remaining() / 2);
        while !args.is_empty() {
            pairs.push((args.next()?, args.next()?));
        }
        args.finish()?;
        Ok(MSet { pairs, nx })
    }

    fn parse_mset(args: &mut Args) -> Result<Parsed, CmdError> {
        MSet::parse_pairs(args, false).and_then(Parsed::write)
    }

    fn parse_msetnx(args: &mut Args) -> Result<Parsed, CmdError> {
        MSet::parse_pairs(args, true).and_then(Parsed::write)
    }
}

impl WriteCmd for MSet {
    // Every error of this command comes before its first write (see WriteCmd::on_error).
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }

    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        if self.nx {
            for (k, _) in &self.pairs {
                if w.meta(cx.db, k)?.is_some() {
                    return Ok(Frame::Integer(0));
                }
            }
        }
        // One pair at a time, so each key's events come in Redis's order (`new`, `set`).
        for pair in self.pairs.chunks(1) {
            w.mset(cx.db, pair)?;
            w.notify(relis::events::class::STRING, "set", cx.db, &pair[0].0);
        }
        Ok(if self.nx {
            Frame::Integer(1)
        } else {
            Frame::ok()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs() {
        let m = MSet::parse_pairs(&mut super::super::args_of("mset", "a 1 b 2"), false).unwrap();
        assert_eq!(m.pairs.len(), 2);
        assert_eq!(
            MSet::parse_pairs(&mut super::super::args_of("mset", "a 1 b"), false),
            Err(CmdError::WrongArity("mset".into()))
        );
        assert_eq!(
            MSet::parse_pairs(&mut super::super::args_of("msetnx", "a"), true),
            Err(CmdError::WrongArity("msetnx".into()))
        );
    }
}
