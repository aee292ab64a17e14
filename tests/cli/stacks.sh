#!/bin/sh
# needs: kernel tracing
# Where in the code a long wait was, in a kernel-only BPF recording
# (needs root): the recorder takes the user stack of every wait of 10 ms
# or more when its call returns (argus record --stacks), and diagnose
# shows it, symbolized, for the hang: tests/progs/stack-wait blocks in
# wait_for_reply(); the thread it waits for computes, and its samples
# (a 49 Hz clock, kept for threads that ran 10 ms without blocking) name
# compute_reply(); a process it forks without exec has its stack too,
# and is written as having its parent's mappings. --stacks off takes
# none; a bad value is a usage error; the same program built without
# frame pointers gives a short stack, with the function that keeps none
# named, and no crash.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
T=$(mktemp -d /tmp/argus-stacks-XXXXXX)
trap 'rm -rf "$T"' EXIT

SUITE=stacks
. tests/lib.sh

check_err "--stacks of nothing" 2 $ARGUS record -o "$T/x" --stacks soon -- true
check_err "--stack-depth 0" 2 $ARGUS record -o "$T/x" --stack-depth 0 -- true
check_err "--stack-depth 33" 2 $ARGUS record -o "$T/x" --stack-depth 33 -- true
check_err "diagnose --stack-depth x" 2 $ARGUS diagnose --stack-depth x "$T/x"
needs root bpf
P=$B/tests/progs/stack-wait
$ARGUS record -q -o "$T/t" --backend bpf --no-instrument -- "$P" > "$T/out" 2>&1
rc=$?
$ARGUS diagnose --json --comm stack-wait "$T/t" > "$T/d.json" 2> "$T/d.err"
if [ $rc -eq 0 ] && command -v jq > /dev/null &&
    jq -e '[.hangs[] | select(.kind == "blocked") | .stacks[].symbols // [] |
    .[] | select(. != null and startswith("wait_for_reply+"))] | length > 0' \
    "$T/d.json" > /dev/null; then
	ok "the hang's stack names wait_for_reply"
elif ! command -v jq > /dev/null; then
	ok "the hang's stack # SKIP no jq"
else
	nok "the hang's stack" "status $rc" \
	    "$($ARGUS diagnose --comm stack-wait "$T/t" 2>&1 | grep -m3 'stack at')"
fi
$ARGUS diagnose --comm stack-wait "$T/t" > "$T/d.txt" 2>&1
if grep -q '^  stack at [0-9.]* s ([a-z ]*): .*wait_for_reply+0x[0-9a-f]* main+0x' "$T/d.txt" &&
    ! grep '^  stack at' "$T/d.txt" | grep -q ' 0x[0-9a-f]*\( \|$\)'; then
	ok "text: the stack symbolized, no bare address"
else
	nok "text stack" "$(grep 'stack at' "$T/d.txt")"
fi
# where it slept in the kernel: its kernel stack at the wake-up, named
# from the trace's own records of /proc/kallsyms
if command -v jq > /dev/null &&
    jq -e '[.hangs[] | select(.kind == "blocked") | .stacks[] |
    select(.role == "hang" and .kind == "kernel") | .symbols // [] | .[] |
    select(. != null and test("pipe_read\\+0x"))] | length > 0' \
    "$T/d.json" > /dev/null &&
    [ "$($ARGUS dump --type ksym "$T/t" | grep -c 'name="[a-z_]*pipe_read"')" = 1 ]; then
	ok "the kernel stack it slept on names pipe_read, written once"
else
	nok "kernel stack" "$(jq -c '.hangs[].stacks[] | select(.kind ==
	    "kernel") | .symbols' "$T/d.json" 2>&1 | head -3)" \
	    "$($ARGUS dump --type ksym "$T/t" | grep -c pipe_read)"
