//! The string family over TCP, with replies and error texts pinned from redis-server 7.0.15.

mod common;
use bytes::Bytes;
use common::*;
use resp::Frame;

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
const NOT_INT: &str = "ERR value is not an integer or out of range";
const NOT_FLOAT: &str = "ERR value is not a valid float";

fn bulk_bytes(b: &[u8]) -> Frame {
    Frame::Bulk(Bytes::copy_from_slice(b))
}

/// A unix time in ms comfortably in the future (year 2286), for EXAT/PXAT without sleeping.
const FUTURE_MS: i64 = 9_999_999_999_000;

/// Makes `key` a key of another type than string. SET cannot, so this borrows whichever
/// collection command the server has; with none the wrong-type cases are skipped.
async fn make_non_string(c: &mut Raw, key: &str) -> bool {
    for cmd in [
        vec!["LPUSH", key, "x"],
        vec!["SADD", key, "x"],
        vec!["HSET", key, "f", "v"],
        vec!["ZADD", key, "1", "x"],
    ] {
        if let Frame::Integer(1) = c.cmd(&cmd).await {
            return true;
        }
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn getset_replaces_the_value_and_clears_the_ttl() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["GETSET", "k", "new"]).await, nil());
    assert_eq!(c.cmd(&["GETSET", "k", "newer"]).await, bulk("new"));
    assert_eq!(c.cmd(&["GET", "k"]).await, bulk("newer"));
    assert_eq!(c.cmd(&["SET", "e", "v", "EX", "100"]).await, ok());
    assert_eq!(c.cmd(&["GETSET", "e", "w"]).await, bulk("v"));
    assert_eq!(c.cmd(&["TTL", "e"]).await, int(-1));
    assert_eq!(
        c.cmd(&["GETSET", "k"]).await,
        err("ERR wrong number of arguments for 'getset' command")
    );
    if make_non_string(&mut c, "l").await {
        assert_eq!(c.cmd(&["GETSET", "l", "x"]).await, err(WRONGTYPE));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn getdel_returns_and_deletes() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["SET", "k", "v", "EX", "100"]).await, ok());
    assert_eq!(c.cmd(&["GETDEL", "k"]).await, bulk("v"));
    assert_eq!(c.cmd(&["GETDEL", "k"]).await, nil());
    assert_eq!(c.cmd(&["EXISTS", "k"]).await, int(0));
    assert_eq!(
        c.cmd(&["GETDEL", "k", "x"]).await,
        err("ERR wrong number of arguments for 'getdel' command")
    );
    if make_non_string(&mut c, "l").await {
        assert_eq!(c.cmd(&["GETDEL", "l"]).await, err(WRONGTYPE));
        assert_eq!(c.cmd(&["EXISTS", "l"]).await, int(1));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn getex_changes_the_expiry() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["GETEX", "missing"]).await, nil());
    assert_eq!(c.cmd(&["SET", "k", "v"]).await, ok());
    assert_eq!(c.cmd(&["GETEX", "k"]).await, bulk("v"));
    assert_eq!(c.cmd(&["TTL", "k"]).await, int(-1));
    assert_eq!(c.cmd(&["GETEX", "k", "EX", "100"]).await, bulk("v"));
    assert_eq!(c.cmd(&["TTL", "k"]).await, int(100));
    // One unit may repeat; the last amount wins.
    assert_eq!(
        c.cmd(&["GETEX", "k", "ex", "10", "EX", "20"]).await,
        bulk("v")
    );
    assert_eq!(c.cmd(&["TTL", "k"]).await, int(20));
    assert_eq!(c.cmd(&["GETEX", "k", "PX", "50000"]).await, bulk("v"));
    let Frame::Integer(pttl) = c.cmd(&["PTTL", "k"]).await else {
        panic!("PTTL is an integer")
    };
    assert!((49_000..=50_000).contains(&pttl), "{pttl}");
    assert_eq!(c.cmd(&["GETEX", "k", "PERSIST"]).await, bulk("v"));
    assert_eq!(c.cmd(&["TTL", "k"]).await, int(-1));
    assert_eq!(
        c.cmd(&["GETEX", "k", "PERSIST", "PERSIST"]).await,
        bulk("v")
    );
    let at = (FUTURE_MS / 1000).to_string();
    assert_eq!(c.cmd(&["GETEX", "k", "EXAT", &at]).await, bulk("v"));
    assert_eq!(c.cmd(&["EXPIRETIME", "k"]).await, int(FUTURE_MS / 1000));
    assert_eq!(
        c.cmd(&["GETEX", "k", "PXAT", &FUTURE_MS.to_string()]).await,
        bulk("v")
    );
    assert_eq!(c.cmd(&["PEXPIRETIME", "k"]).await, int(FUTURE_MS));
    assert_eq!(
        c.cmd(&["GETEX", "k", "PXAT", "9223372036854775807"]).await,
        bulk("v")
    );
    // A time already past replies with the value, then deletes the key.
    assert_eq!(c.cmd(&["GETEX", "k", "EXAT", "1"]).await, bulk("v"));
    assert_eq!(c.cmd(&["EXISTS", "k"]).await, int(0));
    assert_eq!(c.cmd(&["SET", "k", "v"]).await, ok());
    assert_eq!(c.cmd(&["GETEX", "k", "PXAT", "1"]).await, bulk("v"));
    assert_eq!(c.cmd(&["GET", "k"]).await, nil());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn getex_errors() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["SET", "k", "v"]).await, ok());
    for bad in [
        vec!["GETEX", "k", "EX"],
        vec!["GETEX", "k", "BOGUS"],
        vec!["GETEX", "k", "PERSIST", "EX", "10"],
        vec!["GETEX", "k", "EX", "10", "PERSIST"],
        vec!["GETEX", "k", "EX", "10", "PX", "10"],
        vec!["GETEX", "k", "KEEPTTL"],
        vec!["GETEX", "k", "NX"],
        vec!["GETEX", "missing", "BOGUS"],
    ] {
        assert_eq!(c.cmd(&bad).await, err("ERR syntax error"), "{bad:?}");
    }
    let invalid = err("ERR invalid expire time in 'getex' command");
    assert_eq!(c.cmd(&["GETEX", "k", "EX", "abc"]).await, err(NOT_INT));
    assert_eq!(c.cmd(&["GETEX", "k", "EX", "-1"]).await, invalid);
    assert_eq!(c.cmd(&["GETEX", "k", "EX", "0"]).await, invalid);
    assert_eq!(c.cmd(&["GETEX", "k", "PXAT", "0"]).await, invalid);
    // Overflows once "now" is added (EX) or once multiplied by 1000.
    assert_eq!(
        c.cmd(&["GETEX", "k", "EX", "9223372036854775"]).await,
        invalid
    );
    assert_eq!(
        c.cmd(&["GETEX", "k", "EX", "9223372036854776"]).await,
        invalid
    );
    assert_eq!(
        c.cmd(&["GETEX", "k", "PX", "9223372036854775807"]).await,
        invalid
    );
    // The amount is validated only after the lookup: a missing key is just nil.
    assert_eq!(c.cmd(&["GETEX", "missing", "EX", "abc"]).await, nil());
    assert_eq!(c.cmd(&["GETEX", "missing", "EX", "-1"]).await, nil());
    assert_eq!(
        c.cmd(&["TTL", "k"]).await,
        int(-1),
        "errors changed nothing"
    );
    assert_eq!(
        c.cmd(&["GETEX"]).await,
        err("ERR wrong number of arguments for 'getex' command")
    );
    if make_non_string(&mut c, "l").await {
        assert_eq!(c.cmd(&["GETEX", "l"]).await, err(WRONGTYPE));
        assert_eq!(c.cmd(&["GETEX", "l", "EX", "abc"]).await, err(WRONGTYPE));
        assert_eq!(
            c.cmd(&["GETEX", "l", "BOGUS"]).await,
            err("ERR syntax error")
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_lets_one_expiry_unit_repeat() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["SET", "k", "v", "EX", "10", "EX", "20"]).await,
        ok()
    );
    assert_eq!(c.cmd(&["TTL", "k"]).await, int(20));
    assert_eq!(
        c.cmd(&["SET", "k", "v", "PX", "100", "PX", "200000"]).await,
        ok()
    );
    assert_eq!(c.cmd(&["TTL", "k"]).await, int(200));
    assert_eq!(c.cmd(&["SET", "k", "v", "NX", "NX"]).await, nil());
    assert_eq!(c.cmd(&["SET", "k", "w", "GET", "GET"]).await, bulk("v"));
    assert_eq!(c.cmd(&["SET", "k", "v", "KEEPTTL", "KEEPTTL"]).await, ok());
    assert_eq!(
        c.cmd(&["SET", "k", "v", "PXAT", "1", "EX", "10"]).await,
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["SET", "k", "v", "PX", "100", "EX", "10"]).await,
        err("ERR syntax error")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mget_and_mset() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["MSET", "a", "1", "b", "2"]).await, ok());
    assert_eq!(
        c.cmd(&["MGET", "a", "b", "c"]).await,
        arr(vec![bulk("1"), bulk("2"), nil()])
    );
    assert_eq!(
        c.cmd(&["MSET", "a", "1", "b"]).await,
        err("ERR wrong number of arguments for 'mset' command")
    );
    assert_eq!(
        c.cmd(&["MSET", "a"]).await,
        err("ERR wrong number of arguments for 'mset' command")
    );
    assert_eq!(
        c.cmd(&["MGET"]).await,
        err("ERR wrong number of arguments for 'mget' command")
    );
    // A key named twice takes its last value; MSET clears TTLs.
    assert_eq!(c.cmd(&["SET", "e", "v", "EX", "100"]).await, ok());
    assert_eq!(c.cmd(&["MSET", "e", "w", "p", "1", "p", "2"]).await, ok());
    assert_eq!(c.cmd(&["TTL", "e"]).await, int(-1));
    assert_eq!(c.cmd(&["MGET", "e", "p"]).await, bulks(&["w", "2"]));
    if make_non_string(&mut c, "l").await {
        assert_eq!(
            c.cmd(&["MGET", "a", "l", "c"]).await,
            arr(vec![bulk("1"), nil(), nil()])
        );
        assert_eq!(c.cmd(&["MSET", "l", "s"]).await, ok());
        assert_eq!(c.cmd(&["GET", "l"]).await, bulk("s"));
    }
}

