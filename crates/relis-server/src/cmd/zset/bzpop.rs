//! BZPOPMIN / BZPOPMAX key [key ...] timeout — pop the lowest / highest scored member of the
//! first non-empty sorted set, or block until one is available; BZMPOP timeout numkeys key
//! [key ...] MIN|MAX [COUNT count] — ZMPOP that blocks. <https://redis.io/commands/bzpopmin/>,
//! <https://redis.io/commands/bzpopmax/>, <https://redis.io/commands/bzmpop/>
//!
//! Each runs its non-blocking form at once; when every key is missing the client waits
//! (holding no thread and no transaction, see `crate::blocking`) until a ZADD, ZINCRBY or STORE
//! to one of its keys serves it — clients blocked on a key are served first come, first served
//! — until the timeout (fractional seconds, 0 = forever; it replies a null array), or until
//! CLIENT UNBLOCK. Inside MULTI they run as their non-blocking forms and reply a null array at
//! once when there is nothing.
//!
//! BZPOPMIN/BZPOPMAX reply `[key, member, score]`, BZMPOP `[key, [[member, score], ...]]`. The
//! timeout is read first. On the first attempt a key of another type is WRONGTYPE (as in Redis,
//! when met before a non-empty set); a blocked client is served from the key that became ready,
//! whatever the order of its keys, as Redis serves it.

use super::zpop::ZMPop;
use crate::args::parse_timeout;
use crate::args::Args;
use crate::blocking::{serve_keys, Served, TryServe};
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Cx, FindKeys, KeySpec, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::Scored;
use resp::Frame;
use std::time::Duration;

/// BZPOPMIN's declaration.
pub const SPEC_BZPOPMIN: Spec = Spec {
    name: "bzpopmin",
    arity: -3,
    flags: Spec::flags(&["write", "noscript", "blocking", "fast"]),
    acl: Spec::acl(&["write", "sortedset", "fast", "blocking"]),
    keys: (1, -2, 1),
    group: "sorted-set",
    since: "5.0.0",
    summary: "Remove and return the member with the lowest score from one or more sorted sets, or block until one is available",
    complexity: "O(log(N)) with N being the number of elements in the sorted set.",
    parse: |a| BZPop::parse(a, false),
    key_flags: Spec::key_flags(&["RW", "access", "delete"]),
    ..Spec::BASE
};

/// BZPOPMAX's declaration.
pub const SPEC_BZPOPMAX: Spec = Spec {
    name: "bzpopmax",
    summary: "Remove and return the member with the highest score from one or more sorted sets, or block until one is available",
    parse: |a| BZPop::parse(a, true),
    ..SPEC_BZPOPMIN
};

/// BZMPOP's declaration (keys found through numkeys, so no legacy key range).
pub const SPEC_BZMPOP: Spec = Spec {
    name: "bzmpop",
    arity: -5,
    flags: Spec::flags(&["write", "blocking", "movablekeys"]),
    acl: Spec::acl(&["write", "sortedset", "slow", "blocking"]),
    keys: (0, 0, 0),
    group: "sorted-set",
    since: "7.0.0",
    summary: "Remove and return members with scores in a sorted set or block until one is available",
    complexity: "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.",
    parse: BZMPop::parse,
    key_flags: Spec::key_flags(&["RW", "access", "delete"]),
    find_keys: Some(super::bzmpop_keys),
    key_specs: &[KeySpec {
        flags: Spec::key_flags(&["RW", "access", "delete"]),
        index: 2,
        notes: "",
        find: FindKeys::Keynum(0, 1, 1),
    }],
    ..Spec::BASE
};

/// BZPOPMIN / BZPOPMAX.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BZPop {
    keys: Vec<Bytes>,
    max: bool,
    timeout: Option<Duration>,
}

impl BZPop {
    fn from_args(args: &mut Args, max: bool) -> Result<BZPop, CmdError> {
        let mut keys = args.rest();
        // Arity guarantees a key and the timeout; the timeout is checked first.
        let timeout = parse_timeout(&keys.pop().ok_or(CmdError::Syntax)?)?;
        args.finish()?;
        Ok(BZPop { keys, max, timeout })
    }

