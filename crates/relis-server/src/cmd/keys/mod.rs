//! The generic keys family (Redis's `generic` group) and the keyspace-wide commands Redis files
//! under `server` (DBSIZE, FLUSHDB, FLUSHALL, SWAPDB).

pub mod copy;
pub mod dbsize;
pub mod del;
pub mod dump;
pub mod exists;
pub mod expire;
pub mod flush;
pub mod key_type;
pub mod keys_cmd;
pub mod migrate;
pub mod move_key;
pub mod object;
pub mod persist;
pub mod randomkey;
pub mod rename;
pub mod restore;
pub mod scan;
pub mod sort;
pub mod swapdb;
pub mod touch;
pub mod ttl;

use crate::cmd::{Cx, Spec};
use crate::error::CmdError;

/// The keys commands.
pub static SPECS: &[Spec] = &[
    del::SPEC_DEL,
    del::SPEC_UNLINK,
    exists::SPEC,
    key_type::SPEC,
    keys_cmd::SPEC,
    scan::SPEC,
    randomkey::SPEC,
    rename::SPEC_RENAME,
    rename::SPEC_RENAMENX,
    expire::SPEC_EXPIRE,
    expire::SPEC_PEXPIRE,
    expire::SPEC_EXPIREAT,
    expire::SPEC_PEXPIREAT,
    ttl::SPEC_TTL,
    ttl::SPEC_PTTL,
    ttl::SPEC_EXPIRETIME,
    ttl::SPEC_PEXPIRETIME,
    persist::SPEC,
    touch::SPEC,
    copy::SPEC,
    move_key::SPEC,
    dbsize::SPEC,
    flush::SPEC_FLUSHDB,
    flush::SPEC_FLUSHALL,
    swapdb::SPEC,
    object::SPEC,
    sort::SPEC_SORT,
    sort::SPEC_SORT_RO,
    dump::SPEC,
    restore::SPEC,
    restore::SPEC_ASKING,
    migrate::SPEC,
];

/// Parses a C `int` argument as Redis's `getIntFromObjectOrReply` does: not an integer gives
/// `err` (or the usual integer error), an integer outside `int` gives `err` (or Redis's range
/// error).
///
/// # Errors
/// As described.
pub fn parse_int(b: &[u8], err: Option<CmdError>) -> Result<i32, CmdError> {
    let n = match crate::args::parse_i64(b) {
        Ok(n) => n,
        Err(e) => return Err(err.unwrap_or(e)),
    };
    i32::try_from(n).map_err(|_| err.unwrap_or(CmdError::OUT_OF_INT_RANGE))
}

/// Checks a database index argument against the configured number of databases, as Redis's
/// `selectDb` does (the error is `ERR DB index is out of range`).
///
/// # Errors
/// [`CmdError::DbIndexOutOfRange`].
pub fn db_index(index: i32, databases: u32) -> Result<u32, CmdError> {
    u32::try_from(index)
        .ok()
        .filter(|i| *i < databases)
        .ok_or(CmdError::DbIndexOutOfRange)
}

/// Counts the lookups of `keys`, of which `found` were found, one per key as Redis's
/// `lookupKeyRead` does. Only the count is known, which is enough for INFO's hits and misses;
/// when misses are published (`keymiss`), each key is looked up again to name the missing ones.
///
/// # Errors
/// Storage errors.
pub fn count_lookups(
    cx: &Cx,
    r: &relis::Reader<'_>,
    found: i64,
    keys: &[bytes::Bytes],
) -> Result<(), CmdError> {
    if cx.misses_notify() {
        for k in keys {
            cx.hit(k, r.meta(cx.db, k)?.is_some());
        }
        return Ok(());
    }
    let found = found.max(0) as usize;
    for (i, k) in keys.iter().enumerate() {
        cx.hit(k, i < found);
    }
    Ok(())
}
