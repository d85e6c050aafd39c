//! Limits with Redis's names, defaults and behaviour: `maxclients`, `client-query-buffer-limit`,
//! `proto-max-bulk-len`, `client-output-buffer-limit normal` (and what happens to a client that
//! does not read its replies when there is no limit: backpressure), and `timeout`.
//! (`tcp-keepalive` is a unit test of the socket set-up in client.rs.)

mod common;

use common::*;
use resp::Frame;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Polls INFO until `name` reads `want` (the server notices a closed connection on its own
/// schedule). The bound is generous (a loaded CI machine runs the server's tasks late); it is
/// there only so that a server that never gets there fails the test instead of hanging it.
async fn wait_info(c: &mut Raw, section: &str, name: &str, want: &str) {
    let give_up = std::time::Instant::now() + Duration::from_secs(30);
    let mut last = String::new();
    while std::time::Instant::now() < give_up {
        last = info_field(c, section, name).await;
        if last == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("INFO {name} never became {want} (still {last})");
}

/// A `CLIENT LIST` field of the client named `name`.
async fn client_field(c: &mut Raw, name: &str, field: &str) -> u64 {
    let list = match c.cmd(&["CLIENT", "LIST"]).await {
        Frame::Bulk(b) => String::from_utf8(b.to_vec()).unwrap(),
        f => panic!("CLIENT LIST: {f:?}"),
    };
    let line = list
        .lines()
        .find(|l| l.contains(&format!(" name={name} ")))
        .unwrap_or_else(|| panic!("no client {name} in {list}"));
    line.split(' ')
        .find_map(|kv| kv.strip_prefix(field)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("no {field} in {line}"))
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn maxclients_refuses_the_next_client_and_config_set_lowers_it() {
    let s = start_with(|c| c.maxclients = 3).await;
    let mut a = s.raw().await;
    let mut b = s.raw().await;
    let mut c = s.raw().await;
    for x in [&mut a, &mut b, &mut c] {
        assert_eq!(x.cmd(&["PING"]).await, simple("PONG"));
    }
    // The (maxclients+1)th gets Redis's exact error, then the close.
    let mut d = s.raw().await;
    d.expect_bytes(b"-ERR max number of clients reached\r\n")
        .await;
    d.expect_closed().await;
    assert_eq!(
        info_field(&mut a, "stats", "rejected_connections").await,
        "1"
    );
    assert_eq!(info_field(&mut a, "clients", "maxclients").await, "3");

    // Lowered at run time: the connected clients stay (as in Redis), new ones wait for room.
    assert_eq!(a.cmd(&["CONFIG", "SET", "maxclients", "2"]).await, ok());
    assert_eq!(b.cmd(&["PING"]).await, simple("PONG"));
    assert_eq!(c.cmd(&["PING"]).await, simple("PONG"));
    drop(c);
    wait_info(&mut a, "clients", "connected_clients", "2").await;
    let mut e = s.raw().await;
    e.expect_bytes(b"-ERR max number of clients reached\r\n")
        .await;
    e.expect_closed().await;
    // Raised again: admitted.
    assert_eq!(a.cmd(&["CONFIG", "SET", "maxclients", "3"]).await, ok());
    let mut f = s.raw().await;
    assert_eq!(f.cmd(&["PING"]).await, simple("PONG"));
    assert_eq!(
        info_field(&mut a, "stats", "rejected_connections").await,
        "2"
    );
    assert_eq!(
        a.cmd(&["CONFIG", "SET", "maxclients", "0"]).await,
        err("ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument must be between 1 and 4294967295 inclusive")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn query_buffer_limit_closes_the_client_without_a_reply() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "client-query-buffer-limit"]).await,
        bulks(&["client-query-buffer-limit", "1073741824"])
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "client-query-buffer-limit", "1000"]).await,
        err("ERR CONFIG SET failed (possibly related to argument 'client-query-buffer-limit') - argument must be between 1048576 and 9223372036854775807 inclusive")
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "client-query-buffer-limit", "1mb"])
            .await,
        ok()
    );
    // Under the limit: served.
    let v = vec![b'v'; 900_000];
    assert_eq!(c.cmd_bytes(&[b"SET", b"k", &v]).await, ok());
    // A 2 MB argument fills the query buffer past 1 MB: Redis closes the client, no reply.
    let mut x = s.raw().await;
    let mut req = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2000000\r\n".to_vec();
    req.extend(std::iter::repeat_n(b'x', 1_500_000));
    // The server may close before it has read everything: a reset is fine.
    let _ = x.stream.write_all(&req).await;
    x.expect_closed().await;
    // Nothing of it was applied; the others carry on.
    assert_eq!(
        c.cmd(&["STRLEN", "k"]).await,
        int(900_000),
        "the refused SET did not run"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proto_max_bulk_len_refuses_longer_bulks() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "proto-max-bulk-len"]).await,
        bulks(&["proto-max-bulk-len", "536870912"])
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "proto-max-bulk-len", "1000"]).await,
        err("ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - argument must be between 1048576 and 9223372036854775807 inclusive")
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "proto-max-bulk-len", "1mb"]).await,
        ok()
    );
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "proto-max-bulk-len"]).await,
        bulks(&["proto-max-bulk-len", "1048576"])
    );
    // Exactly the limit is allowed.
    let v = vec![b'v'; 1 << 20];
    assert_eq!(c.cmd_bytes(&[b"SET", b"k", &v]).await, ok());
    // One byte more: Redis's protocol error, then the close; the bulk is never read.
    let mut x = s.raw().await;
    x.send(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1048577\r\n").await;
    x.expect_bytes(b"-ERR Protocol error: invalid bulk length\r\n")
        .await;
    x.expect_closed().await;
    // A string may not grow past it either (Redis's checkStringLength).
    assert_eq!(
        c.cmd(&["APPEND", "k", "x"]).await,
        err("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
    );
    assert_eq!(c.cmd(&["STRLEN", "k"]).await, int(1 << 20));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_buffer_hard_limit_closes_before_sending() {
    let s = start().await;
    let mut c = s.raw().await;
    // Redis's default: no limit for normal clients.
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "client-output-buffer-limit"])
            .await,
        bulks(&[
            "client-output-buffer-limit",
            "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
        ])
    );
    let big = vec![b'b'; 2_000_000];
    let small = vec![b's'; 500_000];
    assert_eq!(c.cmd_bytes(&[b"SET", b"big", &big]).await, ok());
    assert_eq!(c.cmd_bytes(&[b"SET", b"small", &small]).await, ok());
    let mut d = s.raw().await;
    assert_eq!(d.cmd(&["STRLEN", "big"]).await, int(2_000_000));
    assert_eq!(
        d.cmd(&["GET", "big"]).await,
        Frame::Bulk(big.clone().into())
    );

    assert_eq!(
        c.cmd(&[
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "normal 1mb 0 0"
        ])
        .await,
        ok()
    );
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "client-output-buffer-limit"])
            .await,
        bulks(&[
            "client-output-buffer-limit",
            "normal 1048576 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
        ])
    );
    // Under the limit: served.
    assert_eq!(
        d.cmd(&["GET", "small"]).await,
        Frame::Bulk(small.clone().into())
    );
    // A 2 MB reply is over 1 MB: closed, and (as Redis) not one byte of it is sent.
    d.send(&encode_command(&[b"GET", b"big"])).await;
    d.expect_closed().await;
    assert_eq!(c.cmd(&["PING"]).await, simple("PONG"));
    // Like Redis, replies that fit its 16 KiB per-client buffer are not counted: under a
    // 100-byte limit a 10 KB reply is served, a 20 KB one closes (checked on redis-server).
    let v10 = vec![b'x'; 10_000];
    let v20 = vec![b'x'; 20_000];
    assert_eq!(c.cmd_bytes(&[b"SET", b"v10", &v10]).await, ok());
    assert_eq!(c.cmd_bytes(&[b"SET", b"v20", &v20]).await, ok());
    assert_eq!(
        c.cmd(&[
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "normal 100 0 0"
        ])
        .await,
        ok()
    );
    let mut e = s.raw().await;
    assert_eq!(e.cmd(&["GET", "v10"]).await, Frame::Bulk(v10.into()));
    e.send(&encode_command(&[b"GET", b"v20"])).await;
    e.expect_closed().await;
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "client-output-buffer-limit", "normal 1"])
            .await,
        err("ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Wrong number of arguments in buffer limit configuration.")
    );
}

