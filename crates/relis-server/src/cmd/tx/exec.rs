//! EXEC — run the queued commands atomically. <https://redis.io/commands/exec/>

use crate::args::Args;
use crate::blocking::Delivery;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Cx, Parsed, ReadCmd, Spec, Table, WriteCmd};
use crate::dispatch::{parse, record, run_write_feeding, serve_ready};
use crate::error::CmdError;
use crate::observe::Line;
use resp::Frame;
use std::sync::atomic::Ordering;
use std::time::Instant;
use tokio::sync::oneshot;

/// EXEC's declaration.
pub const SPEC: Spec = Spec {
    name: "exec",
    arity: 1,
    flags: Spec::flags(&["noscript", "loading", "stale", "skip_slowlog"]),
    acl: Spec::acl(&["slow", "transaction"]),
    group: "transactions",
    since: "1.2.0",
    summary: "Executes all commands in a transaction.",
    complexity: "Depends on commands in the transaction",
    parse: Exec::parse,
    ..Spec::BASE
};

/// EXEC.
pub struct Exec;

impl Exec {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(Exec)
    }
}

/// A queued keyspace command: it runs inside the transaction's writer job.
enum Data {
    Read(Box<dyn ReadCmd>),
    /// A write, with the keys whose blocked clients it may feed.
    Write(Box<dyn WriteCmd>, Vec<bytes::Bytes>),
}

/// Where each queued command's reply comes from, in queue order.
enum Slot {
    /// The next result of the writer job.
    Data,
    /// A connection command, run on the connection after the job.
    Conn(Box<dyn crate::cmd::ConnCmd>, usize, Option<Line>),
    /// Known already (a parse error).
    Reply(Frame),
}

impl ConnCmd for Exec {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let Some(multi) = c.multi.take() else {
                return Err(CmdError::EXEC_WITHOUT_MULTI);
            };
            c.info.multi.store(-1, Ordering::Relaxed);
            let watched = std::mem::take(&mut c.watched);
            if multi.dirty {
                return Err(CmdError::EXECABORT);
            }
            c.track_transaction(&multi.queued);
            let table = Table::get();
            let mut db = c.db;
            let mut slots = Vec::with_capacity(multi.queued.len());
            let mut data = Vec::new();
            // Over PostgreSQL the job declares the union of the commands' keys and the
            // watched ones (ARCHITECTURE.md 10.1).
            let shared = c.server.db.backend() == "postgres";
            let mut declared: relis::DeclaredKeys = if shared {
                watched.iter().map(|(d, k, _)| (*d, k.to_vec())).collect()
            } else {
                Vec::new()
            };
            for argv in multi.queued {
                // Queued lines passed lookup and arity checks when they were queued.
                let Some((mut idx, mut spec)) = table.lookup(&argv[0]) else {
                    continue;
                };
                let mut skip = 1;
                if !spec.subcommands.is_empty() && argv.len() > 1 {
                    if let Some((i, s)) = table.lookup_sub(spec, &argv[1]) {
                        (idx, spec, skip) = (i, s, 2);
                    }
                }
                // The user's rules may have changed since the command was queued: Redis checks
                // again, and a command no longer allowed is that command's error.
                if !c.user.unrestricted() {
                    if let Err(d) = c.user.check(idx, spec, &argv) {
                        crate::dispatch::acl_log(
                            &c.server,
                            &c.info,
                            d.reason(),
                            "multi",
                            d.object(spec, &argv),
                            &c.user.name,
                        );
                        slots.push(Slot::Reply(d.exec_noperm().to_frame()));
                        continue;
                    }
                }
                // Monitors see the queued commands as the transaction runs them (a SELECT in
                // it with the database it selects), then EXEC.
                if c.server.monitors.active() && crate::monitor::shown(spec) {
                    let shown_db = match (spec.name, argv.get(1)) {
                        ("select", Some(a)) => crate::args::parse_i64(a)
                            .ok()
                            .and_then(|d| u32::try_from(d).ok())
                            .filter(|d| *d < c.server.db.databases())
                            .unwrap_or(db),
                        _ => db,
                    };
                    c.feed_monitors(shown_db, &argv);
                }
                // Each command is slow-logged on its own (EXEC itself never is).
                let line = c
                    .server
                    .observe
                    .slowlog
                    .enabled()
                    .then(|| Line::new(&argv, Some(c.info.clone())));
                let keys: Vec<bytes::Bytes> = spec.ready_keys(&argv);
                if shared {
                    declared.extend(crate::dispatch::declared_keys(spec, &argv, db));
                }
                slots.push(match parse(spec, argv, skip) {
                    Ok(Parsed::Read(cmd)) => {
                        data.push((Data::Read(cmd), idx, db, line));
                        Slot::Data
                    }
                    Ok(Parsed::Write(cmd)) => {
                        data.push((Data::Write(cmd, keys), idx, db, line));
                        Slot::Data
                    }
                    Ok(Parsed::Conn(mut cmd)) => {
                        // Inside a transaction a blocking command runs as its non-blocking twin.
                        if let Some(wc) = cmd.in_transaction() {
                            data.push((Data::Write(wc, keys), idx, db, line));
                            slots.push(Slot::Data);
                            continue;
                        }
                        if let Some(d) = cmd.selects().filter(|d| *d < c.server.db.databases()) {
                            db = d;
                        }
                        Slot::Conn(cmd, idx, line)
                    }
                    Err(e) => Slot::Reply(e.to_frame()),
                });
            }

