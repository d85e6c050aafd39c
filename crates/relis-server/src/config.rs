//! Configuration: redis.conf-style `name value` lines from a file, then `--name value` overrides
//! from the command line, and CONFIG GET/SET at run time.
//!
//! Every setting redis-server 7.0.15 has is declared once in [`settings::REDIS`] (its kind,
//! default, old name, whether CONFIG SET may change it): a value is checked there first, with
//! Redis's texts. The settings Relis acts on, and Relis's own, are in [`PARAMS`], with the
//! `Config` field each is kept in; the others are kept as text in [`Config::passive`].

pub mod settings;

use relis::Durability;
use settings::Access;
use std::fmt::Write as _;
use std::path::PathBuf;

/// The server's settings.
#[derive(Clone, Debug)]
pub struct Config {
    /// TCP port (0 picks a free one).
    pub port: u16,
    /// Addresses to listen on.
    pub bind: Vec<String>,
    /// Data directory.
    pub dir: PathBuf,
    /// Database file name inside `dir`; `:memory:` keeps data in memory only.
    pub dbfilename: String,
    /// Number of logical databases.
    pub databases: u32,
    /// Password for the default user (empty = none).
    pub requirepass: String,
    /// The ACL file (`aclfile`): users loaded at start-up, by ACL LOAD, written by ACL SAVE
    /// ("" = none).
    pub aclfile: String,
    /// `user` directives of the config file, each the words after `user`.
    pub users: Vec<Vec<String>>,
    /// Most simultaneous clients.
    pub maxclients: usize,
    /// Commit durability.
    pub durability: Durability,
    /// What holds the keyspace: `sqlite` (the file `dir/dbfilename`) or a PostgreSQL URL
    /// (`postgres://user@host:port/db`) that several servers share (README "PostgreSQL
    /// backend").
    pub backend: String,
    /// debug | verbose | notice | warning.
    pub loglevel: String,
    /// Log file ("" = standard output).
    pub logfile: String,
    /// Idle client timeout in seconds (0 = never).
    pub timeout: u64,
    /// TCP keepalive in seconds.
    pub tcp_keepalive: u64,
    /// Most entries ACL LOG keeps.
    pub acllog_max_len: usize,
    /// Largest bulk string accepted.
    pub proto_max_bulk_len: usize,
    /// `hll-sparse-max-bytes`: the longest a sparse HyperLogLog value may grow before it is
    /// converted to dense.
    pub hll_sparse_max_bytes: usize,
    /// Largest query buffer per client.
    pub client_query_buffer_limit: usize,
    /// Reader threads.
    pub readers: usize,
    /// Write jobs per group commit, at most.
    pub max_batch: usize,
    /// The page size of a new database file.
    pub page_size: u32,
    /// The writer connection's page cache, in bytes (`writer-cache-size`).
    pub writer_cache_size: u64,
    /// Each reader connection's page cache, in bytes (`reader-cache-size`).
    pub reader_cache_size: u64,
    /// How much of the database file each reader maps into memory, in bytes (`mmap-size`).
    pub mmap_size: u64,
    /// Milliseconds a user SQL statement may run before it is interrupted (0 = no limit).
    pub sql_time_limit: u64,
    /// Most rows a SQL result may have; a larger one is refused (0 = no limit).
    pub sql_max_result_rows: usize,
    /// Most bytes a SQL result may hold, and the longest string or blob user SQL may make or
    /// read; a larger one is refused (0 = no limit).
    pub sql_max_result_bytes: usize,
    /// Most working memory (SQLite's allocations, not its page cache) one user SQL statement
    /// may use; past it the statement fails (0 = no limit).
    pub sql_max_memory: usize,
    /// Most named SQL databases (SQL.DB CREATE, REDISQL.CREATE_DB) open at once: each has its
    /// own threads and file. Creating one more is refused; those recorded are all reopened at
    /// start-up even when they are more (0 = no limit).
    pub sql_max_databases: usize,
    /// Refuse clients from other hosts while the default user has no password.
    pub protected_mode: bool,
    /// TLS port (0 = no TLS listener).
    pub tls_port: u16,
    /// The server's certificate chain (PEM).
    pub tls_cert_file: String,
    /// The server's private key (PEM).
    pub tls_key_file: String,
    /// The passphrase of an encrypted (PKCS#8) private key.
    pub tls_key_file_pass: String,
    /// CA certificates (PEM) that sign client certificates.
    pub tls_ca_cert_file: String,
    /// A directory of CA certificates (PEM files).
    pub tls_ca_cert_dir: String,
    /// Whether TLS clients must present a certificate.
    pub tls_auth_clients: TlsAuthClients,
    /// TLS versions to offer, e.g. `TLSv1.2 TLSv1.3` (empty = both).
    pub tls_protocols: String,
    /// TLS 1.2 ciphers in OpenSSL's syntax (accepted and reported, not applied).
    pub tls_ciphers: String,
    /// TLS 1.3 cipher suites, `:` separated (empty = all that rustls offers).
    pub tls_ciphersuites: String,
    /// Most memory the Lua state may use, in bytes (0: no limit); a script that needs more
    /// gets `not enough memory`.
    pub lua_memory_limit: usize,
    /// Microseconds a command must run to enter the slow log (-1: the slow log is off).
    pub slowlog_log_slower_than: i64,
    /// Most entries the slow log keeps.
    pub slowlog_max_len: usize,
    /// Milliseconds an event must take to enter the latency monitor (0: the monitor is off).
    pub latency_monitor_threshold: u64,
    /// Whether per-command latency histograms are kept (LATENCY HISTOGRAM, INFO latencystats).
    pub latency_tracking: bool,
    /// The percentiles INFO latencystats prints.
    pub latency_tracking_info_percentiles: Vec<f64>,
    /// Most keys client-side caching remembers (0: no limit); past it keys are invalidated
    /// and forgotten, as in Redis.
    pub tracking_table_max_keys: u64,
    /// Redis settings Relis keeps as text, by name (not the old name): those it accepts and
    /// reports without acting on them, and a few other modules read (`busy-reply-threshold`,
    /// `notify-keyspace-events`, ...).
    pub passive: Vec<(&'static str, String)>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            port: 6379,
            bind: vec!["127.0.0.1".into()],
            dir: PathBuf::from("."),
            dbfilename: "relis.db".into(),
            databases: 16,
            requirepass: String::new(),
            aclfile: String::new(),
            users: Vec::new(),
            maxclients: 10000,
            durability: Durability::Normal,
            backend: "sqlite".into(),
            loglevel: "notice".into(),
            logfile: String::new(),
            timeout: 0,
            tcp_keepalive: 300,
            acllog_max_len: crate::acl::LOG_MAX,
            proto_max_bulk_len: 512 * 1024 * 1024,
            client_query_buffer_limit: 1024 * 1024 * 1024,
            hll_sparse_max_bytes: 3000,
            readers: relis::Options::default().readers,
            max_batch: 1024,
            page_size: relis::PAGE_SIZE,
            writer_cache_size: relis::WRITER_CACHE,
            reader_cache_size: relis::READER_CACHE,
            mmap_size: relis::MMAP_SIZE,
            sql_time_limit: 5000,
            sql_max_result_rows: 1_000_000,
            sql_max_result_bytes: relis::DEFAULT_MAX_RESULT_BYTES,
            sql_max_memory: relis::DEFAULT_MAX_MEMORY,
            sql_max_databases: 16,
            lua_memory_limit: 1 << 30,
            slowlog_log_slower_than: 10_000,
            slowlog_max_len: 128,
            latency_monitor_threshold: 0,
            latency_tracking: true,
            latency_tracking_info_percentiles: vec![50.0, 99.0, 99.9],
            tracking_table_max_keys: 1_000_000,
            protected_mode: true,
            tls_port: 0,
            tls_cert_file: String::new(),
            tls_key_file: String::new(),
            tls_key_file_pass: String::new(),
            tls_ca_cert_file: String::new(),
            tls_ca_cert_dir: String::new(),
            tls_auth_clients: TlsAuthClients::Yes,
            tls_protocols: String::new(),
            tls_ciphers: String::new(),
            tls_ciphersuites: String::new(),
            passive: settings::REDIS
                .iter()
                .filter(|s| !PARAMS.iter().any(|p| p.name == s.name))
                .map(|s| (s.name, s.default.to_string()))
                .collect(),
        }
    }
}

