//! The consumer-group work loop that job queues run on streams, which redis-benchmark cannot
//! drive (it cannot send back the ids it was given): CLIENTS consumers of one group each loop
//! `XREADGROUP GROUP g c<i> COUNT 1 STREAMS q >` then `XACK q g <id>`, until the stream's
//! entries are all acknowledged. Prints the acknowledged entries per second.
//!
//! `cargo bench -p relis-server --bench stream_loop -- PORT [CLIENTS] [ENTRIES]` against a
//! running server (bench/streams.sh runs it against redis-server and relis-server). It fills
//! `q` with ENTRIES entries (deleting `q` first) and creates the group before timing.

use resp::{Bytes, BytesMut, Frame};
use std::time::Instant;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// One connection, one command at a time.
struct Conn {
    stream: TcpStream,
    buf: BytesMut,
}

impl Conn {
    async fn open(port: u16) -> Conn {
        let stream = TcpStream::connect(("127.0.0.1", port))
            .await
            .expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        Conn {
            stream,
            buf: BytesMut::new(),
        }
    }

    async fn send(&mut self, args: &[&[u8]]) {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        self.stream.write_all(&out).await.expect("write");
    }

    async fn read(&mut self) -> Frame {
        loop {
            if let Some(f) = resp::decode_frame(&mut self.buf).expect("valid RESP") {
                return f;
            }
            let n = self.stream.read_buf(&mut self.buf).await.expect("read");
            assert!(n > 0, "the server closed the connection");
        }
    }

    async fn cmd(&mut self, args: &[&[u8]]) -> Frame {
        self.send(args).await;
        self.read().await
    }
}

/// The id of the one entry an XREADGROUP reply holds, if any.
fn entry_id(reply: &Frame) -> Option<Bytes> {
    let Frame::Array(streams) = reply else {
        return None;
    };
    let Some(Frame::Array(stream)) = streams.first() else {
        return None;
    };
    let Some(Frame::Array(entries)) = stream.get(1) else {
        return None;
    };
    match entries.first() {
        Some(Frame::Array(entry)) => match entry.first() {
            Some(Frame::Bulk(id)) => Some(id.clone()),
            _ => None,
        },
        _ => None,
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let port: u16 = args
        .first()
        .and_then(|p| p.parse().ok())
        .expect("usage: stream_loop PORT [CLIENTS] [ENTRIES]");
    let clients: usize = args.get(1).and_then(|v| v.parse().ok()).unwrap_or(50);
    let entries: usize = args.get(2).and_then(|v| v.parse().ok()).unwrap_or(100_000);

    let mut admin = Conn::open(port).await;
    admin.cmd(&[b"DEL", b"q"]).await;
    for start in (0..entries).step_by(1000) {
        for _ in start..(start + 1000).min(entries) {
            admin
                .send(&[b"XADD", b"q", b"*", b"job", b"payload-of-a-job"])
                .await;
        }
        for _ in start..(start + 1000).min(entries) {
            admin.read().await;
        }
    }
    let created = admin.cmd(&[b"XGROUP", b"CREATE", b"q", b"g", b"0"]).await;
    assert!(matches!(created, Frame::Simple(_)), "{created:?}");

    let started = Instant::now();
    let mut workers = Vec::new();
    for i in 0..clients {
        workers.push(tokio::spawn(async move {
            let mut c = Conn::open(port).await;
            let name = format!("c{i}");
            let mut acked = 0u64;
            loop {
                let reply = c
                    .cmd(&[
                        b"XREADGROUP",
                        b"GROUP",
                        b"g",
                        name.as_bytes(),
                        b"COUNT",
                        b"1",
                        b"STREAMS",
                        b"q",
                        b">",
                    ])
                    .await;
                let Some(id) = entry_id(&reply) else {
                    return acked;
                };
                let r = c.cmd(&[b"XACK", b"q", b"g", &id]).await;
                assert_eq!(r, Frame::Integer(1), "XACK {id:?}");
                acked += 1;
            }
        }));
    }
    let mut acked = 0;
    for w in workers {
        acked += w.await.expect("worker");
    }
    let secs = started.elapsed().as_secs_f64();
    assert_eq!(
        acked as usize, entries,
        "every entry read and acknowledged once"
    );
    let pending = admin.cmd(&[b"XPENDING", b"q", b"g"]).await;
    if let Frame::Array(p) = pending {
        assert_eq!(p.first(), Some(&Frame::Integer(0)), "nothing left pending");
    }
    println!("{:.0}", acked as f64 / secs);
}
