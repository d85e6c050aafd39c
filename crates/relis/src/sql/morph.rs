//! Morphing between SQL results and Redis structures (AlchemyDB's DENORM/NORM, generalised):
//! rows become hashes, strings, list elements, set members or sorted-set members, under keys
//! made from a template; hashes whose keys match a pattern become rows of a table.

use super::{
    execute, sandbox, KeyAccess, Params, SqlConn, SqlError, SqlLimits, SqlOutput, SqlValue,
};
use crate::backend::sqlite::store::{Reader, Writer};
use crate::error::Error;
use crate::events::class;
use crate::types::keys::ExpireCond;
use crate::types::list::End;
use crate::types::strings::{Expiry, SetOptions};
use crate::types::zset::ZAddOptions;
use bytes::Bytes;
use std::collections::HashSet;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Literal(Vec<u8>),
    Column(String),
}

/// A key template: literal bytes with `{column}` placeholders that take a row's values
/// (`user:{id}`). A `{` without a closing `}` is literal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyTemplate {
    parts: Vec<Part>,
}

impl KeyTemplate {
    /// Parses a template.
    pub fn parse(t: &[u8]) -> KeyTemplate {
        let mut parts = Vec::new();
        let mut lit = Vec::new();
        let mut i = 0;
        while i < t.len() {
            if t[i] == b'{' {
                if let Some(end) = t[i + 1..].iter().position(|&c| c == b'}') {
                    let name = &t[i + 1..i + 1 + end];
                    if !name.is_empty() {
                        if let Ok(name) = std::str::from_utf8(name) {
                            if !lit.is_empty() {
                                parts.push(Part::Literal(std::mem::take(&mut lit)));
                            }
                            parts.push(Part::Column(name.to_string()));
                            i += end + 2;
                            continue;
                        }
                    }
                }
            }
            lit.push(t[i]);
            i += 1;
        }
        if !lit.is_empty() {
            parts.push(Part::Literal(lit));
        }
        KeyTemplate { parts }
    }

