//! Stream consumer groups (Redis 7.0): each group's last delivered id, its consumers and its
//! pending entries list (PEL), in the `relis_stream_group`, `relis_stream_consumer` and
//! `relis_stream_pel` tables (schema 7). No operation reads a whole PEL unless its reply needs
//! it: XACK and XPENDING's ranges go by (group, id), a consumer's list by its index.
//!
//! `entries_read` and the lag follow Redis 7.0 (`streamReplyWithRange`,
//! `streamEstimateDistanceFromFirstEverEntry`, `streamRangeHasTombstones`): counted per entry
//! delivered while no deletion lies ahead, estimated otherwise, unknown (NULL, a nil lag) when
//! Redis cannot tell.

use crate::backend::sqlite::sql::stream as q;
use crate::backend::sqlite::stmt::prepare;
use crate::backend::sqlite::store::{KeyMeta, KeyType, Reader, Writer};
use crate::error::{Error, Result};
use crate::types::stream::{dec, decode_fields, enc, StreamEntry, StreamId, StreamMeta};
use bytes::Bytes;
use rusqlite::OptionalExtension;

/// Where XGROUP CREATE / SETID put the group's last delivered id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupStart {
    /// `$`: the stream's last id.
    Last,
    /// An id.
    Id(StreamId),
}

/// What XREADGROUP reads for one stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupRead {
    /// `>`: entries never delivered to the group.
    New,
    /// An id: the consumer's own pending entries after it (its history).
    History(StreamId),
}

/// One entry XREADGROUP delivers: its id and its fields (`None` when the entry was deleted
/// since it was delivered, for a history read).
pub type Delivered = (StreamId, Option<Vec<Bytes>>);

/// XPENDING's summary: how many, the smallest and largest ids, and per consumer how many.
pub type PendingSummary = (u64, Option<(StreamId, StreamId)>, Vec<(Bytes, u64)>);

/// One row of XPENDING's extended form: id, consumer, ms since last delivery, deliveries.
pub type PendingEntry = (StreamId, Bytes, i64, u64);

/// XCLAIM's options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClaimOptions {
    /// IDLE / TIME: the last delivery time to record (unix ms); `None` = now.
    pub delivered: Option<i64>,
    /// RETRYCOUNT: the delivery count to record.
    pub retrycount: Option<i64>,
    /// FORCE: create the pending entry if the group has none for an existing entry.
    pub force: bool,
    /// JUSTID: reply ids only, and leave delivery counts alone.
    pub justid: bool,
    /// LASTID: moves the group's last delivered id up to it.
    pub lastid: Option<StreamId>,
}

/// What XAUTOCLAIM did: the id to continue from (`0-0` at the end), the claimed entries
/// (fields `None` with JUSTID) and the pending ids whose entries were gone (dropped).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AutoClaimed {
    /// Where the next call starts.
    pub next: StreamId,
    /// The claimed entries.
    pub claimed: Vec<Delivered>,
    /// Pending ids whose entries had been deleted.
    pub deleted: Vec<StreamId>,
}

/// One row of a PEL: id, consumer, last delivery, delivery count.
type PelRow = (StreamId, Vec<u8>, i64, i64);

/// Redis's `streamRangeHasTombstones(s, start, NULL)`: whether an entry was deleted at or
/// after `start` (as far as the largest deleted id tells).
fn has_tombstones_from(s: &StreamMeta, first: StreamId, start: StreamId) -> bool {
    if s.length == 0 || s.max_deleted_id == StreamId::MIN || first > s.max_deleted_id {
        return false;
    }
    start <= s.max_deleted_id
}

