//! One connection's state, as commands see it: [`Client`] (owned by the connection's task) and
//! [`ClientInfo`] (what other connections see of it). Running commands is `dispatch`'s job,
//! reading and writing the socket `connection`'s.

use crate::spec::Index;
use crate::state::Shared;
use bytes::{Bytes, BytesMut};
use parking_lot::Mutex;
use resp::{Frame, Protocol};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::Notify;

/// What a command sees of its caller while it runs on a reader or the writer.
#[derive(Clone)]
pub struct Cx {
    /// The connection's selected database.
    pub db: u32,
    /// The connection's protocol.
    pub proto: Protocol,
    /// Server-wide state.
    pub server: Arc<Shared>,
    /// The connection's user (scripts check `redis.call` against it).
    pub user: Arc<crate::acl::User>,
    /// The connection's client id (ACL LOG finds its CLIENT LIST line by it).
    pub client_id: u64,
    /// Where the command runs, as ACL LOG names it: `toplevel`, `multi` (queued, run by EXEC)
    /// or `lua` (`redis.call`), for the denials a command finds as it runs (SQL morphs).
    pub context: &'static str,
}

impl Cx {
    /// The keys the command `cmd` (a name in the table) may read and write for the caller's user,
    /// as the SQL commands and SORT's patterns ask (everything for a user with every key: one
    /// atomic load).
    pub fn key_access(&self, cmd: &str) -> relis::sql::KeyAccess {
        if self.user.unrestricted() {
            return relis::sql::KeyAccess::all();
        }
        let index = Index::get();
        match index.lookup(&cmd.to_ascii_lowercase()) {
            Some(idx) => self.user.key_access(idx, index.flags(idx)),
            // Not a command of the table: nothing is allowed.
            None => {
                let none: relis::sql::KeyFilter = std::sync::Arc::new(|_: &[u8]| false);
                relis::sql::KeyAccess::new(Some(none.clone()), Some(none))
            }
        }
    }

    /// A read lookup of `key` (Redis's `lookupKeyRead`): counted in INFO's keyspace_hits /
    /// keyspace_misses, and a miss is a `keymiss` event (see [`crate::pubsub::PubSub::key_missed`]).
    pub fn hit(&self, key: &[u8], found: bool) {
        let s = &self.server.stats;
        if found {
            s.keyspace_hits
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        } else {
            s.keyspace_misses
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let expire = !self.server.replication.is_replica();
            self.server
                .pubsub
                .key_missed(&self.server.db, self.db, key, expire);
        }
    }

    /// Whether a miss would publish anything (a command that counts its lookups in bulk must
    /// then look its keys up one by one).
    pub fn misses_notify(&self) -> bool {
        self.server.pubsub.notifies_misses()
    }
}

/// What other connections can see of a client (CLIENT LIST, CLIENT KILL, INFO clients).
#[derive(Debug)]
pub struct ClientInfo {
    /// Unique id.
    pub id: u64,
    /// Peer address.
    pub addr: SocketAddr,
    /// Local address.
    pub laddr: SocketAddr,
    /// The socket's file descriptor (CLIENT LIST `fd=`).
    pub fd: i32,
    /// When it connected.
    pub created: Instant,
    /// CLIENT SETNAME.
    pub name: Mutex<Option<Bytes>>,
    /// CLIENT SETINFO lib-name / lib-ver.
    pub lib: Mutex<(String, String)>,
    /// Selected database.
    pub db: AtomicU32,
    /// Protocol version (2 or 3).
    pub resp: AtomicU8,
    /// Name of the last command run.
    pub last_cmd: Mutex<&'static str>,
    /// Milliseconds since `created` at the last command.
    pub last_active_ms: AtomicU64,
    /// The authenticated user's name (CLIENT LIST `user=`).
    pub user: Mutex<String>,
    /// Commands queued in MULTI, or -1 outside MULTI.
    pub multi: AtomicI64,
    /// Set when the client must close (CLIENT KILL).
    pub killed: AtomicBool,
    /// Wakes the connection when it is killed.
    pub kill: Notify,
    /// Bytes in the query buffer.
    pub qbuf: AtomicU64,
    /// Reply bytes produced and not yet taken by the socket (CLIENT LIST `omem`, with the
    /// pub/sub mailbox).
    pub omem: AtomicU64,
    /// CLIENT NO-EVICT / NO-TOUCH flags.
    pub no_evict: AtomicBool,
    /// CLIENT NO-TOUCH.
    pub no_touch: AtomicBool,
    /// Waiting in a blocking command (CLIENT LIST's `b` flag).
    pub blocked: AtomicBool,
    /// Published messages waiting for the connection to write them, and subscription counts.
    pub pubsub: crate::pubsub::Mailbox,
    /// MONITOR (CLIENT LIST's `O` flag).
    pub monitor: AtomicBool,
    /// Client-side caching, as CLIENT LIST shows it: the redirect id (-1: not tracking).
    pub tracking_redir: AtomicI64,
    /// Client-side caching's CLIENT LIST flags: [`crate::tracking::BCAST_FLAG`],
    /// [`crate::tracking::BROKEN_FLAG`].
    pub tracking_flags: AtomicU8,
}

impl ClientInfo {
    /// Marks the client killed and wakes its connection.
    pub fn kill(&self) {
        self.killed.store(true, Ordering::SeqCst);
        self.kill.notify_one();
    }

    /// Seconds since the last command.
    pub fn idle_secs(&self) -> u64 {
        let now = self.created.elapsed().as_millis() as u64;
        now.saturating_sub(self.last_active_ms.load(Ordering::Relaxed)) / 1000
    }
}

