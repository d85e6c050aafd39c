//! A replica's position in its master's history (schema 10, `relis_replication`): the master's
//! replication id and the stream offset applied, stored in the same transaction as the writes
//! it covers, and the database the stream had selected there (`repl_db` in `relis_meta`: a
//! master does not send SELECT again when a replica continues with a partial resync).

use crate::backend::sqlite::sql::server as q;
use crate::backend::sqlite::stmt::prepare;
use crate::backend::sqlite::store::{Reader, Writer};
use crate::error::Result;
use rusqlite::OptionalExtension;

/// Where a replica stands in its master's stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplPosition {
    /// The master's replication id.
    pub replid: String,
    /// The stream offset applied.
    pub offset: i64,
    /// The database the stream has selected at `offset` (0 if it never sent SELECT).
    pub db: u32,
}

impl Reader<'_> {
    /// The stored replication position, if this file follows a master.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn replication_position(&self) -> Result<Option<ReplPosition>> {
        Ok(prepare(self.conn, q::REPLICATION_GET)?
            .query_row([], |r| {
                Ok(ReplPosition {
                    replid: r.get(0)?,
                    offset: r.get(1)?,
                    db: r.get(2)?,
                })
            })
            .optional()?)
    }
}

impl Writer<'_> {
    /// Records that the writes of this transaction bring the replica to `pos`.
    ///
    /// # Errors
    /// Storage errors only.
    pub fn set_replication_position(&mut self, pos: &ReplPosition) -> Result<()> {
        prepare(self.conn, q::REPLICATION_SET)?.execute((&pos.replid, pos.offset))?;
        prepare(self.conn, q::REPLICATION_SET_DB)?.execute([pos.db])?;
        Ok(())
    }

    /// Forgets the replication position (the server is a master again).
    ///
    /// # Errors
    /// Storage errors only.
    pub fn clear_replication_position(&mut self) -> Result<()> {
        prepare(self.conn, q::REPLICATION_CLEAR)?.execute([])?;
        prepare(self.conn, q::REPLICATION_CLEAR_DB)?.execute([])?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{q, ReplPosition};
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
        let at = |offset, db| ReplPosition {
            replid: "abc".into(),
            offset,
            db,
        };
        db.write(move |w| {
            w.set(0, b"k", b"v", Default::default())?;
            w.set_replication_position(&at(42, 0))
        })
        .unwrap();
        assert_eq!(
            db.read(|r| r.replication_position()).unwrap(),
            Some(at(42, 0))
        );
        db.write(move |w| w.set_replication_position(&at(50, 3)))
            .unwrap();
        assert_eq!(
            db.read(|r| r.replication_position()).unwrap(),
            Some(at(50, 3))
        );
        db.write(|w| w.clear_replication_position()).unwrap();
        assert_eq!(db.read(|r| r.replication_position()).unwrap(), None);
        // A position stored without a database (before `repl_db`) reads as database 0.
        db.write(move |w| {
            w.set_replication_position(&at(60, 5))?;
            crate::backend::sqlite::stmt::prepare(w.conn, q::REPLICATION_CLEAR_DB)?.execute([])?;
            Ok(())
        })
        .unwrap();
        assert_eq!(
            db.read(|r| r.replication_position()).unwrap(),
            Some(at(60, 0))
        );
    }
}
