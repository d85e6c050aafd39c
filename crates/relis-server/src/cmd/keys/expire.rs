//! EXPIRE key seconds, PEXPIRE key milliseconds, EXPIREAT key unix-time-seconds and
//! PEXPIREAT key unix-time-milliseconds, each with an optional NX | XX | GT | LT condition.
//! <https://redis.io/commands/expire/> (and pexpire, expireat, pexpireat).
//!
//! One core, as Redis's `expireGenericCommand`: options are checked first, then the amount
//! (an integer, converted to milliseconds and made absolute with overflow checks naming the
//! command), then the key. A time that is not in the future deletes the key and replies 1.

use crate::args::{lower, parse_i64, Args};
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::ExpireCond;
use resp::Frame;

const FLAGS: crate::cmd::Flags = Spec::flags(&["write", "fast"]);
const ACL: crate::cmd::Cats = Spec::acl(&["keyspace", "write", "fast"]);

/// EXPIRE's declaration.
pub const SPEC_EXPIRE: Spec = Spec {
    name: "expire",
    key_flags: Spec::key_flags(&["RW", "update"]),
    arity: -3,
    flags: FLAGS,
    acl: ACL,
    keys: (1, 1, 1),
    group: "generic",
    since: "1.0.0",
    summary: "Set a key's time to live in seconds",
    complexity: "O(1)",
    parse: Expire::parse_expire,
    ..Spec::BASE
};

/// PEXPIRE's declaration.
pub const SPEC_PEXPIRE: Spec = Spec {
    name: "pexpire",
    key_flags: Spec::key_flags(&["RW", "update"]),
    arity: -3,
    flags: FLAGS,
    acl: ACL,
    keys: (1, 1, 1),
    group: "generic",
    since: "2.6.0",
    summary: "Set a key's time to live in milliseconds",
    complexity: "O(1)",
    parse: Expire::parse_pexpire,
    ..Spec::BASE
};

/// EXPIREAT's declaration.
pub const SPEC_EXPIREAT: Spec = Spec {
    name: "expireat",
    key_flags: Spec::key_flags(&["RW", "update"]),
    arity: -3,
    flags: FLAGS,
    acl: ACL,
    keys: (1, 1, 1),
    group: "generic",
    since: "1.2.0",
    summary: "Set the expiration for a key as a UNIX timestamp",
    complexity: "O(1)",
    parse: Expire::parse_expireat,
    ..Spec::BASE
};

/// PEXPIREAT's declaration.
pub const SPEC_PEXPIREAT: Spec = Spec {
    name: "pexpireat",
    key_flags: Spec::key_flags(&["RW", "update"]),
    arity: -3,
    flags: FLAGS,
    acl: ACL,
    keys: (1, 1, 1),
    group: "generic",
    since: "2.6.0",
    summary: "Set the expiration for a key as a UNIX timestamp specified in milliseconds",
    complexity: "O(1)",
    parse: Expire::parse_pexpireat,
    ..Spec::BASE
};

/// An EXPIRE-family command.
#[derive(Debug, PartialEq, Eq)]
pub struct Expire {
    key: Bytes,
    amount: i64,
    /// The amount is in seconds (EXPIRE, EXPIREAT) rather than milliseconds.
    seconds: bool,
    /// The amount is relative to now (EXPIRE, PEXPIRE) rather than a unix time.
    relative: bool,
    cond: ExpireCond,
    name: &'static str,
}

/// Parses the NX / XX / GT / LT options as Redis's `parseExtendedExpireArgumentsOrReply`.
fn parse_cond(opts: &[Bytes]) -> Result<ExpireCond, CmdError> {
    let (mut nx, mut xx, mut gt, mut lt) = (false, false, false, false);
    for o in opts {
        match lower(o).as_str() {
            "nx" => nx = true,
            "xx" => xx = true,
            "gt" => gt = true,
            "lt" => lt = true,
            _ => {
                return Err(CmdError::unsupported_option(o));
            }
        }
    }
    if nx && (xx || gt || lt) {
        return Err(CmdError::EXPIRE_NX_AND_OTHERS);
    }
    if gt && lt {
        return Err(CmdError::EXPIRE_GT_AND_LT);
    }
    Ok(match (nx, xx, gt, lt) {
        (true, ..) => ExpireCond::Nx,
        // GT never passes for a key without expiry, so XX adds nothing to it.
        (_, _, true, _) => ExpireCond::Gt,
        (_, true, _, true) => ExpireCond::XxLt,
        (_, _, _, true) => ExpireCond::Lt,
        (_, true, ..) => ExpireCond::Xx,
        _ => ExpireCond::Always,
    })
}

impl Expire {
    fn from_args(
        args: &mut Args,
        seconds: bool,
        relative: bool,
        name: &'static str,
    ) -> Result<Expire, CmdError> {
        let key = args.next()?;
        let amount = args.next()?;
        let cond = parse_cond(&args.rest())?;
        let amount = parse_i64(&amount)?;
        args.finish()?;
        Ok(Expire {
            key,
            amount,
            seconds,
            relative,
            cond,
            name,
        })
    }

    fn parse(
        args: &mut Args,
        seconds: bool,
        relative: bool,
        name: &'static str,
    ) -> Result<Parsed, CmdError> {
        Parsed::write(Expire::from_args(args, seconds, relative, name)?)
    }

