//! Bad input at scale: 50 connections send tens of thousands of frames — valid ones, commands
//! that fail, malformed, truncated and oversized frames, random bytes — while a well-behaved
//! client keeps working. Each abusive connection must get, for every frame, exactly the reply
//! Redis 7.0 gives, or Redis's protocol error followed by the close of that connection (and
//! nothing else); the server must never crash, must not allocate what a bulk length announces
//! before the bytes arrive, and the well-behaved client must get correct replies throughout.

mod common;
use bytes::BytesMut;
use common::*;
use rand::{Rng, SeedableRng};
use resp::Frame;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Abusive connections at once.
const CONNECTIONS: usize = 50;
/// Frames to send over all of them.
const FRAMES: usize = 40_000;

/// Malformed requests and redis-server 7.0.15's reply to each (the connection is then closed).
const PROTOCOL_ERRORS: &[(&[u8], &[u8])] = &[
    (
        b"*x\r\n",
        b"-ERR Protocol error: invalid multibulk length\r\n",
    ),
    (
        b"*01\r\n",
        b"-ERR Protocol error: invalid multibulk length\r\n",
    ),
    (
        b"*1000000000000\r\n",
        b"-ERR Protocol error: invalid multibulk length\r\n",
    ),
    (
        b"*1\r\nx\r\n",
        b"-ERR Protocol error: expected '$', got 'x'\r\n",
    ),
    (
        b"*2\r\n$3\r\nGET\r\n:1\r\n",
        b"-ERR Protocol error: expected '$', got ':'\r\n",
    ),
    (
        b"*1\r\n$x\r\n",
        b"-ERR Protocol error: invalid bulk length\r\n",
    ),
    (
        b"*1\r\n$-5\r\n",
        b"-ERR Protocol error: invalid bulk length\r\n",
    ),
    (
        b"*1\r\n$536870913\r\n",
        b"-ERR Protocol error: invalid bulk length\r\n",
    ),
    (
        b"*2\r\n$3\r\nGET\r\n$600000000\r\n",
        b"-ERR Protocol error: invalid bulk length\r\n",
    ),
    (
        b"SET \"a\r\n",
        b"-ERR Protocol error: unbalanced quotes in request\r\n",
    ),
    (
        b"set \"a\"b c\r\n",
        b"-ERR Protocol error: unbalanced quotes in request\r\n",
    ),
];

