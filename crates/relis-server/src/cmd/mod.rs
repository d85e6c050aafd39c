//! The command table and the three kinds of command.
//!
//! Every command is declared once, as a [`Spec`] in its family's `SPECS` table: name, arity,
//! flags, ACL categories, key positions, docs, and its pure `parse`. The dispatcher checks unknown
//! commands and arity from the table before any command code runs; COMMAND and INFO read the
//! same table. `parse` returns a [`Parsed`] command, which runs where its kind says:
//! - [`ReadCmd`] on a reader connection (in parallel, off the async runtime),
//! - [`WriteCmd`] on the writer thread inside a savepoint of the group commit,
//! - [`ConnCmd`] on the connection's task (connection state, server state, MULTI, ...).

pub mod acl;
pub mod bitmap;
pub mod cluster;
pub mod conn;
pub mod geo;
pub mod hash;
pub mod hyperloglog;
pub mod keys;
pub mod list;
pub mod pubsub;
pub mod replication;
pub mod scripting;
pub mod server;
pub mod set;
pub mod sql;
pub mod stream;
pub mod string;
pub mod tx;
pub mod zset;

use crate::args::Args;
use crate::client::Client;
use crate::error::CmdError;
use crate::server::Shared;
use resp::{Frame, Protocol};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

/// What a command sees of its caller while it runs on a reader or the writer.
#[derive(Clone)]
pub struct Cx {
    /// The connection's selected database.
    pub db: u32,
    /// The connection's protocol.
    pub proto: Protocol,
    /// Server-wide state.
    pub server: Arc<Shared>,
    /// The connection's user (scripts check `redis.call` against it).
    pub user: Arc<crate::acl::User>,
    /// The connection's client id (ACL LOG finds its CLIENT LIST line by it).
    pub client_id: u64,
    /// Where the command runs, as ACL LOG names it: `toplevel`, `multi` (queued, run by EXEC)
    /// or `lua` (`redis.call`), for the denials a command finds as it runs (SQL morphs).
    pub context: &'static str,
}

/// A command that only reads the keyspace.
pub trait ReadCmd: Send + 'static {
    /// Runs the command on a read snapshot.
    ///
    /// # Errors
    /// The command's error reply.
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError>;

    /// Whether this read is bounded well enough to run on the network thread, like the commands
    /// flagged `fast`, although its command in general is not (LRANGE over at most
    /// [`INLINE_READ_LIMIT`] elements, MGET of that many keys): handing it to a reader thread
    /// would cost more than the read.
    fn inline(&self) -> bool {
        false
    }
}

/// Most elements (or keys) a read may touch and still run inline (see [`ReadCmd::inline`]).
pub const INLINE_READ_LIMIT: u64 = 128;

/// A command that writes the keyspace.
pub trait WriteCmd: Send + 'static {
    /// Runs the command on the writer, inside its own savepoint (an `Err` rolls back what it
    /// wrote).
    ///
    /// # Errors
    /// The command's error reply.
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError>;

    /// Whether the command needs a savepoint of its own. A savepoint costs a statement journal
    /// copy of every page the command touches; a command whose own errors all come before its
    /// first write (so only a storage failure can interrupt it half way, and that fails the
    /// whole group commit) can say `false`.
    fn needs_savepoint(&self) -> bool {
        true
    }
}

/// A boxed future borrowing the client.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A command that works on the connection or the server rather than (only) the keyspace.
pub trait ConnCmd: Send + 'static {
    /// Runs the command on the connection's task.
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>>;

    /// The database this command selects, if it is SELECT (MULTI tracks it for later commands).
    fn selects(&self) -> Option<u32> {
        None
    }

    /// The form this command takes inside MULTI/EXEC, where nothing may block: blocking
    /// commands hand over their non-blocking twin (once); others stay connection commands.
    fn in_transaction(&mut self) -> Option<Box<dyn WriteCmd>> {
        None
    }
}

/// A parsed command, ready to run where its kind says.
pub enum Parsed {
    /// Runs on a reader.
    Read(Box<dyn ReadCmd>),
    /// Runs on the writer.
    Write(Box<dyn WriteCmd>),
    /// Runs on the connection's task.
    Conn(Box<dyn ConnCmd>),
}

