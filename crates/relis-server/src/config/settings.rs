//! Every setting redis-server 7.0.15 knows, as one table ([`REDIS`]): its name and old name,
//! what kind of value it holds (so how a value is checked, with Redis's error texts), its
//! default, and whether CONFIG SET may change it. The table was read off Redis 7.0's config.c
//! (`standardConfig` entries) and checked against a running redis-server 7.0.15: CONFIG GET *,
//! the hidden settings found by exact name, and CONFIG SET of bad values for every setting
//! (`tests/config_redis.rs` compares the two servers).
//!
//! Relis acts on some of these (`super::PARAMS` holds them in `Config` fields); the others are
//! accepted, checked and reported, and change nothing.

/// What a setting holds, as Redis's config types go.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// `yes` or `no`, any case.
    Bool,
    /// A plain integer (Redis's `string2ll`: no sign but `-`, no leading zeros) in `min..=max`.
    Int(i64, i64),
    /// A memory value (`1gb`, `64k`, `100`) in `min..=max`, compared as unsigned.
    Memory(u64, u64),
    /// A memory value, or `N%` of maxmemory (`maxmemory-clients`).
    MemoryOrPercent,
    /// An octal number up to the given maximum (`unixsocketperm`).
    Octal(u64),
    /// One of these words, any case.
    Enum(&'static [&'static str]),
    /// Any of these words, space separated; the first means none (`shutdown-on-sigint`).
    Flags(&'static [&'static str]),
    /// Any text.
    Text,
    /// Its own check: the value, the setting's current value -> the value to keep.
    Special(fn(&str, &str) -> Result<String, String>),
}

/// Who may change a setting at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// CONFIG SET changes it.
    Mutable,
    /// Only the config file and the command line set it.
    Immutable,
    /// CONFIG SET changes it only when `enable-protected-configs` allows.
    Protected,
}

/// One Redis setting.
#[derive(Clone, Copy, Debug)]
pub struct Setting {
    /// Its name.
    pub name: &'static str,
    /// The name it had before Redis 7.0 renamed it, or "" (both work, as one setting).
    pub alias: &'static str,
    /// What it holds.
    pub kind: Kind,
    /// Redis's default, as CONFIG GET shows it.
    pub default: &'static str,
    /// Who may change it.
    pub access: Access,
    /// Hidden: CONFIG GET with a pattern skips it; its exact name finds it.
    pub hidden: bool,
    /// Takes several words in a config file line (`save 3600 1`, `bind a b`).
    pub multi: bool,
    /// Its value is a secret: Redis hides a CONFIG SET of it from SLOWLOG and MONITOR.
    pub sensitive: bool,
}

const fn s(name: &'static str, kind: Kind, default: &'static str) -> Setting {
    Setting {
        name,
        alias: "",
        kind,
        default,
        access: Access::Mutable,
        hidden: false,
        multi: false,
        sensitive: false,
    }
}

impl Setting {
    const fn alias(mut self, alias: &'static str) -> Setting {
        self.alias = alias;
        self
    }
    const fn immutable(mut self) -> Setting {
        self.access = Access::Immutable;
        self
    }
    const fn protected(mut self) -> Setting {
        self.access = Access::Protected;
        self
    }
    const fn hidden(mut self) -> Setting {
        self.hidden = true;
        self
    }
    const fn multi(mut self) -> Setting {
        self.multi = true;
        self
    }
    const fn sensitive(mut self) -> Setting {
        self.sensitive = true;
        self
    }
}

const BOOL: Kind = Kind::Bool;
const TEXT: Kind = Kind::Text;
const INT_MAX: i64 = i32::MAX as i64;
const INT_MIN: i64 = i32::MIN as i64;
const LONG_MAX: i64 = i64::MAX;
const fn int(min: i64, max: i64) -> Kind {
    Kind::Int(min, max)
}
const fn mem(min: u64, max: u64) -> Kind {
    Kind::Memory(min, max)
}
const MEM_LONG: u64 = i64::MAX as u64;
const PROTECTED_ACTION: Kind = Kind::Enum(&["no", "yes", "local"]);
const SHUTDOWN_FLAGS: Kind = Kind::Flags(&["default", "save", "nosave", "now", "force"]);

