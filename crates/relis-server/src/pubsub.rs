//! Pub/sub: who is subscribed to what, delivery of published messages, the output-buffer limits
//! that keep a slow subscriber from growing memory without bound, and keyspace notifications.
//!
//! Messages are in memory only, as in Redis. The [`PubSub`] registry maps channels, patterns
//! and shard channels to the subscribed clients; a client's own list of subscriptions lives
//! with its connection ([`Subscriptions`]). Publishing never waits on a subscriber: the message
//! is encoded into the subscriber's [`Mailbox`] (a byte buffer) and its connection is woken to
//! write it. A mailbox past `client-output-buffer-limit pubsub` (hard limit, or soft limit for
//! longer than its seconds) is emptied and its client disconnected, as Redis does.
//!
//! Keyspace notifications: the engine records events during a write (see [`relis::events`])
//! and hands them to [`PubSub`] (its [`relis::events::EventSink`]) once the group transaction
//! has committed; they are published as `__keyspace@<db>__:<key>` / `__keyevent@<db>__:<event>`
//! messages according to `notify-keyspace-events`.

use crate::client::{Client, ClientInfo};
use bytes::{Bytes, BytesMut};
use parking_lot::Mutex;
use relis::events::{class, KeyEvent};
use resp::Frame;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Notify;

/// `K`: publish `__keyspace@<db>__:<key>` messages.
pub const KEYSPACE: u32 = 1 << 0;
/// `E`: publish `__keyevent@<db>__:<event>` messages.
pub const KEYEVENT: u32 = 1 << 1;
/// Not a `notify-keyspace-events` letter: set in the same word while any client tracks keys
/// (client-side caching), so the write path asks one atomic whether anyone wants its events.
const TRACKING: u32 = 1 << 31;
/// `A`: every class but `m` (key miss) and `n` (new), as in Redis.
pub const ALL: u32 = class::GENERIC
    | class::STRING
    | class::LIST
    | class::SET
    | class::HASH
    | class::ZSET
    | class::EXPIRED
    | class::EVICTED
    | class::STREAM
    | class::MODULE;

/// Parses `notify-keyspace-events` as Redis's `keyspaceEventsStringToFlags`.
pub fn parse_notify_flags(s: &str) -> Option<u32> {
    let mut flags = 0;
    for c in s.chars() {
        flags |= match c {
            'A' => ALL,
            'g' => class::GENERIC,
            '$' => class::STRING,
            'l' => class::LIST,
            's' => class::SET,
            'h' => class::HASH,
            'z' => class::ZSET,
            'x' => class::EXPIRED,
            'e' => class::EVICTED,
            'K' => KEYSPACE,
            'E' => KEYEVENT,
            't' => class::STREAM,
            'm' => class::KEY_MISS,
            'd' => class::MODULE,
            'n' => class::NEW,
            _ => return None,
        };
    }
    Some(flags)
}

/// Renders flags as CONFIG GET shows them (Redis's `keyspaceEventsFlagsToString`): `A` stands
/// for all of its classes, and then hides `n`, as Redis's does.
pub fn notify_flags_string(flags: u32) -> String {
    let mut s = String::new();
    if flags & ALL == ALL {
        s.push('A');
    } else {
        for (bit, c) in [
            (class::GENERIC, 'g'),
            (class::STRING, '$'),
            (class::LIST, 'l'),
            (class::SET, 's'),
            (class::HASH, 'h'),
            (class::ZSET, 'z'),
            (class::EXPIRED, 'x'),
            (class::EVICTED, 'e'),
            (class::STREAM, 't'),
            (class::MODULE, 'd'),
            (class::NEW, 'n'),
        ] {
            if flags & bit != 0 {
                s.push(c);
            }
        }
    }
    for (bit, c) in [(KEYSPACE, 'K'), (KEYEVENT, 'E'), (class::KEY_MISS, 'm')] {
        if flags & bit != 0 {
            s.push(c);
        }
    }
    s
}

/// Every flag as its own letter, `A` never used: a lossless form of the flags (the form
/// CONFIG GET shows, [`notify_flags_string`], drops `n` next to `A`, as Redis's does).
pub fn notify_flags_letters(flags: u32) -> String {
    let mut s = String::new();
    for (bit, c) in [
        (class::GENERIC, 'g'),
        (class::STRING, '$'),
        (class::LIST, 'l'),
        (class::SET, 's'),
        (class::HASH, 'h'),
        (class::ZSET, 'z'),
        (class::EXPIRED, 'x'),
        (class::EVICTED, 'e'),
        (class::STREAM, 't'),
        (class::MODULE, 'd'),
        (class::NEW, 'n'),
        (KEYSPACE, 'K'),
        (KEYEVENT, 'E'),
        (class::KEY_MISS, 'm'),
    ] {
        if flags & bit != 0 {
            s.push(c);
        }
    }
    s
}

/// One class's `client-output-buffer-limit`: bytes, bytes, seconds (0 = no limit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferLimit {
    /// Disconnect as soon as the buffer holds this much.
    pub hard: u64,
    /// Disconnect when the buffer has held this much for longer than `soft_secs`.
    pub soft: u64,
    /// See `soft`.
    pub soft_secs: u64,
}

