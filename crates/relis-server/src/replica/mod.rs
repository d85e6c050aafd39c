//! Relis as a replica of a Redis 7.0 master: `REPLICAOF host port` (or `replicaof` in the
//! configuration) starts a task that keeps a link to the master with [`repl`] and applies what
//! it sends; `REPLICAOF NO ONE` stops it and the server is a master again, with its data.
//!
//! - **Full sync.** The master's RDB payload is loaded as it arrives with the RDB importer
//!   ([`crate::rdbfile::load_replacing`]), in one transaction that empties the keyspace and the
//!   function libraries (Redis's replica replaces its whole dataset), loads, and stores the
//!   payload's position: a failed or killed sync leaves the old dataset with its position.
//!   Keys already expired in it are left out. Meanwhile `INFO` says `loading:1` and commands
//!   without Redis's `loading` flag get `-LOADING`.
//! - **The stream.** Commands that arrived together (all the socket holds when a job is
//!   gathered, up to `JOB_COMMANDS`) are applied in one write job, so one transaction: a MULTI/EXEC block is never split, a script's effects (which Redis 7.0
//!   replicates as a MULTI/EXEC of its writes) land at once. The offset after a job is
//!   acknowledged (`REPLCONF ACK`, every second and at the master's `GETACK`) only once the
//!   job has committed: an acknowledged write is durable here.
//! - **A dropped link** is made again every second with `PSYNC <replid> <offset+1>`: the master
//!   continues from its backlog when it can, or sends a full sync.
//! - **Clients** can read meanwhile; with `replica-read-only yes` (the default) their writes
//!   get `-READONLY`, and with `replica-serve-stale-data no` a replica whose link is down
//!   answers `-MASTERDOWN` to commands without the `stale` flag.
//!
//! - **Expiry is the master's** (as on a Redis replica): while following, the engine's sweep
//!   deletes nothing (`Writer::set_following`), reads only hide expired keys (a read's miss
//!   does not delete), and the master's writes run with `Writer::keep_expired`: a key that has
//!   expired by this server's clock, but had not when the master wrote to it, is still there
//!   for the write. The master's DELs remove expired keys.
//!
//! The position (the master's replid and the offset applied) is stored in the data file with the
//! writes it covers (`relis_replication`), so a replica restarted with `replicaof` in its
//! configuration continues with a partial resync. Not yet: replicas of Relis (it serves no
//! PSYNC).

pub mod link;

use crate::error::CmdError;
use crate::spec::{Flags, Spec};
use crate::state::Shared;
use bytes::Bytes;
use parking_lot::Mutex;
use resp::Frame;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Most commands applied in one write job (a MULTI/EXEC block is never split). A replica
/// that falls behind (its writer starved of CPU, a checkpoint) catches up with jobs this large:
/// at 512, with a commit each, it fell further behind a master taking 50,000 SET/s.
const JOB_COMMANDS: usize = 4096;

/// How long a replica waits before making a dropped link again.
const RECONNECT: Duration = Duration::from_secs(1);

/// The link's state, as ROLE names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkState {
    /// Waiting to connect.
    Connect,
    /// Connecting and introducing itself.
    Connecting,
    /// Receiving or loading a full sync.
    Sync,
    /// Following the stream.
    Connected,
}

impl LinkState {
    fn name(self) -> &'static str {
        match self {
            LinkState::Connect => "connect",
            LinkState::Connecting => "connecting",
            LinkState::Sync => "sync",
            LinkState::Connected => "connected",
        }
    }
}

/// What INFO and ROLE show of a replica's link.
#[derive(Debug)]
struct Link {
    host: String,
    port: u16,
    state: LinkState,
    /// The master's replication id, once known.
    replid: String,
    /// When the master last sent something.
    last_io: Instant,
    /// Since when the link is down (`None` while connected).
    down_since: Option<Instant>,
    /// A full sync's bytes received and expected (0 while unknown).
    sync_read: u64,
    sync_total: u64,
    /// The offset received (decoded), ahead of the applied one while a job commits.
    received: i64,
    task: tokio::task::JoinHandle<()>,
}

