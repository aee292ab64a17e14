#!/bin/sh
# damaged.sh: traces damaged in ways a hardening probe found, which every
# command reading a trace must take: warn once, skip the damage, read the
# rest (or refuse with one line saying what is wrong):
#  - a chunk whose header (its CRC made to match) counts 0xffffffff
#    events: diagnose (whole, --stream, --json), graph, export, dump,
#    info --events and debug (in a detached tmux) each warn once and go
#    on, in a data chunk and in the metadata chunk (whose stack
#    definitions go with it: once more for the stacks naming them);
#  - a directory, a FIFO or a character device (root only) in place of a
#    segment: one warning saying what the file is, the rest read; alone,
#    one error line saying it (not "Invalid argument");
#  - 5000 empty segments, under 1024 descriptors: three warnings, then one
#    counting the rest, and the trace read;
#  - diagnose --at a time no chosen thread waits or runs (the trace's
#    start, mkhang's idle app-watchdog): an error saying so, not a hang
#    of no kind lasting 0.0 ms.
# Made with tests/tools/mktrace and mkhang; the chunk lies need python3
# (skipped without).
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
case $ARGUS in /*) ;; *) ARGUS=$(pwd)/$ARGUS ;; esac
T=$(mktemp -d /tmp/argus-dmg-XXXXXX)
SUITE=damaged
. tests/lib.sh
tmux_sandbox
skip() { echo "ok damaged: $1 # skip $2"; }

if ! "$B/tests/tools/mktrace" "$T/a" 100000 65536 >"$T/log" 2>&1 ||
    ! "$B/tests/tools/mkhang" "$T/mk" >"$T/log" 2>&1; then
	nok "mktrace, mkhang" "$(cat "$T/log")"
	exit 0
fi

# lie SEG CPU K: the K-th chunk of stream CPU (65535: the metadata's)
# counts 0xffffffff events, its CRC made to match; the index is cut off
# so that the chunks are walked. Prints the chunk's offset.
lie() {
	python3 - "$@" <<'PY'
import struct, sys, zlib
p, cpu, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
b = bytearray(open(p, "rb").read())
o = struct.unpack_from("<I", b, 12)[0]
i = 0
while o + 44 <= len(b) and b[o:o + 4] == b"CHNK":
    if struct.unpack_from("<H", b, o + 4)[0] == cpu:
        if i == k:
            struct.pack_into("<I", b, o + 8, 0xffffffff)
            struct.pack_into("<I", b, o + 40, zlib.crc32(bytes(b[o:o + 40])))
            print(o)
        i += 1
    o += 44 + struct.unpack_from("<I", b, o + 12)[0]
open(p, "wb").write(b[:o])
PY
}

# every_command DIR OFFSET WHAT [ALSO]: each command reading DIR ends with
# status 0 and one warning, of the chunk at OFFSET (and one more saying
# ALSO, when given)
every_command() {
	dir=$1 off=$2 what=$3 also=${4:-}
	want=1
	[ -n "$also" ] && want=2
	fails=""
	for c in "diagnose" "diagnose --stream" "diagnose --json" "graph" \
	    "export -o $T/out.json" "dump" "info --events"; do
		$ARGUS $c "$dir" >/dev/null 2>"$T/err"
		rc=$?
		n=$(grep -c 'warning' "$T/err")
		if [ $rc -ne 0 ] || [ "$n" -ne $want ] ||
		    ! grep -q "offset $off: damaged chunk: more events than its size can hold (skipped)" "$T/err" ||
		    { [ -n "$also" ] && ! grep -q "$also" "$T/err"; }; then
			fails="$fails
$c: status $rc, $n warnings: $(head -n 3 "$T/err")"
		fi
	done
	if [ -z "$fails" ]; then
		ok "a $what chunk counting 0xffffffff events: every command warns once and goes on"
	else
		nok "a $what chunk counting 0xffffffff events: every command warns once and goes on" "$fails"
	fi
	if ! command -v tmux >/dev/null 2>&1; then
		skip "debug: a $what chunk counting 0xffffffff events" "tmux is not installed"
		return
	fi
	rm -f "$T/rc"
	tm new-session -d -s "$what" -x 120 -y 30 \
	    "$ARGUS debug $dir 2>$T/derr; echo \$? >$T/rc; sleep 60"
	n=100
	while [ $n -gt 0 ] && ! [ -s "$T/rc" ] &&
	    ! tm capture-pane -p -t "$what" | grep -q Candidates; do
		sleep 0.1
		n=$((n - 1))
	done
	tm send-keys -t "$what" q
	n=50
	while [ $n -gt 0 ] && ! [ -s "$T/rc" ]; do
		sleep 0.1
		n=$((n - 1))
	done
	if [ "$(cat "$T/rc" 2>/dev/null)" = 0 ]; then
		ok "debug: a $what chunk counting 0xffffffff events"
	else
		nok "debug: a $what chunk counting 0xffffffff events" \
		    "status $(cat "$T/rc" 2>/dev/null)" "$(head -n 3 "$T/derr")"
	fi
	tm kill-session -t "$what" >/dev/null 2>&1
}

# --- files that are no segments ------------------------------------------
# not_segment KIND MAKE...: a KIND made by MAKE... PATH in place of a
# segment
not_segment() {
	kind=$1
	shift
	cp -r "$T/mk" "$T/ns"
	"$@" "$T/ns/seg-00000002.argus"
	$ARGUS diagnose "$T/ns" >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -eq 0 ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
	    grep -q "seg-00000002.argus at offset 0: $kind, not a regular file (skipped)$" "$T/err" &&
	    grep -q '^hang 1: app (500) blocked' "$T/out"; then
		ok "$kind among the segments: one warning saying so"
	else
		nok "$kind among the segments: one warning saying so" "status $rc" "$(head -n 3 "$T/err")"
	fi
	rm -f "$T/ns/seg-00000001.argus"
	$ARGUS diagnose "$T/ns" >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
	    grep -q "^argus diagnose: .*/seg-00000002.argus: $kind, not a regular file$" "$T/err"; then
		ok "$kind as the only segment: one error line saying so"
	else
		nok "$kind as the only segment: one error line saying so" "status $rc" "$(head -n 3 "$T/err")"
	fi
	rm -rf "$T/ns"
}
not_segment "a directory" mkdir
not_segment "a FIFO" mkfifo
if [ "$(id -u)" = 0 ]; then
	zero() { mknod -m 600 "$1" c 1 5; }	# as /dev/zero
	not_segment "a character device" zero
