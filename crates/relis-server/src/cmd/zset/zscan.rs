//! ZSCAN key cursor [MATCH pattern] [COUNT count] — iterate a sorted set's members and scores a
//! page at a time. <https://redis.io/commands/zscan/>
//!
//! A set Redis keeps as a listpack comes whole in one reply (in score order, cursor 0), as
//! from Redis. A larger one is walked in member byte order, so a member present for the whole
//! iteration comes exactly once; the Redis-shaped integer cursors map to the member a page
//! stopped after (`Shared::cursors`, keyed by database and key), and an unknown cursor
//! restarts the scan (over PostgreSQL the cursor comes from the data instead, valid on every
//! node: `KeyScan::run`). COUNT bounds the members examined before MATCH filters them. Scores are
//! bulk strings (`%.17g`) under both protocols, as Redis sends them.
//!
//! Redis checks the cursor first, then looks the key up, and only then reads the options: a
//! missing key replies an empty scan whatever options follow.

use crate::args::Args;
use crate::cmd::keys::scan::KeyScan;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// ZSCAN's declaration.
pub const SPEC: Spec = Spec {
    name: "zscan",
    arity: -3,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "sortedset", "slow"]),
    keys: (1, 1, 1),
    group: "sorted-set",
    since: "2.8.0",
    summary: "Incrementally iterate sorted sets elements and associated scores",
    complexity: "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..",
    parse: ZScan::parse,
    tips: &["nondeterministic_output"],
    ..Spec::BASE
};

/// ZSCAN key cursor [MATCH pattern] [COUNT count].
#[derive(Debug, PartialEq, Eq)]
pub struct ZScan(KeyScan);

impl ZScan {
    fn from_args(args: &mut Args) -> Result<ZScan, CmdError> {
        KeyScan::from_args(args).map(ZScan)
    }

    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::read(ZScan::from_args(args)?)
    }
}

/// A score as ZSCAN shows it: a listpack holds the text of Redis's `d2string` (an integral
/// score within ±2^62 as an integer, others `%.17g`); a skiplist's scores are formatted
/// `%.17Lg`, the same digits as `%.17g`.
fn score_text(s: f64, listpack: bool) -> Bytes {
    Bytes::from(if listpack {
        rdb::d2string(s)
    } else {
        resp::format_double(s)
    })
}

fn reply(cursor: u64, items: Vec<relis::Scored>, listpack: bool) -> Frame {
    let mut flat = Vec::with_capacity(items.len() * 2);
    for (m, s) in items {
        flat.push(Frame::Bulk(m));
        flat.push(Frame::Bulk(score_text(s, listpack)));
    }
    Frame::Array(vec![
        Frame::Bulk(Bytes::from(cursor.to_string())),
        Frame::Array(flat),
    ])
}

impl ReadCmd for ZScan {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let s = &self.0;
        // How the scores are shown: as the last page read says (a set Redis keeps as a
        // listpack comes whole, in one page).
        let listpack = std::cell::Cell::new(true);
        let page = s.run(
            cx,
            || r.zcard(cx.db, &s.key),
            |after, o| {
                let page = r.zscan(cx.db, &s.key, after, o.count, o.pattern.as_deref())?;
                Ok(page.map(|p| {
                    listpack.set(p.listpack);
                    (p.next, p.items)
                }))
            },
            |(m, _)| m,
        )?;
        Ok(match page {
            Some((cursor, items)) => reply(cursor, items, listpack.get()),
            None => reply(0, Vec::new(), true),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::keys::scan::ScanOptions;

    fn parse(line: &str) -> Result<ZScan, CmdError> {
        ZScan::from_args(&mut super::super::args_of("zscan", line))
    }

    #[test]
    fn listpack_scores_read_as_redis_stores_them() {
        let t = |s, lp| String::from_utf8(score_text(s, lp).to_vec()).unwrap();
        assert_eq!(t(123456789012345678.0, true), "123456789012345680");
        assert_eq!(t(123456789012345678.0, false), "1.2345678901234568e+17");
        assert_eq!(t(1e100, true), "1e+100");
        assert_eq!(t(-3.0, true), "-3");
        assert_eq!(t(0.5, true), "0.5");
        assert_eq!(t(f64::INFINITY, true), "inf");
        assert_eq!(t(2f64.powi(62), true), "4611686018427387904");
        assert_eq!(t(2f64.powi(63), true), "9.2233720368547758e+18");
    }

    #[test]
    fn options_are_judged_late() {
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
            ("k 0 count x", CmdError::NotInteger),
            ("k 0 match", CmdError::Syntax),
            ("k 0 type zset", CmdError::Syntax),
        ] {
            assert_eq!(parse(line).unwrap().0.options, Err(e), "{line}");
        }
    }
}
