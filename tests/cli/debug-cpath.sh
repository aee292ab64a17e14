#!/bin/sh
# needs: kernel tracing
# debug-cpath.sh: the critical path in argus debug (issue 29, item 2), in
# a detached tmux at 120x40 on a recording of the lockio scenario (lockio
# <- lk-worker <- lk-helper asleep 2 s). Checks against the path that
# `argus diagnose --critical-path` prints for the same trace: `p` lists
# the steps in order with the culprit's name; the first lanes are the
# path's threads and the path is marked on them ('~' blocked) and on no
# other lane; Enter on the last step takes the timeline to its thread;
# `f` shows the folded lanes (kernel workers, the recorder: the parent
# of lockio) and folds them again. Needs root, tmux and the scenarios.
# About 15 s.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
case $ARGUS in /*) ;; *) ARGUS=$(pwd)/$ARGUS ;; esac
T=$(mktemp -d /tmp/argus-cpath-XXXXXX)

SUITE=debug-cpath
. tests/lib.sh
tmux_sandbox
skip() { echo "ok debug-cpath: $1 # skip $2"; }

if ! command -v tmux >/dev/null 2>&1; then
	skip "all" "tmux is not installed"
	exit 0
fi
skip_if_wedged "the lockio recording" && exit 0
if [ "$(id -u)" != 0 ]; then
	skip "all" "recording needs root"
	exit 0
fi
scn="$B/tests/scenarios/lockio"
if [ ! -x "$scn" ] || ! "$ARGUS" record --help >/dev/null 2>&1; then
	skip "all" "no recorder or lockio scenario in this build"
	exit 0
fi

# title_lanes: "N" or "N F" from the timeline's title (lanes, folded).
title_lanes() {
	screen | sed -n '1s/.* lanes \([0-9]*\)\( (\([0-9]*\) folded: f)\)\{0,1\}.*/\1 \3/p' |
	    sed 's/ *$//'
}
# title_change OLD: the title's lanes once they differ from OLD (3 s).
title_change() { until_changed "$1" title_lanes; }
# lane_labels N: the labels of the first N lanes ("lk-worker:501").
lane_labels() { screen | sed -n "3,$((2 + $1))p" | cut -c2-22 | sed 's/ *$//'; }

if ! ARGUS_HANG_MS=2000 timeout 60 "$ARGUS" record -q -o "$T/lockio" -- \
    "$scn" -q >"$T/rec.log" 2>&1; then
	nok "lockio recording" "$(tail -n 5 "$T/rec.log")"
	exit 0
fi
"$ARGUS" diagnose "$T/lockio" --comm lockio --critical-path >"$T/diag" 2>&1
# the path's steps as "NAME:TID", hung thread first; its culprits
sed -n '1,/^hang 2:/p' "$T/diag" |
    sed -n 's/^    [0-9]*\. \([^ ]*\) (\([0-9]*\).*/\1:\2/p' >"$T/path.txt"
culprit=$(sed -n '1,/^hang 2:/p' "$T/diag" | grep '\[culprit: ' |
    tail -n 1 | sed -n 's/^    [0-9]*\. \([^ ]*\) (\([0-9]*\).*/\1:\2/p')
np=$(wc -l <"$T/path.txt")
if [ "$np" -lt 2 ] || [ -z "$culprit" ]; then
	nok "the recording has a critical path with a culprit" "$(head -n 12 "$T/diag")"
	exit 0
fi

debug_start 120 40 "" "" --comm lockio "$T/lockio"
if ! wait_for 'Spinning node' 20; then
	nok "argus debug opens the lockio recording" "$(screen)"
	exit 0
fi

# p: the steps in order (thread labels), the culprit marked as one
keys p
if wait_for '^>Critical path, hang 1/' 5; then
	screen | sed -n '/^>Critical path/,$p' |
	    sed -n 's/^ *[0-9][0-9]* \([^ ]*\) .*/\1/p' | head -n "$np" >"$T/rows.txt"
	if cmp -s "$T/rows.txt" "$T/path.txt" &&
	    screen | grep -Eq "^ *[0-9]+ $culprit .*culprit"; then
		ok "p lists the critical path, culprit $culprit"
	else
		nok "p lists the critical path" "want: $(cat "$T/path.txt" | tr '\n' ' ')" \
		    "$(screen | sed -n '/^>Critical path/,$p' | head -n 8)"
	fi
else
	nok "p lists the critical path" "$(screen)"
fi

# the first lanes are the path's threads; '~' marks them in the hang
# (blocked on the path) and no lane off the path
lane_labels "$np" >"$T/lanes.txt"
marked=$(screen | sed -n '3,/^ *Spinning node\|^>Critical path/p' |
    grep -c '^.\{23\}.*~')
if cmp -s "$T/lanes.txt" "$T/path.txt" && [ "$marked" -eq $((np - 1)) ]; then
	ok "the path's threads come first, marked over the hang ($np lanes)"
else
	nok "the path's threads come first, marked over the hang" \
	    "lanes: $(tr '\n' ' ' <"$T/lanes.txt")" "marked lanes: $marked" \
	    "$(screen | sed -n '1,12p')"
fi

# Enter on the last step: the timeline goes to its thread
keys G Enter
if wait_for "^step $((np - 1)): $culprit at " 5 &&
    status_line | grep -q " $culprit | "; then
	ok "Enter on a step goes to its thread ($culprit)"
else
	nok "Enter on a step goes to its thread" "$(status_line)"
fi
keys q
wait_for '^ Spinning node|^ Vertex' 5

# f: the folded lanes come back, then go again: kernel workers and the
# recorder (lockio's parent in the trace)
hung=$(sed -n '1s/.*://p' "$T/path.txt")
rec=$("$ARGUS" dump "$T/lockio" 2>/dev/null |
    sed -n "s/.* thread  *tid=$hung pid=[0-9]* ppid=\([0-9]*\) .*/\1/p" |
    head -n 1)
keys ':filter kworker' Enter
wait_for "filter 'kworker'" 5
k0=$(title_lanes)
keys f
k1=$(title_change "$k0")
keys f
k2=$(title_change "$k1")
set -- $k0
if [ $# -eq 2 ] && [ "$2" -gt 0 ] && [ "$k1" = $(($1 + $2)) ] &&
    [ "$k2" = "$k0" ]; then
	ok "f shows and folds idle kernel workers (lanes: $k0 -> $k1 -> $k2)"
else
	nok "f shows and folds idle kernel workers" "lanes: $k0 -> $k1 -> $k2"
fi
keys ":filter argus:$rec" Enter
wait_for "filter 'argus:$rec'" 5
a0=$(screen | grep -c "^ argus:$rec ")
keys f
wait_for "^ argus:$rec " 3
a1=$(screen | grep -c "^ argus:$rec ")
keys f
wait_for "folded: f\) filter 'argus:$rec'" 3
a2=$(screen | grep -c "^ argus:$rec ")
if [ -n "$rec" ] && [ "$a0" = 0 ] && [ "$a1" = 1 ] && [ "$a2" = 0 ]; then
	ok "f shows and folds the recorder (argus:$rec)"
else
	nok "f shows and folds the recorder" "recorder: '$rec', lanes: $a0 $a1 $a2" \
	    "$(screen | sed -n '1,12p')"
fi

keys q
wait_for '^EXIT=0' 5 || nok "q quits" "$(screen | tail -n 3)"
