//! The PostgreSQL side of the shared-PostgreSQL backend (issue 19; ARCHITECTURE.md 10.1): the
//! key table every node shares, and the group transaction that locks, loads and writes back the
//! keys a group of writes touches. What runs the commands over the loaded keys is the engine
//! itself, over a scratch database; this module knows nothing of types: a value is the opaque
//! payload the engine gives it (Redis's DUMP encoding).
//!
//! **No lost updates.** A group locks every key it will touch before it reads any, with a
//! transaction-scoped advisory lock per key (`pg_advisory_xact_lock` of a stable 64-bit hash of
//! the database index and the key): a lock covers a key that does not exist yet, which a row
//! lock cannot, and two groups on different nodes that touch one key run one after the other,
//! each seeing the other's committed value. Locks are taken in ascending hash order, so groups
//! that lock only through [`Group::lock`] never deadlock; a deadlock or serialization failure
//! that still happens (keys locked in two steps) is reported by [`is_conflict`], for the caller
//! to roll back and run the group again.
//!
//! **Flushes are atomic.** Before its key locks, in the same statement sequence of the same
//! round trip, a writing group takes database locks ([`DB_LOCKS`], the two-integer advisory
//! lock space, which no key's 64-bit lock shares): the keyspace lock (objid -1), then one per
//! database its keys are in, ascending, all shared. A group that flushes takes the keyspace
//! lock exclusively (FLUSHALL) or its database's (FLUSHDB) instead: it waits for every group
//! that may have loaded a key of what it empties to commit, and every group that would load one
//! waits for it, so no key loaded before a flush is written back after it on any node. Every
//! group takes its locks in one order (keyspace, databases ascending, keys ascending), so no
//! deadlock arises from them. A SWAPDB takes both databases' locks exclusively, as a flush of
//! each would, and swaps the rows at commit ([`PgKeys::swap`]).
//!
//! **Function libraries** live in `relis_functions`, with the set's version in
//! `relis_function_set`. A group that uses them reads the version in its round trip, and the
//! libraries only when the version is not the one its node has ([`Functions::Unless`]); a group
//! that changes them takes the functions lock ([`DB_LOCKS`], -2) exclusively before every other
//! lock ([`Functions::Lock`]) and replaces the set at commit ([`PgKeys::commit_all`]), so
//! changes apply one at a time across nodes, each to the set the previous one committed.

mod bus;
mod keyspace;
mod sql;

pub use bus::{Bus, Deliver};
pub use keyspace::{ExportSink, PgKeyspace, ScanRows};
use postgres::{Client, NoTls, SimpleQueryMessage, Statement, Transaction};
pub use sql::{PgSql, PgSqlSession};
use std::fmt::Write as _;

/// How values are stored in PostgreSQL: the engine hands whole values ([`crate::Dumped`]) to
/// `dump` and takes them back from `restore`. The server passes Redis's DUMP payload
/// (relis-server `cmd/keys/dump.rs`); the engine itself knows no serialization.
#[derive(Clone, Copy)]
pub struct Codec {
    /// The stored bytes of a value.
    pub dump: fn(crate::Dumped) -> Vec<u8>,
    /// The value of stored bytes (`None`: they are not a value this codec wrote).
    pub restore: fn(&[u8]) -> Option<crate::Value>,
    /// The type of a stored value from its first byte (SCAN ... TYPE reads only that byte).
    pub kind: fn(u8) -> Option<crate::KeyType>,
}

/// An error of the PostgreSQL backend.
pub type Error = postgres::Error;

/// The schema's versions, in order: each applied once, in one transaction, under an advisory
/// lock so that nodes starting together do not race.
const MIGRATIONS: &[&str] = &[
    // 1: keys and their versions (WATCH compares versions; the sequence makes a version never
    // repeat for a key, even one deleted and created again).
    "CREATE TABLE relis_keys (
         db integer NOT NULL,
         key bytea NOT NULL,
         value bytea NOT NULL,
         expire_at bigint,
         version bigint NOT NULL,
         PRIMARY KEY (db, key)
     );
     CREATE INDEX relis_keys_expiry ON relis_keys (expire_at) WHERE expire_at IS NOT NULL;
     CREATE SEQUENCE relis_versions;",
    // 2: messages between nodes too large for a notification's payload (`bus.rs`): the
    // notification carries the row's id; senders delete rows older than a minute.
    "CREATE TABLE relis_bus (
         id bigserial PRIMARY KEY,
         body bytea NOT NULL,
         at timestamptz NOT NULL DEFAULT now()
     );",
    // 3: SCAN's cursor (`keyspace.rs`): a number per row, given at insert and kept by every
    // update, in its own sequence; unique per database, for the pages' range scans.
    "CREATE SEQUENCE relis_scan_ids;
     ALTER TABLE relis_keys ADD COLUMN scan_id bigint;
     UPDATE relis_keys SET scan_id = nextval('relis_scan_ids');
     ALTER TABLE relis_keys ALTER COLUMN scan_id SET DEFAULT nextval('relis_scan_ids'),
         ALTER COLUMN scan_id SET NOT NULL;
     CREATE UNIQUE INDEX relis_keys_scan ON relis_keys (db, scan_id);",
    // 4: function libraries (FUNCTION LOAD), as the SQLite file keeps them (the code is the
    // library's whole text, shebang line included), and the set's version: a new one from
    // `relis_versions` at every change, which groups compare with the one their node has.
    "CREATE TABLE relis_functions (
         name text PRIMARY KEY,
         code bytea NOT NULL
     );
     CREATE TABLE relis_function_set (version bigint NOT NULL);
     INSERT INTO relis_function_set (version) VALUES (0);",
    // 5: SQL.* (`sql.rs`): the sandbox role's record, prepared statements, and the redis_*
    // views, which decode the stored DUMP payloads (`views.sql`).
    include_str!("views.sql"),
    // 6: the bus's channel (`bus.rs`), named by a secret only the backend's user reads: any
    // role may LISTEN or NOTIFY on a channel it can name, and SQL.* runs the user's SQL as a
    // role of its own (`sql.rs`), which must neither hear the nodes' messages nor forge them.
    "CREATE TABLE relis_bus_channel (name text NOT NULL);
     INSERT INTO relis_bus_channel (name)
         SELECT 'relis_bus_' || md5(random()::text || clock_timestamp()::text);",
    // 7: the redis_streams view (`streams.sql`), and redis_keys counting a stream's entries.
    include_str!("streams.sql"),
];

