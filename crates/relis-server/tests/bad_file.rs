//! A database file Relis must refuse at start-up: the server prints a message naming the file
//! and the problem, exits non-zero, and leaves the file (and its directory) exactly as it was.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Every entry in `dir` with its length and a hash of its bytes (`None` for a directory or an
/// unreadable file), in name order.
fn snapshot(dir: &Path) -> Vec<(String, Option<(usize, u64)>)> {
    use std::hash::{Hash, Hasher};
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| {
            let e = e.expect("entry");
            let digest = std::fs::read(e.path()).ok().map(|b| {
                let mut h = std::collections::hash_map::DefaultHasher::new();
                b.hash(&mut h);
                (b.len(), h.finish())
            });
            (e.file_name().to_string_lossy().into_owned(), digest)
        })
        .collect();
    out.sort();
    out
}

/// Runs the server on `dir` (through `wrap`, e.g. to drop privileges) and returns its exit
/// success and stderr; it must exit by itself within 20 s.
fn run_server(dir: &Path, wrap: &[&str]) -> (bool, String) {
    let bin = env!("CARGO_BIN_EXE_relis-server");
    let mut cmd = match wrap.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(bin);
            c
        }
        None => Command::new(bin),
    };
    let mut child = cmd
        .args(["--port", "0", "--dir"])
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn relis-server");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("try_wait") {
            break s;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!(
                "relis-server started on a file it should refuse ({})",
                dir.display()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    use std::io::Read;
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (status.success(), err)
}

/// Asserts that the server refuses `dir`'s `relis.db` with a message containing `why`, and
/// touches nothing.
fn refused(dir: &Path, why: &str) {
    refused_as(dir, why, &[]);
}

fn refused_as(dir: &Path, why: &str, wrap: &[&str]) {
    let before = snapshot(dir);
    let (ok, err) = run_server(dir, wrap);
    assert!(!ok, "exit status 0 for {why}: {err}");
    let file = dir.join("relis.db").display().to_string();
    assert!(err.contains(&file), "message does not name {file}: {err}");
    assert!(err.contains(why), "message does not say {why:?}: {err}");
    assert_eq!(before, snapshot(dir), "the directory changed ({why})");
}

/// A real Relis file with some data, closed cleanly.
fn relis_file(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("relis.db");
    let db = relis::Db::open(&path).expect("open");
    for i in 0..3000 {
        db.set(format!("key:{i}"), "x".repeat(300)).expect("set");
    }
    drop(db);
    path
}

#[test]
fn random_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let bytes: Vec<u8> = (0..65536).map(|_| rand::random::<u8>()).collect();
    std::fs::write(dir.path().join("relis.db"), bytes).unwrap();
    refused(dir.path(), "not an SQLite database file");
}

#[test]
fn truncated_relis_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = relis_file(dir.path());
    let full = std::fs::read(&path).unwrap();
    assert!(full.len() > 100_000, "{}", full.len());
    for cut in [full.len() - 4096, full.len() / 2, 8192, 50] {
        std::fs::write(&path, &full[..cut]).unwrap();
        refused(dir.path(), "truncated");
    }
}

#[test]
fn sqlite_file_of_another_program() {
    let dir = tempfile::tempdir().unwrap();
    let conn = rusqlite::Connection::open(dir.path().join("relis.db")).unwrap();
    conn.execute_batch("CREATE TABLE accounts(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO accounts(name) VALUES ('a');")
        .unwrap();
    drop(conn);
    refused(dir.path(), "not a Relis database");
    // The same with a user_version that looks like one of ours.
    let conn = rusqlite::Connection::open(dir.path().join("relis.db")).unwrap();
    conn.pragma_update(None, "user_version", 2).unwrap();
    drop(conn);
    refused(
        dir.path(),
        "not a Relis database (schema version 2, but no `relis_meta`)",
    );
}

#[test]
fn relis_file_from_a_newer_version() {
    let dir = tempfile::tempdir().unwrap();
    let path = relis_file(dir.path());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.pragma_update(None, "user_version", 999).unwrap();
    drop(conn);
    refused(
        dir.path(),
        "schema version 999 is newer than this Relis understands",
    );
}

#[test]
fn directory_in_place_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("relis.db")).unwrap();
    refused(dir.path(), "is a directory");
}

#[test]
fn file_the_server_may_not_read_or_write() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = relis_file(dir.path());
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    // Root reads anything: as root, drop to `nobody` for the server; without setpriv, skip.
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let wrap: &[&str] = if root {
        if !Path::new("/usr/bin/setpriv").exists() {
            eprintln!("skipped: running as root without setpriv");
            return;
        }
        &[
            "/usr/bin/setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
        ]
    } else {
        &[]
    };
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    refused_as(dir.path(), "cannot read the database file", wrap);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    refused_as(
        dir.path(),
        "cannot open the database file for writing",
        wrap,
    );
}

#[test]
fn a_good_file_still_opens() {
    let dir = tempfile::tempdir().unwrap();
    let path = relis_file(dir.path());
    let db = relis::Db::open(&path).expect("reopen");
    assert_eq!(db.get("key:7").unwrap().map(|v| v.len()), Some(300));
}
