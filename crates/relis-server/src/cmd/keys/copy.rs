//! COPY source destination [DB destination-db] [REPLACE] — copy a key's value and expiry to
//! another key, possibly in another database. <https://redis.io/commands/copy/>
//!
//! Replies 1 when copied, 0 when `source` is missing or `destination` exists (without REPLACE).
//! Redis checks each `DB` index against the database count while it reads the options, so a bad
//! index is reported before a later syntax error; the database count is only known when the
//! command runs, so the parse keeps the indexes seen before a bad option and `exec` reports in
//! Redis's order.

use crate::args::Args;
use crate::cmd::keys::{db_index, parse_int};
use crate::cmd::{Cx, FindKeys, KeySpec, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// COPY's declaration.
pub const SPEC: Spec = Spec {
    name: "copy",
    arity: -3,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["keyspace", "write", "slow"]),
    keys: (1, 2, 1),
    group: "generic",
    since: "6.2.0",
    summary: "Copy a key",
    complexity: "O(N) worst case for collections, where N is the number of nested items. O(1) for string values.",
    parse: Copy::parse,
    // A list or sorted set landing on the destination serves the clients blocked there.
    unblocks: true,
    // The source is only read, the destination only written: ACL `%R~` / `%W~` patterns
    // check each against its own flags, as in Redis.
    key_specs: &[
        KeySpec {
            flags: Spec::key_flags(&["RO", "access"]),
            index: 1,
            notes: "",
            find: FindKeys::Range(0, 1, 0),
        },
        KeySpec {
            flags: Spec::key_flags(&["OW", "update"]),
            index: 2,
            notes: "",
            find: FindKeys::Range(0, 1, 0),
        },
    ],
    ..Spec::BASE
};

/// COPY source destination [DB destination-db] [REPLACE].
#[derive(Debug, PartialEq, Eq)]
pub struct Copy {
    src: Bytes,
    dst: Bytes,
    /// Every DB index given, in order (the last one wins; each is range-checked).
    dbs: Vec<i32>,
    replace: bool,
    /// An option error that Redis reports only after checking the indexes before it.
    error: Option<CmdError>,
}

impl Copy {
    fn from_args(args: &mut Args) -> Result<Copy, CmdError> {
        let (src, dst) = (args.next()?, args.next()?);
        let (mut dbs, mut replace, mut error) = (Vec::new(), false, None);
        while !args.is_empty() {
            if args.eat("replace") {
                replace = true;
            } else if args.remaining() >= 2 && args.eat("db") {
                match parse_int(&args.next()?, None) {
                    Ok(n) => dbs.push(n),
                    Err(e) => {
                        error = Some(e);
                        break;
                    }
                }
            } else {
                error = Some(CmdError::Syntax);
                break;
            }
        }
        args.rest();
        args.finish()?;
        match error {
            Some(e) if dbs.is_empty() => Err(e),
            error => Ok(Copy {
                src,
                dst,
                dbs,
                replace,
                error,
            }),
        }
    }

    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::write(Copy::from_args(args)?)
    }
}

impl WriteCmd for Copy {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let mut dst_db = cx.db;
        for &i in &self.dbs {
            dst_db = db_index(i, w.databases())?;
        }
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        if dst_db != cx.db || self.src != self.dst {
            // Redis looks the source up for reading (a keyspace hit or miss) once the options
            // have passed.
            cx.hit(&self.src, w.meta(cx.db, &self.src)?.is_some());
        }
        let copied = w.copy(cx.db, &self.src, dst_db, &self.dst, self.replace)?;
        if copied {
            w.notify(relis::events::class::GENERIC, "copy_to", dst_db, &self.dst);
        }
        Ok(Frame::Integer(copied as i64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &[&str]) -> Result<Copy, CmdError> {
        let mut args = Args::new(
            "copy",
            line.iter()
                .map(|a| Bytes::copy_from_slice(a.as_bytes()))
                .collect(),
        );
        Copy::from_args(&mut args)
    }

    #[test]
    fn options() {
        let c = parse(&["a", "b"]).unwrap();
        assert_eq!(
            (c.dbs.as_slice(), c.replace, c.error),
            (&[][..], false, None)
        );
        let c = parse(&["a", "b", "REPLACE", "db", "3", "DB", "2", "replace"]).unwrap();
        assert_eq!(
            (c.dbs.as_slice(), c.replace, c.error),
            (&[3, 2][..], true, None)
        );
        assert_eq!(parse(&["a", "b", "db"]), Err(CmdError::Syntax));
        assert_eq!(parse(&["a", "b", "foo"]), Err(CmdError::Syntax));
        assert_eq!(parse(&["a", "b", "db", "x"]), Err(CmdError::NotInteger));
        assert_eq!(
            parse(&["a", "b", "db", "2147483648"]),
            Err(CmdError::err(
                "value is out of range, value must between -2147483648 and 2147483647"
            ))
        );
        // A syntax error after a DB index waits for the index's range check.
        let c = parse(&["a", "b", "db", "99", "foo"]).unwrap();
        assert_eq!(
            (c.dbs.as_slice(), c.error),
            (&[99][..], Some(CmdError::Syntax))
        );
    }
}