fi
# the busy replier shows where it ran (its samples), and the write that
# ended the wait is the waker's stack
if command -v jq > /dev/null &&
    jq -e '[.hangs[] | select(.kind == "blocked") | .stacks[] |
    select(.role == "culprit" and .kind == "sample" and .samples > 0) |
    .symbols // [] | .[] | select(. != null and
    startswith("compute_reply"))] | length > 0' "$T/d.json" > /dev/null &&
    jq -e '[.hangs[] | select(.kind == "blocked") | .stacks[] |
    select(.role == "waker" and .kind == "waker")] | length > 0' \
    "$T/d.json" > /dev/null; then
	ok "the busy culprit's samples name compute_reply; the waker's stack"
elif lost=$($ARGUS info --events "$T/t" 2>/dev/null |
    sed -n 's/^lost: *\([0-9]*\).*/\1/p') && [ "${lost:-0}" != 0 ]; then
	ok "culprit and waker stacks # SKIP the recorder lost $lost events"
else
	nok "culprit and waker stacks" "$(jq -c '.hangs[].stacks[] |
	    {role, kind, symbols}' "$T/d.json" 2>&1 | head -6)"
fi
if grep -q '^  stack of culprit 1, .* (running: [0-9]* of [0-9]* samples): compute_reply' "$T/d.txt"; then
	ok "text: the culprit's stack"
else
	nok "text: the culprit's stack" "$(grep 'stack' "$T/d.txt")"
fi
# a process forked without exec (renamed stack-child): one record says
# it has its parent's mappings, none of its own is read, and its stack
# symbolizes from its parent's
$ARGUS record -q -o "$T/f" --backend bpf --no-instrument -- "$P" fork \
    > "$T/f.out" 2>&1
rc=$?
c=$(sed -n 's/^child //p' "$T/f.out")
$ARGUS dump --type mmap "$T/f" > "$T/f.maps" 2>&1
$ARGUS diagnose --comm stack-child "$T/f" > "$T/f.txt" 2>&1
if [ $rc -eq 0 ] && [ -n "$c" ] &&
    grep -q "mmap  *pid=$c start=0x0 len=0x0 pgoff=0x0 from=[1-9]" "$T/f.maps" &&
    ! grep -q "mmap  *pid=$c start=0x[1-9a-f]" "$T/f.maps" &&
    grep -q '^  stack at [0-9.]* s ([a-z ]*): .*wait_for_reply+0x[0-9a-f]* main+0x' "$T/f.txt"; then
	ok "a forked child: its parent's mappings, its stack symbolized"
else
	nok "forked child's stack" "status $rc, child $c" \
	    "$(grep "pid=$c " "$T/f.maps" | head -3)" \
	    "$(grep -m3 'stack at' "$T/f.txt")"
fi
# a longer threshold: a busy thread still sampled, one sample per 50 ms
# of CPU rather than one a visit
$ARGUS record -q -o "$T/s50" --backend bpf --no-instrument --stacks 50 -- \
    "$P" > /dev/null 2>&1
n50=$($ARGUS dump --type stack "$T/s50" | grep -c ' stack-wait .*kind=sample')
$ARGUS diagnose --comm stack-wait "$T/s50" > "$T/s50.txt" 2>&1
if [ "$n50" -ge 10 ] && [ "$n50" -le 45 ] &&
    grep -q '^  stack of culprit 1, .* (running: [0-9]* of [0-9]* samples): compute_reply' "$T/s50.txt"; then
	ok "--stacks 50: the busy thread sampled ($n50 samples in 1.5 s)"
else
	nok "--stacks 50: samples" "$n50 samples" "$(grep -m3 stack "$T/s50.txt")"
fi
# how deep: at most 2 frames taken, 1 shown
$ARGUS record -q -o "$T/d2" --backend bpf --no-instrument --stack-depth 2 -- \
    "$P" > /dev/null 2>&1
most=$($ARGUS dump --type stack "$T/d2" | awk '$8 != "kind=kernel" {
    n = split($9, f, ","); if (n > m) m = n } END { print m + 0 }')
