//! The WAL index's locks kept a little after SQLite lets them go, so a run of transactions
//! takes them from the OS once.
//!
//! A WAL-mode transaction takes and releases SQLite's WAL-index locks (byte-range locks on the
//! `-shm` file, `fcntl(F_SETLK)` on Linux): a writer's commit moves the read mark (an
//! exclusive lock on a read slot, its release, a shared lock), takes the write lock, releases
//! it and releases its read lock: six system calls, 0.77 us of CPU each here, half of an
//! embedded SET's time and a sixth of a lone server client's write (BENCHMARKS.md). SQLite's
//! unix VFS already keeps, within a process, which of its connections hold which lock; the OS
//! only hears of changes of what the process as a whole holds. This module sits under that,
//! where the VFS calls `fcntl` (through the pointer SQLite lets a program replace,
//! `xSetSystemCall`): when SQLite releases a lock byte, or downgrades it, the process keeps the
//! stronger lock for up to [`HOLD`]; when SQLite then asks for a lock the process still holds
//! (or a weaker one), it is granted without a call. A thread of this module gives the OS the
//! locks SQLite does not hold any more, [`HOLD`] after the first one was kept.
//!
//! Locks are kept only while no other process has the database open (each holds a shared
//! lock on the `-shm` file's "dead man switch" byte while it does, which `F_GETLK` shows), asked
//! when a file is first locked and again at each give-back. Another process that opens the file
//! then waits at most [`HOLD`] for a lock this one kept; from then on every request goes to the
//! OS, as without this module, until it is alone again (asked every [`RECHECK`] requests).
//! Keeping locks while another process is there would starve it under a steady load: its busy
//! handler retries now and then, and would find a lock free only between a give-back and this
//! process's next transaction. Whatever happens, the process never holds less than SQLite
//! believes: SQLite's own bookkeeping above this decides, within the process, which connection
//! may have a lock, and the answer to a lock the process does not hold comes from the OS.
//!
//! Locks are per process and per file: a lock is forgotten when its file descriptor is
//! closed (this module takes the VFS's `close` too), when the OS drops it. A descriptor seen
//! for the first time has unknown locks: its requests go to the OS until one of them says what
//! is held.

use parking_lot::{Condvar, Mutex};
use rusqlite::ffi;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// How long the process keeps a lock SQLite released, at most: how long another process that
/// opens the database may wait, once, before this one notices it and stops keeping locks
/// (SQLite's busy handler retries after 1, 3 and 8 ms). Each give-back costs a wake-up of the
/// module's thread and the calls that take the locks again: at 1 ms that thread took 0.4 us of
/// CPU per request under a server's SET load (`-c 10`), a third of what the locks saved.
pub const HOLD: Duration = Duration::from_millis(5);

/// The first lock byte of the `-shm` file (SQLite's `UNIX_SHM_BASE`): the write, checkpoint and
/// recovery locks, then the five read slots, one byte each. The byte after them (the
/// "dead man switch" that tells the first connection to open the file) is never kept.
const BASE: i64 = 120;
/// The lock bytes, [`BASE`] and the seven after it (`SQLITE_SHM_NLOCK`).
const SLOTS: usize = 8;
/// While another process has a file open, whether it still has is asked again every this many
/// requests (one more system call).
const RECHECK: u32 = 64;

/// A lock on one byte, weakest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Lock {
    Unlocked,
    Shared,
    Exclusive,
}

impl Lock {
    fn of(l_type: c_int) -> Option<Lock> {
        match l_type {
            t if t == libc::F_UNLCK as c_int => Some(Lock::Unlocked),
            t if t == libc::F_RDLCK as c_int => Some(Lock::Shared),
            t if t == libc::F_WRLCK as c_int => Some(Lock::Exclusive),
            _ => None,
        }
    }

    fn l_type(self) -> c_int {
        (match self {
            Lock::Unlocked => libc::F_UNLCK,
            Lock::Shared => libc::F_RDLCK,
            Lock::Exclusive => libc::F_WRLCK,
        }) as c_int
    }
}

/// One lock byte of one file.
#[derive(Clone, Copy, Debug)]
struct Slot {
    /// What the process holds from the OS (`None`: not known yet).
    held: Option<Lock>,
    /// What SQLite believes the process holds.
    want: Lock,
}

/// A `-shm` file's lock bytes, by its descriptor.
struct File {
    fd: c_int,
    slots: [Slot; SLOTS],
    /// No other process had the file open when last asked: only then are locks kept.
    alone: bool,
    /// Requests since `alone` was last asked, while it is false.
    since_check: u32,
    /// Requests that went to the OS, and requests granted from what was held.
    calls: u64,
    granted: u64,
}

/// Every descriptor with lock bytes seen, and whether any holds more than SQLite believes.
struct Files {
    files: Vec<File>,
    kept: bool,
}

