//! XREADGROUP GROUP group consumer [COUNT count] [BLOCK milliseconds] [NOACK] STREAMS key
//! [key ...] id [id ...] — reads as a consumer of a group: `>` for entries never delivered to
//! the group (they enter its pending entries list, owned by this consumer, unless NOACK), an id
//! for the consumer's own pending entries after it (its history; an entry deleted since reads
//! as `[id, nil]`). <https://redis.io/commands/xreadgroup/>
//!
//! Checks run in Redis's order: options, then per key its type, its group (`NOGROUP`) and its
//! id. Without BLOCK it runs on the writer; with BLOCK and nothing new for every `>` it waits
//! as XREAD does (see `xread.rs`) until an XADD serves it, its timeout (a null array), or the
//! group is destroyed (`NOGROUP ... no longer exists`). The consumer is created when it is
//! first served, as in Redis 7.0.

use super::{entry_frame, parse_strict_id, ReadArgs};
use crate::args::Args;
use crate::blocking::{Served, TryServe};
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Cx, FindKeys, KeySpec, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::{Delivered, GroupRead};
use resp::{Frame, Protocol};
use std::time::Duration;

/// XREADGROUP's declaration.
pub const SPEC: Spec = Spec {
    name: "xreadgroup",
    arity: -7,
    flags: Spec::flags(&["write", "blocking", "movablekeys"]),
    acl: Spec::acl(&["write", "stream", "slow", "blocking"]),
    keys: (0, 0, 0),
    group: "stream",
    since: "5.0.0",
    summary: "Return new entries from a stream using a consumer group, or access the history of the pending entries for a given consumer. Can block.",
    complexity: "For each stream mentioned: O(M) with M being the number of elements returned. If M is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) time in order to serve the N clients blocked on the stream getting new data.",
    parse: XReadGroup::parse,
    key_flags: Spec::key_flags(&["RO", "access"]),
    find_keys: Some(super::xread::xread_keys),
    key_specs: &[KeySpec {
        flags: Spec::key_flags(&["RO", "access"]),
        index: 4,
        notes: "",
        find: FindKeys::AfterKeyword("STREAMS", -1, 1, 2),
    }],
    ..Spec::BASE
};

/// XREADGROUP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XReadGroup {
    group: Bytes,
    consumer: Bytes,
    count: u64,
    block: Option<Option<Duration>>,
    noack: bool,
    keys: Vec<Bytes>,
    ids: Vec<Bytes>,
}

