//! Views of the keyspace on one SQLite connection: [`Reader`] for reads (any connection) and
//! [`Writer`] for writes (only the writer thread's connection, inside its group transaction).
//! Every Redis-level operation is a method on one of them; the command families add theirs in
//! their own modules (`strings.rs`, `keys.rs`, ...).

use crate::backend::sqlite::stmt::Conn;
use crate::error::{Error, Result};
use rusqlite::OptionalExtension;
use std::cell::RefCell;
use std::ops::{Deref, DerefMut};
use std::rc::Rc;

/// The type of the value stored at a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyType {
    /// A string.
    String,
    /// A hash.
    Hash,
    /// A list.
    List,
    /// A set.
    Set,
    /// A sorted set.
    ZSet,
    /// A stream.
    Stream,
}

impl KeyType {
    /// The name Redis's TYPE command gives this type.
    pub fn name(self) -> &'static str {
        match self {
            KeyType::String => "string",
            KeyType::Hash => "hash",
            KeyType::List => "list",
            KeyType::Set => "set",
            KeyType::ZSet => "zset",
            KeyType::Stream => "stream",
        }
    }

    /// The type named `name` as TYPE spells it (case-insensitive), if any.
    pub fn from_name(name: &[u8]) -> Option<KeyType> {
        [
            KeyType::String,
            KeyType::Hash,
            KeyType::List,
            KeyType::Set,
            KeyType::ZSet,
            KeyType::Stream,
        ]
        .into_iter()
        .find(|t| t.name().as_bytes().eq_ignore_ascii_case(name))
    }

    pub(crate) fn code(self) -> i64 {
        match self {
            KeyType::String => 0,
            KeyType::Hash => 1,
            KeyType::List => 2,
            KeyType::Set => 3,
            KeyType::ZSet => 4,
            KeyType::Stream => 5,
        }
    }

    /// The table holding this type's elements (a string's chunks, when it is chunked: see
    /// chunks.rs).
    pub(crate) fn element_table(self) -> Option<&'static str> {
        match self {
            KeyType::String => Some("main.relis_chunks"),
            KeyType::Hash => Some("main.relis_hash"),
            KeyType::List => Some("main.relis_list"),
            KeyType::Set => Some("main.relis_set"),
            KeyType::ZSet => Some("main.relis_zset"),
            KeyType::Stream => Some("main.relis_stream"),
        }
    }

    pub(crate) fn from_code(code: i64) -> Result<KeyType> {
        Ok(match code {
            0 => KeyType::String,
            1 => KeyType::Hash,
            2 => KeyType::List,
            3 => KeyType::Set,
            4 => KeyType::ZSet,
            5 => KeyType::Stream,
            _ => return Err(Error::Storage(format!("unknown key type code {code}"))),
        })
    }
}

/// What the keys table knows about a live key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyMeta {
    /// Stable identity of the value (collections key their elements by it).
    pub id: i64,
    /// The value's type.
    pub kind: KeyType,
    /// Expiry as unix milliseconds, if any.
    pub expire_at: Option<i64>,
    /// Changes with every write to the key.
    pub version: i64,
    /// Element count of a collection; for a string, 0 when it is inline and its length when
    /// it is chunked (see chunks.rs).
    pub count: i64,
    /// Unix milliseconds of the last write.
    pub mtime: i64,
}

/// Bytes per chunk of a long string (`relis_chunks`, see types/chunks.rs): one chunk row (with
/// its key) fills a 2 KiB page, the default page size, without an overflow page.
pub(crate) const CHUNK: usize = 1984;

/// Collections up to this many elements are deleted inline; larger ones go to the trash.
const INLINE_DELETE: i64 = 1024;

/// SQL condition that keeps only live (unexpired) keys; `?now` is bound by name.
pub(crate) const LIVE: &str = "(expire_at IS NULL OR expire_at > :now)";

/// The sorted sets' rank-block sizes (`relis_zrank`, see types/zset/mod.rs "Ranks"): sets with
/// more than `threshold` members get rank rows (and keep them until they shrink to half of
/// it); a level-0 block holds about `block` members (between half and twice as many), a
/// level-1 run about `fanout` blocks. Small values put every regime within reach of small
/// sets (the model tests); the defaults are 1024, 256 and 64. Values below 2 count as 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RankBlocks {
    /// Members above which a set gets rank rows.
    pub threshold: i64,
    /// Target members per level-0 block.
    pub block: i64,
    /// Target blocks per level-1 run.
    pub fanout: i64,
}

impl Default for RankBlocks {
    fn default() -> Self {
        RankBlocks {
            threshold: 1024,
            block: 256,
            fanout: 64,
        }
    }
}

impl RankBlocks {
    fn clamped(self) -> Self {
        RankBlocks {
            threshold: self.threshold.max(2),
            block: self.block.max(2),
            fanout: self.fanout.max(2),
        }
    }

    /// Target members per level-1 run.
    pub(crate) fn run(&self) -> i64 {
        self.block * self.fanout
    }
}

/// What every [`Reader`] of one engine is made with: fixed when the `Db` opens.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Keyspace {
    pub databases: u32,
    pub rank: RankBlocks,
}

impl Keyspace {
    pub(crate) fn of(opts: &crate::backend::sqlite::db::Options) -> Self {
        Keyspace {
            databases: opts.databases,
            rank: opts.rank_blocks.clamped(),
        }
    }
}