/// The advisory lock key under which migrations run (any constant no key hash is likely to be:
/// a collision would only make a migration wait for a group).
const MIGRATION_LOCK: i64 = 0x7265_6c69_735f_6d69; // "relis_mi"

/// The class (first integer) of the database locks in PostgreSQL's two-integer advisory lock
/// space, apart from the keys' 64-bit one; the second integer is the database index, or -1 for
/// the whole keyspace (see the module's documentation).
pub const DB_LOCKS: i32 = 0x726c_6462; // "rldb"

/// The functions lock's second integer in the [`DB_LOCKS`] class: a group that changes the
/// function libraries takes it exclusively, before any other lock; no other group takes it.
const FUNCTIONS_LOCK: i64 = -2;

/// What a group asks of the shared function libraries ([`PgKeys::begin_group`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Functions {
    /// Nothing.
    Skip,
    /// The set, unless its version is this one (the node has that one already).
    Unless(i64),
    /// The set, whatever its version, under the functions lock taken exclusively: the group
    /// changes it (and writes it back with [`PgKeys::commit_all`]).
    Lock,
}

/// Function libraries as stored: (name, code), by name.
pub type Libraries = Vec<(String, Vec<u8>)>;

/// The shared function libraries: the set's version and its libraries (name, code).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionSet {
    /// The version of the last change (0: never changed).
    pub version: i64,
    /// The libraries: name and code.
    pub libraries: Libraries,
}

/// A key as the engine names it: logical database index and key bytes.
pub type Key = (u32, Vec<u8>);

/// A key's row as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored {
    /// The value's payload.
    pub value: Vec<u8>,
    /// Absolute expiry, Unix milliseconds.
    pub expire_at: Option<i64>,
    /// The version of the last write (unique per write to the key).
    pub version: i64,
}

/// A change a group writes back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// The key now holds `value` (expiring at `expire_at`).
    Put {
        /// The key.
        key: Key,
        /// The value's payload.
        value: Vec<u8>,
        /// Absolute expiry, Unix milliseconds.
        expire_at: Option<i64>,
        /// A change Redis does not signal as one of the key (a stream's groups): the row keeps
        /// its version, so a WATCH of the key does not fail for it.
        quiet: bool,
    },
    /// The key no longer exists.
    Delete(Key),
}

/// One node's connection to the shared key table.
pub struct PgKeys {
    client: Client,
    /// The expiry sweep's statement, parsed once ([`PgKeys::sweep_expired`]).
    sweep: Statement,
}

