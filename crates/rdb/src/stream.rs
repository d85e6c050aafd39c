//! Streams in RDB (`STREAM_LISTPACKS` of Redis 5/6 and `STREAM_LISTPACKS_2` of Redis 7.0):
//! listpack nodes keyed by their master id, the stream's numbers, and the consumer groups with
//! their pending entries and consumers.
//!
//! A node is a listpack: the master entry `count deleted nfields field... 0`, then per entry
//! `flags ms-diff seq-diff [nfields] (field value | value)... lp-count`, where `flags` bit 1
//! marks a deleted entry and bit 2 an entry with the master's fields (values only).

use crate::listpack::{self, Item};
use crate::{put_len, put_string, string2ll, types, Error, Input, Result};
use bytes::Bytes;
use std::collections::{HashMap, HashSet};

/// A stream entry id.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Id {
    /// Milliseconds part.
    pub ms: u64,
    /// Sequence part.
    pub seq: u64,
}

impl Id {
    fn raw(self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.ms.to_be_bytes());
        b[8..].copy_from_slice(&self.seq.to_be_bytes());
        b
    }

    fn from_raw(b: &[u8]) -> Result<Id> {
        if b.len() != 16 {
            return Err(Error(
                "Stream node key entry is not the size of a stream ID",
            ));
        }
        let (ms, seq) = b.split_at(8);
        Ok(Id {
            ms: u64::from_be_bytes(ms.try_into().map_err(|_| Error("bad id"))?),
            seq: u64::from_be_bytes(seq.try_into().map_err(|_| Error("bad id"))?),
        })
    }
}

/// A pending entry of a consumer group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending {
    /// The entry.
    pub id: Id,
    /// Unix ms of its last delivery.
    pub delivery_time: u64,
    /// How many times it was delivered.
    pub delivery_count: u64,
    /// The consumer that has it.
    pub consumer: Bytes,
}

/// A consumer of a group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Consumer {
    /// Its name.
    pub name: Bytes,
    /// Unix ms it was last seen.
    pub seen_time: u64,
}

/// A consumer group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// Its name.
    pub name: Bytes,
    /// Last delivered id.
    pub last_id: Id,
    /// Entries read (`None`: unknown, Redis's -1).
    pub entries_read: Option<u64>,
    /// Pending entries, in id order.
    pub pending: Vec<Pending>,
    /// Consumers, in the order written.
    pub consumers: Vec<Consumer>,
}

/// A whole stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stream {
    /// Entries in id order: id, then field, value, field, value...
    pub entries: Vec<(Id, Vec<Bytes>)>,
    /// The last id handed out.
    pub last_id: Id,
    /// The first entry's id (0-0 when empty).
    pub first_id: Id,
    /// The largest id deleted.
    pub max_deleted_id: Id,
    /// Entries ever added.
    pub entries_added: u64,
    /// Consumer groups.
    pub groups: Vec<Group>,
}

fn bad(what: &'static str) -> Error {
    Error(what)
}

fn int_of(item: Option<&Item<'_>>) -> Result<i64> {
    match item {
        Some(Item::Int(i)) => Ok(*i),
        Some(Item::Str(s)) => string2ll(s).ok_or(bad("stream listpack integrity check failed")),
        None => Err(bad("stream listpack integrity check failed")),
    }
}

