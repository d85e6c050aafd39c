//! Keys of every type in each encoding Redis 7.0 has for it (DUMP/RESTORE and RDB file tests),
//! and a comparable rendering of a key's value read through any server.

use super::Raw;
use resp::Frame;

pub fn s(i: impl std::fmt::Display) -> String {
    i.to_string()
}

/// Commands that build every type in each encoding Redis 7.0 has for it, with a key name per
/// case; the expected OBJECT ENCODING is part of the name's check.
pub fn fixtures() -> Vec<(String, Vec<Vec<String>>)> {
    let mut f: Vec<(String, Vec<Vec<String>>)> = Vec::new();
    let mut one = |key: &str, cmds: Vec<Vec<String>>| f.push((key.to_string(), cmds));
    let set = |k: &str, v: String| vec![vec![s("SET"), s(k), v]];
    one("str:small", set("str:small", s("hello")));
    one("str:int8", set("str:int8", s("-12")));
    one("str:int16", set("str:int16", s("3000")));
    one("str:int32", set("str:int32", s("-2000000000")));
    one("str:int64", set("str:int64", s("9223372036854775807")));
    one("str:notint", set("str:notint", s("0123")));
    one("str:empty", set("str:empty", s("")));
    one("str:lzf", set("str:lzf", "abcdefgh".repeat(100)));
    one(
        "str:long",
        set(
            "str:long",
            (0..300)
                .map(|i| ((i * 7919) % 251) as u8 as char)
                .filter(|c| c.is_ascii_graphic())
                .collect(),
        ),
    );
    let push = |k: &str, items: Vec<String>| {
        let mut c = vec![s("RPUSH"), s(k)];
        c.extend(items);
        vec![c]
    };
    one(
        "list:small",
        push(
            "list:small",
            vec![s("a"), s("1"), s("-7"), s("b"), s("1000000000000")],
        ),
    );
    one(
        "list:big",
        push(
            "list:big",
            (0..5000)
                .map(|i| if i % 3 == 0 { s(i) } else { format!("e{i}") })
                .collect(),
        ),
    );
    one(
        "list:wide",
        push(
            "list:wide",
            (0..5).map(|i| format!("{i}{}", "w".repeat(9000))).collect(),
        ),
    );
    let hset = |k: &str, n: usize, vlen: usize| {
        let mut c = vec![s("HSET"), s(k)];
        for i in 0..n {
            c.push(format!("f{i}"));
            c.push(if i % 2 == 0 {
                s(i * 1000)
            } else {
                format!("{i}{}", "v".repeat(vlen))
            });
        }
        vec![c]
    };
    one("hash:listpack", hset("hash:listpack", 10, 5));
    one("hash:many", hset("hash:many", 600, 5));
    one("hash:longval", hset("hash:longval", 3, 100));
    let sadd = |k: &str, items: Vec<String>| {
        let mut c = vec![s("SADD"), s(k)];
        c.extend(items);
        vec![c]
    };
    one(
        "set:intset",
        sadd(
            "set:intset",
            vec![s("5"), s("-3"), s("70000"), s("9223372036854775807")],
        ),
    );
    one(
        "set:bigints",
        sadd("set:bigints", (0..600).map(s).collect()),
    );
    one(
        "set:strings",
        sadd("set:strings", vec![s("a"), s("b"), s("1")]),
    );
    let zadd = |k: &str, n: usize, mlen: usize| {
        let mut c = vec![s("ZADD"), s(k)];
        for i in 0..n {
            c.push(match i % 4 {
                0 => s(i),
                1 => format!("{}.25", i),
                2 => s("-inf"),
                _ => s(1.0 / (i as f64 + 0.5)),
            });
            c.push(format!("m{i}{}", "x".repeat(mlen)));
        }
        vec![c]
    };
    one("zset:listpack", zadd("zset:listpack", 12, 1));
    one("zset:skiplist", zadd("zset:skiplist", 300, 1));
    one("zset:longmember", zadd("zset:longmember", 3, 80));
    // Scores whose text in a listpack is `%.17g` or an integer past 2^53 (ZSCAN shows the text).
    one(
        "zset:scores",
        vec![[
            "ZADD",
            "zset:scores",
            "0.1",
            "a",
            "1.5e300",
            "b",
            "9007199254740992",
            "c",
            "4611686018427387904",
            "d",
            "1e19",
            "e",
        ]
        .map(s)
        .to_vec()],
    );
    let mut st: Vec<Vec<String>> = Vec::new();
    for i in 1..=250 {
        let fields = if i % 9 == 0 {
            vec![s("other"), s(i)]
        } else {
            vec![s("f"), format!("v{i}"), s("n"), s(i * 3)]
        };
        let mut c = vec![
            s("XADD"),
            s("stream:groups"),
            format!("{}-{}", 1000 + i / 4, i % 4),
        ];
        c.extend(fields);
        st.push(c);
    }
    for c in [
        "XDEL stream:groups 1001-0 1002-1",
        "XGROUP CREATE stream:groups g1 0",
        "XGROUP CREATE stream:groups g2 1010-0",
        "XGROUP CREATE stream:groups g3 $",
        "XREADGROUP GROUP g1 alice COUNT 5 STREAMS stream:groups >",
        "XREADGROUP GROUP g1 bob COUNT 3 STREAMS stream:groups >",
        "XACK stream:groups g1 1000-1",
        "XGROUP CREATECONSUMER stream:groups g1 carol",
        "XREADGROUP GROUP g2 dave COUNT 2 STREAMS stream:groups >",
    ] {
        st.push(c.split(' ').map(s).collect());
    }
    one("stream:groups", st);
    one(
        "stream:empty",
        vec![
            "XADD stream:empty 5-5 a b".split(' ').map(s).collect(),
            "XDEL stream:empty 5-5".split(' ').map(s).collect(),
            "XGROUP CREATE stream:empty g $".split(' ').map(s).collect(),
        ],
    );
    f
}

