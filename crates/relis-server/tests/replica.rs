//! Relis as a replica of a real redis-server master (REPLICAOF): the full sync of a data set
//! with every type, then a live write load (MULTI, scripts, expiry, several databases, blocking
//! pops woken by the master's writes), the same data on both; writes refused on the replica;
//! WAIT on the master counting the replica's durable ACKs; a dropped link continuing with a
//! partial resync; REPLICAOF NO ONE keeping the data. A live mixed load followed to the same
//! data (SCAN + DUMP of every database); expiry left to the master; a full sync replacing the
//! whole dataset; SIGKILL of the replica mid full sync and mid stream, restarted on its files,
//! with no acknowledged offset lost.

mod common;

use common::{spawn_redis_with, start, Child};
use redis::aio::MultiplexedConnection;
use redis::Value;
use std::time::Duration;

async fn connect(addr: std::net::SocketAddr) -> MultiplexedConnection {
    redis::Client::open(format!("redis://{addr}/"))
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap()
}

async fn info_field(c: &mut MultiplexedConnection, field: &str) -> String {
    let info: String = redis::cmd("INFO").arg("all").query_async(c).await.unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .map(str::to_string)
        .unwrap_or_default()
}

/// Every key of every database, found with SCAN, with its whole value as DUMP gives it
/// (decoded, so the two servers' choices of member order inside a payload do not count) and
/// its exact expiry time (PEXPIRETIME: a master replicates expiries as absolute times), sorted.
async fn snapshot(c: &mut MultiplexedConnection) -> Vec<String> {
    let dbs: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("databases")
        .query_async(c)
        .await
        .unwrap();
    let dbs: u32 = dbs[1].parse().unwrap();
    let mut out = Vec::new();
    for db in 0..dbs {
        let _: () = redis::cmd("SELECT").arg(db).query_async(c).await.unwrap();
        let mut keys: Vec<Vec<u8>> = Vec::new();
        let mut cursor = 0u64;
        loop {
            let (next, page): (u64, Vec<Vec<u8>>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("COUNT")
                .arg(100)
                .query_async(c)
                .await
                .unwrap();
            keys.extend(page);
            if next == 0 {
                break;
            }
            cursor = next;
        }
        keys.sort();
        keys.dedup();
        for k in keys {
            let (payload, at): (Option<Vec<u8>>, i64) = redis::pipe()
                .cmd("DUMP")
                .arg(&k)
                .cmd("PEXPIRETIME")
                .arg(&k)
                .query_async(c)
                .await
                .unwrap();
            // Gone between SCAN and DUMP: only an expiry does that here, and both sides then
            // lack it.
            let Some(payload) = payload else { continue };
            let value = match rdb::payload::restore(&payload).unwrap() {
                rdb::Object::Set(mut m) => {
                    m.sort();
                    format!("set {m:?}")
                }
                rdb::Object::Hash(mut m) => {
                    m.sort();
                    format!("hash {m:?}")
                }
                other => format!("{other:?}"),
            };
            out.push(format!(
                "{db} {} expire_at:{at} {value}",
                String::from_utf8_lossy(&k)
            ));
        }
    }
    let _: () = redis::cmd("SELECT").arg(0).query_async(c).await.unwrap();
    out
}

/// Waits until the replica has applied everything the master has written.
async fn caught_up(master: &mut MultiplexedConnection, replica: &mut MultiplexedConnection) {
    let mut last = String::new();
    for _ in 0..400 {
        let want = info_field(master, "master_repl_offset").await;
        let status = info_field(replica, "master_link_status").await;
        let got = info_field(replica, "slave_repl_offset").await;
        if status == "up" && want == got {
            return;
        }
        last = format!("master at {want}, replica {status} at {got}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the replica did not catch up: {last}");
}

/// A master with a data set of every type and encoding Redis 7.0 writes.
async fn master_with_data(dir: &std::path::Path) -> Option<(Child, MultiplexedConnection)> {
    master_with_data_and(dir, &[]).await
}

/// [`master_with_data`] with more redis-server arguments.
async fn master_with_data_and(
    dir: &std::path::Path,
    extra: &[&str],
) -> Option<(Child, MultiplexedConnection)> {
    let mut args = vec!["--repl-diskless-sync-delay", "0"];
    args.extend_from_slice(extra);
    let redis = spawn_redis_with(dir, &args)?;
    let mut m = connect(redis.addr()).await;
    let mut p = redis::pipe();
    p.cmd("SET")
        .arg("int")
        .arg(12345)
        .cmd("SET")
        .arg("str")
        .arg("hello")
        .cmd("SET")
        .arg("big")
        .arg("x".repeat(5000))
        .cmd("SET")
        .arg("ttl")
        .arg("v")
        .arg("EX")
        .arg(1000)
        .cmd("RPUSH")
        .arg("list")
        .arg(&["a", "b", "c"])
        .cmd("HSET")
        .arg("hash")
        .arg("f")
        .arg("v")
        .arg("g")
        .arg("w")
        .cmd("SADD")
        .arg("ints")
        .arg(&[1, 2, 3])
        .cmd("SADD")
        .arg("set")
        .arg(&["a", "b"])
        .cmd("ZADD")
        .arg("zset")
        .arg(1.5)
        .arg("a")
        .arg(2)
        .arg("b")
        .cmd("XADD")
        .arg("stream")
        .arg("1-1")
        .arg("f")
        .arg("v")
        .cmd("XGROUP")
        .arg("CREATE")
        .arg("stream")
        .arg("g")
        .arg("0")
        .cmd("SELECT")
        .arg(2)
        .cmd("SET")
        .arg("in2")
        .arg("two")
        .cmd("SELECT")
        .arg(0);
    for i in 0..300 {
        p.cmd("HSET").arg("bighash").arg(format!("f{i}")).arg(i);
        p.cmd("ZADD").arg("bigzset").arg(i).arg(format!("m{i}"));
        p.cmd("RPUSH").arg("biglist").arg(format!("e{i}"));
        p.cmd("SADD").arg("bigset").arg(format!("s{i}"));
    }
    let _: () = p.query_async(&mut m).await.unwrap();
    Some((redis, m))
}

#[tokio::test]
async fn a_replica_syncs_follows_and_is_promoted() {
    let dir = tempfile::tempdir().unwrap();
    let Some((redis, mut m)) = master_with_data(dir.path()).await else {
        return;
    };
    let relis = start().await;
    let mut r = connect(relis.addr).await;
    let ok: String = redis::cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg(redis.port)
        .query_async(&mut r)
        .await
        .unwrap();
    assert_eq!(ok, "OK");
    let again: String = redis::cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg(redis.port)
        .query_async(&mut r)
        .await
        .unwrap();
    assert_eq!(again, "OK Already connected to specified master");
    caught_up(&mut m, &mut r).await;
    assert_eq!(snapshot(&mut r).await, snapshot(&mut m).await);

    // ROLE and INFO as a Redis replica shows them.
    let role: Value = redis::cmd("ROLE").query_async(&mut r).await.unwrap();
    let Value::Array(role) = role else { panic!() };
    assert_eq!(role[0], Value::BulkString(b"slave".to_vec()));
    assert_eq!(role[2], Value::Int(i64::from(redis.port)));
    assert_eq!(role[3], Value::BulkString(b"connected".to_vec()));
    assert_eq!(info_field(&mut r, "role").await, "slave");
    assert_eq!(
        info_field(&mut r, "master_replid").await,
        info_field(&mut m, "master_replid").await
    );
    // The full sync's load, as INFO persistence shows it: the 15 keys of `master_with_data`
    // (14 in db 0, one in db 2), none expired; the `loading_*` fields only while loading.
    assert_eq!(info_field(&mut r, "rdb_last_load_keys_loaded").await, "15");
    assert_eq!(info_field(&mut r, "rdb_last_load_keys_expired").await, "0");
    assert_eq!(info_field(&mut r, "loading").await, "0");
    let persistence: String = redis::cmd("INFO")
        .arg("persistence")
        .query_async(&mut r)
        .await
        .unwrap();
    assert!(!persistence.contains("loading_start_time"), "{persistence}");

    // Writes are refused; reads are served.
    let e = redis::cmd("SET")
        .arg("k")
        .arg("v")
        .query_async::<()>(&mut r)
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some("READONLY"));
    assert_eq!(
        e.detail(),
        Some("You can't write against a read only replica.")
    );

    // BLPOP is a write (refused); an XREAD BLOCK on the replica is woken by the master's XADD.
    let e = redis::cmd("BLPOP")
        .arg("q")
        .arg(1)
        .query_async::<()>(&mut r)
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some("READONLY"));
    let e = redis::cmd("EVAL")
        .arg("redis.call('SET', 'a', 'b')")
        .arg(0)
        .query_async::<()>(&mut r)
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some("READONLY"), "{e}");
    let mut blocked = connect(relis.addr).await;
    let pop = tokio::spawn(async move {
        let v: Value = redis::cmd("XREAD")
            .arg("BLOCK")
            .arg(10000)
            .arg("STREAMS")
            .arg("stream")
            .arg("$")
            .query_async(&mut blocked)
            .await
            .unwrap();
        format!("{v:?}")
    });
    tokio::time::sleep(Duration::from_millis(200)).await;

    // A live load: transactions, scripts, expiry, other databases.
    let mut p = redis::pipe();
    p.cmd("RPUSH")
        .arg("q")
        .arg("job")
        .cmd("INCR")
        .arg("int")
        .cmd("APPEND")
        .arg("str")
        .arg(" world")
        .cmd("LPOP")
        .arg("list")
        .cmd("HINCRBY")
        .arg("hash")
        .arg("n")
        .arg(5)
        .cmd("SREM")
        .arg("ints")
        .arg(2)
        .cmd("ZINCRBY")
        .arg("zset")
        .arg(10)
        .arg("a")
        .cmd("XADD")
        .arg("stream")
        .arg("2-1")
        .arg("g")
        .arg("w")
        .cmd("EXPIRE")
        .arg("str")
        .arg(500)
        .cmd("DEL")
        .arg("big")
        .cmd("SELECT")
        .arg(3)
        .cmd("SET")
        .arg("in3")
        .arg("three")
        .cmd("SELECT")
        .arg(0)
        .cmd("EVAL")
        .arg("redis.call('SET', KEYS[1], 'a'); redis.call('INCRBY', KEYS[2], 7)")
        .arg(2)
        .arg("s1")
        .arg("s2")
        .cmd("SET")
        .arg("gone")
        .arg("soon")
        .arg("PX")
        .arg(1);
    let _: () = p.query_async(&mut m).await.unwrap();
    let _: Value = redis::pipe()
        .atomic()
        .cmd("SET")
        .arg("t1")
        .arg(1)
        .cmd("INCR")
        .arg("t1")
        .cmd("RENAME")
        .arg("t1")
        .arg("t2")
        .query_async(&mut m)
        .await
        .unwrap();
    for i in 0..500 {
        let _: () = redis::cmd("ZADD")
            .arg("live")
            .arg(i)
            .arg(i)
            .query_async(&mut m)
            .await
            .unwrap();
    }
    let woken = pop.await.unwrap();
    assert!(woken.contains("2-1"), "{woken}");
    tokio::time::sleep(Duration::from_millis(20)).await;
    caught_up(&mut m, &mut r).await;
    assert_eq!(snapshot(&mut r).await, snapshot(&mut m).await);

    // WAIT on the master counts the replica once its ACK covers the write.
    let _: () = redis::cmd("SET")
        .arg("w")
        .arg(1)
        .query_async(&mut m)
        .await
        .unwrap();
    let acked: i64 = redis::cmd("WAIT")
        .arg(1)
        .arg(5000)
        .query_async(&mut m)
        .await
        .unwrap();
    assert_eq!(acked, 1);

    // The master drops the link: the replica continues where it was (a partial resync).
    let _: Value = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("replica")
        .query_async(&mut m)
        .await
        .unwrap();
    let _: () = redis::cmd("SET")
        .arg("after")
        .arg("drop")
        .query_async(&mut m)
        .await
        .unwrap();
    caught_up(&mut m, &mut r).await;
    let stats: String = redis::cmd("INFO")
        .arg("stats")
        .query_async(&mut m)
        .await
        .unwrap();
    assert!(stats.contains("sync_partial_ok:1"), "{stats}");
    assert!(stats.contains("sync_full:1"), "{stats}");
    assert_eq!(snapshot(&mut r).await, snapshot(&mut m).await);

    // Promoted: a master again, with the data, taking writes.
    let ok: String = redis::cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .query_async(&mut r)
        .await
        .unwrap();
    assert_eq!(ok, "OK");
    assert_eq!(info_field(&mut r, "role").await, "master");
    let _: () = redis::cmd("SET")
        .arg("mine")
        .arg(1)
        .query_async(&mut r)
        .await
        .unwrap();
    let got: String = redis::cmd("GET")
        .arg("after")
        .query_async(&mut r)
        .await
        .unwrap();
    assert_eq!(got, "drop");
}

