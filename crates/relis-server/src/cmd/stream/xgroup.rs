//! XGROUP CREATE key group id|$ [MKSTREAM] [ENTRIESREAD n] / SETID key group id|$
//! [ENTRIESREAD n] / DESTROY key group / CREATECONSUMER key group consumer / DELCONSUMER key
//! group consumer / HELP — consumer groups and their consumers.
//! <https://redis.io/commands/xgroup/>
//!
//! Checks run in Redis's order (`xgroupCommand`): CREATE's options, then the key (it must
//! exist, except for CREATE with MKSTREAM), then the group (SETID, CREATECONSUMER and
//! DELCONSUMER need it), then the subcommand's own arguments.

use super::parse_strict_id;
use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::GroupStart;
use resp::Frame;

/// XGROUP's declaration.
pub const SPEC: Spec = Spec {
    name: "xgroup",
    arity: -2,
    flags: Spec::flags(&[]),
    acl: Spec::acl(&["slow"]),
    keys: (0, 0, 0),
    group: "stream",
    since: "5.0.0",
    summary: "A container for consumer groups commands",
    complexity: "Depends on subcommand.",
    subcommands: &[
        SPEC_CREATE,
        SPEC_CREATECONSUMER,
        SPEC_SETID,
        SPEC_DESTROY,
        SPEC_DELCONSUMER,
        SPEC_HELP,
    ],
    ..Spec::BASE
};

const SUB: Spec = Spec {
    flags: Spec::flags(&["write"]),
    acl: Spec::acl(&["write", "stream", "slow"]),
    keys: (2, 2, 1),
    group: "stream",
    since: "5.0.0",
    complexity: "O(1)",
    ..Spec::BASE
};

/// XGROUP CREATE's declaration.
pub const SPEC_CREATE: Spec = Spec {
    name: "xgroup|create",
    arity: -5,
    flags: Spec::flags(&["write", "denyoom"]),
    summary: "Create a consumer group.",
    parse: |a| XGroup::parse(a, Sub::Create),
    key_flags: Spec::key_flags(&["RW", "insert"]),
    ..SUB
};

/// XGROUP CREATECONSUMER's declaration.
pub const SPEC_CREATECONSUMER: Spec = Spec {
    name: "xgroup|createconsumer",
    arity: 5,
    flags: Spec::flags(&["write", "denyoom"]),
    since: "6.2.0",
    summary: "Create a consumer in a consumer group.",
    parse: |a| XGroup::parse(a, Sub::CreateConsumer),
    key_flags: Spec::key_flags(&["RW", "insert"]),
    ..SUB
};

/// XGROUP SETID's declaration.
pub const SPEC_SETID: Spec = Spec {
    name: "xgroup|setid",
    arity: -5,
    summary: "Set a consumer group to an arbitrary last delivered ID value.",
    parse: |a| XGroup::parse(a, Sub::SetId),
    key_flags: Spec::key_flags(&["RW", "update"]),
    ..SUB
};

/// XGROUP DESTROY's declaration.
pub const SPEC_DESTROY: Spec = Spec {
    name: "xgroup|destroy",
    arity: 4,
    summary: "Destroy a consumer group.",
    complexity: "O(N) where N is the number of entries in the group's pending entries list (PEL).",
    parse: |a| XGroup::parse(a, Sub::Destroy),
    key_flags: Spec::key_flags(&["RW", "delete"]),
    ..SUB
};

/// XGROUP DELCONSUMER's declaration.
pub const SPEC_DELCONSUMER: Spec = Spec {
    name: "xgroup|delconsumer",
    arity: 5,
    summary: "Delete a consumer from a consumer group.",
    parse: |a| XGroup::parse(a, Sub::DelConsumer),
    key_flags: Spec::key_flags(&["RW", "delete"]),
    ..SUB
};

/// XGROUP HELP's declaration.
pub const SPEC_HELP: Spec = Spec {
    name: "xgroup|help",
    arity: 2,
    flags: Spec::flags(&["loading", "stale"]),
    acl: Spec::acl(&["stream", "slow"]),
    keys: (0, 0, 0),
    summary: "Show helpful text about the different subcommands",
    parse: |a| {
        a.finish()?;
        Parsed::read(Help)
    },
    ..SUB
};

const HELP: &[&str] = &[
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
];

/// XGROUP HELP.
struct Help;

impl ReadCmd for Help {
    fn exec(&self, _: &relis::Reader<'_>, _: &Cx) -> Result<Frame, CmdError> {
        Ok(crate::cmd::server::help("XGROUP", HELP))
    }

    fn inline(&self) -> bool {
        true
    }
}

/// Which subcommand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sub {
    Create,
    SetId,
    Destroy,
    CreateConsumer,
    DelConsumer,
}

/// A parsed XGROUP subcommand; what only the key's state can decide waits for `exec`.
#[derive(Debug)]
pub struct XGroup {
    sub: Sub,
    key: Bytes,
    group: Bytes,
    /// The id (CREATE, SETID) or the consumer (CREATECONSUMER, DELCONSUMER).
    arg: Option<Bytes>,
    mkstream: bool,
    entries_read: Option<i64>,
    /// A shape Redis refuses after its key and group checks.
    bad_shape: bool,
    /// The error for a wrong shape, naming the subcommand as sent.
    usage: CmdError,
}

