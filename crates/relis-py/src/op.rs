//! One command as a value: what a `Db` method runs at once and a pipeline queues. Each command
//! calls one engine method on a [`relis::Reader`] or [`relis::Writer`] and keeps its result as
//! an [`Out`], which becomes the Python value redis-py would return.

use crate::convert::{reply, reply_dict, reply_list, reply_set};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PyTuple};
use relis::{
    Bytes, End, Error, ExpireCond, KeyType, Reader, SetOptions, Ttl, Writer, ZAddOptions,
    ZAddOutcome, ZRange,
};

/// A command with its arguments, ready to run against one logical database.
#[derive(Clone, Debug)]
pub enum Op {
    /// GET key
    Get(Bytes),
    /// SET key value [options]; `get` answers with the old value instead of `True`.
    Set(Bytes, Bytes, SetOptions),
    /// INCRBY key delta
    IncrBy(Bytes, i64),
    /// DEL key...
    Del(Vec<Bytes>),
    /// EXISTS key...
    Exists(Vec<Bytes>),
    /// PEXPIRE key ms [NX|XX|GT|LT]
    Expire(Bytes, i64, ExpireCond),
    /// TTL key (seconds), or PTTL (milliseconds) when `true`.
    Ttl(Bytes, bool),
    /// KEYS pattern
    Keys(Bytes),
    /// One SCAN page: after this key, this many, matching this pattern and type.
    Scan(Option<Bytes>, usize, Option<Bytes>, Option<KeyType>),
    /// HSET key field value...
    HSet(Bytes, Vec<(Bytes, Bytes)>),
    /// HGET key field
    HGet(Bytes, Bytes),
    /// HGETALL key
    HGetAll(Bytes),
    /// HINCRBY key field delta
    HIncrBy(Bytes, Bytes, i64),
    /// LPUSH / RPUSH key value...
    Push(Bytes, Vec<Bytes>, End),
    /// LPOP / RPOP key [count]
    Pop(Bytes, End, Option<usize>),
    /// LRANGE key start stop
    LRange(Bytes, i64, i64),
    /// LLEN key
    LLen(Bytes),
    /// SADD key member...
    SAdd(Bytes, Vec<Bytes>),
    /// SREM key member...
    SRem(Bytes, Vec<Bytes>),
    /// SMEMBERS key
    SMembers(Bytes),
    /// SISMEMBER key member
    SIsMember(Bytes, Bytes),
    /// ZADD key [options] score member...
    ZAdd(Bytes, ZAddOptions, Vec<(f64, Bytes)>),
    /// ZRANGE (by rank or score) with or without the scores.
    ZRange(Bytes, ZRange, bool),
    /// ZSCORE key member
    ZScore(Bytes, Bytes),
    /// ZREM key member...
    ZRem(Bytes, Vec<Bytes>),
    /// ZCARD key
    ZCard(Bytes),
    /// DBSIZE
    DbSize,
    /// FLUSHDB
    FlushDb,
    /// TYPE key
    Type(Bytes),
}

/// What a command answered, shaped as redis-py returns it.
#[derive(Clone, Debug, PartialEq)]
pub enum Out {
    /// `None`
    Nil,
    /// `True` / `False`
    Bool(bool),
    /// `int`
    Int(i64),
    /// `float`
    Float(f64),
    /// `bytes` (or `str`)
    Str(Bytes),
    /// `str` that is never decoded from bytes (TYPE's name).
    Name(&'static str),
    /// `list` of strings
    List(Vec<Bytes>),
    /// `set` of strings
    Set(Vec<Bytes>),
    /// `dict` of strings
    Dict(Vec<(Bytes, Bytes)>),
    /// `list` of `(member, score)` tuples
    Scored(Vec<(Bytes, f64)>),
    /// One SCAN page: its keys and where the next starts.
    Page(Vec<Bytes>, Option<Bytes>),
    /// A command error found after the command ran and wrote nothing (`ResponseError`).
    Err(&'static str),
}

impl Op {
    /// The command's name as Redis spells it in its error texts.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Get(_) => "get",
            Op::Set(..) => "set",
            Op::IncrBy(..) => "incrby",
            Op::Del(_) => "del",
            Op::Exists(_) => "exists",
            Op::Expire(..) => "expire",
            Op::Ttl(..) => "ttl",
            Op::Keys(_) => "keys",
            Op::Scan(..) => "scan",
            Op::HSet(..) => "hset",
            Op::HGet(..) => "hget",
            Op::HGetAll(_) => "hgetall",
            Op::HIncrBy(..) => "hincrby",
            Op::Push(_, _, End::Left) => "lpush",
            Op::Push(..) => "rpush",
            Op::Pop(_, End::Left, _) => "lpop",
            Op::Pop(..) => "rpop",
            Op::LRange(..) => "lrange",
            Op::LLen(_) => "llen",
            Op::SAdd(..) => "sadd",
            Op::SRem(..) => "srem",
            Op::SMembers(_) => "smembers",
            Op::SIsMember(..) => "sismember",
            Op::ZAdd(..) => "zadd",
            Op::ZRange(..) => "zrange",
            Op::ZScore(..) => "zscore",
            Op::ZRem(..) => "zrem",
            Op::ZCard(_) => "zcard",
            Op::DbSize => "dbsize",
            Op::FlushDb => "flushdb",
            Op::Type(_) => "type",
        }
    }

