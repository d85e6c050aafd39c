//! Starting the server: [`Shared::new`] (the shared state with what it reloads from the
//! database) and the accept loop, `run(listener, shared, shutdown)`.

use crate::cmd::Table;
use crate::config::Config;
pub use crate::state::Shared;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio::net::TcpListener;

impl Shared {
    /// Builds the shared state around an open engine: reopens the named SQL databases and
    /// the stored function libraries, and starts the INFO sampler.
    pub fn new(
        db: relis::Db,
        config: Config,
        config_file: Option<std::path::PathBuf>,
        addr: SocketAddr,
    ) -> Arc<Shared> {
        // Statistics and ACL selectors are sized by the command table.
        Table::get();
        // Named SQL databases recorded in the main database reopen with the server.
        let sql = crate::cmd::sql::db::open_all(&db, &config);
        // Function libraries are stored in the database: they come back with it.
        let scripting = crate::script::Scripting::default();
        scripting.configure(&config);
        crate::lua::load_stored(&scripting, &db);
        let shared = Arc::new(Shared::assemble(
            db,
            config,
            config_file,
            addr,
            sql,
            scripting,
        ));
        if shared.db.backend() == "postgres" {
            // Keys another node made ready serve this node's blocked clients.
            let weak = Arc::downgrade(&shared);
            shared.pubsub.on_ready(Box::new(move |keys| {
                if let Some(server) = weak.upgrade() {
                    let keys = match keys {
                        crate::pubsub::Ready::Keys(keys) => keys,
                        crate::pubsub::Ready::Dbs(dbs) => server.blocking.keys_in(&dbs),
                        crate::pubsub::Ready::All => server.blocking.all_keys(),
                    };
                    crate::blocking::serve_later(&server, keys);
                }
            }));
            let url = shared.config.read().backend.clone();
            shared.pubsub.join_nodes(&url);
        }
        spawn_sampler(&shared);
        shared
    }
}

/// Starts the 100 ms sampler of `server` on the current tokio runtime (if there is one); it
/// stops when the server shuts down or is dropped.
pub fn spawn_sampler(server: &Arc<Shared>) {
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let weak: std::sync::Weak<Shared> = Arc::downgrade(server);
    let mut stop = server.shutdown_signal();
    rt.spawn(async move {
        let mut tick = tokio::time::interval(std::time::Duration::from_millis(100));
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = stop.changed() => return,
            }
            let Some(server) = weak.upgrade() else { return };
            server.sampler.sample(&server.stats);
            server.pubsub.tell_tracking(false);
        }
    });
}

/// Accepts connections until `shutdown` resolves or SHUTDOWN is requested, then closes them.
pub async fn run(listener: TcpListener, shared: Arc<Shared>, shutdown: impl Future<Output = ()>) {
    accept_loop(listener, shared, shutdown, false).await;
}

/// [`run`] for a TLS listener: each connection does a TLS handshake with the configuration in
/// [`Shared::tls`] at the time it connects, then runs the same command path as a plain one.
pub async fn run_tls(
    listener: TcpListener,
    shared: Arc<Shared>,
    shutdown: impl Future<Output = ()>,
) {
    accept_loop(listener, shared, shutdown, true).await;
}

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    shutdown: impl Future<Output = ()>,
    tls: bool,
) {
    let mut stop = shared.shutdown_signal();
    // `replicaof` in the configuration: follow that master from the start.
    let replicaof = shared.config.read().get("replicaof").unwrap_or_default();
    if let Some((host, port)) = replicaof.split_once(' ') {
        if let Ok(port) = port.parse() {
            crate::replica::link::start(&shared, host, port);
        }
    }
    tokio::pin!(shutdown);
    let mut tasks = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            _ = stop.changed() => break,
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(a) => a,
                    Err(e) => {
                        tracing::warn!("accept: {e}");
                        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                        continue;
                    }
                };
                shared.stats.total_connections_received.fetch_add(1, Ordering::Relaxed);
                let shared = shared.clone();
                if !tls {
                    tasks.spawn(async move { crate::connection::serve(stream, peer, shared).await });
                } else if let Some(acceptor) = shared.tls.read().clone() {
                    tasks.spawn(crate::connection::serve_tls(stream, peer, shared.clone(), acceptor));
                }
                while tasks.try_join_next().is_some() {}
            }
        }
    }
    shared.request_shutdown();
    // Connections notice the shutdown signal and finish the batch they are running.
    let deadline = tokio::time::sleep(std::time::Duration::from_secs(5));
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            _ = &mut deadline => { tasks.abort_all(); break; }
            next = tasks.join_next() => if next.is_none() { break },
        }
    }
}
