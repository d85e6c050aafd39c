//! Access control lists, as Redis 7.0 has them: users with passwords (kept as SHA-256 hex),
//! selectors of commands, key patterns (with read/write flags) and channel patterns.
//! <https://redis.io/docs/management/security/acl/>
//!
//! Commands are identified by their index in the command table ([`Index`]); a selector holds a
//! bitmap over those indexes, and categories are read from each [`Spec`]'s `acl` set: ACL checks,
//! ACL CAT and COMMAND INFO read one table. This module knows command specs, not the commands. The hot path is one atomic load: a user whose root
//! selector allows every command, key and channel is marked unrestricted, and connections of
//! such a user check nothing else.

use crate::error::CmdError;
pub use crate::spec::CATEGORIES;
use crate::spec::{Cats, Flags, Index, KeyFlags, Spec};
use bytes::Bytes;
use parking_lot::{Mutex, RwLock};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const READ: u8 = 1;
const WRITE: u8 = 2;

/// Why a rule was refused; [`RuleError::message`] is Redis's text for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleError {
    /// ENOENT.
    Unknown,
    /// EINVAL.
    Syntax,
    /// EEXIST.
    KeysAfterAll,
    /// EISDIR.
    ChannelsAfterAll,
    /// ENODEV.
    NoSuchPassword,
    /// EBADMSG.
    BadHash,
    /// ECHILD.
    SubcommandFirstArg,
}

impl RuleError {
    /// Redis's wording (`ACLSetUserStringError`).
    pub fn message(self) -> &'static str {
        match self {
            RuleError::Unknown => "Unknown command or category name in ACL",
            RuleError::Syntax => "Syntax error",
            RuleError::KeysAfterAll => "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns",
            RuleError::ChannelsAfterAll => "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels",
            RuleError::NoSuchPassword => "The password you are trying to remove from the user does not exist",
            RuleError::BadHash => "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters",
            RuleError::SubcommandFirstArg => "Allowing first-arg of a subcommand is not supported",
        }
    }
}

/// Why a command was refused, with the position of the offending argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Denied {
    /// The command (or subcommand).
    Cmd,
    /// The key at this argument position.
    Key(usize),
    /// The channel at this argument position.
    Channel(usize),
}

impl Denied {
    /// Redis's ordering of denials (`ACL_DENIED_CMD` < `KEY` < `CHANNEL`), then the position.
    fn rank(self) -> (u8, usize) {
        match self {
            Denied::Cmd => (1, 0),
            Denied::Key(p) => (2, p),
            Denied::Channel(p) => (4, p),
        }
    }

    /// The `-NOPERM` error of a command refused at the top level or in MULTI.
    pub fn noperm<P>(self, spec: &Spec<P>) -> CmdError {
        match self {
            Denied::Cmd => CmdError::noperm_command(spec.name),
            Denied::Key(_) => CmdError::NOPERM_KEYS,
            Denied::Channel(_) => CmdError::NOPERM_CHANNELS,
        }
    }

    /// The `-NOPERM` error of a queued command that EXEC finds no longer allowed (the user's
    /// rules changed after it was queued).
    pub fn exec_noperm(self) -> CmdError {
        CmdError::exec_noperm(match self {
            Denied::Cmd => "no permission to execute the command or subcommand",
            Denied::Key(_) => "no permission to touch the specified keys",
            Denied::Channel(_) => "no permission to access one of the channels used as arguments",
        })
    }

    /// The error of a command refused inside a script (`scriptVerifyACL`).
    pub fn script_error(self) -> CmdError {
        match self {
            Denied::Cmd => CmdError::SCRIPT_NOPERM_COMMAND,
            Denied::Key(_) => CmdError::SCRIPT_NOPERM_KEYS,
            Denied::Channel(_) => CmdError::SCRIPT_NOPERM_CHANNEL,
        }
    }

    /// ACL LOG's `reason`.
    pub fn reason(self) -> &'static str {
        match self {
            Denied::Cmd => "command",
            Denied::Key(_) => "key",
            Denied::Channel(_) => "channel",
        }
    }

    /// ACL LOG's `object`: the command's name, or the key or channel.
    pub fn object<P>(self, spec: &Spec<P>, argv: &[Bytes]) -> String {
        match self {
            Denied::Cmd => spec.name.to_string(),
            Denied::Key(p) | Denied::Channel(p) => String::from_utf8_lossy(&argv[p]).into_owned(),
        }
    }
}

/// One selector: which commands, keys and channels it allows.
#[derive(Clone, Debug, PartialEq)]
pub struct Selector {
    bits: Vec<u64>,
    /// Redis's reserved "future commands" bit: set by `+@all`, cleared by `-@all` only.
    future: bool,
    /// Every command allowed (cleared by any removal): the check's shortcut.
    allcommands: bool,
    /// Allowed first arguments of otherwise denied commands (`+select|0`), by table index.
    first_args: BTreeMap<usize, Vec<String>>,
    allkeys: bool,
    keys: Vec<(String, u8)>,
    allchannels: bool,
    channels: Vec<String>,
}

impl Selector {
    /// An empty selector: no commands, keys or channels.
    pub fn new() -> Selector {
        Selector {
            bits: vec![0; Index::get().len() / 64 + 1],
            future: false,
            allcommands: false,
            first_args: BTreeMap::new(),
            allkeys: false,
            keys: Vec::new(),
            allchannels: false,
            channels: Vec::new(),
        }
    }

    fn bit(&self, i: usize) -> bool {
        self.bits[i / 64] & (1 << (i % 64)) != 0
    }

