#!/bin/sh
# needs: kernel tracing
# The identity of TCP messages in a BPF recording (needs root): a network
# namespace joined to this one by a veth pair stands for another host; a
# client here exchanges pings with a server there. Each side's socket is
# named once by a sock_addr record ("LOCAL REMOTE", the two mirror each
# other), and every ping and pong the client or the server sent (kept by
# argus record --net, sends to another host) carries the first sequence
# number that the receive of it carries on the other side; argus info
# then finds the offset of a copy of the trace shifted 2.5 s, as another
# host's clock (tests/tools/shift-trace), and the drift of a copy whose
# clock also runs fast. Over ::1 (one host), sends are left out and
# receives still carry their sequence.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
T=$(mktemp -d /tmp/argus-msgid-XXXXXX)
NS=argus-msgid-$$
VH=amid$$h
cleanup() {
	ip link del "$VH" 2> /dev/null
	ip netns del "$NS" 2> /dev/null
	rm -rf "$T"
}
trap cleanup EXIT
[ -n "${MSGID_KEEP:-}" ] && trap "ip link del $VH 2>/dev/null; ip netns del $NS 2>/dev/null; cp -r $T/t $MSGID_KEEP; rm -rf $T" EXIT

SUITE=msgid
. tests/lib.sh

needs root bpf ip python3
# addresses of a test network nobody routes (RFC 5737's TEST-NET-2), a
# /30 of its own for each run
k=$(( ($$ % 60) * 4 ))
A=198.51.100.$((k + 1)) Z=198.51.100.$((k + 2))
if ! veth_netns "$NS" "$VH" "$A" "$Z" 2> "$T/ns.err"; then
	echo "ok msgid: skipped (no network namespace: $(head -c 200 "$T/ns.err"))"
	exit 0
fi
PP=$(pwd)/tests/cli/pingpong.py
PORT=$((20000 + $$ % 20000))
# exchange DIR [OPTION]: the pings and pongs, recorded into DIR
exchange() {
	$ARGUS record -q -o "$1" --backend bpf --no-instrument ${2:-} -- sh -c "
	    ip netns exec $NS python3 $PP server $Z $PORT &
	    python3 $PP client $Z $PORT 5; wait" > "$T/rec.out" 2>&1
}
# without --net: the receives and their sequence, no send
exchange "$T/n"
rc=$?
$ARGUS dump --type sock_send,sock_recv "$T/n" | grep "python3" > "$T/dn"
if [ $rc -eq 0 ] && ! grep -q ' sock_send ' "$T/dn" &&
    [ "$(grep -c ' sock_recv .* seq=[1-9]' "$T/dn")" -ge 10 ]; then
	ok "without --net: the receives with their sequence, no send"
else
	nok "without --net" "status $rc" "$(head -4 "$T/dn")"
fi
exchange "$T/t" --net
rc=$?
if [ $rc -ne 0 ]; then
	nok "recording the exchange" "status $rc" "$(head -c 300 "$T/rec.out")"
	exit 1
fi
$ARGUS dump --type sock_addr,sock_send,sock_recv "$T/t" |
    grep "python3" > "$T/d"
# the sock_addr records of the two ends of the connection
cl=$(grep "sock_addr.*tuple=\"$A:[0-9]* $Z:$PORT\"" "$T/d" | head -1)
sv=$(grep "sock_addr.*tuple=\"$Z:$PORT $A:[0-9]* *\"" "$T/d" | head -1)
cport=$(echo "$cl" | sed -n "s/.*tuple=\"$A:\([0-9]*\) .*/\1/p")
if [ -n "$cl" ] && [ -n "$sv" ] && [ -n "$cport" ] &&
    echo "$sv" | grep -q "tuple=\"$Z:$PORT $A:$cport\""; then
	ok "sock_addr: the two ends of the connection mirror each other"
else
	nok "sock_addr: the two ends" "$(grep sock_addr "$T/d" | head -4)"
fi
# seq of the sends (or receives) of one end: its sk from its sock_addr
sk_of() { echo "$1" | sed -n 's/.* sk=\(0x[0-9a-f]*\) .*/\1/p'; }
seqs() {	# SK TYPE
	grep " $2 *sk=$1 " "$T/d" | grep -v ' ret=0 ' |
	    sed -n 's/.* seq=\([0-9]*\).*/\1/p' | sort -n
}
csk=$(sk_of "$cl") ssk=$(sk_of "$sv")
seqs "$csk" sock_send > "$T/c.send"
seqs "$ssk" sock_recv > "$T/s.recv"
seqs "$ssk" sock_send > "$T/s.send"
seqs "$csk" sock_recv > "$T/c.recv"
if [ "$(wc -l < "$T/c.send")" -ge 5 ] && [ "$(wc -l < "$T/s.send")" -ge 5 ] &&
    [ "$(comm -12 "$T/c.send" "$T/s.recv" | wc -l)" -ge 5 ] &&
    [ "$(comm -12 "$T/s.send" "$T/c.recv" | wc -l)" -ge 5 ]; then
	ok "every ping and pong sent carries the sequence its receive carries"
