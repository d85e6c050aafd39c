//! The engine handle the Python objects hold, made safe across `fork()`: a child process
//! (`multiprocessing`'s default on Linux) inherits the handle but none of the engine's threads,
//! so a call would wait forever for a writer that is not there, and dropping the last handle
//! would join threads that do not exist. In the child every call raises instead, and the
//! handle is leaked rather than dropped.

use crate::errors;
use pyo3::PyResult;
use std::mem::ManuallyDrop;

/// A [`relis::Db`] owned by the process that opened it.
pub struct Engine {
    db: ManuallyDrop<relis::Db>,
    pid: u32,
}

impl Engine {
    /// Wraps a handle opened by this process.
    pub fn new(db: relis::Db) -> Engine {
        Engine {
            db: ManuallyDrop::new(db),
            pid: std::process::id(),
        }
    }

    /// The handle, unless this is a child forked after the database was opened.
    ///
    /// # Errors
    /// `RedisError` in a forked child.
    pub fn get(&self) -> PyResult<&relis::Db> {
        if std::process::id() != self.pid {
            return Err(errors::RedisError::new_err(
                "this database was opened before fork(): open it again in the child process",
            ));
        }
        Ok(&self.db)
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if std::process::id() == self.pid {
            // SAFETY: dropped once, here, and never used again.
            unsafe { ManuallyDrop::drop(&mut self.db) }
        }
    }
}