/// Keys with their types (`None`: not one this engine knows), as [`SharedKeyspace::scan`]
/// returns them.
pub(crate) type TypedKeys = Vec<(Vec<u8>, Option<KeyType>)>;

/// A keyspace held outside this connection, shared with other processes (the PostgreSQL
/// backend, ARCHITECTURE.md 10.1): there the connection is a scratch holding only the keys a
/// group declared, so what reads the whole keyspace asks this instead. Raw rows only; the
/// [`Reader`] methods filter them (glob, type) as they do their own. `now` is Unix ms: rows
/// expired at it are never returned nor counted.
pub(crate) trait SharedKeyspace {
    /// The live keys of `db` in `[lower, upper)` (`upper` `None`: no bound), in key order.
    fn keys(&self, db: u32, lower: &[u8], upper: Option<&[u8]>, now: i64) -> Result<Vec<Vec<u8>>>;
    /// Up to `count` live keys of `db` after `cursor` in an order fixed per key for its life
    /// (`0`: from the start), with their types when `kinds`, and the cursor of the next page
    /// (`0`: none). A cursor is valid in every process sharing the keyspace.
    fn scan(
        &self,
        db: u32,
        cursor: u64,
        count: usize,
        kinds: bool,
        now: i64,
    ) -> Result<(TypedKeys, u64)>;
    /// How many live keys `db` holds.
    fn dbsize(&self, db: u32, now: i64) -> Result<i64>;
    /// A live key of `db` picked at random, if any.
    fn random_key(&self, db: u32, now: i64) -> Result<Option<Vec<u8>>>;
    /// Per non-empty database, in order: (index, live keys, live keys with an expiry).
    fn keyspace_info(&self, now: i64) -> Result<Vec<(u32, i64, i64)>>;
}

/// A read-only view of the keyspace at one instant (`now`), on one connection.
pub struct Reader<'c> {
    pub(crate) conn: &'c Conn<'c>,
    pub(crate) now: i64,
    /// The instant expiry is judged at: `now`, or `i64::MIN` (nothing has expired) while a
    /// replica applies its master's writes ([`Writer::keep_expired`]).
    pub(crate) expiry_now: i64,
    pub(crate) databases: u32,
    /// The sorted sets' rank-block sizes this engine was opened with.
    pub(crate) rank: RankBlocks,
    /// Where keyspace-wide reads go when the connection is a scratch ([`SharedKeyspace`]).
    pub(crate) shared: Option<Rc<dyn SharedKeyspace>>,
    /// Over a shared keyspace: the function libraries the group loaded into the scratch's
    /// `relis_functions`, when the shared set changed since this node last took it
    /// ([`Reader::take_function_libraries`]).
    pub(crate) functions: Option<Rc<LoadedFunctions>>,
}

/// The shared function libraries a group loaded into its scratch: the set's version, the set as
/// committed (name, code), by name, and whether a job took them
/// ([`Reader::take_function_libraries`]; the node then has them).
pub(crate) struct LoadedFunctions {
    // Read by the PostgreSQL backend only, which alone makes these.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) version: i64,
    pub(crate) libraries: Vec<(String, bytes::Bytes)>,
    pub(crate) taken: std::cell::Cell<bool>,
}

impl<'c> Reader<'c> {
    pub(crate) fn new(conn: &'c Conn<'c>, now: i64, ks: Keyspace) -> Self {
        Reader {
            conn,
            now,
            expiry_now: now,
            databases: ks.databases,
            rank: ks.rank,
            shared: None,
            functions: None,
        }
    }

    /// The instant this view evaluates expiry at, in unix milliseconds.
    pub fn now_ms(&self) -> i64 {
        self.now
    }

    /// The number of logical databases.
    pub fn databases(&self) -> u32 {
        self.databases
    }

    /// Checks that `db` is a valid logical database index.
    ///
    /// # Errors
    /// [`Error::DbIndexOutOfRange`] when it is not.
    pub fn check_db(&self, db: u32) -> Result<()> {
        if db < self.databases {
            Ok(())
        } else {
            Err(Error::DbIndexOutOfRange)
        }
    }

