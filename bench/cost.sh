#!/usr/bin/env bash
# What one request costs each server, thread by thread: CPU time per request under
# redis-benchmark, for redis-server and relis-server side by side in one run.
#
# For each test, redis-benchmark -c 50 -r 100000 runs against redis-server (appendonly yes,
# appendfsync everysec) and then relis-server while `perf stat --per-thread -e task-clock`
# counts every thread of the server; the table shows the rate, each thread's CPU microseconds
# per request (user and system together) and how busy it was. The busiest thread bounds the
# rate: relis's writer for writes, its network thread for reads (it reads in place). Two more
# columns: the share of the run each thread spent runnable but waiting for a CPU (schedstat),
# and how idle the machine was meanwhile. At -P 1 relis's network thread and writer mostly
# share one CPU while the other idles between redis-benchmark's bursts (BENCHMARKS.md, "Where a
# -P 1 request's time goes"): both columns high at once is that. Tests:
#   set16 get16 incr16 mset16     SET, GET, INCR, MSET (10 keys) at -P 16
#   set1 get1 zadd1 hset1 lrange1 SET, GET, ZADD, HSET, LRANGE mylist 0 99 at -P 1 (as
#                                 redis-benchmark's LRANGE_100, without the LPUSHes it
#                                 runs first)
#   getw16                        GET at -P 16 while one more client SETs at -P 1 beside it
#                                 (a reader's page cache is emptied after each commit)
#   pfaddnew1                     PFADD hll:<r> ele:<r> at -P 1 with -r 100000000: nearly every
#                                 request creates a small HLL (bench/hll.sh's sparse case)
# The keys are written first (SET -P 16 over the key space, LPUSH for LRANGE).
#
# With CALLGRIND=1 relis-server runs under valgrind instead (a quarter of the requests, after
# as many unmeasured) and the table shows instructions per request per thread, split into
# SQLite's own code, the C library and the rest (Relis, its crates, the allocator): where the
# time of the thread that bounds the rate goes. redis-server is not measured then, nor getw16
# (under valgrind the one writing client's share of the requests is not the same).
#
# Usage: bench/cost.sh                  (every test)
#        TESTS="set16 get16" N=200000 bench/cost.sh
#        CALLGRIND=1 TESTS=set16 bench/cost.sh
# Settings (environment): N requests per test (400000), TESTS, RELIS_ARGS, RELIS_BIN.
set -euo pipefail
cd "$(dirname "$0")/.."

N="${N:-400000}"
TESTS="${TESTS:-set16 get16 incr16 mset16 set1 get1 zadd1 hset1 lrange1 getw16}"
CALLGRIND="${CALLGRIND:-0}"
command -v perf >/dev/null || { echo "perf is not installed (apt-get install linux-perf)" >&2; exit 1; }
if [ "$CALLGRIND" = 1 ]; then
    command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
fi
. bench/common.sh

# test name -> "redis-benchmark arguments"
declare -A ARGS=(
    [set16]="-P 16 -t set" [get16]="-P 16 -t get" [incr16]="-P 16 -t incr"
    [mset16]="-P 16 -t mset" [set1]="-P 1 -t set" [get1]="-P 1 -t get"
    [zadd1]="-P 1 -t zadd" [hset1]="-P 1 -t hset" [lrange1]="-P 1 lrange mylist 0 99"
    [getw16]="-P 16 -t get"
    [pfaddnew1]="-P 1 -r 100000000 PFADD hll:__rand_int__ ele:__rand_int__"
)