/// Redis 7.0.15's settings. Relis's own (durability, sql-*, ...) are in `super::PARAMS`.
#[rustfmt::skip]
pub const REDIS: &[Setting] = &[
    // yes/no
    s("rdbchecksum", BOOL, "yes").immutable(),
    s("daemonize", BOOL, "no").immutable(),
    s("io-threads-do-reads", BOOL, "no").immutable(),
    s("always-show-logo", BOOL, "no").immutable(),
    s("protected-mode", BOOL, "yes"),
    s("rdbcompression", BOOL, "yes"),
    s("rdb-del-sync-files", BOOL, "no"),
    s("activerehashing", BOOL, "yes"),
    s("stop-writes-on-bgsave-error", BOOL, "yes"),
    s("set-proc-title", BOOL, "yes").immutable(),
    s("dynamic-hz", BOOL, "yes"),
    s("lazyfree-lazy-eviction", BOOL, "no"),
    s("lazyfree-lazy-expire", BOOL, "no"),
    s("lazyfree-lazy-server-del", BOOL, "no"),
    s("lazyfree-lazy-user-del", BOOL, "no"),
    s("lazyfree-lazy-user-flush", BOOL, "no"),
    s("repl-disable-tcp-nodelay", BOOL, "no"),
    s("repl-diskless-sync", BOOL, "yes"),
    s("aof-rewrite-incremental-fsync", BOOL, "yes"),
    s("no-appendfsync-on-rewrite", BOOL, "no"),
    s("cluster-require-full-coverage", BOOL, "yes"),
    s("rdb-save-incremental-fsync", BOOL, "yes"),
    s("aof-load-truncated", BOOL, "yes"),
    s("aof-use-rdb-preamble", BOOL, "yes"),
    s("aof-timestamp-enabled", BOOL, "no"),
    s("cluster-replica-no-failover", BOOL, "no").alias("cluster-slave-no-failover"),
    s("replica-lazy-flush", BOOL, "no").alias("slave-lazy-flush"),
    s("replica-serve-stale-data", BOOL, "yes").alias("slave-serve-stale-data"),
    s("replica-read-only", BOOL, "yes").alias("slave-read-only"),
    s("replica-ignore-maxmemory", BOOL, "yes").alias("slave-ignore-maxmemory"),
    s("jemalloc-bg-thread", BOOL, "yes"),
    // Refused as the Debian build of redis-server refuses it: Relis does not defragment.
    s("activedefrag", Kind::Special(activedefrag), "no"),
    s("syslog-enabled", BOOL, "no").immutable(),
    s("cluster-enabled", BOOL, "no").immutable(),
    s("appendonly", BOOL, "no"),
    s("cluster-allow-reads-when-down", BOOL, "no"),
    s("cluster-allow-pubsubshard-when-down", BOOL, "yes"),
    s("crash-log-enabled", BOOL, "yes"),
    s("crash-memcheck-enabled", BOOL, "yes"),
    s("use-exit-on-panic", BOOL, "no").hidden(),
    s("disable-thp", BOOL, "yes").immutable(),
    s("cluster-allow-replica-migration", BOOL, "yes"),
    s("replica-announced", BOOL, "yes"),
    s("latency-tracking", BOOL, "yes"),
    s("aof-disable-auto-gc", BOOL, "no"),
    s("replica-ignore-disk-write-errors", BOOL, "no"),
    s("lua-enable-deprecated-api", BOOL, "no").immutable().hidden(),
    s("tls-cluster", BOOL, "no"),
    s("tls-replication", BOOL, "no"),
    s("tls-prefer-server-ciphers", BOOL, "no"),
    s("tls-session-caching", BOOL, "yes"),
    // text
    s("aclfile", TEXT, "").immutable(),
    s("unixsocket", TEXT, "").immutable(),
    s("pidfile", TEXT, "").immutable(),
    s("replica-announce-ip", TEXT, "").alias("slave-announce-ip"),
    s("masteruser", TEXT, "").sensitive(),
    s("masterauth", TEXT, "").sensitive(),
    s("requirepass", TEXT, "").sensitive(),
    s("cluster-announce-ip", TEXT, ""),
    s("cluster-config-file", TEXT, "nodes.conf").immutable(),
    s("cluster-announce-hostname", Kind::Special(hostname), ""),
    s("syslog-ident", TEXT, "redis").immutable(),
    s("dbfilename", Kind::Special(dbfilename), "dump.rdb").protected(),
    s("appendfilename", Kind::Special(appendfilename), "appendonly.aof").immutable(),
    s("appenddirname", Kind::Special(appenddirname), "appendonlydir").immutable(),
    s("server_cpulist", TEXT, "").immutable(),
    s("bio_cpulist", TEXT, "").immutable(),
    s("aof_rewrite_cpulist", TEXT, "").immutable(),
    s("bgsave_cpulist", TEXT, "").immutable(),
    s("ignore-warnings", TEXT, ""),
    s("proc-title-template", Kind::Special(proc_title_template), "{title} {listen-addr} {server-mode}"),
    s("bind-source-addr", TEXT, ""),
    s("logfile", TEXT, "").immutable(),
    s("tls-cert-file", TEXT, ""),
    s("tls-key-file", TEXT, ""),
    s("tls-key-file-pass", TEXT, ""),
    s("tls-client-cert-file", TEXT, ""),
    s("tls-client-key-file", TEXT, ""),
    s("tls-client-key-file-pass", TEXT, ""),
    s("tls-dh-params-file", TEXT, ""),
    s("tls-ca-cert-file", TEXT, ""),
    s("tls-ca-cert-dir", TEXT, ""),
    s("tls-protocols", TEXT, ""),
    s("tls-ciphers", TEXT, ""),
    s("tls-ciphersuites", TEXT, ""),
    // one word of a list
    s("supervised", Kind::Enum(&["upstart", "systemd", "auto", "no"]), "no").immutable(),
    s("syslog-facility", Kind::Enum(&["user", "local0", "local1", "local2", "local3", "local4", "local5", "local6", "local7"]), "local0").immutable(),
    s("repl-diskless-load", Kind::Enum(&["disabled", "on-empty-db", "swapdb"]), "disabled"),
    s("loglevel", Kind::Enum(&["debug", "verbose", "notice", "warning"]), "notice"),
    s("maxmemory-policy", Kind::Enum(&["volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"]), "noeviction"),
    s("appendfsync", Kind::Enum(&["everysec", "always", "no"]), "everysec"),
    // `relative` is `yes` under another name: CONFIG GET shows `yes`.
    s("oom-score-adj", Kind::Special(oom_score_adj), "no"),
    s("acl-pubsub-default", Kind::Enum(&["allchannels", "resetchannels"]), "resetchannels"),
    s("sanitize-dump-payload", Kind::Enum(&["no", "yes", "clients"]), "no"),
    s("enable-protected-configs", PROTECTED_ACTION, "no").immutable(),
    s("enable-debug-command", PROTECTED_ACTION, "no").immutable(),
    s("enable-module-command", PROTECTED_ACTION, "no").immutable(),
    s("cluster-preferred-endpoint-type", Kind::Enum(&["ip", "hostname", "unknown-endpoint"]), "ip"),
    s("propagation-error-behavior", Kind::Enum(&["ignore", "panic", "panic-on-replicas"]), "ignore"),
    s("shutdown-on-sigint", SHUTDOWN_FLAGS, "default").multi(),
    s("shutdown-on-sigterm", SHUTDOWN_FLAGS, "default").multi(),
    s("tls-auth-clients", Kind::Enum(&["no", "yes", "optional"]), "yes"),
    // integers
    s("databases", int(1, INT_MAX), "16").immutable(),
    s("port", int(0, 65535), "6379"),
    s("io-threads", int(1, 128), "1").immutable(),
    s("auto-aof-rewrite-percentage", int(0, INT_MAX), "100"),
    s("cluster-replica-validity-factor", int(0, INT_MAX), "10").alias("cluster-slave-validity-factor"),
    s("list-max-listpack-size", int(INT_MIN, INT_MAX), "-2").alias("list-max-ziplist-size"),
    s("tcp-keepalive", int(0, INT_MAX), "300"),
    s("cluster-migration-barrier", int(0, INT_MAX), "1"),
    s("active-defrag-cycle-min", int(1, 99), "1"),
    s("active-defrag-cycle-max", int(1, 99), "25"),
    s("active-defrag-threshold-lower", int(0, 1000), "10"),
    s("active-defrag-threshold-upper", int(0, 1000), "100"),
    s("lfu-log-factor", int(0, INT_MAX), "10"),
    s("lfu-decay-time", int(0, INT_MAX), "1"),
    s("replica-priority", int(0, INT_MAX), "100").alias("slave-priority"),
    s("repl-diskless-sync-delay", int(0, INT_MAX), "5"),
    s("maxmemory-samples", int(1, INT_MAX), "5"),
    s("maxmemory-eviction-tenacity", int(0, 100), "10"),
    s("timeout", int(0, INT_MAX), "0"),
    s("replica-announce-port", int(0, 65535), "0").alias("slave-announce-port"),
    s("tcp-backlog", int(0, INT_MAX), "511").immutable(),
    s("cluster-port", int(0, 65535), "0").immutable(),
    s("cluster-announce-bus-port", int(0, 65535), "0"),
    s("cluster-announce-port", int(0, 65535), "0"),
    s("cluster-announce-tls-port", int(0, 65535), "0"),
    s("repl-timeout", int(1, INT_MAX), "60"),
    s("repl-ping-replica-period", int(1, INT_MAX), "10").alias("repl-ping-slave-period"),
    s("list-compress-depth", int(0, INT_MAX), "0"),
    s("rdb-key-save-delay", int(INT_MIN, INT_MAX), "0").hidden(),
    s("key-load-delay", int(INT_MIN, INT_MAX), "0").hidden(),
    s("active-expire-effort", int(1, 10), "1"),
    // Redis keeps hz within 1..=500 whatever was asked.
    s("hz", Kind::Special(hz), "10"),
    s("min-replicas-to-write", int(0, INT_MAX), "0").alias("min-slaves-to-write"),
    s("min-replicas-max-lag", int(0, INT_MAX), "10").alias("min-slaves-max-lag"),
    // Redis raises a period below two `hz` ticks to that (`Config::set` does).
    s("watchdog-period", int(0, INT_MAX), "0").hidden(),
    s("shutdown-timeout", int(0, INT_MAX), "10"),
    s("repl-diskless-sync-max-replicas", int(0, INT_MAX), "0"),
    s("maxclients", int(1, u32::MAX as i64), "10000"),
    s("socket-mark-id", int(0, u32::MAX as i64), "0").immutable(),
    s("unixsocketperm", Kind::Octal(0o777), "0").immutable(),
    s("active-defrag-max-scan-fields", int(1, LONG_MAX), "1000"),
    s("slowlog-max-len", int(0, LONG_MAX), "128"),
    s("acllog-max-len", int(0, LONG_MAX), "128"),
    s("busy-reply-threshold", int(0, LONG_MAX), "5000").alias("lua-time-limit"),
    s("cluster-node-timeout", int(0, LONG_MAX), "15000"),
    s("slowlog-log-slower-than", int(-1, LONG_MAX), "10000"),
    s("latency-monitor-threshold", int(0, LONG_MAX), "0"),
    s("stream-node-max-entries", int(0, LONG_MAX), "100"),
    s("repl-backlog-ttl", int(0, LONG_MAX), "3600"),
    s("loading-process-events-interval-bytes", int(1024, INT_MAX), "2097152").hidden(),
    s("hash-max-listpack-entries", int(0, LONG_MAX), "512").alias("hash-max-ziplist-entries"),
    s("set-max-intset-entries", int(0, LONG_MAX), "512"),
    s("zset-max-listpack-entries", int(0, LONG_MAX), "128").alias("zset-max-ziplist-entries"),
    s("tracking-table-max-keys", int(0, LONG_MAX), "1000000"),
    s("tls-port", int(0, 65535), "0"),
    s("tls-session-cache-size", int(0, INT_MAX), "20480"),
    s("tls-session-cache-timeout", int(0, INT_MAX), "300"),
    // memory
    s("proto-max-bulk-len", mem(1 << 20, MEM_LONG), "536870912"),
    // Redis raises a smaller backlog to 16 KB.
    s("repl-backlog-size", Kind::Special(repl_backlog_size), "1048576"),
    s("maxmemory", mem(0, u64::MAX), "0"),
    s("cluster-link-sendbuf-limit", mem(0, u64::MAX), "0"),
    s("active-defrag-ignore-bytes", mem(1, MEM_LONG), "104857600"),
    s("hash-max-listpack-value", mem(0, MEM_LONG), "64").alias("hash-max-ziplist-value"),
    s("stream-node-max-bytes", mem(0, MEM_LONG), "4096"),
    s("zset-max-listpack-value", mem(0, MEM_LONG), "64").alias("zset-max-ziplist-value"),
    s("hll-sparse-max-bytes", mem(0, MEM_LONG), "3000"),
    s("client-query-buffer-limit", mem(1 << 20, MEM_LONG), "1073741824"),
    s("auto-aof-rewrite-min-size", mem(0, MEM_LONG), "67108864"),
    s("maxmemory-clients", Kind::MemoryOrPercent, "0"),
    // their own syntax
    s("dir", TEXT, "").protected(),
    // Redis's default is "3600 1 300 100 60 10000": Relis takes no snapshots on a schedule.
    s("save", Kind::Special(save), "").multi(),
    s("client-output-buffer-limit", Kind::Special(crate::pubsub::parse_buffer_limits),
        "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60").multi(),
    s("oom-score-adj-values", Kind::Special(oom_score_adj_values), "0 200 800").multi(),
    s("notify-keyspace-events", Kind::Special(notify_keyspace_events), ""),
    s("bind", TEXT, "").multi(),
    s("replicaof", Kind::Special(replicaof), "").alias("slaveof").immutable().multi(),
    s("latency-tracking-info-percentiles", Kind::Special(percentiles), "50 99 99.9").multi(),
];