    fn set_bit(&mut self, i: usize, on: bool) {
        if on {
            self.bits[i / 64] |= 1 << (i % 64);
        } else {
            self.bits[i / 64] &= !(1 << (i % 64));
            self.allcommands = false;
        }
    }

    fn set_all(&mut self, on: bool) {
        let fill = if on { u64::MAX } else { 0 };
        self.bits.iter_mut().for_each(|w| *w = fill);
        self.future = on;
        self.allcommands = on;
        self.first_args.clear();
    }

    /// Redis's `ACLChangeSelectorPerm`: the command and, for a container, its subcommands.
    fn change_perm(&mut self, idx: usize, on: bool) {
        let index = Index::get();
        self.first_args.remove(&idx);
        self.set_bit(idx, on);
        let name = index.name(idx);
        for i in idx + 1..index.len() {
            let sub = index.name(i);
            if !sub.starts_with(name) || sub.as_bytes().get(name.len()) != Some(&b'|') {
                break;
            }
            self.first_args.remove(&i);
            self.set_bit(i, on);
        }
    }

    fn set_category(&mut self, cat: Cats, on: bool) {
        let index = Index::get();
        for i in 0..index.len() {
            if index.cats(i).has(cat) {
                self.change_perm(i, on);
            }
        }
    }

    /// Applies one selector rule (Redis's `ACLSetSelector`).
    ///
    /// # Errors
    /// The rule is unknown or invalid.
    pub fn apply(&mut self, op: &str) -> Result<(), RuleError> {
        let lower = op.to_ascii_lowercase();
        match lower.as_str() {
            "allkeys" | "~*" => {
                self.allkeys = true;
                self.keys.clear();
                return Ok(());
            }
            "resetkeys" => {
                self.allkeys = false;
                self.keys.clear();
                return Ok(());
            }
            "allchannels" | "&*" => {
                self.allchannels = true;
                self.channels.clear();
                return Ok(());
            }
            "resetchannels" => {
                self.allchannels = false;
                self.channels.clear();
                return Ok(());
            }
            "allcommands" | "+@all" => {
                self.set_all(true);
                return Ok(());
            }
            "nocommands" | "-@all" => {
                self.set_all(false);
                return Ok(());
            }
            _ => {}
        }
        let bytes = op.as_bytes();
        match bytes.first() {
            Some(b'~') | Some(b'%') => {
                let (flags, pat) = if bytes[0] == b'~' {
                    (READ | WRITE, &op[1..])
                } else {
                    let mut flags = 0;
                    let mut at = op.len();
                    for (i, c) in op.char_indices().skip(1) {
                        match c.to_ascii_uppercase() {
                            'R' if flags & READ == 0 => flags |= READ,
                            'W' if flags & WRITE == 0 => flags |= WRITE,
                            '~' => {
                                at = i + 1;
                                break;
                            }
                            _ => return Err(RuleError::Syntax),
                        }
                    }
                    if flags == 0 {
                        return Err(RuleError::Syntax);
                    }
                    (flags, &op[at.min(op.len())..])
                };
                if self.allkeys {
                    return Err(RuleError::KeysAfterAll);
                }
                match self.keys.iter_mut().find(|(p, _)| p == pat) {
                    Some((_, f)) => *f |= flags,
                    None => self.keys.push((pat.to_string(), flags)),
                }
                Ok(())
            }
            Some(b'&') => {
                if self.allchannels {
                    return Err(RuleError::ChannelsAfterAll);
                }
                let pat = &op[1..];
                if !self.channels.iter().any(|p| p == pat) {
                    self.channels.push(pat.to_string());
                }
                Ok(())
            }
            Some(b'+') | Some(b'-') => {
                let allow = bytes[0] == b'+';
                let name = &lower[1..];
                if let Some(cat) = name.strip_prefix('@') {
                    let Some(cat) = Cats::named(cat) else {
                        return Err(RuleError::Unknown);
                    };
                    self.set_category(cat, allow);
                    return Ok(());
                }
                let index = Index::get();
                if let Some(i) = index.lookup(name) {
                    self.change_perm(i, allow);
                    return Ok(());
                }
                // `cmd|sub` (a subcommand) or `cmd|arg` (a first argument).
                let Some((parent, rest)) = name.split_once('|') else {
                    return Err(RuleError::Unknown);
                };
                let Some(pi) = index.lookup(parent) else {
                    return Err(RuleError::Unknown);
                };
                if index.has_subcommands(pi) {
                    let (sub, more) = match rest.split_once('|') {
                        Some((s, m)) => (s, Some(m)),
                        None => (rest, None),
                    };
                    let Some(si) = index.lookup(&format!("{parent}|{sub}")) else {
                        return Err(RuleError::Unknown);
                    };
                    if more.is_some() {
                        return Err(RuleError::SubcommandFirstArg);
                    }
                    self.change_perm(si, allow);
                    return Ok(());
                }
                if !allow || rest.contains('|') {
                    return Err(RuleError::Unknown);
                }
                if rest.is_empty() {
                    return Err(RuleError::Syntax);
                }
                // A first argument of a command already allowed adds nothing.
                if !self.bit(pi) {
                    let args = self.first_args.entry(pi).or_default();
                    if !args.iter().any(|a| a == rest) {
                        args.push(rest.to_string());
                    }
                }
                Ok(())
            }
            _ => Err(RuleError::Syntax),
        }
    }

