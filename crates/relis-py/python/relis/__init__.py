"""Relis in-process: Redis's data structures and SQL over them, durable in one SQLite file.

    import relis
    db = relis.open("app.db")
    db.set("greeting", "hello")
    db.get("greeting")                      # b'hello'
    with db.transaction() as t:             # one atomic commit when the block ends
        t.incr("visits")
        t.hset("user:1", mapping={"name": "ann"})
    db.query("SELECT key, value FROM redis_strings")

Method names, arguments and return types follow redis-py's, so code can move between this
module and redis-py talking to a relis-server over the same file.
"""

from ._relis import (
    SCHEMA_VERSION,
    ConnectionError,
    DataError,
    Db,
    ManualClock,
    Pipeline,
    RedisError,
    ResponseError,
    ScanIter,
    SqlError,
    Statement,
    WrongTypeError,
    open,
    open_memory,
)

__all__ = [
    "SCHEMA_VERSION",
    "ConnectionError",
    "DataError",
    "Db",
    "ManualClock",
    "Pipeline",
    "RedisError",
    "ResponseError",
    "ScanIter",
    "SqlError",
    "Statement",
    "WrongTypeError",
    "open",
    "open_memory",
]
