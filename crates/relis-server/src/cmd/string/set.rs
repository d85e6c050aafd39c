//! SET key value [NX | XX] [GET] [EX s | PX ms | EXAT unix-s | PXAT unix-ms | KEEPTTL]
//! <https://redis.io/commands/set/>. SETNX, SETEX, PSETEX and GETSET are thin variants of the
//! same options (STYLE.md: one generic core).

use crate::args::{lower, Args};
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::{Expiry, SetCond, SetOptions};
use resp::Frame;

/// SET's declaration.
pub const SPEC: Spec = Spec {
    name: "set",
    arity: -3,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["write", "string", "slow"]),
    keys: (1, 1, 1),
    group: "string",
    since: "1.0.0",
    summary: "Set the string value of a key",
    complexity: "O(1)",
    parse: Set::parse,
    key_flags: Spec::key_flags(&["RW", "access", "update", "variable_flags"]),
    key_notes: "RW and ACCESS due to the optional `GET` argument",
    ..Spec::BASE
};

/// SETNX's declaration.
pub const SPEC_SETNX: Spec = Spec {
    name: "setnx",
    arity: 3,
    flags: Spec::flags(&["write", "denyoom", "fast"]),
    acl: Spec::acl(&["write", "string", "fast"]),
    keys: (1, 1, 1),
    group: "string",
    since: "1.0.0",
    summary: "Set the value of a key, only if the key does not exist",
    complexity: "O(1)",
    parse: Set::parse_setnx,
    key_flags: Spec::key_flags(&["OW", "insert"]),
    ..Spec::BASE
};

/// SETEX's declaration.
pub const SPEC_SETEX: Spec = Spec {
    name: "setex",
    arity: 4,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["write", "string", "slow"]),
    keys: (1, 1, 1),
    group: "string",
    since: "2.0.0",
    summary: "Set the value and expiration of a key",
    complexity: "O(1)",
    parse: Set::parse_setex,
    key_flags: Spec::key_flags(&["OW", "update"]),
    ..Spec::BASE
};

/// PSETEX's declaration.
pub const SPEC_PSETEX: Spec = Spec {
    name: "psetex",
    arity: 4,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["write", "string", "slow"]),
    keys: (1, 1, 1),
    group: "string",
    since: "2.6.0",
    summary: "Set the value and expiration in milliseconds of a key",
    complexity: "O(1)",
    parse: Set::parse_psetex,
    key_flags: Spec::key_flags(&["OW", "update"]),
    ..Spec::BASE
};

/// GETSET's declaration (deprecated since 6.2 in favour of SET ... GET, which it is).
pub const SPEC_GETSET: Spec = Spec {
    name: "getset",
    arity: 3,
    flags: Spec::flags(&["write", "denyoom", "fast"]),
    acl: Spec::acl(&["write", "string", "fast"]),
    keys: (1, 1, 1),
    group: "string",
    since: "1.0.0",
    summary: "Set the string value of a key and return its old value",
    complexity: "O(1)",
    parse: Set::parse_getset,
    ..Spec::BASE
};

/// How a SET-family command replies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// SET: +OK, nil when NX/XX said no, the old value with GET.
    Set,
    /// SETNX: 1 or 0.
    SetNx,
}

/// A SET-family command.
#[derive(Debug, PartialEq, Eq)]
pub struct Set {
    key: Bytes,
    value: Bytes,
    opts: SetOptions,
    shape: Shape,
    name: &'static str,
}

/// Validates an EX/PX-style amount as Redis's getExpireMillisecondsOrReply does; returns ms.
pub fn expire_ms(amount: &[u8], seconds: bool, cmd: &'static str) -> Result<i64, CmdError> {
    let n = crate::args::parse_i64(amount)?;
    if n <= 0 || (seconds && n > i64::MAX / 1000) {
        return Err(CmdError::InvalidExpire(cmd));
    }
    Ok(if seconds { n * 1000 } else { n })
}