/// CLIENT REPLY mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyMode {
    /// Replies are sent.
    On,
    /// No replies.
    Off,
    /// The next command's reply is skipped.
    Skip,
    /// Skipping the reply of the current command.
    Skipping,
}

/// MULTI state.
#[derive(Debug, Default)]
pub struct Multi {
    /// Queued command lines, name included.
    pub queued: Vec<Vec<Bytes>>,
    /// A queue-time error happened: EXEC aborts.
    pub dirty: bool,
}

/// A connection's state, owned by its task.
pub struct Client {
    /// Server-wide state.
    pub server: Arc<Shared>,
    /// What other connections see.
    pub info: Arc<ClientInfo>,
    /// Selected database.
    pub db: u32,
    /// The keys the command being prepared declares, as (database, key), over the PostgreSQL
    /// backend only (empty otherwise): `run_batch` adds them to its group's
    /// (`dispatch::Group`), whose engine job declares them all.
    pub declared: relis::DeclaredKeys,
    /// Protocol.
    pub proto: Protocol,
    /// Whether AUTH succeeded (or no password is needed).
    pub authed: bool,
    /// The authenticated user (its rules apply to every command).
    pub user: Arc<crate::acl::User>,
    /// MULTI in progress.
    pub multi: Option<Multi>,
    /// WATCHed keys: (db, key, version when watched; None = absent).
    pub watched: Vec<(u32, Bytes, Option<i64>)>,
    /// CLIENT REPLY.
    pub reply_mode: ReplyMode,
    /// Close after this batch's replies are written (QUIT).
    pub quit: bool,
    /// The stream's read half, plain TCP or TLS (the connection loop reads from it; a blocked
    /// command watches it for the client going away).
    pub rd: Option<Box<dyn ConnRead>>,
    /// What the client sent while a blocked command watched the stream: the connection loop
    /// decodes it next.
    pub unread: BytesMut,
    /// Pub/sub subscriptions.
    pub subs: crate::pubsub::Subscriptions,
    /// Frames a connection command sends ahead of its reply (SUBSCRIBE confirms each channel).
    pub pushed: Vec<Frame>,
    /// Whether this connection ever subscribed (its mailbox may hold messages).
    pub mailbox_used: bool,
    /// CLIENT TRACKING's options while tracking is on.
    pub tracking: Option<crate::tracking::Options>,
    /// CLIENT CACHING YES/NO, for the next command (or the next transaction).
    pub caching: bool,
    /// This connection is a MONITOR.
    pub monitor: bool,
    /// A connection command's line, shown to monitors once it has run (SELECT shows the
    /// database it selected, as in Redis).
    pub(crate) monitor_after: Option<Vec<Bytes>>,
    /// Whether this turn's replies include reads run on the network thread (see the connection
    /// loop: they go out after the other ready connections had their turn).
    pub read_here: bool,
    /// How long the running command has waited blocked on keys: not part of its own time
    /// (SLOWLOG, commandstats), as in Redis.
    pub blocked_for: std::time::Duration,
    /// The running blocking command timed out: Redis leaves it out of the slow log.
    pub timed_out: bool,
}

/// The read half of a connection's stream: a TCP socket's, or a TLS session's over one. Only
/// the read is dynamic (one indirect call per read); the write half stays a concrete type.
pub trait ConnRead: AsyncRead + Send + Unpin {}

impl<T: AsyncRead + Send + Unpin> ConnRead for T {}

impl Client {
    /// The context commands run with.
    pub fn cx(&self) -> Cx {
        Cx {
            db: self.db,
            proto: self.proto,
            server: self.server.clone(),
            user: self.user.clone(),
            client_id: self.info.id,
            context: "toplevel",
        }
    }

    /// Ends client-side caching for this client (CLIENT TRACKING OFF, RESET).
    pub fn tracking_off(&mut self) {
        if self.tracking.take().is_some() {
            let ps = &self.server.pubsub;
            if ps.tracking.disable(self.info.id) {
                ps.set_tracking_active(false);
            }
        }
        self.caching = false;
    }

    /// Shows a command line this client runs in `db` to the monitors.
    pub fn feed_monitors(&self, db: u32, argv: &[Bytes]) {
        let limit = self.server.pubsub.replica_limit.load();
        self.server.monitors.feed(
            db,
            crate::monitor::Source::Client(&self.info.addr),
            argv,
            self.info.id,
            limit,
        );
    }

    /// Sends no reply to the command being run (a monitor's second MONITOR).
    pub fn skip_reply(&mut self) {
        if self.reply_mode == ReplyMode::On {
            self.reply_mode = ReplyMode::Skipping;
        }
    }

    /// Moves published messages (and other pushes) waiting in the mailbox to `out`, but those
    /// waiting for the next reply: they are not replies, so CLIENT REPLY OFF does not drop
    /// them (Redis 7.0 sends them too).
    pub fn take_messages(&mut self, out: &mut BytesMut) {
        if self.mailbox_used {
            self.info.pubsub.take_before(out);
        }
    }

    /// Resolves when the peer has closed the connection (EOF with nothing left to read). If the
    /// client has sent more data, that data waits in `unread` for the current command to
    /// finish and this never resolves: a blocked command uses it to notice a client that went
    /// away. (It reads rather than peeks: a TLS stream cannot peek at decrypted data.)
    pub async fn peer_closed(&mut self) {
        let Some(rd) = self.rd.as_mut() else {
            return std::future::pending().await;
        };
        if !self.unread.is_empty() {
            return std::future::pending().await;
        }
        self.unread.reserve(4096);
        match rd.read_buf(&mut self.unread).await {
            Ok(0) | Err(_) => {}
            Ok(_) => std::future::pending().await,
        }
    }
}
