//! MULTI / EXEC / DISCARD / WATCH over TCP.

mod common;
use common::*;
use resp::Frame;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_runs_queued_commands_and_reports_runtime_errors_in_place() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["MULTI"]).await, ok());
    assert_eq!(c.cmd(&["SET", "a", "1"]).await, simple("QUEUED"));
    assert_eq!(c.cmd(&["SET", "a", "1", "BOGUS"]).await, simple("QUEUED"));
    assert_eq!(c.cmd(&["GET", "a"]).await, simple("QUEUED"));
    assert_eq!(
        c.cmd(&["EXEC"]).await,
        arr(vec![ok(), err("ERR syntax error"), bulk("1")])
    );
    assert_eq!(c.cmd(&["EXEC"]).await, err("ERR EXEC without MULTI"));
    assert_eq!(c.cmd(&["DISCARD"]).await, err("ERR DISCARD without MULTI"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_time_errors_abort_exec() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["MULTI"]).await, ok());
    assert_eq!(c.cmd(&["SET", "a", "1"]).await, simple("QUEUED"));
    assert_eq!(
        c.cmd(&["GET"]).await,
        err("ERR wrong number of arguments for 'get' command")
    );
    assert_eq!(
        c.cmd(&["NOPE", "x"]).await,
        err("ERR unknown command 'NOPE', with args beginning with: 'x' ")
    );
    assert_eq!(
        c.cmd(&["MULTI"]).await,
        err("ERR MULTI calls can not be nested")
    );
    assert_eq!(
        c.cmd(&["EXEC"]).await,
        err("EXECABORT Transaction discarded because of previous errors.")
    );
    assert_eq!(c.cmd(&["GET", "a"]).await, Frame::Null, "nothing ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_aborts_when_another_client_writes() {
    let s = start().await;
    let mut a = s.raw().await;
    let mut b = s.raw().await;
    assert_eq!(a.cmd(&["SET", "k", "1"]).await, ok());
    assert_eq!(a.cmd(&["WATCH", "k", "missing"]).await, ok());
    assert_eq!(b.cmd(&["SET", "k", "2"]).await, ok());
    assert_eq!(a.cmd(&["MULTI"]).await, ok());
    assert_eq!(a.cmd(&["SET", "k", "3"]).await, simple("QUEUED"));
    assert_eq!(a.cmd(&["EXEC"]).await, Frame::NullArray);
    assert_eq!(a.cmd(&["GET", "k"]).await, bulk("2"));

    // Unchanged keys: EXEC runs. WATCH is forgotten after EXEC.
    assert_eq!(a.cmd(&["WATCH", "k"]).await, ok());
    assert_eq!(a.cmd(&["MULTI"]).await, ok());
    assert_eq!(
        a.cmd(&["WATCH", "x"]).await,
        err("ERR WATCH inside MULTI is not allowed")
    );
    assert_eq!(a.cmd(&["SET", "k", "4"]).await, simple("QUEUED"));
    assert_eq!(a.cmd(&["EXEC"]).await, arr(vec![ok()]));

    // A watched key created by someone else aborts too.
    assert_eq!(a.cmd(&["WATCH", "new"]).await, ok());
    assert_eq!(b.cmd(&["SET", "new", "x"]).await, ok());
    assert_eq!(a.cmd(&["MULTI"]).await, ok());
    assert_eq!(a.cmd(&["GET", "new"]).await, simple("QUEUED"));
    assert_eq!(a.cmd(&["EXEC"]).await, Frame::NullArray);

    // UNWATCH and DISCARD forget.
    assert_eq!(a.cmd(&["WATCH", "k"]).await, ok());
    assert_eq!(a.cmd(&["UNWATCH"]).await, ok());
    assert_eq!(b.cmd(&["SET", "k", "5"]).await, ok());
    assert_eq!(a.cmd(&["MULTI"]).await, ok());
    assert_eq!(a.cmd(&["GET", "k"]).await, simple("QUEUED"));
    assert_eq!(a.cmd(&["EXEC"]).await, arr(vec![bulk("5")]));
}

