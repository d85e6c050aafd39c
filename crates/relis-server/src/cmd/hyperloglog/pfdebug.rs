//! PFDEBUG subcommand key — Redis's internal HyperLogLog debugging command:
//! `GETREG` (the 16384 registers, converting a sparse value to dense), `DECODE` (the sparse
//! opcodes as text), `ENCODING` (`dense` or `sparse`), `TODENSE` (converts; 1 if it did).
//! <https://redis.io/commands/pfdebug/>
//!
//! As in Redis the key is looked up (and checked to hold an HLL) before the subcommand is read,
//! so a missing key gets "The specified key does not exist" whatever the subcommand. The
//! conversions change the value without a keyspace event.

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::{PfDebug as Op, PfDebugOut};
use resp::Frame;

/// PFDEBUG's declaration.
pub const SPEC: Spec = Spec {
    name: "pfdebug",
    arity: 3,
    flags: Spec::flags(&["write", "denyoom", "admin"]),
    acl: Spec::acl(&["write", "hyperloglog", "admin", "slow", "dangerous"]),
    keys: (2, 2, 1),
    group: "hyperloglog",
    since: "2.8.9",
    summary: "Internal commands for debugging HyperLogLog values",
    complexity: "N/A",
    parse: PfDebug::parse,
    key_flags: Spec::key_flags(&["RW", "access"]),
    ..Spec::BASE
};

/// PFDEBUG subcommand key.
#[derive(Debug, PartialEq, Eq)]
pub struct PfDebug {
    /// The subcommand as sent (for the unknown-subcommand error).
    sub: Bytes,
    op: Op,
    key: Bytes,
}

impl PfDebug {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        PfDebug::parse_args(args).and_then(Parsed::write)
    }

    fn parse_args(args: &mut Args) -> Result<PfDebug, CmdError> {
        let (sub, key) = (args.next()?, args.next()?);
        args.finish()?;
        let op = match sub.to_ascii_lowercase().as_slice() {
            b"getreg" => Op::GetReg,
            b"decode" => Op::Decode,
            b"encoding" => Op::Encoding,
            b"todense" => Op::ToDense,
            _ => Op::Check,
        };
        Ok(PfDebug { sub, op, key })
    }
}

impl WriteCmd for PfDebug {
    // Its only write is its last step.
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }

    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let Some(out) = w.pfdebug(cx.db, &self.key, self.op)? else {
            return Err(CmdError::PFDEBUG_NO_KEY);
        };
        Ok(match out {
            PfDebugOut::Registers(regs) => Frame::Array(
                regs.into_iter()
                    .map(|r| Frame::Integer(i64::from(r)))
                    .collect(),
            ),
            PfDebugOut::Decoded(Some(text)) => Frame::Bulk(Bytes::from(text)),
            PfDebugOut::Decoded(None) => return Err(CmdError::PFDEBUG_NOT_SPARSE),
            PfDebugOut::Encoding(e) => Frame::Simple(Bytes::from_static(e.as_bytes())),
            PfDebugOut::Converted(c) => Frame::Integer(i64::from(c)),
            PfDebugOut::Checked => return Err(CmdError::pfdebug_unknown(&self.sub)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subcommands_any_case() {
        let p =
            |l: &str| PfDebug::parse_args(&mut super::super::args_of("pfdebug", l)).map(|c| c.op);
        assert_eq!(p("GetReg k"), Ok(Op::GetReg));
        assert_eq!(p("DECODE k"), Ok(Op::Decode));
        assert_eq!(p("encoding k"), Ok(Op::Encoding));
        assert_eq!(p("todense k"), Ok(Op::ToDense));
        assert_eq!(p("nope k"), Ok(Op::Check));
    }
}