    /// The columns the template names.
    pub fn columns(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Column(c) => Some(c.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// The keys `out`'s rows name, each once, in first-row order (what a morph writing them
    /// declares over the PostgreSQL backend).
    ///
    /// # Errors
    /// A placeholder names no column of `out`.
    pub fn keys(&self, out: &SqlOutput) -> Result<Vec<Vec<u8>>, SqlError> {
        let (bound, _) = self.bind(&out.columns)?;
        let mut seen = HashSet::new();
        Ok(out
            .rows
            .iter()
            .map(|row| render(&bound, row))
            .filter(|k| seen.insert(k.clone()))
            .collect())
    }

    /// Resolves the placeholders against a result's columns (case-insensitively, as SQL
    /// names are). Returns the template with indexes and which columns it uses.
    fn bind(&self, columns: &[String]) -> Result<(Vec<Bound>, Vec<bool>), SqlError> {
        let mut used = vec![false; columns.len()];
        let mut out = Vec::with_capacity(self.parts.len());
        for p in &self.parts {
            out.push(match p {
                Part::Literal(l) => Bound::Literal(l.clone()),
                Part::Column(c) => {
                    let i = columns
                        .iter()
                        .position(|x| x.eq_ignore_ascii_case(c))
                        .ok_or_else(|| {
                            SqlError::Sql(format!("the key template names {{{c}}}, which is not a column of the result"))
                        })?;
                    used[i] = true;
                    Bound::Column(i)
                }
            });
        }
        Ok((out, used))
    }
}

enum Bound {
    Literal(Vec<u8>),
    Column(usize),
}

fn render(t: &[Bound], row: &[SqlValue]) -> Vec<u8> {
    let mut key = Vec::new();
    for p in t {
        match p {
            Bound::Literal(l) => key.extend_from_slice(l),
            Bound::Column(i) => {
                if let Some(b) = value_bytes(&row[*i]) {
                    key.extend_from_slice(&b);
                }
            }
        }
    }
    key
}

/// A SQL value as the string Redis stores: integers in decimal, reals in their shortest
/// round-tripping form, text and blobs as they are; `None` for NULL.
pub fn value_bytes(v: &SqlValue) -> Option<Bytes> {
    match v {
        SqlValue::Null => None,
        SqlValue::Integer(i) => Some(Bytes::from(i.to_string())),
        SqlValue::Real(f) => Some(Bytes::from(format_real(*f))),
        SqlValue::Text(b) | SqlValue::Blob(b) => Some(b.clone()),
    }
}

fn format_real(f: f64) -> String {
    if f.is_infinite() {
        if f > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        format!("{f}")
    }
}

/// How morph commands write their keys.
#[derive(Clone, Debug, Default)]
pub struct MorphOptions {
    /// Delete each key (of whatever type) before writing it; otherwise hashes merge their
    /// fields, lists append, sets and sorted sets add (strings are always replaced).
    pub replace: bool,
    /// Give each written key this time to live, in milliseconds.
    pub ttl_ms: Option<i64>,
    /// The keys the query may see through the views and the keys the command may write: a
    /// row whose key may not be written fails the whole command with
    /// [`SqlError::KeyDenied`] before that key is touched (the caller's savepoint undoes the
    /// rows before it).
    pub access: KeyAccess,
}

/// [`SqlError::KeyDenied`] unless `opts` allows writing `key`.
fn writable(key: &[u8], opts: &MorphOptions) -> Result<(), SqlError> {
    if opts.access.may_write(key) {
        Ok(())
    } else {
        Err(SqlError::KeyDenied(Bytes::copy_from_slice(key)))
    }
}

/// The value columns of a result: those the key template does not use.
fn value_columns(used: &[bool]) -> Vec<usize> {
    used.iter()
        .enumerate()
        .filter(|(_, u)| !**u)
        .map(|(i, _)| i)
        .collect()
}

fn need_columns(values: &[usize], n: usize, what: &str) -> Result<(), SqlError> {
    if values.len() == n {
        Ok(())
    } else {
        Err(SqlError::Sql(format!(
            "{what} takes {n} column{} besides those in the key template, the result has {}",
            if n == 1 { "" } else { "s" },
            values.len()
        )))
    }
}

/// Which Redis structure rows become.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Morph {
    /// [`Writer::rows_to_hashes`].
    Hash,
    /// [`Writer::rows_to_strings`].
    String,
    /// [`Writer::rows_to_lists`].
    List,
    /// [`Writer::rows_to_sets`].
    Set,
    /// [`Writer::rows_to_zsets`].
    ZSet,
    /// [`Writer::rows_to_streams`].
    Stream,
}

impl Writer<'_> {
    /// Writes `out`'s rows as `kind` under keys from `template` in `db`.
    ///
    /// # Errors
    /// As the method for `kind` says.
    pub fn rows_to(
        &mut self,
        kind: Morph,
        db: u32,
        template: &KeyTemplate,
        out: &SqlOutput,
        opts: &MorphOptions,
    ) -> Result<i64, SqlError> {
        match kind {
            Morph::Hash => self.rows_to_hashes(db, template, out, opts),
            Morph::String => self.rows_to_strings(db, template, out, opts),
            Morph::List => self.rows_to_lists(db, template, out, opts),
            Morph::Set => self.rows_to_sets(db, template, out, opts),
            Morph::ZSet => self.rows_to_zsets(db, template, out, opts),
            Morph::Stream => self.rows_to_streams(db, template, out, opts),
        }
    }

    /// Runs the read-only `sql` in this transaction and writes its rows as `kind` (the morph
    /// commands on the main database: one transaction for the query and the writes).
    ///
    /// # Errors
    /// The query's error, or as [`Writer::rows_to`] says.
    #[allow(clippy::too_many_arguments)]
    pub fn sql_morph(
        &mut self,
        kind: Morph,
        db: u32,
        template: &KeyTemplate,
        sql: &str,
        params: impl Into<Params>,
        opts: &MorphOptions,
        limits: &SqlLimits,
    ) -> Result<i64, SqlError> {
        let out = {
            let mut c = self.sql();
            c.set_access(opts.access.clone());
            c.query(sql, params, limits)?
        };
        self.rows_to(kind, db, template, &out, opts)
    }