/// What the key connection sets and prepares once, at connect: a group's statements are then
/// `EXECUTE`d by name inside its one simple-protocol round trip, with their keys and values as
/// array parameters (array literals of decimal and hex digits only), instead of being parsed
/// and planned at every group.
///
/// The planner settings keep those statements on the primary key. After five executions
/// PostgreSQL may switch to a generic plan, planned without the arrays' contents, and keep it:
/// planned while `relis_keys` is new and nearly empty (a fresh database), it joins the unnested
/// arrays to the table with a sequential scan and a hash join, and goes on scanning the whole
/// table at every group once it has grown (BENCHMARKS.md, issue 19). No statement of this
/// connection needs anything but the key index and the expiry index.
const SESSION: &str = "
    SET enable_seqscan = off;
    SET enable_bitmapscan = off;
    SET enable_hashjoin = off;
    SET enable_mergejoin = off;
    PREPARE relis_db_lock(integer[], boolean[]) AS
        SELECT count(*) FROM (SELECT CASE WHEN x
                THEN pg_advisory_xact_lock(%DB_LOCKS%, d)
                ELSE pg_advisory_xact_lock_shared(%DB_LOCKS%, d) END
            FROM unnest($1, $2) WITH ORDINALITY AS t(d, x, i) ORDER BY i) l;
    PREPARE relis_lock(bigint[]) AS
        SELECT count(*) FROM (SELECT pg_advisory_xact_lock(h)
            FROM unnest($1) WITH ORDINALITY AS t(h, i) ORDER BY i) l;
    PREPARE relis_load(integer[], text[]) AS
        SELECT t.i, encode(k.value, 'hex'), k.expire_at, k.version
        FROM unnest($1, $2) WITH ORDINALITY AS t(db, key, i)
        JOIN relis_keys k ON k.db = t.db AND k.key = decode(t.key, 'hex');
    PREPARE relis_delete(integer[], text[]) AS
        DELETE FROM relis_keys k USING unnest($1, $2) AS t(db, key)
        WHERE k.db = t.db AND k.key = decode(t.key, 'hex');
    PREPARE relis_put(integer[], text[], text[], bigint[]) AS
        INSERT INTO relis_keys (db, key, value, expire_at, version)
        SELECT db, decode(key, 'hex'), decode(value, 'hex'), expire_at, nextval('relis_versions')
        FROM unnest($1, $2, $3, $4) AS t(db, key, value, expire_at)
        ON CONFLICT (db, key) DO UPDATE SET value = excluded.value,
            expire_at = excluded.expire_at, version = excluded.version;
    PREPARE relis_put_quiet(integer[], text[], text[], bigint[]) AS
        INSERT INTO relis_keys (db, key, value, expire_at, version)
        SELECT db, decode(key, 'hex'), decode(value, 'hex'), expire_at, nextval('relis_versions')
        FROM unnest($1, $2, $3, $4) AS t(db, key, value, expire_at)
        ON CONFLICT (db, key) DO UPDATE SET value = excluded.value,
            expire_at = excluded.expire_at;
    PREPARE relis_expire(integer[], text[], bigint[], bigint[], bigint) AS
        DELETE FROM relis_keys k
        USING unnest($1, $2, $3, $4) WITH ORDINALITY AS t(db, key, version, h, i)
        WHERE k.db = t.db AND k.key = decode(t.key, 'hex') AND k.version = t.version
            AND k.expire_at <= $5
            AND pg_try_advisory_xact_lock_shared(%DB_LOCKS%, -1)
            AND pg_try_advisory_xact_lock_shared(%DB_LOCKS%, t.db)
            AND pg_try_advisory_xact_lock(t.h)
        RETURNING t.i;
    PREPARE relis_functions_load(bigint) AS
        SELECT s.version, f.name, encode(f.code, 'hex')
        FROM relis_function_set s LEFT JOIN relis_functions f ON s.version <> $1;
    PREPARE relis_functions_put(text[], text[]) AS
        INSERT INTO relis_functions (name, code)
        SELECT convert_from(decode(n, 'hex'), 'UTF8'), decode(c, 'hex')
        FROM unnest($1, $2) AS t(n, c);";

/// The shared active expiry's statement ([`PgKeys::sweep_expired`]).
const SWEEP: &str = "DELETE FROM relis_keys k USING (
         SELECT db, key FROM relis_keys
         WHERE expire_at IS NOT NULL AND expire_at <= $1
         ORDER BY expire_at LIMIT $2 FOR UPDATE SKIP LOCKED
     ) c
     WHERE k.db = c.db AND k.key = c.key AND k.expire_at <= $1
     RETURNING k.db, k.key";

impl PgKeys {
    /// Connects (`url`: a PostgreSQL connection string, `postgres://user@host:port/db` or
    /// `host=... port=... user=...`) and brings the schema up to date.
    ///
    /// # Errors
    /// The connection fails, or a migration does.
    pub fn connect(url: &str) -> Result<PgKeys, Error> {
        let mut client = Client::connect(url, NoTls)?;
        read_committed(&mut client)?;
        migrate(&mut client)?;
        client.batch_execute(&SESSION.replace("%DB_LOCKS%", &DB_LOCKS.to_string()))?;
        let sweep = client.prepare(SWEEP)?;
        Ok(PgKeys { client, sweep })
    }

