//! XINFO STREAM key [FULL [COUNT count]] / GROUPS key / CONSUMERS key group / HELP — what a
//! stream, its groups and their consumers hold, in Redis 7.0's layout (a map in RESP3), with
//! 7.0's `entries-read` and `lag` (nil where Redis cannot know them).
//! <https://redis.io/commands/xinfo/>
//!
//! `radix-tree-keys` and `radix-tree-nodes` describe Redis's memory layout, which Relis does
//! not have: they are given as a stream that only grew by XADD would have them in Redis (a
//! node per 100 entries, one more tree node than nodes).

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use relis::StreamId;
use resp::Frame;

/// XINFO's declaration.
pub const SPEC: Spec = Spec {
    name: "xinfo",
    arity: -2,
    flags: Spec::flags(&[]),
    acl: Spec::acl(&["slow"]),
    keys: (0, 0, 0),
    group: "stream",
    since: "5.0.0",
    summary: "A container for stream introspection commands",
    complexity: "Depends on subcommand.",
    subcommands: &[SPEC_CONSUMERS, SPEC_GROUPS, SPEC_STREAM, SPEC_HELP],
    ..Spec::BASE
};

const SUB: Spec = Spec {
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "stream", "slow"]),
    keys: (2, 2, 1),
    group: "stream",
    since: "5.0.0",
    complexity: "O(1)",
    key_flags: Spec::key_flags(&["RO", "access"]),
    ..Spec::BASE
};

/// XINFO CONSUMERS's declaration.
pub const SPEC_CONSUMERS: Spec = Spec {
    name: "xinfo|consumers",
    arity: 4,
    summary: "List the consumers in a consumer group",
    tips: &["nondeterministic_output"],
    parse: |a| XInfo::parse(a, What::Consumers),
    ..SUB
};

/// XINFO GROUPS's declaration.
pub const SPEC_GROUPS: Spec = Spec {
    name: "xinfo|groups",
    arity: 3,
    summary: "List the consumer groups of a stream",
    parse: |a| XInfo::parse(a, What::Groups),
    ..SUB
};

/// XINFO STREAM's declaration.
pub const SPEC_STREAM: Spec = Spec {
    name: "xinfo|stream",
    arity: -3,
    summary: "Get information about a stream",
    parse: |a| XInfo::parse(a, What::Stream),
    ..SUB
};

/// XINFO HELP's declaration.
pub const SPEC_HELP: Spec = Spec {
    name: "xinfo|help",
    arity: 2,
    flags: Spec::flags(&["loading", "stale"]),
    acl: Spec::acl(&["stream", "slow"]),
    keys: (0, 0, 0),
    key_flags: Spec::key_flags(&[]),
    summary: "Show helpful text about the different subcommands",
    parse: |a| {
        a.finish()?;
        Parsed::read(XInfo {
            what: What::Help,
            key: Bytes::new(),
            rest: Vec::new(),
            usage: a.subcommand_syntax(),
        })
    },
    ..SUB
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum What {
    Stream,
    Groups,
    Consumers,
    Help,
}

/// XINFO; STREAM's options are read after the key is looked up, as in Redis.
#[derive(Debug)]
pub struct XInfo {
    what: What,
    key: Bytes,
    rest: Vec<Bytes>,
    /// The error for a wrong shape, naming the subcommand as sent.
    usage: CmdError,
}

impl XInfo {
    fn parse(args: &mut Args, what: What) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let rest = args.rest();
        let usage = args.subcommand_syntax();
        Parsed::read(XInfo {
            what,
            key,
            rest,
            usage,
        })
    }
}

fn id(i: StreamId) -> Frame {
    Frame::Bulk(Bytes::from(i.to_string()))
}

fn field(name: &'static str, v: Frame) -> (Frame, Frame) {
    (Frame::Bulk(Bytes::from_static(name.as_bytes())), v)
}

fn opt_int(v: Option<i64>) -> Frame {
    v.map_or(Frame::Null, Frame::Integer)
}

/// A map in RESP3, a flat array of names and values in RESP2 (the server's encoder flattens
/// `Frame::Map` for RESP2 clients).
fn map(fields: Vec<(Frame, Frame)>) -> Frame {
    Frame::Map(fields)
}

