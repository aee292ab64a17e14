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

# cached_hosts N EV: the directory of the traces gen-graph --hosts N
# writes in EV events in all (one/, the whole as one trace, and host-0/
# ... host-(N-1)/, the hosts' own), written once under $B/bench like
# cached_trace's, and written again when one is missing or of an older
# format.
cached_hosts() {
	ch=$B/bench/hosts-$1-$2
	fmt=$(sed -n 's/^#define TRACE_FORMAT_VERSION //p' trace/trace.h)
	for t in one $(seq -f 'host-%g' 0 $(( $1 - 1 ))); do
		[ -d "$ch" ] || break
		if ! "${ARGUS:-./argus}" info "$ch/$t" 2>/dev/null |
		    grep -q "format $fmt\$"; then
			echo "$ch/$t: missing or of an older format, all written again" >&2
			rm -rf "$ch"
		fi
	done
	if [ ! -d "$ch" ]; then
		mkdir -p "$B/bench"
		"$B/tests/bench/gen-graph" --hosts "$1" "$ch" "$2" >&2 ||
		    { rm -rf "$ch"; return 1; }
	fi
	echo "$ch"
}
