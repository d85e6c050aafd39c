//! Redis's published security fixes as regression tests against Relis, and other hostile input
//! that must neither hang, crash nor take over the server. Replies are pinned from redis-server
//! 7.0.15 where it answers (the Lua CVEs are in `scripting.rs`, the SQL sandbox in `sql.rs` and
//! `sql_acl.rs`; RELIABILITY.md has the table).

mod common;
use common::*;
use resp::Frame;
use std::time::{Duration, Instant};

/// The reply to `args`, or a failure naming the command if it takes longer than `limit`.
async fn within(c: &mut Raw, args: &[&str], limit: Duration) -> Frame {
    match tokio::time::timeout(limit, c.cmd(args)).await {
        Ok(f) => f,
        Err(_) => panic!("{args:?} did not answer within {limit:?}"),
    }
}

/// CVE-2022-36021: a pattern of nested stars against a long string took exponential time in
/// the glob matcher, which serves KEYS, every SCAN's MATCH, PSUBSCRIBE, PUBSUB CHANNELS and
/// CONFIG GET. Each answers at once, and other clients are served meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_star_patterns_answer_at_once_everywhere() {
    let s = start().await;
    let mut c = s.raw().await;
    let long = "a".repeat(40);
    let pattern = format!("{}b", "a*".repeat(20));
    for args in [
        &["SET", &long, "v"][..],
        &["HSET", "h", &long, "v"],
        &["SADD", "s", &long],
        &["ZADD", "z", "1", &long],
    ] {
        assert!(!matches!(c.cmd(args).await, Frame::Error(_)), "{args:?}");
    }
    let limit = Duration::from_secs(10);
    let empty_scan = arr(vec![bulk("0"), arr(vec![])]);
    assert_eq!(
        within(&mut c, &["KEYS", &pattern], limit).await,
        arr(vec![])
    );
    assert_eq!(
        within(
            &mut c,
            &["SCAN", "0", "MATCH", &pattern, "COUNT", "1000"],
            limit
        )
        .await,
        empty_scan
    );
    for (cmd, key) in [("HSCAN", "h"), ("SSCAN", "s"), ("ZSCAN", "z")] {
        assert_eq!(
            within(&mut c, &[cmd, key, "0", "MATCH", &pattern], limit).await,
            empty_scan,
            "{cmd}"
        );
    }
    assert_eq!(
        within(&mut c, &["CONFIG", "GET", &pattern], limit).await,
        arr(vec![])
    );
    // A channel of 40 a's is active; the pattern must not hang PUBSUB CHANNELS or PUBLISH.
    let mut sub = s.raw().await;
    sub.cmd(&["SUBSCRIBE", &long]).await;
    let mut psub = s.raw().await;
    psub.cmd(&["PSUBSCRIBE", &pattern]).await;
    assert_eq!(
        within(&mut c, &["PUBSUB", "CHANNELS", &pattern], limit).await,
        arr(vec![])
    );
    assert_eq!(
        within(&mut c, &["PUBLISH", &long, "m"], limit).await,
        int(1)
    );
    let mut other = s.raw().await;
    assert_eq!(
        within(&mut other, &["PING"], Duration::from_secs(1)).await,
        simple("PONG")
    );
}

