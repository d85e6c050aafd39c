//! CLIENT LIST [TYPE normal|master|replica|pubsub] [ID id [id ...]] — one line per connection;
//! CLIENT INFO — the line of this connection. <https://redis.io/commands/client-list/>,
//! <https://redis.io/commands/client-info/>
//!
//! The line has Redis 7.0's fields in Redis's order. Fields that describe Redis internals Relis
//! does not have (output buffer lists) are reported as an idle Redis
//! client would report them.

use crate::args::{parse_i64, Args};
use crate::client::{Client, ClientInfo};
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;
use std::fmt::Write as _;
use std::sync::atomic::Ordering;

/// CLIENT LIST's declaration.
pub const SPEC_LIST: Spec = Spec {
    name: "client|list",
    arity: -2,
    flags: Spec::flags(&["admin", "noscript", "loading", "stale"]),
    acl: Spec::acl(&["admin", "slow", "dangerous", "connection"]),
    group: "connection",
    since: "2.4.0",
    summary: "Get the list of client connections",
    complexity: "O(N) where N is the number of client connections",
    parse: ClientList::parse,
    tips: &["nondeterministic_output"],
    ..Spec::BASE
};

/// CLIENT INFO's declaration.
pub const SPEC_INFO: Spec = Spec {
    name: "client|info",
    arity: 2,
    flags: Spec::flags(&["noscript", "loading", "stale"]),
    acl: Spec::acl(&["slow", "connection"]),
    group: "connection",
    since: "6.2.0",
    summary: "Returns information about the current client connection.",
    parse: ClientList::parse_info,
    tips: &["nondeterministic_output"],
    ..Spec::BASE
};

/// Redis's client types (CLIENT LIST TYPE, CLIENT KILL TYPE).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientType {
    /// Ordinary clients.
    Normal,
    /// Replicas (Relis has none).
    Replica,
    /// Pub/sub subscribers.
    PubSub,
    /// The master link of a replica (Relis has none).
    Master,
}

impl ClientType {
    /// Parses a type name as Redis's `getClientTypeByName` does.
    ///
    /// # Errors
    /// `ERR Unknown client type '<name>'`.
    pub fn parse(b: &[u8]) -> Result<ClientType, CmdError> {
        let l = b.to_ascii_lowercase();
        Ok(match l.as_slice() {
            b"normal" => ClientType::Normal,
            b"slave" | b"replica" => ClientType::Replica,
            b"pubsub" => ClientType::PubSub,
            b"master" => ClientType::Master,
            _ => return Err(CmdError::client_type(b)),
        })
    }

    /// Whether `info` is of this type: a connection with subscriptions is a pubsub client,
    /// every other one a normal client (Relis has no replicas).
    pub fn matches(self, info: &ClientInfo) -> bool {
        let pubsub = info.pubsub.subscribed();
        match self {
            ClientType::PubSub => pubsub,
            ClientType::Normal => !pubsub,
            ClientType::Replica | ClientType::Master => false,
        }
    }
}

/// CLIENT LIST / CLIENT INFO.
#[derive(Debug, PartialEq)]
pub enum ClientList {
    /// Every client, or those of one type.
    All(Option<ClientType>),
    /// The clients with these ids, in this order.
    Ids(Vec<u64>),
    /// This connection (CLIENT INFO).
    Me,
}

impl ClientList {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::conn(Self::parse_args(args)?)
    }

    fn parse_info(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(ClientList::Me)
    }

    fn parse_args(args: &mut Args) -> Result<ClientList, CmdError> {
        if args.is_empty() {
            return Ok(ClientList::All(None));
        }
        if args.remaining() == 2 && args.eat("type") {
            let t = ClientType::parse(&args.next()?)?;
            args.finish()?;
            return Ok(ClientList::All(Some(t)));
        }
        if args.remaining() >= 2 && args.eat("id") {
            let ids = args
                .rest()
                .iter()
                .map(|a| parse_i64(a).map_err(|_| CmdError::INVALID_CLIENT_ID))
                .collect::<Result<Vec<i64>, _>>()?;
            // Negative ids name nobody.
            return Ok(ClientList::Ids(
                ids.into_iter()
                    .filter_map(|i| u64::try_from(i).ok())
                    .collect(),
            ));
        }
        Err(CmdError::Syntax)
    }
}

