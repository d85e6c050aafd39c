#!/usr/bin/env python3
"""Opens N connections to a Redis-protocol server, sends each one PING (so the server has read
from it, as from any real client), keeps them all open and idle, and prints the server's
resident memory (VmRSS from /proc/<pid>/status) before and after. Used by bench/idle.sh."""
import socket
import sys
import time


def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise SystemExit(f"no VmRSS for {pid}")


def main():
    port, pid, n, settle = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    time.sleep(settle)
    before = rss(pid)
    conns = []
    for i in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"*1\r\n$4\r\nPING\r\n")
        conns.append(s)
    for s in conns:
        got = b""
        while not got.endswith(b"\r\n"):
            chunk = s.recv(64)
            if not chunk:
                raise SystemExit(f"connection closed: {got!r}")
            got += chunk
        if got != b"+PONG\r\n":
            raise SystemExit(f"unexpected reply {got!r}")
    connected = rss(pid)
    # Idle for a while: Redis shrinks an idle client's buffers in its cron (every 100 ms, after
    # 2 s idle); Relis frees them as soon as a client goes quiet.
    time.sleep(settle)
    after = rss(pid)
    per_conn = (after - before) / n
    print(f"{n} idle connections: RSS {before / 2**20:.1f} MiB before, "
          f"{connected / 2**20:.1f} MiB just after, {after / 2**20:.1f} MiB after {settle:.0f} s idle: "
          f"{per_conn:.0f} bytes per connection")
    for s in conns:
        s.close()


main()
