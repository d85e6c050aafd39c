//! XREAD [COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...] — the entries
//! after each id (`$`: after the stream's last id at the time of the call), from every stream
//! that has some; with BLOCK, waits for an XADD when none has.
//! <https://redis.io/commands/xread/>
//!
//! Without BLOCK it runs on a reader. With BLOCK it first runs on the writer; when nothing is
//! there the client waits (holding no thread, see `crate::blocking`) until an XADD to one of its
//! keys (from any connection, a script, MULTI) serves it in the same transaction, with the
//! entries of the first of its keys (in the order given) that has new ones, as
//! `[[key, entries]]` (a one-entry map in RESP3); or until the timeout (milliseconds, 0 =
//! forever), which replies a null array (`*-1`, `_` in RESP3). Inside MULTI it does not block.
//! From a script BLOCK is refused, as Redis refuses it.
//!
//! As Redis does, each key's type is checked before its id is parsed, and `$` is resolved
//! once, at the first attempt.

use super::{entries_frame, parse_strict_id, ReadArgs};
use crate::args::Args;
use crate::blocking::{Served, TryServe};
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Cx, FindKeys, KeySpec, Parsed, ReadCmd, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use parking_lot::Mutex;
use relis::{StreamEntry, StreamId};
use resp::{Frame, Protocol};
use std::time::Duration;

/// XREAD's declaration.
pub const SPEC: Spec = Spec {
    name: "xread",
    arity: -4,
    flags: Spec::flags(&["readonly", "blocking", "movablekeys"]),
    acl: Spec::acl(&["read", "stream", "slow", "blocking"]),
    keys: (0, 0, 0),
    group: "stream",
    since: "5.0.0",
    summary: "Return never seen elements in multiple streams, with IDs greater than the ones reported by the caller for each stream. Can block.",
    complexity: "For each stream mentioned: O(N) with N being the number of elements being returned, it means that XREAD-ing with a fixed COUNT is O(1). Note that when the BLOCK option is used, XADD will pay O(M) time in order to serve the M clients blocked on the stream getting new data.",
    parse: XRead::parse,
    key_flags: Spec::key_flags(&["RO", "access"]),
    find_keys: Some(xread_keys),
    key_specs: &[KeySpec {
        flags: Spec::key_flags(&["RO", "access"]),
        index: 1,
        notes: "",
        find: FindKeys::AfterKeyword("STREAMS", -1, 1, 2),
    }],
    ..Spec::BASE
};

/// Redis's `xreadGetKeys`: after the options, the first half of what follows STREAMS.
pub fn xread_keys(argv: &[Bytes]) -> Vec<usize> {
    let mut i = 1;
    let mut streams = None;
    while i < argv.len() {
        let a = &argv[i];
        if a.eq_ignore_ascii_case(b"block") || a.eq_ignore_ascii_case(b"count") {
            i += 2;
        } else if a.eq_ignore_ascii_case(b"group") {
            i += 3;
        } else if a.eq_ignore_ascii_case(b"noack") {
            i += 1;
        } else if a.eq_ignore_ascii_case(b"streams") {
            streams = Some(i);
            break;
        } else {
            break;
        }
    }
    let Some(at) = streams else {
        return Vec::new();
    };
    let n = argv.len() - at - 1;
    if n == 0 || !n.is_multiple_of(2) {
        return Vec::new();
    }
    (at + 1..=at + n / 2).collect()
}

/// XREAD.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XRead {
    count: u64,
    /// `None`: no BLOCK; `Some(None)`: BLOCK 0 (forever).
    block: Option<Option<Duration>>,
    keys: Vec<Bytes>,
    ids: Vec<Bytes>,
}

