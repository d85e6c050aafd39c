#!/usr/bin/env bash
# Memory held by idle connections: opens 10,000 connections (IDLE_CONNS) to a release
# relis-server and to redis-server, one after the other in the same run, each connection sending
# one PING and then staying idle, and prints each server's resident memory before and after, and
# the bytes per idle connection. Usage: bench/idle.sh   (RELIS_BIN=... to use a built binary)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh

N="${IDLE_CONNS:-10000}"
SETTLE="${IDLE_SETTLE:-5}"
# Each connection is a descriptor in the server and in the client.
ulimit -n $((N + 1000)) 2>/dev/null || ulimit -n "$(ulimit -Hn)"
if [ "$(ulimit -n)" -lt $((N + 100)) ]; then
    echo "cannot raise the open-file limit to $((N + 100)) (hard limit $(ulimit -Hn))" >&2
    exit 1
fi

measure() {
    local name=$1 port=$2 pid=$3
    printf '%-14s ' "$name"
    python3 bench/idle.py "$port" "$pid" "$N" "$SETTLE"
}

mkdir -p "$TMP/relis" "$TMP/redis"
RELIS_PORT="$(free_port)"
"$RELIS_BIN" --port "$RELIS_PORT" --dir "$TMP/relis" --logfile "$TMP/relis.log" \
    --maxclients $((N + 100)) &
PIDS+=($!)
wait_ready "$RELIS_PORT"
measure "relis-server" "$RELIS_PORT" "${PIDS[-1]}"

REDIS_PORT="$(free_port)"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$TMP/redis" --save '' \
    --appendonly no --daemonize no --logfile "$TMP/redis.log" --maxclients $((N + 100)) &
PIDS+=($!)
wait_ready "$REDIS_PORT"
measure "redis-server $(redis_version)" "$REDIS_PORT" "${PIDS[-1]}"
