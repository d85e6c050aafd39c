//! INFO [section ...] — the server's state as `field:value` lines under `# Section` headings.
//! <https://redis.io/commands/info/>
//!
//! Sections, fields and layout are Redis 7.0's (CRLF line ends, a blank line between sections,
//! sections always in Redis's order whatever order they were asked in; `default`, `all`,
//! `everything`). Fields about Redis machinery Relis does not have (forks, AOF, replication
//! backlog, eviction) report what an idle Redis with that feature off reports. Relis adds
//! `relis_version` (server) and `relis_*` persistence fields about its SQLite file, each after
//! Redis's fields of its section (tests/observe.rs compares the names with a live
//! redis-server). `latencystats` reads the per-command histograms of [`crate::observe`]. RESP3
//! clients get a verbatim `txt` string.

use crate::args::{lower, Args};
use crate::client::Client;
use crate::cmd::server::memory::Figures;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec, Table};
use crate::error::CmdError;
use crate::state::{unix_ms, Shared};
use bytes::Bytes;
use resp::Frame;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use tokio::sync::oneshot;

/// INFO's declaration.
pub const SPEC: Spec = Spec {
    name: "info",
    arity: -1,
    flags: Spec::flags(&["loading", "stale"]),
    acl: Spec::acl(&["slow", "dangerous"]),
    group: "server",
    since: "1.0.0",
    summary: "Get information and statistics about the server",
    parse: Info::parse,
    tips: &[
        "nondeterministic_output",
        "request_policy:all_shards",
        "response_policy:special",
    ],
    ..Spec::BASE
};

/// Every section, in the order Redis prints them.
const SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "commandstats",
    "errorstats",
    "latencystats",
    "cluster",
    "keyspace",
];

/// What INFO with no argument (or `default`) prints.
const DEFAULT: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "errorstats",
    "cluster",
    "keyspace",
];

/// INFO with the sections to print.
#[derive(Debug, PartialEq)]
pub struct Info {
    sections: Vec<&'static str>,
}

impl Info {
    fn parse(args: &mut Args) -> Result<Parsed, CmdError> {
        Parsed::conn(Self::parse_args(args))
    }

    fn parse_args(args: &mut Args) -> Info {
        let asked: Vec<String> = args.rest().iter().map(|a| lower(a)).collect();
        let wanted = |s: &str| {
            asked.is_empty()
                || asked.iter().any(|a| {
                    a == s
                        || a == "all"
                        || a == "everything"
                        || (a == "default" && DEFAULT.contains(&s))
                })
        };
        let sections = if asked.is_empty() {
            DEFAULT.to_vec()
        } else {
            SECTIONS.iter().copied().filter(|s| wanted(s)).collect()
        };
        Info { sections }
    }
}

/// INFO's text for the arguments `args` (after the name), with the keyspace section from `r`:
/// what a script's `redis.call('INFO', ...)` gets (it runs on the writer, not on a connection).
///
/// # Errors
/// Storage errors reading the keyspace.
pub fn text_for(server: &Shared, r: &relis::Reader<'_>, args: Vec<Bytes>) -> relis::Result<String> {
    let info = Info::parse_args(&mut Args::new("info", args));
    let keyspace = if info.sections.contains(&"keyspace") {
        r.keyspace_info()?
    } else {
        Vec::new()
    };
    Ok(render(server, &info.sections, &keyspace))
}

impl ConnCmd for Info {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let keyspace = if self.sections.contains(&"keyspace") {
                let (tx, rx) = oneshot::channel();
                c.server.db.read_async(
                    |r| r.keyspace_info(),
                    move |res| {
                        let _ = tx.send(res);
                    },
                );
                rx.await
                    .map_err(|_| CmdError::from(relis::Error::Closed))?
                    .and_then(|r| r)?
            } else {
                Vec::new()
            };
            let text = render(&c.server, &self.sections, &keyspace);
            Ok(Frame::Verbatim {
                format: *b"txt",
                data: Bytes::from(text),
            })
        })
    }
}