    /// The metadata of `key` in `db` if it exists and has not expired.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn meta(&self, db: u32, key: &[u8]) -> Result<Option<KeyMeta>> {
        let meta = self.raw_meta(db, key)?;
        Ok(meta.filter(|m| self.is_live(m)))
    }

    pub(crate) fn is_live(&self, m: &KeyMeta) -> bool {
        m.expire_at.is_none_or(|at| at > self.expiry_now)
    }

    /// The key row, expired or not.
    pub(crate) fn raw_meta(&self, db: u32, key: &[u8]) -> Result<Option<KeyMeta>> {
        Ok(self.raw_meta_head(db, key)?.map(|(m, _)| m))
    }

    /// The key row, expired or not, with its `head` column (a list's head position, a set's,
    /// hash's or sorted set's encoding flag). On the writer's connection, a key row kept
    /// pending ([`PendingRow`]) is answered from memory.
    pub(crate) fn raw_meta_head(&self, db: u32, key: &[u8]) -> Result<Option<(KeyMeta, i64)>> {
        if let Some(pending) = self.pending_row(db, key) {
            return Ok(Some(pending));
        }
        let mut st = crate::backend::sqlite::stmt::prepare(
            self.conn,
            "SELECT id, type, expire_at, version, count, mtime, head FROM main.relis_keys
             WHERE db = ?1 AND key = ?2",
        )?;
        let row = st
            .query_row((db, key), |r| {
                Ok((MetaColumns::of(r)?, r.get::<_, i64>(6)?))
            })
            .optional()?;
        let Some((m, head)) = row else {
            return Ok(None);
        };
        Ok(Some((m.meta()?, head)))
    }

    /// The key row at `key` as this connection keeps it pending ([`PendingRow`]), with its
    /// `head`, if it keeps that row: then the row in SQL is older, and every statement that
    /// names `relis_keys` writes it first.
    pub(crate) fn pending_row(&self, db: u32, key: &[u8]) -> Option<(KeyMeta, i64)> {
        // Every key lookup comes here, on the readers too: nothing pending is one load.
        if !self.conn.state().keys_pending() {
            return None;
        }
        self.conn
            .state()
            .existing(|p: &mut PendingRow| match &p.0 {
                Some(r) if r.db == db && r.key == key => Some((r.meta, r.head)),
                _ => None,
            })
            .flatten()
    }
}

/// A key row's first six columns as the engine selects them: `id, type, expire_at, version,
/// count, mtime`.
pub(crate) struct MetaColumns(i64, i64, Option<i64>, i64, i64, i64);

impl MetaColumns {
    /// Reads the six columns from the start of `r`.
    pub(crate) fn of(r: &rusqlite::Row<'_>) -> rusqlite::Result<MetaColumns> {
        Ok(MetaColumns(
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
        ))
    }

    /// The metadata they hold.
    ///
    /// # Errors
    /// [`Error::Storage`] for an unknown type code (see [`KeyType::from_code`]).
    pub(crate) fn meta(self) -> Result<KeyMeta> {
        let MetaColumns(id, t, expire_at, version, count, mtime) = self;
        Ok(KeyMeta {
            id,
            kind: KeyType::from_code(t)?,
            expire_at,
            version,
            count,
            mtime,
        })
    }
}

/// How far ahead of the version counter its stored value is moved when the counter catches up
/// with it.
pub(crate) const VERSION_LEASE: i64 = 1 << 16;

/// What a data type keeps on the writer's connection outside SQL (the sorted sets' rank
/// copies and pending counts), and what the writer's transaction does to it. The types layer
/// registers these statically (`types::WRITER_HOOKS`, handed to the backend when a `Db` opens),
/// so this generic code names no type: plain `fn` pointers, no allocation, called in slice order.
#[derive(Clone, Copy)]
pub(crate) struct WriterHooks {
    /// Writes what is pending to SQL: before a savepoint opens (it must open with nothing
    /// pending), before the group transaction commits, and before SQL reads the rows.
    ///
    /// # Errors
    /// A storage error; the caller's transaction must fail.
    pub before_savepoint: fn(&Conn<'_>) -> Result<()>,
    /// Forgets what is pending and what it was made in: the work that made it was rolled back
    /// (to a savepoint, or the whole transaction).
    pub rollback: fn(&Conn<'_>),
    /// Forgets what is kept for collection `kid`: its elements are being deleted.
    pub elements_deleted: fn(&Conn<'_>, i64),
}

impl WriterHooks {
    /// Writes every type's pending state (see [`WriterHooks::before_savepoint`]).
    pub(crate) fn flush(hooks: &[WriterHooks], conn: &Conn<'_>) -> Result<()> {
        flush_row(conn)?;
        hooks.iter().try_for_each(|h| (h.before_savepoint)(conn))
    }

    /// Forgets every type's pending state (see [`WriterHooks::rollback`]), and the key counts'
    /// (see `counts.rs`).
    pub(crate) fn discard(hooks: &[WriterHooks], conn: &Conn<'_>) {
        forget_row(conn);
        crate::backend::sqlite::counts::discard(conn);
        hooks.iter().for_each(|h| (h.rollback)(conn))
    }
}

/// A change of one key row (`version`, `count`, `mtime`, `head`) kept in memory on the
/// writer's connection and written once, where a run of writes to one key (HSET after HSET,
/// ZADD after ZADD on a leaderboard, SETBIT after SETBIT on a chunked bitmap) would otherwise
/// look the row up and rewrite it at every command ([`Writer::save_row_later`]).
///
/// While a row is pending, the connection's [`KeysHook`](crate::backend::sqlite::stmt::KeysHook) is set: the next statement that names
/// `relis_keys` (whatever reads or writes the key rows: another key's lookup, DEL, EXPIRE, SCAN,
/// DBSIZE, user SQL) writes it first (`stmt::prepare`, `stmt::dynamic`, `stmt::before_keys`), so
/// no statement sees the row in SQL older than it is. The writes that keep it pending read it
/// from memory instead ([`Reader::raw_meta_head`], [`Reader::pending_row`]). It is also written
/// before a savepoint opens and before the transaction commits ([`WriterHooks::flush`]), so no
/// other connection and no rolled-back savepoint ever sees it, and forgotten with a rollback
/// ([`WriterHooks::discard`]).
#[derive(Default)]
pub(crate) struct PendingRow(Option<Row>);

/// The key row a [`PendingRow`] keeps.
struct Row {
    db: u32,
    key: Vec<u8>,
    /// The row as it is to be: the columns the engine reads.
    meta: KeyMeta,
    head: i64,
    /// The version the row holds in SQL.
    row_version: i64,
}

/// Writes the pending key row, if any (see [`PendingRow`]).
fn flush_row(conn: &Conn<'_>) -> rusqlite::Result<()> {
    conn.state().set_keys_hook(None);
    match conn.state().existing(|p: &mut PendingRow| p.0.take()) {
        Some(Some(r)) => write_row(conn, &r),
        _ => Ok(()),
    }
}

/// Forgets the pending key row (see [`PendingRow`]).
fn forget_row(conn: &Conn<'_>) {
    conn.state().set_keys_hook(None);
    conn.state().existing(|p: &mut PendingRow| p.0 = None);
}

fn write_row(conn: &Conn<'_>, r: &Row) -> rusqlite::Result<()> {
    let changed = crate::backend::sqlite::stmt::prepare(
        conn,
        "UPDATE main.relis_keys SET version = ?3, count = ?4, mtime = ?5, head = ?6
         WHERE db = ?1 AND key = ?2 AND id = ?7 AND version = ?8",
    )?
    .execute((
        r.db,
        &r.key,
        r.meta.version,
        r.meta.count,
        r.meta.mtime,
        r.head,
        r.meta.id,
        r.row_version,
    ))?;
    if changed == 1 {
        Ok(())
    } else {
        // Every statement on the key rows writes the pending row first: this is a bug, and
        // the transaction must not commit a count that disagrees with the elements.
        Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_INTERNAL),
            Some(format!(
                "the key row kept pending for key id {} changed under it",
                r.meta.id
            )),
        ))
    }
}

