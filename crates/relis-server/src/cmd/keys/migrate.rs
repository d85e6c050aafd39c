//! MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH password |
//! AUTH2 username password] [KEYS key [key ...]] — move keys to another server (redis-server or
//! Relis) with DUMP payloads. <https://redis.io/commands/migrate/>
//!
//! As Redis 7.0's `migrateCommand`: options first (`KEYS` needs the key argument empty), then the
//! timeout and database (the timeout in ms, 1000 when not positive); keys that do not exist are
//! left out and `+NOKEY` replies when none does. It connects (within the timeout), sends in one
//! write `AUTH` (when given), `SELECT db` and one `RESTORE key ttl payload [REPLACE]` per key
//! with its remaining TTL in ms (a key found expired is left out), then reads one reply line
//! each. A key the target took is deleted here (`del` event) unless COPY. The target's first
//! error is the reply (`ERR Target instance replied with error: ...`); a failure to connect,
//! write or read is Redis's `IOERR` text. Unlike Redis, connections are not cached between
//! calls (Redis keeps one per target for 10 s): each MIGRATE connects, so it always sends SELECT.
//! The network work runs on the connection's task, never on the writer.

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, FindKeys, KeySpec, Parsed, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// MIGRATE's declaration.
pub const SPEC: Spec = Spec {
    name: "migrate",
    arity: -6,
    flags: Spec::flags(&["write", "movablekeys"]),
    acl: Spec::acl(&["keyspace", "write", "slow", "dangerous"]),
    keys: (3, 3, 1),
    group: "generic",
    since: "2.6.0",
    summary: "Atomically transfer a key from a Redis instance to another one.",
    complexity: "This command actually executes a DUMP+DEL in the source instance, and a RESTORE in the target instance. See the pages of these commands for time complexity. Also an O(N) data transfer between the two instances is performed.",
    tips: &["nondeterministic_output"],
    parse: Migrate::parse,
    find_keys: Some(migrate_keys),
    key_specs: &[
        KeySpec {
            flags: Spec::key_flags(&["RW", "access", "delete"]),
            index: 3,
            notes: "",
            find: FindKeys::Range(0, 1, 0),
        },
        KeySpec {
            flags: Spec::key_flags(&["RW", "access", "delete", "incomplete"]),
            index: -2,
            notes: "",
            find: FindKeys::AfterKeyword("KEYS", -1, 1, 0),
        },
    ],
    ..Spec::BASE
};

/// Redis's `migrateGetKeys`: the key argument, or every argument after `KEYS` (found from the
/// sixth argument on) when the key argument is empty.
pub fn migrate_keys(argv: &[Bytes]) -> Vec<usize> {
    for i in 6..argv.len() {
        if argv[i].eq_ignore_ascii_case(b"keys") {
            if !argv.get(3).is_some_and(|k| k.is_empty()) {
                return Vec::new();
            }
            return (i + 1..argv.len()).collect();
        }
    }
    if argv.len() > 3 {
        vec![3]
    } else {
        Vec::new()
    }
}

/// MIGRATE, parsed.
#[derive(Debug, PartialEq, Eq)]
pub struct Migrate {
    host: String,
    port: u16,
    keys: Vec<Bytes>,
    db: i64,
    timeout_ms: u64,
    copy: bool,
    replace: bool,
    /// AUTH password (user `None`) or AUTH2 username password.
    auth: Option<(Option<Bytes>, Bytes)>,
}

/// C's `atoi` on a port: leading digits, 0 when there are none (the connect then fails).
fn atoi_port(b: &[u8]) -> u16 {
    let digits: Vec<u8> = b
        .iter()
        .copied()
        .skip_while(|c| *c == b' ')
        .take_while(u8::is_ascii_digit)
        .collect();
    std::str::from_utf8(&digits)
        .ok()
        .and_then(|s| s.parse::<u32>().ok())
        .map_or(0, |p| p as u16)
}