/// `tls-auth-clients`: whether a TLS client must present a certificate signed by the CA.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlsAuthClients {
    /// No certificate is asked for.
    No,
    /// A certificate is required (Redis's default).
    Yes,
    /// A certificate is asked for; a client without one is accepted, one with a bad one is not.
    Optional,
}

impl TlsAuthClients {
    fn name(self) -> &'static str {
        match self {
            TlsAuthClients::No => "no",
            TlsAuthClients::Yes => "yes",
            TlsAuthClients::Optional => "optional",
        }
    }
}

/// How a parameter is read and written.
pub struct Param {
    /// Name as in redis.conf.
    pub name: &'static str,
    /// Whether CONFIG SET may change it at run time (Relis's own settings; for Redis's,
    /// [`settings::REDIS`] says).
    pub mutable: bool,
    /// Current value as CONFIG GET prints it.
    pub get: fn(&Config) -> String,
    /// Sets it from text.
    pub set: fn(&mut Config, &str) -> Result<(), String>,
}

fn int<T: std::str::FromStr>(v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| "argument couldn't be parsed into an integer".to_string())
}

/// An integer within `min..=max`, with Redis's CONFIG SET wording when it is not.
fn int_in(v: &str, min: i64, max: i64) -> Result<i64, String> {
    let n = relis::parse_i64(v.as_bytes())
        .ok_or_else(|| "argument couldn't be parsed into an integer".to_string())?;
    if n < min || n > max {
        return Err(format!(
            "argument must be between {min} and {max} inclusive"
        ));
    }
    Ok(n)
}

/// A memory value of at least `min` bytes, with Redis's wording when it is not.
fn memory_at_least(v: &str, min: usize) -> Result<usize, String> {
    let n = memory(v)?;
    if n < min {
        return Err(format!(
            "argument must be between {min} and 9223372036854775807 inclusive"
        ));
    }
    Ok(n)
}

fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.into()
}

/// A Redis boolean: `yes` or `no`, any case.
fn bool_arg(v: &str) -> Result<bool, String> {
    match v.to_ascii_lowercase().as_str() {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err("argument must be 'yes' or 'no'".into()),
    }
}

/// Parses Redis memory units: `1gb`, `512mb`, `64k`, plain bytes.
pub fn memory(v: &str) -> Result<usize, String> {
    let l = v.to_ascii_lowercase();
    let (num, mul) = [
        ("gb", 1usize << 30),
        ("g", 1_000_000_000),
        ("mb", 1 << 20),
        ("m", 1_000_000),
        ("kb", 1 << 10),
        ("k", 1_000),
        ("b", 1),
    ]
    .iter()
    .find_map(|(suf, m)| l.strip_suffix(suf).map(|n| (n.to_string(), *m)))
    .unwrap_or((l.clone(), 1));
    let n: usize = num
        .parse()
        .map_err(|_| "argument must be a memory value".to_string())?;
    n.checked_mul(mul)
        .ok_or_else(|| "argument must be a memory value".to_string())
}

/// `latency-tracking-info-percentiles`: numbers between 0 and 100, separated by spaces (none
/// is allowed), with Redis's CONFIG SET wording when they are not.
fn percentiles(v: &str) -> Result<Vec<f64>, String> {
    v.split_whitespace()
        .map(|w| {
            let p = w
                .parse::<f64>()
                .ok()
                .filter(|p| !p.is_nan())
                .ok_or("Invalid latency-tracking-info-percentiles parameters")?;
            if !(0.0..=100.0).contains(&p) {
                return Err(
                    "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]",
                );
            }
            Ok(p)
        })
        .collect::<Result<_, _>>()
        .map_err(String::from)
}

