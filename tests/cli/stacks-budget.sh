#!/bin/sh
# needs: kernel tracing
# The budget of stacks (argus record --stack-rate): a storm of waits
# just over the 10 ms threshold (tests/progs/wait-storm: 32 threads
# sleeping 15 ms at a time) gets at most the budget's stacks, a bound
# of each CPU's rate over the span plus the burst it saves up, and the
# status counts the ones left out; without a bound (--stack-rate 0)
# every wait of the storm has its stack. A hang recorded during the
# storm (tests/progs/stack-wait, a wait of 1.5 s, over ten times the
# threshold) keeps its stack and its waker's whatever the budget.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
T=$(mktemp -d /tmp/argus-stkbud-XXXXXX)
trap 'rm -rf "$T"' EXIT

SUITE=stacks-budget
. tests/lib.sh

check_err "--stack-rate x" 2 $ARGUS record -o "$T/x" --stack-rate x -- true
check_err "--stack-rate 1000001" 2 $ARGUS record -o "$T/x" \
    --stack-rate 1000001 -- true
needs root bpf
S=$B/tests/progs/wait-storm
P=$B/tests/progs/stack-wait
RATE=5
BURST=64	# STK_BURST in trace/bpf/record.bpf.c
ncpu=$(nproc)

# storm_stacks DIR: the wait stacks of the storm's threads
storm_stacks() {
	$ARGUS dump --type stack "$1" | awk '$5 == "wait-storm" &&
	    $8 == "kind=wait" { n++ } END { print n + 0 }'
}

$ARGUS record -q -o "$T/b" --backend bpf --no-instrument --stack-rate $RATE \
    -- sh -c "$S & $P; wait" > "$T/b.out" 2>&1
rc=$?
n=$(storm_stacks "$T/b")
span=$($ARGUS info "$T/b" | sed -n 's/^span: *\([0-9]*\)\..*/\1/p')
# and once a second a thread, the run of its timed-out sleeps, judged by
# the run's length (32 threads)
bound=$((ncpu * (BURST + RATE * (${span:-0} + 1)) + 32 * (${span:-0} + 1)))
skipped=$(sed -n 's/^stacks_skipped //p' "$T/b/status")
if [ $rc -eq 0 ] && [ "$n" -ge 1 ] && [ "$n" -le "$bound" ] &&
    [ "${skipped:-0}" -gt 0 ]; then
	ok "--stack-rate $RATE: $n storm stacks (bound $bound), $skipped left out"
else
	nok "--stack-rate $RATE" "status $rc, $n storm stacks, bound $bound" \
	    "skipped ${skipped:-none}, span ${span:-?} s"
fi
$ARGUS status -o "$T/b" > "$T/st.txt" 2>&1
if grep -q "^lost: .*; $skipped stacks left out over --stack-rate" "$T/st.txt"; then
	ok "argus status says how many stacks were left out"
else
	nok "status" "$(grep '^lost' "$T/st.txt")"
fi
# the hang, a wait over ten times the threshold, is outside the budget
$ARGUS diagnose --comm stack-wait "$T/b" > "$T/b.txt" 2>&1
if grep -q '^  stack at [0-9.]* s ([a-z ]*): .*wait_for_reply+0x' "$T/b.txt" &&
    grep -q '^  stack of its waker' "$T/b.txt"; then
	ok "the hang keeps its stack and its waker's during the storm"
else
	lost=$($ARGUS info --events "$T/b" 2>/dev/null |
	    sed -n 's/^lost: *\([0-9]*\).*/\1/p')
	if [ "${lost:-0}" != 0 ]; then
		ok "the hang's stacks # SKIP the recorder lost $lost events"
	else
		nok "the hang's stacks" "$(grep -m4 'stack' "$T/b.txt")"
	fi
fi
# no bound: every wait of the storm (3200) has its stack
$ARGUS record -q -o "$T/u" --backend bpf --no-instrument --stack-rate 0 \
    -- "$S" > /dev/null 2>&1
n0=$(storm_stacks "$T/u")
if [ "$n0" -ge 2000 ] && ! grep -qs '^stacks_skipped' "$T/u/status"; then
	ok "--stack-rate 0: $n0 storm stacks, none left out"
else
	nok "--stack-rate 0" "$n0 storm stacks" "$(grep -s skipped "$T/u/status")"
fi
