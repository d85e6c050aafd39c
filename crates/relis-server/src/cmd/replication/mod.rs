//! The replication family: ROLE, WAIT, REPLICAOF/SLAVEOF, FAILOVER, PSYNC/SYNC, REPLCONF.
//! Relis is always a master without replicas; each command answers as a redis-server 7.0.15
//! in that state answers, and what would need replication is refused with a clear error.

pub mod failover;
pub mod replconf;
pub mod replicaof;
pub mod role;
pub mod sync;
pub mod wait;

use crate::cmd::Spec;

/// The replication commands.
pub static SPECS: &[Spec] = &[
    role::SPEC,
    wait::SPEC,
    replicaof::SPEC_REPLICAOF,
    replicaof::SPEC_SLAVEOF,
    failover::SPEC,
    sync::SPEC_PSYNC,
    sync::SPEC_SYNC,
    replconf::SPEC,
];

/// The replication offset Relis reports (ROLE): it has no replication stream.
pub const OFFSET: i64 = 0;
