#!/usr/bin/env bash
# Relis from Python: one Python thread doing GET and SET on the embedded engine (the relis
# package, a release build, durability normal) beside redis-py talking to redis-server
# (appendonly yes, appendfsync everysec: the durable baseline) and to relis-server, in one run.
#
# Builds the package into a virtualenv (target/bench-python-venv, kept) with redis-py, starts
# both servers (bench/common.sh), then runs bench/python.py for each target and operation in
# interleaved rounds and prints the best ops/s of each and the ratios embedded / redis-py to
# redis-server. The issue's bar: GET >= 10x and SET >= 3x.
#
# Usage: bench/python.sh                  (the full run)
#        N=2000 ROUNDS=1 bench/python.sh  (a quick check)
# Settings (environment): N operations per run (100000), ROUNDS (3), RELIS_ARGS, RELIS_BIN (a
# prebuilt relis-server; skips its build), PYTHON (the interpreter for the virtualenv, python3).
set -euo pipefail
cd "$(dirname "$0")/.."

N="${N:-100000}"
ROUNDS="${ROUNDS:-3}"
PYTHON="${PYTHON:-python3}"

. bench/common.sh

VENV="$PWD/target/bench-python-venv"
if [ ! -x "$VENV/bin/maturin" ]; then
    "$PYTHON" -m venv "$VENV"
    "$VENV/bin/pip" install --quiet "maturin>=1.9.4,<2" redis
fi
echo "building the relis package (release)..." >&2
(cd crates/relis-py && VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH" maturin develop --release --quiet >&2)

start_servers
declare -A best

run() {
    local target=$1 where=$2 op=$3
    keep_best "$target|$op" "$("$VENV/bin/python" bench/python.py "$target" "$where" "$op" "$N" 1)"
}

for round in $(seq 1 "$ROUNDS"); do
    for op in get set; do
        echo "round $round: $op" >&2
        run embedded "$TMP/embedded.db" "$op"
        run redis "$REDIS_PORT" "$op"
        run relis "$RELIS_PORT" "$op"
    done
done

echo "One Python thread, ops/s (best of $ROUNDS runs of $N; redis-server $(redis_version), AOF everysec)"
printf '%-5s %14s %22s %22s %14s\n' op embedded "redis-py→redis-server" "redis-py→relis-server" "embedded/redis"
for op in get set; do
    printf '%-5s %14s %22s %22s %13sx\n' "$op" "${best[embedded|$op]}" "${best[redis|$op]}" \
        "${best[relis|$op]}" "$(ratio "${best[embedded|$op]}" "${best[redis|$op]}")"
done
echo "bar: GET >= 10x, SET >= 3x"
