//! Configuration: redis.conf-style `name value` lines from a file, then `--name value` overrides
//! from the command line, and CONFIG GET/SET at run time. Every parameter is declared once in
//! [`PARAMS`], with how to read and write it.

use relis::Durability;
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
    /// Largest query buffer per client.
    pub client_query_buffer_limit: usize,
    /// Reader threads.
    pub readers: usize,
    /// Write jobs per group commit, at most.
    pub max_batch: usize,
    /// The page size of a new database file.
    pub page_size: u32,
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
    /// Most keys client-side caching remembers (0: no limit); past it keys are invalidated
    /// and forgotten, as in Redis.
    pub tracking_table_max_keys: u64,
    /// Parameters Redis has that Relis accepts and reports but does not act on
    /// (clients and tools read them): name -> value.
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
            loglevel: "notice".into(),
            logfile: String::new(),
            timeout: 0,
            tcp_keepalive: 300,
            acllog_max_len: crate::acl::LOG_MAX,
            proto_max_bulk_len: 512 * 1024 * 1024,
            client_query_buffer_limit: 1024 * 1024 * 1024,
            readers: relis::Options::default().readers,
            max_batch: 1024,
            page_size: relis::PAGE_SIZE,
            sql_time_limit: 5000,
            sql_max_result_rows: 1_000_000,
            sql_max_result_bytes: relis::DEFAULT_MAX_RESULT_BYTES,
            sql_max_memory: relis::DEFAULT_MAX_MEMORY,
            sql_max_databases: 16,
            lua_memory_limit: 1 << 30,
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
            passive: PASSIVE
                .iter()
                .map(|(n, v)| (*n, (*v).to_string()))
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

/// Redis parameters that clients and tools read (redis-benchmark asks for `save` and
/// `appendonly`); Relis reports these values. Relis is always durable through SQLite, so
/// `appendonly` and `save` describe no separate persistence.
const PASSIVE: &[(&str, &str)] = &[
    ("save", ""),
    ("appendonly", "no"),
    ("appendfsync", "everysec"),
    ("maxmemory", "0"),
    ("maxmemory-policy", "noeviction"),
    ("hz", "10"),
    ("notify-keyspace-events", ""),
    ("lua-time-limit", "5000"),
    ("busy-reply-threshold", "5000"),
    ("slowlog-log-slower-than", "10000"),
    ("slowlog-max-len", "128"),
    ("latency-tracking", "yes"),
    ("daemonize", "no"),
    ("supervised", "no"),
    ("pidfile", ""),
    ("unixsocket", ""),
    ("cluster-enabled", "no"),
    ("replica-read-only", "yes"),
    ("lfu-log-factor", "10"),
    ("lfu-decay-time", "1"),
    ("list-max-listpack-size", "-2"),
    ("hash-max-listpack-entries", "512"),
    ("hash-max-listpack-value", "64"),
    ("zset-max-listpack-value", "64"),
    ("list-compress-depth", "0"),
    ("set-max-intset-entries", "512"),
    ("zset-max-listpack-entries", "128"),
    (
        "client-output-buffer-limit",
        "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
    ),
    ("tcp-backlog", "511"),
    ("io-threads", "1"),
    ("activerehashing", "yes"),
    ("stop-writes-on-bgsave-error", "yes"),
    ("rdbcompression", "yes"),
    ("lazyfree-lazy-user-del", "no"),
    // TLS for replication and cluster links, and OpenSSL tuning rustls has no knob for.
    ("tls-replication", "no"),
    ("tls-cluster", "no"),
    ("tls-client-cert-file", ""),
    ("tls-client-key-file", ""),
    ("tls-client-key-file-pass", ""),
    ("tls-dh-params-file", ""),
    ("tls-prefer-server-ciphers", "no"),
    ("tls-session-caching", "yes"),
    ("tls-session-cache-size", "20480"),
    ("tls-session-cache-timeout", "300"),
];

