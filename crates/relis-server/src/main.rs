//! `relis-server [config-file] [--name value ...]`: like redis-server.

use relis_server::config::Config;
use relis_server::{open_engine, server, REDIS_VERSION, VERSION};
use std::path::PathBuf;

// The network thread allocates each command and the writer thread frees it: glibc's allocator
// serves that pattern from its locked arena on every allocation (a quarter of the network
// thread's instructions under callgrind); mimalloc's per-thread free lists do not.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const HELP: &str = "Usage: relis-server [/path/to/relis.conf] [options]
       relis-server [/path/to/relis.conf] [options] --import dump.rdb
       relis-server [/path/to/relis.conf] [options] --export out.rdb
       relis-server --version
       relis-server --help

A Redis 7.0 compatible server that keeps its data in SQLite.

--import loads an RDB file written by redis-server (- reads standard input) into the data
file (dir/dbfilename; a new one, or keys added to an existing one, all or nothing; with
--backend postgres://..., into the shared keyspace, in batches, after a first read checks the
file) and exits; --export writes the
data file's whole keyspace (with --backend postgres://..., the shared one's, as of one snapshot)
to an RDB file that redis-server 7.0 loads, and exits.

The config file holds redis.conf-style lines (`name value`); --name value options override it.
Examples:
       relis-server                                  (127.0.0.1:6379, ./relis.db)
       relis-server /etc/relis/relis.conf
       relis-server --port 6380 --dir /data --durability full
       relis-server relis.conf --loglevel verbose

