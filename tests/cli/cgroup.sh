#!/bin/sh
# needs: kernel tracing
# Recorders scoped to a cgroup v2 subtree (argus record --cgroup, needs
# root and the BPF backend): a cgroup made for the test with a child
# cgroup, a busy shell in each and one outside. The trace holds the events
# and the thread table of the two inside, not those of the one outside.
# With --netns too, a task has to be inside both: the same cgroup's
# shells in the machine's namespace are left out, one in a namespace of
# its own kept. Also the errors: a path that does not exist, a directory
# that is not a cgroup, a file, a symbolic link, tracefs.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
T=$(mktemp -d /tmp/argus-cgroup-XXXXXX)
NS=argus-cgns-$$
CG=""
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2> /dev/null; done
	if [ -n "$CG" ] && [ -d "$CG" ]; then
		# the shells' children (sleep) too, then the directories
		for f in "$CG/sub/cgroup.kill" "$CG/cgroup.kill"; do
			[ -e "$f" ] && echo 1 > "$f" 2> /dev/null
		done
		i=0
		while [ $i -lt 50 ] && ! rmdir "$CG/sub" "$CG" 2> /dev/null; do
			sleep 0.1
			i=$((i + 1))
		done
	fi
	ip netns del "$NS" 2> /dev/null
	rm -rf "$T"
}
trap cleanup EXIT

SUITE=cgroup
. tests/lib.sh

needs root

# the cgroup v2 hierarchy: /sys/fs/cgroup, or /sys/fs/cgroup/unified on
# a hybrid system
ROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)

check_err "--cgroup of nothing" 2 $ARGUS record -o "$T/x" \
    --cgroup /sys/fs/cgroup/argus-none-$$ -- true
check_err "--cgroup of a directory that is not one" 2 $ARGUS record \
    -o "$T/x" --cgroup /etc -- true
check_err "--cgroup of a file" 2 $ARGUS record -o "$T/x" \
    --cgroup /etc/hostname -- true
if [ -n "$ROOT" ]; then
	ln -s "$ROOT" "$T/link"
	check_err "--cgroup of a symbolic link" 2 $ARGUS record -o "$T/x" \
	    --cgroup "$T/link" -- true
	check_err "--cgroup with tracefs" 2 $ARGUS record -o "$T/x" \
	    --backend tracefs --cgroup "$ROOT" -- true
fi
[ -e "$T/x" ] && nok "usage errors create nothing" || ok "usage errors create nothing"
needs bpf
if [ -z "$ROOT" ]; then
	echo "ok $SUITE: skipped (no cgroup2 mounted)"
	exit 0
fi
if ! mkdir "$ROOT/argus-test-$$" 2> "$T/mk.err"; then
	echo "ok $SUITE: skipped (cannot make a cgroup in $ROOT: $(head -c 200 "$T/mk.err"))"
	exit 0
fi
CG=$ROOT/argus-test-$$
mkdir "$CG/sub"

# busy PATH: a shell that moves itself into cgroup PATH and runs short
# sleeps until killed (its pid in $!)
busy() {
	sh -c 'echo $$ > "$1/cgroup.procs" && exec sh -c "while :; do sleep 0.02; done"' \
	    sh "$1" &
}
busy "$CG"
IN=$!
busy "$CG/sub"
SUB=$!
sh -c 'while :; do sleep 0.02; done' &
OUT=$!
PIDS="$IN $SUB $OUT"
# until each is where it goes
i=0
while { ! grep -qx "$IN" "$CG/cgroup.procs" ||
    ! grep -qx "$SUB" "$CG/sub/cgroup.procs"; } && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done

$ARGUS record -q -o "$T/t" --cgroup "$CG" --no-instrument --backend bpf \
    --duration 2 > "$T/out" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	nok "a recorder scoped to a cgroup" "status $rc" "$(head -5 "$T/out")"
	exit 0
fi
n_in=$($ARGUS dump --pid "$IN" "$T/t" | wc -l)
n_sub=$($ARGUS dump --pid "$SUB" "$T/t" | wc -l)
n_out=$($ARGUS dump --pid "$OUT" "$T/t" | wc -l)
if [ "$n_in" -gt 10 ] && [ "$n_sub" -gt 10 ] && [ "$n_out" -eq 0 ]; then
	ok "the cgroup's events and its child's, not those outside ($n_in, $n_sub, $n_out)"
else
	nok "scoped events" "in the cgroup: $n_in, below it: $n_sub, outside: $n_out"
fi
pids() { $ARGUS info "$1" | awk '/^processes:/ { p = 1; next } p && $1 ~ /^[0-9]+$/ { print $1 }'; }
pids "$T/t" > "$T/pids"
if grep -qx "$IN" "$T/pids" && grep -qx "$SUB" "$T/pids" &&
    ! grep -qx "$OUT" "$T/pids"; then
	ok "the thread table: the cgroup's processes, not the one outside"
else
	nok "thread table" "in $IN, below $SUB, outside $OUT" \
	    "$(tr '\n' ' ' < "$T/pids" | head -c 400)"
fi
# both scopes: the tasks inside both
if ! command -v ip > /dev/null || ! ip netns add "$NS" 2> /dev/null; then
	echo "skip $SUITE: --cgroup with --netns (no network namespaces)"
	exit 0
fi
# (ip netns exec mounts a /sys of its own: moved from here; ip execs sh)
ip netns exec "$NS" sh -c 'while :; do sleep 0.02; done' &
NSIN=$!
PIDS="$PIDS $NSIN"
echo "$NSIN" > "$CG/cgroup.procs"
i=0
while ! grep -qx "$NSIN" "$CG/cgroup.procs" && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
$ARGUS record -q -o "$T/b" --cgroup "$CG" --netns "$NS" --no-instrument \
    --backend bpf --duration 2 > "$T/out" 2>&1
rc=$?
n_ns=$($ARGUS dump --pid "$NSIN" "$T/b" 2> /dev/null | wc -l)
n_in=$($ARGUS dump --pid "$IN" "$T/b" 2> /dev/null | wc -l)
n_out=$($ARGUS dump --pid "$OUT" "$T/b" 2> /dev/null | wc -l)
if [ $rc -eq 0 ] && [ "$n_ns" -gt 10 ] && [ "$n_in" -eq 0 ] &&
    [ "$n_out" -eq 0 ]; then
	ok "--cgroup with --netns: the tasks inside both ($n_ns, $n_in, $n_out)"
else
	nok "--cgroup with --netns" "status $rc" \
	    "inside both: $n_ns, the cgroup's in another namespace: $n_in, outside: $n_out" \
	    "$(head -3 "$T/out")"
fi
exit 0
