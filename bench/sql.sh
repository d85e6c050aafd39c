#!/usr/bin/env bash
# SQL through the server, side by side with GET on the same run and with raw SQLite.
#
# Starts redis-server (appendonly yes, appendfsync everysec) and a release build of relis-server
# (bench/common.sh), creates on Relis
#   t(a INTEGER, b INTEGER, c INTEGER)            for the 3-integer insert
#   kv(id INTEGER PRIMARY KEY, v TEXT)             KEYSPACE rows, for the primary-key query
#   b(v BLOB)                                      for the 100 KB rows
# with prepared statements `ins`, `pk` and `insb`, fills the string keys key:<n> on both servers,
# then in interleaved rounds runs redis-benchmark -c CLIENTS -P 1:
#   SQL.RUN ins <3 random ints>                    (issue bar: >= 100,000/s)
#   SQL.EXEC "INSERT INTO t ..." <3 random ints>   (bar: >= 80% of SQL.RUN)
#   SQL.QUERY "SELECT v FROM kv WHERE id = ?" <n>  (bar: >= 0.8x GET on the same server and run)
#   GET key:<n>                                    (on Relis and on redis-server)
#   SQL.RUN insb <100 KB value>                    (bar: >= 80% of raw SQLite's blob inserts)
# and raw SQLite (crates/relis/examples/raw_sqlite_inserts.rs: the same bundled SQLite and file
# settings, no server) inserting the same rows, one commit per row and BATCH rows per commit.
#
# Usage: bench/sql.sh                               (the full run)
#        N=20000 BLOB_N=500 ROUNDS=1 bench/sql.sh   (a quick check)
# Settings (environment): N requests per run (200000), BLOB_N 100 KB inserts per run (3000),
# ROUNDS (2), CLIENTS (50), KEYSPACE (100000), BATCH (50), RELIS_ARGS, RELIS_BIN.
set -euo pipefail
cd "$(dirname "$0")/.."

N="${N:-200000}"
BLOB_N="${BLOB_N:-3000}"
ROUNDS="${ROUNDS:-2}"
CLIENTS="${CLIENTS:-50}"
KEYSPACE="${KEYSPACE:-100000}"
BATCH="${BATCH:-50}"

. bench/common.sh
echo "building the raw SQLite baseline (release)..." >&2
cargo build --release -q -p relis --example raw_sqlite_inserts
RAW="$PWD/target/release/examples/raw_sqlite_inserts"
start_servers

relis() {
    local out
    out="$(redis-cli -p "$RELIS_PORT" "$@")"
    case "$out" in
        ERR*|*"ERR "*) echo "relis-server: $*: $out" >&2; exit 1 ;;
    esac
}
relis SQL.EXEC "CREATE TABLE t(a INTEGER, b INTEGER, c INTEGER)"
relis SQL.EXEC "CREATE TABLE kv(id INTEGER PRIMARY KEY, v TEXT)"
relis SQL.EXEC "CREATE TABLE b(v BLOB)"
relis SQL.EXEC "WITH RECURSIVE n(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM n WHERE x < $KEYSPACE - 1) INSERT INTO kv SELECT x, 'value' FROM n"
relis SQL.PREPARE ins "INSERT INTO t(a, b, c) VALUES (?, ?, ?)"
relis SQL.PREPARE pk "SELECT v FROM kv WHERE id = ?"
relis SQL.PREPARE insb "INSERT INTO b(v) VALUES (?)"
# The same KEYSPACE string keys on both servers, so GET finds what SQL.QUERY finds.
for port in "$REDIS_PORT" "$RELIS_PORT"; do
    redis-benchmark -p "$port" -c "$CLIENTS" -n $((KEYSPACE * 3)) -r "$KEYSPACE" -P 16 -q \
        SET 'key:__rand_int__' value >/dev/null
done
BLOB="$(head -c 100000 /dev/zero | tr '\0' x)"

declare -A best
ORDER=("sql.run" "sql.exec" "sql.query" "get" "sql.run 100KB")

# Prints the requests/s of one redis-benchmark run of the given command.
rps_of() {
    local port=$1 n=$2
    shift 2
    redis-benchmark -p "$port" -c "$CLIENTS" -n "$n" -r "$KEYSPACE" -P 1 --csv "$@" 2>/dev/null |
        awk -F'"' 'NR > 1 && $4 != "" { print $4; exit }'
}