/// A master that needs a password: the replica uses masterauth.
#[tokio::test]
async fn a_replica_authenticates_with_masterauth() {
    let dir = tempfile::tempdir().unwrap();
    let Some(redis) = spawn_redis_with(dir.path(), &["--repl-diskless-sync-delay", "0"]) else {
        return;
    };
    let mut m = connect(redis.addr()).await;
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("requirepass")
        .arg("pw")
        .query_async(&mut m)
        .await
        .unwrap();
    let _: () = redis::cmd("AUTH")
        .arg("pw")
        .query_async(&mut m)
        .await
        .unwrap();
    let _: () = redis::cmd("SET")
        .arg("k")
        .arg("v")
        .query_async(&mut m)
        .await
        .unwrap();
    let relis = start().await;
    let mut r = connect(relis.addr).await;
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("masterauth")
        .arg("pw")
        .query_async(&mut r)
        .await
        .unwrap();
    let _: String = redis::cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg(redis.port)
        .query_async(&mut r)
        .await
        .unwrap();
    caught_up(&mut m, &mut r).await;
    let got: String = redis::cmd("GET")
        .arg("k")
        .query_async(&mut r)
        .await
        .unwrap();
    assert_eq!(got, "v");
}

/// A full sync replaces the replica's whole dataset, as Redis's replica empties its databases
/// and function libraries before loading: keys only the replica had are gone, a key of the
/// same name that had already expired in the master's RDB does not survive from the replica's
/// data, and the libraries are the master's (callable at once).
#[tokio::test]
async fn a_full_sync_replaces_the_whole_dataset() {
    let dir = tempfile::tempdir().unwrap();
    let Some(redis) = spawn_redis_with(
        dir.path(),
        &[
            "--repl-diskless-sync-delay",
            "0",
            "--enable-debug-command",
            "yes",
        ],
    ) else {
        return;
    };
    let mut m = connect(redis.addr()).await;
    let lib = "#!lua name=mlib\nredis.register_function{function_name='ro', callback=function() return 'master' end, flags={'no-writes'}}";
    let mut p = redis::pipe();
    p.cmd("DEBUG")
        .arg("SET-ACTIVE-EXPIRE")
        .arg(0)
        .cmd("SET")
        .arg("gone")
        .arg("master")
        .arg("PX")
        .arg(1)
        .cmd("SET")
        .arg("kept")
        .arg("master")
        .cmd("FUNCTION")
        .arg("LOAD")
        .arg(lib);
    let _: Value = p.query_async(&mut m).await.unwrap();
    // `gone` expires but stays in the master's memory, so its RDB has it.
    tokio::time::sleep(Duration::from_millis(10)).await;

    let relis = start().await;
    let mut r = connect(relis.addr).await;
    let old = "#!lua name=oldlib\nredis.register_function{function_name='old', callback=function() return 'replica' end, flags={'no-writes'}}";
    let mut p = redis::pipe();
    p.cmd("SET")
        .arg("gone")
        .arg("replica")
        .cmd("SET")
        .arg("mine")
        .arg("replica")
        .cmd("SELECT")
        .arg(5)
        .cmd("SET")
        .arg("mine5")
        .arg("replica")
        .cmd("SELECT")
        .arg(0)
        .cmd("FUNCTION")
        .arg("LOAD")
        .arg(old);
    let _: Value = p.query_async(&mut r).await.unwrap();
    let _: String = redis::cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg(redis.port)
        .query_async(&mut r)
        .await
        .unwrap();
    caught_up(&mut m, &mut r).await;
    assert_eq!(info_field(&mut r, "rdb_last_load_keys_expired").await, "1");
    assert_eq!(info_field(&mut r, "rdb_last_load_keys_loaded").await, "1");
    for (db, key) in [(0, "gone"), (0, "mine"), (5, "mine5")] {
        let n: Value = redis::pipe()
            .cmd("SELECT")
            .arg(db)
            .ignore()
            .cmd("EXISTS")
            .arg(key)
            .cmd("SELECT")
            .arg(0)
            .ignore()
            .query_async(&mut r)
            .await
            .unwrap();
        assert_eq!(n, Value::Array(vec![Value::Int(0)]), "db {db} key {key}");
    }
    let kept: String = redis::cmd("GET")
        .arg("kept")
        .query_async(&mut r)
        .await
        .unwrap();
    assert_eq!(kept, "master");
    let list = |c: &mut MultiplexedConnection| {
        let mut c = c.clone();
        async move {
            redis::cmd("FUNCTION")
                .arg("LIST")
                .arg("WITHCODE")
                .query_async::<Value>(&mut c)
                .await
                .unwrap()
        }
    };
    assert_eq!(list(&mut r).await, list(&mut m).await);
    let hi: String = redis::cmd("FCALL_RO")
        .arg("ro")
        .arg(0)
        .query_async(&mut r)
        .await
        .unwrap();
    assert_eq!(hi, "master");
    let e = redis::cmd("FCALL_RO")
        .arg("old")
        .arg(0)
        .query_async::<Value>(&mut r)
        .await
        .unwrap_err();
    assert_eq!(e.detail(), Some("Function not found"), "{e}");
}

