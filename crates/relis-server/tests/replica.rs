//! Relis as a replica of a real redis-server master (REPLICAOF): the full sync of a data set
//! with every type, then a live write load (MULTI, scripts, expiry, several databases, blocking
//! pops woken by the master's writes), the same data on both; writes refused on the replica;
//! WAIT on the master counting the replica's durable ACKs; a dropped link continuing with a
//! partial resync; REPLICAOF NO ONE keeping the data.

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

/// Every key of databases 0..4 with its type, TTL (present or not) and whole value, sorted.
async fn snapshot(c: &mut MultiplexedConnection) -> Vec<String> {
    let mut out = Vec::new();
    for db in 0..4 {
        let _: () = redis::cmd("SELECT").arg(db).query_async(c).await.unwrap();
        let mut keys: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*").query_async(c).await.unwrap();
        keys.sort();
        for k in keys {
            let t: String = redis::cmd("TYPE").arg(&k).query_async(c).await.unwrap();
            let value: Value = match t.as_str() {
                "string" => redis::cmd("GET").arg(&k).query_async(c).await.unwrap(),
                "list" => redis::cmd("LRANGE")
                    .arg(&k)
                    .arg(0)
                    .arg(-1)
                    .query_async(c)
                    .await
                    .unwrap(),
                "hash" => {
                    let mut m: Vec<(Vec<u8>, Vec<u8>)> =
                        redis::cmd("HGETALL").arg(&k).query_async(c).await.unwrap();
                    m.sort();
                    Value::Array(
                        m.into_iter()
                            .flat_map(|(f, v)| [Value::BulkString(f), Value::BulkString(v)])
                            .collect(),
                    )
                }
                "set" => {
                    let mut m: Vec<Vec<u8>> =
                        redis::cmd("SMEMBERS").arg(&k).query_async(c).await.unwrap();
                    m.sort();
                    Value::Array(m.into_iter().map(Value::BulkString).collect())
                }
                "zset" => redis::cmd("ZRANGE")
                    .arg(&k)
                    .arg(0)
                    .arg(-1)
                    .arg("WITHSCORES")
                    .query_async(c)
                    .await
                    .unwrap(),
                "stream" => redis::cmd("XRANGE")
                    .arg(&k)
                    .arg("-")
                    .arg("+")
                    .query_async(c)
                    .await
                    .unwrap(),
                other => panic!("type {other}"),
            };
            let ttl: i64 = redis::cmd("PTTL").arg(&k).query_async(c).await.unwrap();
            out.push(format!(
                "{db} {} {t} ttl:{} {value:?}",
                String::from_utf8_lossy(&k),
                ttl > 0
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
    let redis = spawn_redis_with(dir, &["--repl-diskless-sync-delay", "0"])?;
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

/// A replica killed with SIGKILL while following, restarted with `replicaof` in its settings,
/// continues from the position stored with its last committed writes (a partial resync: the
/// master counts no second full sync) and ends with the master's data.
#[tokio::test]
async fn a_killed_replica_continues_after_restart() {
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
    // Writes keep coming while the replica dies.
    let writer = tokio::spawn(async move {
        for i in 0..2000 {
            let _: () = redis::cmd("INCR")
                .arg("n")
                .query_async(&mut m)
                .await
                .unwrap();
            if i % 10 == 0 {
                let _: () = redis::cmd("RPUSH")
                    .arg("l2")
                    .arg(i)
                    .query_async(&mut m)
                    .await
                    .unwrap();
            }
        }
        m
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    relis.kill9();
    let mut m = writer.await.unwrap();
    let relis = common::spawn_binary(data.path(), &args);
    let mut r = connect(relis.addr()).await;
    caught_up(&mut m, &mut r).await;
    assert_eq!(snapshot(&mut r).await, snapshot(&mut m).await);
    let stats: String = redis::cmd("INFO")
        .arg("stats")
        .query_async(&mut m)
        .await
        .unwrap();
    assert!(stats.contains("sync_full:1\r"), "{stats}");
    assert!(stats.contains("sync_partial_ok:1\r"), "{stats}");
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
