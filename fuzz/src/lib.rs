//! The fuzz targets' bodies, shared with the corpus-replay tests that `cargo test` runs
//! (`crates/resp/tests/fuzz_corpus.rs`, `crates/relis-server/tests/fuzz_corpus.rs` and
//! `crates/relis/tests/fuzz_corpus.rs`, `crates/rdb/tests/fuzz_corpus.rs` include these files by path, so stable Rust replays
//! exactly what the fuzzer ran).

#[cfg(feature = "cmd")]
pub mod cmd_targets;
#[cfg(feature = "cmd")]
pub mod lua_targets;
#[cfg(feature = "rdb")]
pub mod rdb_targets;
pub mod resp_targets;
#[cfg(feature = "sql")]
pub mod engine_targets;
#[cfg(feature = "sql")]
pub mod sql_targets;
