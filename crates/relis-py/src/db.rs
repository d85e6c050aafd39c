//! `relis.Db`: a handle on one engine and one logical database, with redis-py's method names,
//! arguments and return types; and `relis.Pipeline`, the same methods queued and run in one
//! transaction.
//!
//! Every method builds one [`Op`] (arguments checked as redis-py and Redis check them, before
//! anything runs) and hands it to [`Db::dispatch`]: a plain handle runs it at once with the GIL
//! released, a pipeline queues it and returns itself.

use crate::convert::{arg, args, float_arg, int_arg, score_bound};
use crate::engine::Engine;
use crate::errors;
use crate::op::{Op, Out};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use relis::{
    Bytes, End, Error, ExpireCond, Expiry, KeyType, ScoreRange, SetCond, SetOptions, ZAddCmp,
    ZAddCond, ZAddOptions, ZRange, ZRangeBy,
};
use std::sync::{Mutex, RwLock};

/// A Relis database opened in this process (see `relis.open`).
#[pyclass(module = "relis", frozen, subclass)]
pub struct Db {
    /// `None` once closed.
    engine: RwLock<Option<Engine>>,
    /// Whether replies are `str` (UTF-8 decoded) rather than `bytes`.
    decode: bool,
    /// A pipeline's queued commands; `None` for a plain handle.
    queue: Option<Mutex<Vec<Op>>>,
}

impl Db {
    /// A plain handle.
    pub fn new(engine: relis::Db, decode: bool) -> Db {
        Db {
            engine: RwLock::new(Some(Engine::new(engine))),
            decode,
            queue: None,
        }
    }

    /// The engine, or `ConnectionError` once closed.
    pub fn engine(&self) -> PyResult<relis::Db> {
        let closed = || errors::ConnectionError::new_err("the database is closed");
        let guard = self.engine.read().map_err(|_| closed())?;
        Ok(guard.as_ref().ok_or_else(closed)?.get()?.clone())
    }

    /// Whether this is a pipeline (which queues commands instead of running them).
    pub fn queued(&self) -> bool {
        self.queue.is_some()
    }

    /// Refuses what a pipeline cannot queue.
    fn not_queued(&self, what: &str) -> PyResult<()> {
        if self.queue.is_some() {
            return Err(errors::RedisError::new_err(format!(
                "{what} cannot run inside a pipeline"
            )));
        }
        Ok(())
    }

    /// Runs `op` now, the GIL released while it waits for its read or its commit.
    pub fn run_now(&self, py: Python<'_>, op: Op) -> PyResult<Py<PyAny>> {
        let engine = self.engine()?;
        let name = op.name();
        let out = py.detach(move || run(&engine, op));
        out.map_err(|e| errors::engine(e, name))?
            .into_py(py, self.decode)
    }

    /// Queues `op` (a pipeline, which it returns) or runs it now.
    fn dispatch(slf: &Bound<'_, Self>, op: Op) -> PyResult<Py<PyAny>> {
        let me = slf.get();
        match &me.queue {
            Some(q) => {
                q.lock().expect("pipeline queue").push(op);
                Ok(slf.clone().into_any().unbind())
            }
            None => me.run_now(slf.py(), op),
        }
    }
}

/// One command on the engine: a read on the calling thread's own read connection (or the
/// reader pool, in memory), a write on the writer, waiting for its commit.
pub fn run(engine: &relis::Db, op: Op) -> Result<Out, Error> {
    let db = engine.index();
    if op.writes() {
        return engine.write(move |w| op.write(w, db));
    }
    match engine.read_here(|r| op.read(r, db)) {
        Some(out) => out?,
        None => engine.read(move |r| op.read(r, db)),
    }
}

/// Seconds or a `timedelta`, in milliseconds (`what` names the command in the error text).
fn duration_ms(obj: &Bound<'_, PyAny>, seconds: bool, what: &str) -> PyResult<i64> {
    let invalid = || errors::response(format!("invalid expire time in '{what}' command"));
    if obj.hasattr("total_seconds")? {
        let secs: f64 = obj.call_method0("total_seconds")?.extract()?;
        // redis-py sends int(total_seconds()) for EX and int(total_seconds() * 1000) for PX.
        let ms = if seconds {
            (secs.trunc() as i64).checked_mul(1000)
        } else {
            Some((secs * 1000.0) as i64)
        };
        return ms.ok_or_else(invalid);
    }
    let n = int_arg(obj)?;
    if seconds {
        n.checked_mul(1000).ok_or_else(invalid)
    } else {
        Ok(n)
    }
}

