#!/bin/sh
# needs: kernel tracing
# Tests of libargus.so on real programs (tests/progs/ins-*), reading the
# records back from a tracefs instance of our own (no recorder needed).
# Prints "ok NAME" / "not ok NAME". Needs root and tracefs.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
SUITE=
. tests/lib.sh
ins_instance test instrument
count() { grep -c " $1 " "$TMP/rec"; }
hex2dec() { printf '%d' "$1"; }

# --- condition variable handoff --------------------------------------------
run "$P/ins-condvar"
cond=$(sed -n 's/.*cond=\(0x[0-9a-f]*\).*/\1/p' "$TMP/out")
worker=$(sed -n 's/.*worker=\([0-9]*\).*/\1/p' "$TMP/out")
main=$(awk '$3 == "cond_wait" { print $2; exit }' "$TMP/rec")
w=$(awk -v c="$cond" '$3 == "cond_wait" && $4 == "key=" c' "$TMP/rec" | wc -l)
s=$(awk -v c="$cond" -v t="$worker" '$3 == "cond_signal" && $4 == "key=" c && $2 == t' "$TMP/rec" | wc -l)
d=$(awk -v c="$cond" -v t="$main" '$3 == "cond_done" && $4 == "key=" c && $2 == t && $5 == "arg=0"' "$TMP/rec" | wc -l)
st=$(awk '$3 == "stack" && $4 == "key=0x10" && $7 ~ /frames=[1-9]/' "$TMP/rec" | wc -l)
[ "$w" -ge 1 ] && [ "$s" -ge 1 ] && [ "$d" -ge 1 ] && [ "$st" -ge 1 ]
check instrument-condvar-handoff $? "wait=$w signal=$s done=$d stack=$st"
# order: wait, then signal, then done
order=$(awk -v c="$cond" '$4 == "key=" c { printf "%s,", $3 }' "$TMP/rec")
case "$order" in
cond_wait,cond_signal,cond_done,*) ok instrument-condvar-order ;;
*) nok instrument-condvar-order "$order" ;;
esac
mm=$(awk '$3 == "mmap" && /ins-condvar/' "$TMP/rec" | wc -l)
[ "$mm" -ge 1 ]
check instrument-mmap-records $? "mmap=$mm"

# --- timeouts on the monotonic clock (condattr_setclock, sem_clockwait) -----
# The chromium scenario waits 1,500 ms on a CLOCK_MONOTONIC condition and
# on a semaphore with sem_clockwait: both waits and their timeouts recorded.
if [ -x "$B/tests/scenarios/chromium" ]; then
	run "$B/tests/scenarios/chromium" -q
	tmo=$(awk '$3 == "cond_wait" { sub("arg=", "", $5); print $5; exit }' "$TMP/rec")
	semw=$(awk '$3 == "lock_wait" && $5 == "arg=3"' "$TMP/rec" | wc -l)
	[ "${tmo:-0}" -gt 1400000000 ] && [ "${tmo:-0}" -le 1500000000 ]
	check instrument-cond-monotonic-timeout $? "timeout=$tmo"
	[ "$semw" -ge 1 ]
	check instrument-sem-clockwait $? "sem waits=$semw"
fi