/// One random write (or a few) of the live load, on keys of five types in a small key space
/// so commands keep meeting each other's keys. Expiries are either short (the key expires on
/// the master during the run, which replicates a DEL) or long (still there at the end).
fn random_write(rng: &mut rand::rngs::StdRng, p: &mut redis::Pipeline) {
    use rand::Rng;
    let n = rng.random_range(0..40);
    let (s, l, h, set, z) = (
        format!("s:{n}"),
        format!("l:{n}"),
        format!("h:{n}"),
        format!("S:{n}"),
        format!("z:{n}"),
    );
    let short = rng.random_range(5..300);
    let long = rng.random_range(1000..100_000);
    match rng.random_range(0..27) {
        0 => p.cmd("SET").arg(&s).arg(n).ignore(),
        1 => p.cmd("SET").arg(&s).arg("v").arg("PX").arg(short).ignore(),
        2 => p.cmd("SET").arg(&s).arg(n).arg("EX").arg(long).ignore(),
        3 => p.cmd("SET").arg(&s).arg("kept").arg("KEEPTTL").ignore(),
        4 => p.cmd("INCR").arg(format!("c:{n}")).ignore(),
        5 => p.cmd("APPEND").arg(&s).arg("+").ignore(),
        6 => p.cmd("EXPIRE").arg(&s).arg(long).ignore(),
        7 => p.cmd("PEXPIRE").arg(&l).arg(short).ignore(),
        8 => p.cmd("PERSIST").arg(&s).ignore(),
        9 => p.cmd("GETEX").arg(&h).arg("PX").arg(short).ignore(),
        10 => p.cmd("DEL").arg(&s).arg(&l).ignore(),
        11 => p.cmd("RPUSH").arg(&l).arg(n).arg("x").ignore(),
        12 => p.cmd("LPOP").arg(&l).ignore(),
        13 => p
            .cmd("HSET")
            .arg(&h)
            .arg(format!("f{}", n % 7))
            .arg(n)
            .ignore(),
        14 => p.cmd("HINCRBY").arg(&h).arg("n").arg(3).ignore(),
        15 => p.cmd("SADD").arg(&set).arg(n % 9).arg("m").ignore(),
        // Random: replicated as the member it popped.
        16 => p.cmd("SPOP").arg(&set).ignore(),
        17 => p
            .cmd("ZADD")
            .arg(&z)
            .arg(n)
            .arg(format!("m{}", n % 5))
            .ignore(),
        18 => p.cmd("ZINCRBY").arg(&z).arg(1.5).arg("m1").ignore(),
        19 => p
            .cmd("SUNIONSTORE")
            .arg(format!("S:{}", n + 1))
            .arg(&set)
            .arg(format!("S:{}", n + 2))
            .ignore(),
        20 => p.cmd("RENAME").arg(&l).arg(format!("l:{}", n + 1)).ignore(),
        21 => p.cmd("PEXPIRE").arg(&h).arg(short).ignore(),
        22 => p
            .cmd("SET")
            .arg(&s)
            .arg("v")
            .arg("PX")
            .arg(short)
            .arg("GET")
            .ignore(),
        // A script's effects (Redis 7.0 replicates them as a MULTI/EXEC of its writes, SPOP's
        // pick and PX as absolute time included).
        23 => p
            .cmd("EVAL")
            .arg(
                "local v = redis.call('INCR', KEYS[1]) \
                 redis.call('SET', KEYS[2], v, 'PX', ARGV[1]) \
                 redis.call('SPOP', KEYS[3]) \
                 if redis.call('EXISTS', KEYS[4]) == 1 then redis.call('RPUSH', KEYS[4], v) end \
                 return v",
            )
            .arg(4)
            .arg(format!("c:{n}"))
            .arg(&s)
            .arg(&set)
            .arg(&l)
            .arg(short)
            .ignore(),
        24 => p.cmd("MOVE").arg(&z).arg(rng.random_range(0..4)).ignore(),
        25 => p
            .cmd("COPY")
            .arg(&h)
            .arg(format!("h:{}", n + 1))
            .arg("REPLACE")
            .ignore(),
        _ => p.cmd("HDEL").arg(&h).arg("n").ignore(),
    };
}

