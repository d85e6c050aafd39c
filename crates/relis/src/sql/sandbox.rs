//! The sandbox user SQL runs in: an authorizer on every connection that may run user SQL, a
//! progress handler that bounds a statement's time, limits on the size of values, bounded
//! versions of the built-in functions whose one call could run for long (`builtins.rs`), and
//! `relis_now()`, the instant the views evaluate expiry at.
//!
//! SQLite calls the authorizer while it compiles a statement (and again if it recompiles it after
//! a schema change). Setting an authorizer expires every prepared statement of the connection,
//! so it is installed once, when the connection opens, and stays: a thread-local switch turns the
//! checks on only while user SQL is compiled or stepped ([`Sandbox::enter`]). The engine's own
//! statements are compiled with the switch off, so they are never checked and never slowed down.
//! (A connection is used by one thread at a time, and the authorizer runs on that thread.)
//!
//! Time is checked between virtual-machine steps (the progress handler) and inside the bounded
//! built-ins, which count their work ([`charge`]); SQLITE_LIMIT_LENGTH, lowered while user SQL
//! runs, bounds the work of every other step, since no built-in does more than a few passes
//! over its arguments and result.

use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::Connection;
use std::cell::{Cell, RefCell};
use std::time::Duration;

thread_local! {
    /// Whether the statement being compiled is user SQL.
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
    /// Why the authorizer refused the last statement.
    static DENIED: RefCell<Option<String>> = const { RefCell::new(None) };
    /// When the running user statement must stop (monotonic nanoseconds, see [`clock_ns`]).
    static DEADLINE: Cell<Option<u64>> = const { Cell::new(None) };
    /// Set when the progress handler interrupted a statement for its deadline.
    static TIMED_OUT: Cell<bool> = const { Cell::new(false) };
    /// The instant `relis_now()` returns (the job's `now`), while user SQL runs.
    static NOW: Cell<Option<i64>> = const { Cell::new(None) };
    /// Set when SQLite rolled back the whole transaction under user SQL: why.
    static TX_LOST: RefCell<Option<String>> = const { RefCell::new(None) };
    /// Whether user SQL running now is an inline read (see [`inline_reads`]).
    static INLINE: Cell<bool> = const { Cell::new(false) };
    /// Set when an inline read's statement ran past its budget ([`INLINE_STEPS`],
    /// [`INLINE_TIME`], [`INLINE_WORK`], [`INLINE_LENGTH`]).
    static OVER_BUDGET: Cell<bool> = const { Cell::new(false) };
    /// When the running inline read began, and the progress handler's calls since.
    static INLINE_START: Cell<(Option<std::time::Instant>, i32)> = const { Cell::new((None, 0)) };
    /// Work the bounded built-ins did for the running user SQL, and at what total to look at
    /// the deadline (or the inline budget) next.
    static WORK: Cell<(u64, u64)> = const { Cell::new((0, u64::MAX)) };
}

/// Virtual-machine steps a user statement may take in an inline read (on the caller's thread,
/// [`crate::Db::read_here`]) before it is stopped with [`crate::SqlError::Deferred`], to run
/// again on a reader thread. A primary-key lookup takes a few dozen; this is a few tens of
/// microseconds of work, less than a hop to a reader thread and back costs.
pub(crate) const INLINE_STEPS: i32 = 4000;

/// Time an inline read may take, whatever its steps: one step can do much more than another
/// (copy a value, build a string), and the network thread serves every other client meanwhile.
pub(crate) const INLINE_TIME: Duration = Duration::from_millis(1);

/// How many steps pass between two looks at an inline read's clock and step count.
const INLINE_CHECK_STEPS: i32 = 16;

/// The longest value (string or blob, in bytes) an inline read may make or read: a step that
/// copies or builds one takes tens of microseconds at most. A longer one stops the read
/// ([`crate::SqlError::Deferred`]) and it runs again on a reader, under the usual limit.
pub(crate) const INLINE_LENGTH: i32 = 64 << 10;

/// The longest SQL text an inline read compiles (compiling is not covered by the step budget).
pub(crate) const INLINE_SQL_BYTES: usize = 4096;

