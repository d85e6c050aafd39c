//! The replica side against a real redis-server 7.0 master: full syncs (sized and diskless),
//! the command stream's offsets against the master's own, acknowledgements the master sees,
//! partial resynchronization after a dropped link, and authentication.
//!
//! redis-server missing: each test says so and passes, except under CI (CI set), where it
//! fails.

use bytes::Bytes;
use repl::{LinkError, Master, Synced};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A redis-server on a free port, killed on drop.
struct Redis {
    child: tokio::process::Child,
    port: u16,
    _dir: TempDir,
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// A directory removed on drop (the crate has no tempfile dependency).
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts redis-server with `args`, or `None` (outside CI) when it is not installed.
async fn redis(args: &[&str]) -> Option<Redis> {
    if std::process::Command::new("redis-server")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(
            std::env::var_os("CI").is_none(),
            "redis-server is not installed (CI needs it: apt-get install redis-server)"
        );
        eprintln!("redis-server not installed: skipped");
        return None;
    }
    // The port is free when chosen, but a test running beside this one may take it first:
    // then this redis-server exits and the other answers. So the server that answers must
    // give this child's process id, or another port is tried.
    for _ in 0..5 {
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("repl-test-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut child = tokio::process::Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
            ])
            .args(["--dir", dir.to_str().unwrap()])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let want = format!("process_id:{}\r\n", child.id().unwrap_or(0));
        for _ in 0..200 {
            if child.try_wait().ok().flatten().is_some() {
                break;
            }
            if let Ok(c) = TcpStream::connect(("127.0.0.1", port)).await {
                let mut c = Client(c, Vec::new());
                if let Some(w) = args.windows(2).find(|w| w[0] == "--requirepass") {
                    c.cmd(&["AUTH", w[1]]).await;
                }
                if c.cmd(&["INFO", "server"]).await.contains(&want) {
                    return Some(Redis {
                        child,
                        port,
                        _dir: TempDir(dir),
                    });
                }
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        let _ = child.kill().await;
        let _ = std::fs::remove_dir_all(&dir);
    }
    panic!("redis-server did not start");
}

/// A plain client: sends commands, returns each reply's first line (and a bulk's body).
struct Client(TcpStream, Vec<u8>);

impl Client {
    async fn new(port: u16) -> Client {
        Client(
            TcpStream::connect(("127.0.0.1", port)).await.unwrap(),
            Vec::new(),
        )
    }

    async fn cmd(&mut self, args: &[&str]) -> String {
        let mut out = format!("*{}\r\n", args.len());
        for a in args {
            out += &format!("${}\r\n{a}\r\n", a.len());
        }
        self.0.write_all(out.as_bytes()).await.unwrap();
        let line = self.line().await;
        if let Some(n) = line.strip_prefix('$').and_then(|n| n.parse::<usize>().ok()) {
            while self.1.len() < n + 2 {
                self.read().await;
            }
            let body: Vec<u8> = self.1.drain(..n + 2).collect();
            return String::from_utf8_lossy(&body[..n]).into_owned();
        }
        line
    }

    async fn line(&mut self) -> String {
        loop {
            if let Some(i) = self.1.windows(2).position(|w| w == b"\r\n") {
                let l: Vec<u8> = self.1.drain(..i + 2).collect();
                return String::from_utf8_lossy(&l[..i]).into_owned();
            }
            self.read().await;
        }
    }

    async fn read(&mut self) {
        let mut b = [0u8; 4096];
        let n = tokio::time::timeout(Duration::from_secs(10), self.0.read(&mut b))
            .await
            .expect("reply within 10 s")
            .unwrap();
        assert!(n > 0, "server closed");
        self.1.extend_from_slice(&b[..n]);
    }

