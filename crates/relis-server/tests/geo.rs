//! Geo commands over TCP: pinned replies (RESP2 and RESP3), keyspace events, ACL `@geo`, and
//! searches over 10,000 random points compared byte for byte with redis-server 7.0.15 (the
//! differential script `geo` in differential.rs covers every option and error line by line).

mod common;
use common::*;
use rand::{Rng, SeedableRng};
use resp::Frame;

/// Sends `args` and returns the reply's exact bytes.
async fn raw_reply(c: &mut Raw, args: &[String]) -> Vec<u8> {
    let a: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
    c.send(&encode_command(&a)).await;
    c.read_raw().await.expect("a reply")
}

fn line(s: &str) -> Vec<String> {
    s.split(' ').map(str::to_string).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn geoadd_geopos_geohash_geodist_pinned() {
    let s = start().await;
    let mut c = s.raw().await;
    let add = c
        .cmd(&[
            "GEOADD",
            "Sicily",
            "13.361389",
            "38.115556",
            "Palermo",
            "15.087269",
            "37.502669",
            "Catania",
        ])
        .await;
    assert_eq!(add, int(2));
    // The scores are Redis's 52-bit geohashes.
    assert_eq!(
        c.cmd(&["ZRANGE", "Sicily", "0", "-1", "WITHSCORES"]).await,
        bulks(&["Palermo", "3479099956230698", "Catania", "3479447370796909"])
    );
    c.send(&encode_command(&[
        b"GEOPOS", b"Sicily", b"Palermo", b"nosuch",
    ]))
    .await;
    assert_eq!(
        show(&c.read_raw().await.unwrap()),
        show(b"*2\r\n*2\r\n$20\r\n13.36138933897018433\r\n$20\r\n38.11555639549629859\r\n*-1\r\n")
    );
    assert_eq!(
        c.cmd(&["GEOHASH", "Sicily", "Palermo", "nosuch"]).await,
        arr(vec![bulk("sqc8b49rny0"), Frame::Null])
    );
    assert_eq!(
        c.cmd(&["GEODIST", "Sicily", "Palermo", "Catania", "km"])
            .await,
        bulk("166.2742")
    );
    assert_eq!(
        c.cmd(&["GEODIST", "Sicily", "Palermo", "Catania", "yards"])
            .await,
        err("ERR unsupported unit provided. please use M, KM, FT, MI")
    );
    assert_eq!(
        c.cmd(&["GEOADD", "Sicily", "200", "100", "x"]).await,
        err("ERR invalid longitude,latitude pair 200.000000,100.000000")
    );
    assert_eq!(
        c.cmd(&["GEOADD", "Sicily", "xx", "nx", "1", "2", "x"])
            .await,
        err("ERR syntax error")
    );
    // CH counts a moved member; NX leaves it where it is.
    assert_eq!(
        c.cmd(&["GEOADD", "Sicily", "CH", "13.4", "38.1", "Palermo"])
            .await,
        int(1)
    );
    assert_eq!(
        c.cmd(&["GEOADD", "Sicily", "NX", "1", "1", "Palermo"])
            .await,
        int(0)
    );
    // RESP3: coordinates are doubles with the same text, a missing member is null.
    c.cmd(&["HELLO", "3"]).await;
    c.send(&encode_command(&[
        b"GEOPOS", b"Sicily", b"Catania", b"nosuch",
    ]))
    .await;
    assert_eq!(
        show(&c.read_raw().await.unwrap()),
        show(b"*2\r\n*2\r\n,15.08726745843887329\r\n,37.50266842333162032\r\n_\r\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn searches_pinned_resp2_and_resp3() {
    let s = start().await;
    let mut c = s.raw().await;
    c.cmd(&[
        "GEOADD",
        "Sicily",
        "13.361389",
        "38.115556",
        "Palermo",
        "15.087269",
        "37.502669",
        "Catania",
    ])
    .await;
    let q =
        line("GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km ASC WITHDIST WITHHASH WITHCOORD");
    assert_eq!(
        show(&raw_reply(&mut c, &q).await),
        show(
            b"*2\r\n*4\r\n$7\r\nCatania\r\n$7\r\n56.4413\r\n:3479447370796909\r\n*2\r\n$20\r\n15.08726745843887329\r\n$20\r\n37.50266842333162032\r\n\
*4\r\n$7\r\nPalermo\r\n$8\r\n190.4424\r\n:3479099956230698\r\n*2\r\n$20\r\n13.36138933897018433\r\n$20\r\n38.11555639549629859\r\n"
        )
    );
    assert_eq!(
        c.cmd(&["GEORADIUS", "Sicily", "15", "37", "100", "km"])
            .await,
        bulks(&["Catania"])
    );
    assert_eq!(
        c.cmd(&["GEORADIUSBYMEMBER", "Sicily", "nosuch", "1", "km"])
            .await,
        err("ERR could not decode requested zset member")
    );
    assert_eq!(
        c.cmd(&[
            "GEOSEARCHSTORE",
            "d",
            "Sicily",
            "FROMLONLAT",
            "15",
            "37",
            "BYRADIUS",
            "200",
            "km",
            "STOREDIST"
        ])
        .await,
        int(2)
    );
    assert_eq!(
        c.cmd(&["ZRANGE", "d", "0", "-1", "WITHSCORES"]).await,
        bulks(&[
            "Catania",
            "56.441257870158204",
            "Palermo",
            "190.44242984775784"
        ])
    );
    c.cmd(&["HELLO", "3"]).await;
    let q = line("GEOSEARCH Sicily FROMMEMBER Palermo BYBOX 400 400 km DESC WITHDIST WITHCOORD");
    assert_eq!(
        show(&raw_reply(&mut c, &q).await),
        show(
            b"*2\r\n*3\r\n$7\r\nCatania\r\n$8\r\n166.2742\r\n*2\r\n,15.08726745843887329\r\n,37.50266842333162032\r\n\
*3\r\n$7\r\nPalermo\r\n$6\r\n0.0000\r\n*2\r\n,13.36138933897018433\r\n,38.11555639549629859\r\n"
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyspace_events_as_redis() {
    let s = start().await;
    let mut c = s.raw().await;
    c.cmd(&["CONFIG", "SET", "notify-keyspace-events", "KEA"])
        .await;
    let mut sub = s.raw().await;
    sub.cmd(&["PSUBSCRIBE", "__keyevent@0__:*"]).await;
    c.cmd(&["GEOADD", "g", "1", "2", "a", "3", "4", "b"]).await;
    // Nothing changed: no event.
    c.cmd(&["GEOADD", "g", "NX", "1", "2", "a"]).await;
    c.cmd(&[
        "GEOSEARCHSTORE",
        "d",
        "g",
        "FROMLONLAT",
        "1",
        "2",
        "BYRADIUS",
        "1000",
        "km",
    ])
    .await;
    c.cmd(&["GEORADIUS", "g", "1", "2", "1000", "km", "STORE", "d2"])
        .await;
    c.cmd(&[
        "GEOSEARCHSTORE",
        "d",
        "g",
        "FROMLONLAT",
        "100",
        "2",
        "BYRADIUS",
        "1",
        "km",
    ])
    .await;
    let mut events = Vec::new();
    for _ in 0..4 {
        let Some(Frame::Array(v) | Frame::Push(v)) = sub.read().await else {
            panic!()
        };
        events.push((v[2].clone(), v[3].clone()));
    }
    assert_eq!(
        events,
        vec![
            (bulk("__keyevent@0__:zadd"), bulk("g")),
            (bulk("__keyevent@0__:geosearchstore"), bulk("d")),
            (bulk("__keyevent@0__:georadiusstore"), bulk("d2")),
            (bulk("__keyevent@0__:del"), bulk("d")),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acl_geo_category() {
    let s = start().await;
    let mut c = s.raw().await;
    c.cmd(&["ACL", "SETUSER", "geo", "on", "nopass", "+@geo", "~*"])
        .await;
    let Frame::Array(cmds) = c.cmd(&["ACL", "CAT", "geo"]).await else {
        panic!()
    };
    assert_eq!(cmds.len(), 10);
    // Redis checks only the first STORE key and writes to the last: Relis checks both.
    c.cmd(&[
        "ACL", "SETUSER", "st", "on", "nopass", "+@all", "~k", "~allowed",
    ])
    .await;
    c.cmd(&["GEOADD", "k", "1", "2", "a"]).await;
    let mut st = s.raw().await;
    st.cmd(&["AUTH", "st", "x"]).await;
    let store = |dst2: &'static str| {
        [
            "GEORADIUS",
            "k",
            "1",
            "2",
            "300",
            "km",
            "STORE",
            "allowed",
            "STORE",
            dst2,
        ]
    };
    assert_eq!(
        st.cmd(&store("forbidden")).await,
        err("NOPERM this user has no permissions to access one of the keys used as arguments")
    );
    assert_eq!(st.cmd(&store("allowed")).await, int(1));
    assert_eq!(c.cmd(&["EXISTS", "forbidden"]).await, int(0));
    c.cmd(&["AUTH", "geo", "x"]).await;
    assert_eq!(c.cmd(&["GEOADD", "g", "1", "2", "a"]).await, int(1));
    assert_eq!(
        c.cmd(&["ZADD", "g", "1", "b"]).await,
        err("NOPERM this user has no permissions to run the 'zadd' command")
    );
}

/// A point for the random set: mostly anywhere, some crowded near a few centres, near the
/// poles' limits and along the antimeridian; every 50th a copy of an earlier point (equal
/// distances).
fn random_points(n: usize) -> Vec<(String, String)> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(17);
    let mut pts: Vec<(String, String)> = Vec::with_capacity(n);
    for i in 0..n {
        let (lon, lat): (f64, f64) = match i % 10 {
            0..=4 => (
                rng.random_range(-180.0..=180.0),
                rng.random_range(-85.05..=85.05),
            ),
            5 | 6 => {
                let (cx, cy) = [(13.4, 38.1), (-73.99, 40.73), (139.69, 35.68)][i % 3];
                (
                    cx + rng.random_range(-0.5..0.5),
                    cy + rng.random_range(-0.5..0.5),
                )
            }
            7 => (
                rng.random_range(-180.0..=180.0),
                rng.random_range(80.0..=85.05112878),
            ),
            8 => (
                rng.random_range(-180.0..=180.0),
                rng.random_range(-85.05112878..=-80.0),
            ),
            _ => {
                let lon = if rng.random_bool(0.5) {
                    rng.random_range(179.0..=180.0)
                } else {
                    rng.random_range(-180.0..=-179.0)
                };
                (lon, rng.random_range(-60.0..60.0))
            }
        };
        if i % 50 == 49 {
            let j = rng.random_range(0..i);
            pts.push(pts[j].clone());
        } else {
            pts.push((format!("{lon:.7}"), format!("{lat:.7}")));
        }
    }
    pts
}

/// The queries: centres (by coordinates and by member), radii and boxes in every unit, and
/// the ordering, COUNT, ANY and WITH* options in combination.
fn queries(members: usize) -> Vec<Vec<String>> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    let centres: Vec<(f64, f64)> = vec![
        (13.4, 38.1),
        (-73.99, 40.73),
        (139.69, 35.68),
        (0.0, 0.0),
        (179.95, 10.0),
        (-179.95, -10.0),
        (10.0, 84.9),
        (-120.0, -84.9),
        (180.0, 85.05112878),
        (-180.0, -85.05112878),
    ];
    let shapes = [
        "BYRADIUS 10 km",
        "BYRADIUS 50 km",
        "BYRADIUS 200 km",
        "BYRADIUS 1000 km",
        "BYRADIUS 30000 m",
        "BYRADIUS 300000 ft",
        "BYRADIUS 120 mi",
        "BYRADIUS 5000 km",
        "BYBOX 100 100 km",
        "BYBOX 400 50 km",
        "BYBOX 20 300 mi",
        "BYBOX 2000 1000 km",
        "BYBOX 500000 500000 ft",
    ];
    let options = [
        "",
        "ASC",
        "DESC WITHDIST",
        "ASC WITHCOORD WITHHASH WITHDIST",
        "COUNT 5",
        "COUNT 3 DESC WITHDIST",
        "COUNT 7 ANY",
        "COUNT 4 ANY ASC WITHDIST WITHCOORD",
        "COUNT 1000 ASC WITHHASH",
        "WITHCOORD",
    ];
    let mut out = Vec::new();
    for (ci, (lon, lat)) in centres.iter().enumerate() {
        for (si, shape) in shapes.iter().enumerate() {
            let opt = options[(ci * 7 + si) % options.len()];
            let from = if (ci + si) % 4 == 0 {
                format!("FROMMEMBER m{}", rng.random_range(0..members))
            } else {
                format!("FROMLONLAT {lon} {lat}")
            };
            out.push(line(
                &format!("GEOSEARCH pts {from} {shape} {opt}").replace("  ", " "),
            ));
        }
        let r = ["10 km", "250 km", "80 mi"][ci % 3];
        out.push(line(&format!(
            "GEORADIUS pts {lon} {lat} {r} WITHDIST ASC COUNT 20"
        )));
        out.push(line(&format!(
            "GEORADIUS_RO pts {lon} {lat} {r} WITHCOORD DESC"
        )));
        out.push(line(&format!(
            "GEORADIUSBYMEMBER pts m{} {r} WITHDIST WITHHASH",
            rng.random_range(0..members)
        )));
        out.push(line(&format!(
            "GEORADIUSBYMEMBER_RO pts m{} {r} COUNT 3 ANY",
            rng.random_range(0..members)
        )));
    }
    // Random centres anywhere.
    for i in 0..60 {
        let lon: f64 = rng.random_range(-180.0..=180.0);
        let lat: f64 = rng.random_range(-85.0..=85.0);
        let shape = shapes[i % shapes.len()];
        let opt = options[i % options.len()];
        out.push(line(
            &format!("GEOSEARCH pts FROMLONLAT {lon:.6} {lat:.6} {shape} {opt}").replace("  ", " "),
        ));
    }
    out.retain(|l| !l.last().is_some_and(String::is_empty));
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn searches_on_10k_random_points_match_redis() {
    if redis_server().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let redis = spawn_redis(tmp.path()).expect("redis-server");
    let relis = start().await;
    let mut want = Raw::connect(redis.addr()).await;
    let mut got = relis.raw().await;
    let pts = random_points(10_000);
    for (chunk_no, chunk) in pts.chunks(200).enumerate() {
        let mut cmd = vec!["GEOADD".to_string(), "pts".to_string()];
        for (i, (lon, lat)) in chunk.iter().enumerate() {
            cmd.push(lon.clone());
            cmd.push(lat.clone());
            cmd.push(format!("m{}", chunk_no * 200 + i));
        }
        let w = raw_reply(&mut want, &cmd).await;
        assert_eq!(show(&raw_reply(&mut got, &cmd).await), show(&w));
    }
    // The same scores.
    let all = line("ZRANGE pts 0 -1 WITHSCORES");
    assert_eq!(
        raw_reply(&mut got, &all).await,
        raw_reply(&mut want, &all).await,
        "scores differ"
    );
    let qs = queries(pts.len());
    let mut diffs = Vec::new();
    let mut nonempty = 0;
    for resp3 in [false, true] {
        if resp3 {
            want.cmd(&["HELLO", "3"]).await;
            got.cmd(&["HELLO", "3"]).await;
        }
        for q in &qs {
            let w = raw_reply(&mut want, q).await;
            let g = raw_reply(&mut got, q).await;
            if w.len() > 4 {
                nonempty += 1;
            }
            if w != g {
                diffs.push(format!(
                    "resp{}: {}\n  redis: {}\n  relis: {}",
                    if resp3 { 3 } else { 2 },
                    q.join(" "),
                    show(&w[..w.len().min(600)]),
                    show(&g[..g.len().min(600)])
                ));
            }
        }
    }
    assert!(nonempty > qs.len(), "too few queries found anything");
    assert!(
        diffs.is_empty(),
        "{} of {} differ:\n{}",
        diffs.len(),
        2 * qs.len(),
        diffs[..diffs.len().min(5)].join("\n")
    );
    // GEOSEARCHSTORE / STORE: the stored sets are the same.
    for (i, q) in qs.iter().enumerate().filter(|(_, q)| q[0] == "GEOSEARCH") {
        if q.iter().any(|a| a.starts_with("WITH")) {
            continue;
        }
        let mut store = vec!["GEOSEARCHSTORE".to_string(), format!("d{i}")];
        store.extend(q[1..].iter().cloned());
        if i % 2 == 0 {
            store.push("STOREDIST".into());
        }
        let w = raw_reply(&mut want, &store).await;
        assert_eq!(
            show(&raw_reply(&mut got, &store).await),
            show(&w),
            "{store:?}"
        );
        let enc = line(&format!("OBJECT ENCODING d{i}"));
        assert_eq!(
            show(&raw_reply(&mut got, &enc).await),
            show(&raw_reply(&mut want, &enc).await),
            "{store:?}"
        );
        let z = line(&format!("ZRANGE d{i} 0 -1 WITHSCORES"));
        assert_eq!(
            show(&raw_reply(&mut got, &z).await),
            show(&raw_reply(&mut want, &z).await),
            "{store:?}"
        );
    }
}

fn stat(info: &Frame, name: &str) -> i64 {
    let (Frame::Bulk(b) | Frame::Verbatim { data: b, .. }) = info else {
        panic!("{info:?}")
    };
    let text = String::from_utf8_lossy(b);
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {text}"))
}

/// A search that scans more members than an inline read may is run again on a reader: the
/// whole answer comes back, and the lookup counts once in keyspace_hits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_search_moves_to_a_reader_and_counts_once() {
    let s = start().await;
    let mut c = s.raw().await;
    let mut cmd = vec!["GEOADD".to_string(), "dense".to_string()];
    for i in 0..2000 {
        cmd.push(format!("{:.6}", 2.0 + (i % 50) as f64 * 0.001));
        cmd.push(format!("{:.6}", 48.0 + (i / 50) as f64 * 0.001));
        cmd.push(format!("p{i}"));
    }
    assert_eq!(show(&raw_reply(&mut c, &cmd).await), show(b":2000\r\n"));
    let before = stat(&c.cmd(&["INFO", "stats"]).await, "keyspace_hits");
    let Frame::Array(found) = c
        .cmd(&[
            "GEOSEARCH",
            "dense",
            "FROMLONLAT",
            "2.02",
            "48.02",
            "BYRADIUS",
            "50",
            "km",
        ])
        .await
    else {
        panic!()
    };
    assert_eq!(found.len(), 2000);
    let after = stat(&c.cmd(&["INFO", "stats"]).await, "keyspace_hits");
    assert_eq!(after - before, 1);
}

/// GEOADD and GEOSEARCHSTORE make a sorted set, so they serve a client blocked in BZPOPMIN (as
/// in Redis, where they add the key to the database).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn geoadd_and_geosearchstore_serve_bzpopmin() {
    let s = start().await;
    let mut c = s.raw().await;
    let mut blocked = s.raw().await;
    blocked
        .send(&encode_command(&[b"BZPOPMIN", b"g", b"0"]))
        .await;
    wait_blocked(&mut c, 1).await;
    c.cmd(&["GEOADD", "g", "13.361389", "38.115556", "Palermo"])
        .await;
    assert_eq!(
        blocked.read().await.unwrap(),
        bulks(&["g", "Palermo", "3479099956230698"])
    );
    c.cmd(&["GEOADD", "src", "13.361389", "38.115556", "Palermo"])
        .await;
    blocked
        .send(&encode_command(&[b"BZPOPMIN", b"d", b"0"]))
        .await;
    wait_blocked(&mut c, 1).await;
    let stored = c
        .cmd(&[
            "GEOSEARCHSTORE",
            "d",
            "src",
            "FROMLONLAT",
            "13",
            "38",
            "BYRADIUS",
            "100",
            "km",
            "STOREDIST",
        ])
        .await;
    assert_eq!(stored, int(1));
    let Some(Frame::Array(v)) = blocked.read().await else {
        panic!()
    };
    assert_eq!(v[..2], [bulk("d"), bulk("Palermo")]);
}
