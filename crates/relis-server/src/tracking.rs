//! Client-side caching (Redis 7.0's `CLIENT TRACKING`): which client may hold which key, and
//! the invalidation messages sent when a key changes.
//! <https://redis.io/docs/manual/client-side-caching/>
//!
//! Invalidation hangs on the keyspace events (see [`relis::events`]): while any client tracks,
//! the event sink ([`crate::pubsub::PubSub`]) wants every event, and every committed write's
//! events come here through [`Tracking::invalidate`], the same path keyspace notifications
//! take. A write that emits no event would miss both. Flushes and SWAPDB record
//! [`relis::events::class::FLUSHED`], answered with the null invalidation.
//!
//! As in Redis, the default mode remembers, per key name (whatever the database, as Redis's
//! table does), the clients that read it; the first change sends them an invalidation and
//! forgets the key. BCAST clients name prefixes instead and hear of every change under them,
//! one push per prefix per commit (Redis: per event-loop turn), keys in byte order. A client's
//! own invalidations follow the reply of the command that caused them, as Redis 7.0 defers
//! them (the connection writes them after that reply).
//!
//! Invalidations go into the destination's mailbox (the pub/sub one), encoded as a RESP3
//! `invalidate` push, or in RESP2 as a `message` on `__redis__:invalidate` to a redirect
//! client that has a subscription; a RESP2 client without redirection gets nothing (RESP2 has
//! no pushes), as in Redis.

use crate::client::ClientInfo;
use crate::pubsub::BufferLimit;
use bytes::{Bytes, BytesMut};
use parking_lot::Mutex;
use relis::events::{class, KeyEvent};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// [`ClientInfo::tracking_flags`]: BCAST mode (CLIENT LIST's `B`).
pub const BCAST_FLAG: u8 = 1;
/// [`ClientInfo::tracking_flags`]: the redirect client is gone (CLIENT LIST's `R`).
pub const BROKEN_FLAG: u8 = 2;

/// A tracking client's options (CLIENT TRACKING ON ...).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// BCAST: told of every change under its prefixes.
    pub bcast: bool,
    /// OPTIN: only keys read right after CLIENT CACHING YES are remembered.
    pub optin: bool,
    /// OPTOUT: keys read right after CLIENT CACHING NO are not remembered.
    pub optout: bool,
    /// NOLOOP: not told of its own changes.
    pub noloop: bool,
    /// The client its invalidations go to (0: itself).
    pub redirect: u64,
}

/// One tracking client.
struct Tracker {
    info: Arc<ClientInfo>,
    opts: Options,
    /// BCAST prefixes, in byte order.
    prefixes: std::collections::BTreeSet<Bytes>,
    /// The redirect client, while it is connected.
    redirect: Option<Arc<ClientInfo>>,
}

/// What an invalidation carries: keys, or null (everything).
enum Payload<'a> {
    Keys(&'a [&'a [u8]]),
    Null,
}

#[derive(Default)]
struct State {
    clients: HashMap<u64, Tracker>,
    /// Default mode: key name -> the clients that may hold it.
    table: HashMap<Bytes, Vec<u64>>,
    /// (key, client) pairs in `table` (INFO `tracking_total_items`).
    items: usize,
    /// BCAST: prefix -> its clients.
    prefixes: BTreeMap<Bytes, Vec<u64>>,
}

/// The `client-output-buffer-limit` classes a push counts against: normal, pubsub.
pub type Limits = (BufferLimit, BufferLimit);

/// The server's client-side caching state.
#[derive(Default)]
pub struct Tracking {
    state: Mutex<State>,
    /// `tracking-table-max-keys` (0: no limit).
    max_keys: AtomicUsize,
}

/// The error texts of CLIENT TRACKING's prefix checks, as Redis words them.
fn overlap(new: &[u8], other: &[u8], existing: bool) -> String {
    format!(
        "Prefix '{}' overlaps with {} prefix '{}'. Prefixes for a single client must not overlap.",
        String::from_utf8_lossy(new),
        if existing {
            "an existing"
        } else {
            "another provided"
        },
        String::from_utf8_lossy(other)
    )
}

