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
