//! DEBUG <subcommand> [args] — debugging aids. <https://redis.io/commands/debug/>
//!
//! Refused unless `enable-debug-command` is `yes` (or `local`, for loopback clients), as Redis
//! 7.0 refuses it: the check is the dispatcher's (`client.rs`), before authentication.
//!
//! What Relis does with each subcommand:
//! - `SLEEP s` holds the writer for `s` seconds (every write waits, as every command waits in
//!   Redis; reads go on on the readers). `SET-ACTIVE-EXPIRE 0|1` stops or restarts the
//!   background expiry sweep. `POPULATE n [prefix] [size]` creates `prefix:i` = `value:i`
//!   (padded with zero bytes or cut to `size`), skipping keys that exist.
//! - `DIGEST` and `DIGEST-VALUE key...` compute Redis's own digest (SHA1 mixing, per type as
//!   Redis's `xorObjectDigest`), so a Relis dataset and a Redis one holding the same data give
//!   the same digest. Over the PostgreSQL backend DIGEST reads the shared keyspace in one
//!   snapshot (every live row, its stored DUMP payload decoded) and digests the same values
//!   the same way, so a node and a SQLite server holding the same data agree; DIGEST-VALUE
//!   and OBJECT declare their keys, as any command does there.
//! - `RELOAD` checkpoints the WAL into the file and reads the file alone on a new connection,
//!   as a restart would: OK only if its keyspace has the live keyspace's digest (Relis does not
//!   swap its live connections; what RELOAD checks in Redis, that the saved file gives the data
//!   back, is what this checks). In memory there is no file: an error. Over PostgreSQL
//!   nothing needs saving or reloading (every write is committed there); RELOAD reads every
//!   live row in one snapshot and answers OK when each stored value loads.
//! - `OBJECT key`: Redis's line, where `at` is the key's stable id and `serializedlength` the
//!   bytes the key takes in the file (MEMORY USAGE); no quicklist fields.
//! - `ERROR text`, `LOG text`, `PROTOCOL type` as Redis (under RESP3 `attrib` and `push` send
//!   their frame before the reply).
//! - `SEGFAULT`, `PANIC`, `ASSERT`, `OOM` log and abort the process (the data is safe in the
//!   file). `STRINGMATCH-TEST` runs Relis's glob matcher over random patterns, bounded.
//! - Knobs of Redis internals Relis does not have answer OK and change nothing:
//!   `CHANGE-REPL-ID`, `QUICKLIST-PACKED-THRESHOLD`, `SET-SKIP-CHECKSUM-VALIDATION`,
//!   `PAUSE-CRON`, `AOF-FLUSH-SLEEP`, `REPLYBUFFER`, `SET-DISABLE-DENY-SCRIPTS`,
//!   `DROP-CLUSTER-PACKET-FILTER`.
//! - Reports on Redis's in-memory structures, and RESTART, CRASH-AND-RECOVER, LOADAOF,
//!   LEAK, MALLCTL, REPLICATE, CLUSTERLINK, answer an error saying Relis has no such thing.

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Cx, Parsed, ReadCmd, Spec, WriteCmd};
use crate::error::CmdError;
use bytes::Bytes;
use resp::{Frame, Protocol};
use std::time::Duration;

/// DEBUG's declaration.
pub const SPEC: Spec = Spec {
    name: "debug",
    arity: -2,
    flags: Spec::flags(&["admin", "noscript", "loading", "stale"]),
    acl: Spec::acl(&["admin", "slow", "dangerous"]),
    group: "server",
    since: "1.0.0",
    summary: "A container for debugging commands",
    complexity: "Depends on subcommand.",
    parse,
    ..Spec::BASE
};

/// The setting that must allow DEBUG, as Redis names it in its refusal.
pub const SETTING: &str = "enable-debug-command";