    /// Deletes `key` the first time a REPLACE morph writes it.
    fn replace_once(
        &mut self,
        db: u32,
        key: &[u8],
        opts: &MorphOptions,
        seen: &mut HashSet<Vec<u8>>,
    ) -> Result<bool, Error> {
        let first = seen.insert(key.to_vec());
        if first && opts.replace && self.del(db, &[Bytes::copy_from_slice(key)])? > 0 {
            self.notify(class::GENERIC, "del", db, key);
        }
        Ok(first)
    }

    fn morph_ttl(&mut self, db: u32, key: &[u8], opts: &MorphOptions) -> Result<(), Error> {
        if let Some(ms) = opts.ttl_ms {
            let at = self.now_ms().saturating_add(ms);
            self.expire_at(db, key, at, ExpireCond::Always)?;
        }
        Ok(())
    }

    /// SQL.TOHASH: each row becomes the hash named by `template`; the other columns become its
    /// fields (NULLs are skipped). Returns how many hashes were written.
    ///
    /// # Errors
    /// A placeholder names no column, or [`Error::WrongType`] for a key of another type
    /// (without `replace`).
    pub fn rows_to_hashes(
        &mut self,
        db: u32,
        template: &KeyTemplate,
        out: &SqlOutput,
        opts: &MorphOptions,
    ) -> Result<i64, SqlError> {
        self.rows_to_fields(db, template, out, opts, |w, db, key, pairs| {
            w.hset(db, key, &pairs)?;
            // The event HSET sends: keyspace notifications, and client-side caching's
            // invalidation, hang on it.
            w.notify(class::HASH, "hset", db, key);
            Ok(())
        })
    }

    /// SQL.TOSTREAM: each row becomes an entry of the stream named by `template`, with an id
    /// from the clock (XADD's `*`), in row order; the other columns become its fields (NULLs
    /// are skipped, and a row with no field left adds nothing). Returns how many entries were
    /// added.
    ///
    /// # Errors
    /// A placeholder names no column, [`Error::WrongType`] for a key of another type (without
    /// `replace`), or the stream's own errors (its last id is the largest there is).
    pub fn rows_to_streams(
        &mut self,
        db: u32,
        template: &KeyTemplate,
        out: &SqlOutput,
        opts: &MorphOptions,
    ) -> Result<i64, SqlError> {
        self.rows_to_fields(db, template, out, opts, |w, db, key, pairs| {
            let flat: Vec<Bytes> = pairs.into_iter().flat_map(|(f, v)| [f, v]).collect();
            w.xadd(db, key, crate::XAddId::Auto, &flat, false, None)?;
            w.notify(class::STREAM, "xadd", db, key);
            Ok(())
        })
    }

    /// The loop of TOHASH and TOSTREAM: each row's non-NULL value columns, named by their
    /// columns, are handed to `write` for the key the row names (a row with none is skipped).
    /// Returns how many rows were written.
    fn rows_to_fields(
        &mut self,
        db: u32,
        template: &KeyTemplate,
        out: &SqlOutput,
        opts: &MorphOptions,
        mut write: impl FnMut(&mut Self, u32, &[u8], Vec<(Bytes, Bytes)>) -> Result<(), Error>,
    ) -> Result<i64, SqlError> {
        let (t, used) = template.bind(&out.columns)?;
        let fields = value_columns(&used);
        let mut seen = HashSet::new();
        let mut n = 0;
        for row in &out.rows {
            let key = render(&t, row);
            writable(&key, opts)?;
            self.replace_once(db, &key, opts, &mut seen)?;
            let pairs: Vec<(Bytes, Bytes)> = fields
                .iter()
                .filter_map(|&i| {
                    value_bytes(&row[i]).map(|v| (Bytes::from(out.columns[i].clone()), v))
                })
                .collect();
            if pairs.is_empty() {
                continue;
            }
            write(self, db, &key, pairs)?;
            self.morph_ttl(db, &key, opts)?;
            n += 1;
        }
        Ok(n)
    }

