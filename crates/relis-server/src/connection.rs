//! A connection's I/O: read what the client sent, hand every complete command to dispatch
//! (`Client::run_batch`), write every reply, flush once; socket options, TLS handshakes, output
//! limits.

use crate::client::{Client, ClientInfo, ConnRead, ReplyMode};
use crate::state::Shared;
use bytes::BytesMut;
use parking_lot::Mutex;
use resp::{Limits, Protocol, RequestDecoder};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tokio::io::{AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Notify;

/// Connections past which a quiet one gives its buffers back ([`BUFFERS_KEPT`]): below it, the
/// per-wait timer that would cost (~3% of GET -P 1 with 50 clients) buys little memory.
const MANY_CLIENTS: usize = 256;

/// How long a quiet connection keeps its (empty) buffers before giving them back.
const BUFFERS_KEPT: std::time::Duration = std::time::Duration::from_millis(250);

/// Resolves after `secs` seconds, or never for 0.
async fn idle_timer(secs: u64) {
    if secs == 0 {
        std::future::pending::<()>().await;
    }
    tokio::time::sleep(std::time::Duration::from_secs(secs)).await;
}

/// How a reply write ended.
#[derive(Debug, PartialEq, Eq)]
enum Written {
    /// Every byte went to the socket.
    All,
    /// The client was killed meanwhile.
    Killed,
    /// The unsent bytes stayed over `client-output-buffer-limit`'s soft limit for its seconds.
    OverSoftLimit,
    /// The socket took nothing for `timeout` seconds.
    Idle,
}

/// Writes `buf`, unless the client is killed first (a subscriber past its output-buffer limit
/// may never read: its write must not hold the connection open) or, with a soft output limit,
/// the unsent part stays over it for longer than the limit's seconds. While it writes, the
/// connection reads nothing more from the client: a client that does not read its replies
/// stops being served (backpressure) instead of making the server buffer them.
async fn write_out<W: AsyncWrite + Unpin>(
    stream: &mut W,
    buf: &[u8],
    info: &ClientInfo,
    limit: crate::pubsub::BufferLimit,
    idle_secs: u64,
) -> std::io::Result<Written> {
    let mut pos = 0;
    // `timeout` also ends a client that stops taking its replies (Redis counts a write as
    // interaction, so a client whose socket takes nothing for that long is idle).
    let idle_for = (idle_secs > 0).then(|| std::time::Duration::from_secs(idle_secs));
    let mut idle_at = idle_for.map(|d| tokio::time::Instant::now() + d);
    let soft_over = |pos: usize| limit.soft > 0 && counted(buf.len() - pos) >= limit.soft;
    let mut deadline = soft_over(0)
        .then(|| tokio::time::Instant::now() + std::time::Duration::from_secs(limit.soft_secs));
    while pos < buf.len() {
        info.omem.store((buf.len() - pos) as u64, Ordering::Relaxed);
        let soft = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        let idle = async {
            match idle_at {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            r = stream.write(&buf[pos..]) => {
                match r? {
                    0 => return Err(std::io::ErrorKind::WriteZero.into()),
                    n => pos += n,
                }
                if !soft_over(pos) {
                    deadline = None;
                }
                idle_at = idle_for.map(|d| tokio::time::Instant::now() + d);
            }
            _ = info.kill.notified() => return Ok(Written::Killed),
            _ = soft => return Ok(Written::OverSoftLimit),
            _ = idle => return Ok(Written::Idle),
        }
    }
    // A TLS session may hold back what it could not write yet (for TCP this does nothing).
    stream.flush().await?;
    info.omem.store(0, Ordering::Relaxed);
    Ok(Written::All)
}

/// Writes the replies in `out` (and empties it) under `client-output-buffer-limit normal`;
/// returns `false` when the connection must close (over a limit, killed, or idle past
/// `timeout` while the client does not read).
async fn flush<W: AsyncWrite + Unpin>(
    stream: &mut W,
    client: &mut Client,
    out: &mut BytesMut,
    idle: u64,
) -> std::io::Result<bool> {
    if out.is_empty() {
        return Ok(true);
    }
    let server = &client.server;
    let info = &client.info;
    // The normal class (none by default, as in Redis) applies to clients without
    // subscriptions; the pubsub class is enforced by their mailbox.
    let limit = if client.subs.any() {
        crate::pubsub::BufferLimit {
            hard: 0,
            soft: 0,
            soft_secs: 0,
        }
    } else {
        server.pubsub.normal_limit.load()
    };
    // Redis checks the limit as replies pile up, before writing them: replies produced at once
    // over the hard limit close the client without any of them being sent.
    if limit.hard > 0 && counted(out.len()) >= limit.hard {
        log_over_limit(info);
        return Ok(false);
    }
    server
        .stats
        .net_output_bytes
        .fetch_add(out.len() as u64, Ordering::Relaxed);
    server
        .stats
        .total_writes_processed
        .fetch_add(1, Ordering::Relaxed);
    match write_out(stream, out, info, limit, idle).await? {
        Written::All => {}
        Written::Killed => return Ok(false),
        Written::OverSoftLimit => {
            log_over_limit(info);
            return Ok(false);
        }
        Written::Idle => {
            tracing::debug!("closing idle client {} (not reading its replies)", info.id);
            return Ok(false);
        }
    }
    out.clear();
    if client.mailbox_used {
        info.pubsub.written();
    }
    // A burst of large replies or messages must not pin its buffer for the connection's life.
    if out.capacity() > 1 << 20 {
        *out = BytesMut::new();
    }
    Ok(true)
}

/// Redis's per-client reply buffer (16 KiB): replies that fit in it are not counted by
/// `client-output-buffer-limit`, only what overflows into its reply list.
const REPLY_BUF: usize = 16 * 1024;

/// The unsent reply bytes `client-output-buffer-limit` counts, as Redis counts them.
fn counted(unsent: usize) -> u64 {
    unsent.saturating_sub(REPLY_BUF) as u64
}

/// Logs (as Redis does) that a client goes for overcoming its output buffer limit.
fn log_over_limit(info: &ClientInfo) {
    tracing::warn!(
        "Client id={} addr={} closed for overcoming of output buffer limits.",
        info.id,
        info.addr
    );
}

/// Writes `buf` and flushes: a TLS session may hold back what it could not write yet (for a
/// TCP socket the flush does nothing).
async fn write_flush<W: AsyncWrite + Unpin>(stream: &mut W, buf: &[u8]) -> std::io::Result<()> {
    stream.write_all(buf).await?;
    stream.flush().await
}

/// Sets up an accepted socket as Redis does: no Nagle delay, and with `keepalive` seconds (0 =
/// off) TCP keepalive probing after that much idle time, every third of it, three probes
/// (Redis's `anetKeepAlive`), so a peer that vanished without a FIN is noticed and closed.
///
/// # Errors
/// A `setsockopt` failure.
pub fn configure_socket(stream: &TcpStream, keepalive: u64) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    if keepalive > 0 {
        let idle = std::time::Duration::from_secs(keepalive);
        let every = std::time::Duration::from_secs((keepalive / 3).max(1));
        let params = socket2::TcpKeepalive::new()
            .with_time(idle)
            .with_interval(every)
            .with_retries(3);
        socket2::SockRef::from(stream).set_tcp_keepalive(&params)?;
    }
    Ok(())
}

/// [`configure_socket`] with the server's `tcp-keepalive`, logging a failure.
fn setup_socket(stream: &TcpStream, peer: &SocketAddr, server: &Shared) {
    let keepalive = server.config.read().tcp_keepalive;
    if let Err(e) = configure_socket(stream, keepalive) {
        tracing::debug!("configuring the socket of {peer}: {e}");
    }
}

/// Serves one plain TCP connection until it closes, is killed, or the server shuts down.
pub async fn serve(stream: TcpStream, peer: SocketAddr, server: Arc<Shared>) {
    setup_socket(&stream, &peer, &server);
    let laddr = stream.local_addr().unwrap_or(server.addr);
    let fd = std::os::fd::AsRawFd::as_raw_fd(&stream);
    // The halves of a TCP socket need no lock between them (tokio::io::split would add one).
    let (rd, wr) = stream.into_split();
    serve_stream(Box::new(rd), wr, peer, laddr, fd, server).await;
}

/// Serves one TLS connection: the handshake first (in the connection's own task, so a slow
/// client holds up nobody), then exactly what a plain connection runs.
pub async fn serve_tls(
    stream: TcpStream,
    peer: SocketAddr,
    server: Arc<Shared>,
    acceptor: crate::tls::TlsAcceptor,
) {
    setup_socket(&stream, &peer, &server);
    let laddr = stream.local_addr().unwrap_or(server.addr);
    let fd = std::os::fd::AsRawFd::as_raw_fd(&stream);
    // A client that never finishes its handshake is an idle client: `timeout` closes it.
    let idle = server.config.read().timeout;
    let handshake = async {
        tokio::select! {
            r = acceptor.accept(stream) => r,
            _ = idle_timer(idle) => Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "no TLS handshake within the idle timeout",
            )),
        }
    };
    let tls = match handshake.await {
        Ok(tls) => tls,
        Err(e) => {
            // Redis logs a failed handshake at verbose level (below the default) and drops
            // the connection; Relis's verbose is its default, so this goes to debug.
            tracing::debug!("Error accepting a client connection: {e} (addr={peer} laddr={laddr})");
            return;
        }
    };
    let (rd, wr) = tokio::io::split(tls);
    serve_stream(Box::new(rd), wr, peer, laddr, fd, server).await;
}

