//! The command table and the three kinds of command.
//!
//! Every command is declared once, as a [`Spec`] in its family's `SPECS` table: name, arity,
//! flags, ACL categories, key positions, docs, and its pure `parse`. The dispatcher checks unknown
//! commands and arity from the table before any command code runs; COMMAND and INFO read the
//! same table. `parse` returns a [`Parsed`] command, which runs where its kind says:
//! - [`ReadCmd`] on a reader connection (in parallel, off the async runtime),
//! - [`WriteCmd`] on the writer thread, all or nothing inside the group commit,
//! - [`ConnCmd`] on the connection's task (connection state, server state, MULTI, ...).

pub mod acl;
pub mod bitmap;
pub mod cluster;
pub mod conn;
pub mod geo;
pub mod hash;
pub mod hyperloglog;
pub mod keys;
pub mod list;
pub mod pubsub;
pub mod replication;
pub mod scripting;
pub mod server;
pub mod set;
pub mod sql;
pub mod stream;
pub mod string;
pub mod tx;
pub mod zset;

use crate::args::Args;
use crate::client::Client;
use crate::error::CmdError;
use resp::Frame;
use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;

pub use crate::client::Cx;

/// A command that only reads the keyspace.
pub trait ReadCmd: Send + 'static {
    /// Runs the command on a read snapshot.
    ///
    /// # Errors
    /// The command's error reply.
    fn exec(&self, r: &relis::Reader<'_>, cx: &Cx) -> Result<Frame, CmdError>;

    /// Whether this read is bounded well enough to run on the network thread, like the commands
    /// flagged `fast`, although its command in general is not (LRANGE over at most
    /// [`INLINE_READ_LIMIT`] elements, MGET of that many keys): handing it to a reader thread
    /// would cost more than the read.
    fn inline(&self) -> bool {
        false
    }

    /// The form this command takes over the PostgreSQL backend when it does not run on the
    /// engine there (SQL.* on the main database runs on PostgreSQL itself, from the
    /// connection); `None`: it runs as it is.
    fn on_postgres(&self) -> Option<Box<dyn ConnCmd>> {
        None
    }
}

/// Most elements (or keys) a read may touch and still run inline (see [`ReadCmd::inline`]).
pub const INLINE_READ_LIMIT: u64 = 128;

/// A command that writes the keyspace.
pub trait WriteCmd: Send + 'static {
    /// Runs the command on the writer (an `Err` leaves what [`WriteCmd::on_error`] says).
    ///
    /// # Errors
    /// The command's error reply.
    fn exec(&self, w: &mut relis::Writer<'_>, cx: &Cx) -> Result<Frame, CmdError>;

    /// What the command's errors leave behind ([`relis::OnError`]): a fact about the command,
    /// from which the engine decides how to keep it all or nothing (on SQLite, a savepoint
    /// only for [`relis::OnError::Undo`], the default).
    fn on_error(&self) -> relis::OnError {
        relis::OnError::Undo
    }

    /// As [`ReadCmd::on_postgres`].
    fn on_postgres(&self) -> Option<Box<dyn ConnCmd>> {
        None
    }
}

/// A boxed future borrowing the client.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A command that works on the connection or the server rather than (only) the keyspace.
pub trait ConnCmd: Send + 'static {
    /// Runs the command on the connection's task.
    fn exec<'a>(self: Box<Self>, c: &'a mut Client) -> BoxFuture<'a, Result<Frame, CmdError>>;

    /// The database this command selects, if it is SELECT (MULTI tracks it for later commands).
    fn selects(&self) -> Option<u32> {
        None
    }

    /// The form this command takes inside MULTI/EXEC, where nothing may block: blocking
    /// commands hand over their non-blocking twin (once); others stay connection commands.
    fn in_transaction(&mut self) -> Option<Box<dyn WriteCmd>> {
        None
    }
}

/// A parsed command, ready to run where its kind says.
pub enum Parsed {
    /// Runs on a reader.
    Read(Box<dyn ReadCmd>),
    /// Runs on the writer.
    Write(Box<dyn WriteCmd>),
    /// Runs on the connection's task.
    Conn(Box<dyn ConnCmd>),
}

