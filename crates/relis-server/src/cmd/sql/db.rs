//! SQL.DB CREATE name [PATH file | MEMORY] | DROP name | LIST — named SQL databases.
//!
//! Each named database is its own SQLite file under `dir` (by default `<name>.sqlite`, with
//! bytes other than letters, digits, `_`, `-` and `.` written as `%XX`; `PATH` picks another
//! file, which may not lie outside `dir`; an existing SQLite file is opened as it is) or lives
//! in memory (`MEMORY`). Each has its own writer thread and readers, so databases write in
//! parallel with each other and with the Redis keyspace. The list is recorded in the main
//! database and every database is reopened at start-up (a `MEMORY` one empty); SAVE and BGSAVE
//! copy each of them next to the main snapshot.
//!
//! - CREATE replies `+OK` (an error if the name is taken, or if `sql-max-databases` are open
//!   already: each database has its own threads and file).
//! - DROP closes the database and forgets it; its file stays where it is. Replies `+OK`.
//! - LIST replies `[[name, file], ...]` by name, file relative to `dir`, or `:memory:`.

use crate::args::Args;
use crate::client::Client;
use crate::cmd::{BoxFuture, ConnCmd, Parsed, Spec};
use crate::config::Config;
use crate::error::CmdError;
use crate::state::{Databases, Named, NoSuchDb, Shared};
use bytes::Bytes;
use relis::{SqlDb, SqlDbOptions};
use resp::Frame;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const FLAGS: crate::cmd::Flags = Spec::flags(&["admin", "noscript"]);

/// SQL.DB CREATE's declaration (REDISQL.CREATE_DB has its flags and categories): each
/// database costs threads and a file, so creating one is for administrators.
pub const SPEC_CREATE: Spec = Spec {
    name: "sql.db|create",
    arity: -3,
    flags: FLAGS,
    acl: Spec::acl(&["admin", "slow", "dangerous", "sql"]),
    group: "sql",
    since: "0.1.0",
    summary: "Create (or open) a named SQL database",
    parse: SqlDbCmd::parse_create,
    ..Spec::BASE
};

/// SQL.DB's subcommands.
pub const SUBCOMMANDS: &[Spec] = &[
    SPEC_CREATE,
    Spec {
        name: "sql.db|drop",
        arity: 3,
        flags: FLAGS,
        acl: Spec::acl(&["admin", "slow", "dangerous", "sql"]),
        group: "sql",
        since: "0.1.0",
        summary: "Close and forget a named SQL database (its file stays)",
        parse: SqlDbCmd::parse_drop,
        ..Spec::BASE
    },
    Spec {
        name: "sql.db|list",
        arity: 2,
        flags: Spec::flags(&["loading", "stale"]),
        acl: Spec::acl(&["slow", "sql"]),
        group: "sql",
        since: "0.1.0",
        summary: "List the named SQL databases",
        complexity: "O(N) where N is the number of databases",
        parse: SqlDbCmd::parse_list,
        ..Spec::BASE
    },
];

/// SQL.DB's declaration (a container).
pub const SPEC: Spec = Spec {
    name: "sql.db",
    arity: -2,
    acl: Spec::acl(&["slow", "sql"]),
    group: "sql",
    since: "0.1.0",
    summary: "A container for named SQL database commands",
    complexity: "Depends on subcommand.",
    subcommands: SUBCOMMANDS,
    ..Spec::BASE
};

/// Where a new database lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// `<dir>/<name>.sqlite`.
    Default,
    /// A file under `dir`, as given.
    Path(String),
    /// In memory.
    Memory,
}

/// A SQL.DB subcommand.
#[derive(Debug, PartialEq, Eq)]
pub enum SqlDbCmd {
    /// CREATE.
    Create(String, Place),
    /// DROP.
    Drop(String),
    /// LIST.
    List,
}

/// A database name: UTF-8, 1 to 128 bytes, no control characters and no `/`.
pub fn check_name(b: Bytes) -> Result<String, CmdError> {
    let name = super::text(b, "a database name")?;
    if name.is_empty()
        || name.len() > 128
        || name
            .chars()
            .any(|c| c.is_control() || c == '/' || c == '\\')
    {
        return Err(CmdError::SQL_DB_NAME);
    }
    Ok(name)
}

impl SqlDbCmd {
    fn parse_create(args: &mut Args) -> Result<Parsed, CmdError> {
        let name = check_name(args.next()?)?;
        let place = if args.eat("path") {
            Place::Path(super::text(args.next()?, "a path")?)
        } else if args.eat("memory") {
            Place::Memory
        } else {
            Place::Default
        };
        args.finish()?;
        Parsed::conn(SqlDbCmd::Create(name, place))
    }

