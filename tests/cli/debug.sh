#!/bin/sh
# debug.sh: argus debug driven in a detached tmux at fixed sizes
# (send-keys, capture-pane). Three traces: a deterministic one written by
# tests/tools/mkhang (app <- app-worker <- server, the last wait 2.5 s),
# and real recordings of the lockio and chromium scenarios made once per
# run with the in-tree recorder (skipped, and said so, without root or
# recorder).
# Screens are compared by key facts (names, messages, the span in the
# title), never whole. Checks: opening on the spinning node and its
# candidates; `w` walks the wake-up chain to a dead end; `[` `]`
# history; `r` recursion and `{` `}`; zoom; `/` search and `:` completion;
# `:rule add` rebuilds the graph in place (and reports a bad rule);
# `:write`; the history file; `?` lists every key of the key table; the
# reason no hang was found for --tid in the slice diff pane; the
# man page lists every key and command; resizing to 80x24 and 200x60;
# the terminal restored after q, SIGTERM and C-c; --at; `z`; no colours
# (vt100); lockio's culprit tree in the slice diff pane as in the report
# (indented) and `r` on its depth-2 row; confirming the second candidate
# of the chromium recording changes the slice; `w` three times follows
# the recorded wake-up path. About 25 s.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
case $ARGUS in /*) ;; *) ARGUS=$(pwd)/$ARGUS ;; esac
T=$(mktemp -d /tmp/argus-debug-XXXXXX)

SUITE=debug
. tests/lib.sh
tmux_sandbox
skip() { echo "ok debug: $1 # skip $2"; }

if ! command -v tmux >/dev/null 2>&1; then
	skip "all" "tmux is not installed"
	exit 0
fi

# start W H ARGS...: a new session running argus debug ARGS (the previous
# one is closed); when argus ends, the pane prints its exit status and
# the terminal modes.
start() {
	w=$1 h=$2
	shift 2
	debug_start "$w" "$h" "" "$TTY_MODES" "$@"
}
# start_with "VAR=VALUE..." W H ARGS...: start with these variables set.
start_with() {
	vars=$1 w=$2 h=$3
	shift 3
	debug_start "$w" "$h" "env $vars" "$TTY_MODES" "$@"
}

# thread_now: the thread label of the status line ("app-worker:501").
thread_now() { status_line | sed -n 's/.* \([^ |]*:[0-9]*\) | .*/\1/p' | sed 's/:[0-9]*$//'; }

# --- the deterministic trace ------------------------------------------------
mkhang_trace "$T/mk" || exit 0

start 120 40 "$T/mk"
if wait_for 'Spinning node' && screen | grep -q 'HANG blocked' &&
    screen | grep -q '#[0-9]* plain vertex of app:500'; then
	ok "opens on the spinning node (mkhang)"
else
	nok "opens on the spinning node (mkhang)" "$(screen)"
fi
if screen | grep -Eq 'Candidates: [2-9] similar' && screen | grep -q '^Happ:500'; then
	ok "candidates and hang lane (mkhang)"
else
	nok "candidates and hang lane (mkhang)" "$(screen)"
fi

# w walks app <- app-worker <- server, then a dead end; [ and ] move
# through the history
walk=""
for i in 1 2; do
	keys w
	sleep 0.3
	wait_for 'waker: ' 5
	walk="$walk $(thread_now)"
done
keys w
if [ "$walk" = " app-worker server" ] && wait_for 'dead end' 5; then
	ok "w walks the wake-up chain (mkhang)"
else
	nok "w walks the wake-up chain (mkhang)" "walk:$walk" "$(status_line)"
fi
keys '['
sleep 0.3
back=$(thread_now)
keys '['
sleep 0.3
back2=$(thread_now)
keys ']'
sleep 0.3
fwd=$(thread_now)
if [ "$back" = app-worker ] && [ "$back2" = app ] && [ "$fwd" = app-worker ]; then
	ok "[ and ] move through the history"
else
	nok "[ and ] move through the history" "back=$back back2=$back2 fwd=$fwd"
fi

# r recurses into the first culprit: a new hang diagnosed from its node;
# { goes back to the first hang
keys r
if wait_for 'HANG [a-z]+ \(node\)' 5 && wait_for 'hang 2/2: ' 2; then
	keys '{'
	if wait_for 'hang 1/2: app blocked' 5; then
		ok "r recurses into a culprit, { and } switch hangs"
	else
		nok "r recurses into a culprit, { and } switch hangs" "$(status_line)"
	fi
