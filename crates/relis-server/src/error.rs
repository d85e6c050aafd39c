//! Every error text the server sends, in one place, byte for byte as Redis 7.0 words them.
//!
//! A fixed text is an associated constant of [`CmdError`] (`CmdError::TIMEOUT_NEGATIVE`), a text
//! with arguments a constructor beside it (`CmdError::no_group_for_key(key, group)`), both in one
//! `impl CmdError` block per family below. `tests::no_inline_error_texts_outside_this_file`
//! fails when another file of `src/` writes one inline.
//!
//! Three outcomes (STYLE.md): a protocol error closes the connection (see `conn.rs`); a command
//! error ([`CmdError`]) is replied and the connection goes on; an internal error is logged and
//! replied as a short `ERR` without details.

use bytes::Bytes;
use resp::Frame;
use std::borrow::Cow;

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
    /// Any other text, complete with its leading word (`ERR ...`, `EXECABORT ...`): one of the
    /// constants below, or built by one of the functions below.
    Text(Cow<'static, str>),
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
    pub fn text(s: impl Into<Cow<'static, str>>) -> Self {
        CmdError::Text(s.into())
    }

    /// `ERR <msg>`.
    pub fn err(msg: impl AsRef<str>) -> Self {
        CmdError::Text(Cow::Owned(format!("ERR {}", msg.as_ref())))
    }

    /// A fixed text (complete with its code word), for the constants below.
    const fn fixed(s: &'static str) -> Self {
        CmdError::Text(Cow::Borrowed(s))
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
            CmdError::Text(s) => s.to_string(),
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
            E::Hll(relis::HllError::NotHll) => CmdError::NOT_HLL,
            E::Hll(relis::HllError::Corrupted) => CmdError::HLL_CORRUPTED,
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

/// Redis's error for a subcommand's wrong arguments: `sent` is the subcommand as the client
/// spelled it, `parent` the container command.
pub fn subcommand_syntax(sent: &str, parent: &str) -> CmdError {
    CmdError::err(format!(
        "unknown subcommand or wrong number of arguments for '{sent}'. Try {} HELP.",
        parent.to_ascii_uppercase()
    ))
}

/// Redis's unknown-subcommand text.
pub fn unknown_subcommand(cmd: &str, sub: &[u8]) -> CmdError {
    CmdError::text(sanitize(&format!(
        "ERR unknown subcommand '{}'. Try {}.",
        String::from_utf8_lossy(&sub[..sub.len().min(128)]),
        cmd.to_ascii_uppercase() + " HELP"
    )))
}

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

/// `String::from_utf8_lossy` of an argument, for the texts that quote one.
fn lossy(b: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(b)
}

// Argument checks shared by several families (timeouts, counts, numkeys).
impl CmdError {
    /// A blocking command's, WAIT's or CLIENT PAUSE's negative timeout.
    pub const TIMEOUT_NEGATIVE: CmdError = CmdError::fixed("ERR timeout is negative");
    /// A blocking command's timeout that is not a float (seconds).
    pub const TIMEOUT_NOT_FLOAT: CmdError =
        CmdError::fixed("ERR timeout is not a float or out of range");
    /// WAIT's or CLIENT PAUSE's timeout that is not an integer (milliseconds).
    pub const TIMEOUT_NOT_INTEGER: CmdError =
        CmdError::fixed("ERR timeout is not an integer or out of range");
    /// `numkeys` below 1 (LMPOP, ZMPOP, SINTERCARD and their blocking forms).
    pub const NUMKEYS_NOT_POSITIVE: CmdError =
        CmdError::fixed("ERR numkeys should be greater than 0");
    /// `numkeys` beyond the arguments given (EVAL, FCALL, SINTERCARD).
    pub const NUMKEYS_OVER_ARGS: CmdError =
        CmdError::fixed("ERR Number of keys can't be greater than number of args");
    /// A negative `numkeys` (EVAL, FCALL).
    pub const NUMKEYS_NEGATIVE: CmdError = CmdError::fixed("ERR Number of keys can't be negative");
    /// A COUNT below 1 (LMPOP, ZMPOP and their blocking forms).
    pub const COUNT_NOT_POSITIVE: CmdError = CmdError::fixed("ERR count should be greater than 0");
    /// A COUNT below 1 (GEOSEARCH, XAUTOCLAIM).
    pub const COUNT_NOT_ABOVE_ZERO: CmdError = CmdError::fixed("ERR COUNT must be > 0");
    /// A negative count (LPOP/RPOP, SPOP, ZPOPMIN/ZPOPMAX, DEBUG).
    pub const NOT_POSITIVE: CmdError =
        CmdError::fixed("ERR value is out of range, must be positive");
    /// A count whose negation overflows (HRANDFIELD, ZRANDMEMBER).
    pub const OUT_OF_RANGE: CmdError = CmdError::fixed("ERR value is out of range");
    /// A count outside Redis's `long` range minus `LONG_MIN` (HRANDFIELD, SRANDMEMBER,
    /// ZRANDMEMBER).
    pub const OUT_OF_LONG_RANGE: CmdError = CmdError::fixed(
        "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
    );
    /// An integer outside a C `int` (`getIntFromObjectOrReply`).
    pub const OUT_OF_INT_RANGE: CmdError =
        CmdError::fixed("ERR value is out of range, value must between -2147483648 and 2147483647");
    /// A negative LIMIT (SINTERCARD, ZINTERCARD).
    pub const LIMIT_NEGATIVE: CmdError = CmdError::fixed("ERR LIMIT can't be negative");

    /// A set operation given no keys: `at least 1 input key is needed for '<cmd>' command`.
    pub fn no_input_keys(cmd: &str) -> CmdError {
        CmdError::err(format!(
            "at least 1 input key is needed for '{cmd}' command"
        ))
    }
}

// Generic key commands: EXPIRE, SWAPDB, SCAN, SORT, OBJECT, RESTORE, MIGRATE.
impl CmdError {
    /// EXPIRE with NX and another condition.
    pub const EXPIRE_NX_AND_OTHERS: CmdError =
        CmdError::fixed("ERR NX and XX, GT or LT options at the same time are not compatible");
    /// EXPIRE with both GT and LT.
    pub const EXPIRE_GT_AND_LT: CmdError =
        CmdError::fixed("ERR GT and LT options at the same time are not compatible");
    /// SWAPDB's first index that is not a C `int`.
    pub const SWAPDB_FIRST: CmdError = CmdError::fixed("ERR invalid first DB index");
    /// SWAPDB's second index that is not a C `int`.
    pub const SWAPDB_SECOND: CmdError = CmdError::fixed("ERR invalid second DB index");
    /// SCAN/HSCAN/SSCAN/ZSCAN with a cursor that is not a number.
    pub const INVALID_CURSOR: CmdError = CmdError::fixed("ERR invalid cursor");
    /// SORT of elements (or BY values) that are not numbers, without ALPHA.
    pub const SORT_NOT_DOUBLE: CmdError =
        CmdError::fixed("ERR One or more scores can't be converted into double");
    /// OBJECT FREQ while the eviction policy is not an LFU one.
    pub const OBJECT_NO_LFU: CmdError = CmdError::fixed("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.");
    /// OBJECT IDLETIME while the eviction policy is an LFU one.
    pub const OBJECT_LFU: CmdError = CmdError::fixed("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.");
    /// RESTORE on an existing key without REPLACE.
    pub const BUSYKEY: CmdError = CmdError::fixed("BUSYKEY Target key name already exists.");
    /// RESTORE of a payload with a bad footer (too short, newer RDB version, CRC mismatch).
    pub const BAD_PAYLOAD: CmdError =
        CmdError::fixed("ERR DUMP payload version or checksum are wrong");
    /// RESTORE of a payload whose content does not decode.
    pub const BAD_DATA: CmdError = CmdError::fixed("ERR Bad data format");
    /// RESTORE with a negative TTL.
    pub const RESTORE_TTL: CmdError = CmdError::fixed("ERR Invalid TTL value, must be >= 0");
    /// RESTORE with a negative IDLETIME.
    pub const RESTORE_IDLETIME: CmdError =
        CmdError::fixed("ERR Invalid IDLETIME value, must be >= 0");
    /// RESTORE with a FREQ outside 0..=255.
    pub const RESTORE_FREQ: CmdError =
        CmdError::fixed("ERR Invalid FREQ value, must be >= 0 and <= 255");
    /// MIGRATE with KEYS and a key argument that is not empty.
    pub const MIGRATE_KEYS_NEEDS_EMPTY_KEY: CmdError = CmdError::fixed(
        "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string",
    );
    /// MIGRATE when the target cannot be reached in time.
    pub const MIGRATE_CONNECT: CmdError =
        CmdError::fixed("IOERR error or timeout connecting to the client");

    /// EXPIRE's unknown option: Redis formats it with `%s`, so it ends at a NUL byte.
    pub fn unsupported_option(option: &[u8]) -> CmdError {
        let end = option.iter().position(|&b| b == 0).unwrap_or(option.len());
        CmdError::text(sanitize(&format!(
            "ERR Unsupported option {}",
            lossy(&option[..end])
        )))
    }

    /// SORT's BY or GET refused because the user may not read every key.
    pub fn sort_denied(option: &str) -> CmdError {
        CmdError::err(format!(
            "{option} option of SORT denied due to insufficient ACL permissions."
        ))
    }

    /// MIGRATE's I/O failure while `doing` ("reading" or "writing").
    pub fn migrate_io(doing: &str) -> CmdError {
        CmdError::text(format!("IOERR error or timeout {doing} to target instance"))
    }

    /// MIGRATE's target replied with an error.
    pub fn migrate_target(reply: &str) -> CmdError {
        CmdError::err(format!("Target instance replied with error: {reply}"))
    }
}

// Strings and bitmaps: DECR, SETRANGE, LCS, SETBIT, BITPOS, BITOP, BITFIELD.
impl CmdError {
    /// DECRBY by `i64::MIN` (its negation overflows).
    pub const DECR_OVERFLOW: CmdError = CmdError::fixed("ERR decrement would overflow");
    /// SETRANGE at a negative offset.
    pub const OFFSET_OUT_OF_RANGE: CmdError = CmdError::fixed("ERR offset is out of range");
    /// LCS with both LEN and IDX.
    pub const LCS_LEN_AND_IDX: CmdError =
        CmdError::fixed("ERR If you want both the length and indexes, please just use IDX.");
    /// LCS of keys that are not strings.
    pub const LCS_NOT_STRINGS: CmdError =
        CmdError::fixed("ERR The specified keys must contain string values");
    /// LCS of strings whose product of lengths overflows.
    pub const LCS_TOO_LONG: CmdError = CmdError::fixed("ERR String too long for LCS");
    /// LCS whose table would pass `proto-max-bulk-len`.
    pub const LCS_NO_MEMORY: CmdError = CmdError::fixed(
        "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len",
    );
    /// A bit offset that is not an integer or is past 2^32 bits (or `proto-max-bulk-len`).
    pub const BIT_OFFSET: CmdError =
        CmdError::fixed("ERR bit offset is not an integer or out of range");
    /// SETBIT's value that is not 0 or 1.
    pub const BIT_VALUE: CmdError = CmdError::fixed("ERR bit is not an integer or out of range");
    /// BITPOS's bit that is not 0 or 1.
    pub const BIT_ARGUMENT: CmdError = CmdError::fixed("ERR The bit argument must be 1 or 0.");
    /// BITOP NOT with more than one source.
    pub const BITOP_NOT_ONE_KEY: CmdError =
        CmdError::fixed("ERR BITOP NOT must be called with a single source key.");
    /// BITFIELD's type that is not `i1`..`i64` or `u1`..`u63`.
    pub const BITFIELD_TYPE: CmdError = CmdError::fixed("ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.");
    /// BITFIELD OVERFLOW other than WRAP, SAT or FAIL.
    pub const BITFIELD_OVERFLOW: CmdError = CmdError::fixed("ERR Invalid OVERFLOW type specified");
    /// BITFIELD_RO with SET or INCRBY.
    pub const BITFIELD_RO_GET_ONLY: CmdError =
        CmdError::fixed("ERR BITFIELD_RO only supports the GET subcommand");
}

// Hashes, lists, sorted sets.
impl CmdError {
    /// HINCRBY of a field that is not an integer.
    pub const HASH_NOT_INTEGER: CmdError = CmdError::fixed("ERR hash value is not an integer");
    /// HINCRBYFLOAT of a field that is not a float.
    pub const HASH_NOT_FLOAT: CmdError = CmdError::fixed("ERR hash value is not a float");
    /// HINCRBYFLOAT by NaN or an infinity.
    pub const VALUE_NAN_OR_INFINITY: CmdError = CmdError::fixed("ERR value is NaN or Infinity");
    /// LSET past the list's end.
    pub const INDEX_OUT_OF_RANGE: CmdError = CmdError::fixed("ERR index out of range");
    /// LPOS RANK 0.
    pub const LPOS_RANK_ZERO: CmdError = CmdError::fixed("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list");
    /// LPOS with a negative COUNT.
    pub const LPOS_COUNT_NEGATIVE: CmdError = CmdError::fixed("ERR COUNT can't be negative");
    /// LPOS with a negative MAXLEN.
    pub const LPOS_MAXLEN_NEGATIVE: CmdError = CmdError::fixed("ERR MAXLEN can't be negative");
    /// ZADD with XX and NX.
    pub const ZADD_XX_AND_NX: CmdError =
        CmdError::fixed("ERR XX and NX options at the same time are not compatible");
    /// ZADD with GT, LT and NX mixed.
    pub const ZADD_GT_LT_NX: CmdError =
        CmdError::fixed("ERR GT, LT, and/or NX options at the same time are not compatible");
    /// ZADD INCR with more than one pair.
    pub const ZADD_INCR_PAIRS: CmdError =
        CmdError::fixed("ERR INCR option supports a single increment-element pair");
    /// ZADD INCR / ZINCRBY that would make a NaN score.
    pub const SCORE_NAN: CmdError = CmdError::fixed("ERR resulting score is not a number (NaN)");
    /// A score range bound that does not parse.
    pub const MIN_MAX_NOT_FLOAT: CmdError = CmdError::fixed("ERR min or max is not a float");
    /// A lexicographic range bound without `[`, `(`, `-` or `+`.
    pub const MIN_MAX_NOT_LEX: CmdError =
        CmdError::fixed("ERR min or max not valid string range item");
    /// ZRANGE with LIMIT but neither BYSCORE nor BYLEX.
    pub const ZRANGE_LIMIT: CmdError = CmdError::fixed(
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
    );
    /// ZRANGE BYLEX WITHSCORES.
    pub const ZRANGE_BYLEX_WITHSCORES: CmdError =
        CmdError::fixed("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
    /// ZUNION/ZINTER WEIGHTS that is not a float.
    pub const WEIGHT_NOT_FLOAT: CmdError = CmdError::fixed("ERR weight value is not a float");
}

// Geo.
impl CmdError {
    /// A distance unit other than M, KM, FT, MI.
    pub const GEO_UNIT: CmdError =
        CmdError::fixed("ERR unsupported unit provided. please use M, KM, FT, MI");
    /// A member whose score is not a valid geohash.
    pub const GEO_DECODE: CmdError = CmdError::fixed("ERR could not decode requested zset member");
    /// BYRADIUS without a number.
    pub const GEO_NEED_RADIUS: CmdError = CmdError::fixed("ERR need numeric radius");
    /// A negative radius.
    pub const GEO_RADIUS_NEGATIVE: CmdError = CmdError::fixed("ERR radius cannot be negative");
    /// BYBOX without a numeric width.
    pub const GEO_NEED_WIDTH: CmdError = CmdError::fixed("ERR need numeric width");
    /// BYBOX without a numeric height.
    pub const GEO_NEED_HEIGHT: CmdError = CmdError::fixed("ERR need numeric height");
    /// BYBOX with a negative side.
    pub const GEO_BOX_NEGATIVE: CmdError =
        CmdError::fixed("ERR height or width cannot be negative");
    /// ANY without COUNT.
    pub const GEO_ANY_NEEDS_COUNT: CmdError =
        CmdError::fixed("ERR the ANY argument requires COUNT argument");
    /// GEOSEARCHSTORE with WITHDIST, WITHHASH or WITHCOORD.
    pub const GEOSEARCHSTORE_WITH: CmdError = CmdError::fixed(
        "ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options",
    );
    /// GEORADIUS STORE with WITHDIST, WITHHASH or WITHCOORD.
    pub const GEORADIUS_STORE_WITH: CmdError = CmdError::fixed(
        "ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options",
    );

    /// A longitude/latitude pair outside the mappable range.
    pub fn geo_pair(lon: &str, lat: &str) -> CmdError {
        CmdError::err(format!("invalid longitude,latitude pair {lon},{lat}"))
    }

    /// GEOSEARCH without (or with both) FROMMEMBER and FROMLONLAT; `cmd` as the client sent it.
    pub fn geo_one_from(cmd: &str) -> CmdError {
        CmdError::err(format!(
            "exactly one of FROMMEMBER or FROMLONLAT can be specified for {cmd}"
        ))
    }

    /// GEOSEARCH without (or with both) BYRADIUS and BYBOX; `cmd` as the client sent it.
    pub fn geo_one_by(cmd: &str) -> CmdError {
        CmdError::err(format!(
            "exactly one of BYRADIUS and BYBOX can be specified for {cmd}"
        ))
    }
}

// HyperLogLog.
impl CmdError {
    /// A PF* command on a string that is not a HyperLogLog.
    pub const NOT_HLL: CmdError =
        CmdError::fixed("WRONGTYPE Key is not a valid HyperLogLog string value.");
    /// A HyperLogLog whose registers do not decode.
    pub const HLL_CORRUPTED: CmdError = CmdError::fixed("INVALIDOBJ Corrupted HLL object detected");
    /// PFDEBUG on a missing key.
    pub const PFDEBUG_NO_KEY: CmdError = CmdError::fixed("ERR The specified key does not exist");
    /// PFDEBUG DECODE of a dense HyperLogLog.
    pub const PFDEBUG_NOT_SPARSE: CmdError = CmdError::fixed("ERR HLL encoding is not sparse");

    /// PFDEBUG's unknown subcommand.
    pub fn pfdebug_unknown(sub: &[u8]) -> CmdError {
        CmdError::text(sanitize(&format!(
            "ERR Unknown PFDEBUG subcommand '{}'",
            lossy(sub)
        )))
    }

    /// PFSELFTEST's failure.
    pub fn pfselftest(failure: impl std::fmt::Display) -> CmdError {
        CmdError::err(failure.to_string())
    }
}

// Streams.
impl CmdError {
    /// An ID argument that does not parse.
    pub const INVALID_STREAM_ID: CmdError =
        CmdError::fixed("ERR Invalid stream ID specified as stream command argument");
    /// An exclusive range start that cannot be incremented.
    pub const INVALID_START_ID: CmdError = CmdError::fixed("ERR invalid start ID for the interval");
    /// An exclusive range end that cannot be decremented.
    pub const INVALID_END_ID: CmdError = CmdError::fixed("ERR invalid end ID for the interval");
    /// XADD/XTRIM with both MAXLEN and MINID.
    pub const TRIM_MAXLEN_AND_MINID: CmdError = CmdError::fixed(
        "ERR syntax error, MAXLEN and MINID options at the same time are not compatible",
    );
    /// A negative MAXLEN.
    pub const TRIM_MAXLEN_NEGATIVE: CmdError =
        CmdError::fixed("ERR The MAXLEN argument must be >= 0.");
    /// A negative LIMIT.
    pub const TRIM_LIMIT_NEGATIVE: CmdError =
        CmdError::fixed("ERR The LIMIT argument must be >= 0.");
    /// XADD with LIMIT but no MAXLEN or MINID.
    pub const TRIM_LIMIT_WITHOUT_STRATEGY: CmdError = CmdError::fixed(
        "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy",
    );
    /// XTRIM without MAXLEN or MINID.
    pub const TRIM_NO_STRATEGY: CmdError =
        CmdError::fixed("ERR syntax error, XTRIM must be called with a trimming strategy");
    /// LIMIT with an exact (`=`) trim.
    pub const TRIM_LIMIT_WITHOUT_TILDE: CmdError =
        CmdError::fixed("ERR syntax error, LIMIT cannot be used without the special ~ option");
    /// XADD with the ID 0-0.
    pub const XADD_ID_ZERO: CmdError =
        CmdError::fixed("ERR The ID specified in XADD must be greater than 0-0");
    /// XSETID with a negative ENTRIESADDED.
    pub const XSETID_ENTRIES_ADDED: CmdError =
        CmdError::fixed("ERR entries_added must be positive");
    /// XSETID with an ID below MAXDELETEDID.
    pub const XSETID_BELOW_MAX_DELETED: CmdError = CmdError::fixed(
        "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id",
    );
    /// XGROUP's ENTRIESREAD below -1.
    pub const XGROUP_ENTRIES_READ: CmdError =
        CmdError::fixed("ERR value for ENTRIESREAD must be positive or -1");
    /// XGROUP CREATE on a missing key without MKSTREAM (and the other subcommands).
    pub const XGROUP_NO_KEY: CmdError = CmdError::fixed("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.");
    /// XREAD with the `>` ID.
    pub const XREAD_GT_ID: CmdError = CmdError::fixed("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.");
    /// XREADGROUP without GROUP.
    pub const XREADGROUP_NO_GROUP_OPTION: CmdError =
        CmdError::fixed("ERR Missing GROUP option for XREADGROUP");
    /// XREADGROUP with the `$` ID.
    pub const XREADGROUP_DOLLAR: CmdError = CmdError::fixed("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.");
    /// A blocked XREADGROUP whose group was destroyed.
    pub const XREADGROUP_GROUP_GONE: CmdError =
        CmdError::fixed("NOGROUP the consumer group this client was blocked on no longer exists");
    /// XAUTOCLAIM's min-idle-time that is not an integer.
    pub const XAUTOCLAIM_MIN_IDLE: CmdError =
        CmdError::fixed("ERR Invalid min-idle-time argument for XAUTOCLAIM");
    /// XAUTOCLAIM's COUNT past what Redis allocates.
    pub const XAUTOCLAIM_COUNT: CmdError = CmdError::fixed(
        "ERR Insufficient memory, failed allocating transient memory, COUNT too high.",
    );
    /// XCLAIM's min-idle-time that is not an integer.
    pub const XCLAIM_MIN_IDLE: CmdError =
        CmdError::fixed("ERR Invalid min-idle-time argument for XCLAIM");
    /// XCLAIM's IDLE that is not an integer.
    pub const XCLAIM_IDLE: CmdError =
        CmdError::fixed("ERR Invalid IDLE option argument for XCLAIM");
    /// XCLAIM's RETRYCOUNT that is not an integer.
    pub const XCLAIM_RETRYCOUNT: CmdError =
        CmdError::fixed("ERR Invalid RETRYCOUNT option argument for XCLAIM");
    /// XCLAIM's TIME that is not an integer.
    pub const XCLAIM_TIME: CmdError =
        CmdError::fixed("ERR Invalid TIME option argument for XCLAIM");

    /// XCLAIM's unknown option.
    pub fn xclaim_option(option: &[u8]) -> CmdError {
        CmdError::err(format!("Unrecognized XCLAIM option '{}'", lossy(option)))
    }

    /// XGROUP and XINFO on a group the stream does not have.
    pub fn no_group_for_key(key: &[u8], group: &[u8]) -> CmdError {
        CmdError::text(format!(
            "NOGROUP No such consumer group '{}' for key name '{}'",
            lossy(group),
            lossy(key)
        ))
    }

    /// XPENDING and XCLAIM on a missing key or group.
    pub fn no_key_or_group(key: &[u8], group: &[u8]) -> CmdError {
        CmdError::text(format!(
            "NOGROUP No such key '{}' or consumer group '{}'",
            lossy(key),
            lossy(group)
        ))
    }

    /// XREADGROUP on a missing key or group.
    pub fn xreadgroup_no_group(key: &[u8], group: &[u8]) -> CmdError {
        CmdError::text(format!(
            "NOGROUP No such key '{}' or consumer group '{}' in XREADGROUP with GROUP option",
            lossy(key),
            lossy(group)
        ))
    }
}

// Transactions.
impl CmdError {
    /// EXEC outside MULTI.
    pub const EXEC_WITHOUT_MULTI: CmdError = CmdError::fixed("ERR EXEC without MULTI");
    /// DISCARD outside MULTI.
    pub const DISCARD_WITHOUT_MULTI: CmdError = CmdError::fixed("ERR DISCARD without MULTI");
    /// MULTI inside MULTI.
    pub const MULTI_NESTED: CmdError = CmdError::fixed("ERR MULTI calls can not be nested");
    /// WATCH inside MULTI.
    pub const WATCH_IN_MULTI: CmdError = CmdError::fixed("ERR WATCH inside MULTI is not allowed");
    /// A `no_multi` command inside MULTI.
    pub const NOT_IN_MULTI: CmdError =
        CmdError::fixed("ERR Command not allowed inside a transaction");
    /// EXEC of a transaction with a rejected command.
    pub const EXECABORT: CmdError =
        CmdError::fixed("EXECABORT Transaction discarded because of previous errors.");

    /// EXEC of a transaction that a check at EXEC time refuses (`msg` without its `ERR `).
    pub fn execabort_because(msg: &str) -> CmdError {
        CmdError::text(format!("EXECABORT Transaction discarded because of: {msg}"))
    }
}

// Connections: AUTH, HELLO, CLIENT, CLIENT TRACKING/CACHING, MONITOR.
impl CmdError {
    /// AUTH or HELLO with a wrong password or a disabled user.
    pub const WRONGPASS: CmdError =
        CmdError::fixed("WRONGPASS invalid username-password pair or user is disabled.");
    /// AUTH with one argument while the default user has no password.
    pub const AUTH_NO_PASSWORD: CmdError = CmdError::fixed("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?");
    /// HELLO with a version that is not an integer.
    pub const HELLO_VERSION: CmdError =
        CmdError::fixed("ERR Protocol version is not an integer or out of range");
    /// HELLO with a version other than 2 or 3.
    pub const NOPROTO: CmdError = CmdError::fixed("NOPROTO unsupported protocol version");
    /// HELLO before authentication, without AUTH.
    pub const HELLO_NOAUTH: CmdError = CmdError::fixed("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time");
    /// CLIENT SETNAME (or HELLO SETNAME) with a space or a control character.
    pub const CLIENT_NAME: CmdError =
        CmdError::fixed("ERR Client names cannot contain spaces, newlines or special characters.");
    /// CLIENT UNBLOCK with a reason other than TIMEOUT or ERROR.
    pub const UNBLOCK_REASON: CmdError =
        CmdError::fixed("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
    /// The reply of a client unblocked by CLIENT UNBLOCK ... ERROR.
    pub const UNBLOCKED: CmdError =
        CmdError::fixed("UNBLOCKED client unblocked via CLIENT UNBLOCK");
    /// CLIENT PAUSE with a mode other than WRITE or ALL.
    pub const PAUSE_MODE: CmdError = CmdError::fixed("ERR CLIENT PAUSE mode must be WRITE or ALL");
    /// CLIENT KILL ID with an ID below 1.
    pub const CLIENT_ID_NOT_POSITIVE: CmdError =
        CmdError::fixed("ERR client-id should be greater than 0");
    /// CLIENT KILL that matched nobody (old form).
    pub const NO_SUCH_CLIENT: CmdError = CmdError::fixed("ERR No such client");
    /// CLIENT LIST ID with an ID that is not a number.
    pub const INVALID_CLIENT_ID: CmdError = CmdError::fixed("ERR Invalid client ID");
    /// CLIENT TRACKING with REDIRECT twice.
    pub const TRACKING_ONE_REDIRECT: CmdError =
        CmdError::fixed("ERR A client can only redirect to a single other client");
    /// CLIENT TRACKING REDIRECT to a client that is not connected.
    pub const TRACKING_NO_REDIRECT_TARGET: CmdError =
        CmdError::fixed("ERR The client ID you want redirect to does not exist");
    /// CLIENT TRACKING PREFIX without BCAST.
    pub const TRACKING_PREFIX_NEEDS_BCAST: CmdError =
        CmdError::fixed("ERR PREFIX option requires BCAST mode to be enabled");
    /// CLIENT TRACKING switching BCAST while on.
    pub const TRACKING_SWITCH_BCAST: CmdError = CmdError::fixed("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.");
    /// CLIENT TRACKING with BCAST and OPTIN or OPTOUT.
    pub const TRACKING_OPT_AND_BCAST: CmdError =
        CmdError::fixed("ERR OPTIN and OPTOUT are not compatible with BCAST");
    /// CLIENT TRACKING with OPTIN and OPTOUT.
    pub const TRACKING_OPTIN_AND_OPTOUT: CmdError =
        CmdError::fixed("ERR You can't specify both OPTIN mode and OPTOUT mode");
    /// CLIENT TRACKING switching OPTIN/OPTOUT while on.
    pub const TRACKING_SWITCH_OPT: CmdError = CmdError::fixed("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.");
    /// CLIENT TRACKING BCAST with overlapping prefixes.
    pub const TRACKING_PREFIX_OVERLAP: CmdError = CmdError::fixed("ERR prefix check failed");
    /// CLIENT CACHING without OPTIN or OPTOUT tracking.
    pub const CACHING_NOT_OPT: CmdError = CmdError::fixed("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled");
    /// CLIENT CACHING YES outside OPTIN.
    pub const CACHING_YES: CmdError = CmdError::fixed(
        "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.",
    );
    /// CLIENT CACHING NO outside OPTOUT.
    pub const CACHING_NO: CmdError = CmdError::fixed(
        "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.",
    );
    /// MONITOR from a client that may not block (inside MULTI or a script).
    pub const MONITOR_DENY_BLOCKING: CmdError =
        CmdError::fixed("ERR MONITOR isn't allowed for DENY BLOCKING client");

    /// HELLO's unknown or incomplete option.
    pub fn hello_option(option: &[u8]) -> CmdError {
        CmdError::err(format!("Syntax error in HELLO option '{}'", lossy(option)))
    }

    /// CLIENT SETINFO's attribute other than LIB-NAME or LIB-VER.
    pub fn setinfo_option(attr: &str) -> CmdError {
        CmdError::err(format!("Unrecognized option '{attr}'"))
    }

    /// CLIENT SETINFO's value with a space or a control character.
    pub fn setinfo_value(attr: &str) -> CmdError {
        CmdError::err(format!(
            "{attr} cannot contain spaces, newlines or special characters."
        ))
    }

    /// CLIENT KILL USER of a user that does not exist.
    pub fn no_such_user(user: &str) -> CmdError {
        CmdError::err(format!("No such user '{user}'"))
    }

    /// CLIENT LIST / CLIENT KILL TYPE with an unknown type.
    pub fn client_type(given: &[u8]) -> CmdError {
        CmdError::err(format!("Unknown client type '{}'", lossy(given)))
    }
}

// Dispatch checks before a command runs (client.rs).
impl CmdError {
    /// A write (or may-replicate) command from a connection marked as a replica.
    pub const REPLICA_KEYSPACE: CmdError =
        CmdError::fixed("ERR Replica can't interact with the keyspace");

    /// DEBUG or MODULE refused by `enable-debug-command` / `enable-module-command`.
    pub fn protected_command(what: &str, setting: &str) -> CmdError {
        CmdError::err(format!("{what} command not allowed. If the {setting} option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."))
    }

    /// A command the PostgreSQL backend cannot run yet (keyspace-wide, or touching keys it
    /// does not declare; README "PostgreSQL backend").
    pub fn not_on_postgres(cmd: &str) -> CmdError {
        let cmd = cmd.replace('|', " ");
        CmdError::err(format!(
            "'{cmd}' is not supported with the postgres backend yet"
        ))
    }

    /// A command other than the pub/sub ones in RESP2 subscribed context.
    pub fn subscribed_context(cmd: &str) -> CmdError {
        CmdError::err(format!("Can't execute '{cmd}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"))
    }
}

// ACL refusals and the ACL command.
impl CmdError {
    /// A key the user may not touch (also a SQL morph's key).
    pub const NOPERM_KEYS: CmdError = CmdError::fixed(
        "NOPERM this user has no permissions to access one of the keys used as arguments",
    );
    /// A channel the user may not use.
    pub const NOPERM_CHANNELS: CmdError = CmdError::fixed(
        "NOPERM this user has no permissions to access one of the channels used as arguments",
    );
    /// A script's command the user may not run.
    pub const SCRIPT_NOPERM_COMMAND: CmdError =
        CmdError::fixed("ERR The user executing the script can't run this command or subcommand");
    /// A script's key the user may not touch.
    pub const SCRIPT_NOPERM_KEYS: CmdError = CmdError::fixed("ERR The user executing the script can't access at least one of the keys mentioned in the command arguments");
    /// A script's channel the user may not publish to.
    pub const SCRIPT_NOPERM_CHANNEL: CmdError = CmdError::fixed(
        "ERR The user executing the script can't publish to the channel mentioned in the command",
    );
    /// ACL DELUSER default.
    pub const ACL_DEFAULT_USER: CmdError =
        CmdError::fixed("ERR The 'default' user cannot be removed");
    /// ACL GENPASS with bits that are not 1..=4096.
    pub const ACL_GENPASS: CmdError = CmdError::fixed("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096");
    /// ACL LOAD / ACL SAVE without an ACL file.
    pub const ACL_NO_FILE: CmdError = CmdError::fixed("ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.");
    /// ACL SAVE that could not write the file.
    pub const ACL_SAVE: CmdError = CmdError::fixed("ERR There was an error trying to save the ACLs. Please check the server logs for more information");

    /// A command the user may not run.
    pub fn noperm_command(cmd: &str) -> CmdError {
        CmdError::text(format!(
            "NOPERM this user has no permissions to run the '{cmd}' command"
        ))
    }

    /// A queued command that EXEC finds no longer allowed; `reason` says what is refused.
    pub fn exec_noperm(reason: &str) -> CmdError {
        CmdError::text(format!(
            "NOPERM ACLs rules changed between the moment the transaction was accumulated and \
             the EXEC call. This command is no longer allowed for the following reason: {reason}"
        ))
    }

    /// ACL CAT of an unknown category.
    pub fn acl_category(name: &str) -> CmdError {
        CmdError::err(format!("Unknown category '{name}'"))
    }

    /// ACL DRYRUN of an unknown user.
    pub fn acl_no_user(name: &str) -> CmdError {
        CmdError::err(format!("User '{name}' not found"))
    }

    /// ACL DRYRUN of an unknown command.
    pub fn acl_no_command(name: &str) -> CmdError {
        CmdError::err(format!("Command '{name}' not found"))
    }
}

// Server commands: COMMAND, CONFIG, DEBUG, SAVE, SHUTDOWN, MODULE, SLOWLOG, LATENCY.
impl CmdError {
    /// COMMAND GETKEYS of an unknown command.
    pub const COMMAND_UNKNOWN: CmdError = CmdError::fixed("ERR Invalid command specified");
    /// COMMAND GETKEYS of a command without keys.
    pub const COMMAND_NO_KEYS: CmdError = CmdError::fixed("ERR The command has no key arguments");
    /// COMMAND GETKEYS with the wrong arity.
    pub const COMMAND_ARITY: CmdError =
        CmdError::fixed("ERR Invalid number of arguments specified for command");
    /// COMMAND GETKEYS whose key positions do not parse.
    pub const COMMAND_ARGUMENTS: CmdError =
        CmdError::fixed("ERR Invalid arguments specified for command");
    /// CONFIG REWRITE without a config file.
    pub const CONFIG_NO_FILE: CmdError =
        CmdError::fixed("ERR The server is running without a config file");
    /// DEBUG PROTOCOL with an unknown type.
    pub const DEBUG_PROTOCOL: CmdError = CmdError::fixed("ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false");
    /// DEBUG RELOAD with an unknown option.
    pub const DEBUG_RELOAD_OPTION: CmdError =
        CmdError::fixed("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
    /// DEBUG's RESP3-only replies asked over RESP2.
    pub const DEBUG_RESP2: CmdError = CmdError::fixed("ERR RESP2 is not supported by this command");
    /// BGSAVE while a save runs.
    pub const SAVE_IN_PROGRESS: CmdError =
        CmdError::fixed("ERR Background save already in progress");
    /// SAVE that failed: Redis replies a bare `-ERR` and logs the reason.
    pub const SAVE_FAILED: CmdError = CmdError::fixed("ERR");
    /// SHUTDOWN ABORT with no shutdown waiting.
    pub const NO_SHUTDOWN: CmdError = CmdError::fixed("ERR No shutdown in progress.");
    /// SHUTDOWN that could not save.
    pub const SHUTDOWN_FAILED: CmdError =
        CmdError::fixed("ERR Errors trying to SHUTDOWN. Check logs.");
    /// MODULE LOAD: Relis has no modules.
    pub const NO_MODULES: CmdError =
        CmdError::fixed("ERR Error loading the extension. Relis does not support modules.");
    /// MODULE UNLOAD of any name.
    pub const NO_SUCH_MODULE: CmdError =
        CmdError::fixed("ERR Error unloading module: no such module with that name");
    /// SLOWLOG GET with a count below -1.
    pub const SLOWLOG_COUNT: CmdError =
        CmdError::fixed("ERR count should be greater than or equal to -1");

    /// CONFIG SET whose `name` cannot take the value, for `why`.
    pub fn config_set(name: &str, why: &str) -> CmdError {
        CmdError::err(format!(
            "CONFIG SET failed (possibly related to argument '{name}') - {why}"
        ))
    }

    /// CONFIG SET of an unknown parameter (or a missing value).
    pub fn config_unknown(name: &str) -> CmdError {
        CmdError::err(format!(
            "Unknown option or number of arguments for CONFIG SET - '{name}'"
        ))
    }

    /// CONFIG REWRITE that could not write the file.
    pub fn config_rewrite(e: impl std::fmt::Display) -> CmdError {
        CmdError::err(format!("Rewriting config file: {e}"))
    }

    /// DEBUG's unknown subcommand (or a known one with wrong arguments).
    pub fn debug_subcommand(sub: &[u8]) -> CmdError {
        CmdError::err(format!(
            "unknown subcommand or wrong number of arguments for '{}'. Try DEBUG HELP.",
            lossy(sub)
        ))
    }

    /// DEBUG subcommands about Redis's in-memory structures, which Relis does not have.
    pub fn debug_not_here(sub: &str) -> CmdError {
        CmdError::text(format!(
            "ERR DEBUG {} does not apply to Relis (it keeps its data in SQLite, not in Redis's structures)",
            sub.to_ascii_uppercase()
        ))
    }

    /// DEBUG RELOAD that could not load what it saved.
    pub fn debug_reload(e: impl std::fmt::Display) -> CmdError {
        CmdError::err(format!("Error trying to load the RDB dump: {e}"))
    }

    /// DEBUG RELOAD whose reloaded keyspace differs from the live one.
    pub fn debug_reload_digest(stored: &str, live: &str) -> CmdError {
        CmdError::err(format!("Error trying to load the RDB dump: the file's keyspace differs from the live one (digest {stored} instead of {live})"))
    }

    /// LATENCY GRAPH of an event without samples.
    pub fn latency_no_samples(event: &[u8]) -> CmdError {
        CmdError::err(format!("No samples available for event '{}'", lossy(event)))
    }
}

// Scripting: EVAL, FCALL, SCRIPT, FUNCTION, and what scripts call.
impl CmdError {
    /// What replies to any command but SCRIPT KILL / SHUTDOWN NOSAVE while a script runs long.
    pub const BUSY_SCRIPT: CmdError = CmdError::fixed(
        "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.",
    );
    /// As [`CmdError::BUSY_SCRIPT`], while a function runs long.
    pub const BUSY_FUNCTION: CmdError = CmdError::fixed(
        "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.",
    );
    /// SCRIPT KILL / FUNCTION KILL with nothing running.
    pub const NOTBUSY: CmdError = CmdError::fixed("NOTBUSY No scripts in execution right now.");
    /// SCRIPT KILL of a script that has written.
    pub const UNKILLABLE: CmdError = CmdError::fixed("UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.");
    /// EVALSHA of an unknown SHA1.
    pub const NOSCRIPT: CmdError = CmdError::fixed("NOSCRIPT No matching script. Please use EVAL.");
    /// A Lua error that is neither a table nor a string.
    pub const LUA_EXECUTION_FAILURE: CmdError = CmdError::fixed("ERR execution failure");
    /// FCALL of an unknown function.
    pub const FUNCTION_NOT_FOUND: CmdError = CmdError::fixed("ERR Function not found");
    /// EVAL_RO/FCALL_RO of a script that may write.
    pub const SCRIPT_RO_WRITE: CmdError =
        CmdError::fixed("ERR Can not execute a script with write flag using *_ro command.");
    /// FCALL's numkeys that is not an integer.
    pub const FCALL_NUMKEYS: CmdError = CmdError::fixed("ERR Bad number of keys provided");
    /// SCRIPT FLUSH with an option other than SYNC or ASYNC.
    pub const SCRIPT_FLUSH_OPTION: CmdError =
        CmdError::fixed("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    /// SCRIPT DEBUG inside a pipeline or MULTI.
    pub const SCRIPT_DEBUG_PIPELINE: CmdError =
        CmdError::fixed("ERR SCRIPT DEBUG must be called outside a pipeline");
    /// SCRIPT DEBUG with a mode other than YES, SYNC or NO.
    pub const SCRIPT_DEBUG_MODE: CmdError = CmdError::fixed("ERR Use SCRIPT DEBUG YES/SYNC/NO");
    /// SCRIPT DEBUG YES and SYNC: Relis has no Lua debugger.
    pub const NO_DEBUGGER: CmdError = CmdError::fixed(
        "ERR Relis has no Lua debugger: SCRIPT DEBUG YES and SYNC are not supported (NO is)",
    );
    /// FUNCTION FLUSH with an option other than SYNC or ASYNC.
    pub const FUNCTION_FLUSH_OPTION: CmdError =
        CmdError::fixed("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
    /// FUNCTION DELETE without a name.
    pub const FUNCTION_NO_LIBRARY_NAME: CmdError =
        CmdError::fixed("ERR library name argument was not given");
    /// FUNCTION RESTORE with an unknown policy.
    pub const FUNCTION_RESTORE_POLICY: CmdError = CmdError::fixed(
        "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.",
    );
    /// FUNCTION DELETE of an unknown library.
    pub const LIBRARY_NOT_FOUND: CmdError = CmdError::fixed("ERR Library not found");
    /// FUNCTION LOAD of a body without a shebang.
    pub const LIBRARY_NO_METADATA: CmdError = CmdError::fixed("ERR Missing library metadata");
    /// FUNCTION LOAD of a shebang without `name=`.
    pub const LIBRARY_NO_NAME: CmdError = CmdError::fixed("ERR Library name was not given");
    /// FUNCTION LOAD of a library with a bad name.
    pub const LIBRARY_NAME: CmdError = CmdError::fixed("ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long");
    /// FUNCTION LOAD of a library that registers nothing.
    pub const NO_FUNCTIONS: CmdError = CmdError::fixed("ERR No functions registered");
    /// FUNCTION LOAD of a library that runs past the time limit.
    pub const FUNCTION_LOAD_TIMEOUT: CmdError =
        CmdError::fixed("ERR Error registering functions: ERR FUNCTION LOAD timeout");
    /// `redis.call` of an unknown command.
    pub const SCRIPT_UNKNOWN_COMMAND: CmdError =
        CmdError::fixed("ERR Unknown Redis command called from script");
    /// `redis.call` with the wrong number of arguments.
    pub const SCRIPT_ARITY: CmdError =
        CmdError::fixed("ERR Wrong number of args calling Redis command from script");
    /// `redis.call` of a `noscript` command.
    pub const SCRIPT_NOSCRIPT_COMMAND: CmdError =
        CmdError::fixed("ERR This Redis command is not allowed from script");
    /// `redis.call` of a write from a read-only script.
    pub const SCRIPT_READONLY: CmdError =
        CmdError::fixed("ERR Write commands are not allowed from read-only scripts.");
    /// `redis.call` with an argument that is not a string or a number.
    pub const SCRIPT_ARGUMENT_TYPE: &'static str =
        "ERR Lua redis lib command arguments must be strings or integers";
    /// `redis.call` without arguments.
    pub const SCRIPT_NO_ARGUMENTS: &'static str =
        "ERR Please specify at least one argument for this redis lib call";
    /// A Lua reply nested past the stack limit.
    pub const LUA_STACK_LIMIT: &'static str = "ERR reached lua stack limit";

    /// The reply to a script stopped by SCRIPT KILL / FUNCTION KILL, with where the hook
    /// stopped it (`source`, `line`) when known.
    pub fn script_killed(name: &str, at: Option<(&str, i64)>) -> CmdError {
        let msg = "ERR Script killed by user with SCRIPT KILL...";
        match at {
            Some((source, line)) => CmdError::text(sanitize(&format!(
                "{msg} script: {name}, on {source}:{line}."
            ))),
            None => CmdError::text(msg),
        }
    }

    /// `redis.call` of XREAD/XREADGROUP with BLOCK; `cmd` as the script typed it.
    pub fn script_block(cmd: &[u8]) -> CmdError {
        CmdError::err(format!(
            "{} command is not allowed with BLOCK option from scripts",
            lossy(cmd)
        ))
    }

    /// EVAL of a script that does not compile.
    pub fn script_compile(lua_message: &str) -> CmdError {
        CmdError::text(sanitize(&format!(
            "ERR Error compiling script (new function): {lua_message}"
        )))
    }

    /// A script that failed without an error table (`message` clipped by the caller).
    pub fn script_run(name: &str, message: &str) -> CmdError {
        CmdError::text(sanitize(&format!(
            "ERR Error running script {name}, {message}"
        )))
    }

    /// EVAL's shebang naming another engine.
    pub fn shebang_engine(line: &str) -> CmdError {
        CmdError::err(format!("Unexpected engine in script shebang: {line}"))
    }

    /// EVAL's shebang with an unknown option.
    pub fn shebang_option(option: &str) -> CmdError {
        CmdError::err(format!("Unknown lua shebang option: {option}"))
    }

    /// EVAL's shebang with an unknown flag.
    pub fn shebang_flag(flag: &str) -> CmdError {
        CmdError::err(format!("Unexpected flag in script shebang: {flag}"))
    }

    /// FUNCTION LOAD's shebang naming another engine.
    pub fn function_engine(engine: &str) -> CmdError {
        CmdError::err(format!("Engine '{engine}' not found"))
    }

    /// FUNCTION LOAD's shebang with an unknown `key=value`.
    pub fn function_metadata(part: &str) -> CmdError {
        CmdError::err(format!("Invalid metadata value given: {part}"))
    }

    /// FUNCTION LOAD of a body that does not compile.
    pub fn function_compile(lua_message: &str) -> CmdError {
        CmdError::text(sanitize(&format!(
            "ERR Error compiling function: {lua_message}"
        )))
    }

    /// FUNCTION LOAD of a body that raised while registering; `error` is the complete text
    /// (its code word included).
    pub fn function_register(error: &str) -> CmdError {
        CmdError::text(sanitize(&format!(
            "ERR Error registering functions: {error}"
        )))
    }

    /// FUNCTION LOAD/RESTORE of a library that exists; FUNCTION RESTORE words it without quotes.
    pub fn library_exists(name: &str, restoring: bool) -> CmdError {
        CmdError::err(if restoring {
            format!("Library {name} already exists")
        } else {
            format!("Library '{name}' already exists")
        })
    }

    /// FUNCTION LOAD of a function another library has.
    pub fn function_exists(name: &str) -> CmdError {
        CmdError::err(format!("Function {name} already exists"))
    }

    /// FUNCTION LIST's unknown option.
    pub fn function_list_option(option: &[u8]) -> CmdError {
        CmdError::err(format!("Unknown option given: {}", lossy(option)))
    }

    /// FUNCTION DELETE/others' unknown argument.
    pub fn function_argument(argument: &[u8]) -> CmdError {
        CmdError::err(format!("Unknown argument {}", lossy(argument)))
    }
}

// Replication and cluster: Relis may be a replica, serves no replicas, and has no cluster.
impl CmdError {
    /// A write on a replica with `replica-read-only yes`.
    pub const READONLY_REPLICA: CmdError =
        CmdError::fixed("READONLY You can't write against a read only replica.");
    /// A command without the `stale` flag on a replica whose link is down, with
    /// `replica-serve-stale-data no`.
    pub const MASTERDOWN: CmdError = CmdError::fixed(
        "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
    );
    /// A command without the `loading` flag while a replica loads a full sync.
    pub const LOADING: CmdError = CmdError::fixed("LOADING Redis is loading the dataset in memory");
    /// SYNC and PSYNC.
    pub const NO_REPLICATION: CmdError = CmdError::fixed(
        "ERR Relis does not support replication: no replica can SYNC or PSYNC with it",
    );
    /// REPLICAOF with a port that is not a number.
    pub const MASTER_PORT: CmdError = CmdError::fixed("ERR Invalid master port");
    /// FAILOVER with a timeout below 1.
    pub const FAILOVER_TIMEOUT: CmdError =
        CmdError::fixed("ERR FAILOVER timeout must be greater than 0");
    /// FAILOVER ABORT.
    pub const NO_FAILOVER: CmdError = CmdError::fixed("ERR No failover in progress.");
    /// FAILOVER: Relis has no replicas.
    pub const FAILOVER_NO_REPLICAS: CmdError =
        CmdError::fixed("ERR FAILOVER requires connected replicas.");
    /// REPLCONF's boolean that is not 0 or 1.
    pub const REPLCONF_BOOL: CmdError =
        CmdError::fixed("ERR value is out of range, value must between 0 and 1");
    /// CLUSTER and the other cluster commands.
    pub const CLUSTER_DISABLED: CmdError =
        CmdError::fixed("ERR This instance has cluster support disabled");

    /// REPLCONF ip-address past `NET_HOST_STR_LEN`.
    pub fn replconf_ip_too_long(len: usize) -> CmdError {
        CmdError::err(format!(
            "REPLCONF ip-address provided by replica instance is too long: {len} bytes"
        ))
    }

    /// REPLCONF's unknown option.
    pub fn replconf_option(option: &[u8]) -> CmdError {
        CmdError::err(format!("Unrecognized REPLCONF option: {}", lossy(option)))
    }
}

// Relis's own SQL commands (no Redis counterpart; worded in Redis's manner).
impl CmdError {
    /// SQL.DB with a bad database name.
    pub const SQL_DB_NAME: CmdError =
        CmdError::fixed("ERR invalid database name (1 to 128 bytes, no '/' or control characters)");
    /// SQL over PostgreSQL for a user whose ACL does not read every key (the views show all).
    pub const SQL_PG_ALL_KEYS: CmdError = CmdError::fixed(
        "ERR SQL on the PostgreSQL backend needs a user that may read every key (its views show them all)",
    );
    /// A named SQL database over PostgreSQL.
    pub const SQL_PG_NAMED: CmdError =
        CmdError::fixed("ERR named SQL databases are not available on the PostgreSQL backend");

    /// SQL on the main database reached inside a group (MULTI, a script) over PostgreSQL.
    pub fn sql_pg_in_group(cmd: &str) -> CmdError {
        CmdError::err(format!(
            "{} cannot run inside MULTI or a script on the PostgreSQL backend",
            cmd.to_ascii_uppercase()
        ))
    }

    /// REDISQL ... INTO a stream.
    pub const REDISQL_INTO_STREAM: CmdError =
        CmdError::fixed("ERR REDISQL ... INTO (streams) is not supported");

    /// An argument that must be UTF-8 (`what` names it).
    pub fn sql_utf8(what: &str) -> CmdError {
        CmdError::err(format!("{what} must be valid UTF-8"))
    }

    /// SQL.DB with a path outside the data directory.
    pub fn sql_path_outside(file: &str) -> CmdError {
        CmdError::err(format!("path '{file}' is outside the data directory"))
    }

    /// SQL.DB that could not create the database's directory.
    pub fn sql_create_dir(dir: &str, e: impl std::fmt::Display) -> CmdError {
        CmdError::err(format!("cannot create {dir}: {e}"))
    }

    /// SQL.DB CREATE past `sql-max-databases`.
    pub fn sql_too_many(max: usize) -> CmdError {
        CmdError::err(format!("too many SQL databases: sql-max-databases is {max} (drop one with SQL.DB DROP, or raise the setting)"))
    }

    /// A named SQL database that does not exist.
    pub fn sql_no_db(name: &str) -> CmdError {
        CmdError::err(format!("no such SQL database '{name}'"))
    }

    /// SQL.DB CREATE of a database that exists.
    pub fn sql_db_exists(name: &str) -> CmdError {
        CmdError::err(format!("SQL database '{name}' exists already"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The code words Redis starts its error texts with.
    const CODES: &[&str] = &[
        "ERR",
        "WRONGTYPE",
        "NOPERM",
        "BUSY",
        "BUSYKEY",
        "BUSYGROUP",
        "NOSCRIPT",
        "EXECABORT",
        "NOAUTH",
        "WRONGPASS",
        "NOGROUP",
        "INVALIDOBJ",
        "READONLY",
        "OOM",
        "UNBLOCKED",
        "NOPROTO",
        "NOTBUSY",
        "UNKILLABLE",
        "IOERR",
        "MISCONF",
        "LOADING",
        "MASTERDOWN",
        "NOREPLICAS",
        "DENIED",
        "CROSSSLOT",
        "TRYAGAIN",
        "CLUSTERDOWN",
        "MOVED",
        "ASK",
    ];

    /// Calls that build an error from the text given to them.
    const BUILDERS: &[&str] = &["CmdError::err(", "CmdError::text(", "CmdError::Text("];

    /// The places in `src` (a Rust file, its `mod tests` cut off) that write an error text
    /// inline: a string literal starting with a code word and more, or an error built from a
    /// literal or a `format!`. Comments are skipped; each hit is `line: excerpt`.
    fn inline_texts(src: &str) -> Vec<String> {
        let src = match src.find("#[cfg(test)]\nmod tests") {
            Some(at) => &src[..at],
            None => src,
        };
        let b = src.as_bytes();
        let line = |at: usize| src[..at].matches('\n').count() + 1;
        let mut hits = Vec::new();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'/' if b.get(i + 1) == Some(&b'/') => {
                    i = src[i..].find('\n').map_or(b.len(), |n| i + n);
                }
                // A char literal ('"', '\'', 'x') or a lifetime ('a).
                b'\'' => {
                    i += match (b.get(i + 1), b.get(i + 2)) {
                        (Some(b'\\'), _) => src[i + 3..].find('\'').map_or(1, |n| n + 4),
                        (_, Some(b'\'')) => 3,
                        _ => 1,
                    };
                }
                b'"' => {
                    let raw = i > 0 && b[i - 1] == b'r' || i > 1 && b[i - 1] == b'#';
                    let mut j = i + 1;
                    while j < b.len() && b[j] != b'"' {
                        j += if b[j] == b'\\' && !raw { 2 } else { 1 };
                    }
                    let text = src[i + 1..j.min(b.len())].trim_start_matches('-');
                    let coded = text
                        .split_once(' ')
                        .is_some_and(|(word, rest)| CODES.contains(&word) && !rest.is_empty());
                    if coded {
                        let excerpt = text.lines().next().unwrap_or_default();
                        hits.push(format!(
                            "{}: {}",
                            line(i),
                            &excerpt[..excerpt.len().min(60)]
                        ));
                    }
                    i = j + 1;
                }
                _ => {
                    if let Some(call) = BUILDERS.iter().find(|c| src[i..].starts_with(*c)) {
                        let arg = src[i + call.len()..].trim_start();
                        let inline = ["\"", "r\"", "r#\"", "format!", "sanitize(&format!"];
                        if inline.iter().any(|p| arg.starts_with(p)) {
                            let excerpt = arg.lines().next().unwrap_or_default();
                            hits.push(format!("{}: {call}{excerpt}", line(i)));
                        }
                        i += call.len();
                    } else {
                        i += 1;
                    }
                }
            }
        }
        hits
    }

    #[test]
    fn scanner_finds_inline_texts() {
        let src = concat!(
            "fn a() -> CmdError { CmdError::err(\"no such thing\") }\n",
            "// CmdError::err(\"in a comment\")\n",
            "fn b() -> CmdError { CmdError::text(format!(\"NOGROUP {x}\")) }\n",
            "const C: &str = \"WRONGTYPE Operation\";\n",
            "const D: &[u8] = b\"-ERR x\";\n",
            "fn e(s: &str) -> &str { s.strip_prefix(\"ERR \").unwrap_or(s) }\n",
            "fn f() -> CmdError { CmdError::NOTBUSY }\n",
            "fn g() -> (char, char) { ('\"', '\\'') }\n",
            "fn h() -> CmdError { CmdError::text(sanitize(&format!(\"x {y}\"))) }\n",
            "#[cfg(test)]\nmod tests {\n  const T: &str = \"ERR in a test\";\n}\n",
        );
        let lines: Vec<String> = inline_texts(src)
            .iter()
            .map(|h| h.split(':').next().unwrap().to_string())
            .collect();
        assert_eq!(lines, ["1", "3", "3", "4", "5", "9"]);
    }

    /// Every error text lives in this file: a new one written inline elsewhere fails here (add it
    /// above as a constant or a constructor instead).
    #[test]
    fn no_inline_error_texts_outside_this_file() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut dirs = vec![root.clone()];
        let mut found = Vec::new();
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs")
                    && path != root.join("error.rs")
                {
                    let src = std::fs::read_to_string(&path).unwrap();
                    for hit in inline_texts(&src) {
                        found.push(format!(
                            "{}:{hit}",
                            path.strip_prefix(&root).unwrap().display()
                        ));
                    }
                }
            }
        }
        found.sort();
        assert!(
            found.is_empty(),
            "error texts outside error.rs:\n{}",
            found.join("\n")
        );
    }

    #[test]
    fn fixed_texts_equal_built_ones() {
        // Tests compare errors by value: a constant equals the same text built at run time.
        assert_eq!(
            CmdError::NOTBUSY,
            CmdError::text(CmdError::NOTBUSY.message())
        );
        assert_eq!(
            CmdError::TIMEOUT_NEGATIVE,
            CmdError::err("timeout is negative")
        );
    }
}
