#!/usr/bin/env bash
# Relis over PostgreSQL against PostgreSQL's own ceiling, in one run on this machine (issue 19's
# bar: one node at -c 50 -P 1 >= 0.5x pgbench doing the same SQL; two nodes >= 1.3x one node).
#
# Starts a throwaway PostgreSQL cluster (initdb as the `postgres` user in a temporary directory,
# 127.0.0.1 on a free port, fsync on, synchronous_commit on), creates Relis's schema by starting
# relis-server on it, then measures, with the same keys (key:000000000000 .. key:<KEYSPACE-1>,
# redis-benchmark's names) and the same stored value (the DUMP payload Relis writes for "xxx",
# redis-benchmark's 3-byte value):
#   pgbench -n -c 50 -j 2 -M prepared -T DURATION   a script per statement: the single-row
#       upsert a SET writes back (INSERT ... ON CONFLICT DO UPDATE, version from the sequence)
#       and the point SELECT a GET loads, each its own transaction: PostgreSQL's ceiling for the
#       work SET and GET need;
#   relis-server, one node:   redis-benchmark -c 50 -n REQUESTS -r KEYSPACE -t set,get, -P 1
#       and -P 16 (the CPU split of its -P 1 SET run is taken from /proc, per thread name);
#   relis-server, two nodes on the same PostgreSQL: redis-benchmark -c 25 -n REQUESTS/2 against
#       each, both at once (SET, then GET), rates summed (and that SET run's CPU split); then
#       the same at -c 50 each beside one node at -c 100 (the same offered load: a second node
#       is added for its own clients, so this is what adding it adds when one node has 100);
#   peers (PEERS=1): redis-server (appendonly yes, appendfsync everysec) and relis-server on
#       SQLite (its defaults), -c 50 -P 1.
# Prints a markdown table: the rates, one node / pgbench (bar 0.5) and two nodes / one node
# (bar 1.3).
#
# Usage: bench/postgres.sh                 (the full run)
#        SMOKE=1 bench/postgres.sh         (a tiny run: checks the script, not the figures)
# Settings (environment): DURATION seconds per pgbench run (20), REQUESTS per redis-benchmark
# test (200000), KEYSPACE (100000), PEERS (1; 0 skips redis-server and Relis on SQLite),
# PG_ARGS (extra `postgres -c name=value` settings, e.g. "-c shared_buffers=256MB"), KEEP=1
# (keep the cluster's directory, printed at the end; the cluster is stopped either way),
# CPU_WINDOW (4: seconds of each CPU split, from 1 s into its run; the run must last longer),
# RELIS_BIN (a prebuilt relis-server; skips the build).
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION="${DURATION:-20}"
REQUESTS="${REQUESTS:-200000}"
KEYSPACE="${KEYSPACE:-100000}"
PEERS="${PEERS:-1}"
PG_ARGS="${PG_ARGS:-}"
KEEP="${KEEP:-0}"
CPU_WINDOW="${CPU_WINDOW:-4}"
if [ "${SMOKE:-0}" = 1 ]; then
    DURATION=2 REQUESTS=4000 KEYSPACE=1000 CPU_WINDOW=0.2
fi

for tool in pgbench psql; do
    command -v "$tool" >/dev/null || { echo "$tool is not installed (apt-get install postgresql)" >&2; exit 1; }
done
PG_BIN="$(find /usr/lib/postgresql -maxdepth 3 -name initdb -path '*/bin/*' 2>/dev/null | sort -V | tail -1)"
PG_BIN="${PG_BIN%/initdb}"
if [ -z "$PG_BIN" ]; then
    PG_BIN="$(dirname "$(command -v initdb || echo /nonexistent/initdb)")"
fi
[ -x "$PG_BIN/initdb" ] || { echo "initdb not found (apt-get install postgresql)" >&2; exit 1; }

. bench/common.sh

# The cluster lives outside $TMP: its owner must be `postgres` when we are root (initdb refuses
# to run as root), and $TMP is private to us.
PG_DIR="$(mktemp -d)"
as_pg() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}
if [ "$(id -u)" = 0 ]; then
    chown postgres "$PG_DIR"
