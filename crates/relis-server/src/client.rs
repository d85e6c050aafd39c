//! One connection: read what the client sent, run every complete command in it (in order,
//! batching consecutive reads into one reader job and consecutive writes into one group-commit
//! job), write every reply, flush once.

use crate::args::Args;
use crate::cmd::{ConnCmd, Cx, Parsed, ReadCmd, Spec, Table, WriteCmd};
use crate::error::{unknown_command, unknown_subcommand, CmdError};
use crate::observe::Line;
use crate::server::Shared;
use bytes::{Bytes, BytesMut};
use parking_lot::Mutex;
use resp::{Frame, Limits, Protocol, RequestDecoder};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{oneshot, Notify};

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
    monitor_after: Option<Vec<Bytes>>,
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

/// Connections past which a quiet one gives its buffers back ([`BUFFERS_KEPT`]): below it, the
/// per-wait timer that would cost (~3% of GET -P 1 with 50 clients) buys little memory.
const MANY_CLIENTS: usize = 256;

/// How long a quiet connection keeps its (empty) buffers before giving them back.
const BUFFERS_KEPT: std::time::Duration = std::time::Duration::from_millis(250);

/// Resolves after `secs` seconds, or never for 0.
async fn idle_timer(secs: u64) {
    if secs == 0 {
        std::future::pending::<()>().await;
    }
    tokio::time::sleep(std::time::Duration::from_secs(secs)).await;
}

/// One step of a pipelined batch; the command line is kept for the slow log while it is on.
enum Step {
    Reply(Frame),
    Read(Box<dyn ReadCmd>, usize, Option<Line>),
    Write(QueuedWrite),
    Conn(Box<dyn ConnCmd>, usize, Option<Line>),
}

/// A write command in a group: the command, its statistics index, the keys whose blocked
/// clients it may feed (empty unless its spec `unblocks`), and its line for the slow log.
pub type QueuedWrite = (Box<dyn WriteCmd>, usize, Vec<Bytes>, Option<Line>);

/// A read command in a group: the command, its statistics index, its line for the slow log.
type QueuedRead = (Box<dyn ReadCmd>, usize, Option<Line>);

/// Reply bytes past which a pipelined batch stops to write them before running the rest.
pub const OUT_CHUNK: usize = 64 * 1024;
/// Most reads run as one engine job (their replies are produced together).
const READ_GROUP_MAX: usize = 16;