/// The server's replication role.
#[derive(Debug, Default)]
pub struct Replication {
    link: Mutex<Option<Link>>,
    /// The stream offset applied and committed (`slave_repl_offset`).
    applied: Arc<AtomicI64>,
    /// The database the master's stream has selected at `applied` (a partial resync continues
    /// in it: the master sends no SELECT until it writes to another).
    applied_db: AtomicU32,
    /// A full sync is loading.
    loading: AtomicBool,
    /// How far the full sync's load is, and what the last one loaded (INFO persistence).
    pub load: crate::rdbfile::progress::LoadStats,
    /// `link` is set (read without its lock).
    replica: AtomicBool,
}

impl Replication {
    /// Whether the server is a replica (of a master it may not be connected to).
    pub fn is_replica(&self) -> bool {
        self.replica.load(Ordering::Relaxed)
    }

    /// Whether a full sync is loading (INFO `loading`).
    pub fn loading(&self) -> bool {
        self.loading.load(Ordering::Relaxed)
    }

    /// The error a client's command gets on a replica, if any, as Redis's `processCommand`
    /// checks: `-READONLY` for a write with `replica-read-only yes`, `-MASTERDOWN` with
    /// `replica-serve-stale-data no` while the link is down, `-LOADING` during a full sync's load.
    pub fn refuse<P>(&self, server: &Shared, spec: &Spec<P>) -> Option<CmdError> {
        // Every command passes here: a master pays one atomic load.
        if !self.replica.load(Ordering::Relaxed) {
            return None;
        }
        let connected = self.link.lock().as_ref()?.state == LinkState::Connected;
        if spec.has(Flags::WRITE) {
            if let Some(e) = self.refuse_write(server) {
                return Some(e);
            }
        }
        let config = server.config.read();
        if !connected
            && !spec.has(Flags::STALE)
            && config.get("replica-serve-stale-data").as_deref() == Some("no")
        {
            return Some(CmdError::MASTERDOWN);
        }
        if self.loading() && !spec.has(Flags::LOADING) {
            return Some(CmdError::LOADING);
        }
        None
    }

    /// `-READONLY` for a write on a replica with `replica-read-only yes` (a script's
    /// `redis.call` checks only this).
    pub fn refuse_write(&self, server: &Shared) -> Option<CmdError> {
        (self.replica.load(Ordering::Relaxed)
            && server.config.read().get("replica-read-only").as_deref() == Some("yes"))
        .then_some(CmdError::READONLY_REPLICA)
    }