    /// SQL.TOSTRING: each row's one value column becomes the string named by `template` (as SET
    /// does: any old value and TTL go). Rows whose value is NULL are skipped. Returns how many
    /// strings were written.
    ///
    /// # Errors
    /// Not exactly one value column, or a placeholder names no column.
    pub fn rows_to_strings(
        &mut self,
        db: u32,
        template: &KeyTemplate,
        out: &SqlOutput,
        opts: &MorphOptions,
    ) -> Result<i64, SqlError> {
        let (t, used) = template.bind(&out.columns)?;
        let values = value_columns(&used);
        need_columns(&values, 1, "SQL.TOSTRING")?;
        let mut n = 0;
        for row in &out.rows {
            let Some(v) = value_bytes(&row[values[0]]) else {
                continue;
            };
            let key = render(&t, row);
            writable(&key, opts)?;
            let expiry = match opts.ttl_ms {
                Some(ms) => Expiry::In(ms),
                None => Expiry::Clear,
            };
            self.set(
                db,
                &key,
                &v,
                SetOptions {
                    expiry,
                    ..SetOptions::default()
                },
            )?;
            self.notify(class::STRING, "set", db, &key);
            n += 1;
        }
        Ok(n)
    }

    /// SQL.TOLIST: each row's one value column is pushed at the tail of the list named by
    /// `template`, in row order (NULLs skipped). Returns how many elements were pushed.
    ///
    /// # Errors
    /// Not exactly one value column, a placeholder names no column, or [`Error::WrongType`].
    pub fn rows_to_lists(
        &mut self,
        db: u32,
        template: &KeyTemplate,
        out: &SqlOutput,
        opts: &MorphOptions,
    ) -> Result<i64, SqlError> {
        self.rows_to_members(db, template, out, opts, "SQL.TOLIST", |w, db, key, v| {
            w.push(db, key, &[v], End::Right, false)?;
            w.notify(class::LIST, "rpush", db, key);
            Ok(1)
        })
    }

    /// SQL.TOSET: each row's one value column is added to the set named by `template` (NULLs
    /// skipped). Returns how many members were new.
    ///
    /// # Errors
    /// Not exactly one value column, a placeholder names no column, or [`Error::WrongType`].
    pub fn rows_to_sets(
        &mut self,
        db: u32,
        template: &KeyTemplate,
        out: &SqlOutput,
        opts: &MorphOptions,
    ) -> Result<i64, SqlError> {
        self.rows_to_members(db, template, out, opts, "SQL.TOSET", |w, db, key, v| {
            let added = w.sadd(db, key, &[v])?;
            if added > 0 {
                w.notify(class::SET, "sadd", db, key);
            }
            Ok(added)
        })
    }

    fn rows_to_members(
        &mut self,
        db: u32,
        template: &KeyTemplate,
        out: &SqlOutput,
        opts: &MorphOptions,
        what: &str,
        mut add: impl FnMut(&mut Self, u32, &[u8], Bytes) -> Result<i64, Error>,
    ) -> Result<i64, SqlError> {
        let (t, used) = template.bind(&out.columns)?;
        let values = value_columns(&used);
        need_columns(&values, 1, what)?;
        let mut seen = HashSet::new();
        let mut n = 0;
        for row in &out.rows {
            let key = render(&t, row);
            writable(&key, opts)?;
            self.replace_once(db, &key, opts, &mut seen)?;
            let Some(v) = value_bytes(&row[values[0]]) else {
                continue;
            };
            n += add(self, db, &key, v)?;
            self.morph_ttl(db, &key, opts)?;
        }
        Ok(n)
    }

