"""Strings and keys: values, return types, errors and expiry, as redis-py returns them."""

import datetime

import pytest

import relis

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


def test_get_set_bytes_in_bytes_out(db):
    assert db.get("missing") is None
    assert db.set("k", b"\x00\xffbin") is True
    assert db.get("k") == b"\x00\xffbin"
    assert db.get(b"k") == b"\x00\xffbin"
    # redis-py's encoding of numbers: int as decimal text, float as its repr.
    db.set("i", 42)
    db.set("f", 1.5)
    db.set("e", 1e20)
    assert (db.get("i"), db.get("f"), db.get("e")) == (b"42", b"1.5", b"1e+20")


def test_set_options(db):
    assert db.set("k", "v1") is True
    assert db.set("k", "v2", nx=True) is None
    assert db.get("k") == b"v1"
    assert db.set("new", "x", xx=True) is None
    assert db.get("new") is None
    assert db.set("k", "v3", xx=True) is True
    assert db.set("k", "v4", get=True) == b"v3"
    assert db.set("absent", "v", get=True) is None
    db.rpush("list", "a")
    with pytest.raises(relis.WrongTypeError) as e:
        db.set("list", "v", get=True)
    assert str(e.value) == WRONGTYPE
    assert db.lrange("list", 0, -1) == [b"a"]


def test_set_refuses_what_redis_py_refuses(db):
    with pytest.raises(relis.DataError) as e:
        db.set("k", "v", ex=1, px=2)
    assert str(e.value) == "``ex``, ``px``, ``exat``, ``pxat``, and ``keepttl`` are mutually exclusive."
    with pytest.raises(relis.DataError):
        db.set("k", "v", keepttl=True, ex=3)
    with pytest.raises(relis.DataError) as e:
        db.set("k", "v", nx=True, xx=True)
    assert str(e.value).startswith("``nx``, ``xx``")
    for bad, name in [(None, "NoneType"), (True, "bool"), ([1], "list")]:
        with pytest.raises(relis.DataError) as e:
            db.set("k", bad)
        assert str(e.value) == (
            f"Invalid input of type: '{name}'. Convert to a bytes, string, int or float first."
        )
    for ex in (0, -1):
        with pytest.raises(relis.ResponseError) as e:
            db.set("k", "v", ex=ex)
        assert str(e.value) == "invalid expire time in 'set' command"
    with pytest.raises(relis.ResponseError) as e:
        db.set("k", "v", ex=2**62)
    assert str(e.value) == "invalid expire time in 'set' command"
    assert db.get("k") is None


def test_set_expiry_on_the_clock(cdb, clock):
    cdb.set("ex", "v", ex=10)
    cdb.set("px", "v", px=1500)
    cdb.set("td", "v", ex=datetime.timedelta(seconds=20))
    cdb.set("at", "v", pxat=clock.now_ms + 3000)
    assert cdb.ttl("ex") == 10 and cdb.pttl("px") == 1500 and cdb.ttl("td") == 20
    assert cdb.pttl("at") == 3000
    cdb.set("ex", "v2", keepttl=True)
    assert cdb.ttl("ex") == 10
    clock.advance(1500)
    assert cdb.get("px") is None and cdb.ttl("px") == -2
    assert cdb.get("ex") == b"v2"
    clock.advance(8500)
    assert cdb.get("ex") is None
    assert cdb.exists("ex", "td") == 1
    cdb.set("td", "plain")
    assert cdb.ttl("td") == -1


def test_incr(db):
    assert db.incr("n") == 1
    assert db.incr("n", 5) == 6
    assert db.incrby("n", -10) == -4
    assert db.decr("n") == -5
    assert db.decrby("n", 5) == -10
    assert isinstance(db.incr("n"), int)
    db.set("s", "x")
    with pytest.raises(relis.ResponseError) as e:
        db.incr("s")
    assert str(e.value) == "value is not an integer or out of range"
    assert type(e.value) is relis.ResponseError
    db.set("big", 2**63 - 1)
    with pytest.raises(relis.ResponseError) as e:
        db.incr("big")
    assert str(e.value) == "increment or decrement would overflow"
    with pytest.raises(relis.ResponseError) as e:
        db.incrby("n", 1.5)
    assert str(e.value) == "value is not an integer or out of range"
    db.rpush("l", "a")
    with pytest.raises(relis.WrongTypeError):
        db.incr("l")