/// Redis's `bytesToHuman`.
pub fn human(n: u64) -> String {
    let f = n as f64;
    const K: f64 = 1024.0;
    if n < 1024 {
        format!("{n}B")
    } else if f < K * K {
        format!("{:.2}K", f / K)
    } else if f < K * K * K {
        format!("{:.2}M", f / (K * K))
    } else if f < K * K * K * K {
        format!("{:.2}G", f / (K * K * K))
    } else if f < K * K * K * K * K {
        format!("{:.2}T", f / (K * K * K * K))
    } else {
        format!("{:.2}P", f / (K * K * K * K * K))
    }
}

fn total_system_memory() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let pages = unsafe { libc::sysconf(libc::_SC_PHYS_PAGES) };
    if pages > 0 {
        pages as u64 * crate::state::page_size()
    } else {
        0
    }
}

fn os_name() -> String {
    // SAFETY: uname fills the zeroed struct it is given; its fields are NUL-terminated.
    unsafe {
        let mut u: libc::utsname = std::mem::zeroed();
        if libc::uname(&mut u) != 0 {
            return std::env::consts::OS.to_string();
        }
        let field = |f: &[libc::c_char]| {
            std::ffi::CStr::from_ptr(f.as_ptr())
                .to_string_lossy()
                .into_owned()
        };
        format!(
            "{} {} {}",
            field(&u.sysname),
            field(&u.release),
            field(&u.machine)
        )
    }
}

/// CPU seconds (system, user) of the process (`RUSAGE_SELF`) or its children.
fn cpu(children: bool) -> (String, String) {
    // SAFETY: getrusage fills the zeroed struct it is given.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        let who = if children {
            libc::RUSAGE_CHILDREN
        } else {
            libc::RUSAGE_SELF
        };
        libc::getrusage(who, &mut ru);
        ru
    };
    let t = |tv: libc::timeval| format!("{}.{:06}", tv.tv_sec, tv.tv_usec);
    (t(ru.ru_stime), t(ru.ru_utime))
}

/// This process's replication id (a Relis server is always a master with no replicas).
fn replid() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        (0..40)
            .map(|_| char::from_digit(rand::random_range(0..16u32), 16).unwrap_or('0'))
            .collect()
    })
}

