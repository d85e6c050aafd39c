#!/usr/bin/env bash
# Relis vs redis-server, side by side in one run on this machine.
#
# Starts redis-server (appendonly yes, appendfsync everysec: the durable baseline) and a release
# build of relis-server, each in its own temporary directory on a free port, then runs
#   redis-benchmark -c 50 -n 200000 -r 100000 -t set,get,incr,mset
# with -P 1 and -P 16 against both, in interleaved rounds (redis, relis, redis, relis, ...), and
# prints the best requests/s of each and the ratio Relis/Redis.
#
# With PRELOAD=M a second pair of servers is started and filled with M keys of 100 bytes
# (key:000000000000 .. key:<M-1>, redis-benchmark's names, through `redis-cli --pipe`) before
# the timed tests, and each round runs the tests on the fresh pair and then on the preloaded
# one: the table shows both, and the preloaded relis/redis against the fresh one. The tests'
# keys (-r KEYSPACE) are among the preloaded ones; KEYSPACE=M spreads them over all of them.
#
# Usage: bench/compare.sh            (the full run)
#        N=20000 ROUNDS=1 bench/compare.sh   (a quick check)
#        PRELOAD=1000000 TESTS=set,get,zadd PIPELINES=1 bench/compare.sh   (a store of 1M keys)
# Settings (environment): N requests per run (200000), ROUNDS (2), CLIENTS (50), KEYSPACE
# (100000), TESTS (set,get,incr,mset), PIPELINES ("1 16"), PRELOAD (0: none), RELIS_ARGS (extra
# relis-server arguments, e.g. "--durability full"), RELIS_BIN (a prebuilt binary; skips the
# build).
set -euo pipefail
cd "$(dirname "$0")/.."

N="${N:-200000}"
ROUNDS="${ROUNDS:-2}"
CLIENTS="${CLIENTS:-50}"
KEYSPACE="${KEYSPACE:-100000}"
TESTS="${TESTS:-set,get,incr,mset}"
PIPELINES="${PIPELINES:-1 16}"
PRELOAD="${PRELOAD:-0}"
. bench/common.sh
start_servers
if [ "$PRELOAD" -gt 0 ]; then
    FRESH_PORTS=("$REDIS_PORT" "$RELIS_PORT")
    start_servers -preloaded
    PRELOADED_PORTS=("$REDIS_PORT" "$RELIS_PORT")
    for port in "${PRELOADED_PORTS[@]}"; do
        echo "loading $PRELOAD keys into port $port..." >&2
        load_keys "$port" "$PRELOAD"
    done
    REDIS_PORT="${FRESH_PORTS[0]}" RELIS_PORT="${FRESH_PORTS[1]}"
fi

# best[target|pipeline|test] = best requests/s over the rounds (target: redis or relis, with
# "@preloaded" on the preloaded pair).
declare -A best
ORDER=()
STORE=""

run() {
    local target=$1$STORE port=$2 pipeline=$3 line name rps
    while IFS= read -r line; do
        # "SET","123456.79","0.391",...  (the header line starts with "test")
        name="$(cut -d'"' -f2 <<<"$line")"
        rps="$(cut -d'"' -f4 <<<"$line")"
        [ "$name" = "test" ] && continue
        [ -z "$rps" ] && continue
        local key="$target|$pipeline|$name"
        if [ -z "${best[$key]:-}" ] && [ "$target" = redis ]; then ORDER+=("$pipeline|$name"); fi
        keep_best "$key" "$rps"
    done < <(redis-benchmark -p "$port" -c "$CLIENTS" -n "$N" -r "$KEYSPACE" -t "$TESTS" \
        -P "$pipeline" --csv 2>/dev/null)
}

for round in $(seq 1 "$ROUNDS"); do
    for pipeline in $PIPELINES; do
        run_both "round $round/$ROUNDS, -P $pipeline" "$pipeline"
        if [ "$PRELOAD" -gt 0 ]; then
            STORE="@preloaded" REDIS_PORT="${PRELOADED_PORTS[0]}" RELIS_PORT="${PRELOADED_PORTS[1]}"
            run_both "round $round/$ROUNDS, -P $pipeline, $PRELOAD keys preloaded" "$pipeline"
            STORE="" REDIS_PORT="${FRESH_PORTS[0]}" RELIS_PORT="${FRESH_PORTS[1]}"
        fi
    done
done

echo
echo "redis-benchmark -c $CLIENTS -n $N -r $KEYSPACE, best of $ROUNDS interleaved rounds; $(nproc) CPUs"
echo "redis-server $(redis_version) (appendonly yes, appendfsync everysec) vs relis-server ${RELIS_ARGS:-(defaults)}"
echo
if [ "$PRELOAD" -gt 0 ]; then
    echo "preloaded: a second pair of servers holding $PRELOAD keys of 100 bytes before the tests"
    echo
    printf '| %-16s | %8s | %12s | %12s | %11s | %14s | %14s | %16s | %18s |\n' test pipeline \
        "redis rps" "relis rps" "relis/redis" "redis rps @pre" "relis rps @pre" \
        "relis/redis @pre" "@pre / fresh ratio"
    printf '|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n' ------------------ ---------- -------------- \
        -------------- ------------- ---------------- ---------------- ------------------ \
        --------------------
else
    printf '| %-16s | %8s | %12s | %12s | %11s |\n' test pipeline "redis rps" "relis rps" "relis/redis"
    printf '|%s|%s|%s|%s|%s|\n' ------------------ ---------- -------------- -------------- -------------
fi
for entry in "${ORDER[@]}"; do
    pipeline="${entry%%|*}"
    name="${entry#*|}"
    r="${best[redis|$pipeline|$name]:-0}"
    l="${best[relis|$pipeline|$name]:-0}"
    if [ "$PRELOAD" -gt 0 ]; then
        rp="${best[redis@preloaded|$pipeline|$name]:-0}"
        lp="${best[relis@preloaded|$pipeline|$name]:-0}"
        printf '| %-16s | %8s | %12.0f | %12.0f | %11s | %14.0f | %14.0f | %16s | %18s |\n' \
            "$name" "$pipeline" "$r" "$l" "$(ratio "$l" "$r")" "$rp" "$lp" "$(ratio "$lp" "$rp")" \
            "$(ratio "$(ratio "$lp" "$rp")" "$(ratio "$l" "$r")")"
    else
        printf '| %-16s | %8s | %12.0f | %12.0f | %11s |\n' "$name" "$pipeline" "$r" "$l" "$(ratio "$l" "$r")"
    fi
done