/// Sends `n` copies of `req` on `stream` from a task of its own (it blocks once the server
/// stops reading).
fn send_in_background(
    mut wr: tokio::net::tcp::OwnedWriteHalf,
    req: Vec<u8>,
    n: usize,
) -> tokio::task::JoinHandle<tokio::net::tcp::OwnedWriteHalf> {
    tokio::spawn(async move {
        let all = req.repeat(n);
        let _ = wr.write_all(&all).await;
        wr
    })
}

/// Reads until EOF (or a reset), returning how many bytes came.
async fn read_to_end(rd: &mut tokio::net::tcp::OwnedReadHalf) -> usize {
    let mut total = 0;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match tokio::time::timeout(Duration::from_secs(10), rd.read(&mut buf))
            .await
            .expect("the server closes the connection")
        {
            Ok(0) | Err(_) => return total,
            Ok(n) => total += n,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_buffer_soft_limit_closes_a_client_that_stops_reading() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&[
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "normal 0 128kb 0"
        ])
        .await,
        ok()
    );
    let v = vec![b'v'; 100_000];
    assert_eq!(c.cmd_bytes(&[b"SET", b"v", &v]).await, ok());
    // The client is served once before it stops reading: only a client the server has
    // registered can be seen leaving. (A connection the server has not accepted yet also
    // leaves `connected_clients` at 1: on a loaded machine the test read that, read every
    // reply, and waited for a close that nothing asked for.)
    let mut x = s.raw().await;
    assert_eq!(x.cmd(&["CLIENT", "SETNAME", "slow"]).await, ok());
    assert_eq!(
        info_field(&mut c, "clients", "connected_clients").await,
        "2"
    );
    let (mut rd, wr) = x.stream.into_split();
    // 300 GETs: 30 MB of replies, more than the sockets' buffers take, and the client reads
    // nothing until the server gives up on it.
    let sender = send_in_background(wr, encode_command(&[b"GET", b"v"]), 300);
    // Only once the server has given up on it does the client read what reached it. Were the
    // soft limit not enforced, the server would wait on the full socket for ever and this
    // would fail.
    wait_info(&mut c, "clients", "connected_clients", "1").await;
    let got = read_to_end(&mut rd).await;
    let _ = sender.await;
    let reply = 100_000 + "$100000\r\n\r\n".len();
    assert!(
        got < 300 * reply,
        "closed before all replies: {got} bytes of {}",
        300 * reply
    );
    assert_eq!(c.cmd(&["PING"]).await, simple("PONG"));
}

