//! The replica side of Redis 7.0's replication protocol, as `replication.c`'s
//! `syncWithMaster` speaks it: the handshake (PING, AUTH, `REPLCONF listening-port`,
//! `REPLCONF capa eof capa psync2`), `PSYNC`, the RDB payload of a full resynchronization (sized,
//! `$<len>`, or diskless, `$EOF:<mark>`), and then the master's command stream with the
//! replication offset each command ends at.
//!
//! It knows nothing of storage: the caller loads the payload, applies the commands, and tells
//! the master, through an [`Acker`], the offset up to which its writes are durable.
//!
//! ```no_run
//! # async fn f() -> Result<(), repl::LinkError> {
//! let master = repl::Master::new("127.0.0.1", 6379);
//! match repl::connect(&master, None).await? {
//!     repl::Synced::Full(mut payload) => {
//!         let mut rdb = Vec::new();
//!         while payload.read(&mut rdb).await? > 0 {}
//!         let (mut stream, mut acker) = payload.into_stream()?;
//!         // ... load `rdb`, then:
//!         acker.ack(stream.offset()).await?;
//!         while let Some(cmd) = stream.next().await? {
//!             // ... apply cmd.argv; once durable, acker.ack(cmd.end).await?
//!         }
//!     }
//!     repl::Synced::Partial(stream, acker) => { /* the same loop */ }
//! }
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

use bytes::{Buf, Bytes, BytesMut};
use std::fmt;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;

/// Where the master is and how to introduce ourselves.
#[derive(Clone, Debug)]
pub struct Master {
    /// The master's host name or address.
    pub host: String,
    /// The master's port.
    pub port: u16,
    /// `masteruser`: the ACL user to authenticate as (with `password`).
    pub user: Option<String>,
    /// `masterauth`: the password, if the master requires one.
    pub password: Option<String>,
    /// The port this replica serves on, sent as `REPLCONF listening-port` (INFO on the master
    /// shows it).
    pub listening_port: u16,
    /// `replica-announce-ip`, sent as `REPLCONF ip-address`.
    pub announce_ip: Option<String>,
    /// `repl-timeout`: how long any step, or the stream, may stay silent (the master pings
    /// every `repl-ping-replica-period`, 10 s by default).
    pub timeout: Duration,
}

impl Master {
    /// A master at `host:port`, without authentication, with Redis's default 60 s timeout.
    pub fn new(host: impl Into<String>, port: u16) -> Master {
        Master {
            host: host.into(),
            port,
            user: None,
            password: None,
            listening_port: 0,
            announce_ip: None,
            timeout: Duration::from_secs(60),
        }
    }
}

/// Where a replica stands in a master's history: the replication id and the offset of the
/// last byte of the stream it processed (`master_repl_offset` in a replica's INFO).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    /// The master's replication id (40 hex characters).
    pub replid: String,
    /// The stream offset reached.
    pub offset: i64,
}

/// Why a link failed.
#[derive(Debug)]
pub enum LinkError {
    /// The connection failed or closed.
    Io(std::io::Error),
    /// The master stayed silent longer than the timeout, during the named step.
    Timeout(&'static str),
    /// The master refused a step with this error reply (a wrong password, say): retrying will
    /// not help until the configuration changes.
    Refused(String),
    /// The master cannot serve a sync yet (`-LOADING`, `-NOMASTERLINK`): retry later.
    Busy(String),
    /// The master sent something this protocol does not allow.
    Protocol(String),
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkError::Io(e) => write!(f, "connection to the master failed: {e}"),
            LinkError::Timeout(step) => write!(f, "timeout from the master during {step}"),
            LinkError::Refused(e) => write!(f, "the master refused: {e}"),
            LinkError::Busy(e) => write!(f, "the master cannot sync now: {e}"),
            LinkError::Protocol(e) => write!(f, "protocol error from the master: {e}"),
        }
    }
}

impl std::error::Error for LinkError {}

impl From<std::io::Error> for LinkError {
    fn from(e: std::io::Error) -> Self {
        LinkError::Io(e)
    }
}

/// The outcome of [`connect`].
#[derive(Debug)]
pub enum Synced {
    /// The master starts over (`+FULLRESYNC`): read its RDB payload, then the stream.
    Full(Payload),
    /// The master continues from the position given (`+CONTINUE`): the stream follows. The
    /// replication id may have changed (a promoted replica continues its old master's history
    /// under a new id); the stream's position says which.
    Partial(Stream, Acker),
}

/// Bytes a read asks the socket for, at least.
const READ_AHEAD: usize = 64 * 1024;

/// The read side of the connection, with what has been received and not consumed yet.
#[derive(Debug)]
struct Conn {
    rd: OwnedReadHalf,
    buf: BytesMut,
    timeout: Duration,
}

