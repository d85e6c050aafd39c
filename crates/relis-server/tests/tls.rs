//! TLS: a test PKI made with rcgen at run time, a server with a TLS listener beside its plain
//! one, TLS clients (raw RESP over tokio-rustls, and the `redis` crate's rustls support).
//! The TLS path runs the plain path's code: pipelining, RESP3, pub/sub and blocking commands
//! are checked over TLS with the exact bytes the plain tests pin.

mod common;
use common::*;
use relis_server::config::TlsAuthClients;
use std::time::Duration;
use tokio::io::AsyncReadExt;

/// Sends a command and returns the exact bytes of its reply.
async fn cmd<S>(c: &mut Raw<S>, args: &[&str]) -> String
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
    c.send(&encode_command(&a)).await;
    show(&c.read_raw().await.expect("a reply"))
}

async fn start_tls(pki: &Pki, tweak: impl FnOnce(&mut relis_server::config::Config)) -> TestServer {
    start_with(|c| {
        pki.configure(c);
        tweak(c);
    })
    .await
}

/// Whether a TLS client with `config` gets a PONG: the handshake and a first exchange (with
/// TLS 1.3 the client learns that its certificate was refused only when it reads).
async fn served(pki: &Pki, addr: std::net::SocketAddr, config: rustls::ClientConfig) -> bool {
    let Ok(stream) = pki.connect(addr, config).await else {
        return false;
    };
    let mut c = Raw::new(stream);
    c.send(b"PING\r\n").await;
    let mut buf = [0u8; 64];
    match tokio::time::timeout(Duration::from_secs(10), c.stream.read(&mut buf)).await {
        Ok(Ok(n)) => &buf[..n] == b"+PONG\r\n",
        Ok(Err(_)) => false,
        Err(_) => panic!("no answer and no close within 10s"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_over_tls_and_plain_side_by_side() {
    let pki = Pki::generate();
    let s = start_tls(&pki, |_| {}).await;
    let tls_addr = s.tls_addr.expect("a TLS listener");
    assert_ne!(tls_addr.port(), s.addr.port());
    let mut t = pki.raw(tls_addr).await;
    assert_eq!(cmd(&mut t, &["SET", "k", "over tls"]).await, "+OK\\r\\n");
    assert_eq!(cmd(&mut t, &["GET", "k"]).await, "$8\\r\\nover tls\\r\\n");

    // Pipelined: every reply comes back, in order.
    let mut batch = Vec::new();
    for i in 0..100 {
        batch.extend(encode_command(&[b"INCR", b"n"]));
        batch.extend(encode_command(&[b"RPUSH", b"l", i.to_string().as_bytes()]));
    }
    batch.extend(encode_command(&[b"GET", b"nope"]));
    batch.extend(encode_command(&[b"INCR", b"k"]));
    t.send(&batch).await;
    for i in 1..=100 {
        assert_eq!(show(&t.read_raw().await.unwrap()), format!(":{i}\\r\\n"));
        assert_eq!(show(&t.read_raw().await.unwrap()), format!(":{i}\\r\\n"));
    }
    assert_eq!(show(&t.read_raw().await.unwrap()), "$-1\\r\\n");
    assert_eq!(
        show(&t.read_raw().await.unwrap()),
        "-ERR value is not an integer or out of range\\r\\n"
    );

    // The plain port serves the same data.
    let mut p = s.raw().await;
    assert_eq!(cmd(&mut p, &["GET", "k"]).await, "$8\\r\\nover tls\\r\\n");
    assert_eq!(cmd(&mut p, &["LLEN", "l"]).await, ":100\\r\\n");

    // RESP3 over TLS.
    let hello = cmd(&mut t, &["HELLO", "3"]).await;
    assert!(
        hello.starts_with("%7\\r\\n$6\\r\\nserver\\r\\n$5\\r\\nredis\\r\\n"),
        "{hello}"
    );
    assert_eq!(cmd(&mut t, &["HGETALL", "nope"]).await, "%0\\r\\n");

    // A large value crosses many TLS records.
    let big = "x".repeat(1 << 20);
    assert_eq!(cmd(&mut t, &["SET", "big", &big]).await, "+OK\\r\\n");
    assert_eq!(
        cmd(&mut p, &["STRLEN", "big"]).await,
        format!(":{}\\r\\n", 1 << 20)
    );
    let reply = {
        t.send(&encode_command(&[b"GET", b"big"])).await;
        t.read_raw().await.unwrap()
    };
    assert_eq!(reply.len(), (1 << 20) + "$1048576\r\n\r\n".len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pubsub_and_blocking_over_tls() {
    let pki = Pki::generate();
    let s = start_tls(&pki, |_| {}).await;
    let tls_addr = s.tls_addr.unwrap();
    let mut sub = pki.raw(tls_addr).await;
    assert_eq!(
        cmd(&mut sub, &["SUBSCRIBE", "news"]).await,
        "*3\\r\\n$9\\r\\nsubscribe\\r\\n$4\\r\\nnews\\r\\n:1\\r\\n"
    );
    let mut p = s.raw().await;
    assert_eq!(cmd(&mut p, &["PUBLISH", "news", "hi"]).await, ":1\\r\\n");
    assert_eq!(
        show(&sub.read_raw().await.unwrap()),
        "*3\\r\\n$7\\r\\nmessage\\r\\n$4\\r\\nnews\\r\\n$2\\r\\nhi\\r\\n"
    );

    // A blocked TLS client is served by a plain client's push; what it pipelined while
    // blocked runs after.
    let mut b = pki.raw(tls_addr).await;
    b.send(&encode_command(&[b"BLPOP", b"q", b"0"])).await;
    wait_blocked(&mut p, 1).await;
    b.send(&encode_command(&[b"PING"])).await;
    assert_eq!(cmd(&mut p, &["LPUSH", "q", "v"]).await, ":1\\r\\n");
    assert_eq!(
        show(&b.read_raw().await.unwrap()),
        "*2\\r\\n$1\\r\\nq\\r\\n$1\\r\\nv\\r\\n"
    );
    assert_eq!(show(&b.read_raw().await.unwrap()), "+PONG\\r\\n");

    // A blocked TLS client that goes away is noticed and unregistered.
    let mut gone = pki.raw(tls_addr).await;
    gone.send(&encode_command(&[b"BLPOP", b"q2", b"0"])).await;
    wait_blocked(&mut p, 1).await;
    drop(gone);
    wait_blocked(&mut p, 0).await;
}

/// The same for a plain client: input sent while blocked is kept and runs next.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_input_sent_while_blocked_runs_after() {
    let s = start().await;
    let mut p = s.raw().await;
    let mut b = s.raw().await;
    b.send(&encode_command(&[b"BLPOP", b"q", b"0"])).await;
    wait_blocked(&mut p, 1).await;
    b.send(&[encode_command(&[b"PING"]), encode_command(&[b"GET", b"q"])].concat())
        .await;
    assert_eq!(cmd(&mut p, &["RPUSH", "q", "a", "b"]).await, ":2\\r\\n");
    assert_eq!(
        show(&b.read_raw().await.unwrap()),
        "*2\\r\\n$1\\r\\nq\\r\\n$1\\r\\na\\r\\n"
    );
    assert_eq!(show(&b.read_raw().await.unwrap()), "+PONG\\r\\n");
    assert_eq!(
        show(&b.read_raw().await.unwrap()),
        "-WRONGTYPE Operation against a key holding the wrong kind of value\\r\\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_certificates() {
    let pki = Pki::generate();
    let ours = (pki.client_cert.as_path(), pki.client_key.as_path());
    let theirs = (pki.stranger_cert.as_path(), pki.stranger_key.as_path());

    // yes (Redis's default): a certificate from the CA is required.
    let s = start_tls(&pki, |_| {}).await;
    let a = s.tls_addr.unwrap();
    assert!(served(&pki, a, pki.client_config(Some(ours))).await);
    assert!(!served(&pki, a, pki.client_config(None)).await);
    assert!(!served(&pki, a, pki.client_config(Some(theirs))).await);

    // optional: none is fine, a bad one is not.
    let s = start_tls(&pki, |c| c.tls_auth_clients = TlsAuthClients::Optional).await;
    let a = s.tls_addr.unwrap();
    assert!(served(&pki, a, pki.client_config(Some(ours))).await);
    assert!(served(&pki, a, pki.client_config(None)).await);
    assert!(!served(&pki, a, pki.client_config(Some(theirs))).await);

    // no: none asked for; and no CA needed.
    let s = start_tls(&pki, |c| {
        c.tls_auth_clients = TlsAuthClients::No;
        c.tls_ca_cert_file.clear();
    })
    .await;
    let a = s.tls_addr.unwrap();
    assert!(served(&pki, a, pki.client_config(None)).await);

    // A CA directory works like a CA file.
    let s = start_tls(&pki, |c| {
        c.tls_ca_cert_file.clear();
        c.tls_ca_cert_dir = pki.dir.path().display().to_string();
    })
    .await;
    let a = s.tls_addr.unwrap();
    assert!(served(&pki, a, pki.client_config(Some(ours))).await);
    assert!(!served(&pki, a, pki.client_config(None)).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_set_rebuilds_tls() {
    let pki = Pki::generate();
    let s = start_tls(&pki, |_| {}).await;
    let a = s.tls_addr.unwrap();
    let mut p = s.raw().await;
    assert!(!served(&pki, a, pki.client_config(None)).await);
    assert_eq!(
        cmd(&mut p, &["CONFIG", "SET", "tls-auth-clients", "no"]).await,
        "+OK\\r\\n"
    );
    assert!(served(&pki, a, pki.client_config(None)).await);
    assert_eq!(
        cmd(&mut p, &["CONFIG", "SET", "tls-auth-clients", "maybe"]).await,
        "-ERR CONFIG SET failed (possibly related to argument \\'tls-auth-clients\\') - argument(s) must be one of the following: no, yes, optional\\r\\n"
    );
    // A bad file leaves everything as it was, with Redis's words.
    assert_eq!(
        cmd(&mut p, &["CONFIG", "SET", "tls-cert-file", "/nonexistent.crt"]).await,
        "-ERR CONFIG SET failed (possibly related to argument \\'tls-cert-file\\') - Unable to update TLS configuration. Check server logs.\\r\\n"
    );
    assert_eq!(
        cmd(&mut p, &["CONFIG", "SET", "tls-protocols", "TLSv9"]).await,
        "-ERR CONFIG SET failed (possibly related to argument \\'tls-protocols\\') - Unable to update TLS configuration. Check server logs.\\r\\n"
    );
    assert_eq!(
        cmd(&mut p, &["CONFIG", "GET", "tls-cert-file"]).await,
        format!(
            "*2\\r\\n$13\\r\\ntls-cert-file\\r\\n${}\\r\\n{}\\r\\n",
            pki.server_cert.display().to_string().len(),
            pki.server_cert.display()
        )
    );
    assert!(served(&pki, a, pki.client_config(None)).await);
    // TLS 1.2 only: a TLS 1.3-only client is refused, a TLS 1.2 one served.
    assert_eq!(
        cmd(&mut p, &["CONFIG", "SET", "tls-protocols", "TLSv1.2"]).await,
        "+OK\\r\\n"
    );
    let only = |v: &'static rustls::SupportedProtocolVersion| {
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = rustls::RootCertStore::empty();
        use rustls::pki_types::pem::PemObject;
        roots
            .add(rustls::pki_types::CertificateDer::from_pem_file(&pki.ca_cert).unwrap())
            .unwrap();
        rustls::ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&[v])
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth()
    };
    assert!(!served(&pki, a, only(&rustls::version::TLS13)).await);
    assert!(served(&pki, a, only(&rustls::version::TLS12)).await);
    // The listener itself does not move at run time: Redis's text for a port it cannot take.
    assert_eq!(
        cmd(&mut p, &["CONFIG", "SET", "tls-port", "1"]).await,
        "-ERR CONFIG SET failed (possibly related to argument \\'tls-port\\') - Unable to listen on this port. Check server logs.\\r\\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redis_crate_over_tls() {
    let pki = Pki::generate();
    let s = start_tls(&pki, |_| {}).await;
    let a = s.tls_addr.unwrap();
    let client = redis::Client::build_with_tls(
        format!("rediss://localhost:{}/", a.port()),
        redis::TlsCertificates {
            client_tls: Some(redis::ClientTlsConfig {
                client_cert: std::fs::read(&pki.client_cert).unwrap(),
                client_key: std::fs::read(&pki.client_key).unwrap(),
            }),
            root_cert: Some(std::fs::read(&pki.ca_cert).unwrap()),
        },
    )
    .expect("client");
    let mut c = client
        .get_multiplexed_async_connection()
        .await
        .expect("TLS connection");
    let () = redis::cmd("SET")
        .arg("greeting")
        .arg("hello")
        .query_async(&mut c)
        .await
        .unwrap();
    let v: String = redis::cmd("GET")
        .arg("greeting")
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(v, "hello");
    let (x, y): (i64, i64) = redis::pipe()
        .cmd("INCR")
        .arg("c")
        .cmd("INCRBY")
        .arg("c")
        .arg(10)
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!((x, y), (1, 11));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_files_stop_start_up_naming_the_file() {
    let pki = Pki::generate();
    let start_err = |tweak: &dyn Fn(&mut relis_server::config::Config)| {
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = relis_server::config::Config {
            port: 0,
            dir: dir.path().to_path_buf(),
            ..Default::default()
        };
        pki.configure(&mut cfg);
        tweak(&mut cfg);
        async move {
            match relis_server::start(cfg).await {
                Ok(_) => panic!("started"),
                Err(e) => e,
            }
        }
    };
    let e = start_err(&|c| c.tls_cert_file = "/nonexistent/server.crt".into()).await;
    assert!(
        e.starts_with("Failed to load certificate: /nonexistent/server.crt: "),
        "{e}"
    );
    let key = pki.server_key.display().to_string();
    // A certificate file that holds a key, and a key that is not the certificate's.
    let e = start_err(&|c| c.tls_cert_file = key.clone()).await;
    assert!(
        e.starts_with(&format!("Failed to load certificate: {key}: ")),
        "{e}"
    );
    let other = pki.client_key.display().to_string();
    let e = start_err(&|c| c.tls_key_file = other.clone()).await;
    assert!(
        e.starts_with(&format!("Failed to load private key: {other}: ")),
        "{e}"
    );
    let cert = pki.server_cert.display().to_string();
    let e = start_err(&|c| c.tls_key_file = cert.clone()).await;
    assert!(
        e.starts_with(&format!("Failed to load private key: {cert}: ")),
        "{e}"
    );
    let e = start_err(&|c| c.tls_ca_cert_file = "/nonexistent/ca.crt".into()).await;
    assert!(
        e.starts_with(
            "Failed to configure CA certificate(s) file/directory: /nonexistent/ca.crt: "
        ),
        "{e}"
    );
    let e = start_err(&|c| c.tls_ca_cert_file.clear()).await;
    assert_eq!(e, "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!");
    // An encrypted PKCS#8 key needs its passphrase.
    let e = start_err(&|c| c.tls_key_file = pki.server_key_encrypted.display().to_string()).await;
    assert!(
        e.ends_with(": the key is encrypted and tls-key-file-pass is not set"),
        "{e}"
    );
    let e = start_err(&|c| {
        c.tls_key_file = pki.server_key_encrypted.display().to_string();
        c.tls_key_file_pass = "wrong".into();
    })
    .await;
    assert!(
        e.contains(": cannot decrypt it with tls-key-file-pass"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn encrypted_key_with_its_passphrase() {
    let pki = Pki::generate();
    let s = start_tls(&pki, |c| {
        c.tls_key_file = pki.server_key_encrypted.display().to_string();
        c.tls_key_file_pass = Pki::PASSPHRASE.into();
    })
    .await;
    let mut t = pki.raw(s.tls_addr.unwrap()).await;
    assert_eq!(cmd(&mut t, &["PING"]).await, "+PONG\\r\\n");
}

/// The binary: `port 0` with a `tls-port` serves TLS only (as Redis), and INFO's tcp_port is
/// then the TLS port; a bad file stops it with the file named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_tls_only_and_bad_files() {
    let pki = Pki::generate();
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_relis-server");
    let out = std::process::Command::new(bin)
        .args(["--port", "0", "--tls-port", "1", "--dir"])
        .arg(dir.path())
        .args(["--tls-cert-file", "/nonexistent/x.crt", "--tls-key-file"])
        .arg(&pki.server_key)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("Failed to load certificate: /nonexistent/x.crt: ")
            && err.contains("Failed to configure TLS."),
        "{err}"
    );

    let port = free_port();
    let mut child = Child {
        proc: std::process::Command::new(bin)
            .args(["--port", "0", "--tls-port", &port.to_string(), "--dir"])
            .arg(dir.path())
            .arg("--tls-cert-file")
            .arg(&pki.server_cert)
            .arg("--tls-key-file")
            .arg(&pki.server_key)
            .arg("--tls-ca-cert-file")
            .arg(&pki.ca_cert)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
        port,
    };
    wait_for_port(port);
    let mut t = pki.raw(child.addr()).await;
    let info = match t.cmd(&["INFO", "server"]).await {
        resp::Frame::Bulk(b) => String::from_utf8(b.to_vec()).unwrap(),
        f => panic!("{f:?}"),
    };
    assert!(info.contains(&format!("tcp_port:{port}\r\n")), "{info}");
    assert_eq!(
        cmd(&mut t, &["CONFIG", "GET", "port"]).await,
        "*2\\r\\n$4\\r\\nport\\r\\n$1\\r\\n0\\r\\n"
    );
    child.kill9();
}

/// A client that connects to the TLS port and never says hello is an idle client: `timeout`
/// closes it (as the plain idle test, on real time: the idle timer is the runtime's).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_timeout_covers_the_handshake() {
    let pki = Pki::generate();
    let s = start_tls(&pki, |c| c.timeout = 1).await;
    let mut silent = tokio::net::TcpStream::connect(s.tls_addr.unwrap())
        .await
        .unwrap();
    assert!(read_to_close(&mut silent).await.is_empty());
    // Without a timeout it stays open.
    let s = start_tls(&pki, |_| {}).await;
    let mut silent = tokio::net::TcpStream::connect(s.tls_addr.unwrap())
        .await
        .unwrap();
    let mut byte = [0u8; 1];
    assert!(
        tokio::time::timeout(Duration::from_millis(1500), silent.read(&mut byte))
            .await
            .is_err(),
        "closed without a timeout"
    );
}