else
	nok "r recurses into a culprit, { and } switch hangs" "$(screen)"
fi

# zoom: + halves the window, - doubles it back, 0 shows the whole trace
span() { screen | sed -n '1s/.*(\([0-9.]* [a-z]*\)).*/\1/p'; }
# span_change OLD: the span once it differs from OLD (3 s at most)
span_change() { until_changed "$1" span; }
wait_for 'Timeline .*\(' 5
s0=$(span)
keys +
s1=$(span_change "$s0")
keys -
s2=$(span_change "$s1")
keys H 0
wait_for 'Timeline .*\(3\.811 s\)' 3
s3=$(span)
if [ -n "$s0" ] && [ "$s1" != "$s0" ] && [ "$s2" = "$s0" ] &&
    [ "$s3" = "3.811 s" ]; then
	ok "zoom in, out and to the whole trace ($s0, $s1, $s3)"
else
	nok "zoom in, out and to the whole trace" "$s0 / $s1 / $s2 / $s3"
fi

# / searches lanes by thread name; : completes commands and threads
keys / server Enter
sleep 0.3
t1=$(thread_now)
keys ':thr' Tab 'app-w' Tab Enter
sleep 0.3
t2=$(thread_now)
if [ "$t1" = server ] && [ "$t2" = app-worker ]; then
	ok "/ search and : completion of commands and thread names"
else
	nok "/ search and : completion of commands and thread names" \
	    "search: $t1, :thread: $t2" "$(status_line)"
fi

# :rule add rebuilds the graph and the diagnosis, keeping the position
keys ':rule add cull thread server' Enter
if wait_for 'rule added \([0-9]+ rules\): vertices [0-9]+ -> [0-9]+, edges 24 -> 12' 5 &&
    [ "$(thread_now)" = app-worker ]; then
	ok ":rule add changes the graph in place"
else
	nok ":rule add changes the graph in place" "$(status_line)"
fi
keys ':rule add nonsense here' Enter
if wait_for 'command line:1' 5; then
	ok ":rule add reports a bad rule on the status line"
else
	nok ":rule add reports a bad rule on the status line" "$(status_line)"
fi

# :write saves the report; history file kept
keys ":write $T/report.txt" Enter
if wait_for 'report written' 5 && grep -q '^hang 1: app' "$T/report.txt"; then
	ok ":write saves the report"
else
	nok ":write saves the report" "$(status_line)"
fi
if grep -q 'rule' "$T/state/argus/history" 2>/dev/null; then
	ok "command history kept in a file"
else
	nok "command history kept in a file"
fi

# ? lists every key of the key table (page by page)
keys '?'
wait_for 'argus debug: keys' 5
: >"$T/help.txt"
for i in 1 2 3 4; do
	screen >>"$T/help.txt"
	keys Space
	sleep 0.2
done
keys q
"$ARGUS" debug --list-keys | sed '/^commands$/,$d' | cut -f1 >"$T/keys.txt"
missing=""
while read -r k; do
	# help lines: two spaces, the keys (space separated), the text
	cut -c3-18 "$T/help.txt" | tr ' ' '\n' | grep -qxF -- "$k" ||
	    missing="$missing $k"
done <"$T/keys.txt"
if [ -s "$T/keys.txt" ] && [ -z "$missing" ]; then
	ok "? lists every key of the key table ($(wc -l <"$T/keys.txt") keys)"
else
	nok "? lists every key of the key table" "missing:$missing"
fi

# resize: small, then large; the screen is redrawn at the new size
tm resize-window -t "$SESS" -x 80 -y 24
sleep 0.5
w1=$(screen | awk '{ if (length($0) > m) m = length($0) } END { print m }')
if wait_for '^>?.Timeline' 5 && [ "$w1" -le 80 ] &&
    screen | grep -q 'Candidates'; then
	ok "resize to 80x24"
else
	nok "resize to 80x24" "$(screen)"
fi
tm resize-window -t "$SESS" -x 200 -y 60
sleep 0.5
if wait_for 'Candidates' 5 && [ "$(screen | wc -l)" -ge 59 ] &&
    screen | grep -q 'Slice diff'; then
	ok "resize to 200x60"
else
	nok "resize to 200x60" "$(screen)"