/// Commands queued together for one engine job.
enum Group {
    None,
    Reads(Vec<QueuedRead>),
    Writes(Vec<QueuedWrite>),
}

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

    fn emit(&mut self, frame: &Frame, out: &mut BytesMut) {
        if let Frame::Error(e) = frame {
            self.server
                .stats
                .total_error_replies
                .fetch_add(1, Ordering::Relaxed);
            self.server.count_error(e);
        }
        // Pushes (pub/sub confirmations) are not replies: Redis 7.0 sends them under CLIENT
        // REPLY OFF and SKIP too, in RESP2 as in RESP3.
        if self.reply_mode == ReplyMode::On || matches!(frame, Frame::Push(_)) {
            resp::encode(frame, self.proto, out);
        }
    }

    /// The command of `argv`, if CLIENT PAUSE could hold it: one that would not be rejected
    /// first (unknown, wrong arity, not authenticated), as Redis checks those before the pause.
    fn pausable(&self, argv: &[Bytes]) -> Option<&'static Spec> {
        let table = Table::get();
        let (_, mut spec) = table.lookup(&argv[0])?;
        if !spec.subcommands.is_empty() && argv.len() > 1 {
            spec = table.lookup_sub(spec, &argv[1])?.1;
        }
        (spec.arity_ok(argv.len()) && (self.authed || spec.has("no_auth"))).then_some(spec)
    }

    /// Looks up, checks and parses one command line (or queues it inside MULTI).
    fn prepare(&mut self, argv: Vec<Bytes>) -> Step {
        let table = Table::get();
        let Some((mut idx, mut spec)) = table.lookup(&argv[0]) else {
            self.flag_multi();
            return Step::Reply(unknown_command(&argv[0], &argv[1..]).to_frame());
        };
        let mut skip = 1;
        // A container whose arity allows no subcommand (COMMAND) runs its own parse.
        if !(spec.subcommands.is_empty() || argv.len() < 2 && spec.arity_ok(argv.len())) {
            if argv.len() < 2 {
                self.flag_multi();
                return Step::Reply(CmdError::WrongArity(spec.name.into()).to_frame());
            }
            match table.lookup_sub(spec, &argv[1]) {
                Some((i, s)) => {
                    idx = i;
                    spec = s;
                    skip = 2;
                }
                None => {
                    self.flag_multi();
                    return Step::Reply(unknown_subcommand(spec.name, &argv[1]).to_frame());
                }
            }
        }
        // Subcommand arity counts the parent's name too, as in Redis.
        if !spec.arity_ok(argv.len()) {
            self.reject(idx);
            self.flag_multi();
            return self.rejected(spec, CmdError::WrongArity(spec.name.into()));
        }
        // DEBUG (and MODULE's loading subcommands) only when a setting allows them, as in
        // Redis 7.0: checked before authentication.
        if let Some((what, setting)) = protected(spec.name) {
            if !self.protected_allowed(setting) {
                self.reject(idx);
                self.flag_multi();
                let e = CmdError::err(format!("{what} command not allowed. If the {setting} option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."));
                return self.rejected(spec, e);
            }
        }
        if !self.authed && !spec.has("no_auth") {
            self.reject(idx);
            self.flag_multi();
            return self.rejected(spec, CmdError::NoAuth);
        }
        if self.multi.is_some() && spec.has("no_multi") {
            self.reject(idx);
            self.flag_multi();
            return Step::Reply(
                CmdError::err("Command not allowed inside a transaction").to_frame(),
            );
        }
        // ACL: one atomic load for a user that may run anything (the default user).
        if !self.user.unrestricted() {
            if let Err(d) = self.user.check(idx, spec, &argv) {
                self.reject(idx);
                let context = if self.multi.is_some() {
                    "multi"
                } else {
                    "toplevel"
                };
                let object = d.object(spec, &argv);
                acl_log(
                    &self.server,
                    &self.info,
                    d.reason(),
                    context,
                    object,
                    &self.user.name,
                );
                self.flag_multi();
                return self.rejected(spec, CmdError::text(d.noperm(spec)));
            }
        }
        // A replica refuses writes (READONLY), answers MASTERDOWN while its link is down if
        // told to, and LOADING during a full sync's load, in Redis's order around the
        // subscribed-context check.
        if let Some(e) = self.server.replication.refuse(&self.server, spec) {
            self.reject(idx);
            self.flag_multi();
            return self.rejected(spec, e);
        }
        if self.proto == Protocol::Resp2 && self.subs.any() && !allowed_subscribed(spec.name) {
            self.reject(idx);
            self.flag_multi();
            let e = CmdError::err(format!(
                "Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context",
                spec.name
            ));
            return self.rejected(spec, e);
        }
        // A monitor is a replica to Redis: it may not touch the keyspace, nor run what may
        // replicate (Redis's internal MAY_REPLICATE flag, which COMMAND INFO does not show).
        if self.monitor
            && (spec.has("write") || spec.has("readonly") || MAY_REPLICATE.contains(&spec.name))
        {
            self.reject(idx);
            self.flag_multi();
            return self.rejected(
                spec,
                CmdError::err("Replica can't interact with the keyspace"),
            );
        }
        // A script past busy-reply-threshold holds the writer: Redis answers BUSY to all but
        // a few commands (those flagged `allow_busy`) until it ends or is killed. Like Redis,
        // after the arity, auth, ACL and subscribed-context checks, and as a rejection (EXEC
        // aborts the transaction, a queued command flags it).
        if let Some(busy) = self.server.scripting.run.busy_error() {
            let nosave = argv
                .iter()
                .skip(1)
                .any(|a| a.eq_ignore_ascii_case(b"nosave"));
            if !crate::script::ALLOW_BUSY.contains(&spec.name) || spec.name == "shutdown" && !nosave
            {
                self.reject(idx);
                self.flag_multi();
                return self.rejected(spec, CmdError::text(busy));
            }
            if spec.name == "shutdown" {
                // SHUTDOWN NOSAVE stops the script the hard way: nothing it wrote is kept.
                self.server.scripting.run.abort();
            }
        }
        if self.tracking.is_some() {
            self.track_reads(spec, &argv);
        }
        if let Some(m) = &mut self.multi {
            if !matches!(
                spec.name,
                "exec" | "discard" | "multi" | "watch" | "quit" | "reset"
            ) {
                m.queued.push(argv);
                self.info
                    .multi
                    .store(m.queued.len() as i64, Ordering::Relaxed);
                return Step::Reply(Frame::Simple(Bytes::from_static(b"QUEUED")));
            }
        }
        self.note_command(spec);
        let keys = if spec.unblocks {
            spec.keys_of(&argv)
                .into_iter()
                .map(|i| argv[i].clone())
                .collect()
        } else {
            Vec::new()
        };
        let line = self
            .server
            .observe
            .slowlog
            .enabled()
            .then(|| Line::new(&argv, Some(self.info.clone())));
        let started = Instant::now();
        let shown =
            (self.server.monitors.active() && crate::monitor::shown(spec)).then(|| argv.clone());
        let parsed = parse(spec, argv, skip);
        if let Some(argv) = shown {
            // Connection commands show once they have run, but blocking ones, which show as
            // they start waiting; the rest as they are handed to the engine (a script's line
            // comes before the lines of the commands it runs).
            if matches!(parsed, Ok(Parsed::Conn(_))) && !spec.has("blocking") {
                self.monitor_after = Some(argv);
            } else {
                self.feed_monitors(self.db, &argv);
            }
        }
        match parsed {
            Ok(Parsed::Read(c)) => Step::Read(c, idx, line),
            Ok(Parsed::Write(c)) => Step::Write((c, idx, keys, line)),
            Ok(Parsed::Conn(c)) => Step::Conn(c, idx, line),
            Err(e) => {
                // Redis checks arguments inside the command: the call counts, and fails.
                record(&self.server, idx, started, true, line.as_ref());
                Step::Reply(e.to_frame())
            }
        }
    }

    /// Client-side caching: remembers the keys a read-only command reads (or a script's
    /// declared keys) for this tracking client, in the default mode, as Redis's
    /// `trackingRememberKeys` after the command. Done before the command runs, so a write
    /// that lands in between still invalidates the value read; then clears CLIENT CACHING
    /// (kept across CLIENT subcommands and a transaction being queued, as in Redis).
    fn track_reads(&mut self, spec: &'static Spec, argv: &[Bytes]) {
        let Some(t) = &self.tracking else {
            return;
        };
        let queued = self.multi.is_some()
            && !matches!(
                spec.name,
                "exec" | "discard" | "multi" | "watch" | "quit" | "reset"
            );
        // OPTIN remembers only after CACHING YES, OPTOUT all but after CACHING NO.
        let wanted = if t.optin {
            self.caching
        } else {
            !(t.optout && self.caching)
        };
        if !queued && !t.bcast && wanted {
            // Redis remembers the declared keys of a script that reads through redis.call
            // (its own EVAL_RO/FCALL_RO count as scripts too); Relis remembers them for every
            // script run, which can only add invalidations.
            let script = matches!(
                spec.name,
                "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro"
            );
            if script || spec.has("readonly") {
                let keys: Vec<Bytes> = spec
                    .keys_of(argv)
                    .into_iter()
                    .filter_map(|i| argv.get(i).cloned())
                    .collect();
                if !keys.is_empty() {
                    let ps = &self.server.pubsub;
                    ps.tracking.remember(self.info.id, &keys, ps.push_limits());
                }
            }
        }
        // Redis clears it after each command but CLIENT's, unless a transaction is open
        // (MULTI opens one).
        if self.multi.is_none() && spec.name != "multi" && !spec.name.starts_with("client|") {
            self.caching = false;
        }
    }

    /// Remembers the keys of the read-only commands of a transaction about to run (EXEC), as
    /// [`Client::track_reads`] for each, and ends CLIENT CACHING.
    pub fn track_transaction(&mut self, queued: &[Vec<Bytes>]) {
        if self.tracking.is_none() {
            return;
        }
        let multi = self.multi.take();
        let table = Table::get();
        for argv in queued {
            let Some((_, mut spec)) = table.lookup(&argv[0]) else {
                continue;
            };
            if !spec.subcommands.is_empty() && argv.len() > 1 {
                match table.lookup_sub(spec, &argv[1]) {
                    Some((_, s)) => spec = s,
                    None => continue,
                }
            }
            let caching = self.caching;
            self.track_reads(spec, argv);
            self.caching = caching;
        }
        self.multi = multi;
        self.caching = false;
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

    /// The reply to a command rejected before it ran. Like Redis's `rejectCommand`, a rejected
    /// EXEC discards the transaction (and the watched keys), in MULTI or not, and says so:
    /// `EXECABORT Transaction discarded because of: <the error without its ERR>`.
    fn rejected(&mut self, spec: &Spec, e: CmdError) -> Step {
        if spec.name != "exec" {
            return Step::Reply(e.to_frame());
        }
        self.multi = None;
        self.watched.clear();
        self.info.multi.store(-1, Ordering::Relaxed);
        let msg = e.message();
        let msg = msg.strip_prefix("ERR ").unwrap_or(&msg);
        Step::Reply(
            CmdError::text(format!("EXECABORT Transaction discarded because of: {msg}")).to_frame(),
        )
    }

    /// Whether the protected command guarded by `setting` may run for this client: the
    /// setting is `yes`, or `local` and the client is on the loopback.
    fn protected_allowed(&self, setting: &str) -> bool {
        match self.server.config.read().get(setting).as_deref() {
            Some("yes") => true,
            Some("local") => self.info.addr.ip().is_loopback(),
            _ => false,
        }
    }

    fn note_command(&self, spec: &'static Spec) {
        *self.info.last_cmd.lock() = spec.name;
        self.info.last_active_ms.store(
            self.info.created.elapsed().as_millis() as u64,
            Ordering::Relaxed,
        );
    }

    fn flag_multi(&mut self) {
        if let Some(m) = &mut self.multi {
            m.dirty = true;
        }
    }

    fn reject(&self, idx: usize) {
        self.server.cmd_stats[idx]
            .rejected_calls
            .fetch_add(1, Ordering::Relaxed);
    }

    /// Runs command lines from the front of `reqs`, appending every reply to `out`, until
    /// `reqs` is empty or [`OUT_CHUNK`] bytes of replies are waiting (the caller writes them,
    /// then calls again for the rest: a pipeline of large replies never sits in memory whole).
    pub async fn run_batch(&mut self, reqs: &mut VecDeque<Vec<Bytes>>, out: &mut BytesMut) {
        let mut group = Group::None;
        while let Some(argv) = reqs.pop_front() {
            if self.quit {
                reqs.clear();
                break;
            }
            if out.len() >= OUT_CHUNK {
                reqs.push_front(argv);
                break;
            }
            if self.server.pause.active() {
                if let Some(spec) = self.pausable(&argv) {
                    // What came before runs first, and its replies go out (the caller writes
                    // them and calls again); then this one waits for the pause to end.
                    self.run_group(&mut group, out).await;
                    if !out.is_empty() && self.server.pause.holds_now(spec) {
                        reqs.push_front(argv);
                        break;
                    }
                    let server = self.server.clone();
                    server.pause.wait(spec).await;
                }
            }
            self.server
                .stats
                .total_commands_processed
                .fetch_add(1, Ordering::Relaxed);
            match self.prepare(argv) {
                Step::Reply(f) => {
                    self.run_group(&mut group, out).await;
                    self.emit_one(&f, out);
                }
                Step::Read(c, idx, line) => {
                    // A group's replies are produced at once: a bounded group bounds them.
                    let full = matches!(&group, Group::Reads(v) if v.len() >= READ_GROUP_MAX);
                    if full || !matches!(group, Group::Reads(_)) {
                        self.run_group(&mut group, out).await;
                        group = Group::Reads(Vec::new());
                    }
                    if let Group::Reads(v) = &mut group {
                        v.push((c, idx, line));
                    }
                }
                Step::Write(queued) => {
                    // A tracking client's own invalidations follow the reply of the write that
                    // caused them: its writes go to the engine one by one (Redis's order).
                    let alone = self.tracking.as_ref().is_some_and(|t| !t.noloop);
                    if !matches!(group, Group::Writes(_)) || alone {
                        self.run_group(&mut group, out).await;
                        group = Group::Writes(Vec::new());
                    }
                    if let Group::Writes(v) = &mut group {
                        v.push(queued);
                    }
                }
                Step::Conn(c, idx, line) => {
                    self.run_group(&mut group, out).await;
                    let t = Instant::now();
                    self.blocked_for = std::time::Duration::ZERO;
                    self.timed_out = false;
                    let r = c.exec(self).await;
                    // A blocked command's own time leaves out its wait; one that timed out is
                    // not slow-logged (Redis 7.0).
                    let line = line.filter(|_| !self.timed_out);
                    record_took(
                        &self.server,
                        idx,
                        t.elapsed().saturating_sub(self.blocked_for),
                        r.is_err(),
                        line.as_ref(),
                    );
                    if let Some(argv) = self.monitor_after.take() {
                        self.feed_monitors(self.db, &argv);
                    }
                    let f = r.unwrap_or_else(|e| e.to_frame());
                    for p in std::mem::take(&mut self.pushed) {
                        self.emit(&p, out);
                    }
                    self.emit_one(&f, out);
                }
            }
        }
        self.run_group(&mut group, out).await;
        if self.quit {
            reqs.clear();
        }
    }

    /// Emits one command's reply, honouring CLIENT REPLY SKIP for exactly one command.
    fn emit_one(&mut self, f: &Frame, out: &mut BytesMut) {
        // Messages published to this client before the reply go out first, as in Redis (a
        // RESP3 client that publishes to its own channel gets the message, then the count).
        self.take_messages(out);
        self.emit(f, out);
        if self.mailbox_used {
            // A client's own invalidations follow the reply of the command that caused them.
            self.info.pubsub.take_after(out);
        }
        match self.reply_mode {
            ReplyMode::Skipping => self.reply_mode = ReplyMode::On,
            ReplyMode::Skip => self.reply_mode = ReplyMode::Skipping,
            _ => {}
        }
    }

    async fn run_group(&mut self, group: &mut Group, out: &mut BytesMut) {
        match std::mem::replace(group, Group::None) {
            Group::None => {}
            Group::Reads(mut cmds) => {
                let cx = self.cx();
                let table = Table::get();
                if cmds
                    .iter()
                    .all(|(c, idx, _)| table.specs[*idx].has("fast") || c.inline())
                {
                    // O(1)/O(log n) or small bounded reads: a thread hop would cost more.
                    let done = self.server.db.read_here(|r| {
                        let mut frames = Vec::with_capacity(cmds.len());
                        for (c, idx, line) in &cmds {
                            let t = Instant::now();
                            let res = c.exec(r, &cx);
                            if let Err(CmdError::Deferred) = res {
                                // Too long to run here: it and the rest go to a reader.
                                break;
                            }
                            record(&cx.server, *idx, t, res.is_err(), line.as_ref());
                            frames.push(res.unwrap_or_else(|e| e.to_frame()));
                        }
                        frames
                    });
                    self.read_here |= done.is_some();
                    match done {
                        Some(Ok(frames)) if frames.len() == cmds.len() => {
                            self.deliver(frames.len(), Ok(Ok(frames)), out);
                            return;
                        }
                        Some(Ok(frames)) => {
                            cmds.drain(..frames.len());
                            self.deliver(frames.len(), Ok(Ok(frames)), out);
                        }
                        Some(Err(e)) => {
                            self.deliver(cmds.len(), Ok(Err(e)), out);
                            return;
                        }
                        None => {}
                    }
                }
                let n = cmds.len();
                let (tx, rx) = oneshot::channel();
                self.server.db.read_async(
                    move |r| {
                        cmds.into_iter()
                            .map(|(c, idx, line)| {
                                let t = Instant::now();
                                let res = c.exec(r, &cx);
                                record(&cx.server, idx, t, res.is_err(), line.as_ref());
                                res.unwrap_or_else(|e| e.to_frame())
                            })
                            .collect::<Vec<Frame>>()
                    },
                    move |res| {
                        let _ = tx.send(res);
                    },
                );
                self.deliver(n, rx.await, out);
            }
            Group::Writes(cmds) => {
                let n = cmds.len();
                let cx = self.cx();
                let (tx, rx) = oneshot::channel();
                self.server.db.write_async(
                    move |w| {
                        w.set_origin(cx.client_id);
                        let mut served = Vec::new();
                        let frames = cmds
                            .into_iter()
                            .map(|(c, idx, keys, line)| {
                                run_write(w, &cx, &*c, idx, &keys, line.as_ref(), &mut served)
                            })
                            .collect::<Vec<Frame>>();
                        (frames, served)
                    },
                    move |res| {
                        let _ = tx.send(res);
                    },
                );
                let res = rx.await.map(|r| {
                    r.map(|(frames, served)| {
                        crate::blocking::deliver(served, Ok(()));
                        frames
                    })
                });
                self.deliver(n, res, out);
            }
        }
    }

    fn deliver(
        &mut self,
        n: usize,
        res: Result<relis::Result<Vec<Frame>>, oneshot::error::RecvError>,
        out: &mut BytesMut,
    ) {
        match res {
            Ok(Ok(frames)) => {
                for f in &frames {
                    self.emit_one(f, out);
                }
            }
            Ok(Err(e)) => {
                let f = CmdError::from(e).to_frame();
                for _ in 0..n {
                    self.emit_one(&f, out);
                }
            }
            Err(_) => {
                let f = CmdError::from(relis::Error::Closed).to_frame();
                for _ in 0..n {
                    self.emit_one(&f, out);
                }
            }
        }
    }
}

