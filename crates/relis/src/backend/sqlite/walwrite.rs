//! A commit's WAL frames in one write: an SQLite VFS shim that gathers the frames a transaction
//! appends to its WAL file and hands them to the real file in one `pwrite` once the commit frame
//! is complete.
//!
//! SQLite writes each WAL frame as two calls, its 24-byte header then its page, at offsets that
//! straddle the file's 4 KiB pages (a frame is 4120 bytes). Under random-key writes a group
//! commit appends one frame per write or more, and perf put the kernel's side of those calls
//! (ext4's per-page write begin/end and `mark_buffer_dirty`, twice or three times per frame)
//! at a third of the writer thread. One write per commit does the same page-cache work once per
//! page.
//!
//! What is gathered is never what another connection may read: only a transaction's frames are
//! held, and the write that completes its commit frame (the frame whose header carries the
//! database size) flushes them before SQLite publishes the commit in the WAL index, and returns
//! the real write's error if that fails, so a commit that cannot reach the file fails as it
//! would without the shim. Every commit frame is one write, whatever came before it: the next
//! transaction's (a transaction of one page, such as an embedded SET, is a single commit frame)
//! and SQLite's padding frames alike (when it pads a synced commit to a sector, with copies of
//! the commit frame). The rest of a write SQLite splits at its sync point goes straight through.
//! The writer's own reads, syncs, truncations and size queries flush first. A flush that fails
//! drops what it holds and returns the error to the transaction those frames belong to.
//!
//! The shim also keeps the page log ([`crate::backend::sqlite::pagelog`]) of each database: it
//! registers the page of every frame header a WAL is written, and tells the log when a
//! connection takes or lets go the WAL index's write lock and takes a read lock.
//!
//! Only WAL files are gathered; every other file, and every other call, passes through.
//! [`install`] makes the shim the process's default VFS, over whatever was the default (the
//! test shims of [`crate::backend::sqlite::faults`] and [`crate::backend::sqlite::powercut`] included, whichever order they come
//! in); [`crate::Db`] installs it when it opens its first database.

use crate::backend::sqlite::pagelog::{self, IndexHeader, PageLog, FRAME_HEADER, WAL_HEADER};
use crate::backend::sqlite::shim::{self, Head};
use rusqlite::ffi;
use std::ffi::{c_int, c_void, CStr};
use std::sync::{Arc, OnceLock};

/// Past this many gathered bytes (a large transaction spilling pages before it commits), the
/// gathered frames are written out and gathering starts again.
const MAX_GATHERED: usize = 4 << 20;
/// The most the unix VFS writes in one call: it masks a write's length to 17 bits (it never
/// expects more than a 64 KiB page), so a longer one would come back short.
const MAX_WRITE: usize = 64 << 10;

/// The file control ([`gather_database_writes`]) that makes a database file's writes gathered
/// too.
const FCNTL_GATHER: c_int = 0x524c_4700;

/// Makes the writes to `conn`'s main database file gathered as a WAL's are (contiguous
/// writes, up to [`MAX_GATHERED`] bytes, written together, flushed before any read, sync,
/// truncation, size query, lock change or close). Only for a file no other connection reads
/// (`Options::bulk`: no journal, locked exclusively, no memory map), where SQLite writes
/// pages one by one in page order at each commit and each spill of its cache: 84,000 writes
/// of 2 KiB at the end of a 1M-key import.
pub(crate) fn gather_database_writes(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    // SAFETY: a file control on the connection's own main database, with no argument.
    let rc = unsafe {
        ffi::sqlite3_file_control(
            conn.handle(),
            c"main".as_ptr(),
            FCNTL_GATHER,
            std::ptr::null_mut(),
        )
    };
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rusqlite::Error::SqliteFailure(
            ffi::Error::new(rc),
            Some("the database file's writes cannot be gathered".into()),
        ))
    }
}

/// Makes the shim the process's default SQLite VFS; idempotent. Databases opened afterwards go
/// through it.
pub fn install() {
    static DONE: OnceLock<bool> = OnceLock::new();
    // SAFETY: x_open makes `File`s, which start with a Head.
    DONE.get_or_init(|| unsafe {
        shim::register(c"relis-walwrite", std::mem::size_of::<File>(), x_open, None)
    });
}

