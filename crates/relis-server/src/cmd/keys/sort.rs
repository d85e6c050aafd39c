//! SORT key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC|DESC]
//! [ALPHA] [STORE destination], and SORT_RO (the same without STORE) — sort the elements of a
//! list, set or sorted set. <https://redis.io/commands/sort/>,
//! <https://redis.io/commands/sort_ro/>
//!
//! The options are read in Redis's order (`sortCommandGeneric`): any order, repeated options
//! allowed (the last LIMIT/STORE/BY wins, GETs accumulate), a LIMIT whose numbers are not
//! integers is `ERR value is not an integer or out of range`, anything else (SORT_RO's STORE
//! included) a syntax error — all before the key is looked up. The sorting itself, with Redis's
//! quirks, is the engine's (`relis::SortOptions`).
//!
//! SORT is flagged `write` (STORE writes), but without STORE it only reads, so it runs on a
//! reader like SORT_RO. With STORE it runs on the writer and replaces the destination with a
//! list, so clients blocked on the destination are served: the destination's position comes
//! from [`sort_keys`] (Redis's `sortGetKeys`), which COMMAND GETKEYS also uses.

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Cx, FindKeys, KeySpec, Parsed, ReadCmd, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use relis::{SortOptions, Sorted};
use resp::Frame;

const COMPLEXITY: &str = "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number of returned elements. When the elements are not sorted, complexity is O(N).";

/// SORT's declaration. Redis has three key specs: the sorted key (`RO access`), the BY/GET
/// keys and the STORE destination (both of unknown position); COMMAND INFO shows the first.
pub const SPEC_SORT: Spec = Spec {
    name: "sort",
    key_specs: &[
        KeySpec {
            flags: Spec::key_flags(&["RO", "access"]),
            index: 1,
            notes: "",
            find: FindKeys::Range(0, 1, 0),
        },
        KeySpec {
            flags: Spec::key_flags(&["RO", "access"]),
            index: 0,
            notes: "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort",
            find: FindKeys::Unknown(""),
        },
        KeySpec {
            flags: Spec::key_flags(&["OW", "update"]),
            index: 0,
            notes: "For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array",
            find: FindKeys::Unknown("store"),
        },
    ],
    arity: -2,
    flags: Spec::flags(&["write", "denyoom", "movablekeys"]),
    acl: Spec::acl(&["write", "set", "sortedset", "list", "slow", "dangerous"]),
    keys: (1, 1, 1),
    group: "generic",
    since: "1.0.0",
    summary: "Sort the elements in a list, set or sorted set",
    complexity: COMPLEXITY,
    parse: |a| Sort::parse(a, false),
    key_flags: Spec::key_flags(&["RO", "access"]),
    // STORE makes a list at the destination, which serves the clients blocked on it.
    unblocks: true,
    find_keys: Some(sort_keys),
    ..Spec::BASE
};

/// SORT_RO's declaration.
pub const SPEC_SORT_RO: Spec = Spec {
    name: "sort_ro",
    key_specs: &[
        KeySpec {
            flags: Spec::key_flags(&["RO", "access"]),
            index: 1,
            notes: "",
            find: FindKeys::Range(0, 1, 0),
        },
        KeySpec {
            flags: Spec::key_flags(&["RO", "access"]),
            index: 0,
            notes: "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort",
            find: FindKeys::Unknown(""),
        },
    ],
    arity: -2,
    flags: Spec::flags(&["readonly", "movablekeys"]),
    acl: Spec::acl(&["read", "set", "sortedset", "list", "slow", "dangerous"]),
    keys: (1, 1, 1),
    group: "generic",
    since: "7.0.0",
    summary: "Sort the elements in a list, set or sorted set. Read-only variant of SORT.",
    complexity: COMPLEXITY,
    parse: |a| Sort::parse(a, true),
    ..Spec::BASE
};

