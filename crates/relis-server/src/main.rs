//! `relis-server [config-file] [--name value ...]`: like redis-server.

use relis_server::config::Config;
use relis_server::{open_engine, server, REDIS_VERSION, VERSION};
use std::path::PathBuf;

const HELP: &str = "Usage: relis-server [/path/to/relis.conf] [options]
       relis-server --version
       relis-server --help

A Redis 7.0 compatible server that keeps its data in SQLite.

The config file holds redis.conf-style lines (`name value`); --name value options override it.
Examples:
       relis-server                                  (127.0.0.1:6379, ./relis.db)
       relis-server /etc/relis/relis.conf
       relis-server --port 6380 --dir /data --durability full
       relis-server relis.conf --loglevel verbose

Settings: port bind dir dbfilename databases requirepass aclfile maxclients
          durability (normal|full|off) loglevel logfile timeout tcp-keepalive
          proto-max-bulk-len client-query-buffer-limit readers max-batch";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{HELP}");
        return;
    }
    if args.iter().any(|a| a == "--version" || a == "-v") {
        println!("relis-server v={VERSION} (redis_version={REDIS_VERSION})");
        return;
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

    // Network threads: Redis's io-threads (1 by default, as there). Each keeps its fast reads'
    // SQLite snapshot while it has work and the engine commits nothing, and drops it when idle.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(config.io_threads())
        .on_thread_start(relis::hold_thread_snapshots)
        .on_thread_park(relis::release_thread_snapshots)
        .enable_all()
        .thread_name("relis-net")
        .build()
        .unwrap_or_else(|e| fail(&format!("cannot start the runtime: {e}")));
    runtime.block_on(async move {
        let db = open_engine(&config).unwrap_or_else(|e| fail(&e.to_string()));
        let mut listeners = Vec::new();
        for addr in &config.bind {
            let bind = if addr.contains(':') {
                format!("[{addr}]:{}", config.port)
            } else {
                format!("{addr}:{}", config.port)
            };
            match tokio::net::TcpListener::bind(&bind).await {
                Ok(l) => listeners.push(l),
                Err(e) => fail(&format!("Could not create server TCP listening socket {bind}: {e}")),
            }
        }
        let listener = listeners.remove(0);
        let addr = listener.local_addr().unwrap_or_else(|e| fail(&e.to_string()));
        let path = config
            .db_path()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| ":memory:".into());
        let shared = server::Shared::new(db, config, config_file, addr);
        // Users from `user` directives and the ACL file: a bad one stops the start.
        {
            let cfg = shared.config.read().clone();
            if let Err(e) = relis_server::cmd::acl::load_at_startup(&shared.acl, &cfg) {
                fail(&e);
            }
        }
        // Further bind addresses share the same state.
        for extra in listeners {
            let shared = shared.clone();
            tokio::spawn(async move { server::run(extra, shared, std::future::pending()).await });
        }
        tracing::info!(
            "Relis {VERSION} (Redis {REDIS_VERSION} compatible) ready to accept connections on {addr}, data in {path}"
        );
        server::run(listener, shared.clone(), shutdown_signal()).await;
        tracing::info!("Relis is now ready to exit, bye bye...");
        drop(shared);
    });
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
    let level = match config.loglevel.as_str() {
        "debug" => "debug",
        "verbose" => "info",
        "notice" => "info",
        "warning" => "warn",
        _ => "error",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    if config.logfile.is_empty() {
        tracing_subscriber::fmt().with_env_filter(filter).init();
    } else {
        match std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&config.logfile)
        {
            Ok(f) => tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_ansi(false)
                .with_writer(std::sync::Mutex::new(f))
                .init(),
            Err(e) => fail(&format!("Can't open the log file: {e}")),
        }
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("{msg}");
    std::process::exit(1);
}
