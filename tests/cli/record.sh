#!/bin/sh
# needs: kernel tracing
# Command-line tests of argus record, start, stop and status against the
# real kernel (needs root): error cases (one line, non-zero exit, nothing
# left behind), file modes, the daemon's life, and a trace readable while
# it is being recorded.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
T=$(mktemp -d /tmp/argus-reccli-XXXXXX)
trap 'rm -rf "$T"' EXIT

SUITE=record
. tests/lib.sh

if [ "$(id -u)" != 0 ]; then
	echo "ok record: skipped (not root)"
	exit 0
fi

instances() { ls /sys/kernel/tracing/instances 2>/dev/null | grep -c '^argus-[0-9]*$'; }


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

# A full disk: one line, the recorder stops, its instance goes, and the
# chunk it was writing is cut off: the trace reads without damage (with
# either backend).
mkdir "$T/full"
for be in auto tracefs; do
	mount -t tmpfs -o size=256k tmpfs "$T/full" 2> /dev/null || break
	check_err "full disk ($be)" 1 $ARGUS record -q -o "$T/full/t" \
	    --backend $be --events full \
	    -- dd if=/dev/zero of=/dev/null bs=1 count=3000000 status=none
	$ARGUS info --events "$T/full/t" > "$T/info" 2>&1
	if grep -q '^events: *[1-9]' "$T/info" &&
	    ! grep -qE 'damaged data|[1-9][0-9]* damaged spots' "$T/info" &&
	    [ -z "$(ls "$T/full/t" | grep '\.tmp$')" ]; then
		ok "full disk ($be): nothing half-written left"
	else
		nok "full disk ($be): nothing half-written left" \
		    "$(grep 'damaged\|^events' "$T/info" | head -n 3)" "$(ls -a "$T/full/t")"
	fi
	umount "$T/full"
done
[ "$(instances)" -le "$before" ] && ok "no instance left after a full disk" ||
	nok "no instance left after a full disk"

# Sizes and durations that cannot work say why.
check_err "--segment below the minimum" 2 $ARGUS record -o "$T/x" --segment 1k
grep -q 'segment size 1k is below the minimum of 64k' "$T/err" &&
	ok "... names the minimum segment size" ||
	nok "... names the minimum segment size" "$(cat "$T/err")"
check_err "--size below two segments" 2 $ARGUS record -o "$T/x" --size 100k
grep -q 'size bound 100k must hold two segments of 64M' "$T/err" &&
	ok "... names the segment size" || nok "... names the segment size" "$(cat "$T/err")"
check_err "--duration 0 is refused" 2 timeout 10 $ARGUS record -q -o "$T/x" --duration 0
grep -q 'leave --duration out' "$T/err" &&
	ok "... saying how to record until stopped" ||
	nok "... saying how to record until stopped" "$(cat "$T/err")"
[ -e "$T/x" ] && nok "size errors create nothing" || ok "size errors create nothing"

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
	# its own stack, and one by proxy for the made-up thread 0x12345
	# (the library's stacks: the recorder's own, of long waits and of
	# samples, come from whatever else the machine runs)
	s=$($ARGUS dump "$T/mk" --type stack 2>/dev/null | grep -c ' kind=mark ')
	sp=$($ARGUS dump "$T/mk" --type stack 2>/dev/null |
	    grep ' kind=mark ' | grep -c ' tid=74565 ')
	[ "$n" = 5 ] && [ "$s" = 2 ] && [ "$sp" = 1 ] &&
		ok "marks of an unprivileged command" ||
		nok "marks of an unprivileged command" "$n marks, $s stacks, $sp by proxy"
fi

# A command that changes its ids after changing its capabilities on its
# own thread (setpriv: setresuid, capset, setresgid) runs under libargus:
# no second thread of libargus's is there to fail the setresgid and make
# glibc abort the process
if command -v setpriv > /dev/null; then
	out=$($ARGUS record -q -o "$T/sp" --events sched -- setpriv \
	    --reuid=65534 --regid=65534 --clear-groups /bin/echo hi 2>&1)
	rc=$?
	[ $rc -eq 0 ] && [ "$out" = hi ] &&
		ok "setpriv dropping its ids under libargus" ||
		nok "setpriv dropping its ids under libargus" "status $rc: $out"
