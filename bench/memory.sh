#!/usr/bin/env bash
# Memory for the same data in redis-server and relis-server, side by side in one run.
#
# Starts redis-server (appendonly yes, appendfsync everysec: the durable baseline) and a release
# build of relis-server, each in its own temporary directory on a free port, loads the same N
# keys into each, one server after the other (SET key:000000000000 .. key:<N-1>, SIZE-byte
# values, through `redis-cli --pipe`), reads READS random keys of them back
# (`redis-benchmark -t get -r N -P 16`), and prints each server's resident set after the load
# and after the reads, with the data's size on disk.
#
# The resident set (VmRSS) is what the comparison uses. It is split into anonymous memory
# (RssAnon: heaps, SQLite's page caches) and file pages (RssFile): file pages are those of the
# executable and, when relis-server maps its database file (mmap-size), the file's pages read
# through the map: the OS's file cache, shared and reclaimable, but counted in the process's
# RSS. Relis's INFO memory fields (relis_*_cache_*, relis_mmap_*) say what its caches hold.
#
# Usage: bench/memory.sh                 (5M keys of 100 bytes)
#        N=100000 READS=20000 bench/memory.sh   (a quick check)
# Settings (environment): N keys (5000000), SIZE value bytes (100), READS GETs after the load
# (N, at most 1000000), RELIS_ARGS (extra relis-server arguments, e.g. "--mmap-size 1gb"),
# REDIS_ARGS, RELIS_BIN (a prebuilt binary; skips the build).
set -euo pipefail
cd "$(dirname "$0")/.."

N="${N:-5000000}"
SIZE="${SIZE:-100}"
READS="${READS:-$((N < 1000000 ? N : 1000000))}"
. bench/common.sh
start_servers

declare -A fig

mib() {
    awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'
}

rss() {
    local target=$1 pid=$2 when=$3
    fig[$target|$when|rss]="$(rss_kib "$pid" VmRSS)"
    fig[$target|$when|anon]="$(rss_kib "$pid" RssAnon)"
    fig[$target|$when|file]="$(rss_kib "$pid" RssFile)"
}

measure() {
    local target=$1 port=$2 pid=$3 started keys
    rss "$target" "$pid" start
    echo "loading $N keys of $SIZE bytes into $target..." >&2
    started=$(date +%s.%N)
    load_keys "$port" "$N" "$SIZE"
    fig[$target|load]="$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
    keys="$(redis-cli -p "$port" dbsize)"
    if [ "$keys" != "$N" ]; then
        echo "$target holds $keys keys, not $N" >&2
        exit 1
    fi
    rss "$target" "$pid" loaded
    echo "reading $READS of them from $target..." >&2
    redis-benchmark -p "$port" -c 50 -n "$READS" -r "$N" -P 16 -t get -q >/dev/null
    rss "$target" "$pid" read
}

measure redis "$REDIS_PORT" "$REDIS_PID"
measure relis "$RELIS_PORT" "$RELIS_PID"

# On disk: redis-server's append-only files; relis-server's database file and its WAL.
disk_redis_kib="$(du -sk "$REDIS_DIR" | cut -f1)"
disk_relis_kib="$(du -sk "$RELIS_DIR" | cut -f1)"
relis_info="$(redis-cli -p "$RELIS_PORT" info memory | tr -d '\r' | grep '^relis_' | grep -v _human)"

echo
echo "$N keys of $SIZE-byte strings, then $READS random GETs (-P 16); $(nproc) CPUs"
echo "redis-server $(redis_version) (appendonly yes, appendfsync everysec) vs relis-server ${RELIS_ARGS:-(defaults)}"
echo
printf '| %-28s | %12s | %12s | %11s |\n' "MiB" "redis" "relis" "relis/redis"
printf '|%s|%s|%s|%s|\n' ------------------------------ -------------- -------------- -------------
row() {
    local label=$1 r=$2 l=$3
    printf '| %-28s | %12s | %12s | %11s |\n' "$label" "$(mib "$r")" "$(mib "$l")" "$(ratio "$l" "$r")"
}
row "RSS at start" "${fig[redis|start|rss]}" "${fig[relis|start|rss]}"
for when in loaded read; do
    label="after the load"
    [ "$when" = read ] && label="after the GETs"
    row "RSS $label" "${fig[redis|$when|rss]}" "${fig[relis|$when|rss]}"
    row "  anonymous (RssAnon)" "${fig[redis|$when|anon]}" "${fig[relis|$when|anon]}"
    row "  file pages (RssFile)" "${fig[redis|$when|file]}" "${fig[relis|$when|file]}"
done
row "on disk (AOF / db+WAL)" "$disk_redis_kib" "$disk_relis_kib"
printf '| %-28s | %12s | %12s | %11s |\n' "load time (s)" "${fig[redis|load]}" "${fig[relis|load]}" \
    "$(ratio "${fig[redis|load]}" "${fig[relis|load]}")"
echo
echo "(load time's last column is redis/relis: the rate ratio.) relis-server INFO memory:"
sed 's/^/  /' <<<"$relis_info"
