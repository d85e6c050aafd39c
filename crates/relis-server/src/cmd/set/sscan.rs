//! SSCAN key cursor [MATCH pattern] [COUNT count] — iterate the members of the set at `key` a
//! page at a time. <https://redis.io/commands/sscan/>
//!
//! As SCAN does for keys (see `keys/scan.rs`), Relis walks members in member order, so a member
//! present for the whole iteration comes exactly once, and maps the Redis-shaped integer cursors
//! it hands out to the member a page stopped after (`Shared::cursors`, keyed by database and
//! key). An unknown cursor restarts the scan. Over PostgreSQL the cursor comes from the data
//! instead, valid on every node (`KeyScan::run`). COUNT bounds the members examined before MATCH
//! filters them. A set Redis would keep as an intset comes whole in one reply, as from Redis.
//!
//! Redis checks the cursor first, then looks the key up, and only then reads the options: a
//! missing key replies an empty scan whatever options follow.

use crate::args::Args;
use crate::cmd::keys::scan::KeyScan;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// SSCAN's declaration.
pub const SPEC: Spec = Spec {
    name: "sscan",
    arity: -3,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "set", "slow"]),
    keys: (1, 1, 1),
    group: "set",
    since: "2.8.0",
    summary: "Incrementally iterate Set elements",
    complexity: "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..",
    parse: SScan::parse,
    tips: &["nondeterministic_output"],
    ..Spec::BASE
};

/// SSCAN key cursor [MATCH pattern] [COUNT count].
#[derive(Debug, PartialEq, Eq)]
pub struct SScan(KeyScan);

impl SScan {
    fn from_args(args: &mut Args) -> Result<SScan, CmdError> {
        KeyScan::from_args(args).map(SScan)
    }

    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::read(SScan::from_args(args)?)
    }
}

fn reply(cursor: u64, members: Vec<Bytes>) -> Frame {
    Frame::Array(vec![
        Frame::Bulk(Bytes::from(cursor.to_string())),
        super::array_reply(members),
    ])
}

impl ReadCmd for SScan {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let s = &self.0;
        let page = s.run(
            cx,
            || r.scard(cx.db, &s.key),
            |after, o| {
                let page = r.sscan(cx.db, &s.key, after, o.count, o.pattern.as_deref())?;
                Ok(page.map(|p| (p.next, p.keys)))
            },
            |m| m,
        )?;
        Ok(match page {
            Some((cursor, members)) => reply(cursor, members),
            None => reply(0, Vec::new()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::keys::scan::ScanOptions;

    fn parse(line: &str) -> Result<SScan, CmdError> {
        SScan::from_args(&mut super::super::args_of("sscan", line))
    }

    #[test]
    fn options_are_judged_late() {
        let s = parse("k 0").unwrap();
        assert_eq!(
            s.0.options,
            Ok(ScanOptions {
                pattern: None,
                count: 10
            })
        );
        let s = parse("k 7 COUNT 2 match a* count 3").unwrap();
        assert_eq!(s.0.cursor, 7);
        assert_eq!(
            s.0.options,
            Ok(ScanOptions {
                pattern: Some(Bytes::from_static(b"a*")),
                count: 3
            })
        );
        assert_eq!(parse("k x"), Err(CmdError::err("invalid cursor")));
        for (line, e) in [
            ("k 0 count 0", CmdError::Syntax),
            ("k 0 count -1", CmdError::Syntax),
            ("k 0 count x", CmdError::NotInteger),
            ("k 0 match", CmdError::Syntax),
            ("k 0 type string", CmdError::Syntax),
            ("k 0 badopt", CmdError::Syntax),
        ] {
            assert_eq!(parse(line).unwrap().0.options, Err(e), "{line}");
        }
    }
}
