#!/bin/sh
# graph.sh: the event graph at the paper's scale, and its peer.
#
# 1. gen-graph writes (once, cached under $B/bench) a trace shaped like
#    the paper's Chromium session through the real store: 19 M events,
#    126 processes, 679 threads, about 830 K messages;
# 2. graph-bench loads it, builds the graph, rebuilds it after a rule
#    change, and prints times and peak memory against the targets;
# 3. as a peer, `perf sched timehist -w` over a perf.data recorded from
#    `perf bench sched messaging` (needs root; about 2 M events, as a
#    perf.data of 19 M events would take 2 GB), and argus on a trace of
#    the same number of events.
# Environment: B (build directory), GRAPH_BENCH_EVENTS (default 19000000).
set -u
B=${B:-build}
D="$B/bench"
EV=${GRAPH_BENCH_EVENTS:-19000000}
mkdir -p "$D"

. tests/bench/lib.sh
trace=$(cached_trace "$EV") || exit 1
"$B/tests/bench/graph-bench" "$trace" || exit 1

if ! command -v perf >/dev/null 2>&1 || [ "$(id -u)" != 0 ]; then
	echo "graph.sh: perf or root missing; peer comparison skipped"
	exit 0
fi
pd="$D/perf-sched.data"
if [ ! -f "$pd" ]; then
	perf sched record -o "$pd" -- perf bench sched messaging -g 10 \
	    -l 2700 >/dev/null 2>&1 || { echo "graph.sh: perf sched record failed"; exit 0; }
fi
n=$(perf report -i "$pd" --stats 2>/dev/null |
    awk '/SAMPLE events:/ { print $3; exit }')
[ -n "$n" ] || { echo "graph.sh: cannot count the perf.data events"; exit 0; }
t0=$(date +%s%N)
perf sched timehist -w -i "$pd" >/dev/null 2>&1
t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
awk -v n="$n" -v ms="$ms" 'BEGIN { printf "graph.sh: perf sched timehist -w: %d events in %d ms (%.1f M events/s)\n", n, ms, n / (ms > 0 ? ms : 1) / 1000 }' 
peer=$(cached_trace "$n" 2>/dev/null) || exit 1
t0=$(date +%s%N)
"$B/tests/bench/graph-bench" "$peer" | grep 'trace to graph'
t1=$(date +%s%N)
echo "graph.sh: argus graph-bench on $n events: $(( (t1 - t0) / 1000000 )) ms" \
    "for the whole program"