/// Parses `client-output-buffer-limit` (`<class> <hard> <soft> <seconds>` groups) over `old`,
/// returning the normalised value CONFIG GET shows (all three classes, bytes), as Redis does.
///
/// # Errors
/// Redis's messages.
pub fn parse_buffer_limits(value: &str, old: &str) -> Result<String, String> {
    let words: Vec<&str> = value.split_whitespace().collect();
    if !words.len().is_multiple_of(4) {
        return Err("Wrong number of arguments in buffer limit configuration.".into());
    }
    let mut classes: Vec<(String, [u64; 3])> = ["normal", "slave", "pubsub"]
        .iter()
        .map(|c| (c.to_string(), [0u64; 3]))
        .collect();
    let old_words: Vec<&str> = old.split_whitespace().collect();
    for g in old_words.chunks(4) {
        if let [c, h, s, t] = g {
            if let Some(slot) = classes.iter_mut().find(|(n, _)| n == c) {
                slot.1 = [
                    h.parse().unwrap_or(0),
                    s.parse().unwrap_or(0),
                    t.parse().unwrap_or(0),
                ];
            }
        }
    }
    let mut updates = Vec::new();
    for g in words.chunks(4) {
        let class = match g[0].to_ascii_lowercase().as_str() {
            "normal" => "normal",
            "slave" | "replica" => "slave",
            "pubsub" => "pubsub",
            _ => {
                return Err("Invalid client class specified in buffer limit configuration.".into())
            }
        };
        let bad = || "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
        let hard = crate::config::memory(g[1]).map_err(|_| bad())? as u64;
        let soft = crate::config::memory(g[2]).map_err(|_| bad())? as u64;
        // C's strtoll with the whole word taken, as Redis reads it: "x" is an error, not 0.
        let secs = crate::config::settings::strtoll(g[3]).ok_or_else(bad)?;
        if secs < 0 {
            return Err(bad().into());
        }
        updates.push((class, [hard, soft, secs as u64]));
    }
    for (class, v) in updates {
        if let Some(slot) = classes.iter_mut().find(|(n, _)| n == class) {
            slot.1 = v;
        }
    }
    Ok(classes
        .iter()
        .map(|(n, [h, s, t])| format!("{n} {h} {s} {t}"))
        .collect::<Vec<_>>()
        .join(" "))
}

/// One class (`normal`, `slave`, `pubsub`) of a normalised `client-output-buffer-limit` value;
/// Redis's default for the class if the value does not name it.
pub fn class_limit(value: &str, class: &str) -> BufferLimit {
    let words: Vec<&str> = value.split_whitespace().collect();
    let default = match class {
        "pubsub" => BufferLimit {
            hard: 32 << 20,
            soft: 8 << 20,
            soft_secs: 60,
        },
        "slave" => BufferLimit {
            hard: 256 << 20,
            soft: 64 << 20,
            soft_secs: 60,
        },
        _ => BufferLimit {
            hard: 0,
            soft: 0,
            soft_secs: 0,
        },
    };
    words
        .chunks(4)
        .find(|g| g[0] == class)
        .and_then(|g| {
            Some(BufferLimit {
                hard: g.get(1)?.parse().ok()?,
                soft: g.get(2)?.parse().ok()?,
                soft_secs: g.get(3)?.parse().ok()?,
            })
        })
        .unwrap_or(default)
}

/// A [`BufferLimit`] that CONFIG SET changes while connections read it.
#[derive(Debug, Default)]
pub struct LimitCell {
    hard: AtomicU64,
    soft: AtomicU64,
    soft_secs: AtomicU64,
}

impl LimitCell {
    /// Replaces the limit.
    pub fn store(&self, l: BufferLimit) {
        self.hard.store(l.hard, Ordering::Relaxed);
        self.soft.store(l.soft, Ordering::Relaxed);
        self.soft_secs.store(l.soft_secs, Ordering::Relaxed);
    }

    /// The limit now.
    pub fn load(&self) -> BufferLimit {
        BufferLimit {
            hard: self.hard.load(Ordering::Relaxed),
            soft: self.soft.load(Ordering::Relaxed),
            soft_secs: self.soft_secs.load(Ordering::Relaxed),
        }
    }
}

/// What a subscription is to: a channel, a pattern, or a shard channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// SUBSCRIBE.
    Channel,
    /// PSUBSCRIBE.
    Pattern,
    /// SSUBSCRIBE.
    Shard,
}

impl Kind {
    fn subscribe_word(self) -> &'static [u8] {
        match self {
            Kind::Channel => b"subscribe",
            Kind::Pattern => b"psubscribe",
            Kind::Shard => b"ssubscribe",
        }
    }

    fn unsubscribe_word(self) -> &'static [u8] {
        match self {
            Kind::Channel => b"unsubscribe",
            Kind::Pattern => b"punsubscribe",
            Kind::Shard => b"sunsubscribe",
        }
    }
}

/// A connection's pending messages: bytes already encoded in its protocol.
#[derive(Default)]
struct Outbox {
    buf: BytesMut,
    /// Pushes that follow the reply the connection is about to send (a client's own
    /// invalidations, which Redis sends after the reply of the command that caused them).
    after: BytesMut,
    /// Message bytes handed to the socket and not yet written.
    in_flight: usize,
    /// Since when the buffer has been over the soft limit.
    soft_since: Option<Instant>,
    /// Disconnected for its output buffer: takes nothing more.
    closed: bool,
}

/// A client's mailbox for published messages, and its subscription counts (CLIENT LIST).
#[derive(Default)]
pub struct Mailbox {
    outbox: Mutex<Outbox>,
    /// Set while the outbox may hold something: a connection that takes its messages before
    /// and after every reply looks here first, without the lock.
    filled: std::sync::atomic::AtomicBool,
    ready: Notify,
    /// Channels subscribed.
    pub channels: AtomicUsize,
    /// Patterns subscribed.
    pub patterns: AtomicUsize,
    /// Shard channels subscribed.
    pub shard: AtomicUsize,
}

impl std::fmt::Debug for Mailbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailbox")
            .field("pending", &self.pending())
            .finish_non_exhaustive()
    }
}

