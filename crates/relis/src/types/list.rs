//! The list family: pushes and pops at both ends, access by index, ranges, LINSERT, LREM,
//! LTRIM, LPOS, LMOVE and LMPOP (the blocking commands are these, retried by the server).
//!
//! Storage (`schema/0002_collections.sql`): a list's elements are rows `relis_list(kid, pos,
//! value)` at *dense* positions `head .. head+count-1`; `head` and `count` live in the key row.
//! So:
//! - a push at either end inserts one row (LPUSH at `head-1`, RPUSH at `head+count`) and a pop
//!   deletes one row; neither touches the other elements, so their cost does not grow with the
//!   list (positions drift by one per push: an `i64` will not run out);
//! - the element at index `i` is the row at `head+i`: LINDEX, LSET and LRANGE go straight
//!   through the primary key, never scanning from an end;
//! - LTRIM deletes a range at each end and moves `head`; nothing is renumbered;
//! - LINSERT and LREM, which are O(N) in Redis too, renumber the *shorter* side of the change.
//!   SQLite checks primary-key uniqueness row by row during an UPDATE, so `SET pos = pos + 1`
//!   over a range would collide with the next row; instead the rows to move are taken out a
//!   chunk at a time (`DELETE ... RETURNING`) and written back at their new positions, working
//!   from the end the rows move towards, so a new position is always free. Positions stay
//!   dense, so repeated inserts at one spot cost the same each time.
//!
//! An operation that empties a list deletes its key, as Redis does.

use crate::backend::sqlite::db::Db;
use crate::backend::sqlite::sql::list as q;
use crate::backend::sqlite::stmt::prepare;
use crate::backend::sqlite::store::{KeyMeta, KeyType, Reader, Writer};
use crate::error::{Error, Result};
use bytes::Bytes;
use rusqlite::OptionalExtension;

/// An end of a list: Redis's `LEFT` (the head, index 0) or `RIGHT` (the tail).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum End {
    /// The head.
    Left,
    /// The tail.
    Right,
}

/// Where LINSERT puts the new element: before or after the pivot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// Before the pivot (nearer the head).
    Before,
    /// After the pivot (nearer the tail).
    After,
}

/// LPOS's options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LposOptions {
    /// RANK: which match to start from (1 = the first; negative counts matches from the tail).
    /// Never 0 (the server rejects it).
    pub rank: i64,
    /// COUNT: how many matches to return (`Some(0)` = all); `None` = a single index, not a list.
    pub count: Option<i64>,
    /// MAXLEN: compare at most this many elements (0 = all).
    pub maxlen: i64,
}

impl Default for LposOptions {
    fn default() -> Self {
        LposOptions {
            rank: 1,
            count: None,
            maxlen: 0,
        }
    }
}

/// Reads a blocking command's timeout in seconds as Redis 7.0 does (`getTimeoutFromObjectOrReply`):
/// `strtold` syntax (hex and `inf` included, no spaces, no NaN), times 1000 and rounded up, in
/// C `long double`. Returns `None` when it is not a float (Redis: "timeout is not a float or out
/// of range"), otherwise the milliseconds: negative (Redis: "timeout is negative", which is also
/// what a value too large for a 64-bit count of milliseconds becomes), 0 for "wait forever".
pub fn parse_timeout_ms(arg: &[u8]) -> Option<i64> {
    extern "C" {
        fn relis_ld_timeout_ms(s: *const u8, slen: usize, ms: *mut i64) -> i32;
    }
    let mut ms = 0i64;
    // SAFETY: the pointer and length describe a live slice; `ms` is a valid out pointer.
    let rc = unsafe { relis_ld_timeout_ms(arg.as_ptr(), arg.len(), &mut ms) };
    (rc == 0).then_some(ms)
}

/// A live list's key row.
#[derive(Clone, Copy, Debug)]
struct ListRow {
    meta: KeyMeta,
    /// Position of the first element.
    head: i64,
}

impl ListRow {
    fn id(&self) -> i64 {
        self.meta.id
    }
    fn len(&self) -> i64 {
        self.meta.count
    }
    /// Position of the last element.
    fn tail(&self) -> i64 {
        self.head + self.meta.count - 1
    }
}

/// Rows moved per step when renumbering (bounds the memory a big LINSERT/LREM holds).
const CHUNK: i64 = 512;

