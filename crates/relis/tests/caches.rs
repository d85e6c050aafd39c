//! The engine's SQLite caches: each connection's holds at most its own size (SQLite as Relis
//! builds it gives every connection a cache of its own, `.cargo/config.toml`), and what they
//! hold is reported.

use relis::{CacheSizes, Db, Options};

const MIB: u64 = 1 << 20;

/// 40,000 keys of 100 bytes (a 6 MB file, more than the caches), written, then read on the
/// calling thread and on a reader thread.
#[test]
fn each_cache_stays_within_its_own_size() {
    let dir = tempfile::tempdir().unwrap();
    let sizes = CacheSizes {
        writer: 2 * MIB,
        reader: MIB,
        mmap: 0,
    };
    let db = Db::open_with(Options {
        readers: 2,
        caches: sizes,
        ..Options::file(dir.path().join("c.db"))
    })
    .unwrap();
    let key = |i: usize| format!("key:{i:012}");
    for chunk in (0..40_000).collect::<Vec<_>>().chunks(1000) {
        let pairs: Vec<(String, Vec<u8>)> =
            chunk.iter().map(|&i| (key(i), vec![b'x'; 100])).collect();
        db.mset(&pairs).unwrap();
    }
    let read_all = |db: &Db| {
        db.read_here(|r| {
            for i in 0..40_000 {
                assert!(r.get(0, key(i).as_bytes()).unwrap().is_some());
            }
        })
        .unwrap()
        .unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        db.read_async(
            move |r| (0..40_000).all(|i| matches!(r.get(0, key(i).as_bytes()), Ok(Some(_)))),
            move |found| tx.send(found.unwrap()).unwrap(),
        );
        assert!(rx.recv().unwrap());
    };
    // Each connection publishes what it holds after its own work: the writer after its
    // commit, this thread's reader and the reader thread after their reads (the reader thread
    // after it has answered, so the figures are read until it has). The commit comes first: a
    // reader's cache drops the pages a commit changed when it begins its next read. The file's
    // pages fill
    // the two readers that read, each to its own size and not past it, with SQLite's page
    // headers (under a fifth more); the third holds next to nothing.
    let bound = |mib: f64| (mib * MIB as f64 * 1.2) as u64;
    db.set("z", "1").unwrap();
    read_all(&db);
    let mut u = db.cache_use();
    for _ in 0..100 {
        assert_eq!(u.reader_connections, 3, "{u:?}");
        assert!(u.writer <= bound(2.0), "{u:?}");
        assert!(u.readers <= bound(3.0), "{u:?}");
        if u.readers > 2 * MIB - MIB / 4 {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        u = db.cache_use();
    }
    panic!("the readers' caches did not fill: {u:?}");
}