/// Units of work (about a byte compared each) the bounded built-ins may do in an inline read:
/// a few hundred microseconds.
pub(crate) const INLINE_WORK: u64 = 1 << 18;

/// Units of work between two looks at the clock in the bounded built-ins (tens of
/// microseconds).
const WORK_CHECK: u64 = 1 << 15;

/// Runs `f` with user SQL counted as inline reads: each statement may take [`INLINE_STEPS`].
pub(crate) fn inline_reads<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            INLINE.set(self.0);
        }
    }
    let _reset = Reset(INLINE.replace(true));
    f()
}

/// Whether user SQL running now is an inline read.
pub(crate) fn inline() -> bool {
    INLINE.get()
}

/// Whether user SQL is running (or being compiled) now.
pub(crate) fn active() -> bool {
    ACTIVE.get()
}

/// Stops the running inline read: it runs again on a reader ([`crate::SqlError::Deferred`]).
pub(crate) fn stop_inline() {
    OVER_BUDGET.set(true);
}

/// Records that SQLite rolled back the running transaction (an interrupted write does that:
/// SQLite cannot undo only the statement). Whoever owns the transaction takes it with
/// [`take_transaction_lost`] and fails every write the transaction held.
pub(crate) fn mark_transaction_lost(reason: String) {
    TX_LOST.with(|t| *t.borrow_mut() = Some(reason));
}

/// Whether (and why) SQLite rolled back the running transaction under user SQL.
pub(crate) fn take_transaction_lost() -> Option<String> {
    TX_LOST.with(|t| t.borrow_mut().take())
}

/// How many virtual-machine steps pass between two deadline checks. A check is a call through
/// rusqlite's trampoline and a read of the coarse monotonic clock (a few nanoseconds), so this
/// costs well under a nanosecond per step; a step is bounded by SQLITE_LIMIT_LENGTH (tens of
/// milliseconds at most), so the deadline is seen soon after it passes.
const PROGRESS_STEPS: i32 = 64;

/// The monotonic clock in nanoseconds, at the kernel tick's resolution (a few ms): reading it
/// costs a few nanoseconds, a fifth of the precise clock.
pub(crate) fn clock_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a plain system call (vDSO) writing into `ts`.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
    (ts.tv_sec as u64).wrapping_mul(1_000_000_000) + ts.tv_nsec as u64
}

/// Prepares a connection to run user SQL: the authorizer, `relis_now()`, the views' functions,
/// and a statement cache large enough for user statements next to the engine's own.
///
/// # Errors
/// SQLite refuses to register a function.
pub(crate) fn install(conn: &Connection) -> rusqlite::Result<()> {
    conn.authorizer(Some(authorize));
    // Not deterministic (the clock moves between statements), innocuous (views may call it),
    // and not direct-only for the same reason.
    conn.create_scalar_function(
        "relis_now",
        0,
        rusqlite::functions::FunctionFlags::SQLITE_UTF8
            | rusqlite::functions::FunctionFlags::SQLITE_INNOCUOUS,
        |_| Ok(now_ms()),
    )?;
    // The stream view's columns (schema/0007_streams.sql): deterministic functions of a row.
    let det = rusqlite::functions::FunctionFlags::SQLITE_UTF8
        | rusqlite::functions::FunctionFlags::SQLITE_INNOCUOUS
        | rusqlite::functions::FunctionFlags::SQLITE_DETERMINISTIC;
    conn.create_scalar_function("relis_stream_id", 2, det, |c| {
        let (ms, seq): (i64, i64) = (c.get(0)?, c.get(1)?);
        Ok(format!(
            "{}-{}",
            crate::types::stream_codec::dec(ms),
            crate::types::stream_codec::dec(seq)
        ))
    })?;
    conn.create_scalar_function("relis_stream_fields", 1, det, |c| {
        let blob: Vec<u8> = c.get(0)?;
        let fields = crate::types::stream_codec::decode_fields(&blob)
            .map_err(|e| rusqlite::Error::UserFunctionError(e.to_string().into()))?;
        Ok(crate::types::stream_codec::fields_json(&fields))
    })?;
    // The geo view's columns (schema/0009_geo.sql): a score's position, as GEOPOS decodes it.
    conn.create_scalar_function("relis_geo_lon", 1, det, |c| {
        Ok(crate::types::geo::decode(c.get::<f64>(0)?).0)
    })?;
    conn.create_scalar_function("relis_geo_lat", 1, det, |c| {
        Ok(crate::types::geo::decode(c.get::<f64>(0)?).1)
    })?;
    // The engine's own: INCRBY's one-statement path (types/strings.rs, types/counter.rs). Direct only: no view
    // or trigger calls it.
    conn.create_scalar_function(
        "relis_incr",
        2,
        det | rusqlite::functions::FunctionFlags::SQLITE_DIRECTONLY,
        |c| Ok(crate::types::counter::sql_incr(c.get_raw(0), c.get(1)?)),
    )?;
    // SET's upsert (the same): records what it overwrote, so not deterministic.
    conn.create_scalar_function(
        "relis_overwrite",
        1,
        rusqlite::functions::FunctionFlags::SQLITE_UTF8
            | rusqlite::functions::FunctionFlags::SQLITE_DIRECTONLY,
        |c| Ok(crate::types::counter::sql_overwrite(c.get_raw(0))),
    )?;
    // ZADD's score update (the same): records the score it replaces.
    conn.create_scalar_function(
        "relis_rescore",
        2,
        rusqlite::functions::FunctionFlags::SQLITE_UTF8
            | rusqlite::functions::FunctionFlags::SQLITE_DIRECTONLY,
        |c| Ok(crate::types::counter::sql_rescore(c.get(0)?, c.get(1)?)),
    )?;
    // The key filter of the views (ACL key patterns): see sql/access.rs.
    super::access::register(conn)?;
    conn.set_prepared_statement_cache_capacity(1024);
    Ok(())
}