    /// SQL.TOZSET: each row's two value columns, member then score, are added to the sorted
    /// set named by `template` (a row whose member or score is NULL is skipped; a score that is
    /// not a number is an error). Returns how many members were new.
    ///
    /// # Errors
    /// Not exactly two value columns, a score that is not a number, a placeholder names no
    /// column, or [`Error::WrongType`].
    pub fn rows_to_zsets(
        &mut self,
        db: u32,
        template: &KeyTemplate,
        out: &SqlOutput,
        opts: &MorphOptions,
    ) -> Result<i64, SqlError> {
        let (t, used) = template.bind(&out.columns)?;
        let values = value_columns(&used);
        need_columns(&values, 2, "SQL.TOZSET (member, score)")?;
        let mut seen = HashSet::new();
        let mut n = 0;
        for row in &out.rows {
            let key = render(&t, row);
            writable(&key, opts)?;
            self.replace_once(db, &key, opts, &mut seen)?;
            let (Some(member), score) = (value_bytes(&row[values[0]]), &row[values[1]]) else {
                continue;
            };
            let score = match score {
                SqlValue::Null => continue,
                SqlValue::Integer(i) => *i as f64,
                SqlValue::Real(f) => *f,
                SqlValue::Text(b) | SqlValue::Blob(b) => std::str::from_utf8(b)
                    .ok()
                    .and_then(|s| s.trim().parse::<f64>().ok())
                    .filter(|f| !f.is_nan())
                    .ok_or_else(|| {
                        SqlError::Sql(format!(
                            "score '{}' is not a number",
                            String::from_utf8_lossy(b)
                        ))
                    })?,
            };
            if score.is_nan() {
                return Err(SqlError::Sql("score is not a number".into()));
            }
            if let crate::types::zset::ZAddOutcome::Count(added) =
                self.zadd(db, &key, ZAddOptions::default(), &[(score, member)])?
            {
                n += added;
            }
            self.notify(class::ZSET, "zadd", db, &key);
            self.morph_ttl(db, &key, opts)?;
        }
        Ok(n)
    }
}

/// Hashes with their fields: (key, [(field, value)]).
pub type Hashes = Vec<(Bytes, Vec<(Bytes, Bytes)>)>;

impl Reader<'_> {
    /// The hashes of `db` whose keys match the glob `pattern` and that `access` may read, with
    /// their fields, by key. Hashes it may not read are left out, as the `redis_*` views leave
    /// them out: SQL.FROMHASH is a query over `redis_hashes` by key pattern, and sees what a
    /// query would (refusing instead would tell the caller that a key it may not read exists).
    ///
    /// # Errors
    /// Storage errors.
    pub fn hashes_matching(
        &self,
        db: u32,
        pattern: &[u8],
        access: &KeyAccess,
    ) -> Result<Hashes, Error> {
        let mut out = Vec::new();
        let mut keys = self.keys(db, pattern)?;
        keys.retain(|k| access.may_read(k));
        keys.sort();
        for k in keys {
            match self.hgetall(db, &k) {
                Ok(Some(pairs)) => out.push((k, pairs)),
                Ok(None) | Err(Error::WrongType) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }
}

/// The SQL type a set of field values fits: INTEGER if every value is an integer, REAL if every
/// value is a number, TEXT otherwise.
pub fn infer_type<'a>(values: impl Iterator<Item = &'a [u8]>) -> &'static str {
    let mut ty = "INTEGER";
    for v in values {
        let Ok(s) = std::str::from_utf8(v) else {
            return "TEXT";
        };
        if ty == "INTEGER" && crate::types::strings::parse_i64(v).is_some() {
            continue;
        }
        if s.parse::<f64>().is_ok_and(|f| f.is_finite()) && !s.trim().is_empty() && s.trim() == s {
            ty = "REAL";
            continue;
        }
        return "TEXT";
    }
    ty
}

fn typed(v: &Bytes, ty: &str) -> SqlValue {
    let s = std::str::from_utf8(v).unwrap_or("");
    match ty {
        "INTEGER" => s
            .parse::<i64>()
            .map_or_else(|_| SqlValue::Text(v.clone()), SqlValue::Integer),
        "REAL" => s
            .parse::<f64>()
            .map_or_else(|_| SqlValue::Text(v.clone()), SqlValue::Real),
        _ => SqlValue::Text(v.clone()),
    }
}

