//! The WAL index's locks kept between transactions (`backend/sqlite/shmlocks.rs`): a run of
//! commits takes them from the OS about once, and another process on the same file is served
//! as without the module: its writes get in under a steady load of this one's, and the writes
//! of both processes to one key lose nothing.
#![cfg(target_os = "linux")]

use relis::Db;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn shm(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push("-shm");
    PathBuf::from(s)
}

#[test]
fn a_run_of_commits_takes_the_locks_from_the_os_about_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let db = Db::open(&path).unwrap();
    let before = relis::shm_lock_counts(&shm(&path)).unwrap_or((0, 0));
    const N: u64 = 2000;
    for i in 0..N {
        db.set(format!("k{i}"), "v").unwrap();
    }
    let (calls, granted) = relis::shm_lock_counts(&shm(&path)).expect("the -shm file's locks");
    let (calls, granted) = (calls - before.0, granted - before.1);
    // Each commit asks for six lock changes (read mark, write lock, read lock); without the
    // module every one is a system call. With it, a run of commits makes them about once per
    // give-back (every millisecond at most).
    assert!(
        calls + granted >= 5 * N,
        "{calls} calls and {granted} grants for {N} commits"
    );
    assert!(
        granted >= 2 * calls,
        "{calls} calls and {granted} grants for {N} commits"
    );
}

const CHILD: &str = "RELIS_SHM_LOCKS_CHILD";
/// The child's increments.
const CHILD_INCRS: i64 = 30;

#[test]
fn with_another_process_on_the_file_every_lock_goes_to_the_os_and_nothing_is_lost() {
    if let Ok(path) = std::env::var(CHILD) {
        // The child: increments of the key the parent increments too, between two lines that
        // tell the parent when it has the file open.
        let db = Db::open(&path).unwrap();
        println!("open");
        for _ in 0..CHILD_INCRS {
            db.incr_by("n", 1).unwrap();
            std::thread::sleep(Duration::from_millis(2));
        }
        println!("done");
        std::thread::sleep(Duration::from_millis(50));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let db = Db::open(&path).unwrap();
    db.set("n", "0").unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "with_another_process_on_the_file_every_lock_goes_to_the_os_and_nothing_is_lost",
            "--nocapture",
        ])
        .env(CHILD, &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let (tx, lines) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let _ = tx.send(line.unwrap());
        }
    });
    // The parent writes at a steady pace all along (SQLite's busy handler gives the child the
    // write lock when it finds it free between two of the parent's transactions).
    let start = Instant::now();
    let (mut ours, mut opened, mut seen) = (0, None, Vec::new());
    let (mut from, mut to) = (None, None);
    let status = loop {
        db.incr_by("n", 1).unwrap();
        ours += 1;
        std::thread::sleep(Duration::from_micros(100));
        while let Ok(line) = lines.try_recv() {
            seen.push(line.clone());
            if line == "open" {
                opened = Some(Instant::now());
            } else if line == "done" {
                // From a moment after the child opened the file until it was done.
                if from.is_some() {
                    to = Some(relis::shm_lock_counts(&shm(&path)).unwrap());
                }
            }
        }
        if opened.is_some_and(|t: Instant| t.elapsed() > Duration::from_millis(10)) {
            from = Some(relis::shm_lock_counts(&shm(&path)).unwrap());
            opened = None;
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the child has not finished its {CHILD_INCRS} increments in 60 s"
        );
    };
    assert!(status.success(), "the child failed (it printed {seen:?})");
    assert_eq!(
        db.get("n").unwrap().as_deref(),
        Some((ours + CHILD_INCRS).to_string().as_bytes())
    );
    // While the child had the file open, the parent kept no lock: its requests went to the OS.
    if let (Some((calls, granted)), Some((calls2, granted2))) = (from, to) {
        assert!(calls2 - calls >= 6, "{} calls", calls2 - calls);
        assert!(
            granted2 - granted <= (calls2 - calls) / 8,
            "{} calls and {} grants while another process had the file open",
            calls2 - calls,
            granted2 - granted
        );
    } else {
        panic!("the child's run was too short to look at (it printed {seen:?})");
    }
    // Alone again, the process keeps its locks again.
    let (calls, granted) = relis::shm_lock_counts(&shm(&path)).unwrap();
    for _ in 0..1000 {
        db.incr_by("n", 1).unwrap();
    }
    let (calls2, granted2) = relis::shm_lock_counts(&shm(&path)).unwrap();
    assert!(
        granted2 - granted >= 2 * (calls2 - calls),
        "{} calls and {} grants for 1000 commits after the child left",
        calls2 - calls,
        granted2 - granted
    );
}