/// A comparable rendering of the value at `key`: its type, encoding and contents (sets and
/// hashes sorted).
pub async fn contents(c: &mut Raw, key: &str) -> String {
    let t = c.cmd(&["TYPE", key]).await;
    let enc = c.cmd(&["OBJECT", "ENCODING", key]).await;
    let body = match &t {
        Frame::Simple(t) if &t[..] == b"string" => c.cmd(&["GET", key]).await,
        Frame::Simple(t) if &t[..] == b"list" => c.cmd(&["LRANGE", key, "0", "-1"]).await,
        Frame::Simple(t) if &t[..] == b"set" => sorted(c.cmd(&["SMEMBERS", key]).await),
        Frame::Simple(t) if &t[..] == b"hash" => sorted(c.cmd(&["HGETALL", key]).await),
        Frame::Simple(t) if &t[..] == b"zset" => {
            let range = c.cmd(&["ZRANGE", key, "0", "-1", "WITHSCORES"]).await;
            if enc != Frame::Bulk("listpack".into()) {
                range
            } else {
                // A listpack's scores as it holds their text (ZSCAN shows it; ZRANGE reformats).
                let scan = c.cmd(&["ZSCAN", key, "0", "COUNT", "1000"]).await;
                Frame::Array(vec![range, scan])
            }
        }
        // Everything XINFO FULL shows but the radix tree's shape.
        Frame::Simple(t) if &t[..] == b"stream" => match c
            .cmd(&["XINFO", "STREAM", key, "FULL"])
            .await
        {
            Frame::Array(v) => Frame::Array(
                v.chunks(2)
                    .filter(|p| !matches!(&p[0], Frame::Bulk(k) if k.starts_with(b"radix-tree")))
                    .flatten()
                    .cloned()
                    .collect(),
            ),
            other => other,
        },
        _ => Frame::Null,
    };
    format!("{t:?} {enc:?} {body:?}")
}

pub fn sorted(f: Frame) -> Frame {
    match f {
        Frame::Array(v) => {
            let mut v: Vec<String> = v.into_iter().map(|x| format!("{x:?}")).collect();
            v.sort();
            Frame::Array(v.into_iter().map(|x| Frame::Bulk(x.into())).collect())
        }
        other => other,
    }
}

pub async fn build(c: &mut Raw) {
    for (_, cmds) in fixtures() {
        for cmd in cmds {
            let args: Vec<&str> = cmd.iter().map(String::as_str).collect();
            let r = c.cmd(&args).await;
            assert!(!matches!(r, Frame::Error(_)), "{args:?}: {r:?}");
        }
    }
}
