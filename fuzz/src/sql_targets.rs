//! Fuzz body for the SQL sandbox (only `relis`, so the engine crate's tests can include this
//! file).
//!
//! An input is a short program of SQL statements, each run as user SQL on a fresh in-memory
//! engine (`SQL.EXEC` on the writer, `SQL.QUERY`, a prepared statement, or a named database),
//! with engine writes (SET, SADD, HSET) in between. A statement comes either from a small
//! grammar aimed at the sandbox's edges (CREATE/ALTER/DROP of tables, views, triggers, indexes
//! and virtual tables in `main` and `temp`, names from a list that holds the engine's own,
//! ATTACH, PRAGMA, reads and writes of internal tables and views) driven by the input's bytes,
//! or, after a `#` byte, from the input's own text.
//!
//! After every statement: no temporary object exists, the reserved-named objects (`relis_*`,
//! `redis_*`, `sqlite_*`) are exactly the engine's own, the Redis data set before the program
//! is unchanged, and a SET/GET round trip works and is seen by the `redis_strings` view. At the
//! end the database is copied to a file, which must open as a Relis database holding that data.

use relis::{Db, Params, PrepareMode, SqlDb, SqlDbOptions, SqlError, SqlLimits, SqlOutput};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Names the grammar draws from: the engine's tables and views, look-alikes in other cases,
/// SQLite's, and plain user names.
const NAMES: &[&str] = &[
    "relis_keys",
    "relis_statements",
    "relis_meta",
    "relis_set",
    "Relis_Keys",
    "relis_x",
    "redis_strings",
    "redis_keys",
    "REDIS_x",
    "sqlite_x",
    "sqlite_master",
    "sqlite_temp_master",
    "sqlite_sequence",
    "t",
    "u",
    "v",
    "k",
    "relis",
    "redis",
];

const SCHEMAS: &[&str] = &["", "main.", "temp.", "TEMP.", "x."];

/// Column lists: generic ones, and ones that pass for the engine's tables.
const COLUMNS: &[&str] = &[
    "(a, b)",
    "(a INTEGER PRIMARY KEY, b TEXT)",
    "(db INTEGER NOT NULL, key BLOB NOT NULL, id INTEGER NOT NULL, type INTEGER NOT NULL, \
     expire_at INTEGER, version INTEGER NOT NULL, count INTEGER NOT NULL DEFAULT 0, \
     mtime INTEGER NOT NULL, value BLOB, head INTEGER NOT NULL DEFAULT 0, \
     PRIMARY KEY (db, key)) WITHOUT ROWID",
    "(name TEXT PRIMARY KEY, sql TEXT NOT NULL, params INTEGER NOT NULL, readonly INTEGER NOT NULL)",
    "(kid INTEGER NOT NULL, member BLOB NOT NULL, PRIMARY KEY (kid, member)) WITHOUT ROWID",
    "(a REFERENCES relis_keys (id))",
];

const PRAGMAS: &[&str] = &[
    "table_info(relis_keys)",
    "writable_schema = 1",
    "temp_store = 2",
    "user_version",
    "schema_version = 1",
    "journal_mode = DELETE",
    "foreign_keys = OFF",
    "case_sensitive_like = 1",
    "trusted_schema = 1",
    "integrity_check",
    "temp.table_list",
    "legacy_alter_table = 1",
];

/// Expressions, including the built-ins the sandbox bounds.
const EXPRS: &[&str] = &[
    "1",
    "'a' GLOB 'a*'",
    "'abc' LIKE 'A%'",
    "like('a_c', 'abc', '_')",
    "instr('hello', 'l')",
    "replace('aaa', 'a', 'bb')",
    "trim('xxaxx', 'x')",
    "relis_now()",
    "(SELECT count(*) FROM redis_keys)",
    "(SELECT value FROM redis_strings WHERE key = 'victim')",
    "randomblob(16)",
    "json_patch('{\"a\":1}', '{\"b\":2}')",
    "load_extension('x')",
];

/// Reads choices from the input's bytes (zeros once they run out).
struct Choices<'a> {
    data: &'a [u8],
}

impl Choices<'_> {
    fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    fn pick<'s>(&mut self, from: &[&'s str]) -> &'s str {
        from[usize::from(self.byte()) % from.len()]
    }
}