impl Parsed {
    /// A read command.
    pub fn read(c: impl ReadCmd) -> Result<Parsed, CmdError> {
        Ok(Parsed::Read(Box::new(c)))
    }
    /// A write command.
    pub fn write(c: impl WriteCmd) -> Result<Parsed, CmdError> {
        Ok(Parsed::Write(Box::new(c)))
    }
    /// A connection command.
    pub fn conn(c: impl ConnCmd) -> Result<Parsed, CmdError> {
        Ok(Parsed::Conn(Box::new(c)))
    }

    /// The command as it runs over the PostgreSQL backend ([`ReadCmd::on_postgres`]).
    pub fn for_postgres(self) -> Parsed {
        let other = match &self {
            Parsed::Read(c) => c.on_postgres(),
            Parsed::Write(c) => c.on_postgres(),
            Parsed::Conn(_) => None,
        };
        other.map_or(self, Parsed::Conn)
    }
}

/// A read of the keyspace declaring `keys` (which the PostgreSQL backend loads first), awaited.
pub async fn read_declared<T: Send + 'static>(
    c: &mut Client,
    keys: relis::DeclaredKeys,
    read: impl FnOnce(&relis::Reader<'_>) -> Result<T, CmdError> + Send + 'static,
) -> Result<T, CmdError> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    c.server.db.read_async_keys(
        keys,
        move |r| read(r),
        move |r| {
            let _ = tx.send(r);
        },
    );
    rx.await
        .map_err(|_| CmdError::from(relis::Error::Closed))?
        .map_err(CmdError::from)?
}

/// A parse function.
pub type ParseFn = fn(&mut Args) -> Result<Parsed, CmdError>;

/// A command's declaration (see [`crate::spec::Spec`]), its parse function fixed.
pub type Spec = crate::spec::Spec<ParseFn>;

pub use crate::spec::{Cats, FindKeys, FindKeysFn, Flags, KeyFlags, KeySpec};

fn unreachable_parse(_: &mut Args) -> Result<Parsed, CmdError> {
    Err(CmdError::Syntax)
}

impl Spec {
    /// Defaults for `..Spec::BASE` in the tables.
    pub const BASE: Spec = Spec::base(unreachable_parse);
}

/// Every top-level command.
pub fn all() -> impl Iterator<Item = &'static Spec> {
    string::SPECS
        .iter()
        .chain(keys::SPECS)
        .chain(hash::SPECS)
        .chain(list::SPECS)
        .chain(conn::SPECS)
        .chain(server::SPECS)
        .chain(tx::SPECS)
        .chain(zset::SPECS)
        .chain(geo::SPECS)
        .chain(sql::SPECS)
        .chain(set::SPECS)
        .chain(scripting::SPECS)
        .chain(pubsub::SPECS)
        .chain(acl::SPECS)
        .chain(cluster::SPECS)
        .chain(replication::SPECS)
        .chain(stream::SPECS)
        .chain(hyperloglog::SPECS)
        .chain(bitmap::SPECS)
}

/// The command table (see [`crate::spec::Table`]).
pub type Table = crate::spec::Table<ParseFn>;

impl Table {
    /// The process-wide table.
    pub fn get() -> &'static Table {
        static TABLE: OnceLock<Table> = OnceLock::new();
        TABLE.get_or_init(|| Table::new(all()))
    }
}

/// Top-level commands (not subcommands) in table order.
pub fn top_level() -> Vec<&'static Spec> {
    all().collect()
}

/// Counts a read lookup of `key` as Redis's `lookupKeyRead` does ([`Cx::hit`]): a key of
/// another type is a hit (the WRONGTYPE comes after the lookup). Storage errors count nothing.
///
/// # Errors
/// The lookup's error, as a command error.
pub fn counted<T>(
    cx: &Cx,
    key: &[u8],
    r: Result<Option<T>, relis::Error>,
) -> Result<Option<T>, CmdError> {
    match r {
        Ok(v) => {
            cx.hit(key, v.is_some());
            Ok(v)
        }
        Err(relis::Error::WrongType) => {
            cx.hit(key, true);
            Err(CmdError::WrongType)
        }
        Err(e) => Err(e.into()),
    }
}
