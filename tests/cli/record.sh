#!/bin/sh
# Command-line tests of argus record, start, stop and status against the
# real kernel (needs root): error cases (one line, non-zero exit, nothing
# left behind), file modes, the daemon's life, and a trace readable while
# it is being recorded.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
T=$(mktemp -d /tmp/argus-reccli-XXXXXX)
trap 'rm -rf "$T"' EXIT

ok() { echo "ok record: $1"; }
nok() { echo "not ok record: $1"; shift; [ $# -gt 0 ] && echo "  $*"; }

if [ "$(id -u)" != 0 ]; then
	echo "ok record: skipped (not root)"
	exit 0
fi

instances() { ls /sys/kernel/tracing/instances 2>/dev/null | grep -c '^argus-[0-9]*$'; }

# check NAME WANT_STATUS CMD...: one line on stderr, given status.
check_err() {
	name=$1 want=$2
	shift 2
	"$@" > "$T/out" 2> "$T/err"
	rc=$?
	n=$(wc -l < "$T/err")
	if [ "$rc" -eq "$want" ] && [ "$n" -eq 1 ] && grep -q '^argus [a-z]*: ' "$T/err"; then
		ok "$name"
	else
		nok "$name" "status $rc (want $want), $n lines: $(cat "$T/err")"
	fi
}

before=$(instances)

# --- usage and errors ---------------------------------------------------
if $ARGUS record --help | grep -q 'usage: argus record' &&
    $ARGUS start --help | grep -q 'usage: argus start' &&
    $ARGUS stop --help | grep -q 'usage: argus stop' &&
    $ARGUS status --help | grep -q 'usage: argus status'; then
	ok "help"
else
	nok "help"
fi

check_err "unknown event set" 2 $ARGUS record -o "$T/x" --events bogus
check_err "bad size" 2 $ARGUS record -o "$T/x" --size 12Q
[ -e "$T/x" ] && nok "usage errors create nothing" || ok "usage errors create nothing"

if command -v setpriv > /dev/null; then
	check_err "not root" 1 setpriv --reuid=65534 --regid=65534 \
	    --clear-groups $ARGUS record -o "$T/nr"
	[ -e "$T/nr" ] && nok "not root creates nothing" || ok "not root creates nothing"
fi

check_err "unwritable directory" 1 $ARGUS record -q -o /proc/argus-no/trace --duration 1
mkdir "$T/target"
ln -s "$T/target" "$T/link"
check_err "symbolic link refused" 1 $ARGUS record -q -o "$T/link" --duration 1
[ -z "$(ls "$T/target")" ] && ok "nothing written through the link" ||
	nok "nothing written through the link" "$(ls "$T/target")"
[ "$(instances)" -le "$before" ] && ok "no instance left after errors" ||
	nok "no instance left after errors"

# A full disk: one line, the recorder stops, its instance goes.
mkdir "$T/full"
if mount -t tmpfs -o size=256k tmpfs "$T/full" 2> /dev/null; then
	check_err "full disk" 1 $ARGUS record -q -o "$T/full/t" --events full \
	    -- dd if=/dev/zero of=/dev/null bs=1 count=300000 status=none
	umount "$T/full"
	[ "$(instances)" -le "$before" ] && ok "no instance left after a full disk" ||
		nok "no instance left after a full disk"
fi

# --- duration, file modes, group --------------------------------------------
start=$(date +%s)
$ARGUS record -q -o "$T/d" --events sched --duration 1
rc=$?
el=$(( $(date +%s) - start ))
[ $rc -eq 0 ] && [ $el -le 4 ] && ok "duration ends the recording" ||
	nok "duration ends the recording" "status $rc after $el s"
m=$(stat -c %a "$T"/d/seg-*.argus | sort -u)
[ "$m" = 600 ] && ok "trace files are 0600" || nok "trace files are 0600" "$m"
d=$(stat -c %a "$T/d")
[ "$d" = 700 ] && ok "trace directory is 0700" || nok "trace directory is 0700" "$d"
$ARGUS record -q -o "$T/g" --events sched --duration 0.3 --group daemon
m=$(stat -c '%a %G' "$T"/g/seg-*.argus | sort -u)
[ "$m" = "640 daemon" ] && ok "--group makes files 0640" || nok "--group makes files 0640" "$m"

# --- command: exit status and user ------------------------------------------
$ARGUS record -q -o "$T/c" --events sched -- sh -c 'exit 3'
[ $? -eq 3 ] && ok "exit status of the command" || nok "exit status of the command"
u=$(SUDO_UID=65534 SUDO_GID=65534 SUDO_USER=nobody $ARGUS record -q -o "$T/u" \
    --events sched -- id -u)
[ "$u" = 65534 ] && ok "command runs as the sudo user" || nok "command runs as the sudo user" "uid $u"
mk=$($ARGUS record -q -o "$T/m" --events sched -- sh -c 'echo $ARGUS_MARKER')
case $mk in
/*/instances/argus-*/trace_marker_raw) ok "ARGUS_MARKER given to the command" ;;
*) nok "ARGUS_MARKER given to the command" "$mk" ;;
esac
mf=$($ARGUS record -q -o "$T/m2" --events sched -- cat /run/argus/marker)
[ "$mf" = "$mk" ] || case $mf in
/*/instances/argus-*/trace_marker_raw) true ;;
*) false ;;
esac && ok "marker path published" || nok "marker path published" "$mf"

