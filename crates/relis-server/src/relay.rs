//! What nodes sharing one PostgreSQL tell each other (backend postgres, issue 19), over the
//! engine's bus (`relis::postgres::Bus`, LISTEN/NOTIFY): published messages, committed
//! keyspace events, keys made ready for blocked clients, and for client-side caching which
//! nodes have tracking clients and the keys a committed write changed. Each node delivers its own at
//! once, as with the SQLite backend, and the bus skips a node's own messages, so every
//! subscriber gets each message once.
//!
//! Encoding (the bus carries bytes): a tag byte, then fields, each byte string prefixed by its
//! length as 4 bytes little endian, each integer 4 bytes little endian.

use bytes::Bytes;

/// A message between nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Msg {
    /// PUBLISH (`shard` false) or SPUBLISH.
    Publish {
        /// SPUBLISH.
        shard: bool,
        /// The channel.
        channel: Bytes,
        /// The message.
        message: Bytes,
    },
    /// A committed transaction's keyspace events: (class, database, event name, key).
    Events(Vec<(u32, u32, Bytes, Bytes)>),
    /// Keys a committed write may have fed blocked clients with: (database, key).
    Ready(Vec<(u32, Bytes)>),
    /// Any key of the databases may have been fed (SWAPDB): every key a client is blocked on
    /// there is tried again.
    ReadyDbs(Vec<u32>),
    /// The sending node has clients with CLIENT TRACKING on (sent when the first turns it on,
    /// then every second while any does): the others send it what their writes change.
    Tracking,
    /// What a committed write changed, for the receiving node's tracking clients: (database,
    /// key, whether a whole database was flushed, the key then empty).
    Invalidate(Vec<(u32, Bytes, bool)>),
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

/// Reads fields in order; every read fails past the end.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn int(&mut self) -> Option<u32> {
        let (head, rest) = self.0.split_first_chunk::<4>()?;
        self.0 = rest;
        Some(u32::from_le_bytes(*head))
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.int()? as usize;
        if n > self.0.len() {
            return None;
        }
        let (b, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(b)
    }
}

impl Msg {
    /// The message's bytes on the bus.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            Msg::Publish {
                shard,
                channel,
                message,
            } => {
                out.push(if *shard { b'S' } else { b'P' });
                put_bytes(&mut out, channel);
                put_bytes(&mut out, message);
            }
            Msg::Events(events) => {
                out.push(b'E');
                for (class, db, event, key) in events {
                    out.extend_from_slice(&class.to_le_bytes());
                    out.extend_from_slice(&db.to_le_bytes());
                    put_bytes(&mut out, event);
                    put_bytes(&mut out, key);
                }
            }
            Msg::Ready(keys) => {
                out.push(b'R');
                for (db, key) in keys {
                    out.extend_from_slice(&db.to_le_bytes());
                    put_bytes(&mut out, key);
                }
            }
            Msg::ReadyDbs(dbs) => {
                out.push(b'D');
                for db in dbs {
                    out.extend_from_slice(&db.to_le_bytes());
                }
            }
            Msg::Tracking => out.push(b'T'),
            Msg::Invalidate(keys) => {
                out.push(b'I');
                for (db, key, flush) in keys {
                    out.extend_from_slice(&u32::from(*flush).to_le_bytes());
                    out.extend_from_slice(&db.to_le_bytes());
                    put_bytes(&mut out, key);
                }
            }
        }
        out
    }

    /// The message of `bytes`, or `None` if they are not one (a node of another version).
    pub fn decode(bytes: &[u8]) -> Option<Msg> {
        let (tag, rest) = bytes.split_first()?;
        let mut c = Cursor(rest);
        let copy = |b: &[u8]| Bytes::copy_from_slice(b);
        match tag {
            b'P' | b'S' => {
                let channel = copy(c.bytes()?);
                let message = copy(c.bytes()?);
                c.0.is_empty().then_some(Msg::Publish {
                    shard: *tag == b'S',
                    channel,
                    message,
                })
            }
            b'E' => {
                let mut events = Vec::new();
                while !c.0.is_empty() {
                    let (class, db) = (c.int()?, c.int()?);
                    events.push((class, db, copy(c.bytes()?), copy(c.bytes()?)));
                }
                Some(Msg::Events(events))
            }
            b'R' => {
                let mut keys = Vec::new();
                while !c.0.is_empty() {
                    let db = c.int()?;
                    keys.push((db, copy(c.bytes()?)));
                }
                Some(Msg::Ready(keys))
            }
            b'D' => {
                let mut dbs = Vec::new();
                while !c.0.is_empty() {
                    dbs.push(c.int()?);
                }
                Some(Msg::ReadyDbs(dbs))
            }
            b'T' => c.0.is_empty().then_some(Msg::Tracking),
            b'I' => {
                let mut keys = Vec::new();
                while !c.0.is_empty() {
                    let (flush, db) = (c.int()?, c.int()?);
                    keys.push((db, copy(c.bytes()?), flush != 0));
                }
                Some(Msg::Invalidate(keys))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_and_truncations_are_refused() {
        let b = |s: &str| Bytes::copy_from_slice(s.as_bytes());
        for m in [
            Msg::Publish {
                shard: false,
                channel: b("ch"),
                message: Bytes::from_static(b"\0\xff"),
            },
            Msg::Publish {
                shard: true,
                channel: b(""),
                message: b("m"),
            },
            Msg::Events(vec![(8, 0, b("set"), b("k")), (16, 3, b("lpush"), b(""))]),
            Msg::Ready(vec![(0, b("q")), (15, b("r"))]),
            Msg::ReadyDbs(vec![0, 15]),
            Msg::Events(Vec::new()),
            Msg::Tracking,
            Msg::Invalidate(vec![(0, b("k"), false), (3, b(""), true)]),
        ] {
            let e = m.encode();
            assert_eq!(Msg::decode(&e), Some(m.clone()));
            if e.len() > 1 {
                assert_eq!(Msg::decode(&e[..e.len() - 1]), None, "{m:?}");
            }
        }
        assert_eq!(Msg::decode(b""), None);
        assert_eq!(Msg::decode(b"X"), None);
    }
}
