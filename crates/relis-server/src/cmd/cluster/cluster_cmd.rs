//! CLUSTER <subcommand> — the cluster commands, answered as a standalone redis-server
//! (`cluster-enabled no`) answers them: every subcommand, CLUSTER HELP included, is refused
//! with "ERR This instance has cluster support disabled" once its arity is right.
//! <https://redis.io/commands/cluster/>
//!
//! Relis is one server, never a cluster node; the subcommands exist so that clients probing
//! for cluster mode get Redis's answer, COMMAND lists them, and ACL rules may name them.

use crate::args::Args;
use crate::cmd::{Parsed, Spec};
use crate::error::CmdError;

use super::Disabled;

fn parse_sub(args: &mut Args) -> Result<Parsed, CmdError> {
    // Redis refuses before it looks at the arguments.
    args.rest();
    Parsed::conn(Disabled)
}

/// CLUSTER's declaration.
pub const SPEC: Spec = Spec {
    name: "cluster",
    arity: -2,
    acl: Spec::acl(&["slow"]),
    group: "cluster",
    since: "3.0.0",
    summary: "A container for cluster commands",
    complexity: "Depends on subcommand.",
    subcommands: SUBCOMMANDS,
    ..Spec::BASE
};

/// CLUSTER's subcommands, as redis-server 7.0.15 declares them.
pub const SUBCOMMANDS: &[Spec] = &[
    Spec {
        name: "cluster|addslots",
        arity: -3,
        flags: Spec::flags(&["admin", "stale", "no_async_loading"]),
        acl: Spec::acl(&["admin", "slow", "dangerous"]),
        group: "cluster",
        since: "3.0.0",
        summary: "Assign new hash slots to receiving node",
        complexity: "O(N) where N is the total number of hash slot arguments",
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|addslotsrange",
        arity: -4,
        flags: Spec::flags(&["admin", "stale", "no_async_loading"]),
        acl: Spec::acl(&["admin", "slow", "dangerous"]),
        group: "cluster",
        since: "7.0.0",
        summary: "Assign new hash slots to receiving node",
        complexity: "O(N) where N is the total number of the slots between the start slot and end slot arguments.",
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|bumpepoch",
        arity: 2,
        flags: Spec::flags(&["admin", "stale", "no_async_loading"]),
        acl: Spec::acl(&["admin", "slow", "dangerous"]),
        group: "cluster",
        since: "3.0.0",
        summary: "Advance the cluster config epoch",
        complexity: "O(1)",
        tips: &["nondeterministic_output"],
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|count-failure-reports",
        arity: 3,
        flags: Spec::flags(&["admin", "stale"]),
        acl: Spec::acl(&["admin", "slow", "dangerous"]),
        group: "cluster",
        since: "3.0.0",
        summary: "Return the number of failure reports active for a given node",
        complexity: "O(N) where N is the number of failure reports",
        tips: &["nondeterministic_output"],
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|countkeysinslot",
        arity: 3,
        flags: Spec::flags(&["stale"]),
        acl: Spec::acl(&["slow"]),
        group: "cluster",
        since: "3.0.0",
        summary: "Return the number of local keys in the specified hash slot",
        complexity: "O(1)",
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|delslots",
        arity: -3,
        flags: Spec::flags(&["admin", "stale", "no_async_loading"]),
        acl: Spec::acl(&["admin", "slow", "dangerous"]),
        group: "cluster",
        since: "3.0.0",
        summary: "Set hash slots as unbound in receiving node",
        complexity: "O(N) where N is the total number of hash slot arguments",
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|delslotsrange",
        arity: -4,
        flags: Spec::flags(&["admin", "stale", "no_async_loading"]),
        acl: Spec::acl(&["admin", "slow", "dangerous"]),
        group: "cluster",
        since: "7.0.0",
        summary: "Set hash slots as unbound in receiving node",
        complexity: "O(N) where N is the total number of the slots between the start slot and end slot arguments.",
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|failover",
        arity: -2,
        flags: Spec::flags(&["admin", "stale", "no_async_loading"]),
        acl: Spec::acl(&["admin", "slow", "dangerous"]),
        group: "cluster",
        since: "3.0.0",
        summary: "Forces a replica to perform a manual failover of its master.",
        complexity: "O(1)",
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|flushslots",
        arity: 2,
        flags: Spec::flags(&["admin", "stale", "no_async_loading"]),
        acl: Spec::acl(&["admin", "slow", "dangerous"]),
        group: "cluster",
        since: "3.0.0",
        summary: "Delete a node's own slots information",
        complexity: "O(1)",
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|forget",
        arity: 3,
        flags: Spec::flags(&["admin", "stale", "no_async_loading"]),
        acl: Spec::acl(&["admin", "slow", "dangerous"]),
        group: "cluster",
        since: "3.0.0",
        summary: "Remove a node from the nodes table",
        complexity: "O(1)",
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|getkeysinslot",
        arity: 4,
        flags: Spec::flags(&["stale"]),
        acl: Spec::acl(&["slow"]),
        group: "cluster",
        since: "3.0.0",
        summary: "Return local key names in the specified hash slot",
        complexity: "O(log(N)) where N is the number of requested keys",
        tips: &["nondeterministic_output"],
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|help",
        arity: 2,
        flags: Spec::flags(&["loading", "stale"]),
        acl: Spec::acl(&["slow"]),
        group: "cluster",
        since: "5.0.0",
        summary: "Show helpful text about the different subcommands",
        complexity: "O(1)",
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|info",
        arity: 2,
        flags: Spec::flags(&["stale"]),
        acl: Spec::acl(&["slow"]),
        group: "cluster",
        since: "3.0.0",
        summary: "Provides info about Redis Cluster node state",
        complexity: "O(1)",
        tips: &["nondeterministic_output"],
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|keyslot",
        arity: 3,
        flags: Spec::flags(&["stale"]),
        acl: Spec::acl(&["slow"]),
        group: "cluster",
        since: "3.0.0",
        summary: "Returns the hash slot of the specified key",
        complexity: "O(N) where N is the number of bytes in the key",
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|links",
        arity: 2,
        flags: Spec::flags(&["stale"]),
        acl: Spec::acl(&["slow"]),
        group: "cluster",
        since: "7.0.0",
        summary: "Returns a list of all TCP links to and from peer nodes in cluster",
        complexity: "O(N) where N is the total number of Cluster nodes",
        tips: &["nondeterministic_output"],
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|meet",
        arity: -4,
        flags: Spec::flags(&["admin", "stale", "no_async_loading"]),
        acl: Spec::acl(&["admin", "slow", "dangerous"]),
        group: "cluster",
        since: "3.0.0",
        summary: "Force a node cluster to handshake with another node",
        complexity: "O(1)",
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|myid",
        arity: 2,
        flags: Spec::flags(&["stale"]),
        acl: Spec::acl(&["slow"]),
        group: "cluster",
        since: "3.0.0",
        summary: "Return the node id",
        complexity: "O(1)",
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|nodes",
        arity: 2,
        flags: Spec::flags(&["stale"]),
        acl: Spec::acl(&["slow"]),
        group: "cluster",
        since: "3.0.0",
        summary: "Get Cluster config for the node",
        complexity: "O(N) where N is the total number of Cluster nodes",
        tips: &["nondeterministic_output"],
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|replicas",
        arity: 3,
        flags: Spec::flags(&["admin", "stale"]),
        acl: Spec::acl(&["admin", "slow", "dangerous"]),
        group: "cluster",
        since: "5.0.0",
        summary: "List replica nodes of the specified master node",
        complexity: "O(1)",
        tips: &["nondeterministic_output"],
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|replicate",
        arity: 3,
        flags: Spec::flags(&["admin", "stale", "no_async_loading"]),
        acl: Spec::acl(&["admin", "slow", "dangerous"]),
        group: "cluster",
        since: "3.0.0",
        summary: "Reconfigure a node as a replica of the specified master node",
        complexity: "O(1)",
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|reset",
        arity: -2,
        flags: Spec::flags(&["admin", "noscript", "stale"]),
        acl: Spec::acl(&["admin", "slow", "dangerous"]),
        group: "cluster",
        since: "3.0.0",
        summary: "Reset a Redis Cluster node",
        complexity: "O(N) where N is the number of known nodes. The command may execute a FLUSHALL as a side effect.",
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|saveconfig",
        arity: 2,
        flags: Spec::flags(&["admin", "stale", "no_async_loading"]),
        acl: Spec::acl(&["admin", "slow", "dangerous"]),
        group: "cluster",
        since: "3.0.0",
        summary: "Forces the node to save cluster state on disk",
        complexity: "O(1)",
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|set-config-epoch",
        arity: 3,
        flags: Spec::flags(&["admin", "stale", "no_async_loading"]),
        acl: Spec::acl(&["admin", "slow", "dangerous"]),
        group: "cluster",
        since: "3.0.0",
        summary: "Set the configuration epoch in a new node",
        complexity: "O(1)",
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|setslot",
        arity: -4,
        flags: Spec::flags(&["admin", "stale", "no_async_loading"]),
        acl: Spec::acl(&["admin", "slow", "dangerous"]),
        group: "cluster",
        since: "3.0.0",
        summary: "Bind a hash slot to a specific node",
        complexity: "O(1)",
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|shards",
        arity: 2,
        flags: Spec::flags(&["stale"]),
        acl: Spec::acl(&["slow"]),
        group: "cluster",
        since: "7.0.0",
        summary: "Get array of cluster slots to node mappings",
        complexity: "O(N) where N is the total number of cluster nodes",
        tips: &["nondeterministic_output"],
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|slaves",
        arity: 3,
        flags: Spec::flags(&["admin", "stale"]),
        acl: Spec::acl(&["admin", "slow", "dangerous"]),
        group: "cluster",
        since: "3.0.0",
        summary: "List replica nodes of the specified master node",
        complexity: "O(1)",
        tips: &["nondeterministic_output"],
        parse: parse_sub,
    ..Spec::BASE
    },
    Spec {
        name: "cluster|slots",
        arity: 2,
        flags: Spec::flags(&["stale"]),
        acl: Spec::acl(&["slow"]),
        group: "cluster",
        since: "3.0.0",
        summary: "Get array of Cluster slot to node mappings",
        complexity: "O(N) where N is the total number of Cluster nodes",
        tips: &["nondeterministic_output"],
        parse: parse_sub,
    ..Spec::BASE
    },
];
