//! Replays the fuzz corpora of the RDB object decoder (fuzz/corpus/rdb_object) and the RDB file
//! reader (fuzz/corpus/rdb_file) through the fuzz targets' own bodies, so `cargo test` on stable runs every input the fuzzer kept with the same
//! checks.

#[path = "../../../fuzz/src/rdb_targets.rs"]
mod rdb_targets;

use std::path::PathBuf;

fn corpus(name: &str, target: fn(&[u8])) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(name);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus directory")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no corpus in {}", dir.display());
    for f in files {
        target(&std::fs::read(&f).expect("read"));
    }
}

#[test]
fn rdb_object_corpus() {
    corpus("rdb_object", rdb_targets::rdb_object);
}

#[test]
fn rdb_file_corpus() {
    corpus("rdb_file", rdb_targets::rdb_file);
}