    /// A field of INFO replication.
    async fn info(&mut self, field: &str) -> String {
        let info = self.cmd(&["INFO", "replication"]).await;
        info.lines()
            .find_map(|l| l.strip_prefix(&format!("{field}:")))
            .unwrap_or_else(|| panic!("no {field} in {info}"))
            .to_string()
    }
}

fn argv(args: &[&str]) -> Vec<Bytes> {
    args.iter()
        .map(|a| Bytes::copy_from_slice(a.as_bytes()))
        .collect()
}

fn master(port: u16) -> Master {
    Master {
        listening_port: 7777,
        timeout: Duration::from_secs(10),
        ..Master::new("127.0.0.1", port)
    }
}

/// Reads a full sync's payload to its end.
async fn full(synced: Synced) -> (Vec<u8>, Option<u64>, repl::Stream, repl::Acker) {
    let Synced::Full(mut payload) = synced else {
        panic!("expected a full resync");
    };
    assert_eq!(payload.position().replid.len(), 40);
    let mut rdb = Vec::new();
    while payload.read(&mut rdb).await.unwrap() > 0 {}
    let size = payload.size();
    let (stream, acker) = payload.into_stream().unwrap();
    (rdb, size, stream, acker)
}

/// Waits until the master's INFO says its replica acknowledged `offset`.
async fn wait_for_ack(c: &mut Client, offset: i64) {
    for _ in 0..200 {
        let slave = c.info("slave0").await;
        if slave.contains(&format!("offset={offset},")) && slave.contains("state=online") {
            assert!(slave.contains("port=7777"), "{slave}");
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!(
        "the master never saw ACK {offset}: {}",
        c.info("slave0").await
    );
}

async fn sync_and_follow(diskless: bool) {
    let sync = if diskless { "yes" } else { "no" };
    let Some(r) = redis(&[
        "--repl-diskless-sync",
        sync,
        "--repl-diskless-sync-delay",
        "0",
    ])
    .await
    else {
        return;
    };
    let mut c = Client::new(r.port).await;
    assert_eq!(c.cmd(&["SET", "before", "1"]).await, "+OK");
    let (rdb, size, mut stream, mut acker) =
        full(repl::connect(&master(r.port), None).await.unwrap()).await;
    assert!(
        rdb.starts_with(b"REDIS0010"),
        "{:?}",
        &rdb[..16.min(rdb.len())]
    );
    assert_eq!(
        rdb[rdb.len() - 9],
        0xff,
        "the payload ends with RDB's EOF and checksum"
    );
    // A sized payload says its size; a diskless one knows it at its end.
    assert_eq!(size, Some(rdb.len() as u64));
    assert!(
        rdb.windows(6).any(|w| w == b"before"),
        "the key written before the sync is in the payload"
    );
    // Acknowledge every 100 ms what has been applied, as a replica does every second.
    let applied = std::sync::Arc::new(std::sync::atomic::AtomicI64::new(stream.offset()));
    let acking = applied.clone();
    let acks = tokio::spawn(async move {
        loop {
            let o = acking.load(std::sync::atomic::Ordering::SeqCst);
            if acker.ack(o).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    wait_for_ack(&mut c, stream.offset()).await;

    assert_eq!(c.cmd(&["SET", "a", "1"]).await, "+OK");
    assert_eq!(c.cmd(&["INCR", "n"]).await, ":1");
    let mut got = Vec::new();
    let want_end: i64 = c.info("master_repl_offset").await.parse().unwrap();
    while stream.offset() < want_end {
        let cmd = stream
            .next()
            .await
            .unwrap_or_else(|e| panic!("{e} at {} of {want_end}, got {got:?}", stream.offset()))
            .expect("a command");
        assert!(cmd.end <= want_end);
        got.push(cmd.argv);
    }
    assert_eq!(stream.offset(), want_end);
    let got: Vec<Vec<Bytes>> = got
        .into_iter()
        .filter(|a| !a[0].eq_ignore_ascii_case(b"PING"))
        .collect();
    assert_eq!(
        got,
        vec![
            argv(&["SELECT", "0"]),
            argv(&["SET", "a", "1"]),
            argv(&["INCR", "n"])
        ]
    );
    applied.store(stream.offset(), std::sync::atomic::Ordering::SeqCst);
    wait_for_ack(&mut c, stream.offset()).await;
    acks.abort();
}

/// A disk-based full sync: `$<len>` then the RDB file, then the stream.
#[tokio::test]
async fn a_sized_full_sync_then_the_stream_with_offsets() {
    sync_and_follow(false).await;
}

/// A diskless full sync: `$EOF:<mark>`, the payload, the mark; the master streams only after
/// the replica's first ACK.
#[tokio::test]
async fn a_diskless_full_sync_then_the_stream_with_offsets() {
    sync_and_follow(true).await;
}

/// A link dropped and made again continues where it stopped (`+CONTINUE`), with the writes
/// made meanwhile; a position the master does not know gets a full sync.
#[tokio::test]
async fn a_dropped_link_continues_from_its_position() {
    let Some(r) = redis(&["--repl-diskless-sync", "no"]).await else {
        return;
    };
    let mut c = Client::new(r.port).await;
    let (_, _, stream, mut acker) = full(repl::connect(&master(r.port), None).await.unwrap()).await;
    acker.ack(stream.offset()).await.unwrap();
    let position = stream.position().clone();
    drop((stream, acker));
    assert_eq!(c.cmd(&["RPUSH", "l", "x", "y"]).await, ":2");
    let Synced::Partial(mut stream, _acker) = repl::connect(&master(r.port), Some(&position))
        .await
        .unwrap()
    else {
        panic!("expected +CONTINUE");
    };
    assert_eq!(stream.position().replid, position.replid);
    let want_end: i64 = c.info("master_repl_offset").await.parse().unwrap();
    let mut got = Vec::new();
    while stream.offset() < want_end {
        got.push(stream.next().await.unwrap().unwrap().argv);
    }
    assert!(got.contains(&argv(&["RPUSH", "l", "x", "y"])), "{got:?}");

    let unknown = repl::Position {
        replid: "0".repeat(40),
        offset: 12,
    };
    assert!(matches!(
        repl::connect(&master(r.port), Some(&unknown))
            .await
            .unwrap(),
        Synced::Full(_)
    ));
}

/// A master with a password: refused without it, served with it (and with an ACL user).
#[tokio::test]
async fn authentication_with_masterauth_and_masteruser() {
    let Some(r) = redis(&["--requirepass", "sekret", "--repl-diskless-sync-delay", "0"]).await
    else {
        return;
    };
    match repl::connect(&master(r.port), None).await {
        Err(LinkError::Refused(e)) => assert!(e.starts_with("NOAUTH"), "{e}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    let wrong = Master {
        password: Some("nope".into()),
        ..master(r.port)
    };
    match repl::connect(&wrong, None).await {
        Err(LinkError::Refused(e)) => assert!(e.starts_with("WRONGPASS"), "{e}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    let right = Master {
        password: Some("sekret".into()),
        ..master(r.port)
    };
    full(repl::connect(&right, None).await.unwrap()).await;

    let mut c = Client::new(r.port).await;
    assert_eq!(c.cmd(&["AUTH", "sekret"]).await, "+OK");
    assert_eq!(
        c.cmd(&[
            "ACL",
            "SETUSER",
            "rep",
            "on",
            ">pw",
            "+psync",
            "+replconf",
            "+ping"
        ])
        .await,
        "+OK"
    );
    let user = Master {
        user: Some("rep".into()),
        password: Some("pw".into()),
        ..master(r.port)
    };
    full(repl::connect(&user, None).await.unwrap()).await;
}

/// Nothing listening: an I/O error, promptly.
#[tokio::test]
async fn no_master_is_an_io_error() {
    let port = free_port();
    assert!(matches!(
        repl::connect(&master(port), None).await,
        Err(LinkError::Io(_))
    ));
}

/// A fake master that answers the handshake, then sends `after` and closes.
async fn fake_master(after: &'static [u8]) -> u16 {
    fake_master_then(after.to_vec(), None).await
}

/// [`fake_master`] with any bytes `after`, saying on `sent` when they are all written and the
/// connection closed.
async fn fake_master_then(after: Vec<u8>, sent: Option<tokio::sync::oneshot::Sender<()>>) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; 4096];
        // PING, REPLCONF x2, PSYNC: one reply each, in order.
        let replies: [&[u8]; 4] = [
            b"+PONG\r\n",
            b"+OK\r\n",
            b"+OK\r\n",
            b"\n\n+FULLRESYNC 0123456789012345678901234567890123456789 100\r\n",
        ];
        for r in replies {
            let _ = s.read(&mut buf).await;
            s.write_all(r).await.unwrap();
        }
        s.write_all(&after).await.unwrap();
        let _ = s.shutdown().await;
        if let Some(sent) = sent {
            let _ = sent.send(());
        }
    });
    port
}

/// `ready_next` takes every command the socket holds, past what one read brought, without
/// waiting; then `None`, and the end of the stream is `next`'s to report.
#[tokio::test]
async fn ready_next_takes_everything_received() {
    let ping = b"*1\r\n$4\r\nPING\r\n";
    // 84 KB: more than one read asks for, less than a loopback socket buffers.
    let n = 6_000;
    let mut after = b"$1\r\nx".to_vec();
    for _ in 0..n {
        after.extend_from_slice(ping);
    }
    let (tx, rx) = tokio::sync::oneshot::channel();
    let port = fake_master_then(after, Some(tx)).await;
    let Synced::Full(mut p) = repl::connect(&master(port), None).await.unwrap() else {
        panic!()
    };
    while p.read(&mut Vec::new()).await.unwrap() > 0 {}
    let (mut stream, _acker) = p.into_stream().unwrap();
    rx.await.unwrap();
    let first = stream.next().await.unwrap().unwrap();
    assert_eq!(first.end, 100 + 14);
    let mut got = 1;
    let mut end = first.end;
    while let Some(c) = stream.ready_next().unwrap() {
        got += 1;
        end = c.end;
    }
    assert_eq!(got, n);
    assert_eq!(end, 100 + 14 * n as i64);
    assert!(stream.next().await.unwrap().is_none());
}

/// What a hostile or broken master can send gives an error, never a panic or a hang: a bad
/// payload header, a payload cut short, a malformed stream.
#[tokio::test]
async fn a_broken_master_gives_errors() {
    let port = fake_master(b"$abc\r\n").await;
    let Synced::Full(mut p) = repl::connect(&master(port), None).await.unwrap() else {
        panic!()
    };
    assert_eq!(p.position().offset, 100);
    assert!(matches!(
        p.read(&mut Vec::new()).await,
        Err(LinkError::Protocol(_))
    ));

    let port = fake_master(b"$10\r\nREDIS").await;
    let Synced::Full(mut p) = repl::connect(&master(port), None).await.unwrap() else {
        panic!()
    };
    let mut out = Vec::new();
    let err = loop {
        match p.read(&mut out).await {
            Ok(0) => panic!("a cut payload ended cleanly"),
            Ok(_) => {}
            Err(e) => break e,
        }
    };
    assert!(matches!(err, LinkError::Io(_)), "{err:?}");
    assert_eq!(out, b"REDIS");
    assert!(
        p.into_stream().is_err(),
        "no stream before the payload's end"
    );

    let port = fake_master(b"$1\r\nx*1\r\n$4\r\nPING\r\n*1\r\n$-7\r\n").await;
    let Synced::Full(mut p) = repl::connect(&master(port), None).await.unwrap() else {
        panic!()
    };
    let mut out = Vec::new();
    while p.read(&mut out).await.unwrap() > 0 {}
    assert_eq!(out, b"x");
    let (mut stream, _acker) = p.into_stream().unwrap();
    let ping = stream.next().await.unwrap().unwrap();
    assert_eq!(ping.end, 100 + 14);
    assert!(matches!(stream.next().await, Err(LinkError::Protocol(_))));
}