# --- work queue with a pool of threads, argus.h tracing points -------------
run "$P/ins-api-workq"
sub=$(count task_submit); beg=$(count task_begin); end=$(count task_end)
[ "$sub" = 40 ] && [ "$beg" = 40 ] && [ "$end" = 40 ]
check instrument-workq-tasks $? "submit=$sub begin=$beg end=$end"
# every task begins on a worker after it was submitted by main
bad=$(awk '$3 == "task_submit" { subm[$4] = $2 }
	$3 == "task_begin" { if (!($4 in subm) || subm[$4] == $2) bad++ }
	END { print bad + 0 }' "$TMP/rec")
check instrument-workq-order "$bad" "bad=$bad"
lw=$(count lock_wait); la=$(count lock_acquired)
[ "$lw" -ge 1 ] && [ "$lw" = "$la" ]
check instrument-workq-lock-contention $? "wait=$lw acquired=$la"
for k in mark input flag_write flag_read runloop_submit callout_begin callout_end; do
	[ "$(count $k)" = 1 ] || { nok "instrument-api-$k"; continue; }
	ok "instrument-api-$k"
done
grep -q ' mark key=0x0 arg=42 .*name=start' "$TMP/rec"
check instrument-api-mark-name $?

# --- hang watchdog ------------------------------------------------------------
for mode in spin sleep; do
	ARGUS_HANG_MS=300 run "$P/ins-hang" $mode 1000
	hh=$(sed -n 's/hang_here=\(0x[0-9a-f]*\)/\1/p' "$TMP/out")
	main=$(awk '$3 == "loop_wait" { print $2; exit }' "$TMP/rec")
	nb=$(count hang_begin); ne=$(count hang_end)
	[ "$nb" = 1 ] && [ "$ne" = 1 ]
	check "instrument-hang-$mode-marks" $? "begin=$nb end=$ne"
	# begin about 300 ms after the last wake-up (the watchdog ticks every
	# 30 ms), end when the main thread is back in its wait, at least the
	# 1 s of the hang after the wake-up
	awk -v m="$main" '
	$3 == "loop_wake" && $2 == m && !hang { wake = $1 }
	$3 == "hang_begin" { hang = 1; b = $1 - wake; tid = $7 }
	$3 == "loop_wait" && $2 == m && hang && !back { back = $1 }
	$3 == "hang_end" { e = $1 - wake; ets = $1 }
	END {
		if (tid != "tid=" m) { print "tid " tid; exit 1 }
		if (b < 0.28 || b > 0.6) { print "begin after " b; exit 1 }
		if (e < 0.95) { print "end after " e; exit 1 }
		if (ets - back > 0.005 || back - ets > 0.005) {
			print "end " ets " not at the return " back; exit 1 }
	}' "$TMP/rec" >"$TMP/why"
	check "instrument-hang-$mode-times" $? "$(cat "$TMP/why")"
	# a frame of the hang stack lies in hang_here()
	awk -v h="$(hex2dec "$hh")" '$3 == "stack" && $4 == "key=0xb" {
		for (i = 9; i <= NF; i++) {
			cmd = "printf %d " $i; cmd | getline v; close(cmd)
			if (v >= h && v < h + 256) found = 1
		}
	} END { exit !found }' "$TMP/rec"
	check "instrument-hang-$mode-stack" $? "$(grep ' stack key=0xb' "$TMP/rec") hang_here=$hh"
done

# --- fork, exec, signals ---------------------------------------------------------
run "$P/ins-fork" "$P/ins-condvar"
rc=$?
grep -q 'parent ok' "$TMP/out" && grep -q 'child ok' "$TMP/out" &&
    grep -q 'cond=' "$TMP/out"
[ $? = 0 ] && [ $rc = 0 ]
check instrument-fork-exec-signal-runs $? "rc=$rc"
pids=$(awk '$3 == "lock_wait" { print $2 }' "$TMP/rec" | sort -u | wc -l)
ex=$(awk '$3 == "cond_wait"' "$TMP/rec" | wc -l)
[ "$pids" -ge 2 ] && [ "$ex" -ge 1 ]
check instrument-fork-exec-records $? "lock-waiting threads=$pids exec'd cond_wait=$ex"

# --- off: no recorder, the program runs unchanged and writes nothing --------
echo >"$INST/trace"
ARGUS_MARKER= LD_PRELOAD=$LIB "$P/ins-condvar" >"$TMP/out-off" 2>&1
rc1=$?
"$P/ins-condvar" >"$TMP/out-plain" 2>&1
rc2=$?
n=$("$P/ins-decode" <"$INST/trace" | wc -l)
[ $rc1 = 0 ] && [ $rc2 = 0 ] && [ "$n" = 0 ] &&
    [ "$(sed 's/0x[0-9a-f]*//g; s/worker=[0-9]*//' "$TMP/out-off")" = \
      "$(sed 's/0x[0-9a-f]*//g; s/worker=[0-9]*//' "$TMP/out-plain")" ]
