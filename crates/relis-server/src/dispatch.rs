//! Dispatch: every complete command line of a batch goes through the table's checks
//! (`Client::prepare`: unknown command, arity, auth, ACL, MULTI, ...), is parsed, and runs
//! where its kind says, consecutive reads as one reader job and consecutive writes as one
//! group-commit job; blocking commands wait here (`Client::block_on`). Every execution is
//! recorded ([`record`]).

use crate::args::Args;
use crate::client::{Client, ClientInfo, ReplyMode};
use crate::cmd::{ConnCmd, Cx, Flags, Parsed, ReadCmd, Spec, Table, WriteCmd};
use crate::error::{unknown_command, unknown_subcommand, CmdError};
use crate::observe::Line;
use crate::spec::MAY_REPLICATE;
use crate::state::Shared;
use bytes::{Bytes, BytesMut};
use resp::{Frame, Protocol};
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::time::Instant;
use tokio::sync::oneshot;

/// One step of a pipelined batch; the command line is kept for the slow log while it is on.
enum Step {
    Reply(Frame),
    Read(Box<dyn ReadCmd>, usize, Option<Line>),
    /// A write, and whether its command line bounds its work ([`gathered_write`]).
    Write(QueuedWrite, bool),
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

/// Commands queued together for one engine job, with the keys they declare (over the
/// PostgreSQL backend only, see [`Client::declared`]); writes with whether each may be gathered
/// ([`gathered_write`]).
enum Group {
    None,
    Reads(Vec<QueuedRead>, relis::DeclaredKeys),
    Writes(Vec<QueuedWrite>, relis::DeclaredKeys, bool),
}

impl Client {
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
        (spec.arity_ok(argv.len()) && (self.authed || spec.has(Flags::NO_AUTH))).then_some(spec)
    }

