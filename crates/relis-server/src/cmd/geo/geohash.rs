//! GEOHASH key [member ...] — members' positions as standard 11-character geohash strings (nil
//! for a missing member). <https://redis.io/commands/geohash/>
//!
//! Redis's scores use ±85.05° of latitude; the standard geohash uses ±90°, so the position is
//! decoded and encoded again, and the eleventh character (bits a score does not have) is `0`.

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// GEOHASH's declaration.
pub const SPEC: Spec = Spec {
    name: "geohash",
    arity: -2,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "geo", "slow"]),
    keys: (1, 1, 1),
    group: "geo",
    since: "3.2.0",
    summary: "Returns members of a geospatial index as standard geohash strings",
    complexity:
        "O(log(N)) for each member requested, where N is the number of elements in the sorted set.",
    parse: GeoHash::parse,
    ..Spec::BASE
};

/// GEOHASH.
#[derive(Debug, PartialEq)]
pub struct GeoHash {
    key: Bytes,
    members: Vec<Bytes>,
}

impl GeoHash {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let members = args.rest();
        args.finish()?;
        Parsed::read(GeoHash { key, members })
    }
}

impl ReadCmd for GeoHash {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let scores =
            crate::cmd::counted(cx, &self.key, r.zmscore(cx.db, &self.key, &self.members))?
                .unwrap_or_else(|| vec![None; self.members.len()]);
        Ok(Frame::Array(
            scores
                .into_iter()
                .map(|s| match s {
                    Some(s) => Frame::Bulk(Bytes::copy_from_slice(&relis::geo::geohash_string(s))),
                    None => Frame::Null,
                })
                .collect(),
        ))
    }
}