/// What a connection sends last, after its well-formed frames.
enum Last {
    /// Nothing: the connection closes politely.
    Nothing,
    /// A malformed request: its exact error, then the close.
    Malformed(&'static [u8], &'static [u8]),
    /// Over 64 KiB without a line end: `too big ...`, then the close.
    TooBig(Vec<u8>, &'static [u8]),
    /// A request cut short (some announcing a huge bulk), then EOF: no reply, just the close.
    Truncated(Vec<u8>),
    /// Random bytes, then EOF: whatever comes back is valid RESP, and a protocol error, if
    /// any, is the last thing before the close.
    Junk(Vec<u8>),
}

/// A pipeline of well-formed frames with the exact reply bytes expected.
fn good_frames(rng: &mut impl Rng, conn: usize, n: usize) -> (Vec<u8>, Vec<u8>) {
    let (mut req, mut want) = (Vec::new(), Vec::new());
    for i in 0..n {
        match rng.random_range(0..9) {
            0 => {
                req.extend(encode_command(&[b"PING"]));
                want.extend(b"+PONG\r\n");
            }
            1 => {
                req.extend(b"PING\r\n");
                want.extend(b"+PONG\r\n");
            }
            2 => {
                let len = if rng.random_range(0..50) == 0 {
                    100_000
                } else {
                    rng.random_range(0..64)
                };
                let v: Vec<u8> = (0..len).map(|_| rng.random()).collect();
                req.extend(encode_command(&[b"ECHO", &v]));
                want.extend(format!("${}\r\n", v.len()).as_bytes());
                want.extend(&v);
                want.extend(b"\r\n");
            }
            3 => {
                let k = format!("bad:{conn}:{i}");
                req.extend(encode_command(&[b"SET", k.as_bytes(), b"v"]));
                want.extend(b"+OK\r\n");
            }
            4 => {
                req.extend(encode_command(&[b"NOCMD", b"a"]));
                want.extend(b"-ERR unknown command 'NOCMD', with args beginning with: 'a' \r\n");
            }
            5 => {
                req.extend(encode_command(&[b"GET"]));
                want.extend(b"-ERR wrong number of arguments for 'get' command\r\n");
            }
            6 => {
                // Empty requests are skipped without a reply.
                req.extend(if rng.random() {
                    &b"\r\n"[..]
                } else {
                    b"*0\r\n"
                });
            }
            7 => {
                req.extend(b"ECHO \"a\\x41b\" \r\n");
                want.extend(b"$3\r\naAb\r\n");
            }
            _ => {
                req.extend(encode_command(&[b"INCRBY", b"bad:ctr", b"x"]));
                want.extend(b"-ERR value is not an integer or out of range\r\n");
            }
        }
    }
    (req, want)
}

fn last(rng: &mut impl Rng) -> Last {
    match rng.random_range(0..10) {
        0 => Last::Nothing,
        1..=3 => {
            let (m, r) = PROTOCOL_ERRORS[rng.random_range(0..PROTOCOL_ERRORS.len())];
            Last::Malformed(m, r)
        }
        4 => {
            if rng.random() {
                Last::TooBig(
                    vec![b'a'; 70_000],
                    b"-ERR Protocol error: too big inline request\r\n",
                )
            } else {
                let mut m = b"*1\r\n$".to_vec();
                m.extend(std::iter::repeat_n(b'1', 70_000));
                Last::TooBig(m, b"-ERR Protocol error: too big bulk count string\r\n")
            }
        }
        5 | 6 => {
            let mut t = match rng.random_range(0..3) {
                // A bulk of 500 MB announced (legal), 3 bytes sent.
                0 => b"*2\r\n$4\r\nECHO\r\n$500000000\r\nabc".to_vec(),
                // A million arguments announced.
                1 => b"*1000000\r\n$1\r\na\r\n".to_vec(),
                _ => {
                    let full = encode_command(&[b"SET", b"k", b"some value"]);
                    full[..rng.random_range(1..full.len())].to_vec()
                }
            };
            if t.first() != Some(&b'*') {
                t.insert(0, b'*'); // keep it a multibulk prefix: an inline line could complete
            }
            Last::Truncated(t)
        }
        _ => {
            let len = rng.random_range(1..2000);
            Last::Junk((0..len).map(|_| rng.random()).collect())
        }
    }
}

struct Conn {
    stream: TcpStream,
    buf: BytesMut,
}

impl Conn {
    /// Reads exactly `want.len()` bytes and compares them.
    async fn expect(&mut self, want: &[u8], what: &str) {
        while self.buf.len() < want.len() {
            let n =
                tokio::time::timeout(Duration::from_secs(20), self.stream.read_buf(&mut self.buf))
                    .await
                    .unwrap_or_else(|_| panic!("{what}: no reply within 20s"))
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(n > 0, "{what}: closed after {}", show(&self.buf));
        }
        let got = self.buf.split_to(want.len());
        if &got[..] != want {
            panic!(
                "{what}: got {} want {}",
                show(&got[..got.len().min(300)]),
                show(&want[..want.len().min(300)])
            );
        }
    }

    /// Reads until EOF; returns the bytes that came.
    async fn rest(&mut self, what: &str) -> Vec<u8> {
        loop {
            match tokio::time::timeout(Duration::from_secs(20), self.stream.read_buf(&mut self.buf))
                .await
            {
                Err(_) => panic!("{what}: the server did not close within 20s"),
                Ok(Ok(0)) | Ok(Err(_)) => return self.buf.split().to_vec(),
                Ok(Ok(_)) => {}
            }
        }
    }
}

/// One abusive connection's life; returns the frames it sent.
async fn abuse(addr: std::net::SocketAddr, conn: usize, rng: &mut impl Rng) -> usize {
    let n = rng.random_range(0..40);
    let (req, want) = good_frames(rng, conn, n);
    let last = last(rng);
    let stream = TcpStream::connect(addr).await.expect("connect");
    let mut c = Conn {
        stream,
        buf: BytesMut::new(),
    };
    c.stream.write_all(&req).await.expect("write");
    c.expect(&want, &format!("conn {conn}: {n} good frames"))
        .await;
    match last {
        Last::Nothing => {
            c.stream.shutdown().await.expect("shutdown");
            assert!(c.rest("polite close").await.is_empty());
        }
        Last::Malformed(m, r) => {
            c.stream.write_all(m).await.expect("write");
            c.expect(r, &format!("malformed {}", show(m))).await;
            let after = c.rest("after a protocol error").await;
            assert!(
                after.is_empty(),
                "bytes after the protocol error: {}",
                show(&after)
            );
        }
        Last::TooBig(m, r) => {
            // The server may close while we are still writing: ignore write errors.
            let _ = c.stream.write_all(&m).await;
            c.expect(r, "too big").await;
            assert!(c.rest("after too big").await.is_empty());
        }
        Last::Truncated(t) => {
            c.stream.write_all(&t).await.expect("write");
            c.stream.shutdown().await.expect("shutdown");
            let after = c.rest("truncated").await;
            assert!(
                after.is_empty(),
                "reply to a truncated {}: {}",
                show(&t),
                show(&after)
            );
        }
        Last::Junk(j) => {
            let _ = c.stream.write_all(&j).await;
            let _ = c.stream.shutdown().await;
            let mut after = BytesMut::from(&c.rest("junk").await[..]);
            let mut protocol_error = false;
            while !after.is_empty() {
                let f = resp::decode_frame(&mut after)
                    .unwrap_or_else(|e| panic!("invalid RESP after junk {}: {e}", show(&j)))
                    .unwrap_or_else(|| panic!("incomplete reply after junk {}", show(&j)));
                assert!(!protocol_error, "a reply after the protocol error: {f:?}");
                match f {
                    Frame::Error(e) if e.starts_with(b"ERR Protocol error") => {
                        protocol_error = true
                    }
                    Frame::Error(_)
                    | Frame::Simple(_)
                    | Frame::Bulk(_)
                    | Frame::Integer(_)
                    | Frame::Null
                    | Frame::Array(_)
                    | Frame::NullArray => {}
                    other => panic!("unexpected reply to junk: {other:?}"),
                }
            }
        }
    }
    n + 1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abusive_clients_get_redis_errors_and_a_well_behaved_client_keeps_working() {
    // The real binary in its own process, so that the clients' work does not share its threads.
    let dir = tempfile::tempdir().expect("temp dir");
    let server = spawn_binary(dir.path(), &[]);
    let addr = server.addr();
    let sent = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));