impl Parsed {
    /// A read command.
    pub fn read(c: impl ReadCmd) -> Result<Parsed, CmdError> {
        Ok(Parsed::Read(Box::new(c)))
    }
    /// A write command.
    pub fn write(c: impl WriteCmd) -> Result<Parsed, CmdError> {
        Ok(Parsed::Write(Box::new(c)))
    }
    /// A connection command.
    pub fn conn(c: impl ConnCmd) -> Result<Parsed, CmdError> {
        Ok(Parsed::Conn(Box::new(c)))
    }
}

/// A parse function.
pub type ParseFn = fn(&mut Args) -> Result<Parsed, CmdError>;

/// A command's declaration: everything the dispatcher, COMMAND and INFO need to know.
pub struct Spec {
    /// Lower-case name; subcommands are `parent|sub` as Redis names them.
    pub name: &'static str,
    /// Redis arity: N = exactly N arguments including the name, -N = at least N.
    pub arity: i32,
    /// Redis command flags (`write`, `readonly`, `denyoom`, `admin`, `fast`, `noscript`,
    /// `loading`, `stale`, `no_auth`, `no_multi`, ...).
    pub flags: &'static [&'static str],
    /// ACL categories, without the `@`.
    pub acl: &'static [&'static str],
    /// First key, last key (negative counts from the end), step; zeros when there are no keys.
    pub keys: (i32, i32, i32),
    /// Command group in COMMAND DOCS (`string`, `generic`, `connection`, `server`, ...).
    pub group: &'static str,
    /// The Redis version that introduced it.
    pub since: &'static str,
    /// One-line summary.
    pub summary: &'static str,
    /// Time complexity.
    pub complexity: &'static str,
    /// Parses arguments (after the name, or after the subcommand name) into a command.
    pub parse: ParseFn,
    /// Whether a successful run may feed clients blocked on its keys (pushes, ZADD, ...): the
    /// dispatcher then serves those clients right after it, in the same transaction.
    pub unblocks: bool,
    /// Subcommands; when non-empty the dispatcher picks one by the first argument.
    pub subcommands: &'static [Spec],
    /// Redis command tips (COMMAND INFO), such as `nondeterministic_output`.
    pub tips: &'static [&'static str],
    /// Key-spec flags (COMMAND INFO), such as `RW`, `access`, `update`; empty derives them
    /// from `write`/`readonly` (`RW update` / `RO access`).
    pub key_flags: &'static [&'static str],
    /// Notes on the key spec (COMMAND INFO `notes`), empty for none.
    pub key_notes: &'static str,
    /// Redis's `getkeys_proc`: the key positions of a command line whose keys the legacy range
    /// cannot describe (SORT's `STORE destination`). When set, it replaces [`Spec::keys`] for
    /// COMMAND GETKEYS and for the keys an `unblocks` command feeds.
    pub find_keys: Option<FindKeysFn>,
    /// COMMAND INFO's key specs, for commands one legacy key range cannot describe (a
    /// destination and sources with different flags, keys found through `numkeys`); empty
    /// derives the single spec from [`Spec::keys`] and [`Spec::key_flags`].
    pub key_specs: &'static [KeySpec],
}

/// One key spec of COMMAND INFO.
#[derive(Debug)]
pub struct KeySpec {
    /// Its flags (`RW`, `OW`, `RO`, `access`, `update`, `delete`, ...).
    pub flags: &'static [&'static str],
    /// `begin_search`: the index of the first key (or of `numkeys`).
    pub index: i32,
    /// COMMAND INFO `notes` of this spec, empty for none (then [`Spec::key_notes`] applies).
    pub notes: &'static str,
    /// `find_keys`.
    pub find: FindKeys,
}