/// A unix time (seconds or milliseconds) or a `datetime`, in milliseconds.
fn instant_ms(obj: &Bound<'_, PyAny>, seconds: bool, what: &str) -> PyResult<i64> {
    let invalid = || errors::response(format!("invalid expire time in '{what}' command"));
    if obj.hasattr("timestamp")? {
        let secs: f64 = obj.call_method0("timestamp")?.extract()?;
        return Ok(if seconds {
            (secs.trunc() as i64)
                .checked_mul(1000)
                .ok_or_else(invalid)?
        } else {
            (secs * 1000.0) as i64
        });
    }
    let n = int_arg(obj)?;
    if seconds {
        n.checked_mul(1000).ok_or_else(invalid)
    } else {
        Ok(n)
    }
}

fn key_type(name: &str) -> Option<KeyType> {
    Some(match name.to_ascii_lowercase().as_str() {
        "string" => KeyType::String,
        "hash" => KeyType::Hash,
        "list" => KeyType::List,
        "set" => KeyType::Set,
        "zset" => KeyType::ZSet,
        "stream" => KeyType::Stream,
        _ => return None,
    })
}

fn nonempty(items: Vec<Bytes>, cmd: &str) -> PyResult<Vec<Bytes>> {
    if items.is_empty() {
        return Err(errors::arity(cmd));
    }
    Ok(items)
}

fn score_range(min: &Bound<'_, PyAny>, max: &Bound<'_, PyAny>) -> PyResult<ScoreRange> {
    let (min, min_ex) = score_bound(min)?;
    let (max, max_ex) = score_bound(max)?;
    Ok(ScoreRange {
        min,
        min_ex,
        max,
        max_ex,
    })
}