/// The key positions of a SORT command line (`argv` includes the name), as Redis's
/// `sortGetKeys`: the sorted key, and the argument after the last `STORE` (LIMIT's two numbers
/// and BY's and GET's patterns are skipped, so a pattern spelled `store` is not taken for it).
pub fn sort_keys(argv: &[Bytes]) -> Vec<usize> {
    let mut keys = vec![1];
    let mut store = None;
    let mut i = 2;
    while i < argv.len() {
        let a = &argv[i];
        if a.eq_ignore_ascii_case(b"limit") {
            i += 2;
        } else if a.eq_ignore_ascii_case(b"get") || a.eq_ignore_ascii_case(b"by") {
            i += 1;
        } else if a.eq_ignore_ascii_case(b"store") && i + 1 < argv.len() {
            store = Some(i + 1);
        }
        i += 1;
    }
    keys.extend(store);
    keys
}

/// SORT / SORT_RO, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sort {
    /// `sort` or `sort_ro`: the command whose ACL rules apply.
    cmd: &'static str,
    key: Bytes,
    opts: SortOptions,
    store: Option<Bytes>,
    /// The first option that reads keys named by a pattern (`BY` with a star, or `GET`): it
    /// needs read access to every key, which only `exec` can check against the user.
    pattern: Option<&'static str>,
    /// An error in an option after that one: Redis checks the pattern's access as it reaches
    /// it, so a user without access gets the ACL error and any other user this one.
    later_error: Option<CmdError>,
}

impl Sort {
    fn from_args(args: &mut Args, readonly: bool) -> Result<Sort, CmdError> {
        let key = args.next()?;
        let mut sort = Sort {
            cmd: if readonly { "sort_ro" } else { "sort" },
            key,
            opts: SortOptions::default(),
            store: None,
            pattern: None,
            later_error: None,
        };
        if let Err(e) = sort.options(args, readonly) {
            if sort.pattern.is_none() {
                return Err(e);
            }
            args.rest();
            sort.later_error = Some(e);
        }
        Ok(sort)
    }

    /// Reads the options after the key, in Redis's order.
    fn options(&mut self, args: &mut Args, readonly: bool) -> Result<(), CmdError> {
        let opts = &mut self.opts;
        while let Some(word) = args.peek().cloned() {
            args.next()?;
            // Each option needs its arguments to be there, or it is not that option at all.
            let left = args.remaining();
            if word.eq_ignore_ascii_case(b"asc") {
                opts.desc = false;
            } else if word.eq_ignore_ascii_case(b"desc") {
                opts.desc = true;
            } else if word.eq_ignore_ascii_case(b"alpha") {
                opts.alpha = true;
            } else if word.eq_ignore_ascii_case(b"limit") && left >= 2 {
                let offset = args.next_i64()?;
                let count = args.next_i64()?;
                opts.limit = Some((offset, count));
            } else if !readonly && word.eq_ignore_ascii_case(b"store") && left >= 1 {
                self.store = Some(args.next()?);
            } else if word.eq_ignore_ascii_case(b"by") && left >= 1 {
                let by = args.next()?;
                // A BY without a star (as C's strchr sees it) turns sorting off and reads no key.
                if by
                    .split(|&c| c == 0)
                    .next()
                    .is_some_and(|b| b.contains(&b'*'))
                {
                    self.pattern.get_or_insert("BY");
                }
                opts.by(by);
            } else if word.eq_ignore_ascii_case(b"get") && left >= 1 {
                // Even `GET #`, as in Redis.
                self.pattern.get_or_insert("GET");
                opts.get.push(args.next()?);
            } else {
                // Redis stops at the first bad option.
                args.rest();
                return Err(CmdError::Syntax);
            }
        }
        args.finish()
    }