Settings: port bind dir dbfilename databases requirepass aclfile maxclients protected-mode
          durability (normal|full|off) loglevel logfile timeout tcp-keepalive
          proto-max-bulk-len client-query-buffer-limit readers max-batch lua-memory-limit
          page-size (of a new file: 2048 by default; 4096 suits values of 100 KB and more)
          writer-cache-size reader-cache-size mmap-size (SQLite's memory, see README)
          tls-port tls-cert-file tls-key-file tls-ca-cert-file tls-ca-cert-dir
          tls-auth-clients (yes|optional|no) tls-protocols tls-ciphersuites
          slowlog-log-slower-than slowlog-max-len latency-monitor-threshold
          latency-tracking latency-tracking-info-percentiles,
          and every other redis-server 7.0 setting, under its old name too (slaveof,
          *-ziplist-*, lua-time-limit, ...): accepted, checked and reported (see README)";

fn main() {
    // INFO memory counts the allocator the binary installed.
    relis_server::cmd::server::memory::use_allocator(relis_server::cmd::server::memory::MIMALLOC);
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{HELP}");
        return;
    }
    if args.iter().any(|a| a == "--version" || a == "-v") {
        println!("relis-server v={VERSION} (redis_version={REDIS_VERSION})");
        return;
    }
    // `--import FILE` / `--export FILE`: a file operation instead of serving.
    let mut file_op = None;
    if let Some(i) = args.iter().position(|a| a == "--import" || a == "--export") {
        let Some(path) = args.get(i + 1).filter(|p| !p.starts_with("--")) else {
            fail(&format!("{} needs a file name", args[i]));
        };
        file_op = Some((args[i] == "--import", PathBuf::from(path)));
        args.drain(i..i + 2);
        if args.iter().any(|a| a == "--import" || a == "--export") {
            fail("give one of --import and --export, once");
        }
    }
    let mut config = Config::default();
    let mut rest = &args[..];
    let mut config_file = None;
    if let Some(first) = rest.first().filter(|a| !a.starts_with("--")) {
        let path = PathBuf::from(first);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => fail(&format!(
                "Fatal error, can't open config file '{}': {e}",
                path.display()
            )),
        };
        if let Err(e) = config.apply_file(&text) {
            fail(&e);
        }
        config_file = Some(path);
        rest = &rest[1..];
    }
    if let Err(e) = config.apply_args(rest) {
        fail(&e);
    }
    init_logging(&config);
    if let Some((import, path)) = file_op {
        file_operation(&config, import, &path);
        return;
    }

    // Network threads: Redis's io-threads (1 by default, as there). Each keeps its fast reads'
    // SQLite snapshot while the engine commits nothing; the engine ends it when the thread is
    // idle (see `relis::release_thread_snapshots`).
    //
    // The scheduler looks for new socket events every 16 task polls and at its shared queue
    // (where the writer's answers arrive) every 4, against tokio's 61 and 31: with a thousand
    // clients, a connection whose event or answer came in behind a full local queue (likely)
    // waited for hundreds of others to be served, again and again. Under redis-benchmark
    // -c 1000, GET p99 fell from 56-122 ms to 36-45 ms; at -c 50, -P 1 and -P 16, the rates
    // did not move (BENCHMARKS.md, 1,000 clients).
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .event_interval(16)
        .global_queue_interval(4)
        .worker_threads(config.io_threads())
        .enable_all()
        .thread_name("relis-net")
        .build()
        .unwrap_or_else(|e| fail(&format!("cannot start the runtime: {e}")));
    runtime.block_on(async move {
        // TLS first: bad certificate or key files stop start-up before anything is opened.
        let tls = (config.tls_port != 0).then(|| {
            relis_server::tls::acceptor(&config).unwrap_or_else(|e| {
                fail(&format!("{e}\nFailed to configure TLS. Check logs for more info."))
            })
        });
        let db = open_engine(&config).unwrap_or_else(|e| fail(&e.to_string()));
        // As in Redis, `port 0` with a `tls-port` serves TLS only. With no `tls-port`, port 0
        // picks a free port (a Relis extension; Redis would refuse to start).
        let plain = if config.port != 0 || config.tls_port == 0 {
            bind_all(&config.bind, config.port, "TCP").await
        } else {
            Vec::new()
        };
        let tls_listeners = if tls.is_some() {
            bind_all(&config.bind, config.tls_port, "TLS").await
        } else {
            Vec::new()
        };
        let local = |l: &tokio::net::TcpListener| l.local_addr().unwrap_or_else(|e| fail(&e.to_string()));
        let plain_addr = plain.first().map(local);
        let tls_addr = tls_listeners.first().map(local);
        // INFO's tcp_port: the plain port, or the TLS port when there is none (as Redis).
        let addr = plain_addr.or(tls_addr).expect("a listener");
        // Not the backend's URL, which may hold a password.
        let path = if config.backend != "sqlite" {
            "a shared PostgreSQL (backend postgres)".into()
        } else {
            config
                .db_path()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| ":memory:".into())
        };
        let shared = server::Shared::new(db, config, config_file, addr);
        // Users from `user` directives and the ACL file: a bad one stops the start.
        {
            let cfg = shared.config.read().clone();
            if let Err(e) = relis_server::cmd::acl::load_at_startup(&shared.acl, &cfg) {
                fail(&e);
            }
        }
        *shared.tls.write() = tls;
        // Every listener shares the same state; the first one's loop runs the shutdown.
        let mut loops = Vec::new();
        for l in plain {
            loops.push((l, false));
        }
        for l in tls_listeners {
            loops.push((l, true));
        }
        let (first, first_tls) = loops.remove(0);
        for (l, is_tls) in loops {
            let shared = shared.clone();
            if is_tls {
                tokio::spawn(async move { server::run_tls(l, shared, std::future::pending()).await });
            } else {
                tokio::spawn(async move { server::run(l, shared, std::future::pending()).await });
            }
        }
        let on = match (plain_addr, tls_addr) {
            (Some(p), Some(t)) => format!("{p} and {t} (TLS)"),
            (Some(p), None) => p.to_string(),
            (None, Some(t)) => format!("{t} (TLS)"),
            (None, None) => unreachable!("at least one listener"),
        };
        tracing::info!(
            "Relis {VERSION} (Redis {REDIS_VERSION} compatible) ready to accept connections on {on}, data in {path}"
        );
        if first_tls {
            server::run_tls(first, shared.clone(), shutdown_signal()).await;
        } else {
            server::run(first, shared.clone(), shutdown_signal()).await;
        }
        tracing::info!("Relis is now ready to exit, bye bye...");
        drop(shared);
    });
}