/// One connection's share of the live load: random writes, MULTI/EXEC blocks of them, SELECT
/// of other databases, a rare FLUSHDB, and one FLUSHALL (from the first connection) halfway.
async fn live_load(addr: std::net::SocketAddr, seed: u64, ops: usize) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut c = connect(addr).await;
    let dbs = [0, 1, 2, 3, 9, 15];
    for i in 0..ops {
        let mut p = redis::pipe();
        if rng.random_ratio(1, 20) {
            p.cmd("SELECT")
                .arg(dbs[rng.random_range(0..dbs.len())])
                .ignore();
        }
        if seed == 1 && i == ops / 2 {
            p.cmd("FLUSHALL").ignore();
        } else if rng.random_ratio(1, 400) {
            p.cmd("FLUSHDB").ignore();
        } else if rng.random_ratio(1, 8) {
            p.cmd("MULTI").ignore();
            for _ in 0..rng.random_range(1..6) {
                random_write(&mut rng, &mut p);
            }
            p.cmd("EXEC").ignore();
        } else {
            random_write(&mut rng, &mut p);
        }
        // Errors (a RENAME of a missing key, WRONGTYPE) are part of the load: both servers
        // meet the same ones.
        let _: Result<(), _> = p.query_async(&mut c).await;
        if i % 50 == 0 {
            tokio::time::sleep(Duration::from_millis(rng.random_range(0..20))).await;
        }
    }
}