    fn parse_drop(args: &mut Args) -> Result<Parsed, CmdError> {
        let name = check_name(args.next()?)?;
        args.finish()?;
        Parsed::conn(SqlDbCmd::Drop(name))
    }

    fn parse_list(args: &mut Args) -> Result<Parsed, CmdError> {
        args.finish()?;
        Parsed::conn(SqlDbCmd::List)
    }
}

/// The default file of a database: its name with unusual bytes as `%XX`, then `.sqlite`.
pub fn default_file(name: &str) -> String {
    let mut out = String::new();
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || (b == b'.' && !out.is_empty()) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out + ".sqlite"
}

/// A file for a database, relative to `dir` as it is recorded, checked to stay inside `dir`.
/// Returns (recorded form, absolute path).
pub fn resolve(dir: &Path, file: &str) -> Result<(String, PathBuf), CmdError> {
    let escape = || CmdError::sql_path_outside(file);
    let abs = relis::sql::inside(dir, Path::new(file)).ok_or_else(escape)?;
    let base = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let rel = abs.strip_prefix(&base).map_err(|_| escape())?;
    if let Some(parent) = abs.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| CmdError::sql_create_dir(&parent.display().to_string(), e))?;
    }
    Ok((rel.to_string_lossy().into_owned(), abs))
}

fn options(config: &Config) -> SqlDbOptions {
    SqlDbOptions {
        durability: config.durability,
        readers: config.readers.clamp(1, 4),
        max_batch: config.max_batch,
        ..SqlDbOptions::default()
    }
}

fn open(config: &Config, file: Option<&str>) -> Result<Named, CmdError> {
    let (file, path) = match file {
        Some(f) => {
            let (rel, abs) = resolve(&config.dir, f)?;
            (Some(rel), Some(abs))
        }
        None => (None, None),
    };
    let db = SqlDb::open(path.as_deref(), options(config))?;
    Ok(Named { db, file })
}

/// Reopens every database recorded in the main database (start-up). A database that cannot
/// be opened is logged and left out (its record stays). All of them open even when they are
/// more than `sql-max-databases` (the setting was lowered since): refusing some would hide
/// data that exists; the cap then refuses new ones until enough are dropped.
pub fn open_all(main: &relis::Db, config: &Config) -> Databases {
    if main.backend() == "postgres" {
        return Databases::on_postgres(&config.backend);
    }
    let list = match main.read(|r| r.sql_databases()) {
        Ok(l) => l,
        Err(e) => {
            tracing::error!("cannot read the list of SQL databases: {e}");
            Vec::new()
        }
    };
    let max = config.sql_max_databases;
    if max > 0 && list.len() > max {
        tracing::warn!(
            "{} SQL databases are recorded, more than sql-max-databases ({max}): all are \
             opened, and SQL.DB CREATE is refused until fewer than {max} remain",
            list.len()
        );
    }
    let mut map = BTreeMap::new();
    for (name, file) in list {
        match open(config, file.as_deref()) {
            Ok(n) => {
                map.insert(name, n);
            }
            Err(e) => tracing::error!("SQL database '{name}' not opened: {}", e.message()),
        }
    }
    Databases::new(map)
}

impl From<NoSuchDb> for CmdError {
    fn from(e: NoSuchDb) -> CmdError {
        no_such(&e.0)
    }
}

/// Refuses a new database when `max` (`sql-max-databases`, 0 = no limit) are open.
fn check_room(open: usize, max: usize) -> Result<(), CmdError> {
    if max > 0 && open >= max {
        return Err(CmdError::sql_too_many(max));
    }
    Ok(())
}

/// `ERR no such SQL database 'name'`.
pub fn no_such(name: &str) -> CmdError {
    CmdError::sql_no_db(name)
}

/// Copies every named database next to the main snapshot (SAVE, BGSAVE): a file-backed one to
/// `<its file>.save`, an in-memory one to `<dir>/<name>.memory.save`. Blocking.
///
/// # Errors
/// The first copy that fails.
pub fn snapshot_all(server: &Shared) -> Result<(), relis::Error> {
    let dir = server.config.read().dir.clone();
    for (name, n) in server.sql.list() {
        let dest = match n.db.path() {
            Some(p) => {
                let mut s = p.as_os_str().to_owned();
                s.push(".save");
                PathBuf::from(s)
            }
            None => dir.join(format!(
                "{}.memory.save",
                default_file(&name).trim_end_matches(".sqlite")
            )),
        };
        n.db.backup_to(&dest).map_err(|e| match e {
            relis::SqlError::Engine(e) => e,
            other => relis::Error::Storage(other.to_string()),
        })?;
    }
    Ok(())
}

