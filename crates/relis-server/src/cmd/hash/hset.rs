//! HSET key field value [field value ...] — sets fields of the hash at `key` (creating it),
//! replying how many fields are new. HMSET is the same write with an `OK` reply (deprecated
//! since Redis 4.0, still served). <https://redis.io/commands/hset/>,
//! <https://redis.io/commands/hmset/>
//!
//! Redis checks the even argument count inside the command, so a field without a value is
//! `ERR wrong number of arguments for 'hset' command` from the command itself: inside MULTI it
//! is queued and fails at EXEC, as in Redis.

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// HSET's declaration.
pub const SPEC: Spec = Spec {
    name: "hset",
    arity: -4,
    flags: Spec::flags(&["write", "denyoom", "fast"]),
    acl: Spec::acl(&["write", "hash", "fast"]),
    keys: (1, 1, 1),
    group: "hash",
    since: "2.0.0",
    summary: "Set the string value of a hash field",
    complexity: "O(1) for each field/value pair added, so O(N) to add N field/value pairs when the command is called with multiple field/value pairs.",
    parse: HSet::parse_hset,
    key_flags: Spec::key_flags(&["RW", "update"]),
    ..Spec::BASE
};

/// HMSET's declaration.
pub const SPEC_HMSET: Spec = Spec {
    name: "hmset",
    arity: -4,
    flags: Spec::flags(&["write", "denyoom", "fast"]),
    acl: Spec::acl(&["write", "hash", "fast"]),
    keys: (1, 1, 1),
    group: "hash",
    since: "2.0.0",
    summary: "Set multiple hash fields to multiple values",
    complexity: "O(N) where N is the number of fields being set.",
    parse: HSet::parse_hmset,
    key_flags: Spec::key_flags(&["RW", "update"]),
    ..Spec::BASE
};

/// HSET / HMSET key field value [field value ...].
#[derive(Debug, PartialEq, Eq)]
pub struct HSet {
    key: Bytes,
    pairs: Vec<(Bytes, Bytes)>,
    /// HMSET: reply `OK` rather than the count of new fields.
    ok_reply: bool,
}

impl HSet {
    fn from_args(args: &mut Args, ok_reply: bool) -> Result<HSet, CmdError> {
        let key = args.next()?;
        if !args.remaining().is_multiple_of(2) {
            return Err(CmdError::WrongArity(args.name().into()));
        }
        let mut pairs = Vec::with_capacity(args.remaining() / 2);
        while !args.is_empty() {
            pairs.push((args.next()?, args.next()?));
        }
        args.finish()?;
        Ok(HSet {
            key,
            pairs,
            ok_reply,
        })
    }

    fn parse_hset(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::write(HSet::from_args(args, false)?)
    }

    fn parse_hmset(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::write(HSet::from_args(args, true)?)
    }
}

impl WriteCmd for HSet {
    // The type check comes before the first write.
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }

    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let added = w.hset(cx.db, &self.key, &self.pairs)?;
        w.notify(relis::events::class::HASH, "hset", cx.db, &self.key);
        Ok(if self.ok_reply {
            Frame::simple("OK")
        } else {
            Frame::Integer(added)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::hash::args_of;

    fn parse(name: &'static str, line: &str) -> Result<HSet, CmdError> {
        HSet::from_args(&mut args_of(name, line), name == "hmset")
    }

    #[test]
    fn pairs_and_arity() {
        let h = parse("hset", "h a 1 b 2 a 3").unwrap();
        assert_eq!(h.key, "h");
        assert_eq!(
            h.pairs,
            vec![
                (Bytes::from("a"), Bytes::from("1")),
                (Bytes::from("b"), Bytes::from("2")),
                (Bytes::from("a"), Bytes::from("3")),
            ]
        );
        assert!(!h.ok_reply);
        assert!(parse("hmset", "h a 1").unwrap().ok_reply);
        assert_eq!(
            parse("hset", "h a 1 b"),
            Err(CmdError::WrongArity("hset".into()))
        );
        assert_eq!(
            parse("hmset", "h a"),
            Err(CmdError::WrongArity("hmset".into()))
        );
    }
}