impl Migrate {
    fn from_args(args: &mut Args) -> Result<Migrate, CmdError> {
        let host = String::from_utf8_lossy(&args.next()?).into_owned();
        let port = atoi_port(&args.next()?);
        let key = args.next()?;
        let (db, timeout) = (args.next()?, args.next()?);
        let (mut copy, mut replace, mut auth, mut keys) = (false, false, None, None);
        while !args.is_empty() {
            if args.eat("copy") {
                copy = true;
            } else if args.eat("replace") {
                replace = true;
            } else if args.eat("auth") {
                if args.is_empty() {
                    return Err(CmdError::Syntax);
                }
                auth = Some((None, args.next()?));
            } else if args.eat("auth2") {
                if args.remaining() < 2 {
                    return Err(CmdError::Syntax);
                }
                let user = args.next()?;
                auth = Some((Some(user), args.next()?));
            } else if args.eat("keys") {
                if !key.is_empty() {
                    return Err(CmdError::MIGRATE_KEYS_NEEDS_EMPTY_KEY);
                }
                keys = Some(args.rest());
            } else {
                return Err(CmdError::Syntax);
            }
        }
        args.finish()?;
        let timeout = crate::args::parse_i64(&timeout)?;
        let db = crate::args::parse_i64(&db)?;
        Ok(Migrate {
            host,
            port,
            keys: keys.unwrap_or_else(|| vec![key]),
            db,
            timeout_ms: if timeout <= 0 { 1000 } else { timeout as u64 },
            copy,
            replace,
            auth,
        })
    }

    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::conn(Migrate::from_args(args)?)
    }
}

fn put_command(out: &mut Vec<u8>, args: &[&[u8]]) {
    out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
}

fn io_error(what: &str) -> CmdError {
    CmdError::migrate_io(what)
}

/// The keys to send: (key, DUMP payload, expiry) for each that exists, and the time they were
/// read at.
type Found = (Vec<(Bytes, Vec<u8>, Option<i64>)>, i64);

/// One reply line of the target, without its CRLF (Redis's `syncReadLine`); `None` on a
/// timeout, an error or the end of the stream.
async fn read_line(
    rd: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
    timeout: Duration,
) -> Option<String> {
    let mut line = Vec::new();
    match tokio::time::timeout(timeout, rd.read_until(b'\n', &mut line)).await {
        Ok(Ok(n)) if n > 0 => {
            while line.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                line.pop();
            }
            Some(String::from_utf8_lossy(&line).into_owned())
        }
        _ => None,
    }
}