/// Names Redis 7.0 still accepts in a config file, with one value, and ignores.
pub const DEPRECATED: &[&str] = &[
    "list-max-ziplist-entries",
    "list-max-ziplist-value",
    "lua-replicate-commands",
];

/// The setting called `name` (any case; its old name too), and whether that was the old name.
pub fn lookup(name: &str) -> Option<(&'static Setting, bool)> {
    REDIS.iter().find_map(|s| {
        if s.name.eq_ignore_ascii_case(name) {
            Some((s, false))
        } else if !s.alias.is_empty() && s.alias.eq_ignore_ascii_case(name) {
            Some((s, true))
        } else {
            None
        }
    })
}

/// Whether `name` (any case, old names too) is a setting whose value Redis keeps out of SLOWLOG
/// and MONITOR when CONFIG SET sets it (`requirepass`, `masterauth`, `masteruser`).
pub fn is_sensitive(name: &str) -> bool {
    lookup(name).is_some_and(|(s, _)| s.sensitive)
}

impl Setting {
    /// Checks `value` as Redis checks this setting's kind; returns it as CONFIG GET will show
    /// it (`current` is the value now, for settings a value only partly replaces).
    ///
    /// # Errors
    /// Redis's text for the value.
    pub fn check(&self, value: &str, current: &str) -> Result<String, String> {
        match self.kind {
            Kind::Bool => bool_word(value).map(str::to_string),
            Kind::Int(min, max) => {
                let n = relis::parse_i64(value.as_bytes()).ok_or(NOT_INTEGER)?;
                in_range(n, min, max).map(|n| n.to_string())
            }
            Kind::Memory(min, max) => {
                let n = memtoull(value).ok_or(NOT_MEMORY)?;
                if n < min || n > max {
                    return Err(between(min, max));
                }
                Ok(n.to_string())
            }
            Kind::MemoryOrPercent => memory_or_percent(value),
            Kind::Octal(max) => {
                let n = octal(value).ok_or("argument couldn't be parsed as an octal number")?;
                // Compared as unsigned, as Redis does: -1 is past the top.
                if n as u64 > max {
                    return Err(format!("argument must be between 0 and {max:o} inclusive"));
                }
                Ok(format!("{n:o}"))
            }
            Kind::Enum(words) => words
                .iter()
                .find(|w| w.eq_ignore_ascii_case(value))
                .map(|w| w.to_string())
                .ok_or_else(|| one_of(words)),
            Kind::Flags(words) => flags(words, value),
            Kind::Text => Ok(value.to_string()),
            Kind::Special(f) => f(value, current),
        }
    }
}