/// Whether one of `a`, `b` starts with the other (Redis's `stringCheckPrefix`).
fn overlaps(a: &[u8], b: &[u8]) -> bool {
    let n = a.len().min(b.len());
    a[..n] == b[..n]
}

impl Tracking {
    /// Sets `tracking-table-max-keys`.
    pub fn set_max_keys(&self, n: usize) {
        self.max_keys.store(n, Ordering::Relaxed);
    }

    /// The client's BCAST prefixes, in byte order.
    pub fn prefixes_of(&self, id: u64) -> Vec<Bytes> {
        let st = self.state.lock();
        st.clients
            .get(&id)
            .map_or_else(Vec::new, |t| t.prefixes.iter().cloned().collect())
    }

    /// Checks BCAST `prefixes` against each other and the client's `own`, as Redis's
    /// `checkPrefixCollisionsOrReply` (quadratic, as there: the caller runs a long list off
    /// the network threads, and no lock is held).
    ///
    /// # Errors
    /// Redis's text for the first overlap.
    pub fn check_prefixes(own: &[Bytes], prefixes: &[Bytes]) -> Result<(), String> {
        for (i, p) in prefixes.iter().enumerate() {
            if let Some(o) = own.iter().find(|o| overlaps(o, p)) {
                return Err(overlap(p, o, true));
            }
            if let Some(o) = prefixes[i + 1..].iter().find(|o| overlaps(p, o)) {
                return Err(overlap(p, o, false));
            }
        }
        Ok(())
    }

    /// CLIENT TRACKING ON: (re)enables tracking for `info` with `opts`, adding `prefixes` (BCAST
    /// without any is the empty prefix, every key), as Redis's `enableTracking`. `redirect` is
    /// the redirect client, found by the caller. Returns whether this is the first tracking
    /// client.
    pub fn enable(
        &self,
        info: &Arc<ClientInfo>,
        opts: Options,
        mut prefixes: Vec<Bytes>,
        redirect: Option<Arc<ClientInfo>>,
    ) -> bool {
        let mut st = self.state.lock();
        let first = st.clients.is_empty();
        if opts.bcast && prefixes.is_empty() {
            prefixes.push(Bytes::new());
        }
        if !opts.bcast {
            prefixes.clear();
        }
        let t = st.clients.entry(info.id).or_insert_with(|| Tracker {
            info: info.clone(),
            opts: Options::default(),
            prefixes: Default::default(),
            redirect: None,
        });
        info.tracking_redir
            .store(opts.redirect as i64, Ordering::Relaxed);
        info.tracking_flags
            .store(if opts.bcast { BCAST_FLAG } else { 0 }, Ordering::Relaxed);
        t.opts = opts;
        t.redirect = redirect;
        let mut added = Vec::new();
        for p in prefixes {
            if t.prefixes.insert(p.clone()) {
                added.push(p);
            }
        }
        for p in added {
            st.prefixes.entry(p).or_default().push(info.id);
        }
        first
    }

    /// CLIENT TRACKING OFF (and RESET, and disconnection): forgets the client's options and
    /// prefixes. Its entries in the key table stay until those keys change, as in Redis (they
    /// are skipped then). Returns whether no client tracks any more.
    pub fn disable(&self, id: u64) -> bool {
        let mut st = self.state.lock();
        if let Some(t) = st.clients.remove(&id) {
            t.info.tracking_redir.store(-1, Ordering::Relaxed);
            t.info.tracking_flags.store(0, Ordering::Relaxed);
            for p in t.prefixes {
                if let Some(ids) = st.prefixes.get_mut(&p) {
                    ids.retain(|&i| i != id);
                    if ids.is_empty() {
                        st.prefixes.remove(&p);
                    }
                }
            }
        }
        st.clients.is_empty()
    }

    /// Client `id` went away: it no longer tracks, and redirections to it are broken.
    /// Returns whether no client tracks any more.
    pub fn client_gone(&self, id: u64) -> bool {
        let none = self.disable(id);
        let mut st = self.state.lock();
        for t in st.clients.values_mut() {
            if t.redirect.as_ref().is_some_and(|r| r.id == id) {
                // Marked broken when an invalidation finds it gone, as in Redis.
                t.redirect = None;
            }
        }
        none
    }

