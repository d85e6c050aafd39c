//! GEOADD key [NX|XX] [CH] longitude latitude member [longitude latitude member ...] — adds
//! members at positions (or moves them): ZADD with each position's 52-bit geohash as the score.
//! <https://redis.io/commands/geoadd/>
//!
//! As Redis's `geoaddCommand`: NX, XX and CH in any order and number before the first triple
//! (GT, LT and INCR are not options here), then the triples' count and NX with XX are checked
//! (`ERR syntax error` for both), then every position, before the key is looked up.

use super::parse_lonlat;
use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::{ZAddCond, ZAddOptions, ZAddOutcome};
use resp::Frame;

/// GEOADD's declaration.
pub const SPEC: Spec = Spec {
    name: "geoadd",
    arity: -5,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["write", "geo", "slow"]),
    keys: (1, 1, 1),
    group: "geo",
    since: "3.2.0",
    summary:
        "Add one or more geospatial items in the geospatial index represented using a sorted set",
    complexity:
        "O(log(N)) for each item added, where N is the number of elements in the sorted set.",
    parse: GeoAdd::parse,
    key_flags: Spec::key_flags(&["RW", "update"]),
    unblocks: true,
    ..Spec::BASE
};

/// GEOADD.
#[derive(Debug, PartialEq)]
pub struct GeoAdd {
    key: Bytes,
    opts: ZAddOptions,
    pairs: Vec<(f64, Bytes)>,
}

impl GeoAdd {
    fn from_args(args: &mut Args) -> Result<GeoAdd, CmdError> {
        let key = args.next()?;
        let (mut nx, mut xx, mut ch) = (false, false, false);
        loop {
            if args.eat("nx") {
                nx = true;
            } else if args.eat("xx") {
                xx = true;
            } else if args.eat("ch") {
                ch = true;
            } else {
                break;
            }
        }
        let rest = args.rest();
        // No triple at all reaches ZADD with no pair: a syntax error there too.
        if rest.is_empty() || !rest.len().is_multiple_of(3) || (nx && xx) {
            return Err(CmdError::Syntax);
        }
        let mut pairs = Vec::with_capacity(rest.len() / 3);
        for t in rest.chunks(3) {
            let (lon, lat) = parse_lonlat(&t[0], &t[1])?;
            let score = relis::geo::encode(lon, lat).ok_or(CmdError::Syntax)?;
            pairs.push((score, t[2].clone()));
        }
        args.finish()?;
        let cond = if nx {
            ZAddCond::Nx
        } else if xx {
            ZAddCond::Xx
        } else {
            ZAddCond::Always
        };
        Ok(GeoAdd {
            key,
            opts: ZAddOptions {
                cond,
                ch,
                ..ZAddOptions::default()
            },
            pairs,
        })
    }

    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::write(GeoAdd::from_args(args)?)
    }
}

impl WriteCmd for GeoAdd {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        // GEOADD is ZADD in Redis: it fires `zadd` when anything was added or moved.
        let version = |w: &relis::Writer<'_>| -> Result<Option<i64>, CmdError> {
            Ok(w.meta(cx.db, &self.key)?.map(|m| m.version))
        };
        let before = if w.wants_events(relis::events::class::ZSET) {
            Some(version(w)?)
        } else {
            None
        };
        let outcome = w.zadd(cx.db, &self.key, self.opts, &self.pairs)?;
        if let Some(before) = before {
            if version(w)? != before {
                w.notify(relis::events::class::ZSET, "zadd", cx.db, &self.key);
            }
        }
        match outcome {
            ZAddOutcome::Count(n) => Ok(Frame::Integer(n)),
            other => Err(CmdError::Internal(format!("GEOADD got {other:?}"))),
        }
    }

    // The type check comes before the first write.
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<GeoAdd, String> {
        GeoAdd::from_args(&mut crate::cmd::zset::args_of("geoadd", line)).map_err(|e| e.message())
    }

    #[test]
    fn options_triples_and_errors() {
        let g = parse("k ch nx 13.361389 38.115556 Palermo").unwrap();
        assert_eq!(g.opts.cond, ZAddCond::Nx);
        assert!(g.opts.ch);
        assert_eq!(g.pairs, vec![(3479099956230698.0, Bytes::from("Palermo"))]);
        for (line, err) in [
            ("k nx 1 2", "ERR syntax error"),
            ("k ch ch ch", "ERR syntax error"),
            ("k nx xx 1 2 a", "ERR syntax error"),
            ("k gt 1 2 a", "ERR syntax error"),
            ("k 1 2 a 3", "ERR syntax error"),
            ("k abc 1 a", "ERR value is not a valid float"),
            (
                "k 200 100 a",
                "ERR invalid longitude,latitude pair 200.000000,100.000000",
            ),
        ] {
            assert_eq!(parse(line).unwrap_err(), err, "{line}");
        }
    }
}
