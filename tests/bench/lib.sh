# lib.sh: what the benchmark scripts share (sourced; B is the build
# directory).
#
# cached_trace EV: the path of the generated trace of EV events, written
# once by gen-graph through the real store and kept under $B/bench for the
# next runs (the generator's summary goes to standard error). A trace
# cached in an older format than argus writes is written again, so the
# benchmarks measure the format users get.
cached_trace() {
	ct=$B/bench/graph-$1
	fmt=$(sed -n 's/^#define TRACE_FORMAT_VERSION //p' trace/trace.h)
	if [ -d "$ct" ] && ! "${ARGUS:-./argus}" info "$ct" 2>/dev/null |
	    grep -q "format $fmt\$"; then
		echo "$ct: an older format, written again" >&2
		rm -rf "$ct"
	fi
	if [ ! -d "$ct" ]; then
		mkdir -p "$B/bench"
		"$B/tests/bench/gen-graph" "$ct" "$1" >&2 ||
		    { rm -rf "$ct"; return 1; }
	fi
	echo "$ct"
}

# The answers of a diagnosis JSON that must not depend on how much of the
# trace was built (jq): no vertex ids, similar nodes up to the one picked.
ANS='walk(if type == "object" then del(.node) else . end) |
    .hangs |= map(.similar = (if .picked == null then [] else
    .similar[:.picked] end))'