    /// The key the command names first, if any (for pipeline error texts).
    pub fn key(&self) -> Option<&Bytes> {
        match self {
            Op::Get(k)
            | Op::Set(k, ..)
            | Op::IncrBy(k, _)
            | Op::Expire(k, ..)
            | Op::Ttl(k, _)
            | Op::HSet(k, _)
            | Op::HGet(k, _)
            | Op::HGetAll(k)
            | Op::HIncrBy(k, ..)
            | Op::Push(k, ..)
            | Op::Pop(k, ..)
            | Op::LRange(k, ..)
            | Op::LLen(k)
            | Op::SAdd(k, _)
            | Op::SRem(k, _)
            | Op::SMembers(k)
            | Op::SIsMember(k, _)
            | Op::ZAdd(k, ..)
            | Op::ZRange(k, ..)
            | Op::ZScore(k, _)
            | Op::ZRem(k, _)
            | Op::ZCard(k)
            | Op::Type(k) => Some(k),
            Op::Del(ks) | Op::Exists(ks) => ks.first(),
            Op::Keys(_) | Op::Scan(..) | Op::DbSize | Op::FlushDb => None,
        }
    }

    /// Whether the command writes (and so runs on the writer).
    pub fn writes(&self) -> bool {
        matches!(
            self,
            Op::Set(..)
                | Op::IncrBy(..)
                | Op::Del(_)
                | Op::Expire(..)
                | Op::HSet(..)
                | Op::HIncrBy(..)
                | Op::Push(..)
                | Op::Pop(..)
                | Op::SAdd(..)
                | Op::SRem(..)
                | Op::ZAdd(..)
                | Op::ZRem(..)
                | Op::FlushDb
        )
    }

    /// Runs a command that only reads.
    ///
    /// # Errors
    /// The engine's error (WRONGTYPE and the like, or storage).
    pub fn read(&self, r: &Reader<'_>, db: u32) -> Result<Out, Error> {
        Ok(match self {
            Op::Get(k) => opt_str(r.get(db, k)?),
            Op::Exists(ks) => Out::Int(r.exists(db, ks)?),
            Op::Ttl(k, ms) => Out::Int(match r.ttl(db, k)? {
                Ttl::Missing => -2,
                Ttl::Persistent => -1,
                Ttl::At(at) => {
                    let left = (at - r.now_ms()).max(0);
                    // TTL rounds to the nearest second, as Redis does.
                    if *ms {
                        left
                    } else {
                        (left + 500) / 1000
                    }
                }
            }),
            Op::Keys(p) => Out::List(r.keys(db, p)?),
            Op::Scan(after, count, pattern, kind) => {
                let page = r.scan(db, after.as_deref(), *count, pattern.as_deref(), *kind)?;
                Out::Page(page.keys, page.next)
            }
            Op::HGet(k, f) => opt_str(r.hget(db, k, f)?.flatten()),
            Op::HGetAll(k) => Out::Dict(r.hgetall(db, k)?.unwrap_or_default()),
            Op::LRange(k, start, stop) => {
                Out::List(r.lrange(db, k, *start, *stop)?.unwrap_or_default())
            }
            Op::LLen(k) => Out::Int(r.llen(db, k)?.unwrap_or(0)),
            Op::SMembers(k) => Out::Set(r.smembers(db, k)?.unwrap_or_default()),
            Op::SIsMember(k, m) => Out::Bool(r.sismember(db, k, m)?.unwrap_or(false)),
            Op::ZRange(k, spec, scores) => {
                let items = r.zrange(db, k, spec)?.unwrap_or_default();
                if *scores {
                    Out::Scored(items)
                } else {
                    Out::List(items.into_iter().map(|(m, _)| m).collect())
                }
            }
            Op::ZScore(k, m) => r.zscore(db, k, m)?.flatten().map_or(Out::Nil, Out::Float),
            Op::ZCard(k) => Out::Int(r.zcard(db, k)?.unwrap_or(0)),
            Op::DbSize => Out::Int(r.dbsize(db)?),
            Op::Type(k) => Out::Name(match r.key_type(db, k)? {
                None => "none",
                Some(KeyType::String) => "string",
                Some(KeyType::Hash) => "hash",
                Some(KeyType::List) => "list",
                Some(KeyType::Set) => "set",
                Some(KeyType::ZSet) => "zset",
                Some(KeyType::Stream) => "stream",
            }),
            op => unreachable!("{} writes: it runs on the writer", op.name()),
        })
    }