impl Client {
    /// Moves published messages (and other pushes) waiting in the mailbox to `out`, but those
    /// waiting for the next reply: they are not replies, so CLIENT REPLY OFF does not drop
    /// them (Redis 7.0 sends them too).
    pub fn take_messages(&mut self, out: &mut BytesMut) {
        if self.mailbox_used {
            self.info.pubsub.take_before(out);
        }
    }
}

/// Records a denial in ACL LOG with the client's CLIENT LIST line.
pub fn acl_log(
    server: &Shared,
    info: &ClientInfo,
    reason: &'static str,
    context: &'static str,
    object: String,
    username: &str,
) {
    let mut line = String::new();
    crate::cmd::conn::client_list::write_line(&mut line, info);
    line.pop();
    server.acl.log(crate::acl::LogEntry {
        count: 1,
        reason,
        context,
        object,
        username: username.to_string(),
        ctime_ms: crate::server::unix_ms(),
        client_info: line,
    });
}

/// The commands a RESP2 connection with subscriptions may run (Redis's list).
fn allowed_subscribed(name: &str) -> bool {
    matches!(
        name,
        "ping"
            | "subscribe"
            | "ssubscribe"
            | "unsubscribe"
            | "sunsubscribe"
            | "psubscribe"
            | "punsubscribe"
            | "quit"
            | "reset"
    )
}

