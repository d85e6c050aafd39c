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
        let stored = {
            let server = server.clone();
            tokio::task::spawn_blocking(move || {
                server
                    .db
                    .write(move |w| w.set_replication_position(&position))
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
    // Named after the data file, not this process: a replica killed mid-sync and restarted
    // overwrites (then removes) the file it left, instead of leaving it for ever.
    let path = match server.db.path() {
        Some(data) => {
            let mut name = data.as_os_str().to_owned();
            name.push(".sync.rdb");
            std::path::PathBuf::from(name)
        }
        None => {
            let c = server.config.read();
            std::path::PathBuf::from(c.get("dir").unwrap_or_else(|| ".".into()))
                .join(format!("relis-sync-{}.rdb", std::process::id()))
        }
    };
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
            // The old dataset goes whole, as a Redis replica empties its databases and function
            // libraries before loading. The position goes with it, in the same transaction: a
            // replica killed while loading must not continue from the old position with half
            // the new data (it syncs in full again).
            server2
                .db
                .write(|w| {
                    w.flushall()?;
                    w.function_clear()?;
                    w.clear_replication_position()
                })
                .map_err(|e| e.to_string())?;
            let input = std::fs::File::open(&file).map_err(|e| e.to_string())?;
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64);
            let loaded = crate::rdbfile::load(
                &server2.db,
                std::io::BufReader::new(input),
                total,
                server2.db.databases(),
                now,
                Some(&server2.replication.load),
            );
            // The scripting registry follows the libraries the file had (or, after a failed
            // load, what the data file has now).
            crate::lua::load_stored(&server2.scripting, &server2.db);
            loaded
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
