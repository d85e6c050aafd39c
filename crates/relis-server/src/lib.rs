//! The Relis network server: RESP2/RESP3 over TCP in front of the [`relis`] engine.
//!
//! `main.rs` is thin: it parses the configuration, opens the engine, binds, and calls
//! [`server::run`] with the listener, the shared state and a shutdown future. Tests do the same
//! with a listener on port 0 through [`start`].
#![warn(missing_docs)]

pub mod acl;
pub mod args;
pub mod blocking;
pub mod client;
pub mod cmd;
pub mod config;
pub mod connection;
pub mod dispatch;
pub mod error;
pub mod logging;
pub mod lua;
pub mod monitor;
pub mod observe;
pub mod pause;
pub mod pubsub;
pub mod rdbfile;
pub mod relay;
pub mod replica;
pub mod script;
pub mod server;
pub mod spec;
pub mod state;
pub mod tls;
pub mod tracking;

use std::sync::Arc;

/// The Relis version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The Redis version whose behaviour Relis implements (INFO's `redis_version`).
pub const REDIS_VERSION: &str = "7.0.15";

/// Opens the engine described by `config`.
///
/// # Errors
/// The database cannot be opened (the message names the file and the problem).
pub fn open_engine(config: &config::Config) -> Result<relis::Db, relis::Error> {
    if config.backend != "sqlite" {
        return relis::Db::open_postgres(
            &config.backend,
            postgres_codec(),
            engine_options(config, None),
        );
    }
    let path = config.db_path();
    if let Some(p) = &path {
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir).map_err(|e| {
                relis::Error::NotRelis(format!("{}: cannot create directory: {e}", dir.display()))
            })?;
        }
    }
    relis::Db::open_with(engine_options(config, path))
}

/// How values are stored in PostgreSQL: Redis's DUMP payload (`cmd/keys/dump.rs`), so a row
/// can be RESTOREd into a redis-server as it is.
pub fn postgres_codec() -> relis::postgres::Codec {
    relis::postgres::Codec {
        dump: |d| {
            let kind = cmd::keys::dump::object_kind(d.encoding);
            rdb::payload::dump(&cmd::keys::dump::to_object(d.value), kind)
        },
        restore: |p| rdb::payload::restore(p).ok().map(cmd::keys::dump::to_value),
        kind: cmd::keys::dump::payload_type,
    }
}

/// The engine options `config` asks for, on the file at `path` (`None`: in memory).
pub fn engine_options(config: &config::Config, path: Option<std::path::PathBuf>) -> relis::Options {
    relis::Options {
        path,
        durability: config.durability,
        databases: config.databases,
        readers: config.readers,
        max_batch: config.max_batch,
        page_size: config.page_size,
        caches: config.cache_sizes(),
        ..relis::Options::default()
    }
}

/// A running server, for tests and embedding: dropping it does not stop it; call
/// [`Running::shutdown`].
pub struct Running {
    /// The address it listens on.
    pub addr: std::net::SocketAddr,
    /// The address its TLS listener listens on, if it has one.
    pub tls_addr: Option<std::net::SocketAddr>,
    /// Its shared state.
    pub shared: Arc<server::Shared>,
    handle: tokio::task::JoinHandle<()>,
}

impl Running {
    /// Stops accepting, closes connections, and waits for the accept loop to end.
    pub async fn shutdown(self) {
        self.shared.request_shutdown();
        let _ = self.handle.await;
    }
}

/// Opens the engine and starts serving on `config.bind[0]:config.port` (port 0 picks a free
/// port) on the current tokio runtime. With `tls-cert-file` set it also serves TLS on
/// `config.bind[0]:config.tls_port`, where port 0 picks a free port too (unlike the binary,
/// where `tls-port 0` means no TLS): tests find it in [`Running::tls_addr`].
///
/// # Errors
/// The TLS files are bad, the engine cannot be opened or an address cannot be bound.
pub async fn start(config: config::Config) -> Result<Running, String> {
    let tls = if config.tls_port != 0 || !config.tls_cert_file.is_empty() {
        Some(tls::acceptor(&config)?)
    } else {
        None
    };
    let db = open_engine(&config).map_err(|e| e.to_string())?;
    let listen = |port: u16| {
        let bind = format!("{}:{port}", config.bind[0]);
        async move {
            tokio::net::TcpListener::bind(&bind)
                .await
                .map_err(|e| format!("cannot listen on {bind}: {e}"))
        }
    };
    let listener = listen(config.port).await?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let tls_listener = match tls {
        Some(_) => Some(listen(config.tls_port).await?),
        None => None,
    };
    let tls_addr = match &tls_listener {
        Some(l) => Some(l.local_addr().map_err(|e| e.to_string())?),
        None => None,
    };
    let shared = server::Shared::new(db, config, None, addr);
    {
        let cfg = shared.config.read().clone();
        cmd::acl::load_at_startup(&shared.acl, &cfg)?;
    }
    *shared.tls.write() = tls;
    if let Some(l) = tls_listener {
        // Stops with the plain loop: both watch the shutdown signal.
        tokio::spawn(server::run_tls(l, shared.clone(), std::future::pending()));
    }
    let handle = tokio::spawn(server::run(
        listener,
        shared.clone(),
        std::future::pending(),
    ));
    Ok(Running {
        addr,
        tls_addr,
        shared,
        handle,
    })
}