/// The rows SQL.FROMHASH / SQL.FROMSTREAM write, whatever the database: the fields as
/// columns (first-seen order) with the SQL type their values fit, and per row the key then
/// one value per field (NULL where the row lacks it).
pub struct KeyedRows {
    /// The key column.
    pub key_col: String,
    /// The field columns.
    pub fields: Vec<String>,
    /// Their inferred types: `INTEGER`, `REAL` or `TEXT`.
    pub types: Vec<&'static str>,
    /// The rows' values: the key, then each field's.
    pub rows: Vec<Vec<SqlValue>>,
}

impl KeyedRows {
    /// The rows of `hashes` (key, fields) keyed by `key_col`; `what` names a row's source in
    /// errors ("a hash").
    ///
    /// # Errors
    /// A field named like the key column, or a field name that is not UTF-8.
    pub fn plan(
        key_col: &str,
        what: &str,
        hashes: &[(Bytes, Vec<(Bytes, Bytes)>)],
    ) -> Result<KeyedRows, SqlError> {
        // The fields, in first-seen order, with their inferred types.
        let mut fields: Vec<String> = Vec::new();
        for (_, pairs) in hashes {
            for (f, _) in pairs {
                let name = std::str::from_utf8(f)
                    .map_err(|_| SqlError::Sql("a field name is not valid UTF-8".into()))?;
                if name.eq_ignore_ascii_case(key_col) {
                    return Err(SqlError::Sql(format!(
                        "{what} has a field named '{key_col}', which is the table's key column"
                    )));
                }
                if !fields.iter().any(|x| x.eq_ignore_ascii_case(name)) {
                    fields.push(name.to_string());
                }
            }
        }
        let types: Vec<&'static str> = fields
            .iter()
            .map(|f| {
                infer_type(hashes.iter().flat_map(|(_, pairs)| {
                    pairs
                        .iter()
                        .filter(|(k, _)| k.as_ref().eq_ignore_ascii_case(f.as_bytes()))
                        .map(|(_, v)| v.as_ref())
                }))
            })
            .collect();
        let rows = hashes
            .iter()
            .map(|(key, pairs)| {
                let mut values = vec![SqlValue::Text(key.clone())];
                for (f, t) in fields.iter().zip(&types) {
                    values.push(
                        pairs
                            .iter()
                            .find(|(k, _)| k.as_ref().eq_ignore_ascii_case(f.as_bytes()))
                            .map_or(SqlValue::Null, |(_, v)| typed(v, t)),
                    );
                }
                values
            })
            .collect();
        Ok(KeyedRows {
            key_col: key_col.to_string(),
            fields,
            types,
            rows,
        })
    }

    /// The upsert of one row into `table` by the key column, with `param(i)` naming the i-th
    /// parameter (from 1).
    pub fn upsert(&self, table: &str, param: impl Fn(usize) -> String) -> String {
        let mut cols = vec![quote(&self.key_col)];
        cols.extend(self.fields.iter().map(|f| quote(f)));
        let updates = if self.fields.is_empty() {
            "NOTHING".to_string()
        } else {
            format!(
                "UPDATE SET {}",
                self.fields
                    .iter()
                    .map(|f| format!("{0} = excluded.{0}", quote(f)))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        format!(
            "INSERT INTO {} ({}) VALUES ({}) ON CONFLICT ({}) DO {updates}",
            quote(table),
            cols.join(", "),
            (1..=cols.len()).map(param).collect::<Vec<_>>().join(", "),
            quote(&self.key_col)
        )
    }
}

/// A stream's entries as SQL.FROMSTREAM's rows: (id as `ms-seq`, field-value pairs).
pub fn entry_rows(entries: &[crate::StreamEntry]) -> Hashes {
    entries
        .iter()
        .map(|e| {
            let pairs = e
                .fields
                .chunks_exact(2)
                .map(|p| (p[0].clone(), p[1].clone()))
                .collect();
            (Bytes::from(e.id.to_string()), pairs)
        })
        .collect()
}

/// A name quoted as an SQL identifier.
pub fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// What SQL.FROMHASH did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FromHashReport {
    /// Rows inserted or updated (one per hash).
    pub rows: u64,
    /// Whether the table was created.
    pub created: bool,
    /// Columns added to an existing table.
    pub added_columns: Vec<String>,
}

impl SqlConn<'_> {
    /// SQL.FROMHASH: each hash becomes a row of `table`: a `key` column (the primary key) and one
    /// column per field. A missing table is created with column types inferred from the values
    /// (INTEGER, REAL or TEXT); an existing one gains any missing columns, and rows are upserted
    /// by key (a field the hash lacks is NULL in its row).
    ///
    /// # Errors
    /// A field named `key`, a field name that is not UTF-8, an existing table without a `key`
    /// column, the sandbox (internal and reserved names), or SQLite's error.
    pub fn upsert_hashes(
        &mut self,
        table: &str,
        hashes: &[(Bytes, Vec<(Bytes, Bytes)>)],
        limits: &SqlLimits,
    ) -> Result<FromHashReport, SqlError> {
        self.upsert_keyed(table, "key", "a hash", hashes, limits)
    }

