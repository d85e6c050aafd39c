//! GETRANGE key start end (and its old name SUBSTR) — the bytes of the string at `key` from
//! `start` to `end` inclusive; negative offsets count from the end, out-of-range offsets are
//! clamped, a missing key is an empty string. <https://redis.io/commands/getrange/>,
//! <https://redis.io/commands/substr/>

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

const COMPLEXITY: &str = "O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings.";

/// GETRANGE's declaration.
pub const SPEC: Spec = Spec {
    name: "getrange",
    arity: 4,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "string", "slow"]),
    keys: (1, 1, 1),
    group: "string",
    since: "2.4.0",
    summary: "Get a substring of the string stored at a key",
    complexity: COMPLEXITY,
    parse: GetRange::parse,
    ..Spec::BASE
};

/// SUBSTR's declaration (deprecated since 2.0 in favour of GETRANGE, which it is).
pub const SPEC_SUBSTR: Spec = Spec {
    name: "substr",
    since: "1.0.0",
    ..SPEC
};

/// GETRANGE key start end.
#[derive(Debug, PartialEq, Eq)]
pub struct GetRange {
    key: Bytes,
    start: i64,
    end: i64,
}

impl GetRange {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        GetRange::parse_args(args).and_then(Parsed::read)
    }

    fn parse_args(args: &mut Args) -> Result<GetRange, CmdError> {
        // Both offsets are checked before the key is looked up.
        let key = args.next()?;
        let start = args.next_i64()?;
        let end = args.next_i64()?;
        args.finish()?;
        Ok(GetRange { key, start, end })
    }
}

impl ReadCmd for GetRange {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let v = crate::cmd::counted(
            cx,
            &self.key,
            r.getrange(cx.db, &self.key, self.start, self.end),
        )?;
        Ok(Frame::Bulk(v.unwrap_or_default()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets() {
        let p = |l: &str| GetRange::parse_args(&mut super::super::args_of("getrange", l));
        assert_eq!(
            p("k -9223372036854775808 9223372036854775807").map(|g| (g.start, g.end)),
            Ok((i64::MIN, i64::MAX))
        );
        assert_eq!(p("k x 1"), Err(CmdError::NotInteger));
        assert_eq!(p("k 1 1.0"), Err(CmdError::NotInteger));
    }
}
