#!/bin/sh
# diag.sh: the diagnosis at the paper's scale (target: 200 ms after the
# graph is built). Uses the trace gen-graph writes for graph.sh (cached
# under $B/bench; written here when missing).
# Environment: B (build directory), GRAPH_BENCH_EVENTS (default 19000000).
set -u
B=${B:-build}
D="$B/bench"
EV=${GRAPH_BENCH_EVENTS:-19000000}
mkdir -p "$D"

. tests/bench/lib.sh
trace=$(cached_trace "$EV") || exit 1
"$B/tests/bench/diag-bench" "$trace"
