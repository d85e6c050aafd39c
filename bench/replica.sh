#!/usr/bin/env bash
# Relis as a replica of a redis-server master (issue 20's bars).
#
# Part one, full sync: a redis-server master filled with RDB_KEYS strings of RDB_SIZE bytes
# (DEBUG POPULATE) and a hash, a list, a set and a sorted set of RDB_KEYS/10 elements each (the
# data set of bench/rdb.sh). Beside it: redis-server's own load of the same data at start-up
# ("DB loaded from disk" in its log, the issue's yardstick), a redis-server replica's full sync,
# and relis-server's full sync: the time from REPLICAOF until INFO replication says
# master_link_status:up and master_sync_in_progress:0 and DBSIZE equals the master's (so it
# includes the master's RDB generation and the transfer, which redis-server's load does not).
# ROUNDS rounds (2), interleaved: the machine is shared.
#
# Part two, steady replication: redis-benchmark SETs against the master (STEADY_N requests,
# STEADY_CLIENTS clients, STEADY_PIPELINE deep, keys from 100,000) while a sampler reads the
# master's master_repl_offset and relis's slave_repl_offset every 100 ms. Reported: the rate the
# master took, the largest lag in bytes (master offset minus replica offset, sampled together),
# and the largest lag in seconds (for each master sample, the time until the replica's offset
# reached it).
#
# Usage: bench/replica.sh                                  (1,000,000 keys of 100 bytes)
#        RDB_KEYS=5000000 bench/replica.sh
#        RDB_KEYS=20000 STEADY_N=100000 RELIS_BIN=target/debug/relis-server bench/replica.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh

N="${RDB_KEYS:-1000000}"
SIZE="${RDB_SIZE:-100}"
ROUNDS="${ROUNDS:-2}"
STEADY_N="${STEADY_N:-1500000}"
STEADY_CLIENTS="${STEADY_CLIENTS:-50}"
STEADY_PIPELINE="${STEADY_PIPELINE:-1}"

now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.3f}')"; }
rate() { python3 -c "print(f'{$1 / max($2, 1e-9):,.0f}')"; }
field() { redis-cli -p "$1" info "$2" | tr -d '\r' | sed -n "s/^$3:\(.*\)/\1/p"; }

start_redis() { # PORT DIR [ARGS...]: a redis-server with no persistence of its own
    local port=$1 dir=$2
    shift 2
    mkdir -p "$dir"
    redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save '' --appendonly no \
        --daemonize no --logfile "$dir/log" "$@" &
    PIDS+=($!)
    wait_ready "$port"
}

echo "filling the master ($N keys of $SIZE bytes + 4 collections)..." >&2
MPORT="$(free_port)"
# No output buffer limit for replicas and a large backlog: a lagging replica is measured, not
# disconnected; no diskless-sync delay (5 s by default, waiting for more replicas).
start_redis "$MPORT" "$TMP/master" --enable-debug-command yes \
    --client-output-buffer-limit 'replica 0 0 0' --repl-backlog-size 512mb \
    --repl-diskless-sync-delay 0
redis-cli -p "$MPORT" debug populate "$N" key "$SIZE" >/dev/null
M=$((N / 10))
redis-benchmark -p "$MPORT" -q -r "$M" -n "$M" -t hset,lpush,sadd,zadd >/dev/null
redis-cli -p "$MPORT" save >/dev/null
KEYS="$(redis-cli -p "$MPORT" dbsize)"
FILE="$TMP/master/dump.rdb"
BYTES="$(stat -c %s "$FILE")"
echo "master: $BYTES bytes of RDB, $KEYS keys" >&2

# redis-server's own load of the file the master saved; sets RESULT to its seconds. (The
# functions here set RESULT rather than print: in a $(...) subshell the servers they start
# would not reach PIDS, so not the cleanup.)
redis_load() {
    local dir="$TMP/load$1" port
    mkdir -p "$dir"
    cp "$FILE" "$dir/dump.rdb"
    port="$(free_port)"
    start_redis "$port" "$dir"
    RESULT="$(sed -n 's/.*DB loaded from disk: \([0-9.]*\) seconds.*/\1/p' "$dir/log")"
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
    rm -rf "$dir"
}

# Waits until the replica on PORT has synced in full; prints the seconds since T0.
wait_synced() {
    local port=$1 t0=$2 info
    while :; do
        info="$(redis-cli -p "$port" info replication 2>/dev/null | tr -d '\r')"
        if grep -q '^master_link_status:up' <<<"$info" &&
            grep -q '^master_sync_in_progress:0' <<<"$info" &&
            [ "$(redis-cli -p "$port" dbsize 2>/dev/null)" = "$KEYS" ]; then
            elapsed "$t0" "$(now)"
            return
        fi
        sleep 0.1
    done
}

# A full sync into a fresh TARGET (redis or relis) server; sets RESULT to the seconds it took.
full_sync() {
    local target=$1 round=$2 dir="$TMP/$1-replica$2" port t0 s
    port="$(free_port)"
    mkdir -p "$dir"
    if [ "$target" = redis ]; then
        start_redis "$port" "$dir"
    else
        "$RELIS_BIN" --port "$port" --dir "$dir" --logfile "$dir/log" &
        PIDS+=($!)
        wait_ready "$port"
    fi
    t0="$(now)"
    redis-cli -p "$port" replicaof 127.0.0.1 "$MPORT" >/dev/null
    s="$(wait_synced "$port" "$t0")"
    if [ "$target" = relis ] && [ "$round" = "$ROUNDS" ]; then
        # The last relis replica stays for part two.
        RELIS_PORT="$port"
        RELIS_DIR="$dir"
    else
        redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
        sleep 0.5
        rm -rf "$dir"
    fi
    RESULT="$s"
}