/// Every parameter Relis acts on.
pub const PARAMS: &[Param] = &[
    Param {
        name: "slowlog-log-slower-than",
        mutable: true,
        get: |c| c.slowlog_log_slower_than.to_string(),
        set: |c, v| int_in(v, -1, i64::MAX).map(|n| c.slowlog_log_slower_than = n),
    },
    Param {
        name: "slowlog-max-len",
        mutable: true,
        get: |c| c.slowlog_max_len.to_string(),
        set: |c, v| int_in(v, 0, i64::MAX).map(|n| c.slowlog_max_len = n as usize),
    },
    Param {
        name: "latency-monitor-threshold",
        mutable: true,
        get: |c| c.latency_monitor_threshold.to_string(),
        set: |c, v| int_in(v, 0, i64::MAX).map(|n| c.latency_monitor_threshold = n as u64),
    },
    Param {
        name: "latency-tracking",
        mutable: true,
        get: |c| yes_no(c.latency_tracking),
        set: |c, v| bool_arg(v).map(|b| c.latency_tracking = b),
    },
    Param {
        name: "latency-tracking-info-percentiles",
        mutable: true,
        get: |c| {
            c.latency_tracking_info_percentiles
                .iter()
                .map(|p| crate::observe::trim_double(*p))
                .collect::<Vec<_>>()
                .join(" ")
        },
        set: |c, v| percentiles(v).map(|p| c.latency_tracking_info_percentiles = p),
    },
    Param {
        name: "port",
        mutable: true,
        get: |c| c.port.to_string(),
        set: |c, v| int(v).map(|p| c.port = p),
    },
    Param {
        name: "bind",
        mutable: true,
        get: |c| c.bind.join(" "),
        set: |c, v| {
            c.bind = v.split_whitespace().map(String::from).collect();
            if c.bind.is_empty() {
                return Err("bind needs at least one address".into());
            }
            Ok(())
        },
    },
    Param {
        name: "dir",
        mutable: false,
        get: |c| {
            std::fs::canonicalize(&c.dir)
                .unwrap_or_else(|_| c.dir.clone())
                .display()
                .to_string()
        },
        set: |c, v| {
            c.dir = PathBuf::from(v);
            Ok(())
        },
    },
    Param {
        name: "dbfilename",
        mutable: false,
        get: |c| c.dbfilename.clone(),
        set: |c, v| {
            if v.contains('/') {
                return Err("dbfilename can't be a path, just a filename".into());
            }
            c.dbfilename = v.into();
            Ok(())
        },
    },
    Param {
        name: "databases",
        mutable: false,
        get: |c| c.databases.to_string(),
        set: |c, v| {
            let n: u32 = int(v)?;
            if n == 0 {
                return Err("argument must be between 1 and 2147483647 inclusive".into());
            }
            c.databases = n;
            Ok(())
        },
    },
    Param {
        name: "requirepass",
        mutable: true,
        get: |c| c.requirepass.clone(),
        set: |c, v| {
            c.requirepass = v.into();
            Ok(())
        },
    },
    Param {
        name: "aclfile",
        mutable: false,
        get: |c| c.aclfile.clone(),
        set: |c, v| {
            c.aclfile = v.into();
            Ok(())
        },
    },
    Param {
        name: "tracking-table-max-keys",
        mutable: true,
        get: |c| c.tracking_table_max_keys.to_string(),
        set: |c, v| int_in(v, 0, i64::MAX).map(|n| c.tracking_table_max_keys = n as u64),
    },
    Param {
        name: "maxclients",
        mutable: true,
        get: |c| c.maxclients.to_string(),
        set: |c, v| int_in(v, 1, u32::MAX as i64).map(|n| c.maxclients = n as usize),
    },
    Param {
        name: "durability",
        mutable: false,
        get: |c| c.durability.name().into(),
        set: |c, v| {
            c.durability = Durability::parse(v)
                .ok_or_else(|| "argument must be one of: normal, full, off".to_string())?;
            Ok(())
        },
    },
    Param {
        name: "backend",
        mutable: false,
        get: |c| redact_url(&c.backend),
        set: |c, v| {
            let lower = v.to_ascii_lowercase();
            if lower == "sqlite" {
                c.backend = lower;
            } else if ["postgres://", "postgresql://"]
                .iter()
                .any(|p| lower.starts_with(p) && lower.len() > p.len())
            {
                c.backend = v.into();
            } else {
                return Err(
                    "argument must be 'sqlite' or a URL postgres://user@host:port/database".into(),
                );
            }
            Ok(())
        },
    },
    Param {
        name: "loglevel",
        mutable: true,
        get: |c| c.loglevel.clone(),
        set: |c, v| {
            let l = v.to_ascii_lowercase();
            if !["debug", "verbose", "notice", "warning"].contains(&l.as_str()) {
                return Err(
                    "argument(s) must be one of the following: debug, verbose, notice, warning"
                        .into(),
                );
            }
            c.loglevel = l;
            Ok(())
        },
    },
    Param {
        name: "logfile",
        mutable: false,
        get: |c| c.logfile.clone(),
        set: |c, v| {
            c.logfile = v.into();
            Ok(())
        },
    },
    Param {
        name: "timeout",
        mutable: true,
        get: |c| c.timeout.to_string(),
        set: |c, v| int_in(v, 0, i32::MAX as i64).map(|n| c.timeout = n as u64),
    },
    Param {
        name: "acllog-max-len",
        mutable: true,
        get: |c| c.acllog_max_len.to_string(),
        set: |c, v| int_in(v, 0, i64::MAX).map(|n| c.acllog_max_len = n as usize),
    },
    Param {
        name: "tcp-keepalive",
        mutable: true,
        get: |c| c.tcp_keepalive.to_string(),
        set: |c, v| int_in(v, 0, i32::MAX as i64).map(|n| c.tcp_keepalive = n as u64),
    },
    Param {
        name: "proto-max-bulk-len",
        mutable: true,
        get: |c| c.proto_max_bulk_len.to_string(),
        set: |c, v| memory_at_least(v, 1 << 20).map(|n| c.proto_max_bulk_len = n),
    },
    Param {
        name: "hll-sparse-max-bytes",
        mutable: true,
        get: |c| c.hll_sparse_max_bytes.to_string(),
        // Checked against the settings table first (a memory value up to LONG_MAX).
        set: |c, v| memory(v).map(|n| c.hll_sparse_max_bytes = n),
    },
    Param {
        name: "client-query-buffer-limit",
        mutable: true,
        get: |c| c.client_query_buffer_limit.to_string(),
        set: |c, v| memory_at_least(v, 1 << 20).map(|n| c.client_query_buffer_limit = n),
    },
    Param {
        name: "readers",
        mutable: false,
        get: |c| c.readers.to_string(),
        set: |c, v| int(v).map(|n: usize| c.readers = n.max(1)),
    },
    Param {
        name: "sql-time-limit",
        mutable: true,
        get: |c| c.sql_time_limit.to_string(),
        set: |c, v| int_in(v, 0, i64::MAX).map(|n| c.sql_time_limit = n as u64),
    },
    Param {
        name: "sql-max-result-rows",
        mutable: true,
        get: |c| c.sql_max_result_rows.to_string(),
        set: |c, v| int_in(v, 0, i64::MAX).map(|n| c.sql_max_result_rows = n as usize),
    },
    Param {
        name: "sql-max-result-bytes",
        mutable: true,
        get: |c| c.sql_max_result_bytes.to_string(),
        set: |c, v| memory(v).map(|n| c.sql_max_result_bytes = n),
    },
    Param {
        name: "sql-max-memory",
        mutable: true,
        get: |c| c.sql_max_memory.to_string(),
        set: |c, v| memory(v).map(|n| c.sql_max_memory = n),
    },
    Param {
        name: "sql-max-databases",
        mutable: true,
        get: |c| c.sql_max_databases.to_string(),
        set: |c, v| int_in(v, 0, i64::MAX).map(|n| c.sql_max_databases = n as usize),
    },
    // Relis's own: Redis 7.0 has no limit (it counts Lua's memory in used_memory only).
    // 0 turns it off; a limit below the state's own needs (about 100 KB) would stop every
    // script, so 1 MB is the least.
    Param {
        name: "lua-memory-limit",
        mutable: true,
        get: |c| c.lua_memory_limit.to_string(),
        set: |c, v| {
            let n = memory(v)?;
            if n != 0 && n < 1 << 20 {
                return Err("argument must be 0 or at least 1mb".into());
            }
            c.lua_memory_limit = n;
            Ok(())
        },
    },
    // Mutable as in Redis 7.0: a client on the loopback interface may turn it off.
    Param {
        name: "protected-mode",
        mutable: true,
        get: |c| yes_no(c.protected_mode),
        set: |c, v| bool_arg(v).map(|b| c.protected_mode = b),
    },
    // Redis moves its TLS listener on CONFIG SET tls-port; Relis binds at start-up only (the
    // CONFIG SET of another port is refused, see cmd::server::config::check_listeners).
    Param {
        name: "tls-port",
        mutable: true,
        get: |c| c.tls_port.to_string(),
        set: |c, v| int_in(v, 0, 65535).map(|p| c.tls_port = p as u16),
    },
    // The other tls-* settings rebuild the TLS configuration on CONFIG SET, as in Redis.
    Param {
        name: "tls-cert-file",
        mutable: true,
        get: |c| c.tls_cert_file.clone(),
        set: |c, v| {
            c.tls_cert_file = v.into();
            Ok(())
        },
    },
    Param {
        name: "tls-key-file",
        mutable: true,
        get: |c| c.tls_key_file.clone(),
        set: |c, v| {
            c.tls_key_file = v.into();
            Ok(())
        },
    },
    Param {
        name: "tls-key-file-pass",
        mutable: true,
        get: |c| c.tls_key_file_pass.clone(),
        set: |c, v| {
            c.tls_key_file_pass = v.into();
            Ok(())
        },
    },
    Param {
        name: "tls-ca-cert-file",
        mutable: true,
        get: |c| c.tls_ca_cert_file.clone(),
        set: |c, v| {
            c.tls_ca_cert_file = v.into();
            Ok(())
        },
    },
    Param {
        name: "tls-ca-cert-dir",
        mutable: true,
        get: |c| c.tls_ca_cert_dir.clone(),
        set: |c, v| {
            c.tls_ca_cert_dir = v.into();
            Ok(())
        },
    },
    Param {
        name: "tls-auth-clients",
        mutable: true,
        get: |c| c.tls_auth_clients.name().into(),
        set: |c, v| {
            c.tls_auth_clients = match v.to_ascii_lowercase().as_str() {
                "no" => TlsAuthClients::No,
                "yes" => TlsAuthClients::Yes,
                "optional" => TlsAuthClients::Optional,
                _ => {
                    return Err(
                        "argument(s) must be one of the following: no, yes, optional".into(),
                    )
                }
            };
            Ok(())
        },
    },
    // Checked when the TLS configuration is built, as in Redis.
    Param {
        name: "tls-protocols",
        mutable: true,
        get: |c| c.tls_protocols.clone(),
        set: |c, v| {
            c.tls_protocols = v.into();
            Ok(())
        },
    },
    Param {
        name: "tls-ciphers",
        mutable: true,
        get: |c| c.tls_ciphers.clone(),
        set: |c, v| {
            c.tls_ciphers = v.into();
            Ok(())
        },
    },
    Param {
        name: "tls-ciphersuites",
        mutable: true,
        get: |c| c.tls_ciphersuites.clone(),
        set: |c, v| {
            c.tls_ciphersuites = v.into();
            Ok(())
        },
    },
    Param {
        name: "max-batch",
        mutable: false,
        get: |c| c.max_batch.to_string(),
        set: |c, v| int(v).map(|n: usize| c.max_batch = n.max(1)),
    },
    // The engine's SQLite caches: CONFIG SET resizes them while the server runs (the writer
    // after its group commits, each reader at its next read).
    Param {
        name: "writer-cache-size",
        mutable: true,
        get: |c| c.writer_cache_size.to_string(),
        set: |c, v| memory_at_least(v, 1 << 20).map(|n| c.writer_cache_size = n as u64),
    },
    Param {
        name: "reader-cache-size",
        mutable: true,
        get: |c| c.reader_cache_size.to_string(),
        set: |c, v| memory_at_least(v, 1 << 20).map(|n| c.reader_cache_size = n as u64),
    },
    Param {
        name: "mmap-size",
        mutable: true,
        get: |c| c.mmap_size.to_string(),
        set: |c, v| {
            let n = memory(v)? as u64;
            if n > relis::MAX_MMAP_SIZE {
                return Err(format!(
                    "argument must be between 0 and {} inclusive",
                    relis::MAX_MMAP_SIZE
                ));
            }
            c.mmap_size = n;
            Ok(())
        },
    },
    Param {
        name: "page-size",
        mutable: false,
        get: |c| c.page_size.to_string(),
        set: |c, v| {
            let n: u32 = int(v)?;
            if !(512..=65536).contains(&n) || !n.is_power_of_two() {
                return Err("argument must be a power of two from 512 to 65536".into());
            }
            c.page_size = n;
            Ok(())
        },
    },
];

