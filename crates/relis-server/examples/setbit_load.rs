//! A load generator for bench/bitmaps.sh: `CLIENTS` connections, each sending
//! `SETBIT <key> <random offset below BITS> 1` one at a time (no pipelining) until `N` commands
//! have been answered in all; prints the requests per second. redis-benchmark cannot do this:
//! its `__rand_int__` is zero-padded to 12 digits, and Redis refuses a bit offset with leading
//! zeros.
//!
//! Usage: setbit_load <port> <key> <bits> <n> <clients>

use rand::Rng;
use std::time::Instant;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let a: Vec<String> = std::env::args().collect();
    if a.len() != 6 {
        eprintln!("usage: setbit_load <port> <key> <bits> <n> <clients>");
        std::process::exit(2);
    }
    let port: u16 = a[1].parse().expect("port");
    let key = a[2].clone();
    let bits: u64 = a[3].parse().expect("bits");
    let n: u64 = a[4].parse().expect("n");
    let clients: u64 = a[5].parse().expect("clients");
    let start = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..clients {
        let key = key.clone();
        // An even share of the commands for each connection.
        let mine = n / clients + u64::from(c < n % clients);
        tasks.push(tokio::spawn(async move {
            let mut s = TcpStream::connect(("127.0.0.1", port))
                .await
                .expect("connect");
            s.set_nodelay(true).ok();
            let mut buf = [0u8; 64];
            for _ in 0..mine {
                let off = rand::rng().random_range(0..bits).to_string();
                let cmd = format!(
                    "*4\r\n$6\r\nSETBIT\r\n${}\r\n{}\r\n${}\r\n{}\r\n$1\r\n1\r\n",
                    key.len(),
                    key,
                    off.len(),
                    off
                );
                s.write_all(cmd.as_bytes()).await.expect("write");
                // The reply is `:0\r\n` or `:1\r\n`.
                let mut got = 0;
                while got < 4 {
                    let r = s.read(&mut buf[got..]).await.expect("read");
                    assert!(r > 0, "connection closed");
                    got += r;
                }
                assert_eq!(buf[0], b':', "{}", String::from_utf8_lossy(&buf[..got]));
            }
        }));
    }
    for t in tasks {
        t.await.expect("client");
    }
    println!("{:.0}", n as f64 / start.elapsed().as_secs_f64());
}
