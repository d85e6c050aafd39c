//! GEODIST key member1 member2 [M|KM|FT|MI] — the distance between two members, nil when
//! either (or the key) is missing. <https://redis.io/commands/geodist/>
//!
//! The unit is checked before the key is looked up, as Redis does.

use super::{distance, parse_unit};
use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// GEODIST's declaration.
pub const SPEC: Spec = Spec {
    name: "geodist",
    arity: -4,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "geo", "slow"]),
    keys: (1, 1, 1),
    group: "geo",
    since: "3.2.0",
    summary: "Returns the distance between two members of a geospatial index",
    complexity: "O(log(N))",
    parse: GeoDist::parse,
    ..Spec::BASE
};

/// GEODIST.
#[derive(Debug, PartialEq)]
pub struct GeoDist {
    key: Bytes,
    a: Bytes,
    b: Bytes,
    unit: f64,
}

impl GeoDist {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let a = args.next()?;
        let b = args.next()?;
        let unit = match args.remaining() {
            0 => 1.0,
            1 => parse_unit(&args.next()?)?,
            _ => return Err(CmdError::Syntax),
        };
        args.finish()?;
        Parsed::read(GeoDist { key, a, b, unit })
    }
}

impl ReadCmd for GeoDist {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let members = [self.a.clone(), self.b.clone()];
        let scores = crate::cmd::counted(cx, &self.key, r.zmscore(cx.db, &self.key, &members))?;
        let Some([Some(a), Some(b)]) = scores.as_deref().map(|s| [s[0], s[1]]) else {
            return Ok(Frame::Null);
        };
        let ((lon1, lat1), (lon2, lat2)) = (relis::geo::decode(a), relis::geo::decode(b));
        Ok(distance(
            relis::geo::distance(lon1, lat1, lon2, lat2) / self.unit,
        ))
    }
}
