#!/usr/bin/env bash
# Relis vs redis-server: geo search, side by side in one run (issue 17's bar: GEOSEARCH
# BYRADIUS 10 km on 1M members >= 0.5x redis-server).
#
# Starts redis-server (appendonly yes, appendfsync everysec: the durable baseline) and a release
# build of relis-server, loads the same BIG random members into each (uniform over the globe,
# named m:<12-digit i>, pipelined GEOADDs of 1000 members), then, in interleaved rounds (redis,
# relis, redis, relis, ...), runs
#   redis-benchmark -c 50 -n N -P 1 GEOSEARCH pts FROMMEMBER m:<rand> BYRADIUS 10 km
#   redis-benchmark -c 50 -n N -P 1 GEOSEARCH pts FROMMEMBER m:<rand> BYRADIUS 10 km ASC WITHCOORD WITHDIST
# (redis-benchmark's random substitution can only make a number, not a coordinate pair, so a
# random member is the random centre) and prints the best requests/s of each and the ratio
# Relis/Redis.
#
# Usage: bench/geo.sh                               (the full run)
#        N=2000 ROUNDS=1 BIG=10000 bench/geo.sh     (a quick check)
# Settings (environment): N requests per run (200000), ROUNDS (2), CLIENTS (50), BIG (members,
# 1000000), RELIS_ARGS, RELIS_BIN (a prebuilt binary; skips the build).
set -euo pipefail
cd "$(dirname "$0")/.."

N="${N:-200000}"
ROUNDS="${ROUNDS:-2}"
CLIENTS="${CLIENTS:-50}"
BIG="${BIG:-1000000}"

. bench/common.sh
start_servers

declare -A best
ORDER=("radius" "radius_with")

# Prints the requests/s of one redis-benchmark run of the given command.
rps_of() {
    local port=$1 n=$2 pipeline=$3
    shift 3
    redis-benchmark -p "$port" -c "$CLIENTS" -n "$n" -r "$BIG" -P "$pipeline" --csv "$@" 2>/dev/null |
        awk -F'"' 'NR > 1 && $4 != "" { print $4; exit }'
}

# The GEOADD commands (RESP), the same for both servers: a fixed seed.
python3 - "$BIG" >"$TMP/load.resp" <<'PY'
import random, sys
big = int(sys.argv[1])
rng = random.Random(17)
out = sys.stdout.buffer
def cmd(args):
    out.write(b"*%d\r\n" % len(args))
    for a in args:
        out.write(b"$%d\r\n%s\r\n" % (len(a), a))
for start in range(0, big, 1000):
    args = [b"GEOADD", b"pts"]
    for i in range(start, min(start + 1000, big)):
        args += [b"%.6f" % rng.uniform(-180, 180), b"%.6f" % rng.uniform(-85, 85), b"m:%012d" % i]
    cmd(args)
PY

for port in "$REDIS_PORT" "$RELIS_PORT"; do
    echo "loading $BIG members on port $port" >&2
    redis-cli -p "$port" --pipe <"$TMP/load.resp" >/dev/null
    got="$(redis-cli -p "$port" ZCARD pts)"
    [ "$got" = "$BIG" ] || { echo "port $port holds $got members, not $BIG" >&2; exit 1; }
done

run() {
    local target=$1 port=$2 name rps
    for name in "${ORDER[@]}"; do
        case "$name" in
            radius) rps="$(rps_of "$port" "$N" 1 GEOSEARCH pts FROMMEMBER 'm:__rand_int__' BYRADIUS 10 km)" ;;
            radius_with) rps="$(rps_of "$port" "$N" 1 GEOSEARCH pts FROMMEMBER 'm:__rand_int__' BYRADIUS 10 km ASC WITHCOORD WITHDIST)" ;;
        esac
        keep_best "$target|$name" "$rps"
    done
}

for round in $(seq 1 "$ROUNDS"); do
    run_both "round $round/$ROUNDS"
done

echo
echo "redis-benchmark -c $CLIENTS -n $N -P 1, best of $ROUNDS interleaved rounds; $(nproc) CPUs; $BIG random members"
echo "redis-server $(redis_version) (appendonly yes, appendfsync everysec) vs relis-server ${RELIS_ARGS:-(defaults)}"
echo
printf '| %-66s | %12s | %12s | %11s |\n' command "redis rps" "relis rps" "relis/redis"
printf '|%s|%s|%s|%s|\n' -------------------------------------------------------------------- -------------- -------------- -------------
for name in "${ORDER[@]}"; do
    case "$name" in
        radius) label='GEOSEARCH pts FROMMEMBER m:<r> BYRADIUS 10 km' ;;
        radius_with) label='GEOSEARCH pts FROMMEMBER m:<r> BYRADIUS 10 km ASC WITHCOORD WITHDIST' ;;
    esac
    r="${best[redis|$name]:-0}"
    l="${best[relis|$name]:-0}"
    printf '| %-66s | %12.0f | %12.0f | %11s |\n' "$label" "$r" "$l" "$(ratio "$l" "$r")"
done