impl XReadGroup {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let x = XReadGroup::from_args(args)?;
        if x.block.is_some() {
            Parsed::conn(x)
        } else {
            Parsed::write(x)
        }
    }

    fn from_args(args: &mut Args) -> Result<XReadGroup, CmdError> {
        let r = ReadArgs::parse(args, true)?;
        let (group, consumer) = r.group.ok_or(CmdError::XREADGROUP_NO_GROUP_OPTION)?;
        Ok(XReadGroup {
            group,
            consumer,
            count: r.count,
            block: r.block,
            noack: r.noack,
            keys: r.keys,
            ids: r.ids,
        })
    }

    /// Each key's read, checking each key's type and group first (Redis's order).
    fn resolve(&self, w: &relis::Writer<'_>, cx: &Cx) -> Result<Vec<GroupRead>, CmdError> {
        let mut out = Vec::with_capacity(self.keys.len());
        for (key, id) in self.keys.iter().zip(&self.ids) {
            let exists = match w.stream_group_exists(cx.db, key, &self.group) {
                Err(relis::Error::WrongType) => return Err(CmdError::WrongType),
                e => e?,
            };
            if !exists {
                return Err(CmdError::xreadgroup_no_group(key, &self.group));
            }
            out.push(match id.as_ref() {
                b">" => GroupRead::New,
                b"$" => return Err(CmdError::XREADGROUP_DOLLAR),
                id => GroupRead::History(parse_strict_id(id)?),
            });
        }
        Ok(out)
    }

    /// Reads every stream that has something. A blocked reader being served reads only the
    /// `ready` stream, and passes it over if it is not a stream (any more).
    fn read(
        &self,
        w: &mut relis::Writer<'_>,
        cx: &Cx,
        reads: &[GroupRead],
        ready: Option<&Bytes>,
    ) -> Result<Vec<(Bytes, Vec<Delivered>)>, CmdError> {
        let first_only = ready.is_some();
        let mut out = Vec::new();
        for (key, from) in self.keys.iter().zip(reads) {
            if ready.is_some_and(|k| k != key) {
                continue;
            }
            if first_only {
                match w.stream_meta(cx.db, key) {
                    Ok(None) | Err(relis::Error::WrongType) => continue,
                    Err(e) => return Err(e.into()),
                    Ok(Some(_)) => {}
                }
            }
            let got = w.xreadgroup(
                cx.db,
                key,
                &self.group,
                &self.consumer,
                *from,
                self.count,
                self.noack,
            );
            let got = match got {
                Err(relis::Error::WrongType) if first_only => continue,
                g => g?,
            };
            let Some((created, delivered)) = got else {
                if first_only {
                    return Err(CmdError::XREADGROUP_GROUP_GONE);
                }
                continue;
            };
            if created {
                w.notify(
                    relis::events::class::STREAM,
                    "xgroup-createconsumer",
                    cx.db,
                    key,
                );
            }
            // `>` with nothing new is not served; a history read always is.
            if *from == GroupRead::New && delivered.is_empty() {
                continue;
            }
            out.push((key.clone(), delivered));
            if first_only {
                break;
            }
        }
        Ok(out)
    }

    fn reply(proto: Protocol, found: Vec<(Bytes, Vec<Delivered>)>) -> Frame {
        if found.is_empty() {
            return Frame::NullArray;
        }
        let pairs = found.into_iter().map(|(k, d)| {
            let entries = d
                .into_iter()
                .map(|(id, fields)| match fields {
                    Some(fields) => entry_frame(relis::StreamEntry { id, fields }),
                    None => Frame::Array(vec![
                        Frame::Bulk(Bytes::from(id.to_string())),
                        Frame::NullArray,
                    ]),
                })
                .collect();
            (Frame::Bulk(k), Frame::Array(entries))
        });
        match proto {
            Protocol::Resp3 => Frame::Map(pairs.collect()),
            _ => Frame::Array(pairs.map(|(k, e)| Frame::Array(vec![k, e])).collect()),
        }
    }

    fn run(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let reads = self.resolve(w, cx)?;
        let found = self.read(w, cx, &reads, None)?;
        Ok(XReadGroup::reply(cx.proto, found))
    }
}

impl WriteCmd for XReadGroup {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        self.run(w, cx)
    }
}

impl ConnCmd for XReadGroup {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let timeout = self.block.flatten();
            let watched = self.keys.clone();
            let serve: TryServe = Box::new(move |w, cx: &Cx, ready| {
                if ready.is_none() {
                    let reads = self.resolve(w, cx)?;
                    let found = self.read(w, cx, &reads, None)?;
                    // History reads are always served; `>` ones wait for new entries.
                    if found.is_empty() && reads.iter().all(|r| *r == GroupRead::New) {
                        return Ok(None);
                    }
                    return Ok(Some(Served {
                        reply: XReadGroup::reply(cx.proto, found),
                        touched: Vec::new(),
                    }));
                }
                let reads = vec![GroupRead::New; self.keys.len()];
                let found = self.read(w, cx, &reads, ready)?;
                if found.is_empty() {
                    return Ok(None);
                }
                Ok(Some(Served {
                    reply: XReadGroup::reply(cx.proto, found),
                    touched: Vec::new(),
                }))
            });
            c.block_on(watched, timeout, serve, Frame::NullArray).await
        })
    }

    fn in_transaction(&mut self) -> Option<Box<dyn WriteCmd>> {
        Some(Box::new(self.clone()))
    }
}
