#!/usr/bin/env bash
# RDB import rate: `relis-server --import` of a file redis-server wrote, beside redis-server's
# own load of the same file at start-up ("DB loaded from disk" in its log), then the time of
# `relis-server --export` of the result. The data set: RDB_KEYS strings of RDB_SIZE bytes
# (DEBUG POPULATE) and a hash, a list, a set and a sorted set of RDB_KEYS/10 elements each.
# Needs /usr/bin/time for the import's CPU time.
#
# Usage: bench/rdb.sh                                  (1,000,000 keys of 100 bytes)
#        RDB_KEYS=20000 RELIS_BIN=target/debug/relis-server bench/rdb.sh   (a smoke run)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh

N="${RDB_KEYS:-1000000}"
SIZE="${RDB_SIZE:-100}"
mkdir -p "$TMP/redis" "$TMP/load" "$TMP/relis"

now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.3f}')"; }
rate() { python3 -c "print(f'{$1 / max($2, 1e-9):,.0f}')"; }

echo "writing the RDB file ($N keys of $SIZE bytes + 4 collections)..." >&2
PORT="$(free_port)"
redis-server --port "$PORT" --bind 127.0.0.1 --dir "$TMP/redis" --save '' --appendonly no \
    --enable-debug-command yes --daemonize no >/dev/null 2>&1 &
PIDS+=($!)
wait_ready "$PORT"
redis-cli -p "$PORT" debug populate "$N" key "$SIZE" >/dev/null
M=$((N / 10))
redis-benchmark -p "$PORT" -q -r "$M" -n "$M" -t hset,lpush,sadd,zadd >/dev/null
redis-cli -p "$PORT" save >/dev/null
KEYS="$(redis-cli -p "$PORT" dbsize)"
redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1 || true
FILE="$TMP/redis/dump.rdb"
BYTES="$(stat -c %s "$FILE")"
echo "file: $BYTES bytes, $KEYS keys" >&2

# redis-server's own load, from its log.
cp "$FILE" "$TMP/load/dump.rdb"
PORT="$(free_port)"
redis-server --port "$PORT" --bind 127.0.0.1 --dir "$TMP/load" --save '' --appendonly no \
    --daemonize no --logfile "$TMP/load/log" &
PIDS+=($!)
wait_ready "$PORT"
REDIS_S="$(sed -n 's/.*DB loaded from disk: \([0-9.]*\) seconds.*/\1/p' "$TMP/load/log")"
redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1 || true

t0="$(now)"
/usr/bin/time -f '%U %S' -o "$TMP/cpu" "$RELIS_BIN" --dir "$TMP/relis" --loglevel warning --import "$FILE"
t1="$(now)"
IMPORT_CPU="$(awk '{ printf "%.2f", $1 + $2 }' "$TMP/cpu")"
RELIS_S="$(elapsed "$t0" "$t1")"
"$RELIS_BIN" --dir "$TMP/relis" --loglevel warning --export "$TMP/out.rdb"
t2="$(now)"
EXPORT_S="$(elapsed "$t1" "$t2")"

echo
echo "RDB file: $BYTES bytes, $KEYS keys (redis-server $(redis_version))"
printf '%-28s %10s s %14s B/s %12s keys/s\n' \
    "redis-server load" "$REDIS_S" "$(rate "$BYTES" "$REDIS_S")" "$(rate "$KEYS" "$REDIS_S")" \
    "relis-server --import" "$RELIS_S" "$(rate "$BYTES" "$RELIS_S")" "$(rate "$KEYS" "$RELIS_S")" \
    "relis-server --export" "$EXPORT_S" "$(rate "$(stat -c %s "$TMP/out.rdb")" "$EXPORT_S")" "$(rate "$KEYS" "$EXPORT_S")"
echo "import rate / redis-server load rate: $(ratio "$REDIS_S" "$RELIS_S")"
echo "import CPU time (user + system, all threads): $IMPORT_CPU s (on a loaded machine, compare this)"