impl Mailbox {
    /// Whether the client has any subscription (Redis's `CLIENT_PUBSUB` flag).
    pub fn subscribed(&self) -> bool {
        self.channels.load(Ordering::Relaxed)
            + self.patterns.load(Ordering::Relaxed)
            + self.shard.load(Ordering::Relaxed)
            > 0
    }

    /// Resolves when messages may be waiting.
    pub async fn ready(&self) {
        self.ready.notified().await;
    }

    /// Moves the pending messages to the end of `out` (they count against the output-buffer
    /// limit until [`Mailbox::written`]).
    pub fn take_into(&self, out: &mut BytesMut) {
        if !self.filled.load(Ordering::Acquire) {
            return;
        }
        let mut o = self.outbox.lock();
        self.filled
            .store(!(o.buf.is_empty() && o.after.is_empty()), Ordering::Release);
        if o.buf.is_empty() && o.after.is_empty() {
            return;
        }
        o.in_flight += o.buf.len() + o.after.len();
        if out.is_empty() {
            std::mem::swap(out, &mut o.buf);
        } else {
            out.extend_from_slice(&o.buf);
            o.buf.clear();
        }
        if !o.after.is_empty() {
            out.extend_from_slice(&o.after);
            o.after.clear();
        }
    }

    /// Moves the pending messages to `out`, but not those that wait for the reply being
    /// written ([`Mailbox::take_after`] takes them).
    pub fn take_before(&self, out: &mut BytesMut) {
        if !self.filled.load(Ordering::Acquire) {
            return;
        }
        let mut o = self.outbox.lock();
        self.filled
            .store(!(o.buf.is_empty() && o.after.is_empty()), Ordering::Release);
        if o.buf.is_empty() {
            return;
        }
        o.in_flight += o.buf.len();
        if out.is_empty() {
            std::mem::swap(out, &mut o.buf);
        } else {
            out.extend_from_slice(&o.buf);
            o.buf.clear();
        }
    }

    /// Moves the pushes that follow a reply to `out` (the reply is there already).
    pub fn take_after(&self, out: &mut BytesMut) {
        if !self.filled.load(Ordering::Acquire) {
            return;
        }
        let mut o = self.outbox.lock();
        self.filled
            .store(!(o.buf.is_empty() && o.after.is_empty()), Ordering::Release);
        if o.after.is_empty() {
            return;
        }
        o.in_flight += o.after.len();
        out.extend_from_slice(&o.after);
        o.after.clear();
    }

    /// Drops the pending messages (the client does not take replies: CLIENT REPLY OFF).
    pub fn discard(&self) {
        let mut o = self.outbox.lock();
        o.buf.clear();
        o.after.clear();
    }

    /// The bytes taken with [`Mailbox::take_into`] have been written.
    pub fn written(&self) {
        self.outbox.lock().in_flight = 0;
    }

    /// Bytes waiting or being written (CLIENT LIST `omem`).
    pub fn pending(&self) -> usize {
        let o = self.outbox.lock();
        o.buf.len() + o.after.len() + o.in_flight
    }

    /// Appends one message; past the limits the mailbox is emptied and the client killed.
    fn push(&self, info: &ClientInfo, msg: &Message<'_>, limit: BufferLimit) {
        let resp3 = info.resp.load(Ordering::Relaxed) == 3;
        self.push_with(info, limit, false, |out| msg.encode(resp3, out));
    }

    /// Appends a push already encoded for this client (an invalidation), after the reply the
    /// client is about to get when `after_reply`; past the limits the mailbox is emptied and
    /// the client killed.
    pub fn push_encoded(
        &self,
        info: &ClientInfo,
        bytes: &[u8],
        after_reply: bool,
        limit: BufferLimit,
    ) {
        self.push_with(info, limit, after_reply, |out| out.extend_from_slice(bytes));
    }

    fn push_with(
        &self,
        info: &ClientInfo,
        limit: BufferLimit,
        after_reply: bool,
        encode: impl FnOnce(&mut BytesMut),
    ) {
        let mut o = self.outbox.lock();
        if o.closed {
            return;
        }
        encode(if after_reply {
            &mut o.after
        } else {
            &mut o.buf
        });
        self.filled.store(true, Ordering::Release);
        let used = (o.buf.len() + o.after.len() + o.in_flight) as u64;
        let mut over = limit.hard > 0 && used >= limit.hard;
        if limit.soft > 0 && used >= limit.soft {
            match o.soft_since {
                None => o.soft_since = Some(Instant::now()),
                Some(t) => over |= t.elapsed().as_secs() > limit.soft_secs,
            }
        } else {
            o.soft_since = None;
        }
        if over {
            o.closed = true;
            o.buf = BytesMut::new();
            o.after = BytesMut::new();
            drop(o);
            tracing::warn!(
                "Client id={} addr={} scheduled to be closed ASAP for overcoming of output buffer limits.",
                info.id,
                info.addr
            );
            info.kill();
            return;
        }
        drop(o);
        self.ready.notify_one();
    }
}

/// A message to deliver: `message`, `pmessage` or `smessage` with its parts.
struct Message<'a> {
    kind: &'static [u8],
    pattern: Option<&'a [u8]>,
    channel: &'a [u8],
    payload: &'a [u8],
}

impl Message<'_> {
    fn encode(&self, resp3: bool, out: &mut BytesMut) {
        let n = if self.pattern.is_some() { 4 } else { 3 };
        out.extend_from_slice(if resp3 { b">" } else { b"*" });
        out.extend_from_slice(format!("{n}\r\n").as_bytes());
        let mut bulk = |b: &[u8]| {
            out.extend_from_slice(format!("${}\r\n", b.len()).as_bytes());
            out.extend_from_slice(b);
            out.extend_from_slice(b"\r\n");
        };
        bulk(self.kind);
        if let Some(p) = self.pattern {
            bulk(p);
        }
        bulk(self.channel);
        bulk(self.payload);
    }
}

