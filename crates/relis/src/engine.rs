//! The engine assembled: the SQLite backend (`backend::sqlite`) run with the data types'
//! writer hooks (`types::WRITER_HOOKS`). `Db`'s constructors live here, the one place that
//! knows both layers, so the backend names no data type and the types only call down into it.

use crate::backend::sqlite::db::{Db, Options};
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
        Db::open_engine(opts, crate::types::WRITER_HOOKS)
    }
}
