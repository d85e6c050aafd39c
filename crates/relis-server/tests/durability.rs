//! Durability: what was acknowledged survives a clean shutdown and a SIGKILL at any moment.
//!
//! The crash test runs the real binary under write load from several clients, kills it with
//! SIGKILL at a random moment, restarts it on the same directory and checks that every write
//! the server acknowledged is there. A write that was in flight (sent, not acknowledged) may or
//! may not be there; nothing else may be.

mod common;
use bytes::BytesMut;
use common::*;
use rand::Rng;
use resp::Frame;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Writes `n` keys through `c`, pipelined.
async fn write_keys(c: &mut Raw, n: usize) {
    let mut req = Vec::new();
    for i in 0..n {
        let (k, v) = (format!("key:{i}"), format!("value:{i}"));
        req.extend(encode_command(&[b"SET", k.as_bytes(), v.as_bytes()]));
    }
    c.send(&req).await;
    for _ in 0..n {
        assert_eq!(c.read().await, Some(ok()));
    }
}

/// Checks that the `n` keys of [`write_keys`] are there.
async fn check_keys(c: &mut Raw, n: usize) {
    let mut req = Vec::new();
    for i in 0..n {
        req.extend(encode_command(&[b"GET", format!("key:{i}").as_bytes()]));
    }
    c.send(&req).await;
    for i in 0..n {
        assert_eq!(c.read().await, Some(bulk(&format!("value:{i}"))), "key:{i}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopped_in_process_server_keeps_everything() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().to_path_buf();
    let mut s = start_with(|c| c.dir = path.clone()).await;
    let mut c = s.raw().await;
    write_keys(&mut c, 1000).await;
    assert_eq!(c.cmd(&["SELECT", "3"]).await, ok());
    assert_eq!(c.cmd(&["SET", "in-db-3", "yes"]).await, ok());
    drop(c);
    s.stop().await;

    let s = start_with(|c| c.dir = path.clone()).await;
    let mut c = s.raw().await;
    check_keys(&mut c, 1000).await;
    assert_eq!(c.cmd(&["GET", "in-db-3"]).await, Frame::Null);
    assert_eq!(c.cmd(&["SELECT", "3"]).await, ok());
    assert_eq!(c.cmd(&["GET", "in-db-3"]).await, bulk("yes"));
}

/// Waits (up to 10 s) for a child server to exit on its own and returns whether it exited 0.
fn wait_exit(child: &mut Child) -> bool {
    for _ in 0..200 {
        if let Some(status) = child.proc.try_wait().expect("try_wait") {
            return status.success();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("relis-server did not exit within 10s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_then_restart_keeps_everything() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut child = spawn_binary(dir.path(), &[]);
    let mut c = Raw::connect(child.addr()).await;
    write_keys(&mut c, 2000).await;
    // Like Redis, a successful SHUTDOWN closes the connection without a reply.
    c.send(&encode_command(&[b"SHUTDOWN"])).await;
    c.expect_closed().await;
    assert!(wait_exit(&mut child), "clean exit status");
    drop(child);

    let mut child = spawn_binary(dir.path(), &[]);
    let mut c = Raw::connect(child.addr()).await;
    check_keys(&mut c, 2000).await;
    drop(c);

    // SIGTERM is a clean shutdown too.
    let mut c = Raw::connect(child.addr()).await;
    assert_eq!(c.cmd(&["SET", "after-restart", "1"]).await, ok());
    // SAFETY: plain kill(2) on our own child's pid.
    unsafe { libc::kill(child.proc.id() as i32, libc::SIGTERM) };
    c.expect_closed().await;
    assert!(wait_exit(&mut child), "clean exit status after SIGTERM");
    drop(child);

    let child = spawn_binary(dir.path(), &[]);
    let mut c = Raw::connect(child.addr()).await;
    check_keys(&mut c, 2000).await;
    assert_eq!(c.cmd(&["GET", "after-restart"]).await, bulk("1"));
}

/// What the writers know after a crash.
#[derive(Default)]
struct Ledger {
    /// Keys written once each, acknowledged: key -> value.
    acked: HashMap<String, String>,
    /// Keys written once each, sent but not acknowledged when the server died.
    unacked: HashMap<String, String>,
    /// Counters per writer: (last acknowledged value, last value sent).
    counters: HashMap<String, (i64, i64)>,
}

/// A minimal client that treats EOF and connection errors as "the server died".
struct Conn {
    stream: TcpStream,
    buf: BytesMut,
}

impl Conn {
    async fn read(&mut self) -> Option<Frame> {
        loop {
            if let Some(f) = resp::decode_frame(&mut self.buf).expect("valid RESP") {
                return Some(f);
            }
            match self.stream.read_buf(&mut self.buf).await {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    }
}

/// One writer: pipelines batches of SETs of fresh keys, a SET of a monotonic counter and an
/// INCR, until the server dies. Returns what was acknowledged and what was in flight.
async fn writer(
    addr: SocketAddr,
    id: usize,
    round: usize,
    pipeline: usize,
    acks: Arc<AtomicUsize>,
) -> Ledger {
    let mut ledger = Ledger::default();
    let Ok(stream) = TcpStream::connect(addr).await else {
        return ledger;
    };
    let mut c = Conn {
        stream,
        buf: BytesMut::new(),
    };
    let (ctr, incr) = (format!("ctr:{id}"), format!("incr:{id}"));
    // The counters survive from earlier rounds: start from what the server has.
    let start = |name: &str, f: Option<Frame>| match f {
        Some(Frame::Bulk(b)) => std::str::from_utf8(&b).unwrap().parse().unwrap(),
        Some(Frame::Null) => 0,
        other => panic!("{name}: {other:?}"),
    };
    let mut req = encode_command(&[b"GET", ctr.as_bytes()]);
    req.extend(encode_command(&[b"GET", incr.as_bytes()]));
    if c.stream.write_all(&req).await.is_err() {
        return ledger;
    }
    let Some(f) = c.read().await else {
        return ledger;
    };
    let mut ctr_val: i64 = start("ctr", Some(f));
    let Some(f) = c.read().await else {
        return ledger;
    };
    let mut incr_val: i64 = start("incr", Some(f));
    ledger.counters.insert(ctr.clone(), (ctr_val, ctr_val));
    ledger.counters.insert(incr.clone(), (incr_val, incr_val));

    let padding = "x".repeat(100);
    for batch in 0.. {
        let mut req = Vec::new();
        let mut sent = Vec::new();
        for j in 0..pipeline {
            let k = format!("r{round}:w{id}:{batch}:{j}");
            let v = format!("{k}:{padding}");
            req.extend(encode_command(&[b"SET", k.as_bytes(), v.as_bytes()]));
            sent.push((k, v));
        }
        req.extend(encode_command(&[
            b"SET",
            ctr.as_bytes(),
            (ctr_val + 1).to_string().as_bytes(),
        ]));
        req.extend(encode_command(&[b"INCR", incr.as_bytes()]));
        for (k, v) in &sent {
            ledger.unacked.insert(k.clone(), v.clone());
        }
        ledger.counters.get_mut(&ctr).unwrap().1 = ctr_val + 1;
        ledger.counters.get_mut(&incr).unwrap().1 = incr_val + 1;
        if c.stream.write_all(&req).await.is_err() {
            return ledger;
        }
        for (k, v) in sent {
            match c.read().await {
                Some(f) => {
                    assert_eq!(f, ok(), "SET {k}");
                    ledger.unacked.remove(&k);
                    ledger.acked.insert(k, v);
                    acks.fetch_add(1, Ordering::Relaxed);
                }
                None => return ledger,
            }
        }
        match c.read().await {
            Some(f) => {
                assert_eq!(f, ok(), "SET {ctr}");
                ctr_val += 1;
                ledger.counters.get_mut(&ctr).unwrap().0 = ctr_val;
            }
            None => return ledger,
        }
        match c.read().await {
            Some(f) => {
                assert_eq!(f, int(incr_val + 1), "INCR {incr}");
                incr_val += 1;
                ledger.counters.get_mut(&incr).unwrap().0 = incr_val;
            }
            None => return ledger,
        }
    }
    unreachable!()
}

/// Runs `rounds` rounds of load, SIGKILL, integrity check, restart, verify.
async fn crash_rounds(extra: &[&str], rounds: usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut rng = rand::rng();
    // Everything acknowledged in every round so far.
    let mut acked: HashMap<String, String> = HashMap::new();
    let mut child = spawn_binary(dir.path(), extra);
    for round in 0..rounds {
        let addr = child.addr();
        let acks = Arc::new(AtomicUsize::new(0));
        let writers: Vec<_> = (0..6)
            .map(|id| {
                let acks = acks.clone();
                tokio::spawn(writer(addr, id, round, [1, 4, 16][id % 3], acks))
            })
            .collect();
        // The load is on once writes are being acknowledged (however busy the machine is);
        // then the kill comes at a random moment.
        for _ in 0..1000 {
            if acks.load(Ordering::Relaxed) > 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let wait = rng.random_range(0..500);
        tokio::time::sleep(Duration::from_millis(wait)).await;
        child.kill9();
        let mut counters = HashMap::new();
        let mut unacked = HashMap::new();
        let mut this_round = 0;
        for w in writers {
            let l = w.await.expect("writer");
            this_round += l.acked.len();
            acked.extend(l.acked);
            unacked.extend(l.unacked);
            counters.extend(l.counters);
        }
        assert!(
            this_round > 0,
            "round {round}: no write was acknowledged in {wait} ms"
        );
        eprintln!(
            "round {round}: killed {wait} ms into the load, {this_round} writes acknowledged, {} in flight",
            unacked.len()
        );
        check_integrity(dir.path());

        child = spawn_binary(dir.path(), extra);
        let mut c = Raw::connect(child.addr()).await;
        let keys: Vec<&String> = acked.keys().collect();
        for chunk in keys.chunks(1000) {
            let mut req = Vec::new();
            for k in chunk {
                req.extend(encode_command(&[b"GET", k.as_bytes()]));
            }
            c.send(&req).await;
            for k in chunk {
                assert_eq!(
                    c.read().await,
                    Some(bulk(&acked[*k])),
                    "round {round}: acknowledged {k} lost after SIGKILL {wait} ms into the load"
                );
            }
        }
        for (k, v) in &unacked {
            let got = c.cmd(&["GET", k]).await;
            assert!(
                got == Frame::Null || got == bulk(v),
                "round {round}: in-flight {k} is {got:?}"
            );
        }
        for (k, (lo, hi)) in &counters {
            let got = match c.cmd(&["GET", k]).await {
                Frame::Bulk(b) => std::str::from_utf8(&b).unwrap().parse::<i64>().unwrap(),
                Frame::Null => 0,
                other => panic!("{k}: {other:?}"),
            };
            assert!(
                (*lo..=*hi).contains(&got),
                "round {round}: {k} is {got}, acknowledged {lo}, sent up to {hi}"
            );
        }
    }
}

/// Runs SQLite's integrity check on a copy of the killed server's files (opening the original
/// would recover and checkpoint its WAL before the restart gets to).
fn check_integrity(dir: &Path) {
    let copy = tempfile::tempdir().expect("temp dir");
    for name in ["relis.db", "relis.db-wal"] {
        let src = dir.join(name);
        if src.exists() {
            std::fs::copy(&src, copy.path().join(name)).expect("copy");
        }
    }
    let conn = rusqlite::Connection::open(copy.path().join("relis.db")).expect("open copy");
    let result: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity_check");
    assert_eq!(result, "ok");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_under_load_loses_no_acknowledged_write() {
    crash_rounds(&[], 3).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_under_load_with_durability_full() {
    crash_rounds(&["--durability", "full"], 2).await;
}
