//! What Relis's SQLite VFS shims share ([`crate::backend::sqlite::walwrite`], and the test shims
//! [`crate::backend::sqlite::faults`] and [`crate::backend::sqlite::powercut`]): registering one over the default VFS, opening the
//! real file under the shim's own, and the calls a shim passes through unchanged.
//!
//! A shim's file struct is `#[repr(C)]` and starts with a [`Head`]: SQLite's base struct, then
//! the real file. The pass-through functions below only read that head, so a shim's method table
//! names them for every call it does not change.

use rusqlite::ffi;
use std::ffi::{c_char, c_int, c_void, CStr};

/// The WAL index's locks (`xShmLock` offsets): the write lock, then, after the checkpoint and
/// recovery locks, the read marks (SQLite's `WAL_WRITE_LOCK`, and `WAL_READ_LOCK(0)` to `WAL_READ_LOCK(4)`).
pub(crate) const WAL_WRITE_LOCK: c_int = 0;
pub(crate) const WAL_READ_LOCKS: std::ops::Range<c_int> = 3..8;

/// The start of every shim's file struct.
#[repr(C)]
pub(crate) struct Head {
    pub base: ffi::sqlite3_file,
    /// The real VFS's file, allocated by [`open_real`] and freed by [`close_real`].
    pub real: *mut ffi::sqlite3_file,
}

impl Head {
    pub fn new(methods: &'static ffi::sqlite3_io_methods, real: *mut ffi::sqlite3_file) -> Head {
        Head {
            base: ffi::sqlite3_file { pMethods: methods },
            real,
        }
    }
}

type XOpen = unsafe extern "C" fn(
    *mut ffi::sqlite3_vfs,
    ffi::sqlite3_filename,
    *mut ffi::sqlite3_file,
    c_int,
    *mut c_int,
) -> c_int;

type XDelete = unsafe extern "C" fn(*mut ffi::sqlite3_vfs, *const c_char, c_int) -> c_int;

/// Registers a VFS named `name` as the process's default, passing everything to the current
/// default except opening files (`open`, whose files are `os_file` bytes) and, if given,
/// deleting them. The struct is leaked on purpose: SQLite keeps it for the rest of the process.
///
/// # Safety
/// `open` must make files that start with a [`Head`] and fit in `os_file` bytes.
pub(crate) unsafe fn register(
    name: &'static CStr,
    os_file: usize,
    open: XOpen,
    delete: Option<XDelete>,
) -> bool {
    let real = ffi::sqlite3_vfs_find(std::ptr::null());
    if real.is_null() {
        return false;
    }
    let mut vfs: ffi::sqlite3_vfs = *real;
    vfs.zName = name.as_ptr();
    vfs.pAppData = real.cast();
    vfs.szOsFile = os_file as c_int;
    vfs.pNext = std::ptr::null_mut();
    vfs.xOpen = Some(open);
    if delete.is_some() {
        vfs.xDelete = delete;
    }
    let vfs = Box::into_raw(Box::new(vfs));
    ffi::sqlite3_vfs_register(vfs, 1) == ffi::SQLITE_OK
}

/// The VFS a shim registered by [`register`] passes to.
///
/// # Safety
/// `vfs` must be one [`register`] made.
pub(crate) unsafe fn real_vfs(vfs: *mut ffi::sqlite3_vfs) -> *mut ffi::sqlite3_vfs {
    (*vfs).pAppData.cast()
}

/// Opens the real file for a shim's `xOpen`; on failure, `file` is marked unopened (SQLite
/// then calls nothing on it) and the error returned.
///
/// # Safety
/// The arguments of an `xOpen` call to a VFS made by [`register`].
pub(crate) unsafe fn open_real(
    vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> Result<*mut ffi::sqlite3_file, c_int> {
    let real_vfs = real_vfs(vfs);
    let real = ffi::sqlite3_malloc((*real_vfs).szOsFile).cast::<ffi::sqlite3_file>();
    if real.is_null() {
        (*file).pMethods = std::ptr::null();
        return Err(ffi::SQLITE_NOMEM);
    }
    std::ptr::write_bytes(real.cast::<u8>(), 0, (*real_vfs).szOsFile as usize);
    let rc = ((*real_vfs).xOpen.unwrap())(real_vfs, name, real, flags, out_flags);
    if rc != ffi::SQLITE_OK {
        ffi::sqlite3_free(real.cast());
        (*file).pMethods = std::ptr::null();
        return Err(rc);
    }
    Ok(real)
}

/// Whether an `xOpen` with `flags` opens one of the files that hold the data (the database, its
/// WAL or its rollback journal), as opposed to temporary files. (The test shims' question.)
#[cfg(feature = "test-shims")]
pub(crate) fn holds_data(flags: c_int) -> bool {
    flags & (ffi::SQLITE_OPEN_MAIN_DB | ffi::SQLITE_OPEN_WAL | ffi::SQLITE_OPEN_MAIN_JOURNAL) != 0
}

/// Closes and frees a real file [`open_real`] opened.
///
/// # Safety
/// `real` came from [`open_real`] and is not used again.
pub(crate) unsafe fn close_real(real: *mut ffi::sqlite3_file) -> c_int {
    let rc = (methods(real).xClose.unwrap())(real);
    ffi::sqlite3_free(real.cast());
    rc
}

/// The real file under a shim's file.
///
/// # Safety
/// `file` must start with a [`Head`].
pub(crate) unsafe fn real(file: *mut ffi::sqlite3_file) -> *mut ffi::sqlite3_file {
    (*file.cast::<Head>()).real
}

/// A real file's methods.
///
/// # Safety
/// `real` must be an open file.
pub(crate) unsafe fn methods(real: *mut ffi::sqlite3_file) -> &'static ffi::sqlite3_io_methods {
    &*(*real).pMethods
}

