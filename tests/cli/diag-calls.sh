#!/bin/sh
# diag-calls.sh: the diagnosis reads as a pipeline of stages (issue 29):
# no two engine/diag*.c files call each other, directly or through
# others (tests/cli/diag-calls.py), and the checker itself finds a
# circle that is there (a copy of the files with one call added back).
set -u
T=$(mktemp -d /tmp/argus-calls-XXXXXX)
trap 'rm -rf "$T"' EXIT
SUITE=diag-calls
. tests/lib.sh
if ! command -v python3 > /dev/null 2>&1; then
	ok "no call circle among engine/diag*.c # SKIP no python3"
	exit 0
fi
if out=$(python3 tests/cli/diag-calls.py 'engine/diag*.c'); then
	ok "no call circle among engine/diag*.c ($(echo "$out" |
	    sed -n 's/^order: //p' | wc -w) files)"
else
	nok "no call circle among engine/diag*.c" "$out"
fi
# the checker sees a circle: diag.c, the lowest stage, calling the
# analysis
cp engine/diag*.c "$T/"
printf '\nvoid\nlowest_calls_up(struct diag *d, struct dhang *h)\n{\n\tdiag_analyze(d, h);\n}\n' >> "$T/diag.c"
if out=$(python3 tests/cli/diag-calls.py "$T/diag*.c"); then
	nok "the checker finds a circle" "$out"
else
	ok "the checker finds a circle ($(echo "$out" | grep -c '^circle'))"
fi
