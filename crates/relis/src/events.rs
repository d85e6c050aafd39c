//! Keyspace events: what a write did to which key (Redis's keyspace notifications), recorded by
//! the writer while a group transaction runs and handed to an [`EventSink`] only once that
//! transaction has committed. A write whose savepoint rolls back, or a group commit that fails,
//! emits nothing.
//!
//! The engine records two kinds of event itself, because only it sees them happen: `new` when a
//! key is created, and `expired` when an expired key is deleted (by a write that finds it, or by
//! the background sweep). Everything else (`set`, `lpush`, `del`, ...) is recorded by the caller
//! through [`crate::Writer::notify`].

use std::sync::Arc;

/// Event classes, with the bit values of Redis's `NOTIFY_*` flags.
pub mod class {
    /// Generic commands (DEL, EXPIRE, RENAME, ...): `g`.
    pub const GENERIC: u32 = 1 << 2;
    /// String commands: `$`.
    pub const STRING: u32 = 1 << 3;
    /// List commands: `l`.
    pub const LIST: u32 = 1 << 4;
    /// Set commands: `s`.
    pub const SET: u32 = 1 << 5;
    /// Hash commands: `h`.
    pub const HASH: u32 = 1 << 6;
    /// Sorted set commands: `z`.
    pub const ZSET: u32 = 1 << 7;
    /// Keys deleted because they expired: `x`.
    pub const EXPIRED: u32 = 1 << 8;
    /// Keys evicted for maxmemory: `e`.
    pub const EVICTED: u32 = 1 << 9;
    /// Stream commands: `t`.
    pub const STREAM: u32 = 1 << 10;
    /// Reads of missing keys: `m`.
    pub const KEY_MISS: u32 = 1 << 11;
    /// Module events: `d`.
    pub const MODULE: u32 = 1 << 13;
    /// Keys created: `n`.
    pub const NEW: u32 = 1 << 14;
    /// Relis's own, never a keyspace notification: a database was flushed or swapped (its key
    /// is empty), which client-side caching answers with the null invalidation.
    pub const FLUSHED: u32 = 1 << 20;
    /// Relis's own, never a keyspace notification: a key's value changed without an event of
    /// its own (Redis's `signalModifiedKey` alone, as when PFCOUNT caches the cardinality in
    /// the value), which client-side caching answers with an invalidation.
    pub const MODIFIED: u32 = 1 << 21;
}

/// One event: `event` happened to `key` in logical database `db`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyEvent {
    /// Its class (one of [`class`]).
    pub class: u32,
    /// Redis's event name (`set`, `lpush`, `expired`, ...).
    pub event: &'static str,
    /// The logical database.
    pub db: u32,
    /// The key.
    pub key: Vec<u8>,
    /// The client whose command did it ([`crate::Writer::set_origin`]); 0 for the server's
    /// own work (the expiry sweep, lazy expiry).
    pub origin: u64,
}

/// Receives the events of each committed group transaction.
pub trait EventSink: Send + Sync {
    /// Whether events of `class` are wanted now. Checked before an event is recorded, so an
    /// unwanted event costs nothing (not even copying its key).
    fn wants(&self, class: u32) -> bool;

    /// Called on the writer thread right after a commit, before the writes in it are answered,
    /// with that transaction's events in the order they happened. Must not block.
    fn publish(&self, events: Vec<KeyEvent>);
}

/// Where the writer finds the sink: set once, after the engine is open.
pub(crate) type SinkSlot = Arc<std::sync::OnceLock<Arc<dyn EventSink>>>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Db, Error};
    use parking_lot::Mutex;

    /// One published batch: (event, key) pairs.
    type Batch = Vec<(&'static str, Vec<u8>)>;

    /// Keeps every published batch.
    #[derive(Default)]
    struct Keep(Mutex<Vec<Batch>>);

    impl EventSink for Keep {
        fn wants(&self, _class: u32) -> bool {
            true
        }
        fn publish(&self, events: Vec<KeyEvent>) {
            self.0
                .lock()
                .push(events.into_iter().map(|e| (e.event, e.key)).collect());
        }
    }

    #[test]
    fn only_committed_work_is_published() {
        let db = Db::open_in_memory().unwrap();
        let sink = Arc::new(Keep::default());
        db.set_event_sink(sink.clone());
        db.write(|w| {
            w.notify(class::STRING, "set", 0, b"a");
            w.set(0, b"a", b"1", Default::default())?;
            Ok(())
        })
        .unwrap();
        // A failing unit of work: what it recorded goes with its rollback.
        let r: crate::Result<()> = db.write(|w| {
            w.set(0, b"b", b"1", Default::default())?;
            w.notify(class::STRING, "set", 0, b"b");
            Err(Error::WrongType)
        });
        assert!(r.is_err());
        // A savepoint inside a unit of work that succeeds.
        db.write(|w| {
            let _ = w.atomic(|w| -> crate::Result<()> {
                w.notify(class::GENERIC, "del", 0, b"x");
                Err(Error::WrongType)
            });
            w.notify(class::GENERIC, "kept", 0, b"y");
            Ok(())
        })
        .unwrap();
        let got = sink.0.lock().clone();
        assert_eq!(
            got,
            vec![
                vec![("set", b"a".to_vec()), ("new", b"a".to_vec())],
                vec![("kept", b"y".to_vec())],
            ]
        );
    }
}
