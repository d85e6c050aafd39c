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
pub mod error;
pub mod pause;
pub mod pubsub;
pub mod script;
pub mod server;

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
    let path = config.db_path();
    if let Some(p) = &path {
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir).map_err(|e| {
                relis::Error::NotRelis(format!("{}: cannot create directory: {e}", dir.display()))
            })?;
        }
    }
    relis::Db::open_with(relis::Options {
        path,
        durability: config.durability,
        databases: config.databases,
        readers: config.readers,
        max_batch: config.max_batch,
        ..relis::Options::default()
    })
}

/// A running server, for tests and embedding: dropping it does not stop it; call
/// [`Running::shutdown`].
pub struct Running {
    /// The address it listens on.
    pub addr: std::net::SocketAddr,
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
/// port) on the current tokio runtime.
///
/// # Errors
/// The engine cannot be opened or the address cannot be bound.
pub async fn start(config: config::Config) -> Result<Running, String> {
    let db = open_engine(&config).map_err(|e| e.to_string())?;
    let bind = format!("{}:{}", config.bind[0], config.port);
    let listener = tokio::net::TcpListener::bind(&bind)
        .await
        .map_err(|e| format!("cannot listen on {bind}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let shared = server::Shared::new(db, config, None, addr);
    {
        let cfg = shared.config.read().clone();
        cmd::acl::load_at_startup(&shared.acl, &cfg)?;
    }
    let handle = tokio::spawn(server::run(
        listener,
        shared.clone(),
        std::future::pending(),
    ));
    Ok(Running {
        addr,
        shared,
        handle,
    })
}