/// Redis's `streamEstimateDistanceFromFirstEverEntry`: the entries-read count at `id`, when
/// it can be known.
fn estimate_read(s: &StreamMeta, first: StreamId, id: StreamId) -> Option<i64> {
    let added = s.entries_added as i64;
    if s.entries_added == 0 {
        return Some(0);
    }
    if s.length == 0 && id <= s.last_id {
        return Some(added);
    }
    match id.cmp(&s.last_id) {
        std::cmp::Ordering::Equal => return Some(added),
        std::cmp::Ordering::Greater => return None,
        std::cmp::Ordering::Less => {}
    }
    if s.max_deleted_id == StreamId::MIN || s.max_deleted_id < first {
        match id.cmp(&first) {
            std::cmp::Ordering::Less => return Some(added - s.length as i64),
            std::cmp::Ordering::Equal => return Some(added - s.length as i64 + 1),
            std::cmp::Ordering::Greater => {}
        }
    }
    None
}

/// The group's entries-read after delivering `id` (Redis's `streamReplyWithRange`).
fn next_entries_read(
    s: &StreamMeta,
    first: StreamId,
    read: Option<i64>,
    id: StreamId,
) -> Option<i64> {
    match read {
        Some(n) if !has_tombstones_from(s, first, id) => Some(n + 1),
        _ if s.entries_added > 0 => estimate_read(s, first, id),
        r => r,
    }
}

/// Redis's `streamReplyWithCGLag`: how many entries the group has still to read, when known.
fn group_lag(s: &StreamMeta, first: StreamId, last: StreamId, read: Option<i64>) -> Option<i64> {
    if s.entries_added == 0 {
        return Some(0);
    }
    if let Some(n) = read.filter(|_| !has_tombstones_from(s, first, last)) {
        return Some(s.entries_added as i64 - n);
    }
    estimate_read(s, first, last).map(|n| s.entries_added as i64 - n)
}

/// XINFO GROUPS (and FULL) about one group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupInfo {
    /// Its name.
    pub name: Bytes,
    /// How many consumers.
    pub consumers: u64,
    /// How many pending entries.
    pub pending: u64,
    /// Its last delivered id.
    pub last_delivered: StreamId,
    /// Entries read, when known.
    pub entries_read: Option<i64>,
    /// Entries still to read, when known.
    pub lag: Option<i64>,
}

/// XINFO STREAM: the stream's numbers, its recorded first id, its number of groups, its
/// first and last entries.
pub type StreamInfo = (
    StreamMeta,
    StreamId,
    u64,
    Option<StreamEntry>,
    Option<StreamEntry>,
);

/// XINFO CONSUMERS about one consumer: name, pending entries, last seen (unix ms).
pub type ConsumerInfo = (Bytes, u64, i64);

