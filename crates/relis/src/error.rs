//! The engine's errors: domain outcomes a command reports to its caller, and storage failures.
//! The engine says *what* went wrong; the server turns each variant into Redis's exact text.

use std::fmt;

/// An engine error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The key holds a value of another type.
    WrongType,
    /// The value (or an argument) is not an integer or is out of range.
    NotInteger,
    /// The value (or an argument) is not a valid float.
    NotFloat,
    /// An increment or decrement would overflow a 64-bit integer.
    Overflow,
    /// An increment would produce NaN or infinity.
    NanOrInfinity,
    /// The key does not exist (RENAME and friends).
    NoSuchKey,
    /// The result would exceed the maximum string size (512 MB).
    StringTooLong,
    /// An expire time overflows when made absolute.
    InvalidExpire,
    /// The logical database index is out of range.
    DbIndexOutOfRange,
    /// The source and destination are the same object (COPY, MOVE).
    SameObject,
    /// A stream command's own error (see [`crate::StreamError`]).
    Stream(StreamError),
    /// A string value that is not a usable HyperLogLog (see [`crate::HllError`]).
    Hll(crate::types::hll::HllError),
    /// SQLite failed; the message is for the log, not for clients.
    Storage(String),
    /// The disk is full: the write was not committed.
    DiskFull,
    /// The device failed a read, write or sync (SQLite's `SQLITE_IOERR`): the write was not
    /// committed. The message is for the log.
    Io(String),
    /// The database file is not a Relis database or is from a newer Relis.
    NotRelis(String),
    /// The engine has shut down.
    Closed,
    /// SQLite rolled back the transaction the write ran in (a user SQL write interrupted at
    /// its time limit takes the whole group commit with it): nothing of it is kept. The text
    /// says why, for the client.
    RolledBack(String),
}

/// The engine's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::WrongType => f.write_str("wrong kind of value"),
            Error::NotInteger => f.write_str("value is not an integer or out of range"),
            Error::NotFloat => f.write_str("value is not a valid float"),
            Error::Overflow => f.write_str("increment or decrement would overflow"),
            Error::NanOrInfinity => f.write_str("increment would produce NaN or Infinity"),
            Error::NoSuchKey => f.write_str("no such key"),
            Error::StringTooLong => f.write_str("string exceeds maximum allowed size"),
            Error::InvalidExpire => f.write_str("invalid expire time"),
            Error::DbIndexOutOfRange => f.write_str("DB index is out of range"),
            Error::SameObject => f.write_str("source and destination objects are the same"),
            Error::Stream(e) => write!(f, "stream error: {e:?}"),
            Error::Hll(e) => write!(f, "HyperLogLog error: {e:?}"),
            Error::Storage(m) => write!(f, "storage error: {m}"),
            Error::DiskFull => f.write_str("disk full"),
            Error::Io(m) => write!(f, "I/O error: {m}"),
            Error::NotRelis(m) => f.write_str(m),
            Error::Closed => f.write_str("the database is closed"),
            Error::RolledBack(m) => write!(f, "transaction rolled back: {m}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<rusqlite::types::FromSqlError> for Error {
    fn from(e: rusqlite::types::FromSqlError) -> Self {
        Error::Storage(e.to_string())
    }
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DiskFull) => Error::DiskFull,
            Some(rusqlite::ErrorCode::SystemIoFailure) => Error::Io(e.to_string()),
            _ => Error::Storage(e.to_string()),
        }
    }
}

/// The stream's errors, each with Redis's text on the server side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamError {
    /// XADD: the id is not above the stream's last id.
    IdTooSmall,
    /// XADD `*` or `ms-*`: the last id is the largest possible.
    Exhausted,
    /// XSETID: the id is below the stream's last entry.
    SetIdBelowTop,
    /// XSETID: ENTRIESADDED is below the stream's length.
    EntriesAddedBelowLength,
    /// XGROUP CREATE: the group exists.
    BusyGroup,
}