    /// Starts a group's transaction.
    ///
    /// # Errors
    /// The connection fails.
    pub fn group(&mut self) -> Result<Group<'_>, Error> {
        Ok(Group {
            tx: self.client.transaction()?,
        })
    }

    /// Begins a group's transaction, locks `keys` (as [`Group::lock`]) and loads their rows
    /// (as [`Group::load`]), in one round trip: one simple-protocol query of three statements.
    /// Under READ COMMITTED each statement takes its own snapshot, so the load, which follows
    /// the locks, sees every commit of whoever held them before. End it with
    /// [`PgKeys::commit_changes`] or [`PgKeys::rollback`].
    ///
    /// # Errors
    /// The connection fails, or PostgreSQL reports a deadlock ([`is_conflict`]); the
    /// transaction is then rolled back.
    pub fn begin_locked(&mut self, keys: &[Key]) -> Result<Vec<Option<Stored>>, Error> {
        self.begin_locking(keys, keys)
    }

    /// [`PgKeys::begin_locked`], but only `locked` (a subset of `keys`: those the group may
    /// write) are locked; all of `keys` are loaded. A group's reads need no lock: they see a
    /// committed state as a group of reads alone does.
    ///
    /// # Errors
    /// As [`PgKeys::begin_locked`].
    pub fn begin_locking(
        &mut self,
        keys: &[Key],
        locked: &[Key],
    ) -> Result<Vec<Option<Stored>>, Error> {
        self.begin_flushing(keys, locked, &[])
    }

    /// [`PgKeys::begin_locking`] for a group that will also flush the databases in `flushes`
    /// (`None`: all): their database locks are taken exclusively (see the module's
    /// documentation), before the keys'.
    ///
    /// # Errors
    /// As [`PgKeys::begin_locked`].
    pub fn begin_flushing(
        &mut self,
        keys: &[Key],
        locked: &[Key],
        flushes: &[Option<u32>],
    ) -> Result<Vec<Option<Stored>>, Error> {
        Ok(self.begin_group(keys, locked, flushes, Functions::Skip)?.0)
    }

    /// [`PgKeys::begin_flushing`] for a group that also uses the function libraries: the set
    /// `functions` asks for comes back with the rows (`None`: not asked, or the node's version
    /// is current), read after every lock, in the same round trip. Under
    /// [`Functions::Lock`] the functions lock is taken first, exclusively.
    ///
    /// # Errors
    /// As [`PgKeys::begin_locked`].
    pub fn begin_group(
        &mut self,
        keys: &[Key],
        locked: &[Key],
        flushes: &[Option<u32>],
        functions: Functions,
    ) -> Result<(Vec<Option<Stored>>, Option<FunctionSet>), Error> {
        let mut hashes: Vec<i64> = locked.iter().map(|(db, k)| lock_hash(*db, k)).collect();
        hashes.sort_unstable();
        hashes.dedup();
        let mut sql = String::from("BEGIN;");
        let mut dbs = db_locks(locked.iter().map(|(db, _)| *db), flushes);
        if functions == Functions::Lock {
            dbs.insert(0, (FUNCTIONS_LOCK, true));
        }
        if !dbs.is_empty() {
            let _ = write!(
                sql,
                "EXECUTE relis_db_lock({}, '{{{}}}');",
                int_array(dbs.iter().map(|(d, _)| *d)),
                dbs.iter()
                    .map(|(_, x)| if *x { "t" } else { "f" })
                    .collect::<Vec<_>>()
                    .join(","),
            );
        }
        if !hashes.is_empty() {
            let _ = write!(
                sql,
                "EXECUTE relis_lock({});",
                int_array(hashes.iter().copied())
            );
        }
        sql.push_str(&functions_sql(functions));
        sql.push_str(&load_sql(keys));
        match self.client.simple_query(&sql) {
            Ok(msgs) => Ok((rows_of(keys.len(), &msgs)?, functions_of(functions, &msgs))),
            Err(e) => {
                self.rollback();
                Err(e)
            }
        }
    }

    /// The stored rows of `keys`, outside any transaction and without locks: one statement,
    /// so one consistent snapshot.
    ///
    /// # Errors
    /// The connection fails.
    pub fn load(&mut self, keys: &[Key]) -> Result<Vec<Option<Stored>>, Error> {
        Ok(self.load_with(keys, Functions::Skip)?.0)
    }

    /// [`PgKeys::load`], and the function libraries as `functions` asks (never locked: a read
    /// takes no lock), in the same round trip.
    ///
    /// # Errors
    /// The connection fails.
    pub fn load_with(
        &mut self,
        keys: &[Key],
        functions: Functions,
    ) -> Result<(Vec<Option<Stored>>, Option<FunctionSet>), Error> {
        let functions = match functions {
            Functions::Lock => Functions::Unless(-1),
            f => f,
        };
        if keys.is_empty() && functions == Functions::Skip {
            return Ok((Vec::new(), None));
        }
        let mut sql = functions_sql(functions);
        if !keys.is_empty() {
            sql.push_str(&load_sql(keys));
        }
        let msgs = self.client.simple_query(&sql)?;
        Ok((rows_of(keys.len(), &msgs)?, functions_of(functions, &msgs)))
    }

    /// Writes `changes` (as [`Group::apply`]) and commits the transaction
    /// [`PgKeys::begin_locked`] began, in one round trip.
    ///
    /// # Errors
    /// The connection fails or the commit does: then nothing of the group happened (the
    /// transaction is rolled back).
    pub fn commit_changes(&mut self, changes: &[Change]) -> Result<(), Error> {
        self.commit_all(changes, None)
    }

    /// [`PgKeys::commit_changes`] for a group that took the functions lock
    /// ([`Functions::Lock`]) and changed the libraries: `functions` (name, code) replaces the
    /// stored set, which gets a new version.
    ///
    /// # Errors
    /// As [`PgKeys::commit_changes`].
    pub fn commit_all(
        &mut self,
        changes: &[Change],
        functions: Option<&[(String, Vec<u8>)]>,
    ) -> Result<(), Error> {
        self.commit_expiring(changes, functions, &[], 0).map(drop)
    }

    /// [`PgKeys::commit_all`] that first deletes the rows of locked keys the group found
    /// expired at load (each key with the version it was loaded with) if they are still at
    /// that version and expired at `now` (before the changes, so a key written again is a new
    /// row), in the same round trip; returns the keys it deleted (as [`PgKeys::expire_rows`]:
    /// a row the sweep deleted meanwhile is not among them, so each `expired` event is sent by
    /// one node).
    ///
    /// # Errors
    /// As [`PgKeys::commit_changes`].
    pub fn commit_expiring(
        &mut self,
        changes: &[Change],
        functions: Option<&[(String, Vec<u8>)]>,
        expired: &[(Key, i64)],
        now: i64,
    ) -> Result<Vec<Key>, Error> {
        let mut sql = String::new();
        if !expired.is_empty() {
            sql.push_str(&expire_sql(expired, now));
            sql.push(';');
        }
        if let Some(libs) = functions {
            sql.push_str("DELETE FROM relis_functions;");
            if !libs.is_empty() {
                let _ = write!(
                    sql,
                    "EXECUTE relis_functions_put({}, {});",
                    hex_array(libs.iter().map(|(n, _)| n.as_bytes())),
                    hex_array(libs.iter().map(|(_, c)| c.as_slice())),
                );
            }
            sql.push_str("UPDATE relis_function_set SET version = nextval('relis_versions');");
        }
        let (mut dels, mut puts, mut quiet) = (Vec::new(), Vec::new(), Vec::new());
        for c in changes {
            match c {
                Change::Delete(k) => dels.push(k),
                Change::Put {
                    key,
                    value,
                    expire_at,
                    quiet: q,
                } => (if *q { &mut quiet } else { &mut puts }).push((key, value, expire_at)),
            }
        }
        if !dels.is_empty() {
            let _ = write!(
                sql,
                "EXECUTE relis_delete({}, {});",
                int_array(dels.iter().map(|(db, _)| i64::from(*db))),
                hex_array(dels.iter().map(|(_, k)| k.as_slice())),
            );
        }
        for (puts, statement) in [(puts, "relis_put"), (quiet, "relis_put_quiet")] {
            if puts.is_empty() {
                continue;
            }
            let mut expires = String::from("'{");
            for (i, (_, _, e)) in puts.iter().enumerate() {
                if i > 0 {
                    expires.push(',');
                }
                match e {
                    Some(at) => {
                        let _ = write!(expires, "{at}");
                    }
                    None => expires.push_str("NULL"),
                }
            }
            expires.push_str("}'");
            let _ = write!(
                sql,
                "EXECUTE {statement}({}, {}, {}, {expires});",
                int_array(puts.iter().map(|((db, _), _, _)| i64::from(*db))),
                hex_array(puts.iter().map(|((_, k), _, _)| k.as_slice())),
                hex_array(puts.iter().map(|(_, v, _)| v.as_slice())),
            );
        }
        sql.push_str("COMMIT");
        match self.client.simple_query(&sql) {
            Ok(msgs) => Ok(expired_of(expired, &msgs)),
            Err(e) => {
                self.rollback();
                Err(e)
            }
        }
    }

    /// Lazy expiry of rows a group found expired (`expired`: each key with the version it was
    /// loaded with), outside any group's transaction: deletes each row still at that version
    /// and expired at `now`, and returns the keys it deleted, whose `expired` events are this
    /// node's to send. Exactly once across nodes: a row is deleted by one statement only (this
    /// one, the sweep's, another node's, or a group's [`PgKeys::commit_expiring`]), and only
    /// that statement returns it; a version check spares a key written again meanwhile. It
    /// never waits for a lock a group holds: a key (or its database, or the keyspace) whose
    /// advisory lock is held elsewhere is skipped (`pg_try_advisory_xact_lock`), left to that
    /// group or to the sweep, so it cannot deadlock with groups writing rows in any order.
    ///
    /// # Errors
    /// The connection fails.
    pub fn expire_rows(&mut self, expired: &[(Key, i64)], now: i64) -> Result<Vec<Key>, Error> {
        if expired.is_empty() {
            return Ok(Vec::new());
        }
        let msgs = self.client.simple_query(&expire_sql(expired, now))?;
        Ok(expired_of(expired, &msgs))
    }

    /// The shared active expiry: deletes up to `limit` keys whose expiry is at or before
    /// `now` (Unix ms), oldest expiry first, and returns them. One statement (its own
    /// transaction): the candidates are row-locked with `FOR UPDATE SKIP LOCKED`, so nodes
    /// sweeping at once take disjoint rows and each key's deletion (and its `expired` event)
    /// happens on one node only; a row a group is writing back is skipped too, and the
    /// deletion checks the expiry again on the row it locked (a key given a new expiry
    /// meanwhile stays). A group that loaded the key before it expired treats it as it would
    /// have anyway: an expired row reads as absent everywhere.
    ///
    /// # Errors
    /// The connection fails.
    pub fn sweep_expired(&mut self, now: i64, limit: usize) -> Result<Vec<Key>, Error> {
        let rows = self.client.query(&self.sweep, &[&now, &(limit as i64)])?;
        Ok(rows
            .iter()
            .map(|r| (r.get::<_, i32>(0) as u32, r.get(1)))
            .collect())
    }

    /// Rolls back the transaction [`PgKeys::begin_locked`] began (its locks go). Errors are
    /// ignored: a broken connection has no transaction left ([`PgKeys::is_closed`]).
    pub fn rollback(&mut self) {
        let _ = self.client.simple_query("ROLLBACK");
    }

    /// Whether the connection is gone (the caller connects again).
    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    /// The schema version of the connected database.
    ///
    /// # Errors
    /// The connection fails.
    pub fn schema_version(&mut self) -> Result<usize, Error> {
        let v: i32 = self
            .client
            .query_one("SELECT version FROM relis_schema", &[])?
            .get(0);
        Ok(v as usize)
    }
}

