# Shared by the side-by-side bench scripts (compare.sh, pubsub.sh, scripting.sh); sourced, not
# run. Checks the tools, builds relis-server unless RELIS_BIN names one, and provides:
#   start_servers   redis-server (appendonly yes, appendfsync everysec: the durable baseline) and
#                   relis-server (with RELIS_ARGS), each in its own temporary directory on a
#                   free port; sets REDIS_PORT and RELIS_PORT and waits until both answer PING
#   keep_best K V   best[K] = V if V is higher (or best[K] is unset); the caller declares `best`
#   ratio A B       A / B to two decimals, or "-" when B is 0
#   redis_version   the installed redis-server's version
#   run_both L [A]  one interleaved round: the caller's `run TARGET PORT [A]` against
#                   redis-server, then relis-server, each announced as "L: <server>" on stderr
# Everything started is stopped, and the temporary directory removed, when the script exits.

RELIS_ARGS="${RELIS_ARGS:-}"

for tool in redis-server redis-benchmark redis-cli; do
    command -v "$tool" >/dev/null || { echo "$tool is not installed (apt-get install redis-server redis-tools)" >&2; exit 1; }
done

if [ -z "${RELIS_BIN:-}" ]; then
    echo "building relis-server (release)..." >&2
    cargo build --release -q -p relis-server
    RELIS_BIN="$PWD/target/release/relis-server"
fi

TMP="$(mktemp -d)"
PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A port nobody listens on (the kernel picks it).
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

wait_ready() {
    local port=$1
    for _ in $(seq 1 200); do
        if [ "$(redis-cli -p "$port" ping 2>/dev/null)" = "PONG" ]; then
            return 0
        fi
        sleep 0.05
    done
    echo "nothing answers PING on port $port" >&2
    exit 1
}

start_servers() {
    mkdir -p "$TMP/redis" "$TMP/relis"
    REDIS_PORT="$(free_port)"
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$TMP/redis" \
        --appendonly yes --appendfsync everysec --save '' --daemonize no \
        --logfile "$TMP/redis.log" &
    PIDS+=($!)
    RELIS_PORT="$(free_port)"
    # shellcheck disable=SC2086  # RELIS_ARGS is a list of words on purpose
    "$RELIS_BIN" --port "$RELIS_PORT" --dir "$TMP/relis" --logfile "$TMP/relis.log" $RELIS_ARGS &
    PIDS+=($!)
    wait_ready "$REDIS_PORT"
    wait_ready "$RELIS_PORT"
}

keep_best() {
    local key=$1 value=$2
    if [ -z "${best[$key]:-}" ] || awk -v a="$value" -v b="${best[$key]}" 'BEGIN { exit !(a > b) }'; then
        best[$key]="$value"
    fi
}

ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'
}

redis_version() {
    redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/'
}

# One interleaved round: the caller's `run TARGET PORT [ARG]` against redis-server, then
# relis-server (ARG: a pipeline depth, or nothing).
run_both() {
    local label=$1
    shift
    echo "$label: redis-server" >&2
    run redis "$REDIS_PORT" "$@"
    echo "$label: relis-server" >&2
    run relis "$RELIS_PORT" "$@"
}