/// How a key spec finds its keys from its `begin_search` index.
#[derive(Debug)]
pub enum FindKeys {
    /// `range`: lastkey (relative, negative from the end), keystep, limit.
    Range(i32, i32, i32),
    /// `keynum`: keynumidx, firstkey, keystep (relative to the begin index).
    Keynum(i32, i32, i32),
    /// `unknown` begin_search and find_keys: keys only [`Spec::find_keys`] can find (SORT's
    /// BY/GET patterns and STORE); `index` is not used. A keyword (`"store"`) makes the spec
    /// name the key found right after it (any case), so that its flags apply to that key; an
    /// empty one names no key.
    Unknown(&'static str),
    /// A `keyword` begin search (the keyword, searched from the begin index on) followed by a
    /// `range`: lastkey, keystep, limit (XREAD's `STREAMS`: the first half of what follows).
    AfterKeyword(&'static str, i32, i32, i32),
}

impl KeySpec {
    /// Whether this spec names the argument at `pos` of the command line `argv`.
    pub fn covers(&self, argv: &[bytes::Bytes], pos: usize) -> bool {
        let (argc, pos, begin) = (argv.len() as i64, pos as i64, i64::from(self.index));
        match self.find {
            FindKeys::Range(last, step, _) => {
                let last = if last >= 0 {
                    begin + i64::from(last)
                } else {
                    argc + i64::from(last)
                };
                pos >= begin && pos <= last && (pos - begin) % i64::from(step.max(1)) == 0
            }
            FindKeys::Keynum(numidx, first, step) => {
                let Some(n) = argv
                    .get((begin + i64::from(numidx)) as usize)
                    .and_then(|a| relis::parse_i64(a))
                else {
                    return false;
                };
                let (first, step) = (begin + i64::from(first), i64::from(step.max(1)));
                pos >= first && (pos - first) % step == 0 && (pos - first) / step < n
            }
            FindKeys::Unknown(keyword) => {
                !keyword.is_empty()
                    && pos > 0
                    && argv
                        .get((pos - 1) as usize)
                        .is_some_and(|a| a.eq_ignore_ascii_case(keyword.as_bytes()))
            }
            FindKeys::AfterKeyword(word, last, step, limit) => {
                let Some(at) = argv
                    .iter()
                    .skip(begin.max(0) as usize)
                    .position(|a| a.eq_ignore_ascii_case(word.as_bytes()))
                else {
                    return false;
                };
                let first = begin + at as i64 + 1;
                let last = if last >= 0 {
                    first + i64::from(last)
                } else {
                    argc + i64::from(last)
                };
                let span = (last - first + 1).max(0) / i64::from(limit.max(1));
                pos >= first && pos < first + span && (pos - first) % i64::from(step.max(1)) == 0
            }
        }
    }
}

/// A [`Spec::find_keys`] function: the key positions in a whole command line (name included).
pub type FindKeysFn = fn(&[bytes::Bytes]) -> Vec<usize>;

fn unreachable_parse(_: &mut Args) -> Result<Parsed, CmdError> {
    Err(CmdError::Syntax)
}

impl Spec {
    /// Defaults for `..Spec::BASE` in the tables.
    pub const BASE: Spec = Spec {
        name: "",
        arity: 0,
        flags: &[],
        acl: &[],
        keys: (0, 0, 0),
        group: "generic",
        since: "1.0.0",
        summary: "",
        complexity: "O(1)",
        parse: unreachable_parse,
        subcommands: &[],
        tips: &[],
        key_flags: &[],
        key_notes: "",
        unblocks: false,
        find_keys: None,
        key_specs: &[],
    };

    /// Whether the spec carries `flag`.
    pub fn has(&self, flag: &str) -> bool {
        self.flags.contains(&flag)
    }

    /// Whether `argc` (including the name) satisfies the arity.
    pub fn arity_ok(&self, argc: usize) -> bool {
        let a = self.arity;
        (a >= 0 && argc == a as usize) || (a < 0 && argc >= (-a) as usize)
    }

    /// The subcommand's own name (after `|`), or the name.
    pub fn short_name(&self) -> &'static str {
        self.name.rsplit('|').next().unwrap_or(self.name)
    }

    /// Positions of the key arguments of the command line `argv` (which includes the name):
    /// [`Spec::find_keys`] if the spec has one, otherwise [`Spec::key_positions`].
    pub fn keys_of(&self, argv: &[bytes::Bytes]) -> Vec<usize> {
        match self.find_keys {
            Some(f) => f(argv),
            None => self.key_positions(argv.len()),
        }
    }

    /// Positions of the key arguments in `argv` (which includes the name).
    pub fn key_positions(&self, argc: usize) -> Vec<usize> {
        let (first, last, step) = self.keys;
        if first <= 0 || step <= 0 {
            return Vec::new();
        }
        let last = if last < 0 { argc as i32 + last } else { last };
        (first..=last.min(argc as i32 - 1))
            .step_by(step as usize)
            .map(|i| i as usize)
            .collect()
    }
}

/// Every top-level command.
pub fn all() -> impl Iterator<Item = &'static Spec> {
    string::SPECS
        .iter()
        .chain(keys::SPECS)
        .chain(hash::SPECS)
        .chain(list::SPECS)
        .chain(conn::SPECS)
        .chain(server::SPECS)
        .chain(tx::SPECS)
        .chain(zset::SPECS)
        .chain(geo::SPECS)
        .chain(sql::SPECS)
        .chain(set::SPECS)
        .chain(scripting::SPECS)
        .chain(pubsub::SPECS)
        .chain(acl::SPECS)
        .chain(cluster::SPECS)
        .chain(replication::SPECS)
        .chain(stream::SPECS)
        .chain(hyperloglog::SPECS)
        .chain(bitmap::SPECS)
}