/// VmRSS of process `pid`, in bytes.
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .unwrap()
        .trim()
        .trim_end_matches(" kB")
        .trim()
        .parse()
        .unwrap();
    kb * 1024
}

/// With no output limit (the default), a client that sends requests and never reads their
/// replies is not given unbounded server memory (Redis would buffer every reply): the server
/// stops reading its socket while a chunk of its replies is unsent. Measured on the real
/// binary: its RSS, CLIENT LIST `omem` and the commands it ran, then every reply arrives intact
/// once the client reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_does_not_read_is_throttled_not_buffered() {
    let dir = tempfile::tempdir().unwrap();
    let server = spawn_binary(dir.path(), &[]);
    let pid = server.proc.id();
    let mut c = Raw::connect(server.addr()).await;
    const VALUE: usize = 100_000;
    const N: usize = 1000;
    let v = vec![b'v'; VALUE];
    assert_eq!(c.cmd_bytes(&[b"SET", b"v", &v]).await, ok());
    // Warm up (reader connections, page cache, allocator) before the first measurement.
    for _ in 0..20 {
        assert_eq!(c.cmd(&["GET", "v"]).await, Frame::Bulk(v.clone().into()));
    }
    let before = rss(pid);
    let processed_before: u64 = info_field(&mut c, "stats", "total_commands_processed")
        .await
        .parse()
        .unwrap();

    let x = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
    let (mut rd, wr) = x.into_split();
    let mut req = encode_command(&[b"CLIENT", b"SETNAME", b"slow"]);
    req.extend(encode_command(&[b"GET", b"v"]).repeat(N));
    let sender = send_in_background(wr, req, 1);
    // Wait until the server has stopped making progress on it (its replies fill the socket).
    // (Each INFO counts itself: `asked` of them are subtracted.)
    let (mut last, mut same, mut asked) = (0, 0, 0);
    while same < 20 {
        tokio::time::sleep(Duration::from_millis(25)).await;
        asked += 1;
        let p: u64 = info_field(&mut c, "stats", "total_commands_processed")
            .await
            .parse::<u64>()
            .unwrap()
            - asked;
        if p == last {
            same += 1;
        } else {
            (last, same) = (p, 0);
        }
    }
    // The SETNAME and the GETs run for the slow client.
    let ran = last - processed_before - 1;
    let omem = client_field(&mut c, "slow", "omem").await;
    let after = rss(pid);
    let requested = (N * VALUE) as u64;
    eprintln!(
        "client not reading: {ran} of {N} GETs run ({} MB of replies asked), omem {omem} bytes, \
         server RSS {} -> {} MB",
        requested >> 20,
        before >> 20,
        after >> 20
    );
    assert!(ran < N as u64 / 2, "the server stopped serving it: {ran}");
    // At most one 64 KiB chunk plus one group of reads (16) is ever waiting.
    assert!(
        omem > 0 && omem <= (64 << 10) + 16 * (VALUE as u64 + 20),
        "omem {omem}"
    );
    assert!(
        after < before + (32 << 20),
        "RSS grew from {before} to {after} for {requested} bytes of unread replies"
    );
    // Nothing was dropped: the client reads and gets every reply.
    let mut got = Vec::new();
    let mut buf = vec![0u8; 1 << 20];
    let want = "+OK\r\n".len() + N * (VALUE + "$100000\r\n\r\n".len());
    while got.len() < want {
        let n = tokio::time::timeout(Duration::from_secs(20), rd.read(&mut buf))
            .await
            .expect("replies keep coming")
            .unwrap();
        assert!(n > 0, "closed after {} of {want} bytes", got.len());
        got.extend_from_slice(&buf[..n]);
    }
    assert_eq!(got.len(), want);
    assert!(got.starts_with(b"+OK\r\n$100000\r\nvvvv"));
    assert!(got.ends_with(b"vvvv\r\n"));
    let _ = sender.await;
}