else
	nok "sends paired with receives by sequence" \
	    "client sends $(tr '\n' ' ' < "$T/c.send"); server receives $(tr '\n' ' ' < "$T/s.recv")" \
	    "server sends $(tr '\n' ' ' < "$T/s.send"); client receives $(tr '\n' ' ' < "$T/c.recv")"
fi
# the traces of two hosts whose clocks differ: the --net trace and its
# copy 2.5 s ahead (tests/tools/shift-trace); argus info finds the
# offset within a millisecond from the messages, each way
"$B/tests/tools/shift-trace" "$T/t" "$T/ahead" 2500000000 > /dev/null
$ARGUS info "$T/t" "$T/ahead" > "$T/info" 2>&1
rc=$?
off=$(sed -n "s|^  $T/ahead: +\([0-9.]*\) s ± [^(]*(.*; \([0-9]*\) messages to it, \([0-9]*\) from it)\$|\1 \2 \3|p" "$T/info")
set -- $off
if [ $rc -eq 0 ] && [ $# -eq 3 ] && [ "$2" -ge 10 ] && [ "$3" -ge 10 ] &&
    awk -v o="$1" 'BEGIN { d = o - 2.5; exit !(d < 0.001 && d > -0.001) }'; then
	ok "info: the second host's clock 2.5 s ahead, found within 1 ms ($1 s, $2 and $3 messages)"
else
	nok "info: the clock offset" "status $rc" "$(tail -3 "$T/info")"
fi
# a copy that also runs 5000 ppm fast (shift-trace --drift): the offset
# at the middle of the messages found within 0.1 ms and the drift within
# its uncertainty. The exchange spans a quarter of a second, with
# latencies and late stamps of some 10 µs: a drift is measured to a few
# hundred ppm, hence one far beyond any clock's (test-sync.c checks a
# few ppm over 100 s).
"$B/tests/tools/shift-trace" --drift 5000 "$T/t" "$T/drift" 2500000000 > /dev/null
$ARGUS info "$T/t" "$T/drift" > "$T/info" 2>&1
rc=$?
first=$(sed -n 's/^start: .*(clock \([0-9.]*\))$/\1/p' "$T/info" | head -1)
d=$(sed -n "s|^  $T/drift: +\([0-9.]*\) s ± .* at \([0-9.]*\) s of $T/t, drifting +\([0-9.]*\) ppm ± \([0-9.]*\) (.*; [0-9]* messages to it, [0-9]* from it)\$|\1 \2 \3 \4|p" "$T/info")
set -- $d
if [ $rc -eq 0 ] && [ $# -eq 4 ] && [ -n "$first" ] &&
    awk -v o="$1" -v ref="$2" -v f="$first" -v p="$3" -v u="$4" 'BEGIN {
	d = o - (2.5 + 0.005 * (ref - f)); e = p - 5000; if (e < 0) e = -e
	exit !(d < 0.0001 && d > -0.0001 && e <= u + 50 && u < 1000) }'; then
	ok "info: a clock 5000 ppm fast, its drift found ($3 ppm ± $4) and its offset ($1 s at $2 s)"
else
	nok "info: the drift" "status $rc, start $first" "$(tail -2 "$T/info")"
fi
# one host (::1), with --net: no sends kept, receives with their
# sequence, and IPv6 addresses in brackets
$ARGUS record -q -o "$T/l" --backend bpf --no-instrument --net -- \
    python3 "$PP" local 3 > "$T/rec.out" 2>&1
$ARGUS dump --type sock_addr,sock_send,sock_recv "$T/l" |
    grep "python3" > "$T/dl"
if ! grep -q ' sock_send ' "$T/dl" &&
    [ "$(grep -c ' sock_recv .* seq=[1-9]' "$T/dl")" -ge 6 ] &&
    grep -q 'sock_addr .*family=10 .*tuple="\[::1\]:[0-9]* \[::1\]:[0-9]*"' "$T/dl"; then
	ok "one host: receives with their sequence, no send kept"
else
	nok "one host (::1)" "$(head -5 "$T/dl")"
fi
# a trace with no message to or from the first: said, not aligned
$ARGUS info "$T/t" "$T/l" > "$T/info" 2>&1
if [ $? -eq 0 ] && grep -q "^  $T/l: no message pairs with it .*: not aligned\$" "$T/info"; then
	ok "info: a trace with no message pairs is not aligned"
else
	nok "info: no message pairs" "$(tail -3 "$T/info")"
fi
# --net with the tracefs backend: recorded, with a warning that says the
# messages will not pair
$ARGUS record -q -o "$T/tf" --backend tracefs --net --duration 0.5 \
    > /dev/null 2> "$T/tf.err"
rc=$?
if [ $rc -eq 0 ] && grep -q 'warning: --net: the tracefs backend records no sequence' "$T/tf.err"; then
	ok "--net with tracefs: a warning"
else
	nok "--net with tracefs" "status $rc" "$(cat "$T/tf.err")"
fi
exit 0
