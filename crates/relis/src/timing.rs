//! How long the engine's own work takes, for a server's latency monitor: each group commit
//! (`commit`), the fsyncs inside it or inside a checkpoint (`fsync`), and each WAL checkpoint
//! (`checkpoint`). The engine only measures; what to keep is the hook's business
//! ([`crate::Db::on_timing`]).

use std::cell::Cell;
use std::sync::OnceLock;
use std::time::Duration;

/// A piece of engine work that was timed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timed {
    /// A group commit on the writer: from the end of its last write to the end of its COMMIT
    /// (the expiry sweep, the pending sorted-set work, the COMMIT and its fsync).
    Commit,
    /// The fsyncs of one commit or one checkpoint, added up.
    Fsync,
    /// One WAL checkpoint (the checkpointer's, or the writer's catch-up).
    Checkpoint,
}

impl Timed {
    /// The event's name as LATENCY shows it.
    pub fn name(self) -> &'static str {
        match self {
            Timed::Commit => "commit",
            Timed::Fsync => "fsync",
            Timed::Checkpoint => "checkpoint",
        }
    }
}

/// A receiver of timings; called on the engine's threads, so it must be quick.
pub type TimingHook = Box<dyn Fn(Timed, Duration) + Send + Sync>;

/// Where a database's timings go (nowhere until a hook is installed).
#[derive(Default)]
pub struct Timings {
    hook: OnceLock<TimingHook>,
}

impl std::fmt::Debug for Timings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Timings")
            .field("hooked", &self.hook.get().is_some())
            .finish()
    }
}

impl Timings {
    /// Installs the hook; only the first call takes effect.
    pub(crate) fn set(&self, hook: TimingHook) {
        let _ = self.hook.set(hook);
    }

    /// Hands `took` for `what` to the hook.
    pub(crate) fn report(&self, what: Timed, took: Duration) {
        if let Some(h) = self.hook.get() {
            h(what, took);
        }
    }

    /// Reports `what`, and the fsyncs this thread did meanwhile, given their start (see
    /// [`take_sync`], called before the work began).
    pub(crate) fn report_with_syncs(&self, what: Timed, started: std::time::Instant) {
        let took = started.elapsed();
        let synced = take_sync();
        if self.hook.get().is_some() {
            self.report(what, took);
            if !synced.is_zero() {
                self.report(Timed::Fsync, synced);
            }
        }
    }
}

thread_local! {
    /// Time this thread spent in fsync since the last [`take_sync`]. The VFS is process-wide
    /// and knows no database; the thread does (a writer or checkpointer serves one).
    static SYNCED: Cell<Duration> = const { Cell::new(Duration::ZERO) };
}

/// Adds an fsync's time to this thread's count (the VFS's `xSync`).
pub(crate) fn note_sync(took: Duration) {
    SYNCED.with(|s| s.set(s.get() + took));
}

/// This thread's fsync time since the last call, which starts a new count.
pub(crate) fn take_sync() -> Duration {
    SYNCED.with(|s| s.replace(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn reports_work_and_its_fsyncs() {
        let t = Timings::default();
        // Without a hook nothing is reported, and nothing panics.
        t.report(Timed::Commit, Duration::from_millis(1));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        t.set(Box::new(move |w, d| s.lock().unwrap().push((w, d))));
        take_sync();
        let started = std::time::Instant::now();
        note_sync(Duration::from_millis(3));
        note_sync(Duration::from_millis(4));
        t.report_with_syncs(Timed::Checkpoint, started);
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0].0, Timed::Checkpoint);
        assert_eq!(seen[1], (Timed::Fsync, Duration::from_millis(7)));
        assert_eq!(take_sync(), Duration::ZERO);
    }

    #[test]
    fn a_database_reports_its_commits_fsyncs_and_checkpoints() {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::Db::open_with(crate::Options {
            path: Some(dir.path().join("t.db")),
            durability: crate::Durability::Full,
            ..crate::Options::default()
        })
        .unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        db.on_timing(Box::new(move |w, _| s.lock().unwrap().push(w)));
        db.set("k", "v").unwrap();
        // The commit, and (durability full) the fsync of its WAL frames, come before the reply.
        let got = seen.lock().unwrap().clone();
        assert!(got.contains(&Timed::Commit), "{got:?}");
        assert!(got.contains(&Timed::Fsync), "{got:?}");
        // The checkpointer runs every half second or so.
        let until = std::time::Instant::now() + Duration::from_secs(10);
        while !seen.lock().unwrap().contains(&Timed::Checkpoint) {
            assert!(std::time::Instant::now() < until, "no checkpoint reported");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
