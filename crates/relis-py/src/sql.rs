//! SQL over the same file: `Db.execute`, `Db.query`, `Db.prepare` and `Statement`. Tables live
//! beside the Redis keyspace, and the `redis_*` views (`redis_strings`, `redis_hashes`, ...)
//! show its data.

use crate::db::Db;
use crate::engine::Engine;
use crate::errors;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use relis::{Params, SqlOutput, SqlValue, StatementKind};

/// Parameters from `*params`: positional values, or one dict of named ones (`{"id": 1}` binds
/// `:id`, as do `{":id": 1}`, `{"@id": 1}` and `{"$id": 1}` their own prefixes).
fn params(items: &Bound<'_, PyTuple>) -> PyResult<Params> {
    if items.len() == 1 {
        if let Ok(d) = items.get_item(0)?.cast::<PyDict>() {
            let mut named = Vec::with_capacity(d.len());
            for (k, v) in d.iter() {
                let k: String = k.extract()?;
                let k = if k.starts_with([':', '@', '$']) {
                    k
                } else {
                    format!(":{k}")
                };
                named.push((k, value(&v)?));
            }
            return Ok(Params::Named(named));
        }
    }
    if items.is_empty() {
        return Ok(Params::None);
    }
    Ok(Params::Positional(
        items.iter().map(|v| value(&v)).collect::<PyResult<_>>()?,
    ))
}

/// A Python value as a SQL value: `None`, `bool` and `int` (64-bit), `float`, `str` (TEXT),
/// `bytes` (BLOB).
fn value(v: &Bound<'_, PyAny>) -> PyResult<SqlValue> {
    if v.is_none() {
        return Ok(SqlValue::Null);
    }
    if v.is_instance_of::<PyBool>() {
        return Ok(SqlValue::Integer(i64::from(v.extract::<bool>()?)));
    }
    if v.is_instance_of::<PyInt>() {
        return v
            .extract::<i64>()
            .map(SqlValue::Integer)
            .map_err(|_| errors::data("SQL integers are 64-bit: the value is out of range"));
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(SqlValue::Real(v.extract()?));
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(SqlValue::text(s.to_cow()?.into_owned()));
    }
    if let Ok(b) = v.cast::<PyBytes>() {
        return Ok(SqlValue::Blob(relis::Bytes::copy_from_slice(b.as_bytes())));
    }
    Err(errors::data(format!(
        "cannot bind a value of type '{}' (None, int, float, str or bytes)",
        v.get_type().name()?.to_cow()?
    )))
}

fn cell<'py>(py: Python<'py>, v: &SqlValue) -> Bound<'py, PyAny> {
    match v {
        SqlValue::Null => py.None().into_bound(py),
        SqlValue::Integer(n) => PyInt::new(py, *n).into_any(),
        SqlValue::Real(f) => PyFloat::new(py, *f).into_any(),
        // SQLite does not check that TEXT is UTF-8: text that is not comes back as bytes.
        SqlValue::Text(t) => match std::str::from_utf8(t) {
            Ok(s) => PyString::new(py, s).into_any(),
            Err(_) => PyBytes::new(py, t).into_any(),
        },
        SqlValue::Blob(b) => PyBytes::new(py, b).into_any(),
    }
}

/// The rows as tuples, or as dicts keyed by column name.
fn rows(py: Python<'_>, out: &SqlOutput, dicts: bool) -> PyResult<Py<PyAny>> {
    let list = PyList::empty(py);
    for row in &out.rows {
        if dicts {
            let d = PyDict::new(py);
            for (name, v) in out.columns.iter().zip(row) {
                d.set_item(name, cell(py, v))?;
            }
            list.append(d)?;
        } else {
            list.append(PyTuple::new(py, row.iter().map(|v| cell(py, v)))?)?;
        }
    }
    Ok(list.into_any().unbind())
}

/// What `execute` returns: the rows of a statement that returns rows, else the number of rows
/// it changed.
fn result(py: Python<'_>, out: &SqlOutput, dicts: bool) -> PyResult<Py<PyAny>> {
    match out.kind {
        StatementKind::Rows => rows(py, out, dicts),
        StatementKind::Changes | StatementKind::Ddl => {
            Ok(out.changes.into_pyobject(py)?.into_any().unbind())
        }
    }
}

fn engine_of(db: &Db, what: &str) -> PyResult<relis::Db> {
    if db.queued() {
        return Err(errors::RedisError::new_err(format!(
            "{what} cannot run inside a pipeline"
        )));
    }
    db.engine()
}

