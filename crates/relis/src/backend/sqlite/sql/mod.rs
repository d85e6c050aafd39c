//! The SQL text the data types run, one file per family, as constants named by what each
//! statement does (builders for the few whose text depends on their arguments). The type code
//! holds no SQL: it calls `stmt::prepare(conn, q::NAME)`.

pub(crate) mod hash;
pub(crate) mod keys;
pub(crate) mod server;
pub(crate) mod set;
pub(crate) mod strings;
pub(crate) mod usage;
pub(crate) mod value;
