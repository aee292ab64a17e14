#!/bin/sh
# needs: kernel tracing
# Tests of `argus watch` (hardware watchpoint on a shared flag) and
# `argus probe` (uprobes), against real programs and a tracefs instance
# of our own standing in for the recorder's. Prints "ok NAME" lines.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
P=$B/tests/progs
TR=/sys/kernel/tracing
[ -d $TR/instances ] || mount -t tracefs nodev $TR 2>/dev/null
INST=$TR/instances/argus-tools-$$
NAME=argus_test_$$
TMP=$(mktemp -d)
cleanup() {
	"$ARGUS" probe del "$NAME" >/dev/null 2>&1
	rmdir "$INST" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

SUITE=
. tests/lib.sh

if ! mkdir "$INST" 2>/dev/null; then
	echo "not ok instrument-tools-setup (cannot create a tracefs instance)"
	exit 1
fi
echo 1 >"$INST/tracing_on"
MK=$INST/trace_marker_raw

# --- argus watch: flag polled with sched_yield, set by another thread -------
"$P/ins-flag" 1200 >"$TMP/flag" &
fp=$!
sleep 0.3
pid=$(sed -n 's/^pid=\([0-9]*\).*/\1/p' "$TMP/flag")
addr=$(sed -n 's/.*flag=\(0x[0-9a-f]*\).*/\1/p' "$TMP/flag")
"$ARGUS" watch --marker "$MK" "$pid" flag 2>"$TMP/werr"
wrc=$?
wait $fp
setter=$(sed -n 's/^setter=\([0-9]*\).*/\1/p' "$TMP/flag")
"$P/ins-decode" <"$INST/trace" >"$TMP/rec"
[ $wrc = 0 ]
check instrument-watch-runs $? "rc=$wrc $(cat "$TMP/werr")"
nw=$(awk -v a="key=$addr" -v t="tid=$setter" '$3 == "flag_write" && $4 == a && $7 == t' "$TMP/rec" | wc -l)
[ "$nw" = 1 ]
check instrument-watch-write-by-setter $? "writes=$nw setter=$setter"
nr=$(awk -v a="key=$addr" -v t="tid=$pid" '$3 == "flag_read" && $4 == a && $7 == t' "$TMP/rec" | wc -l)
[ "$nr" -ge 10 ]
check instrument-watch-reads-by-poller $? "reads=$nr"
# the write's instruction address lies in the program's text
ip=$(awk '$3 == "flag_write" { sub("arg2=", "", $6); print $6; exit }' "$TMP/rec")
[ -n "$ip" ] && [ "$ip" != 0x0 ]
check instrument-watch-ip $? "ip=$ip"

# --write only
"$P/ins-flag" 800 >"$TMP/flag" &
fp=$!
sleep 0.3
pid=$(sed -n 's/^pid=\([0-9]*\).*/\1/p' "$TMP/flag")
out=$("$ARGUS" watch --write --print "$pid" flag 2>/dev/null)
wait $fp
[ "$(echo "$out" | grep -c '^write')" = 1 ] && [ "$(echo "$out" | grep -c '^read')" = 0 ]
check instrument-watch-write-only $? "$out"

# errors
"$ARGUS" watch --print 999999 flag 2>"$TMP/err"
rc=$?
[ $rc = 1 ] && grep -q 'argus watch: process 999999' "$TMP/err"
check instrument-watch-error-no-process $? "$(cat "$TMP/err")"
sleep 2 &
sp=$!
"$ARGUS" watch --print $sp no_such_symbol_xyz 2>"$TMP/err"
rc=$?
kill $sp 2>/dev/null
[ $rc = 1 ] && grep -q "symbol 'no_such_symbol_xyz' not found" "$TMP/err"
check instrument-watch-error-no-symbol $? "$(cat "$TMP/err")"
# five watchers on one thread need more than its four debug registers
"$P/ins-flag" 1500 >"$TMP/flag" &
fp=$!
sleep 0.3
pid=$(sed -n 's/^pid=\([0-9]*\).*/\1/p' "$TMP/flag")
for i in 1 2 3 4; do
	"$ARGUS" watch --write --print --duration 2 "$pid" flag >/dev/null 2>&1 &
done
sleep 0.3
"$ARGUS" watch --write --print --duration 1 "$pid" flag >/dev/null 2>"$TMP/err"
rc=$?
wait
[ $rc = 1 ] && grep -q 'no free debug register' "$TMP/err"
check instrument-watch-error-no-register $? "rc=$rc $(cat "$TMP/err")"

# --- argus probe ------------------------------------------------------------
echo >"$INST/trace"
"$ARGUS" probe add --instance "$INST" "$P/ins-uprobe" argus_test_target \
    "$NAME" 'x=%di:s64' >"$TMP/out" 2>"$TMP/err"
check instrument-probe-add $? "$(cat "$TMP/err")"
"$ARGUS" probe list | grep -q "^$NAME .*ins-uprobe:0x"
check instrument-probe-list $?
"$P/ins-uprobe" 4 >/dev/null
hits=$(grep -c "$NAME: (0x[0-9a-f]*) x=[1-4]\$" "$INST/trace")
[ "$hits" = 4 ]
check instrument-probe-hits $? "hits=$hits"
"$ARGUS" probe add "$P/ins-uprobe" argus_test_target "$NAME" 2>"$TMP/err"
[ $? = 1 ] && grep -q 'already exists' "$TMP/err"
check instrument-probe-duplicate $? "$(cat "$TMP/err")"
"$ARGUS" probe add "$P/ins-uprobe" no_such_function 2>"$TMP/err"
[ $? = 1 ] && grep -q "symbol 'no_such_function' not found" "$TMP/err"
check instrument-probe-no-symbol $? "$(cat "$TMP/err")"
"$ARGUS" probe del "$NAME"
rc=$?
[ $rc = 0 ] && ! "$ARGUS" probe list | grep -q "^$NAME "
check instrument-probe-del $? "rc=$rc"
"$ARGUS" probe del "$NAME" 2>"$TMP/err"
[ $? = 1 ] && grep -q "no probe named $NAME" "$TMP/err"
check instrument-probe-del-missing $? "$(cat "$TMP/err")"
"$ARGUS" watch --help | grep -q '^usage: argus watch' &&
    "$ARGUS" probe --help | grep -q '^usage: argus probe'
check instrument-tools-help $?