/// Relis's DEBUG HELP (Redis's wording, for what Relis does).
const HELP: &[&str] = &[
    "DIGEST",
    "    Output a hex signature representing the current DB content.",
    "DIGEST-VALUE <key> [<key> ...]",
    "    Output a hex signature of the values of all the specified keys.",
    "ERROR <string>",
    "    Return a Redis protocol error with <string> as message. Useful for clients",
    "    unit tests to simulate Redis errors.",
    "LOG <message>",
    "    Write <message> to the server log.",
    "OBJECT <key>",
    "    Show low level info about `key` and associated value.",
    "PANIC",
    "    Crash the server simulating a panic.",
    "POPULATE <count> [<prefix>] [<size>]",
    "    Create <count> string keys named key:<num>. If <prefix> is specified then",
    "    it is used instead of the 'key' prefix.",
    "PROTOCOL <type>",
    "    Reply with a test value of the specified type. <type> can be: string,",
    "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
    "    true, false.",
    "SEGFAULT",
    "    Crash the server with sigsegv.",
    "RELOAD [option ...]",
    "    Checkpoint the data file and read it back on a new connection: OK if it holds",
    "    the live dataset. Redis's MERGE, NOFLUSH and NOSAVE options change nothing.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Setting it to 0 disables expiring keys in background when they are not",
    "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
    "    default.",
    "SLEEP <seconds>",
    "    Stop the server for <seconds>. Decimals allowed.",
    "STRINGMATCH-TEST",
    "    Run a fuzz tester against the stringmatchlen() function.",
];

/// Subcommands that tune Redis internals Relis does not have: accepted, nothing to do.
const NO_OPS: &[(&str, usize)] = &[
    ("change-repl-id", 0),
    ("quicklist-packed-threshold", 1),
    ("set-skip-checksum-validation", 1),
    ("pause-cron", 1),
    ("aof-flush-sleep", 1),
    ("set-disable-deny-scripts", 1),
    ("drop-cluster-packet-filter", 1),
];

/// Subcommands about Redis's own structures or processes, which Relis does not have.
const NOT_HERE: &[&str] = &[
    "restart",
    "crash-and-recover",
    "loadaof",
    "leak",
    "mallctl",
    "mallctl-str",
    "replicate",
    "clusterlink",
    "sdslen",
    "listpack",
    "quicklist",
    "htstats",
    "htstats-key",
    "structsize",
    "client-eviction",
    "config-rewrite-force-all",
    "replybuffer",
];