    /// SQL.FROMSTREAM: each entry of a stream becomes a row of `table`, as
    /// [`SqlConn::upsert_hashes`] writes hashes, keyed by an `id` column (the entry's id,
    /// `ms-seq`) instead of `key`. A field an entry repeats gives its row the first value.
    ///
    /// # Errors
    /// As [`SqlConn::upsert_hashes`], for a field named `id`.
    pub fn upsert_stream(
        &mut self,
        table: &str,
        entries: &[crate::StreamEntry],
        limits: &SqlLimits,
    ) -> Result<FromHashReport, SqlError> {
        self.upsert_keyed(table, "id", "an entry", &entry_rows(entries), limits)
    }

    /// Upserts `rows` (key, fields) into `table` by its `key_col` column (see
    /// [`SqlConn::upsert_hashes`]); `what` names a row's source in errors ("a hash").
    fn upsert_keyed(
        &mut self,
        table: &str,
        key_col: &str,
        what: &str,
        hashes: &[(Bytes, Vec<(Bytes, Bytes)>)],
        limits: &SqlLimits,
    ) -> Result<FromHashReport, SqlError> {
        if !self.writable {
            return Err(SqlError::NotReadOnly);
        }
        let plan = KeyedRows::plan(key_col, what, hashes)?;
        let (fields, types) = (&plan.fields, &plan.types);
        // Triggers on the table run with the caller's view of the keyspace.
        let _keys = self.access.scope();
        let mut report = FromHashReport::default();
        let existing: Vec<String> = if sandbox::is_reserved(table) {
            Vec::new()
        } else {
            let mut st = crate::backend::sqlite::stmt::cached(
                self.conn,
                "SELECT name FROM pragma_table_info(?1)",
            )
            .map_err(super::internal)?;
            let rows = st
                .query_map([table], |r| r.get(0))
                .map_err(super::internal)?;
            rows.collect::<rusqlite::Result<Vec<String>>>()
                .map_err(super::internal)?
        };
        let run = |sql: &str, params: Params| -> Result<SqlOutput, SqlError> {
            execute(&self.lent(), self.now, sql, &params, limits, false)
        };
        if existing.is_empty() {
            let mut cols = vec![format!("{} TEXT PRIMARY KEY", quote(key_col))];
            cols.extend(
                fields
                    .iter()
                    .zip(types)
                    .map(|(f, t)| format!("{} {t}", quote(f))),
            );
            run(
                &format!("CREATE TABLE {} ({})", quote(table), cols.join(", ")),
                Params::None,
            )?;
            report.created = true;
        } else {
            if !existing.iter().any(|c| c.eq_ignore_ascii_case(key_col)) {
                return Err(SqlError::Sql(format!(
                    "table {table} has no '{key_col}' column to upsert by"
                )));
            }
            for (f, t) in fields.iter().zip(types) {
                if !existing.iter().any(|c| c.eq_ignore_ascii_case(f)) {
                    run(
                        &format!("ALTER TABLE {} ADD COLUMN {} {t}", quote(table), quote(f)),
                        Params::None,
                    )?;
                    report.added_columns.push(f.clone());
                }
            }
        }
        let sql = plan.upsert(table, |_| "?".to_string());
        for values in plan.rows {
            run(&sql, Params::Positional(values))?;
            report.rows += 1;
        }
        self.check_transaction();
        Ok(report)
    }
}