/// Makes every transaction of the session READ COMMITTED, whatever the database's default
/// (`default_transaction_isolation`, which a DBA may have raised). The locking design needs it:
/// a group's load must take its snapshot after its locks are granted, which only READ
/// COMMITTED does (a snapshot per statement); under REPEATABLE READ the snapshot of the first
/// statement, taken before the lock wait, would miss the previous holder's commit and the
/// write-back would fail with a serialization failure, and under SERIALIZABLE groups on
/// different keys could abort each other (predicate locks on shared index pages). With it, no
/// conflict (SQLSTATE 40001 or 40P01) can arise between nodes: every lock a group takes is one
/// advisory lock per key, all in one statement in ascending order, and the rows it writes are
/// those of keys it holds. [`is_conflict`] stays for anyone else's locks.
pub(crate) fn read_committed(client: &mut Client) -> Result<(), Error> {
    client
        .batch_execute("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED")
}

fn migrate(client: &mut Client) -> Result<(), Error> {
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS relis_schema (version integer NOT NULL)")?;
    let current: Option<i32> = tx
        .query_opt("SELECT version FROM relis_schema", &[])?
        .map(|r| r.get(0));
    if current.is_none() {
        tx.execute("INSERT INTO relis_schema (version) VALUES (0)", &[])?;
    }
    let current = current.unwrap_or(0).max(0) as usize;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(current) {
        tx.batch_execute(sql)?;
        tx.execute("UPDATE relis_schema SET version = $1", &[&(i as i32 + 1)])?;
    }
    tx.commit()
}

