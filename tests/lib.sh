# tests/lib.sh: helpers shared by the command-line tests (sourced, not run).
# Each test prints "ok SUITE: NAME" or "not ok SUITE: NAME" with the
# reasons indented below; tests/run-checks counts those lines.
# Set SUITE (may be empty) before sourcing; golden() needs T (a scratch
# directory) and G (the golden directory, default tests/golden).

ok() { echo "ok ${SUITE:+$SUITE: }$1"; }
nok() {
	echo "not ok ${SUITE:+$SUITE: }$1"
	shift
	[ $# -gt 0 ] && printf '  %s\n' "$@"
	return 0
}

# golden NAME: compare stdin with the golden file NAME (with
# UPDATE_GOLDEN=1, rewrite it instead).
golden() {
	_name=$1
	_g=${G:-tests/golden}
	cat > "$T/$_name.out"
	if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
		cp "$T/$_name.out" "$_g/$_name"
		ok "golden $_name (updated)"
	elif diff -u "$_g/$_name" "$T/$_name.out" > "$T/$_name.diff"; then
		ok "golden $_name"
	else
		nok "golden $_name" "$(head -n 20 "$T/$_name.diff")"
	fi
}

# needs WHAT...: end the script with an "ok SUITE: skipped" line unless
# each WHAT is there: root (the effective user), bpf (ARGUS_BACKEND is
# not tracefs), or a command on PATH.
needs() {
	for _w in "$@"; do
		case $_w in
		root) [ "$(id -u)" = 0 ] || _why="not root" ;;
		bpf) [ "${ARGUS_BACKEND:-}" != tracefs ] ||
			_why="ARGUS_BACKEND=tracefs" ;;
		*) command -v "$_w" > /dev/null || _why="no $_w" ;;
		esac
		if [ -n "${_why:-}" ]; then
			echo "ok ${SUITE:+$SUITE: }skipped ($_why)"
			exit 0
		fi
	done
}

