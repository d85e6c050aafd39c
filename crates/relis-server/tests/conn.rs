//! Connection commands over TCP: HELLO, AUTH, RESET, CLIENT. Reply bytes are pinned to what
//! redis-server 7.0.15 sends.

mod common;
use common::*;
use resp::Frame;

async fn id(c: &mut Raw) -> i64 {
    match c.cmd(&["CLIENT", "ID"]).await {
        Frame::Integer(n) => n,
        f => panic!("CLIENT ID replied {f:?}"),
    }
}

fn hello_reply(resp3: bool, id: i64) -> String {
    let head = if resp3 { "%7" } else { "*14" };
    let proto = if resp3 { 3 } else { 2 };
    show(
        format!(
            "{head}\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:{proto}\r\n$2\r\nid\r\n:{id}\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n"
        )
        .as_bytes(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hello_switches_protocol() {
    let s = start().await;
    let mut c = s.raw().await;
    let me = id(&mut c).await;
    assert_eq!(raw(&mut c, &["HELLO"]).await, hello_reply(false, me));
    assert_eq!(raw(&mut c, &["HELLO", "3"]).await, hello_reply(true, me));
    // Now replies are RESP3: a null is `_`.
    assert_eq!(raw(&mut c, &["GET", "missing"]).await, "_\\r\\n");
    assert_eq!(raw(&mut c, &["CLIENT", "GETNAME"]).await, "_\\r\\n");
    assert_eq!(raw(&mut c, &["HELLO", "2"]).await, hello_reply(false, me));
    assert_eq!(raw(&mut c, &["GET", "missing"]).await, "$-1\\r\\n");
    // HELLO without a version reports the current protocol.
    raw(&mut c, &["HELLO", "3"]).await;
    assert_eq!(raw(&mut c, &["HELLO"]).await, hello_reply(true, me));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hello_options_and_errors() {
    let s = start().await;
    let mut c = s.raw().await;
    let me = id(&mut c).await;
    let e = |s: &str| show(format!("-{s}\r\n").as_bytes());
    assert_eq!(
        raw(&mut c, &["HELLO", "1"]).await,
        e("NOPROTO unsupported protocol version")
    );
    assert_eq!(
        raw(&mut c, &["HELLO", "4"]).await,
        e("NOPROTO unsupported protocol version")
    );
    assert_eq!(
        raw(&mut c, &["HELLO", "abc"]).await,
        e("ERR Protocol version is not an integer or out of range")
    );
    assert_eq!(
        raw(&mut c, &["HELLO", "3", "AUTH", "default"]).await,
        e("ERR Syntax error in HELLO option 'AUTH'")
    );
    assert_eq!(
        raw(&mut c, &["HELLO", "3", "bogus"]).await,
        e("ERR Syntax error in HELLO option 'bogus'")
    );
    assert_eq!(
        raw(&mut c, &["HELLO", "3", "SETNAME", "a b"]).await,
        e("ERR Client names cannot contain spaces, newlines or special characters.")
    );
    // Failed HELLOs changed nothing.
    assert_eq!(raw(&mut c, &["GET", "x"]).await, "$-1\\r\\n");
    // SETNAME (the last one wins) and AUTH of the password-less default user.
    assert_eq!(
        raw(
            &mut c,
            &["HELLO", "2", "AUTH", "default", "anything", "SETNAME", "a", "setname", "b"]
        )
        .await,
        hello_reply(false, me)
    );
    assert_eq!(c.cmd(&["CLIENT", "GETNAME"]).await, bulk("b"));
    assert_eq!(
        raw(&mut c, &["HELLO", "3", "AUTH", "someone", "pw"]).await,
        e("WRONGPASS invalid username-password pair or user is disabled.")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_without_password() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["AUTH", "pw"]).await,
        err("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
    );
    assert_eq!(c.cmd(&["AUTH", "default", "whatever"]).await, ok());
    assert_eq!(
        c.cmd(&["AUTH", "bob", "pw"]).await,
        err("WRONGPASS invalid username-password pair or user is disabled.")
    );
    assert_eq!(
        c.cmd(&["AUTH", "a", "b", "c"]).await,
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["AUTH"]).await,
        err("ERR wrong number of arguments for 'auth' command")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_with_requirepass() {
    let s = start_with(|c| c.requirepass = "pw".into()).await;
    let mut c = s.raw().await;
    let noauth = err("NOAUTH Authentication required.");
    assert_eq!(c.cmd(&["GET", "k"]).await, noauth);
    assert_eq!(c.cmd(&["SET", "k", "v"]).await, noauth);
    assert_eq!(c.cmd(&["CLIENT", "ID"]).await, noauth);
    // Arity is checked before authentication, as in Redis.
    assert_eq!(
        c.cmd(&["GET"]).await,
        err("ERR wrong number of arguments for 'get' command")
    );
    assert_eq!(
        c.cmd(&["HELLO", "3"]).await,
        err("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
    );
    let wrongpass = err("WRONGPASS invalid username-password pair or user is disabled.");
    assert_eq!(c.cmd(&["AUTH", "nope"]).await, wrongpass);
    assert_eq!(c.cmd(&["AUTH", "default", "nope"]).await, wrongpass);
    assert_eq!(c.cmd(&["AUTH", "other", "pw"]).await, wrongpass);
    assert_eq!(c.cmd(&["GET", "k"]).await, noauth);
    assert_eq!(c.cmd(&["PING"]).await, noauth);
    assert_eq!(c.cmd(&["AUTH", "pw"]).await, ok());
    assert_eq!(c.cmd(&["SET", "k", "v"]).await, ok());
    // A failed AUTH does not log an authenticated connection out.
    assert_eq!(c.cmd(&["AUTH", "nope"]).await, wrongpass);
    assert_eq!(c.cmd(&["GET", "k"]).await, bulk("v"));
    // RESET logs out when a password is required.
    assert_eq!(c.cmd(&["RESET"]).await, simple("RESET"));
    assert_eq!(c.cmd(&["GET", "k"]).await, noauth);
    assert_eq!(c.cmd(&["AUTH", "default", "pw"]).await, ok());
    assert_eq!(c.cmd(&["GET", "k"]).await, bulk("v"));

    // HELLO can authenticate and switch protocol at once.
    let mut d = s.raw().await;
    assert_eq!(
        d.cmd(&["HELLO", "3", "AUTH", "default", "bad"]).await,
        wrongpass
    );
    match d.cmd(&["HELLO", "3", "AUTH", "default", "pw"]).await {
        Frame::Map(m) => assert_eq!(m[2], (bulk("proto"), int(3))),
        f => panic!("HELLO replied {f:?}"),
    }
    assert_eq!(d.cmd(&["GET", "k"]).await, bulk("v"));
    // QUIT needs no authentication.
    let mut e = s.raw().await;
    assert_eq!(e.cmd(&["QUIT"]).await, ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requirepass_set_at_run_time() {
    let s = start().await;
    let mut admin = s.raw().await;
    assert_eq!(
        admin.cmd(&["CONFIG", "SET", "requirepass", "secret"]).await,
        ok()
    );
    // The connection that was already open stays authenticated.
    assert_eq!(admin.cmd(&["PING"]).await, simple("PONG"));
    let mut c = s.raw().await;
    assert_eq!(
        c.cmd(&["PING"]).await,
        err("NOAUTH Authentication required.")
    );
    assert_eq!(c.cmd(&["AUTH", "secret"]).await, ok());
    assert_eq!(c.cmd(&["PING"]).await, simple("PONG"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_restores_the_initial_state() {
    let s = start().await;
    let mut c = s.raw().await;
    c.cmd(&["SELECT", "3"]).await;
    c.cmd(&["CLIENT", "SETNAME", "named"]).await;
    c.cmd(&["CLIENT", "NO-EVICT", "on"]).await;
    c.cmd(&["HELLO", "3"]).await;
    c.cmd(&["WATCH", "w"]).await;
    c.cmd(&["MULTI"]).await;
    assert_eq!(c.cmd(&["SET", "k", "v"]).await, simple("QUEUED"));
    // RESET is not queued; its reply is +RESET even in RESP3.
    assert_eq!(raw(&mut c, &["RESET"]).await, "+RESET\\r\\n");
    assert_eq!(c.cmd(&["EXEC"]).await, err("ERR EXEC without MULTI"));
    assert_eq!(raw(&mut c, &["GET", "k"]).await, "$-1\\r\\n");
    assert_eq!(c.cmd(&["CLIENT", "GETNAME"]).await, Frame::Null);
    let info = client_info(&mut c).await;
    assert!(info.contains(" db=0 "), "{info}");
    assert!(info.contains(" flags=N "), "{info}");
    assert!(info.contains(" resp=2\n"), "{info}");
    // CLIENT REPLY OFF is undone too.
    c.send(&encode_command(&[b"CLIENT", b"REPLY", b"OFF"]))
        .await;
    c.send(&encode_command(&[b"PING"])).await;
    assert_eq!(c.cmd(&["RESET"]).await, simple("RESET"));
    assert_eq!(c.cmd(&["PING"]).await, simple("PONG"));
    assert_eq!(
        c.cmd(&["RESET", "x"]).await,
        err("ERR wrong number of arguments for 'reset' command")
    );
}

async fn client_info(c: &mut Raw) -> String {
    match c.cmd(&["CLIENT", "INFO"]).await {
        Frame::Bulk(b) => String::from_utf8(b.to_vec()).unwrap(),
        Frame::Verbatim { data, .. } => String::from_utf8(data.to_vec()).unwrap(),
        f => panic!("CLIENT INFO replied {f:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_names_and_ids() {
    let s = start().await;
    let mut c = s.raw().await;
    let mut d = s.raw().await;
    let (a, b) = (id(&mut c).await, id(&mut d).await);
    assert_ne!(a, b);
    assert_eq!(c.cmd(&["CLIENT", "GETNAME"]).await, Frame::Null);
    assert_eq!(c.cmd(&["CLIENT", "SETNAME", "conn-1"]).await, ok());
    assert_eq!(c.cmd(&["CLIENT", "GETNAME"]).await, bulk("conn-1"));
    assert_eq!(d.cmd(&["CLIENT", "GETNAME"]).await, Frame::Null);
    let bad = err("ERR Client names cannot contain spaces, newlines or special characters.");
    assert_eq!(c.cmd(&["CLIENT", "SETNAME", "a b"]).await, bad);
    assert_eq!(c.cmd(&["CLIENT", "SETNAME", "a\nb"]).await, bad);
    assert_eq!(c.cmd(&["CLIENT", "GETNAME"]).await, bulk("conn-1"));
    assert_eq!(c.cmd(&["CLIENT", "SETNAME", ""]).await, ok());
    assert_eq!(c.cmd(&["CLIENT", "GETNAME"]).await, Frame::Null);
    assert_eq!(
        c.cmd(&["CLIENT", "SETNAME"]).await,
        err("ERR wrong number of arguments for 'client|setname' command")
    );
    assert_eq!(
        c.cmd(&["CLIENT", "ID", "x"]).await,
        err("ERR wrong number of arguments for 'client|id' command")
    );
    assert_eq!(
        c.cmd(&["CLIENT", "BOGUS"]).await,
        err("ERR unknown subcommand 'BOGUS'. Try CLIENT HELP.")
    );
    assert_eq!(
        c.cmd(&["CLIENT"]).await,
        err("ERR wrong number of arguments for 'client' command")
    );
    // SETINFO (Redis 7.2).
    assert_eq!(
        c.cmd(&["CLIENT", "SETINFO", "LIB-NAME", "redis-py"]).await,
        ok()
    );
    assert_eq!(c.cmd(&["CLIENT", "SETINFO", "lib-ver", "5.0"]).await, ok());
    assert_eq!(
        c.cmd(&["CLIENT", "SETINFO", "foo", "x"]).await,
        err("ERR Unrecognized option 'foo'")
    );
    assert_eq!(
        c.cmd(&["CLIENT", "SETINFO", "lib-name", "a b"]).await,
        err("ERR lib-name cannot contain spaces, newlines or special characters.")
    );
    let info = s.running.as_ref().unwrap().shared.clients.lock()[&(a as u64)]
        .lib
        .lock()
        .clone();
    assert_eq!(info, ("redis-py".to_string(), "5.0".to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_list_and_info_lines() {
    let s = start().await;
    let mut c = s.raw().await;
    let mut d = s.raw().await;
    let (a, b) = (id(&mut c).await, id(&mut d).await);
    d.cmd(&["CLIENT", "SETNAME", "second"]).await;
    d.cmd(&["SELECT", "2"]).await;
    d.cmd(&["MULTI"]).await;
    d.cmd(&["PING"]).await;
    let info = client_info(&mut c).await;
    let fields: Vec<&str> = info
        .trim_end()
        .split(' ')
        .map(|f| f.split('=').next().unwrap())
        .collect();
    assert_eq!(
        fields,
        [
            "id",
            "addr",
            "laddr",
            "fd",
            "name",
            "age",
            "idle",
            "flags",
            "db",
            "sub",
            "psub",
            "ssub",
            "multi",
            "qbuf",
            "qbuf-free",
            "argv-mem",
            "multi-mem",
            "rbs",
            "rbp",
            "obl",
            "oll",
            "omem",
            "tot-mem",
            "events",
            "cmd",
            "user",
            "redir",
            "resp"
        ]
    );
    assert!(
        info.starts_with(&format!("id={a} addr=127.0.0.1:")),
        "{info}"
    );
    assert!(
        info.ends_with(" cmd=client|info user=default redir=-1 resp=2\n"),
        "{info}"
    );
    assert!(info.contains(&format!(" laddr={} fd=", s.addr)), "{info}");

    let list = match c.cmd(&["CLIENT", "LIST"]).await {
        Frame::Bulk(b) => String::from_utf8(b.to_vec()).unwrap(),
        f => panic!("{f:?}"),
    };
    // One line per client, by increasing id.
    let mut lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 2, "{list}");
    if a > b {
        lines.reverse();
    }
    assert!(lines[0].starts_with(&format!("id={a} ")), "{list}");
    assert!(lines[0].contains(" cmd=client|list "), "{}", lines[0]);
    let second = lines[1];
    assert!(second.starts_with(&format!("id={b} ")));
    for f in [
        " name=second ",
        " flags=x ",
        " db=2 ",
        " multi=1 ",
        " cmd=multi ",
    ] {
        assert!(second.contains(f), "{f} in {second}");
    }

    // Filters.
    let only = |f: Frame| match f {
        Frame::Bulk(b) => String::from_utf8(b.to_vec()).unwrap(),
        f => panic!("{f:?}"),
    };
    let by_id = only(
        c.cmd(&["CLIENT", "LIST", "ID", &b.to_string(), "999"])
            .await,
    );
    assert!(by_id.starts_with(&format!("id={b} ")) && by_id.lines().count() == 1);
    let normal = only(c.cmd(&["CLIENT", "LIST", "TYPE", "normal"]).await);
    assert_eq!(normal.lines().count(), 2);
    assert_eq!(c.cmd(&["CLIENT", "LIST", "TYPE", "pubsub"]).await, bulk(""));
    assert_eq!(c.cmd(&["CLIENT", "LIST", "TYPE", "master"]).await, bulk(""));
    assert_eq!(
        c.cmd(&["CLIENT", "LIST", "TYPE", "x"]).await,
        err("ERR Unknown client type 'x'")
    );
    assert_eq!(
        c.cmd(&["CLIENT", "LIST", "ID", "x"]).await,
        err("ERR Invalid client ID")
    );
    assert_eq!(
        c.cmd(&["CLIENT", "LIST", "foo"]).await,
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["CLIENT", "INFO", "x"]).await,
        err("ERR wrong number of arguments for 'client|info' command")
    );

    // RESP3: a verbatim string of format txt.
    c.cmd(&["HELLO", "3"]).await;
    let r = raw(&mut c, &["CLIENT", "LIST", "ID", "999"]).await;
    assert_eq!(r, "=4\\r\\ntxt:\\r\\n");
    match c.cmd(&["CLIENT", "INFO"]).await {
        Frame::Verbatim { format, data } => {
            assert_eq!(&format, b"txt");
            assert!(data.ends_with(b" resp=3\n"));
        }
        f => panic!("{f:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_flags_no_evict_no_touch() {
    let s = start().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["CLIENT", "NO-EVICT", "on"]).await, ok());
    assert!(client_info(&mut c).await.contains(" flags=e "));
    assert_eq!(c.cmd(&["CLIENT", "NO-TOUCH", "ON"]).await, ok());
    assert!(client_info(&mut c).await.contains(" flags=eT "));
    assert_eq!(c.cmd(&["CLIENT", "NO-EVICT", "off"]).await, ok());
    assert_eq!(c.cmd(&["CLIENT", "NO-TOUCH", "off"]).await, ok());
    assert!(client_info(&mut c).await.contains(" flags=N "));
    assert_eq!(
        c.cmd(&["CLIENT", "NO-EVICT", "maybe"]).await,
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["CLIENT", "NO-TOUCH", "x"]).await,
        err("ERR syntax error")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_reply_modes() {
    let s = start().await;
    let mut c = s.raw().await;
    // OFF silences its own reply and everything after it until ON.
    c.send(&encode_command(&[b"CLIENT", b"REPLY", b"OFF"]))
        .await;
    c.send(&encode_command(&[b"SET", b"k", b"1"])).await;
    c.send(&encode_command(&[b"GET", b"nosuch"])).await;
    c.send(&encode_command(&[b"CLIENT", b"REPLY", b"SKIP"]))
        .await;
    assert_eq!(c.cmd(&["CLIENT", "REPLY", "ON"]).await, ok());
    // SKIP silences itself and the next command only.
    c.send(&encode_command(&[b"CLIENT", b"REPLY", b"SKIP"]))
        .await;
    c.send(&encode_command(&[b"INCR", b"k"])).await;
    assert_eq!(c.cmd(&["GET", "k"]).await, bulk("2"));
    assert_eq!(
        c.cmd(&["CLIENT", "REPLY", "x"]).await,
        err("ERR syntax error")
    );
    // Pipelined.
    c.send(
        &[
            encode_command(&[b"CLIENT", b"REPLY", b"SKIP"]),
            encode_command(&[b"PING", b"a"]),
            encode_command(&[b"PING", b"b"]),
        ]
        .concat(),
    )
    .await;
    assert_eq!(c.read().await, Some(bulk("b")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_kill() {
    let s = start().await;
    let mut c = s.raw().await;
    let mut victim = s.raw().await;
    let vid = id(&mut victim).await;
    let me = id(&mut c).await;
    assert_eq!(
        c.cmd(&["CLIENT", "KILL", "127.0.0.1:1"]).await,
        err("ERR No such client")
    );
    assert_eq!(c.cmd(&["CLIENT", "KILL", "ID", "999999"]).await, int(0));
    assert_eq!(
        c.cmd(&["CLIENT", "KILL", "ID", "x"]).await,
        err("ERR client-id should be greater than 0")
    );
    assert_eq!(
        c.cmd(&["CLIENT", "KILL", "BOGUS", "x"]).await,
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["CLIENT", "KILL", "ID", "1", "SKIPME"]).await,
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["CLIENT", "KILL", "SKIPME", "maybe"]).await,
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["CLIENT", "KILL", "TYPE", "x"]).await,
        err("ERR Unknown client type 'x'")
    );
    assert_eq!(
        c.cmd(&["CLIENT", "KILL", "USER", "nosuch"]).await,
        err("ERR No such user 'nosuch'")
    );
    assert_eq!(
        c.cmd(&["CLIENT", "KILL", "ADDR", "127.0.0.1:1"]).await,
        int(0)
    );
    // By id.
    assert_eq!(
        c.cmd(&["CLIENT", "KILL", "ID", &vid.to_string()]).await,
        int(1)
    );
    assert!(victim.closed().await);
    // Old form, by address.
    let mut v2 = s.raw().await;
    let addr = v2.stream.local_addr().unwrap().to_string();
    assert_eq!(c.cmd(&["CLIENT", "KILL", &addr]).await, ok());
    assert!(v2.closed().await);
    // LADDR and USER match everyone; SKIPME (default yes) spares the caller.
    let mut v3 = s.raw().await;
    let laddr = s.addr.to_string();
    assert_eq!(
        c.cmd(&["CLIENT", "KILL", "LADDR", &laddr, "USER", "default"])
            .await,
        int(1)
    );
    assert!(v3.closed().await);
    // SKIPME no: the reply goes out, then the connection closes.
    assert_eq!(
        c.cmd(&["CLIENT", "KILL", "ID", &me.to_string(), "SKIPME", "no"])
            .await,
        int(1)
    );
    assert!(c.closed().await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_help() {
    let s = start().await;
    let mut c = s.raw().await;
    let Frame::Array(lines) = c.cmd(&["CLIENT", "HELP"]).await else {
        panic!()
    };
    assert_eq!(
        lines[0],
        simple("CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
    );
    assert_eq!(lines[lines.len() - 2], simple("HELP"));
    assert_eq!(lines[lines.len() - 1], simple("    Prints this help."));
    assert!(lines.contains(&simple("KILL <ip:port>")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_crate_handshake() {
    // The redis crate's connection (RESP2) and a CLIENT SETNAME through it.
    let s = start().await;
    let mut con = s.client().await;
    let _: () = redis::cmd("CLIENT")
        .arg("SETNAME")
        .arg("from-redis-rs")
        .query_async(&mut con)
        .await
        .unwrap();
    let name: String = redis::cmd("CLIENT")
        .arg("GETNAME")
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(name, "from-redis-rs");
    let id: i64 = redis::cmd("CLIENT")
        .arg("ID")
        .query_async(&mut con)
        .await
        .unwrap();
    assert!(id > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_clients_are_closed_after_timeout() {
    let s = start_with(|c| c.timeout = 1).await;
    let mut idle = s.raw().await;
    assert_eq!(idle.cmd(&["PING"]).await, simple("PONG"));
    // The server closes a client that stays silent for `timeout` seconds.
    assert!(idle.closed().await, "idle client closed");
    let mut fresh = s.raw().await;
    assert_eq!(fresh.cmd(&["PING"]).await, simple("PONG"));
}

/// Redis 7.0.15's reply to a client from another host in protected mode, as it sends it
/// before closing (captured from redis-server bound to 127.0.0.1, client bound to 127.0.0.2).
const DENIED: &str = "-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.\r\n";

/// 127.0.0.2 is on the loopback interface but, for Redis 7.0, not local: only 127.0.0.1 and
/// ::1 are. A client bound to it stands for a remote client without any machine setup.
const ELSEWHERE: std::net::IpAddr = std::net::IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 2));

/// What a client from 127.0.0.2 gets for PING: everything up to the server's close, or
/// `None` (with the reason printed) when this machine cannot bind 127.0.0.2.
async fn ping_from_elsewhere(addr: std::net::SocketAddr) -> Option<String> {
    let mut stream = match connect_from(ELSEWHERE, addr).await {
        Ok(s) => s,
        Err(why) => {
            eprintln!("skipped: {why}");
            return None;
        }
    };
    use tokio::io::AsyncWriteExt;
    // The server may have closed already: the write can fail, the reply is what counts.
    let _ = stream.write_all(b"PING\r\nQUIT\r\n").await;
    Some(show(&read_to_close(&mut stream).await))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_mode_refuses_other_hosts_without_a_password() {
    let s = start().await;
    let Some(got) = ping_from_elsewhere(s.addr).await else {
        return;
    };
    assert_eq!(got, show(DENIED.as_bytes()));
    // The loopback address itself is served, and the refusal counts as a rejected connection.
    let mut local = s.raw().await;
    assert_eq!(raw(&mut local, &["PING"]).await, "+PONG\\r\\n");
    let info = match local.cmd(&["INFO", "stats"]).await {
        Frame::Bulk(b) => String::from_utf8(b.to_vec()).unwrap(),
        f => panic!("INFO replied {f:?}"),
    };
    assert!(info.contains("rejected_connections:1\r\n"), "{info}");
    assert_eq!(
        raw(&mut local, &["CONFIG", "GET", "protected-mode"]).await,
        "*2\\r\\n$14\\r\\nprotected-mode\\r\\n$3\\r\\nyes\\r\\n"
    );

    // A password lifts it (the client must then AUTH like anyone else).
    assert_eq!(
        raw(&mut local, &["CONFIG", "SET", "requirepass", "s3cret"]).await,
        "+OK\\r\\n"
    );
    assert_eq!(
        ping_from_elsewhere(s.addr).await.unwrap(),
        "-NOAUTH Authentication required.\\r\\n+OK\\r\\n"
    );
    assert_eq!(raw(&mut local, &["AUTH", "s3cret"]).await, "+OK\\r\\n");
    assert_eq!(
        raw(&mut local, &["CONFIG", "SET", "requirepass", ""]).await,
        "+OK\\r\\n"
    );
    assert_eq!(
        ping_from_elsewhere(s.addr).await.unwrap(),
        show(DENIED.as_bytes())
    );
    // So does a password given to the default user through ACL (protected mode looks at the
    // user's nopass flag, as Redis does).
    assert_eq!(
        raw(&mut local, &["ACL", "SETUSER", "default", ">pw"]).await,
        "+OK\\r\\n"
    );
    assert_eq!(
        ping_from_elsewhere(s.addr).await.unwrap(),
        "-NOAUTH Authentication required.\\r\\n+OK\\r\\n"
    );
    assert_eq!(
        raw(&mut local, &["ACL", "SETUSER", "default", "nopass"]).await,
        "+OK\\r\\n"
    );
    assert_eq!(
        ping_from_elsewhere(s.addr).await.unwrap(),
        show(DENIED.as_bytes())
    );

    // Protected mode is mutable in Redis 7.0: a local client may turn it off, and back on.
    assert_eq!(
        raw(&mut local, &["CONFIG", "SET", "protected-mode", "no"]).await,
        "+OK\\r\\n"
    );
    assert_eq!(
        ping_from_elsewhere(s.addr).await.unwrap(),
        "+PONG\\r\\n+OK\\r\\n"
    );
    assert_eq!(
        raw(&mut local, &["CONFIG", "SET", "protected-mode", "maybe"]).await,
        "-ERR CONFIG SET failed (possibly related to argument \\'protected-mode\\') - argument must be \\'yes\\' or \\'no\\'\\r\\n"
    );
    assert_eq!(
        raw(&mut local, &["CONFIG", "SET", "protected-mode", "yes"]).await,
        "+OK\\r\\n"
    );
    assert_eq!(
        ping_from_elsewhere(s.addr).await.unwrap(),
        show(DENIED.as_bytes())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_mode_off_from_the_start() {
    let s = start_with(|c| c.protected_mode = false).await;
    if let Some(got) = ping_from_elsewhere(s.addr).await {
        assert_eq!(got, "+PONG\\r\\n+OK\\r\\n");
    }
    let s = start_with(|c| c.requirepass = "pw".into()).await;
    if let Some(got) = ping_from_elsewhere(s.addr).await {
        assert_eq!(got, "-NOAUTH Authentication required.\\r\\n+OK\\r\\n");
    }
}

/// The reference: redis-server sends the same bytes to a client from 127.0.0.2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_mode_matches_redis() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(redis) = spawn_redis(tmp.path()) else {
        eprintln!("skipped: redis-server is not installed");
        return;
    };
    let Some(got) = ping_from_elsewhere(redis.addr()).await else {
        return;
    };
    assert_eq!(got, show(DENIED.as_bytes()));
}
/// CLIENT PAUSE WRITE holds writes (and EVAL, PUBLISH) until it ends or CLIENT UNPAUSE, while
/// reads run; CLIENT PAUSE ALL holds everything. Real, short waits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_pause_holds_writes_or_everything() {
    use std::time::{Duration, Instant};
    let s = start().await;
    let mut ctl = s.raw().await;
    let mut c = s.raw().await;
    assert_eq!(c.cmd(&["SET", "k", "1"]).await, ok());
    assert_eq!(ctl.cmd(&["CLIENT", "PAUSE", "400", "WRITE"]).await, ok());
    let t = Instant::now();
    assert_eq!(c.cmd(&["GET", "k"]).await, bulk("1"));
    assert!(
        t.elapsed() < Duration::from_millis(300),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(c.cmd(&["SET", "k", "2"]).await, ok());
    assert!(
        t.elapsed() >= Duration::from_millis(350),
        "{:?}",
        t.elapsed()
    );

    // In a pipeline, the replies before a held command go out at once, as redis-server 7.0.15
    // sends them; the held one follows when the pause ends.
    assert_eq!(ctl.cmd(&["CLIENT", "PAUSE", "400", "WRITE"]).await, ok());
    let t = Instant::now();
    let mut pipeline = encode_command(&[b"GET", b"k"]);
    pipeline.extend(encode_command(&[b"SET", b"k", b"3"]));
    c.send(&pipeline).await;
    assert_eq!(c.read().await, Some(bulk("2")));
    assert!(
        t.elapsed() < Duration::from_millis(300),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(c.read().await, Some(ok()));
    assert!(
        t.elapsed() >= Duration::from_millis(350),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(c.cmd(&["SET", "k", "2"]).await, ok());

    // UNPAUSE (not a write) lifts a long WRITE pause for a held client at once.
    assert_eq!(ctl.cmd(&["CLIENT", "PAUSE", "60000", "WRITE"]).await, ok());
    let t = Instant::now();
    c.send(&encode_command(&[
        b"EVAL",
        b"return redis.call('incr', 'n')",
        b"0",
    ]))
    .await;
    let early = tokio::time::timeout(Duration::from_millis(200), c.read()).await;
    assert!(early.is_err(), "EVAL ran during the pause: {early:?}");
    assert_eq!(ctl.cmd(&["CLIENT", "UNPAUSE"]).await, ok());
    assert_eq!(c.read().await, Some(int(1)));
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());

    // ALL holds reads too. Pauses combine: the longer time and the stronger mode, so a short
    // ALL after a long WRITE holds everything for the long time (as redis-server 7.0.15).
    assert_eq!(ctl.cmd(&["CLIENT", "PAUSE", "400", "WRITE"]).await, ok());
    assert_eq!(ctl.cmd(&["CLIENT", "PAUSE", "10", "ALL"]).await, ok());
    let t = Instant::now();
    assert_eq!(c.cmd(&["GET", "k"]).await, bulk("2"));
    assert!(
        t.elapsed() >= Duration::from_millis(300),
        "{:?}",
        t.elapsed()
    );
    // Rejected commands are answered at once.
    assert_eq!(ctl.cmd(&["CLIENT", "PAUSE", "400"]).await, ok());
    let t = Instant::now();
    assert_eq!(
        c.cmd(&["GET"]).await,
        err("ERR wrong number of arguments for 'get' command")
    );
    assert!(
        t.elapsed() < Duration::from_millis(300),
        "{:?}",
        t.elapsed()
    );
}