/// How a reply write ended.
#[derive(Debug, PartialEq, Eq)]
enum Written {
    /// Every byte went to the socket.
    All,
    /// The client was killed meanwhile.
    Killed,
    /// The unsent bytes stayed over `client-output-buffer-limit`'s soft limit for its seconds.
    OverSoftLimit,
    /// The socket took nothing for `timeout` seconds.
    Idle,
}

/// Writes `buf`, unless the client is killed first (a subscriber past its output-buffer limit
/// may never read: its write must not hold the connection open) or, with a soft output limit,
/// the unsent part stays over it for longer than the limit's seconds. While it writes, the
/// connection reads nothing more from the client: a client that does not read its replies
/// stops being served (backpressure) instead of making the server buffer them.
async fn write_out<W: AsyncWrite + Unpin>(
    stream: &mut W,
    buf: &[u8],
    info: &ClientInfo,
    limit: crate::pubsub::BufferLimit,
    idle_secs: u64,
) -> std::io::Result<Written> {
    let mut pos = 0;
    // `timeout` also ends a client that stops taking its replies (Redis counts a write as
    // interaction, so a client whose socket takes nothing for that long is idle).
    let idle_for = (idle_secs > 0).then(|| std::time::Duration::from_secs(idle_secs));
    let mut idle_at = idle_for.map(|d| tokio::time::Instant::now() + d);
    let soft_over = |pos: usize| limit.soft > 0 && counted(buf.len() - pos) >= limit.soft;
    let mut deadline = soft_over(0)
        .then(|| tokio::time::Instant::now() + std::time::Duration::from_secs(limit.soft_secs));
    while pos < buf.len() {
        info.omem.store((buf.len() - pos) as u64, Ordering::Relaxed);
        let soft = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        let idle = async {
            match idle_at {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            r = stream.write(&buf[pos..]) => {
                match r? {
                    0 => return Err(std::io::ErrorKind::WriteZero.into()),
                    n => pos += n,
                }
                if !soft_over(pos) {
                    deadline = None;
                }
                idle_at = idle_for.map(|d| tokio::time::Instant::now() + d);
            }
            _ = info.kill.notified() => return Ok(Written::Killed),
            _ = soft => return Ok(Written::OverSoftLimit),
            _ = idle => return Ok(Written::Idle),
        }
    }
    // A TLS session may hold back what it could not write yet (for TCP this does nothing).
    stream.flush().await?;
    info.omem.store(0, Ordering::Relaxed);
    Ok(Written::All)
}

/// Writes the replies in `out` (and empties it) under `client-output-buffer-limit normal`;
/// returns `false` when the connection must close (over a limit, killed, or idle past
/// `timeout` while the client does not read).
async fn flush<W: AsyncWrite + Unpin>(
    stream: &mut W,
    client: &mut Client,
    out: &mut BytesMut,
    idle: u64,
) -> std::io::Result<bool> {
    if out.is_empty() {
        return Ok(true);
    }
    let server = &client.server;
    let info = &client.info;
    // The normal class (none by default, as in Redis) applies to clients without
    // subscriptions; the pubsub class is enforced by their mailbox.
    let limit = if client.subs.any() {
        crate::pubsub::BufferLimit {
            hard: 0,
            soft: 0,
            soft_secs: 0,
        }
    } else {
        server.pubsub.normal_limit.load()
    };
    // Redis checks the limit as replies pile up, before writing them: replies produced at once
    // over the hard limit close the client without any of them being sent.
    if limit.hard > 0 && counted(out.len()) >= limit.hard {
        log_over_limit(info);
        return Ok(false);
    }
    server
        .stats
        .net_output_bytes
        .fetch_add(out.len() as u64, Ordering::Relaxed);
    server
        .stats
        .total_writes_processed
        .fetch_add(1, Ordering::Relaxed);
    match write_out(stream, out, info, limit, idle).await? {
        Written::All => {}
        Written::Killed => return Ok(false),
        Written::OverSoftLimit => {
            log_over_limit(info);
            return Ok(false);
        }
        Written::Idle => {
            tracing::debug!("closing idle client {} (not reading its replies)", info.id);
            return Ok(false);
        }
    }
    out.clear();
    if client.mailbox_used {
        info.pubsub.written();
    }
    // A burst of large replies or messages must not pin its buffer for the connection's life.
    if out.capacity() > 1 << 20 {
        *out = BytesMut::new();
    }
    Ok(true)
}

/// Redis's per-client reply buffer (16 KiB): replies that fit in it are not counted by
/// `client-output-buffer-limit`, only what overflows into its reply list.
const REPLY_BUF: usize = 16 * 1024;

/// The unsent reply bytes `client-output-buffer-limit` counts, as Redis counts them.
fn counted(unsent: usize) -> u64 {
    unsent.saturating_sub(REPLY_BUF) as u64
}

/// Logs (as Redis does) that a client goes for overcoming its output buffer limit.
fn log_over_limit(info: &ClientInfo) {
    tracing::warn!(
        "Client id={} addr={} closed for overcoming of output buffer limits.",
        info.id,
        info.addr
    );
}

/// Writes `buf` and flushes: a TLS session may hold back what it could not write yet (for a
/// TCP socket the flush does nothing).
async fn write_flush<W: AsyncWrite + Unpin>(stream: &mut W, buf: &[u8]) -> std::io::Result<()> {
    stream.write_all(buf).await?;
    stream.flush().await
}

/// The commands Redis 7.0 flags MAY_REPLICATE (besides its write commands): they may change
/// what replicas hold, so a replica (or a monitor) may not send them.
pub(crate) const MAY_REPLICATE: &[&str] =
    &["eval", "evalsha", "fcall", "publish", "spublish", "pfcount"];

/// The commands Redis 7.0 flags `protected`: (the name its refusal gives, the setting that
/// allows them).
fn protected(name: &str) -> Option<(&'static str, &'static str)> {
    match name {
        "debug" => Some(("DEBUG", crate::cmd::server::debug::SETTING)),
        "module|load" | "module|loadex" | "module|unload" => {
            Some(("MODULE", "enable-module-command"))
        }
        _ => None,
    }
}

/// Parses a checked command line with its spec.
pub fn parse(spec: &'static Spec, mut argv: Vec<Bytes>, skip: usize) -> Result<Parsed, CmdError> {
    // The command's (or the subcommand's) name as the client spelled it.
    let sent = skip.checked_sub(1).and_then(|i| argv.get(i)).cloned();
    argv.drain(..skip);
    let mut args = Args::new(spec.name, argv);
    if let Some(sent) = sent {
        args.set_sent_name(sent);
    }
    (spec.parse)(&mut args)
}

impl Client {
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

    /// Runs a blocking command: its non-blocking form `serve` first (on the writer); if that
    /// finds nothing, waits on `keys` until a write serves it, `timeout` passes (reply
    /// `on_timeout`), the client is unblocked (CLIENT UNBLOCK), or the client goes away.
    ///
    /// # Errors
    /// The serving command's error, or a commit error.
    pub async fn block_on(
        &mut self,
        keys: Vec<Bytes>,
        timeout: Option<std::time::Duration>,
        serve: crate::blocking::TryServe,
        on_timeout: Frame,
    ) -> Result<Frame, CmdError> {
        let (waiter, rx) =
            crate::blocking::Waiter::new(self.info.id, self.db, self.proto, keys, serve);
        let cx = self.cx();
        let (tx, first) = oneshot::channel();
        let w2 = waiter.clone();
        self.server.db.write_async(
            move |w| {
                w.set_origin(cx.client_id);
                let mut served = Vec::new();
                let res = w.atomic(|w| (w2.serve)(w, &cx, None));
                let out = match res {
                    Ok(Some(done)) => {
                        // Served at once; what it wrote may unblock others (BLMOVE).
                        if !done.touched.is_empty() && !cx.server.blocking.is_empty() {
                            cx.server
                                .blocking
                                .serve(w, &cx, cx.db, &done.touched, &mut served);
                        }
                        Ok(Some(done.reply))
                    }
                    Ok(None) => {
                        cx.server.blocking.register(w2);
                        Ok(None)
                    }
                    Err(e) => Err(e),
                };
                (out, served)
            },
            move |r| {
                let _ = tx.send(r);
            },
        );
        let (out, served) = first
            .await
            .map_err(|_| CmdError::from(relis::Error::Closed))?
            .map_err(CmdError::from)?;
        crate::blocking::deliver(served, Ok(()));
        if let Some(reply) = out? {
            return Ok(reply);
        }
        let id = waiter.id;
        drop(waiter);
        let blocking = self.server.clone();
        let deadline = async {
            match timeout {
                Some(d) => tokio::time::sleep(d).await,
                None => std::future::pending().await,
            }
        };
        let closed = |_| Err(CmdError::from(relis::Error::Closed));
        let info = self.info.clone();
        let mut stop = self.server.shutdown_signal();
        let stopping = async move {
            loop {
                let now = *stop.borrow_and_update();
                if now {
                    break;
                }
                if stop.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
        };
        tokio::pin!(rx);
        info.blocked.store(true, Ordering::Relaxed);
        let waiting = Instant::now();
        let mut timed_out = false;
        let reply = tokio::select! {
            r = &mut rx => r.unwrap_or_else(closed),
            _ = deadline => {
                if blocking.blocking.remove(id) {
                    timed_out = true;
                    Ok(on_timeout)
                } else {
                    // Served (or unblocked) just as time ran out: its reply is on the way.
                    rx.await.unwrap_or_else(closed)
                }
            }
            _ = self.peer_closed() => {
                blocking.blocking.remove(id);
                self.quit = true;
                Ok(Frame::Null)
            }
            // CLIENT KILL and SHUTDOWN end a blocked client at once, as in Redis: it must not
            // stay registered (it would take an element nobody receives), and it gets no reply.
            _ = info.kill.notified() => {
                blocking.blocking.remove(id);
                self.quit = true;
                self.reply_mode = ReplyMode::Off;
                Ok(Frame::Null)
            }
            _ = stopping => {
                blocking.blocking.remove(id);
                self.quit = true;
                self.reply_mode = ReplyMode::Off;
                Ok(Frame::Null)
            }
        };
        info.blocked.store(false, Ordering::Relaxed);
        self.blocked_for += waiting.elapsed();
        self.timed_out |= timed_out;
        reply
    }
}

/// Runs one write command on the writer inside its savepoint, then serves the clients blocked
/// on the keys it may have fed (their replies are collected in `served`, for after the commit):
/// `keys`, its spec's keys in the connection's database, and every key it created in any
/// database (Redis signals a key ready in `dbAdd`: pushes, STORE destinations, MOVE, COPY,
/// RENAME, the SQL morph commands, ...).
pub fn run_write(
    w: &mut relis::Writer<'_>,
    cx: &Cx,
    cmd: &dyn WriteCmd,
    idx: usize,
    keys: &[Bytes],
    line: Option<&Line>,
    served: &mut Vec<crate::blocking::Delivery>,
) -> Frame {
    if cx.server.blocking.is_empty() {
        return run_write_feeding(w, cx, cmd, idx, line, None);
    }
    let mut ready: Vec<(u32, Bytes)> = keys.iter().map(|k| (cx.db, k.clone())).collect();
    let reply = run_write_feeding(w, cx, cmd, idx, line, Some(&mut ready));
    if !matches!(reply, Frame::Error(_)) {
        serve_ready(w, cx, ready, served);
    }
    reply
}

/// Serves the clients blocked on `ready` keys, in order (see [`crate::blocking::Blocking::serve`]).
pub fn serve_ready(
    w: &mut relis::Writer<'_>,
    cx: &Cx,
    ready: Vec<(u32, Bytes)>,
    served: &mut Vec<crate::blocking::Delivery>,
) {
    for (db, key) in ready {
        let cx = Cx { db, ..cx.clone() };
        cx.server.blocking.serve(w, &cx, db, &[key], served);
    }
}

/// Runs one write command on the writer (inside its savepoint if it needs one); with `ready`,
/// adds the keys it created to it (on success), for the caller to serve blocked clients from.
/// `line` is the command line, for the slow log.
pub fn run_write_feeding(
    w: &mut relis::Writer<'_>,
    cx: &Cx,
    cmd: &dyn WriteCmd,
    idx: usize,
    line: Option<&Line>,
    ready: Option<&mut Vec<(u32, Bytes)>>,
) -> Frame {
    if ready.is_some() {
        w.watch_new_keys(true);
    }
    let t = Instant::now();
    let res = if cmd.needs_savepoint() {
        w.atomic(|w| cmd.exec(w, cx))
    } else {
        cmd.exec(w, cx)
    };
    if let Err(CmdError::Storage(e)) = &res {
        // The storage failed under this command (without a savepoint it may have written half
        // of its work; with one, SQLite may have rolled back more than it): the whole group
        // commit is abandoned and every write in it fails.
        w.poison(e.clone());
    }
    record(&cx.server, idx, t, res.is_err(), line);
    if let Some(ready) = ready {
        let created = w.take_new_keys();
        w.watch_new_keys(false);
        if res.is_ok() {
            add_ready(ready, created);
        }
    }
    res.unwrap_or_else(|e| e.to_frame())
}

/// Adds the keys a write made ready to `ready`, each once (XADD both names its key and notes it
/// ready), so that no blocked client's serve runs twice for one write.
fn add_ready(ready: &mut Vec<(u32, Bytes)>, made: Vec<(u32, Vec<u8>)>) {
    // A write names a key or two: a linear look. A script or morph command that creates many
    // keys gets a set, so its cost stays linear.
    if ready.len() + made.len() <= 16 {
        for (db, key) in made {
            if !ready.iter().any(|(d, k)| *d == db && k[..] == key[..]) {
                ready.push((db, Bytes::from(key)));
            }
        }
        return;
    }
    let mut seen: std::collections::HashSet<(u32, Bytes)> = ready.iter().cloned().collect();
    for (db, key) in made {
        let key = Bytes::from(key);
        if seen.insert((db, key.clone())) {
            ready.push((db, key));
        }
    }
}

/// Records one execution of the command at table index `idx`, which started at `started`, in
/// INFO commandstats, its latency histogram, the latency monitor and (given its `line`) the
/// slow log.
pub fn record(server: &Shared, idx: usize, started: Instant, failed: bool, line: Option<&Line>) {
    record_took(server, idx, started.elapsed(), failed, line);
}

/// [`record`] for a command that took `took` of its own time.
pub fn record_took(
    server: &Shared,
    idx: usize,
    took: std::time::Duration,
    failed: bool,
    line: Option<&Line>,
) {
    let micros = took.as_micros() as u64;
    let s = &server.cmd_stats[idx];
    s.calls.fetch_add(1, Ordering::Relaxed);
    s.usec.fetch_add(micros, Ordering::Relaxed);
    if failed {
        s.failed_calls.fetch_add(1, Ordering::Relaxed);
    }
    server.observe.command(idx, micros, line);
}

/// Sets up an accepted socket as Redis does: no Nagle delay, and with `keepalive` seconds (0 =
/// off) TCP keepalive probing after that much idle time, every third of it, three probes
/// (Redis's `anetKeepAlive`), so a peer that vanished without a FIN is noticed and closed.
///
/// # Errors
/// A `setsockopt` failure.
pub fn configure_socket(stream: &TcpStream, keepalive: u64) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    if keepalive > 0 {
        let idle = std::time::Duration::from_secs(keepalive);
        let every = std::time::Duration::from_secs((keepalive / 3).max(1));
        let params = socket2::TcpKeepalive::new()
            .with_time(idle)
            .with_interval(every)
            .with_retries(3);
        socket2::SockRef::from(stream).set_tcp_keepalive(&params)?;
    }
    Ok(())
}

/// [`configure_socket`] with the server's `tcp-keepalive`, logging a failure.
fn setup_socket(stream: &TcpStream, peer: &SocketAddr, server: &Shared) {
    let keepalive = server.config.read().tcp_keepalive;
    if let Err(e) = configure_socket(stream, keepalive) {
        tracing::debug!("configuring the socket of {peer}: {e}");
    }
}

/// Serves one plain TCP connection until it closes, is killed, or the server shuts down.
pub async fn serve(stream: TcpStream, peer: SocketAddr, server: Arc<Shared>) {
    setup_socket(&stream, &peer, &server);
    let laddr = stream.local_addr().unwrap_or(server.addr);
    let fd = std::os::fd::AsRawFd::as_raw_fd(&stream);
    // The halves of a TCP socket need no lock between them (tokio::io::split would add one).
    let (rd, wr) = stream.into_split();
    serve_stream(Box::new(rd), wr, peer, laddr, fd, server).await;
}

/// Serves one TLS connection: the handshake first (in the connection's own task, so a slow
/// client holds up nobody), then exactly what a plain connection runs.
pub async fn serve_tls(
    stream: TcpStream,
    peer: SocketAddr,
    server: Arc<Shared>,
    acceptor: crate::tls::TlsAcceptor,
) {
    setup_socket(&stream, &peer, &server);
    let laddr = stream.local_addr().unwrap_or(server.addr);
    let fd = std::os::fd::AsRawFd::as_raw_fd(&stream);
    // A client that never finishes its handshake is an idle client: `timeout` closes it.
    let idle = server.config.read().timeout;
    let handshake = async {
        tokio::select! {
            r = acceptor.accept(stream) => r,
            _ = idle_timer(idle) => Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "no TLS handshake within the idle timeout",
            )),
        }
    };
    let tls = match handshake.await {
        Ok(tls) => tls,
        Err(e) => {
            // Redis logs a failed handshake at verbose level (below the default) and drops
            // the connection; Relis's verbose is its default, so this goes to debug.
            tracing::debug!("Error accepting a client connection: {e} (addr={peer} laddr={laddr})");
            return;
        }
    };
    let (rd, wr) = tokio::io::split(tls);
    serve_stream(Box::new(rd), wr, peer, laddr, fd, server).await;
}

