"""SQL over the same file: execute, query (tuples or dicts), prepared statements, the views."""

import pytest

import relis


def test_execute_and_query(db):
    assert db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, score REAL, raw BLOB)") == 0
    assert db.execute("INSERT INTO t (name, score, raw) VALUES (?, ?, ?), (?, ?, ?)",
                      "ann", 1.5, b"\x00", "bob", None, None) == 2
    assert db.query("SELECT id, name, score, raw FROM t ORDER BY id") == [
        (1, "ann", 1.5, b"\x00"),
        (2, "bob", None, None),
    ]
    assert db.query("SELECT name FROM t WHERE id = :id", {"id": 2}, dicts=True) == [{"name": "bob"}]
    assert db.execute("UPDATE t SET score = 2 WHERE name = ?", "bob") == 1
    assert db.execute("INSERT INTO t (name) VALUES ('cy') RETURNING id") == [(3,)]


def test_sql_errors(db):
    with pytest.raises(relis.SqlError) as e:
        db.query("SELEC 1")
    assert "syntax error" in str(e.value)
    assert isinstance(e.value, relis.ResponseError)
    with pytest.raises(relis.SqlError) as e:
        db.query("CREATE TABLE x (a)")
    assert str(e.value) == "statement would write: only reads are allowed here"
    with pytest.raises(relis.SqlError) as e:
        db.query("SELECT ?", 1, 2)
    assert str(e.value) == "wrong number of parameters: the statement takes 1, got 2"
    with pytest.raises(relis.DataError):
        db.query("SELECT ?", [1])
    with pytest.raises(relis.SqlError):
        db.execute("ATTACH DATABASE 'x.db' AS x")


def test_prepared_statements(db):
    db.execute("CREATE TABLE p (a INTEGER, b TEXT)")
    add = db.prepare("add", "INSERT INTO p VALUES (?1, ?2)")
    assert (add.name, add.params, add.readonly) == ("add", 2, False)
    assert add.run(1, "one") == 1 and add(2, "two") == 1
    get = db.prepare("get", "SELECT b FROM p WHERE a = ?")
    assert get.readonly and get.run(2) == [("two",)]
    assert db.run("get", 1, dicts=True) == [{"b": "one"}]
    assert db.unprepare("get") is True and db.unprepare("get") is False
    with pytest.raises(relis.SqlError) as e:
        db.run("get", 1)
    assert str(e.value) == "no prepared statement named 'get'"


def test_redis_views(db):
    db.set("s", "v")
    db.hset("h", mapping={"f": "1"})
    db.rpush("l", "x", "y")
    db.sadd("set", "m")
    db.zadd("z", {"m": 2.5})
    assert db.query("SELECT key, value FROM redis_strings") == [("s", "v")]
    assert db.query("SELECT key, field, value FROM redis_hashes") == [("h", "f", "1")]
    assert [r[0] for r in db.query("SELECT key FROM redis_lists")] == ["l", "l"]
    assert db.query("SELECT key, member FROM redis_sets") == [("set", "m")]
    assert db.query("SELECT key, member, score FROM redis_zsets") == [("z", "m", 2.5)]
    assert sorted(r[0] for r in db.query("SELECT key FROM redis_keys")) == ["h", "l", "s", "set", "z"]
