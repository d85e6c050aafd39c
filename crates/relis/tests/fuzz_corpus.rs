//! Replays the fuzz corpora of the engine's targets (fuzz/corpus/sql_sandbox, glob, sql_params)
//! through the fuzz targets' own bodies, so `cargo test` on stable runs every input the fuzzer
//! kept (including the ones that once crashed) with the same checks.

#[path = "../../../fuzz/src/sql_targets.rs"]
mod sql_targets;

use std::path::PathBuf;

#[test]
fn sql_sandbox_corpus() {
    for data in corpus("sql_sandbox") {
        sql_targets::sql_sandbox(&data);
    }
}

/// The seeds hold the attacks of issue 14 as text: each reaches the engine as written.
#[test]
fn text_inputs_are_statements() {
    let program =
        sql_targets::program(b"#CREATE TEMP TABLE k (a)\0ALTER TABLE temp.k RENAME TO relis_keys");
    assert_eq!(
        program,
        [
            "CREATE TEMP TABLE k (a)",
            "ALTER TABLE temp.k RENAME TO relis_keys"
        ]
    );
    assert!(!sql_targets::program(b"\x01\x02\x03\x04\x05\x06\x07").is_empty());
}

#[path = "../../../fuzz/src/engine_targets.rs"]
mod engine_targets;

/// Every input kept for a target, in name order.
fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no corpus in {}", dir.display());
    files
        .iter()
        .map(|p| std::fs::read(p).expect("read"))
        .collect()
}

#[test]
fn glob_corpus() {
    for data in corpus("glob") {
        engine_targets::glob(&data);
    }
}

#[test]
fn sql_params_corpus() {
    for data in corpus("sql_params") {
        engine_targets::sql_params(&data);
    }
}
