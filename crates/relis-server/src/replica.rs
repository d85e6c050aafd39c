//! Relis as a replica of a Redis 7.0 master: `REPLICAOF host port` (or `replicaof` in the
//! configuration) starts a task that keeps a link to the master with [`repl`] and applies what
//! it sends; `REPLICAOF NO ONE` stops it and the server is a master again, with its data.
//!
//! - **Full sync.** The master's RDB payload goes to a file next to the data file
//!   (`relis-sync-<pid>.rdb`), then the keyspace is emptied and the file loaded with the RDB
//!   importer ([`crate::rdbfile::load`]) in large transactions. Meanwhile `INFO` says
//!   `loading:1` and commands without Redis's `loading` flag get `-LOADING`.
//! - **The stream.** Commands that arrived together are applied in one write job, so one
//!   transaction: a MULTI/EXEC block is never split, a script's effects (which Redis 7.0
//!   replicates as a MULTI/EXEC of its writes) land at once. The offset after a job is
//!   acknowledged (`REPLCONF ACK`, every second and at the master's `GETACK`) only once the
//!   job has committed: an acknowledged write is durable here.
//! - **A dropped link** is made again every second with `PSYNC <replid> <offset+1>`: the master
//!   continues from its backlog when it can, or sends a full sync.
//! - **Clients** can read meanwhile; with `replica-read-only yes` (the default) their writes
//!   get `-READONLY`, and with `replica-serve-stale-data no` a replica whose link is down
//!   answers `-MASTERDOWN` to commands without the `stale` flag.
//!
//! The position (the master's replid and the offset applied) is stored in the data file with the
//! writes it covers (`relis_replication`), so a replica restarted with `replicaof` in its
//! configuration continues with a partial resync. Not yet: replicas of Relis (it serves no PSYNC), and the keys a master expires reach a Relis replica
//! as the master's DELs, but its own expiry sweep also removes them at their time.

use crate::cmd::{Cx, Parsed, Spec, Table, WriteCmd};
use crate::spec::Flags;
use crate::error::CmdError;
use crate::server::Shared;
use bytes::Bytes;
use parking_lot::Mutex;
use repl::{LinkError, Master, Position, Stream, Synced};
use resp::{Frame, Protocol};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Most commands applied in one write job (a MULTI/EXEC block is never split).
const JOB_COMMANDS: usize = 512;

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
    /// A full sync is loading.
    loading: AtomicBool,
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
    pub fn refuse(&self, server: &Shared, spec: &Spec) -> Option<CmdError> {
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
        .then(|| CmdError::READONLY_REPLICA)
    }

    /// REPLICAOF host port: follows that master from now on (a new link, a full sync). The
    /// reply's text: `OK`, or Redis's words when it already follows that master.
    pub fn follow(&self, server: &Arc<Shared>, host: &str, port: u16) -> &'static str {
        let mut link = self.link.lock();
        if let Some(l) = link.as_ref() {
            if l.host.eq_ignore_ascii_case(host) && l.port == port {
                return "OK Already connected to specified master";
            }
            l.task.abort();
        }
        tracing::info!("Connecting to MASTER {host}:{port}");
        let task = tokio::spawn(run(server.clone(), host.to_string(), port));
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
            server
                .db
                .write_async(|w| w.clear_replication_position(), |_| {});
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

/// How the link introduces itself, from the configuration now.
fn master(server: &Shared, host: &str, port: u16) -> Master {
    let config = server.config.read();
    let text = |name: &str| config.get(name).filter(|v| !v.is_empty());
    let announce_port = text("replica-announce-port")
        .and_then(|p| p.parse::<u16>().ok())
        .filter(|&p| p != 0);
    Master {
        host: host.to_string(),
        port,
        user: text("masteruser"),
        password: text("masterauth"),
        listening_port: announce_port.unwrap_or(server.addr.port()),
        announce_ip: text("replica-announce-ip"),
        timeout: Duration::from_secs(
            text("repl-timeout")
                .and_then(|t| t.parse().ok())
                .unwrap_or(60),
        ),
    }
}

