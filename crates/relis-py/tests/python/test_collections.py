"""Hashes, lists, sets and sorted sets: values, return types and errors as redis-py's."""

import math

import pytest

import relis

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


def test_hashes(db):
    assert db.hset("h", "f", "v") == 1
    assert db.hset("h", mapping={"a": 1, "b": 2.5}) == 2
    assert db.hset("h", items=["c", 3, "a", 10]) == 1
    assert db.hset("h", "f", "v2", mapping={"d": 4}) == 1
    assert db.hget("h", "f") == b"v2" and db.hget("h", "zz") is None and db.hget("no", "f") is None
    assert db.hgetall("h") == {b"f": b"v2", b"a": b"10", b"b": b"2.5", b"c": b"3", b"d": b"4"}
    assert db.hgetall("nohash") == {}
    assert db.hincrby("h", "a", 5) == 15 and db.hincrby("h", "new") == 1
    with pytest.raises(relis.ResponseError) as e:
        db.hincrby("h", "b", 1)
    assert str(e.value) == "hash value is not an integer"
    with pytest.raises(relis.DataError) as e:
        db.hset("h")
    assert str(e.value) == "'hset' with no key value pairs"
    db.set("s", "x")
    with pytest.raises(relis.WrongTypeError) as e:
        db.hset("s", "f", "v")
    assert str(e.value) == WRONGTYPE
    with pytest.raises(relis.WrongTypeError):
        db.hgetall("s")


def test_lists(db):
    assert db.lpush("l", 1, 2, 3) == 3
    assert db.rpush("l", "x") == 4
    assert db.lrange("l", 0, -1) == [b"3", b"2", b"1", b"x"]
    assert db.llen("l") == 4 and db.llen("none") == 0
    assert db.lpop("l") == b"3" and db.rpop("l") == b"x"
    assert db.lpop("l", 5) == [b"2", b"1"]
    assert db.lpop("l") is None and db.lpop("l", 2) is None and db.rpop("l") is None
    assert db.exists("l") == 0
    assert db.lrange("none", 0, -1) == []
    with pytest.raises(relis.ResponseError) as e:
        db.lpush("l")
    assert str(e.value) == "wrong number of arguments for 'lpush' command"
    with pytest.raises(relis.ResponseError) as e:
        db.lrange("l", "a", 1)
    assert str(e.value) == "value is not an integer or out of range"
    with pytest.raises(relis.ResponseError) as e:
        db.lpop("l", -1)
    assert str(e.value) == "value is out of range, must be positive"
    db.set("s", "x")
    with pytest.raises(relis.WrongTypeError):
        db.rpush("s", 1)
    with pytest.raises(relis.WrongTypeError):
        db.llen("s")


def test_sets(db):
    assert db.sadd("s", "a", "b", "a") == 2
    assert db.smembers("s") == {b"a", b"b"}
    assert db.smembers("none") == set()
    assert db.sismember("s", "a") is True and db.sismember("s", "z") is False
    assert db.sismember("none", "a") is False
    assert db.srem("s", "a", "z") == 1
    assert db.srem("s", "b") == 1 and db.exists("s") == 0
    db.set("str", "x")
    with pytest.raises(relis.WrongTypeError):
        db.sadd("str", "a")


def test_zadd_and_ranges(db):
    assert db.zadd("z", {"a": 1, "b": 2.5, "c": "3"}) == 3
    assert db.zrange("z", 0, -1) == [b"a", b"b", b"c"]
    assert db.zrange("z", 0, -1, withscores=True) == [(b"a", 1.0), (b"b", 2.5), (b"c", 3.0)]
    assert all(isinstance(s, float) for _, s in db.zrange("z", 0, -1, withscores=True))
    assert db.zrange("z", 0, 1, desc=True, withscores=True) == [(b"c", 3.0), (b"b", 2.5)]
    assert db.zrange("z", 3, "(1", desc=True, byscore=True) == [b"c", b"b"]
    assert db.zrange("z", "+inf", "-inf", desc=True, byscore=True, offset=1, num=1) == [b"b"]
    assert db.zrangebyscore("z", 1, 2.5) == [b"a", b"b"]
    assert db.zrangebyscore("z", "(1", "+inf", withscores=True) == [(b"b", 2.5), (b"c", 3.0)]
    assert db.zrangebyscore("z", "-inf", "+inf", start=1, num=1) == [b"b"]
    with pytest.raises(relis.DataError) as e:
        db.zrangebyscore("z", 1, 3, start=1)
    assert str(e.value) == "``start`` and ``num`` must both be specified"
    with pytest.raises(relis.ResponseError) as e:
        db.zrangebyscore("z", "x", 3)
    assert str(e.value) == "min or max is not a float"
    assert db.zscore("z", "b") == 2.5 and db.zscore("z", "q") is None
    assert db.zincrby("z", 2, "a") == 3.0
    assert db.zcard("z") == 3 and db.zcard("none") == 0
    assert db.zrem("z", "a", "q") == 1
    assert db.zrange("none", 0, -1) == []


def test_zadd_options(db):
    db.zadd("z", {"a": 1})
    assert db.zadd("z", {"a": 5, "b": 1}, ch=True) == 2
    assert db.zadd("z", {"a": 1}, nx=True) == 0 and db.zscore("z", "a") == 5.0
    assert db.zadd("z", {"x": 1}, xx=True) == 0 and db.zscore("z", "x") is None
    assert db.zadd("z", {"a": 3}, gt=True, ch=True) == 0
    assert db.zadd("z", {"a": 3}, lt=True, ch=True) == 1
    assert db.zadd("z", {"a": 1.5}, incr=True) == 4.5
    assert db.zadd("z", {"a": 1}, incr=True, nx=True) is None
    assert db.zadd("z", {"inf": float("inf")}) == 1
    assert db.zscore("z", "inf") == math.inf
    with pytest.raises(relis.ResponseError) as e:
        db.zadd("z", {"inf": float("-inf")}, incr=True)
    assert str(e.value) == "resulting score is not a number (NaN)"
    for kw, msg in [
        (dict(nx=True, xx=True), "ZADD allows either 'nx' or 'xx', not both"),
        (dict(gt=True, lt=True), "ZADD allows either 'gt' or 'lt', not both"),
        (dict(nx=True, gt=True), "Only one of 'nx', 'lt', or 'gr' may be defined."),
    ]:
        with pytest.raises(relis.DataError) as e:
            db.zadd("z", {"a": 1}, **kw)
        assert str(e.value) == msg
    with pytest.raises(relis.DataError) as e:
        db.zadd("z", {"a": 1, "b": 2}, incr=True)
    assert str(e.value) == "ZADD option 'incr' only works when passing a single element/score pair"
    with pytest.raises(relis.DataError) as e:
        db.zadd("z", {})
    assert str(e.value) == "ZADD requires at least one element/score pair"
    for bad in ("x", float("nan")):
        with pytest.raises(relis.ResponseError) as e:
            db.zadd("z", {"a": bad})
        assert str(e.value) == "value is not a valid float"
    db.set("s", "x")
    with pytest.raises(relis.WrongTypeError):
        db.zadd("s", {"a": 1})
    with pytest.raises(relis.WrongTypeError):
        db.zrange("s", 0, -1)