else
	skip "a character device in place of a segment" "mknod needs root"
fi

# --- many empty segments --------------------------------------------------
cp -r "$T/mk" "$T/empty"
(cd "$T/empty" && seq -f 'seg-%08g.argus' 2 5001 | xargs touch)
(ulimit -n 1024; $ARGUS diagnose "$T/empty" >"$T/out" 2>"$T/err")
rc=$?
if [ $rc -eq 0 ] && [ "$(grep -c warning "$T/err")" -eq 4 ] &&
    [ "$(grep -c 'an empty file (skipped)$' "$T/err")" -eq 3 ] &&
    grep -q 'seg-00000005.argus at offset 0: an empty file (skipped), and 4996 more segments like it (not listed)$' "$T/err" &&
    grep -q '^hang 1: app (500) blocked' "$T/out"; then
	ok "5000 empty segments: three warnings and one for the rest"
else
	nok "5000 empty segments: three warnings and one for the rest" "status $rc, $(grep -c warning "$T/err") warnings" "$(head -n 5 "$T/err")" "$(tail -n 2 "$T/err")"
fi

# --- diagnose --at where nothing waits or runs ----------------------------
for how in "" "--whole"; do
	$ARGUS diagnose $how --tid 502 --at 0 "$T/mk" >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -eq 1 ] && [ ! -s "$T/out" ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
	    grep -q '^argus diagnose: nothing to diagnose at 0: no chosen thread waits then, and app-watchdog (502) does not run' "$T/err"; then
		ok "diagnose${how:+ $how} --at 0 of an idle thread says there is nothing"
	else
		nok "diagnose${how:+ $how} --at 0 of an idle thread says there is nothing" "status $rc" "$(cat "$T/out" "$T/err" | head -n 4)"
	fi
done

# --- chunks counting more events than they can hold ---------------------
if ! command -v python3 >/dev/null 2>&1; then
	skip "chunks counting more events than they can hold" "python3 is not installed"
	exit 0
fi
cp -r "$T/a" "$T/data"
off=$(lie "$T/data/seg-00000002.argus" 1 2)
every_command "$T/data" "$off" data
cp -r "$T/a" "$T/meta"
off=$(lie "$T/meta/seg-00000002.argus" 65535 0)
every_command "$T/meta" "$off" metadata \
    "stack records whose definition the segment lacks skipped (one warning for all)"
exit 0
