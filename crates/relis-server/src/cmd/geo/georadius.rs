//! GEORADIUS key longitude latitude radius M|KM|FT|MI [WITHCOORD] [WITHDIST] [WITHHASH]
//! [COUNT count [ANY]] [ASC|DESC] [STORE key] [STOREDIST key] — members within a radius of a
//! point; GEORADIUSBYMEMBER key member radius unit ... — around a member; the `_RO` variants
//! without STORE. Deprecated by Redis in favour of GEOSEARCH, still served alike.
//! <https://redis.io/commands/georadius/>, <https://redis.io/commands/georadiusbymember/>
//!
//! The search itself is `search.rs` (Redis's `georadiusGeneric`).

use super::search::{georadius_keys, georadiusbymember_keys, Form, Search};
use crate::cmd::{FindKeys, KeySpec, Spec};

const KEY_SPECS: &[KeySpec] = &[
    KeySpec {
        flags: Spec::key_flags(&["RO", "access"]),
        index: 1,
        notes: "",
        find: FindKeys::Range(0, 1, 0),
    },
    KeySpec {
        flags: Spec::key_flags(&["OW", "update"]),
        index: 6,
        notes: "",
        find: FindKeys::AfterKeyword("STORE", 0, 1, 0),
    },
    KeySpec {
        flags: Spec::key_flags(&["OW", "update"]),
        index: 6,
        notes: "",
        find: FindKeys::AfterKeyword("STOREDIST", 0, 1, 0),
    },
];

/// GEORADIUS's declaration.
pub const SPEC_GEORADIUS: Spec = Spec {
    name: "georadius",
    arity: -6,
    flags: Spec::flags(&["write", "denyoom", "movablekeys"]),
    acl: Spec::acl(&["write", "geo", "slow"]),
    keys: (1, 1, 1),
    group: "geo",
    since: "3.2.0",
    summary: "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point",
    complexity: "O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by center and radius and M is the number of items inside the index.",
    parse: |a| Search::from_args(a, Form::Radius { ro: false })?.parsed(),
    key_specs: KEY_SPECS,
    find_keys: Some(georadius_keys),
    unblocks: true,
    ..Spec::BASE
};

/// GEORADIUS_RO's declaration.
pub const SPEC_GEORADIUS_RO: Spec = Spec {
    name: "georadius_ro",
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "geo", "slow"]),
    since: "3.2.10",
    summary: "A read-only variant for GEORADIUS",
    parse: |a| Search::from_args(a, Form::Radius { ro: true })?.parsed(),
    key_specs: &[],
    find_keys: None,
    unblocks: false,
    ..SPEC_GEORADIUS
};

/// GEORADIUSBYMEMBER's declaration.
pub const SPEC_GEORADIUSBYMEMBER: Spec = Spec {
    name: "georadiusbymember",
    arity: -5,
    summary: "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member",
    complexity: "O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by center and radius and M is the number of items inside the index.",
    parse: |a| Search::from_args(a, Form::RadiusByMember { ro: false })?.parsed(),
    key_specs: &[
        KeySpec {
            flags: Spec::key_flags(&["RO", "access"]),
            index: 1,
            notes: "",
            find: FindKeys::Range(0, 1, 0),
        },
        KeySpec {
            flags: Spec::key_flags(&["OW", "update"]),
            index: 5,
            notes: "",
            find: FindKeys::AfterKeyword("STORE", 0, 1, 0),
        },
        KeySpec {
            flags: Spec::key_flags(&["OW", "update"]),
            index: 5,
            notes: "",
            find: FindKeys::AfterKeyword("STOREDIST", 0, 1, 0),
        },
    ],
    find_keys: Some(georadiusbymember_keys),
    ..SPEC_GEORADIUS
};

/// GEORADIUSBYMEMBER_RO's declaration.
pub const SPEC_GEORADIUSBYMEMBER_RO: Spec = Spec {
    name: "georadiusbymember_ro",
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "geo", "slow"]),
    since: "3.2.10",
    summary: "A read-only variant for GEORADIUSBYMEMBER",
    parse: |a| Search::from_args(a, Form::RadiusByMember { ro: true })?.parsed(),
    key_specs: &[],
    find_keys: None,
    unblocks: false,
    ..SPEC_GEORADIUSBYMEMBER
};
