#!/bin/sh
# hosts.sh: the cost of merging several hosts' traces (issue 32: merging
# 3 traces of 10 M events each costs at most 1.5 times diagnosing them
# as one trace). gen-graph --hosts 3 writes once (cached under $B/bench)
# the same episodes as one trace (one/) and as three hosts' traces
# (host-0/ ... host-2/: process p on host p % 3, host k's clock k * 1.5 s
# ahead, the messages between hosts seen on both), HOSTS_EVENTS events
# in all (default 30 M: 3 x 10 M). Then, with GNU time:
#   argus diagnose --json --stats DIR/one
#   argus diagnose --json --stats DIR/host-0 DIR/host-1 DIR/host-2
# and prints each one's wall time, ns per event and peak memory, the
# ratio (target <= 1.5), the stages --stats gives and, with merge-stages
# (tests/bench/merge-stages.c), those of the merge before the graph that
# --stats leaves out, the hangs each found, the clock offsets the merge
# found against the known shifts, and whether the merged diagnosis
# gives the same hangs (the same thread and kind, start and end within
# the host's offset uncertainty) and the same answers (picked similar
# node, critical path's threads and edges, culprits) as the one trace.
# Each is run HOSTS_ROUNDS times (default 5), interleaved; the medians
# are compared.
# Environment: ARGUS, B (build directory), HOSTS_EVENTS (default
# 30000000; e.g. 3000000 for a quick run), HOSTS_KEEP (a directory to
# keep the JSON reports and --stats output in).
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
EV=${HOSTS_EVENTS:-30000000}
NH=3
SHIFT=1500000000	# gen-graph's HOST_SHIFT

if [ ! -x /usr/bin/time ] || ! command -v jq > /dev/null 2>&1; then
	echo "hosts.sh: needs GNU time (/usr/bin/time) and jq; skipped"
	exit 0
fi
. tests/bench/lib.sh
dir=$(cached_hosts $NH "$EV") || exit 1
T=${HOSTS_KEEP:-}
if [ -z "$T" ]; then
	T=$(mktemp -d /tmp/argus-hostsbench-XXXXXX)
	trap 'rm -rf "$T"' EXIT
else
	mkdir -p "$T"
fi
hosts=$(seq -f "$dir/host-%g" 0 $(( NH - 1 )))
# run OUT ARGS...: argus ARGS into OUT.json, --stats into OUT.stats;
# prints "SECONDS KB"
run() {
	out=$1
	shift
	/usr/bin/time -f "%e %M" -o "$T/time" "$ARGUS" "$@" > "$T/$out.json" \
	    2> "$T/$out.stats" || { cat "$T/$out.stats" >&2; return 1; }
	cat "$T/time"
}
# events TRACE: its events (argus info: indexes and headers)
events() {
	"$ARGUS" info "$1" | sed -n 's/^events: *\([0-9]*\) .*/\1/p'
}
# stages OUT: the stages of OUT.stats in one line, and the time they
# leave out (opening the traces; merged, reading each one's messages
# and aligning the clocks)
stages() {
	sed -n 's/^argus diagnose: //p' "$T/$1.stats" | tr '\n' ';' |
	    sed 's/;$//; s/; */; /g'
	awk '/^argus diagnose: (pass|graphs):/ { for (i = 1; i < NF; i++)
		if ($(i + 1) == "s," && $(i - 1) == "in") { st += $i; break } }
	    /^argus diagnose: analysis:/ { st += $4
		for (i = 1; i < NF; i++) if ($i == "total") t = $(i + 1) }
	    END { printf "; the rest %.2f s", (t > st ? t - st : 0) }' "$T/$1.stats"
}
n1=$(events "$dir/one")
nm=0
for h in $hosts; do
	nm=$(( nm + $(events "$h") ))
done
# ROUNDS runs of each, interleaved, the medians kept: a run on this
# kind of machine is now and then a third slower than the others
rounds=${HOSTS_ROUNDS:-5}
: > "$T/one.times"
: > "$T/merged.times"
r=0
while [ $r -lt "$rounds" ]; do
	run one diagnose --json --stats "$dir/one" >> "$T/one.times" || exit 1
	run merged diagnose --json --stats $hosts >> "$T/merged.times" ||
	    exit 1
	r=$((r + 1))
done
# median FILE: the median of each column
median() {
	for c in 1 2; do
		awk -v c=$c '{ print $c }' "$1" | sort -n |
		    awk '{ v[NR] = $1 } END { printf "%s ", v[int((NR + 1) / 2)] }'
	done
}
set -- $(median "$T/one.times") $(median "$T/merged.times")
echo "hosts.sh: $rounds rounds (HOSTS_ROUNDS), medians; one: $(tr '\n' ' ' < "$T/one.times" |
    awk '{ for (i = 1; i <= NF; i += 2) printf "%s ", $i }')s; merged:" \
    "$(tr '\n' ' ' < "$T/merged.times" |
    awk '{ for (i = 1; i <= NF; i += 2) printf "%s ", $i }')s"
# per SECONDS EVENTS: ns per event
per() { awk -v s="$1" -v n="$2" 'BEGIN { printf "%.0f", s * 1e9 / n }'; }
# ratio A B: B / A
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (a > 0 ? b / a : 0) }'
}
echo "hosts.sh: one trace, $n1 events: argus diagnose --json $dir/one:" \
    "$1 s ($(per "$1" "$n1") ns/event), $(( $2 / 1024 )) MiB," \
    "$(jq '.hangs | length' "$T/one.json") hangs"
