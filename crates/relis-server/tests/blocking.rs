//! Blocking list commands across clients: FIFO service, one push serving several clients,
//! clients blocked on several keys, BLMOVE chains, timeouts (short, real waits), MULTI, CLIENT
//! UNBLOCK, INFO blocked_clients, and clients that go away while blocked. Expected replies are
//! redis-server 7.0.15's.

mod common;
use common::*;
use resp::Frame;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_are_served_first_come_first_served() {
    let s = start().await;
    let mut ctl = s.raw().await;
    let mut a = s.raw().await;
    let mut b = s.raw().await;
    send(&mut a, &["BLPOP", "q", "0"]).await;
    wait_blocked(&mut ctl, 1).await;
    send(&mut b, &["BLPOP", "q", "0"]).await;
    wait_blocked(&mut ctl, 2).await;

    assert_eq!(ctl.cmd(&["RPUSH", "q", "first"]).await, int(1));
    assert_eq!(a.read().await.unwrap(), bulks(&["q", "first"]));
    still_blocked(&mut b).await;
    assert_eq!(blocked(&mut ctl).await, 1);

    assert_eq!(ctl.cmd(&["RPUSH", "q", "second"]).await, int(1));
    assert_eq!(b.read().await.unwrap(), bulks(&["q", "second"]));
    assert_eq!(blocked(&mut ctl).await, 0);
    assert_eq!(
        ctl.cmd(&["EXISTS", "q"]).await,
        int(0),
        "both elements consumed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_push_of_two_elements_serves_two_clients() {
    let s = start().await;
    let mut ctl = s.raw().await;
    let mut a = s.raw().await;
    let mut b = s.raw().await;
    send(&mut a, &["BLPOP", "q", "0"]).await;
    wait_blocked(&mut ctl, 1).await;
    send(&mut b, &["BRPOP", "q", "0"]).await;
    wait_blocked(&mut ctl, 2).await;
    // The push replies with the length it made, before the waiters take their elements.
    assert_eq!(ctl.cmd(&["LPUSH", "q", "a", "b"]).await, int(2));
    assert_eq!(a.read().await.unwrap(), bulks(&["q", "b"]));
    assert_eq!(b.read().await.unwrap(), bulks(&["q", "a"]));
    assert_eq!(ctl.cmd(&["EXISTS", "q"]).await, int(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_blocked_on_several_keys_gets_the_key_that_had_data() {
    let s = start().await;
    let mut ctl = s.raw().await;
    let mut a = s.raw().await;
    send(&mut a, &["BRPOP", "k1", "k2", "k3", "0"]).await;
    wait_blocked(&mut ctl, 1).await;
    assert_eq!(ctl.cmd(&["RPUSH", "k2", "x", "y"]).await, int(2));
    assert_eq!(a.read().await.unwrap(), bulks(&["k2", "y"]));
    assert_eq!(ctl.cmd(&["LRANGE", "k2", "0", "-1"]).await, bulks(&["x"]));
    // Keys of another type do not stop a blocked client from being served by another key.
    send(&mut a, &["BLPOP", "k1", "k3", "0"]).await;
    wait_blocked(&mut ctl, 1).await;
    assert_eq!(ctl.cmd(&["SET", "k1", "str"]).await, ok());
    assert_eq!(ctl.cmd(&["RPUSH", "k3", "z"]).await, int(1));
    assert_eq!(a.read().await.unwrap(), bulks(&["k3", "z"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blmpop_takes_up_to_its_count() {
    let s = start().await;
    let mut ctl = s.raw().await;
    let mut a = s.raw().await;
    send(
        &mut a,
        &["BLMPOP", "0", "2", "x", "q", "LEFT", "COUNT", "2"],
    )
    .await;
    wait_blocked(&mut ctl, 1).await;
    assert_eq!(ctl.cmd(&["RPUSH", "q", "a", "b", "c"]).await, int(3));
    assert_eq!(
        a.read().await.unwrap(),
        arr(vec![bulk("q"), bulks(&["a", "b"])])
    );
    assert_eq!(ctl.cmd(&["LRANGE", "q", "0", "-1"]).await, bulks(&["c"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blmove_feeds_the_clients_blocked_on_its_destination() {
    let s = start().await;
    let mut ctl = s.raw().await;
    let mut mover = s.raw().await;
    let mut reader = s.raw().await;
    send(&mut mover, &["BLMOVE", "a", "b", "LEFT", "RIGHT", "0"]).await;
    wait_blocked(&mut ctl, 1).await;
    send(&mut reader, &["BLPOP", "b", "0"]).await;
    wait_blocked(&mut ctl, 2).await;
    assert_eq!(ctl.cmd(&["RPUSH", "a", "v"]).await, int(1));
    assert_eq!(mover.read().await.unwrap(), bulk("v"));
    assert_eq!(reader.read().await.unwrap(), bulks(&["b", "v"]));
    assert_eq!(ctl.cmd(&["EXISTS", "a", "b"]).await, int(0));

    // LMOVE and RPOPLPUSH feed clients blocked on their destination too.
    send(&mut reader, &["BLPOP", "dst", "0"]).await;
    wait_blocked(&mut ctl, 1).await;
    assert_eq!(ctl.cmd(&["RPUSH", "src", "1", "2"]).await, int(2));
    assert_eq!(
        ctl.cmd(&["LMOVE", "src", "dst", "LEFT", "LEFT"]).await,
        bulk("1")
    );
    assert_eq!(reader.read().await.unwrap(), bulks(&["dst", "1"]));
    send(&mut reader, &["BRPOPLPUSH", "dst", "other", "0"]).await;
    wait_blocked(&mut ctl, 1).await;
    assert_eq!(ctl.cmd(&["RPOPLPUSH", "src", "dst"]).await, bulk("2"));
    assert_eq!(reader.read().await.unwrap(), bulk("2"));
    assert_eq!(
        ctl.cmd(&["LRANGE", "other", "0", "-1"]).await,
        bulks(&["2"])
    );

    // The same key as source and destination: a rotation.
    send(&mut reader, &["BRPOPLPUSH", "rot", "rot", "0"]).await;
    wait_blocked(&mut ctl, 1).await;
    assert_eq!(ctl.cmd(&["RPUSH", "rot", "r"]).await, int(1));
    assert_eq!(reader.read().await.unwrap(), bulk("r"));
    assert_eq!(ctl.cmd(&["LRANGE", "rot", "0", "-1"]).await, bulks(&["r"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blmove_to_a_key_of_another_type_fails_when_served() {
    let s = start().await;
    let mut ctl = s.raw().await;
    let mut a = s.raw().await;
    send(&mut a, &["BLMOVE", "src", "dst", "LEFT", "RIGHT", "0"]).await;
    wait_blocked(&mut ctl, 1).await;
    assert_eq!(ctl.cmd(&["SET", "dst", "str"]).await, ok());
    assert_eq!(ctl.cmd(&["RPUSH", "src", "a"]).await, int(1));
    assert_eq!(
        a.read().await.unwrap(),
        err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
    assert_eq!(blocked(&mut ctl).await, 0);
    assert_eq!(ctl.cmd(&["LRANGE", "src", "0", "-1"]).await, bulks(&["a"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeouts_reply_nil() {
    let s = start().await;
    let mut c = s.raw().await;
    let t = Instant::now();
    assert_eq!(c.cmd(&["BLPOP", "q", "0.1"]).await, Frame::NullArray);
    let waited = t.elapsed();
    assert!(
        waited >= Duration::from_millis(100) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    let t = Instant::now();
    assert_eq!(
        c.cmd(&["BLMOVE", "q", "d", "LEFT", "LEFT", "0.05"]).await,
        Frame::NullArray,
        "BLMOVE times out with a null array too"
    );
    assert!(t.elapsed() >= Duration::from_millis(50));
    assert_eq!(
        c.cmd(&["BLMPOP", "0.05", "1", "q", "LEFT"]).await,
        Frame::NullArray
    );
    let mut c3 = s.raw().await;
    assert!(matches!(c3.cmd(&["HELLO", "3"]).await, Frame::Map(_)));
    send(&mut c3, &["BRPOP", "q", "0.05"]).await;
    assert_eq!(show(&c3.read_raw().await.unwrap()), show(b"_\r\n"));
    // The connection works on after a timeout, and the server forgot the waiter.
    assert_eq!(c.cmd(&["PING"]).await, simple("PONG"));
    assert_eq!(blocked(&mut c).await, 0);
    assert_eq!(c.cmd(&["RPUSH", "q", "x"]).await, int(1));
    assert_eq!(
        c.cmd(&["LLEN", "q"]).await,
        int(1),
        "no timed-out waiter took it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inside_multi_a_blocking_pop_replies_at_once() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["MULTI"]).await, ok());
    assert_eq!(c.cmd(&["BLPOP", "empty", "0"]).await, simple("QUEUED"));
    assert_eq!(
        c.cmd(&["BRPOPLPUSH", "empty", "d", "0"]).await,
        simple("QUEUED")
    );
    let t = Instant::now();
    assert_eq!(
        c.cmd(&["EXEC"]).await,
        arr(vec![Frame::NullArray, Frame::Null])
    );
    assert!(t.elapsed() < Duration::from_secs(2));
    assert_eq!(blocked(&mut c).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_inside_multi_serves_blocked_clients() {
    let s = start().await;
    let mut ctl = s.raw().await;
    let mut a = s.raw().await;
    send(&mut a, &["BLPOP", "q", "0"]).await;
    wait_blocked(&mut ctl, 1).await;
    assert_eq!(ctl.cmd(&["MULTI"]).await, ok());
    assert_eq!(ctl.cmd(&["RPUSH", "q", "x"]).await, simple("QUEUED"));
    assert_eq!(ctl.cmd(&["EXEC"]).await, arr(vec![int(1)]));
    assert_eq!(a.read().await.unwrap(), bulks(&["q", "x"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_unblock_timeout_and_error() {
    let s = start().await;
    let mut ctl = s.raw().await;
    let mut a = s.raw().await;
    let Frame::Integer(id) = a.cmd(&["CLIENT", "ID"]).await else {
        panic!("CLIENT ID is an integer");
    };
    let id = id.to_string();
    assert_eq!(
        ctl.cmd(&["CLIENT", "UNBLOCK", &id]).await,
        int(0),
        "not blocked"
    );

    send(&mut a, &["BLPOP", "q", "0"]).await;
    wait_blocked(&mut ctl, 1).await;
    assert_eq!(ctl.cmd(&["CLIENT", "UNBLOCK", &id]).await, int(1));
    assert_eq!(a.read().await.unwrap(), Frame::NullArray);
    assert_eq!(blocked(&mut ctl).await, 0);

    send(&mut a, &["BLMOVE", "q", "d", "LEFT", "LEFT", "0"]).await;
    wait_blocked(&mut ctl, 1).await;
    assert_eq!(
        ctl.cmd(&["CLIENT", "UNBLOCK", &id, "TIMEOUT"]).await,
        int(1)
    );
    assert_eq!(a.read().await.unwrap(), Frame::NullArray);

    send(&mut a, &["BLMPOP", "0", "1", "q", "LEFT"]).await;
    wait_blocked(&mut ctl, 1).await;
    assert_eq!(ctl.cmd(&["CLIENT", "UNBLOCK", &id, "error"]).await, int(1));
    assert_eq!(
        a.read().await.unwrap(),
        err("UNBLOCKED client unblocked via CLIENT UNBLOCK")
    );
    assert_eq!(ctl.cmd(&["CLIENT", "UNBLOCK", &id, "ERROR"]).await, int(0));
    // The unblocked client goes on, and takes nothing from a later push.
    assert_eq!(a.cmd(&["PING"]).await, simple("PONG"));
    assert_eq!(ctl.cmd(&["RPUSH", "q", "x"]).await, int(1));
    assert_eq!(ctl.cmd(&["LLEN", "q"]).await, int(1));

    // Errors, as Redis words them.
    assert_eq!(
        ctl.cmd(&["CLIENT", "UNBLOCK", "abc"]).await,
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        ctl.cmd(&["CLIENT", "UNBLOCK", "abc", "bogus"]).await,
        err("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
    );
    assert_eq!(
        ctl.cmd(&["CLIENT", "UNBLOCK", "1", "TIMEOUT", "x"]).await,
        err("ERR unknown subcommand or wrong number of arguments for 'UNBLOCK'. Try CLIENT HELP.")
    );
    // Named as the client spelled it (redis-server 7.0.15's replies).
    assert_eq!(
        ctl.cmd(&["client", "unBlock", "1", "a", "b"]).await,
        err("ERR unknown subcommand or wrong number of arguments for 'unBlock'. Try CLIENT HELP.")
    );
    assert_eq!(
        ctl.cmd(&["client", "pAuse", "10", "a", "b"]).await,
        err("ERR unknown subcommand or wrong number of arguments for 'pAuse'. Try CLIENT HELP.")
    );
    assert_eq!(
        ctl.cmd(&["CLIENT", "UNBLOCK"]).await,
        err("ERR wrong number of arguments for 'client|unblock' command")
    );
    assert_eq!(ctl.cmd(&["CLIENT", "UNBLOCK", "-1"]).await, int(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn info_counts_blocked_clients() {
    let s = start().await;
    let mut ctl = s.raw().await;
    let mut a = s.raw().await;
    let mut b = s.raw().await;
    assert_eq!(blocked(&mut ctl).await, 0);
    assert_eq!(a.cmd(&["CLIENT", "SETNAME", "waiter"]).await, ok());
    send(&mut a, &["BLPOP", "q", "0"]).await;
    wait_blocked(&mut ctl, 1).await;
    // CLIENT LIST flags a blocked client `b`, as Redis does.
    let flags_of_waiter = |list: Frame| {
        let Frame::Bulk(list) = list else {
            panic!("CLIENT LIST is a bulk string")
        };
        let list = String::from_utf8_lossy(&list).into_owned();
        let line = list.lines().find(|l| l.contains(" name=waiter ")).unwrap();
        let flags = line
            .split(' ')
            .find_map(|f| f.strip_prefix("flags="))
            .unwrap();
        (flags.to_string(), line.contains(" cmd=blpop "))
    };
    assert_eq!(
        flags_of_waiter(ctl.cmd(&["CLIENT", "LIST"]).await),
        ("b".to_string(), true)
    );
    send(&mut b, &["BLMPOP", "0", "1", "other", "RIGHT"]).await;
    wait_blocked(&mut ctl, 2).await;
    ctl.cmd(&["RPUSH", "other", "x"]).await;
    assert_eq!(
        b.read().await.unwrap(),
        arr(vec![bulk("other"), bulks(&["x"])])
    );
    assert_eq!(blocked(&mut ctl).await, 1);
    ctl.cmd(&["RPUSH", "q", "x"]).await;
    assert_eq!(a.read().await.unwrap(), bulks(&["q", "x"]));
    assert_eq!(blocked(&mut ctl).await, 0);
    assert_eq!(flags_of_waiter(ctl.cmd(&["CLIENT", "LIST"]).await).0, "N");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_went_away_does_not_swallow_a_later_push() {
    let s = start().await;
    let mut ctl = s.raw().await;
    let mut gone = s.raw().await;
    let mut stays = s.raw().await;
    send(&mut gone, &["BLPOP", "q", "0"]).await;
    wait_blocked(&mut ctl, 1).await;
    send(&mut stays, &["BLPOP", "q", "0"]).await;
    wait_blocked(&mut ctl, 2).await;
    drop(gone);
    wait_blocked(&mut ctl, 1).await;
    // The first in line is gone: the push goes to the next one.
    assert_eq!(ctl.cmd(&["RPUSH", "q", "x"]).await, int(1));
    assert_eq!(stays.read().await.unwrap(), bulks(&["q", "x"]));
    drop(stays);
    assert_eq!(ctl.cmd(&["RPUSH", "q", "y"]).await, int(1));
    assert_eq!(ctl.cmd(&["LRANGE", "q", "0", "-1"]).await, bulks(&["y"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn databases_are_separate_and_pipelined_commands_wait() {
    let s = start().await;
    let mut ctl = s.raw().await;
    let mut a = s.raw().await;
    assert_eq!(a.cmd(&["SELECT", "1"]).await, ok());
    // BLPOP then PING in one write: PING's reply follows BLPOP's, once it is served.
    let mut batch = encode_command(&[b"BLPOP", b"q", b"0"]);
    batch.extend(encode_command(&[b"PING"]));
    a.send(&batch).await;
    wait_blocked(&mut ctl, 1).await;
    assert_eq!(ctl.cmd(&["RPUSH", "q", "db0"]).await, int(1));
    still_blocked(&mut a).await;
    assert_eq!(ctl.cmd(&["SELECT", "1"]).await, ok());
    assert_eq!(ctl.cmd(&["RPUSH", "q", "db1"]).await, int(1));
    assert_eq!(a.read().await.unwrap(), bulks(&["q", "db1"]));
    assert_eq!(a.read().await.unwrap(), simple("PONG"));
    assert_eq!(ctl.cmd(&["SELECT", "0"]).await, ok());
    assert_eq!(ctl.cmd(&["LRANGE", "q", "0", "-1"]).await, bulks(&["db0"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_client_can_be_killed() {
    let s = start().await;
    let mut ctl = s.raw().await;
    let mut a = s.raw().await;
    let Frame::Integer(id) = a.cmd(&["CLIENT", "ID"]).await else {
        panic!("CLIENT ID is an integer");
    };
    send(&mut a, &["BLPOP", "q", "0"]).await;
    wait_blocked(&mut ctl, 1).await;
    assert_eq!(
        ctl.cmd(&["CLIENT", "KILL", "ID", &id.to_string()]).await,
        int(1)
    );
    a.expect_closed().await;
    wait_blocked(&mut ctl, 0).await;
    assert_eq!(ctl.cmd(&["RPUSH", "q", "x"]).await, int(1));
    assert_eq!(ctl.cmd(&["LLEN", "q"]).await, int(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_does_not_wait_for_blocked_clients() {
    let mut s = start().await;
    let mut ctl = s.raw().await;
    let mut a = s.raw().await;
    send(&mut a, &["BLPOP", "q", "0"]).await;
    wait_blocked(&mut ctl, 1).await;
    let t = Instant::now();
    s.stop().await;
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    a.expect_closed().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rename_and_copy_onto_a_waited_key_serve_it() {
    let s = start().await;
    let mut ctl = s.raw().await;
    let mut a = s.raw().await;
    send(&mut a, &["BLPOP", "dst", "0"]).await;
    wait_blocked(&mut ctl, 1).await;
    assert_eq!(ctl.cmd(&["RPUSH", "tmp", "a", "b"]).await, int(2));
    assert_eq!(ctl.cmd(&["RENAME", "tmp", "dst"]).await, ok());
    assert_eq!(a.read().await.unwrap(), bulks(&["dst", "a"]));
    send(&mut a, &["BLPOP", "dst2", "0"]).await;
    wait_blocked(&mut ctl, 1).await;
    assert_eq!(ctl.cmd(&["COPY", "dst", "dst2"]).await, int(1));
    assert_eq!(a.read().await.unwrap(), bulks(&["dst2", "b"]));
    assert_eq!(ctl.cmd(&["LRANGE", "dst", "0", "-1"]).await, bulks(&["b"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_serves_blocked_clients_only_after_all_its_commands() {
    let s = start().await;
    let mut blocked = s.raw().await;
    let mut tx = s.raw().await;
    blocked
        .send(&encode_command(&[b"BLPOP", b"q", b"0.5"]))
        .await;
    // Let the BLPOP register before the transaction runs.
    for _ in 0..100 {
        let info = tx.cmd(&["INFO", "clients"]).await;
        if let resp::Frame::Bulk(b) | resp::Frame::Verbatim { data: b, .. } = &info {
            if String::from_utf8_lossy(b).contains("blocked_clients:1") {
                break;
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(tx.cmd(&["MULTI"]).await, ok());
    assert_eq!(tx.cmd(&["RPUSH", "q", "a"]).await, simple("QUEUED"));
    assert_eq!(tx.cmd(&["LPOP", "q"]).await, simple("QUEUED"));
    // As in Redis: the LPOP inside the transaction takes the element, not the blocked client.
    assert_eq!(tx.cmd(&["EXEC"]).await, arr(vec![int(1), bulk("a")]));
    assert_eq!(blocked.read().await, Some(resp::Frame::NullArray));
}

/// A blocked client is served whenever a key it waits on is created, whatever creates it (as
/// Redis's `dbAdd` signals the key ready): MOVE and COPY ... DB from another database, SWAPDB,
/// a script pushing to a key it did not declare, SORT ... STORE, ZUNIONSTORE, and the SQL
/// morph commands. (redis-server 7.0.15 serves the first four the same way.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_way_of_creating_a_waited_key_serves_it() {
    let s = start().await;
    let mut ctl = s.raw().await;
    let mut a = s.raw().await;
    assert_eq!(a.cmd(&["SELECT", "1"]).await, ok());
    // (The pushes below are in database 0, the waits in database 1.)
    let cases: &[(&str, &[&[&str]])] = &[
        ("w1", &[&["RPUSH", "w1", "moved"], &["MOVE", "w1", "1"]]),
        (
            "w2",
            &[&["RPUSH", "w2", "copied"], &["COPY", "w2", "w2", "DB", "1"]],
        ),
        ("w3", &[&["RPUSH", "w3", "swapped"], &["SWAPDB", "0", "1"]]),
        (
            "w4",
            &[
                &["SELECT", "1"],
                &[
                    "EVAL",
                    "redis.call('rpush', 'w4', 'scripted') return 1",
                    "0",
                ],
                &["SELECT", "0"],
            ],
        ),
        (
            "w5",
            &[
                &["SELECT", "1"],
                &["RPUSH", "src", "sorted"],
                &["SORT", "src", "ALPHA", "STORE", "w5"],
                &["SELECT", "0"],
            ],
        ),
        (
            "w6",
            &[
                &["SELECT", "1"],
                &["SQL.TOLIST", "w6", "SELECT 'from sql'"],
                &["SELECT", "0"],
            ],
        ),
    ];
    for (key, steps) in cases {
        send(&mut a, &["BLPOP", key, "0"]).await;
        wait_blocked(&mut ctl, 1).await;
        for step in *steps {
            let reply = ctl.cmd(step).await;
            assert!(!matches!(reply, Frame::Error(_)), "{step:?}: {reply:?}");
        }
        let Some(Frame::Array(got)) = a.read().await else {
            panic!("{key}: not served");
        };
        assert_eq!(got[0], bulk(key));
        if *key == "w3" {
            // Swap back: database 1 holds what database 0 had.
            assert_eq!(ctl.cmd(&["SWAPDB", "0", "1"]).await, ok());
        }
    }
    // Sorted sets too: ZUNIONSTORE into a key a BZPOPMIN waits on.
    send(&mut a, &["BZPOPMIN", "z", "0"]).await;
    wait_blocked(&mut ctl, 1).await;
    assert_eq!(ctl.cmd(&["SELECT", "1"]).await, ok());
    assert_eq!(ctl.cmd(&["ZADD", "zsrc", "2", "m"]).await, int(1));
    assert_eq!(ctl.cmd(&["ZUNIONSTORE", "z", "1", "zsrc"]).await, int(1));
    assert_eq!(a.read().await.unwrap(), bulks(&["z", "m", "2"]));
    assert_eq!(blocked(&mut ctl).await, 0);
}

/// Each blocking command waits on keys `a` and `b`; one script then writes `b` before `a`.
/// Redis serves a blocked client from the key a write made ready, whatever the order of its keys.
async fn served_from_the_ready_key(addr: std::net::SocketAddr) -> Vec<Frame> {
    let mut ctl = Raw::connect(addr).await;
    let setup: &[&[&str]] = &[
        &["XADD", "s1", "1-1", "f", "v"],
        &["XADD", "s2", "1-1", "f", "v"],
        &["XGROUP", "CREATE", "s1", "g", "$"],
        &["XGROUP", "CREATE", "s2", "g", "$"],
    ];
    for cmd in setup {
        ctl.cmd(cmd).await;
    }
    let waits: &[&[&str]] = &[
        &["BLPOP", "l1", "l2", "0"],
        &["BLMPOP", "0", "2", "l1", "l2", "LEFT", "COUNT", "5"],
        &["BZPOPMIN", "z1", "z2", "0"],
        &["BZMPOP", "0", "2", "z1", "z2", "MIN"],
        &["XREAD", "BLOCK", "0", "STREAMS", "s1", "s2", "$", "$"],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "BLOCK",
            "0",
            "STREAMS",
            "s1",
            "s2",
            ">",
            ">",
        ],
    ];
    let mut clients = Vec::new();
    for (n, cmd) in waits.iter().enumerate() {
        let mut c = Raw::connect(addr).await;
        send(&mut c, cmd).await;
        wait_blocked(&mut ctl, n + 1).await;
        clients.push(c);
    }
    let script = "redis.call('rpush','l2','x','y') redis.call('rpush','l1','p') \
                  redis.call('zadd','z2',1,'m') redis.call('zadd','z1',2,'n') \
                  redis.call('xadd','s2','2-1','f','b') redis.call('xadd','s1','2-1','f','a')";
    ctl.cmd(&["EVAL", script, "0"]).await;
    let mut got = Vec::new();
    for (c, cmd) in clients.iter_mut().zip(waits) {
        let reply = tokio::time::timeout(Duration::from_secs(5), c.read()).await;
        got.push(
            reply
                .unwrap_or_else(|_| panic!("{cmd:?} was not served"))
                .unwrap(),
        );
    }
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_client_is_served_from_the_key_made_ready_as_redis() {
    let relis = start().await;
    let ours = served_from_the_ready_key(relis.addr).await;
    // Each client got its element from `l2`/`z2`/`s2`, the keys written first.
    assert_eq!(ours[0], bulks(&["l2", "x"]));
    let tmp = tempfile::tempdir().unwrap();
    let Some(mut redis) = spawn_redis(tmp.path()) else {
        eprintln!("skipped the comparison: redis-server is not installed");
        return;
    };
    let theirs = served_from_the_ready_key(redis.addr()).await;
    redis.kill9();
    assert_eq!(ours, theirs);
}