/// Decodes one node (its master id and listpack), appending its live entries to `out`.
fn decode_node(master: Id, lp: &[u8], out: &mut Vec<(Id, Vec<Bytes>)>) -> Result<()> {
    let err = || bad("stream listpack integrity check failed");
    let items = listpack::decode(lp)?;
    if items.is_empty() {
        return Err(bad("Empty listpack inside stream"));
    }
    let mut it = items.iter();
    let count = int_of(it.next())?;
    let deleted = int_of(it.next())?;
    let nf = usize::try_from(int_of(it.next())?).map_err(|_| err())?;
    if nf > items.len() {
        return Err(err());
    }
    let mut master_fields = Vec::with_capacity(nf);
    for _ in 0..nf {
        master_fields.push(it.next().ok_or_else(err)?.to_bytes());
    }
    if int_of(it.next())? != 0 {
        return Err(err());
    }
    let (mut live, mut dead) = (0i64, 0i64);
    while let Some(flags) = it.next() {
        let flags = int_of(Some(flags))?;
        if !(0..=3).contains(&flags) {
            return Err(err());
        }
        let ms = master.ms.wrapping_add(int_of(it.next())? as u64);
        let seq = master.seq.wrapping_add(int_of(it.next())? as u64);
        let mut fields = Vec::new();
        let n = if flags & 2 != 0 {
            for f in &master_fields {
                fields.push(f.clone());
                fields.push(it.next().ok_or_else(err)?.to_bytes());
            }
            nf
        } else {
            let n = usize::try_from(int_of(it.next())?).map_err(|_| err())?;
            if n > items.len() {
                return Err(err());
            }
            for _ in 0..2 * n {
                fields.push(it.next().ok_or_else(err)?.to_bytes());
            }
            n
        };
        let lp_count = int_of(it.next())?;
        let want = 3 + n as i64 + if flags & 2 != 0 { 0 } else { n as i64 + 1 };
        if lp_count != want {
            return Err(err());
        }
        if flags & 1 != 0 {
            dead += 1;
            continue;
        }
        live += 1;
        let id = Id { ms, seq };
        if out.last().is_some_and(|(last, _)| *last >= id) {
            return Err(bad("stream entry ids out of order"));
        }
        out.push((id, fields));
    }
    if live != count || dead != deleted {
        return Err(err());
    }
    Ok(())
}

/// Decodes a stream of RDB type `ty` (`STREAM_LISTPACKS` or `STREAM_LISTPACKS_2`), with the
/// checks of Redis's deep sanitization: every node's listpack and entries, duplicate groups,
/// consumers and pending entries, a consumer's pending entry missing from its group, a group's
/// pending entry that no consumer has. Also refused (Redis would load them broken): a length
/// that is not the number of entries, entries out of order, a last id below the last entry.
///
/// # Errors
/// Malformed input.
pub fn decode(ty: u8, input: &mut Input<'_>) -> Result<Stream> {
    let mut s = Stream::default();
    let nodes = input.count(2)?;
    for _ in 0..nodes {
        let key = input.string()?;
        let master = Id::from_raw(&key)?;
        let lp = input.string()?;
        decode_node(master, &lp, &mut s.entries)?;
    }
    let length = input.length()?;
    s.last_id = Id {
        ms: input.length()?,
        seq: input.length()?,
    };
    if length != s.entries.len() as u64 {
        return Err(bad("stream length does not match its entries"));
    }
    if s.entries.last().is_some_and(|(id, _)| *id > s.last_id) {
        return Err(bad("stream last id below its last entry"));
    }
    let v2 = ty == types::STREAM_LISTPACKS_2;
    if v2 {
        s.first_id = Id {
            ms: input.length()?,
            seq: input.length()?,
        };
        s.max_deleted_id = Id {
            ms: input.length()?,
            seq: input.length()?,
        };
        s.entries_added = input.length()?;
    } else {
        s.first_id = s.entries.first().map(|e| e.0).unwrap_or_default();
        s.entries_added = length;
    }
    let groups = input.count(4)?;
    let mut names = HashSet::new();
    for _ in 0..groups {
        let name = input.bytes()?;
        if !names.insert(name.clone()) {
            return Err(bad("Duplicated consumer group name"));
        }
        let last_id = Id {
            ms: input.length()?,
            seq: input.length()?,
        };
        let entries_read = if v2 {
            // Redis writes its -1 ("unknown") as a 64-bit length.
            match input.length()? {
                u64::MAX => None,
                n => Some(n),
            }
        } else if s.entries_added == 0 || last_id == s.last_id {
            Some(s.entries_added)
        } else {
            None
        };
        let npel = input.count(17)?;
        let mut pending: Vec<Pending> = Vec::with_capacity(npel);
        let mut index: HashMap<Id, usize> = HashMap::with_capacity(npel);
        for _ in 0..npel {
            let id = Id::from_raw(input.take(16)?)?;
            let delivery_time = input.u64_le()?;
            let delivery_count = input.length()?;
            if index.insert(id, pending.len()).is_some() {
                return Err(bad(
                    "Duplicated global PEL entry loading stream consumer group",
                ));
            }
            pending.push(Pending {
                id,
                delivery_time,
                delivery_count,
                consumer: Bytes::new(),
            });
        }
        let nconsumers = input.count(10)?;
        let mut consumers = Vec::with_capacity(nconsumers);
        let mut cnames = HashSet::new();
        for _ in 0..nconsumers {
            let cname = input.bytes()?;
            let seen_time = input.u64_le()?;
            if !cnames.insert(cname.clone()) {
                return Err(bad("Duplicate stream consumer detected"));
            }
            let n = input.count(16)?;
            for _ in 0..n {
                let id = Id::from_raw(input.take(16)?)?;
                let Some(&i) = index.get(&id) else {
                    return Err(bad("Consumer entry not found in group global PEL"));
                };
                if !pending[i].consumer.is_empty() {
                    return Err(bad("Duplicated consumer PEL entry"));
                }
                pending[i].consumer = cname.clone();
            }
            consumers.push(Consumer {
                name: cname,
                seen_time,
            });
        }
        if pending.iter().any(|p| p.consumer.is_empty()) {
            return Err(bad("Stream CG PEL entry without consumer"));
        }
        pending.sort_by_key(|p| p.id);
        s.groups.push(Group {
            name,
            last_id,
            entries_read,
            pending,
            consumers,
        });
    }
    Ok(s)
}

