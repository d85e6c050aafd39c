//! Redis 7.0 commands Relis has not implemented yet (DUMP/RESTORE/MIGRATE): known to ACL
//! rules only, so that a rule naming one is accepted, shown back and applied when the command lands. Not dispatched, not in COMMAND.
//! Generated once by tools/gen_planned.py from redis-server 7.0.15; when a family
//! lands, its specs move to the family's own table.

use crate::cmd::Spec;

/// The planned commands, each with its subcommands, in name order.
pub static SPECS: &[Spec] = &[
    Spec {
        name: "dump",
        arity: 2,
        flags: &["readonly"],
        acl: &["keyspace", "read", "slow"],
        keys: (1, 1, 1),
        group: "generic",
        since: "2.6.0",
        summary: "Return a serialized version of the value stored at the specified key.",
        ..Spec::BASE
    },
    Spec {
        name: "migrate",
        arity: -6,
        flags: &["write", "movablekeys"],
        acl: &["keyspace", "write", "slow", "dangerous"],
        keys: (3, 3, 1),
        group: "generic",
        since: "2.6.0",
        summary: "Atomically transfer a key from a Redis instance to another one.",
        ..Spec::BASE
    },
    Spec {
        name: "restore",
        arity: -4,
        flags: &["write", "denyoom"],
        acl: &["keyspace", "write", "slow", "dangerous"],
        keys: (1, 1, 1),
        group: "generic",
        since: "2.6.0",
        summary: "Create a key using the provided serialized value, previously obtained using DUMP.",
        ..Spec::BASE
    },
    Spec {
        name: "restore-asking",
        arity: -4,
        flags: &["write", "denyoom", "asking"],
        acl: &["keyspace", "write", "slow", "dangerous"],
        keys: (1, 1, 1),
        group: "server",
        since: "3.0.0",
        summary: "An internal command for migrating keys in a cluster",
        ..Spec::BASE
    },
];
