//! INCRBYFLOAT key increment — adds a float to the number stored at `key` (a missing key
//! counts as 0), in C `long double` precision as Redis does, and replies with the result as
//! Redis prints it (no exponent, trailing zeros dropped). The key's TTL is kept.
//! <https://redis.io/commands/incrbyfloat/>
//!
//! The increment is not parsed here: Redis checks the key's type, then the stored value, and
//! only then the increment, so the engine validates both in that order.

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// INCRBYFLOAT's declaration.
pub const SPEC: Spec = Spec {
    name: "incrbyfloat",
    arity: 3,
    flags: Spec::flags(&["write", "denyoom", "fast"]),
    acl: Spec::acl(&["write", "string", "fast"]),
    keys: (1, 1, 1),
    group: "string",
    since: "2.6.0",
    summary: "Increment the float value of a key by the given amount",
    complexity: "O(1)",
    parse: IncrByFloat::parse,
    ..Spec::BASE
};

/// INCRBYFLOAT key increment.
#[derive(Debug, PartialEq, Eq)]
pub struct IncrByFloat {
    key: Bytes,
    incr: Bytes,
}

impl IncrByFloat {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let (key, incr) = (args.next()?, args.next()?);
        args.finish()?;
        Parsed::write(IncrByFloat { key, incr })
    }
}

impl WriteCmd for IncrByFloat {
    // Every error of this command comes before its first write (see WriteCmd::on_error).
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }

    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let v = w.incr_by_float(cx.db, &self.key, &self.incr)?;
        w.notify(
            relis::events::class::STRING,
            "incrbyfloat",
            cx.db,
            &self.key,
        );
        Ok(Frame::Bulk(v))
    }
}
