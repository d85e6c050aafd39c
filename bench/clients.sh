#!/usr/bin/env bash
# A thousand clients against redis-server and relis-server, next to fifty, in one run.
#
# Starts redis-server (appendonly yes, appendfsync everysec: the durable baseline) and a release
# build of relis-server, each in its own temporary directory on a free port, raises the
# open-file limit so each can take CLIENTS connections, and runs
#   redis-benchmark -c 50      -n N -r 100000 -t set,get --csv
#   redis-benchmark -c CLIENTS -n N -r 100000 -t set,get --csv
# against both, in interleaved rounds (redis, relis, redis, relis, ...). It prints, per server
# and client count, the best requests/s of SET and of GET, their aggregate (the rate of the
# SET/GET mix, half each: 2 / (1/set + 1/get)), and the p99 latency of the round with the best
# rate, then CLIENTS against 50 for each server. While the CLIENTS runs go, it samples each
# server's connected_clients (INFO clients): the peak shows every client got connected.
#
# Usage: bench/clients.sh                       (the full run)
#        N=20000 ROUNDS=1 bench/clients.sh      (a quick check)
# Settings (environment): N requests per run (200000), ROUNDS (2), CLIENTS (1000), KEYSPACE
# (100000), PIPELINE (1), RELIS_ARGS, REDIS_ARGS, RELIS_BIN (a prebuilt binary; skips the build).
set -euo pipefail
cd "$(dirname "$0")/.."

N="${N:-200000}"
ROUNDS="${ROUNDS:-2}"
CLIENTS="${CLIENTS:-1000}"
KEYSPACE="${KEYSPACE:-100000}"
PIPELINE="${PIPELINE:-1}"

# Each connection is a descriptor in the server and one in redis-benchmark; both servers start
# after this, with this limit (redis-server lowers its maxclients to fit the limit it finds).
want=$((CLIENTS + 1000))
ulimit -n "$want" 2>/dev/null || ulimit -n "$(ulimit -Hn)"
if [ "$(ulimit -n)" -lt $((CLIENTS + 100)) ]; then
    echo "cannot raise the open-file limit to $((CLIENTS + 100)) (hard limit $(ulimit -Hn))" >&2
    exit 1
fi
REDIS_ARGS="--maxclients $((CLIENTS + 100)) ${REDIS_ARGS:-}"
RELIS_ARGS="--maxclients $((CLIENTS + 100)) ${RELIS_ARGS:-}"

. bench/common.sh
start_servers

# best[target|clients|test] = best requests/s; p99[...] = its round's p99 (ms); peak[target].
declare -A best p99 peak

# The most connected_clients INFO showed on PORT while the file $TMP/sampling exists.
sample_clients() {
    local port=$1 max=0 n
    while [ -e "$TMP/sampling" ]; do
        n="$(redis-cli -p "$port" info clients 2>/dev/null | tr -d '\r' |
            awk -F: '$1 == "connected_clients" { print $2 }')"
        [ -n "$n" ] && [ "$n" -gt "$max" ] && max=$n
        sleep 0.2
    done
    echo "$max"
}

run() {
    local target=$1 port=$2 clients=$3 line name rps lat out
    out="$TMP/out.csv"
    if [ "$clients" = "$CLIENTS" ]; then
        touch "$TMP/sampling"
        sample_clients "$port" >"$TMP/peak" &
    fi
    redis-benchmark -p "$port" -c "$clients" -n "$N" -r "$KEYSPACE" -P "$PIPELINE" \
        -t set,get --csv >"$out" 2>/dev/null
    if [ "$clients" = "$CLIENTS" ]; then
        rm -f "$TMP/sampling"
        wait $!
        local seen
        seen="$(cat "$TMP/peak")"
        if [ -z "${peak[$target]:-}" ] || [ "$seen" -gt "${peak[$target]}" ]; then
            peak[$target]=$seen
        fi
    fi
    while IFS= read -r line; do
        # "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms",
        # "p99_latency_ms","max_latency_ms"
        name="$(cut -d'"' -f2 <<<"$line")"
        rps="$(cut -d'"' -f4 <<<"$line")"
        lat="$(cut -d'"' -f14 <<<"$line")"
        [ "$name" = "test" ] && continue
        [ -z "$rps" ] && continue
        local key="$target|$clients|$name" before="${best[$target|$clients|$name]:-}"
        keep_best "$key" "$rps"
        if [ "${best[$key]}" != "$before" ]; then
            p99[$key]=$lat
        fi
    done <"$out"
}

for round in $(seq 1 "$ROUNDS"); do
    for clients in 50 "$CLIENTS"; do
        run_both "round $round/$ROUNDS, -c $clients" "$clients"
    done
done

# The rate of a mix of half SETs and half GETs: 2 / (1/set + 1/get).
mix() {
    awk -v s="$1" -v g="$2" 'BEGIN { if (s > 0 && g > 0) printf "%.0f", 2 / (1 / s + 1 / g); else print 0 }'
}

echo
echo "redis-benchmark -n $N -r $KEYSPACE -P $PIPELINE -t set,get, best of $ROUNDS interleaved rounds; $(nproc) CPUs"
echo "redis-server $(redis_version) (appendonly yes, appendfsync everysec) vs relis-server ${RELIS_ARGS}"
echo
printf '| %-6s | %7s | %10s | %10s | %10s | %11s | %11s |\n' server clients "SET rps" "GET rps" \
    "mix rps" "SET p99 ms" "GET p99 ms"
printf '|%s|%s|%s|%s|%s|%s|%s|\n' -------- --------- ------------ ------------ ------------ \
    ------------- -------------
for target in redis relis; do
    for clients in 50 "$CLIENTS"; do
        s="${best[$target|$clients|SET]:-0}"
        g="${best[$target|$clients|GET]:-0}"
        printf '| %-6s | %7s | %10.0f | %10.0f | %10s | %11s | %11s |\n' "$target" "$clients" \
            "$s" "$g" "$(mix "$s" "$g")" "${p99[$target|$clients|SET]:--}" \
            "${p99[$target|$clients|GET]:--}"
    done
done
echo
for target in redis relis; do
    s50="${best[$target|50|SET]:-0}" g50="${best[$target|50|GET]:-0}"
    s="${best[$target|$CLIENTS|SET]:-0}" g="${best[$target|$CLIENTS|GET]:-0}"
    echo "$target: mix at -c $CLIENTS / at -c 50 = $(ratio "$(mix "$s" "$g")" "$(mix "$s50" "$g50")");" \
        "peak connected_clients during the -c $CLIENTS runs: ${peak[$target]:-?}"
done
echo "relis/redis mix at -c $CLIENTS: $(ratio "$(mix "${best[relis|$CLIENTS|SET]:-0}" "${best[relis|$CLIENTS|GET]:-0}")" \
    "$(mix "${best[redis|$CLIENTS|SET]:-0}" "${best[redis|$CLIENTS|GET]:-0}")")"
