//! A replica's position in its master's history (schema 10, `relis_replication`): the master's
//! replication id and the stream offset applied, stored in the same transaction as the writes
//! it covers.

use crate::backend::sqlite::sql::server as q;
use crate::backend::sqlite::stmt::prepare;
use crate::backend::sqlite::store::{Reader, Writer};
use crate::error::Result;
use rusqlite::OptionalExtension;

impl Reader<'_> {
    /// The stored replication position (master replid, offset applied), if this file follows a
    /// master.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn replication_position(&self) -> Result<Option<(String, i64)>> {
        Ok(prepare(self.conn, q::REPLICATION_GET)?
            .query_row([], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?)
    }
}

impl Writer<'_> {
    /// Records that the writes of this transaction bring the replica to `offset` of the master
    /// `replid`'s stream.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn set_replication_position(&mut self, replid: &str, offset: i64) -> Result<()> {
        prepare(self.conn, q::REPLICATION_SET)?.execute((replid, offset))?;
        Ok(())
    }

    /// Forgets the replication position (the server is a master again).
    ///
    /// # Errors
    /// Storage errors only.
    pub fn clear_replication_position(&mut self) -> Result<()> {
        prepare(self.conn, q::REPLICATION_CLEAR)?.execute([])?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::Db;

    #[test]
    fn the_position_is_kept_with_the_writes() {
        let db = Db::open_in_memory().unwrap();
        assert_eq!(db.read(|r| r.replication_position()).unwrap(), None);
        db.write(|w| {
            w.set(0, b"k", b"v", Default::default())?;
            w.set_replication_position("abc", 42)
        })
        .unwrap();
        assert_eq!(
            db.read(|r| r.replication_position()).unwrap(),
            Some(("abc".to_string(), 42))
        );
        db.write(|w| w.set_replication_position("abc", 50)).unwrap();
        assert_eq!(
            db.read(|r| r.replication_position()).unwrap(),
            Some(("abc".to_string(), 50))
        );
        db.write(|w| w.clear_replication_position()).unwrap();
        assert_eq!(db.read(|r| r.replication_position()).unwrap(), None);
    }
}