fi

# A probe added while recording (argus probe) is decoded as a user event
# (tracefs backend: the BPF backend does not record probes).
if [ -x "$P" ] && $ARGUS probe --help > /dev/null 2>&1; then
	$ARGUS record -q -o "$T/pr" --backend tracefs --events sched --duration 3 &
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

# A probe defined while no recorder ran is recorded (the whole
# argus_probes system is enabled at start).
if [ -x "$P" ] && $ARGUS probe --help > /dev/null 2>&1 &&
    $ARGUS probe add "$(readlink -f "$P")" main argus_rec_pre > /dev/null 2>&1; then
	# auto takes tracefs when probes are defined
	$ARGUS record -q -o "$T/pp" --events sched -- "$P" 1 > /dev/null 2>&1
	$ARGUS probe del argus_rec_pre > /dev/null 2>&1
	n=$($ARGUS dump "$T/pp" --type user 2>/dev/null | grep 'kind=probe' |
	    grep -c 'name="argus_rec_pre"')
	[ "$n" = 1 ] && ok "probe defined before recording" ||
		nok "probe defined before recording" "$n hits"
fi

# --no-instrument: no preload, no marker, no user records.
if [ -x "$P" ]; then
	env=$($ARGUS record -q --no-instrument -o "$T/ni" --events sched -- \
	    sh -c 'echo "[${LD_PRELOAD-}${ARGUS_MARKER-}]"; "$0" 3 > /dev/null' "$P")
	# (stacks the recorder takes itself are not the library's)
	n=$($ARGUS dump "$T/ni" --type user,stack 2>/dev/null |
	    grep -v ' stack .* kind=\(wait\|waker:[0-9]*\|kernel\|sample\|ksample\) ' |
	    grep -c .)
	[ "$env" = "[]" ] && [ "$n" = 0 ] && ok "no-instrument" ||
		nok "no-instrument" "env $env, $n user records"
fi

# Proxy records: the watchdog writes hang_begin and its stack for the main
# thread; libargus's mapping records become mmap events before them.
H=$B/tests/progs/ins-hang
if [ -x "$H" ]; then
	ARGUS_HANG_MS=300 timeout 30 $ARGUS record -q -o "$T/hg" --events sched -- \
	    sh -c 'echo $$ > "$0"; exec "$1" sleep 1000 > /dev/null' "$T/hg.pid" "$H"
	hp=$(cat "$T/hg.pid")
	$ARGUS dump "$T/hg" --type user,stack,mmap 2>/dev/null > "$T/hg.txt"
	nb=$(awk -v t="$hp" '$4 == t && $6 == "user" && $7 == "kind=hang_begin"' "$T/hg.txt" | wc -l)
	ns=$(awk -v t="$hp" '$6 == "stack" && $7 == "tid=" t && $8 == "kind=hang_begin"' "$T/hg.txt" | wc -l)
	[ "$nb" = 1 ] && [ "$ns" = 1 ] && ok "hang_begin for the main thread" ||
		nok "hang_begin for the main thread" "$nb marks, $ns stacks (pid $hp)"
	# libargus writes its mappings just before its first stack (not at
	# switch-on: a forking server would write them for every child); the
	# recorder's own reading of /proc comes with the stack's time stamp
	mt=$(awk -v p="pid=$hp" '$6 == "mmap" && $7 == p && /ins-hang"$/ { print $1; exit }' "$T/hg.txt")
	bt=$(awk -v t="tid=$hp" '$6 == "stack" && $7 == t && $8 == "kind=hang_begin" { print $1; exit }' "$T/hg.txt")
	[ -n "$mt" ] && [ -n "$bt" ] && awk -v a="$mt" -v b="$bt" 'BEGIN { exit !(a + 0 < b + 0) }' &&
		ok "mapping records of libargus" ||
		nok "mapping records of libargus" "mmap at ${mt:-none}, stack at ${bt:-none}"