/// The link's task: connect, sync, follow; again after every failure, until aborted.
async fn run(server: Arc<Shared>, host: String, port: u16) {
    let rep = &server.replication;
    // Where the file says this replica stands (written with the writes it covers): after a
    // restart, the link continues from there.
    let stored = {
        let server = server.clone();
        tokio::task::spawn_blocking(move || server.db.read(|r| r.replication_position())).await
    };
    let mut resume: Option<Position> = match stored {
        Ok(Ok(Some((replid, offset)))) => {
            tracing::info!("Continuing from the stored replication position {replid}:{offset}");
            rep.applied.store(offset, Ordering::SeqCst);
            Some(Position { replid, offset })
        }
        _ => None,
    };
    loop {
        rep.set_state(LinkState::Connecting);
        let synced = repl::connect(&master(&server, &host, port), resume.as_ref()).await;
        let (mut stream, acker) = match synced {
            Err(e) => {
                tracing::warn!("Error condition on socket for SYNC: {e}");
                rep.set_state(LinkState::Connect);
                tokio::time::sleep(RECONNECT).await;
                continue;
            }
            Ok(Synced::Partial(stream, acker)) => {
                tracing::info!("Successful partial resynchronization with master.");
                (stream, acker)
            }
            Ok(Synced::Full(mut payload)) => {
                rep.set_state(LinkState::Sync);
                tracing::info!(
                    "Full resync from master: {}:{}",
                    payload.position().replid,
                    payload.position().offset
                );
                if let Err(e) = full_sync(&server, &mut payload).await {
                    tracing::warn!("Full sync from the master failed: {e}");
                    rep.loading.store(false, Ordering::Relaxed);
                    rep.set_state(LinkState::Connect);
                    resume = None;
                    tokio::time::sleep(RECONNECT).await;
                    continue;
                }
                match payload.into_stream() {
                    Ok(s) => s,
                    Err(e) => {
                        tracing::warn!("{e}");
                        continue;
                    }
                }
            }
        };
        let replid = stream.position().replid.clone();
        rep.applied.store(stream.offset(), Ordering::SeqCst);
        // The position the sync brought (a full sync's, or a new replid from +CONTINUE).
        let (id, at) = (replid.clone(), stream.offset());
        let stored = {
            let server = server.clone();
            tokio::task::spawn_blocking(move || {
                server
                    .db
                    .write(move |w| w.set_replication_position(&id, at))
            })
            .await
        };
        if let Err(e) = stored
            .map_err(|e| e.to_string())
            .and_then(|r| r.map_err(|e| e.to_string()))
        {
            tracing::warn!("Storing the replication position failed: {e}");
            rep.set_state(LinkState::Connect);
            tokio::time::sleep(RECONNECT).await;
            continue;
        }
        rep.update(|l| {
            l.replid = replid.clone();
            l.received = stream.offset();
            l.last_io = Instant::now();
        });
        rep.set_state(LinkState::Connected);
        tracing::info!("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization or finished the full sync.");
        let e = apply_stream(&server, &mut stream, acker).await;
        tracing::warn!("Connection with master lost: {e}");
        // What was applied is durable: continue from there.
        resume = Some(Position {
            replid: stream.position().replid.clone(),
            offset: rep.applied.load(Ordering::SeqCst),
        });
        rep.set_state(LinkState::Connect);
        tokio::time::sleep(RECONNECT).await;
    }
}