impl Conn {
    /// Reads more bytes into the buffer; an error at end of stream.
    async fn fill(&mut self, step: &'static str) -> Result<(), LinkError> {
        self.buf.reserve(READ_AHEAD);
        let n = tokio::time::timeout(self.timeout, self.rd.read_buf(&mut self.buf))
            .await
            .map_err(|_| LinkError::Timeout(step))??;
        if n == 0 {
            return Err(LinkError::Io(std::io::ErrorKind::UnexpectedEof.into()));
        }
        Ok(())
    }

    /// One reply line (without its CRLF). Lines longer than 64 KiB are a protocol error.
    async fn line(&mut self, step: &'static str) -> Result<String, LinkError> {
        loop {
            if let Some(i) = self.buf.iter().position(|&b| b == b'\n') {
                let mut line = self.buf.split_to(i + 1);
                line.truncate(i);
                if line.last() == Some(&b'\r') {
                    line.truncate(i - 1);
                }
                return Ok(String::from_utf8_lossy(&line).into_owned());
            }
            if self.buf.len() > 64 * 1024 {
                return Err(LinkError::Protocol(format!("{step}: reply line too long")));
            }
            self.fill(step).await?;
        }
    }

    /// The next reply line that is not an empty keep-alive line (a master sends newlines
    /// while it prepares a sync).
    async fn reply(&mut self, step: &'static str) -> Result<String, LinkError> {
        loop {
            let line = self.line(step).await?;
            if !line.is_empty() {
                return Ok(line);
            }
        }
    }
}

/// Sends one command as a RESP array.
async fn send(wr: &mut OwnedWriteHalf, args: &[&[u8]]) -> std::io::Result<()> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    wr.write_all(&out).await
}

/// Connects to `master`, introduces this replica and asks to continue from `resume` (or for a
/// full copy when `None`), as a Redis 7.0 replica does.
///
/// # Errors
/// [`LinkError`]: `Refused` when authentication or PSYNC is refused, `Busy` when the master is
/// loading or has lost its own master, `Io`/`Timeout`/`Protocol` otherwise.
pub async fn connect(master: &Master, resume: Option<&Position>) -> Result<Synced, LinkError> {
    let stream = tokio::time::timeout(
        master.timeout,
        TcpStream::connect((master.host.as_str(), master.port)),
    )
    .await
    .map_err(|_| LinkError::Timeout("connect"))??;
    stream.set_nodelay(true)?;
    let (rd, mut wr) = stream.into_split();
    let mut conn = Conn {
        rd,
        buf: BytesMut::new(),
        timeout: master.timeout,
    };

    // PING: an authentication error is fine here (AUTH comes next), as in Redis.
    send(&mut wr, &[b"PING"]).await?;
    let pong = conn.reply("PING").await?;
    if pong.starts_with('-')
        && !["-NOAUTH", "-NOPERM", "-ERR operation not permitted"]
            .iter()
            .any(|ok| pong.starts_with(ok))
    {
        return Err(LinkError::Refused(pong[1..].to_string()));
    }

    if let Some(pass) = &master.password {
        match &master.user {
            Some(user) => send(&mut wr, &[b"AUTH", user.as_bytes(), pass.as_bytes()]).await?,
            None => send(&mut wr, &[b"AUTH", pass.as_bytes()]).await?,
        }
        let r = conn.reply("AUTH").await?;
        if let Some(e) = r.strip_prefix('-') {
            return Err(LinkError::Refused(e.to_string()));
        }
    }

    // The REPLCONFs are informational: a master that refuses one still serves the sync
    // (Redis logs "(Non critical)" and goes on).
    let port = master.listening_port.to_string();
    send(&mut wr, &[b"REPLCONF", b"listening-port", port.as_bytes()]).await?;
    conn.reply("REPLCONF listening-port").await?;
    if let Some(ip) = &master.announce_ip {
        send(&mut wr, &[b"REPLCONF", b"ip-address", ip.as_bytes()]).await?;
        conn.reply("REPLCONF ip-address").await?;
    }
    send(&mut wr, &[b"REPLCONF", b"capa", b"eof", b"capa", b"psync2"]).await?;
    conn.reply("REPLCONF capa").await?;

    let (id, from) = match resume {
        Some(p) => (p.replid.clone(), (p.offset + 1).to_string()),
        None => ("?".to_string(), "-1".to_string()),
    };
    send(&mut wr, &[b"PSYNC", id.as_bytes(), from.as_bytes()]).await?;
    let r = conn.reply("PSYNC").await?;
    let words: Vec<&str> = r.split(' ').collect();
    match words.as_slice() {
        ["+FULLRESYNC", replid, offset] => {
            let offset = offset
                .parse::<i64>()
                .map_err(|_| LinkError::Protocol(format!("bad FULLRESYNC reply: {r}")))?;
            Ok(Synced::Full(Payload {
                conn,
                wr,
                position: Position {
                    replid: replid.to_string(),
                    offset,
                },
                state: PayloadState::Header,
                received: 0,
            }))
        }
        ["+CONTINUE", rest @ ..] if resume.is_some() && rest.len() <= 1 => {
            let old = resume.expect("checked");
            let position = Position {
                replid: rest.first().map_or(old.replid.clone(), |s| s.to_string()),
                offset: old.offset,
            };
            Ok(Synced::Partial(Stream::new(conn, position), Acker { wr }))
        }
        _ if r.starts_with("-NOMASTERLINK") || r.starts_with("-LOADING") => {
            Err(LinkError::Busy(r[1..].to_string()))
        }
        _ if r.starts_with('-') => Err(LinkError::Refused(r[1..].to_string())),
        _ => Err(LinkError::Protocol(format!("unexpected PSYNC reply: {r}"))),
    }
}