/// Integer overflows Redis fixed in its count, offset and limit arguments (CVE-2021-32627,
/// CVE-2021-32628, CVE-2021-32687, CVE-2021-41099, CVE-2022-35977, CVE-2023-25155,
/// CVE-2023-22458, CVE-2023-28856): each answers as redis-server 7.0.15 does, or, where Redis
/// would build a reply of 2^62 elements and run out of memory, with Relis's documented bound.
#[tokio::test]
async fn integer_overflows_answer_as_redis() {
    const RANGE: &str =
        "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807";
    const OUT_OF_RANGE: &str = "ERR value is out of range";
    const TOO_LONG: &str = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
    let big = "199999999999999999993371759311691291321120199694831134415594095989843469737676123744200253843777078640893494450108026446304269499187921167194841628860392837535918200039206381557326219209014213335878306791577877829121087126122536729803237260434173178506889763247582601711514636284849020905456510092687857156096";
    let s = start().await;
    let mut c = s.raw().await;
    let cases: &[(&[&str], Frame)] = &[
        // CVE-2022-35977: SETRANGE and SORT.
        (&["SETRANGE", "k", "536870912", "x"], err(TOO_LONG)),
        (
            &["SETRANGE", "k", "9223372036854775807", "x"],
            err(TOO_LONG),
        ),
        (
            &["SETRANGE", "k", "-1", "x"],
            err("ERR offset is out of range"),
        ),
        (&["EXISTS", "k"], int(0)),
        (&["SADD", "s", "a", "b", "c"], int(3)),
        (
            &[
                "SORT",
                "s",
                "LIMIT",
                "9223372036854775807",
                "9223372036854775807",
                "ALPHA",
            ],
            arr(vec![]),
        ),
        (
            &["SORT", "s", "LIMIT", "-9223372036854775808", "-1", "ALPHA"],
            bulks(&["a", "b", "c"]),
        ),
        (
            &["SORT", "s", "LIMIT", "1", "9223372036854775807", "ALPHA"],
            bulks(&["b", "c"]),
        ),
        (
            &["SORT", "s", "LIMIT", "0", "-9223372036854775808", "ALPHA"],
            bulks(&["a", "b", "c"]),
        ),
        (
            &[
                "SORT",
                "s",
                "LIMIT",
                "1",
                "9223372036854775807",
                "ALPHA",
                "STORE",
                "d",
            ],
            int(2),
        ),
        (
            &[
                "SORT",
                "s",
                "LIMIT",
                "9223372036854775807",
                "9223372036854775807",
                "ALPHA",
                "STORE",
                "d",
            ],
            int(0),
        ),
        (&["EXISTS", "d"], int(0)),
        // CVE-2023-25155 and CVE-2023-22458: random counts near LONG_MIN, doubled WITHVALUES.
        (&["SRANDMEMBER", "s", "-9223372036854775808"], err(RANGE)),
        (&["HSET", "h", "f", "1"], int(1)),
        (&["HRANDFIELD", "h", "-9223372036854775808"], err(RANGE)),
        (
            &["HRANDFIELD", "h", "-9223372036854775807", "WITHVALUES"],
            err(OUT_OF_RANGE),
        ),
        (
            &["HRANDFIELD", "h", "-4611686018427387904", "WITHVALUES"],
            err(OUT_OF_RANGE),
        ),
        (&["ZADD", "z", "1", "a"], int(1)),
        (&["ZRANDMEMBER", "z", "-9223372036854775808"], err(RANGE)),
        (
            &["ZRANDMEMBER", "z", "-9223372036854775807", "WITHSCORES"],
            err(OUT_OF_RANGE),
        ),
        (
            &["ZRANDMEMBER", "z", "-4611686018427387904", "WITHSCORES"],
            err(OUT_OF_RANGE),
        ),
        // Relis's bound where Redis streams 2^62 replies until it runs out of memory.
        (
            &["HRANDFIELD", "h", "-4611686018427387903", "WITHVALUES"],
            err(OUT_OF_RANGE),
        ),
        (
            &["SRANDMEMBER", "s", "-9223372036854775807"],
            err("ERR value is not an integer or out of range"),
        ),
        (
            &["SRANDMEMBER", "s", "9223372036854775807"],
            bulks(&["a", "b", "c"]),
        ),
        // CVE-2023-28856: HINCRBYFLOAT's longest results stay readable.
        (&["HSET", "hf", "f", "1e308"], int(1)),
        (&["HINCRBYFLOAT", "hf", "f", "1e308"], bulk(big)),
        (&["HGET", "hf", "f"], bulk(big)),
        (
            &["HRANDFIELD", "hf", "-3", "WITHVALUES"],
            bulks(&["f", big, "f", big, "f", big]),
        ),
        (
            &["HINCRBYFLOAT", "hf", "f", "-inf"],
            err("ERR value is NaN or Infinity"),
        ),
        (
            &["HINCRBYFLOAT", "hf", "f", "nan"],
            err("ERR value is not a valid float"),
        ),
        // Ranges and positions at the ends of i64.
        (&["SET", "str", "hello"], ok()),
        (
            &[
                "GETRANGE",
                "str",
                "-9223372036854775808",
                "9223372036854775807",
            ],
            bulk("hello"),
        ),
        (
            &[
                "GETRANGE",
                "str",
                "9223372036854775807",
                "-9223372036854775808",
            ],
            bulk(""),
        ),
        (&["RPUSH", "l", "a", "b", "c"], int(3)),
        (
            &["LPOS", "l", "x", "RANK", "-9223372036854775808"],
            Frame::Null,
        ),
        (
            &["LPOS", "l", "a", "COUNT", "9223372036854775807"],
            arr(vec![int(0)]),
        ),
        (
            &["LRANGE", "l", "-9223372036854775808", "9223372036854775807"],
            bulks(&["a", "b", "c"]),
        ),
        (&["LINDEX", "l", "-9223372036854775808"], Frame::Null),
        (
            &["ZRANGE", "z", "-9223372036854775808", "9223372036854775807"],
            bulks(&["a"]),
        ),
        (
            &[
                "ZRANGEBYSCORE",
                "z",
                "-inf",
                "+inf",
                "LIMIT",
                "9223372036854775807",
                "9223372036854775807",
            ],
            arr(vec![]),
        ),
        (
            &["SPOP", "s", "-9223372036854775808"],
            err("ERR value is out of range, must be positive"),
        ),
        (
            &["EXPIRE", "str", "9223372036854775807"],
            err("ERR invalid expire time in 'expire' command"),
        ),
        (
            &["PEXPIRE", "str", "9223372036854775000"],
            err("ERR invalid expire time in 'pexpire' command"),
        ),
        (
            &["SET", "str", "v", "EXAT", "9223372036854775807"],
            err("ERR invalid expire time in 'set' command"),
        ),
        (&["SET", "n", "9223372036854775807"], ok()),
        (
            &["INCR", "n"],
            err("ERR increment or decrement would overflow"),
        ),
        (
            &["DECRBY", "n", "-9223372036854775808"],
            err("ERR decrement would overflow"),
        ),
        // CVE-2021-32687: intset sizes raised to the top are accepted and harmless.
        (
            &[
                "CONFIG",
                "SET",
                "set-max-intset-entries",
                "9223372036854775807",
            ],
            ok(),
        ),
        (&["SADD", "ints", "1", "2", "3"], int(3)),
        (&["SINTERSTORE", "ints2", "ints", "ints"], int(3)),
        (&["CONFIG", "SET", "set-max-intset-entries", "512"], ok()),
    ];
    for (args, want) in cases {
        assert_eq!(&c.cmd(args).await, want, "{args:?}");
    }
}