impl Config {
    /// The limits user SQL runs under (`sql-time-limit`, `sql-max-result-rows`,
    /// `sql-max-result-bytes`).
    pub fn sql_limits(&self) -> relis::SqlLimits {
        relis::SqlLimits {
            time_limit: (self.sql_time_limit > 0)
                .then(|| std::time::Duration::from_millis(self.sql_time_limit)),
            max_rows: (self.sql_max_result_rows > 0).then_some(self.sql_max_result_rows),
            max_bytes: (self.sql_max_result_bytes > 0).then_some(self.sql_max_result_bytes),
            max_memory: (self.sql_max_memory > 0).then_some(self.sql_max_memory),
        }
    }

    /// The engine's cache sizes (`writer-cache-size`, `reader-cache-size`, `mmap-size`).
    pub fn cache_sizes(&self) -> relis::CacheSizes {
        relis::CacheSizes {
            writer: self.writer_cache_size,
            reader: self.reader_cache_size,
            mmap: self.mmap_size,
        }
    }

    /// Network threads to run: `io-threads` (read at start-up only, as in Redis).
    pub fn io_threads(&self) -> usize {
        self.get("io-threads")
            .and_then(|v| v.parse().ok())
            .unwrap_or(1)
    }

    /// Sets parameter `name` (any case, or its old name) to `value`, as a config file line or
    /// CONFIG SET would (several words are given space separated).
    ///
    /// # Errors
    /// Unknown parameter, or Redis's text for a value it would refuse.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        if let Some((setting, _)) = settings::lookup(name) {
            let current = self.value_of(setting.name);
            let mut value = setting.check(value, &current)?;
            if setting.name == "watchdog-period" {
                value = self.watchdog_period(&value);
            }
            if let Some(p) = PARAMS.iter().find(|p| p.name == setting.name) {
                return (p.set)(self, &value);
            }
            if let Some(slot) = self.passive.iter_mut().find(|(n, _)| *n == setting.name) {
                slot.1 = value;
            }
            return Ok(());
        }
        let lname = name.to_ascii_lowercase();
        if let Some(p) = PARAMS.iter().find(|p| p.name == lname) {
            return (p.set)(self, value);
        }
        Err(format!(
            "Bad directive or wrong number of arguments ('{name}' is not a known setting)"
        ))
    }

    /// Sets `name` from the words after it on a config file line (or after `--name`): one
    /// word, or several for the settings that take several, as Redis counts them.
    ///
    /// # Errors
    /// Unknown parameter, a wrong number of words, or a value Redis would refuse.
    pub fn set_words(&mut self, name: &str, words: &[String]) -> Result<(), String> {
        let multi = settings::lookup(name).is_some_and(|(s, _)| s.multi);
        if !multi && words.len() != 1 && self.access(name).is_some() {
            return Err("wrong number of arguments".into());
        }
        self.set(name, &words.join(" "))
    }

    /// Redis's software watchdog needs at least two `hz` ticks: a shorter period (but 0, off)
    /// is raised to that, as `applyWatchdogPeriod` does.
    fn watchdog_period(&self, v: &str) -> String {
        let n: i64 = v.parse().unwrap_or(0);
        let hz: i64 = self.value_of("hz").parse().unwrap_or(10).max(1);
        if n == 0 {
            return v.to_string();
        }
        n.max(1000 / hz * 2).to_string()
    }

    /// The stored value of the setting `name` (its name as in the table, not the old name).
    fn value_of(&self, name: &str) -> String {
        if let Some(p) = PARAMS.iter().find(|p| p.name == name) {
            return (p.get)(self);
        }
        self.passive
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    }

    /// How CONFIG GET shows the value of the setting `name` (as in the table).
    fn shown(&self, name: &str) -> String {
        let v = self.value_of(name);
        match name {
            // Stored letter by letter (pub/sub reads that); shown as Redis shows it.
            "notify-keyspace-events" => crate::pubsub::parse_notify_flags(&v)
                .map(crate::pubsub::notify_flags_string)
                .unwrap_or_default(),
            _ => v,
        }
    }

    /// Every (name, value) pair CONFIG GET * lists, in declaration order: Redis's settings
    /// but the hidden ones, each old name after its name, then Relis's own.
    pub fn pairs(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for s in settings::REDIS.iter().filter(|s| !s.hidden) {
            let v = self.shown(s.name);
            if !s.alias.is_empty() {
                out.push((s.alias.to_string(), v.clone()));
            }
            out.push((s.name.to_string(), v));
        }
        for p in PARAMS {
            if settings::lookup(p.name).is_none() {
                out.push((p.name.to_string(), (p.get)(self)));
            }
        }
        out
    }

    /// The value of `name` (any case, old names and hidden settings too), if it is a known
    /// parameter.
    pub fn get(&self, name: &str) -> Option<String> {
        if let Some((s, _)) = settings::lookup(name) {
            return Some(self.shown(s.name));
        }
        let lname = name.to_ascii_lowercase();
        PARAMS
            .iter()
            .find(|p| p.name == lname)
            .map(|p| (p.get)(self))
    }

    /// The name `name` is registered under (lower case; an old name stays the old name): CONFIG
    /// SET's errors about a value name it so.
    pub fn registered_name(name: &str) -> Option<&'static str> {
        if let Some((s, old)) = settings::lookup(name) {
            return Some(if old { s.alias } else { s.name });
        }
        PARAMS
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
            .map(|p| p.name)
    }

    /// Who may change `name` at run time, if it is a known parameter.
    pub fn access(&self, name: &str) -> Option<Access> {
        if let Some((s, _)) = settings::lookup(name) {
            return Some(s.access);
        }
        PARAMS
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
            .map(|p| {
                if p.mutable {
                    Access::Mutable
                } else {
                    Access::Immutable
                }
            })
    }

    /// Applies the lines of a config file.
    ///
    /// # Errors
    /// A message naming the line and the problem, in Redis's format.
    pub fn apply_file(&mut self, text: &str) -> Result<(), String> {
        let mut saves = Saves::default();
        for (i, line) in text.lines().enumerate() {
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let words = crate::args::split_config_line(t)
                .ok_or_else(|| fatal(i + 1, line, "Unbalanced quotes in configuration line"))?;
            let (name, rest) = words.split_first().expect("non-empty line");
            if name.eq_ignore_ascii_case("include") {
                return Err(fatal(i + 1, line, "include is not supported by Relis"));
            }
            // `user <name> <rules...>`: an ACL user, created at start-up (see crate::acl).
            if name.eq_ignore_ascii_case("user") {
                if rest.is_empty() {
                    return Err(fatal(i + 1, line, "wrong number of arguments"));
                }
                self.users.push(rest.to_vec());
                continue;
            }
            self.apply_words(name, rest, &mut saves)
                .map_err(|e| fatal(i + 1, line, &e))?;
        }
        Ok(())
    }

    /// One directive of a config file or the command line: Redis 7.0's ignored old names are
    /// skipped, and `save` lines add up (the first replaces the default, the next add to it).
    fn apply_words(
        &mut self,
        name: &str,
        words: &[String],
        saves: &mut Saves,
    ) -> Result<(), String> {
        if words.len() == 1
            && settings::DEPRECATED
                .iter()
                .any(|d| d.eq_ignore_ascii_case(name))
        {
            return Ok(());
        }
        if name.eq_ignore_ascii_case("save") {
            let mut all = saves.0.clone();
            all.extend(words.iter().filter(|w| !w.is_empty()).cloned());
            self.set_words(name, &[all.join(" ")])?;
            saves.0 = all;
            return Ok(());
        }
        self.set_words(name, words)
    }

    /// Applies `--name value ...` arguments.
    ///
    /// # Errors
    /// A message naming the argument and the problem.
    pub fn apply_args(&mut self, args: &[String]) -> Result<(), String> {
        let mut saves = Saves::default();
        let mut i = 0;
        while i < args.len() {
            let Some(name) = args[i].strip_prefix("--") else {
                return Err(format!(
                    "unexpected argument '{}' (settings are given as --name value)",
                    args[i]
                ));
            };
            let mut vals = Vec::new();
            i += 1;
            while i < args.len() && !args[i].starts_with("--") {
                vals.push(args[i].clone());
                i += 1;
            }
            if vals.is_empty() {
                // `--save` alone is `save ""`, as in Redis.
                if name != "save" {
                    return Err(format!("--{name} needs a value"));
                }
                vals.push(String::new());
            }
            self.apply_words(name, &vals, &mut saves)
                .map_err(|e| format!("--{name}: {e}"))?;
        }
        Ok(())
    }

    /// The database file's path, or `None` for `:memory:`.
    pub fn db_path(&self) -> Option<PathBuf> {
        (self.dbfilename != ":memory:").then(|| self.dir.join(&self.dbfilename))
    }

    /// A redis.conf-style rendering (CONFIG REWRITE): every setting Relis acts on, and those
    /// of the others that are not Redis's default; by their names, not the old ones (as Redis
    /// rewrites). `replicaof` is left out when off: it has no value that says so.
    pub fn render(&self) -> String {
        let mut out = String::from("# Written by Relis CONFIG REWRITE\n");
        for s in settings::REDIS {
            let v = self.shown(s.name);
            let acted_on = PARAMS.iter().any(|p| p.name == s.name);
            if (acted_on || v != s.default) && !(s.name == "replicaof" && v.is_empty()) {
                let _ = writeln!(out, "{} {}", s.name, quote(&v));
            }
        }
        for p in PARAMS.iter().filter(|p| settings::lookup(p.name).is_none()) {
            // The file must start the server again: the backend's password stays in it.
            let v = match p.name {
                "backend" => self.backend.clone(),
                _ => (p.get)(self),
            };
            let _ = writeln!(out, "{} {}", p.name, quote(&v));
        }
        out
    }
}

