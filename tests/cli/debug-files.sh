#!/bin/sh
# debug-files.sh: the files argus debug writes are never reached through a
# link, in a detached tmux on the deterministic mkhang trace. The command
# history ($XDG_STATE_HOME/argus/history, else ~/.argus_history) is kept
# and read back when it is the user's own file; when it is a symbolic
# link, a file with another hard link, or in a directory of another user,
# the link's target is left alone and one warning after the screen closes
# says the history was not kept. `:write FILE` and `:write FILE.json`
# refuse a symbolic link with a message on the status line. T is not a
# sticky directory: the kernel's fs.protected_symlinks would not stop a
# link there. About 10 s.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
case $ARGUS in /*) ;; *) ARGUS=$(pwd)/$ARGUS ;; esac
T=$(mktemp -d /tmp/argus-files-XXXXXX)

SUITE=debug-files
. tests/lib.sh
tmux_sandbox
need_tmux || exit 0
mkhang_trace "$T/mk" || exit 0

# start "VAR=VALUE..." TRACE: a new session running argus debug TRACE with
# the variables set (the previous one is closed); when argus ends, the
# pane prints its exit status.
start() { debug_start 140 30 "env $1" "" "$2"; }
# session VARS: open the debugger, run one command line, quit; the
# screen after the exit is in $T/after.
session() {
	start "$1" "$T/mk"
	wait_for 'Spinning node' 10
	keys ':goto 1.5' Enter
	sleep 0.3
	keys q
	wait_for '^EXIT=' 5
	screen > "$T/after"
}
state="XDG_STATE_HOME=$T/state"
nostate="-u XDG_STATE_HOME HOME=$T/home"
mkdir -p "$T/state/argus" "$T/home"

# --- the user's own history file: kept and read back -----------------------
session "$state"
start "$state" "$T/mk"
wait_for 'Spinning node' 10
keys ':' Up
if wait_for '^:goto 1.5' 3 && ! grep -q warning "$T/after"; then
	ok "the history is kept and read back"
else
	nok "the history is kept and read back" "$(status_line)" "$(grep warning "$T/after")"
fi
keys Escape q
wait_for '^EXIT=' 5

# --- links the history must not follow ---------------------------------------
# refused VARS FILE NAME: a session with history file FILE (a link to
# $T/victim) leaves the victim alone and warns once after the exit
refused() {
	echo precious > "$T/victim"
	chmod 644 "$T/victim"
	session "$1"
	nw=$(grep -c '^argus debug: warning: no command history kept in .*: ' "$T/after")
	if [ "$(cat "$T/victim")" = precious ] &&
	    [ "$(stat -c %a "$T/victim")" = 644 ] && [ "$nw" = 1 ]; then
		ok "$3"
	else
		nok "$3" "victim: $(head -c 60 "$T/victim") mode $(stat -c %a "$T/victim")" \
		    "$(grep -v '^$' "$T/after" | tail -n 3)"
	fi
	rm -f "$2"
}
rm -f "$T/state/argus/history"
ln -s "$T/victim" "$T/state/argus/history"
refused "$state" "$T/state/argus/history" \
    "a symbolic link as \$XDG_STATE_HOME/argus/history is not followed"
ln -s "$T/victim" "$T/home/.argus_history"
refused "$nostate" "$T/home/.argus_history" \
    "a symbolic link as ~/.argus_history is not followed"
echo precious > "$T/victim"
ln "$T/victim" "$T/state/argus/history"
refused "$state" "$T/state/argus/history" \
    "a history file with another hard link is not written"
if chown nobody "$T/home" 2>/dev/null; then
	echo precious > "$T/victim"
	ln "$T/victim" "$T/home/.argus_history"
	refused "$nostate" "$T/home/.argus_history" \
	    "no history in a home of another user"
	chown "$(id -u)" "$T/home"
fi

# --- :write through a link ----------------------------------------------------
echo precious > "$T/victim"
ln -s "$T/victim" "$T/link.txt"
ln -s "$T/victim" "$T/link.json"
start "$state" "$T/mk"
wait_for 'Spinning node' 10
for f in link.txt link.json; do
	keys ":write $T/$f" Enter
	if wait_for "$f: a symbolic link" 5 &&
	    [ "$(cat "$T/victim")" = precious ]; then
		ok ":write $f refuses a symbolic link"
	else
		nok ":write $f refuses a symbolic link" "$(status_line)" \
		    "victim: $(head -c 60 "$T/victim")"
	fi
done
keys ":write $T/report.txt" Enter
if wait_for 'report written' 5 && grep -q '^hang 1: app' "$T/report.txt"; then
	ok ":write still writes a new file"
else
	nok ":write still writes a new file" "$(status_line)"
fi
keys q
exit 0
