//! Runs the Python test suite (`tests/python`, pytest) as part of `cargo test`: makes a
//! virtualenv under the target directory (kept between runs), installs maturin, pytest and
//! redis-py into it from PyPI, builds and installs this package with `maturin develop` (a debug
//! build) and runs pytest, with relis-server (see [`server_binary`]) for the tests that open the
//! same file with it.
//!
//! Without python3 (or its venv module) the suite is skipped with the reason printed, except
//! under CI (`CI` set), where that is a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What the virtualenv holds; a change here makes the next run rebuild it.
const REQUIREMENTS: &[&str] = &["maturin>=1.9.4,<2", "pytest>=7", "redis>=5"];

fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// Skips (locally) or fails (under CI) with `why`.
fn unavailable(why: &str) {
    if under_ci() {
        panic!("the Python suite cannot run under CI: {why}");
    }
    eprintln!("skipping the Python suite: {why}");
}

fn run(cmd: &mut Command, what: &str) -> bool {
    match cmd.status() {
        Ok(s) if s.success() => true,
        Ok(s) => panic!("{what} failed ({s})"),
        Err(e) => panic!("{what} could not start: {e}"),
    }
}

/// The virtualenv, created (or refreshed) with [`REQUIREMENTS`] if needed.
fn venv(python: &str, dir: &Path) -> Option<PathBuf> {
    let bin = dir.join("bin");
    let marker = dir.join("relis-requirements.txt");
    let wanted = REQUIREMENTS.join("\n");
    if std::fs::read_to_string(&marker).ok().as_deref() == Some(wanted.as_str())
        && bin.join("python").exists()
    {
        return Some(bin);
    }
    let _ = std::fs::remove_dir_all(dir);
    let made = Command::new(python).args(["-m", "venv"]).arg(dir).status();
    match made {
        Ok(s) if s.success() => {}
        Ok(_) => {
            unavailable(&format!(
                "`{python} -m venv` failed (apt-get install python3-venv)"
            ));
            return None;
        }
        Err(e) => {
            unavailable(&format!("{python} cannot run: {e}"));
            return None;
        }
    }
    run(
        Command::new(bin.join("python"))
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(REQUIREMENTS),
        "pip install",
    );
    std::fs::write(&marker, wanted).expect("write the requirements marker");
    Some(bin)
}

/// relis-server, for the tests that open the same file with it: `RELIS_SERVER_BIN`, else the
/// workspace's debug build. `cargo test` of the workspace builds that one (with the engine's
/// test shims, for relis-server's own tests) before any test runs; only when it is missing is
/// it built here, with the same shims, so the binary relis-server's tests expect stays there.
fn server_binary(crate_dir: &Path, tmp: &Path) -> PathBuf {
    if let Ok(bin) = std::env::var("RELIS_SERVER_BIN") {
        return bin.into();
    }
    let server = tmp
        .parent()
        .expect("target dir")
        .join("debug")
        .join("relis-server");
    if !server.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        run(
            Command::new(cargo)
                .args([
                    "build",
                    "--quiet",
                    "-p",
                    "relis-server",
                    "--bin",
                    "relis-server",
                ])
                .args(["--features", "test-shims"])
                .current_dir(crate_dir),
            "cargo build -p relis-server",
        );
    }
    assert!(server.exists(), "no relis-server at {}", server.display());
    server
}

#[test]
fn pytest_suite() {
    let python = std::env::var("RELIS_PYTHON").unwrap_or_else(|_| "python3".into());
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let Some(bin) = venv(&python, &tmp.join("relis-py-venv")) else {
        return;
    };
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let venv_dir = bin.parent().expect("venv dir").to_path_buf();
    run(
        Command::new(bin.join("maturin"))
            .args(["develop", "--quiet"])
            .current_dir(crate_dir)
            .env("VIRTUAL_ENV", &venv_dir)
            .env("PATH", &path),
        "maturin develop",
    );
    let server = server_binary(crate_dir, tmp);
    run(
        Command::new(bin.join("python"))
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .arg(crate_dir.join("tests").join("python"))
            .env("RELIS_SERVER_BIN", &server)
            .env("VIRTUAL_ENV", &venv_dir)
            .env("PATH", &path),
        "pytest",
    );
}