fi
pg_stop() {
    if [ -f "$PG_DIR/data/postmaster.pid" ]; then
        as_pg "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    if [ "$KEEP" = 1 ]; then
        echo "kept the cluster's directory: $PG_DIR" >&2
    else
        rm -rf "$PG_DIR"
    fi
}
trap 'cleanup; pg_stop' EXIT

PG_PORT="$(free_port)"
echo "starting PostgreSQL ($PG_BIN) on port $PG_PORT..." >&2
as_pg "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth=trust -E UTF8 --locale=C >/dev/null
# shellcheck disable=SC2086  # PG_ARGS is a list of words on purpose
as_pg "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w start \
    -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=$PG_DIR \
        -c fsync=on -c synchronous_commit=on -c max_connections=200 $PG_ARGS" >/dev/null
PG_URL="postgres://postgres@127.0.0.1:$PG_PORT/postgres"
pg() {
    psql -X -q -A -t -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -c "$1"
}

# start_node NAME: relis-server over the cluster; sets NODE_PORT.
start_node() {
    local name=$1 pid
    mkdir -p "$TMP/$name"
    NODE_PORT="$(free_port)"
    "$RELIS_BIN" --port "$NODE_PORT" --dir "$TMP/$name" --logfile "$TMP/$name.log" \
        --backend "$PG_URL" &
    pid=$!
    PIDS+=("$pid")
    eval "${name}_PID=$pid"
    wait_ready "$NODE_PORT"
}

# The first node creates the schema; its value for "xxx" is what pgbench writes.
start_node node1
NODE1_PORT=$NODE_PORT
redis-cli -p "$NODE1_PORT" set key:probe xxx >/dev/null
VALUE_HEX="$(pg "SELECT encode(value, 'hex') FROM relis_keys WHERE db = 0 AND key = 'key:probe'::bytea")"
[ -n "$VALUE_HEX" ] || { echo "relis-server wrote no row for key:probe" >&2; exit 1; }
redis-cli -p "$NODE1_PORT" del key:probe >/dev/null

# The statements a SET writes back and a GET loads (backend/postgres/mod.rs), one key each.
KEY_EXPR="convert_to('key:' || lpad(:k::text, 12, '0'), 'UTF8')"
cat >"$TMP/set.sql" <<SQL
\set k random(0, $((KEYSPACE - 1)))
INSERT INTO relis_keys (db, key, value, expire_at, version)
VALUES (0, $KEY_EXPR, '\\x$VALUE_HEX'::bytea, NULL, nextval('relis_versions'))
ON CONFLICT (db, key) DO UPDATE SET value = excluded.value, expire_at = excluded.expire_at,
    version = excluded.version;
SQL
cat >"$TMP/get.sql" <<SQL
\set k random(0, $((KEYSPACE - 1)))
SELECT value, expire_at, version FROM relis_keys WHERE db = 0 AND key = $KEY_EXPR;
SQL

declare -A rate
# pgbench_run NAME SCRIPT
pgbench_run() {
    local out tps
    echo "pgbench: $1" >&2
    out="$(pgbench -n -h 127.0.0.1 -p "$PG_PORT" -U postgres -c 50 -j 2 -M prepared \
        -T "$DURATION" -f "$2" postgres 2>&1)" || { echo "$out" >&2; exit 1; }
    tps="$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$out" | head -1)"
    rate["pgbench|$1"]="$tps"
}

# bench TARGET PORT CLIENTS N PIPELINE TESTS: rate[TARGET|TEST] from redis-benchmark's CSV.
bench() {
    local target=$1 line name rps
    while IFS= read -r line; do
        name="$(cut -d'"' -f2 <<<"$line")"
        rps="$(cut -d'"' -f4 <<<"$line")"
        [ "$name" = "test" ] && continue
        [ -z "$rps" ] && continue
        rate["$target|$name"]="$rps"
    done < <(redis-benchmark -p "$2" -c "$3" -n "$4" -r "$KEYSPACE" -P "$5" -t "$6" --csv 2>/dev/null)
}