/// A replica that starts while a live mixed load runs on the master (so the load also fills
/// the master's buffer during the full sync) and follows it: MULTI/EXEC, scripts, keys set
/// with EX/PX, EXPIRE, keys that expire on the master during the run, FLUSHALL, FLUSHDB and
/// SELECT of other databases. It ends with the master's data in every database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_follows_a_live_mixed_load() {
    let dir = tempfile::tempdir().unwrap();
    let Some((redis, mut m)) = master_with_data(dir.path()).await else {
        return;
    };
    let relis = start().await;
    let mut r = connect(relis.addr).await;
    let load: Vec<_> = (1..=3)
        .map(|seed| tokio::spawn(live_load(redis.addr(), seed, 1500)))
        .collect();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let _: String = redis::cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg(redis.port)
        .query_async(&mut r)
        .await
        .unwrap();
    for l in load {
        l.await.unwrap();
    }
    // The short expiries are over: the master's SCAN deletes (and replicates the DEL of) what
    // its own expiry cycle has not reached yet.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let want = snapshot(&mut m).await;
    caught_up(&mut m, &mut r).await;
    let got = snapshot(&mut r).await;
    assert!(want.len() > 50, "{want:?}");
    let diff: Vec<_> = want
        .iter()
        .filter(|k| !got.contains(k))
        .map(|k| format!("master: {k}"))
        .chain(
            got.iter()
                .filter(|k| !want.contains(k))
                .map(|k| format!("replica: {k}")),
        )
        .collect();
    assert!(diff.is_empty(), "{} differences: {diff:#?}", diff.len());
    let stats: String = redis::cmd("INFO")
        .arg("stats")
        .query_async(&mut m)
        .await
        .unwrap();
    assert!(stats.contains("sync_full:1\r"), "{stats}");
    let expired = stats
        .lines()
        .find_map(|l| l.strip_prefix("expired_keys:"))
        .unwrap();
    assert!(expired.parse::<u64>().unwrap() > 20, "{stats}");
}

