//! The SQL text the data types run on SQLite, one file per family, each statement a
//! constant named by what it does (a statement built at run time, a small function), so the
//! type code holds no SQL text and another backend can supply the same names.

pub(crate) mod hash;
pub(crate) mod keys;
pub(crate) mod list;
pub(crate) mod server;
pub(crate) mod set;
pub(crate) mod stream;
pub(crate) mod strings;
pub(crate) mod usage;
pub(crate) mod value;
pub(crate) mod zset;
pub(crate) mod zset_rank;