if [ "$CALLGRIND" = 1 ]; then
    N=$((N / 4))
    TESTS="${TESTS/getw16/}"
    start_servers
    # The measured relis-server: under valgrind, on its own port.
    kill "$RELIS_PID"
    wait "$RELIS_PID" 2>/dev/null || true
    RELIS_PORT="$(free_port)"
    RELIS_DIR="$TMP/relis-cg"
    mkdir -p "$RELIS_DIR"
    # shellcheck disable=SC2086  # RELIS_ARGS is a list of words on purpose
    valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$TMP/cg.%p" \
        "$RELIS_BIN" --port "$RELIS_PORT" --dir "$RELIS_DIR" --logfile "$TMP/relis-cg.log" \
        $RELIS_ARGS >/dev/null 2>&1 &
    RELIS_PID=$!
    PIDS+=("$RELIS_PID")
    for _ in $(seq 1 600); do
        redis-cli -p "$RELIS_PORT" ping 2>/dev/null | grep -q PONG && break
        sleep 0.1
    done
else
    start_servers
fi

bench() {
    local port=$1 n=$2
    shift 2
    # shellcheck disable=SC2068  # the arguments are words
    redis-benchmark -p "$port" -c 50 -n "$n" -r 100000 -q "$@" 2>&1 | tr '\r' '\n' | grep -v '^ *$' | tail -1
}

# The keys the tests read: every string of the key space, and a list of 200,000 elements.
prepare() {
    bench "$1" 400000 -P 16 -t set >/dev/null
    bench "$1" 200000 -P 16 -t lpush >/dev/null
}

# Runs test $2 against the server on port $1 (pid $3) under perf stat; prints the table rows.
measure() {
    local name=$1 port=$2 pid=$3 test=$4 bg=""
    if [ "$test" = getw16 ]; then
        redis-benchmark -p "$port" -c 1 -n 100000000 -r 100000 -q -t set >/dev/null 2>&1 &
        bg=$!
        sleep 0.5
    fi
    # shellcheck disable=SC2086
    local line idle0 idle1 t0 t1
    waits "$pid" >"$TMP/waits0"
    idle0="$(idle_ticks)"
    t0="$(date +%s%N)"
    line="$(perf stat --per-thread -e task-clock -p "$pid" -o "$TMP/perf.txt" -- \
        redis-benchmark -p "$port" -c 50 -n "$N" -r 100000 -q ${ARGS[$test]} 2>&1 |
        tr '\r' '\n' | grep -v '^ *$' | tail -1)"
    t1="$(date +%s%N)"
    idle1="$(idle_ticks)"
    waits "$pid" >"$TMP/waits1"
    if [ -n "$bg" ]; then
        kill "$bg" 2>/dev/null || true
        wait "$bg" 2>/dev/null || true
    fi
    local rps
    rps="$(sed -n 's/.*: \([0-9.]*\) requests per second.*/\1/p' <<<"$line")"
    printf '| %s | %s | %s |' "$test" "$name" "${rps:-?}"
    # "<thread>-<tid>  <msec> msec task-clock  #  <cpus> CPUs utilized"
    awk -v n="$N" '/task-clock/ {
            gsub(",", "", $2)
            us = $2 * 1000 / n
            if (us >= 0.01) printf " %s %.2f us (%.2f CPU),", $1, us, $6
        }' "$TMP/perf.txt" | sed 's/-[0-9]* / /g; s/,$//'
    # Each thread's share of the run spent runnable but waiting for a CPU, and the machine's
    # idle share (both CPUs): a thread that waits while a CPU idles is held where it is.
    printf ' |'
    awk -v ns="$((t1 - t0))" 'NR == FNR { w[$1] = $2; next }
        ($1 in w) && ($2 - w[$1]) / ns >= 0.01 { printf " %s %.2f,", $1, ($2 - w[$1]) / ns }' \
        "$TMP/waits0" "$TMP/waits1" | sed 's/-[0-9]* / /g; s/,$//'
    awk -v a="$idle0" -v b="$idle1" -v ns="$((t1 - t0))" -v hz="$(getconf CLK_TCK)" -v cpus="$(nproc)" \
        'BEGIN { printf " | %.0f%% |\n", 100 * (b - a) / hz / (ns / 1e9) / cpus }'
}

