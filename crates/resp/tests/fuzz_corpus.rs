//! Replays the fuzz corpus of the RESP targets (fuzz/corpus/request, fuzz/corpus/frame)
//! through the fuzz targets' own bodies, so `cargo test` on stable runs every input the fuzzer
//! kept (including the ones that once crashed) with the same checks.

#[path = "../../../fuzz/src/resp_targets.rs"]
mod resp_targets;

use std::path::PathBuf;

/// The corpus files of `target`, in name order.
fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    let out: Vec<_> = files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).expect("read");
            (p, bytes)
        })
        .collect();
    assert!(!out.is_empty(), "no corpus in {}", dir.display());
    out
}

#[test]
fn request_corpus() {
    for (path, data) in corpus("request") {
        eprintln!("{}", path.display());
        resp_targets::request(&data);
    }
}

#[test]
fn frame_corpus() {
    for (path, data) in corpus("frame") {
        eprintln!("{}", path.display());
        resp_targets::frame(&data);
    }
}