/// Where a WAL file is in SQLite's sequence of frame writes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Frames of a transaction: gathered.
    Gather,
    /// A commit frame's header was gathered: the next write (its page) completes the commit.
    CommitPage,
    /// After a commit frame's page, until the next frame header: written through (the rest of
    /// a page SQLite split at its sync point).
    Through,
}

/// Our file: the shim head, then, for a WAL file, what is gathered and where it goes.
#[repr(C)]
struct File {
    head: Head,
    wal: bool,
    /// A database file whose writes are gathered ([`gather_database_writes`]).
    gather_db: bool,
    stage: Stage,
    gathered: Vec<u8>,
    /// The file offset of `gathered[0]`.
    at: i64,
    /// The database's log of changed pages ([`pagelog`]), for its file and its WAL: the WAL's
    /// frames are registered in it, the database file's WAL index locks tell it when
    /// transactions end and reads begin.
    log: Option<Arc<PageLog>>,
    /// The database file's WAL index, region 0 (its header), once SQLite has mapped it.
    shm: *const u8,
}

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    xClose: Some(x_close),
    xRead: Some(x_read),
    xWrite: Some(x_write),
    xTruncate: Some(x_truncate),
    xSync: Some(x_sync),
    xFileSize: Some(x_file_size),
    xLock: Some(x_lock),
    xUnlock: Some(x_unlock),
    xFileControl: Some(x_file_control),
    xFetch: Some(x_fetch),
    xShmMap: Some(x_shm_map),
    xShmLock: Some(x_shm_lock),
    xShmUnmap: Some(x_shm_unmap),
    ..shim::PASS
};

unsafe extern "C" fn x_open(
    vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let real = match shim::open_real(vfs, name, file, flags, out_flags) {
        Ok(real) => real,
        Err(rc) => return rc,
    };
    let wal = flags & ffi::SQLITE_OPEN_WAL != 0;
    let log = if wal || flags & ffi::SQLITE_OPEN_MAIN_DB != 0 {
        database_log(name, wal)
    } else {
        None
    };
    std::ptr::write(
        file.cast::<File>(),
        File {
            head: Head::new(&METHODS, real),
            wal,
            gather_db: false,
            stage: Stage::Gather,
            gathered: Vec::new(),
            at: 0,
            log,
            shm: std::ptr::null(),
        },
    );
    ffi::SQLITE_OK
}

/// The log of the database file `name` names (the file itself, or for a WAL the database it
/// belongs to).
unsafe fn database_log(name: ffi::sqlite3_filename, wal: bool) -> Option<Arc<PageLog>> {
    if name.is_null() {
        return None;
    }
    let name = CStr::from_ptr(name).to_str().ok()?;
    let path = if wal {
        name.strip_suffix("-wal")?
    } else {
        name
    };
    pagelog::for_file(std::path::Path::new(path))
}

unsafe fn file<'a>(file: *mut ffi::sqlite3_file) -> &'a mut File {
    &mut *file.cast::<File>()
}

impl File {
    /// Writes `data` at `off` in the real file.
    unsafe fn write_real(&self, data: &[u8], off: i64) -> c_int {
        #[cfg(test)]
        if self.wal {
            tests::REAL_WAL_WRITES.with(|n| n.set(n.get() + 1));
        }
        let real = self.head.real;
        (shim::methods(real).xWrite.unwrap())(real, data.as_ptr().cast(), data.len() as c_int, off)
    }

    /// Writes out what is gathered, in pieces of at most [`MAX_WRITE`] bytes. On an error it is
    /// dropped and the error returned: what is gathered always belongs to the transaction that
    /// is writing, which the error fails (kept, a failed commit's frames could reach the file
    /// later, whole, and come back to life at the next recovery).
    unsafe fn flush(&mut self) -> c_int {
        let mut rc = ffi::SQLITE_OK;
        let mut off = self.at;
        for piece in self.gathered.chunks(MAX_WRITE) {
            rc = self.write_real(piece, off);
            if rc != ffi::SQLITE_OK {
                break;
            }
            off += piece.len() as i64;
        }
        self.gathered.clear();
        if self.gathered.capacity() > MAX_GATHERED {
            self.gathered.shrink_to(MAX_GATHERED);
        }
        rc
    }