impl Reader<'_> {
    /// The key row of `key`, expired or not, with the list head.
    fn raw_list_row(&self, db: u32, key: &[u8]) -> Result<Option<ListRow>> {
        Ok(self
            .raw_meta_head(db, key)?
            .map(|(meta, head)| ListRow { meta, head }))
    }

    /// The live list at `key`: `None` when there is none, [`Error::WrongType`] for another type.
    fn list_row(&self, db: u32, key: &[u8]) -> Result<Option<ListRow>> {
        match self.raw_list_row(db, key)? {
            Some(r) if !self.is_live(&r.meta) => Ok(None),
            Some(r) if r.meta.kind != KeyType::List => Err(Error::WrongType),
            r => Ok(r),
        }
    }

    fn element(&self, kid: i64, pos: i64) -> Result<Option<Bytes>> {
        Ok(prepare(self.conn, q::ELEMENT_AT)?
            .query_row((kid, pos), |r| r.get::<_, Vec<u8>>(0))
            .optional()?
            .map(Bytes::from))
    }

    /// LLEN: the length of the list at `key`, `None` when there is none.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn llen(&self, db: u32, key: &[u8]) -> Result<Option<i64>> {
        Ok(self.list_row(db, key)?.map(|r| r.len()))
    }

    /// LINDEX: `None` when there is no list; `Some(None)` when `index` (negative counts from
    /// the tail) is out of range.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn lindex(&self, db: u32, key: &[u8], index: i64) -> Result<Option<Option<Bytes>>> {
        let Some(row) = self.list_row(db, key)? else {
            return Ok(None);
        };
        let Some(i) = normalize(index, row.len()) else {
            return Ok(Some(None));
        };
        Ok(Some(self.element(row.id(), row.head + i)?))
    }

    /// LRANGE with Redis's index rules (negative from the tail, clamped); `None` when there is
    /// no list.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn lrange(&self, db: u32, key: &[u8], start: i64, end: i64) -> Result<Option<Vec<Bytes>>> {
        // One buffer for every value (then sliced), not an allocation per element.
        let mut buf = bytes::BytesMut::new();
        let mut ends = Vec::new();
        let found = self.lrange_each(db, key, start, end, |v| {
            buf.extend_from_slice(v);
            ends.push(buf.len());
        })?;
        let all = buf.freeze();
        let mut from = 0;
        Ok(found.map(|_| {
            ends.into_iter()
                .map(|end| {
                    let v = all.slice(from..end);
                    from = end;
                    v
                })
                .collect()
        }))
    }

    /// LRANGE without collecting: `each` gets every element of the range in order; the number
    /// of elements, `None` when there is no list. (The server encodes them as they come.)
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn lrange_each(
        &self,
        db: u32,
        key: &[u8],
        start: i64,
        end: i64,
        mut each: impl FnMut(&[u8]),
    ) -> Result<Option<usize>> {
        let Some(row) = self.list_row(db, key)? else {
            return Ok(None);
        };
        let Some((a, b)) = range(row.len(), start, end) else {
            return Ok(Some(0));
        };
        let mut st = prepare(self.conn, q::ELEMENTS_FROM)?;
        let mut rows = st.query((row.id(), row.head + a, b - a + 1))?;
        let mut n = 0;
        while let Some(r) = rows.next()? {
            each(r.get_ref(0)?.as_blob()?);
            n += 1;
        }
        Ok(Some(n))
    }

    /// LPOS: the indexes of the matches of `element` that `opts` select (at most one unless
    /// `opts.count` is given); `None` when there is no list.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn lpos(
        &self,
        db: u32,
        key: &[u8],
        element: &[u8],
        opts: LposOptions,
    ) -> Result<Option<Vec<i64>>> {
        let Some(row) = self.list_row(db, key)? else {
            return Ok(None);
        };
        // A negative rank walks from the tail. Redis negates it in a C long, so i64::MIN stays
        // negative and then matches at once (`matches >= rank`): wrapping keeps that.
        let (from_tail, rank) = if opts.rank < 0 {
            (true, opts.rank.wrapping_neg())
        } else {
            (false, opts.rank)
        };
        let n = if opts.maxlen > 0 {
            opts.maxlen.min(row.len())
        } else {
            row.len()
        };
        let (lo, hi) = if from_tail {
            (row.tail() - n + 1, row.tail())
        } else {
            (row.head, row.head + n - 1)
        };
        let mut st = prepare(
            self.conn,
            if from_tail {
                q::MATCHES_BETWEEN_DESC
            } else {
                q::MATCHES_BETWEEN
            },
        )?;
        let mut rows = st.query((row.id(), lo, hi, element))?;
        let mut out = Vec::new();
        let mut matches: i64 = 0;
        while let Some(r) = rows.next()? {
            let pos: i64 = r.get(0)?;
            matches += 1;
            if matches >= rank {
                out.push(pos - row.head);
                match opts.count {
                    None => break,
                    Some(c) if c != 0 && matches.wrapping_sub(rank).wrapping_add(1) >= c => break,
                    _ => {}
                }
            }
        }
        Ok(Some(out))
    }
}

/// Redis's index normalisation for one element: negative counts from the tail.
fn normalize(index: i64, len: i64) -> Option<i64> {
    let i = if index < 0 { len + index } else { index };
    (0..len).contains(&i).then_some(i)
}

/// Redis's LRANGE/LTRIM range arithmetic: the inclusive index range, or `None` when empty.
fn range(len: i64, start: i64, end: i64) -> Option<(i64, i64)> {
    let mut start = if start < 0 { len + start } else { start };
    let mut end = if end < 0 { len + end } else { end };
    if start < 0 {
        start = 0;
    }
    if start > end || start >= len {
        return None;
    }
    if end >= len {
        end = len - 1;
    }
    Some((start, end))
}

