#!/bin/sh
# Tests of the progress bars (common/progress.c): with standard error on a
# terminal (a pty from script(1)), info, dump, graph, diagnose, export
# and snapshot draw "argus CMD: ... [###...] NN%" (ARGUS_PROGRESS_DELAY_MS=0
# so that a small trace shows it) and erase it; with standard error not a
# terminal, nothing; without the variable, a short run draws nothing.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
T=$(mktemp -d /tmp/argus-progress-XXXXXX)
trap 'rm -rf "$T"' EXIT

SUITE=progress
. tests/lib.sh

if ! command -v script > /dev/null; then
	echo "ok progress: skipped (no script(1) for a pty)"
	exit 0
fi
"$B/tests/tools/mktrace" "$T/t" 300000 > /dev/null
# on_tty NAME CMD: run CMD (stdout to /dev/null) with a pty as stderr
on_tty() {
	name=$1
	shift
	ARGUS_PROGRESS_DELAY_MS=${DELAY-0} script -q -e -c "$* > /dev/null" \
	    "$T/$name.log" > /dev/null 2>&1
}
for c in info dump graph diagnose export snapshot; do
	case $c in
	info) args="info --events $T/t" ;;
	graph) args="graph --stats $T/t" ;;
	export) args="export $T/t -o $T/t.json" ;;
	snapshot) args="snapshot -o $T/t --last 0 $T/snap" ;;
	*) args="$c $T/t" ;;
	esac
	on_tty "$c" "$ARGUS" $args
	rc=$?
	if [ $rc -eq 0 ] && grep -q "argus $c: [a-z]* \[[#.]*\] *[0-9]*%" "$T/$c.log" &&
	    grep -q "argus $c: [a-z]* \[#*\] 100%" "$T/$c.log"; then
		ok "$c draws a bar on a terminal"
	else
		nok "$c draws a bar on a terminal" "status $rc" "$(cat -v "$T/$c.log" | head -c 300)"
	fi
	rm -rf "$T/snap"
	ARGUS_PROGRESS_DELAY_MS=0 $ARGUS $args > /dev/null 2> "$T/err"
	[ ! -s "$T/err" ] && ok "$c: nothing when stderr is not a terminal" ||
		nok "$c: nothing when stderr is not a terminal" "$(cat -v "$T/err" | head -c 200)"
	rm -rf "$T/snap"
done
# the search of a whole trace: the pass's bar, then the candidate
# hangs diagnosed in their windows
if "$B/tests/tools/mkhang" "$T/mk" > /dev/null 2>&1; then
	on_tty search "$ARGUS" diagnose --stream "$T/mk"
	rc=$?
	if [ $rc -eq 0 ] &&
	    grep -q "argus diagnose: searching \[#*\] 100%" "$T/search.log" &&
	    grep -q "argus diagnose: diagnosing \[\.*\]   0%" "$T/search.log" &&
	    grep -q "argus diagnose: diagnosing \[#*\] 100%" "$T/search.log"; then
		ok "diagnose --stream: the pass's bar, then the candidates'"
	else
		nok "diagnose --stream: the pass's bar, then the candidates'" \
		    "status $rc" "$(cat -v "$T/search.log" | head -c 400)"
	fi
else
	nok "mkhang"
fi
# past a second of work: the events a second and the time left
"$B/tests/tools/mktrace" "$T/big" 5000000 > /dev/null
on_tty rate "$ARGUS" dump "$T/big"
if grep -q "argus dump: reading \[[#.]*\] *[0-9]*%  [0-9.]*[kMG]* events/s  [0-9]*:[0-9][0-9] left" "$T/rate.log"; then
	ok "dump: the events a second and the time left"
else
	nok "dump: the events a second and the time left" \
	    "$(cat -v "$T/rate.log" | tr '^' '\n' | tail -3)"
fi
DELAY= on_tty quick "$ARGUS" info "$T/t"
unset DELAY
grep -q 'argus info: reading' "$T/quick.log" &&
	nok "a run shorter than the delay draws nothing" ||
	ok "a run shorter than the delay draws nothing"
