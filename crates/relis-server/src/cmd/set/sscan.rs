//! SSCAN key cursor [MATCH pattern] [COUNT count] — iterate the members of the set at `key` a
//! page at a time. <https://redis.io/commands/sscan/>
//!
//! As SCAN does for keys (see `keys/scan.rs`), Relis walks members in member order, so a member
//! present for the whole iteration comes exactly once, and maps the Redis-shaped integer cursors
//! it hands out to the member a page stopped after (`Shared::cursors`, keyed by database and
//! key). An unknown cursor restarts the scan. COUNT bounds the members examined before MATCH
//! filters them. A set Redis would keep as an intset comes whole in one reply, as from Redis.
//!
//! Redis checks the cursor first, then looks the key up, and only then reads the options: a
//! missing key replies an empty scan whatever options follow.

use crate::args::Args;
use crate::cmd::keys::scan::{parse_cursor, ScanOptions};
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
pub struct SScan {
    key: Bytes,
    cursor: u64,
    /// The options, or the error they give once the key turns out to be a set.
    options: Result<ScanOptions, CmdError>,
}

impl SScan {
    fn from_args(args: &mut Args) -> Result<SScan, CmdError> {
        let key = args.next()?;
        let cursor = parse_cursor(&args.next()?)?;
        let options = ScanOptions::from_args(args);
        // Whatever the options said, every argument is accounted for.
        args.rest();
        args.finish()?;
        Ok(SScan {
            key,
            cursor,
            options,
        })
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
        let o = match &self.options {
            Ok(o) => o,
            // Bad options matter only for a set: look the key up as SSCAN would first.
            Err(e) => {
                return match crate::cmd::counted(cx, &self.key, r.scard(cx.db, &self.key))? {
                    None => Ok(reply(0, Vec::new())),
                    Some(_) => Err(e.clone()),
                }
            }
        };
        let after = match self.cursor {
            0 => None,
            c => cx.server.cursors.lock().resume_keyed(cx.db, &self.key, c),
        };
        let page = r.sscan(
            cx.db,
            &self.key,
            after.as_deref(),
            o.count,
            o.pattern.as_deref(),
        );
        let Some(page) = crate::cmd::counted(cx, &self.key, page)? else {
            return Ok(reply(0, Vec::new()));
        };
        let cursor = match page.next {
            Some(m) => cx
                .server
                .cursors
                .lock()
                .save_keyed(cx.db, self.key.clone(), m),
            None => 0,
        };
        Ok(reply(cursor, page.keys))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<SScan, CmdError> {
        SScan::from_args(&mut super::super::args_of("sscan", line))
    }

    #[test]
    fn options_are_judged_late() {
        let s = parse("k 0").unwrap();
        assert_eq!(
            s.options,
            Ok(ScanOptions {
                pattern: None,
                count: 10
            })
        );
        let s = parse("k 7 COUNT 2 match a* count 3").unwrap();
        assert_eq!(s.cursor, 7);
        assert_eq!(
            s.options,
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
            assert_eq!(parse(line).unwrap().options, Err(e), "{line}");
        }
    }
}