impl ReadCmd for XInfo {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        if self.what == What::Help {
            return Ok(crate::cmd::server::help(
                "XINFO",
                &[
                    "CONSUMERS <key> <groupname>",
                    "    Show consumers of <groupname>.",
                    "GROUPS <key>",
                    "    Show the stream consumer groups.",
                    "STREAM <key> [FULL [COUNT <count>]",
                    "    Show information about the stream.",
                ],
            ));
        }
        let wrong = |e: relis::Error| match e {
            relis::Error::WrongType => CmdError::WrongType,
            e => e.into(),
        };
        let (db, key) = (cx.db, &self.key[..]);
        let info = r.xinfo_stream(db, key).map_err(wrong)?;
        cx.hit(key, info.is_some());
        let (s, first_id, groups, first, last) = info.ok_or(CmdError::NoSuchKey)?;
        match self.what {
            What::Groups => {
                let groups = r.xinfo_groups(db, key)?.unwrap_or_default();
                Ok(Frame::Array(
                    groups
                        .into_iter()
                        .map(|g| {
                            map(vec![
                                field("name", Frame::Bulk(g.name)),
                                field("consumers", Frame::Integer(g.consumers as i64)),
                                field("pending", Frame::Integer(g.pending as i64)),
                                field("last-delivered-id", id(g.last_delivered)),
                                field("entries-read", opt_int(g.entries_read)),
                                field("lag", opt_int(g.lag)),
                            ])
                        })
                        .collect(),
                ))
            }
            What::Consumers => {
                let group = self.rest.first().cloned().unwrap_or_default();
                let consumers = r
                    .xinfo_consumers(db, key, &group)?
                    .flatten()
                    .ok_or_else(|| CmdError::no_group_for_key(key, &group))?;
                let now = r.now_ms();
                Ok(Frame::Array(
                    consumers
                        .into_iter()
                        .map(|(name, pending, seen)| {
                            map(vec![
                                field("name", Frame::Bulk(name)),
                                field("pending", Frame::Integer(pending as i64)),
                                field("idle", Frame::Integer((now - seen).max(0))),
                            ])
                        })
                        .collect(),
                ))
            }
            _ => {
                let syntax = || self.usage.clone();
                let full = match self.rest.len() {
                    0 => None,
                    1 | 3 => {
                        if !self.rest[0].eq_ignore_ascii_case(b"full") {
                            return Err(syntax());
                        }
                        let mut count = 10;
                        if self.rest.len() == 3 {
                            if !self.rest[1].eq_ignore_ascii_case(b"count") {
                                return Err(syntax());
                            }
                            let n = crate::args::parse_i64(&self.rest[2])?;
                            count = if n < 0 { 10 } else { n as u64 };
                        }
                        Some(count)
                    }
                    _ => return Err(syntax()),
                };
                let nodes = s.length.div_ceil(relis::TRIM_RUN) as i64;
                let mut out = vec![
                    field("length", Frame::Integer(s.length as i64)),
                    field("radix-tree-keys", Frame::Integer(nodes)),
                    field("radix-tree-nodes", Frame::Integer(nodes + 1)),
                    field("last-generated-id", id(s.last_id)),
                    field("max-deleted-entry-id", id(s.max_deleted_id)),
                    field("entries-added", Frame::Integer(s.entries_added as i64)),
                    field("recorded-first-entry-id", id(first_id)),
                ];
                let Some(count) = full else {
                    let entry =
                        |e: Option<relis::StreamEntry>| e.map_or(Frame::Null, super::entry_frame);
                    out.push(field("groups", Frame::Integer(groups as i64)));
                    out.push(field("first-entry", entry(first)));
                    out.push(field("last-entry", entry(last)));
                    return Ok(map(out));
                };
                let entries = r
                    .xrange(db, key, StreamId::MIN, StreamId::MAX, count, false)?
                    .unwrap_or_default();
                out.push(field("entries", super::entries_frame(entries)));
                let mut gs = Vec::new();
                for g in r.xinfo_groups(db, key)?.unwrap_or_default() {
                    let pel = r.xinfo_pel(db, key, &g.name, None, count)?;
                    let pending = pel
                        .into_iter()
                        .map(|(i, c, at, n)| {
                            Frame::Array(vec![
                                id(i),
                                Frame::Bulk(c),
                                Frame::Integer(at),
                                Frame::Integer(n as i64),
                            ])
                        })
                        .collect();
                    let mut cs = Vec::new();
                    for (name, n, seen) in r
                        .xinfo_consumers(db, key, &g.name)?
                        .flatten()
                        .unwrap_or_default()
                    {
                        let own = r.xinfo_pel(db, key, &g.name, Some(&name), count)?;
                        cs.push(map(vec![
                            field("name", Frame::Bulk(name)),
                            field("seen-time", Frame::Integer(seen)),
                            field("pel-count", Frame::Integer(n as i64)),
                            field(
                                "pending",
                                Frame::Array(
                                    own.into_iter()
                                        .map(|(i, _, at, n)| {
                                            Frame::Array(vec![
                                                id(i),
                                                Frame::Integer(at),
                                                Frame::Integer(n as i64),
                                            ])
                                        })
                                        .collect(),
                                ),
                            ),
                        ]));
                    }
                    gs.push(map(vec![
                        field("name", Frame::Bulk(g.name)),
                        field("last-delivered-id", id(g.last_delivered)),
                        field("entries-read", opt_int(g.entries_read)),
                        field("lag", opt_int(g.lag)),
                        field("pel-count", Frame::Integer(g.pending as i64)),
                        field("pending", Frame::Array(pending)),
                        field("consumers", Frame::Array(cs)),
                    ]));
                }
                out.push(field("groups", Frame::Array(gs)));
                Ok(map(out))
            }
        }
    }
}
