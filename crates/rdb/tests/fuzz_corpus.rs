//! Replays the fuzz corpus of the RDB object decoder (fuzz/corpus/rdb_object) through the fuzz
//! target's own body, so `cargo test` on stable runs every input the fuzzer kept with the same
//! checks.

#[path = "../../../fuzz/src/rdb_targets.rs"]
mod rdb_targets;

use std::path::PathBuf;

#[test]
fn rdb_object_corpus() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/rdb_object");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus directory")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no corpus in {}", dir.display());
    for f in files {
        rdb_targets::rdb_object(&std::fs::read(&f).expect("read"));
    }
}
