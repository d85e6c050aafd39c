//! The engine assembled: the SQLite backend (`backend::sqlite`) run with the data types'
//! writer hooks (`types::WRITER_HOOKS`). `Db`'s constructors live here, the one place that
//! knows both layers, so the backend names no data type and the types only call down into it.

use crate::backend::sqlite::db::{Db, Options, Store};
use crate::error::Result;
use std::path::Path;

impl Db {
    /// Opens (creating if needed) the database file at `path` with default options.
    ///
    /// # Errors
    /// The file cannot be opened, is not a Relis database, or its schema cannot be migrated.
    pub fn open(path: impl AsRef<Path>) -> Result<Db> {
        Db::open_with(Options::file(path))
    }

    /// Opens a database that lives in memory only.
    ///
    /// # Errors
    /// Only if SQLite cannot allocate it.
    pub fn open_in_memory() -> Result<Db> {
        Db::open_with(Options::default())
    }

    /// Opens a database with explicit options. The first open in a process configures SQLite
    /// for the whole process (see [`crate::configure_sqlite`]).
    ///
    /// # Errors
    /// The file cannot be opened, is not a Relis database, or its schema cannot be migrated.
    pub fn open_with(opts: Options) -> Result<Db> {
        Db::open_engine(opts, crate::types::WRITER_HOOKS, Store::Sqlite)
    }
}

#[cfg(feature = "postgres")]
impl Db {
    /// Opens an engine over the shared PostgreSQL at `url` (`postgres://user@host:port/db`, or
    /// `host=... user=...`), creating or migrating its schema: every node opened on the same
    /// database sees one keyspace, and no write of one node is lost to another's
    /// (ARCHITECTURE.md 10.1). Values are stored as `codec` encodes them (the server passes
    /// Redis's DUMP payload). `opts.path` is ignored: the writer runs each group over an
    /// in-memory scratch database. Jobs must declare their keys ([`Db::write_async_keys`],
    /// [`Db::read_async_keys`]); the typed convenience methods (`Db::set`, ...) declare none and
    /// so fail over PostgreSQL.
    ///
    /// # Errors
    /// PostgreSQL cannot be reached, or its schema cannot be migrated.
    pub fn open_postgres(
        url: &str,
        codec: crate::backend::postgres::Codec,
        opts: Options,
    ) -> Result<Db> {
        let remote = crate::scratch::Remote::connect(url, codec)?;
        let opts = Options { path: None, ..opts };
        let run: crate::backend::sqlite::db::WriterLoop =
            Box::new(move |conn, rx, clock, keyspace, max_batch, st, stats| {
                crate::scratch::run(conn, rx, clock, keyspace, max_batch, st, stats, remote)
            });
        Db::open_engine(
            opts,
            crate::types::WRITER_HOOKS,
            Store::Loop("postgres", run),
        )
    }
}
