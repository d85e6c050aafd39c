//! The SQL text of each data family, as named constants (one file per family).

pub(crate) mod zset_rank;
