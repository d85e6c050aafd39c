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
. bench/common.sh
start_servers

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
        if [ -z "${best[$key]:-}" ] && [ "$target" = redis ]; then ORDER+=("$pipeline|$name"); fi
        keep_best "$key" "$rps"
    done < <(redis-benchmark -p "$port" -c "$CLIENTS" -n "$N" -r "$KEYSPACE" -t "$TESTS" \
        -P "$pipeline" --csv 2>/dev/null)
}

for round in $(seq 1 "$ROUNDS"); do
    for pipeline in $PIPELINES; do
        run_both "round $round/$ROUNDS, -P $pipeline" "$pipeline"
    done
done

echo
echo "redis-benchmark -c $CLIENTS -n $N -r $KEYSPACE, best of $ROUNDS interleaved rounds; $(nproc) CPUs"
echo "redis-server $(redis_version) (appendonly yes, appendfsync everysec) vs relis-server ${RELIS_ARGS:-(defaults)}"
echo
printf '| %-16s | %8s | %12s | %12s | %11s |\n' test pipeline "redis rps" "relis rps" "relis/redis"
printf '|%s|%s|%s|%s|%s|\n' ------------------ ---------- -------------- -------------- -------------
for entry in "${ORDER[@]}"; do
    pipeline="${entry%%|*}"
    name="${entry#*|}"
    r="${best[redis|$pipeline|$name]:-0}"
    l="${best[relis|$pipeline|$name]:-0}"
    printf '| %-16s | %8s | %12.0f | %12.0f | %11s |\n' "$name" "$pipeline" "$r" "$l" "$(ratio "$l" "$r")"
done
