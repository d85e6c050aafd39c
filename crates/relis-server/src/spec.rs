//! Command declarations: what the dispatcher, COMMAND, INFO and ACL know of a command before
//! any of its code runs.
//!
//! This module depends on nothing else in the crate, so ACL rules can be written against it
//! without knowing the commands. A [`Spec`] is generic over its parse function `P` (the command
//! table in `cmd` fixes it); flags, ACL categories and key-spec flags are bit sets ([`Flags`],
//! [`Cats`], [`KeyFlags`]) built from Redis's names at compile time, so serving a command (and
//! checking a restricted user's keys) tests bits, not strings.

use std::sync::OnceLock;

/// Defines a bit set over a list of names: bit `i` is `NAMES[i]`.
macro_rules! named_bits {
    ($(#[$meta:meta])* $ty:ident, $names:expr) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $ty(u32);

        impl $ty {
            /// Every name, bit 0 first.
            pub const NAMES: &'static [&'static str] = $names;

            /// The set of `names`; an unknown name panics, which in a `const` (the command
            /// tables) is a compile error.
            pub const fn of(names: &[&str]) -> $ty {
                let mut bits = 0;
                let mut i = 0;
                while i < names.len() {
                    let mut j = 0;
                    loop {
                        assert!(j < Self::NAMES.len(), "unknown name");
                        if str_eq(names[i], Self::NAMES[j]) {
                            break;
                        }
                        j += 1;
                    }
                    bits |= 1 << j;
                    i += 1;
                }
                $ty(bits)
            }

            /// The set named `name` (one name), if it is one.
            pub fn named(name: &str) -> Option<$ty> {
                Self::NAMES.iter().position(|n| *n == name).map(|i| $ty(1 << i))
            }

            /// Whether every member of `other` is in the set.
            pub const fn has(self, other: $ty) -> bool {
                self.0 & other.0 == other.0
            }

            /// Whether the set shares a member with `other`.
            pub const fn any(self, other: $ty) -> bool {
                self.0 & other.0 != 0
            }

            /// Whether the set is empty.
            pub const fn is_empty(self) -> bool {
                self.0 == 0
            }

            /// Both sets together.
            pub const fn with(self, other: $ty) -> $ty {
                $ty(self.0 | other.0)
            }

            /// The names of the members, in [`Self::NAMES`] order.
            pub fn names(self) -> impl Iterator<Item = &'static str> {
                Self::NAMES
                    .iter()
                    .enumerate()
                    .filter(move |(i, _)| self.0 & (1 << i) != 0)
                    .map(|(_, n)| *n)
            }
        }

        impl std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_set().entries(self.names()).finish()
            }
        }
    };
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

named_bits!(
    /// Redis command flags (`write`, `readonly`, `denyoom`, `admin`, `fast`, `noscript`, ...).
    /// [`Flags::NAMES`] is in the order COMMAND INFO reports them, hidden flags last.
    Flags,
    &[
        "write",
        "readonly",
        "denyoom",
        "module",
        "admin",
        "pubsub",
        "noscript",
        "blocking",
        "loading",
        "stale",
        "skip_monitor",
        "skip_slowlog",
        "asking",
        "fast",
        "no_auth",
        "no_mandatory_keys",
        "no_async_loading",
        "no_multi",
        "movablekeys",
        "allow_busy",
        // Hidden: Redis leaves it out of COMMAND INFO.
        "sentinel",
    ]
);

