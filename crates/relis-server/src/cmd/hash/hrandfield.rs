//! HRANDFIELD key [count [WITHVALUES]] — a random field of the hash at `key` (nil when there is
//! none); with a count, `count` distinct fields (the whole hash when it has no more), or, for a
//! negative count, `-count` fields picked independently, which may repeat. WITHVALUES adds each
//! field's value: flat under RESP2, `[field, value]` pairs under RESP3.
//! <https://redis.io/commands/hrandfield/>
//!
//! Redis reads the count before it looks the key up: a count outside ±9223372036854775807 is
//! `ERR value is out of range, value must between ...`, and with WITHVALUES one beyond
//! ±4611686018427387903 is `ERR value is out of range`. Relis returns at most
//! `relis::HRANDFIELD_MAX_REPEATS` fields for a negative count (a larger one is `ERR value is out
//! of range` too), where Redis would try to build any reply and run out of memory.
//!
//! Cost: one random pick is O(N) row steps at worst (the engine picks by position); see the
//! engine's `hash.rs`.

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// HRANDFIELD's declaration.
pub const SPEC: Spec = Spec {
    name: "hrandfield",
    arity: -2,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "hash", "slow"]),
    keys: (1, 1, 1),
    group: "hash",
    since: "6.2.0",
    summary: "Get one or multiple random fields from a hash",
    complexity: "O(N) where N is the number of fields returned",
    parse: HRandField::parse,
    tips: &["nondeterministic_output"],
    ..Spec::BASE
};

/// HRANDFIELD key [count [WITHVALUES]].
#[derive(Debug, PartialEq, Eq)]
pub struct HRandField {
    key: Bytes,
    /// The count and WITHVALUES, when a count is given.
    count: Option<(i64, bool)>,
}

fn out_of_range() -> CmdError {
    CmdError::OUT_OF_RANGE
}

impl HRandField {
    fn from_args(args: &mut Args) -> Result<HRandField, CmdError> {
        let key = args.next()?;
        if args.is_empty() {
            return Ok(HRandField { key, count: None });
        }
        // Redis's getRangeLongFromObjectOrReply(-LONG_MAX, LONG_MAX).
        let count = args.next_i64()?;
        if count == i64::MIN {
            return Err(CmdError::OUT_OF_LONG_RANGE);
        }
        let with_values = match args.remaining() {
            0 => false,
            1 if args.eat("withvalues") => true,
            _ => return Err(CmdError::Syntax),
        };
        // Redis refuses counts whose reply (two entries each) could not be counted.
        if with_values && count.unsigned_abs() > (i64::MAX / 2) as u64 {
            return Err(out_of_range());
        }
        args.finish()?;
        Ok(HRandField {
            key,
            count: Some((count, with_values)),
        })
    }

    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::read(HRandField::from_args(args)?)
    }
}

impl ReadCmd for HRandField {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let Some((count, with_values)) = self.count else {
            let f = crate::cmd::counted(cx, &self.key, r.hrandfield(cx.db, &self.key))?;
            return Ok(f.map_or(Frame::Null, Frame::Bulk));
        };
        let found = match r.hrandfield_count(cx.db, &self.key, count, with_values) {
            // Too many repeats to answer (the key exists).
            Err(relis::Error::NotInteger) => {
                cx.hit(&self.key, true);
                return Err(out_of_range());
            }
            found => crate::cmd::counted(cx, &self.key, found)?.unwrap_or_default(),
        };
        let reply = if !with_values {
            found.into_iter().map(|(f, _)| Frame::Bulk(f)).collect()
        } else if cx.proto == resp::Protocol::Resp3 {
            found
                .into_iter()
                .map(|(f, v)| {
                    Frame::Array(vec![Frame::Bulk(f), Frame::Bulk(v.unwrap_or_default())])
                })
                .collect()
        } else {
            found
                .into_iter()
                .flat_map(|(f, v)| [Frame::Bulk(f), Frame::Bulk(v.unwrap_or_default())])
                .collect()
        };
        Ok(Frame::Array(reply))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::hash::args_of;

    fn parse(line: &str) -> Result<HRandField, CmdError> {
        HRandField::from_args(&mut args_of("hrandfield", line))
    }

    #[test]
    fn count_and_withvalues() {
        assert_eq!(parse("h").unwrap().count, None);
        assert_eq!(parse("h 5").unwrap().count, Some((5, false)));
        assert_eq!(parse("h -5 WithValues").unwrap().count, Some((-5, true)));
        assert_eq!(parse("h 0 withvalues").unwrap().count, Some((0, true)));
        assert_eq!(
            parse("h 9223372036854775807").unwrap().count,
            Some((i64::MAX, false))
        );
        assert_eq!(
            parse("h -9223372036854775807").unwrap().count,
            Some((-i64::MAX, false))
        );
        assert_eq!(
            parse("h 4611686018427387903 withvalues").unwrap().count,
            Some((4611686018427387903, true))
        );
        assert_eq!(
            parse("h -4611686018427387903 withvalues").unwrap().count,
            Some((-4611686018427387903, true))
        );
        for bad in ["h x", "h 1.5", "h 9223372036854775808", "h x foo", "h 01"] {
            assert_eq!(parse(bad), Err(CmdError::NotInteger), "{bad}");
        }
        assert_eq!(
            parse("h -9223372036854775808"),
            Err(CmdError::err(
                "value is out of range, value must between -9223372036854775807 and 9223372036854775807"
            ))
        );
        for bad in [
            "h 4611686018427387904 withvalues",
            "h -4611686018427387904 withvalues",
        ] {
            assert_eq!(parse(bad), Err(out_of_range()), "{bad}");
        }
        for bad in ["h 1 foo", "h 1 withvalues foo", "h 1 withvalues withvalues"] {
            assert_eq!(parse(bad), Err(CmdError::Syntax), "{bad}");
        }
        assert_eq!(
            parse("h 4611686018427387904 foo"),
            Err(CmdError::Syntax),
            "the syntax before the WITHVALUES range"
        );
    }
}
