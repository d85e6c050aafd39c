//! Storage faults on demand, for tests: an SQLite VFS shim that passes everything through to
//! the real VFS, except that while a fault is armed for a directory, writes (or syncs) of the
//! database, WAL and journal files in it fail as a full disk or a failing device would make
//! them fail: `SQLITE_FULL` (what SQLite's unix VFS returns on `ENOSPC`), `SQLITE_IOERR_WRITE`,
//! `SQLITE_IOERR_FSYNC`. Reads are never touched, so what a test sees is the engine's own
//! handling of a commit that cannot reach the disk.
//!
//! A sibling of [`crate::powercut`]'s shim, for the same reason: a size-limited filesystem needs
//! root to mount, a VFS does not. [`install`] makes it the process's default VFS (over
//! whatever was the default); it must run before the databases to be tested open. Nothing in
//! the engine installs it by itself.

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
    DONE.get_or_init(|| {
        // SAFETY: plain FFI on SQLite's VFS list; the structs registered live for the rest of
        // the process (leaked on purpose).
        unsafe {
            let real = ffi::sqlite3_vfs_find(std::ptr::null());
            if real.is_null() {
                return false;
            }
            let mut vfs: ffi::sqlite3_vfs = *real;
            vfs.zName = c"relis-faults".as_ptr();
            vfs.pAppData = real.cast();
            vfs.szOsFile = std::mem::size_of::<File>() as c_int;
            vfs.pNext = std::ptr::null_mut();
            vfs.xOpen = Some(x_open);
            let vfs = Box::into_raw(Box::new(vfs));
            ffi::sqlite3_vfs_register(vfs, 1) == ffi::SQLITE_OK
        }
    });
}

/// Our file: SQLite's base struct first, then the real file and its name (for the prefix test;
/// `None` for files faults never apply to, such as temporary files).
#[repr(C)]
struct File {
    base: ffi::sqlite3_file,
    real: *mut ffi::sqlite3_file,
    name: Option<String>,
}

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(x_close),
    xRead: Some(x_read),
    xWrite: Some(x_write),
    xTruncate: Some(x_truncate),
    xSync: Some(x_sync),
    xFileSize: Some(x_file_size),
    xLock: Some(x_lock),
    xUnlock: Some(x_unlock),
    xCheckReservedLock: Some(x_check_reserved_lock),
    xFileControl: Some(x_file_control),
    xSectorSize: Some(x_sector_size),
    xDeviceCharacteristics: Some(x_device_characteristics),
    xShmMap: Some(x_shm_map),
    xShmLock: Some(x_shm_lock),
    xShmBarrier: Some(x_shm_barrier),
    xShmUnmap: Some(x_shm_unmap),
    xFetch: Some(x_fetch),
    xUnfetch: Some(x_unfetch),
};

unsafe extern "C" fn x_open(
    vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let real_vfs: *mut ffi::sqlite3_vfs = (*vfs).pAppData.cast();
    let f = file.cast::<File>();
    let real = ffi::sqlite3_malloc((*real_vfs).szOsFile).cast::<ffi::sqlite3_file>();
    if real.is_null() {
        return ffi::SQLITE_NOMEM;
    }
    std::ptr::write_bytes(real.cast::<u8>(), 0, (*real_vfs).szOsFile as usize);
    let rc = ((*real_vfs).xOpen.unwrap())(real_vfs, name, real, flags, out_flags);
    if rc != ffi::SQLITE_OK {
        ffi::sqlite3_free(real.cast());
        (*f).base.pMethods = std::ptr::null();
        return rc;
    }
    let durable = flags
        & (ffi::SQLITE_OPEN_MAIN_DB | ffi::SQLITE_OPEN_WAL | ffi::SQLITE_OPEN_MAIN_JOURNAL)
        != 0;
    let name =
        (durable && !name.is_null()).then(|| CStr::from_ptr(name).to_string_lossy().into_owned());
    std::ptr::write(
        f,
        File {
            base: ffi::sqlite3_file { pMethods: &METHODS },
            real,
            name,
        },
    );
    ffi::SQLITE_OK
}

unsafe fn file<'a>(file: *mut ffi::sqlite3_file) -> &'a File {
    &*file.cast::<File>()
}

unsafe fn methods(real: *mut ffi::sqlite3_file) -> &'static ffi::sqlite3_io_methods {
    &*(*real).pMethods
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