fi

# q quits and restores the terminal
keys q
if wait_for '^EXIT=0' 5 && wait_for '^icanon echo' 2; then
	ok "q quits and restores the terminal"
else
	nok "q quits and restores the terminal" "$(screen | grep -v "^$")"
fi

# --tid: a thread without a hang; the slice diff pane says why
start 120 40 --tid 600 "$T/mk"
if wait_for 'no hang found \(why: the slice diff pane\)' 5 &&
    screen | grep -q 'no hang found:' &&
    screen | grep -q '1 thread chosen, 0 waits considered'; then
	ok "--tid without a hang: the pane says why"
else
	nok "--tid without a hang: the pane says why" "$(screen | grep -v '^$')"
fi

# SIGTERM restores the terminal too
start 80 24 "$T/mk"
wait_for 'Spinning node' 5
pp=$(tm display -p -t "$SESS" '#{pane_pid}')
ap=$( [ -n "$pp" ] && pgrep -P "$pp" -x argus | head -n 1)
[ -n "$ap" ] && kill -TERM "$ap"
if wait_for '^EXIT=143' 5 && wait_for '^icanon echo' 2; then
	ok "SIGTERM restores the terminal"
else
	nok "SIGTERM restores the terminal" "$(screen | tail -n 3)"
fi

# --at diagnoses the given time; z shows the focused pane alone; C-c
# (SIGINT) quits and restores the terminal
start 100 30 --at 1.1 "$T/mk"
if wait_for 'Spinning node' 5 && status_line | grep -Eq 'hang 1/1: app .*\| 1\.0[0-9]* s'; then
	ok "--at opens on the hang at that time"
else
	nok "--at opens on the hang at that time" "$(status_line)"
fi
keys z
if wait_for 'ms/col' 3 && ! screen | grep -q 'Candidates'; then
	ok "z shows the focused pane alone"
else
	nok "z shows the focused pane alone" "$(screen)"
fi
keys C-c
if wait_for '^EXIT=130' 5 && wait_for '^icanon echo' 2; then
	ok "C-c (SIGINT) restores the terminal"
else
	nok "C-c (SIGINT) restores the terminal" "$(screen | grep -v '^$')"
fi

# --at loads a window of the trace around the time (of 20 events here,
# ARGUS_WINDOW_EVENTS): the status line says which, the ruler marks its
# start, and the hang is the one of the whole trace; the timeline taken
# past the edge loads the rest
start_with ARGUS_WINDOW_EVENTS=20 120 30 --at 3.0 "$T/mk"
if wait_for 'Spinning node' 5 &&
    status_line | grep -Eq '^loaded 0\.[0-9]+ s to 3\.8[0-9]* s of the trace' &&
    screen | grep -Eq '/col +\+0\.0s-*\[' &&
    screen | grep -q 'hang at 1.260920 s'; then
	ok "--at over a window: status line and ruler mark"
else
	nok "--at over a window" "$(screen | grep -v '^$')"
fi
# g takes the timeline to the trace start, past the window's edge: the
# rest loads while the keys keep working, and the mark goes
keys g
if wait_for 'loaded the whole trace' 10 &&
    ! screen | grep -Eq '/col +\+0\.0s-*\['; then
	ok "--at: scrolling past the window's edge loads more"
else
	nok "--at: scrolling past the window's edge loads more" \
	    "$(screen | grep -v '^$')"
fi
keys q

# a trace too big to load at once (over 10 events here,
# ARGUS_DEBUG_WHOLE_MAX) opens on a window at its end, says so, and
# loads the rest when the timeline goes past the window's start
start_with "ARGUS_DEBUG_WHOLE_MAX=10 ARGUS_WINDOW_EVENTS=20" 140 30 "$T/mk"
if wait_for 'its end; the whole trace is searched|the whole trace: 1 hang' 5 &&
    screen | grep -Eq '/col +\[-' && ! screen | grep -q 'hang at 1.260920 s'
then
	ok "a big trace opens on its end"
else
	nok "a big trace opens on its end" "$(screen | grep -v '^$')"
fi
# meanwhile the whole trace is searched: :hangs lists what it found, and
# :hangs 1 loads the part of the trace around that hang and opens it
if wait_for 'the whole trace: 1 hang \(:hangs lists them\)' 10; then
	ok "a big trace: the whole trace is searched for hangs"