/// Every call passed through: a shim's table is this with its own calls put in
/// (`sqlite3_io_methods { xWrite: Some(x_write), ..shim::PASS }`). Its `xClose` frees only
/// the real file, so a shim with fields to drop has its own.
pub(crate) const PASS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
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

pub(crate) unsafe extern "C" fn x_close(f: *mut ffi::sqlite3_file) -> c_int {
    close_real(real(f))
}

pub(crate) unsafe extern "C" fn x_read(
    f: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    let r = real(f);
    (methods(r).xRead.unwrap())(r, buf, amt, off)
}

pub(crate) unsafe extern "C" fn x_write(
    f: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    let r = real(f);
    (methods(r).xWrite.unwrap())(r, buf, amt, off)
}

pub(crate) unsafe extern "C" fn x_truncate(
    f: *mut ffi::sqlite3_file,
    size: ffi::sqlite3_int64,
) -> c_int {
    let r = real(f);
    (methods(r).xTruncate.unwrap())(r, size)
}

pub(crate) unsafe extern "C" fn x_sync(f: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    let r = real(f);
    (methods(r).xSync.unwrap())(r, flags)
}

pub(crate) unsafe extern "C" fn x_file_size(
    f: *mut ffi::sqlite3_file,
    out: *mut ffi::sqlite3_int64,
) -> c_int {
    let r = real(f);
    (methods(r).xFileSize.unwrap())(r, out)
}

pub(crate) unsafe extern "C" fn x_lock(f: *mut ffi::sqlite3_file, l: c_int) -> c_int {
    let r = real(f);
    (methods(r).xLock.unwrap())(r, l)
}

pub(crate) unsafe extern "C" fn x_unlock(f: *mut ffi::sqlite3_file, l: c_int) -> c_int {
    let r = real(f);
    (methods(r).xUnlock.unwrap())(r, l)
}

pub(crate) unsafe extern "C" fn x_check_reserved_lock(
    f: *mut ffi::sqlite3_file,
    out: *mut c_int,
) -> c_int {
    let r = real(f);
    (methods(r).xCheckReservedLock.unwrap())(r, out)
}

pub(crate) unsafe extern "C" fn x_file_control(
    f: *mut ffi::sqlite3_file,
    op: c_int,
    arg: *mut c_void,
) -> c_int {
    let r = real(f);
    (methods(r).xFileControl.unwrap())(r, op, arg)
}

pub(crate) unsafe extern "C" fn x_sector_size(f: *mut ffi::sqlite3_file) -> c_int {
    let r = real(f);
    (methods(r).xSectorSize.unwrap())(r)
}

pub(crate) unsafe extern "C" fn x_device_characteristics(f: *mut ffi::sqlite3_file) -> c_int {
    let r = real(f);
    (methods(r).xDeviceCharacteristics.unwrap())(r)
}

pub(crate) unsafe extern "C" fn x_shm_map(
    f: *mut ffi::sqlite3_file,
    pg: c_int,
    sz: c_int,
    extend: c_int,
    pp: *mut *mut c_void,
) -> c_int {
    let r = real(f);
    (methods(r).xShmMap.unwrap())(r, pg, sz, extend, pp)
}

pub(crate) unsafe extern "C" fn x_shm_lock(
    f: *mut ffi::sqlite3_file,
    off: c_int,
    n: c_int,
    flags: c_int,
) -> c_int {
    let r = real(f);
    (methods(r).xShmLock.unwrap())(r, off, n, flags)
}

pub(crate) unsafe extern "C" fn x_shm_barrier(f: *mut ffi::sqlite3_file) {
    let r = real(f);
    (methods(r).xShmBarrier.unwrap())(r)
}

pub(crate) unsafe extern "C" fn x_shm_unmap(f: *mut ffi::sqlite3_file, delete: c_int) -> c_int {
    let r = real(f);
    (methods(r).xShmUnmap.unwrap())(r, delete)
}

pub(crate) unsafe extern "C" fn x_fetch(
    f: *mut ffi::sqlite3_file,
    off: ffi::sqlite3_int64,
    amt: c_int,
    pp: *mut *mut c_void,
) -> c_int {
    let r = real(f);
    let m = methods(r);
    match m.xFetch {
        Some(fetch) if m.iVersion >= 3 => fetch(r, off, amt, pp),
        _ => {
            *pp = std::ptr::null_mut();
            ffi::SQLITE_OK
        }
    }
}

pub(crate) unsafe extern "C" fn x_unfetch(
    f: *mut ffi::sqlite3_file,
    off: ffi::sqlite3_int64,
    p: *mut c_void,
) -> c_int {
    let r = real(f);
    let m = methods(r);
    match m.xUnfetch {
        Some(unfetch) if m.iVersion >= 3 => unfetch(r, off, p),
        _ => ffi::SQLITE_OK,
    }
}
