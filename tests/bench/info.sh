#!/bin/sh
# info.sh: `argus info` on the cached generated trace of graph.sh
# ($B/bench/graph-$EV, written once by gen-graph through the real store).
# The default info reads headers and seek indexes only, so its time must
# not grow with the events (target: at most 1 s at any size); `--events`
# decodes every event and is timed beside it for comparison. Each is run
# three times and the best wall time is printed. The default info is also
# timed once cold: the trace's files dropped from the page cache first
# (posix_fadvise, no root needed), as when a day-old ring is first opened.
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
# cold_ms ARGS...: one run of argus ARGS with the trace's files out of the
# page cache, in ms
cold_ms() {
	python3 - "$trace" <<'PY' || { echo "info.sh: cannot drop $trace from the page cache" >&2; return 1; }
import os, sys
d = sys.argv[1]
for n in os.listdir(d):
	fd = os.open(os.path.join(d, n), os.O_RDONLY)
	os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
	os.close(fd)
PY
	t0=$(date +%s%N)
	"$ARGUS" "$@" >/dev/null 2>&1 || { echo "info.sh: argus $* failed" >&2; return 1; }
	t1=$(date +%s%N)
	echo $(( (t1 - t0) / 1000000 ))
}
cold=$(cold_ms info "$trace") || exit 1
hdr=$(best_ms info "$trace") || exit 1
full=$(best_ms info --events "$trace") || exit 1
verdict=ok
[ "$hdr" -le 1000 ] && [ "$cold" -le 1000 ] || verdict=MISSED
echo "info.sh: argus info on $EV events: $hdr ms, cold $cold ms (target <= 1000 ms: $verdict)"
echo "info.sh: argus info --events on $EV events: $full ms"
[ "$verdict" = ok ]