declare -a LOADS SYNCS RSYNCS
for round in $(seq 1 "$ROUNDS"); do
    echo "round $round: redis-server load" >&2
    redis_load "$round"
    LOADS+=("$RESULT")
    echo "round $round: redis-server replica full sync" >&2
    full_sync redis "$round"
    RSYNCS+=("$RESULT")
    echo "round $round: relis-server replica full sync" >&2
    full_sync relis "$round"
    SYNCS+=("$RESULT")
done

# Part two: steady replication into the last relis replica.
echo "steady: $STEADY_N SETs, -c $STEADY_CLIENTS -P $STEADY_PIPELINE, against the master" >&2
SAMPLES="$TMP/samples"
python3 - "$MPORT" "$RELIS_PORT" "$SAMPLES" <<'PY' &
import socket, sys, time
mport, rport, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]

def conn(port):
    s = socket.create_connection(("127.0.0.1", port))
    return s, s.makefile("rb")

def info(c, name):
    s, f = c
    s.sendall(b"*2\r\n$4\r\nINFO\r\n$11\r\nreplication\r\n")
    n = int(f.readline()[1:])
    body = f.read(n + 2).decode()
    for line in body.split("\r\n"):
        if line.startswith(name + ":"):
            return int(line.split(":")[1])
    return -1

m, r = conn(mport), conn(rport)
with open(out, "w") as o:
    # Until killed: a line "time master_offset replica_offset" every 100 ms.
    while True:
        t = time.time()
        mo = info(m, "master_repl_offset")
        ro = info(r, "slave_repl_offset")
        o.write(f"{t:.3f} {mo} {ro}\n")
        o.flush()
        time.sleep(max(0.0, 0.1 - (time.time() - t)))
PY
SAMPLER=$!
PIDS+=("$SAMPLER")
sleep 0.5
t0="$(now)"
redis-benchmark -p "$MPORT" -q -t set -r 100000 -n "$STEADY_N" -c "$STEADY_CLIENTS" \
    -P "$STEADY_PIPELINE" >/dev/null
t1="$(now)"
BENCH_S="$(elapsed "$t0" "$t1")"
# Until the replica has everything the master had when the benchmark ended (60 s at most).
FINAL="$(field "$MPORT" replication master_repl_offset)"
for _ in $(seq 1 600); do
    [ "$(field "$RELIS_PORT" replication slave_repl_offset)" -ge "$FINAL" ] && break
    sleep 0.1
done
CAUGHT_S="$(elapsed "$t1" "$(now)")"
sleep 0.3
kill "$SAMPLER"
wait "$SAMPLER" 2>/dev/null || true
MASTER_KEYS="$(redis-cli -p "$MPORT" dbsize)"
# A link made again during the steady part (a full or partial resync) would explain a lag.
RESYNCS="$(grep -c -E 'Full resync from master|Successful partial resynchronization' "$RELIS_DIR/log" || true)"
if [ "$RESYNCS" != 1 ]; then
    echo "relis-server's link was made again during the steady part; its log:" >&2
    grep -v ' DEBUG ' "$RELIS_DIR/log" | tail -20 >&2
fi
RELIS_KEYS="$(redis-cli -p "$RELIS_PORT" dbsize)"
LAG="$(python3 - "$SAMPLES" "$t0" "$t1" <<'PY'
import sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if len(l.split()) == 3]
t0, t1 = float(sys.argv[2]), float(sys.argv[3])
during = [r for r in rows if t0 <= r[0] <= t1]
max_bytes = max((m - r for _, m, r in during), default=0)
# For each master sample during the benchmark: when did the replica reach that offset?
max_s = 0.0
for t, m, _ in during:
    reached = next((u for u, _, r in rows if u >= t and r >= m), None)
    lag = (reached - t) if reached is not None else float("inf")
    max_s = max(max_s, lag)
print(f"{int(max_bytes)} {max_s:.1f} {len(during)}")
PY
)"
read -r LAG_BYTES LAG_S NSAMPLES <<<"$LAG"

echo
echo "RDB file: $BYTES bytes, $KEYS keys (redis-server $(redis_version)); $ROUNDS interleaved rounds"
printf '%-36s' "" && for r in $(seq 1 "$ROUNDS"); do printf '%16s' "round $r"; done && echo
row() { # LABEL SECONDS...
    printf '%-36s' "$1"
    shift
    for s in "$@"; do printf '%14s s' "$s"; done
    echo
}
row "redis-server load from disk" "${LOADS[@]}"
row "redis-server replica full sync" "${RSYNCS[@]}"
row "relis-server replica full sync" "${SYNCS[@]}"
printf '%-36s' "relis sync rate / redis load rate"
for i in $(seq 0 $((ROUNDS - 1))); do printf '%16s' "$(ratio "${LOADS[$i]}" "${SYNCS[$i]}")"; done
echo
printf '%-36s' "relis sync keys/s"
for i in $(seq 0 $((ROUNDS - 1))); do printf '%16s' "$(rate "$KEYS" "${SYNCS[$i]}")"; done
echo
echo
echo "steady: $STEADY_N SETs in $BENCH_S s = $(rate "$STEADY_N" "$BENCH_S") SET/s on the master" \
    "(-c $STEADY_CLIENTS -P $STEADY_PIPELINE)"
echo "        max lag $LAG_BYTES bytes, $LAG_S s ($NSAMPLES samples, 100 ms apart);" \
    "caught up $CAUGHT_S s after the benchmark ended; dbsize master $MASTER_KEYS, relis $RELIS_KEYS;" \
    "syncs in relis's log: $RESYNCS"