unsafe extern "C" fn x_close(file: *mut ffi::sqlite3_file) -> c_int {
    let f = file.cast::<File>();
    let real = (*f).real;
    let rc = (methods(real).xClose.unwrap())(real);
    ffi::sqlite3_free(real.cast());
    std::ptr::drop_in_place(&mut (*f).name);
    rc
}

unsafe extern "C" fn x_read(
    f: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    let r = file(f).real;
    (methods(r).xRead.unwrap())(r, buf, amt, off)
}

unsafe extern "C" fn x_write(
    f: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    if let Some(rc) = injected_error(file(f), false) {
        return rc;
    }
    let r = file(f).real;
    (methods(r).xWrite.unwrap())(r, buf, amt, off)
}

unsafe extern "C" fn x_truncate(f: *mut ffi::sqlite3_file, size: ffi::sqlite3_int64) -> c_int {
    let r = file(f).real;
    (methods(r).xTruncate.unwrap())(r, size)
}

unsafe extern "C" fn x_sync(f: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    if let Some(rc) = injected_error(file(f), true) {
        return rc;
    }
    let r = file(f).real;
    (methods(r).xSync.unwrap())(r, flags)
}

unsafe extern "C" fn x_file_size(f: *mut ffi::sqlite3_file, out: *mut ffi::sqlite3_int64) -> c_int {
    let r = file(f).real;
    (methods(r).xFileSize.unwrap())(r, out)
}

unsafe extern "C" fn x_lock(f: *mut ffi::sqlite3_file, l: c_int) -> c_int {
    let r = file(f).real;
    (methods(r).xLock.unwrap())(r, l)
}

unsafe extern "C" fn x_unlock(f: *mut ffi::sqlite3_file, l: c_int) -> c_int {
    let r = file(f).real;
    (methods(r).xUnlock.unwrap())(r, l)
}

unsafe extern "C" fn x_check_reserved_lock(f: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    let r = file(f).real;
    (methods(r).xCheckReservedLock.unwrap())(r, out)
}

unsafe extern "C" fn x_file_control(
    f: *mut ffi::sqlite3_file,
    op: c_int,
    arg: *mut c_void,
) -> c_int {
    let r = file(f).real;
    (methods(r).xFileControl.unwrap())(r, op, arg)
}

unsafe extern "C" fn x_sector_size(f: *mut ffi::sqlite3_file) -> c_int {
    let r = file(f).real;
    (methods(r).xSectorSize.unwrap())(r)
}

unsafe extern "C" fn x_device_characteristics(f: *mut ffi::sqlite3_file) -> c_int {
    let r = file(f).real;
    (methods(r).xDeviceCharacteristics.unwrap())(r)
}

unsafe extern "C" fn x_shm_map(
    f: *mut ffi::sqlite3_file,
    pg: c_int,
    sz: c_int,
    extend: c_int,
    pp: *mut *mut c_void,
) -> c_int {
    let r = file(f).real;
    (methods(r).xShmMap.unwrap())(r, pg, sz, extend, pp)
}

unsafe extern "C" fn x_shm_lock(
    f: *mut ffi::sqlite3_file,
    off: c_int,
    n: c_int,
    flags: c_int,
) -> c_int {
    let r = file(f).real;
    (methods(r).xShmLock.unwrap())(r, off, n, flags)
}

unsafe extern "C" fn x_shm_barrier(f: *mut ffi::sqlite3_file) {
    let r = file(f).real;
    (methods(r).xShmBarrier.unwrap())(r)
}

unsafe extern "C" fn x_shm_unmap(f: *mut ffi::sqlite3_file, delete: c_int) -> c_int {
    let r = file(f).real;
    (methods(r).xShmUnmap.unwrap())(r, delete)
}

unsafe extern "C" fn x_fetch(
    f: *mut ffi::sqlite3_file,
    off: ffi::sqlite3_int64,
    amt: c_int,
    pp: *mut *mut c_void,
) -> c_int {
    let r = file(f).real;
    let m = methods(r);
    match m.xFetch {
        Some(fetch) if m.iVersion >= 3 => fetch(r, off, amt, pp),
        _ => {
            *pp = std::ptr::null_mut();
            ffi::SQLITE_OK
        }
    }
}

unsafe extern "C" fn x_unfetch(
    f: *mut ffi::sqlite3_file,
    off: ffi::sqlite3_int64,
    p: *mut c_void,
) -> c_int {
    let r = file(f).real;
    let m = methods(r);
    match m.xUnfetch {
        Some(unfetch) if m.iVersion >= 3 => unfetch(r, off, p),
        _ => ffi::SQLITE_OK,
    }
}