    /// CLIENT TRACKINGINFO: flags, redirect (-1 when not tracking) and prefixes.
    pub fn info(&self, id: u64) -> (Vec<&'static str>, i64, Vec<Bytes>) {
        let st = self.state.lock();
        let Some(t) = st.clients.get(&id) else {
            return (vec!["off"], -1, Vec::new());
        };
        let mut flags = vec!["on"];
        if t.opts.bcast {
            flags.push("bcast");
        }
        if t.opts.optin {
            flags.push("optin");
        }
        if t.opts.optout {
            flags.push("optout");
        }
        if t.opts.noloop {
            flags.push("noloop");
        }
        if t.info.tracking_flags.load(Ordering::Relaxed) & BROKEN_FLAG != 0 {
            flags.push("broken_redirect");
        }
        (
            flags,
            t.opts.redirect as i64,
            t.prefixes.iter().cloned().collect(),
        )
    }

    /// Whether some client may hold `key`: it is in the table, or under a BCAST prefix.
    pub fn may_hold(&self, key: &[u8]) -> bool {
        let st = self.state.lock();
        st.table.contains_key(key) || st.prefixes.keys().any(|p| key.starts_with(p))
    }

    /// Tracking clients, keys in the table, (key, client) items, BCAST prefixes (INFO).
    pub fn counts(&self) -> (usize, usize, usize, usize) {
        let st = self.state.lock();
        (
            st.clients.len(),
            st.table.len(),
            st.items,
            st.prefixes.len(),
        )
    }

    /// Client `id` (default mode) read `keys`: remembers it may hold them. Past
    /// `tracking-table-max-keys`, keys are evicted from the table (and invalidated, after the
    /// reply of this read for the reader itself), as Redis's `trackingLimitUsedSlots` does.
    pub fn remember(&self, id: u64, keys: &[Bytes], limits: Limits) {
        let mut st = self.state.lock();
        for k in keys {
            let ids = st.table.entry(k.clone()).or_default();
            if !ids.contains(&id) {
                ids.push(id);
                st.items += 1;
            }
        }
        let max = self.max_keys.load(Ordering::Relaxed);
        while max > 0 && st.table.len() > max {
            // Redis picks keys at random; the hash order is as good.
            let Some(k) = st.table.keys().next().cloned() else {
                break;
            };
            invalidate_key(&mut st, &k, id, limits);
        }
    }

    /// A committed write's events: invalidates the keys they name (all but `keymiss`), and
    /// sends everyone the null invalidation for a flush.
    pub fn invalidate(&self, events: &[KeyEvent], limits: Limits) {
        let mut st = self.state.lock();
        if st.clients.is_empty() && st.table.is_empty() {
            return;
        }
        // BCAST: prefix -> changed key -> the client that changed it last.
        let mut bcast: BTreeMap<Bytes, BTreeMap<&[u8], u64>> = BTreeMap::new();
        for e in events {
            if e.class == class::KEY_MISS {
                continue;
            }
            if e.class == class::FLUSHED {
                flush(&mut st, e.origin, limits);
                continue;
            }
            if st.table.contains_key(e.key.as_slice()) {
                invalidate_key(&mut st, &e.key, e.origin, limits);
            }
            for p in st.prefixes.keys() {
                if e.key.starts_with(p) {
                    bcast.entry(p.clone()).or_default().insert(&e.key, e.origin);
                }
            }
        }
        for (p, keys) in bcast {
            let Some(ids) = st.prefixes.get(&p) else {
                continue;
            };
            for id in ids {
                let Some(t) = st.clients.get(id) else {
                    continue;
                };
                let mine: Vec<&[u8]> = keys
                    .iter()
                    .filter(|(_, &by)| !(t.opts.noloop && by == *id))
                    .map(|(k, _)| *k)
                    .collect();
                if mine.is_empty() {
                    continue;
                }
                // Redis sends BCAST messages before it sleeps, after the replies: a batch that
                // holds the client's own changes follows its reply.
                let origin = if keys.values().any(|&by| by == *id) {
                    *id
                } else {
                    0
                };
                send(t, Payload::Keys(&mine), origin, limits);
            }
        }
    }
}