fn limit(
    start: Option<&Bound<'_, PyAny>>,
    num: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<(i64, i64)>> {
    match (start, num) {
        (None, None) => Ok(None),
        (Some(s), Some(n)) => Ok(Some((int_arg(s)?, int_arg(n)?))),
        _ => Err(errors::data("``start`` and ``num`` must both be specified")),
    }
}

#[pymethods]
impl Db {
    /// GET: the value, or `None`.
    fn get(slf: &Bound<'_, Self>, name: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Db::dispatch(slf, Op::Get(arg(name)?))
    }

    /// SET with redis-py's options: `True`, `None` when NX/XX said no, the old value with
    /// `get=True`.
    #[pyo3(signature = (name, value, ex=None, px=None, nx=false, xx=false, keepttl=false, get=false, exat=None, pxat=None))]
    #[allow(clippy::too_many_arguments)]
    fn set(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        ex: Option<&Bound<'_, PyAny>>,
        px: Option<&Bound<'_, PyAny>>,
        nx: bool,
        xx: bool,
        keepttl: bool,
        get: bool,
        exat: Option<&Bound<'_, PyAny>>,
        pxat: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let (key, value) = (arg(name)?, arg(value)?);
        let expiries = [
            ex.is_some(),
            px.is_some(),
            exat.is_some(),
            pxat.is_some(),
            keepttl,
        ];
        if expiries.iter().filter(|b| **b).count() > 1 {
            return Err(errors::data(
                "``ex``, ``px``, ``exat``, ``pxat``, and ``keepttl`` are mutually exclusive.",
            ));
        }
        if nx && xx {
            return Err(errors::data(
                "``nx``, ``xx``, ``ifeq``, ``ifne``, ``ifdeq``, ``ifdne`` are mutually exclusive.",
            ));
        }
        let invalid = || errors::response("invalid expire time in 'set' command");
        let positive = |ms: i64| if ms > 0 { Ok(ms) } else { Err(invalid()) };
        let expiry = if let Some(ex) = ex {
            Expiry::In(positive(duration_ms(ex, true, "set")?)?)
        } else if let Some(px) = px {
            Expiry::In(positive(duration_ms(px, false, "set")?)?)
        } else if let Some(at) = exat {
            Expiry::At(positive(instant_ms(at, true, "set")?)?)
        } else if let Some(at) = pxat {
            Expiry::At(positive(instant_ms(at, false, "set")?)?)
        } else if keepttl {
            Expiry::Keep
        } else {
            Expiry::Clear
        };
        let cond = match (nx, xx) {
            (true, _) => SetCond::IfAbsent,
            (_, true) => SetCond::IfPresent,
            _ => SetCond::Always,
        };
        let opts = SetOptions { cond, expiry, get };
        Db::dispatch(slf, Op::Set(key, value, opts))
    }

    /// INCRBY (redis-py's `incr` takes the amount too): the new value.
    #[pyo3(signature = (name, amount=None))]
    fn incr(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        amount: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let by = amount.map(int_arg).transpose()?.unwrap_or(1);
        Db::dispatch(slf, Op::IncrBy(arg(name)?, by))
    }

    /// INCRBY: the new value.
    #[pyo3(signature = (name, amount=None))]
    fn incrby(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        amount: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        Db::incr(slf, name, amount)
    }

    /// DECRBY: the new value.
    #[pyo3(signature = (name, amount=None))]
    fn decr(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        amount: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let by = amount.map(int_arg).transpose()?.unwrap_or(1);
        let by = by
            .checked_neg()
            .ok_or_else(|| errors::response("decrement would overflow"))?;
        Db::dispatch(slf, Op::IncrBy(arg(name)?, by))
    }

    /// DECRBY: the new value.
    #[pyo3(signature = (name, amount=None))]
    fn decrby(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        amount: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        Db::decr(slf, name, amount)
    }

    /// DEL: how many of the keys existed.
    #[pyo3(signature = (*names))]
    fn delete(slf: &Bound<'_, Self>, names: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        Db::dispatch(slf, Op::Del(nonempty(args(names)?, "del")?))
    }

    /// EXISTS: how many of the keys exist (a key named twice counts twice).
    #[pyo3(signature = (*names))]
    fn exists(slf: &Bound<'_, Self>, names: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        Db::dispatch(slf, Op::Exists(nonempty(args(names)?, "exists")?))
    }

    /// EXPIRE in seconds (or a `timedelta`), with NX / XX / GT / LT: whether it was set.
    #[pyo3(signature = (name, time, nx=false, xx=false, gt=false, lt=false))]
    #[allow(clippy::too_many_arguments)]
    fn expire(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        time: &Bound<'_, PyAny>,
        nx: bool,
        xx: bool,
        gt: bool,
        lt: bool,
    ) -> PyResult<Py<PyAny>> {
        let key = arg(name)?;
        let ms = duration_ms(time, true, "expire")?;
        Db::dispatch(slf, Op::Expire(key, ms, expire_cond(nx, xx, gt, lt)?))
    }

    /// PEXPIRE in milliseconds (or a `timedelta`): whether it was set.
    #[pyo3(signature = (name, time, nx=false, xx=false, gt=false, lt=false))]
    #[allow(clippy::too_many_arguments)]
    fn pexpire(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        time: &Bound<'_, PyAny>,
        nx: bool,
        xx: bool,
        gt: bool,
        lt: bool,
    ) -> PyResult<Py<PyAny>> {
        let key = arg(name)?;
        let ms = duration_ms(time, false, "pexpire")?;
        Db::dispatch(slf, Op::Expire(key, ms, expire_cond(nx, xx, gt, lt)?))
    }

    /// TTL in seconds: -2 for a missing key, -1 for one without expiry.
    fn ttl(slf: &Bound<'_, Self>, name: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Db::dispatch(slf, Op::Ttl(arg(name)?, false))
    }

    /// PTTL in milliseconds: -2 for a missing key, -1 for one without expiry.
    fn pttl(slf: &Bound<'_, Self>, name: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Db::dispatch(slf, Op::Ttl(arg(name)?, true))
    }

    /// TYPE: `b"string"`, `b"hash"`, ... or `b"none"`.
    #[pyo3(name = "type")]
    fn type_(slf: &Bound<'_, Self>, name: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Db::dispatch(slf, Op::Type(arg(name)?))
    }

    /// KEYS: every key matching the glob pattern.
    #[pyo3(signature = (pattern=None))]
    fn keys(slf: &Bound<'_, Self>, pattern: Option<&Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        let pattern = pattern
            .map(arg)
            .transpose()?
            .unwrap_or_else(|| Bytes::from_static(b"*"));
        Db::dispatch(slf, Op::Keys(pattern))
    }

    /// DBSIZE: the number of keys.
    fn dbsize(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        Db::dispatch(slf, Op::DbSize)
    }

    /// FLUSHDB: deletes every key of this logical database.
    fn flushdb(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        Db::dispatch(slf, Op::FlushDb)
    }

    /// SCAN as an iterator over every key (matching `match`, of type `_type`), fetched a page
    /// at a time, each page a consistent read.
    #[pyo3(signature = (r#match=None, count=None, _type=None))]
    fn scan_iter(
        &self,
        r#match: Option<&Bound<'_, PyAny>>,
        count: Option<usize>,
        _type: Option<&str>,
    ) -> PyResult<ScanIter> {
        self.not_queued("scan_iter")?;
        let kind = match _type {
            None => None,
            Some(t) => match key_type(t) {
                Some(k) => Some(k),
                // Redis 7.0 answers an unknown type with no keys.
                None => {
                    return Ok(ScanIter {
                        engine: Engine::new(self.engine()?),
                        decode: self.decode,
                        pattern: None,
                        kind: None,
                        count: 0,
                        after: None,
                        page: Vec::new().into_iter(),
                        done: true,
                    })
                }
            },
        };
        Ok(ScanIter {
            engine: Engine::new(self.engine()?),
            decode: self.decode,
            pattern: r#match.map(arg).transpose()?,
            kind,
            count: count.unwrap_or(100).max(1),
            after: None,
            page: Vec::new().into_iter(),
            done: false,
        })
    }

    /// HSET from `key`/`value`, `mapping` and/or `items` (a flat list): fields added.
    #[pyo3(signature = (name, key=None, value=None, mapping=None, items=None))]
    fn hset(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        key: Option<&Bound<'_, PyAny>>,
        value: Option<&Bound<'_, PyAny>>,
        mapping: Option<&Bound<'_, PyDict>>,
        items: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let name = arg(name)?;
        let mut flat: Vec<Bytes> = Vec::new();
        if let Some(items) = items {
            for item in items.try_iter()? {
                flat.push(arg(&item?)?);
            }
        }
        if let Some(key) = key {
            flat.push(arg(key)?);
            flat.push(match value {
                Some(v) => arg(v)?,
                None => return Err(errors::bad_input("NoneType")),
            });
        }
        if let Some(mapping) = mapping {
            for (k, v) in mapping.iter() {
                flat.push(arg(&k)?);
                flat.push(arg(&v)?);
            }
        }
        if flat.is_empty() {
            return Err(errors::data("'hset' with no key value pairs"));
        }
        if !flat.len().is_multiple_of(2) {
            return Err(errors::arity("hset"));
        }
        let pairs = flat
            .chunks(2)
            .map(|c| (c[0].clone(), c[1].clone()))
            .collect();
        Db::dispatch(slf, Op::HSet(name, pairs))
    }

    /// HGET: the field's value, or `None`.
    fn hget(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        key: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        Db::dispatch(slf, Op::HGet(arg(name)?, arg(key)?))
    }

    /// HGETALL: a dict (empty for a missing key).
    fn hgetall(slf: &Bound<'_, Self>, name: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Db::dispatch(slf, Op::HGetAll(arg(name)?))
    }

    /// HINCRBY: the field's new value.
    #[pyo3(signature = (name, key, amount=None))]
    fn hincrby(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        key: &Bound<'_, PyAny>,
        amount: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let by = amount.map(int_arg).transpose()?.unwrap_or(1);
        Db::dispatch(slf, Op::HIncrBy(arg(name)?, arg(key)?, by))
    }

    /// LPUSH: the list's new length.
    #[pyo3(signature = (name, *values))]
    fn lpush(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        values: &Bound<'_, PyTuple>,
    ) -> PyResult<Py<PyAny>> {
        let key = arg(name)?;
        Db::dispatch(
            slf,
            Op::Push(key, nonempty(args(values)?, "lpush")?, End::Left),
        )
    }

    /// RPUSH: the list's new length.
    #[pyo3(signature = (name, *values))]
    fn rpush(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        values: &Bound<'_, PyTuple>,
    ) -> PyResult<Py<PyAny>> {
        let key = arg(name)?;
        Db::dispatch(
            slf,
            Op::Push(key, nonempty(args(values)?, "rpush")?, End::Right),
        )
    }

    /// LPOP: the first element (or `None`), or a list of up to `count`.
    #[pyo3(signature = (name, count=None))]
    fn lpop(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        count: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let key = arg(name)?;
        Db::dispatch(slf, Op::Pop(key, End::Left, pop_count(count)?))
    }

    /// RPOP: the last element (or `None`), or a list of up to `count`.
    #[pyo3(signature = (name, count=None))]
    fn rpop(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        count: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let key = arg(name)?;
        Db::dispatch(slf, Op::Pop(key, End::Right, pop_count(count)?))
    }

    /// LRANGE: elements `start` to `end` inclusive (negative counts from the end).
    fn lrange(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        start: &Bound<'_, PyAny>,
        end: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let key = arg(name)?;
        Db::dispatch(slf, Op::LRange(key, int_arg(start)?, int_arg(end)?))
    }

    /// LLEN: the list's length (0 for a missing key).
    fn llen(slf: &Bound<'_, Self>, name: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Db::dispatch(slf, Op::LLen(arg(name)?))
    }

    /// SADD: members added.
    #[pyo3(signature = (name, *values))]
    fn sadd(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        values: &Bound<'_, PyTuple>,
    ) -> PyResult<Py<PyAny>> {
        let key = arg(name)?;
        Db::dispatch(slf, Op::SAdd(key, nonempty(args(values)?, "sadd")?))
    }

    /// SREM: members removed.
    #[pyo3(signature = (name, *values))]
    fn srem(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        values: &Bound<'_, PyTuple>,
    ) -> PyResult<Py<PyAny>> {
        let key = arg(name)?;
        Db::dispatch(slf, Op::SRem(key, nonempty(args(values)?, "srem")?))
    }

    /// SMEMBERS: a Python set (empty for a missing key).
    fn smembers(slf: &Bound<'_, Self>, name: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Db::dispatch(slf, Op::SMembers(arg(name)?))
    }

    /// SISMEMBER: whether `value` is a member.
    fn sismember(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        Db::dispatch(slf, Op::SIsMember(arg(name)?, arg(value)?))
    }

    /// ZADD from a `{member: score}` mapping: members added (and changed, with `ch`), or with
    /// `incr` the new score (`None` when a condition said no).
    #[pyo3(signature = (name, mapping, nx=false, xx=false, ch=false, incr=false, gt=false, lt=false))]
    #[allow(clippy::too_many_arguments)]
    fn zadd(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        mapping: &Bound<'_, PyDict>,
        nx: bool,
        xx: bool,
        ch: bool,
        incr: bool,
        gt: bool,
        lt: bool,
    ) -> PyResult<Py<PyAny>> {
        let key = arg(name)?;
        // redis-py's checks, in its order.
        if mapping.is_empty() {
            return Err(errors::data(
                "ZADD requires at least one element/score pair",
            ));
        }
        if nx && xx {
            return Err(errors::data("ZADD allows either 'nx' or 'xx', not both"));
        }
        if gt && lt {
            return Err(errors::data("ZADD allows either 'gt' or 'lt', not both"));
        }
        if incr && mapping.len() != 1 {
            return Err(errors::data(
                "ZADD option 'incr' only works when passing a single element/score pair",
            ));
        }
        if nx && (gt || lt) {
            return Err(errors::data(
                "Only one of 'nx', 'lt', or 'gr' may be defined.",
            ));
        }
        let mut pairs = Vec::with_capacity(mapping.len());
        for (member, score) in mapping.iter() {
            pairs.push((float_arg(&score)?, arg(&member)?));
        }
        let opts = ZAddOptions {
            cond: if nx {
                ZAddCond::Nx
            } else if xx {
                ZAddCond::Xx
            } else {
                ZAddCond::Always
            },
            cmp: if gt {
                ZAddCmp::Gt
            } else if lt {
                ZAddCmp::Lt
            } else {
                ZAddCmp::Any
            },
            ch,
            incr,
        };
        Db::dispatch(slf, Op::ZAdd(key, opts, pairs))
    }

    /// ZINCRBY: the member's new score.
    fn zincrby(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        amount: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let key = arg(name)?;
        let opts = ZAddOptions {
            incr: true,
            ..ZAddOptions::default()
        };
        Db::dispatch(
            slf,
            Op::ZAdd(key, opts, vec![(float_arg(amount)?, arg(value)?)]),
        )
    }

    /// ZRANGE by rank (or by score with `byscore`, where `desc` takes the maximum first):
    /// members, or `(member, score)` tuples with `withscores`.
    #[pyo3(signature = (name, start, end, desc=false, withscores=false, byscore=false, offset=None, num=None))]
    #[allow(clippy::too_many_arguments)]
    fn zrange(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        start: &Bound<'_, PyAny>,
        end: &Bound<'_, PyAny>,
        desc: bool,
        withscores: bool,
        byscore: bool,
        offset: Option<&Bound<'_, PyAny>>,
        num: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let key = arg(name)?;
        let lim = limit(offset, num)?;
        let spec = if byscore {
            let range = if desc {
                score_range(end, start)?
            } else {
                score_range(start, end)?
            };
            ZRange {
                by: ZRangeBy::Score(range),
                rev: desc,
                limit: lim,
            }
        } else {
            if lim.is_some() {
                return Err(errors::response(
                    "syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
                ));
            }
            ZRange {
                by: ZRangeBy::Rank(int_arg(start)?, int_arg(end)?),
                rev: desc,
                limit: None,
            }
        };
        Db::dispatch(slf, Op::ZRange(key, spec, withscores))
    }

    /// ZRANGEBYSCORE: members with scores from `min` to `max` (`"(1"` excludes, `"-inf"`,
    /// `"+inf"`), optionally `start`/`num` for LIMIT.
    #[pyo3(signature = (name, min, max, start=None, num=None, withscores=false))]
    #[allow(clippy::too_many_arguments)]
    fn zrangebyscore(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        min: &Bound<'_, PyAny>,
        max: &Bound<'_, PyAny>,
        start: Option<&Bound<'_, PyAny>>,
        num: Option<&Bound<'_, PyAny>>,
        withscores: bool,
    ) -> PyResult<Py<PyAny>> {
        let key = arg(name)?;
        let lim = limit(start, num)?;
        let spec = ZRange {
            by: ZRangeBy::Score(score_range(min, max)?),
            rev: false,
            limit: lim,
        };
        Db::dispatch(slf, Op::ZRange(key, spec, withscores))
    }

    /// ZSCORE: the member's score as a float, or `None`.
    fn zscore(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        Db::dispatch(slf, Op::ZScore(arg(name)?, arg(value)?))
    }

    /// ZREM: members removed.
    #[pyo3(signature = (name, *values))]
    fn zrem(
        slf: &Bound<'_, Self>,
        name: &Bound<'_, PyAny>,
        values: &Bound<'_, PyTuple>,
    ) -> PyResult<Py<PyAny>> {
        let key = arg(name)?;
        Db::dispatch(slf, Op::ZRem(key, nonempty(args(values)?, "zrem")?))
    }

    /// ZCARD: the number of members (0 for a missing key).
    fn zcard(slf: &Bound<'_, Self>, name: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        Db::dispatch(slf, Op::ZCard(arg(name)?))
    }

    /// Runs SQL on the writer, in its own transaction: one statement with parameters, or
    /// several `;`-separated ones without. Returns the rows of a statement that returns rows
    /// (tuples, or dicts with `dicts=True`), else the number of rows changed.
    #[pyo3(signature = (sql, *params, dicts=false))]
    fn execute(
        &self,
        py: Python<'_>,
        sql: &str,
        params: &Bound<'_, PyTuple>,
        dicts: bool,
    ) -> PyResult<Py<PyAny>> {
        crate::sql::execute(self, py, sql, params, dicts)
    }

    /// Runs a read-only statement on a reader, in parallel with writes: a list of tuples, or
    /// of dicts with `dicts=True`.
    #[pyo3(signature = (sql, *params, dicts=false))]
    fn query(
        &self,
        py: Python<'_>,
        sql: &str,
        params: &Bound<'_, PyTuple>,
        dicts: bool,
    ) -> PyResult<Py<PyAny>> {
        crate::sql::query(self, py, sql, params, dicts)
    }

    /// Compiles `sql` and stores it in the database as the prepared statement `name`
    /// (replacing one of that name; relis-server's SQL.RUN sees it too).
    fn prepare(&self, py: Python<'_>, name: &str, sql: &str) -> PyResult<crate::sql::Statement> {
        crate::sql::prepare(self, py, name, sql)
    }

    /// Runs the prepared statement `name`: as `execute`.
    #[pyo3(signature = (name, *params, dicts=false))]
    fn run(
        &self,
        py: Python<'_>,
        name: &str,
        params: &Bound<'_, PyTuple>,
        dicts: bool,
    ) -> PyResult<Py<PyAny>> {
        crate::sql::run(self, py, name, params, dicts)
    }

    /// Forgets the prepared statement `name`: whether it existed.
    fn unprepare(&self, py: Python<'_>, name: &str) -> PyResult<bool> {
        crate::sql::unprepare(self, py, name)
    }

    /// A handle on logical database `db` of the same file (this one is unchanged).
    fn select(&self, db: &Bound<'_, PyAny>) -> PyResult<Db> {
        self.not_queued("select")?;
        let index = int_arg(db)?;
        let engine = u32::try_from(index)
            .map_err(|_| errors::engine(Error::DbIndexOutOfRange, "select"))
            .and_then(|i| {
                self.engine()?
                    .select(i)
                    .map_err(|e| errors::engine(e, "select"))
            })?;
        Ok(Db::new(engine, self.decode))
    }

    /// The logical database this handle works on.
    #[getter]
    fn db(&self) -> PyResult<u32> {
        Ok(self.engine()?.index())
    }

    /// The database file, or `None` in memory.
    #[getter]
    fn path(&self) -> PyResult<Option<String>> {
        Ok(self.engine()?.path().map(|p| p.display().to_string()))
    }

    /// A pipeline: commands queued, then run by `execute()` (or when its `with` block ends)
    /// in one transaction. `transaction` is accepted for redis-py's signature: a pipeline
    /// here is always atomic.
    #[pyo3(signature = (transaction=true))]
    fn pipeline(&self, py: Python<'_>, transaction: bool) -> PyResult<Py<Pipeline>> {
        let _ = transaction;
        self.not_queued("pipeline")?;
        let base = Db {
            engine: RwLock::new(Some(Engine::new(self.engine()?))),
            decode: self.decode,
            queue: Some(Mutex::new(Vec::new())),
        };
        Py::new(py, PyClassInitializer::from(base).add_subclass(Pipeline))
    }

    /// `pipeline()`, named for `with db.transaction() as t:`.
    fn transaction(&self, py: Python<'_>) -> PyResult<Py<Pipeline>> {
        self.pipeline(py, true)
    }

    /// Closes this handle (the file closes when every handle on it is closed or collected).
    fn close(&self, py: Python<'_>) {
        let engine = self.engine.write().ok().and_then(|mut e| e.take());
        // The last handle's drop waits for the engine's threads: not with the GIL held.
        py.detach(move || drop(engine));
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, PyTuple>) -> bool {
        self.close(py);
        false
    }

    fn __repr__(&self) -> String {
        match self.engine() {
            Ok(e) => format!(
                "<relis.Db path={} db={}>",
                e.path().map_or_else(
                    || "None".to_string(),
                    |p| format!("{:?}", p.display().to_string())
                ),
                e.index()
            ),
            Err(_) => "<relis.Db closed>".into(),
        }
    }
}

fn expire_cond(nx: bool, xx: bool, gt: bool, lt: bool) -> PyResult<ExpireCond> {
    if nx && (xx || gt || lt) {
        return Err(errors::response(
            "NX and XX, GT or LT options at the same time are not compatible",
        ));
    }
    if gt && lt {
        return Err(errors::response(
            "GT and LT options at the same time are not compatible",
        ));
    }
    Ok(match (nx, xx, gt, lt) {
        (true, ..) => ExpireCond::Nx,
        (_, true, _, true) => ExpireCond::XxLt,
        (_, _, true, _) => ExpireCond::Gt,
        (_, true, ..) => ExpireCond::Xx,
        (.., true) => ExpireCond::Lt,
        _ => ExpireCond::Always,
    })
}

fn pop_count(count: Option<&Bound<'_, PyAny>>) -> PyResult<Option<usize>> {
    count
        .map(|c| {
            let n = int_arg(c)?;
            usize::try_from(n)
                .map_err(|_| errors::response("value is out of range, must be positive"))
        })
        .transpose()
}

/// `Db.scan_iter()`: every key, a page at a time.
#[pyclass(module = "relis")]
pub struct ScanIter {
    engine: Engine,
    decode: bool,
    pattern: Option<Bytes>,
    kind: Option<KeyType>,
    count: usize,
    after: Option<Bytes>,
    page: std::vec::IntoIter<Bytes>,
    done: bool,
}

#[pymethods]
impl ScanIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        loop {
            if let Some(key) = self.page.next() {
                return Ok(Some(crate::convert::reply(py, &key, self.decode)?.unbind()));
            }
            if self.done {
                return Ok(None);
            }
            let op = Op::Scan(
                self.after.take(),
                self.count,
                self.pattern.clone(),
                self.kind,
            );
            let engine = self.engine.get()?.clone();
            match py
                .detach(move || run(&engine, op))
                .map_err(|e| errors::engine(e, "scan"))?
            {
                Out::Page(keys, next) => {
                    self.done = next.is_none();
                    self.after = next;
                    self.page = keys.into_iter();
                }
                other => unreachable!("SCAN answered {other:?}"),
            }
        }
    }
}