/// A long MSET: a key of another type among its pairs, a key named twice far apart, a long
/// (chunked) value, an expired key and a WATCHed key all end as one SET per pair in order
/// would leave them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mset_of_many_pairs_in_statements() {
    let s = start().await;
    let mut c = s.raw().await;
    let mut other = s.raw().await;
    let long = "x".repeat(1000);
    assert_eq!(c.cmd(&["SET", "gone", "old", "PXAT", "1"]).await, ok());
    assert_eq!(c.cmd(&["SET", "k3", "before", "EX", "100"]).await, ok());
    let other_type = make_non_string(&mut c, "k5").await;
    assert_eq!(other.cmd(&["WATCH", "k7"]).await, ok());
    let mut line: Vec<String> = vec!["MSET".into()];
    let mut want: Vec<(String, String)> = Vec::new();
    for i in 0..40 {
        let key = match i {
            // Named again in the second statement.
            35 => "k1".to_string(),
            39 => "gone".to_string(),
            _ => format!("k{i}"),
        };
        let value = match i {
            20 => long.clone(),
            _ => format!("v{i}"),
        };
        want.retain(|(k, _)| *k != key);
        want.push((key.clone(), value.clone()));
        line.push(key);
        line.push(value);
    }
    let args: Vec<&str> = line.iter().map(String::as_str).collect();
    assert_eq!(c.cmd(&args).await, ok());
    for (k, v) in &want {
        assert_eq!(c.cmd(&["GET", k]).await, bulk(v), "{k}");
    }
    assert_eq!(c.cmd(&["GET", "k1"]).await, bulk("v35"));
    assert_eq!(c.cmd(&["TTL", "k3"]).await, int(-1));
    assert_eq!(c.cmd(&["TTL", "gone"]).await, int(-1));
    if other_type {
        assert_eq!(c.cmd(&["TYPE", "k5"]).await, Frame::Simple("string".into()));
    }
    // Every key written has a new version: a transaction watching one fails.
    assert_eq!(other.cmd(&["MULTI"]).await, ok());
    assert_eq!(
        other.cmd(&["SET", "k7", "mine"]).await,
        Frame::Simple("QUEUED".into())
    );
    assert_eq!(other.cmd(&["EXEC"]).await, Frame::NullArray);
    assert_eq!(c.cmd(&["DBSIZE"]).await, int(39));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn msetnx_sets_all_or_nothing() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["MSETNX", "x", "1", "y", "2"]).await, int(1));
    assert_eq!(c.cmd(&["MSETNX", "x", "1", "z", "2"]).await, int(0));
    assert_eq!(
        c.cmd(&["MGET", "x", "y", "z"]).await,
        arr(vec![bulk("1"), bulk("2"), nil()])
    );
    assert_eq!(c.cmd(&["MSETNX", "p", "1", "p", "2"]).await, int(1));
    assert_eq!(c.cmd(&["GET", "p"]).await, bulk("2"));
    assert_eq!(
        c.cmd(&["MSETNX", "a", "1", "b"]).await,
        err("ERR wrong number of arguments for 'msetnx' command")
    );
    // An expired key does not count as existing.
    assert_eq!(c.cmd(&["SET", "gone", "v", "PXAT", "1"]).await, ok());
    assert_eq!(c.cmd(&["MSETNX", "gone", "back"]).await, int(1));
    assert_eq!(c.cmd(&["GET", "gone"]).await, bulk("back"));
    if make_non_string(&mut c, "l").await {
        assert_eq!(c.cmd(&["MSETNX", "l", "s", "q", "1"]).await, int(0));
        assert_eq!(c.cmd(&["EXISTS", "q"]).await, int(0));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn incr_family() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["INCR", "n"]).await, int(1));
    assert_eq!(c.cmd(&["INCR", "n"]).await, int(2));
    assert_eq!(c.cmd(&["INCRBY", "n", "10"]).await, int(12));
    assert_eq!(c.cmd(&["INCRBY", "n", "-20"]).await, int(-8));
    assert_eq!(c.cmd(&["DECR", "n"]).await, int(-9));
    assert_eq!(c.cmd(&["DECRBY", "n", "5"]).await, int(-14));
    assert_eq!(
        c.cmd(&["DECRBY", "n", "-9223372036854775808"]).await,
        err("ERR decrement would overflow")
    );
    assert_eq!(
        c.cmd(&["DECRBY", "n", "-9223372036854775807"]).await,
        int(9223372036854775793)
    );
    assert_eq!(c.cmd(&["GET", "n"]).await, bulk("9223372036854775793"));
    for bad in ["abc", "1.5", "+1", "01", " 1", "9223372036854775808", ""] {
        assert_eq!(c.cmd(&["INCRBY", "n", bad]).await, err(NOT_INT), "{bad:?}");
    }
    let overflow = err("ERR increment or decrement would overflow");
    assert_eq!(c.cmd(&["SET", "n", "9223372036854775807"]).await, ok());
    assert_eq!(c.cmd(&["INCR", "n"]).await, overflow);
    assert_eq!(c.cmd(&["SET", "n", "-9223372036854775808"]).await, ok());
    assert_eq!(c.cmd(&["DECR", "n"]).await, overflow);
    assert_eq!(c.cmd(&["DECRBY", "n", "1"]).await, overflow);
    assert_eq!(c.cmd(&["GET", "n"]).await, bulk("-9223372036854775808"));
    for stored in [
        "1 ",
        "00",
        "-0",
        "+1",
        "1.0",
        "123456789012345678901",
        "",
        "abc",
    ] {
        assert_eq!(c.cmd(&["SET", "n", stored]).await, ok());
        assert_eq!(c.cmd(&["INCR", "n"]).await, err(NOT_INT), "{stored:?}");
    }
    // A long (chunked) string is no integer; an expired counter starts again from 0.
    assert_eq!(c.cmd(&["SET", "n", &"1".repeat(1000)]).await, ok());
    assert_eq!(c.cmd(&["INCR", "n"]).await, err(NOT_INT));
    assert_eq!(c.cmd(&["SET", "n", "41", "PXAT", "1"]).await, ok());
    assert_eq!(c.cmd(&["INCR", "n"]).await, int(1));
    assert_eq!(c.cmd(&["TTL", "n"]).await, int(-1));
    // The TTL survives.
    assert_eq!(c.cmd(&["SET", "e", "1", "EX", "100"]).await, ok());
    assert_eq!(c.cmd(&["INCR", "e"]).await, int(2));
    assert_eq!(c.cmd(&["TTL", "e"]).await, int(100));
    assert_eq!(
        c.cmd(&["INCR", "a", "b"]).await,
        err("ERR wrong number of arguments for 'incr' command")
    );
    assert_eq!(
        c.cmd(&["DECRBY", "a"]).await,
        err("ERR wrong number of arguments for 'decrby' command")
    );
    if make_non_string(&mut c, "l").await {
        assert_eq!(c.cmd(&["INCR", "l"]).await, err(WRONGTYPE));
        assert_eq!(c.cmd(&["DECRBY", "l", "1"]).await, err(WRONGTYPE));
        // The amount is checked before the key.
        assert_eq!(c.cmd(&["INCRBY", "l", "x"]).await, err(NOT_INT));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn incrbyfloat_in_long_double() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["INCRBYFLOAT", "f", "10.5"]).await, bulk("10.5"));
    assert_eq!(c.cmd(&["INCRBYFLOAT", "f", "0.1"]).await, bulk("10.6"));
    assert_eq!(
        c.cmd(&["INCRBYFLOAT", "f", "-5e3"]).await,
        bulk("-4989.39999999999999991")
    );
    assert_eq!(c.cmd(&["GET", "f"]).await, bulk("-4989.39999999999999991"));
    assert_eq!(c.cmd(&["INCRBYFLOAT", "f", "abc"]).await, err(NOT_FLOAT));
    assert_eq!(c.cmd(&["INCRBYFLOAT", "f", "nan"]).await, err(NOT_FLOAT));
    assert_eq!(c.cmd(&["INCRBYFLOAT", "f", " 1"]).await, err(NOT_FLOAT));
    assert_eq!(
        c.cmd(&["INCRBYFLOAT", "f", "inf"]).await,
        err("ERR increment would produce NaN or Infinity")
    );
    assert_eq!(c.cmd(&["SET", "f", "abc"]).await, ok());
    assert_eq!(c.cmd(&["INCRBYFLOAT", "f", "1"]).await, err(NOT_FLOAT));
    assert_eq!(c.cmd(&["SET", "f", "1"]).await, ok());
    assert_eq!(c.cmd(&["INCRBYFLOAT", "f", "0x10"]).await, bulk("17"));
    assert_eq!(c.cmd(&["SET", "f", "5.0e3"]).await, ok());
    assert_eq!(c.cmd(&["INCRBYFLOAT", "f", "0"]).await, bulk("5000"));
    assert_eq!(c.cmd(&["SET", "g", "3"]).await, ok());
    assert_eq!(c.cmd(&["INCRBYFLOAT", "g", "1.1"]).await, bulk("4.1"));
    assert_eq!(c.cmd(&["INCRBYFLOAT", "h", "-0.0"]).await, bulk("0"));
    assert_eq!(
        c.cmd(&["INCRBYFLOAT", "h2", "1.0000000000000000000001"])
            .await,
        bulk("1")
    );
    // Beyond double range, still within long double.
    assert_eq!(
        c.cmd(&["INCRBYFLOAT", "big", "1e400"]).await,
        bulk(concat!(
            "10000000000000000000281880683947586514586453433629052038625910693539685534008629862",
            "03936399484832416052209405392731761620029582277725925573402382897659334066101779744",
            "74345461739178624481166749717237789438243915933380474706750262466844013592375136038",
            "30343735485505244955964979021825038280091068414947402456898653040951017512658092615",
            "827588920183472511643316591362664138176309734806343732497430221946880"
        ))
    );
    assert_eq!(c.cmd(&["SET", "z", "1e5000"]).await, ok());
    assert_eq!(c.cmd(&["INCRBYFLOAT", "z", "1"]).await, err(NOT_FLOAT));
    assert_eq!(
        c.cmd(&["INCRBYFLOAT", "z2", "1e-5000"]).await,
        err(NOT_FLOAT)
    );
    assert_eq!(c.cmd(&["SET", "e", "1", "EX", "100"]).await, ok());
    assert_eq!(c.cmd(&["INCRBYFLOAT", "e", "1.5"]).await, bulk("2.5"));
    assert_eq!(c.cmd(&["TTL", "e"]).await, int(100));
    if make_non_string(&mut c, "l").await {
        // The type is checked before the increment.
        assert_eq!(c.cmd(&["INCRBYFLOAT", "l", "x"]).await, err(WRONGTYPE));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn append_and_strlen() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["STRLEN", "ap"]).await, int(0));
    assert_eq!(c.cmd(&["APPEND", "ap", "hello"]).await, int(5));
    assert_eq!(c.cmd(&["APPEND", "ap", " world"]).await, int(11));
    assert_eq!(c.cmd(&["GET", "ap"]).await, bulk("hello world"));
    assert_eq!(c.cmd(&["APPEND", "ap", ""]).await, int(11));
    assert_eq!(c.cmd(&["STRLEN", "ap"]).await, int(11));
    // Appending nothing still creates the key.
    assert_eq!(c.cmd(&["APPEND", "new", ""]).await, int(0));
    assert_eq!(c.cmd(&["EXISTS", "new"]).await, int(1));
    assert_eq!(c.cmd(&["STRLEN", "new"]).await, int(0));
    assert_eq!(c.cmd(&["SET", "i", "12345"]).await, ok());
    assert_eq!(c.cmd(&["STRLEN", "i"]).await, int(5));
    assert_eq!(c.cmd(&["APPEND", "i", "6"]).await, int(6));
    assert_eq!(c.cmd(&["INCR", "i"]).await, int(123457));
    assert_eq!(c.cmd(&["SET", "e", "v", "EX", "100"]).await, ok());
    assert_eq!(c.cmd(&["APPEND", "e", "x"]).await, int(2));
    assert_eq!(c.cmd(&["TTL", "e"]).await, int(100));
    assert_eq!(
        c.cmd(&["STRLEN", "a", "b"]).await,
        err("ERR wrong number of arguments for 'strlen' command")
    );
    if make_non_string(&mut c, "l").await {
        assert_eq!(c.cmd(&["APPEND", "l", "x"]).await, err(WRONGTYPE));
        assert_eq!(c.cmd(&["STRLEN", "l"]).await, err(WRONGTYPE));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn append_and_setrange_obey_proto_max_bulk_len() {
    let s = start_with(|c| c.proto_max_bulk_len = 1024).await;
    let mut c = s.raw().await;
    let too_long = err("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
    assert_eq!(c.cmd(&["SETRANGE", "a", "1023", "x"]).await, int(1024));
    assert_eq!(c.cmd(&["SETRANGE", "a", "1024", "x"]).await, too_long);
    assert_eq!(c.cmd(&["SETRANGE", "b", "1024", "x"]).await, too_long);
    assert_eq!(c.cmd(&["EXISTS", "b"]).await, int(0));
    assert_eq!(
        c.cmd(&["SETRANGE", "a", "9223372036854775807", "x"]).await,
        too_long
    );
    // Writing nothing is never too long.
    assert_eq!(c.cmd(&["SETRANGE", "b", "4096", ""]).await, int(0));
    assert_eq!(c.cmd(&["APPEND", "a", "x"]).await, too_long);
    assert_eq!(c.cmd(&["STRLEN", "a"]).await, int(1024));
    assert_eq!(c.cmd(&["APPEND", "a", ""]).await, int(1024));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn getrange_and_substr() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["SET", "s", "hello world"]).await, ok());
    for (start, end, want) in [
        ("0", "4", "hello"),
        ("-5", "-1", "world"),
        ("5", "1", ""),
        ("-1", "-5", ""),
        ("0", "-100", "h"),
        ("-100", "-100", "h"),
        ("-100", "100", "hello world"),
        ("100", "200", ""),
        ("0", "9223372036854775807", "hello world"),
        ("-9223372036854775808", "-1", "hello world"),
        ("3", "-9223372036854775808", ""),
    ] {
        assert_eq!(
            c.cmd(&["GETRANGE", "s", start, end]).await,
            bulk(want),
            "{start} {end}"
        );
    }
    assert_eq!(c.cmd(&["SUBSTR", "s", "0", "4"]).await, bulk("hello"));
    assert_eq!(c.cmd(&["GETRANGE", "nope", "0", "-1"]).await, bulk(""));
    assert_eq!(c.cmd(&["SET", "empty", ""]).await, ok());
    assert_eq!(c.cmd(&["GETRANGE", "empty", "0", "-1"]).await, bulk(""));
    assert_eq!(c.cmd(&["GETRANGE", "empty", "0", "0"]).await, bulk(""));
    assert_eq!(c.cmd(&["GETRANGE", "s", "x", "1"]).await, err(NOT_INT));
    assert_eq!(c.cmd(&["GETRANGE", "nope", "0", "x"]).await, err(NOT_INT));
    assert_eq!(
        c.cmd(&["GETRANGE", "s", "0"]).await,
        err("ERR wrong number of arguments for 'getrange' command")
    );
    assert_eq!(
        c.cmd(&["SUBSTR", "s", "0"]).await,
        err("ERR wrong number of arguments for 'substr' command")
    );
    if make_non_string(&mut c, "l").await {
        assert_eq!(c.cmd(&["GETRANGE", "l", "0", "-1"]).await, err(WRONGTYPE));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn setrange_pads_with_zero_bytes() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["SETRANGE", "sr", "5", "hi"]).await, int(7));
    assert_eq!(c.cmd(&["GET", "sr"]).await, bulk_bytes(b"\0\0\0\0\0hi"));
    assert_eq!(c.cmd(&["SETRANGE", "sr", "1", "ABCDEFGH"]).await, int(9));
    assert_eq!(c.cmd(&["GET", "sr"]).await, bulk_bytes(b"\0ABCDEFGH"));
    assert_eq!(c.cmd(&["SETRANGE", "sr", "0", ""]).await, int(9));
    assert_eq!(c.cmd(&["SETRANGE", "nope", "0", ""]).await, int(0));
    assert_eq!(c.cmd(&["EXISTS", "nope"]).await, int(0));
    let range = err("ERR offset is out of range");
    assert_eq!(c.cmd(&["SETRANGE", "sr", "-1", "hi"]).await, range);
    assert_eq!(c.cmd(&["SETRANGE", "sr", "x", "hi"]).await, err(NOT_INT));
    assert_eq!(c.cmd(&["SET", "e", "v", "EX", "100"]).await, ok());
    assert_eq!(c.cmd(&["SETRANGE", "e", "0", "w"]).await, int(1));
    assert_eq!(c.cmd(&["TTL", "e"]).await, int(100));
    if make_non_string(&mut c, "l").await {
        assert_eq!(c.cmd(&["SETRANGE", "l", "0", ""]).await, err(WRONGTYPE));
        assert_eq!(c.cmd(&["SETRANGE", "l", "0", "x"]).await, err(WRONGTYPE));
        // The offset is checked before the key.
        assert_eq!(c.cmd(&["SETRANGE", "l", "-1", ""]).await, range);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lcs_replies() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["MSET", "key1", "ohmytext", "key2", "mynewtext"])
            .await,
        ok()
    );
    let pair = |a: i64, b: i64| arr(vec![int(a), int(b)]);
    let m1 = arr(vec![pair(4, 7), pair(5, 8)]);
    let m2 = arr(vec![pair(2, 3), pair(0, 1)]);
    let idx = |matches: Vec<Frame>| arr(vec![bulk("matches"), arr(matches), bulk("len"), int(6)]);
    assert_eq!(c.cmd(&["LCS", "key1", "key2"]).await, bulk("mytext"));
    assert_eq!(c.cmd(&["LCS", "key1", "key2", "LEN"]).await, int(6));
    assert_eq!(
        c.cmd(&["LCS", "key1", "key2", "len", "withmatchlen"]).await,
        int(6)
    );
    assert_eq!(
        c.cmd(&["LCS", "key1", "key2", "WITHMATCHLEN"]).await,
        bulk("mytext")
    );
    assert_eq!(
        c.cmd(&["LCS", "key1", "key2", "IDX"]).await,
        idx(vec![m1.clone(), m2.clone()])
    );
    assert_eq!(
        c.cmd(&["LCS", "key1", "key2", "MINMATCHLEN", "-5", "IDX"])
            .await,
        idx(vec![m1, m2])
    );
    assert_eq!(
        c.cmd(&[
            "LCS",
            "key1",
            "key2",
            "IDX",
            "MINMATCHLEN",
            "4",
            "WITHMATCHLEN"
        ])
        .await,
        idx(vec![arr(vec![pair(4, 7), pair(5, 8), int(4)])])
    );
    assert_eq!(
        c.cmd(&["LCS", "key1", "key2", "IDX", "WITHMATCHLEN"]).await,
        idx(vec![
            arr(vec![pair(4, 7), pair(5, 8), int(4)]),
            arr(vec![pair(2, 3), pair(0, 1), int(2)]),
        ])
    );
    assert_eq!(
        c.cmd(&["LCS", "key1", "key2", "LEN", "MINMATCHLEN", "4"])
            .await,
        int(6)
    );
    assert_eq!(c.cmd(&["LCS", "key1", "nokey"]).await, bulk(""));
    assert_eq!(
        c.cmd(&["LCS", "key1", "nokey", "IDX"]).await,
        arr(vec![bulk("matches"), arr(vec![]), bulk("len"), int(0)])
    );
    assert_eq!(c.cmd(&["LCS", "nokey", "nokey2", "LEN"]).await, int(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lcs_errors() {
    let s = start_with(|c| c.proto_max_bulk_len = 1024 * 1024).await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["MSET", "key1", "ohmytext", "key2", "mynewtext"])
            .await,
        ok()
    );
    let both = err("ERR If you want both the length and indexes, please just use IDX.");
    assert_eq!(c.cmd(&["LCS", "key1", "key2", "LEN", "IDX"]).await, both);
    assert_eq!(c.cmd(&["LCS", "key1", "key2", "IDX", "LEN"]).await, both);
    let syntax = err("ERR syntax error");
    assert_eq!(c.cmd(&["LCS", "key1", "key2", "MINMATCHLEN"]).await, syntax);
    assert_eq!(c.cmd(&["LCS", "key1", "key2", "BOGUS"]).await, syntax);
    assert_eq!(
        c.cmd(&["LCS", "key1", "key2", "LEN", "BOGUS", "IDX"]).await,
        syntax
    );
    assert_eq!(
        c.cmd(&["LCS", "key1", "key2", "MINMATCHLEN", "x"]).await,
        err(NOT_INT)
    );
    assert_eq!(
        c.cmd(&["LCS", "key1"]).await,
        err("ERR wrong number of arguments for 'lcs' command")
    );
    // The transient table ((len1+1)*(len2+1) u32s) may not exceed proto-max-bulk-len:
    // 501*523*4 fits in 1 MiB, 501*524*4 does not.
    let (a, b, b2) = ("a".repeat(500), "b".repeat(522), "b".repeat(523));
    assert_eq!(c.cmd(&["MSET", "A", &a, "B", &b, "B2", &b2]).await, ok());
    assert_eq!(c.cmd(&["LCS", "A", "B", "LEN"]).await, int(0));
    assert_eq!(
        c.cmd(&["LCS", "A", "B2", "LEN"]).await,
        err("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
    );
    if make_non_string(&mut c, "l").await {
        let strings = err("ERR The specified keys must contain string values");
        assert_eq!(c.cmd(&["LCS", "key1", "l"]).await, strings);
        // Redis 7.0 checks the types before it reads the options.
        assert_eq!(c.cmd(&["LCS", "l", "key1", "BOGUS"]).await, strings);
        assert_eq!(
            c.cmd(&["LCS", "key1", "l", "MINMATCHLEN", "x"]).await,
            strings
        );
        assert_eq!(c.cmd(&["LCS", "l", "nokey", "LEN", "IDX"]).await, strings);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resp3_shapes() {
    let s = start().await;
    let mut c = s.raw().await;
    let hello = c.cmd(&["HELLO", "3"]).await;
    let Frame::Map(_) = hello else {
        panic!("HELLO 3 replies with a map, not {hello:?}")
    };
    assert_eq!(
        c.cmd(&["MSET", "key1", "ohmytext", "key2", "mynewtext"])
            .await,
        ok()
    );
    let pair = |a: i64, b: i64| arr(vec![int(a), int(b)]);
    assert_eq!(
        c.cmd(&["LCS", "key1", "key2", "IDX", "WITHMATCHLEN"]).await,
        Frame::Map(vec![
            (
                bulk("matches"),
                arr(vec![
                    arr(vec![pair(4, 7), pair(5, 8), int(4)]),
                    arr(vec![pair(2, 3), pair(0, 1), int(2)]),
                ])
            ),
            (bulk("len"), int(6)),
        ])
    );
    // Nil is RESP3's null, in and out of arrays.
    assert_eq!(
        c.cmd(&["MGET", "key1", "nokey"]).await,
        arr(vec![bulk("ohmytext"), nil()])
    );
    assert_eq!(c.cmd(&["GETDEL", "nokey"]).await, nil());
    assert_eq!(c.cmd(&["GETEX", "nokey"]).await, nil());
    assert_eq!(c.cmd(&["INCRBYFLOAT", "f", "1.5"]).await, bulk("1.5"));
    // And byte for byte: `_` for nil, `%` for the map.
    c.send(&encode_command(&[b"MGET", b"key1", b"nokey"])).await;
    c.expect_bytes(b"*2\r\n$8\r\nohmytext\r\n_\r\n").await;
    c.send(&encode_command(&[b"LCS", b"key1", b"nokey", b"IDX"]))
        .await;
    c.expect_bytes(b"%2\r\n$7\r\nmatches\r\n*0\r\n$3\r\nlen\r\n:0\r\n")
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_safe() {
    let s = start().await;
    let mut c = s.raw().await;
    let k: &[u8] = b"k\0\xff\r\n";
    let v: &[u8] = b"\0\x01\xfe\xff\r\nend";
    assert_eq!(c.cmd_bytes(&[b"MSET", k, v]).await, ok());
    assert_eq!(
        c.cmd_bytes(&[b"MGET", k, b"x"]).await,
        arr(vec![bulk_bytes(v), nil()])
    );
    assert_eq!(c.cmd_bytes(&[b"STRLEN", k]).await, int(v.len() as i64));
    assert_eq!(
        c.cmd_bytes(&[b"GETRANGE", k, b"1", b"3"]).await,
        bulk_bytes(b"\x01\xfe\xff")
    );
    assert_eq!(c.cmd_bytes(&[b"APPEND", k, b"\0"]).await, int(10));
    assert_eq!(c.cmd_bytes(&[b"SETRANGE", k, b"0", b"\xff"]).await, int(10));
    assert_eq!(
        c.cmd_bytes(&[b"GETSET", k, b"\0"]).await,
        bulk_bytes(b"\xff\x01\xfe\xff\r\nend\0")
    );
    assert_eq!(c.cmd_bytes(&[b"SET", b"a", b"\0a\xffb\0"]).await, ok());
    assert_eq!(c.cmd_bytes(&[b"SET", b"b", b"a\0\0b\xff"]).await, ok());
    // Several subsequences of length 2 exist; Redis's walk back picks this one.
    assert_eq!(c.cmd_bytes(&[b"LCS", b"a", b"b"]).await, bulk_bytes(b"a\0"));
    let pair = |a: i64, b: i64| arr(vec![int(a), int(b)]);
    assert_eq!(
        c.cmd_bytes(&[b"LCS", b"a", b"b", b"IDX"]).await,
        arr(vec![
            bulk("matches"),
            arr(vec![
                arr(vec![pair(4, 4), pair(2, 2)]),
                arr(vec![pair(1, 1), pair(0, 0)]),
            ]),
            bulk("len"),
            int(2),
        ])
    );
    assert_eq!(c.cmd_bytes(&[b"GETDEL", k]).await, bulk_bytes(b"\0"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyspace_hits_and_misses_count_like_redis() {
    let s = start().await;
    let mut c = s.raw().await;
    // INFO stats reports keyspace_hits and keyspace_misses (keyspace_stats panics otherwise).
    keyspace_stats(&mut c).await;
    assert_eq!(c.cmd(&["SET", "s", "v"]).await, ok());
    let has_other = make_non_string(&mut c, "l").await;
    // (command, hits, misses) as redis-server 7.0.15 counts them.
    let mut cases: Vec<(Vec<&str>, i64, i64)> = vec![
        (vec!["GET", "x"], 0, 1),
        (vec!["MGET", "s", "x", "y"], 1, 2),
        (vec!["STRLEN", "s"], 1, 0),
        (vec!["STRLEN", "x"], 0, 1),
        (vec!["GETRANGE", "s", "0", "1"], 1, 0),
        (vec!["GETRANGE", "x", "0", "1"], 0, 1),
        (vec!["GETRANGE", "x", "a", "1"], 0, 0),
        (vec!["LCS", "s", "x"], 1, 1),
        (vec!["GETEX", "s"], 1, 0),
        (vec!["GETEX", "x"], 0, 1),
        (vec!["GETEX", "x", "BOGUS"], 0, 0),
        (vec!["GETDEL", "x"], 0, 1),
        (vec!["GETSET", "x", "1"], 0, 1),
        (vec!["SET", "x", "2", "GET"], 1, 0),
        (vec!["GETEX", "x", "EX", "abc"], 1, 0),
        (vec!["INCR", "n"], 0, 0),
        (vec!["APPEND", "a", "1"], 0, 0),
        (vec!["SETRANGE", "r", "0", "a"], 0, 0),
        (vec!["MSETNX", "m", "1"], 0, 0),
        (vec!["INCRBYFLOAT", "f", "1"], 0, 0),
    ];
    if has_other {
        cases.extend([
            (vec!["GET", "l"], 1, 0),
            (vec!["MGET", "l"], 1, 0),
            (vec!["STRLEN", "l"], 1, 0),
            (vec!["GETRANGE", "l", "0", "1"], 1, 0),
            (vec!["LCS", "l", "s"], 2, 0),
            (vec!["LCS", "l", "x2"], 1, 1),
            (vec!["GETDEL", "l"], 1, 0),
        ]);
    }
    for (cmd, hits, misses) in cases {
        let (h0, m0) = keyspace_stats(&mut c).await;
        c.cmd(&cmd).await;
        let (h1, m1) = keyspace_stats(&mut c).await;
        assert_eq!((h1 - h0, m1 - m0), (hits, misses), "{cmd:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn string_commands_in_a_transaction() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["MULTI"]).await, ok());
    for cmd in [
        vec!["MSET", "a", "1", "b", "x"],
        vec!["INCR", "a"],
        vec!["INCR", "b"],
        vec!["APPEND", "b", "y"],
        vec!["MGET", "a", "b"],
        vec!["GETDEL", "a"],
    ] {
        assert_eq!(c.cmd(&cmd).await, simple("QUEUED"));
    }
    assert_eq!(
        c.cmd(&["EXEC"]).await,
        arr(vec![
            ok(),
            int(2),
            err(NOT_INT),
            int(2),
            bulks(&["2", "xy"]),
            bulk("2"),
        ])
    );
}
