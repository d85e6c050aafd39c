//! Storage backends: how the keyspace is kept. Today one, SQLite (`sqlite/`).

pub(crate) mod sqlite;