    fn parse_expire(args: &mut Args) -> Result<Parsed, CmdError> {
        Expire::parse(args, true, true, "expire")
    }

    fn parse_pexpire(args: &mut Args) -> Result<Parsed, CmdError> {
        Expire::parse(args, false, true, "pexpire")
    }

    fn parse_expireat(args: &mut Args) -> Result<Parsed, CmdError> {
        Expire::parse(args, true, false, "expireat")
    }

    fn parse_pexpireat(args: &mut Args) -> Result<Parsed, CmdError> {
        Expire::parse(args, false, false, "pexpireat")
    }

    /// The absolute expiry in unix ms, with Redis's overflow checks.
    fn when(&self, now_ms: i64) -> Result<i64, CmdError> {
        let invalid = || CmdError::InvalidExpire(self.name);
        let mut when = self.amount;
        if self.seconds {
            when = when.checked_mul(1000).ok_or_else(invalid)?;
        }
        if self.relative {
            when = when.checked_add(now_ms).ok_or_else(invalid)?;
        }
        Ok(when)
    }
}

impl WriteCmd for Expire {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let now = w.now_ms();
        let when = self.when(now)?;
        let set = w.expire_at(cx.db, &self.key, when, self.cond)?;
        if set {
            // A time already past deletes the key: Redis calls that a `del`.
            let event = if when <= now { "del" } else { "expire" };
            w.notify(relis::events::class::GENERIC, event, cx.db, &self.key);
        }
        Ok(Frame::Integer(set as i64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &[&str]) -> Result<Expire, CmdError> {
        let (name, rest) = line.split_first().unwrap();
        let mut args = Args::new(
            "expire",
            rest.iter()
                .map(|a| Bytes::copy_from_slice(a.as_bytes()))
                .collect(),
        );
        match *name {
            "expire" => Expire::from_args(&mut args, true, true, "expire"),
            "pexpire" => Expire::from_args(&mut args, false, true, "pexpire"),
            "expireat" => Expire::from_args(&mut args, true, false, "expireat"),
            _ => Expire::from_args(&mut args, false, false, "pexpireat"),
        }
    }

    #[test]
    fn options() {
        let nx_err =
            CmdError::err("NX and XX, GT or LT options at the same time are not compatible");
        let gtlt_err = CmdError::err("GT and LT options at the same time are not compatible");
        let table: &[(&[&str], Result<ExpireCond, CmdError>)] = &[
            (&["expire", "k", "1"], Ok(ExpireCond::Always)),
            (&["expire", "k", "1", "nx"], Ok(ExpireCond::Nx)),
            (&["expire", "k", "1", "NX", "nx"], Ok(ExpireCond::Nx)),
            (&["expire", "k", "1", "xx"], Ok(ExpireCond::Xx)),
            (&["expire", "k", "1", "gt"], Ok(ExpireCond::Gt)),
            (&["expire", "k", "1", "xx", "gt"], Ok(ExpireCond::Gt)),
            (&["expire", "k", "1", "lt"], Ok(ExpireCond::Lt)),
            (&["expire", "k", "1", "lt", "xx"], Ok(ExpireCond::XxLt)),
            (&["expire", "k", "1", "nx", "xx"], Err(nx_err.clone())),
            (&["expire", "k", "1", "gt", "nx"], Err(nx_err.clone())),
            (&["expire", "k", "1", "nx", "lt"], Err(nx_err)),
            (&["expire", "k", "1", "gt", "lt"], Err(gtlt_err)),
            (
                &["expire", "k", "1", "foo"],
                Err(CmdError::text("ERR Unsupported option foo")),
            ),
            // Options are checked before the amount.
            (
                &["expire", "k", "x", "foo"],
                Err(CmdError::text("ERR Unsupported option foo")),
            ),
            (&["expire", "k", "x"], Err(CmdError::NotInteger)),
        ];
        for (line, want) in table {
            assert_eq!(&parse(line).map(|e| e.cond), want, "{line:?}");
        }
    }

    #[test]
    fn overflow_names_the_command() {
        let now = 1_700_000_000_000;
        let at = |line: &[&str]| parse(line).unwrap().when(now);
        assert_eq!(at(&["expire", "k", "10"]), Ok(now + 10_000));
        assert_eq!(at(&["pexpire", "k", "-5"]), Ok(now - 5));
        assert_eq!(at(&["expireat", "k", "2"]), Ok(2000));
        assert_eq!(at(&["pexpireat", "k", "9223372036854775807"]), Ok(i64::MAX));
        assert_eq!(
            at(&["expire", "k", "9223372036854776"]),
            Err(CmdError::InvalidExpire("expire"))
        );
        assert_eq!(
            at(&["expire", "k", "9223372036854775"]),
            Err(CmdError::InvalidExpire("expire")),
            "fits in ms, overflows when now is added"
        );
        assert_eq!(
            at(&["expireat", "k", "-9223372036854776"]),
            Err(CmdError::InvalidExpire("expireat"))
        );
        assert_eq!(
            at(&["expireat", "k", "-9223372036854775"]),
            Ok(-9223372036854775000)
        );
        assert_eq!(
            at(&["pexpire", "k", "9223372036854775000"]),
            Err(CmdError::InvalidExpire("pexpire"))
        );
    }
}