# gone PID: the process has ended: no such process, or a zombie that its
# new parent (init, which may reap late) has not collected yet.
gone() {
	kill -0 "$1" 2>/dev/null || return 0
	grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# skip_if_wedged WHAT: true (after printing a "skip" line, which
# tests/run-checks counts) when tests/run-checks found the kernel's
# tracing wedged, so a script that also checks other things can leave
# out the part that records the kernel.
skip_if_wedged() {
	[ -n "${ARGUS_TRACING_WEDGED:-}" ] || return 1
	echo "skip ${SUITE:+$SUITE: }$1 (the kernel's tracing is wedged)"
	return 0
}

# check_err NAME WANT_STATUS CMD...: CMD exits with WANT_STATUS and says
# why in exactly one line "argus COMMAND: ..." on stderr. Needs T.
check_err() {
	_name=$1 _want=$2
	shift 2
	"$@" > "$T/out" 2> "$T/err"
	_rc=$?
	_n=$(wc -l < "$T/err")
	if [ "$_rc" -eq "$_want" ] && [ "$_n" -eq 1 ] &&
	    grep -q '^argus [a-z]*: ' "$T/err"; then
		ok "$_name"
	else
		nok "$_name" "status $_rc (want $_want), $_n lines: $(cat "$T/err")"
	fi
}

# tmux_sandbox: a private tmux server for driving the debugger, under the
# scratch directory T: tm runs tmux on it (no status line, no user
# configuration, HOME inside T), and the server and T go at exit.
tmux_sandbox() {
	export HOME="$T" XDG_STATE_HOME="$T/state"
	unset TMUX
	echo 'set -g status off' > "$T/tmux.conf"
	trap 'tm kill-server > /dev/null 2>&1; rm -rf "$T"' EXIT
	trap 'exit 1' INT TERM HUP
}
tm() { tmux -S "$T/tmux.sock" -f "$T/tmux.conf" "$@"; }

# --- argus debug in a detached tmux (after tmux_sandbox) --------------------
# SESS names the current session; screen, keys and the rest act on it.

# TTY_MODES: a shell command that prints the terminal's modes among
# icanon, -icanon, echo and -echo on one line ("icanon echo" once the
# terminal is restored), for debug_start's AFTER.
TTY_MODES="stty -a | tr ' ' '\\n' | grep -x -e -icanon -e icanon -e echo -e -echo | tr '\\n' ' '; echo"

# need_tmux: true when tmux is installed; otherwise prints a "skip"
# line for the whole script and is false.
need_tmux() {
	command -v tmux >/dev/null 2>&1 && return 0
	echo "skip ${SUITE:+$SUITE: }all (tmux is not installed)"
	return 1
}

# mkhang_trace DIR: writes the deterministic hang trace of
# tests/tools/mkhang into DIR; when that fails, says so in a "not ok"
# line and is false. Needs B and T.
mkhang_trace() {
	if ! "$B/tests/tools/mkhang" "$1" >"$T/mk.log" 2>&1; then
		nok "mkhang" "$(cat "$T/mk.log")"
		return 1
	fi
}

# debug_start W H PREFIX AFTER ARGS...: a new session of W columns and H
# lines, its name in SESS, whose pane runs "PREFIX $ARGUS debug ARGS",
# then prints EXIT=STATUS, runs the shell command AFTER (may be empty)
# and stays for 120 s. Then the previous session, if any, is closed: in
# that order, since a server left with no session exits, and a
# new-session racing with that exit finds no server.
debug_start() {
	_w=$1 _h=$2 _pre=$3 _after=$4
	shift 4
	_old=${SESS:-}
	_nsess=$((${_nsess:-0} + 1))
	SESS=s$_nsess
	tm new-session -d -s "$SESS" -x "$_w" -y "$_h" \
	    "$_pre $ARGUS debug $*; echo EXIT=\$?; ${_after:+$_after; }sleep 120"
	[ -n "$_old" ] && tm kill-session -t "$_old" >/dev/null 2>&1
	return 0
}

# screen: the text of the session's pane.
screen() { tm capture-pane -p -t "$SESS"; }
# keys KEY...: types the keys (tmux send-keys names) into the pane.
keys() { tm send-keys -t "$SESS" "$@"; }
# status_line: the last line of the pane that is not empty.
status_line() { screen | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' | tail -n 1; }

# wait_for PATTERN [SECONDS]: true as soon as a line of the screen
# matches PATTERN (grep -E), polled every 0.1 s; false after SECONDS
# (default 10) without a match.
wait_for() {
	_wn=$(( ${2:-10} * 10 ))
	while [ $_wn -gt 0 ]; do
		screen | grep -Eq -- "$1" && return 0
		sleep 0.1
		_wn=$((_wn - 1))
	done
	return 1
}

# until_changed OLD CMD...: the output of CMD (a probe of the screen)
# as soon as it is not empty and differs from OLD, polled every 0.1 s;
# after 3 s without that, its last output.
until_changed() {
	_was=$1
	shift
	_cn=30
	while [ $_cn -gt 0 ]; do
		_cv=$("$@")
		[ -n "$_cv" ] && [ "$_cv" != "$_was" ] && break
		sleep 0.1
		_cn=$((_cn - 1))
	done
	echo "$_cv"
}

# argus_pid: the process id of the program the pane's shell runs (argus).
argus_pid() { pgrep -P "$(tm display -p -t "$SESS" '#{pane_pid}')" | head -n 1; }

# restored: after argus ended, the pane printed the modes of a restored
# terminal (AFTER was TTY_MODES) within 2 s, and the alternate screen
# is off.
restored() {
	wait_for '^icanon echo' 2 &&
	    ! tm display -p -t "$SESS" '#{alternate_on}' | grep -q 1
}

# check NAME STATUS [DETAIL]: ok NAME when STATUS is 0, else not ok.
check() { if [ "$2" = 0 ]; then ok "$1"; else nok "$1" "${3:-}"; fi; }

# ins_instance TAG NAME: a tracefs instance of our own (argus-TAG-PID)
# for the records of libargus (tests/cli/instrument*.sh): sets LIB (the
# library), P (the test programs), INST, MK (its raw marker) and TMP,
# all removed at exit; says "not ok NAME-setup" and exits 1 when the
# instance cannot be made. Then run CMD... runs CMD with libargus
# recording into it (a fresh buffer): the decoded records in $TMP/rec,
# its stdout and stderr in $TMP/out and $TMP/err; its status is CMD's.
ins_instance() {
	LIB=$(cd "$B" && pwd)/libargus.so
	P=$B/tests/progs
	_tr=/sys/kernel/tracing
	[ -d $_tr/instances ] || mount -t tracefs nodev $_tr 2>/dev/null
	INST=$_tr/instances/argus-$1-$$
	TMP=$(mktemp -d)
	trap 'rmdir "$INST" 2>/dev/null; rm -rf "$TMP"' EXIT
	trap 'exit 1' INT TERM
	if ! mkdir "$INST" 2>/dev/null; then
		echo "not ok $2-setup (cannot create a tracefs instance)"
		exit 1
	fi
	echo 1 >"$INST/tracing_on"
	MK=$INST/trace_marker_raw
	run() {
		echo >"$INST/trace"
		ARGUS_MARKER=$MK LD_PRELOAD=$LIB "$@" >"$TMP/out" \
		    2>"$TMP/err"
		rc=$?
		"$P/ins-decode" <"$INST/trace" >"$TMP/rec"
		return $rc
	}
}

# veth_netns NS VH A Z: a network namespace NS joined to this one by the
# veth pair VH (here, address A/30) and VHn (in NS, Z/30), both up, and
# NS's loopback; false (ip's complaint on stderr) when that fails.
veth_netns() {
	ip netns add "$1" && ip link add "$2" type veth peer name "${2}n" \
	    netns "$1" && ip addr add "$3/30" dev "$2" &&
	    ip link set "$2" up && ip -n "$1" addr add "$4/30" dev "${2}n" &&
	    ip -n "$1" link set "${2}n" up && ip -n "$1" link set lo up
}