type Subscribers = Vec<Arc<ClientInfo>>;

#[derive(Default)]
struct Registry {
    channels: HashMap<Bytes, Subscribers>,
    /// In subscription order of the patterns.
    patterns: Vec<(Bytes, Subscribers)>,
    shard: HashMap<Bytes, Subscribers>,
}

/// What a node does with the keys another node made ready.
pub type OnReady = Box<dyn Fn(Ready) + Send + Sync>;

/// Keys another node made ready for blocked clients.
pub enum Ready {
    /// These: (database, key) each.
    Keys(Vec<(u32, Bytes)>),
    /// Any key of these databases (SWAPDB).
    Dbs(Vec<u32>),
    /// Any key (messages from the other nodes may have been lost).
    All,
}

/// The server's pub/sub state.
pub struct PubSub {
    reg: Mutex<Registry>,
    notify_flags: AtomicU32,
    /// `client-output-buffer-limit pubsub`, for the mailboxes.
    limit: LimitCell,
    /// `client-output-buffer-limit normal`: the connections apply it to their replies (kept
    /// here, beside the pubsub class, so one CONFIG SET updates both).
    pub normal_limit: LimitCell,
    /// Client-side caching: invalidations travel with the keyspace events.
    pub tracking: crate::tracking::Tracking,
    /// `client-output-buffer-limit slave`: MONITOR clients count against it, as in Redis.
    pub replica_limit: LimitCell,
    /// Over PostgreSQL, the other nodes (`relay.rs`): what this node publishes and its
    /// committed events go to them too.
    relay: std::sync::OnceLock<relis::postgres::Bus>,
    /// Over PostgreSQL, what to do with keys another node made ready (blocked clients).
    on_ready: std::sync::OnceLock<OnReady>,
    /// Over PostgreSQL, until when (Unix ms) another node has said it has tracking clients
    /// ([`crate::relay::Msg::Tracking`]): till then this node's writes tell the others what
    /// they change.
    remote_tracking: std::sync::atomic::AtomicI64,
    /// When this node last said it has tracking clients (Unix ms).
    told_tracking: std::sync::atomic::AtomicI64,
}

/// How long another node's [`crate::relay::Msg::Tracking`] counts (it repeats every second).
const REMOTE_TRACKING_MS: i64 = 3000;

impl Default for PubSub {
    fn default() -> Self {
        PubSub {
            reg: Mutex::default(),
            notify_flags: AtomicU32::new(0),
            limit: {
                let l = LimitCell::default();
                l.store(class_limit("", "pubsub"));
                l
            },
            normal_limit: LimitCell::default(),
            tracking: Default::default(),
            remote_tracking: Default::default(),
            told_tracking: Default::default(),
            replica_limit: {
                let l = LimitCell::default();
                l.store(class_limit("", "slave"));
                l
            },
            relay: std::sync::OnceLock::new(),
            on_ready: std::sync::OnceLock::new(),
        }
    }
}