    /// REPLICAOF host port: follows that master from now on (a new link, a full sync). The
    /// reply's text: `OK`, or Redis's words when it already follows that master.
    ///
    /// `spawn` starts the link's task ([`link::start`] gives it).
    pub fn follow(
        &self,
        host: &str,
        port: u16,
        spawn: impl FnOnce() -> tokio::task::JoinHandle<()>,
    ) -> &'static str {
        let mut link = self.link.lock();
        if let Some(l) = link.as_ref() {
            if l.host.eq_ignore_ascii_case(host) && l.port == port {
                return "OK Already connected to specified master";
            }
            l.task.abort();
        }
        tracing::info!("Connecting to MASTER {host}:{port}");
        let task = spawn();
        *link = Some(Link {
            host: host.to_string(),
            port,
            state: LinkState::Connect,
            replid: String::new(),
            last_io: Instant::now(),
            down_since: Some(Instant::now()),
            sync_read: 0,
            sync_total: 0,
            received: self.applied.load(Ordering::SeqCst),
            task,
        });
        self.replica.store(true, Ordering::Relaxed);
        "OK"
    }

    /// REPLICAOF NO ONE: drops the link; the server is a master with the data it has.
    pub fn promote(&self, server: &Shared) {
        let mut link = self.link.lock();
        self.replica.store(false, Ordering::Relaxed);
        if let Some(l) = link.take() {
            l.task.abort();
            // A master has no position in another's history (a later REPLICAOF syncs in full).
            server.db.write_async(
                |w| {
                    w.set_following(false);
                    w.clear_replication_position()
                },
                |_| {},
            );
            tracing::info!("MASTER MODE enabled (user request)");
        }
        self.loading.store(false, Ordering::Relaxed);
    }

    fn update(&self, f: impl FnOnce(&mut Link)) {
        if let Some(l) = self.link.lock().as_mut() {
            f(l);
        }
    }

    fn set_state(&self, state: LinkState) {
        self.update(|l| {
            l.state = state;
            if state == LinkState::Connected {
                l.down_since = None;
            } else if l.down_since.is_none() {
                l.down_since = Some(Instant::now());
            }
        });
    }

    /// ROLE's reply on a replica: `slave`, the master's host and port, the link's state and
    /// the offset applied; `None` on a master.
    pub fn role(&self) -> Option<Frame> {
        let link = self.link.lock();
        let l = link.as_ref()?;
        Some(Frame::Array(vec![
            Frame::Bulk(Bytes::from_static(b"slave")),
            Frame::Bulk(Bytes::from(l.host.clone())),
            Frame::Integer(i64::from(l.port)),
            Frame::Bulk(Bytes::from_static(l.state.name().as_bytes())),
            Frame::Integer(self.applied.load(Ordering::SeqCst)),
        ]))
    }

    /// INFO replication's fields on a replica, in Redis 7.0's order; `None` on a master.
    pub fn info(&self, read_only: bool) -> Option<Vec<(&'static str, String)>> {
        let link = self.link.lock();
        let l = link.as_ref()?;
        let applied = self.applied.load(Ordering::SeqCst);
        let up = l.state == LinkState::Connected;
        let mut kv: Vec<(&'static str, String)> = vec![
            ("role", "slave".into()),
            ("master_host", l.host.clone()),
            ("master_port", l.port.to_string()),
            ("master_link_status", if up { "up" } else { "down" }.into()),
            (
                "master_last_io_seconds_ago",
                if up {
                    l.last_io.elapsed().as_secs().to_string()
                } else {
                    "-1".into()
                },
            ),
            (
                "master_sync_in_progress",
                u8::from(l.state == LinkState::Sync).to_string(),
            ),
            ("slave_read_repl_offset", l.received.to_string()),
            ("slave_repl_offset", applied.to_string()),
        ];
        if l.state == LinkState::Sync {
            let left = l.sync_total.saturating_sub(l.sync_read);
            let perc = if l.sync_total > 0 {
                l.sync_read as f64 * 100.0 / l.sync_total as f64
            } else {
                0.0
            };
            kv.push(("master_sync_total_bytes", l.sync_total.to_string()));
            kv.push(("master_sync_read_bytes", l.sync_read.to_string()));
            kv.push(("master_sync_left_bytes", left.to_string()));
            kv.push(("master_sync_perc", format!("{perc:.2}")));
            kv.push((
                "master_sync_last_io_seconds_ago",
                l.last_io.elapsed().as_secs().to_string(),
            ));
        }
        if let Some(since) = l.down_since.filter(|_| !up) {
            kv.push((
                "master_link_down_since_seconds",
                since.elapsed().as_secs().to_string(),
            ));
        }
        kv.push(("slave_priority", "100".into()));
        kv.push(("slave_read_only", u8::from(read_only).to_string()));
        kv.push(("replica_announced", "1".into()));
        kv.push(("connected_slaves", "0".into()));
        kv.push(("master_failover_state", "no-failover".into()));
        let replid = if l.replid.is_empty() {
            "0".repeat(40)
        } else {
            l.replid.clone()
        };
        kv.push(("master_replid", replid));
        kv.push(("master_replid2", "0".repeat(40)));
        kv.push(("master_repl_offset", applied.to_string()));
        kv.push(("second_repl_offset", "-1".into()));
        kv.push(("repl_backlog_active", "0".into()));
        kv.push(("repl_backlog_size", "1048576".into()));
        kv.push(("repl_backlog_first_byte_offset", "0".into()));
        kv.push(("repl_backlog_histlen", "0".into()));
        Some(kv)
    }
}