# Each thread of process $1: its name (with its id, names repeat) and the nanoseconds it has
# spent runnable but not running (the second field of /proc/.../schedstat).
waits() {
    local t
    for t in /proc/"$1"/task/*; do
        printf '%s-%s %s\n' "$(cat "$t/comm" 2>/dev/null)" "${t##*/}" "$(cut -d' ' -f2 "$t/schedstat" 2>/dev/null)"
    done
}

# The machine's idle and I/O-wait time so far, in clock ticks (all CPUs).
idle_ticks() {
    awk '/^cpu / { print $5 + $6 }' /proc/stat
}

# Instructions per request per thread of the valgrind-run relis-server, split by origin.
# Callgrind numbers threads in the order they started, as their ids are: the names come from
# /proc.
split() {
    local test=$1 file i=0 names=()
    while read -r tid; do
        names+=("$(cat "/proc/$RELIS_PID/task/$tid/comm")")
    done < <(ls "/proc/$RELIS_PID/task" | sort -n)
    for file in "$TMP"/cg.*-*; do
        [ -s "$file" ] || continue
        i="${file##*-}"
        i=$((10#$i))
        callgrind_annotate --threshold=100 --inclusive=no --auto=no "$file" 2>/dev/null |
            python3 -c '
import re, sys
n, test = float(sys.argv[1]), sys.argv[2]
total = {"sqlite": 0, "libc": 0, "relis": 0}
for line in sys.stdin:
    m = re.match(r"\s*([\d,]+) \([ \d.]+%\)\s+(\S.*)$", line)
    if not m or "PROGRAM TOTALS" in line:
        continue
    cost, where = int(m.group(1).replace(",", "")), m.group(2)
    if "sqlite3.c:" in where:
        total["sqlite"] += cost
    elif ("libc.so" in where or "ld-linux" in where) and not re.search(r":(clone3?|start_thread) ", where):
        total["libc"] += cost
# The thread total is the summary line of the file: callgrind_annotate also lists some
# functions that start threads (clone, the task polls of tokio) with their inclusive cost,
# which a sum would count twice.
s = int(open(sys.argv[3]).read().split("\nsummary: ", 1)[1].split()[0])
total["relis"] = s - total["sqlite"] - total["libc"]
if s / n >= 200:
    print("| %s | %s | %.0f | %.0f | %.0f | %.0f |" % (test, sys.argv[4], s / n, total["sqlite"] / n, total["libc"] / n, total["relis"] / n))
' "$N" "$test" "$file" "${names[$((i - 1))]:-thread $i}"
    done
    rm -f "$TMP"/cg.*-*
}

if [ "$CALLGRIND" = 1 ]; then
    echo "relis-server under callgrind, $N requests per test after $N unmeasured (redis-server $(redis_version))"
    echo
    echo "| test | thread | instructions / request | SQLite | libc | the rest |"
    echo "|---|---|---|---|---|---|"
else
    echo "$N requests per test, redis-server $(redis_version) and relis-server in the same run"
    echo
    echo "| test | server | requests/s | CPU per request, per thread | waiting for a CPU (share of the run) | machine idle |"
    echo "|---|---|---|---|---|---|"
fi
if [ "$CALLGRIND" = 1 ]; then
    prepare "$RELIS_PORT"
else
    prepare "$REDIS_PORT"
    prepare "$RELIS_PORT"
fi
for test in $TESTS; do
    [ -n "${ARGS[$test]:-}" ] || { echo "unknown test $test" >&2; exit 1; }
    if [ "$CALLGRIND" = 1 ]; then
        # shellcheck disable=SC2086
        bench "$RELIS_PORT" "$N" ${ARGS[$test]} >/dev/null
        callgrind_control -z "$RELIS_PID" >/dev/null 2>&1
        # shellcheck disable=SC2086
        bench "$RELIS_PORT" "$N" ${ARGS[$test]} >/dev/null
        callgrind_control -d "$RELIS_PID" >/dev/null 2>&1
        sleep 1
        split "$test"
    else
        measure redis "$REDIS_PORT" "$REDIS_PID" "$test"
        measure relis "$RELIS_PORT" "$RELIS_PID" "$test"
    fi
done
