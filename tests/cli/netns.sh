#!/bin/sh
# needs: kernel tracing
# Recorders scoped to a network namespace (argus record --netns, needs
# root and the BPF backend), as the hosts of a test on one machine: two
# namespaces joined by a veth pair, a client in one and a server in the
# other, each recorded by its own recorder named by --host. Each trace
# holds its own host's process and not the other's; argus info of the two
# finds their clocks (one machine's) within a millisecond of each other
# from the messages between them, each way. Also the errors: a namespace
# that does not exist, a file that is not one, tracefs, a bad host name.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
T=$(mktemp -d /tmp/argus-netns-XXXXXX)
NA=argus-nsa-$$ NB=argus-nsb-$$ V=anv$$
cleanup() {
	ip netns del "$NA" 2> /dev/null
	ip netns del "$NB" 2> /dev/null
	rm -rf "$T"
}
trap cleanup EXIT

SUITE=netns
. tests/lib.sh

needs root ip python3

check_err "--netns of nothing" 2 $ARGUS record -o "$T/x" --netns argus-none-$$ -- true
check_err "--netns of a file" 2 $ARGUS record -o "$T/x" --netns /etc/hostname -- true
check_err "--netns with tracefs" 2 $ARGUS record -o "$T/x" --backend tracefs \
    --netns /proc/self/ns/net -- true
check_err "a bad host name" 2 $ARGUS record -o "$T/x" --host "a b" -- true
[ -e "$T/x" ] && nok "usage errors create nothing" || ok "usage errors create nothing"
needs bpf

A=198.51.100.5 Z=198.51.100.6
if ! ip netns add "$NA" 2> "$T/ns.err" || ! ip netns add "$NB" ||
    ! ip link add "$V" netns "$NA" type veth peer name "${V}b" netns "$NB" ||
    ! ip -n "$NA" addr add "$A/30" dev "$V" || ! ip -n "$NA" link set "$V" up ||
    ! ip -n "$NB" addr add "$Z/30" dev "${V}b" ||
    ! ip -n "$NB" link set "${V}b" up; then
	echo "ok netns: skipped (no network namespaces: $(head -c 200 "$T/ns.err"))"
	exit 0
fi
PP=$(pwd)/tests/cli/pingpong.py
PORT=$((20000 + $$ % 20000))
# the two hosts' recorders, until the exchange is over (a file says so;
# 60 s at most)
until_done="i=0; while [ ! -e $T/done ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done"
$ARGUS record -q -o "$T/a" --netns "$NA" --host client --net --no-instrument \
    --backend bpf -- sh -c "$until_done" > "$T/a.out" 2>&1 &
ra=$!
$ARGUS record -q -o "$T/b" --netns "$NB" --host server --net --no-instrument \
    --backend bpf -- sh -c "$until_done" > "$T/b.out" 2>&1 &
rb=$!
# both record once their status files say so (30 s at most)
i=0
while { [ ! -s "$T/a/status" ] || [ ! -s "$T/b/status" ]; } && [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
ip netns exec "$NB" python3 "$PP" server "$Z" "$PORT" &
sp=$!
ip netns exec "$NA" python3 "$PP" client "$Z" "$PORT" 8 &
cp=$!
wait $cp
wait $sp
touch "$T/done"
wait $ra
rca=$?
wait $rb
rcb=$?
if [ $rca -ne 0 ] || [ $rcb -ne 0 ]; then
	nok "two scoped recorders" "status $rca and $rcb" "$(cat "$T/a.out" "$T/b.out" | head -5)"
	exit 0
fi
# each trace: its host's name, its process, not the other's (the server
# is the only python3 that listens, in b)
ha=$($ARGUS info "$T/a" | sed -n 's/^host: *\([^,]*\),.*/\1/p')
hb=$($ARGUS info "$T/b" | sed -n 's/^host: *\([^,]*\),.*/\1/p')
$ARGUS dump --pid "$sp" "$T/a" > "$T/a.sp"
$ARGUS dump --pid "$sp" "$T/b" > "$T/b.sp"
if [ "$ha" = client ] && [ "$hb" = server ] && [ ! -s "$T/a.sp" ] &&
    [ -s "$T/b.sp" ] &&
    [ "$($ARGUS dump --type sock_recv "$T/a" | grep -c python3)" -ge 8 ]; then
	ok "each host's trace: its name and its own processes only"
else
	nok "scoped traces" "hosts '$ha' '$hb'" \
	    "server events in a: $(wc -l < "$T/a.sp"), in b: $(wc -l < "$T/b.sp")"
fi
# the thread tables: each host's own process, not the other's (they
# never met: they ran in different namespaces, and a thread met in a
# switch or a wake-up would be named)
pids() { $ARGUS info "$1" | awk '/^processes:/ { p = 1; next } p && $1 ~ /^[0-9]+$/ { print $1 }'; }
pids "$T/a" > "$T/a.pids"
pids "$T/b" > "$T/b.pids"
if grep -qx "$cp" "$T/a.pids" && ! grep -qx "$sp" "$T/a.pids" &&
    grep -qx "$sp" "$T/b.pids" && ! grep -qx "$cp" "$T/b.pids"; then
	ok "each thread table: its host's process, not the other host's"
else
	nok "thread tables" "client $cp, server $sp" \
	    "a: $(tr '\n' ' ' < "$T/a.pids")" "b: $(tr '\n' ' ' < "$T/b.pids")"
fi
$ARGUS info "$T/a" "$T/b" > "$T/info" 2>&1
off=$(sed -n "s|^  $T/b: \([-+][0-9.]*\) s ± [^(]*(.*; \([0-9]*\) messages to it, \([0-9]*\) from it)\$|\1 \2 \3|p" "$T/info")
set -- $off
if [ $# -eq 3 ] && [ "$2" -ge 8 ] && [ "$3" -ge 8 ] &&
    awk -v o="$1" 'BEGIN { exit !(o < 0.001 && o > -0.001) }'; then
	ok "info: the hosts' clocks within 1 ms of each other ($1 s, $2 and $3 messages)"
else
	nok "info of two hosts" "$(tail -2 "$T/info")"
fi
exit 0
