//! HINCRBY key field increment — adds an integer to the number in `field` of the hash at `key`
//! (a missing field or key counts as 0) and replies with the result.
//! <https://redis.io/commands/hincrby/>
//!
//! Redis reads the increment before it looks the key up, so a bad increment is reported even
//! for a key of another type; a field that holds no integer is `ERR hash value is not an
//! integer`.

use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::Frame;

/// HINCRBY's declaration.
pub const SPEC: Spec = Spec {
    name: "hincrby",
    arity: 4,
    flags: Spec::flags(&["write", "denyoom", "fast"]),
    acl: Spec::acl(&["write", "hash", "fast"]),
    keys: (1, 1, 1),
    group: "hash",
    since: "2.0.0",
    summary: "Increment the integer value of a hash field by the given number",
    complexity: "O(1)",
    parse: HIncrBy::parse,
    key_flags: Spec::key_flags(&["RW", "access", "update"]),
    ..Spec::BASE
};

/// HINCRBY key field increment.
#[derive(Debug, PartialEq, Eq)]
pub struct HIncrBy {
    key: Bytes,
    field: Bytes,
    delta: i64,
}

impl HIncrBy {
    fn from_args(args: &mut Args) -> Result<HIncrBy, CmdError> {
        let (key, field, delta) = (args.next()?, args.next()?, args.next_i64()?);
        args.finish()?;
        Ok(HIncrBy { key, field, delta })
    }

    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::write(HIncrBy::from_args(args)?)
    }
}

impl WriteCmd for HIncrBy {
    // Every error comes before the first write.
    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }

    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        match w.hincrby(cx.db, &self.key, &self.field, self.delta) {
            Ok(n) => {
                w.notify(relis::events::class::HASH, "hincrby", cx.db, &self.key);
                Ok(Frame::Integer(n))
            }
            // The increment was parsed already: this is the stored value.
            Err(relis::Error::NotInteger) => Err(CmdError::HASH_NOT_INTEGER),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::hash::args_of;

    #[test]
    fn the_increment_is_an_integer() {
        let p = |line| HIncrBy::from_args(&mut args_of("hincrby", line));
        assert_eq!(p("h f -5").unwrap().delta, -5);
        assert_eq!(p("h f -9223372036854775808").unwrap().delta, i64::MIN);
        for bad in [
            "h f 1.5",
            "h f x",
            "h f 9223372036854775808",
            "h f +1",
            "h f 01",
        ] {
            assert_eq!(p(bad), Err(CmdError::NotInteger), "{bad}");
        }
    }
}