/// Whether Redis 7.0's protected mode counts `ip` as local: only 127.0.0.1 and ::1 (the rest
/// of 127/8 is not). An IPv4-mapped 127.0.0.1 counts too: Redis's IPv6 sockets are IPv6-only,
/// so there it arrives as plain IPv4.
pub fn is_loopback_client(ip: std::net::IpAddr) -> bool {
    match ip.to_canonical() {
        std::net::IpAddr::V4(v4) => v4 == std::net::Ipv4Addr::LOCALHOST,
        std::net::IpAddr::V6(v6) => v6 == std::net::Ipv6Addr::LOCALHOST,
    }
}

/// Serves one connection, whatever its stream, until it closes, is killed, or the server
/// shuts down.
async fn serve_stream<W: AsyncWrite + Unpin>(
    rd: Box<dyn ConnRead>,
    mut wr: W,
    peer: SocketAddr,
    laddr: SocketAddr,
    fd: i32,
    server: Arc<Shared>,
) {
    let (maxclients, protected) = {
        let c = server.config.read();
        (c.maxclients, c.protected_mode)
    };
    let user = server.acl.default_user();
    let id = server.next_client_id();
    let info = Arc::new(ClientInfo {
        id,
        addr: peer,
        laddr,
        fd,
        created: Instant::now(),
        name: Mutex::new(None),
        lib: Mutex::new((String::new(), String::new())),
        db: AtomicU32::new(0),
        resp: AtomicU8::new(2),
        last_cmd: Mutex::new("NULL"),
        user: Mutex::new("default".into()),
        last_active_ms: AtomicU64::new(0),
        multi: AtomicI64::new(-1),
        killed: AtomicBool::new(false),
        kill: Notify::new(),
        qbuf: AtomicU64::new(0),
        omem: AtomicU64::new(0),
        no_evict: AtomicBool::new(false),
        no_touch: AtomicBool::new(false),
        blocked: AtomicBool::new(false),
        pubsub: Default::default(),
        monitor: AtomicBool::new(false),
        tracking_redir: AtomicI64::new(-1),
        tracking_flags: AtomicU8::new(0),
    });
    let admitted = {
        let mut clients = server.clients.lock();
        let ok = clients.len() < maxclients;
        if ok {
            clients.insert(id, info.clone());
            server.connected.store(clients.len(), Ordering::Relaxed);
        }
        ok
    };
    if !admitted {
        server
            .stats
            .rejected_connections
            .fetch_add(1, Ordering::Relaxed);
        let _ = write_flush(&mut wr, crate::error::MAX_CLIENTS).await;
        return;
    }
    // Protected mode, checked as Redis does once the connection is set up (after the TLS
    // handshake): while the default user is `nopass` (no `requirepass`, no ACL password),
    // only the loopback interface may connect.
    if protected && user.nopass() && !is_loopback_client(peer.ip()) {
        server.forget_client(id);
        server
            .stats
            .rejected_connections
            .fetch_add(1, Ordering::Relaxed);
        let _ = write_flush(&mut wr, crate::error::PROTECTED_MODE).await;
        return;
    }
    let mut client = Client {
        server: server.clone(),
        info: info.clone(),
        db: 0,
        proto: Protocol::Resp2,
        // As Redis's clientSetDefaultAuth: authenticated if the default user needs no password.
        authed: user.needs_no_auth(),
        user,
        multi: None,
        watched: Vec::new(),
        reply_mode: ReplyMode::On,
        quit: false,
        rd: Some(rd),
        unread: BytesMut::new(),
        subs: Default::default(),
        pushed: Vec::new(),
        mailbox_used: false,
        read_here: false,
        declared: Vec::new(),
        blocked_for: std::time::Duration::ZERO,
        timed_out: false,
        tracking: None,
        caching: false,
        monitor: false,
        monitor_after: None,
    };
    let result = connection_loop(&mut wr, &mut client).await;
    if let Err(e) = result {
        tracing::debug!("client {id} ({peer}): {e}");
    }
    crate::pubsub::unsubscribe_all(&mut client);
    server.forget_client(id);
    server.pubsub.client_gone(id);
    server.monitors.remove(id);
}

