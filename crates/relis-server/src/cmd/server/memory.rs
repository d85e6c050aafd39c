//! MEMORY USAGE / STATS / DOCTOR / MALLOC-STATS / PURGE / HELP — memory introspection.
//! <https://redis.io/commands/memory-usage/>
//!
//! Relis keeps the data in its database file, not in memory, so the numbers mean:
//! - USAGE: the bytes of the file a key takes (its rows and index entries, see
//!   `relis::Reader::memory_usage`), sampling collections as Redis does (SAMPLES, default 5,
//!   0 for all).
//! - STATS: the process's memory in Redis's layout: `total.allocated` is what INFO reports as
//!   `used_memory` (the resident set), `startup.allocated` the same at start-up, the allocator
//!   figures those of the process's allocator ([`Allocator`]: mimalloc's in relis-server,
//!   glibc's `mallinfo2` where no other is installed); the per-database hash table overheads
//!   are 0 (keys live in the file's B-trees); Relis adds the file's size at the end.
//! - DOCTOR: Redis's report, from those numbers; MALLOC-STATS: Redis's answer for an allocator
//!   other than jemalloc; PURGE: returns freed memory to the system (mimalloc's and glibc's,
//!   on this thread and the writer's: `state::release_free_memory_everywhere`).

use crate::args::Args;
use crate::cmd::{Cx, Parsed, ReadCmd, Spec};
use crate::error::CmdError;
use crate::state::rss_bytes;
use bytes::Bytes;
use resp::Frame;
use std::sync::atomic::Ordering;

/// MEMORY's declaration.
pub const SPEC: Spec = Spec {
    name: "memory",
    arity: -2,
    acl: Spec::acl(&["slow"]),
    group: "server",
    since: "4.0.0",
    summary: "A container for memory diagnostics commands",
    complexity: "Depends on subcommand.",
    // In the order redis-server lists them (COMMAND INFO, COMMAND DOCS).
    subcommands: &[
        SPEC_PURGE,
        SPEC_HELP,
        SPEC_DOCTOR,
        SPEC_MALLOC_STATS,
        SPEC_USAGE,
        SPEC_STATS,
    ],
    ..Spec::BASE
};

/// MEMORY PURGE's declaration.
pub const SPEC_PURGE: Spec = Spec {
    name: "memory|purge",
    arity: 2,
    acl: Spec::acl(&["slow"]),
    group: "server",
    since: "4.0.0",
    summary: "Ask the allocator to release memory",
    complexity: "Depends on how much memory is allocated, could be slow",
    tips: &["request_policy:all_shards", "response_policy:all_succeeded"],
    parse: Memory::parse_purge,
    ..Spec::BASE
};

/// MEMORY HELP's declaration.
pub const SPEC_HELP: Spec = Spec {
    name: "memory|help",
    arity: 2,
    flags: Spec::flags(&["loading", "stale"]),
    acl: Spec::acl(&["slow"]),
    group: "server",
    since: "4.0.0",
    summary: "Show helpful text about the different subcommands",
    parse: Memory::parse_help,
    ..Spec::BASE
};

/// MEMORY DOCTOR's declaration.
pub const SPEC_DOCTOR: Spec = Spec {
    name: "memory|doctor",
    arity: 2,
    acl: Spec::acl(&["slow"]),
    group: "server",
    since: "4.0.0",
    summary: "Outputs memory problems report",
    tips: &[
        "nondeterministic_output",
        "request_policy:all_shards",
        "response_policy:special",
    ],
    parse: Memory::parse_doctor,
    ..Spec::BASE
};

/// MEMORY MALLOC-STATS's declaration.
pub const SPEC_MALLOC_STATS: Spec = Spec {
    name: "memory|malloc-stats",
    arity: 2,
    acl: Spec::acl(&["slow"]),
    group: "server",
    since: "4.0.0",
    summary: "Show allocator internal stats",
    complexity: "Depends on how much memory is allocated, could be slow",
    tips: &[
        "nondeterministic_output",
        "request_policy:all_shards",
        "response_policy:special",
    ],
    parse: Memory::parse_malloc_stats,
    ..Spec::BASE
};

