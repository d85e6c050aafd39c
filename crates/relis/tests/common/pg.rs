//! A throwaway PostgreSQL cluster for tests: `initdb` in a temporary directory (as the
//! `postgres` user when the tests run as root, since initdb refuses root), `pg_ctl start` on a
//! free port listening on 127.0.0.1 only, stopped and removed when dropped. Debian's
//! `postgresql` package provides the binaries (`.ci/run` installs it).

use std::path::{Path, PathBuf};
use std::process::Command;

/// A running throwaway cluster.
pub struct Pg {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    as_postgres: bool,
}

/// The newest installed PostgreSQL's binaries (`/usr/lib/postgresql/<version>/bin`), or the
/// ones on PATH.
fn bin_dir() -> Option<PathBuf> {
    let mut dirs: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    dirs.sort();
    if let Some((_, bin)) = dirs.pop() {
        return Some(bin);
    }
    let which = Command::new("sh")
        .args(["-c", "command -v initdb"])
        .output()
        .ok()?;
    let path = String::from_utf8(which.stdout).ok()?;
    Some(Path::new(path.trim()).parent()?.to_path_buf())
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Pg {
    /// Starts a cluster, or `None` (with a message) when PostgreSQL is not installed; under CI
    /// (`CI` set) its absence is a failure.
    pub fn start() -> Option<Pg> {
        let Some(bin) = bin_dir() else {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must have PostgreSQL installed (see .ci/run)"
            );
            eprintln!("skipped: PostgreSQL is not installed (apt-get install postgresql)");
            return None;
        };
        let dir = tempfile::tempdir().expect("tempdir");
        // SAFETY: geteuid has no preconditions.
        let as_postgres = unsafe { libc::geteuid() } == 0;
        if as_postgres {
            let out = Command::new("id").args(["-u", "postgres"]).output();
            let uid = out.ok().and_then(|o| String::from_utf8(o.stdout).ok());
            let uid: u32 = uid
                .and_then(|u| u.trim().parse().ok())
                .expect("a `postgres` user (Debian's postgresql package creates it)");
            std::os::unix::fs::chown(dir.path(), Some(uid), None).expect("chown");
        }
        let pg = Pg {
            dir,
            bin,
            port: free_port(),
            as_postgres,
        };
        let data = pg.dir.path().join("data");
        pg.run(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
            ],
        );
        let opts = format!(
            "-p {} -c listen_addresses=127.0.0.1 -c unix_socket_directories={} -c fsync=off",
            pg.port,
            pg.dir.path().display()
        );
        let log = pg.dir.path().join("log");
        pg.run(
            "pg_ctl",
            &[
                "-D",
                data.to_str().unwrap(),
                "-o",
                &opts,
                "-l",
                log.to_str().unwrap(),
                "-w",
                "start",
            ],
        );
        Some(pg)
    }

    /// The connection string of the cluster's `postgres` database.
    pub fn url(&self) -> String {
        format!(
            "host=127.0.0.1 port={} user=postgres dbname=postgres",
            self.port
        )
    }

    /// The same database as a URL, as `--backend` takes it.
    pub fn uri(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Runs `sql` through `psql` as the cluster's superuser; its output (unaligned, tuples
    /// only). (relis-server's tests use it.)
    #[allow(dead_code)]
    pub fn psql(&self, sql: &str) -> String {
        let out = self
            .command("psql")
            .args(["-X", "-q", "-A", "-t", "-h", "127.0.0.1", "-U", "postgres"])
            .args(["-p", &self.port.to_string(), "-d", "postgres", "-c", sql])
            .output()
            .expect("psql runs");
        assert!(
            out.status.success(),
            "psql: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `tool` of the installed PostgreSQL, run as the `postgres` user when the tests are root.
    fn command(&self, tool: &str) -> Command {
        let exe = self.bin.join(tool);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        }
    }

    fn run(&self, tool: &str, args: &[&str]) {
        let out = self.command(tool).args(args).output().expect(tool);
        assert!(
            out.status.success(),
            "{tool} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Pg {
    fn drop(&mut self) {
        let data = self.dir.path().join("data");
        let _ = self
            .command("pg_ctl")
            .args([
                "-D",
                data.to_str().unwrap(),
                "-m",
                "immediate",
                "-w",
                "stop",
            ])
            .output();
    }
}
