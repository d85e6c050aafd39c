//! Clients blocked on keys (BLPOP, BLMOVE, BZPOPMIN, ...), served the way Redis serves them.
//!
//! A blocking command first runs its non-blocking form on the writer. If that finds nothing, the
//! same writer job registers a [`Waiter`] on its keys, so no push can slip in between. Every
//! write command whose spec says it may feed a blocked client (`Spec::unblocks`) reports its
//! keys; right after it runs, still inside the same writer job and transaction, the waiters on
//! those keys are served in FIFO order by running their non-blocking form again. A served waiter
//! gets its reply only after that transaction commits, like every other reply. The waiting
//! connection holds no thread and no transaction: it awaits a oneshot channel with its timeout.

use crate::client::Cx;
use crate::error::CmdError;
use bytes::Bytes;
use parking_lot::Mutex;
use resp::{Frame, Protocol};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::oneshot;

/// What serving a waiter produced: its reply, and keys it wrote (BLMOVE's destination), whose
/// own waiters are then served in turn.
pub struct Served {
    /// The blocked command's reply.
    pub reply: Frame,
    /// Keys (in the waiter's database) the serve wrote to.
    pub touched: Vec<Bytes>,
}

/// Runs a blocked command's non-blocking form: `Ok(None)` = still nothing for it (it stays
/// blocked, e.g. the key is empty or now holds another type). The last argument is `None` at
/// the command's first attempt (every key, in order; a key of another type is an error) and
/// the key a write made ready when a blocked client is served: Redis serves it from that key
/// only, whatever the order of its keys, and a key of another type leaves it blocked.
pub type TryServe = Box<
    dyn Fn(&mut relis::Writer<'_>, &Cx, Option<&Bytes>) -> Result<Option<Served>, CmdError>
        + Send
        + Sync,
>;

/// The keys a serve reads, and whether it passes over keys of another type: all of `keys` at
/// the first attempt, only the ready key when a blocked client is served (see [`TryServe`]).
pub fn serve_keys<'a>(keys: &'a [Bytes], ready: Option<&'a Bytes>) -> (&'a [Bytes], bool) {
    match ready {
        None => (keys, false),
        Some(key) => (std::slice::from_ref(key), true),
    }
}

/// A blocked client.
pub struct Waiter {
    /// Unique id of this wait.
    pub id: u64,
    /// The blocked client's id (CLIENT UNBLOCK).
    pub client_id: u64,
    /// The blocked client's database.
    pub db: u32,
    /// The blocked client's protocol (its reply is built for it).
    pub proto: Protocol,
    /// Keys it waits on, in its database.
    pub keys: Vec<Bytes>,
    /// Its non-blocking form.
    pub serve: TryServe,
    /// Every key its serve may touch (its command's key specs: a BLMOVE's destination too),
    /// which a serve over PostgreSQL must have locked (backend postgres only; empty otherwise).
    pub declared: relis::DeclaredKeys,
    tx: Mutex<Option<oneshot::Sender<Result<Frame, CmdError>>>>,
}

/// A reply for a served waiter, to send once the transaction that served it has committed.
pub type Delivery = (Arc<Waiter>, Frame);

impl Waiter {
    /// A waiter and the receiver its connection awaits.
    pub fn new(
        client_id: u64,
        db: u32,
        proto: Protocol,
        keys: Vec<Bytes>,
        serve: TryServe,
        declared: relis::DeclaredKeys,
    ) -> (Arc<Waiter>, oneshot::Receiver<Result<Frame, CmdError>>) {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let (tx, rx) = oneshot::channel();
        (
            Arc::new(Waiter {
                id: NEXT.fetch_add(1, Ordering::Relaxed),
                client_id,
                db,
                proto,
                keys,
                serve,
                declared,
                tx: Mutex::new(Some(tx)),
            }),
            rx,
        )
    }

    /// Sends the waiter its reply (once).
    pub fn answer(&self, reply: Result<Frame, CmdError>) {
        if let Some(tx) = self.tx.lock().take() {
            let _ = tx.send(reply);
        }
    }
}

/// A serve over PostgreSQL: the keys its job locked (sorted), and where the keys its serves
/// wrote go (see [`Blocking::serve_declared`]).
type Scope<'a> = (&'a [(u32, Vec<u8>)], &'a mut Vec<(u32, Bytes)>);

/// Waiters by (database, key), in arrival order.
type Queues = HashMap<(u32, Bytes), VecDeque<Arc<Waiter>>>;

/// The registry of blocked clients.
#[derive(Default)]
pub struct Blocking {
    by_key: Mutex<Queues>,
    by_id: Mutex<HashMap<u64, Arc<Waiter>>>,
    count: AtomicUsize,
}