for round in $(seq 1 "$ROUNDS"); do
    echo "round $round/$ROUNDS: redis-server GET" >&2
    keep_best "redis|get" "$(rps_of "$REDIS_PORT" "$N" GET 'key:__rand_int__')"
    echo "round $round/$ROUNDS: relis-server" >&2
    keep_best "relis|sql.run" "$(rps_of "$RELIS_PORT" "$N" SQL.RUN ins __rand_int__ __rand_int__ __rand_int__)"
    keep_best "relis|sql.exec" "$(rps_of "$RELIS_PORT" "$N" SQL.EXEC "INSERT INTO t(a, b, c) VALUES (?, ?, ?)" __rand_int__ __rand_int__ __rand_int__)"
    keep_best "relis|sql.query" "$(rps_of "$RELIS_PORT" "$N" SQL.QUERY "SELECT v FROM kv WHERE id = ?" __rand_int__)"
    keep_best "relis|get" "$(rps_of "$RELIS_PORT" "$N" GET 'key:__rand_int__')"
    keep_best "relis|sql.run 100KB" "$(rps_of "$RELIS_PORT" "$BLOB_N" SQL.RUN insb "$BLOB")"
    echo "round $round/$ROUNDS: raw SQLite" >&2
    read -r rps _ < <("$RAW" "$TMP/raw.db" int3 "$N" 24 1)
    keep_best "raw|int3|1" "$rps"
    read -r rps _ < <("$RAW" "$TMP/raw.db" int3 "$N" 24 "$BATCH")
    keep_best "raw|int3|$BATCH" "$rps"
    read -r rps _ < <("$RAW" "$TMP/raw.db" blob "$BLOB_N" 100000 1)
    keep_best "raw|blob|1" "$rps"
    read -r rps _ < <("$RAW" "$TMP/raw.db" blob "$BLOB_N" 100000 "$BATCH")
    keep_best "raw|blob|$BATCH" "$rps"
done

run_sql="${best[relis|sql.run]:-0}"
get="${best[relis|get]:-0}"
blob="${best[relis|sql.run 100KB]:-0}"
raw_blob="${best[raw|blob|$BATCH]:-0}"
echo
echo "redis-benchmark -c $CLIENTS -P 1 (-n $N; 100 KB rows -n $BLOB_N), best of $ROUNDS interleaved rounds; $(nproc) CPUs"
echo "redis-server $(redis_version) (appendonly yes, appendfsync everysec) vs relis-server ${RELIS_ARGS:-(defaults)}"
echo
printf '| %-40s | %10s | %-34s | %10s |\n' measure "per second" "bar" "measured"
printf '|%s|%s|%s|%s|\n' ------------------------------------------ ------------ ------------------------------------ ------------
row() { printf '| %-40s | %10.0f | %-34s | %10s |\n' "$@"; }
row "SQL.RUN 3-integer insert" "$run_sql" ">= 100000/s" "$(ratio "$run_sql" 100000)x"
row "SQL.EXEC same SQL text" "${best[relis|sql.exec]:-0}" ">= 0.8x SQL.RUN" "$(ratio "${best[relis|sql.exec]:-0}" "$run_sql")x"
row "SQL.QUERY primary-key point query" "${best[relis|sql.query]:-0}" ">= 0.8x GET (relis, same run)" "$(ratio "${best[relis|sql.query]:-0}" "$get")x"
row "GET (relis-server)" "$get" "" "$(ratio "$get" "${best[redis|get]:-0}")x redis"
row "GET (redis-server)" "${best[redis|get]:-0}" "" ""
row "SQL.RUN 100 KB rows" "$blob" ">= 0.8x raw SQLite, $BATCH/commit" "$(ratio "$blob" "$raw_blob")x"
row "raw SQLite 3-integer insert, 1/commit" "${best[raw|int3|1]:-0}" "" ""
row "raw SQLite 3-integer insert, $BATCH/commit" "${best[raw|int3|$BATCH]:-0}" "" ""
row "raw SQLite 100 KB rows, 1/commit" "${best[raw|blob|1]:-0}" "" ""
row "raw SQLite 100 KB rows, $BATCH/commit" "$raw_blob" "" ""
