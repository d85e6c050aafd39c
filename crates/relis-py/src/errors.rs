//! The exceptions the module raises and every error text, in one place.
//!
//! The classes mirror redis-py's (`RedisError` > `ResponseError`, `DataError`,
//! `ConnectionError`), plus `WrongTypeError` (a `ResponseError`) and `SqlError`. A message reads
//! as redis-py shows the server's reply: Redis's text byte for byte, without the leading `ERR `
//! that redis-py strips (`WRONGTYPE ...` keeps its code word, as in redis-py).

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::PyErr;

create_exception!(
    relis,
    RedisError,
    PyException,
    "Base class of every Relis error (redis-py's RedisError)."
);
create_exception!(
    relis,
    ResponseError,
    RedisError,
    "A command failed as it would have failed on a Redis server (redis-py's ResponseError)."
);
create_exception!(
    relis,
    WrongTypeError,
    ResponseError,
    "The key holds another type of value (Redis's WRONGTYPE error)."
);
create_exception!(
    relis,
    DataError,
    RedisError,
    "An argument was refused before the command ran (redis-py's DataError)."
);
create_exception!(
    relis,
    ConnectionError,
    RedisError,
    "The database is closed (redis-py's ConnectionError)."
);
create_exception!(
    relis,
    SqlError,
    ResponseError,
    "A SQL statement failed or was refused."
);

/// Redis's WRONGTYPE reply.
pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";

/// `ResponseError(msg)`.
pub fn response(msg: impl Into<String>) -> PyErr {
    ResponseError::new_err(msg.into())
}

/// `DataError(msg)`.
pub fn data(msg: impl Into<String>) -> PyErr {
    DataError::new_err(msg.into())
}

/// Redis's arity error for `cmd`.
pub fn arity(cmd: &str) -> PyErr {
    response(format!("wrong number of arguments for '{cmd}' command"))
}

/// redis-py's refusal of an argument of a type it cannot send.
pub fn bad_input(type_name: &str) -> PyErr {
    data(format!(
        "Invalid input of type: '{type_name}'. Convert to a bytes, string, int or float first."
    ))
}

/// An engine error raised by command `cmd` (lower case, as Redis names it in its texts).
pub fn engine(e: relis::Error, cmd: &str) -> PyErr {
    use relis::Error as E;
    match e {
        E::WrongType => WrongTypeError::new_err(WRONGTYPE),
        E::NotInteger if cmd == "hincrby" => response("hash value is not an integer"),
        E::NotInteger => response("value is not an integer or out of range"),
        E::NotFloat if cmd == "hincrbyfloat" => response("hash value is not a float"),
        E::NotFloat => response("value is not a valid float"),
        E::Overflow => response("increment or decrement would overflow"),
        E::NanOrInfinity => response("increment would produce NaN or Infinity"),
        E::NoSuchKey => response("no such key"),
        E::StringTooLong => response("string exceeds maximum allowed size (proto-max-bulk-len)"),
        E::InvalidExpire => response(format!("invalid expire time in '{cmd}' command")),
        E::DbIndexOutOfRange => response("DB index is out of range"),
        E::SameObject => response("source and destination objects are the same"),
        E::Hll(relis::HllError::NotHll) => {
            WrongTypeError::new_err("WRONGTYPE Key is not a valid HyperLogLog string value.")
        }
        E::DiskFull => response(
            "MISCONF Relis cannot commit to its SQLite file: the disk is full. Writes are \
             refused until space is freed; reads keep working.",
        ),
        E::Io(m) => response(format!(
            "MISCONF Relis cannot commit to its SQLite file: the disk reported an I/O error \
             ({m}). Writes fail until it is fixed; reads keep working."
        )),
        E::Closed => ConnectionError::new_err("the database is closed"),
        E::RolledBack(why) => response(format!("transaction rolled back: {why}")),
        // In-process there is no remote client to hide details from: say what SQLite said.
        e @ (E::Storage(_) | E::NotRelis(_) | E::Stream(_) | E::Hll(_)) => {
            RedisError::new_err(e.to_string())
        }
    }
}

/// A SQL error: the engine's own errors as [`engine`] raises them, the rest as `SqlError`.
pub fn sql(e: relis::SqlError) -> PyErr {
    match e {
        relis::SqlError::Engine(e) => engine(e, "sql"),
        e => SqlError::new_err(e.to_string()),
    }
}
