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
use crate::config::Config;
use crate::error::CmdError;
use crate::server::Shared;
use bytes::Bytes;
use resp::Frame;
use std::sync::atomic::Ordering;

const ADMIN: &[&str] = &["admin", "noscript", "loading", "stale"];
const ADMIN_ACL: &[&str] = &["admin", "slow", "dangerous"];

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
        flags: &["loading", "stale"],
        acl: &["slow"],
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

/// CONFIG GET: for each pattern, the exact parameter (named as the client spelled it) when it
/// has no glob characters, else every parameter it matches; each parameter once.
pub fn get(config: &Config, patterns: &[String]) -> Vec<(String, String)> {
    let all = config.pairs();
    let mut out: Vec<(String, String)> = Vec::new();
    for pat in patterns {
        if !pat.contains(['*', '?', '[']) {
            if out.iter().any(|(n, _)| n == pat) {
                continue;
            }
            let lower = pat.to_ascii_lowercase();
            if let Some((_, v)) = all.iter().find(|(n, _)| *n == lower) {
                out.push((pat.clone(), v.clone()));
            }
            continue;
        }
        for (n, v) in &all {
            if relis::glob::glob_match(pat.as_bytes(), n.as_bytes(), true)
                && !out.iter().any(|(o, _)| o == n)
            {
                out.push((n.clone(), v.clone()));
            }
        }
    }
    out
}

/// CONFIG SET: checks every name, then applies every value to a copy of `config`.
///
/// # Errors
/// Redis's texts for unknown, immutable or repeated parameters and bad values.
pub fn set(config: &Config, pairs: &[(String, String)]) -> Result<Config, CmdError> {
    let failed = |name: &str, why: &str| {
        CmdError::err(format!(
            "CONFIG SET failed (possibly related to argument '{name}') - {why}"
        ))
    };
    // As in Redis, every name is checked: the first unknown one wins, else the last problem.
    let mut unknown = None;
    let mut problem = None;
    let mut seen: Vec<String> = Vec::new();
    for (name, _) in pairs {
        match Config::is_mutable(name) {
            None => {
                unknown = unknown.or(Some(name));
                continue;
            }
            Some(false) => {
                problem = Some((name, "can't set immutable config"));
                continue;
            }
            Some(true) => {}
        }
        let lower = name.to_ascii_lowercase();
        if seen.contains(&lower) {
            problem = Some((name, "duplicate parameter"));
        }
        seen.push(lower);
    }
    if let Some(name) = unknown {
        return Err(CmdError::err(format!(
            "Unknown option or number of arguments for CONFIG SET - '{name}'"
        )));
    }
    if let Some((name, why)) = problem {
        return Err(failed(name, why));
    }
    let mut next = config.clone();
    for (name, value) in pairs {
        next.set(name, value).map_err(|e| failed(name, &e))?;
    }
    Ok(next)
}

/// As in Redis, a CONFIG SET of a `tls-*` setting rebuilds the TLS configuration that new TLS
/// connections get (connections already open keep theirs). If it cannot be built, the CONFIG
/// SET fails and nothing changes; the reason goes to the log.
///
/// # Errors
/// Redis's text naming the setting.
fn reconfigure_tls(
    server: &Shared,
    next: &Config,
    pairs: &[(String, String)],
) -> Result<(), CmdError> {
    let Some((name, _)) = pairs
        .iter()
        .rev()
        .find(|(n, _)| crate::tls::is_tls_setting(n))
    else {
        return Ok(());
    };
    let mut tls = server.tls.write();
    if tls.is_none() {
        // No TLS listener: the settings wait for a restart, as Redis's do without tls-port.
        return Ok(());
    }
    match crate::tls::acceptor(next) {
        Ok(a) => {
            *tls = Some(a);
            Ok(())
        }
        Err(e) => {
            tracing::warn!("{e}");
            tracing::warn!(
                "Failed applying new configuration. Possibly related to new {name} setting. Restoring previous settings."
            );
            Err(CmdError::err(format!(
                "CONFIG SET failed (possibly related to argument '{name}') - Unable to update TLS configuration. Check server logs."
            )))
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
                    let next = set(&cfg, &pairs)?;
                    reconfigure_tls(&c.server, &next, &pairs)?;
                    *cfg = next;
                    c.server.pubsub.configure(&cfg);
                    c.server.scripting.configure(&cfg);
                    c.server.observe.configure(&cfg);
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
                        return Err(CmdError::err("The server is running without a config file"));
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
                            Err(CmdError::err(format!("Rewriting config file: {e}")))
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
            pairs(&[("maxclients", "10000")])
        );
    }

    #[test]
    fn set_is_all_or_nothing() {
        let c = Config::default();
        let e = |v: &[(&str, &str)]| set(&c, &pairs(v)).unwrap_err().message();
        assert_eq!(
            e(&[("foo", "1")]),
            "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"
        );
        assert_eq!(
            e(&[("maxclients", "5"), ("port", "1")]),
            "ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable config"
        );
        assert_eq!(
            e(&[("maxclients", "5"), ("MAXCLIENTS", "6")]),
            "ERR CONFIG SET failed (possibly related to argument 'MAXCLIENTS') - duplicate parameter"
        );
        assert_eq!(
            e(&[("port", "1"), ("foo", "1")]),
            "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"
        );
        assert_eq!(
            e(&[("port", "1"), ("databases", "1")]),
            "ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config"
        );
        assert_eq!(
            e(&[("maxclients", "abc")]),
            "ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument couldn't be parsed into an integer"
        );
        let n = set(&c, &pairs(&[("maxclients", "5"), ("timeout", "7")])).unwrap();
        assert_eq!((n.maxclients, n.timeout), (5, 7));
    }
}
