#!/usr/bin/env bash
# Relis vs redis-server, side by side in one run on this machine.
#
# Starts redis-server (appendonly yes, appendfsync everysec: the durable baseline) and a release
# build of relis-server, each in its own temporary directory on a free port, then runs
#   redis-benchmark -c 50 -n 200000 -r 100000 -t set,get,incr,mset
# with -P 1 and -P 16 against both, in interleaved rounds (redis, relis, redis, relis, ...), and
# prints the best requests/s of each and the ratio Relis/Redis.
#
# Usage: bench/compare.sh            (the full run)
#        N=20000 ROUNDS=1 bench/compare.sh   (a quick check)
# Settings (environment): N requests per run (200000), ROUNDS (2), CLIENTS (50), KEYSPACE
# (100000), TESTS (set,get,incr,mset), PIPELINES ("1 16"), RELIS_ARGS (extra relis-server
# arguments, e.g. "--durability full"), RELIS_BIN (a prebuilt binary; skips the build).
set -euo pipefail
cd "$(dirname "$0")/.."

N="${N:-200000}"
ROUNDS="${ROUNDS:-2}"
CLIENTS="${CLIENTS:-50}"
KEYSPACE="${KEYSPACE:-100000}"
TESTS="${TESTS:-set,get,incr,mset}"
PIPELINES="${PIPELINES:-1 16}"
RELIS_ARGS="${RELIS_ARGS:-}"

for tool in redis-server redis-benchmark redis-cli; do
    command -v "$tool" >/dev/null || { echo "$tool is not installed (apt-get install redis-server redis-tools)" >&2; exit 1; }
done

if [ -z "${RELIS_BIN:-}" ]; then
    echo "building relis-server (release)..." >&2
    cargo build --release -q -p relis-server
    RELIS_BIN="$PWD/target/release/relis-server"
fi

TMP="$(mktemp -d)"
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A port nobody listens on (the kernel picks it).
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

wait_ready() {
    local port=$1
    for _ in $(seq 1 200); do
        if [ "$(redis-cli -p "$port" ping 2>/dev/null)" = "PONG" ]; then
            return 0
        fi
        sleep 0.05
    done
    echo "nothing answers PING on port $port" >&2
    exit 1
}

mkdir -p "$TMP/redis" "$TMP/relis"
REDIS_PORT="$(free_port)"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$TMP/redis" \
    --appendonly yes --appendfsync everysec --save '' --daemonize no \
    --logfile "$TMP/redis.log" &
PIDS+=($!)
RELIS_PORT="$(free_port)"
# shellcheck disable=SC2086  # RELIS_ARGS is a list of words on purpose
"$RELIS_BIN" --port "$RELIS_PORT" --dir "$TMP/relis" --logfile "$TMP/relis.log" $RELIS_ARGS &
PIDS+=($!)
wait_ready "$REDIS_PORT"
wait_ready "$RELIS_PORT"

# best[target|pipeline|test] = best requests/s over the rounds.
declare -A best
ORDER=()

run() {
    local target=$1 port=$2 pipeline=$3 line name rps
    while IFS= read -r line; do
        # "SET","123456.79","0.391",...  (the header line starts with "test")
        name="$(cut -d'"' -f2 <<<"$line")"
        rps="$(cut -d'"' -f4 <<<"$line")"
        [ "$name" = "test" ] && continue
        [ -z "$rps" ] && continue
        local key="$target|$pipeline|$name"
        if [ -z "${best[$key]:-}" ]; then
            best[$key]="$rps"
            if [ "$target" = redis ]; then ORDER+=("$pipeline|$name"); fi
        elif awk -v a="$rps" -v b="${best[$key]}" 'BEGIN { exit !(a > b) }'; then
            best[$key]="$rps"
        fi
    done < <(redis-benchmark -p "$port" -c "$CLIENTS" -n "$N" -r "$KEYSPACE" -t "$TESTS" \
        -P "$pipeline" --csv 2>/dev/null)
}

for round in $(seq 1 "$ROUNDS"); do
    for pipeline in $PIPELINES; do
        echo "round $round/$ROUNDS, -P $pipeline: redis-server" >&2
        run redis "$REDIS_PORT" "$pipeline"
        echo "round $round/$ROUNDS, -P $pipeline: relis-server" >&2
        run relis "$RELIS_PORT" "$pipeline"
    done
done

echo
echo "redis-benchmark -c $CLIENTS -n $N -r $KEYSPACE, best of $ROUNDS interleaved rounds; $(nproc) CPUs"
echo "redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/') (appendonly yes, appendfsync everysec) vs relis-server ${RELIS_ARGS:-(defaults)}"
echo
printf '| %-16s | %8s | %12s | %12s | %11s |\n' test pipeline "redis rps" "relis rps" "relis/redis"
printf '|%s|%s|%s|%s|%s|\n' ------------------ ---------- -------------- -------------- -------------
for entry in "${ORDER[@]}"; do
    pipeline="${entry%%|*}"
    name="${entry#*|}"
    r="${best[redis|$pipeline|$name]:-0}"
    l="${best[relis|$pipeline|$name]:-0}"
    ratio="$(awk -v a="$l" -v b="$r" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')"
    printf '| %-16s | %8s | %12.0f | %12.0f | %11s |\n' "$name" "$pipeline" "$r" "$l" "$ratio"
done