            // The keyspace commands and the WATCH check run as one writer job.
            let cx = Cx {
                context: "multi",
                ..c.cx()
            };
            let (tx, rx) = oneshot::channel();
            c.server.db.write_async_keys(
                declared,
                move |w| -> relis::Result<Option<(Vec<Frame>, Vec<Delivery>)>> {
                    w.set_origin(cx.client_id);
                    for (wdb, key, version) in &watched {
                        if w.meta(*wdb, key)?.map(|m| m.version) != *version {
                            return Ok(None);
                        }
                    }
                    let mut out = Vec::with_capacity(data.len());
                    let mut served = Vec::new();
                    let mut ready: Vec<(u32, bytes::Bytes)> = Vec::new();
                    for (cmd, idx, db, line) in data {
                        let cx = Cx { db, ..cx.clone() };
                        out.push(match cmd {
                            Data::Read(r) => {
                                let t = Instant::now();
                                let res = r.exec(w, &cx);
                                record(&cx.server, idx, t, res.is_err(), line.as_ref());
                                res.unwrap_or_else(|e| e.to_frame())
                            }
                            Data::Write(wc, keys) => {
                                // Blocked clients are served after the whole transaction, as
                                // Redis does: a command queued after a push sees the element.
                                if !crate::dispatch::feeds_blocked(&cx.server) {
                                    run_write_feeding(w, &cx, &*wc, idx, line.as_ref(), None)
                                } else {
                                    let mut fed = keys.into_iter().map(|k| (db, k)).collect();
                                    let reply = run_write_feeding(
                                        w,
                                        &cx,
                                        &*wc,
                                        idx,
                                        line.as_ref(),
                                        Some(&mut fed),
                                    );
                                    if !matches!(reply, Frame::Error(_)) {
                                        ready.extend(fed);
                                    }
                                    reply
                                }
                            }
                        });
                    }
                    if !ready.is_empty() {
                        serve_ready(w, &cx, ready, &mut served);
                    }
                    Ok(Some((out, served)))
                },
                move |res| {
                    let _ = tx.send(res);
                },
            );
            let results = rx
                .await
                .map_err(|_| CmdError::from(relis::Error::Closed))?
                .and_then(|r| r)?;
            let Some((results, served)) = results else {
                return Ok(Frame::NullArray);
            };
            crate::blocking::deliver(served, Ok(()));
            let mut results = results.into_iter();
            let mut replies = Vec::with_capacity(slots.len());
            for slot in slots {
                replies.push(match slot {
                    Slot::Data => results.next().unwrap_or(Frame::Null),
                    Slot::Conn(cmd, idx, line) => {
                        let t = Instant::now();
                        let r = cmd.exec(c).await;
                        record(&c.server, idx, t, r.is_err(), line.as_ref());
                        r.unwrap_or_else(|e| e.to_frame())
                    }
                    Slot::Reply(f) => f,
                });
            }
            Ok(Frame::Array(replies))
        })
    }
}
