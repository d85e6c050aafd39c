//! PFMERGE destkey [sourcekey ...] — merges the HyperLogLogs at the source keys (and at
//! `destkey` itself) into `destkey`, creating it. Redis signals it as a `pfadd` event.
//! <https://redis.io/commands/pfmerge/>

use crate::args::Args;
use crate::cmd::{Cx, FindKeys, KeySpec, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// PFMERGE's declaration.
pub const SPEC: Spec = Spec {
    name: "pfmerge",
    arity: -2,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["write", "hyperloglog", "slow"]),
    keys: (1, -1, 1),
    group: "hyperloglog",
    since: "2.8.9",
    summary: "Merge N different HyperLogLogs into a single one.",
    complexity: "O(N) to merge N HyperLogLogs, but with high constant times.",
    parse: PfMerge::parse,
    key_specs: &[
        KeySpec {
            flags: Spec::key_flags(&["RW", "access", "insert"]),
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
    ..Spec::BASE
};

/// PFMERGE destkey [sourcekey ...]: `keys` holds the destination first, as Redis merges it too.
#[derive(Debug, PartialEq, Eq)]
pub struct PfMerge {
    keys: Vec<Bytes>,
}

impl PfMerge {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let keys = args.rest();
        args.finish()?;
        Parsed::write(PfMerge { keys })
    }
}

impl WriteCmd for PfMerge {
    // Every error of this command comes before its write (see WriteCmd::on_error).
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }

    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let max = super::sparse_max(cx);
        let dest = &self.keys[0];
        w.pfmerge(cx.db, dest, &self.keys, max, &mut |k, found| {
            cx.hit(k, found)
        })?;
        // "A mixed PFADD + PFMERGE operation", as Redis says: it signals `pfadd`.
        w.notify(relis::events::class::STRING, "pfadd", cx.db, dest);
        Ok(Frame::Simple(Bytes::from_static(b"OK")))
    }
}