/// Where the payload reader is.
#[derive(Debug)]
enum PayloadState {
    /// Before the `$<len>` or `$EOF:<mark>` line.
    Header,
    /// This many bytes left of a sized payload.
    Sized(u64),
    /// A diskless payload ending with this 40-byte mark.
    Marked(Vec<u8>),
    /// Read to its end.
    Done,
}

/// Length of the end mark of a diskless payload (`RDB_EOF_MARK_SIZE`).
const EOF_MARK: usize = 40;

/// The RDB payload of a full resynchronization, read in pieces.
#[derive(Debug)]
pub struct Payload {
    conn: Conn,
    wr: OwnedWriteHalf,
    position: Position,
    state: PayloadState,
    received: u64,
}

impl Payload {
    /// The position the payload brings a replica to: the stream continues from its offset.
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// The payload's size when the master said it (a disk-based sync); `None` for a diskless
    /// one until its end.
    pub fn size(&self) -> Option<u64> {
        match self.state {
            PayloadState::Sized(left) => Some(self.received + left),
            PayloadState::Done => Some(self.received),
            _ => None,
        }
    }

    /// Bytes of the payload received so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Appends the next bytes of the payload to `out` and says how many; 0 at its end.
    ///
    /// # Errors
    /// [`LinkError::Io`] or [`LinkError::Timeout`] (a master silent for the timeout: it sends
    /// newlines while it prepares the payload), [`LinkError::Protocol`] for a bad header.
    pub async fn read(&mut self, out: &mut Vec<u8>) -> Result<usize, LinkError> {
        if let PayloadState::Header = self.state {
            let line = self.conn.reply("the RDB payload's header").await?;
            self.state = if let Some(mark) = line.strip_prefix("$EOF:") {
                if mark.len() != EOF_MARK {
                    return Err(LinkError::Protocol(format!("bad EOF mark: {line}")));
                }
                PayloadState::Marked(mark.as_bytes().to_vec())
            } else if let Some(n) = line.strip_prefix('$').and_then(|n| n.parse::<u64>().ok()) {
                PayloadState::Sized(n)
            } else {
                return Err(LinkError::Protocol(format!(
                    "bad RDB payload header: {line}"
                )));
            };
        }
        loop {
            match &mut self.state {
                PayloadState::Header => unreachable!("read above"),
                PayloadState::Done => return Ok(0),
                PayloadState::Sized(0) => {
                    self.state = PayloadState::Done;
                    return Ok(0);
                }
                PayloadState::Sized(left) => {
                    if self.conn.buf.is_empty() {
                        self.conn.fill("the RDB payload").await?;
                    }
                    let n = (*left).min(self.conn.buf.len() as u64) as usize;
                    out.extend_from_slice(&self.conn.buf[..n]);
                    self.conn.buf.advance(n);
                    *left -= n as u64;
                    self.received += n as u64;
                    return Ok(n);
                }
                PayloadState::Marked(mark) => {
                    // The mark is the last 40 bytes received: nothing follows it until this
                    // replica acknowledges (the master puts a diskless replica online at its
                    // first ACK), so the buffer can end with it only at the payload's end.
                    let b = &self.conn.buf;
                    if b.len() >= EOF_MARK && b.ends_with(mark) {
                        let n = b.len() - EOF_MARK;
                        out.extend_from_slice(&b[..n]);
                        self.conn.buf.clear();
                        self.received += n as u64;
                        self.state = PayloadState::Done;
                        // 0 when everything before the mark was handed out already.
                        return Ok(n);
                    }
                    if b.len() > EOF_MARK {
                        // Keep what could be the start of the mark.
                        let n = b.len() - EOF_MARK;
                        out.extend_from_slice(&b[..n]);
                        self.conn.buf.advance(n);
                        self.received += n as u64;
                        return Ok(n);
                    }
                    self.conn.fill("the RDB payload").await?;
                }
            }
        }
    }

