//! GETEX key [EX seconds | PX milliseconds | EXAT unix-time-seconds |
//! PXAT unix-time-milliseconds | PERSIST] — the string value of `key`, changing its expiry.
//! <https://redis.io/commands/getex/>
//!
//! A write command even without options (Redis flags it `write`). Redis checks the options'
//! syntax first, then looks the key up, and only then validates the amount: a bad amount on a
//! missing key replies nil, on a key of another type WRONGTYPE. An EXAT/PXAT time that has
//! already passed deletes the key (after replying with its value).

use crate::args::{lower, Args};
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::{Expiry, KeyType};
use resp::Frame;

/// GETEX's declaration.
pub const SPEC: Spec = Spec {
    name: "getex",
    key_notes: "RW and UPDATE because it changes the TTL",
    arity: -2,
    flags: Spec::flags(&["write", "fast"]),
    acl: Spec::acl(&["write", "string", "fast"]),
    keys: (1, 1, 1),
    group: "string",
    since: "6.2.0",
    summary: "Get the value of a key and optionally set its expiration",
    complexity: "O(1)",
    parse: GetEx::parse,
    ..Spec::BASE
};

/// The expiry unit given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Ex,
    Px,
    ExAt,
    PxAt,
}

/// GETEX key [option].
#[derive(Debug, PartialEq, Eq)]
pub struct GetEx {
    key: Bytes,
    /// The unit and its amount, not yet validated.
    expire: Option<(Unit, Bytes)>,
    persist: bool,
}

impl GetEx {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        GetEx::parse_args(args).and_then(Parsed::write)
    }

    fn parse_args(args: &mut Args) -> Result<GetEx, CmdError> {
        let key = args.next()?;
        let (mut expire, mut persist) = (None::<(Unit, Bytes)>, false);
        while let Some(a) = args.peek().cloned() {
            args.next()?;
            let unit = match lower(&a).as_str() {
                "persist" if expire.is_none() => {
                    persist = true;
                    continue;
                }
                "ex" => Unit::Ex,
                "px" => Unit::Px,
                "exat" => Unit::ExAt,
                "pxat" => Unit::PxAt,
                _ => return Err(CmdError::Syntax),
            };
            // As in SET: the same unit may repeat (the last amount wins), units may not mix.
            if persist || args.is_empty() || expire.as_ref().is_some_and(|(u, _)| *u != unit) {
                return Err(CmdError::Syntax);
            }
            expire = Some((unit, args.next()?));
        }
        args.finish()?;
        Ok(GetEx {
            key,
            expire,
            persist,
        })
    }

    /// The expiry to apply, validated as Redis's getExpireMillisecondsOrReply does.
    fn expiry(&self) -> Result<Option<Expiry>, CmdError> {
        Ok(match &self.expire {
            None if self.persist => Some(Expiry::Clear),
            None => None,
            Some((unit, amount)) => {
                let seconds = matches!(unit, Unit::Ex | Unit::ExAt);
                let ms = super::set::expire_ms(amount, seconds, "getex")?;
                Some(match unit {
                    Unit::Ex | Unit::Px => Expiry::In(ms),
                    Unit::ExAt | Unit::PxAt => Expiry::At(ms),
                })
            }
        })
    }
}

impl WriteCmd for GetEx {
    // Every error of this command comes before its first write (see WriteCmd::on_error).
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }

    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let meta = w.meta(cx.db, &self.key)?;
        cx.hit(&self.key, meta.is_some());
        let had_ttl = match meta {
            None => return Ok(Frame::Null),
            Some(m) if m.kind != KeyType::String => return Err(CmdError::WrongType),
            Some(m) => m.expire_at.is_some(),
        };
        let expiry = self.expiry()?;
        let now = w.now_ms();
        let v = w.getex(cx.db, &self.key, expiry).map_err(|e| match e {
            relis::Error::InvalidExpire => CmdError::InvalidExpire("getex"),
            e => e.into(),
        })?;
        let event = match expiry {
            // A time already past deletes the key.
            Some(Expiry::At(at)) if at <= now => Some("del"),
            Some(Expiry::At(_) | Expiry::In(_)) => Some("expire"),
            Some(Expiry::Clear) if had_ttl => Some("persist"),
            _ => None,
        };
        if let Some(e) = event {
            w.notify(relis::events::class::GENERIC, e, cx.db, &self.key);
        }
        Ok(v.map_or(Frame::Null, Frame::Bulk))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<GetEx, CmdError> {
        GetEx::parse_args(&mut super::super::args_of("getex", line))
    }

    #[test]
    fn options() {
        assert_eq!(parse("k").unwrap().expiry(), Ok(None));
        assert_eq!(
            parse("k persist").unwrap().expiry(),
            Ok(Some(Expiry::Clear))
        );
        assert_eq!(
            parse("k PERSIST PERSIST").unwrap().expiry(),
            Ok(Some(Expiry::Clear))
        );
        assert_eq!(
            parse("k EX 10").unwrap().expiry(),
            Ok(Some(Expiry::In(10_000)))
        );
        assert_eq!(parse("k px 10").unwrap().expiry(), Ok(Some(Expiry::In(10))));
        assert_eq!(
            parse("k EXAT 10").unwrap().expiry(),
            Ok(Some(Expiry::At(10_000)))
        );
        assert_eq!(
            parse("k PXAT 10").unwrap().expiry(),
            Ok(Some(Expiry::At(10)))
        );
        assert_eq!(
            parse("k EX 10 EX 20").unwrap().expiry(),
            Ok(Some(Expiry::In(20_000)))
        );
        for bad in [
            "k EX",
            "k EX 10 PX 10",
            "k PXAT 1 EXAT 1",
            "k PERSIST EX 10",
            "k EX 10 PERSIST",
            "k KEEPTTL",
            "k NX",
            "k GET",
            "k BOGUS",
            "k EX 10 EX",
        ] {
            assert_eq!(parse(bad), Err(CmdError::Syntax), "{bad}");
        }
        // Amounts are validated only when the command runs (after the key lookup).
        let g = parse("k EX abc").unwrap();
        assert_eq!(g.expiry(), Err(CmdError::NotInteger));
        assert_eq!(
            parse("k EX 0").unwrap().expiry(),
            Err(CmdError::InvalidExpire("getex"))
        );
        assert_eq!(
            parse("k PXAT -1").unwrap().expiry(),
            Err(CmdError::InvalidExpire("getex"))
        );
        assert_eq!(
            parse("k EXAT 9223372036854776").unwrap().expiry(),
            Err(CmdError::InvalidExpire("getex"))
        );
    }
}
