//! PFCOUNT key [key ...] — the estimated cardinality of the HyperLogLog at `key`, or of the
//! union of several (missing keys count as empty). <https://redis.io/commands/pfcount/>
//!
//! Redis flags PFCOUNT read-only, yet with one key it caches the estimate in the value (the
//! header's cardinality field) when the cached one is stale: a change of the key (a WATCH on it
//! fails, client-side caches are invalidated) without a keyspace notification. So with one key
//! it runs on the writer; with several it only reads (the union is computed in a scratch set of
//! registers and nothing is cached).

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// PFCOUNT's declaration.
pub const SPEC: Spec = Spec {
    name: "pfcount",
    arity: -2,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "hyperloglog", "slow"]),
    keys: (1, -1, 1),
    group: "hyperloglog",
    since: "2.8.9",
    summary: "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).",
    complexity: "O(1) with a very small average constant time when called with a single key. O(N) with N being the number of keys, and much bigger constant times, when called with multiple keys.",
    parse: PfCount::parse,
    key_flags: Spec::key_flags(&["RW", "access"]),
    key_notes: "RW because it may change the internal representation of the key, and propagate to replicas",
    ..Spec::BASE
};

/// PFCOUNT key [key ...].
#[derive(Debug, PartialEq, Eq)]
pub struct PfCount {
    keys: Vec<Bytes>,
}

impl PfCount {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let c = PfCount::parse_args(args)?;
        if c.keys.len() == 1 {
            Parsed::write(c)
        } else {
            Parsed::read(c)
        }
    }

    fn parse_args(args: &mut Args) -> Result<PfCount, CmdError> {
        let keys = args.rest();
        args.finish()?;
        Ok(PfCount { keys })
    }
}

fn card(n: u64) -> Frame {
    // A cached cardinality is valid only with its top bit clear: it fits an i64.
    Frame::Integer(n as i64)
}

impl WriteCmd for PfCount {
    // Its only write is its last step.
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }

    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let key = &self.keys[0];
        let (n, wrote) = w.pfcount(cx.db, key, &mut |k, found| cx.hit(k, found))?;
        if wrote {
            w.notify(relis::events::class::MODIFIED, "pfcount", cx.db, key);
        }
        Ok(card(n))
    }
}

impl ReadCmd for PfCount {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let n = r.pfcount_union(cx.db, &self.keys, &mut |k, found| cx.hit(k, found))?;
        Ok(card(n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_key_writes_several_read() {
        let p = |l: &str| PfCount::parse(&mut super::super::args_of("pfcount", l));
        assert!(matches!(p("a"), Ok(Parsed::Write(_))));
        assert!(matches!(p("a b"), Ok(Parsed::Read(_))));
    }
}
