#!/bin/sh
# needs: kernel tracing
# export-stacks.sh: the stacks in argus export's diagnosis, on a
# kernel-only BPF recording of tests/progs/stack-wait (its main thread
# blocks in wait_for_reply() while the thread it waits for computes in
# compute_reply()): the hang's slice has "stack" naming wait_for_reply,
# with "stack_kind" wait, and the waker's "waker_stack" (when the
# recorder took it); the busy culprit's slice has its samples' "stack"
# naming compute_reply; the hang's stacks are those of argus diagnose
# --json; the whole file passes tests/cli/export-check.py. Needs root
# and python3. About 5 s.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
T=$(mktemp -d /tmp/argus-xstacks-XXXXXX)
trap 'rm -rf "$T"' EXIT

SUITE=export-stacks
. tests/lib.sh
skip_if_wedged "the stack-wait recording" && exit 0
needs root bpf python3

P=$B/tests/progs/stack-wait
if ! timeout 60 $ARGUS record -q -o "$T/t" --backend bpf --no-instrument \
    -- "$P" > "$T/rec.log" 2>&1; then
	nok "stack-wait recording" "$(tail -n 5 "$T/rec.log")"
	exit 0
fi
$ARGUS diagnose --json --comm stack-wait "$T/t" > "$T/d.json" 2> /dev/null
if ! $ARGUS export "$T/t" --diagnose -o "$T/x.json" 2> "$T/err"; then
	nok "export of the recording" "$(cat "$T/err")"
	exit 0
fi
# the format (the whole machine was recorded: its other hangs are not
# compared with the diagnosis of stack-wait's)
python3 tests/cli/export-check.py "$T/x.json" |
    sed 's/^\(n*o*t* *ok\) export:/\1 export-stacks:/'

# the async slices' arguments: "CAT KIND FIELD VALUE", the arrays' names
# joined by spaces; then "same" when the blocked hang's stacks are those
# of argus diagnose --json (its last own one, its waker's, its kernel
# one)
python3 - "$T/x.json" "$T/d.json" > "$T/args" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
for e in ev:
    if e["ph"] == "b" and e["cat"] in ("hang", "culprit") and \
            e["args"].get("thread") == "stack-wait":
        for k in ("stack", "stack_kind", "waker_stack", "kernel_stack"):
            if k in e["args"]:
                v = e["args"][k]
                print(e["cat"], e["args"]["kind"], k,
                      " ".join(v) if isinstance(v, list) else v)
def names(s):
    return [n or f for n, f in zip(s.get("symbols") or [None] *
                                   len(s["frames"]), s["frames"])]
for h in json.load(open(sys.argv[2]))["hangs"]:
    if h["kind"] != "blocked":
        continue
    own = [s for s in h["stacks"] if s["role"] == "hang" and
           s["kind"] != "kernel"]
    kern = [s for s in h["stacks"] if s["role"] == "hang" and
            s["kind"] == "kernel"]
    wk = [s for s in h["stacks"] if s["role"] == "waker"]
    x = [e["args"] for e in ev if e["ph"] == "b" and e["cat"] == "hang"
         and e["tid"] == h["thread"]["tid"]]
    if own and x and x[0].get("stack") == names(own[-1]) and \
            x[0].get("waker_stack") == (names(wk[0]) if wk else None) and \
            x[0].get("kernel_stack") == (names(kern[-1]) if kern else None):
        print("same")
PY
if grep -q '^hang blocked stack __read+0x[0-9a-f]* wait_for_reply+0x[0-9a-f]* main+0x' "$T/args" &&
    grep -q '^hang blocked stack_kind wait$' "$T/args"; then
	ok "the hang's slice: its stack names wait_for_reply"
else
	nok "the hang's stack" "$(cat "$T/args")"
fi
# the waker's stack is missing only when the recorder lost events (an
# overloaded machine): then the diagnosis has none either
lost=$($ARGUS info --events "$T/t" 2>/dev/null | sed -n 's/^lost: *\([0-9]*\).*/\1/p')
if [ "${lost:-0}" != 0 ] && ! $ARGUS diagnose --comm stack-wait "$T/t" \
    2>/dev/null | sed -n '1,/^hang 2:/p' | grep -q '^  stack of its waker '; then
	ok "the hang's slice: its waker's stack # SKIP the recorder lost $lost events"
elif grep -q '^hang blocked waker_stack [^ ]' "$T/args"; then
	ok "the hang's slice: its waker's stack"
else
	nok "the hang's waker_stack" "$(cat "$T/args")"
fi
if grep -q '^culprit busy stack compute_reply[.a-z0-9]*+0x' "$T/args" &&
    grep -q '^culprit busy stack_kind sample$' "$T/args"; then
	ok "the culprit's slice: its samples' stack names compute_reply"
else
	nok "the culprit's stack" "$(cat "$T/args")"
fi
if grep -qx same "$T/args"; then
	ok "the hang's stacks are the diagnosis'"
else
	nok "the hang's stacks are the diagnosis'" "$(cat "$T/args")"
fi
