//! Storage backends: how the keyspace is kept. SQLite (`sqlite/`), and the shared key table
//! of the PostgreSQL backend (`postgres/`, feature `postgres`; see ARCHITECTURE.md 10.1).

#[cfg(feature = "postgres")]
pub mod postgres;
pub(crate) mod sqlite;