/// A replica leaves expiry to its master, as a Redis replica does: the master's writes see a
/// key that has expired by the replica's clock but not by the master's (the replica is behind)
/// as there, the replica's own sweep and its reads delete nothing, and a key goes when the
/// master's DEL for it arrives. (A write the master made just before the expiry, applied just
/// after it, would otherwise be lost.)
#[tokio::test]
async fn a_replica_leaves_expiry_to_its_master() {
    let dir = tempfile::tempdir().unwrap();
    let Some(redis) = spawn_redis_with(
        dir.path(),
        &[
            "--repl-diskless-sync-delay",
            "0",
            "--enable-debug-command",
            "yes",
        ],
    ) else {
        return;
    };
    let mut m = connect(redis.addr()).await;
    let relis = start().await;
    let mut r = connect(relis.addr).await;
    // Reads that miss then ask the writer to delete the key (for its `expired` event).
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("notify-keyspace-events")
        .arg("Exm")
        .query_async(&mut r)
        .await
        .unwrap();
    let _: String = redis::cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg(redis.port)
        .query_async(&mut r)
        .await
        .unwrap();
    caught_up(&mut m, &mut r).await;
    let _: () = redis::cmd("DEBUG")
        .arg("SET-ACTIVE-EXPIRE")
        .arg(0)
        .query_async(&mut m)
        .await
        .unwrap();
    // In a script the master's clock stands still: the key it made with a 1 ms TTL is there
    // for its PERSIST, however long the script runs. The replica gets both, as MULTI/EXEC, once
    // the script has ended: after the expiry time.
    let _: () = redis::cmd("EVAL")
        .arg(
            "redis.call('SET', KEYS[1], 'v', 'PX', 1) \
             local i = 0 while i < 3000000 do i = i + 1 end \
             redis.call('PERSIST', KEYS[1])",
        )
        .arg(1)
        .arg("persisted")
        .query_async(&mut m)
        .await
        .unwrap();
    // Expires on the master, which (active expiry off, untouched) keeps it until a read.
    let _: () = redis::cmd("SET")
        .arg("later")
        .arg("v")
        .arg("PX")
        .arg(50)
        .query_async(&mut m)
        .await
        .unwrap();
    caught_up(&mut m, &mut r).await;
    // Longer than the replica's sweep period.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let dbsize = |c: &mut MultiplexedConnection| {
        let mut c = c.clone();
        async move {
            redis::cmd("DBSIZE")
                .query_async::<i64>(&mut c)
                .await
                .unwrap()
        }
    };
    assert_eq!(dbsize(&mut m).await, 2);
    assert_eq!(dbsize(&mut r).await, 2, "the replica expired a key itself");
    // Reads on the replica hide the expired key, and delete nothing.
    let got: Option<String> = redis::cmd("GET")
        .arg("later")
        .query_async(&mut r)
        .await
        .unwrap();
    assert_eq!(got, None);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(dbsize(&mut r).await, 2, "a read deleted the key");
    let got: Option<String> = redis::cmd("GET")
        .arg("persisted")
        .query_async(&mut r)
        .await
        .unwrap();
    assert_eq!(got.as_deref(), Some("v"));
    assert_eq!(snapshot(&mut r).await, snapshot(&mut m).await);
    // The master's read expires it there, and its DEL does it here.
    let got: Option<String> = redis::cmd("GET")
        .arg("later")
        .query_async(&mut m)
        .await
        .unwrap();
    assert_eq!(got, None);
    caught_up(&mut m, &mut r).await;
    assert_eq!(dbsize(&mut r).await, 1);
}

/// The offset the master last heard the replica acknowledge (`slave0:...,offset=N` in its INFO
/// replication), if a replica is connected.
async fn acked_offset(m: &mut MultiplexedConnection) -> Option<i64> {
    let info: String = redis::cmd("INFO")
        .arg("replication")
        .query_async(m)
        .await
        .unwrap();
    let line = info.lines().find(|l| l.starts_with("slave0:"))?;
    line.split(',')
        .find_map(|f| f.strip_prefix("offset="))
        .and_then(|o| o.parse().ok())
}

