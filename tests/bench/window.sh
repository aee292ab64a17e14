#!/bin/sh
# window.sh: `argus diagnose --at T` over a window of the trace against
# the whole build (--whole), on the cached generated trace of graph.sh
# ($B/bench/graph-$EV, written once by gen-graph through the real store).
# T is the middle of each of the first N hangs that the whole search
# finds on the 19 M trace, which is the start of the trace of EV events
# (the generator writes the same episodes from the same seed). For each
# T: wall time and peak memory of both (GNU time), and the answers
# compared (hangs, picks, paths, culprits: the JSON without vertex ids,
# similar nodes up to the one picked). Targets (issue 14): at most 5 s
# and 2 GiB for the window at any size.
# Environment: ARGUS, B (build directory), GRAPH_BENCH_EVENTS (default
# 19000000), WINDOW_TIMES (default 4: how many hangs).
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
D="$B/bench"
EV=${GRAPH_BENCH_EVENTS:-19000000}
N=${WINDOW_TIMES:-4}
mkdir -p "$D"

if [ ! -x /usr/bin/time ] || ! command -v jq > /dev/null 2>&1; then
	echo "window.sh: needs GNU time (/usr/bin/time) and jq; skipped"
	exit 0
fi
. tests/bench/lib.sh
trace=$(cached_trace "$EV") || exit 1
small=$(cached_trace 19000000) || exit 1
T=$(mktemp -d /tmp/argus-winbench-XXXXXX)
trap 'rm -rf "$T"' EXIT

# The hangs of the 19 M trace, as seconds since its start.
"$ARGUS" diagnose --json "$small" > "$T/hangs.json" || exit 1
times=$(jq -r --argjson n "$N" '.hangs[:$n][] |
    ((.start_ns + .end_ns) / 2 - 1000000000) / 1e9' "$T/hangs.json")
# run OUT ARGS...: argus ARGS into OUT.json; prints "SECONDS KB"
run() {
	out=$1
	shift
	/usr/bin/time -f "%e %M" -o "$T/time" "$ARGUS" "$@" > "$T/$out.json" ||
	    return 1
	cat "$T/time"
}
fail=0
for s in $times; do
	w=$(run w diagnose --json --at "$s" "$trace") || exit 1
	f=$(run f diagnose --whole --json --at "$s" "$trace") || exit 1
	same=same
	jq -cS "$ANS" "$T/w.json" > "$T/w.ans"
	jq -cS "$ANS" "$T/f.json" > "$T/f.ans"
	cmp -s "$T/w.ans" "$T/f.ans" || { same=DIFFERENT; fail=1; }
	set -- $w
	verdict=ok
	awk -v s="$1" -v k="$2" 'BEGIN { exit !(s <= 5 && k <= 2097152) }' ||
	    verdict=MISSED
	[ "$verdict" = ok ] || fail=1
	echo "window.sh: $EV events, --at $s: window $1 s $(( $2 / 1024 )) MiB" \
	    "(target <= 5 s, 2 GiB: $verdict); whole $(echo $f |
	    awk '{ printf "%s s %d MiB", $1, $2 / 1024 }'); answers $same"
done
exit $fail