impl PubSub {
    /// Applies `notify-keyspace-events` and `client-output-buffer-limit` from the config.
    pub fn configure(&self, config: &crate::config::Config) {
        // The stored letters, not CONFIG GET's rendering (which can hide `n`).
        let flags = config
            .passive
            .iter()
            .find(|(n, _)| *n == "notify-keyspace-events")
            .and_then(|(_, v)| parse_notify_flags(v))
            .unwrap_or(0);
        let _ = self
            .notify_flags
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |f| {
                Some(flags | f & TRACKING)
            });
        self.tracking
            .set_max_keys(config.tracking_table_max_keys as usize);
        let limits = config.get("client-output-buffer-limit").unwrap_or_default();
        self.limit.store(class_limit(&limits, "pubsub"));
        self.normal_limit.store(class_limit(&limits, "normal"));
        self.replica_limit.store(class_limit(&limits, "slave"));
    }

    fn limit(&self) -> BufferLimit {
        self.limit.load()
    }

    /// The output-buffer limits invalidation pushes count against (normal, pubsub).
    pub fn push_limits(&self) -> crate::tracking::Limits {
        (self.normal_limit.load(), self.limit.load())
    }

    /// Whether any client tracks keys (one atomic load).
    pub fn tracking_active(&self) -> bool {
        self.notify_flags.load(Ordering::Relaxed) & TRACKING != 0
    }

    /// Records whether any client tracks keys: while one does, every write records its events
    /// (and, over PostgreSQL, the other nodes are told at once, so that their writes tell this
    /// one what they change).
    pub fn set_tracking_active(&self, on: bool) {
        if on {
            let was = self.notify_flags.fetch_or(TRACKING, Ordering::Relaxed);
            if was & TRACKING == 0 {
                self.tell_tracking(true);
            }
        } else {
            self.notify_flags.fetch_and(!TRACKING, Ordering::Relaxed);
        }
    }

    /// Over PostgreSQL, tells the other nodes this one has tracking clients: at once when
    /// `now`, else if a second has passed since it last did (the server's sampler calls this
    /// every 100 ms).
    pub fn tell_tracking(&self, now: bool) {
        if !self.relays() || !self.tracking_active() {
            return;
        }
        let t = crate::state::unix_ms();
        if now || t - self.told_tracking.load(Ordering::Relaxed) >= 1000 {
            self.told_tracking.store(t, Ordering::Relaxed);
            self.relay(&crate::relay::Msg::Tracking);
        }
    }

    /// Whether another node has tracking clients (it said so within the last few seconds).
    fn remote_tracking(&self) -> bool {
        self.remote_tracking.load(Ordering::Relaxed) > crate::state::unix_ms()
    }

    /// Client `id` went away: it tracks no more, and redirections to it break.
    pub fn client_gone(&self, id: u64) {
        if self.tracking_active() && self.tracking.client_gone(id) {
            self.set_tracking_active(false);
        }
    }

    /// Joins the other nodes sharing the PostgreSQL at `url` (backend postgres): starts the bus,
    /// whose messages from other nodes this node delivers as its own ([`PubSub::received`]).
    pub fn join_nodes(self: &Arc<Self>, url: &str) {
        let me = Arc::downgrade(self);
        let bus = relis::postgres::Bus::start(
            url,
            Arc::new(move |m: &[u8]| {
                if let Some(me) = me.upgrade() {
                    me.received(m);
                }
            }),
        );
        let _ = self.relay.set(bus);
    }

    /// Sets what is done with keys another node made ready (serving this node's blocked
    /// clients); the first call takes effect.
    pub fn on_ready(&self, f: OnReady) {
        let _ = self.on_ready.set(f);
    }

    /// Tells the other nodes (if any) of `msg`.
    pub fn relay(&self, msg: &crate::relay::Msg) {
        if let Some(bus) = self.relay.get() {
            bus.send(msg.encode());
        }
    }

    /// Whether other nodes are told (backend postgres).
    pub fn relays(&self) -> bool {
        self.relay.get().is_some()
    }

    /// A message from another node: delivered here as if made here, never relayed again.
    fn received(&self, bytes: &[u8]) {
        use crate::relay::Msg;
        if bytes.is_empty() {
            self.missed();
            return;
        }
        match Msg::decode(bytes) {
            Some(Msg::Publish {
                shard,
                channel,
                message,
            }) => {
                self.publish(&channel, &message, shard);
            }
            Some(Msg::Events(events)) => {
                let flags = self.notify_flags.load(Ordering::Relaxed);
                for (class, db, event, key) in events {
                    self.notify(flags, class, db, &event, &key);
                }
            }
            Some(Msg::Ready(keys)) => {
                if let Some(f) = self.on_ready.get() {
                    f(Ready::Keys(keys));
                }
            }
            Some(Msg::ReadyDbs(dbs)) => {
                if let Some(f) = self.on_ready.get() {
                    f(Ready::Dbs(dbs));
                }
            }
            Some(Msg::Tracking) => {
                self.remote_tracking.store(
                    crate::state::unix_ms() + REMOTE_TRACKING_MS,
                    Ordering::Relaxed,
                );
            }
            Some(Msg::Invalidate(keys)) => {
                let events: Vec<KeyEvent> = keys
                    .into_iter()
                    .map(|(db, key, flush)| KeyEvent {
                        class: if flush {
                            class::FLUSHED
                        } else {
                            class::MODIFIED
                        },
                        event: "invalidate",
                        db,
                        key: key.to_vec(),
                        origin: 0,
                    })
                    .collect();
                if self.tracking_active() {
                    self.tracking.invalidate(&events, self.push_limits());
                }
            }
            None => tracing::warn!("postgres bus: a message this version cannot read"),
        }
    }

    /// The bus may have lost messages from other nodes (this node's listener connected again,
    /// or another node's sender dropped some): what they would have said is assumed. Tracking
    /// clients get the null invalidation (forget every cached key), and every key a client
    /// is blocked on is tried again. Lost pub/sub messages and keyspace notifications stay
    /// lost, as Redis's own are at most once.
    fn missed(&self) {
        tracing::warn!("postgres bus: messages from other nodes may have been lost");
        if self.tracking_active() {
            let flush = KeyEvent {
                class: class::FLUSHED,
                event: "invalidate",
                db: 0,
                key: Vec::new(),
                origin: 0,
            };
            self.tracking.invalidate(&[flush], self.push_limits());
        }
        if let Some(f) = self.on_ready.get() {
            f(Ready::All);
        }
    }

    /// PUBLISH or SPUBLISH as a client (or a script) runs it: delivered here at once, and sent
    /// to the other nodes; returns how many of this node's clients receive it (as PUBLISH in a
    /// Redis cluster counts the receiving node's only).
    pub fn publish_everywhere(&self, channel: &Bytes, msg: &Bytes, shard: bool) -> usize {
        let n = self.publish(channel, msg, shard);
        self.relay(&crate::relay::Msg::Publish {
            shard,
            channel: channel.clone(),
            message: msg.clone(),
        });
        n
    }

    /// Publishes the keyspace notifications of one event as `flags` (notify-keyspace-events)
    /// asks.
    fn notify(&self, flags: u32, class: u32, db: u32, event: &[u8], key: &[u8]) {
        if flags & (KEYSPACE | KEYEVENT) == 0 || flags & class == 0 {
            return;
        }
        if flags & KEYSPACE != 0 {
            let mut ch = format!("__keyspace@{db}__:").into_bytes();
            ch.extend_from_slice(key);
            PubSub::publish(self, &ch, event, false);
        }
        if flags & KEYEVENT != 0 {
            let mut ch = format!("__keyevent@{db}__:").into_bytes();
            ch.extend_from_slice(event);
            PubSub::publish(self, &ch, key, false);
        }
    }

    /// PUBLISH (`shard` false) or SPUBLISH: delivers `msg` to the subscribers of `channel` (and,
    /// for PUBLISH, of every matching pattern) on this node; returns how many receive it.
    pub fn publish(&self, channel: &[u8], msg: &[u8], shard: bool) -> usize {
        let limit = self.limit();
        let reg = self.reg.lock();
        let mut n = 0;
        let direct = if shard {
            reg.shard.get(channel)
        } else {
            reg.channels.get(channel)
        };
        if let Some(subs) = direct {
            let m = Message {
                kind: if shard { b"smessage" } else { b"message" },
                pattern: None,
                channel,
                payload: msg,
            };
            for info in subs {
                info.pubsub.push(info, &m, limit);
                n += 1;
            }
        }
        if !shard {
            for (pat, subs) in &reg.patterns {
                if !relis::glob::glob_match(pat, channel, false) {
                    continue;
                }
                let m = Message {
                    kind: b"pmessage",
                    pattern: Some(pat),
                    channel,
                    payload: msg,
                };
                for info in subs {
                    info.pubsub.push(info, &m, limit);
                    n += 1;
                }
            }
        }
        n
    }

    /// Active channels (or shard channels) matching `pattern` (all without one).
    pub fn channels(&self, pattern: Option<&[u8]>, shard: bool) -> Vec<Bytes> {
        let reg = self.reg.lock();
        let map = if shard { &reg.shard } else { &reg.channels };
        map.keys()
            .filter(|c| pattern.is_none_or(|p| relis::glob::glob_match(p, c, false)))
            .cloned()
            .collect()
    }

    /// Subscribers of each channel (or shard channel), pattern subscriptions not counted.
    pub fn numsub(&self, channels: &[Bytes], shard: bool) -> Vec<usize> {
        let reg = self.reg.lock();
        let map = if shard { &reg.shard } else { &reg.channels };
        channels
            .iter()
            .map(|c| map.get(c).map_or(0, Vec::len))
            .collect()
    }

    /// Distinct patterns with subscribers (PUBSUB NUMPAT, INFO pubsub_patterns).
    pub fn numpat(&self) -> usize {
        self.reg.lock().patterns.len()
    }

    /// Active channels, patterns and shard channels (INFO).
    pub fn counts(&self) -> (usize, usize, usize) {
        let reg = self.reg.lock();
        (reg.channels.len(), reg.patterns.len(), reg.shard.len())
    }

    fn add(&self, kind: Kind, name: &Bytes, info: &Arc<ClientInfo>) {
        let mut reg = self.reg.lock();
        match kind {
            Kind::Channel => reg.channels.entry(name.clone()).or_default(),
            Kind::Shard => reg.shard.entry(name.clone()).or_default(),
            Kind::Pattern => {
                let i = match reg.patterns.iter().position(|(p, _)| p == name) {
                    Some(i) => i,
                    None => {
                        reg.patterns.push((name.clone(), Vec::new()));
                        reg.patterns.len() - 1
                    }
                };
                &mut reg.patterns[i].1
            }
        }
        .push(info.clone());
    }

    fn remove(&self, kind: Kind, name: &[u8], id: u64) {
        let mut reg = self.reg.lock();
        let drop_from = |subs: &mut Subscribers| {
            subs.retain(|i| i.id != id);
            subs.is_empty()
        };
        match kind {
            Kind::Channel | Kind::Shard => {
                let map = if kind == Kind::Channel {
                    &mut reg.channels
                } else {
                    &mut reg.shard
                };
                if map.get_mut(name).is_some_and(drop_from) {
                    map.remove(name);
                }
            }
            Kind::Pattern => {
                if let Some(i) = reg.patterns.iter().position(|(p, _)| p == name) {
                    if drop_from(&mut reg.patterns[i].1) {
                        reg.patterns.remove(i);
                    }
                }
            }
        }
    }

    /// A read looked `key` up in `db` and did not find it: Redis's `keymiss` event, published at
    /// once (a read has no transaction to wait for). If someone listens for `expired` events,
    /// the key may be one that has just expired: the writer then deletes it and emits
    /// `expired`, as Redis's lazy expiry does on a read (Relis's reads only hide expired keys),
    /// and the `keymiss` follows it, as in Redis, where the lookup misses after the deletion.
    ///
    /// `expire` is false on a replica, which leaves expiry to its master (as a Redis replica's
    /// reads only hide expired keys): the miss is published without a deletion.
    pub fn key_missed(self: &Arc<Self>, engine: &relis::Db, db: u32, key: &[u8], expire: bool) {
        let miss = self.wants_class(class::KEY_MISS).then(|| KeyEvent {
            class: class::KEY_MISS,
            event: "keymiss",
            db,
            key: key.to_vec(),
            origin: 0,
        });
        // A tracking client may hold the key: Redis's lazy expiry deletes it on the read, and
        // the deletion invalidates it.
        if expire
            && (self.wants_class(class::EXPIRED)
                || self.tracking_active() && self.tracking.may_hold(key))
        {
            let me = Arc::clone(self);
            engine.expire_if_needed_then(db, key.to_vec(), move || {
                if let Some(e) = miss {
                    relis::events::EventSink::publish(&*me, vec![e]);
                }
            });
        } else if let Some(e) = miss {
            relis::events::EventSink::publish(&**self, vec![e]);
        }
    }

    /// The channels (shard channels included) and the patterns client `id` is subscribed to.
    pub fn subscriptions_of(&self, id: u64) -> (Vec<Bytes>, Vec<Bytes>) {
        let reg = self.reg.lock();
        let has = |subs: &Subscribers| subs.iter().any(|c| c.id == id);
        let channels = reg
            .channels
            .iter()
            .chain(reg.shard.iter())
            .filter(|(_, subs)| has(subs))
            .map(|(ch, _)| ch.clone())
            .collect();
        let patterns = reg
            .patterns
            .iter()
            .filter(|(_, subs)| has(subs))
            .map(|(p, _)| p.clone())
            .collect();
        (channels, patterns)
    }

    /// Whether [`PubSub::key_missed`] would publish or expire anything.
    pub fn notifies_misses(&self) -> bool {
        self.wants_class(class::KEY_MISS | class::EXPIRED) || self.tracking_active()
    }

    fn wants_class(&self, class: u32) -> bool {
        let f = self.notify_flags.load(Ordering::Relaxed);
        f & class != 0 && f & (KEYSPACE | KEYEVENT) != 0
    }
}

