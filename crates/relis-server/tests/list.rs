//! The list family over TCP, with replies and error texts pinned from redis-server 7.0.15 (RESP2
//! and RESP3 bytes), keyspace statistics, WATCH, MULTI, big lists (renumbering through the
//! server) and the `redis` crate's view. Blocking commands across clients are in blocking.rs.

mod common;
use common::*;
use resp::Frame;

const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
const NOT_INT: &str = "ERR value is not an integer or out of range";
const POSITIVE: &str = "ERR value is out of range, must be positive";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_pop_and_lengths() {
    let s = start().await;
    let mut c = s.raw().await;
    check(
        &mut c,
        &[
            (&["LPUSH", "l", "a", "b", "c"], int(3)),
            (&["RPUSH", "l", "d", "e"], int(5)),
            (
                &["LRANGE", "l", "0", "-1"],
                bulks(&["c", "b", "a", "d", "e"]),
            ),
            (&["LPUSHX", "nokey", "a"], int(0)),
            (&["RPUSHX", "nokey", "a", "b"], int(0)),
            (&["EXISTS", "nokey"], int(0)),
            (&["LPUSHX", "l", "x", "y"], int(7)),
            (&["RPUSHX", "l", "z"], int(8)),
            (
                &["LRANGE", "l", "0", "-1"],
                bulks(&["y", "x", "c", "b", "a", "d", "e", "z"]),
            ),
            (&["LLEN", "l"], int(8)),
            (&["LLEN", "nokey"], int(0)),
            (&["LPOP", "l"], bulk("y")),
            (&["RPOP", "l"], bulk("z")),
            (&["LPOP", "l", "2"], bulks(&["x", "c"])),
            (&["RPOP", "l", "2"], bulks(&["e", "d"])),
            (&["LPOP", "l", "0"], arr(vec![])),
            (&["LPOP", "l", "9"], bulks(&["b", "a"])),
            (&["EXISTS", "l"], int(0)),
            (&["LPOP", "l"], Frame::Null),
            (&["LPOP", "l", "0"], Frame::NullArray),
            (&["LPOP", "l", "-1"], err(POSITIVE)),
            (&["LPOP", "l", "x"], err(POSITIVE)),
            (
                &["LPOP", "l", "1", "2"],
                err("ERR wrong number of arguments for 'lpop' command"),
            ),
            (
                &["LPUSH", "l"],
                err("ERR wrong number of arguments for 'lpush' command"),
            ),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn null_shapes_in_resp2_and_resp3() {
    let s = start().await;
    let mut c = s.raw().await;
    let cases: &[(&[&str], &[u8], &[u8])] = &[
        (&["LPOP", "nokey"], b"$-1\r\n", b"_\r\n"),
        (&["LPOP", "nokey", "2"], b"*-1\r\n", b"_\r\n"),
        (&["RPOP", "nokey", "0"], b"*-1\r\n", b"_\r\n"),
        (&["LINDEX", "nokey", "0"], b"$-1\r\n", b"_\r\n"),
        (&["LPOS", "nokey", "x"], b"$-1\r\n", b"_\r\n"),
        (&["LPOS", "nokey", "x", "COUNT", "0"], b"*0\r\n", b"*0\r\n"),
        (
            &["LMOVE", "nokey", "d", "LEFT", "LEFT"],
            b"$-1\r\n",
            b"_\r\n",
        ),
        (&["LMPOP", "1", "nokey", "LEFT"], b"*-1\r\n", b"_\r\n"),
        (&["BLPOP", "nokey", "0.01"], b"*-1\r\n", b"_\r\n"),
        (
            &["BLMOVE", "nokey", "d", "LEFT", "LEFT", "0.01"],
            b"*-1\r\n",
            b"_\r\n",
        ),
        (&["BRPOPLPUSH", "nokey", "d", "0.01"], b"*-1\r\n", b"_\r\n"),
        (
            &["BLMPOP", "0.01", "1", "nokey", "LEFT"],
            b"*-1\r\n",
            b"_\r\n",
        ),
        (&["LRANGE", "nokey", "0", "-1"], b"*0\r\n", b"*0\r\n"),
    ];
    for (cmd, _, _) in cases {
        let args: Vec<&[u8]> = cmd.iter().map(|a| a.as_bytes()).collect();
        c.send(&encode_command(&args)).await;
    }
    for (cmd, want2, _) in cases {
        assert_eq!(show(&c.read_raw().await.unwrap()), show(want2), "{cmd:?}");
    }
    let mut c3 = s.raw().await;
    assert!(matches!(c3.cmd(&["HELLO", "3"]).await, Frame::Map(_)));
    for (cmd, _, want3) in cases {
        let args: Vec<&[u8]> = cmd.iter().map(|a| a.as_bytes()).collect();
        c3.send(&encode_command(&args)).await;
        assert_eq!(show(&c3.read_raw().await.unwrap()), show(want3), "{cmd:?}");
    }
    // BLPOP's and LMPOP's replies are plain arrays in both protocols.
    assert_eq!(c3.cmd(&["RPUSH", "l", "a", "b"]).await, int(2));
    check_raw(
        &mut c3,
        &[
            (
                &["BLPOP", "nokey", "l", "0"],
                b"*2\r\n$1\r\nl\r\n$1\r\na\r\n",
            ),
            (
                &["LMPOP", "2", "nokey", "l", "RIGHT", "COUNT", "5"],
                b"*2\r\n$1\r\nl\r\n*1\r\n$1\r\nb\r\n",
            ),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn index_range_set_trim() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["RPUSH", "l", "a", "b", "c", "d", "e"]).await,
        int(5)
    );
    check(
        &mut c,
        &[
            (&["LINDEX", "l", "0"], bulk("a")),
            (&["LINDEX", "l", "-1"], bulk("e")),
            (&["LINDEX", "l", "5"], Frame::Null),
            (&["LINDEX", "l", "-6"], Frame::Null),
            (&["LINDEX", "l", "9223372036854775807"], Frame::Null),
            (&["LINDEX", "l", "-9223372036854775808"], Frame::Null),
            (&["LINDEX", "l", "x"], err(NOT_INT)),
            (&["LINDEX", "nokey", "x"], Frame::Null),
            (
                &["LRANGE", "l", "-100", "100"],
                bulks(&["a", "b", "c", "d", "e"]),
            ),
            (&["LRANGE", "l", "1", "-2"], bulks(&["b", "c", "d"])),
            (&["LRANGE", "l", "3", "1"], arr(vec![])),
            (&["LRANGE", "l", "-1", "-100"], arr(vec![])),
            (&["LRANGE", "l", "5", "10"], arr(vec![])),
            (&["LRANGE", "nokey", "x", "0"], err(NOT_INT)),
            (&["LSET", "l", "0", "A"], ok()),
            (&["LSET", "l", "-1", "E"], ok()),
            (&["LSET", "l", "5", "x"], err("ERR index out of range")),
            (&["LSET", "l", "-6", "x"], err("ERR index out of range")),
            (&["LSET", "l", "x", "x"], err(NOT_INT)),
            (&["LSET", "nokey", "x", "x"], err("ERR no such key")),
            (&["LSET", "nokey", "0", "x"], err("ERR no such key")),
            (
                &["LRANGE", "l", "0", "-1"],
                bulks(&["A", "b", "c", "d", "E"]),
            ),
            (&["LTRIM", "l", "1", "-2"], ok()),
            (&["LRANGE", "l", "0", "-1"], bulks(&["b", "c", "d"])),
            (&["LINDEX", "l", "0"], bulk("b")),
            (&["LTRIM", "nokey", "0", "1"], ok()),
            (&["LTRIM", "nokey", "x", "1"], err(NOT_INT)),
            (&["LTRIM", "l", "2", "1"], ok()),
            (&["EXISTS", "l"], int(0)),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_rem_pos() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["RPUSH", "l", "a", "b", "c", "b", "a"]).await,
        int(5)
    );
    check(
        &mut c,
        &[
            (&["LINSERT", "l", "BEFORE", "b", "X"], int(6)),
            (&["LINSERT", "l", "after", "b", "Y"], int(7)),
            (&["LINSERT", "l", "AFTER", "a", "Z"], int(8)),
            (&["LINSERT", "l", "middle", "a", "Z"], err("ERR syntax error")),
            (&["LINSERT", "nokey", "middle", "a", "Z"], err("ERR syntax error")),
            (&["LINSERT", "nokey", "before", "a", "Z"], int(0)),
            (&["LINSERT", "l", "before", "nothere", "Z"], int(-1)),
            (
                &["LRANGE", "l", "0", "-1"],
                bulks(&["a", "Z", "X", "b", "Y", "c", "b", "a"]),
            ),
            (&["LPOS", "l", "b"], int(3)),
            (&["LPOS", "l", "b", "RANK", "2"], int(6)),
            (&["LPOS", "l", "b", "RANK", "-1"], int(6)),
            (&["LPOS", "l", "a", "COUNT", "0"], ints(&[0, 7])),
            (&["LPOS", "l", "a", "RANK", "-1", "COUNT", "0"], ints(&[7, 0])),
            (&["LPOS", "l", "a", "COUNT", "0", "MAXLEN", "3"], ints(&[0])),
            (&["LPOS", "l", "nothere"], Frame::Null),
            (&["LPOS", "l", "nothere", "COUNT", "1"], arr(vec![])),
            (
                &["LPOS", "l", "a", "RANK", "0"],
                err("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list"),
            ),
            (&["LPOS", "l", "a", "COUNT", "-1"], err("ERR COUNT can't be negative")),
            (&["LPOS", "l", "a", "MAXLEN", "x"], err("ERR MAXLEN can't be negative")),
            (&["LPOS", "l", "a", "RANK"], err("ERR syntax error")),
            (&["LREM", "l", "0", "b"], int(2)),
            (&["LREM", "l", "-1", "a"], int(1)),
            (&["LREM", "l", "1", "a"], int(1)),
            (&["LREM", "l", "1", "nothere"], int(0)),
            (&["LREM", "nokey", "1", "a"], int(0)),
            (&["LREM", "nokey", "x", "a"], err(NOT_INT)),
            (&["LRANGE", "l", "0", "-1"], bulks(&["Z", "X", "Y", "c"])),
            (&["LINDEX", "l", "3"], bulk("c")),
            (&["LREM", "l", "0", "Z"], int(1)),
            (&["LREM", "l", "0", "X"], int(1)),
            (&["LREM", "l", "0", "Y"], int(1)),
            (&["LREM", "l", "0", "c"], int(1)),
            (&["EXISTS", "l"], int(0)),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn move_and_mpop() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["SET", "s", "str"]).await, ok());
    assert_eq!(c.cmd(&["RPUSH", "src", "a", "b", "c"]).await, int(3));
    check(
        &mut c,
        &[
            (&["LMOVE", "src", "dst", "LEFT", "RIGHT"], bulk("a")),
            (&["LMOVE", "src", "dst", "left", "left"], bulk("b")),
            (
                &["LMOVE", "src", "dst", "up", "left"],
                err("ERR syntax error"),
            ),
            (&["LRANGE", "dst", "0", "-1"], bulks(&["b", "a"])),
            (&["LMOVE", "nokey", "s", "LEFT", "LEFT"], Frame::Null),
            (&["LMOVE", "s", "dst", "LEFT", "LEFT"], err(WRONGTYPE)),
            (&["LMOVE", "src", "s", "LEFT", "LEFT"], err(WRONGTYPE)),
            (&["LRANGE", "src", "0", "-1"], bulks(&["c"])),
            // A one-element rotation keeps the key (and its expiry).
            (&["EXPIRE", "src", "100"], int(1)),
            (&["LMOVE", "src", "src", "LEFT", "RIGHT"], bulk("c")),
            (&["TTL", "src"], int(100)),
            (&["RPOPLPUSH", "src", "dst"], bulk("c")),
            (&["RPOPLPUSH", "src", "dst"], Frame::Null),
            (&["EXISTS", "src"], int(0)),
            (&["RPOPLPUSH", "dst", "dst"], bulk("a")),
            (&["LRANGE", "dst", "0", "-1"], bulks(&["a", "c", "b"])),
            (
                &["LMPOP", "2", "nokey", "dst", "LEFT"],
                arr(vec![bulk("dst"), bulks(&["a"])]),
            ),
            (
                &["LMPOP", "2", "nokey", "dst", "RIGHT", "COUNT", "5"],
                arr(vec![bulk("dst"), bulks(&["b", "c"])]),
            ),
            (&["LMPOP", "1", "dst", "LEFT"], Frame::NullArray),
            (&["LMPOP", "2", "nokey", "s", "LEFT"], err(WRONGTYPE)),
            (
                &["LMPOP", "0", "k", "LEFT"],
                err("ERR numkeys should be greater than 0"),
            ),
            (&["LMPOP", "2", "k", "LEFT"], err("ERR syntax error")),
            (
                &["LMPOP", "1", "k", "LEFT", "COUNT", "0"],
                err("ERR count should be greater than 0"),
            ),
            (
                &["LMPOP", "1", "k", "LEFT", "COUNT", "1", "COUNT", "2"],
                err("ERR syntax error"),
            ),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrongtype_everywhere() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["SET", "s", "x"]).await, ok());
    let cmds: &[&[&str]] = &[
        &["LPUSH", "s", "a"],
        &["RPUSH", "s", "a"],
        &["LPUSHX", "s", "a"],
        &["RPUSHX", "s", "a"],
        &["LPOP", "s"],
        &["RPOP", "s", "0"],
        &["LLEN", "s"],
        &["LINDEX", "s", "x"],
        &["LRANGE", "s", "0", "-1"],
        &["LSET", "s", "x", "a"],
        &["LINSERT", "s", "BEFORE", "a", "b"],
        &["LREM", "s", "0", "a"],
        &["LTRIM", "s", "0", "1"],
        &["LPOS", "s", "a", "COUNT", "0"],
        &["LMOVE", "s", "d", "LEFT", "LEFT"],
        &["RPOPLPUSH", "s", "d"],
        &["LMPOP", "1", "s", "LEFT"],
        &["BLPOP", "s", "0"],
        &["BRPOP", "nokey", "s", "0"],
        &["BLMOVE", "s", "d", "LEFT", "LEFT", "0"],
        &["BLMPOP", "0", "1", "s", "LEFT"],
    ];
    for cmd in cmds {
        assert_eq!(c.cmd(cmd).await, err(WRONGTYPE), "{cmd:?}");
    }
    assert_eq!(c.cmd(&["GET", "s"]).await, bulk("x"), "nothing changed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyspace_hits_and_misses_count_like_redis() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["RPUSH", "l", "a", "b"]).await, int(2));
    assert_eq!(c.cmd(&["SET", "s", "x"]).await, ok());
    let before = keyspace_stats(&mut c).await;
    // Reads count (a key of another type is a hit); writes do not. Counts from redis-server.
    for cmd in [
        &["LLEN", "l"][..],
        &["LLEN", "nope"],
        &["LLEN", "s"],
        &["LINDEX", "l", "0"],
        &["LINDEX", "l", "99"],
        &["LINDEX", "nope", "0"],
        &["LINDEX", "nope", "x"],
        &["LINDEX", "l", "x"],
        &["LRANGE", "l", "0", "-1"],
        &["LRANGE", "nope", "0", "-1"],
        &["LPOS", "l", "a"],
        &["LPOS", "nope", "a"],
        &["LPOS", "l", "zz"],
        &["LPOP", "l"],
        &["LMOVE", "l", "l", "LEFT", "RIGHT"],
        &["LMPOP", "1", "nope", "LEFT"],
        &["BLPOP", "nope", "0.01"],
        &["RPOPLPUSH", "l", "dst"],
    ] {
        c.cmd(cmd).await;
    }
    let after = keyspace_stats(&mut c).await;
    assert_eq!((after.0 - before.0, after.1 - before.1), (8, 5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_sees_list_writes() {
    let s = start().await;
    let mut a = s.raw().await;
    let mut b = s.raw().await;
    assert_eq!(a.cmd(&["RPUSH", "w", "x"]).await, int(1));
    // Redis signals LTRIM even when it trims nothing, but not an LREM or LINSERT that does
    // nothing, nor an out-of-range LSET.
    for (write, aborts) in [
        (&["LTRIM", "w", "0", "-1"][..], true),
        (&["LREM", "w", "0", "nothere"], false),
        (&["LINSERT", "w", "BEFORE", "nothere", "y"], false),
        (&["LSET", "w", "5", "y"], false),
        (&["LSET", "w", "0", "x"], true),
        (&["RPUSH", "w", "y"], true),
        (&["LPOP", "w"], true),
    ] {
        assert_eq!(a.cmd(&["WATCH", "w"]).await, ok());
        b.cmd(write).await;
        assert_eq!(a.cmd(&["MULTI"]).await, ok());
        assert_eq!(a.cmd(&["LLEN", "w"]).await, simple("QUEUED"));
        let got = a.cmd(&["EXEC"]).await;
        assert_eq!(got == Frame::NullArray, aborts, "{write:?}: {got:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copy_rename_move_and_encoding() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["LPUSH", "l", "c", "b", "a"]).await, int(3));
    check(
        &mut c,
        &[
            (&["TYPE", "l"], simple("list")),
            (&["OBJECT", "ENCODING", "l"], bulk("quicklist")),
            (&["COPY", "l", "l2"], int(1)),
            (&["RPUSH", "l2", "d"], int(4)),
            (&["LRANGE", "l", "0", "-1"], bulks(&["a", "b", "c"])),
            (&["LRANGE", "l2", "0", "-1"], bulks(&["a", "b", "c", "d"])),
            (&["RENAME", "l2", "l3"], ok()),
            (&["LINDEX", "l3", "-1"], bulk("d")),
            (&["MOVE", "l3", "1"], int(1)),
            (&["SELECT", "1"], ok()),
            (&["LPOP", "l3", "9"], bulks(&["a", "b", "c", "d"])),
            (&["SELECT", "0"], ok()),
            (&["PEXPIREAT", "l", "1"], int(1)),
            (&["LLEN", "l"], int(0)),
            (&["RPUSH", "l", "new"], int(1)),
            (&["TTL", "l"], int(-1)),
            (&["LRANGE", "l", "0", "-1"], bulks(&["new"])),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn big_lists_renumber_correctly_through_the_server() {
    let s = start().await;
    let mut c = s.raw().await;
    let n = 3000;
    let vals: Vec<String> = (0..n).map(|i| format!("{}", i % 10)).collect();
    let mut cmd: Vec<&str> = vec!["RPUSH", "big"];
    cmd.extend(vals.iter().map(|s| s.as_str()));
    assert_eq!(c.cmd(&cmd).await, int(n as i64));
    let mut model = vals.clone();
    // Inserts near both ends and in the middle, removals spread over the whole list.
    for (pivot, v) in [("1", "A"), ("5", "B")] {
        c.cmd(&["LINSERT", "big", "AFTER", pivot, v]).await;
        let i = model.iter().position(|x| x == pivot).unwrap();
        model.insert(i + 1, v.to_string());
    }
    assert_eq!(c.cmd(&["LREM", "big", "-200", "7"]).await, int(200));
    let mut removed = 0;
    let mut i = model.len();
    while i > 0 && removed < 200 {
        i -= 1;
        if model[i] == "7" {
            model.remove(i);
            removed += 1;
        }
    }
    assert_eq!(c.cmd(&["LREM", "big", "0", "3"]).await, int(300));
    model.retain(|x| x != "3");
    let mid = (model.len() / 2).to_string();
    let pivot = model[model.len() / 2].clone();
    c.cmd(&["LINSERT", "big", "BEFORE", &pivot, "M"]).await;
    let i = model.iter().position(|x| *x == pivot).unwrap();
    model.insert(i, "M".into());
    assert_eq!(c.cmd(&["LLEN", "big"]).await, int(model.len() as i64));
    let want: Vec<&str> = model.iter().map(|s| s.as_str()).collect();
    assert_eq!(c.cmd(&["LRANGE", "big", "0", "-1"]).await, bulks(&want));
    assert_eq!(
        c.cmd(&["LINDEX", "big", &mid]).await,
        bulk(&model[model.len() / 2])
    );
    assert_eq!(
        c.cmd(&["LPOS", "big", "M"]).await,
        int(i as i64),
        "positions are dense after all that"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocking_commands_inside_multi_do_not_block() {
    let s = start().await;
    let mut c = s.raw().await;
    for cmd in [
        &["MULTI"][..],
        &["BLPOP", "e", "0"],
        &["BLMOVE", "e", "d", "LEFT", "LEFT", "0"],
        &["BRPOPLPUSH", "e", "d", "0"],
        &["BLMPOP", "0", "1", "e", "LEFT"],
        &["BLPOP", "e", "-1"],
        &["RPUSH", "e", "a", "b", "c"],
        &["BRPOP", "e", "0"],
        &["BLMOVE", "e", "d", "LEFT", "RIGHT", "0"],
        &["BLMPOP", "0", "1", "e", "LEFT", "COUNT", "5"],
    ] {
        c.cmd(cmd).await;
    }
    assert_eq!(
        c.cmd(&["EXEC"]).await,
        arr(vec![
            Frame::NullArray,
            Frame::Null,
            Frame::Null,
            Frame::NullArray,
            err("ERR timeout is negative"),
            int(3),
            bulks(&["e", "c"]),
            bulk("a"),
            arr(vec![bulk("e"), bulks(&["b"])]),
        ])
    );
    assert_eq!(c.cmd(&["LRANGE", "d", "0", "-1"]).await, bulks(&["a"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_info_matches_redis() {
    let s = start().await;
    let mut c = s.raw().await;
    // Exact COMMAND INFO bytes from redis-server 7.0.15 (the commands with one key spec).
    check_raw(
        &mut c,
        &[
            (
                &["COMMAND", "INFO", "lpush"],
                b"*1\r\n*10\r\n$5\r\nlpush\r\n:-3\r\n*3\r\n+write\r\n+denyoom\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@write\r\n+@list\r\n+@fast\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*2\r\n+RW\r\n+insert\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:0\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n",
            ),
            (
                &["COMMAND", "INFO", "blpop"],
                b"*1\r\n*10\r\n$5\r\nblpop\r\n:-3\r\n*3\r\n+write\r\n+noscript\r\n+blocking\r\n:1\r\n:-2\r\n:1\r\n*4\r\n+@write\r\n+@list\r\n+@slow\r\n+@blocking\r\n*0\r\n*1\r\n*6\r\n$5\r\nflags\r\n*3\r\n+RW\r\n+access\r\n+delete\r\n$12\r\nbegin_search\r\n*4\r\n$4\r\ntype\r\n$5\r\nindex\r\n$4\r\nspec\r\n*2\r\n$5\r\nindex\r\n:1\r\n$9\r\nfind_keys\r\n*4\r\n$4\r\ntype\r\n$5\r\nrange\r\n$4\r\nspec\r\n*6\r\n$7\r\nlastkey\r\n:-2\r\n$7\r\nkeystep\r\n:1\r\n$5\r\nlimit\r\n:0\r\n*0\r\n",
            ),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_getkeys_finds_numkeys_and_destination_keys() {
    let s = start().await;
    let mut c = s.raw().await;
    check(
        &mut c,
        &[
            (
                &["COMMAND", "GETKEYS", "LMPOP", "2", "a", "b", "LEFT"],
                bulks(&["a", "b"]),
            ),
            (
                &[
                    "COMMAND", "GETKEYS", "BLMPOP", "0", "2", "a", "b", "LEFT", "COUNT", "3",
                ],
                bulks(&["a", "b"]),
            ),
            (
                &["COMMAND", "GETKEYS", "LMOVE", "a", "b", "LEFT", "LEFT"],
                bulks(&["a", "b"]),
            ),
            (
                &["COMMAND", "GETKEYS", "BLPOP", "a", "b", "0"],
                bulks(&["a", "b"]),
            ),
        ],
    )
    .await;
    // LMOVE's two key specs, as redis-server 7.0.15 lists them.
    let Frame::Array(info) = c.cmd(&["COMMAND", "INFO", "LMOVE"]).await else {
        panic!("COMMAND INFO is an array");
    };
    let Frame::Array(entry) = &info[0] else {
        panic!("an entry");
    };
    let Frame::Array(specs) = &entry[8] else {
        panic!("key specs: {:?}", entry[8]);
    };
    assert_eq!(specs.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redis_crate_view() {
    let s = start().await;
    let mut con = s.client().await;
    let n: i64 = redis::cmd("RPUSH")
        .arg("q")
        .arg(&["a", "b", "c"])
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(n, 3);
    let all: Vec<String> = redis::cmd("LRANGE")
        .arg("q")
        .arg(0)
        .arg(-1)
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(all, ["a", "b", "c"]);
    let popped: Option<(String, String)> = redis::cmd("BLPOP")
        .arg("q")
        .arg(0)
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(popped, Some(("q".into(), "a".into())));
    let none: Option<(String, String)> = redis::cmd("BLPOP")
        .arg("empty")
        .arg(0.05)
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(none, None);
    let moved: Option<String> = redis::cmd("LMOVE")
        .arg("q")
        .arg("q2")
        .arg("RIGHT")
        .arg("LEFT")
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(moved.as_deref(), Some("c"));
}
