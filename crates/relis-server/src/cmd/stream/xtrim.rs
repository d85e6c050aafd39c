//! XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count] — removes entries from the head;
//! replies how many. <https://redis.io/commands/xtrim/>
//!
//! `=` trims exactly. `~` trims whole runs of 100 entries from the head (the last run is what
//! is left over), never below the threshold (MAXLEN) and never an entry at or above it (MINID),
//! stopping before a full run would pass LIMIT (default 10,000): the counts Redis replies for a
//! stream that only grew by XADD, whose nodes are such runs (see `relis::Writer::xtrim`).

use super::parse_trim_args;
use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::Trim;
use resp::Frame;

/// XTRIM's declaration.
pub const SPEC: Spec = Spec {
    name: "xtrim",
    arity: -4,
    flags: Spec::flags(&["write"]),
    acl: Spec::acl(&["write", "stream", "slow"]),
    keys: (1, 1, 1),
    group: "stream",
    since: "5.0.0",
    summary: "Trims the stream to (approximately if '~' is passed) a certain size",
    complexity: "O(N), with N being the number of evicted entries. Constant times are very small however, since entries are organized in macro nodes containing multiple entries that can be released with a single deallocation.",
    parse: XTrim::parse,
    tips: &["nondeterministic_output"],
    key_flags: Spec::key_flags(&["RW", "delete"]),
    ..Spec::BASE
};

/// XTRIM.
#[derive(Debug, PartialEq, Eq)]
pub struct XTrim {
    key: Bytes,
    trim: Trim,
}

impl XTrim {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let opts = parse_trim_args(args, false)?;
        args.finish()?;
        let trim = opts.trim.ok_or(CmdError::Syntax)?;
        Parsed::write(XTrim { key, trim })
    }
}

impl WriteCmd for XTrim {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let n = w.xtrim(cx.db, &self.key, self.trim)?;
        if n > 0 {
            w.notify(relis::events::class::STREAM, "xtrim", cx.db, &self.key);
        }
        Ok(Frame::Integer(n as i64))
    }
}