impl relis::events::EventSink for PubSub {
    fn wants(&self, class: u32) -> bool {
        let f = self.notify_flags.load(Ordering::Relaxed);
        f & TRACKING != 0
            || f & class != 0 && f & (KEYSPACE | KEYEVENT) != 0
            || self.relays() && self.remote_tracking()
    }

    fn publish(&self, events: Vec<KeyEvent>) {
        let flags = self.notify_flags.load(Ordering::Relaxed);
        if flags & TRACKING != 0 {
            self.tracking.invalidate(&events, self.push_limits());
        }
        // The other nodes get the notifications (what this node recorded: configure
        // notify-keyspace-events alike on every node), not the tracking invalidations.
        if self.relays() {
            let relayed: Vec<_> = events
                .iter()
                .filter(|e| e.class & (class::FLUSHED | class::MODIFIED) == 0)
                .map(|e| {
                    (
                        e.class,
                        e.db,
                        Bytes::from_static(e.event.as_bytes()),
                        Bytes::copy_from_slice(&e.key),
                    )
                })
                .collect();
            if !relayed.is_empty() {
                self.relay(&crate::relay::Msg::Events(relayed));
            }
            // Another node's tracking clients hear of every change (as this node's own do).
            if self.remote_tracking() {
                let changed: Vec<_> = events
                    .iter()
                    .filter(|e| e.class != class::KEY_MISS)
                    .map(|e| {
                        (
                            e.db,
                            Bytes::copy_from_slice(&e.key),
                            e.class == class::FLUSHED,
                        )
                    })
                    .collect();
                if !changed.is_empty() {
                    self.relay(&crate::relay::Msg::Invalidate(changed));
                }
            }
        }
        if flags & (KEYSPACE | KEYEVENT) == 0 {
            return;
        }
        for e in events {
            // The flags may have changed since the event was recorded.
            self.notify(flags, e.class, e.db, e.event.as_bytes(), &e.key);
        }
    }
}

