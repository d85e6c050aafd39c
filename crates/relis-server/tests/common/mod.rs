//! Test harness: a real server on port 0 (in-process, with its data file in a temporary
//! directory), a raw RESP client for exact-byte assertions, and the `redis` crate for the
//! real-client view. A child-process server (`spawn_binary`) is there for kill/restart tests.
#![allow(dead_code)]

use bytes::{Bytes, BytesMut};
use relis_server::config::Config;
use resp::Frame;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A server running inside the test process.
pub struct TestServer {
    pub addr: SocketAddr,
    pub running: Option<relis_server::Running>,
    pub dir: tempfile::TempDir,
}

/// Starts a server with default settings on a free port.
pub async fn start() -> TestServer {
    start_with(|_| {}).await
}

/// Starts a server after `tweak` adjusts its configuration.
pub async fn start_with(tweak: impl FnOnce(&mut Config)) -> TestServer {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut cfg = Config {
        port: 0,
        dir: dir.path().to_path_buf(),
        readers: 2,
        ..Config::default()
    };
    tweak(&mut cfg);
    let running = relis_server::start(cfg).await.expect("server starts");
    TestServer {
        addr: running.addr,
        running: Some(running),
        dir,
    }
}

impl TestServer {
    /// A raw connection.
    pub async fn raw(&self) -> Raw {
        Raw::connect(self.addr).await
    }

    /// A `redis` crate connection.
    pub async fn client(&self) -> redis::aio::MultiplexedConnection {
        redis::Client::open(format!("redis://{}/", self.addr))
            .expect("client")
            .get_multiplexed_async_connection()
            .await
            .expect("connect")
    }

    /// Stops the server (dropping the engine commits and closes the file).
    pub async fn stop(&mut self) {
        if let Some(r) = self.running.take() {
            r.shutdown().await;
        }
    }
}

/// A raw RESP connection: sends commands as multibulk arrays, reads exactly one frame per reply.
pub struct Raw {
    pub stream: TcpStream,
    buf: BytesMut,
}

impl Raw {
    pub async fn connect(addr: SocketAddr) -> Raw {
        Raw {
            stream: TcpStream::connect(addr).await.expect("connect"),
            buf: BytesMut::new(),
        }
    }

    /// Sends one command and returns its reply.
    pub async fn cmd(&mut self, args: &[&str]) -> Frame {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.cmd_bytes(&args).await
    }

    /// Sends one binary-safe command and returns its reply.
    pub async fn cmd_bytes(&mut self, args: &[&[u8]]) -> Frame {
        self.send(&encode_command(args)).await;
        self.read().await.expect("a reply")
    }

    /// Writes raw bytes.
    pub async fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.expect("write");
    }

    /// Reads one frame; `None` when the server closed the connection.
    pub async fn read(&mut self) -> Option<Frame> {
        loop {
            if let Some(f) = resp::decode_frame(&mut self.buf).expect("valid RESP from the server")
            {
                return Some(f);
            }
            let n =
                tokio::time::timeout(Duration::from_secs(10), self.stream.read_buf(&mut self.buf))
                    .await
                    .expect("reply within 10s")
                    .expect("read");
            if n == 0 {
                return None;
            }
        }
    }

    /// Reads one reply and returns its exact bytes; `None` when the server closed the
    /// connection.
    pub async fn read_raw(&mut self) -> Option<Vec<u8>> {
        loop {
            let before = self.buf.clone();
            if resp::decode_frame(&mut self.buf)
                .expect("valid RESP from the server")
                .is_some()
            {
                return Some(before[..before.len() - self.buf.len()].to_vec());
            }
            let n =
                tokio::time::timeout(Duration::from_secs(10), self.stream.read_buf(&mut self.buf))
                    .await
                    .expect("reply within 10s")
                    .expect("read");
            if n == 0 {
                return None;
            }
        }
    }

    /// Reads exactly `n` raw bytes (whatever `read` had buffered comes first).
    pub async fn read_bytes(&mut self, n: usize) -> Vec<u8> {
        while self.buf.len() < n {
            let got =
                tokio::time::timeout(Duration::from_secs(10), self.stream.read_buf(&mut self.buf))
                    .await
                    .expect("bytes within 10s")
                    .expect("read");
            assert!(
                got > 0,
                "server closed after {:?}, wanted {n} bytes",
                show(&self.buf)
            );
        }
        self.buf.split_to(n).to_vec()
    }

    /// Reads raw bytes and asserts they are exactly `expected`.
    pub async fn expect_bytes(&mut self, expected: &[u8]) {
        let got = self.read_bytes(expected.len()).await;
        assert_eq!(show(&got), show(expected));
    }

    /// Asserts the server closed the connection without sending anything more.
    pub async fn expect_closed(&mut self) {
        let mut rest = self.buf.split().to_vec();
        loop {
            let mut scratch = [0u8; 4096];
            match tokio::time::timeout(Duration::from_secs(5), self.stream.read(&mut scratch))
                .await
                .expect("the server closes the connection within 5s")
            {
                Ok(0) | Err(_) => break,
                Ok(n) => rest.extend_from_slice(&scratch[..n]),
            }
        }
        assert!(
            rest.is_empty(),
            "unexpected bytes before close: {}",
            show(&rest)
        );
    }

    /// Whether the server has closed the connection (reads until EOF, up to 5s).
    pub async fn closed(&mut self) -> bool {
        let mut scratch = [0u8; 1024];
        matches!(
            tokio::time::timeout(Duration::from_secs(5), self.stream.read(&mut scratch)).await,
            Ok(Ok(0)) | Ok(Err(_))
        )
    }
}