impl Flags {
    /// `write`.
    pub const WRITE: Flags = Flags::of(&["write"]);
    /// `readonly`.
    pub const READONLY: Flags = Flags::of(&["readonly"]);
    /// `admin`.
    pub const ADMIN: Flags = Flags::of(&["admin"]);
    /// `pubsub`.
    pub const PUBSUB: Flags = Flags::of(&["pubsub"]);
    /// `noscript`.
    pub const NOSCRIPT: Flags = Flags::of(&["noscript"]);
    /// `blocking`.
    pub const BLOCKING: Flags = Flags::of(&["blocking"]);
    /// `skip_slowlog`.
    pub const SKIP_SLOWLOG: Flags = Flags::of(&["skip_slowlog"]);
    /// `fast`.
    pub const FAST: Flags = Flags::of(&["fast"]);
    /// `no_auth`.
    pub const NO_AUTH: Flags = Flags::of(&["no_auth"]);
    /// `no_mandatory_keys`.
    pub const NO_MANDATORY_KEYS: Flags = Flags::of(&["no_mandatory_keys"]);
    /// `no_multi`.
    pub const NO_MULTI: Flags = Flags::of(&["no_multi"]);
    /// `movablekeys`.
    pub const MOVABLEKEYS: Flags = Flags::of(&["movablekeys"]);
    /// Flags COMMAND INFO does not show.
    pub const HIDDEN: Flags = Flags::of(&["sentinel"]);
    /// Runs while a replica's link to its master is down.
    pub const STALE: Flags = Flags::of(&["stale"]);
    /// Runs while a replica loads a full sync.
    pub const LOADING: Flags = Flags::of(&["loading"]);
}

named_bits!(
    /// ACL categories, without the `@`. [`Cats::NAMES`] is Redis 7.0's order (ACL CAT), then
    /// Relis's own `sql`.
    Cats,
    CATEGORIES
);

/// The ACL categories, in Redis 7.0's order (ACL CAT), then Relis's own `sql`.
pub const CATEGORIES: &[&str] = &[
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
    "sql",
];

impl Cats {
    /// `@read`.
    pub const READ: Cats = Cats::of(&["read"]);
    /// `@write`.
    pub const WRITE: Cats = Cats::of(&["write"]);
    /// `@fast`.
    pub const FAST: Cats = Cats::of(&["fast"]);
    /// `@scripting`.
    pub const SCRIPTING: Cats = Cats::of(&["scripting"]);
    /// `@sql`.
    pub const SQL: Cats = Cats::of(&["sql"]);
}

named_bits!(
    /// Key-spec flags (COMMAND INFO's `flags` of a key spec, COMMAND GETKEYSANDFLAGS).
    /// [`KeyFlags::NAMES`] is Redis 7.0's order (`keyspec_flags_names`), the order it prints
    /// them in.
    KeyFlags,
    &[
        "RO",
        "RW",
        "OW",
        "RM",
        "access",
        "update",
        "insert",
        "delete",
        "not_key",
        "incomplete",
        "variable_flags",
    ]
);

impl KeyFlags {
    /// `access`: the command reads the key's value (ACL needs read permission).
    pub const ACCESS: KeyFlags = KeyFlags::of(&["access"]);
    /// `insert`, `update` or `delete`: the command changes the key (ACL needs write permission).
    pub const CHANGES: KeyFlags = KeyFlags::of(&["update", "insert", "delete"]);
    /// `not_key`: the argument is not a key (shard channels).
    pub const NOT_KEY: KeyFlags = KeyFlags::of(&["not_key"]);
}

/// The commands Redis 7.0 flags MAY_REPLICATE (besides its write commands): they may change
/// what replicas hold, so a replica (or a monitor) may not send them, and a WRITE pause holds
/// them. (Not a [`Flags`] bit: COMMAND INFO does not show it in Relis.)
pub const MAY_REPLICATE: &[&str] = &["eval", "evalsha", "fcall", "publish", "spublish", "pfcount"];

/// A command's declaration, `P` being its parse function: everything the dispatcher, COMMAND
/// and INFO need to know.
pub struct Spec<P: 'static> {
    /// Lower-case name; subcommands are `parent|sub` as Redis names them.
    pub name: &'static str,
    /// Redis arity: N = exactly N arguments including the name, -N = at least N.
    pub arity: i32,
    /// Redis command flags (`Spec::flags(&["write", "denyoom"])`).
    pub flags: Flags,
    /// ACL categories (`Spec::acl(&["write", "string", "slow"])`).
    pub acl: Cats,
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
    pub parse: P,
    /// Whether a successful run may feed clients blocked on its keys (pushes, ZADD, ...): the
    /// dispatcher then serves those clients right after it, in the same transaction.
    pub unblocks: bool,
    /// Subcommands; when non-empty the dispatcher picks one by the first argument.
    pub subcommands: &'static [Spec<P>],
    /// Redis command tips (COMMAND INFO), such as `nondeterministic_output`.
    pub tips: &'static [&'static str],
    /// Key-spec flags (COMMAND INFO), such as `RW`, `access`, `update`
    /// (`Spec::key_flags(&["RW", "access", "update"])`); empty derives them
    /// from `write`/`readonly` (`RW update` / `RO access`).
    pub key_flags: KeyFlags,
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
    /// Its flags (`Spec::key_flags(&["RW", "access", "delete"])`).
    pub flags: KeyFlags,
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