/// The database locks of a group writing keys of `dbs` and flushing `flushes` (`None`: all), in
/// the order they are taken: (objid, exclusive). The keyspace lock (-1) first, exclusive for a
/// FLUSHALL (which then needs no other); then each database, ascending, exclusive if flushed.
/// None at all for a group that writes no key and flushes nothing.
fn db_locks(dbs: impl Iterator<Item = u32>, flushes: &[Option<u32>]) -> Vec<(i64, bool)> {
    if flushes.contains(&None) {
        return vec![(-1, true)];
    }
    let mut out: Vec<(i64, bool)> = dbs
        .map(|db| (i64::from(db), false))
        .chain(flushes.iter().flatten().map(|db| (i64::from(*db), true)))
        .collect();
    if out.is_empty() {
        return out;
    }
    // Exclusive before shared of one database, so that dedup keeps the exclusive one.
    out.sort_unstable_by_key(|(d, x)| (*d, !*x));
    out.dedup_by_key(|(d, _)| *d);
    out.insert(0, (-1, false));
    out
}

/// The statement that reads the function libraries as `functions` asks (empty for
/// [`Functions::Skip`]): rows of (version, name, hex code); one row with a null name when the
/// set is empty or its version is the one the node has.
fn functions_sql(functions: Functions) -> String {
    match functions {
        Functions::Skip => String::new(),
        Functions::Unless(v) => format!("EXECUTE relis_functions_load({v});"),
        Functions::Lock => "EXECUTE relis_functions_load(-1);".to_string(),
    }
}

/// The function libraries among `msgs` (the rows of three columns), unless the set's version is
/// the one `functions` names.
fn functions_of(functions: Functions, msgs: &[SimpleQueryMessage]) -> Option<FunctionSet> {
    let known = match functions {
        Functions::Skip => return None,
        Functions::Unless(v) => v,
        Functions::Lock => -1,
    };
    let mut set: Option<FunctionSet> = None;
    for m in msgs {
        let SimpleQueryMessage::Row(row) = m else {
            continue;
        };
        if row.len() != 3 {
            continue;
        }
        let Some(version) = row.get(0).and_then(|v| v.parse::<i64>().ok()) else {
            continue;
        };
        let set = set.get_or_insert_with(|| FunctionSet {
            version,
            libraries: Vec::new(),
        });
        if let (Some(name), Some(hex)) = (row.get(1), row.get(2)) {
            set.libraries.push((name.to_string(), unhex(hex)));
        }
    }
    let mut set = set.filter(|s| s.version != known)?;
    set.libraries.sort_unstable();
    Some(set)
}

/// The bytes of PostgreSQL's `encode(..., 'hex')` text.
fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len() / 2)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap_or(0))
        .collect()
}

/// The statement that loads `keys`' rows: (ordinal, hex value, expire_at, version).
fn load_sql(keys: &[Key]) -> String {
    format!(
        "EXECUTE relis_load({}, {})",
        int_array(keys.iter().map(|(db, _)| i64::from(*db))),
        hex_array(keys.iter().map(|(_, k)| k.as_slice())),
    )
}

