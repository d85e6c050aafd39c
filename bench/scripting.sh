#!/usr/bin/env bash
# Relis vs redis-server: EVALSHA of a script doing one GET and one SET, side by side in one run.
#
# Starts redis-server (appendonly yes, appendfsync everysec: the durable baseline) and a release
# build of relis-server, loads the script on both with SCRIPT LOAD, then runs
#   redis-benchmark -c 50 -n N -r 100000 EVALSHA <sha> 1 key:__rand_int__ v
# (and EVAL of the same script, and plain SET for scale) in interleaved rounds, and prints the
# best requests/s of each and the ratio Relis/Redis.
#
# Usage: bench/scripting.sh                  (the full run)
#        N=20000 ROUNDS=1 bench/scripting.sh (a quick check)
# Settings (environment): N requests per run (200000), ROUNDS (2), CLIENTS (50), KEYSPACE
# (100000), PIPELINES ("1 16"), RELIS_ARGS, RELIS_BIN (a prebuilt binary; skips the build).
set -euo pipefail
cd "$(dirname "$0")/.."

N="${N:-200000}"
ROUNDS="${ROUNDS:-2}"
CLIENTS="${CLIENTS:-50}"
KEYSPACE="${KEYSPACE:-100000}"
PIPELINES="${PIPELINES:-1 16}"
SCRIPT="local v = redis.call('GET', KEYS[1]) redis.call('SET', KEYS[1], ARGV[1]) return v"

. bench/common.sh
start_servers

SHA="$(redis-cli -p "$REDIS_PORT" SCRIPT LOAD "$SCRIPT")"
SHA2="$(redis-cli -p "$RELIS_PORT" SCRIPT LOAD "$SCRIPT")"
[ "$SHA" = "$SHA2" ] || { echo "SCRIPT LOAD: $SHA vs $SHA2" >&2; exit 1; }

declare -A best
ORDER=("evalsha" "eval" "set")

# Prints the requests/s of one redis-benchmark run of the given command.
rps_of() {
    local port=$1 pipeline=$2
    shift 2
    redis-benchmark -p "$port" -c "$CLIENTS" -n "$N" -r "$KEYSPACE" -P "$pipeline" --csv "$@" 2>/dev/null |
        awk -F'"' 'NR > 1 && $4 != "" { print $4; exit }'
}

run() {
    local target=$1 port=$2 pipeline=$3 name rps
    for name in "${ORDER[@]}"; do
        case "$name" in
            evalsha) rps="$(rps_of "$port" "$pipeline" EVALSHA "$SHA" 1 'key:__rand_int__' v)" ;;
            eval) rps="$(rps_of "$port" "$pipeline" EVAL "$SCRIPT" 1 'key:__rand_int__' v)" ;;
            set) rps="$(rps_of "$port" "$pipeline" SET 'key:__rand_int__' v)" ;;
        esac
        keep_best "$target|$pipeline|$name" "$rps"
    done
}

for round in $(seq 1 "$ROUNDS"); do
    for pipeline in $PIPELINES; do
        run_both "round $round/$ROUNDS, -P $pipeline" "$pipeline"
    done
done

echo
echo "redis-benchmark -c $CLIENTS -n $N -r $KEYSPACE, best of $ROUNDS interleaved rounds; $(nproc) CPUs"
echo "script: $SCRIPT"
echo "redis-server $(redis_version) (appendonly yes, appendfsync everysec) vs relis-server ${RELIS_ARGS:-(defaults)}"
echo
printf '| %-8s | %8s | %12s | %12s | %11s |\n' command pipeline "redis rps" "relis rps" "relis/redis"
printf '|%s|%s|%s|%s|%s|\n' ---------- ---------- -------------- -------------- -------------
for pipeline in $PIPELINES; do
    for name in "${ORDER[@]}"; do
        r="${best[redis|$pipeline|$name]:-0}"
        l="${best[relis|$pipeline|$name]:-0}"
        printf '| %-8s | %8s | %12.0f | %12.0f | %11s |\n' "$name" "$pipeline" "$r" "$l" "$(ratio "$l" "$r")"
    done
done