    // The well-behaved client: SET, GET and INCR with their replies checked, latencies kept.
    // The same rounds on a quiet server first, for comparison.
    let mut quiet = Vec::new();
    {
        let mut c = Raw::connect(addr).await;
        for i in 1..=50 {
            let t = Instant::now();
            let k = format!("quiet:{i}");
            assert_eq!(c.cmd(&["SET", &k, &i.to_string()]).await, ok());
            assert_eq!(c.cmd(&["GET", &k]).await, bulk(&i.to_string()));
            assert_eq!(c.cmd(&["INCR", "quiet:ctr"]).await, int(i));
            quiet.push(t.elapsed());
        }
        quiet.sort();
    }
    let started = Instant::now();
    let good = {
        let done = done.clone();
        tokio::spawn(async move {
            let mut c = Raw::connect(addr).await;
            let mut lat = Vec::new();
            let mut i: i64 = 0;
            while !done.load(Ordering::Relaxed) {
                i += 1;
                let t = Instant::now();
                let k = format!("good:{i}");
                assert_eq!(c.cmd(&["SET", &k, &i.to_string()]).await, ok());
                assert_eq!(c.cmd(&["GET", &k]).await, bulk(&i.to_string()));
                assert_eq!(c.cmd(&["INCR", "good:ctr"]).await, int(i));
                lat.push(t.elapsed());
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            lat
        })
    };

    let tasks: Vec<_> = (0..CONNECTIONS)
        .map(|conn| {
            let sent = sent.clone();
            tokio::spawn(async move {
                let mut rng = rand::rngs::StdRng::seed_from_u64(conn as u64);
                while sent.load(Ordering::Relaxed) < FRAMES {
                    let n = abuse(addr, conn, &mut rng).await;
                    sent.fetch_add(n, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("abusive connection");
    }
    let abuse_time = started.elapsed();
    done.store(true, Ordering::Relaxed);
    let mut lat = good.await.expect("well-behaved client");
    lat.sort();
    let (n, max) = (lat.len(), *lat.last().unwrap());
    let p99 = lat[n * 99 / 100];
    eprintln!(
        "{} frames over {CONNECTIONS} connections in {:.1} s; the well-behaved client did {n} \
         SET+GET+INCR rounds meanwhile, p50 {:?}, p99 {p99:?}, max {max:?} (quiet server: p50 \
         {:?})",
        sent.load(Ordering::Relaxed),
        abuse_time.as_secs_f64(),
        lat[n / 2],
        quiet[quiet.len() / 2]
    );
    assert!(n >= 10, "the well-behaved client was starved: {n} rounds");
    assert!(
        max < Duration::from_secs(5),
        "a well-behaved round took {max:?}"
    );

    // Still serving, and every acknowledged SET of the abusive connections is readable.
    let mut c = Raw::connect(addr).await;
    assert_eq!(c.cmd(&["PING"]).await, simple("PONG"));
    // Nothing announced was allocated up front: 500 MB bulks were announced by the hundreds.
    let rss = std::fs::read_to_string(format!("/proc/{}/status", server.proc.id()))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        });
    if let Some(kb) = rss {
        eprintln!("peak RSS of the server: {} MB", kb / 1024);
        assert!(kb < 2 * 1024 * 1024, "peak RSS {} MB", kb / 1024);
    }
}