fi

# argus watch while recording: the flag write is the setter thread's.
F=$B/tests/progs/ins-flag
if [ -x "$F" ] && $ARGUS start -q -o "$T/fl" --events sched > /dev/null 2>&1; then
	"$F" 1000 > "$T/flag" &
	fp=$!
	sleep 0.3
	pid=$(sed -n 's/^pid=\([0-9]*\).*/\1/p' "$T/flag")
	timeout 20 $ARGUS watch --write "$pid" flag > /dev/null 2>&1
	wait $fp
	setter=$(sed -n 's/^setter=\([0-9]*\).*/\1/p' "$T/flag")
	sleep 0.3
	$ARGUS stop -o "$T/fl" > /dev/null 2>&1
	n=$($ARGUS dump "$T/fl" --type user 2>/dev/null |
	    awk -v t="$setter" '$4 == t && $7 == "kind=flag_write"' | wc -l)
	[ "$n" = 1 ] && ok "flag_write of argus watch" ||
		nok "flag_write of argus watch" "$n for setter $setter"
fi

# The BPF backend: it is named in the trace and the status; killed with
# SIGKILL, it leaves no program, link or pinned object behind (links are
# file descriptors the kernel closes).
bpfprogs() { bpftool prog show 2>/dev/null | grep -c ' name on_switch '; }
if [ -n "${ARGUS_BACKEND:-}" ] && [ "$ARGUS_BACKEND" != bpf ] &&
    [ "$ARGUS_BACKEND" != auto ]; then
	ok "bpf backend # SKIP ARGUS_BACKEND=$ARGUS_BACKEND"
elif ! command -v bpftool > /dev/null ||
    ! $ARGUS record -q -o "$T/bk" --backend bpf --events sched --duration 0.3 \
    2> "$T/bk.err"; then
	ok "bpf backend # SKIP $(cat "$T/bk.err" 2>/dev/null)"
