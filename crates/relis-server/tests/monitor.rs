//! MONITOR over TCP: the line format (timestamp, database, client address or `lua`, quoting as
//! Redis's sdscatrepr, redacted secrets), what is shown and what is not, what a monitor may
//! still send, RESET, MONITOR in MULTI, RESP3; compared byte for byte with redis-server 7.0.15
//! where it is installed (timestamps and client ports written as `T` and `c<n>`).

mod common;
use common::transcript::*;

/// A monitor line's timestamp becomes `T` and a test connection's address `c<n>`; anything
/// else that is not a monitor line fails the test.
fn normalise(text: &str, addrs: &[String]) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('+') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let end = rest.find("\\r\\n").map_or(rest.len(), |e| e + 4);
        let (line, next) = rest.split_at(end);
        rest = next;
        let Some(ts_len) = line[1..].find(' ').map(|n| n + 1) else {
            out.push_str(line);
            continue;
        };
        let stamp = &line[1..ts_len];
        let is_ts = stamp.len() > 8
            && stamp.as_bytes()[stamp.len() - 7] == b'.'
            && stamp.chars().all(|c| c.is_ascii_digit() || c == '.');
        if !is_ts {
            out.push_str(line);
            continue;
        }
        let mut line = format!("+T{}", &line[ts_len..]);
        for (i, a) in addrs.iter().enumerate() {
            line = line.replace(&format!(" {a}]"), &format!(" c{i}]"));
        }
        out.push_str(&line);
    }
    out.push_str(rest);
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn monitor_lines_as_redis() {
    let t = differential(
        4,
        &[
            (0, &["MONITOR"]),
            (1, &["SET", "k", "v"]),
            (1, &["SET", "q", "a\"b\\c\n\r\t\x07\x08\x01\u{ff} \u{e9}"]),
            (1, &["AUTH", "pw"]),
            (1, &["AUTH", "user", "pw"]),
            (1, &["HELLO", "3", "AUTH", "nobody", "x"]),
            (
                1,
                &[
                    "EVAL",
                    "redis.call('set','x','1') return redis.call('get','x')",
                    "0",
                ],
            ),
            (1, &["SELECT", "2"]),
            (1, &["GET", "k"]),
            (1, &["EVAL", "return redis.call('get','x')", "0"]),
            (1, &["SELECT", "0"]),
            (1, &["MULTI"]),
            (1, &["SET", "a", "1"]),
            (1, &["SELECT", "3"]),
            (1, &["GET", "a"]),
            (1, &["EXEC"]),
            (1, &["SELECT", "0"]),
            // Administrative commands, and commands refused before they run, are not shown.
            (1, &["CONFIG", "GET", "maxclients"]),
            (1, &["CLIENT", "KILL", "ID", "99999"]),
            (1, &["GET"]),
            (1, &["NOCOMMAND"]),
            // A command that fails as it runs is.
            (1, &["LPUSH", "k", "x"]),
            (1, &["INCR", "cnt"]),
            (1, &["SET", "int", "12345"]),
            (1, &["PING"]),
            (1, &["ACL", "WHOAMI"]),
            (1, &["CLIENT", "SETNAME", "x"]),
            (
                1,
                &[
                    "FUNCTION",
                    "LOAD",
                    "#!lua name=lib\nredis.register_function('f', function(k, a) return redis.call('get', k[1]) end)",
                ],
            ),
            (1, &["FCALL", "f", "1", "k"]),
            // The monitor itself: no keyspace, its own lines after its replies, MONITOR again
            // answers nothing.
            (0, &["PING"]),
            (0, &["GET", "k"]),
            (0, &["SET", "k", "1"]),
            (0, &["CLIENT", "GETNAME"]),
            // Commands that may replicate are refused too, as Redis refuses them a replica.
            (0, &["PUBLISH", "ch", "m"]),
            (0, &["SPUBLISH", "ch", "m"]),
            (0, &["EVAL", "return 1", "0"]),
            (0, &["EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"]),
            (0, &["FCALL", "f", "0"]),
            (0, &["EVAL_RO", "return 1", "0"]),
            (0, &["FUNCTION", "FLUSH"]),
            (0, &["PUBSUB", "CHANNELS"]),
            (0, &["MONITOR"]),
            // A RESP3 monitor beside it.
            (2, &["#hello3"]),
            (2, &["MONITOR"]),
            (1, &["SET", "k", "w"]),
            (0, &["RESET"]),
            (0, &["GET", "k"]),
            (1, &["SET", "z", "1"]),
            (3, &["MULTI"]),
            (3, &["MONITOR"]),
            (3, &["EXEC"]),
        ],
        normalise,
    )
    .await;
    // The transcript escapes quotes; the checks below read it without.
    let t = t.replace("\\\"", "\"").replace("\\'", "'");
    assert!(
        t.contains("1> SET k v\n  0< +T [0 c1] \"SET\" \"k\" \"v\"\\r\\n"),
        "{t}"
    );
    assert!(t.contains("[0 lua] \"set\" \"x\" \"1\""), "{t}");
    assert!(t.contains("\"AUTH\" \"(redacted)\" \"(redacted)\""), "{t}");
    // The script's line, then its commands'.
    assert!(
        t.contains("0 c1] \"EVAL\" \"redis.call('set','x','1') return redis.call('get','x')\" \"0\"\\r\\n+T [0 lua] \"set\" \"x\" \"1\"\\r\\n+T [0 lua] \"get\" \"x\"\\r\\n"),
        "{t}"
    );
}
