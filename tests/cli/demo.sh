#!/bin/sh
# needs: kernel tracing
# The script behind `make demo`, without a terminal: it records the
# browser/renderer scenario for real and prints the diagnosis, which must
# name the circular wait and the timeout that breaks it. Needs root.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
T=$(mktemp -d /tmp/argus-demo-test-XXXXXX)
trap 'rm -rf "$T"' EXIT

if [ "$(id -u)" != 0 ]; then
	echo "ok demo: skipped (not root)"
	exit 0
fi
B="$B" ARGUS="$ARGUS" ARGUS_DEMO_DIR="$T/trace" sh tests/scenarios/demo.sh \
    </dev/null >"$T/out" 2>&1
rc=$?
[ $rc -eq 0 ] && echo "ok demo: exits 0" || { echo "not ok demo: exit $rc"; tail -n 20 "$T/out"; }
for want in "hang 1: browser" "1. renderer" "semaphore" \
    "cycle: browser -> renderer, broken by a 1.500 s timeout"; do
	if grep -qF "$want" "$T/out"; then
		echo "ok demo: says '$want'"
	else
		echo "not ok demo: says '$want'"
		grep -v '^browser: iter' "$T/out" | head -n 20
	fi
done
"$ARGUS" info "$T/trace" >/dev/null 2>&1 && echo "ok demo: leaves a readable trace" ||
	echo "not ok demo: leaves a readable trace"