async fn connection_loop<W: AsyncWrite + Unpin>(
    stream: &mut W,
    client: &mut Client,
) -> std::io::Result<()> {
    let server = client.server.clone();
    let info = client.info.clone();
    let mut shutdown = server.shutdown_signal();
    // The buffers grow when the client sends something and are given back once it has been
    // quiet for a while (below), so an idle connection holds no buffer at all.
    let mut inbuf = BytesMut::new();
    let mut out = BytesMut::new();
    // Set while the buffers are given back: the next read takes what arrived into a small
    // buffer, then the usual 16 KiB come back.
    let mut parked = false;
    let mut decoder = RequestDecoder::new(Limits::default());
    loop {
        // The settings this turn needs, under one read of the configuration.
        let (qlimit, timeout) = {
            let c = server.config.read();
            decoder.set_limits(Limits {
                proto_max_bulk_len: c.proto_max_bulk_len,
                ..Limits::default()
            });
            (c.client_query_buffer_limit, c.timeout)
        };
        // Like Redis, a client that has not authenticated may only send small requests.
        decoder.set_auth_required(!client.authed);
        let mut reqs = Vec::new();
        let mut protocol_error = None;
        // Unauthenticated, requests run one at a time: an AUTH lifts the limits for the
        // requests after it, even those that arrived in the same read (Redis decodes lazily).
        let mut more = false;
        loop {
            match decoder.decode(&mut inbuf) {
                Ok(Some(args)) => {
                    if !args.is_empty() {
                        reqs.push(args);
                        if !client.authed {
                            more = !inbuf.is_empty();
                            break;
                        }
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    protocol_error = Some(e);
                    break;
                }
            }
        }
        if !reqs.is_empty() {
            let mut reqs = VecDeque::from(reqs);
            client.run_batch(&mut reqs, &mut out).await;
            while !reqs.is_empty() {
                // A chunk of replies is ready and more commands wait: it goes out first.
                if !flush(stream, client, &mut out, timeout).await? {
                    return Ok(());
                }
                client.run_batch(&mut reqs, &mut out).await;
            }
            // What arrived while a command was blocked follows what was already buffered.
            if !client.unread.is_empty() {
                inbuf.extend_from_slice(&client.unread);
                client.unread.clear();
                more = true;
            }
        }
        if let Some(e) = protocol_error {
            // Replies to the commands before the bad frame go out first, then the error.
            // `to_frame` echoes a non-ASCII byte raw, as Redis does (`got '\xe9'`).
            resp::encode(&e.to_frame(), client.proto, &mut out);
            write_flush(stream, &out).await?;
            return Ok(());
        }
        if client.mailbox_used {
            info.pubsub.take_into(&mut out);
        }
        // Replies to reads this thread ran itself wait until the other connections that are
        // ready have run theirs, then go out together, as Redis writes every reply of an event
        // loop turn before it sleeps: a client woken by one reply then finds the next already
        // there, instead of going back to sleep and being woken for each (a wake-up on another
        // core costs more than a short read). Replies to writes come back from the writer
        // together already.
        if client.read_here && !out.is_empty() {
            tokio::task::yield_now().await;
        }
        client.read_here = false;
        if !flush(stream, client, &mut out, timeout).await? {
            return Ok(());
        }
        if client.quit || info.killed.load(Ordering::SeqCst) {
            return Ok(());
        }
        if inbuf.len() > qlimit {
            tracing::warn!(
                "closing client {} that reached max query buffer length ({} bytes)",
                info.id,
                inbuf.len()
            );
            return Ok(());
        }
        if more {
            continue;
        }
        info.qbuf.store(inbuf.len() as u64, Ordering::Relaxed);
        if !parked && inbuf.capacity() - inbuf.len() < 4096 {
            inbuf.reserve(16 * 1024);
        }
        // Only worth a timer when there are many connections: a few keep their buffers.
        let holding = !parked
            && inbuf.is_empty()
            && out.is_empty()
            && server.connected.load(Ordering::Relaxed) > MANY_CLIENTS;
        // As in Redis, `timeout` does not close a subscriber: it is idle by design.
        let idle = if client.subs.any() { 0 } else { timeout };
        let rd = client
            .rd
            .as_mut()
            .expect("the read half lives in the client");
        tokio::select! {
            n = rd.read_buf(&mut inbuf) => {
                server.stats.total_reads_processed.fetch_add(1, Ordering::Relaxed);
                let n = n?;
                if n == 0 {
                    return Ok(());
                }
                parked = false;
                server.stats.net_input_bytes.fetch_add(n as u64, Ordering::Relaxed);
            }
            // Quiet for a while: the empty buffers go back to the allocator (Redis frees an
            // idle client's query buffer too), so ten thousand idle connections cost their
            // sockets and little else.
            // (An async block: the timer is only made when the branch is enabled.)
            _ = async { tokio::time::sleep(BUFFERS_KEPT).await }, if holding => {
                inbuf = BytesMut::new();
                out = BytesMut::new();
                parked = true;
            }
            _ = info.kill.notified() => return Ok(()),
            _ = shutdown.changed() => return Ok(()),
            // Published messages: written at the top of the loop, after letting the other
            // ready connections run first, so the messages their commands publish meanwhile go
            // out in the same write (as Redis writes once per event-loop turn).
            _ = info.pubsub.ready(), if client.mailbox_used => tokio::task::yield_now().await,
            // `timeout`: an idle client is closed, as Redis does (0 = never).
            _ = idle_timer(idle) => {
                tracing::debug!("closing idle client {}", info.id);
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::configure_socket;
    use std::time::Duration;

    /// An accepted socket and its SockRef view, for reading options back.
    async fn accepted() -> (tokio::net::TcpStream, tokio::net::TcpStream) {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let c = tokio::net::TcpStream::connect(l.local_addr().unwrap())
            .await
            .unwrap();
        let (s, _) = l.accept().await.unwrap();
        (s, c)
    }

    #[tokio::test]
    async fn keepalive_as_redis_sets_it() {
        let (s, _c) = accepted().await;
        let r = socket2::SockRef::from(&s);
        // The operating system's default is off: the call below is what turns it on.
        assert!(!r.keepalive().unwrap());
        configure_socket(&s, 300).unwrap();
        assert!(r.keepalive().unwrap());
        assert_eq!(r.tcp_keepalive_time().unwrap(), Duration::from_secs(300));
        assert_eq!(
            r.tcp_keepalive_interval().unwrap(),
            Duration::from_secs(100)
        );
        assert_eq!(r.tcp_keepalive_retries().unwrap(), 3);
        assert!(s.nodelay().unwrap());

        // A short setting still probes at least every second.
        let (s, _c) = accepted().await;
        configure_socket(&s, 2).unwrap();
        let r = socket2::SockRef::from(&s);
        assert_eq!(r.tcp_keepalive_time().unwrap(), Duration::from_secs(2));
        assert_eq!(r.tcp_keepalive_interval().unwrap(), Duration::from_secs(1));
    }

    #[tokio::test]
    async fn keepalive_zero_leaves_it_off() {
        let (s, _c) = accepted().await;
        configure_socket(&s, 0).unwrap();
        assert!(!socket2::SockRef::from(&s).keepalive().unwrap());
        assert!(s.nodelay().unwrap());
    }
}