else
	$ARGUS info "$T/bk" 2>/dev/null | grep -q '^recorder: *bpf, pid [1-9]' &&
		ok "bpf backend named in the trace" ||
		nok "bpf backend named in the trace" "$($ARGUS info "$T/bk" | grep recorder)"
	# the recorder's process too, so that readers tell it apart
	$ARGUS record -q -o "$T/tf" --backend tracefs --events sched \
	    --duration 0.3 &
	rp=$!
	wait $rp
	$ARGUS info "$T/tf" 2>/dev/null | grep -q "^recorder: *tracefs, pid $rp\$" &&
		ok "tracefs backend and the recorder's pid named in the trace" ||
		nok "tracefs backend and the recorder's pid named in the trace" \
		    "pid $rp; $($ARGUS info "$T/tf" | grep recorder)"
	p0=$(bpfprogs)
	l0=$(bpftool link show 2>/dev/null | grep -c .)
	pin0=$(find /sys/fs/bpf 2>/dev/null | wc -l)
	$ARGUS start -q -o "$T/kill" --backend bpf > /dev/null 2>&1
	kp=$(cat "$T/kill/argus.pid" 2>/dev/null)
	sleep 0.5
	p1=$(bpfprogs)
	st=$($ARGUS status -o "$T/kill" 2>/dev/null | sed -n 's/^backend: *//p')
	[ "$st" = bpf ] && ok "status names the backend" ||
		nok "status names the backend" "'$st'"
	[ -n "$kp" ] && kill -9 "$kp"
	for i in 1 2 3 4 5 6 7 8 9 10; do
		[ "$(bpfprogs)" -le "$p0" ] && break
		sleep 0.2
	done
	p2=$(bpfprogs)
	l2=$(bpftool link show 2>/dev/null | grep -c .)
	pin2=$(find /sys/fs/bpf 2>/dev/null | wc -l)
	[ "$p1" -gt "$p0" ] && [ "$p2" -le "$p0" ] && [ "$l2" -le "$l0" ] &&
	    [ "$pin2" -le "$pin0" ] && ok "SIGKILL leaves no BPF program attached" ||
		nok "SIGKILL leaves no BPF program attached" \
		    "programs $p0 -> $p1 -> $p2, link lines $l0 -> $l2, pins $pin0 -> $pin2"
	# ARGUS_BPF_STATS=1: the kernel counts the programs' run time, and
	# the status says what they cost per event; without it, nothing is
	# counted
	ARGUS_BPF_STATS=1 $ARGUS record -q -o "$T/cost" --backend bpf \
	    --events sched -- sh -c 'for i in 1 2 3 4 5 6 7 8; do sleep 0.01; done'
	bruns=$(sed -n 's/^bpf_runs //p' "$T/cost/status" 2>/dev/null)
	bns=$(sed -n 's/^bpf_ns //p' "$T/cost/status" 2>/dev/null)
	cl=$($ARGUS status -o "$T/cost" 2>/dev/null | grep '^cpu:')
	[ "${bruns:-0}" -gt 0 ] && [ "${bns:-0}" -gt 0 ] &&
	    echo "$cl" | grep -q 's in its BPF programs, [0-9]* ns per event' &&
		ok "ARGUS_BPF_STATS=1: the programs' time in the status" ||
		nok "ARGUS_BPF_STATS=1: the programs' time in the status" \
		    "runs '$bruns', ns '$bns', status '$cl'"
	$ARGUS record -q -o "$T/nocost" --backend bpf --events sched \
	    --duration 0.3
	! grep -q '^bpf_' "$T/nocost/status" &&
		ok "without ARGUS_BPF_STATS nothing is counted" ||
		nok "without ARGUS_BPF_STATS nothing is counted" \
		    "$(grep '^bpf_' "$T/nocost/status")"
	# a thread asleep in a call since before the programs attached
	# keeps the exit of that call (where its wait ends)
	sleep 1 &
	sp=$!
	sleep 0.3
	$ARGUS record -q -o "$T/slp" --backend bpf --events default --duration 1.2
	wait $sp
	n=$($ARGUS dump "$T/slp" --pid $sp --type sys_exit 2>/dev/null |
	    grep -c 'nr=clock_nanosleep')
	[ "$n" = 1 ] && ok "a thread asleep before recording keeps its exit" ||
		nok "a thread asleep before recording keeps its exit" "$n exits"
	# kernel events only (no libargus records to keep): no program on
	# every system call's exit; the results of blocked calls come on
	# the way back to user space (rseq_update), lock attempts refused
	# at once from the file lock events, sched_yield at its switch
	if command -v python3 > /dev/null && command -v flock > /dev/null; then
		lean='
import fcntl, os, sys, time
f = open(sys.argv[1], "w")
for i in range(5):
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        time.sleep(0.02)
os.sched_setaffinity(0, {0})
pid = os.fork()
end = time.time() + 0.3
while time.time() < end:
    os.sched_yield()
if pid:
    os.waitpid(pid, 0)