/// The instant `relis_now()` returns: the running job's, or the system clock outside jobs.
fn now_ms() -> i64 {
    NOW.get().unwrap_or_else(|| {
        use crate::clock::Clock;
        crate::clock::SystemClock.now_ms()
    })
}

/// The sandbox is on while this lives: user SQL is checked, `relis_now()` answers `now`, the
/// statement is interrupted at the deadline, and values are bounded in size.
pub(crate) struct Sandbox<'c> {
    conn: &'c Connection,
    timed: bool,
    /// SQLITE_LIMIT_LENGTH as it was before, restored on drop.
    length: Option<i32>,
    /// The working-memory budget (`sql/memory.rs`), ended on drop.
    _memory: super::memory::Scope,
}

/// Sets one of SQLite's per-connection limits; returns the old value.
fn set_limit(conn: &Connection, id: std::ffi::c_int, value: i32) -> i32 {
    // SAFETY: the handle is open for as long as `conn` is borrowed; sqlite3_limit only reads
    // and writes an integer of the connection.
    unsafe { rusqlite::ffi::sqlite3_limit(conn.handle(), id, value) }
}

impl<'c> Sandbox<'c> {
    /// Turns the sandbox on for `conn` until the guard drops, with `limits`' time limit and
    /// value size ([`crate::SqlLimits::max_bytes`]).
    pub(crate) fn enter(conn: &'c Connection, now: i64, limits: &crate::SqlLimits) -> Self {
        ACTIVE.set(true);
        DENIED.with(|d| d.borrow_mut().take());
        TIMED_OUT.set(false);
        NOW.set(Some(now));
        OVER_BUDGET.set(false);
        let inline = INLINE.get();
        let timed = limits.time_limit.is_some() || inline;
        let mut work_check = u64::MAX;
        if inline {
            // The step budget is far inside any time limit: no deadline needed.
            INLINE_START.set((Some(std::time::Instant::now()), 0));
            conn.progress_handler(INLINE_CHECK_STEPS, Some(inline_over_budget));
            work_check = INLINE_WORK;
        } else if let Some(limit) = limits.time_limit {
            let limit = u64::try_from(limit.as_nanos()).unwrap_or(u64::MAX);
            DEADLINE.set(Some(clock_ns().saturating_add(limit)));
            // Installed per call (cheap: no statement is expired) so the engine's own statements
            // never run under a progress handler.
            conn.progress_handler(PROGRESS_STEPS, Some(past_deadline));
            work_check = WORK_CHECK;
        }
        WORK.set((0, work_check));
        // Values as long as Redis allows (512 MB) must still be stored by the engine, so the
        // length limit is lowered only while user SQL runs (sqlite3_limit is a plain store).
        let max = if inline {
            Some(INLINE_LENGTH)
        } else {
            limits
                .max_bytes
                .map(|b| i32::try_from(b).unwrap_or(i32::MAX))
        };
        let length = max.map(|max| {
            let old = set_limit(conn, rusqlite::ffi::SQLITE_LIMIT_LENGTH, max);
            if max > old {
                set_limit(conn, rusqlite::ffi::SQLITE_LIMIT_LENGTH, old);
            }
            old
        });
        Sandbox {
            conn,
            timed,
            length,
            _memory: super::memory::budget(limits.max_memory),
        }
    }
}

