//! Pub/sub over TCP: SUBSCRIBE / PSUBSCRIBE / SSUBSCRIBE and their UNSUBSCRIBEs, PUBLISH,
//! SPUBLISH, PUBSUB, the subscribed mode of RESP2 connections, RESP3 push frames, RESET and
//! disconnection, CLIENT LIST / INFO, the `redis` crate's PubSub, and the output-buffer limit
//! that disconnects a subscriber that does not read. Exact bytes are redis-server 7.0.15's.

mod common;
use common::*;
use resp::Frame;
use std::time::{Duration, Instant};

/// Sends a command line and checks the exact bytes of everything it answers.
async fn exchange(c: &mut Raw, args: &[&str], expected: &[u8]) {
    let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    c.send(&encode_command(&args)).await;
    c.expect_bytes(expected).await;
}

/// Polls PUBSUB NUMSUB until `ch` has `n` subscribers (disconnection is noticed by the
/// subscriber's own task, a moment later).
async fn wait_numsub(c: &mut Raw, ch: &str, n: i64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while numsub(c, ch).await != n {
        assert!(
            Instant::now() < deadline,
            "{ch} never reached {n} subscribers"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn numsub(c: &mut Raw, ch: &str) -> i64 {
    match c.cmd(&["PUBSUB", "NUMSUB", ch]).await {
        Frame::Array(v) => match v.get(1) {
            Some(Frame::Integer(n)) => *n,
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resp2_subscribed_mode_exact_bytes() {
    let s = start().await;
    let mut c = s.raw().await;
    exchange(
        &mut c,
        &["UNSUBSCRIBE"],
        b"*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n",
    )
    .await;
    exchange(
        &mut c,
        &["PUNSUBSCRIBE"],
        b"*3\r\n$12\r\npunsubscribe\r\n$-1\r\n:0\r\n",
    )
    .await;
    exchange(
        &mut c,
        &["SUNSUBSCRIBE"],
        b"*3\r\n$12\r\nsunsubscribe\r\n$-1\r\n:0\r\n",
    )
    .await;
    exchange(
        &mut c,
        &["SUBSCRIBE", "a", "b"],
        b"*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n*3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:2\r\n",
    )
    .await;
    exchange(&mut c, &["PING"], b"*2\r\n$4\r\npong\r\n$0\r\n\r\n").await;
    exchange(&mut c, &["PING", "x"], b"*2\r\n$4\r\npong\r\n$1\r\nx\r\n").await;
    for (cmd, name) in [
        (&["GET", "a"][..], "get"),
        (&["CONFIG", "GET", "x"][..], "config|get"),
        (&["CLIENT", "LIST"][..], "client|list"),
        (&["PUBLISH", "a", "m"][..], "publish"),
    ] {
        let e = format!(
            "-ERR Can't execute '{name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n"
        );
        exchange(&mut c, cmd, e.as_bytes()).await;
    }
    exchange(
        &mut c,
        &["PSUBSCRIBE", "a*", "b*"],
        b"*3\r\n$10\r\npsubscribe\r\n$2\r\na*\r\n:3\r\n*3\r\n$10\r\npsubscribe\r\n$2\r\nb*\r\n:4\r\n",
    )
    .await;
    // Unsubscribing from everything names each channel; the order of channels is Redis's hash
    // order there (Relis: subscription order), so only the pattern order is pinned.
    c.send(&encode_command(&[b"UNSUBSCRIBE"])).await;
    let mut names = Vec::new();
    for count in [3, 2] {
        match c.read().await.unwrap() {
            Frame::Array(v) => {
                assert_eq!(v[0], bulk("unsubscribe"));
                assert_eq!(v[2], int(count));
                names.push(format!("{:?}", v[1]));
            }
            other => panic!("{other:?}"),
        }
    }
    names.sort();
    assert_eq!(
        names,
        [format!("{:?}", bulk("a")), format!("{:?}", bulk("b"))]
    );
    exchange(
        &mut c,
        &["PUNSUBSCRIBE"],
        b"*3\r\n$12\r\npunsubscribe\r\n$2\r\na*\r\n:1\r\n*3\r\n$12\r\npunsubscribe\r\n$2\r\nb*\r\n:0\r\n",
    )
    .await;
    exchange(&mut c, &["PING"], b"+PONG\r\n").await;
    // Shard channels count on their own; they keep the connection in subscribed mode too.
    exchange(
        &mut c,
        &["SSUBSCRIBE", "s"],
        b"*3\r\n$10\r\nssubscribe\r\n$1\r\ns\r\n:1\r\n",
    )
    .await;
    exchange(&mut c, &["PING"], b"*2\r\n$4\r\npong\r\n$0\r\n\r\n").await;
    exchange(
        &mut c,
        &["SUBSCRIBE", "a", "a"],
        b"*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n",
    )
    .await;
    exchange(&mut c, &["RESET"], b"+RESET\r\n").await;
    exchange(&mut c, &["PING"], b"+PONG\r\n").await;
    // Inside MULTI, a command refused by the subscribed mode aborts the transaction.
    let mut m = s.raw().await;
    assert_eq!(m.cmd(&["MULTI"]).await, ok());
    assert_eq!(m.cmd(&["SUBSCRIBE", "x"]).await, simple("QUEUED"));
    assert_eq!(
        m.cmd(&["EXEC"]).await,
        arr(vec![Frame::Array(vec![
            bulk("subscribe"),
            bulk("x"),
            int(1)
        ])])
    );
    assert_eq!(m.cmd(&["PING"]).await, arr(vec![bulk("pong"), bulk("")]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_subscribers_and_patterns() {
    let s = start().await;
    let mut a = s.raw().await;
    let mut b = s.raw().await;
    let mut p = s.raw().await;
    exchange(
        &mut a,
        &["SUBSCRIBE", "ch"],
        b"*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n",
    )
    .await;
    exchange(
        &mut a,
        &["PSUBSCRIBE", "c*"],
        b"*3\r\n$10\r\npsubscribe\r\n$2\r\nc*\r\n:2\r\n",
    )
    .await;
    exchange(
        &mut b,
        &["PSUBSCRIBE", "c?", "*h"],
        b"*3\r\n$10\r\npsubscribe\r\n$2\r\nc?\r\n:1\r\n*3\r\n$10\r\npsubscribe\r\n$2\r\n*h\r\n:2\r\n",
    )
    .await;
    // a: the channel and one pattern; b: two patterns.
    assert_eq!(p.cmd(&["PUBLISH", "ch", "hello"]).await, int(4));
    a.expect_bytes(b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n*4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$5\r\nhello\r\n").await;
    b.expect_bytes(b"*4\r\n$8\r\npmessage\r\n$2\r\nc?\r\n$2\r\nch\r\n$5\r\nhello\r\n*4\r\n$8\r\npmessage\r\n$2\r\n*h\r\n$2\r\nch\r\n$5\r\nhello\r\n").await;
    assert_eq!(p.cmd(&["PUBLISH", "nobody", "x"]).await, int(0));
    assert_eq!(p.cmd(&["PUBLISH", "cat", "x"]).await, int(1));
    a.expect_bytes(b"*4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$3\r\ncat\r\n$1\r\nx\r\n")
        .await;
    // Binary-safe channels and payloads.
    assert_eq!(
        p.cmd_bytes(&[b"PUBLISH", b"ch", b"a\r\n\x00b"]).await,
        int(4)
    );
    a.expect_bytes(b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\na\r\n\x00b\r\n")
        .await;
    a.read().await.unwrap();
    b.read().await.unwrap();
    b.read().await.unwrap();

    assert_eq!(
        p.cmd(&["PUBSUB", "NUMSUB", "ch", "x", "ch"]).await,
        arr(vec![
            bulk("ch"),
            int(1),
            bulk("x"),
            int(0),
            bulk("ch"),
            int(1)
        ])
    );
    assert_eq!(p.cmd(&["PUBSUB", "NUMPAT"]).await, int(3));
    assert_eq!(p.cmd(&["PUBSUB", "CHANNELS"]).await, bulks(&["ch"]));
    assert_eq!(p.cmd(&["PUBSUB", "CHANNELS", "x*"]).await, arr(vec![]));
    assert_eq!(p.cmd(&["PUBSUB", "NUMSUB"]).await, arr(vec![]));
    assert_eq!(
        p.cmd(&["PUBSUB", "CHANNELS", "a", "b"]).await,
        err("ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. Try PUBSUB HELP.")
    );
    assert_eq!(
        p.cmd(&["PUBSUB", "NUMPAT", "x"]).await,
        err("ERR wrong number of arguments for 'pubsub|numpat' command")
    );
    assert_eq!(
        p.cmd(&["PUBSUB", "FOO"]).await,
        err("ERR unknown subcommand 'FOO'. Try PUBSUB HELP.")
    );
    let help = p.cmd(&["PUBSUB", "HELP"]).await;
    assert!(
        matches!(&help, Frame::Array(v) if v.len() == 14),
        "{help:?}"
    );

    // Disconnection and RESET unsubscribe everything.
    drop(a);
    wait_numsub(&mut p, "ch", 0).await;
    exchange(&mut b, &["RESET"], b"+RESET\r\n").await;
    assert_eq!(p.cmd(&["PUBSUB", "NUMPAT"]).await, int(0));
    assert_eq!(p.cmd(&["PUBLISH", "ch", "x"]).await, int(0));
    assert_eq!(p.cmd(&["PUBSUB", "CHANNELS"]).await, arr(vec![]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn glob_patterns_match_as_redis_stringmatch() {
    let s = start().await;
    let mut sub = s.raw().await;
    let mut p = s.raw().await;
    let pats: &[&str] = &["h[ae]llo", "h\\*llo", "[^a]b", "a?c", "x[a-c]y", "z[b-]"];
    let mut line = vec!["PSUBSCRIBE"];
    line.extend_from_slice(pats);
    let line: Vec<&[u8]> = line.iter().map(|a| a.as_bytes()).collect();
    sub.send(&encode_command(&line)).await;
    for _ in pats {
        sub.read().await.unwrap();
    }
    // Receiver counts as redis-server 7.0.15 gives them.
    for (ch, n) in [
        ("hello", 1),
        ("hallo", 1),
        ("hillo", 0),
        ("h*llo", 1),
        ("hxllo", 0),
        ("ab", 0),
        ("bb", 1),
        ("abc", 1),
        ("azc", 1),
        ("xby", 1),
        ("xdy", 0),
        ("z-", 0),
        ("zb", 2),
        ("z]", 1),
    ] {
        assert_eq!(p.cmd(&["PUBLISH", ch, "m"]).await, int(n), "{ch}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resp3_push_frames_and_normal_commands_on_one_connection() {
    let s = start().await;
    let mut c = s.raw().await;
    c.cmd(&["HELLO", "3"]).await;
    exchange(
        &mut c,
        &["SUBSCRIBE", "a"],
        b">3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n",
    )
    .await;
    // Its own message comes before PUBLISH's count.
    exchange(
        &mut c,
        &["PUBLISH", "a", "m"],
        b">3\r\n$7\r\nmessage\r\n$1\r\na\r\n$1\r\nm\r\n:1\r\n",
    )
    .await;
    exchange(
        &mut c,
        &["PSUBSCRIBE", "*"],
        b">3\r\n$10\r\npsubscribe\r\n$1\r\n*\r\n:2\r\n",
    )
    .await;
    exchange(
        &mut c,
        &["PUBLISH", "a", "m2"],
        b">3\r\n$7\r\nmessage\r\n$1\r\na\r\n$2\r\nm2\r\n>4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$1\r\na\r\n$2\r\nm2\r\n:2\r\n",
    )
    .await;
    exchange(&mut c, &["PING"], b"+PONG\r\n").await;
    exchange(&mut c, &["GET", "x"], b"_\r\n").await;
    exchange(&mut c, &["SET", "x", "1"], b"+OK\r\n").await;
    // Another client's message arrives while this one is idle.
    let mut p = s.raw().await;
    assert_eq!(p.cmd(&["PUBLISH", "zz", "q"]).await, int(1));
    c.expect_bytes(b">4\r\n$8\r\npmessage\r\n$1\r\n*\r\n$2\r\nzz\r\n$1\r\nq\r\n")
        .await;
    exchange(
        &mut c,
        &["UNSUBSCRIBE"],
        b">3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n:1\r\n",
    )
    .await;
    exchange(
        &mut c,
        &["PUNSUBSCRIBE"],
        b">3\r\n$12\r\npunsubscribe\r\n$1\r\n*\r\n:0\r\n",
    )
    .await;
    exchange(
        &mut c,
        &["SSUBSCRIBE", "s"],
        b">3\r\n$10\r\nssubscribe\r\n$1\r\ns\r\n:1\r\n",
    )
    .await;
    exchange(
        &mut c,
        &["SPUBLISH", "s", "z"],
        b">3\r\n$8\r\nsmessage\r\n$1\r\ns\r\n$1\r\nz\r\n:1\r\n",
    )
    .await;
    assert_eq!(p.cmd(&["PUBSUB", "SHARDCHANNELS"]).await, bulks(&["s"]));
    assert_eq!(
        p.cmd(&["PUBSUB", "SHARDNUMSUB", "s", "t"]).await,
        arr(vec![bulk("s"), int(1), bulk("t"), int(0)])
    );
    // PUBLISH does not reach shard subscribers, nor SPUBLISH channel subscribers.
    assert_eq!(p.cmd(&["PUBLISH", "s", "x"]).await, int(0));
    exchange(
        &mut c,
        &["SUNSUBSCRIBE"],
        b">3\r\n$12\r\nsunsubscribe\r\n$1\r\ns\r\n:0\r\n",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_list_info_and_client_kill() {
    let s = start().await;
    let mut sub = s.raw().await;
    let mut c = s.raw().await;
    sub.cmd(&["CLIENT", "SETNAME", "listener"]).await;
    sub.send(&encode_command(&[b"SUBSCRIBE", b"a", b"b"])).await;
    sub.read().await.unwrap();
    sub.read().await.unwrap();
    sub.cmd(&["PSUBSCRIBE", "p*"]).await;
    sub.cmd(&["SSUBSCRIBE", "s"]).await;
    let list = match c.cmd(&["CLIENT", "LIST", "TYPE", "pubsub"]).await {
        Frame::Bulk(b) | Frame::Verbatim { data: b, .. } => String::from_utf8(b.to_vec()).unwrap(),
        other => panic!("{other:?}"),
    };
    assert_eq!(list.lines().count(), 1, "{list}");
    assert!(list.contains("name=listener "), "{list}");
    assert!(list.contains(" flags=P "), "{list}");
    assert!(list.contains(" sub=2 psub=1 ssub=1 "), "{list}");
    let normal = match c.cmd(&["CLIENT", "LIST", "TYPE", "normal"]).await {
        Frame::Bulk(b) | Frame::Verbatim { data: b, .. } => String::from_utf8(b.to_vec()).unwrap(),
        other => panic!("{other:?}"),
    };
    assert!(!normal.contains("listener"), "{normal}");
    let info = match c.cmd(&["INFO", "stats"]).await {
        Frame::Bulk(b) | Frame::Verbatim { data: b, .. } => String::from_utf8(b.to_vec()).unwrap(),
        other => panic!("{other:?}"),
    };
    assert!(info.contains("pubsub_channels:2\r\n"), "{info}");
    assert!(info.contains("pubsub_patterns:1\r\n"), "{info}");
    assert!(info.contains("pubsubshard_channels:1\r\n"), "{info}");
    assert_eq!(c.cmd(&["CLIENT", "KILL", "TYPE", "pubsub"]).await, int(1));
    assert!(sub.closed().await);
    wait_numsub(&mut c, "a", 0).await;
    assert_eq!(c.cmd(&["PUBSUB", "NUMPAT"]).await, int(0));
    assert_eq!(c.cmd(&["PUBSUB", "SHARDCHANNELS"]).await, arr(vec![]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_crate_pubsub_resp2_and_resp3() {
    let s = start().await;
    for url in [
        format!("redis://{}/", s.addr),
        format!("redis://{}/?protocol=resp3", s.addr),
    ] {
        let (tx, rx) = std::sync::mpsc::channel();
        let listener = tokio::task::spawn_blocking(move || {
            let client = redis::Client::open(url).unwrap();
            let mut con = client.get_connection().unwrap();
            let mut ps = con.as_pubsub();
            ps.subscribe("news").unwrap();
            ps.psubscribe("weather.*").unwrap();
            tx.send(()).unwrap();
            let mut got = Vec::new();
            for _ in 0..3 {
                let m = ps.get_message().unwrap();
                let pattern: Option<String> = m.get_pattern().ok();
                got.push((
                    m.get_channel_name().to_string(),
                    pattern,
                    m.get_payload::<String>().unwrap(),
                ));
            }
            got
        });
        rx.recv().unwrap();
        let mut p = s.client().await;
        let n: i64 = redis::cmd("PUBLISH")
            .arg("news")
            .arg("one")
            .query_async(&mut p)
            .await
            .unwrap();
        assert_eq!(n, 1);
        let n: i64 = redis::cmd("PUBLISH")
            .arg("weather.paris")
            .arg("sun")
            .query_async(&mut p)
            .await
            .unwrap();
        assert_eq!(n, 1);
        let n: i64 = redis::cmd("PUBLISH")
            .arg("news")
            .arg("two")
            .query_async(&mut p)
            .await
            .unwrap();
        assert_eq!(n, 1);
        let got = listener.await.unwrap();
        assert_eq!(
            got,
            vec![
                ("news".to_string(), None, "one".to_string()),
                (
                    "weather.paris".to_string(),
                    Some("weather.*".to_string()),
                    "sun".to_string()
                ),
                ("news".to_string(), None, "two".to_string()),
            ]
        );
    }
}

/// A subscriber that never reads: its socket buffers fill, its mailbox passes the hard limit,
/// and it is disconnected; the publisher is never held up and memory stays bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_subscriber_is_disconnected_at_the_output_buffer_limit() {
    let s = start().await;
    let mut p = s.raw().await;
    assert_eq!(
        p.cmd(&[
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "pubsub 1mb 512kb 60"
        ])
        .await,
        ok()
    );
    assert_eq!(
        p.cmd(&["CONFIG", "GET", "client-output-buffer-limit"])
            .await,
        arr(vec![
            bulk("client-output-buffer-limit"),
            bulk("normal 0 0 0 slave 268435456 67108864 60 pubsub 1048576 524288 60")
        ])
    );
    // A small receive buffer, so the kernel holds little on the subscriber's behalf.
    let sock = tokio::net::TcpSocket::new_v4().unwrap();
    sock.set_recv_buffer_size(4096).unwrap();
    let mut slow = sock.connect(s.addr).await.unwrap();
    {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        slow.write_all(&encode_command(&[b"SUBSCRIBE", b"firehose"]))
            .await
            .unwrap();
        let want = b"*3\r\n$9\r\nsubscribe\r\n$8\r\nfirehose\r\n:1\r\n";
        let mut got = vec![0u8; want.len()];
        slow.read_exact(&mut got).await.unwrap();
        assert_eq!(show(&got), show(want));
    }
    let payload = "x".repeat(64 * 1024);
    let started = Instant::now();
    let mut receivers = Vec::new();
    let mut max_omem = 0u64;
    // 64 MB in total: far past the 1 MB limit.
    for i in 0..1000 {
        match p.cmd(&["PUBLISH", "firehose", &payload]).await {
            Frame::Integer(n) => receivers.push(n),
            other => panic!("{other:?}"),
        }
        if i % 50 == 0 {
            if let Frame::Verbatim { data, .. } | Frame::Bulk(data) =
                p.cmd(&["CLIENT", "LIST", "TYPE", "pubsub"]).await
            {
                let text = String::from_utf8(data.to_vec()).unwrap();
                for field in text.split(' ') {
                    if let Some(v) = field.strip_prefix("omem=") {
                        max_omem = max_omem.max(v.parse().unwrap());
                    }
                }
            }
        }
    }
    // The publisher went on at full speed, and stopped counting the dead subscriber.
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(receivers[0], 1);
    assert_eq!(*receivers.last().unwrap(), 0, "the subscriber was dropped");
    // Memory held for it never went past the limit (plus one message).
    assert!(
        max_omem <= (1 << 20) + 64 * 1024 + 100,
        "omem reached {max_omem}"
    );
    assert_eq!(numsub(&mut p, "firehose").await, 0);
    // The subscriber finds its connection closed once it reads what the kernel kept.
    let mut scratch = vec![0u8; 1 << 16];
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        use tokio::io::AsyncReadExt;
        match tokio::time::timeout(Duration::from_secs(5), slow.read(&mut scratch)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(_)) => assert!(Instant::now() < deadline),
            Err(_) => panic!("subscriber not disconnected"),
        }
    }
}

/// The soft limit: a subscriber over it for longer than its seconds is disconnected, one that
/// is over it only briefly is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soft_output_buffer_limit_needs_time() {
    let s = start().await;
    let mut p = s.raw().await;
    // No hard limit; 128 KB for more than 0 whole seconds.
    assert_eq!(
        p.cmd(&[
            "CONFIG",
            "SET",
            "client-output-buffer-limit",
            "pubsub 0 128kb 0"
        ])
        .await,
        ok()
    );
    let sock = tokio::net::TcpSocket::new_v4().unwrap();
    sock.set_recv_buffer_size(4096).unwrap();
    let mut slow = sock.connect(s.addr).await.unwrap();
    {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        slow.write_all(&encode_command(&[b"SUBSCRIBE", b"soft"]))
            .await
            .unwrap();
        let mut got = vec![0u8; b"*3\r\n$9\r\nsubscribe\r\n$4\r\nsoft\r\n:1\r\n".len()];
        slow.read_exact(&mut got).await.unwrap();
    }
    let payload = "y".repeat(64 * 1024);
    let started = Instant::now();
    loop {
        let n = p.cmd(&["PUBLISH", "soft", &payload]).await;
        if n == int(0) {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "never dropped");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Dropped only after the limit had been passed for a while, not at once.
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(numsub(&mut p, "soft").await, 0);
}

/// The `redis` crate's RESP3 multiplexed connection: subscriptions and messages arrive as push
/// frames on the same connection that keeps running ordinary commands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_crate_resp3_push_on_a_multiplexed_connection() {
    let s = start().await;
    let client = redis::Client::open(format!("redis://{}/?protocol=resp3", s.addr)).unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let config = redis::AsyncConnectionConfig::new().set_push_sender(tx);
    let mut con = client
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .unwrap();
    con.subscribe("news").await.unwrap();
    con.psubscribe("w.*").await.unwrap();
    // Ordinary commands keep working on the subscribed connection.
    let _: () = redis::cmd("SET")
        .arg("k")
        .arg("v")
        .query_async(&mut con)
        .await
        .unwrap();
    let v: String = redis::cmd("GET")
        .arg("k")
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(v, "v");
    let mut p = s.client().await;
    for (ch, msg) in [("news", "one"), ("w.x", "two")] {
        let n: i64 = redis::cmd("PUBLISH")
            .arg(ch)
            .arg(msg)
            .query_async(&mut p)
            .await
            .unwrap();
        assert_eq!(n, 1);
    }
    let mut got = Vec::new();
    while got.len() < 2 {
        let push = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .unwrap()
            .unwrap();
        match push.kind {
            redis::PushKind::Message | redis::PushKind::PMessage => {
                let payload: String = redis::from_redis_value(push.data.last().unwrap()).unwrap();
                got.push((push.kind, payload));
            }
            redis::PushKind::Subscribe | redis::PushKind::PSubscribe => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(
        got,
        vec![
            (redis::PushKind::Message, "one".to_string()),
            (redis::PushKind::PMessage, "two".to_string())
        ]
    );
}

/// `timeout` closes idle clients but not subscribers, as in Redis.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_timeout_spares_subscribers() {
    let s = start().await;
    let mut p = s.raw().await;
    // Set first: a connection reads the setting when it starts waiting.
    assert_eq!(p.cmd(&["CONFIG", "SET", "timeout", "1"]).await, ok());
    let mut sub = s.raw().await;
    let mut idle = s.raw().await;
    assert_eq!(idle.cmd(&["PING"]).await, simple("PONG"));
    assert_eq!(
        sub.cmd(&["SUBSCRIBE", "ch"]).await,
        arr(vec![bulk("subscribe"), bulk("ch"), int(1)])
    );
    // The idle client goes within about a second; the subscriber stays.
    assert!(idle.closed().await);
    tokio::time::sleep(Duration::from_millis(300)).await;
    // (`p` was idle too.)
    let mut p = s.raw().await;
    assert_eq!(p.cmd(&["PUBLISH", "ch", "still"]).await, int(1));
    sub.expect_bytes(b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nstill\r\n")
        .await;
    assert_eq!(p.cmd(&["CONFIG", "SET", "timeout", "0"]).await, ok());
}

/// Pushes are not replies: under CLIENT REPLY OFF (and SKIP) the (un)subscribe confirmations
/// and published messages still go out, in RESP3 and in RESP2 alike, as redis-server 7.0.15
/// sends them; only the replies (PING's) are dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pushes_go_out_under_client_reply_off_and_skip() {
    let s = start().await;
    let mut p = s.raw().await;
    for resp3 in [true, false] {
        for mode in ["OFF", "SKIP"] {
            let mut c = s.raw().await;
            if resp3 {
                c.cmd(&["HELLO", "3"]).await;
            }
            let t = if resp3 { ">" } else { "*" };
            c.send(&encode_command(&[b"CLIENT", b"REPLY", mode.as_bytes()]))
                .await;
            exchange(
                &mut c,
                &["SUBSCRIBE", "ch", "ch2"],
                format!(
                    "{t}3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n{t}3\r\n$9\r\nsubscribe\r\n$3\r\nch2\r\n:2\r\n"
                )
                .as_bytes(),
            )
            .await;
            assert_eq!(p.cmd(&["PUBLISH", "ch", "hi"]).await, int(1));
            c.expect_bytes(format!("{t}3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n").as_bytes())
                .await;
            // SKIP was used up by SUBSCRIBE: PING answers; under OFF it does not.
            c.send(&encode_command(&[b"PING"])).await;
            if mode == "SKIP" {
                c.expect_bytes(if resp3 {
                    b"+PONG\r\n".as_slice()
                } else {
                    b"*2\r\n$4\r\npong\r\n$0\r\n\r\n".as_slice()
                })
                .await;
            }
            exchange(
                &mut c,
                &["UNSUBSCRIBE"],
                format!(
                    "{t}3\r\n$11\r\nunsubscribe\r\n$2\r\nch\r\n:1\r\n{t}3\r\n$11\r\nunsubscribe\r\n$3\r\nch2\r\n:0\r\n"
                )
                .as_bytes(),
            )
            .await;
            exchange(
                &mut c,
                &["PSUBSCRIBE", "p*"],
                format!("{t}3\r\n$10\r\npsubscribe\r\n$2\r\np*\r\n:1\r\n").as_bytes(),
            )
            .await;
            exchange(
                &mut c,
                &["PUNSUBSCRIBE"],
                format!("{t}3\r\n$12\r\npunsubscribe\r\n$2\r\np*\r\n:0\r\n").as_bytes(),
            )
            .await;
        }
    }
}
