#!/bin/sh
# Benchmark of libargus: cost per interposed call with the recorder off
# and on, against the same call without the library, and the slowdown
# of a lock-heavy program. Uses a tracefs instance of its own as the
# recorder's marker (root needed for the "on" column).
set -u
B=${B:-build}
LIB=$(cd "$B" && pwd)/libargus.so
BIN=$B/tests/bench/instrument-calls
INST=/sys/kernel/tracing/instances/argus-bench-$$
trap 'rmdir "$INST" 2>/dev/null' EXIT INT TERM
mkdir "$INST" 2>/dev/null && echo 1 >"$INST/tracing_on" &&
    echo 4096 >"$INST/buffer_size_kb"

ARGUS_MARKER= "$BIN" >/tmp/argus-bench-raw.$$
ARGUS_MARKER= LD_PRELOAD=$LIB "$BIN" >/tmp/argus-bench-off.$$
if [ -d "$INST" ]; then
	ARGUS_MARKER=$INST/trace_marker_raw LD_PRELOAD=$LIB "$BIN" \
	    >/tmp/argus-bench-on.$$
else
	: >/tmp/argus-bench-on.$$
fi
v() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }
echo "libargus: ns per call (contended: ms for 4 threads x 100000 lock/unlock)"
printf '%-12s %10s %10s %10s %12s\n' call plain off on "off-plain"
for k in mutex cond_signal contended; do
	r=$(v $k /tmp/argus-bench-raw.$$); o=$(v $k /tmp/argus-bench-off.$$)
	n=$(v $k /tmp/argus-bench-on.$$)
	printf '%-12s %10s %10s %10s %12s\n' $k "$r" "$o" "${n:--}" \
	    "$(awk -v a="$o" -v b="$r" 'BEGIN { printf "%+.2f", a - b }')"
done
m=$(v mark /tmp/argus-bench-on.$$); w=$(v raw_write /tmp/argus-bench-on.$$)
if [ -n "$m" ] && [ -n "$w" ]; then
	echo "record (argus_mark) on: $m ns; raw marker write: $w ns;" \
	    "ratio $(awk -v a="$m" -v b="$w" 'BEGIN { printf "%.2f", a / b }')"
fi
rm -f /tmp/argus-bench-raw.$$ /tmp/argus-bench-off.$$ /tmp/argus-bench-on.$$
