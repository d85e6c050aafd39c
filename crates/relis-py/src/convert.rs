//! Python values to command arguments and replies to Python values, as redis-py does it:
//! arguments are bytes, str (UTF-8), int (its decimal text) or float (its `repr`); replies are
//! bytes, or str when the database was opened with `decode_responses=True`.

use crate::errors;
use pyo3::exceptions::PyUnicodeDecodeError;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PySet, PyString, PyTuple,
};
use relis::Bytes;

/// One argument as redis-py's `Encoder.encode` turns it into bytes.
///
/// # Errors
/// `DataError` for any other type (booleans and `None` included, as in redis-py).
pub fn arg(obj: &Bound<'_, PyAny>) -> PyResult<Bytes> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Bytes::copy_from_slice(b.as_bytes()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Bytes::from(s.to_cow()?.into_owned()));
    }
    // bool is a subclass of int: redis-py refuses it rather than sending "True".
    if obj.is_instance_of::<PyBool>() {
        return Err(errors::bad_input("bool"));
    }
    if obj.is_instance_of::<PyInt>() {
        return Ok(Bytes::from(obj.str()?.to_cow()?.into_owned()));
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(Bytes::from(obj.repr()?.to_cow()?.into_owned()));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Bytes::from(b.to_vec()));
    }
    if let Ok(view) = obj.extract::<Vec<u8>>() {
        // memoryview and other buffers.
        if !obj.is_instance_of::<PyList>() && !obj.is_instance_of::<PyTuple>() {
            return Ok(Bytes::from(view));
        }
    }
    Err(errors::bad_input(&obj.get_type().name()?.to_cow()?))
}

/// Every argument of a `*args` tuple.
///
/// # Errors
/// As [`arg`].
pub fn args(items: &Bound<'_, PyTuple>) -> PyResult<Vec<Bytes>> {
    items.iter().map(|o| arg(&o)).collect()
}

/// An integer argument (Redis reads it from text, so `"5"` is accepted as it is by a server).
///
/// # Errors
/// `ResponseError("value is not an integer or out of range")` as Redis replies.
pub fn int_arg(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    if obj.is_instance_of::<PyInt>() && !obj.is_instance_of::<PyBool>() {
        return obj
            .extract::<i64>()
            .map_err(|_| errors::response("value is not an integer or out of range"));
    }
    let text = arg(obj)?;
    relis::parse_i64(&text)
        .ok_or_else(|| errors::response("value is not an integer or out of range"))
}

/// A float argument (a score): a number, or text Redis would read as one.
///
/// # Errors
/// `ResponseError("value is not a valid float")` as Redis replies.
pub fn float_arg(obj: &Bound<'_, PyAny>) -> PyResult<f64> {
    let bad = || errors::response("value is not a valid float");
    let v = if (obj.is_instance_of::<PyFloat>() || obj.is_instance_of::<PyInt>())
        && !obj.is_instance_of::<PyBool>()
    {
        obj.extract::<f64>().map_err(|_| bad())?
    } else {
        parse_float(&arg(obj)?).ok_or_else(bad)?
    };
    if v.is_nan() {
        return Err(bad());
    }
    Ok(v)
}

/// A float in Redis's syntax: decimal or exponent notation, `inf`, `+inf`, `-inf`; no NaN.
pub fn parse_float(b: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(b).ok()?;
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_whitespace()) {
        return None;
    }
    let v = match s.to_ascii_lowercase().as_str() {
        "inf" | "+inf" | "infinity" | "+infinity" => f64::INFINITY,
        "-inf" | "-infinity" => f64::NEG_INFINITY,
        l if l.contains("nan") || l.contains("inf") => return None,
        _ => s.parse::<f64>().ok()?,
    };
    (!v.is_nan()).then_some(v)
}

/// One end of a score range: a number, or text as ZRANGEBYSCORE reads it (`(` for an exclusive
/// end, `-inf`, `+inf`).
///
/// # Errors
/// `ResponseError("min or max is not a float")`.
pub fn score_bound(obj: &Bound<'_, PyAny>) -> PyResult<(f64, bool)> {
    let bad = || errors::response("min or max is not a float");
    if (obj.is_instance_of::<PyFloat>() || obj.is_instance_of::<PyInt>())
        && !obj.is_instance_of::<PyBool>()
    {
        let v: f64 = obj.extract().map_err(|_| bad())?;
        return if v.is_nan() {
            Err(bad())
        } else {
            Ok((v, false))
        };
    }
    let text = arg(obj)?;
    let (ex, body) = match text.first() {
        Some(b'(') => (true, &text[1..]),
        _ => (false, &text[..]),
    };
    Ok((parse_float(body).ok_or_else(bad)?, ex))
}

/// A reply string: bytes, or str when responses are decoded.
///
/// # Errors
/// `UnicodeDecodeError` when decoding bytes that are not UTF-8 (as redis-py raises).
pub fn reply<'py>(py: Python<'py>, b: &[u8], decode: bool) -> PyResult<Bound<'py, PyAny>> {
    if !decode {
        return Ok(PyBytes::new(py, b).into_any());
    }
    match std::str::from_utf8(b) {
        Ok(s) => Ok(PyString::new(py, s).into_any()),
        Err(e) => Err(PyErr::from_value(
            PyUnicodeDecodeError::new_utf8(py, b, e)?.into_any(),
        )),
    }
}

/// A list of reply strings.
///
/// # Errors
/// As [`reply`].
pub fn reply_list<'py>(
    py: Python<'py>,
    items: &[Bytes],
    decode: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let items = items
        .iter()
        .map(|b| reply(py, b, decode))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new(py, items)?.into_any())
}

/// A set of reply strings (SMEMBERS).
///
/// # Errors
/// As [`reply`].
pub fn reply_set<'py>(
    py: Python<'py>,
    items: &[Bytes],
    decode: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let items = items
        .iter()
        .map(|b| reply(py, b, decode))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PySet::new(py, items)?.into_any())
}

/// A dict of reply strings (HGETALL).
///
/// # Errors
/// As [`reply`].
pub fn reply_dict<'py>(
    py: Python<'py>,
    pairs: &[(Bytes, Bytes)],
    decode: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let d = PyDict::new(py);
    for (k, v) in pairs {
        d.set_item(reply(py, k, decode)?, reply(py, v, decode)?)?;
    }
    Ok(d.into_any())
}
