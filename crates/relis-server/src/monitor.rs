//! MONITOR: every command the server runs, as Redis 7.0 shows it to its monitors.
//! <https://redis.io/commands/monitor/>
//!
//! A line per command: `+<unix seconds>.<microseconds> [<db> <client address>] "arg" ...`,
//! arguments quoted as Redis's `sdscatrepr`, commands a script runs shown as `[<db> lua]`, the
//! secrets of AUTH, HELLO ... AUTH and MIGRATE ... AUTH/AUTH2 replaced by `(redacted)`, as Redis
//! 7.0 does. Administrative commands are not shown, nor are commands refused before they run
//! (unknown, wrong arity, not authenticated, ACL).
//!
//! Lines go into each monitor's mailbox (the pub/sub one) and count against the `slave`
//! class of `client-output-buffer-limit`, as Redis treats monitors as replicas. Checking
//! whether anyone monitors costs one atomic load per command.

use crate::client::ClientInfo;
use crate::pubsub::BufferLimit;
use crate::spec::{Flags, Spec};
use bytes::{Bytes, BytesMut};
use parking_lot::Mutex;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Who ran a command.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// A client, by its address.
    Client(&'a SocketAddr),
    /// A script (`lua`).
    Lua,
}

/// The server's monitors.
#[derive(Default)]
pub struct Monitors {
    active: AtomicBool,
    list: Mutex<Vec<Arc<ClientInfo>>>,
}

impl Monitors {
    /// Whether any client monitors (one atomic load).
    pub fn active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    /// MONITOR: `info` sees every command from now on.
    pub fn add(&self, info: &Arc<ClientInfo>) {
        let mut l = self.list.lock();
        if !l.iter().any(|i| i.id == info.id) {
            l.push(info.clone());
        }
        self.active.store(true, Ordering::Relaxed);
    }

    /// Client `id` no longer monitors (RESET, disconnection).
    pub fn remove(&self, id: u64) {
        if !self.active() {
            return;
        }
        let mut l = self.list.lock();
        l.retain(|i| i.id != id);
        self.active.store(!l.is_empty(), Ordering::Relaxed);
    }

    /// Shows a command (`argv`, name first) run in `db` by `from`, to every monitor; a
    /// monitor's own command follows its reply (`origin` is the client that ran it).
    pub fn feed(&self, db: u32, from: Source<'_>, argv: &[Bytes], origin: u64, limit: BufferLimit) {
        let list = self.list.lock().clone();
        if list.is_empty() {
            return;
        }
        let line = line(crate::state::unix_us(), db, from, argv);
        for m in &list {
            m.pubsub.push_encoded(m, &line, m.id == origin, limit);
        }
    }
}

/// Whether MONITOR shows `spec`'s commands: not administrative ones. (Redis flags EVAL and
/// FCALL `skip_monitor` only to show them itself, before the commands their script runs, which
/// is where Relis shows every command handed to the engine.)
pub fn shown<P>(spec: &Spec<P>) -> bool {
    !spec.has(Flags::ADMIN)
}