/// The statement that deletes the `expired` rows still at their version (see
/// [`PgKeys::expire_rows`]): returns the ordinal of each deleted.
fn expire_sql(expired: &[(Key, i64)], now: i64) -> String {
    format!(
        "EXECUTE relis_expire({}, {}, {}, {}, {now})",
        int_array(expired.iter().map(|((db, _), _)| i64::from(*db))),
        hex_array(expired.iter().map(|((_, k), _)| k.as_slice())),
        int_array(expired.iter().map(|(_, v)| *v)),
        int_array(expired.iter().map(|((db, k), _)| lock_hash(*db, k))),
    )
}

/// The keys of `expired` whose deletion [`expire_sql`] returned: the rows in `msgs` before the
/// first statement's end (it is sent first), whatever the statements after it return.
fn expired_of(expired: &[(Key, i64)], msgs: &[SimpleQueryMessage]) -> Vec<Key> {
    if expired.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for m in msgs {
        let row = match m {
            SimpleQueryMessage::Row(row) => row,
            SimpleQueryMessage::CommandComplete(_) => break,
            _ => continue,
        };
        let at = row.get(0).and_then(|v| v.parse::<usize>().ok());
        if let Some((key, _)) = at.and_then(|i| expired.get(i.wrapping_sub(1))) {
            out.push(key.clone());
        }
    }
    out
}

/// An SQL literal of an array of integers, `'{1,2}'` (the prepared statement gives its type).
fn int_array(items: impl Iterator<Item = i64>) -> String {
    let mut out = String::from("'{");
    for (i, n) in items.enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{n}");
    }
    out.push_str("}'");
    out
}

/// An SQL literal of an array of byte strings in hex, `'{"6b6579",""}'`, which the prepared
/// statements `decode`: only hex digits, commas and double quotes reach the SQL text, so no
/// byte of a key or value is ever quoted (and the empty string is `""`).
fn hex_array<'a>(items: impl Iterator<Item = &'a [u8]>) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::from("'{");
    for (i, b) in items.enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('"');
        out.reserve(2 * b.len() + 2);
        for byte in b {
            out.push(HEX[usize::from(byte >> 4)] as char);
            out.push(HEX[usize::from(byte & 15)] as char);
        }
        out.push('"');
    }
    out.push_str("}'");
    out
}

/// The rows of the load statement among `msgs` (those with four columns), by key position.
fn rows_of(n: usize, msgs: &[SimpleQueryMessage]) -> Result<Vec<Option<Stored>>, Error> {
    let mut out = vec![None; n];
    for m in msgs {
        let SimpleQueryMessage::Row(row) = m else {
            continue;
        };
        if row.len() != 4 {
            continue;
        }
        let int = |i: usize| row.get(i).and_then(|v| v.parse::<i64>().ok());
        let (Some(at), Some(hex), Some(version)) = (int(0), row.get(1), int(3)) else {
            continue;
        };
        let value = unhex(hex);
        if let Some(slot) = usize::try_from(at - 1).ok().and_then(|i| out.get_mut(i)) {
            *slot = Some(Stored {
                value,
                expire_at: int(2),
                version,
            });
        }
    }
    Ok(out)
}

/// A group's transaction: [`Group::lock`] the keys, [`Group::load`] them, [`Group::apply`] the
/// changes, [`Group::commit`]. Dropped without a commit, it rolls back (and its locks go).
pub struct Group<'a> {
    tx: Transaction<'a>,
}

