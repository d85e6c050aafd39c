//! Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.
//!
//! Commands between MULTI and EXEC are checked (existence, arity, auth) and queued as raw lines;
//! EXEC parses them and runs every keyspace command as ONE writer job, so the whole transaction
//! is one SQLite transaction that no other client's write interleaves with. A command that fails
//! at run time replies its error and is rolled back alone (its savepoint); the others still run,
//! as in Redis. WATCH remembers each key's version; EXEC compares them inside the same writer job
//! and replies nil when any changed (or expired).

pub mod exec;
pub mod multi;
pub mod watch;

use crate::cmd::Spec;

/// The transaction commands.
pub static SPECS: &[Spec] = &[
    multi::SPEC_MULTI,
    multi::SPEC_DISCARD,
    exec::SPEC,
    watch::SPEC_WATCH,
    watch::SPEC_UNWATCH,
];
