//! GEOPOS key [member ...] — members' positions as `[longitude, latitude]` pairs (a null array
//! for a missing member). <https://redis.io/commands/geopos/>

use super::coords;
use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// GEOPOS's declaration.
pub const SPEC: Spec = Spec {
    name: "geopos",
    arity: -2,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "geo", "slow"]),
    keys: (1, 1, 1),
    group: "geo",
    since: "3.2.0",
    summary: "Returns longitude and latitude of members of a geospatial index",
    complexity: "O(N) where N is the number of members requested.",
    parse: GeoPos::parse,
    ..Spec::BASE
};

/// GEOPOS.
#[derive(Debug, PartialEq)]
pub struct GeoPos {
    key: Bytes,
    members: Vec<Bytes>,
}

impl GeoPos {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let members = args.rest();
        args.finish()?;
        Parsed::read(GeoPos { key, members })
    }
}

impl ReadCmd for GeoPos {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let scores =
            crate::cmd::counted(cx, &self.key, r.zmscore(cx.db, &self.key, &self.members))?
                .unwrap_or_else(|| vec![None; self.members.len()]);
        Ok(Frame::Array(
            scores
                .into_iter()
                .map(|s| match s {
                    Some(s) => {
                        let (lon, lat) = relis::geo::decode(s);
                        coords(lon, lat)
                    }
                    None => Frame::NullArray,
                })
                .collect(),
        ))
    }
}
