//! MEMORY: the same replies and errors as redis-server 7.0.15 where they do not depend on how
//! the data is kept, and numbers that mean what the README says where they do.

mod common;
use common::*;
use resp::Frame;

/// The replies that must be byte for byte Redis's, RESP2 and RESP3.
const SAME: &[&[&str]] = &[
    &["MEMORY", "HELP"],
    &["MEMORY", "USAGE", "nokey"],
    &["MEMORY", "USAGE", "k", "samples"],
    &["MEMORY", "USAGE", "k", "samples", "x"],
    &["MEMORY", "USAGE", "k", "samples", "-1"],
    &["MEMORY", "USAGE", "k", "bla", "1"],
    &["MEMORY", "USAGE"],
    &["MEMORY", "PURGE"],
    &["MEMORY", "PURGE", "x"],
    &["MEMORY", "STATS", "x"],
    &["MEMORY", "NOSUCH"],
    &["MEMORY"],
];

async fn replies(addr: std::net::SocketAddr, proto: &str) -> Vec<String> {
    let mut c = Raw::connect(addr).await;
    c.cmd(&["HELLO", proto]).await;
    let mut out = Vec::new();
    for line in SAME {
        let args: Vec<&[u8]> = line.iter().map(|a| a.as_bytes()).collect();
        c.send(&encode_command(&args)).await;
        out.push(show(&c.read_raw().await.unwrap()));
    }
    out
}

/// The names MEMORY STATS gives, in order (the `db.N` entries as `db.N`).
async fn stats_names(addr: std::net::SocketAddr) -> Vec<String> {
    let mut c = Raw::connect(addr).await;
    let Frame::Array(items) = c.cmd(&["MEMORY", "STATS"]).await else {
        panic!("MEMORY STATS is a flat array in RESP2")
    };
    items
        .iter()
        .step_by(2)
        .map(|f| match f {
            Frame::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
            other => panic!("a name: {other:?}"),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_replies_match_redis() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(redis) = spawn_redis(tmp.path()) else {
        eprintln!("skipped: redis-server is not installed");
        return;
    };
    let s = start().await;
    for addr in [s.addr, redis.addr()] {
        Raw::connect(addr).await.cmd(&["SET", "k", "v"]).await;
    }
    for proto in ["2", "3"] {
        assert_eq!(
            replies(s.addr, proto).await,
            replies(redis.addr(), proto).await,
            "RESP{proto}"
        );
    }
    let (ours, theirs) = (stats_names(s.addr).await, stats_names(redis.addr()).await);
    let ours: Vec<String> = ours
        .into_iter()
        .filter(|n| !n.starts_with("relis."))
        .collect();
    assert_eq!(ours, theirs);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_usage_measures_the_key_in_the_file() {
    let s = start().await;
    let mut c = s.raw().await;
    let usage = |f: Frame| match f {
        Frame::Integer(n) => n,
        other => panic!("an integer: {other:?}"),
    };
    c.cmd(&["SET", "small", "v"]).await;
    let big = "x".repeat(100_000);
    c.cmd(&["SET", "big", &big]).await;
    let small = usage(c.cmd(&["MEMORY", "USAGE", "small"]).await);
    let large = usage(c.cmd(&["MEMORY", "USAGE", "big"]).await);
    assert!((10..200).contains(&small), "{small}");
    assert!((100_000..110_000).contains(&large), "{large}");
    // An expiry adds its index entry.
    c.cmd(&["EXPIRE", "small", "100"]).await;
    assert!(usage(c.cmd(&["MEMORY", "USAGE", "small"]).await) > small);
    for i in 0..2000 {
        c.cmd(&["HSET", "h", &format!("field:{i}"), "value"]).await;
    }
    let all = usage(c.cmd(&["MEMORY", "USAGE", "h", "SAMPLES", "0"]).await);
    let sampled = usage(c.cmd(&["MEMORY", "USAGE", "h"]).await);
    assert!((2000 * 15..2000 * 60).contains(&all), "{all}");
    assert!((all - sampled).abs() * 10 < all, "{all} vs {sampled}");
    // Another database's key is not this one's.
    c.cmd(&["SELECT", "1"]).await;
    assert_eq!(c.cmd(&["MEMORY", "USAGE", "big"]).await, Frame::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_stats_doctor_and_malloc_stats() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["MEMORY", "DOCTOR"]).await,
        bulk("Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n")
    );
    c.cmd(&["SET", "k", "v"]).await;
    c.cmd(&["SELECT", "3"]).await;
    c.cmd(&["SET", "k", "v"]).await;
    let Frame::Bulk(report) = c.cmd(&["MEMORY", "DOCTOR"]).await else {
        panic!("a bulk")
    };
    assert!(!report.starts_with(b"Hi Sam, this instance is empty"));
    assert_eq!(
        c.cmd(&["MEMORY", "MALLOC-STATS"]).await,
        bulk("Stats not supported for the current allocator")
    );
    c.cmd(&["HELLO", "3"]).await;
    let Frame::Map(stats) = c.cmd(&["MEMORY", "STATS"]).await else {
        panic!("a map in RESP3")
    };
    let get = |name: &str| {
        stats
            .iter()
            .find(|(k, _)| *k == bulk(name))
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("{name} is reported"))
    };
    assert_eq!(get("keys.count"), int(2));
    let Frame::Integer(total) = get("total.allocated") else {
        panic!()
    };
    assert!(total > 1 << 20, "{total}");
    assert!(matches!(get("dataset.percentage"), Frame::Double(_)));
    assert!(matches!(get("db.0"), Frame::Map(_)));
    assert!(matches!(get("db.3"), Frame::Map(_)));
    assert!(
        stats.iter().all(|(k, _)| *k != bulk("db.1")),
        "empty databases are left out"
    );
}

/// Sets `key:000000000000` .. `key:{n - 1}` to `value`, 500 keys per MSET.
async fn mset_keys(c: &mut Raw, n: usize, value: &str) {
    for batch in 0..n.div_ceil(500) {
        let mut args = vec!["MSET".to_string()];
        for i in batch * 500..((batch + 1) * 500).min(n) {
            args.push(format!("key:{i:012}"));
            args.push(value.to_string());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(c.cmd(&args).await, Frame::Simple("OK".into()));
    }
}

/// INFO memory says what SQLite's caches hold, within the sizes the settings give them, and
/// CONFIG SET resizes them in the running engine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn info_memory_reports_the_caches_and_config_set_resizes_them() {
    const MIB: i64 = 1 << 20;
    let s = start_with(|cfg| {
        cfg.writer_cache_size = 2 << 20;
        cfg.reader_cache_size = 1 << 20;
        cfg.readers = 2;
    })
    .await;
    let mut c = s.raw().await;
    assert_eq!(
        info_int(&mut c, "memory", "relis_writer_cache_size").await,
        2 * MIB
    );
    assert_eq!(
        info_int(&mut c, "memory", "relis_reader_cache_size").await,
        MIB
    );
    assert_eq!(info_int(&mut c, "memory", "relis_mmap_size").await, 0);
    // 20,000 keys of 100 bytes (a file of about 3 MB), then every one read back.
    let value = "x".repeat(100);
    mset_keys(&mut c, 20_000, &value).await;
    for i in (0..20_000).step_by(7) {
        assert_eq!(c.cmd(&["GET", &format!("key:{i:012}")]).await, bulk(&value));
    }
    let writer = info_int(&mut c, "memory", "relis_writer_cache_used").await;
    let readers = info_int(&mut c, "memory", "relis_reader_cache_used").await;
    let connections = info_int(&mut c, "memory", "relis_reader_connections").await;
    // Two reader threads, and the threads that read in place (the runtime's).
    assert!(connections >= 3, "{connections}");
    // The file's pages are in them, the writer's or the readers' (see below).
    assert!(
        writer > 0 && writer + readers > 2 * MIB,
        "{writer} {readers}"
    );
    // How much they hold together is bounded per process (the pool of pages is shared with
    // the other tests' servers here): relis's tests/caches.rs checks it alone in a process.
    assert_eq!(
        info_field(&mut c, "memory", "relis_reader_cache_used_human").await,
        relis_server::cmd::server::info::human(readers as u64)
    );
    assert_eq!(info_int(&mut c, "memory", "relis_mmap_resident").await, 0);

    let set = c
        .cmd(&[
            "CONFIG",
            "SET",
            "writer-cache-size",
            "1mb",
            "reader-cache-size",
            "3mb",
            "mmap-size",
            "64mb",
        ])
        .await;
    assert_eq!(set, Frame::Simple("OK".into()));
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "mmap-size"]).await,
        Frame::Array(vec![bulk("mmap-size"), bulk("67108864")])
    );
    // The engine's own figures: the sizes reached it.
    assert_eq!(
        info_int(&mut c, "memory", "relis_writer_cache_size").await,
        MIB
    );
    assert_eq!(
        info_int(&mut c, "memory", "relis_reader_cache_size").await,
        3 * MIB
    );
    assert_eq!(
        info_int(&mut c, "memory", "relis_mmap_size").await,
        64 * MIB
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "mmap-size", "3gb"]).await,
        Frame::Error("ERR CONFIG SET failed (possibly related to argument 'mmap-size') - argument must be between 0 and 2147418112 inclusive".into())
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "writer-cache-size", "100kb"]).await,
        Frame::Error("ERR CONFIG SET failed (possibly related to argument 'writer-cache-size') - argument must be between 1048576 and 9223372036854775807 inclusive".into())
    );
    assert_eq!(
        info_int(&mut c, "memory", "relis_writer_cache_size").await,
        MIB
    );
}

