//! CONFIG GET pattern [pattern ...] | SET name value [name value ...] | RESETSTAT | REWRITE |
//! HELP — read and change the configuration at run time.
//! <https://redis.io/commands/config-get/>, <https://redis.io/commands/config-set/>,
//! <https://redis.io/commands/config-resetstat/>, <https://redis.io/commands/config-rewrite/>
//!
//! Parameters are declared in `config.rs`; GET matches them with Redis's glob (no case), SET is
//! all or nothing: every value is applied to a copy that replaces the live configuration only
//! when all of them are valid.

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::config::settings::Access;
use crate::config::Config;
use crate::error::CmdError;
use crate::state::Shared;
use bytes::Bytes;
use resp::Frame;
use std::sync::atomic::Ordering;

const ADMIN: crate::cmd::Flags = Spec::flags(&["admin", "noscript", "loading", "stale"]);
const ADMIN_ACL: crate::cmd::Cats = Spec::acl(&["admin", "slow", "dangerous"]);

/// CONFIG's subcommands.
pub const SUBCOMMANDS: &[Spec] = &[
    Spec {
        name: "config|get",
        arity: -3,
        flags: ADMIN,
        acl: ADMIN_ACL,
        group: "server",
        since: "2.0.0",
        summary: "Get the values of configuration parameters",
        complexity: "O(N) when N is the number of configuration parameters provided",
        parse: ConfigCmd::parse_get,
        ..Spec::BASE
    },
    Spec {
        name: "config|set",
        arity: -4,
        flags: ADMIN,
        acl: ADMIN_ACL,
        group: "server",
        since: "2.0.0",
        summary: "Set configuration parameters to the given values",
        complexity: "O(N) when N is the number of configuration parameters provided",
        parse: ConfigCmd::parse_set,
        tips: &["request_policy:all_nodes", "response_policy:all_succeeded"],
        ..Spec::BASE
    },
    Spec {
        name: "config|resetstat",
        arity: 2,
        flags: ADMIN,
        acl: ADMIN_ACL,
        group: "server",
        since: "2.0.0",
        summary: "Reset the stats returned by INFO",
        parse: |a| ConfigCmd::parse_plain(a, ConfigCmd::ResetStat),
        ..Spec::BASE
    },
    Spec {
        name: "config|rewrite",
        arity: 2,
        flags: ADMIN,
        acl: ADMIN_ACL,
        group: "server",
        since: "2.8.0",
        summary: "Rewrite the configuration file with the in memory configuration",
        parse: |a| ConfigCmd::parse_plain(a, ConfigCmd::Rewrite),
        ..Spec::BASE
    },
    Spec {
        name: "config|help",
        arity: 2,
        flags: Spec::flags(&["loading", "stale"]),
        acl: Spec::acl(&["slow"]),
        group: "server",
        since: "5.0.0",
        summary: "Show helpful text about the different subcommands",
        parse: |a| ConfigCmd::parse_plain(a, ConfigCmd::Help),
        ..Spec::BASE
    },
];

/// CONFIG's declaration (a container).
pub const SPEC: Spec = Spec {
    name: "config",
    arity: -2,
    group: "server",
    since: "2.0.0",
    summary: "A container for server configuration commands",
    complexity: "Depends on subcommand.",
    subcommands: SUBCOMMANDS,
    ..Spec::BASE
};

/// A CONFIG subcommand.
#[derive(Debug, PartialEq)]
pub enum ConfigCmd {
    /// CONFIG GET patterns.
    Get(Vec<String>),
    /// CONFIG SET pairs, as given.
    Set(Vec<(String, String)>),
    /// CONFIG RESETSTAT.
    ResetStat,
    /// CONFIG REWRITE.
    Rewrite,
    /// CONFIG HELP.
    Help,
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

impl ConfigCmd {
    fn parse_plain(args: &mut Args, cmd: ConfigCmd) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(cmd)
    }

    fn parse_get(args: &mut Args) -> Result<Parsed, CmdError> {
        let pats = args.rest().iter().map(|p| text(p)).collect();
        Parsed::conn(ConfigCmd::Get(pats))
    }

    fn parse_set(args: &mut Args) -> Result<Parsed, CmdError> {
        if !args.remaining().is_multiple_of(2) {
            return Err(CmdError::Syntax);
        }
        let rest = args.rest();
        let pairs = rest.chunks(2).map(|p| (text(&p[0]), text(&p[1]))).collect();
        Parsed::conn(ConfigCmd::Set(pairs))
    }
}

