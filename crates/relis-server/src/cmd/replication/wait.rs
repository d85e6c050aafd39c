//! WAIT numreplicas timeout — block until `numreplicas` replicas acknowledged the connection's
//! writes, or `timeout` milliseconds (0: forever) passed; the reply is the number of replicas
//! that did. <https://redis.io/commands/wait/>
//!
//! Relis has no replicas, so the count is always 0, and WAIT does what a redis-server without
//! replicas does: it answers at once when `numreplicas` is 0 or less (or inside MULTI/EXEC),
//! and otherwise blocks until the timeout, as a blocked client (CLIENT LIST flag `b`, INFO
//! `blocked_clients`) that CLIENT UNBLOCK (as a timeout, or with the UNBLOCKED error), a
//! disconnection, CLIENT KILL or SHUTDOWN ends. It waits in the blocking registry with no key,
//! so no write ever serves it.

use crate::args::Args;
use crate::client::{Client, ReplyMode};
use crate::cmd::{BoxFuture, ConnCmd, Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use resp::Frame;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// WAIT's declaration.
pub const SPEC: Spec = Spec {
    name: "wait",
    arity: 3,
    flags: Spec::flags(&["noscript"]),
    acl: Spec::acl(&["slow", "connection"]),
    group: "generic",
    since: "3.0.0",
    summary: "Wait for the synchronous replication of all the write commands sent in the context of the current connection",
    parse: Wait::parse,
    tips: &["request_policy:all_shards", "response_policy:agg_min"],
    ..Spec::BASE
};

/// Replicas that acknowledged: Relis has none (also CLIENT UNBLOCK's answer to a WAIT).
pub const ACKED: i64 = 0;

/// WAIT numreplicas timeout.
#[derive(Debug, PartialEq)]
pub struct Wait {
    /// Replicas asked for.
    pub numreplicas: i64,
    /// Milliseconds to wait; 0 waits forever.
    pub timeout_ms: u64,
}

impl Wait {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let w = Self::parse_args(args)?;
        Parsed::conn(w)
    }

    /// Redis's order: numreplicas (the plain integer error), then the timeout
    /// (`getTimeoutFromObjectOrReply` in milliseconds).
    fn parse_args(args: &mut Args) -> Result<Wait, CmdError> {
        let numreplicas = args.next_i64()?;
        let t = args.next()?;
        args.finish()?;
        let ms = relis::parse_i64(&t).ok_or(CmdError::TIMEOUT_NOT_INTEGER)?;
        if ms < 0 {
            return Err(CmdError::TIMEOUT_NEGATIVE);
        }
        Ok(Wait {
            numreplicas,
            timeout_ms: ms as u64,
        })
    }
}

/// WAIT inside MULTI/EXEC, where Redis never blocks: the count now.
struct WaitNow;

impl WriteCmd for WaitNow {
    fn exec(&self, _w: &mut relis::Writer<'_>, _cx: &Cx) -> Result<Frame, CmdError> {
        Ok(Frame::Integer(ACKED))
    }

    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}

impl ConnCmd for Wait {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            if ACKED >= self.numreplicas {
                return Ok(Frame::Integer(ACKED));
            }
            let deadline = async {
                match self.timeout_ms {
                    0 => std::future::pending::<()>().await,
                    ms => tokio::time::sleep(Duration::from_millis(ms)).await,
                }
            };
            // No key: only CLIENT UNBLOCK (through the registry) answers it early.
            let never: crate::blocking::TryServe = Box::new(|_, _, _| Ok(None));
            let (waiter, rx) = crate::blocking::Waiter::new(
                c.info.id,
                c.db,
                c.proto,
                Vec::new(),
                never,
                Vec::new(),
            );
            let id = waiter.id;
            let blocking = c.server.clone();
            blocking.blocking.register(waiter);
            let info = c.info.clone();
            let mut stop = c.server.shutdown_signal();
            let stopping = async move {
                while !*stop.borrow_and_update() {
                    if stop.changed().await.is_err() {
                        std::future::pending::<()>().await;
                    }
                }
            };
            info.blocked.store(true, Ordering::Relaxed);
            let reply = tokio::select! {
                r = rx => r.unwrap_or(Ok(Frame::Integer(ACKED))),
                _ = deadline => {
                    blocking.blocking.remove(id);
                    Ok(Frame::Integer(ACKED))
                }
                _ = c.peer_closed() => {
                    blocking.blocking.remove(id);
                    c.quit = true;
                    Ok(Frame::Null)
                }
                // Ended like any blocked client: no reply.
                _ = info.kill.notified() => {
                    blocking.blocking.remove(id);
                    c.quit = true;
                    c.reply_mode = ReplyMode::Off;
                    Ok(Frame::Null)
                }
                _ = stopping => {
                    blocking.blocking.remove(id);
                    c.quit = true;
                    c.reply_mode = ReplyMode::Off;
                    Ok(Frame::Null)
                }
            };
            info.blocked.store(false, Ordering::Relaxed);
            reply
        })
    }

    fn in_transaction(&mut self) -> Option<Box<dyn WriteCmd>> {
        Some(Box::new(WaitNow))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn parse(line: &str) -> Result<Wait, String> {
        let argv = line
            .split(' ')
            .map(|s| Bytes::from(s.to_string()))
            .collect();
        Wait::parse_args(&mut Args::new("wait", argv)).map_err(|e| e.message())
    }

    #[test]
    fn arguments_as_redis_checks_them() {
        assert_eq!(
            parse("1 100"),
            Ok(Wait {
                numreplicas: 1,
                timeout_ms: 100
            })
        );
        assert_eq!(parse("-1 0").map(|w| w.numreplicas), Ok(-1));
        assert_eq!(
            parse("x 0").unwrap_err(),
            "ERR value is not an integer or out of range"
        );
        assert_eq!(
            parse("x y").unwrap_err(),
            "ERR value is not an integer or out of range"
        );
        assert_eq!(
            parse("0 x").unwrap_err(),
            "ERR timeout is not an integer or out of range"
        );
        assert_eq!(
            parse("0 1.5").unwrap_err(),
            "ERR timeout is not an integer or out of range"
        );
        assert_eq!(parse("0 -1").unwrap_err(), "ERR timeout is negative");
    }
}
