//! RENAME key newkey and RENAMENX key newkey — give a key a new name, keeping its value and
//! expiry. <https://redis.io/commands/rename/>, <https://redis.io/commands/renamenx/>
//!
//! RENAME overwrites `newkey`; RENAMENX leaves an existing `newkey` alone and replies 0. A
//! missing `key` is `ERR no such key` for both, even when the names are equal; renaming a key to
//! itself is `+OK` for RENAME and 0 for RENAMENX.

use crate::args::Args;
use crate::cmd::{Cx, FindKeys, KeySpec, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// RENAME's declaration.
pub const SPEC_RENAME: Spec = Spec {
    name: "rename",
    key_specs: &[
        KeySpec {
            flags: Spec::key_flags(&["RW", "access", "delete"]),
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
    arity: 3,
    flags: Spec::flags(&["write"]),
    acl: Spec::acl(&["keyspace", "write", "slow"]),
    keys: (1, 2, 1),
    group: "generic",
    since: "1.0.0",
    summary: "Rename a key",
    complexity: "O(1)",
    parse: Rename::parse_rename,
    // A list or sorted set landing on the destination serves the clients blocked there.
    unblocks: true,
    ..Spec::BASE
};

/// RENAMENX's declaration.
pub const SPEC_RENAMENX: Spec = Spec {
    name: "renamenx",
    key_specs: &[
        KeySpec {
            flags: Spec::key_flags(&["RW", "access", "delete"]),
            index: 1,
            notes: "",
            find: FindKeys::Range(0, 1, 0),
        },
        KeySpec {
            flags: Spec::key_flags(&["OW", "insert"]),
            index: 2,
            notes: "",
            find: FindKeys::Range(0, 1, 0),
        },
    ],
    arity: 3,
    flags: Spec::flags(&["write", "fast"]),
    acl: Spec::acl(&["keyspace", "write", "fast"]),
    keys: (1, 2, 1),
    group: "generic",
    since: "1.0.0",
    summary: "Rename a key, only if the new key does not exist",
    complexity: "O(1)",
    parse: Rename::parse_renamenx,
    // A list or sorted set landing on the destination serves the clients blocked there.
    unblocks: true,
    ..Spec::BASE
};

/// RENAME / RENAMENX.
#[derive(Debug, PartialEq, Eq)]
pub struct Rename {
    src: Bytes,
    dst: Bytes,
    nx: bool,
}

impl Rename {
    fn parse(args: &mut Args, nx: bool) -> Result<Parsed, CmdError> {
        let (src, dst) = (args.next()?, args.next()?);
        args.finish()?;
        Parsed::write(Rename { src, dst, nx })
    }

    fn parse_rename(args: &mut Args) -> Result<Parsed, CmdError> {
        Rename::parse(args, false)
    }

    fn parse_renamenx(args: &mut Args) -> Result<Parsed, CmdError> {
        Rename::parse(args, true)
    }
}

impl WriteCmd for Rename {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let renamed = w.rename(cx.db, &self.src, &self.dst, self.nx)?;
        if renamed && self.src != self.dst {
            w.notify(
                relis::events::class::GENERIC,
                "rename_from",
                cx.db,
                &self.src,
            );
            w.notify(relis::events::class::GENERIC, "rename_to", cx.db, &self.dst);
        }
        Ok(if self.nx {
            Frame::Integer(renamed as i64)
        } else {
            Frame::ok()
        })
    }
}