/// The replication position stored in the data file of a replica that is not running.
fn stored_position(dir: &std::path::Path) -> Option<(String, i64)> {
    let c = rusqlite::Connection::open(dir.join("relis.db")).unwrap();
    c.query_row(
        "SELECT replid, repl_offset FROM relis_replication WHERE id = 1",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .ok()
}

/// Watches the master's view of its replica's acknowledged offset until `stop`, keeping the
/// highest seen, while asking for acknowledgements (WAIT sends GETACK) as fast as they come.
fn watch_acks(
    addr: std::net::SocketAddr,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> tokio::task::JoinHandle<i64> {
    tokio::spawn(async move {
        use std::sync::atomic::Ordering;
        let mut m = connect(addr).await;
        let mut waiter = connect(addr).await;
        let mut best = -1;
        while !stop.load(Ordering::SeqCst) {
            let _: Result<i64, _> = redis::cmd("WAIT")
                .arg(1)
                .arg(5)
                .query_async(&mut waiter)
                .await;
            if let Some(o) = acked_offset(&mut m).await {
                best = best.max(o);
            }
        }
        best
    })
}

/// A replica killed with SIGKILL in the middle of the stream, under the live mixed load, and
/// restarted on the same data directory and settings: the position in its data file is at
/// least every offset the master heard it acknowledge (an acknowledged write is durable); it
/// continues with a partial resync and ends with the master's data. Killed again, with the
/// master writing more than its backlog holds meanwhile, it syncs in full and ends identical.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_mid_stream_keeps_what_it_acknowledged() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let Some((redis, mut m)) = master_with_data(dir.path()).await else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let port = redis.port.to_string();
    let args = ["--replicaof", "127.0.0.1", port.as_str()];
    let mut relis = common::spawn_binary(data.path(), &args);
    let mut r = connect(relis.addr()).await;
    caught_up(&mut m, &mut r).await;

    // 1. Killed while the load runs: the master's backlog still has its offset.
    let stop = Arc::new(AtomicBool::new(false));
    let acks = watch_acks(redis.addr(), stop.clone());
    let load: Vec<_> = (1..=2)
        .map(|seed| tokio::spawn(live_load(redis.addr(), 10 + seed, 600)))
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    relis.kill9();
    stop.store(true, Ordering::SeqCst);
    let acked = acks.await.unwrap();
    let (replid, stored) = stored_position(data.path()).expect("a stored position");
    assert_eq!(replid, info_field(&mut m, "master_replid").await);
    assert!(acked > 0, "the master heard no ACK");
    assert!(
        stored >= acked,
        "the master heard offset {acked} acknowledged, the data file has {stored}"
    );
    let relis = common::spawn_binary(data.path(), &args);
    let mut r = connect(relis.addr()).await;
    for l in load {
        l.await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(400)).await;
    let want = snapshot(&mut m).await;
    caught_up(&mut m, &mut r).await;
    assert_eq!(snapshot(&mut r).await, want);
    let stats: String = redis::cmd("INFO")
        .arg("stats")
        .query_async(&mut m)
        .await
        .unwrap();
    assert!(stats.contains("sync_full:1\r"), "{stats}");
    assert!(stats.contains("sync_partial_ok:1\r"), "{stats}");

    // 2. Killed again; meanwhile the master writes past its backlog (1 MB).
    let mut relis = relis;
    relis.kill9();
    let mut p = redis::pipe();
    for i in 0..12_000 {
        p.cmd("SET")
            .arg(format!("past-backlog:{i}"))
            .arg("x".repeat(100))
            .ignore();
    }
    let _: () = p.query_async(&mut m).await.unwrap();
    let relis = common::spawn_binary(data.path(), &args);
    let mut r = connect(relis.addr()).await;
    caught_up(&mut m, &mut r).await;
    assert_eq!(snapshot(&mut r).await, snapshot(&mut m).await);
    let stats: String = redis::cmd("INFO")
        .arg("stats")
        .query_async(&mut m)
        .await
        .unwrap();
    assert!(stats.contains("sync_full:2\r"), "{stats}");
    assert!(stats.contains("sync_partial_err:1\r"), "{stats}");
}

/// A replica killed with SIGKILL while it loads a full sync (the load is one transaction, the
/// old dataset emptied at its start) and restarted on the same data directory: its data file
/// has its old dataset, none of the master's keys, and no position (it had none); restarted
/// following the master, it syncs in full again and ends with the master's data, leaving no
/// file of the dead process behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_killed_mid_full_sync_syncs_again() {
    let dir = tempfile::tempdir().unwrap();
    let Some((redis, mut m)) =
        master_with_data_and(dir.path(), &["--enable-debug-command", "yes"]).await
    else {
        return;
    };
    // Several of the load's batches (`rdbfile::BATCH_KEYS` each), so that some have been
    // written in the open transaction when the replica is killed at 60% of the payload.
    let total = relis_server::rdbfile::BATCH_KEYS as i64 * 5 / 2;
    let _: () = redis::cmd("DEBUG")
        .arg("POPULATE")
        .arg(total)
        .arg("pop")
        .arg(20)
        .query_async(&mut m)
        .await
        .unwrap();
    let _: () = redis::cmd("SAVE").query_async(&mut m).await.unwrap();
    let size = std::fs::metadata(dir.path().join("dump.rdb"))
        .unwrap()
        .len();
    let data = tempfile::tempdir().unwrap();
    let port = redis.port.to_string();
    let mut relis = common::spawn_binary(data.path(), &["--enable-debug-command", "yes"]);
    let mut r = connect(relis.addr()).await;
    let _: () = redis::cmd("SET")
        .arg("mine")
        .arg("old")
        .query_async(&mut r)
        .await
        .unwrap();
    let _: String = redis::cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg(redis.port)
        .query_async(&mut r)
        .await
        .unwrap();
    let mut loaded = 0;
    for _ in 0..3000 {
        loaded = info_field(&mut r, "loading_loaded_bytes")
            .await
            .parse::<u64>()
            .unwrap_or(0);
        if loaded >= size * 6 / 10 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(info_field(&mut r, "loading").await, "1", "the load ended");
    relis.kill9();
    drop(r);
    let keys: Vec<String> = rusqlite::Connection::open(data.path().join("relis.db"))
        .unwrap()
        .prepare("SELECT CAST(key AS TEXT) FROM relis_keys")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(keys, ["mine"], "killed at {loaded} of {size} bytes");
    assert_eq!(stored_position(data.path()), None);

    let args = [
        "--replicaof",
        "127.0.0.1",
        port.as_str(),
        "--enable-debug-command",
        "yes",
    ];
    // The master keeps writing while the replica is down and while it loads again.
    let load = tokio::spawn(live_load(redis.addr(), 21, 400));
    let relis = common::spawn_binary(data.path(), &args);
    let mut r = connect(relis.addr()).await;
    load.await.unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    // DEBUG DIGEST (Redis's digest of the whole keyspace) compares every key: the SCAN + DUMP
    // snapshot of 150,000 keys would take longer than the sync.
    let _: Value = redis::cmd("KEYS")
        .arg("*")
        .query_async(&mut m)
        .await
        .unwrap();
    caught_up(&mut m, &mut r).await;
    let digest = |c: &mut MultiplexedConnection| {
        let mut c = c.clone();
        async move {
            redis::cmd("DEBUG")
                .arg("DIGEST")
                .query_async::<String>(&mut c)
                .await
                .unwrap()
        }
    };
    assert_eq!(digest(&mut r).await, digest(&mut m).await);
    let stats: String = redis::cmd("INFO")
        .arg("stats")
        .query_async(&mut m)
        .await
        .unwrap();
    assert!(stats.contains("sync_full:2\r"), "{stats}");
    let left: Vec<String> = std::fs::read_dir(data.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !["relis.db", "relis.db-wal", "relis.db-shm"].contains(&n.as_str()))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A partial resync continues in the database the master's stream had selected: the master
/// sends no SELECT again until it writes to another one. Both after a dropped link and after a
/// SIGKILL and restart of the replica (the database is stored with the position).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partial_resync_continues_in_the_selected_database() {
    let dir = tempfile::tempdir().unwrap();
    let Some((redis, mut m)) = master_with_data(dir.path()).await else {
        return;
    };
    let data = tempfile::tempdir().unwrap();
    let port = redis.port.to_string();
    let args = ["--replicaof", "127.0.0.1", port.as_str()];
    let mut relis = common::spawn_binary(data.path(), &args);
    let mut r = connect(relis.addr()).await;
    let mut m3 = connect(redis.addr()).await;
    let _: () = redis::cmd("SELECT")
        .arg(3)
        .query_async(&mut m3)
        .await
        .unwrap();
    let _: () = redis::cmd("SET")
        .arg("before")
        .arg(1)
        .query_async(&mut m3)
        .await
        .unwrap();
    caught_up(&mut m, &mut r).await;
    // The link drops; the next write in database 3 comes without a SELECT.
    let _: Value = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("replica")
        .query_async(&mut m)
        .await
        .unwrap();
    let _: () = redis::cmd("SET")
        .arg("after-drop")
        .arg(1)
        .query_async(&mut m3)
        .await
        .unwrap();
    caught_up(&mut m, &mut r).await;
    relis.kill9();
    let _: () = redis::cmd("SET")
        .arg("after-kill")
        .arg(1)
        .query_async(&mut m3)
        .await
        .unwrap();
    let relis = common::spawn_binary(data.path(), &args);
    let mut r = connect(relis.addr()).await;
    caught_up(&mut m, &mut r).await;
    let stats: String = redis::cmd("INFO")
        .arg("stats")
        .query_async(&mut m)
        .await
        .unwrap();
    assert!(stats.contains("sync_full:1\r"), "{stats}");
    assert!(stats.contains("sync_partial_ok:2\r"), "{stats}");
    let _: () = redis::cmd("SELECT")
        .arg(3)
        .query_async(&mut r)
        .await
        .unwrap();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query_async(&mut r)
        .await
        .unwrap();
    let mut keys = keys;
    keys.sort();
    assert_eq!(keys, ["after-drop", "after-kill", "before"]);
    assert_eq!(snapshot(&mut r).await, snapshot(&mut m).await);
}
