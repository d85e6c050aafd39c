//! TTL key, PTTL key, EXPIRETIME key and PEXPIRETIME key — a key's remaining time to live
//! (seconds or milliseconds) or its absolute expiry (unix seconds or milliseconds).
//! <https://redis.io/commands/ttl/> (and pttl, expiretime, pexpiretime).
//!
//! All four reply -2 for a missing key and -1 for a key without expiry, as Redis's
//! `ttlGenericCommand`. Seconds are rounded to the nearest (`(ms + 500) / 1000`), also for
//! EXPIRETIME.

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use bytes::Bytes;
use relis::Ttl as State;
use resp::Frame;

/// TTL's declaration.
pub const SPEC_TTL: Spec = Spec {
    name: "ttl",
    tips: &["nondeterministic_output"],
    arity: 2,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["keyspace", "read", "fast"]),
    keys: (1, 1, 1),
    group: "generic",
    since: "1.0.0",
    summary: "Get the time to live for a key in seconds",
    complexity: "O(1)",
    parse: Ttl::parse_ttl,
    ..Spec::BASE
};

/// PTTL's declaration.
pub const SPEC_PTTL: Spec = Spec {
    name: "pttl",
    tips: &["nondeterministic_output"],
    arity: 2,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["keyspace", "read", "fast"]),
    keys: (1, 1, 1),
    group: "generic",
    since: "2.6.0",
    summary: "Get the time to live for a key in milliseconds",
    complexity: "O(1)",
    parse: Ttl::parse_pttl,
    ..Spec::BASE
};

/// EXPIRETIME's declaration.
pub const SPEC_EXPIRETIME: Spec = Spec {
    name: "expiretime",
    arity: 2,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["keyspace", "read", "fast"]),
    keys: (1, 1, 1),
    group: "generic",
    since: "7.0.0",
    summary: "Get the expiration Unix timestamp for a key",
    complexity: "O(1)",
    parse: Ttl::parse_expiretime,
    ..Spec::BASE
};

/// PEXPIRETIME's declaration.
pub const SPEC_PEXPIRETIME: Spec = Spec {
    name: "pexpiretime",
    arity: 2,
    flags: Spec::flags(&["readonly", "fast"]),
    acl: Spec::acl(&["keyspace", "read", "fast"]),
    keys: (1, 1, 1),
    group: "generic",
    since: "7.0.0",
    summary: "Get the expiration Unix timestamp for a key in milliseconds",
    complexity: "O(1)",
    parse: Ttl::parse_pexpiretime,
    ..Spec::BASE
};

/// A TTL-family command.
#[derive(Debug, PartialEq, Eq)]
pub struct Ttl {
    key: Bytes,
    /// Reply in milliseconds (PTTL, PEXPIRETIME).
    ms: bool,
    /// Reply the absolute time (EXPIRETIME, PEXPIRETIME).
    absolute: bool,
}

impl Ttl {
    fn parse(args: &mut Args, ms: bool, absolute: bool) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        args.finish()?;
        Parsed::read(Ttl { key, ms, absolute })
    }

    fn parse_ttl(args: &mut Args) -> Result<Parsed, CmdError> {
        Ttl::parse(args, false, false)
    }

    fn parse_pttl(args: &mut Args) -> Result<Parsed, CmdError> {
        Ttl::parse(args, true, false)
    }

    fn parse_expiretime(args: &mut Args) -> Result<Parsed, CmdError> {
        Ttl::parse(args, false, true)
    }

    fn parse_pexpiretime(args: &mut Args) -> Result<Parsed, CmdError> {
        Ttl::parse(args, true, true)
    }

    /// The reply for `state` at `now_ms`.
    fn reply(&self, state: State, now_ms: i64) -> i64 {
        match state {
            State::Missing => -2,
            State::Persistent => -1,
            State::At(at) => {
                let t = if self.absolute {
                    at
                } else {
                    at.saturating_sub(now_ms)
                }
                .max(0);
                if self.ms {
                    t
                } else {
                    // In i128 so that the rounding of times near i64::MAX comes out as Redis's.
                    ((i128::from(t) + 500) / 1000) as i64
                }
            }
        }
    }
}

impl ReadCmd for Ttl {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let state = r.ttl(cx.db, &self.key)?;
        cx.hit(&self.key, state != State::Missing);
        Ok(Frame::Integer(self.reply(state, r.now_ms())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(ms: bool, absolute: bool) -> Ttl {
        Ttl {
            key: Bytes::new(),
            ms,
            absolute,
        }
    }

    #[test]
    fn replies() {
        let now = 1_000_000;
        let (ttl, pttl) = (cmd(false, false), cmd(true, false));
        let (et, pet) = (cmd(false, true), cmd(true, true));
        for c in [&ttl, &pttl, &et, &pet] {
            assert_eq!(c.reply(State::Missing, now), -2);
            assert_eq!(c.reply(State::Persistent, now), -1);
        }
        assert_eq!(ttl.reply(State::At(now + 1499), now), 1);
        assert_eq!(ttl.reply(State::At(now + 1500), now), 2);
        assert_eq!(ttl.reply(State::At(now + 1), now), 0);
        assert_eq!(pttl.reply(State::At(now + 1499), now), 1499);
        assert_eq!(
            et.reply(State::At(99_999_999_999_500), now),
            100_000_000_000
        );
        assert_eq!(
            pet.reply(State::At(99_999_999_999_500), now),
            99_999_999_999_500
        );
        assert_eq!(et.reply(State::At(i64::MAX), now), 9_223_372_036_854_776);
    }
}
