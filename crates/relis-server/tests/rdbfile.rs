//! RDB files against redis-server 7.0.15: a file it SAVEs with every type and encoding, TTLs,
//! several databases and functions imports into Relis with identical contents; Relis's export
//! loads back into redis-server identical; bad, truncated and hostile files stop the import
//! with the offset and leave the data file byte for byte as it was; expired keys are dropped.

mod common;
use common::fixtures::*;
use common::*;
use rdb::file::FileWriter;
use rdb::{Object, ObjectKind};
use relis_server::config::Config;
use relis_server::rdbfile::{export, import, BATCH_KEYS};
use resp::Frame;
use std::path::{Path, PathBuf};

/// A configuration whose data file is `dir/relis.db`.
fn config_in(dir: &Path) -> Config {
    Config {
        port: 0,
        dir: dir.to_path_buf(),
        readers: 2,
        ..Config::default()
    }
}

/// Commands beyond the fixtures: other databases, TTLs, a function library, and a key that
/// expired but is still in memory (active expiry off) so SAVE writes it.
const EXTRA: &[&str] = &[
    "SELECT 3",
    "SET db3:str three",
    "HSET db3:hash a 1 b 2",
    "SET db3:ttl v PX 500000000",
    "SELECT 15",
    "RPUSH db15:list x y z",
    "SELECT 0",
    "SET ttl:str v PX 600000000",
    "EXPIRE list:big 700000",
    "DEBUG SET-ACTIVE-EXPIRE 0",
    "SET gone v PX 1",
];

const LIBRARY: &str =
    "#!lua name=rdblib\nredis.register_function('hello', function() return 'hi' end)";

/// Keys (with their database) compared between the servers.
fn all_keys() -> Vec<(u32, String)> {
    let mut k: Vec<(u32, String)> = fixtures().into_iter().map(|(k, _)| (0, k)).collect();
    k.push((0, "ttl:str".into()));
    for key in ["db3:str", "db3:hash", "db3:ttl"] {
        k.push((3, key.into()));
    }
    k.push((15, "db15:list".into()));
    k
}

/// Builds the data set in `redis` and SAVEs it; returns the file.
async fn redis_file(redis: &mut Raw, dir: &Path) -> PathBuf {
    build(redis).await;
    for line in EXTRA {
        let args: Vec<&str> = line.split(' ').collect();
        let r = redis.cmd(&args).await;
        assert!(!matches!(r, Frame::Error(_)), "{line}: {r:?}");
    }
    let r = redis.cmd(&["FUNCTION", "LOAD", LIBRARY]).await;
    assert_eq!(r, bulk("rdblib"));
    std::thread::sleep(std::time::Duration::from_millis(5));
    assert_eq!(redis.cmd(&["SAVE"]).await, ok());
    // Saved, now gone from Redis's DBSIZE too.
    assert_eq!(redis.cmd(&["DEL", "gone"]).await, int(0));
    dir.join("dump.rdb")
}

