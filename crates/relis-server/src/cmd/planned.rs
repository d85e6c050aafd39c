//! Redis 7.0 commands Relis has not implemented yet (bitmaps, HyperLogLog, geo): known to ACL
//! rules only, so that a rule naming one is accepted,
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
];
