//! Every error text the server sends, in one place, byte for byte as Redis 7.0 words them.
//!
//! Three outcomes (STYLE.md): a protocol error closes the connection (see `conn.rs`); a command
//! error ([`CmdError`]) is replied and the connection goes on; an internal error is logged and
//! replied as a short `ERR` without details.

use bytes::Bytes;
use resp::Frame;

/// An error a command replies with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CmdError {
    /// `WRONGTYPE Operation against a key holding the wrong kind of value`
    WrongType,
    /// `ERR value is not an integer or out of range`
    NotInteger,
    /// `ERR value is not a valid float`
    NotFloat,
    /// `ERR increment or decrement would overflow`
    Overflow,
    /// `ERR increment would produce NaN or Infinity`
    NanOrInfinity,
    /// `ERR no such key`
    NoSuchKey,
    /// `ERR syntax error`
    Syntax,
    /// `ERR DB index is out of range`
    DbIndexOutOfRange,
    /// `ERR source and destination objects are the same`
    SameObject,
    /// `ERR invalid expire time in '<cmd>' command`
    InvalidExpire(&'static str),
    /// `ERR string exceeds maximum allowed size (proto-max-bulk-len)`
    StringTooLong,
    /// `ERR wrong number of arguments for '<cmd>' command`
    WrongArity(String),
    /// `ERR unknown command '<name>', with args beginning with: '<a>' '<b>' `
    UnknownCommand(String),
    /// `NOAUTH Authentication required.`
    NoAuth,
    /// Any other text, complete with its leading word (`ERR ...`, `EXECABORT ...`).
    Text(String),
    /// An internal failure: logged, replied without details.
    Internal(String),
    /// The storage failed (disk full, I/O error, shut down): the engine's error, kept so the
    /// writer can tell a storage failure from a command's own error.
    Storage(relis::Error),
    /// A read tried inline on the network thread needs more work than an inline read may do:
    /// it did nothing and runs again on a reader ([`crate::cmd::ReadCmd::inline`]). Never a
    /// reply.
    Deferred,
}

impl CmdError {
    /// A complete error text (starting with its code word, e.g. `ERR`).
    pub fn text(s: impl Into<String>) -> Self {
        CmdError::Text(s.into())
    }

    /// `ERR <msg>`.
    pub fn err(msg: impl AsRef<str>) -> Self {
        CmdError::Text(format!("ERR {}", msg.as_ref()))
    }

    /// The reply frame.
    pub fn to_frame(&self) -> Frame {
        Frame::Error(Bytes::from(self.message()))
    }

    /// The error text, without the leading `-`.
    pub fn message(&self) -> String {
        match self {
            CmdError::WrongType => {
                "WRONGTYPE Operation against a key holding the wrong kind of value".into()
            }
            CmdError::NotInteger => "ERR value is not an integer or out of range".into(),
            CmdError::NotFloat => "ERR value is not a valid float".into(),
            CmdError::Overflow => "ERR increment or decrement would overflow".into(),
            CmdError::NanOrInfinity => "ERR increment would produce NaN or Infinity".into(),
            CmdError::NoSuchKey => "ERR no such key".into(),
            CmdError::Syntax => "ERR syntax error".into(),
            CmdError::DbIndexOutOfRange => "ERR DB index is out of range".into(),
            CmdError::SameObject => "ERR source and destination objects are the same".into(),
            CmdError::InvalidExpire(cmd) => format!("ERR invalid expire time in '{cmd}' command"),
            CmdError::StringTooLong => {
                "ERR string exceeds maximum allowed size (proto-max-bulk-len)".into()
            }
            CmdError::WrongArity(cmd) => {
                format!("ERR wrong number of arguments for '{cmd}' command")
            }
            CmdError::UnknownCommand(s) => s.clone(),
            CmdError::NoAuth => "NOAUTH Authentication required.".into(),
            CmdError::Text(s) => s.clone(),
            CmdError::Internal(detail) => {
                tracing::error!("internal error: {detail}");
                "ERR internal error".into()
            }
            CmdError::Deferred => {
                tracing::error!("internal error: a deferred inline read reached a client");
                "ERR internal error".into()
            }
            CmdError::Storage(relis::Error::DiskFull) => "MISCONF Relis cannot commit to its SQLite file: the disk is full. Writes are refused until space is freed; reads keep working.".into(),
            CmdError::Storage(relis::Error::Io(e)) => {
                tracing::error!("storage I/O error: {e}");
                "MISCONF Relis cannot commit to its SQLite file: the disk reported an I/O error (see the server log). Writes fail until it is fixed; reads keep working.".into()
            }
            CmdError::Storage(relis::Error::Closed) => "ERR the server is shutting down".into(),
            CmdError::Storage(relis::Error::RolledBack(why)) => {
                sanitize(&format!("ERR transaction rolled back: {why}"))
            }
            CmdError::Storage(e) => {
                tracing::error!("storage error: {e}");
                "ERR internal error".into()
            }
        }
    }
}

