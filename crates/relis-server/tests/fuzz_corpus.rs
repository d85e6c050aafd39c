//! Replays the fuzz corpus of the command-parser target (fuzz/corpus/command) through the fuzz
//! target's own body, so `cargo test` on stable runs every input the fuzzer kept (including the
//! ones that once crashed).

#[path = "../../../fuzz/src/cmd_targets.rs"]
mod cmd_targets;

use std::path::PathBuf;

#[test]
fn command_corpus() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/command");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no corpus in {}", dir.display());
    let mut parsed = 0;
    for path in &files {
        let data = std::fs::read(path).expect("read");
        if cmd_targets::command(&data) {
            parsed += 1;
        }
    }
    // The seeds are valid command lines for most commands: a parser that rejects everything
    // would show here.
    assert!(
        parsed * 4 >= files.len(),
        "{parsed} of {} parsed",
        files.len()
    );
}