impl Writer<'_> {
    /// The live list at `key` for a write: an expired key is deleted first (so a write starts
    /// from empty); [`Error::WrongType`] for another type.
    fn list_row_for_write(&mut self, db: u32, key: &[u8]) -> Result<Option<ListRow>> {
        match self.raw_list_row(db, key)? {
            Some(r) if !self.is_live(&r.meta) => {
                self.delete_expired(db, key, &r.meta)?;
                Ok(None)
            }
            Some(r) if r.meta.kind != KeyType::List => Err(Error::WrongType),
            r => Ok(r),
        }
    }

    /// Writes the list's new head and length (and version and mtime), kept pending
    /// (`Writer::save_row_later`: a run of pushes and pops on one list rewrites its key row
    /// once); deletes the key when the list is empty (its element rows must already be gone).
    /// `meta`: the list's key row as the write read it.
    fn set_list_shape(
        &mut self,
        db: u32,
        key: &[u8],
        meta: &KeyMeta,
        head: i64,
        count: i64,
    ) -> Result<()> {
        if count == 0 {
            self.delete_key_row(db, key, meta.expire_at.is_some())?;
            return Ok(());
        }
        self.save_row_later(db, key, meta, count, head)?;
        Ok(())
    }

    /// A new list key with `count` elements starting at `head` (the caller inserts them).
    fn create_list(&mut self, db: u32, key: &[u8], head: i64, count: i64) -> Result<i64> {
        let id = self.next_version();
        prepare(self.conn, q::KEY_INSERT)?.execute((db, key, id, count, self.now, head))?;
        self.count_new_key(db, None);
        self.note_new(db, key);
        Ok(id)
    }

    fn insert_element(&mut self, kid: i64, pos: i64, value: &[u8]) -> Result<()> {
        prepare(self.conn, q::INSERT_ELEMENT)?.execute((kid, pos, value))?;
        Ok(())
    }

    /// Deletes the elements at positions `from..=to` and returns them in position order.
    /// (Read, then deleted: a `DELETE ... RETURNING` makes SQLite build a temporary B-tree for
    /// the returned rows on every call, which cost more than the second seek.)
    fn take_elements(&mut self, kid: i64, from: i64, to: i64) -> Result<Vec<(i64, Bytes)>> {
        let mut out = Vec::new();
        if from > to {
            return Ok(out);
        }
        {
            let mut st = prepare(self.conn, q::ELEMENTS_FROM)?;
            let mut rows = st.query((kid, from, to - from + 1))?;
            while let Some(r) = rows.next()? {
                let pos = from + out.len() as i64;
                out.push((pos, Bytes::copy_from_slice(r.get_ref(0)?.as_blob()?)));
            }
        }
        if !out.is_empty() {
            prepare(self.conn, q::DELETE_BETWEEN)?.execute((kid, from, to))?;
        }
        Ok(out)
    }

    /// Moves the rows at `lo..=hi` towards the head so that the kept ones (those not in `drop`,
    /// sorted) sit densely from `dest` (`dest <= lo`); dropped ones are deleted. Works head
    /// first, a chunk at a time: every position written is below the rows not yet moved.
    fn compact_towards_head(
        &mut self,
        kid: i64,
        lo: i64,
        hi: i64,
        drop: &[i64],
        dest: i64,
    ) -> Result<()> {
        let mut w = dest;
        let mut cur = lo;
        let mut d = drop.iter().peekable();
        while cur <= hi {
            let top = hi.min(cur + CHUNK - 1);
            for (pos, value) in self.take_elements(kid, cur, top)? {
                while d.next_if(|&&x| x < pos).is_some() {}
                if d.next_if_eq(&&pos).is_some() {
                    continue;
                }
                self.insert_element(kid, w, &value)?;
                w += 1;
            }
            cur = top + 1;
        }
        Ok(())
    }

    /// The mirror of [`Writer::compact_towards_head`]: kept rows of `lo..=hi` end densely at
    /// `dest` (`dest >= hi`), working tail first.
    fn compact_towards_tail(
        &mut self,
        kid: i64,
        lo: i64,
        hi: i64,
        drop: &[i64],
        dest: i64,
    ) -> Result<()> {
        let mut w = dest;
        let mut cur = hi;
        let mut d = drop.iter().rev().peekable();
        while cur >= lo {
            let bottom = lo.max(cur - CHUNK + 1);
            for (pos, value) in self.take_elements(kid, bottom, cur)?.into_iter().rev() {
                while d.next_if(|&&x| x > pos).is_some() {}
                if d.next_if_eq(&&pos).is_some() {
                    continue;
                }
                self.insert_element(kid, w, &value)?;
                w -= 1;
            }
            cur = bottom - 1;
        }
        Ok(())
    }

    /// LPUSH / RPUSH (`only_existing`: LPUSHX / RPUSHX): pushes `values` one after the other at
    /// `end` and returns the new length (0 when `only_existing` and there is no list).
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn push(
        &mut self,
        db: u32,
        key: &[u8],
        values: &[Bytes],
        end: End,
        only_existing: bool,
    ) -> Result<i64> {
        let n = values.len() as i64;
        let (kid, head, count) = match self.list_row_for_write(db, key)? {
            Some(row) => {
                let head = if end == End::Left {
                    row.head - n
                } else {
                    row.head
                };
                self.set_list_shape(db, key, &row.meta, head, row.len() + n)?;
                (row.id(), row.head, row.len())
            }
            None if only_existing || n == 0 => return Ok(0),
            None => {
                let head = if end == End::Left { -n } else { 0 };
                (self.create_list(db, key, head, n)?, 0, 0)
            }
        };
        for (i, v) in values.iter().enumerate() {
            let pos = match end {
                End::Left => head - 1 - i as i64,
                End::Right => head + count + i as i64,
            };
            self.insert_element(kid, pos, v)?;
        }
        Ok(count + n)
    }

    /// LPOP / RPOP: removes up to `count` elements from `end` and returns them in pop order;
    /// `None` when there is no list.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn pop(
        &mut self,
        db: u32,
        key: &[u8],
        end: End,
        count: usize,
    ) -> Result<Option<Vec<Bytes>>> {
        let Some(row) = self.list_row_for_write(db, key)? else {
            return Ok(None);
        };
        Ok(Some(self.pop_row(db, key, &row, end, count)?))
    }

    fn pop_row(
        &mut self,
        db: u32,
        key: &[u8],
        row: &ListRow,
        end: End,
        count: usize,
    ) -> Result<Vec<Bytes>> {
        let n = (count as i64).min(row.len());
        if n == 0 {
            return Ok(Vec::new());
        }
        let (from, to, head) = match end {
            End::Left => (row.head, row.head + n - 1, row.head + n),
            End::Right => (row.tail() - n + 1, row.tail(), row.head),
        };
        let mut taken: Vec<Bytes> = self
            .take_elements(row.id(), from, to)?
            .into_iter()
            .map(|(_, v)| v)
            .collect();
        if end == End::Right {
            taken.reverse();
        }
        self.set_list_shape(db, key, &row.meta, head, row.len() - n)?;
        Ok(taken)
    }

    /// LSET: replaces the element at `index` (negative counts from the tail). Returns `false`
    /// when the index is out of range (Redis: "index out of range").
    ///
    /// # Errors
    /// [`Error::NoSuchKey`] when there is no list, [`Error::WrongType`] for another type.
    pub fn lset(&mut self, db: u32, key: &[u8], index: i64, value: &[u8]) -> Result<bool> {
        let row = self.list_row_for_write(db, key)?.ok_or(Error::NoSuchKey)?;
        let Some(i) = normalize(index, row.len()) else {
            return Ok(false);
        };
        prepare(self.conn, q::SET_ELEMENT)?.execute((row.id(), row.head + i, value))?;
        self.set_list_shape(db, key, &row.meta, row.head, row.len())?;
        Ok(true)
    }

    /// LINSERT: inserts `value` before or after the first element equal to `pivot`. Returns the
    /// new length, 0 when there is no list, -1 when the pivot is not found.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn linsert(
        &mut self,
        db: u32,
        key: &[u8],
        side: Side,
        pivot: &[u8],
        value: &[u8],
    ) -> Result<i64> {
        let Some(row) = self.list_row_for_write(db, key)? else {
            return Ok(0);
        };
        let found = prepare(self.conn, q::FIRST_MATCH)?
            .query_row((row.id(), pivot), |r| r.get::<_, i64>(0))
            .optional()?;
        let Some(pivot_pos) = found else {
            return Ok(-1);
        };
        // The new element's index; the elements from there on shift right, or those before it
        // shift left, whichever are fewer.
        let at = pivot_pos - row.head + i64::from(side == Side::After);
        let head = if at <= row.len() - at {
            if at > 0 {
                self.compact_towards_head(
                    row.id(),
                    row.head,
                    row.head + at - 1,
                    &[],
                    row.head - 1,
                )?;
            }
            self.insert_element(row.id(), row.head + at - 1, value)?;
            row.head - 1
        } else {
            self.compact_towards_tail(row.id(), row.head + at, row.tail(), &[], row.tail() + 1)?;
            self.insert_element(row.id(), row.head + at, value)?;
            row.head
        };
        self.set_list_shape(db, key, &row.meta, head, row.len() + 1)?;
        Ok(row.len() + 1)
    }

    /// LREM: removes the first `count` elements equal to `value` (from the tail when `count` is
    /// negative; all of them when 0) and returns how many it removed.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn lrem(&mut self, db: u32, key: &[u8], count: i64, value: &[u8]) -> Result<i64> {
        let Some(row) = self.list_row_for_write(db, key)? else {
            return Ok(0);
        };
        let limit = if count == 0 {
            -1
        } else {
            count.unsigned_abs().min(i64::MAX as u64) as i64
        };
        let mut matched: Vec<i64> = {
            let mut st = prepare(
                self.conn,
                if count < 0 {
                    q::MATCHES_DESC
                } else {
                    q::MATCHES
                },
            )?;
            let rows = st.query_map((row.id(), value, limit), |r| r.get::<_, i64>(0))?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        let k = matched.len() as i64;
        if k == 0 {
            return Ok(0);
        }
        if k == row.len() {
            self.delete_key(db, key, &row.meta)?;
            return Ok(k);
        }
        matched.sort_unstable();
        let (first, last) = (matched[0], matched[matched.len() - 1]);
        // Close the gaps from whichever side moves fewer rows.
        let move_tail_side = row.tail() - first + 1 - k;
        let move_head_side = last - row.head + 1 - k;
        let head = if move_tail_side <= move_head_side {
            self.compact_towards_head(row.id(), first, row.tail(), &matched, first)?;
            row.head
        } else {
            self.compact_towards_tail(row.id(), row.head, last, &matched, last)?;
            row.head + k
        };
        self.set_list_shape(db, key, &row.meta, head, row.len() - k)?;
        Ok(k)
    }

    /// LTRIM: keeps only the elements in the index range `start..=end` (Redis's rules); an
    /// empty range deletes the key.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn ltrim(&mut self, db: u32, key: &[u8], start: i64, end: i64) -> Result<()> {
        let Some(row) = self.list_row_for_write(db, key)? else {
            return Ok(());
        };
        let Some((a, b)) = range(row.len(), start, end) else {
            return self.delete_key(db, key, &row.meta);
        };
        let mut st = prepare(self.conn, q::DELETE_BETWEEN)?;
        if a > 0 {
            st.execute((row.id(), row.head, row.head + a - 1))?;
        }
        if b < row.len() - 1 {
            st.execute((row.id(), row.head + b + 1, row.tail()))?;
        }
        drop(st);
        // Redis signals the key as modified even when nothing was trimmed.
        self.set_list_shape(db, key, &row.meta, row.head + a, b - a + 1)?;
        Ok(())
    }

    /// LMOVE (and RPOPLPUSH = LMOVE RIGHT LEFT): pops from `from` of `src` and pushes to `to`
    /// of `dst`, returning the element; `None` when `src` holds no list. `src` and `dst` may be
    /// the same list (a rotation; the key and its expiry stay).
    ///
    /// # Errors
    /// [`Error::WrongType`] if either key holds another type (checked before anything moves).
    pub fn lmove(
        &mut self,
        db: u32,
        src: &[u8],
        dst: &[u8],
        from: End,
        to: End,
    ) -> Result<Option<Bytes>> {
        let Some(s) = self.list_row_for_write(db, src)? else {
            return Ok(None);
        };
        if src == dst {
            let pos = if from == End::Left { s.head } else { s.tail() };
            let Some((_, value)) = self.take_elements(s.id(), pos, pos)?.pop() else {
                return Err(Error::Storage("list element missing".into()));
            };
            let (head, tail) = match from {
                End::Left => (s.head + 1, s.tail()),
                End::Right => (s.head, s.tail() - 1),
            };
            let (new_pos, head) = match to {
                End::Left => (head - 1, head - 1),
                End::Right => (tail + 1, head),
            };
            self.insert_element(s.id(), new_pos, &value)?;
            self.set_list_shape(db, src, &s.meta, head, s.len())?;
            return Ok(Some(value));
        }
        let d = self.list_row_for_write(db, dst)?;
        let Some(value) = self.pop_row(db, src, &s, from, 1)?.pop() else {
            return Ok(None);
        };
        match d {
            Some(d) => {
                let (pos, head) = match to {
                    End::Left => (d.head - 1, d.head - 1),
                    End::Right => (d.tail() + 1, d.head),
                };
                self.insert_element(d.id(), pos, &value)?;
                self.set_list_shape(db, dst, &d.meta, head, d.len() + 1)?;
            }
            None => {
                let kid = self.create_list(db, dst, 0, 1)?;
                self.insert_element(kid, 0, &value)?;
            }
        }
        Ok(Some(value))
    }

    /// LMPOP (and the first step of BLPOP/BRPOP/BLMPOP): pops up to `count` elements from `end`
    /// of the first of `keys` that holds a non-empty list; returns that key and the elements.
    /// Keys are tried in order: a missing key is skipped, a key of another type is an error.
    ///
    /// # Errors
    /// [`Error::WrongType`] for a key of another type met before a list.
    pub fn lmpop(
        &mut self,
        db: u32,
        keys: &[Bytes],
        end: End,
        count: usize,
    ) -> Result<Option<(Bytes, Vec<Bytes>)>> {
        self.lmpop_with(db, keys, end, count, false)
    }

    /// [`Writer::lmpop`], optionally passing over keys of another type instead of failing (a
    /// blocked client being served: Redis serves it from the key that became ready, whatever
    /// its other keys hold).
    ///
    /// # Errors
    /// [`Error::WrongType`] for a key of another type met before a list, unless skipped.
    pub fn lmpop_with(
        &mut self,
        db: u32,
        keys: &[Bytes],
        end: End,
        count: usize,
        skip_other_types: bool,
    ) -> Result<Option<(Bytes, Vec<Bytes>)>> {
        for key in keys {
            let row = match self.list_row_for_write(db, key) {
                Ok(Some(row)) => row,
                Ok(None) => continue,
                Err(Error::WrongType) if skip_other_types => continue,
                Err(e) => return Err(e),
            };
            let popped = self.pop_row(db, key, &row, end, count)?;
            return Ok(Some((key.clone(), popped)));
        }
        Ok(None)
    }
}

