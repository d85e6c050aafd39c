#!/usr/bin/env bash
# Relis vs redis-server: SETBIT at random offsets in a small and a large bitmap, side by side in
# one run (issue 17's bar: on 16 MB >= 0.5x the 1 KB rate, and >= 0.5x redis-server).
#
# Starts redis-server (appendonly yes, appendfsync everysec: the durable baseline) and a release
# build of relis-server, creates on each a 1 KB bitmap and a 16 MB one (one SETBIT at its last
# bit), then, in interleaved rounds, runs
#   redis-benchmark -c 50 -n N -P 1 -r <bits> SETBIT small __rand_int__ 1   (bits: 8192)
#   redis-benchmark -c 50 -n N -P 1 -r <bits> SETBIT big __rand_int__ 1     (bits: 134217728)
# and prints the best requests/s of each, the ratio Relis/Redis and Relis's big/small ratio.
#
# Usage: bench/bitmaps.sh                      (the full run)
#        N=2000 ROUNDS=1 bench/bitmaps.sh      (a quick check)
# Settings (environment): N requests per run (200000), ROUNDS (2), CLIENTS (50), RELIS_ARGS,
# RELIS_BIN (a prebuilt binary; skips the build), LOAD (a prebuilt setbit_load; skips its build).
set -euo pipefail
cd "$(dirname "$0")/.."

N="${N:-200000}"
ROUNDS="${ROUNDS:-2}"
CLIENTS="${CLIENTS:-50}"
SMALL_BITS=$((1024 * 8))
BIG_BITS=$((16 * 1024 * 1024 * 8))

. bench/common.sh
start_servers

declare -A best
ORDER=("small" "big")

if [ -z "${LOAD:-}" ]; then
    echo "building the load generator (release)..." >&2
    cargo build --release -q -p relis-server --example setbit_load
    LOAD="$PWD/target/release/examples/setbit_load"
fi

# Prints the requests/s of one run: SETBIT <key> <random offset below bits> 1.
rps_of() {
    local port=$1 n=$2 bits=$3 key=$4
    "$LOAD" "$port" "$key" "$bits" "$n" "$CLIENTS"
}

for port in "$REDIS_PORT" "$RELIS_PORT"; do
    redis-cli -p "$port" SETBIT small $((SMALL_BITS - 1)) 1 >/dev/null
    redis-cli -p "$port" SETBIT big $((BIG_BITS - 1)) 1 >/dev/null
done

run() {
    local target=$1 port=$2 name rps
    for name in "${ORDER[@]}"; do
        case "$name" in
            small) rps="$(rps_of "$port" "$N" "$SMALL_BITS" small)" ;;
            big) rps="$(rps_of "$port" "$N" "$BIG_BITS" big)" ;;
        esac
        keep_best "$target|$name" "$rps"
    done
}

for round in $(seq 1 "$ROUNDS"); do
    run_both "round $round/$ROUNDS"
done

echo
echo "SETBIT at random offsets, $CLIENTS connections, $N commands, one at a time per connection; best of $ROUNDS interleaved rounds; $(nproc) CPUs"
echo "redis-server $(redis_version) (appendonly yes, appendfsync everysec) vs relis-server ${RELIS_ARGS:-(defaults)}"
echo
printf '| %-40s | %12s | %12s | %11s |\n' command "redis rps" "relis rps" "relis/redis"
printf '|%s|%s|%s|%s|\n' ------------------------------------------ -------------- -------------- -------------
for name in "${ORDER[@]}"; do
    case "$name" in
        small) label='SETBIT small <rand> 1 (1 KB bitmap)' ;;
        big) label='SETBIT big <rand> 1 (16 MB bitmap)' ;;
    esac
    r="${best[redis|$name]:-0}"
    l="${best[relis|$name]:-0}"
    printf '| %-40s | %12.0f | %12.0f | %11s |\n' "$label" "$r" "$l" "$(ratio "$l" "$r")"
done
echo
echo "relis 16 MB / 1 KB: $(ratio "${best[relis|big]:-0}" "${best[relis|small]:-0}") (bar: >= 0.5)"
