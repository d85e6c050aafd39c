//! The geo family: members of a sorted set whose scores are 52-bit interleaved geohashes
//! (Redis's `geo.c`). GEOADD writes through ZADD; the searches read the score ranges of the
//! cells around the centre (see `relis::geo`). Coordinates are replied as Redis's
//! `addReplyHumanLongDouble` writes them (`%.17Lf` trimmed: a bulk string under RESP2, a double
//! under RESP3), distances as `%.4f` bulk strings under both.

pub mod geoadd;
pub mod geodist;
pub mod geohash;
pub mod geopos;
pub mod georadius;
pub mod geosearch;
pub mod search;

use crate::cmd::Spec;
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// The geo commands, in Redis's COMMAND order.
pub static SPECS: &[Spec] = &[
    geoadd::SPEC,
    georadius::SPEC_GEORADIUS,
    georadius::SPEC_GEORADIUS_RO,
    georadius::SPEC_GEORADIUSBYMEMBER,
    georadius::SPEC_GEORADIUSBYMEMBER_RO,
    geosearch::SPEC_GEOSEARCH,
    geosearch::SPEC_GEOSEARCHSTORE,
    geohash::SPEC,
    geopos::SPEC,
    geodist::SPEC,
];

/// `ERR could not decode requested zset member`.
fn member_error() -> CmdError {
    CmdError::GEO_DECODE
}

/// Redis's `extractUnitOrReply`: the unit's factor to metres.
///
/// # Errors
/// `ERR unsupported unit provided. please use M, KM, FT, MI`.
fn parse_unit(arg: &[u8]) -> Result<f64, CmdError> {
    relis::geo::unit(arg).ok_or(CmdError::GEO_UNIT)
}

/// Redis's `extractLongLatOrReply`: two floats, then the range check.
///
/// # Errors
/// `ERR value is not a valid float`; `ERR invalid longitude,latitude pair <lon>,<lat>`.
fn parse_lonlat(lon: &[u8], lat: &[u8]) -> Result<(f64, f64), CmdError> {
    let lon = crate::cmd::zset::parse_score(lon)?;
    let lat = crate::cmd::zset::parse_score(lat)?;
    if !relis::geo::valid(lon, lat) {
        return Err(CmdError::geo_pair(
            &relis::geo::fmt_f(lon),
            &relis::geo::fmt_f(lat),
        ));
    }
    Ok((lon, lat))
}

/// A double as `addReplyHumanLongDouble` sends it.
fn human(x: f64) -> Frame {
    Frame::DoubleText(Bytes::from(relis::geo::human(x)))
}

/// A distance as `addReplyDoubleDistance` sends it: a `%.4f` bulk string.
fn distance(d: f64) -> Frame {
    Frame::Bulk(Bytes::from(format!("{d:.4}")))
}

/// A `[longitude, latitude]` pair.
fn coords(lon: f64, lat: f64) -> Frame {
    Frame::Array(vec![human(lon), human(lat)])
}
