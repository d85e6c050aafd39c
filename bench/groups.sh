#!/usr/bin/env bash
# How relis-server groups writes under redis-benchmark, next to redis-server in one run: per test,
# the requests/s of each, each server's CPU time per request (all its threads, from
# /proc/<pid>/stat), and relis's writes per commit (requests against INFO's relis_commits). A
# group commits once for all its writes: how large the groups get is what gathering on the
# network thread (ARCHITECTURE 3.2) and the writer's group commit decide.
#
# Tests (redis-benchmark -c CLIENTS -P 1 -n N -r 100000000, after N/4 unmeasured):
#   set      SET key:<r> xxx               (-t set)
#   hset     HSET myhash element:<r> xxx   (-t hset)
#   pfaddnew PFADD hll:<r> ele:<r>         (nearly every request creates a small HLL)
#
# Usage: bench/groups.sh                        (every test)
#        TESTS="set pfaddnew" N=100000 bench/groups.sh
# Settings (environment): N requests per test (200000), TESTS, ROUNDS (2, interleaved; the best
# round's rate is shown with that round's other figures), CLIENTS (50), RELIS_ARGS, RELIS_BIN.
set -euo pipefail
cd "$(dirname "$0")/.."

N="${N:-200000}"
ROUNDS="${ROUNDS:-2}"
CLIENTS="${CLIENTS:-50}"
TESTS="${TESTS:-set hset pfaddnew}"

. bench/common.sh
start_servers

declare -A best line

# The redis-benchmark arguments of test $1.
args_of() {
    case "$1" in
        set) echo "-t set" ;;
        hset) echo "-t hset" ;;
        pfaddnew) echo "PFADD hll:__rand_int__ ele:__rand_int__" ;;
        *) echo "unknown test $1" >&2; exit 2 ;;
    esac
}

# CPU time (user + system, in clock ticks) of process $1 so far.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

commits() { redis-cli -p "$1" info | tr -d '\r' | awk -F: '/^relis_commits:/ {print $2}'; }

# One measured run of test $3 against the server on port $2 (pid $4): "rps cpu-us/req groups".
measure() {
    local target=$1 port=$2 test=$3 pid=$4 t0 t1 c0=0 c1=0 rps
    # shellcheck disable=SC2046
    redis-benchmark -p "$port" -c "$CLIENTS" -n $((N / 4)) -P 1 -r 100000000 $(args_of "$test") >/dev/null 2>&1
    [ "$target" = relis ] && c0="$(commits "$port")"
    t0="$(ticks "$pid")"
    # shellcheck disable=SC2046
    rps="$(redis-benchmark -p "$port" -c "$CLIENTS" -n "$N" -P 1 -r 100000000 --csv $(args_of "$test") \
        | awk -F'","' 'NR == 2 {print $2}')"
    t1="$(ticks "$pid")"
    [ "$target" = relis ] && c1="$(commits "$port")"
    local hz cpu groups="-"
    hz="$(getconf CLK_TCK)"
    cpu="$(awk -v d=$((t1 - t0)) -v hz="$hz" -v n="$N" 'BEGIN {printf "%.1f", d / hz * 1e6 / n}')"
    if [ "$target" = relis ] && [ "$c1" -gt "$c0" ]; then
        groups="$(awk -v n="$N" -v c=$((c1 - c0)) 'BEGIN {printf "%.1f", n / c}')"
    fi
    echo "${rps%.*} $cpu $groups"
}

run() {
    local target=$1 port=$2 pid test m
    pid=$([ "$target" = redis ] && echo "$REDIS_PID" || echo "$RELIS_PID")
    for test in $TESTS; do
        m="$(measure "$target" "$port" "$test" "$pid")"
        if [ -z "${best[$target|$test]:-}" ] || [ "${m%% *}" -gt "${best[$target|$test]}" ]; then
            best[$target|$test]="${m%% *}"
            line[$target|$test]="$m"
        fi
    done
}

for round in $(seq 1 "$ROUNDS"); do
    run_both "round $round/$ROUNDS"
done

echo
echo "redis-benchmark -c $CLIENTS -P 1 -n $N -r 100000000, best of $ROUNDS interleaved rounds"
echo "redis-server $(redis_version) (appendonly yes, appendfsync everysec) vs relis-server ${RELIS_ARGS:-(defaults)}"
echo
printf '| %-9s | %9s | %9s | %11s | %14s | %14s | %16s |\n' test "redis rps" "relis rps" relis/redis \
    "redis us/req" "relis us/req" "relis writes/commit"
printf '|%s|%s|%s|%s|%s|%s|%s|\n' ----------- ----------- ----------- ------------- \
    ---------------- ---------------- ---------------------
for test in $TESTS; do
    read -r rr rc _ <<<"${line[redis|$test]}"
    read -r lr lc lg <<<"${line[relis|$test]}"
    printf '| %-9s | %9s | %9s | %11s | %14s | %14s | %19s |\n' "$test" "$rr" "$lr" \
        "$(ratio "$lr" "$rr")" "$rc" "$lc" "$lg"
done
