//! The wire, byte for byte: inline (telnet-style) commands, pipelining, protocol errors (which
//! close only the offending connection), unknown-command and arity errors, large and
//! binary-safe arguments. Every expected byte string was taken from redis-server 7.0.15 over a
//! raw socket.

mod common;
use common::*;
use resp::Frame;

/// Sends `input` on a fresh connection and asserts the server answers exactly `reply` and
/// keeps the connection open (a PING afterwards still works).
async fn inline(s: &TestServer, input: &[u8], reply: &[u8]) {
    let mut c = s.raw().await;
    c.send(input).await;
    c.expect_bytes(reply).await;
    c.send(b"PING\r\n").await;
    c.expect_bytes(b"+PONG\r\n").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inline_commands_are_split_like_redis() {
    let s = start().await;
    inline(&s, b"PING\r\n", b"+PONG\r\n").await;
    // A bare \n ends an inline line too.
    inline(&s, b"PING\n", b"+PONG\r\n").await;
    inline(&s, b"ping hello\r\n", b"$5\r\nhello\r\n").await;
    inline(&s, b"  PING   \r\n", b"+PONG\r\n").await;
    // Double quotes take escapes, single quotes only \'.
    inline(
        &s,
        b"SET \"a b\" 'c'\r\nGET \"a b\"\r\n",
        b"+OK\r\n$1\r\nc\r\n",
    )
    .await;
    inline(&s, b"ECHO \"\\x41\\n\"\r\n", b"$2\r\nA\n\r\n").await;
    inline(&s, b"ECHO \"a\\\"b\"\r\n", b"$3\r\na\"b\r\n").await;
    inline(&s, b"ECHO 'a\\'b'\r\n", b"$3\r\na'b\r\n").await;
    inline(&s, b"ECHO \"\"\r\n", b"$0\r\n\r\n").await;
    inline(
        &s,
        b"SET bin \"\\x00\\r\\n\\xff\"\r\nGET bin\r\n",
        b"+OK\r\n$4\r\n\x00\r\n\xff\r\n",
    )
    .await;
    // Inline commands get the same errors as multibulk ones.
    inline(
        &s,
        b"ping \"a\" 'b'\r\n",
        b"-ERR wrong number of arguments for 'ping' command\r\n",
    )
    .await;
    inline(
        &s,
        b"foo a b\r\n",
        b"-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_lines_and_empty_multibulks_are_skipped() {
    let s = start().await;
    inline(&s, b"\r\n\r\nPING\r\n", b"+PONG\r\n").await;
    inline(&s, b"\n   \r\n\t\r\nPING\r\n", b"+PONG\r\n").await;
    inline(&s, b"*0\r\nPING\r\n", b"+PONG\r\n").await;
    inline(&s, b"*-1\r\nPING\r\n", b"+PONG\r\n").await;
    inline(&s, b"*-1\r\n*0\r\n\r\n*1\r\n$4\r\nPING\r\n", b"+PONG\r\n").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_split_across_many_writes_is_reassembled() {
    let s = start().await;
    let mut c = s.raw().await;
    let req = encode_command(&[b"SET", b"split", b"value"]);
    for b in &req {
        c.send(&[*b]).await;
        tokio::task::yield_now().await;
    }
    c.expect_bytes(b"+OK\r\n").await;
    for chunk in [&b"GE"[..], b"T spl", b"it\r", b"\n"] {
        c.send(chunk).await;
        tokio::task::yield_now().await;
    }
    c.expect_bytes(b"$5\r\nvalue\r\n").await;
    // Redis skips the two bytes after a bulk payload without checking them.
    c.send(b"*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n").await;
    c.expect_bytes(b"+PONG\r\n+PONG\r\n").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_replies_come_back_in_order() {
    let s = start().await;
    let mut c = s.raw().await;
    let n = 2000;
    let mut req = Vec::new();
    let mut want = Vec::new();
    for i in 0..n {
        let (k, v) = (format!("key:{i}"), format!("value:{i}"));
        req.extend(encode_command(&[b"SET", k.as_bytes(), v.as_bytes()]));
        req.extend(encode_command(&[b"GET", k.as_bytes()]));
        // Inline and multibulk requests mix freely in one pipeline.
        req.extend(format!("ECHO {i}\r\n").into_bytes());
        want.push(ok());
        want.push(bulk(&v));
        want.push(bulk(&i.to_string()));
    }
    c.send(&req).await;
    for (i, w) in want.iter().enumerate() {
        assert_eq!(&c.read().await.expect("reply"), w, "reply {i}");
    }
    c.send(b"PING\r\n").await;
    assert_eq!(c.read().await, Some(simple("PONG")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_and_writes_in_one_pipeline_keep_their_order() {
    let s = start().await;
    let mut c = s.raw().await;
    let mut req = Vec::new();
    for line in [
        &["SET", "k", "1"][..],
        &["GET", "k"],
        &["SET", "k", "2"],
        &["GET", "k"],
        &["SET", "k", "3", "GET"],
        &["SET", "k", "4", "NX"],
        &["GET", "k"],
        &["GET", "nope"],
        &["SET", "nope", "x", "XX"],
        &["GET", "nope"],
    ] {
        let args: Vec<&[u8]> = line.iter().map(|a| a.as_bytes()).collect();
        req.extend(encode_command(&args));
    }
    c.send(&req).await;
    // The whole batch is answered with one write: a small pipeline arrives in one read.
    let want: &[u8] =
        b"+OK\r\n$1\r\n1\r\n+OK\r\n$1\r\n2\r\n$1\r\n2\r\n$-1\r\n$1\r\n3\r\n$-1\r\n$-1\r\n$-1\r\n";
    let mut got = vec![0u8; 4096];
    let n = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        tokio::io::AsyncReadExt::read(&mut c.stream, &mut got),
    )
    .await
    .expect("replies within 10s")
    .expect("read");
    assert_eq!(show(&got[..n]), show(want));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelines_from_many_connections_do_not_interfere() {
    let s = start().await;
    let mut tasks = Vec::new();
    for t in 0..8 {
        let addr = s.addr;
        tasks.push(tokio::spawn(async move {
            let mut c = Raw::connect(addr).await;
            let mut req = Vec::new();
            for i in 0..300 {
                let k = format!("c{t}");
                let v = i.to_string();
                req.extend(encode_command(&[b"SET", k.as_bytes(), v.as_bytes()]));
                req.extend(encode_command(&[b"GET", k.as_bytes()]));
            }
            c.send(&req).await;
            for i in 0..300 {
                assert_eq!(c.read().await, Some(ok()));
                assert_eq!(c.read().await, Some(bulk(&i.to_string())), "client {t}");
            }
        }));
    }
    for t in tasks {
        t.await.expect("client task");
    }
}

/// Protocol errors as redis-server 7.0.15 words them: (what the client sends, the reply).
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
        b"*+1\r\n",
        b"-ERR Protocol error: invalid multibulk length\r\n",
    ),
    (
        b"*1 \r\n",
        b"-ERR Protocol error: invalid multibulk length\r\n",
    ),
    // Over INT_MAX.
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
    // The offending byte is echoed raw, even when it is not ASCII.
    (
        b"*1\r\n\xe9\r\n",
        b"-ERR Protocol error: expected '$', got '\xe9'\r\n",
    ),
    (
        b"*1\r\n$x\r\n",
        b"-ERR Protocol error: invalid bulk length\r\n",
    ),
    (
        b"*1\r\n$-1\r\n",
        b"-ERR Protocol error: invalid bulk length\r\n",
    ),
    (
        b"*1\r\n$-5\r\n",
        b"-ERR Protocol error: invalid bulk length\r\n",
    ),
    (
        b"*1\r\n$01\r\n",
        b"-ERR Protocol error: invalid bulk length\r\n",
    ),
    // Over proto-max-bulk-len (512 MB).
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
        b"SET 'a\r\n",
        b"-ERR Protocol error: unbalanced quotes in request\r\n",
    ),
    // A closing quote must be followed by a space or the end of the line.
    (
        b"set \"a\"b c\r\n",
        b"-ERR Protocol error: unbalanced quotes in request\r\n",
    ),
    (
        b"ECHO \"a\"\"b\"\r\n",
        b"-ERR Protocol error: unbalanced quotes in request\r\n",
    ),
];

/// Opens a bystander connection, sends `input` on another, checks the error reply and that only
/// the offender was closed.
async fn protocol_error(s: &TestServer, input: &[u8], reply: &[u8]) {
    let mut bystander = s.raw().await;
    if let Some(pass) = s
        .running
        .as_ref()
        .map(|r| r.shared.config.read().requirepass.clone())
    {
        if !pass.is_empty() {
            assert_eq!(bystander.cmd(&["AUTH", &pass]).await, ok());
        }
    }
    assert_eq!(bystander.cmd(&["SET", "bystander", "1"]).await, ok());
    let mut c = s.raw().await;
    c.send(input).await;
    c.expect_bytes(reply).await;
    c.expect_closed().await;
    assert_eq!(
        bystander.cmd(&["GET", "bystander"]).await,
        bulk("1"),
        "after {}",
        show(input)
    );
    let mut fresh = authed(s).await;
    assert_eq!(fresh.cmd(&["ECHO", "fresh"]).await, bulk("fresh"));
}

/// A connection, authenticated when the server wants a password.
async fn authed(s: &TestServer) -> Raw {
    let mut c = s.raw().await;
    let pass = s
        .running
        .as_ref()
        .expect("running")
        .shared
        .config
        .read()
        .requirepass
        .clone();
    if !pass.is_empty() {
        assert_eq!(c.cmd(&["AUTH", &pass]).await, ok());
    }
    c
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_errors_reply_and_close_only_that_connection() {
    let s = start().await;
    for (input, reply) in PROTOCOL_ERRORS {
        protocol_error(&s, input, reply).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_lines_are_protocol_errors() {
    let s = start().await;
    // Over 64 KiB without a line end: an inline request, a multibulk count, a bulk length.
    let inline = vec![b'a'; 70_000];
    protocol_error(
        &s,
        &inline,
        b"-ERR Protocol error: too big inline request\r\n",
    )
    .await;
    let mut mbulk = b"*".to_vec();
    mbulk.extend(std::iter::repeat_n(b'1', 70_000));
    protocol_error(
        &s,
        &mbulk,
        b"-ERR Protocol error: too big mbulk count string\r\n",
    )
    .await;
    let mut bulk_len = b"*1\r\n$".to_vec();
    bulk_len.extend(std::iter::repeat_n(b'1', 70_000));
    protocol_error(
        &s,
        &bulk_len,
        b"-ERR Protocol error: too big bulk count string\r\n",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_before_a_bad_frame_are_answered_first() {
    let s = start().await;
    let mut c = s.raw().await;
    c.send(b"PING\r\nSET before 1\r\n*x\r\nSET after 1\r\n")
        .await;
    c.expect_bytes(b"+PONG\r\n+OK\r\n-ERR Protocol error: invalid multibulk length\r\n")
        .await;
    c.expect_closed().await;
    let mut d = s.raw().await;
    assert_eq!(d.cmd(&["GET", "before"]).await, bulk("1"));
    assert_eq!(d.cmd(&["GET", "after"]).await, Frame::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_commands_are_named_with_their_first_arguments() {
    let s = start().await;
    let mut c = s.raw().await;
    let cases: &[(&[&[u8]], &[u8])] = &[
        (
            &[b"foo", b"a", b"b"],
            b"-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n",
        ),
        (
            &[b"foo"],
            b"-ERR unknown command 'foo', with args beginning with: \r\n",
        ),
        // The name keeps its case.
        (
            &[b"FooBar", b"x"],
            b"-ERR unknown command 'FooBar', with args beginning with: 'x' \r\n",
        ),
        (
            &[b"foo", b""],
            b"-ERR unknown command 'foo', with args beginning with: '' \r\n",
        ),
        // Newlines in an error reply become spaces.
        (
            &[b"foo", b"a\r\nb", b"c\nd"],
            b"-ERR unknown command 'foo', with args beginning with: 'a  b' 'c d' \r\n",
        ),
        (
            &[b"f\r\no"],
            b"-ERR unknown command 'f  o', with args beginning with: \r\n",
        ),
    ];
    for (argv, reply) in cases {
        c.send(&encode_command(argv)).await;
        c.expect_bytes(reply).await;
    }

    // The name is cut at 128 bytes; the arguments stop once 128 bytes of them are shown.
    let long = vec![b'x'; 200];
    c.send(&encode_command(&[&long, b"a"])).await;
    let mut want = b"-ERR unknown command '".to_vec();
    want.extend(&long[..128]);
    want.extend(b"', with args beginning with: 'a' \r\n");
    c.expect_bytes(&want).await;

    let (a, b) = (vec![b'a'; 100], vec![b'b'; 100]);
    c.send(&encode_command(&[b"foo", &a, &b, b"c"])).await;
    let mut want = b"-ERR unknown command 'foo', with args beginning with: '".to_vec();
    want.extend(&a);
    want.extend(b"' '");
    want.extend(&b[..25]);
    want.extend(b"' \r\n");
    c.expect_bytes(&want).await;

    let many: Vec<String> = (0..100).map(|i| i.to_string()).collect();
    let mut argv: Vec<&[u8]> = vec![b"foo"];
    argv.extend(many.iter().map(|s| s.as_bytes()));
    c.send(&encode_command(&argv)).await;
    c.expect_bytes(b"-ERR unknown command 'foo', with args beginning with: '0' '1' '2' '3' '4' '5' '6' '7' '8' '9' '10' '11' '12' '13' '14' '15' '16' '17' '18' '19' '20' '21' '22' '23' '24' '25' '26' '27' \r\n").await;

    // An unknown command is a command error: the connection stays open.
    assert_eq!(c.cmd(&["PING"]).await, simple("PONG"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arity_errors_name_the_command_in_lower_case() {
    let s = start().await;
    let mut c = s.raw().await;
    for (line, name) in [
        ("GET", "get"),
        ("get a b", "get"),
        ("SET", "set"),
        ("SET k", "set"),
        ("SeTeX k 10", "setex"),
        ("ping a b", "ping"),
        ("ECHO", "echo"),
        ("echo a b", "echo"),
        ("SELECT", "select"),
        ("MULTI x", "multi"),
        ("WATCH", "watch"),
    ] {
        c.send(format!("{line}\r\n").as_bytes()).await;
        c.expect_bytes(
            format!("-ERR wrong number of arguments for '{name}' command\r\n").as_bytes(),
        )
        .await;
    }
    assert_eq!(c.cmd(&["PING"]).await, simple("PONG"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_values_round_trip() {
    let s = start().await;
    let mut c = s.raw().await;
    let value: Vec<u8> = (0..10 * 1024 * 1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    assert_eq!(c.cmd_bytes(&[b"SET", b"big", &value]).await, ok());
    // Read the reply as raw bytes: header, payload, CRLF.
    c.send(&encode_command(&[b"GET", b"big"])).await;
    let header = format!("${}\r\n", value.len());
    c.expect_bytes(header.as_bytes()).await;
    let got = c.read_bytes(value.len() + 2).await;
    assert!(got[..value.len()] == value[..], "10 MB value differs");
    assert_eq!(&got[value.len()..], b"\r\n");
    // And again through another connection, after the write is committed.
    let mut d = s.raw().await;
    assert_eq!(
        d.cmd(&["STRLEN", "big"]).await,
        int(value.len() as i64),
        "STRLEN"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_and_values_are_binary_safe() {
    let s = start().await;
    let mut c = s.raw().await;
    let pairs: &[(&[u8], &[u8])] = &[
        (b"\x00", b"\x00\x00"),
        (b"a\x00b", b"\r\n"),
        (b"\r\n", b"*1\r\n$4\r\nPING\r\n"),
        (b"\xff\xfe", b"\x00\xff\r\n\x00"),
        (b"", b"empty key"),
        (b"empty value", b""),
        (b" spaced key ", b"\"quoted\""),
    ];
    for (k, v) in pairs {
        assert_eq!(c.cmd_bytes(&[b"SET", k, v]).await, ok(), "SET {}", show(k));
    }
    for (k, v) in pairs {
        assert_eq!(
            c.cmd_bytes(&[b"GET", k]).await,
            Frame::Bulk(bytes::Bytes::copy_from_slice(v)),
            "GET {}",
            show(k)
        );
    }
    // Keys differing only after a NUL are different keys.
    assert_eq!(c.cmd_bytes(&[b"GET", b"a\x00c"]).await, Frame::Null);
    assert_eq!(c.cmd_bytes(&[b"GET", b"a"]).await, Frame::Null);
    // The raw reply carries the bytes unchanged.
    c.send(&encode_command(&[b"GET", b"\r\n"])).await;
    c.expect_bytes(b"$14\r\n*1\r\n$4\r\nPING\r\n\r\n").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quit_replies_then_closes() {
    let s = start().await;
    let mut c = s.raw().await;
    // Commands pipelined after QUIT are not run.
    c.send(b"SET q 1\r\nQUIT\r\nSET q 2\r\n").await;
    c.expect_bytes(b"+OK\r\n+OK\r\n").await;
    c.expect_closed().await;
    let mut d = s.raw().await;
    assert_eq!(d.cmd(&["GET", "q"]).await, bulk("1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unauthenticated_clients_get_tighter_limits() {
    let s = start_with(|c| c.requirepass = "pw".into()).await;
    let eleven: Vec<&[u8]> = vec![b"x"; 11];
    let big = vec![b'a'; 16385];
    // Before AUTH: at most 10 arguments of at most 16384 bytes, as Redis 7.0.15 enforces.
    protocol_error(
        &s,
        &encode_command(&eleven),
        b"-ERR Protocol error: unauthenticated multibulk length\r\n",
    )
    .await;
    protocol_error(
        &s,
        &encode_command(&[b"GET", &big]),
        b"-ERR Protocol error: unauthenticated bulk length\r\n",
    )
    .await;
    let mut c = s.raw().await;
    c.send(&encode_command(&[b"GET", &big[..16384]])).await;
    c.expect_bytes(b"-NOAUTH Authentication required.\r\n")
        .await;
    // After AUTH the limits are gone, even for a request that came in the same read.
    let mut req = encode_command(&[b"AUTH", b"pw"]);
    req.extend(encode_command(&eleven));
    c.send(&req).await;
    c.expect_bytes(b"+OK\r\n-ERR unknown command 'x', with args beginning with: 'x' 'x' 'x' 'x' 'x' 'x' 'x' 'x' 'x' 'x' \r\n").await;
    c.send(&encode_command(&[b"SET", b"k", &big])).await;
    c.expect_bytes(b"+OK\r\n").await;
}