/// CONFIG GET: for each pattern, the exact parameter (named as the client spelled it; hidden
/// settings too) when it has no glob characters, else every parameter it matches (old names
/// too, hidden settings not); each name once, compared without case, as Redis's dict does.
pub fn get(config: &Config, patterns: &[String]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let listed =
        |out: &[(String, String)], n: &str| out.iter().any(|(o, _)| o.eq_ignore_ascii_case(n));
    let mut all = None;
    for pat in patterns {
        if !pat.contains(['*', '?', '[']) {
            if listed(&out, pat) {
                continue;
            }
            if let Some(v) = config.get(pat) {
                out.push((pat.clone(), v));
            }
            continue;
        }
        for (n, v) in all.get_or_insert_with(|| config.pairs()).iter() {
            if relis::glob::glob_match(pat.as_bytes(), n.as_bytes(), true) && !listed(&out, n) {
                out.push((n.clone(), v.clone()));
            }
        }
    }
    out
}

/// CONFIG SET: checks every name, then applies every value, in order, to a copy of `config`.
/// `local`: the client is on the loopback interface (`enable-protected-configs local`).
///
/// # Errors
/// Redis's texts for unknown, immutable, protected or repeated parameters and bad values. As
/// in Redis, the first problem found is the one reported.
pub fn set(config: &Config, pairs: &[(String, String)], local: bool) -> Result<Config, CmdError> {
    let protected_allowed = match config.get("enable-protected-configs").as_deref() {
        Some("yes") => true,
        Some("local") => local,
        _ => false,
    };
    // A name and its old name are two entries to Redis (both may be set in one call); the same
    // name twice, in any case, is a duplicate.
    let mut seen: Vec<&str> = Vec::new();
    for (name, _) in pairs {
        let (Some(access), Some(registered)) = (config.access(name), Config::registered_name(name))
        else {
            return Err(CmdError::config_unknown(name));
        };
        match access {
            Access::Immutable => {
                return Err(CmdError::config_set(name, "can't set immutable config"))
            }
            Access::Protected if !protected_allowed => {
                return Err(CmdError::config_set(name, "can't set protected config"))
            }
            // `dir` and `dbfilename` name the open database: Relis cannot move it at run time.
            Access::Protected => {
                return Err(CmdError::config_set(name, "can't set immutable config"))
            }
            Access::Mutable => {}
        }
        if seen.contains(&registered) {
            return Err(CmdError::config_set(name, "duplicate parameter"));
        }
        seen.push(registered);
    }
    let mut next = config.clone();
    for (name, value) in pairs {
        let registered = Config::registered_name(name).unwrap_or("");
        next.set(name, value)
            .map_err(|e| CmdError::config_set(registered, &e))?;
    }
    Ok(next)
}

/// Relis binds its listeners at start-up only: CONFIG SET of `port`, `tls-port` or `bind` to
/// what they are is accepted (Redis changes nothing then either), another value is refused with
/// Redis's text for a port or address it cannot listen on.
///
/// # Errors
/// Redis's text naming the setting.
fn check_listeners(
    old: &Config,
    next: &Config,
    pairs: &[(String, String)],
) -> Result<(), CmdError> {
    for (name, _) in pairs {
        let Some(registered) = Config::registered_name(name) else {
            continue;
        };
        let why = match registered {
            "port" | "tls-port" => "Unable to listen on this port. Check server logs.",
            "bind" => "Failed to bind to specified addresses.",
            _ => continue,
        };
        if old.get(registered) != next.get(registered) {
            tracing::warn!(
                "CONFIG SET {registered}: Relis listens where it started; restart it with the new {registered} to move."
            );
            return Err(CmdError::config_set(registered, why));
        }
    }
    Ok(())
}

/// The settings whose CONFIG SET makes Redis rebuild its TLS configuration (those with
/// `applyTlsCfg` in config.c), besides the ones Relis's TLS acceptor is built from.
const TLS_APPLY: &[&str] = &[
    "tls-session-cache-size",
    "tls-session-cache-timeout",
    "tls-cluster",
    "tls-replication",
    "tls-prefer-server-ciphers",
    "tls-session-caching",
    "tls-client-cert-file",
    "tls-client-key-file",
    "tls-client-key-file-pass",
    "tls-dh-params-file",
];

