//! SAVE — write a consistent copy of the database now; BGSAVE [SCHEDULE] — the same in the
//! background. <https://redis.io/commands/save/>, <https://redis.io/commands/bgsave/>
//!
//! Relis commits every write to its SQLite file, so there is no dataset to dump for
//! durability's sake. SAVE and BGSAVE make a snapshot instead: an online SQLite backup of the
//! whole database (consistent, taken while clients keep reading and writing) into
//! `<dir>/<dbfilename>.save` (`<dir>/memory.db.save` for `:memory:`), written to a temporary
//! file and renamed into place like Redis's RDB. The copy runs on a blocking thread, never on
//! the async runtime. Both record LASTSAVE and INFO persistence as Redis does.
//!
//! Over the PostgreSQL backend every write is already committed in PostgreSQL, which makes the
//! backups; what a node can give that it cannot is Redis's own file: SAVE and BGSAVE write the
//! shared keyspace (every database, expiries, function libraries), as of one snapshot, as an
//! RDB file to `<dir>/<dbfilename>.rdb` (`rdbfile::snapshot_postgres`, the path of `--export`),
//! which redis-server and `relis-server --import` load. Each node writes to its own `dir`.

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::config::Config;
use crate::error::CmdError;
use crate::state::{unix_ms, Shared};
use bytes::Bytes;
use resp::Frame;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// SAVE's declaration.
pub const SPEC_SAVE: Spec = Spec {
    name: "save",
    arity: 1,
    flags: Spec::flags(&["admin", "noscript", "no_async_loading", "no_multi"]),
    acl: Spec::acl(&["admin", "slow", "dangerous"]),
    group: "server",
    since: "1.0.0",
    summary: "Synchronously save the dataset to disk",
    complexity: "O(N) where N is the total number of keys in all databases",
    parse: Save::parse_save,
    ..Spec::BASE
};

/// BGSAVE's declaration.
pub const SPEC_BGSAVE: Spec = Spec {
    name: "bgsave",
    arity: -1,
    flags: Spec::flags(&["admin", "noscript", "no_async_loading"]),
    acl: Spec::acl(&["admin", "slow", "dangerous"]),
    group: "server",
    since: "1.0.0",
    summary: "Asynchronously save the dataset to disk",
    parse: Save::parse_bgsave,
    ..Spec::BASE
};

/// Where SAVE and BGSAVE write their snapshot: an SQLite file, or over PostgreSQL an RDB file.
pub fn snapshot_path(config: &Config) -> PathBuf {
    let name = if config.dbfilename == ":memory:" {
        "memory.db".to_string()
    } else {
        config.dbfilename.clone()
    };
    let suffix = if config.backend == "sqlite" {
        "save"
    } else {
        "rdb"
    };
    config.dir.join(format!("{name}.{suffix}"))
}

/// Takes one snapshot on a blocking thread and records its outcome.
///
/// # Errors
/// The backup's error (already logged).
pub async fn snapshot(server: &Arc<Shared>) -> Result<(), relis::Error> {
    let (path, backend) = {
        let config = server.config.read();
        (snapshot_path(&config), config.backend.clone())
    };
    let writes = server.db.stats().writes.load(Ordering::Relaxed);
    server.save.started_ms.store(unix_ms(), Ordering::Relaxed);
    let s = server.clone();
    let res = tokio::task::spawn_blocking(move || {
        if backend != "sqlite" {
            // Named SQL databases are refused there: the shared keyspace is everything.
            return crate::rdbfile::snapshot_postgres(&backend, &path, false)
                .map(|sum| tracing::info!("{} keys saved to {}", sum.keys, path.display()))
                .map_err(relis::Error::Storage);
        }
        s.db.backup_to(&path)?;
        // Named SQL databases are part of the snapshot too.
        crate::cmd::sql::db::snapshot_all(&s)
    })
    .await
    .unwrap_or_else(|e| Err(relis::Error::Storage(e.to_string())));
    let ok = res.is_ok();
    server.last_bgsave_ok.store(ok, Ordering::Relaxed);
    match &res {
        Ok(()) => {
            server.lastsave.store(unix_ms() / 1000, Ordering::Relaxed);
            server.save.saves.fetch_add(1, Ordering::Relaxed);
            server.save.writes_at_save.store(writes, Ordering::Relaxed);
            tracing::info!("DB saved on disk");
        }
        Err(e) => tracing::warn!("snapshot failed: {e}"),
    }
    res
}

/// Runs a background snapshot, then clears `in_progress`.
async fn background(server: Arc<Shared>) {
    let started = unix_ms();
    let _ = snapshot(&server).await;
    server
        .save
        .last_bgsave_secs
        .store((unix_ms() - started) / 1000, Ordering::Relaxed);
    server.save.in_progress.store(false, Ordering::SeqCst);
}

/// SAVE, or BGSAVE with or without SCHEDULE.
#[derive(Debug, PartialEq)]
pub enum Save {
    /// SAVE.
    Now,
    /// BGSAVE [SCHEDULE] (SCHEDULE only matters in Redis when an AOF rewrite is running,
    /// which Relis never has: a running snapshot still makes BGSAVE fail, as in Redis).
    Background,
}

fn in_progress() -> CmdError {
    CmdError::SAVE_IN_PROGRESS
}

impl Save {
    fn parse_save(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(Save::Now)
    }

    fn parse_bgsave(args: &mut Args) -> Result<Parsed, CmdError> {
        args.eat("schedule");
        args.finish()?;
        Parsed::conn(Save::Background)
    }
}

impl ConnCmd for Save {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            let server = c.server.clone();
            let claimed = server
                .save
                .in_progress
                .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok();
            match *self {
                Save::Now => {
                    if !claimed {
                        return Err(in_progress());
                    }
                    let res = snapshot(&server).await;
                    server.save.in_progress.store(false, Ordering::SeqCst);
                    // Redis replies a bare "-ERR" and logs the reason.
                    res.map(|_| Frame::ok()).map_err(|_| CmdError::SAVE_FAILED)
                }
                Save::Background => {
                    if !claimed {
                        return Err(in_progress());
                    }
                    tokio::spawn(background(server));
                    Ok(Frame::Simple(Bytes::from_static(
                        b"Background saving started",
                    )))
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse() {
        let p = |line: &[&str]| {
            let v = line.iter().map(|s| Bytes::from(s.to_string())).collect();
            Save::parse_bgsave(&mut Args::new("bgsave", v)).err()
        };
        assert_eq!(p(&[]), None);
        assert_eq!(p(&["SCHEDULE"]), None);
        assert_eq!(p(&["foo"]), Some(CmdError::Syntax));
    }

    #[test]
    fn path() {
        let mut c = Config {
            dir: PathBuf::from("/d"),
            ..Config::default()
        };
        assert_eq!(snapshot_path(&c), PathBuf::from("/d/relis.db.save"));
        c.dbfilename = ":memory:".into();
        assert_eq!(snapshot_path(&c), PathBuf::from("/d/memory.db.save"));
        c.backend = "postgres://u@h/db".into();
        assert_eq!(snapshot_path(&c), PathBuf::from("/d/memory.db.rdb"));
    }
}