impl<P> Spec<P> {
    /// A spec with every field at its default and `parse` (the tables' `..Spec::BASE`).
    pub const fn base(parse: P) -> Spec<P> {
        Spec {
            name: "",
            arity: 0,
            flags: Flags(0),
            acl: Cats(0),
            keys: (0, 0, 0),
            group: "generic",
            since: "1.0.0",
            summary: "",
            complexity: "O(1)",
            parse,
            subcommands: &[],
            tips: &[],
            key_flags: KeyFlags(0),
            key_notes: "",
            unblocks: false,
            find_keys: None,
            key_specs: &[],
        }
    }

    /// The flags named `names`, for the tables: an unknown name is a compile error.
    pub const fn flags(names: &[&str]) -> Flags {
        Flags::of(names)
    }

    /// The ACL categories named `names`, for the tables: an unknown name is a compile error.
    pub const fn acl(names: &[&str]) -> Cats {
        Cats::of(names)
    }

    /// The key-spec flags named `names`, for the tables: an unknown name is a compile error.
    pub const fn key_flags(names: &[&str]) -> KeyFlags {
        KeyFlags::of(names)
    }

    /// The key-spec flags of its keys when no explicit key spec names them: [`Spec::key_flags`],
    /// else derived from `write` (`RW access update`) or not (`RO access`), as COMMAND INFO
    /// shows them and as ACL key checks read them.
    pub fn own_key_flags(&self) -> KeyFlags {
        const WRITE: KeyFlags = KeyFlags::of(&["RW", "access", "update"]);
        const READ: KeyFlags = KeyFlags::of(&["RO", "access"]);
        if !self.key_flags.is_empty() {
            self.key_flags
        } else if self.has(Flags::WRITE) {
            WRITE
        } else {
            READ
        }
    }

    /// The key-spec flags of the key at `pos` of the command line `argv`: those of the first
    /// explicit key spec naming it, else [`Spec::own_key_flags`].
    pub fn key_flags_at(&self, argv: &[bytes::Bytes], pos: usize) -> KeyFlags {
        self.key_specs
            .iter()
            .find(|k| k.covers(argv, pos))
            .map_or_else(|| self.own_key_flags(), |k| k.flags)
    }

    /// Whether the spec carries every flag of `flags`.
    pub fn has(&self, flags: Flags) -> bool {
        self.flags.has(flags)
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

    /// The keys a write of this command may make ready for blocked clients (`unblocks`), none
    /// for the others.
    pub fn ready_keys(&self, argv: &[bytes::Bytes]) -> Vec<bytes::Bytes> {
        if !self.unblocks {
            return Vec::new();
        }
        self.keys_of(argv)
            .into_iter()
            .map(|i| argv[i].clone())
            .collect()
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

/// A command table, indexed by lower-case name; each spec and subcommand spec also has a dense
/// index (statistics, ACL bitmaps).
pub struct Table<P: 'static> {
    by_name: rustc_hash::FxHashMap<&'static str, (usize, &'static Spec<P>)>,
    /// Every spec and subcommand spec, in index order.
    pub specs: Vec<&'static Spec<P>>,
}

impl<P> Table<P> {
    /// The table of the top-level specs `all` and their subcommands, which also becomes the
    /// process's [`Index`] if none was installed yet.
    ///
    /// # Panics
    /// A name is declared twice.
    pub fn new(all: impl Iterator<Item = &'static Spec<P>>) -> Table<P> {
        let mut t = Table {
            by_name: rustc_hash::FxHashMap::default(),
            specs: Vec::new(),
        };
        for s in all {
            for s in std::iter::once(s).chain(s.subcommands) {
                let i = t.specs.len();
                t.specs.push(s);
                let prev = t.by_name.insert(s.name, (i, s));
                assert!(prev.is_none(), "command {} declared twice", s.name);
            }
        }
        INDEX.get_or_init(|| Index {
            names: t.specs.iter().map(|s| s.name).collect(),
            flags: t.specs.iter().map(|s| s.flags).collect(),
            cats: t.specs.iter().map(|s| s.acl).collect(),
            containers: t.specs.iter().map(|s| !s.subcommands.is_empty()).collect(),
            by_name: t.by_name.iter().map(|(n, (i, _))| (*n, *i)).collect(),
        });
        t
    }

