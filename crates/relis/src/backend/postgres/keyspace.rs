//! The keyspace-wide commands over the shared key table (ARCHITECTURE.md 10.1): what reads the
//! whole of a database (KEYS, SCAN, DBSIZE, RANDOMKEY, INFO keyspace) on a connection of its
//! own ([`PgKeyspace`], outside every group's transaction), and FLUSHDB/FLUSHALL's deletion,
//! inside a group's transaction on its connection ([`PgKeys::flush`]).
//!
//! **SCAN's cursor** is a row's `scan_id` (migration 3): a number from a sequence, given when
//! the row is inserted and kept by every update (an upsert's `DO UPDATE` leaves it), unique
//! (index `(db, scan_id)`). A page is the rows after the cursor in `scan_id` order, and the next
//! cursor the last one's: it comes from the data, not from a node's memory, so any node
//! continues a scan any other began (behind a load balancer, each SCAN may reach another one).
//! A key present for the whole scan keeps its `scan_id` and is returned exactly once; a key
//! created meanwhile gets a larger one (returned, or not if committed late); a key deleted and
//! created again gets a new one (returned again, or not), as Redis's guarantees allow.
//!
//! Expiry: a row whose `expire_at` has passed is neither listed nor counted here; the sweep
//! deletes it.

use super::{Error, PgKeys};
use postgres::{Client, NoTls, Statement};
use std::collections::HashMap;

/// What [`PgKeyspace::export`] hands the shared keyspace to.
pub trait ExportSink {
    /// What stops the export.
    type Error: From<Error>;
    /// A function library (name, code).
    fn function(&mut self, name: &str, code: &[u8]) -> Result<(), Self::Error>;
    /// A database with live keys (index, keys, keys with an expiry), before its rows.
    fn database(&mut self, db: u32, keys: u64, expires: u64) -> Result<(), Self::Error>;
    /// A live key, its stored payload and its expiry (unix ms).
    fn row(
        &mut self,
        key: &[u8],
        payload: &[u8],
        expire_at: Option<i64>,
    ) -> Result<(), Self::Error>;
}

/// A connection for the keyspace-wide reads. Each is one statement (its own snapshot, READ
/// COMMITTED), prepared once per connection.
pub struct PgKeyspace {
    client: Client,
    prepared: HashMap<&'static str, Statement>,
}

/// The live keys of a database from a lower bound, in key order.
const KEYS_FROM: &str = "SELECT key FROM relis_keys \
     WHERE db = $1 AND key >= $2 AND (expire_at IS NULL OR expire_at > $3) ORDER BY key";

/// The live keys of a database in `[lower, upper)`, in key order (the primary key's range).
const KEYS_BETWEEN: &str = "SELECT key FROM relis_keys \
     WHERE db = $1 AND key >= $2 AND key < $4 AND (expire_at IS NULL OR expire_at > $3) \
     ORDER BY key";

/// A SCAN page: live rows after a cursor in `scan_id` order, one more than asked (to know
/// whether the scan goes on).
const SCAN: &str = "SELECT key, scan_id, NULL::bytea FROM relis_keys \
     WHERE db = $1 AND scan_id > $2 AND (expire_at IS NULL OR expire_at > $3) \
     ORDER BY scan_id LIMIT $4";

/// [`SCAN`] with each value's first byte (its type, to the codec): `substring` reads only the
/// start of a value stored out of line, where `get_byte` would read it whole.
const SCAN_KINDS: &str = "SELECT key, scan_id, substring(value FROM 1 FOR 1) FROM relis_keys \
     WHERE db = $1 AND scan_id > $2 AND (expire_at IS NULL OR expire_at > $3) \
     ORDER BY scan_id LIMIT $4";

/// The live keys of a database.
const DBSIZE: &str = "SELECT count(*) FROM relis_keys \
     WHERE db = $1 AND (expire_at IS NULL OR expire_at > $2)";

/// A random live key: the first at or after a random point between the database's smallest
/// and largest `scan_id` (two index lookups), else the first of all (the point fell after the
/// last live key). Two index probes, whatever the database's size; a key after a wide gap of
/// `scan_id`s (keys deleted) comes up more often, as Redis's bucket-based pick favours keys in
/// sparse buckets. `UNION ALL` runs its branches in order and `LIMIT 1` stops at the first row.
const RANDOM_KEY: &str = "WITH b AS (
         SELECT min(scan_id) AS lo, max(scan_id) AS hi FROM relis_keys WHERE db = $1
     ), p AS (
         SELECT lo + floor(random() * (hi - lo + 1))::bigint AS at FROM b
     )
     (SELECT k.key FROM relis_keys k, p
      WHERE k.db = $1 AND k.scan_id >= p.at AND (k.expire_at IS NULL OR k.expire_at > $2)
      ORDER BY k.scan_id LIMIT 1)
     UNION ALL
     (SELECT key FROM relis_keys
      WHERE db = $1 AND (expire_at IS NULL OR expire_at > $2)
      ORDER BY scan_id LIMIT 1)
     LIMIT 1";