/// A PostgreSQL URL as CONFIG GET shows it: the password (after the user in the credentials,
/// and any `password=` parameter) replaced by `(redacted)`. The credentials end at the first
/// `@`, as the PostgreSQL client reads them, so what is hidden is exactly what it would send.
/// Redis shows `requirepass` and `masterauth` to CONFIG GET; the backend's password is
/// hidden because it opens the whole shared database to whoever reads it, on every node, and
/// it cannot be changed at run time, so nobody needs to read it back. Anything else is
/// returned as it is (`sqlite`).
pub fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let mut out = String::from(&url[..scheme_end]);
    let mut rest = &url[scheme_end..];
    if let Some(at) = rest.find('@') {
        let creds = &rest[..at];
        match creds.find(':') {
            Some(colon) => {
                out.push_str(&creds[..=colon]);
                out.push_str("(redacted)");
            }
            None => out.push_str(creds),
        }
        rest = &rest[at..];
    }
    let (before, params) = match rest.find('?') {
        Some(q) => (&rest[..=q], Some(&rest[q + 1..])),
        None => (rest, None),
    };
    out.push_str(before);
    if let Some(params) = params {
        let shown: Vec<String> = params
            .split('&')
            .map(|kv| match kv.split_once('=') {
                Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=(redacted)"),
                _ => kv.to_string(),
            })
            .collect();
        out.push_str(&shown.join("&"));
    }
    out
}