/// Whether a WATCH of `key` survives `line` run by another client: EXEC then runs (`true`) or
/// answers the null array.
async fn exec_after(a: &mut Raw, b: &mut Raw, key: &str, line: &[&str]) -> bool {
    assert_eq!(a.cmd(&["WATCH", key]).await, ok());
    let r = b.cmd(line).await;
    assert!(!matches!(r, Frame::Error(_)), "{line:?}: {r:?}");
    assert_eq!(a.cmd(&["MULTI"]).await, ok());
    assert_eq!(a.cmd(&["PING"]).await, simple("QUEUED"));
    match a.cmd(&["EXEC"]).await {
        Frame::NullArray => false,
        r => {
            assert_eq!(r, arr(vec![simple("PONG")]));
            true
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streams_groups_change_without_failing_its_watch() {
    // Pinned from redis-server 7.0.15: the consumer-group commands do not signal the key
    // (no signalModifiedKey), so a WATCH of the stream survives them; changes of its
    // entries, and the stream's creation by XGROUP CREATE ... MKSTREAM, do not. (Its XSETID
    // does not signal either, which Relis does not copy: a WATCH of the stream fails.)
    let s = start().await;
    let (mut a, mut b) = (s.raw().await, s.raw().await);
    let survives: &[&[&str]] = &[
        &["XGROUP", "CREATE", "s", "g", "0"],
        &["XGROUP", "CREATE", "s", "h", "$", "MKSTREAM"],
        &["XGROUP", "CREATECONSUMER", "s", "g", "c"],
        &["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"],
        &["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0"],
        &["XCLAIM", "s", "g", "d", "0", "1-0"],
        &["XAUTOCLAIM", "s", "g", "c", "0", "0"],
        &["XACK", "s", "g", "1-0"],
        &["XGROUP", "SETID", "s", "g", "0"],
        &["XGROUP", "DELCONSUMER", "s", "g", "d"],
        &["XGROUP", "DESTROY", "s", "h"],
    ];
    assert_eq!(b.cmd(&["XADD", "s", "1-0", "f", "v"]).await, bulk("1-0"));
    for line in survives {
        assert!(exec_after(&mut a, &mut b, "s", line).await, "{line:?}");
    }
    // The groups' changes were written all the same.
    assert_eq!(b.cmd(&["XGROUP", "DESTROY", "s", "h"]).await, int(0));
    assert_eq!(
        b.cmd(&["XGROUP", "CREATECONSUMER", "s", "g", "c"]).await,
        int(0)
    );
    assert_eq!(
        b.cmd(&["XPENDING", "s", "g", "-", "+", "10"]).await,
        arr(vec![])
    );
    let fail: &[(&str, &[&str])] = &[
        ("s", &["XADD", "s", "6-0", "f", "v"]),
        ("s", &["XDEL", "s", "6-0"]),
        ("s", &["XTRIM", "s", "MAXLEN", "0"]),
        ("s", &["XSETID", "s", "7-0"]),
        ("t", &["XGROUP", "CREATE", "t", "g", "$", "MKSTREAM"]),
    ];
    for (key, line) in fail {
        assert!(!exec_after(&mut a, &mut b, key, line).await, "{line:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn select_inside_multi_applies_to_later_commands() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["MULTI"]).await, ok());
    assert_eq!(c.cmd(&["SELECT", "3"]).await, simple("QUEUED"));
    assert_eq!(c.cmd(&["SET", "in3", "yes"]).await, simple("QUEUED"));
    assert_eq!(c.cmd(&["EXEC"]).await, arr(vec![ok(), ok()]));
    assert_eq!(c.cmd(&["GET", "in3"]).await, bulk("yes"));
    assert_eq!(c.cmd(&["SELECT", "0"]).await, ok());
    assert_eq!(c.cmd(&["GET", "in3"]).await, Frame::Null);
}