/// A DEBUG subcommand.
#[derive(Debug, PartialEq)]
pub enum Debug {
    /// HELP.
    Help,
    /// A fixed reply (ERROR, no-ops, refusals, PROTOCOL).
    Reply(Frame),
    /// LOG message.
    Log(Bytes),
    /// PROTOCOL type: (RESP2 reply, RESP3 reply).
    Protocol(Frame, Frame),
    /// PROTOCOL attrib / push: a RESP3 frame sent before the reply.
    Preceded(Frame, Frame),
    /// SLEEP: hold the writer this long.
    Sleep(Duration),
    /// SET-ACTIVE-EXPIRE.
    ActiveExpire(bool),
    /// POPULATE count prefix size.
    Populate(u64, Bytes, Option<usize>),
    /// DIGEST.
    Digest,
    /// DIGEST-VALUE keys.
    DigestValue(Vec<Bytes>),
    /// OBJECT key.
    Object(Bytes),
    /// SEGFAULT, PANIC, ASSERT, OOM.
    Crash(&'static str),
    /// STRINGMATCH-TEST.
    StringMatchTest,
    /// RELOAD [options].
    Reload,
}

fn wrong(sub: &[u8]) -> CmdError {
    CmdError::debug_subcommand(sub)
}

/// C's `strtod` on the longest numeric prefix (0 when there is none, or it is no finite
/// number), as Redis reads SLEEP.
fn strtod_prefix(s: &[u8]) -> f64 {
    let (v, _, _) = crate::args::strtod(s);
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

/// C's `atoi`: an optional sign and leading digits, 0 otherwise.
fn atoi(s: &[u8]) -> i64 {
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let n = digits
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .fold(0i64, |n, d| {
            n.saturating_mul(10).saturating_add(i64::from(d - b'0'))
        });
    if neg {
        -n
    } else {
        n
    }
}

/// A positive (or zero) integer, with Redis's `getPositiveLongFromObjectOrReply` error.
fn positive(b: &[u8]) -> Result<u64, CmdError> {
    relis::parse_i64(b)
        .and_then(|n| u64::try_from(n).ok())
        .ok_or(CmdError::NOT_POSITIVE)
}

fn protocol(kind: &[u8]) -> Result<Debug, CmdError> {
    let bulk = |s: &'static str| Frame::Bulk(Bytes::from_static(s.as_bytes()));
    let ints = || (0..3).map(Frame::Integer).collect::<Vec<_>>();
    let same = |f: Frame| Ok(Debug::Protocol(f.clone(), f));
    match kind.to_ascii_lowercase().as_slice() {
        b"string" => same(bulk("Hello World")),
        b"integer" => same(Frame::Integer(12345)),
        // Redis's own value (not pi).
        #[allow(clippy::approx_constant)]
        b"double" => Ok(Debug::Protocol(bulk("3.141"), Frame::Double(3.141))),
        b"bignum" => Ok(Debug::Protocol(
            bulk("1234567999999999999999999999999999999"),
            Frame::BigNumber(Bytes::from_static(b"1234567999999999999999999999999999999")),
        )),
        b"null" => same(Frame::Null),
        b"array" => same(Frame::Array(ints())),
        b"set" => Ok(Debug::Protocol(Frame::Array(ints()), Frame::Set(ints()))),
        b"map" => Ok(Debug::Protocol(
            Frame::Array(
                (0..3)
                    .flat_map(|i| [Frame::Integer(i), Frame::Integer(i64::from(i == 1))])
                    .collect(),
            ),
            Frame::Map(
                (0..3)
                    .map(|i| (Frame::Integer(i), Frame::Boolean(i == 1)))
                    .collect(),
            ),
        )),
        b"verbatim" => Ok(Debug::Protocol(
            bulk("This is a verbatim\nstring"),
            Frame::Verbatim {
                format: *b"txt",
                data: Bytes::from_static(b"This is a verbatim\nstring"),
            },
        )),
        b"true" => Ok(Debug::Protocol(Frame::Integer(1), Frame::Boolean(true))),
        b"false" => Ok(Debug::Protocol(Frame::Integer(0), Frame::Boolean(false))),
        // Under RESP3 a frame goes out before the reply (see the ConnCmd below).
        b"attrib" => Ok(Debug::Preceded(
            Frame::Attribute(vec![(
                bulk("key-popularity"),
                Frame::Array(vec![bulk("key:123"), Frame::Integer(90)]),
            )]),
            bulk("Some real reply following the attribute"),
        )),
        b"push" => Ok(Debug::Preceded(
            Frame::Push(vec![bulk("server-cpu-usage"), Frame::Integer(42)]),
            bulk("Some real reply following the push reply"),
        )),
        _ => Err(CmdError::DEBUG_PROTOCOL),
    }
}

fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
    let sub = args.next()?;
    let rest = args.rest();
    let lower = String::from_utf8_lossy(&sub).to_ascii_lowercase();
    let n = rest.len();
    let arg = |i: usize| rest[i].clone();
    let d = match (lower.as_str(), n) {
        ("help", 0) => Debug::Help,
        ("error", 1) => Debug::Reply(Frame::Error(arg(0))),
        ("log", 1) => Debug::Log(arg(0)),
        ("protocol", 1) => protocol(&rest[0])?,
        ("sleep", 1) => {
            let secs = strtod_prefix(&rest[0]).max(0.0);
            Debug::Sleep(Duration::from_secs_f64(secs.min(1e9)))
        }
        ("set-active-expire", 1) => Debug::ActiveExpire(atoi(&rest[0]) != 0),
        ("populate", 1..=3) => {
            let count = positive(&rest[0])?;
            let prefix = if n > 1 {
                arg(1)
            } else {
                Bytes::from_static(b"key")
            };
            let size = if n > 2 {
                Some(usize::try_from(positive(&rest[2])?).unwrap_or(usize::MAX))
            } else {
                None
            };
            Debug::Populate(count, prefix, size)
        }
        ("digest", 0) => Debug::Digest,
        ("digest-value", _) => Debug::DigestValue(rest),
        ("object", 1) => Debug::Object(arg(0)),
        ("segfault", 0) => Debug::Crash("SEGFAULT"),
        ("panic", 0) => Debug::Crash("PANIC"),
        ("assert", _) => Debug::Crash("ASSERT"),
        ("oom", 0) => Debug::Crash("OOM"),
        ("stringmatch-test", 0) => Debug::StringMatchTest,
        ("reload", _) => {
            // Redis's options choose how its RDB file is saved and merged back; Relis's file is
            // always the whole data, so each is accepted and changes nothing.
            for o in &rest {
                if ![&b"merge"[..], b"noflush", b"nosave"]
                    .contains(&o.to_ascii_lowercase().as_slice())
                {
                    return Err(CmdError::DEBUG_RELOAD_OPTION);
                }
            }
            Debug::Reload
        }
        (name, n) if NO_OPS.contains(&(name, n)) => {
            Debug::Reply(Frame::Simple(Bytes::from_static(b"OK")))
        }
        (name, _) if NOT_HERE.contains(&name) => {
            Debug::Reply(CmdError::debug_not_here(&lower).to_frame())
        }
        _ => return Err(wrong(&sub)),
    };
    match d {
        Debug::Sleep(_) | Debug::Populate(..) => Parsed::write(d),
        Debug::Reload | Debug::Preceded(..) => Parsed::conn(d),
        d => Parsed::read(d),
    }
}

/// Redis's `xorDigest`: XORs SHA1(`data`) into `digest`.
fn xor_digest(digest: &mut [u8; 20], data: &[u8]) {
    let hash = sha1_smol::Sha1::from(data).digest().bytes();
    for (d, h) in digest.iter_mut().zip(hash) {
        *d ^= h;
    }
}

/// Redis's `mixDigest`: XORs SHA1(`data`) in, then replaces the digest by its own SHA1.
fn mix_digest(digest: &mut [u8; 20], data: &[u8]) {
    xor_digest(digest, data);
    *digest = sha1_smol::Sha1::from(&digest[..]).digest().bytes();
}

/// Redis's `xorObjectDigest`: `value` (and whether it expires) into `digest`. Both backends
/// digest the value a DUMP would serialize, so the same data gives the same digest on each.
fn value_digest(value: &relis::Value, expires: bool, digest: &mut [u8; 20]) {
    use relis::Value;
    // Redis's type codes.
    let code: u32 = match value {
        Value::String(_) => 0,
        Value::List(_) => 1,
        Value::Set(_) => 2,
        Value::ZSet(_) => 3,
        Value::Hash(_) => 4,
        Value::Stream(_) => 6,
    };
    mix_digest(digest, &code.to_be_bytes());
    match value {
        Value::String(v) => mix_digest(digest, v),
        Value::List(items) => {
            for e in items {
                mix_digest(digest, e);
            }
        }
        Value::Set(members) => {
            for m in members {
                xor_digest(digest, m);
            }
        }
        Value::ZSet(pairs) => {
            for (m, score) in pairs {
                let mut e = [0u8; 20];
                mix_digest(&mut e, m);
                mix_digest(&mut e, resp::format_double(*score).as_bytes());
                xor_digest(digest, &e);
            }
        }
        Value::Hash(pairs) => {
            for (f, v) in pairs {
                let mut e = [0u8; 20];
                mix_digest(&mut e, f);
                mix_digest(&mut e, v);
                xor_digest(digest, &e);
            }
        }
        // Redis 7.0 mixes each entry in order: its id as `ms.seq`, then its fields and values
        // (consumer groups are not part of the digest).
        Value::Stream(stream) => {
            for e in &stream.entries {
                mix_digest(digest, format!("{}.{}", e.id.ms, e.id.seq).as_bytes());
                for f in &e.fields {
                    mix_digest(digest, f);
                }
            }
        }
    }
    if expires {
        xor_digest(digest, b"!!expire!!");
    }
}

/// One key's part of the dataset digest: its name, then its value.
fn key_digest(key: &[u8], value: &relis::Value, expires: bool) -> [u8; 20] {
    let mut d = [0u8; 20];
    mix_digest(&mut d, key);
    value_digest(value, expires, &mut d);
    d
}

/// Redis's `computeDatasetDigest` as it goes: each non-empty database's index, then each of
/// its keys (XORed in, so in any order).
#[derive(Default)]
struct DatasetDigest {
    out: [u8; 20],
}

impl DatasetDigest {
    /// A database with keys begins (the same data in another database differs).
    fn database(&mut self, db: u32) {
        mix_digest(&mut self.out, &db.to_be_bytes());
    }