fn file_size(p: &std::path::Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

/// The INFO text for `sections` (already in Redis's order).
pub fn render(server: &Shared, sections: &[&str], keyspace: &[relis::KeyspaceInfo]) -> String {
    let mut out = String::new();
    for (i, section) in sections.iter().enumerate() {
        if i > 0 {
            out.push_str("\r\n");
        }
        let mut lines: Vec<(String, String)> = Vec::new();
        let mut kv = |k: &str, v: String| lines.push((k.to_string(), v));
        let title = match *section {
            "server" => {
                server_section(server, &mut kv);
                "Server"
            }
            "clients" => {
                clients_section(server, &mut kv);
                "Clients"
            }
            "memory" => {
                memory_section(server, &mut kv);
                "Memory"
            }
            "persistence" => {
                persistence_section(server, &mut kv);
                "Persistence"
            }
            "stats" => {
                stats_section(server, &mut kv);
                "Stats"
            }
            "replication" => {
                replication_section(server, &mut kv);
                "Replication"
            }
            "cpu" => {
                let (sys, user) = cpu(false);
                let (csys, cuser) = cpu(true);
                kv("used_cpu_sys", sys.clone());
                kv("used_cpu_user", user.clone());
                kv("used_cpu_sys_children", csys);
                kv("used_cpu_user_children", cuser);
                // Relis has no main thread; the process's figures stand in for it.
                kv("used_cpu_sys_main_thread", sys);
                kv("used_cpu_user_main_thread", user);
                "CPU"
            }
            "modules" => "Modules",
            "commandstats" => {
                commandstats_section(server, &mut kv);
                "Commandstats"
            }
            "errorstats" => {
                for (code, n) in server.errors.lock().iter() {
                    kv(&format!("errorstat_{code}"), format!("count={n}"));
                }
                "Errorstats"
            }
            "latencystats" => {
                latencystats_section(server, &mut kv);
                "Latencystats"
            }
            "cluster" => {
                kv("cluster_enabled", "0".into());
                "Cluster"
            }
            "keyspace" => {
                for k in keyspace.iter().filter(|k| k.keys > 0) {
                    kv(
                        &format!("db{}", k.db),
                        format!("keys={},expires={},avg_ttl=0", k.keys, k.expires),
                    );
                }
                "Keyspace"
            }
            _ => continue,
        };
        let _ = write!(out, "# {title}\r\n");
        for (k, v) in lines {
            let _ = write!(out, "{k}:{v}\r\n");
        }
    }
    out
}

type Kv<'a> = dyn FnMut(&str, String) + 'a;

fn server_section(server: &Shared, kv: &mut Kv<'_>) {
    let uptime = server.started.elapsed().as_secs();
    let now_us = unix_ms() * 1000;
    kv("redis_version", crate::REDIS_VERSION.into());
    kv("redis_git_sha1", "00000000".into());
    kv("redis_git_dirty", "0".into());
    kv("redis_build_id", "0".into());
    kv("redis_mode", "standalone".into());
    kv("os", os_name());
    kv("arch_bits", (usize::BITS).to_string());
    kv("monotonic_clock", "POSIX clock_gettime".into());
    kv("multiplexing_api", "epoll".into());
    kv("atomicvar_api", "c11-builtin".into());
    kv("gcc_version", "0.0.0".into());
    kv("process_id", std::process::id().to_string());
    kv("process_supervised", "no".into());
    kv("run_id", server.run_id.clone());
    kv("tcp_port", server.addr.port().to_string());
    kv("server_time_usec", now_us.to_string());
    kv("uptime_in_seconds", uptime.to_string());
    kv("uptime_in_days", (uptime / 86400).to_string());
    kv("hz", "10".into());
    kv("configured_hz", "10".into());
    kv(
        "lru_clock",
        ((unix_ms() / 1000) & ((1 << 24) - 1)).to_string(),
    );
    kv(
        "executable",
        std::env::current_exe()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
    );
    kv(
        "config_file",
        server
            .config_file
            .as_ref()
            .map(|p| {
                std::fs::canonicalize(p)
                    .unwrap_or_else(|_| p.clone())
                    .display()
                    .to_string()
            })
            .unwrap_or_default(),
    );
    kv("io_threads_active", "0".into());
    // Relis's own, after Redis's fields.
    kv("relis_version", crate::VERSION.into());
}

fn clients_section(server: &Shared, kv: &mut Kv<'_>) {
    let (n, max_qbuf, max_obuf) = {
        let clients = server.clients.lock();
        let q = clients
            .values()
            .map(|c| c.qbuf.load(Ordering::Relaxed))
            .max()
            .unwrap_or(0);
        let o = clients
            .values()
            .map(|c| c.omem.load(Ordering::Relaxed) + c.pubsub.pending() as u64)
            .max()
            .unwrap_or(0);
        (clients.len(), q, o)
    };
    kv("connected_clients", n.to_string());
    kv("cluster_connections", "0".into());
    kv("maxclients", server.config.read().maxclients.to_string());
    kv("client_recent_max_input_buffer", max_qbuf.to_string());
    kv("client_recent_max_output_buffer", max_obuf.to_string());
    let blocked = server.blocking.len().to_string();
    kv("blocked_clients", blocked.clone());
    kv(
        "tracking_clients",
        server.pubsub.tracking.counts().0.to_string(),
    );
    kv("clients_in_timeout_table", blocked);
}

fn memory_section(server: &Shared, kv: &mut Kv<'_>) {
    // Relis's memory is the process's: its data lives in SQLite's page cache and file, so the
    // resident set is `used_memory`; the allocator figures are glibc's, the overhead and the
    // dataset as MEMORY STATS counts them (crate::cmd::server::memory::Figures).
    let f = crate::cmd::server::memory::Figures::now(server);
    let (used, peak) = (f.total, f.peak);
    let total = total_system_memory();
    let (maxmemory, policy) = {
        let c = server.config.read();
        (
            c.get("maxmemory")
                .and_then(|v| crate::config::memory(&v).ok())
                .unwrap_or(0) as u64,
            c.get("maxmemory-policy").unwrap_or_default(),
        )
    };
    let (lua, scripts, cached) = server.scripting.memory();
    let (libraries, functions, functions_bytes) = {
        let libs = server.scripting.functions.libraries.lock();
        (
            libs.len(),
            libs.values().map(|l| l.functions.len()).sum::<usize>(),
            libs.values().map(|l| l.code.len() as u64).sum::<u64>(),
        )
    };
    kv("used_memory", used.to_string());
    kv("used_memory_human", human(used));
    kv("used_memory_rss", used.to_string());
    kv("used_memory_rss_human", human(used));
    kv("used_memory_peak", peak.to_string());
    kv("used_memory_peak_human", human(peak));
    kv(
        "used_memory_peak_perc",
        format!("{:.2}%", used as f64 * 100.0 / peak.max(1) as f64),
    );
    kv("used_memory_overhead", f.overhead().to_string());
    kv("used_memory_startup", f.startup.to_string());
    kv("used_memory_dataset", f.dataset().to_string());
    kv(
        "used_memory_dataset_perc",
        format!("{:.2}%", f.dataset() as f64 * 100.0 / f.net() as f64),
    );
    kv("allocator_allocated", f.allocated.to_string());
    kv("allocator_active", f.active.to_string());
    kv("allocator_resident", used.to_string());
    kv("total_system_memory", total.to_string());
    kv("total_system_memory_human", human(total));
    kv("used_memory_lua", lua.to_string());
    kv("used_memory_vm_eval", lua.to_string());
    kv("used_memory_lua_human", human(lua));
    kv("used_memory_scripts_eval", scripts.to_string());
    kv("number_of_cached_scripts", cached.to_string());
    kv("number_of_functions", functions.to_string());
    kv("number_of_libraries", libraries.to_string());
    // Functions run in the same Lua state as scripts: its memory is counted once, above.
    kv("used_memory_vm_functions", "0".into());
    kv("used_memory_vm_total", lua.to_string());
    kv("used_memory_vm_total_human", human(lua));
    kv("used_memory_functions", functions_bytes.to_string());
    kv(
        "used_memory_scripts",
        (scripts + functions_bytes).to_string(),
    );
    kv(
        "used_memory_scripts_human",
        human(scripts + functions_bytes),
    );
    kv("maxmemory", maxmemory.to_string());
    kv("maxmemory_human", human(maxmemory));
    kv("maxmemory_policy", policy);
    let ratio = |a: u64, b: u64| format!("{:.2}", Figures::ratio(a, b));
    let diff = |a: u64, b: u64| (a as i64 - b as i64).to_string();
    kv("allocator_frag_ratio", ratio(f.active, f.allocated));
    kv("allocator_frag_bytes", diff(f.active, f.allocated));
    kv("allocator_rss_ratio", ratio(used, f.active));
    kv("allocator_rss_bytes", diff(used, f.active));
    // The allocator's resident set is the process's: no other RSS to account for.
    kv("rss_overhead_ratio", "1.00".into());
    kv("rss_overhead_bytes", "0".into());
    kv("mem_fragmentation_ratio", ratio(used, f.allocated));
    kv("mem_fragmentation_bytes", diff(used, f.allocated));
    kv("mem_not_counted_for_evict", "0".into());
    kv("mem_replication_backlog", "0".into());
    kv("mem_total_replication_buffers", "0".into());
    kv("mem_clients_slaves", "0".into());
    kv("mem_clients_normal", f.clients_normal.to_string());
    kv("mem_cluster_links", "0".into());
    kv("mem_aof_buffer", "0".into());
    kv(
        "mem_allocator",
        (crate::cmd::server::memory::allocator().name)(),
    );
    kv("active_defrag_running", "0".into());
    kv("lazyfree_pending_objects", "0".into());
    kv("lazyfreed_objects", "0".into());
    // Relis's own: SQLite's caches, each one's size (the settings) and what it holds now. The
    // page caches share one pool (relis::CacheUse): added up they stay within their sizes.
    let caches = server.db.cache_use();
    kv("relis_writer_cache_size", caches.sizes.writer.to_string());
    kv("relis_writer_cache_used", caches.writer.to_string());
    kv("relis_writer_cache_used_human", human(caches.writer));
    kv(
        "relis_reader_connections",
        caches.reader_connections.to_string(),
    );
    kv("relis_reader_cache_size", caches.sizes.reader.to_string());
    kv("relis_reader_cache_used", caches.readers.to_string());
    kv("relis_reader_cache_used_human", human(caches.readers));
    kv("relis_mmap_size", caches.sizes.mmap.to_string());
    kv("relis_mmap_resident", caches.mapped.to_string());
    kv("relis_mmap_resident_human", human(caches.mapped));
}

fn persistence_section(server: &Shared, kv: &mut Kv<'_>) {
    let st = server.db.stats();
    let save = &server.save;
    let writes = st.writes.load(Ordering::Relaxed);
    let in_progress = save.in_progress.load(Ordering::Relaxed);
    let current = if in_progress {
        (unix_ms() - save.started_ms.load(Ordering::Relaxed)) / 1000
    } else {
        -1
    };
    let status = |ok: bool| if ok { "ok" } else { "err" }.to_string();
    kv(
        "loading",
        u8::from(server.replication.loading()).to_string(),
    );
    kv("async_loading", "0".into());
    kv("current_cow_peak", "0".into());
    kv("current_cow_size", "0".into());
    kv("current_cow_size_age", "0".into());
    kv("current_fork_perc", "0.00".into());
    kv("current_save_keys_processed", "0".into());
    kv("current_save_keys_total", "0".into());
    kv(
        "rdb_changes_since_last_save",
        writes
            .saturating_sub(save.writes_at_save.load(Ordering::Relaxed))
            .to_string(),
    );
    kv("rdb_bgsave_in_progress", u8::from(in_progress).to_string());
    kv(
        "rdb_last_save_time",
        server.lastsave.load(Ordering::Relaxed).to_string(),
    );
    kv(
        "rdb_last_bgsave_status",
        status(server.last_bgsave_ok.load(Ordering::Relaxed)),
    );
    kv(
        "rdb_last_bgsave_time_sec",
        save.last_bgsave_secs.load(Ordering::Relaxed).to_string(),
    );
    kv("rdb_current_bgsave_time_sec", current.to_string());
    kv("rdb_saves", save.saves.load(Ordering::Relaxed).to_string());
    kv("rdb_last_cow_size", "0".into());
    let (loaded, expired) = server.replication.load.last_load();
    kv("rdb_last_load_keys_expired", expired.to_string());
    kv("rdb_last_load_keys_loaded", loaded.to_string());
    kv("aof_enabled", "0".into());
    kv("aof_rewrite_in_progress", "0".into());
    kv("aof_rewrite_scheduled", "0".into());
    kv("aof_last_rewrite_time_sec", "-1".into());
    kv("aof_current_rewrite_time_sec", "-1".into());
    kv("aof_last_bgrewrite_status", "ok".into());
    kv("aof_rewrites", "0".into());
    kv("aof_rewrites_consecutive_failures", "0".into());
    kv("aof_last_write_status", "ok".into());
    kv("aof_last_cow_size", "0".into());
    kv("module_fork_in_progress", "0".into());
    kv("module_fork_last_cow_size", "0".into());
    if server.replication.loading() {
        for (k, v) in server.replication.load.fields(unix_ms()) {
            kv(k, v);
        }
    }
    // Relis's own: where the data lives and how the writer is doing.
    let path = server.db.path().map(|p| p.to_path_buf());
    kv(
        "relis_db_file",
        path.as_ref()
            .map_or(":memory:".to_string(), |p| p.display().to_string()),
    );
    let (size, wal) = path.as_ref().map_or((0, 0), |p| {
        let mut w = p.as_os_str().to_owned();
        w.push("-wal");
        (file_size(p), file_size(std::path::Path::new(&w)))
    });
    kv("relis_db_file_size", size.to_string());
    kv("relis_db_file_size_human", human(size));
    kv("relis_wal_file_size", wal.to_string());
    kv("relis_durability", server.db.durability().name().into());
    kv(
        "relis_commits",
        st.commits.load(Ordering::Relaxed).to_string(),
    );
    kv("relis_writes", writes.to_string());
    kv(
        "relis_failed_commits",
        st.failed_commits.load(Ordering::Relaxed).to_string(),
    );
}

fn stats_section(server: &Shared, kv: &mut Kv<'_>) {
    let s = &server.stats;
    let n = |a: &AtomicU64| a.load(Ordering::Relaxed).to_string();
    let (ops, in_kbps, out_kbps) = server.sampler.rates();
    kv(
        "total_connections_received",
        n(&s.total_connections_received),
    );
    kv("total_commands_processed", n(&s.total_commands_processed));
    kv("instantaneous_ops_per_sec", ops.to_string());
    kv("total_net_input_bytes", n(&s.net_input_bytes));
    kv("total_net_output_bytes", n(&s.net_output_bytes));
    kv("total_net_repl_input_bytes", "0".into());
    kv("total_net_repl_output_bytes", "0".into());
    kv("instantaneous_input_kbps", format!("{in_kbps:.2}"));
    kv("instantaneous_output_kbps", format!("{out_kbps:.2}"));
    kv("instantaneous_input_repl_kbps", "0.00".into());
    kv("instantaneous_output_repl_kbps", "0.00".into());
    kv("rejected_connections", n(&s.rejected_connections));
    kv("sync_full", "0".into());
    kv("sync_partial_ok", "0".into());
    kv("sync_partial_err", "0".into());
    kv("expired_keys", n(&server.db.stats().expired_keys));
    kv("expired_stale_perc", "0.00".into());
    kv("expired_time_cap_reached_count", "0".into());
    kv("expire_cycle_cpu_milliseconds", "0".into());
    kv("evicted_keys", "0".into());
    kv("evicted_clients", "0".into());
    kv("total_eviction_exceeded_time", "0".into());
    kv("current_eviction_exceeded_time", "0".into());
    kv("keyspace_hits", n(&s.keyspace_hits));
    kv("keyspace_misses", n(&s.keyspace_misses));
    let (channels, patterns, shard) = server.pubsub.counts();
    kv("pubsub_channels", channels.to_string());
    kv("pubsub_patterns", patterns.to_string());
    kv("pubsubshard_channels", shard.to_string());
    kv("latest_fork_usec", "0".into());
    kv("total_forks", "0".into());
    kv("migrate_cached_sockets", "0".into());
    kv("slave_expires_tracked_keys", "0".into());
    kv("active_defrag_hits", "0".into());
    kv("active_defrag_misses", "0".into());
    kv("active_defrag_key_hits", "0".into());
    kv("active_defrag_key_misses", "0".into());
    kv("total_active_defrag_time", "0".into());
    kv("current_active_defrag_time", "0".into());
    let (_, keys, items, prefixes) = server.pubsub.tracking.counts();
    kv("tracking_total_keys", keys.to_string());
    kv("tracking_total_items", items.to_string());
    kv("tracking_total_prefixes", prefixes.to_string());
    kv("unexpected_error_replies", "0".into());
    kv("total_error_replies", n(&s.total_error_replies));
    kv("dump_payload_sanitizations", "0".into());
    kv("total_reads_processed", n(&s.total_reads_processed));
    kv("total_writes_processed", n(&s.total_writes_processed));
    kv("io_threaded_reads_processed", "0".into());
    kv("io_threaded_writes_processed", "0".into());
    kv("reply_buffer_shrinks", "0".into());
    kv("reply_buffer_expands", "0".into());
}

fn replication_section(server: &Shared, kv: &mut Kv<'_>) {
    let read_only = server.config.read().get("replica-read-only").as_deref() == Some("yes");
    if let Some(fields) = server.replication.info(read_only) {
        for (k, v) in fields {
            kv(k, v);
        }
        return;
    }
    kv("role", "master".into());
    kv("connected_slaves", "0".into());
    kv("master_failover_state", "no-failover".into());
    kv("master_replid", replid().into());
    kv("master_replid2", "0".repeat(40));
    kv("master_repl_offset", "0".into());
    kv("second_repl_offset", "-1".into());
    kv("repl_backlog_active", "0".into());
    kv("repl_backlog_size", "1048576".into());
    kv("repl_backlog_first_byte_offset", "0".into());
    kv("repl_backlog_histlen", "0".into());
}

fn commandstats_section(server: &Shared, kv: &mut Kv<'_>) {
    for (spec, st) in Table::get().specs.iter().zip(&server.cmd_stats) {
        let calls = st.calls.load(Ordering::Relaxed);
        let usec = st.usec.load(Ordering::Relaxed);
        let rejected = st.rejected_calls.load(Ordering::Relaxed);
        let failed = st.failed_calls.load(Ordering::Relaxed);
        if calls == 0 && rejected == 0 && failed == 0 {
            continue;
        }
        let per_call = if calls == 0 {
            0.0
        } else {
            usec as f64 / calls as f64
        };
        kv(
            &format!("cmdstat_{}", spec.name),
            format!(
                "calls={calls},usec={usec},usec_per_call={per_call:.2},rejected_calls={rejected},failed_calls={failed}"
            ),
        );
    }
}

/// Per-command percentiles (`latency-tracking-info-percentiles`) of the latency histograms, in
/// microseconds with three decimals, as Redis prints them.
fn latencystats_section(server: &Shared, kv: &mut Kv<'_>) {
    let hs = &server.observe.histograms;
    let percentiles = hs.percentiles();
    for (i, spec) in Table::get().specs.iter().enumerate() {
        let Some(h) = hs.get(i) else { continue };
        let v: Vec<String> = percentiles
            .iter()
            .map(|p| {
                let us = crate::observe::value_at_percentile(&h, *p) as f64 / 1000.0;
                format!("p{}={us:.3}", crate::observe::trim_double(*p))
            })
            .collect();
        kv(
            &format!("latency_percentiles_usec_{}", spec.name),
            v.join(","),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sections(v: &[&str]) -> Vec<&'static str> {
        let v = v.iter().map(|s| Bytes::from(s.to_string())).collect();
        Info::parse_args(&mut Args::new("info", v)).sections
    }

    #[test]
    fn section_selection() {
        assert_eq!(sections(&[]), DEFAULT);
        assert_eq!(sections(&["default"]), DEFAULT);
        assert_eq!(sections(&["all"]), SECTIONS);
        assert_eq!(sections(&["everything"]), SECTIONS);
        assert_eq!(sections(&["KEYSPACE", "server"]), ["server", "keyspace"]);
        assert_eq!(sections(&["nosuch"]), Vec::<&str>::new());
        assert_eq!(
            sections(&["commandstats", "default"])[..9],
            [
                "server",
                "clients",
                "memory",
                "persistence",
                "stats",
                "replication",
                "cpu",
                "modules",
                "commandstats"
            ]
        );
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human(0), "0B");
        assert_eq!(human(1023), "1023B");
        assert_eq!(human(2324752), "2.22M");
        assert_eq!(human(33792), "33.00K");
        assert_eq!(human(25276502016), "23.54G");
    }
}
