#!/bin/sh
# needs: kernel tracing
# Runs every hang scenario of tests/scenarios alone (no recorder), quiet,
# and checks: exit status 0; total time within bounds; a real hang (the
# summary line's max_ms at least the hang's min_ms from NAME.expect) while
# the normal iterations stay short; the threads and processes carry their
# documented names (sampled every 0.2 s while it runs); every thread an
# .expect file names exists. Then a few option and error cases. About
# 25 s in all.
set -u
B=${B:-build}
S=$B/tests/scenarios
T=$(mktemp -d /tmp/argus-scn-XXXXXX)
trap 'rm -rf "$T"' EXIT

NORMAL_MAX_MS=1000	# a normal iteration (about 10 ms when idle; loaded CI)
TOTAL_MAX_S=8		# one whole run

SUITE=scenarios
. tests/lib.sh

# The names each scenario's threads and processes must carry.
names_of() {
	case $1 in
	chromium)	echo "browser br-io input renderer rd-worker fontd" ;;
	lockio)		echo "lockio lk-worker input lk-helper" ;;
	yieldflag)	echo "yieldflag yf-worker input" ;;
	busy)		echo "busy input" ;;
	batchserver)	echo "cl-ui input batchd cl-bulk" ;;
	timerchain)	echo "tchain input tc-child tc-noise" ;;
	*)		echo "" ;;
	esac
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# Thread names of process $1 and of its children.
thread_names() {
	{
		ps -L -o comm= -p "$1"
		for c in $(ps -o pid= --ppid "$1"); do ps -L -o comm= -p "$c"; done
	} 2>/dev/null | sort -u
}

# value KEY FILE: the value of KEY= in the summary line (integer part).
value() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" "$2" | head -n 1; }

# min_ms of the (full) hang line of an .expect file.
hang_min() { sed -n 's/^hang .*min_ms=\([0-9]*\).*/\1/p' "$1" | head -n 1; }

check_names() {
	name=$1 seen=$2
	missing=""
	for n in $(names_of "$name"); do
		grep -qx -- "$n" "$seen" || missing="$missing $n"
	done
	if [ -z "$(names_of "$name")" ]; then
		nok "$name names" "no name list in scenarios.sh"
	elif [ -n "$missing" ]; then
		nok "$name names" "missing:$missing; seen: $(tr '\n' ' ' < "$seen")"
	else
		ok "$name names"
	fi
}

# Every thread named in NAME.expect (not a prefix pattern) must exist.
check_expect_names() {
	name=$1 exp=tests/scenarios/$1.expect
	bad=""
	for t in $(sed -e 's/#.*//' "$exp" | tr ' ' '\n' |
	    sed -n 's/^\(thread\|threads\|writer\|cause\|serving\)=//p' |
	    tr ',' '\n' | grep -v '\*$' | sort -u); do
		case " $(names_of "$name") " in
		*" $t "*) ;;
		*) bad="$bad $t" ;;
		esac
	done
	if [ -n "$bad" ]; then
		nok "$name expect names" "unknown threads:$bad"
	else
		ok "$name expect names"
	fi
}

run_one() {
	name=$1 prog=$S/$1 exp=tests/scenarios/$1.expect
	if [ ! -x "$prog" ] || [ ! -f "$exp" ]; then
		nok "$name" "missing $prog or $exp"
		return
	fi
	t0=$(now_ms)
	"$prog" -q 2> "$T/$name.err" &
	pid=$!
	: > "$T/$name.names"
	n=0
	while [ $n -lt 50 ] && ps -o stat= -p "$pid" | grep -qv '^Z'; do
		sleep 0.2
		thread_names "$pid" >> "$T/$name.names"
		n=$((n + 1))
	done
	wait "$pid"
	rc=$?
	dt=$(($(now_ms) - t0))
	max=$(value max_ms "$T/$name.err")
	normal=$(value normal_max_ms "$T/$name.err")
	hung=$(value hung "$T/$name.err")
	want=$(hang_min "$exp")
	if [ "$rc" -ne 0 ]; then
		nok "$name" "exit $rc: $(cat "$T/$name.err")"
	elif [ "$(wc -l < "$T/$name.err")" -ne 1 ] || [ -z "$max" ]; then
		nok "$name" "want one summary line: $(cat "$T/$name.err")"
	elif [ "$dt" -gt $((TOTAL_MAX_S * 1000)) ]; then
		nok "$name" "took $dt ms"
	elif [ -z "$want" ] || [ "$max" -lt "$want" ] || [ "$hung" -ne 1 ]; then
		nok "$name" "no real hang (max_ms=$max, want >= $want, hung=$hung)"
	elif [ "$normal" -gt "$NORMAL_MAX_MS" ]; then
		nok "$name" "normal iterations too slow (normal_max_ms=$normal)"
	else
		ok "$name (max_ms=$max normal_max_ms=$normal total ${dt} ms)"
	fi
	check_names "$name" "$T/$name.names"
	check_expect_names "$name"
}

for c in tests/scenarios/*.c; do
	run_one "$(basename "$c" .c)"
done

# Options: two hung iterations, per-iteration lines, the flag's address.
if [ -x "$S/lockio" ]; then
	"$S/lockio" --iterations 3 --hang-at 2 2> "$T/opt.err"
	rc=$?
	if [ $rc -eq 0 ] && [ "$(grep -c ' hang$' "$T/opt.err")" -eq 2 ] &&
	    [ "$(grep -c ' iter ' "$T/opt.err")" -eq 3 ] &&
	    [ "$(value hung "$T/opt.err")" = 2 ]; then
		ok "options --iterations --hang-at"
	else
		nok "options --iterations --hang-at" "exit $rc: $(cat "$T/opt.err")"
	fi
fi
if [ -x "$S/yieldflag" ]; then
	"$S/yieldflag" --iterations 2 --hang-at 3 2> "$T/yf.err"
	rc=$?
	if [ $rc -eq 0 ] && [ "$(value hung "$T/yf.err")" = 0 ] &&
	    grep -q '^yieldflag: pid=[0-9]* flag=yf_done addr=0x' "$T/yf.err" &&
	    nm "$S/yieldflag" | grep -q ' yf_done$'; then
		ok "yieldflag flag symbol and no-hang run"
	else
		nok "yieldflag flag symbol and no-hang run" "exit $rc: $(cat "$T/yf.err")"
	fi
fi

# Usage errors: one line, status 2, no signal.
if [ -x "$S/busy" ]; then
	for args in "--bogus" "--iterations" "--iterations 0" "--hang-at x"; do
		# shellcheck disable=SC2086
		"$S/busy" $args > /dev/null 2> "$T/use.err"
		rc=$?
		if [ $rc -eq 2 ] && [ "$(wc -l < "$T/use.err")" -eq 1 ] &&
		    grep -q '^busy: ' "$T/use.err"; then
			ok "usage error '$args'"
		else
			nok "usage error '$args'" "exit $rc: $(cat "$T/use.err")"
		fi
	done
fi