    fn key(&mut self, key: &[u8], value: &relis::Value, expires: bool) {
        xor_digest(&mut self.out, &key_digest(key, value, expires));
    }
}

fn hex_string(d: &[u8; 20]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

fn hex(d: &[u8; 20]) -> Frame {
    Frame::Simple(Bytes::from(hex_string(d)))
}

/// Redis's `computeDatasetDigest`: every database, every key.
fn dataset_digest(r: &relis::Reader<'_>) -> Result<[u8; 20], CmdError> {
    let mut digest = DatasetDigest::default();
    for db in 0..r.databases() {
        let mut first = true;
        r.each_dumped::<CmdError>(db, |key, d| {
            if first {
                digest.database(db);
                first = false;
            }
            digest.key(key, &d.value, d.expire_at.is_some());
            Ok(())
        })?;
    }
    Ok(digest.out)
}

/// The shared keyspace's digest over the PostgreSQL backend at `url`, as of one snapshot (the
/// rows `--export` reads), each stored value decoded as a node restores it: DEBUG DIGEST, and
/// DEBUG RELOAD's check that every stored value loads.
fn shared_digest(url: &str) -> Result<[u8; 20], relis::Error> {
    let mut pg = relis::postgres::PgKeyspace::connect(url).map_err(|e| Failed::from(e).0)?;
    let mut sink = SharedDigest {
        digest: DatasetDigest::default(),
        restore: crate::postgres_codec().restore,
        db: 0,
    };
    pg.export(crate::state::unix_ms(), &mut sink)
        .map_err(|Failed(e)| e)?;
    Ok(sink.digest.out)
}

/// Why [`shared_digest`] stopped.
struct Failed(relis::Error);

impl From<relis::postgres::Error> for Failed {
    fn from(e: relis::postgres::Error) -> Failed {
        Failed(relis::Error::Storage(format!("PostgreSQL: {e}")))
    }
}

/// [`shared_digest`]'s receiver of the rows.
struct SharedDigest {
    digest: DatasetDigest,
    restore: fn(&[u8]) -> Option<relis::Value>,
    db: u32,
}

impl relis::postgres::ExportSink for SharedDigest {
    type Error = Failed;

    fn function(&mut self, _name: &str, _code: &[u8]) -> Result<(), Failed> {
        Ok(())
    }

    fn database(&mut self, db: u32, _keys: u64, _expires: u64) -> Result<(), Failed> {
        // Only databases with live keys are listed.
        self.db = db;
        self.digest.database(db);
        Ok(())
    }

    fn row(&mut self, key: &[u8], payload: &[u8], expire_at: Option<i64>) -> Result<(), Failed> {
        let value = (self.restore)(payload).ok_or_else(|| {
            Failed(relis::Error::Storage(format!(
                "the stored value of key '{}' of database {} does not load",
                String::from_utf8_lossy(key),
                self.db
            )))
        })?;
        self.digest.key(key, &value, expire_at.is_some());
        Ok(())
    }
}

/// DEBUG DIGEST over the PostgreSQL backend: the shared keyspace's digest ([`shared_digest`]),
/// from the connection's task (the engine's scratch holds only a group's keys). Refused inside
/// MULTI (`dispatch::refused_on_postgres`).
struct DigestOnPostgres;

impl ConnCmd for DigestOnPostgres {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let url = c.server.config.read().backend.clone();
            let d = tokio::task::spawn_blocking(move || shared_digest(&url))
                .await
                .map_err(|_| CmdError::from(relis::Error::Closed))??;
            Ok(hex(&d))
        })
    }
}

