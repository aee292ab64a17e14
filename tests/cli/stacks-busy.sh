#!/bin/sh
# needs: kernel tracing
# The stacks of a hang whose culprit computes, in a kernel-only BPF
# recording (needs root): tests/progs/stack-busy, and stack-busy-go (its
# Go twin, when go is installed), block in wait_for_reply() while a
# worker computes for about 1.5 s in compute_hard() without blocking,
# then replies in send_reply(). diagnose --json must give, in the hang's
# "stacks", the hung thread's stack (role "hang"), a sample of the busy
# culprit (role "culprit") and the waker's stack at the wake-up (role
# "waker"), each naming its function; the text names the busy one. A
# worker busy in the kernel (`stack-busy kernel`) gets its kernel stack
# shown too. With
# the sampler refused by the kernel (ARGUS_BPF_REFUSE), the recording
# goes on without samples, and says so once.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
T=$(mktemp -d /tmp/argus-stacks-busy-XXXXXX)
trap 'rm -rf "$T"' EXIT

SUITE=stacks-busy
. tests/lib.sh

needs root bpf jq

# names J ROLE FUNC: a stack of role ROLE in the hang of the main thread
# (both programs' hung one) in the diagnosis J has a frame in FUNC, or in
# a copy the compiler made of it (FUNC.isra.0, FUNC.constprop.0)
names() {
	jq -e --arg r "$2" --arg f "$3" '[.hangs[] |
	    select(.thread.tid == .thread.pid) | .stacks[]? |
	    select(.role == $r) | .symbols // [] | .[] |
	    select(. != null and (startswith($f + "+") or
	    startswith($f + ".")))] | length > 0' "$1" > /dev/null
}

