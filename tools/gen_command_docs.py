"""Writes crates/relis-server/src/cmd/server/redis_docs.resp: redis-server 7.0.15's COMMAND DOCS.

COMMAND DOCS in Relis answers, for every command Redis 7.0 has, what Redis answers (summary,
since, group, complexity, history, doc_flags, deprecation, the whole `arguments` tree), read
from this file; the file is Redis's own RESP3 reply to `COMMAND DOCS <name>` for each top-level
command, in name order, concatenated.

Regenerate (only when moving to another Redis version):
    redis-server --port 7815 --save '' --appendonly no &
    python3 tools/gen_command_docs.py 7815
"""

import os
import sys

import resp3

OUT = os.path.join(
    os.path.dirname(__file__), "..", "crates", "relis-server", "src", "cmd", "server",
    "redis_docs.resp",
)


def main():
    c = resp3.Conn(int(sys.argv[1]))
    version = dict(c.call("HELLO", "3"))["version"]
    if version != "7.0.15":
        sys.exit("expected redis-server 7.0.15, got %s" % version)
    names = sorted(n for n in c.call("COMMAND", "LIST") if "|" not in n)
    with open(OUT, "wb") as f:
        for n in names:
            f.write(c.call_raw("COMMAND", "DOCS", n))
    print("%d commands written to %s" % (len(names), os.path.normpath(OUT)))


main()