    /// Adds `data`, bound for `off`, to what is gathered (writing that out first when `data`
    /// does not follow it or it is full).
    unsafe fn gather(&mut self, data: &[u8], off: i64) -> c_int {
        let end = self.at + self.gathered.len() as i64;
        if !self.gathered.is_empty()
            && (off != end || self.gathered.len() + data.len() > MAX_GATHERED)
        {
            let rc = self.flush();
            if rc != ffi::SQLITE_OK {
                return rc;
            }
        }
        if self.gathered.is_empty() {
            self.at = off;
        }
        self.gathered.extend_from_slice(data);
        ffi::SQLITE_OK
    }

    /// One write SQLite makes to the WAL.
    unsafe fn wal_write(&mut self, data: &[u8], off: i64) -> c_int {
        if data.len() as i64 == FRAME_HEADER && off >= WAL_HEADER {
            // A commit frame (a transaction's last, or a padding frame after it) is written
            // with its page; other frames are gathered until the commit frame.
            self.stage = if data[4..8] != [0; 4] {
                Stage::CommitPage
            } else {
                Stage::Gather
            };
            return self.gather(data, off);
        }
        match self.stage {
            Stage::Gather => self.gather(data, off),
            Stage::CommitPage => {
                self.stage = Stage::Through;
                let rc = self.gather(data, off);
                if rc != ffi::SQLITE_OK {
                    return rc;
                }
                self.flush()
            }
            Stage::Through => self.through(data, off),
        }
    }

    unsafe fn through(&mut self, data: &[u8], off: i64) -> c_int {
        let rc = self.flush();
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        self.write_real(data, off)
    }
}

unsafe extern "C" fn x_close(file: *mut ffi::sqlite3_file) -> c_int {
    let f = file.cast::<File>();
    let flushed = (*f).flush();
    let rc = shim::close_real((*f).head.real);
    std::ptr::drop_in_place(&mut (*f).gathered);
    std::ptr::drop_in_place(&mut (*f).log);
    if flushed != ffi::SQLITE_OK {
        return flushed;
    }
    rc
}

unsafe extern "C" fn x_read(
    f: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    if file(f).flush() != ffi::SQLITE_OK {
        return ffi::SQLITE_IOERR_READ;
    }
    shim::x_read(f, buf, amt, off)
}

unsafe extern "C" fn x_write(
    f: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    let file = file(f);
    if amt <= 0 || !(file.wal || file.gather_db) {
        return shim::x_write(f, buf, amt, off);
    }
    let data = std::slice::from_raw_parts(buf.cast::<u8>(), amt as usize);
    // SQLite writes each frame's header on its own, 24 bytes after the WAL's 32-byte header.
    if file.wal && i64::from(amt) == FRAME_HEADER && off >= WAL_HEADER {
        if let Some(log) = &file.log {
            log.frame(data, off);
        }
    }
    if file.gather_db {
        return file.gather(data, off);
    }
    file.wal_write(data, off)
}

unsafe extern "C" fn x_lock(f: *mut ffi::sqlite3_file, lock: c_int) -> c_int {
    match file(f).flush() {
        ffi::SQLITE_OK => shim::x_lock(f, lock),
        rc => rc,
    }
}

unsafe extern "C" fn x_unlock(f: *mut ffi::sqlite3_file, lock: c_int) -> c_int {
    match file(f).flush() {
        ffi::SQLITE_OK => shim::x_unlock(f, lock),
        rc => rc,
    }
}

unsafe extern "C" fn x_file_control(
    f: *mut ffi::sqlite3_file,
    op: c_int,
    arg: *mut c_void,
) -> c_int {
    if op == FCNTL_GATHER {
        let file = file(f);
        if file.wal {
            return ffi::SQLITE_MISUSE;
        }
        file.gather_db = true;
        return ffi::SQLITE_OK;
    }
    shim::x_file_control(f, op, arg)
}

unsafe extern "C" fn x_fetch(
    f: *mut ffi::sqlite3_file,
    off: ffi::sqlite3_int64,
    amt: c_int,
    out: *mut *mut c_void,
) -> c_int {
    match file(f).flush() {
        ffi::SQLITE_OK => shim::x_fetch(f, off, amt, out),
        rc => rc,
    }
}