/// Redis 7.0's node limits (`stream-node-max-entries 100`, `stream-node-max-bytes 4096`).
const NODE_ENTRIES: usize = 100;
const NODE_BYTES: usize = 4096;

fn same_fields(master: &[Bytes], fields: &[Bytes]) -> bool {
    master.len() * 2 == fields.len()
        && master
            .iter()
            .zip(fields.iter().step_by(2))
            .all(|(a, b)| a == b)
}

fn node(entries: &[(Id, Vec<Bytes>)]) -> (Id, Vec<u8>) {
    let master = entries[0].0;
    let master_fields: Vec<Bytes> = entries[0].1.iter().step_by(2).cloned().collect();
    let mut b = listpack::Builder::new();
    b.push_int(entries.len() as i64);
    b.push_int(0);
    b.push_int(master_fields.len() as i64);
    for f in &master_fields {
        b.push(f);
    }
    b.push_int(0);
    for (id, fields) in entries {
        let same = same_fields(&master_fields, fields);
        b.push_int(if same { 2 } else { 0 });
        b.push_int(id.ms.wrapping_sub(master.ms) as i64);
        b.push_int(id.seq.wrapping_sub(master.seq) as i64);
        let n = fields.len() / 2;
        if same {
            for v in fields.iter().skip(1).step_by(2) {
                b.push(v);
            }
            b.push_int(3 + n as i64);
        } else {
            b.push_int(n as i64);
            for f in fields {
                b.push(f);
            }
            b.push_int(4 + 2 * n as i64);
        }
    }
    (master, b.finish())
}