/// `Db.pipeline()` / `Db.transaction()`: the `Db` methods queue their commands (and return the
/// pipeline, so calls chain); `execute()` runs them all in one transaction and returns their
/// results in order.
///
/// As in Redis's MULTI/EXEC, a command that fails (WRONGTYPE, say) does not undo the others;
/// the whole transaction commits at once, so no reader ever sees part of it.
#[pyclass(module = "relis", frozen, extends = Db)]
pub struct Pipeline;

impl Pipeline {
    fn take(slf: &Bound<'_, Self>) -> Vec<Op> {
        let base: &Db = slf.as_super().get();
        let queue = base.queue.as_ref().expect("a pipeline has a queue");
        std::mem::take(&mut *queue.lock().expect("pipeline queue"))
    }
}

#[pymethods]
impl Pipeline {
    /// Runs the queued commands in one transaction: their results, in order. With
    /// `raise_on_error` (the default) the first failed command's error is raised after the
    /// commit, as redis-py does; otherwise the exception takes the command's place in the list.
    #[pyo3(signature = (raise_on_error=true))]
    fn execute(slf: &Bound<'_, Self>, raise_on_error: bool) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let ops = Pipeline::take(slf);
        let base: &Db = slf.as_super().get();
        if ops.is_empty() {
            return Ok(pyo3::types::PyList::empty(py).into_any().unbind());
        }
        let engine = base.engine()?;
        let labels: Vec<String> = ops
            .iter()
            .map(|op| match op.key() {
                Some(k) => format!(
                    "{} {}",
                    op.name().to_uppercase(),
                    String::from_utf8_lossy(k)
                ),
                None => op.name().to_uppercase(),
            })
            .collect();
        let names: Vec<&'static str> = ops.iter().map(Op::name).collect();
        let db = engine.index();
        let outs = py
            .detach(move || {
                engine.write(move |w| {
                    let mut outs = Vec::with_capacity(ops.len());
                    for op in ops {
                        match w.atomic(|w| op.write(w, db)) {
                            Ok(out) => outs.push(Ok(out)),
                            // The storage failing ends the whole transaction.
                            Err(
                                e @ (Error::Storage(_)
                                | Error::DiskFull
                                | Error::Io(_)
                                | Error::Closed
                                | Error::RolledBack(_)),
                            ) => return Err(e),
                            Err(e) => outs.push(Err(e)),
                        }
                    }
                    Ok(outs)
                })
            })
            .map_err(|e| errors::engine(e, "exec"))?;
        let mut results = Vec::with_capacity(outs.len());
        let mut first_err: Option<PyErr> = None;
        for (i, out) in outs.into_iter().enumerate() {
            let value = match out {
                Ok(out) => out.into_py(py, base.decode),
                Err(e) => Err(errors::engine(e, names[i])),
            };
            match value {
                Ok(v) => results.push(v),
                Err(e) => {
                    if raise_on_error && first_err.is_none() {
                        // redis-py's wording for a pipeline's failed command.
                        let msg = format!(
                            "Command # {} ({}) of pipeline caused error: {}",
                            i + 1,
                            labels[i],
                            e.value(py).str()?.to_cow()?
                        );
                        first_err = Some(PyErr::from_type(e.get_type(py), msg));
                    }
                    results.push(e.into_value(py).into_any());
                }
            }
        }
        if let Some(e) = first_err {
            return Err(e);
        }
        Ok(pyo3::types::PyList::new(py, results)?.into_any().unbind())
    }

    /// Forgets the queued commands.
    fn reset(slf: &Bound<'_, Self>) {
        Pipeline::take(slf);
    }

    fn __len__(slf: &Bound<'_, Self>) -> usize {
        let base: &Db = slf.as_super().get();
        base.queue
            .as_ref()
            .map_or(0, |q| q.lock().expect("pipeline queue").len())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Ends the `with` block: runs what is queued (unless the block raised, which discards
    /// it). Never suppresses the block's exception.
    #[pyo3(signature = (exc_type, _exc=None, _tb=None))]
    fn __exit__(
        slf: &Bound<'_, Self>,
        exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        if exc_type.is_some_and(|t| !t.is_none()) {
            Pipeline::take(slf);
            return Ok(false);
        }
        Pipeline::execute(slf, true)?;
        Ok(false)
    }
}
