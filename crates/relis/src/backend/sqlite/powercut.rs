//! A simulated power cut, for the crash-safety harness: an SQLite VFS that keeps every write to
//! a database or WAL file in this process's memory until SQLite syncs that file, and only then
//! writes it (and fsyncs it) to the real file. The process's memory plays the part of the
//! operating system's page cache, so killing the process with SIGKILL loses exactly what a power
//! cut would lose in the harshest case: everything not yet synced. (A real cut may keep some
//! unsynced writes, in any order; losing all of them is the case a "synced before acknowledged"
//! guarantee must survive. Directory entries are not simulated: a created file survives.)
//!
//! With `RELIS_SIMULATE_POWER_CUT=writeback`, half of the blocks written (chosen at random) also
//! reach the real file at once, unsynced, as a page cache's early write-back would: a cut then
//! leaves a random subset of the unsynced writes, out of order, rather than none.
//!
//! Enabled only when the environment variable `RELIS_SIMULATE_POWER_CUT` is set (to anything)
//! when the first database opens; it then becomes the process's default VFS, so every
//! connection — writer, readers, checkpointer — sees the same unsynced writes, as processes
//! sharing a page cache would. Reads are served from the pending writes first; memory-mapped
//! reads are turned off (the map would bypass them). Never use it outside tests: nothing is
//! durable until SQLite syncs, and pending writes are held in memory.

use crate::backend::sqlite::shim::{self, Head};
use parking_lot::Mutex;
use rusqlite::ffi;
use std::collections::{BTreeMap, HashMap};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// The environment variable that turns the simulation on.
pub const ENV: &str = "RELIS_SIMULATE_POWER_CUT";

const BLOCK: u64 = 4096;

/// One real file's writes since its last sync, shared by every connection that opened it.
struct Pending {
    /// Blocks written since the last sync (whole blocks: partly written ones were read first).
    blocks: BTreeMap<u64, Box<[u8]>>,
    /// The file's size as SQLite sees it.
    size: u64,
    /// The smallest size it had since the last sync: real bytes from here on are stale.
    floor: u64,
}

fn registry() -> &'static Mutex<HashMap<String, Arc<Mutex<Pending>>>> {
    static FILES: OnceLock<Mutex<HashMap<String, Arc<Mutex<Pending>>>>> = OnceLock::new();
    FILES.get_or_init(Default::default)
}

/// Our file: the shim head, then what is pending.
#[repr(C)]
struct File {
    head: Head,
    pending: Option<Arc<Mutex<Pending>>>,
}

/// Installs the VFS as the default if [`ENV`] is set; idempotent.
pub fn install_if_requested() {
    static DONE: OnceLock<bool> = OnceLock::new();
    DONE.get_or_init(|| {
        let Some(mode) = std::env::var_os(ENV) else {
            return false;
        };
        WRITEBACK.store(mode == "writeback", Ordering::Relaxed);
        // SAFETY: x_open makes `File`s, which start with a Head.
        unsafe {
            let size = std::mem::size_of::<File>();
            if !shim::register(c"relis-powercut", size, x_open, Some(x_delete)) {
                return false;
            }
            tracing::warn!("{ENV} is set: unsynced writes are kept in memory (test only)");
            true
        }
    });
}

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    // Version 2: shared memory (WAL) but no xFetch, so no memory-mapped reads.
    iVersion: 2,
    xClose: Some(x_close),
    xRead: Some(x_read),
    xWrite: Some(x_write),
    xTruncate: Some(x_truncate),
    xSync: Some(x_sync),
    xFileSize: Some(x_file_size),
    xFileControl: Some(x_file_control),
    xFetch: None,
    xUnfetch: None,
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
    let pending = if durable && !name.is_null() {
        let key = CStr::from_ptr(name).to_string_lossy().into_owned();
        let mut size: ffi::sqlite3_int64 = 0;
        ((*(*real).pMethods).xFileSize.unwrap())(real, &mut size);
        let p = registry()
            .lock()
            .entry(key)
            .or_insert_with(|| {
                Arc::new(Mutex::new(Pending {
                    blocks: BTreeMap::new(),
                    size: size as u64,
                    floor: size as u64,
                }))
            })
            .clone();
        Some(p)
    } else {
        None
    };
    std::ptr::write(
        file.cast::<File>(),
        File {
            head: Head::new(&METHODS, real),
            pending,
        },
    );
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_delete(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    sync_dir: c_int,
) -> c_int {
    if !name.is_null() {
        let key = CStr::from_ptr(name).to_string_lossy().into_owned();
        registry().lock().remove(&key);
    }
    let real_vfs = shim::real_vfs(vfs);
    ((*real_vfs).xDelete.unwrap())(real_vfs, name, sync_dir)
}