impl crate::backend::sqlite::db::Db {
    /// Runs the read-only `sql` and writes its rows, in one transaction, as `kind` (hashes,
    /// strings, list elements, set or sorted-set members) under keys made from `template` in
    /// this handle's logical database (see [`Writer::rows_to_hashes`] and its siblings).
    /// Returns what that method counts.
    ///
    /// ```
    /// use relis::{Db, KeyTemplate, MorphOptions};
    /// use relis::sql::Morph;
    /// let db = Db::open_in_memory()?;
    /// db.sql_exec("CREATE TABLE u (id INTEGER, name TEXT); INSERT INTO u VALUES (1, 'ann')", ())?;
    /// let n = db.sql_to(Morph::Hash, "user:{id}", "SELECT id, name FROM u", (), MorphOptions::default())?;
    /// assert_eq!(n, 1);
    /// assert_eq!(db.hget("user:1", "name").unwrap().as_deref(), Some(&b"ann"[..]));
    /// # Ok::<(), relis::SqlError>(())
    /// ```
    ///
    /// # Errors
    /// The query's error or the write's; nothing is kept then.
    pub fn sql_to(
        &self,
        kind: Morph,
        template: &str,
        sql: &str,
        params: impl Into<Params>,
        opts: MorphOptions,
    ) -> Result<i64, SqlError> {
        let template = KeyTemplate::parse(template.as_bytes());
        let (sql, params, db) = (sql.to_string(), params.into(), self.index());
        self.sql_write_with(move |w| {
            w.sql_morph(
                kind,
                db,
                &template,
                &sql,
                params,
                &opts,
                &SqlLimits::default(),
            )
        })
    }

    /// Turns the hashes whose keys match `pattern` into rows of `table` (created if missing,
    /// upserted by key otherwise; see [`SqlConn::upsert_hashes`]), in one transaction.
    ///
    /// # Errors
    /// As [`SqlConn::upsert_hashes`] says; nothing is kept then.
    pub fn sql_from_hashes(&self, table: &str, pattern: &str) -> Result<FromHashReport, SqlError> {
        let (table, pattern, db) = (table.to_string(), pattern.to_string(), self.index());
        self.sql_write_with(move |w| {
            let hashes = w.hashes_matching(db, pattern.as_bytes(), &KeyAccess::all())?;
            w.sql()
                .upsert_hashes(&table, &hashes, &SqlLimits::default())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates() {
        let t = KeyTemplate::parse(b"user:{id}:{Name}");
        assert_eq!(t.columns().collect::<Vec<_>>(), ["id", "Name"]);
        let cols = vec!["name".to_string(), "id".to_string(), "age".to_string()];
        let (b, used) = t.bind(&cols).unwrap();
        assert_eq!(used, [true, true, false]);
        let row = [
            SqlValue::text("ann"),
            SqlValue::Integer(7),
            SqlValue::Real(1.5),
        ];
        assert_eq!(render(&b, &row), b"user:7:ann");
        assert_eq!(KeyTemplate::parse(b"plain").columns().count(), 0);
        assert_eq!(KeyTemplate::parse(b"a{b").columns().count(), 0);
        assert_eq!(KeyTemplate::parse(b"a{}b").columns().count(), 0);
        assert!(KeyTemplate::parse(b"{nope}").bind(&cols).is_err());
    }

    #[test]
    fn inference() {
        let t = |v: &[&str]| infer_type(v.iter().map(|s| s.as_bytes()));
        assert_eq!(t(&["1", "-2"]), "INTEGER");
        assert_eq!(t(&["1", "2.5"]), "REAL");
        assert_eq!(t(&["1", "x"]), "TEXT");
        assert_eq!(t(&[" 1"]), "TEXT");
        assert_eq!(t(&["inf"]), "TEXT");
        assert_eq!(t(&[]), "INTEGER");
        assert_eq!(value_bytes(&SqlValue::Real(3.0)).unwrap(), "3");
        assert_eq!(value_bytes(&SqlValue::Real(0.1)).unwrap(), "0.1");
    }
}
