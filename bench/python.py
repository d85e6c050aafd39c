"""One Python thread doing GET or SET in a loop: against the embedded engine (relis.open) or
through redis-py to a server. Prints the best ops/s of `rounds` runs of `n` operations.
Run by bench/python.sh; by hand: python bench/python.py embedded PATH get 100000 3."""

import sys
import time


def main():
    target, where, op, n, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    if target == "embedded":
        import relis

        db = relis.open(where)
    else:
        import redis

        db = redis.Redis(port=int(where))
    value = b"x" * 16
    db.set("bench:key", value)
    best = 0.0
    for _ in range(rounds):
        if op == "get":
            get = db.get
            t = time.perf_counter()
            for _ in range(n):
                get("bench:key")
        else:
            set_ = db.set
            t = time.perf_counter()
            for i in range(n):
                set_("bench:key", value)
        best = max(best, n / (time.perf_counter() - t))
    print(f"{best:.0f}")


if __name__ == "__main__":
    main()
