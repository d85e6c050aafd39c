"""Threads, a relis-server on the same file, and a process killed right after a write."""

import os
import signal
import subprocess
import sys
import threading
import time

import relis


def test_threads_writing_at_once(db):
    threads, per = 8, 200
    errors = []

    def work(n):
        try:
            for i in range(per):
                db.incr("counter")
                db.set(f"t{n}:{i}", i)
                db.rpush("log", n)
                db.hincrby("per-thread", str(n), 1)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []
    assert db.get("counter") == str(threads * per).encode()
    assert db.llen("log") == threads * per
    assert db.hgetall("per-thread") == {str(n).encode(): str(per).encode() for n in range(threads)}
    assert db.dbsize() == threads * per + 3


def test_the_gil_is_released_while_the_engine_works(db):
    # A statement that keeps the engine busy; meanwhile this thread must keep running Python.
    heavy = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?) SELECT count(*) FROM c"
    took = []

    def query():
        t = time.monotonic()
        db.query(heavy, 300_000)
        took.append(time.monotonic() - t)

    t = threading.Thread(target=query)
    last, gap = time.monotonic(), 0.0
    t.start()
    while t.is_alive():
        now = time.monotonic()
        gap = max(gap, now - last)
        last = now
    t.join()
    assert took and took[0] > 0.05, f"the statement was too quick to tell ({took})"
    # Holding the GIL for the statement would stop this loop for all of it.
    assert gap < took[0] / 2, f"longest pause {gap:.3f}s of a {took[0]:.3f}s statement"


def test_relis_server_reads_what_python_wrote(tmp_path, server_on, clock):
    path = str(tmp_path / "relis.db")
    with relis.open(path) as db:
        db.set("s", b"\x00bytes")
        db.set("ttl", "v", ex=1000)
        db.hset("h", mapping={"f": 1, "g": "two"})
        db.rpush("l", "a", "b", "c")
        db.sadd("set", "x", "y")
        db.zadd("z", {"m": 1.5, "n": -2})
        db.select(3).set("in3", "yes")
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        db.execute("INSERT INTO notes (body) VALUES (?)", "hello")
    server = server_on(tmp_path)
    r = server.client()
    assert r.get("s") == b"\x00bytes"
    assert 990 <= r.ttl("ttl") <= 1000
    assert r.hgetall("h") == {b"f": b"1", b"g": b"two"}
    assert r.lrange("l", 0, -1) == [b"a", b"b", b"c"]
    assert r.smembers("set") == {b"x", b"y"}
    assert r.zrange("z", 0, -1, withscores=True) == [(b"n", -2.0), (b"m", 1.5)]
    assert r.type("l") == b"list"
    r.select(3)
    assert r.get("in3") == b"yes"
    assert r.execute_command("SQL.QUERY", "SELECT body FROM notes") is not None


def test_python_and_relis_server_on_the_file_at_once(tmp_path, server_on):
    path = str(tmp_path / "relis.db")
    db = relis.open(path)
    db.set("from-python", "1")
    server = server_on(tmp_path)
    r = server.client()
    assert r.get("from-python") == b"1"
    r.set("from-server", "2")
    r.incr("shared")
    assert db.get("from-server") == b"2"
    for _ in range(50):
        db.incr("shared")
        r.incr("shared")
    assert db.get("shared") == b"101" and r.get("shared") == b"101"
    db.close()


CHILD = r"""
import sys, relis
db = relis.open(sys.argv[1])
i = 0
while True:
    db.set(f"k{i}", f"v{i}")
    db.hset("h", f"f{i}", i)
    sys.stdout.write(f"{i}\n")
    sys.stdout.flush()
    i += 1
"""


def test_sigkill_after_a_returned_write_loses_nothing(tmp_path):
    path = str(tmp_path / "relis.db")
    child = subprocess.Popen([sys.executable, "-c", CHILD, path], stdout=subprocess.PIPE, text=True)
    acked = -1
    for line in child.stdout:
        acked = int(line)
        if acked >= 300:
            break
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert acked >= 300
    with relis.open(path) as db:
        for i in range(acked + 1):
            assert db.get(f"k{i}") == f"v{i}".encode(), f"k{i} was acknowledged but is gone"
        assert db.hget("h", f"f{acked}") == str(acked).encode()


def test_a_forked_child_gets_an_error_not_a_hang(db):
    db.set("k", "v")
    pid = os.fork()
    if pid == 0:  # the child: the engine's threads stayed in the parent
        code = 1
        try:
            db.get("k")
        except relis.RedisError as e:
            code = 0 if "opened before fork()" in str(e) else 2
        except BaseException:
            code = 3
        try:
            db.close()  # must not wait for threads this process does not have
        except BaseException:
            code = 4
        os._exit(code)
    deadline = time.monotonic() + 20
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise AssertionError("the forked child hung")
        time.sleep(0.01)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    assert db.get("k") == b"v"
