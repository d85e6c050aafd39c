//! PFADD key [element ...] — adds the elements to the HyperLogLog at `key`, creating it (even
//! with no elements); replies 1 if the HLL changed, 0 if not.
//! <https://redis.io/commands/pfadd/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// PFADD's declaration.
pub const SPEC: Spec = Spec {
    name: "pfadd",
    arity: -2,
    flags: Spec::flags(&["write", "denyoom", "fast"]),
    acl: Spec::acl(&["write", "hyperloglog", "fast"]),
    keys: (1, 1, 1),
    group: "hyperloglog",
    since: "2.8.9",
    summary: "Adds the specified elements to the specified HyperLogLog.",
    complexity: "O(1) to add every element.",
    parse: PfAdd::parse,
    key_flags: Spec::key_flags(&["RW", "insert"]),
    ..Spec::BASE
};

/// PFADD key [element ...].
#[derive(Debug, PartialEq, Eq)]
pub struct PfAdd {
    key: Bytes,
    elements: Vec<Bytes>,
}

impl PfAdd {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        PfAdd::parse_args(args).and_then(Parsed::write)
    }

    fn parse_args(args: &mut Args) -> Result<PfAdd, CmdError> {
        let key = args.next()?;
        let elements = args.rest();
        args.finish()?;
        Ok(PfAdd { key, elements })
    }
}

impl WriteCmd for PfAdd {
    // Its errors come before it writes, but for a corrupted value found half way
    // through, whose elements added so far Redis keeps (and so does the engine: it writes them
    // before it returns the error, and nothing takes them back).
    fn on_error(&self) -> relis::OnError {
        relis::OnError::Keep
    }

    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let max = super::sparse_max(cx);
        let updated = w.pfadd(cx.db, &self.key, &self.elements, max)?;
        if updated {
            w.notify(relis::events::class::STRING, "pfadd", cx.db, &self.key);
        }
        Ok(Frame::Integer(i64::from(updated)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse() {
        let p = |l: &str| PfAdd::parse_args(&mut super::super::args_of("pfadd", l));
        assert_eq!(
            p("k"),
            Ok(PfAdd {
                key: Bytes::from_static(b"k"),
                elements: vec![]
            })
        );
        assert_eq!(p("k a b").map(|c| c.elements.len()), Ok(2));
    }
}