check instrument-off-unchanged $? "rc=$rc1/$rc2 records=$n"
ARGUS_MARKER= LD_PRELOAD=$LIB "$P/ins-fork" >"$TMP/out-off" 2>&1
check instrument-off-fork $?

# --- GLib main loop whose callout blocks, with a thread pool ----------------
if [ -x "$P/ins-glib" ]; then
	ARGUS_HANG_MS=200 run "$P/ins-glib" 400
	idle=$(sed -n 's/.*idle=\([0-9]*\).*/\1/p' "$TMP/out")
	cb=$(sed -n 's/.*blocking_callout=\(0x[0-9a-f]*\).*/\1/p' "$TMP/out")
	ns=$(count runloop_submit)
	[ "$ns" -ge 3 ]
	check instrument-glib-submit $? "submit=$ns"
	# the idle source's callout lasts the 400 ms it blocks
	awk -v k="key=$(printf '0x%x' "$idle")" '
	$3 == "callout_begin" && $4 == k { b = $1 }
	$3 == "callout_end" && $4 == k { e = $1 }
	END { d = e - b; if (!b || !e || d < 0.39 || d > 0.6) { print d; exit 1 } }' \
	    "$TMP/rec" >"$TMP/why"
	check instrument-glib-callout-blocks $? "$(cat "$TMP/why")"
	nb=$(count callout_begin); ne=$(count callout_end)
	[ "$nb" -ge 3 ] && [ "$nb" = "$ne" ]
	check instrument-glib-callouts-paired $? "begin=$nb end=$ne"
	main=$(awk '$3 == "runloop_submit" { print $2; exit }' "$TMP/rec")
	ts=$(awk -v m="$main" '$3 == "task_submit" && $2 == m' "$TMP/rec" | wc -l)
	tb=$(awk -v m="$main" '$3 == "task_begin" && $2 != m' "$TMP/rec" | wc -l)
	te=$(count task_end)
	[ "$ts" = 5 ] && [ "$tb" = 5 ] && [ "$te" = 5 ]
	check instrument-glib-thread-pool $? "submit=$ts begin=$tb end=$te"
	awk -v h="$(hex2dec "$cb")" '$3 == "stack" && $4 == "key=0xb" {
		for (i = 9; i <= NF; i++) {
			cmd = "printf %d " $i; cmd | getline v; close(cmd)
			if (v >= h && v < h + 128) found = 1
		}
	} END { exit !found }' "$TMP/rec"
	check instrument-glib-hang-stack $? "$(grep ' stack key=0xb' "$TMP/rec")"
else
	nok instrument-glib "ins-glib not built (libglib2.0-dev missing?)"
fi

# --- the recorder stops: libargus lets its instance go ------------------------
I2=${INST%-*}2-$$
if mkdir "$I2" 2>/dev/null; then
	ARGUS_MARKER=$I2/trace_marker_raw LD_PRELOAD=$LIB "$P/ins-hang" sleep 3000 \
	    >/dev/null &
	hp=$!
	sleep 0.5
	echo 0 >"$I2/tracing_on"
	gone=1
	for i in 1 2 3 4 5 6 7 8 9 10; do
		sleep 0.25
		if rmdir "$I2" 2>/dev/null; then gone=0; break; fi
	done
	alive=0
	kill -0 $hp 2>/dev/null || alive=1
	wait $hp
	[ $gone = 0 ] && [ $alive = 0 ]
	check instrument-releases-stopped-instance $? "removed=$gone alive=$alive"
	rmdir "$I2" 2>/dev/null
else
	nok instrument-releases-stopped-instance "no second instance"
fi
if [ -x "$P/ins-glib" ]; then
	ARGUS_MARKER= LD_PRELOAD=$LIB "$P/ins-glib" 50 >"$TMP/out" 2>&1
	rc=$?
	[ $rc = 0 ] && grep -q '^idle=' "$TMP/out"
	check instrument-off-glib $? "rc=$rc"
fi