    /// Whether this selector allows the command `spec` (table index `idx`) with `argv`.
    ///
    /// # Errors
    /// What it denies first: the command, then a key, then a channel (as Redis checks).
    pub fn check<P>(&self, idx: usize, spec: &Spec<P>, argv: &[Bytes]) -> Result<(), Denied> {
        if !self.allows(idx, spec.flags) {
            let by_first_arg = argv.len() > 1
                && self.first_args.get(&idx).is_some_and(|args| {
                    args.iter()
                        .any(|a| a.as_bytes().eq_ignore_ascii_case(&argv[1]))
                });
            if !by_first_arg {
                return Err(Denied::Cmd);
            }
        }
        if !self.allkeys && !spec.key_flags.has(KeyFlags::NOT_KEY) {
            for pos in spec.keys_of(argv) {
                if !self.key_ok(&argv[pos], key_perm(spec, argv, pos)) {
                    return Err(Denied::Key(pos));
                }
            }
        }
        if !self.allchannels {
            if let Some((from, to, pattern)) = channels_of(spec.name, argv.len()) {
                for (pos, ch) in argv.iter().enumerate().take(to).skip(from) {
                    if !self.channel_ok(ch, pattern) {
                        return Err(Denied::Channel(pos));
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether the command `spec` (table index `idx`) is allowed whatever its arguments (not
    /// only through `+cmd|first-arg` rules).
    fn allows(&self, idx: usize, flags: Flags) -> bool {
        self.allcommands || flags.has(Flags::NO_AUTH) || self.bit(idx)
    }

    fn key_ok(&self, key: &[u8], need: u8) -> bool {
        self.keys
            .iter()
            .any(|(p, f)| f & need == need && relis::glob::glob_match(p.as_bytes(), key, false))
    }

    /// Whether the channel (or, for PSUBSCRIBE, the pattern) is allowed: a channel matches a
    /// pattern as a glob; a pattern must equal an allowed pattern literally, as in Redis.
    pub fn channel_ok(&self, ch: &[u8], is_pattern: bool) -> bool {
        self.allchannels
            || self.channels.iter().any(|p| {
                if is_pattern {
                    p.as_bytes() == ch
                } else {
                    relis::glob::glob_match(p.as_bytes(), ch, false)
                }
            })
    }

    /// Whether nothing is restricted.
    fn unrestricted(&self) -> bool {
        self.allcommands && self.allkeys && self.allchannels
    }

    /// The key patterns as ACL LIST shows them (`~*`, or `~p %R~p %W~p`), empty for none.
    fn describe_keys(&self) -> String {
        if self.allkeys {
            return "~*".into();
        }
        let v: Vec<String> = self
            .keys
            .iter()
            .map(|(p, f)| match *f {
                READ => format!("%R~{p}"),
                WRITE => format!("%W~{p}"),
                _ => format!("~{p}"),
            })
            .collect();
        v.join(" ")
    }

    /// The channel patterns as GETUSER shows them (`&*` or `&p &q`).
    fn describe_channels(&self) -> String {
        if self.allchannels {
            return "&*".into();
        }
        let v: Vec<String> = self.channels.iter().map(|p| format!("&{p}")).collect();
        v.join(" ")
    }

    /// The command rules, rebuilt from the bitmap as Redis 7.0's
    /// `ACLDescribeSelectorCommandRules` does: `+@all` or `-@all`, then the categories that fit
    /// best, then single commands (and first arguments) for what differs.
    pub fn describe_commands(&self) -> String {
        let index = Index::get();
        let additive = !self.future;
        let mut rules = String::from(if additive { "-@all " } else { "+@all " });
        let mut fake = Selector::new();
        fake.set_all(!additive);
        let mut temp = self.clone();
        let mut applied = [false; 32];
        let cats: Vec<Cats> = CATEGORIES.iter().filter_map(|c| Cats::named(c)).collect();
        loop {
            let mut best = None;
            let (mut mindiff, mut maxsame) = (usize::MAX, 0usize);
            for (j, cat) in cats.iter().copied().enumerate() {
                if applied[j] {
                    continue;
                }
                let (mut on, mut off) = (0, 0);
                for i in 0..index.len() {
                    if index.cats(i).has(cat) {
                        if temp.bit(i) {
                            on += 1;
                        } else {
                            off += 1;
                        }
                    }
                }
                let (diff, same) = if additive { (off, on) } else { (on, off) };
                if same > diff && (diff < mindiff || (diff == mindiff && same > maxsame)) {
                    best = Some(j);
                    mindiff = diff;
                    maxsame = same;
                }
            }
            let Some(j) = best else { break };
            fake.set_category(cats[j], additive);
            temp.set_category(cats[j], !additive);
            rules.push_str(if additive { "+@" } else { "-@" });
            rules.push_str(CATEGORIES[j]);
            rules.push(' ');
            applied[j] = true;
        }
        for i in 0..index.len() {
            let (user, f) = (self.bit(i), fake.bit(i));
            if user != f {
                rules.push(if user { '+' } else { '-' });
                rules.push_str(index.name(i));
                rules.push(' ');
                fake.change_perm(i, user);
            }
            if !user {
                for a in self.first_args.get(&i).into_iter().flatten() {
                    rules.push_str(&format!("+{}|{a} ", index.name(i)));
                }
            }
        }
        rules.pop();
        rules
    }

    /// The whole selector as ACL LIST shows it.
    fn describe(&self) -> String {
        let mut out = String::new();
        let keys = self.describe_keys();
        if !keys.is_empty() {
            out.push_str(&keys);
            out.push(' ');
        }
        if self.allchannels {
            out.push_str("&* ");
        } else {
            out.push_str("resetchannels ");
            for c in &self.channels {
                out.push_str(&format!("&{c} "));
            }
        }
        out.push_str(&self.describe_commands());
        out
    }
}

impl Default for Selector {
    fn default() -> Self {
        Selector::new()
    }
}

/// The permission a key needs, from the key spec that names it (Redis's `ACLSelectorCheckKey`:
/// `access` needs read, `insert`/`delete`/`update` need write; a spec with neither needs
/// nothing beyond a matching pattern). The flags are COMMAND INFO's, so a write command
/// without key flags of its own (`RW access update`) needs both, as in Redis.
fn key_perm<P>(spec: &Spec<P>, argv: &[Bytes], pos: usize) -> u8 {
    let flags = spec.key_flags_at(argv, pos);
    let mut need = 0;
    if flags.has(KeyFlags::ACCESS) {
        need |= READ;
    }
    if flags.any(KeyFlags::CHANGES) {
        need |= WRITE;
    }
    need
}

/// The channel arguments of a command that publishes or subscribes: (first, end, patterns).
fn channels_of(name: &str, argc: usize) -> Option<(usize, usize, bool)> {
    match name {
        "subscribe" | "ssubscribe" => Some((1, argc, false)),
        "psubscribe" => Some((1, argc, true)),
        "publish" | "spublish" => Some((1, 2.min(argc), false)),
        _ => None,
    }
}

/// A user's state; an update replaces it as a whole (ACL SETUSER is atomic).
#[derive(Clone, Debug, PartialEq)]
pub struct UserState {
    /// `on` / `off`.
    pub enabled: bool,
    /// `nopass`: any password is accepted.
    pub nopass: bool,
    /// `sanitize-payload` (Some(true)) / `skip-sanitize-payload` (Some(false)).
    pub sanitize: Option<bool>,
    /// SHA-256 hex digests of the passwords, in the order they were added.
    pub passwords: Vec<String>,
    /// The root selector, then the `(...)` selectors.
    pub selectors: Vec<Selector>,
}

impl UserState {
    /// A new user: off, no passwords, nothing allowed.
    pub fn new() -> UserState {
        UserState {
            enabled: false,
            nopass: false,
            sanitize: None,
            passwords: Vec::new(),
            selectors: vec![Selector::new()],
        }
    }

    /// Applies one rule (Redis's `ACLSetUser`).
    ///
    /// # Errors
    /// The rule is unknown or invalid.
    pub fn apply(&mut self, op: &str) -> Result<(), RuleError> {
        let lower = op.to_ascii_lowercase();
        match lower.as_str() {
            "on" => self.enabled = true,
            "off" => self.enabled = false,
            "skip-sanitize-payload" => self.sanitize = Some(false),
            "sanitize-payload" => self.sanitize = Some(true),
            "nopass" => {
                self.nopass = true;
                self.passwords.clear();
            }
            "resetpass" => {
                self.nopass = false;
                self.passwords.clear();
            }
            "clearselectors" => self.selectors.truncate(1),
            "reset" => {
                for r in [
                    "resetpass",
                    "resetkeys",
                    "resetchannels",
                    "off",
                    "sanitize-payload",
                    "clearselectors",
                    "-@all",
                ] {
                    self.apply(r)?;
                }
            }
            _ => {
                let b = op.as_bytes();
                match b.first() {
                    Some(b'>') | Some(b'<') => {
                        let hash = sha256_hex(&b[1..]);
                        self.change_password(b[0] == b'>', hash)?;
                    }
                    Some(b'#') | Some(b'!') => {
                        let hash = &op[1..];
                        if hash.len() != 64
                            || !hash.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
                        {
                            return Err(RuleError::BadHash);
                        }
                        self.change_password(b[0] == b'#', hash.to_string())?;
                    }
                    Some(b'(') if b.len() > 1 && b[b.len() - 1] == b')' => {
                        let mut sel = Selector::new();
                        for rule in op[1..op.len() - 1].split(' ').filter(|r| !r.is_empty()) {
                            sel.apply(rule)?;
                        }
                        self.selectors.push(sel);
                    }
                    _ => self.selectors[0].apply(op)?,
                }
            }
        }
        Ok(())
    }

    fn change_password(&mut self, add: bool, hash: String) -> Result<(), RuleError> {
        if add {
            if !self.passwords.contains(&hash) {
                self.passwords.push(hash);
            }
            self.nopass = false;
        } else {
            let before = self.passwords.len();
            self.passwords.retain(|p| *p != hash);
            if self.passwords.len() == before {
                return Err(RuleError::NoSuchPassword);
            }
        }
        Ok(())
    }

    /// Whether the user may run `spec` with `argv`: the root selector or any other allows it.
    ///
    /// # Errors
    /// The most relevant denial, as Redis picks it (channel over key over command, then the
    /// later argument).
    pub fn check<P>(&self, idx: usize, spec: &Spec<P>, argv: &[Bytes]) -> Result<(), Denied> {
        let mut worst: Option<Denied> = None;
        for s in &self.selectors {
            match s.check(idx, spec, argv) {
                Ok(()) => return Ok(()),
                Err(d) => {
                    if worst.is_none_or(|w| d.rank() > w.rank()) {
                        worst = Some(d);
                    }
                }
            }
        }
        worst.map_or(Ok(()), Err)
    }

    /// The flags GETUSER lists.
    pub fn flags(&self) -> Vec<&'static str> {
        let mut f = vec![if self.enabled { "on" } else { "off" }];
        if self.nopass {
            f.push("nopass");
        }
        match self.sanitize {
            Some(false) => f.push("skip-sanitize-payload"),
            Some(true) => f.push("sanitize-payload"),
            None => {}
        }
        f
    }

    /// The rules after `user <name> ` in ACL LIST and the ACL file.
    pub fn describe(&self) -> String {
        let mut out = self.flags().join(" ");
        for p in &self.passwords {
            out.push_str(" #");
            out.push_str(p);
        }
        out.push(' ');
        out.push_str(&self.selectors[0].describe());
        for s in &self.selectors[1..] {
            out.push_str(&format!(" ({})", s.describe()));
        }
        out
    }

    /// Whether `pass` authenticates this user (enabled, and nopass or a matching password).
    pub fn password_ok(&self, pass: &[u8]) -> bool {
        if !self.enabled {
            return false;
        }
        if self.nopass {
            return true;
        }
        let h = sha256_hex(pass);
        // Every stored digest is compared in full: no early exit on the first match's position.
        self.passwords
            .iter()
            .fold(false, |ok, p| ok | same(p.as_bytes(), h.as_bytes()))
    }
}

impl Default for UserState {
    fn default() -> Self {
        UserState::new()
    }
}

/// Compares secrets without stopping at the first difference.
pub fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A password's SHA-256 digest in lower-case hex.
pub fn sha256_hex(pass: &[u8]) -> String {
    let d = Sha256::digest(pass);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// One GETUSER selector map: commands, keys, channels.
pub struct SelectorView {
    /// Command rules.
    pub commands: String,
    /// Key patterns.
    pub keys: String,
    /// Channel patterns.
    pub channels: String,
}

impl Selector {
    /// What GETUSER shows of this selector.
    pub fn view(&self) -> SelectorView {
        SelectorView {
            commands: self.describe_commands(),
            keys: self.describe_keys(),
            channels: self.describe_channels(),
        }
    }
}

/// A user. Connections hold an `Arc<User>`; ACL SETUSER updates it in place, so their next
/// command sees the new rules, as in Redis.
#[derive(Debug)]
pub struct User {
    /// The name.
    pub name: String,
    state: RwLock<UserState>,
    unrestricted: AtomicBool,
}

impl User {
    fn new(name: &str, state: UserState) -> Arc<User> {
        let u = User {
            name: name.to_string(),
            unrestricted: AtomicBool::new(false),
            state: RwLock::new(UserState::new()),
        };
        u.set(state);
        Arc::new(u)
    }

    /// The user a master's replicated commands run as: every command, key and channel allowed
    /// (Redis runs them unchecked, as its master client).
    pub fn master() -> Arc<User> {
        let mut s = UserState::new();
        for op in ["on", "nopass", "allkeys", "allchannels", "allcommands"] {
            s.apply(op).expect("a valid rule");
        }
        User::new("(master)", s)
    }

    /// Whether every command, key and channel is allowed: the hot path's only check.
    #[inline]
    pub fn unrestricted(&self) -> bool {
        self.unrestricted.load(Ordering::Relaxed)
    }

    /// A copy of the state.
    pub fn state(&self) -> UserState {
        self.state.read().clone()
    }

    /// Replaces the state.
    pub fn set(&self, s: UserState) {
        let free = s.selectors[0].unrestricted();
        *self.state.write() = s;
        self.unrestricted.store(free, Ordering::Relaxed);
    }

    /// Checks a command against the user's selectors (see [`UserState::check`]).
    ///
    /// # Errors
    /// The denial.
    pub fn check<P>(&self, idx: usize, spec: &Spec<P>, argv: &[Bytes]) -> Result<(), Denied> {
        if self.unrestricted() {
            return Ok(());
        }
        self.state.read().check(idx, spec, argv)
    }

    /// Whether `pass` authenticates this user.
    pub fn password_ok(&self, pass: &[u8]) -> bool {
        self.state.read().password_ok(pass)
    }

    /// The keys the command at table index `idx` (with `flags`) may read and write when it finds them
    /// as it runs instead of in its arguments: the SQL commands (the `redis_*` views show only
    /// readable keys, the morph commands write only writable ones). Redis 7's rule for a key
    /// argument, applied to each key: a key may be read (written) if a selector that allows
    /// the command allows reading (writing) it (`~p` both, `%R~p` reading, `%W~p` writing,
    /// `allkeys` every key). A selector that allows the command only for some first arguments
    /// (`+sql.query|x`) counts for no key. The rules are those of the moment of the call.
    pub fn key_access(&self, idx: usize, flags: Flags) -> relis::sql::KeyAccess {
        if self.unrestricted() {
            return relis::sql::KeyAccess::all();
        }
        let state = self.state.read();
        let allowing: Vec<&Selector> = state
            .selectors
            .iter()
            .filter(|s| s.allows(idx, flags))
            .collect();
        relis::sql::KeyAccess::new(key_filter(&allowing, READ), key_filter(&allowing, WRITE))
    }

    /// Whether the user takes any password (`nopass`): for the default user, what protected
    /// mode looks at.
    pub fn nopass(&self) -> bool {
        self.state.read().nopass
    }

    /// Whether a connection of this user starts authenticated (on and nopass).
    pub fn needs_no_auth(&self) -> bool {
        let s = self.state.read();
        s.enabled && s.nopass
    }

    /// Whether the user may use the channel (or literal pattern) `ch`.
    pub fn channel_ok(&self, ch: &[u8], is_pattern: bool) -> bool {
        self.unrestricted()
            || self
                .state
                .read()
                .selectors
                .iter()
                .any(|s| s.channel_ok(ch, is_pattern))
    }
}

/// The keys any of `selectors` allows with the access `need`, as a predicate; `None` when one
/// of them allows every key.
fn key_filter(selectors: &[&Selector], need: u8) -> Option<relis::sql::KeyFilter> {
    let mut patterns: Vec<Vec<u8>> = Vec::new();
    for s in selectors {
        // A `*` pattern with this access allows every key, as `allkeys` does (Redis's
        // ACLSelectorHasUnrestrictedKeyAccess).
        if s.allkeys || s.keys.iter().any(|(p, f)| f & need == need && p == "*") {
            return None;
        }
        patterns.extend(
            s.keys
                .iter()
                .filter(|(_, f)| f & need == need)
                .map(|(p, _)| p.as_bytes().to_vec()),
        );
    }
    Some(Arc::new(move |key: &[u8]| {
        patterns
            .iter()
            .any(|p| relis::glob::glob_match(p, key, false))
    }))
}

/// One ACL LOG entry.
#[derive(Clone, Debug)]
pub struct LogEntry {
    /// Times this denial happened (grouped within a minute).
    pub count: u64,
    /// `command`, `key`, `channel` or `auth`.
    pub reason: &'static str,
    /// `toplevel`, `multi` or `lua`.
    pub context: &'static str,
    /// The command, key or channel (`AUTH` / `HELLO` for auth failures).
    pub object: String,
    /// The user (for auth failures, the name tried).
    pub username: String,
    /// Unix milliseconds of the latest occurrence.
    pub ctime_ms: i64,
    /// The client's CLIENT LIST line.
    pub client_info: String,
}

/// Most entries ACL LOG keeps by default (Redis's `acllog-max-len`).
pub const LOG_MAX: usize = 128;
/// Occurrences closer than this are counted in one entry (Redis's grouping window).
const LOG_GROUPING_MS: i64 = 60_000;

/// Every user, and the log of denials.
#[derive(Debug)]
pub struct Acl {
    users: RwLock<BTreeMap<String, Arc<User>>>,
    log: Mutex<VecDeque<LogEntry>>,
    /// Most entries ACL LOG keeps (`acllog-max-len`): older ones go as new ones come.
    pub log_max: std::sync::atomic::AtomicUsize,
}

/// The error of a bad ACL SETUSER.
pub fn setuser_error(op: &str, e: RuleError) -> String {
    format!("Error in ACL SETUSER modifier '{op}': {}", e.message())
}

/// Joins the arguments of a selector spread over several words (`(+get` `~x)`) as Redis's
/// `ACLMergeSelectorArguments` does.
///
/// # Errors
/// `Unmatched parenthesis in acl selector starting at '...'.`
pub fn merge_selectors(args: &[String]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut open: Option<String> = None;
    for a in args {
        if let Some(cur) = &mut open {
            cur.push(' ');
            cur.push_str(a);
            if a.ends_with(')') {
                out.push(open.take().unwrap_or_default());
            }
        } else if a.starts_with('(') && !a.ends_with(')') {
            open = Some(a.clone());
        } else {
            out.push(a.clone());
        }
    }
    if let Some(cur) = open {
        return Err(format!(
            "Unmatched parenthesis in acl selector starting at '{cur}'."
        ));
    }
    Ok(out)
}

impl Acl {
    /// The users of a fresh server: `default`, on, nopass, everything allowed (`requirepass`
    /// then gives it a password).
    pub fn new(requirepass: &str) -> Acl {
        let acl = Acl {
            users: RwLock::new(BTreeMap::new()),
            log: Mutex::new(VecDeque::new()),
            log_max: std::sync::atomic::AtomicUsize::new(LOG_MAX),
        };
        acl.users
            .write()
            .insert("default".into(), User::new("default", default_state()));
        acl.set_requirepass(requirepass);
        acl
    }

    /// Redis's `ACLUpdateDefaultUserPassword`: `requirepass` is the default user's only
    /// password (or `nopass` when empty).
    pub fn set_requirepass(&self, pass: &str) {
        let u = self.default_user();
        let mut s = u.state();
        s.passwords.clear();
        s.nopass = false;
        if pass.is_empty() {
            s.nopass = true;
        } else {
            s.passwords.push(sha256_hex(pass.as_bytes()));
        }
        u.set(s);
    }

    /// The `default` user.
    pub fn default_user(&self) -> Arc<User> {
        self.users
            .read()
            .get("default")
            .cloned()
            .expect("the default user always exists")
    }

    /// The user named `name`.
    pub fn user(&self, name: &[u8]) -> Option<Arc<User>> {
        let name = std::str::from_utf8(name).ok()?;
        self.users.read().get(name).cloned()
    }

    /// Every user name, sorted.
    pub fn names(&self) -> Vec<String> {
        self.users.read().keys().cloned().collect()
    }

    /// Every user with its state, sorted by name.
    pub fn list(&self) -> Vec<(String, UserState)> {
        self.users
            .read()
            .iter()
            .map(|(n, u)| (n.clone(), u.state()))
            .collect()
    }

    /// ACL SETUSER: applies `rules` to the user (created if new) all or nothing.
    ///
    /// # Errors
    /// The complete error text, without `ERR `.
    pub fn setuser(&self, name: &str, rules: &[String]) -> Result<(), String> {
        if name.contains(' ') || name.contains('\0') {
            return Err("Usernames can't contain spaces or null characters".into());
        }
        let rules = merge_selectors(rules)?;
        let existing = self.users.read().get(name).cloned();
        let mut state = existing.as_ref().map(|u| u.state()).unwrap_or_default();
        for r in &rules {
            state.apply(r).map_err(|e| setuser_error(r, e))?;
        }
        match existing {
            Some(u) => u.set(state),
            None => {
                self.users
                    .write()
                    .insert(name.to_string(), User::new(name, state));
            }
        }
        Ok(())
    }

    /// ACL DELUSER of one user; returns it if it existed (its clients must be disconnected).
    pub fn remove(&self, name: &[u8]) -> Option<Arc<User>> {
        let name = std::str::from_utf8(name).ok()?;
        self.users.write().remove(name)
    }

    /// Replaces every user at once (ACL LOAD, the ACL file at start-up): the users named in
    /// `users` get their new state; `default` keeps its identity (its connections stay) and
    /// gets the default state when the file does not name it. Returns the users dropped.
    pub fn replace(&self, users: Vec<(String, UserState)>) -> Vec<Arc<User>> {
        let mut map = self.users.write();
        let old = std::mem::take(&mut *map);
        let mut dropped: BTreeMap<String, Arc<User>> = old;
        for (name, state) in users {
            // Connections stay attached to a user that survives a reload.
            let u = match dropped.remove(&name) {
                Some(u) => {
                    u.set(state);
                    u
                }
                None => User::new(&name, state),
            };
            map.insert(name, u);
        }
        if !map.contains_key("default") {
            let u = dropped
                .remove("default")
                .unwrap_or_else(|| User::new("default", default_state()));
            u.set(default_state());
            map.insert("default".into(), u);
        }
        dropped.into_values().collect()
    }

    /// Records a denial in ACL LOG, grouping it with a recent equal one.
    pub fn log(&self, mut e: LogEntry) {
        let mut log = self.log.lock();
        let found = log.iter().take(10).position(|o| {
            o.reason == e.reason
                && o.context == e.context
                && o.object == e.object
                && o.username == e.username
                && e.ctime_ms - o.ctime_ms <= LOG_GROUPING_MS
        });
        if let Some(i) = found {
            if let Some(mut o) = log.remove(i) {
                o.count += 1;
                o.ctime_ms = e.ctime_ms;
                o.client_info = std::mem::take(&mut e.client_info);
                log.push_front(o);
            }
            return;
        }
        log.push_front(e);
        log.truncate(self.log_max.load(std::sync::atomic::Ordering::Relaxed));
    }

    /// The newest `n` log entries.
    pub fn log_entries(&self, n: usize) -> Vec<LogEntry> {
        self.log.lock().iter().take(n).cloned().collect()
    }

    /// ACL LOG RESET.
    pub fn log_reset(&self) {
        self.log.lock().clear();
    }
}

/// The default user's state before `requirepass` and the ACL file: `on nopass ~* &* +@all`.
pub fn default_state() -> UserState {
    let mut s = UserState::new();
    for r in ["on", "nopass", "~*", "&*", "+@all"] {
        s.apply(r).expect("valid default rules");
    }
    s
}

/// Parses ACL file text (`user <name> <rules...>` lines) into users, as ACL LOAD and start-up
/// read it. `source` names the file in errors. Like Redis 7.0, blank lines are skipped and
/// there are no comments.
///
/// # Errors
/// Every problem, worded and joined as Redis's `ACLLoadFromFile` does.
pub fn parse_file(text: &str, source: &str) -> Result<Vec<(String, UserState)>, String> {
    let mut users: Vec<(String, UserState)> = Vec::new();
    let mut errors = String::new();
    for (i, line) in text.split('\n').enumerate() {
        let line = line.trim_matches(|c| matches!(c, ' ' | '\t' | '\r'));
        if line.is_empty() {
            continue;
        }
        let n = i + 1;
        let Some(words) = crate::args::split_config_line(line) else {
            errors.push_str(&format!("{source}:{n}: unbalanced quotes in acl line. "));
            continue;
        };
        if words.len() < 2 || words[0] != "user" {
            errors.push_str(&format!(
                "{source}:{n} should start with user keyword followed by the username. "
            ));
            continue;
        }
        let name = &words[1];
        if users.iter().any(|(u, _)| u == name) {
            errors.push_str(&format!(
                "WARNING: Duplicate user '{name}' found on line {n}. "
            ));
            continue;
        }
        let rules = match merge_selectors(&words[2..]) {
            Ok(r) => r,
            Err(e) => {
                errors.push_str(&format!("{source}:{n}: {e} "));
                continue;
            }
        };
        let mut state = UserState::new();
        let mut bad = false;
        for r in &rules {
            if let Err(e) = state.apply(r) {
                errors.push_str(&format!(
                    "{source}:{n}: Error in applying operation '{r}': {}. ",
                    e.message()
                ));
                bad = true;
                break;
            }
        }
        if !bad {
            users.push((name.clone(), state));
        }
    }
    if errors.is_empty() {
        Ok(users)
    } else {
        errors.push_str(
            "WARNING: ACL errors detected, no change to the previously active ACL rules was performed",
        );
        Err(errors)
    }
}

/// An I/O error as C's `strerror` words it (Rust adds ` (os error N)`).
pub fn io_error_text(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// The ACL file's text: one `user` line per user, as ACL LIST prints them.
pub fn render_file(acl: &Acl) -> String {
    let mut out = String::new();
    for (name, s) in acl.list() {
        out.push_str(&format!("user {name} {}\n", s.describe()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::Table;

    /// A new user; the command table is built first (selectors are sized by its index).
    fn fresh() -> UserState {
        Table::get();
        UserState::new()
    }

    fn user(rules: &[&str]) -> UserState {
        let mut s = fresh();
        for r in rules {
            s.apply(r).unwrap();
        }
        s
    }

    #[test]
    fn describe_as_redis_7_0() {
        assert_eq!(user(&[]).describe(), "off resetchannels -@all");
        assert_eq!(default_state().describe(), "on nopass ~* &* +@all");
        assert_eq!(
            user(&["+@all", "-get", "~k*", "%R~r*", "&ch*"]).describe(),
            "off ~k* %R~r* resetchannels &ch* +@all -get"
        );
        assert_eq!(
            user(&["+@read"]).describe(),
            "off resetchannels -@all +@read"
        );
        assert_eq!(
            user(&["+@hash", "+@string"]).describe(),
            "off resetchannels -@all +@string +@hash"
        );
        assert_eq!(
            user(&["+@all", "-@dangerous"]).describe(),
            "off resetchannels +@all -@dangerous"
        );
        assert_eq!(
            user(&["+@all", "-@hash", "-@string"]).describe(),
            "off resetchannels +@all -@string -@hash"
        );
        assert_eq!(
            user(&["nocommands", "+select|0", "+select|1"]).describe(),
            "off resetchannels -@all +select|0 +select|1"
        );
        assert_eq!(
            user(&["+@all", "+select|0"]).describe(),
            "off resetchannels +@all"
        );
        assert_eq!(user(&["~a", "~a"]).describe(), "off ~a resetchannels -@all");
        assert_eq!(
            user(&["reset"]).describe(),
            "off sanitize-payload resetchannels -@all"
        );
    }

    #[test]
    fn rule_errors() {
        let mut s = fresh();
        assert_eq!(s.apply("foo"), Err(RuleError::Syntax));
        assert_eq!(s.apply("+nosuch"), Err(RuleError::Unknown));
        assert_eq!(s.apply("+@nosuch"), Err(RuleError::Unknown));
        assert_eq!(s.apply("-select|0"), Err(RuleError::Unknown));
        assert_eq!(s.apply("+config|nosuch"), Err(RuleError::Unknown));
        assert_eq!(s.apply("+config|get|x"), Err(RuleError::SubcommandFirstArg));
        assert_eq!(s.apply("%X~a"), Err(RuleError::Syntax));
        assert_eq!(s.apply("#abc"), Err(RuleError::BadHash));
        assert_eq!(s.apply("<nosuch"), Err(RuleError::NoSuchPassword));
        s.apply("allkeys").unwrap();
        assert_eq!(s.apply("~foo"), Err(RuleError::KeysAfterAll));
        s.apply("allchannels").unwrap();
        assert_eq!(s.apply("&foo"), Err(RuleError::ChannelsAfterAll));
    }

    #[test]
    fn passwords() {
        let s = user(&["on", ">p1", ">p2", "<p1"]);
        assert!(!s.password_ok(b"p1"));
        assert!(s.password_ok(b"p2"));
        assert!(!user(&[">p2"]).password_ok(b"p2"), "a disabled user");
        assert!(user(&["on", "nopass"]).password_ok(b"anything"));
        assert_eq!(
            sha256_hex(b"pw"),
            "30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4"
        );
    }

    #[test]
    fn sql_commands_carry_the_sql_category() {
        let mut n = 0;
        for s in &Table::get().specs {
            if !(s.name.starts_with("sql.") || s.name.starts_with("redisql.")) {
                continue;
            }
            n += 1;
            assert!(s.acl.has(Cats::SQL), "{} lacks @sql", s.name);
            if s.has(Flags::WRITE) {
                assert!(s.acl.has(Cats::WRITE), "{} writes without @write", s.name);
            }
            if s.has(Flags::READONLY) {
                assert!(s.acl.has(Cats::READ), "{} reads without @read", s.name);
            }
        }
        assert!(n > 30);
    }

    #[test]
    fn key_access_follows_the_selectors_that_allow_the_command() {
        let table = Table::get();
        let (idx, spec) = table.lookup(b"sql.query").unwrap();
        let u = User::new(
            "u",
            user(&[
                "on",
                "~app:*",
                "%R~ro:*",
                "%W~wo:*",
                "+sql.query",
                "(+get ~sel:*)",
                "(+sql.query %R~both:*)",
            ]),
        );
        let a = u.key_access(idx, spec.flags);
        assert!(a.may_read(b"app:1") && a.may_write(b"app:1"));
        assert!(a.may_read(b"ro:1") && !a.may_write(b"ro:1"));
        assert!(!a.may_read(b"wo:1") && a.may_write(b"wo:1"));
        // A selector that does not allow SQL.QUERY shows nothing through it.
        assert!(!a.may_read(b"sel:1") && !a.may_write(b"sel:1"));
        assert!(a.may_read(b"both:1") && !a.may_write(b"both:1"));
        assert!(!a.may_read(b"other") && !a.is_all());
        // Allowed only for some first arguments: no key.
        let f = User::new("f", user(&["on", "~x:*", "+sql.query|select"]));
        assert!(!f.key_access(idx, spec.flags).may_read(b"x:1"));
        // allkeys in a selector that allows the command: every key, no predicate.
        let all = User::new("a", user(&["on", "~x:*", "+@read", "(+sql.query allkeys)"]));
        assert!(all.key_access(idx, spec.flags).is_all());
        assert!(User::new("d", default_state())
            .key_access(idx, spec.flags)
            .is_all());
        // %R~* is a pattern, not allkeys: reads everything, writes nothing.
        let r = User::new("r", user(&["on", "%R~*", "+@all"]));
        let a = r.key_access(idx, spec.flags);
        assert!(a.may_read(b"anything") && !a.may_write(b"anything"));
    }

    #[test]
    fn selectors_merge() {
        let args: Vec<String> = ["on", "(+get", "~x*)", "(+set)"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            merge_selectors(&args).unwrap(),
            vec!["on", "(+get ~x*)", "(+set)"]
        );
        assert_eq!(
            merge_selectors(&["(+get".to_string()]).unwrap_err(),
            "Unmatched parenthesis in acl selector starting at '(+get'."
        );
    }
}
