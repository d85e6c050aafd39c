//! Messages between the nodes that share one PostgreSQL (issue 19): what one node publishes
//! (pub/sub messages, keyspace events, keys made ready for blocked clients) reaches every
//! other node through `LISTEN`/`NOTIFY` on the channel `relis_bus`. The bus carries opaque
//! bytes: the server decides what they mean.
//!
//! Costs it avoids: a `NOTIFY` inside a data transaction would take PostgreSQL's global
//! notification lock at every commit, serializing the nodes' commits, so the bus sends from a
//! connection of its own, after the data committed, many messages per round trip (one implicit
//! transaction per batch). A payload is at most 8,000 bytes: a message whose hex form fits is
//! sent inline (`=`), a larger one is stored as a row of `relis_bus` and the notification
//! carries its id (`#`), which receivers read; rows older than [`KEEP_ROWS`] are deleted by
//! the senders. Each notification starts with the sending node's id and a sequence number:
//! receivers skip their own node's (each node delivers its own messages itself, at once), and
//! PostgreSQL, which folds identical notifications of one transaction into one, never sees two
//! alike.
//!
//! Delivery is at most once: a message sent while a node's listening connection is down (it
//! reconnects every second), or one its sender could not send, is not seen. The bus says when
//! that may have happened: a listener that connects again, and every node after a sender lost
//! messages (the sender's next batch starts with one), get an empty message, which tells the
//! server that anything may have changed meanwhile.

use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, NoTls};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The notification channel of a database without the bus's secret channel (schema version
/// before 6); [`channel`] reads the one to use.
const CHANNEL: &str = "relis_bus";

/// Largest notification text sent inline (PostgreSQL refuses payloads of 8,000 bytes or more).
const INLINE_MAX: usize = 7900;

/// How long a stored large message stays for receivers to read.
pub const KEEP_ROWS: Duration = Duration::from_secs(60);

/// Most messages sent in one round trip.
const BATCH: usize = 256;

/// What a node does with another node's message.
pub type Deliver = Arc<dyn Fn(&[u8]) + Send + Sync>;

/// One node's end of the bus: a sending thread and a listening thread, each with its own
/// connection. Dropping it stops both.
pub struct Bus {
    tx: Option<crossbeam_channel::Sender<Vec<u8>>>,
    stop: Arc<AtomicBool>,
    node: u64,
}

impl Bus {
    /// Starts the node's sender and listener on `url` (they connect, and connect again after a
    /// failure, on their own threads: starting never fails). `deliver` gets every message
    /// another node sends, in the order that node sent them, on the listener's thread, and an
    /// empty message where some may have been lost (see the module documentation).
    pub fn start(url: &str, deliver: Deliver) -> Bus {
        let node = node_id();
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = crossbeam_channel::unbounded::<Vec<u8>>();
        let u = url.to_string();
        let _ = std::thread::Builder::new()
            .name("relis-bus-send".into())
            .spawn(move || send_loop(&u, node, rx));
        let (u, s) = (url.to_string(), stop.clone());
        let _ = std::thread::Builder::new()
            .name("relis-bus-listen".into())
            .spawn(move || listen_loop(&u, node, &s, &*deliver));
        Bus {
            tx: Some(tx),
            stop,
            node,
        }
    }

    /// Sends `msg` to every other node (queued: this never blocks).
    pub fn send(&self, msg: Vec<u8>) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(msg);
        }
    }

    /// This node's id on the bus (random per start).
    pub fn node(&self) -> u64 {
        self.node
    }
}

impl Drop for Bus {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // The sender sends what is queued, then ends.
        self.tx.take();
    }
}

