//! What an operator looks at first: SLOWLOG, LATENCY, INFO's sections and fields, CLIENT LIST's
//! fields. Texts, shapes and field names are pinned to redis-server 7.0.15 (the INFO and CLIENT
//! LIST field names are compared with a live one when it is installed).

mod common;
use common::*;
use resp::Frame;
use std::time::Duration;

fn text(f: Frame) -> String {
    match f {
        Frame::Bulk(b) => String::from_utf8(b.to_vec()).unwrap(),
        Frame::Verbatim { data, .. } => String::from_utf8(data.to_vec()).unwrap(),
        f => panic!("not a string: {f:?}"),
    }
}

fn items(f: Frame) -> Vec<Frame> {
    match f {
        Frame::Array(v) => v,
        f => panic!("not an array: {f:?}"),
    }
}

fn integer(f: &Frame) -> i64 {
    match f {
        Frame::Integer(n) => *n,
        f => panic!("not an integer: {f:?}"),
    }
}

fn strings(f: &Frame) -> Vec<String> {
    match f {
        Frame::Array(v) => v
            .iter()
            .map(|b| match b {
                Frame::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
                f => panic!("not a bulk: {f:?}"),
            })
            .collect(),
        f => panic!("not an array: {f:?}"),
    }
}

/// A Lua loop that keeps the writer busy for a while (tens of milliseconds in a debug build).
const BUSY: &str = "local i = 0 while i < tonumber(ARGV[1]) do i = i + 1 end return i";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slowlog_entries_as_redis_makes_them() {
    let s = start_with(|c| c.slowlog_log_slower_than = 0).await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["SLOWLOG", "RESET"]).await, ok());
    c.cmd(&["CLIENT", "SETNAME", "me"]).await;
    let mut args: Vec<String> = vec!["RPUSH".into(), "l".into()];
    args.extend((1..=40).map(|i| i.to_string()));
    let refs: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    assert_eq!(c.cmd(&refs).await, int(40));
    let long = "x".repeat(200);
    assert_eq!(c.cmd(&["SET", "k", &long]).await, ok());
    // A failed AUTH is logged, its arguments redacted.
    c.cmd(&["AUTH", "nobody", "secret"]).await;
    // EXEC is not logged; MULTI and what EXEC ran are.
    c.cmd(&["MULTI"]).await;
    c.cmd(&["INCR", "n"]).await;
    c.cmd(&["EXEC"]).await;
    let entries = items(c.cmd(&["SLOWLOG", "GET", "-1"]).await);
    let names: Vec<String> = entries
        .iter()
        .map(|e| strings(&items(e.clone())[3])[0].to_lowercase())
        .collect();
    assert_eq!(
        names,
        ["incr", "multi", "auth", "set", "rpush", "client", "slowlog"]
    );
    let e = items(entries[4].clone());
    assert_eq!(e.len(), 6);
    let rpush = strings(&e[3]);
    assert_eq!(rpush.len(), 32);
    assert_eq!(rpush[31], "... (11 more arguments)");
    assert_eq!(rpush[30], "29");
    let local = s.addr.ip();
    let addr = text(e[4].clone());
    assert!(addr.starts_with(&format!("{local}:")), "{addr}");
    assert_eq!(text(e[5].clone()), "me");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!((integer(&e[1]) - now).abs() < 5);
    assert!(integer(&e[2]) >= 0);
    // Ids count up from the reset's own entry.
    let ids: Vec<i64> = entries
        .iter()
        .map(|e| integer(&items(e.clone())[0]))
        .collect();
    assert!(ids.windows(2).all(|w| w[0] == w[1] + 1), "{ids:?}");
    let set = strings(&items(entries[3].clone())[3]);
    assert_eq!(set[2], format!("{}... (72 more bytes)", "x".repeat(128)));
    let auth = strings(&items(entries[2].clone())[3]);
    assert_eq!(auth, ["AUTH", "(redacted)", "(redacted)"]);

    // The first GET was logged too.
    assert_eq!(items(c.cmd(&["SLOWLOG", "GET"]).await).len(), 8);
    assert_eq!(items(c.cmd(&["SLOWLOG", "GET", "2"]).await).len(), 2);
    assert_eq!(items(c.cmd(&["SLOWLOG", "GET", "0"]).await).len(), 0);
    // SLOWLOG GET itself is logged after it answers.
    assert_eq!(c.cmd(&["SLOWLOG", "LEN"]).await, int(11));
    assert_eq!(
        c.cmd(&["SLOWLOG", "GET", "-2"]).await,
        err("ERR count should be greater than or equal to -1")
    );
    assert_eq!(
        c.cmd(&["SLOWLOG", "GET", "abc"]).await,
        err("ERR count should be greater than or equal to -1")
    );
    assert_eq!(
        c.cmd(&["SLOWLOG", "GeT", "1", "2"]).await,
        err("ERR unknown subcommand or wrong number of arguments for 'GeT'. Try SLOWLOG HELP.")
    );
    assert_eq!(
        c.cmd(&["SLOWLOG", "LEN", "1"]).await,
        err("ERR wrong number of arguments for 'slowlog|len' command")
    );
    assert_eq!(
        c.cmd(&["SLOWLOG", "foo"]).await,
        err("ERR unknown subcommand 'foo'. Try SLOWLOG HELP.")
    );
    let help = items(c.cmd(&["SLOWLOG", "HELP"]).await);
    assert_eq!(
        help[0],
        simple("SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
    );
    assert_eq!(
        help[2],
        simple("    Return top <count> entries from the slowlog (default: 10, -1 mean all).")
    );
    assert_eq!(help.len(), 12);

    // slowlog-max-len trims at once; -1 turns logging off.
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "slowlog-max-len", "2"]).await,
        ok()
    );
    assert_eq!(c.cmd(&["SLOWLOG", "LEN"]).await, int(2));
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "-1"])
            .await,
        ok()
    );
    assert_eq!(c.cmd(&["SLOWLOG", "RESET"]).await, ok());
    c.cmd(&["GET", "k"]).await;
    assert_eq!(c.cmd(&["SLOWLOG", "LEN"]).await, int(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slowlog_threshold_and_scripts() {
    let s = start_with(|c| c.slowlog_log_slower_than = 20_000).await;
    let mut c = s.raw().await;
    c.cmd(&["SET", "k", "v"]).await;
    c.cmd(&["GET", "k"]).await;
    // Fast commands stay out.
    assert_eq!(c.cmd(&["SLOWLOG", "LEN"]).await, int(0));
    // A script that keeps the writer busy is logged with its own time; the command it called
    // (quick) is not.
    let busy = format!("redis.call('SET', 'x', '1') {BUSY}");
    let mut took = 0;
    let mut n = 200_000;
    while took < 30_000 {
        c.cmd(&["SLOWLOG", "RESET"]).await;
        let t = std::time::Instant::now();
        c.cmd(&["EVAL", &busy, "0", &n.to_string()]).await;
        took = t.elapsed().as_micros();
        n *= 2;
    }
    let entries = items(c.cmd(&["SLOWLOG", "GET"]).await);
    assert_eq!(entries.len(), 1, "{entries:?}");
    let e = items(entries[0].clone());
    assert_eq!(strings(&e[3])[0], "EVAL");
    let micros = integer(&e[2]) as u128;
    assert!(micros >= 20_000 && micros <= took, "{micros} of {took}");

    // With every command logged, a script's own commands show as Redis shows them.
    c.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "0"])
        .await;
    c.cmd(&["SLOWLOG", "RESET"]).await;
    c.cmd(&["EVAL", "return redis.call('SET', 'x', '2')", "0"])
        .await;
    let entries = items(c.cmd(&["SLOWLOG", "GET"]).await);
    let e = items(entries[1].clone());
    assert_eq!(strings(&e[3]), ["SET", "x", "2"]);
    assert_eq!(text(e[4].clone()), "?:0");
    assert_eq!(text(e[5].clone()), "");
    assert_eq!(strings(&items(entries[0].clone())[3])[0], "EVAL");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_command_is_timed_without_its_wait() {
    let s = start_with(|c| c.slowlog_log_slower_than = 100_000).await;
    let mut c = s.raw().await;
    let mut pusher = s.raw().await;
    // Timed out after 300 ms: Redis leaves it out of the slow log.
    assert_eq!(c.cmd(&["BLPOP", "nothing", "0.3"]).await, Frame::NullArray);
    // Served after 300 ms: its own time is short.
    c.send(&encode_command(&[b"BLPOP", b"q", b"5"])).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(pusher.cmd(&["RPUSH", "q", "v"]).await, int(1));
    assert_eq!(c.read().await.unwrap(), bulks(&["q", "v"]));
    assert_eq!(c.cmd(&["SLOWLOG", "LEN"]).await, int(0));
    let stats = text(c.cmd(&["INFO", "commandstats"]).await);
    let line = stats
        .lines()
        .find(|l| l.starts_with("cmdstat_blpop:"))
        .unwrap();
    let usec: u64 = line
        .split(',')
        .find_map(|f| f.strip_prefix("usec="))
        .unwrap()
        .parse()
        .unwrap();
    assert!(usec < 100_000, "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latency_monitor_events() {
    let s = start().await;
    let mut c = s.raw().await;
    // Off by default.
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "latency-monitor-threshold"]).await,
        bulks(&["latency-monitor-threshold", "0"])
    );
    assert!(text(c.cmd(&["LATENCY", "DOCTOR"]).await).starts_with(
        "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance."
    ));
    c.cmd(&["EVAL", BUSY, "0", "400000"]).await;
    assert_eq!(c.cmd(&["LATENCY", "LATEST"]).await, arr(vec![]));

    c.cmd(&["CONFIG", "SET", "latency-monitor-threshold", "1"])
        .await;
    assert!(text(c.cmd(&["LATENCY", "DOCTOR"]).await)
        .starts_with("Dave, no latency spike was observed"));
    // A command slower than a millisecond, and a 16 MB value whose commit is too.
    c.cmd(&["EVAL", BUSY, "0", "400000"]).await;
    let big = "v".repeat(16 << 20);
    assert_eq!(c.cmd(&["SET", "big", &big]).await, ok());
    let latest = items(c.cmd(&["LATENCY", "LATEST"]).await);
    let events: Vec<String> = latest
        .iter()
        .map(|e| text(items(e.clone())[0].clone()))
        .collect();
    assert!(events.contains(&"command".to_string()), "{events:?}");
    assert!(events.contains(&"commit".to_string()), "{events:?}");
    let cmd = latest
        .iter()
        .map(|e| items(e.clone()))
        .find(|e| text(e[0].clone()) == "command")
        .unwrap();
    assert!(integer(&cmd[2]) >= 1 && integer(&cmd[3]) >= integer(&cmd[2]));
    let history = items(c.cmd(&["LATENCY", "HISTORY", "command"]).await);
    assert!(!history.is_empty());
    assert_eq!(items(history[0].clone()).len(), 2);
    assert_eq!(c.cmd(&["LATENCY", "HISTORY", "nosuch"]).await, arr(vec![]));
    let graph = text(c.cmd(&["LATENCY", "GRAPH", "command"]).await);
    assert!(graph.starts_with("command - high "), "{graph}");
    assert!(graph.contains(&format!("\n{}\n", "-".repeat(80))));
    assert_eq!(
        c.cmd(&["LATENCY", "GRAPH", "nosuch"]).await,
        err("ERR No samples available for event 'nosuch'")
    );
    let doctor = text(c.cmd(&["LATENCY", "DOCTOR"]).await);
    assert!(doctor.starts_with("Dave, I have observed latency spikes in this Redis instance."));
    assert!(doctor.contains("1. "), "{doctor}");
    assert!(doctor.contains(" latency spikes (average "), "{doctor}");
    // No new events from here on (a checkpoint may come any time).
    c.cmd(&["CONFIG", "SET", "latency-monitor-threshold", "1000000"])
        .await;
    assert_eq!(
        c.cmd(&["LATENCY", "RESET", "COMMAND", "nosuch"]).await,
        int(1)
    );
    assert!(integer(&c.cmd(&["LATENCY", "RESET"]).await) >= events.len() as i64 - 1);
    assert_eq!(c.cmd(&["LATENCY", "LATEST"]).await, arr(vec![]));
    assert_eq!(
        c.cmd(&["LATENCY", "foo"]).await,
        err("ERR unknown subcommand 'foo'. Try LATENCY HELP.")
    );
    let help = items(c.cmd(&["LATENCY", "HELP"]).await);
    assert_eq!(help.len(), 17);
    assert_eq!(help[12], simple("HISTOGRAM [COMMAND ...]"));

    assert_eq!(
        c.cmd(&["CONFIG", "SET", "latency-monitor-threshold", "-1"])
            .await,
        err("ERR CONFIG SET failed (possibly related to argument 'latency-monitor-threshold') - argument must be between 0 and 9223372036854775807 inclusive")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latency_histogram_and_latencystats() {
    let s = start().await;
    let mut c = s.raw().await;
    for _ in 0..3 {
        c.cmd(&["SET", "a", "1"]).await;
    }
    c.cmd(&["GET", "a"]).await;
    c.cmd(&["CONFIG", "GET", "port"]).await;
    let h = c
        .cmd(&["LATENCY", "HISTOGRAM", "set", "nosuch", "CONFIG"])
        .await;
    // RESP2: the maps come flattened.
    let h = items(h);
    assert_eq!(h.len(), 4, "{h:?}");
    assert_eq!(h[0], bulk("set"));
    let set = items(h[1].clone());
    assert_eq!(set[0], bulk("calls"));
    assert_eq!(set[1], int(3));
    assert_eq!(set[2], bulk("histogram_usec"));
    let buckets = items(set[3].clone());
    assert!(buckets.len() >= 2 && buckets.len().is_multiple_of(2));
    // Cumulative: the last count is every call.
    assert_eq!(buckets[buckets.len() - 1], int(3));
    assert_eq!(h[2], bulk("config|get"));
    // A name given many times is answered as many times, as Redis does (each entry is built
    // once).
    let mut many = vec!["LATENCY", "HISTOGRAM"];
    many.extend(std::iter::repeat_n("set", 10_000));
    let h = items(c.cmd(&many).await);
    assert_eq!(h.len(), 20_000);
    assert!(h
        .chunks(2)
        .all(|e| e[0] == bulk("set") && e[1] == Frame::Array(set.clone())));

    c.cmd(&["HELLO", "3"]).await;
    match c.cmd(&["LATENCY", "HISTOGRAM", "get"]).await {
        Frame::Map(m) => {
            assert_eq!(m.len(), 1);
            assert_eq!(m[0].0, bulk("get"));
            match &m[0].1 {
                Frame::Map(fields) => {
                    assert_eq!(fields[0], (bulk("calls"), int(1)));
                    assert!(matches!(&fields[1].1, Frame::Map(b) if b.len() == 1));
                }
                f => panic!("{f:?}"),
            }
        }
        f => panic!("not a map: {f:?}"),
    }

    let stats = text(c.cmd(&["INFO", "latencystats"]).await);
    let set = stats
        .lines()
        .find(|l| l.starts_with("latency_percentiles_usec_set:"))
        .unwrap();
    let values = set.trim_start_matches("latency_percentiles_usec_set:");
    let labels: Vec<&str> = values
        .split(',')
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap();
            // Three decimals, as Redis prints them.
            assert_eq!(v.split_once('.').unwrap().1.len(), 3, "{v}");
            k
        })
        .collect();
    assert_eq!(labels, ["p50", "p99", "p99.9"]);
    c.cmd(&[
        "CONFIG",
        "SET",
        "latency-tracking-info-percentiles",
        "0 100 12.3456",
    ])
    .await;
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "latency-tracking-info-percentiles"])
            .await,
        Frame::Map(vec![(
            bulk("latency-tracking-info-percentiles"),
            bulk("0 100 12.3456")
        )])
    );
    let stats = text(c.cmd(&["INFO", "latencystats"]).await);
    assert!(
        stats.contains("latency_percentiles_usec_set:p0="),
        "{stats}"
    );
    assert!(stats.contains(",p100="), "{stats}");
    assert!(stats.contains(",p12.3456="), "{stats}");
    c.cmd(&["CONFIG", "SET", "latency-tracking-info-percentiles", ""])
        .await;
    let stats = text(c.cmd(&["INFO", "latencystats"]).await);
    assert!(
        stats.contains("latency_percentiles_usec_set:\r\n"),
        "{stats}"
    );
    for (v, e) in [
        (
            "abc",
            "Invalid latency-tracking-info-percentiles parameters",
        ),
        (
            "101",
            "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]",
        ),
        (
            "50 -1",
            "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]",
        ),
    ] {
        assert_eq!(
            c.cmd(&["CONFIG", "SET", "latency-tracking-info-percentiles", v])
                .await,
            err(&format!("ERR CONFIG SET failed (possibly related to argument 'latency-tracking-info-percentiles') - {e}"))
        );
    }

    // latency-tracking no: no new histograms; CONFIG RESETSTAT forgets them.
    c.cmd(&["CONFIG", "SET", "latency-tracking", "no"]).await;
    c.cmd(&["LPUSH", "l", "x"]).await;
    assert!(!text(c.cmd(&["INFO", "latencystats"]).await).contains("_lpush:"));
    c.cmd(&["CONFIG", "RESETSTAT"]).await;
    assert_eq!(
        text(c.cmd(&["INFO", "latencystats"]).await),
        "# Latencystats\r\n"
    );
    assert_eq!(c.cmd(&["LATENCY", "HISTOGRAM"]).await, Frame::Map(vec![]));
}

