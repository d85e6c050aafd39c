//! Relis's page cache (`pcache.rs`): commits skip the default cache's truncation scan when it
//! has nothing to drop, and what is cached stays right through page splits, growth, rollbacks
//! of transactions that grew the file, and reopening. In its own test binary: the cache is
//! installed by the first `Db` of the process, before SQLite initialises.

use relis::{Db, Error, SetOptions};

fn value(i: u64) -> Vec<u8> {
    // 40-400 bytes: many rows per page, splits everywhere.
    let len = 40 + (i * 7919 % 361) as usize;
    format!("{i:08}").bytes().cycle().take(len).collect()
}

#[test]
fn commits_skip_empty_truncations_and_the_cache_stays_right() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let db = Db::open(&path).unwrap();
    let keys: Vec<u64> = (0..20_000u64)
        .map(|i| i * 2_654_435_761 % 1_000_003)
        .collect();
    for chunk in keys.chunks(100) {
        let chunk = chunk.to_vec();
        db.write(move |w| {
            for &k in &chunk {
                w.set(
                    0,
                    format!("k{k}").as_bytes(),
                    &value(k),
                    SetOptions::default(),
                )?;
            }
            Ok(())
        })
        .unwrap();
    }
    // Transactions that grow the file by many pages, then roll back: the pages past the old
    // end must leave the cache.
    for round in 0..5u64 {
        let r: Result<(), Error> = db.write(move |w| {
            for i in 0..2_000u64 {
                let k = format!("gone{round}:{i}");
                w.set(0, k.as_bytes(), &[b'x'; 1500], SetOptions::default())?;
            }
            Err(Error::WrongType)
        });
        assert_eq!(r, Err(Error::WrongType));
        db.set(format!("after{round}"), "1").unwrap();
    }
    // A transaction that moves more pages past the old end than the cache tracks (a replica's
    // full sync): rolled back, its pages must leave the cache all the same; committed, it
    // stays whole.
    let r: Result<(), Error> = db.write(|w| {
        for i in 0..120_000u64 {
            let k = format!("huge:{}", i * 2_654_435_761 % 1_000_003);
            w.set(0, k.as_bytes(), &value(i)[..], SetOptions::default())?;
        }
        Err(Error::WrongType)
    });
    assert_eq!(r, Err(Error::WrongType));
    assert!(
        relis::page_cache_overflows() > 0,
        "the transaction did not move more pages than the cache tracks"
    );
    assert_eq!(db.get("huge:0").unwrap(), None);
    db.write(|w| {
        for i in 0..30_000u64 {
            let k = format!("big:{}", i * 2_654_435_761 % 1_000_003);
            w.set(0, k.as_bytes(), &value(i)[..], SetOptions::default())?;
        }
        Ok(())
    })
    .unwrap();
    // The file grows again over the page numbers the rolled-back transactions used.
    db.write(|w| {
        for i in 0..2_000u64 {
            let k = format!("regrown:{i}");
            w.set(0, k.as_bytes(), &value(i + 7)[..], SetOptions::default())?;
        }
        Ok(())
    })
    .unwrap();
    let (skipped, passed) = relis::page_cache_truncations();
    assert!(
        skipped > 0,
        "no truncation was skipped ({passed} passed on)"
    );
    assert!(
        passed > 0,
        "rollbacks of a grown file pass their truncation on"
    );
    for &k in keys.iter().step_by(7) {
        let got = db.get(format!("k{k}")).unwrap();
        assert_eq!(got.as_deref(), Some(&value(k)[..]), "key k{k}");
    }
    for round in 0..5u64 {
        assert_eq!(db.get(format!("gone{round}:0")).unwrap(), None);
        assert_eq!(
            db.get(format!("after{round}")).unwrap().as_deref(),
            Some(&b"1"[..])
        );
    }
    for i in (0..2_000u64).step_by(11) {
        let got = db.get(format!("regrown:{i}")).unwrap();
        assert_eq!(got.as_deref(), Some(&value(i + 7)[..]));
    }
    for i in (0..30_000u64).step_by(17) {
        let k = format!("big:{}", i * 2_654_435_761 % 1_000_003);
        assert_eq!(db.get(k).unwrap().as_deref(), Some(&value(i)[..]));
    }
    assert_eq!(db.dbsize().unwrap(), 20_000 + 5 + 30_000 + 2_000);
    drop(db);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    drop(conn);
    let db = Db::open(&path).unwrap();
    for &k in keys.iter().step_by(13) {
        assert_eq!(
            db.get(format!("k{k}")).unwrap().as_deref(),
            Some(&value(k)[..])
        );
    }
}

/// Each connection's page cache is its own, with no process-wide pool and lock: the workspace
/// builds the bundled SQLite without SQLITE_ENABLE_MEMORY_MANAGEMENT (`.cargo/config.toml`).
/// With it, the writer, the readers and the checkpointer took one mutex about ten times per
/// command.
#[test]
fn each_connection_has_its_own_page_cache() {
    let option = std::ffi::CString::new("ENABLE_MEMORY_MANAGEMENT").unwrap();
    // SAFETY: a NUL-terminated string; SQLite only reads it.
    let used = unsafe { rusqlite::ffi::sqlite3_compileoption_used(option.as_ptr()) };
    assert_eq!(
        used, 0,
        "SQLite was built with SQLITE_ENABLE_MEMORY_MANAGEMENT: is LIBSQLITE3_FLAGS set \
         elsewhere, or .cargo/config.toml not read?"
    );
}
