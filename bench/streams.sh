#!/usr/bin/env bash
# Relis vs redis-server: streams, side by side in one run (issue 16's bars).
#
# Starts redis-server (appendonly yes, appendfsync everysec: the durable baseline) and a release
# build of relis-server, then, in interleaved rounds (redis, relis, redis, relis, ...), runs
#   redis-benchmark -c 50 -n N -P 1 XADD s * f v                 into a fresh stream
#   redis-benchmark -c 50 -n N -P 1 XRANGE s - + COUNT 10        over that stream
#   redis-benchmark -c 50 -n N -P 1 XADD big * f v               into a stream of BIG entries
#   redis-benchmark -c 50 -n N -P 1 XREADGROUP GROUP g c:<rand> COUNT 1 NOACK STREAMS s >
#   stream_loop: 50 consumers each looping XREADGROUP ... COUNT 1 STREAMS q > then XACK q g <id>
#                over a stream of LOOP entries until every one is acknowledged (entries/s)
# and prints the best requests/s of each and the ratio Relis/Redis. The big stream is filled
# once per server before the rounds (with pipelined XADDs); the NOACK consumer group reads the
# entries the XADD runs left. redis-benchmark cannot send back the ids it was given, so the
# read-and-ack loop is a client of its own (crates/relis-server/benches/stream_loop.rs).
#
# Usage: bench/streams.sh                          (the full run)
#        N=20000 ROUNDS=1 BIG=100000 bench/streams.sh   (a quick check)
# Settings (environment): N requests per run (200000), ROUNDS (2), CLIENTS (50), BIG (entries
# in the big stream, 1000000), LOOP (entries the read-and-ack loop works through, 100000),
# RELIS_ARGS, RELIS_BIN (a prebuilt binary; skips the build).
set -euo pipefail
cd "$(dirname "$0")/.."

N="${N:-200000}"
ROUNDS="${ROUNDS:-2}"
CLIENTS="${CLIENTS:-50}"
BIG="${BIG:-1000000}"
LOOP="${LOOP:-100000}"

echo "building the read-and-ack loop client (release)..." >&2
LOOP_BIN="$(cargo bench -p relis-server --bench stream_loop --no-run 2>&1 |
    grep -o 'target/release/deps/stream_loop-[0-9a-f]*' | head -1)"
[ -x "$LOOP_BIN" ] || { echo "could not build the stream_loop client" >&2; exit 1; }

. bench/common.sh
start_servers

declare -A best
ORDER=("xadd" "xrange" "xadd_big" "xreadgroup" "loop")

# Prints the requests/s of one redis-benchmark run of the given command.
rps_of() {
    local port=$1 n=$2 pipeline=$3
    shift 3
    redis-benchmark -p "$port" -c "$CLIENTS" -n "$n" -r 100000 -P "$pipeline" --csv "$@" 2>/dev/null |
        awk -F'"' 'NR > 1 && $4 != "" { print $4; exit }'
}

for port in "$REDIS_PORT" "$RELIS_PORT"; do
    echo "filling a stream of $BIG entries on port $port" >&2
    rps_of "$port" "$BIG" 16 XADD big '*' f v >/dev/null
    redis-cli -p "$port" XGROUP CREATE s g '$' MKSTREAM >/dev/null
done

run() {
    local target=$1 port=$2 name rps
    for name in "${ORDER[@]}"; do
        case "$name" in
            xadd) rps="$(rps_of "$port" "$N" 1 XADD s '*' f v)" ;;
            xrange) rps="$(rps_of "$port" "$N" 1 XRANGE s - + COUNT 10)" ;;
            xadd_big) rps="$(rps_of "$port" "$N" 1 XADD big '*' f v)" ;;
            xreadgroup) rps="$(rps_of "$port" "$N" 1 XREADGROUP GROUP g 'c:__rand_int__' COUNT 1 NOACK STREAMS s '>')" ;;
            loop) rps="$("$LOOP_BIN" "$port" "$CLIENTS" "$LOOP")" ;;
        esac
        keep_best "$target|$name" "$rps"
    done
}

for round in $(seq 1 "$ROUNDS"); do
    run_both "round $round/$ROUNDS"
done

echo
echo "redis-benchmark -c $CLIENTS -n $N -P 1, best of $ROUNDS interleaved rounds; $(nproc) CPUs; big stream: $BIG entries before the rounds"
echo "redis-server $(redis_version) (appendonly yes, appendfsync everysec) vs relis-server ${RELIS_ARGS:-(defaults)}"
echo
printf '| %-44s | %12s | %12s | %11s |\n' command "redis rps" "relis rps" "relis/redis"
printf '|%s|%s|%s|%s|\n' ---------------------------------------------- -------------- -------------- -------------
for name in "${ORDER[@]}"; do
    case "$name" in
        xadd) label='XADD s * f v' ;;
        xrange) label='XRANGE s - + COUNT 10' ;;
        xadd_big) label="XADD big * f v (big: $BIG entries and more)" ;;
        xreadgroup) label='XREADGROUP GROUP g c:<r> COUNT 1 NOACK STREAMS s >' ;;
        loop) label="XREADGROUP + XACK loop (entries/s, $LOOP entries)" ;;
    esac
    r="${best[redis|$name]:-0}"
    l="${best[relis|$name]:-0}"
    printf '| %-44s | %12.0f | %12.0f | %11s |\n' "$label" "$r" "$l" "$(ratio "$l" "$r")"
done
