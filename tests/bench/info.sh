#!/bin/sh
# info.sh: `argus info` on the cached generated trace of graph.sh
# ($B/bench/graph-$EV, written once by gen-graph through the real store).
# The default info reads headers and seek indexes only, so its time must
# not grow with the events (target: at most 1 s at any size); `--events`
# decodes every event and is timed beside it for comparison. Each is run
# three times and the best wall time is printed.
# Environment: ARGUS, B (build directory), GRAPH_BENCH_EVENTS (default
# 19000000).
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
D="$B/bench"
EV=${GRAPH_BENCH_EVENTS:-19000000}
mkdir -p "$D"

. tests/bench/lib.sh
trace=$(cached_trace "$EV") || exit 1
# best_ms ARGS...: the best wall time of three runs of argus ARGS, in ms
best_ms() {
	best=
	for i in 1 2 3; do
		t0=$(date +%s%N)
		"$ARGUS" "$@" >/dev/null 2>&1 || { echo "info.sh: argus $* failed" >&2; return 1; }
		t1=$(date +%s%N)
		ms=$(( (t1 - t0) / 1000000 ))
		if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
	done
	echo "$best"
}
hdr=$(best_ms info "$trace") || exit 1
full=$(best_ms info --events "$trace") || exit 1
verdict=ok
[ "$hdr" -le 1000 ] || verdict=MISSED
echo "info.sh: argus info on $EV events: $hdr ms (target <= 1000 ms: $verdict)"
echo "info.sh: argus info --events on $EV events: $full ms"
[ "$verdict" = ok ]