    /// Refuses a pattern option to a user who may not read every key, with Redis's text, then
    /// an error in a later option.
    fn check(&self, cx: &Cx) -> Result<(), CmdError> {
        if let Some(option) = self.pattern {
            if !cx.key_access(self.cmd).reads_all() {
                return Err(CmdError::sort_denied(option));
            }
        }
        match &self.later_error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    fn parse(args: &mut Args, readonly: bool) -> Result<Parsed, CmdError> {
        let sort = Sort::from_args(args, readonly)?;
        if sort.store.is_some() && sort.later_error.is_none() {
            Parsed::write(sort)
        } else {
            Parsed::read(sort)
        }
    }
}

/// The reply for a SORT's outcome.
fn reply(sorted: Sorted, store: bool) -> Result<Frame, CmdError> {
    match sorted {
        Sorted::NotANumber => Err(CmdError::SORT_NOT_DOUBLE),
        Sorted::Values(v) if store => Ok(Frame::Integer(v.len() as i64)),
        Sorted::Values(v) => Ok(Frame::Array(
            v.into_iter()
                .map(|x| x.map_or(Frame::Null, Frame::Bulk))
                .collect(),
        )),
    }
}

impl ReadCmd for Sort {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        self.check(cx)?;
        let sorted = r.sort(cx.db, &self.key, &self.opts, &mut |k, found| {
            cx.hit(k, found)
        })?;
        reply(sorted, false)
    }

    fn on_postgres(&self) -> Option<Box<dyn ConnCmd>> {
        self.pattern
            .map(|_| Box::new(SortOnPostgres(self.clone())) as Box<dyn ConnCmd>)
    }
}

impl WriteCmd for Sort {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        self.check(cx)?;
        let dst = self.store.as_deref().unwrap_or_default();
        let existed =
            w.wants_events(relis::events::class::GENERIC) && w.meta(cx.db, dst)?.is_some();
        let sorted = w.sort_store(cx.db, &self.key, &self.opts, dst, &mut |k, found| {
            cx.hit(k, found)
        })?;
        if let Sorted::Values(v) = &sorted {
            if !v.is_empty() {
                w.notify(relis::events::class::LIST, "sortstore", cx.db, dst);
            } else if existed {
                w.notify(relis::events::class::GENERIC, "del", cx.db, dst);
            }
        }
        reply(sorted, true)
    }

    fn on_postgres(&self) -> Option<Box<dyn ConnCmd>> {
        self.pattern
            .map(|_| Box::new(SortOnPostgres(self.clone())) as Box<dyn ConnCmd>)
    }
}

/// SORT with BY or GET patterns over the PostgreSQL backend, where a command sees only the
/// keys it declares: a first read (declaring the sorted key) runs the sort without LIMIT to
/// learn every key the patterns name for its elements, then the sort runs for real in a job
/// that declares them all (and STORE's destination), as any command would. An element added
/// between the two reads finds its pattern keys missing, as if they did not exist. Inside
/// MULTI or a script the patterns' keys cannot be declared in advance: refused there
/// (`dispatch::refused_on_postgres`).
pub struct SortOnPostgres(Sort);