    /// Looks up, checks and parses one command line (or queues it inside MULTI).
    fn prepare(&mut self, argv: Vec<Bytes>) -> Step {
        self.declared.clear();
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
                let e = CmdError::protected_command(what, setting);
                return self.rejected(spec, e);
            }
        }
        if !self.authed && !spec.has(Flags::NO_AUTH) {
            self.reject(idx);
            self.flag_multi();
            return self.rejected(spec, CmdError::NoAuth);
        }
        if self.multi.is_some() && spec.has(Flags::NO_MULTI) {
            self.reject(idx);
            self.flag_multi();
            return Step::Reply(CmdError::NOT_IN_MULTI.to_frame());
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
                return self.rejected(spec, d.noperm(spec));
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
            let e = CmdError::subscribed_context(spec.name);
            return self.rejected(spec, e);
        }
        // A monitor is a replica to Redis: it may not touch the keyspace, nor run what may
        // replicate (Redis's internal MAY_REPLICATE flag, which COMMAND INFO does not show).
        if self.monitor
            && (spec.has(Flags::WRITE)
                || spec.has(Flags::READONLY)
                || MAY_REPLICATE.contains(&spec.name))
        {
            self.reject(idx);
            self.flag_multi();
            return self.rejected(spec, CmdError::REPLICA_KEYSPACE);
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
                return self.rejected(spec, busy);
            }
            if spec.name == "shutdown" {
                // SHUTDOWN NOSAVE stops the script the hard way: nothing it wrote is kept.
                self.server.scripting.run.abort();
            }
        }
        // Over PostgreSQL a command sees only the keys it declares: what would need others is
        // refused, as a rejection (a queued one makes EXEC fail).
        let shared = self.server.db.backend() == "postgres";
        if shared && refused_on_postgres(spec, &argv, self.multi.is_some()) {
            self.reject(idx);
            self.flag_multi();
            return self.rejected(spec, CmdError::not_on_postgres(spec.name));
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
        if shared {
            self.declared = declared_keys(spec, &argv, self.db);
        }
        let keys = spec.ready_keys(&argv);
        let gather = gathered_write(spec, &argv);
        let line = self
            .server
            .observe
            .slowlog
            .enabled()
            .then(|| Line::new(&argv, Some(self.info.clone())));
        let shown =
            (self.server.monitors.active() && crate::monitor::shown(spec)).then(|| argv.clone());
        let mut parsed = parse(spec, argv, skip);
        if shared {
            parsed = parsed.map(Parsed::for_postgres);
        }
        if let Some(argv) = shown {
            // Connection commands show once they have run, but blocking ones, which show as
            // they start waiting; the rest as they are handed to the engine (a script's line
            // comes before the lines of the commands it runs).
            if matches!(parsed, Ok(Parsed::Conn(_))) && !spec.has(Flags::BLOCKING) {
                self.monitor_after = Some(argv);
            } else {
                self.feed_monitors(self.db, &argv);
            }
        }
        match parsed {
            Ok(Parsed::Read(c)) => Step::Read(c, idx, line),
            Ok(Parsed::Write(c)) => Step::Write((c, idx, keys, line), gather),
            Ok(Parsed::Conn(c)) => Step::Conn(c, idx, line),
            Err(e) => {
                // Redis checks arguments inside the command: the call counts, and fails (its
                // time, that of a parse, is not worth a clock read for every command).
                record_took(
                    &self.server,
                    idx,
                    std::time::Duration::ZERO,
                    true,
                    line.as_ref(),
                );
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
            if script || spec.has(Flags::READONLY) {
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
        Step::Reply(CmdError::execabort_because(msg).to_frame())
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
                    let full = matches!(&group, Group::Reads(v, _) if v.len() >= READ_GROUP_MAX);
                    if full || !matches!(group, Group::Reads(..)) {
                        self.run_group(&mut group, out).await;
                        group = Group::Reads(Vec::new(), Vec::new());
                    }
                    if let Group::Reads(v, keys) = &mut group {
                        v.push((c, idx, line));
                        keys.append(&mut self.declared);
                    }
                }
                Step::Write(queued, gather) => {
                    // A tracking client's own invalidations follow the reply of the write that
                    // caused them: its writes go to the engine one by one (Redis's order).
                    let alone = self.tracking.as_ref().is_some_and(|t| !t.noloop);
                    if !matches!(group, Group::Writes(..)) || alone {
                        self.run_group(&mut group, out).await;
                        group = Group::Writes(Vec::new(), Vec::new(), true);
                    }
                    if let Group::Writes(v, keys, all) = &mut group {
                        v.push(queued);
                        keys.append(&mut self.declared);
                        *all &= gather;
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
            Group::Reads(mut cmds, keys) => {
                let cx = self.cx();
                let table = Table::get();
                if cmds
                    .iter()
                    .all(|(c, idx, _)| table.specs[*idx].has(Flags::FAST) || c.inline())
                {
                    // O(1)/O(log n) or small bounded reads: a thread hop would cost more.
                    let done = self.server.db.read_here(|r| {
                        let mut frames = Vec::with_capacity(cmds.len());
                        // One clock read per command: each ends where the next starts.
                        let mut t = Instant::now();
                        for (c, idx, line) in &cmds {
                            let res = c.exec(r, &cx);
                            if let Err(CmdError::Deferred) = res {
                                // Too long to run here: it and the rest go to a reader.
                                break;
                            }
                            let now = Instant::now();
                            let took = now.saturating_duration_since(t);
                            t = now;
                            record_took(&cx.server, *idx, took, res.is_err(), line.as_ref());
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
                self.server.db.read_async_keys(
                    keys,
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
            Group::Writes(cmds, keys, gather) => {
                let n = cmds.len();
                let cx = self.cx();
                let (tx, rx) = oneshot::channel();
                // One command (a client waiting for each reply); a pipeline's batch goes to the
                // writer thread, which runs it while this thread reads the next.
                let gather = n == 1 && gather;
                let job = move |w: &mut relis::Writer<'_>| {
                    w.set_origin(cx.client_id);
                    let mut served = Vec::new();
                    let frames = cmds
                        .into_iter()
                        .map(|(c, idx, keys, line)| {
                            run_write(w, &cx, &*c, idx, &keys, line.as_ref(), &mut served)
                        })
                        .collect::<Vec<Frame>>();
                    (frames, served)
                };
                let done = move |res| {
                    let _ = tx.send(res);
                };
                if !gather {
                    self.server.db.write_async_keys(keys, job, done);
                } else if self.server.db.write_gathered(keys, job, done) {
                    // Gathered with the other connections' writes until this thread has served
                    // what is ready, then run as one group (relis::Db::flush_gathered). A task
                    // that yields runs after the tasks ready now (tokio defers it to the
                    // scheduler's next look for events: within 16 task polls); it yields again
                    // while each turn brought more writes, up to `GATHER_TURNS`.
                    let server = self.server.clone();
                    tokio::spawn(async move {
                        let mut seen = 1;
                        for _ in 0..GATHER_TURNS {
                            tokio::task::yield_now().await;
                            let (n, full) = server.db.gathered();
                            if n <= seen || full {
                                break;
                            }
                            seen = n;
                        }
                        // Not on this thread past `GATHER_CLIENTS` connections: then the
                        // connections this group answers (woken here, run next) jump ahead of
                        // those waiting longer (woken elsewhere, or beyond what the thread's
                        // own queue holds); at -c 1000 SET's p99 went from 32-39 ms to 52-69.
                        let here = server.connected.load(Ordering::Relaxed) <= GATHER_CLIENTS;
                        server.db.flush_gathered(here);
                    });
                }
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
        // Over PostgreSQL the first try locks every key the command names (a BLMOVE's
        // destination too), and so does each later serve.
        let declared = std::mem::take(&mut self.declared);
        let (waiter, rx) = crate::blocking::Waiter::new(
            self.info.id,
            self.db,
            self.proto,
            keys,
            serve,
            declared.clone(),
        );
        let cx = self.cx();
        let (tx, first) = oneshot::channel();
        let w2 = waiter.clone();
        self.server.db.write_async_keys(
            declared,
            move |w| {
                w.set_origin(cx.client_id);
                let mut served = Vec::new();
                let res = w.atomic(|w| (w2.serve)(w, &cx, None));
                let out = match res {
                    Ok(Some(done)) => {
                        // Served at once; what it wrote may unblock others (BLMOVE).
                        if !done.touched.is_empty() && feeds_blocked(&cx.server) {
                            let ready = done.touched.iter().map(|k| (cx.db, k.clone())).collect();
                            serve_ready(w, &cx, ready, &mut served);
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

/// Connections past which gathered writes run on the writer thread, never on the network
/// thread that gathered them: tokio's per-thread run queue holds 256 tasks.
const GATHER_CLIENTS: usize = 256;

/// Turns of the network thread's scheduler that gathered writes wait for more, as long as each
/// turn brings more (`Client::run_group`). Under redis-benchmark `-c 50 -P 1` one turn gathered
/// 8 writes per group (SET, HSET, PFADD to new keys), up to eight 18-20 (`bench/groups.sh`);
/// the rates moved by less than this machine's run-to-run noise (BENCHMARKS.md, "Gathered
/// writes wait while more come"). A client writing alone stops after one turn, as before.
const GATHER_TURNS: usize = 8;

/// Arguments past which a write is not gathered: 16 field-value pairs of HSET, 32 elements of
/// LPUSH or SADD, a pop of 32.
const GATHER_ARGS: usize = 34;
/// Argument bytes past which a write is not gathered (a 64 KB SET value is a few tens of
/// microseconds of SQLite's time; a 512 MB one is seconds).
const GATHER_BYTES: usize = 64 * 1024;

/// Whether the write `argv` of `spec` may run on the network thread, gathered with others
/// ([`relis::Db::write_gathered`]) rather than on the writer thread: one whose command line
/// bounds its work, and bounds it small, because every connection of that thread waits while it
/// runs. Redis's `fast` commands, SET and its forms, GEOADD as ZADD; with at most
/// [`GATHER_ARGS`] arguments of [`GATHER_BYTES`] in all, a pop count within that bound, no
/// trimming in XADD (an exact MAXLEN may delete the whole stream). Not SWAPDB (every key of two
/// databases changes) nor XAUTOCLAIM (it scans ten times its count), nor scripts, which need the
/// writer's deep stack and must leave the network thread free to take SCRIPT KILL, nor EXEC, nor
/// writes whose time may grow with the data or an offset (SUNIONSTORE, SORT ... STORE, LTRIM,
/// SETBIT or SETRANGE far out ...), during which reads go on. A huge collection a gathered write
/// deletes (SET over it, EXPIRE in the past) goes to the trash, emptied in the background.
fn gathered_write(spec: &Spec, argv: &[Bytes]) -> bool {
    // Every command line passes here: a read (GET is `fast` too) stops at the first test.
    if !spec.has(Flags::WRITE) {
        return false;
    }
    let kind = (spec.has(Flags::FAST) && !matches!(spec.name, "swapdb" | "xautoclaim"))
        || matches!(spec.name, "set" | "setex" | "psetex" | "geoadd");
    if !kind
        || argv.len() > GATHER_ARGS
        || argv.iter().map(Bytes::len).sum::<usize>() > GATHER_BYTES
    {
        return false;
    }
    match spec.name {
        // The count, when given, is the third argument.
        "lpop" | "rpop" | "spop" | "zpopmin" | "zpopmax" => argv
            .get(2)
            .is_none_or(|c| crate::args::parse_i64(c).is_ok_and(|c| c <= GATHER_ARGS as i64)),
        // Trimming options, or a field that spells one (not gathered either, harmlessly).
        "xadd" => !argv
            .iter()
            .skip(2)
            .any(|a| a.eq_ignore_ascii_case(b"maxlen") || a.eq_ignore_ascii_case(b"minid")),
        _ => true,
    }
}

/// The keys the command line `argv` of `spec` declares, in database `db`: its key specs, the
/// ones COMMAND GETKEYS, ACL and the blocked-client wake-ups read (a script's `KEYS`), in the
/// database each lives in (MOVE's key in its destination database too, COPY ... DB's
/// destination in that database only), for FLUSHDB/FLUSHALL the flush
/// (`relis::flush_declaration`), and the function libraries for FCALL and FUNCTION
/// (`relis::functions_declaration`).
pub fn declared_keys(spec: &Spec, argv: &[Bytes], db: u32) -> relis::DeclaredKeys {
    // The database a DB argument names (a bad one fails the command before it writes).
    let index = |a: Option<&Bytes>| {
        a.and_then(|a| crate::args::parse_i64(a).ok())
            .and_then(|d| u32::try_from(d).ok())
    };
    // COPY's options as its parser reads them (the last DB wins; parsing stops at an error,
    // and then nothing is written).
    let mut copy_db = None;
    if spec.name == "copy" {
        let mut i = 3;
        while i < argv.len() {
            if argv[i].eq_ignore_ascii_case(b"replace") {
                i += 1;
            } else if i + 1 < argv.len() && argv[i].eq_ignore_ascii_case(b"db") {
                match index(argv.get(i + 1)) {
                    Some(d) => copy_db = Some(d),
                    None => break,
                }
                i += 2;
            } else {
                break;
            }
        }
    }
    let mut keys: relis::DeclaredKeys = spec
        .keys_of(argv)
        .into_iter()
        .filter_map(|i| {
            let key_db = match copy_db {
                Some(to) if i == 2 => to,
                _ => db,
            };
            argv.get(i).map(|k| (key_db, k.to_vec()))
        })
        .collect();
    if spec.name == "move" {
        if let (Some(to), Some(key)) = (index(argv.get(2)), argv.get(1)) {
            keys.push((to, key.to_vec()));
        }
    }
    // A swap is declared like a flush of both databases (`relis::swap_declaration`).
    if spec.name == "swapdb" {
        if let (Some(a), Some(b)) = (index(argv.get(1)), index(argv.get(2))) {
            if a != b {
                keys.push(relis::swap_declaration(a, b));
            }
        }
    }
    // A flush is declared too: over PostgreSQL its group locks the databases it empties
    // before anything else (`relis::flush_declaration`).
    match spec.name {
        "flushdb" => keys.push(relis::flush_declaration(Some(db))),
        "flushall" => keys.push(relis::flush_declaration(None)),
        // The function libraries: their group fetches the shared set when it changed (and a
        // change locks it: `relis::functions_declaration`).
        "fcall" | "fcall_ro" | "function|list" | "function|dump" => {
            keys.push(relis::functions_declaration(false));
        }
        "function|load" | "function|delete" | "function|flush" | "function|restore" => {
            keys.push(relis::functions_declaration(true));
        }
        // DEBUG's key arguments (Redis gives DEBUG no key specs).
        "debug" => {
            let sub = argv.get(1).map(|a| a.to_ascii_lowercase());
            if matches!(sub.as_deref(), Some(b"digest-value" | b"object")) {
                keys.extend(argv.iter().skip(2).map(|k| (db, k.to_vec())));
            }
        }
        _ => {}
    }
    keys
}

/// Whether the PostgreSQL backend refuses the command line `argv` of `spec` for now: it works
/// on keys it does not declare (REPLICAOF; SORT with BY or GET `in_multi`, where its patterns'
/// keys cannot be found first, as `cmd::keys::sort::SortOnPostgres` does; DEBUG POPULATE
/// `in_multi`, whose keys its own form declares batch by batch), reads the whole shared
/// keyspace from the connection's task `in_multi`, where a transaction's commands run in a
/// group (DEBUG DIGEST/RELOAD), or on storage only the SQLite file has (named SQL databases,
/// REDISQL.*). SQL.EXEC, SQL.QUERY, the prepared statements and the morphs (SQL.TO*,
/// SQL.FROMHASH/FROMSTREAM) run PostgreSQL's SQL there (`cmd::sql::OnPostgres`). SAVE/BGSAVE
/// write the shared keyspace as an RDB file (`cmd::server::save`), DEBUG DIGEST digests it and
/// DEBUG RELOAD checks that it loads (`cmd::server::debug`), each in one snapshot. SCAN, KEYS,
/// DBSIZE, RANDOMKEY, FLUSHDB/FLUSHALL and SWAPDB run there (`relis::Reader::scan_shared`, the
/// engine's keyspace-wide methods, the flushes and swaps a group makes at its commit), MOVE and
/// COPY ... DB (their destination key is declared in its database), and every FUNCTION
/// subcommand (the libraries are shared in PostgreSQL). [`declared_keys`] declares what they
/// need. README "PostgreSQL backend" lists them.
pub fn refused_on_postgres(spec: &Spec, argv: &[Bytes], in_multi: bool) -> bool {
    // Options come after the first arguments (a key may be named like an option).
    let has = |from: usize, word: &str| {
        argv.iter()
            .skip(from)
            .take_while(|a| !a.eq_ignore_ascii_case(b"streams"))
            .any(|a| a.eq_ignore_ascii_case(word.as_bytes()))
    };
    match spec.name {
        "replicaof" | "slaveof" => true,
        // SQL on the main database runs on PostgreSQL (`cmd::sql::OnPostgres`, the morphs'
        // queries and writes too); named databases and RediSQL's commands (which name one) do
        // not.
        "sql.exec" | "sql.query" | "sql.prepare" | "sql.run" | "sql.unprepare"
        | "sql.statements" | "sql.desc" | "sql.tohash" | "sql.tostring" | "sql.tolist"
        | "sql.toset" | "sql.tozset" | "sql.tostream" | "sql.fromhash" | "sql.fromstream" => false,
        // Its patterns' keys are found by a first read (`cmd::keys::sort::SortOnPostgres`),
        // which a transaction cannot make before it runs.
        "sort" | "sort_ro" => in_multi && (has(2, "by") || has(2, "get")),
        // They read the whole shared keyspace from the connection's task
        // (`cmd::server::debug`), which a transaction's commands, run in a group, do not.
        // POPULATE names its keys only by a count: its `on_postgres` form declares them batch by
        // batch, which a transaction cannot.
        "debug" => {
            in_multi
                && argv.get(1).is_some_and(|a| {
                    a.eq_ignore_ascii_case(b"reload")
                        || a.eq_ignore_ascii_case(b"digest")
                        || a.eq_ignore_ascii_case(b"populate")
                })
        }
        name => name.starts_with("sql.") || name.starts_with("redisql."),
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
        ctime_ms: crate::state::unix_ms(),
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
pub fn parse(spec: &'static Spec, argv: Vec<Bytes>, skip: usize) -> Result<Parsed, CmdError> {
    (spec.parse)(&mut Args::of_line(spec.name, argv, skip))
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
    if !feeds_blocked(&cx.server) {
        return run_write_feeding(w, cx, cmd, idx, line, None);
    }
    let mut ready: Vec<(u32, Bytes)> = keys.iter().map(|k| (cx.db, k.clone())).collect();
    let reply = run_write_feeding(w, cx, cmd, idx, line, Some(&mut ready));
    if !matches!(reply, Frame::Error(_)) {
        serve_ready(w, cx, ready, served);
    }
    reply
}

/// Whether a write must look for the keys it makes ready: someone is blocked here, or, over
/// PostgreSQL, maybe on another node.
pub fn feeds_blocked(server: &Shared) -> bool {
    !server.blocking.is_empty() || server.pubsub.relays()
}

/// Serves the clients blocked on `ready` keys, in order (see [`crate::blocking::Blocking::serve`]).
/// Over PostgreSQL the keys are only signalled, to the other nodes and to this node's own
/// [`crate::blocking::serve_later`]: the waiters' other keys (a BLMOVE's destination) are not locked by this job.
/// The signal may leave before this job's commit: a serve locks the key first, so it waits for
/// the commit (and finds nothing if the commit failed).
pub fn serve_ready(
    w: &mut relis::Writer<'_>,
    cx: &Cx,
    ready: Vec<(u32, Bytes)>,
    served: &mut Vec<crate::blocking::Delivery>,
) {
    if cx.server.pubsub.relays() {
        // Every signal is a bus message to every node (a `NOTIFY`), so only keys a client can
        // block on are signalled, as Redis's `signalKeyAsReady` returns at once for a type no
        // command blocks on: a SET that created a string key, or a write that readied
        // nothing (or a key gone again), sends none.
        let ready: Vec<(u32, Bytes)> = ready
            .into_iter()
            .filter(|(db, key)| {
                use relis::KeyType::{Hash, Set, String};
                !matches!(w.key_type(*db, key), Ok(None | Some(String | Hash | Set)))
            })
            .collect();
        if !ready.is_empty() {
            crate::blocking::signal_ready(&cx.server, ready);
        }
        return;
    }
    for (db, key) in ready {
        let cx = Cx { db, ..cx.clone() };
        cx.server.blocking.serve(w, &cx, db, &[key], served);
    }
}

/// Runs one write command on the writer (all or nothing as its `on_error` asks); with `ready`,
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
    let res = w.command(cmd.on_error(), |w| cmd.exec(w, cx));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Refused over PostgreSQL or not, by command line: options are looked for where they can
    /// be, never in a key's place.
    #[test]
    fn what_the_postgres_backend_refuses() {
        let table = Table::get();
        let refused_in = |line: &str, in_multi: bool| {
            let argv: Vec<Bytes> = line
                .split(' ')
                .map(|w| Bytes::copy_from_slice(w.as_bytes()))
                .collect();
            let (_, mut spec) = table.lookup(&argv[0]).expect(line);
            if !spec.subcommands.is_empty() {
                spec = table.lookup_sub(spec, &argv[1]).expect(line).1;
            }
            refused_on_postgres(spec, &argv, in_multi)
        };
        let refused = |line: &str| refused_in(line, true);
        for line in [
            "SORT k BY w_*",
            "SORT k GET #",
            "REDISQL.QUERY db x",
            "SQL.DB LIST",
            "DEBUG RELOAD",
            "DEBUG DIGEST",
            "DEBUG POPULATE 10",
        ] {
            assert!(refused(line), "{line}");
        }
        // Outside a transaction SORT finds its patterns' keys first; SQL runs on PostgreSQL.
        for line in [
            "SORT k BY w_*",
            "SORT k GET #",
            "SQL.QUERY x",
            "SQL.TOHASH k x",
            "DEBUG RELOAD",
            "DEBUG DIGEST",
            "DEBUG POPULATE 10",
            "SAVE",
            "BGSAVE",
        ] {
            assert!(!refused_in(line, false), "{line}");
        }
        for line in [
            "GET k",
            "COPY a db",
            "MOVE k 1",
            "COPY a b DB 1",
            "SWAPDB 0 1",
            "SORT by",
            "SORT k LIMIT 0 1",
            "XREAD COUNT 1 STREAMS block 0",
            // Served across nodes (keys made ready travel between them).
            "XREAD BLOCK 0 STREAMS s $",
            "BLPOP q 0",
            "BLMOVE a b LEFT RIGHT 0",
            "FUNCTION LIST",
            // The libraries are shared through PostgreSQL.
            "FUNCTION LOAD x",
            "FUNCTION RESTORE x REPLACE",
            "FUNCTION DELETE x",
            "FUNCTION FLUSH",
            "DEBUG SLEEP 0",
            "DEBUG DIGEST-VALUE k",
            "EVAL x 0",
            "MULTI",
            // The keyspace-wide commands PostgreSQL answers.
            "SCAN 0",
            "keys *",
            "DBSIZE",
            "RANDOMKEY",
            "FLUSHALL",
            "FLUSHDB ASYNC",
            "HSCAN h 0",
        ] {
            assert!(!refused(line), "{line}");
        }
    }

    #[test]
    fn declared_keys_follow_the_key_specs() {
        let table = Table::get();
        let argv = |line: &str| -> Vec<Bytes> {
            line.split(' ')
                .map(|w| Bytes::copy_from_slice(w.as_bytes()))
                .collect()
        };
        let keys = |line: &str, db| {
            let a = argv(line);
            let (_, spec) = table.lookup(&a[0]).unwrap();
            declared_keys(spec, &a, db)
        };
        let k = |db, s: &str| (db, s.as_bytes().to_vec());
        assert_eq!(keys("INCR n", 3), vec![k(3, "n")]);
        assert_eq!(keys("FLUSHDB", 3), vec![relis::flush_declaration(Some(3))]);
        assert_eq!(
            keys("FLUSHALL SYNC", 3),
            vec![relis::flush_declaration(None)]
        );
        assert_eq!(keys("MSET a 1 b 2", 0), vec![k(0, "a"), k(0, "b")]);
        assert_eq!(keys("EVAL s 2 x y arg", 0), vec![k(0, "x"), k(0, "y")]);
        assert_eq!(
            keys("LMOVE src dst LEFT RIGHT", 1),
            vec![k(1, "src"), k(1, "dst")]
        );
        assert_eq!(keys("PING", 0), vec![]);
        // MOVE's key in both databases; COPY ... DB's destination in its own.
        assert_eq!(keys("MOVE k 5", 2), vec![k(2, "k"), k(5, "k")]);
        assert_eq!(keys("COPY a b DB 7 REPLACE", 2), vec![k(2, "a"), k(7, "b")]);
        assert_eq!(keys("COPY a b REPLACE", 2), vec![k(2, "a"), k(2, "b")]);
        assert_eq!(keys("COPY a db", 2), vec![k(2, "a"), k(2, "db")]);
        assert_eq!(keys("SWAPDB 0 3", 2), vec![relis::swap_declaration(0, 3)]);
        assert_eq!(keys("SWAPDB 1 1", 2), vec![]);
        assert_eq!(
            keys("FCALL f 1 x", 2),
            vec![k(2, "x"), relis::functions_declaration(false)]
        );
    }

    /// Gathered onto the network thread or not, by command line: the command, and how much
    /// its arguments ask for.
    #[test]
    fn which_writes_are_gathered() {
        let table = Table::get();
        let gathered = |argv: &[&[u8]]| {
            let argv: Vec<Bytes> = argv.iter().map(|a| Bytes::copy_from_slice(a)).collect();
            gathered_write(table.lookup(&argv[0]).unwrap().1, &argv)
        };
        fn line(l: &str) -> Vec<&[u8]> {
            l.split(' ').map(str::as_bytes).collect()
        }
        for l in [
            "SET k v",
            "SET k v EX 10 GET",
            "INCR k",
            "LPUSH q a b c",
            "LPOP q",
            "LPOP q 34",
            "ZPOPMIN z 1",
            "XADD s * f v",
            "GEOADD g 1 2 m",
            "UNLINK a b",
        ] {
            assert!(gathered(&line(l)), "{l}");
        }
        for l in [
            "LPOP q 35",
            "SPOP s 1000000",
            "ZPOPMAX z 99999999999999999999",
            "XADD s MAXLEN 10 * f v",
            "XADD s NOMKSTREAM minid ~ 5 * f v",
            "XAUTOCLAIM s g c 0 0",
            "SWAPDB 0 1",
            "SETRANGE k 1000000 x",
            "SETBIT k 7 1",
            "MSET a 1 b 2",
            "EVAL x 0",
            "LTRIM q 0 1",
        ] {
            assert!(!gathered(&line(l)), "{l}");
        }
        let many: Vec<&[u8]> = [&b"SADD"[..], b"s"]
            .into_iter()
            .chain(std::iter::repeat_n(&b"m"[..], GATHER_ARGS - 1))
            .collect();
        assert!(!gathered(&many));
        assert!(gathered(&many[..GATHER_ARGS]));
        let value = vec![b'x'; GATHER_BYTES];
        assert!(!gathered(&[b"SET", b"k", &value]));
        assert!(gathered(&[b"SET", b"k", &value[..GATHER_BYTES - 4]]));
    }
}