/// State the writer thread keeps across jobs.
pub(crate) struct WriterState {
    /// The data types' hooks on the transaction's moves (savepoint, rollback, commit).
    pub hooks: &'static [WriterHooks],
    /// The next value of the version/id counter.
    pub next_version: i64,
    /// The counter's value in the file: an upper bound of every value handed out, moved
    /// [`VERSION_LEASE`] ahead when the counter reaches it (see [`Writer::persist_counter`]).
    pub persisted_version: i64,
    /// Set when work ran without a savepoint of its own and hit a storage error: the whole
    /// group transaction is rolled back and every write in it fails.
    pub poisoned: Option<Error>,
    /// Keyspace events of the current group transaction (see [`crate::events`]).
    pub events: Vec<crate::events::KeyEvent>,
    /// Where committed events go, once a sink is installed.
    pub sink: crate::events::SinkSlot,
    /// Set while a key that existed is rebuilt under the same name (a STORE destination):
    /// Redis overwrites such a value in place, so it is not `new`.
    pub mute_new: bool,
    /// While someone watches ([`Writer::watch_new_keys`]): the keys created since, as
    /// (database, key).
    pub new_keys: Option<Vec<(u32, Vec<u8>)>>,
    /// Expired keys deleted by writes that found them (lazy expiry) in the current group
    /// transaction, added to [`crate::Stats::expired_keys`] once it commits.
    pub lazily_expired: u64,
    /// The server follows a master ([`Writer::set_following`]): the sweep deletes nothing.
    pub following: bool,
    /// Over a [`SharedKeyspace`]: the flushes and swaps of whole databases made in the current
    /// group transaction, in order, for the backend to make at its commit (dropped with what
    /// an enclosing [`Writer::atomic`] rolls back).
    pub wide: Vec<WideChange>,
    /// Over a [`SharedKeyspace`]: the keys written in the current group transaction without a
    /// new version (a stream's groups, which Redis does not signal as a change of the key), for
    /// the backend to write back all the same, keeping their version. A key may be listed
    /// although what wrote it was rolled back: writing back an unchanged value is harmless.
    pub quiet: Vec<(u32, Vec<u8>)>,
}

/// A change to whole databases over a [`SharedKeyspace`], which the backend makes at the
/// group's commit ([`WriterState::wide`]): the scratch holds only the group's keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WideChange {
    /// FLUSHDB of the database, or FLUSHALL (`None`).
    Flush(Option<u32>),
    /// SWAPDB of the two databases.
    Swap(u32, u32),
}

/// What a command declares about its errors, for the backend to decide how to keep the command
/// all or nothing ([`Writer::command`]). Commands state facts about themselves; the cost of
/// each way (a savepoint, a round trip) is the backend's business.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnError {
    /// An error may come after the command has written: what it wrote must be undone.
    Undo,
    /// Nothing is left to undo when the command fails: its errors all come before its first
    /// write, or each of its writes undoes itself (one statement, or SQL the engine already
    /// wraps). Only a storage failure can stop it half way, and that fails the whole group.
    NothingToUndo,
    /// What the command wrote before its error stays, as Redis keeps it (a script's writes
    /// before a runtime error, PFADD's elements before a corrupted value is found).
    Keep,
}

/// A read-write view of the keyspace: only the writer thread makes one, inside its group
/// transaction. Reads through a `Writer` see the writes made before them in the same batch.
pub struct Writer<'c> {
    r: Reader<'c>,
    st: &'c RefCell<WriterState>,
    /// The client the current job works for (recorded in its events).
    origin: u64,
}