impl Drop for Sandbox<'_> {
    fn drop(&mut self) {
        ACTIVE.set(false);
        NOW.set(None);
        DEADLINE.set(None);
        WORK.set((0, u64::MAX));
        if self.timed {
            self.conn.progress_handler(0, None::<fn() -> bool>);
        }
        if let Some(old) = self.length {
            set_limit(self.conn, rusqlite::ffi::SQLITE_LIMIT_LENGTH, old);
        }
    }
}

fn past_deadline() -> bool {
    match DEADLINE.get() {
        Some(t) if clock_ns() >= t => {
            TIMED_OUT.set(true);
            true
        }
        _ => false,
    }
}

fn inline_over_budget() -> bool {
    let (start, calls) = INLINE_START.get();
    let calls = calls + 1;
    INLINE_START.set((start, calls));
    let over = calls.saturating_mul(INLINE_CHECK_STEPS) >= INLINE_STEPS
        || start.is_some_and(|s| s.elapsed() >= INLINE_TIME);
    if over {
        OVER_BUDGET.set(true);
    }
    over
}

/// Counts `units` of work done by a bounded built-in for the running user SQL; `false` when
/// the statement must stop now (its deadline has passed, or an inline read's budget is spent:
/// [`timed_out`] or [`over_budget_stopped`] says which). Outside user SQL, always `true`.
pub(crate) fn charge(units: u64) -> bool {
    if !ACTIVE.get() {
        return true;
    }
    let (done, check) = WORK.get();
    let done = done.saturating_add(units);
    if done < check {
        WORK.set((done, check));
        return true;
    }
    WORK.set((done, done.saturating_add(WORK_CHECK)));
    if INLINE.get() {
        OVER_BUDGET.set(true);
        return false;
    }
    !past_deadline()
}

/// Whether the last statement was stopped for running past an inline read's step budget.
pub(crate) fn over_budget_stopped() -> bool {
    OVER_BUDGET.get()
}

/// Whether the last statement was interrupted for its deadline.
pub(crate) fn timed_out() -> bool {
    TIMED_OUT.get()
}

/// Why the authorizer refused the last statement, if it did.
pub(crate) fn take_denial() -> Option<String> {
    DENIED.with(|d| d.borrow_mut().take())
}

fn authorize(ctx: AuthContext<'_>) -> Authorization {
    if !ACTIVE.get() {
        return Authorization::Allow;
    }
    if INLINE.get() && length_dependent(&ctx) {
        OVER_BUDGET.set(true);
        return Authorization::Deny;
    }
    match check(&ctx) {
        Ok(()) => Authorization::Allow,
        Err(reason) => {
            DENIED.with(|d| *d.borrow_mut() = Some(reason));
            Authorization::Deny
        }
    }
}

/// Whether the action calls a built-in whose result (not only whether it fails) depends on
/// SQLITE_LIMIT_LENGTH: `printf` (and `format`) answers NULL for a string past the limit
/// where others fail. An inline read runs under a lower limit ([`INLINE_LENGTH`]), so such a
/// statement runs on a reader instead, where the answer is the same as everywhere else.
fn length_dependent(ctx: &AuthContext<'_>) -> bool {
    matches!(ctx.action, AuthAction::Function { function_name }
        if function_name.eq_ignore_ascii_case("printf") || function_name.eq_ignore_ascii_case("format"))
}

