"""Pipelines and transactions: queued, then committed at once."""

import threading

import pytest

import relis


def test_transaction_commits_when_the_block_ends(db):
    with db.transaction() as t:
        assert t.set("a", 1) is t  # calls chain, as in redis-py
        t.incr("a").hset("h", "f", "v").rpush("l", 1, 2)
        assert len(t) == 4
        assert db.get("a") is None  # nothing runs before the block ends
    assert db.get("a") == b"2" and db.hget("h", "f") == b"v" and db.llen("l") == 2


def test_execute_returns_results_in_order(db):
    p = db.pipeline()
    p.set("k", "v").get("k").incr("n").zadd("z", {"m": 1.5}).zrange("z", 0, -1, withscores=True)
    assert p.execute() == [True, b"v", 1, 1, [(b"m", 1.5)]]
    assert p.execute() == []  # the queue was emptied


def test_a_failed_command_does_not_undo_the_others(db):
    p = db.pipeline()
    p.set("pb", 1).lpush("pb", 1).incr("pb")
    res = p.execute(raise_on_error=False)
    assert res[0] is True and res[2] == 2
    assert isinstance(res[1], relis.WrongTypeError)
    p.set("pc", 1).lpush("pc", 1).incr("pc")
    with pytest.raises(relis.WrongTypeError) as e:
        p.execute()
    assert str(e.value) == (
        "Command # 2 (LPUSH pc) of pipeline caused error: "
        "WRONGTYPE Operation against a key holding the wrong kind of value"
    )
    assert db.get("pc") == b"2"


def test_an_exception_in_the_block_discards_the_queue(db):
    with pytest.raises(KeyError):
        with db.transaction() as t:
            t.set("a", 1)
            raise KeyError("stop")
    assert db.get("a") is None


def test_readers_never_see_half_a_transaction(db):
    db.set("a", 0)
    db.set("b", 0)
    stop = threading.Event()
    torn = []

    def reader():
        while not stop.is_set():
            p = db.pipeline()
            a, b = p.get("a").get("b").execute()
            if a != b:
                torn.append((a, b))

    t = threading.Thread(target=reader)
    t.start()
    for _ in range(200):
        with db.transaction() as tx:
            tx.incr("a").incr("b")
    stop.set()
    t.join()
    assert torn == []
    assert db.get("a") == b"200"


def test_what_a_pipeline_cannot_queue(db):
    p = db.pipeline()
    for call in (lambda: p.query("SELECT 1"), lambda: p.select(1), lambda: p.scan_iter()):
        with pytest.raises(relis.RedisError):
            call()