# stacks J: the stacks of the hangs of the diagnosis J, one line each,
# trimmed
stacks() {
	jq -c '.hangs[] | {hang: .thread.tid, stacks: [.stacks[]? | {role,
	    culprit, tid, kind, symbols: ((.symbols // [])[:5])}]}' "$1" \
	    2>&1 | head -n 6 | sed '2,$s/^/  /'
}

# role_names COMM ROLE FUNC: the check of names() on COMM's diagnosis (a
# waker's stack or a sample may be missing only when the recorder lost
# events, on an overloaded machine: skipped then)
role_names() {
	if names "$T/$1.json" "$2" "$3"; then
		ok "$1: the $2 stack names $3"
	elif [ "$2" != hang ] && [ "$(lost "$T/$1")" != 0 ]; then
		ok "$1: the $2 stack names $3 # SKIP the recorder lost $(lost "$T/$1") events"
	else
		nok "$1: the $2 stack names $3" "$(stacks "$T/$1.json")"
	fi
}

# lost TRACE: the events the recorder lost
lost() {
	_l=$($ARGUS info --events "$1" 2>/dev/null |
	    sed -n 's/^lost: *\([0-9]*\).*/\1/p')
	echo "${_l:-0}"
}

# check_prog PROG COMM WAIT BUSY REPLY: record PROG (its threads named
# COMM) and check the stacks of its hang
check_prog() {
	_p=$1 _c=$2 _busy=$4
	$ARGUS record -q -o "$T/$_c" --backend bpf --no-instrument -- "$_p" \
	    > "$T/$_c.out" 2>&1
	_rc=$?
	if [ $_rc -ne 0 ] || ! grep -q '^replied' "$T/$_c.out"; then
		nok "$_c: recorded" "status $_rc" "$(tail -n 3 "$T/$_c.out")"
		return
	fi
	$ARGUS diagnose --json --comm "$_c" "$T/$_c" > "$T/$_c.json" \
	    2> "$T/$_c.err"
	_rc=$?
	if [ $_rc -ne 0 ] || ! jq -e '.hangs | length > 0' "$T/$_c.json" \
	    > /dev/null 2>&1; then
		nok "$_c: a hang" "status $_rc" "$(head -n 3 "$T/$_c.err")"
		return
	fi
	role_names "$_c" hang "$3"
	role_names "$_c" culprit "$4"
	role_names "$_c" waker "$5"
	$ARGUS diagnose --comm "$_c" "$T/$_c" > "$T/$_c.txt" 2>&1
	if grep -q "$_busy+0x" "$T/$_c.txt"; then
		ok "$_c: text names $_busy"
	else
		nok "$_c: text names $_busy" "$(grep -m 6 'stack\|culprit' \
		    "$T/$_c.txt")"
	fi
}

# check_refused WHAT: with the kernel made to refuse WHAT of the sampler
# (ARGUS_BPF_REFUSE: its program, or its perf events), stack-busy still
# records, with one warning that samples are off; its hang and the stack
# it waited with are there, and no sample (the verifier's log, which the
# warning names, in T)
check_refused() {
	_c=refused-$1
	TMPDIR=$T ARGUS_BPF_REFUSE=$1 $ARGUS record -q -o "$T/$_c" --backend bpf \
	    --no-instrument -- "$B/tests/progs/stack-busy" > "$T/$_c.out" \
	    2> "$T/$_c.err"
	_rc=$?
	_w=$(grep -c 'warning: samples of busy threads are off' "$T/$_c.err")
	if [ $_rc -ne 0 ] || ! grep -q '^replied' "$T/$_c.out"; then
		nok "$_c: recorded" "status $_rc" "$(tail -n 3 "$T/$_c.err")"
		return
	fi
	[ "$_w" = 1 ] && ok "$_c: one warning that samples are off" ||
		nok "$_c: one warning that samples are off" \
		"$(cat "$T/$_c.err")"
	$ARGUS diagnose --json --comm stack-busy "$T/$_c" > "$T/$_c.json" \
	    2>&1
	role_names "$_c" hang wait_for_reply
	_n=$($ARGUS dump --type stack "$T/$_c" 2>&1 | grep -c 'kind=sample')
	[ "$_n" = 0 ] && ok "$_c: no sample" ||
		nok "$_c: no sample" "$_n samples"
}

# check_kernel: `stack-busy kernel`, whose worker computes in the kernel
# (getrandom(2) in compute_in_kernel()): its samples come with kernel
# stacks (kind ksample in the dump), and the diagnosis shows, next to the
# culprit's sample (compute_in_kernel), the kernel stack of those samples
# (kind "ksample", as many samples as that place's at most) naming the
# kernel's getrandom, in the JSON and in the text
check_kernel() {
	_c=kernel
	$ARGUS record -q -o "$T/$_c" --backend bpf --no-instrument -- \
	    "$B/tests/progs/stack-busy" kernel > "$T/$_c.out" 2>&1
	_rc=$?
	if [ $_rc -ne 0 ] || ! grep -q '^replied' "$T/$_c.out"; then
		nok "$_c: recorded" "status $_rc" "$(tail -n 3 "$T/$_c.out")"
		return
	fi
	_n=$($ARGUS dump --type stack "$T/$_c" 2>&1 |
	    grep -c ' stack-busy .*kind=ksample frames=0xffff')
	[ "$_n" -gt 0 ] && ok "$_c: samples with kernel stacks ($_n)" ||
		nok "$_c: samples with kernel stacks" \
		"$($ARGUS dump --type stack "$T/$_c" 2>&1 | grep -m 4 stack-busy)"
	$ARGUS diagnose --json --comm stack-busy "$T/$_c" > "$T/$_c.json" \
	    2> "$T/$_c.err"
	role_names "$_c" culprit compute_in_kernel
	if jq -e '[.hangs[] | select(.thread.tid == .thread.pid) |
	    .stacks[]? | select(.role == "culprit" and .kind == "ksample"
	    and .samples > 0 and .samples <= .of) | .symbols // [] | .[] |
	    select(. != null and test("get_?random"))] | length > 0' \
	    "$T/$_c.json" > /dev/null; then
		ok "$_c: the culprit's kernel stack names getrandom"
	else
		nok "$_c: the culprit's kernel stack names getrandom" \
		    "$(stacks "$T/$_c.json")"
	fi
	$ARGUS diagnose --comm stack-busy "$T/$_c" > "$T/$_c.txt" 2>&1
	if grep -q '^  stack of culprit 1, .*(running in the kernel: [0-9]* of the [0-9]* samples there):.*get_\{0,1\}random' "$T/$_c.txt"; then
		ok "$_c: text shows the culprit's kernel stack"
	else
		nok "$_c: text shows the culprit's kernel stack" \
		    "$(grep -m 6 'stack' "$T/$_c.txt")"
	fi
}

check_prog "$B/tests/progs/stack-busy" stack-busy \
    wait_for_reply compute_hard send_reply
check_kernel
check_refused cpu_clock
check_refused perf_event
if ! command -v go > /dev/null; then
	ok "stack-busy-go # SKIP no go"
elif [ ! -x "$B/tests/progs/stack-busy-go" ]; then
	nok "stack-busy-go" "not built (make build-tests)"
else
	check_prog "$B/tests/progs/stack-busy-go" stack-busy-go \
	    main.waitForReply main.computeHard main.sendReply
	# its threads have no rseq: the stack of a long wait comes from a
	# BPF task work on its return where the kernel has one, else
	# (ARGUS_BPF_REFUSE=task_work) from the one kept at each block
	ARGUS_BPF_REFUSE=task_work $ARGUS record -q -o "$T/go-notw" \
	    --backend bpf --no-instrument -- "$B/tests/progs/stack-busy-go" \
	    > "$T/go-notw.out" 2>&1
	$ARGUS diagnose --json --comm stack-busy-go "$T/go-notw" \
	    > "$T/go-notw.json" 2>&1
	role_names go-notw hang main.waitForReply
fi
exit 0
