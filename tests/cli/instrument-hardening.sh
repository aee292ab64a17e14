#!/bin/sh
# needs: kernel tracing
# libargus inside programs that rearrange their descriptors or take its
# signal (hardening probe):
#  - a daemon that closes every descriptor above 2 (close_range,
#    closefrom, a close() loop, the bare system call) or dup2()s its file
#    over them, then writes 6 bytes to a file of its own: the file keeps
#    its 6 bytes, and the library records again afterwards;
#  - a program that takes SIGRTMAX-2 after the watchdog started (with
#    sigaction, signal, the bare system call, or by blocking it) and
#    then hangs: the watchdog marks the hang and never sends it the
#    signal, and the library's handler read back shows as the default.
# Records go to a tracefs instance of our own (as instrument.sh), and
# once through `argus record -- PROG`. Prints "ok NAME" / "not ok NAME".
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
case $ARGUS in /*) ;; *) ARGUS=$(pwd)/$ARGUS ;; esac
SUITE=
. tests/lib.sh
ins_instance hard instrument-hardening
size() { wc -c <"$1" | tr -d ' '; }

# --- a daemon closes the library's descriptor and opens its own file ----------
for how in close_range closefrom closeloop syscall dup2; do
	rm -f "$TMP/own"
	run "$P/ins-closefds" $how "$TMP/own"
	rc=$?
	sz=$(size "$TMP/own" 2>/dev/null)
	[ $rc = 0 ] && [ "$sz" = 6 ] && [ "$(cat "$TMP/own")" = hello ]
	check "instrument-hardening-fds-$how-file-intact" $? "rc=$rc size=${sz:-none} $(head -c 200 "$TMP/err")"
	# records before the close and again after it (the library opened
	# its marker anew): loop waits of the main thread over the whole
	# 1.2 s, i.e. some in the last half second
	main=$(awk '$3 == "loop_wait" { print $2; exit }' "$TMP/rec")
	awk -v m="$main" '$3 == "loop_wait" && $2 == m { if (!f) f = $1; l = $1 }
	    END { d = l - f; if (d < 0.9) { print "loop waits over " d " s"; exit 1 } }' \
	    "$TMP/rec" >"$TMP/why"
	check "instrument-hardening-fds-$how-records-again" $? "$(cat "$TMP/why")"
done

# --- the same under the recorder ------------------------------------------------
if "$ARGUS" record -q -o "$TMP/trace" -- \
    "$P/ins-closefds" close_range "$TMP/own-rec" >"$TMP/rec.log" 2>&1; then
	sz=$(size "$TMP/own-rec")
	[ "$sz" = 6 ]
	check instrument-hardening-fds-recorded-file-intact $? "size=$sz"
else
	nok instrument-hardening-fds-recorded-file-intact "$(tail -n 5 "$TMP/rec.log")"
fi

# --- the program takes the watchdog's signal --------------------------------------
for how in sigaction signal syscall blocked; do
	ARGUS_HANG_MS=200 run "$P/ins-sigown" $how 1000
	rc=$?
	nb=$(grep -c ' hang_begin ' "$TMP/rec")
	[ $rc = 0 ] && grep -q '^handler ran 0 times$' "$TMP/out" && [ "$nb" = 1 ]
	check "instrument-hardening-signal-$how-left-alone" $? \
	    "rc=$rc $(cat "$TMP/out" "$TMP/err") hang_begin=$nb"
	# the library's own handler reads as the default action
	if [ $how = sigaction ]; then
		grep -q '^old action default$' "$TMP/out"
		check instrument-hardening-signal-shows-default $? "$(cat "$TMP/out")"
	fi
done
