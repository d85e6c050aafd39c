//! OBJECT ENCODING | FREQ | IDLETIME | REFCOUNT key, and OBJECT HELP — inspect how a key's value
//! is kept. <https://redis.io/commands/object/>
//!
//! Every subcommand replies nil for a missing key. Relis's answers:
//! - ENCODING: the encoding Redis 7.0 would use for the value (see `relis::Reader::object`).
//! - REFCOUNT: 2147483647 for the integers 0..9999 that Redis shares, 1 otherwise.
//! - IDLETIME: seconds since the key was last *written*. Relis does not record reads (they run
//!   on read-only snapshots), so unlike Redis a GET or TOUCH does not reset it.
//! - FREQ: without an LFU `maxmemory-policy` it is Redis's error. With one, it is the counter
//!   Redis's LFU gives a key that was written at its last write and not read since (the initial
//!   5, decayed by one every `lfu-decay-time` minutes), since reads are not recorded.

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// OBJECT's declaration (a container: the dispatcher runs its subcommands).
pub const SPEC: Spec = Spec {
    name: "object",
    arity: -2,
    flags: Spec::flags(&[]),
    acl: Spec::acl(&["slow"]),
    keys: (0, 0, 0),
    group: "generic",
    since: "2.2.3",
    summary: "A container for object introspection commands",
    complexity: "Depends on subcommand.",
    // In the order redis-server lists them (COMMAND INFO, COMMAND DOCS).
    subcommands: &[
        SPEC_FREQ,
        SPEC_HELP,
        SPEC_ENCODING,
        SPEC_IDLETIME,
        SPEC_REFCOUNT,
    ],
    ..Spec::BASE
};

/// OBJECT HELP's declaration.
pub const SPEC_HELP: Spec = Spec {
    name: "object|help",
    arity: 2,
    flags: Spec::flags(&["loading", "stale"]),
    acl: Spec::acl(&["keyspace", "slow"]),
    keys: (0, 0, 0),
    group: "generic",
    since: "6.2.0",
    summary: "Show helpful text about the different subcommands",
    complexity: "O(1)",
    parse: Object::parse_help,
    ..Spec::BASE
};

/// OBJECT FREQ's declaration.
pub const SPEC_FREQ: Spec = Spec {
    name: "object|freq",
    tips: &["nondeterministic_output"],
    key_flags: Spec::key_flags(&["RO"]),
    arity: 3,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["keyspace", "read", "slow"]),
    keys: (2, 2, 1),
    group: "generic",
    since: "4.0.0",
    summary: "Get the logarithmic access frequency counter of a Redis object",
    complexity: "O(1)",
    parse: Object::parse_freq,
    ..Spec::BASE
};

/// OBJECT ENCODING's declaration.
pub const SPEC_ENCODING: Spec = Spec {
    name: "object|encoding",
    tips: &["nondeterministic_output"],
    key_flags: Spec::key_flags(&["RO"]),
    arity: 3,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["keyspace", "read", "slow"]),
    keys: (2, 2, 1),
    group: "generic",
    since: "2.2.3",
    summary: "Inspect the internal encoding of a Redis object",
    complexity: "O(1)",
    parse: Object::parse_encoding,
    ..Spec::BASE
};

/// OBJECT IDLETIME's declaration.
pub const SPEC_IDLETIME: Spec = Spec {
    name: "object|idletime",
    tips: &["nondeterministic_output"],
    key_flags: Spec::key_flags(&["RO"]),
    arity: 3,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["keyspace", "read", "slow"]),
    keys: (2, 2, 1),
    group: "generic",
    since: "2.2.3",
    summary: "Get the time since a Redis object was last accessed",
    complexity: "O(1)",
    parse: Object::parse_idletime,
    ..Spec::BASE
};

/// OBJECT REFCOUNT's declaration.
pub const SPEC_REFCOUNT: Spec = Spec {
    name: "object|refcount",
    tips: &["nondeterministic_output"],
    key_flags: Spec::key_flags(&["RO"]),
    arity: 3,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["keyspace", "read", "slow"]),
    keys: (2, 2, 1),
    group: "generic",
    since: "2.2.3",
    summary: "Get the number of references to the value of the key",
    complexity: "O(1)",
    parse: Object::parse_refcount,
    ..Spec::BASE
};