const NOT_INTEGER: &str = "argument couldn't be parsed into an integer";
const NOT_MEMORY: &str = "argument must be a memory value";

fn between(min: impl std::fmt::Display, max: impl std::fmt::Display) -> String {
    format!("argument must be between {min} and {max} inclusive")
}

fn in_range(n: i64, min: i64, max: i64) -> Result<i64, String> {
    if n < min || n > max {
        return Err(between(min, max));
    }
    Ok(n)
}

fn one_of(words: &[&str]) -> String {
    format!(
        "argument(s) must be one of the following: {}",
        words.join(", ")
    )
}

/// `yes` or `no`, any case.
///
/// # Errors
/// Redis's text.
pub fn bool_word(v: &str) -> Result<&'static str, String> {
    if v.eq_ignore_ascii_case("yes") {
        Ok("yes")
    } else if v.eq_ignore_ascii_case("no") {
        Ok("no")
    } else {
        Err("argument must be 'yes' or 'no'".into())
    }
}

/// Redis's `memtoull`: digits (none is 0) and an optional unit (`b`, `k`, `kb`, `m`, `mb`, `g`,
/// `gb`, any case). Like Redis, a number past 2^64 counts as 2^64-1 and the unit's product
/// wraps around.
pub fn memtoull(v: &str) -> Option<u64> {
    let digits = v.bytes().take_while(u8::is_ascii_digit).count();
    let (num, unit) = v.split_at(digits);
    let mul: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1024,
        "m" => 1000 * 1000,
        "mb" => 1024 * 1024,
        "g" => 1000 * 1000 * 1000,
        "gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    let n = if num.is_empty() {
        0
    } else {
        num.parse::<u64>().unwrap_or(u64::MAX)
    };
    Some(n.wrapping_mul(mul))
}