/// How a parameter is read and written.
pub struct Param {
    /// Name as in redis.conf.
    pub name: &'static str,
    /// Whether CONFIG SET may change it at run time.
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

/// Checks (and normalises, as CONFIG GET will show it) a value for a passive parameter, the
/// way Redis checks that parameter's type.
fn check_passive(name: &str, value: &str) -> Result<String, String> {
    const BOOLS: &[&str] = &[
        "appendonly",
        "latency-tracking",
        "tls-replication",
        "tls-cluster",
        "tls-prefer-server-ciphers",
        "tls-session-caching",
        "daemonize",
        "cluster-enabled",
        "replica-read-only",
        "activerehashing",
        "stop-writes-on-bgsave-error",
        "rdbcompression",
        "lazyfree-lazy-user-del",
    ];
    const INTS: &[(&str, i64, i64)] = &[
        ("hz", 0, i32::MAX as i64),
        ("lua-time-limit", 0, i64::MAX),
        ("busy-reply-threshold", 0, i64::MAX),
        ("slowlog-log-slower-than", -1, i64::MAX),
        ("slowlog-max-len", 0, i64::MAX),
        ("lfu-log-factor", 0, i32::MAX as i64),
        ("lfu-decay-time", 0, i32::MAX as i64),
        ("list-max-listpack-size", i32::MIN as i64, i32::MAX as i64),
        ("hash-max-listpack-entries", 0, i64::MAX),
        ("set-max-intset-entries", 0, i64::MAX),
        ("zset-max-listpack-entries", 0, i64::MAX),
        ("hash-max-listpack-value", 0, i64::MAX),
        ("zset-max-listpack-value", 0, i64::MAX),
        ("list-compress-depth", 0, i32::MAX as i64),
        ("tcp-backlog", 0, i32::MAX as i64),
        ("io-threads", 1, 128),
        ("tls-session-cache-size", 0, i32::MAX as i64),
        ("tls-session-cache-timeout", 0, i32::MAX as i64),
    ];
    const POLICIES: &[&str] = &[
        "volatile-lru",
        "volatile-lfu",
        "volatile-random",
        "volatile-ttl",
        "allkeys-lru",
        "allkeys-lfu",
        "allkeys-random",
        "noeviction",
    ];
    if BOOLS.contains(&name) {
        return match value.to_ascii_lowercase().as_str() {
            v @ ("yes" | "no") => Ok(v.to_string()),
            _ => Err("argument must be 'yes' or 'no'".into()),
        };
    }
    if let Some((_, min, max)) = INTS.iter().find(|(n, _, _)| *n == name) {
        return int_in(value, *min, *max).map(|n| n.to_string());
    }
    match name {
        "maxmemory" => memory(value).map(|n| n.to_string()),
        "maxmemory-policy" => {
            let v = value.to_ascii_lowercase();
            if POLICIES.contains(&v.as_str()) {
                Ok(v)
            } else {
                Err(format!(
                    "argument(s) must be one of the following: {}",
                    POLICIES.join(", ")
                ))
            }
        }
        "save" => {
            let words: Vec<&str> = value.split_whitespace().collect();
            let ok = words.len().is_multiple_of(2)
                && words
                    .iter()
                    .all(|w| relis::parse_i64(w.as_bytes()).is_some_and(|n| n >= 0));
            if ok {
                Ok(words.join(" "))
            } else {
                Err("Invalid save parameters".into())
            }
        }
        _ => Ok(value.to_string()),
    }
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

/// Every parameter Relis acts on.
pub const PARAMS: &[Param] = &[
    Param {
        name: "port",
        mutable: false,
        get: |c| c.port.to_string(),
        set: |c, v| int(v).map(|p| c.port = p),
    },
    Param {
        name: "bind",
        mutable: false,
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
    // Redis moves its TLS listener on CONFIG SET tls-port; Relis binds at start-up only.
    Param {
        name: "tls-port",
        mutable: false,
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

    /// Network threads to run: `io-threads` (read at start-up only, as in Redis).
    pub fn io_threads(&self) -> usize {
        self.get("io-threads")
            .and_then(|v| v.parse().ok())
            .unwrap_or(1)
    }

    /// Sets parameter `name` (any case) to `value`, as a config file line would.
    ///
    /// # Errors
    /// Unknown parameter, or a value that does not parse.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        let lname = name.to_ascii_lowercase();
        if let Some(p) = PARAMS.iter().find(|p| p.name == lname) {
            return (p.set)(self, value);
        }
        if let Some(slot) = self.passive.iter_mut().find(|(n, _)| *n == lname) {
            slot.1 = match lname.as_str() {
                // Pub/sub reads these two (crate::pubsub::PubSub::configure).
                // Kept letter by letter (`A` hides `n` when shown, see `pairs`).
                "notify-keyspace-events" => crate::pubsub::parse_notify_flags(value)
                    .map(crate::pubsub::notify_flags_letters)
                    .ok_or("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")?,
                "client-output-buffer-limit" => crate::pubsub::parse_buffer_limits(value, &slot.1)?,
                _ => check_passive(&lname, value)?,
            };
            // `lua-time-limit` is the old name of `busy-reply-threshold`: one setting.
            let alias = match lname.as_str() {
                "lua-time-limit" => Some("busy-reply-threshold"),
                "busy-reply-threshold" => Some("lua-time-limit"),
                _ => None,
            };
            if let Some(alias) = alias {
                let v = slot.1.clone();
                if let Some(other) = self.passive.iter_mut().find(|(n, _)| *n == alias) {
                    other.1 = v;
                }
            }
            return Ok(());
        }
        Err(format!(
            "Bad directive or wrong number of arguments ('{name}' is not a known setting)"
        ))
    }

    /// Every (name, value) pair, in declaration order.
    pub fn pairs(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = PARAMS
            .iter()
            .map(|p| (p.name.to_string(), (p.get)(self)))
            .collect();
        out.extend(self.passive.iter().map(|(n, v)| {
            let v = match *n {
                // Shown as Redis shows it.
                "notify-keyspace-events" => crate::pubsub::parse_notify_flags(v)
                    .map(crate::pubsub::notify_flags_string)
                    .unwrap_or_default(),
                _ => v.clone(),
            };
            (n.to_string(), v)
        }));
        out
    }

    /// The value of `name`, if it is a known parameter.
    pub fn get(&self, name: &str) -> Option<String> {
        let lname = name.to_ascii_lowercase();
        self.pairs()
            .into_iter()
            .find(|(n, _)| *n == lname)
            .map(|(_, v)| v)
    }

    /// Whether `name` may be changed at run time.
    pub fn is_mutable(name: &str) -> Option<bool> {
        let lname = name.to_ascii_lowercase();
        if let Some(p) = PARAMS.iter().find(|p| p.name == lname) {
            return Some(p.mutable);
        }
        PASSIVE.iter().any(|(n, _)| *n == lname).then_some(true)
    }

    /// Applies the lines of a config file.
    ///
    /// # Errors
    /// A message naming the line and the problem, in Redis's format.
    pub fn apply_file(&mut self, text: &str) -> Result<(), String> {
        for (i, line) in text.lines().enumerate() {
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let words = split_config_line(t)
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
            if rest.is_empty() && !name.eq_ignore_ascii_case("save") {
                return Err(fatal(i + 1, line, "wrong number of arguments"));
            }
            self.set(name, &rest.join(" "))
                .map_err(|e| fatal(i + 1, line, &e))?;
        }
        Ok(())
    }

    /// Applies `--name value ...` arguments.
    ///
    /// # Errors
    /// A message naming the argument and the problem.
    pub fn apply_args(&mut self, args: &[String]) -> Result<(), String> {
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
            if vals.is_empty() && name != "save" {
                return Err(format!("--{name} needs a value"));
            }
            self.set(name, &vals.join(" "))
                .map_err(|e| format!("--{name}: {e}"))?;
        }
        Ok(())
    }

    /// The database file's path, or `None` for `:memory:`.
    pub fn db_path(&self) -> Option<PathBuf> {
        (self.dbfilename != ":memory:").then(|| self.dir.join(&self.dbfilename))
    }

    /// A redis.conf-style rendering of every parameter (CONFIG REWRITE).
    pub fn render(&self) -> String {
        let mut out = String::from("# Written by Relis CONFIG REWRITE\n");
        for (n, v) in self.pairs() {
            let _ = writeln!(out, "{n} {}", quote(&v));
        }
        out
    }
}

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

/// Splits a config (or ACL file) line into words, honouring "double" and 'single' quotes
/// (Redis's `sdssplitargs`).
pub fn split_config_line(s: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(&c) = chars.peek() else { break };
        let mut word = String::new();
        if c == '"' || c == '\'' {
            chars.next();
            let mut closed = false;
            while let Some(ch) = chars.next() {
                if ch == c {
                    closed = true;
                    break;
                }
                if ch == '\\' && c == '"' {
                    match chars.next()? {
                        'n' => word.push('\n'),
                        't' => word.push('\t'),
                        'r' => word.push('\r'),
                        o => word.push(o),
                    }
                } else {
                    word.push(ch);
                }
            }
            if !closed {
                return None;
            }
        } else {
            while let Some(&ch) = chars.peek() {
                if ch.is_whitespace() {
                    break;
                }
                word.push(ch);
                chars.next();
            }
        }
        out.push(word);
    }
    Some(out)
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
        c.set("save", "3600  1 300 100").unwrap();
        assert_eq!(c.get("appendonly").as_deref(), Some("yes"));
        assert_eq!(c.get("maxmemory").as_deref(), Some("1024"));
        assert_eq!(c.get("save").as_deref(), Some("3600 1 300 100"));
        c.set("save", "").unwrap();
    }

    #[test]
    fn memory_units() {
        assert_eq!(memory("1gb").unwrap(), 1 << 30);
        assert_eq!(memory("512mb").unwrap(), 512 << 20);
        assert_eq!(memory("100").unwrap(), 100);
        assert!(memory("x").is_err());
    }
}
