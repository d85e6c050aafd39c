//! MONITOR over TCP: the line format (timestamp, database, client address or `lua`, quoting as
//! Redis's sdscatrepr, redacted secrets), what is shown and what is not, what a monitor may
//! still send, RESET, MONITOR in MULTI, RESP3; compared byte for byte with redis-server 7.0.15
//! where it is installed (timestamps and client ports written as `T` and `c<n>`).

mod common;
use common::*;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

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

/// One step: which connection sends what. `#close` closes the connection, `#hello3` switches
/// it to RESP3 (HELLO's reply left out); `$ID<n>` in an argument is connection n's client id.
type Step<'a> = (usize, &'a [&'a str]);

/// Runs `steps` on `conns` fresh connections to `addr` and returns the transcript: each step,
/// then what every connection received after it (client ids written as `$ID<n>`).
async fn transcript(addr: SocketAddr, conns: usize, steps: &[Step<'_>]) -> String {
    let mut socks = Vec::new();
    let mut ids = Vec::new();
    let mut addrs = Vec::new();
    for _ in 0..conns {
        let mut raw = Raw::connect(addr).await;
        match raw.cmd(&["CLIENT", "ID"]).await {
            resp::Frame::Integer(id) => ids.push(id),
            other => panic!("{other:?}"),
        }
        addrs.push(raw.stream.local_addr().unwrap().to_string());
        socks.push(Some(raw.stream));
    }
    let mut out = String::new();
    for (n, args) in steps {
        out.push_str(&format!("{n}> {}\n", args.join(" ")));
        match args[0] {
            "#close" => {
                socks[*n] = None;
                // The server notices the close on its own time.
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
            "#hello3" => {
                // RESP3, without HELLO's reply (it names the server's version).
                let s = socks[*n].as_mut().expect("an open connection");
                s.write_all(&encode_command(&[b"HELLO", b"3"]))
                    .await
                    .unwrap();
                drain(&mut socks).await;
                continue;
            }
            _ => {
                let args: Vec<String> = args
                    .iter()
                    .map(|a| match a.strip_prefix("$ID") {
                        Some(i) => ids[i.parse::<usize>().unwrap()].to_string(),
                        None => a.to_string(),
                    })
                    .collect();
                let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
                let s = socks[*n].as_mut().expect("an open connection");
                s.write_all(&encode_command(&args)).await.unwrap();
            }
        }
        // The sender's reply first (every step here has one), then whatever else comes.
        let mut first = vec![0u8; 65536];
        let s = socks[*n].as_mut().expect("an open connection");
        // (A monitor's second MONITOR has no reply: after a while, nothing it is.)
        let got = tokio::time::timeout(Duration::from_secs(2), async {
            loop {
                s.readable().await.unwrap();
                match s.try_read(&mut first) {
                    Ok(n) => return n,
                    Err(_) => continue,
                }
            }
        })
        .await
        .unwrap_or(0);
        first.truncate(got);
        let mut all = drain(&mut socks).await;
        all[*n].splice(0..0, first);
        for (i, got) in all.into_iter().enumerate() {
            if got.is_empty() {
                continue;
            }
            let mut text = normalise(&show(&got), &addrs);
            // Client ids differ between servers: where a reply names one, its connection.
            for (j, id) in ids.iter().enumerate() {
                for before in ["redirect", "broken"] {
                    text = text.replace(
                        &format!("{before}\\r\\n:{id}\\r\\n"),
                        &format!("{before}\\r\\n:$ID{j}\\r\\n"),
                    );
                }
                if args.get(1) == Some(&"GETREDIR") && text == format!(":{id}\\r\\n") {
                    text = format!(":$ID{j}\\r\\n");
                }
            }
            out.push_str(&format!("  {i}< {text}\n"));
        }
    }
    out
}

/// Everything the connections receive until they have all been quiet for a while.
async fn drain(socks: &mut [Option<TcpStream>]) -> Vec<Vec<u8>> {
    let mut got = vec![Vec::new(); socks.len()];
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        tokio::time::sleep(Duration::from_millis(80)).await;
        let mut any = false;
        for (i, s) in socks.iter_mut().enumerate() {
            let Some(s) = s else { continue };
            let mut buf = [0u8; 65536];
            loop {
                match s.try_read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        got[i].extend_from_slice(&buf[..n]);
                        any = true;
                    }
                    Err(_) => break,
                }
            }
        }
        if !any || Instant::now() > deadline {
            return got;
        }
    }
}

/// Runs `steps` against Relis and, where it is installed, redis-server, and checks that both
/// transcripts are the same; returns Relis's.
async fn differential(conns: usize, steps: &[Step<'_>]) -> String {
    let s = start().await;
    let ours = transcript(s.addr, conns, steps).await;
    let tmp = tempfile::tempdir().unwrap();
    if let Some(redis) = spawn_redis(tmp.path()) {
        let theirs = transcript(redis.addr(), conns, steps).await;
        if ours != theirs {
            panic!("Relis:\n{ours}\nredis-server:\n{theirs}");
        }
    }
    ours
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