/// The RESP multibulk encoding of a command.
pub fn encode_command(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Bytes as an escaped string, for readable assertion failures.
pub fn show(b: &[u8]) -> String {
    b.escape_ascii().to_string()
}

/// Frame shorthands for assertions.
pub fn ok() -> Frame {
    Frame::Simple(Bytes::from_static(b"OK"))
}
pub fn simple(s: &str) -> Frame {
    Frame::Simple(Bytes::copy_from_slice(s.as_bytes()))
}
pub fn bulk(s: &str) -> Frame {
    Frame::Bulk(Bytes::copy_from_slice(s.as_bytes()))
}
pub fn int(n: i64) -> Frame {
    Frame::Integer(n)
}
pub fn err(s: &str) -> Frame {
    Frame::Error(Bytes::copy_from_slice(s.as_bytes()))
}
pub fn arr(items: Vec<Frame>) -> Frame {
    Frame::Array(items)
}
pub fn bulks(items: &[&str]) -> Frame {
    Frame::Array(items.iter().map(|s| bulk(s)).collect())
}

/// A relis-server child process (for SIGKILL and restart tests).
pub struct Child {
    pub proc: std::process::Child,
    pub port: u16,
}

/// Starts the built binary with `dir` as its data directory on a free port.
pub fn spawn_binary(dir: &Path, extra: &[&str]) -> Child {
    let port = free_port();
    let proc = std::process::Command::new(env!("CARGO_BIN_EXE_relis-server"))
        .arg("--port")
        .arg(port.to_string())
        .arg("--dir")
        .arg(dir)
        .args(extra)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn relis-server");
    wait_for_port(port);
    Child { proc, port }
}

impl Child {
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// SIGKILL, no goodbye.
    pub fn kill9(&mut self) {
        let _ = self.proc.kill();
        let _ = self.proc.wait();
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.proc.kill();
        let _ = self.proc.wait();
    }
}

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// Waits until something accepts connections on `port` (up to 20s).
pub fn wait_for_port(port: u16) {
    for _ in 0..400 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("nothing listens on port {port}");
}

/// Starts the installed redis-server (the reference) on a free port, with no persistence and
/// its files in `dir`; `None` when it is not installed (outside CI).
pub fn spawn_redis(dir: &Path) -> Option<Child> {
    let bin = redis_server()?;
    let port = free_port();
    let proc = std::process::Command::new(bin)
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
        .arg("--dir")
        .arg(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn redis-server");
    wait_for_port(port);
    Some(Child { proc, port })
}

/// Path of a redis-server binary, if one is installed (differential tests skip without it,
/// except under CI where its absence is a failure).
pub fn redis_server() -> Option<PathBuf> {
    let found = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists());
    if found.is_none() && std::env::var_os("CI").is_some() {
        panic!("CI must have redis-server installed (see .ci/run)");
    }
    found
}