/// Receives a full sync's payload into a file, empties the keyspace and loads the file.
async fn full_sync(server: &Arc<Shared>, payload: &mut repl::Payload) -> Result<(), String> {
    use tokio::io::AsyncWriteExt;
    let dir = {
        let c = server.config.read();
        std::path::PathBuf::from(c.get("dir").unwrap_or_else(|| ".".into()))
    };
    let path = dir.join(format!("relis-sync-{}.rdb", std::process::id()));
    let result = async {
        let mut file = tokio::fs::File::create(&path)
            .await
            .map_err(|e| format!("creating {}: {e}", path.display()))?;
        let mut buf = Vec::with_capacity(1 << 20);
        loop {
            buf.clear();
            let n = payload.read(&mut buf).await.map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            file.write_all(&buf)
                .await
                .map_err(|e| format!("writing {}: {e}", path.display()))?;
            let (read, total) = (payload.received(), payload.size().unwrap_or(0));
            server.replication.update(|l| {
                l.sync_read = read;
                l.sync_total = total;
                l.last_io = Instant::now();
            });
        }
        file.flush().await.map_err(|e| e.to_string())?;
        drop(file);
        tracing::info!(
            "MASTER <-> REPLICA sync: received {} bytes of RDB; flushing old data and loading",
            payload.received()
        );
        server.replication.loading.store(true, Ordering::Relaxed);
        let server2 = server.clone();
        let file = path.clone();
        let total = payload.received();
        tokio::task::spawn_blocking(move || {
            server2
                .db
                .write(|w| w.flushall())
                .map_err(|e| e.to_string())?;
            let input = std::fs::File::open(&file).map_err(|e| e.to_string())?;
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64);
            crate::rdbfile::load(
                &server2.db,
                std::io::BufReader::new(input),
                total,
                server2.db.databases(),
                now,
            )
        })
        .await
        .map_err(|e| e.to_string())??;
        Ok(())
    }
    .await;
    server.replication.loading.store(false, Ordering::Relaxed);
    let _ = tokio::fs::remove_file(&path).await;
    result
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Applies the stream until the link fails; returns why.
async fn apply_stream(
    server: &Arc<Shared>,
    stream: &mut Stream,
    mut acker: repl::Acker,
) -> LinkError {
    let rep = &server.replication;
    let applied = rep.applied.clone();
    let now = Arc::new(Notify::new());
    // The first ACK right after loading (a master streams to a replica synced diskless only
    // after one), then one every second and at each GETACK.
    let acks = {
        let (applied, now) = (applied.clone(), now.clone());
        AbortOnDrop(tokio::spawn(async move {
            loop {
                if acker.ack(applied.load(Ordering::SeqCst)).await.is_err() {
                    return;
                }
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                    _ = now.notified() => {}
                }
            }
        }))
    };
    let mut db = 0u32;
    let user = crate::acl::User::master();
    let result = loop {
        let first = match stream.next().await {
            Ok(Some(c)) => c,
            Ok(None) => break LinkError::Io(std::io::ErrorKind::UnexpectedEof.into()),
            Err(e) => break e,
        };
        let mut job = vec![first];
        let mut in_multi = is(&job[0].argv, b"multi");
        let gathered = loop {
            if job.len() >= JOB_COMMANDS && !in_multi {
                break Ok(());
            }
            let next = match stream.buffered_next() {
                Ok(Some(c)) => c,
                Ok(None) if !in_multi => break Ok(()),
                // Inside MULTI: wait for the rest of the block.
                Ok(None) => match stream.next().await {
                    Ok(Some(c)) => c,
                    Ok(None) => break Err(LinkError::Io(std::io::ErrorKind::UnexpectedEof.into())),
                    Err(e) => break Err(e),
                },
                Err(e) => break Err(e),
            };
            if is(&next.argv, b"multi") {
                in_multi = true;
            } else if is(&next.argv, b"exec") || is(&next.argv, b"discard") {
                in_multi = false;
            }
            job.push(next);
        };
        let end = job.last().map_or(0, |c| c.end);
        rep.update(|l| {
            l.received = stream.offset();
            l.last_io = Instant::now();
        });
        if let Err(e) = gathered {
            break e;
        }
        let replid = stream.position().replid.clone();
        match apply(server, &user, &mut db, job, (replid, end)).await {
            Ok(getack) => {
                applied.store(end, Ordering::SeqCst);
                if getack {
                    now.notify_one();
                }
            }
            Err(e) => break e,
        }
    };
    drop(acks);
    result
}

fn is(argv: &[Bytes], name: &[u8]) -> bool {
    argv.first().is_some_and(|a| a.eq_ignore_ascii_case(name))
}

/// A write of the master's, parsed: its database, the command, its table index and the keys it
/// may make ready (blocked clients are served from them).
type MasterWrite = (u32, Box<dyn WriteCmd>, usize, Vec<Bytes>);