/// `maxmemory-clients`: bytes, or `N%` of maxmemory (kept as Redis keeps it, negative; a
/// memory value past 2^63 turns negative the same way and reads as a percentage).
fn memory_or_percent(v: &str) -> Result<String, String> {
    const BAD: &str = "argument must be a memory or percent value";
    let n: i64 = match memtoull(v) {
        Some(m) => m as i64,
        None => match v.strip_suffix('%') {
            Some(p) if !p.is_empty() => match relis::parse_i64(p.as_bytes()) {
                Some(p) if p >= 0 => -p,
                _ => return Err(BAD.into()),
            },
            _ => return Err(BAD.into()),
        },
    };
    if n < -100 {
        return Err("percentage argument must be less or equal to 100".into());
    }
    Ok(if n < 0 {
        format!("{}%", -n)
    } else {
        n.to_string()
    })
}

/// `strtoll(v, 8)` taking the whole text: optional blanks and sign, octal digits.
fn octal(v: &str) -> Option<i64> {
    let t = v.trim_start();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() {
        return (t.len() == digits.len()).then_some(0);
    }
    if digits.starts_with(['+', '-']) {
        return None;
    }
    let n = i64::from_str_radix(digits, 8).ok()?;
    Some(if neg { -n } else { n })
}

/// Space-separated words of `words` (the first, `default`, meaning none), shown in the
/// table's order, or the first word when there are none.
fn flags(words: &[&str], v: &str) -> Result<String, String> {
    let mut set = vec![false; words.len()];
    for w in v.split(' ') {
        let i = words
            .iter()
            .position(|x| x.eq_ignore_ascii_case(w))
            .ok_or_else(|| one_of(words))?;
        set[i] = true;
    }
    // Redis's shutdown flags: SAVE and NOSAVE contradict each other.
    if set.get(1) == Some(&true) && set.get(2) == Some(&true) && words[1] == "save" {
        return Err("shutdown options SAVE and NOSAVE can't be used simultaneously".into());
    }
    let on: Vec<&str> = (1..words.len())
        .filter(|&i| set[i])
        .map(|i| words[i])
        .collect();
    Ok(if on.is_empty() {
        words[0].to_string()
    } else {
        on.join(" ")
    })
}