/// Runs SQL on the writer, in its own transaction: one statement with parameters, or
/// several `;`-separated ones without. Returns the rows of a statement that returns rows,
/// else the number of rows changed.
pub fn execute(
    this: &Db,
    py: Python<'_>,
    sql: &str,
    params: &Bound<'_, PyTuple>,
    dicts: bool,
) -> PyResult<Py<PyAny>> {
    let engine = engine_of(this, "execute")?;
    let (sql, params) = (sql.to_string(), self::params(params)?);
    let out = py
        .detach(move || engine.sql_exec(&sql, params))
        .map_err(errors::sql)?;
    result(py, &out, dicts)
}

/// Runs a read-only statement on a reader, in parallel with writes: a list of tuples, or
/// of dicts with `dicts=True`.
pub fn query(
    this: &Db,
    py: Python<'_>,
    sql: &str,
    params: &Bound<'_, PyTuple>,
    dicts: bool,
) -> PyResult<Py<PyAny>> {
    let engine = engine_of(this, "query")?;
    let (sql, params) = (sql.to_string(), self::params(params)?);
    let out = py
        .detach(move || engine.sql_query(&sql, params))
        .map_err(errors::sql)?;
    rows(py, &out, dicts)
}

/// Compiles `sql` and stores it in the database as the prepared statement `name`
/// (replacing one of that name; relis-server's SQL.RUN sees it too).
pub fn prepare(this: &Db, py: Python<'_>, name: &str, sql: &str) -> PyResult<Statement> {
    let engine = engine_of(this, "prepare")?;
    let (name, sql) = (name.to_string(), sql.to_string());
    let e = engine.clone();
    let info = py
        .detach(move || e.sql_prepare(&name, &sql))
        .map_err(errors::sql)?;
    Ok(Statement {
        engine: Engine::new(engine),
        info,
    })
}

/// Runs the prepared statement `name`: as `execute`.
pub fn run(
    this: &Db,
    py: Python<'_>,
    name: &str,
    params: &Bound<'_, PyTuple>,
    dicts: bool,
) -> PyResult<Py<PyAny>> {
    let engine = engine_of(this, "run")?;
    run_statement(py, &engine, name, params, dicts)
}

/// Forgets the prepared statement `name`: whether it existed.
pub fn unprepare(this: &Db, py: Python<'_>, name: &str) -> PyResult<bool> {
    let engine = engine_of(this, "unprepare")?;
    let name = name.to_string();
    py.detach(move || engine.sql_unprepare(&name))
        .map_err(errors::sql)
}

fn run_statement(
    py: Python<'_>,
    engine: &relis::Db,
    name: &str,
    params: &Bound<'_, PyTuple>,
    dicts: bool,
) -> PyResult<Py<PyAny>> {
    let (name, params, engine) = (name.to_string(), self::params(params)?, engine.clone());
    let out = py
        .detach(move || engine.sql_run(&name, params))
        .map_err(errors::sql)?;
    result(py, &out, dicts)
}

/// A prepared statement (`Db.prepare`), stored in the database.
#[pyclass(module = "relis", frozen)]
pub struct Statement {
    engine: Engine,
    info: relis::StatementInfo,
}

#[pymethods]
impl Statement {
    /// Runs it with `params`: as `Db.execute`.
    #[pyo3(signature = (*params, dicts=false))]
    fn run(&self, py: Python<'_>, params: &Bound<'_, PyTuple>, dicts: bool) -> PyResult<Py<PyAny>> {
        run_statement(py, self.engine.get()?, &self.info.name, params, dicts)
    }

    /// `run(*params)`.
    #[pyo3(signature = (*params, dicts=false))]
    fn __call__(
        &self,
        py: Python<'_>,
        params: &Bound<'_, PyTuple>,
        dicts: bool,
    ) -> PyResult<Py<PyAny>> {
        self.run(py, params, dicts)
    }

    /// Its name.
    #[getter]
    fn name(&self) -> &str {
        &self.info.name
    }

    /// Its SQL.
    #[getter]
    fn sql(&self) -> &str {
        &self.info.sql
    }

    /// How many parameters it takes.
    #[getter]
    fn params(&self) -> usize {
        self.info.params
    }

    /// Whether it only reads.
    #[getter]
    fn readonly(&self) -> bool {
        self.info.readonly
    }

    fn __repr__(&self) -> String {
        format!(
            "<relis.Statement {:?}: {:?}>",
            self.info.name, self.info.sql
        )
    }
}