else
	nok "a big trace: the whole trace is searched" "$(screen | grep -v '^$')"
fi
keys ':hangs' Enter
if wait_for '^hang 1: app \(500\) blocked for 2.500 s from 1.260920 s' 5
then
	ok "a big trace: :hangs lists the whole trace's hangs"
else
	nok "a big trace: :hangs lists them" "$(screen | grep -v '^$')"
fi
keys q
keys ':hangs 2' Enter
if wait_for "no hang '2' in the whole trace \(there are 1\)" 5; then
	ok "a big trace: :hangs N past the last says how many there are"
else
	nok "a big trace: :hangs 2" "$(screen | grep -v '^$')"
fi
keys ':hangs 1' Enter
if wait_for 'hang at 1.260920 s' 10 &&
    status_line | grep -Eq '^loaded 0\.[0-9]+ s to 3\.8[0-9]* s of the trace' &&
    screen | grep -Eq '/col +\+0\.0s-+[^ ]*\['; then
	ok "a big trace: :hangs N loads the part around hang N and opens it"
else
	nok "a big trace: :hangs N opens it" "$(screen | grep -v '^$')"
fi
keys g
if wait_for 'loaded the whole trace' 10 && screen | grep -q 'hang at 1.260920 s'; then
	ok "a big trace: the rest loads, with its hang"
else
	nok "a big trace: the rest loads, with its hang" "$(screen | grep -v '^$')"
fi
keys q

# loading a trace of millions of events shows a bar with a percentage
# (the screen is redrawn every 0.1 s; this load takes about a second)
"$B/tests/tools/mktrace" "$T/big" 8000000 > /dev/null
start 100 30 "$T/big"
if wait_for '\[#*\.*\] +[0-9]+%' 10; then
	ok "loading shows a bar with a percentage"
else
	nok "loading shows a bar with a percentage" "$(screen | grep -v '^$')"
fi
keys q
rm -rf "$T/big"

# no colours (vt100) at 80x24
debug_start 80 24 "TERM=vt100" "" "$T/mk"
if wait_for 'Spinning node' 5 && screen | grep -q '^Happ:500 *\.*!!!'; then
	ok "no colours at 80x24: states read as characters"
else
	nok "no colours at 80x24: states read as characters" "$(screen)"
fi
keys q
wait_for '^EXIT=0' 5 || nok "vt100 quit" "$(screen | tail -n 2)"

# the man page lists every key and command of the table
man=man/argus-debug.1
if [ -f "$man" ]; then
	sed -n '/^\.Sh KEYS/,/^\.Sh /p' "$man" | sed -n 's/^\.It Ic //p' |
	    sed -e 's/ , Ic /\n/g' -e 's/\\&//g' -e 's/\\-/-/g' \
	    -e 's/\\e/\\/g' | sort -u >"$T/man-keys.txt"
	sort -u "$T/keys.txt" >"$T/keys-sorted.txt"
	sed -n '/^\.Sh COMMANDS/,/^\.Sh /p' "$man" |
	    sed -n 's/^\.It Ic \([a-z]*\).*/\1/p' | sort -u >"$T/man-cmds.txt"
	"$ARGUS" debug --list-keys | sed '1,/^commands$/d' | cut -f1 |
	    sort -u >"$T/cmds.txt"
	if cmp -s "$T/man-keys.txt" "$T/keys-sorted.txt" &&
	    cmp -s "$T/man-cmds.txt" "$T/cmds.txt"; then
		ok "man page lists every key and command"
	else
		nok "man page lists every key and command" \
		    "$(diff "$T/keys-sorted.txt" "$T/man-keys.txt")" \
		    "$(diff "$T/cmds.txt" "$T/man-cmds.txt")"
	fi
else
	nok "man page lists every key and command" "$man missing"
fi

# errors before the screen: one line on stderr, exit 1
if "$ARGUS" debug "$T/nonexistent" </dev/null >"$T/err.txt" 2>&1; then
	nok "error without a terminal"
elif grep -q '^argus debug: ' "$T/err.txt"; then
	ok "error without a terminal or trace"
else
	nok "error without a terminal or trace" "$(cat "$T/err.txt")"
fi