unsafe extern "C" fn x_truncate(f: *mut ffi::sqlite3_file, size: ffi::sqlite3_int64) -> c_int {
    match file(f).flush() {
        ffi::SQLITE_OK => shim::x_truncate(f, size),
        rc => rc,
    }
}

unsafe extern "C" fn x_sync(f: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    match file(f).flush() {
        ffi::SQLITE_OK => {
            // Timed for the latency monitor's `fsync` event (see crate::timing).
            let started = std::time::Instant::now();
            let rc = shim::x_sync(f, flags);
            crate::timing::note_sync(started.elapsed());
            rc
        }
        rc => rc,
    }
}

unsafe extern "C" fn x_file_size(f: *mut ffi::sqlite3_file, out: *mut ffi::sqlite3_int64) -> c_int {
    match file(f).flush() {
        ffi::SQLITE_OK => shim::x_file_size(f, out),
        rc => rc,
    }
}

unsafe extern "C" fn x_shm_map(
    f: *mut ffi::sqlite3_file,
    region: c_int,
    size: c_int,
    extend: c_int,
    out: *mut *mut c_void,
) -> c_int {
    let rc = shim::x_shm_map(f, region, size, extend, out);
    if rc == ffi::SQLITE_OK && region == 0 && !(*out).is_null() {
        file(f).shm = (*out).cast::<u8>().cast_const();
    }
    rc
}

unsafe extern "C" fn x_shm_unmap(f: *mut ffi::sqlite3_file, delete: c_int) -> c_int {
    file(f).shm = std::ptr::null();
    shim::x_shm_unmap(f, delete)
}

unsafe extern "C" fn x_shm_lock(
    f: *mut ffi::sqlite3_file,
    off: c_int,
    n: c_int,
    flags: c_int,
) -> c_int {
    const LOCK_EXCLUSIVE: c_int = ffi::SQLITE_SHM_LOCK | ffi::SQLITE_SHM_EXCLUSIVE;
    const UNLOCK_EXCLUSIVE: c_int = ffi::SQLITE_SHM_UNLOCK | ffi::SQLITE_SHM_EXCLUSIVE;
    const LOCK_SHARED: c_int = ffi::SQLITE_SHM_LOCK | ffi::SQLITE_SHM_SHARED;
    let (log, shm) = {
        let file = file(f);
        (file.log.clone(), file.shm)
    };
    let Some(log) = log.filter(|_| !shm.is_null() && n == 1) else {
        return shim::x_shm_lock(f, off, n, flags);
    };
    // The transaction is over before the lock goes: once it has, another may register frames.
    if (flags, off) == (UNLOCK_EXCLUSIVE, shim::WAL_WRITE_LOCK) {
        log.write_unlocked();
    }
    let rc = shim::x_shm_lock(f, off, n, flags);
    if rc == ffi::SQLITE_OK {
        match (flags, off) {
            (LOCK_EXCLUSIVE, shim::WAL_WRITE_LOCK) => log.write_locked(IndexHeader::read(shm)),
            (LOCK_SHARED, r) if shim::WAL_READ_LOCKS.contains(&r) => {
                log.read_locked(IndexHeader::read(shm))
            }
            _ => {}
        }
    }
    rc
}

#[cfg(test)]
mod tests {
    use rusqlite::{Connection, OpenFlags};
    use std::cell::Cell;

    thread_local! {
        /// Writes the shim made to real WAL files on this thread (each test runs on its own).
        pub(super) static REAL_WAL_WRITES: Cell<u64> = const { Cell::new(0) };
    }

    fn open(uri: &str) -> Connection {
        super::install();
        let c = Connection::open_with_flags(
            uri,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_URI,
        )
        .unwrap();
        c.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
            .unwrap();
        c.execute_batch("PRAGMA wal_autocheckpoint=0").unwrap();
        c
    }

