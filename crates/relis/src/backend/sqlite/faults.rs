//! Storage faults on demand, for tests: an SQLite VFS shim that passes everything through to
//! the real VFS, except that while a fault is armed for a directory, writes (or syncs) of the
//! database, WAL and journal files in it fail as a full disk or a failing device would make
//! them fail: `SQLITE_FULL` (what SQLite's unix VFS returns on `ENOSPC`), `SQLITE_IOERR_WRITE`,
//! `SQLITE_IOERR_FSYNC`; or taking the WAL's write lock fails (`SQLITE_IOERR_LOCK`), so no write
//! transaction can begin. Reads are never touched, so what a test sees is the engine's own
//! handling of a commit that cannot reach the disk.
//!
//! A sibling of [`crate::backend::sqlite::powercut`]'s shim, for the same reason: a size-limited filesystem needs
//! root to mount, a VFS does not. [`install`] makes it the process's default VFS (over
//! whatever was the default); it must run before the databases to be tested open. Nothing in
//! the engine installs it by itself.

use crate::backend::sqlite::shim::{self, Head};
use parking_lot::Mutex;
use rusqlite::ffi;
use std::ffi::{c_int, c_void, CStr};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

/// A storage fault to inject.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Every write fails with `SQLITE_FULL`, as `ENOSPC` does on a full disk (on a
    /// copy-on-write filesystem even an overwrite needs a free block).
    DiskFull,
    /// Every write fails with `SQLITE_IOERR_WRITE` (`EIO`: a failing device).
    WriteError,
    /// Every sync fails with `SQLITE_IOERR_FSYNC`; writes succeed.
    SyncError,
    /// Taking the WAL's write lock (what `BEGIN IMMEDIATE` does) fails with `SQLITE_IOERR_LOCK`,
    /// as a failing device or a broken shared-memory file would make it fail: no write
    /// transaction can begin. Everything else works.
    LockError,
}

/// Armed faults by directory (as a path prefix); the atomic spares a lock when none is.
static ARMED: Mutex<Vec<(String, Fault)>> = Mutex::new(Vec::new());
static ANY_ARMED: AtomicBool = AtomicBool::new(false);
static INJECTED: AtomicU64 = AtomicU64::new(0);

/// Arms `fault` for the files under `dir` (`None` clears it): from now on their writes or
/// syncs fail, whichever connection makes them.
pub fn set(dir: &Path, fault: Option<Fault>) {
    let key = dir.display().to_string();
    let mut armed = ARMED.lock();
    armed.retain(|(d, _)| *d != key);
    if let Some(f) = fault {
        armed.push((key, f));
    }
    ANY_ARMED.store(!armed.is_empty(), Ordering::SeqCst);
}

/// How many operations have failed by injection so far (process-wide): lets a test show that
/// its fault was actually hit.
pub fn injected() -> u64 {
    INJECTED.load(Ordering::SeqCst)
}

/// The fault armed for the file named `name`, if any.
fn fault_for(name: &str) -> Option<Fault> {
    if !ANY_ARMED.load(Ordering::SeqCst) {
        return None;
    }
    ARMED
        .lock()
        .iter()
        .find(|(d, _)| name.starts_with(d.as_str()))
        .map(|(_, f)| *f)
}

/// Makes the shim the process's default SQLite VFS; idempotent. Databases opened afterwards
/// go through it.
pub fn install() {
    static DONE: OnceLock<bool> = OnceLock::new();
    // SAFETY: x_open makes `File`s, which start with a Head.
    DONE.get_or_init(|| unsafe {
        shim::register(c"relis-faults", std::mem::size_of::<File>(), x_open, None)
    });
}

/// Our file: the shim head, then the file's name (for the prefix test; `None` for files
/// faults never apply to, such as temporary files).
#[repr(C)]
struct File {
    head: Head,
    name: Option<String>,
}

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    xClose: Some(x_close),
    xWrite: Some(x_write),
    xSync: Some(x_sync),
    xShmLock: Some(x_shm_lock),
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
    let durable = shim::holds_data(flags);
    let name =
        (durable && !name.is_null()).then(|| CStr::from_ptr(name).to_string_lossy().into_owned());
    std::ptr::write(
        file.cast::<File>(),
        File {
            head: Head::new(&METHODS, real),
            name,
        },
    );
    ffi::SQLITE_OK
}

/// The error to return instead of running `op` on `f`, if a fault applies.
fn injected_error(f: &File, sync: bool) -> Option<c_int> {
    let rc = match (fault_for(f.name.as_deref()?)?, sync) {
        (Fault::DiskFull, false) => ffi::SQLITE_FULL,
        (Fault::WriteError, false) => ffi::SQLITE_IOERR_WRITE,
        (Fault::SyncError, true) => ffi::SQLITE_IOERR_FSYNC,
        _ => return None,
    };
    INJECTED.fetch_add(1, Ordering::SeqCst);
    Some(rc)
}

unsafe extern "C" fn x_shm_lock(
    f: *mut ffi::sqlite3_file,
    off: c_int,
    n: c_int,
    flags: c_int,
) -> c_int {
    let write_lock =
        off == shim::WAL_WRITE_LOCK && flags == ffi::SQLITE_SHM_LOCK | ffi::SQLITE_SHM_EXCLUSIVE;
    let armed = write_lock && file(f).name.as_deref().and_then(fault_for) == Some(Fault::LockError);
    if !armed {
        return shim::x_shm_lock(f, off, n, flags);
    }
    INJECTED.fetch_add(1, Ordering::SeqCst);
    ffi::SQLITE_IOERR_LOCK
}

unsafe fn file<'a>(file: *mut ffi::sqlite3_file) -> &'a File {
    &*file.cast::<File>()
}

unsafe extern "C" fn x_close(file: *mut ffi::sqlite3_file) -> c_int {
    let f = file.cast::<File>();
    let rc = shim::close_real((*f).head.real);
    std::ptr::drop_in_place(&mut (*f).name);
    rc
}

unsafe extern "C" fn x_write(
    f: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    match injected_error(file(f), false) {
        Some(rc) => rc,
        None => shim::x_write(f, buf, amt, off),
    }
}

unsafe extern "C" fn x_sync(f: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    match injected_error(file(f), true) {
        Some(rc) => rc,
        None => shim::x_sync(f, flags),
    }
}
