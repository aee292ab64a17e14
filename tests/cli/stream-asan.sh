#!/bin/sh
# stream-asan.sh: the streaming search for hangs under AddressSanitizer
# and UBSan ($B/asan/argus: `make build-tests` builds it for this test
# and debug-fuzz.sh, one more build of the sources at -O1, about 15 s on
# 2 cores). The search runs two ways: argus diagnose --stream, and the
# debugger's search of the whole trace (argus debug in a detached tmux,
# the trace made to count as big with ARGUS_DEBUG_WHOLE_MAX and
# ARGUS_WINDOW_EVENTS, so that it opens on its end and searches the
# whole trace on a thread of its own). Traces:
#  - tests/tools/mkwake: a thread woken before the trace names it, when
#    the scan's table of threads is full (the table grew under the
#    waker's entry, which the scan then used: a use after free);
#  - a segment recorded for real (root only; skipped, and said so,
#    otherwise), cut short at every chunk boundary and one byte either
#    side, and every STEP bytes (default 64, more when the segment is
#    large: about 400 cuts at most): diagnose --stream at every cut, the
#    debugger at the chunk boundaries and every 16 STEPs (about 24 cuts
#    at most).
# Each run must end by itself with status 0 or 1 (a trace that does not
# open) and leave no sanitizer report. About 30 s.
set -u
B=${B:-build}
ASAN=$B/asan/argus
case $ASAN in /*) ;; *) ASAN=$(pwd)/$ASAN ;; esac
ARGUS=${ARGUS:-./argus}
case $ARGUS in /*) ;; *) ARGUS=$(pwd)/$ARGUS ;; esac
STEP=${STEP:-64}
T=$(mktemp -d /tmp/argus-sasan-XXXXXX)
SUITE=stream-asan
. tests/lib.sh
tmux_sandbox
skip() { echo "ok stream-asan: $1 # skip $2"; }

if ! [ -x "$ASAN" ]; then
	nok "all" "no sanitizer build $ASAN (make build-tests makes it)"
	exit 0
fi
SAN="ASAN_OPTIONS=detect_leaks=0:exitcode=86:log_path=$T/asan"
SAN="$SAN UBSAN_OPTIONS=print_stacktrace=1:log_path=$T/ubsan"

# report: the sanitizers' reports so far (empty when none)
report() { cat "$T"/asan.* "$T"/ubsan.* 2>/dev/null | head -n 20; }
clean() { rm -f "$T"/asan.* "$T"/ubsan.*; }

# stream DIR: diagnose --stream on DIR; prints why it failed, or nothing
stream() {
	env $SAN "$ASAN" diagnose --stream "$1" >/dev/null 2>"$T/err"
	rc=$?
	if [ $rc -gt 1 ] || [ -n "$(report)" ]; then
		echo "status $rc: $(head -n 3 "$T/err")"
		report
	fi
	clean
}

# debug DIR: argus debug on DIR until its search of the whole trace has
# ended (:hangs shows its report), then q; prints why it failed, or
# nothing. A trace that opens on
# its whole (too few events for a window) is not searched: "whole" is
# printed then, and "refused" for one that does not open.
nsess=0
debug() {
	nsess=$((nsess + 1))
	rm -f "$T/rc"
	tm new-session -d -s "d$nsess" -x 160 -y 30 \
	    "env $SAN ARGUS_DEBUG_WHOLE_MAX=1 ARGUS_WINDOW_EVENTS=2 $ASAN debug $1 2>$T/err; echo \$? >$T/rc; sleep 60"
	n=200
	why=""
	while [ $n -gt 0 ] && ! [ -s "$T/rc" ]; do
		s=$(tm capture-pane -p -J -t "d$nsess")
		case $s in
		*"hangs of the whole trace"*|*"searching the whole trace failed"*)
			break ;;
		*"the whole trace is loaded"*)
			why=whole
			break ;;
		*"Candidates"*)
			# drawn: ask whether the search is over
			tm send-keys -t "d$nsess" : h a n g s Enter ;;
		esac
		sleep 0.05
		n=$((n - 1))
	done
	# out of the text screen, then quit (a q more is typed to the shell)
	for k in 1 2; do
		[ -s "$T/rc" ] && break
		tm send-keys -t "d$nsess" q
		sleep 0.05
		tm send-keys -t "d$nsess" q
		n=40
		while [ $n -gt 0 ] && ! [ -s "$T/rc" ]; do
			sleep 0.05
			n=$((n - 1))
		done
	done
	rc=$(cat "$T/rc" 2>/dev/null)
	tm kill-session -t "d$nsess" >/dev/null 2>&1
	if [ "${rc:-x}" != 0 ] && [ "${rc:-x}" != 1 ]; then
		echo "status ${rc:-none (still running)}: $(head -n 3 "$T/err")"
		report
	elif [ -n "$(report)" ]; then
		report
	elif [ "$rc" = 1 ]; then
		echo refused
	else
		echo "$why"
	fi
	clean
}

# --- a wake-up of a thread not yet named, the scan's table full ----------
if ! "$B/tests/tools/mkwake" "$T/wake" >"$T/log" 2>&1; then
	nok "mkwake" "$(cat "$T/log")"
	exit 0
fi
why=$(stream "$T/wake")
if [ -z "$why" ]; then
	ok "diagnose --stream: a thread woken before it is named"
else
	nok "diagnose --stream: a thread woken before it is named" "$why"
fi
if ! command -v tmux >/dev/null 2>&1; then
	skip "debug: a thread woken before it is named" "tmux is not installed"
else
	tm new-session -d -s keep -x 80 -y 24 "sleep 600"
	why=$(debug "$T/wake")
	if [ -z "$why" ]; then
		ok "debug's search: a thread woken before it is named"
	else
		nok "debug's search: a thread woken before it is named" "$why"
	fi
fi

# --- a recorded segment cut short everywhere -----------------------------
if [ "$(id -u)" != 0 ]; then
	skip "a recorded segment cut short" "recording needs root"
	exit 0
fi
skip_if_wedged "a recorded segment cut short" && exit 0
if ! "$ARGUS" record -q --no-instrument -o "$T/rec" -- \
    sh -c 'sleep 0.2 & sleep 0.3 & ls / >/dev/null; wait' \
    >"$T/log" 2>&1; then
	nok "record a segment" "$(tail -n 3 "$T/log")"
	exit 0
fi
seg=$(ls "$T"/rec/seg-*.argus | head -n 1)
size=$(stat -c %s "$seg")
# the chunk boundaries: walk the headers (magic 0x4b4e4843, then the
# frame's size at offset 12) from the segment header's end (its length
# at 12)
bounds=$(od -An -v -tu1 -w1 "$seg" | awk -v size="$size" '
	{ b[NR - 1] = $1 }
	function u32(o) { return b[o] + 256 * (b[o+1] + 256 * (b[o+2] + 256 * b[o+3])) }
	END {
		o = u32(12)
		while (o + 44 <= size && u32(o) == 1263421507) {
			print o
			o += 44 + u32(o + 12)
		}
		print o
	}')
nb=$(echo "$bounds" | wc -l)
# at most about 400 cuts for diagnose, 24 for the debugger, whatever the
# size of the segment (the machine's other work is recorded too)
step=$(( size / 400 > STEP ? size / 400 : STEP ))
dstep=$(( size / 24 > 16 * STEP ? size / 24 : 16 * STEP ))
cut=$T/cut
mkdir -m 700 "$cut"
# cut_points STEP: the sizes to cut the segment to, in order, each once:
# every chunk boundary and one byte either side, and every STEP bytes
# from 1, those between 0 and the segment's size (both left out)
cut_points() {
	{ echo "$bounds" | awk '{ print $1 - 1; print $1; print $1 + 1 }'
	i=1
	while [ $i -lt "$size" ]; do echo $i; i=$((i + $1)); done; } |
	awk -v size="$size" '$1 > 0 && $1 < size' | sort -n -u
}
cuts=$(cut_points "$step")
fails=""
nc=0
for c in $cuts; do
	head -c "$c" "$seg" >"$cut/seg-00000001.argus"
	why=$(stream "$cut")
	[ -n "$why" ] && fails="$fails
cut at $c: $why"
	nc=$((nc + 1))
done
if [ -z "$fails" ] && [ $nc -gt 10 ]; then
	ok "diagnose --stream: $nc cuts of a $size-byte segment ($nb chunk boundaries, a cut every $step bytes)"
else
	nok "diagnose --stream: $nc cuts of a $size-byte segment" "$fails"
fi
if ! command -v tmux >/dev/null 2>&1; then
	skip "debug's search: a recorded segment cut short" "tmux is not installed"
	exit 0
fi
dcuts=$(cut_points "$dstep")
fails=""
nc=0
ns=0
for c in $dcuts; do
	head -c "$c" "$seg" >"$cut/seg-00000001.argus"
	why=$(debug "$cut")
	case $why in
	"") ns=$((ns + 1)) ;;
	whole|refused) ;;
	*) fails="$fails
cut at $c: $why" ;;
	esac
	nc=$((nc + 1))
done
if [ -z "$fails" ] && [ $ns -gt 0 ]; then
	ok "debug's search: $nc cuts, $ns of them searched"
else
	nok "debug's search: $nc cuts, $ns of them searched" "$fails"
fi
exit 0