time.sleep(0.3)'
		: > "$T/lk"
		flock "$T/lk" sleep 3 &
		fp=$!
		sleep 0.2
		$ARGUS record -q -o "$T/lean" --backend bpf --events default \
		    --no-instrument -- python3 -c "$lean" "$T/lk" > /dev/null 2>&1 &
		rp=$!
		sleep 0.4
		se=$(bpftool prog show 2>/dev/null | grep -c ' name on_sys_exit ')
		rs=$(bpftool prog show 2>/dev/null | grep -c ' name on_rseq ')
		wait $rp
		kill $fp 2> /dev/null
		$ARGUS dump "$T/lean" --type sys_exit 2>/dev/null |
		    awk '$5 == "python3"' > "$T/lean.exits"
		slp=$(grep -c 'nr=clock_nanosleep ret=0' "$T/lean.exits")
		att=$(grep -c 'nr=flock ret=-11' "$T/lean.exits")
		yl=$(grep -c 'nr=sched_yield' "$T/lean.exits")
		[ "$se" = 0 ] && [ "$rs" -ge 1 ] && [ "$slp" -ge 5 ] &&
		    [ "$att" = 5 ] && [ "$yl" -ge 2 ] &&
			ok "kernel only: results of blocked calls, refused locks and yields without a system-call hook" ||
			nok "kernel only: results without a system-call hook" \
			    "sys_exit programs $se, rseq programs $rs, sleeps $slp, refused flocks $att, yields $yl"
	fi
	# with libargus (no --no-instrument) the default set stays lean:
	# exits at rseq_update, no record of a call that blocked nobody (a
	# write into a pipe), and libargus's records from the program on
	# sys_exit, which keeps those alone
	if [ -x "$P" ]; then
		$ARGUS record -q -o "$T/lw" --backend bpf --events default -- \
		    sh -c "$P 5; echo x | cat > /dev/null; sleep 1" \
		    > /dev/null 2>&1 &
		rp=$!
		sleep 0.6
		rs=$(bpftool prog show 2>/dev/null | grep -c ' name on_rseq ')
		wait $rp
		n=$($ARGUS dump "$T/lw" --type user 2>/dev/null | grep -c 'rec-test')
		nw=$($ARGUS dump "$T/lw" --type sys_exit 2>/dev/null |
		    grep -c 'nr=write ')
		[ "$rs" -ge 1 ] && [ "$n" = 5 ] && [ "$nw" = 0 ] &&
			ok "with libargus: its records, and the default set lean" ||
			nok "with libargus: its records, and the default set lean" \
			    "rseq programs $rs, marks $n, write exits $nw"
	fi
	# messages in a burst: one record each way for the burst in the
	# default set (a socket that holds an unread message takes more
	# without a record), every one in the full set; a ping-pong keeps
	# all of its messages
	if command -v python3 > /dev/null; then
		burst='
import socket, time
a, b = socket.socketpair()
time.sleep(0.1)
for i in range(20):
    a.send(b"x")
for i in range(20):
    b.recv(1)
for i in range(10):
    a.send(b"p"); b.recv(1)
time.sleep(0.1)'
		for set in default full; do
			$ARGUS record -q -o "$T/burst-$set" --backend bpf \
			    --events $set -- python3 -c "$burst" > /dev/null 2>&1
			eval n_$set=\"$($ARGUS dump "$T/burst-$set" --type sk_data_ready,sock_recv 2>/dev/null |
			    awk '$5 == "python3" { n[$6]++ } END { printf "%d/%d", n["sk_data_ready"], n["sock_recv"] }')\"
		done
		[ "$n_default" = 11/11 ] && [ "$n_full" = 30/30 ] &&
			ok "a burst of messages is one record each way" ||
			nok "a burst of messages is one record each way" \
			    "default $n_default, full $n_full (ready/recv)"
	fi
	# kernel only, no close is seen: a descriptor blocked on as a pipe,
	# then closed and its number reused for a socket before the
	# recorder reads /proc (it drains every 100 ms), is still the pipe
	# at its first call and the socket at its second
	if command -v python3 > /dev/null; then
		$ARGUS record -q -o "$T/fdre" --backend bpf --no-instrument -- \
		    python3 -c '