/// The table, indexed by lower-case name; each spec also has a dense index for statistics.
pub struct Table {
    by_name: rustc_hash::FxHashMap<&'static str, (usize, &'static Spec)>,
    /// Every spec and subcommand spec, in index order.
    pub specs: Vec<&'static Spec>,
}

impl Table {
    /// The process-wide table.
    pub fn get() -> &'static Table {
        static TABLE: OnceLock<Table> = OnceLock::new();
        TABLE.get_or_init(|| {
            let mut t = Table {
                by_name: rustc_hash::FxHashMap::default(),
                specs: Vec::new(),
            };
            for s in all() {
                for s in std::iter::once(s).chain(s.subcommands) {
                    let i = t.specs.len();
                    t.specs.push(s);
                    let prev = t.by_name.insert(s.name, (i, s));
                    assert!(prev.is_none(), "command {} declared twice", s.name);
                }
            }
            t
        })
    }

    /// The spec named `name` (any case), with its index.
    pub fn lookup(&self, name: &[u8]) -> Option<(usize, &'static Spec)> {
        let mut buf = [0u8; 64];
        if name.len() > buf.len() {
            return None;
        }
        let lower = &mut buf[..name.len()];
        lower.copy_from_slice(name);
        lower.make_ascii_lowercase();
        let lower = std::str::from_utf8(lower).ok()?;
        self.by_name.get(lower).copied()
    }

    /// The subcommand `sub` of `parent`, with its index.
    pub fn lookup_sub(&self, parent: &Spec, sub: &[u8]) -> Option<(usize, &'static Spec)> {
        let sub = String::from_utf8_lossy(sub).to_ascii_lowercase();
        self.by_name
            .get(format!("{}|{}", parent.name, sub).as_str())
            .copied()
    }
}

/// Top-level commands (not subcommands) in table order.
pub fn top_level() -> Vec<&'static Spec> {
    all().collect()
}

impl Cx {
    /// The keys the command `cmd` (a name in the table) may read and write for the caller's user,
    /// as the SQL commands and SORT's patterns ask (everything for a user with every key: one
    /// atomic load).
    pub fn key_access(&self, cmd: &str) -> relis::sql::KeyAccess {
        if self.user.unrestricted() {
            return relis::sql::KeyAccess::all();
        }
        match crate::cmd::Table::get().lookup(cmd.as_bytes()) {
            Some((idx, spec)) => self.user.key_access(idx, spec),
            // Not a command of the table: nothing is allowed.
            None => {
                let none: relis::sql::KeyFilter = std::sync::Arc::new(|_: &[u8]| false);
                relis::sql::KeyAccess::new(Some(none.clone()), Some(none))
            }
        }
    }

    /// A read lookup of `key` (Redis's `lookupKeyRead`): counted in INFO's keyspace_hits /
    /// keyspace_misses, and a miss is a `keymiss` event (see [`crate::pubsub::PubSub::key_missed`]).
    pub fn hit(&self, key: &[u8], found: bool) {
        let s = &self.server.stats;
        if found {
            s.keyspace_hits
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        } else {
            s.keyspace_misses
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.server.pubsub.key_missed(&self.server.db, self.db, key);
        }
    }

    /// Whether a miss would publish anything (a command that counts its lookups in bulk must
    /// then look its keys up one by one).
    pub fn misses_notify(&self) -> bool {
        self.server.pubsub.notifies_misses()
    }
}

/// Counts a read lookup of `key` as Redis's `lookupKeyRead` does ([`Cx::hit`]): a key of
/// another type is a hit (the WRONGTYPE comes after the lookup). Storage errors count nothing.
///
/// # Errors
/// The lookup's error, as a command error.
pub fn counted<T>(
    cx: &Cx,
    key: &[u8],
    r: Result<Option<T>, relis::Error>,
) -> Result<Option<T>, CmdError> {
    match r {
        Ok(v) => {
            cx.hit(key, v.is_some());
            Ok(v)
        }
        Err(relis::Error::WrongType) => {
            cx.hit(key, true);
            Err(CmdError::WrongType)
        }
        Err(e) => Err(e.into()),
    }
}
