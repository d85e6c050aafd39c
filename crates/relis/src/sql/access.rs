//! Which Redis keys one SQL call may read and write, as predicates over key names: the caller
//! decides (a server derives them from the connection's ACL user), the engine applies them.
//!
//! - Reads: the `redis_*` views (schema version 6) keep only rows whose key passes
//!   `relis_visible(key)`, which asks the read predicate of the call running on this thread
//!   (installed by [`Scope`] around it). Without one, the function answers true at once.
//! - Writes: the morph commands ([`crate::Writer::rows_to`]) ask the write predicate for every
//!   key before they touch it, and fail with [`crate::SqlError::KeyDenied`].
//!
//! The embedded API and the engine's own statements run with [`KeyAccess::all`].

use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

/// A predicate over key names: whether the caller may use the key.
pub type KeyFilter = Arc<dyn Fn(&[u8]) -> bool + Send + Sync>;

/// The keys a SQL call may read and write; `None` is every key (the default).
#[derive(Clone, Default)]
pub struct KeyAccess {
    read: Option<KeyFilter>,
    write: Option<KeyFilter>,
}

impl KeyAccess {
    /// Every key, for reading and writing.
    pub fn all() -> KeyAccess {
        KeyAccess::default()
    }

    /// Reads limited to the keys `read` accepts (`None`: all), writes to those `write` accepts.
    pub fn new(read: Option<KeyFilter>, write: Option<KeyFilter>) -> KeyAccess {
        KeyAccess { read, write }
    }

    /// Whether every key may be read and written.
    pub fn is_all(&self) -> bool {
        self.read.is_none() && self.write.is_none()
    }

    /// Whether every key may be read (Redis's "unrestricted key access", which SORT's BY and
    /// GET patterns need).
    pub fn reads_all(&self) -> bool {
        self.read.is_none()
    }

    /// Whether `key` may be read.
    pub fn may_read(&self, key: &[u8]) -> bool {
        self.read.as_ref().is_none_or(|f| f(key))
    }

    /// Whether `key` may be written.
    pub fn may_write(&self, key: &[u8]) -> bool {
        self.write.as_ref().is_none_or(|f| f(key))
    }

    /// Makes the read predicate the one `relis_visible()` asks on this thread until the guard
    /// drops.
    pub(crate) fn scope(&self) -> Scope {
        Scope(VISIBLE.with(|v| v.replace(self.read.clone())))
    }
}

impl fmt::Debug for KeyAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |p: &Option<KeyFilter>| if p.is_some() { "some" } else { "all" };
        f.debug_struct("KeyAccess")
            .field("read", &show(&self.read))
            .field("write", &show(&self.write))
            .finish()
    }
}

thread_local! {
    /// The read predicate of the SQL call running on this thread (`None`: every key).
    static VISIBLE: RefCell<Option<KeyFilter>> = const { RefCell::new(None) };
}

/// Restores the previous predicate when dropped (calls may nest: a morph's query inside its
/// write).
pub(crate) struct Scope(Option<KeyFilter>);

impl Drop for Scope {
    fn drop(&mut self) {
        let prev = self.0.take();
        VISIBLE.with(|v| *v.borrow_mut() = prev);
    }
}

/// Registers `relis_visible(key)` and `relis_sees_all()` on a connection that may run user SQL
/// (with `relis_now()`, see `sandbox::install`). Both read per-thread state that changes
/// between statements, so neither is deterministic; both are innocuous (the views call them).
pub(crate) fn register(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags as F;
    conn.create_scalar_function(
        "relis_visible",
        1,
        F::SQLITE_UTF8 | F::SQLITE_INNOCUOUS,
        |c| Ok(visible(c.get_raw(0))),
    )?;
    conn.create_scalar_function(
        "relis_sees_all",
        0,
        F::SQLITE_UTF8 | F::SQLITE_INNOCUOUS,
        |_| Ok(sees_all()),
    )
}

