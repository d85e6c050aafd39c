#!/usr/bin/env bash
# Deleting or overwriting a collection of a million elements while other clients work.
#
# Relis deletes the elements of a collection larger than 1024 elements in the background: DEL,
# an overwrite (SET, a STORE), RENAME over it or its expiry only remove the key row and put the
# collection's id in `relis_trash`; the writer's periodic sweep deletes up to TRASH_BATCH (4096)
# of its elements every 100 ms, each batch inside an ordinary group commit, until none are left.
# The key's name is free at once (a new key gets a new id), and the leftover elements are never
# visible. This runs the release-mode measurement test that shows it: a 1M-element hash is
# DELeted and a 1M-member set is overwritten with SET while one client loops GET and another
# INCR; it prints how long the command took, how long the trash took to empty (rows counted in
# the SQLite file), and GET/INCR latency before and during.
#
# Usage: bench/large_delete.sh            (1,000,000 elements)
#        RELIS_LARGE_N=100000 bench/large_delete.sh
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo test --release -p relis-server --test types -- --ignored --nocapture \
    large_collections_are_deleted_in_the_background
