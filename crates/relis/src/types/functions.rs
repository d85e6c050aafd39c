//! Function libraries (Redis's FUNCTION LOAD): their code, by library name, in
//! `relis_functions`, so loaded libraries survive restarts. The server evaluates the code; the
//! engine only keeps it.

use crate::backend::sqlite::sql::server as q;
use crate::backend::sqlite::stmt::prepare;
use crate::backend::sqlite::store::{Reader, Writer};
use crate::error::Result;
use bytes::Bytes;

impl Reader<'_> {
    /// Every stored library as (name, code), by name.
    ///
    /// # Errors
    /// Storage errors.
    pub fn function_libraries(&self) -> Result<Vec<(String, Bytes)>> {
        let mut st = prepare(self.conn, q::FUNCTION_LIST)?;
        let rows = st.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, Bytes::from(r.get::<_, Vec<u8>>(1)?)))
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// Over PostgreSQL: the shared set of libraries as committed when the group began (name,
    /// code, by name), when it changed since this node last took it (the job declared
    /// [`crate::functions_declaration`], and its group found a newer set); `None` when the
    /// node's set is current, and always on SQLite, where the node's set is the only one. The
    /// caller replaces its running set with them: once its group ends, this node counts as
    /// having them. (Not the group's own uncommitted changes: those are in
    /// [`Reader::function_libraries`].)
    pub fn take_function_libraries(&self) -> Option<Vec<(String, Bytes)>> {
        let loaded = self.functions.as_ref()?;
        loaded.taken.set(true);
        Some(loaded.libraries.clone())
    }
}

impl Writer<'_> {
    /// Stores (or replaces) library `name`.
    ///
    /// # Errors
    /// Storage errors.
    pub fn function_put(&mut self, name: &str, code: &[u8]) -> Result<()> {
        prepare(self.conn, q::FUNCTION_PUT)?.execute((name, code))?;
        Ok(())
    }

    /// Deletes library `name`; whether it was stored.
    ///
    /// # Errors
    /// Storage errors.
    pub fn function_delete(&mut self, name: &str) -> Result<bool> {
        let n = prepare(self.conn, q::FUNCTION_DELETE)?.execute([name])?;
        Ok(n > 0)
    }

    /// Deletes every library.
    ///
    /// # Errors
    /// Storage errors.
    pub fn function_clear(&mut self) -> Result<()> {
        prepare(self.conn, q::FUNCTION_FLUSH)?.execute([])?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::Db;

    #[test]
    fn libraries_are_kept() {
        let db = Db::open_in_memory().unwrap();
        db.write(|w| {
            w.function_put("b", b"code b")?;
            w.function_put("a", b"code a")?;
            w.function_put("a", b"code a2")
        })
        .unwrap();
        let libs = db.read(|r| r.function_libraries()).unwrap();
        assert_eq!(
            libs,
            vec![
                ("a".into(), "code a2".into()),
                ("b".into(), "code b".into())
            ]
        );
        assert!(db.write(|w| w.function_delete("a")).unwrap());
        assert!(!db.write(|w| w.function_delete("a")).unwrap());
        db.write(|w| w.function_clear()).unwrap();
        assert!(db.read(|r| r.function_libraries()).unwrap().is_empty());
    }
}
