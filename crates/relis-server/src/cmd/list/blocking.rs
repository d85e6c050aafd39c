//! The blocking list commands: BLPOP / BRPOP key [key ...] timeout, BLMOVE source destination
//! LEFT|RIGHT LEFT|RIGHT timeout, BRPOPLPUSH source destination timeout, and BLMPOP timeout
//! numkeys key [key ...] LEFT|RIGHT [COUNT count]. <https://redis.io/commands/blpop/>,
//! <https://redis.io/commands/brpop/>, <https://redis.io/commands/blmove/>,
//! <https://redis.io/commands/brpoplpush/>, <https://redis.io/commands/blmpop/>
//!
//! Each runs its non-blocking form at once; when that finds nothing, the client waits (holding
//! no thread and no transaction, see `crate::blocking`) until a push to one of its keys serves
//! it — clients blocked on a key are served first come, first served — until the timeout
//! (fractional seconds, 0 = forever; it replies a null array), or until CLIENT UNBLOCK. Inside
//! MULTI they run as their non-blocking forms and reply nil at once when there is nothing.
//!
//! A blocked client is served from the key that became ready, whatever the order of its keys,
//! as Redis 7.0 serves it; a key of another type is WRONGTYPE only at the first attempt. BLMOVE reports its destination as touched, so that
//! clients blocked there are served in turn.

use super::lmove::LMove;
use super::lmpop::LMPop;
use super::parse_end;
use crate::args::parse_timeout;
use crate::args::Args;
use crate::blocking::{serve_keys, Served, TryServe};
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Cx, FindKeys, KeySpec, Parsed, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::End;
use resp::Frame;
use std::time::Duration;

/// BLPOP's declaration.
pub const SPEC_BLPOP: Spec = Spec {
    name: "blpop",
    arity: -3,
    flags: Spec::flags(&["write", "noscript", "blocking"]),
    acl: Spec::acl(&["write", "list", "slow", "blocking"]),
    keys: (1, -2, 1),
    group: "list",
    since: "2.0.0",
    summary: "Remove and get the first element in a list, or block until one is available",
    complexity: "O(N) where N is the number of provided keys.",
    parse: |a| BPop::parse(a, End::Left),
    key_flags: Spec::key_flags(&["RW", "access", "delete"]),
    ..Spec::BASE
};

/// BRPOP's declaration.
pub const SPEC_BRPOP: Spec = Spec {
    name: "brpop",
    summary: "Remove and get the last element in a list, or block until one is available",
    parse: |a| BPop::parse(a, End::Right),
    ..SPEC_BLPOP
};

/// BLMOVE's declaration. `unblocks`: inside MULTI it runs as LMOVE, which may feed clients
/// blocked on the destination (outside MULTI its serves report the destination themselves).
pub const SPEC_BLMOVE: Spec = Spec {
    name: "blmove",
    arity: 6,
    flags: Spec::flags(&["write", "denyoom", "noscript", "blocking"]),
    acl: Spec::acl(&["write", "list", "slow", "blocking"]),
    keys: (1, 2, 1),
    group: "list",
    since: "6.2.0",
    summary: "Pop an element from a list, push it to another list and return it; or block until one is available",
    complexity: "O(1)",
    parse: BMove::parse,
    key_flags: Spec::key_flags(&["RW", "access", "delete"]),
    key_specs: super::MOVE_KEY_SPECS,
    unblocks: true,
    ..Spec::BASE
};

/// BRPOPLPUSH's declaration (deprecated in favour of BLMOVE RIGHT LEFT).
pub const SPEC_BRPOPLPUSH: Spec = Spec {
    name: "brpoplpush",
    arity: 4,
    since: "2.2.0",
    summary: "Pop an element from a list, push it to another list and return it; or block until one is available",
    parse: BMove::parse_brpoplpush,
    ..SPEC_BLMOVE
};