/// A node id unlikely to repeat: the time, the process id and a per-process count, mixed.
fn node_id() -> u64 {
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut h = t ^ (u64::from(std::process::id()) << 32) ^ COUNT.fetch_add(1, Ordering::Relaxed);
    // splitmix64's finalizer.
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// The channel the nodes talk on: the secret name in `relis_bus_channel` (migration 6), which
/// only the backend's user may read, so no other role (SQL.*'s sandbox) can listen or notify
/// on it; [`CHANNEL`] on an older schema.
fn channel(c: &mut Client) -> Result<String, postgres::Error> {
    let mut tx = c.transaction()?;
    tx.batch_execute("SAVEPOINT s")?;
    let name = match tx.query_opt("SELECT name FROM relis_bus_channel", &[]) {
        Ok(row) => row.map_or_else(|| CHANNEL.to_string(), |r| r.get(0)),
        Err(e) if e.code() == Some(&postgres::error::SqlState::UNDEFINED_TABLE) => {
            tx.batch_execute("ROLLBACK TO SAVEPOINT s")?;
            CHANNEL.to_string()
        }
        Err(e) => return Err(e),
    };
    tx.commit()?;
    Ok(name)
}

/// A connection for the bus, and the channel to use on it.
fn connect(url: &str) -> Option<(Client, String)> {
    match Client::connect(url, NoTls).and_then(|mut c| {
        super::read_committed(&mut c)?;
        let name = channel(&mut c)?;
        Ok((c, name))
    }) {
        Ok(c) => Some(c),
        Err(e) => {
            tracing::warn!("postgres bus: cannot connect: {e}");
            None
        }
    }
}

fn hex(out: &mut String, bytes: &[u8]) {
    out.reserve(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok())
        .collect()
}

/// The SQL that sends `batch` (statements of one simple query: one implicit transaction).
fn batch_sql(channel: &str, node: u64, seq: &mut u64, batch: &[Vec<u8>], sweep: bool) -> String {
    let mut sql = String::new();
    for msg in batch {
        *seq += 1;
        let prefix = format!("{node:016x}{:016x}", *seq);
        if prefix.len() + 1 + 2 * msg.len() <= INLINE_MAX {
            let _ = write!(sql, "SELECT pg_notify('{channel}', '{prefix}=");
            hex(&mut sql, msg);
            sql.push_str("');");
        } else {
            sql.push_str("WITH m AS (INSERT INTO relis_bus (body) VALUES (decode('");
            hex(&mut sql, msg);
            let _ = write!(
                sql,
                "', 'hex')) RETURNING id) SELECT pg_notify('{channel}', '{prefix}#' || id) FROM m;"
            );
        }
    }
    if sweep {
        let _ = write!(
            sql,
            "DELETE FROM relis_bus WHERE at < now() - interval '{} seconds';",
            KEEP_ROWS.as_secs()
        );
    }
    sql
}

fn send_loop(url: &str, node: u64, rx: crossbeam_channel::Receiver<Vec<u8>>) {
    let mut client: Option<(Client, String)> = None;
    let mut seq = 0u64;
    let mut last_sweep = Instant::now();
    let mut batch = Vec::with_capacity(BATCH);
    // Messages were dropped since the last batch sent: the next one says so first.
    let mut lost = false;
    while let Ok(first) = rx.recv() {
        if lost {
            batch.push(Vec::new());
        }
        batch.push(first);
        while batch.len() < BATCH {
            match rx.try_recv() {
                Ok(m) => batch.push(m),
                Err(_) => break,
            }
        }
        if client.as_ref().is_none_or(|(c, _)| c.is_closed()) {
            client = connect(url);
        }
        let Some((c, channel)) = client.as_mut() else {
            tracing::warn!("postgres bus: {} messages not sent", batch.len());
            batch.clear();
            lost = true;
            continue;
        };
        let sweep = last_sweep.elapsed() >= KEEP_ROWS / 2;
        if sweep {
            last_sweep = Instant::now();
        }
        let sql = batch_sql(channel, node, &mut seq, &batch, sweep);
        match c.simple_query(&sql) {
            Ok(_) => lost = false,
            Err(e) => {
                tracing::warn!("postgres bus: {} messages not sent: {e}", batch.len());
                lost = true;
            }
        }
        batch.clear();
    }
}

/// One notification as read: whose, and the message or the id of its row.
enum Note {
    Inline(Vec<u8>),
    Stored(i64),
}

fn parse(payload: &str, own: u64) -> Option<Note> {
    let node = u64::from_str_radix(payload.get(..16)?, 16).ok()?;
    if node == own {
        return None;
    }
    let rest = payload.get(32..)?;
    match rest.as_bytes().first()? {
        b'=' => unhex(&rest[1..]).map(Note::Inline),
        b'#' => rest[1..].parse().ok().map(Note::Stored),
        _ => None,
    }
}

fn listen_loop(url: &str, node: u64, stop: &AtomicBool, deliver: &(dyn Fn(&[u8]) + Send + Sync)) {
    // Listening before: what was sent while it was not is lost.
    let mut listened = false;
    while !stop.load(Ordering::Relaxed) {
        let Some((mut client, channel)) = connect(url) else {
            std::thread::sleep(Duration::from_secs(1));
            continue;
        };
        if let Err(e) = client.batch_execute(&format!("LISTEN {channel}")) {
            tracing::warn!("postgres bus: cannot listen: {e}");
            std::thread::sleep(Duration::from_secs(1));
            continue;
        }
        if listened {
            deliver(&[]);
        }
        listened = true;
        let mut broken = false;
        while !broken && !stop.load(Ordering::Relaxed) {
            let mut notes = Vec::new();
            {
                let mut n = client.notifications();
                match n.timeout_iter(Duration::from_millis(200)).next() {
                    Ok(None) => continue,
                    Ok(Some(first)) => notes.push(first),
                    Err(e) => {
                        tracing::warn!("postgres bus: listening failed: {e}");
                        broken = true;
                    }
                }
                // What else has arrived, without waiting.
                let mut more = n.iter();
                loop {
                    match more.next() {
                        Ok(Some(note)) => notes.push(note),
                        Ok(None) => break,
                        Err(_) => {
                            broken = true;
                            break;
                        }
                    }
                }
            }
            let notes: Vec<Note> = notes
                .iter()
                .filter_map(|n| parse(n.payload(), node))
                .collect();
            let ids: Vec<i64> = notes
                .iter()
                .filter_map(|n| match n {
                    Note::Stored(id) => Some(*id),
                    Note::Inline(_) => None,
                })
                .collect();
            let mut stored = std::collections::HashMap::new();
            if !ids.is_empty() {
                match client.query("SELECT id, body FROM relis_bus WHERE id = ANY($1)", &[&ids]) {
                    Ok(rows) => {
                        for r in rows {
                            stored.insert(r.get::<_, i64>(0), r.get::<_, Vec<u8>>(1));
                        }
                    }
                    Err(e) => tracing::warn!("postgres bus: cannot read stored messages: {e}"),
                }
            }
            for n in notes {
                match n {
                    Note::Inline(m) => deliver(&m),
                    Note::Stored(id) => {
                        if let Some(m) = stored.get(&id) {
                            deliver(m);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_name_their_node_and_skip_their_own() {
        let mut seq = 0;
        let sql = batch_sql("relis_bus", 7, &mut seq, &[b"hi".to_vec()], false);
        assert_eq!(
            sql,
            "SELECT pg_notify('relis_bus', '00000000000000070000000000000001=6869');"
        );
        let payload = "00000000000000070000000000000001=6869";
        assert!(parse(payload, 7).is_none());
        assert!(matches!(parse(payload, 8), Some(Note::Inline(m)) if m == b"hi"));
        // Too long for a payload: stored, by reference.
        let big = vec![0u8; INLINE_MAX];
        let sql = batch_sql("relis_bus", 7, &mut seq, &[big], true);
        assert!(sql.starts_with("WITH m AS (INSERT INTO relis_bus"), "{sql}");
        assert!(sql.contains("'00000000000000070000000000000002#' || id"));
        assert!(sql.ends_with("interval '60 seconds';"));
        assert!(matches!(
            parse("00000000000000070000000000000002#42", 1),
            Some(Note::Stored(42))
        ));
        // Anyone may NOTIFY the channel: what is not a node's notification is ignored.
        for junk in [
            "",
            "garbage",
            "zz000000000000070000000000000001=00",
            "00000000000000070000000000000001=6",
            "00000000000000070000000000000001=zz",
            "00000000000000070000000000000001#x",
            "00000000000000070000000000000001?00",
            "0000000000000007000000000000000é=00",
        ] {
            assert!(parse(junk, 1).is_none(), "{junk}");
        }
    }
}
