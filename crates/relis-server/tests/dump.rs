//! DUMP and RESTORE against redis-server 7.0.15: every type in every encoding moves both ways
//! with identical contents (and encodings), and bad payloads get the same errors. MIGRATE and
//! FUNCTION DUMP/RESTORE between the two, and hostile payloads that must never write.

mod common;
use common::fixtures::*;
use common::*;
use resp::Frame;

/// Both servers, the reference first; `None` when redis-server is not installed.
async fn both() -> Option<(TestServer, Child, Raw, Raw)> {
    redis_server()?;
    let tmp = tempfile::tempdir().expect("temp dir");
    let redis = spawn_redis(tmp.path()).expect("redis-server");
    std::mem::forget(tmp);
    let relis = start().await;
    let want = Raw::connect(redis.addr()).await;
    let got = relis.raw().await;
    Some((relis, redis, want, got))
}

fn bulk_bytes(f: Frame) -> Vec<u8> {
    match f {
        Frame::Bulk(b) => b.to_vec(),
        other => panic!("not a bulk: {other:?}"),
    }
}

/// Every fixture DUMPed by `from` RESTOREs into `to` with the same contents and encoding.
async fn cross(from: &mut Raw, to: &mut Raw) {
    build(from).await;
    for (key, _) in fixtures() {
        let p = bulk_bytes(from.cmd(&["DUMP", &key]).await);
        let r = to.cmd_bytes(&[b"RESTORE", key.as_bytes(), b"0", &p]).await;
        assert_eq!(r, ok(), "RESTORE {key}");
        let want = contents(from, &key).await;
        eprintln!("{key}: {}", &want[..want.len().min(90)]);
        assert_eq!(contents(to, &key).await, want, "{key}");
    }
    // The expiry moves with ABSTTL.
    from.cmd(&["SET", "ttl", "v", "PX", "100000"]).await;
    let Frame::Integer(at) = from.cmd(&["PEXPIRETIME", "ttl"]).await else {
        panic!()
    };
    let p = bulk_bytes(from.cmd(&["DUMP", "ttl"]).await);
    let at_s = at.to_string();
    let r = to
        .cmd_bytes(&[b"RESTORE", b"ttl", at_s.as_bytes(), &p, b"ABSTTL"])
        .await;
    assert_eq!(r, ok());
    assert_eq!(to.cmd(&["PEXPIRETIME", "ttl"]).await, int(at));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_dumps_restore_into_relis() {
    let Some((_relis, _redis, mut redis, mut relis)) = both().await else {
        return;
    };
    cross(&mut redis, &mut relis).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relis_dumps_restore_into_redis() {
    let Some((_relis, _redis, mut redis, mut relis)) = both().await else {
        return;
    };
    cross(&mut relis, &mut redis).await;
}

/// `body` with a valid version 10 footer.
fn with_footer(body: &[u8], version: u16) -> Vec<u8> {
    let mut p = body.to_vec();
    p.extend_from_slice(&version.to_le_bytes());
    let crc = rdb::crc64::crc64(0, &p);
    p.extend_from_slice(&crc.to_le_bytes());
    p
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restore_errors_match_redis() {
    let Some((_relis, _redis, mut redis, mut relis)) = both().await else {
        return;
    };
    let good = with_footer(b"\x00\x01v", 10);
    let mut bad_crc = good.clone();
    *bad_crc.last_mut().unwrap() ^= 1;
    let lines: Vec<Vec<Vec<u8>>> = vec![
        vec![b"SET".to_vec(), b"busy".to_vec(), b"x".to_vec()],
        vec![
            b"RESTORE".to_vec(),
            b"k".to_vec(),
            b"0".to_vec(),
            b"garbage".to_vec(),
        ],
        vec![
            b"RESTORE".to_vec(),
            b"k".to_vec(),
            b"0".to_vec(),
            bad_crc.clone(),
        ],
        vec![
            b"RESTORE".to_vec(),
            b"k".to_vec(),
            b"0".to_vec(),
            with_footer(b"\x00\x01v", 11),
        ],
        vec![
            b"RESTORE".to_vec(),
            b"busy".to_vec(),
            b"0".to_vec(),
            b"garbage".to_vec(),
        ],
        vec![
            b"RESTORE".to_vec(),
            b"k".to_vec(),
            b"-1".to_vec(),
            good.clone(),
        ],
        vec![
            b"RESTORE".to_vec(),
            b"k".to_vec(),
            b"x".to_vec(),
            good.clone(),
        ],
        vec![
            b"RESTORE".to_vec(),
            b"k".to_vec(),
            b"0".to_vec(),
            good.clone(),
            b"IDLETIME".to_vec(),
            b"-1".to_vec(),
        ],
        vec![
            b"RESTORE".to_vec(),
            b"k".to_vec(),
            b"0".to_vec(),
            good.clone(),
            b"FREQ".to_vec(),
            b"256".to_vec(),
        ],
        vec![
            b"RESTORE".to_vec(),
            b"k".to_vec(),
            b"0".to_vec(),
            good.clone(),
            b"FREQ".to_vec(),
            b"1".to_vec(),
            b"IDLETIME".to_vec(),
            b"1".to_vec(),
        ],
        vec![
            b"RESTORE".to_vec(),
            b"k".to_vec(),
            b"0".to_vec(),
            good.clone(),
            b"NOPE".to_vec(),
        ],
        // Valid footers, bad content.
        vec![
            b"RESTORE".to_vec(),
            b"k".to_vec(),
            b"0".to_vec(),
            with_footer(b"\x00\x05v", 10),
        ],
        vec![
            b"RESTORE".to_vec(),
            b"k".to_vec(),
            b"0".to_vec(),
            with_footer(b"\x63\x01v", 10),
        ],
        vec![
            b"RESTORE".to_vec(),
            b"k".to_vec(),
            b"0".to_vec(),
            with_footer(b"\x12\x00", 10),
        ],
        vec![
            b"RESTORE".to_vec(),
            b"k".to_vec(),
            b"0".to_vec(),
            with_footer(b"\x02\x02\x01a\x01a", 10),
        ],
        vec![
            b"RESTORE".to_vec(),
            b"k".to_vec(),
            b"0".to_vec(),
            with_footer(b"\x0b\x08\x02\x00\x00\x00\x00\x00\x00\x00", 10),
        ],
        vec![b"EXISTS".to_vec(), b"k".to_vec()],
        // A past expiry writes nothing; with REPLACE it deletes.
        vec![
            b"RESTORE".to_vec(),
            b"k".to_vec(),
            b"1".to_vec(),
            good.clone(),
            b"ABSTTL".to_vec(),
        ],
        vec![b"EXISTS".to_vec(), b"k".to_vec()],
        vec![
            b"RESTORE".to_vec(),
            b"busy".to_vec(),
            b"1".to_vec(),
            good.clone(),
            b"ABSTTL".to_vec(),
            b"REPLACE".to_vec(),
        ],
        vec![b"EXISTS".to_vec(), b"busy".to_vec()],
        vec![
            b"RESTORE".to_vec(),
            b"k".to_vec(),
            b"0".to_vec(),
            good.clone(),
            b"IDLETIME".to_vec(),
            b"100".to_vec(),
        ],
        vec![b"OBJECT".to_vec(), b"IDLETIME".to_vec(), b"k".to_vec()],
        vec![
            b"RESTORE".to_vec(),
            b"k".to_vec(),
            b"0".to_vec(),
            good.clone(),
        ],
        vec![b"DUMP".to_vec(), b"nosuchkey".to_vec()],
    ];
    for line in &lines {
        let args: Vec<&[u8]> = line.iter().map(Vec::as_slice).collect();
        let want = redis.cmd_bytes(&args).await;
        let got = relis.cmd_bytes(&args).await;
        assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&line.concat()));
    }
}

/// Truncated and bit-flipped payloads of every fixture: with the original CRC each is refused
/// ("checksum"), with a recomputed CRC each either restores or is refused; a refused one writes
/// nothing, and the server keeps answering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mangled_payloads_never_write() {
    let relis = start().await;
    let mut c = relis.raw().await;
    build(&mut c).await;
    let mut payloads = Vec::new();
    for (key, _) in fixtures() {
        payloads.push(bulk_bytes(c.cmd(&["DUMP", &key]).await));
    }
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rand = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let (mut restored, mut refused) = (0, 0);
    for p in &payloads {
        for round in 0..60 {
            let mut m = p.clone();
            match round % 3 {
                0 => m.truncate(rand(m.len())),
                _ => {
                    for _ in 0..1 + rand(3) {
                        let i = rand(m.len() - 10);
                        m[i] ^= 1 << rand(8);
                    }
                }
            }
            if m == *p {
                continue; // two flips of one bit
            }
            let keep_crc = round % 3 == 1;
            if !keep_crc && m.len() >= 10 {
                let n = m.len();
                let crc = rdb::crc64::crc64(0, &m[..n - 8]);
                m[n - 8..].copy_from_slice(&crc.to_le_bytes());
            }
            let r = c.cmd_bytes(&[b"RESTORE", b"mangled", b"0", &m]).await;
            match r {
                Frame::Simple(_) => {
                    assert!(!keep_crc, "a flipped bit passed the CRC");
                    restored += 1;
                    c.cmd(&["DEL", "mangled"]).await;
                }
                Frame::Error(e) => {
                    refused += 1;
                    if keep_crc {
                        assert_eq!(&e[..], b"ERR DUMP payload version or checksum are wrong");
                    }
                    assert_eq!(c.cmd(&["EXISTS", "mangled"]).await, int(0), "{e:?}");
                }
                other => panic!("{other:?}"),
            }
        }
    }
    assert!(
        refused > 0 && restored > 0,
        "{refused} refused, {restored} restored"
    );
    assert_eq!(c.cmd(&["PING"]).await, simple("PONG"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restore_notifies_and_touches_watched_keys() {
    let relis = start().await;
    let mut a = relis.raw().await;
    let mut b = relis.raw().await;
    a.cmd(&["SET", "k", "v"]).await;
    let p = bulk_bytes(a.cmd(&["DUMP", "k"]).await);
    assert_eq!(
        a.cmd(&["CONFIG", "SET", "notify-keyspace-events", "Eg"])
            .await,
        ok()
    );
    b.cmd(&["SUBSCRIBE", "__keyevent@0__:restore"]).await;
    a.cmd(&["WATCH", "k"]).await;
    let mut c = relis.raw().await;
    assert_eq!(
        c.cmd_bytes(&[b"RESTORE", b"k", b"0", &p, b"REPLACE"]).await,
        ok()
    );
    let msg = b.read().await.unwrap();
    assert_eq!(msg, bulks(&["message", "__keyevent@0__:restore", "k"]));
    a.cmd(&["MULTI"]).await;
    a.cmd(&["GET", "k"]).await;
    assert_eq!(a.cmd(&["EXEC"]).await, Frame::NullArray);
}

/// Large collections restore whole, through one bulk write each, and DUMP back identically.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_collections_round_trip() {
    let relis = start().await;
    let mut c = relis.raw().await;
    let n = 100_000;
    let objects = [
        rdb::Object::List(
            (0..n)
                .map(|i| bytes::Bytes::from(format!("e{i}")))
                .collect(),
        ),
        rdb::Object::Set(
            (0..n)
                .map(|i| bytes::Bytes::from(format!("m{i}")))
                .collect(),
        ),
        rdb::Object::Hash(
            (0..n)
                .map(|i| {
                    (
                        bytes::Bytes::from(format!("f{i}")),
                        bytes::Bytes::from(i.to_string()),
                    )
                })
                .collect(),
        ),
        rdb::Object::ZSet(
            (0..n)
                .map(|i| (bytes::Bytes::from(format!("z{i:06}")), i as f64))
                .collect(),
        ),
    ];
    for (i, o) in objects.iter().enumerate() {
        let p = rdb::payload::dump(o, rdb::ObjectKind::General);
        let key = format!("big{i}");
        let t = std::time::Instant::now();
        assert_eq!(
            c.cmd_bytes(&[b"RESTORE", key.as_bytes(), b"0", &p]).await,
            ok()
        );
        eprintln!("RESTORE of {n} elements: {:?}", t.elapsed());
        let back = bulk_bytes(c.cmd(&["DUMP", &key]).await);
        let mut got = rdb::payload::restore(&back).unwrap();
        match &mut got {
            rdb::Object::Set(m) => m.sort_by_key(|m| (m.len(), m.clone())),
            rdb::Object::Hash(h) => h.sort_by_key(|(f, _)| (f.len(), f.clone())),
            _ => {}
        }
        assert!(&got == o, "{key}");
    }
}

const LIB: &str = "#!lua name=mylib\nredis.register_function('myfunc', function(keys, args) return 'hello from a library that is long enough to compress, hello from a library' end)";

async fn function_moves(from: &mut Raw, to: &mut Raw) {
    from.cmd(&["FUNCTION", "LOAD", LIB]).await;
    let p = bulk_bytes(from.cmd(&["FUNCTION", "DUMP"]).await);
    assert_eq!(to.cmd_bytes(&[b"FUNCTION", b"RESTORE", &p]).await, ok());
    assert_eq!(
        to.cmd(&["FCALL", "myfunc", "0"]).await,
        from.cmd(&["FCALL", "myfunc", "0"]).await
    );
    // APPEND (the default) collides; REPLACE and FLUSH do not.
    let e = to.cmd_bytes(&[b"FUNCTION", b"RESTORE", &p]).await;
    assert_eq!(e, err("ERR Library mylib already exists"));
    assert_eq!(
        to.cmd_bytes(&[b"FUNCTION", b"RESTORE", &p, b"REPLACE"])
            .await,
        ok()
    );
    assert_eq!(
        to.cmd_bytes(&[b"FUNCTION", b"RESTORE", &p, b"FLUSH"]).await,
        ok()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn function_dump_moves_both_ways() {
    let Some((_relis, _redis, mut redis, mut relis)) = both().await else {
        return;
    };
    function_moves(&mut redis, &mut relis).await;
    redis.cmd(&["FUNCTION", "FLUSH"]).await;
    relis.cmd(&["FUNCTION", "FLUSH"]).await;
    function_moves(&mut relis, &mut redis).await;
    // Errors as redis-server gives them.
    let not_fn = with_footer(b"\x00\x01x", 10);
    let pre_ga = with_footer(b"\xf6\x01x", 10);
    let pre_ga_desc = with_footer(b"\xf6\x01x\x03LUA\x01d", 10);
    let truncated = with_footer(b"\xf5\x10x", 10);
    for p in [
        &b"garbage"[..],
        &not_fn,
        &pre_ga,
        &pre_ga_desc,
        &truncated,
        &with_footer(b"", 10),
    ] {
        let line: [&[u8]; 3] = [b"FUNCTION", b"RESTORE", p];
        assert_eq!(
            relis.cmd_bytes(&line).await,
            redis.cmd_bytes(&line).await,
            "{p:?}"
        );
    }
}

async fn migrate_between(from: &mut Raw, to: &mut Raw, to_port: u16) {
    let port = to_port.to_string();
    from.cmd(&["RPUSH", "m:list", "a", "b", "c"]).await;
    from.cmd(&["SET", "m:str", "v", "PX", "100000"]).await;
    from.cmd(&["HSET", "m:hash", "f", "1"]).await;
    to.cmd(&["SELECT", "2"]).await;
    // One key, moved.
    let r = from
        .cmd(&["MIGRATE", "127.0.0.1", &port, "m:list", "2", "5000"])
        .await;
    assert_eq!(r, ok());
    assert_eq!(from.cmd(&["EXISTS", "m:list"]).await, int(0));
    assert_eq!(
        to.cmd(&["LRANGE", "m:list", "0", "-1"]).await,
        bulks(&["a", "b", "c"])
    );
    // Several with KEYS and COPY: the TTL goes along, the source keeps its keys.
    let r = from
        .cmd(&[
            "MIGRATE",
            "127.0.0.1",
            &port,
            "",
            "2",
            "5000",
            "COPY",
            "KEYS",
            "m:str",
            "m:hash",
            "m:none",
        ])
        .await;
    assert_eq!(r, ok());
    assert_eq!(from.cmd(&["EXISTS", "m:str", "m:hash"]).await, int(2));
    assert_eq!(to.cmd(&["GET", "m:str"]).await, bulk("v"));
    let Frame::Integer(ttl) = to.cmd(&["PTTL", "m:str"]).await else {
        panic!()
    };
    assert!(ttl > 90_000 && ttl <= 100_000, "{ttl}");
    // The target refuses an existing key without REPLACE; with it, it takes it.
    let r = from
        .cmd(&["MIGRATE", "127.0.0.1", &port, "m:hash", "2", "5000"])
        .await;
    assert_eq!(
        r,
        err("ERR Target instance replied with error: BUSYKEY Target key name already exists.")
    );
    assert_eq!(from.cmd(&["EXISTS", "m:hash"]).await, int(1));
    let r = from
        .cmd(&[
            "MIGRATE",
            "127.0.0.1",
            &port,
            "m:hash",
            "2",
            "5000",
            "REPLACE",
        ])
        .await;
    assert_eq!(r, ok());
    assert_eq!(from.cmd(&["EXISTS", "m:hash"]).await, int(0));
    assert_eq!(to.cmd(&["HGETALL", "m:hash"]).await, bulks(&["f", "1"]));
    assert_eq!(
        from.cmd(&["MIGRATE", "127.0.0.1", &port, "m:none", "2", "5000"])
            .await,
        simple("NOKEY")
    );
    // A wrong password is the target's error.
    let r = from
        .cmd(&[
            "MIGRATE",
            "127.0.0.1",
            &port,
            "m:str",
            "2",
            "5000",
            "AUTH",
            "nope",
        ])
        .await;
    let Frame::Error(e) = r else { panic!("{r:?}") };
    assert!(
        e.starts_with(b"ERR Target instance replied with error: "),
        "{e:?}"
    );
    assert_eq!(from.cmd(&["EXISTS", "m:str"]).await, int(1));
    to.cmd(&["FLUSHALL"]).await;
    from.cmd(&["FLUSHALL"]).await;
    to.cmd(&["SELECT", "0"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_between_relis_and_redis() {
    let Some((relis_server, redis_child, mut redis, mut relis)) = both().await else {
        return;
    };
    migrate_between(&mut relis, &mut redis, redis_child.addr().port()).await;
    migrate_between(&mut redis, &mut relis, relis_server.addr.port()).await;
    // Relis to Relis.
    let other = start().await;
    let mut to = other.raw().await;
    migrate_between(&mut relis, &mut to, other.addr.port()).await;
    // Errors Redis gives alike.
    let closed = free_port().to_string();
    for line in [
        vec!["MIGRATE", "127.0.0.1", &closed, "k", "0", "100"],
        vec!["MIGRATE", "127.0.0.1", &closed, "nokey", "0", "100"],
        vec![
            "MIGRATE",
            "127.0.0.1",
            &closed,
            "k",
            "0",
            "100",
            "KEYS",
            "a",
        ],
        vec!["MIGRATE", "127.0.0.1", &closed, "k", "x", "100"],
        vec!["MIGRATE", "127.0.0.1", &closed, "k", "0", "100", "AUTH"],
    ] {
        redis.cmd(&["SET", "k", "v"]).await;
        relis.cmd(&["SET", "k", "v"]).await;
        assert_eq!(relis.cmd(&line).await, redis.cmd(&line).await, "{line:?}");
    }
}

/// A restored list serves a client blocked on its key, as a push would.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restore_serves_a_blocked_client() {
    let relis = start().await;
    let mut a = relis.raw().await;
    let mut b = relis.raw().await;
    let p = rdb::payload::dump(
        &rdb::Object::List(vec![bytes::Bytes::from_static(b"x")]),
        rdb::ObjectKind::General,
    );
    b.send(&encode_command(&[b"BLPOP", b"q", b"5"])).await;
    // Until INFO counts it blocked.
    for _ in 0..1000 {
        let Frame::Bulk(info) = a.cmd(&["INFO", "clients"]).await else {
            panic!()
        };
        if String::from_utf8_lossy(&info).contains("blocked_clients:1") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(a.cmd_bytes(&[b"RESTORE", b"q", b"0", &p]).await, ok());
    assert_eq!(b.read().await, Some(bulks(&["q", "x"])));
}

/// A DUMP payload as what it holds: the type byte and, for a listpack type, the listpack's
/// bytes with any LZF compression undone (two compressors may pick different matches for the
/// same bytes); any other payload whole.
fn unpacked(p: &[u8]) -> (u8, Vec<u8>) {
    let body = rdb::payload::verify(p).expect("a valid payload");
    match body[0] {
        rdb::types::HASH_LISTPACK | rdb::types::ZSET_LISTPACK => {
            let lp = rdb::Input::new(&body[1..]).string().expect("a string");
            (body[0], lp.to_vec())
        }
        t => (t, p.to_vec()),
    }
}

/// Payloads are redis-server's byte for byte where the bytes depend on neither a hash table's
/// order nor an LZF compressor's choices: strings in their integer encodings, and small hashes
/// and sorted sets as listpacks (a sorted set's score text as `d2string` writes it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listpack_payloads_match_redis_byte_for_byte() {
    let Some((_relis, _redis, mut redis, mut relis)) = both().await else {
        return;
    };
    build(&mut redis).await;
    build(&mut relis).await;
    for key in [
        "str:small",
        "str:int8",
        "str:int16",
        "str:int32",
        "str:int64",
        "str:notint",
        "str:empty",
        "hash:listpack",
        "zset:listpack",
        "zset:scores",
    ] {
        let want = unpacked(&bulk_bytes(redis.cmd(&["DUMP", key]).await));
        let got = unpacked(&bulk_bytes(relis.cmd(&["DUMP", key]).await));
        assert_eq!(got, want, "{key}");
    }
}