/// BLMPOP's declaration (keys found through numkeys, so no legacy key range).
pub const SPEC_BLMPOP: Spec = Spec {
    name: "blmpop",
    arity: -5,
    flags: Spec::flags(&["write", "blocking", "movablekeys"]),
    acl: Spec::acl(&["write", "list", "slow", "blocking"]),
    keys: (0, 0, 0),
    group: "list",
    since: "7.0.0",
    summary: "Pop elements from a list, or block until one is available",
    complexity:
        "O(N+M) where N is the number of provided keys and M is the number of elements returned.",
    parse: BMPop::parse,
    key_flags: Spec::key_flags(&["RW", "access", "delete"]),
    find_keys: Some(|argv| super::numkeys_keys(argv, 2)),
    key_specs: &[KeySpec {
        flags: Spec::key_flags(&["RW", "access", "delete"]),
        index: 2,
        notes: "",
        find: FindKeys::Keynum(0, 1, 1),
    }],
    ..Spec::BASE
};

/// BLPOP / BRPOP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BPop {
    keys: Vec<Bytes>,
    end: End,
    timeout: Option<Duration>,
}

impl BPop {
    fn parse(args: &mut Args, end: End) -> Result<Parsed, CmdError> {
        let mut keys = args.rest();
        // Arity guarantees a key and the timeout; the timeout is checked first, as in Redis.
        let timeout = parse_timeout(&keys.pop().ok_or(CmdError::Syntax)?)?;
        args.finish()?;
        Parsed::conn(BPop { keys, end, timeout })
    }

    fn reply(popped: Option<(Bytes, Vec<Bytes>)>) -> Option<Frame> {
        let (key, mut items) = popped?;
        let value = items.pop()?;
        Some(Frame::Array(vec![Frame::Bulk(key), Frame::Bulk(value)]))
    }
}

impl ConnCmd for BPop {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let BPop { keys, end, timeout } = *self;
            let watched = keys.clone();
            let serve: TryServe = Box::new(move |w, cx: &Cx, ready| {
                let (keys, skip) = serve_keys(&keys, ready);
                let popped = w.lmpop_with(cx.db, keys, end, 1, skip)?;
                if let Some((key, _)) = &popped {
                    super::notify_pop(w, cx.db, key, end)?;
                }
                Ok(BPop::reply(popped).map(|reply| Served {
                    reply,
                    touched: Vec::new(),
                }))
            });
            c.block_on(watched, timeout, serve, Frame::NullArray).await
        })
    }

    fn in_transaction(&mut self) -> Option<Box<dyn WriteCmd>> {
        Some(Box::new(BPopNow(self.clone())))
    }
}

/// BLPOP / BRPOP inside MULTI: pops at once, or replies a null array.
struct BPopNow(BPop);

impl WriteCmd for BPopNow {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        let popped = w.lmpop(cx.db, &self.0.keys, self.0.end, 1)?;
        if let Some((key, _)) = &popped {
            super::notify_pop(w, cx.db, key, self.0.end)?;
        }
        Ok(BPop::reply(popped).unwrap_or(Frame::NullArray))
    }
}

/// BLMOVE / BRPOPLPUSH.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BMove {
    mv: LMove,
    timeout: Option<Duration>,
}

impl BMove {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let src = args.next()?;
        let dst = args.next()?;
        let from = parse_end(&args.next()?)?;
        let to = parse_end(&args.next()?)?;
        let timeout = parse_timeout(&args.next()?)?;
        args.finish()?;
        Parsed::conn(BMove {
            mv: LMove { src, dst, from, to },
            timeout,
        })
    }

    fn parse_brpoplpush(args: &mut Args) -> Result<Parsed, CmdError> {
        let src = args.next()?;
        let dst = args.next()?;
        let timeout = parse_timeout(&args.next()?)?;
        args.finish()?;
        Parsed::conn(BMove {
            mv: LMove {
                src,
                dst,
                from: End::Right,
                to: End::Left,
            },
            timeout,
        })
    }
}

