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
    use crate::backend::sqlite::db::Options;
    use crate::{Db, Expiry, ManualClock, SetOptions};
    use std::sync::Arc;

    /// A replica's view of expiry: its master's writes see keys that have expired by the
    /// replica's clock (`keep_expired`), and while it follows, the sweep leaves them; reads
    /// hide them all along.
    #[test]
    fn a_replica_leaves_expiry_to_its_master() {
        let clock = ManualClock::new(1_000_000);
        let db = Db::open_with(Options {
            clock: Arc::new(clock.clone()),
            ..Options::default()
        })
        .unwrap();
        let soon = SetOptions {
            expiry: Expiry::At(1_000_010),
            ..Default::default()
        };
        db.write(move |w| {
            w.set_following(true);
            w.set(0, b"a", b"v", soon)?;
            w.set(0, b"b", b"v", soon)?;
            w.set(0, b"c", b"v", soon)
        })
        .unwrap();
        clock.advance(20);
        assert_eq!(db.sweep_expired(100).unwrap(), 0);
        assert_eq!(db.get("a").unwrap(), None);
        // The master's PERSIST (GETEX PERSIST here) finds the key; an already past expiry
        // from it leaves the key for the master's DEL.
        let (persisted, past) = db
            .write(|w| {
                w.keep_expired();
                let p = w.getex(0, b"a", Some(Expiry::Clear))?;
                let past = w.getex(0, b"b", Some(Expiry::At(1)))?;
                Ok((p, past))
            })
            .unwrap();
        assert_eq!(persisted.as_deref(), Some(&b"v"[..]));
        assert_eq!(past.as_deref(), Some(&b"v"[..]));
        assert_eq!(db.get("a").unwrap().as_deref(), Some(&b"v"[..]));
        assert_eq!(db.dbsize().unwrap(), 3);
        // Any other write job still expires what it finds, as before.
        assert_eq!(
            db.write(|w| w.getex(0, b"c", Some(Expiry::Clear))).unwrap(),
            None
        );
        assert_eq!(db.dbsize().unwrap(), 2);
        // A master again: the sweep deletes `b`.
        db.write(|w| {
            w.set_following(false);
            Ok(())
        })
        .unwrap();
        assert_eq!(db.sweep_expired(100).unwrap(), 1);
        assert_eq!(db.dbsize().unwrap(), 1);
    }

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