impl Reader<'_> {
    fn group_stream(&self, db: u32, key: &[u8]) -> Result<Option<KeyMeta>> {
        match self.meta(db, key)? {
            Some(m) if m.kind != KeyType::Stream => Err(Error::WrongType),
            m => Ok(m),
        }
    }

    /// The group's last delivered id and entries read, if the group exists.
    fn group_row(&self, kid: i64, group: &[u8]) -> Result<Option<(StreamId, Option<i64>)>> {
        Ok(prepare(self.conn, q::GROUP_ROW)?
            .query_row((kid, group), |r| {
                Ok((
                    StreamId::new(dec(r.get(0)?), dec(r.get(1)?)),
                    r.get::<_, Option<i64>>(2)?,
                ))
            })
            .optional()?)
    }

    /// XINFO STREAM: the stream's numbers, its recorded first id (`0-0` when empty), its
    /// number of groups, and its first and last entries; `None` when there is no stream.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn xinfo_stream(&self, db: u32, key: &[u8]) -> Result<Option<StreamInfo>> {
        let Some((meta, s)) = self.stream_row(db, key)? else {
            return Ok(None);
        };
        let groups: i64 = prepare(self.conn, q::GROUP_COUNT)?.query_row([meta.id], |r| r.get(0))?;
        let first = self
            .stream_entries(meta.id, StreamId::MIN, StreamId::MAX, 1, false)?
            .pop();
        let last = self
            .stream_entries(meta.id, StreamId::MIN, StreamId::MAX, 1, true)?
            .pop();
        let first_id = first.as_ref().map(|e| e.id).unwrap_or_default();
        Ok(Some((s, first_id, groups as u64, first, last)))
    }

    /// XINFO GROUPS: every group, in name order; `None` when there is no stream.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn xinfo_groups(&self, db: u32, key: &[u8]) -> Result<Option<Vec<GroupInfo>>> {
        let Some((meta, s)) = self.stream_row(db, key)? else {
            return Ok(None);
        };
        let first = self.edge_id(meta.id, false)?.unwrap_or_default();
        let mut st = prepare(self.conn, q::GROUPS_INFO)?;
        let rows = st.query_map([meta.id], |r| {
            Ok((
                Bytes::from(r.get::<_, Vec<u8>>(0)?),
                StreamId::new(dec(r.get(1)?), dec(r.get(2)?)),
                r.get::<_, Option<i64>>(3)?,
                r.get::<_, i64>(4)? as u64,
                r.get::<_, i64>(5)? as u64,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (name, last, read, consumers, pending) = row?;
            out.push(GroupInfo {
                name,
                consumers,
                pending,
                last_delivered: last,
                entries_read: read,
                lag: group_lag(&s, first, last, read),
            });
        }
        Ok(Some(out))
    }

    /// XINFO CONSUMERS: the group's consumers in name order; `None` when there is no stream,
    /// `Some(None)` when there is no such group.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn xinfo_consumers(
        &self,
        db: u32,
        key: &[u8],
        group: &[u8],
    ) -> Result<Option<Option<Vec<ConsumerInfo>>>> {
        let Some(meta) = self.group_stream(db, key)? else {
            return Ok(None);
        };
        if self.group_row(meta.id, group)?.is_none() {
            return Ok(Some(None));
        }
        let mut st = prepare(self.conn, q::CONSUMERS_INFO)?;
        let rows = st.query_map((meta.id, group), |r| {
            Ok((
                Bytes::from(r.get::<_, Vec<u8>>(0)?),
                r.get::<_, i64>(1)? as u64,
                r.get::<_, i64>(2)?,
            ))
        })?;
        Ok(Some(Some(rows.collect::<rusqlite::Result<_>>()?)))
    }

    /// XINFO STREAM FULL's pending entries of a group (or of one consumer): id, consumer,
    /// delivery time (unix ms), delivery count; at most `count` (0 = all).
    ///
    /// # Errors
    /// Storage errors only.
    pub fn xinfo_pel(
        &self,
        db: u32,
        key: &[u8],
        group: &[u8],
        consumer: Option<&[u8]>,
        count: u64,
    ) -> Result<Vec<PendingEntry>> {
        let Some(meta) = self.group_stream(db, key)? else {
            return Ok(Vec::new());
        };
        let limit = if count == 0 {
            -1
        } else {
            i64::try_from(count).unwrap_or(i64::MAX)
        };
        let mut st = prepare(self.conn, q::PEL_PAGE)?;
        let rows = st.query_map((meta.id, group, consumer, limit), |r| {
            Ok((
                StreamId::new(dec(r.get(0)?), dec(r.get(1)?)),
                Bytes::from(r.get::<_, Vec<u8>>(2)?),
                r.get::<_, i64>(3)?,
                r.get::<_, i64>(4)? as u64,
            ))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Whether the stream at `key` has the group `group` (`false` without a stream).
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn stream_group_exists(&self, db: u32, key: &[u8], group: &[u8]) -> Result<bool> {
        let Some(meta) = self.group_stream(db, key)? else {
            return Ok(false);
        };
        Ok(self.group_row(meta.id, group)?.is_some())
    }

    /// XPENDING key group: `None` when there is no such stream or group.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn xpending_summary(
        &self,
        db: u32,
        key: &[u8],
        group: &[u8],
    ) -> Result<Option<PendingSummary>> {
        let Some(meta) = self.group_stream(db, key)? else {
            return Ok(None);
        };
        if self.group_row(meta.id, group)?.is_none() {
            return Ok(None);
        }
        let edge = |sql: &'static str| -> Result<Option<StreamId>> {
            Ok(prepare(self.conn, sql)?
                .query_row((meta.id, group), |r| {
                    Ok(StreamId::new(dec(r.get(0)?), dec(r.get(1)?)))
                })
                .optional()?)
        };
        let first = edge(q::PEL_FIRST_ID)?;
        let last = edge(q::PEL_LAST_ID)?;
        let mut st = prepare(self.conn, q::PEL_COUNT_BY_CONSUMER)?;
        let per: Vec<(Bytes, u64)> = st
            .query_map((meta.id, group), |r| {
                Ok((
                    Bytes::from(r.get::<_, Vec<u8>>(0)?),
                    r.get::<_, i64>(1)? as u64,
                ))
            })?
            .collect::<rusqlite::Result<_>>()?;
        let total = per.iter().map(|(_, n)| n).sum();
        Ok(Some((total, first.zip(last), per)))
    }

    /// XPENDING key group [IDLE min] start end count [consumer]: `None` when there is no such
    /// stream or group.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    #[allow(clippy::too_many_arguments)]
    pub fn xpending_range(
        &self,
        db: u32,
        key: &[u8],
        group: &[u8],
        min_idle: i64,
        start: StreamId,
        end: StreamId,
        count: u64,
        consumer: Option<&[u8]>,
    ) -> Result<Option<Vec<PendingEntry>>> {
        let Some(meta) = self.group_stream(db, key)? else {
            return Ok(None);
        };
        if self.group_row(meta.id, group)?.is_none() {
            return Ok(None);
        }
        if count == 0 || start > end {
            return Ok(Some(Vec::new()));
        }
        let sql = if consumer.is_some() {
            q::PEL_RANGE_OF_CONSUMER
        } else {
            q::PEL_RANGE
        };
        let limit = i64::try_from(count).unwrap_or(i64::MAX);
        let mut st = prepare(self.conn, sql)?;
        let rows = st.query_map(
            rusqlite::params![
                meta.id,
                group,
                enc(start.ms),
                enc(start.seq),
                enc(end.ms),
                enc(end.seq),
                consumer,
                self.now.saturating_sub(min_idle),
                limit
            ],
            |r| {
                Ok((
                    StreamId::new(dec(r.get(0)?), dec(r.get(1)?)),
                    Bytes::from(r.get::<_, Vec<u8>>(2)?),
                    (self.now - r.get::<_, i64>(3)?).max(0),
                    r.get::<_, i64>(4)? as u64,
                ))
            },
        )?;
        Ok(Some(rows.collect::<rusqlite::Result<_>>()?))
    }
}

impl Writer<'_> {
    /// The stream for a group command: [`Error::NoSuchKey`] when there is none.
    fn group_stream_for_write(&mut self, db: u32, key: &[u8]) -> Result<KeyMeta> {
        self.meta_for_write_of(db, key, KeyType::Stream)?
            .ok_or(Error::NoSuchKey)
    }

    fn resolve_start(&self, db: u32, key: &[u8], start: GroupStart) -> Result<StreamId> {
        Ok(match start {
            GroupStart::Id(id) => id,
            GroupStart::Last => self
                .stream_meta(db, key)?
                .map(|s| s.last_id)
                .unwrap_or_default(),
        })
    }

    /// XGROUP CREATE: returns whether the stream was created (MKSTREAM).
    ///
    /// # Errors
    /// [`Error::NoSuchKey`] without `mkstream` when there is no stream; [`Error::WrongType`];
    /// [`crate::StreamError::BusyGroup`].
    pub fn xgroup_create(
        &mut self,
        db: u32,
        key: &[u8],
        group: &[u8],
        start: GroupStart,
        mkstream: bool,
        entries_read: Option<i64>,
    ) -> Result<bool> {
        let (meta, created) = match self.meta_for_write_of(db, key, KeyType::Stream)? {
            Some(m) => (m, false),
            None if mkstream => {
                self.create_empty_stream(db, key)?;
                let m = self.meta(db, key)?.ok_or(Error::NoSuchKey)?;
                (m, true)
            }
            None => return Err(Error::NoSuchKey),
        };
        if self.group_row(meta.id, group)?.is_some() {
            return Err(Error::Stream(crate::StreamError::BusyGroup));
        }
        let last = self.resolve_start(db, key, start)?;
        prepare(self.conn, q::GROUP_INSERT)?.execute((
            meta.id,
            group,
            enc(last.ms),
            enc(last.seq),
            entries_read,
        ))?;
        self.touch_stream(db, key)?;
        Ok(created)
    }

    /// XGROUP SETID: `false` when there is no such group.
    ///
    /// # Errors
    /// [`Error::NoSuchKey`], [`Error::WrongType`].
    pub fn xgroup_setid(
        &mut self,
        db: u32,
        key: &[u8],
        group: &[u8],
        start: GroupStart,
        entries_read: Option<i64>,
    ) -> Result<bool> {
        let meta = self.group_stream_for_write(db, key)?;
        if self.group_row(meta.id, group)?.is_none() {
            return Ok(false);
        }
        let last = self.resolve_start(db, key, start)?;
        prepare(self.conn, q::GROUP_SET_ID)?.execute((
            meta.id,
            group,
            enc(last.ms),
            enc(last.seq),
            entries_read,
        ))?;
        self.touch_stream(db, key)?;
        Ok(true)
    }

    /// XGROUP DESTROY: whether the group existed.
    ///
    /// # Errors
    /// [`Error::NoSuchKey`], [`Error::WrongType`].
    pub fn xgroup_destroy(&mut self, db: u32, key: &[u8], group: &[u8]) -> Result<bool> {
        let meta = self.group_stream_for_write(db, key)?;
        let n = prepare(self.conn, q::GROUP_DELETE)?.execute((meta.id, group))?;
        if n == 0 {
            return Ok(false);
        }
        for sql in [q::CONSUMERS_DELETE_GROUP, q::PEL_DELETE_GROUP] {
            prepare(self.conn, sql)?.execute((meta.id, group))?;
        }
        self.touch_stream(db, key)?;
        // Readers blocked on the group are answered NOGROUP (Redis signals the key ready).
        self.note_ready(db, key);
        Ok(true)
    }

    /// XGROUP CREATECONSUMER: `None` when there is no such group, else whether it was created.
    ///
    /// # Errors
    /// [`Error::NoSuchKey`], [`Error::WrongType`].
    pub fn xgroup_createconsumer(
        &mut self,
        db: u32,
        key: &[u8],
        group: &[u8],
        consumer: &[u8],
    ) -> Result<Option<bool>> {
        let meta = self.group_stream_for_write(db, key)?;
        if self.group_row(meta.id, group)?.is_none() {
            return Ok(None);
        }
        let created = self.ensure_consumer(meta.id, group, consumer)?;
        if created {
            self.touch_stream(db, key)?;
        }
        Ok(Some(created))
    }

    /// XGROUP DELCONSUMER: `None` when there is no such group, else how many entries the
    /// consumer had pending (they are dropped with it).
    ///
    /// # Errors
    /// [`Error::NoSuchKey`], [`Error::WrongType`].
    pub fn xgroup_delconsumer(
        &mut self,
        db: u32,
        key: &[u8],
        group: &[u8],
        consumer: &[u8],
    ) -> Result<Option<Option<u64>>> {
        let meta = self.group_stream_for_write(db, key)?;
        if self.group_row(meta.id, group)?.is_none() {
            return Ok(None);
        }
        let existed =
            prepare(self.conn, q::CONSUMER_DELETE)?.execute((meta.id, group, consumer))?;
        if existed == 0 {
            return Ok(Some(None));
        }
        let pending =
            prepare(self.conn, q::PEL_DELETE_CONSUMER)?.execute((meta.id, group, consumer))? as u64;
        self.touch_stream(db, key)?;
        Ok(Some(Some(pending)))
    }

    /// Creates the consumer if it does not exist; returns whether it did not.
    fn ensure_consumer(&mut self, kid: i64, group: &[u8], consumer: &[u8]) -> Result<bool> {
        let n =
            prepare(self.conn, q::CONSUMER_ENSURE)?.execute((kid, group, consumer, self.now))?;
        Ok(n > 0)
    }

    /// XREADGROUP for one stream: `None` when there is no such stream or group; else whether
    /// the consumer was created, and what was delivered (for `>`, nothing new is `Some` of an
    /// empty list).
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    #[allow(clippy::too_many_arguments)]
    pub fn xreadgroup(
        &mut self,
        db: u32,
        key: &[u8],
        group: &[u8],
        consumer: &[u8],
        from: GroupRead,
        count: u64,
        noack: bool,
    ) -> Result<Option<(bool, Vec<Delivered>)>> {
        let Some((meta, s)) = self.stream_for_write(db, key)? else {
            return Ok(None);
        };
        let Some((last, entries_read)) = self.group_row(meta.id, group)? else {
            return Ok(None);
        };
        let new_entries = match from {
            GroupRead::New => {
                let entries = match last.next() {
                    Some(start) => {
                        self.stream_entries(meta.id, start, StreamId::MAX, count, false)?
                    }
                    None => Vec::new(),
                };
                // Nothing new: Redis does not serve the stream (nor create the consumer).
                if entries.is_empty() {
                    return Ok(Some((false, Vec::new())));
                }
                entries
            }
            GroupRead::History(_) => Vec::new(),
        };
        let created = self.ensure_consumer(meta.id, group, consumer)?;
        prepare(self.conn, q::CONSUMER_SEEN)?.execute((meta.id, group, consumer, self.now))?;
        let out = match from {
            GroupRead::New => {
                let entries = new_entries;
                if let Some(e) = entries.last() {
                    let first = self.edge_id(meta.id, false)?.unwrap_or_default();
                    let mut read = entries_read;
                    let mut at = last;
                    for e in &entries {
                        if e.id > at {
                            read = next_entries_read(&s, first, read, e.id);
                            at = e.id;
                        }
                    }
                    prepare(self.conn, q::GROUP_ADVANCE)?.execute((
                        meta.id,
                        group,
                        enc(e.id.ms),
                        enc(e.id.seq),
                        read,
                    ))?;
                }
                if !noack {
                    for e in &entries {
                        // An id already pending (after XGROUP SETID back) moves to this
                        // consumer with a fresh delivery, as Redis's streamPropagateXCLAIM
                        // path does.
                        prepare(self.conn, q::PEL_DELIVER)?.execute((
                            meta.id,
                            group,
                            enc(e.id.ms),
                            enc(e.id.seq),
                            consumer,
                            self.now,
                        ))?;
                    }
                }
                entries
                    .into_iter()
                    .map(|e| (e.id, Some(e.fields)))
                    .collect()
            }
            GroupRead::History(after) => {
                let Some(start) = after.next() else {
                    return Ok(Some((created, Vec::new())));
                };
                let limit = if count == 0 {
                    -1
                } else {
                    i64::try_from(count).unwrap_or(i64::MAX)
                };
                let ids: Vec<StreamId> = prepare(self.conn, q::PEL_OF_CONSUMER_FROM)?
                    .query_map(
                        (
                            meta.id,
                            group,
                            consumer,
                            enc(start.ms),
                            enc(start.seq),
                            limit,
                        ),
                        |r| Ok(StreamId::new(dec(r.get(0)?), dec(r.get(1)?))),
                    )?
                    .collect::<rusqlite::Result<_>>()?;
                let mut out = Vec::with_capacity(ids.len());
                for id in ids {
                    let fields = prepare(self.conn, q::ENTRY_FIELDS)?
                        .query_row((meta.id, enc(id.ms), enc(id.seq)), |r| {
                            r.get::<_, Vec<u8>>(0)
                        })
                        .optional()?;
                    if fields.is_some() {
                        // Redis counts a history read as a delivery of the entries still there.
                        prepare(self.conn, q::PEL_REDELIVER)?.execute((
                            meta.id,
                            group,
                            enc(id.ms),
                            enc(id.seq),
                            self.now,
                        ))?;
                    }
                    out.push((id, fields.map(|f| decode_fields(&f)).transpose()?));
                }
                out
            }
        };
        if created || !out.is_empty() {
            self.touch_stream(db, key)?;
        }
        Ok(Some((created, out)))
    }

    fn entry_fields(&self, kid: i64, id: StreamId) -> Result<Option<Vec<Bytes>>> {
        prepare(self.conn, q::ENTRY_FIELDS)?
            .query_row((kid, enc(id.ms), enc(id.seq)), |r| r.get::<_, Vec<u8>>(0))
            .optional()?
            .map(|f| decode_fields(&f))
            .transpose()
    }

    fn pel_row(&self, kid: i64, group: &[u8], id: StreamId) -> Result<Option<PelRow>> {
        Ok(prepare(self.conn, q::PEL_ROW)?
            .query_row((kid, group, enc(id.ms), enc(id.seq)), |r| {
                Ok((id, r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .optional()?)
    }

    fn drop_pending(&mut self, kid: i64, group: &[u8], id: StreamId) -> Result<usize> {
        Ok(prepare(self.conn, q::PEL_DELETE)?.execute((kid, group, enc(id.ms), enc(id.seq)))?)
    }

    /// Gives the pending entry `id` to `consumer` with this delivery time and count.
    #[allow(clippy::too_many_arguments)]
    fn hand_over(
        &mut self,
        kid: i64,
        group: &[u8],
        id: StreamId,
        consumer: &[u8],
        delivered: i64,
        count: i64,
    ) -> Result<()> {
        prepare(self.conn, q::PEL_PUT)?.execute((
            kid,
            group,
            enc(id.ms),
            enc(id.seq),
            consumer,
            delivered,
            count,
        ))?;
        Ok(())
    }

    /// XCLAIM: `None` when there is no such stream or group; else the claimed entries (fields
    /// `None` with JUSTID), as Redis's `xclaimCommand` claims them: an id whose entry is gone
    /// leaves the PEL; one not pending is skipped (or, with FORCE, made pending); one idle
    /// for less than `min_idle` ms is skipped.
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    #[allow(clippy::too_many_arguments)]
    pub fn xclaim(
        &mut self,
        db: u32,
        key: &[u8],
        group: &[u8],
        consumer: &[u8],
        min_idle: i64,
        ids: &[StreamId],
        opts: ClaimOptions,
    ) -> Result<Option<Vec<Delivered>>> {
        let Some(meta) = self.meta_for_write_of(db, key, KeyType::Stream)? else {
            return Ok(None);
        };
        let Some((last, _)) = self.group_row(meta.id, group)? else {
            return Ok(None);
        };
        let mut changed = false;
        if let Some(lastid) = opts.lastid.filter(|l| *l > last) {
            prepare(self.conn, q::GROUP_SET_LAST_ID)?.execute((
                meta.id,
                group,
                enc(lastid.ms),
                enc(lastid.seq),
            ))?;
            changed = true;
        }
        let now = self.now;
        let delivered = opts
            .delivered
            .filter(|t| (0..=now).contains(t))
            .unwrap_or(now);
        let mut out = Vec::new();
        for &id in ids {
            let Some(fields) = self.entry_fields(meta.id, id)? else {
                changed |= self.drop_pending(meta.id, group, id)? > 0;
                continue;
            };
            let (count, check_idle, last_delivery) = match self.pel_row(meta.id, group, id)? {
                Some((_, _, at, count)) => (count, true, at),
                // FORCE makes a fresh pending entry (Redis's count starts at 1) whose idle
                // time is not checked.
                None if opts.force => (1, false, now),
                None => continue,
            };
            if check_idle && min_idle > 0 && now - last_delivery < min_idle {
                continue;
            }
            self.ensure_consumer(meta.id, group, consumer)?;
            let count = match opts.retrycount {
                Some(n) => n,
                None if !opts.justid => count + 1,
                None => count,
            };
            self.hand_over(meta.id, group, id, consumer, delivered, count)?;
            changed = true;
            out.push((id, (!opts.justid).then_some(fields)));
        }
        if changed {
            self.touch_stream(db, key)?;
        }
        Ok(Some(out))
    }

    /// XAUTOCLAIM: `None` when there is no such stream or group. Walks the group's PEL from
    /// `start` as Redis does: at most `count` entries claimed or found deleted, at most ten
    /// times `count` pending entries looked at, a batch at a time (a huge COUNT allocates
    /// nothing up front: CVE-2022-35951's class).
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    #[allow(clippy::too_many_arguments)]
    pub fn xautoclaim(
        &mut self,
        db: u32,
        key: &[u8],
        group: &[u8],
        consumer: &[u8],
        min_idle: i64,
        start: StreamId,
        count: u64,
        justid: bool,
    ) -> Result<Option<AutoClaimed>> {
        let Some(meta) = self.meta_for_write_of(db, key, KeyType::Stream)? else {
            return Ok(None);
        };
        if self.group_row(meta.id, group)?.is_none() {
            return Ok(None);
        }
        let now = self.now;
        let (mut attempts, mut left) = (count.saturating_mul(10), count);
        let mut out = AutoClaimed::default();
        let mut cursor = Some(start);
        let mut last_seen: Option<StreamId> = None;
        let mut stopped = false;
        'walk: while let Some(from) = cursor {
            let batch: Vec<PelRow> = prepare(self.conn, q::PEL_BATCH_FROM)?
                .query_map((meta.id, group, enc(from.ms), enc(from.seq)), |r| {
                    Ok((
                        StreamId::new(dec(r.get(0)?), dec(r.get(1)?)),
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                    ))
                })?
                .collect::<rusqlite::Result<_>>()?;
            if batch.is_empty() {
                break;
            }
            for (id, _, at, n) in batch {
                if attempts == 0 || left == 0 {
                    stopped = true;
                    break 'walk;
                }
                attempts -= 1;
                last_seen = Some(id);
                cursor = id.next();
                let Some(fields) = self.entry_fields(meta.id, id)? else {
                    self.drop_pending(meta.id, group, id)?;
                    out.deleted.push(id);
                    left -= 1;
                    continue;
                };
                if min_idle > 0 && now - at < min_idle {
                    continue;
                }
                self.ensure_consumer(meta.id, group, consumer)?;
                let n = if justid { n } else { n + 1 };
                self.hand_over(meta.id, group, id, consumer, now, n)?;
                out.claimed.push((id, (!justid).then_some(fields)));
                left -= 1;
            }
            if cursor.is_none() {
                break;
            }
        }
        // The cursor is the pending entry after the last one looked at (0-0 at the end).
        if stopped || attempts == 0 || left == 0 {
            if let Some(after) = last_seen.and_then(|l| l.next()) {
                out.next = prepare(self.conn, q::PEL_NEXT_FROM)?
                    .query_row((meta.id, group, enc(after.ms), enc(after.seq)), |r| {
                        Ok(StreamId::new(dec(r.get(0)?), dec(r.get(1)?)))
                    })
                    .optional()?
                    .unwrap_or_default();
            }
        }
        if !out.claimed.is_empty() || !out.deleted.is_empty() {
            self.touch_stream(db, key)?;
        }
        Ok(Some(out))
    }

    /// XACK: how many of `ids` were pending in the group (0 when there is no such stream or
    /// group).
    ///
    /// # Errors
    /// [`Error::WrongType`] if the key holds another type.
    pub fn xack(&mut self, db: u32, key: &[u8], group: &[u8], ids: &[StreamId]) -> Result<u64> {
        let Some(meta) = self.meta_for_write_of(db, key, KeyType::Stream)? else {
            return Ok(0);
        };
        let mut n = 0;
        for id in ids {
            n += prepare(self.conn, q::PEL_DELETE)?.execute((
                meta.id,
                group,
                enc(id.ms),
                enc(id.seq),
            ))? as u64;
        }
        if n > 0 {
            self.touch_stream(db, key)?;
        }
        Ok(n)
    }
}
