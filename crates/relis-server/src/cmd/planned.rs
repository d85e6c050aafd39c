//! Redis 7.0 commands Relis has not implemented yet (streams, bitmaps, HyperLogLog, geo,
//! DUMP/RESTORE/MIGRATE): known to ACL rules only, so that a rule naming one is accepted,
//! shown back and applied when the command lands. Not dispatched, not in COMMAND.
//! Generated once by tools/gen_planned.py from redis-server 7.0.15; when a family
//! lands, its specs move to the family's own table.

use crate::cmd::Spec;

/// The planned commands, each with its subcommands, in name order.
pub static SPECS: &[Spec] = &[
    Spec {
        name: "bitcount",
        arity: -2,
        flags: &["readonly"],
        acl: &["read", "bitmap", "slow"],
        keys: (1, 1, 1),
        group: "bitmap",
        since: "2.6.0",
        summary: "Count set bits in a string",
        ..Spec::BASE
    },
    Spec {
        name: "bitfield",
        arity: -2,
        flags: &["write", "denyoom"],
        acl: &["write", "bitmap", "slow"],
        keys: (1, 1, 1),
        group: "bitmap",
        since: "3.2.0",
        summary: "Perform arbitrary bitfield integer operations on strings",
        ..Spec::BASE
    },
    Spec {
        name: "bitfield_ro",
        arity: -2,
        flags: &["readonly", "fast"],
        acl: &["read", "bitmap", "fast"],
        keys: (1, 1, 1),
        group: "bitmap",
        since: "6.0.0",
        summary: "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD",
        ..Spec::BASE
    },
    Spec {
        name: "bitop",
        arity: -4,
        flags: &["write", "denyoom"],
        acl: &["write", "bitmap", "slow"],
        keys: (2, -1, 1),
        group: "bitmap",
        since: "2.6.0",
        summary: "Perform bitwise operations between strings",
        ..Spec::BASE
    },
    Spec {
        name: "bitpos",
        arity: -3,
        flags: &["readonly"],
        acl: &["read", "bitmap", "slow"],
        keys: (1, 1, 1),
        group: "bitmap",
        since: "2.8.7",
        summary: "Find first bit set or clear in a string",
        ..Spec::BASE
    },
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
        name: "geoadd",
        arity: -5,
        flags: &["write", "denyoom"],
        acl: &["write", "geo", "slow"],
        keys: (1, 1, 1),
        group: "geo",
        since: "3.2.0",
        summary: "Add one or more geospatial items in the geospatial index represented using a sorted set",
        ..Spec::BASE
    },
    Spec {
        name: "geodist",
        arity: -4,
        flags: &["readonly"],
        acl: &["read", "geo", "slow"],
        keys: (1, 1, 1),
        group: "geo",
        since: "3.2.0",
        summary: "Returns the distance between two members of a geospatial index",
        ..Spec::BASE
    },
    Spec {
        name: "geohash",
        arity: -2,
        flags: &["readonly"],
        acl: &["read", "geo", "slow"],
        keys: (1, 1, 1),
        group: "geo",
        since: "3.2.0",
        summary: "Returns members of a geospatial index as standard geohash strings",
        ..Spec::BASE
    },
    Spec {
        name: "geopos",
        arity: -2,
        flags: &["readonly"],
        acl: &["read", "geo", "slow"],
        keys: (1, 1, 1),
        group: "geo",
        since: "3.2.0",
        summary: "Returns longitude and latitude of members of a geospatial index",
        ..Spec::BASE
    },
    Spec {
        name: "georadius",
        arity: -6,
        flags: &["write", "denyoom", "movablekeys"],
        acl: &["write", "geo", "slow"],
        keys: (1, 1, 1),
        group: "geo",
        since: "3.2.0",
        summary: "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point",
        ..Spec::BASE
    },
    Spec {
        name: "georadius_ro",
        arity: -6,
        flags: &["readonly"],
        acl: &["read", "geo", "slow"],
        keys: (1, 1, 1),
        group: "geo",
        since: "3.2.10",
        summary: "A read-only variant for GEORADIUS",
        ..Spec::BASE
    },
    Spec {
        name: "georadiusbymember",
        arity: -5,
        flags: &["write", "denyoom", "movablekeys"],
        acl: &["write", "geo", "slow"],
        keys: (1, 1, 1),
        group: "geo",
        since: "3.2.0",
        summary: "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member",
        ..Spec::BASE
    },
    Spec {
        name: "georadiusbymember_ro",
        arity: -5,
        flags: &["readonly"],
        acl: &["read", "geo", "slow"],
        keys: (1, 1, 1),
        group: "geo",
        since: "3.2.10",
        summary: "A read-only variant for GEORADIUSBYMEMBER",
        ..Spec::BASE
    },
    Spec {
        name: "geosearch",
        arity: -7,
        flags: &["readonly"],
        acl: &["read", "geo", "slow"],
        keys: (1, 1, 1),
        group: "geo",
        since: "6.2.0",
        summary: "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle.",
        ..Spec::BASE
    },
    Spec {
        name: "geosearchstore",
        arity: -8,
        flags: &["write", "denyoom"],
        acl: &["write", "geo", "slow"],
        keys: (1, 2, 1),
        group: "geo",
        since: "6.2.0",
        summary: "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, and store the result in another key.",
        ..Spec::BASE
    },
    Spec {
        name: "getbit",
        arity: 3,
        flags: &["readonly", "fast"],
        acl: &["read", "bitmap", "fast"],
        keys: (1, 1, 1),
        group: "bitmap",
        since: "2.2.0",
        summary: "Returns the bit value at offset in the string value stored at key",
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
        name: "pfadd",
        arity: -2,
        flags: &["write", "denyoom", "fast"],
        acl: &["write", "hyperloglog", "fast"],
        keys: (1, 1, 1),
        group: "hyperloglog",
        since: "2.8.9",
        summary: "Adds the specified elements to the specified HyperLogLog.",
        ..Spec::BASE
    },
    Spec {
        name: "pfcount",
        arity: -2,
        flags: &["readonly"],
        acl: &["read", "hyperloglog", "slow"],
        keys: (1, -1, 1),
        group: "hyperloglog",
        since: "2.8.9",
        summary: "Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).",
        ..Spec::BASE
    },
    Spec {
        name: "pfdebug",
        arity: 3,
        flags: &["write", "denyoom", "admin"],
        acl: &["write", "hyperloglog", "admin", "slow", "dangerous"],
        keys: (2, 2, 1),
        group: "hyperloglog",
        since: "2.8.9",
        summary: "Internal commands for debugging HyperLogLog values",
        ..Spec::BASE
    },
    Spec {
        name: "pfmerge",
        arity: -2,
        flags: &["write", "denyoom"],
        acl: &["write", "hyperloglog", "slow"],
        keys: (1, -1, 1),
        group: "hyperloglog",
        since: "2.8.9",
        summary: "Merge N different HyperLogLogs into a single one.",
        ..Spec::BASE
    },
    Spec {
        name: "pfselftest",
        arity: 1,
        flags: &["admin"],
        acl: &["hyperloglog", "admin", "slow", "dangerous"],
        group: "hyperloglog",
        since: "2.8.9",
        summary: "An internal command for testing HyperLogLog values",
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
    Spec {
        name: "setbit",
        arity: 4,
        flags: &["write", "denyoom"],
        acl: &["write", "bitmap", "slow"],
        keys: (1, 1, 1),
        group: "bitmap",
        since: "2.2.0",
        summary: "Sets or clears the bit at offset in the string value stored at key",
        ..Spec::BASE
    },
    Spec {
        name: "xack",
        arity: -4,
        flags: &["write", "fast"],
        acl: &["write", "stream", "fast"],
        keys: (1, 1, 1),
        group: "stream",
        since: "5.0.0",
        summary: "Marks a pending message as correctly processed, effectively removing it from the pending entries list of the consumer group. Return value of the command is the number of messages successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL.",
        ..Spec::BASE
    },
    Spec {
        name: "xadd",
        arity: -5,
        flags: &["write", "denyoom", "fast"],
        acl: &["write", "stream", "fast"],
        keys: (1, 1, 1),
        group: "stream",
        since: "5.0.0",
        summary: "Appends a new entry to a stream",
        ..Spec::BASE
    },
    Spec {
        name: "xautoclaim",
        arity: -6,
        flags: &["write", "fast"],
        acl: &["write", "stream", "fast"],
        keys: (1, 1, 1),
        group: "stream",
        since: "6.2.0",
        summary: "Changes (or acquires) ownership of messages in a consumer group, as if the messages were delivered to the specified consumer.",
        ..Spec::BASE
    },
    Spec {
        name: "xclaim",
        arity: -6,
        flags: &["write", "fast"],
        acl: &["write", "stream", "fast"],
        keys: (1, 1, 1),
        group: "stream",
        since: "5.0.0",
        summary: "Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered to the specified consumer.",
        ..Spec::BASE
    },
    Spec {
        name: "xdel",
        arity: -3,
        flags: &["write", "fast"],
        acl: &["write", "stream", "fast"],
        keys: (1, 1, 1),
        group: "stream",
        since: "5.0.0",
        summary: "Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist.",
        ..Spec::BASE
    },
    Spec {
        name: "xgroup",
        arity: -2,
        flags: &[],
        acl: &["slow"],
        group: "stream",
        since: "5.0.0",
        summary: "A container for consumer groups commands",
        subcommands: &[
            Spec {
                name: "xgroup|create",
                arity: -5,
                flags: &["write", "denyoom"],
                acl: &["write", "stream", "slow"],
                keys: (2, 2, 1),
                group: "stream",
                since: "5.0.0",
                summary: "Create a consumer group.",
                ..Spec::BASE
            },
            Spec {
                name: "xgroup|createconsumer",
                arity: 5,
                flags: &["write", "denyoom"],
                acl: &["write", "stream", "slow"],
                keys: (2, 2, 1),
                group: "stream",
                since: "6.2.0",
                summary: "Create a consumer in a consumer group.",
                ..Spec::BASE
            },
            Spec {
                name: "xgroup|delconsumer",
                arity: 5,
                flags: &["write"],
                acl: &["write", "stream", "slow"],
                keys: (2, 2, 1),
                group: "stream",
                since: "5.0.0",
                summary: "Delete a consumer from a consumer group.",
                ..Spec::BASE
            },
            Spec {
                name: "xgroup|destroy",
                arity: 4,
                flags: &["write"],
                acl: &["write", "stream", "slow"],
                keys: (2, 2, 1),
                group: "stream",
                since: "5.0.0",
                summary: "Destroy a consumer group.",
                ..Spec::BASE
            },
            Spec {
                name: "xgroup|help",
                arity: 2,
                flags: &["loading", "stale"],
                acl: &["stream", "slow"],
                group: "stream",
                since: "5.0.0",
                summary: "Show helpful text about the different subcommands",
                ..Spec::BASE
            },
            Spec {
                name: "xgroup|setid",
                arity: -5,
                flags: &["write"],
                acl: &["write", "stream", "slow"],
                keys: (2, 2, 1),
                group: "stream",
                since: "5.0.0",
                summary: "Set a consumer group to an arbitrary last delivered ID value.",
                ..Spec::BASE
            },
        ],
        ..Spec::BASE
    },
    Spec {
        name: "xinfo",
        arity: -2,
        flags: &[],
        acl: &["slow"],
        group: "stream",
        since: "5.0.0",
        summary: "A container for stream introspection commands",
        subcommands: &[
            Spec {
                name: "xinfo|consumers",
                arity: 4,
                flags: &["readonly"],
                acl: &["read", "stream", "slow"],
                keys: (2, 2, 1),
                group: "stream",
                since: "5.0.0",
                summary: "List the consumers in a consumer group",
                ..Spec::BASE
            },
            Spec {
                name: "xinfo|groups",
                arity: 3,
                flags: &["readonly"],
                acl: &["read", "stream", "slow"],
                keys: (2, 2, 1),
                group: "stream",
                since: "5.0.0",
                summary: "List the consumer groups of a stream",
                ..Spec::BASE
            },
            Spec {
                name: "xinfo|help",
                arity: 2,
                flags: &["loading", "stale"],
                acl: &["stream", "slow"],
                group: "stream",
                since: "5.0.0",
                summary: "Show helpful text about the different subcommands",
                ..Spec::BASE
            },
            Spec {
                name: "xinfo|stream",
                arity: -3,
                flags: &["readonly"],
                acl: &["read", "stream", "slow"],
                keys: (2, 2, 1),
                group: "stream",
                since: "5.0.0",
                summary: "Get information about a stream",
                ..Spec::BASE
            },
        ],
        ..Spec::BASE
    },
    Spec {
        name: "xlen",
        arity: 2,
        flags: &["readonly", "fast"],
        acl: &["read", "stream", "fast"],
        keys: (1, 1, 1),
        group: "stream",
        since: "5.0.0",
        summary: "Return the number of entries in a stream",
        ..Spec::BASE
    },
    Spec {
        name: "xpending",
        arity: -3,
        flags: &["readonly"],
        acl: &["read", "stream", "slow"],
        keys: (1, 1, 1),
        group: "stream",
        since: "5.0.0",
        summary: "Return information and entries from a stream consumer group pending entries list, that are messages fetched but never acknowledged.",
        ..Spec::BASE
    },
    Spec {
        name: "xrange",
        arity: -4,
        flags: &["readonly"],
        acl: &["read", "stream", "slow"],
        keys: (1, 1, 1),
        group: "stream",
        since: "5.0.0",
        summary: "Return a range of elements in a stream, with IDs matching the specified IDs interval",
        ..Spec::BASE
    },
    Spec {
        name: "xread",
        arity: -4,
        flags: &["readonly", "blocking", "movablekeys"],
        acl: &["read", "stream", "slow", "blocking"],
        group: "stream",
        since: "5.0.0",
        summary: "Return never seen elements in multiple streams, with IDs greater than the ones reported by the caller for each stream. Can block.",
        ..Spec::BASE
    },
    Spec {
        name: "xreadgroup",
        arity: -7,
        flags: &["write", "blocking", "movablekeys"],
        acl: &["write", "stream", "slow", "blocking"],
        group: "stream",
        since: "5.0.0",
        summary: "Return new entries from a stream using a consumer group, or access the history of the pending entries for a given consumer. Can block.",
        ..Spec::BASE
    },
    Spec {
        name: "xrevrange",
        arity: -4,
        flags: &["readonly"],
        acl: &["read", "stream", "slow"],
        keys: (1, 1, 1),
        group: "stream",
        since: "5.0.0",
        summary: "Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE",
        ..Spec::BASE
    },
    Spec {
        name: "xsetid",
        arity: -3,
        flags: &["write", "denyoom", "fast"],
        acl: &["write", "stream", "fast"],
        keys: (1, 1, 1),
        group: "stream",
        since: "5.0.0",
        summary: "An internal command for replicating stream values",
        ..Spec::BASE
    },
    Spec {
        name: "xtrim",
        arity: -4,
        flags: &["write"],
        acl: &["write", "stream", "slow"],
        keys: (1, 1, 1),
        group: "stream",
        since: "5.0.0",
        summary: "Trims the stream to (approximately if '~' is passed) a certain size",
        ..Spec::BASE
    },
];