# a chunk unlike its seek index entry is found while the debugger loads,
# not at open: the screen still says the damage
"$B/tests/tools/mktrace" "$T/dmg" 400000 65536 >/dev/null 2>&1
python3 - "$T/dmg/seg-00000002.argus" <<'PY'
import struct, sys, zlib
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
ioff, n = struct.unpack_from("<QI", b, len(b) - 24)
e = ioff + 16 + 32
struct.pack_into("<I", b, e + 24, struct.unpack_from("<I", b, e + 24)[0] + 1)
crc = zlib.crc32(bytes(b[ioff:ioff + 16 + 32 * n]))
struct.pack_into("<I", b, len(b) - 12, crc)
open(p, "wb").write(b)
PY
start 120 40 "$T/dmg"
if wait_for 'warning: 1 damaged spot\(s\) skipped' 20; then
	ok "a chunk unlike its index entry is reported on the screen"
else
	nok "a chunk unlike its index entry is reported on the screen" "$(screen)"
fi
keys q
wait_for '^EXIT=0' 5 || nok "quit (damaged trace)" "$(screen | tail -n 3)"

# --- real recordings ----------------------------------------------------------
skip_if_wedged "lockio and chromium recordings" && exit 0
scn="$B/tests/scenarios/chromium"
if [ "$(id -u)" != 0 ]; then
	skip "lockio and chromium recordings" "recording needs root"
	exit 0
fi
if [ ! -x "$scn" ] || [ ! -x "$B/tests/scenarios/lockio" ] ||
    ! "$ARGUS" record --help >/dev/null 2>&1; then
	skip "lockio and chromium recordings" "no recorder or scenarios in this build"
	exit 0
fi

# lockio: lk-helper is a culprit at depth 2 under lk-worker. The slice
# diff pane (focused, z) lists the culprits as the text report's tree:
# the same order, each indented two spaces per level beyond the first
# (rows as "INDENT DEPTH NAME"); then r on the depth-2 row recurses into
# that culprit.
report_tree() {
	sed -n '/^hang 1:/,/^hang 2:/p' "$1" | sed -n '/^  culprits:$/,/^  [^ ]/p' |
	    sed -n 's/^    \( *\)\([0-9]*\)\. \([^ ]*\) (.*/\1\2 \3/p' |
	    awk '{ match($0, /^ */); print RLENGTH, $1, $2 }'
}
pane_tree() {
	screen | sed -n '/^culprits (r recurses):/,$p' | sed 1d |
	    sed -n '/^  *\*C[0-9]/!q; s/^  \( *\)\*C\([0-9]*\) \([^ :]*\):.*/\1\2 \3/p' |
	    awk '{ match($0, /^ */); print RLENGTH, $1, $2 }'
}
if ! ARGUS_HANG_MS=2000 timeout 60 "$ARGUS" record -q -o "$T/lockio" -- \
    "$B/tests/scenarios/lockio" -q >"$T/rec.log" 2>&1; then
	nok "lockio recording" "$(tail -n 5 "$T/rec.log")"
else
	"$ARGUS" diagnose "$T/lockio" >"$T/lockio.diag" 2>&1
	report_tree "$T/lockio.diag" >"$T/tree-report.txt"
	start 120 40 "$T/lockio"
	wait_for 'Spinning node' 15
	keys Tab Tab Tab
	wait_for '>Slice diff' 5 && keys z
	wait_for '^>Slice diff' 5 && wait_for '^culprits \(r recurses\):' 5
	pane_tree >"$T/tree-pane.txt"
	if ! grep -q '^2 2 lk-helper$' "$T/tree-report.txt"; then
		skip "the culprit tree in the slice diff pane (lockio)" \
		    "no depth-2 lk-helper in this recording's report"
	elif cmp -s "$T/tree-report.txt" "$T/tree-pane.txt" &&
	    grep -A1 '^0 1 lk-worker$' "$T/tree-pane.txt" |
	    grep -q '^2 2 lk-helper$'; then
		ok "the culprit tree in the slice diff pane, indented (lockio)"
		keys / 'C2 lk-helper' Enter
		sleep 0.3
		keys r
		if wait_for 'hang 2/2: lk-helper blocked' 5; then
			ok "r on the depth-2 culprit's row recurses into it (lockio)"
		else
			nok "r on the depth-2 culprit's row recurses into it (lockio)" \
			    "$(status_line)"
		fi
	else
		nok "the culprit tree in the slice diff pane, indented (lockio)" \
		    "report: $(tr '\n' '/' <"$T/tree-report.txt")" \
		    "pane: $(tr '\n' '/' <"$T/tree-pane.txt")" "$(screen)"
	fi
	keys q
	wait_for '^EXIT=0' 5 || nok "quit (lockio)" "$(screen | tail -n 3)"
