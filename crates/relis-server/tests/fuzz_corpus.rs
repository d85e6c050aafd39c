//! Replays the fuzz corpora of the command-parser target (fuzz/corpus/command) and of the Lua
//! converters (fuzz/corpus/lua) through the fuzz targets' own bodies, so `cargo test` on
//! stable runs every input the fuzzer kept (including the ones that once crashed).

#[path = "../../../fuzz/src/cmd_targets.rs"]
mod cmd_targets;
#[path = "../../../fuzz/src/lua_targets.rs"]
mod lua_targets;

use std::path::{Path, PathBuf};

/// The corpus files of one target, sorted.
fn corpus(target: &str) -> Vec<PathBuf> {
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
}

#[test]
fn lua_corpus() {
    // The writer thread's stack (scripts run there), for the deep inputs.
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(|| {
            for path in corpus("lua") {
                lua_targets::lua(&read(&path));
            }
        })
        .expect("thread")
        .join()
        .expect("no input panics");
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn command_corpus() {
    let files = corpus("command");
    let mut parsed = 0;
    for path in &files {
        if cmd_targets::command(&read(path)) {
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