    fn parse(args: &mut Args, max: bool) -> Result<Parsed, CmdError> {
        Parsed::conn(BZPop::from_args(args, max)?)
    }

    fn reply(popped: Option<(Bytes, Vec<Scored>)>) -> Option<Frame> {
        let (key, mut items) = popped?;
        let (member, score) = items.pop()?;
        Some(Frame::Array(vec![
            Frame::Bulk(key),
            Frame::Bulk(member),
            Frame::Double(score),
        ]))
    }
}

impl ConnCmd for BZPop {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let BZPop { keys, max, timeout } = *self;
            let watched = keys.clone();
            let serve: TryServe = Box::new(move |w, cx: &Cx, ready| {
                let (keys, skip) = serve_keys(&keys, ready);
                let popped = w.zmpop(cx.db, keys, max, 1, skip)?;
                if let Some((key, _)) = &popped {
                    super::notify_pop(w, cx.db, key, max)?;
                }
                Ok(BZPop::reply(popped).map(|reply| Served {
                    reply,
                    touched: Vec::new(),
                }))
            });
            c.block_on(watched, timeout, serve, Frame::NullArray).await
        })
    }

    fn in_transaction(&mut self) -> Option<Box<dyn WriteCmd>> {
        Some(Box::new(BZPopNow(self.clone())))
    }
}

/// BZPOPMIN / BZPOPMAX inside MULTI: pops at once, or replies a null array.
struct BZPopNow(BZPop);

impl WriteCmd for BZPopNow {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let popped = w.zmpop(cx.db, &self.0.keys, self.0.max, 1, false)?;
        if let Some((key, _)) = &popped {
            super::notify_pop(w, cx.db, key, self.0.max)?;
        }
        Ok(BZPop::reply(popped).unwrap_or(Frame::NullArray))
    }

    fn on_error(&self) -> relis::OnError {
        relis::OnError::NothingToUndo
    }
}

/// BZMPOP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BZMPop {
    pop: ZMPop,
    timeout: Option<Duration>,
}

impl BZMPop {
    fn from_args(args: &mut Args) -> Result<BZMPop, CmdError> {
        let timeout = parse_timeout(&args.next()?)?;
        let pop = ZMPop::from_args(args)?;
        Ok(BZMPop { pop, timeout })
    }

    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::conn(BZMPop::from_args(args)?)
    }
}

impl ConnCmd for BZMPop {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let BZMPop { pop, timeout } = *self;
            let watched = pop.keys.clone();
            let serve: TryServe = Box::new(move |w, cx: &Cx, ready| {
                let (keys, skip) = serve_keys(&pop.keys, ready);
                let popped = w.zmpop(cx.db, keys, pop.max, pop.count, skip)?;
                if let Some((key, _)) = &popped {
                    super::notify_pop(w, cx.db, key, pop.max)?;
                }
                Ok(popped.map(|p| Served {
                    reply: ZMPop::reply(Some(p)),
                    touched: Vec::new(),
                }))
            });
            c.block_on(watched, timeout, serve, Frame::NullArray).await
        })
    }

    fn in_transaction(&mut self) -> Option<Box<dyn WriteCmd>> {
        // ZMPOP replies a null array when every key is missing, as BZMPOP does inside MULTI.
        Some(Box::new(self.pop.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_come_first() {
        let bz = |line| BZPop::from_args(&mut super::super::args_of("bzpopmin", line), false);
        assert_eq!(bz("a b 0").unwrap().timeout, None);
        assert_eq!(
            bz("a b 1.5").unwrap().timeout,
            Some(Duration::from_millis(1500))
        );
        assert_eq!(bz("a b 0").unwrap().keys.len(), 2);
        let not_float = CmdError::err("timeout is not a float or out of range");
        assert_eq!(bz("a x"), Err(not_float.clone()));
        assert_eq!(bz("a -1"), Err(CmdError::err("timeout is negative")));
        let bzm = |line| BZMPop::from_args(&mut super::super::args_of("bzmpop", line));
        assert_eq!(bzm("x 0 a min"), Err(not_float));
        assert_eq!(
            bzm("0 0 a min"),
            Err(CmdError::err("numkeys should be greater than 0"))
        );
        assert_eq!(bzm("0.5 1 a max count 2").unwrap().pop.count, 2);
    }
}
