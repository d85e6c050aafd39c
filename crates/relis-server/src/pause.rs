//! CLIENT PAUSE: the server-wide pause that holds clients' commands back for a while, as Redis
//! 7.0 does it. `ALL` holds every command; `WRITE` holds the commands that may change data
//! (flagged `write`, and those Redis flags `may_replicate`: EVAL, EVALSHA, FCALL, PUBLISH,
//! SPUBLISH, PFCOUNT). A held command runs once the pause ends (its time passes or CLIENT UNPAUSE); the
//! replies to the commands before it in a pipeline go out meanwhile, as Redis sends them.
//! Commands rejected before they would run (unknown, wrong arity, no authentication) are
//! answered at once, as in Redis. The check on the command path is one atomic load.

use crate::spec::{Flags, Spec};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::Notify;
use tokio::time::Instant;

/// What a pause holds back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PauseMode {
    /// Commands that may write.
    Write,
    /// Every command.
    All,
}

/// The server's pause state.
#[derive(Default)]
pub struct Pause {
    /// Whether a pause may be in force (cleared lazily once it has ended).
    active: AtomicBool,
    /// Until when, and what.
    state: Mutex<Option<(Instant, PauseMode)>>,
    /// Wakes held clients when the pause is lifted early (CLIENT UNPAUSE).
    lifted: Notify,
}

// Commands Redis flags `may_replicate` are held by a WRITE pause although not `write`.
use crate::spec::MAY_REPLICATE;

impl Pause {
    /// CLIENT PAUSE: holds `mode`'s commands until `until`. A pause in force is only ever made
    /// longer or stronger, as in Redis.
    pub fn pause(&self, until: Instant, mode: PauseMode) {
        let mut st = self.state.lock();
        let next = match *st {
            Some((end, m)) if end > Instant::now() => (end.max(until), m.max(mode)),
            _ => (until, mode),
        };
        *st = Some(next);
        self.active.store(true, Ordering::Release);
    }

    /// CLIENT UNPAUSE: lifts the pause; held commands run.
    pub fn unpause(&self) {
        *self.state.lock() = None;
        self.active.store(false, Ordering::Release);
        self.lifted.notify_waiters();
    }

    /// Whether `spec` is held by a pause in force now, and until when.
    fn holds<P>(&self, spec: &Spec<P>) -> Option<Instant> {
        if !self.active.load(Ordering::Acquire) {
            return None;
        }
        let mut st = self.state.lock();
        let (end, mode) = (*st)?;
        if end <= Instant::now() {
            *st = None;
            self.active.store(false, Ordering::Release);
            return None;
        }
        let writes = spec.has(Flags::WRITE) || MAY_REPLICATE.contains(&spec.name);
        (mode == PauseMode::All || writes).then_some(end)
    }

    /// Whether a pause in force holds `spec` now.
    pub fn holds_now<P>(&self, spec: &Spec<P>) -> bool {
        self.holds(spec).is_some()
    }

    /// Whether a pause may be in force (the cheap check before [`Pause::wait`]).
    pub fn active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }

    /// Waits while a pause holds `spec`.
    pub async fn wait<P>(&self, spec: &Spec<P>) {
        loop {
            let lifted = self.lifted.notified();
            tokio::pin!(lifted);
            // Registered before the check, so an UNPAUSE in between is not missed.
            lifted.as_mut().enable();
            let Some(end) = self.holds(spec) else {
                return;
            };
            tokio::select! {
                _ = tokio::time::sleep_until(end) => {}
                _ = lifted => {}
            }
        }
    }
}
