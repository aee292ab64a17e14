#!/bin/sh
# debug.sh: the debugger at the paper's scale. Drives `argus debug` in a
# pseudo-terminal (debug-bench) over the trace of the event graph
# benchmark (19 M events, 679 threads, about 2.8 M vertices; generated
# once by gen-graph and cached under $B/bench, shared with graph.sh) and
# reports the redraw time per key against 50 ms, and zooming out to the
# whole trace against 100 ms, at 120x40 and 200x60.
# Environment: B, ARGUS, GRAPH_BENCH_EVENTS (default 19000000),
# DEBUG_BENCH_TRACE (use this trace instead), DEBUG_BENCH_AT (open with
# --at this time: a window of the trace; first screen target 2 s).
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
EV=${GRAPH_BENCH_EVENTS:-19000000}
D="$B/bench"
mkdir -p "$D"
. tests/bench/lib.sh
trace=${DEBUG_BENCH_TRACE:-}
[ -n "$trace" ] || trace=$(cached_trace "$EV") || exit 1
rc=0
for size in "120 40" "200 60"; do
	set -- $size
	"$B/tests/bench/debug-bench" "$ARGUS" "$trace" "$1" "$2" || rc=1
done
exit $rc