fn activedefrag(v: &str, _: &str) -> Result<String, String> {
    match bool_word(v)? {
        "yes" => Err("Active defragmentation cannot be enabled: it requires a Redis server compiled with a modified Jemalloc like the one shipped by default with the Redis source distribution".into()),
        no => Ok(no.into()),
    }
}

fn hz(v: &str, _: &str) -> Result<String, String> {
    let n = relis::parse_i64(v.as_bytes()).ok_or(NOT_INTEGER)?;
    Ok(in_range(n, 0, INT_MAX)?.clamp(1, 500).to_string())
}

fn repl_backlog_size(v: &str, _: &str) -> Result<String, String> {
    let n = memtoull(v).ok_or(NOT_MEMORY)?;
    if !(1..=MEM_LONG).contains(&n) {
        return Err(between(1, MEM_LONG));
    }
    Ok(n.max(16 * 1024).to_string())
}

fn oom_score_adj(v: &str, _: &str) -> Result<String, String> {
    const WORDS: &[&str] = &["no", "yes", "relative", "absolute"];
    match WORDS.iter().find(|w| w.eq_ignore_ascii_case(v)) {
        Some(&"relative") => Ok("yes".into()),
        Some(w) => Ok(w.to_string()),
        None => Err(one_of(WORDS)),
    }
}

/// Redis's `pathIsBaseName`.
fn is_base_name(v: &str) -> bool {
    !v.contains(['/', '\\'])
}

fn dbfilename(v: &str, _: &str) -> Result<String, String> {
    if !is_base_name(v) {
        return Err("dbfilename can't be a path, just a filename".into());
    }
    Ok(v.into())
}

fn appendfilename(v: &str, _: &str) -> Result<String, String> {
    if v.is_empty() {
        return Err("appendfilename can't be empty".into());
    }
    if !is_base_name(v) {
        return Err("appendfilename can't be a path, just a filename".into());
    }
    Ok(v.into())
}

fn appenddirname(v: &str, _: &str) -> Result<String, String> {
    if v.is_empty() {
        return Err("appenddirname can't be empty".into());
    }
    if !is_base_name(v) {
        return Err("appenddirname can't be a path, just a dirname".into());
    }
    Ok(v.into())
}