import os, socket, threading, time
time.sleep(0.2)
r, w = os.pipe()
threading.Thread(target=lambda: (time.sleep(0.005), os.write(w, b"x"))).start()
os.read(r, 1)
n = r
os.close(r); os.close(w)
a, b = socket.socketpair()
threading.Thread(target=lambda: (time.sleep(0.3), b.send(b"y"))).start()
a.recv(1)
print(os.getpid(), n, a.fileno())' > "$T/fdre.out" 2>&1
		set -- $(cat "$T/fdre.out")
		kinds=$($ARGUS dump "$T/fdre" --type fd 2>/dev/null |
		    awk -v p="pid=$1" -v f="fd=$2" '$7 == p && $8 == f &&
		    $1 > 0.2 { printf "%s ", $9 }')
		[ "$2" = "${3:-}" ] && [ "$kinds" = "kind=pipe kind=unix " ] &&
			ok "kernel only: a descriptor reused before /proc is read keeps its first file" ||
			nok "kernel only: a descriptor reused before /proc is read" \
			    "pid/fd/fd $*: $kinds"
	fi
	# a yield loop keeps one sched_yield a millisecond, not a million
	# calls a second that would overrun the ring (the program on every
	# call's exit, which a kernel without rseq_update takes: lean, the
	# default keeps the yields that give the CPU away)
	if command -v python3 > /dev/null; then
		ARGUS_BPF_SKIP=rseq_update \
		    $ARGUS record -q -o "$T/yield" --backend bpf --events default -- \
		    python3 -c '
import os, time
end = time.time() + 1
while time.time() < end:
    os.sched_yield()' > /dev/null 2>&1
		ny=$($ARGUS dump "$T/yield" --type sys_enter 2>/dev/null |
		    awk '$5 == "python3" && $7 == "nr=sched_yield"' | wc -l)
		[ "$ny" -ge 50 ] && [ "$ny" -le 1100 ] &&
			ok "a yield loop keeps one sched_yield a millisecond" ||
			nok "a yield loop keeps one sched_yield a millisecond" \
			    "$ny kept in 1 s"
	fi
	# the next recorder removes the dead one's tracefs instance
	$ARGUS record -q -o "$T/bk2" --events sched --duration 0.2
	[ ! -d "/sys/kernel/tracing/instances/argus-$kp" ] &&
		ok "instance of a killed recorder removed" ||
		nok "instance of a killed recorder removed"
fi
if [ -n "${ARGUS_BACKEND:-}" ]; then
	:
elif $ARGUS record --backend bogus -q -o "$T/bb" 2> "$T/bb.err"; then
	nok "unknown backend refused"
else
	[ "$(wc -l < "$T/bb.err")" = 1 ] && ok "unknown backend refused" ||
		nok "unknown backend refused" "$(cat "$T/bb.err")"
fi

# Descriptor identity: a pty's two ends are ttys; stdin and stdout pipes
# of two programs share one inode. Each end blocks once (a descriptor is
# seen where a call on it blocks, whatever the set records of the calls
# that do not).
if command -v python3 > /dev/null; then
	$ARGUS record -q -o "$T/tty" --events default -- python3 -c '
import os, threading, time
m, s = os.openpty()
def other():
    time.sleep(0.2)
    os.write(s, b"x")
    time.sleep(0.2)
    os.write(m, b"y\n")
threading.Thread(target=other).start()
os.read(m, 1)
os.read(s, 2)
time.sleep(0.3)'
	$ARGUS dump "$T/tty" --type fd 2>/dev/null > "$T/tty.txt"
	nt=$(grep -E 'desc="/dev/(ptmx|pts/[0-9]+)"' "$T/tty.txt" | grep -c 'kind=tty')
	nf=$(grep -E 'desc="/dev/(ptmx|pts/[0-9]+)"' "$T/tty.txt" | grep -vc 'kind=tty')
	[ "$nt" -ge 2 ] && [ "$nf" = 0 ] && ok "pty ends are ttys" ||
		nok "pty ends are ttys" "$nt tty, $nf other: $(head -3 "$T/tty.txt")"
fi
$ARGUS record -q -o "$T/pipe" --events default -- sh -c \
    'sh -c "head -c 200000 /dev/zero; sleep 0.4" |
    sh -c "sleep 0.3; cat > /dev/null; sleep 0.2"'
$ARGUS dump "$T/pipe" --type fd 2>/dev/null > "$T/pipe.txt"
w=$(awk '$8 == "fd=1" && $9 == "kind=pipe" { print $10 }' "$T/pipe.txt" | sort -u)
r=$(awk '$8 == "fd=0" && $9 == "kind=pipe" { print $10 }' "$T/pipe.txt" | sort -u)
c=$(printf '%s\n%s\n' "$w" "$r" | sort | uniq -d | grep -c .)
[ "$c" -ge 1 ] && ok "stdin and stdout pipes" ||
	nok "stdin and stdout pipes" "writers: $w readers: $r"

# Thread names: children that rename themselves keep their new names
# (an older fork decoded after the rename must not undo it), and the
# command is not named after argus.
$ARGUS record -q -o "$T/nm" --events sched -- sh -c '
echo $$ > "$0"
for i in 1 2 3 4 5 6; do
	sh -c "echo rfkid$i > /proc/self/comm; sleep 0.2" &
done
wait' "$T/nm.pid"
$ARGUS info --threads "$T/nm" 2>/dev/null > "$T/nm.txt"
k=$(awk '$2 ~ /^rfkid[1-6]$/ && $3 !~ /^[0-9]+$/ { print $2 }' "$T/nm.txt" | sort -u | wc -l)
m=$(awk -v p="$(cat "$T/nm.pid")" '$1 == p && $3 !~ /^[0-9]+$/ { print $2 }' "$T/nm.txt")
[ "$k" = 6 ] && [ "$m" = sh ] && ok "names of renamed children" ||
	nok "names of renamed children" "$k renamed, command named '$m'"

# softirq raises are in the default set; timer kinds are hr (1) or list (0).
$ARGUS record -q -o "$T/sr" --events default --duration 1
nr=$($ARGUS dump "$T/sr" --type softirq_raise 2>/dev/null | grep -c .)
nk=$($ARGUS dump "$T/sr" --type timer_start 2>/dev/null | grep -vEc 'kind=[01] ')
[ "$nr" -gt 0 ] && [ "$nk" = 0 ] && ok "softirq raises and timer kinds" ||
	nok "softirq raises and timer kinds" "$nr raises, $nk bad kinds"

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
if $ARGUS stop -o "$D" && gone "$pid"; then
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

# A daemon killed by SIGKILL: status says it died, with its pid, and
# gives no rate.
if $ARGUS start -q -o "$T/k9" --events sched > /dev/null 2>&1; then
	kp=$(cat "$T/k9/argus.pid")
	kill -KILL "$kp"
	i=0
	while [ $i -lt 50 ] && ! gone "$kp"; do sleep 0.1; i=$((i + 1)); done
	$ARGUS status -o "$T/k9" > "$T/st" 2>&1
	if grep -q "^recorder: *not running: pid $kp died without stopping" "$T/st" &&
	    ! grep -q 'events/s' "$T/st"; then
		ok "status of a killed daemon"
	else
		nok "status of a killed daemon" "$(head -n 3 "$T/st")"
	fi
else
	nok "status of a killed daemon" "start failed"
fi

# Stopping while a program's libargus holds the marker open: tracing_on
# goes to 0 and the path file goes, libargus lets go, the instance goes.
L=$B/libargus.so
if [ -x "$H" ] && [ -f "$L" ] && $ARGUS start -q -o "$T/held" --events sched > /dev/null 2>&1; then
	hpid=$(cat "$T/held/argus.pid")
	LD_PRELOAD=$L ARGUS_HANG_MS=200 "$H" sleep 6000 > /dev/null &
	sp=$!
	i=0
	while [ $i -lt 30 ] && ! ls -l /proc/$sp/fd 2>/dev/null | grep -q trace_marker_raw; do
		sleep 0.1
		i=$((i + 1))
	done
	ls -l /proc/$sp/fd 2>/dev/null | grep -q trace_marker_raw && held=1 || held=0
	$ARGUS stop -o "$T/held" > /dev/null 2>&1
	src=$?
	if [ "$held" = 1 ] && [ "$src" = 0 ] &&
	    [ ! -d "/sys/kernel/tracing/instances/argus-$hpid" ]; then
		ok "stop while libargus holds the marker"
	else
		nok "stop while libargus holds the marker" "held $held, stop $src"
	fi
	kill $sp 2>/dev/null
	wait $sp 2>/dev/null
fi
exit 0