unsafe extern "C" fn x_close(file: *mut ffi::sqlite3_file) -> c_int {
    let f = file.cast::<File>();
    let rc = shim::close_real((*f).head.real);
    // Drops our Arc; what is pending stays with the other connections (or for the next open).
    std::ptr::drop_in_place(&mut (*f).pending);
    rc
}

/// Reads `buf.len()` real bytes at `off`, zero-filling past the real end.
unsafe fn read_real(real: *mut ffi::sqlite3_file, buf: &mut [u8], off: u64) -> c_int {
    let rc = (shim::methods(real).xRead.unwrap())(
        real,
        buf.as_mut_ptr().cast(),
        buf.len() as c_int,
        off as i64,
    );
    if rc == ffi::SQLITE_IOERR_SHORT_READ {
        ffi::SQLITE_OK // SQLite's unix VFS has zero-filled the rest
    } else {
        rc
    }
}

/// The block `b` as the file holds it now: pending, or real (stale bytes past the floor zeroed).
unsafe fn block(real: *mut ffi::sqlite3_file, p: &Pending, b: u64, out: &mut [u8]) -> c_int {
    if let Some(data) = p.blocks.get(&b) {
        out.copy_from_slice(data);
        return ffi::SQLITE_OK;
    }
    out.fill(0);
    let start = b * BLOCK;
    if start < p.floor {
        let n = (p.floor - start).min(BLOCK) as usize;
        return read_real(real, &mut out[..n], start);
    }
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    let f = &*file.cast::<File>();
    let Some(p) = &f.pending else {
        return shim::x_read(file, buf, amt, off);
    };
    let p = p.lock();
    let out = std::slice::from_raw_parts_mut(buf.cast::<u8>(), amt as usize);
    let (off, end) = (off as u64, off as u64 + amt as u64);
    let mut tmp = vec![0u8; BLOCK as usize];
    let mut pos = off;
    while pos < end {
        let b = pos / BLOCK;
        let rc = block(f.head.real, &p, b, &mut tmp);
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        let from = (pos - b * BLOCK) as usize;
        let n = ((BLOCK as usize) - from).min((end - pos) as usize);
        out[(pos - off) as usize..(pos - off) as usize + n].copy_from_slice(&tmp[from..from + n]);
        pos += n as u64;
    }
    if end > p.size {
        let valid = (p.size.saturating_sub(off) as usize).min(out.len());
        out[valid..].fill(0);
        return ffi::SQLITE_IOERR_SHORT_READ;
    }
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_write(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amt: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    let f = &*file.cast::<File>();
    let Some(p) = &f.pending else {
        return shim::x_write(file, buf, amt, off);
    };
    let mut p = p.lock();
    let data = std::slice::from_raw_parts(buf.cast::<u8>(), amt as usize);
    let (off, end) = (off as u64, off as u64 + amt as u64);
    let mut pos = off;
    while pos < end {
        let b = pos / BLOCK;
        if !p.blocks.contains_key(&b) {
            let mut tmp = vec![0u8; BLOCK as usize].into_boxed_slice();
            let rc = block(f.head.real, &p, b, &mut tmp);
            if rc != ffi::SQLITE_OK {
                return rc;
            }
            p.blocks.insert(b, tmp);
        }
        let from = (pos - b * BLOCK) as usize;
        let n = ((BLOCK as usize) - from).min((end - pos) as usize);
        let blk = p.blocks.get_mut(&b).unwrap();
        blk[from..from + n].copy_from_slice(&data[(pos - off) as usize..(pos - off) as usize + n]);
        pos += n as u64;
    }
    p.size = p.size.max(end);
    if WRITEBACK.load(Ordering::Relaxed) {
        // The page cache may write any dirty page back before a sync, in any order: half of the
        // blocks written reach the real file at once (still pending, so a sync writes them again).
        let m = shim::methods(f.head.real);
        for b in off / BLOCK..end.div_ceil(BLOCK) {
            if coin() {
                let start = b * BLOCK;
                let n = p.size.saturating_sub(start).min(BLOCK) as usize;
                let blk = &p.blocks[&b];
                let rc =
                    (m.xWrite.unwrap())(f.head.real, blk.as_ptr().cast(), n as c_int, start as i64);
                if rc != ffi::SQLITE_OK {
                    return rc;
                }
            }
        }
    }
    ffi::SQLITE_OK
}

/// Whether early write-back is simulated (`RELIS_SIMULATE_POWER_CUT=writeback`).
static WRITEBACK: AtomicBool = AtomicBool::new(false);

/// A fair coin (xorshift; quality is irrelevant, only that it is not always the same side).
fn coin() -> bool {
    static STATE: AtomicU64 = AtomicU64::new(0);
    let mut x = STATE.load(Ordering::Relaxed);
    if x == 0 {
        x = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
            | 1;
    }
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    STATE.store(x, Ordering::Relaxed);
    x & 1 == 1
}

unsafe extern "C" fn x_truncate(file: *mut ffi::sqlite3_file, size: ffi::sqlite3_int64) -> c_int {
    let f = &*file.cast::<File>();
    let Some(p) = &f.pending else {
        return shim::x_truncate(file, size);
    };
    let mut p = p.lock();
    let size = size as u64;
    p.size = size;
    p.floor = p.floor.min(size);
    // Pending blocks past the new end go; the one it cuts keeps only its head.
    let keep = size.div_ceil(BLOCK);
    p.blocks.retain(|&b, _| b < keep);
    let cut = (size % BLOCK) as usize;
    if let Some(blk) = p.blocks.get_mut(&(size / BLOCK)).filter(|_| cut > 0) {
        blk[cut..].fill(0);
    }
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    let f = &*file.cast::<File>();
    let real = f.head.real;
    if let Some(p) = &f.pending {
        let mut p = p.lock();
        let m = shim::methods(real);
        if p.floor < p.size || !p.blocks.is_empty() {
            let rc = (m.xTruncate.unwrap())(real, p.floor as i64);
            if rc != ffi::SQLITE_OK {
                return rc;
            }
        }
        let size = p.size;
        for (&b, data) in &p.blocks {
            let start = b * BLOCK;
            if start >= size {
                continue;
            }
            let n = (size - start).min(BLOCK) as usize;
            let rc = (m.xWrite.unwrap())(real, data.as_ptr().cast(), n as c_int, start as i64);
            if rc != ffi::SQLITE_OK {
                return rc;
            }
        }
        let mut real_size: ffi::sqlite3_int64 = 0;
        (m.xFileSize.unwrap())(real, &mut real_size);
        if real_size as u64 != size {
            let rc = (m.xTruncate.unwrap())(real, size as i64);
            if rc != ffi::SQLITE_OK {
                return rc;
            }
        }
        p.blocks.clear();
        p.floor = size;
    }
    (shim::methods(real).xSync.unwrap())(real, flags)
}

unsafe extern "C" fn x_file_size(
    file: *mut ffi::sqlite3_file,
    out: *mut ffi::sqlite3_int64,
) -> c_int {
    let f = &*file.cast::<File>();
    match &f.pending {
        Some(p) => {
            *out = p.lock().size as i64;
            ffi::SQLITE_OK
        }
        None => shim::x_file_size(file, out),
    }
}

unsafe extern "C" fn x_file_control(
    file: *mut ffi::sqlite3_file,
    op: c_int,
    arg: *mut c_void,
) -> c_int {
    // Size hints would grow the real file behind the pending writes' back; none are needed.
    if op == ffi::SQLITE_FCNTL_SIZE_HINT && (*file.cast::<File>()).pending.is_some() {
        return ffi::SQLITE_OK;
    }
    shim::x_file_control(file, op, arg)
}