/// INFO's sections and, in each, its field names in order.
fn info_fields(info: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in info.split("\r\n") {
        if let Some(h) = line.strip_prefix("# ") {
            out.push((h.to_string(), Vec::new()));
        } else if let Some((k, _)) = line.split_once(':') {
            out.last_mut().unwrap().1.push(k.to_string());
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn info_and_client_list_fields_are_redis_s() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(redis) = spawn_redis(tmp.path()) else {
        return;
    };
    let s = start().await;
    let mut ours = s.raw().await;
    let mut theirs = Raw::connect(redis.addr()).await;
    // The same history on both, so the per-command and per-error sections name the same.
    for c in [&mut ours, &mut theirs] {
        c.cmd(&["INFO", "server"]).await;
        c.cmd(&["SET", "a", "1"]).await;
        c.cmd(&["GET", "a"]).await;
        c.cmd(&["LPOP", "a"]).await;
    }
    let ours_info = info_fields(&text(ours.cmd(&["INFO", "everything"]).await));
    let theirs_info = info_fields(&text(theirs.cmd(&["INFO", "everything"]).await));
    let sections = |v: &[(String, Vec<String>)]| v.iter().map(|s| s.0.clone()).collect::<Vec<_>>();
    assert_eq!(sections(&ours_info), sections(&theirs_info));
    for ((name, ours), (_, theirs)) in ours_info.iter().zip(&theirs_info) {
        // Relis's own fields come after Redis's.
        let first_own = ours
            .iter()
            .position(|f| f.starts_with("relis_"))
            .unwrap_or(ours.len());
        assert!(
            ours[first_own..].iter().all(|f| f.starts_with("relis_")),
            "{name}: {ours:?}"
        );
        let mut ours = ours[..first_own].to_vec();
        let mut theirs = theirs.clone();
        if matches!(
            name.as_str(),
            "Commandstats" | "Latencystats" | "Errorstats"
        ) {
            // Redis lists these in its hash table's order.
            ours.sort();
            theirs.sort();
        }
        assert_eq!(ours, theirs, "section {name}");
    }

    let names = |line: &str| -> Vec<String> {
        line.split_whitespace()
            .map(|f| f.split_once('=').unwrap().0.to_string())
            .collect()
    };
    let ours_list = text(ours.cmd(&["CLIENT", "LIST"]).await);
    let theirs_list = text(theirs.cmd(&["CLIENT", "LIST"]).await);
    assert_eq!(names(&ours_list), names(&theirs_list));
    let ours_info = text(ours.cmd(&["CLIENT", "INFO"]).await);
    let theirs_info = text(theirs.cmd(&["CLIENT", "INFO"]).await);
    assert_eq!(names(&ours_info), names(&theirs_info));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slowlog_and_latency_command_info_is_redis_s() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(redis) = spawn_redis(tmp.path()) else {
        return;
    };
    let s = start().await;
    let mut ours = s.raw().await;
    let mut theirs = Raw::connect(redis.addr()).await;
    for name in [
        "slowlog|get",
        "slowlog|len",
        "slowlog|reset",
        "slowlog|help",
        "latency|latest",
        "latency|history",
        "latency|reset",
        "latency|doctor",
        "latency|graph",
        "latency|histogram",
        "latency|help",
    ] {
        assert_eq!(
            ours.cmd(&["COMMAND", "INFO", name]).await,
            theirs.cmd(&["COMMAND", "INFO", name]).await,
            "{name}"
        );
    }
    // The same replies to the same questions, where they do not depend on timing.
    for cmd in [
        &["SLOWLOG", "HELP"][..],
        &["LATENCY", "HELP"],
        &["SLOWLOG", "GET", "-2"],
        &["SLOWLOG", "get", "1", "2"],
        &["SLOWLOG", "nosuch"],
        &["LATENCY", "nosuch"],
        &["LATENCY", "HISTORY", "nosuch"],
        &["LATENCY", "GRAPH", "nosuch"],
        &["LATENCY", "RESET", "nosuch"],
        &["LATENCY", "HISTOGRAM", "nosuch"],
        &["LATENCY", "LATEST"],
        &["LATENCY", "DOCTOR"],
        &["LATENCY", "HISTORY"],
        &["SLOWLOG", "RESET", "x"],
    ] {
        assert_eq!(ours.cmd(cmd).await, theirs.cmd(cmd).await, "{cmd:?}");
    }
}