/// Applies one job of the master's commands in one write job (one transaction), then delivers
/// what it published. Returns whether the master asked for an ACK.
async fn apply(
    server: &Arc<Shared>,
    user: &Arc<crate::acl::User>,
    db: &mut u32,
    job: Vec<repl::Command>,
    position: (String, i64),
) -> Result<bool, LinkError> {
    let table = Table::get();
    let mut writes: Vec<MasterWrite> = Vec::new();
    let mut publish: Vec<(Bytes, Bytes, bool)> = Vec::new();
    let mut getack = false;
    for c in job {
        let argv = c.argv;
        let Some((mut idx, mut spec)) = table.lookup(&argv[0]) else {
            tracing::warn!(
                "The master sent an unknown command: {}",
                String::from_utf8_lossy(&argv[0])
            );
            continue;
        };
        let mut skip = 1;
        if !spec.subcommands.is_empty() && argv.len() >= 2 {
            if let Some((i, s)) = table.lookup_sub(spec, &argv[1]) {
                (idx, spec, skip) = (i, s, 2);
            }
        }
        match spec.name {
            "select" => {
                match std::str::from_utf8(&argv[1])
                    .ok()
                    .and_then(|d| d.parse().ok())
                {
                    Some(d) if d < server.db.databases() => *db = d,
                    _ => tracing::warn!("The master selected a database this server lacks"),
                }
                continue;
            }
            "replconf" => {
                getack |= argv
                    .get(1)
                    .is_some_and(|a| a.eq_ignore_ascii_case(b"getack"));
                continue;
            }
            "ping" | "multi" | "exec" | "discard" => continue,
            "publish" | "spublish" if argv.len() == 3 => {
                publish.push((argv[1].clone(), argv[2].clone(), spec.name == "spublish"));
                continue;
            }
            _ => {}
        }
        if !spec.arity_ok(argv.len()) {
            tracing::warn!("The master sent {} with a wrong arity", spec.name);
            continue;
        }
        let keys = if spec.unblocks {
            spec.keys_of(&argv)
                .into_iter()
                .map(|i| argv[i].clone())
                .collect()
        } else {
            Vec::new()
        };
        match crate::dispatch::parse(spec, argv, skip) {
            Ok(Parsed::Write(w)) => writes.push((*db, w, idx, keys)),
            Ok(_) => tracing::warn!(
                "The master sent {}, which a replica does not apply",
                spec.name
            ),
            Err(e) => tracing::warn!("The master sent {} that does not parse: {e:?}", spec.name),
        }
    }
    if !writes.is_empty() {
        let cx = Cx {
            db: 0,
            proto: Protocol::Resp2,
            server: server.clone(),
            user: user.clone(),
            client_id: 0,
            context: "toplevel",
        };
        let (tx, rx) = tokio::sync::oneshot::channel();
        server.db.write_async(
            move |w| {
                let mut served = Vec::new();
                for (db, c, idx, keys) in writes {
                    let cx = Cx { db, ..cx.clone() };
                    let reply =
                        crate::dispatch::run_write(w, &cx, &*c, idx, &keys, None, &mut served);
                    if let Frame::Error(e) = reply {
                        // As Redis, a command the master ran that fails here is logged, and
                        // the stream goes on.
                        tracing::warn!(
                            "A command from the master failed: {}",
                            String::from_utf8_lossy(&e)
                        );
                    }
                }
                // The position commits with the writes it covers: a restart continues exactly
                // after them.
                if let Err(e) = w.set_replication_position(&position.0, position.1) {
                    w.poison(e);
                }
                served
            },
            move |r| {
                let _ = tx.send(r);
            },
        );
        match rx.await {
            Ok(Ok(served)) => crate::blocking::deliver(served, Ok(())),
            Ok(Err(e)) => {
                return Err(LinkError::Io(std::io::Error::other(format!(
                    "applying the master's writes failed: {e}"
                ))))
            }
            Err(_) => return Err(LinkError::Io(std::io::Error::other("the engine stopped"))),
        }
    }
    for (channel, message, shard) in publish {
        server.pubsub.publish(&channel, &message, shard);
    }
    Ok(getack)
}