/// One statement of the grammar.
fn statement(c: &mut Choices<'_>) -> String {
    let temp = match c.byte() % 4 {
        0 => "TEMP ",
        1 => "TEMPORARY ",
        _ => "",
    };
    let (s1, n1) = (c.pick(SCHEMAS), c.pick(NAMES));
    let (s2, n2) = (c.pick(SCHEMAS), c.pick(NAMES));
    let event = c.pick(&["INSERT", "UPDATE", "DELETE"]);
    let when = c.pick(&["BEFORE", "AFTER"]);
    let expr = c.pick(EXPRS);
    match c.byte() % 22 {
        0 => format!("CREATE {temp}TABLE {s1}{n1} {}", c.pick(COLUMNS)),
        1 => format!("CREATE {temp}TABLE {s1}{n1} AS SELECT {expr} AS a"),
        2 => format!("CREATE {temp}VIEW {s1}{n1} AS SELECT * FROM {s2}{n2}"),
        3 => format!(
            "CREATE {temp}TRIGGER {s1}{n1} {when} {event} ON {s2}{n2} BEGIN {}; END",
            dml(c)
        ),
        4 => format!("CREATE INDEX {s1}{n1} ON {n2} (a)"),
        5 => format!(
            "CREATE VIRTUAL TABLE {s1}{n1} USING {}",
            c.pick(&["fts5(a)", "rtree(id, x0, x1)", "dbstat"])
        ),
        6 | 7 => format!("ALTER TABLE {s1}{n1} RENAME TO {}", c.pick(NAMES)),
        8 => format!("ALTER TABLE {s1}{n1} RENAME COLUMN a TO {}", c.pick(NAMES)),
        9 => format!("ALTER TABLE {s1}{n1} ADD COLUMN c DEFAULT ({expr})"),
        10 => format!(
            "DROP {} IF EXISTS {s1}{n1}",
            c.pick(&["TABLE", "VIEW", "TRIGGER", "INDEX"])
        ),
        11 => format!(
            "ATTACH '{}' AS {n1}",
            c.pick(&[":memory:", "x.db", "file:y?mode=memory"])
        ),
        12 => format!("DETACH {n1}"),
        13 => format!("PRAGMA {s1}{}", c.pick(PRAGMAS)),
        14 | 15 => dml(c),
        16 => format!("SELECT {expr}, * FROM {s1}{n1}"),
        17 => c
            .pick(&[
                "BEGIN",
                "COMMIT",
                "SAVEPOINT a",
                "RELEASE a",
                "ROLLBACK",
                "VACUUM",
            ])
            .to_string(),
        18 => format!("{}; {}", statement(c), statement(c)),
        19 => format!("SELECT {expr}"),
        20 => format!("REINDEX {s1}{n1}"),
        _ => format!("ANALYZE {s1}{n1}"),
    }
}

/// A statement that reads or writes a table of the list.
fn dml(c: &mut Choices<'_>) -> String {
    let (s, n) = (c.pick(SCHEMAS), c.pick(NAMES));
    let expr = c.pick(EXPRS);
    match c.byte() % 5 {
        0 => format!("INSERT INTO {s}{n} VALUES ({expr}, {expr})"),
        1 => format!("UPDATE {s}{n} SET a = {expr}"),
        2 => format!("DELETE FROM {s}{n}"),
        3 => format!("INSERT INTO {s}{n} SELECT * FROM {}", c.pick(NAMES)),
        _ => format!("SELECT {expr} FROM {s}{n}"),
    }
}

/// The statements of an input: after a `#`, its own text split at NUL bytes; otherwise from
/// the grammar, one per few bytes.
pub fn program(data: &[u8]) -> Vec<String> {
    if let Some(text) = data.strip_prefix(b"#") {
        return text
            .split(|&b| b == 0)
            .take(16)
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect();
    }
    let mut c = Choices { data };
    let mut out = Vec::new();
    while !c.data.is_empty() && out.len() < 16 {
        out.push(statement(&mut c));
    }
    out
}

