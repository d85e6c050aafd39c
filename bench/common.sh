# Shared by the side-by-side bench scripts (compare.sh, pubsub.sh, scripting.sh, memory.sh,
# clients.sh, ...); sourced, not run. Checks the tools, builds relis-server unless RELIS_BIN
# names one, and provides:
#   start_servers [NAME]
#                   redis-server (appendonly yes, appendfsync everysec: the durable baseline,
#                   with REDIS_ARGS) and relis-server (with RELIS_ARGS), each in its own temporary
#                   directory ($TMP/redis$NAME, $TMP/relis$NAME) on a free port; sets REDIS_PORT,
#                   RELIS_PORT, REDIS_PID, RELIS_PID, REDIS_DIR, RELIS_DIR and waits until both
#                   answer PING (NAME tells a second pair from the first)
#   load_keys PORT N [SIZE]
#                   SET key:000000000000 .. key:<N-1> (redis-benchmark's key names) to SIZE-byte
#                   values (100) through `redis-cli --pipe`: the same N keys in any server
#   rss_kib PID FIELD   a /proc/PID/status field in KiB (VmRSS, RssAnon, RssFile)
#   keep_best K V   best[K] = V if V is higher (or best[K] is unset); the caller declares `best`
#   ratio A B       A / B to two decimals, or "-" when B is 0
#   redis_version   the installed redis-server's version
#   run_both L [A]  one interleaved round: the caller's `run TARGET PORT [A]` against
#                   redis-server, then relis-server, each announced as "L: <server>" on stderr
# Everything started is stopped, and the temporary directory removed, when the script exits.

RELIS_ARGS="${RELIS_ARGS:-}"
REDIS_ARGS="${REDIS_ARGS:-}"

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
    local name=${1:-}
    REDIS_DIR="$TMP/redis$name"
    RELIS_DIR="$TMP/relis$name"
    mkdir -p "$REDIS_DIR" "$RELIS_DIR"
    REDIS_PORT="$(free_port)"
    # shellcheck disable=SC2086  # REDIS_ARGS is a list of words on purpose
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$REDIS_DIR" \
        --appendonly yes --appendfsync everysec --save '' --daemonize no \
        --logfile "$TMP/redis$name.log" $REDIS_ARGS &
    REDIS_PID=$!
    PIDS+=("$REDIS_PID")
    RELIS_PORT="$(free_port)"
    # shellcheck disable=SC2086  # RELIS_ARGS is a list of words on purpose
    "$RELIS_BIN" --port "$RELIS_PORT" --dir "$RELIS_DIR" --logfile "$TMP/relis$name.log" \
        $RELIS_ARGS &
    RELIS_PID=$!
    PIDS+=("$RELIS_PID")
    wait_ready "$REDIS_PORT"
    wait_ready "$RELIS_PORT"
}

# SET commands for keys FROM..FROM+N-1 with SIZE-byte values, in RESP (redis-cli --pipe's input).
gen_sets() {
    python3 - "$1" "$2" "$3" <<'PY'
import sys
n, size, start = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
out = sys.stdout.buffer
head = b"*3\r\n$3\r\nSET\r\n$16\r\n"
tail = b"\r\n$%d\r\n%s\r\n" % (size, b"x" * size)
batch = []
for i in range(start, start + n):
    batch.append(head + b"key:%012d" % i + tail)
    if len(batch) == 10000:
        out.write(b"".join(batch))
        batch.clear()
out.write(b"".join(batch))
PY
}

load_keys() {
    local port=$1 n=$2 size=${3:-100} report
    report="$(gen_sets "$n" "$size" 0 | redis-cli -p "$port" --pipe 2>&1)"
    if ! grep -q "errors: 0, replies: $n\$" <<<"$report"; then
        echo "loading $n keys into port $port failed: $report" >&2
        exit 1
    fi
}

rss_kib() {
    awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"
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
