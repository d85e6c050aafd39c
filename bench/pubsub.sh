#!/usr/bin/env bash
# Relis vs redis-server: PUBLISH to one subscriber, side by side in one run.
#
# Starts redis-server (appendonly yes, appendfsync everysec: the durable baseline) and a release
# build of relis-server, attaches one subscriber to each (`redis-cli SUBSCRIBE ch`, reading every
# message), then runs
#   redis-benchmark -c 50 -n N PUBLISH ch hello
# (redis-benchmark has no publish test of its own) with -P 1 and -P 16 in interleaved rounds,
# and prints the best requests/s of each and the ratio Relis/Redis. Every PUBLISH is delivered
# (the reply counts 1 receiver); the subscriber's own work is the same for both servers.
#
# Usage: bench/pubsub.sh                  (the full run)
#        N=20000 ROUNDS=1 bench/pubsub.sh (a quick check)
# Settings (environment): N requests per run (200000), ROUNDS (2), CLIENTS (50), PIPELINES
# ("1 16"), PAYLOAD (the message, "hello"), RELIS_ARGS, RELIS_BIN (a prebuilt binary; skips
# the build).
set -euo pipefail
cd "$(dirname "$0")/.."

N="${N:-200000}"
ROUNDS="${ROUNDS:-2}"
CLIENTS="${CLIENTS:-50}"
PIPELINES="${PIPELINES:-1 16}"
PAYLOAD="${PAYLOAD:-hello}"

. bench/common.sh

# One subscriber on `ch`, reading (and discarding) every message; waits until it is counted.
subscribe() {
    local port=$1
    redis-cli -p "$port" SUBSCRIBE ch >/dev/null 2>&1 &
    PIDS+=($!)
    for _ in $(seq 1 200); do
        if [ "$(redis-cli -p "$port" PUBSUB NUMSUB ch | tail -1)" = "1" ]; then
            return 0
        fi
        sleep 0.05
    done
    echo "the subscriber on port $port did not subscribe" >&2
    exit 1
}

start_servers
subscribe "$REDIS_PORT"
subscribe "$RELIS_PORT"

# best[target|pipeline] = best requests/s over the rounds.
declare -A best

run() {
    local target=$1 port=$2 pipeline=$3 line rps
    while IFS= read -r line; do
        rps="$(cut -d'"' -f4 <<<"$line")"
        [ "$(cut -d'"' -f2 <<<"$line")" = "test" ] && continue
        [ -z "$rps" ] && continue
        keep_best "$target|$pipeline" "$rps"
    done < <(redis-benchmark -p "$port" -c "$CLIENTS" -n "$N" -P "$pipeline" --csv \
        PUBLISH ch "$PAYLOAD" 2>/dev/null)
}

for round in $(seq 1 "$ROUNDS"); do
    for pipeline in $PIPELINES; do
        run_both "round $round/$ROUNDS, -P $pipeline" "$pipeline"
    done
done

# Both subscribers must still be there (neither was dropped for its output buffer).
for port in "$REDIS_PORT" "$RELIS_PORT"; do
    [ "$(redis-cli -p "$port" PUBSUB NUMSUB ch | tail -1)" = "1" ] || {
        echo "the subscriber on port $port is gone" >&2
        exit 1
    }
done

echo
echo "redis-benchmark -c $CLIENTS -n $N PUBLISH ch $PAYLOAD, one subscriber, best of $ROUNDS interleaved rounds; $(nproc) CPUs"
echo "redis-server $(redis_version) vs relis-server ${RELIS_ARGS:-(defaults)}"
echo
printf '| %-8s | %8s | %12s | %12s | %11s |\n' test pipeline "redis rps" "relis rps" "relis/redis"
printf '|%s|%s|%s|%s|%s|\n' ---------- ---------- -------------- -------------- -------------
for pipeline in $PIPELINES; do
    r="${best[redis|$pipeline]:-0}"
    l="${best[relis|$pipeline]:-0}"
    printf '| %-8s | %8s | %12.0f | %12.0f | %11s |\n' PUBLISH "$pipeline" "$r" "$l" "$(ratio "$l" "$r")"
done