    /// The spec named `name` (any case), with its index.
    pub fn lookup(&self, name: &[u8]) -> Option<(usize, &'static Spec<P>)> {
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
    pub fn lookup_sub(&self, parent: &Spec<P>, sub: &[u8]) -> Option<(usize, &'static Spec<P>)> {
        let sub = String::from_utf8_lossy(sub).to_ascii_lowercase();
        self.by_name
            .get(format!("{}|{}", parent.name, sub).as_str())
            .copied()
    }
}

static INDEX: OnceLock<Index> = OnceLock::new();

/// What ACL rules and statistics need of the whole command table, without its parse
/// functions: names, flags, categories and which commands have subcommands, by table index.
#[derive(Debug)]
pub struct Index {
    names: Vec<&'static str>,
    flags: Vec<Flags>,
    cats: Vec<Cats>,
    containers: Vec<bool>,
    by_name: rustc_hash::FxHashMap<&'static str, usize>,
}

impl Index {
    /// The index of the process's command table.
    ///
    /// # Panics
    /// No [`Table`] was built yet (the server builds its table before its users and statistics).
    pub fn get() -> &'static Index {
        INDEX
            .get()
            .expect("the command table is built before anything asks for its index")
    }

    /// How many specs (commands and subcommands) the table holds.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The name of spec `idx` (`parent|sub` for a subcommand).
    pub fn name(&self, idx: usize) -> &'static str {
        self.names[idx]
    }

    /// The flags of spec `idx`.
    pub fn flags(&self, idx: usize) -> Flags {
        self.flags[idx]
    }

    /// The ACL categories of spec `idx`.
    pub fn cats(&self, idx: usize) -> Cats {
        self.cats[idx]
    }

    /// Whether spec `idx` has subcommands.
    pub fn has_subcommands(&self, idx: usize) -> bool {
        self.containers[idx]
    }

    /// The index of the spec named `name` (lower case).
    pub fn lookup(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_bits_in_order() {
        let f = Flags::of(&["fast", "write"]);
        assert!(f.has(Flags::WRITE) && f.has(Flags::FAST) && !f.has(Flags::READONLY));
        assert_eq!(f.names().collect::<Vec<_>>(), ["write", "fast"]);
        assert_eq!(Flags::named("fast"), Some(Flags::FAST));
        assert_eq!(Flags::named("nope"), None);
        assert!(Flags::NAMES.len() <= 32 && Cats::NAMES.len() <= 32);
        assert_eq!(
            Cats::of(&["sql", "read"]).names().collect::<Vec<_>>(),
            ["read", "sql"]
        );
    }

    #[test]
    fn key_flags_print_in_redis_order() {
        let f = KeyFlags::of(&["variable_flags", "update", "access", "RW"]);
        assert_eq!(
            f.names().collect::<Vec<_>>(),
            ["RW", "access", "update", "variable_flags"]
        );
        assert!(f.has(KeyFlags::ACCESS) && f.any(KeyFlags::CHANGES) && !f.has(KeyFlags::CHANGES));
        assert!(!KeyFlags::of(&["RO", "access"]).any(KeyFlags::CHANGES));
        assert!(!f.any(KeyFlags::NOT_KEY) && KeyFlags::NAMES.len() <= 32);
    }
}
