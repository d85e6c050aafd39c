//! The link's task: connect to the master ([`repl`]), load a full sync, apply the stream and
//! acknowledge committed offsets (see the parent module).

use super::{LinkState, JOB_COMMANDS, RECONNECT};
use crate::cmd::{Cx, Parsed, Table, WriteCmd};
use crate::server::Shared;
use bytes::Bytes;
use repl::{LinkError, Master, Position, Stream, Synced};
use resp::{Frame, Protocol};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// REPLICAOF host port: makes the server follow that master (a task of this module keeps the
/// link). The reply's text, as [`super::Replication::follow`] gives it.
pub fn start(server: &Arc<Shared>, host: &str, port: u16) -> &'static str {
    let s = server.clone();
    let h = host.to_string();
    // Queued before any of the link's writes: from now on the master's DELs expire keys.
    server.db.write_async(|w| w.set_following(true), |_| {});
    server
        .replication
        .follow(host, port, move || tokio::spawn(run(s, h, port)))
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
        Ok(Ok(Some(p))) => {
            tracing::info!(
                "Continuing from the stored replication position {}:{} (db {})",
                p.replid,
                p.offset,
                p.db
            );
            rep.applied.store(p.offset, Ordering::SeqCst);
            rep.applied_db.store(p.db, Ordering::SeqCst);
            Some(Position {
                replid: p.replid,
                offset: p.offset,
            })
        }
        _ => None,
    };
    loop {
        rep.set_state(LinkState::Connecting);
        let synced = repl::connect(&master(&server, &host, port), resume.as_ref()).await;
        // A full sync stores its position with the data it loaded.
        let mut stored = false;
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
                // The master selects a database before its first write after a full sync.
                rep.applied_db.store(0, Ordering::SeqCst);
                if let Err(e) = full_sync(&server, &mut payload).await {
                    tracing::warn!("Full sync from the master failed: {e}");
                    rep.loading.store(false, Ordering::Relaxed);
                    rep.set_state(LinkState::Connect);
                    resume = None;
                    tokio::time::sleep(RECONNECT).await;
                    continue;
                }
                stored = true;
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
        let position = relis::ReplPosition {
            replid: replid.clone(),
            offset: stream.offset(),
            db: rep.applied_db.load(Ordering::SeqCst),
        };
        let store = {
            let server = server.clone();
            tokio::task::spawn_blocking(move || {
                if stored {
                    return Ok(());
                }
                server
                    .db
                    .write(move |w| w.set_replication_position(&position))
            })
            .await
        };
        if let Err(e) = store
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

/// Pieces of a full sync's payload received and not yet read by the load (1 MiB or less each):
/// the socket is read while the load writes.
const SYNC_PIECES: usize = 32;

/// The payload's pieces, as the load reads them (on the blocking pool).
struct Pieces {
    rx: tokio::sync::mpsc::Receiver<Vec<u8>>,
    piece: Vec<u8>,
    at: usize,
}

impl std::io::Read for Pieces {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.piece.len() {
            match self.rx.blocking_recv() {
                Some(p) => (self.piece, self.at) = (p, 0),
                // The end of the payload, or the link failed: the RDB reader tells a
                // truncated file from a whole one.
                None => return Ok(0),
            }
        }
        let n = out.len().min(self.piece.len() - self.at);
        out[..n].copy_from_slice(&self.piece[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Loads a full sync's payload as it arrives, replacing the whole dataset in one transaction
/// ([`crate::rdbfile::load_replacing`]): the keyspace and the function libraries are emptied
/// there, as a Redis replica empties its databases and libraries before it loads, and the
/// payload's position stored, so a failed or killed sync leaves the old dataset with its old
/// position, and a completed one the new dataset with its own.
async fn full_sync(server: &Arc<Shared>, payload: &mut repl::Payload) -> Result<(), String> {
    let (tx, rx) = tokio::sync::mpsc::channel::<Vec<u8>>(SYNC_PIECES);
    server.replication.loading.store(true, Ordering::Relaxed);
    let s = server.clone();
    let total = payload.size().unwrap_or(0);
    // The master selects a database before its first write after a full sync.
    let position = relis::ReplPosition {
        replid: payload.position().replid.clone(),
        offset: payload.position().offset,
        db: 0,
    };
    let loader = tokio::task::spawn_blocking(move || {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        // The load's inserts come back to the pages of a key table as large as the dataset:
        // the writer's cache grows for it as `--import`'s does (allocated only as used), and
        // is set back after.
        let sizes = s.db.cache_use().sizes;
        let mut large = sizes;
        large.writer = large.writer.max(crate::rdbfile::IMPORT_WRITER_CACHE);
        // The writer takes it before the load's first write.
        s.db.set_cache_sizes(large);
        let input = Pieces {
            rx,
            piece: Vec::new(),
            at: 0,
        };
        let loaded = crate::rdbfile::load_replacing(
            &s.db,
            std::io::BufReader::with_capacity(1 << 16, input),
            (total, s.db.databases(), now),
            Some(&s.replication.load),
            Box::new(move |w| {
                w.flushall()?;
                w.function_clear()?;
                w.set_replication_position(&position)
            }),
        );
        s.db.set_cache_sizes(sizes);
        // The scripting registry follows the libraries the data file has now (the new ones,
        // or after a failed load the old ones).
        crate::lua::load_stored(&s.scripting, &s.db);
        loaded
    });
    let received: Result<(), String> = async {
        loop {
            let mut piece = Vec::with_capacity(1 << 20);
            let n = payload.read(&mut piece).await.map_err(|e| e.to_string())?;
            if n == 0 {
                return Ok(());
            }
            let (read, total) = (payload.received(), payload.size().unwrap_or(0));
            server.replication.update(|l| {
                l.sync_read = read;
                l.sync_total = total;
                l.last_io = Instant::now();
            });
            if tx.send(piece).await.is_err() {
                // The load stopped: its error says why.
                return Ok(());
            }
        }
    }
    .await;
    // The load sees the end of its input (a truncated file, if receiving failed).
    drop(tx);
    let loaded = loader.await.map_err(|e| e.to_string()).and_then(|r| r);
    server.replication.loading.store(false, Ordering::Relaxed);
    received?;
    let sum = loaded?;
    tracing::info!(
        "MASTER <-> REPLICA sync: loaded {} keys from {} bytes of RDB",
        sum.keys,
        payload.received()
    );
    Ok(())
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
    let mut db = rep.applied_db.load(Ordering::SeqCst);
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
            // What the socket holds already joins the job: a replica that fell behind catches
            // up in large transactions.
            let next = match stream.ready_next() {
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
                rep.applied_db.store(db, Ordering::SeqCst);
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

/// Applies one job of the master's commands in one write job (one transaction) with the
/// position after them, then delivers what it published. Returns whether the master asked for
/// an ACK. A job without writes (PING, REPLCONF GETACK, SELECT) stores its position too: every
/// offset acknowledged is in the data file.
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
        let keys = spec.ready_keys(&argv);
        match crate::dispatch::parse(spec, argv, skip) {
            Ok(Parsed::Write(w)) => writes.push((*db, w, idx, keys)),
            Ok(_) => tracing::warn!(
                "The master sent {}, which a replica does not apply",
                spec.name
            ),
            Err(e) => tracing::warn!("The master sent {} that does not parse: {e:?}", spec.name),
        }
    }
    {
        let position = relis::ReplPosition {
            replid: position.0,
            offset: position.1,
            db: *db,
        };
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
                // The master decides what has expired (see `Writer::keep_expired`).
                w.keep_expired();
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
                if let Err(e) = w.set_replication_position(&position) {
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