# CPU time per thread name (postgres backends are all "postgres"), for a split of one run.
cpu_snap() {
    python3 - <<'PY'
import os, collections
ticks = collections.Counter()
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                s = f.read()
            name = s[s.index("(") + 1 : s.rindex(")")]
            if name.startswith("kworker/"):
                name = "kworker"
            fields = s[s.rindex(")") + 2 :].split()
            ticks[name] += int(fields[11]) + int(fields[12])
    except (FileNotFoundError, ProcessLookupError, ValueError):
        continue
with open("/proc/stat") as f:
    cpu = [int(x) for x in f.readline().split()[1:8]]
print("__total__", sum(cpu))
print("__idle__", cpu[3] + cpu[4])
for name, t in ticks.items():
    print(name.replace(" ", "_"), t)
PY
}
# cpu_split BEFORE AFTER: the busiest thread names' share of the whole machine (all CPUs).
cpu_split() {
    python3 - "$1" "$2" <<'PY'
import sys
def load(p):
    return {k: int(v) for k, v in (l.split() for l in open(p))}
a, b = load(sys.argv[1]), load(sys.argv[2])
total = max(1, b.pop("__total__") - a.pop("__total__"))
idle = b.pop("__idle__") - a.pop("__idle__")
d = {k: v - a.get(k, 0) for k, v in b.items()}
busy = sorted(((v, k) for k, v in d.items() if v > 0), reverse=True)[:8]
print(", ".join(f"{k} {100 * v / total:.0f}%" for v, k in busy) + f"; idle {100 * idle / total:.0f}%")
PY
}
declare -A split
# measured LABEL COMMAND...: runs COMMAND and samples the machine's CPU from 1 s into it for
# CPU_WINDOW seconds (while the benchmark still runs: the threads of a process that has exited
# are gone from /proc).
measured() {
    local label=$1 sampler
    shift
    (
        sleep 1
        cpu_snap >"$TMP/cpu.a"
        sleep "$CPU_WINDOW"
        cpu_snap >"$TMP/cpu.b"
    ) &
    sampler=$!
    "$@"
    wait "$sampler"
    split[$label]="$(cpu_split "$TMP/cpu.a" "$TMP/cpu.b")"
}

pgbench_run SET "$TMP/set.sql"
pgbench_run GET "$TMP/get.sql"

echo "relis-server, one node, -P 1" >&2
measured one-set bench one1 "$NODE1_PORT" 50 "$REQUESTS" 1 set
bench one1 "$NODE1_PORT" 50 "$REQUESTS" 1 get
echo "relis-server, one node, -P 16" >&2
bench one16 "$NODE1_PORT" 50 "$REQUESTS" 16 set,get
# One node under the load two nodes take at 50 clients each: what adding a node adds at the
# same offered load, not only at the same client count.
echo "relis-server, one node, -c 100 -P 1" >&2
bench one100 "$NODE1_PORT" 100 "$REQUESTS" 1 set,get

start_node node2
NODE2_PORT=$NODE_PORT
# two_nodes TEST [CLIENTS [LABEL]]: redis-benchmark against both nodes at once, CLIENTS each
# (25: the 50 of one node split), each CSV to a file; the rates and their sum.
two_nodes() {
    local t=$1 c=${2:-25} l=${3:-two} a b name ra rb
    redis-benchmark -p "$NODE1_PORT" -c "$c" -n "$((REQUESTS / 2))" -r "$KEYSPACE" -t "$t" --csv \
        >"$TMP/two-a.csv" 2>/dev/null &
    a=$!
    redis-benchmark -p "$NODE2_PORT" -c "$c" -n "$((REQUESTS / 2))" -r "$KEYSPACE" -t "$t" --csv \
        >"$TMP/two-b.csv" 2>/dev/null &
    b=$!
    wait "$a" "$b"
    name="$(tr '[:lower:]' '[:upper:]' <<<"$t")"
    ra="$(awk -F'"' -v n="$name" '$2 == n { print $4 }' "$TMP/two-a.csv")"
    rb="$(awk -F'"' -v n="$name" '$2 == n { print $4 }' "$TMP/two-b.csv")"
    rate["$l-a|$name"]="$ra"
    rate["$l-b|$name"]="$rb"
    rate["$l|$name"]="$(awk -v a="$ra" -v b="$rb" 'BEGIN { printf "%.2f", a + b }')"
}
echo "relis-server, two nodes, -P 1" >&2
measured two-set two_nodes set
two_nodes get
echo "relis-server, two nodes, -c 50 each, -P 1" >&2
two_nodes set 50 two50
two_nodes get 50 two50

