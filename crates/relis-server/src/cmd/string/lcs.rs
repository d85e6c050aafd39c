//! LCS key1 key2 [LEN] [IDX] [MINMATCHLEN min-match-len] [WITHMATCHLEN] — the longest common
//! subsequence of two strings (missing keys are empty): the string itself, its length (LEN),
//! or the matching ranges, last first (IDX, optionally with each range's length and only the
//! ranges at least MINMATCHLEN long). <https://redis.io/commands/lcs/>
//!
//! Redis 7.0 looks both keys up before it reads the options, so a key of another type wins over
//! a syntax error: [`Lcs`] keeps the options' parse error and replies with it after the type
//! check. The IDX reply is a map (`matches`, `len`); RESP2 sees it as a flat array.

use crate::args::{lower, Args};
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use relis::StringLookup;
use resp::Frame;

/// LCS's declaration.
pub const SPEC: Spec = Spec {
    name: "lcs",
    arity: -3,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "string", "slow"]),
    keys: (1, 2, 1),
    group: "string",
    since: "7.0.0",
    summary: "Find longest common substring",
    complexity: "O(N*M) where N and M are the lengths of s1 and s2, respectively",
    parse: Lcs::parse,
    ..Spec::BASE
};

/// What LCS replies with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Output {
    /// The common subsequence.
    String,
    /// Its length (LEN).
    Len,
    /// The matching ranges (IDX).
    Idx {
        /// Only ranges at least this long (MINMATCHLEN; 0 = all).
        min_len: usize,
        /// Each range with its length (WITHMATCHLEN).
        with_len: bool,
    },
}

/// LCS key1 key2 [options].
#[derive(Debug, PartialEq, Eq)]
pub struct Lcs {
    a: Bytes,
    b: Bytes,
    /// The options, or the error Redis replies with once the keys have passed the type check.
    output: Result<Output, CmdError>,
}

impl Lcs {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Lcs::parse_args(args).and_then(Parsed::read)
    }

    fn parse_args(args: &mut Args) -> Result<Lcs, CmdError> {
        let (a, b) = (args.next()?, args.next()?);
        let output = Lcs::options(args);
        // Consume whatever an early error left over (the error already says what was wrong).
        args.rest();
        args.finish()?;
        Ok(Lcs { a, b, output })
    }

    fn options(args: &mut Args) -> Result<Output, CmdError> {
        let (mut idx, mut len, mut with_len, mut min_len) = (false, false, false, 0i64);
        while let Some(a) = args.peek().cloned() {
            args.next()?;
            match lower(&a).as_str() {
                "idx" => idx = true,
                "len" => len = true,
                "withmatchlen" => with_len = true,
                "minmatchlen" if !args.is_empty() => min_len = args.next_i64()?.max(0),
                _ => return Err(CmdError::Syntax),
            }
        }
        Ok(match (idx, len) {
            (true, true) => return Err(CmdError::LCS_LEN_AND_IDX),
            (true, false) => Output::Idx {
                min_len: usize::try_from(min_len).unwrap_or(usize::MAX),
                with_len,
            },
            (false, true) => Output::Len,
            (false, false) => Output::String,
        })
    }
}

impl ReadCmd for Lcs {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let (a, b) = r.lcs_values(cx.db, &self.a, &self.b)?;
        cx.hit(&self.a, a.found());
        cx.hit(&self.b, b.found());
        if a == StringLookup::OtherType || b == StringLookup::OtherType {
            return Err(CmdError::LCS_NOT_STRINGS);
        }
        let output = self.output.clone()?;
        let (a, b) = (a.value().unwrap_or_default(), b.value().unwrap_or_default());
        // Redis's table is (len+1)^2 u32s; it refuses strings whose lengths overflow u32 and a
        // table larger than proto-max-bulk-len.
        if a.len() as u64 >= u64::from(u32::MAX) - 1 || b.len() as u64 >= u64::from(u32::MAX) - 1 {
            return Err(CmdError::LCS_TOO_LONG);
        }
        let table = (a.len() as u128 + 1) * (b.len() as u128 + 1) * 4;
        if table > super::max_bulk_len(cx) as u128 {
            return Err(CmdError::LCS_NO_MEMORY);
        }
        let lcs = relis::lcs(&a, &b);
        Ok(match output {
            Output::String => Frame::Bulk(lcs.common),
            Output::Len => Frame::Integer(lcs.common.len() as i64),
            Output::Idx { min_len, with_len } => {
                let pair = |s: usize, e: usize| {
                    Frame::Array(vec![Frame::Integer(s as i64), Frame::Integer(e as i64)])
                };
                let matches = lcs
                    .matches
                    .iter()
                    .filter(|((s, e), _)| e - s + 1 >= min_len)
                    .map(|&((a_s, a_e), (b_s, b_e))| {
                        let mut m = vec![pair(a_s, a_e), pair(b_s, b_e)];
                        if with_len {
                            m.push(Frame::Integer((a_e - a_s + 1) as i64));
                        }
                        Frame::Array(m)
                    })
                    .collect();
                Frame::Map(vec![
                    (Frame::bulk("matches"), Frame::Array(matches)),
                    (Frame::bulk("len"), Frame::Integer(lcs.common.len() as i64)),
                ])
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(line: &str) -> Result<Output, CmdError> {
        Lcs::parse_args(&mut super::super::args_of("lcs", line))
            .unwrap()
            .output
    }

    #[test]
    fn options() {
        assert_eq!(output("a b"), Ok(Output::String));
        assert_eq!(output("a b WITHMATCHLEN"), Ok(Output::String));
        assert_eq!(output("a b len"), Ok(Output::Len));
        assert_eq!(output("a b LEN MINMATCHLEN 4"), Ok(Output::Len));
        assert_eq!(
            output("a b IDX MINMATCHLEN 4 WITHMATCHLEN"),
            Ok(Output::Idx {
                min_len: 4,
                with_len: true
            })
        );
        assert_eq!(
            output("a b MINMATCHLEN -5 IDX"),
            Ok(Output::Idx {
                min_len: 0,
                with_len: false
            })
        );
        let both = Err(CmdError::err(
            "If you want both the length and indexes, please just use IDX.",
        ));
        assert_eq!(output("a b LEN IDX"), both);
        assert_eq!(output("a b IDX LEN"), both);
        assert_eq!(output("a b MINMATCHLEN"), Err(CmdError::Syntax));
        assert_eq!(output("a b BOGUS"), Err(CmdError::Syntax));
        assert_eq!(output("a b LEN BOGUS IDX"), Err(CmdError::Syntax));
        assert_eq!(output("a b MINMATCHLEN x BOGUS"), Err(CmdError::NotInteger));
    }
}