/// Reserved-named and temporary objects of the writer's connection, as user SQL sees them
/// (SQLite's own objects of user tables, such as their automatic indexes, are not counted).
fn reserved_objects(run: &dyn Fn(&str) -> Result<SqlOutput, SqlError>) -> String {
    let out = run("SELECT 'main', type, name, tbl_name FROM main.sqlite_schema
         WHERE lower(substr(name, 1, 6)) IN ('relis_', 'redis_')
            OR lower(substr(tbl_name, 1, 6)) IN ('relis_', 'redis_')
            OR (lower(substr(name, 1, 7)) = 'sqlite_'
                AND lower(substr(name, 1, 17)) <> 'sqlite_autoindex_'
                AND lower(name) NOT IN ('sqlite_sequence', 'sqlite_stat1', 'sqlite_stat4'))
         UNION ALL SELECT 'temp', type, name, tbl_name FROM temp.sqlite_schema
         ORDER BY 1, 2, 3")
    .expect("the schema is readable");
    format!("{:?}", out.rows)
}

/// Files the end-of-program copies go to.
static COPIES: AtomicU64 = AtomicU64::new(0);

/// Runs the program of `data` and checks the sandbox's invariants after each statement.
pub fn sql_sandbox(data: &[u8]) {
    let program = program(data);
    let db = Db::open_in_memory().expect("open");
    // Data that user SQL may read but never change.
    db.set("victim", "safe").expect("set");
    db.sadd("victim:set", &["a", "b"]).expect("sadd");
    db.hset("victim:hash", &[("f", "v")]).expect("hset");
    let limits = SqlLimits {
        time_limit: Some(Duration::from_millis(200)),
        ..SqlLimits::default()
    };
    let on_writer = |sql: &str| -> Result<SqlOutput, SqlError> {
        let sql = sql.to_string();
        db.write(move |w| Ok(w.sql_exec(&sql, Params::None, &limits)))
            .expect("the engine runs the job")
    };
    let baseline = reserved_objects(&on_writer);
    let named = SqlDb::open(None, SqlDbOptions::default()).expect("named");
    let named_exec = |sql: &str| named.exec(sql, ());
    let named_baseline = reserved_objects(&named_exec);
    for (i, text) in program.iter().enumerate() {
        let sql = text.clone();
        let _ = match i % 5 {
            0 | 1 => on_writer(&sql),
            2 => db
                .read(move |r| Ok(r.sql_query(&sql, Params::None, &limits)))
                .expect("the engine runs the job"),
            3 => db
                .write(move |w| {
                    let mut c = w.sql();
                    Ok(c.prepare("p", &sql, PrepareMode::Upsert)
                        .and_then(|_| c.run("p", Params::None, &limits)))
                })
                .expect("the engine runs the job"),
            _ => named.exec(&sql, ()),
        };
        let sql = text;
        // The engine's writes go to its own tables, whatever user SQL did.
        let probe = format!("{i}");
        db.set("probe", &probe).expect("set after user SQL");
        db.sadd("probe:set", &[probe.as_str()]).expect("sadd");
        db.hset("probe:hash", &[("f", probe.as_str())])
            .expect("hset");
        assert_eq!(
            db.get("probe").expect("get").as_deref(),
            Some(probe.as_bytes())
        );
        assert_eq!(
            on_writer("SELECT value FROM redis_strings WHERE key = 'probe'")
                .expect("the view reads")
                .rows,
            vec![vec![relis::SqlValue::text(probe.clone())]],
            "{sql}"
        );
        assert_eq!(
            db.get("victim").expect("get").as_deref(),
            Some(&b"safe"[..]),
            "{sql}"
        );
        assert_eq!(
            db.smembers("victim:set").expect("smembers").len(),
            2,
            "{sql}"
        );
        assert_eq!(
            db.hgetall("victim:hash").expect("hgetall").len(),
            1,
            "{sql}"
        );
        assert_eq!(reserved_objects(&on_writer), baseline, "{sql}");
        assert_eq!(reserved_objects(&named_exec), named_baseline, "{sql}");
    }
    // What the engine wrote is in the file a copy makes, and that file is a Relis database.
    let path = std::env::temp_dir().join(format!(
        "relis-fuzz-sql-{}-{}.db",
        std::process::id(),
        COPIES.fetch_add(1, Ordering::Relaxed)
    ));
    db.backup_to(&path).expect("backup");
    drop(db);
    {
        let copy = Db::open(&path).expect("the copy opens as a Relis database");
        assert_eq!(
            copy.get("victim").expect("get").as_deref(),
            Some(&b"safe"[..])
        );
        let last = program.len().checked_sub(1).map(|i| i.to_string());
        assert_eq!(
            copy.get("probe").expect("get").map(|b| b.to_vec()),
            last.map(String::into_bytes)
        );
    }
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.clone().into_os_string();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
}