/// The `save` pairs read so far from one config file or command line: Redis adds each `save`
/// line to the ones before.
#[derive(Default)]
struct Saves(Vec<String>);

fn quote(v: &str) -> String {
    if v.is_empty() || v.contains(|c: char| c.is_whitespace() || c == '"' || c == '\'') {
        format!("\"{}\"", v.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        v.to_string()
    }
}

fn fatal(line_no: usize, line: &str, msg: &str) -> String {
    format!(
        "\n*** FATAL CONFIG FILE ERROR (Relis {}) ***\nReading the configuration file, at line {line_no}\n>>> '{}'\n{msg}",
        env!("CARGO_PKG_VERSION"),
        line.trim()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_then_args() {
        let mut c = Config::default();
        c.apply_file("# comment\nport 7000\ndir \"/tmp/x y\"\ndurability full\nsave \"\"\n")
            .unwrap();
        c.apply_args(&[
            "--port".into(),
            "7001".into(),
            "--bind".into(),
            "0.0.0.0".into(),
            "::1".into(),
        ])
        .unwrap();
        assert_eq!(c.port, 7001);
        assert_eq!(c.dir, PathBuf::from("/tmp/x y"));
        assert_eq!(c.durability, Durability::Full);
        assert_eq!(c.bind, vec!["0.0.0.0", "::1"]);
    }

    #[test]
    fn observability_settings() {
        let mut c = Config::default();
        assert_eq!(c.get("slowlog-log-slower-than").as_deref(), Some("10000"));
        assert_eq!(c.get("slowlog-max-len").as_deref(), Some("128"));
        assert_eq!(c.get("latency-monitor-threshold").as_deref(), Some("0"));
        assert_eq!(c.get("latency-tracking").as_deref(), Some("yes"));
        assert_eq!(
            c.get("latency-tracking-info-percentiles").as_deref(),
            Some("50 99 99.9")
        );
        c.apply_file("latency-tracking-info-percentiles 0 100 12.3456\nslowlog-max-len 5\n")
            .unwrap();
        assert_eq!(c.latency_tracking_info_percentiles, [0.0, 100.0, 12.3456]);
        assert_eq!(
            c.get("latency-tracking-info-percentiles").as_deref(),
            Some("0 100 12.3456")
        );
        assert_eq!(c.slowlog_max_len, 5);
        c.set("latency-tracking-info-percentiles", "").unwrap();
        assert!(c.latency_tracking_info_percentiles.is_empty());
        c.set("latency-tracking", "NO").unwrap();
        assert_eq!(c.get("latency-tracking").as_deref(), Some("no"));
        // Redis's texts.
        let mut e = |n: &str, v: &str| c.set(n, v).unwrap_err();
        assert_eq!(
            e("slowlog-log-slower-than", "-2"),
            "argument must be between -1 and 9223372036854775807 inclusive"
        );
        assert_eq!(
            e("slowlog-max-len", "-1"),
            "argument must be between 0 and 9223372036854775807 inclusive"
        );
        assert_eq!(
            e("latency-monitor-threshold", "abc"),
            "argument couldn't be parsed into an integer"
        );
        assert_eq!(
            e("latency-tracking-info-percentiles", "50 x"),
            "Invalid latency-tracking-info-percentiles parameters"
        );
        assert_eq!(
            e("latency-tracking-info-percentiles", "100.5"),
            "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
        );
        assert_eq!(
            e("latency-tracking", "maybe"),
            "argument must be 'yes' or 'no'"
        );
    }

    #[test]
    fn backend_is_sqlite_or_a_postgres_url() {
        let mut c = Config::default();
        assert_eq!(c.get("backend").as_deref(), Some("sqlite"));
        c.apply_args(&["--backend".into(), "postgres://relis@db:5432/relis".into()])
            .unwrap();
        assert_eq!(c.backend, "postgres://relis@db:5432/relis");
        c.set("backend", "postgresql://h/d").unwrap();
        c.set("backend", "SQLite").unwrap();
        assert_eq!(c.backend, "sqlite");
        for bad in ["", "mysql://h/d", "postgres://", "pg", "/tmp/x.db"] {
            let e = c.set("backend", bad).unwrap_err();
            assert!(e.contains("'sqlite' or a URL"), "{bad}: {e}");
        }
        assert_eq!(c.backend, "sqlite");
    }

    #[test]
    fn backend_password_is_redacted_except_in_rewrite() {
        let mut c = Config::default();
        for (given, shown) in [
            (
                "postgres://relis:s3cr/et@db:5432/relis",
                "postgres://relis:(redacted)@db:5432/relis",
            ),
            (
                "postgresql://u:p@h/d?sslmode=disable&password=other",
                "postgresql://u:(redacted)@h/d?sslmode=disable&password=(redacted)",
            ),
            ("postgres://relis@db/relis", "postgres://relis@db/relis"),
            (
                "postgres://h/d?PassWord=x",
                "postgres://h/d?PassWord=(redacted)",
            ),
            ("postgres://u:@h/d", "postgres://u:(redacted)@h/d"),
        ] {
            c.set("backend", given).unwrap();
            assert_eq!(c.backend, given);
            assert_eq!(c.get("backend").as_deref(), Some(shown), "{given}");
            let listed = c.pairs().into_iter().find(|(n, _)| n == "backend");
            assert_eq!(listed.map(|(_, v)| v).as_deref(), Some(shown));
            // The rewritten file must start the server again: it keeps the password.
            assert!(c
                .render()
                .contains(&format!("\nbackend {}\n", quote(given))));
        }
    }

    #[test]
    fn page_size_is_a_power_of_two_in_sqlites_range() {
        let mut c = Config::default();
        assert_eq!(c.page_size, 2048);
        c.apply_args(&["--page-size".into(), "4096".into()])
            .unwrap();
        assert_eq!(c.page_size, 4096);
        for bad in ["1000", "256", "131072", "x"] {
            assert!(c.set("page-size", bad).is_err(), "{bad}");
        }
        assert_eq!(c.page_size, 4096);
    }

    #[test]
    fn cache_sizes_are_memory_values_in_range() {
        let mut c = Config::default();
        assert_eq!(c.cache_sizes(), relis::CacheSizes::default());
        c.apply_args(&[
            "--writer-cache-size".into(),
            "64mb".into(),
            "--reader-cache-size".into(),
            "2mb".into(),
            "--mmap-size".into(),
            "1gb".into(),
        ])
        .unwrap();
        let want = relis::CacheSizes {
            writer: 64 << 20,
            reader: 2 << 20,
            mmap: 1 << 30,
        };
        assert_eq!(c.cache_sizes(), want);
        assert_eq!(c.get("writer-cache-size").as_deref(), Some("67108864"));
        assert_eq!(c.get("mmap-size").as_deref(), Some("1073741824"));
        c.set("mmap-size", "0").unwrap();
        assert_eq!(c.mmap_size, 0);
        let mut e = |n: &str, v: &str| c.set(n, v).unwrap_err();
        let least = "argument must be between 1048576 and 9223372036854775807 inclusive";
        assert_eq!(e("writer-cache-size", "1000kb"), least);
        assert_eq!(e("reader-cache-size", "0"), least);
        assert_eq!(
            e("reader-cache-size", "-1"),
            "argument must be a memory value"
        );
        assert_eq!(
            e("mmap-size", "2gb"),
            "argument must be between 0 and 2147418112 inclusive"
        );
        assert_eq!(e("mmap-size", "lots"), "argument must be a memory value");
        assert_eq!(c.cache_sizes(), relis::CacheSizes { mmap: 0, ..want });
    }

    #[test]
    fn hll_sparse_max_bytes_is_acted_on() {
        let mut c = Config::default();
        assert_eq!(c.hll_sparse_max_bytes, 3000);
        assert_eq!(c.get("hll-sparse-max-bytes").as_deref(), Some("3000"));
        c.set("hll-sparse-max-bytes", "1kb").unwrap();
        assert_eq!(c.hll_sparse_max_bytes, 1024);
        assert_eq!(c.get("hll-sparse-max-bytes").as_deref(), Some("1024"));
        c.set("hll-sparse-max-bytes", "0").unwrap();
        assert_eq!(c.hll_sparse_max_bytes, 0);
        assert!(c.set("hll-sparse-max-bytes", "-1").is_err());
        assert!(c.set("hll-sparse-max-bytes", "many").is_err());
        assert_eq!(c.hll_sparse_max_bytes, 0);
    }

    #[test]
    fn unknown_directive_is_named() {
        let mut c = Config::default();
        let e = c.apply_file("port 1\nbogus-setting 3\n").unwrap_err();
        assert!(e.contains("at line 2"), "{e}");
        assert!(e.contains("bogus-setting"), "{e}");
        let e = c.apply_args(&["--nope".into(), "1".into()]).unwrap_err();
        assert!(e.contains("nope"), "{e}");
        assert!(c.apply_file("port abc\n").is_err());
    }

    #[test]
    fn values_checked_as_redis_checks_them() {
        let mut c = Config::default();
        let mut e = |n: &str, v: &str| c.set(n, v).unwrap_err();
        assert_eq!(
            e("maxclients", "0"),
            "argument must be between 1 and 4294967295 inclusive"
        );
        assert_eq!(
            e("timeout", "-1"),
            "argument must be between 0 and 2147483647 inclusive"
        );
        assert_eq!(
            e("timeout", "x"),
            "argument couldn't be parsed into an integer"
        );
        assert_eq!(
            e("tracking-table-max-keys", "-1"),
            "argument must be between 0 and 9223372036854775807 inclusive"
        );
        assert_eq!(
            e("tracking-table-max-keys", "1k"),
            "argument couldn't be parsed into an integer"
        );
        assert_eq!(
            e("proto-max-bulk-len", "1"),
            "argument must be between 1048576 and 9223372036854775807 inclusive"
        );
        assert_eq!(e("appendonly", "maybe"), "argument must be 'yes' or 'no'");
        assert_eq!(
            e("sql-max-databases", "-1"),
            "argument must be between 0 and 9223372036854775807 inclusive"
        );
        assert_eq!(
            e("sql-max-databases", "many"),
            "argument couldn't be parsed into an integer"
        );
        assert_eq!(e("save", "abc"), "Invalid save parameters");
        assert!(e("maxmemory-policy", "x").starts_with("argument(s) must be one of"));
        assert_eq!(e("maxmemory", "1x"), "argument must be a memory value");
        assert_eq!(
            e("sql-max-result-bytes", "-1"),
            "argument must be a memory value"
        );
        assert_eq!(
            e("lua-memory-limit", "1000"),
            "argument must be 0 or at least 1mb"
        );
        assert_eq!(
            e("lua-memory-limit", "lots"),
            "argument must be a memory value"
        );
        assert_eq!(
            e("sql-max-memory", "lots"),
            "argument must be a memory value"
        );
        c.set("lua-memory-limit", "256mb").unwrap();
        assert_eq!(c.get("lua-memory-limit").as_deref(), Some("268435456"));
        c.set("lua-memory-limit", "0").unwrap();
        assert_eq!(c.lua_memory_limit, 0);
        assert_eq!(c.get("sql-max-result-bytes").as_deref(), Some("67108864"));
        c.set("sql-max-result-bytes", "1mb").unwrap();
        assert_eq!(c.get("sql-max-result-bytes").as_deref(), Some("1048576"));
        assert_eq!(c.sql_limits().max_bytes, Some(1 << 20));
        c.set("sql-max-result-bytes", "0").unwrap();
        assert_eq!(c.sql_limits().max_bytes, None);
        assert_eq!(c.get("sql-max-memory").as_deref(), Some("268435456"));
        c.set("sql-max-memory", "32mb").unwrap();
        assert_eq!(c.sql_limits().max_memory, Some(32 << 20));
        c.set("sql-max-memory", "0").unwrap();
        assert_eq!(c.sql_limits().max_memory, None);
        c.set("appendonly", "YES").unwrap();
        c.set("sql-max-databases", "64").unwrap();
        assert_eq!(c.sql_max_databases, 64);
        c.set("maxmemory", "1kb").unwrap();
        c.set("save", "3600 1 300 100").unwrap();
        // CONFIG SET splits on single spaces, as Redis does: two spaces make an empty word.
        assert_eq!(
            c.set("save", "3600  1"),
            Err("Invalid save parameters".into())
        );
        assert_eq!(c.get("appendonly").as_deref(), Some("yes"));
        assert_eq!(c.get("maxmemory").as_deref(), Some("1024"));
        assert_eq!(c.get("save").as_deref(), Some("3600 1 300 100"));
        c.set("save", "").unwrap();
    }

    #[test]
    fn old_names_work_in_files_and_arguments() {
        let mut c = Config::default();
        c.apply_file("zset-max-ziplist-entries 100\nslave-read-only no\nlua-time-limit 250\nslaveof 10.0.0.1 6380\n")
            .unwrap();
        c.apply_args(&["--hash-max-ziplist-value".into(), "1kb".into()])
            .unwrap();
        for (name, value) in [
            ("zset-max-listpack-entries", "100"),
            ("replica-read-only", "no"),
            ("busy-reply-threshold", "250"),
            ("replicaof", "10.0.0.1 6380"),
            ("hash-max-listpack-value", "1024"),
            ("hash-max-ziplist-value", "1024"),
        ] {
            assert_eq!(c.get(name).as_deref(), Some(value), "{name}");
        }
        // One setting: the name changes what the old name reads.
        c.set("list-max-listpack-size", "-3").unwrap();
        assert_eq!(c.get("LIST-MAX-ZIPLIST-SIZE").as_deref(), Some("-3"));
    }

    #[test]
    fn config_file_lines_count_words_as_redis_does() {
        let mut c = Config::default();
        // Redis 7.0 ignores these old names with one value.
        c.apply_file("list-max-ziplist-entries 5\nlua-replicate-commands yes\n")
            .unwrap();
        assert!(c.apply_file("list-max-ziplist-entries 5 6\n").is_err());
        let e = c.apply_file("requirepass a b\n").unwrap_err();
        assert!(e.ends_with("\nwrong number of arguments"), "{e}");
        let e = c
            .apply_args(&["--slaveof".into(), "host".into()])
            .unwrap_err();
        assert_eq!(e, "--slaveof: wrong number of arguments");
        // `save` lines add up; `--save` alone is `save ""`.
        c.apply_file("save 3600 1\nsave 300 100\nsave 60 10000\n")
            .unwrap();
        assert_eq!(c.get("save").as_deref(), Some("3600 1 300 100 60 10000"));
        c.apply_args(&["--save".into()]).unwrap();
        assert_eq!(c.get("save").as_deref(), Some(""));
        c.apply_args(&[
            "--save".into(),
            "10".into(),
            "1".into(),
            "--save".into(),
            "20".into(),
            "2".into(),
        ])
        .unwrap();
        assert_eq!(c.get("save").as_deref(), Some("10 1 20 2"));
        // Immutable settings are set by files and arguments.
        c.apply_file("enable-debug-command local\ndaemonize no\n")
            .unwrap();
        assert_eq!(c.get("enable-debug-command").as_deref(), Some("local"));
        let e = c.apply_file("enable-debug-command maybe\n").unwrap_err();
        assert!(
            e.ends_with("argument(s) must be one of the following: no, yes, local"),
            "{e}"
        );
    }

    #[test]
    fn buffer_limit_seconds_are_a_number() {
        let mut c = Config::default();
        let bad = "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
        assert_eq!(
            c.set("client-output-buffer-limit", "normal 1 1 x"),
            Err(bad.into())
        );
        assert_eq!(
            c.set("client-output-buffer-limit", "normal 1 1 -1"),
            Err(bad.into())
        );
        c.set("client-output-buffer-limit", "normal 1 2 010")
            .unwrap();
        assert!(c
            .get("client-output-buffer-limit")
            .unwrap()
            .starts_with("normal 1 2 10 "));
    }

    #[test]
    fn memory_units() {
        assert_eq!(memory("1gb").unwrap(), 1 << 30);
        assert_eq!(memory("512mb").unwrap(), 512 << 20);
        assert_eq!(memory("100").unwrap(), 100);
        assert!(memory("x").is_err());
    }
}
