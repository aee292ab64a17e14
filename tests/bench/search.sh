#!/bin/sh
# search.sh: `argus diagnose --stream --json` on a large generated
# trace ($B/bench/graph-$EV, written once by gen-graph through the real
# store): one streaming pass, then windows around the hangs only (what
# diagnose does by itself when the whole graph would not fit in
# memory), next to the whole build (--whole) when SEARCH_WHOLE=1 (on
# 200 M events it takes minutes and more than 7 GiB). Wall time and peak memory of each
# (GNU time), and the answers compared (hangs, picks, paths, culprits:
# the JSON without vertex ids, similar nodes up to the one picked; then
# apart: the similar node picked, the threads of the critical path, the
# culprits).
# Targets: at most 60 s and 2 GiB on 200 M events (issue 14); 15 s on
# 200 M events and 60 s, 2 GiB on 1 G (the one-pass search). The stages
# (diagnose --stats: the pass, the graphs built, the analysis) are
# quoted in ns per event next to the decode floor: argus info --events,
# which decodes and merges every event on one thread and counts it.
# Environment: ARGUS, B (build directory), SEARCH_EVENTS (default
# 200000000), SEARCH_MEM (bytes of memory said to be available for the
# bounded run, default 2.5 GiB), SEARCH_WHOLE (1: run the whole build
# too), SEARCH_WHOLE_MEM (its --memory, default 16G).
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
D="$B/bench"
EV=${SEARCH_EVENTS:-200000000}
mkdir -p "$D"

if [ ! -x /usr/bin/time ] || ! command -v jq > /dev/null 2>&1; then
	echo "search.sh: needs GNU time (/usr/bin/time) and jq; skipped"
	exit 0
fi
. tests/bench/lib.sh
trace=$(cached_trace "$EV") || exit 1
T=$(mktemp -d /tmp/argus-searchbench-XXXXXX)
trap 'rm -rf "$T"' EXIT
# run OUT ARGS...: argus ARGS into OUT.json; prints "SECONDS KB"
run() {
	out=$1
	shift
	/usr/bin/time -f "%e %M" -o "$T/time" "$ARGUS" "$@" > "$T/$out.json" ||
	    return 1
	cat "$T/time"
}
fail=0
f=$(run f info --events "$trace") || exit 1
floor=$(echo "$f" | awk -v n="$EV" '{ printf "%.1f", $1 * 1e9 / n }')
s=$(run s diagnose --stream --json --stats "$trace" \
    2> "$T/stats") || exit 1
set -- $s
verdict=ok
awk -v s="$1" -v k="$2" 'BEGIN { exit !(s <= 60 && k <= 2097152) }' ||
    verdict=MISSED
[ "$verdict" = ok ] || fail=1
# the one-pass search's target (15 s at 200 M events), said, not failed
# on (not met yet)
goal=met
awk -v s="$1" -v n="$EV" 'BEGIN { exit !(s * 200000000 / n <= 15) }' ||
    goal="not met"
echo "search.sh: $EV events, diagnose --stream --json: $1 s $(( $2 / 1024 )) MiB," \
    "$(jq '.hangs | length' "$T/s.json") hangs" \
    "(target <= 60 s, 2 GiB: $verdict; 15 s at 200 M events: $goal)"
# the stages, in ns per event, and the decode floor
pass=$(sed -n 's/^argus diagnose: pass: [0-9]* events in \([0-9.]*\) s, \([0-9.]*\) ns.*/\1 s, \2/p' "$T/stats")
graphs=$(sed -n 's/^argus diagnose: graphs: \([0-9]*\) built of \([0-9]*\) events in \([0-9.]*\) s, \([0-9.]*\) ns.*/\1 graphs of \2 events in \3 s, \4/p' "$T/stats")
ana=$(sed -n 's/^argus diagnose: analysis: \([0-9.]*\) s;.*/\1/p' "$T/stats")
echo "search.sh: stages: decode floor (argus info --events, one thread)" \
    "$floor ns/event; the pass $pass ns/event; $graphs ns/event" \
    "of the events built; analysis $ana s"
# diagnose by itself where the whole graph does not fit: memory said to
# be SEARCH_MEM bytes (default 2.5 GiB), the search's graphs held to it
m=$(ARGUS_MEM_AVAILABLE=${SEARCH_MEM:-2684354560} run m diagnose --json \
    "$trace") || exit 1
set -- $m
echo "search.sh: $EV events, diagnose --json with ${SEARCH_MEM:-2684354560}" \
    "bytes available: $1 s $(( $2 / 1024 )) MiB," \
    "$(jq '.hangs | length' "$T/m.json") hangs, $(jq '[.hangs[] |
    select(.notes | any(test("trace only")))] | length' "$T/m.json")" \
    "answered from a part of the trace"
if [ "${SEARCH_WHOLE:-0}" = 1 ]; then
	# the whole graph, past the default memory bound (about 8 GiB at
	# 200 M events)
	w=$(run w diagnose --whole --memory "${SEARCH_WHOLE_MEM:-16G}" \
	    --json "$trace") || exit 1
	same=same
	jq -cS "$ANS" "$T/s.json" > "$T/s.ans"
	jq -cS "$ANS" "$T/w.json" > "$T/w.ans"
	cmp -s "$T/s.ans" "$T/w.ans" || { same=DIFFERENT; fail=1; }
	echo "search.sh: $EV events, diagnose --whole --json: $(echo $w |
	    awk '{ printf "%s s %d MiB", $1, $2 / 1024 }'); answers $same"
	# the bounded run, hang by hang (its notes aside)
	jq -c "$ANS | .hangs[] | del(.notes)" "$T/w.json" | sort > "$T/w.each"
	jq -c "$ANS | .hangs[] | del(.notes)" "$T/m.json" | sort > "$T/m.each"
	echo "search.sh: $EV events, the bounded run: $(comm -12 "$T/w.each" \
	    "$T/m.each" | wc -l) of $(wc -l < "$T/w.each") hangs answered as" \
	    "by the whole build (picked similar node, paths, culprits)"
	# where they differ: the normal run picked, the threads of the
	# critical path, the culprits
	PICK='.hangs[] | [.thread.tid, .start_ns,
	    (if .picked then .similar[.picked - 1].start_ns else null end)]'
	PATH_='.hangs[] | [.thread.tid, .start_ns,
	    ([.critical_path[] | .tid] | unique)]'
	CUL='.hangs[] | [.thread.tid, .start_ns, ([.culprits[] | .tid] | sort)]'
	for k in PICK PATH_ CUL; do
		eval "q=\$$k"
		jq -c "$q" "$T/w.json" | sort > "$T/w.$k"
		jq -c "$q" "$T/m.json" | sort > "$T/m.$k"
	done
	echo "search.sh: $EV events, the bounded run against the whole build," \
	    "hangs with the same similar node picked: $(comm -12 \
	    "$T/w.PICK" "$T/m.PICK" | wc -l), the same threads on the" \
	    "critical path: $(comm -12 "$T/w.PATH_" "$T/m.PATH_" | wc -l)," \
	    "the same culprits: $(comm -12 "$T/w.CUL" "$T/m.CUL" | wc -l)," \
	    "of $(wc -l < "$T/w.CUL")"
fi
exit $fail
