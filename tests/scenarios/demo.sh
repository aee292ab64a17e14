#!/bin/sh
# make demo: record the browser/renderer hang scenario for real (kernel
# tracing plus libargus) and open the debugger on its hang; without a
# terminal, print the diagnosis instead. The trace stays in
# $ARGUS_DEMO_DIR (default /var/tmp/argus-demo) for the user to explore.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
OUT=${ARGUS_DEMO_DIR:-/var/tmp/argus-demo}
SCN=$B/tests/scenarios/chromium

die() { echo "argus demo: $*" >&2; exit 1; }

[ -x "$SCN" ] || die "$SCN is missing (run make first)"
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null 2>&1 ||
		die "recording needs root (the kernel's tracefs): run as root"
	exec sudo env B="$B" ARGUS="$ARGUS" ARGUS_DEMO_DIR="$OUT" sh "$0"
fi
rm -rf "$OUT"
echo "argus demo: recording the browser/renderer scenario into $OUT (about 5 s)"
echo "argus demo: a browser asks a renderer for a text box on each key press;"
echo "argus demo: the last key press hangs for 1.5 s. Who made it wait?"
ARGUS_HANG_MS=1000 "$ARGUS" record -q -o "$OUT" -- "$SCN" ||
	die "recording failed"
if [ -t 0 ] && [ -t 1 ]; then
	echo "argus demo: opening the debugger (press ? for help, q to quit)"
	sleep 1
	exec "$ARGUS" debug "$OUT" --comm browser
fi
"$ARGUS" diagnose "$OUT" --comm browser
echo
echo "argus demo: the trace is in $OUT: try 'argus debug $OUT' in a terminal"