impl ConnCmd for SortOnPostgres {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let sort = self.0;
            let cx = c.cx();
            sort.check(&cx)?;
            let db = c.db;
            let (key, mut probe) = (sort.key.clone(), sort.opts.clone());
            probe.limit = None;
            let looked = crate::cmd::read_declared(c, vec![(db, key.to_vec())], move |r| {
                let mut keys: Vec<Vec<u8>> = Vec::new();
                match r.sort(db, &key, &probe, &mut |k, _| keys.push(k.to_vec())) {
                    // Phase two answers the error.
                    Ok(_) | Err(relis::Error::WrongType) => Ok(keys),
                    Err(e) => Err(CmdError::from(e)),
                }
            })
            .await?;
            let mut declared: Vec<(u32, Vec<u8>)> = looked.into_iter().map(|k| (db, k)).collect();
            declared.push((db, sort.key.to_vec()));
            if let Some(dst) = &sort.store {
                declared.push((db, dst.to_vec()));
            }
            declared.sort();
            declared.dedup();
            if sort.store.is_none() {
                return crate::cmd::read_declared(c, declared, move |r| {
                    ReadCmd::exec(&sort, r, &cx)
                })
                .await;
            }
            let (tx, rx) = tokio::sync::oneshot::channel();
            c.server.db.write_async_keys(
                declared,
                move |w| {
                    w.set_origin(cx.client_id);
                    w.atomic(|w| WriteCmd::exec(&sort, w, &cx))
                },
                move |r| {
                    let _ = tx.send(r);
                },
            );
            rx.await
                .map_err(|_| CmdError::from(relis::Error::Closed))?
                .map_err(CmdError::from)?
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    fn parse(line: &[&str], readonly: bool) -> Result<Sort, CmdError> {
        let mut args = Args::new("sort", line.iter().map(|a| b(a)).collect());
        Sort::from_args(&mut args, readonly)
    }

    #[test]
    fn options() {
        let s = parse(&["k"], false).unwrap();
        assert_eq!((s.opts, s.store), (SortOptions::default(), None));
        let s = parse(
            &[
                "k", "BY", "w_*", "limit", "1", "2", "GET", "#", "get", "h_*->f", "DESC", "alpha",
                "STORE", "d1", "store", "d2", "asc",
            ],
            false,
        )
        .unwrap();
        assert_eq!(s.opts.by, Some(b("w_*")));
        assert!(!s.opts.nosort);
        assert_eq!(s.opts.limit, Some((1, 2)));
        assert_eq!(s.opts.get, vec![b("#"), b("h_*->f")]);
        assert!(!s.opts.desc && s.opts.alpha);
        assert_eq!(s.store, Some(b("d2")), "the last STORE wins");
        // A BY without a star turns sorting off, even before a BY with one.
        let s = parse(&["k", "by", "nosort", "by", "w_*"], false).unwrap();
        assert!(s.opts.nosort);
        assert_eq!(s.opts.by, Some(b("w_*")));
        // A star after a NUL byte is not seen (C's strchr).
        assert!(parse(&["k", "by", "a\0*"], false).unwrap().opts.nosort);
    }

    #[test]
    fn errors_in_redis_order() {
        for line in [
            &["k", "limit", "1"][..],
            &["k", "store"],
            &["k", "by"],
            &["k", "get"],
            &["k", "foo"],
            &["k", "foo", "limit", "x", "1"],
        ] {
            assert_eq!(parse(line, false), Err(CmdError::Syntax), "{line:?}");
        }
        assert_eq!(
            parse(&["k", "limit", "x", "1", "foo"], false),
            Err(CmdError::NotInteger)
        );
        assert_eq!(
            parse(&["k", "limit", "1", "1.5"], false),
            Err(CmdError::NotInteger)
        );
        assert_eq!(
            parse(&["k", "store", "d"], true),
            Err(CmdError::Syntax),
            "SORT_RO has no STORE"
        );
        assert!(parse(&["k", "limit", "-1", "-9223372036854775808"], true).is_ok());
    }

    #[test]
    fn keys() {
        let keys = |line: &[&str]| {
            let argv: Vec<Bytes> = line.iter().map(|a| b(a)).collect();
            sort_keys(&argv)
        };
        assert_eq!(keys(&["sort", "k"]), vec![1]);
        assert_eq!(keys(&["sort", "k", "store", "d"]), vec![1, 3]);
        assert_eq!(keys(&["sort", "k", "store", "d", "STORE", "e"]), vec![1, 5]);
        assert_eq!(keys(&["sort", "k", "get", "store", "by", "store"]), vec![1]);
        assert_eq!(keys(&["sort", "k", "limit", "store", "x", "asc"]), vec![1]);
        assert_eq!(keys(&["sort", "k", "store"]), vec![1]);
    }
}