impl<'c> Deref for Writer<'c> {
    type Target = Reader<'c>;
    fn deref(&self) -> &Reader<'c> {
        &self.r
    }
}

impl<'c> DerefMut for Writer<'c> {
    fn deref_mut(&mut self) -> &mut Reader<'c> {
        &mut self.r
    }
}

impl<'c> Writer<'c> {
    /// The writer's state, for one statement's use (no borrow is held across calls).
    pub(crate) fn st(&self) -> std::cell::RefMut<'_, WriterState> {
        self.st.borrow_mut()
    }

    pub(crate) fn new(
        conn: &'c Conn<'c>,
        now: i64,
        ks: Keyspace,
        st: &'c RefCell<WriterState>,
    ) -> Self {
        Writer {
            r: Reader::new(conn, now, ks),
            st,
            origin: 0,
        }
    }

    /// For the rest of this job, no key has expired: every key is live whatever its expiry,
    /// and an expiry time already past neither deletes a key nor keeps it from being written.
    /// How a Redis replica applies its master's writes: it is behind its master, so a key may
    /// have expired by its clock that had not when the master wrote to it; the master's DEL
    /// says when a key has expired.
    pub fn keep_expired(&mut self) {
        self.r.expiry_now = i64::MIN;
    }

    /// Whether the server follows a master (`true` from REPLICAOF host port until REPLICAOF NO
    /// ONE): meanwhile the background sweep deletes no expired key, as a Redis replica never
    /// expires keys itself (reads still do not see them).
    pub fn set_following(&mut self, on: bool) {
        self.st().following = on;
    }

    /// Whether the server follows a master ([`Writer::set_following`]).
    pub fn following(&self) -> bool {
        self.st.borrow().following
    }

    /// Runs `f` inside a savepoint: if it returns `Err`, everything it wrote is rolled back and
    /// the error is returned; other work in the same group commit is unaffected.
    ///
    /// # Errors
    /// `f`'s error, or a storage error from the savepoint itself.
    pub fn atomic<T, E: From<Error>>(
        &mut self,
        f: impl FnOnce(&mut Writer<'c>) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        // A savepoint opens with nothing pending (e.g. rank counts, see types/zset/rank.rs).
        WriterHooks::flush(self.st().hooks, self.conn).map_err(E::from)?;
        self.exec_cached("SAVEPOINT cmd").map_err(E::from)?;
        let events = self.st().events.len();
        let wide = self.st().wide.len();
        let counts = crate::backend::sqlite::counts::mark(self.conn);
        match f(self) {
            Ok(v) => {
                self.exec_cached("RELEASE cmd").map_err(E::from)?;
                Ok(v)
            }
            Err(e) => {
                // Leave the transaction usable whatever happened inside.
                let _ = self.exec_cached("ROLLBACK TO cmd");
                WriterHooks::discard(self.st().hooks, self.conn);
                // The key counts' changes from before the savepoint stand.
                crate::backend::sqlite::counts::restore(self.conn, counts);
                let _ = self.exec_cached("RELEASE cmd");
                // What was rolled back did not happen: its events are not published.
                self.st().events.truncate(events);
                self.st().wide.truncate(wide);
                Err(e)
            }
        }
    }

    /// Runs one command's work `f`, made all or nothing as its declared [`OnError`] requires.
    /// On SQLite a savepoint copies every page the command touches to the statement journal,
    /// so only [`OnError::Undo`] gets one ([`Writer::atomic`]); the others run as they are.
    ///
    /// # Errors
    /// `f`'s error, or a storage error from the savepoint itself.
    pub fn command<T, E: From<Error>>(
        &mut self,
        on_error: OnError,
        f: impl FnOnce(&mut Writer<'c>) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        match on_error {
            OnError::Undo => self.atomic(f),
            OnError::NothingToUndo | OnError::Keep => f(self),
        }
    }

    /// Marks the current group transaction as failed: it will be rolled back and every write in
    /// it answered with `e`. Work that skips [`Writer::atomic`] (single-step commands whose only
    /// possible failure after writing is a storage error) calls this when storage fails.
    pub fn poison(&mut self, e: Error) {
        if self.st().poisoned.is_none() {
            self.st().poisoned = Some(e);
        }
    }

    /// Whether keyspace events of `class` (see [`crate::events::class`]) are wanted now; a
    /// caller checks this before building an event that costs something to describe.
    pub fn wants_events(&self, class: u32) -> bool {
        self.st().sink.get().is_some_and(|s| s.wants(class))
    }

    /// Records the keyspace event `event` of `class` on `key` in `db`, to be published once the
    /// group transaction commits (and dropped if the enclosing [`Writer::atomic`] fails). A
    /// no-op unless the installed sink wants the class.
    pub fn notify(&mut self, class: u32, event: &'static str, db: u32, key: &[u8]) {
        if self.wants_events(class) {
            self.st().events.push(crate::events::KeyEvent {
                class,
                event,
                db,
                key: key.to_vec(),
                origin: self.origin,
            });
        }
    }

    /// Names the client this job works for: the events it records carry its id (client-side
    /// caching's NOLOOP, and the order of a client's own invalidations after its reply).
    pub fn set_origin(&mut self, client: u64) {
        self.origin = client;
    }

    /// How many events the current group transaction has recorded so far: a place to record
    /// an event at later with [`Writer::notify_at`].
    pub fn events_mark(&self) -> usize {
        self.st().events.len()
    }

    /// Like [`Writer::notify`], but records the event at `mark` (from [`Writer::events_mark`]),
    /// ahead of the events recorded since: for a command whose engine call records events
    /// (`new`) that Redis emits after this one.
    pub fn notify_at(&mut self, mark: usize, class: u32, event: &'static str, db: u32, key: &[u8]) {
        if self.wants_events(class) {
            let at = mark.min(self.st().events.len());
            self.st().events.insert(
                at,
                crate::events::KeyEvent {
                    class,
                    event,
                    db,
                    key: key.to_vec(),
                    origin: self.origin,
                },
            );
        }
    }

    /// Records that `key` was just created (Redis's `new` event, sent where Redis's `dbAdd`
    /// sends it).
    pub(crate) fn note_new(&mut self, db: u32, key: &[u8]) {
        if !self.st().mute_new {
            self.notify(crate::events::class::NEW, "new", db, key);
            self.note_ready(db, key);
        }
    }

    /// Starts (`true`) or stops keeping the keys created from now on, for
    /// [`Writer::take_new_keys`]: the keys a blocked client may now be served from, as Redis's
    /// `dbAdd` signals them ready.
    pub fn watch_new_keys(&mut self, on: bool) {
        self.st().new_keys = on.then(Vec::new);
    }

    /// The keys created (or marked with [`Writer::note_ready`]) since the last call, while
    /// [`Writer::watch_new_keys`] is on.
    pub fn take_new_keys(&mut self) -> Vec<(u32, Vec<u8>)> {
        self.st()
            .new_keys
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Counts `key` among the new keys while they are watched (a key that changed under a
    /// blocked client without being created, such as every key of the two databases SWAPDB
    /// exchanges).
    pub fn note_ready(&mut self, db: u32, key: &[u8]) {
        if let Some(keys) = self.st().new_keys.as_mut() {
            keys.push((db, key.to_vec()));
        }
    }

    /// Runs `f`, which recreates a key that existed before (`existed`) under the same name,
    /// without a `new` event for it: Redis replaces a STORE destination's value in place.
    pub(crate) fn replacing<T>(
        &mut self,
        existed: bool,
        f: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        let before = std::mem::replace(&mut self.st().mute_new, existed);
        let r = f(self);
        self.st().mute_new = before;
        r
    }

    pub(crate) fn exec_cached(&self, sql: &'static str) -> Result<()> {
        crate::backend::sqlite::stmt::prepare(self.conn, sql)?.execute([])?;
        Ok(())
    }

    /// Records a write to the key row at `key` (`meta`, as this job read it, and live) that
    /// sets its `count` and `head` and gives it a new version and mtime: kept pending and
    /// written once, by the next statement on the key rows or before the savepoint or commit
    /// that follows (see [`PendingRow`]), so a run of such writes to one key rewrites its row
    /// once. A pending row of another key is written first. Returns the row's new version.
    ///
    /// # Errors
    /// Storage errors only.
    pub(crate) fn save_row_later(
        &mut self,
        db: u32,
        key: &[u8],
        meta: &KeyMeta,
        count: i64,
        head: i64,
    ) -> Result<i64> {
        let (version, now) = (self.next_version(), self.now);
        let row = KeyMeta {
            version,
            count,
            mtime: now,
            ..*meta
        };
        let kept = self.conn.state().with(|p: &mut PendingRow| {
            match p.0.as_mut().filter(|r| r.db == db && r.key == key) {
                Some(r) => {
                    (r.meta, r.head) = (row, head);
                    true
                }
                None => false,
            }
        });
        if !kept {
            // Another key's row first (its statement must not find this one pending).
            flush_row(self.conn)?;
            self.conn.state().with(|p: &mut PendingRow| {
                p.0 = Some(Row {
                    db,
                    key: key.to_vec(),
                    meta: row,
                    head,
                    row_version: meta.version,
                })
            });
            self.conn.state().set_keys_hook(Some(flush_row));
        }
        Ok(version)
    }

    /// Records a write to the key row at `key` (`meta`, as this job read it) that changes
    /// none of its columns but `version` (a new one), `mtime` (now) and `head`: kept pending
    /// as [`Writer::save_row_later`] keeps it.
    ///
    /// # Errors
    /// Storage errors only.
    pub(crate) fn touch_later(
        &mut self,
        db: u32,
        key: &[u8],
        meta: &KeyMeta,
        head: i64,
    ) -> Result<()> {
        self.save_row_later(db, key, meta, meta.count, head)?;
        Ok(())
    }

    /// Sets the bits `bits` of the `head` of the key row at `key` in its pending row, if it
    /// has one (see [`PendingRow`]); returns whether it had (if not, the caller writes them in
    /// SQL).
    pub(crate) fn or_pending_head(&mut self, db: u32, key: &[u8], bits: i64) -> bool {
        self.conn
            .state()
            .existing(|p: &mut PendingRow| match p.0.as_mut() {
                Some(r) if r.db == db && r.key == key => {
                    r.head |= bits;
                    true
                }
                _ => false,
            })
            .unwrap_or(false)
    }

    /// A fresh value of the monotonic version counter (also used for new key ids).
    pub(crate) fn next_version(&mut self) -> i64 {
        let mut st = self.st();
        st.next_version += 1;
        st.next_version - 1
    }

    /// The live key's metadata; an expired key is deleted first, so a write to it starts from
    /// empty.
    pub(crate) fn meta_for_write(&mut self, db: u32, key: &[u8]) -> Result<Option<KeyMeta>> {
        match self.raw_meta(db, key)? {
            Some(m) if !self.is_live(&m) => {
                self.delete_expired(db, key, &m)?;
                Ok(None)
            }
            m => Ok(m),
        }
    }

    /// Like [`Writer::meta_for_write`], with [`Error::WrongType`] for a key of another type.
    pub(crate) fn meta_for_write_of(
        &mut self,
        db: u32,
        key: &[u8],
        kind: KeyType,
    ) -> Result<Option<KeyMeta>> {
        match self.meta_for_write(db, key)? {
            Some(m) if m.kind != kind => Err(Error::WrongType),
            m => Ok(m),
        }
    }

    /// Deletes an expired key found by a write (Redis's lazy expiry), with its `expired` event.
    pub(crate) fn delete_expired(&mut self, db: u32, key: &[u8], meta: &KeyMeta) -> Result<()> {
        self.delete_key(db, key, meta)?;
        self.notify(crate::events::class::EXPIRED, "expired", db, key);
        self.st().lazily_expired += 1;
        Ok(())
    }

    /// Deletes a key row and its elements.
    pub(crate) fn delete_key(&mut self, db: u32, key: &[u8], meta: &KeyMeta) -> Result<()> {
        self.delete_elements(meta)?;
        self.delete_key_row(db, key, meta.expire_at.is_some())?;
        Ok(())
    }

    /// Deletes the key row at `key` (its elements are the caller's), counting it out of its
    /// database's key counts (see `counts.rs`); `expires`: whether the caller believes it has
    /// an expiry, which picks the statement tried first (the other follows if that deleted
    /// nothing, so a wrong guess costs a lookup, not a wrong count). Returns whether a row went.
    ///
    /// # Errors
    /// Storage errors only.
    pub(crate) fn delete_key_row(&mut self, db: u32, key: &[u8], expires: bool) -> Result<bool> {
        const PERSISTENT: &str =
            "DELETE FROM main.relis_keys WHERE db = ?1 AND key = ?2 AND expire_at IS NULL";
        const EXPIRING: &str =
            "DELETE FROM main.relis_keys WHERE db = ?1 AND key = ?2 AND expire_at IS NOT NULL";
        // A row kept pending goes with the row: nothing of it is left to write.
        if self.pending_row(db, key).is_some() {
            forget_row(self.conn);
        }
        let tries = if expires {
            [(EXPIRING, true), (PERSISTENT, false)]
        } else {
            [(PERSISTENT, false), (EXPIRING, true)]
        };
        for (sql, expiring) in tries {
            if crate::backend::sqlite::stmt::prepare(self.conn, sql)?.execute((db, key))? > 0 {
                self.count_keys(db, -1, -i64::from(expiring));
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Counts `keys` more key rows in `db` (fewer when negative), `expires` more of them with an
    /// expiry: what a statement just did to `relis_keys` (see `counts.rs`). Over a
    /// [`SharedKeyspace`] nothing is counted: the scratch holds only the group's keys, and the
    /// shared keyspace counts its own.
    pub(crate) fn count_keys(&self, db: u32, keys: i64, expires: i64) {
        if self.shared.is_none() {
            crate::backend::sqlite::counts::add(self.conn, db, keys, expires);
        }
    }

    /// Counts a key row just inserted in `db` with expiry `expire_at`.
    pub(crate) fn count_new_key(&self, db: u32, expire_at: Option<i64>) {
        self.count_keys(db, 1, i64::from(expire_at.is_some()));
    }

    /// Counts a key row of `db` whose expiry just went from `before` to `after`.
    pub(crate) fn count_expiry_change(&self, db: u32, before: Option<i64>, after: Option<i64>) {
        self.count_keys(
            db,
            0,
            i64::from(after.is_some()) - i64::from(before.is_some()),
        );
    }

    /// Deletes the elements a collection keeps outside its key row. Small collections go at
    /// once; a large one is put in the trash and deleted by the background sweep in small
    /// batches, so one DEL of a huge key never stalls the writer (its id is never reused, so its
    /// leftover elements are invisible meanwhile).
    pub(crate) fn delete_elements(&mut self, meta: &KeyMeta) -> Result<()> {
        let Some(table) = meta.kind.element_table() else {
            return Ok(());
        };
        // A string's count is its length when chunked, 0 when inline.
        let rows = match meta.kind {
            KeyType::String if meta.count == 0 => return Ok(()),
            KeyType::String => meta.count / CHUNK as i64 + 1,
            _ => meta.count,
        };
        if rows > INLINE_DELETE {
            crate::backend::sqlite::stmt::prepare(
                self.conn,
                "INSERT OR IGNORE INTO main.relis_trash (kid, type) VALUES (?1, ?2)",
            )?
            .execute((meta.id, meta.kind.code()))?;
            return Ok(());
        }
        self.delete_all_elements(table, meta.id)?;
        Ok(())
    }

    fn delete_all_elements(&mut self, table: &str, kid: i64) -> Result<usize> {
        let n = crate::backend::sqlite::stmt::dynamic(
            self.conn,
            &format!("DELETE FROM {table} WHERE kid = ?1"),
        )?
        .execute([kid])?;
        if table == "main.relis_stream" {
            // Consumer groups go with the entries (a group's PEL is bounded by what it read).
            for sql in [
                "DELETE FROM main.relis_stream_pel WHERE kid = ?1",
                "DELETE FROM main.relis_stream_consumer WHERE kid = ?1",
                "DELETE FROM main.relis_stream_group WHERE kid = ?1",
            ] {
                crate::backend::sqlite::stmt::prepare(self.conn, sql)?.execute([kid])?;
            }
        }
        if table == "main.relis_zset" {
            let hooks = self.st().hooks;
            for h in hooks {
                (h.elements_deleted)(self.conn, kid);
            }
            crate::backend::sqlite::stmt::prepare(
                self.conn,
                "DELETE FROM main.relis_zrank WHERE kid = ?1",
            )?
            .execute([kid])?;
        }
        Ok(n)
    }

    /// Deletes up to about `limit` elements of trashed collections; returns how many.
    pub(crate) fn empty_trash(&mut self, limit: usize) -> Result<usize> {
        let mut done = 0;
        while done < limit {
            let Some((kid, code)) = crate::backend::sqlite::stmt::prepare(
                self.conn,
                "SELECT kid, type FROM main.relis_trash LIMIT 1",
            )?
            .query_row([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))
            .optional()?
            else {
                break;
            };
            let table = KeyType::from_code(code)?
                .element_table()
                .ok_or_else(|| Error::Storage("a string in the trash".into()))?;
            // Elements are keyed (kid, ...): a range delete of the first rows of this kid.
            let key_col = match table {
                "main.relis_list" => "pos",
                "main.relis_chunks" => "n",
                "main.relis_hash" => "field",
                "main.relis_stream" => "(ms, seq)",
                _ => "member",
            };
            let cols = key_col.trim_matches(|c| c == '(' || c == ')');
            let want = limit - done;
            let n = crate::backend::sqlite::stmt::dynamic(
                self.conn,
                &format!(
                    "DELETE FROM {table} WHERE kid = ?1 AND {key_col} IN
                     (SELECT {cols} FROM {table} WHERE kid = ?1 LIMIT ?2)"
                ),
            )?
            .execute((kid, want as i64))?;
            done += n;
            if n < want {
                // Fewer left than asked for: this collection is gone.
                self.delete_all_elements(table, kid)?;
                crate::backend::sqlite::stmt::prepare(
                    self.conn,
                    "DELETE FROM main.relis_trash WHERE kid = ?1",
                )?
                .execute([kid])?;
            }
        }
        Ok(done)
    }

    /// Deletes up to `limit` keys whose expiry has passed, returning how many it deleted
    /// (none while following a master: its DELs expire the keys).
    pub(crate) fn sweep(&mut self, limit: usize) -> Result<usize> {
        if self.st().following {
            return Ok(0);
        }
        let expired: Vec<(u32, Vec<u8>, KeyMeta)> = {
            let mut st = crate::backend::sqlite::stmt::prepare(
                self.conn,
                "SELECT db, key, id, type, expire_at, version, count, mtime FROM main.relis_keys
                 WHERE expire_at <= ?1 ORDER BY expire_at LIMIT ?2",
            )?;
            let rows = st.query_map((self.now, limit as i64), |r| {
                Ok((
                    r.get::<_, u32>(0)?,
                    r.get::<_, Vec<u8>>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, Option<i64>>(4)?,
                    r.get::<_, i64>(5)?,
                    r.get::<_, i64>(6)?,
                    r.get::<_, i64>(7)?,
                ))
            })?;
            let mut out = Vec::new();
            for row in rows {
                let (db, key, id, t, expire_at, version, count, mtime) = row?;
                let kind = KeyType::from_code(t)?;
                out.push((
                    db,
                    key,
                    KeyMeta {
                        id,
                        kind,
                        expire_at,
                        version,
                        count,
                        mtime,
                    },
                ));
            }
            out
        };
        for (db, key, meta) in &expired {
            self.delete_key(*db, key, meta)?;
            self.notify(crate::events::class::EXPIRED, "expired", *db, key);
        }
        Ok(expired.len())
    }

    pub(crate) fn persisted_version(&self) -> i64 {
        self.st().persisted_version
    }

    /// Keeps the counter in the file ahead of every value handed out: when the counter has
    /// reached the stored value, stores one [`VERSION_LEASE`] further. Values only need to be
    /// unique and increasing across restarts, not dense, so a restart skips what was leased and
    /// not used, and most commits write no counter at all (writing it each time dirtied one
    /// more page per group commit).
    pub(crate) fn persist_counter(&mut self) -> Result<()> {
        let (next, persisted) = {
            let st = self.st();
            (st.next_version, st.persisted_version)
        };
        if next > persisted {
            let to = next + VERSION_LEASE;
            crate::backend::sqlite::stmt::prepare(
                self.conn,
                "UPDATE main.relis_meta SET value = ?1 WHERE name = 'next_version'",
            )?
            .execute([to])?;
            self.st().persisted_version = to;
        }
        Ok(())
    }
}
