//! Keyspace notifications over TCP: `notify-keyspace-events` (CONFIG SET / GET, the config
//! file), the `__keyspace@<db>__:<key>` and `__keyevent@<db>__:<event>` messages, and the events
//! of every command family, in order, as redis-server 7.0.15 emits them (the tables below were
//! recorded from it with `notify-keyspace-events EAn` and `PSUBSCRIBE __key*__:*`), and
//! `expired` from the background sweep and from writes that find an expired key.

mod common;
use common::*;
use resp::Frame;

/// A subscriber to every keyspace event, and a connection that runs commands.
struct Watch {
    sub: Raw,
    cmd: Raw,
}

impl Watch {
    async fn new(s: &TestServer, flags: &str) -> Watch {
        let mut cmd = s.raw().await;
        assert_eq!(
            cmd.cmd(&["CONFIG", "SET", "notify-keyspace-events", flags])
                .await,
            ok()
        );
        assert_eq!(cmd.cmd(&["FLUSHALL"]).await, ok());
        let mut sub = s.raw().await;
        sub.cmd(&["PSUBSCRIBE", "__key*__:*"]).await;
        sub.cmd(&["SUBSCRIBE", "sync"]).await;
        Watch { sub, cmd }
    }

    /// Runs `line` and returns its events as `E<db>:<event>:<key>` (keyevent messages) and
    /// `K<db>:<key>:<event>` (keyspace messages). A message on `sync`, published after the
    /// command's reply, marks the end: events are published before the reply.
    async fn run(&mut self, line: &str) -> Vec<String> {
        let args: Vec<&str> = line.split_whitespace().collect();
        self.cmd.cmd(&args).await;
        self.drain().await
    }

    async fn drain(&mut self) -> Vec<String> {
        self.cmd.cmd(&["PUBLISH", "sync", "x"]).await;
        let mut out = Vec::new();
        loop {
            let Some(Frame::Array(v)) = self.sub.read().await else {
                panic!("subscriber closed");
            };
            let text = |f: &Frame| match f {
                Frame::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
                other => panic!("{other:?}"),
            };
            if text(&v[0]) == "message" && text(&v[1]) == "sync" {
                return out;
            }
            let (channel, payload) = (text(&v[2]), text(&v[3]));
            if let Some(rest) = channel.strip_prefix("__keyevent@") {
                let (db, event) = rest.split_once("__:").unwrap();
                out.push(format!("E{db}:{event}:{payload}"));
            } else if let Some(rest) = channel.strip_prefix("__keyspace@") {
                let (db, key) = rest.split_once("__:").unwrap();
                out.push(format!("K{db}:{key}:{payload}"));
            }
        }
    }

    /// Waits (reading, not sleeping) for the next event.
    async fn next_event(&mut self) -> String {
        let Some(Frame::Array(v)) = self.sub.read().await else {
            panic!("subscriber closed");
        };
        match (&v[2], &v[3]) {
            (Frame::Bulk(ch), Frame::Bulk(p)) => format!(
                "{}={}",
                String::from_utf8_lossy(ch),
                String::from_utf8_lossy(p)
            ),
            other => panic!("{other:?}"),
        }
    }
}