/// Redis's `flags=` letters for a client.
fn flags(info: &ClientInfo) -> String {
    let mut f = String::new();
    if info.monitor.load(Ordering::Relaxed) {
        f.push('O');
    }
    if info.pubsub.subscribed() {
        f.push('P');
    }
    if info.multi.load(Ordering::Relaxed) >= 0 {
        f.push('x');
    }
    if info.blocked.load(Ordering::Relaxed) {
        f.push('b');
    }
    if info.tracking_redir.load(Ordering::Relaxed) >= 0 {
        f.push('t');
        let t = info.tracking_flags.load(Ordering::Relaxed);
        if t & crate::tracking::BROKEN_FLAG != 0 {
            f.push('R');
        }
        if t & crate::tracking::BCAST_FLAG != 0 {
            f.push('B');
        }
    }
    if info.no_evict.load(Ordering::Relaxed) {
        f.push('e');
    }
    if info.no_touch.load(Ordering::Relaxed) {
        f.push('T');
    }
    if f.is_empty() {
        f.push('N');
    }
    f
}

/// Size of a connection's read buffer (client.rs starts it at 16 KiB).
const READ_BUF: u64 = 16 * 1024;
/// What a connection costs besides its buffers (its task, state and maps), roughly.
const CLIENT_OVERHEAD: u64 = 2 * 1024;

/// Appends the CLIENT LIST line of `info` (with its trailing newline) to `out`.
pub fn write_line(out: &mut String, info: &ClientInfo) {
    let name = info
        .name
        .lock()
        .as_ref()
        .map(|n| String::from_utf8_lossy(n).into_owned())
        .unwrap_or_default();
    let multi = info.multi.load(Ordering::Relaxed);
    let qbuf = info.qbuf.load(Ordering::Relaxed);
    let rbs = READ_BUF.max(qbuf);
    let omem = info.pubsub.pending() as u64 + info.omem.load(Ordering::Relaxed);
    let _ = writeln!(
        out,
        "id={} addr={} laddr={} fd={} name={} age={} idle={} flags={} db={} sub={} psub={} ssub={} \
         multi={} qbuf={} qbuf-free={} argv-mem=0 multi-mem=0 rbs={} rbp={} obl=0 oll=0 omem={} \
         tot-mem={} events=r cmd={} user={} redir={} resp={}",
        info.id,
        info.addr,
        info.laddr,
        info.fd,
        name,
        info.created.elapsed().as_secs(),
        info.idle_secs(),
        flags(info),
        info.db.load(Ordering::Relaxed),
        info.pubsub.channels.load(Ordering::Relaxed),
        info.pubsub.patterns.load(Ordering::Relaxed),
        info.pubsub.shard.load(Ordering::Relaxed),
        multi,
        qbuf,
        rbs - qbuf,
        rbs,
        qbuf,
        omem,
        rbs + omem + CLIENT_OVERHEAD,
        info.last_cmd.lock(),
        info.user.lock(),
        info.tracking_redir.load(Ordering::Relaxed),
        info.resp.load(Ordering::Relaxed),
    );
}

impl ConnCmd for ClientList {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let mut out = String::new();
            match *self {
                ClientList::Me => write_line(&mut out, &c.info),
                ClientList::All(t) => {
                    let clients: Vec<_> = c.server.clients.lock().values().cloned().collect();
                    for info in clients {
                        if t.is_none_or(|t| t.matches(&info)) {
                            write_line(&mut out, &info);
                        }
                    }
                }
                ClientList::Ids(ids) => {
                    for id in ids {
                        let info = c.server.clients.lock().get(&id).cloned();
                        if let Some(info) = info {
                            write_line(&mut out, &info);
                        }
                    }
                }
            }
            Ok(Frame::Verbatim {
                format: *b"txt",
                data: Bytes::from(out),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &[&str]) -> Result<ClientList, String> {
        let v = line.iter().map(|s| Bytes::from(s.to_string())).collect();
        ClientList::parse_args(&mut Args::new("client|list", v)).map_err(|e| e.message())
    }

    #[test]
    fn filters() {
        assert_eq!(parse(&[]), Ok(ClientList::All(None)));
        assert_eq!(
            parse(&["TYPE", "pubsub"]),
            Ok(ClientList::All(Some(ClientType::PubSub)))
        );
        assert_eq!(
            parse(&["type", "x"]),
            Err("ERR Unknown client type 'x'".into())
        );
        assert_eq!(parse(&["id", "3", "1"]), Ok(ClientList::Ids(vec![3, 1])));
        assert_eq!(
            parse(&["id", "3", "x"]),
            Err("ERR Invalid client ID".into())
        );
        assert_eq!(parse(&["id"]), Err("ERR syntax error".into()));
        assert_eq!(parse(&["foo"]), Err("ERR syntax error".into()));
        assert_eq!(
            parse(&["type", "normal", "x"]),
            Err("ERR syntax error".into())
        );
    }
}