/// Redis 7.0's OBJECT HELP text, line for line.
const HELP: &[&str] = &[
    "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
    "HELP",
    "    Prints this help.",
];

/// Redis's OBJ_SHARED_REFCOUNT (INT_MAX).
const SHARED_REFCOUNT: i64 = 2_147_483_647;

/// Redis's LFU_INIT_VAL: the counter of a new key.
const LFU_INIT_VAL: i64 = 5;

/// What OBJECT reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum What {
    Help,
    Encoding,
    Freq,
    IdleTime,
    RefCount,
}

/// An OBJECT subcommand.
#[derive(Debug, PartialEq, Eq)]
pub struct Object {
    what: What,
    key: Bytes,
}

impl Object {
    fn parse(args: &mut Args, what: What) -> Result<Parsed, CmdError> {
        let key = if what == What::Help {
            Bytes::new()
        } else {
            args.next()?
        };
        args.finish()?;
        Parsed::read(Object { what, key })
    }

    fn parse_help(args: &mut Args) -> Result<Parsed, CmdError> {
        Object::parse(args, What::Help)
    }

    fn parse_freq(args: &mut Args) -> Result<Parsed, CmdError> {
        Object::parse(args, What::Freq)
    }

    fn parse_encoding(args: &mut Args) -> Result<Parsed, CmdError> {
        Object::parse(args, What::Encoding)
    }

    fn parse_idletime(args: &mut Args) -> Result<Parsed, CmdError> {
        Object::parse(args, What::IdleTime)
    }

    fn parse_refcount(args: &mut Args) -> Result<Parsed, CmdError> {
        Object::parse(args, What::RefCount)
    }
}

/// The eviction settings OBJECT's answers depend on.
struct Eviction {
    lfu: bool,
    /// Redis stops sharing integers when maxmemory is set with an LRU or LFU policy.
    no_shared_integers: bool,
    lfu_decay_minutes: i64,
}

fn eviction(cx: &Cx) -> Eviction {
    let c = cx.server.config.read();
    let policy = c.get("maxmemory-policy").unwrap_or_default();
    let maxmemory = c
        .get("maxmemory")
        .and_then(|m| crate::config::memory(&m).ok())
        .unwrap_or(0);
    let lfu = policy.contains("lfu");
    Eviction {
        lfu,
        no_shared_integers: maxmemory > 0 && (lfu || policy.contains("lru")),
        lfu_decay_minutes: c
            .get("lfu-decay-time")
            .and_then(|v| v.parse().ok())
            .unwrap_or(1),
    }
}

impl ReadCmd for Object {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        if self.what == What::Help {
            return Ok(Frame::Array(
                HELP.iter()
                    .map(|l| Frame::Simple(Bytes::from_static(l.as_bytes())))
                    .collect(),
            ));
        }
        let info = r.object(cx.db, &self.key)?;
        cx.hit(&self.key, info.is_some());
        let Some(info) = info else {
            return Ok(Frame::Null);
        };
        // The later of the last write and the last TOUCH.
        let accessed = cx
            .server
            .touched
            .last(cx.db, &self.key)
            .map_or(info.meta.mtime, |t| t.max(info.meta.mtime));
        let idle_ms = (r.now_ms() - accessed).max(0);
        Ok(match self.what {
            What::Encoding => Frame::Bulk(Bytes::from_static(info.encoding.as_bytes())),
            What::RefCount => {
                let shared = info.shared_integer && !eviction(cx).no_shared_integers;
                Frame::Integer(if shared { SHARED_REFCOUNT } else { 1 })
            }
            What::IdleTime => {
                if eviction(cx).lfu {
                    return Err(CmdError::OBJECT_LFU);
                }
                Frame::Integer(idle_ms / 1000)
            }
            What::Freq => {
                let ev = eviction(cx);
                if !ev.lfu {
                    return Err(CmdError::OBJECT_NO_LFU);
                }
                let periods = if ev.lfu_decay_minutes > 0 {
                    idle_ms / 60_000 / ev.lfu_decay_minutes
                } else {
                    0
                };
                Frame::Integer((LFU_INIT_VAL - periods).max(0))
            }
            What::Help => unreachable!("answered above"),
        })
    }
}