impl From<relis::Error> for CmdError {
    fn from(e: relis::Error) -> Self {
        use relis::Error as E;
        match e {
            E::WrongType => CmdError::WrongType,
            E::NotInteger => CmdError::NotInteger,
            E::NotFloat => CmdError::NotFloat,
            E::Overflow => CmdError::Overflow,
            E::NanOrInfinity => CmdError::NanOrInfinity,
            E::NoSuchKey => CmdError::NoSuchKey,
            E::StringTooLong => CmdError::StringTooLong,
            E::DbIndexOutOfRange => CmdError::DbIndexOutOfRange,
            E::SameObject => CmdError::SameObject,
            E::Stream(relis::StreamError::BusyGroup) => {
                CmdError::text("BUSYGROUP Consumer Group name already exists")
            }
            E::Stream(e) => CmdError::err(match e {
                relis::StreamError::BusyGroup => "Consumer Group name already exists",
                relis::StreamError::IdTooSmall => {
                    "The ID specified in XADD is equal or smaller than the target stream top item"
                }
                relis::StreamError::Exhausted => {
                    "The stream has exhausted the last possible ID, unable to add more items"
                }
                relis::StreamError::SetIdBelowTop => {
                    "The ID specified in XSETID is smaller than the target stream top item"
                }
                relis::StreamError::EntriesAddedBelowLength => {
                    "The entries_added specified in XSETID is smaller than the target stream length"
                }
            }),
            E::Hll(relis::HllError::NotHll) => {
                CmdError::text("WRONGTYPE Key is not a valid HyperLogLog string value.")
            }
            E::Hll(relis::HllError::Corrupted) => {
                CmdError::text("INVALIDOBJ Corrupted HLL object detected")
            }
            // Commands that can hit this map it to their own name before it gets here.
            E::InvalidExpire => CmdError::err("invalid expire time"),
            e @ (E::DiskFull
            | E::Io(_)
            | E::Closed
            | E::Storage(_)
            | E::NotRelis(_)
            | E::RolledBack(_)) => CmdError::Storage(e),
        }
    }
}

/// Redis's unknown-command text: the name and the first arguments (up to 128 bytes), quoted.
pub fn unknown_command(name: &[u8], args: &[Bytes]) -> CmdError {
    let mut list = String::new();
    for a in args {
        if list.len() >= 128 {
            break;
        }
        let room = 128 - list.len();
        list.push('\'');
        list.push_str(&String::from_utf8_lossy(&a[..a.len().min(room)]));
        list.push_str("' ");
    }
    let name = String::from_utf8_lossy(&name[..name.len().min(128)]).into_owned();
    CmdError::UnknownCommand(sanitize(&format!(
        "ERR unknown command '{name}', with args beginning with: {list}"
    )))
}

/// Redis's unknown-subcommand text.
pub fn unknown_subcommand(cmd: &str, sub: &[u8]) -> CmdError {
    CmdError::Text(sanitize(&format!(
        "ERR unknown subcommand '{}'. Try {}.",
        String::from_utf8_lossy(&sub[..sub.len().min(128)]),
        cmd.to_ascii_uppercase() + " HELP"
    )))
}

/// RESTORE on an existing key without REPLACE.
pub const BUSYKEY: &str = "BUSYKEY Target key name already exists.";
/// RESTORE of a payload with a bad footer (too short, newer RDB version, CRC mismatch).
pub const BAD_PAYLOAD: &str = "ERR DUMP payload version or checksum are wrong";
/// RESTORE of a payload whose content does not decode.
pub const BAD_DATA: &str = "ERR Bad data format";
/// MIGRATE when the target cannot be reached in time.
pub const MIGRATE_CONNECT: &str = "IOERR error or timeout connecting to the client";

/// Redis replaces CR and LF in error texts with spaces so the reply stays one line.
pub fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c == '\r' || c == '\n' { ' ' } else { c })
        .collect()
}

/// Sent before closing a connection refused because `maxclients` are connected.
pub const MAX_CLIENTS: &[u8] = b"-ERR max number of clients reached\r\n";

/// Sent before closing a connection from another host while protected mode is on and the
/// default user has no password: Redis 7.0's text, typo ("Setup a an") included.
pub const PROTECTED_MODE: &[u8] = b"-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside.\r\n";