# Marks written by a program that runs as the sudo user reach the trace.
P=$B/tests/progs/rec-known
if [ -x "$P" ]; then
	SUDO_UID=65534 SUDO_GID=65534 SUDO_USER=nobody $ARGUS record -q \
	    -o "$T/mk" --events sched -- "$P" 5 > "$T/known.out"
	n=$($ARGUS dump "$T/mk" --type user 2>/dev/null | grep -c 'rec-test')
	s=$($ARGUS dump "$T/mk" --type stack 2>/dev/null | grep -c .)
	[ "$n" = 5 ] && [ "$s" = 1 ] && ok "marks of an unprivileged command" ||
		nok "marks of an unprivileged command" "$n marks, $s stacks"
fi

# A probe added while recording (argus probe) is decoded as a user event.
if [ -x "$P" ] && $ARGUS probe --help > /dev/null 2>&1; then
	$ARGUS record -q -o "$T/pr" --events sched --duration 3 &
	rp=$!
	sleep 0.8
	$ARGUS probe add "$(readlink -f "$P")" main argus_rec_test > /dev/null 2>&1
	"$P" 2 > /dev/null
	"$P" 2 > /dev/null
	wait $rp
	$ARGUS probe del argus_rec_test > /dev/null 2>&1
	n=$($ARGUS dump "$T/pr" --type user 2>/dev/null | grep 'kind=probe' |
	    grep -c 'name="argus_rec_test"')
	[ "$n" = 2 ] && ok "probe hits decoded" || nok "probe hits decoded" "$n hits"
fi

# --- daemon -------------------------------------------------------------
D=$T/daemon
if $ARGUS start -o "$D" --events default > "$T/start.out" 2>&1; then
	ok "start"
else
	nok "start" "$(cat "$T/start.out")"
fi
pid=$(cat "$D/argus.pid" 2>/dev/null)
sleep 1.5
check_err "second recorder refused" 1 $ARGUS start -o "$D"
if $ARGUS status -o "$D" > "$T/st" 2>&1 && grep -q '^recorder: *running' "$T/st" &&
    grep -q 'default set' "$T/st"; then
	ok "status of a running daemon"
else
	nok "status of a running daemon" "$(cat "$T/st")"
fi
if $ARGUS info "$D" > "$T/info" 2>&1; then
	ok "trace readable while recording"
else
	nok "trace readable while recording" "$(head -3 "$T/info")"
fi
if $ARGUS stop -o "$D" && ! kill -0 "$pid" 2>/dev/null; then
	ok "stop ends the daemon"
else
	nok "stop ends the daemon"
fi
[ ! -e "$D/argus.pid" ] && ok "pid file removed" || nok "pid file removed"
[ -d "/sys/kernel/tracing/instances/argus-$pid" ] &&
	nok "daemon's instance removed" || ok "daemon's instance removed"
$ARGUS status -o "$D" > "$T/st" 2>&1
grep -q '^recorder: *not running' "$T/st" && ok "status after stop" ||
	nok "status after stop" "$(cat "$T/st")"
check_err "stop without daemon" 1 $ARGUS stop -o "$D"
exit 0
