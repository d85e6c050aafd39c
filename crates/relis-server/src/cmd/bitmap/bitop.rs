//! BITOP AND|OR|XOR|NOT destkey key [key ...] — a bitwise operation over strings (missing keys
//! are empty strings, shorter ones are padded with zeros), stored at `destkey`; replies with
//! its length. An empty result deletes `destkey`. <https://redis.io/commands/bitop/>

use crate::args::Args;
use crate::cmd::{Cx, FindKeys, KeySpec, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// BITOP's declaration.
pub const SPEC: Spec = Spec {
    name: "bitop",
    arity: -4,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["write", "bitmap", "slow"]),
    keys: (2, -1, 1),
    group: "bitmap",
    since: "2.6.0",
    summary: "Perform bitwise operations between strings",
    complexity: "O(N)",
    parse: BitOp::parse,
    key_specs: &[
        KeySpec {
            flags: Spec::key_flags(&["OW", "update"]),
            index: 2,
            notes: "",
            find: FindKeys::Range(0, 1, 0),
        },
        KeySpec {
            flags: Spec::key_flags(&["RO", "access"]),
            index: 3,
            notes: "",
            find: FindKeys::Range(-1, 1, 0),
        },
    ],
    ..Spec::BASE
};

/// BITOP operation destkey key [key ...].
#[derive(Debug, PartialEq, Eq)]
pub struct BitOp {
    op: relis::BitOp,
    dest: Bytes,
    sources: Vec<Bytes>,
}

impl BitOp {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        BitOp::parse_args(args).and_then(Parsed::write)
    }

    fn parse_args(args: &mut Args) -> Result<BitOp, CmdError> {
        let name = args.next()?;
        let op = match name.to_ascii_lowercase().as_slice() {
            b"and" => relis::BitOp::And,
            b"or" => relis::BitOp::Or,
            b"xor" => relis::BitOp::Xor,
            b"not" => relis::BitOp::Not,
            _ => return Err(CmdError::Syntax),
        };
        let dest = args.next()?;
        let sources = args.rest();
        if op == relis::BitOp::Not && sources.len() != 1 {
            return Err(CmdError::BITOP_NOT_ONE_KEY);
        }
        Ok(BitOp { op, dest, sources })
    }
}

impl WriteCmd for BitOp {
    // Every error of this command comes before its first write (see WriteCmd::on_error).
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }

    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let sources: Vec<Vec<u8>> = self.sources.iter().map(|s| s.to_vec()).collect();
        let out = w.bitop(cx.db, self.op, &self.dest, &sources)?;
        let ev = relis::events::class::STRING;
        Ok(Frame::Integer(match out {
            relis::BitopOutcome::Stored(n) => {
                w.notify(ev, "set", cx.db, &self.dest);
                n as i64
            }
            relis::BitopOutcome::Deleted => {
                w.notify(relis::events::class::GENERIC, "del", cx.db, &self.dest);
                0
            }
            relis::BitopOutcome::Nothing => 0,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations() {
        let p = |l: &str| BitOp::parse_args(&mut crate::cmd::string::args_of("bitop", l));
        assert_eq!(p("xOr d a b").map(|b| b.op), Ok(relis::BitOp::Xor));
        assert_eq!(p("nand d a").map(|b| b.op), Err(CmdError::Syntax));
        assert_eq!(
            p("not d a b").map(|b| b.op),
            Err(CmdError::err(
                "BITOP NOT must be called with a single source key."
            ))
        );
    }
}