impl ConnCmd for BMove {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let BMove { mv, timeout } = *self;
            let watched = vec![mv.src.clone()];
            let serve: TryServe = Box::new(move |w, cx: &Cx, _| {
                // A destination of another type fails the command, blocked or not (Redis 7.0
                // answers the blocked client WRONGTYPE and leaves the source alone).
                let moved = w.lmove(cx.db, &mv.src, &mv.dst, mv.from, mv.to)?;
                if moved.is_some() {
                    super::notify_move(w, cx.db, (&mv.src, mv.from), (&mv.dst, mv.to))?;
                }
                Ok(moved.map(|v| Served {
                    reply: Frame::Bulk(v),
                    touched: vec![mv.dst.clone()],
                }))
            });
            c.block_on(watched, timeout, serve, Frame::NullArray).await
        })
    }

    fn in_transaction(&mut self) -> Option<Box<dyn WriteCmd>> {
        // LMOVE replies a null bulk when there is nothing, as BLMOVE does inside MULTI.
        Some(Box::new(self.mv.clone()))
    }
}

/// BLMPOP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BMPop {
    pop: LMPop,
    timeout: Option<Duration>,
}

impl BMPop {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        let timeout_arg = args.next()?;
        let pop = LMPop::from_args(args)?;
        // Redis reads the timeout after the other arguments.
        let timeout = parse_timeout(&timeout_arg)?;
        Parsed::conn(BMPop { pop, timeout })
    }
}

impl ConnCmd for BMPop {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let BMPop { pop, timeout } = *self;
            let watched = pop.keys.clone();
            let serve: TryServe = Box::new(move |w, cx: &Cx, ready| {
                let (keys, skip) = serve_keys(&pop.keys, ready);
                let popped = w.lmpop_with(cx.db, keys, pop.end, pop.count, skip)?;
                if let Some((key, _)) = &popped {
                    super::notify_pop(w, cx.db, key, pop.end)?;
                }
                Ok(popped.map(|p| Served {
                    reply: LMPop::reply(Some(p)),
                    touched: Vec::new(),
                }))
            });
            c.block_on(watched, timeout, serve, Frame::NullArray).await
        })
    }

    fn in_transaction(&mut self) -> Option<Box<dyn WriteCmd>> {
        Some(Box::new(self.pop.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_err;
    use super::*;

    #[test]
    fn timeouts_and_argument_order() {
        let bl = |l| parse_err(|a| BPop::parse(a, End::Left), "blpop", l);
        assert_eq!(bl("k 0"), None);
        assert_eq!(bl("a b 0.5"), None);
        assert_eq!(bl("k 0x10"), None, "strtold reads hex");
        assert_eq!(bl("k -1").as_deref(), Some("ERR timeout is negative"));
        assert_eq!(bl("k inf").as_deref(), Some("ERR timeout is negative"));
        assert_eq!(
            bl("k abc").as_deref(),
            Some("ERR timeout is not a float or out of range")
        );
        assert_eq!(
            bl("k nan").as_deref(),
            Some("ERR timeout is not a float or out of range")
        );
        let bm = |l| parse_err(BMove::parse, "blmove", l);
        assert_eq!(bm("a b left right 0"), None);
        assert_eq!(
            bm("a b bogus right -1").as_deref(),
            Some("ERR syntax error")
        );
        assert_eq!(
            bm("a b left right -1").as_deref(),
            Some("ERR timeout is negative")
        );
        let bp = |l| parse_err(BMove::parse_brpoplpush, "brpoplpush", l);
        assert_eq!(
            bp("a b x").as_deref(),
            Some("ERR timeout is not a float or out of range")
        );
        let bmp = |l| parse_err(BMPop::parse, "blmpop", l);
        assert_eq!(bmp("0 1 k left count 2"), None);
        assert_eq!(
            bmp("-1 0 k left").as_deref(),
            Some("ERR numkeys should be greater than 0")
        );
        assert_eq!(bmp("-1 1 k bogus").as_deref(), Some("ERR syntax error"));
        assert_eq!(
            bmp("-1 1 k left count 0").as_deref(),
            Some("ERR count should be greater than 0")
        );
        assert_eq!(
            bmp("-1 1 k left").as_deref(),
            Some("ERR timeout is negative")
        );
        assert_eq!(
            bmp("x 1 k left").as_deref(),
            Some("ERR timeout is not a float or out of range")
        );
    }
}