/// MEMORY USAGE's declaration.
pub const SPEC_USAGE: Spec = Spec {
    name: "memory|usage",
    arity: -3,
    flags: Spec::flags(&["readonly"]),
    acl: Spec::acl(&["read", "slow"]),
    keys: (2, 2, 1),
    group: "server",
    since: "4.0.0",
    summary: "Estimate the memory usage of a key",
    complexity: "O(N) where N is the number of samples.",
    key_flags: Spec::key_flags(&["RO"]),
    parse: Memory::parse_usage,
    ..Spec::BASE
};

/// MEMORY STATS's declaration.
pub const SPEC_STATS: Spec = Spec {
    name: "memory|stats",
    arity: 2,
    acl: Spec::acl(&["slow"]),
    group: "server",
    since: "4.0.0",
    summary: "Show memory usage details",
    tips: &[
        "nondeterministic_output",
        "request_policy:all_shards",
        "response_policy:special",
    ],
    parse: Memory::parse_stats,
    ..Spec::BASE
};

/// Redis 7.0's MEMORY HELP lines.
const HELP: &[&str] = &[
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
];

/// Redis's OBJ_COMPUTE_SIZE_DEF_SAMPLES.
const DEFAULT_SAMPLES: u64 = 5;

/// A MEMORY subcommand.
#[derive(Debug, PartialEq, Eq)]
pub enum Memory {
    /// HELP.
    Help,
    /// USAGE key, sampling at most this many elements (`None`: all).
    Usage(Bytes, Option<u64>),
    /// STATS.
    Stats,
    /// DOCTOR.
    Doctor,
    /// MALLOC-STATS.
    MallocStats,
    /// PURGE.
    Purge,
}

impl Memory {
    fn plain(args: &mut Args, m: Memory) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::read(m)
    }

    fn parse_help(args: &mut Args) -> Result<Parsed, CmdError> {
        Memory::plain(args, Memory::Help)
    }

    fn parse_stats(args: &mut Args) -> Result<Parsed, CmdError> {
        Memory::plain(args, Memory::Stats)
    }

    fn parse_doctor(args: &mut Args) -> Result<Parsed, CmdError> {
        Memory::plain(args, Memory::Doctor)
    }

    fn parse_malloc_stats(args: &mut Args) -> Result<Parsed, CmdError> {
        Memory::plain(args, Memory::MallocStats)
    }

    fn parse_purge(args: &mut Args) -> Result<Parsed, CmdError> {
        Memory::plain(args, Memory::Purge)
    }

    fn parse_usage(args: &mut Args) -> Result<Parsed, CmdError> {
        let (key, samples) = usage_args(args)?;
        Parsed::read(Memory::Usage(key, samples))
    }
}

/// `key [SAMPLES count]`, the option repeatable (the last wins), as Redis parses it; SAMPLES 0
/// means every element.
fn usage_args(args: &mut Args) -> Result<(Bytes, Option<u64>), CmdError> {
    let key = args.next()?;
    let mut samples = Some(DEFAULT_SAMPLES);
    while !args.is_empty() {
        if args.remaining() >= 2 && args.eat("samples") {
            let n = args.next_i64()?;
            if n < 0 {
                return Err(CmdError::Syntax);
            }
            samples = (n > 0).then_some(n as u64);
        } else {
            return Err(CmdError::Syntax);
        }
    }
    Ok((key, samples))
}

/// The process's global allocator as INFO names and counts it (`mem_allocator`,
/// `allocator_allocated`, `allocator_active`). The binary that installs one says so once
/// ([`use_allocator`]; relis-server's `main.rs` installs mimalloc); a process that does not (the
/// tests, a program embedding the server) allocates through glibc.
#[derive(Clone, Copy)]
pub struct Allocator {
    /// Its name and version, as INFO's `mem_allocator` shows it.
    pub name: fn() -> String,
    /// Bytes handed out, and bytes it holds from the system.
    pub figures: fn() -> (u64, u64),
}

static ALLOCATOR: std::sync::OnceLock<Allocator> = std::sync::OnceLock::new();

/// Names the process's global allocator (see [`Allocator`]); the first call counts.
pub fn use_allocator(allocator: Allocator) {
    let _ = ALLOCATOR.set(allocator);
}

/// The process's allocator (glibc's unless [`use_allocator`] named another).
pub fn allocator() -> Allocator {
    ALLOCATOR.get().copied().unwrap_or(GLIBC)
}