async fn check_family(table: &[(&str, &[&str])]) {
    let s = start().await;
    let mut w = Watch::new(&s, "EAn").await;
    for (line, want) in table {
        assert_eq!(w.run(line).await, *want, "{line}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strings() {
    check_family(STRINGS).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys() {
    check_family(KEYS).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hashes() {
    check_family(HASHES).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists() {
    check_family(LISTS).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sets() {
    check_family(SETS).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zsets() {
    check_family(ZSETS).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overwrites_and_no_ops() {
    check_family(EXTRA).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyspace_and_keyevent_messages_exact_bytes() {
    let s = start().await;
    let mut c = s.raw().await;
    let mut sub = s.raw().await;
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEA"])
            .await,
        ok()
    );
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "notify-keyspace-events"]).await,
        bulks(&["notify-keyspace-events", "AKE"])
    );
    c.cmd(&["SELECT", "3"]).await;
    sub.cmd(&["SUBSCRIBE", "__keyspace@3__:k"]).await;
    sub.cmd(&["PSUBSCRIBE", "__keyevent@*__:*"]).await;
    assert_eq!(c.cmd(&["SET", "k", "v"]).await, ok());
    sub.expect_bytes(b"*3\r\n$7\r\nmessage\r\n$16\r\n__keyspace@3__:k\r\n$3\r\nset\r\n*4\r\n$8\r\npmessage\r\n$16\r\n__keyevent@*__:*\r\n$18\r\n__keyevent@3__:set\r\n$1\r\nk\r\n").await;
    // Turned off, nothing more comes.
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "notify-keyspace-events", ""])
            .await,
        ok()
    );
    assert_eq!(c.cmd(&["SET", "k", "w"]).await, ok());
    assert_eq!(c.cmd(&["PUBLISH", "__keyevent@0__:x", "end"]).await, int(1));
    sub.expect_bytes(b"*4\r\n$8\r\npmessage\r\n$16\r\n__keyevent@*__:*\r\n$16\r\n__keyevent@0__:x\r\n$3\r\nend\r\n").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flags_select_classes_and_channels() {
    let s = start().await;
    let mut c = s.raw().await;
    for (set, shown) in [
        ("KEA", "AKE"),
        ("gE$lshzxetdnm", "AEm"),
        ("Elg", "glE"),
        ("Kn", "nK"),
        ("", ""),
    ] {
        assert_eq!(
            c.cmd(&["CONFIG", "SET", "notify-keyspace-events", set])
                .await,
            ok()
        );
        assert_eq!(
            c.cmd(&["CONFIG", "GET", "notify-keyspace-events"]).await,
            bulks(&["notify-keyspace-events", shown])
        );
    }
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "Q"]).await,
        err("ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")
    );
    // Keyspace channel only, lists only: a list event, no string event, no `new`.
    let mut w = Watch::new(&s, "Kl").await;
    assert_eq!(w.run("SET s 1").await, Vec::<String>::new());
    assert_eq!(w.run("RPUSH l a").await, ["K0:l:rpush"]);
    // Both channels, generic only.
    let mut w = Watch::new(&s, "KEg").await;
    assert_eq!(w.run("SET s 1").await, Vec::<String>::new());
    assert_eq!(w.run("DEL s").await, ["K0:s:del", "E0:del:s"]);
    // A class without K or E publishes nothing.
    let mut w = Watch::new(&s, "A").await;
    assert_eq!(w.run("SET s 1").await, Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_file_sets_flags() {
    let s = start_with(|c| {
        c.apply_file("notify-keyspace-events \"Eg$\"\n").unwrap();
    })
    .await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "notify-keyspace-events"]).await,
        bulks(&["notify-keyspace-events", "g$E"])
    );
    let mut sub = s.raw().await;
    sub.cmd(&["PSUBSCRIBE", "__keyevent@0__:*"]).await;
    c.cmd(&["SET", "a", "1"]).await;
    sub.expect_bytes(b"*4\r\n$8\r\npmessage\r\n$16\r\n__keyevent@0__:*\r\n$18\r\n__keyevent@0__:set\r\n$1\r\na\r\n").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_by_the_sweep_and_by_a_write() {
    let s = start().await;
    let mut w = Watch::new(&s, "EAn").await;
    // The background sweep (every 100 ms) deletes it: no sleep, the read waits for it.
    assert_eq!(
        w.run("SET k v PX 50").await,
        ["E0:new:k", "E0:set:k", "E0:expire:k"]
    );
    assert_eq!(w.next_event().await, "__keyevent@0__:expired=k");
    // A key whose time is past when a write finds it: `expired`, then the write's own events
    // (whether the sweep or the write deletes it, the order is the same).
    assert_eq!(w.run("RPUSH l a").await, ["E0:new:l", "E0:rpush:l"]);
    assert_eq!(w.run("PEXPIREAT l 1000").await, ["E0:del:l"]);
    assert_eq!(w.run("RPUSH l a").await, ["E0:new:l", "E0:rpush:l"]);
    // In one transaction, so the sweep cannot take the key first (redis-server 7.0.15 gives
    // the same events).
    for line in ["MULTI", "SET t v PXAT 1000", "HSET t f v"] {
        let args: Vec<&str> = line.split_whitespace().collect();
        w.cmd.cmd(&args).await;
    }
    assert_eq!(
        w.run("EXEC").await,
        [
            "E0:new:t",
            "E0:set:t",
            "E0:expire:t",
            "E0:expired:t",
            "E0:new:t",
            "E0:hset:t"
        ]
    );
}

