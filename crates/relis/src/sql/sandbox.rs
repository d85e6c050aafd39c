//! The sandbox user SQL runs in: an authorizer on every connection that may run user SQL, a
//! progress handler that bounds a statement's time, and `relis_now()`, the instant the views
//! evaluate expiry at.
//!
//! SQLite calls the authorizer while it compiles a statement (and again if it recompiles it after
//! a schema change). Setting an authorizer expires every prepared statement of the connection,
//! so it is installed once, when the connection opens, and stays: a thread-local switch turns the
//! checks on only while user SQL is compiled or stepped ([`Sandbox::enter`]). The engine's own
//! statements are compiled with the switch off, so they are never checked and never slowed down.
//! (A connection is used by one thread at a time, and the authorizer runs on that thread.)

use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::Connection;
use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

thread_local! {
    /// Whether the statement being compiled is user SQL.
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
    /// Why the authorizer refused the last statement.
    static DENIED: RefCell<Option<String>> = const { RefCell::new(None) };
    /// When the running user statement must stop.
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
    /// Set when the progress handler interrupted a statement for its deadline.
    static TIMED_OUT: Cell<bool> = const { Cell::new(false) };
    /// The instant `relis_now()` returns (the job's `now`), while user SQL runs.
    static NOW: Cell<Option<i64>> = const { Cell::new(None) };
    /// Set when SQLite rolled back the whole transaction under user SQL: why.
    static TX_LOST: RefCell<Option<String>> = const { RefCell::new(None) };
    /// Whether user SQL running now is an inline read (see [`inline_reads`]).
    static INLINE: Cell<bool> = const { Cell::new(false) };
    /// Set when an inline read's statement ran past [`INLINE_STEPS`].
    static OVER_BUDGET: Cell<bool> = const { Cell::new(false) };
}

/// Virtual-machine steps a user statement may take in an inline read (on the caller's thread,
/// [`crate::Db::read_here`]) before it is stopped with [`crate::SqlError::Deferred`], to run
/// again on a reader thread. A primary-key lookup takes a few dozen; this is a few tens of
/// microseconds of work, less than a hop to a reader thread and back costs.
pub(crate) const INLINE_STEPS: i32 = 4000;

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

/// How many virtual-machine steps pass between two deadline checks: a check is a thread-local
/// read and, once in a while, a clock read, so this costs nothing measurable.
const PROGRESS_STEPS: i32 = 1000;

/// Prepares a connection to run user SQL: the authorizer, `relis_now()`, and a statement cache
/// large enough for user statements next to the engine's own.
///
/// # Errors
/// SQLite refuses to register the function.
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

/// The sandbox is on while this lives: user SQL is checked, `relis_now()` answers `now`, and the
/// statement is interrupted at the deadline.
pub(crate) struct Sandbox<'c> {
    conn: &'c Connection,
    timed: bool,
}

impl<'c> Sandbox<'c> {
    /// Turns the sandbox on for `conn` until the guard drops.
    pub(crate) fn enter(conn: &'c Connection, now: i64, limit: Option<Duration>) -> Self {
        ACTIVE.set(true);
        DENIED.with(|d| d.borrow_mut().take());
        TIMED_OUT.set(false);
        NOW.set(Some(now));
        OVER_BUDGET.set(false);
        let inline = INLINE.get();
        let timed = limit.is_some() || inline;
        if inline {
            // The step budget is far inside any time limit: no deadline needed.
            conn.progress_handler(INLINE_STEPS, Some(over_budget));
        } else if let Some(limit) = limit {
            DEADLINE.set(Some(Instant::now() + limit));
            // Installed per call (cheap: no statement is expired) so the engine's own statements
            // never run under a progress handler.
            conn.progress_handler(PROGRESS_STEPS, Some(past_deadline));
        }
        Sandbox { conn, timed }
    }
}

impl Drop for Sandbox<'_> {
    fn drop(&mut self) {
        ACTIVE.set(false);
        NOW.set(None);
        DEADLINE.set(None);
        if self.timed {
            self.conn.progress_handler(0, None::<fn() -> bool>);
        }
    }
}

fn past_deadline() -> bool {
    match DEADLINE.get() {
        Some(t) if Instant::now() >= t => {
            TIMED_OUT.set(true);
            true
        }
        _ => false,
    }
}

fn over_budget() -> bool {
    OVER_BUDGET.set(true);
    true
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
    match check(&ctx) {
        Ok(()) => Authorization::Allow,
        Err(reason) => {
            DENIED.with(|d| *d.borrow_mut() = Some(reason));
            Authorization::Deny
        }
    }
}

fn starts_with_ci(name: &str, prefix: &str) -> bool {
    name.len() >= prefix.len() && name[..prefix.len()].eq_ignore_ascii_case(prefix)
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

fn check(ctx: &AuthContext<'_>) -> Result<(), String> {
    use AuthAction as A;
    let reserved = |what: &str, name: &str| -> Result<(), String> {
        if is_reserved(name) {
            Err(format!(
                "{what} '{name}' is not allowed: names starting with relis_ or redis_ are reserved for Relis"
            ))
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