/// Invalidates `key` for every client that may hold it and forgets it (Redis's
/// `trackingInvalidateKey` for the default mode).
fn invalidate_key(st: &mut State, key: &[u8], origin: u64, limits: Limits) {
    let Some(ids) = st.table.remove(key) else {
        return;
    };
    st.items -= ids.len();
    for id in ids {
        let Some(t) = st.clients.get(&id) else {
            continue;
        };
        // A client that switched to BCAST no longer hears of keys it read before.
        if t.opts.bcast || t.opts.noloop && id == origin {
            continue;
        }
        send(t, Payload::Keys(&[key]), origin, limits);
    }
}

/// A flush: every tracking client gets the null invalidation, and the table is emptied.
fn flush(st: &mut State, origin: u64, limits: Limits) {
    for t in st.clients.values() {
        send(t, Payload::Null, origin, limits);
    }
    st.table.clear();
    st.items = 0;
}

/// Sends one invalidation for tracking client `t` (Redis's `sendTrackingMessage`).
fn send(t: &Tracker, payload: Payload<'_>, origin: u64, (normal, pubsub): Limits) {
    let resp3 = |i: &ClientInfo| i.resp.load(Ordering::Relaxed) == 3;
    let to = if t.opts.redirect == 0 {
        &t.info
    } else {
        match &t.redirect {
            Some(r) => r,
            None => {
                t.info
                    .tracking_flags
                    .fetch_or(BROKEN_FLAG, Ordering::Relaxed);
                // The tracking client hears that its invalidations go nowhere (RESP3 only).
                if resp3(&t.info) {
                    let mut b = BytesMut::new();
                    b.extend_from_slice(b">2\r\n$21\r\ntracking-redir-broken\r\n");
                    b.extend_from_slice(format!(":{}\r\n", t.opts.redirect).as_bytes());
                    let limit = if t.info.pubsub.subscribed() {
                        pubsub
                    } else {
                        normal
                    };
                    t.info
                        .pubsub
                        .push_encoded(&t.info, &b, t.info.id == origin, limit);
                }
                return;
            }
        }
    };
    let mut b = BytesMut::new();
    if resp3(to) {
        b.extend_from_slice(b">2\r\n$10\r\ninvalidate\r\n");
    } else if t.opts.redirect != 0 && to.pubsub.subscribed() {
        b.extend_from_slice(b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n");
    } else {
        // RESP2 has no pushes: nothing can reach this client.
        return;
    }
    match payload {
        Payload::Keys(keys) => {
            b.extend_from_slice(format!("*{}\r\n", keys.len()).as_bytes());
            for k in keys {
                b.extend_from_slice(format!("${}\r\n", k.len()).as_bytes());
                b.extend_from_slice(k);
                b.extend_from_slice(b"\r\n");
            }
        }
        // Redis sends the null of the tracking client's protocol, whatever the destination
        // speaks (a RESP3 redirect target of a RESP2 client gets `$-1`).
        Payload::Null => b.extend_from_slice(if resp3(&t.info) { b"_\r\n" } else { b"$-1\r\n" }),
    }
    let limit = if to.pubsub.subscribed() {
        pubsub
    } else {
        normal
    };
    to.pubsub.push_encoded(to, &b, to.id == origin, limit);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_overlaps_as_redis() {
        assert!(overlaps(b"a", b"ab"));
        assert!(overlaps(b"ab", b"a"));
        assert!(overlaps(b"", b"x"));
        assert!(overlaps(b"x", b"x"));
        assert!(!overlaps(b"ab", b"ac"));
        let p = |v: &[&str]| {
            v.iter()
                .map(|s| Bytes::from(s.to_string()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            Tracking::check_prefixes(&[], &p(&["ab", "a"])).unwrap_err(),
            "Prefix 'ab' overlaps with another provided prefix 'a'. Prefixes for a single client must not overlap."
        );
        assert!(Tracking::check_prefixes(&[], &p(&["a", "b"])).is_ok());
        assert_eq!(
            Tracking::check_prefixes(&p(&["b"]), &p(&["c", "bc"])).unwrap_err(),
            "Prefix 'bc' overlaps with an existing prefix 'b'. Prefixes for a single client must not overlap."
        );
    }
}