/// Writes a stream as Redis 7.0 does (`STREAM_LISTPACKS_2`, type byte included): nodes of up to
/// 100 entries and about 4 KB, an entry with its node's first fields stored as values only.
pub fn encode(s: &Stream, out: &mut Vec<u8>) {
    out.push(types::STREAM_LISTPACKS_2);
    let mut nodes = Vec::new();
    let mut start = 0;
    let mut bytes = 0;
    for (i, (_, fields)) in s.entries.iter().enumerate() {
        let size: usize = fields.iter().map(|f| f.len() + 2).sum::<usize>() + 8;
        if i > start && (i - start >= NODE_ENTRIES || bytes + size > NODE_BYTES) {
            nodes.push(node(&s.entries[start..i]));
            start = i;
            bytes = 0;
        }
        bytes += size;
    }
    if start < s.entries.len() {
        nodes.push(node(&s.entries[start..]));
    }
    put_len(out, nodes.len() as u64);
    for (master, lp) in nodes {
        put_string(out, &master.raw());
        put_string(out, &lp);
    }
    put_len(out, s.entries.len() as u64);
    for v in [
        s.last_id.ms,
        s.last_id.seq,
        s.first_id.ms,
        s.first_id.seq,
        s.max_deleted_id.ms,
        s.max_deleted_id.seq,
        s.entries_added,
    ] {
        put_len(out, v);
    }
    put_len(out, s.groups.len() as u64);
    for g in &s.groups {
        put_string(out, &g.name);
        put_len(out, g.last_id.ms);
        put_len(out, g.last_id.seq);
        put_len(out, g.entries_read.unwrap_or(u64::MAX));
        put_len(out, g.pending.len() as u64);
        for p in &g.pending {
            out.extend_from_slice(&p.id.raw());
            out.extend_from_slice(&p.delivery_time.to_le_bytes());
            put_len(out, p.delivery_count);
        }
        put_len(out, g.consumers.len() as u64);
        for c in &g.consumers {
            put_string(out, &c.name);
            out.extend_from_slice(&c.seen_time.to_le_bytes());
            let mine: Vec<&Pending> = g.pending.iter().filter(|p| p.consumer == c.name).collect();
            put_len(out, mine.len() as u64);
            for p in mine {
                out.extend_from_slice(&p.id.raw());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    fn sample() -> Stream {
        let entries: Vec<(Id, Vec<Bytes>)> = (0..250u64)
            .map(|i| {
                let fields = if i % 7 == 0 {
                    vec![b("other"), b(&i.to_string())]
                } else {
                    vec![b("f"), b(&format!("v{i}")), b("n"), b(&i.to_string())]
                };
                (
                    Id {
                        ms: 1000 + i / 3,
                        seq: i % 3,
                    },
                    fields,
                )
            })
            .collect();
        Stream {
            first_id: entries[0].0,
            last_id: Id { ms: 5000, seq: 1 },
            max_deleted_id: Id { ms: 10, seq: 0 },
            entries_added: 300,
            entries,
            groups: vec![
                Group {
                    name: b("g"),
                    last_id: Id { ms: 1001, seq: 0 },
                    entries_read: Some(4),
                    pending: vec![
                        Pending {
                            id: Id { ms: 1000, seq: 0 },
                            delivery_time: 77,
                            delivery_count: 2,
                            consumer: b("c1"),
                        },
                        Pending {
                            id: Id { ms: 1000, seq: 1 },
                            delivery_time: 78,
                            delivery_count: 1,
                            consumer: b("c2"),
                        },
                    ],
                    consumers: vec![
                        Consumer {
                            name: b("c1"),
                            seen_time: 5,
                        },
                        Consumer {
                            name: b("c2"),
                            seen_time: 6,
                        },
                        Consumer {
                            name: b("idle"),
                            seen_time: 7,
                        },
                    ],
                },
                Group {
                    name: b("h"),
                    last_id: Id::default(),
                    entries_read: None,
                    pending: vec![],
                    consumers: vec![],
                },
            ],
        }
    }

    #[test]
    fn round_trips() {
        let s = sample();
        let mut out = Vec::new();
        encode(&s, &mut out);
        let got = decode(out[0], &mut Input::new(&out[1..])).unwrap();
        assert_eq!(got, s);
        let empty = Stream::default();
        let mut out = Vec::new();
        encode(&empty, &mut out);
        assert_eq!(decode(out[0], &mut Input::new(&out[1..])).unwrap(), empty);
    }

    #[test]
    fn inconsistent_streams_fail() {
        let mut s = sample();
        s.groups[0].pending[1].consumer = b("nobody");
        let mut out = Vec::new();
        encode(&s, &mut out);
        assert!(decode(out[0], &mut Input::new(&out[1..])).is_err());
        let mut s = sample();
        s.last_id = Id { ms: 1, seq: 0 };
        let mut out = Vec::new();
        encode(&s, &mut out);
        assert!(decode(out[0], &mut Input::new(&out[1..])).is_err());
        let mut s = sample();
        s.groups[1].name = b("g");
        let mut out = Vec::new();
        encode(&s, &mut out);
        assert!(decode(out[0], &mut Input::new(&out[1..])).is_err());
    }
}