/// A monitor line: `+<sec>.<usec> [<db> <addr>|lua] "arg" ...` and CRLF.
pub fn line(now_us: u64, db: u32, from: Source<'_>, argv: &[Bytes]) -> BytesMut {
    let mut out = BytesMut::new();
    let who = match from {
        Source::Client(addr) => addr.to_string(),
        Source::Lua => "lua".to_string(),
    };
    out.extend_from_slice(
        format!(
            "+{}.{:06} [{db} {who}]",
            now_us / 1_000_000,
            now_us % 1_000_000
        )
        .as_bytes(),
    );
    let redact = redacted(argv);
    for (i, a) in argv.iter().enumerate() {
        out.extend_from_slice(b" ");
        if redact.contains(&i) {
            out.extend_from_slice(b"\"(redacted)\"");
        } else {
            repr(&mut out, a);
        }
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// The positions of `argv` Redis 7.0 redacts: every argument of AUTH, the user and password
/// after HELLO's AUTH, the password after MIGRATE's AUTH and the user and password after its
/// AUTH2.
fn redacted(argv: &[Bytes]) -> Vec<usize> {
    let Some(name) = argv.first() else {
        return Vec::new();
    };
    let is = |i: usize, w: &str| {
        argv.get(i)
            .is_some_and(|a| a.eq_ignore_ascii_case(w.as_bytes()))
    };
    if name.eq_ignore_ascii_case(b"auth") {
        return (1..argv.len()).collect();
    }
    let mut out = Vec::new();
    if name.eq_ignore_ascii_case(b"hello") {
        // HELLO [protover [AUTH username password] [SETNAME name]]
        let mut i = 2;
        while i < argv.len() {
            if is(i, "auth") && i + 2 < argv.len() {
                out.extend([i + 1, i + 2]);
                i += 3;
            } else if is(i, "setname") && i + 1 < argv.len() {
                i += 2;
            } else {
                break;
            }
        }
    } else if name.eq_ignore_ascii_case(b"migrate") {
        // MIGRATE host port key|"" db timeout [COPY] [REPLACE] [AUTH pw | AUTH2 user pw] [KEYS ...]
        let mut i = 6;
        while i < argv.len() {
            if is(i, "auth") && i + 1 < argv.len() {
                out.push(i + 1);
                i += 2;
            } else if is(i, "auth2") && i + 2 < argv.len() {
                out.extend([i + 1, i + 2]);
                i += 3;
            } else if is(i, "keys") {
                break;
            } else {
                i += 1;
            }
        }
    }
    out
}

/// Redis's `sdscatrepr`: the string in double quotes, `\\`, `\"`, `\n`, `\r`, `\t`, `\a`, `\b`
/// escaped, other bytes outside printable ASCII as `\xHH`.
pub fn repr(out: &mut BytesMut, s: &[u8]) {
    out.extend_from_slice(b"\"");
    for &b in s {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'"' => out.extend_from_slice(b"\\\""),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            7 => out.extend_from_slice(b"\\a"),
            8 => out.extend_from_slice(b"\\b"),
            // C's isprint: space to tilde.
            0x20..=0x7e => out.extend_from_slice(&[b]),
            _ => out.extend_from_slice(format!("\\x{b:02x}").as_bytes()),
        }
    }
    out.extend_from_slice(b"\"");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(argv: &[&[u8]], from: Source<'_>) -> String {
        let argv: Vec<Bytes> = argv.iter().map(|a| Bytes::copy_from_slice(a)).collect();
        String::from_utf8(line(1_795_662_495_000_042, 3, from, &argv).to_vec()).unwrap()
    }

    #[test]
    fn lines_as_redis_writes_them() {
        let addr: SocketAddr = "127.0.0.1:51226".parse().unwrap();
        assert_eq!(
            show(&[b"set", b"k", b"v"], Source::Client(&addr)),
            "+1795662495.000042 [3 127.0.0.1:51226] \"set\" \"k\" \"v\"\r\n"
        );
        assert_eq!(
            show(
                &[b"set", b"q", b"a\"b\\c\n\r\t\x07\x08\x01\xff \xc3\xa9"],
                Source::Lua
            ),
            "+1795662495.000042 [3 lua] \"set\" \"q\" \"a\\\"b\\\\c\\n\\r\\t\\a\\b\\x01\\xff \\xc3\\xa9\"\r\n"
        );
        assert_eq!(
            show(&[b"AUTH", b"u", b"p"], Source::Lua),
            "+1795662495.000042 [3 lua] \"AUTH\" \"(redacted)\" \"(redacted)\"\r\n"
        );
        assert_eq!(
            show(&[b"hello", b"3", b"setname", b"n", b"AUTH", b"u", b"p"], Source::Lua),
            "+1795662495.000042 [3 lua] \"hello\" \"3\" \"setname\" \"n\" \"AUTH\" \"(redacted)\" \"(redacted)\"\r\n"
        );
        assert_eq!(
            show(
                &[b"migrate", b"h", b"1", b"", b"0", b"1", b"auth2", b"u", b"p", b"keys", b"auth"],
                Source::Lua
            ),
            "+1795662495.000042 [3 lua] \"migrate\" \"h\" \"1\" \"\" \"0\" \"1\" \"auth2\" \"(redacted)\" \"(redacted)\" \"keys\" \"auth\"\r\n"
        );
    }
}