fi

# chromium
if ! ARGUS_HANG_MS=1000 "$ARGUS" record -q -o "$T/rec" -- "$scn" -q \
    >"$T/rec.log" 2>&1; then
	nok "chromium recording" "$(tail -n 5 "$T/rec.log")"
	exit 0
fi
# the recording names the threads (the debugger shows those names)
"$ARGUS" diagnose "$T/rec" >"$T/rec.diag" 2>&1
"$ARGUS" dump "$T/rec" --type thread >"$T/rec.threads" 2>&1
names=1
head -n 1 "$T/rec.diag" | grep -q '^hang 1: browser ' &&
    grep -q 'comm="br-io"' "$T/rec.threads" &&
    grep -q 'comm="rd-worker"' "$T/rec.threads" || names=0
[ $names = 1 ] && ok "the recording names its threads (chromium)" ||
	nok "the recording names its threads (chromium)" "$(head -n 5 "$T/rec.diag")"
start 120 40 "$T/rec"
if wait_for 'Spinning node' 15 && screen | grep -q 'HANG blocked' &&
    { [ $names = 0 ] || screen | grep -q 'vertex of browser:'; }; then
	ok "opens a recorded hang on the spinning node (chromium)"
else
	nok "opens a recorded hang on the spinning node (chromium)" "$(screen)" \
	    "$("$ARGUS" diagnose "$T/rec" 2>&1 | head -n 3)"
	exit 0
fi
# the culprit chain of the paper's case: the renderer on its semaphore,
# then the browser again, a cycle broken by the 1.5 s timeout
if screen | grep -q 'C1 renderer:[0-9]* blocked semaphore' &&
    screen | grep -q 'C2 browser:[0-9]* blocked condvar' &&
    screen | grep -q 'cycle: browser:[0-9]* -> renderer:[0-9]*'; then
	ok "the culprit chain and the cycle are on screen (chromium)"
else
	nok "the culprit chain and the cycle are on screen (chromium)" "$(screen)"
fi
# the second candidate, confirmed, changes the slice
slice() { keys s; sleep 0.3; screen | cut -c61- | grep -E '^ *[0-9]+ [a-z-]+:[0-9]+ +#' ; keys s; sleep 0.3; }
before=$(slice)
keys Tab Tab j Enter
if wait_for 'picked candidate 2' 5; then
	after=$(slice)
	if [ -n "$after" ] && [ "$before" != "$after" ] &&
	    screen | grep -q 'normal: candidate 2'; then
		ok "confirming the second candidate changes the slice (chromium)"
	else
		nok "confirming the second candidate changes the slice (chromium)" \
		    "before: $before" "after: $after"
	fi
else
	nok "confirming the second candidate changes the slice (chromium)" \
	    "$(status_line)"
fi
# from the confirmed normal node, w three times follows its wake-up path
# (chromium.expect: browser, br-io, rd-worker, renderer, fontd; other
# threads may come between)
walk=""
for i in 1 2 3; do
	keys w
	sleep 0.3
	walk="$walk $(thread_now)"
done
# each expected thread seen comes no earlier in the path than the one
# before (a thread may repeat: two vertices of it, or a thread the
# recording misnamed after its process)
good=1 last=0 distinct=""
for th in $walk; do
	i=0
	for e in br-io rd-worker renderer fontd; do
		i=$((i + 1))
		[ "$th" = "$e" ] || continue
		[ $i -lt $last ] && good=0
		last=$i
		case " $distinct " in *" $th "*) ;; *) distinct="$distinct $th" ;; esac
	done
done
if [ $names = 0 ]; then
	skip "w three times walks browser's wake-up chain (chromium)" \
	    "the recording misnamed the scenario's threads:$walk"
elif [ $good = 1 ] && [ "$(echo "$distinct" | wc -w)" -ge 2 ]; then
	ok "w three times walks browser's wake-up chain:$walk (chromium)"
else
	nok "w three times walks browser's wake-up chain (chromium)" "walk:$walk"
fi
keys q
wait_for '^EXIT=0' 5 || nok "quit (chromium)" "$(screen | tail -n 3)"
exit 0
