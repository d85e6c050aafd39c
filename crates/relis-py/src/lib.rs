//! `relis._relis`: the Relis engine as a Python extension module (the `relis` package
//! re-exports it). Redis's data structures and SQL over them, in-process and durable in one
//! SQLite file, with redis-py's method names and return types.
//!
//! Every call that waits for the engine (a read, or a write's commit) releases the GIL, so
//! Python threads overlap; errors are Python exceptions (`errors.rs`), never a panic across
//! the interpreter.
#![warn(missing_docs)]

mod convert;
mod db;
mod engine;
mod errors;
mod op;
mod sql;

use pyo3::prelude::*;
use std::path::PathBuf;

/// A clock that only moves when told to, for tests of expiry that never sleep: pass it to
/// `open(..., clock=)`.
#[pyclass(module = "relis", frozen)]
struct ManualClock(relis::ManualClock);

#[pymethods]
impl ManualClock {
    #[new]
    #[pyo3(signature = (now_ms=1_700_000_000_000))]
    fn new(now_ms: i64) -> Self {
        ManualClock(relis::ManualClock::new(now_ms))
    }

    /// Moves the clock forward by `ms` milliseconds.
    fn advance(&self, ms: i64) {
        self.0.advance(ms);
    }

    /// Sets the clock to `ms` (unix time in milliseconds).
    fn set(&self, ms: i64) {
        self.0.set(ms);
    }

    /// The clock's time (unix milliseconds).
    #[getter]
    fn now_ms(&self) -> i64 {
        relis::Clock::now_ms(&self.0)
    }
}

fn clock_of(clock: Option<&ManualClock>) -> std::sync::Arc<dyn relis::Clock> {
    match clock {
        Some(c) => std::sync::Arc::new(c.0.clone()),
        None => std::sync::Arc::new(relis::SystemClock),
    }
}

/// Opens (creating if needed) the database file at `path`.
#[pyfunction]
#[pyo3(signature = (path, *, decode_responses=false, durability="normal", databases=16, db=0, clock=None))]
#[allow(clippy::too_many_arguments)]
fn open(
    py: Python<'_>,
    path: PathBuf,
    decode_responses: bool,
    durability: &str,
    databases: u32,
    db: u32,
    clock: Option<PyRef<'_, ManualClock>>,
) -> PyResult<db::Db> {
    let durability = relis::Durability::parse(durability).ok_or_else(|| {
        errors::data(format!(
            "durability must be 'off', 'normal' or 'full', not {durability:?}"
        ))
    })?;
    let opts = relis::Options {
        durability,
        databases: databases.max(1),
        clock: clock_of(clock.as_deref()),
        ..relis::Options::file(path)
    };
    open_with(py, opts, decode_responses, db)
}

/// Opens a database that lives in memory only (gone when its last handle is).
#[pyfunction]
#[pyo3(signature = (*, decode_responses=false, databases=16, db=0, clock=None))]
fn open_memory(
    py: Python<'_>,
    decode_responses: bool,
    databases: u32,
    db: u32,
    clock: Option<PyRef<'_, ManualClock>>,
) -> PyResult<db::Db> {
    let opts = relis::Options {
        databases: databases.max(1),
        clock: clock_of(clock.as_deref()),
        ..relis::Options::default()
    };
    open_with(py, opts, decode_responses, db)
}

fn open_with(py: Python<'_>, opts: relis::Options, decode: bool, index: u32) -> PyResult<db::Db> {
    let engine = py
        .detach(move || relis::Db::open_with(opts).and_then(|e| e.select(index)))
        .map_err(|e| errors::engine(e, "select"))?;
    Ok(db::Db::new(engine, decode))
}

/// The extension module.
#[pymodule]
fn _relis(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_function(wrap_pyfunction!(open_memory, m)?)?;
    m.add_class::<ManualClock>()?;
    m.add_class::<db::Db>()?;
    m.add_class::<db::Pipeline>()?;
    m.add_class::<db::ScanIter>()?;
    m.add_class::<sql::Statement>()?;
    m.add("RedisError", py.get_type::<errors::RedisError>())?;
    m.add("ResponseError", py.get_type::<errors::ResponseError>())?;
    m.add("WrongTypeError", py.get_type::<errors::WrongTypeError>())?;
    m.add("DataError", py.get_type::<errors::DataError>())?;
    m.add("ConnectionError", py.get_type::<errors::ConnectionError>())?;
    m.add("SqlError", py.get_type::<errors::SqlError>())?;
    m.add("SCHEMA_VERSION", relis::SCHEMA_VERSION)?;
    Ok(())
}
