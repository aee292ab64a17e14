#!/bin/sh
# needs: kernel tracing
# debug-stacks.sh: the stacks in the node pane of argus debug, in a
# detached tmux at 120x50 on a kernel-only BPF recording of
# tests/progs/stack-wait (its main thread blocks 1.7 s in
# wait_for_reply(); the thread it waits for computes in compute_reply(),
# then writes). On the hung vertex the pane shows the diagnosis' stacks
# by role: the hang's where it waited (wait_for_reply), its waker's, the
# culprit's samples (compute_reply). `w` steps to the waker's vertex,
# which shows its samples and the stack it took waking the hung thread;
# `x` then `>` go to the hung thread's vertex after the wait, which
# shows who woke it and where it waited. Every frame of the program's own
# functions is named, none a bare address. Then, on a recording of
# `stack-busy kernel`, the kernel stack of a culprit's samples. Needs
# root and tmux. About 15 s.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
case $ARGUS in /*) ;; *) ARGUS=$(pwd)/$ARGUS ;; esac
T=$(mktemp -d /tmp/argus-dstacks-XXXXXX)

SUITE=debug-stacks
. tests/lib.sh
tmux_sandbox
need_tmux || exit 0
skip_if_wedged "the stack-wait recording" && exit 0
needs root bpf

P=$B/tests/progs/stack-wait
if ! timeout 60 "$ARGUS" record -q -o "$T/t" --backend bpf --no-instrument \
    -- "$P" >"$T/rec.log" 2>&1; then
	nok "stack-wait recording" "$(tail -n 5 "$T/rec.log")"
	exit 0
fi
# the hung thread and its waker (the culprit), from the diagnosis; the
# waker's stack is missing only when the recorder lost events (an
# overloaded machine): its checks are skipped then, and fail otherwise
"$ARGUS" diagnose --comm stack-wait "$T/t" >"$T/diag" 2>&1
sed -n '1,/^hang 2:/p' "$T/diag" >"$T/diag1"
hung=$(sed -n '1s/^hang 1: stack-wait (\([0-9]*\)) blocked .*/\1/p' "$T/diag1")
waker=$(sed -n 's/^    1\. stack-wait (\([0-9]*\), pid .*/\1/p' "$T/diag1" | head -n 1)
if [ -z "$hung" ] || [ -z "$waker" ]; then
	nok "the recording has a blocked hang and its waker" "$(head -n 12 "$T/diag")"
	exit 0
fi
wstk=""
grep -q "^  stack of its waker stack-wait ($waker) " "$T/diag1" && wstk=1
lost=$("$ARGUS" info --events "$T/t" 2>/dev/null | sed -n 's/^lost: *\([0-9]*\).*/\1/p')
if [ -z "$wstk" ] && [ "${lost:-0}" = 0 ]; then
	nok "the recorder lost nothing, so the waker's stack is there" \
	    "$(grep '^  stack' "$T/diag1")"
	wstk=1
fi
skip() { echo "ok debug-stacks: $1 # SKIP the recorder lost $lost events"; }

# node: the node pane (the left half, from its title on)
node() { screen | sed -n '/^ *\(>\)\{0,1\}\(Spinning node\|Vertex (x\)/,/^ *>\{0,1\}Candidates/p' | cut -c1-60 | sed 's/ *$//'; }
# node_has PATTERN...: every pattern matches a line of the node pane.
node_has() {
	_s=$(node)
	for _p in "$@"; do
		printf '%s\n' "$_s" | grep -Eq -- "$_p" || return 1
	done
	return 0
}
# section LABEL: the rows of the stack whose label matches LABEL (grep
# -E), the label first.
section() { node | sed -n "/$1/,\$p" | sed -n '1p;2,${/^  #/!q;p;}'; }
# bare LABEL: its frames that are addresses where a name was expected
# (the program and the C library both have symbols; the vDSO would not).
bare() { section "$1" | grep -E '^  #[0-9]+ 0x[0-9a-f]+$'; }

debug_start 120 50 "" "" --comm stack-wait "$T/t"
if ! wait_for 'Spinning node' 20; then
	nok "argus debug opens the recording" "$(screen)"
	exit 0
fi

# the hung vertex: the diagnosis' stacks, by role
if node_has '^hang, where it waited at ' '^  #[0-9]+ wait_for_reply\+0x' \
    "^culprit 1 stack-wait:$waker, running, sample [0-9]+/[0-9]+ " &&
    [ -z "$(bare '^hang, where it waited')" ]; then
	ok "the hung vertex: where it waited (wait_for_reply), the culprit's samples"
else
	nok "the hung vertex's stacks" "$(node)"
fi
if [ -z "$wstk" ]; then
	skip "the hung vertex: its waker's stack"