/// `timeout`: an idle client is closed, an active one and a subscriber are not. Tokio's
/// paused clock runs the seconds (nothing here touches the engine's threads).
#[tokio::test(start_paused = true)]
async fn timeout_closes_idle_clients_but_not_subscribers() {
    let s = start_with(|c| c.timeout = 2).await;
    let mut active = s.raw().await;
    let mut idle = s.raw().await;
    let mut sub = s.raw().await;
    assert_eq!(idle.cmd(&["PING"]).await, simple("PONG"));
    assert_eq!(
        sub.cmd(&["SUBSCRIBE", "ch"]).await,
        Frame::Array(vec![bulk("subscribe"), bulk("ch"), int(1)])
    );
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert_eq!(active.cmd(&["PING"]).await, simple("PONG"));
    }
    // 9 s later: the idle client is gone, without a reply.
    idle.expect_closed().await;
    assert_eq!(active.cmd(&["PUBLISH", "ch", "m"]).await, int(1));
    assert_eq!(
        sub.read().await,
        Some(Frame::Array(vec![bulk("message"), bulk("ch"), bulk("m")]))
    );
    // A client that sends but does not take its replies counts as idle too: its socket takes
    // nothing for `timeout` seconds.
    let x = tokio::net::TcpStream::connect(s.addr).await.unwrap();
    let (mut rd, wr) = x.into_split();
    let payload = vec![b'e'; 100_000];
    let sender = send_in_background(wr, encode_command(&[b"ECHO", &payload]), 300);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let got = read_to_end(&mut rd).await;
    assert!(got < 300 * 100_000, "closed: {got} bytes read");
    let _ = sender.await;
    // (`active` has been idle meanwhile, and is gone too.)
    assert!(active.closed().await);
    let mut fresh = s.raw().await;
    assert_eq!(fresh.cmd(&["PING"]).await, simple("PONG"));
}
