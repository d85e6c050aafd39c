//! Test harness: a real server on port 0 (in-process, with its data file in a temporary
//! directory), a raw RESP client for exact-byte assertions, and the `redis` crate for the
//! real-client view. A child-process server (`spawn_binary`) is there for kill/restart tests.
#![allow(dead_code)]

pub mod fixtures;
pub mod transcript;

use bytes::{Bytes, BytesMut};
use relis_server::config::Config;
use resp::Frame;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

/// A server running inside the test process.
pub struct TestServer {
    pub addr: SocketAddr,
    /// The TLS listener's address (servers started with TLS settings).
    pub tls_addr: Option<SocketAddr>,
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
        tls_addr: running.tls_addr,
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
/// Over TCP by default; over TLS with [`Raw::new`] on a TLS stream.
pub struct Raw<S = TcpStream> {
    pub stream: S,
    buf: BytesMut,
}

impl Raw<TcpStream> {
    pub async fn connect(addr: SocketAddr) -> Raw {
        Raw::new(TcpStream::connect(addr).await.expect("connect"))
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Raw<S> {
    /// A raw connection over an already connected stream.
    pub fn new(stream: S) -> Raw<S> {
        Raw {
            stream,
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
        // A TLS stream may hold back what it has not written yet.
        self.stream.flush().await.expect("flush");
    }

    /// Reads one frame; `None` when the server closed the connection.
    pub async fn read(&mut self) -> Option<Frame> {
        loop {
            if let Some(f) = resp::decode_frame(&mut self.buf).expect("valid RESP from the server")
            {
                return Some(f);
            }
            let n =
                tokio::time::timeout(Duration::from_secs(30), self.stream.read_buf(&mut self.buf))
                    .await
                    .expect("reply within 30s")
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
                tokio::time::timeout(Duration::from_secs(30), self.stream.read_buf(&mut self.buf))
                    .await
                    .expect("reply within 30s")
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
                tokio::time::timeout(Duration::from_secs(30), self.stream.read_buf(&mut self.buf))
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

/// Splits a script line into arguments: white space separates them; `"…"`
/// takes `\xHH`, `\n`, `\r`, `\t` and `\<c>` escapes; `'…'` is literal but for `\'`.
pub fn split_args(line: &str) -> Vec<Vec<u8>> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == b.len() {
            return out;
        }
        let mut arg = Vec::new();
        match b[i] {
            q @ (b'"' | b'\'') => {
                i += 1;
                while b[i] != q {
                    if b[i] == b'\\' && q == b'"' {
                        i += 1;
                        match b[i] {
                            b'x' => {
                                let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap();
                                arg.push(u8::from_str_radix(hex, 16).unwrap());
                                i += 2;
                            }
                            b'n' => arg.push(b'\n'),
                            b'r' => arg.push(b'\r'),
                            b't' => arg.push(b'\t'),
                            c => arg.push(c),
                        }
                    } else if b[i] == b'\\' && b.get(i + 1) == Some(&b'\'') {
                        i += 1;
                        arg.push(b'\'');
                    } else {
                        arg.push(b[i]);
                    }
                    i += 1;
                }
                i += 1;
            }
            _ => {
                while i < b.len() && !b[i].is_ascii_whitespace() {
                    arg.push(b[i]);
                    i += 1;
                }
            }
        }
        out.push(arg);
    }
}

/// Sends each command and asserts its reply.
pub async fn check(c: &mut Raw, cases: &[(&[&str], Frame)]) {
    for (cmd, want) in cases {
        assert_eq!(&c.cmd(cmd).await, want, "{cmd:?}");
    }
}

/// Sends each command and asserts its reply's exact bytes.
pub async fn check_raw(c: &mut Raw, cases: &[(&[&str], &[u8])]) {
    for (cmd, want) in cases {
        let args: Vec<&[u8]> = cmd.iter().map(|a| a.as_bytes()).collect();
        c.send(&encode_command(&args)).await;
        let got = c.read_raw().await.expect("a reply");
        assert_eq!(show(&got), show(want), "{cmd:?}");
    }
}

/// Sends a command and returns its reply's exact bytes, escaped ([`show`]).
pub async fn raw(c: &mut Raw, args: &[&str]) -> String {
    let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
    c.send(&encode_command(&a)).await;
    show(&c.read_raw().await.expect("a reply"))
}

/// Sends a command without waiting for its reply.
pub async fn send(c: &mut Raw, args: &[&str]) {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    c.send(&encode_command(&args)).await;
}

/// INFO `section`'s value for `name` (its `name:value` line).
pub async fn info_field(c: &mut Raw, section: &str, name: &str) -> String {
    let info = match c.cmd(&["INFO", section]).await {
        Frame::Bulk(b) | Frame::Verbatim { data: b, .. } => String::from_utf8(b.to_vec()).unwrap(),
        f => panic!("INFO: {f:?}"),
    };
    info.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .unwrap_or_else(|| panic!("no {name} in {info}"))
        .to_string()
}

/// INFO `section`'s number for `name`.
pub async fn info_int(c: &mut Raw, section: &str, name: &str) -> i64 {
    let v = info_field(c, section, name).await;
    v.trim()
        .parse()
        .unwrap_or_else(|_| panic!("{name}:{v} is not a number"))
}

/// INFO's keyspace_hits and keyspace_misses.
pub async fn keyspace_stats(c: &mut Raw) -> (i64, i64) {
    (
        info_int(c, "stats", "keyspace_hits").await,
        info_int(c, "stats", "keyspace_misses").await,
    )
}

/// INFO's blocked_clients.
pub async fn blocked(c: &mut Raw) -> usize {
    info_int(c, "clients", "blocked_clients").await as usize
}

/// Waits (polling, up to 10 s) until INFO says `n` clients are blocked.
pub async fn wait_blocked(c: &mut Raw, n: usize) {
    for _ in 0..1000 {
        if blocked(c).await == n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("never saw {n} blocked clients");
}

/// Asserts nothing arrives on `c` for a little while (a client that must stay blocked).
pub async fn still_blocked(c: &mut Raw) {
    let r = tokio::time::timeout(Duration::from_millis(100), c.read()).await;
    assert!(r.is_err(), "expected no reply yet, got {r:?}");
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
pub fn ints(items: &[i64]) -> Frame {
    Frame::Array(items.iter().map(|n| int(*n)).collect())
}
pub fn nil() -> Frame {
    Frame::Null
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
        // A connection to a port no one listens on can be given that same port as its own
        // and connect to itself (TCP's simultaneous open): that is no server.
        let listening = std::net::TcpStream::connect(("127.0.0.1", port))
            .is_ok_and(|c| c.local_addr().is_ok_and(|a| a.port() != port));
        if listening {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("nothing listens on port {port}");
}

/// Starts the installed redis-server (the reference) on a free port, with no persistence and
/// its files in `dir`; `None` when it is not installed (outside CI). The port is free when
/// chosen, but a test running beside this one may take it before redis-server binds it: then
/// redis-server exits and whatever took the port answers. So the server that answers must give
/// our child's process id, or another port is tried.
pub fn spawn_redis(dir: &Path) -> Option<Child> {
    spawn_redis_with(dir, &[])
}

/// [`spawn_redis`] with more `--name value` arguments (settings CONFIG SET cannot change).
pub fn spawn_redis_with(dir: &Path, extra: &[&str]) -> Option<Child> {
    let bin = redis_server()?;
    for _ in 0..10 {
        let port = free_port();
        let mut proc = std::process::Command::new(&bin)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .args(extra)
            .arg("--dir")
            .arg(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn redis-server");
        if answers_as(&mut proc, port) {
            return Some(Child { proc, port });
        }
        let _ = proc.kill();
        let _ = proc.wait();
    }
    panic!("redis-server found no free port in ten tries");
}

/// Whether `proc` is the server listening on `port` (its INFO gives `proc`'s process id), waiting
/// up to 20 s for it to listen; `false` as soon as it has exited.
fn answers_as(proc: &mut std::process::Child, port: u16) -> bool {
    use std::io::{Read, Write};
    let want = format!("process_id:{}\r\n", proc.id());
    for _ in 0..400 {
        if proc.try_wait().ok().flatten().is_some() {
            return false;
        }
        if let Ok(mut c) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            let _ = c.set_read_timeout(Some(Duration::from_secs(5)));
            if c.write_all(b"*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n")
                .is_err()
            {
                continue;
            }
            // The reply is one bulk string: `$<len>\r\n`, the text, CRLF.
            let mut got = Vec::new();
            let mut buf = [0u8; 4096];
            loop {
                let text = String::from_utf8_lossy(&got);
                let whole = text.split_once("\r\n").and_then(|(head, rest)| {
                    let len: usize = head.strip_prefix('$')?.parse().ok()?;
                    (rest.len() >= len + 2).then_some(())
                });
                if whole.is_some() {
                    return text.contains(&want);
                }
                match c.read(&mut buf) {
                    Ok(n) if n > 0 => got.extend_from_slice(&buf[..n]),
                    _ => return false,
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
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

/// A TCP connection to `addr` from the local address `from` (port chosen by the system), or
/// `None` with the reason when this machine cannot bind `from` (Linux routes all of 127/8 to
/// the loopback interface; other systems may not).
pub async fn connect_from(from: std::net::IpAddr, addr: SocketAddr) -> Result<TcpStream, String> {
    let socket = if from.is_ipv4() {
        tokio::net::TcpSocket::new_v4()
    } else {
        tokio::net::TcpSocket::new_v6()
    }
    .map_err(|e| e.to_string())?;
    socket
        .bind(SocketAddr::new(from, 0))
        .map_err(|e| format!("cannot bind {from}: {e}"))?;
    socket
        .connect(addr)
        .await
        .map_err(|e| format!("cannot connect from {from} to {addr}: {e}"))
}

/// Reads everything until the peer closes (at most 10s).
pub async fn read_to_close<S: AsyncRead + Unpin>(stream: &mut S) -> Vec<u8> {
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut out))
        .await
        .expect("closed within 10s")
        .ok();
    out
}

/// A test PKI made with rcgen: a CA, a server certificate for 127.0.0.1 and localhost signed
/// by it, a client certificate signed by it, and a client certificate signed by another CA;
/// all written as PEM files in a temporary directory.
pub struct Pki {
    pub dir: tempfile::TempDir,
    pub ca_cert: PathBuf,
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    /// The server key encrypted (PKCS#8, PBES2) with [`Pki::PASSPHRASE`].
    pub server_key_encrypted: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
    pub stranger_cert: PathBuf,
    pub stranger_key: PathBuf,
}

impl Pki {
    pub const PASSPHRASE: &'static str = "open sesame";

    /// Generates the certificates and keys.
    pub fn generate() -> Pki {
        use rcgen::{
            BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer,
            KeyPair, KeyUsagePurpose,
        };
        let dir = tempfile::tempdir().expect("temp dir");
        let write = |name: &str, pem: String| {
            let path = dir.path().join(name);
            std::fs::write(&path, pem).expect("write pem");
            path
        };
        let ca = |cn: &str| {
            let key = KeyPair::generate().expect("ca key");
            let mut params = CertificateParams::new(Vec::<String>::new()).expect("ca params");
            params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            params.distinguished_name.push(DnType::CommonName, cn);
            params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
            let cert = params.self_signed(&key).expect("ca cert");
            (cert, Issuer::new(params, key))
        };
        let leaf =
            |names: Vec<String>, usage: ExtendedKeyUsagePurpose, issuer: &Issuer<KeyPair>| {
                let key = KeyPair::generate().expect("leaf key");
                let mut params = CertificateParams::new(names).expect("leaf params");
                params
                    .distinguished_name
                    .push(DnType::CommonName, "relis test");
                params.extended_key_usages = vec![usage];
                let cert = params.signed_by(&key, issuer).expect("leaf cert");
                (cert.pem(), key.serialize_pem())
            };
        let (ca_cert, issuer) = ca("Relis test CA");
        let (server_cert, server_key) = leaf(
            vec!["localhost".into(), "127.0.0.1".into()],
            ExtendedKeyUsagePurpose::ServerAuth,
            &issuer,
        );
        let (client_cert, client_key) = leaf(vec![], ExtendedKeyUsagePurpose::ClientAuth, &issuer);
        let (_, other) = ca("Another CA");
        let (stranger_cert, stranger_key) =
            leaf(vec![], ExtendedKeyUsagePurpose::ClientAuth, &other);
        // PBKDF2-SHA256 + AES-256-CBC: what `openssl pkcs8 -topk8` writes by default.
        let encrypted = {
            use pkcs8::der::Decode;
            let der = rustls::pki_types::pem::PemObject::from_pem_slice(server_key.as_bytes())
                .map(|k: rustls::pki_types::PrivatePkcs8KeyDer| k.secret_pkcs8_der().to_vec())
                .expect("server key der");
            let info = pkcs8::PrivateKeyInfo::from_der(&der).expect("pkcs8");
            let params = pkcs8::pkcs5::pbes2::Parameters::pbkdf2_sha256_aes256cbc(
                2048,
                b"saltsalt",
                &[7; 16],
            )
            .expect("pbes2");
            info.encrypt_with_params(params, Self::PASSPHRASE)
                .expect("encrypt")
                .to_pem("ENCRYPTED PRIVATE KEY", pkcs8::LineEnding::LF)
                .expect("pem")
                .to_string()
        };
        Pki {
            server_key_encrypted: write("server-enc.key", encrypted),
            ca_cert: write("ca.crt", ca_cert.pem()),
            server_cert: write("server.crt", server_cert),
            server_key: write("server.key", server_key),
            client_cert: write("client.crt", client_cert),
            client_key: write("client.key", client_key),
            stranger_cert: write("stranger.crt", stranger_cert),
            stranger_key: write("stranger.key", stranger_key),
            dir,
        }
    }

    /// Points `cfg`'s TLS settings at these files (TLS on a free port in the test server).
    pub fn configure(&self, cfg: &mut Config) {
        cfg.tls_port = 0;
        cfg.tls_cert_file = self.server_cert.display().to_string();
        cfg.tls_key_file = self.server_key.display().to_string();
        cfg.tls_ca_cert_file = self.ca_cert.display().to_string();
    }

    /// A TLS client configuration that trusts the test CA and presents `identity` (a
    /// certificate and key file pair), if any.
    pub fn client_config(&self, identity: Option<(&Path, &Path)>) -> rustls::ClientConfig {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_file(&self.ca_cert).expect("ca pem"))
            .expect("add ca");
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_root_certificates(roots);
        match identity {
            None => builder.with_no_client_auth(),
            Some((cert, key)) => builder
                .with_client_auth_cert(
                    vec![CertificateDer::from_pem_file(cert).expect("cert pem")],
                    PrivateKeyDer::from_pem_file(key).expect("key pem"),
                )
                .expect("client cert"),
        }
    }

    /// A TLS connection to `addr` with `config`: the handshake's result (a TLS 1.3 client
    /// learns that the server refused its certificate only at its first read).
    pub async fn connect(
        &self,
        addr: SocketAddr,
        config: rustls::ClientConfig,
    ) -> std::io::Result<tokio_rustls::client::TlsStream<TcpStream>> {
        let tcp = TcpStream::connect(addr).await?;
        let name = rustls::pki_types::ServerName::try_from("localhost").expect("name");
        tokio_rustls::TlsConnector::from(std::sync::Arc::new(config))
            .connect(name, tcp)
            .await
    }

    /// A raw TLS connection with the client certificate signed by the test CA.
    pub async fn raw(&self, addr: SocketAddr) -> Raw<tokio_rustls::client::TlsStream<TcpStream>> {
        let config = self.client_config(Some((&self.client_cert, &self.client_key)));
        Raw::new(self.connect(addr, config).await.expect("TLS connect"))
    }
}