def test_delete_exists_type(db):
    db.set("a", 1)
    db.rpush("b", 1)
    assert db.exists("a", "a", "b", "nope") == 3
    assert db.type("a") == b"string" and db.type("b") == b"list" and db.type("x") == b"none"
    assert db.delete("a", "b", "nope") == 2
    assert db.exists("a") == 0
    with pytest.raises(relis.ResponseError) as e:
        db.delete()
    assert str(e.value) == "wrong number of arguments for 'del' command"


def test_expire_and_ttl(cdb, clock):
    assert cdb.expire("nope", 10) is False
    cdb.set("k", "v")
    assert cdb.ttl("k") == -1 and cdb.ttl("nope") == -2 and cdb.pttl("nope") == -2
    assert cdb.expire("k", 100) is True
    assert cdb.ttl("k") == 100
    assert cdb.expire("k", 50, nx=True) is False
    assert cdb.expire("k", 50, gt=True) is False
    assert cdb.expire("k", 50, lt=True) is True
    assert cdb.expire("k", datetime.timedelta(seconds=70), xx=True) is True
    assert cdb.ttl("k") == 70
    assert cdb.pexpire("k", 1500) is True
    assert cdb.ttl("k") == 2  # rounded, as Redis does
    with pytest.raises(relis.ResponseError) as e:
        cdb.expire("k", 10, gt=True, lt=True)
    assert str(e.value) == "GT and LT options at the same time are not compatible"
    with pytest.raises(relis.ResponseError) as e:
        cdb.expire("k", 10, nx=True, xx=True)
    assert str(e.value) == "NX and XX, GT or LT options at the same time are not compatible"
    with pytest.raises(relis.ResponseError) as e:
        cdb.expire("k", 2**62)
    assert str(e.value) == "invalid expire time in 'expire' command"
    clock.advance(1500)
    assert cdb.get("k") is None and cdb.exists("k") == 0
    cdb.set("gone", "v")
    assert cdb.expire("gone", -1) is True
    assert cdb.get("gone") is None


def test_keys_and_scan_iter(db):
    names = [f"user:{i}" for i in range(250)] + ["other"]
    with db.pipeline() as p:
        for n in names:
            p.set(n, 1)
    db.rpush("user:list", "x")
    assert sorted(db.keys()) == sorted([n.encode() for n in names] + [b"user:list"])
    assert db.keys("oth*") == [b"other"]
    got = list(db.scan_iter(match="user:*", count=7))
    assert sorted(got) == sorted([n.encode() for n in names if n != "other"] + [b"user:list"])
    assert list(db.scan_iter(_type="list")) == [b"user:list"]
    assert list(db.scan_iter(_type="nosuchtype")) == []
    assert db.dbsize() == 252


def test_select_is_another_keyspace(db):
    one = db.select(1)
    one.set("k", "in 1")
    assert db.get("k") is None and one.get("k") == b"in 1" and one.db == 1 and db.db == 0
    with pytest.raises(relis.ResponseError) as e:
        db.select(16)
    assert str(e.value) == "DB index is out of range"


def test_decode_responses(path):
    d = relis.open(path, decode_responses=True)
    d.set("k", "välue")
    d.hset("h", mapping={"f": "v"})
    d.zadd("z", {"m": 1})
    assert d.get("k") == "välue"
    assert d.hgetall("h") == {"f": "v"}
    assert d.zrange("z", 0, -1, withscores=True) == [("m", 1.0)]
    assert d.type("k") == "string"
    d.set("bin", b"\xff")
    with pytest.raises(UnicodeDecodeError):
        d.get("bin")
    d.close()


def test_closed_handle_raises(path):
    d = relis.open(path)
    d.set("k", "v")
    d.close()
    with pytest.raises(relis.ConnectionError):
        d.get("k")
    with relis.open(path) as again:
        assert again.get("k") == b"v"


def test_not_a_relis_file(tmp_path):
    p = tmp_path / "junk.db"
    p.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(relis.RedisError):
        relis.open(str(p))


def test_open_memory(clock):
    m = relis.open_memory(clock=clock)
    m.set("k", "v", ex=1)
    assert m.get("k") == b"v" and m.path is None
    clock.advance(1000)
    assert m.get("k") is None
    with pytest.raises(relis.DataError):
        relis.open("x.db", durability="sometimes")