/// The functions the engine's own statements call to hand a value back to the writer through a
/// thread-local (INCRBY's `relis_incr`, SET's `relis_overwrite`, ZADD's `relis_rescore`; see
/// `types/counter.rs`). They are registered on every connection, SQLITE_DIRECTONLY keeps them
/// out of views and triggers, and this keeps them out of user SQL: an internal, not an API.
const ENGINE_FUNCTIONS: &[&str] = &["relis_incr", "relis_overwrite", "relis_rescore"];

fn is_engine_function(name: &str) -> bool {
    ENGINE_FUNCTIONS
        .iter()
        .any(|f| name.eq_ignore_ascii_case(f))
}

/// Whether `name` starts with `prefix` (ASCII), in any case. Compared as bytes: the name may
/// hold a multi-byte character where the prefix ends.
fn starts_with_ci(name: &str, prefix: &str) -> bool {
    name.as_bytes()
        .get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
}

/// Tables (and their indexes) the engine keeps its own data in.
pub(crate) fn is_internal(name: &str) -> bool {
    starts_with_ci(name, "relis_")
}

/// Names user SQL may not create or drop: the internal tables and the views of Redis data.
pub(crate) fn is_reserved(name: &str) -> bool {
    is_internal(name) || starts_with_ci(name, "redis_")
}

/// PRAGMAs that only report, with or without an argument (the argument names a table or an
/// index, or limits a check).
const REPORTING_PRAGMAS: &[&str] = &[
    "table_info",
    "table_xinfo",
    "table_list",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
    "foreign_key_check",
    "integrity_check",
    "quick_check",
    "collation_list",
    "function_list",
    "module_list",
    "pragma_list",
    "compile_options",
    "database_list",
];

/// Settings PRAGMAs may read but not set (given an argument they would set it).
const READABLE_SETTINGS: &[&str] = &[
    "page_count",
    "page_size",
    "freelist_count",
    "max_page_count",
    "user_version",
    "schema_version",
    "application_id",
    "data_version",
    "encoding",
    "journal_mode",
    "synchronous",
    "foreign_keys",
    "auto_vacuum",
    "cache_size",
    "busy_timeout",
    "temp_store",
    "recursive_triggers",
];

/// Why a temporary object is refused: the temp schema is searched before `main`, so a temp
/// object could stand in for a table of the database's own (the engine names `main` in its
/// statements, but user SQL, views and triggers do not).
pub(crate) const NO_TEMP_OBJECTS: &str =
    "temporary objects (TEMP tables, views, triggers and indexes) are not allowed: create them in the database itself";

/// Whether the action makes an object in the temp schema: `CREATE TEMP ...`, `CREATE ...
/// temp.name`, or a temp trigger on a table of `main` (each also writes `sqlite_temp_master`).
fn creates_temp(ctx: &AuthContext<'_>) -> bool {
    use AuthAction as A;
    let in_temp = ctx
        .database_name
        .is_some_and(|d| d.eq_ignore_ascii_case("temp"));
    match ctx.action {
        A::CreateTempTable { .. }
        | A::CreateTempView { .. }
        | A::CreateTempTrigger { .. }
        | A::CreateTempIndex { .. } => true,
        A::CreateTable { .. }
        | A::CreateView { .. }
        | A::CreateTrigger { .. }
        | A::CreateIndex { .. }
        | A::CreateVtable { .. } => in_temp,
        A::Insert { table_name } => table_name.eq_ignore_ascii_case("sqlite_temp_master"),
        _ => false,
    }
}

/// Why `name`, a reserved name, is refused for a `what` (table, view, ...).
pub(crate) fn reserved_name(what: &str, name: &str) -> String {
    format!(
        "{what} '{name}' is not allowed: names starting with relis_ or redis_ are reserved for Relis"
    )
}