/// Records `del` for `key` when the command that just ran emptied it: a collection that loses
/// its last element is deleted, which Redis reports after the command's own event. Looks only
/// when someone listens for generic events.
///
/// # Errors
/// Storage errors.
pub fn notify_if_emptied(w: &mut relis::Writer<'_>, db: u32, key: &[u8]) -> relis::Result<()> {
    if w.wants_events(class::GENERIC) && w.meta(db, key)?.is_none() {
        w.notify(class::GENERIC, "del", db, key);
    }
    Ok(())
}

/// A connection's own subscriptions.
pub struct Subscriptions {
    channels: Ordered,
    patterns: Ordered,
    shard: Ordered,
}

impl Default for Subscriptions {
    fn default() -> Self {
        Subscriptions {
            channels: Ordered::default(),
            patterns: Ordered::keeping_order(),
            shard: Ordered::default(),
        }
    }
}

/// A client's names of one kind, with their positions. Patterns keep their subscription order
/// (Redis keeps a client's patterns in a list: PUNSUBSCRIBE without arguments leaves them in
/// that order); channels are a hash in Redis, whose order nobody can rely on, so removing one
/// moves the last in its place (constant time, for clients with many channels).
#[derive(Default)]
struct Ordered {
    order: Vec<Bytes>,
    index: HashMap<Bytes, usize>,
    keep_order: bool,
}

impl Ordered {
    fn keeping_order() -> Ordered {
        Ordered {
            keep_order: true,
            ..Ordered::default()
        }
    }

    fn insert(&mut self, b: &Bytes) -> bool {
        if self.index.contains_key(b) {
            return false;
        }
        self.index.insert(b.clone(), self.order.len());
        self.order.push(b.clone());
        true
    }

    fn remove(&mut self, b: &[u8]) -> bool {
        let Some(i) = self.index.remove(b) else {
            return false;
        };
        if self.keep_order {
            self.order.remove(i);
            for (j, name) in self.order.iter().enumerate().skip(i) {
                self.index.insert(name.clone(), j);
            }
        } else {
            self.order.swap_remove(i);
            if let Some(moved) = self.order.get(i) {
                self.index.insert(moved.clone(), i);
            }
        }
        true
    }

    fn len(&self) -> usize {
        self.order.len()
    }
}

impl Subscriptions {
    fn of(&mut self, kind: Kind) -> &mut Ordered {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
            Kind::Shard => &mut self.shard,
        }
    }

    /// Whether there is any subscription.
    pub fn any(&self) -> bool {
        self.channels.len() + self.patterns.len() + self.shard.len() > 0
    }

    /// The count a (un)subscribe reply carries: channels and patterns together, or shard
    /// channels alone (Redis's `clientSubscriptionsCount` / `clientShardSubscriptionsCount`).
    fn count(&self, kind: Kind) -> i64 {
        match kind {
            Kind::Shard => self.shard.len() as i64,
            _ => (self.channels.len() + self.patterns.len()) as i64,
        }
    }
}

fn confirmation(word: &'static [u8], name: Option<&Bytes>, count: i64) -> Frame {
    Frame::Push(vec![
        Frame::Bulk(Bytes::from_static(word)),
        name.map_or(Frame::Null, |n| Frame::Bulk(n.clone())),
        Frame::Integer(count),
    ])
}

fn sync_counts(c: &Client) {
    let m = &c.info.pubsub;
    m.channels.store(c.subs.channels.len(), Ordering::Relaxed);
    m.patterns.store(c.subs.patterns.len(), Ordering::Relaxed);
    m.shard.store(c.subs.shard.len(), Ordering::Relaxed);
}