    /// A database file with its writes gathered (an import's staging file: no journal, locked
    /// exclusively, a small cache that spills): what the connection reads back after commits
    /// and spills is what it wrote, and so is the file once closed.
    #[test]
    fn a_gathered_database_file_reads_back_what_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bulk.db");
        super::install();
        let w = Connection::open(&path).unwrap();
        w.execute_batch(
            "PRAGMA page_size=2048; PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=OFF;
             PRAGMA synchronous=OFF; PRAGMA mmap_size=0; PRAGMA cache_size=20",
        )
        .unwrap();
        super::gather_database_writes(&w).unwrap();
        w.execute_batch("CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)")
            .unwrap();
        for round in 0..2 {
            w.execute_batch("BEGIN").unwrap();
            for i in 0..1000 {
                w.execute(
                    "INSERT INTO t VALUES (?1, zeroblob(1000))",
                    [round * 1000 + i],
                )
                .unwrap();
            }
            w.execute_batch("COMMIT").unwrap();
            assert_eq!(count(&w), (round + 1) * 1000);
        }
        intact(&w);
        drop(w);
        let r = Connection::open(&path).unwrap();
        assert_eq!(count(&r), 2000);
        intact(&r);
    }

    fn count(c: &Connection) -> i64 {
        c.query_row("SELECT count(*), sum(length(v)) FROM t", [], |r| r.get(0))
            .unwrap()
    }

    fn intact(c: &Connection) {
        let ok: String = c
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(ok, "ok");
    }

    /// Another connection sees each commit as soon as it returns: small ones, one larger than
    /// the unix VFS writes in a call, one larger than what is gathered at once, and one that
    /// spilled pages before rolling back; the file is whole when opened again.
    fn commits_reach_the_file(uri: &str, sync: &str) {
        let w = open(uri);
        w.execute_batch(&format!(
            "PRAGMA synchronous={sync}; CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)"
        ))
        .unwrap();
        let r = open(uri);
        let mut expected = 0;
        for (rows, size) in [(1, 10), (3, 5000), (200, 1000), (3000, 2000)] {
            w.execute_batch("BEGIN").unwrap();
            for _ in 0..rows {
                w.execute("INSERT INTO t (v) VALUES (randomblob(?1))", [size])
                    .unwrap();
            }
            w.execute_batch("COMMIT").unwrap();
            expected += rows;
            assert_eq!(count(&r), expected);
        }
        // A transaction too large for the page cache writes frames before it commits; rolled
        // back, they must not count.
        w.execute_batch("PRAGMA cache_size=20; BEGIN").unwrap();
        for _ in 0..500 {
            w.execute("INSERT INTO t (v) VALUES (randomblob(3000))", [])
                .unwrap();
        }
        w.execute_batch("ROLLBACK").unwrap();
        w.execute("INSERT INTO t (v) VALUES (randomblob(3000))", [])
            .unwrap();
        expected += 1;
        assert_eq!(count(&r), expected);
        assert_eq!(count(&w), expected);
        intact(&r);
        drop(r);
        drop(w);
        let again = open(uri);
        assert_eq!(count(&again), expected);
        intact(&again);
    }

    #[test]
    fn commits_reach_the_file_when_gathered() {
        let dir = tempfile::tempdir().unwrap();
        let uri = format!("file:{}", dir.path().join("g.db").display());
        commits_reach_the_file(&uri, "NORMAL");
    }

    /// Without power-safe overwrites SQLite pads a synced commit to a sector with copies of its
    /// commit frame: those reach the file too.
    #[test]
    fn commits_reach_the_file_when_padded_to_a_sector() {
        let dir = tempfile::tempdir().unwrap();
        let uri = format!("file:{}?psow=0", dir.path().join("p.db").display());
        commits_reach_the_file(&uri, "FULL");
    }

    /// A transaction that writes one page (an embedded SET) is one frame, and the frame is one
    /// write to the file: its header and its page go together, as a longer transaction's do.
    /// (Each commit frame after the first used to be taken for a padding frame and written in
    /// two calls.)
    #[test]
    fn a_one_frame_commit_is_one_write() {
        let dir = tempfile::tempdir().unwrap();
        let uri = format!("file:{}", dir.path().join("one.db").display());
        let w = open(&uri);
        w.execute_batch(
            "PRAGMA synchronous=NORMAL; CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB);
             INSERT INTO t (k, v) VALUES (1, x'00')",
        )
        .unwrap();
        let before = REAL_WAL_WRITES.with(Cell::get);
        for i in 0..100 {
            w.execute("UPDATE t SET v = ?1 WHERE k = 1", [i]).unwrap();
        }
        assert_eq!(REAL_WAL_WRITES.with(Cell::get) - before, 100);
        let r = open(&uri);
        let v: i64 = r
            .query_row("SELECT v FROM t WHERE k = 1", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, 99);
        intact(&r);
    }
}