/// ENTRIESREAD's value: an integer, positive or -1 (unknown).
fn entries_read(arg: &[u8]) -> Result<Option<i64>, CmdError> {
    let n = crate::args::parse_i64(arg)?;
    if n < 0 && n != -1 {
        return Err(CmdError::XGROUP_ENTRIES_READ);
    }
    Ok((n >= 0).then_some(n))
}

impl XGroup {
    fn parse(args: &mut Args, sub: Sub) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let group = args.next()?;
        let mut rest = args.rest();
        let mut x = XGroup {
            sub,
            key,
            group,
            arg: None,
            mkstream: false,
            entries_read: None,
            bad_shape: false,
            usage: args.subcommand_syntax(),
        };
        if !rest.is_empty() {
            x.arg = Some(rest.remove(0));
        }
        match sub {
            Sub::Create => {
                // Options are read before the key is looked at (argc 5..=8 in Redis).
                if rest.len() > 3 {
                    return Err(args.subcommand_syntax());
                }
                let mut i = 0;
                while i < rest.len() {
                    if rest[i].eq_ignore_ascii_case(b"mkstream") {
                        x.mkstream = true;
                        i += 1;
                    } else if rest[i].eq_ignore_ascii_case(b"entriesread") && i + 1 < rest.len() {
                        x.entries_read = entries_read(&rest[i + 1])?;
                        i += 2;
                    } else {
                        return Err(args.subcommand_syntax());
                    }
                }
            }
            Sub::SetId => match rest.len() {
                0 => {}
                2 if rest[0].eq_ignore_ascii_case(b"entriesread") => {
                    x.entries_read = Some(rest[1].clone())
                        .map(|a| entries_read(&a))
                        .transpose()?
                        .flatten();
                }
                _ => x.bad_shape = true,
            },
            _ => {}
        }
        Parsed::write(x)
    }

    fn start(&self) -> Result<GroupStart, CmdError> {
        match self.arg.as_deref() {
            Some(b"$") => Ok(GroupStart::Last),
            Some(a) => Ok(GroupStart::Id(parse_strict_id(a)?)),
            None => Err(self.usage.clone()),
        }
    }

    fn nogroup(&self) -> CmdError {
        CmdError::no_group_for_key(&self.key, &self.group)
    }
}

impl WriteCmd for XGroup {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let ok = || Frame::Simple(Bytes::from_static(b"OK"));
        let db = cx.db;
        let exists = match w.stream_meta(db, &self.key) {
            Err(relis::Error::WrongType) => return Err(CmdError::WrongType),
            m => m?.is_some(),
        };
        if !(exists || (self.sub == Sub::Create && self.mkstream)) {
            return Err(CmdError::XGROUP_NO_KEY);
        }
        let has_group = exists && w.stream_group_exists(db, &self.key, &self.group)?;
        if !has_group
            && matches!(
                self.sub,
                Sub::SetId | Sub::CreateConsumer | Sub::DelConsumer
            )
        {
            return Err(self.nogroup());
        }
        let stream = relis::events::class::STREAM;
        match self.sub {
            Sub::Create => {
                let start = self.start()?;
                w.xgroup_create(
                    db,
                    &self.key,
                    &self.group,
                    start,
                    self.mkstream,
                    self.entries_read,
                )?;
                w.notify(stream, "xgroup-create", db, &self.key);
                Ok(ok())
            }
            Sub::SetId => {
                if self.bad_shape {
                    return Err(self.usage.clone());
                }
                let start = self.start()?;
                w.xgroup_setid(db, &self.key, &self.group, start, self.entries_read)?;
                w.notify(stream, "xgroup-setid", db, &self.key);
                Ok(ok())
            }
            Sub::Destroy => {
                let gone = w.xgroup_destroy(db, &self.key, &self.group)?;
                if gone {
                    w.notify(stream, "xgroup-destroy", db, &self.key);
                }
                Ok(Frame::Integer(i64::from(gone)))
            }
            Sub::CreateConsumer => {
                let consumer = self.arg.clone().unwrap_or_default();
                let created = w
                    .xgroup_createconsumer(db, &self.key, &self.group, &consumer)?
                    .ok_or_else(|| self.nogroup())?;
                if created {
                    w.notify(stream, "xgroup-createconsumer", db, &self.key);
                }
                Ok(Frame::Integer(i64::from(created)))
            }
            Sub::DelConsumer => {
                let consumer = self.arg.clone().unwrap_or_default();
                let pending = w
                    .xgroup_delconsumer(db, &self.key, &self.group, &consumer)?
                    .ok_or_else(|| self.nogroup())?;
                if pending.is_some() {
                    w.notify(stream, "xgroup-delconsumer", db, &self.key);
                }
                Ok(Frame::Integer(pending.unwrap_or(0) as i64))
            }
        }
    }
}