/// (P|S)SUBSCRIBE: subscribes the client to each name; one confirmation per name.
pub fn subscribe(c: &mut Client, kind: Kind, names: Vec<Bytes>) -> Vec<Frame> {
    let ps = c.server.pubsub.clone();
    c.mailbox_used = true;
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        if c.subs.of(kind).insert(&name) {
            ps.add(kind, &name, &c.info);
        }
        out.push(confirmation(
            kind.subscribe_word(),
            Some(&name),
            c.subs.count(kind),
        ));
    }
    sync_counts(c);
    out
}

/// (P|S)UNSUBSCRIBE: unsubscribes from each name, or from every one of that kind when `names`
/// is empty; one confirmation per name (one with a nil name when there was nothing to leave).
pub fn unsubscribe(c: &mut Client, kind: Kind, names: Vec<Bytes>) -> Vec<Frame> {
    let ps = c.server.pubsub.clone();
    let mut out = Vec::with_capacity(names.len().max(1));
    if names.is_empty() {
        // Everything of this kind, in one go.
        let before = c.subs.count(kind);
        let all = std::mem::replace(
            c.subs.of(kind),
            match kind {
                Kind::Pattern => Ordered::keeping_order(),
                _ => Ordered::default(),
            },
        );
        for (i, name) in all.order.iter().enumerate() {
            ps.remove(kind, name, c.info.id);
            out.push(confirmation(
                kind.unsubscribe_word(),
                Some(name),
                before - i as i64 - 1,
            ));
        }
    }
    for name in &names {
        if c.subs.of(kind).remove(name) {
            ps.remove(kind, name, c.info.id);
        }
        out.push(confirmation(
            kind.unsubscribe_word(),
            Some(name),
            c.subs.count(kind),
        ));
    }
    if out.is_empty() {
        out.push(confirmation(
            kind.unsubscribe_word(),
            None,
            c.subs.count(kind),
        ));
    }
    sync_counts(c);
    out
}

/// Leaves every subscription without a word to the client (RESET, disconnection).
pub fn unsubscribe_all(c: &mut Client) {
    if !c.subs.any() {
        return;
    }
    let ps = c.server.pubsub.clone();
    let subs = std::mem::take(&mut c.subs);
    for (kind, names) in [
        (Kind::Channel, subs.channels),
        (Kind::Pattern, subs.patterns),
        (Kind::Shard, subs.shard),
    ] {
        for name in names.order {
            ps.remove(kind, &name, c.info.id);
        }
    }
    sync_counts(c);
    c.info.pubsub.discard();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordered_names() {
        let names = |o: &Ordered| {
            o.order
                .iter()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        };
        for keep in [true, false] {
            let mut o = if keep {
                Ordered::keeping_order()
            } else {
                Ordered::default()
            };
            for n in ["a", "b", "c", "d"] {
                assert!(o.insert(&Bytes::from(n)));
            }
            assert!(!o.insert(&Bytes::from("b")));
            assert!(o.remove(b"b"));
            assert!(!o.remove(b"b"));
            assert_eq!(names(&o), if keep { "a c d" } else { "a d c" });
            // Positions stay right after the move.
            assert!(o.remove(b"d"));
            assert!(o.remove(b"a"));
            assert_eq!(names(&o), "c");
            assert!(o.remove(b"c"));
            assert_eq!(o.len(), 0);
            assert!(o.index.is_empty());
        }
    }

    #[test]
    fn notify_flags_as_redis_prints_them() {
        let norm = |s: &str| parse_notify_flags(s).map(notify_flags_string);
        assert_eq!(norm("KEA").as_deref(), Some("AKE"));
        assert_eq!(norm("gE$lshzxetdnm").as_deref(), Some("AEm"));
        assert_eq!(norm("Elg").as_deref(), Some("glE"));
        assert_eq!(norm("Kn").as_deref(), Some("nK"));
        assert_eq!(norm("").as_deref(), Some(""));
        assert_eq!(norm("Q"), None);
    }

    #[test]
    fn buffer_limits_normalised() {
        let def = "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60";
        assert_eq!(
            parse_buffer_limits("pubsub 1mb 2k 3", def).unwrap(),
            "normal 0 0 0 slave 268435456 67108864 60 pubsub 1048576 2000 3"
        );
        assert_eq!(
            parse_buffer_limits("replica 1 2 3 normal 4 5 6", def).unwrap(),
            "normal 4 5 6 slave 1 2 3 pubsub 33554432 8388608 60"
        );
        assert_eq!(
            parse_buffer_limits("pubsub 1", def).unwrap_err(),
            "Wrong number of arguments in buffer limit configuration."
        );
        assert_eq!(
            parse_buffer_limits("foo 1 2 3", def).unwrap_err(),
            "Invalid client class specified in buffer limit configuration."
        );
        assert_eq!(
            parse_buffer_limits("pubsub 1 2 -3", def).unwrap_err(),
            "Error in hard, soft or soft_seconds setting in buffer limit configuration."
        );
        assert_eq!(
            class_limit(
                &parse_buffer_limits("pubsub 1mb 2k 3", def).unwrap(),
                "pubsub"
            ),
            BufferLimit {
                hard: 1 << 20,
                soft: 2000,
                soft_secs: 3
            }
        );
        // Redis's defaults: no limit for normal clients.
        assert_eq!(
            class_limit(def, "normal"),
            BufferLimit {
                hard: 0,
                soft: 0,
                soft_secs: 0
            }
        );
        let set = parse_buffer_limits("normal 1mb 512kb 10", def).unwrap();
        assert_eq!(
            set,
            "normal 1048576 524288 10 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
        );
        assert_eq!(
            class_limit(&set, "normal"),
            BufferLimit {
                hard: 1 << 20,
                soft: 512 << 10,
                soft_secs: 10
            }
        );
        assert_eq!(class_limit(&set, "pubsub"), class_limit(def, "pubsub"));
    }
}