/// STRINGMATCH-TEST: random patterns against random strings through Relis's glob matcher (as
/// Redis fuzzes its `stringmatchlen`), each match bounded as client patterns are.
fn stringmatch_test() -> Frame {
    const ALPHABET: &[u8] = b"ab*?[]^-\\";
    for _ in 0..10_000 {
        let pat: Vec<u8> = (0..rand::random_range(0..32))
            .map(|_| ALPHABET[rand::random_range(0..ALPHABET.len())])
            .collect();
        let text: Vec<u8> = (0..rand::random_range(0..32))
            .map(|_| ALPHABET[rand::random_range(0..ALPHABET.len())])
            .collect();
        let _ = relis::glob::glob_match(&pat, &text, false);
    }
    Frame::Simple(Bytes::from_static(
        b"Apparently Redis did not crash: test passed",
    ))
}

impl ReadCmd for Debug {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        Ok(match self {
            Debug::Help => crate::cmd::server::help("DEBUG", HELP),
            Debug::Reply(f) => f.clone(),
            Debug::Log(msg) => {
                tracing::warn!("DEBUG LOG: {}", String::from_utf8_lossy(msg));
                Frame::Simple(Bytes::from_static(b"OK"))
            }
            Debug::Protocol(two, three) => match cx.proto {
                Protocol::Resp2 => two.clone(),
                Protocol::Resp3 => three.clone(),
            },
            Debug::ActiveExpire(on) => {
                cx.server.db.set_active_expire(*on);
                Frame::Simple(Bytes::from_static(b"OK"))
            }
            Debug::Digest => hex(&dataset_digest(r)?),
            // Over PostgreSQL its keys are declared (`dispatch::declared_keys`), so the group
            // loaded them.
            Debug::DigestValue(keys) => {
                let mut out = Vec::with_capacity(keys.len());
                for k in keys {
                    let mut d = [0u8; 20];
                    if let Some(dumped) = r.dump_value(cx.db, k)? {
                        value_digest(&dumped.value, dumped.expire_at.is_some(), &mut d);
                    }
                    out.push(hex(&d));
                }
                Frame::Array(out)
            }
            Debug::Object(key) => {
                let Some(info) = r.object(cx.db, key)? else {
                    return Err(CmdError::NoSuchKey);
                };
                let accessed = cx
                    .server
                    .touched
                    .last(cx.db, key)
                    .map_or(info.meta.mtime, |t| t.max(info.meta.mtime));
                let size = r.memory_usage(cx.db, key, None)?.unwrap_or(0);
                Frame::Simple(Bytes::from(format!(
                    "Value at:0x{:x} refcount:1 encoding:{} serializedlength:{size} lru:{} lru_seconds_idle:{}",
                    info.meta.id,
                    info.encoding,
                    (accessed / 1000) & ((1 << 24) - 1),
                    (r.now_ms() - accessed).max(0) / 1000,
                )))
            }
            Debug::Crash(what) => {
                tracing::error!("DEBUG {what}: the server stops at a client's request");
                std::process::abort();
            }
            Debug::StringMatchTest => stringmatch_test(),
            Debug::Sleep(_) | Debug::Populate(..) => unreachable!("writes"),
            Debug::Reload | Debug::Preceded(..) => unreachable!("connection commands"),
        })
    }

    fn on_postgres(&self) -> Option<Box<dyn ConnCmd>> {
        matches!(self, Debug::Digest).then(|| Box::new(DigestOnPostgres) as Box<dyn ConnCmd>)
    }
}

