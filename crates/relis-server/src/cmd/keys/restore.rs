//! RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency] —
//! create a key from a DUMP payload (Redis 7.0's format, from Relis or redis-server).
//! <https://redis.io/commands/restore/> RESTORE-ASKING (cluster migration's variant) is the
//! same command.
//!
//! As Redis's `restoreCommand`: the options are read first, then an existing key without
//! REPLACE is BUSYKEY, then the TTL is checked, then the payload (footer, then content). A TTL
//! of 0 means no expiry; with ABSTTL it is a unix time in ms; an expiry already past writes
//! nothing (REPLACE still deletes the old key, with a `del` event) and replies OK. The value is
//! written whole in one transaction, replacing the old one there; event `restore`. FREQ is
//! checked and otherwise ignored (Relis keeps no LFU counter).
//!
//! The payload is decoded while the command is parsed, off the writer; its errors are reported
//! in Redis's order when it runs. Decoding checks the payload as Redis's
//! `sanitize-dump-payload yes` does (see the `rdb` crate): a bad one writes nothing.

use crate::args::Args;
use crate::cmd::keys::dump::to_value;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use rdb::payload::PayloadError;
use relis::{RestoreOptions, Restored, Value};
use resp::Frame;

const COMPLEXITY: &str = "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N)).";

/// RESTORE's declaration.
pub const SPEC: Spec = Spec {
    name: "restore",
    arity: -4,
    flags: Spec::flags(&["write", "denyoom"]),
    acl: Spec::acl(&["keyspace", "write", "slow", "dangerous"]),
    keys: (1, 1, 1),
    group: "generic",
    since: "2.6.0",
    summary: "Create a key using the provided serialized value, previously obtained using DUMP.",
    complexity: COMPLEXITY,
    key_flags: Spec::key_flags(&["OW", "update"]),
    parse: Restore::parse,
    // A list or sorted set restored serves the clients blocked on its key.
    unblocks: true,
    ..Spec::BASE
};

/// RESTORE-ASKING's declaration.
pub const SPEC_ASKING: Spec = Spec {
    name: "restore-asking",
    flags: Spec::flags(&["write", "denyoom", "asking"]),
    group: "server",
    since: "3.0.0",
    summary: "An internal command for migrating keys in a cluster",
    ..SPEC
};

/// RESTORE key ttl payload [options].
#[derive(Debug)]
pub struct Restore {
    key: Bytes,
    ttl: Bytes,
    value: Result<Value, PayloadError>,
    replace: bool,
    absttl: bool,
    idle: Option<i64>,
}

impl Restore {
    fn from_args(args: &mut Args) -> Result<Restore, CmdError> {
        let (key, ttl, payload) = (args.next()?, args.next()?, args.next()?);
        let (mut replace, mut absttl, mut idle, mut freq) = (false, false, None, None);
        while !args.is_empty() {
            let more = args.remaining() > 1;
            // IDLETIME and FREQ exclude each other: the second is a syntax error, as in Redis.
            if args.eat("replace") {
                replace = true;
            } else if args.eat("absttl") {
                absttl = true;
            } else if more && freq.is_none() && args.eat("idletime") {
                let n = crate::args::parse_i64(&args.next()?)?;
                if n < 0 {
                    return Err(CmdError::RESTORE_IDLETIME);
                }
                idle = Some(n);
            } else if more && idle.is_none() && args.eat("freq") {
                let n = crate::args::parse_i64(&args.next()?)?;
                if !(0..=255).contains(&n) {
                    return Err(CmdError::RESTORE_FREQ);
                }
                freq = Some(n);
            } else {
                return Err(CmdError::Syntax);
            }
        }
        args.finish()?;
        let value = rdb::payload::restore(&payload).map(to_value);
        Ok(Restore {
            key,
            ttl,
            value,
            replace,
            absttl,
            idle,
        })
    }

    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::write(Restore::from_args(args)?)
    }
}

impl WriteCmd for Restore {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        if !self.replace && w.meta(cx.db, &self.key)?.is_some() {
            return Err(CmdError::BUSYKEY);
        }
        let ttl = crate::args::parse_i64(&self.ttl)?;
        if ttl < 0 {
            return Err(CmdError::RESTORE_TTL);
        }
        let value = match &self.value {
            Ok(v) => v,
            Err(PayloadError::VersionOrChecksum) => return Err(CmdError::BAD_PAYLOAD),
            Err(PayloadError::BadData(_)) => return Err(CmdError::BAD_DATA),
        };
        let expire_at = match ttl {
            0 => None,
            t if self.absttl => Some(t),
            t => Some(w.now_ms().saturating_add(t)),
        };
        let opts = RestoreOptions {
            replace: self.replace,
            expire_at,
            idle_secs: self.idle,
        };
        match w.restore_value(cx.db, &self.key, value, opts)? {
            Restored::Busy => return Err(CmdError::BUSYKEY),
            Restored::Expired(true) => {
                w.notify(relis::events::class::GENERIC, "del", cx.db, &self.key)
            }
            Restored::Expired(false) => {}
            Restored::Written => {
                w.notify(relis::events::class::GENERIC, "restore", cx.db, &self.key)
            }
        }
        Ok(Frame::Simple(Bytes::from_static(b"OK")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &[&[u8]]) -> Result<Restore, CmdError> {
        let mut args = Args::new(
            "restore",
            line.iter().map(|a| Bytes::copy_from_slice(a)).collect(),
        );
        Restore::from_args(&mut args)
    }

    #[test]
    fn options() {
        let p = rdb::payload::dump(
            &rdb::Object::String(Bytes::from_static(b"v")),
            rdb::ObjectKind::General,
        );
        let r = parse(&[b"k", b"0", &p, b"replace", b"ABSTTL", b"idletime", b"5"]).unwrap();
        assert!(r.replace && r.absttl);
        assert_eq!(r.idle, Some(5));
        assert_eq!(r.value, Ok(Value::String(Bytes::from_static(b"v"))));
        assert!(parse(&[b"k", b"0", &p, b"freq", b"255"]).is_ok());
        let err = |l: &[&[u8]]| parse(l).err().map(|e| e.message());
        assert_eq!(
            err(&[b"k", b"0", &p, b"idletime"]).unwrap(),
            "ERR syntax error"
        );
        assert_eq!(
            err(&[b"k", b"0", &p, b"idletime", b"-1"]).unwrap(),
            "ERR Invalid IDLETIME value, must be >= 0"
        );
        assert_eq!(
            err(&[b"k", b"0", &p, b"freq", b"256"]).unwrap(),
            "ERR Invalid FREQ value, must be >= 0 and <= 255"
        );
        assert_eq!(
            err(&[b"k", b"0", &p, b"idletime", b"1", b"freq", b"1"]).unwrap(),
            "ERR syntax error"
        );
        assert_eq!(
            err(&[b"k", b"0", &p, b"freq", b"x"]).unwrap(),
            "ERR value is not an integer or out of range"
        );
        let bad = parse(&[b"k", b"0", b"garbage"]).unwrap();
        assert_eq!(bad.value, Err(PayloadError::VersionOrChecksum));
    }
}