/// Whether Redis 7.0's protected mode counts `ip` as local: only 127.0.0.1 and ::1 (the rest
/// of 127/8 is not). An IPv4-mapped 127.0.0.1 counts too: Redis's IPv6 sockets are IPv6-only,
/// so there it arrives as plain IPv4.
pub fn is_loopback_client(ip: std::net::IpAddr) -> bool {
    match ip.to_canonical() {
        std::net::IpAddr::V4(v4) => v4 == std::net::Ipv4Addr::LOCALHOST,
        std::net::IpAddr::V6(v6) => v6 == std::net::Ipv6Addr::LOCALHOST,
    }
}

/// Serves one connection, whatever its stream, until it closes, is killed, or the server
/// shuts down.
async fn serve_stream<W: AsyncWrite + Unpin>(
    rd: Box<dyn ConnRead>,
    mut wr: W,
    peer: SocketAddr,
    laddr: SocketAddr,
    fd: i32,
    server: Arc<Shared>,
) {
    let (maxclients, protected) = {
        let c = server.config.read();
        (c.maxclients, c.protected_mode)
    };
    let user = server.acl.default_user();
    let id = server.next_client_id();
    let info = Arc::new(ClientInfo {
        id,
        addr: peer,
        laddr,
        fd,
        created: Instant::now(),
        name: Mutex::new(None),
        lib: Mutex::new((String::new(), String::new())),
        db: AtomicU32::new(0),
        resp: AtomicU8::new(2),
        last_cmd: Mutex::new("NULL"),
        user: Mutex::new("default".into()),
        last_active_ms: AtomicU64::new(0),
        multi: AtomicI64::new(-1),
        killed: AtomicBool::new(false),
        kill: Notify::new(),
        qbuf: AtomicU64::new(0),
        omem: AtomicU64::new(0),
        no_evict: AtomicBool::new(false),
        no_touch: AtomicBool::new(false),
        blocked: AtomicBool::new(false),
        pubsub: Default::default(),
        monitor: AtomicBool::new(false),
        tracking_redir: AtomicI64::new(-1),
        tracking_flags: AtomicU8::new(0),
    });
    let admitted = {
        let mut clients = server.clients.lock();
        let ok = clients.len() < maxclients;
        if ok {
            clients.insert(id, info.clone());
            server.connected.store(clients.len(), Ordering::Relaxed);
        }
        ok
    };
    if !admitted {
        server
            .stats
            .rejected_connections
            .fetch_add(1, Ordering::Relaxed);
        let _ = write_flush(&mut wr, crate::error::MAX_CLIENTS).await;
        return;
    }
    // Protected mode, checked as Redis does once the connection is set up (after the TLS
    // handshake): while the default user is `nopass` (no `requirepass`, no ACL password),
    // only the loopback interface may connect.
    if protected && user.nopass() && !is_loopback_client(peer.ip()) {
        server.forget_client(id);
        server
            .stats
            .rejected_connections
            .fetch_add(1, Ordering::Relaxed);
        let _ = write_flush(&mut wr, crate::error::PROTECTED_MODE).await;
        return;
    }
    let mut client = Client {
        server: server.clone(),
        info: info.clone(),
        db: 0,
        proto: Protocol::Resp2,
        // As Redis's clientSetDefaultAuth: authenticated if the default user needs no password.
        authed: user.needs_no_auth(),
        user,
        multi: None,
        watched: Vec::new(),
        reply_mode: ReplyMode::On,
        quit: false,
        rd: Some(rd),
        unread: BytesMut::new(),
        subs: Default::default(),
        pushed: Vec::new(),
        mailbox_used: false,
        read_here: false,
        blocked_for: std::time::Duration::ZERO,
        timed_out: false,
        tracking: None,
        caching: false,
        monitor: false,
        monitor_after: None,
    };
    let result = connection_loop(&mut wr, &mut client).await;
    if let Err(e) = result {
        tracing::debug!("client {id} ({peer}): {e}");
    }
    crate::pubsub::unsubscribe_all(&mut client);
    server.forget_client(id);
    server.pubsub.client_gone(id);
    server.monitors.remove(id);
}