impl WriteCmd for Debug {
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        match self {
            Debug::Sleep(d) => std::thread::sleep(*d),
            Debug::Populate(count, prefix, size) => populate(w, cx.db, 0..*count, prefix, *size)?,
            _ => unreachable!("reads"),
        }
        Ok(Frame::Simple(Bytes::from_static(b"OK")))
    }

    fn on_postgres(&self) -> Option<Box<dyn ConnCmd>> {
        match self {
            Debug::Populate(count, prefix, size) => Some(Box::new(PopulateOnPostgres {
                count: *count,
                prefix: prefix.clone(),
                size: *size,
            })),
            _ => None,
        }
    }
}

/// POPULATE's keys `prefix:i` for `i` in `range`, each `value:i` (padded with zero bytes or cut
/// to `size`), skipping keys that exist.
fn populate(
    w: &mut relis::Writer<'_>,
    db: u32,
    range: std::ops::Range<u64>,
    prefix: &[u8],
    size: Option<usize>,
) -> Result<(), CmdError> {
    let nx = relis::SetOptions {
        cond: relis::SetCond::IfAbsent,
        ..Default::default()
    };
    for i in range {
        let key = populated_key(prefix, i);
        let mut value = format!("value:{i}").into_bytes();
        if let Some(size) = size {
            value.resize(size, 0);
        }
        // NX: POPULATE leaves keys of any type alone.
        if w.meta(db, &key)?.is_none() {
            w.set(db, &key, &value, nx)?;
        }
    }
    Ok(())
}

fn populated_key(prefix: &[u8], i: u64) -> Vec<u8> {
    let mut key = prefix.to_vec();
    key.extend_from_slice(format!(":{i}").as_bytes());
    key
}