/// As in Redis, a CONFIG SET of a `tls-*` setting rebuilds the TLS configuration that new TLS
/// connections get (connections already open keep theirs). If it cannot be built, the CONFIG
/// SET fails and nothing changes; the reason goes to the log. Without a TLS listener it is
/// still built, to be checked, when `tls-replication` or `tls-cluster` is on (Redis configures
/// TLS for those links then); otherwise the settings wait for a restart.
///
/// # Errors
/// Redis's text naming the first such setting of the call.
fn reconfigure_tls(
    server: &Shared,
    next: &Config,
    pairs: &[(String, String)],
) -> Result<(), CmdError> {
    let Some(name) = pairs.iter().find_map(|(n, _)| {
        let r = Config::registered_name(n)?;
        (crate::tls::is_tls_setting(r) || TLS_APPLY.contains(&r)).then_some(r)
    }) else {
        return Ok(());
    };
    let mut tls = server.tls.write();
    let links = ["tls-replication", "tls-cluster"]
        .iter()
        .any(|n| next.get(n).as_deref() == Some("yes"));
    if tls.is_none() && !links {
        return Ok(());
    }
    match crate::tls::acceptor(next) {
        Ok(a) => {
            if tls.is_some() {
                *tls = Some(a);
            }
            Ok(())
        }
        Err(e) => {
            tracing::warn!("{e}");
            tracing::warn!(
                "Failed applying new configuration. Possibly related to new {name} setting. Restoring previous settings."
            );
            Err(CmdError::config_set(
                name,
                "Unable to update TLS configuration. Check server logs.",
            ))
        }
    }
}

/// Zeroes the counters INFO reports (CONFIG RESETSTAT).
pub fn reset_stats(server: &Shared) {
    let s = &server.stats;
    for a in [
        &s.total_connections_received,
        &s.total_commands_processed,
        &s.rejected_connections,
        &s.net_input_bytes,
        &s.net_output_bytes,
        &s.total_error_replies,
        &s.keyspace_hits,
        &s.keyspace_misses,
        &s.total_reads_processed,
        &s.total_writes_processed,
    ] {
        a.store(0, Ordering::Relaxed);
    }
    server.db.stats().expired_keys.store(0, Ordering::Relaxed);
    for c in &server.cmd_stats {
        c.calls.store(0, Ordering::Relaxed);
        c.usec.store(0, Ordering::Relaxed);
        c.rejected_calls.store(0, Ordering::Relaxed);
        c.failed_calls.store(0, Ordering::Relaxed);
    }
    server.errors.lock().clear();
    // As Redis's resetCommandTableStats: the histograms go too.
    server.observe.histograms.reset();
}

const HELP: &[&str] = &[
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "REWRITE",
    "    Rewrite the configuration file.",
];

impl ConnCmd for ConfigCmd {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let bulk = |s: String| Frame::Bulk(Bytes::from(s));
            match *self {
                ConfigCmd::Get(pats) => {
                    let pairs = get(&c.server.config.read(), &pats);
                    Ok(Frame::Map(
                        pairs.into_iter().map(|(n, v)| (bulk(n), bulk(v))).collect(),
                    ))
                }
                ConfigCmd::Set(pairs) => {
                    let mut cfg = c.server.config.write();
                    let local = crate::connection::is_loopback_client(c.info.addr.ip());
                    let next = set(&cfg, &pairs, local)?;
                    check_listeners(&cfg, &next, &pairs)?;
                    reconfigure_tls(&c.server, &next, &pairs)?;
                    *cfg = next;
                    c.server.pubsub.configure(&cfg);
                    c.server.scripting.configure(&cfg);
                    c.server.observe.configure(&cfg);
                    if pairs.iter().any(|(n, _)| {
                        ["writer-cache-size", "reader-cache-size", "mmap-size"]
                            .iter()
                            .any(|s| n.eq_ignore_ascii_case(s))
                    }) {
                        c.server.db.set_cache_sizes(cfg.cache_sizes());
                    }
                    if pairs
                        .iter()
                        .any(|(n, _)| n.eq_ignore_ascii_case("loglevel"))
                    {
                        crate::logging::apply(&cfg.loglevel);
                    }
                    c.server
                        .acl
                        .log_max
                        .store(cfg.acllog_max_len, std::sync::atomic::Ordering::Relaxed);
                    // As in Redis, `requirepass` is the default user's password.
                    if pairs
                        .iter()
                        .any(|(n, _)| n.eq_ignore_ascii_case("requirepass"))
                    {
                        c.server.acl.set_requirepass(&cfg.requirepass);
                    }
                    Ok(Frame::ok())
                }
                ConfigCmd::ResetStat => {
                    reset_stats(&c.server);
                    Ok(Frame::ok())
                }
                ConfigCmd::Rewrite => {
                    let Some(path) = c.server.config_file.clone() else {
                        return Err(CmdError::CONFIG_NO_FILE);
                    };
                    let mut text = c.server.config.read().render();
                    // Without an ACL file, users live in the config file, as in Redis.
                    if c.server.config.read().aclfile.is_empty() {
                        for line in crate::acl::render_file(&c.server.acl).lines() {
                            text.push_str(line);
                            text.push('\n');
                        }
                    }
                    let res = tokio::task::spawn_blocking(move || write_atomically(&path, &text))
                        .await
                        .unwrap_or_else(|e| Err(std::io::Error::other(e.to_string())));
                    match res {
                        Ok(()) => {
                            tracing::info!("CONFIG REWRITE executed with success.");
                            Ok(Frame::ok())
                        }
                        Err(e) => {
                            tracing::warn!("CONFIG REWRITE failed: {e}");
                            Err(CmdError::config_rewrite(e))
                        }
                    }
                }
                ConfigCmd::Help => Ok(super::help("CONFIG", HELP)),
            }
        })
    }
}

