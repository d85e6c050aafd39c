//! Disk full and I/O errors under the server, injected by `relis::faults` (a VFS shim on the
//! server's SQLite files, switched by the test): the writes that cannot commit get a MISCONF
//! error naming the problem, reads keep working, the server keeps running, writes work again
//! once the fault is cleared, and after a restart everything acknowledged is there.

mod common;

use common::*;
use relis::faults::{self, Fault};
use resp::Frame;

const FULL: &str = "MISCONF Relis cannot commit to its SQLite file: the disk is full. Writes are refused until space is freed; reads keep working.";
const IO: &str = "MISCONF Relis cannot commit to its SQLite file: the disk reported an I/O error (see the server log). Writes fail until it is fixed; reads keep working.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disk_full_and_io_errors_over_tcp() {
    faults::install();
    let mut s = start().await;
    let dir = s.dir.path().to_path_buf();
    let mut c = s.raw().await;
    let mut other = s.raw().await;
    assert_eq!(c.cmd(&["SET", "a", "1"]).await, ok());
    assert_eq!(c.cmd(&["RPUSH", "l", "x"]).await, int(1));

    for (fault, text) in [(Fault::DiskFull, FULL), (Fault::WriteError, IO)] {
        faults::set(&dir, Some(fault));
        // A pipeline mixing writes and reads: each write gets the error, each read its value.
        let mut p = Vec::new();
        for args in [
            &["SET", "k", "v"][..],
            &["GET", "a"],
            &["INCR", "n"],
            &["HSET", "h", "f", "v"],
            &["LRANGE", "l", "0", "-1"],
            &["SQL.EXEC", "CREATE TABLE t(x)"],
            &["DBSIZE"],
        ] {
            let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
            p.extend(encode_command(&a));
        }
        c.send(&p).await;
        assert_eq!(c.read().await, Some(err(text)), "SET");
        assert_eq!(c.read().await, Some(bulk("1")), "GET");
        assert_eq!(c.read().await, Some(err(text)), "INCR");
        assert_eq!(c.read().await, Some(err(text)), "HSET");
        assert_eq!(c.read().await, Some(bulks(&["x"])), "LRANGE");
        assert_eq!(c.read().await, Some(err(text)), "SQL.EXEC");
        assert_eq!(c.read().await, Some(int(2)), "DBSIZE");
        // Another client's writes fail too, and a transaction is not half applied.
        assert_eq!(other.cmd(&["MULTI"]).await, ok());
        assert_eq!(other.cmd(&["SET", "m1", "1"]).await, simple("QUEUED"));
        assert_eq!(other.cmd(&["SET", "m2", "2"]).await, simple("QUEUED"));
        // The transaction ran, then its commit failed: EXEC answers with the error alone.
        assert_eq!(other.cmd(&["EXEC"]).await, err(text));
        assert_eq!(other.cmd(&["EXISTS", "m1", "m2"]).await, int(0));
        // The fault cleared, writes work at once.
        faults::set(&dir, None);
        assert_eq!(c.cmd(&["GET", "k"]).await, Frame::Null);
        assert_eq!(c.cmd(&["INCR", "n"]).await, int(1));
        assert_eq!(c.cmd(&["DEL", "n"]).await, int(1));
    }
    assert_eq!(c.cmd(&["SET", "b", "2"]).await, ok());
    s.stop().await;

    // Restarted on the same files: every acknowledged write, nothing else.
    let s2 = start_with(|cfg| cfg.dir = dir.clone()).await;
    let mut c = s2.raw().await;
    assert_eq!(
        c.cmd(&["MGET", "a", "b", "k"]).await,
        Frame::Array(vec![bulk("1"), bulk("2"), Frame::Null])
    );
    assert_eq!(c.cmd(&["LRANGE", "l", "0", "-1"]).await, bulks(&["x"]));
    assert_eq!(c.cmd(&["DBSIZE"]).await, int(3));
}
