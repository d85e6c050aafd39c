//! Transcripts of several connections talking to a server, compared between Relis and
//! redis-server byte for byte (client-side caching and MONITOR tests).

use super::*;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Rewrites what a connection received before comparing (timestamps, addresses): the text and
/// the test connections' local addresses, in order.
pub type Normalise = fn(&str, &[String]) -> String;

/// Leaves the text as it is.
pub fn as_is(text: &str, _: &[String]) -> String {
    text.to_string()
}

/// One step: which connection sends what. `#close` closes the connection, `#hello3` switches
/// it to RESP3 (HELLO's reply left out); `$ID<n>` in an argument is connection n's client id.
pub type Step<'a> = (usize, &'a [&'a str]);

/// Runs `steps` on `conns` fresh connections to `addr` and returns the transcript: each step,
/// then what every connection received after it (client ids written as `$ID<n>`).
pub async fn transcript(
    addr: SocketAddr,
    conns: usize,
    steps: &[Step<'_>],
    normalise: Normalise,
) -> String {
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
            "#pipe" => {
                // Command lines separated by `|`, sent in one write.
                let mut bytes = Vec::new();
                for cmd in args[1..].split(|a| *a == "|") {
                    let cmd: Vec<&[u8]> = cmd.iter().map(|a| a.as_bytes()).collect();
                    bytes.extend(encode_command(&cmd));
                }
                let s = socks[*n].as_mut().expect("an open connection");
                s.write_all(&bytes).await.unwrap();
            }
            "#hello3" => {
                // RESP3, without HELLO's reply (it names the server's version).
                let s = socks[*n].as_mut().expect("an open connection");
                s.write_all(&encode_command(&[b"HELLO", b"3"]))
                    .await
                    .unwrap();
                // The whole reply (it ends with the empty module list), however slow the
                // server is, then whatever else is still coming.
                let mut got = Vec::new();
                let deadline = Instant::now() + Duration::from_secs(10);
                while !got.ends_with(b"modules\r\n*0\r\n") && Instant::now() < deadline {
                    let mut buf = [0u8; 4096];
                    match tokio::time::timeout(Duration::from_millis(100), s.read(&mut buf)).await {
                        Ok(Ok(n)) if n > 0 => got.extend_from_slice(&buf[..n]),
                        Ok(_) => break,
                        Err(_) => {}
                    }
                }
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
        // (CLIENT REPLY OFF/SKIP, or a monitor's second MONITOR, silence replies: after a
        // while, nothing it is.)
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
pub async fn drain(socks: &mut [Option<TcpStream>]) -> Vec<Vec<u8>> {
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
pub async fn differential(conns: usize, steps: &[Step<'_>], normalise: Normalise) -> String {
    let s = start().await;
    let ours = transcript(s.addr, conns, steps, normalise).await;
    let tmp = tempfile::tempdir().unwrap();
    if let Some(redis) = spawn_redis(tmp.path()) {
        let theirs = transcript(redis.addr(), conns, steps, normalise).await;
        if ours != theirs {
            panic!("Relis:\n{ours}\nredis-server:\n{theirs}");
        }
    }
    ours
}
