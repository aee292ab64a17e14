#!/bin/sh
# debug-exit.sh: however argus debug ends, the terminal and what was
# written to stderr while the screen was up come back. In a detached tmux
# on the deterministic mkhang trace: each signal whose default action
# ends a program, sent from outside, ends argus by that signal (status
# 128 + N) with the terminal restored (icanon and echo, the alternate
# screen left); a signal the caller ignores stays ignored. Run out of
# memory (ulimit -v) while it loads a trace, argus aborts and its message,
# written to stderr while the screen was up, is printed after the screen
# closes. About 10 s.
set -u
B=${B:-build}
ARGUS=${ARGUS:-./argus}
case $ARGUS in /*) ;; *) ARGUS=$(pwd)/$ARGUS ;; esac
T=$(mktemp -d /tmp/argus-exit-XXXXXX)

SUITE=debug-exit
. tests/lib.sh
tmux_sandbox
need_tmux || exit 0
mkhang_trace "$T/mk" || exit 0

# start [SHELL-PREFIX] TRACE: a new session running argus debug TRACE
# (the previous one is closed) without core files; when argus ends, the
# pane prints its exit status and the terminal modes.
start() {
	pre=""
	[ $# -gt 1 ] && { pre=$1; shift; }
	debug_start 130 30 "ulimit -c 0; $pre" "$TTY_MODES" "$1"
}

# --- every signal that ends a program -----------------------------------------
# (numbers: dash's kill knows neither STKFLT nor PWR by name)
for s in QUIT:3 ILL:4 TRAP:5 ABRT:6 BUS:7 FPE:8 USR1:10 SEGV:11 USR2:12 \
    PIPE:13 ALRM:14 STKFLT:16 XCPU:24 XFSZ:25 VTALRM:26 PROF:27 IO:29 \
    PWR:30 SYS:31 RTMIN:34 RTMAX:64; do
	name=${s%:*} num=${s#*:}
	start "$T/mk"
	wait_for 'Spinning node' 10
	kill -"$num" "$(argus_pid)" 2>/dev/null
	if wait_for "^EXIT=$((128 + num))\$" 5 && restored; then
		ok "SIG$name ends argus and restores the terminal"
	else
		nok "SIG$name ends argus and restores the terminal" "$(screen | grep -v '^$' | tail -n 3)"
	fi
done

# --- an ignored signal stays ignored ----------------------------------------
start "trap '' USR1;" "$T/mk"
wait_for 'Spinning node' 10
kill -USR1 "$(argus_pid)" 2>/dev/null
keys '?'		# read after the signal, which is pending already
if wait_for 'argus debug: keys' 3; then
	ok "SIGUSR1 ignored by the caller stays ignored"
else
	nok "SIGUSR1 ignored by the caller stays ignored" "$(screen | grep -v '^$' | tail -n 3)"
fi
keys Escape q
wait_for '^EXIT=' 5

# --- stderr written while the screen is up ------------------------------------
# out of memory while loading a trace, argus says so on stderr (kept while
# the screen is up) and aborts: the message comes after the screen closes.
# The limit lets the debugger open the small trace (else the check is
# skipped) and not load the large one (about 90 MB)
lim=60000
start "ulimit -v $lim;" "$T/mk"
if ! wait_for 'Spinning node' 10; then
	echo "skip debug-exit: out of memory (argus debug does not start within ulimit -v $lim here)"
	exit 0
fi
keys q
wait_for '^EXIT=' 5
"$B/tests/tools/mktrace" "$T/big" 800000 > /dev/null
start "ulimit -v $lim;" "$T/big"
if wait_for '^EXIT=134$' 30 && restored &&
    [ "$(screen | grep -c '^argus: out of memory')" = 1 ]; then
	ok "out of memory under the screen: the message follows the abort"
else
	nok "out of memory under the screen: the message follows the abort" "$(screen | grep -v '^$' | tail -n 4)"
fi
exit 0