/// INFO keyspace: per non-empty database, live keys and those with an expiry.
const KEYSPACE_INFO: &str = "SELECT db, count(*), count(expire_at) FROM relis_keys \
     WHERE expire_at IS NULL OR expire_at > $1 GROUP BY db ORDER BY db";

/// A SCAN page's rows: key, and the first byte of its value when asked for.
pub type ScanRows = Vec<(Vec<u8>, Option<u8>)>;

impl PgKeyspace {
    /// Connects (as [`PgKeys::connect`], which must have run once: the schema is not
    /// migrated here).
    ///
    /// # Errors
    /// The connection fails.
    pub fn connect(url: &str) -> Result<PgKeyspace, Error> {
        let mut client = Client::connect(url, NoTls)?;
        super::read_committed(&mut client)?;
        Ok(PgKeyspace {
            client,
            prepared: HashMap::new(),
        })
    }

    /// Everything the shared keyspace holds, as of one snapshot (a read-only REPEATABLE READ
    /// transaction), handed to `sink`: the function libraries, then each database with live
    /// keys before its rows, each live key in key order, streamed. The first error stops it.
    ///
    /// # Errors
    /// PostgreSQL's, or the sink's.
    pub fn export<S: ExportSink>(&mut self, now_ms: i64, sink: &mut S) -> Result<(), S::Error> {
        use postgres::fallible_iterator::FallibleIterator;
        let mut tx = self
            .client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()?;
        for lib in tx.query("SELECT name, code FROM relis_functions ORDER BY name", &[])? {
            sink.function(lib.get(0), lib.get(1))?;
        }
        let dbs = tx.query(
            "SELECT db, count(*), count(expire_at) FROM relis_keys
             WHERE expire_at IS NULL OR expire_at > $1 GROUP BY db ORDER BY db",
            &[&now_ms],
        )?;
        for d in dbs {
            let db: i32 = d.get(0);
            let (keys, expires): (i64, i64) = (d.get(1), d.get(2));
            sink.database(db as u32, keys as u64, expires as u64)?;
            let mut rows = tx.query_raw(
                "SELECT key, value, expire_at FROM relis_keys
                 WHERE db = $1 AND (expire_at IS NULL OR expire_at > $2) ORDER BY key",
                [&db as &(dyn postgres::types::ToSql + Sync), &now_ms],
            )?;
            while let Some(r) = rows.next()? {
                sink.row(r.get(0), r.get(1), r.get(2))?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Whether the connection is gone (the caller connects again).
    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    fn statement(&mut self, sql: &'static str) -> Result<Statement, Error> {
        if let Some(s) = self.prepared.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql)?;
        self.prepared.insert(sql, s.clone());
        Ok(s)
    }

    /// KEYS: the live keys of `db` in `[lower, upper)` (no `upper`: to the end), in key order,
    /// at `now` (Unix ms).
    ///
    /// # Errors
    /// The connection fails.
    pub fn keys(
        &mut self,
        db: u32,
        lower: &[u8],
        upper: Option<&[u8]>,
        now: i64,
    ) -> Result<Vec<Vec<u8>>, Error> {
        let db = db as i32;
        let rows = match upper {
            Some(upper) => {
                let st = self.statement(KEYS_BETWEEN)?;
                self.client.query(&st, &[&db, &lower, &now, &upper])?
            }
            None => {
                let st = self.statement(KEYS_FROM)?;
                self.client.query(&st, &[&db, &lower, &now])?
            }
        };
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    /// A SCAN page: up to `count` live keys of `db` after `cursor` (see the module's
    /// documentation), each with its value's first byte when `kinds`, and the next page's
    /// cursor (`0`: the scan is complete).
    ///
    /// # Errors
    /// The connection fails.
    pub fn scan(
        &mut self,
        db: u32,
        cursor: u64,
        count: usize,
        kinds: bool,
        now: i64,
    ) -> Result<(ScanRows, u64), Error> {
        // A cursor past every `scan_id` (a client's invention) ends the scan.
        let after = i64::try_from(cursor).unwrap_or(i64::MAX);
        let limit = i64::try_from(count).unwrap_or(i64::MAX - 1).max(1) + 1;
        let st = self.statement(if kinds { SCAN_KINDS } else { SCAN })?;
        let rows = self
            .client
            .query(&st, &[&(db as i32), &after, &now, &limit])?;
        let more = rows.len() as i64 == limit;
        let mut page = Vec::with_capacity(rows.len());
        let mut next = 0;
        for r in rows.iter().take(limit as usize - 1) {
            let first: Option<Vec<u8>> = r.get(2);
            page.push((r.get(0), first.and_then(|b| b.first().copied())));
            next = r.get::<_, i64>(1);
        }
        Ok((page, if more { next as u64 } else { 0 }))
    }

    /// DBSIZE: the live keys of `db` at `now`.
    ///
    /// # Errors
    /// The connection fails.
    pub fn dbsize(&mut self, db: u32, now: i64) -> Result<i64, Error> {
        let st = self.statement(DBSIZE)?;
        Ok(self.client.query_one(&st, &[&(db as i32), &now])?.get(0))
    }

    /// RANDOMKEY: a live key of `db` at `now`, if any (see [`RANDOM_KEY`]).
    ///
    /// # Errors
    /// The connection fails.
    pub fn random_key(&mut self, db: u32, now: i64) -> Result<Option<Vec<u8>>, Error> {
        let st = self.statement(RANDOM_KEY)?;
        Ok(self
            .client
            .query_opt(&st, &[&(db as i32), &now])?
            .map(|r| r.get(0)))
    }

    /// INFO keyspace: (database, live keys, live keys with an expiry) per non-empty database.
    ///
    /// # Errors
    /// The connection fails.
    pub fn keyspace_info(&mut self, now: i64) -> Result<Vec<(u32, i64, i64)>, Error> {
        let st = self.statement(KEYSPACE_INFO)?;
        Ok(self
            .client
            .query(&st, &[&now])?
            .iter()
            .map(|r| (r.get::<_, i32>(0) as u32, r.get(1), r.get(2)))
            .collect())
    }
}

impl PgKeys {
    /// FLUSHDB / FLUSHALL inside the transaction [`PgKeys::begin_flushing`] began: deletes
    /// every row of the databases in `dbs` (`None`: of all), under their database locks taken
    /// exclusively (`mod.rs`: already held when the group declared its flushes, so taken again
    /// at once; a script's undeclared flush takes them here, late, and a deadlock that may
    /// cause fails its group). A deleted row is a change to every node: a WATCH of one of its
    /// keys fails at EXEC (the key's version is gone).
    ///
    /// # Errors
    /// The connection fails, or PostgreSQL reports a deadlock (the caller rolls back).
    pub fn flush(&mut self, dbs: &[Option<u32>]) -> Result<(), Error> {
        if dbs.is_empty() {
            return Ok(());
        }
        if dbs.contains(&None) {
            self.client
                .execute("SELECT pg_advisory_xact_lock($1, -1)", &[&super::DB_LOCKS])?;
            self.client.batch_execute("DELETE FROM relis_keys")?;
            return Ok(());
        }
        let mut list: Vec<i32> = dbs.iter().flatten().map(|db| *db as i32).collect();
        list.sort_unstable();
        list.dedup();
        self.client.execute(
            "SELECT pg_advisory_xact_lock_shared($1, -1),
                 (SELECT count(*) FROM (SELECT pg_advisory_xact_lock($1, d)
                     FROM unnest($2::integer[]) WITH ORDINALITY AS t(d, i) ORDER BY i) l)",
            &[&super::DB_LOCKS, &list],
        )?;
        self.client
            .execute("DELETE FROM relis_keys WHERE db = ANY($1)", &[&list])?;
        Ok(())
    }

    /// SWAPDB inside the transaction [`PgKeys::begin_flushing`] began: every row of database
    /// `a` moves to `b` and every row of `b` to `a`, each with a new version (a WATCH of a key
    /// that existed in either database fails at EXEC on every node, as Redis's
    /// `touchAllWatchedKeysInDb` makes it), under both databases' locks taken exclusively (as
    /// [`PgKeys::flush`]: already held when the group declared the swap). In three statements
    /// through a temporary database index, `-1 - min(a, b)`, as PostgreSQL checks the primary
    /// key row by row; no other swap uses that index meanwhile (it would hold the same lock).
    /// `scan_id`s are unique across databases, so the `(db, scan_id)` index holds throughout.
    ///
    /// # Errors
    /// The connection fails, or PostgreSQL reports a deadlock (the caller rolls back).
    pub fn swap(&mut self, a: u32, b: u32) -> Result<(), Error> {
        if a == b {
            return Ok(());
        }
        let (lo, hi) = (a.min(b) as i32, a.max(b) as i32);
        self.client.execute(
            "SELECT pg_advisory_xact_lock_shared($1, -1),
                 (SELECT count(*) FROM (SELECT pg_advisory_xact_lock($1, d)
                     FROM unnest($2::integer[]) WITH ORDINALITY AS t(d, i) ORDER BY i) l)",
            &[&super::DB_LOCKS, &vec![lo, hi]],
        )?;
        let tmp = -1 - lo;
        // Integers only in the text.
        self.client.batch_execute(&format!(
            "UPDATE relis_keys SET db = {tmp} WHERE db = {lo};
             UPDATE relis_keys SET db = {lo}, version = nextval('relis_versions') WHERE db = {hi};
             UPDATE relis_keys SET db = {hi}, version = nextval('relis_versions')
                 WHERE db = {tmp};"
        ))?;
        Ok(())
    }
}