if [ "$PEERS" = 1 ]; then
    start_servers
    echo "peers: redis-server, relis-server on SQLite, -P 1" >&2
    bench redis "$REDIS_PORT" 50 "$REQUESTS" 1 set,get
    bench sqlite "$RELIS_PORT" 50 "$REQUESTS" 1 set,get
fi

r() { printf '%.0f' "${rate[$1]:-0}"; }
echo
echo "$(nproc) CPUs; PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') (fsync on," \
    "synchronous_commit on${PG_ARGS:+, $PG_ARGS}); pgbench -c 50 -j 2 -M prepared -T $DURATION;" \
    "redis-benchmark -n $REQUESTS -r $KEYSPACE (3-byte values)"
echo
echo "| run | SET/s | GET/s |"
echo "|---|---:|---:|"
echo "| pgbench, 50 clients: the upsert / the point SELECT | $(r 'pgbench|SET') | $(r 'pgbench|GET') |"
echo "| relis one node, -c 50 -P 1 | $(r 'one1|SET') | $(r 'one1|GET') |"
echo "| relis one node, -c 50 -P 16 | $(r 'one16|SET') | $(r 'one16|GET') |"
echo "| relis two nodes, -c 25 each -P 1, summed | $(r 'two|SET') ($(r 'two-a|SET') + $(r 'two-b|SET')) | $(r 'two|GET') ($(r 'two-a|GET') + $(r 'two-b|GET')) |"
echo "| relis one node, -c 100 -P 1 | $(r 'one100|SET') | $(r 'one100|GET') |"
echo "| relis two nodes, -c 50 each -P 1, summed | $(r 'two50|SET') ($(r 'two50-a|SET') + $(r 'two50-b|SET')) | $(r 'two50|GET') ($(r 'two50-a|GET') + $(r 'two50-b|GET')) |"
if [ "$PEERS" = 1 ]; then
    echo "| redis-server $(redis_version) (appendonly, everysec), -c 50 -P 1 | $(r 'redis|SET') | $(r 'redis|GET') |"
    echo "| relis on SQLite, -c 50 -P 1 | $(r 'sqlite|SET') | $(r 'sqlite|GET') |"
fi
echo "| **one node -P 1 / pgbench** (bar 0.5) | $(ratio "${rate['one1|SET']:-0}" "${rate['pgbench|SET']:-0}") | $(ratio "${rate['one1|GET']:-0}" "${rate['pgbench|GET']:-0}") |"
echo "| one node -P 16 / pgbench | $(ratio "${rate['one16|SET']:-0}" "${rate['pgbench|SET']:-0}") | $(ratio "${rate['one16|GET']:-0}" "${rate['pgbench|GET']:-0}") |"
echo "| **two nodes / one node** (bar 1.3), 50 clients in all | $(ratio "${rate['two|SET']:-0}" "${rate['one1|SET']:-0}") | $(ratio "${rate['two|GET']:-0}" "${rate['one1|GET']:-0}") |"
echo "| **two nodes / one node** (bar 1.3), 100 clients in all | $(ratio "${rate['two50|SET']:-0}" "${rate['one100|SET']:-0}") | $(ratio "${rate['two50|GET']:-0}" "${rate['one100|GET']:-0}") |"
echo "| two nodes at 50 clients each / one node at 50 | $(ratio "${rate['two50|SET']:-0}" "${rate['one1|SET']:-0}") | $(ratio "${rate['two50|GET']:-0}" "${rate['one1|GET']:-0}") |"
echo
echo "CPU (share of all $(nproc) CPUs, by thread name, ${CPU_WINDOW} s of the run):"
echo "- one node, SET -P 1: ${split[one-set]}"
echo "- two nodes, SET -P 1: ${split[two-set]}"