fn hostname(v: &str, _: &str) -> Result<String, String> {
    if v.len() >= 256 {
        return Err("Hostnames must be less than 256 characters".into());
    }
    if !v
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'.')
    {
        return Err("Hostnames may only contain alphanumeric characters, hyphens or dots".into());
    }
    Ok(v.into())
}

/// A template whose `{...}` are variables Redis knows; not empty.
fn proc_title_template(v: &str, _: &str) -> Result<String, String> {
    const VARS: &[&str] = &[
        "{title}",
        "{listen-addr}",
        "{server-mode}",
        "{port}",
        "{tls-port}",
        "{unixsocket}",
        "{config-file}",
    ];
    let bad = || "template format is invalid or contains unknown variables".to_string();
    if v.is_empty() {
        return Err(bad());
    }
    let mut rest = v;
    while let Some(open) = rest.find('{') {
        let close = rest[open..].find('}').ok_or_else(bad)? + open;
        if !VARS.contains(&&rest[open..=close]) {
            return Err(bad());
        }
        rest = &rest[close + 1..];
    }
    Ok(v.into())
}

/// `save`: pairs of seconds (at least 1) and changes (at least 0), or "" for none.
fn save(v: &str, _: &str) -> Result<String, String> {
    if v.is_empty() {
        return Ok(String::new());
    }
    let words: Vec<&str> = v.split(' ').collect();
    let ok = words.len().is_multiple_of(2)
        && words
            .iter()
            .enumerate()
            .all(|(i, w)| strtoll(w).is_some_and(|n| if i % 2 == 0 { n >= 1 } else { n >= 0 }));
    if !ok {
        return Err("Invalid save parameters".into());
    }
    Ok(words
        .iter()
        .map(|w| strtoll(w).unwrap_or(0).to_string())
        .collect::<Vec<_>>()
        .join(" "))
}

/// C's `strtoll(w, &end, 10)` where `*end` must be the end: blanks, a sign, digits (none is 0).
pub(crate) fn strtoll(w: &str) -> Option<i64> {
    let t = w.trim_start();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    if digits.is_empty() {
        return (t.len() == digits.len()).then_some(0);
    }
    let n = digits.parse::<i64>().unwrap_or(i64::MAX);
    Some(if neg { -n } else { n })
}

fn oom_score_adj_values(v: &str, _: &str) -> Result<String, String> {
    let words: Vec<&str> = v.split(' ').collect();
    if words.len() != 3 {
        return Err("wrong number of arguments".into());
    }
    let mut out = Vec::new();
    for w in words {
        match strtoll(w) {
            Some(n) if (-2000..=2000).contains(&n) => out.push(n.to_string()),
            _ => {
                return Err(
                    "Invalid oom-score-adj-values, elements must be between -2000 and 2000.".into(),
                )
            }
        }
    }
    Ok(out.join(" "))
}

/// Kept letter by letter (`A` hides `n` when shown, see `super::Config::pairs`).
fn notify_keyspace_events(v: &str, _: &str) -> Result<String, String> {
    crate::pubsub::parse_notify_flags(v)
        .map(crate::pubsub::notify_flags_letters)
        .ok_or_else(|| "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.".into())
}

fn replicaof(v: &str, _: &str) -> Result<String, String> {
    let words: Vec<&str> = v.split(' ').collect();
    let [host, port] = words[..] else {
        return Err("wrong number of arguments".into());
    };
    if host.eq_ignore_ascii_case("no") && port.eq_ignore_ascii_case("one") {
        return Ok(String::new());
    }
    match strtoll(port) {
        Some(p) if (0..=65535).contains(&p) => Ok(format!("{host} {p}")),
        _ => Err("Invalid master port".into()),
    }
}

