#!/bin/sh
# Command-line tests of argus graph: usage, rules errors (one line naming
# file:line:column, nothing applied), the default rules, and on a real
# recording (needs root): the graph's invariants (--check), --stats,
# --dot and --suspects.
set -u
ARGUS=${ARGUS:-./argus}
T=$(mktemp -d /tmp/argus-graphcli-XXXXXX)
trap 'rm -rf "$T"' EXIT

SUITE=graph
. tests/lib.sh

if $ARGUS graph --help | grep -q '^usage: argus graph'; then
	ok "help"
else
	nok "help"
fi

printf 'batch process x\n# fine\ncull thread\n' > "$T/bad.rules"
$ARGUS graph --rules "$T/bad.rules" "$T/none" > "$T/out" 2> "$T/err"
rc=$?
if [ $rc -eq 1 ] && [ "$(wc -l < "$T/err")" -eq 1 ] &&
    grep -q "^argus graph: $T/bad.rules:3:13: " "$T/err"; then
	ok "malformed rules line reported with file, line and column"
else
	nok "malformed rules" "status $rc: $(cat "$T/err")"
fi

n=$($ARGUS graph --print-rules | grep -c .)
m=$($ARGUS graph --no-default-rules --print-rules | grep -c .)
if [ "$n" -gt 5 ] && [ "$m" -eq 0 ]; then
	ok "default rules ($n)"
else
	nok "default rules" "$n with defaults, $m without"
fi
printf 'split symbol frame\n' > "$T/good.rules"
m=$($ARGUS graph --no-default-rules --rules "$T/good.rules" --print-rules)
if [ "$m" = "split symbol frame" ]; then
	ok "--rules adds a file"
else
	nok "--rules" "$m"
fi

skip_if_wedged "recording tests" && exit 0
if [ "$(id -u)" != 0 ] || [ ! -d /sys/kernel/tracing ]; then
	echo "ok graph: recording tests skipped (not root)"
	exit 0
fi
if ! $ARGUS record -q -o "$T/trace" --events full -- sh -c \
    'i=0; while [ $i -lt 20 ]; do echo x | cat >/dev/null; sleep 0.01; i=$((i+1)); done' \
    > "$T/rec.out" 2>&1; then
	nok "record a workload" "$(cat "$T/rec.out")"
	exit 0
fi
if $ARGUS graph --check "$T/trace" > "$T/out" 2>&1; then
	ok "invariants hold on a real recording"
else
	nok "invariants on a real recording" "$(cat "$T/out")"
fi
if $ARGUS graph "$T/trace" > "$T/out" 2>&1 &&
    grep -q '^vertices: *[1-9]' "$T/out" &&
    grep -q '^edges: .*wakeup [1-9]' "$T/out"; then
	ok "--stats"
else
	nok "--stats" "$(cat "$T/out")"
fi
if $ARGUS graph --dot 0 --depth 3 "$T/trace" > "$T/dot" 2>&1 &&
    head -n 1 "$T/dot" | grep -q '^digraph' && grep -q '^}' "$T/dot"; then
	ok "--dot"
else
	nok "--dot" "$(head -n 3 "$T/dot")"
fi
if $ARGUS graph --dot 999999999 "$T/trace" > /dev/null 2> "$T/err"; then
	nok "--dot of a missing vertex must fail"
else
	ok "--dot of a missing vertex fails"
fi
if $ARGUS graph --suspects --limit 3 "$T/trace" > "$T/out" 2>&1 &&
    grep -q 'suspect vertices' "$T/out"; then
	ok "--suspects"
else
	nok "--suspects" "$(cat "$T/out")"
fi

# An instrumented work queue (tests/progs/ins-api-workq, 40 tasks on a
# pool of four threads): every task begin is connected to its submit.
B=${B:-build}
prog="$B/tests/progs/ins-api-workq"
lib="$(cd "$B" 2>/dev/null && pwd)/libargus.so"
if [ ! -x "$prog" ] || [ ! -f "$lib" ]; then
	echo "ok graph: instrumented recording skipped (no $prog)"
	exit 0
fi
if ! $ARGUS record -q -o "$T/wq" --events full -- env LD_PRELOAD="$lib" \
    "$prog" > "$T/rec.out" 2>&1; then
	nok "record the work queue" "$(cat "$T/rec.out")"
	exit 0
fi
if $ARGUS graph "$T/wq" > "$T/out" 2>&1 &&
    grep -q '^edges: .* task 40' "$T/out" &&
    grep -q '^vertices: .* task 40' "$T/out" &&
    $ARGUS graph --check "$T/wq" > /dev/null 2>&1; then
	ok "40 task vertices each connected to its submit"
else
	nok "task edges on a recording" "$(cat "$T/out")"
fi