/// Everything the two servers must agree on.
async fn compare(want: &mut Raw, got: &mut Raw) {
    for (db, key) in all_keys() {
        for c in [&mut *want, &mut *got] {
            assert_eq!(c.cmd(&["SELECT", &db.to_string()]).await, ok());
        }
        let w = contents(want, &key).await;
        assert_eq!(contents(got, &key).await, w, "db {db} key {key}");
        let w = want.cmd(&["PEXPIRETIME", &key]).await;
        assert_eq!(
            got.cmd(&["PEXPIRETIME", &key]).await,
            w,
            "db {db} key {key}"
        );
    }
    for db in [0, 3, 15] {
        for c in [&mut *want, &mut *got] {
            assert_eq!(c.cmd(&["SELECT", &db.to_string()]).await, ok());
        }
        let w = want.cmd(&["DBSIZE"]).await;
        assert_eq!(got.cmd(&["DBSIZE"]).await, w, "DBSIZE of db {db}");
    }
    let w = want.cmd(&["FUNCTION", "LIST", "WITHCODE"]).await;
    assert_eq!(got.cmd(&["FUNCTION", "LIST", "WITHCODE"]).await, w);
    assert_eq!(got.cmd(&["FCALL", "hello", "0"]).await, bulk("hi"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_file_imports_and_relis_export_loads_back() {
    if redis_server().is_none() {
        return;
    }
    let rdir = tempfile::tempdir().unwrap();
    let redis_proc = spawn_redis_with(rdir.path(), &["--enable-debug-command", "yes"]).unwrap();
    let mut redis = Raw::connect(redis_proc.addr()).await;
    let file = redis_file(&mut redis, rdir.path()).await;

    let ddir = tempfile::tempdir().unwrap();
    let cfg = config_in(ddir.path());
    let sum = import(&cfg, &file).expect("import");
    // `gone` had expired but was still in memory, so SAVE wrote it; the import drops it.
    assert_eq!(sum.expired, 1, "{sum:?}");
    assert_eq!(sum.functions, 1);
    assert_eq!(sum.keys as usize, fixtures().len() + 5, "{sum:?}");
    assert_eq!(sum.bytes, std::fs::metadata(&file).unwrap().len());
    assert!(!ddir.path().join("relis.db.import").exists());

    let mut relis = start_with(|c| c.dir = ddir.path().to_path_buf()).await;
    let mut got = relis.raw().await;
    compare(&mut redis, &mut got).await;
    assert_eq!(got.cmd(&["EXISTS", "gone"]).await, int(0));
    relis.stop().await;
    drop(got);

    // Relis -> file -> redis-server.
    let edir = tempfile::tempdir().unwrap();
    let out = edir.path().join("out.rdb");
    let sum = export(&cfg, &out).expect("export");
    assert_eq!(sum.keys as usize, fixtures().len() + 5);
    assert_eq!(sum.functions, 1);
    assert!(!edir.path().join("out.rdb.tmp").exists());
    let back = spawn_redis_with(edir.path(), &["--dbfilename", "out.rdb"]).unwrap();
    let mut back = Raw::connect(back.addr()).await;
    // redis-server logs a bad file and exits; this one answered, so check it loaded it all.
    compare(&mut redis, &mut back).await;
}

/// A data file with a key in it, closed; returns its bytes.
fn existing_data_file(dir: &Path) -> Vec<u8> {
    let db = relis::Db::open(dir.join("relis.db")).unwrap();
    db.set("before", "import").unwrap();
    drop(db);
    std::fs::read(dir.join("relis.db")).unwrap()
}

/// An RDB file of `n` string keys `k0..`, from the crate's writer.
fn many_keys(n: usize) -> Vec<u8> {
    let mut w = FileWriter::new(Vec::new()).unwrap();
    w.select_db(0, n as u64, 0).unwrap();
    for i in 0..n {
        let v = Object::String(format!("value-{i}").into());
        w.entry(format!("k{i}").as_bytes(), &v, ObjectKind::General, None)
            .unwrap();
    }
    w.finish().unwrap()
}

/// Imports `bytes` over an existing data file: the error, and the data file unchanged.
fn fails_unchanged(bytes: &[u8]) -> String {
    let ddir = tempfile::tempdir().unwrap();
    let before = existing_data_file(ddir.path());
    let file = ddir.path().join("bad.rdb");
    std::fs::write(&file, bytes).unwrap();
    let err = import(&config_in(ddir.path()), &file).unwrap_err();
    assert_eq!(
        std::fs::read(ddir.path().join("relis.db")).unwrap(),
        before,
        "data file changed: {err}"
    );
    assert!(!ddir.path().join("relis.db.import").exists());
    assert!(!ddir.path().join("relis.db.import-wal").exists());
    let db = relis::Db::open(ddir.path().join("relis.db")).unwrap();
    assert_eq!(db.get("before").unwrap().as_deref(), Some(&b"import"[..]));
    assert_eq!(db.get("k0").unwrap(), None);
    err
}

#[test]
fn truncated_files_fail_with_the_offset_and_change_nothing() {
    // More keys than one transaction takes: earlier batches commit to the staging copy.
    let good = many_keys(BATCH_KEYS + 5000);
    for cut in [5, 9, 100, good.len() / 2, good.len() - 9, good.len() - 3] {
        let err = fails_unchanged(&good[..cut]);
        let want = format!("unexpected end of file (at byte {cut})");
        assert!(err.ends_with(&want), "cut {cut}: {err}");
    }
    // The whole file imports over the same kind of data file, keeping the key there.
    let ddir = tempfile::tempdir().unwrap();
    existing_data_file(ddir.path());
    let file = ddir.path().join("good.rdb");
    std::fs::write(&file, &good).unwrap();
    let sum = import(&config_in(ddir.path()), &file).unwrap();
    assert_eq!(sum.keys as usize, BATCH_KEYS + 5000);
    let db = relis::Db::open(ddir.path().join("relis.db")).unwrap();
    assert_eq!(db.get("before").unwrap().as_deref(), Some(&b"import"[..]));
    assert_eq!(db.get("k7").unwrap().as_deref(), Some(&b"value-7"[..]));
    assert_eq!(db.dbsize().unwrap() as usize, BATCH_KEYS + 5001);
}

#[test]
fn corrupt_files_fail_with_the_offset_and_change_nothing() {
    let good = many_keys(10);
    let n = good.len();
    // A checksum that does not match.
    let mut bad = good.clone();
    bad[n - 1] ^= 1;
    let err = fails_unchanged(&bad);
    assert!(err.contains("Wrong RDB checksum"), "{err}");
    assert!(err.ends_with(&format!("(at byte {})", n - 8)), "{err}");
    // An unknown object type where the third key's type byte is.
    let mut w = FileWriter::new(Vec::new()).unwrap();
    w.select_db(0, 2, 0).unwrap();
    w.entry(b"a", &Object::String("x".into()), ObjectKind::General, None)
        .unwrap();
    let mut f = w.finish().unwrap();
    f.truncate(f.len() - 9);
    let at = f.len();
    f.extend_from_slice(b"\x63\x01k\x01v\xff");
    let crc = rdb::crc64::crc64(0, &f);
    f.extend_from_slice(&crc.to_le_bytes());
    let err = fails_unchanged(&f);
    assert!(
        err.ends_with(&format!("Unknown RDB encoding type 99 (at byte {at})")),
        "{err}"
    );
    // A hash listpack that is not one, with a good checksum.
    let mut f = b"REDIS0010".to_vec();
    f.extend_from_slice(b"\x10\x01k\x07garbage\xff");
    let crc = rdb::crc64::crc64(0, &f);
    f.extend_from_slice(&crc.to_le_bytes());
    let err = fails_unchanged(&f);
    assert!(
        err.ends_with("key 'k': listpack integrity check failed (at byte 20)"),
        "{err}"
    );
    // Not an RDB file at all.
    let err = fails_unchanged(b"SQLite format 3\0");
    assert!(
        err.ends_with("Wrong signature trying to load DB from file (at byte 0)"),
        "{err}"
    );
    // A database the configuration does not have.
    let mut w = FileWriter::new(Vec::new()).unwrap();
    w.select_db(16, 1, 0).unwrap();
    let err = fails_unchanged(&w.finish().unwrap());
    assert!(err.contains("selects database 16"), "{err}");
}

#[test]
fn expired_keys_are_dropped() {
    let mut w = FileWriter::new(Vec::new()).unwrap();
    w.select_db(0, 3, 2).unwrap();
    let v = Object::String("v".into());
    w.entry(b"past", &v, ObjectKind::General, Some(1_000))
        .unwrap();
    w.entry(b"future", &v, ObjectKind::General, Some(4_000_000_000_000))
        .unwrap();
    w.entry(b"plain", &v, ObjectKind::General, None).unwrap();
    let ddir = tempfile::tempdir().unwrap();
    let file = ddir.path().join("x.rdb");
    std::fs::write(&file, w.finish().unwrap()).unwrap();
    let sum = import(&config_in(ddir.path()), &file).unwrap();
    assert_eq!((sum.keys, sum.expired), (2, 1));
    let db = relis::Db::open(ddir.path().join("relis.db")).unwrap();
    assert_eq!(db.get("past").unwrap(), None);
    assert_eq!(db.get("future").unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(db.dbsize().unwrap(), 2);
}

#[test]
fn the_binary_reports_a_bad_import_and_exits_1() {
    let ddir = tempfile::tempdir().unwrap();
    let before = existing_data_file(ddir.path());
    let good = many_keys(3);
    let file = ddir.path().join("cut.rdb");
    std::fs::write(&file, &good[..good.len() - 4]).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_relis-server"))
        .arg("--dir")
        .arg(ddir.path())
        .arg("--import")
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "Import failed: {}: unexpected end of file (at byte {})",
            file.display(),
            good.len() - 4
        )),
        "{err}"
    );
    assert!(err.contains("relis.db is unchanged."), "{err}");
    assert_eq!(std::fs::read(ddir.path().join("relis.db")).unwrap(), before);
    // And a good one, then an export, through the binary.
    std::fs::write(&file, &good).unwrap();
    let st = std::process::Command::new(env!("CARGO_BIN_EXE_relis-server"))
        .arg("--dir")
        .arg(ddir.path())
        .arg("--import")
        .arg(&file)
        .output()
        .unwrap();
    assert!(st.status.success(), "{st:?}");
    let out_file = ddir.path().join("out.rdb");
    let st = std::process::Command::new(env!("CARGO_BIN_EXE_relis-server"))
        .args(["--export"])
        .arg(&out_file)
        .arg("--dir")
        .arg(ddir.path())
        .output()
        .unwrap();
    assert!(st.status.success(), "{st:?}");
    let recs: Vec<_> = rdb::file::FileReader::new(std::fs::File::open(&out_file).unwrap())
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let keys = recs
        .iter()
        .filter(|r| matches!(r, rdb::file::Record::Entry(_)))
        .count();
    assert_eq!(keys, 4);
}

#[test]
fn a_failed_import_into_a_new_data_file_leaves_none() {
    let ddir = tempfile::tempdir().unwrap();
    let good = many_keys(BATCH_KEYS + 10);
    let file = ddir.path().join("cut.rdb");
    std::fs::write(&file, &good[..good.len() - 1]).unwrap();
    let err = import(&config_in(ddir.path()), &file).unwrap_err();
    assert!(err.contains("unexpected end of file"), "{err}");
    let left: Vec<_> = std::fs::read_dir(ddir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, vec!["cut.rdb".to_string()]);
}

/// A key already expired in the file stands for no key, as RESTORE REPLACE with a past ABSTTL
/// does in Redis (it deletes the key there, replies OK): importing over a data file that has a
/// key of that name, of any type, in that database, removes it. Other keys stay.
#[test]
fn an_expired_key_in_the_file_removes_the_existing_one() {
    let ddir = tempfile::tempdir().unwrap();
    {
        let db = relis::Db::open(ddir.path().join("relis.db")).unwrap();
        db.set("past", "old").unwrap();
        db.set("keep", "old").unwrap();
        db.write(|w| {
            w.hset(3, b"h3", &[("f".into(), "v".into())])?;
            w.set(3, b"past", b"db3", Default::default())
        })
        .unwrap();
    }
    let mut w = FileWriter::new(Vec::new()).unwrap();
    let v = Object::String("new".into());
    w.select_db(0, 2, 1).unwrap();
    w.entry(b"past", &v, ObjectKind::General, Some(1_000))
        .unwrap();
    w.entry(b"fresh", &v, ObjectKind::General, None).unwrap();
    w.select_db(3, 1, 1).unwrap();
    w.entry(b"h3", &v, ObjectKind::General, Some(2_000))
        .unwrap();
    let file = ddir.path().join("x.rdb");
    std::fs::write(&file, w.finish().unwrap()).unwrap();
    let sum = import(&config_in(ddir.path()), &file).unwrap();
    assert_eq!((sum.keys, sum.expired), (1, 2), "{sum:?}");
    let db = relis::Db::open(ddir.path().join("relis.db")).unwrap();
    assert_eq!(db.get("past").unwrap(), None);
    assert_eq!(db.get("keep").unwrap().as_deref(), Some(&b"old"[..]));
    assert_eq!(db.get("fresh").unwrap().as_deref(), Some(&b"new"[..]));
    let in3 = db
        .read(|r| Ok((r.exists(3, &["h3".into()])?, r.exists(3, &["past".into()])?)))
        .unwrap();
    // `past` of database 3 is another key: the file expired only database 0's.
    assert_eq!(in3, (0, 1));
}

/// A key twice in one database of the file: redis-server refuses to load such a file, and an
/// import into a database that was empty fails naming the key (its keys are not looked up
/// first), leaving no data file.
#[test]
fn a_key_twice_in_the_file_fails_the_import() {
    let mut w = FileWriter::new(Vec::new()).unwrap();
    w.select_db(0, 2, 0).unwrap();
    let v = Object::String("v".into());
    w.entry(b"twice", &v, ObjectKind::General, None).unwrap();
    w.entry(b"twice", &v, ObjectKind::General, None).unwrap();
    let ddir = tempfile::tempdir().unwrap();
    let file = ddir.path().join("x.rdb");
    std::fs::write(&file, w.finish().unwrap()).unwrap();
    let err = import(&config_in(ddir.path()), &file).unwrap_err();
    assert!(
        err.contains("key 'twice' of database 0") && err.contains("in the file twice"),
        "{err}"
    );
    assert!(!ddir.path().join("relis.db").exists());
}

/// The files in `dir`, by name, sorted.
fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// An import into a new data file writes its staging file without a journal, in one
/// transaction across its batches, then hands over a file in WAL mode, as the server makes
/// them, with nothing else left behind.
#[test]
fn an_import_into_a_new_data_file_leaves_a_wal_mode_file_and_nothing_else() {
    let ddir = tempfile::tempdir().unwrap();
    let file = ddir.path().join("good.rdb");
    std::fs::write(&file, many_keys(2 * BATCH_KEYS + 7)).unwrap();
    let sum = import(&config_in(ddir.path()), &file).unwrap();
    assert_eq!(sum.keys as usize, 2 * BATCH_KEYS + 7);
    assert_eq!(files_in(ddir.path()), vec!["good.rdb", "relis.db"]);
    let head = std::fs::read(ddir.path().join("relis.db")).unwrap();
    // The header's file format write and read versions: 2 is WAL.
    assert_eq!((head[18], head[19]), (2, 2));
    let db = relis::Db::open(ddir.path().join("relis.db")).unwrap();
    assert_eq!(db.dbsize().unwrap() as usize, 2 * BATCH_KEYS + 7);
    assert_eq!(
        db.get(format!("k{}", 2 * BATCH_KEYS + 6))
            .unwrap()
            .as_deref(),
        Some(format!("value-{}", 2 * BATCH_KEYS + 6).as_bytes())
    );
}

/// A failure in a later batch of the one transaction (a key the first batch wrote, again)
/// stops the import with its error, and leaves no data file.
#[test]
fn a_key_twice_in_different_batches_fails_the_import_and_leaves_no_file() {
    let n = BATCH_KEYS + 5;
    let mut w = FileWriter::new(Vec::new()).unwrap();
    w.select_db(0, n as u64 + 1, 0).unwrap();
    for i in 0..n {
        let v = Object::String(format!("value-{i}").into());
        w.entry(format!("k{i}").as_bytes(), &v, ObjectKind::General, None)
            .unwrap();
    }
    w.entry(
        b"k3",
        &Object::String("again".into()),
        ObjectKind::General,
        None,
    )
    .unwrap();
    let ddir = tempfile::tempdir().unwrap();
    let file = ddir.path().join("x.rdb");
    std::fs::write(&file, w.finish().unwrap()).unwrap();
    let err = import(&config_in(ddir.path()), &file).unwrap_err();
    assert!(
        err.contains("key 'k3' of database 0") && err.contains("in the file twice"),
        "{err}"
    );
    assert_eq!(files_in(ddir.path()), vec!["x.rdb"]);
}