$ARGUS diagnose --comm stack-wait --stack-depth 1 "$T/d2" > "$T/d2.txt" 2>&1
if [ "$most" = 2 ] && grep -q '^  stack at .* (where it waited): __read+0x[0-9a-f]* \.\.\.' "$T/d2.txt"; then
	ok "--stack-depth: 2 frames taken, 1 shown"
else
	nok "--stack-depth" "at most $most frames" "$(grep -m2 'stack' "$T/d2.txt")"
fi
# the cost is bounded by the long waits: a few stacks, not one an event
ns=$($ARGUS dump --type stack "$T/t" | wc -l)
ne=$($ARGUS info "$T/t" | sed -n 's/^events: *\([0-9]*\).*/\1/p')
if [ "$ns" -ge 1 ] && [ "$((ns * 20))" -lt "${ne:-0}" ]; then
	ok "stacks only at long waits ($ns of $ne events)"
else
	nok "stacks at long waits" "$ns stacks of $ne events"
fi
$ARGUS record -q -o "$T/off" --backend bpf --no-instrument --stacks off -- \
    "$P" > /dev/null 2>&1
if [ "$($ARGUS dump --type stack "$T/off" | wc -l)" = 0 ]; then
	ok "--stacks off: none"
else
	nok "--stacks off" "$($ARGUS dump --type stack "$T/off" | head -2)"
fi
# without frame pointers: a short stack, said as it is, and no crash
if cc -O2 -fomit-frame-pointer -pthread -o "$T/nofp" tests/progs/stack-wait.c \
    2> /dev/null; then
	$ARGUS record -q -o "$T/n" --backend bpf --no-instrument -- "$T/nofp" \
	    > /dev/null 2>&1
	$ARGUS diagnose --comm nofp "$T/n" > "$T/n.txt" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && grep -q '^hang 1: nofp' "$T/n.txt" &&
	    grep -q '^  stack at .*(1 frame; the unwinding stopped at __*read, which keeps no frame pointer)' \
	    "$T/n.txt"; then
		ok "no frame pointers: the hang, its stack as deep as it goes, said why"
	else
		nok "no frame pointers" "status $rc" "$(head -5 "$T/n.txt")"
	fi
else
	ok "no frame pointers # SKIP no cc"
fi
# a stripped binary: its symbols from its detached debug file, found by
# build id under ARGUS_DEBUG_DIR (as Debian's -dbgsym packages put them
# under /usr/lib/debug), else from the file and offset only
if cc -O2 -g -fno-omit-frame-pointer -pthread -o "$T/strip-wait" \
    tests/progs/stack-wait.c 2> /dev/null &&
    id=$(readelf -n "$T/strip-wait" | sed -n 's/^ *Build ID: //p') &&
    [ -n "$id" ] && mkdir -p "$T/dbg/.build-id/${id%"${id#??}"}" &&
    objcopy --only-keep-debug "$T/strip-wait" \
    "$T/dbg/.build-id/${id%"${id#??}"}/${id#??}.debug" &&
    strip --strip-all "$T/strip-wait"; then
	$ARGUS record -q -o "$T/s" --backend bpf --no-instrument -- \
	    "$T/strip-wait" > /dev/null 2>&1
	ARGUS_DEBUG_DIR=$T/dbg $ARGUS diagnose --comm strip-wait "$T/s" \
	    > "$T/s1.txt" 2>&1
	ARGUS_DEBUG_DIR=$T/none $ARGUS diagnose --comm strip-wait "$T/s" \
	    > "$T/s2.txt" 2>&1
	if grep -q '^  stack at .*wait_for_reply+0x' "$T/s1.txt" &&
	    ! grep -q 'wait_for_reply' "$T/s2.txt" &&
	    grep -q '^  stack at .* strip-wait+0x' "$T/s2.txt"; then
		ok "stripped: symbols from the debug file by build id"
	else
		nok "stripped binary's debug file" "$(grep -m2 'stack' "$T/s1.txt")" \
		    "$(grep -m2 'stack' "$T/s2.txt")"
	fi
else
	ok "stripped binary # SKIP no cc, readelf or objcopy"
fi
exit 0