static FILES: Mutex<Files> = Mutex::new(Files {
    files: Vec::new(),
    kept: false,
});
/// Wakes the thread that gives kept locks back.
static KEPT: Condvar = Condvar::new();

extern "C" {
    fn relis_shm_set_real_fcntl(f: ffi::sqlite3_syscall_ptr);
    fn relis_shm_real_setlk(fd: c_int, cmd: c_int, lock: *mut libc::flock) -> c_int;
    fn relis_shm_real_getlk(fd: c_int, lock: *mut libc::flock) -> c_int;
    fn relis_shm_fcntl(fd: c_int, cmd: c_int, ...) -> c_int;
}

type CloseFn = unsafe extern "C" fn(c_int) -> c_int;

/// The `close` the VFS called before [`install`].
static REAL_CLOSE: OnceLock<CloseFn> = OnceLock::new();

/// Set in a child process after `fork()` (Python's `multiprocessing`, for one): the child holds
/// none of its parent's locks (the OS does not pass them on) and has no give-back thread, and
/// another of the parent's threads may have held [`FILES`]'s mutex when it forked; from then on
/// the module passes every call through, as plain SQLite would run.
static FORKED: AtomicBool = AtomicBool::new(false);

extern "C" fn forked() {
    FORKED.store(true, Ordering::Relaxed);
}

/// Puts this module under the unix VFS's `fcntl` and `close`, and starts the thread that gives
/// kept locks back; idempotent. Does nothing where SQLite has no unix VFS, or if that thread
/// cannot start (locks then go to the OS as before).
pub(crate) fn install() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        // SAFETY: the unix VFS's system-call table: its getters and setters are the documented
        // way to replace `fcntl` and `close` for every unix VFS of the process. The pointers
        // stored have the signatures SQLite calls them with (`relis_shm_fcntl` is variadic C).
        unsafe {
            let unix = ffi::sqlite3_vfs_find(c"unix".as_ptr());
            if unix.is_null() {
                return;
            }
            let (Some(get), Some(set)) = ((*unix).xGetSystemCall, (*unix).xSetSystemCall) else {
                return;
            };
            let fcntl = get(unix, c"fcntl".as_ptr());
            let close = get(unix, c"close".as_ptr());
            let Some(close) = close else { return };
            if fcntl.is_none() {
                return;
            }
            if libc::pthread_atfork(None, None, Some(forked)) != 0 {
                return;
            }
            let started = std::thread::Builder::new()
                .name("relis-shmlocks".into())
                .spawn(give_back_loop);
            if started.is_err() {
                return;
            }
            relis_shm_set_real_fcntl(fcntl);
            let _ = REAL_CLOSE.set(std::mem::transmute::<unsafe extern "C" fn(), CloseFn>(
                close,
            ));
            let ours_close: CloseFn = x_close;
            set(
                unix,
                c"close".as_ptr(),
                Some(std::mem::transmute::<CloseFn, unsafe extern "C" fn()>(
                    ours_close,
                )),
            );
            let ours_fcntl: unsafe extern "C" fn(c_int, c_int, ...) -> c_int = relis_shm_fcntl;
            set(
                unix,
                c"fcntl".as_ptr(),
                Some(std::mem::transmute::<
                    unsafe extern "C" fn(c_int, c_int, ...) -> c_int,
                    unsafe extern "C" fn(),
                >(ours_fcntl)),
            );
        }
    });
}

