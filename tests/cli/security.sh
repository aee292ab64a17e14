#!/bin/sh
# needs: kernel tracing
# security.sh: argus as root facing an unprivileged local user (nobody)
# who prepared files in a world-writable directory, and libargus facing
# its environment (issue 16, items 1, 3, 6, 8 and 9). Each check says
# what an attacker tried and what must hold:
#  1  a trace directory of another user is refused by stop, status, info
#     and start; a pid file naming any process never gets it signalled,
#     even in root's own directory; a FIFO or a symbolic link as a
#     segment is skipped;
#  3  a FIFO as the trace, or as a segment, never blocks a reader;
#  6  a symbolic link with a trailing slash is refused by name;
#  8  ARGUS_SIGNAL never takes a fatal or job-control signal,
#     ARGUS_MARKER never writes into a regular file, ARGUS_HANG_MS out
#     of range keeps the default;
#  9  bad SUDO_* values are refused, never a silent run as root;
#  13 a trace directory renamed away while recording, a link put in its
#     place: the recorder keeps writing its files into the directory it
#     opened, never through the link.
# Needs root, runuser and tracefs (skipped, and said so, without).
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
case $ARGUS in /*) ;; *) ARGUS=$(pwd)/$ARGUS ;; esac
LIB=$(cd "$B" && pwd)/libargus.so
P=$(cd "$B" && pwd)/tests/progs
SUITE=security
. tests/lib.sh
skip() { echo "ok security: $1 # skip $2"; }

if [ "$(id -u)" != 0 ] || ! command -v runuser >/dev/null 2>&1; then
	skip all "needs root and runuser"
	exit 0
fi
T=$(mktemp -d /tmp/argus-sec-XXXXXX)
chmod 0711 "$T"
PUB=$T/pub			# world-writable, like /var/tmp
mkdir -m 1777 "$PUB"
pids=""
cleanup() {
	"$ARGUS" stop -o "$PUB/u/old" >/dev/null 2>&1
	for p in $pids; do kill "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
asnobody() { runuser -u nobody -- "$@"; }

# a victim process of root's
sleep 300 &
victim=$!
pids="$pids $victim"

# --- 1: a pid file planted by another user -------------------------------
asnobody sh -c "mkdir '$PUB/trace' && echo $victim > '$PUB/trace/argus.pid'"
"$ARGUS" stop -o "$PUB/trace" >"$T/out" 2>&1
rc=$?
if [ $rc -ne 0 ] && kill -0 $victim 2>/dev/null &&
    grep -q "owned by uid" "$T/out"; then
	ok "1 stop refuses a directory of another user"
else
	nok "1 stop refuses a directory of another user" "rc=$rc" "$(cat "$T/out")"
fi
for c in status info; do
	"$ARGUS" $c -o "$PUB/trace" >"$T/out" 2>&1
	[ "$c" = info ] && "$ARGUS" info "$PUB/trace" >"$T/out" 2>&1
	if grep -q "owned by uid" "$T/out"; then
		ok "1 $c refuses a directory of another user"
	else
		nok "1 $c refuses a directory of another user" "$(cat "$T/out")"
	fi
done
timeout 20 "$ARGUS" start -o "$PUB/trace" >"$T/out" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "owned by uid" "$T/out"; then
	ok "1 start refuses a directory of another user"
else
	nok "1 start refuses a directory of another user" "rc=$rc" "$(cat "$T/out")"
	"$ARGUS" stop -o "$PUB/trace" >/dev/null 2>&1
fi
# a directory of root's but writable by all
mkdir -m 0777 "$T/open" && chmod 0777 "$T/open"
echo $victim >"$T/open/argus.pid"
"$ARGUS" stop -o "$T/open" >"$T/out" 2>&1
if kill -0 $victim 2>/dev/null && grep -q "writable by others" "$T/out"; then
	ok "1 stop refuses a directory writable by others"
else
	nok "1 stop refuses a directory writable by others" "$(cat "$T/out")"
fi
# root's own directory, with a pid file that names a process which is
# not its recorder (left over, or written by mistake)
mkdir -m 0700 "$T/own"
echo $victim >"$T/own/argus.pid"
"$ARGUS" stop -o "$T/own" >"$T/out" 2>&1
rc=$?
if [ $rc -ne 0 ] && kill -0 $victim 2>/dev/null; then
	ok "1 stop signals only the recorder of the directory"
else
	nok "1 stop signals only the recorder of the directory" "rc=$rc" "$(cat "$T/out")"
fi
if timeout 20 "$ARGUS" start -q -o "$T/own" --no-instrument >"$T/out" 2>&1; then
	ok "1 start is not fooled by a stale pid file"
	sleep 0.5
	if "$ARGUS" stop -o "$T/own" >"$T/out" 2>&1 && ! [ -e "$T/own/argus.pid" ]; then
		ok "1 stop still stops the real recorder"
	else
		nok "1 stop still stops the real recorder" "$(cat "$T/out")"
	fi
else
	nok "1 start is not fooled by a stale pid file" "$(cat "$T/out")"
fi

# --- 1 and 3: FIFOs and links as segments, FIFO as the trace -------------
"$B/tests/tools/mkhang" "$T/mk" >/dev/null 2>&1
cp -r "$T/mk" "$T/fifo"
mkfifo "$T/fifo/seg-00000077.argus"
ln -s /etc/shadow "$T/fifo/seg-00000078.argus"
for c in info dump diagnose graph; do
	timeout 20 "$ARGUS" $c "$T/fifo" >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -eq 0 ] && grep -q "seg-00000077.argus.*not a regular file" "$T/err" &&
	    grep -q "seg-00000078.argus.*not a regular file" "$T/err"; then
		ok "3 $c skips a FIFO and a link among the segments"
	else
		nok "3 $c skips a FIFO and a link among the segments" "rc=$rc" "$(head -n 5 "$T/err")"
	fi
done
asnobody mkfifo "$PUB/fifo"
for c in info dump diagnose graph; do
	timeout 20 "$ARGUS" $c "$PUB/fifo" >"$T/out" 2>&1
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$(wc -l <"$T/out")" = 1 ]; then
		ok "3 $c refuses a FIFO as the trace"
	else
		nok "3 $c refuses a FIFO as the trace" "rc=$rc" "$(head -n 3 "$T/out")"
	fi
done
# a FIFO segment planted in a directory of another user
asnobody sh -c "mkdir '$PUB/t3' && mkfifo '$PUB/t3/seg-00000001.argus'"
timeout 20 "$ARGUS" info "$PUB/t3" >"$T/out" 2>&1
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ]; then
	ok "3 info does not wait on a planted FIFO"
else
	nok "3 info does not wait on a planted FIFO" "rc=$rc"
fi

# --- 6: a trailing slash does not follow a symbolic link -----------------
asnobody sh -c "mkdir '$PUB/tgt' && ln -s '$PUB/tgt' '$PUB/l'"
for d in "$PUB/l/" "$PUB/l"; do
	timeout 20 "$ARGUS" record -q --no-instrument -o "$d" --duration 0.3 \
	    >"$T/out" 2>&1
	rc=$?
	if [ $rc -ne 0 ] && [ -z "$(ls -A "$PUB/tgt")" ] &&
	    grep -q "symbolic link" "$T/out"; then
		ok "6 record refuses the link $d by name"
	else
		nok "6 record refuses the link $d by name" "rc=$rc" "$(cat "$T/out")" "$(ls -A "$PUB/tgt")"
	fi
done

# --- 8: libargus's environment --------------------------------------------
# a regular file as the marker is never written
asnobody sh -c "echo precious > '$PUB/victim'"
asnobody env ARGUS_MARKER="$PUB/victim" LD_PRELOAD="$LIB" \
    "$P/ins-condvar" >/dev/null 2>&1
if [ "$(cat "$PUB/victim")" = precious ]; then
	ok "8 ARGUS_MARKER never writes into a regular file"
else
	nok "8 ARGUS_MARKER never writes into a regular file" "$(od -c "$PUB/victim" | head -n 2)"
fi
# the user's program under root's recorder, with its marker: a fatal or
# job-control signal is never taken
if "$ARGUS" record -q -o "$T/r8" --duration 0.2 -- true >/dev/null 2>&1; then
	rm -rf "$T/r8"
	for sig in 15 2 1; do
		SUDO_UID=65534 SUDO_GID=65534 ARGUS_SIGNAL=$sig timeout 30 \
		    "$ARGUS" record -q -o "$T/r8" -- sh -c \
		    "$P/selfkill $sig; echo rc=\$?" \
		    >"$T/out" 2>&1
		rm -rf "$T/r8"
		want=$((128 + sig))
		if grep -q "rc=$want" "$T/out"; then
			ok "8 ARGUS_SIGNAL=$sig leaves signal $sig fatal"
		else
			nok "8 ARGUS_SIGNAL=$sig leaves signal $sig fatal" "$(cat "$T/out")"
		fi
	done
	SUDO_UID=65534 SUDO_GID=65534 ARGUS_SIGNAL=11 timeout 30 \
	    "$ARGUS" record -q -o "$T/r8" -- sh -c \
	    "timeout 10 $P/crash; echo rc=\$?" >"$T/out" 2>&1
	rm -rf "$T/r8"
	if grep -q "rc=139" "$T/out"; then
		ok "8 ARGUS_SIGNAL=11 leaves a segfault fatal"
	else
		nok "8 ARGUS_SIGNAL=11 leaves a segfault fatal" "$(cat "$T/out")"
	fi
else
	skip "8 signals" "no recorder here"
fi
# ARGUS_HANG_MS past the range: the default (2 s), not a wrapped 0.45 ms
TR=/sys/kernel/tracing
INST=$TR/instances/argus-sec-$$
if mkdir "$INST" 2>/dev/null; then
	echo 1 >"$INST/tracing_on"
	ARGUS_HANG_MS=18446744073710 ARGUS_MARKER=$INST/trace_marker_raw \
	    LD_PRELOAD=$LIB "$P/ins-hang" spin 300 >/dev/null 2>&1
	"$P/ins-decode" <"$INST/trace" >"$T/rec"
	n=$(grep -c ' hang_begin ' "$T/rec")
	echo 0 >"$INST/tracing_on"
	echo >"$INST/trace"
	ARGUS_HANG_MS=100 ARGUS_MARKER=$INST/trace_marker_raw \
	    LD_PRELOAD=$LIB "$P/ins-hang" spin 600 >/dev/null 2>&1 &
	echo 1 >"$INST/tracing_on"
	wait $!
	"$P/ins-decode" <"$INST/trace" >"$T/rec2"
	n2=$(grep -c ' hang_begin ' "$T/rec2")
	rmdir "$INST" 2>/dev/null
	if [ "$n" = 0 ] && [ "$n2" -ge 1 ]; then
		ok "8 ARGUS_HANG_MS out of range keeps the default"
	else
		nok "8 ARGUS_HANG_MS out of range keeps the default" "hangs: $n (want 0), with 100 ms: $n2"
	fi
else
	skip "8 ARGUS_HANG_MS" "no tracefs instance"
fi

# --- 13: the directory renamed away while recording -----------------------
# root records into a directory of its own inside one of nobody's; nobody
# renames it and puts a link to another directory of root's in its place.
# The status rewritten every second must go on into the renamed directory
# (its 'updated' line changes), and nothing into the other one.
asnobody mkdir "$PUB/u"
mkdir -m 0700 "$T/other"
if timeout 20 "$ARGUS" start -q --no-instrument -o "$PUB/u/trace" >"$T/out" 2>&1; then
	upd() { sed -n 's/^updated //p' "$1/status" 2>/dev/null; }
	u0=$(upd "$PUB/u/trace")
	asnobody sh -c "mv '$PUB/u/trace' '$PUB/u/old' && ln -s '$T/other' '$PUB/u/trace'"
	i=0
	while [ $i -lt 50 ] && [ -z "$(ls -A "$T/other")" ] &&
	    [ "$(upd "$PUB/u/old")" = "$u0" ]; do
		sleep 0.1
		i=$((i + 1))
	done
	u1=$(upd "$PUB/u/old")
	if [ -z "$(ls -A "$T/other")" ] && [ -n "$u0" ] && [ "$u1" != "$u0" ]; then
		ok "13 the status goes on into the renamed directory, not the link"
	else
		nok "13 the status goes on into the renamed directory, not the link" \
		    "updated $u0 -> $u1" "written into the link's target: $(ls -A "$T/other")"
	fi
	"$ARGUS" stop -o "$PUB/u/old" >"$T/out" 2>&1
	if [ -z "$(ls -A "$T/other")" ] && ! [ -e "$PUB/u/old/argus.pid" ]; then
		ok "13 stop removes the pid file of the renamed directory"
	else
		nok "13 stop removes the pid file of the renamed directory" \
		    "$(cat "$T/out")" "$(ls -A "$PUB/u/old" "$T/other")"
	fi
else
	nok "13 recording into a directory of nobody's" "$(cat "$T/out")"
fi

# --- 9: SUDO_* ---------------------------------------------------------------
if "$ARGUS" record -q -o "$T/r9" --duration 0.2 -- true >/dev/null 2>&1; then
	for v in "SUDO_UID=abc SUDO_GID=65534" "SUDO_UID=4294967296 SUDO_GID=65534" \
	    "SUDO_UID=65534x SUDO_GID=65534" "SUDO_UID=65534 SUDO_GID=x1" \
	    "SUDO_UID=3999999 SUDO_GID=" "SUDO_UID=3999999"; do
		rm -rf "$T/r9"
		env $v timeout 30 "$ARGUS" record -q -o "$T/r9" -- id -u \
		    >"$T/out" 2>"$T/err"
		rc=$?
		if [ $rc -ne 0 ] && ! grep -qx 0 "$T/out" && [ "$(wc -l <"$T/err")" = 1 ]; then
			ok "9 $v is refused"
		else
			nok "9 $v is refused" "rc=$rc" "$(cat "$T/out" "$T/err")"
		fi
	done
	rm -rf "$T/r9"
	SUDO_UID=65534 timeout 30 "$ARGUS" record -q -o "$T/r9" -- sh -c \
	    'echo $(id -u):$(id -g)' >"$T/out" 2>&1
	g=$(id -g nobody)
	if [ "$(cat "$T/out")" = "65534:$g" ]; then
		ok "9 SUDO_UID alone runs as that user in its own group"
	else
		nok "9 SUDO_UID alone runs as that user in its own group" "$(cat "$T/out")"
	fi
else
	skip "9 sudo" "no recorder here"
fi
exit 0