impl Blocking {
    /// Whether nobody is blocked (the cheap check on the write path).
    pub fn is_empty(&self) -> bool {
        self.count.load(Ordering::Acquire) == 0
    }

    /// How many clients are blocked (INFO blocked_clients).
    pub fn len(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    /// Registers a waiter at the back of each of its keys' queues. Call it from the writer job
    /// that found nothing to serve, so that no write can come between.
    pub fn register(&self, w: Arc<Waiter>) {
        let mut by_key = self.by_key.lock();
        for k in &w.keys {
            by_key
                .entry((w.db, k.clone()))
                .or_default()
                .push_back(w.clone());
        }
        self.by_id.lock().insert(w.id, w.clone());
        self.count.fetch_add(1, Ordering::AcqRel);
    }

    /// Removes a waiter (timeout, disconnect, served). Returns whether it was still registered:
    /// `false` means it has been served (or unblocked) and its reply is on its way.
    pub fn remove(&self, id: u64) -> bool {
        let Some(w) = self.by_id.lock().remove(&id) else {
            return false;
        };
        let mut by_key = self.by_key.lock();
        for k in &w.keys {
            let slot = (w.db, k.clone());
            if let Some(q) = by_key.get_mut(&slot) {
                q.retain(|x| x.id != id);
                if q.is_empty() {
                    by_key.remove(&slot);
                }
            }
        }
        self.count.fetch_sub(1, Ordering::AcqRel);
        true
    }

    /// Every key a client is blocked on, as (database, key).
    pub fn all_keys(&self) -> Vec<(u32, Bytes)> {
        self.by_key.lock().keys().cloned().collect()
    }

    /// The keys clients are blocked on in the databases `dbs`, as (database, key).
    pub fn keys_in(&self, dbs: &[u32]) -> Vec<(u32, Bytes)> {
        self.by_key
            .lock()
            .keys()
            .filter(|(db, _)| dbs.contains(db))
            .cloned()
            .collect()
    }

    /// The waiters on any of `keys` (each once), for a job that serves them over PostgreSQL
    /// ([`crate::dispatch::serve_later`]).
    pub fn waiting_on(&self, keys: &[(u32, Bytes)]) -> Vec<Arc<Waiter>> {
        let by_key = self.by_key.lock();
        let mut out: Vec<Arc<Waiter>> = Vec::new();
        for k in keys {
            for w in by_key.get(k).into_iter().flatten() {
                if !out.iter().any(|o| o.id == w.id) {
                    out.push(w.clone());
                }
            }
        }
        out
    }

    /// The waiter of a blocked client, if it is blocked.
    pub fn of_client(&self, client_id: u64) -> Option<Arc<Waiter>> {
        self.by_id
            .lock()
            .values()
            .find(|w| w.client_id == client_id)
            .cloned()
    }

    /// Serves the waiters on `keys` of database `db` after a write to them, in FIFO order, inside
    /// the writer job that wrote. Replies go to `out`, to be delivered after the commit.
    pub fn serve(
        &self,
        w: &mut relis::Writer<'_>,
        cx: &Cx,
        db: u32,
        keys: &[Bytes],
        out: &mut Vec<Delivery>,
    ) {
        self.serve_scoped(w, cx, db, keys, out, None);
    }

    /// [`Blocking::serve`] over PostgreSQL, in a job that locked the keys `scope` (sorted):
    /// only waiters whose every declared key is among them are served (one that blocked since
    /// the job was made is served by the next), and the keys a serve wrote (BLMOVE's
    /// destination) are returned instead of served at once, since their waiters' keys were not
    /// locked.
    pub fn serve_declared(
        &self,
        w: &mut relis::Writer<'_>,
        cx: &Cx,
        db: u32,
        keys: &[Bytes],
        out: &mut Vec<Delivery>,
        scope: &[(u32, Vec<u8>)],
    ) -> Vec<(u32, Bytes)> {
        let mut touched = Vec::new();
        self.serve_scoped(w, cx, db, keys, out, Some((scope, &mut touched)));
        touched
    }

    fn serve_scoped(
        &self,
        w: &mut relis::Writer<'_>,
        cx: &Cx,
        db: u32,
        keys: &[Bytes],
        out: &mut Vec<Delivery>,
        mut scope: Option<Scope<'_>>,
    ) {
        let mut ready: VecDeque<(u32, Bytes)> = keys.iter().map(|k| (db, k.clone())).collect();
        while let Some((db, key)) = ready.pop_front() {
            loop {
                let front: Vec<Arc<Waiter>> = match self.by_key.lock().get(&(db, key.clone())) {
                    Some(q) => q.iter().cloned().collect(),
                    None => break,
                };
                let mut served_one = false;
                for waiter in front {
                    if let Some((scope, _)) = &scope {
                        if !waiter
                            .declared
                            .iter()
                            .all(|k| scope.binary_search(k).is_ok())
                        {
                            continue;
                        }
                    }
                    let wcx = Cx {
                        db: waiter.db,
                        proto: waiter.proto,
                        ..cx.clone()
                    };
                    // The waiter is taken out of the registry inside the savepoint of its serve:
                    // if it is already gone (its timeout fired, CLIENT UNBLOCK, its connection
                    // closed) between the queue snapshot and here, nobody would get the reply,
                    // so what the serve wrote is rolled back (the element stays in the list).
                    let res = w.atomic(|w| match (waiter.serve)(w, &wcx, Some(&key)) {
                        Ok(None) => Ok(None),
                        Ok(Some(served)) if self.remove(waiter.id) => Ok(Some(served)),
                        // The waiter's command failed for good: it is answered with the error.
                        Err(e) if self.remove(waiter.id) => Err(ServeFailed(Some(e))),
                        _ => Err(ServeFailed(None)),
                    });
                    match res {
                        Ok(None) | Err(ServeFailed(None)) => continue,
                        Ok(Some(served)) => {
                            let touched = served.touched.into_iter().map(|k| (waiter.db, k));
                            match &mut scope {
                                Some((_, later)) => later.extend(touched),
                                None => ready.extend(touched),
                            }
                            out.push((waiter, served.reply));
                            served_one = true;
                            break;
                        }
                        Err(ServeFailed(Some(e))) => {
                            // (A failure of the savepoint itself comes here still registered.)
                            self.remove(waiter.id);
                            out.push((waiter, e.to_frame()));
                            served_one = true;
                            break;
                        }
                    }
                }
                if !served_one {
                    break;
                }
            }
        }
    }
}

/// Why a serve's savepoint is rolled back: the waiter's command failed (`Some`, it is answered
/// with the error), or the waiter was no longer registered (`None`).
struct ServeFailed(Option<CmdError>);

impl From<relis::Error> for ServeFailed {
    fn from(e: relis::Error) -> Self {
        ServeFailed(Some(e.into()))
    }
}

/// Over PostgreSQL: tells the other nodes that `ready` keys may feed their blocked clients, and
/// serves this node's ([`serve_later`]).
pub fn signal_ready(server: &Arc<crate::state::Shared>, ready: Vec<(u32, Bytes)>) {
    server
        .pubsub
        .relay(&crate::relay::Msg::Ready(ready.clone()));
    serve_later(server, ready);
}

/// Over PostgreSQL: serves this node's clients blocked on `ready` keys in a write job of its own
/// that locks every key their commands name (queued: it runs in a later group, after the one
/// that made the keys ready). Keys its serves write are signalled in turn ([`signal_ready`]).
pub fn serve_later(server: &Arc<crate::state::Shared>, ready: Vec<(u32, Bytes)>) {
    let waiters = server.blocking.waiting_on(&ready);
    if waiters.is_empty() {
        return;
    }
    let mut scope: relis::DeclaredKeys = waiters
        .iter()
        .flat_map(|w| w.declared.iter().cloned())
        .collect();
    scope.sort_unstable();
    scope.dedup();
    let cx = Cx {
        db: 0,
        proto: Protocol::Resp2,
        server: server.clone(),
        user: crate::acl::User::master(),
        client_id: 0,
        context: "toplevel",
    };
    // Kept outside the job: a failed commit answers them with its error.
    let served = Arc::new(Mutex::new(Vec::new()));
    let out = served.clone();
    server.db.write_async_keys(
        scope.clone(),
        move |w| {
            let mut done = Vec::new();
            let mut touched = Vec::new();
            for (db, key) in ready {
                let cx = Cx { db, ..cx.clone() };
                touched.extend(cx.server.blocking.serve_declared(
                    w,
                    &cx,
                    db,
                    &[key],
                    &mut done,
                    &scope,
                ));
            }
            if !touched.is_empty() {
                signal_ready(&cx.server, touched);
            }
            *out.lock() = done;
        },
        move |r| {
            let done = std::mem::take(&mut *served.lock());
            deliver(done, r.map_err(CmdError::from));
        },
    );
}

/// Sends the replies of served waiters; `committed` says whether their transaction committed.
pub fn deliver(deliveries: Vec<Delivery>, committed: Result<(), CmdError>) {
    for (waiter, reply) in deliveries {
        waiter.answer(match &committed {
            Ok(()) => Ok(reply),
            Err(e) => Err(e.clone()),
        });
    }
}