    /// The command stream after the payload (read to its end first), and the acknowledging
    /// side. A replica acknowledges once the payload is loaded and then every second, as
    /// Redis's replicas do (`replicationCron`): a master streams to a replica synced diskless
    /// only from an ACK it receives after it has seen the transfer end, which can be later than
    /// the replica's first.
    ///
    /// # Errors
    /// [`LinkError::Protocol`] if the payload was not read to its end.
    pub fn into_stream(self) -> Result<(Stream, Acker), LinkError> {
        if !matches!(self.state, PayloadState::Done) {
            return Err(LinkError::Protocol(
                "the stream was asked for before the payload's end".into(),
            ));
        }
        Ok((Stream::new(self.conn, self.position), Acker { wr: self.wr }))
    }
}

/// A command of the master's stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    /// Its arguments (the name first).
    pub argv: Vec<Bytes>,
    /// The stream offset after it: acknowledge this once it is applied durably.
    pub end: i64,
}

/// The master's command stream.
#[derive(Debug)]
pub struct Stream {
    conn: Conn,
    decoder: resp::RequestDecoder,
    position: Position,
}

impl Stream {
    fn new(conn: Conn, position: Position) -> Stream {
        Stream {
            conn,
            decoder: resp::RequestDecoder::new(resp::Limits::default()),
            position,
        }
    }

    /// The offset of the last byte received and decoded.
    pub fn offset(&self) -> i64 {
        self.position.offset
    }

    /// The replication id and offset reached: what to resume from after a disconnection.
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// The next command if it has been received whole already, without waiting: a replica
    /// applies what arrived together in one transaction.
    ///
    /// # Errors
    /// [`LinkError::Protocol`] for a malformed stream.
    pub fn buffered_next(&mut self) -> Result<Option<Command>, LinkError> {
        loop {
            let before = self.conn.buf.len();
            match self.decoder.decode(&mut self.conn.buf) {
                Ok(Some(argv)) => {
                    self.position.offset += (before - self.conn.buf.len()) as i64;
                    if argv.is_empty() {
                        continue;
                    }
                    return Ok(Some(Command {
                        argv,
                        end: self.position.offset,
                    }));
                }
                Ok(None) => return Ok(None),
                Err(e) => return Err(LinkError::Protocol(e.0)),
            }
        }
    }

    /// The next command if it has been received whole, reading what the socket holds
    /// already but never waiting for more: a replica that fell behind gathers everything
    /// waiting into one transaction, not one read's worth at a time.
    ///
    /// # Errors
    /// [`LinkError::Io`], [`LinkError::Protocol`] for a malformed stream. The end of the
    /// stream gives `None` here, and [`Stream::next`] reports it.
    pub fn ready_next(&mut self) -> Result<Option<Command>, LinkError> {
        if let Some(c) = self.buffered_next()? {
            return Ok(Some(c));
        }
        self.conn.buf.reserve(READ_AHEAD);
        match self.conn.rd.try_read_buf(&mut self.conn.buf) {
            Ok(0) => Ok(None),
            Ok(_) => self.buffered_next(),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(LinkError::Io(e)),
        }
    }

    /// The next command, with the offset after it. PINGs and `REPLCONF GETACK` come as
    /// commands too (they move the offset; a replica answers GETACK with an ACK). `None` when
    /// the master closed the connection cleanly between commands.
    ///
    /// # Errors
    /// [`LinkError::Timeout`] when the master is silent for the timeout, [`LinkError::Io`],
    /// [`LinkError::Protocol`] for a malformed stream.
    pub async fn next(&mut self) -> Result<Option<Command>, LinkError> {
        loop {
            if let Some(c) = self.buffered_next()? {
                return Ok(Some(c));
            }
            match self.conn.fill("the command stream").await {
                Err(LinkError::Io(e))
                    if e.kind() == std::io::ErrorKind::UnexpectedEof
                        && self.conn.buf.is_empty() =>
                {
                    return Ok(None)
                }
                r => r?,
            }
        }
    }
}

/// Sends `REPLCONF ACK <offset>` to the master: how far this replica's writes are durable.
#[derive(Debug)]
pub struct Acker {
    wr: OwnedWriteHalf,
}

impl Acker {
    /// Tells the master the replica has applied (durably) the stream up to `offset`.
    ///
    /// # Errors
    /// The connection's write error.
    pub async fn ack(&mut self, offset: i64) -> std::io::Result<()> {
        let o = offset.to_string();
        send(&mut self.wr, &[b"REPLCONF", b"ACK", o.as_bytes()]).await
    }
}
