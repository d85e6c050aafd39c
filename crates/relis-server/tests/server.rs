//! Server commands over TCP: INFO, CONFIG, COMMAND, TIME, LASTSAVE, SAVE, BGSAVE, SHUTDOWN.
//! Texts and reply shapes are pinned to redis-server 7.0.15.

mod common;
use common::*;
use resp::Frame;
use std::time::Duration;

fn text(f: Frame) -> String {
    match f {
        Frame::Bulk(b) => String::from_utf8(b.to_vec()).unwrap(),
        Frame::Verbatim { format, data } => {
            assert_eq!(&format, b"txt");
            String::from_utf8(data.to_vec()).unwrap()
        }
        f => panic!("not a string: {f:?}"),
    }
}

/// INFO's `field:value` for `field`.
fn field<'a>(info: &'a str, name: &str) -> &'a str {
    info.split("\r\n")
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .unwrap_or_else(|| panic!("no {name} in {info}"))
}

fn headers(info: &str) -> Vec<&str> {
    info.split("\r\n").filter(|l| l.starts_with('#')).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn info_layout_and_sections() {
    let s = start().await;
    let mut c = s.raw().await;
    let info = text(c.cmd(&["INFO"]).await);
    assert_eq!(
        headers(&info),
        [
            "# Server",
            "# Clients",
            "# Memory",
            "# Persistence",
            "# Stats",
            "# Replication",
            "# CPU",
            "# Modules",
            "# Errorstats",
            "# Cluster",
            "# Keyspace"
        ]
    );
    // CRLF lines, a blank line between sections, the last line ends with CRLF.
    assert!(info.starts_with("# Server\r\nredis_version:7.0.15\r\n"));
    assert!(info.contains("\r\n\r\n# Clients\r\n"));
    assert!(info.ends_with("# Keyspace\r\n"));
    assert!(!info.contains("\n\n") && !info.replace("\r\n", "").contains('\n'));
    assert_eq!(field(&info, "relis_version"), env!("CARGO_PKG_VERSION"));
    assert_eq!(field(&info, "redis_mode"), "standalone");
    assert_eq!(field(&info, "tcp_port"), s.addr.port().to_string());
    assert_eq!(field(&info, "process_id"), std::process::id().to_string());
    let run_id = s.running.as_ref().unwrap().shared.run_id.clone();
    assert_eq!(field(&info, "run_id"), run_id);
    assert_eq!(field(&info, "connected_clients"), "1");
    assert_eq!(field(&info, "blocked_clients"), "0");
    assert_eq!(field(&info, "maxclients"), "10000");
    assert!(field(&info, "used_memory").parse::<u64>().unwrap() > 0);
    assert_eq!(field(&info, "loading"), "0");
    assert_eq!(field(&info, "role"), "master");
    assert_eq!(field(&info, "connected_slaves"), "0");
    assert_eq!(field(&info, "master_replid").len(), 40);
    assert!(field(&info, "used_cpu_user").contains('.'));
    assert_eq!(field(&info, "cluster_enabled"), "0");
    assert!(field(&info, "relis_db_file").ends_with("relis.db"));

    // Sections in Redis's order whatever the order asked; unknown ones print nothing.
    let two = text(c.cmd(&["INFO", "keyspace", "SERVER"]).await);
    assert_eq!(headers(&two), ["# Server", "# Keyspace"]);
    assert_eq!(c.cmd(&["INFO", "nosuch"]).await, bulk(""));
    assert_eq!(
        raw(&mut c, &["INFO", "modules"]).await,
        show(b"$11\r\n# Modules\r\n\r\n")
    );
    let all = text(c.cmd(&["INFO", "all"]).await);
    assert_eq!(
        headers(&all),
        [
            "# Server",
            "# Clients",
            "# Memory",
            "# Persistence",
            "# Stats",
            "# Replication",
            "# CPU",
            "# Modules",
            "# Commandstats",
            "# Errorstats",
            "# Latencystats",
            "# Cluster",
            "# Keyspace"
        ]
    );
    let everything = text(c.cmd(&["INFO", "everything"]).await);
    assert_eq!(headers(&everything), headers(&all));
    let more = text(c.cmd(&["INFO", "default", "commandstats"]).await);
    assert!(headers(&more).contains(&"# Commandstats"));
    assert!(headers(&more).contains(&"# Keyspace"));

    // RESP3: a verbatim string.
    c.cmd(&["HELLO", "3"]).await;
    assert_eq!(
        raw(&mut c, &["INFO", "cluster"]).await,
        show(b"=34\r\ntxt:# Cluster\r\ncluster_enabled:0\r\n\r\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn info_keyspace_and_stats() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        raw(&mut c, &["INFO", "keyspace"]).await,
        show(b"$12\r\n# Keyspace\r\n\r\n")
    );
    c.cmd(&["SET", "a", "1"]).await;
    c.cmd(&["SET", "b", "1", "EX", "100"]).await;
    c.cmd(&["SELECT", "5"]).await;
    c.cmd(&["SET", "c", "1"]).await;
    assert_eq!(
        text(c.cmd(&["INFO", "keyspace"]).await),
        "# Keyspace\r\ndb0:keys=2,expires=1,avg_ttl=0\r\ndb5:keys=1,expires=0,avg_ttl=0\r\n"
    );

    c.cmd(&["GET", "c"]).await;
    c.cmd(&["GET", "nosuch"]).await;
    c.cmd(&["INCR", "c"]).await;
    c.cmd(&["SET", "s", "x"]).await;
    c.cmd(&["INCR", "s"]).await;
    c.cmd(&["NOSUCHCMD"]).await;
    c.cmd(&["GET"]).await;
    c.cmd(&["HELLO", "9"]).await;
    let stats = text(c.cmd(&["INFO", "stats"]).await);
    assert_eq!(field(&stats, "keyspace_hits"), "1");
    assert_eq!(field(&stats, "keyspace_misses"), "1");
    assert_eq!(field(&stats, "total_error_replies"), "4");
    assert_eq!(field(&stats, "total_connections_received"), "1");
    assert!(
        field(&stats, "total_commands_processed")
            .parse::<u64>()
            .unwrap()
            >= 13
    );
    assert!(
        field(&stats, "total_net_input_bytes")
            .parse::<u64>()
            .unwrap()
            > 100
    );
    assert_eq!(field(&stats, "rejected_connections"), "0");
    assert_eq!(field(&stats, "expired_keys"), "0");

    assert_eq!(
        text(c.cmd(&["INFO", "errorstats"]).await),
        "# Errorstats\r\nerrorstat_ERR:count=3\r\nerrorstat_NOPROTO:count=1\r\n"
    );
    let cs = text(c.cmd(&["INFO", "commandstats"]).await);
    let line = |name: &str| {
        cs.split("\r\n")
            .find(|l| l.starts_with(&format!("cmdstat_{name}:")))
            .unwrap_or_else(|| panic!("no {name} in {cs}"))
            .to_string()
    };
    assert!(
        line("incr").starts_with("cmdstat_incr:calls=2,usec="),
        "{cs}"
    );
    assert!(
        line("incr").ends_with(",rejected_calls=0,failed_calls=1"),
        "{cs}"
    );
    assert!(line("get").starts_with("cmdstat_get:calls=2,"), "{cs}");
    assert!(
        line("get").ends_with(",rejected_calls=1,failed_calls=0"),
        "{cs}"
    );
    assert!(line("hello").ends_with("failed_calls=1"), "{cs}");
    assert!(line("info").contains("usec_per_call="));
    assert!(line("select").starts_with("cmdstat_select:calls=1,"));

    // CONFIG RESETSTAT zeroes them.
    assert_eq!(c.cmd(&["CONFIG", "RESETSTAT"]).await, ok());
    let stats = text(c.cmd(&["INFO", "stats"]).await);
    assert_eq!(field(&stats, "keyspace_hits"), "0");
    assert_eq!(field(&stats, "total_error_replies"), "0");
    assert_eq!(
        text(c.cmd(&["INFO", "errorstats"]).await),
        "# Errorstats\r\n"
    );
    // Only what ran since: the INFOs above and RESETSTAT itself (counted after it ran).
    let cs = text(c.cmd(&["INFO", "commandstats"]).await);
    let names: Vec<&str> = cs
        .split("\r\n")
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| l.split(':').next().unwrap())
        .collect();
    assert_eq!(names, ["cmdstat_info", "cmdstat_config|resetstat"], "{cs}");
    assert!(cs.contains("cmdstat_info:calls=2,"), "{cs}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instantaneous_ops() {
    let s = start().await;
    let mut c = s.raw().await;
    for _ in 0..200 {
        c.cmd(&["PING"]).await;
    }
    // The sampler runs every 100 ms in the background: poll until it has seen the PINGs.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let stats = text(c.cmd(&["INFO", "stats"]).await);
        let ops: u64 = field(&stats, "instantaneous_ops_per_sec").parse().unwrap();
        assert!(field(&stats, "instantaneous_input_kbps").contains('.'));
        if ops > 0 {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{stats}");
        tokio::task::yield_now().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_get() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        raw(&mut c, &["CONFIG", "GET", "maxclients"]).await,
        show(b"*2\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n")
    );
    // A name without glob characters is echoed as given; duplicates appear once.
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "MaxClients", "MaxClients"]).await,
        bulks(&["MaxClients", "10000"])
    );
    assert_eq!(c.cmd(&["CONFIG", "GET", "nosuch"]).await, arr(vec![]));
    assert_eq!(c.cmd(&["CONFIG", "GET", "nosuch*"]).await, arr(vec![]));
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "databases", "timeout"]).await,
        bulks(&["databases", "16", "timeout", "0"])
    );
    let Frame::Array(v) = c.cmd(&["CONFIG", "GET", "MAXMEMORY*"]).await else {
        panic!()
    };
    let names: Vec<_> = v.iter().step_by(2).cloned().collect();
    assert!(names.contains(&bulk("maxmemory")) && names.contains(&bulk("maxmemory-policy")));
    let Frame::Array(v) = c.cmd(&["CONFIG", "GET", "*"]).await else {
        panic!()
    };
    for n in [
        "save",
        "appendonly",
        "dir",
        "dbfilename",
        "requirepass",
        "durability",
    ] {
        assert!(v.contains(&bulk(n)), "{n}");
    }
    assert_eq!(
        c.cmd(&["CONFIG", "GET"]).await,
        err("ERR wrong number of arguments for 'config|get' command")
    );
    // RESP3: a map.
    c.cmd(&["HELLO", "3"]).await;
    assert_eq!(
        raw(&mut c, &["CONFIG", "GET", "maxclients", "nosuch"]).await,
        show(b"%1\r\n$10\r\nmaxclients\r\n$5\r\n10000\r\n")
    );
    assert_eq!(
        raw(&mut c, &["CONFIG", "GET", "x*y"]).await,
        show(b"%0\r\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_set() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["CONFIG", "SET", "timeout", "30"]).await, ok());
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "timeout"]).await,
        bulks(&["timeout", "30"])
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "maxclients", "50", "TIMEOUT", "40"])
            .await,
        ok()
    );
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "maxclients", "timeout"]).await,
        bulks(&["maxclients", "50", "timeout", "40"])
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "foo", "1"]).await,
        err("ERR Unknown option or number of arguments for CONFIG SET - 'foo'")
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "port", "1"]).await,
        err("ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check server logs.")
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "databases", "4"]).await,
        err("ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config")
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "timeout", "abc"]).await,
        err("ERR CONFIG SET failed (possibly related to argument 'timeout') - argument couldn't be parsed into an integer")
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "maxclients", "1", "maxclients", "2"]).await,
        err("ERR CONFIG SET failed (possibly related to argument 'maxclients') - duplicate parameter")
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "maxclients", "1", "foo"]).await,
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "timeout"]).await,
        err("ERR wrong number of arguments for 'config|set' command")
    );
    // All or nothing: a bad value later in the line leaves the earlier ones unset.
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "maxclients", "77", "timeout", "x"]).await,
        err("ERR CONFIG SET failed (possibly related to argument 'timeout') - argument couldn't be parsed into an integer")
    );
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "maxclients"]).await,
        bulks(&["maxclients", "50"])
    );
    // Settings take effect: maxclients refuses the next connection.
    assert_eq!(c.cmd(&["CONFIG", "SET", "maxclients", "1"]).await, ok());
    let mut d = s.raw().await;
    assert_eq!(
        d.read().await,
        Some(err("ERR max number of clients reached"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_misc() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["CONFIG", "REWRITE"]).await,
        err("ERR The server is running without a config file")
    );
    assert_eq!(
        c.cmd(&["CONFIG", "REWRITE", "x"]).await,
        err("ERR wrong number of arguments for 'config|rewrite' command")
    );
    assert_eq!(
        c.cmd(&["CONFIG", "RESETSTAT", "x"]).await,
        err("ERR wrong number of arguments for 'config|resetstat' command")
    );
    assert_eq!(
        c.cmd(&["CONFIG", "BOGUS"]).await,
        err("ERR unknown subcommand 'BOGUS'. Try CONFIG HELP.")
    );
    assert_eq!(
        c.cmd(&["CONFIG"]).await,
        err("ERR wrong number of arguments for 'config' command")
    );
    assert_eq!(
        raw(&mut c, &["CONFIG", "HELP"]).await,
        show(b"*11\r\n+CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+GET <pattern>\r\n+    Return parameters matching the glob-like <pattern> and their values.\r\n+SET <directive> <value>\r\n+    Set the configuration <directive> to <value>.\r\n+RESETSTAT\r\n+    Reset statistics reported by the INFO command.\r\n+REWRITE\r\n+    Rewrite the configuration file.\r\n+HELP\r\n+    Prints this help.\r\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_rewrite_with_a_file() {
    use relis_server::config::Config;
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("relis.conf");
    std::fs::write(&conf, "timeout 5\n").unwrap();
    let mut cfg = Config::default();
    cfg.apply_file(&std::fs::read_to_string(&conf).unwrap())
        .unwrap();
    cfg.port = 0;
    cfg.dir = dir.path().to_path_buf();
    cfg.readers = 1;
    let db = relis_server::open_engine(&cfg).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shared = relis_server::server::Shared::new(db, cfg, Some(conf.clone()), addr);
    let task = tokio::spawn(relis_server::server::run(
        listener,
        shared.clone(),
        std::future::pending(),
    ));
    let mut c = Raw::connect(addr).await;
    assert_eq!(c.cmd(&["CONFIG", "SET", "timeout", "9"]).await, ok());
    // Settings Relis only reports are written when they are not Redis's default, under their
    // names (an old name set is written as the name).
    assert_eq!(
        c.cmd(&[
            "CONFIG",
            "SET",
            "slave-priority",
            "7",
            "save",
            "10 20 30 40",
            "notify-keyspace-events",
            "KEA"
        ])
        .await,
        ok()
    );
    assert_eq!(c.cmd(&["CONFIG", "REWRITE"]).await, ok());
    let written = std::fs::read_to_string(&conf).unwrap();
    assert!(written.lines().any(|l| l == "timeout 9"), "{written}");
    assert!(
        written.lines().any(|l| l == "replica-priority 7"),
        "{written}"
    );
    assert!(
        !written.contains("slave") && !written.contains("hz "),
        "{written}"
    );
    let mut back = Config::default();
    back.apply_file(&written).unwrap();
    assert_eq!(back.timeout, 9);
    for (name, value) in [
        ("slave-priority", "7"),
        ("save", "10 20 30 40"),
        ("notify-keyspace-events", "AKE"),
    ] {
        assert_eq!(back.get(name).as_deref(), Some(value), "{name}");
    }
    let info = text(c.cmd(&["INFO", "server"]).await);
    assert_eq!(
        field(&info, "config_file"),
        std::fs::canonicalize(&conf).unwrap().display().to_string()
    );
    shared.request_shutdown();
    let _ = task.await;
}

fn info_entry(f: &Frame) -> &[Frame] {
    match f {
        Frame::Array(v) => v,
        f => panic!("{f:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_info_and_docs() {
    let s = start().await;
    let mut c = s.raw().await;
    // Byte for byte as redis-server 7.0.15 replies for GET.
    let get_info = "*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@read\r\n+@string\r\n+@fast\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n";
    assert_eq!(
        raw(&mut c, &["COMMAND", "INFO", "get", "nosuch"]).await,
        show(format!("*2\r\n{get_info}$-1\r\n").as_bytes())
    );
    assert_eq!(
        raw(&mut c, &["COMMAND", "INFO", "CLIENT|LIST"]).await,
        show(b"*1\r\n*10\r\n$11\r\nclient|list\r\n:-2\r\n*4\r\n+admin\r\n+noscript\r\n+loading\r\n+stale\r\n:0\r\n:0\r\n:0\r\n*4\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n+@connection\r\n*1\r\n$23\r\nnondeterministic_output\r\n*0\r\n*0\r\n")
    );
    assert_eq!(
        raw(&mut c, &["COMMAND", "INFO", "hello"]).await,
        show(b"*1\r\n*10\r\n$5\r\nhello\r\n:-1\r\n*6\r\n+noscript\r\n+loading\r\n+stale\r\n+fast\r\n+no_auth\r\n+allow_busy\r\n:0\r\n:0\r\n:0\r\n*2\r\n+@fast\r\n+@connection\r\n*0\r\n*0\r\n*0\r\n")
    );
    assert_eq!(
        raw(&mut c, &["COMMAND", "INFO", "shutdown"]).await,
        show(b"*1\r\n*10\r\n$8\r\nshutdown\r\n:-1\r\n*6\r\n+admin\r\n+noscript\r\n+loading\r\n+stale\r\n+no_multi\r\n+allow_busy\r\n:0\r\n:0\r\n:0\r\n*3\r\n+@admin\r\n+@slow\r\n+@dangerous\r\n*0\r\n*0\r\n*0\r\n")
    );
    // A container lists its subcommands.
    let Frame::Array(v) = c.cmd(&["COMMAND", "INFO", "config"]).await else {
        panic!()
    };
    let e = info_entry(&v[0]);
    assert_eq!(e[0], bulk("config"));
    assert_eq!(e[1], int(-2));
    assert_eq!(e[6], arr(vec![simple("@slow")]));
    let subs: Vec<Frame> = info_entry(&e[9])
        .iter()
        .map(|s| info_entry(s)[0].clone())
        .collect();
    assert!(subs.contains(&bulk("config|get")) && subs.contains(&bulk("config|set")));
    // RESP3 uses sets.
    c.cmd(&["HELLO", "3"]).await;
    assert_eq!(
        raw(&mut c, &["COMMAND", "INFO", "get", "nosuch"]).await,
        show(b"*2\r\n*10\r\n$3\r\nget\r\n:2\r\n~2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n~3\r\n+@read\r\n+@string\r\n+@fast\r\n~0\r\n~1\r\n%3\r\n$5\r\nflags\r\n~2\r\n+RO\r\n+access\r\n$12\r\nbegin_search\r\n%2\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n%1\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n%2\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n%3\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n~0\r\n_\r\n")
    );
    // DOCS: a map of name -> map, unknown names left out.
    assert_eq!(
        raw(&mut c, &["COMMAND", "DOCS", "time", "nosuch"]).await,
        show(b"%1\r\n$4\r\ntime\r\n%4\r\n$7\r\nsummary\r\n$30\r\nReturn the current server time\r\n$5\r\nsince\r\n$5\r\n2.6.0\r\n$5\r\ngroup\r\n$6\r\nserver\r\n$10\r\ncomplexity\r\n$4\r\nO(1)\r\n")
    );
    c.cmd(&["HELLO", "2"]).await;
    let Frame::Array(docs) = c.cmd(&["COMMAND", "DOCS", "client"]).await else {
        panic!()
    };
    assert_eq!(docs[0], bulk("client"));
    let Frame::Array(m) = &docs[1] else { panic!() };
    assert_eq!(
        m[..8],
        [
            bulk("summary"),
            bulk("A container for client connection commands"),
            bulk("since"),
            bulk("2.4.0"),
            bulk("group"),
            bulk("connection"),
            bulk("complexity"),
            bulk("Depends on subcommand.")
        ]
    );
    assert_eq!(m[8], bulk("subcommands"));
    // All commands.
    let Frame::Array(all) = c.cmd(&["COMMAND", "DOCS"]).await else {
        panic!()
    };
    let Frame::Array(infos) = c.cmd(&["COMMAND"]).await else {
        panic!()
    };
    let Frame::Integer(count) = c.cmd(&["COMMAND", "COUNT"]).await else {
        panic!()
    };
    assert_eq!(all.len() as i64, 2 * count);
    assert_eq!(infos.len() as i64, count);
    let Frame::Array(info_all) = c.cmd(&["COMMAND", "INFO"]).await else {
        panic!()
    };
    assert_eq!(info_all.len() as i64, count);
    assert!(count > 20);
    assert_eq!(
        c.cmd(&["COMMAND", "COUNT", "x"]).await,
        err("ERR wrong number of arguments for 'command|count' command")
    );
    assert_eq!(
        c.cmd(&["COMMAND", "BOGUS"]).await,
        err("ERR unknown subcommand 'BOGUS'. Try COMMAND HELP.")
    );
    let Frame::Array(help) = c.cmd(&["COMMAND", "HELP"]).await else {
        panic!()
    };
    assert_eq!(help.len(), 21);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_list_and_getkeys() {
    let s = start().await;
    let mut c = s.raw().await;
    let Frame::Array(all) = c.cmd(&["COMMAND", "LIST"]).await else {
        panic!()
    };
    for n in ["get", "client", "client|list", "config|get", "command|docs"] {
        assert!(all.contains(&bulk(n)), "{n}");
    }
    let Frame::Array(cl) = c
        .cmd(&["COMMAND", "LIST", "FILTERBY", "PATTERN", "CL*"])
        .await
    else {
        panic!()
    };
    assert!(cl.contains(&bulk("client")) && cl.contains(&bulk("client|kill")));
    assert!(cl
        .iter()
        .all(|n| matches!(n, Frame::Bulk(b) if b.starts_with(b"cl"))));
    let Frame::Array(conn) = c
        .cmd(&["COMMAND", "LIST", "FILTERBY", "ACLCAT", "connection"])
        .await
    else {
        panic!()
    };
    for n in [
        "hello",
        "auth",
        "ping",
        "client|list",
        "command|docs",
        "reset",
    ] {
        assert!(conn.contains(&bulk(n)), "{n}");
    }
    assert!(!conn.contains(&bulk("get")));
    assert_eq!(
        c.cmd(&["COMMAND", "LIST", "FILTERBY", "ACLCAT", "nosuch"])
            .await,
        arr(vec![])
    );
    assert_eq!(
        c.cmd(&["COMMAND", "LIST", "FILTERBY", "MODULE", "x"]).await,
        arr(vec![])
    );
    for bad in [
        &["COMMAND", "LIST", "FILTERBY"][..],
        &["COMMAND", "LIST", "FILTERBY", "foo", "x"],
        &["COMMAND", "LIST", "FILTERBY", "PATTERN", "a", "b"],
    ] {
        assert_eq!(c.cmd(bad).await, err("ERR syntax error"), "{bad:?}");
    }

    assert_eq!(
        c.cmd(&["COMMAND", "GETKEYS", "GET", "k"]).await,
        bulks(&["k"])
    );
    assert_eq!(
        c.cmd(&["COMMAND", "GETKEYS", "SET", "a", "b"]).await,
        bulks(&["a"])
    );
    assert_eq!(
        c.cmd(&["COMMAND", "GETKEYS", "ping", "x"]).await,
        err("ERR The command has no key arguments")
    );
    assert_eq!(
        c.cmd(&["COMMAND", "GETKEYS", "nosuch", "a"]).await,
        err("ERR Invalid command specified")
    );
    assert_eq!(
        c.cmd(&["COMMAND", "GETKEYS", "get", "a", "b"]).await,
        err("ERR Invalid number of arguments specified for command")
    );
    assert_eq!(
        c.cmd(&["COMMAND", "GETKEYS", "client", "list"]).await,
        err("ERR The command has no key arguments")
    );
    assert_eq!(
        c.cmd(&["COMMAND", "GETKEYS", "get"]).await,
        err("ERR wrong number of arguments for 'command|getkeys' command")
    );
    assert_eq!(
        raw(&mut c, &["COMMAND", "GETKEYSANDFLAGS", "GET", "k"]).await,
        show(b"*1\r\n*2\r\n$1\r\nk\r\n*2\r\n+RO\r\n+access\r\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_inside_multi() {
    let s = start().await;
    let mut c = s.raw().await;
    c.cmd(&["MULTI"]).await;
    assert_eq!(c.cmd(&["COMMAND"]).await, simple("QUEUED"));
    assert_eq!(c.cmd(&["COMMAND", "COUNT"]).await, simple("QUEUED"));
    let Frame::Array(r) = c.cmd(&["EXEC"]).await else {
        panic!()
    };
    assert!(matches!(&r[0], Frame::Array(v) if v.len() > 20));
    assert!(matches!(r[1], Frame::Integer(_)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_and_lastsave() {
    let s = start().await;
    let mut c = s.raw().await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let Frame::Array(t) = c.cmd(&["TIME"]).await else {
        panic!()
    };
    let n = |f: &Frame| match f {
        Frame::Bulk(b) => std::str::from_utf8(b).unwrap().parse::<i64>().unwrap(),
        f => panic!("{f:?}"),
    };
    assert!((n(&t[0]) - now).abs() <= 2);
    assert!((0..1_000_000).contains(&n(&t[1])));
    let Frame::Integer(last) = c.cmd(&["LASTSAVE"]).await else {
        panic!()
    };
    assert!((last - now).abs() <= 5);
    assert_eq!(
        c.cmd(&["TIME", "x"]).await,
        err("ERR wrong number of arguments for 'time' command")
    );
    assert_eq!(
        c.cmd(&["LASTSAVE", "x"]).await,
        err("ERR wrong number of arguments for 'lastsave' command")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn save_and_bgsave_write_a_snapshot() {
    let s = start().await;
    let mut c = s.raw().await;
    c.cmd(&["SET", "k", "v1"]).await;
    assert_eq!(c.cmd(&["SAVE"]).await, ok());
    let snap = s.dir.path().join("relis.db.save");
    {
        let copy = relis::Db::open(&snap).unwrap();
        assert_eq!(copy.get("k").unwrap().as_deref(), Some(&b"v1"[..]));
    }
    let info = text(c.cmd(&["INFO", "persistence"]).await);
    assert_eq!(field(&info, "rdb_changes_since_last_save"), "0");
    assert_eq!(field(&info, "rdb_last_bgsave_status"), "ok");
    assert_eq!(field(&info, "rdb_saves"), "1");
    assert_eq!(field(&info, "rdb_bgsave_in_progress"), "0");

    c.cmd(&["SET", "k", "v2"]).await;
    let info = text(c.cmd(&["INFO", "persistence"]).await);
    assert_eq!(field(&info, "rdb_changes_since_last_save"), "1");
    assert_eq!(
        c.cmd(&["BGSAVE"]).await,
        simple("Background saving started")
    );
    // Wait for the background snapshot to finish.
    for _ in 0..200 {
        let info = text(c.cmd(&["INFO", "persistence"]).await);
        if field(&info, "rdb_saves") == "2" && field(&info, "rdb_bgsave_in_progress") == "0" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    {
        let copy = relis::Db::open(&snap).unwrap();
        assert_eq!(copy.get("k").unwrap().as_deref(), Some(&b"v2"[..]));
    }
    assert_eq!(
        c.cmd(&["BGSAVE", "SCHEDULE"]).await,
        simple("Background saving started")
    );
    assert_eq!(c.cmd(&["BGSAVE", "foo"]).await, err("ERR syntax error"));
    assert_eq!(
        c.cmd(&["SAVE", "x"]).await,
        err("ERR wrong number of arguments for 'save' command")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn save_of_an_in_memory_database() {
    let s = start_with(|c| c.dbfilename = ":memory:".into()).await;
    let mut c = s.raw().await;
    c.cmd(&["SET", "k", "mem"]).await;
    assert_eq!(c.cmd(&["SAVE"]).await, ok());
    let copy = relis::Db::open(s.dir.path().join("memory.db.save")).unwrap();
    assert_eq!(copy.get("k").unwrap().as_deref(), Some(&b"mem"[..]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown() {
    let mut s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["SHUTDOWN", "ABORT"]).await,
        err("ERR No shutdown in progress.")
    );
    for bad in [
        &["SHUTDOWN", "foo"][..],
        &["SHUTDOWN", "NOSAVE", "SAVE"],
        &["SHUTDOWN", "ABORT", "NOW"],
    ] {
        assert_eq!(c.cmd(bad).await, err("ERR syntax error"), "{bad:?}");
    }
    let mut other = s.raw().await;
    c.send(&encode_command(&[b"SHUTDOWN", b"NOSAVE", b"NOW"]))
        .await;
    // No reply: the connection just closes, and so do the others.
    c.expect_closed().await;
    assert!(other.closed().await);
    let running = s.running.take().unwrap();
    assert!(running.shared.is_shutting_down());
    tokio::time::timeout(Duration::from_secs(10), running.shutdown())
        .await
        .expect("the server stops");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn save_and_shutdown_refused_in_multi() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["MULTI"]).await, ok());
    let refused = err("ERR Command not allowed inside a transaction");
    assert_eq!(c.cmd(&["SAVE"]).await, refused);
    assert_eq!(c.cmd(&["SHUTDOWN"]).await, refused);
    assert_eq!(
        c.cmd(&["EXEC"]).await,
        err("EXECABORT Transaction discarded because of previous errors.")
    );
    assert_eq!(c.cmd(&["PING"]).await, simple("PONG"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_save_takes_a_snapshot() {
    let s = start().await;
    let mut c = s.raw().await;
    c.cmd(&["SET", "k", "last"]).await;
    c.send(&encode_command(&[b"SHUTDOWN", b"SAVE"])).await;
    c.expect_closed().await;
    let copy = relis::Db::open(s.dir.path().join("relis.db.save")).unwrap();
    assert_eq!(copy.get("k").unwrap().as_deref(), Some(&b"last"[..]));
}

/// `CONFIG SET loglevel` changes what the running binary logs: at `warning`, SAVE's notice
/// ("DB saved on disk") is not written; after `CONFIG SET loglevel notice` it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_set_loglevel_changes_the_running_logger() {
    if std::env::var_os("RUST_LOG").is_some() {
        // The binary would inherit it, and RUST_LOG wins over `loglevel`.
        eprintln!("RUST_LOG is set: skipping");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("relis.log");
    let log_arg = log.to_str().unwrap();
    let child = spawn_binary(dir.path(), &["--loglevel", "warning", "--logfile", log_arg]);
    let addr: std::net::SocketAddr = ([127, 0, 0, 1], child.port).into();
    let mut c = Raw::connect(addr).await;
    let saves = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .matches("DB saved on disk")
            .count()
    };
    assert_eq!(c.cmd(&["SAVE"]).await, ok());
    assert_eq!(saves(), 0);
    assert_eq!(c.cmd(&["CONFIG", "SET", "loglevel", "notice"]).await, ok());
    assert_eq!(c.cmd(&["SAVE"]).await, ok());
    assert_eq!(saves(), 1);
    assert_eq!(c.cmd(&["CONFIG", "SET", "loglevel", "warning"]).await, ok());
    assert_eq!(c.cmd(&["SAVE"]).await, ok());
    assert_eq!(saves(), 1);
}

/// What Relis refuses where a redis-server would replicate, load a module or debug a script
/// (the replies both give alike are compared with redis-server in tests/differential.rs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replication_modules_and_debugger_are_refused_clearly() {
    let s = start().await;
    let mut c = s.raw().await;
    // Relis may be a replica (tests/replica.rs): REPLICAOF answers OK and connects in the
    // background, as Redis does, even to a master that is not there.
    assert_eq!(c.cmd(&["REPLICAOF", "127.0.0.1", "6379"]).await, ok());
    assert_eq!(c.cmd(&["SLAVEOF", "localhost", "0"]).await, ok());
    assert_eq!(c.cmd(&["REPLICAOF", "NO", "ONE"]).await, ok());
    let no_sync =
        err("ERR Relis does not support replication: no replica can SYNC or PSYNC with it");
    assert_eq!(c.cmd(&["PSYNC", "?", "-1"]).await, no_sync);
    assert_eq!(c.cmd(&["SYNC"]).await, no_sync);
    // With `enable-module-command` allowing it (Redis refuses by default, and so does Relis:
    // the differential `standalone` script pins that), Relis still has no modules to load.
    let s = start_with(|c| c.set("enable-module-command", "yes").unwrap()).await;
    let mut c = s.raw().await;
    let no_modules = err("ERR Error loading the extension. Relis does not support modules.");
    assert_eq!(c.cmd(&["MODULE", "LOAD", "/x.so"]).await, no_modules);
    assert_eq!(
        c.cmd(&["MODULE", "LOADEX", "/x.so", "CONFIG", "a", "b", "ARGS", "c"])
            .await,
        no_modules
    );
    assert_eq!(
        c.cmd(&["MODULE", "UNLOAD", "foo"]).await,
        err("ERR Error unloading module: no such module with that name")
    );
    let no_debugger =
        err("ERR Relis has no Lua debugger: SCRIPT DEBUG YES and SYNC are not supported (NO is)");
    assert_eq!(c.cmd(&["SCRIPT", "DEBUG", "yes"]).await, no_debugger);
    assert_eq!(c.cmd(&["SCRIPT", "DEBUG", "SYNC"]).await, no_debugger);
    assert_eq!(c.cmd(&["SCRIPT", "DEBUG", "no"]).await, ok());
    assert_eq!(
        c.cmd(&["BGREWRITEAOF"]).await,
        simple("Background append only file rewriting started")
    );
    // ROLE: a master at offset 0 without replicas, in both protocols.
    let role = arr(vec![bulk("master"), int(0), arr(vec![])]);
    assert_eq!(c.cmd(&["ROLE"]).await, role);
    c.cmd(&["HELLO", "3"]).await;
    assert_eq!(c.cmd(&["ROLE"]).await, role);
}

/// REPLCONF ACK and GETACK from a client that is not a replica get no reply at all, as in
/// Redis; the next command's reply is the next thing on the wire.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replconf_ack_has_no_reply() {
    let s = start().await;
    let mut c = s.raw().await;
    c.send(b"REPLCONF ACK 1\r\nPING\r\nREPLCONF listening-port 1 GETACK 1\r\nECHO x\r\n")
        .await;
    c.expect_bytes(b"+PONG\r\n$1\r\nx\r\n").await;
    assert_eq!(c.cmd(&["REPLCONF", "capa", "eof"]).await, ok());
    // Inside MULTI/EXEC each command has its place in EXEC's reply.
    c.send(b"MULTI\r\nREPLCONF ACK 1\r\nEXEC\r\n").await;
    c.expect_bytes(b"+OK\r\n+QUEUED\r\n*1\r\n+OK\r\n").await;
}

/// WAIT for more replicas than 0 blocks until its timeout, as a redis-server without replicas
/// does; WAIT 1 0 blocks until CLIENT UNBLOCK (as a timeout: 0, or with ERROR the UNBLOCKED
/// error) or until the client goes (here: CLIENT KILL, which sends nothing).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_blocks_until_its_timeout() {
    let s = start().await;
    let mut c = s.raw().await;
    let t = std::time::Instant::now();
    assert_eq!(c.cmd(&["WAIT", "1", "200"]).await, int(0));
    assert!(t.elapsed() >= Duration::from_millis(200));
    assert_eq!(c.cmd(&["WAIT", "0", "0"]).await, int(0));
    let Frame::Integer(id) = c.cmd(&["CLIENT", "ID"]).await else {
        panic!()
    };
    c.send(b"WAIT 1 0\r\n").await;
    let mut admin = s.raw().await;
    // The blocked client shows the `b` flag, then is killed without a reply.
    let mut blocked = false;
    for _ in 0..100 {
        let Frame::Bulk(list) = admin.cmd(&["CLIENT", "LIST", "ID", &id.to_string()]).await else {
            panic!()
        };
        if String::from_utf8_lossy(&list).contains(" flags=b ") {
            blocked = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(blocked, "WAIT 1 0 did not block");
    // Counted as blocked, and CLIENT UNBLOCK ends it as a timeout (0 replicas) or an error.
    let Frame::Bulk(info) = admin.cmd(&["INFO", "clients"]).await else {
        panic!()
    };
    assert!(String::from_utf8_lossy(&info).contains("blocked_clients:1\r\n"));
    assert_eq!(
        admin.cmd(&["CLIENT", "UNBLOCK", &id.to_string()]).await,
        int(1)
    );
    assert_eq!(c.read().await, Some(int(0)));
    c.send(b"WAIT 1 0\r\n").await;
    let mut unblocked = false;
    for _ in 0..100 {
        let r = admin
            .cmd(&["CLIENT", "UNBLOCK", &id.to_string(), "ERROR"])
            .await;
        if r == int(1) {
            unblocked = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(unblocked);
    assert_eq!(
        c.read().await,
        Some(err("UNBLOCKED client unblocked via CLIENT UNBLOCK"))
    );
    c.send(b"WAIT 1 0\r\n").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        admin.cmd(&["CLIENT", "KILL", "ID", &id.to_string()]).await,
        int(1)
    );
    c.expect_closed().await;
}

/// LOLWUT's random drawings have Redis's shape: VERSION 6 is `rows` lines of `cols` coloured
/// cells (four grays), VERSION 5 braille lines of `cols` characters; the fixed ones are
/// compared with redis-server byte for byte in tests/differential.rs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lolwut_drawings_have_redis_shape() {
    let s = start().await;
    let mut c = s.raw().await;
    let sky = text(c.cmd(&["LOLWUT", "VERSION", "6", "30", "12"]).await);
    let (art, footer) = sky.split_at(sky.find("\nDedicated").unwrap());
    assert_eq!(
        footer,
        "\nDedicated to the 8 bit game developers of past and present.\n\
         Original 8 bit image from Plaguemon by hikikomori. Redis ver. 7.0.15\n"
    );
    let lines: Vec<&str> = art.split('\n').collect();
    assert_eq!(lines.len(), 12);
    for line in &lines {
        let cells: Vec<&str> = line.split("\x1b[0m").filter(|c| !c.is_empty()).collect();
        assert_eq!(cells.len(), 30);
        for cell in cells {
            assert!(
                ["0;30;40m", "0;90;100m", "0;37;47m", "0;97;107m"]
                    .iter()
                    .any(|ce| cell == format!("\x1b[{ce} ")),
                "{cell:?}"
            );
        }
    }
    // The sky (white) is above every building: the top row is all sky.
    assert!(lines[0]
        .split("\x1b[0m")
        .all(|c| c.is_empty() || c == "\x1b[0;97;107m "));
    let schotter = text(c.cmd(&["LOLWUT", "VERSION", "5"]).await);
    let (art, footer) = schotter.split_at(schotter.find("\nGeorg").unwrap());
    assert_eq!(
        footer,
        "\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. 7.0.15\n"
    );
    // 66 columns of 8 squares of 16 pixels; 2 + 12 * 16 + 2 pixel rows, 4 to a line: 49
    // lines, each ended by a newline.
    let lines: Vec<&str> = art.split('\n').collect();
    assert_eq!(lines.len(), 50);
    assert!(lines[..49].iter().all(|l| l.chars().count() == 66));
    assert_eq!(lines[49], "");
    assert!(art
        .chars()
        .all(|ch| ch == '\n' || ('\u{2800}'..='\u{28ff}').contains(&ch)));
}

/// Writes from clients that each wait for their reply are gathered on the network thread and
/// run as one group (`relis::Db::flush_gathered`): concurrent INCRs on one key all count, and a
/// write is answered while other clients keep the network thread busy with pipelined reads
/// (the group does not wait for the thread to go idle).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gathered_writes_all_commit_and_none_waits_for_idle() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let s = start().await;
    let mut tasks = Vec::new();
    for _ in 0..20 {
        let mut c = s.client().await;
        tasks.push(tokio::spawn(async move {
            for _ in 0..200 {
                let _: i64 = redis::cmd("INCR")
                    .arg("n")
                    .query_async(&mut c)
                    .await
                    .unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let mut c = s.client().await;
    let n: i64 = redis::cmd("GET")
        .arg("n")
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(n, 4000);

    let stop = Arc::new(AtomicBool::new(false));
    let mut readers = Vec::new();
    for _ in 0..4 {
        let mut r = s.client().await;
        let stop = stop.clone();
        readers.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let mut p = redis::pipe();
                for _ in 0..64 {
                    p.cmd("GET").arg("n");
                }
                let _: Vec<i64> = p.query_async(&mut r).await.unwrap();
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    for i in 0..50 {
        let mut cmd = redis::cmd("SET");
        cmd.arg("k").arg(i);
        tokio::time::timeout(Duration::from_secs(5), cmd.query_async::<()>(&mut c))
            .await
            .expect("a SET beside pipelined readers is answered")
            .unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        r.await.unwrap();
    }
    let k: i64 = redis::cmd("GET")
        .arg("k")
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(k, 49);
}

/// A write whose arguments are many (an LPUSH of 200,000 elements) is not gathered onto the
/// network thread even with small writes beside it to gather with: it runs on the writer
/// thread while the network thread keeps answering. One runtime thread serves both the server
/// and these clients, so a stall of the network thread shows as a gap between PING replies.
#[tokio::test(flavor = "current_thread")]
async fn a_large_write_is_not_gathered_onto_the_network_thread() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let s = start().await;
    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = Vec::new();
    for i in 0..16 {
        let mut c = s.client().await;
        let stop = stop.clone();
        writers.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let _: i64 = redis::cmd("INCR")
                    .arg(format!("n{i}"))
                    .query_async(&mut c)
                    .await
                    .unwrap();
            }
        }));
    }
    let mut big = s.client().await;
    let mut ping = s.client().await;
    let elements: Vec<u32> = (0..200_000).collect();
    for round in 1..=3i64 {
        let mut lpush = redis::cmd("LPUSH");
        lpush.arg("big").arg(&elements);
        let started = std::time::Instant::now();
        let mut pushed = std::pin::pin!(lpush.query_async::<i64>(&mut big));
        let (mut pings, mut gap) = (0, Duration::ZERO);
        let n = loop {
            let t = std::time::Instant::now();
            let p = redis::cmd("PING");
            tokio::select! {
                n = &mut pushed => break n.unwrap(),
                r = p.query_async::<String>(&mut ping) => {
                    assert_eq!(r.unwrap(), "PONG");
                    pings += 1;
                    gap = gap.max(t.elapsed());
                }
            }
        };
        let took = started.elapsed();
        assert_eq!(n, 200_000 * round);
        assert!(
            gap < took / 4 && pings >= 10,
            "round {round}: the LPUSH took {took:?}; {pings} PINGs were answered meanwhile, \
             the longest in {gap:?}"
        );
    }
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.await.unwrap();
    }
}

/// A client's long pipeline of writes goes to the engine in groups of what one read of its
/// socket brought, so another client's write waits for one group, not for the whole pipeline
/// (Redis interleaves clients every 16 KB of input). Quiet: 10-15 ms against 0.8 s for the
/// pipeline, in a debug build.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_pipeline_of_writes_does_not_hold_up_other_clients() {
    let s = start().await;
    let n = 100_000;
    let mut bulk = s.raw().await;
    let mut pipeline = Vec::new();
    for i in 0..n {
        let key = format!("bulk:{i}");
        pipeline.extend_from_slice(&encode_command(&[b"SET", key.as_bytes(), b"value"]));
    }
    let started = std::time::Instant::now();
    let loader = tokio::spawn(async move {
        bulk.send(&pipeline).await;
        for _ in 0..n {
            assert_eq!(bulk.read().await, Some(Frame::Simple("OK".into())));
        }
        started.elapsed()
    });
    let mut c = s.client().await;
    let mut slowest = Duration::ZERO;
    while !loader.is_finished() {
        let t = std::time::Instant::now();
        let () = redis::cmd("SET")
            .arg("other")
            .arg("x")
            .query_async(&mut c)
            .await
            .unwrap();
        slowest = slowest.max(t.elapsed());
    }
    let took = loader.await.unwrap();
    assert!(
        slowest < took / 8,
        "the pipeline of {n} SETs took {took:?}; a SET beside it waited up to {slowest:?}"
    );
}
