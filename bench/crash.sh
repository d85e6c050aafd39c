#!/usr/bin/env bash
# Crash-safety harness, long mode: a write load from 6 clients (SET, HSET, RPUSH, ZADD,
# SQL.EXEC inserts into a user table, MULTI/EXEC blocks writing all five at once, INCR), the
# release server SIGKILLed at a random moment each round, restarted on the same files, and
# checked: every acknowledged write present, nothing unsent present, no MULTI half applied,
# `PRAGMA integrity_check` ok on the files the killed process left. Runs with
# `durability normal` and `durability full` and prints, per mode: rounds, writes acknowledged,
# writes lost (must be 0). The harness is crates/relis-server/tests/crash.rs; `cargo test` runs
# it in a short mode.
#
# Usage: bench/crash.sh                 (200 rounds per durability mode)
#        RELIS_CRASH_ROUNDS=50 bench/crash.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p relis-server --bin relis-server --features test-shims
export RELIS_CRASH_BIN="$PWD/target/release/relis-server"
export RELIS_CRASH_ROUNDS="${RELIS_CRASH_ROUNDS:-200}"
exec cargo test -p relis-server --test crash -- --nocapture --test-threads=1
