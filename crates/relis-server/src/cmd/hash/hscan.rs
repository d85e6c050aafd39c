//! HSCAN key cursor [MATCH pattern] [COUNT count] — iterate the fields (with their values) of
//! the hash at `key` a page at a time. <https://redis.io/commands/hscan/>
//!
//! A hash Redis would hold as a listpack comes whole in one reply, in its order, with cursor 0,
//! whatever the cursor and COUNT say, as from Redis. A larger hash is walked in field order, as
//! SCAN walks keys (see `keys/scan.rs`): a field present for the whole iteration comes exactly
//! once, and the Redis-shaped integer cursors Relis hands out name the field a page stopped
//! after (`Shared::cursors`, keyed by database and key). An unknown cursor restarts the scan.
//! Over PostgreSQL the cursor comes from the data instead, valid on every node (`KeyScan::run`).
//! COUNT bounds the fields examined before MATCH (on the field) filters them. NOVALUES is Redis
//! 7.4's and a syntax error here, as in 7.0.
//!
//! Redis checks the cursor first, then looks the key up, and only then reads the options: a
//! missing key replies an empty scan whatever options follow.

use crate::args::Args;
use crate::cmd::keys::scan::KeyScan;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// HSCAN's declaration.
pub const SPEC: Spec = Spec {
    name: "hscan",
    arity: -3,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "hash", "slow"]),
    keys: (1, 1, 1),
    group: "hash",
    since: "2.8.0",
    summary: "Incrementally iterate hash fields and associated values",
    complexity: "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..",
    parse: HScan::parse,
    tips: &["nondeterministic_output"],
    ..Spec::BASE
};

/// HSCAN key cursor [MATCH pattern] [COUNT count].
#[derive(Debug, PartialEq, Eq)]
pub struct HScan(KeyScan);

impl HScan {
    fn from_args(args: &mut Args) -> Result<HScan, CmdError> {
        KeyScan::from_args(args).map(HScan)
    }

    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::read(HScan::from_args(args)?)
    }
}

fn reply(cursor: u64, entries: Vec<(Bytes, Bytes)>) -> Frame {
    Frame::Array(vec![
        Frame::Bulk(Bytes::from(cursor.to_string())),
        Frame::Array(
            entries
                .into_iter()
                .flat_map(|(f, v)| [Frame::Bulk(f), Frame::Bulk(v)])
                .collect(),
        ),
    ])
}

impl ReadCmd for HScan {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let s = &self.0;
        let page = s.run(
            cx,
            || r.hlen(cx.db, &s.key),
            |after, o| {
                let page = r.hscan(cx.db, &s.key, after, o.count, o.pattern.as_deref())?;
                Ok(page.map(|p| (p.next, p.entries)))
            },
            |(f, _)| f,
        )?;
        Ok(match page {
            Some((cursor, entries)) => reply(cursor, entries),
            None => reply(0, Vec::new()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::hash::args_of;
    use crate::cmd::keys::scan::ScanOptions;

    fn parse(line: &str) -> Result<HScan, CmdError> {
        HScan::from_args(&mut args_of("hscan", line))
    }

    #[test]
    fn options_are_kept_for_after_the_lookup() {
        let s = parse("h 0").unwrap();
        assert_eq!(
            s.0.options,
            Ok(ScanOptions {
                pattern: None,
                count: 10
            })
        );
        let s = parse("h 42 MATCH a* count 5 match b*").unwrap();
        assert_eq!(s.0.cursor, 42);
        assert_eq!(
            s.0.options,
            Ok(ScanOptions {
                pattern: Some(Bytes::from("b*")),
                count: 5
            })
        );
        assert_eq!(parse("h x"), Err(CmdError::err("invalid cursor")));
        assert_eq!(parse("h x count 0"), Err(CmdError::err("invalid cursor")));
        for (line, err) in [
            ("h 0 count 0", CmdError::Syntax),
            ("h 0 count -1", CmdError::Syntax),
            ("h 0 count x", CmdError::NotInteger),
            ("h 0 match", CmdError::Syntax),
            ("h 0 novalues", CmdError::Syntax),
            ("h 0 type string", CmdError::Syntax),
            ("h 0 count 1 count 0", CmdError::Syntax),
        ] {
            assert_eq!(parse(line).unwrap().0.options, Err(err), "{line}");
        }
    }
}
