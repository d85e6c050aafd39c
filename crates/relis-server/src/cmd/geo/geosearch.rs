//! GEOSEARCH key FROMMEMBER member|FROMLONLAT longitude latitude BYRADIUS radius unit|BYBOX
//! width height unit [ASC|DESC] [COUNT count [ANY]] [WITHCOORD] [WITHDIST] [WITHHASH] — members
//! inside a circle or a box; GEOSEARCHSTORE destination source ... [STOREDIST] — the same,
//! stored as a sorted set (scores: the members' geohashes, or with STOREDIST their distances).
//! <https://redis.io/commands/geosearch/>, <https://redis.io/commands/geosearchstore/>
//!
//! The search itself is `search.rs` (Redis's `georadiusGeneric`).

use super::search::{Form, Search};
use crate::cmd::{FindKeys, KeySpec, Spec};

/// GEOSEARCH's declaration.
pub const SPEC_GEOSEARCH: Spec = Spec {
    name: "geosearch",
    arity: -7,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "geo", "slow"]),
    keys: (1, 1, 1),
    group: "geo",
    since: "6.2.0",
    summary: "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle.",
    complexity: "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area around the shape provided as the filter and M is the number of items inside the shape",
    parse: |a| Search::from_args(a, Form::Search)?.parsed(),
    ..Spec::BASE
};

/// GEOSEARCHSTORE's declaration.
pub const SPEC_GEOSEARCHSTORE: Spec = Spec {
    name: "geosearchstore",
    arity: -8,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["write", "geo", "slow"]),
    keys: (1, 2, 1),
    summary: "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, and store the result in another key.",
    parse: |a| Search::from_args(a, Form::SearchStore)?.parsed(),
    key_specs: &[
        KeySpec {
            flags: Spec::key_flags(&["OW", "update"]),
            index: 1,
            notes: "",
            find: FindKeys::Range(0, 1, 0),
        },
        KeySpec {
            flags: Spec::key_flags(&["RO", "access"]),
            index: 2,
            notes: "",
            find: FindKeys::Range(0, 1, 0),
        },
    ],
    unblocks: true,
    ..SPEC_GEOSEARCH
};