/// `--import` / `--export`: runs it, reports, and exits with status 1 on failure.
fn file_operation(config: &Config, import: bool, path: &std::path::Path) {
    let data = if config.backend == "sqlite" {
        config
            .db_path()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| ":memory:".into())
    } else {
        relis_server::config::redact_url(&config.backend)
    };
    let started = std::time::Instant::now();
    if import {
        let imported = if config.backend == "sqlite" {
            relis_server::rdbfile::import(config, path)
        } else {
            relis_server::rdbfile::import_postgres(config, path)
        };
        match imported {
            Ok(s) => tracing::info!(
                "imported {} keys, {} function libraries from {} ({} bytes) into {data} in {:.1}s; {} expired keys dropped{}",
                s.keys,
                s.functions,
                path.display(),
                s.bytes,
                started.elapsed().as_secs_f64(),
                s.expired,
                if s.module_aux > 0 {
                    format!(", {} module aux records skipped", s.module_aux)
                } else {
                    String::new()
                }
            ),
            Err(e) if config.backend == "sqlite" => {
                fail(&format!("Import failed: {e}\n{data} is unchanged."))
            }
            // A file found bad wrote nothing; a failure while writing, the batches before it.
            Err(e) => fail(&format!("Import failed: {e}")),
        }
    } else {
        let exported = if config.backend == "sqlite" {
            relis_server::rdbfile::export(config, path)
        } else {
            relis_server::rdbfile::export_postgres(config, path)
        };
        match exported {
            Ok(s) => tracing::info!(
                "exported {} keys, {} function libraries from {data} to {} ({} bytes) in {:.1}s",
                s.keys,
                s.functions,
                path.display(),
                s.bytes,
                started.elapsed().as_secs_f64()
            ),
            Err(e) => fail(&format!("Export failed: {e}")),
        }
    }
}

/// Binds `port` on every address of `bind`, or stops start-up naming the address.
async fn bind_all(bind: &[String], port: u16, what: &str) -> Vec<tokio::net::TcpListener> {
    let mut listeners = Vec::new();
    for addr in bind {
        let at = if addr.contains(':') {
            format!("[{addr}]:{port}")
        } else {
            format!("{addr}:{port}")
        };
        match tokio::net::TcpListener::bind(&at).await {
            Ok(l) => listeners.push(l),
            Err(e) => fail(&format!(
                "Could not create server {what} listening socket {at}: {e}"
            )),
        }
    }
    listeners
}

async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).unwrap_or_else(|e| fail(&e.to_string()));
    tokio::select! {
        _ = tokio::signal::ctrl_c() => tracing::info!("Received SIGINT scheduling shutdown..."),
        _ = term.recv() => tracing::info!("Received SIGTERM scheduling shutdown..."),
    }
}

fn init_logging(config: &Config) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::EnvFilter;
    let level = relis_server::logging::tracing_level(&config.loglevel);
    // RUST_LOG, when set, wins over `loglevel` (and CONFIG SET loglevel leaves it alone).
    let from_env = EnvFilter::try_from_default_env().ok();
    let fixed = from_env.is_some();
    let (filter, handle) =
        tracing_subscriber::reload::Layer::new(from_env.unwrap_or_else(|| EnvFilter::new(level)));
    if !fixed {
        relis_server::logging::set_reloader(move |level| {
            let _ = handle.modify(|f| *f = EnvFilter::new(level));
        });
    }
    let registry = tracing_subscriber::registry().with(filter);
    if config.logfile.is_empty() {
        registry.with(tracing_subscriber::fmt::layer()).init();
    } else {
        match std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&config.logfile)
        {
            Ok(f) => registry
                .with(
                    tracing_subscriber::fmt::layer()
                        .with_ansi(false)
                        .with_writer(std::sync::Mutex::new(f)),
                )
                .init(),
            Err(e) => fail(&format!("Can't open the log file: {e}")),
        }
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("{msg}");
    std::process::exit(1);
}
