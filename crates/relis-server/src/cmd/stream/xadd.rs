//! XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value
//! [field value ...] — appends an entry, then trims; replies the new entry's id (a null bulk
//! with NOMKSTREAM when there is no stream). <https://redis.io/commands/xadd/>
//!
//! One row appended at the end of the stream's index, whatever its length. `~` trims whole
//! runs of 100 entries from the head (see `relis::Writer::xtrim`).

use super::parse_trim_args;
use crate::args::Args;
use crate::cmd::{Cx, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::{Trim, XAddId};
use resp::Frame;

/// XADD's declaration.
pub const SPEC: Spec = Spec {
    name: "xadd",
    arity: -5,
    flags: Spec::flags(&["write", "denyoom", "fast"]),
    acl: Spec::acl(&["write", "stream", "fast"]),
    keys: (1, 1, 1),
    group: "stream",
    since: "5.0.0",
    summary: "Appends a new entry to a stream",
    complexity: "O(1) when adding a new entry, O(N) when trimming where N being the number of entries evicted.",
    parse: XAdd::parse,
    tips: &["nondeterministic_output"],
    key_flags: Spec::key_flags(&["RW", "update"]),
    key_notes: "UPDATE instead of INSERT because of the optional trimming feature",
    unblocks: true,
    ..Spec::BASE
};

/// XADD.
#[derive(Debug, PartialEq, Eq)]
pub struct XAdd {
    key: Bytes,
    nomkstream: bool,
    trim: Option<Trim>,
    id: XAddId,
    fields: Vec<Bytes>,
}

impl XAdd {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::write(XAdd::from_args(args)?)
    }

    fn from_args(args: &mut Args) -> Result<XAdd, CmdError> {
        let key = args.next()?;
        let opts = parse_trim_args(args, true)?;
        let fields = args.rest();
        let arity = || CmdError::WrongArity("xadd".into());
        let id = opts.id.ok_or_else(arity)?;
        if fields.is_empty() || fields.len() % 2 == 1 {
            return Err(arity());
        }
        let id = super::parse_xadd_id(&id)?;
        // Checked before the stream is looked up, so that no empty stream is left behind.
        if id == XAddId::Explicit(relis::StreamId::MIN) {
            return Err(CmdError::XADD_ID_ZERO);
        }
        Ok(XAdd {
            key,
            nomkstream: opts.nomkstream,
            trim: opts.trim,
            id,
            fields,
        })
    }
}

impl WriteCmd for XAdd {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let added = w.xadd(
            cx.db,
            &self.key,
            self.id,
            &self.fields,
            self.nomkstream,
            self.trim,
        )?;
        let Some(added) = added else {
            return Ok(Frame::Null);
        };
        w.notify(relis::events::class::STREAM, "xadd", cx.db, &self.key);
        if added.trimmed > 0 {
            w.notify(relis::events::class::STREAM, "xtrim", cx.db, &self.key);
        }
        Ok(Frame::Bulk(Bytes::from(added.id.to_string())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_checks_in_redis_order() {
        let p = |line| XAdd::from_args(&mut super::super::args_of("xadd", line));
        let arity = Err(CmdError::WrongArity("xadd".into()));
        assert_eq!(p("s * f").map(|_| ()), arity);
        assert_eq!(
            p("s limit 5 limit 5").map(|_| ()),
            Err(CmdError::err(
                "syntax error, LIMIT cannot be used without specifying a trimming strategy"
            ))
        );
        assert_eq!(
            p("s 0-0 f v").map(|_| ()),
            Err(CmdError::err(
                "The ID specified in XADD must be greater than 0-0"
            ))
        );
        assert_eq!(p("s abc f v").map(|_| ()), Err(super::super::invalid_id()));
        let x = p("s nomkstream minid ~ 5 limit 7 9-* f v g w").unwrap();
        assert!(x.nomkstream);
        assert_eq!(x.id, XAddId::AutoSeq(9));
        assert_eq!(x.fields.len(), 4);
        assert_eq!(x.trim.unwrap().limit, 7);
    }
}