fn bytes_of<K: AsRef<[u8]>>(values: &[K]) -> Vec<Bytes> {
    values
        .iter()
        .map(|v| Bytes::copy_from_slice(v.as_ref()))
        .collect()
}

impl Db {
    /// LPUSH: pushes `values` at the head, one after the other; returns the new length.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn lpush<V: AsRef<[u8]>>(&self, key: impl AsRef<[u8]>, values: &[V]) -> Result<i64> {
        let (db, key, values) = (self.index(), key.as_ref().to_vec(), bytes_of(values));
        self.write(move |w| w.push(db, &key, &values, End::Left, false))
    }

    /// RPUSH: pushes `values` at the tail; returns the new length.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn rpush<V: AsRef<[u8]>>(&self, key: impl AsRef<[u8]>, values: &[V]) -> Result<i64> {
        let (db, key, values) = (self.index(), key.as_ref().to_vec(), bytes_of(values));
        self.write(move |w| w.push(db, &key, &values, End::Right, false))
    }

    /// LPUSHX / RPUSHX: pushes at `end` only if the list exists; returns the new length (0 when
    /// it does not).
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn pushx<V: AsRef<[u8]>>(
        &self,
        key: impl AsRef<[u8]>,
        end: End,
        values: &[V],
    ) -> Result<i64> {
        let (db, key, values) = (self.index(), key.as_ref().to_vec(), bytes_of(values));
        self.write(move |w| w.push(db, &key, &values, end, true))
    }

    /// LPOP / RPOP of up to `count` elements from `end` (empty when there is no list).
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn pop(&self, key: impl AsRef<[u8]>, end: End, count: usize) -> Result<Vec<Bytes>> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.write(move |w| Ok(w.pop(db, &key, end, count)?.unwrap_or_default()))
    }

    /// LPOP of one element.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn lpop(&self, key: impl AsRef<[u8]>) -> Result<Option<Bytes>> {
        Ok(self.pop(key, End::Left, 1)?.pop())
    }

    /// RPOP of one element.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn rpop(&self, key: impl AsRef<[u8]>) -> Result<Option<Bytes>> {
        Ok(self.pop(key, End::Right, 1)?.pop())
    }

    /// LLEN (0 when there is no list).
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn llen(&self, key: impl AsRef<[u8]>) -> Result<i64> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.read(move |r| Ok(r.llen(db, &key)?.unwrap_or(0)))
    }

    /// LINDEX.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn lindex(&self, key: impl AsRef<[u8]>, index: i64) -> Result<Option<Bytes>> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.read(move |r| Ok(r.lindex(db, &key, index)?.flatten()))
    }

    /// LRANGE.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn lrange(&self, key: impl AsRef<[u8]>, start: i64, end: i64) -> Result<Vec<Bytes>> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.read(move |r| Ok(r.lrange(db, &key, start, end)?.unwrap_or_default()))
    }

    /// LSET: `false` when the index is out of range.
    ///
    /// # Errors
    /// [`Error::NoSuchKey`] when there is no list, [`Error::WrongType`] for another type.
    pub fn lset(&self, key: impl AsRef<[u8]>, index: i64, value: impl AsRef<[u8]>) -> Result<bool> {
        let (db, key, value) = (self.index(), key.as_ref().to_vec(), value.as_ref().to_vec());
        self.write(move |w| w.lset(db, &key, index, &value))
    }

    /// LINSERT: the new length, 0 when there is no list, -1 when the pivot is not found.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn linsert(
        &self,
        key: impl AsRef<[u8]>,
        side: Side,
        pivot: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> Result<i64> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        let (pivot, value) = (pivot.as_ref().to_vec(), value.as_ref().to_vec());
        self.write(move |w| w.linsert(db, &key, side, &pivot, &value))
    }

    /// LREM: how many elements it removed.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn lrem(&self, key: impl AsRef<[u8]>, count: i64, value: impl AsRef<[u8]>) -> Result<i64> {
        let (db, key, value) = (self.index(), key.as_ref().to_vec(), value.as_ref().to_vec());
        self.write(move |w| w.lrem(db, &key, count, &value))
    }

    /// LTRIM.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn ltrim(&self, key: impl AsRef<[u8]>, start: i64, end: i64) -> Result<()> {
        let (db, key) = (self.index(), key.as_ref().to_vec());
        self.write(move |w| w.ltrim(db, &key, start, end))
    }

    /// LPOS: the matching indexes `opts` select (empty when there is no list).
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn lpos(
        &self,
        key: impl AsRef<[u8]>,
        element: impl AsRef<[u8]>,
        opts: LposOptions,
    ) -> Result<Vec<i64>> {
        let (db, key, element) = (
            self.index(),
            key.as_ref().to_vec(),
            element.as_ref().to_vec(),
        );
        self.read(move |r| Ok(r.lpos(db, &key, &element, opts)?.unwrap_or_default()))
    }

    /// LMOVE.
    ///
    /// # Errors
    /// [`Error::WrongType`] if either key holds another type.
    pub fn lmove(
        &self,
        src: impl AsRef<[u8]>,
        dst: impl AsRef<[u8]>,
        from: End,
        to: End,
    ) -> Result<Option<Bytes>> {
        let (db, src, dst) = (self.index(), src.as_ref().to_vec(), dst.as_ref().to_vec());
        self.write(move |w| w.lmove(db, &src, &dst, from, to))
    }

    /// LMPOP.
    ///
    /// # Errors
    /// [`Error::WrongType`] for a key of another type met before a list.
    pub fn lmpop<K: AsRef<[u8]>>(
        &self,
        keys: &[K],
        end: End,
        count: usize,
    ) -> Result<Option<(Bytes, Vec<Bytes>)>> {
        let (db, keys) = (self.index(), bytes_of(keys));
        self.write(move |w| w.lmpop(db, &keys, end, count))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> Db {
        Db::open_in_memory().unwrap()
    }

    fn strs(v: Vec<Bytes>) -> Vec<String> {
        v.into_iter()
            .map(|b| String::from_utf8(b.to_vec()).unwrap())
            .collect()
    }

    #[test]
    fn push_pop_both_ends() {
        let db = db();
        assert_eq!(db.rpush("l", &["a", "b"]).unwrap(), 2);
        assert_eq!(db.lpush("l", &["x", "y"]).unwrap(), 4);
        assert_eq!(strs(db.lrange("l", 0, -1).unwrap()), ["y", "x", "a", "b"]);
        assert_eq!(db.lpop("l").unwrap().as_deref(), Some(&b"y"[..]));
        assert_eq!(db.rpop("l").unwrap().as_deref(), Some(&b"b"[..]));
        assert_eq!(strs(db.pop("l", End::Right, 5).unwrap()), ["a", "x"]);
        assert_eq!(db.exists(&["l"]).unwrap(), 0, "an emptied list is deleted");
        assert_eq!(db.pushx("l", End::Left, &["z"]).unwrap(), 0);
    }

    #[test]
    fn index_and_set() {
        let db = db();
        db.rpush("l", &["a", "b", "c"]).unwrap();
        assert_eq!(db.lindex("l", -1).unwrap().as_deref(), Some(&b"c"[..]));
        assert_eq!(db.lindex("l", 3).unwrap(), None);
        assert_eq!(db.lindex("l", i64::MIN).unwrap(), None);
        assert!(db.lset("l", -3, "A").unwrap());
        assert!(!db.lset("l", 3, "A").unwrap());
        assert_eq!(db.lset("nope", 0, "A"), Err(Error::NoSuchKey));
        assert_eq!(strs(db.lrange("l", 0, -1).unwrap()), ["A", "b", "c"]);
    }

    #[test]
    fn insert_renumbers_the_shorter_side() {
        let db = db();
        db.rpush("l", &["a", "b", "c", "d", "e"]).unwrap();
        assert_eq!(db.linsert("l", Side::Before, "b", "1").unwrap(), 6);
        assert_eq!(db.linsert("l", Side::After, "d", "2").unwrap(), 7);
        assert_eq!(db.linsert("l", Side::After, "e", "3").unwrap(), 8);
        assert_eq!(db.linsert("l", Side::Before, "a", "0").unwrap(), 9);
        assert_eq!(db.linsert("l", Side::Before, "zz", "0").unwrap(), -1);
        assert_eq!(db.linsert("nope", Side::Before, "a", "0").unwrap(), 0);
        assert_eq!(
            strs(db.lrange("l", 0, -1).unwrap()),
            ["0", "a", "1", "b", "c", "d", "2", "e", "3"]
        );
    }

    #[test]
    fn rem_from_both_sides() {
        let db = db();
        db.rpush("l", &["x", "a", "x", "b", "x", "c", "x"]).unwrap();
        assert_eq!(db.lrem("l", 1, "x").unwrap(), 1);
        assert_eq!(db.lrem("l", -2, "x").unwrap(), 2);
        assert_eq!(strs(db.lrange("l", 0, -1).unwrap()), ["a", "x", "b", "c"]);
        assert_eq!(db.lrem("l", 0, "x").unwrap(), 1);
        assert_eq!(strs(db.lrange("l", 0, -1).unwrap()), ["a", "b", "c"]);
        assert_eq!(db.lindex("l", 2).unwrap().as_deref(), Some(&b"c"[..]));
        assert_eq!(db.lrem("l", 0, "a").unwrap(), 1);
        assert_eq!(db.lrem("l", 0, "b").unwrap(), 1);
        assert_eq!(db.lrem("l", 0, "c").unwrap(), 1);
        assert_eq!(db.exists(&["l"]).unwrap(), 0);
    }

    #[test]
    fn big_renumbering_crosses_chunks() {
        let db = db();
        let vals: Vec<String> = (0..2000).map(|i| format!("{}", i % 7)).collect();
        db.rpush("l", &vals).unwrap();
        // LREM of every "3" renumbers across many chunks, from both sides.
        let threes = vals.iter().filter(|v| *v == "3").count() as i64;
        assert_eq!(db.lrem("l", 0, "3").unwrap(), threes);
        let want: Vec<String> = vals.iter().filter(|v| *v != "3").cloned().collect();
        assert_eq!(strs(db.lrange("l", 0, -1).unwrap()), want);
        // LINSERT in the middle moves ~900 rows.
        let mid = want.len() / 2;
        let mut want2 = want.clone();
        // The pivot is the first "5".
        let p = want.iter().position(|v| v == "5").unwrap();
        want2.insert(p + 1, "new".into());
        assert_eq!(
            db.linsert("l", Side::After, "5", "new").unwrap(),
            want2.len() as i64
        );
        assert_eq!(strs(db.lrange("l", 0, -1).unwrap()), want2);
        let _ = mid;
        db.ltrim("l", 10, -10).unwrap();
        assert_eq!(
            strs(db.lrange("l", 0, -1).unwrap()),
            want2[10..want2.len() - 9].to_vec()
        );
    }

    #[test]
    fn lpos_options() {
        let db = db();
        db.rpush("l", &["a", "b", "c", "1", "2", "3", "c", "c"])
            .unwrap();
        let o = |rank, count, maxlen| LposOptions {
            rank,
            count,
            maxlen,
        };
        assert_eq!(db.lpos("l", "c", o(1, None, 0)).unwrap(), [2]);
        assert_eq!(db.lpos("l", "c", o(2, None, 0)).unwrap(), [6]);
        assert_eq!(db.lpos("l", "c", o(-1, None, 0)).unwrap(), [7]);
        assert_eq!(db.lpos("l", "c", o(1, Some(0), 0)).unwrap(), [2, 6, 7]);
        assert_eq!(db.lpos("l", "c", o(-1, Some(2), 0)).unwrap(), [7, 6]);
        assert_eq!(db.lpos("l", "c", o(1, Some(0), 3)).unwrap(), [2]);
        assert_eq!(db.lpos("l", "c", o(i64::MIN, None, 0)).unwrap(), [7]);
        assert!(db.lpos("l", "c", o(i64::MAX, None, 0)).unwrap().is_empty());
    }

    #[test]
    fn lmove_and_rotation() {
        let db = db();
        db.rpush("a", &["1", "2", "3"]).unwrap();
        assert_eq!(
            db.lmove("a", "b", End::Left, End::Right)
                .unwrap()
                .as_deref(),
            Some(&b"1"[..])
        );
        assert_eq!(
            db.lmove("a", "a", End::Left, End::Right)
                .unwrap()
                .as_deref(),
            Some(&b"2"[..])
        );
        assert_eq!(strs(db.lrange("a", 0, -1).unwrap()), ["3", "2"]);
        assert_eq!(
            db.lmove("a", "a", End::Right, End::Left)
                .unwrap()
                .as_deref(),
            Some(&b"2"[..])
        );
        assert_eq!(strs(db.lrange("a", 0, -1).unwrap()), ["2", "3"]);
        db.set("s", "x").unwrap();
        assert_eq!(
            db.lmove("a", "s", End::Left, End::Left),
            Err(Error::WrongType)
        );
        assert_eq!(
            strs(db.lrange("a", 0, -1).unwrap()),
            ["2", "3"],
            "nothing moved"
        );
        assert_eq!(db.lmove("none", "s", End::Left, End::Left).unwrap(), None);
        assert_eq!(
            db.lmpop(&["none", "a"], End::Right, 5).unwrap(),
            Some((Bytes::from("a"), vec![Bytes::from("3"), Bytes::from("2")]))
        );
        assert_eq!(
            db.lmpop(&["none", "s"], End::Right, 5),
            Err(Error::WrongType)
        );
    }

    #[test]
    fn timeouts_read_like_redis() {
        assert_eq!(parse_timeout_ms(b"0"), Some(0));
        assert_eq!(parse_timeout_ms(b"0.01"), Some(10));
        assert_eq!(parse_timeout_ms(b"0.0000001"), Some(1), "rounded up");
        assert_eq!(parse_timeout_ms(b"-0.0001"), Some(0));
        assert_eq!(parse_timeout_ms(b"0x10"), Some(16000));
        assert_eq!(parse_timeout_ms(b"1e-400"), Some(1));
        assert!(parse_timeout_ms(b"-1").unwrap() < 0);
        assert!(parse_timeout_ms(b"inf").unwrap() < 0);
        assert!(parse_timeout_ms(b"9.3e15").unwrap() < 0);
        assert!(parse_timeout_ms(b"9.2e15").unwrap() > 0);
        for bad in [&b"abc"[..], b"nan", b" 1", b"1 ", b"", b"0x"] {
            assert_eq!(parse_timeout_ms(bad), None, "{:?}", bad);
        }
    }
}