/// Creates (or opens) a named database and records it. Used by SQL.DB CREATE and
/// REDISQL.CREATE_DB.
///
/// # Errors
/// The name is taken, the path escapes `dir`, or the file cannot be opened.
pub async fn create(server: &Arc<Shared>, name: String, place: Place) -> Result<(), CmdError> {
    if server.sql.contains(&name) {
        return Err(CmdError::sql_db_exists(&name));
    }
    let config = server.config.read().clone();
    // Checked before the file is made, and again when the database joins the map (another
    // CREATE may have taken the last place meanwhile).
    let max = config.sql_max_databases;
    check_room(server.sql.len(), max)?;
    let file = match place {
        Place::Default => Some(default_file(&name)),
        Place::Path(p) => Some(p),
        Place::Memory => None,
    };
    let named = tokio::task::spawn_blocking(move || open(&config, file.as_deref()))
        .await
        .map_err(|e| CmdError::Internal(e.to_string()))??;
    let added = server
        .sql
        .add_unless(name.clone(), named.clone(), |taken, open| {
            if taken {
                Some(CmdError::sql_db_exists(&name))
            } else {
                check_room(open, max).err()
            }
        });
    if let Err((e, named)) = added {
        tokio::task::spawn_blocking(move || drop(named));
        return Err(e);
    }
    // Recorded in the main database, so it is reopened at start-up.
    let (tx, rx) = tokio::sync::oneshot::channel();
    let (n, f) = (name.clone(), named.file.clone());
    server.db.write_async(
        move |w| w.atomic(|w| w.sql_database_record(&n, f.as_deref())),
        move |r| {
            let _ = tx.send(r.and_then(|r| r));
        },
    );
    let recorded = rx.await.unwrap_or(Err(relis::Error::Closed));
    if let Err(e) = recorded {
        server.sql.remove(&name);
        tokio::task::spawn_blocking(move || drop(named));
        return Err(e.into());
    }
    Ok(())
}

/// Closes and forgets a named database.
///
/// # Errors
/// No such database, or the record cannot be removed.
pub async fn drop_db(server: &Arc<Shared>, name: &str) -> Result<(), CmdError> {
    let Some(named) = server.sql.remove(name) else {
        return Err(no_such(name));
    };
    // Closing joins its threads (after they finish their queue): not on the runtime.
    tokio::task::spawn_blocking(move || drop(named));
    let (tx, rx) = tokio::sync::oneshot::channel();
    let n = name.to_string();
    server.db.write_async(
        move |w| w.atomic(|w| w.sql_database_forget(&n)),
        move |r| {
            let _ = tx.send(r.and_then(|r| r));
        },
    );
    rx.await.unwrap_or(Err(relis::Error::Closed))?;
    Ok(())
}

impl ConnCmd for SqlDbCmd {
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>> {
        Box::pin(async move {
            match *self {
                SqlDbCmd::Create(name, place) => {
                    create(&c.server, name, place).await?;
                    Ok(Frame::ok())
                }
                SqlDbCmd::Drop(name) => {
                    drop_db(&c.server, &name).await?;
                    Ok(Frame::ok())
                }
                SqlDbCmd::List => Ok(Frame::Array(
                    c.server
                        .sql
                        .list()
                        .into_iter()
                        .map(|(name, n)| {
                            Frame::Array(vec![
                                Frame::Bulk(Bytes::from(name)),
                                Frame::Bulk(Bytes::from(
                                    n.file.unwrap_or_else(|| ":memory:".into()),
                                )),
                            ])
                        })
                        .collect(),
                )),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::sql::args_of;

    #[test]
    fn parse() {
        let create = |w: &[&str]| SqlDbCmd::parse_create(&mut args_of("sql.db|create", w)).err();
        assert_eq!(create(&["a"]), None);
        assert_eq!(create(&["a", "PATH", "x.db"]), None);
        assert_eq!(create(&["a", "memory"]), None);
        assert_eq!(create(&["a", "bogus"]), Some(CmdError::Syntax));
        assert_eq!(create(&["a", "PATH"]), Some(CmdError::Syntax));
        assert!(create(&["a/b"]).is_some());
        assert!(create(&[""]).is_some());
    }

    #[test]
    fn files() {
        assert_eq!(default_file("users"), "users.sqlite");
        assert_eq!(default_file("a:b c"), "a%3Ab%20c.sqlite");
        assert_eq!(default_file(".hidden"), "%2Ehidden.sqlite");
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(resolve(dir.path(), "x/y.db").unwrap().0, "x/y.db");
        assert!(dir.path().join("x").is_dir());
        assert!(resolve(dir.path(), "../y.db").is_err());
        assert!(resolve(dir.path(), "/tmp/y.db").is_err());
        let abs = std::fs::canonicalize(dir.path()).unwrap().join("z.db");
        assert_eq!(
            resolve(dir.path(), abs.to_str().unwrap()).unwrap().0,
            "z.db"
        );
    }
}