/// Writes `text` to a temporary file next to `path`, syncs it, and renames it over `path`.
/// Writes `text` to `path` through a temporary file and a rename (CONFIG REWRITE, ACL SAVE).
///
/// # Errors
/// The I/O failure.
pub fn write_atomically(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let tmp = path.with_extension("rewrite-tmp");
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn get_patterns() {
        let c = Config::default();
        let g = |p: &[&str]| get(&c, &p.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(g(&["Port"]), pairs(&[("Port", "6379")]));
        assert_eq!(g(&["port", "port"]), pairs(&[("port", "6379")]));
        assert_eq!(g(&["nosuch"]), vec![]);
        let m = g(&["MAXMEMORY*"]);
        assert!(m.iter().any(|(n, _)| n == "maxmemory-policy"));
        assert!(m.iter().all(|(n, _)| n.starts_with("maxmemory")));
        assert_eq!(
            g(&["*max*clients*", "maxclients"]),
            pairs(&[("maxclients", "10000"), ("maxmemory-clients", "0")])
        );
        // Exact names, any case, once; old names are names; hidden settings by exact name only.
        assert_eq!(g(&["PORT", "port", "p?rt"]), pairs(&[("PORT", "6379")]));
        assert_eq!(
            g(&["slave-priority", "replica-priority"]),
            pairs(&[("slave-priority", "100"), ("replica-priority", "100")])
        );
        assert_eq!(
            g(&["*priority"]),
            pairs(&[("slave-priority", "100"), ("replica-priority", "100")])
        );
        assert_eq!(g(&["key-load-*"]), vec![]);
        assert_eq!(g(&["key-load-delay"]), pairs(&[("key-load-delay", "0")]));
    }

    #[test]
    fn set_is_all_or_nothing() {
        let c = Config::default();
        let e = |v: &[(&str, &str)]| set(&c, &pairs(v), true).unwrap_err().message();
        assert_eq!(
            e(&[("foo", "1")]),
            "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"
        );
        // The first problem found is the one reported.
        assert_eq!(
            e(&[("maxclients", "5"), ("daemonize", "yes"), ("foo", "1")]),
            "ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable config"
        );
        assert_eq!(
            e(&[("maxclients", "5"), ("MAXCLIENTS", "6"), ("daemonize", "yes")]),
            "ERR CONFIG SET failed (possibly related to argument 'MAXCLIENTS') - duplicate parameter"
        );
        assert_eq!(
            e(&[("port", "1"), ("foo", "1"), ("databases", "1")]),
            "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"
        );
        assert_eq!(
            e(&[("dbfilename", "x.db")]),
            "ERR CONFIG SET failed (possibly related to argument 'dbfilename') - can't set protected config"
        );
        // Where protected settings may be changed, Relis still cannot move its open database.
        let mut open = Config::default();
        open.set("enable-protected-configs", "local").unwrap();
        let e2 = |local| {
            set(&open, &pairs(&[("dir", "/tmp")]), local)
                .unwrap_err()
                .message()
        };
        assert_eq!(
            e2(false),
            "ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config"
        );
        assert_eq!(
            e2(true),
            "ERR CONFIG SET failed (possibly related to argument 'dir') - can't set immutable config"
        );
        // A bad value is named as registered: lower case, the old name if that was given.
        assert_eq!(
            e(&[("Slave-Priority", "-1")]),
            "ERR CONFIG SET failed (possibly related to argument 'slave-priority') - argument must be between 0 and 2147483647 inclusive"
        );
        assert_eq!(
            e(&[("maxclients", "abc")]),
            "ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be parsed into an integer"
        );
        let n = set(&c, &pairs(&[("maxclients", "5"), ("timeout", "7")]), true).unwrap();
        assert_eq!((n.maxclients, n.timeout), (5, 7));
    }
}