/// Keys per write job of [`PopulateOnPostgres`] (each an advisory lock of its group).
const POPULATE_BATCH: u64 = 500;

/// DEBUG POPULATE over the PostgreSQL backend, where a job writes only the keys it declares:
/// write jobs of [`POPULATE_BATCH`] keys, each declaring its keys (so not one atomic command,
/// as in Redis: another client may see part of the keys before the reply). Refused inside MULTI
/// (`dispatch::refused_on_postgres`).
struct PopulateOnPostgres {
    count: u64,
    prefix: Bytes,
    size: Option<usize>,
}

impl ConnCmd for PopulateOnPostgres {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let (db, origin) = (c.db, c.cx().client_id);
            let mut from = 0;
            while from < self.count {
                let to = self.count.min(from + POPULATE_BATCH);
                let keys = (from..to)
                    .map(|i| (db, populated_key(&self.prefix, i)))
                    .collect();
                let (prefix, size) = (self.prefix.clone(), self.size);
                let (tx, rx) = tokio::sync::oneshot::channel();
                c.server.db.write_async_keys(
                    keys,
                    move |w| {
                        w.set_origin(origin);
                        w.atomic(|w| populate(w, db, from..to, &prefix, size))
                    },
                    move |r| {
                        let _ = tx.send(r);
                    },
                );
                rx.await
                    .map_err(|_| CmdError::from(relis::Error::Closed))?
                    .map_err(CmdError::from)??;
                from = to;
            }
            Ok(Frame::Simple(Bytes::from_static(b"OK")))
        })
    }
}

impl ConnCmd for Debug {
    /// PROTOCOL attrib/push (a frame before the reply), and RELOAD: the file, read alone after
    /// a full checkpoint (as a restart would read it), must hold the live keyspace: their
    /// digests are compared.
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            if let Debug::Preceded(first, reply) = *self {
                // An attribute is dropped for RESP2 (Redis sends none); a push is refused there.
                return match (c.proto, first) {
                    (Protocol::Resp2, Frame::Push(_)) => Err(CmdError::DEBUG_RESP2),
                    (Protocol::Resp2, _) => Ok(reply),
                    (Protocol::Resp3, first) => {
                        c.pushed.push(first);
                        Ok(reply)
                    }
                };
            }
            if c.server.db.backend() == "postgres" {
                // Nothing to save or reload: every write is in PostgreSQL already. What a reload
                // would prove, that the stored data loads back, is checked: every live row of
                // the shared keyspace is read in one snapshot and decoded.
                let url = c.server.config.read().backend.clone();
                tokio::task::spawn_blocking(move || shared_digest(&url))
                    .await
                    .map_err(|_| CmdError::from(relis::Error::Closed))?
                    .map_err(CmdError::debug_reload)?;
                return Ok(Frame::Simple(Bytes::from_static(b"OK")));
            }
            let db = c.server.db.clone();
            let (live, stored) = tokio::task::spawn_blocking(move || {
                db.verify_file(|r| {
                    dataset_digest(r).map_err(|e| relis::Error::Storage(e.message()))
                })
            })
            .await
            .map_err(|_| CmdError::from(relis::Error::Closed))?
            .map_err(CmdError::debug_reload)?;
            if live != stored {
                return Err(CmdError::debug_reload_digest(
                    &hex_string(&stored),
                    &hex_string(&live),
                ));
            }
            tracing::warn!("DB reloaded by DEBUG RELOAD (the file holds the live keyspace)");
            Ok(Frame::Simple(Bytes::from_static(b"OK")))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_number_prefixes() {
        assert_eq!(strtod_prefix(b"0.25"), 0.25);
        assert_eq!(strtod_prefix(b"1x"), 1.0);
        assert_eq!(strtod_prefix(b"x"), 0.0);
        assert_eq!(atoi(b"1"), 1);
        assert_eq!(atoi(b"x"), 0);
        assert_eq!(atoi(b"-2z"), -2);
    }

    #[test]
    fn digests_mix_as_redis_does() {
        // mixDigest of nothing from zero: SHA1 of SHA1("") (XORed into zeros).
        let mut d = [0u8; 20];
        mix_digest(&mut d, b"");
        let inner = sha1_smol::Sha1::from(b"").digest().bytes();
        assert_eq!(d, sha1_smol::Sha1::from(&inner[..]).digest().bytes());
    }
}