fn check(ctx: &AuthContext<'_>) -> Result<(), String> {
    use AuthAction as A;
    if creates_temp(ctx) {
        return Err(NO_TEMP_OBJECTS.into());
    }
    let reserved = |what: &str, name: &str| -> Result<(), String> {
        if is_reserved(name) {
            Err(reserved_name(what, name))
        } else {
            Ok(())
        }
    };
    match ctx.action {
        A::Attach { .. } => Err(
            "ATTACH is not allowed: each SQL database is its own file under dir (see SQL.DB)"
                .into(),
        ),
        A::Detach { .. } => Err("DETACH is not allowed".into()),
        A::Transaction { .. } | A::Savepoint { .. } => Err(
            "transaction control (BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE) is not allowed: every command runs in its own transaction"
                .into(),
        ),
        A::Function { function_name } if function_name.eq_ignore_ascii_case("load_extension") => {
            Err("load_extension is not allowed".into())
        }
        A::Function { function_name } if is_engine_function(function_name) => Err(format!(
            "{function_name} is the engine's own: user SQL may not call it"
        )),
        A::Pragma {
            pragma_name,
            pragma_value,
        } => {
            let name = pragma_name.to_ascii_lowercase();
            if REPORTING_PRAGMAS.contains(&name.as_str())
                || (pragma_value.is_none() && READABLE_SETTINGS.contains(&name.as_str()))
            {
                Ok(())
            } else {
                Err(format!(
                    "PRAGMA {pragma_name} is not allowed: only PRAGMAs that report (table_info, index_list, integrity_check, ...) or read a setting"
                ))
            }
        }
        A::Read { table_name, .. } if is_internal(table_name) => {
            // Relis's own views read the internal tables on the user's behalf.
            if ctx.accessor.is_some_and(|v| starts_with_ci(v, "redis_")) {
                Ok(())
            } else {
                Err(format!(
                    "{table_name} is internal to Relis: read Redis data through the redis_* views"
                ))
            }
        }
        A::Insert { table_name } | A::Delete { table_name } | A::Update { table_name, .. }
            if is_internal(table_name) =>
        {
            Err(format!(
                "{table_name} is internal to Relis: SQL may not write it (use the Redis commands)"
            ))
        }
        A::CreateTable { table_name } | A::CreateTempTable { table_name } => {
            reserved("table", table_name)
        }
        A::CreateView { view_name } | A::CreateTempView { view_name } => {
            reserved("view", view_name)
        }
        A::CreateVtable { table_name, .. } => reserved("table", table_name),
        A::CreateIndex {
            index_name,
            table_name,
        }
        | A::CreateTempIndex {
            index_name,
            table_name,
        }
        | A::DropIndex {
            index_name,
            table_name,
        }
        | A::DropTempIndex {
            index_name,
            table_name,
        } => reserved("index", index_name).and_then(|()| reserved("table", table_name)),
        // A trigger runs with the key access of whoever fires it (the views filter by the
        // running call's keys): one planted by a user limited to some keys would copy what a
        // wider user's statement sees into a table the planter reads.
        A::CreateTrigger { .. } if !super::access::sees_all() => Err(
            "CREATE TRIGGER is not allowed for a user limited to some keys: a trigger runs with the keys of whoever fires it"
                .into(),
        ),
        A::CreateTrigger {
            trigger_name,
            table_name,
        }
        | A::CreateTempTrigger {
            trigger_name,
            table_name,
        }
        | A::DropTrigger {
            trigger_name,
            table_name,
        }
        | A::DropTempTrigger {
            trigger_name,
            table_name,
        } => reserved("trigger", trigger_name).and_then(|()| reserved("table", table_name)),
        A::DropTable { table_name } | A::DropTempTable { table_name } => {
            reserved("table", table_name)
        }
        A::DropVtable { table_name, .. } => reserved("table", table_name),
        A::DropView { view_name } | A::DropTempView { view_name } => reserved("view", view_name),
        A::AlterTable { table_name, .. } => reserved("table", table_name),
        A::Reindex { index_name } => reserved("index", index_name),
        A::Analyze { table_name } => reserved("table", table_name),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(is_internal("relis_keys"));
        assert!(is_internal("RELIS_KEYS"));
        assert!(!is_internal("redis_keys"));
        assert!(is_reserved("Redis_Keys"));
        assert!(!is_reserved("users"));
        assert!(!is_reserved("rel"));
    }
}
