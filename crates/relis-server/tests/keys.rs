//! The generic keys family over TCP: DEL UNLINK EXISTS TYPE KEYS SCAN RANDOMKEY RENAME RENAMENX
//! EXPIRE PEXPIRE EXPIREAT PEXPIREAT TTL PTTL EXPIRETIME PEXPIRETIME PERSIST TOUCH COPY MOVE
//! DBSIZE FLUSHDB FLUSHALL SWAPDB OBJECT. Replies are pinned as Redis 7.0.15 gives them; where
//! redis-server is installed, a differential test runs one script against both servers.

mod common;
use common::*;
use resp::Frame;
use std::collections::BTreeSet;

/// A far-future unix time in ms (year 2286), and the same in seconds.
const FAR_MS: i64 = 9_999_999_999_000;
const FAR_S: i64 = 9_999_999_999;

fn sorted(f: Frame) -> Vec<String> {
    let Frame::Array(items) = f else {
        panic!("not an array: {f:?}")
    };
    let mut v: Vec<String> = items
        .into_iter()
        .map(|i| match i {
            Frame::Bulk(b) => String::from_utf8(b.to_vec()).unwrap(),
            other => panic!("not a bulk: {other:?}"),
        })
        .collect();
    v.sort();
    v
}

fn integer(f: Frame) -> i64 {
    match f {
        Frame::Integer(n) => n,
        other => panic!("not an integer: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn del_unlink_exists_touch_type() {
    let s = start().await;
    let mut c = s.raw().await;
    for cmd in ["DEL", "UNLINK", "EXISTS", "TOUCH", "TYPE"] {
        assert_eq!(
            c.cmd(&[cmd]).await,
            err(&format!(
                "ERR wrong number of arguments for '{}' command",
                cmd.to_lowercase()
            ))
        );
    }
    assert_eq!(
        c.cmd(&["TYPE", "a", "b"]).await,
        err("ERR wrong number of arguments for 'type' command")
    );
    assert_eq!(c.cmd(&["SET", "a", "1"]).await, ok());
    assert_eq!(c.cmd(&["SET", "b", "2"]).await, ok());
    assert_eq!(c.cmd(&["EXISTS", "a", "a", "nokey", "b"]).await, int(3));
    assert_eq!(c.cmd(&["TOUCH", "a", "a", "nokey"]).await, int(2));
    assert_eq!(c.cmd(&["TYPE", "a"]).await, simple("string"));
    assert_eq!(c.cmd(&["TYPE", "nokey"]).await, simple("none"));
    assert_eq!(c.cmd(&["DEL", "a", "a", "nokey"]).await, int(1));
    assert_eq!(c.cmd(&["UNLINK", "b", "b"]).await, int(1));
    assert_eq!(c.cmd(&["EXISTS", "a", "b"]).await, int(0));
    assert_eq!(c.cmd(&["DEL", "a"]).await, int(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_dbsize_randomkey() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["RANDOMKEY"]).await, Frame::Null);
    assert_eq!(c.cmd(&["KEYS", "*"]).await, arr(vec![]));
    for k in ["hello", "hallo", "hxllo", "hllo", "heeeello", "h[llo"] {
        assert_eq!(c.cmd(&["SET", k, "v"]).await, ok());
    }
    assert_eq!(
        sorted(c.cmd(&["KEYS", "h?llo"]).await),
        ["h[llo", "hallo", "hello", "hxllo"]
    );
    assert_eq!(
        sorted(c.cmd(&["KEYS", "h*llo"]).await),
        ["h[llo", "hallo", "heeeello", "hello", "hllo", "hxllo"]
    );
    assert_eq!(
        sorted(c.cmd(&["KEYS", "h[ae]llo"]).await),
        ["hallo", "hello"]
    );
    assert_eq!(
        sorted(c.cmd(&["KEYS", "h[^e]llo"]).await),
        ["h[llo", "hallo", "hxllo"]
    );
    assert_eq!(sorted(c.cmd(&["KEYS", "h\\[llo"]).await), ["h[llo"]);
    assert_eq!(
        c.cmd(&["KEYS"]).await,
        err("ERR wrong number of arguments for 'keys' command")
    );
    assert_eq!(
        c.cmd(&["KEYS", "a", "b"]).await,
        err("ERR wrong number of arguments for 'keys' command")
    );
    assert_eq!(c.cmd(&["DBSIZE"]).await, int(6));
    assert_eq!(
        c.cmd(&["DBSIZE", "x"]).await,
        err("ERR wrong number of arguments for 'dbsize' command")
    );
    let Frame::Bulk(k) = c.cmd(&["RANDOMKEY"]).await else {
        panic!("RANDOMKEY gives a bulk")
    };
    assert_eq!(c.cmd_bytes(&[b"EXISTS", &k]).await, int(1));
    assert_eq!(
        c.cmd(&["RANDOMKEY", "x"]).await,
        err("ERR wrong number of arguments for 'randomkey' command")
    );
    // KEYS and RANDOMKEY skipping expired keys is pinned in the engine's clock-driven tests.
}

/// Runs a whole SCAN, returning every key and how many calls it took.
async fn scan_all(c: &mut Raw, opts: &[&str]) -> (Vec<String>, usize) {
    let mut cursor = "0".to_string();
    let mut keys = Vec::new();
    let mut calls = 0;
    loop {
        let mut line = vec!["SCAN", cursor.as_str()];
        line.extend_from_slice(opts);
        let Frame::Array(mut reply) = c.cmd(&line).await else {
            panic!("SCAN replies with an array")
        };
        calls += 1;
        assert_eq!(reply.len(), 2);
        let page = reply.pop().unwrap();
        let Some(Frame::Bulk(next)) = reply.pop() else {
            panic!("the cursor is a bulk")
        };
        keys.extend(sorted(page));
        cursor = String::from_utf8(next.to_vec()).unwrap();
        if cursor == "0" {
            return (keys, calls);
        }
        assert!(calls < 10_000, "the scan never ends");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_iterates_every_key_once() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["SCAN", "0"]).await,
        arr(vec![bulk("0"), arr(vec![])])
    );
    let mut want = BTreeSet::new();
    for i in 0..100 {
        let k = format!("key:{i}");
        assert_eq!(c.cmd(&["SET", &k, "v"]).await, ok());
        want.insert(k);
    }
    assert_eq!(c.cmd(&["SET", "other", "v"]).await, ok());

    let (keys, calls) = scan_all(&mut c, &["COUNT", "7"]).await;
    assert_eq!(keys.len(), 101, "no key twice");
    assert_eq!(keys.iter().cloned().collect::<BTreeSet<_>>().len(), 101);
    assert!(calls >= 101 / 7, "COUNT bounds each page");

    let (keys, _) = scan_all(&mut c, &["MATCH", "key:*", "COUNT", "10"]).await;
    assert_eq!(keys.into_iter().collect::<BTreeSet<_>>(), want);
    let (keys, _) = scan_all(&mut c, &["MATCH", "oth?r"]).await;
    assert_eq!(keys, ["other"]);
    let (keys, _) = scan_all(&mut c, &["TYPE", "STRING", "COUNT", "1000"]).await;
    assert_eq!(keys.len(), 101, "TYPE names are case-insensitive");
    let (keys, _) = scan_all(&mut c, &["TYPE", "hash"]).await;
    assert!(keys.is_empty());
    let (keys, _) = scan_all(&mut c, &["TYPE", "nosuchtype"]).await;
    assert!(keys.is_empty());

    // Keys added and removed during a scan: those present throughout are all returned.
    let mut cursor = "0".to_string();
    let mut seen = BTreeSet::new();
    let mut round = 0;
    loop {
        let Frame::Array(mut reply) = c.cmd(&["SCAN", &cursor, "COUNT", "5"]).await else {
            panic!()
        };
        seen.extend(sorted(reply.pop().unwrap()));
        let Some(Frame::Bulk(next)) = reply.pop() else {
            panic!()
        };
        cursor = String::from_utf8(next.to_vec()).unwrap();
        round += 1;
        let extra = format!("extra:{round}");
        assert_eq!(c.cmd(&["SET", &extra, "v"]).await, ok());
        assert_eq!(c.cmd(&["DEL", &extra]).await, int(1));
        if cursor == "0" {
            break;
        }
    }
    assert!(want.is_subset(&seen));

    // A cursor the server never gave out restarts the scan.
    let (first, _) = scan_all(&mut c, &["COUNT", "1000"]).await;
    let reply = c.cmd(&["SCAN", "123456", "COUNT", "1000"]).await;
    let Frame::Array(mut reply) = reply else {
        panic!()
    };
    assert_eq!(sorted(reply.pop().unwrap()), first);
    assert_eq!(reply.pop(), Some(bulk("0")));
    // An empty cursor is 0, as strtoul reads it.
    let Frame::Array(reply) = c.cmd(&["SCAN", "", "COUNT", "1000"]).await else {
        panic!()
    };
    assert_eq!(reply[0], bulk("0"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_errors() {
    let s = start().await;
    let mut c = s.raw().await;
    let invalid = err("ERR invalid cursor");
    assert_eq!(c.cmd(&["SCAN", "abc"]).await, invalid);
    assert_eq!(c.cmd(&["SCAN", " 0"]).await, invalid);
    assert_eq!(c.cmd(&["SCAN", "18446744073709551616"]).await, invalid);
    assert_eq!(c.cmd(&["SCAN", "abc", "COUNT", "0"]).await, invalid);
    assert_eq!(
        c.cmd(&["SCAN", "18446744073709551615"]).await,
        arr(vec![bulk("0"), arr(vec![])])
    );
    assert_eq!(
        c.cmd(&["SCAN", "-1"]).await,
        arr(vec![bulk("0"), arr(vec![])])
    );
    assert_eq!(
        c.cmd(&["SCAN", "0", "COUNT", "0"]).await,
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["SCAN", "0", "COUNT", "-1"]).await,
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["SCAN", "0", "COUNT", "abc"]).await,
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        c.cmd(&["SCAN", "0", "MATCH"]).await,
        err("ERR syntax error")
    );
    assert_eq!(c.cmd(&["SCAN", "0", "foo"]).await, err("ERR syntax error"));
    assert_eq!(
        c.cmd(&["SCAN"]).await,
        err("ERR wrong number of arguments for 'scan' command")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rename_and_renamenx() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["RENAME", "nokey", "b"]).await,
        err("ERR no such key")
    );
    assert_eq!(
        c.cmd(&["RENAMENX", "nokey", "b"]).await,
        err("ERR no such key")
    );
    assert_eq!(
        c.cmd(&["RENAME", "nokey", "nokey"]).await,
        err("ERR no such key")
    );
    assert_eq!(c.cmd(&["SET", "a", "1"]).await, ok());
    assert_eq!(c.cmd(&["RENAME", "a", "a"]).await, ok());
    assert_eq!(c.cmd(&["RENAMENX", "a", "a"]).await, int(0));
    assert_eq!(c.cmd(&["SET", "b", "2"]).await, ok());
    assert_eq!(c.cmd(&["RENAMENX", "a", "b"]).await, int(0));
    assert_eq!(
        c.cmd(&["PEXPIREAT", "a", &FAR_MS.to_string()]).await,
        int(1)
    );
    assert_eq!(c.cmd(&["RENAME", "a", "b"]).await, ok());
    assert_eq!(c.cmd(&["GET", "b"]).await, bulk("1"));
    assert_eq!(c.cmd(&["EXISTS", "a"]).await, int(0));
    assert_eq!(
        c.cmd(&["PEXPIRETIME", "b"]).await,
        int(FAR_MS),
        "expiry kept"
    );
    assert_eq!(c.cmd(&["RENAMENX", "b", "c"]).await, int(1));
    assert_eq!(c.cmd(&["GET", "c"]).await, bulk("1"));
    assert_eq!(
        c.cmd(&["RENAME", "c"]).await,
        err("ERR wrong number of arguments for 'rename' command")
    );
    assert_eq!(
        c.cmd(&["RENAMENX", "a", "b", "c"]).await,
        err("ERR wrong number of arguments for 'renamenx' command")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expire_options_and_errors() {
    let s = start().await;
    let mut c = s.raw().await;
    let incompatible = err("ERR NX and XX, GT or LT options at the same time are not compatible");
    let gtlt = err("ERR GT and LT options at the same time are not compatible");
    assert_eq!(c.cmd(&["SET", "a", "1"]).await, ok());
    for cmd in ["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"] {
        assert_eq!(c.cmd(&[cmd, "a", "10", "nx", "xx"]).await, incompatible);
        assert_eq!(c.cmd(&[cmd, "a", "10", "NX", "GT"]).await, incompatible);
        assert_eq!(c.cmd(&[cmd, "a", "10", "lt", "nx"]).await, incompatible);
        assert_eq!(c.cmd(&[cmd, "a", "10", "gt", "lt"]).await, gtlt);
        assert_eq!(
            c.cmd(&[cmd, "a", "10", "foo"]).await,
            err("ERR Unsupported option foo")
        );
        assert_eq!(
            c.cmd(&[cmd, "a", "abc", "foo"]).await,
            err("ERR Unsupported option foo"),
            "options are checked before the amount"
        );
        assert_eq!(
            c.cmd(&[cmd, "a", "abc"]).await,
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(
            c.cmd(&[cmd, "missing", "10", "nx", "xx"]).await,
            incompatible
        );
        assert_eq!(
            c.cmd(&[cmd, "a"]).await,
            err(&format!(
                "ERR wrong number of arguments for '{}' command",
                cmd.to_lowercase()
            ))
        );
    }
    let invalid = |cmd: &str| err(&format!("ERR invalid expire time in '{cmd}' command"));
    assert_eq!(
        c.cmd(&["EXPIRE", "a", "9223372036854775807"]).await,
        invalid("expire")
    );
    assert_eq!(
        c.cmd(&["EXPIRE", "a", "9223372036854775"]).await,
        invalid("expire")
    );
    assert_eq!(
        c.cmd(&["EXPIRE", "a", "-9223372036854775808"]).await,
        invalid("expire")
    );
    assert_eq!(
        c.cmd(&["EXPIRE", "a", "9223372036854775", "gt"]).await,
        invalid("expire")
    );
    assert_eq!(
        c.cmd(&["PEXPIRE", "a", "9223372036854775807"]).await,
        invalid("pexpire")
    );
    assert_eq!(
        c.cmd(&["EXPIREAT", "a", "9223372036854775807"]).await,
        invalid("expireat")
    );
    assert_eq!(
        c.cmd(&["EXPIREAT", "a", "-9223372036854776"]).await,
        invalid("expireat")
    );
    assert_eq!(c.cmd(&["EXPIRE", "missing", "10"]).await, int(0));
    assert_eq!(
        c.cmd(&["EXPIRE", "missing", "9223372036854775"]).await,
        invalid("expire")
    );
    // The largest absolute times are fine.
    assert_eq!(c.cmd(&["EXPIREAT", "a", "9223372036854775"]).await, int(1));
    assert_eq!(
        c.cmd(&["EXPIRETIME", "a"]).await,
        int(9_223_372_036_854_775)
    );
    assert_eq!(
        c.cmd(&["PEXPIREAT", "a", "9223372036854775807"]).await,
        int(1)
    );
    assert_eq!(c.cmd(&["PEXPIRETIME", "a"]).await, int(i64::MAX));
    assert_eq!(
        c.cmd(&["EXPIRETIME", "a"]).await,
        int(9_223_372_036_854_776)
    );
    assert_eq!(c.cmd(&["EXISTS", "a"]).await, int(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expire_conditions_and_ttls() {
    let s = start().await;
    let mut c = s.raw().await;
    for cmd in ["TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"] {
        assert_eq!(c.cmd(&[cmd, "missing"]).await, int(-2));
    }
    assert_eq!(c.cmd(&["SET", "a", "1"]).await, ok());
    for cmd in ["TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"] {
        assert_eq!(c.cmd(&[cmd, "a"]).await, int(-1));
    }
    let far = |d: i64| (FAR_MS + d).to_string();
    // Without expiry: XX and GT refuse, NX and LT set.
    assert_eq!(c.cmd(&["PEXPIREAT", "a", &far(0), "XX"]).await, int(0));
    assert_eq!(c.cmd(&["PEXPIREAT", "a", &far(0), "GT"]).await, int(0));
    assert_eq!(
        c.cmd(&["PEXPIREAT", "a", &far(0), "XX", "LT"]).await,
        int(0)
    );
    assert_eq!(
        c.cmd(&["PEXPIREAT", "a", &far(0), "nx", "nx"]).await,
        int(1)
    );
    assert_eq!(c.cmd(&["PEXPIREAT", "a", &far(1000), "NX"]).await, int(0));
    assert_eq!(c.cmd(&["PEXPIREAT", "a", &far(0), "GT"]).await, int(0));
    assert_eq!(c.cmd(&["PEXPIREAT", "a", &far(1000), "GT"]).await, int(1));
    assert_eq!(c.cmd(&["PEXPIREAT", "a", &far(1000), "LT"]).await, int(0));
    assert_eq!(
        c.cmd(&["PEXPIREAT", "a", &far(500), "LT", "XX"]).await,
        int(1)
    );
    assert_eq!(
        c.cmd(&["PEXPIREAT", "a", &far(2000), "XX", "GT"]).await,
        int(1)
    );
    assert_eq!(c.cmd(&["PEXPIRETIME", "a"]).await, int(FAR_MS + 2000));
    assert_eq!(c.cmd(&["EXPIRETIME", "a"]).await, int(FAR_S + 2));
    assert_eq!(c.cmd(&["PEXPIREAT", "a", &far(1500)]).await, int(1));
    assert_eq!(c.cmd(&["EXPIRETIME", "a"]).await, int(FAR_S + 2), "rounded");
    assert_eq!(c.cmd(&["PEXPIREAT", "a", &far(1499)]).await, int(1));
    assert_eq!(c.cmd(&["EXPIRETIME", "a"]).await, int(FAR_S + 1));
    assert_eq!(c.cmd(&["EXPIREAT", "a", &FAR_S.to_string()]).await, int(1));
    assert_eq!(c.cmd(&["PEXPIRETIME", "a"]).await, int(FAR_MS));

    // Relative forms: TTL rounds to the nearest second.
    assert_eq!(c.cmd(&["EXPIRE", "a", "100"]).await, int(1));
    assert_eq!(c.cmd(&["TTL", "a"]).await, int(100));
    let pttl = integer(c.cmd(&["PTTL", "a"]).await);
    assert!((99_000..=100_000).contains(&pttl), "{pttl}");
    assert_eq!(c.cmd(&["PEXPIRE", "a", "100000000"]).await, int(1));
    assert_eq!(c.cmd(&["TTL", "a"]).await, int(100_000));
    let now_s = integer(c.cmd(&["EXPIRETIME", "a"]).await) - 100_000;
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!((now_s - wall).abs() <= 2, "EXPIRETIME is absolute");

    assert_eq!(c.cmd(&["PERSIST", "a"]).await, int(1));
    assert_eq!(c.cmd(&["PERSIST", "a"]).await, int(0));
    assert_eq!(c.cmd(&["PERSIST", "missing"]).await, int(0));
    assert_eq!(c.cmd(&["TTL", "a"]).await, int(-1));

    // A time not in the future deletes the key and replies 1.
    assert_eq!(c.cmd(&["EXPIRE", "a", "0"]).await, int(1));
    assert_eq!(c.cmd(&["EXISTS", "a"]).await, int(0));
    for (cmd, amount) in [
        ("EXPIRE", "-1"),
        ("PEXPIRE", "-1000"),
        ("EXPIREAT", "1"),
        ("PEXPIREAT", "1"),
        ("EXPIREAT", "-9223372036854775"),
    ] {
        assert_eq!(c.cmd(&["SET", "a", "1"]).await, ok());
        assert_eq!(c.cmd(&[cmd, "a", amount]).await, int(1), "{cmd} {amount}");
        assert_eq!(c.cmd(&["EXISTS", "a"]).await, int(0));
        assert_eq!(c.cmd(&["TTL", "a"]).await, int(-2));
        assert_eq!(c.cmd(&[cmd, "a", amount]).await, int(0), "gone now");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_across_databases() {
    let s = start().await;
    let mut c = s.raw().await;
    let same = err("ERR source and destination objects are the same");
    let range = err("ERR DB index is out of range");
    assert_eq!(c.cmd(&["SET", "c", "1"]).await, ok());
    assert_eq!(
        c.cmd(&["PEXPIREAT", "c", &FAR_MS.to_string()]).await,
        int(1)
    );
    assert_eq!(c.cmd(&["COPY", "c", "d"]).await, int(1));
    assert_eq!(
        c.cmd(&["PEXPIRETIME", "d"]).await,
        int(FAR_MS),
        "expiry copied"
    );
    assert_eq!(c.cmd(&["COPY", "c", "d"]).await, int(0));
    assert_eq!(c.cmd(&["SET", "c", "2"]).await, ok());
    assert_eq!(c.cmd(&["COPY", "c", "d", "REPLACE"]).await, int(1));
    assert_eq!(c.cmd(&["GET", "d"]).await, bulk("2"));
    assert_eq!(
        c.cmd(&["TTL", "d"]).await,
        int(-1),
        "REPLACE takes the source's expiry"
    );
    assert_eq!(c.cmd(&["COPY", "c", "c"]).await, same);
    assert_eq!(c.cmd(&["COPY", "c", "c", "DB", "0"]).await, same);
    assert_eq!(c.cmd(&["COPY", "nokey", "nokey"]).await, same);
    assert_eq!(c.cmd(&["COPY", "nokey", "x"]).await, int(0));
    assert_eq!(c.cmd(&["COPY", "c", "c", "db", "1"]).await, int(1));
    assert_eq!(c.cmd(&["COPY", "c", "d", "db", "16"]).await, range);
    assert_eq!(c.cmd(&["COPY", "c", "d", "db", "-1"]).await, range);
    assert_eq!(
        c.cmd(&["COPY", "c", "d", "db", "abc"]).await,
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        c.cmd(&["COPY", "c", "d", "db", "2147483648"]).await,
        err("ERR value is out of range, value must between -2147483648 and 2147483647")
    );
    assert_eq!(
        c.cmd(&["COPY", "c", "d", "db"]).await,
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["COPY", "c", "d", "foo"]).await,
        err("ERR syntax error")
    );
    assert_eq!(c.cmd(&["COPY", "c", "d", "db", "16", "foo"]).await, range);
    assert_eq!(
        c.cmd(&["COPY", "c", "d", "foo", "db", "16"]).await,
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["COPY", "c", "d", "db", "1", "db", "2", "replace", "replace"])
            .await,
        int(1)
    );
    assert_eq!(c.cmd(&["SELECT", "2"]).await, ok());
    assert_eq!(c.cmd(&["GET", "d"]).await, bulk("2"));
    assert_eq!(c.cmd(&["SELECT", "1"]).await, ok());
    assert_eq!(c.cmd(&["GET", "c"]).await, bulk("2"));
    assert_eq!(c.cmd(&["EXISTS", "d"]).await, int(0));
    assert_eq!(
        c.cmd(&["COPY", "c"]).await,
        err("ERR wrong number of arguments for 'copy' command")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn move_between_databases() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["SET", "k", "v"]).await, ok());
    assert_eq!(
        c.cmd(&["PEXPIREAT", "k", &FAR_MS.to_string()]).await,
        int(1)
    );
    assert_eq!(
        c.cmd(&["MOVE", "k", "0"]).await,
        err("ERR source and destination objects are the same")
    );
    assert_eq!(
        c.cmd(&["MOVE", "k", "16"]).await,
        err("ERR DB index is out of range")
    );
    assert_eq!(
        c.cmd(&["MOVE", "k", "-1"]).await,
        err("ERR DB index is out of range")
    );
    assert_eq!(
        c.cmd(&["MOVE", "k", "abc"]).await,
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        c.cmd(&["MOVE", "k", "4294967297"]).await,
        err("ERR value is out of range, value must between -2147483648 and 2147483647")
    );
    assert_eq!(c.cmd(&["MOVE", "nokey", "1"]).await, int(0));
    assert_eq!(c.cmd(&["MOVE", "k", "1"]).await, int(1));
    assert_eq!(c.cmd(&["EXISTS", "k"]).await, int(0));
    assert_eq!(c.cmd(&["SET", "k", "other"]).await, ok());
    assert_eq!(c.cmd(&["MOVE", "k", "1"]).await, int(0), "target has it");
    assert_eq!(c.cmd(&["SELECT", "1"]).await, ok());
    assert_eq!(c.cmd(&["GET", "k"]).await, bulk("v"));
    assert_eq!(
        c.cmd(&["PEXPIRETIME", "k"]).await,
        int(FAR_MS),
        "expiry moved"
    );
    assert_eq!(
        c.cmd(&["MOVE", "k"]).await,
        err("ERR wrong number of arguments for 'move' command")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swapdb_flushdb_flushall() {
    let s = start().await;
    let mut c = s.raw().await;
    let mut d = s.raw().await;
    assert_eq!(c.cmd(&["SET", "zero", "0"]).await, ok());
    assert_eq!(d.cmd(&["SELECT", "1"]).await, ok());
    assert_eq!(d.cmd(&["SET", "one", "1"]).await, ok());
    assert_eq!(c.cmd(&["SET", "both", "0"]).await, ok());
    assert_eq!(d.cmd(&["SET", "both", "1"]).await, ok());
    assert_eq!(c.cmd(&["SWAPDB", "0", "1"]).await, ok());
    assert_eq!(c.cmd(&["GET", "both"]).await, bulk("1"));
    assert_eq!(d.cmd(&["GET", "both"]).await, bulk("0"));
    assert_eq!(c.cmd(&["DEL", "both"]).await, int(1));
    assert_eq!(d.cmd(&["DEL", "both"]).await, int(1));
    assert_eq!(c.cmd(&["KEYS", "*"]).await, bulks(&["one"]));
    assert_eq!(
        d.cmd(&["KEYS", "*"]).await,
        bulks(&["zero"]),
        "other clients see it"
    );
    assert_eq!(c.cmd(&["SWAPDB", "0", "0"]).await, ok());
    let range = err("ERR DB index is out of range");
    assert_eq!(c.cmd(&["SWAPDB", "0", "16"]).await, range);
    assert_eq!(c.cmd(&["SWAPDB", "16", "0"]).await, range);
    assert_eq!(c.cmd(&["SWAPDB", "-1", "0"]).await, range);
    assert_eq!(c.cmd(&["SWAPDB", "0", "-1"]).await, range);
    assert_eq!(
        c.cmd(&["SWAPDB", "abc", "0"]).await,
        err("ERR invalid first DB index")
    );
    assert_eq!(
        c.cmd(&["SWAPDB", "0", "abc"]).await,
        err("ERR invalid second DB index")
    );
    assert_eq!(
        c.cmd(&["SWAPDB", "2147483648", "0"]).await,
        err("ERR invalid first DB index")
    );
    assert_eq!(
        c.cmd(&["SWAPDB", "0"]).await,
        err("ERR wrong number of arguments for 'swapdb' command")
    );

    for cmd in ["FLUSHDB", "FLUSHALL"] {
        assert_eq!(c.cmd(&[cmd, "foo"]).await, err("ERR syntax error"));
        assert_eq!(
            c.cmd(&[cmd, "async", "sync"]).await,
            err("ERR syntax error")
        );
    }
    assert_eq!(c.cmd(&["FLUSHDB", "ASYNC"]).await, ok());
    assert_eq!(c.cmd(&["DBSIZE"]).await, int(0));
    assert_eq!(
        d.cmd(&["DBSIZE"]).await,
        int(1),
        "FLUSHDB leaves other databases"
    );
    assert_eq!(c.cmd(&["SET", "a", "1"]).await, ok());
    assert_eq!(c.cmd(&["FLUSHDB", "sync"]).await, ok());
    assert_eq!(c.cmd(&["FLUSHDB"]).await, ok());
    assert_eq!(c.cmd(&["SET", "a", "1"]).await, ok());
    assert_eq!(c.cmd(&["FLUSHALL", "SYNC"]).await, ok());
    assert_eq!(d.cmd(&["DBSIZE"]).await, int(0));
    assert_eq!(c.cmd(&["DBSIZE"]).await, int(0));
    assert_eq!(c.cmd(&["FLUSHALL"]).await, ok());
    assert_eq!(c.cmd(&["FLUSHALL", "async"]).await, ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn object_subcommands() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["SET", "a", "1"]).await, ok());
    assert_eq!(c.cmd(&["OBJECT", "ENCODING", "a"]).await, bulk("int"));
    assert_eq!(c.cmd(&["object", "refcount", "a"]).await, int(2147483647));
    for (v, enc, refcount) in [
        ("0", "int", 2147483647),
        ("9999", "int", 2147483647),
        ("10000", "int", 1),
        ("-1", "int", 1),
        ("01", "embstr", 1),
        ("12345678901234567890", "embstr", 1),
        ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "embstr", 1),
        ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "raw", 1),
    ] {
        assert_eq!(c.cmd(&["SET", "k", v]).await, ok());
        assert_eq!(c.cmd(&["OBJECT", "ENCODING", "k"]).await, bulk(enc), "{v}");
        assert_eq!(
            c.cmd(&["OBJECT", "REFCOUNT", "k"]).await,
            int(refcount),
            "{v}"
        );
    }
    assert_eq!(c.cmd(&["OBJECT", "IDLETIME", "k"]).await, int(0));
    assert_eq!(
        c.cmd(&["OBJECT", "FREQ", "k"]).await,
        err("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
    );
    for sub in ["ENCODING", "REFCOUNT", "IDLETIME", "FREQ"] {
        assert_eq!(c.cmd(&["OBJECT", sub, "nokey"]).await, Frame::Null, "{sub}");
        assert_eq!(
            c.cmd(&["OBJECT", sub]).await,
            err(&format!(
                "ERR wrong number of arguments for 'object|{}' command",
                sub.to_lowercase()
            ))
        );
        assert_eq!(
            c.cmd(&["OBJECT", sub, "a", "b"]).await,
            err(&format!(
                "ERR wrong number of arguments for 'object|{}' command",
                sub.to_lowercase()
            ))
        );
    }
    assert_eq!(
        c.cmd(&["OBJECT"]).await,
        err("ERR wrong number of arguments for 'object' command")
    );
    assert_eq!(
        c.cmd(&["OBJECT", "foo", "bar"]).await,
        err("ERR unknown subcommand 'foo'. Try OBJECT HELP.")
    );
    assert_eq!(
        c.cmd(&["OBJECT", "help", "extra"]).await,
        err("ERR wrong number of arguments for 'object|help' command")
    );
    let help = [
        "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to store the value",
        "    associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned integer is",
        "    proportional to the logarithm of the recent access frequency of the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with the specified",
        "    <key>.",
        "HELP",
        "    Prints this help.",
    ];
    assert_eq!(
        c.cmd(&["OBJECT", "HELP"]).await,
        arr(help.iter().map(|l| simple(l)).collect())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_sees_key_commands() {
    let s = start().await;
    let mut a = s.raw().await;
    let mut b = s.raw().await;
    for write in [
        vec!["EXPIRE", "k", "100"],
        vec!["PERSIST", "k"],
        vec!["RENAME", "k", "k2"],
        vec!["DEL", "k"],
        vec!["MOVE", "k", "3"],
        vec!["SWAPDB", "0", "5"],
        vec!["FLUSHALL"],
    ] {
        assert_eq!(a.cmd(&["FLUSHALL"]).await, ok());
        assert_eq!(a.cmd(&["SET", "k", "v"]).await, ok());
        assert_eq!(a.cmd(&["EXPIRE", "k", "1000"]).await, int(1));
        assert_eq!(a.cmd(&["WATCH", "k"]).await, ok());
        let reply = b.cmd(&write).await;
        assert!(!matches!(reply, Frame::Error(_)), "{write:?}: {reply:?}");
        assert_eq!(a.cmd(&["MULTI"]).await, ok());
        assert_eq!(a.cmd(&["TTL", "k"]).await, simple("QUEUED"));
        assert_eq!(a.cmd(&["EXEC"]).await, Frame::NullArray, "{write:?}");
    }
    // Inside MULTI the family runs in order.
    assert_eq!(a.cmd(&["SET", "k", "v"]).await, ok());
    assert_eq!(a.cmd(&["MULTI"]).await, ok());
    for line in [
        vec!["EXPIRE", "k", "100"],
        vec!["TTL", "k"],
        vec!["RENAME", "k", "j"],
        vec!["EXISTS", "k", "j"],
        vec!["OBJECT", "ENCODING", "j"],
    ] {
        assert_eq!(a.cmd(&line).await, simple("QUEUED"));
    }
    assert_eq!(
        a.cmd(&["EXEC"]).await,
        arr(vec![int(1), int(100), ok(), int(1), bulk("embstr")])
    );
}

/// Runs the same script against redis-server and Relis and compares every reply.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_replies_as_redis() {
    let Some(redis) = redis_server() else {
        return;
    };
    let port = free_port();
    let _redis = KillOnDrop(
        std::process::Command::new(redis)
            .args([
                "--port",
                &port.to_string(),
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start redis-server"),
    );
    wait_for_port(port);
    let s = start().await;
    let mut theirs = Raw::connect(std::net::SocketAddr::from(([127, 0, 0, 1], port))).await;
    let mut ours = s.raw().await;
    let far = FAR_MS.to_string();
    let script: Vec<Vec<&str>> = vec![
        vec!["FLUSHALL"],
        vec!["SET", "a", "1"],
        vec!["SET", "b", "hello"],
        vec!["DEL"],
        vec!["DEL", "a", "nokey", "a"],
        vec!["SET", "a", "1"],
        vec!["EXISTS", "a", "b", "a", "nokey"],
        vec!["TOUCH", "a", "b", "nokey"],
        vec!["TYPE", "a"],
        vec!["TYPE", "nokey"],
        vec!["KEYS", "a"],
        vec!["KEYS", "[ab"],
        vec!["RENAME", "nokey", "x"],
        vec!["RENAMENX", "a", "b"],
        vec!["RENAME", "a", "a"],
        vec!["RENAMENX", "a", "a"],
        vec!["EXPIRE", "a", "10", "xx", "gt"],
        vec!["EXPIRE", "a", "10", "lt", "xx"],
        vec!["EXPIRE", "a", "10", "xx", "nx"],
        vec!["EXPIRE", "a", "10", "gt", "lt"],
        vec!["EXPIRE", "a", "10", "bogus"],
        vec!["EXPIRE", "a", "x"],
        vec!["EXPIRE", "a", "9223372036854775"],
        vec!["PEXPIRE", "a", "9223372036854775000"],
        vec!["EXPIREAT", "a", "-9223372036854776"],
        vec!["PEXPIREAT", "a", &far],
        vec!["PEXPIRETIME", "a"],
        vec!["EXPIRETIME", "a"],
        vec!["PEXPIREAT", "a", &far, "gt"],
        vec!["PEXPIREAT", "a", &far, "lt"],
        vec!["PERSIST", "a"],
        vec!["PERSIST", "a"],
        vec!["TTL", "a"],
        vec!["PTTL", "nokey"],
        vec!["EXPIREAT", "a", "1"],
        vec!["EXISTS", "a"],
        vec!["COPY", "b", "b"],
        vec!["COPY", "b", "c", "db", "16", "x"],
        vec!["COPY", "b", "c", "x", "db", "16"],
        vec!["COPY", "b", "c", "db", "99999999999"],
        vec!["COPY", "b", "c"],
        vec!["COPY", "b", "c"],
        vec!["COPY", "b", "c", "replace"],
        vec!["COPY", "b", "c", "db", "1"],
        vec!["MOVE", "c", "1"],
        vec!["MOVE", "b", "2"],
        vec!["MOVE", "b", "x"],
        vec!["MOVE", "c", "0"],
        vec!["MOVE", "c", "16"],
        vec!["SWAPDB", "0", "1"],
        vec!["KEYS", "*"],
        vec!["SWAPDB", "x", "1"],
        vec!["SWAPDB", "1", "x"],
        vec!["SWAPDB", "1", "99"],
        vec!["DBSIZE"],
        vec!["SCAN", "x"],
        vec!["SCAN", "0", "count", "0"],
        vec!["SCAN", "0", "count", "x"],
        vec!["SCAN", "0", "match"],
        vec!["SCAN", "0", "type", "list"],
        vec!["SCAN", "0", "type", "STRING"],
        vec!["SET", "n", "123"],
        vec!["OBJECT", "encoding", "n"],
        vec!["OBJECT", "refcount", "n"],
        // (Not `idletime n`: Redis's LRU clock ticks once a second, so it answers 1 now and
        // then right after the SET; touch_resets_the_idle_time pins Relis's.)
        vec!["OBJECT", "idletime", "nokey"],
        vec!["OBJECT", "freq", "n"],
        vec!["OBJECT", "encoding", "nokey"],
        vec!["OBJECT", "help"],
        vec!["OBJECT", "nope"],
        vec!["OBJECT", "encoding"],
        vec!["FLUSHDB", "x"],
        vec!["FLUSHALL", "async", "x"],
        vec!["FLUSHDB", "async"],
        vec!["DBSIZE"],
        vec!["RANDOMKEY"],
        vec!["FLUSHALL", "sync"],
    ];
    for line in &script {
        let (mut want, mut got) = (theirs.cmd(line).await, ours.cmd(line).await);
        if line[0] == "KEYS" {
            // Redis lists keys in hash order, Relis in key order.
            (want, got) = (bulks_sorted(want), bulks_sorted(got));
        }
        assert_eq!(got, want, "{line:?}");
    }
}

fn bulks_sorted(f: Frame) -> Frame {
    let v = sorted(f);
    bulks(&v.iter().map(String::as_str).collect::<Vec<_>>())
}

/// Kills the reference redis-server however the test ends.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lookups_count_as_redis_counts_them() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["SET", "a", "1"]).await, ok());
    // (command, hits, misses) as redis-server 7.0 counts them.
    let table: &[(&[&str], i64, i64)] = &[
        (&["EXISTS", "a", "a", "nokey"], 2, 1),
        (&["TOUCH", "a", "nokey"], 1, 1),
        (&["TYPE", "a"], 1, 0),
        (&["TYPE", "nokey"], 0, 1),
        (&["TTL", "a"], 1, 0),
        (&["PTTL", "nokey"], 0, 1),
        (&["EXPIRETIME", "a"], 1, 0),
        (&["OBJECT", "ENCODING", "a"], 1, 0),
        (&["OBJECT", "ENCODING", "nokey"], 0, 1),
        (&["OBJECT", "FREQ", "a"], 1, 0),
        (&["COPY", "a", "b"], 1, 0),
        (&["COPY", "nokey", "c"], 0, 1),
        (&["COPY", "a", "a"], 0, 0),
        (&["RENAME", "b", "c"], 0, 0),
        (&["EXPIRE", "a", "100"], 0, 0),
        (&["PERSIST", "a"], 0, 0),
        (&["MOVE", "c", "1"], 0, 0),
        (&["DEL", "a"], 0, 0),
        (&["KEYS", "*"], 0, 0),
        (&["SCAN", "0"], 0, 0),
        (&["RANDOMKEY"], 0, 0),
        (&["DBSIZE"], 0, 0),
    ];
    for (line, hits, misses) in table {
        let (h0, m0) = keyspace_stats(&mut c).await;
        c.cmd(line).await;
        let (h1, m1) = keyspace_stats(&mut c).await;
        assert_eq!((h1 - h0, m1 - m0), (*hits, *misses), "{line:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn object_under_an_lfu_policy() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"])
            .await,
        ok()
    );
    assert_eq!(c.cmd(&["SET", "fx", "hello"]).await, ok());
    // A key just written has Redis's initial LFU counter. (Relis does not record reads, so a
    // GET does not raise it as it does in Redis.)
    assert_eq!(c.cmd(&["OBJECT", "FREQ", "fx"]).await, int(5));
    assert_eq!(
        c.cmd(&["OBJECT", "IDLETIME", "fx"]).await,
        err("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
    );
    assert_eq!(c.cmd(&["OBJECT", "FREQ", "nokey"]).await, Frame::Null);
    assert_eq!(c.cmd(&["OBJECT", "IDLETIME", "nokey"]).await, Frame::Null);
}

/// Every cursor SCAN, HSCAN, SSCAN and ZSCAN hand out is below 2^53, so a client that keeps it
/// as a JavaScript number (node-redis 4) sends back the same cursor, and its iteration ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_cursors_survive_a_javascript_number() {
    let s = start().await;
    let mut c = s.raw().await;
    // More than Redis keeps as a listpack or intset, so every scan pages.
    for i in 0..600 {
        let m = format!("m{i}");
        c.cmd(&["SET", &format!("k{i}"), "v"]).await;
        c.cmd(&["HSET", "h", &m, "v"]).await;
        c.cmd(&["SADD", "s", &m]).await;
        c.cmd(&["ZADD", "z", &i.to_string(), &m]).await;
    }
    for (cmd, key) in [
        ("SCAN", None),
        ("HSCAN", Some("h")),
        ("SSCAN", Some("s")),
        ("ZSCAN", Some("z")),
    ] {
        let mut cursor = "0".to_string();
        let (mut calls, mut seen) = (0, BTreeSet::new());
        loop {
            let mut line = vec![cmd];
            line.extend(key);
            line.extend([cursor.as_str(), "COUNT", "10"]);
            let Frame::Array(mut reply) = c.cmd(&line).await else {
                panic!("{cmd} replies with an array")
            };
            let page = sorted(reply.pop().unwrap());
            seen.extend(page.into_iter().filter(|e| e.starts_with(['k', 'm'])));
            let Some(Frame::Bulk(next)) = reply.pop() else {
                panic!("the cursor is a bulk")
            };
            let n: u64 = std::str::from_utf8(&next).unwrap().parse().unwrap();
            assert!(n < 1 << 53, "{cmd} cursor {n} is not exact as a double");
            // What a JavaScript client sends back.
            cursor = format!("{}", n as f64 as u64);
            calls += 1;
            if n == 0 {
                break;
            }
            assert!(calls < 1000, "{cmd} never ends");
        }
        assert!(calls > 2, "{cmd} pages");
        assert_eq!(seen.len(), 600, "{cmd} returns every element");
    }
}

/// TOUCH refreshes a key's access time: OBJECT IDLETIME starts again from 0, as in Redis.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn touch_resets_the_idle_time() {
    let s = start().await;
    let mut c = s.raw().await;
    c.cmd(&["SET", "k", "v"]).await;
    c.cmd(&["SET", "other", "v"]).await;
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    assert_eq!(c.cmd(&["OBJECT", "IDLETIME", "k"]).await, int(1));
    assert_eq!(c.cmd(&["TOUCH", "k", "nokey"]).await, int(1));
    assert_eq!(c.cmd(&["OBJECT", "IDLETIME", "k"]).await, int(0));
    assert_eq!(c.cmd(&["OBJECT", "IDLETIME", "other"]).await, int(1));
    // A touch in another database is another key's.
    c.cmd(&["SELECT", "1"]).await;
    c.cmd(&["TOUCH", "other"]).await;
    c.cmd(&["SELECT", "0"]).await;
    assert_eq!(c.cmd(&["OBJECT", "IDLETIME", "other"]).await, int(1));
}

/// INFO keyspace's database lines, as `db<i>:keys=..,expires=..,avg_ttl=..` without the `db`.
async fn keyspace_lines(c: &mut Raw) -> Vec<String> {
    let info = match c.cmd(&["INFO", "keyspace"]).await {
        Frame::Bulk(b) | Frame::Verbatim { data: b, .. } => String::from_utf8(b.to_vec()).unwrap(),
        f => panic!("INFO: {f:?}"),
    };
    info.lines()
        .filter_map(|l| l.strip_prefix("db"))
        .map(str::to_string)
        .collect()
}

/// DBSIZE and INFO keyspace read the counts the writer keeps (relis_key_counts): they follow a
/// MULTI whose failing command is rolled back alone, a script whose writes before its error
/// stay, a script that asks for them after its own writes (on the writer, before the commit),
/// an SQL morph that makes keys, MOVE, SWAPDB and the flushes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dbsize_and_info_keyspace_follow_every_write() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(keyspace_lines(&mut c).await, Vec::<String>::new());
    assert_eq!(c.cmd(&["SET", "a", "1"]).await, ok());
    assert_eq!(c.cmd(&["SET", "b", "1", "EX", "100"]).await, ok());
    assert_eq!(c.cmd(&["DBSIZE"]).await, int(2));
    assert_eq!(
        keyspace_lines(&mut c).await,
        ["0:keys=2,expires=1,avg_ttl=0"]
    );
    // A queued command that fails (INCR of a string that is no integer) changes nothing; the
    // others stay.
    assert_eq!(c.cmd(&["MULTI"]).await, ok());
    for cmd in [
        &["SET", "c", "x"][..],
        &["INCR", "c"],
        &["SADD", "s", "m"],
        &["EXPIRE", "s", "100"],
        &["PERSIST", "b"],
    ] {
        assert_eq!(c.cmd(cmd).await, Frame::Simple("QUEUED".into()));
    }
    assert!(matches!(c.cmd(&["EXEC"]).await, Frame::Array(_)));
    assert_eq!(c.cmd(&["DBSIZE"]).await, int(4));
    assert_eq!(
        keyspace_lines(&mut c).await,
        ["0:keys=4,expires=1,avg_ttl=0"]
    );
    // A script's writes before its error stay (as in Redis).
    assert!(matches!(
        c.cmd(&[
            "EVAL",
            "redis.call('SET', 'd', '1', 'PX', '100000') redis.call('LPUSH', 'l', 'x') error('boom')",
            "0",
        ])
        .await,
        Frame::Error(_)
    ));
    assert_eq!(c.cmd(&["DBSIZE"]).await, int(6));
    // On the writer, a script sees its own writes counted.
    assert_eq!(
        c.cmd(&[
            "EVAL",
            "redis.call('SET', 'e', '1') redis.call('DEL', 'a') redis.call('SET', 'f', '1', 'EX', '9')
             return {redis.call('DBSIZE'), redis.call('INFO', 'keyspace')}",
            "0",
        ])
        .await,
        Frame::Array(vec![
            int(7),
            Frame::Bulk("# Keyspace\r\ndb0:keys=7,expires=3,avg_ttl=0\r\n".into())
        ])
    );
    // Keys an SQL morph writes.
    assert_eq!(
        c.cmd(&[
            "SQL.TOHASH",
            "u:{id}",
            "SELECT 1 AS id, 'x' AS name UNION ALL SELECT 2, 'y'",
        ])
        .await,
        int(2)
    );
    assert_eq!(c.cmd(&["DBSIZE"]).await, int(9));
    assert_eq!(c.cmd(&["MOVE", "d", "3"]).await, int(1));
    assert_eq!(c.cmd(&["SWAPDB", "3", "5"]).await, ok());
    assert_eq!(
        keyspace_lines(&mut c).await,
        [
            "0:keys=8,expires=2,avg_ttl=0",
            "5:keys=1,expires=1,avg_ttl=0"
        ]
    );
    assert_eq!(c.cmd(&["FLUSHDB"]).await, ok());
    assert_eq!(
        keyspace_lines(&mut c).await,
        ["5:keys=1,expires=1,avg_ttl=0"]
    );
    assert_eq!(c.cmd(&["FLUSHALL"]).await, ok());
    assert_eq!(c.cmd(&["DBSIZE"]).await, int(0));
    assert_eq!(keyspace_lines(&mut c).await, Vec::<String>::new());
}