/// `relis_visible(key)`: whether the running call may read `key`. A key is stored as a BLOB;
/// text is taken as its bytes, numbers as their SQL text; NULL is no key.
pub(crate) fn visible(key: rusqlite::types::ValueRef<'_>) -> bool {
    use rusqlite::types::ValueRef as V;
    VISIBLE.with(|v| {
        let v = v.borrow();
        let Some(f) = v.as_ref() else {
            return true;
        };
        match key {
            V::Blob(b) | V::Text(b) => f(b),
            V::Integer(i) => f(i.to_string().as_bytes()),
            V::Real(r) => f(r.to_string().as_bytes()),
            V::Null => false,
        }
    })
}

/// Whether the call running on this thread sees every key (what the views' fast path asks once
/// per statement).
pub(crate) fn sees_all() -> bool {
    VISIBLE.with(|v| v.borrow().is_none())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::{KeyTemplate, Morph, MorphOptions, SqlError, SqlLimits, SqlOutput, SqlValue};
    use crate::Db;
    use rusqlite::types::ValueRef;

    #[test]
    fn scopes_nest_and_restore() {
        assert!(sees_all());
        let only_a: KeyFilter = Arc::new(|k: &[u8]| k.starts_with(b"a"));
        let outer = KeyAccess::new(Some(only_a), None);
        {
            let _s = outer.scope();
            assert!(!sees_all());
            assert!(visible(ValueRef::Blob(b"ab")));
            assert!(!visible(ValueRef::Text(b"b")));
            assert!(!visible(ValueRef::Null));
            {
                let _inner = KeyAccess::all().scope();
                assert!(visible(ValueRef::Text(b"b")));
            }
            assert!(!visible(ValueRef::Text(b"b")));
        }
        assert!(sees_all());
        assert!(visible(ValueRef::Null));
        assert!(outer.may_write(b"anything") && !outer.may_read(b"b"));
    }

    fn prefix(p: &'static str) -> Option<KeyFilter> {
        Some(Arc::new(move |k: &[u8]| k.starts_with(p.as_bytes())))
    }

    /// Reads and writes under `app:` only.
    fn app() -> KeyAccess {
        KeyAccess::new(prefix("app:"), prefix("app:"))
    }

    fn filled() -> Db {
        let db = Db::open_in_memory().unwrap();
        db.set("app:s", "mine").unwrap();
        db.set("secret", "hunter2").unwrap();
        db.hset("app:h", &[("f", "v")]).unwrap();
        db.hset("user:admin", &[("password", "hunter2")]).unwrap();
        db.rpush("app:l", &["a"]).unwrap();
        db.rpush("other:l", &["b"]).unwrap();
        db.sadd("app:set", &["m"]).unwrap();
        db.sadd("other:set", &["n"]).unwrap();
        db.zadd("app:z", &[(1.0, &b"m"[..])]).unwrap();
        db.zadd("other:z", &[(2.0, &b"n"[..])]).unwrap();
        for k in ["app:x", "other:x"] {
            let f = [
                bytes::Bytes::from_static(b"f"),
                bytes::Bytes::from_static(b"v"),
            ];
            db.write(move |w| w.xadd(0, k.as_bytes(), crate::XAddId::Auto, &f, false, None))
                .unwrap();
        }
        db
    }

    fn keys(out: SqlOutput) -> Vec<String> {
        out.rows
            .into_iter()
            .map(|r| match &r[0] {
                SqlValue::Text(b) => String::from_utf8_lossy(b).into_owned(),
                other => panic!("not a key: {other:?}"),
            })
            .collect()
    }

    /// `sql` on a reader and on the writer, with `access`: the keys in the first column.
    fn both(db: &Db, access: &KeyAccess, sql: &'static str) -> Vec<String> {
        let a = access.clone();
        let read = db
            .read(move |r| {
                let mut c = r.sql();
                c.set_access(a);
                Ok(c.query(sql, (), &SqlLimits::default()))
            })
            .unwrap()
            .unwrap();
        let a = access.clone();
        let written = db
            .write(move |w| {
                let mut c = w.sql();
                c.set_access(a);
                Ok(c.exec(sql, (), &SqlLimits::default()))
            })
            .unwrap()
            .unwrap();
        assert_eq!(read, written, "{sql}");
        keys(read)
    }

    #[test]
    fn every_view_shows_only_the_keys_the_call_may_read() {
        let db = filled();
        for (view, mine, all) in [
            ("redis_keys", 6, 12),
            ("redis_strings", 1, 2),
            ("redis_hashes", 1, 2),
            ("redis_lists", 1, 2),
            ("redis_sets", 1, 2),
            ("redis_zsets", 1, 2),
            ("redis_streams", 1, 2),
            ("redis_geo", 1, 2),
        ] {
            let sql: &'static str =
                Box::leak(format!("SELECT DISTINCT key FROM {view} ORDER BY key").into());
            let seen = both(&db, &app(), sql);
            assert_eq!(seen.len(), mine, "{view}: {seen:?}");
            assert!(
                seen.iter().all(|k| k.starts_with("app:")),
                "{view}: {seen:?}"
            );
            assert_eq!(both(&db, &KeyAccess::all(), sql).len(), all, "{view}");
        }
        // The embedded API sees everything; a call's predicate ends with the call.
        assert_eq!(
            db.sql_query("SELECT key FROM redis_keys", ())
                .unwrap()
                .rows
                .len(),
            12
        );
        // Prepared statements and SQL.DESC's count run with the caller's predicate too.
        db.sql_prepare("strings", "SELECT key FROM redis_strings ORDER BY key")
            .unwrap();
        let out = db
            .read(|r| {
                let mut c = r.sql();
                c.set_access(app());
                Ok((
                    c.run_query("strings", (), &SqlLimits::default()),
                    c.describe("redis_hashes", &SqlLimits::default()),
                ))
            })
            .unwrap();
        assert_eq!(keys(out.0.unwrap()), ["app:s"]);
        assert_eq!(out.1.unwrap().rows, 1);
        // Write permission alone does not make a key visible.
        let write_only = KeyAccess::new(prefix("nothing"), None);
        assert!(both(&db, &write_only, "SELECT key FROM redis_keys").is_empty());
    }

    #[test]
    fn a_morph_refuses_a_key_it_may_not_write_and_writes_nothing() {
        let db = filled();
        for kind in [
            Morph::Hash,
            Morph::String,
            Morph::List,
            Morph::Set,
            Morph::ZSet,
        ] {
            for replace in [false, true] {
                let opts = MorphOptions {
                    replace,
                    access: app(),
                    ..MorphOptions::default()
                };
                let sql = if kind == Morph::ZSet {
                    "SELECT 'app:new' AS k, 'x' AS v, 1 AS s UNION ALL SELECT 'secret', 'y', 2"
                } else {
                    "SELECT 'app:new' AS k, 'x' AS v UNION ALL SELECT 'secret', 'y'"
                };
                let r = db.write(move |w| {
                    Ok(w.atomic(|w| {
                        w.sql_morph(
                            kind,
                            0,
                            &KeyTemplate::parse(b"{k}"),
                            sql,
                            (),
                            &opts,
                            &SqlLimits::default(),
                        )
                    }))
                });
                let denied = match r {
                    Ok(Err(SqlError::KeyDenied(k))) => k,
                    other => panic!("{kind:?}: {other:?}"),
                };
                assert_eq!(&denied[..], b"secret");
                assert_eq!(db.exists(&["app:new"]).unwrap(), 0, "{kind:?}");
                assert_eq!(db.get("secret").unwrap().as_deref(), Some(&b"hunter2"[..]));
            }
        }
        // The query of a morph sees only what it may read.
        let opts = MorphOptions {
            access: app(),
            ..MorphOptions::default()
        };
        let n = db
            .write(move |w| {
                Ok(w.sql_morph(
                    Morph::Set,
                    0,
                    &KeyTemplate::parse(b"app:copy"),
                    "SELECT key FROM redis_keys",
                    (),
                    &opts,
                    &SqlLimits::default(),
                ))
            })
            .unwrap()
            .unwrap();
        assert_eq!(n, 6);
    }

    #[test]
    fn hashes_matching_leaves_out_unreadable_hashes() {
        let db = filled();
        let got = db.read(|r| r.hashes_matching(0, b"*", &app())).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(&got[0].0[..], b"app:h");
        assert_eq!(
            db.read(|r| r.hashes_matching(0, b"*", &KeyAccess::all()))
                .unwrap()
                .len(),
            2
        );
    }

    #[test]
    fn the_views_read_the_main_schema_and_the_file_stays_attachable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let db = Db::open(&path).unwrap();
        db.set("app:s", "mine").unwrap();
        // A temporary table named like an engine table does not stand in for it in the views
        // (they are in the main schema, where their unqualified names bind).
        let seen = db
            .write(|w| {
                w.conn.execute_batch(
                    "CREATE TEMP TABLE relis_keys (db, key, id, type, expire_at, version, count,
                         mtime, value, head);
                     INSERT INTO temp.relis_keys VALUES (0, 'fake', 1, 0, NULL, 1, 0, 0, 'x', 0);",
                )?;
                let out = w
                    .sql()
                    .query("SELECT key FROM redis_strings", (), &SqlLimits::default());
                w.conn.execute_batch("DROP TABLE temp.relis_keys")?;
                Ok(out)
            })
            .unwrap()
            .unwrap();
        assert_eq!(keys(seen), ["app:s"]);
        drop(db);
        // Another program can ATTACH the file and read its tables (VACUUM INTO onto an
        // existing file attaches it too): no view names a schema.
        let other = rusqlite::Connection::open_in_memory().unwrap();
        other
            .execute("ATTACH ?1 AS r", [path.to_str().unwrap()])
            .unwrap();
        let n: i64 = other
            .query_row("SELECT count(*) FROM r.relis_keys", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1);
    }

    /// The query plan of `sql`, without the lines of the once-per-statement subquery.
    fn plan(db: &Db, sql: String) -> Vec<String> {
        db.write(move |w| {
            let mut st = w.conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
            let rows = st.query_map([], |r| r.get::<_, String>(3))?;
            Ok(rows
                .collect::<rusqlite::Result<Vec<String>>>()?
                .into_iter()
                .filter(|d| !d.starts_with("SCALAR SUBQUERY") && d != "SCAN CONSTANT ROW")
                .collect())
        })
        .unwrap()
    }

    #[test]
    fn lookups_through_the_views_plan_as_before_the_filter() {
        let db = filled();
        // Schema version 3's views, side by side with the current ones.
        let old = include_str!("../backend/sqlite/schema/0003_views.sql");
        let old = &old[old.find("CREATE VIEW").unwrap()..];
        let old = old.replace("CREATE VIEW redis_", "CREATE VIEW redis_v3_");
        db.write(move |w| Ok(w.conn.execute_batch(&old)?)).unwrap();
        for (view, filter) in [
            ("keys", "key = 'app:s'"),
            ("keys", "db = 0 AND key = 'app:s'"),
            ("strings", "key = 'app:s'"),
            ("strings", "db = 0 AND key = 'app:s'"),
            ("hashes", "key = 'app:h' AND field = 'f'"),
            ("lists", "key = 'app:l' AND idx = 0"),
            ("sets", "key = 'app:set' AND member = 'm'"),
            ("zsets", "db = 0 AND key = 'app:z'"),
        ] {
            let mut now = plan(&db, format!("SELECT * FROM redis_{view} WHERE {filter}"));
            // Schema 8's strings view reads a chunked value's chunks in a subquery, through
            // their primary key, for chunked rows only: the key lookup is what it was.
            if view == "strings" {
                assert_eq!(
                    now[1..],
                    [
                        "CORRELATED SCALAR SUBQUERY 3",
                        "USE TEMP B-TREE FOR group_concat(ORDER BY)",
                        "SEARCH relis_chunks USING INDEX sqlite_autoindex_relis_chunks_1 (kid=?)"
                    ]
                );
                now.truncate(1);
            }
            let before = plan(&db, format!("SELECT * FROM redis_v3_{view} WHERE {filter}"));
            assert_eq!(now, before, "{view} WHERE {filter}");
        }
        // The element tables are searched by their primary key, and a key's row by the
        // primary key's db column (the key is compared as TEXT, which no index holds).
        assert_eq!(
            plan(
                &db,
                "SELECT value FROM redis_hashes WHERE db = 0 AND key = 'app:h'".into()
            ),
            [
                "SEARCH k USING PRIMARY KEY (db=?)",
                "SEARCH h USING PRIMARY KEY (kid=?)"
            ]
        );
    }
}
