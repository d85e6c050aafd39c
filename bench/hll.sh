#!/usr/bin/env bash
# Relis vs redis-server: HyperLogLog, side by side in one run (issue 17's bar: PFADD >= 0.6x).
#
# Starts redis-server (appendonly yes, appendfsync everysec: the durable baseline) and a release
# build of relis-server, then, in interleaved rounds (redis, relis, redis, relis, ...), runs
#   redis-benchmark -c 50 -n N -P 1 -r R PFADD hll ele:<rand>        one HLL, random elements
#   redis-benchmark -c 50 -n N -P 1 -r R PFADD hll:<rand> ele:<rand> many small (sparse) HLLs
#   redis-benchmark -c 50 -n N -P 1 PFCOUNT hll                      one key, cache mostly valid
#   redis-benchmark -c 50 -n N -P 1 -r R PFCOUNT hll hll:<rand>      a union of two
# and prints the best requests/s of each and the ratio Relis/Redis. The one HLL turns dense in
# the first round (a few thousand elements), so most PFADDs meet a dense value, as in real use.
#
# Usage: bench/hll.sh                          (the full run)
#        N=2000 ROUNDS=1 bench/hll.sh          (a quick check)
# Settings (environment): N requests per run (200000), ROUNDS (2), CLIENTS (50), RANGE (the
# random element range, 100000000), RELIS_ARGS, RELIS_BIN (a prebuilt binary; skips the build).
set -euo pipefail
cd "$(dirname "$0")/.."

N="${N:-200000}"
ROUNDS="${ROUNDS:-2}"
CLIENTS="${CLIENTS:-50}"
RANGE="${RANGE:-100000000}"

. bench/common.sh
start_servers

declare -A best
ORDER=("pfadd" "pfadd_many" "pfcount" "pfcount_union")

# Prints the requests/s of one redis-benchmark run of the given command.
rps_of() {
    local port=$1 n=$2
    shift 2
    redis-benchmark -p "$port" -c "$CLIENTS" -n "$n" -r "$RANGE" -P 1 --csv "$@" 2>/dev/null |
        awk -F'"' 'NR > 1 && $4 != "" { print $4; exit }'
}

run() {
    local target=$1 port=$2 name rps
    for name in "${ORDER[@]}"; do
        case "$name" in
            pfadd) rps="$(rps_of "$port" "$N" PFADD hll 'ele:__rand_int__')" ;;
            pfadd_many) rps="$(rps_of "$port" "$N" PFADD 'hll:__rand_int__' 'ele:__rand_int__')" ;;
            pfcount) rps="$(rps_of "$port" "$N" PFCOUNT hll)" ;;
            pfcount_union) rps="$(rps_of "$port" "$N" PFCOUNT hll 'hll:__rand_int__')" ;;
        esac
        keep_best "$target|$name" "$rps"
    done
}

for round in $(seq 1 "$ROUNDS"); do
    run_both "round $round/$ROUNDS"
done

# Both servers saw the same commands; their estimates of the one HLL are close (the random
# elements differ between runs, so not equal).
echo
echo "PFCOUNT hll after the rounds: redis $(redis-cli -p "$REDIS_PORT" PFCOUNT hll), relis $(redis-cli -p "$RELIS_PORT" PFCOUNT hll)"
echo "redis-benchmark -c $CLIENTS -n $N -P 1 -r $RANGE, best of $ROUNDS interleaved rounds; $(nproc) CPUs"
echo "redis-server $(redis_version) (appendonly yes, appendfsync everysec) vs relis-server ${RELIS_ARGS:-(defaults)}"
echo
printf '| %-36s | %12s | %12s | %11s |\n' command "redis rps" "relis rps" "relis/redis"
printf '|%s|%s|%s|%s|\n' -------------------------------------- -------------- -------------- -------------
for name in "${ORDER[@]}"; do
    case "$name" in
        pfadd) label='PFADD hll ele:<r>' ;;
        pfadd_many) label='PFADD hll:<r> ele:<r> (sparse HLLs)' ;;
        pfcount) label='PFCOUNT hll' ;;
        pfcount_union) label='PFCOUNT hll hll:<r>' ;;
    esac
    r="${best[redis|$name]:-0}"
    l="${best[relis|$name]:-0}"
    printf '| %-36s | %12.0f | %12.0f | %11s |\n' "$label" "$r" "$l" "$(ratio "$l" "$r")"
done