    /// Runs the command on the writer (a read runs there too, inside a pipeline).
    ///
    /// # Errors
    /// The engine's error; what the command wrote before it is rolled back by the caller's
    /// savepoint ([`Writer::atomic`]).
    pub fn write(&self, w: &mut Writer<'_>, db: u32) -> Result<Out, Error> {
        Ok(match self {
            Op::Set(k, v, opts) => {
                let done = w.set(db, k, v, *opts)?;
                if opts.get {
                    opt_str(done.old)
                } else if done.written {
                    Out::Bool(true)
                } else {
                    Out::Nil
                }
            }
            Op::IncrBy(k, d) => Out::Int(w.incr_by(db, k, *d)?),
            Op::Del(ks) => Out::Int(w.del(db, ks)?),
            Op::Expire(k, ms, cond) => {
                let at = w.now_ms().checked_add(*ms).ok_or(Error::InvalidExpire)?;
                Out::Bool(w.expire_at(db, k, at, *cond)?)
            }
            Op::HSet(k, pairs) => Out::Int(w.hset(db, k, pairs)?),
            Op::HIncrBy(k, f, d) => Out::Int(w.hincrby(db, k, f, *d)?),
            Op::Push(k, vs, end) => Out::Int(w.push(db, k, vs, *end, false)?),
            Op::Pop(k, end, count) => {
                let popped = w.pop(db, k, *end, count.unwrap_or(1))?;
                match (popped, count) {
                    (None, _) => Out::Nil,
                    (Some(items), Some(_)) => Out::List(items),
                    (Some(items), None) => opt_str(items.into_iter().next()),
                }
            }
            Op::SAdd(k, ms) => Out::Int(w.sadd(db, k, ms)?),
            Op::SRem(k, ms) => Out::Int(w.srem(db, k, ms)?),
            Op::ZAdd(k, opts, pairs) => match w.zadd(db, k, *opts, pairs)? {
                ZAddOutcome::Count(n) => Out::Int(n),
                ZAddOutcome::Score(s) => s.map_or(Out::Nil, Out::Float),
                ZAddOutcome::Nan => Out::Err("resulting score is not a number (NaN)"),
            },
            Op::ZRem(k, ms) => Out::Int(w.zrem(db, k, ms)?),
            Op::FlushDb => {
                w.flushdb(db)?;
                Out::Bool(true)
            }
            read => read.read(w, db)?,
        })
    }
}

fn opt_str(v: Option<Bytes>) -> Out {
    v.map_or(Out::Nil, Out::Str)
}

impl Out {
    /// The Python value redis-py would return.
    ///
    /// # Errors
    /// `UnicodeDecodeError` when decoding replies that are not UTF-8.
    pub fn into_py(self, py: Python<'_>, decode: bool) -> PyResult<Py<PyAny>> {
        Ok(match self {
            Out::Nil => py.None(),
            Out::Bool(b) => PyBool::new(py, b).to_owned().into_any().unbind(),
            Out::Int(n) => PyInt::new(py, n).into_any().unbind(),
            Out::Float(f) => PyFloat::new(py, f).into_any().unbind(),
            Out::Str(b) => reply(py, &b, decode)?.unbind(),
            Out::Name(n) => reply(py, n.as_bytes(), decode)?.unbind(),
            Out::List(items) => reply_list(py, &items, decode)?.unbind(),
            Out::Set(items) => reply_set(py, &items, decode)?.unbind(),
            Out::Dict(pairs) => reply_dict(py, &pairs, decode)?.unbind(),
            Out::Scored(items) => {
                let tuples = items
                    .iter()
                    .map(|(m, s)| {
                        PyTuple::new(py, [reply(py, m, decode)?, PyFloat::new(py, *s).into_any()])
                    })
                    .collect::<PyResult<Vec<_>>>()?;
                PyList::new(py, tuples)?.into_any().unbind()
            }
            Out::Err(msg) => return Err(crate::errors::response(msg)),
            Out::Page(keys, next) => {
                let next = match next {
                    Some(n) => pyo3::types::PyBytes::new(py, &n).into_any(),
                    None => py.None().into_bound(py),
                };
                PyTuple::new(py, [next, reply_list(py, &keys, decode)?])?
                    .into_any()
                    .unbind()
            }
        })
    }
}