/// INFO memory names and counts the allocator the process allocates with: the binary's
/// mimalloc (whose figures were glibc's `mallinfo2` of an all but unused glibc heap, giving a
/// `mem_fragmentation_ratio` in the thousands, which monitoring reads as a problem), glibc's in
/// a test process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn info_memory_counts_the_allocator_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let server = spawn_binary(dir.path(), &[]);
    let mut c = Raw::connect(server.addr()).await;
    mset_keys(&mut c, 10_000, &"x".repeat(100)).await;
    let allocator = info_field(&mut c, "memory", "mem_allocator").await;
    assert!(allocator.starts_with("mimalloc-3."), "{allocator}");
    let used = info_int(&mut c, "memory", "used_memory").await;
    let allocated = info_int(&mut c, "memory", "allocator_allocated").await;
    let active = info_int(&mut c, "memory", "allocator_active").await;
    // What mimalloc holds: more than the 1 MB of values that went through it, less than the
    // resident set.
    assert!(
        allocated > 1 << 20 && allocated <= active,
        "{allocated} {active}"
    );
    assert!(active <= used, "{active} {used}");
    let ratio: f64 = info_field(&mut c, "memory", "mem_fragmentation_ratio")
        .await
        .parse()
        .unwrap();
    assert!((1.0..3.0).contains(&ratio), "{ratio}");

    // A test process allocates through glibc.
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(info_field(&mut c, "memory", "mem_allocator").await, "libc");
}