impl XRead {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let x = XRead::from_args(args)?;
        if x.block.is_some() {
            Parsed::conn(x)
        } else {
            Parsed::read(x)
        }
    }

    fn from_args(args: &mut Args) -> Result<XRead, CmdError> {
        let r = ReadArgs::parse(args, false)?;
        Ok(XRead {
            count: r.count,
            block: r.block,
            keys: r.keys,
            ids: r.ids,
        })
    }

    /// Each key's id to read after, checking each key's type first (Redis's order).
    fn resolve(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Vec<StreamId>, CmdError> {
        let mut out = Vec::with_capacity(self.keys.len());
        for (key, id) in self.keys.iter().zip(&self.ids) {
            let meta = match r.stream_meta(cx.db, key) {
                Err(relis::Error::WrongType) => return Err(CmdError::WrongType),
                m => m?,
            };
            out.push(match id.as_ref() {
                b"$" => meta.map(|m| m.last_id).unwrap_or_default(),
                b">" => return Err(CmdError::XREAD_GT_ID),
                id => parse_strict_id(id)?,
            });
        }
        Ok(out)
    }

    /// The streams with entries after their ids: (key, entries). A blocked reader being served
    /// reads only the `ready` stream, and passes it over if it is not a stream (any more).
    fn read(
        &self,
        r: &relis::Reader<'_>,
        cx: &Cx,
        ids: &[StreamId],
        ready: Option<&Bytes>,
    ) -> Result<Vec<(Bytes, Vec<StreamEntry>)>, CmdError> {
        let mut out = Vec::new();
        for (key, after) in self.keys.iter().zip(ids) {
            if ready.is_some_and(|k| k != key) {
                continue;
            }
            let found = match r.xread_after(cx.db, key, *after, self.count) {
                Err(relis::Error::WrongType) if ready.is_some() => continue,
                f => f?,
            };
            if let Some(entries) = found {
                out.push((key.clone(), entries));
                if ready.is_some() {
                    break;
                }
            }
        }
        Ok(out)
    }

    /// The reply: an array of `[key, entries]` (a map in RESP3); a null array when empty.
    fn reply(proto: Protocol, found: Vec<(Bytes, Vec<StreamEntry>)>) -> Frame {
        if found.is_empty() {
            return Frame::NullArray;
        }
        let pairs = found
            .into_iter()
            .map(|(k, e)| (Frame::Bulk(k), entries_frame(e)));
        match proto {
            Protocol::Resp3 => Frame::Map(pairs.collect()),
            _ => Frame::Array(pairs.map(|(k, e)| Frame::Array(vec![k, e])).collect()),
        }
    }

    fn run(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let ids = self.resolve(r, cx)?;
        let found = self.read(r, cx, &ids, None)?;
        for key in &self.keys {
            cx.hit(key, found.iter().any(|(k, _)| k == key));
        }
        Ok(XRead::reply(cx.proto, found))
    }
}

impl ReadCmd for XRead {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        self.run(r, cx)
    }
}

impl ConnCmd for XRead {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let timeout = self.block.flatten();
            let watched = self.keys.clone();
            // The ids to read after, fixed at the first attempt (`$` is "from now on").
            let resolved: Mutex<Option<Vec<StreamId>>> = Mutex::new(None);
            let serve: TryServe = Box::new(move |w, cx: &Cx, ready| {
                let mut slot = resolved.lock();
                if slot.is_none() {
                    *slot = Some(self.resolve(w, cx)?);
                }
                let ids = slot.as_deref().unwrap_or_default();
                let found = self.read(w, cx, ids, ready)?;
                if found.is_empty() {
                    return Ok(None);
                }
                Ok(Some(Served {
                    reply: XRead::reply(cx.proto, found),
                    touched: Vec::new(),
                }))
            });
            c.block_on(watched, timeout, serve, Frame::NullArray).await
        })
    }

    fn in_transaction(&mut self) -> Option<Box<dyn WriteCmd>> {
        Some(Box::new(XReadNow(self.clone())))
    }
}

/// XREAD BLOCK inside MULTI: reads at once, or replies a null array.
struct XReadNow(XRead);

impl WriteCmd for XReadNow {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        self.0.run(w, cx)
    }

    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_keys() {
        let p = |line| XRead::from_args(&mut super::super::args_of("xread", line));
        let x = p("count 5 block 0 streams a b 0 $").unwrap();
        assert_eq!((x.count, x.block, x.keys.len()), (5, Some(None), 2));
        assert_eq!(
            p("streams a b 0"),
            Err(CmdError::err(
                "Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."
            ))
        );
        assert_eq!(p("count 1 x 2"), Err(CmdError::Syntax));
        assert_eq!(
            p("block -1 streams a 0"),
            Err(CmdError::err("timeout is negative"))
        );
        assert_eq!(
            p("block 1.5 streams a 0"),
            Err(CmdError::err("timeout is not an integer or out of range"))
        );
        let argv: Vec<Bytes> = "xread count 2 block 5 streams a b 0 0"
            .split(' ')
            .map(|s| Bytes::copy_from_slice(s.as_bytes()))
            .collect();
        assert_eq!(xread_keys(&argv), vec![6, 7]);
    }
}