/// Percentiles between 0 and 100, shown as C's `%f` without its trailing zeros.
fn percentiles(v: &str, _: &str) -> Result<String, String> {
    if v.is_empty() {
        return Ok(String::new());
    }
    let mut out = Vec::new();
    for w in v.split(' ') {
        let p: f64 = w
            .parse()
            .ok()
            .filter(|p: &f64| !p.is_nan())
            .ok_or("Invalid latency-tracking-info-percentiles parameters")?;
        if !(0.0..=100.0).contains(&p) {
            return Err(
                "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
                    .into(),
            );
        }
        let s = format!("{p:.6}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        out.push(s.to_string());
    }
    Ok(out.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, v: &str) -> Result<String, String> {
        let (s, _) = lookup(name).unwrap();
        s.check(v, s.default)
    }

    #[test]
    fn names_are_unique_and_defaults_are_valid() {
        let mut seen = std::collections::BTreeSet::new();
        for s in REDIS {
            assert!(seen.insert(s.name), "{}", s.name);
            if !s.alias.is_empty() {
                assert!(seen.insert(s.alias), "{}", s.alias);
            }
            // `replicaof ""` is not a value one can set: "no one" is.
            if !matches!(s.name, "dir" | "bind" | "replicaof") {
                assert_eq!(
                    s.check(s.default, s.default).as_deref(),
                    Ok(s.default),
                    "{}",
                    s.name
                );
            }
        }
        assert_eq!(REDIS.iter().filter(|s| !s.alias.is_empty()).count(), 19);
        assert!(is_sensitive("RequirePass") && is_sensitive("masterauth") && !is_sensitive("port"));
    }

    #[test]
    fn values_as_redis_reads_them() {
        assert_eq!(check("hll-sparse-max-bytes", ""), Ok("0".into()));
        assert_eq!(check("hll-sparse-max-bytes", "kb"), Ok("0".into()));
        assert_eq!(check("hll-sparse-max-bytes", "1KB"), Ok("1024".into()));
        assert_eq!(check("hll-sparse-max-bytes", "010"), Ok("10".into()));
        assert_eq!(
            check("hll-sparse-max-bytes", "20000000000gb"),
            Ok("3028092406290448384".into())
        );
        assert_eq!(
            check("hll-sparse-max-bytes", "18446744073709551616"),
            Err("argument must be between 0 and 9223372036854775807 inclusive".into())
        );
        assert_eq!(check("hll-sparse-max-bytes", "+1"), Err(NOT_MEMORY.into()));
        assert_eq!(
            check("maxmemory", "18446744073709551615"),
            Ok("18446744073709551615".into())
        );
        assert_eq!(check("maxmemory-clients", "50%"), Ok("50%".into()));
        assert_eq!(
            check("maxmemory-clients", "18446744073709551615"),
            Ok("1%".into())
        );
        assert_eq!(
            check("maxmemory-clients", "101%"),
            Err("percentage argument must be less or equal to 100".into())
        );
        assert_eq!(check("lfu-log-factor", "010"), Err(NOT_INTEGER.into()));
        assert_eq!(check("lfu-log-factor", "-0"), Err(NOT_INTEGER.into()));
        assert_eq!(check("hz", "0"), Ok("1".into()));
        assert_eq!(check("hz", "100000"), Ok("500".into()));
        assert_eq!(check("unixsocketperm", "0700"), Ok("700".into()));
        assert_eq!(
            check("unixsocketperm", "-1"),
            Err("argument must be between 0 and 777 inclusive".into())
        );
        assert_eq!(
            check("shutdown-on-sigint", "NOW save"),
            Ok("save now".into())
        );
        assert_eq!(
            check("shutdown-on-sigint", "default default"),
            Ok("default".into())
        );
        assert_eq!(
            check("shutdown-on-sigint", "save nosave"),
            Err("shutdown options SAVE and NOSAVE can't be used simultaneously".into())
        );
        assert_eq!(check("oom-score-adj", "Relative"), Ok("yes".into()));
        assert_eq!(check("save", "3600 1 300 100"), Ok("3600 1 300 100".into()));
        assert_eq!(check("save", "0 1"), Err("Invalid save parameters".into()));
        assert_eq!(
            check("save", "3600  1"),
            Err("Invalid save parameters".into())
        );
        assert_eq!(
            check("latency-tracking-info-percentiles", "1e1 99.123456789 -0"),
            Ok("10 99.123457 -0".into())
        );
        assert_eq!(check("replicaof", "no one"), Ok("".into()));
        assert_eq!(
            check("replicaof", "host 70000"),
            Err("Invalid master port".into())
        );
        assert_eq!(
            check("proc-title-template", ""),
            Err("template format is invalid or contains unknown variables".into())
        );
        assert_eq!(
            check("proc-title-template", "a{}b"),
            Err("template format is invalid or contains unknown variables".into())
        );
        assert_eq!(check("proc-title-template", "}"), Ok("}".into()));
        assert_eq!(
            check("cluster-announce-hostname", "a_b"),
            Err("Hostnames may only contain alphanumeric characters, hyphens or dots".into())
        );
        assert_eq!(
            check("loglevel", "x"),
            Err("argument(s) must be one of the following: debug, verbose, notice, warning".into())
        );
    }
}