/// glibc's allocator: `mallinfo2`'s bytes in use and held (arena and mapped chunks).
pub const GLIBC: Allocator = Allocator {
    name: || "libc".into(),
    figures: || {
        // SAFETY: mallinfo2 only reads the allocator's counters.
        let mi = unsafe { libc::mallinfo2() };
        (
            (mi.uordblks + mi.hblkhd) as u64,
            (mi.arena + mi.hblkhd) as u64,
        )
    },
};

/// mimalloc, relis-server's allocator. A release build of mimalloc keeps no count of the bytes
/// handed out (its statistics are a debug build's), only of the memory it has committed: both
/// figures are that, so `allocator_frag_ratio` reads 1 and `mem_fragmentation_ratio` compares
/// the resident set with what the allocator holds.
pub const MIMALLOC: Allocator = Allocator {
    name: || {
        // SAFETY: a constant of the library: major, two digits of minor, two of patch.
        let v = unsafe { libmimalloc_sys::mi_version() };
        format!("mimalloc-{}.{}.{}", v / 10000, v / 100 % 100, v % 100)
    },
    figures: || {
        let mut commit = 0usize;
        // SAFETY: every out-parameter may be null; `commit` outlives the call.
        unsafe {
            libmimalloc_sys::mi_process_info(
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut commit,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        (commit as u64, commit as u64)
    },
};

/// The process's memory as INFO memory and MEMORY STATS report it, gathered as Redis's
/// `getMemoryOverheadData` gathers its own: `total` is the resident set (INFO `used_memory`),
/// the allocator figures its [`Allocator`]'s, the overhead what start-up, clients' buffers and
/// the script and function caches hold; the rest is the dataset (SQLite's caches).
pub struct Figures {
    /// The resident set now.
    pub total: u64,
    /// The largest resident set seen.
    pub peak: u64,
    /// The resident set once the server had started.
    pub startup: u64,
    /// Clients' query and output buffers.
    pub clients_normal: u64,
    /// EVAL scripts' bodies.
    pub lua_caches: u64,
    /// Function libraries' code.
    pub functions_caches: u64,
    /// Bytes handed out by the allocator.
    pub allocated: u64,
    /// Bytes the allocator holds from the system (arena and mapped chunks).
    pub active: u64,
    /// Clients connected (for the doctor's per-client average).
    pub clients: u64,
    /// EVAL scripts cached.
    pub cached_scripts: u64,
}

impl Figures {
    /// The figures now.
    pub fn now(server: &crate::state::Shared) -> Figures {
        let total = rss_bytes();
        let peak = server.sampler.note_memory(total);
        let (_, lua_caches, cached_scripts) = server.scripting.memory();
        let (mut clients_normal, mut clients) = (0, 0);
        for c in server.clients.lock().values() {
            clients_normal += c.qbuf.load(Ordering::Relaxed) + c.omem.load(Ordering::Relaxed);
            clients += 1;
        }
        let (allocated, active) = (allocator().figures)();
        Figures {
            total,
            peak,
            startup: server.startup_memory,
            clients_normal,
            lua_caches,
            functions_caches: server.scripting.functions_memory(),
            allocated,
            active,
            clients,
            cached_scripts,
        }
    }

    /// Start-up, clients and caches.
    pub fn overhead(&self) -> u64 {
        self.startup + self.clients_normal + self.lua_caches + self.functions_caches
    }

    /// What is not overhead.
    pub fn dataset(&self) -> u64 {
        self.total.saturating_sub(self.overhead())
    }

    /// The resident set grown since start-up (at least 1, a divisor).
    pub fn net(&self) -> u64 {
        self.total.saturating_sub(self.startup).max(1)
    }

    /// `a / b`, with `b` at least 1.
    pub fn ratio(a: u64, b: u64) -> f64 {
        a as f64 / b.max(1) as f64
    }
}

/// The figures with the keyspace's size, for STATS and DOCTOR.
struct Overhead {
    f: Figures,
    keys: u64,
    dbs: Vec<u32>,
}

impl Overhead {
    fn gather(cx: &Cx, r: &relis::Reader<'_>) -> Result<Overhead, CmdError> {
        let keyspace = r.keyspace_info()?;
        Ok(Overhead {
            f: Figures::now(&cx.server),
            keys: keyspace.iter().map(|k| k.keys.max(0) as u64).sum(),
            dbs: keyspace
                .iter()
                .filter(|k| k.keys > 0)
                .map(|k| k.db)
                .collect(),
        })
    }
}

/// Redis's `getMemoryDoctorReport`, over Relis's numbers. Relis calls an instance "empty"
/// when it holds no key (its resident set is never below Redis's 5 MB threshold).
fn doctor(o: &Overhead) -> String {
    let (keys, o) = (o.keys, &o.f);
    let mut reports = Vec::new();
    if keys == 0 {
        return "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting.\n".into();
    }
    if Figures::ratio(o.peak, o.total) > 1.5 {
        reports.push(" * Peak memory: In the past this instance used more than 150% the memory that is currently using. The allocator is normally not able to release memory after a peak, so you can expect to see a big fragmentation ratio, however this is actually harmless and is only due to the memory peak, and if the Redis instance Resident Set Size (RSS) is currently bigger than expected, the memory will be used as soon as you fill the Redis instance with more data. If the memory peak was only occasional and you want to try to reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is to shutdown and restart the instance.\n\n");
    }
    if Figures::ratio(o.active, o.allocated) > 1.1 && o.active - o.allocated > 10 << 20 {
        reports.push(" * High allocator fragmentation: This instance has an allocator external fragmentation greater than 1.1. This problem is usually due either to a large peak memory (check if there is a peak memory entry above in the report) or may result from a workload that causes the allocator to fragment memory a lot. You can try enabling 'activedefrag' config option.\n\n");
    }
    if o.clients > 0 && o.clients_normal / o.clients > 1024 * 200 {
        reports.push(" * Big client buffers: The clients output buffers in this instance are greater than 200K per client (on average). This may result from different causes, like Pub/Sub clients subscribed to channels bot not receiving data fast enough, so that data piles on the Redis instance output buffer, or clients sending commands with large replies or very large sequences of commands in the same pipeline. Please use the CLIENT LIST command in order to investigate the issue if it causes problems in your instance, or to understand better why certain clients are using a big amount of memory.\n\n");
    }
    if o.cached_scripts > 1000 {
        reports.push(" * Many scripts: There seem to be many cached scripts in this instance (more than 1000). This may be because scripts are generated and `EVAL`ed, instead of being parameterized (with KEYS and ARGV), `SCRIPT LOAD`ed and `EVALSHA`ed. Unless `SCRIPT FLUSH` is called periodically, the scripts' caches may end up consuming most of your memory.\n\n");
    }
    if reports.is_empty() {
        return "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n".into();
    }
    let mut s =
        String::from("Sam, I detected a few issues in this Redis instance memory implants:\n\n");
    for r in reports {
        s.push_str(r);
    }
    s.push_str("I'm here to keep you safe, Sam. I want to help you.\n");
    s
}

fn stats(o: &Overhead, cx: &Cx) -> Frame {
    let (keys, dbs, o) = (o.keys, &o.dbs, &o.f);
    let int = |n: u64| Frame::Integer(i64::try_from(n).unwrap_or(i64::MAX));
    let name = |s: &str| Frame::Bulk(Bytes::copy_from_slice(s.as_bytes()));
    let mut m: Vec<(Frame, Frame)> = vec![
        (name("peak.allocated"), int(o.peak)),
        (name("total.allocated"), int(o.total)),
        (name("startup.allocated"), int(o.startup)),
        (name("replication.backlog"), int(0)),
        (name("clients.slaves"), int(0)),
        (name("clients.normal"), int(o.clients_normal)),
        (name("cluster.links"), int(0)),
        (name("aof.buffer"), int(0)),
        (name("lua.caches"), int(o.lua_caches)),
        (name("functions.caches"), int(o.functions_caches)),
    ];
    for db in dbs {
        // Keys live in the file's B-trees: no in-memory hash tables to account for.
        m.push((
            name(&format!("db.{db}")),
            Frame::Map(vec![
                (name("overhead.hashtable.main"), int(0)),
                (name("overhead.hashtable.expires"), int(0)),
                (name("overhead.hashtable.slot-to-keys"), int(0)),
            ]),
        ));
    }
    let dataset = o.dataset();
    let frag = |a: u64, b: u64| Frame::Double(Figures::ratio(a, b));
    let diff = |a: u64, b: u64| Frame::Integer(a as i64 - b as i64);
    m.extend([
        (name("overhead.total"), int(o.overhead())),
        (name("keys.count"), int(keys)),
        (
            name("keys.bytes-per-key"),
            int(o.net().checked_div(keys).unwrap_or(0)),
        ),
        (name("dataset.bytes"), int(dataset)),
        (
            name("dataset.percentage"),
            Frame::Double(dataset as f64 * 100.0 / o.net() as f64),
        ),
        (
            name("peak.percentage"),
            Frame::Double(o.total as f64 * 100.0 / o.peak.max(1) as f64),
        ),
        (name("allocator.allocated"), int(o.allocated)),
        (name("allocator.active"), int(o.active)),
        (name("allocator.resident"), int(o.total)),
        (
            name("allocator-fragmentation.ratio"),
            frag(o.active, o.allocated),
        ),
        (
            name("allocator-fragmentation.bytes"),
            diff(o.active, o.allocated),
        ),
        (name("allocator-rss.ratio"), frag(o.total, o.active)),
        (name("allocator-rss.bytes"), diff(o.total, o.active)),
        (name("rss-overhead.ratio"), frag(o.total, o.total)),
        (name("rss-overhead.bytes"), diff(o.total, o.total)),
        (name("fragmentation"), frag(o.total, o.allocated)),
        (name("fragmentation.bytes"), diff(o.total, o.allocated)),
        // Relis's own: the data file with its WAL.
        (name("relis.file.bytes"), int(file_bytes(cx))),
    ]);
    Frame::Map(m)
}

/// The data file's size with its WAL (0 in memory).
fn file_bytes(cx: &Cx) -> u64 {
    let Some(path) = cx.server.db.path() else {
        return 0;
    };
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    [path.to_path_buf(), wal.into()]
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum()
}

impl ReadCmd for Memory {
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError> {
        Ok(match self {
            Memory::Help => crate::cmd::server::help("MEMORY", HELP),
            Memory::Usage(key, samples) => match r.memory_usage(cx.db, key, *samples)? {
                Some(n) => Frame::Integer(i64::try_from(n).unwrap_or(i64::MAX)),
                None => Frame::Null,
            },
            Memory::Stats => stats(&Overhead::gather(cx, r)?, cx),
            Memory::Doctor => verbatim(doctor(&Overhead::gather(cx, r)?)),
            Memory::MallocStats => verbatim("Stats not supported for the current allocator".into()),
            Memory::Purge => {
                crate::state::release_free_memory_everywhere(&cx.server.db);
                Frame::Simple(Bytes::from_static(b"OK"))
            }
        })
    }
}

/// A text reply: verbatim (`txt`) under RESP3, bulk under RESP2.
fn verbatim(s: String) -> Frame {
    Frame::Verbatim {
        format: *b"txt",
        data: Bytes::from(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &[&str]) -> Result<(Bytes, Option<u64>), CmdError> {
        let mut args = Args::new(
            "memory|usage",
            line.iter()
                .map(|a| Bytes::copy_from_slice(a.as_bytes()))
                .collect(),
        );
        usage_args(&mut args)
    }

    #[test]
    fn usage_options_are_checked_as_redis_checks_them() {
        let k = Bytes::from_static(b"k");
        assert_eq!(parse(&["k"]), Ok((k.clone(), Some(5))));
        assert_eq!(parse(&["k", "samples", "0"]), Ok((k.clone(), None)));
        assert_eq!(
            parse(&["k", "SAMPLES", "1", "samples", "2"]),
            Ok((k, Some(2)))
        );
        assert_eq!(parse(&["k", "samples"]).err(), Some(CmdError::Syntax));
        assert_eq!(parse(&["k", "samples", "-1"]).err(), Some(CmdError::Syntax));
        assert_eq!(parse(&["k", "bla", "1"]).err(), Some(CmdError::Syntax));
        assert_eq!(
            parse(&["k", "samples", "x"]).err(),
            Some(CmdError::NotInteger)
        );
    }
}
