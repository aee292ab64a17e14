#!/bin/sh
# Tests of argus export (Trace Event Format JSON for Perfetto UI and
# chrome://tracing): usage errors; the JSON of a deterministic trace
# (tests/tools/mkhang) and of a real recording of the lockio scenario
# checked by tests/cli/export-check.py against the format's fields (ph,
# ts in us, pid, tid, slices, flows whose ends all have starts) and
# against the diagnosis (hangs and culprits marked, the culprit chain and
# the hang's wake-up chain as flows); --pid, --from/--to, --diagnose,
# --no-diagnosis and its bounded memory; -o refuses a symbolic link, a
# file with other links or of another user; and `:write FILE.json` in the
# debugger for the visible window.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
case $ARGUS in /*) ;; *) ARGUS=$(pwd)/$ARGUS ;; esac
T=$(mktemp -d /tmp/argus-export-XXXXXX)

SUITE=export
. tests/lib.sh
tmux_sandbox
CHECK=tests/cli/export-check.py


$ARGUS export --help | grep -q '^usage: argus export' && ok "help" || nok "help"
$ARGUS --help | grep -q '^   export ' && ok "argus --help lists export" ||
	nok "argus --help lists export"
"$B/tests/tools/mkhang" "$T/mk" > /dev/null
check_err "unknown format" 2 $ARGUS export "$T/mk" --format svg
check_err "bad pid" 2 $ARGUS export "$T/mk" --pid x
check_err "bad time" 2 $ARGUS export "$T/mk" --from soon
check_err "--to before --from" 2 $ARGUS export "$T/mk" --from 2 --to 1
check_err "no trace" 1 $ARGUS export "$T/none"
check_err "unwritable output" 1 $ARGUS export "$T/mk" -o "$T/no/such/file.json"

# -o never writes through a symbolic link (T is not a sticky directory:
# the kernel's fs.protected_symlinks would not stop it), nor into a file
# with other links or of another user; it replaces a file of the caller
echo precious > "$T/victim"
ln -s "$T/victim" "$T/link.json"
ln -s "$T/absent" "$T/dangling.json"
ln "$T/victim" "$T/hard.json"
echo other > "$T/other.json"
chown nobody "$T/other.json" 2>/dev/null
check_err "-o through a symbolic link" 1 $ARGUS export "$T/mk" -o "$T/link.json"
check_err "-o through a dangling symbolic link" 1 $ARGUS export "$T/mk" -o "$T/dangling.json"
check_err "-o on a file with two links" 1 $ARGUS export "$T/mk" -o "$T/hard.json"
if [ "$(cat "$T/victim")" = precious ] && ! [ -e "$T/absent" ]; then
	ok "-o left the link targets alone"
else
	nok "-o left the link targets alone" "$(head -c 80 "$T/victim")" "$(ls "$T")"
fi
if [ "$(stat -c %U "$T/other.json")" = nobody ]; then
	check_err "-o on a file of another user" 1 $ARGUS export "$T/mk" -o "$T/other.json"
fi
echo old > "$T/mine.json"
if $ARGUS export "$T/mk" -o "$T/mine.json" 2>/dev/null &&
    head -c 1 "$T/mine.json" | grep -q '[[{]'; then
	ok "-o replaces a file of the caller"
else
	nok "-o replaces a file of the caller" "$(head -c 80 "$T/mine.json")"
fi

# --- a deterministic trace ---------------------------------------------------
if $ARGUS export "$T/mk" > "$T/mk.json" 2> "$T/err"; then
	$ARGUS diagnose --json "$T/mk" > "$T/mk.diag" 2>/dev/null
	python3 "$CHECK" "$T/mk.json" "$T/mk.diag" | sed 's/^\(n*o*t* *ok export:\)/\1 mkhang:/'
else
	nok "export of mkhang" "$(cat "$T/err")"
fi

# --- bounded memory: 4 times the events, about the same peak without the
# diagnosis (the graph of the diagnosis grows with the trace) ------------
if [ -x /usr/bin/time ]; then
	"$B/tests/tools/mktrace" "$T/m1" 200000 > /dev/null
	"$B/tests/tools/mktrace" "$T/m4" 800000 > /dev/null
	rss() { /usr/bin/time -f %M $ARGUS export "$@" -o /dev/null 2>&1 | tail -n 1; }
	a=$(rss "$T/m1" --no-diagnosis) b=$(rss "$T/m4" --no-diagnosis)
	c=$(rss "$T/m1") d=$(rss "$T/m4")
	if [ "$b" -lt $((a * 3 / 2)) ] && [ "$d" -gt $((c * 2)) ]; then
		ok "--no-diagnosis streams in bounded memory ($a -> $b KB; with the graph $c -> $d KB)"
	else
		nok "--no-diagnosis streams in bounded memory" "$a -> $b KB; with the graph $c -> $d KB"
	fi
	$ARGUS export "$T/m4" --no-diagnosis -o "$T/m4.json"
	python3 "$CHECK" "$T/m4.json" | grep -q '^not ok' &&
		nok "a large export is well formed" || ok "a large export is well formed"
	rm -f "$T/m4.json"
fi

# --- a real recording ------------------------------------------------------------
if [ "$(id -u)" != 0 ]; then
	echo "ok export: recorded scenario skipped (not root)"
	exit 0
fi
skip_if_wedged "recorded scenario" && exit 0
if ! ARGUS_HANG_MS=2000 timeout 60 $ARGUS record -q -o "$T/lockio" -- \
    "$B/tests/scenarios/lockio" -q > "$T/rec.out" 2>&1; then
	nok "record lockio" "$(tail -n 3 "$T/rec.out")"
	exit 0
fi
$ARGUS diagnose --json "$T/lockio" > "$T/l.diag" 2> /dev/null
if $ARGUS export "$T/lockio" --format chrome --diagnose -o "$T/l.json" \
    2> "$T/err" && [ ! -s "$T/err" ]; then
	ok "export of a recording"
	python3 "$CHECK" "$T/l.json" "$T/l.diag" | sed 's/^\(n*o*t* *ok export:\)/\1 lockio:/'
else
	nok "export of a recording" "$(cat "$T/err")"
fi
python3 - "$T/l.json" <<'PY' && ok "--diagnose adds the report" || nok "--diagnose adds the report"
import json, sys
d = json.load(open(sys.argv[1]))
r = [e for e in d["traceEvents"] if e["ph"] == "i" and e["cat"] == "diagnosis"]
sys.exit(0 if r and r[0]["args"]["report"].startswith("hang 1: lockio")
         and d["otherData"]["report"] == r[0]["args"]["report"] else 1)
PY
# --pid: only the process's tracks; its wake-ups from outside go too
pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hangs"][0]["thread"]["pid"])' "$T/l.diag")
$ARGUS export "$T/lockio" --pid "$pid" -o "$T/p.json" 2> "$T/err"
python3 - "$T/p.json" "$pid" <<'PY' && ok "--pid keeps one process" || nok "--pid keeps one process" "$(cat "$T/err")"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
pids = {e["pid"] for e in ev if e["ph"] != "i"}
sys.exit(0 if pids == {int(sys.argv[2])} and any(e["ph"] == "X" for e in ev) else 1)
PY
python3 "$CHECK" "$T/p.json" | grep -q '^not ok' && nok "--pid output well formed" ||
	ok "--pid output well formed"
# --from/--to: times inside the window (us after the trace start)
$ARGUS export "$T/lockio" --from 1 --to 1.5 -o "$T/w.json" 2> "$T/err"
python3 - "$T/w.json" <<'PY' && ok "--from 1 --to 1.5" || nok "--from 1 --to 1.5" "$(cat "$T/err")"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
ts = [e["ts"] for e in ev if "ts" in e]
ends = [e["ts"] + e["dur"] for e in ev if e["ph"] == "X"]
sys.exit(0 if ts and min(ts) >= 999999.9 and max(ts + ends) <= 1500000.1 else 1)
PY
# --no-diagnosis: no graph; memory stays bounded (compare a 4x longer trace)
$ARGUS export "$T/lockio" --no-diagnosis -o "$T/n.json" 2> "$T/err"
python3 - "$T/n.json" <<'PY' && ok "--no-diagnosis: slices and wake-ups only" || nok "--no-diagnosis: slices and wake-ups only"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
cats = {e.get("cat") for e in ev if e["ph"] in "sfbe"}
sys.exit(0 if cats == {"wakeup"} else 1)
PY
python3 "$CHECK" "$T/n.json" | grep -q '^not ok' && nok "--no-diagnosis output well formed" ||
	ok "--no-diagnosis output well formed"

# --- :write FILE.json in the debugger --------------------------------------
if command -v tmux > /dev/null; then
	tm new-session -d -s x -x 160 -y 48 "$ARGUS debug $T/lockio; sleep 30"
	i=0
	while [ $i -lt 100 ] && ! tm capture-pane -p -t x | grep -q 'hang 1'; do
		sleep 0.1; i=$((i + 1))
	done
	tm send-keys -t x ":write $T/win.json" Enter
	i=0
	while [ $i -lt 50 ] && ! tm capture-pane -p -t x | grep -q 'window written'; do
		sleep 0.1; i=$((i + 1))
	done
	tm send-keys -t x q
	if [ -s "$T/win.json" ] && python3 "$CHECK" "$T/win.json" > "$T/wchk" &&
	    python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["traceEvents"]; sys.exit(0 if any(x["ph"]=="b" and x["cat"]=="hang" for x in e) else 1)' "$T/win.json"; then
		ok ":write FILE.json writes the window with its hang"
	else
		nok ":write FILE.json writes the window with its hang" \
		    "$(tm capture-pane -p -t x | tail -n 2)" "$(grep '^not' "$T/wchk" 2>/dev/null)"
	fi
fi