/// `keymiss` (flag `m`): one event per read lookup that finds nothing, as redis-server 7.0.15
/// emits them (recorded with `notify-keyspace-events Em`): reads, the GET of SET, GETEX,
/// GETDEL, COPY's source; never the lookups of writes (INCR, LPUSH, RPOPLPUSH, LMOVE).
const KEYMISS: &[(&str, &[&str])] = &[
    ("get a", &["E0:keymiss:a"]),
    ("mget a b", &["E0:keymiss:a", "E0:keymiss:b"]),
    ("exists c", &["E0:keymiss:c"]),
    ("touch d", &["E0:keymiss:d"]),
    ("hget h f", &["E0:keymiss:h"]),
    ("set e v get", &["E0:keymiss:e"]),
    ("type f", &["E0:keymiss:f"]),
    ("ttl g", &["E0:keymiss:g"]),
    ("sinter s1 s2", &["E0:keymiss:s1", "E0:keymiss:s2"]),
    ("sort l1", &["E0:keymiss:l1"]),
    ("lrange l2 0 -1", &["E0:keymiss:l2"]),
    ("smembers s3", &["E0:keymiss:s3"]),
    ("zscore z m", &["E0:keymiss:z"]),
    ("object encoding o", &["E0:keymiss:o"]),
    ("getex x1", &["E0:keymiss:x1"]),
    ("getdel x2", &["E0:keymiss:x2"]),
    ("copy x3 x4", &["E0:keymiss:x3"]),
    ("strlen x5", &["E0:keymiss:x5"]),
    ("lcs x6 x7", &["E0:keymiss:x6", "E0:keymiss:x7"]),
    ("sintercard 2 x8 x9", &["E0:keymiss:x8", "E0:keymiss:x9"]),
    ("zunion 2 y1 y2", &["E0:keymiss:y1", "E0:keymiss:y2"]),
    ("hgetall y4", &["E0:keymiss:y4"]),
    ("llen y5", &["E0:keymiss:y5"]),
    ("exists e e y5 e", &["E0:keymiss:y5"]),
    ("srandmember y6", &["E0:keymiss:y6"]),
    ("incr y7", &[]),
    ("lpush y8 a", &[]),
    ("rpoplpush y9 y10", &[]),
    ("lmove z1 z2 left left", &[]),
    ("get y7", &[]),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keymiss_for_every_read_lookup_that_finds_nothing() {
    let s = start().await;
    let mut w = Watch::new(&s, "Em").await;
    for (line, want) in KEYMISS {
        assert_eq!(w.run(line).await, *want, "{line}");
    }
    // Without `m`, nothing (keyspace_misses still counts).
    let mut w = Watch::new(&s, "E$").await;
    assert_eq!(w.run("get a").await, Vec::<String>::new());
}

/// Keys that expired before the sweep reaches `t`: [`OLD`] keys that expired long ago, which
/// the background sweep takes 64 at a time, oldest first, every 100 ms, then `t`, expired after
/// all of them; the sweep gets to `t` only after ~5 s, so a read finds it first.
const OLD: usize = 3000;

async fn set_t_behind_the_sweep(w: &mut Watch) {
    let mut pipeline = Vec::new();
    for i in 0..OLD {
        let k = format!("old{i}");
        pipeline.extend(encode_command(&[
            b"SET",
            k.as_bytes(),
            b"v",
            b"PXAT",
            b"1000",
        ]));
    }
    w.cmd.send(&pipeline).await;
    for _ in 0..OLD {
        assert_eq!(w.cmd.read().await, Some(ok()));
    }
    assert_eq!(w.cmd.cmd(&["SET", "t", "v", "PXAT", "2000"]).await, ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_when_a_read_finds_the_key() {
    let s = start().await;
    let mut w = Watch::new(&s, "Ex").await;
    set_t_behind_the_sweep(&mut w).await;
    // A read that finds `t` expired deletes it at once, as Redis's lazy expiry does.
    assert_eq!(w.cmd.cmd(&["GET", "t"]).await, Frame::Null);
    let mut swept = 0;
    loop {
        match w.next_event().await.as_str() {
            "__keyevent@0__:expired=t" => break,
            e if e.starts_with("__keyevent@0__:expired=old") => swept += 1,
            other => panic!("{other}"),
        }
    }
    assert!(
        swept < OLD,
        "`t` was expired by the sweep, after all {OLD} older keys"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocked_client_served_by_a_push() {
    let s = start().await;
    let mut w = Watch::new(&s, "EAn").await;
    let mut blocked = s.raw().await;
    blocked.send(&encode_command(&[b"BLPOP", b"q", b"0"])).await;
    // Wait until it is blocked.
    let mut c = s.raw().await;
    loop {
        let (Frame::Verbatim { data, .. } | Frame::Bulk(data)) = c.cmd(&["INFO", "clients"]).await
        else {
            panic!()
        };
        if String::from_utf8_lossy(&data).contains("blocked_clients:1") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert_eq!(
        w.run("RPUSH q x").await,
        ["E0:new:q", "E0:rpush:q", "E0:lpop:q", "E0:del:q"]
    );
    assert_eq!(blocked.read().await, Some(bulks(&["q", "x"])));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_exec_events_and_other_databases() {
    let s = start().await;
    let mut w = Watch::new(&s, "EAn").await;
    w.cmd.cmd(&["MULTI"]).await;
    w.cmd.cmd(&["SET", "a", "1"]).await;
    w.cmd.cmd(&["INCR", "a"]).await;
    w.cmd.cmd(&["SELECT", "5"]).await;
    w.cmd.cmd(&["SADD", "s", "m"]).await;
    w.cmd.cmd(&["EXEC"]).await;
    assert_eq!(
        w.drain().await,
        [
            "E0:new:a",
            "E0:set:a",
            "E0:incrby:a",
            "E5:new:s",
            "E5:sadd:s"
        ]
    );
    // A command that fails writes nothing, and says nothing.
    assert_eq!(w.run("INCR s").await, Vec::<String>::new());
    assert_eq!(w.run("LPUSH s x").await, Vec::<String>::new());
}

/// Without `new` events, MSET's `set` events come one per pair, in order, a key named twice
/// twice; INCR's one-statement path (an existing counter) says `incrby` as the general one
/// (a new key) does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mset_and_incr_events_without_new() {
    let s = start().await;
    let mut w = Watch::new(&s, "E$").await;
    assert_eq!(
        w.run("MSET a 1 b 2 a 3").await,
        ["E0:set:a", "E0:set:b", "E0:set:a"]
    );
    assert_eq!(w.run("INCR a").await, ["E0:incrby:a"]);
    assert_eq!(w.run("INCR n").await, ["E0:incrby:n"]);
    assert_eq!(
        w.cmd.cmd(&["MGET", "a", "b", "n"]).await,
        bulks(&["4", "2", "1"])
    );
}

const STRINGS: &[(&str, &[&str])] = &[
    ("set s 1", &["E0:new:s", "E0:set:s"]),
    ("set s 2", &["E0:set:s"]),
    ("set s 3 EX 100", &["E0:set:s", "E0:expire:s"]),
    ("set s 4 KEEPTTL", &["E0:set:s"]),
    ("set s 5 NX", &[]),
    ("set s 6 XX", &["E0:set:s"]),
    ("set s2 x GET", &["E0:new:s2", "E0:set:s2"]),
    ("setnx s 1", &[]),
    ("setnx s3 1", &["E0:new:s3", "E0:set:s3"]),
    (
        "setex s4 100 v",
        &["E0:new:s4", "E0:set:s4", "E0:expire:s4"],
    ),
    (
        "psetex s5 100000 v",
        &["E0:new:s5", "E0:set:s5", "E0:expire:s5"],
    ),
    ("getset s 9", &["E0:set:s"]),
    ("getdel s", &["E0:del:s"]),
    ("getdel s", &[]),
    ("append s 1", &["E0:new:s", "E0:append:s"]),
    ("append s 2", &["E0:append:s"]),
    ("setrange s 5 x", &["E0:setrange:s"]),
    ("setrange s 0 \"\"", &["E0:setrange:s"]),
    ("incr n", &["E0:new:n", "E0:incrby:n"]),
    ("incrby n 5", &["E0:incrby:n"]),
    ("decr n", &["E0:incrby:n"]),
    ("decrby n 2", &["E0:incrby:n"]),
    ("incrbyfloat n 1.5", &["E0:incrbyfloat:n"]),
    (
        "mset a 1 b 2",
        &["E0:new:a", "E0:set:a", "E0:new:b", "E0:set:b"],
    ),
    (
        "msetnx c 1 d 2",
        &["E0:new:c", "E0:set:c", "E0:new:d", "E0:set:d"],
    ),
    ("msetnx c 1 e 2", &[]),
    ("getex a EX 100", &["E0:expire:a"]),
    ("getex a PERSIST", &["E0:persist:a"]),
    ("getex a", &[]),
    ("get a", &[]),
    ("set big 1", &["E0:new:big", "E0:set:big"]),
];

const KEYS: &[(&str, &[&str])] = &[
    ("set a 1", &["E0:new:a", "E0:set:a"]),
    ("set b 2", &["E0:new:b", "E0:set:b"]),
    ("del a b nokey", &["E0:del:a", "E0:del:b"]),
    ("set a 1", &["E0:new:a", "E0:set:a"]),
    ("unlink a", &["E0:del:a"]),
    ("set a 1", &["E0:new:a", "E0:set:a"]),
    ("expire a 100", &["E0:expire:a"]),
    ("pexpire a 100000", &["E0:expire:a"]),
    ("expireat a 99999999999", &["E0:expire:a"]),
    ("pexpireat a 99999999999000", &["E0:expire:a"]),
    ("expire a 100 NX", &[]),
    ("expire a 100 XX", &["E0:expire:a"]),
    ("persist a", &["E0:persist:a"]),
    ("persist a", &[]),
    ("expire a -1", &["E0:del:a"]),
    ("set a 1", &["E0:new:a", "E0:set:a"]),
    ("pexpireat a 1", &["E0:del:a"]),
    ("set a 1", &["E0:new:a", "E0:set:a"]),
    (
        "rename a b",
        &["E0:new:b", "E0:rename_from:a", "E0:rename_to:b"],
    ),
    ("rename b b", &[]),
    ("set c 1", &["E0:new:c", "E0:set:c"]),
    ("renamenx b c", &[]),
    (
        "renamenx b d",
        &["E0:new:d", "E0:rename_from:b", "E0:rename_to:d"],
    ),
    ("copy d e", &["E0:new:e", "E0:copy_to:e"]),
    ("copy d e", &[]),
    ("copy d e REPLACE", &["E0:new:e", "E0:copy_to:e"]),
    ("copy d f DB 1", &["E1:new:f", "E1:copy_to:f"]),
    ("move d 2", &["E2:new:d", "E0:move_from:d", "E2:move_to:d"]),
    ("move nokey 2", &[]),
    ("set t 1", &["E0:new:t", "E0:set:t"]),
    ("swapdb 0 1", &[]),
    ("swapdb 0 1", &[]),
    ("rpush l 3 1 2", &["E0:new:l", "E0:rpush:l"]),
    ("sort l STORE dst", &["E0:new:dst", "E0:sortstore:dst"]),
    ("sort l STORE dst", &["E0:sortstore:dst"]),
    ("sort nokey STORE dst", &["E0:del:dst"]),
    ("flushdb", &[]),
    ("set x 1", &["E0:new:x", "E0:set:x"]),
    ("flushall", &[]),
];

const HASHES: &[(&str, &[&str])] = &[
    ("hset h f 1 g 2", &["E0:new:h", "E0:hset:h"]),
    ("hset h f 1", &["E0:hset:h"]),
    ("hmset h a 1", &["E0:hset:h"]),
    ("hsetnx h f 1", &[]),
    ("hsetnx h z 1", &["E0:hset:h"]),
    ("hsetnx h2 z 1", &["E0:new:h2", "E0:hset:h2"]),
    ("hincrby h n 1", &["E0:hincrby:h"]),
    ("hincrbyfloat h n 1.5", &["E0:hincrbyfloat:h"]),
    ("hdel h f g", &["E0:hdel:h"]),
    ("hdel h nofield", &[]),
    ("hdel h2 z", &["E0:hdel:h2", "E0:del:h2"]),
    ("hdel h a n z", &["E0:hdel:h", "E0:del:h"]),
];

const LISTS: &[(&str, &[&str])] = &[
    ("lpush l a b", &["E0:new:l", "E0:lpush:l"]),
    ("rpush l c", &["E0:rpush:l"]),
    ("lpushx l d", &["E0:lpush:l"]),
    ("rpushx l e", &["E0:rpush:l"]),
    ("lpushx nol d", &[]),
    ("linsert l BEFORE c x", &["E0:linsert:l"]),
    ("linsert l AFTER nothere x", &[]),
    ("lset l 0 y", &["E0:lset:l"]),
    ("lrem l 1 x", &["E0:lrem:l"]),
    ("lrem l 0 zzz", &[]),
    ("ltrim l 0 2", &["E0:ltrim:l"]),
    ("ltrim l 0 -1", &["E0:ltrim:l"]),
    ("lpop l", &["E0:lpop:l"]),
    ("rpop l", &["E0:rpop:l"]),
    ("lpop l 5", &["E0:lpop:l", "E0:del:l"]),
    ("rpush l2 1 2 3", &["E0:new:l2", "E0:rpush:l2"]),
    ("rpop l2 3", &["E0:rpop:l2", "E0:del:l2"]),
    ("rpush src 1 2", &["E0:new:src", "E0:rpush:src"]),
    (
        "lmove src dst LEFT RIGHT",
        &["E0:new:dst", "E0:rpush:dst", "E0:lpop:src"],
    ),
    (
        "lmove src dst RIGHT LEFT",
        &["E0:lpush:dst", "E0:rpop:src", "E0:del:src"],
    ),
    ("rpoplpush dst dst", &["E0:lpush:dst", "E0:rpop:dst"]),
    (
        "rpoplpush dst other",
        &["E0:new:other", "E0:lpush:other", "E0:rpop:dst"],
    ),
    (
        "lmpop 2 none dst LEFT COUNT 1",
        &["E0:lpop:dst", "E0:del:dst"],
    ),
    ("rpush b 1", &["E0:new:b", "E0:rpush:b"]),
    ("blpop b 0", &["E0:lpop:b", "E0:del:b"]),
    ("rpush b 1 2", &["E0:new:b", "E0:rpush:b"]),
    ("brpop b 0", &["E0:rpop:b"]),
    (
        "blmove b b2 LEFT LEFT 0",
        &["E0:new:b2", "E0:lpush:b2", "E0:lpop:b", "E0:del:b"],
    ),
    ("rpush b 1", &["E0:new:b", "E0:rpush:b"]),
    ("blmpop 0 1 b RIGHT", &["E0:rpop:b", "E0:del:b"]),
    ("ltrim dst 1 0", &[]),
];

const SETS: &[(&str, &[&str])] = &[
    ("sadd s a b c", &["E0:new:s", "E0:sadd:s"]),
    ("sadd s a", &[]),
    ("srem s a", &["E0:srem:s"]),
    ("srem s zz", &[]),
    ("spop s", &["E0:spop:s"]),
    ("spop s 5", &["E0:spop:s", "E0:del:s"]),
    ("sadd s1 a b c", &["E0:new:s1", "E0:sadd:s1"]),
    ("sadd s2 b c d", &["E0:new:s2", "E0:sadd:s2"]),
    ("sinterstore d1 s1 s2", &["E0:new:d1", "E0:sinterstore:d1"]),
    ("sunionstore d2 s1 s2", &["E0:new:d2", "E0:sunionstore:d2"]),
    ("sdiffstore d3 s1 s2", &["E0:new:d3", "E0:sdiffstore:d3"]),
    ("sinterstore d1 s1 none", &["E0:del:d1"]),
    ("sinterstore d9 s1 none", &[]),
    ("smove s1 s2 a", &["E0:srem:s1", "E0:sadd:s2"]),
    ("smove s1 s2 zz", &[]),
    (
        "smove s1 new b",
        &["E0:srem:s1", "E0:new:new", "E0:sadd:new"],
    ),
    (
        "smove s1 new c",
        &["E0:srem:s1", "E0:del:s1", "E0:sadd:new"],
    ),
    ("sadd t x", &["E0:new:t", "E0:sadd:t"]),
    ("spop t 1", &["E0:spop:t", "E0:del:t"]),
];

const ZSETS: &[(&str, &[&str])] = &[
    ("zadd z 1 a 2 b", &["E0:new:z", "E0:zadd:z"]),
    ("zadd z 1 a", &[]),
    ("zadd z 5 a", &["E0:zadd:z"]),
    ("zadd z NX 1 a", &[]),
    ("zadd z XX 1 nope", &[]),
    ("zadd z INCR 1 a", &["E0:zincr:z"]),
    ("zincrby z 1 b", &["E0:zincr:z"]),
    ("zincrby z2 1 b", &["E0:new:z2", "E0:zincr:z2"]),
    ("zrem z a zz", &["E0:zrem:z"]),
    ("zrem z zz", &[]),
    ("zadd z 1 a 2 b 3 c 4 d", &["E0:zadd:z"]),
    ("zpopmin z", &["E0:zpopmin:z"]),
    ("zpopmax z", &["E0:zpopmax:z"]),
    ("zpopmin z 5", &["E0:zpopmin:z", "E0:del:z"]),
    ("zadd z 1 a 2 b 3 c 4 d", &["E0:new:z", "E0:zadd:z"]),
    ("zremrangebyrank z 0 0", &["E0:zremrangebyrank:z"]),
    ("zremrangebyscore z 2 2", &["E0:zremrangebyscore:z"]),
    ("zremrangebylex z - +", &["E0:zremrangebylex:z", "E0:del:z"]),
    ("zadd z1 1 a 2 b", &["E0:new:z1", "E0:zadd:z1"]),
    ("zadd z2 2 b 3 c", &["E0:zadd:z2"]),
    ("zunionstore u 2 z1 z2", &["E0:new:u", "E0:zunionstore:u"]),
    ("zinterstore i 2 z1 z2", &["E0:new:i", "E0:zinterstore:i"]),
    ("zdiffstore d 2 z1 z2", &["E0:new:d", "E0:zdiffstore:d"]),
    ("zinterstore i 2 z1 none", &["E0:del:i"]),
    ("zrangestore r z1 0 -1", &["E0:new:r", "E0:zrangestore:r"]),
    ("zrangestore r none 0 -1", &["E0:del:r"]),
    ("zmpop 1 z1 MIN COUNT 5", &["E0:zpopmin:z1", "E0:del:z1"]),
    ("bzpopmin z2 0", &["E0:zpopmin:z2"]),
    ("bzpopmax z2 0", &["E0:zpopmax:z2", "E0:del:z2"]),
    ("zadd z3 1 a", &["E0:new:z3", "E0:zadd:z3"]),
    ("bzmpop 0 1 z3 MAX", &["E0:zpopmax:z3", "E0:del:z3"]),
];

/// Destinations overwritten in place (no `new`), changes that change nothing, and more.
const EXTRA: &[(&str, &[&str])] = &[
    ("sadd s1 a b c", &["E0:new:s1", "E0:sadd:s1"]),
    ("sadd s2 b c d", &["E0:new:s2", "E0:sadd:s2"]),
    ("sunionstore d s1 s2", &["E0:new:d", "E0:sunionstore:d"]),
    ("sunionstore d s1 s2", &["E0:sunionstore:d"]),
    ("sinterstore d s1 s2", &["E0:sinterstore:d"]),
    ("sadd s2 a", &["E0:sadd:s2"]),
    ("smove s1 s2 a", &["E0:srem:s1"]),
    ("zadd z1 1 a 2 b", &["E0:new:z1", "E0:zadd:z1"]),
    ("zunionstore u 1 z1", &["E0:new:u", "E0:zunionstore:u"]),
    ("zunionstore u 1 z1", &["E0:zunionstore:u"]),
    ("zrangestore u z1 0 0", &["E0:zrangestore:u"]),
    ("zadd z1 INCR 0 a", &[]),
    ("zadd z1 CH 1 a", &[]),
    ("zadd z1 GT 0 a", &[]),
    ("hincrby nh f 1", &["E0:new:nh", "E0:hincrby:nh"]),
    ("set r1 1", &["E0:new:r1", "E0:set:r1"]),
    ("set r2 2", &["E0:new:r2", "E0:set:r2"]),
    (
        "rename r1 r2",
        &["E0:new:r2", "E0:rename_from:r1", "E0:rename_to:r2"],
    ),
    ("expire r2 100 GT", &[]),
    ("expire r2 200 GT", &[]),
    ("lpush l a", &["E0:new:l", "E0:lpush:l"]),
    ("rpoplpush l l", &["E0:lpush:l", "E0:rpop:l"]),
    ("linsert l AFTER a b", &["E0:linsert:l"]),
    ("lrem l 0 a", &["E0:lrem:l"]),
    ("lrem l 0 b", &["E0:lrem:l", "E0:del:l"]),
    ("set ss x", &["E0:new:ss", "E0:set:ss"]),
    ("sadd ss x", &[]),
    ("zincrby ss 1 x", &[]),
    ("getex nokey EX 10", &[]),
    (
        "set e 1 PX 100000",
        &["E0:new:e", "E0:set:e", "E0:expire:e"],
    ),
    ("getex e PERSIST", &["E0:persist:e"]),
    ("getex e PERSIST", &[]),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keymiss_follows_the_expired_event_of_a_read_that_finds_the_key_expired() {
    // As redis-server 7.0.15 with `Exm`: GET of a key past its time gives `expired`, then
    // `keymiss` (its lookup misses after the lazy deletion); GET of a key that was never
    // there gives `keymiss` alone.
    let s = start().await;
    let mut w = Watch::new(&s, "Exm").await;
    set_t_behind_the_sweep(&mut w).await;
    assert_eq!(w.cmd.cmd(&["GET", "t"]).await, Frame::Null);
    assert_eq!(w.cmd.cmd(&["GET", "nope"]).await, Frame::Null);
    let mut seen = Vec::new();
    while seen.len() < 3 {
        let e = w.next_event().await;
        if !e.starts_with("__keyevent@0__:expired=old") {
            seen.push(e);
        }
    }
    assert_eq!(
        seen,
        [
            "__keyevent@0__:expired=t",
            "__keyevent@0__:keymiss=t",
            "__keyevent@0__:keymiss=nope"
        ]
    );
}
