#!/bin/sh
# needs: kernel tracing
# The identity of UDP datagrams in a BPF recording (needs root): a network
# namespace joined to this one by a veth pair stands for another host; a
# client here exchanges pings with a server there (tests/cli/udpping.py:
# the client's socket connected, the server's unconnected for its first
# ping, then connected). A connected socket is named by a sock_addr
# record of protocol 17 (the two ends mirror each other); every datagram
# a connected socket sent (argus record --net) carries as its sixth
# field the hash of its first 16 bytes (32 bits of FNV-1a), which its
# receive carries on the other side, whichever call sent or took it
# (send, sendmsg, recv, recvfrom, recvmsg); argus info then finds the
# offset of a copy of the trace shifted 2.5 s. The unconnected socket's
# first answer (sendto) is not kept by --net: its peer is not known.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
T=$(mktemp -d /tmp/argus-udpid-XXXXXX)
NS=argus-udpid-$$
VH=auid$$h
cleanup() {
	ip link del "$VH" 2> /dev/null
	ip netns del "$NS" 2> /dev/null
	rm -rf "$T"
}
trap cleanup EXIT

SUITE=udpid
. tests/lib.sh

needs root bpf ip python3
k=$(( ($$ % 60) * 4 ))
A=198.51.100.$((k + 1)) Z=198.51.100.$((k + 2))
if ! veth_netns "$NS" "$VH" "$A" "$Z" 2> "$T/ns.err"; then
	echo "ok udpid: skipped (no network namespace: $(head -c 200 "$T/ns.err"))"
	exit 0
fi
UP=$(pwd)/tests/cli/udpping.py
PORT=$((20000 + $$ % 20000))
N=8
# exchange DIR [OPTION]: the pings and pongs, recorded into DIR
exchange() {
	$ARGUS record -q -o "$1" --backend bpf --no-instrument ${2:-} -- sh -c "
	    ip netns exec $NS python3 $UP server $Z $PORT $N &
	    python3 $UP client $Z $PORT $N; wait" > "$T/rec.out" 2>&1
}
# the hash of a ping's first 16 bytes, as the recorder makes it
fnv() {
	python3 -c 'import sys
h = 2166136261
for c in (sys.argv[1].encode() + bytes(16))[:16]:
    h = ((h ^ c) * 16777619) & 0xffffffff
print(h or 1)' "$1"
}
exchange "$T/n"
rc=$?
$ARGUS dump --type sock_send,sock_recv "$T/n" | grep "python3" |
    grep "protocol=17" > "$T/dn"
h0=$(fnv "ping000-00000000")
h1=$(fnv "ping001-00007919")
if [ $rc -eq 0 ] && ! grep -q ' sock_send ' "$T/dn" &&
    grep -q " sock_recv .* seq=$h0\$" "$T/dn" &&
    grep -q " sock_recv .* seq=$h1\$" "$T/dn"; then
	ok "without --net: the receives with the hash of their first bytes, no send"
else
	nok "without --net" "status $rc, want $h0 and $h1" "$(head -4 "$T/dn")"
fi
exchange "$T/t" --net
rc=$?
if [ $rc -ne 0 ]; then
	nok "recording the exchange" "status $rc" "$(head -c 300 "$T/rec.out")"
	exit 0
fi
$ARGUS dump --type sock_addr,sock_send,sock_recv "$T/t" |
    grep "python3" | grep "protocol=17" > "$T/d"
cl=$(grep "sock_addr.*tuple=\"$A:[0-9]* $Z:$PORT\"" "$T/d" | head -1)
sv=$(grep "sock_addr.*tuple=\"$Z:$PORT $A:[0-9]*\"" "$T/d" | head -1)
cport=$(echo "$cl" | sed -n "s/.*tuple=\"$A:\([0-9]*\) .*/\1/p")
if [ -n "$cl" ] && [ -n "$sv" ] && [ -n "$cport" ] &&
    echo "$sv" | grep -q "tuple=\"$Z:$PORT $A:$cport\""; then
	ok "sock_addr of UDP: the two connected ends mirror each other"
else
	nok "sock_addr of UDP" "$(grep sock_addr "$T/d" | head -4)"
fi
sk_of() { echo "$1" | sed -n 's/.* sk=\(0x[0-9a-f]*\) .*/\1/p'; }
hashes() {	# TYPE [SK]: the sixth fields of one end's (or all) TYPE
	grep " $1 *sk=${2:-}" "$T/d" | sed -n 's/.* seq=\([0-9]*\)$/\1/p' |
	    grep -v '^0$' | sort -u
}
csk=$(sk_of "$cl")
hashes sock_send "$csk" > "$T/c.send"
hashes sock_recv > "$T/all.recv"
hashes sock_send > "$T/all.send"
common=$(comm -12 "$T/c.send" "$T/all.recv" | wc -l)
back=$(comm -12 "$T/all.send" "$T/all.recv" | grep -vxf "$T/c.send" | wc -l)
if [ "$(wc -l < "$T/c.send")" -eq $N ] && [ "$common" -eq $N ] &&
    grep -qx "$h0" "$T/c.send" && grep -qx "$h1" "$T/c.send" &&
    [ "$back" -ge $((N - 1)) ]; then
	ok "every ping sent carries the hash its receive carries, and the pongs after connect ($common, $back)"
else
	nok "datagrams paired by hash" "client sends $(tr '\n' ' ' < "$T/c.send")" \
	    "receives $(tr '\n' ' ' < "$T/all.recv")" "pongs paired $back"
fi
# the server's first answer (sendto, unconnected) is not kept, the
# others (send, connected) are
hashes sock_send "$(sk_of "$sv")" > "$T/s.send"
if [ "$(wc -l < "$T/s.send")" -eq $((N - 1)) ] &&
    ! grep -qx "$(fnv pong000-00000000)" "$T/s.send" &&
    grep -qx "$(fnv pong001-00007919)" "$T/s.send"; then
	ok "--net: no send of an unconnected socket, those once connected"
else
	nok "--net: the server's sends" "$(tr '\n' ' ' < "$T/s.send")"
fi
"$B/tests/tools/shift-trace" "$T/t" "$T/ahead" 2500000000 > /dev/null
$ARGUS info "$T/t" "$T/ahead" > "$T/info" 2>&1
rc=$?
off=$(sed -n "s|^  $T/ahead: +\([0-9.]*\) s\( ± [^(]*\)\{0,1\} (.*; \([0-9]*\) messages to it, \([0-9]*\) from it)\$|\1 \3 \4|p" "$T/info")
set -- $off
if [ $rc -eq 0 ] && [ $# -eq 3 ] && [ "$2" -ge $((2 * N - 1)) ] &&
    [ "$3" -ge $((2 * N - 1)) ] &&
    awk -v o="$1" 'BEGIN { d = o - 2.5; exit !(d < 0.001 && d > -0.001) }'; then
	ok "info: the clock 2.5 s ahead found from datagrams within 1 ms ($1 s, $2 and $3 messages)"
else
	nok "info: the clock offset from datagrams" "status $rc" "$(tail -3 "$T/info")"
fi
exit 0