echo "hosts.sh: $NH hosts, $nm events: argus diagnose --json" \
    "$(echo $hosts | sed "s|$dir/||g; s|^|$dir/{|; s| |,|g; s|$|}|"):" \
    "$3 s ($(per "$3" "$nm") ns/event), $(( $4 / 1024 )) MiB," \
    "$(jq '.hangs | length' "$T/merged.json") hangs"
fail=0
verdict=ok
awk -v a="$1" -v b="$3" 'BEGIN { exit !(a > 0 && b / a <= 1.5) }' ||
    { verdict=MISSED; fail=1; }
echo "hosts.sh: merged / one: $(ratio "$1" "$3") (target <= 1.5:" \
    "$verdict); per event $(ratio "$(per "$1" "$n1")" "$(per "$3" "$nm")");" \
    "memory $(ratio "$2" "$4")"
echo "hosts.sh: stages, one: $(stages one)"
echo "hosts.sh: stages, merged: $(stages merged)"
# the rest, the merge before the graph (merge-stages, built by make bench)
if [ -x "$B/tests/bench/merge-stages" ]; then
	"$B/tests/bench/merge-stages" $hosts |
	    sed "s|^merge-stages:|hosts.sh: merge stages:|; s|$dir/||g"
fi
# the offsets found against the known shifts (host k: k * SHIFT)
jq -r --argjson sh "$SHIFT" '.hosts | to_entries[] | .key as $k | .value |
    if .merged | not then "\(.host): not merged"
    elif .against == null then "\(.host): the base clock"
    else "\(.host): \(.offset_ns) ns +- \(.uncertainty_ns) ns from " +
	"\(.pairs) messages against \(.against), known \($k * $sh): " +
	(if (.offset_ns - $k * $sh | fabs) <= .uncertainty_ns then "found"
	else "OFF by \(.offset_ns - $k * $sh) ns" end) end' \
    "$T/merged.json" > "$T/offsets" || fail=1
grep -q OFF "$T/offsets" && fail=1
echo "hosts.sh: offsets: $(tr '\n' ';' < "$T/offsets" |
    sed 's/;$//; s/;/; /g') ($(jq .messages_paired "$T/merged.json")" \
    "messages paired)"
# the same hangs: each of the one trace's matched by a merged hang of the
# same thread and kind, its start and end within its host's uncertainty
# (a hang not ended by the trace's end: its start; the traces' ends
# differ by the events one sees and the other not)
jq -r '.hangs[] | [.thread.comm, .thread.tid, .kind, .start_ns, .end_ns,
    .ended] | @tsv' "$T/one.json" > "$T/one.tsv"
jq -r '(.hosts | map({ (.host): (.uncertainty_ns // 0) }) | add) as $u |
    .hangs[] | [.thread.comm, .thread.tid, .kind, .start_ns, .end_ns,
    .ended, $u[.thread.host // ""] // 0] | @tsv' "$T/merged.json" \
    > "$T/merged.tsv"
same=$(awk -F '\t' '
    NR == FNR { n[$1 FS $2 FS $3]++; k = $1 FS $2 FS $3 FS n[$1 FS $2 FS $3]
	s[k] = $4; e[k] = $5; ended[k] = $6; u[k] = $7; next }
    { tot++; key = $1 FS $2 FS $3
	for (i = 1; i <= n[key]; i++) {
		k = key FS i
		if (k in used)
			continue
		ds = s[k] - $4; de = e[k] - $5
		if (ds < 0) ds = -ds
		if (de < 0) de = -de
		if (ds <= u[k] && (de <= u[k] || (ended[k] == "false" &&
		    $6 == "false"))) {
			used[k] = 1; ok++
			if (ds > big) big = ds
			if (ended[k] != "false" && de > big) big = de
			break
		}
	}
	if (i > n[key])
		print "hosts.sh: not in the merged answer:", $0 > "/dev/stderr" }
    END { print ok + 0, tot + 0, big + 0 }' \
    "$T/merged.tsv" "$T/one.tsv")
# the answers, hang by hang, without node ids, times and hosts
ans='.hangs[] | { thread: .thread.comm, kind, wait,
    picked, cause, no_culprit, similar: (.similar | length),
    culprits: [.culprits[] | [.depth, .comm, .kind, .wait.syscall]],
    path: [.critical_path[] | [.comm, .edge, .input]] }'
jq -c "$ans" "$T/one.json" | sort > "$T/one.ans"
jq -c "$ans" "$T/merged.json" | sort > "$T/merged.ans"
answers=$(comm -12 "$T/one.ans" "$T/merged.ans" | wc -l)
set -- $same
echo "hosts.sh: same hangs: $1 of $2 (the same thread and kind, times" \
    "within the offsets' uncertainty: $3 ns apart at most); same answers:" \
    "$answers of $(wc -l < "$T/one.ans") (pick, critical path, culprits)"
[ "$1" = "$2" ] && [ "$answers" = "$2" ] &&
    [ "$(wc -l < "$T/merged.tsv")" = "$2" ] || fail=1
exit $fail