/// CVE-2021-41099 and CVE-2021-32627/32628: with proto-max-bulk-len raised to its maximum
/// (Redis accepts LONG_MAX), a SETRANGE far out made Relis allocate the whole string and abort
/// the process. The string could never be stored (SQLite's limit), so it is refused as too long.
#[tokio::test]
async fn a_raised_proto_max_bulk_len_cannot_make_a_command_allocate_it() {
    const TOO_LONG: &str = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "proto-max-bulk-len", "9223372036854775807"])
            .await,
        ok()
    );
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "proto-max-bulk-len"]).await,
        bulks(&["proto-max-bulk-len", "9223372036854775807"])
    );
    assert_eq!(
        c.cmd(&["SETRANGE", "k", "9223372036854775806", "x"]).await,
        err(TOO_LONG)
    );
    assert_eq!(
        c.cmd(&["SETRANGE", "k", "2000000000", "x"]).await,
        err(TOO_LONG)
    );
    assert_eq!(c.cmd(&["APPEND", "k", "x"]).await, int(1));
    assert_eq!(c.cmd(&["PING"]).await, simple("PONG"));
}

/// Shutdown stays bounded while a long SQL query, a long KEYS and a busy script run: SIGTERM
/// ends the process within 10 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_the_server_while_long_work_runs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut child = spawn_binary(
        dir.path(),
        &["--sql-time-limit", "0", "--lua-time-limit", "100"],
    );
    let addr = child.addr();
    let mut c = Raw::connect(addr).await;
    // Keys long enough that a KEYS over them takes a while.
    let long = "a".repeat(200);
    let mut pipeline = Vec::new();
    for i in 0..20_000 {
        pipeline.extend(encode_command(&[
            b"SET",
            format!("{long}{i}").as_bytes(),
            b"v",
        ]));
    }
    c.send(&pipeline).await;
    for _ in 0..20_000 {
        assert_eq!(c.read().await, Some(ok()));
    }
    let mut query = Raw::connect(addr).await;
    query
        .send(&encode_command(&[
            b"SQL.QUERY",
            b"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n",
        ]))
        .await;
    let mut keys = Raw::connect(addr).await;
    keys.send(&encode_command(&[b"KEYS", b"*a*a*a*a*a*a*a*a*a*a*a*a*b"]))
        .await;
    let mut script = Raw::connect(addr).await;
    script
        .send(&encode_command(&[b"EVAL", b"while true do end", b"0"]))
        .await;
    // Let all three get going.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut busy = Raw::connect(addr).await;
    assert!(
        matches!(busy.cmd(&["SET", "x", "1"]).await, Frame::Error(e) if e.starts_with(b"BUSY")),
        "the script is running"
    );
    let start = Instant::now();
    // SAFETY: plain kill(2) on our own child's pid.
    unsafe { libc::kill(child.proc.id() as i32, libc::SIGTERM) };
    loop {
        if child.proc.try_wait().expect("try_wait").is_some() {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "relis-server still running 10 s after SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// One SQL statement's working memory is bounded by `sql-max-memory`: 20 rows of 10 MB
/// sorted (on the writer, where temporary data stays in memory, and on a reader) fail cleanly,
/// and the server goes on serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sql_statement_cannot_take_all_memory_through_a_sort() {
    const TOO_MUCH: &str = "ERR statement needs more than 33554432 bytes of memory (sql-max-memory): its changes were rolled back";
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "sql-max-memory", "32mb"]).await,
        ok()
    );
    let sorted = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20) \
                  SELECT length(b) FROM (SELECT zeroblob(10000000) AS b, i FROM n ORDER BY random()) LIMIT 1";
    assert_eq!(c.cmd(&["SQL.QUERY", sorted]).await, err(TOO_MUCH));
    assert_eq!(c.cmd(&["SQL.EXEC", sorted]).await, err(TOO_MUCH));
    assert_eq!(c.cmd(&["SET", "k", "v"]).await, ok());
    assert_eq!(c.cmd(&["GET", "k"]).await, bulk("v"));
    assert_eq!(c.cmd(&["CONFIG", "SET", "sql-max-memory", "0"]).await, ok());
    assert_eq!(
        c.cmd(&["SQL.QUERY", sorted]).await,
        arr(vec![arr(vec![int(10_000_000)])])
    );
}