async fn connection_loop<W: AsyncWrite + Unpin>(
    stream: &mut W,
    client: &mut Client,
) -> std::io::Result<()> {
    let server = client.server.clone();
    let info = client.info.clone();
    let mut shutdown = server.shutdown_signal();
    // The buffers grow when the client sends something and are given back once it has been
    // quiet for a while (below), so an idle connection holds no buffer at all.
    let mut inbuf = BytesMut::new();
    let mut out = BytesMut::new();
    // Set while the buffers are given back: the next read takes what arrived into a small
    // buffer, then the usual 16 KiB come back.
    let mut parked = false;
    let mut decoder = RequestDecoder::new(Limits::default());
    loop {
        // The settings this turn needs, under one read of the configuration.
        let (qlimit, timeout) = {
            let c = server.config.read();
            decoder.set_limits(Limits {
                proto_max_bulk_len: c.proto_max_bulk_len,
                ..Limits::default()
            });
            (c.client_query_buffer_limit, c.timeout)
        };
        // Like Redis, a client that has not authenticated may only send small requests.
        decoder.set_auth_required(!client.authed);
        let mut reqs = Vec::new();
        let mut protocol_error = None;
        // Unauthenticated, requests run one at a time: an AUTH lifts the limits for the
        // requests after it, even those that arrived in the same read (Redis decodes lazily).
        let mut more = false;
        loop {
            match decoder.decode(&mut inbuf) {
                Ok(Some(args)) => {
                    if !args.is_empty() {
                        reqs.push(args);
                        if !client.authed {
                            more = !inbuf.is_empty();
                            break;
                        }
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    protocol_error = Some(e);
                    break;
                }
            }
        }
        if !reqs.is_empty() {
            let mut reqs = VecDeque::from(reqs);
            client.run_batch(&mut reqs, &mut out).await;
            while !reqs.is_empty() {
                // A chunk of replies is ready and more commands wait: it goes out first.
                if !flush(stream, client, &mut out, timeout).await? {
                    return Ok(());
                }
                client.run_batch(&mut reqs, &mut out).await;
            }
            // What arrived while a command was blocked follows what was already buffered.
            if !client.unread.is_empty() {
                inbuf.extend_from_slice(&client.unread);
                client.unread.clear();
                more = true;
            }
        }
        if let Some(e) = protocol_error {
            // Replies to the commands before the bad frame go out first, then the error.
            // `to_frame` echoes a non-ASCII byte raw, as Redis does (`got '\xe9'`).
            resp::encode(&e.to_frame(), client.proto, &mut out);
            write_flush(stream, &out).await?;
            return Ok(());
        }
        if client.mailbox_used {
            info.pubsub.take_into(&mut out);
        }
        // Replies to reads this thread ran itself wait until the other connections that are
        // ready have run theirs, then go out together, as Redis writes every reply of an event
        // loop turn before it sleeps: a client woken by one reply then finds the next already
        // there, instead of going back to sleep and being woken for each (a wake-up on another
        // core costs more than a short read). Replies to writes come back from the writer
        // together already.
        if client.read_here && !out.is_empty() {
            tokio::task::yield_now().await;
        }
        client.read_here = false;
        if !flush(stream, client, &mut out, timeout).await? {
            return Ok(());
        }
        if client.quit || info.killed.load(Ordering::SeqCst) {
            return Ok(());
        }
        if inbuf.len() > qlimit {
            tracing::warn!(
                "closing client {} that reached max query buffer length ({} bytes)",
                info.id,
                inbuf.len()
            );
            return Ok(());
        }
        if more {
            continue;
        }
        info.qbuf.store(inbuf.len() as u64, Ordering::Relaxed);
        if !parked && inbuf.capacity() - inbuf.len() < 4096 {
            inbuf.reserve(16 * 1024);
        }
        // Only worth a timer when there are many connections: a few keep their buffers.
        let holding = !parked
            && inbuf.is_empty()
            && out.is_empty()
            && server.connected.load(Ordering::Relaxed) > MANY_CLIENTS;
        // As in Redis, `timeout` does not close a subscriber: it is idle by design.
        let idle = if client.subs.any() { 0 } else { timeout };
        let rd = client
            .rd
            .as_mut()
            .expect("the read half lives in the client");
        tokio::select! {
            n = rd.read_buf(&mut inbuf) => {
                server.stats.total_reads_processed.fetch_add(1, Ordering::Relaxed);
                let n = n?;
                if n == 0 {
                    return Ok(());
                }
                parked = false;
                server.stats.net_input_bytes.fetch_add(n as u64, Ordering::Relaxed);
            }
            // Quiet for a while: the empty buffers go back to the allocator (Redis frees an
            // idle client's query buffer too), so ten thousand idle connections cost their
            // sockets and little else.
            // (An async block: the timer is only made when the branch is enabled.)
            _ = async { tokio::time::sleep(BUFFERS_KEPT).await }, if holding => {
                inbuf = BytesMut::new();
                out = BytesMut::new();
                parked = true;
            }
            _ = info.kill.notified() => return Ok(()),
            _ = shutdown.changed() => return Ok(()),
            // Published messages: written at the top of the loop, after letting the other
            // ready connections run first, so the messages their commands publish meanwhile go
            // out in the same write (as Redis writes once per event-loop turn).
            _ = info.pubsub.ready(), if client.mailbox_used => tokio::task::yield_now().await,
            // `timeout`: an idle client is closed, as Redis does (0 = never).
            _ = idle_timer(idle) => {
                tracing::debug!("closing idle client {}", info.id);
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::configure_socket;
    use std::time::Duration;

    /// An accepted socket and its SockRef view, for reading options back.
    async fn accepted() -> (tokio::net::TcpStream, tokio::net::TcpStream) {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let c = tokio::net::TcpStream::connect(l.local_addr().unwrap())
            .await
            .unwrap();
        let (s, _) = l.accept().await.unwrap();
        (s, c)
    }

    #[tokio::test]
    async fn keepalive_as_redis_sets_it() {
        let (s, _c) = accepted().await;
        let r = socket2::SockRef::from(&s);
        // The operating system's default is off: the call below is what turns it on.
        assert!(!r.keepalive().unwrap());
        configure_socket(&s, 300).unwrap();
        assert!(r.keepalive().unwrap());
        assert_eq!(r.tcp_keepalive_time().unwrap(), Duration::from_secs(300));
        assert_eq!(
            r.tcp_keepalive_interval().unwrap(),
            Duration::from_secs(100)
        );
        assert_eq!(r.tcp_keepalive_retries().unwrap(), 3);
        assert!(s.nodelay().unwrap());

        // A short setting still probes at least every second.
        let (s, _c) = accepted().await;
        configure_socket(&s, 2).unwrap();
        let r = socket2::SockRef::from(&s);
        assert_eq!(r.tcp_keepalive_time().unwrap(), Duration::from_secs(2));
        assert_eq!(r.tcp_keepalive_interval().unwrap(), Duration::from_secs(1));
    }

    #[tokio::test]
    async fn keepalive_zero_leaves_it_off() {
        let (s, _c) = accepted().await;
        configure_socket(&s, 0).unwrap();
        assert!(!socket2::SockRef::from(&s).keepalive().unwrap());
        assert!(s.nodelay().unwrap());
    }
}