impl Set {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let value = args.next()?;
        let mut opts = SetOptions::default();
        let (mut nx, mut xx, mut keepttl) = (false, false, false);
        let mut expiry: Option<(String, Bytes)> = None;
        while let Some(a) = args.peek().cloned() {
            args.next()?;
            match lower(&a).as_str() {
                "nx" if !xx => nx = true,
                "xx" if !nx => xx = true,
                "get" => opts.get = true,
                "keepttl" if expiry.is_none() => keepttl = true,
                // Redis rejects two different units but lets one repeat (the last amount wins),
                // and validates only the amount that wins.
                unit @ ("ex" | "px" | "exat" | "pxat")
                    if !keepttl
                        && expiry.as_ref().is_none_or(|(u, _)| u == unit)
                        && !args.is_empty() =>
                {
                    expiry = Some((unit.to_string(), args.next()?));
                }
                _ => return Err(CmdError::Syntax),
            }
        }
        opts.cond = match (nx, xx) {
            (true, _) => SetCond::IfAbsent,
            (_, true) => SetCond::IfPresent,
            _ => SetCond::Always,
        };
        opts.expiry = match expiry {
            None if keepttl => Expiry::Keep,
            None => Expiry::Clear,
            Some((unit, amount)) => {
                let ms = expire_ms(&amount, unit == "ex" || unit == "exat", "set")?;
                if unit.ends_with("at") {
                    Expiry::At(ms)
                } else {
                    Expiry::In(ms)
                }
            }
        };
        Parsed::write(Set {
            key,
            value,
            opts,
            shape: Shape::Set,
            name: "set",
        })
    }

    fn parse_setnx(args: &mut Args) -> Result<Parsed, CmdError> {
        let (key, value) = (args.next()?, args.next()?);
        args.finish()?;
        Parsed::write(Set {
            key,
            value,
            opts: SetOptions {
                cond: SetCond::IfAbsent,
                ..SetOptions::default()
            },
            shape: Shape::SetNx,
            name: "setnx",
        })
    }

    fn parse_getset(args: &mut Args) -> Result<Parsed, CmdError> {
        let (key, value) = (args.next()?, args.next()?);
        args.finish()?;
        Parsed::write(Set {
            key,
            value,
            opts: SetOptions {
                get: true,
                ..SetOptions::default()
            },
            shape: Shape::Set,
            name: "getset",
        })
    }

    fn parse_timed(args: &mut Args, seconds: bool, name: &'static str) -> Result<Parsed, CmdError> {
        let key = args.next()?;
        let amount = args.next()?;
        let value = args.next()?;
        args.finish()?;
        let ms = expire_ms(&amount, seconds, name)?;
        Parsed::write(Set {
            key,
            value,
            opts: SetOptions {
                expiry: Expiry::In(ms),
                ..SetOptions::default()
            },
            shape: Shape::Set,
            name,
        })
    }

    fn parse_setex(args: &mut Args) -> Result<Parsed, CmdError> {
        Set::parse_timed(args, true, "setex")
    }

    fn parse_psetex(args: &mut Args) -> Result<Parsed, CmdError> {
        Set::parse_timed(args, false, "psetex")
    }
}

impl WriteCmd for Set {
    // Every error of this command comes before its first write (see WriteCmd::on_error).
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }

    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let out = w.set(cx.db, &self.key, &self.value, self.opts);
        if self.opts.get {
            // GET reads the old value the way GET does, and counts as GET does.
            match &out {
                Ok(o) => cx.hit(&self.key, o.old.is_some()),
                Err(relis::Error::WrongType) => cx.hit(&self.key, true),
                Err(_) => {}
            }
        }
        let out = out.map_err(|e| match e {
            relis::Error::InvalidExpire => CmdError::InvalidExpire(self.name),
            e => e.into(),
        })?;
        if out.written {
            w.notify(relis::events::class::STRING, "set", cx.db, &self.key);
            if matches!(self.opts.expiry, Expiry::At(_) | Expiry::In(_)) {
                w.notify(relis::events::class::GENERIC, "expire", cx.db, &self.key);
            }
        }
        Ok(match self.shape {
            Shape::SetNx => Frame::Integer(out.written as i64),
            Shape::Set if self.opts.get => out.old.map_or(Frame::Null, Frame::Bulk),
            Shape::Set if out.written => Frame::ok(),
            Shape::Set => Frame::Null,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<(), CmdError> {
        let args: Vec<Bytes> = line
            .split_whitespace()
            .map(|s| Bytes::copy_from_slice(s.as_bytes()))
            .collect();
        Set::parse(&mut Args::new("set", args)).map(|_| ())
    }

    #[test]
    fn options() {
        assert!(parse("k v").is_ok());
        assert!(parse("k v NX GET EX 10").is_ok());
        assert!(parse("k v xx keepttl").is_ok());
        assert!(parse("k v pxat 100 get").is_ok());
        assert_eq!(parse("k v NX XX"), Err(CmdError::Syntax));
        assert_eq!(parse("k v EX 10 PX 10"), Err(CmdError::Syntax));
        assert_eq!(parse("k v PXAT 1 EX 10"), Err(CmdError::Syntax));
        // One unit may repeat; only the last amount is validated.
        assert!(parse("k v EX 10 EX 20").is_ok());
        assert!(parse("k v EX abc EX 20").is_ok());
        assert_eq!(parse("k v EX 20 EX abc"), Err(CmdError::NotInteger));
        assert_eq!(parse("k v EX 20 EX"), Err(CmdError::Syntax));
        assert!(parse("k v NX NX GET GET KEEPTTL KEEPTTL").is_ok());
        assert_eq!(parse("k v EX 10 KEEPTTL"), Err(CmdError::Syntax));
        assert_eq!(parse("k v KEEPTTL EX 10"), Err(CmdError::Syntax));
        assert_eq!(parse("k v EX"), Err(CmdError::Syntax));
        assert_eq!(parse("k v EX abc"), Err(CmdError::NotInteger));
        assert_eq!(parse("k v EX 0"), Err(CmdError::InvalidExpire("set")));
        assert_eq!(parse("k v PX -5"), Err(CmdError::InvalidExpire("set")));
        assert_eq!(
            parse("k v EX 9223372036854775"),
            Ok(()),
            "largest EX that fits in ms"
        );
        assert_eq!(
            parse("k v EX 9223372036854776"),
            Err(CmdError::InvalidExpire("set"))
        );
        assert_eq!(parse("k v BOGUS"), Err(CmdError::Syntax));
    }
}