elif node_has "^its waker stack-wait:$waker, waking at "; then
	ok "the hung vertex: its waker's stack"
else
	nok "the hung vertex: its waker's stack" "$(node)"
fi
# wait_for_reply is the hang's frame, not another's
if section '^hang, where it waited' | grep -q '^  #[0-9]* wait_for_reply+0x'; then
	ok "wait_for_reply under the hang's label"
else
	nok "wait_for_reply under the hang's label" "$(node)"
fi

# w: the waker's vertex, with its samples and the stack it took waking
# the hung thread
keys w
if wait_for '^ *>?Vertex \(x: spinning node\)' 5 &&
    wait_for "stack-wait:$waker \\| vertex" 2 &&
    node_has "^running, sample [0-9]+/[0-9]+ here" \
    '^  #[0-9]+ compute_reply[.a-z0-9]*\+0x'; then
	ok "w: the waker's vertex shows its samples in compute_reply"
else
	nok "w: the waker's vertex" "$(node)" "$(status_line)"
fi
# its stack waking the hung thread, first (after the title and the
# header: the vertex, its time, its edges), its frames named
if [ -z "$wstk" ]; then
	skip "w: the waker's stack waking the hang"
elif node | sed -n 6p | grep -q "^waking stack-wait:$hung at " &&
    section "^waking stack-wait:$hung at " | sed -n 2p | grep -Eq '^  #0 [^ ]+$' &&
    [ -z "$(bare "^waking stack-wait:$hung at ")" ]; then
	ok "w: the waker's stack waking the hang, first"
else
	nok "w: the waker's stack waking the hang" "$(node)"
fi

# x then >: the hung thread's vertex after its wait: who woke it, and
# where it waited
keys x
wait_for '^ *>?Spinning node' 5
keys '>'
if wait_for '^ *>?Vertex \(x: spinning node\)' 5 &&
    wait_for "stack-wait:$hung \\| vertex" 2 &&
    section '^where it waited, returned at ' | grep -q '^  #[0-9]* wait_for_reply+0x'; then
	ok "the hung thread's next vertex: where it waited"
else
	nok "the hung thread's next vertex" "$(node)" "$(status_line)"
fi
if [ -z "$wstk" ]; then
	skip "the hung thread's next vertex: woken by its waker"
elif section "^woken by stack-wait:$waker at " | sed -n 2p | grep -Eq '^  #0 [^ ]+$'; then
	ok "the hung thread's next vertex: woken by its waker, with its stack"
else
	nok "the hung thread's next vertex: woken by its waker" "$(node)"
fi

# x: back to the spinning node, its stacks again
keys x
if wait_for '^ *>?Spinning node' 5 && node_has '^hang, where it waited at '; then
	ok "x: the spinning node's stacks again"
else
	nok "x: the spinning node" "$(node)"
fi
keys q

# A culprit busy in the kernel (`stack-busy kernel`: getrandom(2) in
# compute_in_kernel()): the node pane, alone (Tab, z), shows under the
# kernel stacks where the samples of the culprit's place found it in the
# kernel; `w`, the culprit's vertex, the same among its samples' places.
P=$B/tests/progs/stack-busy
if ! timeout 60 "$ARGUS" record -q -o "$T/k" --backend bpf --no-instrument \
    -- "$P" kernel >"$T/reck.log" 2>&1; then
	nok "stack-busy kernel recording" "$(tail -n 5 "$T/reck.log")"
	exit 0
fi
# kernel LABEL: the stack whose label matches LABEL (grep -E and sed
# alike, no slash) names the kernel's getrandom
kernel() { section "$1" | grep -Eq '^  #[0-9]+ [a-z_0-9]*get_?random'; }
debug_start 120 50 "" "" --comm stack-busy "$T/k"
if ! wait_for 'Spinning node' 20; then
	nok "argus debug opens the stack-busy kernel recording" "$(screen)"
	exit 0
fi
keys Tab
keys z
_l='^culprit 1 stack-busy:[0-9]*, running in the kernel, sample [0-9]'
if wait_for "$_l" 5 && kernel "$_l"; then
	ok "a culprit busy in the kernel: its kernel stack names getrandom"
else
	nok "a culprit busy in the kernel: its kernel stack" "$(node)"
fi
keys w
_l='^running in the kernel, sample [0-9]*.[0-9]* here'
if wait_for '^ *>?Vertex \(x: spinning node\)' 5 && wait_for "$_l" 2 &&
    kernel "$_l"; then
	ok "w: the culprit's vertex: its samples' kernel stack"
else
	nok "w: the culprit's vertex: its samples' kernel stack" "$(node)"
fi
keys q