impl ConnCmd for Migrate {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let db = c.db;
            let keys = self.keys.clone();
            // Declared, for the PostgreSQL backend (which loads only declared keys).
            let declared: relis::DeclaredKeys = keys.iter().map(|k| (db, k.to_vec())).collect();
            let (tx, rx) = tokio::sync::oneshot::channel();
            c.server.db.read_async_keys(
                declared.clone(),
                move |r| -> Result<Found, CmdError> {
                    let mut out = Vec::new();
                    for k in keys {
                        if let Some((p, at)) = super::dump::payload(r, db, &k)? {
                            out.push((k, p, at));
                        }
                    }
                    Ok((out, r.now_ms()))
                },
                move |r| {
                    let _ = tx.send(r);
                },
            );
            let (found, now) = rx
                .await
                .map_err(|_| CmdError::from(relis::Error::Closed))?
                .map_err(CmdError::from)??;
            if found.is_empty() {
                return Ok(Frame::Simple(Bytes::from_static(b"NOKEY")));
            }
            let timeout = Duration::from_millis(self.timeout_ms);
            let stream = match tokio::time::timeout(
                timeout,
                tokio::net::TcpStream::connect((self.host.as_str(), self.port)),
            )
            .await
            {
                Ok(Ok(s)) => s,
                // Redis connects without blocking and learns of a refusal only when it writes.
                Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    return Err(io_error("writing"))
                }
                _ => return Err(CmdError::MIGRATE_CONNECT),
            };
            let _ = stream.set_nodelay(true);
            let mut out = Vec::new();
            if let Some((user, pass)) = &self.auth {
                match user {
                    Some(u) => put_command(&mut out, &[b"AUTH", u, pass]),
                    None => put_command(&mut out, &[b"AUTH", pass]),
                }
            }
            put_command(&mut out, &[b"SELECT", self.db.to_string().as_bytes()]);
            let mut sent = Vec::new();
            for (key, payload, at) in &found {
                let ttl = match at {
                    None => 0,
                    Some(at) if at - now < 0 => continue,
                    Some(at) => (at - now).max(1),
                };
                let ttl = ttl.to_string();
                let mut line: Vec<&[u8]> = vec![b"RESTORE", key, ttl.as_bytes(), payload];
                if self.replace {
                    line.push(b"REPLACE");
                }
                put_command(&mut out, &line);
                sent.push(key.clone());
            }
            let (rd, mut wr) = stream.into_split();
            if !matches!(
                tokio::time::timeout(timeout, wr.write_all(&out)).await,
                Ok(Ok(()))
            ) {
                return Err(io_error("writing"));
            }
            let mut rd = BufReader::new(rd);
            let auth_reply = match &self.auth {
                Some(_) => Some(
                    read_line(&mut rd, timeout)
                        .await
                        .ok_or_else(|| io_error("reading"))?,
                ),
                None => None,
            };
            let select_reply = read_line(&mut rd, timeout)
                .await
                .ok_or_else(|| io_error("reading"))?;
            let mut target_error: Option<String> = None;
            let mut moved = Vec::new();
            let mut socket_error = false;
            for key in &sent {
                let Some(reply) = read_line(&mut rd, timeout).await else {
                    socket_error = true;
                    break;
                };
                let failed = [
                    auth_reply.as_deref(),
                    Some(select_reply.as_str()),
                    Some(&reply),
                ]
                .into_iter()
                .flatten()
                .find(|l| l.starts_with('-'));
                match failed {
                    Some(e) => {
                        target_error.get_or_insert_with(|| e[1..].to_string());
                    }
                    None => moved.push(key.clone()),
                }
            }
            if !self.copy && !moved.is_empty() {
                let (tx, rx) = tokio::sync::oneshot::channel();
                let client = c.info.id;
                c.server.db.write_async_keys(
                    declared,
                    move |w| -> relis::Result<()> {
                        w.set_origin(client);
                        for k in &moved {
                            if w.del(db, std::slice::from_ref(k))? > 0 {
                                w.notify(relis::events::class::GENERIC, "del", db, k);
                            }
                        }
                        Ok(())
                    },
                    move |r| {
                        let _ = tx.send(r);
                    },
                );
                rx.await
                    .map_err(|_| CmdError::from(relis::Error::Closed))?
                    .and_then(|r| r)
                    .map_err(CmdError::from)?;
            }
            if let Some(e) = target_error {
                return Err(CmdError::migrate_target(&e));
            }
            if socket_error {
                return Err(io_error("reading"));
            }
            Ok(Frame::Simple(Bytes::from_static(b"OK")))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &[&str]) -> Result<Migrate, CmdError> {
        let mut args = Args::new(
            "migrate",
            line.iter()
                .map(|a| Bytes::copy_from_slice(a.as_bytes()))
                .collect(),
        );
        Migrate::from_args(&mut args)
    }

    #[test]
    fn options() {
        let m = parse(&[
            "h", "6379", "", "3", "0", "COPY", "auth2", "u", "p", "KEYS", "a", "b",
        ])
        .unwrap();
        assert_eq!(m.keys, vec![Bytes::from("a"), Bytes::from("b")]);
        assert_eq!(
            (m.port, m.db, m.timeout_ms, m.copy, m.replace),
            (6379, 3, 1000, true, false)
        );
        assert_eq!(m.auth, Some((Some(Bytes::from("u")), Bytes::from("p"))));
        let e = |l: &[&str]| parse(l).unwrap_err().message();
        assert_eq!(
            e(&["h", "1", "k", "0", "5", "KEYS", "a"]),
            "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"
        );
        assert_eq!(e(&["h", "1", "k", "0", "5", "AUTH"]), "ERR syntax error");
        assert_eq!(
            e(&["h", "1", "k", "0", "5", "AUTH2", "u"]),
            "ERR syntax error"
        );
        assert_eq!(e(&["h", "1", "k", "0", "5", "nope"]), "ERR syntax error");
        assert_eq!(
            e(&["h", "1", "k", "x", "y"]),
            "ERR value is not an integer or out of range"
        );
        assert_eq!(parse(&["h", "12x", "k", "0", "5"]).unwrap().port, 12);
    }

    #[test]
    fn keys() {
        let argv = |l: &[&str]| {
            l.iter()
                .map(|a| Bytes::copy_from_slice(a.as_bytes()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            migrate_keys(&argv(&["migrate", "h", "1", "k", "0", "5"])),
            vec![3]
        );
        assert_eq!(
            migrate_keys(&argv(&[
                "migrate", "h", "1", "", "0", "5", "COPY", "KEYS", "a", "b"
            ])),
            vec![8, 9]
        );
    }
}