/// The VFS's `F_SETLK` and `F_SETLKW` (`cmd`) requests, from the C trampoline: -2 for a lock
/// this module does not keep (the trampoline passes it on), else the request's result. (SQLite
/// as built here never blocks; a blocking request for a lock the process does not hold goes to
/// the OS as it came, so the table stays true if it did.)
///
/// # Safety
/// `lock` is the `struct flock` of an `fcntl` call.
#[no_mangle]
unsafe extern "C" fn relis_shm_setlk(fd: c_int, cmd: c_int, lock: *mut libc::flock) -> c_int {
    if FORKED.load(Ordering::Relaxed) {
        return -2;
    }
    // SAFETY: the caller's flock, for the duration of the call.
    let l = unsafe { &*lock };
    #[allow(clippy::useless_conversion)] // off_t is i32 on 32-bit targets
    let (start, len) = (i64::from(l.l_start), i64::from(l.l_len));
    let Some(want) = Lock::of(l.l_type as c_int) else {
        return -2;
    };
    if l.l_whence as c_int != libc::SEEK_SET
        || len < 1
        || start < BASE
        || start + len > BASE + SLOTS as i64
    {
        return -2;
    }
    let range = (start - BASE) as usize..(start - BASE + len) as usize;
    let mut guard = FILES.lock();
    let files = &mut *guard;
    let i = match files.files.iter().position(|f| f.fd == fd) {
        Some(i) => i,
        None => {
            files.files.push(File {
                fd,
                slots: [Slot {
                    held: None,
                    want: Lock::Unlocked,
                }; SLOTS],
                alone: !others_open(fd),
                since_check: 0,
                calls: 0,
                granted: 0,
            });
            files.files.len() - 1
        }
    };
    let file = &mut files.files[i];
    if !file.alone {
        file.since_check += 1;
        if file.since_check >= RECHECK {
            file.since_check = 0;
            file.alone = !others_open(fd);
        }
    }
    let slots = &mut file.slots[range];
    // Held already (a release is a lock of nothing, which everything held covers): only what
    // SQLite believes changes.
    if file.alone && slots.iter().all(|s| s.held.is_some_and(|h| h >= want)) {
        let keeps = slots.iter().any(|s| s.held > Some(want));
        for s in slots.iter_mut() {
            s.want = want;
        }
        file.granted += 1;
        if keeps && !files.kept {
            files.kept = true;
            KEPT.notify_one();
        }
        return 0;
    }
    // SAFETY: the same request, to the fcntl SQLite called before.
    let rc = unsafe { relis_shm_real_setlk(fd, cmd, lock) };
    file.calls += 1;
    if rc == 0 {
        for s in slots.iter_mut() {
            *s = Slot {
                held: Some(want),
                want,
            };
        }
    }
    rc
}

/// Whether another process has the `-shm` file at `fd` open: each connection to a WAL database
/// holds a shared lock on the byte after the lock bytes (SQLite's `UNIX_SHM_DMS`) for as long
/// as it is open, and `F_GETLK` reports other processes' locks only. On error, yes.
fn others_open(fd: c_int) -> bool {
    let mut l = flock(Lock::Exclusive, SLOTS);
    // SAFETY: F_GETLK on the VFS's open descriptor, with a flock it fills in.
    let rc = unsafe { relis_shm_real_getlk(fd, &mut l) };
    rc != 0 || l.l_type as c_int != libc::F_UNLCK as c_int
}

/// A request for `lock` on the byte `n` places after [`BASE`], as SQLite makes them.
fn flock(lock: Lock, n: usize) -> libc::flock {
    // SAFETY: a zeroed flock is a valid one; the fields SQLite sets are set below.
    let mut l: libc::flock = unsafe { std::mem::zeroed() };
    l.l_type = lock.l_type() as _;
    l.l_whence = libc::SEEK_SET as _;
    l.l_start = (BASE + n as i64) as _;
    l.l_len = 1;
    l
}

/// The VFS's `close`: a closed descriptor's locks are gone.
unsafe extern "C" fn x_close(fd: c_int) -> c_int {
    if !FORKED.load(Ordering::Relaxed) {
        FILES.lock().files.retain(|f| f.fd != fd);
    }
    let close = REAL_CLOSE.get().expect("installed with the real close");
    // SAFETY: the VFS's call, passed on.
    unsafe { close(fd) }
}

/// Gives back, [`HOLD`] after they were first kept, the locks SQLite no longer holds; a file
/// another process has opened since stops keeping any.
fn give_back_loop() {
    let mut files = FILES.lock();
    loop {
        while !files.kept {
            KEPT.wait(&mut files);
        }
        parking_lot::MutexGuard::unlocked(&mut files, || std::thread::sleep(HOLD));
        files.kept = false;
        for file in &mut files.files {
            if !file.slots.iter().any(|s| s.held > Some(s.want)) {
                continue;
            }
            if others_open(file.fd) {
                file.alone = false;
            }
            for (n, s) in file.slots.iter_mut().enumerate() {
                let Some(held) = s.held else { continue };
                if held <= s.want {
                    continue;
                }
                let mut l = flock(s.want, n);
                // SAFETY: an unlock or downgrade of a byte this process holds, on its open
                // descriptor (closes wait for this lock).
                let rc = unsafe { relis_shm_real_setlk(file.fd, libc::F_SETLK, &mut l) };
                file.calls += 1;
                s.held = if rc == 0 { Some(s.want) } else { None };
            }
        }
    }
}

/// For tests: requests on the lock bytes of the `-shm` file at `path` that went to the OS and
/// that were granted from what the process held, since this process opened it (Linux: the
/// descriptors are matched by `/proc/self/fd`). `None` if no open descriptor of it took a lock.
#[doc(hidden)]
pub fn counts(path: &std::path::Path) -> Option<(u64, u64)> {
    let path = std::fs::canonicalize(path).ok()?;
    let files = FILES.lock();
    files.files.iter().find_map(|f| {
        let link = std::fs::read_link(format!("/proc/self/fd/{}", f.fd)).ok()?;
        (link == path).then_some((f.calls, f.granted))
    })
}