impl Group<'_> {
    /// Locks `keys` for the rest of the transaction, in ascending hash order (duplicates once).
    ///
    /// # Errors
    /// The connection fails, or PostgreSQL reports a deadlock ([`is_conflict`]).
    pub fn lock(&mut self, keys: &[Key]) -> Result<(), Error> {
        let mut hashes: Vec<i64> = keys.iter().map(|(db, k)| lock_hash(*db, k)).collect();
        hashes.sort_unstable();
        hashes.dedup();
        if hashes.is_empty() {
            return Ok(());
        }
        // One round trip; WITH ORDINALITY fixes the order the locks are taken in.
        self.tx.execute(
            "SELECT pg_advisory_xact_lock(h)
             FROM unnest($1::bigint[]) WITH ORDINALITY AS t(h, i) ORDER BY i",
            &[&hashes],
        )?;
        Ok(())
    }

    /// The stored rows of `keys`, in their order (`None`: no such key). Expired rows are
    /// returned too: the caller decides (lazy expiry deletes them under the lock).
    ///
    /// # Errors
    /// The connection fails.
    pub fn load(&mut self, keys: &[Key]) -> Result<Vec<Option<Stored>>, Error> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let dbs: Vec<i32> = keys.iter().map(|(db, _)| *db as i32).collect();
        let names: Vec<&[u8]> = keys.iter().map(|(_, k)| k.as_slice()).collect();
        let rows = self.tx.query(
            "SELECT t.i, k.value, k.expire_at, k.version
             FROM unnest($1::integer[], $2::bytea[]) WITH ORDINALITY AS t(db, key, i)
             JOIN relis_keys k ON k.db = t.db AND k.key = t.key",
            &[&dbs, &names],
        )?;
        let mut out = vec![None; keys.len()];
        for row in rows {
            let i: i64 = row.get(0);
            out[i as usize - 1] = Some(Stored {
                value: row.get(1),
                expire_at: row.get(2),
                version: row.get(3),
            });
        }
        Ok(out)
    }

    /// Writes `changes` (each put gets a new version, but a quiet one's row keeps its own), in
    /// three statements at most: the deletes, then the puts, then the quiet puts. Each key at
    /// most once (PostgreSQL refuses an upsert that would change one row twice in a statement).
    ///
    /// # Errors
    /// The connection fails.
    pub fn apply(&mut self, changes: &[Change]) -> Result<(), Error> {
        let (mut del_db, mut del_key) = (Vec::new(), Vec::new());
        /// Puts as the statement's arrays.
        #[derive(Default)]
        struct Puts<'a> {
            db: Vec<i32>,
            key: Vec<&'a [u8]>,
            value: Vec<&'a [u8]>,
            expire: Vec<Option<i64>>,
        }
        // Puts, then quiet puts.
        let mut puts: [Puts; 2] = Default::default();
        for c in changes {
            match c {
                Change::Put {
                    key: (db, key),
                    value,
                    expire_at,
                    quiet,
                } => {
                    let p = &mut puts[usize::from(*quiet)];
                    p.db.push(*db as i32);
                    p.key.push(key.as_slice());
                    p.value.push(value.as_slice());
                    p.expire.push(*expire_at);
                }
                Change::Delete((db, key)) => {
                    del_db.push(*db as i32);
                    del_key.push(key.as_slice());
                }
            }
        }
        if !del_db.is_empty() {
            self.tx.execute(
                "DELETE FROM relis_keys k USING unnest($1::integer[], $2::bytea[]) AS t(db, key)
                 WHERE k.db = t.db AND k.key = t.key",
                &[&del_db, &del_key],
            )?;
        }
        for (p, version) in puts.iter().zip([", version = excluded.version", ""]) {
            if p.db.is_empty() {
                continue;
            }
            self.tx.execute(
                &format!(
                    "INSERT INTO relis_keys (db, key, value, expire_at, version)
                     SELECT db, key, value, expire_at, nextval('relis_versions')
                     FROM unnest($1::integer[], $2::bytea[], $3::bytea[], $4::bigint[])
                          AS t(db, key, value, expire_at)
                     ON CONFLICT (db, key) DO UPDATE
                     SET value = excluded.value, expire_at = excluded.expire_at{version}"
                ),
                &[&p.db, &p.key, &p.value, &p.expire],
            )?;
        }
        Ok(())
    }

    /// Commits: the changes become visible to every node, and the locks are released.
    ///
    /// # Errors
    /// The commit fails (then nothing of the group happened).
    pub fn commit(self) -> Result<(), Error> {
        self.tx.commit()
    }
}

/// Whether `e` is a conflict the caller resolves by running the group again: a serialization
/// failure (SQLSTATE 40001) or a deadlock (40P01).
pub fn is_conflict(e: &Error) -> bool {
    use postgres::error::SqlState;
    e.code().is_some_and(|c| {
        *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED
    })
}

/// The advisory lock key of a key: FNV-1a (64 bits) over the database index (4 bytes, little
/// endian) and the key. Every node must compute the same number for the same key, in every
/// version of Relis: never change it while nodes of the old and new versions may share a
/// database.
pub fn lock_hash(db: u32, key: &[u8]) -> i64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h = OFFSET;
    for b in db.to_le_bytes().iter().chain(key) {
        h ^= u64::from(*b);
        h = h.wrapping_mul(PRIME);
    }
    h as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn db_locks_come_in_one_order() {
        // Nothing written, nothing flushed: no lock.
        assert_eq!(db_locks([].into_iter(), &[]), vec![]);
        // The keyspace lock, then each database once, ascending, shared.
        assert_eq!(
            db_locks([3, 0, 3].into_iter(), &[]),
            vec![(-1, false), (0, false), (3, false)]
        );
        // FLUSHDB: its database exclusive, even where a key of it is written.
        assert_eq!(
            db_locks([3, 0].into_iter(), &[Some(3), Some(5)]),
            vec![(-1, false), (0, false), (3, true), (5, true)]
        );
        // FLUSHALL: the keyspace lock exclusive, alone.
        assert_eq!(
            db_locks([3].into_iter(), &[Some(1), None]),
            vec![(-1, true)]
        );
    }

    #[test]
    fn lock_hash_is_fnv1a_and_stable() {
        // FNV-1a 64 of the empty input is its offset basis; of db 0 and "a", fixed forever.
        assert_eq!(lock_hash(0, b""), {
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            for _ in 0..4 {
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
            h as i64
        });
        assert_eq!(lock_hash(0, b"a"), lock_hash(0, b"a"));
        assert_ne!(lock_hash(0, b"a"), lock_hash(1, b"a"));
        // Computed apart (Python: FNV-1a 64 over b"\0\0\0\0a").
        assert_eq!(lock_hash(0, b"a") as u64, 0xe4bb_eed9_252b_447c);
    }
}
